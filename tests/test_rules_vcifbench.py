"""VCIFBench's 40 Table 10 types: registration, rule/hybrid truth tables, parameter-spec errors."""

from __future__ import annotations

import string

import ifpo.verifiers.rules.vcifbench as vc
import pytest
from ifpo.verifiers.registry import REGISTRY, MissingParamError, run_checker

# Table 10 of the VCIFBench paper: id -> (dimension, route).
TABLE_10 = {
    "json": ("format", "rule"),
    "csv": ("format", "rule"),
    "bullet_list": ("format", "rule"),
    "numbered_list": ("format", "rule"),
    "markdown": ("format", "rule"),
    "plain_text": ("format", "rule"),
    "word_count": ("format", "hybrid"),
    "sentence_count": ("format", "hybrid"),
    "paragraph_count": ("format", "hybrid"),
    "item_count": ("format", "hybrid"),
    "fixed_opening": ("format", "hybrid"),
    "fixed_closing": ("format", "hybrid"),
    "pattern_opening": ("format", "judge"),
    "pattern_closing": ("format", "judge"),
    "prefix_label": ("format", "hybrid"),
    "letter_case": ("format", "hybrid"),
    "emphasis": ("format", "judge"),
    "tense": ("format", "judge"),
    "no_contractions": ("format", "rule"),
    "summarize": ("content", "judge"),
    "focus": ("content", "judge"),
    "content_inclusion": ("content", "judge"),
    "exact_word_inclusion": ("content", "hybrid"),
    "sequence_marker_inclusion": ("content", "judge"),
    "tracking": ("content", "judge"),
    "lexical_diversity": ("content", "hybrid"),
    "content_exclusion": ("content", "judge"),
    "exact_word_exclusion": ("content", "hybrid"),
    "personal_information_exclusion": ("content", "judge"),
    "harmful_content_exclusion": ("content", "judge"),
    "tone": ("style", "judge"),
    "target_audience": ("style", "judge"),
    "persona": ("style", "judge"),
    "output_language": ("style", "judge"),
    "rhetoric": ("style", "judge"),
    "chronological": ("structure", "judge"),
    "causal": ("structure", "judge"),
    "spatial_grouping": ("structure", "judge"),
    "hierarchical": ("structure", "judge"),
    "counterfactual": ("structure", "judge"),
}

RULE_IDS = sorted(t for t, (_, route) in TABLE_10.items() if route != "judge")


def check(type_id: str, response: str, **params):
    return run_checker(REGISTRY.get(type_id), response, params)


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def test_table_10_has_40_types():
    assert len(TABLE_10) == 40


@pytest.mark.parametrize("type_id", sorted(TABLE_10))
def test_registered_with_table_route_and_dimension(type_id):
    ctype = REGISTRY.get(type_id)
    dimension, route = TABLE_10[type_id]
    assert (ctype.source, ctype.dimension, ctype.route) == ("vcifbench", dimension, route)
    assert (ctype.checker is None) == (route == "judge")


@pytest.mark.parametrize("type_id", sorted(TABLE_10))
def test_description_placeholders_are_params_and_params_are_documented(type_id):
    ctype = REGISTRY.get(type_id)
    fields = {f for _, f, _, _ in string.Formatter().parse(ctype.description) if f}
    assert fields <= set(ctype.param_names), fields - set(ctype.param_names)
    for p in ctype.params:
        assert p.help, f"{type_id}.{p.name} has no help text"
        assert p.name == p.name.lower() and " " not in p.name


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_checkers_have_docstring_example(type_id):
    doc = REGISTRY.get(type_id).checker.__doc__ or ""
    assert ">>>" in doc


@pytest.mark.parametrize("type_id", sorted(t for t, (_, r) in TABLE_10.items() if r == "judge"))
def test_judge_types_have_no_checker(type_id):
    with pytest.raises(ValueError, match="judge-route"):
        run_checker(REGISTRY.get(type_id), "anything", {})


@pytest.mark.parametrize("type_id", sorted(t for t, (_, r) in TABLE_10.items() if r == "hybrid"))
def test_hybrid_types_require_what_the_constraint_text_fixes(type_id):
    """An item that omits a hybrid type's params is flagged missing (-> judge extraction)."""
    ctype = REGISTRY.get(type_id)
    assert any(p.required for p in ctype.params)
    assert ctype.param_errors({}, allow_missing=True) == []
    with pytest.raises(MissingParamError):
        run_checker(ctype, "Some answer.", {})


def test_judge_params():
    assert REGISTRY.get("tone").param_names == ("tone",)
    assert REGISTRY.get("output_language").param_names == ("language",)
    assert REGISTRY.get("emphasis").param_names == ("spans", "marker")
    assert REGISTRY.get("emphasis").param("marker").default == "**"
    assert REGISTRY.get("sequence_marker_inclusion").param_names == ("markers",)
    assert REGISTRY.get("focus").param_names == ("aspects",)
    assert REGISTRY.get("content_inclusion").param_names == ("items",)
    assert REGISTRY.get("content_exclusion").param_names == ("items",)
    assert REGISTRY.get("pattern_opening").param_names == ("pattern",)
    assert REGISTRY.get("tone").param_errors({"tone": 3}) != []
    assert REGISTRY.get("tone").param_errors({}) == []


