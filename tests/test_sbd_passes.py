"""verifiers/_sbd.py's faster passes against the forms they replaced, on seeded random texts.

Each pass below was rewritten for speed (a split instead of a Python call per span, a literal-first
search instead of a look-behind or a line-start anchor tried at every position, str.replace instead
of a literal regex); the former form is kept here as the reference, and both must give the same text
(or offsets) on random texts drawn from the characters the pass reads. tests/test_text.py compares
the whole splitter with stock pysbd; these catch a pass that drifts on inputs the agreement sets miss.
"""

from __future__ import annotations

import random
import re

import bench_modules
import pytest
from ifpo.verifiers import _sbd

TERMS = list("。．.！!?？")


def _texts(pieces: list[str], n: int, seed: int, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, longest))) for _ in range(n)]


# --- the former forms -----------------------------------------------------------------------------

# the former between-punctuation rules, one search each (never across a line; pysbd writes most as a
# look-ahead capture and a back-reference, which matches only when the contents hold no backslash)
_FORMER_BETWEEN = [
    re.compile(r"‘(?<=[^\S\n]‘)(?:[^’\n]|’[a-zA-Z])*’"),
    re.compile(r'"[^"\\\n]+"'),
    re.compile(r"\[[^\]\\\n]+\]"),
    re.compile(r"\([^()\\\n]+\)"),
    re.compile(r"«[^»\\\n]+»"),
    re.compile(r"--[^-\n]*--"),
    re.compile(r"“[^”\\\n]+”"),
]
_FORMER_AFTER_PREPOSITIVE = re.compile(r"\s|:\d")
_FORMER_AFTER_ABBR = re.compile(r"[.:\-?,]|\s(?:[a-z]|I[^\S\n]|I'm|I'll|\d|\()")


def _former_protect_between(text: str) -> str:
    if not _sbd._ANY_TERM.search(text):
        return text
    search = _sbd._ANY_TERM.search
    spans = []
    for rule in _FORMER_BETWEEN:
        spans += [m.span() for m in rule.finditer(text) if search(text, m.start(), m.end())]
    if not spans:
        return text
    spans.sort()
    edits, done = [], 0
    for a, b in spans:
        a = max(a, done)
        if b > a:
            edits.append((a, b, _sbd._protect(text[a:b])))
            done = b
    return _sbd._splice(text, edits)


_FORMER_NO_MARK_LINE_OPENERS = [
    (re.compile(rf"^[^\S\n]*{re.escape(opener)}(?=[^\n。．.！!?？]*$)", re.M), idle)
    for opener, idle in _sbd._IDLE_OPENER.items()
]


def _former_idle_no_mark_line_openers(text: str) -> str:
    for rule, idle in _FORMER_NO_MARK_LINE_OPENERS:
        text = rule.sub(lambda m, idle=idle: m.group()[:-1] + idle, text)
    return text


_FORMER_OPENER_AT_START = re.compile(r"(?:^|(?<=[。．.！!?？\ue010\ue013)）」”'\"]))[^\S\n]*([(（「“])", re.M)


def _former_opener_candidates(masked: str) -> list[int]:
    return [m.start(1) for m in _FORMER_OPENER_AT_START.finditer(masked)]


def _former_settle_openers(masked: str) -> str:
    # one Python step per opener
    from bisect import bisect_left

    candidates = _former_opener_candidates(masked)
    closers: dict[str, list[int]] = {}
    next_line = -2
    idle = []
    for p in candidates:
        opener = masked[p]
        close = _sbd._OPENING[opener]
        if close not in closers:
            closers[close] = [m.start() for m in re.finditer(re.escape(close), masked)]
        found = closers[close]
        k = bisect_left(found, p + 1)
        j = found[k] if k < len(found) else -1
        if next_line != -1 and next_line < p:
            next_line = masked.find("\n", p)
        if j >= 0 and next_line != -1 and next_line < j:
            j = -1
        fewest, no_comma, after = _sbd._OPENER_RULES[opener]
        if (j < 0 or j - p - 1 < fewest or (no_comma and masked[j - 1] == ",") or not after.match(masked, j + 1)
                or (opener == "(" and _sbd._ROMAN_IN_PARENS.match(masked, p))):
            idle.append(p)
    return _sbd._splice(masked, [(p, p + 1, _sbd._IDLE_OPENER[masked[p]]) for p in idle])


