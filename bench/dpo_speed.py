"""Step time and peak memory: plain TRL DPOTrainer vs ifpo with precomputed reference log-probs.

    python bench/dpo_speed.py [--steps 12] [--warmup 2] [--batch 8] [--json out.json]

One run on the tiny Qwen3-VL (built offline) and the stand-in sample pairs, LoRA on the language model,
identical hyperparameters. Plain TRL reads images only, so both sides train on the image and text-only
pairs (ifpo also trains videos; a third row times ifpo on all pairs). Each variant runs in a fresh
process so its peak memory is its own: peak RSS on CPU, ``torch.cuda.max_memory_allocated`` on GPU.

Rows:
- ``trl``: ``trl.DPOTrainer`` with its own vision collator; the reference is the adapter-disabled model,
  run in every step;
- ``ifpo``: ``IfpoDPOTrainer`` with ifpo's collator and the reference precomputed once (its one-off cost is
  printed separately), so a step runs the policy forward and backward only;
- ``ifpo-all``: as ``ifpo``, on every pair including videos.

Both ifpo rows run with ``shared_prompt=False``, so this bench keeps measuring the precompute alone;
``bench/shared_prompt_speed.py`` measures the shared-prompt forward (the default) at a prompt-dominated ratio.

Step time is per optimizer step, median after the warm-up steps: ``compute`` (forward, backward,
optimizer) and ``wall`` (also data loading and logging). The target is ifpo >= 25% faster per step.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _peak_memory_mb() -> float:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _variant(name: str, work: str, steps: int, batch: int, threads: int, queue) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # A fixed CPU thread count: OpenMP threads spin-wait when cores are shared, which on a busy machine
    # slows steps several-fold and at random, drowning the difference being measured.
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    from datasets import Dataset
    from ifpo.train.callbacks import StepTimerCallback
    from ifpo.train.pairs import load_pairs
    from ifpo.train.ref_logps import precompute_ref_logps
    from ifpo.train.trainer import IfpoDPOTrainer
    from ifpo.train.vision import DataCollatorForVideoPreference, MediaBudget
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import DPOConfig, DPOTrainer

    work_dir = Path(work)
    budget = MediaBudget(image_min_pixels=4096, image_max_pixels=16384, video_min_pixels=4096,
                         video_max_pixels=16384, video_max_frames=16)
    pairs = load_pairs(str(work_dir / "pairs"), output_dir=work_dir)
    rows = [pairs.dataset[i] for i in range(len(pairs.dataset))]
    if name != "ifpo-all":
        rows = [r for r in rows if not r["videos"]]
    cuda = torch.cuda.is_available()
    args = DPOConfig(
        output_dir=str(work_dir / name), use_cpu=not cuda, bf16=cuda, activation_checkpointing=False,
        max_length=None, report_to="none", per_device_train_batch_size=batch, per_device_eval_batch_size=batch,
        learning_rate=5e-3, lr_scheduler_type="constant", max_steps=steps, logging_steps=steps, save_strategy="no",
        seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )
    processor = AutoProcessor.from_pretrained(work_dir / "tiny")
    processor.tokenizer.padding_side = "left"
    model = AutoModelForImageTextToText.from_pretrained(work_dir / "tiny", dtype=torch.bfloat16 if cuda else None)
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    timer = StepTimerCallback()
    precompute_s = None
    if name == "trl":
        # TRL's own path: the images column holds PIL images (its collator does no loading or resizing),
        # pre-resized to the same pixel budget ifpo applies.
        from ifpo.train.vision import load_image, patch_factor

        factor = patch_factor(processor)
        for r in rows:
            r["images"] = [load_image(p, budget, factor) for p in r["images"]]
            del r["videos"]
        dataset = Dataset.from_list(rows)
        trainer = DPOTrainer(model=model, args=args, train_dataset=dataset, processing_class=processor,
                             peft_config=lora, callbacks=[timer])
    else:
        dataset = Dataset.from_list(rows)
        collator = DataCollatorForVideoPreference(processor, budget=budget)
        trainer = IfpoDPOTrainer(model=model, args=args, data_collator=collator, train_dataset=dataset,
                                 processing_class=processor, peft_config=lora, callbacks=[timer], shared_prompt=False)
        t0 = time.perf_counter()
        with_ref, _, _ = precompute_ref_logps(trainer, dataset, collator, pairs_fingerprint=pairs.fingerprint + name,
                                              cache_dir=work_dir / name / "cache", batch_size=batch, budget=budget)
        precompute_s = time.perf_counter() - t0
        trainer.use_precomputed_ref_logps(with_ref)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    queue.put({
        "variant": name,
        "pairs": len(rows),
        "compute_times": timer.compute_times,
        "wall_times": timer.wall_times,
        "peak_memory_mb": _peak_memory_mb(),
        "precompute_s": precompute_s,
        "device": "cuda" if cuda else "cpu",
    })


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="optimizer steps per variant")
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the median")
    parser.add_argument("--batch", type=int, default=8, help="pairs per step")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per variant (default 1: stable timings)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from ifpo.train.sample_pairs import build_sample_pairs
    from ifpo.train.tiny_model import build_tiny_model

    results = []
    with tempfile.TemporaryDirectory(prefix="ifpo-bench-") as work:
        build_tiny_model(Path(work) / "tiny", seed=0)
        build_sample_pairs(Path(work) / "pairs")
        ctx = mp.get_context("spawn")
        for name in ("trl", "ifpo", "ifpo-all"):
            queue = ctx.Queue()
            proc = ctx.Process(target=_variant, args=(name, work, args.steps, args.batch, args.threads, queue))
            proc.start()
            result = queue.get()
            proc.join()
            if proc.exitcode != 0:
                print(f"{name}: failed with exit code {proc.exitcode}", file=sys.stderr)
                return 1
            results.append(result)

    def median(values):
        kept = values[args.warmup:] or values
        return statistics.median(kept)

    print(f"\nDPO step time, tiny Qwen3-VL, LoRA, batch {args.batch} pairs, {args.steps} steps "
          f"(median after {args.warmup}), device {results[0]['device']}")
    print(f"{'variant':<10} {'pairs':>5} {'compute s/step':>15} {'wall s/step':>12} {'peak MB':>9} {'precompute s':>13}")
    for r in results:
        r["compute_median_s"] = median(r["compute_times"])
        r["wall_median_s"] = median(r["wall_times"])
        pre = "-" if r["precompute_s"] is None else f"{r['precompute_s']:.2f}"
        print(f"{r['variant']:<10} {r['pairs']:>5} {r['compute_median_s']:>15.3f} {r['wall_median_s']:>12.3f} "
              f"{r['peak_memory_mb']:>9.0f} {pre:>13}")
    trl, ifpo = results[0], results[1]
    speedup = 1 - ifpo["wall_median_s"] / trl["wall_median_s"]
    compute_speedup = 1 - ifpo["compute_median_s"] / trl["compute_median_s"]
    saved = trl["wall_median_s"] - ifpo["wall_median_s"]
    amortise = (f"the one-off precompute ({ifpo['precompute_s']:.1f} s) pays for itself after "
                f"{ifpo['precompute_s'] / saved:.1f} steps" if saved > 0 else "no per-step saving to amortise")
    print(f"\nifpo vs trl, same pairs: {speedup:.0%} less wall time per step ({compute_speedup:.0%} less compute); "
          f"target >= 25%: {'met' if speedup >= 0.25 else 'NOT met'}; {amortise}.")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "speedup_wall": speedup,
                                         "speedup_compute": compute_speedup}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