def test_conflict_templates():
    assert vc.CONFLICT_TEMPLATES == (
        "exact_include_exclude",
        "content_include_exclude",
        "case_exact_word",
        "json_plain_text",
        "csv_json",
        "sentence_fixed_closing",
        "lexical_prefix_repetition",
        "markdown_plain_emphasis",
        "visible_absent_content",
        "word_budget_long_phrase",
    )
    assert set(vc.CONFLICT_TEMPLATE_INFO) == set(vc.CONFLICT_TEMPLATES)
    for name, info in vc.CONFLICT_TEMPLATE_INFO.items():
        assert info.name == name and info.pattern.endswith(".") and info.kind
        assert all(t in TABLE_10 for t in info.types)
    assert set(vc.CONFLICT_TEMPLATE_ALIASES.values()) == set(vc.CONFLICT_TEMPLATES)


# --------------------------------------------------------------------------------------------
# Truth tables: (type, response, params, expected pass)
# --------------------------------------------------------------------------------------------

FENCED_JSON = '```json\n{"a": 1}\n```'
CASES = [
    # json
    ("json", '{"a": 1}', {}, True),
    ("json", "[1, 2]", {}, True),
    ("json", FENCED_JSON, {"top_level": "object"}, True),
    ("json", "42", {}, False),
    ("json", '"text"', {}, False),
    ("json", "[1]", {"top_level": "object"}, False),
    ("json", 'Here it is: {"a": 1}', {}, False),
    ("json", '{"a": 1,}', {}, False),
    ("json", '{"a": 1, "b": 2}', {"required_keys": ["a", "b"]}, True),
    ("json", '[{"a": 1}, {"b": 2}]', {"required_keys": ["a"]}, False),
    ("json", "   \n ", {}, False),
    # csv
    ("csv", "name,count\napple,3\npear,4", {}, True),
    ("csv", "```csv\nname,count\napple,3\n```", {}, True),
    ("csv", 'name,note\napple,"sweet, red"', {}, True),
    ("csv", 'name, note\napple, "sweet, red"', {}, True),
    ("csv", "name,count\napple,3,extra", {}, False),
    ("csv", "Here is the table:\nname,count\napple,3", {}, False),
    ("csv", "| a | b |\n|---|---|\n| 1 | 2 |", {}, False),
    ("csv", "The man walks, then sits.", {}, False),
    ("csv", "1,2\n3,4", {}, False),
    ("csv", "1,2\n3,4", {"require_header": False}, True),
    ("csv", "name,count", {}, False),
    ("csv", "name,count", {"min_rows": 0}, True),
    ("csv", "Name,Count\napple,3", {"columns": ["name", "count"]}, True),
    ("csv", "name,count\napple,3", {"columns": ["colour"]}, False),
    ("csv", "name,name\napple,3", {}, False),
    ("csv", "name;count\napple;3", {"delimiter": ";"}, True),
    ("csv", "", {}, False),
    # bullet_list
    ("bullet_list", "- red\n- blue", {}, True),
    ("bullet_list", "* red\n+ blue\n\u2022 green", {"min_items": 3}, True),
    ("bullet_list", "Colours:\n- red\n- blue", {}, True),
    ("bullet_list", "Colours:\n- red\n- blue", {"allow_text": False}, False),
    ("bullet_list", "- red\n  wrapped text\n- blue", {"allow_text": False}, True),
    ("bullet_list", "1. red\n2. blue", {}, False),
    ("bullet_list", "- red\n1. blue", {"allow_text": False}, False),
    ("bullet_list", "- red", {"min_items": 2}, False),
    ("bullet_list", "**Bold** line only", {}, False),
    ("bullet_list", "```\n- red\n- blue\n```", {"allow_text": False}, True),
    ("bullet_list", "", {}, False),
    # numbered_list
    ("numbered_list", "1. cut\n2. fry\n3. serve", {"min_items": 3}, True),
    ("numbered_list", "1) cut\n2) fry", {}, True),
    ("numbered_list", "1. cut\n3. fry", {}, False),
    ("numbered_list", "1. cut\n3. fry", {"require_sequential": False}, True),
    ("numbered_list", "2. cut\n3. fry", {}, False),
    ("numbered_list", "1. cut\n   1. dice\n   2. mince\n2. fry", {}, True),
    ("numbered_list", "Part A\n1. cut\n2. fry\nPart B\n1. plate", {}, True),
    ("numbered_list", "Steps:\n1. cut", {"allow_text": False}, False),
    ("numbered_list", "- cut\n- fry", {}, False),
    ("numbered_list", "  ", {}, False),
    # markdown
    ("markdown", "## Summary\nA man cooks.", {}, True),
    ("markdown", "A **bold** claim.", {}, True),
    ("markdown", "- one\n- two", {}, True),
    ("markdown", "| a | b |\n|---|---|\n| 1 | 2 |", {"elements": ["table"]}, True),
    ("markdown", "Run `ls` now.", {"elements": ["code"]}, True),
    ("markdown", "See [docs](http://x.org).", {}, True),
    ("markdown", "> quoted", {}, True),
    ("markdown", "Just a plain sentence.", {}, False),
    ("markdown", "## Title\nplain", {"elements": ["heading", "list"]}, False),
    ("markdown", "", {}, False),
    # plain_text
    ("plain_text", "A man cooks pasta. Then he eats it.", {}, True),
    ("plain_text", "1. cut\n2. fry", {}, True),
    ("plain_text", "1. cut\n2. fry", {"allow_numbered": False}, False),
    ("plain_text", "snake_case names and 2*3*4 are fine.", {}, True),
    ("plain_text", "It costs $5 - cheap!", {}, True),
    ("plain_text", "## Summary\nText.", {}, False),
    ("plain_text", "A **bold** claim.", {}, False),
    ("plain_text", "An *italic* claim.", {}, False),
    ("plain_text", "- one\n- two", {}, False),
    ("plain_text", "| a | b |\n|---|---|", {}, False),
    ("plain_text", "```\ncode\n```", {}, False),
    ("plain_text", "See [docs](http://x.org).", {}, False),
    ("plain_text", "> quoted", {}, False),
    ("plain_text", "Above\n---\nBelow", {}, False),
    ("plain_text", " \n", {}, False),
    # word_count
    ("word_count", "A red ball rolls.", {"min_count": 3, "max_count": 5}, True),
    ("word_count", "A red ball rolls.", {"min_count": 5, "max_count": None}, False),
    ("word_count", "A red ball rolls.", {"min_count": None, "max_count": 3}, False),
    ("word_count", "A red ball rolls.", {"min_count": 4, "max_count": 4}, True),
    ("word_count", "Don\u2019t stop: 3 red squares, \u7ea2\u8272", {"min_count": 5, "max_count": 5}, True),
    ("word_count", "```\none two\n```", {"min_count": 2, "max_count": 2}, True),
    ("word_count", "\u6211\u4eec\u559c\u6b22\u732b", {"min_count": 5, "max_count": 5, "unit": "character"}, True),
    ("word_count", "\u6211\u4eec\u559c\u6b22\u732b", {"min_count": 1, "max_count": None}, False),
    ("word_count", "", {"min_count": 0, "max_count": 10}, False),
    # sentence_count
    ("sentence_count", "It rains. We wait!", {"min_count": 2, "max_count": 2}, True),
    ("sentence_count", "Dr. Smith came, e.g. at 3.5 pm. He left.", {"min_count": 2, "max_count": 2}, True),
    ("sentence_count", "One. Two. Three.", {"min_count": None, "max_count": 2}, False),
    ("sentence_count", "\u4ed6\u6765\u4e86\u3002\u4ed6\u8d70\u4e86\u3002", {"min_count": 2, "max_count": 2}, True),
    ("sentence_count", "\t", {"min_count": None, "max_count": 2}, False),
    # paragraph_count
    ("paragraph_count", "One.\n\nTwo.\n\nThree.", {"min_count": 3, "max_count": 3}, True),
    ("paragraph_count", "One.\n   \n\nTwo.", {"min_count": 2, "max_count": 2}, True),
    ("paragraph_count", "One.\nStill one.", {"min_count": 2, "max_count": None}, False),
    ("paragraph_count", "A.\n\nB.\n\nC.", {"min_count": None, "max_count": 2}, False),
    ("paragraph_count", "", {"min_count": None, "max_count": 2}, False),
    # item_count
    ("item_count", "- a\n- b\n- c", {"min_count": 3, "max_count": 3}, True),
    ("item_count", "1. a\n2. b\n- c", {"min_count": 3, "max_count": 3}, True),
    ("item_count", "1. a\n2. b\n- c", {"min_count": 2, "max_count": 2, "kind": "numbered"}, True),
    ("item_count", "1. a\n2. b\n- c", {"min_count": 2, "max_count": 2, "kind": "bullet"}, False),
    ("item_count", "- a\n- b", {"min_count": 3, "max_count": None}, False),
    ("item_count", "No list here.", {"min_count": 1, "max_count": None}, False),
    ("item_count", "", {"min_count": None, "max_count": 5}, False),
    # fixed_opening
    ("fixed_opening", "In this video, a man cooks.", {"text": "In this video,"}, True),
    ("fixed_opening", "  In this video, a man cooks.", {"text": "In this video, "}, True),
    ("fixed_opening", "in this video, a man cooks.", {"text": "In this video,"}, False),
    ("fixed_opening", "in this video, a man cooks.", {"text": "In this video,", "ignore_case": True}, True),
    ("fixed_opening", "\u201cHello\u201d  world, bye.", {"text": '"Hello" world'}, True),
    ("fixed_opening", "Sure! In this video, a man cooks.", {"text": "In this video,"}, False),
    ("fixed_opening", "", {"text": "In"}, False),
    # fixed_closing
    ("fixed_closing", "A man cooks. That is all.", {"text": "That is all."}, True),
    ("fixed_closing", "A man cooks. That is all.  \n\n", {"text": "That is all."}, True),
    ("fixed_closing", "A man cooks. That is all", {"text": "That is all."}, False),
    ("fixed_closing", "A man cooks. That is all. Bye.", {"text": "That is all."}, False),
    ("fixed_closing", "It\u2019s done.", {"text": "It's done."}, True),
    ("fixed_closing", "IT'S DONE.", {"text": "It's done.", "ignore_case": True}, True),
    # prefix_label
    ("prefix_label", "- Step: cut\n- Step: fry", {"prefix": "Step:"}, True),
    ("prefix_label", "- Step: cut\n- fry", {"prefix": "Step:"}, False),
    ("prefix_label", "- **Step 1:** cut\n- Step 2: fry", {"prefix": "Step {n}:"}, True),
    ("prefix_label", "Step 1: cut\nStep 3: fry", {"prefix": "Step {n}:"}, False),
    ("prefix_label", "Intro line\n- Tip: a\n- Tip: b", {"prefix": "Tip:"}, True),
    ("prefix_label", "Intro line\n- Tip: a\n- Tip: b", {"prefix": "Tip:", "scope": "lines"}, False),
    ("prefix_label", "Note: a\ncontinued\n\nNote: b", {"prefix": "Note:", "scope": "paragraphs"}, True),
    ("prefix_label", "Note: a\n\nb", {"prefix": "Note:", "scope": "paragraphs"}, False),
    ("prefix_label", "- tip: a", {"prefix": "Tip:"}, False),
    ("prefix_label", "- tip: a", {"prefix": "Tip:", "ignore_case": True}, True),
    ("prefix_label", "- [A] one\n- [A] two", {"prefix": "[A]"}, True),
    ("prefix_label", "", {"prefix": "Tip:"}, False),
    # letter_case
    ("letter_case", "a cat sits on the mat.", {"case": "lower"}, True),
    ("letter_case", "a cat sits on the Mat.", {"case": "lower"}, False),
    ("letter_case", "nasa's rocket by NASA", {"case": "lower", "exceptions": ["NASA"]}, True),
    ("letter_case", "\u6211\u4eec like cats", {"case": "lower"}, True),
    ("letter_case", "A CAT SITS, 3 TIMES.", {"case": "upper"}, True),
    ("letter_case", "A CAT sits.", {"case": "upper"}, False),
    ("letter_case", "The Cat in the Hat", {"case": "title"}, True),
    ("letter_case", "The cat in the Hat", {"case": "title"}, False),
    ("letter_case", "Intro Line\n- a cat\n- the dog", {"case": "lower", "scope": "items"}, True),
    ("letter_case", "- a cat\n- The dog", {"case": "lower", "scope": "items"}, False),
    ("letter_case", "no list here", {"case": "lower", "scope": "items"}, False),
    ("letter_case", "The cat sat. A dog ran!", {"case": "sentence"}, True),
    ("letter_case", "The cat sat. a dog ran!", {"case": "sentence"}, False),
    ("letter_case", "hello World", {"case": "lower", "scope": "first_word"}, True),
    ("letter_case", "**Hello** world", {"case": "title", "scope": "first_word"}, True),
    ("letter_case", "# Big Title\nsmall text", {"case": "title", "scope": "headings"}, True),
    ("letter_case", "No headings here.", {"case": "title", "scope": "headings"}, False),
    ("letter_case", "- FIRST\n- SECOND\nintro text", {"case": "upper", "scope": "items"}, True),
    ("letter_case", "- apple\n- Pear", {"case": "lower", "scope": "lines"}, False),
    ("letter_case", "", {"case": "lower"}, False),
    # no_contractions
    ("no_contractions", "It is the chef's knife; do not touch it.", {}, True),
    ("no_contractions", "The dogs' bowls and James' hat.", {}, True),
    ("no_contractions", "Do not worry, it is fine.", {}, True),
    ("no_contractions", "I don't know.", {}, False),
    ("no_contractions", "I don\u2019t know.", {}, False),
    ("no_contractions", "It's raining.", {}, False),
    ("no_contractions", "Let\u2019s go.", {}, False),
    ("no_contractions", "They're here.", {}, False),
    ("no_contractions", "We've won.", {}, False),
    ("no_contractions", "She'll come.", {}, False),
    ("no_contractions", "I'd go.", {}, False),
    ("no_contractions", "I'm here.", {}, False),
    ("no_contractions", "There's a cat.", {}, False),
    ("no_contractions", "  ", {}, False),
    # exact_word_inclusion
    ("exact_word_inclusion", "Launched by NASA.", {"phrases": ["NASA"]}, True),
    ("exact_word_inclusion", "Launched by nasa.", {"phrases": ["NASA"]}, False),
    ("exact_word_inclusion", "Launched by nasa.", {"phrases": ["NASA"], "ignore_case": True}, True),
    ("exact_word_inclusion", "NASAs rocket", {"phrases": ["NASA"]}, False),
    ("exact_word_inclusion", "\u6211\u7528NASA\u6570\u636e", {"phrases": ["NASA"]}, True),
    ("exact_word_inclusion", "\u7ea2\u8272\u7684\u7403", {"phrases": ["\u7ea2\u8272"]}, True),
    ("exact_word_inclusion", "the red\n ball", {"phrases": ["red ball"]}, True),
    ("exact_word_inclusion", "the \u201cbig\u201d one", {"phrases": ['"big"']}, True),
    ("exact_word_inclusion", "red ball", {"phrases": ["red", "blue"]}, False),
    ("exact_word_inclusion", "red ball", {"phrases": ["red", "blue"], "match_all": False}, True),
    ("exact_word_inclusion", "red red", {"phrases": ["red"], "min_occurrences": 2}, True),
    ("exact_word_inclusion", "red", {"phrases": ["red"], "min_occurrences": 2}, False),
    ("exact_word_inclusion", "", {"phrases": ["red"]}, False),
    # exact_word_exclusion
    ("exact_word_exclusion", "A tasty soup.", {"phrases": ["delicious"]}, True),
    ("exact_word_exclusion", "A Delicious soup.", {"phrases": ["delicious"]}, False),
    ("exact_word_exclusion", "A Delicious soup.", {"phrases": ["delicious"], "ignore_case": False}, True),
    ("exact_word_exclusion", "undeliciousness", {"phrases": ["delicious"]}, True),
    ("exact_word_exclusion", "undeliciousness", {"phrases": ["delicious"], "whole_word": False}, False),
    ("exact_word_exclusion", "\u975e\u5e38\u597d\u5403", {"phrases": ["\u597d\u5403"]}, False),
    ("exact_word_exclusion", "", {"phrases": ["x"]}, False),
    # lexical_diversity
    ("lexical_diversity", "The soup is hot; the broth is red.", {"terms": ["soup"]}, True),
    ("lexical_diversity", "The soup is hot; the Soup is red.", {"terms": ["soup"]}, False),
    ("lexical_diversity", "A tasty dish.", {"terms": ["tasty"], "max_occurrences": 0}, False),
    ("lexical_diversity", "A good dish.", {"terms": ["tasty"], "max_occurrences": 0}, True),
    ("lexical_diversity", "The chef cooks and the chef serves.", {"terms": None}, False),
    ("lexical_diversity", "The chef cooks and the chef serves.", {"terms": None, "max_occurrences": 2}, True),
    ("lexical_diversity", "The cat and the dog and the cow.", {"terms": None}, True),
    ("lexical_diversity", "There were those that were there.", {"terms": None}, True),
    ("lexical_diversity", "The chef's knife and the chef.", {"terms": None}, False),
    ("lexical_diversity", "", {"terms": None}, False),
]


