"""Truth tables for Video-IFBench's 13 function judges (verifiers/rules/video_ifbench.py)."""

from __future__ import annotations

import ifpo.verifiers.rules.video_ifbench  # noqa: F401  (registration)
import pytest
from ifpo.verifiers.registry import REGISTRY, MissingParamError, run_checker

IDS = {
    "structured_json_output": {"top_level", "required_keys", "forbidden_keys", "schema"},
    "table_output": {"allowed_formats", "min_rows", "require_header", "schema"},
    "ordered_list_output": {"min_items", "allow_numbered", "allow_bullets"},
    "closed_set_option_output": {"allowed_options", "allow_explanation", "ignore_case"},
    "response_length_constraint": {"min_count", "max_count", "unit"},
    "paragraph_count_constraint": {"min_count", "max_count"},
    "list_item_count_constraint": {"min_count", "max_count"},
    "required_keyword_inclusion": {
        "keywords",
        "match_all",
        "min_occurrences",
        "max_occurrences",
        "ignore_case",
    },
    "forbidden_keyword_exclusion": {"keywords", "ignore_case"},
    "normalized_value_format": {
        "allowed_patterns",
        "allowed_values",
        "require_full_match",
        "ignore_case",
        "allow_multiple",
        "separator_pattern",
    },
    "label_set_restriction": {"allowed_labels", "ignore_case", "allow_duplicates"},
    "verbatim_speech_constraint": {
        "expected_utterance",
        "normalize_whitespace",
        "normalize_quotes",
        "ignore_case",
        "allow_wrapping_quotes",
    },
    "span_localization": {"custom_patterns", "min_spans", "max_spans", "expected_span_count", "ignore_case"},
}

REQUIRED = {
    "closed_set_option_output": {"allowed_options"},
    "response_length_constraint": {"min_count", "max_count"},
    "paragraph_count_constraint": {"min_count", "max_count"},
    "list_item_count_constraint": {"min_count", "max_count"},
    "required_keyword_inclusion": {"keywords"},
    "forbidden_keyword_exclusion": {"keywords"},
    "label_set_restriction": {"allowed_labels"},
    "verbatim_speech_constraint": {"expected_utterance"},
}

# A valid set of params per id, used by the generic tests (empty response, required params).
MINIMAL = {
    "structured_json_output": {},
    "table_output": {},
    "ordered_list_output": {},
    "closed_set_option_output": {"allowed_options": ["A", "B"]},
    "response_length_constraint": {"min_count": 1, "max_count": 10},
    "paragraph_count_constraint": {"min_count": 1, "max_count": 3},
    "list_item_count_constraint": {"min_count": 1, "max_count": 3},
    "required_keyword_inclusion": {"keywords": ["dog"]},
    "forbidden_keyword_exclusion": {"keywords": ["dog"]},
    "normalized_value_format": {"allowed_values": ["yes"]},
    "label_set_restriction": {"allowed_labels": ["happy"]},
    "verbatim_speech_constraint": {"expected_utterance": "hello"},
    "span_localization": {},
}


def check(type_id, response, **params):
    return run_checker(REGISTRY.get(type_id), response, params)


# ----------------------------------------------------------------------------------------- registry


def test_all_ids_registered_with_their_param_names():
    for type_id, names in IDS.items():
        ctype = REGISTRY.get(type_id)
        assert ctype.source == "video_ifbench"
        assert ctype.route == "hybrid"
        assert set(ctype.param_names) == names, type_id
        required = {p.name for p in ctype.params if p.required}
        assert required == REQUIRED.get(type_id, set()), type_id
        assert ctype.checker.__doc__ and ">>>" in ctype.checker.__doc__, type_id


@pytest.mark.parametrize(
    "type_id, name, default",
    [
        ("structured_json_output", "top_level", "object"),
        ("table_output", "allowed_formats", ["markdown", "csv"]),
        ("table_output", "min_rows", 1),
        ("table_output", "require_header", True),
        ("ordered_list_output", "min_items", 1),
        ("closed_set_option_output", "allow_explanation", False),
        ("closed_set_option_output", "ignore_case", True),
        ("response_length_constraint", "unit", "word"),
        ("required_keyword_inclusion", "match_all", True),
        ("required_keyword_inclusion", "min_occurrences", 1),
        ("required_keyword_inclusion", "max_occurrences", None),
        ("normalized_value_format", "require_full_match", True),
        ("normalized_value_format", "ignore_case", False),
        ("normalized_value_format", "allow_multiple", False),
        ("label_set_restriction", "allow_duplicates", True),
        ("verbatim_speech_constraint", "normalize_whitespace", True),
        ("verbatim_speech_constraint", "ignore_case", False),
        ("verbatim_speech_constraint", "allow_wrapping_quotes", True),
        ("span_localization", "min_spans", 1),
        ("span_localization", "ignore_case", True),
    ],
)
def test_defaults_match_design(type_id, name, default):
    assert REGISTRY.get(type_id).param(name).default == default


# ------------------------------------------------------------ edge inputs: the scorer's verdicts
#
# Expectations read off the released scorer (Alexios-hub/Video-IFBench, video_ifbench/score.py and
# function_judges.py), not off ifpo. score.py strips the response and hands a judge the extracted
# span, falling back to the (stripped) response when the span is empty; it has no empty-response
# guard. Every judge then strips the text and removes an opening ``` (with a tag and the
# whitespace after it) and a closing ``` at the end. So all of these reach a judge as "":
EMPTY_LIKE = ["", " \n\t\u3000\u00a0 ", "```\n```", "```json\n\n```", "```", "``````"]
PUNCT = "...!?"  # only punctuation: no word ([^\W_]), no JSON, no table, no list marker

# (type id, params, verdict on every EMPTY_LIKE response, verdict on PUNCT)
EDGE_TABLE = [
    # normalized_value_format: "" gives no JSON, and without allow_multiple the item list is
    # [text] only if text is non-empty, so [] -> fails before any pattern is tried (even ".*");
    # PUNCT is the one item "...!?", matched like any other value.
    ("normalized_value_format", {"allowed_values": ["yes"]}, False, False),
    ("normalized_value_format", {"allowed_patterns": [r".*"]}, False, True),
    ("normalized_value_format", {"allowed_patterns": [r"\W+"], "allow_multiple": True}, False, True),
    # structured_json_output: neither "" nor PUNCT parses (whole, fence-stripped, first block).
    ("structured_json_output", {}, False, False),
    ("structured_json_output", {"top_level": "any"}, False, False),
    # table_output: a markdown table needs 3 non-blank lines, CSV 1-2 lines of 2+ cells: no table,
    # so min_rows=0 cannot help.
    ("table_output", {}, False, False),
    ("table_output", {"min_rows": 0, "require_header": False}, False, False),
    # ordered_list_output: 0 marked lines < min_items; with min_items 0 the scorer's 0 >= 0 passes.
    ("ordered_list_output", {}, False, False),
    ("ordered_list_output", {"min_items": 0}, True, True),
    # required_keyword_inclusion with min_occurrences 0 and no maximum: 0 >= 0 always holds.
    ("required_keyword_inclusion", {"keywords": ["dog"], "min_occurrences": 0}, True, True),
    # closed_set_option_output: "" is not in the options; with explanations the text must start
    # with an option.
    ("closed_set_option_output", {"allowed_options": ["A", "B"]}, False, False),
    ("closed_set_option_output", {"allowed_options": ["A", "B"], "allow_explanation": True}, False, False),
    # response_length_constraint: min_count <= count <= max_count; "" has 0 words and 0
    # non-space characters; PUNCT has 0 words and 5 characters.
    ("response_length_constraint", {"min_count": 1, "max_count": 10}, False, False),
    ("response_length_constraint", {"min_count": 0, "max_count": 10}, True, True),
    ("response_length_constraint", {"min_count": 0, "max_count": 0, "unit": "zh_length"}, True, False),
    ("response_length_constraint", {"min_count": 5, "max_count": 5, "unit": "zh_length"}, False, True),
    # paragraph_count_constraint: re.split of "" leaves no non-blank part (0); PUNCT is 1.
    ("paragraph_count_constraint", {"min_count": 1, "max_count": 3}, False, True),
    ("paragraph_count_constraint", {"min_count": 0, "max_count": 0}, True, False),
    # list_item_count_constraint: "" gives no JSON, no line, no comma line, no bare count: 0
    # items; PUNCT is one line, so 1 item.
    ("list_item_count_constraint", {"min_count": 1, "max_count": 3}, False, True),
    ("list_item_count_constraint", {"min_count": 0, "max_count": 0}, True, False),
    # required_keyword_inclusion: each keyword's count is 0, a hit when min <= 0 <= max.
    ("required_keyword_inclusion", {"keywords": ["dog"]}, False, False),
    ("required_keyword_inclusion", {"keywords": ["dog"], "min_occurrences": 0, "max_occurrences": 0}, True, True),
    (
        "required_keyword_inclusion",
        {"keywords": ["dog", "cat"], "match_all": False, "min_occurrences": 0, "max_occurrences": 0},
        True,
        True,
    ),
    # forbidden_keyword_exclusion: passes when no keyword has a count above 0; "?" is in PUNCT
    # (no word character touches it).
    ("forbidden_keyword_exclusion", {"keywords": ["dog"]}, True, True),
    ("forbidden_keyword_exclusion", {"keywords": ["?"]}, True, False),
    # label_set_restriction: "" parses to no item -> fails; PUNCT's one item names no label.
    ("label_set_restriction", {"allowed_labels": ["happy"]}, False, False),
    # verbatim_speech_constraint: "" has no segment and PUNCT's segment is empty once punctuation
    # is dropped; an empty list never equals the expected segments.
    ("verbatim_speech_constraint", {"expected_utterance": "hello"}, False, False),
    # span_localization: 0 spans; passes when min_spans <= 0 (and max / expected allow 0).
    ("span_localization", {}, False, False),
    ("span_localization", {"min_spans": 0}, True, True),
    ("span_localization", {"min_spans": 0, "expected_span_count": 0}, True, True),
    ("span_localization", {"min_spans": 0, "max_spans": 0}, True, True),
]


