"""TRL ``reward_funcs`` for a plain ``trl.GRPOTrainer`` (no ifpo trainer)::

    from ifpo.verifiers.plugins.ifpo_trl import reward_funcs
    trainer = GRPOTrainer(model=..., reward_funcs=reward_funcs("items.jsonl", rewards=["cpr", "ipr"]), ...)

The dataset carries each row's item id in an ``item_id`` column. The contract, from trl (``GRPOTrainer``'s
``_calculate_rewards``): each function is called ``f(prompts=, completions=, completion_ids=, **columns,
trainer_state=, log_metric=)`` and returns one float or None per completion (None: left out of the
aggregation). The functions share one scoring per batch (``ifpo.verifiers.rewards.ChecklistReward``, the same
object ifpo's own GRPO uses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.verifiers.rewards import ChecklistReward


def reward_funcs(items: str | Path | Sequence[Mapping[str, Any]], *, rewards: Sequence[str] = ("cpr",),
                 judge: str | Path | None = None, unjudged: str = "drop", empty: str = "zero",
                 media_root: str | Path | None = None, **kwargs: Any) -> list[Callable[..., list[float | None]]]:
    """One TRL reward function per reward name, scoring against ``items`` (a JSONL path or item dicts)."""
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.judge import make_judge

    if isinstance(items, (str, Path)):
        from ifpo.verifiers.schema import load_items

        loaded = load_items(Path(items), root=media_root)
        if loaded.errors:
            raise ValueError("\n".join(str(e) for e in loaded.errors[:20]))
        media_root = media_root or Path(items).parent
        items = loaded.items
    evaluator = ChecklistEvaluator(make_judge(judge), media_root=media_root)
    return ChecklistReward(items, evaluator, rewards=rewards, unjudged=unjudged, empty=empty, **kwargs).reward_funcs()
