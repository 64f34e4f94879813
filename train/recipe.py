"""Recipe parsing for ``train/dpo.py``: one flat YAML, keys = dataclass fields, positional on the command line.

``train/dpo.py RECIPE.yaml [--key value ...]`` resolves every setting as

    ifpo defaults  <  RECIPE.yaml  <  --key value (command line)

over two dataclasses: :class:`DPORecipe` (ifpo's keys: model, LoRA, pairs, media budgets, length
check, reference precompute, resume) and TRL's ``DPOConfig`` (training arguments and loss knobs:
``learning_rate``, ``beta``, ``loss_type``, ``report_to``, ...). TRL's own parser only reads
``--config FILE``, hence this module. A key that is in neither dataclass is an error naming the closest
valid key; values are converted to the field's type (``--learning_rate 1e-5``, ``--loss_type
sigmoid,sft``, ``--resume``) and bad combinations are rejected by name.

A few ``DPOConfig`` keys are owned by ifpo because TRL's behaviour for them breaks vision data:
``max_length`` (TRL truncates, cutting vision tokens; ifpo checks lengths up front and never cuts),
``precompute_ref_log_probs`` / ``precompute_ref_batch_size`` (TRL refuses them for vision data; ifpo
implements them). ``truncation_mode`` and ``padding_free`` are refused.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ifpo.verifiers.media import MediaBudget  # not train.vision: --help and key checks stay torch-free

# ifpo's defaults for TRL keys (applied below the recipe file). CPU-vs-GPU precision is left to the
# recipe on purpose: a recipe states where it runs.
TRL_DEFAULTS: dict[str, Any] = {
    "output_dir": "runs/dpo",
    "report_to": "none",
    "logging_steps": 10,
    # TRL 1.16 defaults gradient checkpointing on; transformers >= 5.23 calls it activation_checkpointing (pyproject floor).
    "activation_checkpointing": True,
}
# Keys of DPOConfig that ifpo reimplements (its dataclass field wins) or refuses.
OWNED_TRL_KEYS = ("max_length", "precompute_ref_log_probs", "precompute_ref_batch_size")
REFUSED_TRL_KEYS = {
    "truncation_mode": "ifpo never truncates; pairs over max_length are dropped or stop the run (overlong)",
    "padding_free": "TRL 1.16 disables padding-free DPO; it has no effect",
}
# Deprecated transformers names moved to their new names before TrainingArguments sees them.
RENAMED_TRL_KEYS = {
    "gradient_checkpointing": "activation_checkpointing",
    "gradient_checkpointing_kwargs": "activation_checkpointing_kwargs",
}
# report_to names transformers knows (its INTEGRATION_TO_CALLBACK) -> (availability check in
# transformers.integrations, what to pip install). The names come from transformers; the package
# hints are ifpo's, for a one-line message instead of an ImportError deep inside Trainer setup.
TRACKER_PACKAGES: dict[str, tuple[str, str]] = {
    "azure_ml": ("is_azureml_available", "azureml-core"),
    "clearml": ("is_clearml_available", "clearml"),
    "codecarbon": ("is_codecarbon_available", "codecarbon"),
    "comet_ml": ("is_comet_available", "comet_ml"),
    "dagshub": ("is_dagshub_available", "dagshub mlflow"),
    "dvclive": ("is_dvclive_available", "dvclive"),
    "flyte": ("is_flytekit_available", "flytekit flytekitplugins-deck-standard"),
    "kubeflow": ("is_kubeflow_available", "kubeflow"),
    "mlflow": ("is_mlflow_available", "mlflow"),
    "neptune": ("is_neptune_available", "neptune"),
    "swanlab": ("is_swanlab_available", "swanlab"),
    "tensorboard": ("is_tensorboard_available", "tensorboard"),
    "trackio": ("is_trackio_available", "trackio"),
    "wandb": ("is_wandb_available", "wandb"),
}


class RecipeError(ValueError):
    """A bad recipe or command line: reported as one line, without a traceback."""


def _budget_field(name: str):
    """A field mirroring :class:`MediaBudget`'s (same default and help), kept flat in the recipe."""
    source = MediaBudget.__dataclass_fields__[name]
    return field(default=source.default, metadata=dict(source.metadata))


