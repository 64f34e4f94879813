"""verl's custom reward function: ``compute_score`` over ifpo's checklist.

    reward.custom_reward_function.path=pkg://ifpo.verifiers.plugins.ifpo_verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.rewards=[cpr,ipr]   # optional; judge=JUDGE.yaml, ...

The contract, from verl 0.9.1 (PyPI wheel): ``verl/trainer/ppo/reward.py`` (``get_custom_reward_fn``: the
function named by ``path``/``name``, ``reward_kwargs`` merged into each call's keywords; ``pkg://`` paths
through ``verl/utils/import_utils.py`` ``load_module``) and
``verl/experimental/reward_loop/reward_manager/naive.py`` (``NaiveRewardManager.run_single`` calls
``compute_score(data_source=, solution_str=, ground_truth=, extra_info=, **extra)`` with the response decoded
without special tokens and ``ground_truth = non_tensor_batch["reward_model"]["ground_truth"]``; a dict result
must hold ``score``, its other keys become ``reward_extra_info``).

``ground_truth`` is the item as JSON text (``ifpo export --to verl`` writes it) or an item id with
``items=ITEMS.jsonl`` (or ``IFPO_ITEMS``). The result: ``score`` (the first reward, None as ``none_reward``),
every reward by name (None as ``none_reward``: verl stacks them into arrays) and ``unjudged`` (verdicts).
"""

from __future__ import annotations

from typing import Any

from ifpo.verifiers.reward_adapters import adapter, unjudged_count

# Keywords verl itself adds to the call (naive.py, with a reward router); not ifpo settings.
VERL_KEYWORDS = ("reward_router_address", "reward_model_tokenizer")


def compute_score(data_source: Any = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: Any = None, **kwargs: Any) -> dict[str, float]:
    settings = {k: v for k, v in kwargs.items() if k not in VERL_KEYWORDS}
    a = adapter(settings)
    if ground_truth is None and isinstance(extra_info, dict) and extra_info.get("item_id") is not None:
        ground_truth = extra_info["item_id"]
    [(record, values)] = a.score([ground_truth], [solution_str], field_name="ground_truth")
    out = {"score": a.number(values[a.specs[0].name])}
    out.update({name: a.number(value) for name, value in values.items()})
    out["unjudged"] = float(unjudged_count(record))
    return out
