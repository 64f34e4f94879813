"""Metrics and callbacks around TRL's DPOTrainer: per-kind reward accuracy, a JSONL log, interruption, step timing.

Per-kind accuracy: TRL logs ``rewards/accuracies`` over the batch only. ifpo also logs
``rewards/accuracies/<kind>`` for each negative kind of the pairs' ``meta.kind`` (stripped,
corrupted, conflict, misaligned, option_order, on_policy, grounding, other), so one can see which negatives the model
has learnt to rank. The per-pair rewards come from the forward passes TRL already runs: a forward
hook keeps the per-token log-probs that TRL's fused LM head returns, and the reward is formed exactly
as TRL forms it (beta times the summed policy minus reference log-probs).

Tracker config: transformers' reporting callbacks put ``TrainingArguments`` (and the model config) into
each run's config, never ifpo's own keys (LoRA, pairs, media budgets, eval hook). ``RecipeConfigCallback``
adds those, flattened (``ifpo.lora_r``, ``ifpo.eval_hook.every_steps``), to the run each tracker's callback
opened, so runs can be filtered by them.
"""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from ifpo.train.vision import PAIR_KINDS
from ifpo.verifiers.io import dumps
from transformers import TrainerCallback

logger = logging.getLogger("ifpo.train")


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
                # standard JSON: a NaN loss is written as null (JSON.parse and most readers refuse NaN)
                handle.write(dumps({"step": state.global_step, **logs}, default=float, ensure_ascii=True) + "\n")


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


def flatten_config(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": [1, 2]}`` -> ``{"a.b": 1, "c": [1, 2]}`` with enums as their values."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_config(value, f"{name}."))
        elif isinstance(value, enum.Enum):
            flat[name] = value.value
        elif isinstance(value, (list, tuple)):
            flat[name] = [v.value if isinstance(v, enum.Enum) else v for v in value]
        else:
            flat[name] = value
    return flat


class RecipeConfigCallback(TrainerCallback):
    """ifpo's recipe keys, flattened under ``ifpo.``, into the config of every tracker run the trainer opened.

    Runs after the reporting callbacks' ``on_train_begin`` (user callbacks come after them in the
    trainer's list), so their runs exist. Each tracker is reached through the object its transformers
    callback holds, with that tracker's own config call; a tracker without one gets an info line.
    """

    def __init__(self, config: Mapping[str, Any], prefix: str = "ifpo."):
        self.config = flatten_config(config, prefix)
        self.trainer: Any = None
        self.delivered: list[str] = []

    def attach(self, trainer: Any) -> RecipeConfigCallback:
        self.trainer = trainer
        if self not in trainer.callback_handler.callbacks:
            trainer.add_callback(self)
        hold_trackers(trainer)  # the same trackers' runs: one per job, every record at its step
        return self

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero or self.trainer is None:
            return
        for callback in self.trainer.callback_handler.callbacks:
            name = type(callback).__name__
            try:
                sent = self._send(callback)
            except Exception as exc:  # a tracker refusing a value must not stop training
                logger.warning("recipe config not sent to %s: %s", name, exc)
                continue
            if sent:
                self.delivered.append(name)
            elif name.endswith("Callback") and name not in _NOT_TRACKERS and type(callback).__module__.startswith(
                    "transformers.integrations"):
                logger.info("%s: ifpo does not know how to add the recipe to this tracker's config", name)

    def _send(self, callback: Any) -> bool:
        config = self.config
        name = type(callback).__name__
        if name == "WandbCallback" and getattr(callback, "_wandb", None) is not None and callback._wandb.run:
            callback._wandb.config.update(config, allow_val_change=True)
        elif name == "TrackioCallback" and getattr(callback, "_trackio", None) is not None:
            callback._trackio.config.update(config, allow_val_change=True)
        elif name == "SwanLabCallback" and getattr(callback, "_swanlab", None) is not None:
            callback._swanlab.config.update(config)
        elif name == "TensorBoardCallback" and getattr(callback, "tb_writer", None) is not None:
            # As transformers writes TrainingArguments: one JSON text summary.
            callback.tb_writer.add_text("ifpo/recipe", json.dumps(config, indent=2, default=str))
            callback.tb_writer.flush()
        elif name in ("MLflowCallback", "DagsHubCallback") and getattr(callback, "_ml_flow", None) is not None:
            # MLflow params are strings of bounded length, sent in bounded batches (its callback's own limits).
            limit = getattr(callback, "_MAX_PARAM_VAL_LENGTH", 250)
            batch = getattr(callback, "_MAX_PARAMS_TAGS_PER_BATCH", 100)
            items = [(k, str(v)) for k, v in config.items() if len(str(v)) <= limit]
            for i in range(0, len(items), batch):
                callback._ml_flow.log_params(dict(items[i : i + batch]))
        elif name == "CometCallback" and getattr(callback, "_experiment", None) is not None:
            callback._experiment.log_parameters(config)
        elif name == "DVCLiveCallback" and getattr(callback, "live", None) is not None:
            callback.live.log_params(config)
        else:
            return False
        return True


# transformers callbacks in that module that are not trackers.
_NOT_TRACKERS = {"CodeCarbonCallback", "FlyteCallback"}


