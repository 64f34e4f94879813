"""Benchmark items for the bundled sample, written against the procedural media's known facts.

``build_items(facts)`` turns the facts of :func:`generate_media` into verified instructions (the
item schema of docs/DESIGN.md, "The item"): Single, Multi, Selection and Nested items over the videos, VSysBench
style system-message items over the images (with a misaligned user prefix for each of the five
override styles), one Conflict-30 item per template, and a few text-only IFEval items.

Every statement is derived from the facts (names, colours, positions, times, counts, texts), so
another seed, which permutes colours and shapes, rewrites items and facts together. Each
satisfiable item carries a ``reference_response`` written to satisfy all its constraints;
``build_items`` runs every rule and hybrid checker on it and raises ``ValueError`` naming the item
and constraint when one fails, so a bad reference is never shipped.

``write_sample(root, seed)`` regenerates the media and writes ``root/items.jsonl``.

The items themselves are built in one module per media group (``video_items_one_shape``,
``video_items_several_shapes``, ``image_items``, ``system_items``, ``conflict_items``,
``ifeval_items``), from the constraint catalogue (``catalogue``) and the item constructors
(``compose``); this module holds the entry points and the order the items are written in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ifpo.data_builders.sample_benchmark.compose import _registry
from ifpo.data_builders.sample_benchmark.conflict_items import build_conflict_items
from ifpo.data_builders.sample_benchmark.ifeval_items import build_ifeval_items
from ifpo.data_builders.sample_benchmark.image_items import build_image_items
from ifpo.data_builders.sample_benchmark.system_items import build_system_items
from ifpo.data_builders.sample_benchmark.video_items_one_shape import items_v01, items_v03, items_v07
from ifpo.data_builders.sample_benchmark.video_items_several_shapes import (
    items_v02,
    items_v04,
    items_v05,
    items_v06,
    items_v08,
)

#: VCIFBench Table 9 task types; every item's task names come from here.
TASK_TYPES = (
    "emotion_recognition", "harmful_content_detection", "text_recognition", "event_sequencing",
    "state_change_detection", "temporal_query", "spatial_arrangement_description",
    "object_relationship", "cause_effect_identification", "counterfactual_reasoning",
    "predictive_reasoning", "summarization", "tutorial_generation", "professional_writing",
    "practical_writing", "platform_copywriting", "role_play_response", "creative_writing",
    "style_transfer_rewriting", "point_of_view_reframing",
)

ITEMS_FILE = "items.jsonl"


# ----------------------------------------------------------------------------- the facts, by slug


def _by_slug(section: dict) -> dict[str, tuple[str, dict]]:
    """``{"v01": (path, facts), ...}`` keyed by the three-character prefix of the file name."""
    return {Path(path).stem[:3]: (path, value) for path, value in section.items()}


# ============================================================================ entry points


_VIDEO_BUILDERS: tuple[tuple[str, Callable[[str, dict], list[dict]]], ...] = (
    ("v01", items_v01), ("v02", items_v02), ("v03", items_v03), ("v04", items_v04),
    ("v05", items_v05), ("v06", items_v06), ("v07", items_v07), ("v08", items_v08),
)


def build_items(facts: dict) -> list[dict]:
    """All sample items for ``facts`` (as written by :func:`generate_media`), in a stable order.

    Raises ``ValueError`` naming the item and constraint when a reference response fails one of
    its rule or hybrid constraints (or an item breaks the generator's own invariants).

    >>> items = build_items(json.load(open("sample/facts.json")))   # doctest: +SKIP
    >>> items[0]["id"]                                               # doctest: +SKIP
    'v01-single-1'
    """
    vids = _by_slug(facts["videos"])
    imgs = _by_slug(facts["images"])
    missing = [k for k, _ in _VIDEO_BUILDERS if k not in vids]
    missing += [k for k in ("i01", "i02", "i03", "i04", "i05", "i06", "i07", "i08") if k not in imgs]
    if missing:
        raise ValueError(f"facts lack the sample media {missing}; regenerate them with generate_media()")
    items: list[dict] = []
    for slug, builder in _VIDEO_BUILDERS:
        items += builder(*vids[slug])
    items += build_image_items(imgs)
    items += build_system_items(imgs)
    items += build_conflict_items(vids)
    items += build_ifeval_items()
    verify_items(items)
    return items


def verify_items(items: list[dict]) -> None:
    """Check the generator's invariants and run every rule/hybrid checker on each reference.

    Raises ``ValueError`` naming the item (and constraint) at the first problem.
    """
    from ifpo.verifiers.registry import run_checker

    registry = _registry()
    seen: set[str] = set()
    for item in items:
        iid = item["id"]
        if iid in seen:
            raise ValueError(f"item {iid!r}: duplicate id")
        seen.add(iid)
        n = len(item["constraints"])
        if not 2 <= n <= 8:
            raise ValueError(f"item {iid!r}: {n} constraints, expected 2 to 8")
        stated = item.get("system", "") + "\n" + item["instruction"]
        for c in item["constraints"]:
            if c["description"] not in stated:
                raise ValueError(f"item {iid!r} constraint {c['id']} ({c['type']}): its description is not "
                                 "stated in the instruction or system message")
            ctype = registry.get(c["type"])
            if ctype.route == "judge" and not c.get("judge_context"):
                raise ValueError(f"item {iid!r} constraint {c['id']} ({c['type']}): a judge-route constraint "
                                 "needs a judge_context with the evidence")
        for t in item["tasks"]:
            if item["source"] == "sample" and t["name"] not in TASK_TYPES:
                raise ValueError(f"item {iid!r}: task {t['name']!r} is not a VCIFBench task type")
        ref = item.get("reference_response")
        if item["structure"] == "conflict":
            if ref is not None:
                raise ValueError(f"item {iid!r}: a conflict item has no reference_response")
            continue
        if not ref:
            raise ValueError(f"item {iid!r}: a satisfiable item needs a reference_response")
        for c in item["constraints"]:
            ctype = registry.get(c["type"])
            if ctype.route == "judge":
                continue
            try:
                check = run_checker(ctype, ref, c["params"])
            except ValueError as exc:
                raise ValueError(f"item {iid!r} constraint {c['id']} ({c['type']}): bad params: {exc}") from exc
            if not check.passed:
                raise ValueError(f"item {iid!r} constraint {c['id']} ({c['type']}): the reference response "
                                 f"fails: {check.reason}")


def dumps_items(items: list[dict]) -> str:
    """The JSONL text of ``items``: one object per line, non-ASCII kept, trailing newline."""
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def write_sample(root: Path, seed: int = 0) -> Path:
    """Regenerate the media under ``root`` (facts.json included) and write ``root/items.jsonl``."""
    from ifpo.data_builders.sample_benchmark.media import generate_media

    root = Path(root)
    facts = generate_media(root, seed)
    items = build_items(facts)
    path = root / ITEMS_FILE
    path.write_text(dumps_items(items), encoding="utf-8")
    return path


__all__ = ["ITEMS_FILE", "TASK_TYPES", "build_items", "dumps_items", "verify_items", "write_sample"]
