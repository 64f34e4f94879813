"""The fast Punkt splitter against NLTK's: identical sentences and spans on random texts, and speed.

    python bench/punkt_identity.py [--texts 200000] [--seed 0] [--mb 0.25]
    python bench/punkt_identity.py --checkers [TYPE ...] [--mb 0.25]

Generates ``--texts`` seeded random texts from a token alphabet biased towards what Punkt decides
on (the English model's abbreviations, collocations and sentence starters, words of every
orthographic context, numbers, initials, ellipses, closing quotes and brackets, every kind of
whitespace), splits each with ``ifpo.verifiers._punkt.FastPunkt`` and with NLTK's
``PunktSentenceTokenizer`` on the same parameters, and counts the texts where sentences or spans
differ (printing the first few). Then times both on the ``bench/checker_scaling.py`` shapes of
``--mb`` megabytes and on an "essay" of distinct sentences (where the decision cache cannot help),
side by side. Exits 1 on any difference. ``tests/test_text.py`` runs the same comparison on a few
thousand texts. With ``--checkers``: the worst seconds per MB of the Punkt-based rule checkers
with NLTK's splitter and with FastPunkt, wall and CPU, side by side (exits 1 when one is over
``bench/checker_scaling.py``'s target with FastPunkt).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_WORDS = ["word", "the", "The", "THE", "however", "However", "they", "They", "it", "It", "Paris", "paris",
          "Alice", "data", "JSON", "said", "apple", "Smith", "review", "Review", "aron", "Aron", "magnin",
          "a", "A", "I", "i", "x", "Ünïcode", "über", "Éclair", "中文", "ßtraße", "naïve", "ok", "OK",
          "sales", "Sales", "mr", "well-known", "co-op", "e-mail"]
_ENDS = [".", ".", ".", "?", "!", "!!", "?!", "...", "..", ". . .", ".)", '."', ".'", ".\u201d", "?)", ".]",
         "!'", ".;", ".,", ".:", ".--", ".-", ".*", ".@", ".%"]
_OTHER = ["3.5", "1.", "2.", "12", "1,000.", "-3.", ".5", "1.2.3", "10.00", "5", "(1)", "--", "-", ",", ";",
          ":", "(", ")", "[", "]", "{", "}", '"', "'", "`", "\u201c", "\u201d", "\u2018", "\u2019", "\xab",
          "\xbb", "&", "#", "*", "@", "%", "...", ".", "?", "!", "\u2026"]
_SPACES = [" "] * 30 + ["", "", "", "\n", "\n", "\n\n", "\r\n", "\t", "  ", "\xa0", "\u2003", "\x0b", "\x0c",
                        "\x1c", "\x1f", "\x85", "\u2028", " \n ", "\n \n", "\u3000"]


def _model_vocabulary() -> list[str]:
    from punkt.data import english

    vocab = []
    for abbr in english.ABBREV_TYPES:
        vocab += [abbr + ".", abbr.capitalize() + ".", abbr.upper() + "."]
    for first, second in english.COLLOCATIONS:
        vocab += [("5" if first == "##number##" else first.upper()) + ". " + second.capitalize()]
    for starter in english.SENT_STARTERS:
        vocab += [starter, starter.capitalize()]
    rng = random.Random(1)  # a fixed sample of words from the orthographic table, in both cases
    for word in rng.sample(sorted(english.ORTHO_CONTEXT), 300):
        vocab += [word, word.capitalize()]
    # Types holding digits ("a-1", "ak-47"), as the model has them and with other digits (FastPunkt keeps
    # decisions per digit shape of a context only where no such type is involved).
    digit_types = sorted(w for w in english.ORTHO_CONTEXT if any(c.isdigit() for c in w))
    for word in rng.sample(digit_types, min(60, len(digit_types))):
        other = "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in word)
        vocab += [word, word + ".", other, other + ".", word.upper() + "."]
    return vocab


_VOCAB: list[str] = []


# Separators that keep a stretch free of ASCII whitespace: long glued runs of candidates, decided
# by NLTK as one context.
_GLUE = ["", "", "", "\xa0", "\u2003", "\x1c", "\x85", "\u2028", "\u3000"] * 3 + [" ", "\n"]


def random_text(rng: random.Random, max_tokens: int = 40, glued: bool = False) -> str:
    """One random text: words, model vocabulary, numbers and punctuation, joined by varied whitespace
    (``glued``: mostly by nothing or non-ASCII whitespace, so stretches between ASCII spaces are long)."""
    spaces = _GLUE if glued else _SPACES
    if not _VOCAB:
        _VOCAB.extend(_model_vocabulary())
    parts = []
    for _ in range(rng.randint(0, max_tokens)):
        r = rng.random()
        if r < 0.35:
            tok = rng.choice(_WORDS)
        elif r < 0.65:
            tok = rng.choice(_VOCAB)
        elif r < 0.75:
            tok = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcxyzÉ_1") + "."
        else:
            tok = rng.choice(_OTHER)
        if rng.random() < 0.3:
            tok += rng.choice(_ENDS)
        parts.append(tok)
        parts.append(rng.choice(spaces))
    if parts and rng.random() < 0.5:
        parts.pop()  # no trailing separator
    return ("" if rng.random() < 0.8 else rng.choice(spaces)) + "".join(parts)


# Sentence-final words for runs of plain sentences (FastPunkt._lane): mostly plain words, and every
# kind of word a run must stop at or not, in the cases that fool lower-casing (the Kelvin sign, long s,
# dotted capital I, final sigma) and digits of other scripts.
_RUN_WORDS = ["word", "Word", "apple", "p12", "x7y", "naïve", "ΟΔΟΣ", "οδος", "Straße", "İstanbul", "OK", "ok",
              "\u212aY", "Mr", "mr", "MRS", "Co", "co", "Dr", "st", "ſt", "ſ", "jan", "Sept", "inc", "ltd", "b",
              "I", "x", "X", "5", "12", "007", "١٢", "²²", "x²", "٣x", "A1", "well-known", "e_mail", "a.m",
              "ph", "u", "us", "i", "j", "o", "oo", "io", "well-known", "x-mr", "X-Co", "a-b-co", "co-op", "e-mail",
              "T-1000", "mid-2020", "x-c", "b-i", "a--b", "ab--cd", "ab--12", "x--Mr", "-ab", "ab-", "ab-\u212ay", "x-ſt", "naïve-ΟΔΟΣ"]
# What may follow a sentence-final period: mostly whitespace and a plain next word.
_RUN_AFTER = [" ", " ", " ", "\n\n", "\n", "  ", "\r\n", "\t", " \n ", "\xa0", "\x0b", "\u2003", " \xa0",
              "\x1c", ""]
_RUN_STARTS = ["Next", "next", "The", "p13", "Word", "A", "a", "5", "1.", "x.", "Next,", "Next.x", '"Next', "x-y,",
               "Next),", "Next;", "e.g.,", "\u00abHi", "$5", "#tag", "&c", "`x", "-x", ",x", "Next..", "\x1cNext",
               '"', ")", "\u201d", "'", "])",
               "(Next", "\u2019s", "\u201cHi", "next...", "Mr.", "Ünï", "_x", "-x", "N.", "Next!", "Next?"]
_RUN_BODIES = ["", "", "", "The cat sat on the", "It was a ", "3.5 and ", "a.b ", "x (y.) z ", "'q.' ",
               "u.v. ", "Hi! ", "what? ", "so. . . ", "e.g. ", "x\xa0y ", "tab\tthen ", "Hey... ", "(1) "]


def run_text(rng: random.Random, sentences: int = 30) -> str:
    """Many short sentences, mostly plain (``Body word.`` and whitespace and a plain next word), the
    rest broken in one of the ways a run of plain sentences must notice."""
    out = [rng.choice(["", "", " ", "\n", "Start "])]
    for _ in range(rng.randint(0, sentences)):
        if rng.random() < 0.8:
            body, word, end = rng.choice(_RUN_BODIES[:3]), rng.choice(_RUN_WORDS[:5]), "."
        else:
            body, word = rng.choice(_RUN_BODIES), rng.choice(_RUN_WORDS)
            end = rng.choice([".", ".", ".", "?", "!", "..", ".)", '."'])
        after = " " if rng.random() < 0.7 else rng.choice(_RUN_AFTER)
        out += [body, word, end, after]
        if rng.random() < 0.15:
            out.append(rng.choice(_RUN_STARTS) + rng.choice([" ", " ", "\n", ""]))
    if rng.random() < 0.5:
        out.append(rng.choice(_RUN_STARTS))
    return "".join(out)


def digit_shape_texts(limit: int = 200) -> list[str]:
    """Pairs of texts that differ only in their digits, in both orders: the next word (or the word
    before) is one of the model's types holding digits ("a-1", "ak-47") or the same with other digits,
    after an abbreviation, an initial, a number or a plain word. A splitter that kept decisions per
    digit shape where a model type is involved would split some pair alike."""
    from punkt.data import english

    digit_types = sorted(w for w in english.ORTHO_CONTEXT if any(c.isdigit() for c in w))[:limit]
    befores = ["Mr.", "co.", "J.", "5.", "12.", "word.", "ok.", "vs."]
    out = []
    for word in digit_types:
        other = "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in word)
        for before in befores:
            for a, b in ((word, other), (other, word)):
                for form in (str.capitalize, str.lower, str.upper):
                    out += [f"{before} {form(a)} rest.", f"{before} {form(b)} rest."]
                    out += [f"x {form(a)}. {before} y", f"x {form(b)}. {before} y"]
    return out


def essay(size: int, rng: random.Random) -> str:
    """About ``size`` characters of distinct sentences over the model's vocabulary (every context new)."""
    from punkt.data import english

    vocab = sorted(w for w in english.ORTHO_CONTEXT if w.isalpha())
    out: list[str] = []
    n = 0
    while n < size:
        words = [rng.choice(vocab) for _ in range(rng.randint(4, 20))]
        words[0] = words[0].capitalize()
        if rng.random() < 0.2:
            words[rng.randrange(len(words))] += ","
        sentence = " ".join(words) + rng.choice(".........?!")
        if rng.random() < 0.05:
            sentence = f'"{sentence}"'
        out += [sentence, "\n\n" if rng.random() < 0.1 else " "]
        n += len(sentence) + 1
    return "".join(out)[:size]


