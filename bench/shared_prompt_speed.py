"""Step time and peak memory at a prompt-dominated ratio: plain TRL vs ifpo vs ifpo with the shared prompt.

    nice -n 10 python bench/shared_prompt_speed.py [--steps 8] [--warmup 2] [--batch 2] [--json out.json]

VCIFBench prompts are about 6.5k tokens (720p video at 0.5 fps) against a few hundred response tokens,
so a DPO step is mostly prompt. This bench reproduces that ratio on CPU with a widened tiny Qwen3-VL
(text 256 wide, 4 layers; vision 64 wide) and the sample *image* pairs, each image upscaled to a fixed
pixel budget so the prompt is ~1.6k tokens (mostly vision) against ~70 response tokens per answer
(the ratio is measured and printed). Rows, each in a fresh process (its own peak RSS; on GPU
``torch.cuda.max_memory_allocated``):

- ``trl``: ``trl.DPOTrainer`` with its own vision collator; reference = adapter-disabled forward each step;
- ``ifpo``: ``IfpoDPOTrainer``, reference log-probs precomputed (one-off cost printed), ``shared_prompt: false``;
- ``ifpo-shared``: as ``ifpo`` with the shared-prompt forward (the default);
- ``grpo`` / ``grpo-shared``: the GRPO loss forward + backward (policy log-probs of ``num_generations`` = 8
  completions of one image prompt, LoRA) with and without sharing the prompt;
- ``grpo-kv``: the same through the alternative to packing, a prompt forward whose key/value cache (in the
  graph) the 8 completions extend (:func:`kv_cache_logps`). The summed log-probs of the three GRPO rows are
  printed: they must agree.

Step time is per optimizer step, median after the warm-up steps: ``compute`` (forward, backward,
optimizer) and ``wall`` (also data loading). Targets (issue 14): ifpo-shared >= 2x faster than trl and
>= 1.5x faster than ifpo per step.
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

# Widths of the bench model (a TinySpec): per-token compute large enough that the token count, not Python
# overhead, sets the step time.
IMAGE_PIXELS = 1536 * 1024  # 1536 vision tokens per image (32x32 pixels per merged token)
# The processor's own limits must admit that size: TRL's collator lets the processor resize (ifpo's does not),
# so its cap sits above the budget and both sides see the same pixels and the same tokens.
SPEC = {"text_hidden_size": 256, "text_intermediate_size": 768, "text_layers": 4, "text_heads": 4,
        "text_kv_heads": 2, "vision_hidden_size": 64, "vision_intermediate_size": 128, "vision_depth": 2,
        "vision_heads": 2, "image_max_pixels": 2 * IMAGE_PIXELS}
GENERATIONS = 8


def _peak_memory_mb() -> float:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _setup(threads: int):
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # A fixed CPU thread count: OpenMP threads spin-wait when cores are shared, which slows steps at random.
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import torch

    torch.set_num_threads(threads)
    return torch


def _budget():
    from ifpo.train.vision import MediaBudget

    return MediaBudget(image_min_pixels=IMAGE_PIXELS, image_max_pixels=IMAGE_PIXELS)


def _lora():
    from peft import LoraConfig

    return LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])


def _image_rows(work_dir: Path, n: int):
    from ifpo.train.pairs import load_pairs

    pairs = load_pairs(str(work_dir / "pairs"), output_dir=work_dir)
    rows = [pairs.dataset[i] for i in range(len(pairs.dataset))]
    return pairs, [r for r in rows if r["images"] and not r["videos"]][:n]


def _cpu_timer():
    """Per optimizer step, this process's CPU time from step begin to step end (forward, backward, optimizer).

    With one thread per variant that is the compute time free of other jobs' load, which on a shared machine
    inflates wall times at random.
    """
    from transformers import TrainerCallback

    class CpuTimer(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []
            self._begin: float | None = None

        def on_step_begin(self, args, state, control, **kwargs):
            self._begin = time.process_time()

        def on_step_end(self, args, state, control, **kwargs):
            if self._begin is not None:
                self.times.append(time.process_time() - self._begin)

    return CpuTimer()


def _dpo_variant(name: str, work: str, steps: int, batch: int, threads: int, queue) -> None:
    torch = _setup(threads)
    from datasets import Dataset
    from ifpo.train.callbacks import StepTimerCallback
    from ifpo.train.ref_logps import precompute_ref_logps
    from ifpo.train.trainer import IfpoDPOTrainer
    from ifpo.train.vision import DataCollatorForVideoPreference, load_image, patch_factor
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import DPOConfig, DPOTrainer

    work_dir = Path(work)
    budget = _budget()
    pairs, rows = _image_rows(work_dir, steps * batch)
    cuda = torch.cuda.is_available()
    args = DPOConfig(
        output_dir=str(work_dir / name), use_cpu=not cuda, bf16=cuda, activation_checkpointing=False,
        max_length=None, report_to="none", per_device_train_batch_size=batch, per_device_eval_batch_size=batch,
        learning_rate=5e-4, lr_scheduler_type="constant", max_steps=steps, logging_steps=steps, save_strategy="no",
        seed=0, dataloader_num_workers=0, disable_tqdm=True,
    )
    processor = AutoProcessor.from_pretrained(work_dir / "tiny")
    processor.tokenizer.padding_side = "left"
    model = AutoModelForImageTextToText.from_pretrained(work_dir / "tiny", dtype=torch.bfloat16 if cuda else None,
                                                        attn_implementation="sdpa")
    timer = StepTimerCallback()
    cpu = _cpu_timer()
    precompute_s = None
    collator = DataCollatorForVideoPreference(processor, budget=budget)
    probe = collator([dict(rows[0])])
    prompt_tokens = int((probe["attention_mask"][0].bool() & ~probe["completion_mask"][0].bool()).sum())
    response_tokens = int(probe["completion_mask"].sum(dim=1).float().mean())
    if name == "trl":
        # TRL's own path: PIL images (its collator does no loading or resizing), pre-resized to the same budget.
        factor = patch_factor(processor)
        for r in rows:
            r["images"] = [load_image(p, budget, factor) for p in r["images"]]
            del r["videos"]
        trainer = DPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=processor,
                             peft_config=_lora(), callbacks=[timer, cpu])
        # What TRL's own collator makes of the first pair (its processor may resize: it must not shrink the prompt).
        probe = trainer.data_collator([dict(trainer.train_dataset[0])])
        prompt_tokens = int((probe["attention_mask"][0].bool() & ~probe["completion_mask"][0].bool()).sum())
        response_tokens = int(probe["completion_mask"].sum(dim=1).float().mean())
    else:
        dataset = Dataset.from_list(rows)
        trainer = IfpoDPOTrainer(model=model, args=args, data_collator=collator, train_dataset=dataset,
                                 processing_class=processor, peft_config=_lora(), callbacks=[timer, cpu],
                                 shared_prompt=name == "ifpo-shared")
        t0 = time.perf_counter()
        with_ref, _, _ = precompute_ref_logps(trainer, dataset, collator, pairs_fingerprint=pairs.fingerprint + name,
                                              cache_dir=work_dir / name / "cache", batch_size=batch, budget=budget)
        precompute_s = time.perf_counter() - t0
        trainer.use_precomputed_ref_logps(with_ref)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    trainer.train()
    queue.put({
        "variant": name, "pairs": len(rows), "compute_times": timer.compute_times, "wall_times": timer.wall_times,
        "cpu_times": cpu.times,
        "peak_memory_mb": _peak_memory_mb(), "precompute_s": precompute_s, "device": "cuda" if cuda else "cpu",
        "prompt_tokens": prompt_tokens, "response_tokens": response_tokens,
    })


def kv_cache_logps(model, prompt: dict, completions, completion_mask):
    """The alternative to packing (measured here, not used in training): one prompt forward whose key/value
    cache, kept in the autograd graph, is repeated for the completions, which then run as one batch on it.

    Returns the per-token log-probs of ``completions`` (G, C), zero on padding. The first completion token is
    scored from the prompt's last hidden state; positions continue after the prompt (M-RoPE).
    """
    import torch

    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    vlm = inner.model
    g, width = completions.shape
    p = prompt["input_ids"].shape[1]
    out = vlm(input_ids=prompt["input_ids"], attention_mask=prompt["attention_mask"],
              pixel_values=prompt.get("pixel_values"), image_grid_thw=prompt.get("image_grid_thw"),
              mm_token_type_ids=prompt["mm_token_type_ids"], use_cache=True)
    cache = out.cache
    positions, _ = vlm.get_rope_index(prompt["input_ids"], prompt["mm_token_type_ids"],
                                      image_grid_thw=prompt.get("image_grid_thw"),
                                      attention_mask=prompt["attention_mask"])
    start = positions[:, 0, -1]  # the prompt's last position (text: all three components equal)
    cache.batch_repeat_interleave(g)
    cont_positions = (start[:, None, None] + 1 + torch.arange(width, device=start.device)[None, None, :]).expand(3, g, -1)
    mask = torch.cat([torch.ones(g, p, dtype=completion_mask.dtype, device=completion_mask.device), completion_mask], 1)
    hidden = vlm.language_model(inputs_embeds=vlm.get_input_embeddings()(completions), attention_mask=mask,
                                position_ids=cont_positions, cache=cache, use_cache=True).last_hidden_state
    scoring = torch.cat([out.last_hidden_state[:, -1:].expand(g, 1, -1), hidden[:, :-1]], dim=1)
    logps = torch.log_softmax(inner.lm_head(scoring).float(), dim=-1).gather(-1, completions[..., None])[..., 0]
    return logps * completion_mask


def _grpo_variant(name: str, work: str, steps: int, batch: int, threads: int, queue) -> None:
    """The GRPO loss forward: 8 completions of one image prompt, summed log-probs, backward through LoRA."""
    torch = _setup(threads)
    from ifpo.train.shared_prompt import install_shared_prompt, spec
    from ifpo.train.vision import load_image, patch_factor
    from peft import get_peft_model
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl.trainer.utils import add_fused_lm_head

    work_dir = Path(work)
    _, rows = _image_rows(work_dir, 1)
    processor = AutoProcessor.from_pretrained(work_dir / "tiny")
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    model = AutoModelForImageTextToText.from_pretrained(work_dir / "tiny", attn_implementation="sdpa").to(device)
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    install_shared_prompt(model)
    model = get_peft_model(model, _lora())
    image = load_image(rows[0]["images"][0], _budget(), patch_factor(processor))
    text = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe the image."}]}],
        tokenize=False, add_generation_prompt=True)
    prompt = processor(text=[text], images=[image], return_tensors="pt", do_resize=False)
    g = GENERATIONS
    generator = torch.Generator().manual_seed(0)
    lengths = torch.randint(48, 96, (g,), generator=generator)
    width = int(lengths.max())
    completions = torch.randint(10, 500, (g, width), generator=generator)
    completion_mask = (torch.arange(width)[None] < lengths[:, None]).long()
    p = prompt["input_ids"].shape[1]
    input_ids = torch.cat([prompt["input_ids"].repeat(g, 1), completions * completion_mask], dim=1)
    attention_mask = torch.cat([torch.ones(g, p, dtype=torch.long), completion_mask], dim=1)
    labels = input_ids.masked_fill(attention_mask == 0, -100)
    labels[:, :p] = -100
    inputs = {
        "input_ids": input_ids, "attention_mask": attention_mask, "labels": labels,
        "mm_token_type_ids": torch.cat([prompt["mm_token_type_ids"].repeat(g, 1), torch.zeros_like(completions)], 1),
        "pixel_values": prompt["pixel_values"].repeat(g, 1), "image_grid_thw": prompt["image_grid_thw"].repeat(g, 1),
    }
    inputs = {k: v.to(device) for k, v in inputs.items()}
    if name == "grpo-shared":
        inputs["ifpo_shared_prompt"] = {k: v.to(device) for k, v in spec([0] * g, [0] * g, [p] * g).items()}
    prompt = {k: v.to(device) for k, v in prompt.items()}
    completions, completion_mask = completions.to(device), completion_mask.to(device)
    model.train()
    times, cpu_times = [], []
    logps_sum = None
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        if name == "grpo-kv":
            logps = kv_cache_logps(model, prompt, completions * completion_mask, completion_mask)
        else:
            logps = model(**inputs, fused_lm_head=True, use_cache=False).log_probs
        total = logps.sum()
        (-total).backward()
        logps_sum = float(total.detach())
        model.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.process_time() - c0)
    queue.put({"variant": name, "pairs": 1, "compute_times": times, "wall_times": times, "logps_sum": logps_sum,
               "cpu_times": cpu_times,
               "peak_memory_mb": _peak_memory_mb(), "precompute_s": None, "device": device,
               "prompt_tokens": p, "response_tokens": int(lengths.float().mean())})


def _run(target, name, *args):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(name, *args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"{name}: failed with exit code {proc.exitcode}")
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps per DPO variant (GRPO: repetitions)")
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the median")
    parser.add_argument("--batch", type=int, default=2, help="pairs per step")
    parser.add_argument("--grpo_reps", type=int, default=3, help="GRPO loss forward+backward repetitions per row")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per variant (default 1: stable timings)")
    parser.add_argument("--only", nargs="*", default=None, help="run only these rows (trl ifpo ifpo-shared grpo grpo-shared grpo-kv)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    from ifpo.train.sample_pairs import build_sample_pairs
    from ifpo.train.tiny_model import TinySpec, build_tiny_model

    rows = args.only or ["trl", "ifpo", "ifpo-shared", "grpo", "grpo-shared", "grpo-kv"]
    results = []
    with tempfile.TemporaryDirectory(prefix="ifpo-bench-") as work:
        build_tiny_model(Path(work) / "tiny", seed=0, spec=TinySpec(**SPEC))
        build_sample_pairs(Path(work) / "pairs")
        for name in rows:
            target = _grpo_variant if name.startswith("grpo") else _dpo_variant
            steps = args.grpo_reps if name.startswith("grpo") else args.steps
            results.append(_run(target, name, work, steps, args.batch, args.threads))
            r = results[-1]
            print(f"{name}: done, median compute {statistics.median(r['compute_times'][args.warmup:] or r['compute_times']):.3f} s",
                  file=sys.stderr, flush=True)

    def median(values):
        return statistics.median(values[args.warmup:] or values)

    by = {r["variant"]: r for r in results}
    first = results[0]
    print(f"\nShared-prompt bench: tiny Qwen3-VL widened ({SPEC['text_hidden_size']} wide, {SPEC['text_layers']} layers), "
          f"LoRA r=16, device {first['device']}, {args.threads} thread(s)")
    print(f"{'variant':<12} {'prompt tok':>10} {'resp tok':>9} {'ratio':>6} {'compute s':>10} {'wall s':>8} "
          f"{'cpu s':>7} {'peak MB':>8} {'precompute s':>13}")
    for r in results:
        r["compute_median_s"] = median(r["compute_times"])
        r["wall_median_s"] = median(r["wall_times"])
        r["cpu_median_s"] = median(r["cpu_times"])
        pre = "-" if r["precompute_s"] is None else f"{r['precompute_s']:.1f}"
        ratio = r["prompt_tokens"] / max(r["response_tokens"], 1)
        print(f"{r['variant']:<12} {r['prompt_tokens']:>10} {r['response_tokens']:>9} {ratio:>5.0f}: {r['compute_median_s']:>10.3f} "
              f"{r['wall_median_s']:>8.3f} {r['cpu_median_s']:>7.2f} {r['peak_memory_mb']:>8.0f} {pre:>13}")
    summary = {}

    def ratio(a, b, key):
        return by[a][key] / by[b][key]

    for base in ("trl", "ifpo"):
        if {base, "ifpo-shared"} <= by.keys():
            summary[f"shared_vs_{base}"] = ratio(base, "ifpo-shared", "wall_median_s")
            summary[f"shared_vs_{base}_cpu"] = ratio(base, "ifpo-shared", "cpu_median_s")
    if {"grpo", "grpo-shared"} <= by.keys():
        summary["grpo_shared_speedup"] = ratio("grpo", "grpo-shared", "compute_median_s")
        summary["grpo_shared_speedup_cpu"] = ratio("grpo", "grpo-shared", "cpu_median_s")
    print()
    for base, target in (("trl", 2.0), ("ifpo", 1.5)):
        if f"shared_vs_{base}" in summary:
            wall, cpu = summary[f"shared_vs_{base}"], summary[f"shared_vs_{base}_cpu"]
            print(f"ifpo-shared vs {base}: {wall:.2f}x faster per step (wall), {cpu:.2f}x (CPU time); target >= "
                  f"{target}x: {'met' if min(wall, cpu) >= target else 'met on CPU time only' if cpu >= target else 'NOT met'}")
    if {"grpo", "grpo-kv"} <= by.keys():
        summary["grpo_kv_speedup"] = by["grpo"]["compute_median_s"] / by["grpo-kv"]["compute_median_s"]
        summary["grpo_kv_speedup_cpu"] = by["grpo"]["cpu_median_s"] / by["grpo-kv"]["cpu_median_s"]
        sums = {r["variant"]: r["logps_sum"] for r in results if r.get("logps_sum") is not None}
        print("GRPO summed log-probs (must agree): " + ", ".join(f"{k} {v:.4f}" for k, v in sums.items()))
        print(f"GRPO loss forward+backward through a shared KV cache instead: {summary['grpo_kv_speedup']:.2f}x faster "
              f"({summary['grpo_kv_speedup_cpu']:.2f}x CPU time)")
    if "grpo_shared_speedup" in summary:
        print(f"GRPO loss forward+backward, num_generations {GENERATIONS}: {summary['grpo_shared_speedup']:.2f}x faster "
              f"with the shared prompt ({summary['grpo_shared_speedup_cpu']:.2f}x CPU time)")
    if args.json:
        args.json.write_text(json.dumps({"results": results, **summary, "spec": SPEC}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
