"""Pair builder on the sample benchmark: every pair re-verified, counts, resume after SIGKILL."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from ifpo.data_builders.build import BuildConfig, build_pairs, permute_branches, strip_constraints
from ifpo.data_builders.importers import import_file
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.schema import read_items

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"
DATA = Path(__file__).parent / "data"
ITEMS = read_items(SAMPLE / "items.jsonl")
BY_ID = {i["id"]: i for i in ITEMS}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    report = build_pairs(ITEMS, out, BuildConfig(seed=0), media_root=SAMPLE, items_path=SAMPLE / "items.jsonl",
                         progress=False)
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    return out, report, pairs


def _text(msgs):
    return msgs[0]["content"][0]["text"]


def test_every_pair_is_verified(built):
    _, _, pairs = built
    evaluator = ChecklistEvaluator(None)
    assert pairs
    for p in pairs:
        item = BY_ID[p["meta"]["item_id"]]
        kind = p["meta"]["kind"]
        if kind == "conflict":
            chosen = _text(p["chosen"])
            for cid in item["conflict"]["conflicting"]:
                desc = next(c["description"] for c in item["constraints"] if c["id"] == cid)
                assert desc in chosen  # names both conflicting requirements
            assert chosen.rstrip().endswith("?")  # and asks which to follow
            continue
        chosen = {v.constraint_id: v.passed for v in evaluator.evaluate(item, _text(p["chosen"])).verdicts}
        rejected = {v.constraint_id: v.passed for v in evaluator.evaluate(item, _text(p["rejected"])).verdicts}
        assert False not in chosen.values(), (item["id"], kind)
        if kind == "corrupted":
            target = p["meta"]["corrupted_constraint"]
            assert rejected[target] is False
            assert {k: v for k, v in rejected.items() if k != target} == {k: v for k, v in chosen.items() if k != target}
        elif kind == "misaligned":
            assert rejected[p["meta"]["corrupted_constraint"]] is False
            user = p["prompt"][-1]["content"][-1]["text"]
            assert user.startswith(item["user_overrides"][p["meta"]["style"]].strip())
        else:
            assert False in rejected.values()


def test_report_counts_add_up(built):
    out, report, pairs = built
    assert report["pairs"] == len(pairs) == sum(report["by_kind"].values())
    assert report["by_kind"]["conflict"] == sum(1 for i in ITEMS if i["structure"] == "conflict")
    corrupted = [p for p in pairs if p["meta"]["kind"] == "corrupted"]
    assert sum(report["corrupted_by_type"].values()) == len(corrupted)
    assert Counter(p["meta"]["corrupted_type"] for p in corrupted) == Counter(report["corrupted_by_type"])
    assert report["by_kind"]["misaligned"] >= 5 * 5  # five styles on at least five system items
    manifest = json.loads((out / "manifest.json").read_text())
    # Every media path of every pair resolves under the manifest's media root (the sample has both kinds).
    media = [(kind, rel) for p in pairs for kind in ("images", "videos") for rel in p[kind]]
    assert {kind for kind, _ in media} == {"images", "videos"}
    missing = sorted({rel for _, rel in media if not (out / Path(manifest["media_root"]) / rel).is_file()})
    assert not missing, missing
    from datasets import load_from_disk

    ds = load_from_disk(str(out / "dataset"))
    assert len(ds) == len(pairs) and set(ds.column_names) >= {"prompt", "chosen", "rejected", "images", "videos", "meta"}


def test_a_corrupted_pair_for_every_rule_route_type_present(built):
    _, report, _ = built
    present = {c["type"] for i in ITEMS if i["structure"] != "conflict" for c in i["constraints"]
               if REGISTRY.get(c["type"]).route in ("rule", "hybrid")}
    missing = present - set(report["corrupted_by_type"])
    # corruptions_per_item caps pairs per item, so cover the rest with a wider build
    if missing:
        pytest.fail(f"no corrupted pair for: {sorted(missing)}")


def test_same_seed_same_output_and_settings_guard(tmp_path, built):
    out, _, _ = built
    again = tmp_path / "again"
    build_pairs(ITEMS, again, BuildConfig(seed=0), media_root=SAMPLE, items_path=SAMPLE / "items.jsonl", progress=False)
    assert (again / "pairs.jsonl").read_bytes() == (out / "pairs.jsonl").read_bytes()
    with pytest.raises(ValueError, match="different config"):
        build_pairs(ITEMS, again, BuildConfig(seed=1), media_root=SAMPLE, progress=False)


def test_strip_and_permute_helpers():
    item = next(i for i in ITEMS if i["structure"] == "selection")
    bare = strip_constraints(item)
    for c in item["constraints"]:
        assert c["description"] not in bare
    import random

    text, order = permute_branches(item, random.Random(0))
    assert text != item["instruction"]
    active_before = next(k for k, b in enumerate(item["branches"]) if b["active"])
    assert next(k for k, b in enumerate(order) if b["active"]) != active_before
    for b in item["branches"]:
        assert b["condition"] in text and b["instruction"] in text


def test_imported_video_ifbench_and_ifeval_build(tmp_path):
    vifb = import_file("video_ifbench", DATA / "video_ifbench_annotations.jsonl", root=SAMPLE).items
    report = build_pairs(vifb, tmp_path / "v", BuildConfig(kinds=["corrupted"]), media_root=SAMPLE, progress=False)
    assert report["by_kind"].get("corrupted", 0) >= 1
    ife = import_file("ifeval", DATA / "ifeval_input.jsonl", check_media=False).items
    responses = {json.loads(line)["prompt"]: json.loads(line)["response"]
                 for line in (DATA / "ifeval_responses.jsonl").read_text().splitlines()}
    first = dict(ife[0], reference_response=responses[ife[0]["instruction"]])  # this one passes both
    report = build_pairs([first], tmp_path / "i", BuildConfig(kinds=["corrupted"]), media_root=tmp_path, progress=False)
    assert report["by_kind"].get("corrupted", 0) >= 1


def test_bad_build_config_is_a_clear_error(tmp_path):
    cfg = tmp_path / "build.yaml"
    cfg.write_text("kinds: [corupted]\n")
    proc = subprocess.run([sys.executable, "-m", "ifpo.cli", "build-pairs", "--items", str(SAMPLE / "items.jsonl"),
                           "--out", str(tmp_path / "o"), "--config", str(cfg)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "did you mean 'corrupted'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_equals_uninterrupted(tmp_path):
    # A bigger input (the sample, repeated under new ids) so the kill lands mid-run: 3 copies (231 items) leave
    # the kill at 40 journal lines well inside the run; 6 made each of the three builds twice as long.
    big = tmp_path / "items.jsonl"
    reps = 3
    with open(big, "w") as fh:
        for rep in range(reps):
            for item in ITEMS:
                fh.write(json.dumps(dict(item, id=f"{item['id']}~{rep}")) + "\n")
    # media paths are relative to the items file's folder: copy the sample media (84 KB) next to it (a
    # symlink leading out of the dataset root is refused, by design: media are confined by real path)
    shutil.copytree(SAMPLE / "media", tmp_path / "media")
    cmd = [sys.executable, "-m", "ifpo.cli", "build-pairs", "--items", str(big), "--no-progress"]
    killed = tmp_path / "killed"
    proc = subprocess.Popen([*cmd, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = killed / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if journal.exists() and journal.read_text().count("\n") >= 40:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lines_at_kill = journal.read_text().count("\n")
    assert 40 <= lines_at_kill < reps * len(ITEMS), "the kill must land mid-run"
    assert not (killed / "pairs.jsonl").exists()
    subprocess.run([*cmd, "--out", str(killed)], check=True, capture_output=True, timeout=600)
    clean = tmp_path / "clean"
    subprocess.run([*cmd, "--out", str(clean)], check=True, capture_output=True, timeout=600)
    assert (killed / "pairs.jsonl").read_bytes() == (clean / "pairs.jsonl").read_bytes()
    assert json.loads((killed / "report.json").read_text()) == json.loads((clean / "report.json").read_text())


@pytest.mark.slow
def test_stripped_and_option_order_with_the_tiny_model_as_policy(tmp_path):
    from ifpo.train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", seed=0)
    items = [i for i in ITEMS if i["structure"] in ("single", "selection")][:12]
    policy = {"backend": "transformers", "model": str(model), "max_new_tokens": 24}
    report = build_pairs(items, tmp_path / "p", BuildConfig(kinds=["stripped", "option_order"], policy=policy),
                         media_root=SAMPLE, progress=False)
    assert report["by_kind"].get("stripped", 0) >= 1
    assert report["by_kind"].get("option_order", 0) >= 1
    pairs = [json.loads(line) for line in (tmp_path / "p" / "pairs.jsonl").read_text().splitlines()]
    stripped = next(p for p in pairs if p["meta"]["kind"] == "stripped")
    assert any(v["passed"] is False for v in stripped["meta"]["rejected_verdicts"])


def test_stripped_from_ground_truth_states_the_same_facts(tmp_path):
    # stripped_source: ground_truth takes the item's answer to the bare task as the rejected: no policy runs, and
    # the pair differs only where the constraints act. Items without one fall back to the policy (none here:
    # counted as no_policy_backend, not silently dropped).
    world = SAMPLE / "world"
    items = read_items(world / "heldout.jsonl")[:6]
    bare = {k: v for k, v in items[0].items() if k != "ground_truth"}
    cfg = BuildConfig(kinds=["stripped"], stripped_source="ground_truth")
    report = build_pairs(items + [{**bare, "id": "no-ground-truth"}], tmp_path / "p", cfg, media_root=world,
                         progress=False)
    pairs = [json.loads(line) for line in (tmp_path / "p" / "pairs.jsonl").read_text().splitlines()]
    by_id = {i["id"]: i for i in items}
    assert report["by_kind"]["stripped"] == len(pairs) >= 4
    for p in pairs:
        item = by_id[p["meta"]["item_id"]]
        assert _text(p["rejected"]) == item["ground_truth"] and _text(p["chosen"]) == item["reference_response"]
        assert any(v["passed"] is False for v in p["meta"]["rejected_verdicts"])
    assert report["discards"]["stripped:no_policy_backend"] == 1
    with pytest.raises(ValueError, match="stripped_source: expected one of policy, ground_truth"):
        BuildConfig(stripped_source="truth")


def test_teacher_answers_become_chosen_only_when_compliant(tmp_path):
    from fake_openai import FakeOpenAI

    item = dict(next(i for i in ITEMS if i["id"] == "v01-single-1"))
    good = item.pop("reference_response")
    answers = iter(["way too short", good, good, good])

    def handler(body):
        return 200, next(answers)

    with FakeOpenAI(handler) as server:
        teacher = {"backend": "openai", "model": "teacher", "base_url": server.base_url, "concurrency": 1}
        cfg = BuildConfig(kinds=["corrupted"], teacher=teacher, teacher_attempts=4, unjudged_is_pass=True)
        report = build_pairs([item], tmp_path / "t", cfg, media_root=SAMPLE, progress=False)
    pairs = [json.loads(line) for line in (tmp_path / "t" / "pairs.jsonl").read_text().splitlines()]
    assert pairs and all(_text(p["chosen"]) == good for p in pairs)
    assert report["by_kind"]["corrupted"] == len(pairs)

    # unjudged verdicts disqualify teacher answers by default (the item has judge-route constraints)
    strict = BuildConfig(kinds=["corrupted"], teacher=teacher, teacher_attempts=2)
    with FakeOpenAI(lambda body: (200, good)) as server:
        strict.teacher = {**teacher, "base_url": server.base_url}
        report = build_pairs([item], tmp_path / "s", strict, media_root=SAMPLE, progress=False)
    assert report["pairs"] == 0 and report["discards"] == {"chosen:teacher_not_compliant": 1}


def test_llm_corruptor_breaks_a_judge_route_constraint_verified_by_the_judge(tmp_path):
    from fake_openai import FakeOpenAI, user_text

    item = next(i for i in ITEMS if i["id"] == "v01-single-1")
    judge_c = next(c for c in item["constraints"] if REGISTRY.get(c["type"]).route == "judge")
    corrupted = item["reference_response"] + " "  # same text for every rule checker

    def handler(body):
        text = user_text(body)
        if text.startswith("Rewrite the response"):
            return 200, corrupted
        if "Constraint to check" in text:
            # the judge fails the judge-route constraint only on the corrupted copy
            failed = judge_c["description"] in text and corrupted + "\n>>>" in text
            return 200, json.dumps({"passed": not failed, "reason": "scripted"})
        return 200, json.dumps({"passed": True, "reason": "ok"})

    with FakeOpenAI(handler) as server:
        llm = {"backend": "openai", "model": "corruptor", "base_url": server.base_url}
        judge = {"model": "judge", "base_url": server.base_url, "cache_dir": None}
        cfg = BuildConfig(kinds=["corrupted"], corruptor_llm=llm, judge=judge)
        build_pairs([item], tmp_path / "j", cfg, media_root=SAMPLE, progress=False)
    pairs = [json.loads(line) for line in (tmp_path / "j" / "pairs.jsonl").read_text().splitlines()]
    judged = [p for p in pairs if p["meta"]["corrupted_constraint"] == judge_c["id"]]
    assert len(judged) == 1
    verdicts = {v["constraint_id"]: v["passed"] for v in judged[0]["meta"]["rejected_verdicts"]}
    assert verdicts[judge_c["id"]] is False
    assert all(v for k, v in verdicts.items() if k != judge_c["id"])


def test_length_match_drops_unbalanced_pairs(tmp_path, built):
    _, report, pairs = built
    cfg = BuildConfig(seed=0, length_match=True, length_tolerance=0.1)
    matched = build_pairs(ITEMS, tmp_path / "m", cfg, media_root=SAMPLE, progress=False)
    kept = [json.loads(line) for line in (tmp_path / "m" / "pairs.jsonl").read_text().splitlines()]
    from ifpo.verifiers.text import count_words

    for p in kept:
        c, r = count_words(_text(p["chosen"])), count_words(_text(p["rejected"]))
        assert abs(r - c) / c <= 0.1
    assert matched["discards"]["length_match:outside_tolerance"] == len(pairs) - len(kept) > 0


def test_grounding_pairs_differ_only_in_a_colour_the_media_do_not_show(tmp_path):
    # World items get one pair per colour rule; items without scene facts, or whose chosen is not the world's
    # reference, get none and are counted by reason. Every pair is re-verified: its rule fails, nothing else.
    from ifpo.data_builders.sample_benchmark.world import make_items

    world = [i for i, _ in make_items(30, "train", seed=4)]
    # a reference written by someone else (here: the scene facts say another shape): still compliant, no pair
    scene = world[1]["world"]["scene"]
    objs = [dict(scene["objects"][0], shape="heart" if scene["objects"][0]["shape"] != "heart" else "star")]
    edited = dict(world[1], world={**world[1]["world"], "scene": {**scene, "objects": objs + scene["objects"][1:]}})
    plain = ITEMS[0]
    items = [world[0], edited, plain] + world[2:]
    report = build_pairs(items, tmp_path / "g", BuildConfig(kinds=["grounding"]), media_root=tmp_path, progress=False)
    pairs = [json.loads(line) for line in (tmp_path / "g" / "pairs.jsonl").read_text().splitlines()]
    rules = sum(r in ("first_color", "last_color") for i in [world[0]] + world[2:] for r in i["world"]["roles"].values())
    assert report["by_kind"] == {"grounding": rules} and rules > 10
    assert report["discards"]["grounding:no_scene_facts"] == 1
    assert report["discards"]["grounding:chosen_is_not_the_world_reference"] == 1
    by_id = {i["id"]: i for i in items}
    evaluator = ChecklistEvaluator(None)
    for p in pairs:
        item = by_id[p["meta"]["item_id"]]
        target = p["meta"]["corrupted_constraint"]
        assert item["world"]["roles"][target] in ("first_color", "last_color")
        verdicts = {v.constraint_id: v.passed for v in evaluator.evaluate(item, _text(p["rejected"])).verdicts}
        assert verdicts == {c: c != target for c in verdicts}
        shown = {o["color"] for o in item["world"]["scene"]["objects"]}
        words = [set(re.findall(r"[a-z]+", _text(p[side]).lower())) for side in ("rejected", "chosen")]
        new = words[0] - words[1]
        assert len(new) == 1 and not new & shown, (new, shown)
