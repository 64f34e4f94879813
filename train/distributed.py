"""What a launch really runs (DDP, FSDP, DeepSpeed ZeRO), refused where it would train or save wrongly in silence.

Three jobs, shared by ``train/dpo.py`` and ``train/grpo.py``:

- :func:`describe`: the accelerator's distributed type and the plugin settings that decide sharding, saving
  and checkpointing, recorded in ``run_manifest.json`` (``distributed``), so a launch that fell back to
  plain DDP leaves a trace.
- :func:`check_launch`: refuses, before training, the settings known to lose the adapter or to change the
  backend without a word (a ``ValueError`` naming the setting and what to use instead):

  * the launcher asked for FSDP / DeepSpeed (``ACCELERATE_USE_FSDP`` / ``ACCELERATE_USE_DEEPSPEED``) but the
    accelerator runs something else: ``use_cpu: true`` in the recipe turns either into multi-CPU DDP;
  * FSDP with ``SHARDED_STATE_DICT``: transformers' ``Trainer.save_model`` writes nothing for it (no
    adapter, no processor) and the checkpoints hold only ``*.distcp`` shards;
  * FSDP's own activation checkpointing with a peft adapter: its wrapper renames the modules, peft's
    adapter filter then matches nothing and every save writes an adapter with 0 tensors. The model's own
    checkpointing (``activation_checkpointing: true`` in the recipe) keeps the names.

- :func:`align_vision_passes`: under FSDP and ZeRO-3 a module's weights are gathered collectively each
  time it runs, so every rank must run the vision tower as often as every other. Qwen3-VL runs it once for
  a batch's images and once for its videos, and not at all without them, so ranks whose batches mix media
  differently issue different collectives (gloo aborts with a collective mismatch, NCCL hangs). The hook
  pads each prefill forward to two vision passes with a dummy 1-frame input whose output is added times 0,
  so every rank issues the same gathers in the same order (forward and, for a trained vision adapter,
  backward).

:func:`check_saved_adapter` is the last line: a save that leaves no adapter file or one with 0 tensors is
an error, whatever the backend.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)


class DistributedSetupError(ValueError):
    """A launch configuration that would train or save wrongly without saying so."""


def _flag(name: str) -> bool:
    return os.environ.get(name, "false").strip().lower() in ("1", "true", "yes")


def describe(accelerator) -> dict[str, Any]:
    """The distributed type and the settings of its plugin, for the run manifest."""
    state = accelerator.state
    info: dict[str, Any] = {
        "type": str(getattr(state.distributed_type, "value", state.distributed_type)),
        "backend": getattr(state, "backend", None),
        "num_processes": accelerator.num_processes,
        "mixed_precision": str(accelerator.mixed_precision),
        "device": str(accelerator.device),
        "launcher_asked": {
            "fsdp": _flag("ACCELERATE_USE_FSDP"),
            "deepspeed": _flag("ACCELERATE_USE_DEEPSPEED"),
        },
    }
    fsdp = getattr(state, "fsdp_plugin", None)
    if fsdp is not None:
        info["fsdp"] = {
            "version": getattr(fsdp, "fsdp_version", None),
            "state_dict_type": str(getattr(fsdp.state_dict_type, "name", fsdp.state_dict_type)),
            "activation_checkpointing": bool(fsdp.activation_checkpointing),
            "transformer_cls_names_to_wrap": fsdp.transformer_cls_names_to_wrap,
            "reshard_after_forward": str(fsdp.reshard_after_forward),
            "cpu_offload": str(fsdp.cpu_offload),
            "cpu_ram_efficient_loading": getattr(fsdp, "cpu_ram_efficient_loading", None),
        }
    ds = getattr(state, "deepspeed_plugin", None)
    if ds is not None:
        zero = (ds.deepspeed_config or {}).get("zero_optimization", {})
        info["deepspeed"] = {
            "zero_stage": ds.zero_stage,
            "offload_optimizer": (zero.get("offload_optimizer") or {}).get("device"),
            "offload_param": (zero.get("offload_param") or {}).get("device"),
            "zero3_init_flag": ds.zero3_init_flag,
            "gather_16bit_weights_on_model_save": zero.get("stage3_gather_16bit_weights_on_model_save"),
        }
    return info


def shards_parameters(accelerator) -> bool:
    """Whether each rank holds only a shard of the weights (FSDP, ZeRO-3): modules gather collectively."""
    if accelerator.num_processes < 2:
        return False
    state = accelerator.state
    if getattr(state, "fsdp_plugin", None) is not None:
        return True
    ds = getattr(state, "deepspeed_plugin", None)
    return ds is not None and ds.zero_stage == 3


def check_launch(accelerator, *, use_lora: bool) -> None:
    """Refuse the launch settings that train or save wrongly without a word (see the module docstring)."""
    state = accelerator.state
    kind = str(getattr(state.distributed_type, "value", state.distributed_type))
    problems = []
    for env, plugin, name in (("ACCELERATE_USE_FSDP", "fsdp_plugin", "FSDP"),
                              ("ACCELERATE_USE_DEEPSPEED", "deepspeed_plugin", "DeepSpeed")):
        if _flag(env) and getattr(state, plugin, None) is None:
            problems.append(
                f"the launch config asks for {name} but the run got {kind}: 'use_cpu: true' in the recipe (or "
                f"accelerate's --cpu) turns {name} into plain DDP; set use_cpu: false (--use_cpu false) on GPUs")
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world > 1 and accelerator.num_processes != world:
        problems.append(
            f"the launcher started {world} processes but each runs alone as {kind} with {accelerator.num_processes} "
            "process(es) (no GPU and use_cpu false): every process would train on all the data and write the same "
            "output_dir; on CPU set use_cpu: true (DDP over gloo)")
    fsdp = getattr(state, "fsdp_plugin", None)
    if fsdp is not None:
        sd_type = str(getattr(fsdp.state_dict_type, "name", fsdp.state_dict_type))
        if "SHARDED" in sd_type:
            problems.append(
                f"fsdp_state_dict_type {sd_type}: transformers' save_model writes no adapter and no processor for "
                "it, and checkpoints hold only shards; use FULL_STATE_DICT (accelerate_configs/fsdp2.yaml)")
        if fsdp.activation_checkpointing and use_lora:
            problems.append(
                "fsdp_activation_checkpointing: true with a LoRA adapter: FSDP's checkpoint wrapper renames the "
                "modules and every save writes an adapter with 0 tensors; set it false in the accelerate config "
                "and use the model's own checkpointing (activation_checkpointing: true in the recipe)")
    if problems:
        raise DistributedSetupError("; ".join(problems))


def _vision_language_parts(model) -> list[torch.nn.Module]:
    """The Qwen3-VL cores (modules holding both ``visual`` and ``language_model``) inside ``model``."""
    return [m for m in model.modules()
            if isinstance(getattr(m, "visual", None), torch.nn.Module)
            and isinstance(getattr(m, "language_model", None), torch.nn.Module)]


def _dummy_vision_input(visual, device) -> tuple[torch.Tensor, torch.Tensor]:
    """The smallest input the vision tower accepts: one frame of merge x merge patches, zeros."""
    cfg = visual.config
    merge = int(getattr(cfg, "spatial_merge_size", 2) or 2)
    width = int(cfg.in_channels) * int(cfg.temporal_patch_size) * int(cfg.patch_size) ** 2
    pixels = torch.zeros(merge * merge, width, device=device, dtype=visual.dtype)
    grid = torch.tensor([[1, merge, merge]], device=device, dtype=torch.long)
    return pixels, grid


VISION_PASSES = 2  # Qwen3-VL: one pass for a batch's images, one for its videos


def _dummy_passes(visual, n: int, device) -> torch.Tensor:
    """Run the vision tower ``n`` times on the dummy input; the sum of its outputs times 0 (a scalar)."""
    extra = torch.zeros((), device=device)
    for _ in range(n):
        pixels, grid = _dummy_vision_input(visual, device)
        out = visual(pixels, grid_thw=grid, return_dict=True)
        # Times 0 keeps the pass in the graph (the same backward gathers on every rank), values unchanged.
        extra = extra + out.pooler_output.float().sum() * 0.0
        for feature in getattr(out, "deepstack_features", None) or []:
            extra = extra + feature.float().sum() * 0.0
    return extra


def align_vision_passes(model) -> int:
    """Make every prefill forward run the vision tower exactly twice (see the module docstring).

    Returns the number of vision-language cores hooked (0 where the model has none). The hooks stay for
    the model's lifetime; decode steps (a non-empty cache) run no vision pass on any rank and are left alone.
    """
    hooked = 0
    for core in _vision_language_parts(model):
        if getattr(core, "_ifpo_aligned_vision", False):
            continue
        counter = {"passes": 0}
        visual, language = core.visual, core.language_model

        def count(module, args, output, counter=counter):
            counter["passes"] += 1

        def pad(module, args, kwargs, counter=counter, visual=visual):
            # The passes since the previous language-model forward belong to this one: generate() may encode
            # the media before its prefill, outside the core's forward.
            passes, counter["passes"] = counter["passes"], 0
            cache = kwargs.get("cache", kwargs.get("past_key_values"))
            if cache is not None and hasattr(cache, "get_seq_length") and cache.get_seq_length() > 0:
                return None  # a decode step: no rank runs the vision tower
            embeds = kwargs.get("inputs_embeds")
            if embeds is None or passes >= VISION_PASSES:
                return None
            extra = _dummy_passes(visual, VISION_PASSES - passes, embeds.device)
            counter["passes"] = 0  # the dummy passes were counted too
            kwargs = dict(kwargs)
            kwargs["inputs_embeds"] = embeds + extra.to(embeds.dtype)
            return args, kwargs

        visual.register_forward_hook(count)
        language.register_forward_pre_hook(pad, with_kwargs=True)
        for owner in model.modules():
            # generate() encodes the media before its prefill, outside the model's forward (and before FSDP's root
            # forward): the padding must happen there too, or ranks gather in different orders.
            encode = getattr(owner, "_prepare_multimodal_encoder_kwargs_for_generation", None)
            if encode is None or getattr(owner, "_ifpo_aligned_encode", False):
                continue
            if not any(m is core for m in owner.modules()):
                continue

            def aligned_encode(model_kwargs, encode=encode, counter=counter, visual=visual):
                counter["passes"] = 0
                model_kwargs = encode(model_kwargs)
                if counter["passes"] < VISION_PASSES:
                    _dummy_passes(visual, VISION_PASSES - counter["passes"], visual.device)
                counter["passes"] = VISION_PASSES  # the prefill that follows needs no more
                return model_kwargs

            owner._prepare_multimodal_encoder_kwargs_for_generation = aligned_encode
            owner._ifpo_aligned_encode = True
        core._ifpo_aligned_vision = True
        hooked += 1
    return hooked


def mark_fsdp_managed(model) -> None:
    """Let ``generate`` see that the model is FSDP-sharded, so ranks decode in step (``synced_gpus``).

    transformers decides ``synced_gpus`` by ``is_fsdp_managed_module``, which knows FSDP1's wrapper and the
    marker its own FSDP2 loader sets, not accelerate's ``fully_shard``; without it ranks whose answers end at
    different lengths stop issuing all-gathers at different steps (the eval hook, GRPO rollouts).
    """
    from transformers import GenerationMixin

    for module in model.modules():
        if isinstance(module, GenerationMixin):
            module._is_fsdp_managed_module = True


def prepare(trainer, *, use_lora: bool) -> dict[str, Any]:
    """Check the launch, align vision passes where weights are sharded; return :func:`describe`'s record."""
    accelerator = trainer.accelerator
    check_launch(accelerator, use_lora=use_lora)
    info = describe(accelerator)
    info["vision_passes_aligned"] = False
    if shards_parameters(accelerator):
        info["vision_passes_aligned"] = align_vision_passes(trainer.model) > 0
    if getattr(accelerator.state, "fsdp_plugin", None) is not None and accelerator.num_processes > 1:
        mark_fsdp_managed(trainer.model)
    logger.info("distributed: %s", info)
    return info


