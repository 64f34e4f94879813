"""What the text layer costs at realistic sizes, side by side with lm-eval's IFEval checkers.

    python bench/text_speed.py --ifeval DIR [--reference-python /work/venvs/lmeval/bin/python] [--repeat 3]

DIR holds IFEval's ``input_data.jsonl`` and ``input_response_data_gpt4_20231107_145030.jsonl`` (the
responses google-research ships in ``instruction_following_eval/data``; read, never copied into ifpo).
The reference environment is bench/setup_lmeval_env.sh's (lm-eval with NLTK and the punkt_tab model).
In one run, on one core each:

1. ``ifpo score --format ifeval`` on those responses, strict and loose, as a user runs it: the
   command's CPU seconds (user + sys, interpreter start and imports included), and the scoring alone
   (in this process, after a warm-up on other text).
2. lm-eval's IFEval checkers on the same (instruction, kwargs, response) triples, strict and loose (its
   loose: the eight variants): CPU seconds of the checks; and the verdicts of both sides compared.
3. The checklist reward of one 512-token completion (about 2,300 characters of the responses' own
   prose), per completion, cold (every tokenizer cache emptied first) and as GRPO sees it (one
   tokenization shared by the item's checks): ``ChecklistReward.score_batch`` over the IFEval items.
4. The size policy: the cost of one response at ``MAX_TOKENIZED_CHARS`` for the three tokenizers.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def find(dir_: Path, name: str) -> Path:
    for path in (dir_ / name, dir_ / "data" / name):
        if path.is_file():
            return path
    raise SystemExit(f"{name} not found in {dir_} or {dir_ / 'data'}")


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def ifpo_score_cli(items: Path, responses: Path, mode: str, out: Path) -> tuple[float, float]:
    before, start = children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "ifpo.cli", "score", "--items", str(items), "--responses", str(responses),
                    "--format", "ifeval", "--mode", mode, "--out", str(out), "--no-progress"],
                   check=True, stdout=subprocess.DEVNULL)
    return children_cpu() - before, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ifeval", type=Path, required=True, help="folder with IFEval's input_data.jsonl and responses")
    ap.add_argument("--reference-python", default=str(HERE / ".lmeval" / "bin" / "python"))
    ap.add_argument("--repeat", type=int, default=3, help="in-process timings: the least of this many runs")
    ap.add_argument("--completions", type=int, default=200, help="512-token completions to score")
    args = ap.parse_args()

    from ifpo.verifiers import text
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.rewards import ChecklistReward
    from ifpo.verifiers.score import load_ifeval_items

    items_path = find(args.ifeval, "input_data.jsonl")
    responses_path = find(args.ifeval, "input_response_data_gpt4_20231107_145030.jsonl")
    records = load(items_path)
    by_prompt = {" ".join(r["prompt"].split()): r["response"] for r in load(responses_path)}
    items, problems = load_ifeval_items(items_path)
    print(f"IFEval: {len(records)} prompts, {len(by_prompt)} responses, {len(items)} items"
          f"{f', {len(problems)} input problems' if problems else ''}")

    # 1. ifpo score, as a user runs it, and the scoring alone
    verdicts: dict[str, list[bool | None]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("strict", "loose"):
            out = Path(tmp) / f"{mode}.json"
            cpu, wall = ifpo_score_cli(items_path, responses_path, mode, out)
            report = json.loads(out.read_text())
            verdicts[mode] = [v["passed"] for it in report["items"] for v in it["verdicts"]]
            print(f"ifpo score --mode {mode}: {cpu:.2f} CPU s ({wall:.1f} s wall) for {len(report['items'])} responses, "
                  f"{len(verdicts[mode])} verdicts (the command: interpreter start and imports included)")
    pairs = [(item, by_prompt[" ".join(rec["prompt"].split())]) for item, rec in zip(items, records)]
    for mode in ("strict", "loose"):
        evaluator = ChecklistEvaluator(task_gate=False, mode=mode)
        evaluator.evaluate_many(pairs[:20], progress=False)  # warm-up: imports, models, compiled patterns
        best = float("inf")
        for _ in range(args.repeat):
            text.clear_caches()
            start = time.process_time()
            evaluator.evaluate_many(pairs, progress=False)
            best = min(best, time.process_time() - start)
        print(f"ifpo scoring alone, {mode}: {best:.3f} CPU s for {len(pairs)} responses "
              f"({1000 * best / len(pairs):.2f} ms per response)")

    # 2. lm-eval's checkers on the same triples
    cases = [{"id": iid, "kwargs": kw, "prompt": rec["prompt"], "response": by_prompt[" ".join(rec["prompt"].split())]}
             for rec in records for iid, kw in zip(rec["instruction_id_list"], rec["kwargs"])]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "cases.jsonl", Path(tmp) / "out.json"
        src.write_text("".join(json.dumps(c) + "\n" for c in cases))
        before = children_cpu()
        subprocess.run([args.reference_python, str(HERE / "_lmeval_timed_runner.py"), str(src), str(dst)], check=True)
        process_cpu = children_cpu() - before
        ref = json.loads(dst.read_text())
    print(f"lm-eval checkers, strict + loose: {ref['check_cpu_s']:.2f} CPU s for the checks "
          f"({process_cpu:.2f} CPU s with its interpreter start and imports) on {len(cases)} instructions")
    for k, mode in enumerate(("strict", "loose")):
        theirs = [v[k] for v in ref["verdicts"]]
        ours = verdicts[mode]
        # the reference draws a random letter where letter_frequency's letter is none (not deterministic)
        random = [c["id"] == "keywords:letter_frequency" and not str(c["kwargs"].get("letter") or "").isalpha()
                  for c in cases]
        det = [(c["id"], o, t) for c, o, t, rnd in zip(cases, ours, theirs, random) if not rnd]
        differ = [(i, o, t) for i, o, t in det if o != t]
        print(f"  {mode}: {len(det) - len(differ)}/{len(det)} verdicts equal on the deterministic instructions "
              f"({sum(random)} left out: a letter_frequency letter that is no letter); differing: "
              f"{sorted(set(differ)) or 'none'}")

    # 3. the checklist reward of a 512-token completion
    prose = " ".join(r["response"] for r in load(responses_path))
    size = 2_300  # ~512 tokens of English prose for a BPE tokenizer (about 4.5 characters a token)
    reward = ChecklistReward(items, ChecklistEvaluator(task_gate=False), rewards=("cpr",))
    n = min(args.completions, len(items))
    batch_ids = [str(items[i]["id"]) for i in range(n)]
    batch = [prose[i * size : (i + 1) * size] for i in range(n)]
    reward.score_batch(batch_ids[:10], [t + " warm" for t in batch[:10]])
    best_cold = best_batch = float("inf")
    for r in range(args.repeat):
        start = time.process_time()
        for i, t in zip(batch_ids, batch):
            text.clear_caches()
            reward.score_batch([i], [t + f" {r}"])
        best_cold = min(best_cold, time.process_time() - start)
        text.clear_caches()
        start = time.process_time()
        reward.score_batch(batch_ids, [t + f" b{r}" for t in batch])
        best_batch = min(best_batch, time.process_time() - start)
    checks = sum(len(items[i]["constraints"]) for i in range(n))
    print(f"checklist reward (cpr), {n} completions of {size:,} characters, {checks} checks: "
          f"{1000 * best_cold / n:.2f} ms per completion scored alone, cold; "
          f"{1000 * best_batch / n:.2f} ms per completion in one batch")

    # the same completions against one item holding every check that reads sentences or words (the
    # tokenizer-bound worst case of one completion: all three tokenizers run, once each)
    tokenized = {"id": "tok", "prompt": "p", "constraints": [
        {"id": f"c{k}", "type": t, "params": prm} for k, (t, prm) in enumerate([
            ("ratio:sentence_type", {}), ("ratio:sentence_balance", {}), ("ratio:sentence_words", {}),
            ("count:pronouns", {"N": 5}), ("words:last_first", {}), ("words:words_position", {"keyword": "the"}),
            ("words:keywords_specific_position", {"keyword": "the", "n": 2, "m": 3}),
            ("sentence:alliteration_increment", {}), ("sentence:keyword", {"word": "the", "N": 2}),
            ("sentence:increment", {"small_n": 1}), ("format:emoji", {}), ("format:no_bullets_bullets", {}),
            ("format:title_case", {}), ("custom:word_reverse", {}), ("custom:sentence_alphabet", {}),
            ("length_constraints:number_sentences", {"num_sentences": 10, "relation": "at least"}),
            ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "at least"}),
            ("sentence_count", {"min_count": 5, "max_count": 40}),
        ])]}
    heavy = ChecklistReward([tokenized], ChecklistEvaluator(task_gate=False), rewards=("cpr",))
    heavy.score_batch(["tok"], ["Warm up. The end."])
    best = float("inf")
    for r in range(args.repeat):
        start = time.process_time()
        for t in batch:
            text.clear_caches()
            heavy.score_batch(["tok"], [t + f" {r}"])
        best = min(best, time.process_time() - start)
    print(f"checklist reward (cpr) with the {len(tokenized['constraints'])} sentence and word checks, "
          f"same completions: {1000 * best / n:.2f} ms per completion, cold")

    # 4. the size policy: one response at the bound
    bound = text.MAX_TOKENIZED_CHARS
    at_bound = (prose * (bound // len(prose) + 1))[:bound]
    one_line = at_bound.replace("\n", " ")
    for name, fn, sample in (("punkt_sentences", text.punkt_sentences, at_bound),
                             ("word_tokenize (Punkt, then Treebank)", text.word_tokenize, at_bound),
                             ("split_sentences", text.split_sentences, at_bound),
                             ("split_sentences, one line", text.split_sentences, one_line)):
        text.clear_caches()
        start = time.process_time()
        fn(sample)
        print(f"at the bound ({bound:,} characters), {name}: {time.process_time() - start:.3f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
