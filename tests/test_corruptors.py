"""Single-constraint corruptors: registry coverage, truth on the sample benchmark, determinism,
and hand-written cases for the ids the sample does not exercise."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from ifpo.data_builders.corruptors import (
    CORRUPTORS,
    NO_CORRUPTOR,
    corrupt_candidates,
    get_corruptor,
    supported,
)
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import MissingParamError, run_checker

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample" / "items.jsonl"
# Rule/hybrid types, less those whose family documents why they get no corruptor (NO_CORRUPTOR).
RULE_IDS = [t.id for t in REGISTRY if t.route != "judge" and t.id not in NO_CORRUPTOR]
JUDGE_IDS = [t.id for t in REGISTRY if t.route == "judge"]

# Types that cannot be broken alone on any sample item, and why. Each entry names the other type
# whose checker gives the same verdict by construction; the truth test checks that every item
# where the type fails to break alone does carry that twin.
CANNOT_BREAK_ALONE = {
    "paragraph_count_constraint": (
        "paragraph_count",
        "both count blank-line separated paragraphs of the fence-stripped response, and every "
        "sample item that has one has the other with the same bounds",
    ),
}


def passes(type_id: str, response: str, params: dict) -> bool:
    return run_checker(REGISTRY.get(type_id), response, params).passed


# ---------------------------------------------------------------------------------------------
# 1. Coverage


@pytest.mark.parametrize("type_id", RULE_IDS)
def test_every_rule_and_hybrid_type_has_a_corruptor(type_id):
    assert supported(type_id), f"{type_id} is rule/hybrid-route but has no corruptor"
    corr = get_corruptor(type_id)
    assert corr.type_id == type_id
    assert "Example" in corr.doc, f"the corruptor of {type_id} needs a docstring with an example"


def test_registry_has_only_rule_and_hybrid_types():
    assert sorted(CORRUPTORS) == sorted(RULE_IDS)


@pytest.mark.parametrize("type_id", JUDGE_IDS[:5] + ["vsys_tone_manner"])
def test_judge_types_are_not_supported(type_id):
    assert not supported(type_id)
    with pytest.raises(KeyError, match="judge-route"):
        get_corruptor(type_id)


def test_unknown_type_suggests_the_closest():
    assert not supported("word_cuont")
    with pytest.raises(KeyError, match="did you mean 'word_count'"):
        get_corruptor("word_cuont")


def test_missing_hybrid_param_raises():
    with pytest.raises(MissingParamError):
        corrupt_candidates("word_count", "A red ball rolls.", {"min_count": 3}, random.Random(0))


def test_candidates_are_distinct_nonempty_failing_and_minimal_first():
    response = "At 0.5 s a red circle appears. It moves right, then it stops. Nothing else happens."
    params = {"min_count": 2, "max_count": 3}
    cands = corrupt_candidates("sentence_count", response, params, random.Random(0))
    assert cands and len(set(cands)) == len(cands)
    assert response not in cands and all(c.strip() for c in cands)
    assert not any(passes("sentence_count", c, params) for c in cands)
    import difflib

    sizes = [sum(max(i2 - i1, j2 - j1) for t, i1, i2, j1, j2 in
                 difflib.SequenceMatcher(None, response, c, autojunk=False).get_opcodes() if t != "equal")
             for c in cands]
    assert sizes == sorted(sizes)


# ---------------------------------------------------------------------------------------------
# 2. Truth on the sample benchmark


def _sample_items() -> list[dict]:
    if not SAMPLE.exists():
        return []
    items = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [it for it in items if it.get("reference_response")]


@pytest.fixture(scope="module")
def sample_results():
    """Per (item, constraint): the candidates and, for each, whether it broke exactly that one."""
    items = _sample_items()
    if not items:
        pytest.skip("sample/items.jsonl is absent or has no reference responses")
    results = []
    for item in items:
        ref = item["reference_response"]
        constraints = []
        for c in item["constraints"]:
            ctype = REGISTRY.get(c["type"])
            if ctype.route == "judge":
                continue
            try:
                verdict = run_checker(ctype, ref, c.get("params"))
            except MissingParamError:  # hybrid params left for the judge to extract
                continue
            constraints.append((c, verdict.passed))
        for c, ok in constraints:
            if not ok or not supported(c["type"]):
                continue
            cands = corrupt_candidates(c["type"], ref, c["params"], random.Random(0))
            target_fails = [not passes(c["type"], cand, c["params"]) for cand in cands]
            alone = [
                fails and all(passes(o["type"], cand, o["params"]) == base
                              for o, base in constraints if o is not c)
                for cand, fails in zip(cands, target_fails)
            ]
            results.append({"item": item, "constraint": c, "candidates": cands,
                            "target_fails": target_fails, "alone": alone})
    return results


def test_sample_every_candidate_breaks_its_target(sample_results):
    empty = [(r["item"]["id"], r["constraint"]["type"]) for r in sample_results if not r["candidates"]]
    assert not empty, f"no candidate at all for {empty}"
    wrong = [(r["item"]["id"], r["constraint"]["type"]) for r in sample_results if not all(r["target_fails"])]
    assert not wrong, f"candidates that still pass their target: {wrong}"


def test_sample_every_type_breaks_alone_somewhere(sample_results, capsys):
    by_type: dict[str, list[dict]] = defaultdict(list)
    for r in sample_results:
        by_type[r["constraint"]["type"]].append(r)
    lines = [f"{'type':44s} {'items ok':>9s} {'candidates ok':>14s}"]
    never = []
    for type_id in sorted(by_type):
        rows = by_type[type_id]
        items_ok = sum(any(r["alone"]) for r in rows)
        cands = sum(len(r["alone"]) for r in rows)
        cands_ok = sum(sum(r["alone"]) for r in rows)
        lines.append(f"{type_id:44s} {items_ok:4d}/{len(rows):<4d} {cands_ok:6d}/{cands:<6d} ({cands_ok / max(cands, 1):.0%})")
        if not items_ok:
            never.append(type_id)
    with_report = "exactly-one-broken corruptions on the sample (seed 0):\n" + "\n".join(lines)
    with capsys.disabled():  # the per-type rates are the report the pair builder relies on
        print("\n" + with_report)
    unexplained = [t for t in never if t not in CANNOT_BREAK_ALONE]
    assert not unexplained, f"types never broken alone: {unexplained}\n{with_report}"
    for type_id in never:
        twin, _why = CANNOT_BREAK_ALONE[type_id]
        for r in by_type[type_id]:
            others = [c["type"] for c in r["item"]["constraints"]]
            assert twin in others, f"{type_id} on {r['item']['id']} has no {twin} twin to excuse it"


# ---------------------------------------------------------------------------------------------
# 3. Determinism

DETERMINISM_CASES = [
    ("letter_case", "a red circle moves to the right and stops there for a while",
     {"case": "lower", "scope": "all", "exceptions": []}),
    ("word_count", "A red circle appears on the left. It moves to the right and stops.",
     {"min_count": 5, "max_count": 20}),
    ("no_contractions", "It is red and we are done, so do not worry. That is all.", {}),
    ("plain_text", "The red circle stops on the right at 3.0 s and does not move again.", {}),
    ("exact_word_exclusion", "The square disappears at 2.0 s while the circle stays on the left.",
     {"phrases": ["vanishes"]}),
]


@pytest.mark.parametrize("type_id,response,params", DETERMINISM_CASES)
def test_same_seed_same_candidates(type_id, response, params):
    first = corrupt_candidates(type_id, response, params, random.Random(7))
    again = corrupt_candidates(type_id, response, params, random.Random(7))
    assert first and first == again


def test_seed_changes_some_candidates():
    outputs = {
        seed: [corrupt_candidates(t, r, p, random.Random(seed)) for t, r, p in DETERMINISM_CASES]
        for seed in range(4)
    }
    assert len({json.dumps(v) for v in outputs.values()}) > 1


def test_candidates_do_not_depend_on_hash_seed():
    code = (
        "import json, random, sys\n"
        "from ifpo.data_builders.corruptors import corrupt_candidates\n"
        f"cases = {DETERMINISM_CASES!r}\n"
        "print(json.dumps([corrupt_candidates(t, r, p, random.Random(3)) for t, r, p in cases]))\n"
    )
    runs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=True, timeout=120)
        runs.append(done.stdout)
    assert runs[0] == runs[1]


# ---------------------------------------------------------------------------------------------
# 4. Hand-written cases: (type, passing response, params, an expected candidate or None,
#    other constraints [(type, params)] that must keep passing in at least one candidate)

PROSE = (
    "Test videos with known ground truth let us check answers exactly. When we draw every shape "
    "ourselves we know where it is and when it moves. A model that says anything else is simply "
    "wrong, and we can measure that without a human judge."
)

HAND_CASES = [
    # --- IFEval
    ("keywords:existence", "The dog ran in the park.", {"keywords": ["dog", "park"]}, None, []),
    ("keywords:frequency", "Fun, fun, fun.", {"keyword": "fun", "frequency": 3, "relation": "at least"}, None, []),
    ("keywords:frequency", "Fun and games.", {"keyword": "fun", "frequency": 2, "relation": "less than"}, None,
     [("punctuation:no_comma", {})]),
    ("keywords:forbidden_words", PROSE, {"forbidden_words": ["video"]}, None,
     [("length_constraints:number_sentences", {"num_sentences": 3, "relation": "at least"})]),
    ("keywords:letter_frequency", "A zebra ran.", {"letter": "z", "let_frequency": 2, "let_relation": "less than"},
     None, []),
    ("keywords:letter_frequency", "Zig zag zoom.", {"letter": "z", "let_frequency": 3, "let_relation": "at least"},
     None, []),
    ("language:response_language", PROSE, {"language": "en"}, None, []),
    ("length_constraints:number_sentences", PROSE, {"num_sentences": 4, "relation": "less than"}, None,
     [("length_constraints:number_words", {"num_words": 60, "relation": "less than"})]),
    ("length_constraints:number_paragraphs", "First part.\n***\nSecond part. More here.",
     {"num_paragraphs": 2}, None, []),
    ("length_constraints:number_words", PROSE, {"num_words": 40, "relation": "at least"}, None,
     [("length_constraints:number_sentences", {"num_sentences": 3, "relation": "at least"})]),
    ("length_constraints:nth_paragraph_first_word", "Hi there.\n\nThen we leave.",
     {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"}, None, []),
    ("detectable_content:number_placeholders", "Dear [name], see you at [place].", {"num_placeholders": 2},
     "Dear [name], see you at place.", []),
    ("detectable_content:postscript", "Thanks.\n\nP.S. See you soon.", {"postscript_marker": "P.S."},
     "Thanks.\n\nPS See you soon.", []),
    ("detectable_format:number_bullet_lists", "* one\n* two", {"num_bullets": 2}, None, []),
    ("detectable_format:constrained_response", "My answer is yes.", {}, "My answer is yes", []),
    ("detectable_format:number_highlighted_sections", "*one* and *two*", {"num_highlights": 2},
     "*one* and two", []),
    ("detectable_format:multiple_sections", "Section 1\nA red circle.\nSection 2\nA blue square.",
     {"section_spliter": "Section", "num_sections": 2}, None, []),
    ("detectable_format:json_format", '```json\n{"a": 1}\n```', {}, None, []),
    ("detectable_format:title", "<<Ode to Joy>>\nA poem.", {}, "<Ode to Joy>\nA poem.", []),
    ("combination:two_responses", "Yes, it moves.\n******\nNo, it stays.", {}, None, []),
    ("combination:repeat_prompt", "Write a haiku. Autumn moonlight falls.", {"prompt_to_repeat": "Write a haiku."},
     None, []),
    ("startend:end_checker", "Done here. Any other questions?", {"end_phrase": "Any other questions?"},
     "Done here. Any other questions", []),
    ("startend:quotation", '"Hello there."', {}, '"Hello there.', []),
    ("change_case:capital_word_frequency", "The VERY good idea.", {"capital_frequency": 2, "capital_relation": "less than"},
     None, []),
    ("change_case:capital_word_frequency", "VERY GOOD idea.", {"capital_frequency": 2, "capital_relation": "at least"},
     None, []),
    ("change_case:english_capital", "THIS IS MY ANSWER ABOUT THE WEATHER TODAY.", {}, None, []),
    ("change_case:english_lowercase", "this is my answer about the weather today.", {}, None, []),
    ("punctuation:no_comma", "Red and blue.", {}, "Red, and blue.", []),
    # --- VSysBench (formats and styles the sample lacks)
    ("vsys_structured_output", "objects:\n  - car\ncount: 1", {"format": "yaml", "required_keys": ["objects"]},
     None, []),
    ("vsys_structured_output", "<scene><objects>car</objects></scene>", {"format": "xml", "required_keys": ["objects"]},
     None, []),
    ("vsys_structured_output", "name,count\ncar,1\nbus,2", {"format": "csv", "required_keys": ["name"]}, None, []),
    ("vsys_structured_output", "| name | count |\n| --- | --- |\n| car | 1 |", {"format": "markdown_table"},
     None, []),
    ("vsys_template_sections", "[SUMMARY] A car.\n[DETAILS] It is red.", {"section_count": 2, "marker": "bracketed_caps"},
     None, []),
    ("vsys_template_sections", "**Scene**\nA car.\n**Colour**\nRed.", {"section_count": 2, "marker": "bold_inline"},
     None, []),
    ("vsys_output_length", "A car.\nA bus.\nA van.", {"unit": "lines", "relation": "exact", "n": 3}, None, []),
    ("vsys_output_length", "A car is red.\n\nA bus is blue.", {"unit": "paragraphs", "relation": "exact", "n": 2},
     None, []),
    ("vsys_output_length", "A red car.", {"unit": "characters", "relation": "at_most", "n": 12}, None, []),
    ("vsys_metadata_injection", '{"image_type": "photo"}\nA red car.',
     {"position": "top", "encoding": "json_line", "required_fields": ["image_type"]}, None, []),
    ("vsys_metadata_injection", "---\nimage_type: photo\n---\nA red car.",
     {"position": "yaml_frontmatter", "required_fields": ["image_type"]}, None, []),
    ("vsys_metadata_injection", "A red car.\n#image_type_photo #count_1",
     {"position": "end", "encoding": "hashtags", "required_fields": ["image_type", "count"]}, None, []),
    ("vsys_dynamic_tagging", "@NikeRunning A running shoe.", {"syntax": "mention", "position": "start"}, None, []),
    ("vsys_dynamic_tagging", "A shoe <brand>Nike</brand>.", {"syntax": "xml_tag", "tag_name": "brand",
                                                             "required_tags": ["Nike"]}, None, []),
    ("vsys_object_itemization", "1. car\n2. bus", {"style": "numbered"}, None, []),
    ("vsys_object_itemization", "OBJ-1 car, OBJ-2 bus", {"style": "id_codes", "pattern": r"OBJ-(\d+)",
                                                         "expected_count": 2}, None, []),
    ("vsys_source_tags", "A tower [Visible].\n\nBuilt in 1889 [External].",
     {"tags": ["[Visible]", "[External]"], "granularity": "paragraph"}, None, []),
    ("vsys_keyword_frequency", "Safety first, safety always.", {"keyword": "safety", "min_occurrences": 1,
                                                                 "max_occurrences": 2}, None, []),
    # --- Video-IFBench and VCIFBench forms the sample lacks
    ("paragraph_count_constraint", "One is red. Two is blue.\n\nThree is green.", {"min_count": 2, "max_count": 2},
     None, [("sentence_count", {"min_count": 3, "max_count": 3})]),
    ("list_item_count_constraint", '["red", "blue"]', {"min_count": 2, "max_count": 2}, '["red", "blue", "blue"]', []),
    ("list_item_count_constraint", "red, blue, green", {"min_count": 3, "max_count": 3}, None, []),
    ("table_output", "name,count\ncar,1", {"allowed_formats": ["csv"]}, None, []),
    ("closed_set_option_output", "B", {"allowed_options": ["A", "B", "C"]}, "D", []),
    ("normalized_value_format", "00:05; 00:09", {"allowed_patterns": [r"\d{2}:\d{2}"], "allow_multiple": True},
     None, []),
    ("verbatim_speech_constraint", 'He shouts "Let\'s go now!"', {"expected_utterance": "Let's go now"}, None, []),
    ("span_localization", "Jump at 00:05-00:09.", {"expected_span_count": 1}, None, []),
    ("letter_case", "# A Red Circle\nIt moves.", {"case": "title", "scope": "headings"}, None, []),
    ("letter_case", "A red circle. A blue square.", {"case": "sentence"}, None, []),
    ("letter_case", "red circle moves.", {"case": "lower", "scope": "first_word"}, "Red circle moves.", []),
    ("markdown", "Some **bold** text and `code`.", {"elements": None}, None, []),
    ("prefix_label", "Step 1: cut\n\nStep 2: fry", {"prefix": "Step {n}:", "scope": "paragraphs"}, None, []),
    ("exact_word_inclusion", "They cross in the center.", {"phrases": ["center"]}, "They cross in the middle.", []),
    ("exact_word_exclusion", "The square disappears at 2 s.", {"phrases": ["vanishes"]},
     "The square vanishes at 2 s.", []),
    ("lexical_diversity", "The soup is hot and the bowl is red.", {"terms": ["soup"], "max_occurrences": 1},
     None, []),
    ("word_count", "A red ball rolls across the floor.", {"min_count": 3, "max_count": 8},
     None, [("sentence_count", {"min_count": 1, "max_count": 1})]),
    ("no_contractions", "It is red and we are done.", {}, None, [("sentence_count", {"min_count": 1, "max_count": 1})]),
]


@pytest.mark.parametrize(
    "type_id,response,params,expected,keep",
    HAND_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(HAND_CASES)],
)
def test_hand_written_cases(type_id, response, params, expected, keep):
    assert passes(type_id, response, params), "the hand-written response must pass first"
    for other, other_params in keep:
        assert passes(other, response, other_params)
    cands = corrupt_candidates(type_id, response, params, random.Random(0))
    assert cands, f"no corruption for {type_id}"
    assert not any(passes(type_id, c, params) for c in cands)
    if expected is not None:
        assert expected in cands
    if keep:
        assert any(all(passes(o, c, p) for o, p in keep) for c in cands), \
            f"every candidate also broke one of {[o for o, _ in keep]}: {cands}"
