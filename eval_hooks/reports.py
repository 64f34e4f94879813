"""Finding and reading evaluation folders for ``ifpo compare``; flips between checkpoints; exports.

A folder given to ``ifpo compare`` is one *run*; its checkpoints are the evaluation folders below
it (``report.json``), e.g. a training ``output_dir`` (``eval/checkpoint-<step>/``) or one
``ifpo evaluate --out`` folder. A report that does not parse or lacks the REPORT keys, and a folder
with answers but no report (an evaluation still running or killed), is *skipped*: named with the
reason, never fatal.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ifpo.eval_hooks.core import (
    HEADLINE,
    REPORT,
    RESPONSES,
    VERDICTS,
    headline_metrics,
    read_responses,
    step_from_path,
)
from ifpo.verifiers.io import loads_strict, read_jsonl_objects
from ifpo.verifiers.metrics import item_outcome

REQUIRED_KEYS = ("n_items", "ipr", "cpr_micro", "cpr_macro", "cpr_by_dimension", "by_constraint_type", "by_k", "items")
MAX_DEPTH = 4  # how deep below a run folder evaluation folders are looked for

# Columns of the terminal table / CSV: (report key, short title).
SUMMARY_COLUMNS = (
    ("ipr", "IPR"),
    ("cpr_micro", "CPR mi"),
    ("cpr_macro", "CPR ma"),
    ("tcsr", "TCSR"),
    ("tisr", "TISR"),
    ("near_miss_rate", "near-miss"),
)


@dataclass
class Checkpoint:
    run: str
    step: int | None
    path: Path
    report: dict[str, Any]
    responses: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> full ItemResult dict
    name: str = ""  # folder name relative to the run (for reports without a step)
    # What was read but not usable (NaN rates, unreadable response/verdict lines): drawn without it, and
    # named by ``ifpo compare`` (exit 1, docs/exit-codes.md) so a damaged evaluation is never silent.
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.step is None and self.name in ("", "."):
            return self.run  # a run that is one evaluation (an endpoint, a base model)
        where = f"step {self.step}" if self.step is not None else self.name
        return f"{self.run} @ {where}"

    def outcomes(self) -> dict[str, bool | None]:
        """Item id -> passed every constraint (True), failed one (False), undetermined (None); conflict items left out."""
        return {
            it["id"]: item_outcome(it["verdicts"])
            for it in self.report["items"]
            if it.get("structure") != "conflict"
        }

    def item_verdicts(self, item_id: str) -> list[dict[str, Any]]:
        full = self.verdicts.get(item_id)
        if full is not None:
            return full["verdicts"]
        for it in self.report["items"]:
            if it["id"] == item_id:
                return it["verdicts"]
        return []


@dataclass
class Skipped:
    path: Path
    reason: str


@dataclass
class Comparison:
    runs: list[str]
    checkpoints: list[Checkpoint]
    skipped: list[Skipped]
    roots: dict[str, Path] = field(default_factory=dict)  # run -> the folder it was found under


def _walk(root: Path, depth: int = 0) -> Iterable[Path]:
    yield root
    if depth >= MAX_DEPTH:
        return
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return
    for child in children:
        yield from _walk(child, depth + 1)


def _read_jsonl_by_id(path: Path) -> dict[str, dict[str, Any]]:
    records, _ = read_jsonl_objects(path)
    return {rec["id"]: rec for rec in records if isinstance(rec.get("id"), str)}


def _nan_rates(report: Mapping[str, Any]) -> list[str]:
    """Report fields holding NaN where a rate belongs (older ifpo wrote them; drawn as no value)."""
    def nan(x: Any) -> bool:
        return isinstance(x, float) and x != x

    found = [k for k in (*HEADLINE, "n_items") if nan(report.get(k))]
    dims = report.get("cpr_by_dimension")
    if isinstance(dims, dict):
        found += [f"cpr_by_dimension.{k}" for k, v in dims.items() if nan(v)]
    for key, rate in (("by_constraint_type", "cpr"), ("by_k", "ipr")):
        table = report.get(key)
        if isinstance(table, dict):
            found += [f"{key}.{k}.{rate}" for k, v in table.items() if isinstance(v, dict) and nan(v.get(rate))]
    return found


def _is_rate(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _verdicts_problem(item: Mapping[str, Any]) -> str | None:
    verdicts = item.get("verdicts")
    if not isinstance(verdicts, list):
        return f"verdicts: expected a list, got {type(verdicts).__name__}"
    for n, v in enumerate(verdicts):
        if not (isinstance(v, dict) and isinstance(v.get("constraint_id"), str) and v.get("passed") in (True, False, None)
                and "passed" in v):
            return f"verdicts[{n}]: expected an object with constraint_id and passed (true, false or null)"
    return None


def report_problem(report: Mapping[str, Any]) -> str | None:
    """Why a parsed report cannot be drawn (``None``: it can), naming the field.

    Every checkpoint's report feeds one dashboard, so a report edited by hand or written by
    another tool must be skipped by name here, not fail the page for every run.
    """
    for key in (*HEADLINE, "n_items"):
        if key in report and not _is_rate(report[key]):
            return f"{key}: expected a number or null, got {type(report[key]).__name__}"
    if not isinstance(report["n_items"], int) or isinstance(report["n_items"], bool):
        return f"n_items: expected an integer, got {type(report['n_items']).__name__}"
    for key in ("evaluation", "unjudged", "judge"):
        if report.get(key) is not None and not isinstance(report[key], dict):
            return f"{key}: expected an object, got {type(report[key]).__name__}"
    dims = report["cpr_by_dimension"]
    if not isinstance(dims, dict) or not all(isinstance(k, str) and _is_rate(v) for k, v in dims.items()):
        return "cpr_by_dimension: expected an object of dimension -> rate"
    for key, rate in (("by_constraint_type", "cpr"), ("by_k", "ipr")):
        table = report[key]
        if not isinstance(table, dict) or not all(isinstance(v, dict) and _is_rate(v.get(rate)) for v in table.values()):
            return f"{key}: expected an object of name -> {{{rate}: rate, ...}}"
    seen: set[str] = set()
    for n, it in enumerate(report["items"]):
        if not isinstance(it.get("id"), str):
            return f"items[{n}].id: expected a string, got {type(it.get('id')).__name__}"
        if it["id"] in seen:
            return f"items[{n}].id: {it['id']!r} appears twice"
        seen.add(it["id"])
        problem = _verdicts_problem(it)
        if problem:
            return f"items[{n}].{problem}"
    return None


def load_checkpoint(folder: Path, run: str, run_root: Path) -> Checkpoint | Skipped:
    """One evaluation folder, or why it is skipped."""
    path = folder / REPORT
    try:
        # NaN kept: reports of earlier ifpo versions hold it (drawn as null); a lone surrogate or
        # a 5000-digit number would fail later, in the dashboard of every run.
        report = loads_strict(path.read_text(encoding="utf-8"), allow_nan=True)
    except (OSError, UnicodeDecodeError) as exc:
        return Skipped(path, f"unreadable: {exc}")
    except json.JSONDecodeError as exc:
        return Skipped(path, f"corrupt JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")
    except ValueError as exc:
        return Skipped(path, f"corrupt JSON ({exc})")
    except RecursionError:
        return Skipped(path, "corrupt JSON (nested too deeply to parse)")
    if not isinstance(report, dict):
        return Skipped(path, f"not a report: top level is {type(report).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in report]
    if missing:
        return Skipped(path, f"not a complete ifpo report: missing {', '.join(missing)}")
    if not isinstance(report["items"], list) or not all(isinstance(i, dict) and "id" in i and "verdicts" in i
                                                        for i in report["items"]):
        return Skipped(path, "not a complete ifpo report: 'items' must be a list of {id, verdicts}")
    problem = report_problem(report)
    if problem:
        return Skipped(path, f"not an ifpo report: {problem}")
    evaluation = report.get("evaluation") or {}
    step = evaluation.get("step") if isinstance(evaluation.get("step"), int) else step_from_path(folder)
    warnings = []
    nans = _nan_rates(report)
    if nans:
        # Worded without the token itself: the page and --json must stay free of it (standard JSON).
        warnings.append(f"{path}: not a number where a rate belongs ({', '.join(nans[:6])}"
                        f"{' ...' if len(nans) > 6 else ''}); drawn as no value")
    responses, damaged = read_responses(folder / RESPONSES)
    if damaged:
        warnings.append(f"{folder / RESPONSES}: unreadable line(s) or records without a string id and response; "
                        "those responses are left out of the page")
    # verdicts.jsonl records whose verdicts can be drawn; others fall back to the report's own.
    verdict_records, bad_lines = read_jsonl_objects(folder / VERDICTS)
    verdicts = {rec["id"]: rec for rec in verdict_records
                if isinstance(rec.get("id"), str) and _verdicts_problem(rec) is None}
    if bad_lines or len(verdicts) < len(verdict_records):
        warnings.append(f"{folder / VERDICTS}: {bad_lines + len(verdict_records) - len(verdicts)} unreadable or "
                        "malformed record(s); the report's own verdicts are drawn for them")
    name = "." if folder == run_root else folder.relative_to(run_root).as_posix()
    return Checkpoint(run, step, folder, report, responses, verdicts, name, warnings)


def _run_name(folder: Path, taken: set[str]) -> str:
    resolved = folder.resolve()
    base = resolved.parent.name if resolved.name == "eval" else resolved.name
    name, n = base or str(folder), 2
    while name in taken:
        name, n = f"{base}#{n}", n + 1
    taken.add(name)
    return name


def discover(folders: Sequence[str | Path]) -> Comparison:
    """Every checkpoint evaluation under each folder (one run per folder), sorted by step; skips named."""
    runs: list[str] = []
    checkpoints: list[Checkpoint] = []
    skipped: list[Skipped] = []
    taken: set[str] = set()
    roots: dict[str, Path] = {}
    for arg in folders:
        root = Path(arg)
        if not root.is_dir():
            skipped.append(Skipped(root, "not a folder"))
            continue
        run = _run_name(root, taken)
        found: list[Checkpoint] = []
        for folder in _walk(root):
            if (folder / REPORT).is_file():
                loaded = load_checkpoint(folder, run, root)
                (found.append if isinstance(loaded, Checkpoint) else skipped.append)(loaded)
            elif (folder / RESPONSES).is_file():
                skipped.append(Skipped(folder, "partial evaluation: responses.jsonl without report.json "
                                               "(still running or interrupted; `ifpo evaluate` resumes it)"))
        if not found:
            if not any(s.path == root or root in s.path.parents for s in skipped):
                skipped.append(Skipped(root, "no report.json found below it"))
            continue
        runs.append(run)
        roots[run] = root
        found.sort(key=lambda c: (c.step is None, c.step if c.step is not None else 0, c.name))
        checkpoints += found
    return Comparison(runs, checkpoints, skipped, roots)


def find_checkpoint(comparison: Comparison, spec: str) -> Checkpoint:
    """A checkpoint named ``RUN@STEP``, ``RUN@first``/``RUN@last``, ``RUN`` (its last), ``STEP`` (of the first run) or a folder."""
    cps = comparison.checkpoints
    if not cps:
        raise ValueError("no checkpoints to choose from")
    path = Path(spec)
    for c in cps:
        if path.exists() and c.path.resolve() == path.resolve():
            return c
    if spec in comparison.runs:
        return [c for c in cps if c.run == spec][-1]
    run, _, step = spec.rpartition("@") if "@" in spec else (comparison.runs[0], "@", spec)
    if run not in comparison.runs:
        raise ValueError(f"checkpoint {spec!r}: no run named {run!r} (runs: {', '.join(comparison.runs)})")
    mine = [c for c in cps if c.run == run]
    if step in ("first", "last"):
        return mine[0] if step == "first" else mine[-1]
    for c in mine:
        if str(c.step) == step or c.name == step:
            return c
    have = ", ".join(str(c.step) if c.step is not None else c.name for c in mine)
    raise ValueError(f"checkpoint {spec!r}: run {run!r} has no step {step!r} (it has: {have})")


def model_of(checkpoint: Checkpoint) -> tuple[str, str | None] | None:
    """(model, adapter) the checkpoint's answers came from, as its report records them; None when unrecorded."""
    evaluation = checkpoint.report.get("evaluation") or {}
    model = evaluation.get("model")
    return (str(model), evaluation.get("adapter")) if model else None


