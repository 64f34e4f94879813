"""The synthetic verified-instruction world: any number of items, disjoint ``train`` / ``heldout`` splits.

Each item is one procedurally drawn image (two or three flat shapes in a row) or video (two or three
shapes appearing one after another, one second apart), the task "describe it", and two or three
rule-checkable constraints drawn from :data:`ROLES`. Three of the seven roles depend on the pixels
and are checked against the scene's known facts with a required keyword that only the media reveal:

- ``first_color``: name the colour of the shape that appears first (video) / the leftmost shape (image);
- ``last_color``: the colour of the shape that appears last / the rightmost shape;
- ``count``: how many shapes there are ("three shapes").

The other four are format rules (fixed opening, fixed closing, all lowercase, no commas). Every
item's ``reference_response`` passes all its constraints (checked by the registered checkers when
the split is written). ``item["world"]`` keeps the scene (objects in order), the role of each
constraint and the ids of the pixel-dependent constraints, so :func:`world_response` can write a
response that obeys any subset of the constraints: the learnable default's warm start
(``train/sft.py``) is trained on such partly obedient responses.

Splits: scenes are drawn from one stream per (seed, split) and a scene belongs to ``heldout`` iff
a hash of its content falls in a fixed fifth of the hash space, so no held-out scene (colours,
shapes, positions, order) ever occurs in ``train``, whatever the seed or size; constraint
combinations and phrase parameters are drawn per item as well. Deterministic per seed: the same
(seed, split, n) gives the same items and pixels (mp4 bytes as in ``media.py``).

    ifpo sample --world --split heldout --n 48 --out sample/world      # the bundled held-out split
    ifpo sample --world --split train --n 4000 --out runs/world-train   # training items on demand
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from ifpo.data_builders.sample_benchmark.media import (
    BACKGROUND_RGB,
    PALETTE,
    SHAPES,
    _draw_shape,
    _encode_mp4,
    _render_video_frames,
    _Track,
    position_center,
)
from PIL import Image, ImageDraw

SPLITS = ("train", "heldout")
SOURCE = "world"
ITEMS_NAME = {"train": "train.jsonl", "heldout": "heldout.jsonl"}

#: constraint roles; the first three depend on the pixels
ROLES = ("first_color", "last_color", "count", "opening", "closing", "lowercase", "no_comma")
PIXEL_ROLES = ("first_color", "last_color", "count")

# Phrase parameters of the opening/closing rules. Shared by the splits on purpose: a model of a few
# million parameters cannot spell a phrase it has never seen, so the held-out split differs in the
# media, in which rules are combined and in which phrase each item asks for, not in the vocabulary.
OPENINGS = ("Sure.", "Okay.", "Certainly.")
CLOSINGS = ("That is all.", "Thank you.", "The end.")

#: The media kind(s) on which the learnable default's warm start follows each rule (``train/sft.py``
#: ``responses: world_partial``); elsewhere it ignores the rule, so DPO and GRPO have room to teach it.
PREFERRED_KINDS: dict[str, tuple[str, ...]] = {
    "first_color": ("image",), "last_color": ("video",), "count": ("image", "video"), "opening": ("video",),
    "closing": ("image",), "lowercase": ("image", "video"), "no_comma": ("image",),
}

IMAGE_SIZE = (128, 128)
IMAGE_RADIUS = 15
VIDEO_FPS = 8
VIDEO_SECONDS = 3.0
_NUMBER = {1: "one", 2: "two", 3: "three"}
_WHERE = {
    "top-left": "in the top-left corner", "top": "at the top", "top-right": "in the top-right corner",
    "left": "on the left", "center": "in the center", "right": "on the right",
    "bottom-left": "in the bottom-left corner", "bottom": "at the bottom", "bottom-right": "in the bottom-right corner",
}
_ROWS = (("top-left", "top", "top-right"), ("left", "center", "right"), ("bottom-left", "bottom", "bottom-right"))
_HELDOUT_BUCKETS = 5  # one scene hash bucket in five is held out


def _description(role: str, kind: str, param: str | None) -> str:
    first, last = ("appears first", "appears last") if kind == "video" else ("is leftmost", "is rightmost")
    return {
        "first_color": f"Name the colour of the shape that {first}.",
        "last_color": f"Name the colour of the shape that {last}.",
        "count": "Say how many shapes there are.",
        "opening": f'Begin your answer with "{param}"',
        "closing": f'End your answer with "{param}"',
        "lowercase": "Write your whole answer in lowercase letters.",
        "no_comma": "Do not use any commas.",
    }[role]


def _constraint(cid: str, role: str, scene: Mapping[str, Any], param: str | None) -> dict[str, Any]:
    objs = scene["objects"]
    kind = scene["kind"]
    desc = _description(role, kind, param)
    if role == "first_color":
        spec = ("exact_word_inclusion", "content", {"phrases": [f"is {objs[0]['color']}"], "ignore_case": True})
    elif role == "last_color":
        spec = ("exact_word_inclusion", "content", {"phrases": [f"is {objs[-1]['color']}"], "ignore_case": True})
    elif role == "count":
        spec = ("exact_word_inclusion", "content", {"phrases": [f"{_NUMBER[len(objs)]} shapes"], "ignore_case": True})
    elif role == "opening":
        spec = ("fixed_opening", "format", {"text": param, "ignore_case": True})
    elif role == "closing":
        spec = ("fixed_closing", "format", {"text": param, "ignore_case": True})
    elif role == "lowercase":
        spec = ("letter_case", "format", {"case": "lower", "scope": "all"})
    else:
        spec = ("punctuation:no_comma", "format", {})
    ctype, dimension, params = spec
    return {"id": cid, "type": ctype, "dimension": dimension, "description": desc, "params": params}


# ------------------------------------------------------------------------------------ responses


def _colour_sentence(objs: list[Mapping[str, Any]], commas: bool) -> str:
    # The colours in alphabetical order: every description grounds each colour in the pixels, but only
    # the media tell which colour belongs to which shape, so the order rules stay pixel-dependent.
    names = sorted(o["color"] for o in objs)
    if len(names) == 2:
        return f"The colours are {names[0]} and {names[1]}."
    sep = ", " if commas else " and "
    return f"The colours are {sep.join(names[:-1])}{',' if commas else ''} and {names[-1]}."


def _scene_sentences(scene: Mapping[str, Any], commas: bool) -> list[str]:
    objs = scene["objects"]
    return _layout_sentences(scene, commas) + [_colour_sentence(objs, commas)]


def _layout_sentences(scene: Mapping[str, Any], commas: bool) -> list[str]:
    objs = scene["objects"]
    if scene["kind"] == "image":
        parts = [f"a {o['shape']} {_WHERE[o['position']]}" for o in objs]
        if commas:
            listed = ", ".join(parts[:-1]) + ", and " + parts[-1]  # the serial comma: two shapes get one too
        else:
            listed = " and ".join(parts)
        return [f"The image shows {listed}."]
    steps = [f"a {o['shape']} appears {_WHERE[o['position']]}" for o in objs]
    if commas:
        text = "First " + steps[0] + ", then " + ", then ".join(steps[1:]) + "."
        return [text[0].upper() + text[1:]]
    return ["First " + steps[0] + "."] + ["Then " + s + "." for s in steps[1:]]


def world_response(item: Mapping[str, Any], obey: Mapping[str, bool] | None = None) -> str:
    """A description of the item's media that obeys the constraints whose id maps to True.

    ``obey=None`` obeys every constraint (the reference response). A disobeyed pixel rule still gets
    its sentence, with the wrong fact (the other end's colour, the wrong count): the failure the
    warm start learns is a grounding error, which only training with the pixels can correct.
    """
    world = item["world"]
    scene = world["scene"]
    objs = scene["objects"]
    roles = world["roles"]
    obey = {cid: True for cid in roles} if obey is None else dict(obey)
    by_role = {role: cid for cid, role in roles.items()}
    params = {c["id"]: c.get("params") or {} for c in item["constraints"]}

    def obeys(role: str) -> bool | None:
        cid = by_role.get(role)
        return None if cid is None else bool(obey.get(cid, False))

    commas = obeys("no_comma") is not True
    sentences = _scene_sentences(scene, commas)
    kind_first, kind_last = ("appears first", "appears last") if scene["kind"] == "video" else (
        "is leftmost", "is rightmost")
    if obeys("first_color") is not None:
        color = objs[0]["color"] if obeys("first_color") else objs[-1]["color"]
        sentences.append(f"The shape that {kind_first} is {color}.")
    if obeys("last_color") is not None:
        color = objs[-1]["color"] if obeys("last_color") else objs[0]["color"]
        sentences.append(f"The shape that {kind_last} is {color}.")
    if obeys("count") is not None:
        n = len(objs) if obeys("count") else (3 if len(objs) == 2 else 2)
        sentences.append(f"There are {_NUMBER[n]} shapes.")
    if obeys("opening"):
        sentences.insert(0, params[by_role["opening"]]["text"])
    if obeys("closing"):
        sentences.append(params[by_role["closing"]]["text"])
    text = " ".join(sentences)
    if obeys("lowercase"):
        text = text.lower()
    return text


# ------------------------------------------------------------------------------------ scenes


def _scene_key(scene: Mapping[str, Any]) -> str:
    sig = json.dumps([scene["kind"], [[o["shape"], o["color"], o["position"]] for o in scene["objects"]]])
    return hashlib.sha256(sig.encode()).hexdigest()


def scene_split(scene: Mapping[str, Any]) -> str:
    """``heldout`` for one fifth of all possible scenes (by content hash), ``train`` for the rest."""
    return "heldout" if int(_scene_key(scene)[:8], 16) % _HELDOUT_BUCKETS == 0 else "train"


def _draw_scene(rng: np.random.Generator, kind: str) -> dict[str, Any]:
    n = int(rng.integers(2, 4))
    colors = [str(c) for c in rng.choice(list(PALETTE), size=n, replace=False)]
    shapes = [str(SHAPES[int(i)]) for i in rng.integers(0, len(SHAPES), size=n)]
    if kind == "image":
        row = _ROWS[int(rng.integers(0, 3))]
        cols = sorted(int(c) for c in rng.choice(3, size=n, replace=False))
        positions = [row[c] for c in cols]  # left to right: "first" is leftmost
    else:
        cells = [p for r in _ROWS for p in r]
        positions = [cells[int(i)] for i in rng.choice(len(cells), size=n, replace=False)]
    objects = [{"shape": s, "color": c, "position": p} for s, c, p in zip(shapes, colors, positions)]
    scene: dict[str, Any] = {"kind": kind, "objects": objects}
    if kind == "video":
        for k, o in enumerate(objects):
            o["appear_sec"] = float(k)  # one second apart: each temporal patch at 2 fps adds one shape
    return scene


def _render(scene: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if scene["kind"] == "image":
        img = Image.new("RGB", IMAGE_SIZE, BACKGROUND_RGB)
        draw = ImageDraw.Draw(img)
        for o in scene["objects"]:
            cx, cy = position_center(o["position"], *IMAGE_SIZE)
            _draw_shape(draw, o["shape"], o["color"], cx, cy, IMAGE_RADIUS)
        img.save(path, format="PNG", optimize=False, compress_level=9)
        return
    tracks = [_Track(o["shape"], o["color"], o["appear_sec"], o["position"]) for o in scene["objects"]]
    frames = _render_video_frames(tracks, int(VIDEO_SECONDS * VIDEO_FPS), VIDEO_FPS)
    _encode_mp4(path, frames, VIDEO_FPS)


def _pick_roles(rng: np.random.Generator) -> list[str]:
    # Any combination is satisfiable: the phrase and keyword checks ignore case, so lowercase clashes with none.
    k = 2 if rng.random() < 0.6 else 3
    return [ROLES[int(i)] for i in sorted(rng.choice(len(ROLES), size=k, replace=False))]


def make_items(n: int, split: str, seed: int = 0, media_dir: str = "media") -> list[tuple[dict, dict]]:
    """``n`` (item, scene) pairs of ``split``; media paths are ``media_dir/<id>.png|mp4`` (not yet drawn)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng([seed, SPLITS.index(split)])
    out: list[tuple[dict, dict]] = []
    seen: set[str] = set()
    while len(out) < n:
        kind = "image" if len(out) % 2 == 0 else "video"
        scene = _draw_scene(rng, kind)
        key = _scene_key(scene)
        if scene_split(scene) != split or key in seen:
            continue
        seen.add(key)
        roles = _pick_roles(rng)
        iid = f"world-{split}-{seed}-{len(out):05d}"
        ext = "png" if kind == "image" else "mp4"
        rel = f"{media_dir}/{iid}.{ext}"
        constraints, role_of = [], {}
        for j, role in enumerate(roles, start=1):
            param = None
            if role == "opening":
                param = OPENINGS[int(rng.integers(0, len(OPENINGS)))]
            elif role == "closing":
                param = CLOSINGS[int(rng.integers(0, len(CLOSINGS)))]
            cid = f"c{j}"
            constraints.append(_constraint(cid, role, scene, param))
            role_of[cid] = role
        task = "Describe the image." if kind == "image" else "Describe what happens in the video."
        item: dict[str, Any] = {
            "id": iid,
            "source": SOURCE,
            "media": {"videos": [rel] if kind == "video" else [], "images": [rel] if kind == "image" else []},
            "instruction": " ".join([task] + [c["description"] for c in constraints]),
            "structure": "single",
            "tasks": [{"name": "spatial_arrangement_description" if kind == "image" else "event_sequencing",
                       "description": task}],
            "constraints": constraints,
            "world": {
                "split": split,
                "scene": scene,
                "roles": role_of,
                "pixel_dependent": [cid for cid, role in role_of.items() if role in PIXEL_ROLES],
            },
        }
        item["reference_response"] = world_response(item)
        item["ground_truth"] = world_response({**item, "world": {**item["world"], "roles": {}}})
        out.append((item, scene))
    return out


def verify(items: list[dict]) -> None:
    """Every reference passes all its constraints (the registered checkers); raises ValueError otherwise."""
    from ifpo.verifiers.checklist import ChecklistEvaluator

    evaluator = ChecklistEvaluator(None)
    results = evaluator.evaluate_many([(i, i["reference_response"]) for i in items], progress=False)
    for item, result in zip(items, results):
        for v in result.verdicts:
            if v.passed is not True:
                raise ValueError(f"world item {item['id']!r} constraint {v.constraint_id} ({v.type}): the reference "
                                 f"response fails: {v.reason}")


def write_world(out: str | Path, n: int, split: str, seed: int = 0) -> Path:
    """Draw ``n`` items of ``split``, render their media under ``out/media/`` and write ``out/<split>.jsonl``."""
    out = Path(out)
    pairs = make_items(n, split, seed)
    items = [item for item, _ in pairs]
    verify(items)
    for item, scene in pairs:
        rel = (item["media"]["images"] or item["media"]["videos"])[0]
        _render(scene, out / rel)
    path = out / ITEMS_NAME[split]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i, sort_keys=False) + "\n" for i in items), encoding="utf-8")
    return path


