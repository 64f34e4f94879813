"""Metric formulas against hand-computed values (docs/DESIGN.md, "Metrics")."""

from __future__ import annotations

import pytest
from ifpo.verifiers.metrics import (
    checklist_report,
    conflict_metrics,
    item_outcome,
    option_order_metrics,
    task_gated_metrics,
    vsysbench_metrics,
)


def v(passed, type_="word_count", dim="format"):
    return {"constraint_id": "c", "type": type_, "dimension": dim, "route": "rule", "passed": passed}


def item(verdicts, gate=True, structure="single", id_="i"):
    return {"id": id_, "structure": structure, "task_gate": gate, "verdicts": verdicts}


@pytest.mark.parametrize(
    "values,expected",
    [([True, True], True), ([True, False], False), ([True, None], None), ([False, None], False), ([], True)],
)
def test_item_outcome_truth_table(values, expected):
    assert item_outcome([v(p) for p in values]) is expected


def test_tcsr_tisr_worked_example():
    # A: task done, 3 of 4 constraints -> TCSR term 0.75, TISR 0
    # B: task missed, all constraints pass -> both terms 0 (the gate zeroes them)
    # C: task done, all pass -> 1 and 1
    items = [
        item([v(True), v(True), v(False), v(True)]),
        item([v(True), v(True)], gate=False),
        item([v(True), v(True)]),
    ]
    m = task_gated_metrics(items)
    assert m["tcsr"] == pytest.approx((0.75 + 0 + 1) / 3)
    assert m["tisr"] == pytest.approx(1 / 3)


def test_task_gate_unjudged_is_left_out_and_counted():
    m = task_gated_metrics([item([v(True)], gate=None), item([v(True), v(False)])])
    assert m["task_gate_unjudged"] == 1
    assert m["tcsr"] == pytest.approx(0.5)
    assert m["tisr"] == 0.0


def test_checklist_report_hand_computed():
    items = [
        item([v(True, "word_count"), v(True, "json"), v(False, "tone", "style")], id_="a"),  # 1 violation
        item([v(False, "word_count"), v(False, "json")], id_="b"),  # 2 violations
        item([v(True, "word_count"), v(True, "tone", "style")], id_="c"),  # pass
        item([v(True, "word_count"), v(None, "tone", "style")], id_="d"),  # undetermined
    ]
    r = checklist_report(items)
    assert r["ipr"] == pytest.approx(1 / 3)  # c passes; a, b fail; d undetermined
    assert r["near_miss_rate"] == pytest.approx(1 / 2)  # a has exactly one violation
    assert r["violations_per_failed"] == pytest.approx(3 / 2)
    # micro: passed 5 of 8 judged (d's unjudged tone is out of the denominator)
    assert r["cpr_micro"] == pytest.approx(5 / 8)
    # macro: word_count 3/4, json 1/2, tone 1/2 -> mean
    assert r["cpr_macro"] == pytest.approx((3 / 4 + 1 / 2 + 1 / 2) / 3)
    assert r["cpr_by_dimension"] == {"format": pytest.approx(4 / 6), "style": pytest.approx(1 / 2)}
    assert r["by_constraint_type"]["tone"] == {"cpr": 0.5, "passed": 1, "judged": 2, "unjudged": 1}
    assert r["unjudged"] == {"constraints": 1, "items_undetermined": 1, "task_gates": 0}
    assert r["by_k"] == {"2": {"ipr": 0.5, "items": 2}, "3": {"ipr": 0.0, "items": 1}}


def test_vsysbench_metrics_hand_computed():
    records = [
        {"sample": "s1", "c": 0.9, "p": 1.0},
        {"sample": "s1", "c": 0.5, "p": 0.0},
        {"sample": "s2", "c": 0.8, "p": 1.0},
        {"sample": "s2", "c": 1.0, "p": 1.0},
        {"sample": "s2", "c": 0.79, "p": 1.0},
        {"sample": "s3", "c": None, "p": 1.0},
    ]
    m = vsysbench_metrics(records)
    assert m["csr"] == pytest.approx(3 / 5)  # 0.9, 0.8, 1.0 reach tau = 0.8
    assert m["ta"] == pytest.approx(4 / 5)
    assert m["jsr"] == pytest.approx(3 / 5)  # compliant ones all have p = 1
    # s1: std of {1, 0} = 0.5; s2: std of {1, 1, 1} = 0  -> CCS = 2/2 * 0.5
    assert m["ccs"] == pytest.approx(0.5)
    assert m["unjudged"] == 1


def test_conflict_metrics():
    records = [
        {"detected": True, "localized": True, "answered": False},  # strict
        {"detected": True, "localized": False, "answered": False},  # detected only
        {"detected": True, "localized": True, "answered": True},  # localized but answered anyway
        {"detected": False, "localized": False, "answered": True},  # blind
        {"detected": None, "localized": None, "answered": None},
    ]
    m = conflict_metrics(records)
    assert m == {"detected": 0.75, "localized": 0.5, "strict": 0.25, "blind": 0.25, "n": 4, "unjudged": 1}


def test_option_order_metrics():
    m = option_order_metrics([(True, True), (True, False), (False, False), (None, True)])
    assert m == {"both_correct": pytest.approx(1 / 3), "either_correct": pytest.approx(2 / 3), "n": 3, "unjudged": 1}


def test_items_with_no_task_have_t_equal_one():
    """An empty ``tasks`` list (IFEval, IFBench): t_i = 1 even with an unjudged gate, and no gate is
    counted as unjudged; an item that has tasks and an unjudged gate is still left out."""
    from ifpo.verifiers.metrics import task_gated_metrics

    no_task = {"tasks": [], "task_gate": None, "verdicts": [{"passed": True}, {"passed": False}]}
    gated = {"task_gate": None, "verdicts": [{"passed": True}]}
    m = task_gated_metrics([no_task, gated])
    assert m["tcsr"] == 0.5 and m["tisr"] == 0.0 and m["task_gate_unjudged"] == 1
    m = task_gated_metrics([no_task])
    assert m["task_gate_unjudged"] == 0 and m["tcsr"] == 0.5
