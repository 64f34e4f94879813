"""Truth tables for the VSysBench rule checkers, their parameter specs, and the taxonomy map."""

from __future__ import annotations

import re

import ifpo.verifiers.rules.vsysbench as vsys
import pytest
from ifpo.verifiers.registry import REGISTRY, MissingParamError, run_checker


def check(type_id: str, response: str, **params):
    return run_checker(REGISTRY.get(type_id), response, params)


def case(response, params, passed, reason=None, id=None):
    """A truth-table row; ``reason`` is a regex the reason must contain."""
    return pytest.param(response, params, passed, reason, id=id)


def assert_case(type_id, response, params, passed, reason):
    result = check(type_id, response, **params)
    assert result.passed is passed, result.reason
    assert result.reason
    if reason is not None:
        assert re.search(reason, result.reason), result.reason


RULE_IDS = [
    "vsys_structured_output",
    "vsys_template_sections",
    "vsys_output_length",
    "vsys_metadata_injection",
    "vsys_dynamic_tagging",
    "vsys_bilingual_mapping",
    "vsys_required_prefix",
    "vsys_required_suffix",
    "vsys_word_blacklist",
    "vsys_keyword_frequency",
    "vsys_source_tags",
    "vsys_object_itemization",
]

# Minimal valid params per rule id, used by the generic tests below.
MINIMAL = {
    "vsys_structured_output": {"format": "json"},
    "vsys_template_sections": {"section_count": 2, "marker": "markdown_heading"},
    "vsys_output_length": {"unit": "words", "relation": "at_most", "n": 5},
    "vsys_metadata_injection": {"position": "top", "required_fields": ["count"]},
    "vsys_dynamic_tagging": {"syntax": "hashtag"},
    "vsys_bilingual_mapping": {"delimiter_format": "[EN] {l1} / [FR] {l2}"},
    "vsys_required_prefix": {"prefix": "[System Alert]"},
    "vsys_required_suffix": {"suffix": "- VisionBot"},
    "vsys_word_blacklist": {"words": ["car"]},
    "vsys_keyword_frequency": {"keyword": "safety", "min_occurrences": 1},
    "vsys_source_tags": {"tags": ["[Visible]", "[External]"]},
    "vsys_object_itemization": {"style": "numbered"},
}


# ---------------------------------------------------------------------------------------------
# Registry-level properties


def test_every_rule_id_registered_with_vsysbench_source():
    for type_id in RULE_IDS:
        ctype = REGISTRY.get(type_id)
        assert ctype.route == "rule"
        assert ctype.source == "vsysbench"
        assert ctype.checker is not None
        assert ctype.checker.__doc__ and "Example" in ctype.checker.__doc__


def test_all_vsys_ids_are_prefixed_and_have_a_main_category_dimension():
    main = set(vsys.SUBCATEGORIES)
    ids = [c for c in REGISTRY if c.source == "vsysbench"]
    assert len(ids) >= 27
    for ctype in ids:
        assert ctype.id.startswith("vsys_")
        assert ctype.dimension in main


@pytest.mark.parametrize("type_id", RULE_IDS)
@pytest.mark.parametrize("response", ["", "   \n\t "])
def test_empty_response_fails(type_id, response):
    result = check(type_id, response, **MINIMAL[type_id])
    assert result.passed is False
    assert "empty" in result.reason


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_missing_required_param_raises(type_id):
    with pytest.raises(MissingParamError):
        run_checker(REGISTRY.get(type_id), "some response", {})


def test_non_string_response_is_a_type_error():
    with pytest.raises(TypeError):
        run_checker(REGISTRY.get("vsys_required_prefix"), None, {"prefix": "x"})


@pytest.mark.parametrize(
    "type_id, params",
    [
        ("vsys_structured_output", {"format": "toml"}),
        ("vsys_structured_output", {"format": "json", "required_keys": "a"}),
        ("vsys_template_sections", {"section_count": "3", "marker": "markdown_heading"}),
        ("vsys_output_length", {"unit": "tokens", "relation": "exact", "n": 3}),
        ("vsys_output_length", {"unit": "words", "relation": "exact", "n": 3.5}),
        ("vsys_output_length", {"unit": "words", "relation": "exact", "n": True}),
        ("vsys_metadata_injection", {"position": "middle", "required_fields": ["a"]}),
        ("vsys_metadata_injection", {"position": "top", "required_fields": "a"}),
        ("vsys_dynamic_tagging", {"syntax": "hashtag", "min_tags": "1"}),
        ("vsys_bilingual_mapping", {"delimiter_format": 3}),
        ("vsys_required_prefix", {"prefix": "x", "ignore_case": "yes"}),
        ("vsys_word_blacklist", {"words": ["car", 1]}),
        ("vsys_keyword_frequency", {"keyword": "a", "min_occurrences": 1, "bogus": 2}),
        ("vsys_source_tags", {"tags": ["[V]"], "granularity": "word"}),
        ("vsys_object_itemization", {"style": "letters"}),
    ],
)
def test_wrong_param_type_is_a_value_error(type_id, params):
    with pytest.raises(ValueError) as info:
        run_checker(REGISTRY.get(type_id), "response", params)
    assert not isinstance(info.value, MissingParamError)
    assert type_id in str(info.value)