@pytest.mark.parametrize(("type_id", "response", "params", "expected"), CASES)
def test_truth_table(type_id, response, params, expected):
    result = check(type_id, response, **params)
    assert result.passed is expected, result.reason
    assert result.reason


def test_every_rule_and_hybrid_type_has_pass_and_fail_cases():
    for type_id in RULE_IDS:
        outcomes = {expected for t, _, _, expected in CASES if t == type_id}
        assert outcomes == {True, False}, type_id


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_whitespace_response_fails_every_rule_type(type_id):
    ctype = REGISTRY.get(type_id)
    params = next(p for t, _, p, _ in CASES if t == type_id)
    assert run_checker(ctype, " \n\t ", params).passed is False


# --------------------------------------------------------------------------------------------
# Reasons are actionable
# --------------------------------------------------------------------------------------------

REASONS = [
    ("word_count", "one two three four five six", {"min_count": 2, "max_count": 4}, "6 words, expected 2-4"),
    ("sentence_count", "One. Two.", {"min_count": 3, "max_count": None}, "2 sentences, expected at least 3"),
    ("prefix_label", "Step: a\nStep: b\nc", {"prefix": "Step:", "scope": "lines"}, "line 3 does not start with 'Step:'"),
    ("prefix_label", "Step 1: a\nStep 3: b", {"prefix": "Step {n}:"}, "line 2 does not start with 'Step 2:'"),
    ("numbered_list", "1. a\n3. b", {}, "line 2 is numbered '3.', expected 2"),
    ("csv", "a,b\n1,2,3", {}, "row 2 has 3 fields, expected 2"),
    ("json", "42", {}, "top level is a JSON number, expected an object or array"),
    ("json", "{", {}, "invalid JSON"),
    ("plain_text", "ok\n## Head", {}, "line 2 has Markdown heading"),
    ("no_contractions", "We can't.", {}, "\"can't\" (line 1)"),
    ("exact_word_exclusion", "ok\nso tasty", {"phrases": ["tasty"]}, "forbidden 'tasty' appears once (first on line 2"),
    ("exact_word_inclusion", "ball", {"phrases": ["red"]}, "'red' appears 0 times, expected at least once"),
    ("lexical_diversity", "soup soup soup", {"terms": ["soup"], "max_occurrences": 2}, "'soup' appears 3 times, at most 2"),
    ("letter_case", "all good Here", {"case": "lower"}, "words not in lower case: 'Here'"),
    ("fixed_closing", "Done now.", {"text": "Bye."}, "expected 'Bye.'"),
    ("bullet_list", "Intro\n- a", {"allow_text": False}, "line 1 is text outside the list"),
    ("markdown", "## T", {"elements": ["table"]}, "no Markdown table found"),
    ("word_count", "", {"min_count": 1, "max_count": None}, "empty response"),
]


