"""The checklist rewards of ``train/grpo.py``; they live in ``ifpo.verifiers.rewards`` (no torch), so the
light install, ``ifpo serve`` and the RL engines' adapters compute the same numbers. Re-exported here
for the trainer and its tests."""

from ifpo.verifiers.rewards import (  # noqa: F401
    DIMENSIONS,
    EMPTY_POLICIES,
    REWARD_MODES,
    UNJUDGED_POLICIES,
    ChecklistReward,
    RewardSpec,
    checklist_score,
    completion_text,
    reward_values,
)
