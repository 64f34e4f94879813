r"""A fast Punkt sentence splitter whose output is NLTK's ``PunktSentenceTokenizer`` to the character.

Why it exists: the IFEval / IFBench sentence checkers split with NLTK's English Punkt model, and
NLTK's tokenizer builds a token object per word of every candidate context and runs its regular
expressions through a timeout wrapper; on short-sentence text that is about 1.8 s per MB, nine
times the checkers' budget. The sentence boundaries are part of the benchmarks' semantics, so
this module reproduces NLTK's decisions exactly rather than approximating them:

* the three regular expressions that find candidates, split context into words and realign
  closing punctuation are NLTK's own, taken at construction and run on the stdlib ``re`` engine
  (about 3x faster than ``regex`` here) with ``\s`` / ``\S`` spelled out as ``regex`` reads
  them, the one difference between the engines for these patterns;
* the decision for one candidate depends only on its context string (the word before the
  period, the period and what follows it up to the next whitespace-delimited token), so
  decisions are cached per context string: repeated contexts ("sentence. The") cost one dict
  lookup;
* a cache miss runs a lean re-implementation of the first and second annotation passes on the
  context's words (plain strings, no token objects), from per-word facts that are cached too;
* text without a candidate, and sentences after breaks that start with no closing quote or
  bracket, skip work that cannot change the result.

``tests/test_text.py`` compares every output and span with NLTK's on hand-picked and seeded
random texts.
"""

from __future__ import annotations

import codecs
import os
import re
from bisect import bisect_left
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from ifpo.verifiers._native import compiled_module

# Orthographic context flags of the Punkt model (bit values as NLTK stores them).
_BEG_UC, _MID_UC, _UNK_UC = 1 << 1, 1 << 2, 1 << 3
_BEG_LC, _MID_LC, _UNK_LC = 1 << 4, 1 << 5, 1 << 6
_UC = _BEG_UC | _MID_UC | _UNK_UC
_LC = _BEG_LC | _MID_LC | _UNK_LC

_UNKNOWN = "unknown"
# Tokens that never start a sentence in the orthographic heuristic (exact matches only).
_PUNCTUATION = frozenset(";:,.!?")
# Whitespace as NLTK's search for the word before a candidate knows it (ASCII only, unlike \s).
_ASCII_WS = " \t\n\r\x0b\x0c"

# The usual context, "word. Next": letters or digits, a period, whitespace, letters or digits, and a
# period after those when the next sentence is one word ("p1.\n\np2."). NLTK's word pattern makes
# exactly these two words of it ([^\W_] is str.isalnum(): no character NLTK's pattern treats specially,
# and none that either engine calls whitespace; a single "." ends no word before the end of the text).
_SIMPLE_CONTEXT = re.compile(r"([^\W_]+\.)[ \t\r\n]+([^\W_]+\.?)")

# The last ASCII whitespace of a stretch (greedy, then back to it): match(text, start, end).
_LAST_ASCII_SPACE = re.compile(r"[\s\S]*[\x20\t\n\r\x0b\x0c]")

# In a run of plain sentences (_plain_lane): the whitespace after a sentence's final period (every
# period followed by whitespace there ends a sentence).
_AFTER_PERIOD = re.compile(r"(?<=\.)([ \t\r\n]+)")

# Every ASCII digit as 0: the digit shape of a context or a type.
_ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_HAS_DIGIT = re.compile(r"[0-9]").search

# _before_facts of ASCII digits and a period: a first-pass break, no abbreviation, NLTK's number type,
# no initial (tests/test_text.py checks it against _before_facts).
_NUMBER_FACTS = (True, False, "##number##", False)

_CACHE_LIMIT = 100_000  # entries per cache before it is emptied (bounds memory on huge varied inputs)
_CACHE_KEY_MAX = 120  # longer contexts are decided without caching


def _plain_lane(non_word: str, closers: frozenset[str]) -> re.Pattern[str]:
    r"""The pattern of a run of *plain sentences*, whose breaks need no per-candidate work.

    A plain sentence starts at a sentence start that follows a break and whitespace, holds no
    candidate before its end, and ends in ``word.``: a word right after ASCII whitespace, of a letter
    and one or more ``[^\W_]`` characters or single hyphens between them, then ``[ \t\r\n]+`` and a
    next token that starts with neither whitespace nor a closing character. NLTK splits the
    candidate's context so that the word is one of its words, followed by at least one more; a word
    of two or more characters and one period that starts with a letter and none of whose hyphenated
    parts is an abbreviation (:meth:`FastPunkt._lane` looks for those) is a break whatever follows
    it; the next candidate finds whitespace after this one (it stands, nothing overlaps); and the
    next sentence starts with no closing character (nothing to realign). Group 1: the last
    sentence's word.
    """
    ws, ascii_ws = REGEX_WHITESPACE, r"\x20\t\n\r\x0b\x0c"
    # A stretch without ASCII whitespace and without a candidate: . ? ! only where neither one of
    # NLTK's non-word characters nor whitespace and a token follows (the candidate pattern's lookahead).
    # Possessive: the body below stops at the first stretch holding a candidate, which must then be the
    # sentence's word and period. (Possessive repeats, no alternation per character: this runs once
    # per sentence of the run.)
    stretch = rf"[^.?!{ascii_ws}]*+(?:[.?!](?!{non_word}|[{ws}]+[^{ws}])[^.?!{ascii_ws}]*+)*+"
    body = rf"(?:{stretch}[{ascii_ws}]++)*+"
    opening = "".join(re.escape(c) for c in sorted(closers))
    end = (rf"(?<=[{ascii_ws}])([^\W\d_](?!\.)[^\W_]*+(?:-[^\W_]++)*+)\."
           rf"(?=[ \t\r\n]+[^{ws}{opening}])[ \t\r\n]++")
    return re.compile(rf"(?:{body}{end})+")


