"""Checklist evaluation: (item, response) -> per-constraint verdicts + task gate.

This is the one place a verdict is computed; the pair builders, the RL reward and the checkpoint
evaluation all call it (docs/DESIGN.md, "Verification routes": a verdict is computed one way in one place).

Routes:
- rule: the registered checker runs in-process on the item's params.
- hybrid: the checker runs on the item's params when they are complete; otherwise the judge
  extracts the missing ones from the constraint text (validated against the spec), and the
  extracted params are recorded in the verdict.
- judge: the judge answers the binary checklist question (with judge_context / sub_questions).

Without a judge, hybrid constraints with missing params, judge constraints and the task gate are
*unjudged* (``passed: None``), as are judge calls that fail after retries. Never a silent pass.

Batches: rule checks run in the calling thread; every judge request of the batch goes through
one thread pool bounded by the judge's ``concurrency``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers import prompts
from ifpo.verifiers.judge import Judge, JudgeError, media_parts
from ifpo.verifiers.registry import ConstraintType, Registry, run_checker
from ifpo.verifiers.text import TextTooLong


@dataclass
class Verdict:
    constraint_id: str
    type: str
    dimension: str
    route: str
    passed: bool | None
    reason: str
    params: dict[str, Any] | None = None
    params_source: str | None = None  # "item" | "judge" for rule/hybrid; None for judge route
    error: str | None = None  # why a verdict is unjudged
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ItemResult:
    id: str
    structure: str
    verdicts: list[Verdict]
    task_gate: bool | None = None
    task_reason: str = ""
    conflict: dict[str, Any] | None = None  # Conflict-30 diagnosis for conflict items
    response: str | None = field(default=None, repr=False)

    @property
    def all_passed(self) -> bool | None:
        values = [v.passed for v in self.verdicts]
        if any(p is False for p in values):
            return False
        return None if any(p is None for p in values) else True

    def to_dict(self, with_response: bool = False) -> dict[str, Any]:
        out = {
            "id": self.id,
            "structure": self.structure,
            "task_gate": self.task_gate,
            "task_reason": self.task_reason,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }
        if self.conflict is not None:
            out["conflict"] = self.conflict
        if with_response:
            out["response"] = self.response
        return out


def _default_registry() -> Registry:
    from ifpo.verifiers.constraints import REGISTRY

    return REGISTRY


def _param_spec(ctype: ConstraintType) -> list[dict[str, Any]]:
    return [{"name": p.name, "kind": p.kind, "required": p.required, "help": p.help} for p in ctype.params]


def _missing(ctype: ConstraintType, params: Mapping[str, Any]) -> list[str]:
    return [p.name for p in ctype.params if p.required and p.name not in params]


MODES = ("strict", "loose")


def _loose_check(ctype: ConstraintType, response: str, params: Mapping[str, Any]):
    """IFEval's loose mode for one rule check: the first non-blank variant of the response
    (:func:`~ifpo.verifiers.text.loose_variants`) that passes, or None. The response as given was
    already checked (strict), so it is skipped here."""
    from ifpo.verifiers.text import loose_variants

    for label, variant in loose_variants(response)[1:]:
        if variant.strip():
            check = run_checker(ctype, variant, params)
            if check.passed:
                return type(check)(True, f"loose ({label}): {check.reason}")
    return None


class ChecklistEvaluator:
    """Scores responses against items. ``judge`` may be None (rule verdicts only).

    ``mode="loose"`` applies IFEval's loose definition to every rule check (rule route, and
    hybrid checks run on the item's or the extracted params): a constraint also passes when a
    variant of the response passes (first / last / both lines removed, ``*`` removed). Judge
    verdicts and the task gate always see the response as given.

    Items whose ``tasks`` list is empty have no task gate to fail: t_i = 1 without a judge call.
    """

    def __init__(
        self,
        judge: Judge | None = None,
        *,
        registry: Registry | None = None,
        media_root: str | Path | None = None,
        task_gate: bool = True,
        mode: str = "strict",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        self.mode = mode
        self.judge = judge
        self.registry = registry if registry is not None else _default_registry()
        self.media_root = Path(media_root) if media_root is not None else None
        self.task_gate = task_gate

    # -- single constraint -------------------------------------------------------------------

    def _rule(self, ctype: ConstraintType, c: Mapping[str, Any], response: str, params: dict, source: str) -> Verdict:
        start = time.perf_counter()
        try:
            check = run_checker(ctype, response, params)
            if self.mode == "loose" and not check.passed:
                check = _loose_check(ctype, response, params) or check
        except TextTooLong as exc:  # the size policy (docs/text.md): unjudged, with the reason
            return self._unjudged(ctype, c, str(exc), params=params, params_source=source,
                                  seconds=time.perf_counter() - start)
        except Exception as exc:  # a response is untrusted input: a checker crash is that verdict's, not the run's
            return self._unjudged(ctype, c, f"rule checker failed on this response: {type(exc).__name__}: {exc}",
                                  params=params, params_source=source, seconds=time.perf_counter() - start)
        return Verdict(
            constraint_id=c["id"],
            type=ctype.id,
            dimension=c.get("dimension", ctype.dimension),
            route=ctype.route,
            passed=bool(check.passed),
            reason=check.reason,
            params=ctype.with_defaults(params),
            params_source=source,
            seconds=time.perf_counter() - start,
        )

    def _unjudged(self, ctype: ConstraintType, c: Mapping[str, Any], why: str, **kw: Any) -> Verdict:
        return Verdict(
            constraint_id=c["id"],
            type=ctype.id,
            dimension=c.get("dimension", ctype.dimension),
            route=ctype.route,
            passed=None,
            reason=f"not judged: {why}",
            error=why,
            **kw,
        )

    def _media(self, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        if self.judge is None or not self.judge.config.vision:
            return []
        return media_parts(item.get("media"), self.media_root, self.judge.config.video_frames)

    def _judge_constraint(self, item: Mapping[str, Any], c: Mapping[str, Any], response: str) -> Verdict:
        """Everything about one constraint that needs the judge (hybrid extraction or judge route)."""
        ctype = self.registry.get(c["type"])
        start = time.perf_counter()
        if ctype.route == "hybrid":
            given = dict(c.get("params") or {})
            messages, schema = prompts.extraction_messages(c, _param_spec(ctype))
            try:
                extracted = self.judge.ask(messages, schema)["params"]
            except JudgeError as exc:
                return self._unjudged(ctype, c, f"parameter extraction failed: {exc}", seconds=time.perf_counter() - start)
            params = {k: v for k, v in extracted.items() if k in ctype.param_names}
            params.update(given)  # what the item states wins over what the judge read
            problems = ctype.param_errors(params)
            if problems:
                detail = "; ".join(f"{n}: {m}" if n else m for n, m in problems)
                return self._unjudged(
                    ctype, c, f"extracted parameters do not fit the spec ({detail})", params=params,
                    params_source="judge", seconds=time.perf_counter() - start,
                )
            verdict = self._rule(ctype, c, response, params, "judge")
            verdict.seconds = time.perf_counter() - start
            return verdict
        try:
            media = self._media(item)
        except JudgeError as exc:  # counted and named at the end of the run (JudgeStats.summary), not silent
            self.judge.stats.media_fail(f"item {item.get('id')!r}: {exc}")
            return self._unjudged(ctype, c, str(exc), seconds=time.perf_counter() - start)
        try:
            messages, schema = prompts.checklist_messages(item, c, response, media)
            answer = self.judge.ask(messages, schema)
        except JudgeError as exc:
            return self._unjudged(ctype, c, str(exc), seconds=time.perf_counter() - start)
        if "answers" in answer:
            passed = all(answer["answers"])
            failed = [q for q, a in zip(c.get("sub_questions") or [], answer["answers"]) if not a]
            reason = answer.get("reason", "") + (f" (failed: {'; '.join(failed)})" if failed else "")
        else:
            passed, reason = answer["passed"], answer.get("reason", "")
        return Verdict(
            constraint_id=c["id"],
            type=ctype.id,
            dimension=c.get("dimension", ctype.dimension),
            route="judge",
            passed=passed,
            reason=reason,
            seconds=time.perf_counter() - start,
        )

    def _plan(self, item: Mapping[str, Any], response: str) -> tuple[list[Verdict | None], list[int]]:
        """Rule verdicts now; indices of constraints that need the judge later."""
        verdicts: list[Verdict | None] = []
        pending: list[int] = []
        for i, c in enumerate(item["constraints"]):
            ctype = self.registry.get(c["type"])
            params = dict(c.get("params") or {})
            if ctype.route == "rule" or (ctype.route == "hybrid" and not _missing(ctype, params)):
                verdicts.append(self._rule(ctype, c, response, params, "item"))
            elif self.judge is None:
                why = (
                    f"hybrid constraint lacks {_missing(ctype, params)} and no judge is configured to extract them"
                    if ctype.route == "hybrid"
                    else "judge-route constraint and no judge is configured"
                )
                verdicts.append(self._unjudged(ctype, c, why))
            else:
                verdicts.append(None)
                pending.append(i)
        return verdicts, pending

    def _gate(self, item: Mapping[str, Any], response: str) -> tuple[bool | None, str]:
        try:
            media = self._media(item)
        except JudgeError as exc:  # counted and named at the end of the run, as for a constraint
            self.judge.stats.media_fail(f"item {item.get('id')!r}: {exc}")
            return None, f"not judged: {exc}"
        try:
            messages, schema = prompts.task_gate_messages(item, response, media)
            answer = self.judge.ask(messages, schema)
        except JudgeError as exc:
            return None, f"not judged: {exc}"
        return answer["passed"], answer.get("reason", "")

    def _conflict(self, item: Mapping[str, Any], response: str) -> dict[str, Any]:
        messages, schema = prompts.conflict_messages(item, response)
        try:
            answer = self.judge.ask(messages, schema)
        except JudgeError as exc:
            return {"detected": None, "localized": None, "answered": None, "reason": f"not judged: {exc}"}
        return {k: answer[k] for k in ("detected", "localized", "answered", "reason")}

    # -- public API --------------------------------------------------------------------------

    def evaluate(self, item: Mapping[str, Any], response: str) -> ItemResult:
        """Score one response (judge calls, if any, run in this thread)."""
        return self.evaluate_many([(item, response)], progress=False)[0]

    def evaluate_many(
        self,
        pairs: Iterable[tuple[Mapping[str, Any], str]],
        *,
        progress: bool = True,
        on_result: Callable[[int, ItemResult], None] | None = None,
    ) -> list[ItemResult]:
        """Score many (item, response) pairs; judge requests of the whole batch run concurrently."""
        pairs = list(pairs)
        plans = []
        jobs: list[tuple[str, int, int | None]] = []  # (kind, pair index, constraint index)
        for p, (item, response) in enumerate(pairs):
            if not isinstance(response, str):
                raise TypeError(f"item {item.get('id')!r}: response must be a string, got {type(response).__name__}")
            verdicts, pending = self._plan(item, response)
            plans.append(verdicts)
            jobs += [("constraint", p, i) for i in pending]
            if (self.judge is not None and self.task_gate and item.get("structure") != "conflict"
                    and item.get("tasks") != []):
                jobs.append(("gate", p, None))
            if self.judge is not None and item.get("structure") == "conflict":
                jobs.append(("conflict", p, None))
        gates: dict[int, tuple[bool | None, str]] = {}
        conflicts: dict[int, dict[str, Any]] = {}

        def run(job: tuple[str, int, int | None]) -> tuple[tuple[str, int, int | None], Any]:
            kind, p, i = job
            item, response = pairs[p]
            if kind == "constraint":
                return job, self._judge_constraint(item, item["constraints"][i], response)
            if kind == "gate":
                return job, self._gate(item, response)
            return job, self._conflict(item, response)

        if jobs:
            bar = _progress(len(jobs), "judging", progress)
            with ThreadPoolExecutor(max_workers=self.judge.config.concurrency) as pool:
                for (kind, p, i), value in pool.map(run, jobs):
                    if kind == "constraint":
                        plans[p][i] = value
                    elif kind == "gate":
                        gates[p] = value
                    else:
                        conflicts[p] = value
                    bar.update(1)
            bar.close()
        results = []
        for p, (item, response) in enumerate(pairs):
            gate, gate_reason = gates.get(p, (None, "not judged: no judge configured" if self.judge is None else ""))
            if item.get("tasks") == [] and item.get("structure") != "conflict":
                gate, gate_reason = True, "no task: the item lists none, so t_i = 1"
            if item.get("structure") == "conflict":
                gate_reason = "conflict item: scored by the Conflict-30 diagnosis"
            result = ItemResult(
                id=item["id"],
                structure=item.get("structure", "single"),
                verdicts=plans[p],
                task_gate=gate,
                task_reason=gate_reason,
                conflict=conflicts.get(p),
                response=response,
            )
            results.append(result)
            if on_result is not None:
                on_result(p, result)
        return results


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, desc: str, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="call", leave=False)
