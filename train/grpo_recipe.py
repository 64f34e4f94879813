"""Recipe parsing for ``train/grpo.py``: the same rules as ``train/dpo.py``, over GRPO's dataclasses.

``train/grpo.py RECIPE.yaml [--key value ...]`` resolves every setting as

    ifpo defaults  <  RECIPE.yaml  <  --key value (command line)

over :class:`GRPORecipe` (ifpo's keys: model and LoRA, exactly as the DPO recipe spells them; items;
media budgets; checklist rewards; judge; rollout samples) and TRL's ``GRPOConfig`` (``learning_rate``,
``beta``, ``num_generations``, ``max_completion_length``, ``temperature``, ``reward_weights``,
``multi_objective_aggregation``, ``use_vllm``, ``vllm_mode``, ...). Reading, type conversion and
unknown-key suggestions are ``train/recipe.py``'s (:func:`ifpo.train.recipe.read_recipe_values`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ifpo.train.recipe import (
    TRL_DEFAULTS,
    DPORecipe,
    Recipe,
    RecipeError,
    _budget_field,
    _check_trackers,
    check_cpu_precision,
    check_eval_hook,
    check_model_source,
    eval_hook_config,
    eval_hook_help_lines,
    field_help_lines,
    read_recipe_values,
)
from ifpo.train.rewards import DIMENSIONS, EMPTY_POLICIES, REWARD_MODES, UNJUDGED_POLICIES, RewardSpec
from ifpo.train.vision import MediaBudget
from ifpo.train.vllm_rollouts import ROLLOUT_BACKENDS

SCRIPT = "train/grpo.py"
GRPO_TRL_DEFAULTS: dict[str, Any] = {**TRL_DEFAULTS, "output_dir": "runs/grpo"}
MEDIA_KINDS = ("text", "image", "video")


def _dpo_field(name: str):
    """A field mirroring :class:`DPORecipe`'s (same default and help): model and LoRA keys read the same in both."""
    source = DPORecipe.__dataclass_fields__[name]
    if source.default_factory is not dataclasses.MISSING:
        return field(default_factory=source.default_factory, metadata=dict(source.metadata))
    return field(default=source.default, metadata=dict(source.metadata))


