"""NLTK's Treebank word tokenizer (``NLTKWordTokenizer().tokenize``), token for token, at speed.

Why it exists: ``nltk.word_tokenize`` runs about 25 regular-expression substitutions per
sentence, each through NLTK's timeout wrapper; on short-sentence text that is several seconds
per MB, thirty times the checkers' budget. The tokens are part of the IFEval / IFBench
semantics (capital words, word positions, title case, pronouns), so this module reproduces
NLTK's output exactly rather than approximating it. It relies on three facts about those
substitutions, each checked by the differential tests in ``tests/test_text.py``:

* Every substitution only pads characters with spaces, turns ``"`` / ``''`` into ``\\`\\``` or
  ``''``, or collapses whitespace, and no pattern except the sentence-end ones reaches across a
  whitespace run further than the one whitespace character next to a chunk (a maximal run of
  non-whitespace). So the tokens of a chunk depend on the chunk alone, plus, for a chunk that
  starts with ``"`` or ``''``, the character before it (start of sentence, a space, other
  whitespace) and, for a chunk ending in ``'``, whether a space follows it. Tokens are cached
  per chunk (per chunk and context for those few): repeated words cost one dict lookup.
* The sentence-end patterns (final period, final ``:``/``,``) only touch the last chunk and the
  chunks of closing brackets and quotes after it (``word. ) ]``), so that *tail* of a sentence
  is tokenized as a whole with the whitespace before it, with the sentence-end patterns on.
* A chunk over ``_LONG`` characters (deep bracket nesting) may be cut between two adjacent
  brackets: brackets are padded before any pattern could see two of them in a row, so the
  brackets strictly inside a run of three or more are one token each.
* Cache misses are tokenized together: all pieces joined by a separator character that occurs
  in none of them, with every pattern written so that the separator acts as a string start or
  end (``^`` and ``$`` become look-arounds on it, classes that could match it exclude it). So
  the ~25 passes run once per call over the new text, not once per sentence.

The patterns use the ``regex`` engine where NLTK does (its ``\\w``, ``\\s``, ``\\d`` and
case-folding differ from ``re``'s outside ASCII: combining marks are word characters there)
and ``re`` for the contractions, as NLTK does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import accumulate, chain
from typing import Any

import regex
from ifpo.verifiers._native import compiled_module

# Closing characters a sentence-final period may be followed by (the wider set of the first
# final-period pattern; the space it also allows is handled as whitespace between chunks).
_CLOSERS = frozenset("])}>\"'\u00bb\u201d\u2019")
# Characters that Python's str.split() treats as whitespace but the regex engine's \s does not:
# they stay inside a chunk for the patterns, and only the final split breaks on them.
_SPLIT_ONLY_WS = "\x1c\x1d\x1e\x1f"
_WS_RUN = regex.compile(r"\s+")
# The regex engine's whitespace other than the space (its \s is str.isspace() less U+001C-U+001F;
# a test checks both lists over every code point).
_OTHER_WS = "\t\n\x0b\x0c\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_ASCII_OTHER_WS = "\t\n\x0b\x0c\r"
_PAD = " \\g<0> "  # the replacement of a padding step (run as split and join)
# A chunk is a run of what the regex engine does not call whitespace (the patterns' view).
_CHUNK = regex.compile(r"\S+")
# Candidates for the separator joining cache misses: noncharacters, not word, digit or space.
_SEPARATORS = [chr(c) for c in range(0xFDD9, 0xFDF0)]

_LONG = 1000  # chunks longer than this are cut between adjacent brackets (deep nesting)
# A long chunk is cut inside runs of three or more brackets (between adjacent brackets).
_BRACKET_RUN = re.compile(r"[\[\](){}<>]{3,}")
# The last position between two adjacent brackets (searched backwards).
_LAST_BRACKET_PAIR = regex.compile(r"(?r)(?<=[\[\](){}<>])(?=[\[\](){}<>])")
_BRACKETS = "[](){}<>"
_CACHE_LIMIT = 100_000  # entries before the cache is emptied (bounds memory on huge varied inputs)
_CACHE_KEY_MAX = 200  # longer pieces are tokenized without being cached


class _Passes:
    """The substitution passes, for pieces each followed by ``sep`` (or for one string: ``sep=None``).

    ``tail`` includes the sentence-end patterns; head chunks are tokenized without them (they
    cannot match there: see the module docstring).
    """

    def __init__(self, sep: str | None, tail: bool) -> None:
        x = "" if sep is None else re.escape(sep)
        # String start / end as seen by one piece: the real edges, or the separator.
        start = r"^" if sep is None else rf"(?<![^{x}])"
        end = r"$" if sep is None else rf"(?=\n?{x})"
        end_all = r"$" if sep is None else rf"(?={x})"  # after \s*: the very end
        self.sep = sep
        quote, colon, dot = ('"',), (",", ":"), (".",)
        # (pattern, replacement, substrings of which a match holds at least one: a pass whose
        # substrings are all absent cannot match and is skipped)
        steps: list[tuple[str, str, tuple[str, ...]]] = [
            # Opening quotes: guillemet/curly/low-9 quotes and backtick runs stand alone; a
            # double quote opening the sentence, or after a space or opening bracket, and ''
            # after those, become ``; an apostrophe before a word that is not a clitic is cut off.
            # (NLTK's one pass over ([«“‘„]|`+) as two: the characters by str.replace, then backtick runs)
            _pad_step(["\u00ab\u201c\u2018\u201e"]),
            ("(`+)", _PAD, ("`",)),
            (start + '"', "``", quote),
            ("(``)", _PAD, ("``",)),
            # (look-behind: the character before is never part of another match; it is read after the
            # quote, so that the search starts at a quote)
            ("(?:\"|'')(?<=[ ([{<](?:\"|''))", " `` ", quote + ("''",)),
            (r"(?i)(?<!\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", r"\1 ", ("'",)),
        ]
        if tail:  # a final period (not part of "..") with closers and spaces after it
            # (NLTK's ([^.])(\.)... with the character before as a look-behind, so that the search starts at
            # a period: a match ends at the piece's end, so there is one per piece and nothing to consume)
            final_period = len(steps)
            steps.append((rf"(?<=[^.{x}])(\.)([\])}}>\"'\u00bb\u201d\u2019 ]*+)\s*{end_all}", r" \1 \2 ", dot))
        commas = len(steps)
        steps.append((rf"([:,])([^\d{x}])", r" \1 \2", colon))  # , and : unless before a digit
        final_colon = None
        if tail:
            final_colon = len(steps)
            steps.append((rf"([:,]){end}", r" \1 ", colon))
        steps.append((r"(\.{2,})", _PAD, ("..",)))  # ellipses
        # Characters padded with spaces wherever they are. Consecutive ones are one pass (each
        # character gets " c " either way); the final period's second pattern sits between two.
        pads = [";@#$%&", "\u2012\u2013\u2014\u2015"]  # ..., figure/en/em dashes, horizontal bar
        if tail:
            steps.append(_pad_step(pads))
            final_period_2 = len(steps)
            steps.append((rf"(?<=[^.{x}])(\.)([\])}}>\"']*)\s*{end_all}", r" \1\2 ", dot))
            pads = []
        steps.append(_pad_step([*pads, "?!"]))
        steps.append((rf"([^'{x}])' ", r"\1 ' ", ("' ",)))
        steps.append(_pad_step(["*", "[](){}<>"]))
        steps.append(("(--)", _PAD, ("--",)))
        self.sources = list(steps)  # the steps as written (tests compare the literal ones both ways)
        self.before_pad = [_compiled(*step) for step in steps]
        # Steps done with str.replace where the text allows it (each equal to its pattern; a test
        # runs them both ways on texts with and without what blocks them):
        # - a quote after a space or an opening bracket (2 quotes x 5 characters), unless a quote is
        #   followed by another: then the space put in after the first would make the second match;
        assert steps[4][0].startswith("(?:\"|'')(?<="), steps[4]  # the quote step, at its index
        self.before_pad[4] = (None, _Literal(
            [(c + q, c + " `` ") for c in " ([{<" for q in ('"', "''")], unless=('""', "\"''", "''\"", "'''"),
            fallback=self.before_pad[4]), quote + ("''",))
        # - backticks as one padded character each, unless two touch (a run is padded as one token);
        assert steps[1][0] == "(`+)", steps[1]
        self.before_pad[1] = (None, _Literal([("`", " ` ")], unless=("``",), fallback=self.before_pad[1]), ("`",))
        # - , and : before a space (the common case) as literals, before anything else but a digit by
        #   the pattern without the space, unless two of them touch (a match consumes the character
        #   after it, so the second of two touching ones is not padded);
        self.before_pad[commas] = (None, _Literal(
            [(", ", " ,  "), (": ", " :  ")], unless=(",,", ",:", ":,", "::"),
            then=(regex.compile(rf"([:,])([^\d{x} ])"), r" \1 \2"), fallback=self.before_pad[commas]), colon)
        if tail:
            # The two final-period steps with the stdlib engine, the period first and the character before
            # it as a look-behind after it (so the search skips to a period in C, where the regex engine
            # tries each period through its template: 2-4x the time on text of many short sentences), run
            # as split and join: " \1 \2 " is the split's pieces joined by spaces, and " \1\2 " too once
            # its two groups are one. Whitespace spelt out as the regex engine's \s (_WS_CLASS); a test
            # runs both ways.
            ws = re.escape(_WS_CLASS)
            # (Each is tried at every period, so only where a period follows another character: a run
            # of periods costs a scan for that pair, not a try per period.)
            after_other = re.compile(rf"[^.{x}]\.")
            self.before_pad[final_period] = (_Gated(re.compile(
                rf"(\.)(?<=[^.{x}]\.)([\])}}>\"'\u00bb\u201d\u2019 ]*+)[{ws}]*{end_all}"), after_other), _PAD, dot)
            self.before_pad[final_period_2] = (_Gated(re.compile(
                rf"(\.(?<=[^.{x}]\.)[\])}}>\"']*)[{ws}]*{end_all}"), after_other), _PAD, dot)
        if sep is not None:
            # - a " opening a piece: right after the separator, or at the very start;
            assert steps[2][0] == start + '"', steps[2]
            self.before_pad[2] = (None, _Literal([(sep + '"', sep + "``")], first=('"', "``")), quote)
            # - a final , or : right before the separator, or before a newline and the separator.
            if final_colon is not None:
                self.before_pad[final_colon] = (None, _Literal(
                    [(f"{c}{nl}{sep}", f" {c} {nl}{sep}") for c in ",:" for nl in ("\n", "")]), colon)
        after = [
            # Closing quotes, then whitespace collapsed, then clitics split off at word ends.
            ("([\u00bb\u201d\u2019])", _PAD, ("\u00bb", "\u201d", "\u2019")),
            ("''", " '' ", ("''",)),
            ('"', " '' ", quote),
        ]
        self.sources += after
        self.after_pad = [_compiled(*step) for step in after]
        # A literal step whose needs are fewer strings than the ones it looks for first looks for its needs
        # (a quote or a comma in the text): the step is skipped in fewer scans where none occurs.
        for pattern, repl, needs in self.before_pad + self.after_pad:
            if pattern is None:
                repl.needs = needs if len(needs) < len(repl.pairs) + len(repl.unless) + (repl.then is not None) else None
        # (look-behinds: a match ends in a space, which the next one's first class excludes)
        # (each with the strings a match ends with: a pass whose strings are all absent is skipped)
        # (NLTK's (?<=[^' ])('[sS]|'[mM]|'[dD]|') with " \1 ": a space put before each such apostrophe. On the
        # stdlib engine, the apostrophe first and the rest looked at around it, so that the search skips
        # to an apostrophe in C; a match is one character and the replacement a literal: no template.)
        self.clitics = [
            (re.compile("'(?<=[^' ]')(?=[sSmMdD]? )"), " '", ("' ", "'s ", "'S ", "'m ", "'M ", "'d ", "'D ")),
        ]
        # The second clitic pass is _CLITICS_2.
        # The contractions use the stdlib engine, as NLTK compiles them.
        words = [
            r"(?i)\b(can)(not)\b",
            r"(?i)\b(d)('ye)\b",
            r"(?i)\b(gim)(me)\b",
            r"(?i)\b(gon)(na)\b",
            r"(?i)\b(got)(ta)\b",
            r"(?i)\b(lem)(me)\b",
            r"(?i)\b(more)('n)\b",
            r"(?i)\b(wan)(na)(?=\s)",
            r"(?i) ('t)(is)\b",
            r"(?i) ('t)(was)\b",
        ]
        self.contractions = [re.compile(p) for p in words]
        # What each contraction needs in the lowered text (a cheap test that skips most passes).
        self.literals = [b"cannot", b"d'ye", b"gimme", b"gonna", b"gotta", b"lemme", b"more'n", b"wanna", b"'tis", b"'twas"]

    def run(self, text: str) -> str:
        for pattern, repl, needs in self.before_pad:
            if pattern is None:  # literal strings replaced: str.replace, fastest
                if repl.needs is None or any(n in text for n in repl.needs):
                    text = repl.run(text)
            elif any(n in text for n in needs):
                text = " ".join(pattern.split(text)) if repl is _PAD else pattern.sub(repl, text)
        if self.sep is None:
            text = " " + text + " "
        else:  # every piece gets its own outer spaces
            text = " " + text.replace(self.sep, f" {self.sep} ")
        for pattern, repl, needs in self.after_pad:
            if pattern is None:
                if repl.needs is None or any(n in text for n in repl.needs):
                    text = repl.run(text)
            elif any(n in text for n in needs):
                text = " ".join(pattern.split(text)) if repl is _PAD else pattern.sub(repl, text)
        if any(c in text for c in _SPLIT_ONLY_WS):  # (four `in`s: a class search costs 30x that)
            text = _WS_RUN.sub(" ", text)
        else:
            # NLTK collapses each whitespace run into one space. What follows (the clitic and
            # contraction patterns, the final split) reads a run of spaces as it reads one space: it
            # only asks whether a character is a space. So each other whitespace character just
            # becomes a space (far cheaper than rebuilding the string around every token).
            for c in _ASCII_OTHER_WS if text.isascii() else _OTHER_WS:
                if c in text:
                    text = text.replace(c, " ")
        for pattern, repl, needs in self.clitics:
            if any(n in text for n in needs):
                text = pattern.sub(repl, text)
        if "'" in text:  # (every alternative holds one)
            text = " ".join(_CLITICS_2.split(text))
        # Under re's case folding only these non-ASCII letters match the contractions' letters
        # (i: U+0130, U+0131; s: U+017F); elsewhere a match is ASCII and needs its literal in the
        # lowered text, and in its ASCII characters alone (what is between stays between).
        folded = "\u0130" in text or "\u0131" in text or "\u017f" in text
        if not folded and not _has_ascii_letter(text):  # (a run of periods: no lowered copy)
            return text
        lowered = text.encode("ascii", "ignore").lower()
        for pattern, literal in zip(self.contractions, self.literals):
            if folded or literal in lowered:
                text = pattern.sub(r" \1 \2 ", text)
        return text


_ASCII_LETTERS = "etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ"  # (the common first)


def _has_ascii_letter(text: str) -> bool:
    """Whether ``text`` holds one of A-Z, a-z: one substring search per letter, each a C scan far
    cheaper than the regex engine's try at every position of a class ([A-Za-z]: ~13 ms per MB)."""
    return any(c in text for c in _ASCII_LETTERS)


