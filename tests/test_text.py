"""Truth tables for the shared text primitives (verifiers.text) and param-check helpers
(verifiers.registry) that the rule checkers of every benchmark module use."""

from __future__ import annotations

import os

import bench_modules
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
    excerpt,
    find_phrase,
    flatten,
    is_latin_word_char,
    listing,
    normalize_quotes,
    phrase_pattern,
    plural,
    split_paragraphs,
    split_sentences,
    squash_whitespace,
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


# ------------------------------------------------------------------------------ Punkt (fast == NLTK)
# punkt_sentences runs verifiers/_punkt.py's FastPunkt; NLTK's PunktSentenceTokenizer on the same
# English parameters is the reference. Sentences and spans must be equal, with and without
# realignment, on hand-picked boundary cases and on seeded random texts from a biased alphabet
# (bench/punkt_identity.py's generator; that script runs the same comparison on 200k texts).

PUNKT_CASES = [
    "", " ", "\n\n", "   \t ", "Hello world", "One.", "One. ", "One. Two.   \n",
    "Dr. Smith arrived at 5 p.m. He was tired.",
    "The U.S. Army is big. It won. The U.S.A. Today.",
    "I like fruits, e.g. apples. Bananas too. i.e. this one.",
    "J. R. R. Tolkien wrote it. He died in 1973. B. Smith and J. Walter met. O. Ludcke.",
    "Wait... What? No!! Yes?! Ok. Hi... there. Hi. . . There. ..Then",
    "It costs 3.5 dollars. Then 4. It is 1,000. And -3. Or .5 more. 5. Review of it. 5. review",
    "1. First item. 2. Second item. 3. the third.",
    "1.\n2.\n3.\n\n4. Four",
    'He said "Stop." Then he left. She said \u201cGo.\u201d  Next. \u2018Quoted.\u2019 Next. \xabBonjour.\xbb Fin.',
    "(This is a test.) And more. [Another one.] Yes. {Braces.} No.",
    "Really?! Yes. acting!!! I promise. Why?? Because.",
    "this is lower. and more lower. the end. however, not. However, yes.",
    "Mr. and Mrs. Smith left. However, they came back. Messrs. Jones. St. Louis. Gen. Motors.",
    "Hello.\n\nNew paragraph.\nNew line.\r\nWindows line.\r\n\r\nDone.",
    "\u00dcber alles. \u00c4rger folgt. \u4e2d\u6587\u3002 Next. na\u00efve. \u00c9clair. \u00e9t\u00e9.",
    "x .! Y", " a. B", "a.\x1cB. c", "a.\xa0B. c", "a.\u2003B. c", "a.\x0bB.\x0cC.\x85D.",
    "end.--Next. end.) (Next. end.- Next. a.;b c.:d e.@f g.*h",
    "Ph.D. students study. They work. ex-dr. Smith. co-op. Next. well-known. The end.",
    "_. Next. \u00c9. Next. 3. The. 3. the. a. b. A. B.",
    "Sentence one.Sentence two. a.b.c. Next",
    "Sale. Sales. sales. The. THE. It. it. I. i.",
    ". . . . ! ? .",
    "\u201cNo.\u201d \u201cYes.\u201d \u2019Tis. )Closed. \"\" Done.",
    "Wow!\u201d she said. Okay?) Sure.",
    "!" * 300, '!"' * 150 + " Next.", "a.\xa0" * 80 + "B.", "x!)" * 60 + " y", "Dr.\u2003" * 50 + "Smith.",
    "end." + "\xa0e.g." * 40 + " Next", "?!" * 100 + " Then.",
    'He said "Stop."--and left. \u201cGo!\u201d-- Next. (Yes.)--', 'A. "B."-- c. "Done."--',
]


@pytest.fixture(scope="module", params=["compiled", "pure"])
def punkt_pair(request):
    """(a FastPunkt, NLTK's tokenizer on the same parameters): the one punkt_sentences uses, whose
    candidate loop is compiled (verifiers/_punkt_scan.pyx), and one running that loop in Python."""
    from ifpo.verifiers._punkt import FastPunkt
    from ifpo.verifiers.text import _punkt, _punkt_reference

    assert isinstance(_punkt(), FastPunkt)
    if request.param == "compiled":
        if not _punkt().compiled:
            pytest.skip("the compiled Punkt loop is not built (test_punkt_compiled_loop_is_built says why)")
        return _punkt(), _punkt_reference()
    return FastPunkt(_punkt_reference()._params, compiled=False), _punkt_reference()


def test_punkt_compiled_loop_is_built(can_compile):
    """Where a C compiler is, the install builds the compiled loop, so it must be there: without it the
    sentence checkers still split as NLTK does, in Python, but are over their time budget on dense
    text. (Without a compiler the install skips it, and the other tests run the Python loop.)"""
    from ifpo.verifiers._punkt import FastPunkt, _compiled_scan
    from ifpo.verifiers.text import _punkt, _punkt_reference

    if _compiled_scan() is None and not can_compile:
        pytest.skip("no C compiler or Python headers here: the compiled Punkt loop cannot be built")
    if os.environ.get("IFPO_PUNKT_PURE", "") not in ("", "0"):
        pytest.skip("IFPO_PUNKT_PURE is set: the Python loop runs by request")
    assert _compiled_scan() is not None, "ifpo.verifiers._punkt_scan is not built: reinstall (pip install -e .)"
    assert _punkt().compiled
    assert not FastPunkt(_punkt_reference()._params, compiled=False).compiled


def test_punkt_splits_a_str_subclass_as_its_text(punkt_pair):
    """A subclass of str (numpy.str_ is one) splits as the plain text does (the compiled loop takes
    exact strings only: the text is passed as one)."""

    class Text(str):
        def __str__(self):
            return "overridden"

    fast, reference = punkt_pair
    for text in ["A. b. Cd. Ef", "Hi. There.", "x", "1. Mr. Bo said ca. \u201cGo.\u201d Now."]:
        assert fast.tokenize(Text(text)) == reference.tokenize(text)
        assert fast.span_tokenize(Text(text)) == list(reference.span_tokenize(text))
        assert fast.count(Text(text)) == len(reference.tokenize(text))


def test_punkt_compiled_loop_reads_nltks_character_classes():
    """The compiled loop reads characters instead of running NLTK's patterns: its whitespace is the
    candidate pattern's (the regex engine's \\s), its non-word characters and closing characters
    those of NLTK's classes, on every code point."""
    import regex
    from ifpo.verifiers.text import _punkt, _punkt_reference

    every = "".join(map(chr, range(0x110000)))
    lang = _punkt_reference()._lang_vars  # (NLTK's patterns, on the regex engine)
    scanner = _punkt()._scanner
    if scanner is None:
        pytest.skip("the compiled Punkt loop is not built (test_punkt_compiled_loop_is_built says why)")
    assert set(scanner.whitespace) == set(regex.findall(r"\s", every))
    assert set(scanner.non_word) == set(regex.findall(lang._re_non_word_chars, every))
    closers = regex.match(r"\[(?:\\.|[^\]\\])*\]", lang.re_boundary_realignment.pattern).group(0)
    assert set(scanner.closers) == set(regex.findall(closers, every))