def _read_former_settled(masked: str) -> tuple[list[tuple[int, int]], str]:
    settled = _former_settle_openers(masked)
    return [m.span() for m in _sbd._READ.finditer(settled)], _sbd._unmask(settled)


def _read_settled(masked: str) -> tuple[list[tuple[int, int]], str]:
    # (every bracket the reading cannot start a sentence at is swapped now, not only the candidates:
    # what the reading gives, and the text, are the same)
    settled = _sbd._settle_openers(masked)
    return [m.span() for m in _sbd._READ.finditer(settled)], _sbd._unmask(settled)


def _opener_candidates(masked: str) -> list[int]:
    return sorted(p - 1 for opener in _sbd._OPENING for p in _sbd._opener_candidates("\n" + masked, opener))


def _former_abbr_boundary(text: str) -> str:
    starters = "|".join(re.escape(w) for w in _sbd._data()["starters"])
    rule = re.compile(r"(U\ue003S|U\.S|U\ue003K|E\ue003U|E\.U|U\ue003S\ue003A|U\.S\.A|I|i.v|I.V)\ue003"
                      rf"(?=[^\S\n](?:{starters})[^\S\n])")
    return rule.sub(r"\1.", text)


_FORMER_LINE_STARTS_DOUBLE = re.compile(r"^[^\S\n]*(?:\?!|!\?|\?\?|!!)", re.M)


def _former_double_marks(text: str) -> str:
    new = text
    for pair in ("?!", "!?", "??", "!!"):
        new = re.sub(re.escape(pair), _sbd._PAIR_START[pair[0]] + _sbd._PAIR_END[pair[1]], new)
    kept = []
    for m in _FORMER_LINE_STARTS_DOUBLE.finditer(text):
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        kept.append((m.start(), end, text[m.start():end]))
    return _sbd._splice(new, kept)


def _former_protect_multi_periods(text: str) -> str:
    return _sbd._MULTI_PERIOD.sub(lambda m: m.group().replace(".", _sbd._DOT), text)


_FORMER_PERIOD_AFTER_LETTER = re.compile(r"\.(?<=[A-Za-z]\.)(?=[\s.:\-?,])")
_FORMER_WORD_OR_DOT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.")


def _former_abbreviations(text: str) -> str:
    data = _sbd._data()
    abbreviations, prepositive, number = data["abbreviations"], data["prepositive"], data["number"]
    longest = data["longest"]
    keep = []
    for x in _FORMER_PERIOD_AFTER_LETTER.finditer(text):
        dot = x.start()
        start = dot - 1
        while start > 0 and dot - start <= longest and text[start - 1] in _FORMER_WORD_OR_DOT:
            start -= 1
        if start and not text[start - 1].isspace():
            continue
        word = text[start:dot].lower()
        if word not in abbreviations:
            continue
        if word in prepositive:
            ok = _FORMER_AFTER_PREPOSITIVE.match(text, dot + 1)
        elif word in number:
            ok = _sbd._AFTER_NUMBER_ABBR.match(text, dot + 1)
        else:
            ok = _FORMER_AFTER_ABBR.match(text, dot + 1)
        if ok:
            keep.append((dot, dot + 1, _sbd._DOT))
    return _sbd._splice(text, keep)


_FORMER_LIST_MARKER = re.compile(  # (every look-behind at every period; a digit is any decimal one)
    r"(?:\)(?<=[\da-z]\))|\.(?:(?<=(?<![^\s\-⁃])\d\.)|(?<=(?<![^\s\-⁃])\d\d\.)|(?<=(?<!\S)[a-z]\.)))"
)


def _former_list_markers(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FORMER_LIST_MARKER.finditer(text)]