@dataclass
class GRPORecipe:
    """ifpo's GRPO keys. Everything else in a recipe is a TRL ``GRPOConfig`` field."""

    # model (as in the DPO recipe; train/model.py reads these)
    model_name_or_path: str = _dpo_field("model_name_or_path")
    model_revision: str | None = _dpo_field("model_revision")
    tiny_seed: int = _dpo_field("tiny_seed")
    dtype: str = _dpo_field("dtype")
    attn_implementation: str | None = _dpo_field("attn_implementation")
    # LoRA
    use_lora: bool = _dpo_field("use_lora")
    lora_r: int = _dpo_field("lora_r")
    lora_alpha: int = _dpo_field("lora_alpha")
    lora_dropout: float = _dpo_field("lora_dropout")
    lora_target_modules: list[str] = _dpo_field("lora_target_modules")
    lora_vision: bool = _dpo_field("lora_vision")
    freeze_vision_tower: bool = _dpo_field("freeze_vision_tower")
    merge_adapter: bool = _dpo_field("merge_adapter")
    lora_modules_to_save: list[str] = field(
        default_factory=list,
        metadata={"help": "modules trained in full beside the LoRA adapter and saved with it (PEFT's modules_to_save), "
                  "e.g. [lm_head]: a random model's output head caps how far LoRA below it can move the policy"},
    )
    # data: items, not pairs
    items: str = field(
        default="sample",
        metadata={"help": "items JSONL (the item schema; validated on load), or 'sample' for sample/items.jsonl"},
    )
    media_root: str | None = field(
        default=None, metadata={"help": "folder media paths are relative to (default: the items file's folder)"}
    )
    item_ids: list[str] | None = field(default=None, metadata={"help": "train on these item ids only"})
    item_media: list[str] = field(
        default_factory=lambda: list(MEDIA_KINDS),
        metadata={"help": "train on items whose media are of these kinds: text, image, video"},
    )
    max_items: int | None = field(default=None, metadata={"help": "use only the first N selected items"})
    # media budgets (qwen-vl-utils' policy; same keys as the DPO recipe)
    image_min_pixels: int = _budget_field("image_min_pixels")
    image_max_pixels: int = _budget_field("image_max_pixels")
    image_max_side: int | None = _budget_field("image_max_side")
    video_fps: float = _budget_field("video_fps")
    video_min_frames: int = _budget_field("video_min_frames")
    video_max_frames: int = _budget_field("video_max_frames")
    video_min_pixels: int = _budget_field("video_min_pixels")
    video_max_pixels: int = _budget_field("video_max_pixels")
    video_total_pixels: int = _budget_field("video_total_pixels")
    video_max_side: int | None = _budget_field("video_max_side")
    # rewards
    rewards: list[str] = field(
        default_factory=lambda: ["cpr"],
        metadata={"help": f"reward functions: {', '.join(REWARD_MODES)}, or MODE:DIMENSION with a dimension of "
                  f"{', '.join(DIMENSIONS)} (one TRL reward function each; weigh them with reward_weights)"},
    )
    constraint_type_weights: dict[str, float] = field(
        default_factory=dict,
        metadata={"help": "weight of each constraint type inside cpr/tcsr (default 1; 0 leaves a type out)"},
    )
    unjudged: str = field(
        default="drop",
        metadata={"help": "unjudged verdicts: 'drop' (leave the fraction), 'zero' (count as failed), "
                  "'none' (the reward is None, ignored by TRL)"},
    )
    empty_completions: str = field(
        default="zero",
        metadata={"help": "an empty or whitespace-only completion: 'zero' (every applicable reward is 0) or "
                  "'score' (scored as is: the benchmarks' rules let an empty answer pass some constraints)"},
    )
    check_mode: str = field(
        default="strict",
        metadata={"help": "rule checks in the rewards: 'strict' (the rollout as given) or 'loose' (IFEval's loose "
                  "definition: a check also passes without the first/last line or '*')"},
    )
    judge: str | None = field(
        default=None,
        metadata={"help": "judge YAML (verifiers.judge.JudgeConfig) for judge/hybrid constraints and the task gate; "
                  "null: they are unjudged and follow 'unjudged'"},
    )
    # rollout samples
    rollouts_every: int = field(
        default=10, metadata={"help": "write sample rollouts with their verdicts to OUTPUT_DIR/rollouts.jsonl every N steps"}
    )
    rollouts_per_step: int = field(default=4, metadata={"help": "rollouts written each time"})
    eval_hook: dict | None = _dpo_field("eval_hook")
    # shared-prompt forward and media guard (train/shared_prompt.py, verifiers/media_guard.py)
    shared_prompt: bool = field(
        default=True,
        metadata={"help": "run a prompt and its media once for the completions of it that share a forward chunk "
                  "(block attention mask; same log-probs); turned off automatically with flash attention"},
    )
    media_guard: bool = field(
        default=True,
        metadata={"help": "refuse, naming the item, a prompt whose image/video placeholders and media tensors disagree "
                  "or whose media vanished (before generation and every forward)"},
    )
    # rollouts: transformers generate in the training process, or a vLLM server (docs/vllm.md)
    rollout_backend: str = field(
        default="transformers",
        metadata={"help": f"where rollouts are generated: {', '.join(ROLLOUT_BACKENDS)} (a vLLM OpenAI-compatible "
                  "server in its own environment, the policy's LoRA adapter loaded into it at each sync; "
                  "use_vllm: true selects it)"},
    )
    vllm_url: str = field(default="http://127.0.0.1:8000/v1", metadata={"help": "the vLLM server's /v1 base URL"})
    vllm_sync_steps: int = field(
        default=1, metadata={"help": "load the policy's current adapter into the server every N optimizer steps "
                             "(rollouts are then up to N-1 steps stale; rollout/staleness_steps logs it)"},
    )
    vllm_adapter_dir: str | None = field(
        default=None, metadata={"help": "folder the synced adapters are written to, readable by the server "
                                "(default OUTPUT_DIR/vllm_adapters)"},
    )
    vllm_api_key_env: str | None = field(
        default=None, metadata={"help": "NAME of the env variable holding the server's --api-key, if it has one"},
    )
    vllm_timeout_s: float = field(default=600.0, metadata={"help": "seconds one rollout request may take"})
    vllm_reconnect_s: float = field(
        default=600.0, metadata={"help": "seconds to wait for a server that went away (restart) before failing"},
    )
    # resume
    resume: bool = _dpo_field("resume")
    overwrite: bool = _dpo_field("overwrite")
    interrupt_after_steps: int | None = _dpo_field("interrupt_after_steps")

    def __post_init__(self) -> None:
        if not self.model_name_or_path:
            raise ValueError("model_name_or_path is empty")
        check_model_source(self.model_name_or_path)
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be auto, float32, bfloat16 or float16; got {self.dtype!r}")
        if self.use_lora and self.lora_r <= 0:
            raise ValueError(f"lora_r must be positive; got {self.lora_r}")
        if self.lora_vision and not self.use_lora:
            raise ValueError("lora_vision: true needs use_lora: true")
        if not self.lora_target_modules:
            raise ValueError("lora_target_modules is empty")
        if self.lora_modules_to_save and not self.use_lora:
            raise ValueError("lora_modules_to_save needs use_lora: true (full fine-tuning trains every module)")
        if any(not isinstance(m, str) or not m for m in self.lora_modules_to_save):
            raise ValueError(f"lora_modules_to_save must list module names; got {self.lora_modules_to_save}")
        if not 0.0 <= self.lora_dropout < 1.0:
            raise ValueError(f"lora_dropout must be in [0, 1); got {self.lora_dropout}")
        if self.model_name_or_path.startswith("random:") and not self.use_lora:
            raise ValueError("model_name_or_path: random:... needs use_lora: true")
        bad = [k for k in self.item_media if k not in MEDIA_KINDS]
        if bad or not self.item_media:
            raise ValueError(f"item_media must list some of {list(MEDIA_KINDS)}; got {self.item_media}")
        if self.max_items is not None and self.max_items <= 0:
            raise ValueError(f"max_items must be positive; got {self.max_items}")
        specs = [RewardSpec.parse(r) for r in self.rewards]
        if not specs:
            raise ValueError("rewards is empty: name at least one of cpr, ipr, tcsr")
        if len({s.name for s in specs}) != len(specs):
            raise ValueError(f"rewards lists a function twice: {self.rewards}")
        for name, weight in self.constraint_type_weights.items():
            if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
                raise ValueError(f"constraint_type_weights[{name!r}] must be a number >= 0; got {weight!r}")
        if self.unjudged not in UNJUDGED_POLICIES:
            raise ValueError(f"unjudged must be one of {list(UNJUDGED_POLICIES)}; got {self.unjudged!r}")
        if self.empty_completions not in EMPTY_POLICIES:
            raise ValueError(f"empty_completions must be one of {list(EMPTY_POLICIES)}; got {self.empty_completions!r}")
        if self.check_mode not in ("strict", "loose"):
            raise ValueError(f"check_mode must be 'strict' or 'loose'; got {self.check_mode!r}")
        if self.rollouts_every <= 0 or self.rollouts_per_step < 0:
            raise ValueError("rollouts_every must be positive and rollouts_per_step >= 0")
        if self.interrupt_after_steps is not None and self.interrupt_after_steps <= 0:
            raise ValueError(f"interrupt_after_steps must be positive; got {self.interrupt_after_steps}")
        self.media_budget()  # validates the budgets by name
        self.eval_hook = check_eval_hook(self.eval_hook)
        self._check_rollouts()

    def _check_rollouts(self) -> None:
        if self.rollout_backend not in ROLLOUT_BACKENDS:
            raise ValueError(f"rollout_backend must be one of {list(ROLLOUT_BACKENDS)}; got {self.rollout_backend!r}")
        if self.vllm_sync_steps <= 0 or self.vllm_timeout_s <= 0 or self.vllm_reconnect_s < 0:
            raise ValueError("vllm_sync_steps and vllm_timeout_s must be positive and vllm_reconnect_s >= 0")
        if self.rollout_backend != "vllm_server":
            return
        from ifpo.verifiers.http import base_url_problem

        problem = base_url_problem(self.vllm_url)
        if problem:
            raise ValueError(f"vllm_url: {problem}")
        # What reaches the server is a LoRA adapter of the language model: vLLM loads no full weights at
        # runtime, no modules_to_save copies and no vision-tower LoRA (vllm/lora/peft_helper.py).
        if not self.use_lora:
            raise ValueError("rollout_backend: vllm_server needs use_lora: true (the server gets the policy as a "
                             "LoRA adapter; full fine-tuning would need the whole model reloaded at each sync)")
        if self.lora_modules_to_save:
            raise ValueError(f"rollout_backend: vllm_server cannot serve lora_modules_to_save "
                             f"{self.lora_modules_to_save} (vLLM loads LoRA matrices only): set lora_modules_to_save: []")
        if self.lora_vision:
            raise ValueError("rollout_backend: vllm_server serves LoRA on the language model only: set lora_vision: false")

    def media_budget(self) -> MediaBudget:
        """The image/video budgets as the vision loaders take them."""
        return MediaBudget(**{f.name: getattr(self, f.name) for f in dataclasses.fields(MediaBudget)})

    def eval_hook_config(self) -> dict | None:
        return eval_hook_config(self.eval_hook, self.media_budget())