@pytest.mark.parametrize(("type_id", "response", "params", "fragment"), REASONS)
def test_reasons(type_id, response, params, fragment):
    assert fragment in check(type_id, response, **params).reason


# --------------------------------------------------------------------------------------------
# Parameter-spec errors
# --------------------------------------------------------------------------------------------

MISSING = [
    ("word_count", {"min_count": 3}),
    ("sentence_count", {}),
    ("paragraph_count", {"max_count": 2}),
    ("item_count", {}),
    ("fixed_opening", {}),
    ("fixed_closing", {"ignore_case": True}),
    ("prefix_label", {"scope": "lines"}),
    ("letter_case", {"scope": "all"}),
    ("exact_word_inclusion", {}),
    ("exact_word_exclusion", {}),
    ("lexical_diversity", {"max_occurrences": 2}),
]


@pytest.mark.parametrize(("type_id", "params"), MISSING)
def test_missing_required_param_raises(type_id, params):
    with pytest.raises(MissingParamError, match="missing required"):
        check(type_id, "Some answer.", **params)


WRONG_TYPE = [
    ("word_count", {"min_count": "40", "max_count": 60}),
    ("word_count", {"min_count": True, "max_count": 60}),
    ("json", {"top_level": "scalar"}),
    ("csv", {"min_rows": 1.5}),
    ("bullet_list", {"allow_text": "yes"}),
    ("markdown", {"elements": ["heading", "diagram"]}),
    ("fixed_opening", {"text": 3}),
    ("prefix_label", {"prefix": "A", "scope": "sentences"}),
    ("letter_case", {"case": "camel"}),
    ("exact_word_inclusion", {"phrases": "NASA"}),
    ("exact_word_exclusion", {"phrases": ["x"], "whole_word": 1}),
    ("lexical_diversity", {"terms": ["a"], "max_occurrences": "2"}),
    ("item_count", {"min_count": 1, "max_count": None, "kind": "checkbox"}),
    ("word_count", {"min_count": 1, "max_count": 2, "words": 3}),  # unknown param
]


