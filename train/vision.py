"""Image + video collation for Qwen3-VL preference pairs: extends TRL's ``DataCollatorForVisionPreference``.

TRL 1.16's vision collator reads only ``images``. :class:`DataCollatorForVideoPreference` keeps its
logic (chat template, left-padded prompts, right-padded completions, ``flush_left``,
``mm_token_type_ids``) and adds, for each pair:

- media loading from paths (relative paths are resolved against ``media_root``);
- videos decoded with PyAV through ``transformers.video_utils.load_video`` (the video processor cannot
  decode paths on this stack, see ``train/tiny_model.py``), frames sampled and resized the way
  qwen-vl-utils' ``fetch_video`` does (its ``smart_nframes`` and ``smart_resize``), then handed to the
  processor with their ``VideoMetadata`` and ``do_sample_frames=False``/``do_resize=False``, so
  timestamps are right and the processor's ``<|video_pad|>`` expansion matches ``video_grid_thw``;
- images resized like qwen-vl-utils' ``fetch_image`` under the same kind of pixel budget;
- ``pair_ids`` / ``pair_kinds`` (for per-kind metrics) and precomputed ``ref_chosen_logps`` /
  ``ref_rejected_logps`` when the dataset carries them.

Nothing is ever truncated here: lengths are checked before training (``train/lengths.py``).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ifpo.verifiers.media import (
    FRAME_FACTOR,
    MediaBudget,
    load_image,
    load_video,
    patch_factor,
    sample_frame_indices,
)
from trl.trainer.dpo_trainer import DataCollatorForVisionPreference

# Negative kinds the pair builder writes in ``meta.kind``; anything else is counted as "other".
PAIR_KINDS: tuple[str, ...] = ("stripped", "corrupted", "conflict", "misaligned", "option_order", "on_policy",
                              "grounding", "other")


def kind_index(kind: str | None) -> int:
    """Position of ``kind`` in :data:`PAIR_KINDS` (unknown or missing kinds map to ``"other"``)."""
    return PAIR_KINDS.index(kind) if kind in PAIR_KINDS else PAIR_KINDS.index("other")


class _ProcessorWithVideos:
    """Forwards everything to ``processor``; adds this batch's videos to the prompt call.

    TRL's collator processes prompts with ``processor(images=..., text=...)`` and completions with
    ``processor(text=...)``; only the former may carry media, so the videos go where ``images`` does.
    """

    def __init__(self, processor, videos: list, metadata: list):
        self._processor = processor
        self._videos = videos
        self._metadata = metadata

    def __getattr__(self, name: str):
        return getattr(self._processor, name)

    def __call__(self, *args, **kwargs):
        if "images" in kwargs:
            images = kwargs["images"]
            if images is not None:
                # TRL passes one list per example; a flat list keeps the processor from guessing the nesting
                # when some examples have no image.
                flat = [image for per_example in images for image in per_example]
                kwargs["images"] = flat or None
            if self._videos:
                kwargs["videos"] = self._videos
                kwargs["video_metadata"] = self._metadata
                kwargs["do_sample_frames"] = False
            # Media were resized here already (qwen-vl-utils' policy, recipe budgets).
            kwargs["do_resize"] = False
        return self._processor(*args, **kwargs)


def clean_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without the ``None`` fields Arrow adds when content parts of different types share a column.

    A video part read back from a ``datasets.Dataset`` is ``{"type": "video", "text": None}``; the chat
    template would print that ``None`` in some branches.
    """
    cleaned = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = [{k: v for k, v in part.items() if v is not None} for part in content]
        cleaned.append({**{k: v for k, v in message.items() if v is not None}, "content": content})
    return cleaned


def check_placeholders(example: dict[str, Any]) -> None:
    """The prompt's image/video parts must match the pair's media lists (media guard, before any processing).

    Otherwise TRL or the processor fails later without naming the pair, or, for a video placeholder without
    a video, the template writes a lone ``<|video_pad|>`` the model would read as text.
    """
    from ifpo.verifiers.media_guard import MediaMismatchError

    parts = [p for m in example.get("prompt") or [] if isinstance(m.get("content"), list) for p in m["content"]]
    for name, key in (("image", "images"), ("video", "videos")):
        placeholders = sum(1 for p in parts if isinstance(p, dict) and p.get("type") == name)
        listed = len(example.get(key) or [])
        if placeholders != listed:
            raise MediaMismatchError(
                f"pair {example.get('pair_id', '?')}: its prompt has {placeholders} {name} placeholder(s) but "
                f"'{key}' lists {listed}; the {name} was dropped from the record or the prompt"
            )


