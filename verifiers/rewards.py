"""Checklist rewards (GRPO in ``train/grpo.py``, ``ifpo serve``, the RL engines' adapters): a thin layer
over ``ChecklistEvaluator.evaluate_many``.

It lives in ``verifiers`` (no torch, nothing of the repository outside ``verifiers``) so the light install
serves it; ``ifpo.train.rewards`` re-exports it for the trainer.

The verdicts come from the one place that computes them (``verifiers/checklist.py``); this module
only turns an item's verdicts into numbers. A reward is named ``MODE`` or ``MODE:DIMENSION``:

- ``cpr``: (weighted) fraction of the item's constraints that pass (open-instruct's IF reward);
- ``ipr``: 1 if every constraint passes, else 0;
- ``tcsr``: Video-IFBench's task-gated fraction, ``t * cpr`` with ``t`` the judge's task gate;
- ``MODE:DIMENSION`` (``cpr:format``, ``ipr:content``, ...): the same over the constraints of one
  dimension (format | content | style | structure); an item with no constraint of that dimension
  gets ``None`` (TRL ignores it in the aggregation), so per-dimension rewards combine through TRL's
  ``reward_weights`` and ``multi_objective_aggregation``.

``constraint_type_weights`` weighs constraint types inside ``cpr``/``tcsr`` (weight 0 leaves a type
out of every mode). Unjudged verdicts (``passed: None``: no judge, judge failed after retries)
follow the ``unjudged`` policy, never a silent 1:

- ``drop``: the constraint leaves the fraction (an unjudged task gate leaves the gate out); when
  nothing judged remains the reward is ``None``;
- ``zero``: an unjudged constraint (or gate) counts as failed;
- ``none``: any unjudged constraint (or, for ``tcsr``, gate) makes the reward ``None``.

An empty (or whitespace-only) completion gets 0 from every reward that applies to its item by default
(``empty="zero"``). The checkers keep the benchmarks' semantics, where an empty answer passes some
rules (Video-IFBench's forbidden keywords, length and count bounds starting at 0), so scored as is it
earns partial credit, and a policy gradient can climb towards saying nothing.
``empty="score"`` scores it like any other completion.

TRL calls every reward function once per batch with the same completions; the first call scores
the whole batch with ONE ``evaluate_many`` (the judge requests of the batch run concurrently through
the judge's thread pool and its on-disk cache), the others read the cached scores.

Example::

    reward = ChecklistReward(items, ChecklistEvaluator(judge), rewards=["cpr", "ipr"], unjudged="drop")
    trainer = GRPOTrainer(..., reward_funcs=reward.reward_funcs())
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ifpo.verifiers.checklist import ChecklistEvaluator, ItemResult
from ifpo.verifiers.io import dumps
from ifpo.verifiers.metrics import constraint_metrics, instruction_metrics

REWARD_MODES = ("cpr", "ipr", "tcsr")
DIMENSIONS = ("format", "content", "style", "structure")
UNJUDGED_POLICIES = ("drop", "zero", "none")
EMPTY_POLICIES = ("zero", "score")


@dataclass(frozen=True)
class RewardSpec:
    """One reward function: a mode, optionally restricted to one constraint dimension."""

    mode: str
    dimension: str | None = None

    @property
    def name(self) -> str:
        """The function's name, which TRL logs as ``rewards/<name>/mean``."""
        return self.mode if self.dimension is None else f"{self.mode}_{self.dimension}"

    @classmethod
    def parse(cls, text: str) -> RewardSpec:
        """``"cpr"``, ``"ipr"``, ``"tcsr"`` or ``"MODE:DIMENSION"``; bad names raise ``ValueError``."""
        mode, _, dimension = str(text).strip().partition(":")
        if mode not in REWARD_MODES:
            raise ValueError(f"reward {text!r}: mode must be one of {list(REWARD_MODES)} (optionally MODE:DIMENSION)")
        if dimension and dimension not in DIMENSIONS:
            raise ValueError(f"reward {text!r}: dimension must be one of {list(DIMENSIONS)}")
        return cls(mode, dimension or None)


