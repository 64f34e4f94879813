"""``IfpoEvalCallback``: the full verifier suite on the weights being trained, at step 0 and every checkpoint.

Plugs into any ``transformers.Trainer`` (TRL's DPOTrainer and GRPOTrainer included)::

    callback = IfpoEvalCallback("sample/items.jsonl", eval_every_steps=50, on_save=True,
                                generation={"temperature": 0.1, "max_new_tokens": 512}, judge="judge.yaml")
    trainer = DPOTrainer(..., callbacks=[callback])
    callback.attach(trainer)   # so the metrics go through the trainer's own log path to every tracker

Each evaluation writes ``<output_dir>/eval/checkpoint-<step>/{responses,verdicts}.jsonl`` and
``report.json`` (see ``eval_hooks/core.py``) and logs ``eval_ifpo/ipr``, ``eval_ifpo/cpr_micro``,
``eval_ifpo/cpr_macro``, ``eval_ifpo/cpr/<dimension>``, ``eval_ifpo/tcsr``, ``eval_ifpo/tisr`` and
``eval_ifpo/unjudged/*``.

Why ``attach``: a callback receives the model and processing class but not the trainer, and only
``Trainer.log`` reaches both ``state.log_history`` and every reporting callback (wandb,
tensorboard, trackio, mlflow, ...). The callback calls the *base* ``transformers.Trainer.log``:
TRL's override would flush the training metrics it is accumulating (``rewards/*``) into the
evaluation record. Without ``attach`` the metrics still reach ``state.log_history`` (and so
``trainer_state.json``), with a warning that trackers do not see them.

Distributed: rank r generates ``items[r::world]`` with its own copy of the weights; shards are
padded to equal length (the padding answers are discarded) because sharded models (ZeRO-3, FSDP)
generate in lockstep across ranks. The main process gathers the answers
(``all_gather_object``), scores and writes; the headline metrics are broadcast so every rank logs
the same record.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.eval_hooks.core import LOG_PREFIX, REPORT, checkpoint_eval_dir, headline_metrics, score_and_write
from ifpo.eval_hooks.hook_config import (  # noqa: F401  (re-exported: the hook's settings live there)
    DEFAULT_GENERATION,
    TRAINING_MODEL,
    EvalHookConfig,
    generation_config,
)
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.generation import GenerationConfig, TransformersGenerator, item_messages
from ifpo.verifiers.judge import Judge, JudgeConfig, make_judge
from transformers import TrainerCallback

logger = logging.getLogger("ifpo.eval_hooks")

def percent(rate: float | None) -> str:
    """A rate for a log line: ``0.333333`` reads ``33.3%``; None (nothing judged) reads ``n/a``."""
    return "n/a" if rate is None or rate != rate else f"{100 * rate:.1f}%"


def dist_info() -> tuple[int, int]:
    """(rank, world size) of ``torch.distributed`` when initialised, else (0, 1)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def shard_indices(n: int, rank: int, world: int) -> tuple[list[int], int]:
    """Rank ``rank``'s item indices ``range(rank, n, world)`` padded to ``ceil(n / world)`` entries.

    Returns (indices, number of real ones); the padding repeats an index so that every rank makes
    the same number of ``generate`` calls (sharded models step through generation together).
    """
    own = list(range(rank, n, world))
    size = math.ceil(n / world) if n else 0
    real = len(own)
    pad = own[-1] if own else 0
    return own + [pad] * (size - real), real