def recipe_help() -> str:
    """Help text for ``train/grpo.py --help``, generated from the dataclass."""
    lines = [
        f"usage: accelerate launch {SCRIPT} RECIPE.yaml [--key value ...]",
        "",
        "Settings resolve as ifpo defaults < RECIPE.yaml < command line. ifpo's keys:",
    ]
    lines += field_help_lines(GRPORecipe)
    lines += eval_hook_help_lines()
    lines += [
        "",
        "Any other key is a field of TRL's GRPOConfig (learning_rate, beta, num_generations, max_completion_length,",
        "temperature, reward_weights, multi_objective_aggregation, scale_rewards, loss_type, use_vllm, vllm_mode,",
        "per_device_train_batch_size, gradient_accumulation_steps, bf16, use_cpu, report_to, output_dir, seed, ...).",
        f"ifpo defaults for TRL keys: {GRPO_TRL_DEFAULTS}",
    ]
    return "\n".join(lines)


def parse_grpo_recipe(argv: list[str]) -> Recipe:
    """Parse ``RECIPE.yaml [--key value ...]`` into a :class:`ifpo.train.recipe.Recipe` (``args`` a ``GRPOConfig``)."""
    from trl import GRPOConfig

    path, ifpo_values, trl_only = read_recipe_values(argv, GRPORecipe, GRPOConfig, script=SCRIPT, refused={})
    trl_values = {**GRPO_TRL_DEFAULTS, **trl_only}
    try:
        recipe = GRPORecipe(**ifpo_values)
    except ValueError as exc:
        raise RecipeError(str(exc)) from exc

    check_cpu_precision(trl_values, example="recipes/tiny_grpo.yaml")
    if recipe.resume and trl_values.get("resume_from_checkpoint"):
        raise RecipeError("give either resume: true (last checkpoint) or resume_from_checkpoint: PATH, not both")
    weights = trl_values.get("reward_weights")
    if weights is not None and len(weights) != len(recipe.rewards):
        raise RecipeError(f"reward_weights {weights} needs one weight per entry of rewards ({recipe.rewards})")
    if trl_values.get("use_vllm"):
        # TRL's in-process vLLM cannot be installed beside ifpo (no vLLM release accepts its transformers), and
        # its weight sync and media handling do not cover ifpo's video prompts: use_vllm selects ifpo's vLLM
        # server rollouts instead (docs/vllm.md), and TRL itself generates nothing.
        if ifpo_values.get("rollout_backend", "vllm_server") != "vllm_server":
            raise RecipeError(f"use_vllm: true contradicts rollout_backend: {recipe.rollout_backend}")
        if trl_values.get("vllm_mode", "server") != "server":
            raise RecipeError("vllm_mode: colocate is not available in ifpo: vLLM runs as a server in its own "
                              "environment (docs/vllm.md); drop vllm_mode")
        try:
            recipe = dataclasses.replace(recipe, rollout_backend="vllm_server")
        except ValueError as exc:
            raise RecipeError(str(exc)) from exc
        trl_values["use_vllm"] = False
    _check_trackers(trl_values.get("report_to"))
    try:
        args = GRPOConfig(**trl_values)
    except (ValueError, TypeError) as exc:
        raise RecipeError(f"GRPOConfig: {exc}") from exc
    resolved = {**{f.name: getattr(recipe, f.name) for f in dataclasses.fields(GRPORecipe)}, **trl_values}
    return Recipe(path=path, ifpo=recipe, args=args, resolved=resolved)
