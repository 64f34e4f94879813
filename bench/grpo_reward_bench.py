"""GRPO bench on CPU: reward cost per rollout beside step time, and a longer tiny-model run on a length budget.

    python bench/grpo_reward_bench.py --out runs/bench/grpo            # both parts, a few minutes on 2 cores
    python bench/grpo_reward_bench.py --part reward                   # reward cost only (seconds)
    python bench/grpo_reward_bench.py --part train --steps 150        # the learning experiment only

Part 1 (reward): the checklist reward of ``train/rewards.py`` over every non-conflict sample item
with several responses each (the reference, a truncated and a case-flipped variant), timed per
rollout for (a) rule verdicts only (no judge; judge-route constraints unjudged) and (b) with a judge
on a local OpenAI-compatible server (``tests/fake_openai.py``), cold and with a warm on-disk cache.

Part 2 (train): ``IfpoGRPOTrainer`` on the tiny Qwen3-VL with two text items whose checklist is
either three word budgets (``length``: at most 12, 10 and 8 words; CPR rewards shorter answers) or
five letter budgets (``letters``: fewer than 4/6/8/10/12 letters "e"), ``--steps`` optimizer steps
of 2 prompts x 4 rollouts at temperature 1. Reports step time, reward cost per rollout inside the
run, and the mean reward of the first and last 20 steps with their spread (``reward_rose``: the
rise exceeds twice its standard error). The recipe trains the random model's ``lm_head`` beside the
LoRA adapter (``lora_modules_to_save``); without it the policy stays near uniform and the reward flat
(``-- --lora_modules_to_save '[]'`` shows that). Everything goes to ``OUT/report.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

# Random-token rollouts of 24 tokens hold 10-18 words, so budgets in that range give a graded reward
# that varies within a group; fewer words per token (longer sub-words, earlier end) earns more.
BUDGETS = (12, 10, 8)
LENGTH_ITEMS = [
    {
        "id": f"len-{i}",
        "source": "bench",
        "media": {"videos": [], "images": []},
        "instruction": instruction,
        "structure": "single",
        "tasks": [{"name": "answer", "description": "Answer briefly."}],
        "constraints": [
            {"id": f"c{j}", "type": "response_length_constraint", "dimension": "format",
             "description": f"Answer in at most {n} words.", "params": {"min_count": 1, "max_count": n, "unit": "word"}}
            for j, n in enumerate(BUDGETS, start=1)
        ],
    }
    for i, instruction in enumerate(["Name a colour, briefly.", "Say one word about the sky."])
]


# A second checklist the random model can move quickly: "fewer than N letters e" for several N.
# Every sampled token either contains an "e" or not, so the policy gets a graded, per-token signal.
LETTER_THRESHOLDS = (4, 6, 8, 10, 12)
LETTER_ITEMS = [
    {
        "id": f"letter-{i}",
        "source": "bench",
        "media": {"videos": [], "images": []},
        "instruction": instruction,
        "structure": "single",
        "tasks": [{"name": "answer", "description": "Answer briefly."}],
        "constraints": [
            {"id": f"c{j}", "type": "keywords:letter_frequency", "dimension": "content",
             "description": f"Use the letter e fewer than {n} times.",
             "params": {"letter": "e", "let_frequency": n, "let_relation": "less than"}}
            for j, n in enumerate(LETTER_THRESHOLDS, start=1)
        ],
    }
    for i, instruction in enumerate(["Name a colour, briefly.", "Say one word about the sky."])
]
CHECKLISTS = {"length": LENGTH_ITEMS, "letters": LETTER_ITEMS}


def _variants(text: str) -> list[str]:
    words = text.split()
    return [text, " ".join(words[: max(1, len(words) // 2)]), text.swapcase()]


def reward_cost(out: Path, repeats: int = 3) -> dict:
    from fake_openai import FakeOpenAI
    from ifpo.train.grpo_trainer import select_items
    from ifpo.train.rewards import ChecklistReward
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.judge import make_judge
    from ifpo.verifiers.schema import read_items

    items = select_items(read_items(REPO / "sample" / "items.jsonl"))
    pairs = [(str(it["id"]), v) for it in items for v in _variants(it["reference_response"])]
    ids, texts = [p[0] for p in pairs], [p[1] for p in pairs]

    def timed(reward) -> float:
        best = float("inf")
        for _ in range(repeats):
            reward._cache.clear()
            start = time.perf_counter()
            reward.score_batch(ids, texts)
            best = min(best, time.perf_counter() - start)
        return best / len(texts)

    result: dict = {"rollouts": len(texts), "items": len(items)}
    rule = ChecklistReward(items, ChecklistEvaluator(None, media_root=REPO / "sample"), rewards=["cpr", "ipr"])
    result["rule_only_ms_per_rollout"] = round(1000 * timed(rule), 3)

    def handler(body):
        # Answers shaped by the request's schema, as a schema-constrained endpoint returns them.
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        props = schema.get("properties", {})
        if "params" in props:
            return 200, json.dumps({"params": {}})
        if "answers" in props:
            return 200, json.dumps({"answers": [True] * props["answers"].get("minItems", 1), "reason": "ok"})
        answer = {k: True for k in schema.get("required", []) if props.get(k, {}).get("type") == "boolean"}
        return 200, json.dumps({"passed": True, "reason": "ok", **answer})

    latency = 0.05  # a fast local judge server; cold cost scales with it, warm cost does not
    with tempfile.TemporaryDirectory() as cache, FakeOpenAI(handler, delay=latency) as server:
        judge = make_judge({"model": "bench-judge", "base_url": server.base_url, "cache_dir": cache,
                            "concurrency": 8, "max_retries": 0, "timeout_s": 10})
        judged = ChecklistReward(items, ChecklistEvaluator(judge, media_root=REPO / "sample", task_gate=False),
                                 rewards=["cpr", "ipr"])
        start = time.perf_counter()
        judged.score_batch(ids, texts)
        result["judge_cold_ms_per_rollout"] = round(1000 * (time.perf_counter() - start) / len(texts), 3)
        result["judge_cold_requests"] = len(server.requests)
        result["judge_server_latency_s"] = latency
        result["judge_warm_cache_ms_per_rollout"] = round(1000 * timed(judged), 3)
        result["judge_requests_after_warm"] = len(server.requests) - result["judge_cold_requests"]
        result["judge_stats"] = judge.stats.as_dict()
    return result


def train_run(out: Path, steps: int, checklist: str = "length", overrides: list[str] | None = None) -> dict:
    from ifpo.train import callbacks as cb
    from ifpo.train.grpo_recipe import parse_grpo_recipe
    from ifpo.train.grpo_trainer import IfpoGRPOTrainer, build_prompt_dataset, grpo_peft_config
    from ifpo.train.model import load_processor_and_model
    from ifpo.train.rewards import ChecklistReward
    from ifpo.verifiers.checklist import ChecklistEvaluator

    items = CHECKLISTS[checklist]
    run_dir = out / f"train-{checklist}"
    recipe = parse_grpo_recipe([str(REPO / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(run_dir),
                                "--max_steps", str(steps), "--save_strategy", "no", "--logging_steps", "1",
                                "--rewards", "cpr", "--reward_weights", "[1.0]", "--rollouts_every", "10",
                                *(overrides or [])])
    cfg, args = recipe.ifpo, recipe.args
    processor, model = load_processor_and_model(cfg, args)
    reward = ChecklistReward(items, ChecklistEvaluator(None, task_gate=False), rewards=cfg.rewards,
                             rollouts_path=run_dir / "rollouts.jsonl", rollouts_every=10)
    log_path = run_dir / "log_history.jsonl"
    if log_path.exists():
        log_path.unlink()
    timer = cb.StepTimerCallback()
    trainer = IfpoGRPOTrainer(model=model, args=args, reward_funcs=reward.reward_funcs(),
                              train_dataset=build_prompt_dataset(items), processing_class=processor,
                              peft_config=grpo_peft_config(cfg), callbacks=[cb.JsonlLogCallback(log_path), timer])
    start = time.perf_counter()
    trainer.train()
    elapsed = time.perf_counter() - start
    logs = [json.loads(line) for line in log_path.read_text().splitlines()]
    steps_logged = [r for r in logs if "rewards/cpr/mean" in r]
    rewards = [r["rewards/cpr/mean"] for r in steps_logged]
    lengths = [r["completions/mean_length"] for r in steps_logged]
    first, last = rewards[:20], rewards[-20:]
    # Step means are noisy (8 rollouts each); the rise counts only beyond twice its standard error.
    rise = statistics.mean(last) - statistics.mean(first)
    rise_se = (statistics.pvariance(first) / len(first) + statistics.pvariance(last) / len(last)) ** 0.5
    return {
        "checklist": checklist,
        "steps": len(rewards),
        "seconds": round(elapsed, 1),
        "speed": cb.speed_summary(timer),
        "reward_ms_per_rollout": round(1000 * reward.seconds / max(reward.rollouts_scored, 1), 3),
        "mean_reward_first20": round(statistics.mean(first), 4),
        "mean_reward_last20": round(statistics.mean(last), 4),
        "sd_reward_first20": round(statistics.pstdev(first), 4),
        "sd_reward_last20": round(statistics.pstdev(last), 4),
        "reward_rise": round(rise, 4),
        "reward_rise_se": round(rise_se, 4),
        "mean_tokens_first20": round(statistics.mean(lengths[:20]), 2),
        "mean_tokens_last20": round(statistics.mean(lengths[-20:]), 2),
        "reward_rose": rise > 2 * rise_se,
        "kl_last20": round(statistics.mean(r.get("kl", 0.0) for r in steps_logged[-20:]), 4),
        "entropy_last20": round(statistics.mean(r.get("entropy", 0.0) for r in steps_logged[-20:]), 4),
        "reward_per_step": [round(r, 4) for r in rewards],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/bench/grpo")
    parser.add_argument("--part", choices=["reward", "train", "all"], default="all")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--checklist", choices=sorted(CHECKLISTS), nargs="+", default=["length", "letters"],
                        help="learning runs: 'length' (word budgets) and/or 'letters' (fewer than N letters e)")
    parser.add_argument("overrides", nargs="*", help="recipe overrides for the learning runs, e.g. -- --learning_rate 0.02")
    ns = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict = {}
    if ns.part in ("reward", "all"):
        report["reward_cost"] = reward_cost(out)
        print(json.dumps(report["reward_cost"], indent=2))
    if ns.part in ("train", "all"):
        for checklist in ns.checklist:
            run = train_run(out, ns.steps, checklist, ns.overrides)
            report[f"{checklist}_run"] = run
            print(json.dumps({k: v for k, v in run.items() if k != "reward_per_step"}, indent=2))
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
