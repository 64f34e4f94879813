"""DPO on the tiny Qwen3-VL: video collation, length checks, reference precompute, training, resume, two ranks.

In-process tests share one tiny model and one set of sample pairs; the end-to-end runs launch
``train/dpo.py`` (accelerate, torchrun) as users do and inspect what they leave in ``output_dir``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from ifpo.train.lengths import OverlongPairsError, check_lengths, measure_lengths
from ifpo.train.vision import (
    DataCollatorForVideoPreference,
    MediaBudget,
    count_media_tokens,
    expected_media_tokens,
    sample_frame_indices,
)
from tiny_pairs import TINY_BUDGET, pick

REPO = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "offline",
    "PYTHONPATH": str(REPO),
    # accelerate launch sets OMP_NUM_THREADS and plain python does not; a different thread count changes float
    # summation order, which Adam amplifies to ~lr per weight. Fixing it makes reruns and resumes comparable.
    # One thread: on 2 shared cores a 2-thread OpenMP pool waits on a busy core (the tiny model's 4 DPO steps took
    # 40 s at 2 threads and 11-14 s at 1, measured side by side under load 2-2.5).
    "OMP_NUM_THREADS": "1",
}
LAUNCH = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1", "--num_machines", "1",
          "--mixed_precision", "no", "--dynamo_backend", "no", "--num_cpu_threads_per_process", "1"]


def lora_b(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_B" in n}


# ------------------------------------------------------------------------------------------
# video collation
# ------------------------------------------------------------------------------------------


def test_video_pairs_collate_with_matching_pad_counts_and_timestamps(processor, pairs, tiny_dir):
    from transformers import AutoModelForImageTextToText

    collator = DataCollatorForVideoPreference(processor, budget=TINY_BUDGET)
    videos = pick(pairs, n_video=2)
    batch = collator(videos)
    assert batch["pixel_values_videos"].shape[0] > 0 and "pixel_values" not in batch
    # qwen-vl-utils' sampling: the sample clips are 32 frames at 8 fps, 2 fps keeps 8 frames = 4 temporal patches.
    assert sample_frame_indices(32, 8.0, TINY_BUDGET).tolist() == [0, 4, 9, 13, 18, 22, 27, 31]
    assert batch["video_grid_thw"][:, 0].tolist() == [4, 4, 4, 4]  # 2 pairs x (chosen, rejected)
    for row in range(batch["input_ids"].shape[0]):
        counted = count_media_tokens(batch["input_ids"][row], processor)["video"]
        grid = batch["video_grid_thw"][row]
        assert counted == int(grid.prod()) // 4
    text = processor.tokenizer.decode(batch["input_ids"][0])
    # Timestamps are the frames' real times (mean of each pair of kept frames at the file's 8 fps).
    assert re.findall(r"<(\d+\.\d) seconds>", text) == ["0.2", "1.4", "2.5", "3.6"]

    fewer = DataCollatorForVideoPreference(processor, budget=MediaBudget(**{**TINY_BUDGET.__dict__, "video_fps": 1.0}))
    assert fewer(videos[:1])["video_grid_thw"][0, 0].item() == 2  # 1 fps: 4 frames

    mixed = collator(pick(pairs, n_video=1, n_image=1, n_text=1))
    assert {"pixel_values", "pixel_values_videos"} <= set(mixed)
    total = {"image": 0, "video": 0}
    for row in mixed["input_ids"]:
        for name, value in count_media_tokens(row, processor).items():
            total[name] += value
    assert total == expected_media_tokens(mixed)
    model = AutoModelForImageTextToText.from_pretrained(tiny_dir)
    inputs = {k: v for k, v in mixed.items() if k not in ("completion_mask", "pair_ids", "pair_kinds")}
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits.shape[:2] == mixed["input_ids"].shape


def test_collator_refuses_to_truncate(processor):
    with pytest.raises(ValueError, match="never truncates"):
        DataCollatorForVideoPreference(processor, max_length=128)


# ------------------------------------------------------------------------------------------
# lengths
# ------------------------------------------------------------------------------------------


def test_overlong_pair_is_reported_by_id_not_cut(processor, pairs, tmp_path):
    collator = DataCollatorForVideoPreference(processor, budget=TINY_BUDGET)
    subset = pairs.dataset.select(range(6))
    lengths = measure_lengths(subset, collator)
    longest = max(lengths, key=lambda x: x.longest)
    assert all(x.video_tokens + x.image_tokens > 0 for x in lengths)  # vision tokens are counted
    limit = sorted(x.longest for x in lengths)[-2]  # exactly one pair over the limit
    with pytest.raises(OverlongPairsError, match=re.escape(longest.pair_id)) as error:
        check_lengths(lengths, limit, "error", tmp_path / "lengths.json")
    assert "never truncated" in str(error.value) and f"{longest.longest} tokens" in str(error.value)
    report = json.loads((tmp_path / "lengths.json").read_text())
    assert [x["pair_id"] for x in report["over_max_length"]] == [longest.pair_id]
    assert check_lengths(lengths, limit, "drop") == [longest.pair_id]
    assert check_lengths(lengths, longest.longest, "error") == []


# ------------------------------------------------------------------------------------------
# trainer: reference precompute, video-only and mixed batches
# ------------------------------------------------------------------------------------------


def make_trainer(tiny_dir, processor, dataset, out, **overrides):
    from ifpo.train.trainer import IfpoDPOTrainer
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText
    from trl import DPOConfig

    args = DPOConfig(
        output_dir=str(out), use_cpu=True, bf16=False, activation_checkpointing=False, max_length=None,
        report_to="none", per_device_train_batch_size=4, per_device_eval_batch_size=4, learning_rate=5e-3,
        lr_scheduler_type="constant", logging_steps=1, save_strategy="no", seed=0, dataloader_num_workers=0,
        **overrides,
    )
    model = AutoModelForImageTextToText.from_pretrained(tiny_dir)
    return IfpoDPOTrainer(
        model=model,
        args=args,
        data_collator=DataCollatorForVideoPreference(processor, budget=TINY_BUDGET),
        train_dataset=dataset,
        processing_class=processor,
        peft_config=LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0),
    )


def test_precomputed_reference_matches_on_the_fly(tiny_dir, processor, pairs, tmp_path):
    from datasets import Dataset
    from ifpo.train.ref_logps import on_the_fly_ref_logps, precompute_ref_logps

    rows = pick(pairs, n_video=4, n_image=3, n_text=3)
    dataset = Dataset.from_list(rows)
    trainer = make_trainer(tiny_dir, processor, dataset, tmp_path / "out")
    # Make the adapter non-trivial, so "adapter disabled" is really checked against the base model.
    with torch.no_grad():
        for name, param in trainer.model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 0.5)
    collator = trainer.data_collator
    cache = tmp_path / "cache"
    with_ref, cache_file, hit = precompute_ref_logps(trainer, dataset, collator, pairs_fingerprint=pairs.fingerprint,
                                                     cache_dir=cache, batch_size=4, budget=TINY_BUDGET)
    assert not hit and cache_file.is_file()
    precomputed = torch.tensor([[r["ref_chosen_logps"], r["ref_rejected_logps"]] for r in with_ref])
    one_by_one = torch.cat([on_the_fly_ref_logps(trainer, [row], collator) for row in rows])
    torch.testing.assert_close(precomputed, one_by_one, atol=2e-3, rtol=1e-5)

    # Inside a step: TRL's loss with the precomputed values equals TRL's loss with its own reference pass.
    trainer.precompute_ref_logps = True
    batch = trainer._prepare_inputs(collator([dict(r) for r in with_ref.select(range(4))]))
    loss_pre = trainer.compute_loss(trainer.model, dict(batch)).item()
    trainer.precompute_ref_logps = False
    plain = {k: v for k, v in batch.items() if k not in ("ref_chosen_logps", "ref_rejected_logps")}
    loss_fly = trainer.compute_loss(trainer.model, plain).item()
    assert loss_pre == pytest.approx(loss_fly, abs=1e-5)

    # Same model, data and processor: the cache answers; another media budget is another cache entry.
    _, again, hit = precompute_ref_logps(trainer, dataset, collator, pairs_fingerprint=pairs.fingerprint,
                                         cache_dir=cache, batch_size=2, budget=TINY_BUDGET)
    assert hit and again == cache_file
    other = MediaBudget(**{**TINY_BUDGET.__dict__, "video_fps": 1.0})
    _, other_file, hit = precompute_ref_logps(trainer, dataset, collator, pairs_fingerprint=pairs.fingerprint,
                                              cache_dir=cache, batch_size=4, budget=other)
    assert not hit and other_file != cache_file


@pytest.mark.parametrize("mix", [{"n_video": 8}, {"n_video": 1, "n_image": 1, "n_text": 2}], ids=["video-only", "mixed"])
def test_video_only_and_mixed_batches_train(tiny_dir, processor, pairs, tmp_path, mix):
    from datasets import Dataset
    from ifpo.train.ref_logps import precompute_ref_logps

    dataset = Dataset.from_list(pick(pairs, **mix))
    trainer = make_trainer(tiny_dir, processor, dataset, tmp_path / "out", max_steps=2)
    with_ref, _, _ = precompute_ref_logps(trainer, dataset, trainer.data_collator, pairs_fingerprint=str(mix),
                                          cache_dir=tmp_path / "cache", batch_size=4, budget=TINY_BUDGET)
    trainer.use_precomputed_ref_logps(with_ref)
    before = lora_b(trainer.model)
    trainer.train()
    after = lora_b(trainer.model)
    assert any(not torch.equal(before[n], after[n]) for n in before)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(map(lambda x: x == x, losses))  # logged, not NaN
    kinds = {k for h in trainer.state.log_history for k in h if k.startswith("rewards/accuracies/")}
    assert kinds  # per-kind accuracy is logged


# ------------------------------------------------------------------------------------------
# end to end: accelerate launch, resume, two ranks
# ------------------------------------------------------------------------------------------


def run(cmd: list[str], cwd: Path, timeout: int = 600, **env) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env={**ENV, **env}, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def adapter(out: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(out / "adapter_model.safetensors"))


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """``accelerate launch train/dpo.py recipes/tiny.yaml``, tracked with wandb (offline)."""
    work = tmp_path_factory.mktemp("run")
    out = work / "full"
    run([*LAUNCH, str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"), "--output_dir", str(out),
         "--report_to", "wandb", "--eval_hook", "null"], cwd=work)  # the default hook: test_eval_hook_defaults.py
    return work, out


@pytest.mark.slow
def test_tiny_recipe_trains_and_saves(tiny_run):
    work, out = tiny_run
    logs = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    losses = [x["loss"] for x in logs if "loss" in x]
    assert losses and losses[-1] < losses[0]
    for key in ("rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies",
                "rewards/accuracies/stripped", "rewards/accuracies/corrupted"):
        assert any(key in x for x in logs), key
    # LoRA B starts at zero: non-zero B means the adapter learnt.
    weights = adapter(out)
    assert any("lora_B" in n and w.abs().max() > 0 for n, w in weights.items())
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["eval"]["eval_rewards/accuracies"] >= 0.9
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["packages"]["trl"] and manifest["data"]["fingerprint"] and "commit" in manifest["git"]
    assert manifest["reference_log_probs_cache"] and Path(manifest["reference_log_probs_cache"]).is_file()
    assert (out / "recipe.resolved.yaml").is_file() and (out / "processor_config.json").is_file()
    assert list((work / "wandb").glob("offline-run-*")) or list(out.glob("wandb/offline-run-*"))


@pytest.mark.slow
def test_resume_matches_uninterrupted_run(tiny_run):
    work, full = tiny_run
    out = work / "resumed"
    # Launched exactly like the uninterrupted run, apart from the interruption and the resume.
    same = [*LAUNCH, str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"), "--output_dir", str(out),
            "--report_to", "wandb", "--eval_hook", "null"]
    # The uninterrupted run's sample pairs with its reference log-probs cache (.ifpo_cache, keyed by the model,
    # pairs and media budget): the same values, read instead of computed again (about 20 s of 71 pairs here).
    shutil.copytree(full / "sample_pairs", out / "sample_pairs")
    first = run([*same, "--interrupt_after_steps", "10"], cwd=work)
    assert "reference log-probs read from" in first.stderr
    assert (out / "checkpoint-10").is_dir() and not (out / "adapter_model.safetensors").exists()
    run([*same, "--resume"], cwd=work)
    expected, got = adapter(full), adapter(out)
    assert expected.keys() == got.keys()
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], atol=1e-5, rtol=1e-4)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """``torchrun --nproc_per_node 2 train/dpo.py recipes/tiny.yaml``, 3 steps: one launch for the two tests below."""
    work = tmp_path_factory.mktemp("ddp")
    out = work / "ddp"
    done = run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533",
                str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"), "--output_dir", str(out),
                "--max_steps", "3", "--log_pair_ids", "--eval_pairs", "null", "--save_strategy", "no",
                # 3 steps of 2 pairs per rank over 12 pairs: one epoch, so the ranks' pairs must be disjoint (the
                # recipe's 71 pairs and 8 a step cost reference log-probs and steps the check does not need)
                "--max_pairs", "12", "--per_device_train_batch_size", "2",
                "--eval_hook", "null"], cwd=work,
               OMP_NUM_THREADS="1")
    return out, done


@pytest.mark.slow
def test_two_ranks_see_different_pairs(two_ranks):
    out, done = two_ranks
    seen = [json.loads((out / f"seen_pairs.rank{r}.json").read_text()) for r in (0, 1)]
    assert len(seen[0]) == len(seen[1]) == 3 * 2
    assert len(set(seen[0]) | set(seen[1])) == 12
    assert not set(seen[0]) & set(seen[1])
    assert json.loads((out / "run_manifest.json").read_text())["world_size"] == 2
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_two_processes_log_each_line_once(two_ranks):
    """ifpo's INFO lines come from the first process only (each appeared twice); moved from test_trackers.py to share
    this launch."""
    _, done = two_ranks
    lines = [re.sub(r"^\S+ \S+ ", "", line) for line in done.stderr.splitlines() if " ifpo." in line]
    assert sum("ifpo.dpo: pairs:" in line for line in lines) == 1
    assert sum("ifpo.dpo: lengths:" in line for line in lines) == 1
    assert sum("ifpo.dpo: done in" in line for line in lines) == 1


# The eval hook's reports at step 0 and each checkpoint, and their arrival in a tracker's (tensorboard's) files:
# tests/test_eval_hook_defaults.py, on the run that checks the recipe's default hook (one launch for both).
