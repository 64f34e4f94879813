"""Constraint-type machinery: parameter specs, the checker contract, and the registry itself.

A constraint type is registered once, with its dimension, route, parameter spec and description
template. Rule and hybrid types carry a checker, a pure function ``(response, params) -> Check``.
Judge types carry none: an LLM/VLM decides them.

The explicit list of what is registered lives in :mod:`ifpo.verifiers.constraints`, which imports the
checker modules in ``verifiers/rules/``; this module only holds the machinery so that checker
modules can import it without a cycle.

Checker contract (every rule checker follows it):

- it receives the raw response and the *resolved* params (defaults filled, required present);
- it never invents a missing value: :func:`resolve_params` raises before the checker runs;
- it returns ``Check(passed, reason)`` where ``reason`` is something a person can act on,
  e.g. ``"62 words, expected 40-60"``;
- it is deterministic and has no side effects; an empty or whitespace-only response fails
  (unless the type's semantics say otherwise, which its docstring then states).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

ROUTES = ("rule", "hybrid", "judge")

# VCIFBench's four dimensions plus VSysBench's five main categories (snake_case).
DIMENSIONS = (
    "format",
    "content",
    "style",
    "structure",
    "background_knowledge",
    "content_control",
    "visual_processing",
)

PARAM_KINDS = ("int", "number", "str", "bool", "list[str]", "list[int]", "list", "dict", "any")


class MissingParamError(ValueError):
    """A required parameter is absent: checkers never invent one (docs/DESIGN.md, "Verification routes")."""


class UnknownNameError(KeyError, ValueError):
    """An unknown registry name; the message lists the closest registered names."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class Check(NamedTuple):
    """What a rule checker returns."""

    passed: bool
    reason: str


@dataclass(frozen=True)
class Param:
    """One parameter of a constraint type."""

    name: str
    kind: str
    required: bool = False
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    nullable: bool = False

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(f"param {self.name!r}: kind {self.kind!r} is not one of {PARAM_KINDS}")

    def type_error(self, value: Any) -> str | None:
        """Return why ``value`` does not fit this param, or None when it fits."""
        if value is None:
            return None if self.nullable else f"expected {self.kind}, got null"
        ok = _KIND_CHECKS[self.kind](value)
        if not ok:
            return f"expected {self.kind}, got {type(value).__name__} {_short(value)}"
        if self.choices is not None:
            values = value if isinstance(value, list) else [value]
            bad = [v for v in values if v not in self.choices]
            if bad:
                return f"expected one of {list(self.choices)}, got {_short(bad[0])}"
        return None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_KIND_CHECKS: dict[str, Callable[[Any], bool]] = {
    "int": _is_int,
    "number": lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool)),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "list[int]": lambda v: isinstance(v, list) and all(_is_int(x) for x in v),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "any": lambda v: True,
}


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


Checker = Callable[[str, Mapping[str, Any]], Check]
ParamsCheck = Callable[[Mapping[str, Any]], "str | None"]


# ---------------------------------------------------------------------------------------------
# Parameter-check helpers: the idioms every ``params_check`` repeats, worded one way. Each returns
# the error message, or None when the value is fine, so that checks chain with ``or``.


def bounds_error(
    params: Mapping[str, Any],
    low: str = "min_count",
    high: str = "max_count",
    *,
    minimum: int = 0,
    require_one: bool = False,
    reject_unbounded: bool = False,
) -> str | None:
    """Why the inclusive bounds ``params[low]``..``params[high]`` are unusable, or None.

    A bound may be absent or null (unbounded on that side). Each given bound must be at least
    ``minimum``, and ``low`` at most ``high``; with ``require_one`` at least one bound must be
    given; with ``reject_unbounded`` ``low == 0`` and no ``high`` is refused (it accepts anything).

    >>> bounds_error({"min_count": 5, "max_count": 2})
    'min_count (5) is greater than max_count (2)'
    >>> bounds_error({"min_spans": 0}, "min_spans", "max_spans", minimum=1)
    'min_spans must be >= 1, got 0'
    >>> bounds_error({"min_count": 1, "max_count": None}) is None
    True
    """
    lo, hi = params.get(low), params.get(high)
    if require_one and lo is None and hi is None:
        return f"give at least one of {low} / {high} (null means unbounded on that side)"
    for name, value in ((low, lo), (high, hi)):
        if value is not None and value < minimum:
            return f"{name} must be >= {minimum}, got {value}"
    if lo is not None and hi is not None and lo > hi:
        return f"{low} ({lo}) is greater than {high} ({hi})"
    if reject_unbounded and lo == 0 and hi is None:
        return f"{low} 0 without {high} accepts any response"
    return None