def _compiled_scan() -> Any:
    """The compiled candidate loop's module, or None where it is not built (a source checkout without
    an install, no C compiler at install) or built from another version of its interface (the
    environment's IFPO_PUNKT_PURE is read by FastPunkt)."""
    return compiled_module("_punkt_scan", _SCAN_INTERFACE)


_SCAN_INTERFACE = 3  # the Scanner arguments and results this module passes and reads


def _exact_str(text: str) -> str:
    """``text`` as an exact ``str`` (the compiled loop takes no subclass, such as ``numpy.str_``)."""
    return text if type(text) is str else str.__str__(text)


def _regex_whitespace_chars() -> str:
    """Every character of :data:`REGEX_WHITESPACE` (all below U+3001)."""
    return "".join(re.findall(f"[{REGEX_WHITESPACE}]", "".join(map(chr, range(0x3001)))))


def _compiled(pattern: Any) -> Any:
    """The engine's compiled pattern behind NLTK's timeout wrapper (or the pattern itself)."""
    return getattr(pattern, "_rx", pattern)


# What the ``regex`` engine's ``\s`` matches (Unicode White_Space), written out for the stdlib ``re``,
# whose ``\s`` also takes U+001C..U+001F. tests/test_text.py checks this against every code point.
REGEX_WHITESPACE = r"\t\n\x0b\x0c\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# NLTK's realignment pattern as the compiled loop matches it: its closing characters (a plain class,
# the one _first_class reads), lazily, then whitespace, "--" or the end.
_REALIGN_SHAPE = re.compile(r"\[(?:\\.|[^\]\\])*\]\+\?\(\?:\[" + re.escape(REGEX_WHITESPACE) + r"\]\+\|\(\?=--\)\|\$\)")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Escapes whose meaning differs between the two engines (besides \s and \S, translated).
_ENGINE_DEPENDENT = set("wWdDbBAZ0123456789pPNXGKLVM")


def _first_class(pattern: Any) -> frozenset[str] | None:
    """The characters (or a superset) of the class a pattern starts with; None if it starts otherwise.

    NLTK's realignment pattern starts with its closing quotes and brackets: a sentence that starts
    with none of them is never realigned, so the realignment pass can be skipped. (Also NLTK's
    non-word characters, a class in a group: ``(?:[...])``, for the compiled loop.)
    """
    source = pattern if isinstance(pattern, str) else pattern.pattern
    if source.startswith("(?:[") and source.endswith("])"):
        source = source[3:-1]
    m = re.match(r"\[((?:\\.|[^\]\\])*)\]", source)
    if m is None or m.group(1).startswith("^") or "-" in m.group(1):
        return None  # not a plain class (negated, a range, ...): no shortcut
    body = m.group(1)
    if "\\\\" in body:
        return None  # an escaped backslash: no shortcut rather than a subtle misreading
    # An escaped punctuation mark is the mark itself; the rest (\uXXXX, \xXX) decodes as in Python.
    body = re.sub(r"\\([^0-9A-Za-z])", r"\1", body)
    try:
        return frozenset(codecs.decode(body, "unicode_escape"))
    except (UnicodeError, ValueError):
        return None


def _stdlib_twin(pattern: Any) -> Any:
    r"""The same pattern on the stdlib ``re`` engine (about 3x faster here), or ``pattern`` itself.

    Only ``\s`` / ``\S`` mean something else in ``re``; they are replaced by the ``regex``
    engine's whitespace class. A pattern using any other engine-dependent escape is kept as is.
    """
    if isinstance(pattern, re.Pattern):
        return pattern  # already the stdlib engine (an NLTK without its regex backstop)
    source = pattern.pattern
    unsafe = False

    def swap(m: re.Match[str]) -> str:
        nonlocal unsafe
        c = m.group(1)
        if c == "s":
            return f"[{REGEX_WHITESPACE}]"
        if c == "S":
            return f"[^{REGEX_WHITESPACE}]"
        unsafe = unsafe or c in _ENGINE_DEPENDENT
        return m.group(0)

    translated = _ESCAPE.sub(swap, source)
    if unsafe or not isinstance(source, str):
        return pattern
    try:
        return re.compile(translated, re.UNICODE | (re.VERBOSE if pattern.flags & re.VERBOSE else 0))
    except re.error:
        return pattern


