"""Summarise ``train/dpo.py`` runs made by ``bench/gpu_dpo.sh``: steps/s, tokens/s, MFU, peak GPU memory.

    python bench/dpo_gpu_report.py RUN_DIR [RUN_DIR ...] [--json summary.json] [--peak-tflops 989]

MFU is approximate: model FLOPs per trained token are taken as 2N (forward) + 2N (backward through the
frozen weights to the LoRA adapters; LoRA's own weight gradients are negligible) + 2N more when the
reference runs on the fly, with N the parameter count; attention's quadratic term is left out, so MFU is
understated for long sequences. Peak is the GPU's dense bf16 throughput (989 TFLOPS for H100/H200 SXM;
``--peak-tflops`` or ``PEAK_TFLOPS`` for others). Tokens are real (unpadded) tokens of chosen and rejected
sequences, vision tokens included, from TRL's ``num_tokens``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def parameter_count(config_path: Path) -> int:
    """Parameters of the model shape in ``config_path``, counted on the meta device (no memory)."""
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    config = {k: v for k, v in json.loads(config_path.read_text()).items() if not k.startswith("_") and k != "model_type"}
    with torch.device("meta"):
        model = Qwen3VLForConditionalGeneration(Qwen3VLConfig(**config))
    return sum(p.numel() for p in model.parameters())


def summarise(run: Path, peak_tflops: float) -> dict:
    manifest = json.loads((run / "run_manifest.json").read_text())
    resolved = (run / "recipe.resolved.yaml").read_text()
    logs = [json.loads(line) for line in (run / "log_history.jsonl").read_text().splitlines()]
    tokens = [x["num_tokens"] for x in logs if "num_tokens" in x]
    speed = manifest["metrics"]["speed"]
    steps = speed["steps_timed"]
    tokens_per_step = (tokens[-1] / len(tokens)) if tokens else float("nan")
    step_s = speed["step_wall_s"]
    model = manifest["model"]
    n = parameter_count(Path(model.removeprefix("random:"))) if model.startswith("random:") else None
    precompute = "precompute_ref_log_probs: true" in resolved
    flops_per_token = (4 if precompute else 6) * n if n else None
    tokens_per_s = tokens_per_step / step_s if step_s else float("nan")
    mfu = flops_per_token * tokens_per_s / (peak_tflops * 1e12) if flops_per_token else None
    return {
        "run": str(run),
        "model": model,
        "parameters": n,
        "reference": "precomputed" if precompute else "on the fly",
        # tokens_per_step counts TRL's unshared rows either way, so a shared-prompt row's tokens/s is effective.
        "shared_prompt": "shared_prompt: false" not in resolved,
        "steps_timed": steps,
        "steps_per_s": round(1 / step_s, 3) if step_s else None,
        "tokens_per_step": round(tokens_per_step),
        "tokens_per_s": round(tokens_per_s),
        "mfu": None if mfu is None else round(mfu, 4),
        "peak_gpu_memory_gb": speed.get("peak_gpu_memory_gb"),
        "gpu": speed.get("gpu"),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Summarise bench/gpu_dpo.sh runs.")
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--peak-tflops", type=float, default=float(os.environ.get("PEAK_TFLOPS", 989)))
    args = parser.parse_args(argv)
    rows = [summarise(run, args.peak_tflops) for run in args.runs]
    print(f"{'run':<28} {'reference':<12} {'shared':<7} {'steps/s':>8} {'tokens/s':>9} {'MFU':>6} {'peak GB':>8}")
    for r in rows:
        mfu = "-" if r["mfu"] is None else f"{r['mfu']:.1%}"
        print(f"{Path(r['run']).name:<28} {r['reference']:<12} {'yes' if r['shared_prompt'] else 'no':<7} "
              f"{r['steps_per_s']:>8} {r['tokens_per_s']:>9} "
              f"{mfu:>6} {r['peak_gpu_memory_gb']!s:>8}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
