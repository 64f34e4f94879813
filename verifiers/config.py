"""Typed settings from mappings and YAML: unknown keys are errors that name the nearest valid key.

Every config dataclass of ifpo (judge, generation, pair builder, eval hook) reads its YAML/recipe
mapping through here, so a typo gets the same clear message everywhere.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
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


_KIND = {bool: "true or false", int: "an integer", float: "a number", str: "a string", dict: "a mapping",
         list: "a list", tuple: "a list"}


def _show(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}"


def type_problem(value: Any, hint: Any) -> str | None:
    """What is wrong with ``value`` for the type annotation ``hint`` (``None``: it fits).

    YAML and JSON hand over whatever the user typed: ``"8"`` for 8, ``"no"`` for false, ``soon``
    for a timeout. Python would take most of them silently (a non-empty string is truthy) and
    fail much later, or never; each is refused here, naming what was expected.
    """
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        return None
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        problems = [type_problem(value, o) for o in options if o is not type(None)]
        if any(p is None for p in problems):
            return None
        names = [_KIND.get(typing.get_origin(o) or o, getattr(o, "__name__", str(o))) for o in options
                 if o is not type(None)]
        null = " or null" if type(None) in options else ""
        return f"expected {' or '.join(names)}{null}, got {_show(value)}"
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        return None if value in allowed else f"expected one of {list(allowed)}, got {_show(value)}"
    base = origin or hint
    if base is bool:
        return None if isinstance(value, bool) else f"expected true or false, got {_show(value)}"
    if base is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else f"expected an integer, got {_show(value)}"
    if base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else f"expected a number, got {_show(value)}"
    if base is str:
        return None if isinstance(value, str) else f"expected a string, got {_show(value)}"
    if base in (dict, Mapping):
        return None if isinstance(value, Mapping) else f"expected a mapping, got {_show(value)}"
    if base in (list, tuple, Sequence):
        # A bare string is a sequence too, but `kinds: corrupted` means a list of one name, or a typo.
        if not isinstance(value, (list, tuple)):
            return f"expected a list, got {_show(value)}"
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        if len(args) == 1:
            for i, element in enumerate(value):
                problem = type_problem(element, args[0])
                if problem:
                    return f"[{i}]: {problem}"
        return None
    return None


def check_types(cls: type, data: Mapping[str, Any], source: str) -> None:
    """Raise ``ValueError`` for the first value of ``data`` whose type does not fit ``cls``'s field."""
    hints = typing.get_type_hints(cls)
    for key, value in data.items():
        if key in hints:
            problem = type_problem(value, hints[key])
            if problem:
                sep = "" if problem.startswith("[") else ": "
                raise ValueError(f"{source}: {key}{sep}{problem}")


def from_mapping(cls: type[T], data: Mapping[str, Any], source: str) -> T:
    """``cls(**data)`` for a dataclass, after refusing unknown keys by name and values of the wrong type.

    Errors from the dataclass's own checks (``__post_init__``) come back prefixed with ``source``.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: expected a mapping of settings, got {type(data).__name__}")
    fields = dataclasses.fields(cls)
    check_keys(data, [f.name for f in fields], source)
    check_types(cls, data, source)
    missing = [f.name for f in fields if f.name not in data and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ValueError(f"{source}: {missing[0]}: required setting is missing")
    try:
        return cls(**dict(data))
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message if message.startswith(source) else f"{source}: {message}") from None


def yaml_mapping(path: str | Path) -> dict[str, Any]:
    """A YAML file's top-level mapping (empty file: empty mapping); every failure is one ``ValueError`` line."""
    import yaml

    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path}: settings file not found") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read settings file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: YAML syntax error: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ValueError(f"{path}: YAML syntax error: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data
