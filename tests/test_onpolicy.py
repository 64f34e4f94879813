"""On-policy pairs: the policy samples k answers, the verifiers rank them (ties and all-equal groups discarded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, user_text
from ifpo.data_builders.build import BuildConfig, build_pairs, format_report
from ifpo.data_builders.onpolicy import rank_group, sample_seed
from ifpo.verifiers.checklist import ChecklistEvaluator

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"

CONSTRAINTS = [
    {"id": "c1", "type": "exact_word_exclusion", "dimension": "content", "description": 'Do not use the word "shape".',
     "params": {"phrases": ["shape"], "ignore_case": True, "whole_word": True}},
    {"id": "c2", "type": "fixed_closing", "dimension": "format", "description": 'End with exactly: "End of report."',
     "params": {"text": "End of report.", "ignore_case": False}},
    {"id": "c3", "type": "word_count", "dimension": "format", "description": "Answer in 3 to 12 words.",
     "params": {"min_count": 3, "max_count": 12, "unit": "word"}},
]


def make_item(item_id: str, extra: list | None = None) -> dict:
    return {"id": item_id, "source": "test", "structure": "single", "media": {"videos": [], "images": []},
            "instruction": f"[{item_id}] Describe the circle. " + " ".join(c["description"] for c in CONSTRAINTS),
            "tasks": [{"name": "description", "description": "Describe the circle."}],
            "constraints": CONSTRAINTS + (extra or [])}


# Answers with known verdicts on (c1, c2, c3) and their CPR.
A = "A red circle moves right. End of report."  # pass pass pass   3/3
B = "A red shape moves right. End of report."  # FAIL pass pass   2/3
C = "A red circle moves right."  # pass FAIL pass   2/3
B2 = "a circle " * 10 + "End of report."  # pass pass FAIL   2/3
D = "A red shape moves right."  # FAIL FAIL pass   1/3
E = "shape " * 20  # FAIL FAIL FAIL   0/3
TEXTS = {"A": A, "B": B, "C": C, "B2": B2, "D": D, "E": E}
EXPECTED_CPR = {"A": 3, "B": 2, "C": 2, "B2": 2, "D": 1, "E": 0}

# (samples, pairs per item) -> (chosen index, rejected indices, discards)
TRUTH = [
    ("A B D E", 1, 0, [3], {"lower_sample_beyond_pairs": 2}),
    ("D B A C", 1, 2, [0], {"lower_sample_beyond_pairs": 2}),  # position does not matter
    ("A A A A", 1, None, [], {"group_all_equal": 1}),  # all compliant
    ("E E E E", 1, None, [], {"group_all_equal": 1}),  # all failing alike
    ("B C B2 B", 1, None, [], {"group_all_equal": 1}),  # same CPR, different constraints failed
    ("B C D D", 1, 0, [2], {"sample_tied_with_chosen": 1, "sample_duplicate": 1}),  # best not compliant
    ("B C B2 D", 1, 0, [3], {"sample_tied_with_chosen": 2}),
    ("A B D E", 3, 0, [3, 2, 1], {}),  # lowest CPR first
    ("A D D A", 3, 0, [1], {"sample_tied_with_chosen": 1, "sample_duplicate": 1}),
    ("C A", 1, 1, [0], {}),
]


@pytest.mark.parametrize("samples,pairs,chosen,rejected,discards", TRUTH)
def test_ranking_truth_table(samples, pairs, chosen, rejected, discards):
    texts = [TEXTS[s] for s in samples.split()]
    item = make_item("t")
    results = ChecklistEvaluator(None).evaluate_many([(item, t) for t in texts], progress=False)
    ranking = rank_group(texts, results, pairs=pairs)
    assert [s for s, _ in ranking.scores] == [EXPECTED_CPR[s] for s in samples.split()]
    assert ranking.chosen == chosen
    assert ranking.rejected == rejected
    assert dict(ranking.discards) == {f"on_policy:{k}": v for k, v in discards.items()}
    if chosen is not None:  # every sample is the chosen, a rejected one or a counted discard
        assert len(texts) == 1 + len(rejected) + sum(discards.values())


def test_unjudged_constraints_do_not_rank():
    judge_only = {"id": "j1", "type": "chronological", "dimension": "structure",
                  "description": "Describe the events in order.", "params": {}}
    item = make_item("u", extra=[judge_only])
    evaluator = ChecklistEvaluator(None)  # no judge: j1 is unjudged in every sample
    results = evaluator.evaluate_many([(item, t) for t in (D, A)], progress=False)
    ranking = rank_group([D, A], results)
    assert (ranking.chosen, ranking.rejected, ranking.scores) == (1, [0], [(1, 3), (3, 3)])
    only = dict(item, constraints=[judge_only])
    results = evaluator.evaluate_many([(only, t) for t in (D, A)], progress=False)
    assert dict(rank_group([D, A], results).discards) == {"on_policy:group_unjudged": 1}


# Scripted groups per item of the loopback build: item id -> sample names.
SCRIPT = {"i1": "A B D E", "i2": "A A A A", "i3": "B C B2 D", "i4": "E E E E", "i5": "C D A D"}


def _server_handler(ignore_n: bool = False):
    def handler(body):
        item_id = user_text(body).split("]")[0].lstrip("[")
        names = SCRIPT[item_id].split()
        if ignore_n:  # a server that answers one choice per request: the seed picks it
            return 200, TEXTS[names[body["seed"] - sample_seed(0, item_id)]]
        return 200, [TEXTS[n] for n in names][: body["n"]]

    return handler


def _policy(server, **kw):
    return {"backend": "openai", "model": "policy", "base_url": server.base_url, "concurrency": 1, **kw}


def _pairs(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]


def test_loopback_build_ranks_exactly(tmp_path):
    items = [make_item(i) for i in SCRIPT]
    with FakeOpenAI(_server_handler()) as server:
        cfg = BuildConfig(kinds=["on_policy"], policy=_policy(server), on_policy_k=4, on_policy_temperature=0.7,
                          on_policy_top_p=0.9)
        report = build_pairs(items, tmp_path / "o", cfg, media_root=SAMPLE, progress=False)
    assert len(server.requests) == len(items)  # one request per item, n = k
    for body, item in zip(server.requests, items):
        assert (body["n"], body["temperature"], body["top_p"]) == (4, 0.7, 0.9)
        assert body["seed"] == sample_seed(0, item["id"])
    pairs = _pairs(tmp_path / "o")
    got = [(p["meta"]["item_id"], p["chosen"][0]["content"][0]["text"], p["rejected"][0]["content"][0]["text"])
           for p in pairs]
    assert got == [("i1", A, E), ("i3", B, D), ("i5", A, D)]
    assert report["by_kind"] == {"on_policy": 3}
    assert report["discards"] == {
        "on_policy:group_all_equal": 2,  # i2, i4
        "on_policy:lower_sample_beyond_pairs": 2 + 1,  # i1: B, D; i5: C
        "on_policy:sample_duplicate": 1,  # i5: the second D
        "on_policy:sample_tied_with_chosen": 2,  # i3: C, B2
    }
    first = pairs[0]["meta"]
    assert first["kind"] == "on_policy" and first["item_id"] == "i1" and first["verified_by"] == "verifiers"
    assert [v["passed"] for v in first["chosen_verdicts"]] == [True, True, True]
    assert [v["passed"] for v in first["rejected_verdicts"]] == [False, False, False]
    assert [v["passed"] for v in pairs[1]["meta"]["chosen_verdicts"]] == [False, True, True]
    assert pairs[0]["prompt"][-1]["content"][-1]["text"] == items[0]["instruction"]
    assert "on_policy 3" in format_report(report)


def test_a_server_that_ignores_n_is_asked_again_with_new_seeds(tmp_path):
    items = [make_item(i) for i in SCRIPT]
    with FakeOpenAI(_server_handler()) as server:
        cfg = BuildConfig(kinds=["on_policy"], policy=_policy(server))
        build_pairs(items, tmp_path / "n", cfg, media_root=SAMPLE, progress=False)
    with FakeOpenAI(_server_handler(ignore_n=True)) as server:
        cfg = BuildConfig(kinds=["on_policy"], policy=_policy(server))
        build_pairs(items, tmp_path / "one", cfg, media_root=SAMPLE, progress=False)
    assert len(server.requests) == 4 * len(items)
    assert [b["n"] for b in server.requests[:4]] == [4, 3, 2, 1]
    assert (tmp_path / "one" / "pairs.jsonl").read_bytes() == (tmp_path / "n" / "pairs.jsonl").read_bytes()


def test_resume_samples_only_the_unfinished_items(tmp_path):
    items = [make_item(i) for i in SCRIPT]
    out = tmp_path / "o"
    with FakeOpenAI(_server_handler()) as server:
        cfg = BuildConfig(kinds=["on_policy"], policy=_policy(server))
        build_pairs(items, out, cfg, media_root=SAMPLE, progress=False)
        clean = (out / "pairs.jsonl").read_bytes()
        # interrupted after two items: the journal holds them, nothing else was written yet
        lines = (out / "journal.jsonl").read_text().splitlines(keepends=True)
        (out / "journal.jsonl").write_text("".join(lines[:2]))
        for name in ("pairs.jsonl", "report.json", "manifest.json"):
            (out / name).unlink()
        before = len(server.requests)
        report = build_pairs(items, out, cfg, media_root=SAMPLE, progress=False)
    assert len(server.requests) - before == 3  # i3..i5 only
    assert (out / "pairs.jsonl").read_bytes() == clean
    assert report["by_kind"] == {"on_policy": 3}


def test_bad_on_policy_settings_name_the_key():
    for kwargs, message in [({"on_policy_k": 1}, "on_policy_k must be >= 2"),
                            ({"on_policy_temperature": 0.0}, "on_policy_temperature must be > 0"),
                            ({"on_policy_top_p": 1.5}, r"on_policy_top_p must be in \(0, 1\]"),
                            ({"on_policy_pairs": 0}, "on_policy_pairs must be >= 1"),
                            ({"kinds": ["onpolicy"]}, "did you mean 'on_policy'")]:
        with pytest.raises(ValueError, match=message):
            BuildConfig(**kwargs)


def test_no_policy_is_counted(tmp_path):
    report = build_pairs([make_item("i1")], tmp_path / "x", BuildConfig(kinds=["on_policy"]), media_root=SAMPLE,
                         progress=False)
    assert report["pairs"] == 0 and report["discards"] == {"on_policy:no_policy_backend": 1}


@pytest.mark.slow
def test_on_policy_pairs_with_the_tiny_in_process_model(tmp_path, learning_seed):
    """Real sampling with the in-process backend: reproducible per seed, every sample accounted for.

    The policy is the shipped learnable default on world items: it writes world-like answers that obey some
    rules in some samples, so groups differ in CPR. (A random tiny model's token soup ties nearly every group,
    and whether one differs depended on the machine's kernels: 0 pairs on a fresh machine.)"""
    from ifpo.train.tiny_model import learnable_default
    from ifpo.verifiers.schema import read_items

    world = SAMPLE / "world"
    items = read_items(world / "heldout.jsonl")[:6]
    policy = {"backend": "transformers", "model": str(learnable_default()), "max_new_tokens": 48, "batch_size": 8}
    cfg = BuildConfig(kinds=["on_policy"], policy=policy, on_policy_k=4, on_policy_pairs=3, seed=learning_seed)
    report = build_pairs(items, tmp_path / "a", cfg, media_root=world, progress=False)
    again = build_pairs(items, tmp_path / "b", cfg, media_root=world, progress=False)
    assert (tmp_path / "a" / "pairs.jsonl").read_bytes() == (tmp_path / "b" / "pairs.jsonl").read_bytes()
    assert report == again
    assert report["pairs"] >= 1  # measured on seeds 0-5: see the note of the issue that shipped the weights
    groups = report["discards"].get("on_policy:group_all_equal", 0) + report["discards"].get(
        "on_policy:group_unjudged", 0)
    samples = sum(v for k, v in report["discards"].items() if not k.startswith("on_policy:group_"))
    kept = len(items) - groups
    assert kept * 4 == kept + report["pairs"] + samples  # chosen + rejected + counted discards
    evaluator = ChecklistEvaluator(None)
    by_id = {i["id"]: i for i in items}
    for p in _pairs(tmp_path / "a"):
        item = by_id[p["meta"]["item_id"]]
        good = evaluator.evaluate(item, p["chosen"][0]["content"][0]["text"]).verdicts
        bad = evaluator.evaluate(item, p["rejected"][0]["content"][0]["text"]).verdicts
        assert sum(v.passed is True for v in good) > sum(v.passed is True for v in bad)
    from ifpo.verifiers.generation import item_messages, make_generator

    sampler, messages = make_generator(policy, world), item_messages(items[0])
    draw = [sampler.sample(messages, 3, temperature=1.0, top_p=1.0, seed=s) for s in (5, 5, 6)]
    assert draw[0] == draw[1] != draw[2]


def test_every_builder_kind_gets_its_own_training_accuracy():
    # rewards/accuracies/<kind> is logged per PAIR_KINDS entry; a kind missing there is lumped into "other".
    from ifpo.data_builders.build import KINDS
    from ifpo.train.vision import PAIR_KINDS, kind_index

    assert [k for k in KINDS if k not in PAIR_KINDS] == []
    assert PAIR_KINDS[kind_index("on_policy")] == "on_policy"