@pytest.mark.parametrize(("type_id", "params"), WRONG_TYPE)
def test_wrong_type_raises_value_error(type_id, params):
    ctype = REGISTRY.get(type_id)
    assert ctype.param_errors(params)
    with pytest.raises(ValueError):
        run_checker(ctype, "Some answer.", params)


CROSS_FIELD = [
    ("word_count", {"min_count": 60, "max_count": 40}, "greater than max_count"),
    ("sentence_count", {"min_count": None, "max_count": None}, "at least one of"),
    ("paragraph_count", {"min_count": -1, "max_count": None}, ">= 0"),
    ("item_count", {"min_count": 5, "max_count": 2}, "greater than max_count"),
    ("json", {"top_level": "array", "required_keys": ["a"]}, "required_keys"),
    ("csv", {"require_header": False, "columns": ["a"]}, "require_header"),
    ("csv", {"delimiter": ";;"}, "one character"),
    ("fixed_opening", {"text": "  "}, "must not be empty"),
    ("prefix_label", {"prefix": ""}, "must not be empty"),
    ("exact_word_inclusion", {"phrases": []}, "non-empty"),
    ("exact_word_inclusion", {"phrases": ["a"], "min_occurrences": 0}, "min_occurrences"),
    ("exact_word_exclusion", {"phrases": [""]}, "non-empty"),
    ("lexical_diversity", {"terms": [], "max_occurrences": 1}, "terms"),
    ("lexical_diversity", {"terms": None, "max_occurrences": -1}, "max_occurrences"),
]


