"""Corruptors for Video-IFBench's rule and hybrid types (``verifiers/rules/video_ifbench.py``)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from typing import Any

from ifpo.data_builders.corruptors.counts import item_families, line_families
from ifpo.data_builders.corruptors.edits import (
    fence_body,
    flip_first,
    match_case,
    other_value,
    replace_phrase,
    synonym,
    with_body,
)
from ifpo.data_builders.corruptors.formats import (
    DELIM_LINE,
    csv_variants,
    data_row_families,
    json_style,
    md_table_variants,
)
from ifpo.data_builders.corruptors.oracle import CorruptFn, Family, breaker, search_all
from ifpo.data_builders.corruptors.shared import (
    corrupt_forbidden_words,
    corrupt_json,
    corrupt_list_format,
    corrupt_option,
    corrupt_paragraph_budget,
    corrupt_required_words,
    corrupt_word_budget,
)
from ifpo.verifiers.registry import ConstraintType
from ifpo.verifiers.text import find_phrase


def corrupt_list_entries(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """As ``item_count`` for Markdown lists; for a JSON array, repeat or drop an element; for
    line-per-entry answers, repeat or drop a line; for comma-separated entries, repeat or drop one.

    Example (exactly 3): ``"- a\\n- b\\n- c"`` -> ``"- a\\n- b\\n- c\\n- c"``; ``'["a", "b"]'`` (exactly 2)
    -> ``'["a", "b", "b"]'``.
    """
    breaks = breaker(ctype, params)
    body, offset = fence_body(response)
    fams = item_families(response, rng)
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, list) and value:
        style = json_style(body)

        def dump(v: list[Any]) -> str:
            return with_body(response, body, offset, json.dumps(v, **style))

        fams.append(Family(lambda k: dump(value + [value[-1]] * k), 256))
        fams.append(Family(lambda k: dump(value[:-k]) if k < len(value) else None, len(value) - 1))
    if not fams:
        fams = line_families(response, rng)
        entries = list(re.finditer(r"[,;，；、]\s*", body))
        if entries:
            last = entries[-1]
            tail = body[last.end() :]
            fams.append(Family(lambda k: with_body(response, body, offset, body + (last.group() + tail) * k), 64))
            fams.append(Family(lambda k: with_body(response, body, offset, body[: entries[-k].start()])
                               if k <= len(entries) else None, len(entries)))
    return search_all(fams, breaks)


def corrupt_table(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a table answer: a row with a cell missing (or a CSV row with an extra field), no
    delimiter row, a schema column renamed or recased (``question`` -> ``Question``), or too
    few data rows.

    Example: ``"| t | e |\\n|---|---|\\n| 1 s | jump |"`` -> ``"| t | e |\\n|---|---|\\n| 1 s |"``.
    """
    lines = response.split("\n")
    delim = next((i for i, ln in enumerate(lines) if DELIM_LINE.match(ln)), None)
    out = md_table_variants(response) if delim is not None else csv_variants(response)
    first = (delim + 1) if delim is not None else next((i for i, ln in enumerate(lines) if ln.strip()), 0) + 1
    return out + search_all(data_row_families(response, first), breaker(ctype, params))