def checklist_score(
    result: ItemResult | Mapping[str, Any],
    spec: RewardSpec,
    *,
    unjudged: str = "drop",
    type_weights: Mapping[str, float] | None = None,
) -> float | None:
    """The reward of one scored response (an ``ItemResult`` or its ``to_dict()``), or ``None``.

    >>> r = {"task_gate": None, "verdicts": [{"type": "word_count", "dimension": "format", "passed": True},
    ...                                      {"type": "tone", "dimension": "style", "passed": None}]}
    >>> checklist_score(r, RewardSpec("cpr"), unjudged="drop"), checklist_score(r, RewardSpec("cpr"), unjudged="zero")
    (1.0, 0.5)
    """
    if unjudged not in UNJUDGED_POLICIES:
        raise ValueError(f"unjudged must be one of {list(UNJUDGED_POLICIES)}; got {unjudged!r}")
    record = result.to_dict() if isinstance(result, ItemResult) else result
    weights = type_weights or {}
    verdicts = [
        (float(weights.get(v["type"], 1.0)), v["passed"])
        for v in record["verdicts"]
        if (spec.dimension is None or v.get("dimension") == spec.dimension) and weights.get(v["type"], 1.0) > 0
    ]
    if not verdicts:
        # Nothing to score (no constraint of this dimension): not applicable, not a pass.
        return None
    if any(passed is None for _, passed in verdicts):
        if unjudged == "none":
            return None
        if unjudged == "zero":
            verdicts = [(w, bool(passed)) for w, passed in verdicts]
        else:
            verdicts = [(w, passed) for w, passed in verdicts if passed is not None]
            if not verdicts:
                return None
    if spec.mode == "ipr":
        return 1.0 if all(passed for _, passed in verdicts) else 0.0
    total = sum(w for w, _ in verdicts)
    fraction = sum(w for w, passed in verdicts if passed) / total
    if spec.mode == "cpr":
        return fraction
    gate = record.get("task_gate")
    if gate is None:
        if unjudged == "none":
            return None
        # drop: the gate leaves the product (plain CPR); zero: an unjudged gate fails the task.
        return fraction if unjudged == "drop" else 0.0
    return fraction if gate else 0.0


