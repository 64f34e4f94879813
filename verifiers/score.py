"""``ifpo score``: score responses against items with the verifier suite and write REPORT.json.

    ifpo score --items ITEMS.jsonl --responses RESPONSES.jsonl --out REPORT.json \\
               [--judge JUDGE.yaml] [--format ifpo|ifeval] [--mode strict|loose] [--strict]

RESPONSES.jsonl lines are ``{"id": ..., "response": ...}``. With ``--format ifeval`` the items are
IFEval / IFBench records ``{key, prompt, instruction_id_list, kwargs}`` and responses may be their
``{prompt, response}`` lines, matched by prompt after whitespace normalisation (or
``{"key"|"id", "response"}``).

Files are scored as shipped: a record that cannot be read, an instruction ifpo cannot check
(scored as unjudged, with the reason, in place), a response whose prompt matches no item, or an
extra response is reported as ``file:line: ...`` on stderr and in ``input_problems``, and scoring
goes on; items without a response are counted in ``missing_responses`` / ``n_missing``.
``--strict`` refuses the input on any such problem instead. ``--mode loose`` applies IFEval's
loose definition to every rule check (``mode`` in the report).

REPORT.json keys are stable: ``ipr``, ``cpr_micro``, ``cpr_macro``, ``cpr_by_dimension``,
``near_miss_rate``, ``violations_per_failed``, ``tcsr``, ``tisr``, ``unjudged``,
``by_constraint_type``, ``by_structure``, ``by_k``, ``conflict`` and ``items`` (verdicts in each
item's constraint order). Conflict items are scored by the Conflict-30 diagnosis only: their
checklists are unsatisfiable by construction, so they stay out of IPR/CPR.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.verifiers.checklist import ChecklistEvaluator, ItemResult
from ifpo.verifiers.io import write_json_atomic
from ifpo.verifiers.metrics import checklist_report, conflict_metrics, vsysbench_metrics
from ifpo.verifiers.schema import ItemError, iter_jsonl, load_items


class InputError(ValueError):
    """Bad input files; the message lists every problem found."""


def normalize_prompt(prompt: Any) -> str | None:
    """A prompt as responses are matched to items: whitespace runs squashed, ends stripped.

    Response files shipped with the benchmarks repeat the prompt with whitespace changed (IFBench's
    differ from their inputs in trailing spaces and newlines), so exact matching drops them.
    """
    return " ".join(prompt.split()) if isinstance(prompt, str) else None


def load_ifeval_items(path: Path, *, strict: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """IFEval / IFBench records as items, and the problems found (``file:line: ...``).

    A record that cannot be read at all (broken JSON, a missing key/prompt) is reported and left
    out. An instruction ifpo cannot check (unknown id, kwargs outside its spec) is reported and
    kept in its item as ``unjudgeable``: it is scored as unjudged with the reason, in place.
    ``strict`` raises :class:`InputError` listing every problem instead.
    """
    from ifpo.verifiers.formats import ifeval_record_to_item
    from ifpo.verifiers.schema import Validator

    items, problems = [], []
    validator = Validator(path.parent, check_media=False)
    seen: set[str] = set()
    for lineno, record, parse_error in iter_jsonl(path):
        if parse_error:
            problems.append(str(ItemError(str(path), lineno, None, "", parse_error)))
            continue
        key = record.get("key") if isinstance(record, dict) else None
        try:
            item = ifeval_record_to_item(record, tolerant=True)
        except ValueError as exc:
            field, _, msg = str(exc).partition(": ")
            problems.append(str(ItemError(str(path), lineno, None if key is None else str(key), field, msg or str(exc))))
            continue
        where = str(ItemError(str(path), lineno, item["id"], "", "")).rstrip(": ")
        for u in item.get("unjudgeable", []):
            problems.append(f"{where} {u['reason']} (scored as unjudged)")
        checked = item if item["constraints"] else {**item, "constraints": [{"id": "-", "type": "-"}]}
        found = [(f, m) for f, m in validator.validate(checked) if not (checked is not item and f.startswith("constraints"))]
        if item["id"] in seen:
            found.append(("key", "duplicate key (record left out)"))
        seen.add(item["id"])
        problems += [str(ItemError(str(path), lineno, item["id"], f, m)) for f, m in found]
        if not found:
            item["_prompt"] = record["prompt"]
            items.append(item)
    if strict and problems:
        raise InputError("\n".join(problems))
    return items, problems


def load_responses(
    path: Path, items: Sequence[Mapping[str, Any]], fmt: str, *, strict: bool = False
) -> tuple[dict[str, str], list[str]]:
    """Map item id -> response, and the problems found (``file:line: ...``).

    A malformed line, an unknown id or (``--format ifeval``) a prompt that matches no item is
    reported and skipped; prompts match after whitespace normalisation (:func:`normalize_prompt`).
    A second response for the same item is reported; the last one is used, as IFEval's and
    IFBench's evaluation (a prompt -> response dict) use it. ``strict`` raises
    :class:`InputError` listing every problem instead.
    """
    by_prompt = {normalize_prompt(item.get("_prompt")): item["id"] for item in items} if fmt == "ifeval" else {}
    ids = {item["id"] for item in items}
    responses: dict[str, str] = {}
    problems: list[str] = []
    for lineno, rec, parse_error in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if parse_error:
            problems.append(f"{where}: {parse_error}")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}: expected an object with id and response")
            continue
        response = rec.get("response")
        if not isinstance(response, str):
            problems.append(f"{where}: response: expected a string, got {type(response).__name__}")
            continue
        item_id = rec.get("id", rec.get("key"))
        if item_id is None and fmt == "ifeval" and "prompt" in rec:
            item_id = by_prompt.get(normalize_prompt(rec["prompt"]))
            if item_id is None:
                problems.append(f"{where}: prompt: matches no item's prompt ({str(rec['prompt'])[:60]!r}); skipped")
                continue
        if item_id is None:
            problems.append(f"{where}: id: missing (expected the item id{' or the prompt' if fmt == 'ifeval' else ''})")
            continue
        item_id = str(item_id)
        if item_id not in ids:
            problems.append(f"{where}: id: {item_id!r} is not an item id of the items file; skipped")
            continue
        if item_id in responses:
            problems.append(f"{where}: id: second response for {item_id!r}; the last one is used")
        responses[item_id] = response
    if strict and problems:
        raise InputError("\n".join(problems))
    return responses, problems


def with_unjudgeable(result: ItemResult, item: Mapping[str, Any]) -> ItemResult:
    """``result`` with the item's unjudgeable instructions put back in place as unjudged verdicts."""
    from ifpo.verifiers.checklist import Verdict

    extra = item.get("unjudgeable") or []
    if not extra:
        return result
    verdicts = list(result.verdicts)
    for u in sorted(extra, key=lambda u: u["index"]):
        verdicts.insert(
            u["index"],
            Verdict(
                constraint_id=u["id"], type=u["type"], dimension="content", route="rule", passed=None,
                reason=f"not judged: ifpo cannot check it: {u['reason']}", error=u["reason"],
            ),
        )
    result.verdicts = verdicts
    return result


