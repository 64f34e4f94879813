"""Eval hooks on by default: every shipped recipe scores step 0 and each checkpoint unless told not to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ifpo.train.grpo_recipe import parse_grpo_recipe
from ifpo.train.recipe import RecipeError, parse_recipe

REPO = Path(__file__).resolve().parent.parent
HELDOUT = REPO / "sample" / "world" / "heldout.jsonl"
CPU = ["--use_cpu", "true", "--bf16", "false"]
# DPO and GRPO recipes (train/dpo.py, train/grpo.py); SFT recipes (train/sft.py) take no eval hook.
RECIPES = sorted(p.name for p in (REPO / "recipes").glob("*.yaml") if "sft" not in p.stem)
TINY = [n for n in RECIPES if n.startswith("tiny")]
REAL = [n for n in RECIPES if not n.startswith("tiny")]
# One thread: a 2-thread pool on 2 shared cores waits on the busy one (3-4x slower steps, measured)
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1",
       "WANDB_MODE": "disabled"}


def parse(name: str, *argv: str):
    parser = parse_grpo_recipe if "grpo" in name else parse_recipe
    return parser([str(REPO / "recipes" / name), *CPU, "--output_dir", "/tmp/ifpo-never-written", *argv])


def test_the_shipped_recipes_are_the_expected_ones():
    assert {"tiny.yaml", "tiny_grpo.yaml", "qwen3vl2b.yaml", "qwen3vl4b.yaml", "qwen3vl8b.yaml",
            "qwen3vl8b_grpo.yaml"} <= set(RECIPES)


@pytest.mark.parametrize("name", RECIPES)
def test_every_shipped_recipe_carries_an_eval_hook(name):
    hook = yaml.safe_load((REPO / "recipes" / name).read_text())["eval_hook"]
    assert isinstance(hook, dict) and "items" in hook
    assert hook.get("on_save", True) or hook.get("every_steps")  # checkpoints are evaluated
    assert hook.get("on_start", True)  # and the base weights (step 0)


@pytest.mark.parametrize("name", TINY)
def test_tiny_recipes_evaluate_the_held_out_split_from_any_directory(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the relative path is found in the checkout when not in the working directory
    hook = parse(name).ifpo.eval_hook_config()
    assert Path(hook["items"]) == HELDOUT and HELDOUT.is_file()
    assert hook["generation"]["media"]  # the recipe's media budgets are the evaluation's


@pytest.mark.parametrize("name", REAL)
def test_real_recipes_take_the_users_items(name, tmp_path, monkeypatch):
    items = tmp_path / "heldout.jsonl"
    items.write_text(HELDOUT.read_text())
    monkeypatch.chdir(tmp_path)
    recipe = parse(name, "--eval_hook.items", "heldout.jsonl", "--eval_hook.max_items", "5")
    hook = recipe.ifpo.eval_hook
    assert Path(hook["items"]) == items.resolve() and hook["max_items"] == 5
    assert hook["generation"]["temperature"] == 0.1  # the recipe's own keys stay


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("argv, message", [
    ((), r"eval_hook\.items is not set: .*--eval_hook\.items PATH.*--eval_hook null"),
    (("--eval_hook.items", "missing/heldout.jsonl"), r"eval_hook\.items: missing/heldout\.jsonl: no such file.*"
                                                     r"--eval_hook null"),
    (("--eval_hook.itmes", "x.jsonl"), "did you mean 'items'"),
])
def test_real_recipes_refuse_a_missing_items_file(name, argv, message):
    with pytest.raises(RecipeError, match=message):
        parse(name, *argv)


@pytest.mark.parametrize("name", RECIPES)
def test_eval_hook_null_opts_out(name, tmp_path):
    assert parse(name, "--eval_hook", "null").ifpo.eval_hook is None
    data = yaml.safe_load((REPO / "recipes" / name).read_text())
    data["eval_hook"] = None
    if "model_name_or_path" in data and data["model_name_or_path"].startswith("tiny"):
        data["model_name_or_path"] = "tiny"  # the copied recipe sits outside the checkout; no model is loaded
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    parser = parse_grpo_recipe if "grpo" in name else parse_recipe
    assert parser([str(path), *CPU, "--output_dir", str(tmp_path / "o")]).ifpo.eval_hook is None


@pytest.mark.parametrize("script, recipe", [("dpo", "qwen3vl8b.yaml"), ("grpo", "qwen3vl8b_grpo.yaml"),
                                            ("dpo", "tiny.yaml")])
def test_training_stops_at_start_naming_the_key(script, recipe, tmp_path, monkeypatch, capsys):
    import importlib

    main = importlib.import_module(f"ifpo.train.{script}").main
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    argv = [] if recipe.startswith("qwen") else ["--eval_hook.items", "nowhere.jsonl"]
    assert main([str(REPO / "recipes" / recipe), *CPU, "--output_dir", str(out), *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"train/{script}.py: error: eval_hook.items")
    assert "--eval_hook null" in lines[0]
    assert not (out / "tiny-model").exists()  # stopped before any model was built or loaded


@pytest.mark.slow
def test_a_tiny_dpo_run_evaluates_step_0_and_each_checkpoint_by_default(tmp_path):
    """No --eval_hook given: the recipe's own hook scores the base weights and every checkpoint, and the tracker
    (tensorboard, read back from its own event files) receives each evaluation at its step. The tracker check was
    tests/test_dpo.py's own 4-step launch; one launch serves both."""
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"),
                           "--output_dir", str(out), "--max_steps", "4", "--save_steps", "2", "--eval_pairs", "null",
                           "--report_to", "tensorboard",
                           # 8 pairs, 2 a step: the reference log-probs of the recipe's 71 pairs and 8-pair steps
                           # took 45 of this test's 60 s, and the hook's steps do not depend on them
                           "--max_pairs", "8", "--per_device_train_batch_size", "2",
                           "--eval_hook.max_items", "6"],  # a bounded look at the default hook
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for step in (0, 2, 4):
        report = json.loads((out / "eval" / f"checkpoint-{step}" / "report.json").read_text())
        assert report["n_items"] == 6 and report["evaluation"]["step"] == step
        assert Path(report["evaluation"]["items"]) == HELDOUT
    logs = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    assert sorted(x["step"] for x in logs if "eval_ifpo/ipr" in x) == [0, 2, 4]
    assert sorted(x["step"] for x in logs if "eval_ifpo/cpr_micro" in x) == [0, 2, 4]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = [EventAccumulator(str(p.parent)).Reload() for p in out.rglob("events.out.tfevents.*")]
    # transformers files "eval_*" keys under "eval/" for trackers
    steps = sorted(e.step for acc in events if "eval/ifpo/ipr" in acc.Tags()["scalars"]
                   for e in acc.Scalars("eval/ifpo/ipr"))
    assert steps == [0, 2, 4]