@dataclass
class DPORecipe:
    """ifpo's DPO keys. Everything else in a recipe is a TRL ``DPOConfig`` field."""

    # model
    model_name_or_path: str = field(
        default="tiny",
        metadata={"help": "hub id or local directory of a Qwen3-VL model; 'tiny' builds the offline tiny model; "
                  "'random:CONFIG.json' draws random weights of that shape (benchmarks)"},
    )
    model_revision: str | None = field(default=None, metadata={"help": "hub revision (branch, tag or commit)"})
    tiny_seed: int = field(default=0, metadata={"help": "weight seed of the tiny model ('tiny' only)"})
    dtype: str = field(
        default="auto",
        metadata={"help": "load dtype: auto (bfloat16 with bf16, float16 with fp16, else float32), float32, bfloat16, float16"},
    )
    attn_implementation: str | None = field(
        default=None, metadata={"help": "attention kernel: sdpa, flash_attention_2, eager (default: transformers' choice)"}
    )
    # LoRA
    use_lora: bool = field(default=True, metadata={"help": "train a LoRA adapter (false: full fine-tuning)"})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling numerator (scale = alpha / r)"})
    lora_dropout: float = field(default=0.05, metadata={"help": "dropout on the LoRA input"})
    lora_target_modules: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        metadata={"help": "language-model projections that get an adapter"},
    )
    lora_vision: bool = field(default=False, metadata={"help": "also put LoRA on the vision tower's blocks"})
    freeze_vision_tower: bool = field(
        default=True, metadata={"help": "full fine-tuning only: keep the vision tower's weights fixed"}
    )
    merge_adapter: bool = field(
        default=False, metadata={"help": "also save merged full weights to OUTPUT_DIR/merged after training"}
    )
    # data
    pairs: str = field(
        default="sample",
        metadata={"help": "pairs: a builder output directory (pairs.jsonl or dataset/ + manifest.json), "
                  "'hf:NAME' for a datasets hub dataset, or 'sample' (stand-in pairs from sample/items.jsonl)"},
    )
    pairs_split: str = field(default="train", metadata={"help": "split of an 'hf:' dataset"})
    media_root: str | None = field(
        default=None, metadata={"help": "folder media paths are relative to (default: the pairs manifest's media_root)"}
    )
    eval_pairs: str | None = field(
        default=None, metadata={"help": "pairs to evaluate on, same forms as 'pairs'; 'train' reuses the training pairs"}
    )
    max_pairs: int | None = field(default=None, metadata={"help": "use only the first N pairs (quick runs)"})
    log_pair_ids: bool = field(
        default=False, metadata={"help": "write the ids of the pairs each rank trained on to OUTPUT_DIR/seen_pairs.rankN.json"}
    )
    # media budgets (qwen-vl-utils' policy)
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
    # lengths
    max_length: int | None = field(
        default=4096,
        metadata={"help": "longest prompt+response in tokens, vision tokens included; longer pairs are listed and "
                  "handled by 'overlong', never truncated (null: no limit)"},
    )
    overlong: str = field(
        default="error", metadata={"help": "pairs over max_length: 'error' stops before training, 'drop' leaves them out"}
    )
    # reference log-probs
    precompute_ref_log_probs: bool = field(
        default=True,
        metadata={"help": "compute the reference log-probs once before training (cached beside the pairs) instead of "
                  "a reference forward pass every step"},
    )
    precompute_ref_batch_size: int | None = field(
        default=None, metadata={"help": "batch size of the precompute pass (default: per_device_eval_batch_size)"}
    )
    ref_cache_dir: str | None = field(
        default=None,
        metadata={"help": "where cached reference log-probs go (default: PAIRS_DIR/.ifpo_cache, or OUTPUT_DIR when that "
                  "is not writable)"},
    )
    # shared-prompt forward and media guard (train/shared_prompt.py, verifiers/media_guard.py)
    shared_prompt: bool = field(
        default=True,
        metadata={"help": "run each pair's prompt and media once per forward ([prompt | chosen | rejected] under a block "
                  "attention mask; same log-probs); turned off automatically with flash attention. false: TRL's "
                  "two rows per pair"},
    )
    media_guard: bool = field(
        default=True,
        metadata={"help": "refuse, naming the pair, a batch whose image/video placeholders and media tensors disagree "
                  "or whose media vanished"},
    )
    # resume
    eval_hook: dict | None = field(
        default=None,
        metadata={"help": "evaluate checkpoints with the verifier suite: keys of eval_hooks.callback.EvalHookConfig "
                          "(items, every_steps, on_save, generation, judge, max_items); generation's media budgets "
                          "default to this recipe's, so evaluation sees what training sees. Every shipped recipe has "
                          "one; null opts out; one key from the command line: --eval_hook.items PATH"},
    )
    resume: bool = field(default=False, metadata={"help": "continue from the newest complete checkpoint in output_dir "
                                                          "(refused when the data or training settings changed)"})
    overwrite: bool = field(default=False, metadata={"help": "replace the run already in output_dir (its checkpoints "
                                                             "and records are removed first); without it, or resume, "
                                                             "an output_dir holding a run is refused"})
    interrupt_after_steps: int | None = field(
        default=None,
        metadata={"help": "testing aid: save a checkpoint and stop after this many optimizer steps, as if the job "
                  "were killed (resume it with --resume)"},
    )

    def __post_init__(self) -> None:
        if not self.model_name_or_path:
            raise ValueError("model_name_or_path is empty")
        check_model_source(self.model_name_or_path)
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError(f"dtype must be auto, float32, bfloat16 or float16; got {self.dtype!r}")
        if self.overlong not in ("error", "drop"):
            raise ValueError(f"overlong must be 'error' or 'drop'; got {self.overlong!r}")
        if self.max_length is not None and self.max_length <= 0:
            raise ValueError(f"max_length must be positive or null; got {self.max_length}")
        if self.use_lora and self.lora_r <= 0:
            raise ValueError(f"lora_r must be positive; got {self.lora_r}")
        if self.lora_vision and not self.use_lora:
            raise ValueError("lora_vision: true needs use_lora: true")
        if not self.lora_target_modules:
            raise ValueError("lora_target_modules is empty")
        if not 0.0 <= self.lora_dropout < 1.0:
            raise ValueError(f"lora_dropout must be in [0, 1); got {self.lora_dropout}")
        if self.model_name_or_path.startswith("random:") and not self.use_lora:
            raise ValueError("model_name_or_path: random:... needs use_lora: true (there is no checkpoint to reload "
                             "as the full fine-tuning reference)")
        if self.max_pairs is not None and self.max_pairs <= 0:
            raise ValueError(f"max_pairs must be positive; got {self.max_pairs}")
        if self.precompute_ref_batch_size is not None and self.precompute_ref_batch_size <= 0:
            raise ValueError(f"precompute_ref_batch_size must be positive; got {self.precompute_ref_batch_size}")
        if self.interrupt_after_steps is not None and self.interrupt_after_steps <= 0:
            raise ValueError(f"interrupt_after_steps must be positive; got {self.interrupt_after_steps}")
        self.media_budget()  # validates the budgets by name
        self.eval_hook = check_eval_hook(self.eval_hook)

    def eval_hook_config(self) -> dict | None:
        return eval_hook_config(self.eval_hook, self.media_budget())

    def media_budget(self) -> MediaBudget:
        """The image/video budgets as the collator takes them."""
        return MediaBudget(**{f.name: getattr(self, f.name) for f in dataclasses.fields(MediaBudget)})