def setup_logging() -> int:
    """Logging for an entry script: INFO on the first process of the job, warnings only (tagged with the rank)
    on the others, so a line appears once per job rather than once per process (torchrun, accelerate, multi-node).

    The rank comes from the launcher's environment (``RANK``, global across nodes), read before any
    process group exists. ``datasets`` progress bars (loading, mapping, casting) are turned off on the
    other ranks for the same reason; transformers already keeps its replicas at ``log_level_replica``.
    Returns the rank.
    """
    import os

    raw = os.environ.get("RANK") or "0"
    if not raw.strip().isdigit():
        raise ValueError(f"environment variable RANK={raw!r}: expected this process's rank, a non-negative integer "
                         "(torchrun and accelerate set it; unset it for a single process)")
    rank = int(raw)
    if rank == 0:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    else:
        logging.basicConfig(level=logging.WARNING, format=f"%(asctime)s [rank {rank}] %(name)s: %(message)s")
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
    return rank



# What GRPO's console line keeps per logging step (TRL logs ~40 keys, ~1.2 KB a line, every step): the
# rest goes to log_history.jsonl and the trackers as before.
GRPO_CONSOLE_KEYS = ("loss", "reward", "reward_std", "kl", "entropy", "completions/mean_length",
                     "completions/clipped_ratio", "grad_norm", "learning_rate", "epoch")


def concise_line(logs: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    """A training record as a short console line: ``keys`` only, floats to 4 significant digits, and how many were
    left out. A record that is not a training step's (no loss or reward: the eval hook's, the end-of-training
    summary) is shown whole."""
    shown = {k: logs[k] for k in keys if k in logs}
    rest = [k for k in logs if k not in shown and k != "total_flos"]
    if "loss" not in logs and "reward" not in logs:
        shown, rest = {k: v for k, v in logs.items() if k != "total_flos"}, []
    text = ", ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}" for k, v in shown.items())
    return "{" + text + "}" + (f" (+{len(rest)} more in log_history.jsonl)" if rest else "")


def concise_console(trainer: Any, keys: tuple[str, ...]) -> None:
    """Swap transformers' console printer (the progress bar's ``on_log``, or ``PrinterCallback`` under
    ``disable_tqdm``) for one that prints :func:`concise_line`; trackers and ``log_history`` are unchanged."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    class ConciseProgress(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and self.training_bar is not None and logs:
                self.training_bar.write(concise_line(logs, keys))

    class ConcisePrinter(PrinterCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_local_process_zero and logs:
                print(concise_line(logs, keys))

    callbacks = trainer.callback_handler.callbacks
    for i, callback in enumerate(callbacks):
        if type(callback) is ProgressCallback:
            callbacks[i] = ConciseProgress(max_str_len=callback.max_str_len)
        elif type(callback) is PrinterCallback:
            callbacks[i] = ConcisePrinter()


# --- one tracker run per job, every record at the trainer's step ----------------------------------------
#
# transformers' TrackioCallback (5.25) logs without a step, so trackio numbers the records with its own
# counter (train rows at 1, 2, 4, 5 instead of 5-20; the eval hook's at 0, 3, 6 instead of 0, 10, 20).
# TrackioCallback and MLflowCallback close their run in on_train_end; train/dpo.py evaluates after train(),
# and the eval hook's final evaluation runs in on_train_end after theirs (user callbacks come later in the
# list), so those records opened a second run (trackio: step 0, without the recipe config; MLflow: a run
# the fluent API starts on its own). ``hold_trackers`` fixes both on the callbacks the trainer holds;
# ``close_trackers`` (the entry script, after its last log; also at exit) closes the runs as their callbacks
# would have.

_HELD: list[Any] = []  # trainers whose trackers are held open, closed at exit if the script did not


def hold_trackers(trainer: Any) -> None:
    """Per instance, so each callback keeps its class (and name) and only the two behaviours change."""
    from transformers.integrations import MLflowCallback, TrackioCallback
    from transformers.integrations.integration_utils import rewrite_logs

    held = []
    for callback in trainer.callback_handler.callbacks:
        if not isinstance(callback, (TrackioCallback, MLflowCallback)) or "on_train_end" in vars(callback):
            continue
        if isinstance(callback, TrackioCallback):
            callback.on_log = _trackio_on_log(callback, rewrite_logs)
        original = callback.on_train_end
        calls: list[tuple] = []

        def record(args, state, control, _calls=calls, **kwargs):
            _calls[:] = [(args, state, control, kwargs)]  # closed by close_trackers, after the last record

        callback.on_train_end = record
        held.append((callback, original, calls))
    if held:
        trainer._ifpo_held_trackers = held
        if not _HELD:
            import atexit

            atexit.register(_close_all)
        _HELD.append(trainer)


def _trackio_on_log(callback: Any, rewrite_logs: Any):
    """TrackioCallback.on_log with ``step=state.global_step`` (the same keys, dropped summary values and
    ``train/global_step`` column as transformers' method)."""
    single_values = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss", "total_flos"}

    def on_log(args, state, control, model=None, logs=None, **kwargs):
        if not callback._initialized:
            callback.setup(args, state, model)
        if state.is_world_process_zero:
            values = rewrite_logs({k: v for k, v in (logs or {}).items() if k not in single_values})
            callback._trackio.log({**values, "train/global_step": state.global_step}, step=state.global_step)

    return on_log


def close_trackers(trainer: Any) -> None:
    """End the held runs as their callbacks' on_train_end would have (once; later calls do nothing)."""
    held = getattr(trainer, "_ifpo_held_trackers", None) or []
    trainer._ifpo_held_trackers = []
    for callback, original, calls in held:
        callback.on_train_end = original
        args, state, control, kwargs = calls[0] if calls else (trainer.args, trainer.state, trainer.control, {})
        try:
            original(args, state, control, **kwargs)
        except Exception as exc:  # a run its library already closed at exit: nothing left to close
            logger.debug("closing %s: %s", type(callback).__name__, exc)


def _close_all() -> None:
    while _HELD:
        close_trackers(_HELD.pop())
