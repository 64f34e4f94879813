"""Importers: benchmark files -> ifpo items (docs/DESIGN.md, "The item").

Each importer reads one record per line and yields items; a bad record is reported as
``file:line: field: what was expected`` and skipped (counted), never silently. Fields the
importer does not map are kept on the item. Every produced item is then validated like any other
(``ifpo.verifiers.schema.Validator``), so an import never yields an item that ``ifpo validate`` would
refuse.

Formats (one JSON object per line; examples in README "Importing benchmarks"):

- ``video_ifbench``: Video-IFBench ``annotations.jsonl``, one video per line with its
  instructions; one item per instruction. Its ``constraint_id`` is a type name, not unique within
  an instruction: ids become unique (``required_keyword_inclusion``, ``required_keyword_inclusion#2``)
  and the type is kept. Ids ifpo does not register become ``checklist_item`` (judge route) with
  the original id in ``source_type``.
- ``ifeval``: IFEval / IFBench ``{key, prompt, instruction_id_list, kwargs}`` (text only).
- ``vsysbench``: ``{id, image, system, user, ground_truth, reference_response, category,
  subcategory, constraint?: {type, params}, misaligned?: {DJ, PP, RP, AC, UB}}``; without an
  explicit ``constraint`` the system message is judged under the sub-category's judge type.
- ``vcifbench``: ``{id, video, instruction, constraints: [{type, dimension, description, params?,
  judge_context?}], chosen, rejected?, tasks?}``; ``chosen`` becomes the reference response and a
  given ``rejected`` is kept as ``given_rejected`` for the pair builder.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers.registry import REGISTRY
from ifpo.verifiers.schema import ItemError, Validator, iter_jsonl


class RecordError(ValueError):
    """A record that cannot be imported; ``field`` names where."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass
class ImportResult:
    items: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    records: int = 0
    skipped_records: int = 0


def _require(rec: Mapping[str, Any], key: str, kind: type | tuple = str, where: str = "") -> Any:
    value = rec.get(key)
    path = f"{where}{key}"
    if value is None:
        raise RecordError(path, "required field is missing")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int to Python; an id of `true` is a mistake, not the id "True".
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise RecordError(path, f"expected {names}, got {type(value).__name__}")
    if isinstance(value, str) and not value.strip():
        raise RecordError(path, "expected a non-empty string")
    return value


def _params(c: Mapping[str, Any], where: str, key: str = "params") -> dict[str, Any]:
    """A constraint's params object (absent or null: none); anything else is an error naming the field."""
    value = c.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RecordError(f"{where}{key}", f"expected an object of parameters, got {type(value).__name__}")
    return dict(value)


def _optional_id(c: Mapping[str, Any], where: str, default: str) -> str:
    value = c.get("id")
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise RecordError(f"{where}id", f"expected str or int, got {type(value).__name__}")
    return str(value)


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


# --- Video-IFBench ------------------------------------------------------------------------------

_VIFB_STRUCTURES = {"single": "single", "multi": "multi", "compose": "multi", "chain": "multi",
                    "selection": "selection", "nested": "nested"}
_VIFB_INSTRUCTION_KEYS = {"instruction_id", "instruction_key", "instruction_type", "instruction",
                          "active_instruction", "constraints", "tasks"}


