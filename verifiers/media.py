"""Media loading shared by training, generation and judging: images and videos like qwen-vl-utils.

One policy decides which frames of a video a model sees and at what size, wherever the model runs:
the DPO/GRPO collators (``train/vision.py``), in-process generation for policy answers and
checkpoint evaluation (``verifiers/generation.py``), and OpenAI-compatible endpoints. Frames are
decoded with PyAV through ``transformers.video_utils.load_video`` (the Qwen3-VL video processor
cannot open an mp4 path without torchcodec, see ``train/tiny_model.py``), sampled with
qwen-vl-utils' ``smart_nframes`` and resized with its ``smart_resize`` under a :class:`MediaBudget`.
Callers hand the processor the frames with their ``VideoMetadata`` and ``do_sample_frames=False`` /
``do_resize=False``, so timestamps are the frames' real times and token counts match the grid.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field
from typing import Any


class MediaError(ValueError):
    """A media file that cannot be used: outside the dataset root, missing, or not decodable."""


def media_path_problem(root: str | os.PathLike, rel: Any) -> str | None:
    """Why ``rel`` may not be read as media under ``root`` (``None`` when it may).

    Media paths come from other people's files: a path must be relative, must not climb out with
    ``..``, and must resolve, symlinks followed, to a file inside the real dataset root; otherwise
    a crafted item could make a judge endpoint or a training run read any file of the machine.
    """
    from pathlib import PurePosixPath, PureWindowsPath

    if not isinstance(rel, str) or not rel.strip():
        return f"expected a non-empty relative path string, got {type(rel).__name__}"
    if "\x00" in rel:  # no file name holds one; os calls would raise on it, failing the whole file
        return f"path {rel!r} holds a NUL character"
    real_root = os.path.realpath(root)
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        return f"path {rel!r} is absolute; expected a path relative to the dataset root {real_root!r}"
    depth = 0
    for part in PurePosixPath(rel.replace("\\", "/")).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return f"path {rel!r} escapes the dataset root {real_root!r}"
    real = os.path.realpath(os.path.join(real_root, rel))
    if os.path.commonpath([real, real_root]) != real_root:
        return f"path {rel!r} resolves outside the dataset root {real_root!r} (a symlink to {real!r})"
    return None


def confined_path(root: str | os.PathLike, rel: Any) -> str:
    """The real path of media ``rel`` under ``root``; :class:`MediaError` when outside it or missing."""
    problem = media_path_problem(root, rel)
    if problem:
        raise MediaError(problem)
    real = os.path.realpath(os.path.join(os.path.realpath(root), rel))
    if not os.path.isfile(real):
        raise MediaError(missing_media_message(root, rel, real))
    return real


def missing_media_message(root: str | os.PathLike, rel: str, real: str) -> str:
    """Why media ``rel`` (real path ``real``) is not a file to read: missing, a folder, a fifo, ..."""
    where = f"under the dataset root {os.path.realpath(root)!r}"
    if os.path.isdir(real):
        return f"media path {rel!r} is a folder {where}, expected a media file"
    if os.path.exists(real):
        return f"media path {rel!r} {where} is not a regular file (a fifo, socket or device)"
    hint = ("; URLs are not fetched: put the file under the dataset root" if "://" in rel
            else "; write '/' as the separator" if "\\" in rel else "")
    return f"media file {rel!r} not found {where}{hint}"


def probe_media(path: str | os.PathLike, kind: str) -> str | None:
    """Why the image/video at ``path`` cannot be decoded (``None``: it can); reads a header and one frame.

    Cheap enough to run once per file before a long job, so one corrupt file is named up front
    instead of failing a training step or an evaluation chunk hours in.
    """
    try:
        if kind == "images":
            from PIL import Image

            with Image.open(path) as image:
                image.load()
        else:
            import av

            with av.open(os.fspath(path)) as container:
                if not container.streams.video:
                    return "no video stream"
                next(container.decode(video=0))
    except StopIteration:
        return "no decodable frame"
    except Exception as exc:  # PIL and PyAV raise their own types for corrupt files
        return f"cannot be decoded ({type(exc).__name__}: {exc})"
    return None


# qwen-vl-utils groups frames in pairs (the temporal patch); frame counts are kept even.
FRAME_FACTOR = 2


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

    if isinstance(path_or_image, Image.Image):
        image = path_or_image
    else:
        try:
            image = Image.open(path_or_image)
            image.load()
        except Exception as exc:  # PIL raises its own types on corrupt, empty or non-image files
            raise MediaError(f"image {os.fspath(path_or_image)!r} cannot be decoded ({type(exc).__name__}: {exc})") from None
    image = to_rgb(image)
    h, w = _fit(image.height, image.width, factor, budget.image_min_pixels, budget.image_max_pixels, budget.image_max_side)
    return image.resize((w, h), resample=Image.BICUBIC)


def sample_frame_indices(total_frames: int, video_fps: float, budget: MediaBudget):
    """qwen-vl-utils' ``smart_nframes`` + uniform ``linspace`` sampling of frame indices (a numpy array)."""
    import numpy as np
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
    import torch
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
    try:
        frames, metadata = _decode_video(path, os.stat(path).st_mtime_ns, budget, factor)
    except MediaError:
        raise
    except Exception as exc:
        # PyAV, transformers and numpy raise their own types on a corrupt, empty or frame-less file (a
        # 0-frame mp4: IndexError); callers (generators, the judge) handle one MediaError per item.
        raise MediaError(f"video {path!r} cannot be decoded ({type(exc).__name__}: {exc})") from None
    return frames.copy(), dataclasses.replace(metadata, frames_indices=list(metadata.frames_indices))