def _edge_rows():
    for type_id, params, on_empty, on_punct in EDGE_TABLE:
        for response in EMPTY_LIKE:
            yield pytest.param(type_id, params, response, on_empty, id=f"{type_id}-{params}-{response!r}")
        yield pytest.param(type_id, params, PUNCT, on_punct, id=f"{type_id}-{params}-punct")


@pytest.mark.parametrize("type_id, params, response, passed", list(_edge_rows()))
def test_edge_inputs_get_the_scorers_verdict(type_id, params, response, passed):
    result = check(type_id, response, **params)
    assert result.passed is passed, result.reason


def test_edge_table_covers_every_judge():
    assert {row[0] for row in EDGE_TABLE} == set(IDS)


# (type id, response, params, the scorer's verdict): other edges where the same text reaches both.
EDGE_MORE = [
    # A zero-width space is not whitespace to str.strip or \s: a line of it is a non-blank line,
    # one paragraph, one non-space character, no word.
    ("list_item_count_constraint", "\u200b", {"min_count": 1, "max_count": 1}, True),
    ("list_item_count_constraint", "\u200b\n\u200b", {"min_count": 2, "max_count": 2}, True),
    ("paragraph_count_constraint", "\u200b", {"min_count": 1, "max_count": 1}, True),
    ("response_length_constraint", "\u200b", {"min_count": 1, "max_count": 1, "unit": "zh_length"}, True),
    ("response_length_constraint", "\u200b", {"min_count": 0, "max_count": 0}, True),
    # CJK punctuation only: 0 words, 3 characters, 1 line.
    ("response_length_constraint", "。！？", {"min_count": 0, "max_count": 0}, True),
    ("response_length_constraint", "。！？", {"min_count": 3, "max_count": 3, "unit": "zh_length"}, True),
    ("list_item_count_constraint", "。！？", {"min_count": 1, "max_count": 1}, True),
    # Fence rule: an unclosed fence loses its opening ("hello world" is 10 characters); a one-line
    # "```abc```" loses "```abc" as if abc were a language tag, then "```": nothing is left.
    ("response_length_constraint", "```\nhello world", {"min_count": 10, "max_count": 10, "unit": "zh_length"}, True),
    ("response_length_constraint", "```abc```", {"min_count": 0, "max_count": 0, "unit": "zh_length"}, True),
    ("structured_json_output", '```json {"a": 1}```', {}, True),
    # The scorer's zh_length aliases.
    ("response_length_constraint", "红色", {"min_count": 2, "max_count": 2, "unit": "zh-char"}, True),
    ("response_length_constraint", "红色", {"min_count": 2, "max_count": 2, "unit": "cjk_chars"}, True),
    # List entries (_parse_list_like_items): a comma line whose parts are all empty is not split,
    # so ",,," is one line; only , and ， separate ("a; b; c", "猫、狗、鸟" are one entry each).
    ("list_item_count_constraint", ",,,", {"min_count": 1, "max_count": 1}, True),
    ("list_item_count_constraint", "a; b; c", {"min_count": 1, "max_count": 1}, True),
    ("list_item_count_constraint", "猫、狗、鸟", {"min_count": 1, "max_count": 1}, True),
    # A response that is only a whole number N is read as N entries.
    ("list_item_count_constraint", "5", {"min_count": 5, "max_count": 5}, True),
    ("list_item_count_constraint", "0", {"min_count": 0, "max_count": 0}, True),
    # Inline numbering: 2+ numbers, the first starting with "1", not necessarily consecutive.
    ("list_item_count_constraint", "1. a 3. b", {"min_count": 2, "max_count": 2}, True),
    ("list_item_count_constraint", "10. a 11. b", {"min_count": 2, "max_count": 2}, True),
    ("list_item_count_constraint", "2. a 3. b", {"min_count": 1, "max_count": 1}, True),
    # One marked line alone is no list: "- a, b" is split at the comma instead.
    ("list_item_count_constraint", "- a, b", {"min_count": 2, "max_count": 2}, True),
    # JSON arrays: falsy elements (0, "", null) are no entry; the first [...] block counts.
    ("list_item_count_constraint", "[0, 1, 2]", {"min_count": 2, "max_count": 2}, True),
    ("list_item_count_constraint", '["a", "", null, "b"]', {"min_count": 2, "max_count": 2}, True),
    ("list_item_count_constraint", 'Answer: ["a, b", "c"]', {"min_count": 2, "max_count": 2}, True),
    # JSON nested past Python's recursion limit makes the scorer's judge raise, which its scorer
    # records as a failed check; so does a bare count too large to build a list of.
    ("list_item_count_constraint", "[" * 5000 + "]" * 5000, {"min_count": 1, "max_count": 1}, False),
    ("structured_json_output", "[" * 5000 + "]" * 5000, {"top_level": "array"}, False),
    ("normalized_value_format", "[" * 5000 + "]" * 5000, {"allowed_patterns": [r".*"]}, False),
    ("label_set_restriction", "[" * 5000 + "]" * 5000, {"allowed_labels": ["["]}, False),
    ("span_localization", "[" * 5000 + "]" * 5000, {"min_spans": 0}, False),
    ("list_item_count_constraint", "9" * 30, {"min_count": 1, "max_count": 3}, False),
    # "+" is not a list marker there; an ideographic-space indent is stripped like any whitespace.
    ("ordered_list_output", "+ a\n+ b", {}, False),
    ("ordered_list_output", "\u3000- a\n\u3000- b", {"min_items": 2}, True),
    # Labels (_contains_phrase): a Latin label glued to Han is no mention; re.IGNORECASE does not
    # fold ß to ss; every label an item mentions counts (overlaps too) for duplicates; JSON 0 is
    # no item.
    ("label_set_restriction", "我很happy", {"allowed_labels": ["happy"]}, False),
    ("label_set_restriction", "我很 happy", {"allowed_labels": ["happy"]}, True),
    ("label_set_restriction", "Straße", {"allowed_labels": ["STRASSE"]}, False),
    (
        "label_set_restriction",
        "very happy\nhappy",
        {"allowed_labels": ["happy", "very happy"], "allow_duplicates": False},
        False,
    ),
    ("label_set_restriction", '[0, "happy"]', {"allowed_labels": ["happy"]}, True),
    ("label_set_restriction", "5", {"allowed_labels": ["happy"]}, False),
    # Closed set: str.lower, not casefold; with explanations what follows the option is not read,
    # but the option must be followed by the end or a non-word character.
    ("closed_set_option_output", "STRASSE", {"allowed_options": ["straße"]}, False),
    ("closed_set_option_output", "A, B", {"allowed_options": ["A", "B"], "allow_explanation": True}, True),
    ("closed_set_option_output", "C++x", {"allowed_options": ["C++"], "allow_explanation": True}, False),
    ("closed_set_option_output", "C++ rocks", {"allowed_options": ["C++"], "allow_explanation": True}, True),
    # Values: a JSON scalar is its own value ("00:05" quoted; true is "True"; 0 is none, so the
    # text "0" is the value); the first {...} block in the text counts.
    ("normalized_value_format", '"00:05"', {"allowed_patterns": [r"\d{2}:\d{2}"]}, True),
    ("normalized_value_format", 'Time: {"t": "00:05"}', {"allowed_patterns": [r"\d{2}:\d{2}"]}, True),
    ("normalized_value_format", "true", {"allowed_values": ["True"]}, True),
    ("normalized_value_format", "true", {"allowed_values": ["true"]}, False),
    ("normalized_value_format", "0", {"allowed_values": ["0"]}, True),
    # Only separators: the split leaves no value, so nothing validates.
    ("normalized_value_format", ";", {"allowed_patterns": [r".*"], "allow_multiple": True}, False),
    ("normalized_value_format", "；\n;", {"allowed_patterns": [r".*"], "allow_multiple": True}, False),
    # JSON null is "not valid JSON" there, whatever the top level.
    ("structured_json_output", "null", {"top_level": "any"}, False),
    # Tables: a pipe table always has a header (even of empty cells); the delimiter needs 3 dashes
    # and the header 2 cells; the body ends at a row of another width; CSV with a header needs a
    # second row; header names are compared as written.
    ("table_output", "|  |  |\n|---|---|\n| 1 | 2 |", {}, True),
    ("table_output", "| t | e |\n|-|-|\n| 1 | 2 |", {}, False),
    ("table_output", "| a |\n|---|\n| 1 |", {}, False),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n| 4 | 5 |", {"min_rows": 1}, True),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n| 4 | 5 |", {"min_rows": 2}, False),
    ("table_output", "| a | b |\n|---|---|", {"min_rows": 0}, False),
    ("table_output", "a,b", {"allowed_formats": ["csv"], "min_rows": 0}, False),
    ("table_output", "a,b", {"allowed_formats": ["csv"], "require_header": False}, True),
    ("table_output", "| **T** | E |\n|---|---|\n| 1 | 2 |", {"schema": ["T", "E"]}, False),
    # Speech: every punctuation character goes (apostrophes too) and case never matters.
    ("verbatim_speech_constraint", "LET'S GO NOW", {"expected_utterance": "Let's go now."}, True),
    ("verbatim_speech_constraint", "lets go now", {"expected_utterance": "Let's go now."}, True),
    ("verbatim_speech_constraint", "let’s go now", {"expected_utterance": "Let's go now.", "normalize_quotes": False}, True),
    # The scorer compares quoted segments: '"go"x' quotes "go", though dropping the quote glues "gox".
    ("verbatim_speech_constraint", 'He said "go"x', {"expected_utterance": "GO"}, True),
    # Spans: a JSON block inside the text is read for start/end keys.
    ("span_localization", 'Here: [{"start": "0:05", "end": "0:09"}]', {"expected_span_count": 1}, True),
    # A JSON number of over 4300 digits: json.loads raises ValueError (int() refuses it), which the
    # scorer's JSON reader does not catch (only JSONDecodeError), so every judge reading JSON raises
    # there and fails, even where the text would otherwise count (a bare count, comma entries).
    ("list_item_count_constraint", "[" + "1" * 5000 + "]", {"min_count": 0, "max_count": 100}, False),
    ("list_item_count_constraint", "a, b, [" + "1" * 5000 + "]", {"min_count": 0, "max_count": 100}, False),
    ("list_item_count_constraint", "1" * 5000, {"min_count": 0, "max_count": 10**9}, False),
    ("normalized_value_format", "1" * 5000, {"allowed_patterns": [r"\d+"]}, False),
    ("label_set_restriction", "[" + "1" * 5000 + "]", {"allowed_labels": ["1"]}, False),
    ("span_localization", "0:05-0:09 [" + "1" * 5000 + "]", {"min_spans": 0}, False),
    ("structured_json_output", '{"a": ' + "1" * 5000 + "}", {"top_level": "any"}, False),
    ("table_output", "a,b\n1,2", {"schema": '{"a": ' + "1" * 5000 + "}"}, False),  # the schema is read so too
    # a syntax error before the long number is a JSONDecodeError: the next reading is used
    ("list_item_count_constraint", "[1, x, " + "1" * 5000 + "]", {"min_count": 3, "max_count": 3}, True),
]