def _assert_punkt_equal(fast, reference, text):
    for realign in (True, False):
        assert fast.span_tokenize(text, realign) == list(reference.span_tokenize(text, realign)), (
            repr(text), realign)
        assert fast.tokenize(text, realign) == reference.tokenize(text, realign), (repr(text), realign)


@pytest.mark.parametrize("text", PUNKT_CASES)
def test_punkt_equals_nltk_on_boundary_cases(punkt_pair, text):
    _assert_punkt_equal(*punkt_pair, text)


@pytest.mark.parametrize("seed", range(4))
def test_punkt_equals_nltk_on_random_texts(punkt_pair, seed):
    import random

    from ifpo.verifiers._punkt import FastPunkt

    identity = bench_modules.load("punkt_identity")
    rng = random.Random(seed)
    texts = [identity.random_text(rng) for _ in range(600)]
    texts += [identity.random_text(rng, 150, glued=True) for _ in range(100)]  # long glued stretches
    fast, reference = punkt_pair
    cold = FastPunkt(reference._params, compiled=fast.compiled)  # decides every context afresh (no shared cache)
    for text in texts:
        # NLTK's tokenize is its spans' slices; FastPunkt's has a path of its own, so check both.
        want = list(reference.span_tokenize(text))
        sentences = [text[a:b] for a, b in want]
        for splitter in (fast, cold):
            assert splitter.span_tokenize(text) == want, repr(text)
            assert splitter.tokenize(text) == sentences, repr(text)
    assert identity.differences(texts[:100], fast, reference, realign=False) == []


@pytest.mark.parametrize("seed", range(2))
def test_punkt_runs_of_plain_sentences_equal_nltk(punkt_pair, seed):
    """Texts of many short sentences, mostly plain, the rest ending in an abbreviation, a number, an
    initial, a word that lower-cases oddly, a ? or !, or followed by a closing quote, other whitespace
    or an unusual next word: FastPunkt takes the plain runs in bulk (it does on most of these texts)
    and splits, spans and counts as NLTK does."""
    import random

    from ifpo.verifiers._punkt import FastPunkt, _Run

    identity = bench_modules.load("punkt_identity")
    fast, reference = punkt_pair
    cold = FastPunkt(reference._params, compiled=False)  # the runs are the Python loop's (asserted below)
    rng = random.Random(100 + seed)
    texts = [identity.random_text(rng) if k % 50 == 0 else identity.run_text(rng) for k in range(1500)]
    assert identity.differences(texts, cold, reference) == []
    assert identity.differences(texts[:300], fast, reference, realign=False) == []
    assert [fast.count(t) for t in texts] == [len(reference.tokenize(t)) for t in texts]
    used = sum(any(type(piece) is _Run for piece in cold._slices(t)[0]) for t in texts if "." in t)
    assert used > len(texts) // 3, used  # the runs were taken in bulk, not sentence by sentence


def test_punkt_run_trie_case_folding_misses_no_character():
    """A run of plain sentences must stop at every word whose lower case is an abbreviation; its
    trie is matched with (?i), so every character whose lower case is an ASCII letter must match
    that letter under (?i) (the Kelvin sign does; over-matching, as the long s does, is harmless)."""
    import re

    missed = [hex(cp) for cp in range(0x110000)
              if len(low := chr(cp).lower()) == 1 and low.isascii() and low.isalpha()
              and not re.fullmatch(f"(?i:{low})", chr(cp))]
    assert missed == []


@pytest.mark.parametrize("word", ["0.", "5.", "12.", "007.", "123456789."])
def test_punkt_number_facts_are_those_of_a_number(word):
    from ifpo.verifiers._punkt import _NUMBER_FACTS, FastPunkt
    from ifpo.verifiers.text import _punkt_reference

    assert FastPunkt(_punkt_reference()._params)._before_facts(word) == _NUMBER_FACTS


def test_punkt_contexts_differing_in_digits_split_as_nltk():
    """FastPunkt keeps decisions per digit shape of a context ("u.v. (12.)" like "u.v. (19.)") only
    where no model type holding digits is involved: texts that differ only in digits, one of them a
    type the model knows ("a-1") and the other not, split as NLTK splits each, whichever came first."""
    from ifpo.verifiers._punkt import FastPunkt
    from ifpo.verifiers.text import _punkt_reference

    identity = bench_modules.load("punkt_identity")
    reference = _punkt_reference()
    texts = identity.digit_shape_texts(60)
    for compiled in (True, False):
        fast = FastPunkt(reference._params, compiled=compiled)  # one cache for all: each text after its twin
        assert identity.differences(texts, fast, reference) == []
        # the digit-shape cache served (plain words and numbers; the compiled loop decides most of
        # these contexts from their two words, without it)
        assert fast._shapes or compiled


def test_punkt_question_and_exclamation_candidates_break_without_being_read(punkt_pair):
    """FastPunkt takes a ? or ! candidate as a break without its context: every context of such a
    candidate in random texts, from any start up to it, is one the full decision breaks; and the
    sentences are the same with the shortcut off (with other language variables it is off)."""
    import random

    from ifpo.verifiers._punkt import FastPunkt

    identity = bench_modules.load("punkt_identity")
    fast, reference = punkt_pair
    full = FastPunkt(reference._params, compiled=False)  # (the compiled loop has the shortcut built in)
    assert full._bang_breaks
    full._bang_breaks = False
    rng = random.Random(5)
    texts = [identity.random_text(rng) for _ in range(300)] + [identity.random_text(rng, 150, True) for _ in range(50)]
    texts += ["".join(rng.choice("ab.?!)\"' \n(;,-") for _ in range(rng.randint(1, 80))) for _ in range(300)]
    tried = 0
    for text in texts:
        for m in full._candidates.finditer(text):
            if text[m.start()] != ".":
                for start in {0, m.start(), rng.randint(0, m.start()), text.rfind(" ", 0, m.start()) + 1}:
                    assert full._decide(text[start : m.end(1)]), (text, start)
                    tried += 1
        assert full.span_tokenize(text) == fast.span_tokenize(text), repr(text)
    assert tried > 1000

    class Other(type(reference._lang_vars)):
        pass

    assert not FastPunkt(reference._params, Other())._bang_breaks


