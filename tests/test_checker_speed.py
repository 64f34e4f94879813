"""Speed-ups of IFBench / VCIFBench checkers (issue 12: <= 0.2 s/MB) give the former code's answer.

Each checker's answers (reason text included) on hand-picked and seeded random inputs are compared
with the former code's, recorded in tests/data/golden (tests/golden.py): the former loops called the
checkers' own private helpers, so a bug there sat on both sides.
"""

from __future__ import annotations

import random

from golden import assert_golden
from ifpo.verifiers.registry import REGISTRY, run_checker
from ifpo.verifiers.rules import ifbench


def _texts(rng: random.Random, atoms: list[str], n: int, longest: int) -> list[str]:
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(0, longest))) for _ in range(n)]


_CSV_ATOMS = ["a", "b", "name", "1", "2.5", ",", ",", ";", " ", "\n", "\n", "\r\n", '"', '"x,y"', '""', "\t", "é",
              "```", "csv\n", "   \n"]


def test_csv_equals_reading_every_row_first():
    rng = random.Random(1)
    texts = ["name,count\napple,3", "a,b\n1,2,3\n1,2", 'a,b\n"x', " , \n a,b", *_texts(rng, _CSV_ATOMS, 4000, 16)]
    cases = []
    for text in texts:
        params = {"min_rows": rng.choice([0, 1, 2]), "require_header": rng.random() < 0.6,
                  "columns": rng.choice([None, ["name"], ["a", "b"]]), "min_columns": rng.choice([1, 2]),
                  "delimiter": rng.choice([",", ";"])}
        if params["columns"] and not params["require_header"]:
            params["columns"] = None
        cases.append((text, params))
    assert_golden("csv", cases, [run_checker(REGISTRY.get("csv"), text, params) for text, params in cases])


_WORD_ATOMS = ["cat", "apple", "dog", "banana", "a", "the", "12", "3x", "x٣", "٣", "café", "ΑΣ", "self", "care",
               "-", " ", " ", "\n", ".", "'", "le", "table", "rhythm", "queue", "Ⅻ", "²"]


def test_odd_even_syllables_equals_counting_every_word_first():
    # the checker itself (the registered wrapper fails an empty response before it runs)
    responses = ["cat apple dog", "cat dog", "12 s 13 s 14", "12 13", "", "self-care cat"]
    assert_golden("odd_even_syllables_hand", responses,
                  [ifbench.odd_even_syllables.__wrapped__(r, {}) for r in responses])


def test_odd_even_syllables_equals_counting_every_word_first_on_random_texts():
    rng = random.Random(2)
    texts = _texts(rng, _WORD_ATOMS, 3000, 12)
    got = [ifbench.odd_even_syllables.__wrapped__(text, {}) for text in texts]
    assert_golden("odd_even_syllables_random", texts, got)
    passed = sum(g[0] for g in got)
    assert passed > 300  # passing texts are counted to the end