def at_least_error(params: Mapping[str, Any], name: str, minimum: int) -> str | None:
    """Why ``params[name]`` (an int, or absent/null) is below ``minimum``, or None.

    >>> at_least_error({"min_items": 0}, "min_items", 1)
    'min_items must be >= 1, got 0'
    """
    value = params.get(name)
    return f"{name} must be >= {minimum}, got {value}" if value is not None and value < minimum else None


def regex_error(pattern: Any, name: str = "pattern", *, ignore_case: bool = False) -> str | None:
    """Why ``pattern`` is not a usable regular expression (not a string, empty, or invalid), or None.

    An empty pattern is refused: it matches everywhere, which is never what a constraint means.

    >>> regex_error("[0-9", "custom_patterns[0]")
    "custom_patterns[0] '[0-9' is not a valid regular expression: unterminated character set at position 0"
    >>> regex_error(r"\\d+") is None
    True
    """
    if not isinstance(pattern, str) or not pattern:
        return f"{name} must be a non-empty regular expression"
    try:
        re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        return f"{name} {pattern!r} is not a valid regular expression: {exc}"
    return None


def nonempty_strings_error(name: str, values: list[str] | None, *, allow_none: bool = False) -> str | None:
    """Why ``values`` is not a non-empty list of non-blank strings, or None.

    ``allow_none`` accepts an absent/null list (an optional param); an empty list is always refused.

    >>> nonempty_strings_error("keywords", [])
    'keywords is empty: give a non-empty list'
    >>> nonempty_strings_error("keywords", ["dog", " "])
    'keywords[1] is blank: give non-empty strings'
    >>> nonempty_strings_error("required_keys", None, allow_none=True) is None
    True
    """
    if values is None:
        return None if allow_none else f"{name} is required: give a non-empty list"
    if not values:
        return f"{name} is empty: give a non-empty list"
    blank = next((i for i, v in enumerate(values) if not v.strip()), None)
    return None if blank is None else f"{name}[{blank}] is blank: give non-empty strings"


def all_checks(*checks: ParamsCheck) -> ParamsCheck:
    """A ``params_check`` running ``checks`` in order; the first error wins.

    >>> all_checks(nonblank_check("keyword"), at_least_check("n", minimum=1))({"keyword": "a", "n": 0})
    'n must be >= 1, got 0'
    """

    def check(params: Mapping[str, Any]) -> str | None:
        return next((e for c in checks if (e := c(params))), None)

    return check


def bounds_check(low: str = "min_count", high: str = "max_count", **options: Any) -> ParamsCheck:
    """A ``params_check`` applying :func:`bounds_error` (same keyword options) to ``low``/``high``.

    >>> bounds_check()({"min_count": 3, "max_count": 1})
    'min_count (3) is greater than max_count (1)'
    """

    def check(params: Mapping[str, Any]) -> str | None:
        return bounds_error(params, low, high, **options)

    return check


def at_least_check(*names: str, minimum: int) -> ParamsCheck:
    """A ``params_check`` applying :func:`at_least_error` to each of ``names`` (first error wins).

    >>> at_least_check("num_words", "num_sentences", minimum=0)({"num_words": 1, "num_sentences": -2})
    'num_sentences must be >= 0, got -2'
    """

    def check(params: Mapping[str, Any]) -> str | None:
        return next((e for n in names if (e := at_least_error(params, n, minimum))), None)

    return check


def nonempty_strings_check(name: str, *, allow_none: bool = False) -> ParamsCheck:
    """A ``params_check`` applying :func:`nonempty_strings_error` to ``params[name]``.

    >>> nonempty_strings_check("tags")({"tags": []})
    'tags is empty: give a non-empty list'
    """

    def check(params: Mapping[str, Any]) -> str | None:
        return nonempty_strings_error(name, params.get(name), allow_none=allow_none)

    return check