@pytest.mark.parametrize(("type_id", "params", "fragment"), CROSS_FIELD)
def test_cross_field_errors(type_id, params, fragment):
    ctype = REGISTRY.get(type_id)
    errors = ctype.param_errors(params)
    assert errors and fragment in errors[0][1], errors
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        run_checker(ctype, "Some answer.", params)


def test_nullable_bound_is_accepted():
    ctype = REGISTRY.get("word_count")
    assert ctype.param_errors({"min_count": None, "max_count": 5}) == []
    assert ctype.param_errors({"min_count": 5, "max_count": 5}) == []


def test_response_must_be_str():
    with pytest.raises(TypeError):
        run_checker(REGISTRY.get("json"), None, {})  # type: ignore[arg-type]


# --- markdown / plain_text: the former every-line scan is the reference ---------------------------


def _markdown_findings_every_line(text):
    """The former scan (the reference): every pattern on every line, then a stable sort by line."""
    from ifpo.verifiers.text import list_items

    findings, lines, list_lines = [], text.splitlines(), set()
    for item in list_items(text):
        findings.append(("bullet" if item.kind == "bullet" else "numbered", item.line + 1, lines[item.line]))
        list_lines.add(item.line)
    for index, line in enumerate(lines):
        for element, pattern in vc._MD_LINE_PATTERNS:
            if element == "rule" and index in list_lines:
                continue
            if pattern.search(line):
                findings.append((element, index + 1, line))
    return sorted(findings, key=lambda f: f[1])


def _elements_of(findings):
    found = []
    for element, _, _ in findings:
        element = "list" if element in ("bullet", "numbered") else element
        if element not in found:
            found.append(element)
    return found


def test_markdown_elements_equal_the_every_line_scan():
    # one search per element over the joined lines, against every pattern on every line: line ends of
    # every kind, whitespace that is not a line end (\u3000, \x1f), "- - -" list items that are no rule
    import random

    rng = random.Random(0)
    atoms = ["#", "## ", "*", "**", "_", "__", "|", "---", "-", " - ", "`", "```", "~~~", "[a](b)", "](", ">",
             "> ", " ", "\t", "word", "x", "1. ", "- ", "\n", "\n", "\n", "\r\n", ":", "\u2028", "\u3000",
             "\x1f", "\x0b", "\x85", "\r", "- - -", "* * *", "___", "[", "]", "(", ")", '"', ' "t"', "!",
             "a_b", "*x*", "_y_", "|---|", ":--", "   ", "    "]
    texts = ["# h\n- a\n- - -\n***\n| a | b |\n|---|---|\n`c`\n> q\n[l](u)\n**b** _i_",
             "- - -\n- - -\n---", "* * *\n\n> x", '[a](b "t\nu")', "a\n#\tb", ">\n>x", "|\n|\n|",
             *("".join(rng.choice(atoms) for _ in range(rng.randint(0, 30))) for _ in range(12000))]
    for text in texts:
        assert vc._markdown_elements(text) == _elements_of(_markdown_findings_every_line(text)), repr(text)


def test_contractions_found_as_a_whole_text_scan_finds_them():
    import random

    rng = random.Random(0)
    # the letters IGNORECASE adds to [A-Za-z] (İ ı ſ K), other word characters (3, é, _) before an
    # apostrophe, apostrophe runs and every tail: where a match may start is read back from the apostrophe
    atoms = ["don't", "it's", "we've", "'tis", "y'all", "car's", "'", "’", "x", "It", "Let", "n't", "s", " ", "\n",
             "\n", "_", "é", "-", "I'm", "\r\n", "'re", "İ", "ı", "ſ", "\u212a", "3", "n", "t", "'t", "'s", "''",
             "'twas", "Y'ALL", "DON'T", "iT'S", "'LL", "'d", "ve", "all", "TIS", "y", "a"]
    for _ in range(8000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 16)))
        got = [(m.group(0), m.span()) for m in vc._contractions(text)]
        assert got == [(m.group(0), m.span()) for m in vc._CONTRACTION.finditer(text)], repr(text)


