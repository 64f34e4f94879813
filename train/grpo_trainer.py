"""TRL's GRPOTrainer on items with image and video prompts, and the item dataset it trains on.

TRL 1.16's GRPOTrainer reads only ``image``/``images`` columns, and its forward passes
(``_get_per_token_logps_and_entropies``) take image tensors only. :class:`IfpoGRPOTrainer` keeps
TRL's generation, rewards, advantages and loss, and changes where prompts meet media:

1. ``_generate_and_score_completions``: before TRL's step, every distinct prompt of the batch is
   processed once, the way the DPO collator does it (``ifpo.train.vision``: images resized under the
   recipe's budget, video frames sampled and resized like qwen-vl-utils and handed over with their
   ``VideoMetadata``, ``do_sample_frames=False``/``do_resize=False``). The per-row tensors travel
   with the rollouts under ``ifpo_media`` (a list, so TRL's shuffle and split keep it aligned).
2. ``_tokenize_prompts``: generation gets those token ids and the batch's ``pixel_values``,
   ``pixel_values_videos``, grids and ``mm_token_type_ids``.
3. ``_get_per_token_logps_and_entropies``: old-policy, reference and training forwards get each
   chunk's media from the rows, and ``mm_token_type_ids`` (1 image, 2 video) from the token ids.
4. Generation may not sample ``<|image_pad|>``/``<|video_pad|>`` (a sampled pad token would not
   match the media features); TRL suppresses only the image token.
5. Shared prompt (``shared_prompt``, default on; ``train/shared_prompt.py``): in every old-policy,
   reference and loss forward, the completions of one prompt that share a forward chunk are packed into
   one row ``[prompt | completion 1 | h | completion 2 | ...]`` under a block attention mask, so the
   prompt and its media run once per chunk instead of once per completion. The whole group shares when
   a chunk holds it (``steps_per_generation: 1``, the old-policy/reference passes over the generation
   batch); after TRL's shuffle a loss chunk shares among the rows of a prompt it holds.
6. Media guard (``media_guard``, default on): before generation and before every forward, each row's
   placeholder tokens must match its media tensors and its item's number of images and videos;
   otherwise a ``MediaMismatchError`` names the item.

Text-only batches take TRL's own path, or the same chunked loop when the shared prompt is on.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from ifpo.train.shared_prompt import SHARED_KEY, attention_supported, install_shared_prompt, spec
from ifpo.train.vision import MediaBudget, clean_messages, load_image, load_video, patch_factor, resolve_media
from ifpo.verifiers.generation import item_messages
from ifpo.verifiers.media_guard import check_media
from trl import GRPOTrainer

logger = logging.getLogger("ifpo.grpo")

IFPO_COLUMNS = ("item_id", "image_paths", "video_paths")
MEDIA_KEYS = ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw")
# Travel with each row's media: which prompt it is (packing groups), which item (guard errors), its media counts.
ROW_KEYS = ("ifpo_group", "item_id", "n_media")
REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_ITEMS = REPO_ROOT / "sample" / "items.jsonl"


# ------------------------------------------------------------------------------------------------
# items -> prompt dataset
# ------------------------------------------------------------------------------------------------


def item_media_kind(item: Mapping[str, Any]) -> str:
    """``video`` if the item has a video, else ``image`` if it has an image, else ``text``."""
    media = item.get("media") or {}
    return "video" if media.get("videos") else "image" if media.get("images") else "text"


def select_items(
    items: Sequence[Mapping[str, Any]],
    *,
    item_ids: Sequence[str] | None = None,
    media: Sequence[str] = ("text", "image", "video"),
    max_items: int | None = None,
) -> list[Mapping[str, Any]]:
    """The items a run trains on. Conflict items are left out: they are unsatisfiable by design, so no
    constraint fraction rewards the right behaviour (detecting the conflict)."""
    chosen = [it for it in items if it.get("structure") != "conflict"]
    if item_ids is not None:
        known = {str(it["id"]) for it in chosen}
        unknown = [i for i in item_ids if i not in known]
        if unknown:
            raise ValueError(f"item_ids: {unknown[:5]} are not among the (non-conflict) items")
        wanted = set(item_ids)
        chosen = [it for it in chosen if str(it["id"]) in wanted]
    chosen = [it for it in chosen if item_media_kind(it) in media]
    if max_items is not None:
        chosen = chosen[:max_items]
    if not chosen:
        raise ValueError("no items left to train on (check item_ids, item_media and max_items)")
    return chosen


def load_training_items(recipe, left_out: list[str] | None = None) -> tuple[list[dict[str, Any]], Path, str]:
    """Items (validated), their media root and a fingerprint, as the recipe selects them.

    Items whose media do not decode are left out, each named on stderr and appended to ``left_out``
    (the run manifest lists them and the script exits 1, docs/exit-codes.md).
    """
    from ifpo.verifiers.schema import read_items

    path = SAMPLE_ITEMS if recipe.items == "sample" else Path(recipe.items)
    if not path.is_file():
        raise ValueError(f"items: {path} not found")
    root = Path(recipe.media_root) if recipe.media_root else path.parent
    items = read_items(path, root=root)
    chosen = select_items(items, item_ids=recipe.item_ids, media=recipe.item_media, max_items=recipe.max_items)
    chosen = _decodable(chosen, root, path, left_out if left_out is not None else [])
    digest = hashlib.sha256("\n".join(json.dumps(it, sort_keys=True) for it in chosen).encode()).hexdigest()
    return [dict(it) for it in chosen], root.resolve(), digest


def _decodable(items: Sequence[Mapping[str, Any]], root: Path, path: Path,
               left_out: list[str]) -> list[Mapping[str, Any]]:
    """The items whose media all decode; each one left out is named (a corrupt file fails its item, not the run)."""
    import sys

    from ifpo.verifiers.media import confined_path, probe_media

    verdicts: dict[str, str | None] = {}
    kept = []
    for item in items:
        problem = None
        for kind in ("images", "videos"):
            for i, rel in enumerate((item.get("media") or {}).get(kind) or []):
                if rel not in verdicts:
                    verdicts[rel] = probe_media(confined_path(root, rel), kind)
                if verdicts[rel] and problem is None:
                    problem = f"media.{kind}[{i}]: {rel!r} {verdicts[rel]}"
        if problem:
            left_out.append(f"{path}: item {item['id']!r}: {problem}")
            print(f"train/grpo.py: {left_out[-1]}; left out", file=sys.stderr)
        else:
            kept.append(item)
    if items and not kept:
        raise ValueError(f"{path}: no item has decodable media")
    return kept


def prompt_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """One dataset row: the item's chat prompt (system, media placeholders, instruction), id and media paths.

    The prompt is ``ifpo.verifiers.generation.item_messages`` (the same rendering evaluation uses) with the
    media parts reduced to placeholders; the paths travel in their own columns.
    """
    messages = item_messages(item)
    for message in messages:
        message["content"] = [{"type": p["type"]} if p["type"] in ("image", "video") else p for p in message["content"]]
    media = item.get("media") or {}
    return {
        "prompt": messages,
        "item_id": str(item["id"]),
        "image_paths": list(media.get("images") or []),
        "video_paths": list(media.get("videos") or []),
    }


def build_prompt_dataset(items: Sequence[Mapping[str, Any]]):
    """A ``datasets.Dataset`` of :func:`prompt_row` rows."""
    from datasets import Dataset

    return Dataset.from_list([prompt_row(item) for item in items])


def grpo_peft_config(recipe):
    """``ifpo.train.model.lora_config`` plus the recipe's ``lora_modules_to_save`` (trained in full, saved with the adapter).

    ``lm_head`` is the one that matters on the tiny random model: after the final RMSNorm its random head
    (std 0.02) turns any hidden state into near-uniform logits, so LoRA on every language-model projection
    can only shift the policy a little (measured: expected letters "e" per sampled token 0.291 -> 0.267 at
    best, by direct optimisation). A LoRA adapter on ``lm_head`` would not help: TRL's fused LM head reads
    ``lm_head.weight`` and skips the adapter; a ``modules_to_save`` copy is what that attribute resolves to.
    """
    from ifpo.train.model import lora_config

    config = lora_config(recipe)
    if config is not None and recipe.lora_modules_to_save:
        config.modules_to_save = list(recipe.lora_modules_to_save)
    return config


# ------------------------------------------------------------------------------------------------
# the trainer
# ------------------------------------------------------------------------------------------------


class IfpoGRPOTrainer(GRPOTrainer):
    """``trl.GRPOTrainer`` whose prompts may carry images and videos (``image_paths``/``video_paths``)."""

    def __init__(self, *args, budget: MediaBudget | None = None, media_root: str | Path | None = None,
                 shared_prompt: bool = True, media_guard: bool = True, rollouts=None, **kwargs):
        training_args = kwargs.get("args")
        if training_args is not None and getattr(training_args, "remove_unused_columns", False):
            # TRL's public switch (GRPOConfig's default) instead of overriding its private
            # _set_signature_columns_if_needed: rows must keep IFPO_COLUMNS, and build_prompt_dataset
            # makes no column the trainer should drop.
            logger.info("remove_unused_columns: false (ifpo's prompt rows carry %s)", ", ".join(IFPO_COLUMNS))
            training_args.remove_unused_columns = False
        super().__init__(*args, **kwargs)
        # A train.vllm_rollouts.VllmServerRollouts: rollouts come from a vLLM server (None: transformers generate).
        self.rollouts = rollouts
        self._rollout_inputs: list[dict[str, Any]] | None = None  # the batch being generated, for the server
        self.media_guard = media_guard
        self.shared_prompt = False
        if shared_prompt:
            from peft import PeftModel

            base = self.model.get_base_model() if isinstance(self.model, PeftModel) else self.model
            if attention_supported(base):
                install_shared_prompt(base)
                if getattr(self, "ref_model", None) is not None:
                    install_shared_prompt(self.ref_model)
                self.shared_prompt = True
            else:
                logger.warning("shared_prompt: off (attention %r cannot take the block mask; use sdpa or eager)",
                               getattr(base.config, "_attn_implementation", None))
        self.budget = budget or MediaBudget()
        self.media_root = str(media_root) if media_root is not None else None
        self._batch_media: list[dict[str, Any]] | None = None  # rows of the batch being generated
        self._active_media: list[dict[str, Any]] | None = None  # rows of the forward passes under way
        tokenizer = self.processing_class.tokenizer
        self._pad_ids = {
            1: tokenizer.convert_tokens_to_ids("<|image_pad|>"),
            2: tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        }
        if not self.use_vllm and getattr(self, "generation_config", None) is not None:
            suppressed = sorted({*(self.generation_config.suppress_tokens or []), *self._pad_ids.values()})
            self.generation_config.suppress_tokens = suppressed
            self.generation_kwargs["suppress_tokens"] = suppressed

    # -- media -----------------------------------------------------------------------------------

    def _process_prompt(self, example: Mapping[str, Any]) -> dict[str, Any]:
        """Token ids and media tensors of one prompt, processed as the DPO collator processes prompts."""
        processor = self.processing_class
        factor = patch_factor(processor)
        messages = clean_messages(example["prompt"])
        text = processor.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **(self.chat_template_kwargs or {})
        )
        images = [load_image(resolve_media(p, self.media_root), self.budget, factor) for p in example.get("image_paths") or []]
        videos, metadata = [], []
        for path in example.get("video_paths") or []:
            frames, meta = load_video(resolve_media(path, self.media_root), self.budget, factor)
            videos.append(frames)
            metadata.append(meta)
        kwargs: dict[str, Any] = {}
        if images:
            kwargs["images"] = images
        if videos:
            kwargs.update(videos=videos, video_metadata=metadata, do_sample_frames=False)
        if images or videos:
            kwargs["do_resize"] = False  # resized above under the recipe's budget
        encoded = processor(text=[text], return_tensors="pt", **kwargs)
        row = {"input_ids": encoded["input_ids"][0].tolist(), "item_id": str(example.get("item_id", "?")),
               "n_media": (len(images), len(videos))}
        for key in MEDIA_KEYS:
            if encoded.get(key) is not None:
                row[key] = encoded[key]
        return row

    def _media_rows(self, inputs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
        """One processed prompt per row (rows of one prompt share it), or None for a text-only batch."""
        if not any(x.get("image_paths") or x.get("video_paths") for x in inputs):
            return None
        processed: dict[str, dict[str, Any]] = {}
        rows = []
        for example in inputs:
            key = json.dumps([example["prompt"], example.get("image_paths"), example.get("video_paths")], sort_keys=True,
                             default=str)
            if key not in processed:
                processed[key] = {**self._process_prompt(example), "ifpo_group": len(processed)}
            rows.append(processed[key])
        return rows

    def _media_inputs(self, rows: Sequence[Mapping[str, Any]], input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Model inputs for ``rows``: concatenated media tensors and ``mm_token_type_ids`` from the ids."""
        device = input_ids.device
        out: dict[str, torch.Tensor] = {}
        for key in MEDIA_KEYS:
            parts = [row[key] for row in rows if key in row]
            if parts:
                out[key] = torch.cat(parts).to(device)
        mm = torch.zeros_like(input_ids)
        for value, token_id in self._pad_ids.items():
            mm[input_ids == token_id] = value
        out["mm_token_type_ids"] = mm
        return out

    # -- TRL hooks -------------------------------------------------------------------------------

    def _generate_and_score_completions(self, inputs):
        self._rollout_inputs = inputs
        try:
            return self._generate_and_score_media(inputs)
        finally:
            self._rollout_inputs = None

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        if self.rollouts is None or self._rollout_inputs is None:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                 has_tool_images)
        from ifpo.train.vllm_rollouts import trainer_rollouts

        return trainer_rollouts(self, prompt_ids)

    def _generate_and_score_media(self, inputs):
        rows = self._media_rows(inputs)
        if rows is None:
            return super()._generate_and_score_completions(inputs)
        self._batch_media = self._active_media = rows
        try:
            output = super()._generate_and_score_completions(inputs)
        finally:
            self._batch_media = self._active_media = None
        output["ifpo_media"] = [{k: v for k, v in row.items() if k in MEDIA_KEYS or k in ROW_KEYS} for row in rows]
        return output

    def _tokenize_prompts(self, prompts: list):
        rows = self._batch_media
        if rows is None:
            return super()._tokenize_prompts(prompts)
        if len(rows) != len(prompts):
            raise RuntimeError(f"{len(prompts)} prompts but {len(rows)} processed media rows")
        prompt_ids = [row["input_ids"] for row in rows]
        if self.media_guard:
            # Generation sees the same media the forwards will: check each prompt before sampling from it.
            for row in rows:
                self._guard(row, torch.tensor([row["input_ids"]]), [row])
        fields: dict[str, Any] = {}
        for key in MEDIA_KEYS:
            parts = [row[key] for row in rows if key in row]
            if parts:
                fields[key] = torch.cat(parts)
        # A per-token field: TRL left-pads it like the prompt ids.
        fields["mm_token_type_ids"] = [
            [next((v for v, t in self._pad_ids.items() if t == tok), 0) for tok in ids] for ids in prompt_ids
        ]
        return prompt_ids, None, fields

    def _compute_loss(self, model, inputs):
        rows = inputs.get("ifpo_media")
        if rows is None:
            return super()._compute_loss(model, inputs)
        self._active_media = rows
        try:
            return super()._compute_loss(model, inputs)
        finally:
            self._active_media = None

    def _guard(self, _row, input_ids: torch.Tensor, rows: Sequence[Mapping[str, Any]], inputs=None) -> None:
        """The media guard on ``input_ids`` (one row per entry of ``rows``) and their media tensors."""
        batch = {"input_ids": input_ids, **(inputs if inputs is not None else self._media_inputs(rows, input_ids))}
        pad_ids = {"image": self._pad_ids[1], "video": self._pad_ids[2]}
        vision = getattr(self.accelerator.unwrap_model(self.model).config, "vision_config", None)
        check_media(batch, pad_ids=pad_ids, merge_size=int(getattr(vision, "spatial_merge_size", 2) or 2),
                    ids=[str(r.get("item_id", "?")) for r in rows], expected=[r.get("n_media") for r in rows],
                    what="item")

    def _shared_spec(self, rows, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int):
        """Rows of one prompt form a group; the prompt is the left-padded part before the completions."""
        prompt_width = input_ids.size(1) - logits_to_keep
        if rows is not None:
            keys = [row.get("ifpo_group") for row in rows]
        else:
            keys = [tuple(ids[mask.bool()].tolist()) for ids, mask in
                    zip(input_ids[:, :prompt_width], attention_mask[:, :prompt_width])]
        index: dict[Any, int] = {}
        group = [index.setdefault(key, len(index)) for key in keys]
        start = (attention_mask[:, :prompt_width] == 0).sum(dim=1)
        return {k: v.to(input_ids.device) for k, v in spec(group, start, [prompt_width] * len(group)).items()}

    def _get_per_token_logps_and_entropies(
        self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, compute_entropy=False,
        compute_aux_loss=False, **kwargs,
    ):
        rows = self._active_media
        if rows is None and (not self.shared_prompt or compute_aux_loss or kwargs.get("pixel_values") is not None):
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy, compute_aux_loss, **kwargs
            )
        if rows is not None and len(rows) != input_ids.size(0):
            raise RuntimeError(f"{input_ids.size(0)} sequences but {len(rows)} media rows")
        # TRL's chunked loop, with each chunk's own media (and its prompts packed once when shared).
        batch_size = batch_size or input_ids.size(0)
        all_logps, all_entropies, all_aux = [], [], []
        for start in range(0, input_ids.size(0), batch_size):
            end = min(start + batch_size, input_ids.size(0))
            ids, mask = input_ids[start:end], attention_mask[start:end]
            model_inputs = {"input_ids": ids, "attention_mask": mask}
            if rows is not None:
                media = self._media_inputs(rows[start:end], ids)
                if self.media_guard:
                    self._guard(None, ids, rows[start:end], media)
                model_inputs.update(media)
            elif kwargs.get("mm_token_type_ids") is not None:
                model_inputs["mm_token_type_ids"] = kwargs["mm_token_type_ids"][start:end]
            if compute_aux_loss:
                model_inputs["output_router_logits"] = True
            elif self.shared_prompt:
                model_inputs[SHARED_KEY] = self._shared_spec(None if rows is None else rows[start:end], ids, mask,
                                                             logits_to_keep)
            labels = ids.masked_fill(mask == 0, -100)
            labels[:, :-logits_to_keep] = -100
            with self.accelerator.autocast():
                outputs = model(**model_inputs, labels=labels, fused_lm_head=True)
            all_logps.append(outputs.log_probs[:, -logits_to_keep:])
            if compute_entropy:
                all_entropies.append(outputs.entropy[:, -logits_to_keep:])
            if compute_aux_loss:
                all_aux.append(outputs.aux_loss)
        logps = torch.cat(all_logps, dim=0)
        entropies = torch.cat(all_entropies, dim=0) if compute_entropy else None
        aux_loss = torch.stack(all_aux).mean() if compute_aux_loss else None
        return logps, entropies, aux_loss
