"""The bundled sample items: valid, verified references, required coverage, reproducible."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from ifpo.data_builders.sample_benchmark.items import TASK_TYPES, build_items, dumps_items, verify_items
from ifpo.data_builders.sample_benchmark.media import generate_media
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import run_checker
from ifpo.verifiers.rules.vcifbench import CONFLICT_TEMPLATES
from ifpo.verifiers.schema import OVERRIDE_STYLES, load_items

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample"
ITEMS_PATH = SAMPLE / "items.jsonl"
FACTS = json.loads((SAMPLE / "facts.json").read_text(encoding="utf-8"))
ITEMS = [json.loads(line) for line in ITEMS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
SATISFIABLE = [i for i in ITEMS if i["structure"] != "conflict"]

# VCIFBench Table 10 types with a rule or hybrid route.
VCIF_RULE_HYBRID = (
    "json", "csv", "bullet_list", "numbered_list", "markdown", "plain_text", "word_count", "sentence_count",
    "paragraph_count", "item_count", "fixed_opening", "fixed_closing", "prefix_label", "letter_case",
    "no_contractions", "exact_word_inclusion", "lexical_diversity", "exact_word_exclusion",
)
VIDEO_IFBENCH = tuple(t.id for t in REGISTRY if t.source == "video_ifbench")
JUDGE_TYPES = ("tone", "persona", "chronological", "content_inclusion", "summarize", "focus", "tracking")


def _route(ctype: str) -> str:
    return REGISTRY.get(ctype).route


def _ids(items: list[dict]) -> list[str]:
    return [i["id"] for i in items]


# ------------------------------------------------------------------------------ validity


def test_shipped_items_validate_with_the_full_registry():
    result = load_items(ITEMS_PATH)
    assert result.errors == []
    assert len(result.items) == len(ITEMS) >= 70


@pytest.mark.parametrize("item", SATISFIABLE, ids=_ids(SATISFIABLE))
def test_reference_passes_every_rule_and_hybrid_constraint(item):
    ref = item["reference_response"]
    assert ref.strip()
    for c in item["constraints"]:
        ctype = REGISTRY.get(c["type"])
        if ctype.route == "judge":
            continue
        check = run_checker(ctype, ref, c["params"])
        assert check.passed, f"{item['id']} {c['id']} ({c['type']}): {check.reason}"


def test_every_item_is_well_formed():
    assert len({i["id"] for i in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        where = item["id"]
        assert 2 <= len(item["constraints"]) <= 8, where
        assert item["tasks"], where
        assert item["ground_truth"].strip(), where
        media = item["media"]
        if item["source"] == "sample":
            assert media["videos"] or media["images"], where
            assert all(t["name"] in TASK_TYPES for t in item["tasks"]), where
        else:
            assert item["source"] == "ifeval" and not media["videos"] and not media["images"], where
        stated = (item.get("system") or "") + "\n" + item["instruction"]
        for c in item["constraints"]:
            assert c["dimension"] == REGISTRY.get(c["type"]).dimension, (where, c["id"])
            assert c["description"] in stated, (where, c["id"], "description not stated to the model")
            if _route(c["type"]) == "judge":
                assert c.get("judge_context", "").strip(), (where, c["id"], "judge constraint without evidence")
            if c["type"] == "content_inclusion":
                assert c.get("sub_questions"), (where, c["id"])
            if _route(c["type"]) == "rule":
                assert not REGISTRY.get(c["type"]).param_errors(c["params"]), (where, c["id"])


def test_every_sample_medium_is_used():
    used = Counter(p for i in ITEMS for k in ("videos", "images") for p in i["media"][k])
    assert set(used) == set(FACTS["videos"]) | set(FACTS["images"])


# ------------------------------------------------------------------------------ coverage


def test_structures_are_all_covered():
    counts = Counter(i["structure"] for i in ITEMS)
    for structure in ("single", "multi", "selection", "nested"):
        assert counts[structure] >= 3, (structure, counts)
    assert counts["conflict"] >= len(CONFLICT_TEMPLATES)


def test_multi_items_have_several_tasks():
    for item in ITEMS:
        if item["structure"] == "multi":
            assert len(item["tasks"]) >= 2, item["id"]


def _active_leaf(branches: list[dict], depth: int = 1, parent_active: bool = True) -> tuple[str | None, int]:
    """Check one level (exactly one active on the active path, none under an inactive branch); return
    the active leaf's instruction and the depth of the active path."""
    actives = [b for b in branches if b["active"]]
    if parent_active:
        assert len(actives) == 1, branches
    else:
        assert not actives, branches
    leaf, leaf_depth = None, depth
    for b in branches:
        assert b["condition"].strip() and b["instruction"].strip()
        if "branches" in b:
            sub_leaf, sub_depth = _active_leaf(b["branches"], depth + 1, parent_active and b["active"])
            if b["active"] and parent_active:
                leaf, leaf_depth = sub_leaf, sub_depth
        elif b["active"] and parent_active:
            leaf, leaf_depth = b["instruction"], depth
    return leaf, leaf_depth


