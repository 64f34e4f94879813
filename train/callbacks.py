"""Metrics and callbacks around TRL's DPOTrainer: per-kind reward accuracy, a JSONL log, interruption, step timing.

Per-kind accuracy: TRL logs ``rewards/accuracies`` over the batch only. ifpo also logs
``rewards/accuracies/<kind>`` for each negative kind of the pairs' ``meta.kind`` (stripped,
corrupted, conflict, misaligned, option_order, other), so one can see which negatives the model
has learnt to rank. The per-pair rewards come from the forward passes TRL already runs: a forward
hook keeps the per-token log-probs that TRL's fused LM head returns, and the reward is formed exactly
as TRL forms it (beta times the summed policy minus reference log-probs).
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import torch
from ifpo.train.vision import PAIR_KINDS
from transformers import TrainerCallback


@contextlib.contextmanager
def capture_log_probs(module: torch.nn.Module):
    """Collect ``output.log_probs`` (detached) of every forward of ``module`` inside the block, in order."""
    captured: list[torch.Tensor] = []

    def hook(_module, _args, output):
        log_probs = getattr(output, "log_probs", None)
        if log_probs is not None:
            captured.append(log_probs.detach())

    handle = module.register_forward_hook(hook)
    try:
        yield captured
    finally:
        handle.remove()


def per_pair_correct(captured: list[torch.Tensor], inputs: dict[str, Any]) -> torch.Tensor | None:
    """1.0 where the chosen reward beats the rejected one, per pair; ``None`` if the passes were not seen.

    ``captured[0]`` is the policy pass over ``[chosen..., rejected...]``; the reference is either the
    precomputed ``ref_*_logps`` in ``inputs`` or the second captured pass (TRL's on-the-fly reference).
    beta is positive, so comparing log-ratios is comparing rewards.
    """
    seq_len = inputs["completion_mask"].size(1) - 1
    if not captured:
        return None
    policy = captured[0][:, -seq_len:].sum(dim=1)
    if "ref_chosen_logps" in inputs:
        ref = torch.cat([inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]]).to(policy)
    elif len(captured) >= 2:
        ref = captured[1][:, -seq_len:].sum(dim=1)
    else:
        return None
    chosen, rejected = (policy - ref).chunk(2)
    return (chosen > rejected).float()


def record_kind_accuracy(trainer, correct: torch.Tensor, kinds: torch.Tensor, mode: str) -> None:
    """Append per-pair correctness to ``trainer._metrics[mode]['rewards/accuracies/<kind>']`` (all ranks)."""
    correct = trainer.accelerator.gather(correct.to(trainer.accelerator.device))
    kinds = trainer.accelerator.gather(kinds.to(trainer.accelerator.device))
    for index in kinds.unique().tolist():
        values = correct[kinds == index].tolist()
        # TRL averages each list at logging time; one entry per pair makes that a count-weighted mean.
        trainer._metrics[mode][f"rewards/accuracies/{PAIR_KINDS[index]}"].extend(values)


class JsonlLogCallback(TrainerCallback):
    """Append every log record (loss, rewards, accuracies, per-kind accuracies, ...) to ``path`` as JSON lines."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"step": state.global_step, **logs}, default=float) + "\n")


class InterruptCallback(TrainerCallback):
    """Save and stop after ``steps`` optimizer steps, as a killed job would leave things (resume tests)."""

    def __init__(self, steps: int):
        self.steps = steps

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.steps:
            control.should_save = True
            control.should_training_stop = True
        return control


class StepTimerCallback(TrainerCallback):
    """Per optimizer step: compute time (forward, backward, optimizer) and wall time (data loading included).

    The Trainer fetches a step's micro-batches before ``on_step_begin``, so begin -> end is the model's
    time and end -> end adds data loading and logging.
    """

    def __init__(self):
        self.compute_times: list[float] = []
        self.wall_times: list[float] = []
        self._begin: float | None = None
        self._last_end: float | None = None

    def on_step_begin(self, args, state, control, **kwargs):
        self._begin = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        now = time.perf_counter()
        if self._begin is not None:
            self.compute_times.append(now - self._begin)
        if self._last_end is not None:
            self.wall_times.append(now - self._last_end)
        self._last_end = now


def speed_summary(timer: StepTimerCallback, skip: int = 2) -> dict[str, Any]:
    """Median step times after ``skip`` warm-up steps, and peak accelerator memory of this process."""
    import statistics

    def median(values: list[float]) -> float | None:
        kept = values[skip:] or values
        return round(statistics.median(kept), 4) if kept else None

    summary: dict[str, Any] = {
        "steps_timed": len(timer.compute_times),
        "step_compute_s": median(timer.compute_times),
        "step_wall_s": median(timer.wall_times),
    }
    if torch.cuda.is_available():
        summary["peak_gpu_memory_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        summary["gpu"] = torch.cuda.get_device_name()
    return summary