def _list_markers(text: str) -> list[tuple[int, int]]:
    # (searched on the text with a space in front, as _list_lines does)
    return [(a - 1, b - 1) for a, b in (m.span() for m in re.finditer(_sbd._LIST_MARKER, " " + text))]


_FORMER_LIST_PAIR = re.compile(_FORMER_LIST_MARKER.pattern + r"[^\n]*?" + _FORMER_LIST_MARKER.pattern)


def _former_list_lines(text: str) -> list[int]:
    line_starts = set()
    pos = 0
    while (m := _FORMER_LIST_PAIR.search(text, pos)) is not None:
        line_starts.add(text.rfind("\n", 0, m.start()) + 1)
        end = text.find("\n", m.end())
        if end < 0:
            break
        pos = end + 1
    return sorted(line_starts)


def _former_stripped_lines(text: str) -> str:
    return "\n".join(line for line in (raw.strip() for raw in text.strip().splitlines()) if line)


# --- the comparisons ------------------------------------------------------------------------------

BRACKETS = ["(", ")", "[", "]", '"', "“", "”", "«", "»", "‘", "’", "--", "-", "\\", "\n", " ", "\t", "a", "B",
            "1", ",", "'"] + TERMS
# the curly single-quote span's own characters: the closer before a letter of either case, or not
CURLY = [" ‘", "‘", "’", "’a", "’B", "’.", "a", "B", ".", "!", " ", "\t", "\n", "1", "’ "]
OPENERS = ["(", "（", "「", "“", "'", '"', " ", "\t", "\u3000", "\n", "a", ")", "）", "」", "”", "\ue010", "\ue013",
           "\ue011"] + TERMS
# what an opener's verdict reads: its closing one, how far, a comma before it, a capital after it
SETTLE = ["(", "（", "「", "“", ")", "）", "」", "”", ". ", "! ", "\ue010", "\n", " ", "\t", "a", "ab", "A", " B", ",",
          "(iv) ", "(x)", "i", "v", "x", "m", "（A", "」 C", "” D"]
ABBR = ["U", "S", "K", "E", "A", "I", "i", "v", "V", ".", "\ue003", " ", "\t", "\n", "x", "The ", "He ", "It ",
        "I ", "We ", " The", " It", "\ue003 "]
DOUBLES = ["?", "!", "?!", "!!", " ", "\t", "\n", "a", ".", "\ue010"]
MULTI = ["a", "B", "z", ".", ". ", "e.g.", "U.S.", "a.m.", "\n", " ", "1", "_", "é", "x.y", "\ue003"]
ABBREVIATIONS = ["Dr", "dr", "No", "pp", "e.g", "Ph.D", "U.S", "etc", "vs", "St", "Mr", "Inc", "Fig", "a", "x", "Z",
                 "Abcdefghijklmnopqrstuvwxyz", ".", ". ", " ", "\n", "\t", ":", ":5", "-", "?", ",", " 5", " (", "  (", " I ",
                 " I'm", " I'll", " a", " B", "\ue003", "\u3000",
                 # letters a case-insensitive search outside ASCII takes for "s" and "k": none listed
                 "Mſ", "o\u212a", "\u0130", "Art", "EXT", "nos", "p", "\u0663"]
# one listed word of each kind (other, prepositive, number) and each thing their follow tests read
FOLLOWS = ["etc", "Inc", "e.g", "Dr", "No", "pp", "x", " ", "\n", "\t", ".", " I'm", " I'll", " I ", " I\n", " I", ":5", ":", " (",
           "  (", "\n(", " 5", " a", " B", "?", ",", "-", "I'm", "'"]
MARKERS = ["a", "z", "A", "1", "9", "12", ".", ")", "(", " ", "\t", "\n", "-", "⁃", "i", "iv", "_", "é", "\u3000", "\u0663",
           "\u0663\u0663", "[", "x."]
LINES = ["a", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\u3000",
         "\x1f", "b."]