class EmptyAdapterError(RuntimeError):
    """A save that wrote no adapter, or an adapter without tensors."""


def check_saved_adapter(directory: str | Path) -> int:
    """The number of tensors in ``directory``'s adapter; :class:`EmptyAdapterError` when there are none.

    All-zero ``lora_B`` is a legitimate adapter (its initial value); a missing file or 0 tensors is a
    save that lost the adapter (FSDP's sharded state dict, renamed modules, a failed gather).
    """
    directory = Path(directory)
    path = directory / "adapter_model.safetensors"
    if not path.is_file():
        legacy = directory / "adapter_model.bin"
        if legacy.is_file():
            count = len(torch.load(legacy, map_location="cpu", weights_only=True))
        else:
            raise EmptyAdapterError(f"{directory}: no adapter_model.safetensors was written (the save lost the adapter)")
    else:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as handle:
            count = len(list(handle.keys()))
    if count == 0:
        raise EmptyAdapterError(
            f"{path}: the saved adapter holds 0 tensors (the save matched no adapter weights: FSDP's activation "
            "checkpointing or another wrapper renamed the modules)")
    return count


def adapter_check_callback(use_lora: bool):
    """A ``TrainerCallback`` running :func:`check_saved_adapter` on every checkpoint (rank 0), or ``None``."""
    if not use_lora:
        return None
    from transformers import TrainerCallback

    class AdapterCheckCallback(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                check_saved_adapter(Path(args.output_dir) / f"checkpoint-{state.global_step}")
            return control

    return AdapterCheckCallback()
