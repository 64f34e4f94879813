"""Candidate bookkeeping and the checker oracle every corruptor searches with.

A corruptor never decides on its own whether an edit broke a constraint: :func:`breaker` asks the
type's registered checker (docs/DESIGN.md, "The verdict contract": a verdict is computed one way,
in one place), :func:`search` finds the smallest ``k`` edits of a monotone :class:`Family` that
cross a bound, and :func:`finish` keeps the distinct failing candidates, smallest edit first.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from ifpo.verifiers.registry import ConstraintType

CorruptFn = Callable[[str, Mapping[str, Any], random.Random, ConstraintType], list[str]]


def breaker(ctype: ConstraintType, params: Mapping[str, Any]) -> Callable[[str], bool]:
    checker = ctype.checker
    if checker is None:
        raise ValueError(f"{ctype.id} is judge-route: there is no checker to corrupt against")

    def breaks(text: str) -> bool:
        return bool(text.strip()) and not checker(text, params).passed

    return breaks


def _edit_size(a: str, b: str) -> int:
    """Characters inserted + deleted to turn ``a`` into ``b`` (cheap bound on long texts)."""
    if len(a) + len(b) > 8000:
        prefix = len(_common_prefix(a, b))
        suffix = len(_common_prefix(a[prefix:][::-1], b[prefix:][::-1]))
        return len(a) + len(b) - 2 * (prefix + suffix)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def finish(response: str, raw: Iterable[str | None], breaks: Callable[[str], bool]) -> list[str]:
    seen: list[str] = []
    for cand in raw:
        if not cand or not cand.strip() or cand == response or cand in seen:
            continue
        if breaks(cand):
            seen.append(cand)
    # stable sort: among equal edit sizes, the corruptor's own preference order stays
    return sorted(seen, key=lambda c: _edit_size(response, c))


def _search(make: Callable[[int], str | None], kmax: int, breaks: Callable[[str], bool]) -> str | None:
    """The text ``make(k)`` for the smallest ``k`` in ``1..kmax`` that breaks, found by doubling
    then bisection (edits are monotone: more padding never brings a count back into bounds).
    ``make`` returns None when it cannot do ``k`` edits."""
    lo, k, hit = 0, 1, None
    while k <= kmax:
        text = make(k)
        if text is None:
            break
        if breaks(text):
            hit = (k, text)
            break
        lo, k = k, k * 2
    if hit is None:
        if k > kmax and lo < kmax:  # the last doubling overshot kmax: try kmax itself
            text = make(kmax)
            if text is not None and breaks(text):
                hit = (kmax, text)
        if hit is None:
            return None
    hi, best = hit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        text = make(mid)
        if text is not None and breaks(text):
            hi, best = mid, text
        else:
            lo = mid
    return best


class Family(NamedTuple):
    """A monotone family of edits: ``make(k)`` applies ``k`` of them (None if fewer exist)."""

    make: Callable[[int], str | None]
    kmax: int


def search_all(families: Iterable[Family], breaks: Callable[[str], bool]) -> list[str]:
    out = []
    for fam in families:
        if fam.kmax >= 1:
            hit = _search(fam.make, fam.kmax, breaks)
            if hit is not None:
                out.append(hit)
    return out
