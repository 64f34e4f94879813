"""``ifpo export``: verified pairs out to the tools researchers train with, media included.

    ifpo export PAIRS_DIR --to hf --out DIR [--push-to-hub USER/NAME [--private]]
    ifpo export PAIRS_DIR --to llamafactory --out DIR [--media copy|absolute] [--recipe RECIPE.yaml]
    ifpo export PAIRS_DIR --to ms-swift --out DIR [--media copy|absolute] [--recipe RECIPE.yaml]
    ifpo export ITEMS.jsonl --to verl --out DIR [--media copy|absolute] [--recipe RECIPE.yaml] [--split train]

``PAIRS_DIR`` is an ``ifpo build-pairs`` output (``pairs.jsonl`` + ``manifest.json``, whose
``media_root`` the media paths are relative to). Every layout keeps ``meta`` as columns
(``pair_id``, ``item_id``, ``kind``, ``source``, ``corrupted_constraint``, ``corrupted_type``, ``style``,
``chosen_verdicts``/``rejected_verdicts`` as JSON text, and the whole ``meta`` as JSON text) and writes
the media budget beside the data as each tool spells it (``media_budget.json``):

- ``hf``: a ``datasets`` folder (``data/train-0000N-of-0000M.parquet`` shards + ``README.md`` card) with
  ``images`` as ``List(Image())`` and ``videos`` as ``List(Video())`` whose bytes are *inside* the
  parquet, so ``load_dataset(DIR)`` and ``push_to_hub`` carry the media. Written as a stream: row groups
  of at most ``ROW_GROUP_BYTES`` of media, shards of at most ``--max-shard-mb``, so memory is bounded
  by a row group, not the dataset (``bench/export_memory.py``). ``prompt``/``chosen``/``rejected`` stay
  in TRL's conversational format; ifpo trains on it with ``pairs: hf:DIR``, plain ``trl.DPOTrainer`` on
  its image and text rows (TRL 1.16 reads no video; docs/exports.md).
- ``llamafactory``: ``train.json`` in LLaMA-Factory's sharegpt preference layout (``conversations``
  ending in a human turn, ``chosen``/``rejected`` gpt messages, ``system`` column, ``images``/``videos``
  with ``<image>``/``<video>`` markers in the text) and ``dataset_info.json`` (``formatting: sharegpt``,
  ``ranking: true``); ``llamafactory_args.yaml`` holds ``dataset``, ``dataset_dir``, ``media_dir``,
  ``template: qwen3_vl_nothink`` (LLaMA-Factory 0.9.5's ``qwen3_vl`` is a reasoning template that puts an
  empty think block before every answer; ifpo's chat template never does) and the media budget as
  LLaMA-Factory's own keys (``image_max_pixels``, ``video_fps``, ``video_maxlen``, ...).
- ``ms-swift``: ``train.jsonl`` in ms-swift's standard layout (``messages`` with the system message
  first and the chosen answer last, ``rejected_response``, ``images``/``videos``) and
  ``swift_env.sh`` exporting the budget as the variables ms-swift 4.6 with qwen-vl-utils 0.0.14 reads for
  Qwen3-VL (``IMAGE_MAX_TOKEN_NUM``, ``VIDEO_MAX_TOKEN_NUM``, ``FPS``, ``FPS_MAX_FRAMES``, ``MODEL_SEQ_LEN``
  for the video total; tokens of 32x32 pixels: ms-swift's ``Qwen3VLLoader`` and ``patch_qwen_vl_utils``).

A literal ``<image>``, ``<video>`` or ``<audio>`` in a pair's text is read as a media marker by both tools
(LLaMA-Factory refuses the whole dataset on the count mismatch; ms-swift puts the pair's media there):
such pairs are left out of those two exports, each named in a warning (``MediaMarkerInText``).

``--media copy`` (default) copies each media file once into ``DIR/media/`` (paths relative to
``DIR``: LLaMA-Factory's ``media_dir``; absolute for ms-swift, which resolves paths against the
working directory); ``--media absolute`` points at the originals by absolute path.

The budget comes from ``--recipe`` (a DPO/GRPO recipe: its media keys) or ifpo's defaults. Keys a
tool cannot express (LLaMA-Factory has no total-pixel cap, minimum frame count or side cap; ms-swift
counts pixels in whole 32x32 tokens and has no side cap) are listed under ``not_expressible`` so the
difference is visible, not silent. The card also states the budget the pairs' answers were generated
with, as the pairs' ``manifest.json`` records it.

``verl`` exports items (RL prompts, not pairs) as verl's RL parquet: ``data_builders/rl_export.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

FORMATS = ("hf", "llamafactory", "ms-swift")
META_COLUMNS = ("pair_id", "item_id", "kind", "source", "corrupted_constraint", "corrupted_type", "style")
HF_DATA_FILE = "data/train-00000-of-00001.parquet"  # the name of a one-shard export
HF_SHARD = "data/train-{index:05d}-of-{count:05d}.parquet"
ROW_GROUP_BYTES = 64 << 20  # media bytes per parquet row group: what the HF export holds in memory at once
MAX_SHARD_MB = 500  # a shard closes after this much (the hub's and datasets' usual shard size)
# LLaMA-Factory 0.9.5's template for Qwen3-VL without reasoning (data/template.py: "qwen3_vl_nothink"; its
# "qwen3_vl" is a ReasoningTemplate that adds an empty think block before each answer).
LLAMAFACTORY_TEMPLATE = "qwen3_vl_nothink"
# What both tools read as media markers in text (LLaMA-Factory extras/constants.py *_PLACEHOLDER; ms-swift
# template/base.py special_tokens).
MEDIA_MARKERS = {"image": "<image>", "video": "<video>", "audio": "<audio>"}
# ms-swift's Qwen3VLLoader (model/models/qwen.py) with qwen-vl-utils >= 0.0.14 counts pixels in tokens of
# (patch 16 x merge 2)^2 pixels; qwen-vl-utils 0.0.14 caps a video's total pixels by MODEL_SEQ_LEN * 32^2 * 0.9.
SWIFT_TOKEN_PIXELS = 32 * 32


class ExportError(ValueError):
    """Bad export input: one line naming the file, line and field."""


class MediaMarkerInText(UserWarning):
    """A pair's text holds a literal media marker a tool would take for its media: the pair is left out there."""


