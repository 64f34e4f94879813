"""TRL's DPOTrainer with ifpo's three additions, and nothing else changed.

1. Precomputed reference log-probs for vision data: TRL refuses ``precompute_ref_log_probs`` for
   vision datasets, but its loss reads ``ref_chosen_logps``/``ref_rejected_logps`` from the batch
   whenever ``self.precompute_ref_logps`` is set. :meth:`IfpoDPOTrainer.use_precomputed_ref_logps`
   installs datasets that carry them (computed by ``train/ref_logps.py``) and sets that flag, so each
   step runs the policy forward only.
2. The columns ifpo's collator needs (``videos``, ``pair_id``, ``kind``, reference log-probs) reach it:
   ``remove_unused_columns`` is set to false (TRL's public switch; the collator reads only its keys).
3. ``compute_loss`` takes ``pair_ids``/``pair_kinds``/``pair_media`` out of the batch (the model must not
   see them), logs reward accuracy per negative kind, and remembers which pairs this rank trained on.
4. The shared-prompt forward (``train/shared_prompt.py``, on by default): the policy pass, TRL's
   on-the-fly reference pass and the precompute (``train/ref_logps.py``) run each pair's prompt and
   media once, ``[prompt | chosen | rejected]`` under a block attention mask, with the same log-probs.
5. The media guard (``ifpo.verifiers.media_guard``, on by default): before any forward, every pair's
   placeholder tokens must match its media tensors and its record's number of images and videos;
   otherwise a ``MediaMismatchError`` names the pair.
"""

from __future__ import annotations

import logging
from typing import Any

from ifpo.train.callbacks import capture_log_probs, per_pair_correct, record_kind_accuracy
from ifpo.train.shared_prompt import SHARED_KEY, attention_supported, dpo_spec, install_shared_prompt
from ifpo.verifiers.media_guard import check_media, media_pad_ids
from trl import DPOTrainer

logger = logging.getLogger(__name__)

IFPO_COLUMNS = ("videos", "pair_id", "kind", "ref_chosen_logps", "ref_rejected_logps")


class IfpoDPOTrainer(DPOTrainer):
    """``trl.DPOTrainer`` plus precomputed vision reference log-probs, per-kind accuracy, the shared-prompt
    forward (``shared_prompt``) and the media guard (``media_guard``)."""

    def __init__(self, *args, shared_prompt: bool = True, media_guard: bool = True, **kwargs):
        training_args = kwargs.get("args")
        if training_args is not None and getattr(training_args, "remove_unused_columns", False):
            # TRL's public switch instead of overriding its private _set_signature_columns_if_needed: the pair
            # rows must keep IFPO_COLUMNS for the collator, which reads the keys it needs and ignores the rest.
            logger.info("remove_unused_columns: false (ifpo's collator reads %s)", ", ".join(IFPO_COLUMNS))
            training_args.remove_unused_columns = False
        super().__init__(*args, **kwargs)
        self.seen_pair_ids: list[str] = []
        self.media_guard = media_guard
        if media_guard and hasattr(self.data_collator, "media_counts"):
            self.data_collator.media_counts = True
        self.shared_prompt = False
        self.shared_prompt_leak = False  # tests only: let rejected tokens see the chosen ones
        if shared_prompt:
            self.shared_prompt = self._install_shared_prompt()

    def _install_shared_prompt(self) -> bool:
        from peft import PeftModel

        base = self.model.get_base_model() if isinstance(self.model, PeftModel) else self.model
        peft_config = getattr(self.model, "peft_config", None) or {}
        if any(getattr(c, "is_prompt_learning", False) for c in peft_config.values()):
            logger.warning("shared_prompt: off (prompt-learning PEFT prepends virtual tokens)")
            return False
        if not attention_supported(base):
            logger.warning("shared_prompt: off (attention %r cannot take the block mask; use sdpa or eager)",
                           getattr(base.config, "_attn_implementation", None))
            return False
        if getattr(self, "aux_loss_enabled", False):
            logger.warning("shared_prompt: off (MoE router outputs are not packed)")
            return False
        install_shared_prompt(base)
        if self.ref_model is not None:
            install_shared_prompt(self.ref_model)
        return True

    def use_precomputed_ref_logps(self, train_dataset, eval_dataset=None) -> None:
        """Train (and evaluate) on datasets that carry ``ref_chosen_logps``/``ref_rejected_logps``."""
        for name, dataset in (("train", train_dataset), ("eval", eval_dataset)):
            if dataset is not None and not {"ref_chosen_logps", "ref_rejected_logps"} <= set(dataset.column_names):
                raise ValueError(f"the {name} dataset has no precomputed reference log-probs")
        self.train_dataset = train_dataset
        if eval_dataset is not None:
            self.eval_dataset = eval_dataset
        self.precompute_ref_logps = True
        if self.ref_model is not None:
            # Full fine-tuning kept a reference copy for on-the-fly passes; it is no longer needed.
            self.ref_model = None

    def prepare_model_batch(self, inputs: dict[str, Any]) -> tuple[list[str] | None, Any]:
        """Take ifpo's columns out of ``inputs`` (in place), guard its media, add the shared-prompt spec.

        Returns ``(pair_ids, pair_kinds)``. Every forward of a pair batch (step, evaluation, reference
        precompute) goes through here, so they all see the same guard and the same packing.
        """
        pair_ids = inputs.pop("pair_ids", None)
        kinds = inputs.pop("pair_kinds", None)
        pair_media = inputs.pop("pair_media", None)
        inputs.pop(SHARED_KEY, None)
        if self.media_guard:
            rows = inputs["input_ids"].shape[0]
            names = [f"{pair_id} ({side})" for side in ("chosen", "rejected") for pair_id in pair_ids] if pair_ids \
                else None
            expected = [tuple(x) for x in pair_media.tolist()] * 2 if pair_media is not None else None
            if names is not None and len(names) != rows:
                names = None
            check_media(inputs, pad_ids=media_pad_ids(self.processing_class), merge_size=self._merge_size(),
                        ids=names, expected=expected, what="pair")
        if self.shared_prompt:
            inputs[SHARED_KEY] = dpo_spec(inputs["attention_mask"], inputs["completion_mask"])
            if self.shared_prompt_leak:
                inputs["ifpo_shared_prompt_leak"] = True
        return pair_ids, kinds

    def _merge_size(self) -> int:
        model = self.accelerator.unwrap_model(self.model)
        vision = getattr(model.config, "vision_config", None)
        return int(getattr(vision, "spatial_merge_size", 2) or 2)

    def compute_ref_log_probs(self, model, inputs):
        if "pair_ids" in inputs or SHARED_KEY not in inputs:
            inputs = dict(inputs)
            self.prepare_model_batch(inputs)
        return super().compute_ref_log_probs(model, inputs)

    def compute_loss(self, model, inputs: dict[str, Any], return_outputs=False, num_items_in_batch=None):
        pair_ids, kinds = self.prepare_model_batch(inputs)
        mode = "train" if self.model.training else "eval"
        if mode == "train" and pair_ids:
            self.seen_pair_ids.extend(pair_ids)
        if kinds is None or self.ld_alpha is not None:
            # With ld_alpha TRL weights part of each sequence; the plain per-pair sum would disagree with it.
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        with capture_log_probs(self.accelerator.unwrap_model(model)) as captured:
            result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        correct = per_pair_correct(captured, inputs)
        if correct is not None:
            record_kind_accuracy(self, correct, kinds, mode)
        return result
