"""Benchmark metrics, exactly as docs/DESIGN.md, "Metrics", defines them (from VCIFBench, Video-IFBench, VSysBench).

Inputs are plain records so that every caller (``ifpo score``, RL rewards, checkpoint evaluation)
computes a metric the same way:

- item results: ``{"id", "structure", "task_gate": bool | None,
  "verdicts": [{"constraint_id", "type", "dimension", "route", "passed": bool | None}]}``

Unjudged verdicts (``passed is None``) are never a pass or a fail: they leave the denominators
and are counted under ``unjudged`` beside every rate. An item whose verdicts are all passes except
some unjudged ones is *undetermined* for IPR/TISR (it could go either way) and is counted as such.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

TAU = 0.8  # VSysBench's compliance threshold on the judge's soft constraint score


def _rate(num: float, den: int) -> float | None:
    return num / den if den else None


def item_outcome(verdicts: Sequence[Mapping[str, Any]]) -> bool | None:
    """True if every constraint passed, False if any failed, None if undetermined (unjudged)."""
    values = [v["passed"] for v in verdicts]
    if any(p is False for p in values):
        return False
    if any(p is None for p in values):
        return None
    return True


def constraint_metrics(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """CPR micro / macro / per dimension / per type, with unjudged counts.

    CPR micro = passed / judged constraint instances; CPR macro = mean over constraint types of
    each type's CPR (types with no judged instance are left out of the mean).
    """
    passed = judged = unjudged = 0
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # passed, judged, unjudged
    by_dim: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in items:
        for v in item["verdicts"]:
            keys = (by_type[v["type"]], by_dim[v.get("dimension", "unknown")])
            if v["passed"] is None:
                unjudged += 1
                for k in keys:
                    k[2] += 1
                continue
            judged += 1
            passed += bool(v["passed"])
            for k in keys:
                k[0] += bool(v["passed"])
                k[1] += 1
    type_rates = {t: _rate(p, j) for t, (p, j, _) in sorted(by_type.items())}
    judged_rates = [r for r in type_rates.values() if r is not None]
    return {
        "cpr_micro": _rate(passed, judged),
        "cpr_macro": sum(judged_rates) / len(judged_rates) if judged_rates else None,
        "cpr_by_dimension": {d: _rate(p, j) for d, (p, j, _) in sorted(by_dim.items())},
        "by_constraint_type": {
            t: {"cpr": _rate(p, j), "passed": p, "judged": j, "unjudged": u} for t, (p, j, u) in sorted(by_type.items())
        },
        "constraints_judged": judged,
        "constraints_unjudged": unjudged,
    }


def instruction_metrics(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """IPR, near-miss rate, violations per failed instruction, IPR by constraint count k."""
    ok = failed = undetermined = near_miss = violations = 0
    by_k: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # passed, decided
    for item in items:
        outcome = item_outcome(item["verdicts"])
        k = len(item["verdicts"])
        if outcome is None:
            undetermined += 1
            continue
        by_k[k][1] += 1
        if outcome:
            ok += 1
            by_k[k][0] += 1
        else:
            failed += 1
            n_viol = sum(1 for v in item["verdicts"] if v["passed"] is False)
            violations += n_viol
            near_miss += n_viol == 1
    return {
        "ipr": _rate(ok, ok + failed),
        "near_miss_rate": _rate(near_miss, failed),
        "violations_per_failed": _rate(violations, failed),
        "by_k": {str(k): {"ipr": _rate(p, d), "items": d} for k, (p, d) in sorted(by_k.items())},
        "items_passed": ok,
        "items_failed": failed,
        "items_undetermined": undetermined,
    }


def task_gated_metrics(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Video-IFBench's TCSR = mean_i t_i * (passed_i / n_i) and TISR = mean_i t_i * prod_j c_ij.

    Items with an unjudged task gate are left out (counted); within an item, unjudged constraints
    leave n_i for TCSR, and make TISR undetermined unless another constraint failed (product 0).
    Items without a task gate (``task_gate`` absent) count as t_i = 1, and so do items whose
    ``tasks`` list is empty (IFEval, IFBench: there is no task to fail), whatever their
    ``task_gate`` says; they are never counted as unjudged gates.
    """
    tcsr_terms: list[float] = []
    tisr_terms: list[float] = []
    gate_unjudged = 0
    for item in items:
        gate = True if item.get("tasks") == [] else item.get("task_gate", True)
        if gate is None:
            gate_unjudged += 1
            continue
        t = 1.0 if gate else 0.0
        judged = [v["passed"] for v in item["verdicts"] if v["passed"] is not None]
        if judged:
            tcsr_terms.append(t * sum(judged) / len(judged))
        elif not item["verdicts"]:
            tcsr_terms.append(t)
        outcome = item_outcome(item["verdicts"])
        if outcome is not None or t == 0.0:
            tisr_terms.append(t * (1.0 if outcome else 0.0))
    return {
        "tcsr": sum(tcsr_terms) / len(tcsr_terms) if tcsr_terms else None,
        "tisr": sum(tisr_terms) / len(tisr_terms) if tisr_terms else None,
        "task_gate_unjudged": gate_unjudged,
    }