CASES = [
    ("protect_between", _former_protect_between, _sbd._protect_between, BRACKETS),
    ("protect_between_curly", _former_protect_between, _sbd._protect_between, CURLY),
    ("no_mark_line_openers", _former_idle_no_mark_line_openers, _sbd._idle_no_mark_line_openers, OPENERS),
    ("opener_candidates", _former_opener_candidates, _opener_candidates, OPENERS),
    ("settle_openers", _read_former_settled, _read_settled, SETTLE),
    ("settle_openers_any", _read_former_settled, _read_settled, OPENERS),
    ("abbr_boundary", _former_abbr_boundary, lambda t: _sbd._patterns()["abbr_boundary"].sub(".", t), ABBR),
    ("double_marks", _former_double_marks, _sbd._double_marks, DOUBLES),
    ("stripped_lines", _former_stripped_lines, _sbd._stripped_lines, LINES),
    ("multi_periods", _former_protect_multi_periods, _sbd._protect_multi_periods, MULTI),
    ("abbreviations", _former_abbreviations, _sbd._abbreviations, ABBREVIATIONS),
    ("abbreviation_follows", _former_abbreviations, _sbd._abbreviations, FOLLOWS),
    ("list_markers", _former_list_markers, _list_markers, MARKERS),
    ("list_lines", _former_list_lines, _sbd._list_lines, MARKERS),
]


@pytest.mark.parametrize("name, former, current, pieces", CASES, ids=[c[0] for c in CASES])
def test_pass_equals_its_former_form_on_random_texts(name, former, current, pieces):
    texts = _texts(pieces, 6000, seed=len(name))
    differ = [t for t in texts if former(t) != current(t)]
    assert not differ, (name, differ[:3])
    joined = "\n".join(texts[:500])  # many lines at once, as the splitter runs them
    assert former(joined) == current(joined), name


@pytest.mark.parametrize("name, former, current, pieces", CASES, ids=[c[0] for c in CASES])
def test_pass_equals_its_former_form_on_bench_shapes(name, former, current, pieces):
    for shape, text in bench_modules.load("checker_scaling").shapes(20_000).items():
        assert former(text) == current(text), (name, shape)


@pytest.mark.parametrize("name, sep", [("_NO_ALNUM_PIECE", "\x00"), ("_NO_ALNUM_PIECE_PUA", "\ue000"),
                                       ("_WORDLESS_LINE", "\n")])
def test_wordless_patterns_equal_their_backtracking_form(name, sep):
    # the possessive repeats find the pieces / lines the backtracking ones found
    former = re.compile(re.escape(sep) + rf"[^\w{sep}]*(?:_[^\w{sep}]*)*(?={re.escape(sep)}|\Z)")
    current = getattr(_sbd, name)
    for text in _texts([sep, sep, "_", "__", "a", "1", "é", "中", ".", "!", " ", "\t", "-", "\ue003"], 6000, seed=15):
        assert current.sub("", sep + text) == former.sub("", sep + text), repr(text)


QUOTES = [" '", "'", "'a", "'B", "'.", "' ", "a", "B", " ", "\n", "\t", ".", "!", "\u0238", "’"]


def test_single_quote_patterns_equal_their_former_forms():
    # the span: as pysbd's alternation inside a repeat found it; the leading-apostrophe test: found
    # exactly where it was
    span = re.compile(r"'(?<=[^\S\n]')(?:[^'\n]|'[a-zA-Z])*'")
    leading = re.compile(r"'(?<=\s')(?:[^'\n]|'[a-zA-Z])*'\S")
    for text in _texts(QUOTES, 6000, seed=17):
        assert [m.span() for m in _sbd._SINGLE_QUOTED_ANY_LINE.finditer(text)] == [m.span() for m in span.finditer(text)]
        assert bool(_sbd._LEADING_APOSTROPHE_WORD.search(text)) == bool(leading.search(text)), repr(text)


def test_exclamation_words_protect_what_the_alternation_did():
    # pysbd's alternation of the words, longest first, against the "!"-first search
    words = _sbd._data()["exclamation_words"]
    former = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
    current = _sbd._patterns()["exclamation_words"]
    pieces = ["!", "Y", "Kung", "-Ekoka", "Xuun", "Xun", "Xũ", "ahoo", "um", "J", "ǃ", "ʼO", " ", "a", "Hu", *words]
    for text in _texts(pieces, 6000, seed=18, longest=12):
        assert current.sub(_sbd._protect_match, text) == former.sub(_sbd._protect_match, text), text


