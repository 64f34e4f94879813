"""Atomic file writes shared by every writer of reports, caches and datasets.

A reader (or a crash) never sees a half-written file: the text goes to a temporary file in the
same folder, is flushed and fsynced, gets the mode a plain ``open`` would give it (``mkstemp``
makes 0600 files), and replaces the target in one ``os.replace``.
"""

from __future__ import annotations

import json
import math
import os
import re
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


class _NotJSON(ValueError):
    """A value Python's ``json`` module would take but JSON (RFC 8259) and every other reader do not."""


def _no_constant(name: str) -> Any:
    # `NaN`, `Infinity`, `-Infinity`: Python's json extension; a count of NaN would compare false everywhere.
    raise _NotJSON(f"{name} is not a JSON value (write null or a number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: valid JSON syntax, but no float holds it (Python makes it inf)
        raise _NotJSON(f"number {text[:40]} is out of range")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        # json keeps the last value, other readers the first: the record means two different things.
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _NotJSON(f"duplicate key {dup!r} in one object")
    return obj


# An escape that may decode to half of a UTF-16 pair (\ud800-\udfff); a lone one is no Unicode text and
# cannot be written back as UTF-8. Only lines holding one are searched for it after parsing.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Number text that may overflow a float: a 3-digit exponent or 309+ digits in a row.
_HUGE_NUMBER = re.compile(r"[eE][+-]?\d{3}|\d{309}")


def _lone_surrogate(value: Any) -> str | None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            found = _SURROGATE.search(v)
            if found:
                return f"\\u{ord(found.group()):04x}"
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def loads_strict(text: str, *, allow_nan: bool = False) -> Any:
    """``json.loads`` of untrusted text, refusing what JSON itself refuses or leaves ambiguous.

    Python's parser accepts ``NaN``/``Infinity``, turns ``1e400`` into ``inf``, keeps the last of
    duplicate keys and decodes a lone ``\\ud800`` into a string that no UTF-8 file can hold (a
    writer fails on it much later, losing the whole output). Each raises ``ValueError`` here with
    what is wrong; a number of more than 4300 digits does too (Python's own limit). ``allow_nan``
    keeps ``NaN``/``Infinity`` for ifpo's own reports of earlier versions, which wrote them.
    """
    kwargs: dict[str, Any] = {"object_pairs_hook": _unique_keys}
    if not allow_nan:
        kwargs["parse_constant"] = _no_constant
    if _HUGE_NUMBER.search(text) and not allow_nan:
        kwargs["parse_float"] = _finite_float
    value = json.loads(text, **kwargs)
    if _SURROGATE_ESCAPE.search(text):
        lone = _lone_surrogate(value)
        if lone:
            raise _NotJSON(f"lone surrogate escape {lone} (half of a UTF-16 pair is not Unicode text)")
    return value


def _json_problem(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        msg = exc.msg.removesuffix(" at")  # "Invalid control character at": a NUL or tab inside a string
        return f"{msg} at column {exc.colno}"
    if isinstance(exc, _NotJSON):
        return str(exc)
    # int() of a number with more digits than Python converts (sys.get_int_max_str_digits).
    return f"number too long to read ({str(exc).split(';')[0]})"


def parse_json_line(raw: bytes, *, allow_nan: bool = False) -> tuple[Any, str | None]:
    """``(value, None)`` for one JSONL line, or ``(None, what is wrong)``; never raises."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    try:
        return loads_strict(text, allow_nan=allow_nan), None
    except ValueError as exc:
        return None, f"invalid JSON: {_json_problem(exc)}"
    except RecursionError:
        return None, "invalid JSON: nested too deeply to parse"


def iter_jsonl(path: str | Path, *, allow_nan: bool = False) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(1-based line number, value or None, error or None)`` for each non-blank line.

    ``allow_nan`` reads ``NaN``/``Infinity`` (ifpo's own logs of earlier versions held them).
    """
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
            value, error = parse_json_line(raw, allow_nan=allow_nan)
            yield lineno, value, error


def require_input_file(path: str | Path, what: str = "input file") -> Path:
    """``path`` when it is a readable file; ``FileError`` naming it (missing, a folder, unreadable) otherwise."""
    path = Path(path)
    if path.is_dir():
        raise FileError(f"{path}: is a folder, expected the {what}")
    if not path.exists():
        raise FileError(f"{path}: {what} not found")
    if not os.access(path, os.R_OK):
        raise FileError(f"{path}: cannot read the {what} (permission denied)")
    return path


def refuse_overwriting_inputs(out: str | Path, inputs: Mapping[str, str | Path | None]) -> None:
    """``FileError`` when output ``out`` is one of ``inputs`` (name -> path), symlinks and ``..`` resolved.

    Outputs are written atomically over their target, so ``--out`` naming an input would replace
    the user's file with the result of reading it.
    """
    if not str(out):
        raise FileError("output path is empty")
    real_out = os.path.realpath(out)
    for name, path in inputs.items():
        if path is None or not str(path):
            continue
        if os.path.realpath(path) == real_out or (os.path.exists(out) and os.path.exists(path)
                                                   and os.path.samefile(out, path)):
            raise FileError(f"{out}: is also the {name} ({path}); writing it would replace that input, "
                            f"choose another output path")


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
        return loads_strict(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FileError(f"{path}: {what} is not UTF-8 text (byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise FileError(f"{path}:{exc.lineno}: {what} is not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:
        raise FileError(f"{path}: {what} is not valid JSON ({_json_problem(exc)})") from None
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
    for _, rec, error in iter_jsonl(path, allow_nan=True):
        if error is None and isinstance(rec, dict):
            records.append(rec)
        else:
            skipped += 1
    return records, skipped
