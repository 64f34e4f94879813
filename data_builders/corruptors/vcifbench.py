"""Corruptors for VCIFBench's Table 10 types (``verifiers/rules/vcifbench.py``)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from ifpo.data_builders.corruptors.counts import item_families
from ifpo.data_builders.corruptors.edits import (
    PLAIN_WORD,
    apply_edits,
    content_words,
    insertion_families,
    letter_style,
    nonblank_first,
    pad_points,
    styled,
    words_in,
)
from ifpo.data_builders.corruptors.formats import DELIM_LINE, csv_variants, data_row_families
from ifpo.data_builders.corruptors.oracle import CorruptFn, breaker, search_all
from ifpo.data_builders.corruptors.shared import (
    corrupt_fixed_text,
    corrupt_forbidden_words,
    corrupt_json,
    corrupt_letter_case,
    corrupt_list_format,
    corrupt_paragraph_budget,
    corrupt_required_words,
    corrupt_sentence_budget,
    corrupt_word_budget,
)
from ifpo.verifiers.registry import ConstraintType
from ifpo.verifiers.text import list_items


def corrupt_item_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat the last item (renumbered, label number bumped) or add a filler item; drop, merge
    or unbullet items; or turn items into the other list kind.

    Example (exactly 2): ``"1. Step 1: cut\\n2. Step 2: fry"`` ->
    ``"1. Step 1: cut\\n2. Step 2: fry\\n3. Step 3: fry"``.
    """
    return search_all(item_families(response, rng), breaker(ctype, params))