def test_punkt_word_pairs_split_as_nltk_through_one_cache():
    """The compiled loop decides "word. next" from the word and, where the model has no facts for the
    next word, from its first character's case alone (one cache entry per word and case; every number
    as one word): contexts whose next word is unknown, known to the model in any case, with a period,
    starting with a digit or with a title-case, caseless or other-script letter, after words whose
    decision reads the next word (initials, numbers, abbreviations, collocation starts) and after
    plain words, all through one splitter's caches, split as NLTK splits each."""
    import itertools
    import random

    from ifpo.verifiers._punkt import FastPunkt
    from ifpo.verifiers.text import _punkt_reference

    identity = bench_modules.load("punkt_identity")
    reference = _punkt_reference()
    params = reference._params
    rng = random.Random(8)
    known = sorted(set(params.ortho_context) | set(params.sent_starters) | {b for _, b in params.collocations})
    known = [w for w in known if w.isalnum()]
    firsts = sorted({a for a, _ in params.collocations if a.isalnum()})
    abbrevs = sorted(w for w in params.abbrev_types if w.isalnum())
    befores = ["A", "J", "z", "\u00c9", "7", "12", "2024", "\u0661\u0662", "ca", "Mr", "no", "Dr", "x1", "Go", "sale", "word"]
    befores += firsts + [w.upper() for w in firsts] + rng.sample(abbrevs, 12) + [w.upper() for w in rng.sample(abbrevs, 4)]
    unknown = ["Zyx", "zyx", "ZYX", "\u01c5ab", "\u00dfab", "\u03a3ab", "\u03c3ab", "\u4e2d\u6587", "\u212aab", "\u0130ab",
               "9ab", "12", "\u0663", "\u00bdab", "Zyx.", "zyx."]
    afters = unknown + rng.sample(known, 60)
    afters += [w.capitalize() for w in rng.sample(known, 30)] + [w.upper() for w in rng.sample(known, 10)]
    afters += [w + "." for w in rng.sample(known, 20)] + [w.capitalize() + "." for w in rng.sample(known, 30)]
    pairs = list(itertools.product(befores, afters))
    rng.shuffle(pairs)
    texts = [f"{a}. {b}" for a, b in pairs] + [f"x {a}. {b} y." for a, b in pairs[::3]]
    texts += [" ".join(f"{a}. {b}" for a, b in pairs[k : k + 6]) for k in range(0, len(pairs), 6)]
    for compiled in (True, False):
        fast = FastPunkt(params, compiled=compiled)
        assert identity.differences(texts, fast, reference) == []


def test_punkt_sentence_count_is_the_number_of_nltks_sentences(punkt_pair):
    """FastPunkt.count (no call chain for a text without a candidate) is the number of NLTK's sentences:
    on PUNKT_CASES, random texts and each of their lines (stripped or not), and hand-picked texts
    without a candidate (decimals, a final period, trailing whitespace NLTK's pattern does not see)."""
    import random

    identity = bench_modules.load("punkt_identity")
    fast, reference = punkt_pair
    rng = random.Random(31)
    texts = list(PUNKT_CASES) + [identity.random_text(rng) for _ in range(800)]
    texts += [line for text in texts[-400:] for line in text.split("\n")]
    texts += [line.strip() for line in texts[-800:]]
    texts += ["", " ", "\n", ".", "a.", " a. ", "0.5 s", "1.2.3", "a.b", "x. \x1c", "x.\x1c y", "a.\u2028b", "a.)",
              "a.\u00bb b", "e.g.", "U.S. x", "a!", "a?b", "\x1c", "\x1c.", "a .", "..."]
    without = 0
    for text in texts:
        want = len(reference.tokenize(text))
        assert fast.count(text) == want, repr(text)
        without += fast._candidates.search(text) is None
    assert without > 300  # the shortcut ran


def test_punkt_equals_nltk_on_the_scaling_shapes(punkt_pair):
    for text in bench_modules.load("checker_scaling").shapes(20_000).values():
        _assert_punkt_equal(*punkt_pair, text)


def test_punkt_whitespace_class_is_the_regex_engines():
    """FastPunkt runs NLTK's patterns on the stdlib engine with \\s spelled out as `regex`'s \\s."""
    import re

    import regex
    from ifpo.verifiers._punkt import REGEX_WHITESPACE

    every = "".join(map(chr, range(0x110000)))
    assert set(re.findall(f"[{REGEX_WHITESPACE}]", every)) == set(regex.findall(r"\s", every))


def test_punkt_stdlib_patterns_match_as_nltks(punkt_pair):
    import random

    fast, reference = punkt_pair
    lang = reference._lang_vars
    candidates = lang.period_context_re()._rx
    words = lang._word_tokenizer_re()._rx
    identity = bench_modules.load("punkt_identity")
    rng = random.Random(7)
    for _ in range(1500):
        text = identity.random_text(rng)
        want = [(m.span(), m.span(1), m.span(2)) for m in candidates.finditer(text)]
        assert [(m.span(), m.span(1), m.span(2)) for m in fast._candidates.finditer(text)] == want
        for line in text.split("\n"):
            assert fast._words.findall(line) == words.findall(line), repr(line)
    realign = lang.re_boundary_realignment._rx
    starters = {chr(c) for c in range(0x3100) if realign.match(chr(c) + " ")}
    assert starters and starters <= fast._closers  # the realignment shortcut's characters


def test_punkt_simple_contexts_are_two_words_of_nltks_word_pattern(punkt_pair):
    """FastPunkt decides a context matching _SIMPLE_CONTEXT ("p1.\\n\\np2." too) from its two groups alone:
    they must be exactly the words NLTK's word pattern makes of it, line by line as NLTK reads it."""
    import random

    from ifpo.verifiers._punkt import _SIMPLE_CONTEXT

    fast, reference = punkt_pair
    words = reference._lang_vars._word_tokenizer_re()._rx
    rng = random.Random(12)
    chars = "abzAZ09éßΩ中٣²ǅ"  # letters, digits, CJK, an Arabic-Indic digit, a superscript, title case
    matched = 0
    for _ in range(6000):
        word = lambda: "".join(rng.choice(chars) for _ in range(rng.randint(1, 4)))  # noqa: E731
        ctx = (word() + rng.choice([".", ".", "..", ""]) + "".join(rng.choice(" \t\r\n") for _ in range(rng.randint(1, 3)))
               + word() + rng.choice(["", ".", "..", ",", "!", ".)", "'"]))
        m = _SIMPLE_CONTEXT.fullmatch(ctx)
        if m is None:
            continue
        matched += 1 + 1000 * m.group(2).endswith(".")
        got = [w for line in ctx.split("\n") if line.strip() for w in words.findall(line)]
        assert got == [m.group(1), m.group(2)], repr(ctx)
    assert matched % 1000 > 500 and matched // 1000 > 100, matched  # contexts, ending in a period ("p2.")


