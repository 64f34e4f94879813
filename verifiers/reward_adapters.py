"""The checklist rewards as the RL engines call a reward function (verl, OpenRLHF, ms-swift, TRL).

Each engine hands a completion and something that names its item; this module finds the item, scores the
completion with ``ChecklistEvaluator`` and turns the verdicts into the rewards of ``ifpo.verifiers.rewards``
(cpr, ipr, tcsr, MODE:DIMENSION; the unjudged and empty policies). The engine-shaped entry points live in
``ifpo/verifiers/plugins/`` (one file per engine, loaded by path or ``pkg://``), thin over :class:`Adapter`.

An item is named by its id (a string; the items file comes from ``items`` / ``IFPO_ITEMS``) or carried
whole: a JSON object or its JSON text (``ifpo export --to verl`` writes it into ``reward_model.ground_truth``).

Settings come from keyword arguments (verl's ``custom_reward_function.reward_kwargs``) or, where the engine
passes none (OpenRLHF's ``reward_func`` file, ms-swift's plugins), from the environment:

==================  ====================  ==========================================================
keyword             environment           meaning
==================  ====================  ==========================================================
``items``           ``IFPO_ITEMS``        items JSONL for labels that are ids
``judge``           ``IFPO_JUDGE``        judge YAML (without it judge-route verdicts are unjudged)
``rewards``         ``IFPO_REWARDS``      reward names, comma-separated; the first is the score
``unjudged``        ``IFPO_UNJUDGED``     drop | zero | none
``empty``           ``IFPO_EMPTY``        zero | score
``mode``            ``IFPO_MODE``         strict | loose
``root``            ``IFPO_MEDIA_ROOT``   dataset root of media paths (judge with vision)
``none_reward``     ``IFPO_NONE_REWARD``  the number sent where an engine cannot take None (verl, OpenRLHF)
==================  ====================  ==========================================================
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ifpo.verifiers.rewards import EMPTY_POLICIES, UNJUDGED_POLICIES, RewardSpec, reward_values

ENV = {"items": "IFPO_ITEMS", "judge": "IFPO_JUDGE", "rewards": "IFPO_REWARDS", "unjudged": "IFPO_UNJUDGED",
       "empty": "IFPO_EMPTY", "mode": "IFPO_MODE", "root": "IFPO_MEDIA_ROOT", "none_reward": "IFPO_NONE_REWARD"}
# End-of-turn and end-of-text tokens a decoded OpenRLHF query ends with (decoded with skip_special_tokens=False).
END_TOKENS = ("<|im_end|>", "<|endoftext|>", "</s>", "<|eot_id|>", "<|end|>", "<end_of_turn>")
# Where a chat-templated prompt hands over to the assistant (Qwen's ChatML), when the query does not start
# with the prompt exactly (OpenRLHF truncates over-long prompts from the left).
ASSISTANT_MARKERS = ("<|im_start|>assistant\n",)


class LabelError(ValueError):
    """A label (item id or inline item) that names no valid item; ``field`` is where it was."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}" if field_path else message)
        self.field = field_path
        self.message = message


def resolve_label(label: Any, items: Mapping[str, dict], validator: Any, field_path: str, *, holds: str,
                  no_items: str | None = None) -> dict[str, Any]:
    """The item a label names: an id of ``items``, or an inline item (an object or its JSON text), validated.

    ``holds`` says where the ids come from (in the unknown-id message); ``no_items``, if given, is the message
    for an id when there are no items at all. Raises :class:`LabelError` naming ``field_path``."""
    if isinstance(label, bytes):
        label = label.decode("utf-8")
    if isinstance(label, str):
        text = label.strip()
        if text.startswith("{"):
            try:
                label = json.loads(text)
            except json.JSONDecodeError as exc:
                raise LabelError(field_path, f"not valid JSON for an inline item ({exc.msg}, column {exc.colno})") from None
        elif text in items:
            return items[text]
        elif not items and no_items is not None:
            raise LabelError(field_path, f"item id {text[:80]!r} given, but {no_items}")
        else:
            raise LabelError(field_path, f"unknown item id {text[:80]!r} ({holds})")
    if isinstance(label, Mapping):
        if "constraints" not in label and isinstance(label.get("id"), str) and label["id"] in items:
            return items[label["id"]]
        problems = validator.validate(dict(label))
        if problems:
            where, message = problems[0]
            raise LabelError(f"{field_path}.{where}" if where else field_path, message)
        return dict(label)
    raise LabelError(field_path, f"expected an item id (string) or an item (object), got {type(label).__name__}")


