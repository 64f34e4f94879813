"""Broken variants of structured answers shared by several families: JSON, CSV and Markdown
tables (a bracket dropped, a trailing comma, text around it, a row or a column lost, ...)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ifpo.data_builders.corruptors.edits import fence_body, flip_first, letter_style, synonym, with_body
from ifpo.data_builders.corruptors.oracle import Family


def json_style(body: str) -> dict[str, Any]:
    """json.dumps options that reproduce ``body``'s layout as closely as possible."""
    if "\n" in body.strip():
        m = re.search(r"\n( +)\S", body)
        return {"indent": len(m.group(1)) if m else 2, "ensure_ascii": False}
    compact = not re.search(r"[,:] ", body)
    return {"separators": (",", ":") if compact else (", ", ": "), "ensure_ascii": False}


def _first_scalar(value: Any) -> Any:
    if isinstance(value, dict):
        for v in value.values():
            found = _first_scalar(v)
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        return next((s for v in value if (s := _first_scalar(v)) is not None), None)
    return value


def lead_line(style: str) -> tuple[str, str]:
    lead = "Result:" if style == "mixed" else ("RESULT:" if style == "upper" else "result:")
    tail = "That is all." if style == "mixed" else ("THAT IS ALL." if style == "upper" else "that is all.")
    return lead, tail


def json_variants(response: str, extra_keys: Sequence[str] = ()) -> list[str]:
    """Broken JSON: a closing bracket dropped, a trailing comma, text before/after it, the other
    top-level type, a key renamed, or an extra (e.g. forbidden) key with a copied value."""
    body, offset = fence_body(response)
    stripped = body.rstrip()
    out: list[str] = []

    def put(new_body: str) -> None:
        out.append(with_body(response, body, offset, new_body))

    if stripped.endswith(("}", "]")):
        put(stripped[:-1])
        put(stripped[:-1].rstrip() + "," + stripped[-1])
    lead, tail = lead_line(letter_style(body))
    put(f"{lead} {body}")
    put(f"{body}\n{tail}")
    try:
        value = json.loads(body)
    except ValueError:
        return out
    style = json_style(body)
    if isinstance(value, dict):
        put(json.dumps([value], **style))
    elif isinstance(value, list):
        put(json.dumps({"items": value}, **style))
    obj = value if isinstance(value, dict) else next((v for v in value if isinstance(v, dict)), None) \
        if isinstance(value, list) else None
    if obj:
        for key in list(obj)[:4]:
            pattern = re.compile(r'"' + re.escape(key) + r'"(?=\s*:)')
            put(pattern.sub(f'"{key}_info"', body, count=1))
        copied = json.dumps(_first_scalar(obj), ensure_ascii=False)
        sep = ", " if style.get("separators", (", ",))[0] == ", " else ","
        colon = ": " if sep == ", " else ":"
        close = body.find("}") if isinstance(value, list) else body.rfind("}")
        for key in [*extra_keys, "note"]:
            if key in obj:
                continue
            inner = body[:close].rstrip()
            joiner = "" if inner.endswith("{") else sep
            put(inner + f'{joiner}"{key}"{colon}{copied}' + body[close:])
    return out


def csv_variants(response: str, delimiter: str = ",") -> list[str]:
    """Broken CSV: a quoted cell followed by a space (invalid quoting), an extra or a missing
    field in the last row, a header cell renamed, recased or repeated, a text line on top."""
    body, offset = fence_body(response)
    lines = body.split("\n")
    rows = [i for i, ln in enumerate(lines) if ln.strip()]
    if len(rows) < 2:
        return []
    out: list[str] = []

    def put(new_lines: list[str]) -> None:
        out.append(with_body(response, body, offset, "\n".join(new_lines)))

    last = rows[-1]
    cells = lines[last].split(delimiter)
    new = list(lines)
    new[last] = f'"{cells[0].strip()}" ' + delimiter + delimiter.join(cells[1:])
    put(new)
    new = list(lines)
    new[last] = lines[last] + delimiter + cells[-1].strip()
    put(new)
    if len(cells) > 1:
        new = list(lines)
        new[last] = delimiter.join(cells[:-2] + [cells[-2].rstrip() + " " + cells[-1].lstrip()])
        put(new)
    header = lines[rows[0]].split(delimiter)
    for j, cell in enumerate(header[:4]):
        for replacement in (flip_first(cell), synonym(cell.strip()), cell.strip() + "s"):
            if replacement and replacement != cell:
                new = list(lines)
                new[rows[0]] = delimiter.join(header[:j] + [replacement] + header[j + 1 :])
                put(new)
    if len(header) > 1:
        new = list(lines)
        new[rows[0]] = delimiter.join([header[0], header[0]] + header[2:])
        put(new)
        swapped = []
        for i, ln in enumerate(lines):
            cells = ln.split(delimiter)
            swapped.append(delimiter.join([cells[1], cells[0]] + cells[2:]) if i in rows and len(cells) > 1 else ln)
        put(swapped)
    lead, _ = lead_line(letter_style(body))
    put([lead.rstrip(":") + " the table:"] + lines)
    return out


def data_row_families(response: str, first_data: int) -> list[Family]:
    """Drop data rows from the end (a table with too few rows)."""
    lines = response.split("\n")
    data = [i for i, ln in enumerate(lines) if ln.strip() and i >= first_data]

    def drop(k: int) -> str | None:
        if k >= len(data) + 1 or k > len(data):
            return None
        gone = data[len(data) - k :]
        return "\n".join(ln for i, ln in enumerate(lines) if i not in gone)

    return [Family(drop, len(data))]


DELIM_LINE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")


def md_table_variants(response: str) -> list[str]:
    """Broken Markdown table: a cell dropped from the last row, the delimiter row removed, a
    header cell renamed or recased, a text line after the table."""
    lines = response.split("\n")
    delim = next((i for i, ln in enumerate(lines) if DELIM_LINE.match(ln)), None)
    if delim is None or delim == 0:
        return []
    rows = [i for i in range(delim + 1, len(lines)) if "|" in lines[i]]
    out: list[str] = []

    def put(new: list[str]) -> None:
        out.append("\n".join(new))

    if rows:
        last = rows[-1]
        line = lines[last].rstrip()
        cut = line[:-1].rstrip().rfind("|") if line.endswith("|") else line.rfind("|")
        if cut > 0:
            new = list(lines)
            new[last] = line[:cut] + ("|" if line.endswith("|") else "")
            put(new)
    put(lines[:delim] + lines[delim + 1 :])
    swapped = list(lines)
    for i in [delim - 1, delim, *rows]:
        parts = lines[i].split("|")
        first = 1 if lines[i].lstrip().startswith("|") else 0
        if len(parts) > first + 2 or (len(parts) > first + 1 and not lines[i].rstrip().endswith("|")):
            parts[first], parts[first + 1] = parts[first + 1], parts[first]
            swapped[i] = "|".join(parts)
    put(swapped)
    header = lines[delim - 1]
    for m in list(re.finditer(r"[^|]+", header))[:4]:
        cell = m.group().strip()
        if not cell:
            continue
        for replacement in (synonym(cell), flip_first(cell), cell + "s"):
            if replacement and replacement != cell:
                new = list(lines)
                start = m.start() + m.group().find(cell)
                new[delim - 1] = header[:start] + replacement + header[start + len(cell) :]
                put(new)
    _, tail = lead_line(letter_style(response))
    end = (rows[-1] if rows else delim) + 1
    put(lines[:end] + [tail] + lines[end:])
    return out
