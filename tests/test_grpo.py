"""GRPO on the tiny Qwen3-VL with checklist rewards: image + video prompts, a failing judge, the entry script.

In-process runs build the trainer the way ``train/grpo.py`` does; the end-to-end run launches
``train/grpo.py recipes/tiny_grpo.yaml`` with accelerate as users do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fake_openai import FakeOpenAI

from train import callbacks as cb
from train.grpo_recipe import parse_grpo_recipe
from train.grpo_trainer import IfpoGRPOTrainer, build_prompt_dataset
from train.model import load_processor_and_model, lora_config
from train.rewards import ChecklistReward
from verifiers.checklist import ChecklistEvaluator
from verifiers.judge import make_judge
from verifiers.schema import read_items

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONPATH": str(REPO),
    "OMP_NUM_THREADS": "2",
}
LAUNCH = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1", "--num_machines", "1",
          "--mixed_precision", "no", "--dynamo_backend", "no", "--num_cpu_threads_per_process", "2"]

# Word budgets and formats whose pass rate varies across random-token rollouts of the tiny model.
VIDEO_ITEM, IMAGE_ITEM = "v08-single-3", "i02-selection-1"
# A length budget (rule) and a tone (judge route): the judge fails, the rule still rewards.
JUDGED_ITEM = {
    "id": "judged-1",
    "source": "test",
    "media": {"videos": [], "images": []},
    "instruction": "Say hello politely in at most 12 words.",
    "structure": "single",
    "tasks": [{"name": "greet", "description": "Greet the user."}],
    "constraints": [
        {"id": "len", "type": "response_length_constraint", "dimension": "format", "description": "At most 12 words.",
         "params": {"min_count": 1, "max_count": 12, "unit": "word"}},
        {"id": "tone", "type": "tone", "dimension": "style", "description": "Be polite.", "params": {"tone": "polite"}},
    ],
}


def run_grpo(tmp_path, items, *, judge=None, media_root=SAMPLE, overrides=()):
    recipe = parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path),
                                "--save_strategy", "no", "--logging_steps", "1", "--max_steps", "2", *overrides])
    cfg, args = recipe.ifpo, recipe.args
    processor, model = load_processor_and_model(cfg, args)
    reward = ChecklistReward(items, ChecklistEvaluator(judge, media_root=media_root, task_gate=False),
                             rewards=cfg.rewards, unjudged=cfg.unjudged, rollouts_path=tmp_path / "rollouts.jsonl",
                             rollouts_every=1)
    logs = tmp_path / "log_history.jsonl"
    trainer = IfpoGRPOTrainer(model=model, args=args, reward_funcs=reward.reward_funcs(),
                              train_dataset=build_prompt_dataset(items), processing_class=processor,
                              peft_config=lora_config(cfg), callbacks=[cb.JsonlLogCallback(logs)],
                              budget=cfg.media_budget(), media_root=media_root)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_B" in n}
    seen: list[set[str]] = []
    media_inputs = trainer._media_inputs

    def spy(rows, ids):
        out = media_inputs(rows, ids)
        seen.append(set(out))
        return out

    trainer._media_inputs = spy
    trainer.train()
    records = [json.loads(line) for line in logs.read_text().splitlines()]
    after = {n: p.detach() for n, p in trainer.model.named_parameters() if "lora_B" in n}
    changed = sum(not torch.equal(before[n], after[n]) for n in before)
    return trainer, [r for r in records if "loss" in r], changed, seen


@pytest.mark.slow
def test_image_and_video_prompts_train_on_checklist_rewards(tmp_path):
    items = [it for it in read_items(SAMPLE / "items.jsonl") if it["id"] in (VIDEO_ITEM, IMAGE_ITEM)]
    trainer, steps, changed, seen = run_grpo(tmp_path, items)
    assert trainer.state.global_step == 2 and len(steps) == 2
    # both kinds of media reached the forward passes (generation scoring and the loss)
    assert any({"pixel_values_videos", "video_grid_thw"} <= keys for keys in seen)
    assert any({"pixel_values", "image_grid_thw"} <= keys for keys in seen)
    # the reward varies across rollouts, so there is a gradient, and the adapter moves
    assert max(s["rewards/cpr/std"] for s in steps) > 0
    assert max(s["grad_norm"] for s in steps) > 0
    assert changed > 0
    # after the first update the policy differs from the reference, so KL (beta > 0) makes the loss non-zero
    assert steps[-1]["kl"] > 0 and steps[-1]["loss"] != 0
    for key in ("checklist/cpr", "checklist/unjudged", "completions/mean_length", "rewards/ipr/mean"):
        assert key in steps[0]
    assert any(k.startswith("checklist/pass_rate/word_count") for s in steps for k in s)
    rollouts = [json.loads(line) for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert {r["item_id"] for r in rollouts} <= {VIDEO_ITEM, IMAGE_ITEM} and all(r["verdicts"] for r in rollouts)


@pytest.mark.slow
def test_a_failing_judge_leaves_verdicts_unjudged_and_training_continues(tmp_path):
    # Policy 'none' here (every reward None, so TRL sees no signal at all); 'drop' and 'zero' are covered
    # with a failing judge in test_grpo_rewards.py.
    with FakeOpenAI(lambda body: (500, "judge unavailable")) as server:
        judge = make_judge({"model": "j", "base_url": server.base_url, "cache_dir": str(tmp_path / "cache"),
                            "max_retries": 0, "backoff_s": 0.0, "timeout_s": 5})
        trainer, steps, _, _ = run_grpo(tmp_path, [JUDGED_ITEM], judge=judge, media_root=None,
                                        overrides=["--unjudged", "none", "--rewards", "cpr", "--reward_weights", "[1.0]",
                                                   "--per_device_train_batch_size", "4"])
        assert len(server.requests) == 8, "each rollout's judge-route constraint went to the judge"
    assert trainer.state.global_step == 2
    assert all(s["checklist/unjudged"] == 4 for s in steps)  # 4 rollouts x 1 tone constraint, every step
    rewards = [json.loads(line)["rewards"]["cpr"] for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert rewards and all(r is None for r in rewards)  # never a silent 1


@pytest.mark.slow
def test_entry_script_runs_the_tiny_recipe(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(
        [*LAUNCH, str(REPO / "train" / "grpo.py"), str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(out),
         "--max_steps", "2", "--save_steps", "2", "--item_media", "text,image"],
        env=ENV, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "adapter_model.safetensors").is_file()
    assert (out / "recipe.resolved.yaml").is_file()
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["entry"] == "train/grpo.py" and manifest["data"]["by_media"].get("video") is None
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["reward"]["rollouts_scored"] >= 8 and metrics["reward"]["seconds_per_rollout"] is not None
    logged = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    assert any({"rewards/cpr/mean", "kl", "checklist/cpr", "checklist/unjudged"} <= set(r) for r in logged)
    assert (out / "rollouts.jsonl").read_text().strip()


def test_bad_recipe_fails_before_loading(capsys):
    from train.grpo import main

    assert main([str(REPO / "recipes" / "tiny_grpo.yaml"), "--reward", "cpr"]) == 2
    assert "did you mean 'rewards'" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_hook_scores_step_0_and_each_checkpoint(tmp_path):
    out = tmp_path / "hooked"
    hook = {"items": str(REPO / "sample" / "items.jsonl"), "max_items": 3,
            "generation": {"max_new_tokens": 8, "temperature": 0}}
    done = subprocess.run([sys.executable, str(REPO / "train" / "grpo.py"), str(REPO / "recipes" / "tiny_grpo.yaml"),
                           "--output_dir", str(out), "--max_steps", "2", "--save_steps", "1",
                           "--eval_hook", json.dumps(hook)], cwd=tmp_path, env={**os.environ, **ENV},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for step in (0, 1, 2):
        assert json.loads((out / "eval" / f"checkpoint-{step}" / "report.json").read_text())["n_items"] == 3
    logs = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    assert sorted(x["step"] for x in logs if "eval_ifpo/cpr_micro" in x) == [0, 1, 2]