def test_quote_splits_per_quote_character_equal_the_one_pattern():
    former = re.compile(r"([\"'“”])(?<=[!?.\-][\"'“”])\s(?=[A-Z])")
    pieces = ['"', "'", "“", "”", "!", "?", ".", "-", " ", "\t", "\n", "A", "b", "\x00", '." A', "!' B", "?” C"]
    for text in _texts(pieces, 6000, seed=19):
        current = text
        for quote, rule in _sbd._QUOTES_THEN_CAPITAL:
            if quote in current:
                current = rule.sub(quote + "\x00", current)
        assert current == former.sub("\\1\x00", text), repr(text)


# --- other text passes rewritten the same way ------------------------------------------------------

def _former_nonblank_lines(text: str) -> list[str]:
    zero_width = str.maketrans("", "", "\u200b\u200c\u200d\u2060\ufeff")
    return [ln for ln in text.splitlines() if ln.strip() and (ln.isascii() or ln.translate(zero_width).strip())]


def test_nonblank_lines_equals_its_former_form():
    from ifpo.verifiers.text import nonblank_lines

    pieces = ["a", " ", "\t", "\n", "\r\n", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u3000", "\xa0", "\x1f",
              "\u2028", "\x85", "中", "\u200e", "\U0001F600"]
    for text in _texts(pieces, 6000, seed=9) + ["".join(map(chr, range(0x2000, 0x2100)))]:
        assert nonblank_lines(text) == _former_nonblank_lines(text), repr(text)



# --- the hints that skip passes are only shortcuts --------------------------------------------------

HINTS = ("_LIST_HINT", "_LETTER_PERIOD_HINT", "_DIGIT_HINT", "_POSSESSIVE_HINT", "_PROTECTED_DOT_HINT",
         "_BANG_HINT", "_QUOTE_OR_OPENER", "_DOUBLE_PUNCT", "_REFERENCE_HINT", "_CAPITAL_HINT")


class _Found:  # a hint whose search always finds something
    @staticmethod
    def search(*args):
        return True


def test_masking_is_the_same_with_every_hint_forced(monkeypatch):
    # _masked skips a pass when a cheap search says it cannot match (no digit, no letter before a
    # period, no "'s", no protected period, ...); with every such hint forced to "found" each pass
    # runs, and the text must come out the same
    texts = _texts(["a", "B", "Co", " KG", "'s", "1", "12", ".", ". ", "!", "?", "!!", "?!", "(", ")", '"', "'", " ",
                    "\n", "p.m.", "U.S.", "I", " The ", "e.g.", "Dr.", "...", " . ", "°", "[1]", "x@y.com", "a)",
                    "(i)", "\ue003", "3.5", "1. ", "2. ", "P.M. The", "A.M. He", "i.v. It", "Yahoo!", "ǃXo", "Y!J", "!!!",
                    "?!?", "a!!!! ", "as shown.12 The", "x.[1] A", "\ue003[2]", ".3 B", "a\ue0034 C", "9.9", "8)", "_.", "_", "x",
                    "....", "... Z", ".... Q", "...\tW"], 4000, seed=11)
    texts += list(bench_modules.load("checker_scaling").shapes(20_000).values())
    expected = [_sbd._masked(t) for t in texts]
    for name in HINTS:
        monkeypatch.setattr(_sbd, name, _Found)
    assert [_sbd._masked(t) for t in texts] == expected


