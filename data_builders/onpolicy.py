"""On-policy, verifier-ranked pairs: the ``on_policy`` kind of ``ifpo build-pairs``.

The policy (the model to be trained, ``policy:`` of BUILD.yaml) samples ``on_policy_k`` answers
to each instruction; the verifier suite (``ifpo.verifiers.checklist``) scores every one; the pair
is the best sample (fully compliant, else the highest CPR) against the lowest-CPR samples, so
both sides are the policy's own text and differ in what the checklist verifies.

Ranking, for one group of k samples:

- CPR is counted over the constraints judged in *every* sample of the group (a constraint left
  unjudged in one sample, e.g. a judge-route one without a judge, cannot separate samples); no
  such constraint: the group is discarded (``on_policy:group_unjudged``);
- all samples with the same CPR (all compliant, or all failing alike): the group is discarded
  (``on_policy:group_all_equal``);
- chosen = the highest CPR, a fully compliant sample first on equal CPR, then the first drawn;
- every other sample is then a rejected one (lowest CPR first, then the first drawn) or counted
  as discarded: ``on_policy:sample_tied_with_chosen`` (same CPR as the chosen: no preference),
  ``on_policy:sample_duplicate`` (same text as a rejected one already paired),
  ``on_policy:lower_sample_beyond_pairs`` (more lower samples than ``on_policy_pairs``).

So for a kept group, k = 1 + pairs + the group's sample discards. Sampling is seeded per item
from the build seed (or ``on_policy_seed``) and the item id, so a resumed build, another item
order or another worker count draw the same samples.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ifpo.verifiers.checklist import ItemResult

if TYPE_CHECKING:
    from ifpo.data_builders.build import BuildConfig, PairBuilder

KIND = "on_policy"


@dataclass
class Ranking:
    """The outcome of ranking one group of samples (indices into the group)."""

    chosen: int | None
    rejected: list[int] = field(default_factory=list)
    scores: list[tuple[int, int]] = field(default_factory=list)  # (passed, judged) per sample
    discards: Counter = field(default_factory=Counter)


def check_config(config: BuildConfig) -> None:
    """The on-policy fields of BuildConfig (``ValueError`` naming the key)."""
    if config.on_policy_k < 2:
        raise ValueError(f"on_policy_k must be >= 2 (a pair needs two samples), got {config.on_policy_k}")
    if config.on_policy_pairs < 1:
        raise ValueError(f"on_policy_pairs must be >= 1, got {config.on_policy_pairs}")
    if not config.on_policy_temperature > 0:
        raise ValueError(f"on_policy_temperature must be > 0 (greedy decoding gives k identical samples), "
                         f"got {config.on_policy_temperature}")
    if not 0 < config.on_policy_top_p <= 1:
        raise ValueError(f"on_policy_top_p must be in (0, 1], got {config.on_policy_top_p}")


def sample_seed(seed: int, item_id: str) -> int:
    """The sampling seed of one item: depends on the seed and the item only (31 bits: any server takes it)."""
    return int(hashlib.sha256(f"{seed}:{item_id}:{KIND}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


def _compliant(result: ItemResult, unjudged_is_pass: bool) -> bool:
    return all(v.passed is True or (v.passed is None and unjudged_is_pass) for v in result.verdicts)


def rank_group(texts: Sequence[str], results: Sequence[ItemResult], *, pairs: int = 1,
               unjudged_is_pass: bool = False) -> Ranking:
    """Rank the samples of one instruction by their verdicts (see the module docstring)."""
    ranked = [{v.constraint_id: v.passed for v in r.verdicts} for r in results]
    ids = [cid for cid in ranked[0] if all(r.get(cid) is not None for r in ranked)] if ranked else []
    if not ids:
        return Ranking(None, discards=Counter({f"{KIND}:group_unjudged": 1}))
    scores = [(sum(r[cid] is True for cid in ids), len(ids)) for r in ranked]
    out = Ranking(None, scores=scores)
    if len({s for s, _ in scores}) == 1:
        out.discards[f"{KIND}:group_all_equal"] += 1
        return out
    compliant = [_compliant(r, unjudged_is_pass) for r in results]
    best = max(range(len(texts)), key=lambda i: (scores[i][0], compliant[i], -i))
    out.chosen = best
    paired: set[str] = set()
    for i in sorted(range(len(texts)), key=lambda i: (scores[i][0], i)):
        if i == best:
            continue
        if scores[i][0] == scores[best][0]:
            out.discards[f"{KIND}:sample_tied_with_chosen"] += 1
        elif texts[i] in paired:
            out.discards[f"{KIND}:sample_duplicate"] += 1
        elif len(out.rejected) >= pairs:
            out.discards[f"{KIND}:lower_sample_beyond_pairs"] += 1
        else:
            out.rejected.append(i)
            paired.add(texts[i])
    return out


def on_policy_pairs(builder: PairBuilder, item: Mapping[str, Any], discards: Counter) -> list[dict[str, Any]]:
    """The on-policy pairs of one item (the policy samples, the verifiers rank)."""
    from ifpo.verifiers.generation import item_messages

    config = builder.config
    if builder.policy is None:
        discards[f"{KIND}:no_policy_backend"] += 1
        return []
    messages = item_messages(item)
    seed = config.seed if config.on_policy_seed is None else config.on_policy_seed
    texts = builder.policy.sample(messages, config.on_policy_k, temperature=config.on_policy_temperature,
                                  top_p=config.on_policy_top_p, seed=sample_seed(seed, item["id"]))
    if len(texts) != config.on_policy_k:
        raise RuntimeError(f"item {item['id']!r}: the policy returned {len(texts)} of {config.on_policy_k} samples")
    results = builder.evaluator.evaluate_many([(item, t) for t in texts], progress=False)
    ranking = rank_group(texts, results, pairs=config.on_policy_pairs, unjudged_is_pass=config.unjudged_is_pass)
    discards.update(ranking.discards)
    if ranking.chosen is None:
        return []
    best = ranking.chosen
    return [builder.pair(item, KIND, messages, texts[best], texts[r], results[best], results[r])
            for r in ranking.rejected]
