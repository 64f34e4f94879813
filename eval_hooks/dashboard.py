"""The self-contained HTML dashboard of ``ifpo compare``.

One file, no network: the page embeds the comparison as JSON (``<script type="application/json"
id="ifpo-data">``) and an inline script (``dashboard_assets.SCRIPT``) draws it:

- ``#warnings``: ``div.warning.item-sets`` when the checkpoints were evaluated on different item sets;
- ``#summary``: one row per checkpoint (IPR, CPR micro/macro, TCSR, TISR, near-miss, unjudged), each
  rate with its 95% interval (``reports.rate_intervals``); ``n/j`` (nothing judged) is never shown as 0;
- ``#train-curves``: ``svg.train-curve`` per training-log key (loss, rewards/margins, per-kind
  accuracies, GRPO reward means, ...) from each run's ``log_history.jsonl`` / ``trainer_state.json``;
- ``#curves``: ``svg.chart.curve`` per metric, a ``path.series`` per run over steps with a shaded
  interval band (a run without steps, e.g. an API model, is a dashed level line drawn beneath);
  legend entries (``span.legend-item[data-run]``) hide/show a run in every chart (``#hide=RUN`` too);
- ``#pair-charts``: the A/B table with intervals and Δ (``table.delta-table``), bars (``svg.chart.bars``,
  ``rect.bar``, interval whiskers) per dimension, per constraint count k and per constraint type for
  the two chosen checkpoints A and B (``#pick-a``/``#pick-b``), a warning when A and B differ in items;
- ``#heatmap``: constraint types by checkpoints (``svg.chart.heatmap``, ``rect.cell``), VCIFBench Fig. 7 style;
- ``#flips``: items whose outcome changed from A to B (``tr.flip.regression`` / ``tr.flip.fix``,
  ``data-id`` = item id) with the item's image or sampled video frames (``img.thumb``), both responses
  and verdicts side by side, changed verdicts marked;
- ``#samples``: a sample browser (checkpoint, outcome filter, text search), thumbnails in each entry;

Thumbnails are JPEG data URIs (one strip per image or video, THUMB_FRAMES frames at evenly spaced times,
decoded with PyAV), capped at ``max_media_kb`` in total so the page stays one reasonable file.
- ``#skipped``: reports that were corrupt or partial, with the reason.

When the script has run, ``body[data-rendered="true"]``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.eval_hooks.dashboard_assets import SCRIPT, STYLE
from ifpo.eval_hooks.reports import (
    MAX_TRAIN_KEYS,
    Checkpoint,
    Comparison,
    item_set_groups,
    item_set_warning,
    load_history,
    rate_intervals,
    train_series,
)
from ifpo.verifiers.metrics import item_outcome

# Thumbnails: a strip of this height per item; all of them together stay under the page's media cap.
THUMB_HEIGHT = 72
THUMB_FRAMES = 4
DEFAULT_MAX_MEDIA_KB = 2048

METRICS = (("ipr", "IPR"), ("cpr_micro", "CPR micro"), ("cpr_macro", "CPR macro"), ("tcsr", "TCSR"), ("tisr", "TISR"))


def _tri(value: bool | None) -> int | None:
    return None if value is None else int(bool(value))


def _clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters]"


def checkpoint_data(c: Checkpoint, key: str, max_chars: int) -> dict[str, Any]:
    r = c.report
    items = {}
    for it in r["items"]:
        verdicts = c.item_verdicts(it["id"])
        items[it["id"]] = {
            "o": _tri(item_outcome(it["verdicts"])),
            "s": it.get("structure", ""),
            "v": [[v["constraint_id"], v.get("type", ""), v.get("dimension", ""), _tri(v["passed"]), v.get("reason", "")]
                  for v in verdicts],
            "r": _clip(c.responses.get(it["id"]), max_chars),
        }
    return {
        "key": key,
        "run": c.run,
        "step": c.step,
        "label": c.label,
        "path": str(c.path),
        "n_items": r["n_items"],
        "unjudged": (r.get("unjudged") or {}).get("constraints"),
        "m": {k: r[k] for k, _ in METRICS + (("near_miss_rate", ""),) if r.get(k) is not None},
        "dims": r["cpr_by_dimension"],
        "types": {t: v.get("cpr") for t, v in r["by_constraint_type"].items()},
        "by_k": r["by_k"],
        "ci": rate_intervals(r),
        "items": items,
    }


def _strip(frames: Sequence[Any]) -> bytes:
    """Frames (PIL images) side by side at THUMB_HEIGHT, as one JPEG."""
    import io

    from PIL import Image

    scaled = [f.convert("RGB").resize((max(1, round(f.width * THUMB_HEIGHT / f.height)), THUMB_HEIGHT)) for f in frames]
    strip = Image.new("RGB", (sum(f.width for f in scaled) + 2 * (len(scaled) - 1), THUMB_HEIGHT), (160, 160, 160))
    x = 0
    for f in scaled:
        strip.paste(f, (x, 0))
        x += f.width + 2
    buf = io.BytesIO()
    strip.save(buf, "JPEG", quality=70)
    return buf.getvalue()


def _video_frames(path: str, n: int) -> list[Any]:
    """``n`` frames at evenly spaced times of a video, as PIL images, decoded with PyAV (ifpo's video dependency).

    Seeking to each time and decoding one frame keeps long videos cheap, and ``ifpo compare`` stays free of
    the torch/transformers import (about 1 GB and several seconds) that the training-time loader in
    ``verifiers/media.py`` brings; a thumbnail needs a few small frames, not the qwen-vl-utils policy.
    """
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        duration = float(stream.duration * stream.time_base) if stream.duration else (
            container.duration / av.time_base if container.duration else 0.0)
        frames = []
        for k in range(n):
            t = duration * (k + 0.5) / n
            container.seek(int(t / stream.time_base) if stream.time_base else 0, stream=stream, backward=True,
                           any_frame=False)
            for frame in container.decode(stream):
                if frame.time is None or frame.time + 1e-6 >= t or duration == 0.0:
                    frames.append(frame.to_image())
                    break
            else:
                continue
        if not frames:
            raise ValueError("no decodable frame")
        return frames


def _media_thumb(kind: str, path: str) -> bytes:
    """An image's thumbnail, or THUMB_FRAMES frames of a video sampled at evenly spaced times."""
    from PIL import Image

    if kind == "images":
        with Image.open(path) as image:
            return _strip([image.copy()])
    return _strip(_video_frames(path, THUMB_FRAMES))


def thumbnails(texts: Mapping[str, Mapping[str, Any]], ids: Sequence[str], max_kb: int) -> tuple[dict, dict]:
    """Item id -> [{"kind", "src": data URI, "name"}] for the items' media, within ``max_kb`` in total.

    Returns the thumbnails and a note: how many items were left out by the cap or because their media
    could not be read (named, never fatal: a dashboard without a thumbnail is still a dashboard).
    """
    import base64
    import io

    out: dict[str, list[dict[str, Any]]] = {}
    made: dict[tuple[str, str], str] = {}
    sizes: dict[tuple[str, str], tuple[int, int]] = {}
    budget, used, capped, failed = max_kb * 1024, 0, [], []
    for item_id in sorted(ids):
        media = (texts.get(item_id) or {}).get("media") or {}
        entries = []
        for kind in ("images", "videos"):
            for path in media.get(kind) or []:
                key = (kind, path)
                if key not in made:
                    try:
                        data = _media_thumb(kind, path)
                    except Exception as exc:  # an unreadable file: named in the page, the rest still drawn
                        failed.append(f"{Path(path).name}: {type(exc).__name__}")
                        made[key] = ""
                        continue
                    if used + len(data) > budget:
                        capped.append(item_id)
                        continue
                    used += len(data)
                    from PIL import Image

                    with Image.open(io.BytesIO(data)) as strip:
                        sizes[key] = strip.size
                    made[key] = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")
                if made[key]:
                    # The pixel size goes with it, so the page lays thumbnails out before they are decoded.
                    w, h = sizes[key]
                    entries.append({"kind": kind[:-1], "src": made[key], "name": Path(path).name, "w": w, "h": h})
        if entries:
            out[item_id] = entries
    note = {"bytes": used, "max_kb": max_kb, "capped_items": sorted(set(capped)), "failed": failed}
    return out, note


def dashboard_data(
    comparison: Comparison,
    pair: tuple[Checkpoint, Checkpoint] | None,
    texts: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    title: str = "ifpo checkpoint comparison",
    max_chars: int = 4000,
    max_media_kb: int = DEFAULT_MAX_MEDIA_KB,
) -> dict[str, Any]:
    keys = {id(c): f"c{i}" for i, c in enumerate(comparison.checkpoints)}
    cps = [checkpoint_data(c, keys[id(c)], max_chars) for c in comparison.checkpoints]
    ids = {i for c in cps for i in c["items"]}
    a, b = pair if pair is not None else (comparison.checkpoints[0], comparison.checkpoints[-1])
    train = {run: train_series(load_history(root)) for run, root in comparison.roots.items()}
    train = {run: series for run, series in train.items() if series}
    # Keys in a stable, meaningful order: loss first, then rewards/margins, accuracies, the rest alphabetically.
    order = ("loss", "rewards/margins", "rewards/accuracies", "rewards/chosen", "rewards/rejected", "reward")
    all_keys = sorted({k for series in train.values() for k in series},
                      key=lambda k: (order.index(k) if k in order else len(order), k))
    media, media_note = thumbnails(texts or {}, sorted(ids), max_media_kb) if max_media_kb > 0 else ({}, None)
    return {
        "train": train,
        "train_keys": all_keys[:MAX_TRAIN_KEYS],
        "train_keys_left_out": all_keys[MAX_TRAIN_KEYS:],
        "media": media,
        "media_note": media_note,
        "item_sets": item_set_groups(comparison.checkpoints),
        "item_set_warning": item_set_warning(comparison.checkpoints),
        "title": title,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "runs": comparison.runs,
        "metrics": [list(m) for m in METRICS],
        "checkpoints": cps,
        "texts": {k: {f: x for f, x in v.items() if f != "media"} for k, v in (texts or {}).items() if k in ids},
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in comparison.skipped],
        "a": keys[id(a)],
        "b": keys[id(b)],
    }