@pytest.mark.parametrize("type_id, response, params, passed", EDGE_MORE)
def test_more_edges_get_the_scorers_verdict(type_id, response, params, passed):
    result = check(type_id, response, **params)
    assert result.passed is passed, result.reason


# Param values the scorer judges (its judges compare and loop, they do not validate), so ifpo
# accepts them with the scorer's verdict instead of refusing the constraint. Each group's expected
# verdicts are read off the reference judge named in its comment.
PARAM_VERDICTS = [
    # judge_required_keyword_inclusion: hit = count >= min and (max is None or count <= max);
    # all() of the hits with match_all (True for no keywords), else any() (False for none).
    ("required_keyword_inclusion", "no cat here", {"keywords": ["dog"], "min_occurrences": 0}, True),
    ("required_keyword_inclusion", "dog dog dog", {"keywords": ["dog"], "min_occurrences": 0}, True),
    ("required_keyword_inclusion", "x", {"keywords": ["dog"], "min_occurrences": -2}, True),
    ("required_keyword_inclusion", "dog dog", {"keywords": ["dog"], "min_occurrences": 3, "max_occurrences": 2}, False),
    ("required_keyword_inclusion", "anything", {"keywords": []}, True),
    ("required_keyword_inclusion", "anything", {"keywords": [], "match_all": False}, False),
    # judge_forbidden_keyword_exclusion: no keyword is present when there are none.
    ("forbidden_keyword_exclusion", "dog", {"keywords": []}, True),
    # judge_ordered_list_output: matched_count >= min_items; with neither kind enabled it fails
    # before counting ("No list marker rule is enabled"), whatever min_items.
    ("ordered_list_output", "plain text", {"min_items": 0}, True),
    ("ordered_list_output", "- a", {"min_items": -1}, True),
    ("ordered_list_output", "- a\n- b", {"allow_numbered": False, "allow_bullets": False}, False),
    ("ordered_list_output", "- a", {"min_items": 0, "allow_numbered": False, "allow_bullets": False}, False),
    # judge_response_length_constraint: the unit is stripped and lower-cased, then looked up in
    # WORD_UNIT_ALIASES / ZH_LENGTH_UNIT_ALIASES; another unit is a failed verdict; the bounds are
    # a plain min <= n <= max.
    ("response_length_constraint", "one two three", {"min_count": 3, "max_count": 3, "unit": "Word"}, True),
    ("response_length_constraint", "one two three", {"min_count": 3, "max_count": 3, "unit": "WORDS"}, True),
    ("response_length_constraint", "一二三", {"min_count": 3, "max_count": 3, "unit": " ZH_Length "}, True),
    ("response_length_constraint", "一二三", {"min_count": 3, "max_count": 3, "unit": "ZH-CHAR"}, True),
    ("response_length_constraint", "ab c", {"min_count": 3, "max_count": 3, "unit": "Characters"}, True),
    ("response_length_constraint", "one two", {"min_count": 0, "max_count": 9, "unit": "tokens"}, False),
    ("response_length_constraint", "one two", {"min_count": -1, "max_count": 2}, True),
    ("response_length_constraint", "one two", {"min_count": 5, "max_count": 2}, False),
    # judge_paragraph_count_constraint / judge_list_item_count_constraint: min <= n <= max.
    ("paragraph_count_constraint", "One.", {"min_count": 3, "max_count": 2}, False),
    ("list_item_count_constraint", "x", {"min_count": -3, "max_count": 1}, True),
    # judge_table_output: formats are lower-cased, blanks dropped, none left = both; an unknown
    # name allows no parser, so no table is found; min_rows is a comparison.
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"allowed_formats": ["Markdown"]}, True),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"allowed_formats": []}, True),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"allowed_formats": ["html"]}, False),
    ("table_output", "a,b\n1,2", {"allowed_formats": ["HTML", "CSV"]}, True),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"min_rows": -1}, True),
    # judge_closed_set_option_output / judge_label_set_restriction: nothing allowed, nothing matches.
    ("closed_set_option_output", "A", {"allowed_options": []}, False),
    ("closed_set_option_output", "A because", {"allowed_options": [], "allow_explanation": True}, False),
    ("label_set_restriction", "happy", {"allowed_labels": []}, False),
    # judge_normalized_value_format: passing needs a pattern or a value (an empty list is none).
    ("normalized_value_format", "00:05", {}, False),
    ("normalized_value_format", "00:05", {"allowed_values": []}, False),
    # judge_span_localization: actual >= min, <= max when given, == expected when given.
    ("span_localization", "0:05-0:09", {"min_spans": -1}, True),
    ("span_localization", "0:05-0:09", {"min_spans": 3, "max_spans": 2}, False),
    ("span_localization", "", {"expected_span_count": 0}, False),
    ("span_localization", "", {"min_spans": 0, "expected_span_count": 0}, True),
    # The scorer's param sanitiser drops blank list entries before any judge runs.
    ("required_keyword_inclusion", "a dog", {"keywords": ["dog", " "]}, True),
    ("forbidden_keyword_exclusion", "dog", {"keywords": [""]}, True),
    ("closed_set_option_output", "A", {"allowed_options": ["A", " "]}, True),
    ("label_set_restriction", "happy", {"allowed_labels": [" "]}, False),
    ("structured_json_output", '{"a": 1}', {"required_keys": ["a", " "]}, True),
    # A pattern the judge cannot compile raises there, and score.py records an exception as a
    # failed verdict; a separator is compiled only when allow_multiple splits the text.
    ("normalized_value_format", "x", {"allowed_patterns": ["(unclosed"]}, False),
    ("normalized_value_format", "a", {"allowed_values": ["a"], "separator_pattern": "[;"}, True),
    ("normalized_value_format", "a", {"allowed_values": ["a"], "separator_pattern": "[;", "allow_multiple": True}, False),
    ("normalized_value_format", "a;b", {"allowed_values": ["a", "b"], "separator_pattern": ";*", "allow_multiple": True}, True),
    ("span_localization", "0:05-0:09", {"custom_patterns": ["[0-9"]}, False),
    # judge_verbatim_speech_constraint: an utterance with no words leaves no expected segment, and
    # a pass needs one.
    ("verbatim_speech_constraint", "hello", {"expected_utterance": "  ?! "}, False),
    # judge_structured_json_output: top_level is lower-cased and only 'object'/'array' constrain;
    # a key both required and forbidden, or required keys on an array, fail every response; a
    # schema string is read leniently (fence, first block) and an unreadable one fails.
    ("structured_json_output", "[1]", {"top_level": "Object"}, False),
    ("structured_json_output", "[1]", {"top_level": "ARRAY"}, True),
    ("structured_json_output", "[1]", {"top_level": "string"}, True),
    ("structured_json_output", '{"a": 1}', {"required_keys": ["a"], "forbidden_keys": ["a"]}, False),
    ("structured_json_output", "{}", {"required_keys": ["a"], "forbidden_keys": ["a"]}, False),
    ("structured_json_output", "[1]", {"top_level": "array", "required_keys": ["a"]}, False),
    ("structured_json_output", '{"a": 1}', {"schema": "nope"}, False),
    ("structured_json_output", '{"a": 1}', {"schema": 'schema: {"a": ""}'}, True),
    # The sanitiser drops an empty string param (the default applies) but keeps " " for a schema.
    ("structured_json_output", '{"a": 1}', {"schema": ""}, True),
    ("structured_json_output", '{"a": 1}', {"schema": " "}, False),
    ("structured_json_output", "[1]", {"top_level": ""}, False),
    ("response_length_constraint", "one two", {"min_count": 2, "max_count": 2, "unit": ""}, True),
    ("normalized_value_format", "a;b", {"allowed_values": ["a", "b"], "separator_pattern": "", "allow_multiple": True}, True),
    # judge_table_output: the same schema reading; an unreadable or scalar schema fails.
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"schema": "{not json"}, False),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"schema": 3}, False),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"schema": '```json\n["a", "b"]\n```'}, True),
    # score.py's sanitize_rule_parameters before any judge: int(float(v)) for ints, "true"/"yes"/
    # "1" and "false"/"no"/"0" for bools (0 is "" to it, so dropped), a string where a list is
    # wanted is a 1-item list (or the JSON list it spells), list entries become stripped text, and
    # None or "" is dropped, so the default applies.
    ("response_length_constraint", "one two", {"min_count": "2", "max_count": "2.9"}, True),
    ("paragraph_count_constraint", "One.", {"min_count": 1.5, "max_count": 2}, True),
    ("required_keyword_inclusion", "a dog", {"keywords": "dog"}, True),
    ("required_keyword_inclusion", "a dog", {"keywords": '["dog", "cat"]'}, False),
    ("required_keyword_inclusion", "a dog", {"keywords": '["dog", "cat"]', "match_all": "no"}, True),
    ("required_keyword_inclusion", "a dog", {"keywords": ["dog", "cat"], "match_all": "0"}, True),
    ("required_keyword_inclusion", "a dog", {"keywords": ["dog", "cat"], "match_all": 0}, False),
    ("required_keyword_inclusion", "a dog", {"keywords": [" dog "], "min_occurrences": "1"}, True),
    ("closed_set_option_output", "1", {"allowed_options": [1, 2]}, True),
    ("span_localization", "", {"min_spans": True}, False),
    ("span_localization", "0:05-0:09", {"min_spans": True}, True),
    ("verbatim_speech_constraint", "hi", {"expected_utterance": ["hi"]}, True),
    ("ordered_list_output", "- a", {"min_items": None}, True),
    ("ordered_list_output", "- a", {"min_items": "2"}, False),
    ("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", {"min_rows": None, "require_header": None}, True),
]


