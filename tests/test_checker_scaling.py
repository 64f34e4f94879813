"""Every registered rule checker on long and pathological responses: it answers, and it does not hang.

The shapes are ``bench/checker_scaling.py``'s (random prose and characters, one huge line,
thousands of CSV / table rows, deep bracket nesting, long lists, a big JSON document, and the
per-line / per-word / per-character ones: distinct short lines, words that never repeat, one token,
CJK, emoji and zero-width characters, blank lines, runs of one punctuation character...). Each case
must return a ``Check`` (a bool and a reason) and never raise: a response is untrusted input.

The guard is a hang guard, not a speed target (that is the bench's figure, s/MB per checker): a
quadratic checker costs seconds at 32 KB and minutes at the 1 MB of the slow variant, far beyond
``HANG_S``; a linear one costs milliseconds.
"""

from __future__ import annotations

import functools
import signal

import bench_modules
import pytest
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import run_checker

scaling = bench_modules.load("checker_scaling")

PARAMS = scaling.params_by_type(REGISTRY)
RULE_TYPES = [t.id for t in REGISTRY if t.checker is not None]
HANG_S = 20


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


# The 1 MB variant runs the shapes a superlinear scan trips on (one line, rows, nesting, lists,
# a JSON document, one token without spaces, runs of one punctuation character, alternating brackets,
# blank lines); prose-like and sentence-dense shapes are covered at 32 KB and by the bench.
SLOW_SHAPES = ("one_line", "csv_rows", "table_rows", "deep_nesting", "list_items", "json_doc", "time_spans",
               "json_strings", "one_token", "alternating_brackets", "dot_run", "star_run", "dash_run", "quote_run",
               "blank_lines", "whitespace_lines", "marks_emoji_zero_width")


def test_the_slow_shapes_are_the_benchs():
    assert set(SLOW_SHAPES) <= set(scaling.shapes(100)), set(SLOW_SHAPES) - set(scaling.shapes(100))


@functools.lru_cache(maxsize=2)
def _shapes(size: int) -> dict[str, str]:
    """The bench's shapes, made once per size (at 1 MB making them all takes seconds: per test it was
    most of the slow variant's time)."""
    return scaling.shapes(size)


def check_all(type_id: str, size: int, hang_s: float, only: tuple[str, ...] | None = None,
              params: dict | None = None) -> None:
    ctype = REGISTRY.get(type_id)
    params = PARAMS[type_id] if params is None else params
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for shape, text in _shapes(size).items():
            if only is not None and shape not in only:
                continue
            signal.setitimer(signal.ITIMER_REAL, hang_s)
            try:
                check = run_checker(ctype, text, params)
            except Hang:
                pytest.fail(f"{type_id} on {size:,} characters of {shape}: no answer in {hang_s}s (superlinear?)")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert isinstance(check.passed, bool) and isinstance(check.reason, str), (type_id, shape)
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_every_rule_checker_has_params_to_be_measured_with():
    # The bench measures nothing for a type it finds no valid params for; keep that list known.
    missing = sorted(set(RULE_TYPES) - set(PARAMS))
    assert missing == [], missing


@pytest.mark.parametrize("type_id", sorted(PARAMS))
def test_checker_answers_on_pathological_32kb_responses(type_id):
    check_all(type_id, 32_000, HANG_S)


VARIANTS = [(type_id, label) for type_id, sets in scaling.param_sets(REGISTRY, PARAMS).items() for label in sets if label]


def test_the_bench_has_param_variants():
    assert ("table_output", "csv, record schema") in VARIANTS, VARIANTS


@pytest.mark.parametrize(("type_id", "label"), VARIANTS)
def test_checker_answers_on_pathological_32kb_responses_with_the_benchs_other_params(type_id, label):
    check_all(type_id, 32_000, HANG_S, params=scaling.VARIANTS[type_id][label])


@pytest.mark.slow
@pytest.mark.parametrize("type_id", sorted(PARAMS))
def test_checker_answers_on_pathological_1mb_responses(type_id):
    check_all(type_id, 1_000_000, 120, only=SLOW_SHAPES)


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
