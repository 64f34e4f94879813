"""Each speed-up of the Video-IFBench checkers (issue 12: <= 0.2 s/MB) gives the former code's answer.

Former code that stands alone (whitespace, lines, the balanced-block scan) is kept here as the
reference. The former checkers called the module's own private helpers (a bug there sat on both
sides), so their answers on hand-picked and seeded random inputs, reason text included, are
recorded instead (tests/data/golden, tests/golden.py) and the checkers compared with them.
"""

from __future__ import annotations

import random
import re

import pytest
from golden import assert_golden
from ifpo.verifiers import text as text_module
from ifpo.verifiers.rules import video_ifbench as v
from ifpo.verifiers.text import (
    squash_whitespace,
)

# ------------------------------------------------------------------------------ former references


def former_squash_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def former_nonblank_lines(text: str) -> list[str]:
    zero_width = str.maketrans("", "", "\u200b\u200c\u200d\u2060\ufeff")
    return [ln for ln in text.splitlines() if ln.translate(zero_width).strip()]


def former_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def former_first_balanced_block(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


# --------------------------------------------------------------------------------------- helpers


def _texts(rng: random.Random, atoms: list[str], n: int, longest: int) -> list[str]:
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, longest))) for _ in range(n)]


_WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()]


def test_squash_whitespace_and_line_helpers_equal_the_former_ones():
    # every character \s matches (the same set as str.isspace) and random mixtures
    space = re.compile(r"\s").match
    assert [c for c in map(chr, range(0x110000)) if space(c)] == [c for c in map(chr, range(0x110000)) if c.isspace()]
    rng = random.Random(5)
    atoms = [*_WHITESPACE, "a", "b", "\u200b", "\ufeff", "\u2060", "é", "中", "\r\n", "\x00", "-"]
    texts = ["", " ", "\u200b", " \u200b \n x", *_texts(rng, atoms, 4000, 14)]
    for text in texts:
        assert squash_whitespace(text) == former_squash_whitespace(text), repr(text)
        assert text_module.nonblank_lines(text) == former_nonblank_lines(text), repr(text)
        assert v._lines(text) == former_lines(text), repr(text)


_JSONISH = ['{', '}', '[', ']', '"', '\\', 'a', '1', ',', ':', ' ', '\n', '```', '```json\n', 'null', '0',
            '"x"', '{"a": 1}', '[1, 2]', 'true']


def test_scorer_json_reads_the_candidates_lazily_with_the_same_result():
    rng = random.Random(6)
    texts = ['{"a": 1}', "```json\n[1]\n```", "x {1} [2]", '{"a": "}"} tail', *_texts(rng, _JSONISH, 4000, 12)]
    assert_golden("video_ifbench_scorer_json_where", texts, [v._scorer_json_where(text) for text in texts])


def test_first_balanced_block_equals_the_character_loop():
    # strings (escapes, an escaped quote, a backslash last, one never closed), both bracket kinds,
    # and long texts whose closing bracket falls at, before and after a scan chunk's edge, with
    # strings before it (the block is cut from the text, strings included)
    rng = random.Random(16)
    atoms = ["{", "}", "[", "]", '"', "\\", "a", " ", "\n", '\\"', "{}", "[]", '"x"', '"}"', '"\\\\"', "中", ":"]
    texts = ['{"a": "}"} tail', '["\\"]"]', '{"a\\', '{"', "x[1, [2]] {3}", *_texts(rng, atoms, 20000, 20)]
    chunk = v._SCAN_CHUNK
    for n in (chunk - 3, chunk - 2, chunk - 1, chunk, chunk + 1, 2 * chunk - 1):
        texts += ["{" + "a" * (n - 1) + "}x}", '{"q\\"}"' + "a" * (n - 7) + "}}", "[" + "[]" * (n // 2) + "]" + "]",
                  "{" + '"s"' * 9 + "{" * n + "}" * n + "}", "{" + "{" * n + '"' + "}" * (n + 1)]
    for text in texts:
        assert v._first_balanced_block(text) == former_first_balanced_block(text), repr(text[:80])


def test_bare_word_pattern_matches_as_the_lookbehind_first_one():
    # phrase mentions and keyword counts: needles with word and non-word edges ("C++", ".x"), case
    # pairs of unequal spelling under IGNORECASE (K / Kelvin sign, s / long s, I / dotted I), kana and
    # digits as word characters; search and findall (counts of non-overlapping matches) alike
    rng = random.Random(17)
    atoms = ["a", "A", "b", "k", "\u212a", "s", "\u017f", "i", "I", "\u0130", "+", ".", " ", "_", "1", "\u3042", "-",
             "C++", "ab", "a b", "\n"]
    pairs = [("a\nb", "xa\nb a\nb"), ("C++", "xC++ C++"), ("\u212a", "k K \u212a")]
    for _ in range(8000):
        needle = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 4))).strip() or "a"
        pairs.append((needle, "".join(rng.choice(atoms) for _ in range(rng.randint(0, 16)))))
    for needle, hay in pairs:
        for flags in (0, re.IGNORECASE):
            former = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)", flags)
            new = re.compile(v._bare_word(needle), flags)
            assert [m.span() for m in new.finditer(hay)] == [m.span() for m in former.finditer(hay)], (needle, hay)


