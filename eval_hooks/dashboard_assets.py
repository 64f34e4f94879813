"""The dashboard's stylesheet and script, inlined into every page (no CDN, no network, no package data).

The script draws every chart (SVG) and table from the JSON the page embeds; see
``eval_hooks/dashboard.py`` for the data it expects.
"""

STYLE = r"""body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1500px; padding: 0 18px 40px; color: #222; }
h1 { font-size: 22px; margin: 18px 0 2px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.muted { color: #777; } code { font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 14px; overflow-x: auto; }
svg.chart { flex: none; background: #fafafa; border: 1px solid #e3e3e3; border-radius: 4px; }
svg .chart-title { font-size: 12px; font-weight: 600; } svg .tick { font-size: 10px; fill: #555; } svg .axis { font-size: 10px; fill: #777; }
svg .grid { stroke: #e5e5e5; } svg path.series { fill: none; stroke-width: 2; } svg path.level { stroke-dasharray: 5 4; }
svg .cell-value { font-size: 9px; fill: #111; pointer-events: none; }
.bar-0, .swatch.bar-0 { fill: #9aa7b8; background: #9aa7b8; } .bar-1, .swatch.bar-1 { fill: #1f77b4; background: #1f77b4; }
.legend { margin: 4px 0 8px; } .legend-item { margin-right: 14px; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; border-radius: 2px; }
table.grid-table { border-collapse: collapse; font-size: 13px; } .grid-table th, .grid-table td { border: 1px solid #ddd; padding: 4px 7px; vertical-align: top; text-align: left; }
.grid-table td.num { text-align: right; font-variant-numeric: tabular-nums; } .grid-table thead th { background: #f3f3f3; }
table.flips td { max-width: 330px; } pre.response { white-space: pre-wrap; word-break: break-word; margin: 0; max-height: 260px; overflow: auto; font-size: 12px; background: #f7f7f7; padding: 5px; }
ul.verdicts { list-style: none; padding: 0; margin: 0; font-size: 12px; } ul.verdicts li { margin-bottom: 4px; padding-left: 4px; border-left: 3px solid #ccc; }
ul.verdicts li.pass { border-color: #2ca02c; } ul.verdicts li.fail { border-color: #d62728; } ul.verdicts li.changed { background: #fff6d6; }
.type, .reason, .desc { color: #666; } .instruction { color: #444; font-size: 12px; margin: 4px 0; }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; color: #fff; background: #888; }
.badge.regression, .badge.fail { background: #d62728; } .badge.fix, .badge.pass { background: #2ca02c; }
details.sample { border: 1px solid #e3e3e3; border-radius: 4px; padding: 4px 8px; margin: 4px 0; } .controls { margin-bottom: 8px; }
.ci { color: #888; font-size: 11px; } .nj { color: #999; font-style: italic; } svg text.nj { fill: #999; font-style: italic; }
svg path.band { stroke: none; opacity: 0.15; } svg rect.bar.zero { opacity: 1; } svg line.ci-bar { stroke: #333; stroke-width: 1; }
svg path.level { stroke-width: 1.5; opacity: 0.8; } .hidden { display: none; }
.legend-item[data-run] { cursor: pointer; user-select: none; } .legend-item.off { opacity: 0.35; text-decoration: line-through; }
.warning { background: #fff3cd; border: 1px solid #e0c36a; border-radius: 4px; padding: 6px 10px; margin: 10px 0; }
.thumbs { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0; } img.thumb { height: 72px; border: 1px solid #ccc; border-radius: 2px; }
summary img.thumb { height: 36px; vertical-align: middle; margin-left: 8px; } td .thumbs img.thumb { max-width: 100%; height: auto; }
td.delta.up { color: #2ca02c; } td.delta.down { color: #d62728; }
"""