def same_base_model(a: Checkpoint, b: Checkpoint) -> bool:
    """Whether two checkpoints start from the same base model (so B's failures on A's passes are regressions of
    that model): two checkpoints of one training run, or two evaluations recording the same model; False when
    either records none."""
    if a.run == b.run and a.step is not None and b.step is not None:
        return True
    ma, mb = model_of(a), model_of(b)
    return ma is not None and mb is not None and ma[0] == mb[0]


def default_pair(comparison: Comparison) -> tuple[Checkpoint, Checkpoint] | None:
    """Each run is compared with its own baseline: the first and last checkpoint of the last run that has two.

    Where every run is one evaluation, the first and the last are paired only when they record the same
    base model; else None (the caller asks for --a/--b). Pairing the first run's step 0 with another run by
    default called the differences of unrelated models regressions.
    """
    cps = comparison.checkpoints
    for run in reversed(comparison.runs):
        own = [c for c in cps if c.run == run]
        if len(own) >= 2:
            return own[0], own[-1]
    if len(cps) >= 2 and same_base_model(cps[0], cps[-1]):
        return cps[0], cps[-1]
    return None


def flips(a: Checkpoint, b: Checkpoint) -> dict[str, list[dict[str, Any]]]:
    """Items passing in ``a`` and failing in ``b`` (regressions), and the reverse (fixes).

    Each entry names the constraints whose verdict changed. Undetermined outcomes (unjudged
    verdicts) are not flips: nothing is known to have changed.
    """
    out_a, out_b = a.outcomes(), b.outcomes()
    result: dict[str, list[dict[str, Any]]] = {"regressions": [], "fixes": []}
    for item_id, before in out_a.items():
        after = out_b.get(item_id)
        if before is None or after is None or before == after:
            continue
        va = {v["constraint_id"]: v["passed"] for v in a.item_verdicts(item_id)}
        vb = {v["constraint_id"]: v["passed"] for v in b.item_verdicts(item_id)}
        changed = [cid for cid in vb if va.get(cid) != vb[cid]]
        result["regressions" if before else "fixes"].append({"id": item_id, "changed": changed})
    return result


