"""Token lengths of every pair, vision tokens included, checked before training.

Qwen3-VL raises "Image features and image tokens do not match" when truncation cuts inside vision
tokens, and TRL truncates at ``max_length`` (TRL #5023, #5284, ...). ifpo never truncates: each pair is
run through the same collator as training (so timestamps, ``<|video_pad|>`` expansion and the template
are counted exactly), the longer of prompt+chosen and prompt+rejected is compared with
``max_length``, and the pairs over it are listed and then dropped or reported as an error.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ifpo.train.vision import count_media_tokens


@dataclass(frozen=True)
class PairLength:
    """Token counts of one pair (``chosen``/``rejected`` include the prompt)."""

    pair_id: str
    prompt: int
    chosen: int
    rejected: int
    image_tokens: int
    video_tokens: int

    @property
    def longest(self) -> int:
        return max(self.chosen, self.rejected)


class OverlongPairsError(ValueError):
    """Pairs longer than ``max_length`` with ``overlong: error``."""


def _measure_one(example: dict[str, Any], collator) -> PairLength:
    batch = collator([dict(example)])
    lengths = batch["attention_mask"].sum(dim=1).tolist()
    completion = batch["completion_mask"].sum(dim=1).tolist()
    media = count_media_tokens(batch["input_ids"][0], collator.processor)
    return PairLength(
        pair_id=example["pair_id"],
        prompt=int(lengths[0] - completion[0]),
        chosen=int(lengths[0]),
        rejected=int(lengths[1]),
        image_tokens=media["image"],
        video_tokens=media["video"],
    )


def measure_lengths(dataset, collator) -> list[PairLength]:
    """Lengths of every pair in ``dataset``, in dataset order.

    Under a distributed launch each rank measures a slice and the results are gathered, so the work
    is split rather than repeated.
    """
    from accelerate import PartialState
    from accelerate.utils import gather_object

    state = PartialState()
    indices = list(range(len(dataset)))
    with state.split_between_processes(indices) as mine:
        measured = [(i, _measure_one(dataset[i], collator)) for i in mine]
    if state.num_processes > 1:
        measured = gather_object(measured)
    return [length for _, length in sorted(measured, key=lambda pair: pair[0])]


def summarise(lengths: list[PairLength]) -> dict[str, Any]:
    """Max / mean / p95 of the longest sequence per pair, and mean vision tokens."""
    longest = sorted(length.longest for length in lengths)
    n = len(longest)
    return {
        "pairs": n,
        "max": longest[-1] if n else 0,
        "mean": round(sum(longest) / n, 1) if n else 0,
        "p95": longest[min(n - 1, int(0.95 * n))] if n else 0,
        "mean_vision_tokens": round(sum(x.image_tokens + x.video_tokens for x in lengths) / n, 1) if n else 0,
    }


def check_lengths(lengths: list[PairLength], max_length: int | None, overlong: str,
                  report_path: str | Path | None = None) -> list[str]:
    """The ids of pairs over ``max_length``; raises :class:`OverlongPairsError` when ``overlong == 'error'``.

    ``report_path`` receives every pair's lengths, the summary and the over-long pairs as JSON.
    """
    over = [x for x in lengths if max_length is not None and x.longest > max_length]
    if report_path is not None:
        report = {
            "max_length": max_length,
            "overlong": overlong,
            "summary": summarise(lengths),
            "over_max_length": [asdict(x) for x in over],
            "pairs": [asdict(x) for x in lengths],
        }
        Path(report_path).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if over and overlong == "error":
        shown = ", ".join(f"{x.pair_id} ({x.longest} tokens, {x.image_tokens + x.video_tokens} vision)" for x in over[:10])
        more = f" and {len(over) - 10} more" if len(over) > 10 else ""
        raise OverlongPairsError(
            f"{len(over)} pair(s) exceed max_length {max_length}: {shown}{more}. Raise max_length, lower the media "
            f"budgets (video_fps, video_max_pixels, image_max_pixels) or set overlong: drop; pairs are never truncated"
        )
    return [x.pair_id for x in over]
