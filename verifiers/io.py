"""Atomic file writes shared by every writer of reports, caches and datasets.

A reader (or a crash) never sees a half-written file: the text goes to a temporary file in the
same folder, is flushed and fsynced, gets the mode a plain ``open`` would give it (``mkstemp``
makes 0600 files), and replaces the target in one ``os.replace``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def finite(data: Any) -> Any:
    """``data`` with every NaN/Infinity float replaced by ``None``.

    ``json.dumps`` writes them as the non-standard ``NaN``/``Infinity`` tokens, which browsers'
    ``JSON.parse`` (the dashboard) and most other readers refuse; ``null`` says "no value" to all.
    """
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, Mapping):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def dumps(data: Any, **kwargs: Any) -> str:
    """``json.dumps`` that never writes non-standard JSON (NaN/Infinity become null)."""
    kwargs.setdefault("ensure_ascii", False)
    if kwargs.get("default") is not None:
        convert = kwargs["default"]
        kwargs["default"] = lambda value: finite(convert(value))  # a tensor's NaN loss becomes null too
    return json.dumps(finite(data), allow_nan=False, **kwargs)


def write_json_atomic(path: str | Path, data: Any) -> None:
    write_text_atomic(path, dumps(data, indent=2) + "\n")


def write_jsonl_atomic(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    write_text_atomic(path, "".join(dumps(r) + "\n" for r in records))


# --- reading untrusted files ---------------------------------------------------------------------
#
# One policy for every JSONL reader of ifpo (items, benchmark files, responses, pairs, journals):
# a line is decoded and parsed on its own, so one bad line (invalid UTF-8, broken JSON, nesting
# deep enough to overflow the parser) is reported by line number and never costs the other lines.
# A UTF-8 byte-order mark and CRLF line ends (files saved on Windows) are accepted.

_BOM = b"\xef\xbb\xbf"


class FileError(ValueError):
    """A whole input file refused (missing, unreadable, empty); the message names the file."""


def parse_json_line(raw: bytes) -> tuple[Any, str | None]:
    """``(value, None)`` for one JSONL line, or ``(None, what is wrong)``; never raises."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at column {exc.colno}"
    except RecursionError:
        return None, "invalid JSON: nested too deeply to parse"


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(1-based line number, value or None, error or None)`` for each non-blank line."""
    path = Path(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise FileError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise FileError(f"{path}: is a folder, expected a JSONL file") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            if not raw.strip():
                continue
            value, error = parse_json_line(raw)
            yield lineno, value, error


def require_records(path: str | Path, records: int) -> None:
    """Refuse an input file that holds no record at all (an empty file is a mistake, not a dataset)."""
    if records == 0:
        raise FileError(f"{path}: no records (the file is empty or holds only blank lines)")


def read_json_file(path: str | Path, what: str = "JSON file") -> Any:
    """A whole JSON document (manifest, report), or ``FileError`` saying why it cannot be read."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise FileError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FileError(f"{path}: {what} is not UTF-8 text (byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise FileError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise FileError(f"{path}: {what} is nested too deeply to parse") from None


def read_jsonl_objects(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of an append-only JSONL file (journal, responses log), and how many lines were not.

    A crash mid-append leaves a torn last line; such lines (and non-object, non-UTF-8 or too
    deeply nested ones) are skipped and counted so the caller can rebuild what they held. A missing
    file reads as empty.
    """
    path = Path(path)
    if not path.is_file():
        return [], 0
    records: list[dict[str, Any]] = []
    skipped = 0
    for _, rec, error in iter_jsonl(path):
        if error is None and isinstance(rec, dict):
            records.append(rec)
        else:
            skipped += 1
    return records, skipped
