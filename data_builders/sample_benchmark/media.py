"""Procedural media with known ground truth for the bundled sample benchmark.

``generate_media(root, seed)`` draws 8 short videos and 8 images of flat coloured shapes on a
white background, writes them under ``root/media/`` and returns the facts that hold in their
pixels (also written to ``root/facts.json``: sorted keys, indent 2, trailing newline). Benchmark
items are written against these facts, so every fact is exact: shapes are drawn without
anti-aliasing, every event happens on a frame boundary, and motion is linear.

Facts schema (paths are relative to ``root``)::

    {
      "seed": 0,
      "videos": {
        "media/videos/v01_<slug>.mp4": {
          "width": 160, "height": 128, "fps": 8, "num_frames": 32, "duration_sec": 4.0,
          "background": "white",
          "summary": "one-sentence plain-English summary",
          "objects": [{
            "name": "red circle",            # colour + shape at first appearance; unique per video
            "shape": "circle", "color": "red",
            "appear_sec": 0.5,               # first frame showing it: round(appear_sec * fps)
            "disappear_sec": null,           # first frame no longer showing it; null if it stays
            "start_position": "left", "end_position": "right",
            "color_changes": [{"time_sec": 2.0, "from": "red", "to": "blue"}]
          }],
          "events": [{                       # chronological; ties keep object order
            "time_sec": 0.5,
            "kind": "appear",                # appear | move | color_change | disappear
            "object": "red circle",
            "description": "A red circle appears on the left.",
            "end_time_sec": 3.0              # move events only: when the object arrives
          }],
          "max_objects_visible": 1,
          "final_state": "The red circle is on the right."
        }
      },
      "images": {
        "media/images/i01_<slug>.png": {
          "width": 224, "height": 224,
          "summary": "one-sentence plain-English summary",
          "objects": [{"name": "red circle", "shape": "circle", "color": "red",
                       "position": "left", "bbox": [x0, y0, x1, y1]}],   # x1, y1 exclusive
          "text": ["STOP"],                  # rendered labels in reading order; [] if none
          "count_by_color": {"red": 1}, "count_by_shape": {"circle": 1}
        }
      }
    }

Positions come from a fixed vocabulary naming the cells of a 3x3 grid (``POSITIONS``); an
object "at" a position has its centre at ``position_center(position, width, height)``. Between
``time_sec`` and ``end_time_sec`` of a move the centre travels at constant speed; colour changes
and disappearances only happen while an object stands still. Times are in seconds, rounded to
0.1 (all event times are multiples of 0.5 s, i.e. whole frames at 8 fps).

Colours are ``PALETTE`` (saturated and far apart, so they survive H.264 4:2:0 compression) and
shapes are ``SHAPES``. ``seed`` 0 gives the canonical scenes; another seed permutes colours and
shapes consistently (facts, summaries and pixels change together); layout and timing stay.

Determinism: the same seed gives identical facts.json bytes and identical PNG bytes with the same
Pillow build (its zlib decides the compressed bytes; the pixels never change). Videos are encoded
with libx264 (``mpeg4`` if PyAV lacks it), yuv420p, one thread and bit-exact muxing. Even so the
same frames do not always give the same mp4 bytes (PyAV 18.1's libx264 differed in about a third
of repeated encodes of one video), and another encoder build gives other bytes, so tests compare
decoded frames with a tolerance, against the shipped files and between regenerations.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFont

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (230, 25, 25),
    "green": (20, 170, 50),
    "blue": (30, 70, 230),
    "yellow": (250, 215, 0),
    "purple": (150, 40, 200),
    "orange": (255, 135, 0),
    "black": (0, 0, 0),
}
BACKGROUND_RGB = (255, 255, 255)
SHAPES = ("circle", "square", "triangle", "star")

# (column, row) of each position word in a 3x3 grid.
POSITIONS: dict[str, tuple[int, int]] = {
    "top-left": (0, 0),
    "top": (1, 0),
    "top-right": (2, 0),
    "left": (0, 1),
    "center": (1, 1),
    "right": (2, 1),
    "bottom-left": (0, 2),
    "bottom": (1, 2),
    "bottom-right": (2, 2),
}
_WHERE = {
    "top-left": "in the top-left corner",
    "top": "at the top",
    "top-right": "in the top-right corner",
    "left": "on the left",
    "center": "in the center",
    "right": "on the right",
    "bottom-left": "in the bottom-left corner",
    "bottom": "at the bottom",
    "bottom-right": "in the bottom-right corner",
}

_FROM = {p: "the " + w.split(" the ", 1)[1] for p, w in _WHERE.items()}

VIDEO_SIZE = (160, 128)
VIDEO_FPS = 8
VIDEO_RADIUS = 14
IMAGE_SIZE = (224, 224)
IMAGE_RADIUS = 24
TEXT_SCALE = 3


def position_center(position: str, width: int, height: int) -> tuple[int, int]:
    """Pixel centre ``(x, y)`` of a grid position word.

    >>> position_center("top-left", 160, 128)
    (26, 21)
    """
    if position not in POSITIONS:
        raise ValueError(f"unknown position {position!r}; expected one of {sorted(POSITIONS)}")
    col, row = POSITIONS[position]
    return (width * (2 * col + 1)) // 6, (height * (2 * row + 1)) // 6


# ---------------------------------------------------------------- drawing


def _shape_points(shape: str, cx: int, cy: int, r: int) -> list[tuple[int, int]]:
    if shape == "triangle":
        return [(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
    if shape == "star":
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else r * 0.5
            ang = np.pi / 2 + k * np.pi / 5
            pts.append((cx + round(rad * np.cos(ang)), cy - round(rad * np.sin(ang))))
        return pts
    raise ValueError(f"no polygon for shape {shape!r}")


def _draw_shape(draw: ImageDraw.ImageDraw, shape: str, color: str, cx: int, cy: int, r: int) -> None:
    rgb = PALETTE[color]
    box = (cx - r, cy - r, cx + r, cy + r)
    if shape == "circle":
        draw.ellipse(box, fill=rgb)
    elif shape == "square":
        draw.rectangle(box, fill=rgb)
    elif shape in ("triangle", "star"):
        draw.polygon(_shape_points(shape, cx, cy, r), fill=rgb)
    else:
        raise ValueError(f"unknown shape {shape!r}; expected one of {list(SHAPES)}")


def _article(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


# ---------------------------------------------------------------- scene specs


@dataclass(frozen=True)
class _Track:
    shape: str
    color: str
    appear: float
    start: str
    end: str | None = None  # None: never moves
    move: tuple[float, float] | None = None
    disappear: float | None = None
    changes: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class _VideoSpec:
    slug: str
    duration: float
    tracks: tuple[_Track, ...]
    summary: str  # str.format template: {A} = name of track 0, {a_A} = with article, {A_c2} = colour
    final_state: str


# Scenes are written once with seed-0 colours; templates name objects by letter so a seed's
# colour/shape permutation rewrites the English together with the pixels.
_VIDEOS: tuple[_VideoSpec, ...] = (
    _VideoSpec(
        "v01_circle_moves_right", 4.0,
        (_Track("circle", "red", 0.5, "left", "right", (1.0, 3.0)),),
        "{A_a} appears on the left at 0.5 seconds and moves to the right between 1 and 3 seconds.",
        "The {A} is on the right.",
    ),
    _VideoSpec(
        "v02_two_appear_in_sequence", 3.0,
        (
            _Track("square", "blue", 0.5, "top-left"),
            _Track("triangle", "green", 1.5, "bottom-right"),
        ),
        "{A_a} appears in the top-left corner, then {B_a} appears in the bottom-right corner.",
        "The {A} is in the top-left corner and the {B} is in the bottom-right corner.",
    ),
    _VideoSpec(
        "v03_color_change", 3.0,
        (_Track("square", "yellow", 0.5, "center", changes=((2.0, "purple"),)),),
        "{A_a} appears in the center and turns {A_c1} at 2 seconds.",
        "The {A_s} in the center is {A_c1}.",
    ),
    _VideoSpec(
        "v04_one_disappears", 4.0,
        (
            _Track("circle", "orange", 0.5, "left"),
            _Track("square", "black", 0.5, "right", disappear=2.0),
        ),
        "{A_a} on the left and {B_a} on the right appear together; the {B} disappears at 2 seconds.",
        "Only the {A} remains, on the left.",
    ),
    _VideoSpec(
        "v05_paths_cross", 4.0,
        (
            _Track("circle", "red", 0.5, "left", "right", (0.5, 2.5)),
            _Track("square", "blue", 0.5, "top", "bottom", (1.5, 3.5)),
        ),
        "{A_a} moves from left to right while {B_a} moves from top to bottom; their paths cross "
        "in the center, the {A} passing first.",
        "The {A} is on the right and the {B} is at the bottom.",
    ),
    _VideoSpec(
        "v06_count_rises_then_falls", 4.0,
        (
            _Track("triangle", "purple", 0.5, "top-left", disappear=3.0),
            _Track("square", "orange", 1.0, "top-right", disappear=3.5),
            _Track("circle", "blue", 1.5, "bottom-left"),
            _Track("star", "yellow", 2.0, "bottom-right"),
        ),
        "Four shapes appear one by one until four are visible at 2 seconds, then the {A} and the "
        "{B} disappear, leaving two.",
        "Two shapes remain: the {C} in the bottom-left corner and the {D} in the bottom-right corner.",
    ),
    _VideoSpec(
        "v07_moves_down_then_changes", 4.0,
        (_Track("star", "green", 0.5, "top", "bottom", (1.0, 2.5), changes=((3.0, "orange"),)),),
        "{A_a} appears at the top, moves down to the bottom, and then turns {A_c1}.",
        "The {A_s} at the bottom is {A_c1}.",
    ),
    _VideoSpec(
        "v08_diagonal_then_vanishes", 3.5,
        (
            _Track("square", "purple", 0.0, "top-right"),
            _Track("circle", "yellow", 0.5, "top-left", "bottom-right", (1.0, 2.5), disappear=3.0),
        ),
        "{A_a} stays in the top-right corner while {B_a} moves diagonally from the top-left to the "
        "bottom-right corner and then disappears.",
        "Only the {A} remains, in the top-right corner.",
    ),
)


@dataclass(frozen=True)
class _Item:
    shape: str
    color: str
    position: str


@dataclass(frozen=True)
class _ImageSpec:
    slug: str
    items: tuple[_Item, ...]
    summary: str
    labels: tuple[tuple[str, str], ...] = field(default=())  # (text, position), reading order


_IMAGES: tuple[_ImageSpec, ...] = (
    _ImageSpec(
        "i01_row_of_three",
        (_Item("circle", "red", "left"), _Item("square", "green", "center"),
         _Item("triangle", "blue", "right")),
        "A row of three shapes: {A_a} on the left, {B_a} in the center and {C_a} on the right.",
    ),
    _ImageSpec(
        "i02_four_corners",
        (_Item("star", "yellow", "top-left"), _Item("circle", "purple", "top-right"),
         _Item("square", "orange", "bottom-left"), _Item("triangle", "black", "bottom-right")),
        "One shape in each corner: {A_a} top-left, {B_a} top-right, {C_a} bottom-left and {D_a} "
        "bottom-right.",
    ),
    _ImageSpec(
        "i03_count_colors",
        (_Item("circle", "red", "top-left"), _Item("square", "red", "top-right"),
         _Item("circle", "blue", "center"), _Item("star", "blue", "bottom-left"),
         _Item("triangle", "red", "bottom")),
        "Five shapes: three {A_c} ones ({A}, {B}, {E}) and two {C_c} ones ({C}, {D}).",
    ),
    _ImageSpec(
        "i04_stop_label",
        (_Item("square", "red", "center"),),
        "{A_a} in the center with the word STOP written at the bottom.",
        (("STOP", "bottom"),),
    ),
    _ImageSpec(
        "i05_exit_sign",
        (_Item("triangle", "green", "left"), _Item("circle", "orange", "right")),
        "The text EXIT 7 at the top, {A_a} on the left and {B_a} on the right.",
        (("EXIT 7", "top"),),
    ),
    _ImageSpec(
        "i06_six_shapes",
        (_Item("circle", "green", "top-left"), _Item("square", "blue", "top"),
         _Item("circle", "yellow", "top-right"), _Item("triangle", "purple", "bottom-left"),
         _Item("square", "black", "bottom"), _Item("star", "red", "bottom-right")),
        "Six shapes in two rows: {A_a}, {B_a} and {C_a} on top; {D_a}, {E_a} and {F_a} below.",
    ),
    _ImageSpec(
        "i07_circles_and_number",
        (_Item("circle", "red", "top-left"), _Item("circle", "green", "top-right"),
         _Item("circle", "blue", "bottom-left"), _Item("circle", "orange", "bottom-right")),
        "Four {A_s}s of different colors ({A_c}, {B_c}, {C_c}, {D_c}) in the corners around the "
        "number 42 in the center.",
        (("42", "center"),),
    ),
    _ImageSpec(
        "i08_open_hours",
        (_Item("star", "purple", "left"), _Item("square", "yellow", "right")),
        "The word OPEN at the top, the time 9 AM at the bottom, {A_a} on the left and {B_a} on the "
        "right.",
        (("OPEN", "top"), ("9 AM", "bottom")),
    ),
)


# ---------------------------------------------------------------- seed permutation


def _permutations(seed: int) -> tuple[dict[str, str], dict[str, str]]:
    colors = list(PALETTE)
    if seed == 0:
        return {c: c for c in colors}, {s: s for s in SHAPES}
    rng = np.random.default_rng(seed)
    color_perm = [colors[i] for i in rng.permutation(len(colors))]
    shape_perm = [SHAPES[i] for i in rng.permutation(len(SHAPES))]
    return dict(zip(colors, color_perm)), dict(zip(SHAPES, shape_perm))


def _template_fields(objs: Sequence[tuple[str, str, Sequence[str]]]) -> dict[str, str]:
    """Format fields per object letter: {A} name, {A_a} with article, {A_s} shape, {A_c} colour,
    {A_c1} colour after the first change."""
    out: dict[str, str] = {}
    for k, (shape, color, later) in enumerate(objs):
        letter = "ABCDEF"[k]
        name = f"{color} {shape}"
        out[letter] = name
        out[f"{letter}_a"] = _article(name)
        out[f"{letter}_s"] = shape
        out[f"{letter}_c"] = color
        for j, c in enumerate(later, start=1):
            out[f"{letter}_c{j}"] = c
    return out


def _sentence(template: str, fields: dict[str, str]) -> str:
    return _cap(template.format(**fields))


# ---------------------------------------------------------------- videos


def _frame(t: float, fps: int) -> int:
    return round(t * fps)


def _render_video_frames(tracks: Sequence[_Track], num_frames: int, fps: int) -> list[np.ndarray]:
    w, h = VIDEO_SIZE
    frames = []
    for i in range(num_frames):
        img = Image.new("RGB", VIDEO_SIZE, BACKGROUND_RGB)
        draw = ImageDraw.Draw(img)
        for tr in tracks:  # later tracks are drawn on top
            if i < _frame(tr.appear, fps) or (tr.disappear is not None and i >= _frame(tr.disappear, fps)):
                continue
            x0, y0 = position_center(tr.start, w, h)
            cx, cy = x0, y0
            if tr.move is not None and tr.end is not None:
                f0, f1 = _frame(tr.move[0], fps), _frame(tr.move[1], fps)
                x1, y1 = position_center(tr.end, w, h)
                a = min(max((i - f0) / (f1 - f0), 0.0), 1.0)
                cx, cy = round(x0 + a * (x1 - x0)), round(y0 + a * (y1 - y0))
            color = tr.color
            for t_change, new in tr.changes:
                if i >= _frame(t_change, fps):
                    color = new
            _draw_shape(draw, tr.shape, color, cx, cy, VIDEO_RADIUS)
        frames.append(np.asarray(img, dtype=np.uint8))
    return frames


def _pick_codec() -> str:
    return "libx264" if "libx264" in av.codecs_available else "mpeg4"


def _encode_mp4(path: Path, frames: Sequence[np.ndarray], fps: int) -> None:
    h, w = frames[0].shape[:2]
    codec = _pick_codec()
    # bitexact keeps library version strings and timestamps out of the container bytes.
    with av.open(str(path), mode="w", format="mp4", options={"fflags": "+bitexact"}) as container:
        stream = container.add_stream(codec, rate=Fraction(fps, 1))
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.codec_context.thread_count = 1
        if codec == "libx264":
            # x264 is reproducible run to run only with a single thread (no frame/lookahead threads).
            stream.options = {"crf": "18", "preset": "medium", "threads": "1",
                              "x264-params": "threads=1:lookahead-threads=1:sliced-threads=0"}
        else:
            stream.options = {"qscale": "3"}
        for i, arr in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(arr, format="rgb24").reformat(format="yuv420p")
            frame.pts = i
            frame.time_base = Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))


def _video_facts(spec: _VideoSpec, colors: dict[str, str], shapes: dict[str, str]) -> tuple[
        dict, tuple[_Track, ...]]:
    fps = VIDEO_FPS
    tracks = tuple(
        _Track(shapes[t.shape], colors[t.color], t.appear, t.start, t.end, t.move, t.disappear,
               tuple((tc, colors[c]) for tc, c in t.changes))
        for t in spec.tracks
    )
    num_frames = _frame(spec.duration, fps)
    fields = _template_fields([(t.shape, t.color, [c for _, c in t.changes]) for t in tracks])
    objects, events = [], []
    for k, tr in enumerate(tracks):
        name = f"{tr.color} {tr.shape}"
        end = tr.end or tr.start
        changes, color = [], tr.color
        for t_change, new in tr.changes:
            changes.append({"time_sec": round(t_change, 1), "from": color, "to": new})
            color = new
        objects.append({
            "name": name, "shape": tr.shape, "color": tr.color,
            "appear_sec": round(tr.appear, 1),
            "disappear_sec": None if tr.disappear is None else round(tr.disappear, 1),
            "start_position": tr.start, "end_position": end, "color_changes": changes,
        })
        events.append((tr.appear, k, {"kind": "appear", "object": name,
                                       "description": _cap(f"{_article(name)} appears {_WHERE[tr.start]}.")}))
        if tr.move is not None:
            events.append((tr.move[0], k, {
                "kind": "move", "object": name, "end_time_sec": round(tr.move[1], 1),
                "description": f"The {name} moves from the {tr.start} to the {end}."}))
        for ch in changes:
            events.append((ch["time_sec"], k, {"kind": "color_change", "object": name,
                                               "description": f"The {name} turns {ch['to']}."}))
        if tr.disappear is not None:
            events.append((tr.disappear, k, {"kind": "disappear", "object": name,
                                              "description": f"The {name} disappears from {_FROM[end]}."}))
    events.sort(key=lambda e: (e[0], e[1]))
    visible = [
        sum(_frame(t.appear, fps) <= i and (t.disappear is None or i < _frame(t.disappear, fps))
            for t in tracks)
        for i in range(num_frames)
    ]
    facts = {
        "width": VIDEO_SIZE[0], "height": VIDEO_SIZE[1], "fps": fps, "num_frames": num_frames,
        "duration_sec": round(num_frames / fps, 1), "background": "white",
        "summary": _sentence(spec.summary, fields),
        "objects": objects,
        "events": [{"time_sec": round(t, 1), **e} for t, _, e in events],
        "max_objects_visible": max(visible),
        "final_state": _sentence(spec.final_state, fields),
    }
    return facts, tracks


# ---------------------------------------------------------------- images


def _draw_label(img: Image.Image, text: str, position: str) -> None:
    # Pillow's built-in bitmap font, upscaled with NEAREST: no font files, same pixels everywhere.
    # Pillow < 10.1 has no load_default_imagefont, but there load_default is that bitmap font.
    font = getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)()
    x0, y0, x1, y1 = font.getbbox(text)
    small = Image.new("L", (x1 - x0 + 2, y1 - y0 + 2), 255)
    ImageDraw.Draw(small).text((1 - x0, 1 - y0), text, fill=0, font=font)
    big = small.resize((small.width * TEXT_SCALE, small.height * TEXT_SCALE), Image.Resampling.NEAREST)
    cx, cy = position_center(position, *img.size)
    mask = big.point(lambda v: 255 if v < 128 else 0)
    img.paste((0, 0, 0), (cx - big.width // 2, cy - big.height // 2), mask)


def _image(spec: _ImageSpec, colors: dict[str, str], shapes: dict[str, str]) -> tuple[Image.Image, dict]:
    w, h = IMAGE_SIZE
    img = Image.new("RGB", IMAGE_SIZE, BACKGROUND_RGB)
    draw = ImageDraw.Draw(img)
    items = [_Item(shapes[it.shape], colors[it.color], it.position) for it in spec.items]
    objects = []
    count_by_color: dict[str, int] = {}
    count_by_shape: dict[str, int] = {}
    for it in items:
        cx, cy = position_center(it.position, w, h)
        _draw_shape(draw, it.shape, it.color, cx, cy, IMAGE_RADIUS)
        r = IMAGE_RADIUS
        objects.append({"name": f"{it.color} {it.shape}", "shape": it.shape, "color": it.color,
                        "position": it.position, "bbox": [cx - r, cy - r, cx + r + 1, cy + r + 1]})
        count_by_color[it.color] = count_by_color.get(it.color, 0) + 1
        count_by_shape[it.shape] = count_by_shape.get(it.shape, 0) + 1
    for text, position in spec.labels:
        _draw_label(img, text, position)
    fields = _template_fields([(it.shape, it.color, []) for it in items])
    facts = {
        "width": w, "height": h, "summary": _sentence(spec.summary, fields), "objects": objects,
        "text": [text for text, _ in spec.labels],
        "count_by_color": count_by_color, "count_by_shape": count_by_shape,
    }
    return img, facts


# ---------------------------------------------------------------- entry points


def generate_media(root: Path, seed: int = 0) -> dict:
    """Write the sample videos and images under ``root/media/`` and return their facts.

    The facts are also written to ``root/facts.json``; the schema is in the module docstring.

    >>> facts = generate_media(Path("sample"))            # doctest: +SKIP
    >>> facts["videos"]["media/videos/v01_circle_moves_right.mp4"]["objects"][0]["name"]  # doctest: +SKIP
    'red circle'
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    root = Path(root)
    (root / "media" / "videos").mkdir(parents=True, exist_ok=True)
    (root / "media" / "images").mkdir(parents=True, exist_ok=True)
    colors, shapes = _permutations(seed)
    facts: dict = {"seed": seed, "videos": {}, "images": {}}
    for spec in _VIDEOS:
        rel = f"media/videos/{spec.slug}.mp4"
        vfacts, tracks = _video_facts(spec, colors, shapes)
        frames = _render_video_frames(tracks, vfacts["num_frames"], VIDEO_FPS)
        _encode_mp4(root / rel, frames, VIDEO_FPS)
        facts["videos"][rel] = vfacts
    for ispec in _IMAGES:
        rel = f"media/images/{ispec.slug}.png"
        img, ifacts = _image(ispec, colors, shapes)
        img.save(root / rel, format="PNG", optimize=False, compress_level=9)
        facts["images"][rel] = ifacts
    (root / "facts.json").write_text(json.dumps(facts, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    return facts


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ifpo.data_builders.sample_benchmark.media [ROOT] [--seed N]``."""
    parser = argparse.ArgumentParser(description="Generate the sample benchmark's media and facts.json.")
    parser.add_argument("root", nargs="?", default="sample", help="output folder (default: sample)")
    parser.add_argument("--seed", type=int, default=0, help="0 = the shipped scenes")
    args = parser.parse_args(argv)
    facts = generate_media(Path(args.root), seed=args.seed)
    print(f"wrote {len(facts['videos'])} videos, {len(facts['images'])} images and facts.json to {args.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
