"""Tests that catch broken learning: real training runs on the learnable default, scored on held-out items.

One session fixture takes the shipped learnable default (``train/models/tiny-world``: the same weights on
every machine), draws its world train split again into a temporary folder, builds corrupted + stripped
pairs on 64 train items and scores the base model on the bundled held-out split
(``sample/world/heldout.jsonl``). Each test then trains through the user-facing entry scripts
(``train/dpo.py recipes/tiny_world.yaml``, ``train/grpo.py recipes/tiny_world_grpo.yaml``) and scores the
result with ``ifpo evaluate`` (the verifier suite). The steps and helpers are bench/efficacy.py's.

What each test catches (each was checked by breaking the code once; see the issue-11 note):
- DPO on built pairs raises held-out format CPR: a loss or data bug that stops DPO from teaching (format: the
  learnable default does not read its pixels, and every content rule of the world asks about them);
- the same pairs with chosen and rejected swapped lower it: a sign/ordering bug that still "learns";
- the pixel-dependent rules improve only when training sees the media: media dropped from the forward
  (measured as the held-out grounding pairs' margin on the pixel-reading build, ``PixelSteps``);
- GRPO with checklist rewards raises held-out format CPR: rewards misaligned with completions, or no update.

Each margin is below what every training seed measured (``--learning-seed``; the table is in the note of
the issue that shipped the weights).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import bench_modules
import pytest

REPO = Path(__file__).resolve().parent.parent
HELDOUT = REPO / "sample" / "world" / "heldout.jsonl"
pytestmark = pytest.mark.slow


class Steps:
    def __init__(self, root: Path, seed: int):
        from ifpo.train.tiny_model import learnable_default, learnable_world

        self.bench = bench_modules.load("efficacy")
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.model = learnable_default()
        self.world = learnable_world(self.model, root / "world")
        self.train = self.bench.subset_items(self.bench.read_jsonl(self.world)[:64], self.world.parent)
        self.heldout = self.bench.read_jsonl(HELDOUT)
        self.args = argparse.Namespace(dpo_steps=40, grpo_steps=80)
        self.seed = seed  # pytest --learning-seed: the margins below must hold on other seeds too
        self.pairs = self.bench.build_pairs(self.model, self.train, root / "pairs", self.logs, ["corrupted", "stripped"],
                                            seed=seed)
        self.base = self.score(self.bench.evaluate(self.model, HELDOUT, root / "eval" / "base", self.logs, "base"))

    def score(self, eval_dir: Path) -> dict[str, float]:
        d = self.bench.score_dir(self.heldout, eval_dir)
        return {k: v["value"] for k, v in self.bench.bootstrap(d, resamples=10).items()}

    def dpo(self, name: str, pairs: Path) -> dict[str, float]:
        run = self.bench.train_dpo(self.model, pairs, self.root / "runs" / name, self.logs, name, self.args,
                                   seed=self.seed)
        return self.score(self.bench.evaluate(run, HELDOUT, self.root / "eval" / name, self.logs, name))


@pytest.fixture(scope="session")
def steps(tmp_path_factory, learning_seed) -> Steps:
    return Steps(tmp_path_factory.mktemp("efficacy"), learning_seed)


def _swapped(src: Path, dst: Path) -> Path:
    rows = [json.loads(line) for line in (src / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["chosen"], r["rejected"] = r["rejected"], r["chosen"]
    dst.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    root = manifest.get("media_root")
    root = str((src / root).resolve()) if root and not Path(root).is_absolute() else root
    (dst / "manifest.json").write_text(json.dumps({"media_root": root}), encoding="utf-8")
    (dst / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return dst


def test_base_leaves_room(steps):
    # The learnable default obeys some rules and not others: room to improve, something to build on.
    # (The issue asks for a base IPR of 10..60%; it is 4% on the bundled split, see the issue-11 note.)
    assert 20.0 <= steps.base["cpr_micro"] <= 70.0 and steps.base["ipr"] <= 60.0, steps.base


def test_dpo_on_built_pairs_raises_heldout_format_cpr(steps):
    # What DPO on these pairs teaches the learnable default is format: it does not read its pixels, so the
    # content rules (all pixel-dependent in the world) stay at its guessing rate or below (the open content
    # cost, see bench/efficacy.py). Shipped weights, SFT weight 3, seeds 0/1/2: format CPR 58.3 -> 83.3/83.3/81.7
    # on the 48 bundled items.
    after = steps.dpo("dpo", steps.pairs)
    print(f"[learning seed {steps.seed}] dpo: base {steps.base} after {after}")  # the note's seed table (-s)
    assert after["cpr_format"] >= steps.base["cpr_format"] + 8.0, (steps.base, after)


def test_swapped_pairs_lower_heldout_ipr(steps):
    after = steps.dpo("swapped", _swapped(steps.pairs, steps.root / "pairs_swapped"))
    print(f"[learning seed {steps.seed}] swapped: after {after}")
    # IPR starts at 4% (two items), so the drop shows in CPR.
    assert after["cpr_micro"] <= steps.base["cpr_micro"] - 5.0 and after["ipr"] <= steps.base["ipr"], (steps.base, after)


class PixelSteps:
    """The media ablation's setting: the pixel-reading build (the learnable default does not read its pixels,
    so removing them changes nothing on it), ``grounding`` pairs on its train split and on the bundled
    held-out split (rejected = the reference with the asked-about shape in a colour the media do not show)."""

    def __init__(self, root: Path, seed: int):
        from ifpo.train.tiny_model import learnable_world, pixel_reading_default

        self.bench = bench_modules.load("efficacy")
        self.root = root
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.model = pixel_reading_default()
        world = learnable_world(self.model, root / "world")
        train = self.bench.subset_items(self.bench.read_jsonl(world)[:400], world.parent)
        self.args = argparse.Namespace(dpo_steps=40)
        self.seed = seed
        self.pairs = self.bench.build_pairs(self.model, train, root / "grounding", self.logs, ["grounding"], seed=seed)
        self.heldout_pairs = self.bench.build_pairs(self.model, HELDOUT, root / "heldout-grounding", self.logs,
                                                    ["grounding"])

    def margin(self, name: str, pairs: Path) -> dict[str, float]:
        run = self.bench.train_dpo(self.model, pairs, self.root / "runs" / name, self.logs, name, self.args,
                                   eval_pairs=self.heldout_pairs, seed=self.seed)
        return self.bench.pair_margin(run)


@pytest.fixture(scope="session")
def pixel_steps(tmp_path_factory, learning_seed) -> PixelSteps:
    return PixelSteps(tmp_path_factory.mktemp("efficacy-pixels"), learning_seed)


def test_pixel_rules_improve_only_with_media(pixel_steps):
    # The pixel-dependent rules' preference on held-out media (grounding pairs, where only the pixels decide)
    # rises with DPO that sees the media, and not when the same pairs are trained blanked. Media dropped
    # from the training forward (collator, prompt building, the pairs loader) make both runs the blanked one.
    # Measured: gain +6.5 nats with media, -0.2 blanked (795 pairs); the base margin (3.1) is the reference
    # forward's, with media. Generated pixel CPR does not follow on this build (bench/efficacy.py reports it).
    with_media = pixel_steps.margin("grounding", pixel_steps.pairs)
    blanked_pairs = pixel_steps.bench.subset_pairs(pixel_steps.pairs, pixel_steps.root / "blanked", blank_media=True)
    blanked = pixel_steps.margin("grounding_blanked", blanked_pairs)
    assert with_media["base"] > 1.0, with_media  # the held-out forward reads the pixels before training
    assert with_media["gain"] >= 3.0 and blanked["gain"] < with_media["gain"] / 3, (with_media, blanked)


def test_grpo_with_checklist_rewards_raises_heldout_format_cpr(steps):
    # Rewards misaligned with completions (or zero, or no update) leave held-out CPR flat or lower it.
    # 80 steps of 2 prompts x 8 rollouts over 240 train items. As with DPO, what the learnable default can learn
    # is format (its content rules are pixel-dependent guesses: their CPR moved -10.7 to +7.1 across seeds).
    # Shipped weights, bundled split, format CPR 58.3 -> 73.3 / 80.0 on training seeds 1 / 2 (at 40 steps seed 1
    # gained nothing); the recipe's former beta 0 / lr 2e-3 hacked the reward (CPR 44.0 -> 35.3 on seed 0).
    items = steps.bench.subset_items(steps.bench.read_jsonl(steps.world)[:240], steps.world.parent)
    run = steps.bench.train_grpo(steps.model, items, steps.root / "runs" / "grpo", steps.logs, "grpo", steps.args,
                                 seed=steps.seed)
    after = steps.score(steps.bench.evaluate(run, HELDOUT, steps.root / "eval" / "grpo", steps.logs, "grpo"))
    print(f"[learning seed {steps.seed}] grpo: after {after}")
    assert after["cpr_format"] >= steps.base["cpr_format"] + 8.0, (steps.base, after)
