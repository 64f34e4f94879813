r"""ifpo's general-text sentence splitter: pysbd's English rules, decided in one linear pass.

Why it exists: :func:`ifpo.verifiers.text.split_sentences` used to run pysbd (0.3.4, English) on
every line that held an inner terminator. pysbd applies some 150 regular expressions one after
another and rebuilds strings between them, so each call costs 100-300 µs whatever the line's
length: 2-3 s per MB of random text and 7-8 s per MB of short distinct lines such as "a.b12",
35x the rule checkers' budget (0.2 s/MB), inside every GRPO reward and every evaluation.

This module applies pysbd's rules in pysbd's order (the data, its abbreviation lists, sentence
starters and exclamation words, is read from the installed pysbd), but to the whole text at once:
a terminator that does not end a sentence is swapped for a private-use character (it is
*protected*), each later rule sees what the earlier ones swapped, as in pysbd, and a place where
pysbd inserts a break gets a line break, so that every piece pysbd reads on its own is a line.
Each rule is one regular-expression pass (a few need a look at a match in Python), none crosses a
line (whitespace that may not be a line break is ``[^\S\n]`` where pysbd, reading one line,
would see the line's end), so the cost is linear in the text. The sentences are then read with
pysbd's boundary expression, kept inside lines, and the swapped characters put back.

Where it can differ from pysbd: pysbd's rules see the text after earlier rules replaced
characters with multi-character placeholders ("&ᓴ&"), which shifts a few look-arounds; and pysbd
drops a sentence it cannot find back in its input. Neither happens in prose;
``bench/sentence_agreement.py`` measures the agreement on realistic answers and generated lines,
and ``tests/test_text.py`` holds the rules' truth table and agreement floors.
"""

from __future__ import annotations

import itertools
import operator
import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ifpo.verifiers._native import compiled_module

# Terminators as pysbd knows them, and the private-use character each becomes when protected.
_TERMS = "。．.！!?？"
_PROTECTED = "\ue001\ue002\ue003\ue004\ue005\ue006\ue007"
_DOT = _PROTECTED[_TERMS.index(".")]
_ANY_TERM = re.compile(r"[。．.！!?？]")
_PROTECT_PAIRS = tuple(zip(_TERMS, _PROTECTED))


def _protect(text: str) -> str:
    """``text`` with its terminators swapped (str.replace per mark: translate with a table of
    non-ASCII characters costs about 150 ns a character)."""
    if _ANY_TERM.search(text) is None:
        return text
    for mark, protected in _PROTECT_PAIRS:
        if mark in text:
            text = text.replace(mark, protected)
    return text