def _listed(found):
    items, how = found
    return list(items[:50]) if isinstance(items, v._Numbered) else list(items), how


def test_list_like_items_equal_the_former_line_loops():
    # markers with every kind of whitespace after them (line ends of every kind too), intro lines
    # ending with ":" (all of them, the last kept), commas of both kinds with spaces around them
    rng = random.Random(18)
    atoms = ["1.", "2)", "-", "*", "•", "+", " ", "\t", "\u3000", "\x85", "\u2028", "\r\n", "\n", "\n", "a", "b c",
             ":", "：", ",", "，", " , ", "0", "12", "[", "]", '"x"', "happy", "\x1c", "\x0b"]
    texts = ["", "a:", "a:\nb:", "a:\nb:\nc, d", "- a\n- b", "1.\nx", "-\u3000a", "3", "a , , b", ":\n:\n1, 2",
             *_texts(rng, atoms, 20000, 14)]
    assert_golden("video_ifbench_list_like_items", texts, [_listed(v._list_like_items(text)) for text in texts])


def test_word_count_equals_substituting_han_and_translating():
    # Han of each block and its edges, kana, Hangul, digits, "_", every fold character, joiners at
    # word edges and doubled, whitespace of several kinds
    rng = random.Random(20)
    han = ["\u3400", "\u4dbf", "\u4e00", "\u9fff", "\uf900", "\ufaff", "\u33ff", "\u4dc0", "\ufb00"]
    atoms = [*han, "\u3042", "\uac00", "a", "Z", "3", "_", "-", "'", "--", "''", " ", "\n", "\u3000", "\t", "é",
             "’", "‘", "‛", "`", "´", "–", "—", "－", "‐", "‑", "‒", ".", "\u0301"]
    former_fold = str.maketrans({"’": "'", "‘": "'", "‛": "'", "`": "'", "´": "'", "–": "-", "—": "-",
                                 "－": "-", "‐": "-", "‑": "-", "‒": "-"})
    word = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
    former_han = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    for text in ["它是cat和dog", "안녕하세요 세계", "3.5", "don't", *_texts(rng, atoms, 20000, 16)]:
        former = len(word.findall(former_han.sub(" ", squash_whitespace(text).translate(former_fold))))
        assert v._count_words(text) == former, repr(text)


def test_single_quoted_segments_match_as_with_the_lookbehind_first():
    rng = random.Random(22)
    former = re.compile(r"(?<!\w)'([^'\n]+)'(?!\w)")
    for text in ["'a' b'c' 'd'e", *_texts(rng, ["'", "a", " ", "\n", "_", "é", "数", "''", ".", "1"], 20000, 14)]:
        assert v._SINGLE_QUOTED.findall(text) == former.findall(text), repr(text)
        assert [m.span() for m in v._SINGLE_QUOTED.finditer(text)] == [m.span() for m in former.finditer(text)]


_VALUE_ATOMS = ["1.5 s", "2.0 s", "top", "TOP", "left", "x", ";", "；", "\n", "\n\n", " ", ",", "[", "]", "{",
                "}", '"', ":", "0", "true", "null", '"top"', '"a": ', "é"]


