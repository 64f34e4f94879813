"""The fast Treebank word tokenizer against NLTK's: identical tokens on random strings, and speed.

    python bench/treebank_identity.py [--strings 200000] [--seed 0] [--mb 0.25] [--repeat 3]

Generates ``--strings`` seeded random strings from an alphabet biased towards what the Treebank
patterns act on (quotes of every kind, ``''`` and backticks, clitics and the contractions'
words, periods before closing brackets and quotes, ``--``, ellipses, ``,:;@#$%&*?!``, brackets,
dashes U+2012-U+2015, every kind of whitespace including the four that only ``str.split`` knows,
combining marks, case-folding letters, CJK, the separator characters themselves), a tenth of
them long runs of brackets, periods and quotes (the long-chunk cuts), and compares
``ifpo.verifiers._treebank`` with NLTK's ``NLTKWordTokenizer().tokenize`` string by string and
on batches of strings as sentences of one call. Prints the first few differences and their count,
then times both on the ``bench/checker_scaling.py`` shapes of ``--mb`` megabytes (Punkt sentences
first, not timed), side by side, in CPU seconds of this process per MB (``time.process_time``: on
a shared machine wall time mostly measures the other jobs), with an empty cache and again warm (the best of ``--repeat`` runs). Exits 1 on any difference. ``tests/test_text.py`` runs the same
comparison on a few thousand strings.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

ATOMS = (
    list("abcdeSTNtnsmdlrvAIo0123456789")
    + list(".,:;!?@#$%&*-'\"`()[]{}<>")
    + ["''", "``", "--", "..", "...", "'s", "'S", "n't", "N'T", "'ll", "'LL", "'re", "'ve", "'m", "'d", "'D",
       "can", "not", "CAN", "gon", "na", "got", "ta", "gim", "me", "lem", "wan", "d'ye", "more'n", "'t", "is",
       "was", "'tis", "'Twas", " ", " ", " ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u2000",
       "\u2028", "\u3000", "\x1c", "\x1f", "\xab", "\xbb", "\u201c", "\u201d", "\u2018", "\u2019", "\u201e",
       "\u2012", "\u2013", "\u2014", "\u2015", "\u0301", "\u017f", "\u0130", "\u0131", "\u4e2d", "\u6587",
       "\xe9", "\xdf", "\xb2", "\U00011f50", "\ufdd0", "\ufdd1", "\ufdd6", "\ufdd9", "_", "/", "\\", "^", "~", "|", "+", "=",
       "http://x.org/a?b=1&c=2", "e.g.", "U.S.", "3.14", "1,000", "10%", "$5", "gonna ", "Cannot ", "GIMME ",
       "lemme ", "gotta ", "wanna ", "word "]
)
_WEIGHTS = [3 if len(a) == 1 and a.isalpha() else 1 for a in ATOMS]
_LONG_ATOMS = ["{", "[", "(", "<", "}", "]", ")", ">", ".", "a", "'", '"', "''", ",", ":", " ", "\n", "x.", ".)",
               "'s", "`"]
_ENDINGS = [" ", " ", "\t", "\n", ")", "]", "}", ">", '"', "'", "''", "\u00bb", "\u201d", "\u2019", "x", "."]
_LONG_WEIGHTS = [9] * 8 + [2] * (len(_LONG_ATOMS) - 8)


def random_string(rng: random.Random) -> str:
    """One random string: short (a few atoms) to sentence-long; one in ten a long bracket run."""
    if rng.random() < 0.1:  # over _treebank._LONG characters: cut between adjacent brackets
        s = "".join(rng.choices(_LONG_ATOMS, _LONG_WEIGHTS, k=rng.randint(900, 1400)))
        if rng.random() < 0.5:
            s = s.replace(" ", "").replace("\n", "")
        return s + "".join(rng.choices(ATOMS, _WEIGHTS, k=rng.randint(0, 4)))
    s = "".join(rng.choices(ATOMS, _WEIGHTS, k=rng.randint(0, rng.choice([3, 8, 15, 30]))))
    if rng.random() < 0.25:  # a sentence end: period, colon or comma, then closers and whitespace
        s += rng.choice([".", ".", ",", ":", "", "x."]) + "".join(rng.choices(_ENDINGS, k=rng.randint(1, 4)))
    return s


def reference_tokenizer():
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer().tokenize


def differences(strings: list[str], reference=None, batch: int = 50) -> list[str]:
    """Descriptions of the strings (and batches of strings) whose tokens differ from NLTK's."""
    from ifpo.verifiers import _treebank

    reference = reference or reference_tokenizer()
    found = []
    for s in strings:
        want = reference(s)
        if _treebank.tokenize(s) != want:
            found.append(f"{s!r}: {_treebank.tokenize(s)} != {want}")
        if _treebank.tokenize_uncached([s]) != want:
            found.append(f"{s!r} uncached: {_treebank.tokenize_uncached([s])} != {want}")
        if uncached_split_tails([s]) != want:
            found.append(f"{s!r} uncached, tails apart: {uncached_split_tails([s])} != {want}")
    for i in range(0, len(strings), batch):
        group = strings[i : i + batch]
        want = [t for s in group for t in reference(s)]
        if _treebank.tokenize_sentences(group) != want:
            found.append(f"batch of {len(group)} from {group[0]!r}")
        repeated = group[:10] * 3  # repeated sentences are keyed once each
        if _treebank.tokens_of(_treebank.sentence_keys(repeated)) != [t for s in repeated for t in reference(s)]:
            found.append(f"repeated batch from {group[0]!r}")
        if _treebank.tokenize_uncached(group) != want:
            found.append(f"uncached batch of {len(group)} from {group[0]!r}")
        if uncached_split_tails(group) != want:
            found.append(f"uncached batch, tails apart, of {len(group)} from {group[0]!r}")
    return found