def test_contractions_of_a_long_apostrophe_line_end_at_once():
    # one 400 KB line of apostrophes and unclosed openers (the bench's unclosed_openers shape after
    # normalize_quotes): the former line-wise finditer tried the lookbehind-first pattern at every position
    import time

    line = "[x. «y. 'z. 'w. (v. " * 20_000 + "don't " + "a" * 100_000 + "n't"
    start = time.process_time()
    got = [(m.group(0), m.span()) for m in vc._contractions(line)]
    assert time.process_time() - start < 5  # a hang guard only (the bench times it)
    assert got == [(m.group(0), m.span()) for m in vc._CONTRACTION.finditer(line)]
    assert [g[0] for g in got] == ["don't", "a" * 100_000 + "n't"]


def test_case_violations_equal_a_character_scan():
    import random

    rng = random.Random(0)
    atoms = ["a", "B", "ǅ", "ß", "Σ", "ς", "ϒ", "ª", "İ", "ı", "3", "x", "Ⅻ", "ⅻ", "ᾈ", "é", "É", "-", "'", " "]
    for _ in range(4000):
        unit = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 12)))
        ws = vc.words(unit)
        assert vc._case_violations(unit, "lower") == [w for w in ws if any(c.isupper() for c in w)], repr(unit)
        assert vc._case_violations(unit, "upper") == [w for w in ws if any(c.islower() for c in w)], repr(unit)


def test_flat_startswith_equals_flattening_the_whole_text():
    import random

    from ifpo.verifiers.text import flatten

    rng = random.Random(0)
    atoms = ["Step", "step", "1:", " ", "  ", "\t", "\n", "*", "**", "_", "__", "x", "“", "”", "ß", "SS", "İ", "a*b",
             " *", "* ", "_x_"]
    for _ in range(3000):
        want = flatten("".join(rng.choice(atoms[:6]) for _ in range(rng.randint(1, 4))) or "x")
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 400)))
        for ic in (False, True):
            want_ic = flatten(want, ignore_case=ic) or "x"
            for drop in (False, True):
                whole = vc._EMPH_MARKS.sub("", text) if drop else text
                expected = flatten(whole, ignore_case=ic).startswith(want_ic)
                assert vc._flat_startswith(text, want_ic, ic, drop_emphasis=drop) == expected, (text, want_ic, ic, drop)


def test_flat_startswith_reads_past_a_head_cut_inside_an_emphasis_decision():
    # the head ends in " *": alone the star is kept ("x *"); in the whole text "*y" it is a marker
    # and is removed ("x y"), so the head's last characters must not decide
    want = "x *"
    text = " " * (4 * len(want) + 256 - 3) + "x *y"
    assert vc._flat_startswith(text, want, False, drop_emphasis=True) is False
    assert vc._flat_startswith(text, "x y", False, drop_emphasis=True) is True


def test_markdown_joined_patterns_match_the_lines_their_line_patterns_match():
    # the joined search alone (the checker confirms each line it finds all the same): a match never
    # crosses a line end, and the lines it finds are exactly those the line's own pattern matches
    import random

    from ifpo.verifiers.text import list_items

    rng = random.Random(3)
    atoms = ["#", "# ", "*", "**", "_", "__", "|", "---", "-", "`", "```", "~~~", "[a](b)", "](", ">", " ",
             "\t", "x", "\n", "\n", "\u3000", "\x1f", "- - -", "[", "]", "(", ")", '"', ' "t"', "!", "a_b", ":",
             "  "]
    cases = [["[a](b \"t", "u\")"], ["#", " x"], [">", "x"], ["|", "|x|"], ["**a", "b**"], ["`a", "b`"],
             ["   ", "---"],
             ["", "|a|b|"], [" ", "|---|---|"], ["", "# h"], ["", "> q"], ["", "- - -"], ["", "```"],
             *("".join(rng.choice(atoms) for _ in range(rng.randint(0, 30))).split("\n")
               for _ in range(6000))]
    for lines in cases:
        joined = "\n" + "\n".join(lines)
        starts = [i for i, c in enumerate(joined) if c == "\n"]
        for element, pattern in vc._MD_LINE_PATTERNS:
            found = set()
            for m in vc._MD_JOINED_PATTERNS[element].finditer(joined):
                assert "\n" not in joined[m.start() + 1:m.end()], (element, lines, m)
                found.add(sum(1 for q in starts if q <= m.start()) - 1)
            expected = {i for i, line in enumerate(lines) if pattern.search(line)
                        and not (element == "rule" and list_items(line))}  # a list item is no rule
            assert found == expected, (element, lines)


def test_first_markdown_finding_is_the_first_of_all_findings():
    import random

    from ifpo.verifiers.rules import vcifbench as vc

    rng = random.Random(5)
    atoms = ["#", "# ", "## H", "*", "**b**", "_", "__u__", "|", "| a | b |", "---", "- ", "* ", "1. ", "2) ", "`",
             "```", "~~~", "[x](y)", "> ", "- - -", "***", "text", " ", "\n", "\n", "\n\n", "\t", "a", "."]
    for _ in range(4000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(1, 40)))
        for skip in (True, False):
            expected = next((f for f in _markdown_findings_every_line(text)
                             if not (skip and f[0] == "numbered")), None)
            assert vc._first_markdown_finding(text, skip_numbered=skip) == expected, (text, skip)


def test_rule_line_pattern_equals_the_back_reference_form():
    import random
    import re

    from ifpo.verifiers.rules import vcifbench as vc

    former = re.compile(r"^\s{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
    rule = dict(vc._MD_LINE_PATTERNS)["rule"]
    rng = random.Random(1)
    atoms = ["-", "*", "_", " ", "\t", "a", "\u3000", "  ", "--", "**"]
    for _ in range(50_000):
        line = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 9)))
        assert bool(rule.search(line)) == bool(former.search(line)), repr(line)