def checklist_report(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """All checklist metrics under the stable keys of ``ifpo score``'s REPORT.json."""
    items = list(items)
    report: dict[str, Any] = {"n_items": len(items)}
    report.update(instruction_metrics(items))
    report.update(constraint_metrics(items))
    report.update(task_gated_metrics(items))
    report["unjudged"] = {
        "constraints": report["constraints_unjudged"],
        "items_undetermined": report["items_undetermined"],
        "task_gates": report["task_gate_unjudged"],
    }
    by_structure: dict[str, list] = defaultdict(list)
    for item in items:
        by_structure[item.get("structure", "unknown")].append(item)
    report["by_structure"] = {
        s: {
            "n_items": len(group),
            "ipr": instruction_metrics(group)["ipr"],
            "cpr_micro": constraint_metrics(group)["cpr_micro"],
            **task_gated_metrics(group),
        }
        for s, group in sorted(by_structure.items())
    }
    return report


# --- VSysBench --------------------------------------------------------------------------------


def vsysbench_metrics(records: Sequence[Mapping[str, Any]], tau: float = TAU) -> dict[str, Any]:
    """CSR, TA, JSR and CCS over ``{"sample": source id, "c": soft constraint score, "p": task score}``.

    CSR = share with c >= tau; TA = mean p; JSR = mean 1[c >= tau] * p;
    CCS = 2/|S| * sum_s std_s(p), the population std of p over the constraints applied to the same
    source sample (the factor 2 maps the maximum std 0.5 to 1). Records with c or p None are
    left out and counted.
    """
    scored = [r for r in records if r.get("c") is not None and r.get("p") is not None]
    unjudged = len(records) - len(scored)
    n = len(scored)
    groups: dict[Any, list[float]] = defaultdict(list)
    for r in scored:
        groups[r["sample"]].append(float(r["p"]))
    stds = []
    for ps in groups.values():
        mean = sum(ps) / len(ps)
        stds.append(math.sqrt(sum((p - mean) ** 2 for p in ps) / len(ps)))
    return {
        "csr": _rate(sum(1 for r in scored if r["c"] >= tau), n),
        "ta": _rate(sum(float(r["p"]) for r in scored), n),
        "jsr": _rate(sum(float(r["p"]) for r in scored if r["c"] >= tau), n),
        "ccs": 2 * sum(stds) / len(stds) if stds else None,
        "n": n,
        "unjudged": unjudged,
    }


# --- Conflict-30 and option order ---------------------------------------------------------------


def conflict_metrics(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """VCIFBench Conflict-30 rates over ``{"detected", "localized", "answered"}`` booleans.

    Detected: the response says the instruction cannot be satisfied as stated. Localized: it names
    the conflicting requirements (implies detected). Strict: localized and no ordinary answer.
    Blind: not detected and an ordinary answer given (blind compliance). A record with any None
    field is unjudged.
    """
    keys = ("detected", "localized", "answered")
    judged = [r for r in records if all(r.get(k) is not None for k in keys)]
    n = len(judged)
    return {
        "detected": _rate(sum(1 for r in judged if r["detected"]), n),
        "localized": _rate(sum(1 for r in judged if r["detected"] and r["localized"]), n),
        "strict": _rate(sum(1 for r in judged if r["detected"] and r["localized"] and not r["answered"]), n),
        "blind": _rate(sum(1 for r in judged if not r["detected"] and r["answered"]), n),
        "n": n,
        "unjudged": len(records) - n,
    }


def option_order_metrics(pairs: Sequence[tuple[bool | None, bool | None]]) -> dict[str, Any]:
    """Both-correct and either-correct rates over (original, swapped) selection pairs."""
    judged = [(a, b) for a, b in pairs if a is not None and b is not None]
    n = len(judged)
    return {
        "both_correct": _rate(sum(1 for a, b in judged if a and b), n),
        "either_correct": _rate(sum(1 for a, b in judged if a or b), n),
        "n": n,
        "unjudged": len(pairs) - n,
    }
