"""Stand-in preference pairs made from the bundled sample benchmark, for tests and ``recipes/tiny.yaml``.

This is *not* the pair builder (that lives in ``data_builders/`` and verifies every pair). It turns
each sample item that has a ``reference_response`` into one pair in the pair format ``train/dpo.py``
reads, with a deterministic, unverified negative:

- ``stripped`` (even items): rejected = the item's ``ground_truth``, i.e. the task answer with the
  explicit constraints ignored, as a constraint-stripped negative looks;
- ``corrupted`` (odd items, or when the ground truth equals the reference): rejected = the reference
  with its last sentence dropped and its letter case flipped (upper <-> lower).

A few video items are also written as text-only pairs (the video evidence from ``judge_context``
given as text instead of the video), so mixed image + video + text batches occur in the sample.

Output (the pair-format contract)::

    DIR/pairs.jsonl     one pair per line: prompt, chosen, rejected, images, videos, meta
    DIR/manifest.json   {"media_root": <absolute path of the items' folder>, "source": ..., ...}

Example::

    build_sample_pairs("runs/tiny/sample_pairs")            # from sample/items.jsonl
    python -m ifpo.train.sample_pairs --out runs/sample_pairs     # same, from the shell
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ITEMS = REPO_ROOT / "sample" / "items.jsonl"
BUILDER_VERSION = "sample-pairs-1"
# How many video items also get a text-only twin (evidence as text); enough for mixed batches.
TEXT_ONLY_TWINS = 4

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _corrupt(text: str) -> str:
    """Drop the last sentence (when there are several) and flip the letter case."""
    sentences = _SENTENCE_END.split(text.strip())
    kept = " ".join(sentences[:-1]) if len(sentences) > 1 else text.strip()
    letters = [c for c in kept if c.isalpha()]
    mostly_upper = letters and sum(c.isupper() for c in letters) > len(letters) / 2
    corrupted = kept.lower() if mostly_upper else kept.upper()
    if corrupted == text:
        corrupted = corrupted + " ..."
    return corrupted


def _pair(item: dict[str, Any], index: int, *, text_only: bool = False) -> dict[str, Any]:
    reference = item["reference_response"]
    ground_truth = (item.get("ground_truth") or "").strip()
    if index % 2 == 0 and ground_truth and ground_truth != reference.strip():
        kind, rejected = "stripped", ground_truth
    else:
        kind, rejected = "corrupted", _corrupt(reference)

    media = item.get("media") or {}
    videos = [] if text_only else list(media.get("videos") or [])
    images = [] if text_only else list(media.get("images") or [])
    user_content: list[dict[str, Any]] = [{"type": "video"} for _ in videos]
    user_content += [{"type": "image"} for _ in images]
    instruction = item["instruction"]
    if text_only:
        evidence = " ".join(c["judge_context"] for c in item["constraints"] if c.get("judge_context"))
        instruction = f"{evidence}\n\n{instruction}" if evidence else instruction
    user_content.append({"type": "text", "text": instruction})

    prompt: list[dict[str, Any]] = []
    if item.get("system"):
        prompt.append({"role": "system", "content": [{"type": "text", "text": item["system"]}]})
    prompt.append({"role": "user", "content": user_content})

    def turn(text: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]

    return {
        "prompt": prompt,
        "chosen": turn(reference),
        "rejected": turn(rejected),
        "images": images,
        "videos": videos,
        "meta": {
            "item_id": item["id"] + ("-text" if text_only else ""),
            "kind": kind,
            "corrupted_constraint": None,
            # Unverified stand-ins: the real builder records the verifier verdicts here.
            "chosen_verdicts": [],
            "rejected_verdicts": [],
            "builder_version": BUILDER_VERSION,
            "seed": 0,
        },
    }


def sample_pairs(items_path: str | Path = DEFAULT_ITEMS) -> list[dict[str, Any]]:
    """The stand-in pairs for ``items_path`` (see the module docstring), in item order."""
    items_path = Path(items_path)
    items = [json.loads(line) for line in items_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    usable = [item for item in items if (item.get("reference_response") or "").strip()]
    if not usable:
        raise ValueError(f"{items_path}: no item has a reference_response, so no pair can be made")
    pairs = [_pair(item, i) for i, item in enumerate(usable)]
    with_evidence = [
        item
        for item in usable
        if (item.get("media") or {}).get("videos") and any(c.get("judge_context") for c in item["constraints"])
    ]
    pairs += [_pair(item, i, text_only=True) for i, item in enumerate(with_evidence[:TEXT_ONLY_TWINS])]
    return pairs


def build_sample_pairs(out_dir: str | Path, items_path: str | Path = DEFAULT_ITEMS) -> Path:
    """Write ``pairs.jsonl`` and ``manifest.json`` for the sample items into ``out_dir``; return it.

    Rewriting identical content leaves the files untouched (same bytes), so the data fingerprint,
    and with it the reference log-prob cache, survives a rebuild.
    """
    items_path = Path(items_path).resolve()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pairs = sample_pairs(items_path)
    text = "".join(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n" for p in pairs)
    manifest = {
        "media_root": str(items_path.parent),
        "source": str(items_path),
        "builder": "ifpo.train.sample_pairs (stand-in, unverified negatives)",
        "builder_version": BUILDER_VERSION,
        "num_pairs": len(pairs),
        "items_sha256": hashlib.sha256(items_path.read_bytes()).hexdigest(),
    }
    for name, content in (("pairs.jsonl", text), ("manifest.json", json.dumps(manifest, indent=2) + "\n")):
        path = out / name
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Write stand-in DPO pairs from the sample benchmark.")
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--items", type=Path, default=DEFAULT_ITEMS, help="items.jsonl (default: sample/)")
    args = parser.parse_args(argv)
    out = build_sample_pairs(args.out, args.items)
    print(f"wrote {json.loads((out / 'manifest.json').read_text())['num_pairs']} pairs to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