def test_punkt_sentences_is_nltks_on_a_doctest_example():
    from ifpo.verifiers.text import punkt_sentences

    assert punkt_sentences("Mr. Smith went to Washington. He arrived at 5 p.m. on Tuesday. "
                           "Then he left!") == ["Mr. Smith went to Washington.",
                                                "He arrived at 5 p.m. on Tuesday.", "Then he left!"]


# --- split_sentences: pysbd's English rules in one linear pass (verifiers/_sbd.py) -------------
# The reference is stock pysbd 0.3.4 run on each line, as split_sentences once did. Exact on the
# truth table, the hand-picked texts and the realistic answers; on seeded random lines a few cases
# may differ where pysbd's placeholders shift a look-around or pysbd loses text it cannot find
# back, and each random test holds a floor well above what a broken rule would leave.

_SBD_ATOMS = ["Dr.", "dr.", "DR.", "U.S.", "u.s.", "e.g.", "i.e.", "St.", "Fig.", "No.", "a.m.", "P.M.", "Mr.",
              "Jan.", "etc.", "vs.", "p.", "pp.", "Inc.", "3.14", "1.", "2)", "a)", "(b)", "iv.", "The", "He",
              "I", "It", "we", "ran", "cat", "NASA", "file.txt", "x@y.com", " ", " ", " ", "  ", ".", ". ", "!",
              "! ", "?", "? ", "?!", "!!", "...", ". . .", "…", "'", '"', "“", "”", "(", ")", "[1]", "5", "12",
              ",", ";", ":", "-", "。", "！", "？", "中文", "é", "'s", "\t"]


def _sbd_lines(n, seed=0):
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(_SBD_ATOMS) for _ in range(rng.randint(1, 24))) for _ in range(n)]


@pytest.fixture(scope="module")
def stock_pysbd():
    """Stock pysbd on each stripped, non-blank line; pieces stripped, those without a letter or
    digit dropped (the former definition of split_sentences; bench/sentence_agreement.py's)."""
    return bench_modules.load("sentence_agreement").stock_pysbd()


# One case per rule (the expected sentences are stock pysbd's; the test below checks that too).
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
def test_split_sentences_rules(stock_pysbd, text, sentences):
    assert split_sentences(text) == sentences
    assert stock_pysbd(text) == sentences  # the table is pysbd's


@pytest.mark.parametrize("text", [
    "We met at 9 a.m. in the U.S. office. See Fig. 3.\n- a list item",
    'He yelled "Stop!" and ran. Then he fell. DR. WHO? yes!! no?! (see p. 5) 1. one 2. two',
    "Wait... what? Pi is 3.14. I.V. fluids. U.S. The end. x" * 3,
    "", "!", "a.b.c. d", "它是猫。那是狗！", "a. a. a.", "Hi. Hi.  Hi.\tHi.", "x! x!\u3000x!\u2028x", "No. 5. No. 5.",
    '"a." "a." a.', "a.a. a.a.", "1. 1. 1.", "(a) (a) (a).", "Hi.\x1cHi.\x85Hi.", "?!?! ?!?!", "... ... ...",
    "a) b) a) b)", "g.J.bi", "ae.g.Fig.", "x (see (b) Dr.", "(a) b. (b) c.", "Mr. she b. 2. 1. a.m. e.g. e.g. (see",
    "(See figure) The cat", '"Start" Button is here', "(ii) He whisks it. (iii) He pours it.", "Wow!! and x",
])
def test_split_sentences_equals_stock_pysbd(stock_pysbd, text):
    assert split_sentences(text) == stock_pysbd(text)


def test_split_sentences_equals_stock_pysbd_on_realistic_answers(stock_pysbd):
    import json
    from pathlib import Path

    path = Path(__file__).parent / "data" / "sentences_realistic.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 300
    for record in records:
        assert split_sentences(record["text"]) == stock_pysbd(record["text"]), record["id"]


def _random_chars():
    import string

    return string.ascii_letters + string.digits + string.punctuation + " \n\t" + "éßπ中文"


def _differ(stock_pysbd, lines):
    return [line for line in lines if split_sentences(line) != stock_pysbd(line)]