class FastPunkt:
    """Punkt sentence splitting with NLTK's algorithm on a fixed parameter set.

    ``params`` is anything with NLTK ``PunktParameters``' four attributes (``abbrev_types``,
    ``collocations``, ``sent_starters``, ``ortho_context``); ``lang_vars`` an NLTK
    ``PunktLanguageVars`` (default: NLTK's, i.e. English-style punctuation). ``compiled``: run the
    candidate loop compiled (``verifiers/_punkt_scan.pyx``, built at install where a C compiler is
    found) or in Python; None (the default): compiled when built, unless the environment sets
    ``IFPO_PUNKT_PURE=1``. Both give NLTK's sentences (tests/test_text.py runs both).
    """

    def __init__(self, params: Any, lang_vars: Any = None, compiled: bool | None = None) -> None:
        from nltk.tokenize.punkt import PunktLanguageVars, PunktToken

        if lang_vars is None:
            lang_vars = PunktLanguageVars()
        if tuple(lang_vars.sent_end_chars) != (".", "?", "!"):
            # The fast path hard-codes the default end characters; other languages use NLTK.
            raise ValueError(f"FastPunkt supports the sentence end characters . ? ! only, got "
                             f"{lang_vars.sent_end_chars!r}")
        self._candidates = _stdlib_twin(_compiled(lang_vars.period_context_re()))
        self._words = _stdlib_twin(_compiled(lang_vars._word_tokenizer_re()))
        self._realign = _stdlib_twin(_compiled(lang_vars.re_boundary_realignment))
        self._closers = _first_class(self._realign)
        # Why a ? or ! candidate always breaks, with NLTK's own language variables: the candidate pattern
        # finds it followed by whitespace or by one of the word pattern's non-word characters, so the
        # word pattern makes it a word of its own (a word ends before a non-word character, and one
        # starting at it ends right after it), and the whitespace or character after it gives at least
        # one more word: text_contains_sentbreak finds "?" / "!" before the last word. (Tested on every
        # such context of random texts, besides the comparisons with NLTK.) Other language variables
        # (other word pattern) are decided in full.
        self._bang_breaks = type(lang_vars) is PunktLanguageVars
        # The last candidate of a stretch without ASCII whitespace, matched from a candidate in it.
        self._last_in_chunk = None
        if isinstance(self._candidates, re.Pattern):
            self._last_in_chunk = re.compile(
                r"[^\x20\t\n\r\x0b\x0c]*(?:" + self._candidates.pattern + "\n)", self._candidates.flags).match
        self._numeric = _compiled(PunktToken._RE_NUMERIC)
        self._initial = _compiled(PunktToken._RE_INITIAL)
        if self._candidates.groupindex != {"after_tok": 1, "next_tok": 2}:
            raise ValueError("FastPunkt: NLTK's candidate pattern changed its groups; use NLTK's tokenizer")
        self._abbrevs = frozenset(params.abbrev_types)
        self._collocations = frozenset(params.collocations)
        self._collocation_firsts = frozenset(first for first, _ in self._collocations)
        self._starters = frozenset(params.sent_starters)
        self._ortho: Mapping[str, int] = dict(params.ortho_context)
        # Runs of plain sentences (_plain_lane): only words of two or more [^\W_] characters end one.
        self._lane_run = None
        self._run_special: Any = None
        # A context in which none of these is found splits into NLTK's words at whitespace (str.split,
        # whose whitespace is the pattern's but for U+001C..U+001F, found here): one of the word pattern's
        # end characters (its non-word characters), a comma, a multi-character mark ("--", "..", ". . .")
        # or a character a word cannot start with at the start of a stretch. Each stretch is then one word
        # (its first character starts one, and nothing before its end ends it). Default language
        # variables only (their word pattern is this one).
        self._split_words = None
        if self._bang_breaks and isinstance(self._candidates, re.Pattern) and self._closers is not None:
            # (a word's last hyphenated part is looked up among the abbreviations; a whole word of two or
            # more characters among the collocation starts too, which are single letters)
            specials = [w for w in self._abbrevs | self._collocation_firsts if re.fullmatch(r"[^\W_]+", w)]
            self._lane_run = _plain_lane(lang_vars._re_non_word_chars, self._closers)
            # A run's sentence-final word whose last hyphenated part is one of them, in any case ((?i)
            # matches every character whose lower case is the letter, and a few more, which only ends a
            # run early), searched for on the run reversed: from its period (a literal the engine scans
            # for in C, once per sentence), the part read backwards up to a hyphen or ASCII whitespace.
            self._run_special = re.compile(
                rf"\.(?<=[ \t\r\n]\.)(?i:{_trie([w[::-1] for w in specials])})(?=[-\x20\t\n\r\x0b\x0c])").finditer
            ws = REGEX_WHITESPACE
            self._split_words = re.compile(
                rf"{lang_vars._re_non_word_chars}|[,\x1c-\x1f]|--|\.\.|\.[{ws}]+\.[{ws}]+\.|(?:^|(?<=[{ws}]))[`&#\-]"
            ).search
        # The model's types (of any table) holding an ASCII digit, in digit shape (every digit as 0).
        self._digit_types = frozenset(
            t.encode().translate(_ZERO_DIGITS).decode() for t in [*self._abbrevs, *self._starters, *self._ortho,
                                                                 *(w for pair in self._collocations for w in pair)]
            if t.isascii() and _HAS_DIGIT(t))
        self._shapes: dict[str, bool] = {}  # decision per digit shape of a context (see _decide)
        # Caches: decision per candidate context; facts per word before / after a candidate.
        self._decisions: dict[str, bool] = {}
        self._before: dict[str, tuple[bool, bool, str, bool]] = {}
        self._after: dict[str, tuple[str, bool, bool | str, bool, bool]] = {}
        # The compiled candidate loop (verifiers/_punkt_scan.pyx), for NLTK's own language variables
        # (the candidate pattern it reads the characters for), when built and not turned off.
        self._scanner: Any = None
        if compiled is None:
            compiled = os.environ.get("IFPO_PUNKT_PURE", "") in ("", "0")
        non_word = getattr(lang_vars, "_re_non_word_chars", "")
        if (compiled and self._lane_run is not None
                and lang_vars._period_context_fmt == PunktLanguageVars._period_context_fmt
                and re.fullmatch(r"\(\?:\[(?:\\.|[^\]\\])*\]\)", non_word)
                and (non_word_chars := _first_class(non_word)) is not None
                and _REALIGN_SHAPE.fullmatch(self._realign.pattern)):
            scan = _compiled_scan()
            if scan is not None:
                known = frozenset(self._ortho) | self._starters | {second for _, second in self._collocations}
                self._scanner = scan.Scanner(
                    _regex_whitespace_chars(), "".join(sorted(non_word_chars)), "".join(sorted(self._closers)),
                    self._decisions, self._decide, self._period_break, self._abbrevs, self._collocation_firsts,
                    known, _CACHE_LIMIT)

    # -- public API -------------------------------------------------------------------------

    @property
    def compiled(self) -> bool:
        """Whether the compiled candidate loop runs (see the constructor)."""
        return self._scanner is not None

    def clear_caches(self) -> None:
        """Forget every cached decision and per-word fact (they are keyed by the texts seen)."""
        for cache in (self._decisions, self._shapes, self._before, self._after):
            cache.clear()
        if self._scanner is not None:
            self._scanner.clear()

    def tokenize(self, text: str, realign_boundaries: bool = True) -> list[str]:
        """The sentences of ``text`` (``PunktSentenceTokenizer.tokenize``)."""
        if "." not in text and "?" not in text and "!" not in text:
            # No candidate: one sentence up to the trailing whitespace (none if that is all).
            end = len(text.rstrip())
            return [text[:end]] if end or not realign_boundaries else []
        if self._scanner is not None and realign_boundaries:
            out = self._scanner.slices(_exact_str(text), True, 1)
            if out is None:
                end = len(text.rstrip())
                return [text[:end]] if end else []
            return out
        slices, closer_after_break = self._slices(text, realign=realign_boundaries)
        if not realign_boundaries or closer_after_break:
            return [text[a:b] for a, b in self._finished(text, slices, realign_boundaries, closer_after_break)]
        # Realigned: the sentences are the slices' texts, a run's taken as the run split them.
        out: list[str] = []
        for piece in slices[:-1]:
            if type(piece) is tuple:
                out.append(text[piece[0] : piece[1]])
            else:
                out += piece.sentences
        a, b = slices[-1]
        if a < b:
            out.append(text[a:b])
        return out

    def count(self, text: str) -> int:
        """``len(self.tokenize(text))``; a text without a candidate (a ``[.?!]`` followed by whitespace
        and a word, or by one of NLTK's non-word characters) is one sentence up to its trailing
        whitespace, or none, without the call chain (a checker that splits line by line calls this
        for every line)."""
        if self._scanner is not None:
            n = self._scanner.slices(_exact_str(text), True, 2)
            return n if n is not None else (1 if text.rstrip() else 0)
        first = self._candidates.search(text)
        if first is None:
            return 1 if text.rstrip() else 0  # _slices' one slice, kept by span_tokenize when not empty
        if self._closers is not None and self._candidates.search(text, first.start() + 1) is None:
            return self._count_one(text, first)
        slices, closer_after_break = self._slices(text, first)
        if closer_after_break:
            return len(self._finished(text, slices, True, True))
        a, b = slices[-1]
        return sum(1 if type(piece) is tuple else len(piece.starts) for piece in slices[:-1]) + (a < b)

    def _count_one(self, text: str, m: re.Match[str]) -> int:
        """:meth:`count` of a text with one candidate ``m``: one sentence, or two when it breaks and
        something is left after it once closing characters have moved back (what :meth:`_slices`,
        realignment and the drop of an empty last slice make of it)."""
        s = m.start()
        if not (self._bang_breaks and text[s] != "."):
            w = _LAST_ASCII_SPACE.match(text, 0, s)
            ctx = text[w.end() if w is not None and w.end() > 1 else 0 : m.end(1)]
            d = self._decisions.get(ctx)
            if not (self._decide(ctx) if d is None else d):
                return 1
        end = len(text.rstrip())
        after = m.start(2)
        if after < 0:
            after = s + 1
        if after < end and text[after] in self._closers:
            after = self._closers_back(text, after, s + 1, end)[1]
        return 2 if after < end else 1

    def span_tokenize(self, text: str, realign_boundaries: bool = True) -> list[tuple[int, int]]:
        """``(start, end)`` offsets of the sentences (``PunktSentenceTokenizer.span_tokenize``)."""
        if "." not in text and "?" not in text and "!" not in text:
            end = len(text.rstrip())
            return [(0, end)] if end or not realign_boundaries else []
        slices, closer_after_break = self._slices(text, realign=realign_boundaries)
        return self._finished(text, slices, realign_boundaries, closer_after_break)

    def _finished(self, text: str, slices: list[Any], realign_boundaries: bool,
                  closer_after_break: bool) -> list[tuple[int, int]]:
        """The sentence spans from :meth:`_slices`' slices (its runs spelled out as spans)."""
        if any(type(piece) is _Run for piece in slices):
            flat: list[tuple[int, int]] = []
            for piece in slices:
                if type(piece) is tuple:
                    flat.append(piece)
                else:
                    flat += zip(piece.starts, piece.ends)
            slices = flat
        if not realign_boundaries:
            return slices  # NLTK keeps an empty last slice here
        if closer_after_break:
            return self._realigned(text, slices)
        # Realigned as the breaks were made: only the last slice can be empty (every other one ends
        # at its candidate, after its start).
        a, b = slices[-1]
        if not a < b:
            slices.pop()
        return slices

    # -- candidates and their contexts -------------------------------------------------------

    def _slices(self, text: str, first: re.Match[str] | None = None,
                realign: bool = True) -> tuple[list[Any], bool]:
        """Sentence slices (NLTK's ``_slices_from_text``: ``(start, end)``, or a :class:`_Run` of them;
        the last one a tuple, which may be empty), and whether realignment is still to be done.

        ``realign``: closing quotes and brackets after a break are moved into the sentence they close
        as each break is made (NLTK's ``_realign_boundaries``, which runs over every slice after
        them): only a slice that starts with a closing character can move, the match never reaches
        past the next candidate (which is neither a closing character nor whitespace nor "-"), so it
        needs no end at the slice's, and a slice that ends at a candidate stays non-empty; for
        language variables whose closing characters are not known, the second flag says the slices
        are raw and :meth:`_realigned` is to run. ``first``: the text's first candidate, if known."""
        if self._scanner is not None:
            out = self._scanner.slices(_exact_str(text), realign, 0)
            return (out if out is not None else [(0, len(text.rstrip()))]), False
        out: list[Any] = []
        last_break = 0
        closer_after_break = False
        closers = self._closers
        closers_back = self._closers_back
        # The last break followed by a closing character: its slice's index, end and the break (see the end).
        moved_at = moved_end = moved_break = -1
        decisions = self._decisions
        decide = self._decide
        rfind = text.rfind
        prev_m = first or self._candidates.search(text)
        if prev_m is None:
            return [(0, len(text.rstrip()))], False
        # The word before a candidate starts after the last ASCII whitespace since the previous
        # candidate. Whitespace right at the previous candidate (index 0 of that stretch) counts as
        # none: NLTK then extends the previous candidate's word, and drops that candidate.
        prev_stop = prev_m.start()
        w = _LAST_ASCII_SPACE.match(text, 0, prev_stop)
        prev_start = w.end() if w is not None and w.end() > 1 else 0
        bang_breaks = self._bang_breaks
        pos = prev_stop + 1
        if self._candidates.search(text, pos) is None:
            pos = -1  # one candidate (a line, a short answer): straight to its decision below
        else:
            # Whitespace kinds present in the text (most texts: " " and "\n"): one or two kinds are
            # searched for with rfind, more with one backwards-greedy pattern.
            spaces = [c for c in _ASCII_WS if c in text]
            sp1 = spaces[0] if spaces else " "
            sp2 = spaces[1] if len(spaces) == 2 else None
            last_space = _LAST_ASCII_SPACE.match if len(spaces) > 2 else None
            last_in_chunk = self._last_in_chunk
            lane_run = self._lane_run
            lane_wait = lane_fails = 0
            lane_cache: list[Any] = []  # the last run of plain sentences matched (see _lane)
        while pos >= 0:
            jump = -1
            for m in self._candidates.finditer(text, pos):
                s = m.start()
                if last_space is None:
                    i = rfind(sp1, prev_stop, s)
                    if sp2 is not None:
                        j = rfind(sp2, prev_stop, s)
                        if j > i:
                            i = j
                else:
                    w = last_space(text, prev_stop, s)
                    i = w.end() - 1 if w is not None else -1
                if i > prev_stop:
                    start = i + 1
                else:
                    start = prev_start
                    if prev_stop > start:
                        # Overlapping words: the previous candidate is dropped, and so is every later
                        # one up to the last of this stretch without ASCII whitespace. Jump to it.
                        if last_in_chunk is not None:
                            last = last_in_chunk(text, s)
                            prev_m = last
                            prev_stop = last.end() - 1
                            if prev_stop != s:
                                jump = prev_stop + 1
                                break
                        else:
                            prev_m = m
                            prev_stop = s
                        continue
                # The previous candidate stands: decide it (a ? or ! always breaks: see _bang_breaks).
                if bang_breaks and text[prev_stop] != ".":
                    d = True
                else:
                    ctx = text[prev_start : prev_m.end(1)]
                    d = decisions.get(ctx)
                    if d is None:
                        d = decide(ctx)
                if d:
                    a = last_break
                    b = prev_stop + 1
                    last_break = prev_m.start(2)
                    if last_break < 0:
                        last_break = b
                    if closers is not None and text[last_break] in closers:
                        if realign:
                            moved_at, moved_end, moved_break = len(out), b, last_break
                            b, last_break = closers_back(text, last_break, b)
                        out.append((a, b))
                    else:
                        out.append((a, b))
                        if closers is None:
                            closer_after_break = True
                        elif lane_run is not None:
                            if lane_wait:
                                lane_wait -= 1
                            else:
                                # A run of plain sentences from this break on: its breaks in bulk, and its
                                # last candidate left pending, as this loop leaves each candidate.
                                lane = self._lane(text, last_break, s, out, lane_cache)
                                if lane:
                                    lane_fails = 0
                                    last_break, prev_m, prev_start, prev_stop = lane
                                    jump = prev_stop + 1
                                    break
                                if lane is None:
                                    lane_fails += 1
                                    lane_wait = min(2**lane_fails, 64)  # back off where runs are rare
                prev_m = m
                prev_start = start
                prev_stop = s
            pos = jump
        # The last candidate, decided as in the loop above (inline there: a call per candidate is the hot path).
        if bang_breaks and text[prev_stop] != ".":
            d = True
        else:
            ctx = text[prev_start : prev_m.end(1)]
            d = decisions.get(ctx)
            if d is None:
                d = decide(ctx)
        if d:
            a = last_break
            b = prev_stop + 1
            last_break = prev_m.start(2)
            if last_break < 0:
                last_break = b
            if closers is None:
                closer_after_break = True
            elif realign and text[last_break] in closers:
                moved_at, moved_end, moved_break = len(out), b, last_break
                b, last_break = closers_back(text, last_break, b)
            out.append((a, b))
        return self._last_slice(text, out, last_break, moved_at, moved_end, moved_break), closer_after_break

    def _last_slice(self, text: str, out: list[Any], last_break: int, moved_at: int, moved_end: int,
                    moved_break: int) -> list[Any]:
        """``out`` with the last slice appended (from ``last_break`` to the text's end without trailing
        whitespace), after the last break's realignment is redone where it is that slice's start
        (``moved_*``: the index, end and break of the last slice whose break was followed by a closing
        character, -1 if none)."""
        end = len(text.rstrip())
        if moved_at >= 0 and moved_at == len(out) - 1:
            # The last break was followed by a closing character, matched with the whole text as the
            # string; NLTK matches the last slice up to its end, the text's without its trailing
            # whitespace (which counts U+001C..U+001F, unlike the pattern's): matched again so.
            b, last_break = (self._closers_back(text, moved_break, moved_end, end) if moved_break < end
                             else (moved_end, moved_break))
            out[-1] = (out[-1][0], b)
        out.append((last_break, end))
        return out

    def _closers_back(self, text: str, at: int, end: int, stop: int | None = None) -> tuple[int, int]:
        """NLTK's realignment of the slice starting at ``at`` (after a break whose slice ends at
        ``end``): the closing characters there move back into that slice. Returns (the slice's new
        end, the next slice's start), unchanged when nothing moves. ``stop``: the string's end for the
        match (the last slice's end; the whole text otherwise, see :meth:`_slices`)."""
        moved = self._realign.match(text, at) if stop is None else self._realign.match(text, at, stop)
        if moved is None:
            return end, at
        return at + len(moved.group(0).rstrip()), moved.end()

    def _lane(self, text: str, q: int, first: int, out: list[Any],
              cache: list[Any]) -> tuple[int, Any, int, int] | bool | None:
        """Breaks of the run of plain sentences (:func:`_plain_lane`) starting at sentence start ``q``,
        whose first candidate ``first`` the caller holds pending: appends the breaks before the run's
        last candidate, or before its first sentence that ends in an abbreviation, to ``out`` (as one
        :class:`_Run`) and returns the new state, (sentence start, pending candidate's match, its
        word's start, its index); None when no run starts there (or only its last sentence is
        left), False when its first sentence ends in an abbreviation (more of the run follows).

        Why in bulk: on text of short plain sentences a candidate costs the loop about a microsecond;
        here each sentence costs the run pattern's repetition and a few C-level list operations.
        A run is matched and split once: ``cache`` (the caller's, one per text) keeps it, so a later
        call from a sentence start inside it, after an abbreviation stopped it, continues there.
        """
        if cache and cache[0] <= q < cache[1]:
            _, run_end, starts, ends, sentences, specials, last_start = cache
            k0 = bisect_left(starts, q)
            if k0 == len(starts) or starts[k0] != q:
                cache.clear()  # not a sentence start of the run (cannot happen; matched afresh)
                return self._lane(text, q, first, out, cache)
        else:
            run = self._lane_run.match(text, q)
            if run is None or run.end(1) == first:
                return None
            run_end = run.end()
            # Inside the run every period followed by whitespace is a sentence's end (a candidate, and
            # the run holds no other kind): sentences and separators alternate, the last piece empty.
            pieces = _AFTER_PERIOD.split(text[q:run_end])
            offsets = list(accumulate(map(len, pieces), initial=q))
            starts, ends, sentences = offsets[0:-2:2], offsets[1:-1:2], pieces[0:-1:2]
            # (reversed from the run's end: the period at reversed offset r is at run_end - 1 - r)
            specials = sorted(bisect_left(ends, run_end - m.start())
                              for m in self._run_special(text[run_end - 1 : q - 2 if q > 1 else None : -1]))
            last_start = run.start(1)
            cache[:] = [q, run_end, starts, ends, sentences, specials, last_start]
            k0 = 0
        # The pending sentence: the first from k0 on that ends in an abbreviation, else the run's last.
        k = bisect_left(specials, k0)
        k = specials[k] if k < len(specials) else len(starts) - 1
        if k == k0:
            return False if k < len(starts) - 1 else None  # an abbreviation first: the run goes on after it
        out.append(_Run(starts[k0:k], ends[k0:k], sentences[k0:k]))
        stop = ends[k] - 1
        if k == len(starts) - 1:
            start = last_start
        else:  # the word starts after the sentence's last ASCII whitespace (or at the sentence's start)
            w = _LAST_ASCII_SPACE.match(text, starts[k], stop)
            start = w.end() if w is not None else starts[k]
        return starts[k], self._candidates.match(text, stop), start, stop

    def _realigned(self, text: str, slices: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Move closing quotes and brackets after a break into the sentence they close (NLTK's loop,
        for language variables whose closing characters are not known)."""
        out: list[tuple[int, int]] = []
        n = len(text)
        realign = 0
        match = self._realign.match
        last = len(slices) - 1
        for k, (a, b) in enumerate(slices):
            a += realign
            if k == last:
                if a < b and a < n:
                    out.append((a, b))
                break
            a2, b2 = slices[k + 1]
            m = match(text, a2, b2) if a2 < b2 else None
            if m is not None:
                out.append((a, a2 + len(m.group(0).rstrip())))
                realign = m.end() - a2
            else:
                realign = 0
                if a < b and a < n:
                    out.append((a, b))
        return out

    # -- the decision for one context --------------------------------------------------------

    def _decide(self, ctx: str) -> bool:
        """Whether ``ctx`` holds a sentence break before its last word (``text_contains_sentbreak``).

        Only a word that is "?" or "!" or ends in "." can be a break; one that ends in "." is
        decided by :meth:`_period_break` with the word after it.
        """
        # A context that differs from one decided before only in its ASCII digits is decided the same
        # way when each word holding a digit is a number or of a type the model knows in no digit
        # spelling (the digits only reach the decision through those lookups): decisions are also
        # kept per digit shape, where that holds ("u.v. (12.)" and "u.v. (19.)" are one shape).
        simple = _SIMPLE_CONTEXT.fullmatch(ctx)
        if simple is not None and self._plain_break(simple.group(1)):
            self._keep(ctx, True)
            return True  # (cheaper than its digit shape)
        shape = ctx.encode().translate(_ZERO_DIGITS).decode() if ctx.isascii() else ""
        if "0" not in shape:
            shape = ""
        elif (found := self._shapes.get(shape)) is not None:
            return found  # (not kept per context: such contexts seldom repeat, and this is as fast)
        if simple is not None:
            words = [simple.group(1), simple.group(2)]
            found = self._period_break(words[0], words[1])
        elif len(ctx) > _CACHE_KEY_MAX:
            return self._decide_long(ctx)
        else:
            if self._split_words is not None and self._split_words(ctx) is None:
                words = ctx.split()  # each whitespace-delimited chunk is one of NLTK's words (_split_words)
            elif "\n" in ctx:
                words = []
                for line in ctx.split("\n"):
                    if line.strip():
                        words.extend(self._words.findall(line))
            else:
                words = self._words.findall(ctx) if ctx.strip() else []
            found = False
            for i in range(len(words) - 1):
                tok = words[i]
                if tok[-1] == ".":
                    if self._period_break(tok, words[i + 1]):
                        found = True
                        break
                elif tok == "?" or tok == "!":
                    found = True
                    break
        self._keep(ctx, found)
        if shape and len(shape) <= _CACHE_KEY_MAX and all(self._digit_free(w) for w in words if _HAS_DIGIT(w)):
            if len(self._shapes) >= _CACHE_LIMIT:
                self._shapes.clear()
            self._shapes[shape] = found
        return found

    def _keep(self, ctx: str, found: bool) -> None:
        """Cache a context's decision (a short one; the cache is emptied when full)."""
        if len(ctx) <= _CACHE_KEY_MAX:
            if len(self._decisions) >= _CACHE_LIMIT:
                self._decisions.clear()
            self._decisions[ctx] = found

    def _digit_free(self, word: str) -> bool:
        """Whether the facts of ``word`` (ASCII, holding a digit) are those of any word spelled the same
        but for its digits: it is a number, or no type the model looks up matches it in digit shape."""
        typ = self._type(word)
        if typ == "##number##":
            return True
        shape = typ.encode().translate(_ZERO_DIGITS).decode()
        return shape not in self._digit_types and shape.rstrip(".") not in self._digit_types

    def _decide_long(self, ctx: str) -> bool:
        """:meth:`_decide` for a long context (a stretch of many glued candidates); nothing cached.

        The answer is whether any adjacent word pair breaks, so: the first words one at a time
        (a break there ends it early), then each distinct pair of the rest once.
        """
        breaks = self._pair_breaks
        before = None
        lazy = 64  # words read one at a time before the rest is read in one call
        for line in ctx.split("\n"):
            if not line.strip():
                continue
            pos = 0
            if lazy:
                for m in self._words.finditer(line):
                    tok = m.group(1)
                    if before is not None and breaks(before, tok):
                        return True
                    before = tok
                    lazy -= 1
                    if not lazy:
                        pos = m.end()
                        break
                else:
                    continue  # the whole line was read word by word
            rest = self._words.findall(line, pos)
            if not rest:
                continue
            if before is not None and breaks(before, rest[0]):
                return True
            if any(breaks(a, b) for a, b in set(zip(rest, rest[1:]))):
                return True
            before = rest[-1]
        return False

    def _pair_breaks(self, tok: str, nxt: str) -> bool:
        """Whether word ``tok`` is a sentence break when ``nxt`` follows it."""
        if tok[-1] == ".":
            return self._period_break(tok, nxt)
        return tok == "?" or tok == "!"

    def _period_break(self, tok: str, nxt: str) -> bool:
        """Whether word ``tok`` (ending in ".") ends a sentence when ``nxt`` follows: NLTK's first
        pass on ``tok``, then its second pass on the pair (collocation, orthographic, frequent
        starter and initial / ordinal heuristics), from per-word facts cached by word."""
        if self._plain_break(tok):
            return True
        if tok.isascii() and tok[:-1].isdigit():
            before = _NUMBER_FACTS  # "12.": what _before_facts finds, without a cache entry per number
        else:
            before = self._before.get(tok)
            if before is None:
                before = self._before_facts(tok)
        sentbreak, abbr_or_ellipsis, typ, initial = before
        if not (abbr_or_ellipsis or initial or typ == "##number##" or typ in self._collocation_firsts):
            # None of the heuristics below applies to this word, so the next word is not read (its facts
            # cost as much as the word's own: on text of distinct short sentences, every word is new).
            return sentbreak
        after = self._after.get(nxt)
        if after is None:
            after = self._after_facts(nxt)
        next_type, upper, ortho, starter, never_lower = after
        if typ in self._collocation_firsts and (typ, next_type) in self._collocations:
            return False
        if abbr_or_ellipsis and not initial:
            if ortho is True:
                return True
            if upper and starter:
                return True
        if initial or typ == "##number##":
            if ortho is False:
                return False
            if ortho == _UNKNOWN and initial and upper and never_lower:
                return False
        return sentbreak

    def _plain_break(self, tok: str) -> bool:
        """Whether word ``tok`` (ending in ".") is a break whatever follows, from the facts below
        without caching them (on text of distinct words every word is new): two or more characters
        and one period, no abbreviation (nor its last hyphenated part), no number (NLTK's number
        pattern needs a first "-", ".", "," or digit) and no collocation start."""
        if len(tok) > 2 and tok[-2] != ".":
            low = tok[:-1].lower()
            first = low[0]
            abbrevs = self._abbrevs
            return (first not in "-.," and not first.isdigit() and low not in abbrevs
                    and low not in self._collocation_firsts and ("-" not in low or low.rsplit("-", 1)[1] not in abbrevs))
        return False

    def _type(self, tok: str) -> str:
        """The word's type: lower case, a number as ``##number##`` (NLTK's ``PunktToken.type``)."""
        head = tok[:3]
        if head.isascii() and head.isalpha():
            # A number needs a digit among its first three characters: skip the pattern for words.
            return tok.lower()
        if tok.isascii() and tok.rstrip(".").isdigit():
            return "##number##"  # ASCII digits and periods after them: NLTK's number pattern, whole
        low = tok.lower()
        first = low[:1]
        if first and first not in "-.," and not first.isdigit():
            # NLTK's number pattern starts with "-", "." / "," or a digit (\d, which str.isdigit covers).
            return low
        return self._numeric.sub("##number##", low)

    def _first_pass(self, tok: str) -> tuple[bool, bool, bool]:
        """(sentbreak, abbreviation, ellipsis) of a word from its own type alone."""
        if tok in ("?", "!", "."):
            return True, False, False
        if tok.startswith("..") and not tok.strip("."):
            return False, False, True
        if tok.endswith(".") and not tok.endswith(".."):
            low = tok[:-1].lower()
            if low in self._abbrevs or low.split("-")[-1] in self._abbrevs:
                return False, True, False
            return True, False, False
        return False, False, False

    def _before_facts(self, tok: str) -> tuple[bool, bool, str, bool]:
        """(first-pass sentbreak, abbreviation or ellipsis, type without its period, is an initial)."""
        sentbreak, abbr, ellipsis = self._first_pass(tok)
        typ = self._type(tok)
        if len(typ) > 1 and typ[-1] == ".":
            typ = typ[:-1]
        # An initial is one letter and a period (the pattern decides what counts as a letter).
        initial = len(tok) == 2 and tok[1] == "." and self._initial.match(tok) is not None
        facts = (sentbreak, abbr or ellipsis, typ, initial)
        _remember(self._before, tok, facts)
        return facts

    def _after_facts(self, tok: str) -> tuple[str, bool, bool | str, bool, bool]:
        """Of a word following a candidate: (type without a sentence period, starts upper case,
        orthographic heuristic, frequent sentence starter, never seen lower case)."""
        typ = self._type(tok)
        if len(typ) > 1 and typ[-1] == "." and self._first_pass(tok)[0]:
            typ = typ[:-1]
        context = self._ortho.get(typ, 0)
        first = tok[0]
        upper = first.isupper()
        # the orthographic heuristic (_ortho_heuristic), inline: this runs for every new word after a
        # number, an initial or an abbreviation
        if tok in _PUNCTUATION:
            ortho: bool | str = False
        elif upper and context & _LC and not context & _MID_UC:
            ortho = True
        elif first.islower() and (context & _UC or not context & _BEG_LC):
            ortho = False
        else:
            ortho = _UNKNOWN
        facts = (typ, upper, ortho, typ in self._starters, not context & _LC)
        _remember(self._after, tok, facts)
        return facts

    def _ortho_heuristic(self, tok: str, typ: str) -> bool | str:
        """True / False / "unknown": does word ``tok`` (type ``typ``) start a sentence?"""
        if tok in _PUNCTUATION:
            return False
        context = self._ortho.get(typ, 0)
        first = tok[0]
        if first.isupper() and context & _LC and not context & _MID_UC:
            return True
        if first.islower() and (context & _UC or not context & _BEG_LC):
            return False
        return _UNKNOWN


class _Run:
    """Consecutive sentences a run of plain sentences broke (FastPunkt._lane): their start and end
    offsets and their texts, kept as the lists the run's split made (no tuple per sentence)."""

    __slots__ = ("starts", "ends", "sentences")

    def __init__(self, starts: list[int], ends: list[int], sentences: list[str]) -> None:
        self.starts, self.ends, self.sentences = starts, ends, sentences


def _trie(words: list[str]) -> str:
    """A pattern matching exactly ``words`` (one alternative per distinct next character: the engine
    reads each character once instead of trying every word)."""
    tree: dict[str, dict] = {}
    for w in words:
        node = tree
        for c in w:
            node = node.setdefault(c, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(c) + emit(sub) for c, sub in sorted(node.items()) if c]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(tree)


def _remember(cache: dict, key: str, value: Any) -> None:
    """Store a per-word fact, emptying the cache first when it is full (bounded memory)."""
    if len(key) <= _CACHE_KEY_MAX:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = value
