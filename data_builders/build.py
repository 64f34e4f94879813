"""Verified preference pairs from verified instructions: ``ifpo build-pairs``.

    ifpo build-pairs --items ITEMS.jsonl --out DIR [--config BUILD.yaml] [--seed N] [--workers N]

For each item the builder makes chosen/rejected pairs of five kinds, and checks every pair with
the verifier suite (``ifpo.verifiers.checklist``), so no manual revision is needed:

- ``corrupted``: chosen = a compliant response; rejected = a copy that breaks exactly one target
  constraint (programmatic corruptors for rule/hybrid types, an LLM corruptor for judge types when
  configured). Kept only if the target fails and every other constraint keeps its verdict.
- ``stripped``: rejected = the policy's answer to the bare task (constraints removed from the
  instruction, media kept), or with ``stripped_source: ground_truth`` the item's own answer to it.
  Kept only if it violates at least one constraint.
- ``conflict``: for unsatisfiable items, chosen names the conflicting requirements and asks which
  to follow; rejected complies blindly with an ordinary answer.
- ``misaligned``: for system-message items, one pair per user-override style: the user turn opens
  with the misaligned prefix; chosen keeps the system rule; rejected follows the user (breaks it).
- ``option_order``: selection branches permuted so the active branch changes position; chosen
  follows the active branch, rejected is the policy's answer to a wrong branch.
- ``on_policy`` (opt-in: k generations per item): the policy samples ``on_policy_k`` answers, the
  verifiers score each, and the best (fully compliant, else highest CPR) is paired against the
  lowest-CPR ones; ties and all-equal groups are discarded (``data_builders/onpolicy.py``).
- ``grounding`` (opt-in, synthetic-world items): rejected = the reference as if the shape a colour rule
  asks about had a colour the media do not show (``world.recoloured_reference``; the colour list stays
  sorted), one pair per such rule. Only the pixels tell the two apart: the pairs of a media ablation.

Discarded candidates are counted by reason. Output in DIR: ``pairs.jsonl`` and ``dataset/`` (HF
``save_to_disk``) in TRL's conversational preference format with a ``meta`` column, ``report.json``,
``manifest.json`` (media root, seed, config, fingerprints). Resumable: every finished item is
appended to ``journal.jsonl`` (flushed and fsynced), a rerun skips those, and the final files are
assembled from the journal in item order, so an interrupted and resumed build equals an
uninterrupted one. The same seed and inputs give the same output.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import os
import random
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers.checklist import ChecklistEvaluator, ItemResult
from ifpo.verifiers.text import count_words

BUILDER_VERSION = "1"
KINDS = ("corrupted", "stripped", "conflict", "misaligned", "option_order", "on_policy", "grounding")
# on_policy samples on_policy_k answers per item, so it is built only when asked for; grounding needs the
# synthetic world's scene facts.
DEFAULT_KINDS = ("corrupted", "stripped", "conflict", "misaligned", "option_order")
_NEEDS_CHOSEN = ("corrupted", "stripped", "misaligned", "option_order", "grounding")
STRIPPED_SOURCES = ("policy", "ground_truth")


@dataclass
class BuildConfig:
    """Pair-builder settings; keys of BUILD.yaml are exactly these fields."""

    kinds: list[str] = field(
        default_factory=lambda: list(DEFAULT_KINDS),
        metadata={"help": f"pair kinds to build, of {KINDS} (default: all but on_policy)"},
    )
    corruptions_per_item: int | None = field(
        default=None,
        metadata={"help": "corrupted pairs per item, each on a different target constraint; null = every constraint "
                          "that can be broken alone"},
    )
    max_candidates: int = field(default=8, metadata={"help": "corruption candidates tried per target before giving up"})
    unjudged_is_pass: bool = field(
        default=False, metadata={"help": "count unjudged verdicts as passes when checking teacher answers for chosen (off: they disqualify)"}
    )
    teacher: dict | None = field(
        default=None, metadata={"help": "generation config for chosen responses of items without reference_response"}
    )
    teacher_attempts: int = field(default=4, metadata={"help": "teacher answers tried per item; the first fully compliant one is kept"})
    policy: dict | None = field(
        default=None,
        metadata={"help": "generation config of the model to be trained: answers for stripped and option-order negatives"},
    )
    stripped_source: str = field(
        default="policy",
        metadata={"help": "stripped negatives: 'policy' (the policy's answer to the bare task) or 'ground_truth' (the "
                          "item's ground_truth, the reference answer to the bare task: chosen and rejected then state the "
                          "same facts and differ only where the constraints act; items without one use the policy)"},
    )
    corruptor_llm: dict | None = field(
        default=None, metadata={"help": "generation config of an LLM that corrupts judge-route constraints (needs a judge)"}
    )
    judge: Any = field(default=None, metadata={"help": "judge YAML path or mapping (verifiers.judge.JudgeConfig)"})
    length_match: bool = field(
        default=False, metadata={"help": "drop pairs whose rejected/chosen word-length ratio is outside 1 +- length_tolerance"}
    )
    length_tolerance: float = field(default=0.5, metadata={"help": "allowed relative length difference with length_match"})
    length_bias_warn: float = field(
        default=0.2, metadata={"help": "warn when a kind's mean rejected/chosen length ratio differs from 1 by more"}
    )
    on_policy_k: int = field(default=4, metadata={"help": "on_policy: answers the policy samples per instruction (>= 2)"})
    on_policy_pairs: int = field(
        default=1, metadata={"help": "on_policy: pairs per instruction, the best sample against the lowest-CPR ones"}
    )
    on_policy_temperature: float = field(
        default=1.0, metadata={"help": "on_policy: sampling temperature (> 0; the policy's own stays for stripped answers)"}
    )
    on_policy_top_p: float = field(default=1.0, metadata={"help": "on_policy: nucleus sampling top_p, in (0, 1]"})
    on_policy_seed: int | None = field(
        default=None,
        metadata={"help": "on_policy: sampling seed (null: seed); each item samples with a seed derived from it and "
                          "the item id"},
    )
    workers: int = field(default=1, metadata={"help": "processes building items in parallel (rule-only building scales)"})
    seed: int = field(default=0, metadata={"help": "seed of every random choice (targets, corruptions, permutations, "
                                                   "on-policy sampling)"})

    def __post_init__(self) -> None:
        if not self.kinds:
            raise ValueError(f"kinds: expected at least one pair kind of {', '.join(KINDS)} (an empty list builds nothing)")
        bad = [k for k in self.kinds if k not in KINDS]
        if bad:
            close = difflib.get_close_matches(bad[0], KINDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"kinds: unknown pair kind {bad[0]!r}{hint} (known: {', '.join(KINDS)})")
        if self.stripped_source not in STRIPPED_SOURCES:
            raise ValueError(f"stripped_source: expected one of {', '.join(STRIPPED_SOURCES)}, got {self.stripped_source!r}")
        for name in ("corruptions_per_item", "max_candidates", "teacher_attempts", "workers"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.length_tolerance:
            raise ValueError("length_tolerance must be > 0")
        if self.length_bias_warn < 0:
            raise ValueError(f"length_bias_warn must be >= 0, got {self.length_bias_warn}")
        from ifpo.verifiers.config import seed_problem

        for name in ("seed", "on_policy_seed"):
            value = getattr(self, name)
            if value is not None and seed_problem(value):
                raise ValueError(f"{name}: {seed_problem(value)}")
        if self.corruptor_llm is not None and self.judge is None:
            raise ValueError("corruptor_llm needs a judge: judge-route corruptions can only be verified by the judge")
        from ifpo.data_builders.onpolicy import check_config

        check_config(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "build config") -> BuildConfig:
        from ifpo.verifiers.config import from_mapping

        return from_mapping(cls, data, source)

    @classmethod
    def from_yaml(cls, path: str | Path) -> BuildConfig:
        from ifpo.verifiers.config import yaml_mapping

        return cls.from_mapping(yaml_mapping(path), source=str(path))


# --- helpers ------------------------------------------------------------------------------------


def verdict_vector(result: ItemResult) -> list[dict[str, Any]]:
    return [{"constraint_id": v.constraint_id, "type": v.type, "passed": v.passed} for v in result.verdicts]


def _passes(result: ItemResult, unjudged_is_pass: bool) -> bool:
    return all(v.passed is True or (v.passed is None and unjudged_is_pass) for v in result.verdicts)


def strip_constraints(item: Mapping[str, Any]) -> str:
    """The bare task: the instruction without the sentences that state its constraints."""
    text = item["instruction"]
    for c in item.get("constraints", []):
        desc = c.get("description", "").strip()
        if desc and desc in text:
            text = text.replace(desc, " ")
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text).strip()
    if len(text.split()) < 3:
        tasks = "; ".join(t["description"] for t in item.get("tasks", []) if t.get("description"))
        text = tasks or text
    return text


def conflict_clarification(item: Mapping[str, Any]) -> str:
    """The ideal answer to an unsatisfiable item: name the conflicting requirements, ask which wins."""
    by_id = {c["id"]: c for c in item["constraints"]}
    names = [by_id[cid]["description"].strip() for cid in item["conflict"]["conflicting"] if cid in by_id]
    quoted = " and ".join(f'"{n}"' for n in names)
    return (
        f"I cannot follow all of these instructions at once: {quoted} contradict each other, so no answer "
        "can satisfy both. Which of these requirements should I follow?"
    )


def permute_branches(item: Mapping[str, Any], rng: random.Random) -> tuple[str, list[dict]] | None:
    """Re-render the instruction with the top-level branches permuted so the active one moves.

    Each branch's ``condition ... instruction`` span is located in the instruction text; the spans
    are swapped in place (labels such as "Case 2: if" stay put). None when the spans are not found
    in order.
    """
    branches = item.get("branches") or []
    text = item["instruction"]
    spans, pos = [], 0
    for b in branches:
        start = text.find(b["condition"], pos)
        if start < 0:
            return None
        end_at = text.find(b["instruction"], start)
        if end_at < 0:
            return None
        end = end_at + len(b["instruction"])
        spans.append((start, end))
        pos = end
    n = len(branches)
    active = next(i for i, b in enumerate(branches) if b.get("active"))
    order = list(range(n))
    candidates = [p for p in _permutations(order) if p.index(active) != active]
    perm = candidates[rng.randrange(len(candidates))]
    pieces, last = [], 0
    for slot, (start, end) in enumerate(spans):
        src = perm[slot]
        pieces.append(text[last:start])
        pieces.append(text[spans[src][0]:spans[src][1]])
        last = end
    pieces.append(text[last:])
    return "".join(pieces), [branches[i] for i in perm]


def _permutations(order: list[int]) -> list[tuple[int, ...]]:
    import itertools

    return list(itertools.permutations(order))


def to_trl_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """ifpo chat messages -> TRL prompt (media as placeholders) + image and video path lists."""
    images, videos, prompt = [], [], []
    for m in messages:
        content = []
        for p in m["content"]:
            if p["type"] == "image":
                images.append(p["path"])
                content.append({"type": "image"})
            elif p["type"] == "video":
                videos.append(p["path"])
                content.append({"type": "video"})
            else:
                content.append({"type": "text", "text": p["text"]})
        prompt.append({"role": m["role"], "content": content})
    return prompt, images, videos


def assistant(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]


# --- the builder --------------------------------------------------------------------------------


class PairBuilder:
    """Builds the pairs of one item at a time; holds the evaluator and the generators."""

    def __init__(self, config: BuildConfig, media_root: Path) -> None:
        from ifpo.verifiers.generation import make_generator
        from ifpo.verifiers.judge import make_judge

        self.config = config
        self.media_root = media_root
        self.judge = make_judge(config.judge) if config.judge is not None else None
        self.evaluator = ChecklistEvaluator(self.judge, media_root=media_root, task_gate=False)
        self.policy = make_generator(config.policy, media_root) if config.policy else None
        self.teacher = make_generator(config.teacher, media_root) if config.teacher else None
        self.corruptor_llm = make_generator(config.corruptor_llm, media_root) if config.corruptor_llm else None

    def rng(self, item_id: str, kind: str) -> random.Random:
        # Per item and kind: results do not depend on item order or on which worker builds it.
        digest = hashlib.sha256(f"{self.config.seed}:{item_id}:{kind}".encode()).hexdigest()
        return random.Random(int(digest[:16], 16))

    def evaluate(self, item: Mapping[str, Any], response: str) -> ItemResult:
        return self.evaluator.evaluate(item, response)

    def pair(self, item, kind, messages, chosen, rejected, chosen_res, rejected_res, **meta) -> dict[str, Any]:
        prompt, images, videos = to_trl_messages(messages)
        return {
            "prompt": prompt,
            "chosen": assistant(chosen),
            "rejected": assistant(rejected),
            "images": images,
            "videos": videos,
            "meta": {
                "item_id": item["id"],
                "source": item.get("source"),
                "kind": kind,
                "corrupted_constraint": meta.pop("corrupted_constraint", None),
                "corrupted_type": meta.pop("corrupted_type", None),
                "style": meta.pop("style", None),
                "verified_by": meta.pop("verified_by", "verifiers"),
                "chosen_verdicts": verdict_vector(chosen_res) if chosen_res else [],
                "rejected_verdicts": verdict_vector(rejected_res) if rejected_res else [],
                "builder_version": BUILDER_VERSION,
                "seed": self.config.seed,
            },
        }

    # -- chosen ------------------------------------------------------------------------------

    def chosen(self, item: Mapping[str, Any], discards: Counter) -> tuple[str, ItemResult] | None:
        if item.get("reference_response"):
            # The schema's reference was verified when it was written: every verdict that can be
            # computed here must pass, and unjudged ones (no judge configured) do not disqualify it.
            text = item["reference_response"]
            result = self.evaluate(item, text)
            if any(v.passed is False for v in result.verdicts):
                discards["chosen:reference_fails_a_constraint"] += 1
                return None
            return text, result
        if self.teacher is None:
            discards["chosen:no_reference_and_no_teacher"] += 1
            return None
        from ifpo.verifiers.generation import item_messages

        for text in self.teacher.generate([item_messages(item)] * self.config.teacher_attempts):
            result = self.evaluate(item, text)
            if _passes(result, self.config.unjudged_is_pass):
                return text, result
        discards["chosen:teacher_not_compliant"] += 1
        return None

    # -- kinds -------------------------------------------------------------------------------

    def corrupted(self, item, chosen, chosen_res, discards) -> list[dict[str, Any]]:
        from ifpo.data_builders.corruptors import corrupt_candidates, supported
        from ifpo.verifiers.constraints import REGISTRY
        from ifpo.verifiers.generation import item_messages

        rng = self.rng(item["id"], "corrupted")
        base = {v.constraint_id: v.passed for v in chosen_res.verdicts}
        targets = list(item["constraints"])
        rng.shuffle(targets)
        pairs = []
        for c in targets:
            if self.config.corruptions_per_item is not None and len(pairs) >= self.config.corruptions_per_item:
                break
            ctype = REGISTRY.get(c["type"])
            if ctype.route == "judge" or not supported(ctype.id):
                if ctype.route == "judge" and self.corruptor_llm is not None:
                    candidates = self._llm_corruptions(item, c, chosen)
                else:
                    discards[f"corrupted:no_corruptor:{ctype.route}"] += 1
                    continue
            else:
                params = next(v.params for v in chosen_res.verdicts if v.constraint_id == c["id"]) or {}
                try:
                    candidates = corrupt_candidates(ctype, chosen, params, rng)
                except ValueError:
                    discards["corrupted:corruptor_error"] += 1
                    continue
            found = None
            for cand in candidates[: self.config.max_candidates]:
                res = self.evaluate(item, cand)
                now = {v.constraint_id: v.passed for v in res.verdicts}
                if now[c["id"]] is None:
                    discards["corrupted:target_unjudged"] += 1
                elif now[c["id"]] is not False:
                    discards["corrupted:broke_nothing"] += 1
                elif any(now[k] != base[k] for k in now if k != c["id"]):
                    discards["corrupted:broke_more_than_target"] += 1
                else:
                    found = (cand, res)
                    break
            if found is None:
                discards["corrupted:no_valid_candidate"] += 1
                continue
            pairs.append(self.pair(item, "corrupted", item_messages(item), chosen, found[0], chosen_res, found[1],
                                   corrupted_constraint=c["id"], corrupted_type=c["type"]))
        return pairs

    def _llm_corruptions(self, item, constraint, chosen) -> list[str]:
        prompt = (
            "Rewrite the response below so that it clearly violates this one requirement, while keeping "
            "everything else (content, format, length, other requirements) unchanged. Output only the "
            f"rewritten response.\n\nRequirement: {constraint['description']}\n\nResponse:\n{chosen}"
        )
        messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
        return [t for t in self.corruptor_llm.generate([messages]) if t.strip() and t != chosen]

    def stripped(self, item, chosen, chosen_res, discards) -> list[dict[str, Any]]:
        from ifpo.verifiers.generation import item_messages

        truth = item.get("ground_truth") if self.config.stripped_source == "ground_truth" else None
        if isinstance(truth, str) and truth.strip():
            answer = truth
        elif self.policy is None:
            discards["stripped:no_policy_backend"] += 1
            return []
        else:
            bare = strip_constraints(item)
            answer = self.policy.generate([item_messages(item, instruction=bare, system=None)])[0]
        res = self.evaluate(item, answer)
        if not any(v.passed is False for v in res.verdicts):
            discards["stripped:complied_anyway" if all(v.passed for v in res.verdicts) else "stripped:unjudged"] += 1
            return []
        return [self.pair(item, "stripped", item_messages(item), chosen, answer, chosen_res, res)]

    def conflict(self, item, discards) -> list[dict[str, Any]]:
        from ifpo.verifiers.generation import item_messages

        chosen = conflict_clarification(item)
        rejected = item.get("ground_truth")
        if not rejected and self.policy is not None:
            rejected = self.policy.generate([item_messages(item)])[0]
        if not isinstance(rejected, str) or not rejected.strip():
            discards["conflict:no_blind_answer"] += 1
            return []
        verified = "construction"
        if self.judge is not None:
            good = self.evaluate(item, chosen).conflict or {}
            bad = self.evaluate(item, rejected).conflict or {}
            if not (good.get("detected") and good.get("localized") and good.get("answered") is False):
                discards["conflict:chosen_not_a_clarification"] += 1
                return []
            if bad.get("detected") is not False:
                discards["conflict:rejected_not_blind"] += 1
                return []
            verified = "judge"
        return [self.pair(item, "conflict", item_messages(item), chosen, rejected, None, None, verified_by=verified)]

    def misaligned(self, item, chosen, chosen_res, discards) -> list[dict[str, Any]]:
        from ifpo.data_builders.corruptors import corrupt_candidates, supported
        from ifpo.verifiers.constraints import REGISTRY
        from ifpo.verifiers.generation import item_messages

        system = item.get("system") or ""
        rules = [c for c in item["constraints"] if c.get("description", "") and c["description"] in system]
        rules = rules or list(item["constraints"])
        pairs = []
        for style, prefix in sorted(item["user_overrides"].items()):
            rng = self.rng(item["id"], f"misaligned:{style}")
            found = None
            order = list(rules)
            rng.shuffle(order)
            for c in order:
                ctype = REGISTRY.get(c["type"])
                if ctype.route == "judge" or not supported(ctype.id):
                    continue
                params = next(v.params for v in chosen_res.verdicts if v.constraint_id == c["id"]) or {}
                for cand in corrupt_candidates(ctype, chosen, params, rng)[: self.config.max_candidates]:
                    res = self.evaluate(item, cand)
                    if any(v.passed is False for v in res.verdicts if v.constraint_id in {r["id"] for r in rules}):
                        found = (cand, res, c)
                        break
                if found:
                    break
            if found is None:
                discards["misaligned:no_rule_breaking_answer"] += 1
                continue
            user = f"{prefix.strip()}\n\n{item['instruction']}"
            pairs.append(self.pair(item, "misaligned", item_messages(item, instruction=user), chosen, found[0],
                                   chosen_res, found[1], style=style, corrupted_constraint=found[2]["id"],
                                   corrupted_type=found[2]["type"]))
        return pairs

    def option_order(self, item, chosen, chosen_res, discards) -> list[dict[str, Any]]:
        from ifpo.verifiers.generation import item_messages

        if self.policy is None:
            discards["option_order:no_policy_backend"] += 1
            return []
        permuted = permute_branches(item, self.rng(item["id"], "option_order"))
        if permuted is None:
            discards["option_order:branches_not_in_instruction"] += 1
            return []
        text, order = permuted
        wrong = next(b for b in order if not b.get("active"))
        answer = self.policy.generate([item_messages(item, instruction=wrong["instruction"])])[0]
        res = self.evaluate(item, answer)
        if not any(v.passed is False for v in res.verdicts):
            discards["option_order:wrong_branch_answer_complies"] += 1
            return []
        return [self.pair(item, "option_order", item_messages(item, instruction=text), chosen, answer, chosen_res, res)]

    def grounding(self, item, chosen, chosen_res, discards) -> list[dict[str, Any]]:
        from ifpo.data_builders.sample_benchmark.world import recoloured_reference, world_response
        from ifpo.verifiers.generation import item_messages

        if not (item.get("world") or {}).get("scene"):
            discards["grounding:no_scene_facts"] += 1
            return []
        if chosen != world_response(item):
            discards["grounding:chosen_is_not_the_world_reference"] += 1
            return []
        rng = self.rng(item["id"], "grounding")
        base = {v.constraint_id: v.passed for v in chosen_res.verdicts}
        rewrites = [(c, recoloured_reference(item, c["id"], rng)) for c in item["constraints"]]
        rewrites = [(c, text) for c, text in rewrites if text is not None]
        if not rewrites:
            discards["grounding:no_colour_rule"] += 1
        pairs = []
        for c, rejected in rewrites:
            res = self.evaluate(item, rejected)
            now = {v.constraint_id: v.passed for v in res.verdicts}
            if now[c["id"]] is not False or any(now[k] != base[k] for k in now if k != c["id"]):
                discards["grounding:not_exactly_its_rule_broken"] += 1
                continue
            pairs.append(self.pair(item, "grounding", item_messages(item), chosen, rejected, chosen_res, res,
                                   corrupted_constraint=c["id"], corrupted_type=c["type"]))
        return pairs

    def build_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """All pairs of one item plus discard counts (JSON-able: one journal line)."""
        discards: Counter = Counter()
        pairs: list[dict[str, Any]] = []
        kinds = self.config.kinds
        if item.get("structure") == "conflict":
            if "conflict" in kinds:
                pairs += self.conflict(item, discards)
            return {"item_id": item["id"], "pairs": pairs, "discards": dict(discards)}
        # on_policy pairs need no reference or teacher answer: only look for one when a kind uses it.
        picked = self.chosen(item, discards) if any(k in kinds for k in _NEEDS_CHOSEN) else None
        if picked is not None:
            chosen, chosen_res = picked
            if "corrupted" in kinds:
                pairs += self.corrupted(item, chosen, chosen_res, discards)
            if "stripped" in kinds:
                pairs += self.stripped(item, chosen, chosen_res, discards)
            if "misaligned" in kinds and item.get("user_overrides") and item.get("system"):
                pairs += self.misaligned(item, chosen, chosen_res, discards)
            if "option_order" in kinds and item.get("structure") in ("selection", "nested") and item.get("branches"):
                pairs += self.option_order(item, chosen, chosen_res, discards)
            if "grounding" in kinds:
                pairs += self.grounding(item, chosen, chosen_res, discards)
        if "on_policy" in kinds:
            from ifpo.data_builders.onpolicy import on_policy_pairs

            pairs += on_policy_pairs(self, item, discards)
        return {"item_id": item["id"], "pairs": pairs, "discards": dict(discards)}


# --- journal, parallelism, output -----------------------------------------------------------------

# What build_pairs writes into --out (dataset/ is a folder it replaces).
OUTPUT_FILES = ("pairs.jsonl", "pairs.jsonl.tmp", "journal.jsonl", "report.json", "manifest.json", "build_state.json",
                "dataset")
_WORKER: PairBuilder | None = None


def _init_worker(config: BuildConfig, media_root: Path) -> None:
    global _WORKER
    _WORKER = PairBuilder(config, media_root)


def _work(item: Mapping[str, Any]) -> dict[str, Any]:
    return _WORKER.build_item(item)


def _journal_record_ok(rec: Mapping[str, Any]) -> bool:
    """A journal line as ``record`` writes it: the item id, its pairs and its discard counts."""
    return (isinstance(rec.get("item_id"), str) and isinstance(rec.get("pairs"), list)
            and all(isinstance(p, dict) and isinstance(p.get("meta"), dict) and "kind" in p["meta"]
                    and isinstance(p.get("chosen"), list) and isinstance(p.get("rejected"), list) for p in rec["pairs"])
            and isinstance(rec.get("discards"), dict)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in rec["discards"].values()))


def read_journal(path: Path) -> dict[str, dict[str, Any]]:
    """Finished items; a torn last line (a crash mid-write) or a line of another shape is ignored and rebuilt."""
    from ifpo.verifiers.io import read_jsonl_objects

    records, _ = read_jsonl_objects(path)
    return {rec["item_id"]: rec for rec in records if _journal_record_ok(rec)}


def _check_state(out: Path, config: BuildConfig, items: Sequence[Mapping[str, Any]]) -> None:
    """Refuse to resume a build made with other settings or items (it would mix two datasets)."""
    state = {
        "builder_version": BUILDER_VERSION,
        "config": hashlib.sha256(json.dumps(dataclasses.asdict(config) | {"workers": None}, sort_keys=True,
                                            default=str).encode()).hexdigest(),
        "items": hashlib.sha256(json.dumps([it["id"] for it in items]).encode()).hexdigest(),
    }
    path = out / "build_state.json"
    if path.exists():
        from ifpo.verifiers.io import read_json_file

        previous = read_json_file(path, "build state")  # a corrupt file: one line naming it
        if not isinstance(previous, dict):
            raise ValueError(f"{path}: expected a JSON object; delete it to start the build again")
        changed = [k for k in state if previous.get(k) != state[k]]
        if changed:
            raise ValueError(
                f"{out} holds a build made with different {' and '.join(changed)} ({path.name}); resume only with "
                "the same items and settings (workers may differ), or write to another --out"
            )
    else:
        path.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def length_stats(pairs: Sequence[Mapping[str, Any]], warn: float) -> dict[str, Any]:
    """Chosen vs rejected word lengths per kind, with a warning on systematic length bias."""
    by_kind: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for p in pairs:
        c = count_words(p["chosen"][0]["content"][0]["text"])
        r = count_words(p["rejected"][0]["content"][0]["text"])
        by_kind[p["meta"]["kind"]].append((c, r))
    out = {}
    for kind, rows in sorted(by_kind.items()):
        cs, rs = [c for c, _ in rows], [r for _, r in rows]
        ratio = (statistics.mean(rs) / statistics.mean(cs)) if statistics.mean(cs) else None
        longer = sum(1 for c, r in rows if r > c) / len(rows)
        entry = {
            "pairs": len(rows),
            "chosen_words_mean": round(statistics.mean(cs), 2),
            "rejected_words_mean": round(statistics.mean(rs), 2),
            "rejected_over_chosen": round(ratio, 3) if ratio is not None else None,
            "rejected_longer_share": round(longer, 3),
        }
        if ratio is not None and abs(ratio - 1) > warn:
            side = "longer" if ratio > 1 else "shorter"
            entry["warning"] = (
                f"{kind} rejected responses are systematically {side} than chosen ones "
                f"(mean ratio {ratio:.2f}): a model can learn length instead of compliance; consider length_match"
            )
        out[kind] = entry
    return out


def _length_ok(pair: Mapping[str, Any], tolerance: float) -> bool:
    c = count_words(pair["chosen"][0]["content"][0]["text"])
    r = count_words(pair["rejected"][0]["content"][0]["text"])
    return c > 0 and abs(r - c) / c <= tolerance


def build_pairs(
    items: Sequence[Mapping[str, Any]],
    out_dir: str | Path,
    config: BuildConfig,
    *,
    media_root: str | Path,
    items_path: str | Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Build (or resume building) the pairs of ``items`` into ``out_dir``; return the report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _check_state(out, config, items)
    journal_path = out / "journal.jsonl"
    done = read_journal(journal_path)
    todo = [it for it in items if it["id"] not in done]
    media_root = Path(media_root).resolve()
    from tqdm import tqdm

    bar = tqdm(total=len(items), initial=len(items) - len(todo), desc="building pairs", unit="item",
               disable=not progress)
    with open(journal_path, "a", encoding="utf-8") as journal:

        def record(rec: dict[str, Any]) -> None:
            journal.write(json.dumps(rec, ensure_ascii=False) + "\n")
            journal.flush()
            os.fsync(journal.fileno())  # a crash loses at most the items in flight
            done[rec["item_id"]] = rec
            bar.update(1)

        if config.workers > 1 and len(todo) > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            ctx = mp.get_context("spawn")
            # Never more processes than items to build (`workers: 100000` must not start 100000 interpreters).
            with ProcessPoolExecutor(min(config.workers, len(todo)), mp_context=ctx, initializer=_init_worker,
                                     initargs=(config, media_root)) as pool:
                for rec in pool.map(_work, todo, chunksize=8):
                    record(rec)
        else:
            builder = PairBuilder(config, media_root)
            for item in todo:
                record(builder.build_item(item))
    bar.close()

    pairs: list[dict[str, Any]] = []
    discards: Counter = Counter()
    for item in items:
        rec = done[item["id"]]
        pairs += rec["pairs"]
        discards.update(rec["discards"])
    if config.length_match:
        kept = [p for p in pairs if _length_ok(p, config.length_tolerance)]
        discards["length_match:outside_tolerance"] += len(pairs) - len(kept)
        pairs = kept
    report = make_report(items, pairs, discards, config)
    _write_outputs(out, pairs, report, config, media_root, items_path)
    return report


def make_report(items, pairs, discards, config) -> dict[str, Any]:
    from ifpo.verifiers.constraints import REGISTRY

    by_type: Counter = Counter()
    by_dim: Counter = Counter()
    for p in pairs:
        t = p["meta"]["corrupted_type"]
        if t and p["meta"]["kind"] == "corrupted":
            by_type[t] += 1
            by_dim[REGISTRY.get(t).dimension] += 1
    lengths = length_stats(pairs, config.length_bias_warn)
    return {
        "items": len(items),
        "pairs": len(pairs),
        "by_kind": dict(sorted(Counter(p["meta"]["kind"] for p in pairs).items())),
        "corrupted_by_type": dict(sorted(by_type.items())),
        "corrupted_by_dimension": dict(sorted(by_dim.items())),
        "items_with_pairs": len({p["meta"]["item_id"] for p in pairs}),
        "discards": dict(sorted(discards.items())),
        "lengths": lengths,
        "warnings": [v["warning"] for v in lengths.values() if "warning" in v],
        "builder_version": BUILDER_VERSION,
        "seed": config.seed,
    }


def _write_outputs(out: Path, pairs, report, config, media_root: Path, items_path) -> None:
    from ifpo.verifiers.io import write_json_atomic

    tmp = out / "pairs.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    tmp.replace(out / "pairs.jsonl")
    write_json_atomic(out / "report.json", report)
    try:
        rel_root = os.path.relpath(media_root, out.resolve())
    except ValueError:  # another drive on Windows
        rel_root = str(media_root)
    manifest = {
        "media_root": rel_root,
        "builder_version": BUILDER_VERSION,
        "seed": config.seed,
        "config": {k: v for k, v in dataclasses.asdict(config).items() if k != "judge"} | {
            "judge": config.judge if isinstance(config.judge, str) else (None if config.judge is None else "mapping")
        },
        "items_file": str(items_path) if items_path else None,
        "items_sha256": _sha256(Path(items_path)) if items_path else None,
        "pairs": len(pairs),
        "pairs_sha256": _sha256(out / "pairs.jsonl"),
    }
    write_json_atomic(out / "manifest.json", manifest)
    if pairs:
        from datasets import Dataset

        ds = Dataset.from_list(pairs)
        target = out / "dataset"
        tmp_dir = out / "dataset.tmp"
        if tmp_dir.exists():
            import shutil

            shutil.rmtree(tmp_dir)
        ds.save_to_disk(str(tmp_dir))
        if target.exists():
            import shutil

            shutil.rmtree(target)
        tmp_dir.replace(target)


def format_report(report: Mapping[str, Any]) -> str:
    lines = [f"{report['pairs']} pairs from {report['items_with_pairs']} of {report['items']} items"]
    lines.append("by kind: " + ", ".join(f"{k} {v}" for k, v in report["by_kind"].items()))
    if report["corrupted_by_dimension"]:
        lines.append("corrupted by dimension: " + ", ".join(f"{k} {v}" for k, v in report["corrupted_by_dimension"].items()))
    if report["corrupted_by_type"]:
        lines.append(f"corrupted pairs cover {len(report['corrupted_by_type'])} constraint types")
    if report["discards"]:
        width = max(len(k) for k in report["discards"])
        lines.append("discarded candidates by reason:")
        lines += [f"  {k:<{width}}  {v}" for k, v in report["discards"].items()]
    lines.append("lengths (words, mean chosen / rejected):")
    for kind, s in report["lengths"].items():
        lines.append(f"  {kind:<13} {s['chosen_words_mean']:>7} / {s['rejected_words_mean']:<7} "
                     f"rejected longer in {100 * s['rejected_longer_share']:.0f}% of {s['pairs']}")
    lines += [f"WARNING: {w}" for w in report["warnings"]]
    return "\n".join(lines)


def cli_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ifpo build-pairs", description=__doc__.splitlines()[0])
    parser.add_argument("--items", required=True, help="items JSONL (validated first)")
    parser.add_argument("--out", required=True, help="output directory (a rerun resumes it)")
    parser.add_argument("--config", help="BUILD.yaml with BuildConfig keys")
    parser.add_argument("--seed", type=int, help="overrides the config's seed")
    parser.add_argument("--workers", type=int, help="overrides the config's workers")
    parser.add_argument("--root", help="dataset root of media paths (default: the items file's folder)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--strict", action="store_true",
                        help="refuse the items file when any record is invalid (default: name and skip them)")
    args = parser.parse_args(argv)
    from ifpo.verifiers.schema import load_items

    try:
        config = BuildConfig.from_yaml(args.config) if args.config else BuildConfig()
        if args.seed is not None:
            config.seed = args.seed
        if args.workers is not None:
            config.workers = args.workers
        config.__post_init__()
        loaded = load_items(args.items, root=args.root)
    except (ValueError, FileNotFoundError) as exc:
        print(f"ifpo build-pairs: {exc}", file=sys.stderr)
        return 2
    if loaded.errors:
        for err in loaded.errors:
            print(err, file=sys.stderr)
        if args.strict or not loaded.items:
            print(f"ifpo build-pairs: {len(loaded.errors)} invalid item field(s); fix them or validate with "
                  "`ifpo validate`", file=sys.stderr)
            return 2  # input refused or unusable, nothing built (docs/exit-codes.md)
        # The valid items are built; the invalid records are named above and counted in the report.
        print(f"ifpo build-pairs: skipping {loaded.records - len(loaded.items)} invalid "
              f"record(s) of {loaded.records} (--strict refuses the file)", file=sys.stderr)
    out = Path(args.out)
    from ifpo.verifiers.io import FileError, refuse_overwriting_inputs

    try:
        if not args.out:
            raise FileError("--out is empty; name the output folder")
        if out.exists() and not out.is_dir():
            raise FileError(f"{out}: --out is a file, expected an output folder")
        for name in OUTPUT_FILES:  # an items file kept in --out under an output's name would be replaced
            refuse_overwriting_inputs(out / name, {"--items file": args.items, "--config file": args.config})
    except FileError as exc:
        print(f"ifpo build-pairs: {exc}", file=sys.stderr)
        return 2
    root = Path(args.root) if args.root else Path(args.items).parent
    try:
        report = build_pairs(loaded.items, out, config, media_root=root, items_path=args.items,
                             progress=not args.no_progress)
    except ValueError as exc:
        print(f"ifpo build-pairs: {exc}", file=sys.stderr)
        return 2
    print(format_report(report))
    print(f"\nwrote {out / 'pairs.jsonl'}, {out / 'dataset'}, {out / 'report.json'}")
    return 1 if loaded.errors else 0  # 1: built, but records were skipped (named above, counted in the report)