def tokenizers(compiled: bool | None = None):
    """(fast, reference): a fresh FastPunkt (its loop compiled where built, or as ``compiled`` says)
    and NLTK's tokenizer, both on the English model."""
    from ifpo.verifiers._punkt import FastPunkt
    from ifpo.verifiers.text import _punkt_reference

    reference = _punkt_reference()
    return FastPunkt(reference._params, compiled=compiled), reference


def differences(texts, fast, reference, realign: bool = True) -> list[tuple[str, list, list]]:
    """The texts where the two split differently: (text, NLTK's spans, fast spans)."""
    out = []
    for text in texts:
        want = list(reference.span_tokenize(text, realign))
        got = fast.span_tokenize(text, realign)
        if got != want or fast.tokenize(text, realign) != reference.tokenize(text, realign):
            out.append((text, want, got))
    return out


# The rule checkers that split with punkt_sentences (directly; word_tokenize ones are Treebank's).
PUNKT_CHECKERS = [
    "length_constraints:number_sentences", "ratio:sentence_type", "ratio:sentence_balance", "ratio:sentence_words",
    "words:last_first", "words:keywords_specific_position", "sentence:alliteration_increment", "sentence:keyword",
    "sentence:increment", "format:emoji", "format:no_bullets_bullets", "custom:word_reverse",
    "custom:sentence_alphabet",
]