@pytest.mark.parametrize("type_id, response, params, passed", PARAM_VERDICTS)
def test_param_values_the_scorer_judges_get_its_verdict(type_id, response, params, passed):
    assert REGISTRY.get(type_id).param_errors(params) == [], params
    result = check(type_id, response, **params)
    assert result.passed is passed, result.reason


def test_unknown_unit_and_format_say_why_they_fail():
    assert "unsupported length unit 'tokens'" in check(
        "response_length_constraint", "a b", min_count=0, max_count=9, unit="tokens"
    ).reason
    assert "no table format allowed" in check("table_output", "a,b\n1,2", allowed_formats=["html"]).reason
    assert "both false" in check("ordered_list_output", "- a", allow_numbered=False, allow_bullets=False).reason
    assert "not a valid regular expression" in check("span_localization", "0:05", custom_patterns=["[0-9"]).reason
    assert "scorer fails" in check("table_output", "| a | b |\n|---|---|\n| 1 | 2 |", schema=3).reason
    assert "holds no words" in check("verbatim_speech_constraint", "hi", expected_utterance="?!").reason


@pytest.mark.parametrize("type_id", sorted(REQUIRED))
def test_missing_required_param_raises(type_id):
    params = dict(MINIMAL[type_id])
    params.pop(sorted(REQUIRED[type_id])[0])
    with pytest.raises(MissingParamError):
        run_checker(REGISTRY.get(type_id), "some answer", params)


@pytest.mark.parametrize(
    "type_id, params",
    [
        # Still refused after the scorer's coercion: an unknown name (the scorer would ignore a
        # misspelt param; ifpo names it), a value no coercion reads ("ten", "maybe"; the scorer
        # drops it: ifpo reports it, as a written item's mistake), and a required param that the
        # coercion drops (None), which the scorer's judge would miss; ifpo reports it missing.
        ("label_set_restriction", {"allowed_labels": ["a"], "colour": "red"}),
        ("response_length_constraint", {"min_count": "ten", "max_count": 20}),
        ("ordered_list_output", {"min_items": "ten"}),
        ("required_keyword_inclusion", {"keywords": ["dog"], "match_all": "maybe"}),
        ("verbatim_speech_constraint", {"expected_utterance": None}),
    ],
)
def test_wrong_param_type_raises_value_error(type_id, params):
    with pytest.raises(ValueError):
        run_checker(REGISTRY.get(type_id), "answer", params)


# ---------------------------------------------------------------------------- structured_json_output