@pytest.mark.parametrize(
    "type_id, params, message",
    [
        ("vsys_output_length", {"unit": "words", "relation": "between", "n": 3}, "needs m"),
        (
            "vsys_output_length",
            {"unit": "words", "relation": "between", "n": 5, "m": 3},
            r"n \(5\) is greater than m \(3\)",
        ),
        (
            "vsys_output_length",
            {"unit": "words", "relation": "at_most", "n": 5, "m": 9},
            "only used with relation",
        ),
        ("vsys_output_length", {"unit": "words", "relation": "at_least", "n": 0}, ">= 1"),
        ("vsys_template_sections", {"section_count": 2, "marker": "custom"}, "needs a pattern"),
        (
            "vsys_template_sections",
            {"section_count": 2, "marker": "custom", "pattern": "(["},
            "not a valid regular",
        ),
        (
            "vsys_template_sections",
            {"section_count": 2, "marker": "bold_inline", "pattern": "x"},
            "only used with",
        ),
        ("vsys_template_sections", {"section_count": 0, "marker": "bold_inline"}, ">= 1"),
        (
            "vsys_template_sections",
            {"section_count": 2, "marker": "markdown_heading", "section_titles": ["A"]},
            "1 titles but section_count is 2",
        ),
        ("vsys_structured_output", {"format": "json", "required_keys": []}, "non-empty"),
        ("vsys_metadata_injection", {"position": "top", "required_fields": []}, "non-empty"),
        (
            "vsys_metadata_injection",
            {"position": "yaml_frontmatter", "encoding": "json_line", "required_fields": ["a"]},
            "implies encoding 'yaml_block'",
        ),
        ("vsys_dynamic_tagging", {"syntax": "xml_tag"}, "needs tag_name"),
        ("vsys_dynamic_tagging", {"syntax": "xml_tag", "tag_name": "a b"}, "not a valid XML tag name"),
        ("vsys_dynamic_tagging", {"syntax": "custom"}, "needs pattern"),
        ("vsys_dynamic_tagging", {"syntax": "custom", "pattern": "*x"}, "not a valid regular"),
        ("vsys_dynamic_tagging", {"syntax": "hashtag", "min_tags": 3, "max_tags": 2}, "max_tags"),
        ("vsys_dynamic_tagging", {"syntax": "hashtag", "min_tags": 0}, ">= 1"),
        ("vsys_bilingual_mapping", {"delimiter_format": "[EN] {l1}"}, r"\{l1\} and \{l2\}"),
        ("vsys_bilingual_mapping", {"delimiter_format": "{l1} = {l1} = {l2}"}, r"exactly once"),
        ("vsys_bilingual_mapping", {"delimiter_format": "<a>{l1} {l2}</a>"}, "no delimiter"),
        ("vsys_bilingual_mapping", {"delimiter_format": "{l1}={l2}", "pairs": [["a"]]}, r"\[l1, l2\]"),
        ("vsys_bilingual_mapping", {"delimiter_format": "{l1}={l2}", "min_pairs": 0}, ">= 1"),
        ("vsys_required_prefix", {"prefix": "  "}, "non-empty"),
        ("vsys_word_blacklist", {"words": []}, "non-empty"),
        (
            "vsys_keyword_frequency",
            {"keyword": "a", "min_occurrences": 3, "max_occurrences": 2},
            "max_occurrences",
        ),
        ("vsys_keyword_frequency", {"keyword": "a", "min_occurrences": 0}, "accepts any response"),
        ("vsys_keyword_frequency", {"keyword": "a", "min_occurrences": -1, "max_occurrences": 2}, ">= 0"),
        ("vsys_source_tags", {"tags": []}, "non-empty"),
        ("vsys_object_itemization", {"style": "id_codes"}, "needs pattern"),
        ("vsys_object_itemization", {"style": "id_codes", "pattern": "OBJ-(\\d+"}, "not a valid regular"),
        ("vsys_object_itemization", {"style": "numbered", "pattern": "x"}, "only used with"),
        ("vsys_object_itemization", {"style": "numbered", "expected_count": 0}, ">= 1"),
    ],
)
def test_nonsense_param_combinations_are_reported(type_id, params, message):
    ctype = REGISTRY.get(type_id)
    errors = ctype.param_errors(params)
    assert errors, f"{params} should be rejected"
    assert any(re.search(message, text) for _, text in errors), errors
    with pytest.raises(ValueError):
        run_checker(ctype, "response", params)


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_minimal_params_are_valid(type_id):
    assert REGISTRY.get(type_id).param_errors(MINIMAL[type_id]) == []


def test_checkers_are_deterministic():
    params = {"tags": ["[Visible]"], "granularity": "sentence"}
    first = check("vsys_source_tags", "A tower [Visible]. Built 1889.", **params)
    assert check("vsys_source_tags", "A tower [Visible]. Built 1889.", **params) == first


# ---------------------------------------------------------------------------------------------
# Structured Output

STRUCTURED = [
    case('{"objects": ["car"], "count": 1}', {"format": "json", "required_keys": ["objects", "count"]}, True),
    case(
        '```json\n{"objects": []}\n```',
        {"format": "json", "required_keys": ["objects"]},
        True,
        id="fenced-json",
    ),
    case('```json\n{"objects": []}\n```  \n', {"format": "json"}, True, id="fence-trailing-ws"),
    case('[{"a": 1}]', {"format": "json"}, True, id="json-array"),
    case('[{"a": 1}]', {"format": "json", "required_keys": ["a"]}, False, "array", id="array-needs-object"),
    case('{"objects": []}', {"format": "json", "required_keys": ["objects", "count"]}, False, "'count'"),
    case('Sure! {"a": 1}', {"format": "json"}, False, "not valid JSON"),
    case('{"a": 1,}', {"format": "json"}, False, "not valid JSON"),
    case("42", {"format": "json"}, False, "int, expected an object or array"),
    case("{“a”: 1}", {"format": "json"}, False, "not valid JSON", id="curly-quotes-are-not-json"),
    case('{"名前": "猫"}', {"format": "json", "required_keys": ["名前"]}, True, id="cjk-keys"),
    case("objects:\n  - car\ncount: 1\n", {"format": "yaml", "required_keys": ["objects", "count"]}, True),
    case("```yaml\ncount: 1\n```", {"format": "yaml", "required_keys": ["count"]}, True),
    case("- car\n- bus", {"format": "yaml"}, True, id="yaml-sequence"),
    case("Just a sentence of prose.", {"format": "yaml"}, False, "str, expected a mapping"),
    case("a: [1, 2\nb: 3", {"format": "yaml"}, False, "not valid YAML"),
    case("count: 1", {"format": "yaml", "required_keys": ["objects"]}, False, "'objects'"),
    case("<scene><object>car</object></scene>", {"format": "xml", "required_keys": ["object"]}, True),
    case('<?xml version="1.0"?>\n<scene/>', {"format": "xml"}, True, id="xml-declaration"),
    case("<scene><object>car</scene>", {"format": "xml"}, False, "not well-formed XML"),
    case("<a/><b/>", {"format": "xml"}, False, "not well-formed"),
    case("<scene/>", {"format": "xml", "required_keys": ["object"]}, False, "element"),
    case("name,count\ncar,2\nbus,1\n", {"format": "csv", "required_keys": ["Name", "count"]}, True),
    case('name,note\ncar,"red, shiny"\n', {"format": "csv"}, True, id="csv-quoted-comma"),
    case("name,count\n", {"format": "csv"}, False, "header and at least one data row"),
    case("name,count\ncar,2,extra\n", {"format": "csv"}, False, "row 2 has 3 fields"),
    case("just one column\nvalue\n", {"format": "csv"}, False, "at least 2"),
    case("name,count\ncar,2\n", {"format": "csv", "required_keys": ["colour"]}, False, "column"),
    case(
        "| Object | Count |\n|:---|---:|\n| car | 2 |",
        {"format": "markdown_table", "required_keys": ["object", "COUNT"]},
        True,
    ),
    case(
        "| **Object** | Count |\n| --- | --- |\n| car | 2 |",
        {"format": "markdown_table", "required_keys": ["Object"]},
        True,
    ),
    case("Here:\n| A | B |\n|---|---|\n| 1 | 2 |", {"format": "markdown_table"}, False, "not a table row"),
    case("| A | B |\n| 1 | 2 |\n| 3 | 4 |", {"format": "markdown_table"}, False, "separator"),
    case("| A | B |\n|---|---|\n| 1 | 2 | 3 |", {"format": "markdown_table"}, False, "3 cells"),
    case("| A | B |\n|---|---|", {"format": "markdown_table"}, False, "expected a Markdown table"),
    case(r"| A | B |" "\n|---|---|\n" r"| a\|b | 2 |", {"format": "markdown_table"}, True, id="escaped-pipe"),
]