# NLTK's second clitic pass, (?<=[^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) with " \1 ", run as split and join
# (the group, then the space its match ends with: " ".join puts a space on each side of the group).
# On the stdlib engine with the look-behind after the three characters every alternative has, so that
# the search skips in C to a character some alternative starts with (the regex engine tried the
# look-behind at every position).
_CLITICS_2 = re.compile("('ll|'LL|'re|'RE|'ve|'VE|n't|N'T)(?<=[^' ]...) ")


def _pad_step(groups: list[str]) -> tuple[str, str, tuple[str, ...]]:
    """One pass putting a space on each side of every character of ``groups``."""
    chars = "".join(groups)
    return "([" + "".join("\\" + c if c in "[]\\^-" else c for c in chars) + "])", _PAD, tuple(chars)


def _compiled(pattern: str, repl: str, needs: tuple[str, ...]) -> tuple[object, object, tuple[str, ...]]:
    """A step with its pattern compiled. A padding step (``_PAD``: a space on each side of every
    match) runs as " ".join(pattern.split(text)), the pattern being one group around the whole
    match: the same string, faster.

    A step whose matches are literal strings (a class of characters to pad, one literal string to
    pad or to replace by a literal) has no pattern (``None``) and, as replacement, the pairs
    (literal, what it becomes) that ``run`` does with ``str.replace``: the same string, since
    matches of one literal do not overlap and what a pair puts in holds none of the other pairs'
    literals (a test runs every step both ways)."""
    def literal(t: str) -> bool:
        return not any(c in ".^$*+?{}[]\\|()" for c in t)

    if repl is _PAD and pattern == _pad_step(list(needs))[0]:
        return None, _Literal([(c, f" {c} ") for c in needs]), needs
    if len(needs) == 1 and literal(needs[0]):
        if repl is _PAD and pattern == f"({needs[0]})":
            return None, _Literal([(needs[0], f" {needs[0]} ")]), needs
        if repl is not _PAD and pattern == needs[0] and "\\" not in repl:
            return None, _Literal([(needs[0], repl)]), needs
    return regex.compile(pattern), repl, needs