@dataclass
class Recipe:
    """A parsed recipe: ifpo's keys, TRL's ``DPOConfig``, and the resolved key/value view that is saved."""

    path: Path
    ifpo: DPORecipe
    args: Any  # trl.DPOConfig
    resolved: dict[str, Any]


# --------------------------------------------------------------------------------------------
# value conversion
# --------------------------------------------------------------------------------------------


def _type_hints(cls) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return {f.name: f.type for f in dataclasses.fields(cls)}


def _describe(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """``value`` converted to ``tp`` (YAML and command-line values both pass here)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if type(None) in options:
            if value is None or (isinstance(value, str) and value.lower() in ("null", "~")):
                return None
            # "none" means None unless the field takes strings (report_to: none is TRL's own spelling).
            if isinstance(value, str) and value.lower() == "none" and str not in options:
                return None
        # Strings last, so "3" becomes 3 for int | str but stays "3" for str alone.
        for option in sorted((o for o in options if o is not type(None)), key=lambda o: o is str):
            try:
                return _coerce(value, option, key)
            except RecipeError:
                continue
        raise RecipeError(f"{key}: expected {_describe(tp)}, got {value!r}")
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise RecipeError(f"{key}: expected one of {list(typing.get_args(tp))}, got {value!r}")
        return value
    if origin in (list, tuple):
        (item_type, *_) = typing.get_args(tp) or (Any,)
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        elif not isinstance(value, (list, tuple)):
            value = [value]
        return [_coerce(v, item_type, key) for v in value]
    if origin is dict or tp is dict:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise RecipeError(f"{key}: expected a mapping (JSON on the command line), got {value!r}") from exc
        if not isinstance(value, dict):
            raise RecipeError(f"{key}: expected a mapping, got {value!r}")
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "yes", "1", "false", "no", "0"):
            return value.lower() in ("true", "yes", "1")
        raise RecipeError(f"{key}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, bool):
            raise RecipeError(f"{key}: expected an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = None
            if number is not None and number.is_integer():
                return int(number)
        raise RecipeError(f"{key}: expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, bool):
            raise RecipeError(f"{key}: expected a number, got {value!r}")
        number = None
        if isinstance(value, (int, float)):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if number is not None and not math.isfinite(number):
            # "nan" / .inf read as floats; a NaN learning rate or fps fails steps later, far from its key.
            raise RecipeError(f"{key}: expected a finite number, got {value!r}")
        if number is not None:
            return number
        raise RecipeError(f"{key}: expected a number, got {value!r}")
    if tp is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise RecipeError(f"{key}: expected a string, got {value!r}")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError as exc:
            raise RecipeError(f"{key}: expected one of {[e.value for e in tp]}, got {value!r}") from exc
    return value


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def _parse_overrides(tokens: list[str], bool_keys: set[str]) -> dict[str, Any]:
    """``--key value``, ``--key=value`` and bare ``--flag`` (booleans) into raw values."""
    overrides: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--") or token == "--":
            raise RecipeError(f"expected --key value after the recipe, got {token!r}")
        key, eq, value = token[2:].partition("=")
        key = key.replace("-", "_")
        if not eq:
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            if following is None or following.startswith("--"):
                if key not in bool_keys:
                    raise RecipeError(f"--{key} needs a value")
                value = "true"
            else:
                value = following
                i += 1
        # Bracketed values are YAML lists/mappings; everything else stays a string and is converted by the
        # field's type, so "--run_name yes" stays the string "yes".
        if value.startswith(("[", "{")):
            try:
                overrides[key] = yaml.safe_load(value)
            except yaml.YAMLError as exc:
                raise RecipeError(f"--{key}: cannot read {value!r} ({str(exc).splitlines()[0]})") from exc
        else:
            overrides[key] = value
        i += 1
    return overrides


def _nearest(key: str, known: list[str], script: str = "train/dpo.py", own: list[str] | None = None) -> str:
    """The suggestion for an unknown key. The recipe's own keys (``own``) come first when one is nearly as close
    as the best TRL key: ``lora_rank`` means ``lora_r``, not TrainingArguments' launcher key ``local_rank``."""
    match = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
    if own and match:
        mine = difflib.get_close_matches(key, own, n=1, cutoff=0.75)
        ratio = difflib.SequenceMatcher(None, key, match[0]).ratio()
        if mine and difflib.SequenceMatcher(None, key, mine[0]).ratio() >= ratio - 0.1:
            match = mine
    return f"; did you mean {match[0]!r}?" if match else f"; see `python {script} --help`"


# Where TRL's config classes and their bases are defined, for reading their keys without importing them:
# (package, module file inside it) by the names their modules import them as (TRL 1.16, transformers 5.x).
_CONFIG_SOURCES = {
    "DPOConfig": ("trl", "trainer/dpo_config.py"),
    "GRPOConfig": ("trl", "trainer/grpo_config.py"),
    "_BaseConfig": ("trl", "trainer/base_config.py"),
    "TrainingArguments": ("transformers", "training_args.py"),
}


def config_keys_from_source(name: str) -> dict[str, str] | None:
    """``{key: annotation}`` of a TRL config's init fields, read from the installed sources with ``ast``.

    Importing ``trl`` (torch, transformers) takes seconds; this takes milliseconds, so a misspelt key or
    tracker is answered before any heavy import. None where the sources are not laid out as expected
    (another TRL or transformers layout): the caller then relies on the full check after the import.
    ``tests/test_papercuts.py`` compares the result with ``dataclasses.fields`` of the real classes.
    """
    import ast
    import importlib.util

    keys: dict[str, str] = {}
    chain = []
    while name in _CONFIG_SOURCES:
        package, module = _CONFIG_SOURCES[name]
        spec = importlib.util.find_spec(package)  # a top-level name: located, not imported
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(list(spec.submodule_search_locations)[0]) / module
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            return None
        node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if node is None:
            return None
        chain.append(node)
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        name = bases[0] if len(bases) == 1 else ""
    if not chain or name != "":  # a base this table does not know: the layout changed
        return None
    return _fields_of(chain, keys)


def _fields_of(chain: list, keys: dict[str, str]) -> dict[str, str]:
    import ast

    for node in reversed(chain):  # bases first; a subclass redefining a field keeps its place, as dataclasses do
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            annotation = ast.unparse(stmt.annotation)
            if "ClassVar" in annotation:
                continue
            value = stmt.value
            if (isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field"
                    and any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                            for k in value.keywords)):
                keys.pop(stmt.target.id, None)
                continue
            keys[stmt.target.id] = annotation
    return keys


