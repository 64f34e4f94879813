"""Rule checkers against long and pathological responses: worst seconds per MB per checker.

    python bench/checker_scaling.py [--mb 1.0] [--only TYPE ...] [--shapes NAME ...] [--top 15] [--repeat 1] [--cpu]

Every registered rule checker runs on responses of ``--mb`` megabytes of several shapes (random
prose, one huge line, thousands of CSV / markdown table rows, deep bracket nesting, a long list,
a big JSON document, many time spans or values; and per-line / per-word / per-character overhead:
distinct short lines with inner terminators, words that never repeat, one token without spaces,
CJK, emoji and zero-width characters, blank lines, runs of one punctuation character, dense
Markdown). A checker that is linear in the response length costs well under the target (0.2 s/MB); a quadratic one is seconds to hours at 1 MB and shows at
the top. Params come from the bundled sample items (a real use of each type), else are made from
the type's spec; some types also run with extra params (``VARIANTS``: paths the sample's params do
not reach). Every checker first runs once on a 2000-character slice of every shape, so one-time
costs (imports, langdetect's language profiles, pysbd's rule set) are not counted as time per MB,
and each is timed in the same process state whichever checkers ran before it (or whether
``--only`` is given). Each timed run starts cold (``verifiers.text.clear_caches``: no tokenizer
cache left by an earlier checker on the same text). Prints the worst case per checker, sorted,
and the overall worst; exits 1 when one is over the
target. ``tests/test_checker_scaling.py`` runs the same cases smaller, with a hang guard.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import string
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TARGET_S_PER_MB = 0.2

_WORDS = ["the", "red", "circle", "moves", "right", "and", "a", "blue", "square", "stays", "still", "while",
          "camera", "pans", "slowly", "across", "scene", "Alice", "Paris", "data", "JSON", "table"]


def shapes(size: int, seed: int = 0) -> dict[str, str]:
    """Responses of about ``size`` characters, one per pathological shape."""
    rng = random.Random(seed)

    def fill(unit: str) -> str:
        return (unit * (size // max(len(unit), 1) + 1))[:size]

    words = []
    total = 0
    while total < size:
        w = rng.choice(_WORDS)
        if rng.random() < 0.08:
            w += rng.choice(".,!?;:")
        if rng.random() < 0.02:
            w += "\n\n" if rng.random() < 0.3 else "\n"
        words.append(w)
        total += len(w) + 1
    prose = " ".join(words)[:size]
    chars = string.ascii_letters + string.digits + string.punctuation + " \n\t" + "éßπ中文"
    depth = size // 2
    return {
        "prose": prose,
        "random_chars": "".join(rng.choice(chars) for _ in range(size)),
        "one_line": fill("word, another word; "),
        "csv_rows": "name,count,city\n" + fill("apple,3,Paris\n"),
        "table_rows": "| name | count |\n|---|---|\n" + fill("| apple | 3 |\n"),
        "deep_nesting": "{" * (depth // 2) + "[" * (depth // 2) + "]" * (depth // 2) + "}" * (depth // 2),
        "list_items": fill("- item one\n  - nested item\n"),
        "json_doc": json.dumps({"items": [{"name": "apple", "count": i} for i in range(size // 28)]})[:size],
        "sentences": fill("This is a sentence. "),
        "paragraphs": fill("Short paragraph here.\n\n"),
        # many distinct time spans (a subtitle-like list), many distinct values one per line, and a
        # valid JSON array of distinct short strings: slow paths of span / value / quote checkers
        "time_spans": "".join(f"{i}s - {i + 1}s jump\n" for i in range(size // 12))[:size],
        "value_lines": "".join(f"{i / 10:.1f} s\n" for i in range(size // 6))[:size],
        "json_strings": _json_strings(size),
        **_more_shapes(size, seed),
    }


def _distinct_word(i: int, letters: str = "bcdfghjklmnpqrstvwxz", vowels: str = "aeiouy") -> str:
    """The ``i``-th of an endless list of distinct pronounceable lower-case words (per-word caches miss)."""
    out = []
    while True:
        i, c = divmod(i, len(letters))
        i, v = divmod(i, len(vowels))
        out.append(letters[c] + vowels[v])
        if not i:
            return "".join(out)
        i -= 1


def _more_shapes(size: int, seed: int) -> dict[str, str]:
    """Shapes of per-line / per-word / per-character overhead (an outside audit's list): many distinct
    short lines with inner terminators, quotes and brackets; words that never repeat; one token with no
    space; CJK only; combining marks, emoji and zero-width characters; punctuation-only lines; blank
    lines; tiny paragraphs; long runs of one punctuation character; alternating brackets; numbers,
    times and percentages; dense Markdown. Their own generator, so the shapes above keep their texts."""
    rng = random.Random(seed + 1)

    def fill(unit: str) -> str:
        return (unit * (size // max(len(unit), 1) + 1))[:size]

    def lines(make, sep: str = "\n") -> str:
        out, total, i = [], 0, 0
        while total < size:
            out.append(make(i))
            total += len(out[-1]) + len(sep)
            i += 1
        return sep.join(out)[:size]

    templates = ["a.b{i}", "x (y.) z{i}", "'q.' r{i}", '"Hi!" s{i}', "[k?] t{i}", "u.v. ({i}.)", "w!x? {i}"]
    alphabet = "".join(map(chr, range(0x4E00, 0x4E00 + 2000)))
    cjk_punct = "。，！？、；：「」（）"
    emoji = ["\U0001F600", "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
             "\u2764\ufe0f", "\U0001F1EB\U0001F1F7"]
    marks = "\u0301\u0308\u0327\u0303"
    punct = "!?.,;:-*#\"'()[]{}<>/\\|~`^_=+@&%$"
    return {
        "short_terminator_lines": lines(lambda i: templates[i % len(templates)].format(i=i)),
        "distinct_words": lines(lambda i: _distinct_word(i) + ("." if i % 13 == 12 else ""), sep=" "),
        "distinct_capitalized": lines(lambda i: _distinct_word(i).capitalize() + ("." if i % 9 == 8 else ""),
                                      sep=" "),
        "one_token": "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(size)),
        "cjk_only": "".join(rng.choice(cjk_punct) if rng.random() < 0.1 else
                            ("\n" if rng.random() < 0.005 else rng.choice(alphabet)) for _ in range(size)),
        "marks_emoji_zero_width": lines(
            lambda i: f"e{marks[i % 4]}{_distinct_word(i)}\u200b{emoji[i % 5]}\u200d" + ("\u200c" if i % 3 else ""),
            sep=" "),
        "punctuation_lines": lines(lambda i: "".join(rng.choice(punct) for _ in range(1 + i % 12))),
        "blank_lines": lines(lambda i: "" if i % 50 else f"w{i}", sep="\n"),
        "whitespace_lines": lines(lambda i: " \t\u3000\u200b"[: i % 5]),
        "tiny_paragraphs": lines(lambda i: f"p{i}.", sep="\n\n"),
        "dot_run": fill("."),
        "star_run": fill("*"),
        "dash_run": fill("-"),
        "quote_run": fill('"'),
        "alternating_brackets": "".join(rng.choice("()[]{}<>") for _ in range(size)),
        "numbers_times": lines(lambda i: f"{i} {i * 1.5:.2f} {i % 24:02d}:{i % 60:02d} {i % 100}% ${i},000 "
                                         f"{i}th 1e{i % 9}", sep="; "),
        "numbered_lines": lines(lambda i: f"{i + 1}. step {_distinct_word(i)}"),
        "markdown_dense": lines(lambda i: [f"# Heading {i}", f"**bold {i}** and *em {i}*",
                                           f"[link {i}](http://x.org/{i})", f"## Sub {i}", f"`code{i}`",
                                           f"> quote {i}", "***", f"__u{i}__"][i % 8]),
        "crlf_lines": lines(lambda i: f"line {_distinct_word(i)}.", sep="\r\n"),
        "quoted_words": lines(lambda i: f'"{_distinct_word(i)}"' if i % 2 else f"'{_distinct_word(i)}'", sep=" "),
        # Sentences whose Punkt decision reads the next word, with words that never repeat, so neither the
        # per-context nor the per-word caches help: a numbered list of short sentences ("12. Bo ca."),
        # initials before names ("K. Bo"), an abbreviation before a name ("Mr. Bo said ca."). Realistic
        # text repeats its words; these are the worst case of the sentence splitter's cost per candidate.
        # Openers that never close, with terminators after each: a pattern "opener, no closer, closer" retried
        # from every opener is quadratic here (split_sentences was, before b1d0dfe).
        "unclosed_openers": fill("[x. \u00aby. \u201cz. \u2018w. (v. "),
        # Lines that each introduce a list ("Steps:"): Video-IFBench's list reader once copied the rest of
        # the text per such line (quadratic, fixed in 38ac3ff); the shape checks every checker for it.
        "colon_lines": lines(lambda i: f"{_distinct_word(i)}:"),
        "numbered_sentences": lines(lambda i: f"{i}. {_distinct_word(i).capitalize()} {_distinct_word(i + 1)}."),
        "initials_names": lines(lambda i: f"{chr(65 + i % 26)}. {_distinct_word(i).capitalize()}", sep=" "),
        "abbreviated_names": lines(lambda i: f"Mr. {_distinct_word(i).capitalize()} said {_distinct_word(i + 1)}.",
                                   sep=" "),
    }


def _json_strings(size: int) -> str:
    """A valid JSON array of distinct short strings, at most ``size`` characters."""
    items, total = [], 2
    while total + 12 < size:
        items.append(f"{len(items) / 10:.1f} s")
        total += len(items[-1]) + 4
    return json.dumps(items)


# Params a checker also runs with, beyond those of params_by_type: paths the sample items' params
# do not reach (a CSV table checked against a record or row schema, several values per response).
VARIANTS = {
    "table_output": {
        "csv, record schema": {"allowed_formats": ["markdown", "csv"], "min_rows": 1, "require_header": True,
                               "schema": {"name": "", "count": "", "city": ""}},
        "csv, row schema": {"allowed_formats": ["csv"], "min_rows": 1, "require_header": True,
                            "schema": [["", "", ""]]},
    },
    "normalized_value_format": {
        "several values": {"allowed_patterns": [r"\d+\.\d s"], "allowed_values": ["top", "left"],
                           "require_full_match": True, "allow_multiple": True},
        "several values, partial match": {"allowed_patterns": [r"\d+\.\d s"], "allowed_values": ["top"],
                                          "require_full_match": False, "allow_multiple": True},
    },
    # a paragraph as the reference (the spec-made params' one word has no trigram): the prose shape
    # shares some of its trigrams, the other shapes none
    "ratio:overlap": {
        "paragraph reference": {"percentage": 10, "reference_text": (
            "The camera pans slowly across a quiet harbour at dawn. Fishing boats rock against the pier "
            "while gulls circle overhead, and a red circle of light moves right across the water. Later, a "
            "blue square sign stays still above the market, where traders set out crates of fish, bread "
            "and fruit before the first customers arrive.")},
    },
}


def param_sets(registry, params: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Per rule type, the params it is timed with: ``{label: params}`` ("" for params_by_type's)."""
    sets: dict[str, dict[str, dict]] = {type_id: {"": p} for type_id, p in params.items()}
    for type_id, variants in VARIANTS.items():
        if type_id in sets:
            for label, variant in variants.items():
                errors = registry.get(type_id).param_errors(variant)
                if errors:
                    raise ValueError(f"bench/checker_scaling.py VARIANTS[{type_id!r}][{label!r}]: {errors}")
                sets[type_id][label] = variant
    return sets


# Params whose generic stand-in ("apple") is not a valid value.
_BY_NAME = {"letter": "a", "language": "en"}


def _synth(param) -> object:
    if param.name in _BY_NAME:
        return _BY_NAME[param.name]
    if param.choices:
        return param.choices[0] if param.kind != "list[str]" else [param.choices[0]]
    return {"int": 3, "number": 0.5, "str": "apple", "bool": True, "list[str]": ["apple"], "list[int]": [1],
            "list": ["apple"], "dict": {}, "any": "apple"}[param.kind]


def params_by_type(registry) -> dict[str, dict]:
    """Valid params per rule type: from the sample items when one uses it, else made from the spec."""
    found: dict[str, dict] = {}
    for path in [REPO / "sample" / "items.jsonl", *sorted((REPO / "sample").rglob("*.jsonl"))]:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            for c in item.get("constraints", []) if isinstance(item, dict) else []:
                t = c.get("type")
                if (t in registry and t not in found and registry.get(t).checker is not None
                        and not registry.get(t).param_errors(c.get("params") or {})):
                    found[t] = dict(c.get("params") or {})
    for ctype in registry:
        if ctype.checker is None or ctype.id in found:
            continue
        params = {p.name: _synth(p) for p in ctype.params if p.required}
        if not ctype.param_errors(params):
            found[ctype.id] = params
            continue
        params = _doctest_params(ctype)
        if params is not None:
            found[ctype.id] = params
    return found


def _doctest_params(ctype) -> dict | None:
    """The params of the first ``>>> checker(RESPONSE, {...})`` example in the checker's docstring."""
    import ast
    import doctest

    for example in doctest.DocTestParser().get_examples(ctype.checker.__doc__ or ""):
        try:
            call = ast.parse(example.source.strip(), mode="eval").body
        except SyntaxError:
            continue
        while isinstance(call, ast.Attribute):  # checker(...).passed
            call = call.value
        if isinstance(call, ast.Call) and len(call.args) >= 2:
            try:
                params = ast.literal_eval(call.args[1])
            except ValueError:
                continue
            if isinstance(params, dict) and not ctype.param_errors(params):
                return params
    return None


def measure(ctype, params: dict, response: str, clock=time.perf_counter) -> float:
    from ifpo.verifiers.registry import run_checker

    start = clock()
    try:
        run_checker(ctype, response, params)
    except Exception:  # a crash is the checklist's unjudged verdict; the bench measures time only
        pass
    return clock() - start


def cold(ctype, params, text: str, clock) -> float:
    """:func:`measure` on a response the text caches have not seen: every checker runs on the same texts
    here, and the tokenizers' per-chunk / per-context caches would otherwise hold an earlier checker's work."""
    from ifpo.verifiers.text import clear_caches

    clear_caches()
    return measure(ctype, params, text, clock)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="response size in MB (10^6 characters)")
    parser.add_argument("--only", nargs="*", help="constraint types to run (default: every rule checker)")
    parser.add_argument("--shapes", nargs="*", help="shapes to time (default: all; every shape still warms up)")
    parser.add_argument("--top", type=int, default=15, help="rows of the slowest checkers to print")
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each case this many times and keep the fastest (steadier on a busy machine)")
    parser.add_argument("--cpu", action="store_true",
                        help="time with this process's CPU time instead of the wall clock (a machine shared "
                             "with other jobs otherwise adds their time)")
    args = parser.parse_args(argv)
    from ifpo.verifiers.constraints import REGISTRY

    size = int(args.mb * 1_000_000)
    cases = shapes(size)
    unknown = sorted(set(args.shapes or ()) - set(cases))
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    sets = param_sets(REGISTRY, params_by_type(REGISTRY))
    rule_types = [t for t in REGISTRY if t.checker is not None]
    types = [t for t in rule_types if not args.only or t.id in args.only]
    clock = time.process_time if args.cpu else time.perf_counter
    # One-time costs (imports, langdetect's profiles, pysbd's rules, NLTK's data) are not per MB:
    # every rule checker runs first on a 2000-character slice of every shape, --only or not, so
    # each one is timed in the same process (the same objects for the garbage collector to walk),
    # whichever ran before it.
    for ctype in rule_types:
        for p in sets.get(ctype.id, {}).values():
            for text in cases.values():
                measure(ctype, p, text[:2000])
    gc.collect()
    rows = []
    no_params = []
    for ctype in types:
        if ctype.id not in sets:
            no_params.append(ctype.id)
            continue
        worst = max(
            (min(cold(ctype, p, text, clock) for _ in range(max(args.repeat, 1))),
             f"{shape} [{label}]" if label else shape)
            for label, p in sets[ctype.id].items()
            for shape, text in cases.items()
            if not args.shapes or shape in args.shapes
        )
        rows.append((worst[0] / args.mb, ctype.id, worst[1]))
    rows.sort(reverse=True)
    print(f"{len(rows)} rule checkers x {len(cases)} shapes at {args.mb:g} MB; worst {'CPU ' if args.cpu else ''}"
          f"seconds per MB (target <= {TARGET_S_PER_MB})")
    print(f"{'constraint type':<44} {'s/MB':>8}  worst shape")
    for s_per_mb, type_id, shape in rows[: args.top]:
        print(f"{type_id:<44} {s_per_mb:8.3f}  {shape}")
    if no_params:
        print(f"no valid params found for {len(no_params)} type(s), not measured: {', '.join(no_params)}")
    worst = rows[0] if rows else (0.0, "-", "-")
    print(f"WORST {worst[1]} {worst[0]:.3f} s/MB ({worst[2]}); over target: "
          f"{sum(1 for r in rows if r[0] > TARGET_S_PER_MB)}")
    return 1 if worst[0] > TARGET_S_PER_MB else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
