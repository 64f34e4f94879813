"""Judge prompts and their answer schemas (binary checklist questions, as in the papers).

- checklist question: one constraint, answered yes/no, with ``judge_context`` (video evidence
  written by annotators, Video-IFBench) and ``sub_questions`` for decomposed content constraints
  (VCIFBench); passed = every sub-question answered yes.
- parameter extraction (hybrid route): the judge reads the constraint text and returns the
  parameters of the type's spec as JSON; the rule checker then decides.
- task gate: did the response execute the task(s) of the active instruction (Video-IFBench t_i)?
- Conflict-30 (VCIFBench Fig. 16): detected / localized / answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SYSTEM = (
    "You are a strict, impartial evaluator of instruction following. You judge only what is asked, "
    "from the evidence given. Answer with a single JSON object and nothing else."
)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"passed": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["passed", "reason"],
}


def sub_question_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "answers": {"type": "array", "items": {"type": "boolean"}, "minItems": n, "maxItems": n},
            "reason": {"type": "string"},
        },
        "required": ["answers", "reason"],
    }


PARAMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"params": {"type": "object"}},
    "required": ["params"],
}

CONFLICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "detected": {"type": "boolean"},
        "localized": {"type": "boolean"},
        "answered": {"type": "boolean"},
        "reason": {"type": "string"},
    },
    "required": ["detected", "localized", "answered", "reason"],
}


def _messages(user_text: str, media_parts: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [*media_parts, {"type": "text", "text": user_text}]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]


def _context(item: Mapping[str, Any]) -> str:
    parts = []
    if item.get("system"):
        parts.append(f"System message given to the model:\n{item['system']}")
    parts.append(f"Instruction given to the model:\n{item['instruction']}")
    if item.get("active_instruction"):
        parts.append(f"The branch the model had to execute (active instruction):\n{item['active_instruction']}")
    return "\n\n".join(parts)


def checklist_messages(
    item: Mapping[str, Any], constraint: Mapping[str, Any], response: str, media_parts: Sequence = ()
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Messages and schema for one constraint's binary checklist question."""
    lines = [
        _context(item),
        f"Model response:\n<<<\n{response}\n>>>",
        f"Constraint to check:\n{constraint['description']}",
    ]
    if constraint.get("params"):
        lines.append(f"Constraint parameters: {constraint['params']}")
    if constraint.get("judge_context"):
        lines.append(f"Evidence about the video/image (trust it over your own impression):\n{constraint['judge_context']}")
    subs = constraint.get("sub_questions") or []
    if subs:
        numbered = "\n".join(f"{i + 1}. {q}" for i, q in enumerate(subs))
        lines.append(
            "Answer each yes/no question about the response:\n"
            f"{numbered}\n"
            f'Reply as {{"answers": [one true/false per question, in order], "reason": "one sentence"}}.'
        )
        schema = sub_question_schema(len(subs))
    else:
        lines.append(
            "Does the response satisfy this constraint? Judge only this constraint.\n"
            'Reply as {"passed": true or false, "reason": "one sentence"}.'
        )
        schema = VERDICT_SCHEMA
    return _messages("\n\n".join(lines), media_parts), schema


def extraction_messages(
    constraint: Mapping[str, Any], param_spec: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Messages and schema asking for a hybrid constraint's parameters, read from its text."""
    spec = "\n".join(
        f"- {p['name']} ({p['kind']}{', required' if p['required'] else ''}): {p.get('help', '')}" for p in param_spec
    )
    text = (
        f"Constraint type: {constraint['type']}\n"
        f"Constraint text: {constraint['description']}\n\n"
        f"Parameters of this type:\n{spec}\n\n"
        "Extract the parameter values the constraint text states. Leave out parameters the text does not "
        "state; never guess.\n"
        'Reply as {"params": {name: value, ...}}.'
    )
    return _messages(text), PARAMS_SCHEMA


def task_gate_messages(item: Mapping[str, Any], response: str, media_parts: Sequence = ()) -> tuple[list, dict]:
    """Messages and schema for the task gate t_i: were the required tasks executed?"""
    tasks = item.get("tasks") or []
    listing = "\n".join(f"- {t['name']}: {t['description']}" for t in tasks) or "- answer the instruction"
    text = (
        f"{_context(item)}\n\nModel response:\n<<<\n{response}\n>>>\n\n"
        f"Required task(s):\n{listing}\n\n"
        + (f"Ground truth (reference answer):\n{item['ground_truth']}\n\n" if item.get("ground_truth") else "")
        + "Ignore formatting and style constraints. Does the response address every required task of the "
        "instruction the model had to execute (for conditional instructions: the correct branch)?\n"
        'Reply as {"passed": true or false, "reason": "one sentence"}.'
    )
    return _messages(text, media_parts), VERDICT_SCHEMA


def conflict_messages(item: Mapping[str, Any], response: str) -> tuple[list, dict]:
    """Messages and schema for the Conflict-30 diagnosis (VCIFBench Fig. 16)."""
    conflicting = set((item.get("conflict") or {}).get("conflicting", []))
    described = "\n".join(
        f"- {c['description']}" for c in item.get("constraints", []) if c.get("id") in conflicting
    )
    text = (
        f"{_context(item)}\n\nCandidate answer:\n<<<\n{response}\n>>>\n\n"
        "The instruction is unsatisfiable: these requirements contradict each other:\n"
        f"{described}\n\n"
        "Judge only the candidate answer:\n"
        "- detected: does it explicitly say the instruction cannot be fully satisfied as stated?\n"
        "- localized: does it identify the conflicting requirements (the ones listed above)?\n"
        "- answered: does it go on to give an ordinary answer to the video task anyway?\n"
        'Reply as {"detected": bool, "localized": bool, "answered": bool, "reason": "one sentence"}.'
    )
    return _messages(text), CONFLICT_SCHEMA
