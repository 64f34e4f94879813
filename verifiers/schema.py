"""The item (a verified instruction): loading JSONL and validating it against the schema of docs/DESIGN.md, "The item".

Every error names the file, the line, the item id and the field path, and says what was expected.
A bad line never hides the errors of later lines: loading goes on and collects them all.

Example item (one JSON object per line)::

    {"id": "v01-single-1", "source": "sample", "media": {"videos": ["media/videos/v01.mp4"]},
     "instruction": "Describe the video in 20 to 40 words. Do not use the word 'shape'.",
     "structure": "single", "tasks": [{"name": "summarization", "description": "..."}],
     "constraints": [
        {"id": "c1", "type": "word_count", "dimension": "format",
         "description": "Answer in 20 to 40 words.", "params": {"min_count": 20, "max_count": 40}},
        {"id": "c2", "type": "exact_word_exclusion", "dimension": "content",
         "description": "Do not use the word 'shape'.", "params": {"phrases": ["shape"]}}],
     "reference_response": "A red circle ..."}
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers.registry import DIMENSIONS, Registry

STRUCTURES = ("single", "multi", "selection", "nested", "conflict")
BRANCHING = ("selection", "nested")
OVERRIDE_STYLES = ("DJ", "PP", "RP", "AC", "UB")
MEDIA_KINDS = ("videos", "images")

REQUIRED_FIELDS = ("id", "source", "instruction", "structure", "constraints")


@dataclass(frozen=True)
class ItemError:
    """One validation problem, located precisely."""

    file: str
    line: int
    item_id: str | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file  # line 0: about the whole file
        item = f" item {self.item_id!r}" if self.item_id is not None else ""
        fld = f" {self.field}:" if self.field else ""
        return f"{where}:{item}{fld} {self.message}"


@dataclass
class LoadResult:
    """Items that validated (with their 1-based line numbers) and every error found."""

    path: Path
    items: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    records: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


def _default_registry() -> Registry:
    from ifpo.verifiers.constraints import REGISTRY  # imported here: it loads every checker module

    return REGISTRY


def _conflict_templates() -> tuple[str, ...]:
    from ifpo.verifiers.rules.vcifbench import CONFLICT_TEMPLATES

    return tuple(CONFLICT_TEMPLATES)


class _MediaChecker:
    """Checks media paths against the dataset root; caches filesystem lookups across items."""

    def __init__(self, root: Path, check_exists: bool, decode: bool = False) -> None:
        self.root = root.resolve()
        self.check_exists = check_exists
        self.decode = decode and check_exists
        self._verdicts: dict[tuple[str, str], str | None] = {}

    def problem(self, rel: Any, kind: str = "images") -> str | None:
        # The same media file is named by many items: decide each path once per load.
        if isinstance(rel, str) and (rel, kind) in self._verdicts:
            return self._verdicts[(rel, kind)]
        verdict = self._problem(rel, kind)
        if isinstance(rel, str):
            self._verdicts[(rel, kind)] = verdict
        return verdict

    def _problem(self, rel: Any, kind: str) -> str | None:
        from ifpo.verifiers.media import media_path_problem

        if not isinstance(rel, str) or not rel.strip():
            return f"expected a non-empty relative path string, got {_kind(rel)}"
        problem = media_path_problem(self.root, rel)
        if problem:
            return problem
        if self.check_exists and not (self.root / rel).is_file():
            from ifpo.verifiers.media import missing_media_message

            return missing_media_message(self.root, rel, str(self.root / rel))
        if self.decode:
            # A header and one frame (verifiers.media.probe_media): a corrupt file is named here, not
            # hours into training or as a silent unjudged verdict of a vision judge.
            from ifpo.verifiers.media import probe_media

            why = probe_media(self.root / rel, kind)
            if why:
                return f"media file {rel!r} {why}"
        return None


class Validator:
    """Validates item dicts; reusable across files so that ids stay unique across a whole load."""

    def __init__(self, root: Path, *, registry: Registry | None = None, check_media: bool = True,
                 decode_media: bool = False) -> None:
        self.registry = registry if registry is not None else _default_registry()
        self.media = _MediaChecker(root, check_media, decode_media)
        self.templates = _conflict_templates()

    def validate(self, item: Any) -> list[tuple[str, str]]:
        """Return ``[(field path, message), ...]`` for one item; empty when it is valid."""
        if not isinstance(item, dict):
            return [("", f"expected a JSON object per line, got {_kind(item)}")]
        errs: list[tuple[str, str]] = []
        for name in REQUIRED_FIELDS:
            if name not in item:
                errs.append((name, "required field is missing"))
        for name in ("id", "source", "instruction"):
            if name in item and (not isinstance(item[name], str) or not item[name].strip()):
                errs.append((name, f"expected a non-empty string, got {_kind(item[name])}"))
        if "system" in item and item["system"] is not None and not isinstance(item["system"], str):
            errs.append(("system", f"expected a string, got {_kind(item['system'])}"))
        structure = item.get("structure")
        if "structure" in item and structure not in STRUCTURES:
            errs.append(("structure", f"expected one of {list(STRUCTURES)}, got {structure!r}"))
        errs += self._media(item.get("media"))
        errs += self._tasks(item.get("tasks"))
        constraint_ids = set()
        if "constraints" in item:
            c_errs, constraint_ids = self._constraints(item["constraints"])
            errs += c_errs
        if structure in BRANCHING:
            errs += self._branching(item)
        elif "branches" in item:
            errs.append(("branches", f"only selection/nested items have branches, this one is {structure!r}"))
        errs += self._conflict(item, structure, constraint_ids)
        errs += self._overrides(item)
        ref = item.get("reference_response")
        if ref is not None and not isinstance(ref, str):
            errs.append(("reference_response", f"expected a string, got {_kind(ref)}"))
        return errs

    def _media(self, media: Any) -> list[tuple[str, str]]:
        if media is None:
            return []
        if not isinstance(media, dict):
            return [("media", f'expected an object like {{"videos": [...], "images": [...]}}, got {_kind(media)}')]
        errs = []
        for key, paths in media.items():
            if key not in MEDIA_KINDS:
                hint = next((k for k in MEDIA_KINDS if k.startswith(str(key)[:5])), None)
                suggestion = f"; did you mean {hint!r}?" if hint else ""
                errs.append((f"media.{key}", f"unknown media kind{suggestion} (expected {list(MEDIA_KINDS)})"))
                continue
            if not isinstance(paths, list):
                errs.append((f"media.{key}", f"expected an array of paths, got {_kind(paths)}"))
                continue
            for i, rel in enumerate(paths):
                problem = self.media.problem(rel, key)
                if problem:
                    errs.append((f"media.{key}[{i}]", problem))
        return errs

    @staticmethod
    def _tasks(tasks: Any) -> list[tuple[str, str]]:
        if tasks is None:
            return []
        if not isinstance(tasks, list):
            return [("tasks", f"expected an array of {{name, description}}, got {_kind(tasks)}")]
        errs = []
        for i, task in enumerate(tasks):
            if not isinstance(task, dict):
                errs.append((f"tasks[{i}]", f"expected an object {{name, description}}, got {_kind(task)}"))
                continue
            for key in ("name", "description"):
                if not isinstance(task.get(key), str) or not task[key].strip():
                    errs.append((f"tasks[{i}].{key}", f"expected a non-empty string, got {_kind(task.get(key))}"))
        return errs

    def _constraints(self, constraints: Any) -> tuple[list[tuple[str, str]], set[str]]:
        if not isinstance(constraints, list):
            return [("constraints", f"expected an array of constraint objects, got {_kind(constraints)}")], set()
        if not constraints:
            return [("constraints", "expected at least one constraint (a verified instruction has a checklist)")], set()
        errs: list[tuple[str, str]] = []
        seen: set[str] = set()
        for i, c in enumerate(constraints):
            path = f"constraints[{i}]"
            if not isinstance(c, dict):
                errs.append((path, f"expected a constraint object, got {_kind(c)}"))
                continue
            cid = c.get("id")
            if not isinstance(cid, str) or not cid.strip():
                errs.append((f"{path}.id", f"expected a non-empty string, got {_kind(cid)}"))
            elif cid in seen:
                errs.append((f"{path}.id", f"duplicate constraint id {cid!r} within the item"))
            else:
                seen.add(cid)
            dim = c.get("dimension")
            if dim not in DIMENSIONS:
                errs.append((f"{path}.dimension", f"expected one of {list(DIMENSIONS)}, got {dim!r}"))
            desc = c.get("description")
            if not isinstance(desc, str) or not desc.strip():
                errs.append((f"{path}.description", f"expected a non-empty string, got {_kind(desc)}"))
            if c.get("judge_context") is not None and not isinstance(c["judge_context"], str):
                errs.append((f"{path}.judge_context", f"expected a string, got {_kind(c['judge_context'])}"))
            subs = c.get("sub_questions")
            if subs is not None and not (isinstance(subs, list) and all(isinstance(q, str) and q.strip() for q in subs)):
                errs.append((f"{path}.sub_questions", "expected an array of non-empty strings"))
            ctype_name = c.get("type")
            if not isinstance(ctype_name, str):
                errs.append((f"{path}.type", f"expected a registered constraint type name, got {_kind(ctype_name)}"))
                continue
            if ctype_name not in self.registry:
                errs.append((f"{path}.type", self.registry.suggest(ctype_name)))
                continue
            ctype = self.registry.get(ctype_name)
            params = c.get("params", {})
            if params is None:
                params = {}
            # Hybrid and judge constraints may leave params for the judge to extract from the text.
            for name, message in ctype.param_errors(params, allow_missing=ctype.route != "rule"):
                errs.append((f"{path}.params.{name}" if name else f"{path}.params", message))
        return errs, seen

    def _branching(self, item: dict) -> list[tuple[str, str]]:
        branches = item.get("branches")
        active_instruction = item.get("active_instruction")
        if branches is None:
            if not isinstance(active_instruction, str) or not active_instruction.strip():
                return [("active_instruction", f"a {item.get('structure')} item needs the branch to execute: "
                         "give active_instruction or branches with exactly one active")]
            return []
        errs: list[tuple[str, str]] = []
        leaf = self._branch_level(branches, "branches", errs, parent_active=True)
        if leaf is not None and active_instruction is not None and active_instruction != leaf:
            errs.append(("active_instruction", "does not match the instruction of the active branch "
                         f"({leaf[:60]!r})"))
        return errs

    def _branch_level(self, branches: Any, path: str, errs: list, parent_active: bool) -> str | None:
        """Check one level; return the active leaf's instruction (when exactly one path is active)."""
        if not isinstance(branches, list) or len(branches) < 2:
            errs.append((path, f"expected an array of at least 2 branches, got {_kind(branches)}"
                         + (f" of {len(branches)}" if isinstance(branches, list) else "")))
            return None
        actives = []
        leaf = None
        for i, b in enumerate(branches):
            bpath = f"{path}[{i}]"
            if not isinstance(b, dict):
                errs.append((bpath, f"expected a branch object {{condition, instruction, active}}, got {_kind(b)}"))
                continue
            for key in ("condition", "instruction"):
                if not isinstance(b.get(key), str) or not b[key].strip():
                    errs.append((f"{bpath}.{key}", f"expected a non-empty string, got {_kind(b.get(key))}"))
            active = b.get("active", False)
            if not isinstance(active, bool):
                errs.append((f"{bpath}.active", f"expected true or false, got {_kind(active)}"))
                active = False
            if active:
                actives.append(i)
            sub = b.get("branches")
            if sub is not None:
                sub_leaf = self._branch_level(sub, f"{bpath}.branches", errs, parent_active=active and parent_active)
                if active:
                    leaf = sub_leaf
            elif active:
                leaf = b.get("instruction")
        if parent_active and len(actives) != 1:
            errs.append((path, f"expected exactly one active branch, found {len(actives)}"
                         + (f" (indices {actives})" if actives else "")))
            return None
        if not parent_active and actives:
            errs.append((f"{path}[{actives[0]}].active", "an active branch under an inactive branch"))
        return leaf

    def _conflict(self, item: dict, structure: Any, constraint_ids: set[str]) -> list[tuple[str, str]]:
        conflict = item.get("conflict")
        if structure != "conflict":
            return [("conflict", f"only conflict items carry a conflict block, this one is {structure!r}")] if conflict else []
        if not isinstance(conflict, dict):
            return [("conflict", 'a conflict item needs {"template": ..., "conflicting": [constraint ids]}')]
        errs = []
        template = conflict.get("template")
        if template not in self.templates:
            errs.append(("conflict.template", f"expected one of {list(self.templates)}, got {template!r}"))
        ids = conflict.get("conflicting")
        if not (isinstance(ids, list) and len(ids) >= 2 and all(isinstance(x, str) for x in ids)):
            errs.append(("conflict.conflicting", "expected an array of at least 2 constraint ids"))
        else:
            for j, cid in enumerate(ids):
                if cid not in constraint_ids:
                    errs.append((f"conflict.conflicting[{j}]", f"constraint id {cid!r} is not in this item's constraints"))
        if item.get("reference_response") is not None:
            errs.append(("reference_response", "a conflict item is unsatisfiable: it has no reference_response "
                         "(put the ideal clarification in conflict.clarification)"))
        return errs

    @staticmethod
    def _overrides(item: dict) -> list[tuple[str, str]]:
        overrides = item.get("user_overrides")
        if overrides is None:
            return []
        if not isinstance(overrides, dict):
            return [("user_overrides", f"expected an object style -> user prefix, got {_kind(overrides)}")]
        errs = []
        for style, prefix in overrides.items():
            if style not in OVERRIDE_STYLES:
                errs.append((f"user_overrides.{style}", f"unknown override style; expected one of {list(OVERRIDE_STYLES)}"))
            elif not isinstance(prefix, str) or not prefix.strip():
                errs.append((f"user_overrides.{style}", f"expected a non-empty string, got {_kind(prefix)}"))
        if not item.get("system"):
            errs.append(("user_overrides", "overrides contradict a system message, but the item has no system"))
        return errs


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line number, parsed value or None, parse error or None)`` for non-blank lines.

    The shared policy of ``ifpo.verifiers.io.iter_jsonl``: BOM and CRLF accepted; invalid UTF-8,
    broken JSON and over-deep nesting are errors of that line only.
    """
    from ifpo.verifiers.io import iter_jsonl as _iter

    return _iter(path)


def load_items(
    paths: Path | str | Iterable[Path | str],
    *,
    root: Path | str | None = None,
    check_media: bool = True,
    registry: Registry | None = None,
    decode_media: bool = False,
) -> LoadResult:
    """Load and validate one or more JSONL files; collect every error, keep only valid items.

    ``root`` is the dataset root media paths are relative to (default: each file's folder).
    Ids must be unique across all files loaded together. ``decode_media`` also decodes each media
    file's header and first frame (``ifpo validate`` does; other loaders leave it to their own
    per-file probe or to the judge, which names the file).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    result = LoadResult(path=paths[0] if paths else Path("."))
    seen: dict[str, str] = {}
    validator: Validator | None = None
    from ifpo.verifiers.io import require_input_file

    for path in paths:
        require_input_file(path, "items file")
        records_before = result.records
        file_root = Path(root) if root is not None else path.parent
        if validator is None or validator.media.root != file_root.resolve():
            validator = Validator(file_root, registry=registry, check_media=check_media, decode_media=decode_media)
        for lineno, item, parse_error in iter_jsonl(path):
            result.records += 1
            if parse_error:
                result.errors.append(ItemError(str(path), lineno, None, "", parse_error))
                continue
            item_id = item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else None
            problems = validator.validate(item)
            if item_id is not None:
                if item_id in seen:
                    problems.append(("id", f"duplicate id, first seen at {seen[item_id]}"))
                else:
                    seen[item_id] = f"{path}:{lineno}"
            if problems:
                result.errors += [ItemError(str(path), lineno, item_id, f, m) for f, m in problems]
            else:
                result.items.append(item)
                result.lines.append(lineno)
        if result.records == records_before:
            result.errors.append(ItemError(str(path), 0, None, "", "no records (the file is empty or holds only blank lines)"))
    return result


