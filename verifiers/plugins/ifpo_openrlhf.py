"""OpenRLHF's reward function file: ``--remote_rm_url /path/to/ifpo_openrlhf.py`` (this file's path).

The contract, from openrlhf 0.11.2 (PyPI wheel), ``openrlhf/utils/agent.py``: ``SingleTurnAgentExecutor``
loads ``reward_func`` from a ``--remote_rm_url`` ending in ``.py`` and calls ``reward_func(queries, prompts,
labels)`` in a thread, one query per call; a query is the prompt and response decoded together with their
special tokens, a label the dataset's ``--label_key`` value. The answer is read like the remote reward model's
(``rewards``, ``scores``, ``extra_logs``; openrlhf/cli/serve_rm.py), so it is the same as ``ifpo serve``'s
``/get_reward``. Labels are item ids (with ``IFPO_ITEMS``) or items as JSON text; the settings come from the
``IFPO_*`` environment (``ifpo.verifiers.reward_adapters``).
"""

from __future__ import annotations

from typing import Any

from ifpo.verifiers.reward_adapters import adapter, openrlhf_completion, openrlhf_rewards


def reward_func(queries: list[str], prompts: list[str], labels: list[Any]) -> dict[str, Any]:
    a = adapter()
    if len(prompts) != len(queries):
        raise ValueError(f"{len(prompts)} prompts for {len(queries)} queries")
    texts = [openrlhf_completion(q, p, f"queries[{i}]") for i, (q, p) in enumerate(zip(queries, prompts))]
    return openrlhf_rewards(a.score(labels, texts), a)