# --- exports -----------------------------------------------------------------------------------


def checkpoint_row(c: Checkpoint) -> dict[str, Any]:
    r = c.report
    un = r.get("unjudged") or {}
    row: dict[str, Any] = {"run": c.run, "step": c.step, "label": c.label, "path": str(c.path), "n_items": r["n_items"]}
    row.update({k: r.get(k) for k, _ in SUMMARY_COLUMNS})
    row.update({"unjudged_constraints": un.get("constraints"), "unjudged_items": un.get("items_undetermined"),
                "unjudged_task_gates": un.get("task_gates")})
    return row


def to_json(comparison: Comparison, pair: tuple[Checkpoint, Checkpoint] | None) -> dict[str, Any]:
    """Everything the dashboard summarises, as data: per checkpoint metrics, flips of the chosen pair, skips."""
    out: dict[str, Any] = {
        "runs": comparison.runs,
        "checkpoints": [
            {
                **checkpoint_row(c),
                "metrics": headline_metrics(c.report, prefix=""),
                "cpr_by_dimension": c.report["cpr_by_dimension"],
                "cpr_by_constraint_type": {t: v.get("cpr") for t, v in c.report["by_constraint_type"].items()},
                "ipr_by_k": {k: v.get("ipr") for k, v in c.report["by_k"].items()},
            }
            for c in comparison.checkpoints
        ],
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in comparison.skipped],
        "warnings": [w for c in comparison.checkpoints for w in c.warnings],
    }
    if pair is not None:
        out["flips"] = {"a": pair[0].label, "b": pair[1].label, **flips(*pair)}
    return out


