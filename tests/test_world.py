"""The synthetic verified-instruction world: splits, determinism, verified references, partial obedience."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from ifpo.data_builders.sample_benchmark.world import (
    PIXEL_ROLES,
    ROLES,
    make_items,
    recoloured_reference,
    scene_split,
    world_response,
    write_world,
)
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.schema import load_items

REPO = Path(__file__).resolve().parent.parent


def _scene_sig(item: dict) -> str:
    scene = item["world"]["scene"]
    return json.dumps([scene["kind"], [[o["shape"], o["color"], o["position"]] for o in scene["objects"]]])


def test_splits_are_disjoint_and_deterministic():
    train = [i for i, _ in make_items(300, "train", seed=0)]
    heldout = [i for i, _ in make_items(100, "heldout", seed=0)]
    assert not {_scene_sig(i) for i in train} & {_scene_sig(i) for i in heldout}
    assert all(scene_split(i["world"]["scene"]) == "train" for i in train)
    assert all(scene_split(i["world"]["scene"]) == "heldout" for i in heldout)
    again = [i for i, _ in make_items(300, "train", seed=0)]
    assert train == again
    other = [i for i, _ in make_items(300, "train", seed=1)]
    assert [_scene_sig(i) for i in other] != [_scene_sig(i) for i in train]


def test_every_role_and_kind_appears_with_a_good_pixel_share():
    items = [i for i, _ in make_items(400, "train", seed=0)]
    roles = [r for i in items for r in i["world"]["roles"].values()]
    assert set(roles) == set(ROLES)
    assert {i["world"]["scene"]["kind"] for i in items} == {"image", "video"}
    pixel = sum(r in PIXEL_ROLES for r in roles) / len(roles)
    assert 0.3 < pixel < 0.6


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_written_split_validates_and_references_pass(tmp_path, split):
    path = write_world(tmp_path, 12, split, seed=3)
    result = load_items(path)
    assert not result.errors and len(result.items) == 12
    for item in result.items:
        media = (item["media"]["images"] or item["media"]["videos"])[0]
        assert (tmp_path / media).is_file()


def test_same_seed_same_bytes(tmp_path):
    a = write_world(tmp_path / "a", 6, "heldout", seed=0)
    b = write_world(tmp_path / "b", 6, "heldout", seed=0)
    assert a.read_bytes() == b.read_bytes()
    for rel in sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a" / "media").iterdir()):
        digest = [hashlib.sha256((tmp_path / d / rel).read_bytes()).hexdigest() for d in ("a", "b")]
        assert digest[0] == digest[1], rel


def test_disobeying_a_rule_fails_exactly_that_constraint():
    evaluator = ChecklistEvaluator(None)
    items = [i for i, _ in make_items(80, "train", seed=0)]
    checked = 0
    for item in items:
        for cid in item["world"]["roles"]:
            obey = {c: c != cid for c in item["world"]["roles"]}
            result = evaluator.evaluate(item, world_response(item, obey))
            verdicts = {v.constraint_id: v.passed for v in result.verdicts}
            assert verdicts == {c: c != cid for c in verdicts}, (item["id"], cid, world_response(item, obey))
            checked += 1
    assert checked > 150


def test_pixel_rules_fail_by_a_wrong_fact_not_by_omission():
    # A disobeyed pixel rule keeps its sentence with the other end's colour / the wrong count: only the
    # media tell the two apart, which the media ablation of bench/efficacy.py relies on.
    items = [i for i, _ in make_items(60, "train", seed=0)]
    for item in items:
        for cid, role in item["world"]["roles"].items():
            if role not in PIXEL_ROLES:
                continue
            bad = world_response(item, {cid: False})
            good = world_response(item, {cid: True})
            assert len(bad.split()) == len(good.split()) and bad != good


def test_recoloured_reference_breaks_only_its_colour_rule_and_hides_in_a_sorted_list():
    # The grounding pairs' rejected side: a colour the media do not show, for the shape the rule asks
    # about, and nothing else changed; the colour list stays sorted, so the text cannot tell which is true.
    import random
    import re

    evaluator = ChecklistEvaluator(None)
    seen = {"first_color": 0, "last_color": 0, "none": 0}
    for item in [i for i, _ in make_items(120, "train", seed=2)]:
        assert item["reference_response"] == world_response(item)
        shown = {o["color"] for o in item["world"]["scene"]["objects"]}
        for cid, role in item["world"]["roles"].items():
            text = recoloured_reference(item, cid, random.Random(0))
            if role not in ("first_color", "last_color"):
                assert text is None
                seen["none"] += 1
                continue
            seen[role] += 1
            verdicts = {v.constraint_id: v.passed for v in evaluator.evaluate(item, text).verdicts}
            assert verdicts == {c: c != cid for c in verdicts}, (item["id"], cid, text)
            listed = re.search(r"colours are ([^.]+)\.", text, flags=re.I).group(1)
            names = [w for w in re.split(r",? and |, ", listed)]
            assert names == sorted(names) and len(set(names) - shown) == 1, (listed, shown)
            assert len(text.split()) == len(item["reference_response"].split())
    assert min(seen.values()) > 20, seen


def test_bundled_heldout_split_is_current():
    # sample/world/heldout.jsonl is `ifpo sample --world --split heldout --n 48 --out sample/world`.
    shipped = REPO / "sample" / "world" / "heldout.jsonl"
    items = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines()]
    fresh = [i for i, _ in make_items(len(items), "heldout", seed=0)]
    assert items == fresh
    assert not load_items(shipped).errors