def precheck(argv: list[str], ifpo_cls: type, trl_config: str, *, script: str = "train/dpo.py",
             refused: dict[str, str] | None = None) -> None:
    """Key names and tracker names checked before TRL is imported (a typo answers in a fraction of a second).

    The full parse after the import checks values and combinations; this one only refuses what it is
    sure of: a key in neither ifpo's dataclass nor TRL's config (read from its source), a refused key,
    and a ``report_to`` name transformers does not know.
    """
    trl_keys = config_keys_from_source(trl_config)
    if trl_keys is None or not argv or argv[0].startswith("-") or not Path(argv[0]).is_file():
        return  # the full parse says what is wrong
    refused = REFUSED_TRL_KEYS if refused is None else refused
    ifpo_hints = _type_hints(ifpo_cls)
    ifpo_keys = [f.name for f in dataclasses.fields(ifpo_cls)]
    known = sorted(set(ifpo_keys) | set(trl_keys))
    try:
        overrides = _parse_overrides(argv[1:], set(known))
    except RecipeError:
        return
    report_to = None
    for where, layer in ((argv[0], _read_recipe_file(Path(argv[0]))), ("the command line", overrides)):
        for key, value in layer.items():
            if not isinstance(key, str):
                return
            key = RENAMED_TRL_KEYS.get(key, key)
            head, dot, _ = key.partition(".")
            if dot and head in ifpo_keys and _takes_mapping(ifpo_hints[head]):
                continue
            if key not in known:
                raise RecipeError(f"unknown key {key!r} in {where}{_nearest(key, known, script, ifpo_keys)}")
            if key in refused:
                raise RecipeError(f"{key} is not used by ifpo: {refused[key]}")
            if key == "report_to":
                report_to = value
    if isinstance(report_to, str):
        report_to = [n.strip() for n in report_to.split(",") if n.strip()]
    if isinstance(report_to, list) and all(isinstance(n, str) for n in report_to):
        _check_tracker_names(report_to)