def test_split_sentences_agrees_with_stock_pysbd_on_random_lines(stock_pysbd):
    import random

    # abbreviations, lists, quotes and marks thrown together: 4 of 5000 differ today
    assert len(_differ(stock_pysbd, _sbd_lines(5000))) <= 10
    rng, alphabet = random.Random(12), _random_chars()
    chars = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 160))) for _ in range(3000)]
    assert len(_differ(stock_pysbd, chars)) <= 3  # 0 today
    recurring = ["".join(rng.choice(["a.", " ", "a", "!", "?", ". ", "1.", '"', "\t", "  "])
                         for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    assert len(_differ(stock_pysbd, recurring)) <= 6  # 2 today: pysbd's ". . ." placeholders
    lines = _sbd_lines(2000, seed=3)
    text = "\n".join(lines)  # all at once: the same sentences as line by line
    assert split_sentences(text) == [s for line in lines for s in split_sentences(line)]


@pytest.mark.parametrize("text", [
    "(a. " * 30_000,  # unclosed brackets: pysbd's expression would rescan the line from each one
    "“x. " * 30_000,
    "." * 120_000,
    " ".join(["1.", "2.", "a.", "b.", "(a)", "(b)", "1)", "2)", "x", "The"] * 12_000),
    "a.b1\n" * 25_000,
])
def test_split_sentences_on_long_pathological_text_ends(text):
    # a guard against a quadratic path (bench/checker_scaling.py measures the time per MB)
    assert isinstance(split_sentences(text), list)


# --------------------------------------------------------------------------- Treebank (fast == NLTK)
# word_tokenize runs verifiers/_treebank.py; NLTK's NLTKWordTokenizer().tokenize is the reference.
# Tokens must be equal on hand-picked cases for every pattern, on seeded random strings from a
# biased alphabet (bench/treebank_identity.py's generator; that script runs 200k of them), one by
# one and as the sentences of one call, with a cold and a warm cache, on the separator fallback,
# and end to end (Punkt + Treebank) against nltk.word_tokenize's composition.

TREEBANK_CASES = [
    "", " ", "\n", " \t\n ", "word", "One.", "One. ", "One.\n", "One.\n\n", "a .", ".", "..", "...", ". )", ".)",
    '"Hi," she said.', '"', '""', "''", "''hi''", " ''hi", "\t\"hi", '("hi")', '[\'\'x\'\']', '{"a": 1}',
    "He said 'hello' to me' .", "I'm'@", "they'll'?", "'", "' '", "x' y", "x'\ty", "x' ", "'tis", "'Tis true", "x 'twas", "'TWAS",
    "can't", "cannot", "CANNOT", "Cannot.", "gonna", "gotta", "gimme", "lemme", "wanna go", "wanna", "d'ye",
    "we gonna go", "Cannot be", "GIMME that", "you gotta go", "lemme see", "g\u0130mme x", "Gonna2 go", "gonna_ x",
    "more'n", "DON'T", "don't", "I'm", "you're", "we've", "they'll", "she'd", "it's", "IT'S", "o'clock",
    "rock 'n' roll", "James' book", "the '90s", "ca n't", "\u0130s 'tis", "'t\u0131s", "'t\u0130s", "wa\u017f",
    "Hello... world", "Wait.. what", "end..", "a--b", "---", "--", "a - b", "a\u2013b\u2014c\u2012d\u2015e",
    "3.14 and 1,000 or 1,a and x:1 y:z", "a,", "a:", "a,\n", "x,,\n", "a,,b", "a:,b", "a;b@c#d$e%f&g*h",
    "Is it? Yes! No?!", "(a) [b] {c} <d>", "((x))", "f(x)=y.", "end.)", "end.\")", "end.' ", "end. \t)", "end.\n)", "Hello. ) ]", 'He said "Stop. "',
    "end. ' ", "x. \u201d \u2019", "x.) ] }", 'a. " )\n', "a, )", "a: ]", "'' )", '" "',
    "Mr. Smith went to D.C. today.", "U.S.", "e.g. this", "http://example.com/a?b=1&c=2.", "me@x.org.",
    "\u201cQuote\u201d \u2018single\u2019 \xabguil\xbb \u201elow\u201c ``tick'' `one` ```three```",
    "caf\xe9 na\xefve \u4e2d\u6587\u3002 \ud55c\uad6d\uc5b4. \u0438\u0434\u0442\u0438.", "x\u0301'y a\u0301'tis",
    "tab\there\nnew\r\nline\x0bvt\x0cff\x85nel\xa0nbsp\u2000en\u3000ideo", "a\x1cb\x1dc\x1ed\x1fe.",
    "\x1c'x' \x1f\"y\"", "\ufdd0 \ufdd1x\ufdd2.", "\ufdd6x \ufdd8(((( '\ufdd4 \ufdd9\ufdda \"x\ufdd9.",
    # chunks over _treebank._LONG characters are cut between adjacent brackets
    "{" * 300 + "[" * 300 + "]" * 300 + "}" * 300, "(" * 600 + "x." + ")" * 600, "[" * 700 + '"' + "]" * 700 + ".",
    "<" * 600 + "'s" + ">" * 600 + ":", '"' + "(" * 600 + "." + ")" * 600 + "'", "a " + "([" * 600 + " )",
    "\ufdd0" + "{" * 1200 + "'", "\x1c" + "[" * 1100 + '"x.' + "]" * 10 + " ] ",
]


@pytest.fixture(scope="module")
def treebank_reference():
    from ifpo.verifiers.text import _treebank

    return _treebank().tokenize


@pytest.mark.parametrize("text", TREEBANK_CASES)
def test_treebank_equals_nltk_on_hand_picked_cases(treebank_reference, text):
    from ifpo.verifiers import _treebank

    want = treebank_reference(text)
    _treebank._CACHE.clear()
    assert _treebank.tokenize(text) == want  # cold: every piece tokenized afresh
    assert _treebank.tokenize(text) == want  # warm: from the cache
    assert _treebank.tokenize_sentences([text, text, "x."]) == want + want + ["x", "."]
    # and without the cache (whole sentences in one batch), the path text of unique chunks takes
    assert _treebank.tokenize_uncached([text]) == want
    assert _treebank.tokenize_uncached([text, text, "x."]) == want + want + ["x", "."]
    # and with the sentence-end patterns run on the tails alone (the path of long sentences)
    assert identity_split_tails([text, text, "x."]) == want + want + ["x", "."]


def identity_split_tails(sentences):
    """tokenize_uncached with every sentence cut into head and tail (as long sentences are)."""
    return bench_modules.load("treebank_identity").uncached_split_tails(sentences)


def test_treebank_long_cases_are_long():
    from ifpo.verifiers import _treebank

    assert sum(len(max(text.split() or [""], key=len)) > _treebank._LONG for text in TREEBANK_CASES) >= 8


@pytest.mark.parametrize("seed", range(4))
def test_treebank_equals_nltk_on_random_strings(treebank_reference, seed):
    import random

    from ifpo.verifiers import _treebank

    identity = bench_modules.load("treebank_identity")
    rng = random.Random(seed)
    strings = [identity.random_string(rng) for _ in range(400)]
    _treebank._CACHE.clear()
    assert identity.differences(strings, treebank_reference) == []


def test_treebank_without_a_free_separator_tokenizes_piece_by_piece(treebank_reference, monkeypatch):
    # Every separator candidate occurs in the text: the batch cannot be joined, each piece runs alone.
    from ifpo.verifiers import _treebank

    monkeypatch.setattr(_treebank, "_SEPARATORS", ["x"])
    texts = ['x "x" x. ', "x'tis x.", "x,\n", "(x.)"]
    _treebank._CACHE.clear()
    assert _treebank.tokenize_sentences(texts) == [t for s in texts for t in treebank_reference(s)]
    assert _treebank.tokenize_uncached(texts) == [t for s in texts for t in treebank_reference(s)]
    _treebank._CACHE.clear()


def test_treebank_takes_the_uncached_path_on_text_of_new_chunks(monkeypatch):
    """Text of mostly new chunks (random characters, distinct numbers) skips the cache; text that repeats
    its chunks (prose, a few values, deep nesting), and text the cache has seen, use it."""
    import json

    from ifpo.verifiers import _treebank
    from ifpo.verifiers.text import punkt_sentences

    shapes = bench_modules.load("checker_scaling").shapes(40_000)
    shapes["distinct_values"] = "".join(f"{i / 10:.1f} s\n" for i in range(7000))
    shapes["distinct_strings"] = json.dumps([f"{i / 10:.1f} s" for i in range(4000)])
    shapes["few_values"] = "".join(f"{i % 90 / 10:.1f} s\n" for i in range(7000))
    shapes["csv"] = "name,count,city\n" + "apple,3,Paris\n" * 3000
    calls = []
    monkeypatch.setattr(_treebank, "tokenize_uncached", lambda s: calls.append(len(s)) or [])
    _treebank._CACHE.clear()
    for shape, uncached in [("random_chars", True), ("distinct_values", True), ("distinct_strings", True),
                            ("prose", False), ("few_values", False), ("csv", False), ("deep_nesting", False)]:
        calls.clear()
        _treebank.tokenize_sentences(punkt_sentences(shapes[shape]))
        assert bool(calls) is uncached, shape
    sentences = punkt_sentences(shapes["random_chars"])
    _treebank.tokens_of(_treebank.sentence_keys(sentences))  # now cached: a second call reads the cache
    calls.clear()
    _treebank.tokenize_sentences(sentences)
    assert not calls
    _treebank._CACHE.clear()


def test_treebank_literal_steps_equal_their_patterns():
    """The steps run by str.replace give the string their pattern gives, on every kind of piece."""
    import random

    import regex
    from ifpo.verifiers import _treebank

    identity = bench_modules.load("treebank_identity")
    rng = random.Random(7)
    texts = [identity.random_string(rng) for _ in range(300)] + ["``` `` ` --- -- ''' '' \"\" \u00ab\u00bb;;@ \u2013\u2014"]
    texts += ["a,\ufdd9b:\n\ufdd9,,\ufdd9:\n\n\ufdd9x, \ufdd9,:\ufdd9\n,\ufdd9", "\ufdd9".join(texts[:50])]
    # each str.replace step with and without what sends it back to its pattern (touching quotes, , and :)
    plain = ['"a, b: c (" x \'\'y [\'\'z {"w <"v', '"x,y:z, ,a :b', "\ufdd9\"a\ufdd9\"b ''c"]
    blocked = ['x ""y', "x \"''y", "x ''\"y", "(''' a", "a,,b: c", "a,, b", "a,: b", "a:, b", "a:: b"]
    texts += plain + blocked + ["\ufdd9".join(plain + blocked), " ".join(plain + blocked)]
    for sep, tail in [("\ufdd9", True), ("\ufdd9", False), (None, True), (None, False)]:
        passes = _treebank._passes(sep, tail)
        steps = passes.before_pad + passes.after_pad
        literal = [(source, step[1]) for source, step in zip(passes.sources, steps) if step[0] is None]
        assert len(literal) >= (11 if sep else 9)
        for (pattern, repl, _), step in literal:
            compiled = regex.compile(pattern)
            for text in texts:
                want = " ".join(compiled.split(text)) if repl is _treebank._PAD else compiled.sub(repl, text)
                assert step.run(text) == want, (pattern, text)


def test_treebank_compiled_padding_is_built(can_compile, monkeypatch):
    """Where a C compiler is, the install builds verifiers/_treebank_scan.pyx, so it must be there
    (without it the padding steps run str.replace per character: the same tokens, slower)."""
    from ifpo.verifiers import _treebank

    if os.environ.get("IFPO_TREEBANK_PURE", "") not in ("", "0"):
        pytest.skip("IFPO_TREEBANK_PURE is set: str.replace pads by request")
    if _treebank._PADDER is None and not can_compile:
        pytest.skip("no C compiler or Python headers here: the compiled padding cannot be built")
    assert _treebank._PADDER is not None, "ifpo.verifiers._treebank_scan is not built: reinstall (pip install -e .)"
    monkeypatch.setenv("IFPO_TREEBANK_PURE", "1")
    assert _treebank._compiled_padder() is None


def test_treebank_compiled_padding_equals_str_replace():
    """pad(text, chars) is str.replace(c, " c ") for each character in turn, on strings of every kind
    (1-, 2- and 4-byte), with padded characters inside and outside ASCII; it refuses what the one
    scan cannot do (a space, a character twice, over 32)."""
    import random

    from ifpo.verifiers import _treebank

    if _treebank._PADDER is None:
        pytest.skip("the compiled padding is not built")
    pieces = list(";@#$%&*[](){}<>?!a Z1\n\t.,'\"") + ["\u2013", "\u2014", "\u00e9", "\u00ab", "\u201c", "\u4e2d",
                                                       "\U0001f600", "\U0010ffff", "\ufdd9"]
    rng = random.Random(21)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for chars in [";@#$%&\u2012\u2013\u2014\u2015", "*[](){}<>", "?!", "\u00ab\u201c\u2018\u201e", "\U0001f600;",
                  "a", ""]:
        for text in texts:
            want = text
            for c in chars:
                want = want.replace(c, f" {c} ")
            assert _treebank._PADDER.pad(text, chars) == want, (chars, text)
    for bad in [" ;", ";;", "\u2013\u2013", "".join(map(chr, range(33, 66)))]:
        with pytest.raises(ValueError):
            _treebank._PADDER.pad("a; b", bad)


def test_treebank_tokens_are_the_same_with_the_compiled_padding(treebank_reference, monkeypatch):
    import random

    from ifpo.verifiers import _treebank
    from ifpo.verifiers.text import punkt_sentences

    if _treebank._PADDER is None:
        pytest.skip("the compiled padding is not built")
    identity = bench_modules.load("treebank_identity")
    rng = random.Random(5)
    strings = [identity.random_string(rng) for _ in range(400)]
    shapes = list(bench_modules.load("checker_scaling").shapes(20_000).values())
    _treebank._CACHE.clear()
    compiled = [_treebank.tokenize_sentences([s]) for s in strings] + [
        _treebank.tokenize_sentences(punkt_sentences(t)) for t in shapes]
    monkeypatch.setattr(_treebank, "_PADDER", None)
    _treebank._CACHE.clear()
    pure = [_treebank.tokenize_sentences([s]) for s in strings] + [
        _treebank.tokenize_sentences(punkt_sentences(t)) for t in shapes]
    _treebank._CACHE.clear()
    assert compiled == pure
    assert compiled[:400] == [treebank_reference(s) for s in strings]


def test_treebank_survives_the_cache_emptied_meanwhile(treebank_reference, monkeypatch):
    # Another thread may empty the shared cache between filling it and reading the tokens back.
    from ifpo.verifiers import _treebank

    fill = _treebank._fill

    def fill_then_empty(misses, cache):
        fill(misses, cache)
        if cache is _treebank._CACHE:
            cache.clear()

    monkeypatch.setattr(_treebank, "_fill", fill_then_empty)
    texts = ['He said "no." ', "They'll go (now).", "x"]
    _treebank._CACHE.clear()
    assert _treebank.tokenize_sentences(texts) == [t for s in texts for t in treebank_reference(s)]


def test_treebank_engine_facts_it_relies_on():
    """What _treebank assumes of the two regex engines, over every code point."""
    import re

    import regex
    from ifpo.verifiers import _treebank

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    spaces = set(regex.findall(r"\s", every))
    # str.split() breaks on regex's whitespace and on exactly the four _SPLIT_ONLY_WS characters.
    assert {c for c in every if c.isspace()} - spaces == set("\x1c\x1d\x1e\x1f")
    assert all(c.isspace() for c in spaces)
    # The whitespace the patterns' collapse turns into spaces: regex's \s but the space (ASCII ones apart).
    assert len(_treebank._OTHER_WS) == len(spaces) - 1 and set(_treebank._OTHER_WS) == spaces - {" "}
    assert _treebank._ASCII_OTHER_WS == "".join(c for c in _treebank._OTHER_WS if c.isascii())
    # The separators are nothing any pattern names: not word, digit or space in either engine.
    for sep in _treebank._SEPARATORS:
        assert not regex.match(r"[\w\d\s]", sep) and not re.match(r"[\w\d\s]", sep)
    # Under re's case folding, the contractions' letters match only these non-ASCII characters.
    folding = {c for letter in "acdegilmnorstwy" for c in re.findall(f"(?i){letter}", every) if c.lower() != letter}
    assert folding == {"\u0130", "\u0131", "\u017f"}


def test_word_tokenize_is_punkt_then_nltks_treebank(treebank_reference):
    import random

    from ifpo.verifiers.text import _punkt_reference, word_tokenize

    def nltk_word_tokenize(text):  # nltk.word_tokenize's composition, on the same Punkt parameters
        return [t for s in _punkt_reference().tokenize(text) for t in treebank_reference(s)]

    texts = list(bench_modules.load("checker_scaling").shapes(4_000).values())
    identity = bench_modules.load("treebank_identity")
    rng = random.Random(5)
    texts += [" ".join(identity.random_string(rng) for _ in range(rng.randint(1, 12))) for _ in range(80)]
    for text in texts:
        assert word_tokenize(text) == nltk_word_tokenize(text), repr(text[:80])


# --- split_sentences on plain prose: pysbd's sentences ------------------------------------------

_PLAIN_WORDS = ["the", "red", "moves", "and", "a", "A", "I", "Alice", "JSON", "it", "He", "Yahoo", "Yum", "Co", "KG",
                "x", "Mr", "dr", "stays", "st", "no", "is", "iv", "v", "am", "PM", "U", "However", "fig", "etc",
                "don't", "it's", "dogs'", "I'm", "'tis", "O'Neil", "x'", "3", "12", "2023", "1st", "3rd", "No",
                "p", "pp", "v2", "1a", "1.5", "12.25", "0.1.2", "v1.2", "a1.5", "1.5a", "No1.5"]
_PLAIN_SEPS = [" ", " ", "  ", ", ", "; ", ": ", ",", ". ", "! ", "? ", ".  ", "!", "?", "."]


def _plain_pieces(n, seed=0):
    import random

    rng = random.Random(seed)
    for _ in range(n):
        words = [rng.choice(_PLAIN_WORDS) for _ in range(rng.randint(1, 12))]
        words = [w.upper() if rng.random() < 0.15 else w for w in words]
        piece = "".join(w + rng.choice(_PLAIN_SEPS) for w in words).strip()
        if piece:
            yield piece


@pytest.mark.parametrize("piece", [
    "The red circle moves. Then it stops!", "wow! and more? yes. Ok", "Hi, there; you: ok! No",
    "It is. fine", "Alice met Bob. a. b", "I. Then", "Go to St. Louis", "Yahoo! Great", "Acme Co. KG is big.",
    "x  y.  Z", "Stop!  and go", "Why? because", "end.", "one, two; three: four",
    "Don't stop. It's fine, the dogs' bowls are full! Rock'n'roll", "He said 'go' now. Then", "Wow!' Then",
    "In 2023 we had 3 cats. Then 2 left!", "3 cats. Two", "It costs 3 50 now. Ok", "Item 1a works. Next",
    "It rose 12.5 percent. Then 3.25 more", "12.3 s", "v1.2.3 is out! and 1.5a too", "No1.5 is. Fig 2.5",
    "Dr. Smith came.", "Plan A. Then", "a. b. c.", 'He said "Stop." Then', "x (y). Z", "a-b. C", "Hi!! No",
    "tab\there. Now", "U.S. based", "say 'hi' There", "'tis. So", "It's. Yes", "Chapter 5. Next", "1. item",
    "See No. 5 here", "x 3rd. Y",
])
def test_plain_prose_is_split_as_pysbd_splits(stock_pysbd, piece):
    assert split_sentences(piece) == stock_pysbd(piece)


def test_plain_prose_is_split_as_pysbd_splits_on_random_pieces(stock_pysbd):
    pieces = list(_plain_pieces(3000))
    assert _differ(stock_pysbd, pieces) == []
    text = "\n".join(_plain_pieces(800, seed=1)) + "\n" + " ".join(_plain_pieces(300, seed=2))  # one long line too
    assert split_sentences(text) == stock_pysbd(text)


@pytest.mark.parametrize("piece, sentences", [
    ("It rose 12.5 percent. Then 3.25 more", ["It rose 12.5 percent.", "Then 3.25 more"]),
    ("12.3 s", ["12.3 s"]),
    ("v1.2.3 is out! Then", ["v1.2.3 is out!", "Then"]),
])
def test_decimal_points_end_no_sentence(piece, sentences):
    assert split_sentences(piece) == sentences


def test_clear_caches_empties_the_text_keyed_caches():
    # bench/checker_scaling.py times each checker cold through this; a clear that missed a cache
    # would let one checker's timing ride on another's work on the same text.
    from ifpo.verifiers import _treebank
    from ifpo.verifiers import text as text_module

    text_module.word_tokenize("A cold start. Then a warm one!")
    splitter = text_module._punkt()
    assert _treebank._CACHE and splitter._decisions
    text_module.clear_caches()
    assert not _treebank._CACHE
    assert not (splitter._decisions or splitter._before or splitter._after)
    assert text_module.word_tokenize("A cold start. Then a warm one!")[-2:] == ["one", "!"]


@pytest.mark.parametrize("seed", range(2))
def test_treebank_chunk_tokens_are_the_tokens_of_those_chunks(treebank_reference, seed):
    """chunk_tokens with a pattern every chunk matches gives NLTK's tokens of the whole text (as a
    multiset: heads, then tails), each chunk in its context; with a pattern none matches, nothing."""
    import random
    import re
    from collections import Counter

    from ifpo.verifiers import _treebank

    identity = bench_modules.load("treebank_identity")
    rng = random.Random(seed)
    every, letter_q = re.compile(r"[^\s\ufdd0-\ufdef]"), re.compile("q")
    checked = 0
    for _ in range(400):
        sentences = [identity.random_string(rng) for _ in range(rng.randint(1, 8))]
        got = _treebank.chunk_tokens(sentences, every)
        if got is None:  # U+001C-U+001F or a noncharacter in the text: the caller tokenizes it whole
            assert any(re.search("[\x1c-\x1f\ufdd0-\ufdef]", s) for s in sentences)
            continue
        checked += 1
        assert Counter(got) == Counter(t for s in sentences for t in treebank_reference(s)), sentences
        assert _treebank.chunk_tokens(sentences, letter_q) == []
    assert checked > 150
    # past ``limit`` chunks the caller is told to tokenize the text whole
    assert _treebank.chunk_tokens(["a b.", "c"], every, limit=2) is None
    assert _treebank.chunk_tokens(["a b.", "c"], every, limit=3) == ["a", "b", ".", "c"]  # heads, then tails


def test_treebank_final_period_steps_equal_their_patterns():
    """The two final-period steps, run with the stdlib engine as split and join (period first), give the
    string NLTK's patterns (the regex engine, as written in _Passes.sources) give, with and without the
    separator, on random strings and on pieces ending in periods, closers and whitespace."""
    import random

    import regex
    from ifpo.verifiers import _treebank

    identity = bench_modules.load("treebank_identity")
    rng = random.Random(9)
    ends = [".", "..", ". ", ".)", '."', ".')", ". ) ]", ".\n", ".\u00a0", ".\u2019", ".\x85 ", "x", ".\x1c", "\u00bb."]
    texts = [identity.random_string(rng) + rng.choice(ends) for _ in range(400)]
    texts += ["".join(rng.choice(["a", ".", " ", ")", "'", '"', "\n", "\u201d"]) for _ in range(rng.randint(1, 12)))
              for _ in range(600)]
    for sep, sep_char in [(None, ""), ("\ufdd9", "\ufdd9")]:
        passes = _treebank._passes(sep, True)
        finals = [i for i, (pattern, _, needs) in enumerate(passes.sources) if needs == (".",) and "(\\.)" in pattern]
        assert len(finals) == 2
        pieces = texts if sep is None else [sep_char.join(texts[i : i + 7]) + sep_char for i in range(0, len(texts), 7)]
        for i in finals:
            pattern, repl, _ = passes.sources[i]
            compiled, step_repl, _ = passes.before_pad[i]
            assert step_repl is _treebank._PAD
            want_pattern = regex.compile(pattern)
            for text in pieces:
                assert " ".join(compiled.split(text)) == want_pattern.sub(repl, text), (pattern, text)


def test_treebank_context_markers_equal_the_former_subs():
    """_mark_contexts (str.replace per whitespace character) puts in the markers that the former re.sub
    passes with a Python function per match put in: before each chunk starting with " or '', after each
    ending with ', by the whitespace next to it or the sentence's edge. Equal on random sentences of
    quotes, apostrophes, letters and every whitespace character the keyed sentences can hold."""
    import random
    import re

    from ifpo.verifiers import _treebank

    quote_start = re.compile("(?:^|(?<=(\\s)))(?=\"|'')")
    apostrophe_end = re.compile("(?<=')(?=(\\s)|\\Z)")

    def former(s: str) -> str:
        marked = s
        if '"' in s or "''" in s:
            marked = quote_start.sub(lambda m: _treebank._BEFORE.get(m.group(1) or "", "\ufdd2"), marked)
        if "'" in s:
            marked = apostrophe_end.sub(lambda m: _treebank._AFTER.get(m.group(1) or "", "\ufdd5"), marked)
        return marked

    rng = random.Random(12)
    # every whitespace character a keyed sentence can hold (Python's own, less the four U+001C-U+001F)
    spaces = [c for c in map(chr, range(0x3001)) if c.isspace() and not "\x1c" <= c <= "\x1f"]
    atoms = ['"', "'", "''", '"', "'", "a", "b.", "`", " ", " ", *spaces]
    checked = 0
    for _ in range(20000):
        s = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 14)))
        if not s.split():
            continue
        checked += 1
        assert _treebank._mark_contexts(s) == former(s), repr(s)
    assert checked > 15000


