"""DPO for Qwen3-VL with LoRA on image, video and text preference pairs.

    accelerate launch train/dpo.py recipes/qwen3vl8b.yaml [--key value ...]
    accelerate launch train/dpo.py recipes/tiny.yaml          # CPU, tiny model, sample pairs, about a minute

Reads top to bottom: parse -> load -> build -> train -> save. Settings resolve as ifpo defaults <
recipe < command line (``train/recipe.py``; ``--help`` lists ifpo's keys). Outputs in ``output_dir``:
the adapter (and ``merged/`` with ``merge_adapter: true``), the processor, ``recipe.resolved.yaml``,
``run_manifest.json`` (versions, git commit, data and model fingerprints), ``lengths.json``,
``log_history.jsonl`` and ``metrics.json``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script (accelerate launch / torchrun train/dpo.py): make the repository importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

logger = logging.getLogger("ifpo.dpo")


def main(argv: list[str]) -> int:
    started = time.time()
    if argv and argv[0] in ("-h", "--help"):
        from ifpo.train.recipe import recipe_help

        print(recipe_help())
        return 0

    # ---- 1. parse ----------------------------------------------------------------------------
    from ifpo.train.recipe import RecipeError, parse_recipe

    try:
        recipe = parse_recipe(argv)
    except RecipeError as exc:
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2
    from ifpo.train.lengths import OverlongPairsError  # after the parse: these import torch and TRL
    from ifpo.train.pairs import PairsError
    cfg, args = recipe.ifpo, recipe.args
    from ifpo.train.callbacks import setup_logging

    setup_logging()  # once per job, not once per process
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)

    import torch
    from ifpo.train import callbacks as cb
    from ifpo.train.lengths import check_lengths, measure_lengths, summarise
    from ifpo.train.model import load_processor_and_model, lora_config
    from ifpo.train.pairs import load_pairs, writable
    from ifpo.train.ref_logps import precompute_ref_logps
    from ifpo.train.trainer import IfpoDPOTrainer
    from ifpo.train.vision import DataCollatorForVideoPreference
    from transformers import set_seed

    set_seed(args.seed)
    from ifpo.train.run_guard import RunGuardError, check_identity, identity, prepare_output_dir

    try:
        # An output_dir holding a run is refused without resume/overwrite; resume picks the newest
        # complete checkpoint (an interrupted save is skipped, and said so).
        checkpoint = prepare_output_dir(out, resume=cfg.resume, overwrite=cfg.overwrite, prog="train/dpo.py")
    except RunGuardError as exc:
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2

    # ---- 2. load: model, processor, pairs -----------------------------------------------------
    try:
        processor, model = load_processor_and_model(cfg, args)
    except OSError as exc:  # not a local folder, not reachable on the hub, or offline
        print(f"train/dpo.py: error: cannot load model {cfg.model_name_or_path!r}: {exc}", file=sys.stderr)
        return 2
    try:
        pairs = load_pairs(cfg.pairs, output_dir=out, split=cfg.pairs_split, media_root=cfg.media_root,
                           max_pairs=cfg.max_pairs)
        if cfg.eval_pairs in (None, "train"):
            eval_pairs = pairs if cfg.eval_pairs == "train" else None
        else:
            eval_pairs = load_pairs(cfg.eval_pairs, output_dir=out, split=cfg.pairs_split, media_root=cfg.media_root)
    except PairsError as exc:
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2
    for pair_set in {id(s): s for s in (pairs, eval_pairs) if s is not None}.values():
        for line in pair_set.left_out:
            print(f"train/dpo.py: {line}; left out", file=sys.stderr)
        if pair_set.left_out:
            print(f"train/dpo.py: {len(pair_set.left_out)} pair(s) of {pair_set.source} left out: media that do not "
                  "decode (named above)", file=sys.stderr)
    logger.info("pairs: %d from %s (fingerprint %s)", len(pairs.dataset), pairs.source, pairs.fingerprint[:12])
    try:
        # A resumed run must train on what it started on: same pairs (content and media), same settings.
        check_identity(out, identity(recipe.resolved, pairs.fingerprint), resume=cfg.resume)
    except RunGuardError as exc:
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2

    # ---- 3. build: collator, length check, trainer, reference log-probs -------------------------
    budget = cfg.media_budget()
    collator = DataCollatorForVideoPreference(processor, budget=budget)
    lengths = measure_lengths(pairs.dataset, collator)
    try:
        dropped = check_lengths(lengths, cfg.max_length, cfg.overlong, out / "lengths.json")
    except OverlongPairsError as exc:  # overlong: error refuses the input before training (exit 2)
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2
    train_dataset = pairs.dataset
    if dropped:
        logger.warning("dropping %d pair(s) over max_length %s: %s", len(dropped), cfg.max_length, ", ".join(dropped))
        keep = set(pairs.dataset["pair_id"]) - set(dropped)
        train_dataset = train_dataset.filter(lambda row: row["pair_id"] in keep)
    eval_dataset = None
    if eval_pairs is not None:
        eval_dataset = train_dataset if eval_pairs is pairs else eval_pairs.dataset
    logger.info("lengths: %s", summarise(lengths))

    timer = cb.StepTimerCallback()
    callbacks = [cb.JsonlLogCallback(out / "log_history.jsonl"), timer]
    if cfg.interrupt_after_steps:
        callbacks.append(cb.InterruptCallback(cfg.interrupt_after_steps))
    trainer = IfpoDPOTrainer(
        model=model,
        args=args,
        data_collator=collator,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=processor,
        peft_config=lora_config(cfg),
        callbacks=callbacks,
        shared_prompt=cfg.shared_prompt,
        media_guard=cfg.media_guard,
    )

    from ifpo.train.distributed import DistributedSetupError, adapter_check_callback
    from ifpo.train.distributed import prepare as prepare_distributed

    try:
        # What the launch really runs (recorded in the manifest); settings that would lose the adapter or fall
        # back to DDP without a word are refused; sharded weights get media-aligned vision passes.
        distributed = prepare_distributed(trainer, use_lora=cfg.use_lora)
    except DistributedSetupError as exc:
        print(f"train/dpo.py: error: {exc}", file=sys.stderr)
        return 2
    adapter_check = adapter_check_callback(cfg.use_lora)
    if adapter_check is not None:
        trainer.add_callback(adapter_check)  # every checkpoint's adapter must hold tensors
    # ifpo's own keys (LoRA, pairs, media budgets, eval hook) beside TrainingArguments in every tracker's config.
    cb.RecipeConfigCallback(dataclasses.asdict(cfg)).attach(trainer)
    if cfg.eval_hook is not None:
        from ifpo.eval_hooks.callback import IfpoEvalCallback

        # Scores the base weights (step 0), every N steps / each save and the final weights with the
        # verifier suite; metrics go to the trainer's trackers through the trainer's own log path.
        IfpoEvalCallback.from_config(cfg.eval_hook_config(), output_dir=out).attach(trainer)

    ref_cache = None
    if cfg.precompute_ref_log_probs:
        if cfg.ref_cache_dir:
            cache_dir = Path(cfg.ref_cache_dir)
        elif pairs.directory is not None and writable(pairs.directory / ".ifpo_cache"):
            cache_dir = pairs.directory / ".ifpo_cache"
        else:
            cache_dir = out / "ref_logps_cache"
        batch_size = cfg.precompute_ref_batch_size or args.per_device_eval_batch_size
        # Cached values are per pair, so a cache made before pairs were dropped still serves the rest.
        fingerprint = pairs.fingerprint
        t0 = time.perf_counter()
        train_dataset, ref_cache, hit = precompute_ref_logps(
            trainer, train_dataset, collator, pairs_fingerprint=fingerprint, cache_dir=cache_dir,
            batch_size=batch_size, budget=budget)
        if eval_dataset is not None:
            if eval_pairs is pairs:
                eval_dataset = train_dataset
            else:
                eval_dataset, _, _ = precompute_ref_logps(
                    trainer, eval_dataset, collator, pairs_fingerprint=eval_pairs.fingerprint, cache_dir=cache_dir,
                    batch_size=batch_size, budget=budget)
        trainer.use_precomputed_ref_logps(train_dataset, eval_dataset)
        logger.info("reference log-probs %s %s in %.1fs", "read from" if hit else "computed into", ref_cache,
                    time.perf_counter() - t0)

    # ---- 4. train ------------------------------------------------------------------------------
    resume = str(checkpoint) if cfg.resume else args.resume_from_checkpoint
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    train_result = trainer.train(resume_from_checkpoint=resume)
    metrics = {"train": train_result.metrics, "speed": cb.speed_summary(timer)}
    interrupted = cfg.interrupt_after_steps is not None and trainer.state.global_step < trainer.state.max_steps
    if eval_dataset is not None and not interrupted:
        metrics["eval"] = trainer.evaluate()
    cb.close_trackers(trainer)  # after the last record: one tracker run per job (train/callbacks.py)
    if cfg.log_pair_ids:
        rank = trainer.accelerator.process_index
        (out / f"seen_pairs.rank{rank}.json").write_text(json.dumps(trainer.seen_pair_ids) + "\n", encoding="utf-8")

    # ---- 5. save: adapter (+ merged), processor, resolved recipe, run manifest -----------------
    if not interrupted:
        trainer.save_model(str(out))  # the adapter (or full weights) and the processor, from rank 0
    if trainer.accelerator.is_main_process:
        if cfg.use_lora and not interrupted:
            from ifpo.train.distributed import check_saved_adapter

            check_saved_adapter(out)  # an empty or missing adapter is an error, whatever the backend
        from ifpo.train.manifest import run_manifest
        from ifpo.train.recipe import dump_resolved

        dump_resolved(recipe, out / "recipe.resolved.yaml")
        if cfg.merge_adapter and cfg.use_lora and not interrupted:
            merged = trainer.accelerator.unwrap_model(trainer.model).merge_and_unload()
            merged.save_pretrained(str(out / "merged"))
            processor.save_pretrained(str(out / "merged"))
        manifest = run_manifest(
            recipe=recipe,
            pairs=pairs,
            dropped=dropped,
            lengths=summarise(lengths),
            ref_cache=ref_cache,
            metrics=metrics,
            world_size=trainer.accelerator.num_processes,
            interrupted=interrupted,
            elapsed=time.time() - started,
            distributed=distributed,
        )
        from ifpo.verifiers.io import dumps  # standard JSON: a NaN loss is written as null

        (out / "run_manifest.json").write_text(dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        (out / "metrics.json").write_text(dumps(metrics, indent=2, default=float) + "\n", encoding="utf-8")
    trainer.accelerator.wait_for_everyone()
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    logger.info("done in %.0fs; outputs in %s", time.time() - started, out)
    # docs/exit-codes.md: trained, but pairs were left out (named above and in run_manifest.json): exit 1.
    left_out = sum(len(s.left_out) for s in {id(s): s for s in (pairs, eval_pairs) if s is not None}.values())
    if left_out or dropped:
        print(f"train/dpo.py: exit 1: {left_out} pair(s) left out (media that do not decode), {len(dropped)} "
              f"dropped over max_length", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from ifpo.cli import run_command

    sys.exit(run_command("train/dpo.py", main, sys.argv[1:]))