@dataclass(frozen=True)
class AdapterSettings:
    """What an adapter scores with (keyword arguments or the ``IFPO_*`` environment, see the module doc)."""

    items: str | None = field(default=None, metadata={"help": "items JSONL for labels that are item ids"})
    judge: str | None = field(default=None, metadata={"help": "judge YAML; none: judge verdicts are unjudged"})
    rewards: tuple[str, ...] = field(default=("cpr",), metadata={"help": "reward names; the first is the score"})
    unjudged: str = field(default="drop", metadata={"help": f"one of {list(UNJUDGED_POLICIES)}"})
    empty: str = field(default="zero", metadata={"help": f"one of {list(EMPTY_POLICIES)}"})
    mode: str = field(default="strict", metadata={"help": "strict | loose"})
    root: str | None = field(default=None, metadata={"help": "media root (default: the items file's folder)"})
    none_reward: float = field(default=0.0, metadata={"help": "sent for a reward of None where None is not taken"})

    def __post_init__(self) -> None:
        for name in self.rewards:
            RewardSpec.parse(name)
        if not self.rewards:
            raise ValueError("rewards: name at least one of cpr, ipr, tcsr (or MODE:DIMENSION)")
        if self.unjudged not in UNJUDGED_POLICIES:
            raise ValueError(f"unjudged must be one of {list(UNJUDGED_POLICIES)}, got {self.unjudged!r}")
        if self.empty not in EMPTY_POLICIES:
            raise ValueError(f"empty must be one of {list(EMPTY_POLICIES)}, got {self.empty!r}")
        if self.mode not in ("strict", "loose"):
            raise ValueError(f"mode must be strict or loose, got {self.mode!r}")

    @classmethod
    def resolve(cls, overrides: Mapping[str, Any] | None = None) -> AdapterSettings:
        """Keyword overrides first, then the environment, then the defaults; an unknown key is an error."""
        known = {f.name for f in fields(cls)}
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"ifpo reward: unknown setting(s) {unknown}; known: {sorted(known)}")
        values: dict[str, Any] = {}
        for name in known:
            value = overrides.get(name)
            if value is None and os.environ.get(ENV[name]):
                value = os.environ[ENV[name]]
            if value is None:
                continue
            if name == "rewards":
                value = tuple(v.strip() for v in value.split(",") if v.strip()) if isinstance(value, str) else tuple(value)
            elif name == "none_reward":
                try:
                    value = float(value)
                except (TypeError, ValueError):
                    raise ValueError(f"none_reward ({ENV[name]}) must be a number, got {value!r}") from None
            values[name] = value
        return cls(**values)


