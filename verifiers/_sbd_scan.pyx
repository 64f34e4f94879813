# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled sentence reading of :mod:`ifpo.verifiers._sbd` (optional).

Why compiled: after its rules have swapped what they protect, split_sentences reads the sentences
with one expression (``_sbd._READ``) over the whole text. The expression is as fast as the
regular expression engine gets, yet on 1 MB of short sentences (250k of them) its ``findall``
alone takes a third of the checkers' budget of 0.2 s per MB, and joining the 250k strings it
makes and dropping those without a letter or digit take more. Here the same reading runs on the
characters and writes the pieces straight into one string. ``_sbd._READ`` stays the reference and
the fallback where this module is not built; ``tests/test_sbd_scan.py`` compares the two.

:func:`read` returns what ``"".join(sep + piece for piece in _READ.findall(text))`` returns,
optionally without the pieces that hold no letter or digit. Its alternatives, in the expression's
order (the first that matches at a position wins; no alternative matches the empty string, so
after a match the scan goes on at its end, and elsewhere one character on):

1. a plain sentence: a character that is no whitespace, opening bracket, quote, mark or pair
   start; then up to its first mark (the mark included), or to the line's last non-space when the
   line holds no mark, following ``[^\\n M]*[^\\s M]`` greedily (M: the marks);
2. to 7. a sentence in brackets or quotes, to its closer before a capital;
8. a run of two or more spaces and marks;
9. and 10. a pair marker, or any non-space, up to the first mark on the line, or to the line's
   last non-space.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE

# _sbd checks this against its own before it uses the module (a stale build is not used).
INTERFACE = 1


cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND


cdef inline bint _mark(Py_UCS4 c) noexcept:
    """A sentence's last character: 。．.！!?？ and the two pair ends (\\ue010 \\ue013)."""
    return (c == 0x2e or c == 0x21 or c == 0x3f or c == 0x3002 or c == 0xff0e or c == 0xff01
            or c == 0xff1f or c == 0xe010 or c == 0xe013)


cdef inline bint _plain_mark(Py_UCS4 c) noexcept:
    """A mark without the pair ends: 。．.！!?？"""
    return c == 0x2e or c == 0x21 or c == 0x3f or c == 0x3002 or c == 0xff0e or c == 0xff01 or c == 0xff1f


cdef inline bint _space_not_nl(Py_UCS4 c) noexcept:
    return c != 10 and Py_UNICODE_ISSPACE(c)


cdef inline bint _capital(Py_UCS4 c) noexcept:
    return 65 <= c <= 90


cdef inline bint _space_capital(str t, Py_ssize_t n, Py_ssize_t p) noexcept:
    """``(?=[^\\S\\n][A-Z])`` at ``p``."""
    return p + 1 < n and _space_not_nl(t[p]) and _capital(t[p + 1])


cdef Py_ssize_t _plain(str t, Py_ssize_t n, Py_ssize_t i) noexcept:
    """Alternative 1 at ``i`` (its first character already checked): the end, or -1."""
    cdef Py_ssize_t e = i + 1, last = -1  # last: after the run's last non-space
    cdef Py_UCS4 c
    while e < n:
        c = t[e]
        if c == 10 or _mark(c):
            break
        if not Py_UNICODE_ISSPACE(c):
            last = e + 1
        e += 1
    # e: the first line break or mark after i (or the end)
    if last == e:  # the run ends with a non-space: the mark after it, or the line's end
        return e + 1 if e < n and t[e] != 10 else e
    if last != -1:  # trailing spaces: the line's end after them, or no match (a mark after them)
        return last if e == n or t[e] == 10 else -1
    # the run is spaces only (or empty): the group matches nothing
    if e == i + 1:
        return e + 1 if e < n and t[e] != 10 else e
    return i + 1 if e == n or t[e] == 10 else -1


cdef inline Py_ssize_t _closer_or_line_end(str t, Py_ssize_t n, Py_ssize_t i, Py_UCS4 closer) noexcept:
    """The first ``closer`` or line break after ``i`` (``n``: neither)."""
    cdef Py_ssize_t j = i + 1
    cdef Py_UCS4 c
    while j < n:
        c = t[j]
        if c == closer or c == 10:
            return j
        j += 1
    return n


cdef Py_ssize_t _closed(str t, Py_ssize_t n, Py_ssize_t i, Py_UCS4 closer, Py_ssize_t fewest,
                        bint optional_space) noexcept:
    """``O[^C\\n]{fewest,}C`` before a capital (after one space, or ``optional_space``: at most one)."""
    cdef Py_ssize_t j = _closer_or_line_end(t, n, i, closer)
    if j == n or t[j] != closer or j - i - 1 < fewest:
        return -1
    if _space_capital(t, n, j + 1) or (optional_space and j + 1 < n and _capital(t[j + 1])):
        return j + 1
    return -1