def to_csv(comparison: Comparison) -> str:
    """One row per checkpoint: headline metrics, then CPR per dimension and per constraint type."""
    dims = sorted({d for c in comparison.checkpoints for d in c.report["cpr_by_dimension"]})
    types = sorted({t for c in comparison.checkpoints for t in c.report["by_constraint_type"]})
    buf = io.StringIO()
    rows = []
    for c in comparison.checkpoints:
        row = checkpoint_row(c)
        row.update({f"cpr/{d}": c.report["cpr_by_dimension"].get(d) for d in dims})
        row.update({f"cpr_type/{t}": (c.report["by_constraint_type"].get(t) or {}).get("cpr") for t in types})
        rows.append(row)
    fields = list(rows[0]) if rows else ["run", "step"]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def format_comparison(comparison: Comparison, pair: tuple[Checkpoint, Checkpoint] | None, *, max_ids: int = 10) -> str:
    """The terminal table: one line per checkpoint, CPR per dimension, flips of the chosen pair, skips."""
    dims = sorted({d for c in comparison.checkpoints for d in c.report["cpr_by_dimension"]})
    head = ["run", "step", "items", *[t for _, t in SUMMARY_COLUMNS], *dims, "unjudged"]
    rows = []
    for c in comparison.checkpoints:
        r = c.report
        rows.append([
            c.run, "-" if c.step is None else str(c.step), str(r["n_items"]),
            *[_pct(r.get(k)) for k, _ in SUMMARY_COLUMNS],
            *[_pct(r["cpr_by_dimension"].get(d)) for d in dims],
            str((r.get("unjudged") or {}).get("constraints", "-")),
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    lines += ["  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths)))
              for row in rows]
    lines.append("(rates in %; dimension columns are CPR per dimension; unjudged = constraints not judged)")
    if pair is not None:
        f = flips(*pair)
        # Regressions and fixes only between states of one base model; else what passes only in A or in B.
        names = ({"regressions": "regressions", "fixes": "fixes"} if same_base_model(*pair)
                 else {"regressions": f"pass only in {pair[0].label}", "fixes": f"pass only in {pair[1].label}"})
        if same_base_model(*pair):
            lines.append(f"\nflips {pair[0].label} -> {pair[1].label}: "
                         f"{len(f['regressions'])} regression(s), {len(f['fixes'])} fix(es)")
        else:
            lines.append(f"\ndifferences {pair[0].label} vs {pair[1].label} (not one base model): "
                         f"{len(f['regressions'])} and {len(f['fixes'])} item(s) pass on one side only")
        for kind in ("regressions", "fixes"):
            ids = [e["id"] for e in f[kind]]
            if ids:
                more = f" (+{len(ids) - max_ids} more)" if len(ids) > max_ids else ""
                lines.append(f"  {names[kind]}: {', '.join(ids[:max_ids])}{more}")
    warning = item_set_warning(comparison.checkpoints)
    if warning:
        lines.append(f"WARNING: {warning}")
    for s in comparison.skipped:
        lines.append(f"skipped {s.path}: {s.reason}")
    return "\n".join(lines)


def load_item_texts(paths: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """Instruction and constraint descriptions by item id, for the sample browser (best effort, no validation)."""
    out: dict[str, dict[str, Any]] = {}
    for p in paths:
        path = Path(p)
        if not path.is_file():
            continue
        for rec in _read_jsonl_by_id(path).values():
            out.setdefault(rec["id"], {
                "instruction": rec.get("instruction", ""),
                "system": rec.get("system") or "",
                "structure": rec.get("structure", ""),
                "constraints": {c.get("id"): c.get("description", "") for c in rec.get("constraints") or []
                                if isinstance(c, Mapping)},
                "media": _media_paths(rec, path.parent),
            })
    return out


# --- uncertainty -------------------------------------------------------------------------------

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 400


def wilson(successes: float, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval of a proportion (95% by default); None without observations.

    Wilson rather than the normal approximation because the dashboards show rates over 10-50 items,
    often at 0% or 100%, where the normal interval collapses to a point or leaves [0, 1].
    """
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def _bootstrap(items: list[Mapping[str, Any]], statistic, seed: int = 0) -> list[float] | None:
    """Percentile bootstrap over items (seeded: the same report gives the same interval)."""
    import random

    if len(items) < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        value = statistic([items[rng.randrange(len(items))] for _ in items])
        if value is not None:
            values.append(value)
    if len(values) < BOOTSTRAP_RESAMPLES // 2:
        return None
    values.sort()
    return [values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))]]


def rate_intervals(report: Mapping[str, Any]) -> dict[str, Any]:
    """95% intervals for every rate of a report: Wilson for proportions (IPR, CPR micro, near-miss, each
    dimension, constraint type and constraint count), a percentile bootstrap over items for the means of
    per-item or per-type rates (CPR macro, TCSR, TISR). Counts come from the per-item verdicts, so the
    intervals use exactly the denominators the rates use (unjudged verdicts and undetermined items out)."""
    from ifpo.verifiers.metrics import constraint_metrics, task_gated_metrics

    items = [i for i in report.get("items", []) if i.get("structure") != "conflict"]
    outcomes = [item_outcome(i["verdicts"]) for i in items]
    decided = [o for o in outcomes if o is not None]
    failed = [i for i, o in zip(items, outcomes) if o is False]
    near = sum(1 for i in failed if sum(1 for v in i["verdicts"] if v["passed"] is False) == 1)
    verdicts = [v for i in items for v in i["verdicts"] if v["passed"] is not None]
    dims: dict[str, list[int]] = {}
    types: dict[str, list[int]] = {}
    by_k: dict[str, list[int]] = {}
    for v in (v for i in items for v in i["verdicts"]):
        for table, key in ((dims, v.get("dimension", "unknown")), (types, v.get("type", ""))):
            entry = table.setdefault(key, [0, 0])  # a key with only unjudged verdicts gets None, as its rate
            if v["passed"] is not None:
                entry[0] += bool(v["passed"])
                entry[1] += 1
    for i, o in zip(items, outcomes):
        if o is not None:
            entry = by_k.setdefault(str(len(i["verdicts"])), [0, 0])
            entry[0] += bool(o)
            entry[1] += 1
    return {
        "ipr": wilson(sum(decided), len(decided)),
        "cpr_micro": wilson(sum(bool(v["passed"]) for v in verdicts), len(verdicts)),
        "near_miss_rate": wilson(near, len(failed)),
        "cpr_macro": _bootstrap(items, lambda s: constraint_metrics(s)["cpr_macro"]),
        "tcsr": _bootstrap(items, lambda s: task_gated_metrics(s)["tcsr"], seed=1),
        "tisr": _bootstrap(items, lambda s: task_gated_metrics(s)["tisr"], seed=2),
        "dims": {d: wilson(p, n) for d, (p, n) in sorted(dims.items())},
        "types": {t: wilson(p, n) for t, (p, n) in sorted(types.items())},
        "by_k": {k: wilson(p, n) for k, (p, n) in sorted(by_k.items())},
        "n": {"items_decided": len(decided), "constraints_judged": len(verdicts)},
    }


# --- item sets ---------------------------------------------------------------------------------


def item_set_groups(checkpoints: Sequence[Checkpoint]) -> list[dict[str, Any]]:
    """Checkpoints grouped by the exact set of item ids they were evaluated on (one group: comparable)."""
    groups: dict[frozenset, list[Checkpoint]] = {}
    for c in checkpoints:
        groups.setdefault(frozenset(i["id"] for i in c.report["items"]), []).append(c)
    shared = frozenset.intersection(*groups) if groups else frozenset()
    return [{"labels": [c.label for c in cps], "n_items": len(ids), "shared": len(shared)}
            for ids, cps in groups.items()]


def item_set_warning(checkpoints: Sequence[Checkpoint]) -> str | None:
    """A one-line warning when the checkpoints were not all evaluated on the same items, else None."""
    groups = item_set_groups(checkpoints)
    if len(groups) < 2:
        return None
    parts = "; ".join(f"{', '.join(g['labels'][:3])}{' ...' if len(g['labels']) > 3 else ''}: {g['n_items']} items"
                      for g in groups)
    return (f"checkpoints were evaluated on different item sets ({parts}; {groups[0]['shared']} items shared): "
            "their rates are not directly comparable")


# --- training logs -----------------------------------------------------------------------------

# Training-log keys drawn beside the eval curves: DPO's loss, rewards and per-kind accuracies, GRPO's
# reward means and checklist rates. eval_* keys are the checkpoint metrics already drawn.
TRAIN_KEY_PREFIXES = ("rewards/", "checklist/")
TRAIN_KEYS = ("loss", "reward", "kl", "grad_norm")
MAX_TRAIN_KEYS = 16


def train_key(key: str) -> bool:
    if key.startswith("eval_") or key.endswith("/std") or key.startswith("checklist/pass_rate/"):
        return False
    return key in TRAIN_KEYS or key.startswith(TRAIN_KEY_PREFIXES)


def load_history(run_root: Path) -> list[dict[str, Any]]:
    """A training run's log records: ifpo's ``log_history.jsonl``, else the newest checkpoint's
    ``trainer_state.json`` (transformers'); [] for an evaluation folder that is not a training run.
    A resumed run appends records again from the resume step: the last record per step and key wins."""
    roots = [run_root, run_root.parent] if run_root.resolve().name == "eval" else [run_root]
    records: list[dict[str, Any]] = []
    for root in roots:
        if (root / "log_history.jsonl").is_file():
            records, _ = read_jsonl_objects(root / "log_history.jsonl")
            break
        states = sorted(root.glob("checkpoint-*/trainer_state.json"), key=lambda p: step_from_path(p.parent) or -1)
        if states:
            try:
                state = json.loads(states[-1].read_text(encoding="utf-8"))
                records = (state.get("log_history") if isinstance(state, dict) else None) or []
            except (OSError, ValueError, RecursionError):
                records = []
            break
    records = records if isinstance(records, list) else []  # a trainer_state.json of another shape
    return [r for r in records if isinstance(r, dict) and isinstance(r.get("step"), int)]


def train_series(records: Iterable[Mapping[str, Any]]) -> dict[str, list[list[float]]]:
    """Key -> [[step, value], ...] (sorted by step, one value per step) for the keys ``train_key`` keeps."""
    by_key: dict[str, dict[int, float]] = {}
    for r in records:
        for k, v in r.items():
            if train_key(k) and isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
                by_key.setdefault(k, {})[int(r["step"])] = float(v)
    return {k: [[s, v] for s, v in sorted(steps.items())] for k, steps in by_key.items()}


def _media_paths(record: Mapping[str, Any], root: Path) -> dict[str, list[str]]:
    """The item's images and videos as absolute paths, kept only when they resolve inside ``root`` and exist."""
    from ifpo.verifiers.media import MediaError, confined_path

    media = record.get("media") if isinstance(record.get("media"), Mapping) else {}
    out: dict[str, list[str]] = {}
    for key in ("images", "videos"):
        paths = []
        for rel in media.get(key) or []:
            try:
                full = confined_path(root, rel)
            except (MediaError, TypeError, ValueError):
                continue
            if Path(full).is_file():
                paths.append(str(full))
        out[key] = paths
    return out