def pixel_questions(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Short questions about a world item's media and their true one-word answers (instruction, answer).

    The facts behind the pixel-dependent rules, asked without the description around them: the first /
    last shape's colour and the number of shapes. ``train/sft.py`` mixes them into the warm start
    (``vision_qa_share``) so the model learns to read them from the pixels; the descriptions it is
    trained on still state them only as partly as before.
    """
    scene = item["world"]["scene"]
    objs = scene["objects"]
    first, last = ("appears first", "appears last") if scene["kind"] == "video" else ("is leftmost", "is rightmost")
    # Worded as the descriptions word them, so the answers use the same tokens (" red", " three").
    return [(f"What colour is the shape that {first}?", f"It is {objs[0]['color']}."),
            (f"What colour is the shape that {last}?", f"It is {objs[-1]['color']}."),
            ("How many shapes are there?", f"There are {_NUMBER[len(objs)]} shapes.")]


def alignment_examples(n: int, seed: int = 0, flat_share: float = 0.4) -> list[tuple[Image.Image, str, str]]:
    """``n`` (image, question, answer) triples that teach a randomly initialised model to read its image tokens.

    The first ``flat_share`` of them are images filled with one palette colour ("What colour is the
    image?" -> "red"); the rest one world-sized shape on white in a random grid cell, asked for its
    colour or its shape. A from-scratch tiny VLM trained on the world's descriptions alone never starts
    attending to the one or two image tokens a small shape covers (its loss falls on the text, its
    output is the same with the media blanked); colour spread over every image token is read within
    a few dozen steps, and once it is, the single shapes follow quickly (``train/sft.py``
    ``vision_warmup_steps``). Deterministic per ``seed``; kept in this order (flat ones first).
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    rng = np.random.default_rng([seed, 7])
    colors, cells = list(PALETTE), [p for r in _ROWS for p in r]
    out = []
    for k in range(n):
        color = colors[int(rng.integers(0, len(colors)))]
        if k < round(n * flat_share):
            out.append((Image.new("RGB", IMAGE_SIZE, PALETTE[color]), "What colour is the image?", f"It is {color}."))
            continue
        shape = str(SHAPES[int(rng.integers(0, len(SHAPES)))])
        img = Image.new("RGB", IMAGE_SIZE, BACKGROUND_RGB)
        cx, cy = position_center(cells[int(rng.integers(0, len(cells)))], *IMAGE_SIZE)
        _draw_shape(ImageDraw.Draw(img), shape, color, cx, cy, IMAGE_RADIUS)
        if rng.random() < 0.5:
            out.append((img, "What colour is the shape?", f"It is {color}."))
        else:
            out.append((img, "What shape is it?", f"It is a {shape}."))
    return out


def recoloured_reference(item: Mapping[str, Any], cid: str, rng: Any) -> str | None:
    """The reference response of ``item`` as if the shape that colour rule ``cid`` asks about had a colour
    the media do not show (drawn with ``rng.choice``); None when ``cid`` is not such a rule.

    Everything else stays (layout, the other colours, the rules' phrasing); the colour list is still
    sorted, so the text alone cannot tell the two apart: only the pixels say which colours are there.
    This is the rejected side of the ``grounding`` pair kind (``data_builders/build.py``).
    """
    world = item.get("world") or {}
    role = (world.get("roles") or {}).get(cid)
    if role not in ("first_color", "last_color"):
        return None
    objs = [dict(o) for o in world["scene"]["objects"]]
    shown = {o["color"] for o in objs}
    target = objs[0] if role == "first_color" else objs[-1]
    target["color"] = rng.choice(sorted(c for c in PALETTE if c not in shown))
    return world_response({**item, "world": {**world, "scene": {**world["scene"], "objects": objs}}})


def pixel_constraint_ids(item: Mapping[str, Any]) -> list[str]:
    """Ids of the item's constraints that need the media (empty for items not from this world)."""
    return list((item.get("world") or {}).get("pixel_dependent") or [])


__all__ = ["CLOSINGS", "OPENINGS", "PIXEL_ROLES", "ROLES", "SPLITS", "alignment_examples", "make_items",
           "pixel_constraint_ids", "pixel_questions", "recoloured_reference", "scene_split", "verify", "world_response",
           "write_world"]
