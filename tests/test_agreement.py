"""Judge-human agreement statistics against hand-computed values (VCIFBench Table 8)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ifpo.verifiers.agreement import agreement_report, fleiss_kappa, pairwise

T, F = True, False


def test_pairwise_hand_computed():
    judge = [T, T, F, F, T, T, T, F, T, T]
    human = [T, F, F, F, T, T, T, T, T, T]
    m = pairwise(judge, human)
    assert m["n"] == 10
    assert m["agreement"] == pytest.approx(0.8)
    # both raters say yes 7 times of 10: pe = .7*.7 + .3*.3 = .58
    assert m["kappa"] == pytest.approx((0.8 - 0.58) / 0.42)
    assert m["ac1"] == pytest.approx((0.8 - 0.42) / 0.58)  # pi = .7, pe = 2*.7*.3
    assert m["pabak"] == pytest.approx(0.6)


def test_pabak_matches_vcifbench_table8():
    # GPT-5 vs human: 560 of 630 agree (88.89%) -> PABAK 0.7778
    judge = [T] * 630
    human = [T] * 560 + [F] * 70
    assert pairwise(judge, human)["pabak"] == pytest.approx(0.7778, abs=1e-4)


def test_fleiss_kappa_hand_computed():
    assert fleiss_kappa([[T, T, T], [T, T, F], [F, F, F], [T, F, F]]) == pytest.approx(1 / 3)
    assert fleiss_kappa([[T, T], [F, F]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[T, T], [T, T, F]])


def test_degenerate_single_category_has_no_kappa():
    m = pairwise([T, T], [T, T])
    assert m["agreement"] == 1.0 and m["kappa"] is None and m["pabak"] == 1.0


def _report():
    return {"items": [
        {"id": "a", "verdicts": [{"constraint_id": "c1", "type": "tone", "passed": True},
                                 {"constraint_id": "c2", "type": "word_count", "passed": False}]},
        {"id": "b", "verdicts": [{"constraint_id": "c1", "type": "tone", "passed": None},
                                 {"constraint_id": "c2", "type": "word_count", "passed": True}]},
    ]}


def test_report_majority_ties_unjudged_and_missing_are_excluded():
    labels = {
        ("a", "c1"): [T, T, F],  # majority T, judge T
        ("a", "c2"): [T, T, T],  # majority T, judge F
        ("b", "c1"): [T, T, T],  # judge unjudged
        ("b", "c2"): [T, F],  # tie
        ("z", "c9"): [T, T, T],  # not in report
    }
    r = agreement_report(labels, _report())
    assert r["judge_vs_human"]["n"] == 2 and r["judge_vs_human"]["agreement"] == 0.5
    assert r["by_constraint_type"]["tone"]["agreement"] == 1.0
    assert r["excluded"] == {"unjudged": 1, "human_ties": 1, "not_in_report": 1}
    assert r["human_annotators"]["annotators"] == 3 and r["human_annotators"]["instances_used"] == 4


def test_cli(tmp_path):
    (tmp_path / "report.json").write_text(json.dumps(_report()))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "constraint_id": "c1", "labels": [True, True, False]},
        {"id": "a", "constraint_id": "c2", "label": "no"},
    ]) + "\n")
    out = tmp_path / "agreement.json"
    cmd = [sys.executable, "-m", "ifpo.cli", "judge-agreement", "--labels", str(labels),
           "--report", str(tmp_path / "report.json"), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "judge vs. human" in proc.stdout and json.loads(out.read_text())["judge_vs_human"]["n"] == 2
    labels.write_text('{"id": "a", "constraint_id": "c1", "label": "maybe"}\n')
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and f"{labels}:1: labels:" in proc.stderr and "Traceback" not in proc.stderr
