"""Recorded outputs ("golden files") for the checkers' seeded truth tables.

A test runs its checker on seeded inputs and compares every output with the one recorded in
``tests/data/golden/<name>.json.gz``. They replace reference copies of former code that called the
very helpers they were meant to check (a bug in a shared helper sat on both sides). The outputs were
recorded from those former references (equal to the checkers at the time, their tests passing).

``IFPO_RECORD_GOLDEN=1`` writes the files instead of comparing: only after a deliberate change of a
verdict or reason, and review the test's diff of outputs then. The inputs' digest is recorded too, so
a changed input generator is reported as such, not as a changed checker.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"


def canonical(value: Any) -> Any:
    """JSON-able form of an output: tuples (Check, NamedTuples) become lists, other objects their repr."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def _digest(inputs: Any) -> str:
    text = json.dumps(inputs, ensure_ascii=True, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def assert_golden(name: str, inputs: list[Any], outputs: list[Any]) -> None:
    """``outputs[i]`` (the checker's answer on ``inputs[i]``) equals the recorded one, for every i."""
    assert len(inputs) == len(outputs)
    path = GOLDEN / f"{name}.json.gz"
    got = [canonical(o) for o in outputs]
    if os.environ.get("IFPO_RECORD_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"inputs_sha256": _digest(inputs), "outputs": got}, ensure_ascii=False, indent=0)
        path.write_bytes(gzip.compress(data.encode(), mtime=0))
        return
    assert path.is_file(), f"{path}: no recorded outputs (record them with IFPO_RECORD_GOLDEN=1, then review)"
    recorded = json.loads(gzip.decompress(path.read_bytes()))
    assert recorded["inputs_sha256"] == _digest(inputs), (
        f"{path.name}: the test's inputs changed since the outputs were recorded; re-record deliberately")
    want = recorded["outputs"]
    assert len(want) == len(got)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{name}: case {i} {inputs[i]!r:.300}\n  got:      {g!r:.500}\n  recorded: {w!r:.500}"