class _Literal:
    """A step done with ``str.replace``: each (literal, replacement) pair in turn; with ``first``, the
    text's first characters too; then the ``then`` pattern, if any. Where one of ``unless`` occurs,
    the ``fallback`` step (pattern, replacement, needs) runs instead."""

    __slots__ = ("pairs", "unless", "first", "then", "fallback", "needs", "pad")

    def __init__(self, pairs: list[tuple[str, str]], unless: tuple[str, ...] = (),
                 first: tuple[str, str] | None = None, then: tuple[Any, str] | None = None,
                 fallback: tuple[Any, Any, tuple[str, ...]] | None = None) -> None:
        self.pairs, self.unless, self.first, self.then, self.fallback = pairs, unless, first, then, fallback
        self.needs: tuple[str, ...] | None = None  # set by _Passes: strings looked for before the step runs
        # the characters, where every pair puts a space on each side of one and nothing else runs
        padding = all(len(old) == 1 and new == f" {old} " for old, new in pairs)
        plain = not unless and first is None and then is None and fallback is None
        self.pad: str | None = "".join(old for old, _ in pairs) if pairs and padding and plain else None

    def run(self, text: str) -> str:
        if self.pad is not None and _PADDER is not None:
            # several of them in the text: one compiled scan pads them all (each str.replace is a scan)
            present = [c for c in self.pad if c in text]
            if len(present) > 1:
                return _PADDER.pad(text, "".join(present))
        if self.fallback is not None and any(u in text for u in self.unless):
            pattern, repl, needs = self.fallback
            if not any(n in text for n in needs):
                return text
            return " ".join(pattern.split(text)) if repl is _PAD else pattern.sub(repl, text)
        if self.first is not None and text.startswith(self.first[0]):
            text = self.first[1] + text[len(self.first[0]) :]
        for old, new in self.pairs:
            if old in text:
                text = text.replace(old, new)
        if self.then is not None:
            text = self.then[0].sub(self.then[1], text)
        return text


