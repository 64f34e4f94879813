"""Loading preference pairs for DPO: a builder output directory, a datasets hub dataset, or the sample stand-in.

A pairs directory ``DIR/`` holds ``pairs.jsonl`` (or a ``save_to_disk`` dataset in ``DIR/dataset/``)
and ``manifest.json`` with ``media_root`` (absolute, or relative to ``DIR``). Each pair is TRL's
conversational preference format plus ``images``/``videos`` (paths relative to ``media_root``) and
``meta`` (``item_id``, ``kind``, verdicts, ...). The loaded ``datasets.Dataset`` has the columns
``prompt``, ``chosen``, ``rejected``, ``images``, ``videos`` (absolute paths), ``pair_id`` and ``kind``;
every pair is checked (roles, one media file per placeholder, files exist) with errors naming the
file, line and pair.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PairSet:
    """Loaded pairs with where they came from and a fingerprint of their content (media bytes included)."""

    dataset: Any  # datasets.Dataset
    source: str
    directory: Path | None  # the pairs directory, where the reference log-prob cache goes
    fingerprint: str
    # Pairs left out because a media file does not decode: one "where: pair: media: why" line each.
    left_out: list[str] = field(default_factory=list)


class PairsError(ValueError):
    """Bad pair data: reported as one line naming the file, line and pair."""


def _placeholders(messages: list[dict[str, Any]], kind: str) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == kind
    )


def _check_pair(pair: dict[str, Any], where: str) -> None:
    for key in ("prompt", "chosen", "rejected"):
        if not isinstance(pair.get(key), list) or not pair[key]:
            raise PairsError(f"{where}: {key}: expected a non-empty list of messages")
        for i, message in enumerate(pair[key]):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise PairsError(f"{where}: {key}[{i}]: expected a message object with a 'role', "
                                 f"got {type(message).__name__}")
            if not isinstance(message.get("content"), (str, list)):
                raise PairsError(f"{where}: {key}[{i}].content: expected a string or a list of parts")
    for key in ("images", "videos"):
        if not isinstance(pair[key], list):
            raise PairsError(f"{where}: {key}: expected a list of media paths, got {type(pair[key]).__name__}")
    if pair["prompt"][-1].get("role") != "user":
        raise PairsError(f"{where}: the prompt must end with a user turn, got {pair['prompt'][-1].get('role')!r}")
    for key in ("chosen", "rejected"):
        if any(m.get("role") != "assistant" for m in pair[key]):
            raise PairsError(f"{where}: '{key}' must hold assistant turns only")
    for kind, key in (("image", "images"), ("video", "videos")):
        n = _placeholders(pair["prompt"], kind)
        if n != len(pair[key]):
            raise PairsError(f"{where}: the prompt has {n} {kind} placeholder(s) but '{key}' lists {len(pair[key])}")


def _normalise(pair: dict[str, Any], index: int, where: str, media_root: Path | None, seen: dict[str, int]):
    if not isinstance(pair, dict):
        raise PairsError(f"{where}: expected a JSON object per line, got {type(pair).__name__}")
    pair = dict(pair)
    for key in ("images", "videos"):
        value = pair.get(key) or []
        pair[key] = value if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else value
        if isinstance(pair[key], str):
            raise PairsError(f"{where}: {key}: expected a list of media paths, got a string")
    _check_pair(pair, where)
    meta = pair.get("meta") or {}
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except (ValueError, RecursionError):
            raise PairsError(f"{where}: meta: expected an object (or its JSON text)") from None
    if not isinstance(meta, dict):
        raise PairsError(f"{where}: meta: expected an object, got {type(meta).__name__}")
    base = str(meta.get("pair_id") or f"{meta.get('item_id', index)}/{meta.get('kind', 'pair')}")
    # Builders may emit several pairs per item and kind; numbering repeats keeps ids unique and stable.
    seen[base] = seen.get(base, 0) + 1
    pair_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
    resolved = {}
    for key in ("images", "videos"):
        paths = []
        for path in pair[key]:
            if isinstance(path, str):
                from ifpo.verifiers.media import MediaError, confined_path

                # Pairs come from other people too: a path is relative to media_root and resolves
                # (symlinks followed) inside it, or the pair is refused; never an absolute path.
                if media_root is None:
                    raise PairsError(f"{where}: {key[:-1]} {path!r}: no media_root to resolve it against "
                                     "(give media_root in the recipe or the pairs manifest)")
                try:
                    full = confined_path(media_root, path)
                except MediaError as exc:
                    raise PairsError(f"{where}: {key}: {exc}") from None
                paths.append(full)
            else:
                paths.append(path)  # an already decoded image from a datasets Image column
        resolved[key] = paths
    return {
        "prompt": pair["prompt"],
        "chosen": pair["chosen"],
        "rejected": pair["rejected"],
        "images": resolved["images"],
        "videos": resolved["videos"],
        "pair_id": pair_id,
        "kind": str(meta.get("kind") or "other"),
    }


def _fingerprint(rows: list[dict[str, Any]]) -> str:
    digest = hashlib.sha256()
    media_hashes: dict[str, str] = {}
    for row in rows:
        digest.update(json.dumps({k: row[k] for k in ("prompt", "chosen", "rejected", "pair_id")}, sort_keys=True,
                                 default=str).encode())
        for path in row["images"] + row["videos"]:
            if not isinstance(path, str):
                digest.update(repr(path).encode())
                continue
            if path not in media_hashes:
                media_hashes[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            digest.update(media_hashes[path].encode())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _read_directory(directory: Path, media_root_override: str | None) -> tuple[list[dict], Path | None, str]:
    from ifpo.verifiers.io import FileError, iter_jsonl, read_json_file

    manifest_path = directory / "manifest.json"
    manifest: Any = {}
    if manifest_path.is_file():
        try:
            manifest = read_json_file(manifest_path, "pairs manifest")
        except FileError as exc:
            raise PairsError(str(exc)) from None
        if not isinstance(manifest, dict):
            raise PairsError(f"{manifest_path}: expected a JSON object, got {type(manifest).__name__}")
    root = media_root_override or manifest.get("media_root")
    if root is not None and not isinstance(root, str):
        raise PairsError(f"{manifest_path}: media_root: expected a path string, got {type(root).__name__}")
    media_root = None if root is None else (Path(root) if Path(root).is_absolute() else directory / root)
    jsonl = directory / "pairs.jsonl"
    if (directory / "dataset").is_dir():
        # dataset/ is a copy of pairs.jsonl made by the builder; an edited pairs.jsonl makes it stale,
        # and training on the stale copy would silently use other data than the file says.
        if jsonl.is_file():
            recorded = manifest.get("pairs_sha256")
            if recorded is None or recorded != _sha256(jsonl):
                raise PairsError(
                    f"{directory / 'dataset'} is stale: pairs.jsonl does not match the pairs_sha256 the manifest "
                    "recorded when dataset/ was written; delete dataset/ to train on pairs.jsonl, or rebuild"
                )
        from datasets import load_from_disk

        rows = [dict(r) for r in load_from_disk(str(directory / "dataset"))]
        if isinstance(manifest.get("pairs"), int) and manifest["pairs"] != len(rows):
            raise PairsError(f"{directory / 'dataset'} holds {len(rows)} pairs but the manifest says "
                             f"{manifest['pairs']}: stale or partial; delete it or rebuild")
        return rows, media_root, str(directory / "dataset")
    if not jsonl.is_file():
        raise PairsError(f"{directory}: neither pairs.jsonl nor dataset/ found")
    rows = []
    errors = []
    try:
        for line_no, row, error in iter_jsonl(jsonl):
            if error is None and not isinstance(row, dict):
                error = f"expected a JSON object per line, got {type(row).__name__}"
            if error is not None:
                errors.append(f"{jsonl}:{line_no}: {error}")
                continue
            row["_where"] = f"{jsonl}:{line_no}"
            rows.append(row)
    except FileError as exc:
        raise PairsError(str(exc)) from None
    if errors:
        # Training data is refused whole: a run on the readable part would train on other data
        # than the file holds, and say nothing.
        shown = "; ".join(errors[:5]) + (f"; ... and {len(errors) - 5} more" if len(errors) > 5 else "")
        raise PairsError(f"{len(errors)} unreadable line(s) in {jsonl} (fix or remove them): {shown}")
    return rows, media_root, str(jsonl)


def _materialise_media(dataset, cache_dir: Path) -> tuple[list[dict[str, Any]], Path | None]:
    """Rows of ``dataset`` with media stored *inside* it (``Image``/``Video`` features, as ``ifpo export --to hf``
    writes them) written once to ``cache_dir/<sha256>.<ext>`` and replaced by those names.

    The features are read undecoded: the collator loads media from files with the recipe's budget
    (qwen-vl-utils' policy), and file content hashes keep the pairs fingerprint (and so the reference
    log-prob cache) stable across loads. Returns the rows and ``cache_dir`` when any media were written.
    """
    from datasets import Image, List, Sequence, Video

    cast = {}
    for key in ("images", "videos"):
        feature = dataset.features.get(key)
        inner = getattr(feature, "feature", None)
        if isinstance(feature, (List, Sequence)) and isinstance(inner, (Image, Video)):
            cast[key] = List(type(inner)(decode=False))
    for key, feature in cast.items():
        dataset = dataset.cast_column(key, feature)
    rows = [dict(r) for r in dataset]
    if not cast:
        return rows, None
    from accelerate import PartialState

    written = False
    with PartialState().main_process_first():
        for row in rows:
            for key in cast:
                names = []
                for entry in row.get(key) or []:
                    data = entry.get("bytes") if isinstance(entry, dict) else None
                    if data is None:
                        raise PairsError(f"pair {row.get('pair_id', '?')}: {key}: a media entry without bytes "
                                         f"(path {entry.get('path') if isinstance(entry, dict) else entry!r})")
                    suffix = Path(entry.get("path") or "").suffix or (".mp4" if key == "videos" else ".png")
                    name = hashlib.sha256(data).hexdigest() + suffix
                    target = cache_dir / name
                    if not target.is_file():
                        cache_dir.mkdir(parents=True, exist_ok=True)
                        tmp = target.with_name(f"{name}.{os.getpid()}.tmp")
                        tmp.write_bytes(data)
                        tmp.replace(target)
                    names.append(name)
                    written = True
                row[key] = names
    return rows, (cache_dir if written else None)


def load_pairs(spec: str, *, output_dir: str | Path, split: str = "train", media_root: str | None = None,
               max_pairs: int | None = None) -> PairSet:
    """Load, check and normalise the pairs named by ``spec`` (see ``DPORecipe.pairs``).

    Example::

        pairs = load_pairs("runs/pairs/vcif540", output_dir="runs/dpo")
        pairs.dataset[0]["pair_id"], pairs.fingerprint
    """
    from datasets import Dataset

    directory: Path | None
    if spec == "sample":
        from accelerate import PartialState
        from ifpo.train.sample_pairs import build_sample_pairs

        directory = Path(output_dir) / "sample_pairs"
        with PartialState().main_process_first():
            build_sample_pairs(directory)
        rows, root, source = _read_directory(directory, media_root)
    elif spec.startswith("hf:"):
        from datasets import load_dataset

        name = spec[3:]
        dataset = load_dataset(name, split=split)
        rows, cache = _materialise_media(dataset, Path(output_dir) / "hf_media")
        if cache and media_root:
            raise PairsError(f"{spec}: its media are inside the dataset (Image/Video features); drop media_root")
        root, source, directory = (Path(media_root) if media_root else cache), spec, None
    else:
        directory = Path(spec)
        if not directory.is_dir():
            raise PairsError(f"pairs: {spec!r} is neither a directory, 'sample' nor 'hf:NAME'")
        rows, root, source = _read_directory(directory, media_root)
    if max_pairs is not None:
        rows = rows[:max_pairs]
    if not rows:
        raise PairsError(f"{source}: no pairs")
    seen: dict[str, int] = {}
    wheres = [row.pop("_where", f"{source} pair {i}") for i, row in enumerate(rows)]
    normalised = [_normalise(row, i, wheres[i], root, seen) for i, row in enumerate(rows)]
    kept, left_out = _decodable(normalised, wheres)
    if not kept:
        raise PairsError(f"{source}: no pair has decodable media ({left_out[0]}{' ...' if len(left_out) > 1 else ''})")
    return PairSet(
        dataset=Dataset.from_list(kept),
        source=source,
        directory=directory,
        fingerprint=_fingerprint(kept),
        left_out=left_out,
    )


def _decodable(rows: list[dict[str, Any]], wheres: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The pairs whose media files all decode, and a line naming each pair left out and why.

    A corrupt image or video fails its pair, not the run: without this check it would stop
    training at the first batch holding it (collation decodes), hours in on a large set. Each
    distinct file is probed once (a header and one frame), so the cost is one decode per file.
    """
    from ifpo.verifiers.media import probe_media

    verdicts: dict[str, str | None] = {}
    kept, left_out = [], []
    for row, where in zip(rows, wheres):
        problem = None
        for key in ("images", "videos"):
            for i, path in enumerate(row[key]):
                if not isinstance(path, str):
                    continue  # an image the datasets library already decoded
                if path not in verdicts:
                    verdicts[path] = probe_media(path, key)
                if verdicts[path] and problem is None:
                    problem = f"{key}[{i}]: {path!r} {verdicts[path]}"
        if problem:
            left_out.append(f"{where}: pair {row['pair_id']!r}: {problem}")
        else:
            kept.append(row)
    return kept, left_out


def writable(directory: Path) -> bool:
    """Whether ``directory`` (created if missing) accepts new files."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)