EVENTS_SCHEMA = {"items": [{"events": [], "time": ""}]}


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ('{"a": 1}', {}, True, "valid JSON object"),
        ('```json\n{"a": 1}\n```', {}, True, "valid JSON object"),
        ('```\n{"a": 1}\n```\n', {}, True, "valid JSON"),
        ('Here you go:\n```json\n{"a": 1}\n```\nHope it helps.', {}, True, "embedded block"),
        # the scorer's first {...} block comes before a later fenced block; a fenced block is read
        # when the scorer finds no JSON at all; a fenced null is none
        ('{} and ```json\n"b"\n```', {}, True, "embedded block"),
        ('See ```json\n[1]\n``` (x', {"top_level": "array"}, True, ""),
        ('See ```json\nnull\n``` x', {"top_level": "any"}, False, "no valid JSON"),
        ('Answer: {"a": {"b": "}"}} thanks', {}, True, "embedded block"),
        ("[1, 2]", {}, False, "top-level JSON value is array, expected object"),
        ("[1, 2]", {"top_level": "array"}, True, "array"),
        ("[1, 2]", {"top_level": "any"}, True, "array"),
        ('{"a": 1,}', {}, False, "no valid JSON"),
        ("events: none", {}, False, "no valid JSON"),
        ('{"a": 1}', {"required_keys": ["a", "b"]}, False, "missing key 'b' at $"),
        ('{"a": 1, "debug": 2}', {"forbidden_keys": ["debug"]}, False, "forbidden key 'debug'"),
        ('{"a": 1}', {"forbidden_keys": ["debug"]}, True, ""),
        ("[1]", {"top_level": "any", "required_keys": ["a"]}, False, "need a top-level object"),
        ('{"items": [{"events": ["jump"], "time": "0:05"}]}', {"schema": EVENTS_SCHEMA}, True, ""),
        ('{"items": []}', {"schema": EVENTS_SCHEMA}, True, ""),
        (
            '{"items": [{"time": "0:05"}]}',
            {"schema": EVENTS_SCHEMA},
            False,
            "missing key 'events' at $.items[0]",
        ),
        (
            '{"items": [{"events": [], "time": "0", "x": 1}]}',
            {"schema": EVENTS_SCHEMA},
            False,
            "unexpected key 'x' at $.items[0]",
        ),
        (
            '{"items": {"events": []}}',
            {"schema": EVENTS_SCHEMA},
            False,
            "expected array at $.items, got object",
        ),
        ('{"items": [{"events": {}, "time": "0"}]}', {"schema": EVENTS_SCHEMA}, False, "$.items[0].events"),
        ('{"a": {"b": 1}}', {"schema": {"a": ""}}, False, "expected a scalar at $.a, got object"),
        ('{"pair": [1, 2, 3]}', {"schema": {"pair": [0, 0]}}, False, "expected 2 items at $.pair, got 3"),
        ('{"a": 1}', {"schema": '{"a": 0}'}, True, ""),
        ('{"名称": "狗"}', {"required_keys": ["名称"]}, True, ""),
    ],
)
def test_structured_json_output(response, params, passed, fragment):
    result = check("structured_json_output", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------------------- table_output

MD_TABLE = "| Time | Event |\n|------|:-----:|\n| 0:05 | jump |\n| 0:09 | land |"


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        (MD_TABLE, {}, True, "markdown table with 2 data rows"),
        (f"```markdown\n{MD_TABLE}\n```", {}, True, "markdown"),
        (f"Here is the table:\n\n{MD_TABLE}\n\nDone.", {}, True, "markdown"),
        (MD_TABLE + "   \n", {"min_rows": 2}, True, ""),
        (MD_TABLE, {"min_rows": 3}, False, "2 data rows, expected at least 3"),
        ("| Time | Event |\n|---|---|", {}, False, "header and delimiter with 0 data rows is no table"),
        (
            "| Time | Event |\n| 0:05 | jump |",
            {"allowed_formats": ["markdown"]},
            False,
            "no markdown table found",
        ),
        ("| a | b |\n|---|---|\n| 1 | 2 | 3 |", {}, False, "the row after the delimiter has 3 cells, the header 2"),
        # the scorer: a pipe table always has a header row, even of empty cells
        ("|  |  |\n|---|---|\n| 1 | 2 |", {}, True, "markdown table with 1 data row"),
        ("|  |  |\n|---|---|\n| 1 | 2 |", {"require_header": False}, True, ""),
        ("time,event\n0:05,jump\n0:09,land", {}, True, "csv table with 2 data rows"),
        ('time,event\n0:05,"jump, twice"', {"allowed_formats": ["csv"]}, True, "csv"),
        ("time,event\n0:05,jump", {"allowed_formats": ["markdown"]}, False, "no markdown table"),
        (MD_TABLE, {"allowed_formats": ["csv"]}, False, "no csv table"),
        ("0:05,jump\n0:09,land", {"require_header": False, "min_rows": 2}, True, "2 data rows"),
        ("0:05,jump", {"allowed_formats": ["csv"]}, False, "a CSV header needs at least one data row"),
        ("a,b\n1,2,3", {"allowed_formats": ["csv"]}, False, "different numbers of fields"),
        ("Just a sentence without any table.", {}, False, "no markdown or csv table found"),
        (MD_TABLE, {"schema": ["Time", "Event"]}, True, ""),
        (
            MD_TABLE,
            {"schema": ["Event", "Time"]},
            False,
            "header is ['Time', 'Event'], expected ['Event', 'Time']",
        ),
        (MD_TABLE, {"schema": {"Event": "", "Time": ""}}, True, ""),
        (MD_TABLE, {"schema": [{"Time": "", "Place": ""}]}, False, "missing key 'Place'"),
        # the scorer compares header cells as written
        ("| **Time** | `Event` |\n|---|---|\n| 1 | 2 |", {"schema": ["Time", "Event"]}, False, "header is"),
        ("0:05,jump", {"require_header": False, "schema": ["t", "e"]}, False, "no header row"),
        ("| 时间 | 事件 |\n|---|---|\n| 0:05 | 跳 |", {"schema": ["时间", "事件"]}, True, ""),
    ],
)
def test_table_output(response, params, passed, fragment):
    result = check("table_output", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------------ ordered_list_output


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("1. cut\n2. fry\n3. serve", {"min_items": 3}, True, "3 bullet or numbered items"),
        ("Steps:\n1) cut\n2) fry\nEnjoy!", {"min_items": 2}, True, ""),
        ("- cut\n* fry\n• serve", {"min_items": 3}, True, ""),
        ("- cut\n- fry", {"min_items": 3}, False, "2 bullet or numbered items, expected at least 3"),
        ("- cut\n- fry", {"allow_bullets": False}, False, "0 numbered items, expected at least 1 (2 items"),
        ("1. cut\n2. fry", {"allow_numbered": False}, False, "0 bullet items"),
        ("1. cut\n- fry\n- serve", {"min_items": 3, "allow_bullets": False}, False, "1 numbered item"),
        ("First cut, then fry.", {}, False, "0 bullet or numbered items"),
        ("**Bold** opening\n-- not a bullet", {}, False, "0 "),
        ("```\n1. cut\n2. fry\n```", {"min_items": 2}, True, ""),
        ("1. 切菜\n2. 炒菜  \n", {"min_items": 2}, True, ""),
        ("3. cut\n1. fry", {"min_items": 2}, True, ""),
    ],
)
def test_ordered_list_output(response, params, passed, fragment):
    result = check("ordered_list_output", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------- closed_set_option_output

YN = ["Yes", "No"]
ABC = ["A", "B", "C"]


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("Yes", {"allowed_options": YN}, True, "answer 'Yes' is an allowed option"),
        ("yes", {"allowed_options": YN}, True, ""),
        ("yes", {"allowed_options": YN, "ignore_case": False}, False, "not one of the allowed options"),
        ("  No.  \n", {"allowed_options": YN}, True, ""),
        ("**B**", {"allowed_options": ABC}, True, ""),
        ('"C"', {"allowed_options": ABC}, True, ""),
        ("```\nA\n```", {"allowed_options": ABC}, True, ""),
        ("Maybe", {"allowed_options": YN}, False, "answer 'Maybe' is not one of the allowed options"),
        ("B) The man runs.", {"allowed_options": ABC}, False, "explanations are not allowed"),
        (
            "B) The man runs.",
            {"allowed_options": ABC, "allow_explanation": True},
            True,
            "followed by an explanation",
        ),
        ("Yes, because he jumps.", {"allowed_options": YN, "allow_explanation": True}, True, ""),
        ("Yes, no doubt.", {"allowed_options": YN, "allow_explanation": True}, True, ""),
        # the scorer reads only the option at the start, not what follows it
        ("A, B", {"allowed_options": ABC, "allow_explanation": True}, True, "followed by an explanation"),
        ("A or B.", {"allowed_options": ABC, "allow_explanation": True}, True, "followed by an explanation"),
        ("Apple", {"allowed_options": ABC, "allow_explanation": True}, False, "not one of"),
        ("The answer is B", {"allowed_options": ABC, "allow_explanation": True}, False, "not one of"),
        ("是", {"allowed_options": ["是", "否"]}, True, ""),
        # The scorer: the option must be followed by the end or a non-word character; "的" is a
        # word character, so "是的" does not start with the option "是" (it is another answer).
        ("是的，他在跳。", {"allowed_options": ["是", "否"], "allow_explanation": True}, False, ""),
        ("是，他在跳。", {"allowed_options": ["是", "否"], "allow_explanation": True}, True, "followed by an explanation"),
        ("Yesterday", {"allowed_options": ["Yes", "No"], "allow_explanation": True}, False, ""),
        ("running fast", {"allowed_options": ["running", "running fast"]}, True, "'running fast'"),
    ],
)
def test_closed_set_option_output(response, params, passed, fragment):
    result = check("closed_set_option_output", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------ response_length_constraint

SIXTY_TWO = " ".join(["word"] * 62)


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        (SIXTY_TWO, {"min_count": 40, "max_count": 60}, False, "62 words, expected 40-60"),
        (SIXTY_TWO, {"min_count": 40, "max_count": 62}, True, "62 words"),
        ("One two three.", {"min_count": 3, "max_count": 3}, True, "3 words, expected exactly 3"),
        ("One two three.   \n\n", {"min_count": 4, "max_count": 9}, False, "3 words, expected 4-9"),
        ("Don’t stop, well-known man", {"min_count": 4, "max_count": 4}, True, ""),
        ("```\none two\n```", {"min_count": 2, "max_count": 2}, True, ""),
        ("红色的车 red car", {"min_count": 2, "max_count": 2}, True, "2 words"),
        ("红色的车 red car", {"min_count": 10, "max_count": 10, "unit": "zh_length"}, True, "10 characters"),
        (
            "红色的车。",
            {"min_count": 1, "max_count": 4, "unit": "zh_length"},
            False,
            "5 characters, expected 1-4",
        ),
        ("红 色\n的车", {"min_count": 4, "max_count": 4, "unit": "chars"}, True, ""),
        ("one two", {"min_count": 2, "max_count": 2, "unit": "words"}, True, ""),
        # the scorer's word count: Han separates words, Hangul/kana runs are words, digits too
        ("它是cat和dog", {"min_count": 2, "max_count": 2}, True, "2 words"),
        ("我用NASA数据", {"min_count": 1, "max_count": 1}, True, "1 word"),
        ("안녕하세요 세계", {"min_count": 2, "max_count": 2}, True, "2 words"),
        ("カタカナ と", {"min_count": 2, "max_count": 2}, True, "2 words"),
        ("It costs 3.5 dollars", {"min_count": 4, "max_count": 4}, False, "5 words"),
        ("full\u3000width", {"min_count": 2, "max_count": 2}, True, ""),
    ],
)
def test_response_length_constraint(response, params, passed, fragment):
    result = check("response_length_constraint", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------ paragraph_count_constraint


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("One.\n\nTwo.", {"min_count": 2, "max_count": 2}, True, "2 paragraphs, expected exactly 2"),
        ("One.\nStill one.", {"min_count": 2, "max_count": 3}, False, "1 paragraph, expected 2-3"),
        ("One.\n  \t\n\n\nTwo.\n\n", {"min_count": 2, "max_count": 2}, True, ""),
        ("A.\n\nB.\n\nC.", {"min_count": 1, "max_count": 2}, False, "3 paragraphs, expected 1-2"),
        ("```\nA.\n\nB.\n```", {"min_count": 2, "max_count": 2}, True, ""),
        ("第一段。\n\n第二段。", {"min_count": 2, "max_count": 2}, True, ""),
        ("One.\r\n\r\nTwo.", {"min_count": 2, "max_count": 2}, True, ""),  # CRLF blank line
        ("一。\n\u3000\n二。", {"min_count": 2, "max_count": 2}, True, ""),  # U+3000-only line is blank
        ("One.\n\u200b\nTwo.", {"min_count": 1, "max_count": 1}, True, ""),  # zero-width is not blank (scorer)
    ],
)
def test_paragraph_count_constraint(response, params, passed, fragment):
    result = check("paragraph_count_constraint", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------ list_item_count_constraint


@pytest.mark.parametrize(
    "response, bounds, passed, fragment",
    [
        ("- a\n- b\n- c", (3, 3), True, "3 items (list items), expected exactly 3"),
        ("Intro line\n1. a\n2. b\nOutro", (2, 2), True, "(list items)"),
        ("- a\n- b\n- c\n- d", (1, 3), False, "4 items (list items), expected 1-3"),
        ("1. a 2. b 3. c", (3, 3), True, "inline numbering"),
        ("1. only one", (1, 1), True, ""),
        ('["cat", "dog"]', (2, 2), True, "JSON array"),
        ('[{"t": "0:05", "e": "x"}, {"t": "0:09", "e": "y"}]', (2, 2), True, "JSON array"),
        ("cat, dog, and bird", (3, 3), True, "comma-separated entries"),
        ("猫，狗，鸟", (3, 3), True, "comma-separated entries"),  # the scorer splits at , and ， only
        ("Here are the animals:\ncat\ndog", (2, 2), True, "(lines)"),
        ("cat\n\ndog\n   \nbird   ", (3, 3), True, "(lines)"),
        ("```\n- a\n- b\n```", (2, 2), True, ""),
    ],
)
def test_list_item_count_constraint(response, bounds, passed, fragment):
    result = check("list_item_count_constraint", response, min_count=bounds[0], max_count=bounds[1])
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------------------------ required_keyword_inclusion


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("The chef dices onions.", {"keywords": ["onions"]}, True, "all 1 keyword(s)"),
        ("The chef dices ONIONS.", {"keywords": ["onions"]}, True, ""),
        ("The chef dices ONIONS.", {"keywords": ["onions"], "ignore_case": False}, False, "'onions' 0 times"),
        ("A pineapple.", {"keywords": ["apple"]}, False, "'apple' 0 times; each keyword expected at least 1"),
        ("Apples and an apple.", {"keywords": ["apple"]}, True, ""),
        ("在Apple公司工作", {"keywords": ["apple"]}, False, "'apple' 0 times"),  # Han is a word character
        ("红色的车", {"keywords": ["红色"]}, True, ""),
        ("红色的车", {"keywords": ["红色", "blue"]}, False, "'blue' 0 times"),
        ("红色的车", {"keywords": ["红色", "blue"], "match_all": False}, True, "'红色' occurs 1 time"),
        (
            "cat cat cat",
            {"keywords": ["cat"], "max_occurrences": 2},
            False,
            "'cat' 3 times; each keyword expected 1-2",
        ),
        ("cat cat", {"keywords": ["cat"], "min_occurrences": 2, "max_occurrences": 2}, True, "exactly 2"),
        ("a red\n  car", {"keywords": ["red car"]}, True, ""),
        ("He doesn’t stop", {"keywords": ["doesn't"]}, False, ""),  # the scorer folds no quotes here
        ("He doesn't stop", {"keywords": ["doesn't"]}, True, ""),
        ("```\ndog\n```", {"keywords": ["dog"]}, True, ""),
        ("no dog", {"keywords": ["cat"], "min_occurrences": 0, "max_occurrences": 0}, True, ""),
        ("dog, cat", {"keywords": ["bird", "fish"], "match_all": False}, False, "no keyword occurs"),
    ],
)
def test_required_keyword_inclusion(response, params, passed, fragment):
    result = check("required_keyword_inclusion", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ----------------------------------------------------------------------- forbidden_keyword_exclusion


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("He runs fast.", {"keywords": ["run"]}, True, "none of the 1 forbidden"),
        ("He will RUN.", {"keywords": ["run"]}, False, "forbidden keyword(s) present: 'run' (1 time)"),
        ("He will RUN.", {"keywords": ["run"], "ignore_case": False}, True, ""),
        ("run, run", {"keywords": ["run", "walk"]}, False, "'run' (2 times)"),
        ("Don’t panic", {"keywords": ["don't"]}, True, ""),  # curly apostrophe: not the keyword
        ("Don't panic", {"keywords": ["don't"]}, False, "don't"),
        ("这是红色的", {"keywords": ["红色"]}, False, "红色"),
        ("background music", {"keywords": ["back"]}, True, ""),
    ],
)
def test_forbidden_keyword_exclusion(response, params, passed, fragment):
    result = check("forbidden_keyword_exclusion", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ------------------------------------------------------ keyword matching, as Video-IFBench's scorer

# The expectation is the released scorer's `_contains_keyword` (video_ifbench/function_judges.py):
# whitespace squashed on both sides, `ignore_case` lower-cases both, a keyword holding a Han
# character (U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF) counts as a substring, any other keyword counts
# only where neither neighbour is a Unicode word character (Han, kana, Hangul, digits and "_" are).
KEYWORD_TABLE = [
    # Latin keyword glued to Han
    ("我用NASA数据", "NASA", True, 0),  # both sides
    ("我用NASA", "NASA", True, 0),  # left side only
    ("NASA数据", "NASA", True, 0),  # right side only
    ("NASA的NASA", "NASA", True, 0),
    ("用NASA，数据", "NASA", True, 0),  # Han on the left still glues
    ("（NASA）数据", "NASA", True, 1),  # full-width punctuation is not a word character
    ("我用NASA。", "nasa", True, 0),
    # Latin keyword between spaces in Chinese text
    ("我用 NASA 数据", "NASA", True, 1),
    ("我用 NASA 数据，NASA 很好", "NASA", True, 2),  # "，" (U+FF0C) is punctuation, not a word character
    # Latin keyword glued to kana / Hangul / digits / "_" / accented letters
    ("このNASAは", "NASA", True, 0),
    ("나사NASA", "NASA", True, 0),
    ("NASA2024", "NASA", True, 0),
    ("NASA_data", "NASA", True, 0),
    ("éNASA", "NASA", True, 0),
    ("NASA-led", "NASA", True, 1),
    # the lookarounds apply whatever the keyword's own edge characters are
    ("C++代码", "C++", True, 0),
    ("C++ 代码", "C++", True, 1),
    ("aC++", "C++", True, 0),
    # CJK (Han) keyword inside CJK text: plain substring, non-overlapping
    ("红色的车和红色的花", "红色", True, 2),
    ("橙红色", "红色", True, 1),
    ("哈哈哈", "哈哈", True, 1),
    # kana / Hangul keywords hold no Han character: they need word boundaries like Latin ones
    ("このカメラは", "カメラ", True, 0),
    ("カメラ です", "カメラ", True, 1),
    ("안녕하세요 세계", "세계", True, 1),
    ("세계의", "세계", True, 0),
    # mixed keyword: it holds Han, so substring, glued Latin or not
    ("新款iPhone手机", "iPhone手机", True, 1),
    ("新款IPHONE手机", "iphone手机", True, 1),
    ("新款IPHONE手机", "iphone手机", False, 0),
    ("用NASA数据集", "NASA数据", True, 1),
    # mixed Latin + kana keyword: no Han, so word boundaries
    ("新しいiPhoneケース", "iPhoneケース", True, 0),
    # case handling
    ("Launched by NASA", "nasa", True, 1),
    ("Launched by NASA", "nasa", False, 0),
    ("Launched by NASA", "NASA", False, 1),
    ("ÉCOLE", "école", True, 1),
    # whitespace squashed on both sides; curly quotes not folded
    ("红色\n  的车", "红色 的车", True, 1),
    ("a red\n\tcar", "red   car", True, 1),
    ("He doesn’t", "doesn't", True, 0),
]


@pytest.mark.parametrize("response, keyword, ignore_case, count", KEYWORD_TABLE)
def test_keyword_matching_is_the_scorers(response, keyword, ignore_case, count):
    required = check(
        "required_keyword_inclusion", response, keywords=[keyword], ignore_case=ignore_case,
        min_occurrences=count, max_occurrences=count,
    )
    assert required.passed, required.reason
    forbidden = check("forbidden_keyword_exclusion", response, keywords=[keyword], ignore_case=ignore_case)
    assert forbidden.passed is (count == 0), forbidden.reason


# -------------------------------------------------------------------------- normalized_value_format

TIME_RE = r"\d{2}:\d{2}"


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("00:05", {"allowed_patterns": [TIME_RE]}, True, "all 1 value match"),
        ("00:05  \n", {"allowed_patterns": [TIME_RE]}, True, ""),
        ("at 00:05", {"allowed_patterns": [TIME_RE]}, False, "1 of 1 value do not fully match"),
        ("at 00:05", {"allowed_patterns": [TIME_RE], "require_full_match": False}, True, ""),
        ("0:5", {"allowed_patterns": [TIME_RE]}, False, "'0:5'"),
        ("YES", {"allowed_values": ["yes", "no"]}, False, "values 'yes', 'no'"),
        ("YES", {"allowed_values": ["yes", "no"], "ignore_case": True}, True, ""),
        (
            "00:05; 00:09\n00:12",
            {"allowed_patterns": [TIME_RE], "allow_multiple": True},
            True,
            "all 3 values",
        ),
        ("00:05; soon", {"allowed_patterns": [TIME_RE], "allow_multiple": True}, False, "'soon'"),
        (
            "00:05; soon",
            {"allowed_patterns": [TIME_RE], "allow_multiple": True, "require_full_match": False},
            True,
            "1 of 2 values",
        ),
        (
            "soon; later",
            {"allowed_patterns": [TIME_RE], "allow_multiple": True, "require_full_match": False},
            False,
            "",
        ),
        (
            "00:05, 00:09",
            {"allowed_patterns": [TIME_RE], "allow_multiple": True, "separator_pattern": ","},
            True,
            "",
        ),
        ('{"start": "00:05", "end": "00:09"}', {"allowed_patterns": [TIME_RE]}, True, "all 2 values"),
        ('["00:05", "later"]', {"allowed_patterns": [TIME_RE]}, False, "'later'"),
        ("```\n00:05\n```", {"allowed_patterns": [TIME_RE]}, True, ""),
        ("2024-05-01", {"allowed_patterns": [r"\d{4}-\d{2}-\d{2}"], "allowed_values": ["unknown"]}, True, ""),
        ("unknown", {"allowed_patterns": [r"\d{4}-\d{2}-\d{2}"], "allowed_values": ["unknown"]}, True, ""),
        ("红色", {"allowed_values": ["红色", "蓝色"]}, True, ""),
    ],
)
def test_normalized_value_format(response, params, passed, fragment):
    result = check("normalized_value_format", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# ----------------------------------------------------------------------------- label_set_restriction

EMOTIONS = ["happy", "sad", "angry"]


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("happy", {}, True, "all 1 entry (lines) use allowed labels"),
        ("Happy, sad", {}, True, "all 2 entries (comma-separated entries)"),
        ("Happy, sad", {"ignore_case": False}, False, "'Happy'"),
        ("happy, bored", {}, False, "1 of 2 entries (comma-separated entries) use no allowed label"),
        ("- 0:05 happy\n- 0:09 sad", {}, True, "(list items)"),
        ("Labels:\n- happy\n- confused", {}, False, "'confused'"),
        ("Label: happy", {}, True, ""),
        ("0:05 - happy (smiling)\n0:09 - sad (crying)", {}, True, ""),
        ('["happy", "sad"]', {}, True, "JSON array"),
        ('[{"label": "happy"}, {"label": "bored"}]', {}, False, "'bored'"),
        ("happy\nhappy", {"allow_duplicates": False}, False, "'happy' used 2 times"),
        ("happy\nhappy", {}, True, ""),
        ("Happy: the man is happy", {"allow_duplicates": False}, True, ""),
        ("unhappy", {}, False, "use no allowed label"),
        ("```\nhappy, sad\n```", {}, True, ""),
        ("“happy”, ‘sad’", {}, True, ""),
    ],
)
def test_label_set_restriction(response, params, passed, fragment):
    result = check("label_set_restriction", response, allowed_labels=EMOTIONS, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


@pytest.mark.parametrize(
    "response, labels, params, passed",
    [
        ("开心，难过", ["开心", "难过"], {}, True),
        ("开心，生气", ["开心", "难过"], {}, False),
        ("very sad", ["sad", "very sad"], {"allow_duplicates": False}, True),
        ("walking; running", ["walking", "running"], {}, True),
    ],
)
def test_label_set_restriction_more(response, labels, params, passed):
    assert check("label_set_restriction", response, allowed_labels=labels, **params).passed is passed


# ------------------------------------------------------------------------ verbatim_speech_constraint

UTTERANCE = "Let's go now."


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("Let's go now.", {}, True, "found verbatim"),
        ('He shouts: "Let\'s go now!"', {}, True, ""),
        ("He shouts: “Let’s go now”, then leaves.", {}, True, ""),
        # the scorer drops every punctuation character, ’ too, so quotes need no folding here
        ("He shouts: “Let’s go now”", {"normalize_quotes": False}, True, "found verbatim"),
        ("'Let's go now.'", {}, True, ""),
        ("Let's   go\nnow", {}, True, ""),
        ("Let's   go\nnow", {"normalize_whitespace": False}, False, ""),
        ("LET'S GO NOW", {}, True, "found verbatim"),  # the scorer always lower-cases
        ("LET'S GO NOW", {"ignore_case": True}, True, ""),
        ('He says "Let us go now."', {}, False, "closest: 'Let us go now.'"),
        ("He says let's go nowhere", {"ignore_case": True}, False, "not found"),
        ("```\nLet's go now.\n```", {}, True, ""),
        ("Let's go now.   \n", {"allow_wrapping_quotes": False}, True, ""),
    ],
)
def test_verbatim_speech_constraint(response, params, passed, fragment):
    result = check("verbatim_speech_constraint", response, expected_utterance=UTTERANCE, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


@pytest.mark.parametrize(
    "response, utterance, passed",
    [
        ("他说：“我们走吧！”", "我们走吧", True),
        ("他说：我们走吧", "“我们走吧。”", True),
        ("他说：我们走", "我们走吧", False),
        ('"Stop!" she yelled.', '"Stop"', True),
        ("Okay, let's start.", "Okay let's start", True),
    ],
)
def test_verbatim_speech_constraint_more(response, utterance, passed):
    assert check("verbatim_speech_constraint", response, expected_utterance=utterance).passed is passed


# --------------------------------------------------------------------------------- span_localization


@pytest.mark.parametrize(
    "response, count",
    [
        ("The man jumps at 00:05-00:09.", 1),
        ("Between [3.5s - 7s] the dog runs.", 1),
        ("from 0:12 to 0:15 it rains", 1),
        ("FROM 0:12 TO 0:15", 1),
        ("3-7 seconds", 1),
        ("1:02:03 – 1:02:10", 1),
        ("between 1:00 and 1:05", 1),
        ("Start time: 2:00; end time: 2:05", 1),
        ("00:01 --> 00:04", 1),
        ("从0:12到0:15", 1),
        ("开始：0:12，结束：0:15", 1),
        ("3秒到7秒", 1),
        ("00:05-00:09, later 0:05 to 0:09", 1),  # the same span restated counts once
        ("00:05-00:09 and 00:10–00:12 and 00:20 ~ 00:25", 3),
        ("3-7 people came in 2023-2024", 0),
        ("at 00:05 only", 0),
        ('[{"start": "00:05", "end": "00:09"}, {"start": 10, "end": 12}]', 2),
        ('{"start_time": "0:05", "end_time": "0:09", "note": "0:05-0:09"}', 1),
        ("```\n00:05-00:09\n```", 1),
    ],
)
def test_span_localization_counts(response, count):
    result = check("span_localization", response, min_spans=0, expected_span_count=count)
    assert result.passed, result.reason


@pytest.mark.parametrize(
    "response, params, passed, fragment",
    [
        ("00:05-00:09", {}, True, "1 distinct time span, expected at least 1"),
        ("no times here", {}, False, "0 distinct time spans, expected at least 1"),
        ("00:05-00:09 and 00:10-00:12", {"max_spans": 1}, False, "2 distinct time spans, expected exactly 1"),
        ("00:05-00:09 and 00:10-00:12", {"expected_span_count": 3}, False, "expected exactly 3"),
        ("00:05-00:09 and 00:10-00:12", {"min_spans": 2, "max_spans": 4}, True, ""),
        (
            "frames 10-20 and 30-40",
            {"custom_patterns": [r"frames? \d+-\d+|\band \d+-\d+"]},
            True,
            "2 distinct",
        ),
        (
            "frames 10-20 at 0:01-0:02",
            {"custom_patterns": [r"frames \d+-\d+"], "expected_span_count": 2},
            True,
            "",
        ),
        (
            "Clip 0:01-0:02",
            {"custom_patterns": [r"clip \d:\d{2}-\d:\d{2}"], "expected_span_count": 1},
            True,
            "",
        ),
        ("CLIP A", {"custom_patterns": [r"clip [a-z]"], "ignore_case": False}, False, "0 distinct"),
        ("CLIP A", {"custom_patterns": [r"clip [a-z]"]}, True, ""),
    ],
)
def test_span_localization(response, params, passed, fragment):
    result = check("span_localization", response, **params)
    assert result.passed is passed, result.reason
    assert fragment in result.reason


# --- verbatim_speech_constraint: the faster normalisation and closest-line search equal the former --


def _speech_norm_per_char(text, *, quotes, whitespace):
    """_speech_norm as a Python loop over the characters (the reference): the scorer's rule, every
    punctuation character dropped (apostrophes inside words too), always lower-cased."""
    import unicodedata

    from ifpo.verifiers.text import normalize_quotes, squash_whitespace

    if quotes:
        text = normalize_quotes(text, extended=True)
    value = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    value = squash_whitespace(value) if whitespace else value.strip()
    return value.lower()


def _closest_hint_every_line(text, utterance):
    """The former closest-candidate search: a SequenceMatcher per candidate (the reference)."""
    from difflib import SequenceMatcher

    import ifpo.verifiers.rules.video_ifbench as vi
    from ifpo.verifiers.text import excerpt, nonblank_lines

    candidates = vi._quoted_segments(text) or [ln.strip() for ln in nonblank_lines(text)]
    expected = _speech_norm_per_char(utterance, quotes=True, whitespace=True)
    best, best_ratio = "", 0.0
    for cand in candidates:
        norm = _speech_norm_per_char(cand, quotes=True, whitespace=True)
        ratio = SequenceMatcher(None, norm, expected).ratio()
        if ratio > best_ratio:
            best, best_ratio = cand, ratio
    return f"; closest: {excerpt(best, 60)}" if best_ratio >= 0.5 else ""


_SPEECH_ATOMS = ["let", "'", "’", "‘", "`", "´", "s", "go", " ", "\n", "\t", "!", "?", ".", ",", "«", "»", "“",
                 "”", '"', "-", "—", "¿", "、", "。", "中", "é", "A", "1", "_", "@", "(", ")", "\u3000", "now"]


def test_speech_norm_equals_the_per_character_loop():
    import random

    import ifpo.verifiers.rules.video_ifbench as vi

    rng = random.Random(0)
    texts = ["", "'", "a'b", "'a'", "a''b", "l’s", "x`y", *("".join(rng.choice(_SPEECH_ATOMS) for _ in range(
        rng.randint(0, 25))) for _ in range(3000))]
    for text in texts:
        for flags in ({"quotes": True, "whitespace": True}, {"quotes": False, "whitespace": False}):
            assert vi._speech_norm(text, **flags) == _speech_norm_per_char(text, **flags), (repr(text), flags)


def test_verbatim_closest_hint_equals_a_matcher_per_line():
    import random

    rng = random.Random(1)
    params = {"normalize_whitespace": True, "normalize_quotes": True, "ignore_case": False,
              "allow_wrapping_quotes": True}
    for _ in range(1500):
        utterance = "".join(rng.choice(_SPEECH_ATOMS[:10]) for _ in range(rng.randint(1, 6))) + " go"
        text = "\n".join(
            "".join(rng.choice(_SPEECH_ATOMS) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))
        )
        got = run_checker(REGISTRY.get("verbatim_speech_constraint"), text,
                          {**params, "expected_utterance": utterance})
        if not got.passed and "not found verbatim" in got.reason:
            assert got.reason.endswith(_closest_hint_every_line(text, utterance) or "verbatim"), (text, utterance)


