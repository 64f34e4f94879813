"""split_sentences against stock pysbd: how often they agree, and the time per MB of each.

    python bench/sentence_agreement.py [--kb 100] [--lines 20000] [--seed 0] [--show 5]

``ifpo.verifiers.text.split_sentences`` reads pysbd's English rules in one linear pass
(``verifiers/_sbd.py``); the reference is stock pysbd run on each stripped line, which is what
split_sentences did before. Agreement is counted per text (the same list of sentences, in order):

* ``realistic``: tests/data/sentences_realistic.jsonl, hand-written answers of the benchmarks' kind;
* ``atoms``: lines thrown together from abbreviations, list markers, quotes, brackets and marks;
* ``random``: lines of random characters (the checker bench's alphabet).

Then both split the same pathological shapes (bench/checker_scaling.py's, cut to ``--kb``) and the
CPU seconds per MB are printed side by side with their ratio. Prints the first ``--show``
disagreements of each set.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ATOMS = ["Dr.", "dr.", "U.S.", "e.g.", "i.e.", "St.", "Fig.", "No.", "a.m.", "P.M.", "Mr.", "etc.", "vs.", "pp.",
         "Inc.", "3.14", "1.", "2.", "2)", "a)", "(b)", "a.", "b.", "iv.", "The", "He", "I", "It", "we", "ran", "cat",
         "NASA", "file.txt", "x@y.com", " ", " ", " ", "  ", ".", ". ", "!", "! ", "?", "? ", "?!", "!!", "...",
         ". . .", "…", "'", '"', "“", "”", "(", ")", "[1]", "5", "12", ",", ";", ":", "-", "。", "！", "？",
         "中文", "é", "'s", "\t", "Yahoo!"]


def stock_pysbd():
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)

    def split(text: str) -> list[str]:
        out: list[str] = []
        for line in text.strip().splitlines():
            if line.strip():
                out += [s.strip() for s in segmenter.segment(line.strip()) if s.strip()]
        return [s for s in out if any(ch.isalnum() for ch in s)]

    return split


def corpora(lines: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    path = REPO / "tests" / "data" / "sentences_realistic.jsonl"
    realistic = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    atoms = ["".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 24))) for _ in range(lines)]
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t" + "éßπ中文"
    chars = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 160))) for _ in range(lines)]
    return {"realistic": realistic, "atoms": atoms, "random": chars}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=int, default=100, help="size of each shape for the timing, in KB")
    ap.add_argument("--lines", type=int, default=20000, help="random lines per generated set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="disagreements printed per set")
    args = ap.parse_args(argv)

    from ifpo.verifiers.text import split_sentences

    from bench.checker_scaling import shapes

    reference = stock_pysbd()
    print("agreement with stock pysbd (per text: the same sentences in the same order)")
    for name, texts in corpora(args.lines, args.seed).items():
        differ = [t for t in texts if split_sentences(t) != reference(t)]
        share = 100 * (1 - len(differ) / len(texts))
        print(f"  {name:10s} {len(texts) - len(differ):6d} / {len(texts):6d} agree  ({share:.2f}%)")
        for text in differ[: args.show]:
            print(f"      {text[:100]!r}\n        ifpo  {split_sentences(text)[:4]}\n        pysbd {reference(text)[:4]}")

    print(f"\nCPU s per MB at {args.kb} KB (split_sentences | stock pysbd per line | ratio)")
    size = args.kb * 1000
    split_sentences("Warm. Up.")
    reference("Warm. Up.")
    for name, text in shapes(size).items():
        if name == "deep_nesting":
            continue  # no terminator: both return at once
        times = []
        for split in (split_sentences, reference):
            start = time.process_time()
            split(text)
            times.append((time.process_time() - start) * 1e6 / len(text))
        ratio = times[1] / times[0] if times[0] else float("inf")
        print(f"  {name:24s} {times[0]:8.3f} | {times[1]:8.3f} | {ratio:7.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
