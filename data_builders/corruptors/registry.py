"""The corruptor registry: which family modules exist, and the table built from them.

Each family module (:mod:`.ifeval`, :mod:`.vcifbench`, :mod:`.video_ifbench`, :mod:`.vsysbench`)
sits beside the checker module of the same name in ``verifiers/rules/`` and declares two tables:
``CORRUPTORS`` (type id -> corrupt function) and ``NO_CORRUPTOR`` (type id -> why it has none).
Adding a family is one new module plus one name in :data:`FAMILIES`; adding a type to a family is
one function plus one table line in its module (docs/adding-a-constraint-type.md).
"""

from __future__ import annotations

import difflib
import importlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ifpo.data_builders.corruptors.oracle import CorruptFn, breaker, finish
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import ConstraintType, UnknownNameError, resolve_params

#: The family modules, named as the ``source`` of the types they corrupt (and as the checker
#: modules in ``verifiers/rules/``). A new family: its module, then its name here.
FAMILIES: tuple[str, ...] = ("ifbench", "ifeval", "vcifbench", "video_ifbench", "vsysbench")


@dataclass(frozen=True)
class Corruptor:
    """A registered corruptor for one constraint type.

    Calling it with ``(response, resolved_params, rng)`` returns the distinct candidates that fail
    the type's checker, never the response itself or an empty string, smallest edit first.
    """

    type_id: str
    fn: CorruptFn
    family: str = ""

    @property
    def doc(self) -> str:
        return self.fn.__doc__ or ""

    def __call__(self, response: str, params: Mapping[str, Any], rng: random.Random) -> list[str]:
        ctype = REGISTRY.get(self.type_id)
        raw = self.fn(response, params, rng, ctype)
        return finish(response, raw, breaker(ctype, params))


def _build() -> tuple[dict[str, Corruptor], dict[str, str]]:
    """Read every family's tables, checking each id against the constraint registry."""
    corruptors: dict[str, Corruptor] = {}
    reasons: dict[str, str] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"{__package__}.{family}")
        where = f"{module.__name__} (data_builders/corruptors/{family}.py)"
        table: Mapping[str, CorruptFn] = module.CORRUPTORS
        none: Mapping[str, str] = getattr(module, "NO_CORRUPTOR", {})
        for type_id in [*table, *none]:
            ctype = REGISTRY.get(type_id)  # an unknown id fails at import, with suggestions
            if ctype.route == "judge":
                raise ValueError(f"{where}: {type_id} is judge-route: it gets no programmatic corruptor")
            if ctype.source != family:
                raise ValueError(f"{where}: {type_id} is a {ctype.source} type; its corruptor belongs in "
                                 f"data_builders/corruptors/{ctype.source}.py")
            if type_id in corruptors or type_id in reasons:
                raise ValueError(f"{where}: corruptor for {type_id!r} is registered twice")
            if type_id in table:
                corruptors[type_id] = Corruptor(type_id, table[type_id], family)
            else:
                if not str(none[type_id]).strip():
                    raise ValueError(f"{where}: NO_CORRUPTOR[{type_id!r}] needs a reason")
                reasons[type_id] = str(none[type_id])
    return corruptors, reasons


#: type id -> corruptor, for every rule/hybrid type some family module maps.
#: NO_CORRUPTOR: type id -> the documented reason it has none.
CORRUPTORS, NO_CORRUPTOR = _build()


def supported(type_id: str) -> bool:
    """Whether ``type_id`` (or its alias) has a programmatic corruptor; judge types never do.

    >>> supported("word_count"), supported("tone")
    (True, False)
    """
    if type_id not in REGISTRY:
        return False
    return REGISTRY.get(type_id).id in CORRUPTORS


def get_corruptor(type_id: str) -> Corruptor:
    """The corruptor of ``type_id``; an unknown or judge-route id raises ``KeyError`` naming the
    closest ids that have one.

    >>> get_corruptor("word_count").type_id
    'word_count'
    """
    if type_id in REGISTRY:
        ctype = REGISTRY.get(type_id)
        if ctype.id in CORRUPTORS:
            return CORRUPTORS[ctype.id]
        if ctype.route == "judge":
            raise UnknownNameError(
                f"{type_id!r} is judge-route: it has no programmatic corruptor (use the LLM corruptor)"
            )
        if ctype.id in NO_CORRUPTOR:
            raise UnknownNameError(f"{type_id!r} has no programmatic corruptor: {NO_CORRUPTOR[ctype.id]}")
    close = difflib.get_close_matches(type_id, list(CORRUPTORS), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownNameError(f"no corruptor for {type_id!r}{hint} ({len(CORRUPTORS)} types have one)")


def corrupt_candidates(
    ctype: ConstraintType | str,
    response: str,
    params: Mapping[str, Any] | None,
    rng: random.Random,
) -> list[str]:
    """Candidates breaking constraint ``ctype`` (a type or its id) in ``response``, minimal first.

    ``params`` are resolved (defaults filled, validated) first; a missing required one raises
    :class:`~ifpo.verifiers.registry.MissingParamError` as for the checker. Every candidate fails
    the type's checker; it may be an empty list when the corruptor finds no edit that does.

    >>> corrupt_candidates("punctuation:no_comma", "Red and blue.", {}, random.Random(0))[0]
    'Red, and blue.'
    """
    if isinstance(ctype, str):
        ctype = REGISTRY.get(ctype)
    if not isinstance(response, str):
        raise TypeError(f"{ctype.id}: response must be str, got {type(response).__name__}")
    resolved = resolve_params(ctype, params)
    return get_corruptor(ctype.id)(response, resolved, rng)
