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
import re
from collections.abc import Mapping
from typing import Any

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

_CACHE_LIMIT = 100_000  # entries per cache before it is emptied (bounds memory on huge varied inputs)
_CACHE_KEY_MAX = 120  # longer contexts are decided without caching


def _compiled(pattern: Any) -> Any:
    """The engine's compiled pattern behind NLTK's timeout wrapper (or the pattern itself)."""
    return getattr(pattern, "_rx", pattern)


# What the ``regex`` engine's ``\s`` matches (Unicode White_Space), written out for the stdlib ``re``,
# whose ``\s`` also takes U+001C..U+001F. tests/test_text.py checks this against every code point.
REGEX_WHITESPACE = r"\t\n\x0b\x0c\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Escapes whose meaning differs between the two engines (besides \s and \S, translated).
_ENGINE_DEPENDENT = set("wWdDbBAZ0123456789pPNXGKLVM")


def _first_class(pattern: Any) -> frozenset[str] | None:
    """The characters (or a superset) of the class a pattern starts with; None if it starts otherwise.

    NLTK's realignment pattern starts with its closing quotes and brackets: a sentence that starts
    with none of them is never realigned, so the realignment pass can be skipped.
    """
    m = re.match(r"\[((?:\\.|[^\]\\])*)\]", pattern.pattern)
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
    ``PunktLanguageVars`` (default: NLTK's, i.e. English-style punctuation).
    """

    def __init__(self, params: Any, lang_vars: Any = None) -> None:
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
        # Caches: decision per candidate context; facts per word before / after a candidate.
        self._decisions: dict[str, bool] = {}
        self._before: dict[str, tuple[bool, bool, str, bool]] = {}
        self._after: dict[str, tuple[str, bool, bool | str, bool, bool]] = {}

    # -- public API -------------------------------------------------------------------------

    def clear_caches(self) -> None:
        """Forget every cached decision and per-word fact (they are keyed by the texts seen)."""
        for cache in (self._decisions, self._before, self._after):
            cache.clear()

    def tokenize(self, text: str, realign_boundaries: bool = True) -> list[str]:
        """The sentences of ``text`` (``PunktSentenceTokenizer.tokenize``)."""
        if "." not in text and "?" not in text and "!" not in text:
            # No candidate: one sentence up to the trailing whitespace (none if that is all).
            end = len(text.rstrip())
            return [text[:end]] if end or not realign_boundaries else []
        return [text[a:b] for a, b in self.span_tokenize(text, realign_boundaries)]

    def count(self, text: str) -> int:
        """``len(self.tokenize(text))``; a text without a candidate (a ``[.?!]`` followed by whitespace
        and a word, or by one of NLTK's non-word characters) is one sentence up to its trailing
        whitespace, or none, without the call chain (a checker that splits line by line calls this
        for every line)."""
        if self._candidates.search(text) is None:
            return 1 if text.rstrip() else 0  # _slices' one slice, kept by span_tokenize when not empty
        return len(self.tokenize(text))

    def span_tokenize(self, text: str, realign_boundaries: bool = True) -> list[tuple[int, int]]:
        """``(start, end)`` offsets of the sentences (``PunktSentenceTokenizer.span_tokenize``)."""
        if "." not in text and "?" not in text and "!" not in text:
            end = len(text.rstrip())
            return [(0, end)] if end or not realign_boundaries else []
        slices, closer_after_break = self._slices(text)
        if not realign_boundaries:
            return slices  # NLTK keeps an empty last slice here
        if closer_after_break:
            return self._realigned(text, slices)
        # No sentence after a break starts with a closing quote or bracket: nothing moves, and
        # only the last slice can be empty (every other one ends at its candidate).
        a, b = slices[-1]
        if not a < b:
            slices.pop()
        return slices

    # -- candidates and their contexts -------------------------------------------------------

    def _slices(self, text: str) -> tuple[list[tuple[int, int]], bool]:
        """Raw sentence slices before realignment (NLTK's ``_slices_from_text``), and whether a
        slice after the first starts with a character realignment may move."""
        out: list[tuple[int, int]] = []
        last_break = 0
        closer_after_break = False
        closers = self._closers
        decisions = self._decisions
        decide = self._decide
        rfind = text.rfind
        prev_m = self._candidates.search(text)
        if prev_m is None:
            return [(0, len(text.rstrip()))], False
        # The word before a candidate starts after the last ASCII whitespace since the previous
        # candidate. Whitespace right at the previous candidate (index 0 of that stretch) counts as
        # none: NLTK then extends the previous candidate's word, and drops that candidate.
        prev_stop = prev_m.start()
        i = max(text.rfind(c, 0, prev_stop) for c in _ASCII_WS)
        prev_start = i + 1 if i > 0 else 0
        # Whitespace kinds present in the text (most texts: " " and "\n"): one or two kinds are
        # searched for with rfind, more with one backwards-greedy pattern.
        spaces = [c for c in _ASCII_WS if c in text]
        sp1 = spaces[0] if spaces else " "
        sp2 = spaces[1] if len(spaces) == 2 else None
        last_space = _LAST_ASCII_SPACE.match if len(spaces) > 2 else None
        last_in_chunk = self._last_in_chunk
        bang_breaks = self._bang_breaks
        pos = prev_stop + 1
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
                    out.append((last_break, prev_stop + 1))
                    last_break = prev_m.start(2)
                    if last_break < 0:
                        last_break = prev_stop + 1
                    if closers is None or text[last_break] in closers:
                        closer_after_break = True
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
            out.append((last_break, prev_stop + 1))
            last_break = prev_m.start(2)
            if last_break < 0:
                last_break = prev_stop + 1
            if closers is None or text[last_break] in closers:
                closer_after_break = True
        out.append((last_break, len(text.rstrip())))
        return out, closer_after_break

    def _realigned(self, text: str, slices: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Move closing quotes and brackets after a break into the sentence they close."""
        out: list[tuple[int, int]] = []
        n = len(text)
        realign = 0
        match = self._realign.match
        closers = self._closers
        last = len(slices) - 1
        for k, (a, b) in enumerate(slices):
            a += realign
            if k == last:
                if a < b and a < n:
                    out.append((a, b))
                break
            a2, b2 = slices[k + 1]
            m = match(text, a2, b2) if a2 < b2 and (closers is None or text[a2] in closers) else None
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
        simple = _SIMPLE_CONTEXT.fullmatch(ctx)
        if simple is not None:
            found = self._period_break(simple.group(1), simple.group(2))
            if len(ctx) <= _CACHE_KEY_MAX:
                if len(self._decisions) >= _CACHE_LIMIT:
                    self._decisions.clear()
                self._decisions[ctx] = found
            return found
        if len(ctx) > _CACHE_KEY_MAX:
            return self._decide_long(ctx)
        if "\n" in ctx:
            words: list[str] = []
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
        if len(ctx) <= _CACHE_KEY_MAX:
            if len(self._decisions) >= _CACHE_LIMIT:
                self._decisions.clear()
            self._decisions[ctx] = found
        return found

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

    def _type(self, tok: str) -> str:
        """The word's type: lower case, a number as ``##number##`` (NLTK's ``PunktToken.type``)."""
        head = tok[:3]
        if head.isascii() and head.isalpha():
            # A number needs a digit among its first three characters: skip the pattern for words.
            return tok.lower()
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
        if self._first_pass(tok)[0] and len(typ) > 1 and typ[-1] == ".":
            typ = typ[:-1]
        context = self._ortho.get(typ, 0)
        upper = tok[0].isupper()
        facts = (typ, upper, self._ortho_heuristic(tok, typ), typ in self._starters, not context & _LC)
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


def _remember(cache: dict, key: str, value: Any) -> None:
    """Store a per-word fact, emptying the cache first when it is full (bounded memory)."""
    if len(key) <= _CACHE_KEY_MAX:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = value
