"""The self-contained HTML dashboard of ``ifpo compare``.

One file, no network: the page embeds the comparison as JSON (``<script type="application/json"
id="ifpo-data">``) and an inline script (``dashboard_assets.SCRIPT``) draws it:

- ``#summary``: one row per checkpoint (IPR, CPR micro/macro, TCSR, TISR, near-miss, unjudged);
- ``#curves``: ``svg.chart.curve`` per metric, a ``path.series`` per run over steps (a run without
  steps, e.g. an API model, is a dashed level line);
- ``#pair-charts``: bars (``svg.chart.bars``, ``rect.bar``) per dimension, per constraint count k
  and per constraint type for the two chosen checkpoints A and B (``#pick-a``/``#pick-b``);
- ``#heatmap``: constraint types by checkpoints (``svg.chart.heatmap``, ``rect.cell``), VCIFBench Fig. 7 style;
- ``#flips``: items whose outcome changed from A to B (``tr.flip.regression`` / ``tr.flip.fix``,
  ``data-id`` = item id) with both responses and verdicts side by side, changed verdicts marked;
- ``#samples``: a sample browser (checkpoint, outcome filter, text search);
- ``#skipped``: reports that were corrupt or partial, with the reason.

When the script has run, ``body[data-rendered="true"]``.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ifpo.eval_hooks.dashboard_assets import SCRIPT, STYLE
from ifpo.eval_hooks.reports import Checkpoint, Comparison
from ifpo.verifiers.metrics import item_outcome

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
        "items": items,
    }


def dashboard_data(
    comparison: Comparison,
    pair: tuple[Checkpoint, Checkpoint] | None,
    texts: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    title: str = "ifpo checkpoint comparison",
    max_chars: int = 4000,
) -> dict[str, Any]:
    keys = {id(c): f"c{i}" for i, c in enumerate(comparison.checkpoints)}
    cps = [checkpoint_data(c, keys[id(c)], max_chars) for c in comparison.checkpoints]
    ids = {i for c in cps for i in c["items"]}
    a, b = pair if pair is not None else (comparison.checkpoints[0], comparison.checkpoints[-1])
    return {
        "title": title,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "runs": comparison.runs,
        "metrics": [list(m) for m in METRICS],
        "checkpoints": cps,
        "texts": {k: v for k, v in (texts or {}).items() if k in ids},
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in comparison.skipped],
        "a": keys[id(a)],
        "b": keys[id(b)],
    }


def _json_for_script(data: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a model answer would end or bend the element: escape "<", ">", "&".
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_dashboard(
    comparison: Comparison,
    pair: tuple[Checkpoint, Checkpoint] | None,
    texts: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    title: str = "ifpo checkpoint comparison",
    max_chars: int = 4000,
) -> str:
    """The dashboard page for ``comparison``; ``pair`` preselects the A/B checkpoints of flips and bars."""
    if not comparison.checkpoints:
        raise ValueError("nothing to compare: no readable report")
    data = dashboard_data(comparison, pair, texts, title=title, max_chars=max_chars)
    n = len(comparison.checkpoints)
    runs = ", ".join(comparison.runs)
    sections: Sequence[tuple[str, str, str]] = (
        ("summary", "Checkpoints", ""),
        ("curves", "Metrics over steps", "One line per run; dashed: a run without steps (e.g. an endpoint)."),
        ("pair-charts", "A vs B: dimensions, constraint count, constraint types", ""),
        ("heatmap", "CPR by constraint type and checkpoint", "Rows: constraint types; columns: checkpoints; grey: not judged."),
        ("flips", "Regressions and fixes (A → B)", "Items that passed every constraint in A and failed in B, and the "
                                                  "reverse; changed verdicts are highlighted."),
        ("samples", "Sample browser", ""),
        ("skipped", "Skipped reports", "Corrupt or partial reports are named here and left out."),
    )
    body = []
    for sid, heading, note in sections:
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