def reward_values(
    result: ItemResult | Mapping[str, Any],
    specs: Sequence[RewardSpec],
    text: str,
    *,
    unjudged: str = "drop",
    type_weights: Mapping[str, float] | None = None,
    empty: str = "zero",
) -> dict[str, float | None]:
    """``{spec.name: reward}`` for one scored completion ``text``, with the empty-completion policy."""
    if empty not in EMPTY_POLICIES:
        raise ValueError(f"empty must be one of {list(EMPTY_POLICIES)}; got {empty!r}")
    if empty == "zero" and not text.strip():
        # Every reward that applies to the item is 0; one with nothing to score (no constraint of its
        # dimension: the only None under the 'zero' policy) stays None, as for any other completion.
        return {
            s.name: None if checklist_score(result, s, unjudged="zero", type_weights=type_weights) is None else 0.0
            for s in specs
        }
    return {s.name: checklist_score(result, s, unjudged=unjudged, type_weights=type_weights) for s in specs}


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a string, or conversational ``[{"role": "assistant", "content": ...}]``."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        parts = []
        for message in completion:
            content = message.get("content") if isinstance(message, Mapping) else message
            if isinstance(content, list):
                parts += [p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
            elif content is not None:
                parts.append(str(content))
        return "".join(parts)
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


class ChecklistReward:
    """Reward functions for ``GRPOTrainer`` that score completions with the verifier suite.

    ``items`` are the training items (the dataset carries their ``id`` in the ``item_id`` column).
    Besides the rewards, each scored batch logs through TRL's ``log_metric`` (averaged per logging
    step): ``checklist/ipr`` and ``checklist/cpr`` of the rollouts (as evaluation computes them:
    unjudged verdicts leave the rates), ``checklist/unjudged`` (unjudged verdicts per batch),
    ``checklist/undetermined`` (rollouts whose IPR the unjudged verdicts leave open),
    ``checklist/pass_rate/<type>`` and ``checklist/seconds_per_rollout``; and,
    every ``rollouts_every`` steps, ``rollouts_per_step`` rollouts with their verdicts go to
    ``rollouts_path`` (JSON lines, main process only).
    """

    def __init__(
        self,
        items: Sequence[Mapping[str, Any]],
        evaluator: ChecklistEvaluator,
        *,
        rewards: Sequence[str] = ("cpr",),
        unjudged: str = "drop",
        type_weights: Mapping[str, float] | None = None,
        empty: str = "zero",
        rollouts_path: str | Path | None = None,
        rollouts_every: int = 10,
        rollouts_per_step: int = 4,
        is_main_process: bool = True,
    ) -> None:
        if unjudged not in UNJUDGED_POLICIES:
            raise ValueError(f"unjudged must be one of {list(UNJUDGED_POLICIES)}; got {unjudged!r}")
        if empty not in EMPTY_POLICIES:
            raise ValueError(f"empty must be one of {list(EMPTY_POLICIES)}; got {empty!r}")
        for name, weight in (type_weights or {}).items():
            if not isinstance(weight, (int, float)) or weight < 0:
                raise ValueError(f"constraint_type_weights[{name!r}] must be a number >= 0; got {weight!r}")
        self.specs = [RewardSpec.parse(r) for r in rewards]
        if not self.specs:
            raise ValueError("rewards is empty: name at least one of cpr, ipr, tcsr (or MODE:DIMENSION)")
        names = [s.name for s in self.specs]
        if len(set(names)) != len(names):
            raise ValueError(f"rewards lists a function twice: {names}")
        self.items = {str(item["id"]): item for item in items}
        self.evaluator = evaluator
        self.unjudged = unjudged
        self.type_weights = dict(type_weights or {})
        self.empty = empty
        self.rollouts_path = Path(rollouts_path) if rollouts_path is not None else None
        self.rollouts_every = rollouts_every
        self.rollouts_per_step = rollouts_per_step
        self.is_main_process = is_main_process
        self._next_rollout_step = 0
        # Scores of the current batch only, keyed by (item id, completion text): every reward function of
        # one batch reads them, and memory stays bounded by one batch.
        self._cache: dict[tuple[str, str], tuple[ItemResult, dict[str, float | None]]] = {}
        self.evaluations = 0  # evaluate_many calls
        self.rollouts_scored = 0
        self.seconds = 0.0

    # -- scoring -------------------------------------------------------------------------------

    def score_batch(self, item_ids: Sequence[str], completions: Sequence[Any], **kwargs: Any) -> list[dict]:
        """Per completion: ``{name: reward}`` for every configured reward (one evaluation per new batch)."""
        if len(item_ids) != len(completions):
            raise ValueError(f"{len(item_ids)} item ids for {len(completions)} completions")
        texts = [completion_text(c) for c in completions]
        keys = [(str(i), t) for i, t in zip(item_ids, texts)]
        missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            unknown = sorted({i for i, _ in missing if i not in self.items})
            if unknown:
                raise KeyError(f"reward: item id(s) {unknown[:5]} are not among the {len(self.items)} training items")
            start = time.perf_counter()
            results = self.evaluator.evaluate_many([(self.items[i], t) for i, t in missing], progress=False)
            seconds = time.perf_counter() - start
            self.evaluations += 1
            self.rollouts_scored += len(missing)
            self.seconds += seconds
            fresh = {k: (r, self._scores(r, k[1])) for k, r in zip(missing, results)}
            # A new batch replaces the old one; keys repeated within this batch are kept.
            self._cache = {k: self._cache.get(k) or fresh[k] for k in dict.fromkeys(keys)}
            self._log(keys, seconds / max(len(missing), 1), **kwargs)
        return [self._cache[k][1] for k in keys]

    def _scores(self, result: ItemResult, text: str) -> dict[str, float | None]:
        return reward_values(result, self.specs, text, unjudged=self.unjudged, type_weights=self.type_weights,
                             empty=self.empty)

    def reward_funcs(self) -> list[Callable[..., list[float | None]]]:
        """One function per configured reward, named as TRL logs it (``cpr``, ``cpr_format``, ...)."""
        funcs = []
        for spec in self.specs:

            def reward(prompts=None, completions=None, item_id=None, _name=spec.name, **kwargs):
                if item_id is None:
                    raise ValueError("reward: the dataset has no 'item_id' column (needed to find each item)")
                return [scores[_name] for scores in self.score_batch(item_id, completions, **kwargs)]

            reward.__name__ = spec.name
            reward.__qualname__ = f"ChecklistReward.{spec.name}"
            funcs.append(reward)
        return funcs

    # -- logging -------------------------------------------------------------------------------

    def _log(self, keys: list[tuple[str, str]], seconds_per_rollout: float, **kwargs: Any) -> None:
        records = [self._cache[k][0].to_dict() for k in keys]
        log_metric = kwargs.get("log_metric")
        if log_metric is not None:
            per_constraint = constraint_metrics(records)
            per_item = instruction_metrics(records)
            if per_item["ipr"] is not None:
                log_metric("checklist/ipr", per_item["ipr"])
            if per_constraint["cpr_micro"] is not None:
                log_metric("checklist/cpr", per_constraint["cpr_micro"])
            log_metric("checklist/unjudged", float(per_constraint["constraints_unjudged"]))
            # Rollouts that passed every judged constraint but have unjudged ones: left out of checklist/ipr.
            log_metric("checklist/undetermined", float(per_item["items_undetermined"]))
            log_metric("checklist/seconds_per_rollout", seconds_per_rollout)
            log_metric("checklist/empty", float(sum(not text.strip() for _, text in keys)))
            for ctype, stats in per_constraint["by_constraint_type"].items():
                if stats["cpr"] is not None:
                    log_metric(f"checklist/pass_rate/{ctype}", stats["cpr"])
        state = kwargs.get("trainer_state")
        step = state.global_step if state is not None else self.evaluations - 1
        if self.rollouts_path is None or not self.is_main_process or step < self._next_rollout_step:
            return
        self._next_rollout_step = step + self.rollouts_every
        self.rollouts_path.parent.mkdir(parents=True, exist_ok=True)
        with self.rollouts_path.open("a", encoding="utf-8") as handle:
            for key in keys[: self.rollouts_per_step]:
                result, scores = self._cache[key]
                record = {
                    "step": step,
                    "item_id": key[0],
                    "completion": key[1],
                    "rewards": scores,
                    "task_gate": result.task_gate,
                    "verdicts": [
                        {k: v[k] for k in ("constraint_id", "type", "dimension", "route", "passed", "reason")}
                        for v in (verdict.to_dict() for verdict in result.verdicts)
                    ],
                }
                handle.write(dumps(record) + "\n")  # NaN-free JSON