def check_model_source(source: str) -> None:
    """A local-looking model path must exist (a typo must not turn into a hub lookup mid-run)."""
    if source.startswith("random:"):
        path = Path(source.removeprefix("random:")).expanduser()
        if not path.is_file():
            raise ValueError(f"model_name_or_path: random:{path}: no such config file")
    elif source.startswith(("/", "./", "../", "~")) and not Path(source).expanduser().exists():
        raise ValueError(f"model_name_or_path: {source}: no such folder (a hub id looks like 'Qwen/Qwen3-VL-8B-Instruct')")


CHECKOUT_ROOT = Path(__file__).resolve().parent.parent  # where sample/ lives in a source checkout
EVAL_HOOK_OPT_OUT = "or opt out of checkpoint evaluation with --eval_hook null (eval_hook: null in the recipe)"


def resolve_eval_items(items: str) -> Path | None:
    """A relative ``eval_hook.items`` is looked up in the working directory, then in the ifpo checkout.

    The second place lets the tiny recipes' ``sample/world/heldout.jsonl`` work from any directory
    (as ``pairs: sample`` does); None when neither has the file.
    """
    path = Path(items).expanduser()
    if path.is_absolute():
        return path if path.is_file() else None
    for base in dict.fromkeys((Path.cwd().resolve(), CHECKOUT_ROOT)):
        if (base / path).is_file():
            return (base / path).resolve()
    return None