def _json_value_tokens(body: str) -> list[re.Match[str]]:
    """String and number tokens of a JSON text that are values (not keys), in order."""
    tokens = []
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[^"\d-]+', body):
        tok = m.group()
        if tok[0] == '"' and not re.match(r"\s*:", body[m.end() :]):
            tokens.append(m)
        elif tok[0].isdigit() or tok[0] == "-" and len(tok) > 1:
            tokens.append(m)
    return tokens


def _value_mutations(value: str) -> list[str]:
    return [m for m in (value + ".", flip_first(value), value.replace(" ", ""), "~" + value) if m != value]


def corrupt_value_format(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Put one value out of format: a trailing period ("0.5 s" -> "0.5 s."), its case flipped,
    its space removed, or a "~" before it; inside JSON the value is changed in place (a number
    becomes a string), so the JSON stays valid.

    Example (pattern ``\\d+\\.\\d s``): ``"2.0 s"`` -> ``"2.0 s."``; ``'{"t": "0.5 s"}'`` ->
    ``'{"t": "0.5 s."}'``.
    """
    body, offset = fence_body(response)
    out: list[str] = []
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, (dict, list)):
        tokens = _json_value_tokens(body)
        for tok in tokens[::-1][:3] + tokens[:1]:
            raw = json.loads(tok.group())
            text = raw if isinstance(raw, str) else tok.group()
            for mutated in _value_mutations(text)[:2]:
                new = body[: tok.start()] + json.dumps(mutated, ensure_ascii=False) + body[tok.end() :]
                out.append(with_body(response, body, offset, new))
        return out
    if params["allow_multiple"]:
        pieces = [m for m in re.finditer(r"[^\n;；]+", body) if m.group().strip()]
        for m in pieces[::-1][:2]:
            piece = m.group().strip()
            s = m.start() + m.group().find(piece)
            for mutated in _value_mutations(piece):
                out.append(with_body(response, body, offset, body[:s] + mutated + body[s + len(piece) :]))
        out.append(with_body(response, body, offset, "".join(
            p.group().replace(p.group().strip(), p.group().strip() + ".") if p.group().strip() else p.group()
            for p in re.finditer(r"[^\n;；]+|[\n;；]+", body))))
        return out
    return [with_body(response, body, offset, m) for m in _value_mutations(body.strip())]


def corrupt_label_set(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Give one entry a label outside the set (a synonym, or "other"), or, when labels may not
    repeat, a label another entry already uses.

    Example (labels first/second): ``"- first: a\\n- second: b"`` -> ``"- first: a\\n- next: b"``
    or ``"- first: a\\n- first: b"``.
    """
    labels = params["allowed_labels"]
    ic = params["ignore_case"]
    hits = sorted((m for label in labels for m in find_phrase(response, label, ignore_case=ic)),
                  key=lambda m: m.start())
    if not hits:
        return []
    folded = [x.casefold() for x in labels]
    out: list[str] = []
    for m in list(dict.fromkeys([hits[-1], hits[0], hits[len(hits) // 2]])):
        found = m.group()
        for new in (synonym(found), match_case(found, "other")):
            if new and new.casefold() not in folded:
                out.append(response[: m.start()] + new + response[m.end() :])
        first = hits[0].group()
        if m is not hits[0] and first.casefold() != found.casefold():
            out.append(response[: m.start()] + first + response[m.end() :])
    return out


def corrupt_verbatim(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Misquote the speech: change its letter case, move a digit, swap a word for a synonym,
    drop its last word, or put a word inside it.

    Example (``EXIT 7``): ``'The sign says "EXIT 7".'`` -> ``'The sign says "exit 7".'`` or
    ``'The sign says "EXIT 8".'``.
    """
    words = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", params["expected_utterance"])
    if not words:
        return []
    pattern = r"[^\w'’]+".join(re.escape(w) for w in words)
    m = re.search(pattern, response, re.IGNORECASE)
    if not m:
        return []
    s, e = m.span()
    found = m.group()
    out = []
    for new in (found.lower() if found.isupper() else flip_first(found), other_value(found, [found]),
                replace_phrase(found, "synonym")):
        if new and new != found:
            out.append(response[:s] + new + response[e:])
    tokens = list(re.finditer(r"[^\W_]+", found))
    if len(tokens) > 1:
        cut = tokens[-2].end()
        out.append(response[: s + cut] + response[e:])
        out.append(response[: s + tokens[0].end()] + " uh" + response[s + tokens[0].end() :])
    return out


_TIME = r"\d+(?:[.:]\d+)*(?:\s*(?:s|secs?|seconds?)(?![A-Za-z]))?"
_SPAN = re.compile(rf"(?P<a>{_TIME})(?P<sep>\s*(?:-->|->|-|–|—|~|\bto\b|\buntil\b|\btill\b|\bthrough\b)\s*)(?P<b>{_TIME})")


def _format_time(seconds: float, like: str) -> str:
    unit = re.search(r"\s*(?:s|secs?|seconds?)$", like)
    decimals = len(like.split(".")[1].split()[0]) if "." in like and ":" not in like else 0
    number = f"{seconds:.{decimals}f}" if decimals else str(int(round(seconds)))
    return number + (unit.group() if unit else "")


def corrupt_span(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Change the number of time spans: write a span as two times without a range ("from 1.0 s
    then 3.0 s"), keep only its start, drop the units (a bare number range is not a span), or
    cut it in two at its midpoint.

    Example (exactly 1): ``"It moves from 1.0 s to 3.0 s."`` -> ``"It moves from 1.0 s then 3.0 s."``
    or ``"It moves from 1.0 s to 2.0 s and 2.0 s to 3.0 s."``.
    """
    spans = list(_SPAN.finditer(response))
    out: list[str] = []
    for m in list(dict.fromkeys(spans[::-1][:2] + spans[:1])):
        a, b = m.group("a"), m.group("b")
        s, e = m.span()
        out.append(response[:s] + a + " then " + b + response[e:])
        out.append(response[:s] + a + response[e:])
        strip = re.compile(r"\s*(?:s|secs?|seconds?)$")
        if strip.search(a) or strip.search(b):
            out.append(response[:s] + strip.sub("", a) + m.group("sep") + strip.sub("", b) + response[e:])
        try:
            x, y = (float(re.match(r"\d+(?:\.\d+)?", t).group()) for t in (a, b))  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            continue
        if ":" not in a + b and y > x:
            mid = _format_time((x + y) / 2, a if "." in a else b)
            out.append(response[:s] + a + m.group("sep") + mid + " and " + mid + m.group("sep") + b + response[e:])
    return out


#: video_ifbench type id -> its corruptor; :mod:`ifpo.data_builders.corruptors.registry` reads this table.
CORRUPTORS: dict[str, CorruptFn] = {
    "response_length_constraint": corrupt_word_budget,
    "paragraph_count_constraint": corrupt_paragraph_budget,
    "list_item_count_constraint": corrupt_list_entries,
    "ordered_list_output": corrupt_list_format,
    "structured_json_output": corrupt_json,
    "table_output": corrupt_table,
    "required_keyword_inclusion": corrupt_required_words,
    "forbidden_keyword_exclusion": corrupt_forbidden_words,
    "closed_set_option_output": corrupt_option,
    "normalized_value_format": corrupt_value_format,
    "label_set_restriction": corrupt_label_set,
    "verbatim_speech_constraint": corrupt_verbatim,
    "span_localization": corrupt_span,
}

#: video_ifbench rule/hybrid types that get no programmatic corruptor, each with the reason (none today).
NO_CORRUPTOR: dict[str, str] = {}