def test_lazy_segment_comparison_equals_normalising_every_segment():
    # verbatim_speech_constraint compares the scorer's segments lazily (stops at the first that
    # differs); it must give the eager comparison's answer on any text.
    import random

    from ifpo.verifiers.rules import video_ifbench as v

    rng = random.Random(1)
    atoms = ["a", "b", "go", " ", "\n", '"', "'", "!", ".", "“", "”", "  ", "x"]
    checked = 0
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 25)))
        utterance = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 8)))
        for flags in ({"quotes": True, "whitespace": True}, {"quotes": False, "whitespace": False}):
            def norm(segments, flags=flags):
                return [n for n in (v._speech_norm(s, **flags) for s in segments) if n]

            wanted = norm(v._scorer_segments(utterance))
            if wanted:
                checked += 1
                eager = norm(v._scorer_segments(text)) == wanted
                assert v._segments_equal(v._scorer_segments(text), wanted, flags) == eager, (text, utterance)
    assert checked > 2000


def _unicode_texts(n, seed):
    import random

    rng = random.Random(seed)
    # ASCII and not, punctuation of several scripts, quotes, zero-width and other whitespace, NUL,
    # a final sigma, emoji and combining marks
    atoms = ["a", "B", "go", " ", "\n", "\t", '"', "'", "!", ".", ",", "“", "”", "’", "«", "»", "`", "´", "、", "。",
             "「", "」", "¿", "¡", "‐", "—", "…", "\u200b", "\u200d", "\ufeff", "\u3000", "\xa0", "\x00", "ς", "Σ",
             "é", "e\u0301", "中", "\U0001F600", "\U0001F44D\U0001F3FD", "_", "-", "#", "%", "\u2028", "x"]
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def test_drop_punctuation_equals_translating_with_the_table():
    # _drop_punctuation removes the punctuation among a non-ASCII text's distinct characters with
    # str.replace; it must be the translate of the table on any text
    from ifpo.verifiers.rules import video_ifbench as v

    for text in _unicode_texts(5000, seed=3) + ["".join(map(chr, range(0x2000, 0x2100)))]:
        assert v._drop_punctuation(text) == text.translate(v._DROP_PUNCTUATION), text


