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
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from trl.trainer.dpo_trainer import DataCollatorForVisionPreference

# Negative kinds the pair builder writes in ``meta.kind``; anything else is counted as "other".
PAIR_KINDS: tuple[str, ...] = ("stripped", "corrupted", "conflict", "misaligned", "option_order", "other")
# qwen-vl-utils groups frames in pairs (the temporal patch); frame counts are kept even.
FRAME_FACTOR = 2


def kind_index(kind: str | None) -> int:
    """Position of ``kind`` in :data:`PAIR_KINDS` (unknown or missing kinds map to ``"other"``)."""
    return PAIR_KINDS.index(kind) if kind in PAIR_KINDS else PAIR_KINDS.index("other")


@dataclass(frozen=True)
class MediaBudget:
    """Pixel and frame budgets for images and videos (recipe knobs of the same names)."""

    image_min_pixels: int = field(default=4 * 32 * 32, metadata={"help": "images are upscaled to at least this many pixels"})
    image_max_pixels: int = field(default=1280 * 720, metadata={"help": "images are downscaled to at most this many pixels"})
    image_max_side: int | None = field(default=None, metadata={"help": "cap on an image's longer side in pixels"})
    video_fps: float = field(default=2.0, metadata={"help": "frames sampled per second of video"})
    video_min_frames: int = field(default=4, metadata={"help": "fewest frames sampled from a video"})
    video_max_frames: int = field(default=768, metadata={"help": "most frames sampled from a video"})
    video_min_pixels: int = field(default=128 * 32 * 32, metadata={"help": "per-frame pixel floor"})
    video_max_pixels: int = field(default=768 * 32 * 32, metadata={"help": "per-frame pixel ceiling"})
    video_total_pixels: int = field(
        default=int(128000 * 32 * 32 * 0.9),
        metadata={"help": "pixels over all sampled frames; the per-frame ceiling shrinks to fit (qwen-vl-utils)"},
    )
    video_max_side: int | None = field(
        default=None, metadata={"help": "cap on a frame's longer side in pixels (VCIFBench's '720p' = 720)"}
    )

    def __post_init__(self) -> None:
        for name in ("image_min_pixels", "image_max_pixels", "video_min_pixels", "video_max_pixels", "video_total_pixels"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.image_min_pixels > self.image_max_pixels:
            raise ValueError(f"image_min_pixels ({self.image_min_pixels}) exceeds image_max_pixels ({self.image_max_pixels})")
        if self.video_min_pixels > self.video_max_pixels:
            raise ValueError(f"video_min_pixels ({self.video_min_pixels}) exceeds video_max_pixels ({self.video_max_pixels})")
        if self.video_fps <= 0:
            raise ValueError(f"video_fps must be positive, got {self.video_fps}")
        if not 1 <= self.video_min_frames <= self.video_max_frames:
            raise ValueError(
                f"need 1 <= video_min_frames ({self.video_min_frames}) <= video_max_frames ({self.video_max_frames})"
            )
        if self.video_max_frames < FRAME_FACTOR:
            raise ValueError(f"video_max_frames must be at least {FRAME_FACTOR} (one temporal patch)")
        for name in ("image_max_side", "video_max_side"):
            value = getattr(self, name)
            if value is not None and value < 32:
                raise ValueError(f"{name} must be at least 32 pixels, got {value}")


def patch_factor(processor) -> int:
    """Side granularity in pixels: patch size times spatial merge size (32 for Qwen3-VL)."""
    image_processor = processor.image_processor
    return int(image_processor.patch_size * image_processor.merge_size)


def _capped_side(height: int, width: int, max_side: int | None) -> tuple[int, int]:
    if max_side is None or max(height, width) <= max_side:
        return height, width
    scale = max_side / max(height, width)
    return max(1, round(height * scale)), max(1, round(width * scale))


def _fit(height: int, width: int, factor: int, min_pixels: int, max_pixels: int, max_side: int | None):
    from qwen_vl_utils.vision_process import smart_resize

    h, w = _capped_side(height, width, max_side)
    h, w = smart_resize(h, w, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
    if max_side is not None:
        # smart_resize rounds to the nearest multiple of the factor, which can overshoot the cap.
        h, w = (min(h, max(factor, max_side // factor * factor)), min(w, max(factor, max_side // factor * factor)))
    return h, w


def load_image(path_or_image: Any, budget: MediaBudget, factor: int):
    """An RGB ``PIL.Image`` resized like qwen-vl-utils' ``fetch_image`` (sides multiples of ``factor``)."""
    from PIL import Image
    from qwen_vl_utils.vision_process import to_rgb

    image = path_or_image if isinstance(path_or_image, Image.Image) else Image.open(path_or_image)
    image = to_rgb(image)
    h, w = _fit(image.height, image.width, factor, budget.image_min_pixels, budget.image_max_pixels, budget.image_max_side)
    return image.resize((w, h), resample=Image.BICUBIC)


def sample_frame_indices(total_frames: int, video_fps: float, budget: MediaBudget) -> np.ndarray:
    """qwen-vl-utils' ``smart_nframes`` + uniform ``linspace`` sampling of frame indices."""
    from qwen_vl_utils.vision_process import smart_nframes

    if total_frames < FRAME_FACTOR:
        raise ValueError(f"a video needs at least {FRAME_FACTOR} frames, this one has {total_frames}")
    nframes = smart_nframes(
        {"fps": budget.video_fps, "min_frames": budget.video_min_frames, "max_frames": budget.video_max_frames},
        total_frames=total_frames,
        video_fps=video_fps,
    )
    return np.linspace(0, total_frames - 1, nframes).round().astype(int)


@functools.lru_cache(maxsize=32)
def _decode_video(path: str, mtime_ns: int, budget: MediaBudget, factor: int):
    from transformers.video_utils import load_video as hf_load_video

    def indices_fn(metadata, **_):
        return sample_frame_indices(metadata.total_num_frames, metadata.fps, budget)

    frames, metadata = hf_load_video(path, backend="pyav", sample_indices_fn=indices_fn)
    nframes, height, width = frames.shape[0], frames.shape[1], frames.shape[2]
    # qwen-vl-utils: the per-frame ceiling is the smaller of the frame cap and the total budget's share
    # per temporal patch, floored just above the per-frame minimum.
    max_pixels = max(
        min(budget.video_max_pixels, budget.video_total_pixels / nframes * FRAME_FACTOR),
        int(budget.video_min_pixels * 1.05),
    )
    h, w = _fit(height, width, factor, budget.video_min_pixels, int(max_pixels), budget.video_max_side)
    tensor = torch.from_numpy(frames).permute(0, 3, 1, 2).float()
    tensor = torch.nn.functional.interpolate(tensor, size=(h, w), mode="bicubic", antialias=True, align_corners=False)
    resized = tensor.round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()
    metadata.frames_indices = [int(i) for i in metadata.frames_indices]
    return resized, metadata


def load_video(path: str | os.PathLike, budget: MediaBudget, factor: int):
    """Frames ``uint8 (T, H, W, 3)`` sampled and resized like qwen-vl-utils, and their ``VideoMetadata``.

    ``metadata.fps`` is the file's frame rate and ``metadata.frames_indices`` the kept frames, so the
    processor's timestamps (``<t seconds>``) are the frames' real times. Recently decoded clips are
    cached (32 entries) because many pairs share one video.
    """
    path = os.fspath(path)
    frames, metadata = _decode_video(path, os.stat(path).st_mtime_ns, budget, factor)
    return frames.copy(), dataclasses.replace(metadata, frames_indices=list(metadata.frames_indices))


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
