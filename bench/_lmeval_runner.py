"""Runs lm-eval's IFEval reference checkers on cases.jsonl in lm-eval's own environment.

Called by bench/ifeval_vs_lmeval.py: ``python _lmeval_runner.py CASES.jsonl OUT.json [PASSES]``. Writes
the verdicts in order and the seconds each check took (one core; the least over PASSES passes). langdetect is seeded so that
``language:response_language`` is deterministic here too.
"""

import json
import sys
import time
from collections import Counter

from langdetect import DetectorFactory
from lm_eval.tasks.ifeval import instructions_registry

DetectorFactory.seed = 0


def main() -> None:
    cases = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    checkers = []
    for c in cases:
        inst = instructions_registry.INSTRUCTION_DICT[c["id"]](c["id"])
        inst.build_description(**c["kwargs"])
        checkers.append(inst)
    seen = Counter()
    for inst, c in zip(checkers, cases):  # warm-up, as on the ifpo side: the first 10 cases of each id
        if seen[c["id"]] < 10:
            seen[c["id"]] += 1
            inst.check_following(c["response"])
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    seconds = [float("inf")] * len(cases)
    for _ in range(passes):  # as on the ifpo side
        verdicts = []
        for i, (inst, c) in enumerate(zip(checkers, cases)):
            start = time.perf_counter()
            verdicts.append(bool(inst.check_following(c["response"])))
            seconds[i] = min(seconds[i], time.perf_counter() - start)
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump({"verdicts": verdicts, "seconds": seconds}, fh)


if __name__ == "__main__":
    main()
