"""ms-swift's reward plugin: ``--external_plugins /path/to/ifpo_swift.py --reward_funcs ifpo_cpr`` (or
``ifpo_ipr``, ``ifpo_tcsr``, ``ifpo`` for the first of ``IFPO_REWARDS``).

The contract, from ms-swift 4.6.0 (PyPI wheel): ``swift/rewards/orm.py`` (``ORM``: ``__init__(args=None,
**kwargs)``, ``__call__(completions, **kwargs) -> List[float]``; the ``orms`` registry) and
``swift/rl_core/grpo_algorithm.py`` (``compute_rewards_per_func``: ``reward_func(completions,
**reward_kwargs)`` with the dataset's columns batched into ``reward_kwargs``; a None reward becomes NaN, left
out like TRL's). The item of each completion comes from the dataset's ``item_id`` column (an id, with
``IFPO_ITEMS``) or ``ifpo_item`` column (the item as JSON text); settings from the ``IFPO_*`` environment.
"""

from __future__ import annotations

from typing import Any

from ifpo.verifiers.reward_adapters import adapter
from ifpo.verifiers.rewards import REWARD_MODES

try:
    from swift.rewards import ORM, orms
except ModuleNotFoundError:  # imported outside ms-swift (the wheel's import check): the classes, unregistered
    ORM, orms = object, {}


class IfpoChecklistORM(ORM):
    """One checklist reward per completion: ``reward`` (a mode name) or the first of ``IFPO_REWARDS``."""

    reward: str | None = None

    def __call__(self, completions: list[str], **kwargs: Any) -> list[float | None]:
        labels = kwargs.get("ifpo_item") or kwargs.get("item_id")
        if labels is None:
            raise ValueError("ifpo reward: the dataset needs an 'item_id' (with IFPO_ITEMS) or 'ifpo_item' column")
        overrides = {"rewards": [self.reward]} if self.reward else None
        a = adapter(overrides)
        name = a.specs[0].name
        return [values[name] for _, values in a.score(list(labels), list(completions), field_name="item")]


orms["ifpo"] = IfpoChecklistORM
for _mode in REWARD_MODES:
    orms[f"ifpo_{_mode}"] = type(f"Ifpo{_mode.capitalize()}ORM", (IfpoChecklistORM,), {"reward": _mode})