def import_video_ifbench(rec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    video_id = str(_require(rec, "video_id", (str, int)))
    video_path = _require(rec, "video_path")
    instructions = _require(rec, "instructions", list)
    duration = rec.get("duration_sec")
    # A video's length is a positive, finite number of seconds; a negative or NaN one (a broken
    # export) was copied onto every item silently before.
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))
                                 or not math.isfinite(duration) or duration <= 0):
        raise RecordError("duration_sec", f"expected a positive number of seconds, got {duration!r}")
    for n, inst in enumerate(instructions):
        where = f"instructions[{n}]."
        if not isinstance(inst, Mapping):
            raise RecordError(f"instructions[{n}]", "expected an instruction object")
        kind = str(_require(inst, "instruction_type", str, where)).lower()
        if kind not in _VIFB_STRUCTURES:
            raise RecordError(f"{where}instruction_type", f"expected one of {sorted(_VIFB_STRUCTURES)}, got {kind!r}")
        key = inst.get("instruction_key") or inst.get("instruction_id") or str(n)
        constraints, seen = [], {}
        for j, c in enumerate(_require(inst, "constraints", list, where)):
            cwhere = f"{where}constraints[{j}]."
            if not isinstance(c, Mapping):
                raise RecordError(f"{where}constraints[{j}]", "expected a constraint object")
            cid = str(_require(c, "constraint_id", str, cwhere))
            seen[cid] = seen.get(cid, 0) + 1
            registered = cid in REGISTRY and REGISTRY.get(cid).source == "video_ifbench"
            ctype = REGISTRY.get(cid if registered else "checklist_item")
            entry = {
                "id": cid if seen[cid] == 1 else f"{cid}#{seen[cid]}",
                "type": ctype.id,
                "dimension": ctype.dimension,
                "description": _require(c, "checklist_query", str, cwhere),
                "params": _params(c, cwhere) if registered else {},
            }
            if c.get("judge_context"):
                entry["judge_context"] = c["judge_context"]
            if not registered:
                # The judge answers the checklist question; the original id and its params stay on
                # the constraint for the record (checklist_item takes no params of its own).
                entry["source_type"] = cid
                if c.get("params"):
                    entry["source_params"] = _params(c, cwhere)
            entry.update({k: v for k, v in c.items() if k not in ("constraint_id", "checklist_query", "judge_context", "params")})
            constraints.append(entry)
        tasks = inst.get("tasks")
        if tasks is not None and not isinstance(tasks, list):
            raise RecordError(f"{where}tasks", f"expected a list of tasks, got {type(tasks).__name__}")
        item = {
            "id": f"{video_id}/{key}",
            "source": "video_ifbench",
            "media": {"videos": [video_path]},
            "instruction": _require(inst, "instruction", str, where),
            "structure": _VIFB_STRUCTURES[kind],
            "tasks": [
                {"name": str(t.get("task_name", "")), "description": str(t.get("task_description", ""))}
                for t in inst.get("tasks") or []
                if isinstance(t, Mapping)
            ],
            "constraints": constraints,
        }
        if item["structure"] in ("selection", "nested"):
            item["active_instruction"] = _require(inst, "active_instruction", str, where)
        if rec.get("duration_sec") is not None:
            item["duration_sec"] = rec["duration_sec"]
        item.update({k: v for k, v in inst.items() if k not in _VIFB_INSTRUCTION_KEYS})
        yield item


# --- IFEval / IFBench ---------------------------------------------------------------------------


