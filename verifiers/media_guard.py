"""The media guard: every sample that has images or videos reaches the model with its vision features.

A Qwen-VL batch carries media in two places that must agree: the ``<|image_pad|>``/``<|video_pad|>``
placeholder tokens of each row, and the media tensors (``pixel_values``/``pixel_values_videos``, one
``*_grid_thw`` row per image or video, ``prod(grid)`` patches each, ``prod(grid) / merge_size**2``
placeholders each). The model itself only checks the batch's *totals*, and only when features are
present: a row whose image was dropped upstream (its placeholder never expanded, or the path list came
back empty) trains or generates on a lone pad-token embedding without a word. :func:`check_media`
walks the rows in order, assigns each row its grid rows, and raises :class:`MediaMismatchError` naming
the sample when

- a row's placeholders cannot be covered exactly by the next grids (count mismatch, grids missing),
- grids or patches are left over after the last row, or the patch count disagrees with the grids,
- a row that should have ``n`` images (or videos) got a different number, including zero.

It costs a pass over the token ids and the grids (no pixels are read). The spans it returns (which grid
and patch rows belong to which row) are what the shared-prompt forward uses to take each prompt's media
once. This module imports nothing else of ifpo (``ifpo.verifiers`` stays self-contained).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MODALITIES = (
    # name, pad token, tensor of patches, grid key
    ("image", "<|image_pad|>", "pixel_values", "image_grid_thw"),
    ("video", "<|video_pad|>", "pixel_values_videos", "video_grid_thw"),
)


class MediaMismatchError(ValueError):
    """A sample's media did not reach the model as its placeholders say (or as its record says)."""


@dataclass(frozen=True)
class RowMedia:
    """Which grid rows ``[grid_start, grid_end)`` and patch rows ``[patch_start, patch_end)`` one row owns."""

    grid_start: int
    grid_end: int
    patch_start: int
    patch_end: int

    @property
    def count(self) -> int:
        return self.grid_end - self.grid_start


def media_pad_ids(processor_or_tokenizer) -> dict[str, int]:
    """``{"image": id, "video": id}`` of the placeholder tokens."""
    tokenizer = getattr(processor_or_tokenizer, "tokenizer", processor_or_tokenizer)
    return {name: int(tokenizer.convert_tokens_to_ids(token)) for name, token, _, _ in MODALITIES}


def check_media(
    batch: dict[str, Any],
    *,
    pad_ids: dict[str, int],
    merge_size: int = 2,
    ids: Sequence[str] | None = None,
    expected: Sequence[tuple[int, int] | None] | None = None,
    what: str = "sample",
) -> dict[str, list[RowMedia]]:
    """Check that each row of ``batch["input_ids"]`` has its media; the per-row spans by modality.

    ``ids[r]`` names row ``r`` in errors; ``expected[r]`` is ``(n_images, n_videos)`` from the sample's own
    record (its media paths), or ``None`` to skip that check for the row. Example::

        spans = check_media(batch, pad_ids=media_pad_ids(processor), ids=pair_ids * 2,
                            expected=[(len(p["images"]), len(p["videos"])) for p in pairs] * 2, what="pair")
    """
    input_ids = batch["input_ids"]
    rows = input_ids.shape[0]
    names = list(ids) if ids is not None else [f"row {r}" for r in range(rows)]
    if len(names) != rows:
        raise MediaMismatchError(f"{len(names)} {what} ids for {rows} rows")
    spans: dict[str, list[RowMedia]] = {}
    merge = merge_size * merge_size
    for index, (name, _token, patches_key, grid_key) in enumerate(MODALITIES):
        pads = (input_ids == pad_ids[name]).sum(dim=1).tolist()
        grid = batch.get(grid_key)
        grid_rows = [] if grid is None else grid.prod(dim=-1).tolist()
        g = patch = 0
        per_row = []
        for r, need in enumerate(pads):
            g0, p0, got = g, patch, 0
            while got < need and g < len(grid_rows):
                got += grid_rows[g] // merge
                patch += grid_rows[g]
                g += 1
            if got != need:
                raise MediaMismatchError(
                    f"{what} {names[r]}: {need} {name} placeholder tokens but the {name} features "
                    f"{'ran out' if got < need else 'do not end there'} ({got} tokens from {grid_key} rows "
                    f"{g0}..{g - 1}); the {name} was dropped or truncated before the model"
                )
            per_row.append(RowMedia(g0, g, p0, patch))
        if g != len(grid_rows):
            raise MediaMismatchError(
                f"{len(grid_rows) - g} {name}(s) in {grid_key} have no placeholder tokens in any row "
                f"(rows: {', '.join(map(str, names))})"
            )
        patches = batch.get(patches_key)
        have = 0 if patches is None else int(patches.shape[0])
        if have != patch:
            raise MediaMismatchError(
                f"{patches_key} has {have} patches but {grid_key} describes {patch} "
                f"(rows: {', '.join(map(str, names))})"
            )
        if expected is not None:
            for r, want in enumerate(expected):
                if want is not None and per_row[r].count != int(want[index]):
                    raise MediaMismatchError(
                        f"{what} {names[r]}: its record has {int(want[index])} {name}(s) but "
                        f"{per_row[r].count} reached the model; the {name} vanished between the data and the forward"
                    )
        spans[name] = per_row
    return spans


__all__ = ["MODALITIES", "MediaMismatchError", "RowMedia", "check_media", "media_pad_ids"]