def vsysbench_records(results: Sequence[ItemResult], items: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """VSysBench per-instance scores for system-message items.

    c = share of the item's judged constraints that passed (the soft constraint score), p = the
    task gate (task score); instances of the same source sample (same media and user question,
    different system constraints) share ``sample``, which CCS groups by.
    """
    records = []
    for r in results:
        item = items.get(r.id)
        if not item or not item.get("system"):
            continue
        judged = [v.passed for v in r.verdicts if v.passed is not None]
        media = item.get("media") or {}
        sample = item.get("source_sample") or json.dumps(
            [sorted(media.get("images", []) or []), sorted(media.get("videos", []) or []), item["instruction"]])
        records.append({
            "sample": sample,
            "c": sum(judged) / len(judged) if judged else None,
            "p": None if r.task_gate is None else float(r.task_gate),
        })
    return records


def build_report(
    results: Sequence[ItemResult],
    *,
    missing: Sequence[str] = (),
    judge_stats: Any = None,
    items: Mapping[str, Mapping[str, Any]] | None = None,
    mode: str = "strict",
    input_problems: Sequence[str] = (),
) -> dict:
    """REPORT.json content from item results (metrics + per-item verdicts).

    ``items`` (id -> item) adds the VSysBench block (CSR/TA/JSR/CCS) for system-message items.
    """
    records = [r.to_dict() for r in results]
    if items is not None:
        for record in records:  # an item with no task has no gate to fail (t_i = 1)
            if (items.get(record["id"]) or {}).get("tasks") == []:
                record["tasks"] = []
    normal = [r for r in records if r["structure"] != "conflict"]
    report = checklist_report(normal)
    report["conflict"] = conflict_metrics([r["conflict"] for r in records if r.get("conflict")])
    if items is not None:
        report["vsysbench"] = vsysbench_metrics(vsysbench_records(results, items))
    report["mode"] = mode
    report["missing_responses"] = list(missing)
    report["n_missing"] = len(missing)
    report["input_problems"] = list(input_problems)
    if judge_stats is not None:
        report["judge"] = judge_stats
    report["items"] = [
        {
            "id": r["id"],
            "structure": r["structure"],
            "task_gate": r["task_gate"],
            **({"conflict": r["conflict"]} if r.get("conflict") else {}),
            "verdicts": [
                {k: v[k] for k in ("constraint_id", "type", "route", "passed", "reason", "dimension", "params_source")}
                for v in r["verdicts"]
            ],
        }
        for r in records
    ]
    return report


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def format_table(report: Mapping[str, Any]) -> str:
    """A readable terminal summary of a report."""
    un = report["unjudged"]
    lines = [
        f"mode {report.get('mode', 'strict')}  items {report['n_items']}  IPR {_pct(report['ipr'])}  CPR micro {_pct(report['cpr_micro'])}  "
        f"macro {_pct(report['cpr_macro'])}  TCSR {_pct(report['tcsr'])}  TISR {_pct(report['tisr'])}",
        f"near-miss {_pct(report['near_miss_rate'])}  violations/failed "
        f"{'-' if report['violations_per_failed'] is None else round(report['violations_per_failed'], 2)}  "
        f"unjudged: {un['constraints']} constraints, {un['items_undetermined']} items, {un['task_gates']} task gates",
        "dimension: " + "  ".join(f"{d} {_pct(v)}" for d, v in report["cpr_by_dimension"].items()),
        "",
    ]
    types = report["by_constraint_type"]
    width = max((len(t) for t in types), default=4)
    lines.append(f"{'constraint type':<{width}}  {'CPR':>6}  passed/judged  unjudged")
    for t, row in types.items():
        lines.append(f"{t:<{width}}  {_pct(row['cpr'])}  {row['passed']:>6}/{row['judged']:<6}  {row['unjudged']:>8}")
    conflict = report.get("conflict") or {}
    if conflict.get("n") or conflict.get("unjudged"):
        lines.append(
            f"\nconflict items {conflict['n']}: detected {_pct(conflict['detected'])} localized "
            f"{_pct(conflict['localized'])} strict {_pct(conflict['strict'])} blind {_pct(conflict['blind'])} "
            f"(unjudged {conflict['unjudged']})"
        )
    vsys = report.get("vsysbench") or {}
    if vsys.get("n") or vsys.get("unjudged"):
        lines.append(
            f"\nsystem-message items: {vsys['n']} scored, {vsys['unjudged']} without a judged task score; CSR {_pct(vsys['csr'])} TA {_pct(vsys['ta'])} JSR {_pct(vsys['jsr'])} "
            f"CCS {'-' if vsys['ccs'] is None else round(vsys['ccs'], 3)}"
        )
    if report.get("missing_responses"):
        lines.append(f"\n{len(report['missing_responses'])} item(s) had no response and were not scored (missing)")
    if report.get("input_problems"):
        lines.append(f"{len(report['input_problems'])} input problem(s) reported above (also in REPORT.json input_problems)")
    return "\n".join(lines)


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ifpo score", description=__doc__.splitlines()[0])
    parser.add_argument("--items", required=True, help="items JSONL (ifpo items, or IFEval records with --format ifeval)")
    parser.add_argument("--responses", required=True, help="responses JSONL: {id, response} (or IFEval {prompt, response})")
    parser.add_argument("--out", required=True, help="REPORT.json to write")
    parser.add_argument("--judge", help="judge YAML (keys of verifiers.judge.JudgeConfig); without it judge verdicts are unjudged")
    parser.add_argument("--format", choices=["ifpo", "ifeval"], default="ifpo",
                        help="items/responses format (ifeval: IFEval and IFBench records)")
    parser.add_argument("--mode", choices=["strict", "loose"], default="strict",
                        help="strict: rule checks see the response as given; loose: IFEval's loose definition "
                             "(a rule check also passes on the response without its first/last line or '*')")
    parser.add_argument("--strict", action="store_true",
                        help="refuse the input on any problem (unreadable record, instruction ifpo cannot "
                             "check, unmatched or extra response) instead of reporting it and going on")
    parser.add_argument("--root", help="dataset root for media paths (default: the items file's folder)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    items_path, responses_path = Path(args.items), Path(args.responses)
    from ifpo.verifiers.io import refuse_overwriting_inputs, require_input_file

    for p, what in ((items_path, "items file"), (responses_path, "responses file")):
        try:
            require_input_file(p, what)
        except ValueError as exc:
            print(f"ifpo score: {exc}", file=sys.stderr)
            return 2

    refuse_overwriting_inputs(args.out, {"--items file": items_path, "--responses file": responses_path,
                                         "--judge file": args.judge})
    try:
        problems: list[str] = []
        if args.format == "ifeval":
            items, problems = load_ifeval_items(items_path, strict=args.strict)
        else:
            loaded = load_items(items_path, root=args.root)
            if loaded.errors and (args.strict or not loaded.items):
                raise InputError("\n".join(str(e) for e in loaded.errors))
            # Bad item records are reported and counted; the valid ones are scored (--strict refuses).
            problems += [str(e) for e in loaded.errors]
            items = loaded.items
        if next(iter_jsonl(responses_path), None) is None:
            raise InputError(f"{responses_path}: no records (the file is empty or holds only blank lines)")
        responses, response_problems = load_responses(responses_path, items, args.format, strict=args.strict)
        problems += response_problems
    except (InputError, ValueError) as exc:  # nothing usable: exit 2 (docs/exit-codes.md)
        print(f"ifpo score: invalid input:\n{exc}", file=sys.stderr)
        return 2
    judge = None
    if args.judge:
        from ifpo.verifiers.judge import make_judge

        try:
            judge = make_judge(args.judge)
        except ValueError as exc:  # a bad judge YAML is a configuration error: exit 2 like every config
            print(f"ifpo score: error: {exc}", file=sys.stderr)
            return 2
    root = Path(args.root) if args.root else items_path.parent
    for problem in problems:
        print(f"ifpo score: {problem}", file=sys.stderr)
    evaluator = ChecklistEvaluator(judge, media_root=root, mode=args.mode)
    scored = [(item, responses[item["id"]]) for item in items if item["id"] in responses]
    missing = [item["id"] for item in items if item["id"] not in responses]
    results = evaluator.evaluate_many(scored, progress=not args.no_progress)
    results = [with_unjudgeable(r, item) for r, (item, _) in zip(results, scored)]
    report = build_report(results, missing=missing, judge_stats=judge.stats.as_dict() if judge else None,
                          items={item["id"]: item for item in items}, mode=args.mode, input_problems=problems)
    write_json_atomic(Path(args.out), report)
    print(format_table(report))
    print(f"\nwrote {args.out}")
    # docs/exit-codes.md: 1 when the report leaves input out (records skipped, unmatched responses, items
    # without a response, verdicts a failed judge request or unusable media left unjudged), each named above.
    incomplete = bool(problems or missing)
    if judge is not None and judge.stats.summary():
        # Loud, at the end where it is seen: failed judge calls are unjudged verdicts, not a quiet report field.
        print(f"ifpo score: {judge.stats.summary()}", file=sys.stderr)
        if judge.stats.all_failed:
            print("ifpo score: every judge request failed", file=sys.stderr)
        incomplete = True
    if incomplete:
        print(f"ifpo score: exit 1: not all input was scored ({len(problems)} input problem(s), {len(missing)} item(s) "
              "without a response); see above and REPORT.json", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
