"""Foreign record formats the verifier suite reads directly (importers build on these).

IFEval / IFBench input records are ``{key, prompt, instruction_id_list, kwargs}``; their
responses are ``{prompt, response}`` lines (lm-eval / google-research output), matched by prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ifpo.verifiers.registry import Registry


def _default_registry() -> Registry:
    from ifpo.verifiers.constraints import REGISTRY

    return REGISTRY


def ifeval_record_to_item(
    record: Mapping[str, Any], registry: Registry | None = None, *, tolerant: bool = False
) -> dict[str, Any]:
    """Convert one IFEval / IFBench record to an ifpo item (text only, one constraint per id).

    Null kwargs are dropped (the HF ``google/IFEval`` dataset stores every kwarg key of every id,
    null where unused, and IFBench's evaluation drops them the same way), so only the kwargs an
    id really has are validated against its spec. The item has an empty ``tasks`` list: these
    benchmarks have no task gate (t_i = 1). Raises ``ValueError`` naming the field when the record
    is malformed.

    With ``tolerant``, an instruction ifpo cannot check (an unknown id, kwargs that do not fit
    the id's spec) does not fail the record: it is left out of ``constraints`` and listed in
    ``item["unjudgeable"]`` as ``{"index", "id", "type", "reason"}`` (its position among the
    record's instructions), so a scorer can report it as unjudged in place.
    """
    registry = registry if registry is not None else _default_registry()
    if not isinstance(record, Mapping):
        raise ValueError(f"expected an IFEval record object, got {type(record).__name__}")
    for key in ("key", "prompt", "instruction_id_list"):
        if key not in record:
            raise ValueError(f"{key}: required IFEval field is missing")
    ids = record["instruction_id_list"]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("instruction_id_list: expected an array of instruction id strings")
    kwargs = record.get("kwargs") or [{} for _ in ids]
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        raise ValueError(
            f"kwargs: expected an array of {len(ids)} objects (one per instruction id), got "
            f"{len(kwargs) if isinstance(kwargs, list) else type(kwargs).__name__}"
        )
    constraints, unjudgeable = [], []
    for n, (type_id, kw) in enumerate(zip(ids, kwargs)):
        problem = None
        if type_id not in registry:
            problem = (f"instruction_id_list[{n}]", registry.suggest(type_id))
        elif kw is not None and not isinstance(kw, Mapping):
            problem = (f"kwargs[{n}]", f"expected an object, got {type(kw).__name__}")
        else:
            ctype = registry.get(type_id)
            params = {k: v for k, v in (kw or {}).items() if v is not None}
            errors = ctype.param_errors(params) if tolerant else []
            if errors:
                detail = "; ".join(f"{name}: {msg}" if name else msg for name, msg in errors)
                problem = (f"kwargs[{n}]", f"{type_id}: {detail}")
        if problem is not None:
            if not tolerant:
                raise ValueError(f"{problem[0]}: {problem[1]}")
            unjudgeable.append({"index": n, "id": f"{n}:{type_id}", "type": type_id, "reason": f"{problem[0]}: {problem[1]}"})
            continue
        constraints.append(
            {
                "id": f"{n}:{type_id}",
                "type": type_id,
                "dimension": ctype.dimension,
                "description": ctype.describe(params),
                "params": params,
            }
        )
    sources = {registry.get(c["type"]).source for c in constraints}
    item = {
        "id": str(record["key"]),
        "source": "ifbench" if "ifbench" in sources else "ifeval",
        "instruction": record["prompt"],
        "structure": "single",
        "tasks": [],
        "constraints": constraints,
    }
    if unjudgeable:
        item["unjudgeable"] = unjudgeable
    return item