def _value_params(rng: random.Random) -> dict:
    return {
        "allowed_patterns": rng.choice([None, [r"\d+\.\d s"], [r"t.p", r"x+"], [r"\w"], [r"(?i)l"]]),
        "allowed_values": rng.choice([None, ["top", "left"], ["x", "True", "TOP"], ["1.5 s"]]),
        "require_full_match": rng.random() < 0.5,
        "ignore_case": rng.random() < 0.5,
        "allow_multiple": rng.random() < 0.6,
        "separator_pattern": rng.choice([v._DEFAULT_SEPARATOR, ",", r"\s+", " "]),
    }


def test_normalized_value_format_equals_the_former_loop():
    rng = random.Random(7)
    exact = {"allowed_patterns": None, "allowed_values": ["top"], "require_full_match": True, "ignore_case": False,
             "allow_multiple": True, "separator_pattern": v._DEFAULT_SEPARATOR}
    cases = [("top; top; x", _value_params(random.Random(1))), ("1.5 s\n" * 5, _value_params(random.Random(2))),
             ("top; TOP; top", exact), ("TOP; top", exact), ('["top", "TOP", "top"]', exact)]
    cases += [(text, _value_params(rng)) for text in _texts(rng, _VALUE_ATOMS, 4000, 10)]
    assert_golden("video_ifbench_normalized_value_format", cases,
                  [v.normalized_value_format(text, params) for text, params in cases])


_SPAN_ATOMS = ["0:05", "00:09", "1:02:03", "3.5s", "7 s", "12", "5", ".", ":", "：", "-", "–", "—", "~", "～", "->",
               "-->", " to ", " TO ", " until ", " UNTIL ", "till", "through", "到", "至", "from ", "between ",
               "BETWEEN ", " and ", "start ", "Starting at ", "begin: ", "end ", "ends ", "开始", "结束", "从", "秒",
               " seconds", " SECS", " ", "\n", "x", "_", "ſ", "s", "a", "{", "}", '"start": ', '"end": ', ",", "[",
               "]", '"', "3", "9", "ſtart ", "begİn ", "BeGın ", "3ſ", " ſecs", "12\u3000secs", "5 SeConD"]


def test_fast_span_patterns_match_as_the_readable_ones():
    rng = random.Random(8)
    separators = ["-->", "->", "-", "–", "—", "~", "～", "to", "until", "till", "through", "到", "至"]
    texts = ["00:05-00:09", "between 1s and 2s", "start 1:00, end 2:00", "ab12s-3s", "3s-4", "5to7 s",
             *(f"{a}{ws}{sep}{ws}{b}" for a, b in (("1s", "2s"), ("0:01", "0:02"), ("1.5 SECONDS", "3"))
               for sep in separators + [s.upper() for s in separators] for ws in ("", " ", "\u3000")),
             *_texts(rng, _SPAN_ATOMS, 5000, 12)]
    for flags in (0, re.IGNORECASE):
        for old, new in zip(v._SPAN_PATTERNS, v._SPAN_RES[flags]):
            old_re = re.compile(old, flags)
            for text in texts:
                got = [(m.span(), m.groups()) for m in new.finditer(text)]
                assert got == [(m.span(), m.groups()) for m in old_re.finditer(text)], (old, text, flags)


def test_rounded_seconds_skips_round_only_where_it_changes_nothing():
    """_rounded_seconds leaves out round(x, 3) for a number without a ".": equal to rounding every one,
    for integers of any length (to inf), decimals and units."""
    rng = random.Random(10)
    units = ["", "s", " s", "秒", "\u3000SECS", " seconds", "ſ", "Sec"]
    numbers = ["0", "7", "1" * 400, "9" * 17, "123456789012345678901234567890", "0.0005", "2.0005", "1.2345"]
    numbers += ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 25))) for _ in range(500)]
    numbers += [f"{rng.randint(0, 10**9)}.{rng.randint(0, 10**6)}" for _ in range(500)]
    for number in numbers:
        for unit in units:
            token = number + unit
            want = (round(float(number), 3), bool(unit))
            assert v._rounded_seconds(token) == want, token


