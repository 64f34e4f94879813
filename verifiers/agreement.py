"""``ifpo judge-agreement``: how well judge verdicts agree with human labels (VCIFBench Table 8).

    ifpo judge-agreement --labels LABELS.jsonl --report REPORT.json [--out AGREEMENT.json]

LABELS.jsonl lines name one constraint instance and its human label(s)::

    {"id": "item-1", "constraint_id": "c2", "label": true}
    {"id": "item-1", "constraint_id": "c3", "labels": [true, true, false]}       # several annotators

REPORT.json is what ``ifpo score`` wrote. The human reference is the majority vote; ties are left
out and counted. Reported, overall and per constraint type: n, agreement, Cohen's kappa, Gwet's
AC1 and PABAK between judge and human majority; Fleiss' kappa among the human annotators (on the
instances that have the most common number of annotators), and their complete agreement.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ifpo.verifiers.judge import coerce_bool
from ifpo.verifiers.schema import iter_jsonl


def pairwise(a: Sequence[bool], b: Sequence[bool]) -> dict[str, float | int | None]:
    """Agreement, Cohen's kappa, Gwet's AC1 and PABAK for two binary raters."""
    n = len(a)
    if n == 0 or n != len(b):
        return {"n": n, "agreement": None, "kappa": None, "ac1": None, "pabak": None}
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    pi = (pa + pb) / 2
    pe_gwet = 2 * pi * (1 - pi)
    return {
        "n": n,
        "agreement": po,
        # With one category only, chance agreement is 1 and kappa is undefined.
        "kappa": (po - pe) / (1 - pe) if pe < 1 else None,
        "ac1": (po - pe_gwet) / (1 - pe_gwet) if pe_gwet < 1 else None,
        "pabak": 2 * po - 1,
    }


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' kappa for binary ratings; every subject must have the same number (>= 2) of raters."""
    if not ratings:
        return None
    m = len(ratings[0])
    if m < 2 or any(len(r) != m for r in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per instance")
    n = len(ratings)
    p_bar = 0.0
    yes_total = 0
    for r in ratings:
        yes = sum(r)
        no = m - yes
        yes_total += yes
        p_bar += (yes * yes + no * no - m) / (m * (m - 1))
    p_bar /= n
    p_yes = yes_total / (n * m)
    pe = p_yes**2 + (1 - p_yes) ** 2
    return (p_bar - pe) / (1 - pe) if pe < 1 else None


def load_labels(path: Path) -> dict[tuple[str, str], list[bool]]:
    labels: dict[tuple[str, str], list[bool]] = defaultdict(list)
    errors = []
    for lineno, rec, parse_error in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if parse_error:
            errors.append(f"{where}: {parse_error}")
            continue
        if not isinstance(rec, dict) or "id" not in rec or "constraint_id" not in rec:
            errors.append(f"{where}: expected {{id, constraint_id, label | labels}}")
            continue
        raw = rec.get("labels", [rec["label"]] if "label" in rec else None)
        if not isinstance(raw, list) or not raw:
            errors.append(f"{where}: label/labels: expected a boolean or a non-empty array of booleans")
            continue
        try:
            labels[(str(rec["id"]), str(rec["constraint_id"]))] += [coerce_bool(x) for x in raw]
        except ValueError as exc:
            errors.append(f"{where}: labels: {exc}")
    if errors:
        raise ValueError("\n".join(errors))
    if not labels:
        raise ValueError(f"{path}: no records (the file is empty or holds only blank lines)")
    return labels


def report_verdicts_problem(report: Any) -> str | None:
    """Why ``report`` is not an ``ifpo score`` report whose verdicts can be read (``None``: it is), by field."""
    if not isinstance(report, dict):
        return f"expected a JSON object (an ifpo score report), got {type(report).__name__}"
    items = report.get("items")
    if not isinstance(items, list):
        return f"items: expected a list of {{id, verdicts}}, got {type(items).__name__}"
    for n, it in enumerate(items):
        if not isinstance(it, dict) or not isinstance(it.get("verdicts"), list) or "id" not in it:
            return f"items[{n}]: expected an object with id and verdicts (a list)"
        for k, v in enumerate(it["verdicts"]):
            if not (isinstance(v, dict) and "constraint_id" in v and v.get("passed", 0) in (True, False, None)
                    and isinstance(v.get("type"), str)):
                return f"items[{n}].verdicts[{k}]: expected an object with constraint_id, type and passed"
    return None


def agreement_report(labels: dict[tuple[str, str], list[bool]], report: dict[str, Any]) -> dict[str, Any]:
    verdicts = {(str(i["id"]), str(v["constraint_id"])): v for i in report.get("items", []) for v in i["verdicts"]}
    counts = Counter()
    judge_votes: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for key, human in labels.items():
        v = verdicts.get(key)
        if v is None:
            counts["not_in_report"] += 1
            continue
        if v["passed"] is None:
            counts["unjudged"] += 1
            continue
        yes = sum(human)
        if 2 * yes == len(human):
            counts["human_ties"] += 1
            continue
        pair = (bool(v["passed"]), 2 * yes > len(human))
        judge_votes["__all__"].append(pair)
        judge_votes[v["type"]].append(pair)
    overall = pairwise([j for j, _ in judge_votes["__all__"]], [h for _, h in judge_votes["__all__"]])
    by_type = {
        t: pairwise([j for j, _ in pairs], [h for _, h in pairs]) for t, pairs in sorted(judge_votes.items()) if t != "__all__"
    }
    multi = [r for r in labels.values() if len(r) >= 2]
    humans: dict[str, Any] = {"instances": len(multi)}
    if multi:
        modal = Counter(len(r) for r in multi).most_common(1)[0][0]
        same = [r for r in multi if len(r) == modal]
        humans.update(
            annotators=modal,
            fleiss_kappa=fleiss_kappa(same),
            complete_agreement=sum(1 for r in same if len(set(r)) == 1) / len(same),
            instances_used=len(same),
        )
    return {"judge_vs_human": overall, "by_constraint_type": by_type, "human_annotators": humans,
            "excluded": dict(counts)}


def _fmt(x: Any, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.2f}" if pct else f"{x:.4f}"


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ifpo judge-agreement", description=__doc__.splitlines()[0])
    parser.add_argument("--labels", required=True, help="human labels JSONL")
    parser.add_argument("--report", required=True, help="REPORT.json written by ifpo score")
    parser.add_argument("--out", help="write the agreement report as JSON here")
    args = parser.parse_args(argv)
    if args.out:
        from ifpo.verifiers.io import refuse_overwriting_inputs

        refuse_overwriting_inputs(args.out, {"--labels file": args.labels, "--report file": args.report})
    try:
        labels = load_labels(Path(args.labels))
        from ifpo.verifiers.io import read_json_file

        report = read_json_file(args.report, "report")
        problem = report_verdicts_problem(report)
        if problem:
            raise ValueError(f"{args.report}: {problem}")
    except FileNotFoundError as exc:
        print(f"ifpo judge-agreement: file not found: {exc.filename}", file=sys.stderr)
        return 2
    except ValueError as exc:  # nothing usable: exit 2 (docs/exit-codes.md)
        print(f"ifpo judge-agreement: invalid input:\n{exc}", file=sys.stderr)
        return 2
    result = agreement_report(labels, report)
    rows = [("judge vs. human", result["judge_vs_human"])] + list(result["by_constraint_type"].items())
    width = max(len(name) for name, _ in rows)
    print(f"{'comparison':<{width}}  {'n':>5}  {'agreement':>9}  {'kappa':>7}  {'AC1':>7}  {'PABAK':>7}")
    for name, m in rows:
        print(f"{name:<{width}}  {m['n']:>5}  {_fmt(m['agreement'], True):>9}  {_fmt(m['kappa']):>7}  "
              f"{_fmt(m['ac1']):>7}  {_fmt(m['pabak']):>7}")
    h = result["human_annotators"]
    if h.get("fleiss_kappa") is not None or h.get("annotators"):
        print(f"\nhuman annotators: {h['annotators']} per instance on {h['instances_used']} instances, "
              f"complete agreement {_fmt(h['complete_agreement'], True)}%, Fleiss' kappa {_fmt(h['fleiss_kappa'])}")
    if result["excluded"]:
        print("excluded: " + ", ".join(f"{k} {v}" for k, v in result["excluded"].items()))
    if args.out:
        from ifpo.verifiers.io import write_json_atomic

        write_json_atomic(Path(args.out), result)
        print(f"wrote {args.out}")
    # docs/exit-codes.md: labels the report cannot answer (no such verdict, or unjudged) are input left out: 1.
    # Ties between annotators are excluded by the metric's definition, not for want of input.
    left_out = {k: v for k, v in result["excluded"].items() if k in ("not_in_report", "unjudged") and v}
    if left_out:
        print("ifpo judge-agreement: exit 1: label(s) left out: " + ", ".join(f"{k} {v}" for k, v in left_out.items()),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