def check_eval_hook(eval_hook: dict | None) -> dict | None:
    """Refuse a bad ``eval_hook`` when the recipe is read (before any model loads), not at the first checkpoint.

    Returns the hook with ``items`` resolved to an existing file. Every shipped recipe carries a
    hook; the real-model ones leave ``items`` for the user to set, so an unset or missing file is
    one line naming the key, how to set it and how to opt out.
    """
    if eval_hook is None:
        return None
    from ifpo.eval_hooks.hook_config import EvalHookConfig

    if not isinstance(eval_hook, dict):
        raise ValueError(f"eval_hook: expected a mapping of EvalHookConfig keys or null, got {eval_hook!r}")
    from ifpo.verifiers.config import check_keys

    check_keys(eval_hook, [f.name for f in dataclasses.fields(EvalHookConfig)], "eval_hook")  # typos first
    hook = dict(eval_hook)
    items = hook.get("items")
    if items is None or (isinstance(items, str) and not items.strip()):
        raise ValueError("eval_hook.items is not set: this recipe scores step 0 and every checkpoint on held-out "
                         "items; give your held-out items JSONL with --eval_hook.items PATH (or eval_hook.items: "
                         f"PATH in the recipe), {EVAL_HOOK_OPT_OUT}")
    if not isinstance(items, str):
        raise ValueError(f"eval_hook.items: expected the path of an items JSONL file, got {items!r}")
    path = resolve_eval_items(items)
    if path is None:
        where = "" if Path(items).is_absolute() else " in " + " or ".join(
            str(b) for b in dict.fromkeys((Path.cwd().resolve(), CHECKOUT_ROOT)))
        raise ValueError(f"eval_hook.items: {items}: no such file{where}; give an existing held-out items JSONL with "
                         f"--eval_hook.items PATH, {EVAL_HOOK_OPT_OUT}")
    hook["items"] = str(path)
    EvalHookConfig.from_mapping(hook, source="eval_hook")
    return hook


def eval_hook_config(eval_hook: dict | None, budget: MediaBudget) -> dict | None:
    """The eval hook with the training media budgets as its generation defaults."""
    if eval_hook is None:
        return None
    hook = dict(eval_hook)
    generation = dict(hook.get("generation") or {})
    generation.setdefault("media", dataclasses.asdict(budget))
    hook["generation"] = generation
    return hook


def field_help_lines(cls: type, indent: int = 2, width: int = 28, defaults: dict[str, Any] | None = None,
                     skip: tuple[str, ...] = ()) -> list[str]:
    """One line per dataclass field: name, help, default. A help text that already says what its default means
    ("(default: the pairs manifest's media_root)") keeps that wording and gets no second "(default: ...)"."""
    lines = []
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        help_ = f.metadata.get("help", "")
        if defaults and f.name in defaults:
            default: Any = defaults[f.name]
        elif f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        else:
            lines.append(f"{' ' * indent}{f.name:<{width}} {help_} (required)")
            continue
        suffix = "" if "(default" in help_ else f" (default: {default})"
        lines.append(f"{' ' * indent}{f.name:<{width}} {help_}{suffix}")
    return lines


def eval_hook_help_lines() -> list[str]:
    """The ``eval_hook`` mapping's keys and its ``generation`` sub-keys (generated, like the top-level keys)."""
    from ifpo.eval_hooks.hook_config import DEFAULT_GENERATION, EvalHookConfig
    from ifpo.verifiers.generation import GenerationConfig

    return [
        "",
        "eval_hook keys (a mapping: eval_hook: {items: ..., every_steps: 50} in the recipe, JSON on the command line):",
        *field_help_lines(EvalHookConfig, indent=4, width=26),
        "",
        "eval_hook.generation keys (the hook generates in-process with the weights being trained; its media",
        "budgets default to this recipe's image_*/video_* keys):",
        *field_help_lines(GenerationConfig, indent=6, width=24, defaults=DEFAULT_GENERATION,
                          skip=("backend", "model", "base_url", "api_key_env", "timeout_s", "max_retries", "concurrency")),
    ]


def recipe_help() -> str:
    """Help text for ``train/dpo.py --help``, generated from the dataclasses."""
    lines = [
        "usage: accelerate launch train/dpo.py RECIPE.yaml [--key value ...]",
        "",
        "Settings resolve as ifpo defaults < RECIPE.yaml < command line. ifpo's keys:",
    ]
    lines += field_help_lines(DPORecipe)
    lines += eval_hook_help_lines()
    lines += [
        "",
        "Any other key is a field of TRL's DPOConfig (learning_rate, beta, loss_type, loss_weights, label_smoothing,",
        "per_device_train_batch_size, gradient_accumulation_steps, bf16, use_cpu, report_to, output_dir, seed, ...).",
        f"ifpo defaults for TRL keys: {TRL_DEFAULTS}",
    ]
    return "\n".join(lines)


