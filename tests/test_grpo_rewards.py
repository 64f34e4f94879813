"""Checklist rewards (train/rewards.py) and the GRPO recipe (train/grpo_recipe.py): no model, seconds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from ifpo.train.grpo_recipe import GRPORecipe, parse_grpo_recipe
from ifpo.train.grpo_trainer import prompt_row, select_items
from ifpo.train.recipe import RecipeError
from ifpo.train.rewards import ChecklistReward, RewardSpec, checklist_score, completion_text
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.judge import make_judge

REPO = Path(__file__).resolve().parent.parent
CPU = ["--use_cpu", "true", "--bf16", "false"]

# Two format constraints, one style (judge route), one content rule.
ITEM = {
    "id": "r1",
    "source": "test",
    "instruction": "Answer in at most 5 words, without commas, politely, and mention a cat.",
    "structure": "single",
    "tasks": [{"name": "answer", "description": "Answer the question."}],
    "constraints": [
        {"id": "len", "type": "response_length_constraint", "dimension": "format", "description": "At most 5 words.",
         "params": {"min_count": 1, "max_count": 5, "unit": "word"}},
        {"id": "comma", "type": "punctuation:no_comma", "dimension": "format", "description": "No commas.",
         "params": {}},
        {"id": "tone", "type": "tone", "dimension": "style", "description": "Be polite.", "params": {"tone": "polite"}},
        {"id": "cat", "type": "required_keyword_inclusion", "dimension": "content", "description": "Mention a cat.",
         "params": {"keywords": ["cat"]}},
    ],
}


def record(passed: list[bool | None], gate: bool | None = None, dims=None, types=None) -> dict:
    dims = dims or ["format"] * len(passed)
    types = types or [f"t{i}" for i in range(len(passed))]
    return {"task_gate": gate, "verdicts": [{"type": t, "dimension": d, "passed": p} for p, d, t in zip(passed, dims, types)]}


# ---- scores: truth table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "passed, gate, mode, policy, expected",
    [
        ([True, False, True, True], None, "cpr", "drop", 0.75),
        ([True, False, True, True], None, "ipr", "drop", 0.0),
        ([True, True], None, "ipr", "drop", 1.0),
        # unjudged: drop leaves the fraction, zero counts as failed, none gives no reward
        ([True, None], None, "cpr", "drop", 1.0),
        ([True, None], None, "cpr", "zero", 0.5),
        ([True, None], None, "cpr", "none", None),
        ([True, None], None, "ipr", "drop", 1.0),
        ([True, None], None, "ipr", "zero", 0.0),
        ([True, None], None, "ipr", "none", None),
        ([None, None], None, "cpr", "drop", None),
        ([None, None], None, "cpr", "zero", 0.0),
        # tcsr: the task gate multiplies; an unjudged gate follows the same policy
        ([True, False], True, "tcsr", "drop", 0.5),
        ([True, False], False, "tcsr", "drop", 0.0),
        ([True, False], None, "tcsr", "drop", 0.5),
        ([True, False], None, "tcsr", "zero", 0.0),
        ([True, False], None, "tcsr", "none", None),
    ],
)
def test_checklist_score_truth_table(passed, gate, mode, policy, expected):
    assert checklist_score(record(passed, gate), RewardSpec(mode), unjudged=policy) == expected


def test_an_unjudged_verdict_is_never_a_silent_pass():
    only_unjudged = record([None])
    for policy in ("drop", "zero", "none"):
        for mode in ("cpr", "ipr", "tcsr"):
            assert checklist_score(only_unjudged, RewardSpec(mode), unjudged=policy) in (None, 0.0)


def test_dimensions_and_type_weights():
    r = record([True, False, False], dims=["format", "format", "style"], types=["a", "b", "c"])
    assert checklist_score(r, RewardSpec("cpr", "format")) == 0.5
    assert checklist_score(r, RewardSpec("cpr", "style")) == 0.0
    assert checklist_score(r, RewardSpec("cpr", "content")) is None  # no content constraint: not applicable
    assert checklist_score(r, RewardSpec("cpr"), type_weights={"a": 3.0}) == pytest.approx(3 / 5)
    # weight 0 leaves a type out of every mode
    assert checklist_score(r, RewardSpec("ipr"), type_weights={"b": 0, "c": 0}) == 1.0


@pytest.mark.parametrize("text", ["bogus", "cpr:tone", "ipr:", ":format"])
def test_bad_reward_names(text):
    if text == "ipr:":
        assert RewardSpec.parse(text) == RewardSpec("ipr")
        return
    with pytest.raises(ValueError):
        RewardSpec.parse(text)


def test_completion_text_reads_both_formats():
    assert completion_text("plain") == "plain"
    assert completion_text([{"role": "assistant", "content": "hi"}]) == "hi"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]) == "ab"


# ---- the adapter: one evaluation per batch, shared by every reward function ---------------------


class CountingEvaluator(ChecklistEvaluator):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[int] = []

    def evaluate_many(self, pairs, **kwargs):
        pairs = list(pairs)
        self.calls.append(len(pairs))
        return super().evaluate_many(pairs, **kwargs)


def test_one_evaluate_many_per_batch_and_verdicts_match_evaluation(tmp_path):
    evaluator = CountingEvaluator(None)
    reward = ChecklistReward([ITEM], evaluator, rewards=["cpr", "ipr", "cpr:format", "cpr:style"],
                             rollouts_path=tmp_path / "rollouts.jsonl", rollouts_every=1, rollouts_per_step=2)
    completions = [[{"role": "assistant", "content": c}] for c in
                   ["a cat sat", "a cat, a dog", "one two three four five six cat", "a cat sat"]]
    logged: dict[str, list[float]] = {}
    kwargs = {"item_id": ["r1"] * 4, "log_metric": lambda k, v: logged.setdefault(k, []).append(v)}
    funcs = reward.reward_funcs()
    assert [f.__name__ for f in funcs] == ["cpr", "ipr", "cpr_format", "cpr_style"]
    values = {f.__name__: f(prompts=[None] * 4, completions=completions, **kwargs) for f in funcs}
    assert evaluator.calls == [3]  # one call, the repeated completion scored once
    # tone is judge-route and there is no judge: unjudged, dropped from the fraction (3 rule constraints)
    assert values["cpr"] == pytest.approx([1.0, 2 / 3, 2 / 3, 1.0])
    assert values["ipr"] == [1.0, 0.0, 0.0, 1.0]
    assert values["cpr_format"] == [1.0, 0.5, 0.5, 1.0]
    assert values["cpr_style"] == [None] * 4  # only an unjudged constraint: no reward, never a pass
    # the verdicts are the evaluator's, computed the same way as evaluation computes them
    direct = ChecklistEvaluator(None).evaluate(ITEM, "a cat, a dog")
    assert checklist_score(direct, RewardSpec("cpr")) == values["cpr"][1]
    # logged IPR is evaluation's: the two all-pass rollouts have an unjudged constraint, so they are undetermined
    assert logged["checklist/unjudged"] == [4.0] and logged["checklist/ipr"] == [0.0]
    assert logged["checklist/undetermined"] == [2.0]
    assert logged["checklist/pass_rate/punctuation:no_comma"] == [0.75]
    rows = [json.loads(line) for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["item_id"] == "r1" and rows[0]["rewards"]["cpr"] == 1.0
    assert {v["constraint_id"] for v in rows[0]["verdicts"]} == {"len", "comma", "tone", "cat"}
    # a new batch is a new evaluation
    funcs[0](completions=["cat"], item_id=["r1"])
    assert evaluator.calls == [3, 1]


# An empty answer passes some rules as the benchmarks define them (here a length bound from 0), so
# scored as is it earns partial reward; the default gives it 0 from every reward that applies.
EMPTY_ITEM = {
    "id": "e1", "source": "test", "instruction": "Describe it without the word 'dog', in at most 5 words.",
    "structure": "single", "tasks": [],
    "constraints": [
        {"id": "nodog", "type": "keywords:forbidden_words", "dimension": "content", "description": "No 'dog'.",
         "params": {"forbidden_words": ["dog"]}},
        {"id": "len", "type": "response_length_constraint", "dimension": "format", "description": "At most 5 words.",
         "params": {"min_count": 0, "max_count": 5, "unit": "word"}},
        {"id": "cat", "type": "required_keyword_inclusion", "dimension": "content", "description": "Mention a cat.",
         "params": {"keywords": ["cat"]}},
    ],
}


@pytest.mark.parametrize(
    "completion, empty, expected",
    [
        ("", None, {"cpr": 0.0, "ipr": 0.0, "cpr_content": 0.0, "cpr_style": None}),  # the default
        ("", "zero", {"cpr": 0.0, "ipr": 0.0, "cpr_content": 0.0, "cpr_style": None}),
        ("  \n\t ", "zero", {"cpr": 0.0, "ipr": 0.0, "cpr_content": 0.0, "cpr_style": None}),
        ("", "score", {"cpr": 1 / 3, "ipr": 0.0, "cpr_content": 0.0, "cpr_style": None}),
        # a non-empty completion is scored as always, whatever the policy
        ("a cat sits", "zero", {"cpr": 1.0, "ipr": 1.0, "cpr_content": 1.0, "cpr_style": None}),
        ("a dog sits", "zero", {"cpr": 1 / 3, "ipr": 0.0, "cpr_content": 0.0, "cpr_style": None}),
    ],
)
def test_empty_completions_get_no_reward_by_default(completion, empty, expected):
    policy = {} if empty is None else {"empty": empty}
    reward = ChecklistReward([EMPTY_ITEM], ChecklistEvaluator(), rewards=["cpr", "ipr", "cpr:content", "cpr:style"],
                             **policy)
    (scores,) = reward.score_batch(["e1"], [completion])
    assert scores == pytest.approx(expected)


def test_bad_empty_policy_is_refused():
    with pytest.raises(ValueError, match="empty must be one of"):
        ChecklistReward([EMPTY_ITEM], ChecklistEvaluator(), empty="skip")


def test_unknown_item_id_and_missing_column_are_errors():
    reward = ChecklistReward([ITEM], ChecklistEvaluator(None))
    (func,) = reward.reward_funcs()
    with pytest.raises(KeyError, match="nope"):
        func(completions=["x"], item_id=["nope"])
    with pytest.raises(ValueError, match="item_id"):
        func(completions=["x"])


@pytest.mark.parametrize("policy, expected", [("drop", 1.0), ("zero", 0.75), ("none", None)])
def test_a_failing_judge_gives_unjudged_verdicts_and_the_policy_applies(tmp_path, policy, expected):
    with FakeOpenAI(lambda body: (500, "judge down")) as server:
        judge = make_judge({"model": "j", "base_url": server.base_url, "cache_dir": str(tmp_path / "cache"),
                            "max_retries": 1, "backoff_s": 0.0, "timeout_s": 5})
        reward = ChecklistReward([ITEM], ChecklistEvaluator(judge, task_gate=False), rewards=["cpr"], unjudged=policy)
        (func,) = reward.reward_funcs()
        assert func(completions=["a cat sat", "a cat sat here"], item_id=["r1", "r1"]) == [expected, expected]
        assert len(server.requests) == 4  # two rollouts x (first try + one retry), not a silent pass
    assert judge.stats.failures == 2


def test_judge_calls_of_a_batch_are_concurrent_and_cached(tmp_path):
    with FakeOpenAI(lambda body: (200, '{"passed": true, "reason": "polite"}'), delay=0.3) as server:
        judge = make_judge({"model": "j", "base_url": server.base_url, "cache_dir": str(tmp_path / "cache"),
                            "concurrency": 8, "timeout_s": 5})
        reward = ChecklistReward([ITEM], ChecklistEvaluator(judge, task_gate=False), rewards=["cpr"])
        (func,) = reward.reward_funcs()
        completions = [f"a cat number {i}" for i in range(8)]
        import time

        start = time.perf_counter()
        assert func(completions=completions, item_id=["r1"] * 8) == [1.0] * 8
        cold = time.perf_counter() - start
        assert cold < 8 * 0.3  # eight 0.3 s requests, not one after another
        reward._cache.clear()
        func(completions=completions, item_id=["r1"] * 8)
        assert judge.stats.cache_hits == 8 and len(server.requests) == 8


# ---- items and recipes ---------------------------------------------------------------------------


def test_prompt_rows_and_item_selection():
    from ifpo.verifiers.schema import read_items

    items = read_items(REPO / "sample" / "items.jsonl")
    chosen = select_items(items, media=["image"], max_items=3)
    assert len(chosen) == 3 and all(it["media"]["images"] and not it["media"]["videos"] for it in chosen)
    assert not any(it["structure"] == "conflict" for it in select_items(items))
    row = prompt_row(next(it for it in items if it["media"].get("videos")))
    assert row["video_paths"] and row["prompt"][-1]["content"][0] == {"type": "video"}
    with pytest.raises(ValueError, match="not among"):
        select_items(items, item_ids=["missing"])


def test_recipes_parse(tmp_path):
    tiny = parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path)])
    assert tiny.args.num_generations == 4 and tiny.ifpo.rewards == ["cpr", "ipr"] and tiny.args.beta > 0
    # the random model's head trains beside the adapter, or GRPO cannot move its near-uniform policy
    assert tiny.ifpo.lora_modules_to_save == ["lm_head"]
    big = parse_grpo_recipe([str(REPO / "recipes" / "qwen3vl8b_grpo.yaml"), *CPU, "--output_dir", str(tmp_path),
                             "--eval_hook", "null"])
    assert big.ifpo.use_lora and big.ifpo.model_name_or_path.startswith("Qwen/")
    assert len(big.args.reward_weights) == len(big.ifpo.rewards)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rewards", "cpr,bogus"], "mode must be one of"),
        (["--reward_weights", "[1.0]"], "one weight per entry"),
        (["--unjudged", "pass"], "unjudged must be one of"),
        (["--empty_completions", "skip"], "empty_completions must be one of"),
        (["--num_generation", "4"], "did you mean 'num_generations'"),
        (["--use_vllm", "true"], "cannot serve lora_modules_to_save"),
        (["--use_vllm", "true", "--lora_modules_to_save", "[]", "--vllm_mode", "colocate"], "colocate is not available"),
        (["--rollout_backend", "vllm", "--lora_modules_to_save", "[]"], "rollout_backend must be one of"),
        (["--rollout_backend", "vllm_server", "--lora_modules_to_save", "[]", "--vllm_url", "htp://x"], "vllm_url"),
        (["--rollout_backend", "vllm_server", "--lora_modules_to_save", "[]", "--vllm_sync_steps", "0"],
         "vllm_sync_steps"),
        (["--constraint_type_weights", '{"word_count": -1}'], ">= 0"),
        (["--use_lora", "false", "--lora_modules_to_save", "[lm_head]"], "needs use_lora"),
    ],
)
def test_bad_recipes_name_the_key(tmp_path, argv, message):
    with pytest.raises(RecipeError, match=message):
        parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path), *argv])


def test_model_and_lora_keys_mirror_the_dpo_recipe():
    from ifpo.train.recipe import DPORecipe

    for name in ("model_name_or_path", "lora_r", "lora_target_modules", "image_max_pixels", "video_fps"):
        assert GRPORecipe.__dataclass_fields__[name].metadata == DPORecipe.__dataclass_fields__[name].metadata
    assert not math.isnan(GRPORecipe().lora_alpha)


def test_peft_config_trains_the_recipes_modules_to_save(tmp_path):
    from ifpo.train.grpo_trainer import grpo_peft_config

    tiny = parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path)])
    config = grpo_peft_config(tiny.ifpo)
    assert config.modules_to_save == ["lm_head"] and "language_model" in config.target_modules
    plain = parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path),
                               "--lora_modules_to_save", "[]"])
    assert grpo_peft_config(plain.ifpo).modules_to_save is None
