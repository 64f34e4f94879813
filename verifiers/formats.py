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


def ifeval_record_to_item(record: Mapping[str, Any], registry: Registry | None = None) -> dict[str, Any]:
    """Convert one IFEval record to an ifpo item (text only, one constraint per instruction id).

    Null kwargs are dropped (the HF ``google/IFEval`` dataset stores every kwarg key of every id,
    null where unused), so only the kwargs an id really has are validated against its spec.
    Raises ``ValueError`` naming the field when the record is malformed.
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
    constraints = []
    for n, (type_id, kw) in enumerate(zip(ids, kwargs)):
        if type_id not in registry:
            raise ValueError(f"instruction_id_list[{n}]: {registry.suggest(type_id)}")
        if kw is not None and not isinstance(kw, Mapping):
            raise ValueError(f"kwargs[{n}]: expected an object, got {type(kw).__name__}")
        ctype = registry.get(type_id)
        params = {k: v for k, v in (kw or {}).items() if v is not None}
        constraints.append(
            {
                "id": f"{n}:{type_id}",
                "type": type_id,
                "dimension": ctype.dimension,
                "description": ctype.describe(params),
                "params": params,
            }
        )
    return {
        "id": str(record["key"]),
        "source": "ifeval",
        "instruction": record["prompt"],
        "structure": "single",
        "constraints": constraints,
    }