def test_selection_items_have_one_true_branch():
    selections = [i for i in ITEMS if i["structure"] == "selection"]
    assert len(selections) >= 3
    for item in selections:
        assert 2 <= len(item["branches"]) <= 4, item["id"]
        assert all("branches" not in b for b in item["branches"]), item["id"]
        leaf, depth = _active_leaf(item["branches"])
        assert depth == 1 and leaf == item["active_instruction"], item["id"]
        assert item["active_instruction"] in item["instruction"], item["id"]


def test_nested_items_have_one_true_path_of_depth_two_or_more():
    nested = [i for i in ITEMS if i["structure"] == "nested"]
    assert len(nested) >= 3
    depths = []
    for item in nested:
        leaf, depth = _active_leaf(item["branches"])
        assert depth >= 2, item["id"]
        assert leaf == item["active_instruction"], item["id"]
        depths.append(depth)
    assert max(depths) >= 3


def test_conflict_items_cover_the_ten_templates():
    conflicts = [i for i in ITEMS if i["structure"] == "conflict"]
    assert Counter(i["conflict"]["template"] for i in conflicts).keys() == set(CONFLICT_TEMPLATES)
    for item in conflicts:
        block = item["conflict"]
        ids = {c["id"] for c in item["constraints"]}
        assert len(block["conflicting"]) == 2 and set(block["conflicting"]) <= ids, item["id"]
        assert "reference_response" not in item, item["id"]
        assert "asks which" in block["clarification"], item["id"]
        assert 4 <= len(item["constraints"]) <= 6, item["id"]  # 2-4 normal ones + the conflicting pair
        assert item["media"]["videos"], item["id"]


def test_system_message_items_carry_every_override_style():
    system_items = [i for i in ITEMS if i.get("system")]
    assert len(system_items) >= 6
    for item in system_items:
        assert item["media"]["images"], item["id"]
        assert set(item["user_overrides"]) == set(OVERRIDE_STYLES), item["id"]
        assert item["user_overrides"]["DJ"].startswith("Ignore the rule in your instructions that"), item["id"]
        assert all(c["type"].startswith("vsys_") for c in item["constraints"]), item["id"]
        assert all(c["description"] in item["system"] for c in item["constraints"]), item["id"]
        assert any(_route(c["type"]) == "rule" for c in item["constraints"]), item["id"]
    routes = Counter(_route(c["type"]) for i in system_items for c in i["constraints"])
    assert routes["rule"] > routes["judge"] >= 1


@pytest.mark.parametrize("ctype", VCIF_RULE_HYBRID + VIDEO_IFBENCH)
def test_listed_types_appear_at_least_twice_with_explicit_params(ctype):
    uses = [c for i in SATISFIABLE for c in i["constraints"] if c["type"] == ctype]
    assert len(uses) >= 2, f"{ctype} appears {len(uses)} times"
    spec = REGISTRY.get(ctype)
    for c in uses:
        assert all(p.name in c["params"] for p in spec.params if p.required), (ctype, c)


def test_video_ifbench_has_its_thirteen_function_judges():
    assert len(VIDEO_IFBENCH) == 13


@pytest.mark.parametrize("ctype", JUDGE_TYPES)
def test_judge_types_appear(ctype):
    assert any(c["type"] == ctype for i in SATISFIABLE for c in i["constraints"])


# ------------------------------------------------------------------------------ reproducibility


def test_build_items_reproduces_the_shipped_file():
    assert dumps_items(build_items(copy.deepcopy(FACTS))) == ITEMS_PATH.read_text(encoding="utf-8")


def test_a_bad_reference_is_refused_by_name():
    items = build_items(copy.deepcopy(FACTS))
    bad = copy.deepcopy(next(i for i in items if i["id"] == "v01-single-2"))
    bad["reference_response"] = bad["reference_response"].replace("End of report.", "Done.")
    with pytest.raises(ValueError, match=r"v01-single-2.*c3 \(fixed_closing\)"):
        verify_items([bad])


def test_another_seed_rewrites_items_consistently(tmp_path):
    facts = generate_media(tmp_path, seed=1)
    items = build_items(facts)  # raises if a reference no longer fits the permuted facts
    assert _ids(items) == _ids(ITEMS)
    assert dumps_items(items) != ITEMS_PATH.read_text(encoding="utf-8")


def _ifpo_sample(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ifpo.cli", "sample", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_cli_writes_the_same_items_and_refuses_a_non_empty_folder(tmp_path):
    out = tmp_path / "sample"
    done = _ifpo_sample("--out", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "items.jsonl").read_bytes() == ITEMS_PATH.read_bytes()
    assert json.loads((out / "facts.json").read_text(encoding="utf-8")) == FACTS
    assert f"{len(ITEMS)} items" in done.stdout

    again = _ifpo_sample("--out", str(out))
    assert again.returncode == 2
    assert "not empty" in again.stderr and "--force" in again.stderr

    forced = _ifpo_sample("--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert (out / "items.jsonl").read_bytes() == ITEMS_PATH.read_bytes()