def test_speech_norms_with_known_texts_equal_normalising_each():
    # verbatim_speech_constraint hands the normalised whole text to _speech_norms (known): the
    # texts found there are taken as given, the others normalised; equal to normalising each
    import random

    from ifpo.verifiers.rules import video_ifbench as v

    rng = random.Random(4)
    texts = _unicode_texts(4000, seed=5)
    for i in range(0, len(texts), 8):
        group = texts[i:i + 8]
        known = {t: v._speech_norm(t, quotes=True, whitespace=True) for t in group if rng.random() < 0.4}
        expected = [v._speech_norm(t, quotes=True, whitespace=True) for t in group]
        assert v._speech_norms(group, known) == expected, group
        assert v._segments_equal(group, [e for e in expected if e], {"quotes": True, "whitespace": True}, known)


def test_verbatim_verdicts_on_unicode_texts_equal_the_one_segment_at_a_time_reading():
    # the checker normalises the whole text once and reuses it for the segments and the hint's
    # candidates, and drops punctuation by str.replace (its characters found once); verdict and
    # reason must be those of normalising every piece on its own with the table's translate
    from ifpo.verifiers.rules import video_ifbench as v

    texts = _unicode_texts(1500, seed=6)
    utterances = ["go", "a go", "Go!", "“go” a", "中", "é a"]
    params = {"normalize_whitespace": True, "normalize_quotes": True, "ignore_case": False,
              "allow_wrapping_quotes": True}
    check = REGISTRY.get("verbatim_speech_constraint")
    norms, equal, drop = v._speech_norms, v._segments_equal, v._drop_punctuation

    def norms_unknown(texts, known=None, among=None):
        return norms(texts)

    def equal_unknown(segments, wanted, flags, known=None):
        return equal(segments, wanted, flags)

    def translate(text, among=None):
        return text.translate(v._DROP_PUNCTUATION)

    for k, text in enumerate(texts):
        p = {**params, "expected_utterance": utterances[k % len(utterances)]}
        if k % 3 == 0:
            p["normalize_whitespace"] = False
        got = run_checker(check, text, p)
        try:  # the same check with no known text handed on and the table's translate
            v._speech_norms, v._segments_equal, v._drop_punctuation = norms_unknown, equal_unknown, translate
            reference = run_checker(check, text, p)
        finally:
            v._speech_norms, v._segments_equal, v._drop_punctuation = norms, equal, drop
        assert (got.passed, got.reason) == (reference.passed, reference.reason), text


