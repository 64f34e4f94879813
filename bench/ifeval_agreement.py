"""Verdict agreement with lm-eval's IFEval reference checkers, strict and loose, per instruction id.

    bash bench/setup_lmeval_env.sh          # once: the reference in its own venv (bench/.lmeval)
    python bench/ifeval_agreement.py [--n 40] [--reference-python bench/.lmeval/bin/python]

Cases: N generated (kwargs, response) cases per IFEval id (bench/ifeval_vs_lmeval.py's generator,
every id included, the Punkt ones too), each also wrapped in a chatty first line, a sign-off last
line and ``**`` markup so that loose mode matters, plus the IFEval instructions of tests/data's
IFEval-shaped fixtures with their responses. ifpo's verdicts come from ``ChecklistEvaluator(mode=...)``; the reference's from
bench/_lmeval_agreement_runner.py. Prints agreement per id, strict and loose, and each disagreement.
IFBench's checkers are not on PyPI (allenai/IFBench is a repository, not a package), so they have
no reference run here; tests/test_rules_ifbench.py holds their behaviour as truth tables.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ifeval_vs_lmeval import make_case  # noqa: E402  (the generator of the speed bench)

# keywords:letter_frequency with a non-letter is left out: the reference draws a random letter there.


SENTENCE_BITS = ["Dr. Smith came at 5 p.m.", "It cost $3.50.", "1. First item", "2. Second item", "Wait... what?",
                 '"Stop!" she said.', "See Fig. 3 for the U.S. data!", "e.g. this one.", "The end", "Mr. J. R. R. Tolkien wrote."]
CAPS = ["VERY", "GOOD", "AI-BASED", "DON'T", "NASA", "I", "OK.", "U.S.A.", "word", "Idea"]


def case(rng: random.Random, iid: str) -> tuple[dict, str]:
    """make_case, plus the two ids the speed bench leaves out (sentences and capital words)."""
    rel = rng.choice(["less than", "at least"])
    if iid == "length_constraints:number_sentences":
        text = rng.choice([" ", "\n"]).join(rng.sample(SENTENCE_BITS, rng.randint(2, 7)))
        return {"num_sentences": rng.randint(2, 8), "relation": rel}, text
    if iid == "change_case:capital_word_frequency":
        text = " ".join(rng.choice(CAPS) for _ in range(rng.randint(3, 12)))
        return {"capital_frequency": rng.randint(1, 6), "capital_relation": rel}, text
    return make_case(rng, iid)


def fixture_cases(ids: set[str]) -> list[dict]:
    """The IFEval instructions of tests/data's IFEval-shaped fixtures with their responses (matched by
    prompt after whitespace normalisation); a letter_frequency letter that is not a letter is left out
    (the reference draws a random one)."""
    data = HERE.parent / "tests" / "data"
    out = []
    for stem in ("ifeval", "ifeval_official"):
        records = [json.loads(x) for x in (data / f"{stem}_input.jsonl").read_text().splitlines() if x.strip()]
        responses = {" ".join(r["prompt"].split()): r["response"]
                     for r in map(json.loads, (data / f"{stem}_responses.jsonl").read_text().splitlines()) if "prompt" in r}
        for rec in records:
            response = responses.get(" ".join(rec["prompt"].split()))
            for iid, kw in zip(rec["instruction_id_list"], rec["kwargs"]):
                kw = {k: v for k, v in (kw or {}).items() if v is not None}
                bad_letter = iid == "keywords:letter_frequency" and not str(kw.get("letter", "")).isalpha()
                if response is not None and iid in ids and not bad_letter and kw.get("num_words", 0) >= 0:
                    out.append({"id": iid, "kwargs": kw, "response": response})
    return out


def wrap(rng: random.Random, response: str) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return "Sure! Here is my answer:\n" + response
    if kind == 1:
        return response + "\nI hope this helps!"
    if kind == 2:
        return "**" + response + "**"
    return response


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40, help="generated cases per id (each also wrapped)")
    ap.add_argument("--reference-python", default=str(HERE / ".lmeval" / "bin" / "python"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    from ifpo.verifiers.constraints import REGISTRY

    ids = sorted(t.id for t in REGISTRY if t.source == "ifeval")
    cases = []
    for iid in ids:
        for _ in range(args.n):
            kwargs, response = case(rng, iid)
            cases.append({"id": iid, "kwargs": kwargs, "response": response})
            cases.append({"id": iid, "kwargs": kwargs, "response": wrap(rng, response)})
    cases += fixture_cases(set(ids))
    from ifpo.verifiers.checklist import ChecklistEvaluator

    ours = {}
    for mode in ("strict", "loose"):
        ev = ChecklistEvaluator(mode=mode)
        ours[mode] = [
            ev.evaluate({"id": "x", "instruction": "p", "structure": "single", "tasks": [],
                         "constraints": [{"id": "c", "type": c["id"], "params": c["kwargs"]}]},
                        c["response"]).verdicts[0].passed
            for c in cases
        ]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "cases.jsonl", Path(tmp) / "out.json"
        src.write_text("".join(json.dumps(c) + "\n" for c in cases))
        subprocess.run([args.reference_python, str(HERE / "_lmeval_agreement_runner.py"), str(src), str(dst)], check=True)
        ref = json.loads(dst.read_text())
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # n, strict agree, loose agree
    misses = []
    for c, s, lo, (rs, rl) in zip(cases, ours["strict"], ours["loose"], ref):
        row = stats[c["id"]]
        row[0] += 1
        row[1] += s == rs
        row[2] += lo == rl
        if s != rs or lo != rl:
            misses.append((c["id"], s, rs, lo, rl, c["response"][:80]))
    width = max(len(i) for i in stats)
    print(f"{'instruction id':<{width}}  {'n':>4}  {'strict':>7}  {'loose':>7}")
    tot = [0, 0, 0]
    for iid, (n, a, b) in sorted(stats.items()):
        print(f"{iid:<{width}}  {n:>4}  {100 * a / n:6.1f}%  {100 * b / n:6.1f}%")
        tot = [tot[0] + n, tot[1] + a, tot[2] + b]
    print(f"{'all':<{width}}  {tot[0]:>4}  {100 * tot[1] / tot[0]:6.1f}%  {100 * tot[2] / tot[0]:6.1f}%")
    lifted = sum(1 for s, lo in zip(ours["strict"], ours["loose"]) if lo and not s)
    lifted_ref = sum(1 for rs, rl in ref if rl and not rs)
    print(f"cases where loose passes and strict fails: ifpo {lifted}, reference {lifted_ref}")
    for m in misses[:30]:
        print("disagree:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
