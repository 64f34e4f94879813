"""GRPO for Qwen3-VL with LoRA on items (text, image, video), rewarded by the verifier suite (RLVR).

    accelerate launch train/grpo.py recipes/qwen3vl8b_grpo.yaml [--key value ...]
    accelerate launch train/grpo.py recipes/tiny_grpo.yaml          # CPU, tiny model, sample items, a few minutes

Reads top to bottom: parse -> load -> build -> train -> save. Settings resolve as ifpo defaults <
recipe < command line (``train/grpo_recipe.py``; ``--help`` lists ifpo's keys). The prompt is the
item's system message, media and instruction; every completion is scored by
``ChecklistEvaluator.evaluate_many`` and turned into the recipe's rewards (``train/rewards.py``).
Outputs in ``output_dir``: the adapter (and ``merged/`` with ``merge_adapter: true``), the processor,
``recipe.resolved.yaml``, ``run_manifest.json``, ``log_history.jsonl`` (rewards per function,
``checklist/*`` pass rates, IPR, unjudged counts, completion lengths, KL), ``rollouts.jsonl``
(sample rollouts with their verdicts) and ``metrics.json``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script (accelerate launch / torchrun train/grpo.py): make the repository importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

logger = logging.getLogger("ifpo.grpo")


def main(argv: list[str]) -> int:
    started = time.time()
    if argv and argv[0] in ("-h", "--help"):
        from ifpo.train.grpo_recipe import recipe_help

        print(recipe_help())
        return 0

    # ---- 1. parse ----------------------------------------------------------------------------
    from ifpo.train.grpo_recipe import parse_grpo_recipe
    from ifpo.train.recipe import RecipeError

    try:
        recipe = parse_grpo_recipe(argv)
    except RecipeError as exc:
        print(f"train/grpo.py: error: {exc}", file=sys.stderr)
        return 2
    cfg, args = recipe.ifpo, recipe.args
    from ifpo.train.callbacks import setup_logging

    setup_logging()  # once per job, not once per process
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)

    import torch
    from accelerate import PartialState
    from ifpo.train import callbacks as cb
    from ifpo.train.grpo_trainer import (
        IfpoGRPOTrainer,
        build_prompt_dataset,
        grpo_peft_config,
        item_media_kind,
        load_training_items,
    )
    from ifpo.train.model import load_processor_and_model
    from ifpo.train.rewards import ChecklistReward
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.judge import make_judge
    from transformers import set_seed

    set_seed(args.seed)
    from ifpo.train.run_guard import RunGuardError, check_identity, identity, prepare_output_dir

    try:
        # An output_dir holding a run is refused without resume/overwrite; resume picks the newest
        # complete checkpoint (an interrupted save is skipped, and said so).
        checkpoint = prepare_output_dir(out, resume=cfg.resume, overwrite=cfg.overwrite, prog="train/grpo.py")
    except RunGuardError as exc:
        print(f"train/grpo.py: error: {exc}", file=sys.stderr)
        return 2

    # ---- 2. load: model, processor, items, judge -----------------------------------------------
    try:
        left_out: list[str] = []
        items, media_root, fingerprint = load_training_items(cfg, left_out)
        judge = make_judge(cfg.judge) if cfg.judge else None
    except (ValueError, FileNotFoundError) as exc:
        print(f"train/grpo.py: error: {exc}", file=sys.stderr)
        return 2
    try:
        processor, model = load_processor_and_model(cfg, args)
    except OSError as exc:  # not a local folder, not reachable on the hub, or offline
        print(f"train/grpo.py: error: cannot load model {cfg.model_name_or_path!r}: {exc}", file=sys.stderr)
        return 2
    dataset = build_prompt_dataset(items)
    kinds = dict(Counter(item_media_kind(item) for item in items))
    logger.info("items: %d (%s) from %s (fingerprint %s)", len(items), kinds, cfg.items, fingerprint[:12])
    try:
        # A resumed run must train on what it started on: same items (content and media), same settings.
        check_identity(out, identity(recipe.resolved, fingerprint), resume=cfg.resume)
    except RunGuardError as exc:
        print(f"train/grpo.py: error: {exc}", file=sys.stderr)
        return 2

    # ---- 3. build: evaluator, rewards, trainer --------------------------------------------------
    # The task gate costs a judge call per rollout and only tcsr reads it.
    uses_gate = any(r.split(":")[0] == "tcsr" for r in cfg.rewards)
    evaluator = ChecklistEvaluator(judge, media_root=media_root, task_gate=uses_gate, mode=cfg.check_mode)
    reward = ChecklistReward(
        items, evaluator, rewards=cfg.rewards, unjudged=cfg.unjudged, type_weights=cfg.constraint_type_weights,
        empty=cfg.empty_completions, rollouts_path=out / "rollouts.jsonl", rollouts_every=cfg.rollouts_every,
        rollouts_per_step=cfg.rollouts_per_step, is_main_process=PartialState().is_main_process,
    )
    rollouts = None
    if cfg.rollout_backend == "vllm_server":
        from ifpo.train.vllm_rollouts import RolloutServerError, VllmServerRollouts

        rollouts = VllmServerRollouts(cfg.vllm_url, cfg.vllm_adapter_dir or out / "vllm_adapters",
                                      sync_steps=cfg.vllm_sync_steps, api_key_env=cfg.vllm_api_key_env,
                                      timeout_s=cfg.vllm_timeout_s, reconnect_s=cfg.vllm_reconnect_s)
        try:
            logger.info("rollouts: vLLM server %s serving %s", cfg.vllm_url, rollouts.wait_ready())
        except RolloutServerError as exc:
            print(f"train/grpo.py: error: {exc}", file=sys.stderr)
            return 2
    timer = cb.StepTimerCallback()
    callbacks = [cb.JsonlLogCallback(out / "log_history.jsonl"), timer]
    if cfg.interrupt_after_steps:
        callbacks.append(cb.InterruptCallback(cfg.interrupt_after_steps))
    trainer = IfpoGRPOTrainer(
        model=model,
        args=args,
        reward_funcs=reward.reward_funcs(),
        train_dataset=dataset,
        processing_class=processor,
        peft_config=grpo_peft_config(cfg),
        callbacks=callbacks,
        budget=cfg.media_budget(),
        media_root=media_root,
        shared_prompt=cfg.shared_prompt,
        media_guard=cfg.media_guard,
        rollouts=rollouts,
    )
    cb.concise_console(trainer, cb.GRPO_CONSOLE_KEYS)  # a short console line per step; everything in log_history.jsonl
    from ifpo.train.distributed import DistributedSetupError, adapter_check_callback
    from ifpo.train.distributed import prepare as prepare_distributed

    try:
        # What the launch really runs (recorded in the manifest); settings that would lose the adapter or fall
        # back to DDP without a word are refused; sharded weights get media-aligned vision passes.
        distributed = prepare_distributed(trainer, use_lora=cfg.use_lora)
    except DistributedSetupError as exc:
        print(f"train/grpo.py: error: {exc}", file=sys.stderr)
        return 2
    adapter_check = adapter_check_callback(cfg.use_lora)
    if adapter_check is not None:
        trainer.add_callback(adapter_check)  # every checkpoint's adapter must hold tensors
    # ifpo's own keys (LoRA, pairs, media budgets, eval hook) beside TrainingArguments in every tracker's config.
    cb.RecipeConfigCallback(dataclasses.asdict(cfg)).attach(trainer)
    if cfg.eval_hook is not None:
        from ifpo.eval_hooks.callback import IfpoEvalCallback

        # The same checkpoint evaluation as DPO: step 0, every N steps / each save, the final weights.
        IfpoEvalCallback.from_config(cfg.eval_hook_config(), output_dir=out).attach(trainer)

    # ---- 4. train ------------------------------------------------------------------------------
    resume = str(checkpoint) if cfg.resume else args.resume_from_checkpoint
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    train_result = trainer.train(resume_from_checkpoint=resume)
    interrupted = cfg.interrupt_after_steps is not None and trainer.state.global_step < trainer.state.max_steps
    metrics = {
        "train": train_result.metrics,
        "speed": cb.speed_summary(timer),
        "reward": {
            "evaluations": reward.evaluations,
            "rollouts_scored": reward.rollouts_scored,
            "seconds_per_rollout": reward.seconds / reward.rollouts_scored if reward.rollouts_scored else None,
            "judge": judge.stats.as_dict() if judge is not None else None,
        },
    }

    # ---- 5. save: adapter (+ merged), processor, resolved recipe, run manifest -----------------
    if not interrupted:
        trainer.save_model(str(out))
    if trainer.accelerator.is_main_process:
        if cfg.use_lora and not interrupted:
            from ifpo.train.distributed import check_saved_adapter

            check_saved_adapter(out)  # an empty or missing adapter is an error, whatever the backend
        from ifpo.train.manifest import git_state, package_versions
        from ifpo.train.recipe import dump_resolved

        dump_resolved(recipe, out / "recipe.resolved.yaml")
        if cfg.merge_adapter and cfg.use_lora and not interrupted:
            merged = trainer.accelerator.unwrap_model(trainer.model).merge_and_unload()
            merged.save_pretrained(str(out / "merged"))
            processor.save_pretrained(str(out / "merged"))
        manifest = {
            "entry": "train/grpo.py",
            "recipe": str(recipe.path),
            "model": cfg.model_name_or_path,
            "git": git_state(),
            "packages": package_versions(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "world_size": trainer.accelerator.num_processes,
            "distributed": distributed,  # the backend really run (train/distributed.py, describe)
            "data": {"items": cfg.items, "media_root": str(media_root), "fingerprint": fingerprint,
                     "n_items": len(items), "by_media": kinds},
            "rewards": cfg.rewards,
            "unjudged": cfg.unjudged,
            "empty_completions": cfg.empty_completions,
            "judge": cfg.judge,
            "interrupted": interrupted,
            "left_out_undecodable_media": left_out,
            "metrics": metrics,
            "elapsed_s": round(time.time() - started, 1),
        }
        from ifpo.verifiers.io import dumps  # standard JSON: a NaN loss is written as null

        (out / "run_manifest.json").write_text(dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        (out / "metrics.json").write_text(dumps(metrics, indent=2, default=float) + "\n", encoding="utf-8")
    trainer.accelerator.wait_for_everyone()
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    if judge is not None and judge.stats.summary():
        # Loud at the end: rewards of failed judge calls followed the recipe's unjudged policy.
        print(f"train/grpo.py: {judge.stats.summary()}", file=sys.stderr)
    logger.info("done in %.0fs; outputs in %s", time.time() - started, out)
    if left_out:
        # docs/exit-codes.md: trained, but items were left out (named above and in run_manifest.json).
        print(f"train/grpo.py: exit 1: {len(left_out)} item(s) left out: media that do not decode", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from ifpo.cli import run_command

    sys.exit(run_command("train/grpo.py", main, sys.argv[1:]))