def _matching_values_loop(items, values, patterns, ignore_case, full):
    """normalized_value_format's former value loop (one verdict per distinct value, a Python step each)."""
    tests = [p.fullmatch if full else p.search for p in patterns]
    verdict, unmatched = {}, []
    for item in items:
        ok = verdict.get(item)
        if ok is None:
            ok = (item.lower() if ignore_case else item) in values
            if not ok:
                ok = any(test(item) for test in tests)
            verdict[item] = ok
        if not ok:
            unmatched.append(item)
    return len(items) - len(unmatched), unmatched[:3]


@pytest.mark.parametrize("seed", range(3))
def test_normalized_value_format_matching_equals_the_former_loop(seed):
    """The values are matched over all distinct values at once (map/compress); the count of matching
    values and the first three that match nothing, in order, are the former per-value loop's, on random
    values (repeated, cased, with and without the patterns' digits), values and patterns, either case
    rule and either match rule."""
    import random
    import re

    from ifpo.verifiers.rules.video_ifbench import _matching_values

    rng = random.Random(seed)
    atoms = ["top", "Top", "LEFT", "left", "1.5 s", "12.0 s", "x", "", "0:05", "a1", "TOP ", "é", "İ"]
    for _ in range(300):
        items = [rng.choice(atoms) + rng.choice(["", "", "s", "1"]) for _ in range(rng.randint(0, 30))]
        ic, full = rng.random() < 0.5, rng.random() < 0.5
        values = {v.lower() if ic else v for v in rng.sample(atoms, rng.randint(0, 4))}
        flags = re.IGNORECASE if ic else 0
        patterns = [re.compile(p, flags) for p in rng.sample([r"\d+\.\d s", r"top", r"^[a-z]+$", r"\d", r"é"],
                                                             rng.randint(0, 3))]
        assert _matching_values(items, values, patterns, ic, full) == \
            _matching_values_loop(items, values, patterns, ic, full), (items, values, patterns, ic, full)
