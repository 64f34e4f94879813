"""Shared by the DPO and shared-prompt tests (their fixtures are in conftest.py): the tiny media budget
and ``pick``, a fixed mix of video, image and text pairs from the stand-in sample pairs.
"""

from __future__ import annotations

from ifpo.train.vision import MediaBudget

TINY_BUDGET = MediaBudget(image_min_pixels=4096, image_max_pixels=16384, video_min_pixels=4096,
                          video_max_pixels=16384, video_fps=2.0, video_max_frames=16)


def pick(pairs, n_video=0, n_image=0, n_text=0):
    rows = [pairs.dataset[i] for i in range(len(pairs.dataset))]
    videos = [r for r in rows if r["videos"]][:n_video]
    images = [r for r in rows if r["images"] and not r["videos"]][:n_image]
    texts = [r for r in rows if not r["images"] and not r["videos"]][:n_text]
    return videos + images + texts
