"""``ifpo export ITEMS.jsonl --to verl --out DIR``: items as verl's RL dataset, scored by ifpo's checklist.

verl 0.9.1 (PyPI wheel) reads RL data with ``verl/utils/dataset/rl_dataset.py`` (``RLHFDataset``): a parquet
file whose rows have ``data_source``, ``prompt`` (chat messages; ``<image>`` / ``<video>`` placeholders in a
message's text are replaced, in order, by the entries of the row's ``images`` / ``videos`` columns, each a
dict handed to qwen-vl-utils as ``{"type": "image", **entry}``), ``ability``, ``reward_model`` and
``extra_info``. Its reward manager (``verl/experimental/reward_loop/reward_manager/naive.py``) passes
``reward_model["ground_truth"]`` and ``extra_info`` to the custom ``compute_score``: here
``ifpo.verifiers.plugins.ifpo_verl``.

Each row: ``data_source`` ``ifpo/<item source>``; ``prompt``: the item's system message (if any) and the user
turn (videos, then images, then the instruction, as ifpo's own generation orders them); ``images`` /
``videos``: ``{"image": PATH}`` / ``{"video": PATH}`` with the media budget as qwen-vl-utils' per-entry keys
(``min_pixels``, ``max_pixels``; ``fps``, ``min_frames``, ``max_frames``, ``total_pixels``); ``reward_model``:
``{"style": "rule", "ground_truth": <the item as JSON text>}`` (the reward needs no items file);
``extra_info``: ``{"item_id", "index", "split", "source"}``. ``--media copy`` copies media into
``DIR/media/`` and writes absolute paths; ``--media absolute`` points at the originals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VERL_REWARD_OVERRIDES = (
    "reward.custom_reward_function.path=pkg://ifpo.verifiers.plugins.ifpo_verl",
    "reward.custom_reward_function.name=compute_score",
)


def _budget_entries(budget) -> tuple[dict[str, Any], dict[str, Any]]:
    """qwen-vl-utils' per-entry keys for an image and a video (its fetch_image / fetch_video read them)."""
    image = {"min_pixels": budget.image_min_pixels, "max_pixels": budget.image_max_pixels}
    video = {"min_pixels": budget.video_min_pixels, "max_pixels": budget.video_max_pixels,
             "total_pixels": budget.video_total_pixels, "fps": float(budget.video_fps),
             "min_frames": budget.video_min_frames, "max_frames": budget.video_max_frames}
    return image, video


def verl_row(item: dict[str, Any], index: int, split: str, place, image_keys: dict, video_keys: dict) -> dict:
    from ifpo.verifiers.generation import item_messages

    messages = []
    for message in item_messages(item):
        text = "".join(f"<{part['type']}>" if part["type"] in ("image", "video") else part["text"]
                       for part in message["content"])
        messages.append({"role": message["role"], "content": text})
    media = item.get("media") or {}
    return {
        "data_source": f"ifpo/{item['source']}",
        "prompt": messages,
        "images": [{"image": place(p), **image_keys} for p in media.get("images") or []],
        "videos": [{"video": place(p), **video_keys} for p in media.get("videos") or []],
        "ability": "instruction_following",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(item, ensure_ascii=False, sort_keys=True)},
        "extra_info": {"item_id": str(item["id"]), "index": index, "split": split, "source": str(item["source"])},
    }


def export_verl(items_path: str | Path, out: str | Path, *, media: str = "copy", recipe: str | Path | None = None,
                split: str = "train", root: str | Path | None = None) -> dict[str, Any]:
    """Write ``OUT/<split>.parquet``; returns a summary (rows, files, the verl overrides to use)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from ifpo.data_builders.export import ExportError, MediaPlacer, read_budget
    from ifpo.verifiers.schema import load_items

    items_path, out = Path(items_path), Path(out)
    loaded = load_items(items_path, root=root)
    if loaded.errors:
        raise ExportError("\n".join(str(e) for e in loaded.errors[:20]))
    if not loaded.items:
        raise ExportError(f"{items_path}: no items")
    if not split or "/" in split:
        raise ExportError(f"--split: expected a file name stem such as train or test, got {split!r}")
    media_root = Path(root) if root is not None else items_path.parent
    out.mkdir(parents=True, exist_ok=True)
    placer = MediaPlacer(out, media)
    image_keys, video_keys = _budget_entries(read_budget(recipe))

    def place(rel: str) -> str:
        return str(placer.place(media_root / rel))

    rows = [verl_row(item, i, split, place, image_keys, video_keys) for i, item in enumerate(loaded.items)]
    # One schema for every row: a row without images still has an empty list of the image struct.
    image_type = pa.struct([("image", pa.string()), *((k, pa.int64()) for k in image_keys)])
    video_type = pa.struct([("video", pa.string()), *((k, pa.float64() if k == "fps" else pa.int64())
                                                      for k in video_keys)])
    schema = pa.schema([
        ("data_source", pa.string()),
        ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("images", pa.list_(image_type)),
        ("videos", pa.list_(video_type)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", pa.struct([("item_id", pa.string()), ("index", pa.int64()), ("split", pa.string()),
                                  ("source", pa.string())])),
    ])
    target = out / f"{split}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), target)
    return {"items": len(rows), "format": "verl", "out": str(out), "files": [target.name],
            "overrides": [f"data.{split}_files={target.resolve()}", *VERL_REWARD_OVERRIDES]}