@pytest.mark.parametrize("response, params, passed, reason", STRUCTURED)
def test_structured_output(response, params, passed, reason):
    assert_case("vsys_structured_output", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Template

THREE_HEADINGS = "## Summary\nA red car.\n## Details\nIt is parked.\n## Verdict\nSafe."

TEMPLATE = [
    case(THREE_HEADINGS, {"section_count": 3, "marker": "markdown_heading"}, True),
    case(
        THREE_HEADINGS + "  \n\n", {"section_count": 3, "marker": "markdown_heading"}, True, id="trailing-ws"
    ),
    case(
        THREE_HEADINGS,
        {
            "section_count": 3,
            "marker": "markdown_heading",
            "section_titles": ["summary", "DETAILS", "Verdict:"],
        },
        True,
        id="titles-case-insensitive",
    ),
    case(
        THREE_HEADINGS,
        {
            "section_count": 3,
            "marker": "markdown_heading",
            "section_titles": ["Summary", "Verdict", "Details"],
        },
        False,
        "section 2 is titled 'Details', expected 'Verdict'",
        id="titles-out-of-order",
    ),
    case(
        THREE_HEADINGS,
        {"section_count": 2, "marker": "markdown_heading"},
        False,
        "3 sections .*expected exactly 2",
    ),
    case(
        "## A\nx\n### sub\ny\n## B\nz",
        {"section_count": 2, "marker": "markdown_heading"},
        True,
        id="h3-not-marker",
    ),
    case(
        "# Title\n## A\nx\n## B\ny", {"section_count": 2, "marker": "markdown_heading"}, False, "text before"
    ),
    case(
        "Intro line.\n## A\nx\n## B\ny",
        {"section_count": 2, "marker": "markdown_heading", "allow_preamble": True},
        True,
        id="preamble-allowed",
    ),
    case("## A\n\n## B\ny", {"section_count": 2, "marker": "markdown_heading"}, False, "'A' have no content"),
    case(
        "## A\n```python\n## not a heading\n```\n## B\ny",
        {"section_count": 2, "marker": "markdown_heading"},
        True,
        id="fenced-code-ignored",
    ),
    case(
        "```\n## A\nx\n## B\ny\n```",
        {"section_count": 2, "marker": "markdown_heading"},
        True,
        id="whole-fence",
    ),
    case("[SUMMARY] A car.\n[KEY_DETAILS]\nRed.", {"section_count": 2, "marker": "bracketed_caps"}, True),
    case(
        "[SUMMARY] A car.\n[KEY_DETAILS]\nRed.",
        {"section_count": 2, "marker": "bracketed_caps", "section_titles": ["Summary", "Key Details"]},
        True,
        id="caps-titles-underscore",
    ),
    case(
        "[Summary] A car.\n[Details] Red.",
        {"section_count": 2, "marker": "bracketed_caps"},
        False,
        "0 sections",
    ),
    case(
        "[1] A car.\n[2] Red.",
        {"section_count": 2, "marker": "bracketed_caps"},
        False,
        "0 sections",
        id="citation",
    ),
    case("**Summary:** A car.\n**Details:** Red.", {"section_count": 2, "marker": "bold_inline"}, True),
    case(
        "A **bold** word.\n**Details:** Red.",
        {"section_count": 2, "marker": "bold_inline"},
        False,
        "1 section",
    ),
    case("Step A: x\nStep B: y", {"section_count": 2, "marker": "custom", "pattern": r"Step (\w+):"}, True),
    case(
        "Part one: x\nStep B: y",
        {"section_count": 2, "marker": "custom", "pattern": r"Step (?P<title>\w+):"},
        False,
        "1 section opened by pattern",
    ),
    case(
        "## 요약\n고양이\n## 세부\n검정", {"section_count": 2, "marker": "markdown_heading"}, True, id="cjk"
    ),
]


@pytest.mark.parametrize("response, params, passed, reason", TEMPLATE)
def test_template_sections(response, params, passed, reason):
    assert_case("vsys_template_sections", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Output Length


def length(unit, relation, n, m=None, **extra):
    params = {"unit": unit, "relation": relation, "n": n, **extra}
    if m is not None:
        params["m"] = m
    return params


LENGTH = [
    case("One. Two. Three.", length("sentences", "at_most", 2), False, "3 sentences, expected at most 2"),
    case("One. Two.", length("sentences", "at_most", 2), True, "2 sentences"),
    case("One. Two. Three.", length("sentences", "exact", 3), True),
    case("One, e.g. two. Three.", length("sentences", "exact", 2), True, id="abbreviation"),
    case("a b c d e", length("words", "between", 3, 5), True, "5 words"),
    case("a b", length("words", "between", 3, 5), False, "2 words, expected 3-5"),
    case("Don’t stop now", length("words", "exact", 3), True, id="curly-apostrophe"),
    case("你好世界", length("words", "at_least", 2), False, "CJK characters are not words"),
    case("你好世界", length("characters", "exact", 4), True, id="cjk-characters"),
    case("ab cd", length("characters", "exact", 5), True, id="spaces-count"),
    case("ab cd", length("characters", "exact", 4, count_whitespace=False), True, id="spaces-skipped"),
    case("abc  \n\n", length("characters", "at_most", 3), True, id="trailing-ws-not-counted"),
    case("```\nabc\n```", length("characters", "exact", 3), True, id="fence-stripped"),
    case("a\n\nb\nc\n", length("lines", "exact", 3), True, id="blank-lines-skipped"),
    case("a\nb\nc\nd", length("lines", "at_most", 3), False, "4 lines, expected at most 3"),
    case("P1.\n\nP2.\n\n\nP3.", length("paragraphs", "at_least", 3), True),
    case("P1.\nstill P1.", length("paragraphs", "exact", 2), False, "1 paragraph, expected exactly 2"),
    case("one", length("words", "at_least", 1), True, "1 word "),
]


@pytest.mark.parametrize("response, params, passed, reason", LENGTH)
def test_output_length(response, params, passed, reason):
    assert_case("vsys_output_length", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Metadata Injection

TOP = {"position": "top", "required_fields": ["image_type", "count"]}

METADATA = [
    case("[META] image_type: photo; count: 3 [/META]\nA red car.", TOP, True, id="bracket-one-line"),
    case("[META] image_type: photo | count: 3\nA red car.", TOP, True, id="bracket-no-close"),
    case("[META]\nImage Type: photo\ncount: 3\n[/META]\n\nA red car.", TOP, True, id="bracket-multiline"),
    case("  \n[META] image_type: photo; count: 3 [/META]\nA car.  \n", TOP, True, id="leading-ws"),
    case(
        "[META] image_type: photo\nA red car.", TOP, False, r"lacks field\(s\) 'count'; it has 'image_type'"
    ),
    case("A red car.\n\n[META] image_type: photo; count: 3", TOP, False, "at the top; found one at line 3"),
    case("A red car.", TOP, False, "no metadata block"),
    case(
        "A red car.\n\n[META] image_type: photo; count: 3", {**TOP, "position": "end"}, True, id="bracket-end"
    ),
    case(
        "A red car.\n\n[META]\nimage_type: photo\ncount: 3\n[/META]\n",
        {**TOP, "position": "end"},
        True,
        id="bracket-multiline-end",
    ),
    case("[META] image_type: photo; count: 3\nA red car.", {**TOP, "position": "end"}, False, "at the end"),
    case(
        "<<INFO>> image_type=photo, count=3\nA red car.",
        {**TOP, "marker": "<<INFO>>"},
        True,
        id="custom-marker",
    ),
    case(
        'A red car.\n\n{"image_type": "photo", "count": 3}\n\nIt is parked.',
        {**TOP, "position": "after_first_paragraph", "encoding": "json_line"},
        True,
        id="json-after-first-paragraph",
    ),
    case(
        'A red car.\n{"image_type": "photo", "count": 3}',
        {**TOP, "position": "after_first_paragraph", "encoding": "json_line"},
        False,
        "one paragraph",
    ),
    case(
        '[META] {"image_type": "photo", "count": 3}\nA red car.',
        {**TOP, "encoding": "json_line", "marker": "[META]"},
        True,
        id="json-with-marker",
    ),
    case(
        '{"metadata": {"image_type": "photo", "count": 3}}\nA red car.',
        {**TOP, "encoding": "json_line"},
        True,
        id="json-nested-one-level",
    ),
    case('{"image_type": "photo", count: 3}\nA car.', {**TOP, "encoding": "json_line"}, False, "no metadata"),
    case(
        "image_type: photo\ncount: 3\n\nA red car.",
        {**TOP, "encoding": "yaml_block"},
        True,
        id="yaml-block-top",
    ),
    case(
        "A red car.\n\n---\nimage_type: photo\ncount: 3\n---",
        {**TOP, "position": "end", "encoding": "yaml_block"},
        True,
        id="yaml-block-dashes-end",
    ),
    case(
        "metadata:\n  image_type: photo\n  count: 3\n\nA red car.",
        {**TOP, "encoding": "yaml_block"},
        True,
        id="yaml-block-wrapped",
    ),
    case(
        "---\nimage_type: photo\ncount: 3\n---\nA red car.",
        {"position": "yaml_frontmatter", "required_fields": ["image_type", "count"]},
        True,
    ),
    case(
        "image_type: photo\ncount: 3\n---\nA red car.",
        {"position": "yaml_frontmatter", "required_fields": ["count"]},
        False,
        "no YAML front matter",
    ),
    case(
        "---\nimage_type: photo\n---\nA red car.",
        {"position": "yaml_frontmatter", "required_fields": ["count"]},
        False,
        "lacks field",
    ),
    case(
        "A red car.\n#image_type_photo #count_3",
        {**TOP, "position": "end", "encoding": "hashtags"},
        True,
        id="hashtags-end",
    ),
    case(
        "A red car.\n#image_type:photo, #count:3",
        {**TOP, "position": "end", "encoding": "hashtags"},
        True,
        id="hashtags-colon",
    ),
    case(
        "A red car.\n#image_type_photo #countries",
        {**TOP, "position": "end", "encoding": "hashtags"},
        False,
        "'count'",
        id="hashtag-prefix-needs-boundary",
    ),
    case(
        "[META] 图像类型: 照片; count: 3\n一辆红色汽车。",
        {"position": "top", "required_fields": ["图像类型", "count"]},
        True,
        id="cjk-fields",
    ),
]


@pytest.mark.parametrize("response, params, passed, reason", METADATA)
def test_metadata_injection(response, params, passed, reason):
    assert_case("vsys_metadata_injection", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Dynamic Tagging

TAGGING = [
    case("A running shoe. #BrandDetected_Nike", {"syntax": "hashtag", "position": "end"}, True),
    case(
        "A running shoe. #BrandDetected_Nike  \n",
        {"syntax": "hashtag", "position": "end"},
        True,
        id="trailing-ws",
    ),
    case(
        "A running shoe.\n#BrandDetected_Nike, #Sport",
        {
            "syntax": "hashtag",
            "position": "end",
            "min_tags": 2,
            "required_tags": ["#branddetected_nike", "Sport"],
        },
        True,
    ),
    case(
        "A running shoe. #BrandDetected_Adidas",
        {"syntax": "hashtag", "position": "end", "required_tags": ["BrandDetected_Nike"]},
        False,
        "missing tag",
    ),
    case(
        "A running shoe. #BrandDetected_nike",
        {"syntax": "hashtag", "required_tags": ["BrandDetected_Nike"], "ignore_case": False},
        False,
        "missing tag",
        id="case-sensitive",
    ),
    case(
        "#BrandDetected_Nike A running shoe.",
        {"syntax": "hashtag", "position": "end"},
        False,
        "0 hashtags at the end.*1 elsewhere",
    ),
    case("#BrandDetected_Nike A running shoe.", {"syntax": "hashtag", "position": "start"}, True),
    case("Item #1 is here; see a.com/#frag", {"syntax": "hashtag"}, False, "0 hashtags", id="not-hashtags"),
    case("## Heading\nText", {"syntax": "hashtag"}, False, "0 hashtags", id="markdown-heading"),
    case(
        "A cat. #고양이",
        {"syntax": "hashtag", "position": "end", "required_tags": ["고양이"]},
        True,
        id="cjk",
    ),
    case("A cat. #a #b #c", {"syntax": "hashtag", "max_tags": 2}, False, "3 hashtags, expected 1-2"),
    case("@alice @bob look", {"syntax": "mention", "position": "start", "min_tags": 2}, True),
    case("mail me at bob@example.com", {"syntax": "mention"}, False, "0 mentions", id="email"),
    case(
        "It is a <obj>car</obj> next to a <obj>bus</obj>.",
        {"syntax": "xml_tag", "tag_name": "obj", "min_tags": 2, "required_tags": ["CAR", "bus"]},
        True,
    ),
    case("It is <obj> </obj>.", {"syntax": "xml_tag", "tag_name": "obj"}, False, "0 <obj> tags"),
    case(
        "Result. [TAG:car] [TAG:red]",
        {"syntax": "custom", "pattern": r"\[TAG:(\w+)\]", "position": "end"},
        True,
    ),
    case(
        "A cat. #Cat_Black.",
        {"syntax": "hashtag", "position": "end", "required_tags": ["Cat_Black"]},
        True,
        id="trailing-period",
    ),
]


@pytest.mark.parametrize("response, params, passed, reason", TAGGING)
def test_dynamic_tagging(response, params, passed, reason):
    assert_case("vsys_dynamic_tagging", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Bilingual Mapping

KO = "<en>{l1}</en> = <ko>{l2}</ko>"
FR = "[EN] {l1} / [FR] {l2}"

BILINGUAL = [
    case("<en>cat</en> = <ko>고양이</ko>", {"delimiter_format": KO}, True),
    case(
        "<en>cat</en> = <ko>고양이</ko>\n<en>dog</en>=<ko>개</ko>",
        {"delimiter_format": KO, "min_pairs": 2, "pairs": [["Cat", "고양이"], ["dog", "개"]]},
        True,
        id="flexible-whitespace",
    ),
    case("<en>cat</en> - <ko>고양이</ko>", {"delimiter_format": KO}, False, "0 pairs"),
    case(
        "<en>cat</en> = <ko>고양이</ko>",
        {"delimiter_format": KO, "pairs": [["dog", "개"]]},
        False,
        "missing pair.*<en>dog</en>",
    ),
    case(
        "<en>cat</en> = <ko>고양이</ko>\n<en>cat</en> = <ko>고양이</ko>",
        {"delimiter_format": KO, "min_pairs": 2},
        False,
        "1 pair",
        id="duplicates-count-once",
    ),
    case(
        "- [EN] apple / [FR] pomme\n- [EN] red car / [FR] voiture rouge, [EN] pear / [FR] poire  ",
        {"delimiter_format": FR, "min_pairs": 3, "pairs": [["red car", "voiture rouge"], ["pear", "poire"]]},
        True,
        id="trailing-placeholder",
    ),
    case(
        "[EN] apple / [FR] pomme",
        {"delimiter_format": FR, "pairs": [["apple", "pom"]]},
        False,
        "missing pair",
        id="pair-value-whole",
    ),
    case(
        "I see an apple (pomme) and a pear (poire).",
        {"delimiter_format": "{l1} ({l2})", "min_pairs": 2},
        True,
    ),
    case(
        "A pineapple (ananas).",
        {"delimiter_format": "{l1} ({l2})", "pairs": [["apple", "ananas"]]},
        False,
        "missing pair",
        id="leading-value-whole-word",
    ),
    case(
        "“cat” → “chat”",
        {"delimiter_format": '"{l1}" → "{l2}"', "pairs": [["cat", "chat"]]},
        True,
        id="curly-quotes",
    ),
    case("[EN] apple\n/ [FR] pomme", {"delimiter_format": FR}, False, "0 pairs", id="no-line-crossing"),
]


@pytest.mark.parametrize("response, params, passed, reason", BILINGUAL)
def test_bilingual_mapping(response, params, passed, reason):
    assert_case("vsys_bilingual_mapping", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Content Inclusion: prefix / suffix / keyword frequency; Content Exclusion: blacklist

PREFIX = [
    case("[System Alert] Two cats.", {"prefix": "[System Alert]"}, True),
    case("  \n[System Alert] Two cats.", {"prefix": "[System Alert]"}, True, id="leading-ws"),
    case("Hello [System Alert]", {"prefix": "[System Alert]"}, False, "starts with 'Hello"),
    case("[system alert] Two cats.", {"prefix": "[System Alert]"}, False, id="case-sensitive"),
    case("[system alert] Two cats.", {"prefix": "[System Alert]", "ignore_case": True}, True),
    case("Here’s the answer: 3", {"prefix": "Here's the answer:"}, True, id="curly-quote"),
    case("**[System Alert]** Two cats.", {"prefix": "[System Alert]"}, False, id="markdown-decoration"),
    case("【提示】两只猫。", {"prefix": "【提示】"}, True, id="cjk"),
]


@pytest.mark.parametrize("response, params, passed, reason", PREFIX)
def test_required_prefix(response, params, passed, reason):
    assert_case("vsys_required_prefix", response, params, passed, reason)


SUFFIX = [
    case("Two cats.\n- VisionBot", {"suffix": "- VisionBot"}, True),
    case("Two cats.\n- VisionBot  \n\n", {"suffix": "- VisionBot"}, True, id="trailing-ws"),
    case("- VisionBot\nTwo cats.", {"suffix": "- VisionBot"}, False, "ends with"),
]


@pytest.mark.parametrize("response, params, passed, reason", SUFFIX)
def test_required_suffix(response, params, passed, reason):
    assert_case("vsys_required_suffix", response, params, passed, reason)


BLACKLIST = [
    case("A red vehicle is parked.", {"words": ["car", "person"]}, True),
    case("A red car is parked.", {"words": ["car", "person"]}, False, "forbidden word.*'car'"),
    case("A red CAR, another car.", {"words": ["car"]}, False, r"'car' \(2x\)", id="ignore-case-default"),
    case("A red CAR.", {"words": ["car"], "ignore_case": False}, True, id="case-sensitive"),
    case("A red carpet and cartoon.", {"words": ["car"]}, True, id="whole-word"),
    case("Two cars.", {"words": ["car"]}, True, id="plural-not-matched-by-default"),
    case("Two cars and buses.", {"words": ["car", "bus"], "match_plurals": True}, False, "'car', 'bus'"),
    case("The car’s door.", {"words": ["car's"]}, False, id="curly-apostrophe"),
    case("A traffic  light.", {"words": ["traffic light"]}, False, id="phrase-whitespace"),
    case("路上有一辆汽车。", {"words": ["汽车"]}, False, "'汽车'", id="cjk-substring"),
    case("路上有一辆车。", {"words": ["汽车"]}, True, id="cjk-absent"),
]


@pytest.mark.parametrize("response, params, passed, reason", BLACKLIST)
def test_word_blacklist(response, params, passed, reason):
    assert_case("vsys_word_blacklist", response, params, passed, reason)


FREQUENCY = [
    case("Safety first. Stay safe; safety matters.", {"keyword": "safety", "min_occurrences": 2}, True),
    case(
        "Safety first.",
        {"keyword": "safety", "min_occurrences": 2},
        False,
        "appears 1 time, expected at least 2",
    ),
    case(
        "safety safety safety",
        {"keyword": "safety", "min_occurrences": 1, "max_occurrences": 2},
        False,
        "3 times, expected 1-2",
    ),
    case(
        "No keyword here.",
        {"keyword": "safety", "min_occurrences": 0, "max_occurrences": 0},
        True,
        id="at-most-0",
    ),
    case(
        "Safety first.", {"keyword": "safety", "min_occurrences": 1, "ignore_case": False}, False, id="case"
    ),
    case("unsafety", {"keyword": "safety", "min_occurrences": 1}, False, id="whole-word"),
    case("安全第一，注意安全。", {"keyword": "安全", "min_occurrences": 2}, True, id="cjk"),
]


@pytest.mark.parametrize("response, params, passed, reason", FREQUENCY)
def test_keyword_frequency(response, params, passed, reason):
    assert_case("vsys_keyword_frequency", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Knowledge Sourcing (rule form)

TAGS = {"tags": ["[Visible]", "[External]"]}

SOURCES = [
    case("A tower [Visible]. Built in 1889 [External].", TAGS, True),
    case("A tower. [Visible] Built in 1889. [External]", TAGS, True, id="tag-after-period"),
    case("A tower [Visible]. Built in 1889.", TAGS, False, "1 of 2 sentences.*'Built in 1889.'"),
    case("## Answer\nA tower [Visible].", TAGS, True, id="heading-skipped"),
    case("A tower [Visible].  \n\n", TAGS, True, id="trailing-ws"),
    case("A [Visible] tower.", TAGS, False, "do not end with"),
    case("A [Visible] tower.", {**TAGS, "placement": "contains"}, True),
    case("A tower [visible].", TAGS, False, id="case-sensitive"),
    case("A tower [visible].", {**TAGS, "ignore_case": True}, True),
    case(
        "A tower. It is tall [Visible].\n\nBuilt in 1889 [External].",
        {**TAGS, "granularity": "paragraph"},
        True,
    ),
    case(
        "A tower [Visible].\n\nBuilt in 1889.",
        {**TAGS, "granularity": "paragraph"},
        False,
        "1 of 2 paragraphs",
    ),
    case("铁塔很高[Visible]。建于1889年[External]。", TAGS, True, id="cjk"),
    case("A tower “[Visible]”.", {"tags": ["[Visible]"]}, True, id="curly-quotes"),
    # no tag anywhere in the text (its shortcut): a marks-only paragraph still joins the one before,
    # a heading is still skipped
    case("First paragraph.\n\n...\n\nSecond.", {"tags": ["[V]"], "granularity": "paragraph"}, False,
         "2 of 2 paragraphs.*'First paragraph. ...'", id="tagless-marks-paragraph"),
    case("First one.\n# Heading\nSecond one.", {"tags": ["[V]"]}, False, "2 of 2 sentences", id="tagless-heading"),
]


@pytest.mark.parametrize("response, params, passed, reason", SOURCES)
def test_source_tags(response, params, passed, reason):
    assert_case("vsys_source_tags", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# Object Itemization

ITEMS = [
    case(
        "Object_1: car\nObject_2: bus\nObject_1 is left of Object_2.",
        {"style": "object_prefix", "expected_count": 2},
        True,
    ),
    case("Object 1: car, Object-2: bus", {"style": "object_prefix"}, True, id="separators"),
    case("Truck 1 and Truck 2 are parked.", {"style": "object_prefix", "label": "Truck"}, True),
    case("Object_1: car\nObject_3: bus", {"style": "object_prefix"}, False, "item 2 is numbered 3"),
    case("Object_2: car\nObject_1: bus", {"style": "object_prefix"}, False, "not sequential"),
    case(
        "Object_1: car", {"style": "object_prefix", "expected_count": 2}, False, "1 Object_N item, expected 2"
    ),
    case("A car and a bus.", {"style": "object_prefix"}, False, "start items with 'Object_1:'"),
    case("1. car\n2. bus\n3. van", {"style": "numbered", "expected_count": 3}, True),
    case("1) 汽车\n2) 公交车", {"style": "numbered"}, True, id="cjk"),
    case("1. car\n2. bus\n4. van", {"style": "numbered"}, False, "1, 2, 4 is not sequential"),
    case(
        "1. car\n2. bus\n\nThen:\n1. step", {"style": "numbered"}, False, "item 3 is numbered 1", id="restart"
    ),
    case("- car\n- bus", {"style": "numbered"}, False, "no numbered items"),
    case("OBJ-01 car, OBJ-02 bus", {"style": "id_codes", "pattern": r"OBJ-(\d+)"}, True),
    case("[ID3] car [ID1] bus", {"style": "id_codes", "pattern": r"\[ID\d+\]"}, False, "not sequential"),
    case("```\n1. car\n2. bus\n```", {"style": "numbered"}, True, id="fenced"),
]


@pytest.mark.parametrize("response, params, passed, reason", ITEMS)
def test_object_itemization(response, params, passed, reason):
    assert_case("vsys_object_itemization", response, params, passed, reason)


# ---------------------------------------------------------------------------------------------
# YAML needs PyYAML; without it the checker raises instead of failing the response.


def test_yaml_without_pyyaml_raises(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(ImportError, match="pyyaml"):
        check("vsys_structured_output", "a: 1", format="yaml")


# ---------------------------------------------------------------------------------------------
# Taxonomy, judge registrations, override styles

PAPER_SUBCATEGORIES = {
    "style": [
        "Persona & Role-Play",
        "Tone & Manner",
        "Audience Adaptation",
        "Language Anchoring",
        "Narrative Perspective",
    ],
    "format": [
        "Structured Output",
        "Template",
        "Bilingual Mapping",
        "Output Length",
        "Metadata Injection",
        "Dynamic Tagging",
    ],
    "background_knowledge": ["Prior Knowledge Restriction", "Domain Terminology", "Knowledge Sourcing"],
    "content_control": [
        "Content Inclusion",
        "Content Exclusion",
        "Conditional Branching",
        "Numerical Branching",
        "Dynamic Calculation",
    ],
    "visual_processing": ["Object Itemization", "Visual Justification", "Spatial Referencing"],
}


def test_subcategories_cover_the_22_of_the_paper():
    got = {main: sorted({name for name, _ in entries}) for main, entries in vsys.SUBCATEGORIES.items()}
    assert got == {main: sorted(names) for main, names in PAPER_SUBCATEGORIES.items()}
    assert sum(len(v) for v in got.values()) == 22


@pytest.mark.parametrize(
    "main, name, type_id",
    [(main, name, tid) for main, entries in vsys.SUBCATEGORIES.items() for name, tid in entries],
)
def test_every_subcategory_maps_to_a_registered_id(main, name, type_id):
    assert type_id in REGISTRY, f"{name} -> {type_id} is not registered"
    ctype = REGISTRY.get(type_id)
    assert ctype.dimension == main
    assert ctype.source == "vsysbench"
    assert vsys.subcategory_of(type_id) == (main, name)


def test_every_vsys_id_appears_in_subcategories():
    mapped = {tid for entries in vsys.SUBCATEGORIES.values() for _, tid in entries}
    assert {c.id for c in REGISTRY if c.source == "vsysbench"} == mapped


def test_subcategory_of_unknown_id():
    with pytest.raises(ValueError):
        vsys.subcategory_of("word_count")


@pytest.mark.parametrize(
    "type_id, params",
    [
        ("vsys_persona_role_play", {"persona": "a seasoned art critic"}),
        ("vsys_tone_manner", {"tone": "cold, objective"}),
        ("vsys_audience_adaptation", {"audience": "a 5-year-old child"}),
        ("vsys_language_anchoring", {"language": "Korean"}),
        ("vsys_narrative_perspective", {"person": "second person", "tense": "simple present"}),
        ("vsys_prior_knowledge_restriction", {"restriction": "no real-world proper names"}),
        ("vsys_domain_terminology", {"terminology": "anatomy", "term_map": {"collarbone": "clavicle"}}),
        ("vsys_knowledge_sourcing", {"tags": ["[Visible]", "[External]"]}),
        ("vsys_content_inclusion", {"element": "a safety reminder", "position": "end"}),
        ("vsys_content_exclusion", {"target": "brand names"}),
        ("vsys_conditional_branching", {"condition": "the image is a document", "branches": {"yes": "JSON"}}),
        ("vsys_numerical_branching", {"quantity": "boxes", "branches": {">=3": "[STOCK_SUFFICIENT]"}}),
        ("vsys_dynamic_calculation", {"operation": "count x $0.75"}),
        ("vsys_visual_justification", {"evidence_format": "Evidence: [visual cue]"}),
        ("vsys_spatial_referencing", {"tag_format": "[Position: ...]"}),
    ],
)
def test_judge_types(type_id, params):
    ctype = REGISTRY.get(type_id)
    assert ctype.route == "judge"
    assert ctype.checker is None
    assert ctype.param_errors(params) == []
    assert ctype.param_errors({}), "a judge type still has required params"
    ctype.description.format(**ctype.with_defaults(params))  # the template renders
    with pytest.raises(ValueError, match="judge-route"):
        run_checker(ctype, "text", params)


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_rule_descriptions_render(type_id):
    ctype = REGISTRY.get(type_id)
    text = ctype.description.format(**ctype.with_defaults(MINIMAL[type_id]))
    assert "{" not in text.replace("{l1}", "").replace("{l2}", "")


def test_override_styles():
    assert vsys.OVERRIDE_STYLES == {
        "DJ": "Direct Jailbreak",
        "PP": "Polite Personal",
        "RP": "Roleplay",
        "AC": "Authority Claim",
        "UB": "Urgency Bypass",
    }


@pytest.mark.parametrize("style", ["markdown_heading", "bracketed_caps", "bold_inline"])
def test_sections_of_a_builtin_style_equal_the_line_by_line_split(style):
    """vsys_template_sections reads only the lines that can toggle a fence or open a section of a built-in
    style: the same preamble and sections as reading every line (the loop a custom pattern still uses)."""
    import random

    from ifpo.verifiers.rules.vsysbench import _sections, _sections_line_by_line

    rng = random.Random(len(style))
    pieces = ["## Summary", "  ## Details  ", "##", "## ", "##\tA #", "# One", "[SUMMARY]", "[1]", " [X_Y] rest",
              "[a]", "**Scene**", " **Colour** red", "** x**", "**", "```", "  ```py", "``", "text", "", " ", "\t",
              "A red car.", "`## not`", "\u3000## wide", "\xa0**B**"]
    seps = ["\n", "\n", "\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028"]
    opened = 0
    for _ in range(3000):
        n = rng.randint(0, 14)
        text = "".join(rng.choice(pieces) + rng.choice(seps) for _ in range(n))
        if rng.random() < 0.5:
            text = text.rstrip()
        want = _sections_line_by_line(text, style, None)
        assert _sections(text, style, None) == want, repr(text)
        opened += bool(want[1])
    assert opened > 600, opened


def test_source_tags_shortcuts_change_no_verdict_or_reason():
    import random

    from golden import assert_golden

    rng = random.Random(7)
    atoms = ["[Visible]", "[External]", "[V]", "[", "]", "V", "Visible", ". ", "! ", "? ", ".", ",", ";", '"', "'",
             " ", "\n", "\n\n", "## ", "# ", "#", "The", "cat", "sat", "[Vis", "ible]", "Dr.", "1. ", "a) ", "x"]
    tag_sets = [["[Visible]", "[External]"], ["[V]"], ["[V]", "[Visible]"], ["."], ["V", "[V]"], ["#", "x"]]
    cases, got = [], []
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 30)))
        tags = rng.choice(tag_sets)
        placement = rng.choice(["end", "contains"])
        cases.append((text, tags, placement))
        got.append(check("vsys_source_tags", text, tags=tags, placement=placement, granularity="sentence"))
    # The former unit loop's verdicts (before its shortcuts), recorded with their reasons: tests/golden.py.
    assert_golden("vsysbench_source_tags", cases, got)
    assert sum(g.passed for g in got) > 300 and sum(not g.passed for g in got) > 300


def test_source_tags_on_texts_holding_nul_and_headings_equal_the_former_loop():
    # units holding a NUL are counted one by one (the joined count would split them); headings and
    # units starting with a tag, a mark or "#" are the ones the loop reads, the rest are sliced in
    import random

    from golden import assert_golden

    rng = random.Random(8)
    atoms = ["[Visible]", "[V]", "\x00", "a\x00b", ". ", "! ", '"', "'", " ", "\n", "\n\n", "## ", "#", "The", "cat",
             "x", "Dr.", "#x", "[", "]", "\u200b"]
    tag_sets = [["[Visible]", "[V]"], ["[V]"], ["#", "x"], ["\x00"]]
    cases = []
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 30)))
        cases.append((text, rng.choice(tag_sets)))
    got = [check("vsys_source_tags", text, tags=tags, placement="end", granularity="sentence") for text, tags in cases]
    # The former unit loop's verdicts, recorded with their reasons: tests/golden.py.
    assert_golden("vsysbench_source_tags_nul_headings", cases, got)
    assert sum(g.passed for g in got) > 150 and sum(not g.passed for g in got) > 1500


def test_metadata_block_starts_skip_only_lines_no_parser_accepts(monkeypatch):
    """vsys_metadata_injection tries its parser only on the lines _meta_starts names: the same verdicts
    and reasons as trying every non-blank line (the former loops, restored by patching it out), on
    random blocks of every encoding, position and marker."""
    import random

    from ifpo.verifiers.registry import resolve_params
    from ifpo.verifiers.rules import vsysbench as vs

    ctype = REGISTRY.get("vsys_metadata_injection")
    rng = random.Random(26)
    atoms = ["[META]", "[/META]", "[M]", "[/M]", "{\"a\": 1}", "{", "}", "#a", "#b,", " #c", "a: 1", "b=2", "---",
             "...", "<<", "x", " ", "\n", "\n", "\n\n", "  \n", "\t", "\n[META] a: 1; b: 2 [/META]\n", "\n{\"a\": 1, \"b\": 2}\n",
             "\n#a #b\n", "\na: 1\nb: 2\n", "\n[M]\na: 1\nb=2\n[/M]\n", "\n<< {\"a\": 1}\n", "\n[META]\na: 1\n", "text line",
             "\n{ \"a\": 1}\n"]
    cases = []
    for _ in range(1500):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 16)))
        encoding = rng.choice([None, "json_line", "yaml_block", "bracket_block", "hashtags"])
        position = rng.choice(["top", "end", "after_first_paragraph"])
        marker = rng.choice([None, None, "[META]", "[M]", "<<", "#", "[M] ", " #", "a\x85b", "---"])
        cases.append((text, {"position": position, "encoding": encoding, "marker": marker,
                             "required_fields": rng.choice([["a"], ["a", "b"], ["c"]])}))
    got = [run_checker(ctype, text, params) for text, params in cases]
    monkeypatch.setattr(vs, "_meta_starts", lambda lines, encoding, marker: (
        k for k in range(len(lines)) if lines[k].strip()))
    want = [ctype.checker(text, resolve_params(ctype, params)) for text, params in cases]
    assert got == want
    assert 20 < sum(w.passed for w in want) < len(want) - 100
    assert sum("found one at line" in w.reason for w in want) > 100


