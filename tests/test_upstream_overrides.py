"""The upstream methods ifpo overrides or relies on, checked against the installed TRL and transformers.

``IfpoGRPOTrainer`` (train/grpo_trainer.py) and ``IfpoDPOTrainer`` (train/trainer.py) override TRL
methods, some private and one copied in part (GRPO's chunked log-prob loop); ``install_shared_prompt``
(train/shared_prompt.py) swaps ``model.forward`` and builds TRL's ``FusedCausalLMOutput`` itself, and
calls Qwen3-VL's ``get_rope_index``. A TRL or transformers release may rename, re-sign or rewrite any
of them without notice, and training would go on silently on the parent's path. pyproject caps both
below their next minor release; this test is what a raised cap must pass first. Each failure names the
method and says what to re-read.

Recorded against trl 1.16.0 and transformers 5.25.0 (the newest tested; `pip show trl transformers`).
"""

from __future__ import annotations

import hashlib
import inspect

import pytest

pytest.importorskip("trl")

import transformers  # noqa: E402
import trl  # noqa: E402
from ifpo.train.grpo_trainer import IfpoGRPOTrainer  # noqa: E402
from ifpo.train.trainer import IfpoDPOTrainer  # noqa: E402
from trl import DPOTrainer, GRPOTrainer  # noqa: E402

TESTED = {"trl": "1.16.0", "transformers": "5.25.0"}

# (ifpo class, upstream class, method, the upstream parameters, sha256[:16] of the upstream source).
# The source hash: an override that calls super() still depends on what the parent does (e.g. the
# 3-tuple _tokenize_prompts returns, the loop _get_per_token_logps_and_entropies copies); a changed
# body is a prompt to re-read it, then to update the hash.
OVERRIDES = [
    (IfpoGRPOTrainer, GRPOTrainer, "_generate_and_score_completions", ["self", "inputs"], "1fa48922792dcd5c"),
    (IfpoGRPOTrainer, GRPOTrainer, "_generate_single_turn",
     ["self", "prompt_ids", "images", "multimodal_fields", "num_generations", "has_tool_images"], "e0f02e4fc094cefd"),
    (IfpoGRPOTrainer, GRPOTrainer, "_tokenize_prompts", ["self", "prompts"], "d2d27f7c9bfda85f"),
    (IfpoGRPOTrainer, GRPOTrainer, "_compute_loss", ["self", "model", "inputs"], "80295546bbdbf6f7"),
    (IfpoGRPOTrainer, GRPOTrainer, "_get_per_token_logps_and_entropies",
     ["self", "model", "input_ids", "attention_mask", "logits_to_keep", "batch_size", "compute_entropy",
      "compute_aux_loss", "pixel_values", "image_grid_thw", "num_images", "pixel_attention_mask", "spatial_shapes",
      "num_tiles", "image_sizes", "token_type_ids", "mm_token_type_ids", "image_position_ids"], "ea73c3909275851d"),
    (IfpoDPOTrainer, DPOTrainer, "compute_ref_log_probs", ["self", "model", "inputs"], "90611af9cbadb8ec"),
    (IfpoDPOTrainer, DPOTrainer, "compute_loss", ["self", "model", "inputs", "return_outputs", "num_items_in_batch"],
     "c453890e84beb4cb"),
]
IDS = [f"{ifpo.__name__}.{name}" for ifpo, _, name, _, _ in OVERRIDES]

# Attributes of the TRL trainers that ifpo's subclasses read or set (not methods, so not in OVERRIDES).
ATTRIBUTES = {
    DPOTrainer: ["precompute_ref_logps", "ld_alpha", "aux_loss_enabled", "_signature_columns", "ref_model"],
    GRPOTrainer: ["use_vllm", "generation_config", "generation_kwargs", "chat_template_kwargs", "ref_model"],
}


def _versions() -> str:
    return f"installed trl {trl.__version__}, transformers {transformers.__version__}; tested {TESTED}"


@pytest.mark.parametrize("ifpo, upstream, name, params, digest", OVERRIDES, ids=IDS)
def test_overridden_method_is_upstream_with_the_tested_signature(ifpo, upstream, name, params, digest):
    assert name in vars(ifpo), f"{ifpo.__name__}.{name}: no longer overridden by ifpo; drop it from OVERRIDES"
    method = getattr(upstream, name, None)
    assert method is not None, (
        f"{upstream.__name__}.{name} is gone ({_versions()}): {ifpo.__name__}.{name} would never be called; "
        "find what replaced it upstream and move the override there")
    got = list(inspect.signature(method).parameters)
    assert got == params, (
        f"{upstream.__name__}.{name} changed its signature ({_versions()}): {got} instead of {params}; "
        f"re-read it and adapt {ifpo.__name__}.{name}")


@pytest.mark.parametrize("ifpo, upstream, name, params, digest", OVERRIDES, ids=IDS)
def test_overridden_method_body_is_the_one_read(ifpo, upstream, name, params, digest):
    method = getattr(upstream, name, None)
    if method is None:
        pytest.fail(f"{upstream.__name__}.{name} is gone ({_versions()})")
    got = hashlib.sha256(inspect.getsource(method).encode()).hexdigest()[:16]
    assert got == digest, (
        f"{upstream.__name__}.{name} changed upstream ({_versions()}): re-read it against {ifpo.__name__}.{name} "
        f"(what it returns, what ifpo copies), then record its new hash {got}")