def _check_tracker_names(names: list[str], supported: list[str] | None = None) -> None:
    """A ``report_to`` name transformers does not know is one line naming the closest. ``TRACKER_PACKAGES``
    lists transformers' names (a test keeps it equal to ``INTEGRATION_TO_CALLBACK``), so this needs no import."""
    supported = sorted(supported or TRACKER_PACKAGES)
    for name in names:
        if name in ("none", "all") or name in supported:
            continue
        match = difflib.get_close_matches(name, supported, n=1, cutoff=0.5)
        hint = f"; did you mean {match[0]!r}?" if match else ""
        raise RecipeError(f"report_to: {name!r} is not a tracker transformers supports{hint} "
                          f"(supported: {', '.join(supported)}, none, all)")


def _check_trackers(report_to: Any) -> None:
    """Every tracker transformers supports is accepted; a missing package is one line naming what to install."""
    from transformers.integrations import integration_utils

    names = [report_to] if isinstance(report_to, str) else list(report_to or [])
    _check_tracker_names(names, list(integration_utils.INTEGRATION_TO_CALLBACK))
    for name in names:
        if name in ("none", "all"):
            continue
        check, package = TRACKER_PACKAGES.get(name, (None, name))
        available = getattr(integration_utils, check, None) if check else None
        if available is not None and not available():
            raise RecipeError(f"report_to: {name} needs its package: pip install {package}")