def test_metadata_block_starts_equal_the_per_line_tests():
    # the joined-lines search names exactly the lines whose stripped form starts with the head (equals
    # the YAML marker); heads with outer whitespace or a line end keep the per-line tests
    import itertools
    import operator
    import random

    from ifpo.verifiers.rules import vsysbench as vs

    def former(lines, encoding, marker):
        stripped = map(str.strip, lines)
        if encoding == "yaml_block":
            flags = map(operator.eq, stripped, itertools.repeat(marker)) if marker else stripped
        else:
            head = marker or {"bracket_block": "[META]", "json_line": "{", "hashtags": "#"}[encoding]
            flags = map(str.startswith, stripped, itertools.repeat(head))
        return list(itertools.compress(itertools.count(), flags))

    rng = random.Random(29)
    atoms = ["[META]", "[M]", "[M] ", "{", "#", " ", "\t", "\u3000", "x", "---", "<<", "a", "\x85", "b", "", "a", "b"]
    for _ in range(5000):
        lines = ["".join(rng.choice(atoms) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 8))]
        encoding = rng.choice(["json_line", "yaml_block", "bracket_block", "hashtags"])
        marker = rng.choice([None, "[META]", "[M]", "[M] ", " #", "a\x85b", "a\nb", "---", "<<", "x"])
        assert list(vs._meta_starts(lines, encoding, marker)) == former(lines, encoding, marker), (lines, marker)
