# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled candidate loop of :class:`ifpo.verifiers._punkt.FastPunkt` (optional).

Why compiled: NLTK's Punkt decides every ``.``, ``?`` and ``!`` that is followed by one of its
non-word characters or by whitespace and a token (a *candidate*). In CPython that loop costs about
a microsecond per candidate even when the decision is a cache hit, and a few more when the word
after a number, an initial or an abbreviation is new; dense text has 100k-250k candidates per MB,
which alone is over the checkers' budget of 0.2 s per MB. Here the loop runs on the characters
themselves; the decisions are NLTK's, taken from the same Python methods and caches as the pure
Python loop (``FastPunkt._slices``), which stays the reference and the fallback when this module
is not built. ``tests/test_text.py`` runs both against NLTK.

What the loop does, as ``FastPunkt._slices`` does (NLTK's ``_match_potential_end_contexts`` and
``_slices_from_text``):

* a candidate is an end character followed by a non-word character, or by whitespace (the
  ``regex`` engine's) and a token (what follows up to the next whitespace);
* the word before it starts after the last ASCII whitespace since the previous candidate; where
  there is none the two overlap, and the previous candidate is dropped;
* a ``?`` or ``!`` breaks; a ``.`` in a context of two plain words (``word. Next``) is decided from
  the two words (see :meth:`Scanner._simple`), any other context by ``decide(context)``;
* after a break, closing quotes and brackets move back into the sentence (NLTK's realignment).
"""

from cpython.unicode cimport (Py_UNICODE_ISALNUM, Py_UNICODE_ISDIGIT, Py_UNICODE_ISLOWER, Py_UNICODE_ISSPACE,
                              Py_UNICODE_ISUPPER)

# FastPunkt checks this against its own before it uses the module (a stale build is not used).
INTERFACE = 3

# Keys of the word after a period for a word the model does not know: only its first character's
# case reaches the decision then (no word is spelled with a NUL).
_UPPER, _LOWER, _OTHER = "\x00U", "\x00l", "\x00o"
_NUMBER = "\x00#"  # the word before the period: ASCII digits (the same facts for every number)


cdef inline bint _ascii_ws(Py_UCS4 c) noexcept:
    return c == 32 or 9 <= c <= 13


cdef class Scanner:
    """The loop, bound to one FastPunkt's tables and methods."""

    cdef readonly str whitespace  # the candidate pattern's \s (the regex engine's whitespace), every character
    cdef readonly str non_word  # the characters that end a word and make a candidate of the mark before them
    cdef readonly str closers  # the realignment pattern's first class
    cdef dict decisions  # context -> decision (FastPunkt's cache, filled by decide)
    cdef object decide  # decide(context) -> bool
    cdef object period_break  # period_break(word, next word) -> bool
    cdef frozenset abbrevs  # abbreviation types
    cdef frozenset firsts  # first types of collocations
    cdef frozenset known  # every type the model has facts for as the word after a candidate
    cdef dict pairs  # (word key, next word key) -> decision
    cdef Py_ssize_t limit

    def __init__(self, str whitespace, str non_word, str closers, dict decisions, decide, period_break,
                 frozenset abbrevs, frozenset firsts, frozenset known, Py_ssize_t limit):
        self.whitespace = whitespace
        self.non_word = non_word
        self.closers = closers
        self.decisions = decisions
        self.decide = decide
        self.period_break = period_break
        self.abbrevs = abbrevs
        self.firsts = firsts
        self.known = known
        self.pairs = {}
        self.limit = limit

    def clear(self):
        self.pairs.clear()

    cdef inline bint _ws(self, Py_UCS4 c):
        if c < 128:
            return _ascii_ws(c)
        return c in self.whitespace

    cdef Py_ssize_t _find(self, str text, Py_ssize_t n, Py_ssize_t p, Py_ssize_t* after_end,
                          Py_ssize_t* next_start) except -2:
        """The next candidate at or after ``p`` (-1: none); sets the end of what follows it (the
        pattern's group ``after_tok``) and the start of the next token (-1 for a non-word character)."""
        cdef Py_UCS4 c
        cdef Py_ssize_t q
        while p < n - 1:
            c = text[p]
            if c == 46 or c == 63 or c == 33:  # . ? !
                c = text[p + 1]
                if c in self.non_word:
                    after_end[0] = p + 2
                    next_start[0] = -1
                    return p
                if self._ws(c):
                    q = p + 2
                    while q < n and self._ws(text[q]):
                        q += 1
                    if q < n:
                        next_start[0] = q
                        while q < n and not self._ws(text[q]):
                            q += 1
                        after_end[0] = q
                        return p
                    return -1  # whitespace to the end: no token follows, here or later
            p += 1
        return -1

    cdef bint _breaks(self, str text, Py_ssize_t w0, Py_ssize_t stop, Py_ssize_t after_end,
                      Py_ssize_t next_start) except -1:
        """The decision for the candidate at ``stop`` whose word starts at ``w0``."""
        if text[stop] != 46:
            return True  # ? and ! always break with NLTK's language variables (FastPunkt._bang_breaks)
        cdef Py_ssize_t i
        cdef Py_UCS4 c
        cdef bint simple = next_start > stop + 1 and w0 < stop
        if simple:
            i = w0
            while i < stop and simple:
                simple = Py_UNICODE_ISALNUM(text[i])
                i += 1
        if simple:
            i = stop + 1
            while i < next_start and simple:
                c = text[i]
                simple = c == 32 or c == 10 or c == 9 or c == 13
                i += 1
        if simple:
            i = next_start
            while i < after_end - 1 and simple:
                simple = Py_UNICODE_ISALNUM(text[i])
                i += 1
            c = text[after_end - 1]
            simple = simple and (Py_UNICODE_ISALNUM(c) or (c == 46 and after_end - next_start > 1))
        if simple:
            return self._simple(text, w0, stop, after_end, next_start)
        ctx = text[w0:after_end]
        d = self.decisions.get(ctx)
        if d is None:
            d = self.decide(ctx)
        return bool(d)

    cdef bint _simple(self, str text, Py_ssize_t w0, Py_ssize_t stop, Py_ssize_t after_end,
                      Py_ssize_t next_start) except -1:
        """The decision for ``word. next``: both words letters and digits (``_SIMPLE_CONTEXT``), so
        NLTK's words are these two (FastPunkt._decide). A word of two or more characters that is no
        abbreviation, collocation start or number breaks whatever follows (FastPunkt._plain_break).
        Otherwise the decision depends on the word (a number: on being one) and on the next word's
        facts; a next word whose type the model has no facts for (not in ``known``) has facts set by
        its first character's case alone (FastPunkt._after_facts: no orthographic context, no
        frequent starter, no collocation), so the decision is cached per that case."""
        cdef Py_ssize_t i
        cdef Py_UCS4 c
        cdef str low, low2, k1
        cdef object k2
        cdef bint digits
        low = text[w0:stop].lower()
        if stop - w0 >= 2 and not Py_UNICODE_ISDIGIT(low[0]) and low not in self.abbrevs \
                and low not in self.firsts:
            return True
        word = text[w0 : stop + 1]
        digits = True
        i = w0
        while i < stop and digits:
            c = text[i]
            digits = 48 <= c <= 57
            i += 1
        k1 = _NUMBER if digits else word
        nxt = text[next_start:after_end]
        c = text[next_start]
        if Py_UNICODE_ISDIGIT(c):
            k2 = nxt
        else:
            low2 = nxt.lower()
            if low2 in self.known or (low2[len(low2) - 1] == 46 and low2[: len(low2) - 1] in self.known):
                k2 = nxt
            elif Py_UNICODE_ISUPPER(c):
                k2 = _UPPER
            elif Py_UNICODE_ISLOWER(c):
                k2 = _LOWER
            else:
                k2 = _OTHER
        key = (k1, k2)
        d = self.pairs.get(key)
        if d is None:
            d = bool(self.period_break(word, nxt))
            if len(self.pairs) >= self.limit:
                self.pairs.clear()
            self.pairs[key] = d
        return d

    cdef Py_ssize_t _closers_back(self, str text, Py_ssize_t at, Py_ssize_t stop, Py_ssize_t* after):
        """NLTK's realignment pattern ``[closers]+?(?:\\s+|(?=--)|$)`` matched at ``at`` with the string
        ending at ``stop``: the end of the closing characters that move back into the sentence before
        (``after``: where the next one starts, after the whitespace that follows them), or -1 when the
        pattern does not match (FastPunkt._closers_back; FastPunkt checks the pattern is this one)."""
        cdef Py_ssize_t k = at, j
        while k < stop and text[k] in self.closers:
            k += 1  # the fewest closing characters after which the rest matches
            if k == stop:
                after[0] = k
                return k
            if self._ws(text[k]):
                j = k + 1
                while j < stop and self._ws(text[j]):
                    j += 1
                after[0] = j
                return k
            if text[k] == 45 and k + 1 < stop and text[k + 1] == 45:
                after[0] = k
                return k
        return -1

    def slices(self, str text not None, bint realign, int mode):
        """None when the text has no candidate; else, by ``mode``: 0, FastPunkt._slices' sentence
        slices as ``(start, end)`` tuples, the last one possibly empty; 1, the sentences themselves, an
        empty last one left out (FastPunkt.tokenize); 2, their number (FastPunkt.count)."""
        cdef Py_ssize_t n = len(text)
        cdef Py_ssize_t s, i, start = 0, a, b, after_end = 0, next_start = -1, moved_after = 0
        cdef Py_ssize_t prev_stop, prev_start, prev_after, prev_next, end
        cdef Py_ssize_t last_break = 0, moved_at = -1, moved_start = 0, moved_end = -1, moved_break = -1
        cdef list out = []
        cdef bint last = False, strings = mode == 1, counting = mode == 2
        cdef Py_ssize_t breaks = 0
        s = self._find(text, n, 0, &after_end, &next_start)
        if s < 0:
            return None
        # The first word starts after the last ASCII whitespace before it, unless that is the text's
        # first character (NLTK takes index 0 for "none").
        i = s - 1
        while i >= 0 and not _ascii_ws(text[i]):
            i -= 1
        prev_start = i + 1 if i >= 1 else 0
        prev_stop, prev_after, prev_next = s, after_end, next_start
        while True:
            s = self._find(text, n, prev_stop + 1, &after_end, &next_start)
            if s < 0:
                last = True
            else:
                i = s - 1
                while i > prev_stop and not _ascii_ws(text[i]):
                    i -= 1
                if i > prev_stop:
                    start = i + 1
                else:
                    start = prev_start
                    if prev_stop > start:
                        # The words overlap: the previous candidate is dropped, its word's start kept.
                        prev_stop, prev_after, prev_next = s, after_end, next_start
                        continue
            if self._breaks(text, prev_start, prev_stop, prev_after, prev_next):
                a = last_break
                b = prev_stop + 1
                last_break = prev_next if prev_next >= 0 else b
                if realign and text[last_break] in self.closers:
                    moved_at, moved_start, moved_end, moved_break = breaks, a, b, last_break
                    i = self._closers_back(text, last_break, n, &moved_after)
                    if i >= 0:
                        b, last_break = i, moved_after
                breaks += 1
                if not counting:
                    out.append(text[a:b] if strings else (a, b))
            if last:
                break
            prev_start = start
            prev_stop, prev_after, prev_next = s, after_end, next_start
        # The last slice ends where the text's trailing whitespace starts. A break followed by a closing
        # character just before it was realigned with the whole text as the string; NLTK matches that
        # slice up to its own end (the trailing whitespace, U+001C..U+001F included, is not the
        # pattern's): matched again so (FastPunkt._last_slice).
        end = n
        while end > 0 and Py_UNICODE_ISSPACE(text[end - 1]):
            end -= 1
        if moved_at >= 0 and moved_at == breaks - 1:
            b, last_break = moved_end, moved_break
            if moved_break < end:
                i = self._closers_back(text, moved_break, end, &moved_after)
                if i >= 0:
                    b, last_break = i, moved_after
            if not counting:
                out[moved_at] = text[moved_start:b] if strings else (moved_start, b)
        if counting:
            return breaks + (last_break < end)
        if not strings:
            out.append((last_break, end))
        elif last_break < end:
            out.append(text[last_break:end])
        return out