def _scaling():
    spec = importlib.util.spec_from_file_location("checker_scaling", REPO / "bench" / "checker_scaling.py")
    scaling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaling)
    return scaling


def _time_checkers(types: list[str], mb: float) -> int:
    """Worst s/MB (wall and CPU) per checker over the scaling shapes, NLTK's splitter vs FastPunkt."""
    from ifpo.verifiers import text
    from ifpo.verifiers.constraints import REGISTRY
    from ifpo.verifiers.registry import run_checker

    scaling = _scaling()
    cases = scaling.shapes(int(mb * 1_000_000))
    params = scaling.params_by_type(REGISTRY)
    fast_factory = text._punkt

    def worst(ctype) -> tuple[float, float, str]:
        rows = []
        for shape, response in cases.items():
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                run_checker(ctype, response, params[ctype.id])
            except Exception:  # an unjudged verdict; only the time matters here
                pass
            rows.append(((time.perf_counter() - w0) / mb, (time.process_time() - c0) / mb, shape))
        return max(rows)

    print(f"{'constraint type':<40} {'NLTK wall':>9} {'cpu':>6} | {'fast wall':>9} {'cpu':>6}  worst shape (s/MB)")
    over = 0
    try:
        for type_id in types:
            ctype = REGISTRY.get(type_id)
            text._punkt = text._punkt_reference  # punkt_sentences on NLTK's own tokenizer
            before = worst(ctype)
            text._punkt = fast_factory
            after = worst(ctype)
            over += after[0] > scaling.TARGET_S_PER_MB
            print(f"{type_id:<40} {before[0]:9.3f} {before[1]:6.3f} | {after[0]:9.3f} {after[1]:6.3f}  "
                  f"{before[2]} / {after[2]}")
    finally:
        text._punkt = fast_factory
    print(f"over the target ({scaling.TARGET_S_PER_MB} s/MB wall) with FastPunkt: {over}")
    return 1 if over else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=200_000, help="random texts to compare")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mb", type=float, default=0.25,
                        help="size of the timed shapes in MB (0: compare only, no timing table)")
    parser.add_argument("--pure", action="store_true",
                        help="compare FastPunkt's Python candidate loop (default: the compiled one, where built)")
    parser.add_argument("--checkers", nargs="*", metavar="TYPE",
                        help="time these rule checkers (none given: the Punkt-based ones) with NLTK's "
                             "splitter and with FastPunkt, worst shape each; skips the fuzz and shapes")
    args = parser.parse_args(argv)
    if args.mb < 0 or (args.mb == 0 and args.checkers is not None):
        parser.error(f"--mb must be positive{'' if args.checkers is not None else ' (or 0: no timing table)'}; "
                     f"got {args.mb:g}")
    if args.checkers is not None:
        return _time_checkers(args.checkers or PUNKT_CHECKERS, args.mb)
    fast, reference = tokenizers(False if args.pure else None)
    print(f"FastPunkt's candidate loop: {'compiled' if fast.compiled else 'Python'}")
    rng = random.Random(args.seed)
    start = time.perf_counter()
    bad = 0
    for k in range(0, args.texts, 1000):
        batch = [random_text(rng) for _ in range(min(1000, args.texts - k))]
        batch[::10] = [random_text(rng, 150, glued=True) for _ in batch[::10]]  # every tenth glued
        batch[5::10] = [run_text(rng) for _ in batch[5::10]]  # and every tenth a run of plain sentences
        diffs = differences(batch, fast, reference) + differences(batch[:100], fast, reference, realign=False)
        for text, want, got in diffs[: max(0, 5 - bad)]:
            print(f"DIFFERENT {text!r}\n  nltk {want}\n  fast {got}")
        bad += len(diffs)
    print(f"{args.texts} random texts (seed {args.seed}): {bad} different, {time.perf_counter() - start:.0f} s")
    if args.mb == 0:
        return 1 if bad else 0

    scaling = _scaling()
    size = int(args.mb * 1_000_000)
    cases = {**scaling.shapes(size), "essay": essay(size, random.Random(args.seed))}
    # CPU seconds as well as wall: on a shared machine the wall clock also counts other processes.
    # FastPunkt with its Python loop and, where built, its compiled one, each with empty caches.
    loops = [("python", False)] + ([("compiled", True)] if tokenizers(None)[0].compiled else [])
    print(f"{'shape':<22} {'nltk wall':>9} {'cpu':>6}" + "".join(f" {name + ' wall':>13} {'cpu':>6}" for name, _ in loops)
          + f" {'nltk/' + loops[-1][0]:>14}  (s/MB)")
    for shape, text in cases.items():
        w0, c0 = time.perf_counter(), time.process_time()
        want = reference.tokenize(text)
        row = [time.perf_counter() - w0, time.process_time() - c0]
        for _, compiled in loops:
            cold = type(fast)(reference._params, compiled=compiled)  # no help from earlier texts' caches
            w1, c1 = time.perf_counter(), time.process_time()
            got = cold.tokenize(text)
            row += [time.perf_counter() - w1, time.process_time() - c1]
            bad += got != want
        cells = "".join(f" {row[k] / args.mb:{13 if k % 2 == 0 else 6}.3f}" for k in range(2, len(row)))
        print(f"{shape:<22} {row[0] / args.mb:9.3f} {row[1] / args.mb:6.3f}{cells} {row[1] / max(row[-1], 1e-9):14.1f}"
              f"{'' if got == want else '  DIFFERENT'}")
    return 1 if bad else 0



if __name__ == "__main__":
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
