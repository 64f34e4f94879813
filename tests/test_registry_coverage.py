"""Every registered rule/hybrid constraint type is complete in its family's three places.

A type of family ``F`` (its ``source``) lives in ``verifiers/rules/F.py`` (the checker),
``data_builders/corruptors/F.py`` (the corruptor) and ``tests/test_rules_F.py`` (its truth table);
docs/adding-a-constraint-type.md walks through adding one. For each type this test checks:

1. **A docstring example its own checker passes.** The fixed format is a doctest calling the
   checker by its own name with the params it receives (resolved: defaults filled) and reading
   ``.passed``::

       >>> check_json('{"a": 1}', {"top_level": "object", "required_keys": None}).passed
       True

   (the bare call showing ``Check(passed=True, ...)`` is the same example). Every doctest in the
   checker's docstring must hold, and at least one must be of that form.
2. **A corruptor, or a documented reason for none** (``NO_CORRUPTOR`` in the family's corruptor
   module).
3. **A passing and a failing truth-table row** in ``tests/test_rules_F.py``. Rows are found by
   scanning that module's ``pytest.mark.parametrize`` cases: a case names its type by a
   ``type_id`` argument or, for a test dedicated to one type, by the test's name
   (``test_<type id>``, ``:`` and other punctuation as ``_``, VSysBench's ``vsys_`` prefix optional,
   an extra ``_<suffix>`` allowed); its verdict is a boolean ``expected`` or ``passed`` argument.
"""

from __future__ import annotations

import doctest
import importlib
import itertools
import re
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from ifpo.data_builders.corruptors import CORRUPTORS, NO_CORRUPTOR
from ifpo.data_builders.corruptors.registry import FAMILIES
from ifpo.verifiers.constraints import REGISTRY

TESTS = Path(__file__).resolve().parent
RULE_TYPES = [t for t in REGISTRY if t.route != "judge"]
VERDICT_ARGS = ("expected", "passed")


def _slug(type_id: str) -> str:
    return re.sub(r"\W+", "_", type_id).strip("_").lower()


def _names_for(type_id: str) -> set[str]:
    slug = _slug(type_id)
    return {slug, slug.removeprefix("vsys_")}


def _cases(fn) -> list[dict]:
    """The parametrised cases of test function ``fn``, one dict of argument values per case."""
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    per_mark = []
    for mark in marks:
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        rows = []
        for value in values:
            value = value.values if hasattr(value, "values") and hasattr(value, "marks") else value  # pytest.param
            rows.append(dict(zip(names, value if len(names) > 1 else (value,))))
        per_mark.append(rows)
    return [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*per_mark)] if marks else []


@cache
def truth_rows(source: str) -> dict[str, set[bool]]:
    """type id -> the verdicts its truth-table rows in ``tests/test_rules_<source>.py`` expect."""
    path = TESTS / f"test_rules_{source}.py"
    if not path.is_file():
        return {}
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    module = importlib.import_module(path.stem)
    ids = [t.id for t in REGISTRY if t.source == source]
    by_name = {name: t for t in ids for name in _names_for(t)}
    rows: dict[str, set[bool]] = defaultdict(set)
    for fn_name, fn in vars(module).items():
        if not fn_name.startswith("test_") or not callable(fn):
            continue
        stem = fn_name.removeprefix("test_")
        # the longest type name the test is named after (test_label_set_restriction_more -> label_set_restriction)
        named = max((n for n in by_name if stem == n or stem.startswith(n + "_")), key=len, default=None)
        for case in _cases(fn):
            type_id = case.get("type_id", by_name.get(named) if named else None)
            verdict = next((case[a] for a in VERDICT_ARGS if isinstance(case.get(a), bool)), None)
            if isinstance(type_id, str) and verdict is not None:
                rows[type_id].add(verdict)
    return dict(rows)