def import_ifeval(rec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    from ifpo.verifiers.formats import ifeval_record_to_item

    try:
        item = ifeval_record_to_item(rec)
    except ValueError as exc:
        path, _, message = str(exc).partition(": ")
        raise RecordError(path, message or str(exc)) from None
    item.update({k: v for k, v in rec.items() if k not in ("key", "prompt", "instruction_id_list", "kwargs")})
    yield item


# --- VSysBench-style ----------------------------------------------------------------------------


def _vsys_judge_type(subcategory: str) -> str:
    from ifpo.verifiers.rules.vsysbench import SUBCATEGORIES

    wanted = _snake(subcategory)
    for entries in SUBCATEGORIES.values():
        for name, type_id in entries:
            if _snake(name) == wanted and REGISTRY.get(type_id).route == "judge":
                return type_id
    known = sorted({name for entries in SUBCATEGORIES.values() for name, _ in entries})
    raise RecordError("subcategory", f"unknown VSysBench sub-category {subcategory!r} (known: {', '.join(known)})")


_VSYS_KEYS = {"id", "image", "system", "user", "ground_truth", "reference_response", "category", "subcategory",
              "constraint", "misaligned"}


def import_vsysbench(rec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    system = _require(rec, "system")
    category = _snake(_require(rec, "category"))
    constraint = rec.get("constraint")
    if constraint is not None:
        if not isinstance(constraint, Mapping) or "type" not in constraint:
            raise RecordError("constraint", 'expected {"type": ..., "params": {...}}')
        type_id = constraint["type"]
        params = _params(constraint, "constraint.")
    else:
        type_id = _vsys_judge_type(_require(rec, "subcategory"))
        params = {}
    if type_id not in REGISTRY:
        raise RecordError("constraint.type", REGISTRY.suggest(str(type_id)))
    item = {
        "id": str(_require(rec, "id", (str, int))),
        "source": "vsysbench",
        "media": {"images": [_require(rec, "image")]},
        "system": system,
        "instruction": _require(rec, "user"),
        "structure": "single",
        "tasks": [{"name": "visual_question_answering", "description": "Answer the user's question about the image."}],
        "constraints": [{
            "id": "system_rule",
            "type": type_id,
            "dimension": category,
            "description": system,
            "params": params,
            **({"subcategory": rec["subcategory"]} if rec.get("subcategory") else {}),
        }],
    }
    for key in ("ground_truth", "reference_response"):
        if rec.get(key) is not None:
            item[key] = rec[key]
    if rec.get("misaligned"):
        if not isinstance(rec["misaligned"], Mapping):
            raise RecordError("misaligned", f"expected an object style -> user prefix, got {type(rec['misaligned']).__name__}")
        item["user_overrides"] = dict(rec["misaligned"])
    item.update({k: v for k, v in rec.items() if k not in _VSYS_KEYS})
    yield item


# --- VCIFBench-style ----------------------------------------------------------------------------

_VCIF_KEYS = {"id", "video", "instruction", "constraints", "chosen", "rejected", "tasks"}


def import_vcifbench(rec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    constraints = []
    for j, c in enumerate(_require(rec, "constraints", list)):
        where = f"constraints[{j}]."
        if not isinstance(c, Mapping):
            raise RecordError(f"constraints[{j}]", "expected a constraint object")
        type_id = _require(c, "type", str, where)
        if type_id not in REGISTRY:
            raise RecordError(f"{where}type", REGISTRY.suggest(type_id))
        ctype = REGISTRY.get(type_id)
        entry = {
            "id": _optional_id(c, where, f"c{j + 1}"),
            "type": type_id,
            "dimension": c.get("dimension") or ctype.dimension,
            "description": c.get("description") or c.get("text") or ctype.describe(_params(c, where)),
            "params": _params(c, where),
        }
        entry.update({k: v for k, v in c.items() if k not in ("id", "type", "dimension", "description", "text", "params")})
        constraints.append(entry)
    item = {
        "id": str(_require(rec, "id", (str, int))),
        "source": "vcifbench",
        "media": {"videos": [_require(rec, "video")]},
        "instruction": _require(rec, "instruction"),
        "structure": "single",
        "tasks": rec["tasks"] if isinstance(rec.get("tasks"), list) else ([] if rec.get("tasks") is None else rec["tasks"]),
        "constraints": constraints,
        "reference_response": _require(rec, "chosen"),
    }
    if rec.get("rejected"):
        if not isinstance(rec["rejected"], str):
            raise RecordError("rejected", f"expected str, got {type(rec['rejected']).__name__}")
        item["given_rejected"] = rec["rejected"]
    item.update({k: v for k, v in rec.items() if k not in _VCIF_KEYS})
    yield item


IMPORTERS: dict[str, Callable[[Mapping[str, Any]], Iterator[dict[str, Any]]]] = {
    "video_ifbench": import_video_ifbench,
    "ifeval": import_ifeval,
    "vsysbench": import_vsysbench,
    "vcifbench": import_vcifbench,
}


def get_importer(name: str) -> Callable[[Mapping[str, Any]], Iterator[dict[str, Any]]]:
    if name not in IMPORTERS:
        import difflib

        close = difflib.get_close_matches(name, IMPORTERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown import format {name!r}{hint} (known: {', '.join(IMPORTERS)})")
    return IMPORTERS[name]


def import_file(fmt: str, path: str | Path, *, root: str | Path | None = None, check_media: bool = True) -> ImportResult:
    """Import one file; bad records are reported and skipped, good ones validated as items."""
    importer = get_importer(fmt)
    from ifpo.verifiers.io import require_input_file

    path = require_input_file(path, "input file")
    validator = Validator(Path(root) if root is not None else path.parent, check_media=check_media)
    evaluator = None
    result = ImportResult()
    seen: set[str] = set()
    for lineno, rec, parse_error in iter_jsonl(path):
        result.records += 1
        if parse_error:
            result.errors.append(ItemError(str(path), lineno, None, "", parse_error))
            result.skipped_records += 1
            continue
        if not isinstance(rec, Mapping):
            result.errors.append(ItemError(str(path), lineno, None, "", "expected a JSON object"))
            result.skipped_records += 1
            continue
        rec_id = next((str(rec[k]) for k in ("id", "key", "video_id") if rec.get(k) is not None), None)
        try:
            produced = list(importer(rec))
        except RecordError as exc:
            result.errors.append(ItemError(str(path), lineno, rec_id, exc.field, exc.message))
            result.skipped_records += 1
            continue
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # An importer meeting a value shape it does not expect: that record is bad, not the run.
            result.errors.append(ItemError(str(path), lineno, rec_id, "", f"cannot import this record ({exc})"))
            result.skipped_records += 1
            continue
        bad = False
        for item in produced:
            problems = validator.validate(item)
            if item["id"] in seen:
                problems.append(("id", "duplicate id"))
            if not problems and item.get("reference_response") and fmt in _CHECKED_REFERENCES:
                # A benchmark's own `chosen` that breaks its own rule constraint would teach the
                # opposite of the instruction; it is refused here, not discovered after training.
                if evaluator is None:
                    from ifpo.verifiers.checklist import ChecklistEvaluator

                    evaluator = ChecklistEvaluator(None)
                problems += _reference_failures(evaluator, item, _CHECKED_REFERENCES[fmt])
            if problems:
                bad = True
                result.errors += [ItemError(str(path), lineno, item["id"], f, m) for f, m in problems]
            else:
                seen.add(item["id"])
                result.items.append(item)
        result.skipped_records += bad
    if result.records == 0:
        result.errors.append(ItemError(str(path), 0, None, "", "no records (the file is empty or holds only blank lines)"))
    return result


# Formats whose reference answer is the benchmark's own chosen response, and that field's name.
_CHECKED_REFERENCES = {"vcifbench": "chosen"}


def _reference_failures(evaluator: Any, item: Mapping[str, Any], field_name: str) -> list[tuple[str, str]]:
    result = evaluator.evaluate(item, item["reference_response"])
    return [
        (field_name, f"fails its own constraint {v.constraint_id!r} ({v.type}): {v.reason}")
        for v in result.verdicts
        if v.passed is False
    ]


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ifpo import", description="Convert benchmark files to ifpo items JSONL.")
    parser.add_argument("--format", required=True, choices=sorted(IMPORTERS), help="input format")
    parser.add_argument("--input", required=True, help="input JSONL")
    parser.add_argument("--out", required=True, help="items JSONL to write")
    parser.add_argument("--root", help="dataset root that media paths are relative to (default: the input's folder)")
    parser.add_argument("--no-media-check", action="store_true", help="do not check that media files exist")
    parser.add_argument("--strict", action="store_true",
                        help="write nothing when any record is bad (default: bad records are reported and skipped)")
    args = parser.parse_args(argv)
    try:
        from ifpo.verifiers.io import refuse_overwriting_inputs

        refuse_overwriting_inputs(args.out, {"--input file": args.input})
        result = import_file(args.format, args.input, root=args.root, check_media=not args.no_media_check)
    except (OSError, ValueError) as exc:
        print(f"ifpo import: {exc}", file=sys.stderr)
        return 2
    for err in result.errors:
        print(err, file=sys.stderr)
    if not result.items:
        print(f"ifpo import: {args.input}: no record could be imported ({len(result.errors)} error(s)); "
              f"{args.out} not written", file=sys.stderr)
        return 2  # unusable input (docs/exit-codes.md)
    if args.strict and result.errors:
        print(f"ifpo import: --strict: {result.skipped_records} bad record(s) in {args.input}; {args.out} not written",
              file=sys.stderr)
        return 2  # input refused, nothing written
    from ifpo.verifiers.io import write_jsonl_atomic

    out = Path(args.out)
    write_jsonl_atomic(out, result.items)
    print(f"{args.input}: {result.records} records -> {len(result.items)} items written to {out}; "
          f"{result.skipped_records} record(s) skipped with {len(result.errors)} error(s)")
    return 1 if result.errors else 0  # 1: written, but records were skipped (named above)