def corrupt_csv(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a CSV answer: invalid quoting (``"red" ,3``), a row with one field too many or too
    few, a required header column renamed, a repeated header name, a text line above the table,
    or too few data rows.

    Example: ``"color,count\\nred,3"`` -> ``'color,count\\n"red" ,3'`` or ``"color,count\\nred,3,3"``.
    """
    out = csv_variants(response, params["delimiter"])
    first = next((i for i, ln in enumerate(response.split("\n")) if ln.strip()), 0) + 1
    return out + search_all(data_row_families(response, first), breaker(ctype, params))


_MD_STRIPPERS: dict[str, Callable[[str], str]] = {
    "heading": lambda t: re.sub(r"(?m)^(\s{0,3})#{1,6}[ \t]+", r"\1", t),
    "list": lambda t: re.sub(r"(?m)^([ \t]*)(?:[-*+•·]|\d+[.)])[ \t]+", r"\1", t),
    "emphasis": lambda t: re.sub(
        r"(?<![\w*])\*(?![\s*])([^*\n]+?)(?<![\s*])\*(?![\w*])|(?<![\w_])_(?![\s_])([^_\n]+?)(?<![\s_])_(?![\w_])",
        lambda m: m.group(1) or m.group(2) or "",
        re.sub(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__", lambda m: m.group(1) or m.group(2) or "", t),
    ),
    "table": lambda t: "\n".join(
        ("-|" * (len(re.findall(r"-+", ln)) - 1) + "-")
        if DELIM_LINE.match(ln)
        else (ln.strip().strip("|").strip() if ln.strip().startswith("|") else ln)
        for ln in t.split("\n")
    ),
    "code": lambda t: re.sub(r"(?m)^\s*(?:```|~~~).*\n?", "", t).replace("`", ""),
    "link": lambda t: re.sub(r"!?\[([^\]\n]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", r"\1 (\2)", t),
    "blockquote": lambda t: re.sub(r"(?m)^(\s{0,3})>\s?", r"\1", t),
    "rule": lambda t: re.sub(r"(?m)^\s{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\n?", "", t),
}


def corrupt_markdown(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Strip one required Markdown element (headings become plain lines, a pipe table loses its
    outer pipes and long dashes, list markers go, emphasis markers go), or all Markdown.

    Example (``elements: [heading]``): ``"## Peak\\nFour shapes."`` -> ``"Peak\\nFour shapes."``.
    """
    wanted = params.get("elements") or list(_MD_STRIPPERS)
    out = [_MD_STRIPPERS[e](response) for e in wanted]
    everything = response
    for strip in _MD_STRIPPERS.values():
        everything = strip(everything)
    return out + [everything]


def _inner_words(text: str, rng: random.Random, n: int = 3) -> list[tuple[int, int]]:
    """A few plain words away from the first and last three words (openings and closings are
    often constrained): the middle one, then random ones."""
    words = [(s, e) for s, e in words_in(text) if PLAIN_WORD.fullmatch(text[s:e])]
    inner = words[3:-3] or words[1:-1] or words
    if not inner:
        return []
    picks = [inner[len(inner) // 2]]
    rest = [w for w in inner if w != picks[0]]
    rng.shuffle(rest)
    return picks + rest[: n - 1]


def corrupt_plain_text(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add Markdown to plain text: bold one word in the middle (word and sentence counts stay),
    put a word in backticks, make the first line a heading or the last line a bullet.

    Example: ``"The cat sits on the mat."`` -> ``"The cat sits **on** the mat."``.
    """
    out = [apply_edits(response, [(s, e, f"**{response[s:e]}**")]) for s, e in _inner_words(response, rng)]
    out += [apply_edits(response, [(s, e, f"`{response[s:e]}`")]) for s, e in _inner_words(response, rng, 1)]
    out.append("# " + response.lstrip())
    lines = response.rstrip().split("\n")
    if len(lines) > 1:
        out.append("\n".join(lines[:-1] + ["- " + lines[-1].lstrip()]))
    if not params.get("allow_numbered", True):
        out.append("1. " + response.lstrip())
    return out


_DECOR = re.compile(r"^\s*(?:(?:#{1,6}|>|[-*+•·]|\d+[.)])\s+)*")


def corrupt_prefix_label(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Remove the label from one item (the last, the first or a middle one), drop the label's
    final colon, or give one item the wrong number.

    Example (``Step {n}:``): ``"- Step 1: cut\\n- Step 2: fry"`` -> ``"- Step 1: cut\\n- fry"`` or
    ``"- Step 1: cut\\n- Step 2 fry"`` or ``"- Step 1: cut\\n- Step 3: fry"``.
    """
    lines = response.split("\n")
    scope = params["scope"]
    items = list_items(response) if scope == "items" else []
    if items:
        units = [i.line for i in items]
    elif scope == "paragraphs":
        units = [j for j, ln in enumerate(lines) if ln.strip() and (j == 0 or not lines[j - 1].strip())]
    else:
        units = [j for j, ln in enumerate(lines) if ln.strip()]
    if not units:
        return []
    flags = re.IGNORECASE if params["ignore_case"] else 0
    out: list[str] = []
    order = list(dict.fromkeys([len(units) - 1, 0, len(units) // 2]))
    for k in order:
        line = lines[units[k]]
        label = params["prefix"].replace("{n}", str(k + 1)).strip()
        head = _DECOR.match(line).end()  # type: ignore[union-attr]
        m = re.compile(r"(\*\*|__|\*|_)?" + re.escape(label) + r"(\*\*|__|\*|_)?[ \t]*", flags).match(line, head)
        if not m:
            continue
        variants = [line[:head] + line[m.end() :]]
        core = m.start() + (len(m.group(1)) if m.group(1) else 0)
        if label[-1] in ":.-)":
            variants.append(line[: core + len(label) - 1] + line[core + len(label) :])
        if "{n}" in params["prefix"]:
            wrong = params["prefix"].replace("{n}", str(k + 2)).strip()
            variants.append(line[:core] + wrong + line[core + len(label) :])
        for new in variants:
            out.append("\n".join(lines[: units[k]] + [new] + lines[units[k] + 1 :]))
    return out


_CONTRACTIONS = (
    ("do not", "don't"), ("does not", "doesn't"), ("did not", "didn't"), ("is not", "isn't"),
    ("are not", "aren't"), ("was not", "wasn't"), ("were not", "weren't"), ("has not", "hasn't"),
    ("have not", "haven't"), ("had not", "hadn't"), ("will not", "won't"), ("would not", "wouldn't"),
    ("could not", "couldn't"), ("should not", "shouldn't"), ("cannot", "can't"), ("can not", "can't"),
    ("it is", "it's"), ("that is", "that's"), ("there is", "there's"), ("what is", "what's"),
    ("he is", "he's"), ("she is", "she's"), ("let us", "let's"), ("I am", "I'm"), ("we are", "we're"),
    ("they are", "they're"), ("you are", "you're"), ("I have", "I've"), ("we have", "we've"),
    ("they have", "they've"), ("I will", "I'll"), ("we will", "we'll"), ("it will", "it'll"),
    ("they will", "they'll"), ("I would", "I'd"), ("here is", "here's"), ("who is", "who's"),
)


def corrupt_contractions(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Contract one phrase ("do not" -> "don't", "it is" -> "it's", "we are" -> "we're"), one
    candidate per place, in random order; with nothing to contract, add "and that's it".

    Example: ``"It is red and we are done."`` -> ``"It's red and we are done."`` or
    ``"It is red and we're done."``.
    """
    sites: list[str] = []
    for full, short in _CONTRACTIONS:
        for m in re.finditer(r"(?<![\w'])" + re.escape(full) + r"(?![\w'])", response, re.IGNORECASE):
            found = m.group()
            new = short if found[:1].islower() or full.startswith("I ") else short[:1].upper() + short[1:]
            if found.isupper() and len(found) > 1:
                new = short.upper()
            sites.append(response[: m.start()] + new + response[m.end() :])
    rng.shuffle(sites)
    style = letter_style(response)
    tail = [response[:p] + " " + styled("and that's it", style) + response[p:] for p in pad_points(response, rng)[:2]]
    return sites[:6] + tail


def corrupt_lexical_diversity(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat a limited term beyond its limit (with ``terms: null``, the most frequent content
    words), by putting it in place of other content words or adding it to a sentence.

    Example (``terms: [soup]``, at most 1): ``"The soup is hot and tasty."`` ->
    ``"The soup is hot and soup."``.
    """
    terms = params["terms"]
    if terms is None:
        counts: dict[str, int] = {}
        for s, e in content_words(response):
            counts[response[s:e].lower()] = counts.get(response[s:e].lower(), 0) + 1
        terms = sorted(counts, key=lambda w: -counts[w])[:3]
    breaks = breaker(ctype, params)
    out: list[str] = []
    for term in nonblank_first(terms, 3):
        out += search_all(insertion_families(response, term, rng), breaks)
    return out


#: vcifbench type id -> its corruptor; :mod:`ifpo.data_builders.corruptors.registry` reads this table.
CORRUPTORS: dict[str, CorruptFn] = {
    "word_count": corrupt_word_budget,
    "sentence_count": corrupt_sentence_budget,
    "paragraph_count": corrupt_paragraph_budget,
    "item_count": corrupt_item_budget,
    "bullet_list": corrupt_list_format,
    "numbered_list": corrupt_list_format,
    "json": corrupt_json,
    "csv": corrupt_csv,
    "markdown": corrupt_markdown,
    "plain_text": corrupt_plain_text,
    "fixed_opening": corrupt_fixed_text,
    "fixed_closing": corrupt_fixed_text,
    "prefix_label": corrupt_prefix_label,
    "letter_case": corrupt_letter_case,
    "no_contractions": corrupt_contractions,
    "exact_word_inclusion": corrupt_required_words,
    "exact_word_exclusion": corrupt_forbidden_words,
    "lexical_diversity": corrupt_lexical_diversity,
}

#: vcifbench rule/hybrid types that get no programmatic corruptor, each with the reason (none today).
NO_CORRUPTOR: dict[str, str] = {}