def resolve_media(path: Any, media_root: str | None) -> Any:
    """An absolute path for a relative media path (or the object itself for decoded images)."""
    if not isinstance(path, str):
        return path
    if media_root is None or os.path.isabs(path):
        return path
    return str(Path(media_root) / path)


@dataclass
class DataCollatorForVideoPreference(DataCollatorForVisionPreference):
    """TRL's vision preference collator, extended to videos, pixel budgets and ifpo's pair columns.

    Each example has ``prompt``/``chosen``/``rejected`` (conversational), ``images`` and ``videos``
    (paths, relative to ``media_root`` unless absolute; either may be empty), and optionally
    ``pair_id``, ``kind``, ``ref_chosen_logps``, ``ref_rejected_logps``. The batch holds TRL's keys
    plus ``pixel_values_videos``/``video_grid_thw`` when videos are present, ``pair_ids`` (a list of
    strings), ``pair_kinds`` (indices into :data:`PAIR_KINDS`) and the reference log-probs if given.

    Example::

        collator = DataCollatorForVideoPreference(processor, budget=MediaBudget(video_fps=0.5))
        batch = collator([pair_with_video, pair_with_image, text_only_pair])
    """

    budget: MediaBudget = field(default_factory=MediaBudget)
    media_root: str | None = None
    # Set by IfpoDPOTrainer (media guard): also emit ``pair_media``, each pair's (n_images, n_videos) from its record.
    media_counts: bool = False

    def __post_init__(self) -> None:
        if self.max_length is not None:
            raise ValueError(
                "DataCollatorForVideoPreference never truncates (cutting vision tokens breaks Qwen-VL); "
                "check lengths before training instead (train/lengths.py)"
            )

    def torch_call(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        factor = patch_factor(self.processor)
        videos: list[np.ndarray] = []
        metadata: list[Any] = []
        prepared = []
        for example in examples:
            check_placeholders(example)
            images = [load_image(resolve_media(p, self.media_root), self.budget, factor) for p in example.get("images") or []]
            for path in example.get("videos") or []:
                frames, meta = load_video(resolve_media(path, self.media_root), self.budget, factor)
                videos.append(frames)
                metadata.append(meta)
            prepared.append(
                {
                    "prompt": clean_messages(example["prompt"]),
                    "chosen": clean_messages(example["chosen"]),
                    "rejected": clean_messages(example["rejected"]),
                    "images": images,
                }
            )
        # TRL repeats the prompts for chosen then rejected; the videos follow the same order.
        proxy = _ProcessorWithVideos(self.processor, videos * 2, metadata * 2)
        output = DataCollatorForVisionPreference.torch_call(dataclasses.replace(self, processor=proxy), prepared)

        output["pair_ids"] = [str(example.get("pair_id", "")) for example in examples]
        output["pair_kinds"] = torch.tensor([kind_index(example.get("kind")) for example in examples], dtype=torch.long)
        if self.media_counts:
            output["pair_media"] = torch.tensor(
                [[len(example.get("images") or []), len(example.get("videos") or [])] for example in examples],
                dtype=torch.long,
            )
        if all(example.get("ref_chosen_logps") is not None for example in examples):
            output["ref_chosen_logps"] = torch.tensor([float(e["ref_chosen_logps"]) for e in examples])
            output["ref_rejected_logps"] = torch.tensor([float(e["ref_rejected_logps"]) for e in examples])
        return output


def count_media_tokens(input_ids: torch.Tensor, processor) -> dict[str, int]:
    """Numbers of ``<|image_pad|>`` and ``<|video_pad|>`` tokens in one row of ``input_ids``."""
    tokenizer = processor.tokenizer
    counts = {}
    for name, token in (("image", "<|image_pad|>"), ("video", "<|video_pad|>")):
        counts[name] = int((input_ids == tokenizer.convert_tokens_to_ids(token)).sum())
    return counts


def expected_media_tokens(batch: dict[str, Any], merge_size: int = 2) -> dict[str, int]:
    """Media tokens the model expects from the grids: ``prod(grid_thw) / merge_size**2`` summed."""
    out = {}
    for name, key in (("image", "image_grid_thw"), ("video", "video_grid_thw")):
        grid = batch.get(key)
        out[name] = 0 if grid is None else int(grid.prod(-1).sum()) // (merge_size**2)
    return out


__all__ = [
    "FRAME_FACTOR",
    "PAIR_KINDS",
    "DataCollatorForVideoPreference",
    "clean_messages",
    "MediaBudget",
    "count_media_tokens",
    "expected_media_tokens",
    "kind_index",
    "load_image",
    "load_video",
    "patch_factor",
    "resolve_media",
    "sample_frame_indices",
]