def test_dropping_wordless_lines_before_the_reading_changes_no_sentence(monkeypatch):
    # lines with no letter or digit are dropped just before the reading (all their pieces would be
    # dropped after it); the sentences must be those of reading every line
    punct = list("!?.,;:-*#\"'()[]{}<>/\\|~`^_=+@&%$“”「」（）。！？") + ["\ue003", "\ue010", "_", " ", "\t"]
    lines = _texts(punct, 3000, seed=13, longest=12) + _texts(punct + ["a", "B", "1", "é", "中"], 3000, seed=14)
    texts = ["\n".join(lines[i:i + 6]) for i in range(0, len(lines), 6)]
    texts += list(bench_modules.load("checker_scaling").shapes(20_000).values())
    monkeypatch.setattr(_sbd, "_READER", None)  # (the expression's path drops them: the compiled reading needs not)
    current = [_sbd.split_lines_into_sentences(t) for t in texts]
    monkeypatch.setattr(_sbd, "_without_wordless_lines", lambda masked: masked)
    assert [_sbd.split_lines_into_sentences(t) for t in texts] == current


@pytest.mark.parametrize("unit", ["[x. ", "«x. ", "“x. ", " ‘x. ", "[a\\ [b. ", "“a\n“b. ", "(a. ", "--x. "])
def test_lines_of_unclosed_openers_are_protected_as_before(unit):
    # a line of openers never closed: each rule's spans are found once (the failed run is taken whole);
    # the same text as the former per-rule search on a size it can still read, and a long one ends
    text = unit * 2000
    assert _sbd._protect_between(text) == _former_protect_between(text)
    assert _sbd.split_lines_into_sentences(unit * 100_000)  # quadratic before: minutes
    # with a closing bracket that may end a sentence on the next line: the openers on this one still
    # may not start one (their first closing bracket is on another line), or the reading rescans
    assert _sbd.split_lines_into_sentences(unit * 100_000 + "\n(Ab) Cd. “Ef.” Gh, [Ij] Kl")


# --- list items numbered in other decimal digits ---------------------------------------------------

@pytest.mark.parametrize("text, sentences", [
    # pysbd's \d{1,2} reads them and int() takes them: the item counts for its neighbours, but no
    # break is put at it (stock pysbd's sentences, each)
    ("a. b. \u0663) x", ["a.", "b. \u0663) x"]),
    ("x a. b. 1) \u0663) y", ["x", "a.", "b. 1) \u0663) y"]),
    ("Do 1) this \u0662) that 3) other", ["Do", "1) this \u0662) that", "3) other"]),
    ("Do \u0661) this 2) that 3) other", ["Do \u0661) this", "2) that", "3) other"]),
    ("a \u0663\u0663) b 34) c", ["a \u0663\u0663) b 34) c"]),
    # (such an item is a list marker: a line with it and one other is read for lists)
    ("Do \u0661\u0662) this 13) that", ["Do \u0661\u0662) this", "13) that"]),
])
def test_parenthesised_items_in_other_digits(text, sentences):
    # int('') raised ValueError here before: split_sentences failed on such a line
    assert _sbd.split_lines_into_sentences(text) == sentences


def test_lines_of_parenthesised_items_in_any_digits_split():
    for text in _texts(["1) ", "2) ", "\u0661) ", "\u0662) ", "\u0663\u0663) ", "a. ", "b. ", "x", "\u0663", " ", "\n"], 3000,
                       seed=16, longest=12):
        assert isinstance(_sbd.split_lines_into_sentences(text), list)


def test_sentence_count_is_the_number_of_sentences():
    """count_sentences reads as split_lines_into_sentences and counts the pieces instead of listing
    them: the same number on random texts of every piece set above (NUL and the private-use separator
    included, lines without a mark, only marks), on many lines at once and on the bench shapes."""
    pieces = sorted({p for case in CASES for p in case[3]} | {"\x00", "\ue000", "。", "Hi", " there"})
    texts = _texts(pieces, 4000, seed=77) + ["", " ", "\n\n", "a", "a\n\nb", "!", "...", "a. b. c.", "\x00. a\x00b."]
    texts.append("\n".join(texts[:600]))
    texts += bench_modules.load("checker_scaling").shapes(20_000).values()
    differ = [t for t in texts if _sbd.count_sentences(t) != len(_sbd.split_lines_into_sentences(t))]
    assert not differ, differ[:3]
