"""TRL's DPOTrainer with ifpo's three additions, and nothing else changed.

1. Precomputed reference log-probs for vision data: TRL refuses ``precompute_ref_log_probs`` for
   vision datasets, but its loss reads ``ref_chosen_logps``/``ref_rejected_logps`` from the batch
   whenever ``self.precompute_ref_logps`` is set. :meth:`IfpoDPOTrainer.use_precomputed_ref_logps`
   installs datasets that carry them (computed by ``train/ref_logps.py``) and sets that flag, so each
   step runs the policy forward only.
2. The columns ifpo's collator needs (``videos``, ``pair_id``, ``kind``, reference log-probs) survive
   ``remove_unused_columns``.
3. ``compute_loss`` takes ``pair_ids``/``pair_kinds`` out of the batch (the model must not see them),
   logs reward accuracy per negative kind, and remembers which pairs this rank trained on.
"""

from __future__ import annotations

from typing import Any

from ifpo.train.callbacks import capture_log_probs, per_pair_correct, record_kind_accuracy
from trl import DPOTrainer

IFPO_COLUMNS = ("videos", "pair_id", "kind", "ref_chosen_logps", "ref_rejected_logps")


class IfpoDPOTrainer(DPOTrainer):
    """``trl.DPOTrainer`` plus precomputed vision reference log-probs and per-kind accuracy."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen_pair_ids: list[str] = []

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        self._signature_columns = list(dict.fromkeys([*self._signature_columns, *IFPO_COLUMNS]))

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

    def compute_loss(self, model, inputs: dict[str, Any], return_outputs=False, num_items_in_batch=None):
        pair_ids = inputs.pop("pair_ids", None)
        kinds = inputs.pop("pair_kinds", None)
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