def test_treebank_clitic_passes_equal_nltks_patterns():
    """The two clitic passes on the stdlib engine (a space put before each apostrophe the first one
    splits off; the second as split and join, its look-behind after the clitic) give the string NLTK's
    patterns give (the regex engine, " \\1 "), on random strings of clitics, apostrophes, letters and
    spaces (whitespace is only spaces there: it was collapsed before)."""
    import random

    import regex
    from ifpo.verifiers import _treebank

    first = regex.compile(r"(?<=[^' ])('[sS]|'[mM]|'[dD]|') ")
    second = regex.compile(r"(?<=[^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ")
    (pattern, repl, _), = _treebank._passes("\ufdd9", True).clitics
    rng = random.Random(13)
    atoms = ["'", "'", "s", "S", "m", "M", "d", "D", "ll", "LL", "re", "RE", "ve", "VE", "n", "t", "T", "N",
             "n't", "N'T", "'s", "x", " ", " ", "  ", "\ufdd9"]
    for _ in range(20000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 14)))
        assert pattern.sub(repl, text) == first.sub(r" \1 ", text), repr(text)
        assert " ".join(_treebank._CLITICS_2.split(text)) == second.sub(r" \1 ", text), repr(text)


def test_treebank_skipped_steps_could_not_have_matched():
    """Where the tokenizer skips a step because what every match needs is absent (a literal step's
    needs, a period after another character for the final-period steps, an ASCII letter for the
    contractions, a bracket for the long-tail cut), the step leaves the text as it is:
    on random strings, runs of periods and texts without letters."""
    import random
    import re
    import string

    from ifpo.verifiers import _treebank

    identity = bench_modules.load("treebank_identity")
    rng = random.Random(14)
    texts = [identity.random_string(rng) for _ in range(3000)]
    texts += ["." * rng.randint(1, 30) + rng.choice(["", " ", ")", "'", ". .", "\ufdd9", "\ufdd9."]) for _ in range(300)]
    texts += ["".join(rng.choice(".,:;'\"`()[]{}<> -!?0123456789\n\u00bb\u201d\u2019") for _ in range(rng.randint(1, 20)))
              for _ in range(3000)]
    skipped = {"literal": 0, "gated": 0, "contractions": 0, "brackets": 0}
    for sep in (None, "\ufdd9"):
        for tail in (False, True):
            passes = _treebank._passes(sep, tail)
            for text in texts:
                for pattern, repl, needs in passes.before_pad + passes.after_pad:
                    if pattern is None and repl.needs is not None and not any(n in text for n in repl.needs):
                        skipped["literal"] += 1
                        assert repl.run(text) == text, (needs, text)
                    if isinstance(pattern, _treebank._Gated) and pattern.gate.search(text) is None:
                        skipped["gated"] += 1
                        assert pattern.pattern.split(text) == [text], text
                if not _treebank._has_ascii_letter(text) and not any(c in text for c in "\u0130\u0131\u017f"):
                    skipped["contractions"] += 1
                    assert all(p.sub(r" \1 \2 ", text) == text for p in passes.contractions), text
    for text in texts + [c * 3 for c in string.printable + "\x1c\x1d\x1e\x1f\ufdd0\ufdef\ufdcf\ufdf0"]:
        assert _treebank._has_ascii_letter(text) == (re.search("[A-Za-z]", text) is not None), text
        assert _treebank._has_unmarkable(text) == (re.search("[\x1c-\x1f\ufdd0-\ufdef]", text) is not None), text
        if not any(c in text for c in _treebank._BRACKETS):
            skipped["brackets"] += 1
            assert _treebank._LAST_BRACKET_PAIR.search(text) is None, text
    assert min(skipped.values()) > 100, skipped