def read_recipe_values(
    argv: list[str],
    ifpo_cls: type,
    trl_cls: type,
    *,
    script: str = "train/dpo.py",
    refused: dict[str, str] | None = None,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """``RECIPE.yaml [--key value ...]`` read and type-converted against two dataclasses.

    Returns the recipe path, the values of ``ifpo_cls`` fields and the values of ``trl_cls`` fields
    (file < command line; ifpo's TRL defaults are not applied here). Shared by ``train/dpo.py`` and
    ``train/grpo.py`` so both entry scripts read recipes by the same rules.
    """
    refused = REFUSED_TRL_KEYS if refused is None else refused
    if not argv or argv[0].startswith("-"):
        raise RecipeError(f"usage: {script} RECIPE.yaml [--key value ...] (the recipe comes first)")
    path = Path(argv[0])
    if not path.is_file():
        raise RecipeError(f"recipe {path} not found")
    from_file = _read_recipe_file(path)

    ifpo_hints = _type_hints(ifpo_cls)
    trl_hints = _type_hints(trl_cls)
    ifpo_keys = [f.name for f in dataclasses.fields(ifpo_cls)]
    trl_keys = [f.name for f in dataclasses.fields(trl_cls) if f.init]
    known = sorted(set(ifpo_keys) | set(trl_keys))
    bool_keys = {k for k in known if (ifpo_hints.get(k) or trl_hints.get(k)) in (bool, bool | None)}
    overrides = _parse_overrides(argv[1:], bool_keys)

    layers = [(f"{path}", from_file), ("the command line", overrides)]
    values: dict[str, Any] = {}
    for where, layer in layers:
        for key, value in layer.items():
            if not isinstance(key, str):
                raise RecipeError(f"{where}: key {key!r} is not a string")
            key = RENAMED_TRL_KEYS.get(key, key)
            head, dot, sub = key.partition(".")
            if dot and head in ifpo_keys and _takes_mapping(ifpo_hints[head]):
                # --eval_hook.items PATH: one key of a mapping setting; the value reads as a YAML scalar.
                if not sub:
                    raise RecipeError(f"{where}: {key!r} names no key inside {head}")
                merged = dict(values.get(head) or {})
                merged[sub] = yaml.safe_load(value) if isinstance(value, str) else value
                values[head] = merged
                continue
            if key not in known:
                raise RecipeError(f"unknown key {key!r} in {where}{_nearest(key, known, script, ifpo_keys)}")
            if key in refused:
                raise RecipeError(f"{key} is not used by ifpo: {refused[key]}")
            tp = ifpo_hints[key] if key in ifpo_keys else trl_hints[key]
            values[key] = _coerce(value, tp, key)
    check_common_values(values)
    return (
        path,
        {k: v for k, v in values.items() if k in ifpo_keys},
        {k: v for k, v in values.items() if k not in ifpo_keys},
    )


def _read_recipe_file(path: Path) -> dict[str, Any]:
    """The recipe's mapping, read as every settings file of ifpo is (``verifiers/config.py`` ``yaml_mapping``):
    UTF-8 (a BOM is fine), YAML errors with their line, a key given twice and alias bombs refused, one line each."""
    from ifpo.verifiers.config import yaml_mapping

    try:
        return yaml_mapping(path)
    except ValueError as exc:
        raise RecipeError(str(exc)) from None


# Keys whose bad values TRL, transformers or torch only refuse after the model is built (or never):
# checked when the recipe is read, by name.
SEED_KEYS = ("seed", "data_seed", "tiny_seed")
POSITIVE_INT_KEYS = ("per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps")


def check_common_values(values: dict[str, Any]) -> None:
    from ifpo.verifiers.config import seed_problem

    for key in SEED_KEYS:
        if values.get(key) is not None and seed_problem(values[key]):
            raise RecipeError(f"{key}: {seed_problem(values[key])}")  # numpy/torch raised deep in set_seed
    for key in POSITIVE_INT_KEYS:
        if values.get(key) is not None and values[key] < 1:
            raise RecipeError(f"{key} must be >= 1, got {values[key]}")
    if values.get("learning_rate") is not None and values["learning_rate"] < 0:
        raise RecipeError(f"learning_rate must be >= 0, got {values['learning_rate']}")


def _takes_mapping(tp: Any) -> bool:
    """Whether a field's type is a mapping (``dict``, ``dict[...]``, optionally ``| None``)."""
    options = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    return any(o is dict or typing.get_origin(o) is dict for o in options)


def check_cpu_precision(trl_values: dict[str, Any], example: str = "recipes/tiny.yaml") -> None:
    """Refuse TRL's default bf16 on a CPU run, naming the keys to set."""
    import torch

    bf16, fp16, use_cpu = trl_values.get("bf16"), trl_values.get("fp16"), trl_values.get("use_cpu", False)
    if (use_cpu or not torch.cuda.is_available()) and bf16 is not False and not fp16:
        raise RecipeError(
            "bf16 is on (TRL's default) but this run is on CPU"
            + ("" if use_cpu else " (no CUDA device)")
            + f": set use_cpu: true and bf16: false, as {example} does"
        )


def parse_recipe(argv: list[str]) -> Recipe:
    """Parse ``RECIPE.yaml [--key value ...]`` into a :class:`Recipe`; bad input raises :class:`RecipeError`."""
    precheck(argv, DPORecipe, "DPOConfig")  # typos answer before the seconds-long TRL import
    from trl import DPOConfig

    path, ifpo_values, trl_only = read_recipe_values(argv, DPORecipe, DPOConfig)
    trl_values = {**TRL_DEFAULTS, **trl_only}
    try:
        recipe = DPORecipe(**ifpo_values)
    except ValueError as exc:
        raise RecipeError(str(exc)) from exc

    # Cross-checks that name the keys involved.
    check_cpu_precision(trl_values)
    if trl_values.get("sync_ref_model") and recipe.precompute_ref_log_probs:
        raise RecipeError("sync_ref_model: true moves the reference, so it cannot be precomputed: "
                          "set precompute_ref_log_probs: false")
    if recipe.resume and trl_values.get("resume_from_checkpoint"):
        raise RecipeError("give either resume: true (last checkpoint) or resume_from_checkpoint: PATH, not both")
    weights, loss_type = trl_values.get("loss_weights"), trl_values.get("loss_type")
    if weights is not None and len(weights) != len(loss_type if isinstance(loss_type, list) else [loss_type or "sigmoid"]):
        raise RecipeError(f"loss_weights {weights} needs one weight per loss_type entry ({loss_type})")
    _check_trackers(trl_values.get("report_to"))

    # ifpo owns these: TRL must neither truncate nor refuse the precompute it does not run.
    trl_values.update(max_length=None, precompute_ref_log_probs=False, precompute_ref_batch_size=None)
    try:
        args = DPOConfig(**trl_values)
    except (ValueError, TypeError) as exc:
        raise RecipeError(f"DPOConfig: {exc}") from exc
    if recipe.precompute_ref_log_probs and args.ld_alpha is not None:
        raise RecipeError("ld_alpha weights the reference log-probs per token; use precompute_ref_log_probs: false with it")

    resolved = {
        **{f.name: getattr(recipe, f.name) for f in dataclasses.fields(DPORecipe)},
        **{k: v for k, v in trl_values.items() if k not in OWNED_TRL_KEYS},
    }
    return Recipe(path=path, ifpo=recipe, args=args, resolved=resolved)


def dump_resolved(recipe: Recipe, out_path: str | Path) -> None:
    """Write the resolved recipe (every ifpo key, the TRL keys that were set) as YAML."""

    def plain(value: Any) -> Any:
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    header = f"# resolved from {recipe.path} (defaults < recipe < command line)\n"
    body = yaml.safe_dump({k: plain(v) for k, v in recipe.resolved.items()}, sort_keys=False)
    Path(out_path).write_text(header + body, encoding="utf-8")