SCRIPT = r"""// ifpo compare dashboard: draws every chart and table from the JSON embedded in the page.
// No library, no network: plain DOM and SVG. Data text goes in through textContent only (model
// answers are arbitrary text and must never become markup).
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("ifpo-data").textContent);
  const SVGNS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
  const byKey = Object.fromEntries(DATA.checkpoints.map((c) => [c.key, c]));
  const runColor = Object.fromEntries(DATA.runs.map((r, i) => [r, PALETTE[i % PALETTE.length]]));
  const state = { a: DATA.a, b: DATA.b };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, v);
    }
    for (const ch of children.flat()) {
      if (ch === null || ch === undefined) continue;
      node.append(ch instanceof Node ? ch : document.createTextNode(String(ch)));
    }
    return node;
  }
  function sv(tag, attrs, text) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  const pct = (x) => (x === null || x === undefined ? "–" : (100 * x).toFixed(1));
  // A rate with its 95% interval; "n/j" (nothing judged) is kept apart from a real 0%.
  function rateCell(v, ci, cls) {
    if (v === null || v === undefined) return el("td", { class: "num nj " + (cls || "") }, "n/j");
    return el("td", { class: "num " + (cls || "") }, pct(v), ci ? el("span", { class: "ci" }, ` [${pct(ci[0])}–${pct(ci[1])}]`) : null);
  }
  // Runs hidden by the legends; "#hide=run1,run2" in the address opens the page with those hidden (shareable views).
  const hidden = new Set((location.hash.match(/hide=([^&]*)/) || [null, ""])[1].split(",").filter(Boolean).map(decodeURIComponent));
  function applyHidden() {
    document.querySelectorAll("[data-run]").forEach((n) => {
      const off = hidden.has(n.getAttribute("data-run"));
      if (n.classList.contains("legend-item")) n.classList.toggle("off", off); else n.classList.toggle("hidden", off);
    });
  }
  const mark = (p) => (p === true || p === 1 ? "✓" : p === false || p === 0 ? "✗" : "?");
  const outcomeClass = (o) => (o === 1 ? "pass" : o === 0 ? "fail" : "undetermined");

  // -- charts ---------------------------------------------------------------------------------

  const W = 380, H = 230, M = { l: 42, r: 12, t: 26, b: 30 };

  // An empty 0-100% chart; `y` maps a rate to its height. Bar charts pass a larger bottom margin for their labels.
  function frame(title, cls, h = H, mb = M.b) {
    const s = sv("svg", { class: "chart " + cls, width: W, height: h, viewBox: `0 0 ${W} ${h}`, role: "img" });
    const y = (v) => M.t + (1 - v) * (h - M.t - mb);
    s.append(sv("text", { x: M.l, y: 16, class: "chart-title" }, title));
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      s.append(sv("line", { x1: M.l, x2: W - M.r, y1: y(v), y2: y(v), class: "grid" }));
      s.append(sv("text", { x: M.l - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, String(v * 100)));
    }
    return { s, y };
  }

  // One line per run over steps; a run without steps (an API model, a base model) is a dashed level.
  function lineChart(metric, title) {
    const { s, y: yOf } = frame(title, "curve");
    const stepped = DATA.checkpoints.filter((c) => c.step !== null && c.m[metric] !== undefined);
    const steps = stepped.map((c) => c.step);
    const lo = steps.length ? Math.min(...steps) : 0, hi = steps.length ? Math.max(...steps) : 1;
    const xOf = (st) => (hi === lo ? (M.l + W - M.r) / 2 : M.l + ((st - lo) / (hi - lo)) * (W - M.l - M.r));
    for (const st of [...new Set(steps)].sort((x, y) => x - y)) {
      s.append(sv("text", { x: xOf(st), y: H - M.b + 14, class: "tick", "text-anchor": "middle" }, String(st)));
    }
    s.append(sv("text", { x: (M.l + W - M.r) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "step"));
    if (!DATA.checkpoints.some((c) => c.m[metric] !== undefined)) {
      // TCSR/TISR need the task gate, which only a judge decides: say so rather than draw an empty frame.
      s.append(sv("text", { x: (M.l + W - M.r) / 2, y: H / 2, class: "axis no-data", "text-anchor": "middle" },
        "no judged value in any checkpoint"));
    }
    // Level lines (runs without steps) first, so the runs with steps are drawn over them, never hidden.
    for (const run of DATA.runs) {
      for (const c of DATA.checkpoints.filter((c) => c.run === run && c.m[metric] !== undefined && c.step === null)) {
        const y = yOf(c.m[metric]).toFixed(1);
        const line = sv("path", { d: `M${M.l},${y} L${W - M.r},${y}`, class: "series level", stroke: runColor[run], "data-run": run });
        line.append(sv("title", {}, `${c.label}: ${title} ${pct(c.m[metric])}%`));
        s.append(line);
      }
    }
    for (const run of DATA.runs) {
      const mine = DATA.checkpoints.filter((c) => c.run === run && c.m[metric] !== undefined);
      const pts = mine.filter((c) => c.step !== null);
      const color = runColor[run];
      const withCi = pts.filter((c) => c.ci && c.ci[metric]);
      if (withCi.length > 1) {
        const up = withCi.map((c, i) => `${i ? "L" : "M"}${xOf(c.step).toFixed(1)},${yOf(c.ci[metric][1]).toFixed(1)}`);
        const down = withCi.slice().reverse().map((c) => `L${xOf(c.step).toFixed(1)},${yOf(c.ci[metric][0]).toFixed(1)}`);
        s.append(sv("path", { d: up.join(" ") + " " + down.join(" ") + " Z", class: "band", fill: color, "data-run": run }));
      }
      if (pts.length) {
        const d = pts.map((c, i) => `${i ? "L" : "M"}${xOf(c.step).toFixed(1)},${yOf(c.m[metric]).toFixed(1)}`).join(" ");
        s.append(sv("path", { d, class: "series", stroke: color, "data-run": run }));
        for (const c of pts) {
          const ci = c.ci && c.ci[metric];
          const dot = sv("circle", { cx: xOf(c.step), cy: yOf(c.m[metric]), r: 3.5, fill: color, "data-run": run });
          dot.append(sv("title", {}, `${c.label}: ${title} ${pct(c.m[metric])}%` + (ci ? ` [${pct(ci[0])}–${pct(ci[1])}]` : "")));
          s.append(dot);
        }
      }
    }
    return s;
  }

  // Training-log curves: the y range is the data's own (losses are not rates).
  function trainChart(key) {
    const series = DATA.runs.filter((r) => DATA.train[r] && DATA.train[r][key]).map((r) => [r, DATA.train[r][key]]);
    const s = sv("svg", { class: "chart train-curve", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "data-key": key });
    s.append(sv("text", { x: M.l, y: 16, class: "chart-title" }, key));
    const pts = series.flatMap(([, p]) => p);
    let lo = Math.min(...pts.map((p) => p[1])), hi = Math.max(...pts.map((p) => p[1]));
    if (hi === lo) { lo -= Math.abs(lo) * 0.1 + 0.5; hi += Math.abs(hi) * 0.1 + 0.5; }
    const s0 = Math.min(...pts.map((p) => p[0])), s1 = Math.max(...pts.map((p) => p[0]));
    const xOf = (st) => (s1 === s0 ? (M.l + W - M.r) / 2 : M.l + ((st - s0) / (s1 - s0)) * (W - M.l - M.r));
    const yOf = (v) => M.t + (1 - (v - lo) / (hi - lo)) * (H - M.t - M.b);
    for (let i = 0; i <= 4; i++) {
      const v = lo + (i / 4) * (hi - lo);
      s.append(sv("line", { x1: M.l, x2: W - M.r, y1: yOf(v), y2: yOf(v), class: "grid" }));
      s.append(sv("text", { x: M.l - 6, y: yOf(v) + 4, class: "tick", "text-anchor": "end" }, Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)));
    }
    for (const st of [s0, s1]) s.append(sv("text", { x: xOf(st), y: H - M.b + 14, class: "tick", "text-anchor": "middle" }, String(st)));
    s.append(sv("text", { x: (M.l + W - M.r) / 2, y: H - 4, class: "axis", "text-anchor": "middle" }, "step"));
    for (const [run, p] of series) {
      const d = p.map((q, i) => `${i ? "L" : "M"}${xOf(q[0]).toFixed(1)},${yOf(q[1]).toFixed(1)}`).join(" ");
      const path = sv("path", { d, class: "series train", stroke: runColor[run], "data-run": run });
      path.append(sv("title", {}, `${run}: ${key}, ${p.length} point(s), last ${p[p.length - 1][1].toPrecision(4)} at step ${p[p.length - 1][0]}`));
      s.append(path);
      if (p.length === 1) s.append(sv("circle", { cx: xOf(p[0][0]), cy: yOf(p[0][1]), r: 3.5, fill: runColor[run], "data-run": run }));
    }
    return s;
  }

  // Grouped bars: one group per category, one bar per checkpoint in `cps`.
  function barChart(title, cls, categories, cps, valueOf, ciOf) {
    const width = Math.max(W, M.l + M.r + categories.length * Math.max(48, cps.length * 16 + 14));
    const rotate = categories.some((x) => String(x).length > 6);
    const bottom = rotate ? 80 : M.b;
    const { s, y: yOf } = frame(title, "bars " + cls, H + bottom - M.b, bottom);
    s.setAttribute("width", width);
    s.setAttribute("viewBox", `0 0 ${width} ${H}`);
    s.querySelectorAll("line.grid").forEach((g) => g.setAttribute("x2", width - M.r));
    const x0s = M.l + (rotate ? 24 : 0);  // room for the first rotated label
    const group = (width - x0s - M.r) / Math.max(1, categories.length);
    const bw = Math.min(22, (group - 10) / Math.max(1, cps.length));
    categories.forEach((cat, i) => {
      const x0 = x0s + i * group + (group - bw * cps.length) / 2;
      cps.forEach((c, j) => {
        const v = valueOf(c, cat);
        if (v === null || v === undefined) {
          // Nothing judged: a label, not an empty slot that reads as 0%.
          s.append(sv("text", { x: x0 + j * bw + bw / 2, y: yOf(0) - 4, class: "tick nj", "text-anchor": "middle" }, "n/j"));
          return;
        }
        // A 0% bar keeps a 2-pixel stub so it is visibly a zero, not a missing value.
        const top = Math.min(yOf(v), yOf(0) - 2);
        const r = sv("rect", { x: x0 + j * bw, y: top, width: bw - 2, height: yOf(0) - top, class: "bar bar-" + j + (v === 0 ? " zero" : "") });
        const ci = ciOf ? ciOf(c, cat) : null;
        r.append(sv("title", {}, `${c.label} · ${cat}: ${pct(v)}%` + (ci ? ` [${pct(ci[0])}–${pct(ci[1])}]` : "")));
        s.append(r);
        if (ci) {
          const cx = x0 + j * bw + (bw - 2) / 2;
          s.append(sv("line", { x1: cx, x2: cx, y1: yOf(ci[0]), y2: yOf(ci[1]), class: "ci-bar" }));
        }
      });
      const name = String(cat).length > 16 ? String(cat).slice(0, 15) + "…" : String(cat);
      const lx = x0s + i * group + group / 2, ly = yOf(0) + 12;
      const label = sv("text", { x: lx, y: ly, class: "tick", "text-anchor": rotate ? "end" : "middle" }, name);
      if (rotate) label.setAttribute("transform", `rotate(-30 ${lx} ${ly})`);
      s.append(label);
    });
    return s;
  }

  // Horizontal grouped bars for many categories (constraint types): one row per category.
  function hbarChart(title, cls, categories, cps, valueOf) {
    const left = 210, rowH = 6 + 9 * cps.length, top = 26, plotW = 300;
    const width = left + plotW + 50, height = top + categories.length * rowH + 24;
    const s = sv("svg", { class: "chart hbars " + cls, width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    s.append(sv("text", { x: 8, y: 16, class: "chart-title" }, title));
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      const x = left + v * plotW;
      s.append(sv("line", { x1: x, x2: x, y1: top - 4, y2: height - 20, class: "grid" }));
      s.append(sv("text", { x, y: height - 8, class: "tick", "text-anchor": "middle" }, String(v * 100)));
    }
    categories.forEach((cat, i) => {
      const y0 = top + i * rowH;
      s.append(sv("text", { x: left - 6, y: y0 + rowH / 2 + 3, class: "tick", "text-anchor": "end" }, String(cat)));
      cps.forEach((c, j) => {
        const v = valueOf(c, cat);
        if (v === null || v === undefined) {
          s.append(sv("text", { x: left + 4, y: y0 + 10 + j * 9, class: "tick nj" }, "n/j"));
          return;
        }
        const r = sv("rect", { x: left, y: y0 + 3 + j * 9, width: Math.max(2, v * plotW), height: 8, class: "bar bar-" + j + (v === 0 ? " zero" : "") });
        r.append(sv("title", {}, `${c.label} · ${cat}: ${pct(v)}%`));
        s.append(r);
      });
    });
    return s;
  }

  // VCIFBench Fig. 7 style: constraint types (rows) by checkpoints (columns), colour = CPR.
  function heatmap() {
    const types = [...new Set(DATA.checkpoints.flatMap((c) => Object.keys(c.types)))].sort();
    const cps = DATA.checkpoints;
    // Column labels are rotated: leave room above and to the right for the longest one.
    const longest = Math.max(...cps.map((c) => c.label.length));
    const cw = 54, ch = 18, left = 200, top = 24 + Math.min(200, longest * 4);
    const width = left + cps.length * cw + Math.min(260, longest * 5.5), height = top + types.length * ch + 10;
    const s = sv("svg", { class: "chart heatmap", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    cps.forEach((c, j) => {
      const x = left + j * cw + cw / 2;
      s.append(sv("text", { x, y: top - 8, class: "tick", transform: `rotate(-35 ${x} ${top - 8})` }, c.label));
    });
    types.forEach((t, i) => {
      const y = top + i * ch;
      s.append(sv("text", { x: left - 6, y: y + ch - 5, class: "tick", "text-anchor": "end" }, t));
      cps.forEach((c, j) => {
        const v = c.types[t];
        const fill = v === null || v === undefined ? "#eee" : `hsl(${Math.round(120 * v)}, 65%, ${45 + 20 * (1 - v)}%)`;
        const r = sv("rect", { x: left + j * cw, y, width: cw - 2, height: ch - 2, fill, class: "cell" });
        r.append(sv("title", {}, `${c.label} · ${t}: ${pct(v)}%`));
        s.append(r);
        const none = v === null || v === undefined;
        s.append(sv("text", { x: left + j * cw + cw / 2 - 1, y: y + ch - 5, class: "cell-value" + (none ? " nj" : ""), "text-anchor": "middle" }, none ? "n/j" : pct(v)));
      });
    });
    return s;
  }

  // Run legends toggle that run in every chart (a click hides it, another shows it again).
  function legend(entries, toggles) {
    return el("div", { class: "legend" }, entries.map(([name, color, cls]) => {
      const item = el("span", { class: "legend-item", "data-run": toggles ? name : null, title: toggles ? "click to hide / show" : null },
        el("span", { class: "swatch " + (cls || ""), style: color ? `background:${color}` : null }), name);
      if (toggles) item.addEventListener("click", () => { hidden.has(name) ? hidden.delete(name) : hidden.add(name); applyHidden(); });
      return item;
    }));
  }
  function thumbs(id, small) {
    const media = DATA.media[id];
    if (!media) return null;
    const h = small ? 36 : 72;
    const imgs = media.map((m) => el("img", { class: "thumb " + m.kind, src: m.src, alt: m.name, title: `${m.kind}: ${m.name}`,
      height: h, width: Math.round((m.w * h) / m.h) }));
    return small ? imgs : el("div", { class: "thumbs" }, imgs);
  }

  // -- sections -------------------------------------------------------------------------------

  function summary() {
    const head = ["run", "step", "items", "IPR", "CPR micro", "CPR macro", "TCSR", "TISR", "near-miss", "unjudged"];
    const rows = DATA.checkpoints.map((c) => el("tr", { "data-key": c.key },
      el("td", {}, c.run), el("td", {}, c.step === null ? "–" : c.step), el("td", {}, c.n_items),
      ["ipr", "cpr_micro", "cpr_macro", "tcsr", "tisr", "near_miss_rate"].map((k) => rateCell(c.m[k], (c.ci || {})[k])),
      el("td", { class: "num" }, c.unjudged)));
    document.getElementById("summary").append(el("table", { class: "grid-table" },
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))), el("tbody", {}, rows)));
  }

  function curves() {
    const box = document.getElementById("curves");
    box.append(legend(DATA.runs.map((r) => [r, runColor[r]]), true));
    const wrap = el("div", { class: "charts" });
    for (const [k, title] of DATA.metrics) wrap.append(lineChart(k, title));
    box.append(wrap);
  }

  function trainCurves() {
    const box = document.getElementById("train-curves");
    const runs = DATA.runs.filter((r) => DATA.train[r]);
    if (!runs.length) { box.append(el("p", { class: "muted" }, "No training log found beside these runs.")); return; }
    box.append(legend(runs.map((r) => [r, runColor[r]]), true));
    box.append(el("div", { class: "charts" }, DATA.train_keys.map(trainChart)));
    if (DATA.train_keys_left_out.length) box.append(el("p", { class: "muted" }, "Not drawn: " + DATA.train_keys_left_out.join(", ")));
  }

  function warnings() {
    const box = document.getElementById("warnings");
    if (DATA.item_set_warning) box.append(el("div", { class: "warning item-sets" }, "⚠ " + DATA.item_set_warning));
  }

  function pairCharts() {
    const a = byKey[state.a], b = byKey[state.b];
    const cps = [a, b].filter(Boolean);
    const box = document.getElementById("pair-charts");
    box.replaceChildren(legend(cps.map((c, j) => [c.label, null, "bar-" + j])));
    const dims = [...new Set(cps.flatMap((c) => Object.keys(c.dims)))].sort();
    const types = [...new Set(cps.flatMap((c) => Object.keys(c.types)))].sort();
    const ks = [...new Set(cps.flatMap((c) => Object.keys(c.by_k)))].sort((x, y) => x - y);
    if (a && b) {
      const ia = Object.keys(a.items), ib = new Set(Object.keys(b.items));
      const shared = ia.filter((id) => ib.has(id)).length;
      if (shared !== ia.length || shared !== ib.size) {
        box.append(el("div", { class: "warning pair-items" },
          `⚠ A (${a.label}) was evaluated on ${ia.length} items and B (${b.label}) on ${ib.size}, ${shared} shared: the rates and Δ compare different item sets.`));
      }
      box.append(deltaTable(a, b, dims));
    }
    const ci = (c, part, key) => ((c.ci || {})[part] || {})[key];
    const wrap = el("div", { class: "charts" },
      barChart("CPR by dimension (%)", "dimensions", dims, cps, (c, d) => c.dims[d], (c, d) => ci(c, "dims", d)),
      barChart("IPR by constraint count k (%)", "by-k", ks, cps, (c, k) => (c.by_k[k] || {}).ipr, (c, k) => ci(c, "by_k", k)));
    box.append(wrap, el("div", { class: "charts" }, hbarChart("CPR by constraint type (%)", "types", types, cps, (c, t) => c.types[t])));
  }

  // Metrics of A and B with their intervals and the difference B − A (points).
  function deltaTable(a, b, dims) {
    const rows = DATA.metrics.map(([k, t]) => [t, a.m[k], b.m[k], (a.ci || {})[k], (b.ci || {})[k]])
      .concat(dims.map((d) => [`CPR ${d}`, a.dims[d], b.dims[d], ((a.ci || {}).dims || {})[d], ((b.ci || {}).dims || {})[d]]));
    return el("table", { class: "grid-table delta-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "metric"), el("th", {}, `A · ${a.label}`), el("th", {}, `B · ${b.label}`), el("th", {}, "Δ (B − A)"))),
      el("tbody", {}, rows.map(([t, va, vb, ca, cb]) => {
        const known = va !== null && va !== undefined && vb !== null && vb !== undefined;
        const d = known ? vb - va : null;
        const cls = "num delta" + (d > 0 ? " up" : d < 0 ? " down" : "");
        return el("tr", {}, el("td", {}, t), rateCell(va, ca), rateCell(vb, cb),
          known ? el("td", { class: cls }, (d > 0 ? "+" : "") + (100 * d).toFixed(1)) : el("td", { class: "num nj delta" }, "n/j"));
      })));
  }

  function verdictList(c, id, changed) {
    const item = c.items[id];
    if (!item) return el("div", { class: "muted" }, "not evaluated here");
    const texts = (DATA.texts[id] || {}).constraints || {};
    return el("ul", { class: "verdicts" }, item.v.map(([cid, type, dim, passed, reason]) =>
      el("li", { class: (passed === 1 ? "pass" : passed === 0 ? "fail" : "undetermined") + (changed.includes(cid) ? " changed" : "") },
        el("b", {}, `${mark(passed)} ${cid} `), el("span", { class: "type" }, `${type} · ${dim}`),
        texts[cid] ? el("div", { class: "desc" }, texts[cid]) : null,
        reason ? el("div", { class: "reason" }, reason) : null)));
  }
  const responseOf = (c, id) => {
    const item = c.items[id];
    return el("pre", { class: "response" }, item && item.r !== null ? item.r : "(no response stored)");
  };

  function flipsTable() {
    const a = byKey[state.a], b = byKey[state.b];
    const box = document.getElementById("flips");
    box.replaceChildren();
    if (!a || !b) { box.append(el("p", { class: "muted" }, "Need two checkpoints.")); return; }
    const rows = [];
    let nReg = 0, nFix = 0;
    for (const id of Object.keys(a.items).sort()) {
      const oa = a.items[id].o, ob = b.items[id] ? b.items[id].o : null;
      if (oa === null || ob === null || oa === ob || a.items[id].s === "conflict") continue;
      const kind = oa === 1 ? "regression" : "fix";
      kind === "regression" ? nReg++ : nFix++;
      const va = Object.fromEntries(a.items[id].v.map((v) => [v[0], v[3]]));
      const changed = b.items[id].v.filter((v) => va[v[0]] !== v[3]).map((v) => v[0]);
      rows.push(el("tr", { class: "flip " + kind, "data-id": id },
        el("td", { class: "item-id" }, id, el("div", { class: "badge " + kind }, kind), thumbs(id, false),
          (DATA.texts[id] || {}).instruction ? el("div", { class: "instruction" }, DATA.texts[id].instruction) : null),
        el("td", {}, responseOf(a, id)), el("td", {}, verdictList(a, id, changed)),
        el("td", {}, responseOf(b, id)), el("td", {}, verdictList(b, id, changed))));
    }
    rows.sort((x, y) => (x.classList.contains("regression") ? 0 : 1) - (y.classList.contains("regression") ? 0 : 1));
    box.append(el("p", { class: "flip-count" }, `${a.label} → ${b.label}: ${nReg} regression(s), ${nFix} fix(es)`));
    if (!rows.length) { box.append(el("p", { class: "muted" }, "No item changed outcome.")); return; }
    box.append(el("table", { class: "grid-table flips" },
      el("thead", {}, el("tr", {}, el("th", {}, "item"), el("th", {}, `response · ${a.label}`), el("th", {}, "verdicts"),
        el("th", {}, `response · ${b.label}`), el("th", {}, "verdicts"))),
      el("tbody", {}, rows)));
  }

  function pickers() {
    const box = document.getElementById("pickers");
    const make = (which, text) => {
      const sel = el("select", { id: "pick-" + which }, DATA.checkpoints.map((c) =>
        el("option", { value: c.key, selected: c.key === state[which] ? "selected" : null }, c.label)));
      sel.addEventListener("change", () => { state[which] = sel.value; pairCharts(); flipsTable(); });
      return el("label", {}, text, sel);
    };
    box.append(make("a", "A (before) "), make("b", " B (after) "));
  }

  function browser() {
    const box = document.getElementById("samples");
    const sel = el("select", { id: "browse-checkpoint" }, DATA.checkpoints.map((c) =>
      el("option", { value: c.key, selected: c.key === state.b ? "selected" : null }, c.label)));
    const filter = el("select", { id: "browse-filter" }, ["all", "pass", "fail", "undetermined"].map((f) => el("option", { value: f }, f)));
    const search = el("input", { id: "browse-search", type: "search", placeholder: "id or text" });
    const list = el("div", { id: "sample-list" });
    const LIMIT = 60;
    function render() {
      const c = byKey[sel.value];
      const q = search.value.toLowerCase();
      const ids = Object.keys(c.items).sort().filter((id) => {
        const it = c.items[id];
        if (filter.value !== "all" && outcomeClass(it.o) !== filter.value) return false;
        const text = id + " " + (it.r || "") + " " + ((DATA.texts[id] || {}).instruction || "");
        return !q || text.toLowerCase().includes(q);
      });
      list.replaceChildren(el("p", { class: "muted" }, `${ids.length} item(s)` + (ids.length > LIMIT ? `, first ${LIMIT} shown` : "")));
      for (const id of ids.slice(0, LIMIT)) {
        const it = c.items[id];
        list.append(el("details", { class: "sample " + outcomeClass(it.o), "data-id": id },
          el("summary", {}, el("span", { class: "badge " + outcomeClass(it.o) }, outcomeClass(it.o)), " ", id, thumbs(id, true)),
          thumbs(id, false),
          (DATA.texts[id] || {}).instruction ? el("div", { class: "instruction" }, DATA.texts[id].instruction) : null,
          responseOf(c, id), verdictList(c, id, [])));
      }
    }
    for (const node of [sel, filter]) node.addEventListener("change", render);
    search.addEventListener("input", render);
    box.append(el("div", { class: "controls" }, sel, " ", filter, " ", search), list);
    const note = DATA.media_note;
    if (note && (note.capped_items.length || note.failed.length)) {
      box.append(el("p", { class: "muted media-note" },
        (note.capped_items.length ? `Thumbnails of ${note.capped_items.length} item(s) left out to keep the page under ${note.max_kb} KB of media. ` : "") +
        (note.failed.length ? `Unreadable media: ${note.failed.join("; ")}.` : "")));
    }
    render();
  }

  function skipped() {
    const box = document.getElementById("skipped");
    if (!DATA.skipped.length) { box.append(el("p", { class: "muted" }, "None.")); return; }
    box.append(el("ul", {}, DATA.skipped.map((s) => el("li", {}, el("code", {}, s.path), ": " + s.reason))));
  }

  warnings();
  summary();
  trainCurves();
  curves();
  pickers();
  pairCharts();
  document.getElementById("heatmap").append(heatmap());
  flipsTable();
  browser();
  skipped();
  applyHidden();
  // Page-space boxes of the first training curve and thumbnails: lets a headless test crop its screenshot.
  const box = (sel) => { const n = document.querySelector(sel); if (!n) return null; const r = n.getBoundingClientRect();
    return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; };
  document.body.setAttribute("data-layout", JSON.stringify({ train: box("#train-curves svg.train-curve"),
    flip_thumb: box("#flips img.thumb"), sample_thumb: box("#samples img.thumb") }));
  document.body.setAttribute("data-rendered", "true");
})();
"""