def _splice(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` of ``edits`` (in order, not overlapping) replacing
    ``text[start:end]`` (an insertion when ``start == end``)."""
    parts, done = [], 0
    for start, end, new in edits:
        parts += [text[done:start], new]
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def _protect_match(m: re.Match[str]) -> str:
    return _protect(m.group())


@lru_cache(maxsize=1)
def _data() -> dict[str, frozenset[str] | tuple[str, ...]]:
    """pysbd's English word lists (abbreviations and their kinds, sentence starters, words with '!')."""
    from pysbd.exclamation_words import ExclamationWords
    from pysbd.lang.english import English

    abbr = English.Abbreviation
    return {
        "abbreviations": frozenset(a.strip().lower() for a in abbr.ABBREVIATIONS),
        "prepositive": frozenset(a.strip().lower() for a in abbr.PREPOSITIVE_ABBREVIATIONS),
        "number": frozenset(a.strip().lower() for a in abbr.NUMBER_ABBREVIATIONS),
        "starters": tuple(English.AbbreviationReplacer.SENTENCE_STARTERS),
        "exclamation_words": tuple(ExclamationWords.EXCLAMATION_WORDS),
        "longest": max(len(a.strip()) for a in abbr.ABBREVIATIONS),
    }


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    data = _data()
    starters = "|".join(re.escape(w) for w in data["starters"])
    # the exclamation words searched from their "!" (a literal: sre skips to it in C; the words
    # start with "!", "ǃ" or "Y", so the alternation was tried at every one of those, 3 ms/MB): the
    # ones starting with it as one alternation, longest first as pysbd's, the others with the rest of
    # the word behind. Only a word holding "!" is looked for: protecting another changes nothing,
    # and none of them can overlap one (they start with "ǃ" and hold no "!" or "Y"); which text a match
    # covers does not matter either, only that its "!" is protected.
    bang = [w for w in data["exclamation_words"] if "!" in w]
    first = sorted((w[1:] for w in bang if w.startswith("!")), key=len, reverse=True)
    words = "|".join(["!(?:" + "|".join(map(re.escape, first)) + ")"] + [
        "!" + re.escape(w.split("!", 1)[1]) + f"(?<={re.escape(w)})" for w in bang if not w.startswith("!")])
    return {
        # "U.S. The": these abbreviations end a sentence before a sentence starter after all (the
        # protected period is matched first, each abbreviation a look-behind: a literal-first search)
        "abbr_boundary": re.compile(
            r"\ue003(?:" + "|".join(f"(?<={a}\ue003)" for a in (
                r"U\ue003S", r"U\.S", r"U\ue003K", r"E\ue003U", r"E\.U", r"U\ue003S\ue003A", r"U\.S\.A", "I", "i.v",
                "I.V")) + rf")(?=[^\S\n](?:{starters})[^\S\n])"
        ),
        "exclamation_words": re.compile(words),
    }


# --- the rules, in pysbd's order; each swaps what it protects for a private-use character --------
# (a period whose rule matches only it is swapped for _DOT)
# periods protected by their own neighbours only (no rule here looks at another period's state, so
# one alternation is the same as pysbd's rules one after another)
_LOCAL_RULE = re.compile(
    r"\.(?:"
    r"(?='s(?:\s|$))"  # possessive of an abbreviation: "the U.S.'s"
    r"|(?<=[A-Zo]\.)(?:"  # (one cheap look first: most periods follow neither)
    r"(?<=Co\.)(?=\sKG)"  # "Co. KG"
    r"|(?<=^[A-Z]\.)(?=\s)"  # a single capital at a line start: "A. Smith"
    r"|(?<=[^\S\n][A-Z]\.)(?=,?[^\S\n])"  # a single capital inside: "J. R. R. Tolkien"
    r"))",
    re.M,
)
# "a.m.", "U.S.", "e.g." (matched from the first period on: a pattern that starts with a literal is
# searched far faster than one that starts with a look-behind)
_MULTI_PERIOD = re.compile(r"(\.(?=[a-z])(?<=\b[a-z]\.)[a-z](?:\.[a-z])*\.)", re.I)


def _protect_multi_periods(text: str) -> str:
    """Every period of each _MULTI_PERIOD match protected (the matches are the odd parts of the
    split; none holds a line break, so they are swapped at once joined by one)."""
    parts = _MULTI_PERIOD.split(text)
    if len(parts) == 1:
        return text
    parts[1::2] = "\n".join(parts[1::2]).replace(".", _DOT).split("\n")
    return "".join(parts)
# "5 p.m. The": the last period ends the sentence after all
_AM_PM = re.compile(r"\ue003(?:(?<= P\ue003M\ue003)|(?<=A\ue003M\ue003)|(?<=p\ue003m\ue003)|(?<=a\ue003m\ue003))(?=\s[A-Z])")
_NUMBER_RULE = re.compile(
    r"\.(?:"
    r"(?=\d)"  # "3.5", ".5"
    r"|(?<=\d\.)(?:(?=\S)"  # "3.a", "2.)"
    r"|(?<=^\d\.)(?=\s\S)|(?<=^\d\d\.)(?=\s\S))"  # "1. The text" at a line start
    r")",
    re.M,
)
_CONTINUOUS = re.compile(r"[!?](?<=\S[!?])[!?]{2,}(?=\s|$)", re.M)
# "as shown.12 The": the period stays, the reference number ends the sentence
_NUMBERED_REFERENCE = re.compile(
    r"[.\ue003](?=[\[\d])(?<=[^\d\s][.\ue003])"
    r"((?:\[(?:\d{1,3},?[^\S\n]?-?[^\S\n]?)*\b\d{1,3}\])+|(?:\d{1,3}[^\S\n]?)?\d{1,3})([^\S\n])(?=[A-Z])"
)
# e-mail addresses, file names, versions: a period between two letters or digits. pysbd's rule
# consumes the character after the period, so in "g.J.b" only the first period stays: so here.
# (every such period, marked _EDOT; what follows it looked at first: most periods end a sentence)
_EMAIL_ETC = re.compile(r"\.(?=[a-zA-Z0-9_])(?<=[a-zA-Z0-9_]\.)")
_EDOT = "\ue01a"
_EDOT_CHAIN = re.compile(r"\ue01a(?:[a-zA-Z0-9_]\ue01a)+")  # "a.b.c": the consumed one in between


def _consume_chain(m: re.Match[str]) -> str:
    # the 1st, 3rd, ... period of a chain is pysbd's match; each takes the character after it, so
    # the period after that one is not matched
    chars = list(m.group())
    for k in range(2, len(chars), 4):
        chars[k] = "."
    return "".join(chars)


# "45°.5", " .mp4 " (neither looks at another period)
_GEO_FILE = re.compile(
    r"\.(?:(?<=[a-zA-z]°\.)(?=\s*\d+)"
    r"|(?<=[^\S\n]\.)(?=(?:jpe?g|png|gif|tiff?|pdf|ps|docx?|xlsx?|svg|bmp|tga|exif|odt|html?|txt|rtf|bat|sxw|xml"
    r"|zip|exe|msi|blend|wmv|mp[34]|pptx?|flac|rb|cpp|cs|js)[^\S\n]))"
)
# ellipses: " . . . " and "word. . . ." stay; "...." before ". Capital" keeps its last period;
# "..." before a capital ends the sentence on its last period; any other "..." stays
_ELLIPSIS_RULES = [
    (re.compile(r"\.(?<=[^\S\n]\.)[^\S\n]\.[^\S\n]\.[^\S\n]"), _protect_match),  # "(\s\.){3}\s", from its first period
    (re.compile(r"\.(?<=[a-z]\.)[^\S\n]\.[^\S\n]\.[^\S\n]\.(?:$|\\n)", re.M), _protect_match),
    (re.compile(r"\.\.\.(?=\.\s[A-Z])(?<=\S\.\.\.)"), _DOT * 3),
    (re.compile(r"\.\.\.(?=\s+[A-Z])"), _DOT * 2 + "."),
    (re.compile(r"\.\.\."), _DOT * 3),
]
# Each rule as a split: the span as the split's group. Where the opener may stand inside a span
# ("[a [b.]"), a line of openers that are never closed would be rescanned from each one (quadratic:
# 16 s for 160 KB of "[x. "); there a second alternative, tried only where the span failed, takes
# the opener and the run a span could have had (it reaches the same stop from any opener inside, so
# none of those can start a span either): the same spans, found once. There the opener stays out of
# the groups (a pattern that starts with it is searched fast; the split drops it, and it is put
# back): group 1 is the rest of a span, group 2 the rest of such a run. Last, what every span ends with.
# The "‘" span, "(?:[^’\n]|’[a-zA-Z])*’" (an alternation inside a repeat: ~150 ns a character in sre,
# and backtracked over the whole line where no "’" ends it), is written as what that search finds:
# the run of such characters and its "’" when one not before a letter ends the run (possessive: the
# run can only be read one way), else the line up to its last "’" (every "’" in the run is before a
# letter: the greedy search backs off to the last one), else no span.
_BETWEEN_SPLIT = [
    (re.compile(r"‘(?<=[^\S\n]‘)(?:([^’\n]*+(?:’[a-zA-Z][^’\n]*+)*+’|[^\n]*’)|([^’\n]*+))"), "‘", "’"),
    (re.compile(r'("[^"\\\n]+")'), None, '"'),
    (re.compile(r"\[(?:([^\]\\\n]+\])|([^\]\\\n]*))"), "[", "]"),
    (re.compile(r"(\([^()\\\n]+\))"), None, ")"),
    (re.compile(r"«(?:([^»\\\n]+»)|([^»\\\n]*))"), "«", "»"),
    (re.compile(r"(--[^-\n]*--)"), None, "--"),
    (re.compile(r"“(?:([^”\\\n]+”)|([^”\\\n]*))"), "“", "”"),
]
# pysbd's single-quoted span, after whitespace that is no line break (pysbd, reading one line, sees
# none at its start)
# ("'(?:[^'\n]|'[a-zA-Z])*'" written as the curly "‘" rule's span is, see _BETWEEN_SPLIT: an
# alternation inside a repeat cost ~85 ms/MB on a line of " 'x. ")
_SINGLE_QUOTED_ANY_LINE = re.compile(r"'(?<=[^\S\n]')(?:[^'\n]*+(?:'[a-zA-Z][^'\n]*+)*+'|[^\n]*')")
_QUOTE_THEN_SPACE = re.compile(r"'\s")
# pysbd's "'(?<=\s')(?:[^'\n]|'[a-zA-Z])*'\S", only ever searched for: it is found from a quote exactly
# when the first quote after it on the line comes before a non-space (one before a letter is
# taken by the repeat, and the search backs off to it; any other ends the repeat)
_LEADING_APOSTROPHE_WORD = re.compile(r"'(?<=\s')[^'\n]*+'\S")
class _AnyOf:
    """A stand-in for a pattern's ``search`` where the pattern would only test whether the text holds
    one of a few strings: a substring search each, far faster than a class's or an alternation's
    try at every position."""

    def __init__(self, needles: Iterable[str]) -> None:
        self.needles = tuple(needles)

    def search(self, text: str) -> bool:
        return any(map(text.__contains__, self.needles))


# "?!", "!?", "??", "!!", in the order pysbd replaces them (a pair ends a sentence once, on its second mark)
_PAIRS = ("?!", "!?", "??", "!!")
_DOUBLE_PUNCT = _AnyOf(_PAIRS)
# a line that starts with a pair (found from the line break before; the text's start on its own)
_LINE_STARTS_DOUBLE = re.compile(r"\n[^\S\n]*(?:\?!|!\?|\?\?|!!)")
_TEXT_STARTS_DOUBLE = re.compile(r"[^\S\n]*(?:\?!|!\?|\?\?|!!)")
# "?" or "!" before a quote, "!" before a lower-case word (or ", word"): mid-sentence
_MID_SENTENCE = [
    (re.compile(r"""\?(?=['"])"""), _PROTECTED[_TERMS.index("?")]),
    (re.compile(r"""!(?=['"])"""), _PROTECTED[_TERMS.index("!")]),
    (re.compile(r"!(?=,[^\S\n][a-z])"), _PROTECTED[_TERMS.index("!")]),
    (re.compile(r"!(?=\s[a-z])"), _PROTECTED[_TERMS.index("!")]),
]

# inline lists: "1. Open it. 2. Close it.", "1) a 2) b", "a. x b. y", "(a) x (b) y", "(i) x (ii) y"
# list markers, found from their last character (a literal first keeps the search fast)
_LETTER_DOT = re.compile(r"\.(?<=(?<!\S)[a-z]\.)")  # "a." after whitespace or the line start
_LETTER_PAREN = re.compile(r"\)(?<=[a-z]\))")  # "a)", "(iv)"
_NUMBER_DOT = re.compile(r"\.(?=[\s)])(?<=\d\.)")  # "1. ", "12.)"
_NUMBER_PAREN = re.compile(r"\)(?=\s)(?<=\d\))")  # "3) "
_LATIN = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
_LIST_FOR = re.compile(r"for\s\d{1,2}\u2668\s[a-z]")
_LIST_SPACING = [re.compile(r"(?<=\S\S)\s(?=\S\s*\d+\u2668)"), re.compile(r"(?<=\S\S)\s(?=\d{1,2}\u2668)")]
# pysbd's roman numerals, in its order (x, xi, xii, xiii appear twice there: the first counts)
_ROMAN = {}
for _i, _r in enumerate("i ii iii iv v vi vii viii ix x xi xii xiii xiv x xi xii xiii xv xvi xvii xviii xix xx".split()):
    _ROMAN.setdefault(_r, _i)

# after the sentences are read: 'He said "Hi." She left.' splits after the quote (pysbd's
# "([\"'“”])(?<=[!?.\-][\"'“”])\s(?=[A-Z])", one quote character each: a literal first; run one
# after another, as a match takes a space before a capital, which no other match reads)
_QUOTES_THEN_CAPITAL = tuple((q, re.compile(re.escape(q) + rf"(?<=[!?.\-]{re.escape(q)})\s(?=[A-Z])")) for q in "\"'“”")

# a double mark ("?!", "!!") becomes one of these (its first mark) and one that ends a sentence
_PAIR_START = {"?": "\ue011", "!": "\ue012"}
_PAIR_END = {"?": "\ue010", "!": "\ue013"}
# an opening bracket that cannot start a bracketed sentence (see _settle_openers) becomes one of these
_IDLE_OPENER = {"(": "\ue014", "（": "\ue015", "「": "\ue016", "“": "\ue017", "'": "\ue018", '"': "\ue019"}
_FLIP = {**_IDLE_OPENER, **{v: k for k, v in _IDLE_OPENER.items()}}  # (an opener and its idle marker, both ways)
# each marker and the character it stands for
_MARKERS = (tuple(zip(_PROTECTED, _TERMS)) + tuple((v, k) for k, v in _PAIR_START.items())
            + tuple((v, k) for k, v in _PAIR_END.items()) + tuple((v, k) for k, v in _IDLE_OPENER.items()))
_OWN_MARKS = re.compile(r"[\ue000-\ue01a]")  # in the input itself: read the slow, exact way


def _compiled_reader() -> Any:
    """The compiled reading (``verifiers/_sbd_scan.pyx``: ``_READ``'s pieces, joined), or None where
    it is not built (a source checkout without an install, no C compiler at install), built from
    another version of its interface, or ``IFPO_SBD_PURE=1`` asks for the expression."""
    return compiled_module("_sbd_scan", _READER_INTERFACE, "IFPO_SBD_PURE")


_READER_INTERFACE = 1  # what _sbd_scan.read takes and returns


def _unmask(text: str) -> str:
    for marker, char in _MARKERS:
        if marker in text:
            text = text.replace(marker, char)
    return text


# pysbd's boundary expression, read on the whole text at once: its alternatives in its order, each
# kept inside one line (pieces are lines here), with the marks it swapped as this module swaps them.
# A sentence that starts with a bracket or quote may end at the closing one before a capital; a run
# of two marks or spaces is a piece of its own (it holds no letter, so it is dropped later); else a
# sentence runs to the first mark (a double mark is one character in pysbd, so a sentence that
# starts with one looks past it), or to the line's end when no mark is left (pysbd appends one).
# An opening bracket that cannot start such a sentence is swapped out first (_settle_openers), so
# no attempt scans a line in vain: pysbd's expression on a line of unclosed brackets is quadratic.
_ROMAN_IN_PARENS = re.compile(r"\((?=[mdclxvi])m*(?:c[md]|d?c*)(?:x[cl]|l?x*)(?:i[xv]|v?i*)\)(?=[^\S\n][A-Z])")
_OPENING = {"(": ")", "（": "）", "「": "」", "“": "”"}
# opening -> (fewest characters inside, no comma before the closing one, what must follow it)
_OPENER_RULES = {
    "(": (2, False, re.compile(r"[^\S\n][A-Z]")),
    "（": (0, False, re.compile(r"[^\S\n]?[A-Z]")),
    "「": (0, False, re.compile(r"[^\S\n][A-Z]")),
    "“": (1, True, re.compile(r"[^\S\n][A-Z]")),
}
# per opening bracket: where it stands where the reading can start a sentence (a line's start, or
# after a terminator or a closing bracket or quote, spaces aside; matched from the character before,
# a class search far faster than a look-behind at every position; the text is given a line break in
# front, so its start is a line start), and a closing one that may end such a sentence (no comma
# before it where that counts, and what must follow it; the literal first)
_OPENER_START = {o: re.compile(r"[。．.！!?？\ue010\ue013)）」”'\"\n][^\S\n]*" + re.escape(o)) for o in _OPENING}
_GOOD_CLOSER = {
    o: re.compile(re.escape(c) + (f"(?<!,{re.escape(c)})" if _OPENER_RULES[o][1] else "")
                  + f"(?={_OPENER_RULES[o][2].pattern})")
    for o, c in _OPENING.items()
}
_READ = re.compile(
    # first the usual case, in one greedy scan: a sentence that starts with no bracket, quote, mark
    # or space reads to its first mark, or to the line's last non-space when none is left (exactly
    # what the last alternative gives, found faster than by its lazy scan)
    r"[^\s（「(\'\"“。．.！!?？\ue011\ue012](?:[^\n。．.！!?？\ue010\ue013]*[^\s。．.！!?？\ue010\ue013])?"
    r"(?:[。．.！!?？\ue010\ue013]|(?=[^\S\n]*(?:\n|\Z)))"
    r"|（[^）\n]*）(?=[^\S\n]?[A-Z])"
    r"|「[^」\n]*」(?=[^\S\n][A-Z])"
    r"|\([^)\n]{2,}\)(?=[^\S\n][A-Z])"
    r"|'[^'\n]*[^,\n]'(?=[^\S\n][A-Z])"
    r'|"[^"\n]*[^,\n]"(?=[^\S\n][A-Z])'
    r"|“[^”\n]*[^,\n]”(?=[^\S\n][A-Z])"
    r"|[ 。．.！!?？]{2,}"
    r"|[\ue011\ue012][\ue010\ue013](?:[^\n]*?[。．.！!?？\ue010\ue013]|(?:[^\n]*\S)?)"
    r"|\S(?:[^\n]*?[。．.！!?？\ue010\ue013]|(?:[^\n]*\S)?)"
)
# verifiers/_sbd_scan.pyx reads the same pieces, compiled, where it is built: a change here needs
# the same change there (tests/test_sbd_scan.py compares the two)
_READER = _compiled_reader()  # (None: _READ.findall reads)


# what a list marker ends with, after what pysbd's list expressions allow before it ("1." "12."
# after a space, a dash or the line start; "a." after a space or the start; "a)" "iv)" "(b)";
# "3)" anywhere): a line needs two before its list rules can fire
# (a ")" after a digit (any decimal one: pysbd's \d) or letter is always one; a "." is one after a
# digit or two with whitespace, a dash or the line start before, or after a letter with whitespace
# or the line start before; what all of those need, a digit or letter after one of those or a
# digit, is looked at first: one look-behind turns away most periods, "x.", "[x.", "a.b"). They are
# searched on the text with a space in front, so the text's start needs no case of its own, and a
# pair of periods where no ")" is one: each pattern then starts with a literal, which sre searches
# for far faster than for either of two (17 -> 9 ms/MB on a line of "[x. ").
_PAREN_MARKER = r"\)(?<=[\da-z]\))"
_DOT_MARKER = r"\.(?<=[\s\-⁃\d][\da-z]\.)(?:(?<=(?<![^\s\-⁃])\d\.)|(?<=(?<![^\s\-⁃])\d\d\.)|(?<=(?<!\S)[a-z]\.))"
_LIST_MARKER = f"(?:{_PAREN_MARKER}|{_DOT_MARKER})"
_LIST_PAIR = re.compile(_LIST_MARKER + r"[^\n]*?" + _LIST_MARKER)  # two on one line
_DOT_PAIR = re.compile(_DOT_MARKER + r"[^\n]*?" + _DOT_MARKER)
_ANY_PAREN_MARKER = re.compile(_PAREN_MARKER)


def _consecutive(values: list[int]) -> set[int]:
    """The numbers that have a neighbour one apart in the list (pysbd also pairs 0 and 9)."""
    keep = set()
    for i, v in enumerate(values):
        nxt = i < len(values) - 1 and v + 1 == values[i + 1]
        prev = i > 0 and (v - 1 == values[i - 1] or (v == 0 and values[i - 1] == 9) or (v == 9 and values[i - 1] == 0))
        if nxt or prev:
            keep.add(v)
    return keep


def _alphabet_items(found: list[str], alphabet: dict[str, int]) -> set[str]:
    """pysbd's alphabetical-list test: an item whose neighbour is the next or previous letter (for
    the first item the previous one is the list's last, as in pysbd)."""
    items = [a for a in found if a in alphabet]
    keep = set()
    last = len(items) - 1
    for i, a in enumerate(items):
        here, prev = alphabet[a], alphabet[items[i - 1]]
        if (i < last and alphabet[items[i + 1]] - here == 1) or abs(prev - here) == 1:
            keep.add(a)
    return keep


def _digits_before(line: str, i: int) -> int:
    """Where the run of at most two digits that ends at ``i`` starts (``i`` when there is none)."""
    k = i
    while k > 0 and i - k < 2 and "0" <= line[k - 1] <= "9":
        k -= 1
    return k


def _line_lists(line: str, base: int, breaks: set[int]) -> str:
    """pysbd's list rules on one line: the line with its list items' periods protected; the breaks
    pysbd puts before items (a line break it inserts, or the whitespace it turns into one) are added
    to ``breaks`` as offsets in the text."""
    chars = list(line)
    # alphabetical lists with periods ("a. one b. two"): a break before each item, its period stays
    dots = [m.start() for m in _LETTER_DOT.finditer(line)]
    if len(dots) > 1:
        keep = _alphabet_items([line[p - 1] for p in dots], _LATIN)
        for p in dots:
            if line[p - 1] in keep:
                breaks.add(base + p - 1)
                chars[p] = _DOT
    # alphabetical and roman lists with parentheses ("a) one b) two", "(i) one (ii) two"): the
    # lower-case letters before ")" right after "(", whitespace or the line start
    words = []
    for m in _LETTER_PAREN.finditer(line):
        close = m.start()
        k = close - 1
        while k > 0 and "a" <= line[k - 1] <= "z":
            k -= 1
        if k == 0 or line[k - 1] == "(" or line[k - 1].isspace():
            words.append((line[k:close], k - 1 if k and line[k - 1] == "(" else k))
    if len(words) > 1:
        found = [w for w, _ in words]
        keep = _alphabet_items(found, _LATIN) | _alphabet_items(found, _ROMAN)
        for w, at in words:
            if w in keep:
                breaks.add(base + at)
    # numbered lists with periods ("1. one 2. two"): each item's period stays, and pysbd's two
    # spacing rules, read on the line with those periods marked, put the breaks
    items = []
    for m in _NUMBER_DOT.finditer(line):
        dot = m.start()
        k = _digits_before(line, dot)
        lead = k - 1 if k and line[k - 1] in "-⁃" else k
        if lead == 0 or line[lead - 1].isspace():
            items.append((int(line[k:dot]), lead, dot))
    if len(items) > 1:
        keep_n = _consecutive([n for n, _, _ in items])
        marked = list(line)
        for n, _, dot in items:
            if n in keep_n:
                marked[dot] = "\u2668"
        marked_line = "".join(marked)
        if "\u2668" in marked_line and not _LIST_FOR.search(marked_line):
            for n, _, dot in items:
                if n in keep_n:
                    chars[dot] = _DOT
            for rule in _LIST_SPACING:
                breaks.update(base + x.start() for x in rule.finditer(marked_line))
    # numbered lists with parentheses ("1) one 2) two"): a break at the whitespace before an item
    numbers = []
    for m in _NUMBER_PAREN.finditer(line):
        k = _digits_before(line, m.start())
        if k == m.start():  # other decimal digits only ("٣) "): pysbd's \d{1,2} reads them, int() too,
            # so the item counts for its neighbours; its break is never put (pysbd's substitution
            # compares the item's text with str() of its number)
            k = m.start() - (2 if m.start() > 1 and line[m.start() - 2].isdecimal() else 1)
            numbers.append((int(line[k:m.start()]), -1))
        else:
            numbers.append((int(line[k:m.start()]), k))
    if len(numbers) > 1:
        keep_n = _consecutive([n for n, _ in numbers])
        for n, i in numbers:
            if n in keep_n and i >= 3 and line[i - 1].isspace() and not line[i - 2].isspace() \
                    and not line[i - 3].isspace():
                breaks.add(base + i - 1)
    return "".join(chars)


def _list_lines(text: str) -> list[int]:
    """Where the lines with two list markers or more start, in order."""
    pair = _LIST_PAIR if _ANY_PAREN_MARKER.search(text) else _DOT_PAIR
    spaced = " " + text  # (offsets one more than in text)
    line_starts = []
    pos = 0
    while (m := pair.search(spaced, pos)) is not None:
        line_starts.append(text.rfind("\n", 0, m.start() - 1) + 1)
        end = text.find("\n", m.end() - 1)
        if end < 0:
            break
        pos = end + 2
    return line_starts


def _lists(text: str, breaks: set[int]) -> str:
    """:func:`_line_lists` on the lines with two list markers or more (the others cannot have a list)."""
    edits = []
    for start in _list_lines(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        edits.append((start, end, _line_lists(text[start:end], start, breaks)))
    return _splice(text, edits)


_AFTER_NUMBER_ABBR = re.compile(r"\s\d|\s+\(")


def _either_case(char: str) -> str:
    """``char`` in either ASCII case, as a class (not IGNORECASE: sre tries a branch that starts with
    a class or a literal only when its first character fits, a case-folded one always; and
    IGNORECASE takes the Kelvin sign for "k")."""
    return f"[{char.lower()}{char.upper()}]" if char.isascii() and char.isalpha() else re.escape(char)


def _trie(words: Iterable[str]) -> str:
    """An alternation matching exactly ``words`` in either ASCII case, as a trie (sre tries an
    alternation's branches one by one: a flat list of 150 words is 150 tries at every place). The
    first letter is two literal branches, one per case (a literal is the cheapest first test, and
    every place tried is a first letter)."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict, first: bool) -> str:
        alternatives = []
        for char, rest in sorted(node.items()):
            if char:
                after = branch(rest, False)
                cases = sorted({char.lower(), char.upper()}) if first and char.isascii() else [char]
                alternatives += [re.escape(c) + after for c in cases] if first else [_either_case(char) + after]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{body})?" if "" in node else body  # (a word ends here)

    return branch(tree, True)


@lru_cache(maxsize=1)
def _abbreviation_reading() -> tuple[re.Pattern[str], re.Pattern[str]]:
    r"""On the reversed text, a period after a listed abbreviation (whitespace or the text's start
    before it: reversed, after it; either ASCII case, as str.lower sees the word's letters) that
    stays for what follows it (reversed: look-behinds): the prepositive, number and other
    abbreviations each with its follow test. The number ones' "\s+\(" is variable width: one space
    is in that pattern; the other, a number abbreviation followed by two whitespace characters, is
    tested forward."""
    data = _data()

    def word(kind: Iterable[str]) -> str:
        return rf"(?={_trie(w[::-1] for w in kind)}(?:\s|\Z))"

    # (first what all of them need: a word of letters and periods back to whitespace, and followed by
    # whitespace or . : - ? , ; most periods fail one of them at once, "x. (y.", "a.b")
    start = rf"\.(?=[A-Za-z][A-Za-z.]{{0,{data['longest']}}}(?:\s|\Z))(?<=[\s.:\-?,]\.)"
    prepositive, number = data["prepositive"], data["number"] - data["prepositive"]
    other = data["abbreviations"] - prepositive - number
    kept = re.compile(
        start + r"(?:(?:(?<=\s\.)|(?<=\d:\.))" + word(prepositive)  # \s|:\d
        + r"|(?<=[\d(]\s\.)" + word(number)  # \s\d|\s\(
        # [.:\-?,]|\s(?:[a-z]|I[^\S\n]|I'm|I'll|\d|\()
        + r"|(?:(?<=[.:\-?,]\.)|(?<=[a-z\d(]\s\.)|(?<=[^\S\n]I\s\.)|(?<=m'I\s\.)|(?<=ll'I\s\.))" + word(other) + ")"
    )
    return kept, re.compile(r"\.(?<=\s\s\.)" + word(number))


_TWO_SPACES_PAREN = re.compile(r"\(\s\s")  # (reversed: "\s\s(" forward)


def _abbreviations(text: str) -> str:
    """A period after a listed abbreviation (after whitespace or the line start) stays when what
    follows says so: any whitespace after a title ("Dr."), a number after "No." / "pp.", and
    otherwise punctuation, a lower-case word, "I", a digit or a parenthesis."""
    kept, spaced_number = _abbreviation_reading()
    # The word before a period (dotted ones too: "e.g", "Ph.D") back to whitespace is read on the
    # reversed text, where it follows the period (a look-ahead: each period is read on its own, and
    # the search skips to the next period in C), as is what follows it: one substitution, no Python
    # per period (a Python step per listed period cost 90 ms/MB on a text of "Mr. Bo said").
    backwards = text[::-1]
    swapped = kept.sub(_DOT, backwards)
    if _TWO_SPACES_PAREN.search(backwards):  # "No.  (": tested forward, over all at once
        found = list(map(re.Match.start, spaced_number.finditer(backwards)))
        last = len(text)
        after = list(map(operator.sub, itertools.repeat(last), found))  # just after each period
        at = list(itertools.compress(found, map(_AFTER_NUMBER_ABBR.match, itertools.repeat(text), after)))
        if at:
            at.append(last)
            swapped = _DOT.join(map(swapped.__getitem__, map(slice, [0, *map(operator.add, at, itertools.repeat(1))],
                                                                at)))
    return text if swapped is backwards else swapped[::-1]


# cheap necessary conditions of the passes they guard (a text of marks and nothing else skips them)
_LIST_HINT = re.compile(r"[0-9a-z][.)]")
_LETTER_PERIOD_HINT = re.compile(r"[A-Za-z]\.")
_DIGIT_HINT = _AnyOf("0123456789")  # (a class scan cost 3 ms/MB)
_POSSESSIVE_HINT = re.compile("'s")
_PROTECTED_DOT_HINT = re.compile(_DOT)
_BANG_HINT = re.compile("!")


class _ReferenceHint:
    """Whether a period, protected or not, stands before a digit or "[" (_NUMBERED_REFERENCE's
    start): two literal-first searches, far faster than that pattern's two-character class."""

    period = re.compile(r"\.[\[\d]")
    protected = re.compile(_DOT + r"[\[\d]")

    @classmethod
    def search(cls, text: str) -> bool:
        return cls.period.search(text) is not None or (_DOT in text and cls.protected.search(text) is not None)


_REFERENCE_HINT = _ReferenceHint()


_CAPITAL_HINT = _AnyOf("ABCDEFGHIJKLMNOPQRSTUVWXYZ")

_QUOTE_OR_OPENER = re.compile(r"[(（「“'\"]")
# (only its first character can start a bracketed or quoted sentence: the reading below takes the
# rest of a line without a terminator in one piece)
# (one pattern for all openers, from the line break before: the text gets one in front; a line
# starts with one character, so one pass is pysbd's rules one opener after another)
_NO_MARK_LINE_OPENER = re.compile(r"(\n[^\S\n]*)([(（「“'\"])(?=[^\n。．.！!?？]*$)", re.M)
_IDLE_TABLE = str.maketrans(_IDLE_OPENER)


def _idle_no_mark_line_openers(text: str) -> str:
    """The opener that starts a line without a terminator swapped for its idle marker (the openers
    are every third part of the split, swapped all at once: no Python per line)."""
    parts = _NO_MARK_LINE_OPENER.split("\n" + text)
    if len(parts) == 1:
        return text
    parts[2::3] = "".join(parts[2::3]).translate(_IDLE_TABLE)
    return "".join(parts)[1:]


def _masked(text: str) -> tuple[str, str]:
    """pysbd's rules in pysbd's order, each seeing what the earlier ones swapped: the text with a line
    break where pysbd puts one (so every piece pysbd reads on its own is a line), and the same text
    with its protected terminators swapped."""
    breaks: set[int] = set()
    cur = _lists(text, breaks) if _LIST_HINT.search(text) else text
    if breaks:
        text, cur = _with_breaks(text, breaks), _with_breaks(cur, breaks)
    # (the rules below swap periods only: a letter or digit next to a period is never made, so the
    # hints found here hold for every later rule they guard)
    letter_period = _LETTER_PERIOD_HINT.search(cur)
    digits = _DIGIT_HINT.search(cur)
    if letter_period or _POSSESSIVE_HINT.search(cur):
        cur = _LOCAL_RULE.sub(_DOT, cur)
    if letter_period and _LETTER_PERIOD_HINT.search(cur):
        cur = _abbreviations(cur)
        cur = _protect_multi_periods(cur)
    if _PROTECTED_DOT_HINT.search(cur):  # (both look for a protected period)
        cur = _AM_PM.sub(".", cur)
        cur = _patterns()["abbr_boundary"].sub(".", cur)
    if digits:
        cur = _NUMBER_RULE.sub(_DOT, cur)
    if _DOUBLE_PUNCT.search(cur):  # (a run of three marks holds a pair)
        cur = _CONTINUOUS.sub(_protect_match, cur)
    if digits and _REFERENCE_HINT.search(cur) and _NUMBERED_REFERENCE.search(cur):
        breaks = {x.start(2) for x in _NUMBERED_REFERENCE.finditer(cur)}
        cur = _NUMBERED_REFERENCE.sub(lambda x: _DOT + x.group(1) + x.group(2), cur)
        text, cur = _with_breaks(text, breaks), _with_breaks(cur, breaks)
    if letter_period or digits or "_." in cur:  # (what the rule needs before its period)
        cur = _EMAIL_ETC.sub(_EDOT, cur)
    if _EDOT in cur:
        if _EDOT_CHAIN.search(cur):
            cur = _EDOT_CHAIN.sub(_consume_chain, cur)
        cur = cur.replace(_EDOT, _DOT)
    if "°" in cur or " ." in cur:
        cur = _GEO_FILE.sub(_DOT, cur)
    if " ." in cur:
        for rule, replacement in _ELLIPSIS_RULES[:2]:
            cur = rule.sub(replacement, cur)
    if "..." in cur:
        # (the first two need a capital after the ellipsis: on a run of periods each is tried at every one)
        for rule, replacement in _ELLIPSIS_RULES[2:] if _CAPITAL_HINT.search(cur) else _ELLIPSIS_RULES[4:]:
            cur = rule.sub(replacement, cur)
    # pysbd reads a piece that holds no terminator by now as one sentence, quotes and brackets
    # too; its brackets and quotes are swapped out so the reading below does the same
    if _QUOTE_OR_OPENER.search(cur):
        cur = _idle_no_mark_line_openers(cur)
    if _BANG_HINT.search(cur):  # (a word without "!" holds no terminator: protecting it changes nothing)
        cur = _patterns()["exclamation_words"].sub(_protect_match, cur)
    if "'" in cur:
        cur = _single_quotes(cur)
    cur = _protect_between(cur)
    if _DOUBLE_PUNCT.search(cur):
        cur = _double_marks(cur)
    for rule, replacement in _MID_SENTENCE:
        cur = rule.sub(replacement, cur)
    return text, cur


def _protect_between(text: str) -> str:
    """pysbd's between-punctuation rules: the terminators inside any of their spans are protected.

    The rules' spans do not depend on terminators (nor on what an earlier rule swapped: only the
    single-quote rule, which runs first, reads a quote another rule swaps), so the rules run one
    after another as in pysbd. Each splits the text at its spans (the spans are the odd parts of
    the split: a span holds no line break, so they are protected all at once joined by one), with
    no Python per span."""
    if not _ANY_TERM.search(text):
        return text
    for rule, opener, closer in _BETWEEN_SPLIT:
        if closer not in text:  # (every span ends with it: a line of openers never closed skips the scan)
            continue
        parts = rule.split(text)
        if len(parts) == 1:
            continue
        if opener is None:
            parts[1::2] = _protect("\n".join(parts[1::2])).split("\n")
        else:  # [text, span's rest or None, run's rest or None, text, ...]: the spans protected
            spans = parts[1::3]  # (a span's rest ends with the closer: never empty)
            protected = iter(_protect("\n".join(filter(None, spans))).split("\n"))
            parts[1::3] = [opener + next(protected) if span is not None else "" for span in spans]
            parts[2::3] = [opener + run if run is not None else "" for run in parts[2::3]]
        text = "".join(parts)
    return text


def _double_marks(text: str) -> str:
    """"?!", "!?", "??", "!!" (in that order, as pysbd) become one protected mark and one that ends
    a sentence; pysbd skips this in a piece that starts with one."""
    new = text
    for pair in _PAIRS:
        if pair in new:
            new = new.replace(pair, _PAIR_START[pair[0]] + _PAIR_END[pair[1]])
    starts = [m.start() + 1 for m in _LINE_STARTS_DOUBLE.finditer(text)]
    if _TEXT_STARTS_DOUBLE.match(text):
        starts.insert(0, 0)
    kept = []
    for start in starts:  # those lines keep their marks (same length)
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        kept.append((start, end, text[start:end]))
    return _splice(new, kept)


def _with_breaks(text: str, breaks: set[int]) -> str:
    """``text`` with a line break inserted before each offset in ``breaks``."""
    return _splice(text, [(i, i, "\n") for i in sorted(breaks)])


def _single_quotes(text: str) -> str:
    """Between single quotes after a space, unless the line has a word with a leading apostrophe and
    no quote before a space (pysbd's test, made per line). The spans are found on the whole text
    (none crosses a line) and each line holding one is tested once."""
    edits, line_end, keep = [], -1, False
    for m in _SINGLE_QUOTED_ANY_LINE.finditer(text):
        start, end = m.span()
        if start > line_end:  # the first span of a line: test the line
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end]
            # pysbd runs this test on the piece with the mark it appends when no terminator ends it
            probe = line if line[-1] in _TERMS else line + "\u0238"
            keep = not (_LEADING_APOSTROPHE_WORD.search(probe) and not _QUOTE_THEN_SPACE.search(probe))
        if keep:
            edits.append((start, end, _protect(text[start:end])))
    return _splice(text, edits)


_BLANK_LINES = re.compile(r"\n\n+")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit (str.isalnum)
# a whole piece (between separators) with no letter or digit, and the separator after it
# (matched from the separator before it: the text gets one in front first)
# (a class repeat, with the rare "_" unrolled: an alternation inside a repeat is slow in sre; the
# repeats possessive: the class holds no "_", so a piece is read one way only, and where a letter
# ends the run the match fails at once instead of backing off over it)
_NO_ALNUM_PIECE = re.compile(r"\x00[^\w\x00]*+(?:_[^\w\x00]*+)*+(?=\x00|\Z)")
_NO_ALNUM_PIECE_PUA = re.compile(r"\ue000[^\w\ue000]*+(?:_[^\w\ue000]*+)*+(?=\ue000|\Z)")


def _opener_candidates(lined: str, opener: str) -> list[int]:
    """Where ``opener`` stands where a sentence can start, in order, in ``lined`` (the text with a
    line break in front: the offsets are one more than in the text)."""
    return list(map(operator.sub, map(re.Match.end, _OPENER_START[opener].finditer(lined)), itertools.repeat(1)))


def _offsets(text: str, char: str) -> list[int]:
    """Where ``char`` stands in ``text``, in order (the lengths of the parts between, summed in C)."""
    parts = text.split(char)
    parts.pop()
    return list(map(operator.add, itertools.accumulate(map(len, parts)), itertools.count()))


def _settle_openers(masked: str) -> str:
    """Swap out each opening bracket that cannot start a bracketed sentence: one where the reading
    cannot start a sentence (it never tries those: as well swapped), or whose first closing bracket
    on the line is missing, too close, after a comma (quotes) or not followed by a capital, or it is
    "(iv)" before a capital (pysbd swaps those parentheses first).

    Where no closing bracket that may end one stands in the text (a line of unclosed brackets),
    every opening bracket of the kind is swapped (str.replace). Elsewhere each candidate's first
    closing bracket is found by bisection in the list of closing ones, and it is on the same line
    when as many line breaks come before both, so a line of many openers costs no rescan; every
    step runs over all the candidates of a kind at once, in C (a Python step per candidate cost
    ~1.3 µs: a line of "x. (y. " holds one every six characters); then either the idle candidates
    are swapped or, where they are more than the kept ones, every bracket of the kind is and the
    kept ones are put back (the cost follows the fewer)."""
    present = [opener for opener in _OPENING if opener in masked]
    if not present:
        return masked
    lined = "\n" + masked  # (the candidates are found on it: offsets one more than in masked)
    end = len(lined)
    breaks: list[int] | None = None
    flips: list[int] = []  # (in lined) brackets to swap, or to put back after their kind was swapped
    for opener in present:
        if _GOOD_CLOSER[opener].search(lined) is None:
            masked = masked.replace(opener, _IDLE_OPENER[opener])
            continue
        candidates = at = _opener_candidates(lined, opener)
        if not at:
            continue
        if breaks is None:
            breaks = _offsets(lined, "\n")
            breaks.append(end)  # (a closing bracket that is missing stands after it: on another line)
        closers = _offsets(lined, _OPENING[opener])
        closers.append(end + 1)
        first = list(map(closers.__getitem__, map(bisect_left, itertools.repeat(closers), at)))
        if len(breaks) > 1:  # (one line: every closing bracket found is on it, or the sentinel)
            same_line = list(map(operator.eq, map(bisect_left, itertools.repeat(breaks), at),
                                 map(bisect_left, itertools.repeat(breaks), first)))
            at, first = list(itertools.compress(at, same_line)), list(itertools.compress(first, same_line))
        kept: list[int] = []
        if at:
            fewest, no_comma, after = _OPENER_RULES[opener]
            # what follows the closing bracket and the comma before it: once per closing bracket
            # (many openers may share one)
            good = {j for j in set(first) if after.match(lined, j + 1) and not (no_comma and lined[j - 1] == ",")}
            chosen = list(map(good.__contains__, first))
            at, first = list(itertools.compress(at, chosen)), list(itertools.compress(first, chosen))
            kept = list(itertools.compress(at, map(operator.gt, map(operator.sub, first, at),
                                                   itertools.repeat(fewest))))  # j - p - 1 >= fewest
            if opener == "(" and kept:  # "(iv) A" (found in the text: a bracket before a roman letter is rare)
                roman = set(map(re.Match.start, _ROMAN_IN_PARENS.finditer(lined))).intersection(kept)
                if roman:
                    kept = list(itertools.filterfalse(roman.__contains__, kept))
        if len(candidates) - len(kept) <= len(kept):  # (the idle ones are the fewer)
            if len(candidates) > len(kept):
                flips += itertools.filterfalse(set(kept).__contains__, candidates)
        else:
            masked = masked.replace(opener, _IDLE_OPENER[opener])
            flips += kept
    if not flips:
        return masked
    # each one flipped (a bracket to its marker, a marker back to its bracket): the text between them
    # and the new characters interleaved
    flips.sort()
    flips = list(map(operator.sub, flips, itertools.repeat(1)))  # (in masked)
    parts = [""] * (2 * len(flips) + 1)
    parts[::2] = map(masked.__getitem__, map(slice, [0, *map(operator.add, flips, itertools.repeat(1))],
                                             [*flips, len(masked)]))
    parts[1::2] = map(_FLIP.__getitem__, map(masked.__getitem__, flips))
    return "".join(parts)


# a line with no letter or digit, from the line break before it (the text gets one in front)
_WORDLESS_LINE = re.compile(r"\n[^\w\n]*+(?:_[^\w\n]*+)*+(?=\n|\Z)")  # (possessive: as _NO_ALNUM_PIECE)


def _without_wordless_lines(masked: str) -> str:
    """``masked`` without its lines that hold no letter or digit, just before the reading: every piece
    read from such a line is dropped anyway (the reading never crosses a line, the quote split after
    it needs a capital, and a marker stands for a mark, no letter), and reading them cost a third of
    the time on a text of punctuation lines."""
    dropped, found = _WORDLESS_LINE.subn("", "\n" + masked)  # (one scan: a search first read a long one twice)
    return dropped[1:] if found else masked


# whitespace next to a line break, or a line end other than "\n": a text with neither is its own
# stripped lines once stripped itself
_UNSTRIPPED_LINE_END = re.compile(r"\n(?:\s|(?<=\s\n))")
_OTHER_LINE_ENDS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # (substring searches: a class scan cost 3 ms/MB)


def _stripped_lines(text: str) -> str:
    """The text's lines stripped, blank ones dropped, joined by line breaks (a stripped blank line
    leaves two line breaks together: no Python per line)."""
    text = text.strip()
    if not _UNSTRIPPED_LINE_END.search(text) and not any(map(text.__contains__, _OTHER_LINE_ENDS)):
        return text
    norm = "\n".join(map(str.strip, text.splitlines()))
    return _BLANK_LINES.sub("\n", norm) if "\n\n" in norm else norm


def split_lines_into_sentences(text: str) -> list[str]:
    """Sentences line by line (the body of :func:`ifpo.verifiers.text.split_sentences`)."""
    return _read_sentences(text, False)


def count_sentences(text: str) -> int:
    """``len(split_lines_into_sentences(text))`` without the list (a string per sentence: on 1 MB of
    short sentences, 250k strings and the garbage collector's passes over them)."""
    return _read_sentences(text, True)


def _read_sentences(text: str, count: bool) -> list[str] | int:
    """The sentences of :func:`split_lines_into_sentences`, or with ``count`` their number."""
    norm = _stripped_lines(text)
    if not norm:
        return 0 if count else []
    if ")" not in norm and not _ANY_TERM.search(norm):  # no mark and no "a)" list: a line is a sentence
        lines = [line for line in norm.split("\n") if _ALNUM.search(line)]
        return len(lines) if count else lines
    norm, masked = _masked(norm)
    masked = _settle_openers(masked)
    sep = "\x00" if "\x00" not in norm else "\ue000"
    # each piece after a separator; pieces without a letter or digit (a stray "!", "...", a run of
    # marks) are not sentences: the compiled reading drops them as it reads
    dropped = False
    if not norm.isascii() and _OWN_MARKS.search(norm):  # this module's markers in the text: take its characters
        joined = sep + sep.join(norm[a:b] for a, b in (m.span() for m in _READ.finditer(masked)))
    elif _READER is not None:
        joined, dropped = _unmask(_READER.read(masked, sep, True)), True
    else:
        joined = sep + _unmask(sep.join(_READ.findall(_without_wordless_lines(masked))))
    # 'He said "Hi." She left.': pysbd splits a sentence after such a quote once it is read
    split = False
    for quote, rule in _QUOTES_THEN_CAPITAL:
        if quote in joined:
            joined, found = rule.subn(quote + sep, joined)
            split = split or found > 0
    if split or not dropped:  # (a split may leave a piece before the quote without a letter or digit)
        joined = (_NO_ALNUM_PIECE if sep == "\x00" else _NO_ALNUM_PIECE_PUA).sub("", joined)
    return joined.count(sep) if count else joined.split(sep)[1:]