def _json_for_script(data: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a model answer would end or bend the element: escape "<", ">", "&".
    # NaN/Infinity (a report written by another tool) become null: JSON.parse refuses them, and the
    # page would draw nothing for every run.
    from ifpo.verifiers.io import dumps

    text = dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_dashboard(
    comparison: Comparison,
    pair: tuple[Checkpoint, Checkpoint] | None,
    texts: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    title: str = "ifpo checkpoint comparison",
    max_chars: int = 4000,
    max_media_kb: int = DEFAULT_MAX_MEDIA_KB,
) -> str:
    """The dashboard page for ``comparison``; ``pair`` preselects the A/B checkpoints of flips and bars."""
    if not comparison.checkpoints:
        raise ValueError("nothing to compare: no readable report")
    data = dashboard_data(comparison, pair, texts, title=title, max_chars=max_chars, max_media_kb=max_media_kb)
    n = len(comparison.checkpoints)
    runs = ", ".join(comparison.runs)
    sections: Sequence[tuple[str, str, str]] = (
        ("warnings", "", ""),
        ("summary", "Checkpoints", "Rates in % with 95% intervals (Wilson for proportions, a bootstrap over items "
                                   "for CPR macro, TCSR and TISR); n/j: nothing judged (not 0%)."),
        ("train-curves", "Training curves", "From each run's log history (log_history.jsonl or trainer_state.json); "
                                            "click a run in a legend to hide or show it everywhere."),
        ("curves", "Metrics over steps", "One line per run, shaded: 95% interval; dashed: a run without steps "
                                         "(e.g. an endpoint), drawn beneath the runs with steps."),
        ("pair-charts", "A vs B: dimensions, constraint count, constraint types", "Δ = B − A in points."),
        ("heatmap", "CPR by constraint type and checkpoint", "Rows: constraint types; columns: checkpoints; grey: not judged."),
        ("flips", "Regressions and fixes (A → B)", "Items that passed every constraint in A and failed in B, and the "
                                                  "reverse; changed verdicts are highlighted."),
        ("samples", "Sample browser", ""),
        ("skipped", "Skipped reports", "Corrupt or partial reports are named here and left out."),
    )
    body = []
    for sid, heading, note in sections:
        if heading:
            body.append(f"<h2>{html.escape(heading)}</h2>")
        if sid == "pair-charts":
            body.append('<div id="pickers" class="controls"></div>')
        if note:
            body.append(f'<p class="muted">{html.escape(note)}</p>')
        body.append(f'<div id="{sid}"></div>')
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>\n{STYLE}\n</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="muted">{n} checkpoint(s) of {len(comparison.runs)} run(s): {html.escape(runs)} · '
        f"generated {html.escape(data['generated'])} by ifpo compare</p>",
        '<noscript><p>This dashboard draws its charts with JavaScript; enable it to see them.</p></noscript>',
        *body,
        f'<script type="application/json" id="ifpo-data">{_json_for_script(data)}</script>',
        f"<script>\n{SCRIPT}\n</script>",
        "</body></html>",
        "",
    ])
