"""Qwen3-VL model, processor and LoRA loading for the trainers.

``model_name_or_path`` takes these forms:

- a hub id or a local directory (``Qwen/Qwen3-VL-8B-Instruct``, ``runs/sft/checkpoint-500``): loaded with
  ``AutoModelForImageTextToText`` / ``AutoProcessor``; a hub id is the only way anything is downloaded;
- ``tiny``: the offline tiny random Qwen3-VL of ``train/tiny_model.py``, built into
  ``OUTPUT_DIR/tiny-model`` on first use (seed ``tiny_seed``) and reused afterwards;
- ``tiny-world``: the learnable default (``train/tiny_model.py`` ``learnable_default``): a larger tiny
  Qwen3-VL warm-started on the synthetic world's train split, built once into a cache and reused;
  ``tiny-world-pixels``: its pixel-reading build (``pixel_reading_default``), the model of the media ablation;
- ``random:CONFIG.json``: a randomly initialised model of the shape in ``CONFIG.json`` (e.g.
  ``bench/configs/qwen3vl_8b.json``) with the tiny model's tokenizer and processor, for speed and memory
  measurements without hub weights. The config's vision token ids are re-pointed at that tokenizer.
"""

from __future__ import annotations

import hashlib
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)

# Language-model projections of Qwen3-VL (attention and MLP); no LoRA adapter on the LM head (TRL
# computes log-probs from ``lm_head.weight`` directly, so an adapter there would never train; a
# peft ``modules_to_save`` copy does train: GRPO's ``lora_modules_to_save: [lm_head]``).
LANGUAGE_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Vision-tower block projections (attention qkv/proj and MLP); the patch merger is left to full training.
VISION_TARGETS: tuple[str, ...] = ("qkv", "proj", "linear_fc1", "linear_fc2")

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def torch_dtype(name: str, *, bf16: bool, fp16: bool) -> torch.dtype:
    """The load dtype: ``auto`` follows the training precision (bf16/fp16 flags), else float32."""
    if name == "auto":
        return torch.bfloat16 if bf16 else torch.float16 if fp16 else torch.float32
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of auto, {', '.join(_DTYPES)}; got {name!r}")
    return _DTYPES[name]


@contextmanager
def without_zero3_init():
    """Build a model to be written to disk without DeepSpeed's ``zero.Init``.

    Under a ZeRO-3 launch with ``zero3_init_flag`` transformers builds every model partitioned across ranks,
    which is a collective: rank 0 building alone inside ``main_process_first`` while the others wait at its
    barrier deadlocks. A model built only to be saved needs no partitioning; the training model is loaded
    afterwards by every rank together, partitioned as the config asks.
    """
    try:
        from transformers.integrations import deepspeed as hf_deepspeed
    except ImportError:  # pragma: no cover - transformers always has it; nothing to switch off otherwise
        yield
        return
    ref = getattr(hf_deepspeed, "_hf_deepspeed_config_weak_ref", None)
    config = ref() if ref is not None else None
    if config is None:
        yield
        return
    hf_deepspeed.unset_hf_deepspeed_config()
    try:
        yield
    finally:
        hf_deepspeed.set_hf_deepspeed_config(config)


def tiny_model_dir(output_dir: str | Path, seed: int) -> Path:
    """Build (or reuse) the tiny Qwen3-VL under ``output_dir/tiny-model``; return its directory."""
    from accelerate import PartialState
    from ifpo.train.tiny_model import MANIFEST_NAME, build_tiny_model, read_manifest

    out = Path(output_dir) / "tiny-model"
    # One process builds, the others wait and reuse (all ranks share the output directory).
    with PartialState().main_process_first():
        if (out / MANIFEST_NAME).is_file() and read_manifest(out).get("seed") == seed:
            return out
        with without_zero3_init():
            build_tiny_model(out, seed=seed, overwrite=True)
    return out


def _random_model(config_path: Path, processor, dtype: torch.dtype, attn_implementation: str | None, seed: int):
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    if not config_path.is_file():
        raise ValueError(f"model_name_or_path: random config {config_path} not found")
    from ifpo.verifiers.io import read_json_file

    loaded = read_json_file(config_path, "random model config")  # not UTF-8 / not JSON: one line naming it
    if not isinstance(loaded, dict):
        raise ValueError(f"{config_path}: expected a Qwen3-VL config object, got {type(loaded).__name__}")
    config_dict = {k: v for k, v in loaded.items() if not k.startswith("_") and k != "model_type"}
    tokenizer = processor.tokenizer
    ids = {
        "image_token_id": "<|image_pad|>",
        "video_token_id": "<|video_pad|>",
        "vision_start_token_id": "<|vision_start|>",
        "vision_end_token_id": "<|vision_end|>",
    }
    for key, token in ids.items():
        config_dict[key] = tokenizer.convert_tokens_to_ids(token)
    text = config_dict.setdefault("text_config", {})
    text["pad_token_id"] = tokenizer.pad_token_id
    text["eos_token_id"] = tokenizer.convert_tokens_to_ids("<|im_end|>")
    text["bos_token_id"] = None
    config = Qwen3VLConfig(**config_dict)
    if attn_implementation:
        config._attn_implementation = attn_implementation
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(seed)
    # Initialise directly on the accelerator in the training dtype: an 8B model drawn on CPU in fp32
    # would take minutes and 32 GB.
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = Qwen3VLForConditionalGeneration(config)
    finally:
        torch.set_default_dtype(previous)
    model.config.name_or_path = f"random:{config_path}"
    return model