cdef Py_ssize_t _quoted(str t, Py_ssize_t n, Py_ssize_t i, Py_UCS4 closer) noexcept:
    """``O[^C\\n]*[^,\\n]C(?=[^\\S\\n][A-Z])``: the character before the closer may be a closer itself."""
    cdef Py_ssize_t j = _closer_or_line_end(t, n, i, closer)
    if j == n or t[j] != closer:
        return -1
    # greedy first: the run to j, the closer at j as the one character, a second closer after it
    if j + 1 < n and t[j + 1] == closer and _space_capital(t, n, j + 2):
        return j + 2
    # then the run's last character as the one character (no comma), the closer at j
    if j - 1 > i and t[j - 1] != 44 and _space_capital(t, n, j + 1):
        return j + 1
    return -1


cdef Py_ssize_t _to_mark(str t, Py_ssize_t n, Py_ssize_t p, Py_ssize_t least) noexcept:
    """``(?:[^\\n]*?M|(?:[^\\n]*\\S)?)`` from ``p``: after the line's first mark, else after its last
    non-space (``least`` where there is none)."""
    cdef Py_ssize_t last = least
    cdef Py_UCS4 c
    while p < n:
        c = t[p]
        if c == 10:
            break
        if _mark(c):
            return p + 1
        if not Py_UNICODE_ISSPACE(c):
            last = p + 1
        p += 1
    return last


cdef Py_ssize_t _match(str t, Py_ssize_t n, Py_ssize_t i) noexcept:
    """The end of ``_READ``'s match at ``i``, or -1."""
    cdef Py_UCS4 c = t[i]
    cdef Py_ssize_t end, j
    if not (Py_UNICODE_ISSPACE(c) or c == 0xff08 or c == 0x300c or c == 0x28 or c == 0x27 or c == 0x22
            or c == 0x201c or _plain_mark(c) or c == 0xe011 or c == 0xe012):
        end = _plain(t, n, i)
        if end != -1:
            return end
    if c == 0xff08:  # （ ... ） before an optional space and a capital
        end = _closed(t, n, i, 0xff09, 0, True)
    elif c == 0x300c:  # 「 ... 」
        end = _closed(t, n, i, 0x300d, 0, False)
    elif c == 0x28:  # ( two or more ... )
        end = _closed(t, n, i, 0x29, 2, False)
    elif c == 0x27 or c == 0x22:  # ' ... '  " ... "
        end = _quoted(t, n, i, c)
    elif c == 0x201c:  # “ ... ”
        end = _quoted(t, n, i, 0x201d)
    else:
        end = -1
    if end != -1:
        return end
    if c == 32 or _plain_mark(c):  # a run of two or more spaces and marks
        j = i + 1
        while j < n and (t[j] == 32 or _plain_mark(t[j])):
            j += 1
        if j - i >= 2:
            return j
    if (c == 0xe011 or c == 0xe012) and i + 1 < n and (t[i + 1] == 0xe010 or t[i + 1] == 0xe013):
        return _to_mark(t, n, i + 2, i + 2)
    if not Py_UNICODE_ISSPACE(c):
        return _to_mark(t, n, i + 1, i + 1)
    return -1


def read(str text, str sep, bint drop_wordless):
    """Every piece ``_sbd._READ`` finds in ``text``, each after ``sep`` (one character), in one
    string; with ``drop_wordless`` without the pieces that hold no letter or digit."""
    if len(sep) != 1:
        raise ValueError(f"sep must be one character, got {sep!r}")
    cdef Py_ssize_t n = len(text), i = 0, end, k, size = 0
    cdef Py_UCS4 s = sep[0]
    cdef bint wordy
    # (each piece is at least one character, so the pieces and their separators fit in 2n)
    cdef Py_UCS4 *out = <Py_UCS4 *> PyMem_Malloc((2 * n + 1) * sizeof(Py_UCS4))
    if out == NULL:
        raise MemoryError()
    try:
        while i < n:
            end = _match(text, n, i)
            if end == -1:
                i += 1
                continue
            if drop_wordless:
                wordy = False
                for k in range(i, end):
                    if Py_UNICODE_ISALNUM(text[k]):
                        wordy = True
                        break
                if not wordy:
                    i = end
                    continue
            out[size] = s
            size += 1
            for k in range(i, end):
                out[size] = text[k]
                size += 1
            i = end
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, size)
    finally:
        PyMem_Free(out)
