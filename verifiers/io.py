"""Atomic file writes shared by every writer of reports, caches and datasets.

A reader (or a crash) never sees a half-written file: the text goes to a temporary file in the
same folder, is flushed and fsynced, gets the mode a plain ``open`` would give it (``mkstemp``
makes 0600 files), and replaces the target in one ``os.replace``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
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


def write_json_atomic(path: str | Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_jsonl_atomic(path: str | Path, records: Iterable[Mapping[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_jsonl_objects(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of an append-only JSONL file (journal, responses log), and how many lines were not.

    A crash mid-append leaves a torn last line; such lines (and blank or non-object ones) are
    skipped and counted so the caller can rebuild what they held. A missing file reads as empty.
    """
    path = Path(path)
    if not path.is_file():
        return [], 0
    records: list[dict[str, Any]] = []
    skipped = 0
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if isinstance(rec, dict):
                records.append(rec)
            else:
                skipped += 1
    return records, skipped
