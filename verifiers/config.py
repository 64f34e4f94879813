"""Typed settings from mappings and YAML: unknown keys are errors that name the nearest valid key.

Every config dataclass of ifpo (judge, generation, pair builder, eval hook) reads its YAML/recipe
mapping through here, so a typo gets the same clear message everywhere.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
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
        if ok and not math.isfinite(value):
            # YAML's .nan / .inf: NaN compares false with every bound check, inf overflows timers (httpx).
            return f"expected a finite number, got {_show(value)}"
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


SEED_MAX = 2**32 - 1  # numpy's seed range; transformers' set_seed and the datasets' int64 columns take it too


def seed_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a seed (``None``: it can): not an integer in 0..2**32-1."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"expected an integer seed, got {_show(value)}"
    if not 0 <= value <= SEED_MAX:
        return f"expected a seed in 0..{SEED_MAX}, got {value}"
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


_LOADER: Any = None


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping (PyYAML keeps the last silently).

    ``model: a`` then ``model: b`` further down is a mistake, not a choice; merge keys (``<<: *base``)
    may still be overridden by an explicit key. Raises ``yaml.MarkedYAMLError`` with the line.
    """
    global _LOADER
    import yaml

    if _LOADER is None:
        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
                if isinstance(node, yaml.MappingNode):
                    seen: dict[Any, Any] = {}
                    for key_node, _ in node.value:
                        if key_node.tag == "tag:yaml.org,2002:merge":
                            continue
                        key = self.construct_object(key_node, deep=deep)
                        try:
                            first = seen.setdefault(key, key_node)
                        except TypeError:  # an unhashable key: SafeLoader reports it below
                            continue
                        if first is not key_node:
                            raise yaml.constructor.ConstructorError(
                                "while reading a mapping", node.start_mark,
                                f"key {key!r} is given twice (first at line {first.start_mark.line + 1})",
                                key_node.start_mark)
                return super().construct_mapping(node, deep=deep)

        _LOADER = UniqueKeyLoader
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a SafeLoader subclass


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
        data = load_yaml(text)
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
    check_expanded_size(data, str(path))
    return data


MAX_YAML_VALUES = 1_000_000


def check_expanded_size(data: Any, source: str, limit: int = MAX_YAML_VALUES) -> None:
    """``ValueError`` when ``data`` holds over ``limit`` values once YAML aliases are expanded.

    PyYAML shares an aliased node instead of copying it, so ``b: [*a, *a, ...]`` nested a few levels
    loads in microseconds, but anything that walks or serialises the settings (type checks, the run
    manifest, a config hash) would visit billions of values ("billion laughs").
    """
    seen = 0
    stack = [data]
    while stack:
        value = stack.pop()
        seen += 1
        if seen > limit:
            raise ValueError(f"{source}: the settings expand to over {limit:,} values (YAML aliases repeated "
                             "inside each other?); write them out plainly")
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
