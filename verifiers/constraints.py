"""The constraint registry, explicitly: importing this module registers every constraint type.

Each module below registers its types with :func:`ifpo.verifiers.registry.register` (rule/hybrid) or
:func:`ifpo.verifiers.registry.register_judge`. ``ifpo constraints`` prints the result.
"""

from __future__ import annotations

from ifpo.verifiers.registry import REGISTRY, ConstraintType, Registry
from ifpo.verifiers.rules import generic, ifbench, ifeval, vcifbench, video_ifbench, vsysbench  # noqa: F401  (registration)

__all__ = ["REGISTRY", "ConstraintType", "Registry", "get"]


def get(type_id: str) -> ConstraintType:
    """The registered type ``type_id``; an unknown id raises with the closest names."""
    return REGISTRY.get(type_id)


def describe(ctype: ConstraintType) -> dict:
    """A JSON-able description of one type, generated from the registry."""
    return {
        "id": ctype.id,
        "source": ctype.source,
        "dimension": ctype.dimension,
        "route": ctype.route,
        "description": ctype.description,
        "params": [
            {
                "name": p.name,
                "kind": p.kind,
                "required": p.required,
                **({} if p.required else {"default": p.default}),
                **({"choices": list(p.choices)} if p.choices else {}),
                "help": p.help,
            }
            for p in ctype.params
        ],
    }


def cli_main(argv: list[str]) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="ifpo constraints", description="List the registered constraint types with their parameters."
    )
    parser.add_argument("names", nargs="*", help="show only these types (an unknown name suggests the closest)")
    parser.add_argument("--source", help="only types of this source (vcifbench, video_ifbench, ifeval, ifbench, vsysbench)")
    parser.add_argument("--route", choices=["rule", "hybrid", "judge"], help="only types of this route")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        types = [get(n) for n in args.names] if args.names else list(REGISTRY)
    except KeyError as exc:
        print(f"ifpo constraints: {exc}", file=sys.stderr)
        return 2
    sources = sorted({t.source for t in REGISTRY})
    if args.source and args.source not in sources:
        print(f"ifpo constraints: unknown source {args.source!r}; known: {', '.join(sources)}", file=sys.stderr)
        return 2
    types = [t for t in types if (not args.source or t.source == args.source) and (not args.route or t.route == args.route)]
    if args.json:
        print(json.dumps([describe(t) for t in types], indent=2))
        return 0
    for source in sources:
        group = [t for t in types if t.source == source]
        if not group:
            continue
        print(f"== {source} ({len(group)} types)")
        for t in group:
            print(f"  {t.id}  [{t.route}, {t.dimension}]  {t.description}")
            for p in t.params:
                req = "required" if p.required else f"default {p.default!r}"
                choices = f", one of {list(p.choices)}" if p.choices else ""
                help_ = f": {p.help}" if p.help else ""
                print(f"      {p.name} ({p.kind}, {req}{choices}){help_}")
    print(f"{len(types)} constraint types")
    return 0
