"""Reference log-probs for vision pairs, computed once before training and cached beside the pairs.

With LoRA the DPO reference is the policy with its adapter disabled, so TRL runs a second forward
pass each step; TRL's ``precompute_ref_log_probs`` would avoid it but is refused for vision data.
:func:`precompute_ref_logps` runs that pass once over the pairs, batched, with TRL's own
``DPOTrainer.compute_ref_log_probs`` (adapter disabled, gradient checkpointing off, the trainer's
autocast), on the same collator as training, and stores the sums per pair in a JSON cache named by a
fingerprint of

- the reference weights (``ifpo.train.model.model_fingerprint``, adapters excluded) and load dtype,
- the pairs (text and media bytes: ``PairSet.fingerprint``),
- the processor settings (media budgets, image/video processor config, chat template),

so a change to any of them recomputes, and an unchanged rerun (or ``--resume``) reads the cache.
Under a distributed launch each rank computes a slice and the results are gathered. The pass goes through
``IfpoDPOTrainer.compute_ref_log_probs``: the same media guard and, when on, the same shared-prompt
packing as a training step (one forward per pair; ``train/shared_prompt.py``). Shared and unshared give
the same values to float precision, so the cache key does not depend on it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from ifpo.train.model import model_fingerprint

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1


def processor_settings(processor, budget) -> dict[str, Any]:
    """What of the processor and the media budgets decides the tokens and pixels a pair becomes."""
    settings: dict[str, Any] = {"budget": asdict(budget)}
    for name in ("image_processor", "video_processor"):
        sub = getattr(processor, name, None)
        if sub is not None:
            settings[name] = json.loads(sub.to_json_string())
    template = getattr(processor, "chat_template", None) or ""
    settings["chat_template_sha256"] = hashlib.sha256(template.encode()).hexdigest()
    settings["vocab_size"] = len(processor.tokenizer)
    return settings


def cache_fingerprint(trainer, pairs_fingerprint: str, processor, budget) -> tuple[str, dict[str, Any]]:
    """The cache key and its parts (model, data, processor, precision)."""
    from accelerate.utils import broadcast_object_list

    model = trainer.accelerator.unwrap_model(trainer.model)
    parts = {
        "format": CACHE_FORMAT,
        "model": model_fingerprint(model),
        "data": pairs_fingerprint,
        "processor": hashlib.sha256(
            json.dumps(processor_settings(processor, budget), sort_keys=True, default=str).encode()
        ).hexdigest(),
        "precision": f"{model.dtype}|bf16={trainer.args.bf16}|fp16={trainer.args.fp16}",
        # A pretrained adapter is its own reference (TRL's "ref" copy), which the base weights do not show.
        "reference": "ref-adapter" if "ref" in (getattr(model, "peft_config", None) or {}) else "adapter-disabled",
    }
    # Ranks may disagree on float hashing of sharded weights; rank 0 decides for everyone.
    holder = [parts]
    broadcast_object_list(holder, from_process=0)
    parts = holder[0]
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return key, parts


def _compute(trainer, dataset, collator, batch_size: int) -> dict[str, tuple[float, float]]:
    from accelerate.utils import gather_object
    from torch.utils.data import DataLoader
    from trl.models import prepare_deepspeed

    accelerator = trainer.accelerator
    n, world, rank = len(dataset), accelerator.num_processes, accelerator.process_index
    # Equal slices per rank (padded by repeating the last pair): ZeRO-3 gathers weights collectively, so every
    # rank must run the same number of forward passes. Duplicates are dropped when the results are merged.
    per_rank = -(-n // world)
    mine = [min(i, n - 1) for i in range(rank * per_rank, (rank + 1) * per_rank)]
    loader = DataLoader(
        dataset.select(mine),
        batch_size=batch_size,
        collate_fn=collator,
        num_workers=trainer.args.dataloader_num_workers,
        shuffle=False,
    )
    if trainer.is_deepspeed_enabled:
        # Before train() DeepSpeed has not placed the weights yet; TRL wraps an inference engine the same way.
        if getattr(trainer, "_precompute_engine", None) is None:
            trainer._precompute_engine = prepare_deepspeed(trainer.model, accelerator)
        model = trainer._precompute_engine
    else:
        model = trainer.model
    results: list[tuple[str, float, float]] = []
    was_training = trainer.model.training
    trainer.model.eval()  # dropout is disabled by TRL anyway; eval() makes the pass deterministic regardless
    try:
        for batch in loader:
            pair_ids = list(batch["pair_ids"])
            batch = trainer._prepare_inputs(batch)
            # IfpoDPOTrainer's override guards the media and packs each pair's prompt once, like a step.
            chosen, rejected = trainer.compute_ref_log_probs(model, batch)
            results.extend(zip(pair_ids, chosen.float().cpu().tolist(), rejected.float().cpu().tolist()))
    finally:
        trainer.model.train(was_training)
    if world > 1:
        results = gather_object(results)
    return {pair_id: (c, r) for pair_id, c, r in results}


def precompute_ref_logps(trainer, dataset, collator, *, pairs_fingerprint: str, cache_dir: Path,
                         batch_size: int, budget) -> tuple[Any, Path, bool]:
    """``dataset`` with ``ref_chosen_logps``/``ref_rejected_logps`` columns; the cache file; whether it was hit.

    Example::

        train_ds, cache, hit = precompute_ref_logps(trainer, pairs.dataset, collator,
                                                    pairs_fingerprint=pairs.fingerprint, cache_dir=Path(".ifpo_cache"),
                                                    batch_size=8, budget=budget)
    """
    key, parts = cache_fingerprint(trainer, pairs_fingerprint, collator.processor, budget)
    cache_path = Path(cache_dir) / f"ref_logps-{key[:20]}.json"
    values: dict[str, list[float]] | None = None
    hit = False
    if cache_path.is_file():
        try:
            cached = json.loads(cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            cached = None  # a torn or foreign cache file is a miss: recomputed and rewritten
        if (isinstance(cached, dict) and cached.get("fingerprint") == key and isinstance(cached.get("logps"), dict)
                and set(dataset["pair_id"]) <= set(cached["logps"])):
            values, hit = cached["logps"], True
    if values is None:
        computed = _compute(trainer, dataset, collator, batch_size)
        values = {pair_id: [c, r] for pair_id, (c, r) in computed.items()}
        if trainer.accelerator.is_main_process:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps({"fingerprint": key, "parts": parts, "logps": values}) + "\n", encoding="utf-8")
            tmp.replace(cache_path)
        trainer.accelerator.wait_for_everyone()
    ids = dataset["pair_id"]
    missing = [pair_id for pair_id in ids if pair_id not in values]
    if missing:
        raise RuntimeError(f"reference log-probs missing for {len(missing)} pair(s), e.g. {missing[:3]}")
    dataset = dataset.add_column("ref_chosen_logps", [float(values[i][0]) for i in ids])
    dataset = dataset.add_column("ref_rejected_logps", [float(values[i][1]) for i in ids])
    return dataset, cache_path, hit


def on_the_fly_ref_logps(trainer, examples: list[dict[str, Any]], collator) -> torch.Tensor:
    """Reference log-probs of ``examples`` the way TRL computes them inside a training step (tests).

    Returns a ``(n, 2)`` tensor of (chosen, rejected) sums, one batch, no cache.
    """
    batch = collator([dict(e) for e in examples])
    batch.pop("ref_chosen_logps", None)
    batch.pop("ref_rejected_logps", None)
    batch = trainer._prepare_inputs(batch)
    chosen, rejected = trainer.compute_ref_log_probs(trainer.model, batch)
    return torch.stack([chosen, rejected], dim=1).float().cpu()
