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
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class PairSet:
    """Loaded pairs with where they came from and a fingerprint of their content (media bytes included)."""

    dataset: Any  # datasets.Dataset
    source: str
    directory: Path | None  # the pairs directory, where the reference log-prob cache goes
    fingerprint: str


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
            raise PairsError(f"{where}: '{key}' must be a non-empty list of messages")
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
    pair = dict(pair)
    pair["images"] = list(pair.get("images") or [])
    pair["videos"] = list(pair.get("videos") or [])
    _check_pair(pair, where)
    meta = pair.get("meta") or {}
    if isinstance(meta, str):
        meta = json.loads(meta)
    base = str(meta.get("pair_id") or f"{meta.get('item_id', index)}/{meta.get('kind', 'pair')}")
    # Builders may emit several pairs per item and kind; numbering repeats keeps ids unique and stable.
    seen[base] = seen.get(base, 0) + 1
    pair_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
    resolved = {}
    for key in ("images", "videos"):
        paths = []
        for path in pair[key]:
            if isinstance(path, str):
                if Path(path).is_absolute() or media_root is None:
                    full = Path(path)
                else:
                    full = media_root / path
                if not full.is_file():
                    raise PairsError(f"{where}: {key[:-1]} {path!r} not found (looked at {full})")
                paths.append(str(full))
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


def _read_directory(directory: Path, media_root_override: str | None) -> tuple[list[dict], Path | None, str]:
    manifest_path = directory / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    root = media_root_override or manifest.get("media_root")
    media_root = None if root is None else (Path(root) if Path(root).is_absolute() else directory / root)
    if (directory / "dataset").is_dir():
        from datasets import load_from_disk

        rows = [dict(r) for r in load_from_disk(str(directory / "dataset"))]
        return rows, media_root, str(directory / "dataset")
    jsonl = directory / "pairs.jsonl"
    if not jsonl.is_file():
        raise PairsError(f"{directory}: neither pairs.jsonl nor dataset/ found")
    rows = []
    for line_no, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PairsError(f"{jsonl}:{line_no}: not JSON ({exc.msg})") from exc
        row["_where"] = f"{jsonl}:{line_no}"
        rows.append(row)
    return rows, media_root, str(jsonl)


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
        rows = [dict(r) for r in load_dataset(name, split=split)]
        root, source, directory = (Path(media_root) if media_root else None), spec, None
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
    normalised = [
        _normalise(row, i, row.pop("_where", f"{source} pair {i}"), root, seen) for i, row in enumerate(rows)
    ]
    return PairSet(
        dataset=Dataset.from_list(normalised),
        source=source,
        directory=directory,
        fingerprint=_fingerprint(normalised),
    )


def writable(directory: Path) -> bool:
    """Whether ``directory`` (created if missing) accepts new files."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)