def test_prefix_label_reads_its_units_lazily_with_the_former_verdicts():
    import random

    from golden import assert_golden

    rng = random.Random(25)
    atoms = ["Step 1:", "Step 2:", "step 3:", "Step {n}", "- ", "* ", "1. ", "## ", "**Step 1:**", " ", "\t", "x",
             "\n", "\n", "\n\n", "  \n", "\u3000", "```\n", "Tip:", "\r\n", "\u2028"]
    prefixes = ["Step {n}:", "Tip:", "step {n}", "- x"]
    cases = []
    for _ in range(4000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 24)))
        for scope in ("items", "lines", "paragraphs"):
            cases.append((text, {"prefix": rng.choice(prefixes), "scope": scope, "ignore_case": rng.random() < 0.5}))
    # The former verdicts (every unit listed first), recorded: tests/golden.py.
    got = [vc.check_prefix_label(text, params) for text, params in cases]
    assert_golden("vcifbench_prefix_label", cases, got)
    assert 200 < sum(g.passed for g in got) < len(got) - 200


def test_list_checks_equal_the_former_list_item_scan():
    import random

    from golden import assert_golden
    from ifpo.verifiers.text import bullet_item_lines, item_number, list_items, numbered_item_fields

    rng = random.Random(27)
    atoms = ["- ", "* ", "+ ", "• ", "· ", "-- ", "** ", "1. ", "2) ", "10. ", "3. ", "1) ", "2. ", "٣. ", "01. ",
             "x", "item", " ", "  ", "\t", "\n", "\n",
             "\n\n", "\r\n", "\u2028", "\x0b", "\x85", "-", "*", "1.", "```\n", "\u3000"]
    cases, got = [], []
    fixed = ["\n x\n- a\n- b", "\n\tx\n1. a\n2. b", " x\n- a", "\n  \n y\n", "- a\n x\n- b", "1. a\n\tx\n2) b"]
    for i in range(6000):
        text = fixed[i] if i < len(fixed) else "".join(rng.choice(atoms) for _ in range(rng.randint(0, 24)))
        assert bullet_item_lines(text) == [i.line for i in list_items(text) if i.kind == "bullet"], repr(text)
        assert [(line, item_number(marker[:-1]), marker) for line, marker in numbered_item_fields(text)] == [
            (i.line, i.number, i.marker) for i in list_items(text) if i.kind == "numbered"], repr(text)
        for kind in ("bullet", "numbered"):
            params = {"min_items": rng.choice([0, 1, 2]), "allow_text": i >= len(fixed) and rng.random() < 0.4,
                      "require_sequential": rng.random() < 0.5}
            failure, text_seen, items = vc._list_check(text, params, kind)
            check = vc.check_bullet_list if kind == "bullet" else vc.check_numbered_list
            cases.append((text, params, kind))
            got.append((failure, text_seen if text_seen != text else "=", len(items), check(text, params)))
    # The former list-item scan's answers (failure, the text read ("=": as given), item count, verdict),
    # recorded: tests/golden.py.
    assert_golden("vcifbench_list_checks", cases, got)
    assert 300 < sum(g[3].passed for g in got) < len(got) - 300


def test_list_items_with_numbers_longer_than_int_reads_give_verdicts():
    # an item number of more digits than int() converts from text (4300) raised ValueError out of
    # every list checker; leading zeros of any script do not count, a number still too long compares
    # as a number above any count
    from ifpo.verifiers.text import list_items

    long_one = "1" * 5000
    items = list_items(f"- a\n{long_one}. x\n{'0' * 5000}2. y\n{chr(0x660) * 4400}{chr(0x663)}) z\n7. w")
    numbers = [i.number for i in items]
    assert numbers[0] is None and numbers[2:] == [2, 3, 7]
    assert 10 ** 4999 <= numbers[1] <= (10 ** 5000 - 1) // 9  # at most the value of 5000 ones
    text = f"- a\n- b\n{long_one}. x"
    sequential = {"min_items": 1, "allow_text": True, "require_sequential": True}
    assert vc.check_numbered_list(text, sequential).reason.startswith(f"line 3 is numbered '{long_one[:20]}")
    assert vc.check_bullet_list(text, {"min_items": 2, "allow_text": True}).passed
    assert vc.check_markdown(f"{long_one}. x\n- a", {"elements": ["list"]}).passed
    assert vc.check_numbered_list(f"{'0' * 5000}1. x\n2. y", sequential).passed


def test_numbered_sequences_equal_the_former_loop():
    # flat lists (the one-depth path) and nested ones (the per-item loop): runs that go up by one,
    # restarts at 1, skips and repeats, wide and non-ASCII digits, ")" and "." delimiters
    import random

    from golden import assert_golden

    rng = random.Random(30)
    params = {"min_items": 1, "allow_text": True, "require_sequential": True}
    texts = []
    for _ in range(4000):
        nested = rng.random() < 0.4
        lines, n = [], 0
        for _ in range(rng.randint(1, 12)):
            n = rng.choice([n + 1] * 6 + [1, n, n + 2, 0])
            digits = str(n) if rng.random() < 0.9 else "٠" * rng.randint(0, 2) + str(n).translate(
                str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
            indent = rng.choice(["", "  ", "\t", "    "]) if nested else ""
            lines.append(f"{indent}{digits}{rng.choice('.)')} item")
        texts.append("\n".join(lines))
    # The former per-item loop's verdicts, recorded: tests/golden.py.
    got = [vc.check_numbered_list(text, params) for text in texts]
    assert_golden("vcifbench_numbered_sequences", texts, got)
    assert 300 < sum(g.passed for g in got) < len(got) - 300
