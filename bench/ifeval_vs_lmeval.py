"""Rule-check throughput: ifpo's IFEval checkers vs lm-eval's reference checkers, same inputs.

    bash bench/setup_lmeval_env.sh                      # once: lm-eval in its own venv (bench/.lmeval)
    python bench/ifeval_vs_lmeval.py [--n 12000] [--reference-python bench/.lmeval/bin/python]

Generates N deterministic (instruction id, kwargs, response) cases over the IFEval ids, checks
them with ifpo in this process (one core) and with lm-eval's ``instructions_registry`` in the
reference environment (one core), and prints checks/s for both, the ratio, and every verdict
disagreement per id. Ids compared: the deterministic ones. Left out, and said so: ids whose
reference needs NLTK's punkt model, which the reference downloads at import time and which this
offline machine cannot fetch (``length_constraints:number_sentences``,
``change_case:capital_word_frequency``); ``language:response_language`` is compared with
langdetect seeded on both sides, and (with the two case ids that also call langdetect) timed
as a separate group, checked in a pass of its own after the deterministic cases on both sides
(``--interleaved`` keeps the generated order): the >= 5x target is for the deterministic ids.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEEDS_PUNKT = {"length_constraints:number_sentences", "change_case:capital_word_frequency"}
# The reference calls langdetect unseeded: these ids are not deterministic there. They are
# compared with langdetect seeded on both sides and timed as a group of their own, since a
# language detection costs milliseconds and would hide every other checker's speed.
LANGDETECT = {"language:response_language", "change_case:english_capital", "change_case:english_lowercase"}

WORDS = (
    "the a red circle moves across screen while blue square appears near corner video shows green triangle "
    "river stone light quickly slowly then after before finally object color changes into yellow star bright "
    "small large left right top bottom center frame scene camera motion appears disappears twice again"
).split()


def sentence(rng: random.Random, lo: int = 5, hi: int = 14) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(["river", "stone", "circle"]) + ",")
    return " ".join(words).capitalize() + rng.choice([".", ".", "!", "?"])


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 4)))


def text(rng: random.Random) -> str:
    return "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 4)))


def make_case(rng: random.Random, iid: str) -> tuple[dict, str]:
    """kwargs and a response for one id, so that roughly half pass."""
    t = text(rng)
    rel = rng.choice(["less than", "at least"])
    if iid == "keywords:existence":
        return {"keywords": rng.sample(["river", "stone", "circle", "banana"], 2)}, t
    if iid == "keywords:frequency":
        return {"keyword": rng.choice(["circle", "river", "red"]), "frequency": rng.randint(1, 3), "relation": rel}, t
    if iid == "keywords:forbidden_words":
        return {"forbidden_words": rng.sample(["stone", "banana", "square", "moon"], 2)}, t
    if iid == "keywords:letter_frequency":
        return {"letter": rng.choice("aeiorst"), "let_frequency": rng.randint(3, 30), "let_relation": rel}, t
    if iid == "language:response_language":
        lang = rng.choice(["en", "fr", "de"])
        body = t if rng.random() < 0.6 else "Le chat noir dort sur la table pendant que la pluie tombe doucement."
        return {"language": lang}, body
    if iid == "length_constraints:number_paragraphs":
        n = rng.randint(1, 4)
        body = "\n***\n".join(paragraph(rng) for _ in range(rng.choice([n, n, n + 1])))
        return {"num_paragraphs": n}, body
    if iid == "length_constraints:number_words":
        return {"num_words": rng.randint(10, 80), "relation": rel}, t
    if iid == "length_constraints:nth_paragraph_first_word":
        n = rng.randint(2, 3)
        paras = [paragraph(rng) for _ in range(n)]
        first = paras[rng.randrange(n)].split()[0].lower().strip(".,!?")
        return {"num_paragraphs": n, "nth_paragraph": rng.randint(1, n), "first_word": first}, "\n\n".join(paras)
    if iid == "detectable_content:number_placeholders":
        body = t + " " + " ".join(f"[{w}]" for w in rng.sample(WORDS, rng.randint(0, 3)))
        return {"num_placeholders": rng.randint(1, 3)}, body
    if iid == "detectable_content:postscript":
        marker = rng.choice(["P.S.", "P.P.S"])
        body = t + (f"\n\n{rng.choice(['P.S.', 'P.P.S'])} {sentence(rng)}" if rng.random() < 0.7 else "")
        return {"postscript_marker": marker}, body
    if iid == "detectable_format:number_bullet_lists":
        k = rng.randint(1, 4)
        body = "\n".join(f"{rng.choice(['*', '-'])} {sentence(rng)}" for _ in range(rng.choice([k, k + 1])))
        return {"num_bullets": k}, body
    if iid == "detectable_format:constrained_response":
        return {}, rng.choice(["My answer is yes.", "My answer is no.", t, "I think My answer is maybe."])
    if iid == "detectable_format:number_highlighted_sections":
        k = rng.randint(1, 3)
        body = t + " " + " ".join(f"*{rng.choice(WORDS)} part*" for _ in range(rng.randint(0, 3)))
        return {"num_highlights": k}, body
    if iid == "detectable_format:multiple_sections":
        k = rng.randint(2, 4)
        splitter = rng.choice(["Section", "SECTION", "Part"])
        body = "\n".join(f"{splitter} {i + 1}\n{paragraph(rng)}" for i in range(rng.choice([k, k - 1])))
        return {"section_spliter": splitter, "num_sections": k}, body
    if iid == "detectable_format:json_format":
        obj = {"summary": sentence(rng), "count": rng.randint(1, 9)}
        return {}, rng.choice([json.dumps(obj), "```json\n" + json.dumps(obj) + "\n```", t, "{bad json"])
    if iid == "detectable_format:title":
        return {}, rng.choice([f"<<{sentence(rng, 2, 4)[:-1]}>>\n{t}", t, f"<< >>\n{t}"])
    if iid == "combination:two_responses":
        a, b = paragraph(rng), paragraph(rng)
        return {}, rng.choice([f"{a}\n******\n{b}", f"{a}\n******\n{a}", a])
    if iid == "combination:repeat_prompt":
        prompt = sentence(rng)
        return {"prompt_to_repeat": prompt}, rng.choice([f"{prompt} {t}", t])
    if iid == "startend:end_checker":
        phrase = rng.choice(["Is there anything else I can help with?", "Any other questions?"])
        return {"end_phrase": phrase}, rng.choice([f"{t} {phrase}", t, f"{t} {phrase}  "])
    if iid == "change_case:english_capital":
        return {}, rng.choice([t.upper(), t])
    if iid == "change_case:english_lowercase":
        return {}, rng.choice([t.lower(), t])
    if iid == "punctuation:no_comma":
        return {}, t
    if iid == "startend:quotation":
        return {}, rng.choice([f'"{t}"', t, f'  "{t}"  '])
    raise KeyError(iid)


def build_cases(n: int, ids: list[str], seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        iid = ids[i % len(ids)]
        kwargs, response = make_case(rng, iid)
        cases.append({"id": iid, "kwargs": kwargs, "response": response})
    return cases


def warmup_indices(cases: list[dict], per_id: int = 10) -> list[int]:
    """The first few cases of every id (the same rule as in _lmeval_runner.py), so that each
    group is warmed up whatever the order of the cases."""
    seen: Counter = Counter()
    out = []
    for i, c in enumerate(cases):
        if seen[c["id"]] < per_id:
            seen[c["id"]] += 1
            out.append(i)
    return out


def run_ifpo(cases: list[dict], passes: int = 1) -> tuple[list[bool], list[float]]:
    """ifpo's verdicts and per-check seconds (the least over ``passes`` passes over all cases).

    Parameters are resolved (validated, defaults filled) once per case outside the timing, as the
    reference builds each instruction's description outside its timing: both sides time the check
    of a response against an already-configured constraint, which is what scoring and RL rewards
    repeat.
    """
    import ifpo.verifiers.constraints  # noqa: F401  (registers every type)
    from ifpo.verifiers.registry import REGISTRY, resolve_params

    prepared = []
    for c in cases:
        ctype = REGISTRY.get(c["id"])
        prepared.append((ctype.checker, resolve_params(ctype, c["kwargs"]), c["response"]))
    for i in warmup_indices(cases):  # warm-up: lazy imports, regex caches
        checker, params, response = prepared[i]
        checker(response, params)
    seconds = [float("inf")] * len(prepared)
    for _ in range(passes):
        out = []
        for i, (checker, params, response) in enumerate(prepared):
            start = time.perf_counter()
            out.append(checker(response, params).passed)
            seconds[i] = min(seconds[i], time.perf_counter() - start)
    return out, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12_000, help="number of (id, kwargs, response) cases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--passes", type=int, default=1,
                        help="check every case this many times (same order, both sides) and keep each "
                             "case's least time: discounts preemption on a shared machine")
    parser.add_argument("--interleaved", action="store_true",
                        help="check the langdetect cases interleaved with the others, as generated, instead "
                             "of in a pass of their own after them")
    parser.add_argument("--reference-python", default=str(HERE / ".lmeval" / "bin" / "python"),
                        help="python of the environment that has lm-eval installed")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    import ifpo.verifiers.constraints  # noqa: F401
    from ifpo.verifiers.registry import REGISTRY

    ids = sorted(t.id for t in REGISTRY if t.source == "ifeval" and t.id not in NEEDS_PUNKT)
    cases = build_cases(args.n, ids, args.seed)
    if not args.interleaved:
        # Each group is checked in a pass of its own (both sides). Interleaved, every language
        # detection (milliseconds, megabytes of profiles) evicts the CPU caches, and the next few
        # deterministic checks pay for refilling them: that cost belongs to langdetect and would be
        # charged to the deterministic group, more heavily the faster its checkers are.
        cases = [c for c in cases if c["id"] not in LANGDETECT] + [c for c in cases if c["id"] in LANGDETECT]
    ours, ours_t = run_ifpo(cases, args.passes)
    if not Path(args.reference_python).exists():
        print(f"ifpo: {len(cases):,} checks in {sum(ours_t):.3f} s -> {len(cases) / sum(ours_t):,.0f} checks/s")
        print(f"lm-eval: reference environment not found at {args.reference_python}; run bench/setup_lmeval_env.sh")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cases_path, out_path = Path(tmp) / "cases.jsonl", Path(tmp) / "verdicts.json"
        cases_path.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
        subprocess.run([args.reference_python, str(HERE / "_lmeval_runner.py"), str(cases_path), str(out_path),
                        str(args.passes)],
                       check=True, stderr=subprocess.DEVNULL)
        ref = json.loads(out_path.read_text())
    groups = {"deterministic ids": [i for i, c in enumerate(cases) if c["id"] not in LANGDETECT],
              "langdetect ids (seeded on both sides)": [i for i, c in enumerate(cases) if c["id"] in LANGDETECT]}
    print(f"{len(cases):,} cases over {len(ids)} IFEval ids, one core each side, "
          + ("groups interleaved" if args.interleaved else "one pass per group")
          + (f", least time of {args.passes} passes per case" if args.passes > 1 else ""))
    for name, idx in groups.items():
        a = sum(ours_t[i] for i in idx)
        b = sum(ref["seconds"][i] for i in idx)
        n_ids = len({cases[i]["id"] for i in idx})
        print(f"{name} ({n_ids} ids, {len(idx):,} checks): ifpo {len(idx) / a:,.0f} checks/s, "
              f"lm-eval {len(idx) / b:,.0f} checks/s -> ifpo {b / a:.1f}x"
              + (" (target >= 5x)" if name.startswith("deterministic") else ""))
    mismatches: dict[str, list[int]] = defaultdict(list)
    for i, (a, b) in enumerate(zip(ours, ref["verdicts"])):
        if a != b:
            mismatches[cases[i]["id"]].append(i)
    per_id = Counter(c["id"] for c in cases)
    same = len(cases) - sum(len(v) for v in mismatches.values())
    print(f"verdicts: {same:,} of {len(cases):,} identical; passes ifpo {sum(ours):,} / lm-eval {sum(ref['verdicts']):,}")
    print(f"not compared (reference needs NLTK punkt, offline here): {', '.join(sorted(NEEDS_PUNKT))}")
    for iid, idx in sorted(mismatches.items()):
        c = cases[idx[0]]
        print(f"  {iid}: {len(idx)} of {per_id[iid]} differ; e.g. kwargs={c['kwargs']} ifpo={ours[idx[0]]} "
              f"lm-eval={ref['verdicts'][idx[0]]} response={c['response'][:80]!r}")


if __name__ == "__main__":
    main()