def test_span_localization_equals_the_former_loop():
    rng = random.Random(9)
    distinct = "".join(f"{i}s - {i + 1}s jump\n" for i in range(300))  # many distinct spans
    cases = [distinct, distinct * 2, '[{"start": 1, "end": 2}, {"start": "0:01", "end": "0:02"}]',
             "begİn 1:00 and end 2:00", "ſtarting at 3ſ, ending at 4 ſecs", "BETWEEN 1.5 SECONDS AND 3\u3000s",
             "3ſ - 4ſ, 1 s to 2s, 12\u3000secs ~ 13 SeCoNdS",
             # spans of two patterns, overlapping or not (the first pattern's alone take a path of their own)
             "start 0:01 end 0:02 - 0:03", "between 1s and 2s - 3s", "从0:12到0:15 - 0:20", "1s-2s, start 3s end 4s",
             *_texts(rng, _SPAN_ATOMS, 3000, 14)]
    runs = []
    for text in cases:
        params = {
            "custom_patterns": rng.choice([None, [r"\d+s-\d+s"], [r"t\d+", r"x+"], [r"[a-z]+"]]),
            "min_spans": rng.choice([0, 1, 2]),
            "max_spans": rng.choice([None, 1, 3]),
            "expected_span_count": rng.choice([None, None, 1, 2]),
            "ignore_case": rng.random() < 0.5,
        }
        runs += [(text, p) for p in (params, {**params, "custom_patterns": None})]
    assert_golden("video_ifbench_span_localization", runs, [v.span_localization(text, p) for text, p in runs])


_SCHEMAS = [None, ["name", "count"], ["a", "b"], {"name": "", "count": ""}, {"name": ""}, {"name": {}, "count": ""},
            {"name": [], "x": ""}, [{"name": "", "count": ""}], [{"a": ""}, {"b": ""}], [["", ""]], [[""]],
            [["", ""], ["", ""]], [{}], [], {}, [[]], "[]", '{"name": ""}', ["name", ["x"]]]
_CELLS = ["name", "count", "a", "b", "", "1", "x y", "**b**", "name"]


def _random_table(rng: random.Random) -> str:
    width = rng.randint(1, 3)
    rows = [[rng.choice(_CELLS) for _ in range(width)] for _ in range(rng.randint(0, 6))]
    if rng.random() < 0.5:
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(min(1, len(lines)), "|" + "---|" * width)
    else:
        lines = [",".join(r) for r in rows]
    if rng.random() < 0.2 and lines:
        lines[-1] += rng.choice([",z", " | z |", ""])
    return "\n".join(lines)


def test_table_output_schema_errors_equal_checking_every_row():
    rng = random.Random(10)
    many = "name,count\n" + "apple,3\n" * 50  # more rows than errors shown
    cases = [(many, {"schema": {"name": "", "city": "", "zip": {}}}), (many, {"schema": [["", "", ""]]}),
             (many, {"schema": {"name": [], "count": {}}})]
    cases += [(_random_table(rng), {"schema": rng.choice(_SCHEMAS)}) for _ in range(4000)]
    runs = [(text, {"allowed_formats": rng.choice([["markdown", "csv"], ["csv"], ["markdown"]]),
                    "min_rows": rng.choice([0, 1, 2]), "require_header": rng.random() < 0.7, **extra})
            for text, extra in cases]
    got = [v.table_output(text, params) for text, params in runs]
    assert_golden("video_ifbench_table_output", runs, got)
    assert sum("(+" in g.reason for g in got) >= 3  # reasons that count errors beyond the 3 shown


_SPEECH = ["let", "'", "’", "‘", "`", "´", "s", "go", " ", "\n", "\t", "!", "?", ".", ",", "«", "»", "“", "”", '"',
           "-", "—", "¿", "、", "。", "中", "é", "A", "1", "_", "Σ", "aΣ", "ΑΣ", "\x00", "\u3000", "\x1c", "\x85",
           "İ", "now", "\u0301"]


def test_speech_norms_equal_normalising_each_text():
    rng = random.Random(11)
    lists = [[], [""], ["a\x00b", "c"], ["aΣ", "Σa", " Σ ", "ΑΣ\u0301"],
             *([t for t in _texts(rng, _SPEECH, rng.randint(1, 6), 8)] for _ in range(3000))]
    for texts in lists:
        want = [v._speech_norm(t, quotes=True, whitespace=True) for t in texts]
        assert v._speech_norms(texts) == want, texts