class IfpoEvalCallback(TrainerCallback):
    """Generate on the eval items with the current weights, score with the verifier suite, write, log.

    ``items``: an items JSONL path or a list of item dicts. ``generation``: a GenerationConfig or
    a mapping of its keys (backend is always ``transformers``; ``model`` is ignored).
    ``judge``: a Judge, JudgeConfig, judge YAML path or mapping; None leaves judge verdicts unjudged.
    ``output_dir``: where ``eval/`` goes (default: the trainer's ``args.output_dir``).
    ``processor``: overrides the trainer's ``processing_class``.
    """

    def __init__(
        self,
        items: str | Path | Sequence[Mapping[str, Any]],
        eval_every_steps: int = 0,
        on_save: bool = True,
        generation: GenerationConfig | Mapping[str, Any] | None = None,
        judge: Judge | JudgeConfig | str | Path | Mapping[str, Any] | None = None,
        output_dir: str | Path | None = None,
        *,
        media_root: str | Path | None = None,
        on_start: bool = True,
        on_end: bool = True,
        max_items: int | None = None,
        processor: Any = None,
        trainer: Any = None,
        log_prefix: str = LOG_PREFIX,
        progress: bool = False,
        mode: str = "strict",
    ) -> None:
        if eval_every_steps < 0:
            raise ValueError(f"eval_every_steps must be >= 0, got {eval_every_steps}")
        if isinstance(items, (str, Path)):
            from ifpo.verifiers.schema import read_items

            path = Path(items)
            self.items_source = str(path)
            self.items = read_items(path, root=media_root)
            self.media_root = Path(media_root) if media_root is not None else path.parent
        else:
            self.items_source = "(in memory)"
            self.items = [dict(i) for i in items]
            self.media_root = Path(media_root) if media_root is not None else Path(".")
        if max_items is not None:
            self.items = self.items[:max_items]
        if not self.items:
            raise ValueError(f"eval hook: no items to evaluate in {self.items_source}")
        self.eval_every_steps = eval_every_steps
        self.on_save_enabled = on_save
        self.on_start = on_start
        self.on_end = on_end
        self.generation = generation_config(generation)
        self.judge = judge if isinstance(judge, Judge) or judge is None else make_judge(judge)
        self.evaluator = ChecklistEvaluator(self.judge, media_root=self.media_root, mode=mode)
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.processor = processor
        self.trainer = trainer
        self.log_prefix = log_prefix
        self.progress = progress
        self.done_steps: set[int] = set()
        self.reports: dict[int, dict[str, Any]] = {}  # step -> report (main process)
        self.responses: dict[int, dict[str, str]] = {}  # step -> item id -> response (main process)
        self._warned_unbound = False

    @classmethod
    def from_config(cls, config: EvalHookConfig | Mapping[str, Any], output_dir: str | Path | None = None,
                    **kwargs: Any) -> IfpoEvalCallback:
        if isinstance(config, Mapping):
            config = EvalHookConfig.from_mapping(config)
        return cls(
            config.items, config.every_steps, config.on_save, config.generation, config.judge, output_dir,
            media_root=config.root, on_start=config.on_start, on_end=config.on_end, max_items=config.max_items,
            progress=config.progress, mode=config.mode, **kwargs,
        )

    def attach(self, trainer: Any) -> IfpoEvalCallback:
        """Bind to ``trainer`` (its log path reaches every tracker) and add self to its callbacks if missing."""
        self.trainer = trainer
        if self not in trainer.callback_handler.callbacks:
            trainer.add_callback(self)
        return self

    # -- events --------------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, **kwargs):
        if self.on_start:
            self._maybe_evaluate(args, state, kwargs)

    def on_step_end(self, args, state, control, **kwargs):
        if self.eval_every_steps and state.global_step % self.eval_every_steps == 0:
            self._maybe_evaluate(args, state, kwargs)

    def on_save(self, args, state, control, **kwargs):
        if self.on_save_enabled:
            self._maybe_evaluate(args, state, kwargs)

    def on_train_end(self, args, state, control, **kwargs):
        if self.on_end:
            self._maybe_evaluate(args, state, kwargs)

    # -- evaluation ----------------------------------------------------------------------------

    def _maybe_evaluate(self, args, state, kwargs: Mapping[str, Any]) -> None:
        step = int(state.global_step)
        if step in self.done_steps:
            return
        self.done_steps.add(step)
        out_dir = checkpoint_eval_dir(self.output_dir or args.output_dir, step)
        if (out_dir / REPORT).is_file():
            # A resumed run: this checkpoint was evaluated (and logged) before the interruption.
            logger.info("eval hook: %s exists, not re-evaluating step %d", out_dir / REPORT, step)
            return
        model = kwargs.get("model")
        processor = self.processor or kwargs.get("processing_class") or kwargs.get("tokenizer")
        if model is None or processor is None:
            raise ValueError("eval hook: the trainer passed no model or processing_class; pass processor= to the callback")
        metrics = self.evaluate(model, processor, step, out_dir)
        self._log(args, state, metrics)

    def evaluate(self, model: Any, processor: Any, step: int, out_dir: Path) -> dict[str, float]:
        """Generate on this rank's shard, gather, score and write on the main process; return headline metrics."""
        import torch

        rank, world = dist_info()
        start = time.perf_counter()
        indices, real = shard_indices(len(self.items), rank, world)
        generator = TransformersGenerator(self.generation, self.media_root, model=model, processor=processor)
        conversations = [item_messages(self.items[i]) for i in indices]
        was_training = model.training
        # Sampling reseeds torch's RNG per prompt; fork it so evaluation leaves the training RNG stream untouched.
        devices = [torch.cuda.current_device()] if torch.cuda.is_available() and torch.cuda.is_initialized() else []
        model.eval()
        # One generate call per batch (as the generator would batch them), with a line per batch from the main
        # process: on a real model a checkpoint's evaluation takes minutes and was silent.
        size = max(1, self.generation.batch_size)
        texts: list[str] = []
        if rank == 0:
            logger.info("eval hook: step %d: generating answers to %d item(s), %d per batch%s", step, len(self.items),
                        size * world, f" over {world} processes" if world > 1 else "")
        try:
            with torch.random.fork_rng(devices=devices), torch.no_grad():
                for first in range(0, len(conversations), size):
                    texts += generator.generate(conversations[first:first + size], progress=self.progress)
                    if rank == 0:
                        made = min(len(self.items), min(first + size, real) * world)
                        logger.info("eval hook: step %d: %d/%d answers (%.0fs)", step, made, len(self.items),
                                    time.perf_counter() - start)
        finally:
            if was_training:
                model.train()
        local = [(i, t) for i, t in zip(indices[:real], texts[:real])]
        gen_seconds = time.perf_counter() - start
        if world > 1:
            import torch.distributed as dist

            gathered: list[Any] = [None] * world
            dist.all_gather_object(gathered, local)
            local = [pair for part in gathered for pair in part]
        metrics: dict[str, float] = {}
        if rank == 0:
            responses = {self.items[i]["id"]: t for i, t in local}
            evaluation = {
                "step": step,
                "kind": "training checkpoint",
                "model": getattr(getattr(model, "config", None), "_name_or_path", None) or type(model).__name__,
                "items": self.items_source,
                "n_items": len(self.items),
                "generation": {k: v for k, v in dataclasses.asdict(self.generation).items() if k != "model"},
                "judge": self.judge.config.model if self.judge is not None else None,
                "world_size": world,
                "generate_seconds": round(gen_seconds, 3),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            report = score_and_write(self.items, responses, out_dir, self.evaluator, evaluation, progress=self.progress)
            self.reports[step] = report
            self.responses[step] = responses
            metrics = headline_metrics(report, self.log_prefix)
            logger.info("eval hook: step %d IPR %s CPR micro %s -> %s", step, percent(report["ipr"]),
                        percent(report["cpr_micro"]), out_dir)
            failed = (report.get("judge") or {}).get("failures") or 0
            if failed:
                # Loud where it is seen: failed judge calls make this checkpoint's judge verdicts unjudged, so its
                # IPR is over fewer constraints than the others' (a dead endpoint must not pass as a quiet dip).
                asked = failed + ((report.get("judge") or {}).get("requests") or 0)
                print(f"eval hook: step {step}: WARNING: {failed} of {asked} judge request(s) failed; their verdicts "
                      f"are unjudged. First error: {report['judge'].get('first_error')}", file=sys.stderr)
            media_failed = (report.get("judge") or {}).get("media_failures") or 0
            if media_failed:  # a corrupt or missing file a vision judge cannot be sent: named, as a failed request
                print(f"eval hook: step {step}: WARNING: {media_failed} judge question(s) not asked: media cannot be "
                      f"sent to the vision judge; their verdicts are unjudged. First error: "
                      f"{report['judge'].get('first_media_error')}", file=sys.stderr)
        if world > 1:
            import torch.distributed as dist

            box = [metrics]
            dist.broadcast_object_list(box, src=0)
            metrics = box[0]
        return metrics

    def _log(self, args, state, metrics: dict[str, float]) -> None:
        if not metrics:
            return
        if self.trainer is not None:
            from transformers import Trainer

            # The base method on purpose: TRL's Trainer.log would flush its pending train metrics into this record.
            # Trainer.log ends in CallbackHandler.on_log, which clears control.should_log. Called from on_step_end
            # (every_steps), that would cancel this step's training log: DefaultFlowCallback has just set the flag
            # and _maybe_log_save_evaluate reads it after on_step_end returns (the loss at that step would never
            # reach a tracker and the next record would average over two windows). This record is not the
            # step's training log, so the flag is put back as it was.
            control = self.trainer.control
            should_log = control.should_log
            Trainer.log(self.trainer, dict(metrics))
            self.trainer.control.should_log = should_log
            control.should_log = should_log
            self._log_table(step=state.global_step)
            return
        if not self._warned_unbound:
            logger.warning(
                "eval hook: not attached to a trainer (callback.attach(trainer)); metrics go to state.log_history "
                "only, trackers (wandb, tensorboard, ...) do not receive them"
            )
            self._warned_unbound = True
        state.log_history.append({**metrics, "step": state.global_step})

    # -- response tables -------------------------------------------------------------------------

    def table_rows(self, step: int) -> list[list[Any]]:
        """One row per evaluated item at ``step``: step, item, response, passed/failed/unjudged ids, all passed."""
        report, responses = self.reports.get(step), self.responses.get(step, {})
        rows = []
        for entry in (report or {}).get("items", []):
            verdicts = entry.get("verdicts", [])
            passed = [v["constraint_id"] for v in verdicts if v["passed"] is True]
            failed = [v["constraint_id"] for v in verdicts if v["passed"] is False]
            unjudged = [v["constraint_id"] for v in verdicts if v["passed"] is None]
            rows.append([step, entry["id"], responses.get(entry["id"], ""), " ".join(passed), " ".join(failed),
                         " ".join(unjudged), bool(verdicts) and not failed and not unjudged])
        return rows

    TABLE_COLUMNS = ("step", "item", "response", "passed", "failed", "unjudged", "all_passed")

    def _log_table(self, step: int) -> None:
        """The responses with their verdicts, to the trackers that keep tables (wandb) or rich text (tensorboard).

        transformers' reporting callbacks forward only scalars from ``Trainer.log``, so the table goes to each
        tracker's own run object, the one its callback opened.
        """
        rows = self.table_rows(step)
        if not rows or self.trainer is None:
            return
        # The name trackers give the scalars: transformers files "eval_*" keys under "eval/".
        name = self.log_prefix.replace("eval_", "eval/", 1).rstrip("/") + "/responses"
        from transformers.integrations import TensorBoardCallback, WandbCallback

        for callback in self.trainer.callback_handler.callbacks:
            if isinstance(callback, WandbCallback) and getattr(callback, "_wandb", None) is not None:
                run = callback._wandb.run
                if run is not None:
                    table = callback._wandb.Table(columns=list(self.TABLE_COLUMNS), data=rows)
                    run.log({name: table, "train/global_step": step})
            elif isinstance(callback, TensorBoardCallback) and getattr(callback, "tb_writer", None) is not None:
                # TensorBoard has no tables; its text plugin renders markdown, so a markdown table is the nearest.
                def cell(value: Any) -> str:
                    return str(value).replace("|", "\\|").replace("\n", " ")[:400]

                header = "| " + " | ".join(self.TABLE_COLUMNS) + " |\n|" + "---|" * len(self.TABLE_COLUMNS) + "\n"
                body = "\n".join("| " + " | ".join(cell(v) for v in row) + " |" for row in rows)
                callback.tb_writer.add_text(name, header + body, step)
                callback.tb_writer.flush()