def load_processor_and_model(recipe, args) -> tuple[Any, Any]:
    """Processor (padding side left, as TRL requires) and model for ``recipe.model_name_or_path``."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    dtype = torch_dtype(recipe.dtype, bf16=args.bf16, fp16=args.fp16)
    source = recipe.model_name_or_path
    if source in ("tiny-world", "tiny-world-pixels"):
        # The learnable default (or its pixel-reading build): warm-started on the synthetic world, built once
        # and cached (train/tiny_model.py; IFPO_LEARNABLE_CACHE overrides the cache folder).
        from accelerate import PartialState
        from ifpo.train.tiny_model import learnable_default, pixel_reading_default

        with PartialState().main_process_first(), without_zero3_init():
            source = str(learnable_default() if source == "tiny-world" else pixel_reading_default())
    if source == "tiny" or source.startswith("random:"):
        tiny = tiny_model_dir(args.output_dir, recipe.tiny_seed)
        processor = AutoProcessor.from_pretrained(tiny)
        if source == "tiny":
            model = AutoModelForImageTextToText.from_pretrained(
                tiny, dtype=dtype, attn_implementation=recipe.attn_implementation
            )
        else:
            model = _random_model(
                Path(source.removeprefix("random:")), processor, dtype, recipe.attn_implementation, args.seed
            )
    else:
        processor = AutoProcessor.from_pretrained(source, revision=recipe.model_revision)
        model = AutoModelForImageTextToText.from_pretrained(
            source, revision=recipe.model_revision, dtype=dtype, attn_implementation=recipe.attn_implementation
        )
    processor.tokenizer.padding_side = "left"
    if recipe.freeze_vision_tower and not recipe.use_lora:
        # Full fine-tuning with a frozen vision tower: only the language model (and merger) learn.
        for name, param in model.named_parameters():
            if ".visual.blocks." in name or ".visual.patch_embed." in name or ".visual.pos_embed" in name:
                param.requires_grad_(False)
    return processor, model


def lora_config(recipe):
    """The ``peft.LoraConfig`` for the recipe, or ``None`` for full fine-tuning.

    By default the adapter covers the language model's projections only; ``lora_vision: true`` adds
    the vision blocks. Targets are a regex over module names so "q_proj" in the LM and "qkv" in the
    vision tower are told apart.
    """
    if not recipe.use_lora:
        return None
    from peft import LoraConfig

    patterns = [rf".*\.language_model\.layers\.\d+\..*\.({'|'.join(recipe.lora_target_modules)})"]
    if recipe.lora_vision:
        patterns.append(rf".*\.visual\.blocks\.\d+\..*\.({'|'.join(VISION_TARGETS)})")
    return LoraConfig(
        r=recipe.lora_r,
        lora_alpha=recipe.lora_alpha,
        lora_dropout=recipe.lora_dropout,
        target_modules="|".join(f"(?:{p})" for p in patterns),
        bias="none",
        task_type="CAUSAL_LM",
    )


def model_fingerprint(model) -> str:
    """A fingerprint of the reference (adapter-free) weights, cheap enough for 8B models.

    Every base parameter contributes its name, shape, dtype and up to 4096 evenly spaced values, so a
    different checkpoint, seed or dtype changes it while hashing stays under a second. LoRA weights
    are skipped: the reference is the model with adapters disabled. Under ZeRO-3 the local shards are
    empty, so only names, shapes and ``name_or_path`` count there.
    """
    digest = hashlib.sha256()
    sharded = any(p.numel() == 0 for p in model.parameters())
    if sharded:
        # Only under ZeRO-3 does the source name stand in for the (absent) values; elsewhere the same weights
        # loaded from two folders must share a cache.
        digest.update(str(getattr(model.config, "name_or_path", "")).encode())
    for name, param in model.named_parameters():
        if "lora_" in name or ".ref." in name:
            continue
        digest.update(f"{name}:{tuple(param.shape)}:{param.dtype}".encode())
        flat = param.detach().reshape(-1)
        if flat.numel() == 0:
            continue
        step = max(1, flat.numel() // 4096)
        digest.update(flat[::step][:4096].float().cpu().numpy().tobytes())
    return digest.hexdigest()