def nonblank_check(*names: str) -> ParamsCheck:
    """A ``params_check`` applying :func:`nonblank_error` to each of ``names`` (first error wins).

    >>> nonblank_check("prefix", "suffix")({"prefix": "A", "suffix": " "})
    'suffix must not be empty: give a non-empty string'
    """

    def check(params: Mapping[str, Any]) -> str | None:
        return next((e for n in names if (e := nonblank_error(params, n))), None)

    return check


def nonblank_error(params: Mapping[str, Any], name: str) -> str | None:
    """Why the string ``params[name]`` is blank (given but empty or whitespace only), or None.

    >>> nonblank_error({"prefix": "  "}, "prefix")
    'prefix must not be empty: give a non-empty string'
    """
    value = params.get(name)
    if isinstance(value, str) and not value.strip():
        return f"{name} must not be empty: give a non-empty string"
    return None


@dataclass(frozen=True)
class ConstraintType:
    """A registered constraint type."""

    id: str
    source: str
    dimension: str
    route: str
    params: tuple[Param, ...]
    description: str
    checker: Checker | None = None
    # Cross-field rule on resolved params (e.g. "min_count <= max_count"); returns an error or None.
    params_check: ParamsCheck | None = None
    aliases: tuple[str, ...] = field(default=())
    # How a benchmark's own scorer coerces params before its judge runs (e.g. Video-IFBench turns
    # "3" into 3 and drops None), applied before validation; None = params are taken as given.
    params_coerce: Callable[[ConstraintType, Mapping[str, Any]], dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.route not in ROUTES:
            raise ValueError(f"{self.id}: route {self.route!r} is not one of {ROUTES}")
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"{self.id}: dimension {self.dimension!r} is not one of {DIMENSIONS}")
        if self.route in ("rule", "hybrid") and self.checker is None:
            raise ValueError(f"{self.id}: route {self.route!r} needs a checker")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: duplicate parameter names {names}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise UnknownNameError(_unknown_message("parameter", name, self.param_names, f"of {self.id}"))

    def coerced(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` after the type's ``params_coerce`` (a copy as given when it has none)."""
        return self.params_coerce(self, params) if self.params_coerce is not None else dict(params)

    def param_errors(self, params: Mapping[str, Any], *, allow_missing: bool = False) -> list[tuple[str, str]]:
        """Return ``[(param name, message), ...]`` for params that do not fit the spec.

        ``allow_missing`` accepts absent required params: hybrid constraints may leave them for
        the judge to extract from the constraint text.
        """
        errors: list[tuple[str, str]] = []
        if not isinstance(params, Mapping):
            return [("", f"expected an object of parameters, got {type(params).__name__}")]
        params = self.coerced(params)
        known = self.param_names
        for name in params:
            if name not in known:
                errors.append((name, _unknown_message("parameter", name, known, f"of {self.id}")))
        for p in self.params:
            if p.name in params:
                problem = p.type_error(params[p.name])
                if problem:
                    errors.append((p.name, problem))
            elif p.required and not allow_missing:
                errors.append((p.name, f"required parameter of {self.id} is missing ({p.help or p.kind})"))
        if not errors and self.params_check is not None:
            missing_required = any(p.required and p.name not in params for p in self.params)
            if not missing_required:
                problem = self.params_check(self.with_defaults(params))
                if problem:
                    errors.append(("", problem))
        return errors

    def describe(self, params: Mapping[str, Any] | None = None) -> str:
        """The description template filled with ``params`` (placeholders left as-is if missing)."""

        class _Keep(dict):
            def __missing__(self, key: str) -> str:
                return "{" + key + "}"

        try:
            return self.description.format_map(_Keep(self.with_defaults(params or {})))
        except (ValueError, IndexError, AttributeError):
            return self.description

    def with_defaults(self, params: Mapping[str, Any]) -> dict[str, Any]:
        resolved = {p.name: p.default for p in self.params if not p.required}
        resolved.update(self.coerced(params))
        return resolved


def resolve_params(ctype: ConstraintType, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fill documented defaults and validate; raise instead of inventing a missing value."""
    params = ctype.coerced(params or {})
    missing = [p.name for p in ctype.params if p.required and p.name not in params]
    if missing:
        raise MissingParamError(
            f"{ctype.id}: missing required parameter(s) {missing}; a checker never invents them "
            f"(give them in the item, or use the hybrid route with a judge to extract them)"
        )
    errors = ctype.param_errors(params)
    if errors:
        raise ValueError(f"{ctype.id}: " + "; ".join(f"{n}: {m}" if n else m for n, m in errors))
    return ctype.with_defaults(params)


def _unknown_message(kind: str, name: str, known: Iterable[str], where: str = "") -> str:
    known = list(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    where = f" {where}" if where else ""
    # A long list would bury the hint: past 12 names, say how many and where they are listed.
    listing = f"known: {', '.join(sorted(known))}" if len(known) <= 12 else f"{len(known)} known; `ifpo constraints` lists them"
    return f"unknown {kind} {name!r}{where}{hint} ({listing})"


class Registry:
    """Constraint types by id. Lookup of an unknown id suggests the nearest registered ids."""

    def __init__(self) -> None:
        self._types: dict[str, ConstraintType] = {}
        self._aliases: dict[str, str] = {}

    def add(self, ctype: ConstraintType) -> ConstraintType:
        for name in (ctype.id, *ctype.aliases):
            if name in self._types or name in self._aliases:
                raise ValueError(f"constraint type {name!r} is registered twice")
        self._types[ctype.id] = ctype
        for alias in ctype.aliases:
            self._aliases[alias] = ctype.id
        return ctype

    def __contains__(self, name: object) -> bool:
        return name in self._types or name in self._aliases

    def get(self, name: str) -> ConstraintType:
        if name in self._types:
            return self._types[name]
        if name in self._aliases:
            return self._types[self._aliases[name]]
        raise UnknownNameError(_unknown_message("constraint type", name, self._types))

    def suggest(self, name: str) -> str:
        """The error message for an unknown name, with the closest registered ids."""
        return _unknown_message("constraint type", name, self._types)

    def __iter__(self):
        return iter(self._types.values())

    def __len__(self) -> int:
        return len(self._types)

    def ids(self) -> list[str]:
        return list(self._types)


REGISTRY = Registry()


def register(
    id: str,
    *,
    source: str,
    dimension: str,
    route: str,
    params: Iterable[Param] = (),
    description: str,
    params_check: ParamsCheck | None = None,
    aliases: Iterable[str] = (),
    params_coerce: Callable[[ConstraintType, Mapping[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[Checker], Checker]:
    """Decorator registering a rule/hybrid checker::

        @register("word_count", source="vcifbench", dimension="format", route="hybrid",
                  params=[Param("min_count", "int"), Param("max_count", "int")],
                  description="Answer in {min_count} to {max_count} words.")
        def word_count(response, params): ...
    """

    def deco(fn: Checker) -> Checker:
        REGISTRY.add(
            ConstraintType(
                id=id,
                source=source,
                dimension=dimension,
                route=route,
                params=tuple(params),
                description=description,
                checker=fn,
                params_check=params_check,
                aliases=tuple(aliases),
                params_coerce=params_coerce,
            )
        )
        return fn

    return deco


def register_judge(
    id: str,
    *,
    source: str,
    dimension: str,
    params: Iterable[Param] = (),
    description: str,
    aliases: Iterable[str] = (),
) -> ConstraintType:
    """Register a judge-route type (no rule checker: an LLM/VLM answers its checklist question)."""
    return REGISTRY.add(
        ConstraintType(
            id=id,
            source=source,
            dimension=dimension,
            route="judge",
            params=tuple(params),
            description=description,
            aliases=tuple(aliases),
        )
    )


def run_checker(ctype: ConstraintType, response: str, params: Mapping[str, Any] | None) -> Check:
    """Resolve params (raising on a missing required one) and run the type's rule checker."""
    if ctype.checker is None:
        raise ValueError(f"{ctype.id} is judge-route: it has no rule checker")
    if not isinstance(response, str):
        raise TypeError(f"{ctype.id}: response must be str, got {type(response).__name__}")
    return ctype.checker(response, resolve_params(ctype, params))
