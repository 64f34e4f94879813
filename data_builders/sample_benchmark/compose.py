"""How a sample item is put together: text helpers (articles, times, the judges' evidence), the
constraint and item constructors, and selection/nested branches.

Internal to the sample benchmark: the item modules (``video_items_*``, ``image_items``,
``system_items``, ``conflict_items``, ``ifeval_items``) import these underscored names directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ifpo.data_builders.sample_benchmark.media import PALETTE, SHAPES

_ITEM_KEYS = ("id", "source", "media", "system", "instruction", "structure", "active_instruction",
              "branches", "tasks", "constraints", "reference_response", "ground_truth",
              "user_overrides", "conflict")

_WHERE = {
    "top-left": "in the top-left corner", "top": "at the top", "top-right": "in the top-right corner",
    "left": "on the left", "center": "in the center", "right": "on the right",
    "bottom-left": "in the bottom-left corner", "bottom": "at the bottom",
    "bottom-right": "in the bottom-right corner",
}


# ------------------------------------------------------------------------------------ text helpers


def _a(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _t(sec: float) -> str:
    """A time as the items write it: one decimal and the unit, '1.5 s'."""
    return f"{sec:.1f} s"


def _other(values: Iterable[str], exclude: Iterable[str]) -> str:
    """The first value not excluded: a deterministic false alternative for a branch condition."""
    excluded = set(exclude)
    return next(v for v in values if v not in excluded)


def _other_color(*exclude: str) -> str:
    return _other(PALETTE, exclude)


def _other_shape(*exclude: str) -> str:
    return _other(SHAPES, exclude)


_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")


def _video_evidence(v: dict) -> str:
    parts = []
    for e in v["events"]:
        when = _t(e["time_sec"]) if "end_time_sec" not in e else f"{_t(e['time_sec'])} to {_t(e['end_time_sec'])}"
        parts.append(f"{when}: {e['description']}")
    return (f"Video evidence ({_t(v['duration_sec'])} long, white background): " + " ".join(parts)
            + f" Final state: {v['final_state']}")


def _image_evidence(im: dict) -> str:
    objs = "; ".join(f"{_a(o['name'])} {_WHERE[o['position']]}" for o in im["objects"])
    text = (", ".join(f'"{t}"' for t in im["text"])) if im["text"] else "none"
    return f"Image evidence (white background): {objs}. Rendered text: {text}."


# ------------------------------------------------------------------------------ item construction


def _c(ctype: str, description: str, params: dict | None = None, *, context: str | None = None,
       subs: list[str] | None = None) -> dict:
    """A constraint without id and dimension (both filled by :func:`_item`)."""
    c: dict[str, Any] = {"type": ctype, "description": description, "params": dict(params or {})}
    if context is not None:
        c["judge_context"] = context
    if subs is not None:
        c["sub_questions"] = list(subs)
    return c


def _finish_constraints(constraints: list[dict]) -> list[dict]:
    registry = _registry()
    out = []
    for k, c in enumerate(constraints, start=1):
        ctype = registry.get(c["type"])
        full = {"id": f"c{k}", "type": c["type"], "dimension": ctype.dimension,
                "description": c["description"], "params": c["params"]}
        for key in ("judge_context", "sub_questions"):
            if key in c:
                full[key] = c[key]
        out.append(full)
    return out


def _with_constraints(task: str, constraints: list[dict]) -> str:
    return " ".join([task.strip(), *(c["description"] for c in constraints)])


def _branch(condition: str, instruction: str, active: bool = False, branches: list[dict] | None = None) -> dict:
    b: dict[str, Any] = {"condition": condition, "instruction": instruction, "active": active}
    if branches is not None:
        b["branches"] = branches
    return b


def _render_branches(branches: list[dict], prefix: str = "", indent: str = "") -> list[str]:
    lines = []
    for k, b in enumerate(branches, start=1):
        label = f"{prefix}{k}"
        lines.append(f"{indent}Case {label}: if {b['condition']}, {b['instruction']}")
        if "branches" in b:
            lines += _render_branches(b["branches"], f"{label}.", indent + "  ")
    return lines


def _item(item_id: str, *, media: dict, task: str, tasks: list[tuple[str, str]], constraints: list[dict],
          ground_truth: str, reference: str | None = None, structure: str = "single",
          system: str | None = None, preamble: str | None = None, branches: list[dict] | None = None,
          user_overrides: dict | None = None, conflict: dict | None = None, source: str = "sample") -> dict:
    """Assemble one item in the schema's key order.

    For single/multi/conflict items the instruction is ``task`` followed by every constraint's
    description. For selection/nested items ``task`` + descriptions form the active branch's
    instruction: the ``branches`` passed in hold one placeholder ``None`` instruction at the active
    leaf, which is filled here, and the instruction shown is ``preamble`` plus every branch.
    For system-message items the descriptions live in ``system`` and ``task`` is the user turn.
    """
    finished = _finish_constraints(constraints)
    item: dict[str, Any] = {"id": item_id, "source": source, "media": media}
    active_instruction = None
    if system is not None:
        item["system"] = system
        instruction = task
    elif branches is not None:
        active_instruction = _with_constraints(task, constraints)
        _fill_active(branches, active_instruction)
        instruction = "\n".join([preamble or "", *_render_branches(branches)]).strip()
    else:
        instruction = _with_constraints(task, constraints)
    item["instruction"] = instruction
    item["structure"] = structure
    if active_instruction is not None:
        item["active_instruction"] = active_instruction
        item["branches"] = branches
    item["tasks"] = [{"name": n, "description": d} for n, d in tasks]
    item["constraints"] = finished
    if reference is not None:
        item["reference_response"] = reference
    item["ground_truth"] = ground_truth
    if user_overrides is not None:
        item["user_overrides"] = user_overrides
    if conflict is not None:
        item["conflict"] = conflict
    return {k: item[k] for k in _ITEM_KEYS if k in item}


def _fill_active(branches: list[dict], instruction: str) -> None:
    for b in branches:
        if b["active"]:
            if "branches" in b:
                _fill_active(b["branches"], instruction)
            else:
                b["instruction"] = instruction


def _video_media(path: str) -> dict:
    return {"videos": [path], "images": []}


def _image_media(path: str) -> dict:
    return {"videos": [], "images": [path]}


def _registry():
    from ifpo.verifiers.constraints import REGISTRY  # loads every checker module

    return REGISTRY
