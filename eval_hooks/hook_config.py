"""The checkpoint evaluation's settings (``eval_hook:`` in a recipe), apart from the callback itself.

Kept free of transformers and torch so that a recipe is checked, and ``train/dpo.py --help`` printed, before
any heavy import (``eval_hooks/callback.py`` re-exports these names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ifpo.verifiers.generation import GenerationConfig

TRAINING_MODEL = "(training model)"  # GenerationConfig.model placeholder: the callback uses the live weights

# VCIFBench evaluated at temperature 0.1; greedy (0.0) is the other common choice.
DEFAULT_GENERATION = {"temperature": 0.1, "max_new_tokens": 512}


@dataclass
class EvalHookConfig:
    """Checkpoint evaluation settings, as a recipe carries them (``eval_hook:`` mapping; keys = these fields)."""

    items: str = field(metadata={"help": "items JSONL evaluated at every checkpoint"})
    root: str | None = field(default=None, metadata={"help": "dataset root for media paths (default: the items file's folder)"})
    every_steps: int = field(default=0, metadata={"help": "evaluate every N optimizer steps (0: only on save)"})
    on_save: bool = field(default=True, metadata={"help": "evaluate whenever the trainer saves a checkpoint"})
    on_start: bool = field(default=True, metadata={"help": "evaluate the base weights at the first step (the run's baseline)"})
    on_end: bool = field(default=True, metadata={"help": "evaluate the final weights when training ends (if not done at that step)"})
    max_items: int | None = field(default=None, metadata={"help": "evaluate only the first N items (quick looks)"})
    generation: dict[str, Any] = field(
        default_factory=dict,
        metadata={"help": "keys of verifiers.generation.GenerationConfig (temperature 0.1 and 512 new tokens unless set)"},
    )
    judge: str | None = field(default=None, metadata={"help": "judge YAML (verifiers.judge.JudgeConfig); none: judge verdicts are unjudged"})
    progress: bool = field(default=False, metadata={"help": "progress bars while generating and judging"})
    mode: str = field(default="strict", metadata={"help": "rule checks: 'strict' (the response as given) or 'loose' "
                      "(IFEval's loose definition: also without the first/last line or '*')"})

    def __post_init__(self) -> None:
        if not self.items:
            raise ValueError("eval hook: 'items' (an items JSONL file) is required")
        if self.every_steps < 0:
            raise ValueError(f"eval hook: every_steps must be >= 0, got {self.every_steps}")
        if not (self.every_steps or self.on_save or self.on_start or self.on_end):
            raise ValueError("eval hook: every_steps, on_save, on_start and on_end are all off: nothing would be evaluated")
        if self.max_items is not None and self.max_items <= 0:
            raise ValueError(f"eval hook: max_items must be > 0, got {self.max_items}")
        if self.mode not in ("strict", "loose"):
            raise ValueError(f"eval hook: mode must be 'strict' or 'loose', got {self.mode!r}")
        if not isinstance(self.generation, Mapping):
            raise ValueError("eval hook: 'generation' must be a mapping of GenerationConfig keys")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "eval hook") -> EvalHookConfig:
        from ifpo.verifiers.config import from_mapping

        return from_mapping(cls, data, source)


def generation_config(generation: GenerationConfig | Mapping[str, Any] | None) -> GenerationConfig:
    """The in-process generation settings of the callback (defaults: ``DEFAULT_GENERATION``)."""
    if isinstance(generation, GenerationConfig):
        config = generation
    else:
        data = {**DEFAULT_GENERATION, **dict(generation or {})}
        data.setdefault("model", TRAINING_MODEL)
        data.setdefault("backend", "transformers")
        config = GenerationConfig.from_mapping(data, source="eval hook generation")
    if config.backend != "transformers":
        raise ValueError(
            "eval hook generation: backend must be 'transformers' (the callback generates with the weights being "
            "trained); score an endpoint with `ifpo evaluate --endpoint` instead"
        )
    return config