@pytest.mark.parametrize("ifpo, upstream", [(IfpoGRPOTrainer, GRPOTrainer), (IfpoDPOTrainer, DPOTrainer)],
                         ids=["IfpoGRPOTrainer", "IfpoDPOTrainer"])
def test_every_override_is_guarded(ifpo, upstream):
    """A method of ifpo's subclass that shadows an upstream one must be in OVERRIDES; ifpo's own helpers
    must not shadow anything (a TRL release adding a method of that name would be overridden by accident)."""
    guarded = {name for cls, _, name, _, _ in OVERRIDES if cls is ifpo}
    shadowing = {name for name, value in vars(ifpo).items()
                 if callable(value) and name != "__init__" and hasattr(upstream, name)}
    assert shadowing <= guarded, (
        f"{ifpo.__name__} overrides {sorted(shadowing - guarded)} of {upstream.__name__} without a guard here "
        f"({_versions()}): add each to OVERRIDES, or rename ifpo's helper")


@pytest.mark.parametrize("upstream, name", [(cls, a) for cls, names in ATTRIBUTES.items() for a in names],
                         ids=[f"{cls.__name__}.{a}" for cls, names in ATTRIBUTES.items() for a in names])
def test_trainer_attributes_ifpo_reads_are_still_set_upstream(upstream, name):
    assert f"self.{name}" in inspect.getsource(upstream), (
        f"{upstream.__name__} no longer sets self.{name} ({_versions()}); ifpo's subclass reads or sets it")


@pytest.mark.parametrize("ifpo, config", [(IfpoGRPOTrainer, "GRPOConfig"), (IfpoDPOTrainer, "DPOConfig")],
                         ids=["IfpoGRPOTrainer", "IfpoDPOTrainer"])
def test_trainers_keep_their_columns_through_the_public_switch(ifpo, config):
    """Neither trainer overrides the private _set_signature_columns_if_needed: both set the public
    remove_unused_columns to false (GRPOConfig's default; TrainingArguments' default is true) so ifpo's
    columns reach its collator or reward functions, which read the keys they need."""
    assert "_set_signature_columns_if_needed" not in vars(ifpo)
    field = getattr(trl, config).__dataclass_fields__.get("remove_unused_columns")
    assert field is not None, f"{config}.remove_unused_columns is gone ({_versions()})"
    assert "training_args.remove_unused_columns = False" in inspect.getsource(ifpo.__init__)


# --- the shared-prompt forward (train/shared_prompt.py) ---------------------------------------------


def test_fused_lm_head_output_has_the_fields_the_shared_forward_builds():
    from ifpo.train.shared_prompt import PER_TOKEN_FIELDS
    from trl.trainer.utils import FusedCausalLMOutput, add_fused_lm_head

    fields = set(getattr(FusedCausalLMOutput, "__dataclass_fields__", None) or FusedCausalLMOutput.__annotations__)
    needed = {*PER_TOKEN_FIELDS, "loss", "label_mask", "aux_loss"}
    assert needed <= fields, (
        f"trl.trainer.utils.FusedCausalLMOutput lacks {sorted(needed - fields)} ({_versions()}): "
        "shared_forward (train/shared_prompt.py) builds it with these")
    params = list(inspect.signature(add_fused_lm_head).parameters)
    assert params[:1] == ["model"] and "outputs" in params, (
        f"trl.trainer.utils.add_fused_lm_head changed ({_versions()}): install_shared_prompt runs after it and "
        "forwards fused_lm_head=True / shift_labels to the forward it installs")


def test_qwen3_vl_forward_and_rope_index_take_what_the_shared_forward_passes():
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLForConditionalGeneration, Qwen3VLModel

    forward = set(inspect.signature(Qwen3VLForConditionalGeneration.forward).parameters)
    needed = {"input_ids", "attention_mask", "position_ids", "pixel_values", "pixel_values_videos", "image_grid_thw",
              "video_grid_thw", "mm_token_type_ids", "kwargs"}
    assert needed <= forward, (
        f"Qwen3VLForConditionalGeneration.forward lacks {sorted(needed - forward)} ({_versions()}): "
        "install_shared_prompt's forward passes them (fused_lm_head and shift_labels through **kwargs)")
    rope = list(inspect.signature(Qwen3VLModel.get_rope_index).parameters)
    assert rope[:5] == ["self", "input_ids", "mm_token_type_ids", "image_grid_thw", "video_grid_thw"] \
        and "attention_mask" in rope, (
        f"Qwen3VLModel.get_rope_index changed its signature ({_versions()}): {rope}; "
        "train/shared_prompt.py unshared_positions calls it")
    config = transformers.PretrainedConfig()
    assert hasattr(config, "_attn_implementation") and hasattr(config, "get_text_config"), (
        f"PretrainedConfig._attn_implementation / get_text_config gone ({_versions()}): shared_prompt reads them")
