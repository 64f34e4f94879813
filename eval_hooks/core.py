"""What every evaluation writes, however it was generated (training callback or ``ifpo evaluate``).

One evaluation folder holds::

    responses.jsonl   {"id", "response"} per item, in item order once complete
    verdicts.jsonl    the checklist's full ItemResult per item (verdicts with reasons, params, task gate)
    report.json       ``ifpo.verifiers.score.build_report`` (stable keys) + ``"evaluation"``: how it was made

``report.json`` is written last and atomically: its presence means the folder is complete, which
is how a resumed training run and ``ifpo compare`` tell finished evaluations from partial ones.
Scoring goes through ``verifiers`` only (one verdict, computed one way: docs/DESIGN.md, "The verdict contract").
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.io import read_jsonl_objects, write_json_atomic, write_jsonl_atomic
from ifpo.verifiers.score import build_report

RESPONSES = "responses.jsonl"
VERDICTS = "verdicts.jsonl"
REPORT = "report.json"
EVAL_SUBDIR = "eval"
LOG_PREFIX = "eval_ifpo/"
CHECKPOINT_RE = re.compile(r"checkpoint-(\d+)$")

# Headline metrics sent to trackers: REPORT key -> tracker name (under LOG_PREFIX).
HEADLINE = {
    "ipr": "ipr",
    "cpr_micro": "cpr_micro",
    "cpr_macro": "cpr_macro",
    "tcsr": "tcsr",
    "tisr": "tisr",
    "near_miss_rate": "near_miss_rate",
    "violations_per_failed": "violations_per_failed",
}


def checkpoint_eval_dir(output_dir: str | Path, step: int) -> Path:
    """``<output_dir>/eval/checkpoint-<step>``: named like the Trainer's checkpoints so they pair up."""
    return Path(output_dir) / EVAL_SUBDIR / f"checkpoint-{int(step)}"


def headline_metrics(report: Mapping[str, Any], prefix: str = LOG_PREFIX) -> dict[str, float]:
    """Scalar metrics of a report for trackers: IPR, CPR micro/macro, per dimension, TCSR/TISR, unjudged.

    Undefined rates (``None``: nothing judged) are left out, since trackers take numbers only.
    """
    out: dict[str, float] = {}
    for key, name in HEADLINE.items():
        if report.get(key) is not None:
            out[prefix + name] = float(report[key])
    for dim, value in (report.get("cpr_by_dimension") or {}).items():
        if value is not None:
            out[f"{prefix}cpr/{dim}"] = float(value)
    unjudged = report.get("unjudged") or {}
    for key in ("constraints", "items_undetermined", "task_gates"):
        if key in unjudged:
            out[f"{prefix}unjudged/{key}"] = float(unjudged[key])
    if "n_items" in report:
        out[prefix + "n_items"] = float(report["n_items"])
    judge = report.get("judge") or {}
    if isinstance(judge.get("failures"), (int, float)):
        out[prefix + "judge/failures"] = float(judge["failures"])  # a dashboard shows a dead judge next to the dip
    return out


# --- responses ---------------------------------------------------------------------------------


def read_responses(path: Path) -> tuple[dict[str, str], bool]:
    """Responses already in ``path`` (id -> text), and whether the file needs repair.

    A crash can leave a torn last line; it (and any other unreadable line) is dropped and reported
    through the flag, so the caller rewrites the file before appending to it again.
    """
    records, skipped = read_jsonl_objects(path)
    responses: dict[str, str] = {}
    damaged = skipped > 0
    for rec in records:
        if not isinstance(rec.get("id"), str) or not isinstance(rec.get("response"), str):
            damaged = True
            continue
        responses[rec["id"]] = rec["response"]
    return responses, damaged


class ResponseLog:
    """Append-only ``responses.jsonl``: each line is flushed and fsynced, so a crash loses at most one."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = open(path, "a", encoding="utf-8")

    def append(self, item_id: str, response: str) -> None:
        self._fh.write(json.dumps({"id": item_id, "response": response}, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> ResponseLog:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --- scoring -----------------------------------------------------------------------------------


def score_and_write(
    items: Sequence[Mapping[str, Any]],
    responses: Mapping[str, str],
    out_dir: Path,
    evaluator: ChecklistEvaluator,
    evaluation: Mapping[str, Any],
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Score ``responses`` with the full verifier suite and write the three files (report last).

    ``evaluation`` (step, model, generation settings, ...) is stored under ``report["evaluation"]``.
    Items without a response are listed in ``missing_responses`` and left unscored.
    """
    judge = evaluator.judge
    before = judge.stats.as_dict() if judge is not None else None
    start = time.perf_counter()
    pairs = [(item, responses[item["id"]]) for item in items if item["id"] in responses]
    missing = [item["id"] for item in items if item["id"] not in responses]
    results = evaluator.evaluate_many(pairs, progress=progress)
    judge_stats = None
    if judge is not None:
        # Stats are cumulative over the judge's life (the callback reuses one judge): report this run's share.
        after = judge.stats.as_dict()
        judge_stats = {k: after[k] - before[k] for k in after if isinstance(after[k], (int, float))}
        if judge_stats.get("failures"):
            judge_stats["first_error"] = after.get("first_error")
        if judge_stats.get("media_failures"):
            judge_stats["first_media_error"] = after.get("first_media_error")
    report = build_report(results, missing=missing, judge_stats=judge_stats, items={i["id"]: i for i in items},
                          mode=evaluator.mode)
    report["evaluation"] = {**evaluation, "score_seconds": round(time.perf_counter() - start, 3)}
    write_jsonl_atomic(out_dir / RESPONSES, ({"id": i["id"], "response": responses[i["id"]]} for i in items
                                             if i["id"] in responses))
    write_jsonl_atomic(out_dir / VERDICTS, (r.to_dict() for r in results))
    write_json_atomic(out_dir / REPORT, report)
    return report


def step_from_path(path: Path) -> int | None:
    """The step of a ``checkpoint-<N>`` folder (or of its parent), else None."""
    for part in (path, path.parent):
        m = CHECKPOINT_RE.search(part.name)
        if m:
            return int(m.group(1))
    return None