# Responses whose fence-stripped text is stripped again by the scorer's segments (their quoted
# segments then differ), found by a search, with the utterance they quote.
_REFENCED = [('``````x````\'now```"', "now"), ("\n``````go''x", "x"), ("``````now```xnowgonow'", "xnowgonow"),
             ('``````"gonow```go\'', "go"),
             # without quotes: the lines of the twice-stripped text are the segments, not the text's own
             ("``````bnow.now\n   \n```\n```", "now"), ("``````a,x  \n\n```\n```", "x"),
             ("``````json,x\n```-\n.\n\n", "x"), ("```go\n```jsongo,x\n```\n```", "x"),
             # a line of a zero-width space only: a line for the scorer, blank for the hint's candidates
             ("xyz\n\u200b\nqqq \u00e9", "\u200ba")]


def test_verbatim_on_refenced_responses_equals_the_former_loop():
    runs = [(response, {"expected_utterance": utterance, "normalize_whitespace": True, "normalize_quotes": True,
                        "ignore_case": False, "allow_wrapping_quotes": True}) for response, utterance in _REFENCED]
    assert_golden("video_ifbench_verbatim_refenced", runs,
                  [v.verbatim_speech_constraint(response, params) for response, params in runs])


@pytest.mark.parametrize("seed", [12, 13])
def test_verbatim_equals_the_former_loop(seed):
    rng = random.Random(seed)
    runs = []
    for _ in range(1500):
        lines = _texts(rng, _SPEECH, rng.randint(1, 6), 8)
        text = rng.choice(["\n", " ", "\n\n"]).join(lines)
        if rng.random() < 0.2:
            text = "```\n" + text + "\n```"
        params = {"expected_utterance": "".join(rng.choice(_SPEECH[:12]) for _ in range(rng.randint(1, 5))) + " go",
                  "normalize_whitespace": rng.random() < 0.7, "normalize_quotes": rng.random() < 0.7,
                  "ignore_case": False, "allow_wrapping_quotes": True}
        runs.append((text, params))
    assert_golden(f"video_ifbench_verbatim_{seed}", runs, [v.verbatim_speech_constraint(t, p) for t, p in runs])


def test_punctuation_among_long_han_text_cuts_han_first_with_the_same_set():
    # no Han character is punctuation, so cutting Han runs out first keeps the set; long Chinese
    # texts (the cut's path) with punctuation of several blocks, and the checker on one of them
    import unicodedata

    assert not any(unicodedata.category(chr(c))[0] == "P" for c in range(0x110000) if v._HAN.match(chr(c)))
    rng = random.Random(28)
    han = "".join(map(chr, range(0x4E00, 0x4E00 + 300)))
    marks = "。，！？、；：「」（）.,!?'\"-—…¿¡«»"
    params = {"expected_utterance": "STOP", "normalize_whitespace": True, "normalize_quotes": True,
              "ignore_case": False, "allow_wrapping_quotes": True}
    texts = []
    for n in (100_001, 150_000):
        text = "".join(rng.choice(marks) if rng.random() < 0.05 else rng.choice(han) for _ in range(n))
        want = {c for c in set(text) if unicodedata.category(c)[0] == "P"}
        assert set(v._punctuation_among(text)) == want
        texts.append(text)
    assert_golden("video_ifbench_verbatim_long_han", texts, [v.verbatim_speech_constraint(t, params) for t in texts])


def test_list_like_items_on_many_intro_lines_is_linear():
    # every line ends with ":" (each an intro line but the last): a slice per intro line copied the
    # rest of the lines each time (40k lines took 1.4 s); a hang guard only, the bench times the rest
    import time

    start = time.process_time()
    items, how = v._list_like_items("a:\n" * 300_000 + "x, y")
    assert time.process_time() - start < 10
    assert (list(items), how) == (["x", "y"], "comma-separated entries")
    assert_golden("video_ifbench_list_like_items_intro_lines", ["a:\n" * 2000],
                  [_listed(v._list_like_items("a:\n" * 2000))])