def docstring_examples(checker) -> tuple[list[doctest.Example], doctest.TestResults]:
    """The checker's doctest examples of the fixed form, and the result of running all of them."""
    test = doctest.DocTestParser().get_doctest(checker.__doc__ or "", dict(checker.__globals__), checker.__name__,
                                               checker.__code__.co_filename, checker.__code__.co_firstlineno)
    own = re.compile(rf"^{re.escape(checker.__name__)}\(.*\)(\.passed)?\s*$", re.S)
    examples = [e for e in test.examples if (m := own.match(e.source))
                and (e.want.strip() == "True" if m.group(1) else e.want.startswith("Check(passed=True"))]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    results = runner.run(test, out=lambda _: None)
    return examples, results


@pytest.mark.parametrize("ctype", RULE_TYPES, ids=[t.id for t in RULE_TYPES])
def test_checker_docstring_has_an_example_it_passes(ctype):
    checker = ctype.checker
    examples, results = docstring_examples(checker)
    where = f"{checker.__module__}.{checker.__name__}"
    assert examples, (f"{ctype.id}: {where}'s docstring needs an example in the fixed form "
                      f">>> {checker.__name__}(RESPONSE, RESOLVED_PARAMS).passed / True")
    assert results.failed == 0, f"{ctype.id}: {results.failed} of {results.attempted} doctests of {where} fail"


@pytest.mark.parametrize("ctype", RULE_TYPES, ids=[t.id for t in RULE_TYPES])
def test_type_has_a_corruptor_or_a_documented_reason(ctype):
    assert ctype.id in CORRUPTORS or ctype.id in NO_CORRUPTOR, (
        f"{ctype.id}: add its corruptor to data_builders/corruptors/{ctype.source}.py's CORRUPTORS, or the "
        f"reason it has none to NO_CORRUPTOR there")
    if ctype.id in NO_CORRUPTOR:
        assert len(NO_CORRUPTOR[ctype.id].split()) >= 3, f"{ctype.id}: NO_CORRUPTOR needs a reason, not a word"


@pytest.mark.parametrize("ctype", RULE_TYPES, ids=[t.id for t in RULE_TYPES])
def test_type_has_a_passing_and_a_failing_truth_table_row(ctype):
    verdicts = truth_rows(ctype.source).get(ctype.id, set())
    missing = [name for name, v in (("passing", True), ("failing", False)) if v not in verdicts]
    assert not missing, (f"{ctype.id}: no {' and no '.join(missing)} row in tests/test_rules_{ctype.source}.py "
                         f"(a parametrised case with type_id={ctype.id!r}, or in test_{_slug(ctype.id)}, "
                         f"and a boolean 'expected' or 'passed')")


@pytest.mark.parametrize("ctype", RULE_TYPES, ids=[t.id for t in RULE_TYPES])
def test_type_lives_in_its_family_modules(ctype):
    family = f"ifpo.verifiers.rules.{ctype.source}"  # a module, or a package split along the family's seams
    assert ctype.checker.__module__ == family or ctype.checker.__module__.startswith(family + "."), (
        f"{ctype.id}: its checker is in {ctype.checker.__module__}, expected verifiers/rules/{ctype.source}.py")
    assert ctype.source in FAMILIES, f"{ctype.source}: no corruptor family module registered in FAMILIES"


def test_every_family_has_its_three_modules():
    sources = sorted({t.source for t in RULE_TYPES})
    assert sources == sorted(FAMILIES)
    root = TESTS.parent
    for source in sources:
        for path in (f"verifiers/rules/{source}.py", f"data_builders/corruptors/{source}.py",
                     f"tests/test_rules_{source}.py"):
            assert (root / path).is_file(), path


def test_the_scan_finds_rows_both_ways():
    # by a type_id argument (VCIFBench's CASES) and by the test's name (test_structured_output)
    assert truth_rows("vcifbench")["word_count"] == {True, False}
    assert truth_rows("vsysbench")["vsys_structured_output"] == {True, False}
    assert truth_rows("video_ifbench")["label_set_restriction"] == {True, False}