def read_items(paths: Path | str | Iterable[Path | str], **kwargs: Any) -> list[dict[str, Any]]:
    """Load items, raising ``ValueError`` listing the errors when any record is invalid."""
    result = load_items(paths, **kwargs)
    if result.errors:
        shown = "\n  ".join(str(e) for e in result.errors[:20])
        more = f"\n  ... and {len(result.errors) - 20} more" if len(result.errors) > 20 else ""
        raise ValueError(f"{len(result.errors)} invalid item field(s):\n  {shown}{more}")
    return result.items


def media_kind(item: dict[str, Any]) -> str:
    media = item.get("media") or {}
    kinds = [k[:-1] for k in MEDIA_KINDS if media.get(k)]
    return "+".join(kinds) if kinds else "text"


def summarize(items: list[dict[str, Any]], registry: Registry | None = None) -> dict[str, Any]:
    """Counts by structure, constraint type, route, dimension, source and media kind."""
    registry = registry if registry is not None else _default_registry()
    by_type: Counter[str] = Counter()
    by_dim: Counter[str] = Counter()
    by_route: Counter[str] = Counter()
    for item in items:
        for c in item["constraints"]:
            by_type[c["type"]] += 1
            by_dim[c["dimension"]] += 1
            by_route[registry.get(c["type"]).route] += 1
    return {
        "items": len(items),
        "constraints": sum(by_type.values()),
        "by_structure": dict(Counter(i["structure"] for i in items).most_common()),
        "by_source": dict(Counter(i["source"] for i in items).most_common()),
        "by_media": dict(Counter(media_kind(i) for i in items).most_common()),
        "by_dimension": dict(by_dim.most_common()),
        "by_route": dict(by_route.most_common()),
        "by_constraint_type": dict(sorted(by_type.items())),
        "with_system": sum(1 for i in items if i.get("system")),
        "with_user_overrides": sum(1 for i in items if i.get("user_overrides")),
        "with_reference_response": sum(1 for i in items if i.get("reference_response")),
    }