# --- reading pairs -----------------------------------------------------------------------------


@dataclasses.dataclass
class Pair:
    where: str  # file:line, for errors
    prompt: list[dict[str, Any]]
    chosen: list[dict[str, Any]]
    rejected: list[dict[str, Any]]
    images: list[Path]  # absolute, resolved inside media_root
    videos: list[Path]
    meta: dict[str, Any]
    pair_id: str


def read_pairs(pairs_dir: str | Path) -> list[Pair]:
    """The pairs of a builder output folder with media resolved (confined to the manifest's media_root)."""
    from ifpo.verifiers.io import FileError, iter_jsonl, read_json_file
    from ifpo.verifiers.media import MediaError, confined_path

    directory = Path(pairs_dir)
    if not directory.is_dir():
        raise ExportError(f"{directory}: not a pairs folder (an `ifpo build-pairs` output)")
    jsonl = directory / "pairs.jsonl"
    if not jsonl.is_file():
        raise ExportError(f"{directory}: no pairs.jsonl")
    manifest: Any = {}
    if (directory / "manifest.json").is_file():
        try:
            manifest = read_json_file(directory / "manifest.json", "pairs manifest")
        except FileError as exc:
            raise ExportError(str(exc)) from None
    root = manifest.get("media_root") if isinstance(manifest, dict) else None
    if root is not None and (not isinstance(root, str) or not root.strip()):
        raise ExportError(f"{directory / 'manifest.json'}: media_root: expected a folder path string, got "
                          f"{type(root).__name__} {root!r:.40}")
    media_root = None if root is None else (Path(root) if Path(root).is_absolute() else directory / root)
    pairs: list[Pair] = []
    seen: dict[str, int] = {}
    try:
        rows = list(iter_jsonl(jsonl))
    except FileError as exc:
        raise ExportError(str(exc)) from None
    for line_no, row, error in rows:
        where = f"{jsonl}:{line_no}"
        if error is not None:
            raise ExportError(f"{where}: {error}")
        if not isinstance(row, dict):
            raise ExportError(f"{where}: expected a JSON object per line, got {type(row).__name__}")
        for key in ("prompt", "chosen", "rejected"):
            if not isinstance(row.get(key), list) or not row[key] or not all(isinstance(m, dict) for m in row[key]):
                raise ExportError(f"{where}: {key}: expected a non-empty list of messages")
        if any(m.get("role") != "assistant" for m in row["chosen"] + row["rejected"]):
            raise ExportError(f"{where}: chosen/rejected: expected assistant turns only")
        if row["prompt"][-1].get("role") != "user":
            raise ExportError(f"{where}: prompt: must end with a user turn")
        media: dict[str, list[Path]] = {}
        for key in ("images", "videos"):
            value = row.get(key) or []
            if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                raise ExportError(f"{where}: {key}: expected a list of media paths")
            if value and media_root is None:
                raise ExportError(f"{where}: {key}: {directory / 'manifest.json'} gives no media_root to resolve them")
            try:
                media[key] = [Path(confined_path(media_root, p)) for p in value]
            except MediaError as exc:
                raise ExportError(f"{where}: {key}: {exc}") from None
            missing = [str(p) for p in media[key] if not p.is_file()]
            if missing:
                raise ExportError(f"{where}: {key}: no such file {missing[0]}")
        for kind, key in (("image", "images"), ("video", "videos")):
            n = sum(1 for m in row["prompt"] if isinstance(m.get("content"), list)
                    for part in m["content"] if isinstance(part, dict) and part.get("type") == kind)
            if n != len(media[key]):
                raise ExportError(f"{where}: the prompt has {n} {kind} placeholder(s) but '{key}' lists {len(media[key])}")
        meta = row.get("meta") or {}
        if not isinstance(meta, dict):
            raise ExportError(f"{where}: meta: expected an object, got {type(meta).__name__}")
        # The same id rule as training (train/pairs.py): item/kind, numbered on repeats.
        base = str(meta.get("pair_id") or f"{meta.get('item_id', len(pairs))}/{meta.get('kind', 'pair')}")
        seen[base] = seen.get(base, 0) + 1
        pair_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
        pairs.append(Pair(where, row["prompt"], row["chosen"], row["rejected"], media["images"], media["videos"],
                          meta, pair_id))
    if not pairs:
        raise ExportError(f"{jsonl}: no pairs")
    return pairs


