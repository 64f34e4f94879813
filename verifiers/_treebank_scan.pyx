# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled padding step of :mod:`ifpo.verifiers._treebank` (optional).

Why compiled: NLTK's Treebank tokenizer puts a space on each side of every character of several
classes (``;@#$%&``, the dashes, ``?!``, ``*`` and the brackets). The Python form replaces one
character after another with ``str.replace``, a scan of the whole text per character: on 1 MB of
random characters those scans cost about 0.02 s, a seventh of the slowest checker
(``change_case:capital_word_frequency``). :func:`pad` pads them all in one scan. The ``str.replace``
form stays the reference and the fallback where this module is not built;
``tests/test_text.py`` compares the two.
"""

# _treebank checks this against its own before it uses the module (a stale build is not used).
INTERFACE = 1


from libc.stdint cimport uint8_t, uint16_t, uint32_t


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object o)


ctypedef fused uchar:  # one loop per string kind, on its own code units
    uint8_t
    uint16_t
    uint32_t


cdef inline bint _padded(Py_UCS4 c, const unsigned char *ascii, const Py_UCS4 *others, Py_ssize_t n_others) noexcept:
    cdef Py_ssize_t j
    if c < 128:
        return ascii[c]
    for j in range(n_others):
        if c == others[j]:
            return True
    return False


cdef Py_ssize_t _count(const uchar *s, Py_ssize_t n, const unsigned char *ascii, const Py_UCS4 *others,
                       Py_ssize_t n_others) noexcept:
    cdef Py_ssize_t i, count = 0
    for i in range(n):
        count += _padded(s[i], ascii, others, n_others)
    return count


cdef void _fill(const uchar *s, Py_ssize_t n, uchar *out, const unsigned char *ascii, const Py_UCS4 *others,
                Py_ssize_t n_others) noexcept:
    cdef Py_ssize_t i, k = 0
    cdef uchar c
    for i in range(n):
        c = s[i]
        if _padded(c, ascii, others, n_others):
            out[k] = 32
            out[k + 1] = c
            out[k + 2] = 32
            k += 3
        else:
            out[k] = c
            k += 1


def pad(str text, str chars):
    """``text`` with every character of ``chars`` (distinct, no space among them) between two spaces:
    what ``text.replace(c, f" {c} ")`` for each ``c`` of ``chars`` in turn gives, in one scan."""
    cdef Py_ssize_t m = len(chars), n = len(text), i, j, count
    if m > 32:
        raise ValueError(f"at most 32 characters to pad, got {m}")
    cdef Py_UCS4 others[32]  # the characters outside ASCII
    cdef Py_ssize_t n_others = 0
    cdef unsigned char ascii[128]
    cdef Py_UCS4 c
    for i in range(128):
        ascii[i] = 0
    for i in range(m):
        c = chars[i]
        if c == 32:
            raise ValueError("a space cannot be padded")
        if c < 128:
            if ascii[c]:
                raise ValueError(f"{c!r} is twice in the characters to pad")
            ascii[c] = 1
        else:
            for j in range(n_others):
                if others[j] == c:
                    raise ValueError(f"{c!r} is twice in the characters to pad")
            others[n_others] = c
            n_others += 1
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    if kind == 1:
        count = _count(<uint8_t *> data, n, ascii, others, n_others)
    elif kind == 2:
        count = _count(<uint16_t *> data, n, ascii, others, n_others)
    else:
        count = _count(<uint32_t *> data, n, ascii, others, n_others)
    if count == 0:
        return text
    # (the characters padded are the text's own, and a space fits every kind: the result is of the
    # text's kind)
    out = PyUnicode_New(n + 2 * count, PyUnicode_MAX_CHAR_VALUE(text))
    cdef void *out_data = PyUnicode_DATA(out)
    if kind == 1:
        _fill(<uint8_t *> data, n, <uint8_t *> out_data, ascii, others, n_others)
    elif kind == 2:
        _fill(<uint16_t *> data, n, <uint16_t *> out_data, ascii, others, n_others)
    else:
        _fill(<uint32_t *> data, n, <uint32_t *> out_data, ascii, others, n_others)
    return out