def _compiled_padder() -> Any:
    """The compiled padding step (``verifiers/_treebank_scan.pyx``), or None where it is not built (a
    source checkout without an install, no C compiler at install), built from another version of its
    interface, or ``IFPO_TREEBANK_PURE=1`` asks for ``str.replace``."""
    return compiled_module("_treebank_scan", _PADDER_INTERFACE, "IFPO_TREEBANK_PURE")


_PADDER_INTERFACE = 1  # what _treebank_scan.pad takes and returns
_PADDER = _compiled_padder()


class _Gated:
    """A compiled pattern (of a padding step: run as split and join) whose every match holds a match of
    ``gate``: where the gate finds none, ``split`` gives the text as it is without running the pattern."""

    __slots__ = ("pattern", "gate")

    def __init__(self, pattern: re.Pattern[str], gate: re.Pattern[str]) -> None:
        self.pattern, self.gate = pattern, gate

    def split(self, text: str) -> list[str]:
        return self.pattern.split(text) if self.gate.search(text) else [text]


@lru_cache(maxsize=8)
def _passes(sep: str | None, tail: bool) -> _Passes:
    return _Passes(sep, tail)


def tokenize(sentence: str) -> list[str]:
    """``NLTKWordTokenizer().tokenize(sentence)``.

    >>> tokenize('"Don\\'t," she said -- (twice).')
    ['``', 'Do', "n't", ',', "''", 'she', 'said', '--', '(', 'twice', ')', '.']
    """
    return tokenize_sentences([sentence])


def tokenize_sentences(sentences: Iterable[str]) -> list[str]:
    """The tokens of every sentence, in order: ``[t for s in sentences for t in tokenize(s)]``.

    Text whose chunks are mostly new (random characters, long lists of numbers) costs less without
    the per-chunk cache: :func:`tokenize_uncached`. Either way the tokens are the same.
    """
    sentences = sentences if isinstance(sentences, list) else list(sentences)
    if _mostly_new(sentences):
        return tokenize_uncached(sentences)
    return tokens_of(sentence_keys(sentences))


def tokenize_uncached(sentences: Sequence[str]) -> list[str]:
    """:func:`tokenize_sentences` without the cache: every sentence whole, the passes with the
    sentence-end patterns run once over all of them (joined by a separator), no per-chunk keys."""
    joined = "".join(sentences)
    sep = next((c for c in _SEPARATORS if c not in joined), None)
    if sep is None:  # every candidate occurs in the text: one sentence at a time
        passes = _passes(None, True)
        return [t for s in sentences for t in passes.run(s).split()]
    if len(joined) >= _SPLIT_TAILS_MIN * len(sentences):
        # Long sentences (one JSON array of short strings): the sentence-end patterns, which only
        # match in a sentence's tail, run on the tails alone (each costs a try at every period:
        # ~50 ms per MB of "0.1 s", "0.2 s", ...). The head is what comes before the tail (the last
        # chunk that is not only closers: the cache path's split, see _sentence_keys); its own end
        # is whitespace, as a head chunk's context is.
        heads, tails = [], []
        for s in sentences:
            a = _tail_start(s)
            heads.append(s[:a])
            tails.append(s[a - 1 if a else 0 :])
        pairs = zip(_run_batch(heads, False), _run_batch(tails, True))
        return list(chain.from_iterable(chain.from_iterable(pairs)))
    return _passes(sep, True).run(sep.join(sentences) + sep).replace(sep, " ").split()


