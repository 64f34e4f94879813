"""Typed settings from mappings and YAML: unknown keys are errors that name the nearest valid key.

Every config dataclass of ifpo (judge, generation, pair builder, eval hook) reads its YAML/recipe
mapping through here, so a typo gets the same clear message everywhere.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def check_keys(data: Mapping[str, Any], known: Iterable[str], source: str) -> None:
    """Raise ``ValueError`` for the first key of ``data`` not in ``known``, suggesting the closest.

    >>> check_keys({"modle": 1}, ["model", "seed"], "judge.yaml")
    Traceback (most recent call last):
    ...
    ValueError: judge.yaml: unknown key 'modle'; did you mean 'model'? (known: model, seed)
    """
    names = list(known)
    for key in data:
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{source}: unknown key {key!r}{hint} (known: {', '.join(names)})")


def from_mapping(cls: type[T], data: Mapping[str, Any], source: str) -> T:
    """``cls(**data)`` for a dataclass, after refusing unknown keys by name."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: expected a mapping of settings, got {type(data).__name__}")
    check_keys(data, [f.name for f in dataclasses.fields(cls)], source)
    return cls(**dict(data))


def yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML file's top-level mapping (empty file: empty mapping)."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data