def _print_summary(path: str, summary: dict[str, Any], seconds: float) -> None:
    print(f"{path}: {summary['items']} items, {summary['constraints']} constraints, all valid "
          f"({summary['items'] / max(seconds, 1e-9):,.0f} items/s)")
    for key in ("by_structure", "by_source", "by_media", "by_dimension", "by_route"):
        row = ", ".join(f"{k} {v}" for k, v in summary[key].items())
        print(f"  {key[3:]:<10} {row}")
    types = summary["by_constraint_type"]
    print(f"  types      {len(types)} distinct:")
    width = max((len(t) for t in types), default=0)
    for name, count in types.items():
        print(f"    {name:<{width}}  {count}")
    print(f"  with system message {summary['with_system']}, with user overrides {summary['with_user_overrides']}, "
          f"with reference response {summary['with_reference_response']}")


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ifpo validate",
        description="Validate items JSONL against the ifpo item schema; print a summary, or every error (exit 1).",
    )
    parser.add_argument("items", nargs="+", help="items JSONL file(s)")
    parser.add_argument("--root", help="dataset root that media paths are relative to (default: each file's folder)")
    parser.add_argument("--no-media-check", action="store_true",
                        help="do not check that media files exist and decode (header and first frame)")
    parser.add_argument("--json", action="store_true", help="print the summary (or errors) as JSON")
    args = parser.parse_args(argv)
    _default_registry()  # import the checkers before timing, so items/s measures validation
    start = time.perf_counter()
    try:
        result = load_items(args.items, root=args.root, check_media=not args.no_media_check,
                            decode_media=not args.no_media_check)
    except (OSError, ValueError) as exc:
        print(f"ifpo validate: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    label = ", ".join(args.items)
    if result.errors:
        if args.json:
            print(json.dumps({"errors": [e.__dict__ for e in result.errors]}, indent=2))
        else:
            for err in result.errors:
                print(err)
            bad = result.records - len(result.items)
            print(f"\n{label}: {len(result.errors)} error(s) in {bad} of {result.records} records", file=sys.stderr)
        return 1
    summary = summarize(result.items)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(label, summary, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))


__all__ = [
    "ItemError",
    "LoadResult",
    "OVERRIDE_STYLES",
    "STRUCTURES",
    "Validator",
    "load_items",
    "media_kind",
    "read_items",
    "summarize",
]