# Average sentence length from which tokenize_uncached runs the sentence-end patterns on tails only
# (a per-sentence Python step: for short sentences it costs more than the patterns do).
_SPLIT_TAILS_MIN = 2000
_CHUNKS_BACKWARDS = regex.compile(r"(?r)\S+")


def _tail_start(s: str) -> int:
    """Where a sentence's tail chunk starts: its last chunk that is not only closing brackets and
    quotes (the first chunk when all are; 0 when it has none)."""
    start = 0
    for m in _CHUNKS_BACKWARDS.finditer(s):
        start = m.start()
        if not _CLOSERS.issuperset(m.group()):
            break
    return start


_SAMPLE_WINDOWS = 32  # stretches of text read, spread over the call, to tell which path is cheaper
_SAMPLE_CHARS = 2000  # characters in each


def _mostly_new(sentences: list[str]) -> bool:
    """Whether the uncached path is the cheaper one for these sentences (only the speed depends on it).

    Measured on this module's passes: the cache costs about a tenth of a microsecond per chunk (key
    and look-up) plus half a microsecond per character of the chunks it has not seen (tokenized in
    the batch, then stored); the uncached path about a tenth per character. So text that repeats its
    words (prose, tables, lists), or that the cache has seen, keeps the cache; random characters or
    runs of distinct numbers do not. The sample is 32 stretches spread over the text; chunks over
    100 characters count as seen (the cache cuts long ones into cheap pieces).
    """
    text = " ".join(sentences)
    step = max(len(text) // _SAMPLE_WINDOWS, _SAMPLE_CHARS)
    chunks = " ".join([text[i : i + _SAMPLE_CHARS] for i in range(0, len(text), step)]).split()
    if len(chunks) < 100:  # a short call: either path costs little
        return False
    new = sum(len(c) for c in set(chunks).difference(_CACHE) if len(c) <= 100)
    return len(chunks) + 5 * new > sum(map(len, chunks))


def sentence_keys(sentences: Iterable[str]) -> list[object]:
    """The pieces every sentence is tokenized as, in order (head chunks in their context, then the
    tail): ``tokens_of(keys)`` is ``tokenize_sentences(sentences)``, and the tokens of a run of keys
    ``keys[a:b]`` are the tokens of those pieces, in order. A caller that needs only the first or last
    few tokens, or stops at the first failing one, tokenizes only the keys it reads."""
    sentences = sentences if isinstance(sentences, list) else list(sentences)
    distinct: dict[str, list[object]] = dict.fromkeys(sentences)  # type: ignore[arg-type]
    keys: list[object] = []
    if len(distinct) == len(sentences):
        for s in sentences:
            _sentence_keys(s, keys)
        return keys
    # A sentence's keys depend on the sentence alone: each distinct one is keyed once.
    for s in distinct:
        distinct[s] = []
        _sentence_keys(s, distinct[s])
    return list(chain.from_iterable(map(distinct.__getitem__, sentences)))


def sentence_hits(sentences: Sequence[str], pattern: re.Pattern[str], from_end: bool = False) -> Iterator[int]:
    """The indices of the sentences in which ``pattern`` finds a match, in order (from the last one
    with ``from_end``), found lazily: a checker that needs only the tokens a few sentences can hold
    (those with a letter, a lower-case word start, ...) tokenizes just those, in order.

    The sentences are searched in growing blocks joined by ``\\n``, one search per hit sentence (so
    C-level scans, not Python per sentence). ``pattern`` must match no ``\\n`` and must see one next to
    a sentence as it sees the sentence's edge (a look-around that stops at whitespace does).
    """
    n, size = len(sentences), 16
    if not from_end:
        lo = 0
        while lo < n:
            hi = min(n, lo + size)
            yield from _block_hits(sentences, lo, hi, pattern)
            lo, size = hi, size * 2
        return
    hi = n
    while hi > 0:
        lo = max(0, hi - size)
        yield from reversed(list(_block_hits(sentences, lo, hi, pattern)))
        hi, size = lo, size * 2


def _block_hits(sentences: Sequence[str], lo: int, hi: int, pattern: re.Pattern[str]) -> Iterator[int]:
    part = sentences[lo:hi]
    block = "\n".join(part)
    m = pattern.search(block)
    if m is None:
        return
    starts = list(accumulate(map((1).__add__, map(len, part))))  # where each next sentence starts
    last = len(part) - 1
    while m is not None:
        i = bisect_right(starts, m.start())
        yield lo + i
        if i >= last:
            return
        m = pattern.search(block, starts[i])


def tokens_of(keys: list[object]) -> list[str]:
    """The tokens of a run of :func:`sentence_keys`' keys, in order: cached pieces looked up, the
    others tokenized in one batch."""
    cache = _CACHE
    misses = set(keys).difference(cache)
    if not misses:
        try:
            return list(chain.from_iterable(map(cache.__getitem__, keys)))
        except KeyError:  # another thread emptied the cache meanwhile
            misses = set(keys).difference(cache)
    if len(cache) + len(misses) > _CACHE_LIMIT:
        cache.clear()
    _fill(misses, cache)
    try:
        tokens = list(chain.from_iterable(map(cache.__getitem__, keys)))
    except KeyError:  # another thread emptied the cache meanwhile: tokenize this call on its own
        local: dict[object, tuple[str, ...]] = {}
        _fill(set(keys), local)
        return list(chain.from_iterable(map(local.__getitem__, keys)))
    for key in misses:  # long pieces (one huge line) would only bloat the cache
        if len(key if isinstance(key, str) else key[1]) > _CACHE_KEY_MAX + 2:
            cache.pop(key, None)
    return tokens


_CACHE: dict[object, tuple[str, ...]] = {}


def clear_cache() -> None:
    """Forget the cached tokens of every chunk seen so far."""
    _CACHE.clear()


# Cache keys. A head chunk whose tokens do not depend on its neighbours is its own key; one that
# does (it starts with " or '', or ends with ') carries a marker of the character before it
# (sentence start, a space, other whitespace) and/or after it (sentence end, a space, other
# whitespace); a sentence tail is _TAIL + its text. The markers are noncharacters: a sentence
# that holds one (or a character only str.split() calls whitespace) is keyed with tuples instead,
# which no string key can equal.
_BEFORE = {"": "\ufdd0", " ": "\ufdd1"}  # anything else: "\ufdd2"
_AFTER = {"": "\ufdd3", " ": "\ufdd4"}  # anything else: "\ufdd5"
_CONTEXT = {"\ufdd0": "", "\ufdd1": " ", "\ufdd2": "\t", "\ufdd3": "", "\ufdd4": " ", "\ufdd5": "\t"}
_TAIL = "\ufdd6"
# The contractions that an alphanumeric chunk can match (as a whole: it has no inner \b); under
# ASCII, re's case folding is plain lower-casing.
_WORD_CONTRACTIONS = frozenset({"cannot", "gimme", "gonna", "gotta", "lemme", "wanna"})
_LITERAL = "\ufdd8"  # + a run of brackets: one token per character
_UNMARKABLE_CHARS = "\x1c\x1d\x1e\x1f" + "".join(map(chr, range(0xFDD0, 0xFDF0)))
_UNMARKABLE = re.compile(f"[{_UNMARKABLE_CHARS}]")


def _has_unmarkable(text: str) -> bool:
    """``_UNMARKABLE.search(text) is not None`` for a whole text: one substring search per character
    (C scans, ~0.03 ms per MB each; none past the four for text below U+0100), where the class
    search tries every position (~5 ms per MB). Per sentence the class search costs less."""
    return any(c in text for c in _UNMARKABLE_CHARS)


_MARKERS = re.compile("[\ufdd0-\ufdef]")
# The whitespace of a sentence keyed by _mark_contexts (one without U+001C-U+001F: the regex engine's \s).
_MARK_WS = " " + _OTHER_WS


def _mark_contexts(s: str) -> str:
    r"""``s`` with a marker (``_BEFORE``) put before each chunk that starts with " or '' and one
    (``_AFTER``) after each chunk that ends with ', for a sentence without U+001C-U+001F or U+FDD0-U+FDEF:
    what re.sub of (?:^|(?<=(\s)))(?="|'') and then of (?<=')(?=(\s)|\Z) with the marker of group 1
    put in. By str.replace of each whitespace character with the quote after it (the apostrophe
    before it), so in C: the subs called Python per match (0.1 s per MB of quoted words). A pair
    put in holds no whitespace next to a quote or after an apostrophe, so no replacement makes or
    hides another's (a test compares with the subs)."""
    spaces = [c for c in _MARK_WS if c in s]
    marked = s
    if '"' in s or "''" in s:
        for c in spaces:
            mark = _BEFORE.get(c, "\ufdd2")
            for quote in ('"', "''"):
                if c + quote in marked:
                    marked = marked.replace(c + quote, c + mark + quote)
        if s[0] == '"' or s.startswith("''"):
            marked = _BEFORE[""] + marked
    if "'" in s:
        for c in spaces:
            if "'" + c in marked:
                marked = marked.replace("'" + c, "'" + _AFTER.get(c, "\ufdd5") + c)
        if marked[-1] == "'":
            marked += _AFTER[""]
    return marked


def _key(before: str, piece: str, after: str, strings: bool) -> object:
    """The key of a head piece from the characters around it ("" at the sentence's edges)."""
    starts, ends = piece[0] == '"' or piece.startswith("''"), piece[-1] == "'"
    if strings:
        if starts:
            piece = _BEFORE.get(before, "\ufdd2") + piece
        return piece + _AFTER.get(after, "\ufdd5") if ends else piece
    before = (before if before in ("", " ") else "\t") if starts else " "
    return (before, piece, (after if after in ("", " ") else "\t") if ends else " ")


def _chunk_keys(s: str, a: int, b: int, keys: list[object], strings: bool) -> None:
    """Append the keys of the head chunk ``s[a:b]``; a long one is cut between adjacent brackets.

    Brackets are padded with spaces before any pattern could see them next to each other (no
    head pattern matches two brackets in a row), so ``{[`` tokenizes as ``{ [``.
    """
    before = s[a - 1] if a else ""
    after = s[b] if b < len(s) else ""
    if b - a <= _LONG:
        keys.append(_key(before, s[a:b], after, strings))
        return
    # Cut at the bracket pairs that open and close each run of three or more brackets: the
    # brackets strictly inside a run are one token each, keyed as one literal run.
    chunk, start = s[a:b], 0
    for m in _BRACKET_RUN.finditer(chunk):
        i, j = m.span()
        keys.append(_key(before if start == 0 else " ", chunk[start : i + 1], " ", strings))
        keys.append(_LITERAL + chunk[i + 1 : j - 1] if strings else ("#", chunk[i + 1 : j - 1]))
        start = j - 1
    keys.append(_key(before if start == 0 else " ", chunk[start:], after, strings))


def _sentence_keys(s: str, keys: list[object]) -> None:
    """Append the cache keys of one sentence's head chunks and tail.

    The tail is the last chunk, with the closer-only chunks after it, the whitespace after
    them and the character before it.
    """
    unusual = _UNMARKABLE.search(s)
    if unusual is None:  # here str.split() and the regex engine agree on whitespace
        chunks = s.split()
        if not chunks:
            return
        if len(s) <= _LONG or max(map(len, chunks)) <= _LONG:
            # No long chunk: marked chunks are their own keys, and the tail is the last one (the common
            # sentence) or, where closers-only chunks or whitespace follow it, what the spans below
            # give: from the character before the last chunk that is not only closers to the end.
            last = chunks[-1]
            n = len(chunks) - 1
            if s.endswith(last) and not _CLOSERS.issuperset(last):
                tail = s[-len(last) - 1 :] if len(s) > len(last) else s
            else:
                while n > 0 and _CLOSERS.issuperset(chunks[n]):
                    n -= 1
                a = _tail_start(s)  # the start of chunk n (here str.split and \S+ agree on chunks)
                tail = s[a - 1 if a else 0 :]
            marked = _mark_contexts(s) if "'" in s or '"' in s else s
            if marked is not s:
                chunks = marked.split()  # the same chunks, some with a marker at an end
            keys.extend(chunks[:n])
            keys.append(_TAIL + tail)
            return
    # By character spans; with tuple keys where the sentence holds a marker character itself.
    strings = unusual is None or _MARKERS.search(s) is None
    spans = [m.span() for m in _CHUNK.finditer(s)]
    if not spans:
        return
    n = len(spans) - 1
    while n > 0 and _CLOSERS.issuperset(s[spans[n][0] : spans[n][1]]):
        n -= 1
    for a, b in spans[:n]:
        _chunk_keys(s, a, b, keys, strings)
    a, b = spans[n]
    tail = s[a - 1 if a else 0 :]
    if b - a > _LONG:
        # A long tail chunk: the sentence-end patterns reach back to the character before its
        # last period at most, so it is cut at the last bracket pair before that; the part
        # before is tokenized as head chunks, the rest as the tail.
        dot = s.rfind(".", a, b)
        upper = dot - 1 if dot >= 0 else b - 1  # the last allowed cut index
        # (the reverse search only where a bracket occurs: a 1 MB run of periods has none)
        m = None
        if any(s.find(c, a, upper + 1) >= 0 for c in _BRACKETS):
            m = _LAST_BRACKET_PAIR.search(s[a : upper + 1])
        cut = a + m.start() if m else 0
        if cut > a:
            _chunk_keys(s, a, cut, keys, strings)
            tail = " " + s[cut:]
    keys.append(_TAIL + tail if strings else ("$", tail))


def _fill(misses: Iterable[object], cache: dict[object, tuple[str, ...]]) -> None:
    """Tokenize the missed keys in two batches (head chunks, tails) and cache them."""
    plain: list[str] = []  # context-free head chunks, the most common miss
    heads: list[object] = []
    head_pieces: list[str] = []
    tails: list[object] = []
    tail_pieces: list[str] = []
    for key in misses:
        if type(key) is str:
            first, last = key[0], key[-1]
            if first == _TAIL:
                tails.append(key)
                tail_pieces.append(key[1:])
            elif first == _LITERAL:
                cache[key] = tuple(key[1:])
            elif first in _CONTEXT or last in _CONTEXT:
                before, after = _CONTEXT.get(first), _CONTEXT.get(last)
                piece = key[(before is not None) : len(key) - (after is not None)]
                heads.append(key)
                head_pieces.append((" " if before is None else before) + piece + (" " if after is None else after))
            elif key.isascii() and key.isalnum() and key.lower() not in _WORD_CONTRACTIONS:
                cache[key] = (key,)  # an ASCII word or number: no pattern can match inside it
            else:
                plain.append(key)
        elif key[0] == "#":
            cache[key] = tuple(key[1])
        elif key[0] == "$":
            tails.append(key)
            tail_pieces.append(key[1])
        else:
            heads.append(key)
            head_pieces.append("".join(key))
    heads += plain
    head_pieces += map(" {} ".format, plain)
    for batch, pieces, tail in ((heads, head_pieces, False), (tails, tail_pieces, True)):
        if batch:
            cache.update(zip(batch, map(tuple, _run_batch(pieces, tail))))


def _run_batch(pieces: Sequence[str], tail: bool) -> Iterable[list[str]]:
    """The tokens of each piece, every pass run once over all of them."""
    joined = "".join(pieces)
    sep = next((c for c in _SEPARATORS if c not in joined), None)
    if sep is None:  # every candidate occurs in the text: tokenize piece by piece
        passes = _passes(None, tail)
        return [passes.run(p).split() for p in pieces]
    text = _passes(sep, tail).run(sep.join(pieces) + sep)
    parts = text.split(sep)
    del parts[len(pieces) :]  # what follows the last separator
    return map(str.split, parts)


# Whitespace as the patterns see it (the regex engine's \s), and what may follow a sentence's tail.
_WS_CLASS = "".join(sorted(" " + _OTHER_WS))
_AFTER_TAIL = regex.compile("[" + regex.escape(_WS_CLASS + "".join(sorted(_CLOSERS))) + "]*")


def candidate_tokens(sentences: list[str], pattern: re.Pattern[str], limit: int | None = None) -> list[str]:
    """Every token a count of tokens that only ``pattern``'s chunks can hold needs: on text of mostly
    new chunks just those chunks' tokens (:func:`chunk_tokens`), otherwise (or where it declines) the
    tokens of the whole text. The count over either is the same."""
    if not _mostly_new(sentences):
        return tokens_of(sentence_keys(sentences))
    tokens = chunk_tokens(sentences, pattern, limit)
    return tokenize_uncached(sentences) if tokens is None else tokens


def chunk_token_counts(sentences: list[str], chars: str, limit: int | None = None,
                       where: str = "") -> Counter[str] | None:
    """How many times each token occurs in the chunks of ASCII ``sentences`` that hold one of ``chars``
    (a regex class body of ASCII characters, e.g. ``"A-Z"``; with ``where``, a look-around written right
    after the character, only those of them where it holds): the tokens :func:`chunk_tokens` gives for
    a pattern matching those characters, counted. The chunks are found, with what their tokens depend
    on (the character before, the one after, the closers and whitespace up to the sentence's end), by
    one ``findall``; each distinct (chunk, context) is tokenized once, so repeated chunks cost a count.

    ``None`` when the text is not ASCII, holds U+001C-U+001F (whitespace to ``str.split`` only), repeats
    its chunks (the cached path of :func:`tokenize_sentences` costs less: ``_mostly_new``), or has more
    than ``limit`` distinct such chunks (each costs a few microseconds of Python; estimated first on the
    sample ``_mostly_new`` reads): tokenize the whole text then.
    """
    joined = "".join(sentences)
    if not joined.isascii() or _has_unmarkable(joined) or not _mostly_new(sentences):
        return None
    sep = _SEPARATORS[0]  # (a noncharacter: never in ASCII text)
    text = sep + sep.join(sentences) + sep
    pattern = _chunk_context_pattern(chars, where)
    if limit is not None:
        step = max(len(text) // _SAMPLE_WINDOWS, _SAMPLE_CHARS)
        sample = sep.join([text[i : i + _SAMPLE_CHARS] for i in range(0, len(text), step)])
        if len(set(pattern.findall(sample))) * len(text) > limit * len(sample):
            return None
    found = Counter(pattern.findall(text))
    if limit is not None and len(found) > limit:
        return None
    heads: list[str] = []
    head_counts: list[int] = []
    tails: list[str] = []
    tail_counts: list[int] = []
    for (before, chunk, after, rest), n in found.items():
        if before == sep:
            before = ""
        if after == sep or rest:  # only closers and whitespace up to the sentence's end: its tail
            tails.append(before + chunk + rest)
            tail_counts.append(n)
            continue
        if chunk[0] == '"' or chunk.startswith("''"):
            chunk = (before if before in ("", " ") else "\t") + chunk
        else:
            chunk = " " + chunk
        heads.append(chunk + (" " if chunk[-1] != "'" or after == " " else "\t"))
        head_counts.append(n)
    counts: Counter[str] = Counter()
    for pieces, times, tail in ((heads, head_counts, False), (tails, tail_counts, True)):
        if pieces:
            for tokens, n in zip(_run_batch(pieces, tail), times):
                for token in tokens:
                    counts[token] += n
    return counts


@lru_cache(maxsize=16)
def _chunk_context_pattern(chars: str, where: str = "") -> re.Pattern[str]:
    """(character before, chunk holding one of ``chars``, character after, closers and whitespace up to
    the sentence's end if only those follow, else ""), on ASCII sentences joined and framed by the
    separator ``_SEPARATORS[0]``; whitespace as the patterns see it in ASCII (U+001C-U+001F excluded by
    the caller)."""
    sep = re.escape(_SEPARATORS[0])
    ws = re.escape(_ASCII_OTHER_WS + " ")
    closers = re.escape("".join(sorted(c for c in _CLOSERS if c.isascii())))
    head = rf"[^{ws}{sep}{chars}]*[{chars}]" if not where else rf"[^{ws}{sep}]*?[{chars}]{where}"
    return re.compile(rf"([{ws}{sep}])({head}[^{ws}{sep}]*)(?=([{ws}{sep}]))"
                      rf"(?:(?=([{ws}{closers}]*){sep}))?")


def chunk_tokens(sentences: list[str], pattern: re.Pattern[str], limit: int | None = None) -> list[str] | None:
    """The tokens of just the chunks in which ``pattern`` finds a match, each chunk tokenized in
    its context (as in :func:`tokenize_sentences`): the head chunks' tokens first, then the tails'.

    A caller that counts tokens of a kind that only such chunks can hold (``count:pronouns``)
    tokenizes a fraction of the text. ``pattern`` must match neither whitespace nor U+FDD0-U+FDEF
    (the separators). ``None`` when the text
    holds a character this does not handle (U+001C-U+001F, the noncharacters U+FDD0-U+FDEF, or no
    free separator), or when more than ``limit`` chunks match (each costs a few microseconds of
    Python: past that, tokenizing the whole text is cheaper): tokenize it whole then.
    """
    joined = "".join(sentences)
    sep = next((c for c in _SEPARATORS if c not in joined), None)
    if sep is None or _has_unmarkable(joined):
        return None
    text = sep.join(sentences) + sep
    space = regex.compile("[" + regex.escape(_WS_CLASS + sep) + "]")
    space_back = regex.compile("(?r)[" + regex.escape(_WS_CLASS + sep) + "]")
    heads: list[str] = []
    tails: list[str] = []
    taken = 0  # where the last chunk taken ends (a chunk with several matches is taken once)
    start = stop = -1  # the sentence of the last match: text[start:stop] (looked up once per sentence)
    for m in pattern.finditer(text):
        if m.start() < taken:
            continue
        if limit is not None and len(heads) + len(tails) >= limit:
            return None
        before = space_back.search(text, 0, m.start())
        a = before.end() if before else 0
        b = space.search(text, m.start()).start()  # the text ends with the separator
        taken = b
        if b > stop:
            start, stop = text.rfind(sep, 0, a) + 1, text.find(sep, b)
        if _AFTER_TAIL.fullmatch(text, b, stop):  # only closers after it: the sentence's tail
            tails.append(text[a - 1 if a > start else start : stop])
            taken = stop
            continue
        chunk = text[a:b]
        if chunk[0] == '"' or chunk.startswith("''"):
            c = text[a - 1] if a > start else ""
            chunk = (c if c in ("", " ") else "\t") + chunk
        else:
            chunk = " " + chunk
        if chunk[-1] == "'":
            c = text[b]  # a head chunk is followed by whitespace
            chunk += c if c == " " else "\t"
        else:
            chunk += " "
        heads.append(chunk)
    tokens = list(chain.from_iterable(_run_batch(heads, False))) if heads else []
    if tails:
        tokens += chain.from_iterable(_run_batch(tails, True))
    return tokens