# --- media budget -------------------------------------------------------------------------------


def read_budget(recipe: str | Path | None):
    """The media budget of a recipe YAML (its MediaBudget keys; other keys ignored) or ifpo's defaults."""
    from ifpo.verifiers.media import MediaBudget

    if recipe is None:
        return MediaBudget()
    from ifpo.verifiers.config import from_mapping, yaml_mapping

    path = Path(recipe)
    if not path.is_file():
        raise ExportError(f"--recipe {path}: no such file")
    names = {f.name for f in dataclasses.fields(MediaBudget)}
    try:
        # The typed helper every settings file goes through: UTF-8, YAML errors with the line, a key
        # given twice, wrong types and NaN named; the recipe's other keys are the trainer's, not ours.
        data = yaml_mapping(path)
        return from_mapping(MediaBudget, {k: v for k, v in data.items() if k in names}, f"{path}: media budget")
    except ValueError as exc:
        raise ExportError(str(exc)) from None


def budget_flags(budget) -> dict[str, Any]:
    """The budget in ifpo's names and as each tool spells it, with what a tool cannot express."""
    ifpo = dataclasses.asdict(budget)
    llamafactory = {
        "image_max_pixels": budget.image_max_pixels,
        "image_min_pixels": budget.image_min_pixels,
        "video_max_pixels": budget.video_max_pixels,
        "video_min_pixels": budget.video_min_pixels,
        "video_fps": budget.video_fps,
        "video_maxlen": budget.video_max_frames,
    }
    # What ms-swift 4.6 reads for Qwen3-VL with qwen-vl-utils 0.0.14: patch_qwen_vl_utils sets only the
    # module constants that version has (IMAGE_/VIDEO_MIN/MAX_TOKEN_NUM, FPS, FPS_MIN/MAX_FRAMES), so
    # VIDEO_TOTAL_PIXELS is ignored; qwen-vl-utils reads MODEL_SEQ_LEN at import for the video total.
    tokens = SWIFT_TOKEN_PIXELS
    swift_env = {
        "IMAGE_MAX_TOKEN_NUM": budget.image_max_pixels // tokens,
        "IMAGE_MIN_TOKEN_NUM": max(1, budget.image_min_pixels // tokens),
        "VIDEO_MAX_TOKEN_NUM": budget.video_max_pixels // tokens,
        "VIDEO_MIN_TOKEN_NUM": max(1, budget.video_min_pixels // tokens),
        "MODEL_SEQ_LEN": -(-budget.video_total_pixels * 10 // (tokens * 9)),  # total = MODEL_SEQ_LEN * 32^2 * 0.9
        "FPS": budget.video_fps,
        "FPS_MIN_FRAMES": budget.video_min_frames,
        "FPS_MAX_FRAMES": budget.video_max_frames,
    }
    inexact = [k for k in ("image_max_pixels", "image_min_pixels", "video_max_pixels", "video_min_pixels")
               if ifpo[k] % tokens]
    not_expressible = {
        "llamafactory": ["video_total_pixels", "video_min_frames"]
        + [k for k in ("image_max_side", "video_max_side") if ifpo[k] is not None],
        "ms-swift": [k for k in ("image_max_side", "video_max_side") if ifpo[k] is not None]
        + [f"{k} (rounded to whole {tokens}-pixel tokens)" for k in inexact],
    }
    return {"ifpo": ifpo, "llamafactory": llamafactory, "ms-swift_env": swift_env, "not_expressible": not_expressible}


# --- conversions ----------------------------------------------------------------------------------


def _text(message: Mapping[str, Any], markers: bool) -> str:
    """A message's text with ``<image>``/``<video>`` where its media parts sit (LLaMA-Factory, ms-swift)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        kind = part.get("type")
        if kind in ("image", "video"):
            if markers:
                parts.append(f"<{kind}>")
        elif kind == "text":
            parts.append(part.get("text") or "")
    return "".join(parts)


def _split_prompt(pair: Pair) -> tuple[str | None, list[dict[str, Any]]]:
    """(system text or None, the other prompt turns)."""
    system = [m for m in pair.prompt if m.get("role") == "system"]
    rest = [m for m in pair.prompt if m.get("role") != "system"]
    if len(system) > 1 or (system and pair.prompt[0].get("role") != "system"):
        raise ExportError(f"{pair.where}: prompt: one system message, first, is all the tools take")
    return (_text(system[0], markers=False) if system else None), rest


def _answer(pair: Pair, key: str) -> str:
    turns = getattr(pair, key)
    if len(turns) != 1:
        raise ExportError(f"{pair.where}: {key}: the tools take one assistant answer, got {len(turns)} turns")
    return _text(turns[0], markers=False)


def meta_columns(pair: Pair) -> dict[str, Any]:
    meta = pair.meta
    return {
        "pair_id": pair.pair_id,
        **{k: (None if meta.get(k) is None else str(meta.get(k))) for k in META_COLUMNS if k != "pair_id"},
        "kind": str(meta.get("kind") or "other"),
        "chosen_verdicts": json.dumps(meta.get("chosen_verdicts") or [], ensure_ascii=False),
        "rejected_verdicts": json.dumps(meta.get("rejected_verdicts") or [], ensure_ascii=False),
        "meta": json.dumps(meta, ensure_ascii=False, sort_keys=True),
    }


class MediaPlacer:
    """Where each media file goes: copied once into ``OUT/media/`` (content-addressed names) or left in place."""

    def __init__(self, out: Path, mode: str):
        if mode not in ("copy", "absolute"):
            raise ExportError(f"--media: expected copy or absolute, got {mode!r}")
        self.out, self.mode = out, mode
        self._placed: dict[Path, Path] = {}

    def place(self, path: Path) -> Path:
        """The absolute path the exported file lives at."""
        if self.mode == "absolute":
            return path.resolve()
        if path not in self._placed:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            target = self.out / "media" / f"{digest}_{path.name}"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            self._placed[path] = target.resolve()
        return self._placed[path]

    def relative(self, path: Path) -> str:
        """The placed file relative to OUT when copied (LLaMA-Factory's media_dir), else absolute."""
        placed = self.place(path)
        return os.path.relpath(placed, self.out.resolve()) if self.mode == "copy" else str(placed)


def marker_problem(pair: Pair, tool: str) -> str | None:
    """Why ``tool`` would misread a literal media marker in this pair's text, or None.

    LLaMA-Factory counts every ``<image>``/``<video>``/``<audio>`` in the turns against the media lists and
    refuses the whole dataset on a mismatch (data/mm_plugin.py ``_validate_messages``); ms-swift replaces the
    first ``<image>``s of a row by its images in order (template/base.py ``_pre_tokenize_images``), so a
    literal one ahead of the real marker takes that image. Neither has an escape for the marker.
    """
    turns = [m for m in pair.prompt if m.get("role") != "system" or tool == "ms-swift"] + pair.chosen + pair.rejected
    for m in turns:
        text = _text(m, markers=False)
        for kind, marker in MEDIA_MARKERS.items():
            if marker not in text:
                continue
            has_media = bool(pair.images if kind == "image" else pair.videos if kind == "video" else [])
            if tool == "llamafactory" or has_media:
                return (f"its {m.get('role')} text holds a literal {marker}, which {tool} reads as a media marker "
                        + ("(a count mismatch stops LLaMA-Factory's whole load)" if tool == "llamafactory"
                           else f"(the pair's {kind} would be placed there)"))
    return None


def to_llamafactory(pair: Pair, placer: MediaPlacer) -> dict[str, Any]:
    system, turns = _split_prompt(pair)
    roles = {"user": "human", "assistant": "gpt"}
    conversations = []
    for m in turns:
        if m.get("role") not in roles:
            raise ExportError(f"{pair.where}: prompt: role {m.get('role')!r} has no sharegpt tag")
        conversations.append({"from": roles[m["role"]], "value": _text(m, markers=True)})
    record = {
        "conversations": conversations,
        "chosen": {"from": "gpt", "value": _answer(pair, "chosen")},
        "rejected": {"from": "gpt", "value": _answer(pair, "rejected")},
        "system": system or "",
        "images": [placer.relative(p) for p in pair.images],
        "videos": [placer.relative(p) for p in pair.videos],
    }
    return {**record, **meta_columns(pair)}


def to_swift(pair: Pair, placer: MediaPlacer) -> dict[str, Any]:
    system, turns = _split_prompt(pair)
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": m["role"], "content": _text(m, markers=True)} for m in turns]
    messages.append({"role": "assistant", "content": _answer(pair, "chosen")})
    record = {
        "messages": messages,
        "rejected_response": _answer(pair, "rejected"),
        "images": [str(placer.place(p)) for p in pair.images],
        "videos": [str(placer.place(p)) for p in pair.videos],
    }
    return {**record, **meta_columns(pair)}


def hf_features():
    from datasets import Features, Image, List, Value, Video

    part = {"type": Value("string"), "text": Value("string")}
    message = {"role": Value("string"), "content": List(part)}
    return Features({
        "prompt": List(message),
        "chosen": List(message),
        "rejected": List(message),
        "images": List(Image()),
        "videos": List(Video()),
        **{k: Value("string") for k in META_COLUMNS},
        "chosen_verdicts": Value("string"),
        "rejected_verdicts": Value("string"),
        "meta": Value("string"),
    })


def _parts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with list content (one Arrow type for the column): a string becomes one text part."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.append({"role": m["role"], "content": [{"type": p.get("type"), "text": p.get("text")} for p in content]})
    return out


def _hf_row(p: Pair) -> dict[str, Any]:
    """One pair as an HF row, its media read now (a row's bytes live only until its row group is written)."""
    return {
        "prompt": _parts(p.prompt),
        "chosen": _parts(p.chosen),
        "rejected": _parts(p.rejected),
        "images": [{"bytes": x.read_bytes(), "path": x.name} for x in p.images],
        "videos": [{"bytes": x.read_bytes(), "path": x.name} for x in p.videos],
        **meta_columns(p),
    }


def to_hf_dataset(pairs: Sequence[Pair]):
    """A ``datasets.Dataset`` with the media bytes inside (Image/Video features); in memory, for small sets and
    tests. :func:`write_hf_shards` is what ``ifpo export --to hf`` uses."""
    from datasets import Dataset

    return Dataset.from_list([_hf_row(p) for p in pairs], features=hf_features())


def write_hf_shards(pairs: Sequence[Pair], out: Path, *, max_shard_bytes: int = MAX_SHARD_MB << 20,
                    row_group_bytes: int = ROW_GROUP_BYTES) -> list[str]:
    """Stream the pairs into ``out/data/train-*.parquet`` shards; returns their paths relative to ``out``.

    Rows are encoded by the datasets features (so ``load_dataset`` decodes Image/Video as usual, the schema
    carries the features) and written a row group at a time, a group closing once its media pass
    ``row_group_bytes``; a shard closes once it passes ``max_shard_bytes``. Peak memory is about one row group,
    whatever the dataset's size. Shards are written under temporary names and renamed when all are done.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    features = hf_features()
    schema = features.arrow_schema
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.glob("train-*.parquet"):  # a previous export's shards would be read with these
        old.unlink()
    temps: list[Path] = []
    writer = None
    shard_bytes = 0
    group: list[dict[str, Any]] = []
    group_bytes = 0

    def flush() -> None:
        nonlocal writer, shard_bytes, group, group_bytes
        if not group:
            return
        if writer is None:
            temps.append(data / f".train-{len(temps):05d}.parquet.tmp")
            writer = pq.ParquetWriter(str(temps[-1]), schema)
        writer.write_table(pa.Table.from_pylist(group, schema=schema))
        shard_bytes += group_bytes
        group, group_bytes = [], 0
        if shard_bytes >= max_shard_bytes:
            writer.close()
            writer, shard_bytes = None, 0

    for pair in pairs:
        row = features.encode_example(_hf_row(pair))
        group.append(row)
        group_bytes += sum(len(m["bytes"] or b"") for key in ("images", "videos") for m in row[key]) + 1
        if group_bytes >= row_group_bytes:
            flush()
    flush()
    if writer is not None:
        writer.close()
    names = []
    for index, temp in enumerate(temps):
        name = HF_SHARD.format(index=index, count=len(temps))
        temp.replace(out / name)
        names.append(name)
    return names


# --- writers --------------------------------------------------------------------------------------


def built_budgets(pairs_dir: str | Path) -> dict[str, Any]:
    """The media budgets the pairs' answers were generated with, by role (``teacher``, ``policy``,
    ``corruptor_llm``), as the pairs' ``manifest.json`` records their generation configs; empty when no model
    that saw media wrote an answer (references and programmatic corruptions)."""
    path = Path(pairs_dir) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    config = manifest.get("config") if isinstance(manifest, dict) else None
    out: dict[str, Any] = {}
    for role in ("teacher", "policy", "corruptor_llm"):
        generation = (config or {}).get(role)
        if isinstance(generation, dict):
            from ifpo.verifiers.media import MediaBudget

            media = generation.get("media") if isinstance(generation.get("media"), dict) else {}
            out[role] = {**dataclasses.asdict(MediaBudget()), **media}
    return out


def _card(name: str, pairs: Sequence[Pair], budget: dict[str, Any], built: Mapping[str, Any] | None = None,
          recipe: str | Path | None = None) -> str:
    from collections import Counter

    kinds = Counter(str(p.meta.get("kind") or "other") for p in pairs)
    header = (
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*\n"
        "tags:\n- dpo\n- preference\n- vision-language\n- ifpo\n---\n"
    )
    lines = [
        f"# {name}",
        "",
        f"{len(pairs)} verified preference pairs exported by `ifpo export` (kinds: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ").",
        "",
        "Columns: `prompt`, `chosen`, `rejected` (TRL conversational format), `images` (Image), `videos` (Video),",
        "`pair_id`, `item_id`, `kind`, `source`, `corrupted_constraint`, `corrupted_type`, `style`,",
        "`chosen_verdicts` / `rejected_verdicts` (JSON: constraint id, type, passed) and `meta` (JSON).",
        "",
    ]
    if built:
        lines += ["Media budget the answers were generated with (the pairs' `manifest.json`, by generating role):",
                  "", "```json", json.dumps(dict(built), indent=2), "```", ""]
    else:
        lines += ["The pairs' `manifest.json` records no model that saw the media while writing answers (reference",
                  "answers and programmatic corruptions), so no generation budget applies to them.", ""]
    lines += [
        "Training media budget written beside the data (`media_budget.json`, "
        + (f"from the recipe `{Path(recipe).name}`" if recipe else "ifpo's defaults: give `--recipe` for yours") + "):",
        "",
        "```json",
        json.dumps(budget["ifpo"], indent=2),
        "```",
        "",
        "Loading: `load_dataset(DIR)` decodes `videos` with torchcodec, which needs the system FFmpeg libraries;",
        "plain `trl.DPOTrainer` (1.16) reads images only, so keep the rows without video for it (docs/exports.md).",
    ]
    return header + "\n".join(lines) + "\n"


def export(pairs_dir: str | Path, to: str, out: str | Path, *, media: str = "copy", recipe: str | Path | None = None,
           name: str = "ifpo_pairs", push_to_hub: str | None = None, private: bool = False,
           max_shard_mb: int = MAX_SHARD_MB) -> dict[str, Any]:
    """Write ``pairs_dir`` in the ``to`` layout under ``out``; return a summary (files, counts, ``left_out``:
    the pairs a tool would misread, each with the reason, also warned as :class:`MediaMarkerInText`)."""
    from ifpo.verifiers.io import write_json_atomic, write_jsonl_atomic, write_text_atomic

    if to not in FORMATS:
        import difflib

        close = difflib.get_close_matches(to, FORMATS, n=1, cutoff=0.4)
        raise ExportError(f"--to: expected one of {', '.join(FORMATS)}, got {to!r}"
                          + (f"; did you mean {close[0]!r}?" if close else ""))
    if push_to_hub and to != "hf":
        raise ExportError("--push-to-hub needs --to hf")
    if not str(name).strip():
        raise ExportError("--name: expected a dataset name, got an empty string")
    if Path(out).resolve() == Path(pairs_dir).resolve():
        raise ExportError(f"--out {out}: is the pairs folder itself; write the export to another folder")
    if max_shard_mb <= 0:
        raise ExportError(f"--max-shard-mb: expected a positive size, got {max_shard_mb}")
    pairs = read_pairs(pairs_dir)
    budget = budget_flags(read_budget(recipe))
    left_out: list[str] = []
    if to in ("llamafactory", "ms-swift"):
        import warnings

        kept = []
        for p in pairs:
            problem = marker_problem(p, to)
            if problem is None:
                kept.append(p)
                continue
            left_out.append(f"{p.where} ({p.pair_id}): {problem}")
            warnings.warn(f"{p.where} ({p.pair_id}): left out of the {to} export: {problem}", MediaMarkerInText,
                          stacklevel=2)
        pairs = kept
        if not pairs:
            raise ExportError(f"{pairs_dir}: every pair holds a literal media marker {to} would misread")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out}: is a file, expected an output folder")
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "media_budget.json", budget)
    files = ["media_budget.json"]
    if to == "hf":
        shards = write_hf_shards(pairs, out, max_shard_bytes=max_shard_mb << 20)
        write_text_atomic(out / "README.md", _card(name, pairs, budget, built_budgets(pairs_dir), recipe))
        files += [*shards, "README.md"]
        if push_to_hub:
            push(out, push_to_hub, private=private)
    elif to == "llamafactory":
        placer = MediaPlacer(out, media)
        records = [to_llamafactory(p, placer) for p in pairs]
        write_json_atomic(out / "train.json", records)
        columns = {"messages": "conversations", "chosen": "chosen", "rejected": "rejected", "system": "system",
                   "images": "images", "videos": "videos"}
        info = {name: {"file_name": "train.json", "formatting": "sharegpt", "ranking": True, "columns": columns}}
        write_json_atomic(out / "dataset_info.json", info)
        import yaml

        media_dir = str(out.resolve()) if media == "copy" else "/"
        args = {"dataset": name, "dataset_dir": str(out.resolve()), "media_dir": media_dir,
                "template": LLAMAFACTORY_TEMPLATE, **budget["llamafactory"]}
        write_text_atomic(out / "llamafactory_args.yaml",
                          "# merge into your LLaMA-Factory training YAML (stage: dpo)\n"
                          + yaml.safe_dump(args, sort_keys=False))
        files += ["train.json", "dataset_info.json", "llamafactory_args.yaml"]
    else:
        placer = MediaPlacer(out, media)
        write_jsonl_atomic(out / "train.jsonl", (to_swift(p, placer) for p in pairs))
        env = "".join(f"export {k}={v}\n" for k, v in budget["ms-swift_env"].items())
        write_text_atomic(out / "swift_env.sh",
                          "# ms-swift 4.6 with qwen-vl-utils 0.0.14, Qwen3-VL: source before `swift rlhf --rlhf_type dpo "
                          f"--model_type qwen3_vl --dataset {(out / 'train.jsonl').resolve()} ...`\n" + env)
        files += ["train.jsonl", "swift_env.sh"]
    if (out / "media").is_dir():
        files.append("media/")
    return {"pairs": len(pairs), "format": to, "out": str(out), "files": files, "left_out": left_out}


def push(out: Path, repo: str, *, private: bool = False) -> None:
    """Push the export folder (parquet shards with the media inside, card, budget file) to the hub as it is on
    disk, shard by shard; the token comes from the environment."""
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise ExportError("--push-to-hub needs huggingface_hub (pip install huggingface_hub)") from None
    api = HfApi()  # HF_TOKEN or the cached login; never a token on the command line
    api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    api.upload_folder(folder_path=str(out), repo_id=repo, repo_type="dataset",
                      allow_patterns=["data/train-*.parquet", "README.md", "media_budget.json"])


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ifpo export", description=__doc__.splitlines()[0])
    parser.add_argument("pairs_dir", help="an `ifpo build-pairs` output folder (pairs.jsonl + manifest.json); "
                        "with --to verl an items JSONL")
    parser.add_argument("--to", required=True, help="hf | llamafactory | ms-swift (pairs) | verl (items: RL prompts)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--media", default="copy", help="copy (into OUT/media, default) or absolute (original paths)")
    parser.add_argument("--recipe", help="recipe YAML whose media keys give the budget (default: ifpo's defaults)")
    parser.add_argument("--name", default="ifpo_pairs", help="dataset name (LLaMA-Factory's dataset key, the card title)")
    parser.add_argument("--push-to-hub", dest="push_to_hub", metavar="REPO", help="also push the hf export to REPO")
    parser.add_argument("--private", action="store_true", help="with --push-to-hub: a private dataset repo")
    parser.add_argument("--split", default="train", help="verl: the parquet file's name (train, test, ...)")
    parser.add_argument("--max-shard-mb", dest="max_shard_mb", type=int, default=MAX_SHARD_MB,
                        help=f"hf: a parquet shard closes after this many MB of media (default {MAX_SHARD_MB})")
    args = parser.parse_args(argv)
    if args.to == "verl":
        # RL prompts, not pairs: the positional argument is an items file (data_builders/rl_export.py)
        from ifpo.data_builders.rl_export import export_verl

        try:
            summary = export_verl(args.pairs_dir, args.out, media=args.media, recipe=args.recipe, split=args.split)
        except ExportError as exc:
            print(f"ifpo export: error: {exc}", file=sys.stderr)
            return 2
        print(f"exported {summary['items']} items as verl RL data to {summary['out']}: {', '.join(summary['files'])}")
        print("verl overrides: " + " ".join(summary["overrides"]))
        return 0
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MediaMarkerInText)  # named below, one line each
            summary = export(args.pairs_dir, args.to, args.out, media=args.media, recipe=args.recipe, name=args.name,
                             push_to_hub=args.push_to_hub, private=args.private, max_shard_mb=args.max_shard_mb)
    except ExportError as exc:
        print(f"ifpo export: error: {exc}", file=sys.stderr)
        return 2
    for line in summary["left_out"]:
        print(f"ifpo export: WARNING: {line}; left out", file=sys.stderr)
    print(f"exported {summary['pairs']} pairs as {summary['format']} to {summary['out']}: {', '.join(summary['files'])}")
    if summary["left_out"]:
        # docs/exit-codes.md: written, but input was left out (named above).
        print(f"ifpo export: exit 1: {len(summary['left_out'])} pair(s) left out (literal media markers, named above)",
              file=sys.stderr)
        return 1
    return 0