class Adapter:
    """Items, evaluator and reward policy for one setting; use :func:`adapter` to share one per setting."""

    def __init__(self, settings: AdapterSettings) -> None:
        from ifpo.verifiers.checklist import ChecklistEvaluator
        from ifpo.verifiers.judge import make_judge
        from ifpo.verifiers.schema import Validator, load_items

        self.settings = settings
        self.items: dict[str, dict[str, Any]] = {}
        root = settings.root
        if settings.items:
            loaded = load_items(Path(settings.items), root=settings.root)
            if loaded.errors:
                shown = "\n".join(str(e) for e in loaded.errors[:20])
                raise ValueError(f"{settings.items}: {len(loaded.errors)} invalid item record(s):\n{shown}")
            self.items = {str(item["id"]): item for item in loaded.items}
            root = root or str(Path(settings.items).parent)
        self.validator = Validator(Path(root or "."), check_media=False)
        self.specs = [RewardSpec.parse(r) for r in settings.rewards]
        self.evaluator = ChecklistEvaluator(make_judge(settings.judge), media_root=root, mode=settings.mode)

    def item(self, label: Any, field_path: str = "label") -> dict[str, Any]:
        """The item a label names: an id of the items file, or an inline item (an object or its JSON text)."""
        return resolve_label(label, self.items, self.validator, field_path,
                             holds=f"the items file {self.settings.items} holds {len(self.items)} items",
                             no_items="no items file (set IFPO_ITEMS or items=)")

    def score(self, labels: Sequence[Any], texts: Sequence[str], field_name: str = "labels"
              ) -> list[tuple[dict[str, Any], dict[str, float | None]]]:
        """Per completion: its verdict record (``ItemResult.to_dict``) and ``{reward name: value or None}``."""
        if len(labels) != len(texts):
            raise ValueError(f"{len(labels)} {field_name} for {len(texts)} completions")
        items = [self.item(label, f"{field_name}[{i}]") for i, label in enumerate(labels)]
        results = self.evaluator.evaluate_many(list(zip(items, texts)), progress=False)
        s = self.settings
        return [(r.to_dict(), reward_values(r, self.specs, t, unjudged=s.unjudged, empty=s.empty))
                for r, t in zip(results, texts)]

    def number(self, value: float | None) -> float:
        """A reward as a number, for engines that cannot take None."""
        return self.settings.none_reward if value is None else float(value)


@functools.lru_cache(maxsize=8)
def _adapter(settings: AdapterSettings) -> Adapter:
    return Adapter(settings)


def adapter(overrides: Mapping[str, Any] | None = None) -> Adapter:
    """The shared :class:`Adapter` of these settings (items, judge and its cache are loaded once per process)."""
    return _adapter(AdapterSettings.resolve(overrides))


def unjudged_count(record: Mapping[str, Any]) -> int:
    return sum(v["passed"] is None for v in record["verdicts"])


def openrlhf_completion(query: str, prompt: str | None, field_path: str = "query") -> str:
    """The response inside an OpenRLHF query: prompt and response decoded together with their special tokens
    (openrlhf/utils/agent.py, ``SingleTurnAgentExecutor.execute``, openrlhf 0.11.2), end-of-turn tokens cut."""
    if prompt and query.startswith(prompt):
        text = query[len(prompt):]
    else:
        cut = max((query.rfind(m) + len(m) if m in query else -1) for m in ASSISTANT_MARKERS)
        if cut >= 0:
            text = query[cut:]
        elif prompt is None:
            text = query  # no prompt sent: the query is the response
        else:
            raise LabelError(field_path, "the query neither starts with its prompt nor holds an assistant turn "
                                         f"marker {list(ASSISTANT_MARKERS)}: cannot tell the response apart")
    stripped = True
    while stripped:
        stripped = False
        text = text.rstrip()
        for token in END_TOKENS:
            if text.endswith(token):
                text, stripped = text[: -len(token)], True
    return text


def openrlhf_rewards(scored: Sequence[tuple[dict[str, Any], dict[str, float | None]]], a: Adapter) -> dict[str, Any]:
    """OpenRLHF's reward answer (openrlhf/cli/serve_rm.py's ``/get_reward``): ``rewards`` and ``scores`` (the
    first reward, None as ``none_reward``: OpenRLHF makes tensors of them) and ``extra_logs`` (every reward, and
    the unjudged verdicts per completion)."""
    first = a.specs[0].name
    main = [a.number(values[first]) for _, values in scored]
    extra: dict[str, list[float]] = {s.name: [a.number(values[s.name]) for _, values in scored] for s in a.specs}
    extra["unjudged"] = [float(unjudged_count(record)) for record, _ in scored]
    return {"rewards": main, "scores": list(main), "extra_logs": extra}