def uncached_split_tails(sentences: list[str]) -> list[str]:
    """``_treebank.tokenize_uncached`` on the path of long sentences (the sentence-end patterns on the
    tails alone), whatever the sentences' length."""
    from ifpo.verifiers import _treebank

    keep = _treebank._SPLIT_TAILS_MIN
    _treebank._SPLIT_TAILS_MIN = 0
    try:
        return _treebank.tokenize_uncached(sentences)
    finally:
        _treebank._SPLIT_TAILS_MIN = keep


def _scaling_shapes(size: int) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("checker_scaling", REPO / "bench" / "checker_scaling.py")
    scaling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaling)
    return scaling.shapes(size)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=200_000, help="random strings to compare")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--mb", type=float, default=0.25, help="size of the timed shapes in MB (0: no timing)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of the fast tokenizer per shape (best kept)")
    args = parser.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from ifpo.verifiers import _treebank
    from ifpo.verifiers.text import punkt_sentences

    rng = random.Random(args.seed)
    start = time.perf_counter()
    found = differences([random_string(rng) for _ in range(args.strings)])
    for line in found[:10]:
        print("DIFFERENT", line)
    print(f"{args.strings} random strings (seed {args.seed}): {len(found)} differences "
          f"({time.perf_counter() - start:.0f} s)")
    if args.mb > 0:
        reference = reference_tokenizer()
        print(f"{'shape':<14} {'NLTK':>10} {'fast cold':>10} {'fast warm':>10}  (CPU s/MB; Punkt not timed)")
        for shape, text in _scaling_shapes(int(args.mb * 1_000_000)).items():
            sentences = punkt_sentences(text)
            t0 = time.process_time()
            want = [t for s in sentences for t in reference(s)]
            nltk_s = time.process_time() - t0
            cold, warm = [], []
            for _ in range(args.repeat):  # the best of a few runs: the machine may be shared
                _treebank._CACHE.clear()
                t0 = time.process_time()
                got = _treebank.tokenize_sentences(sentences)
                t1 = time.process_time()
                _treebank.tokenize_sentences(sentences)
                cold.append(t1 - t0)
                warm.append(time.process_time() - t1)
            same = "" if got == want else "  DIFFERENT"
            found += [shape] if same else []
            print(f"{shape:<14} {nltk_s / args.mb:10.3f} {min(cold) / args.mb:10.3f} {min(warm) / args.mb:10.3f}{same}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
