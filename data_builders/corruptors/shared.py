"""Corruptors that constraint types of several families share (one function, several type ids).

VCIFBench's ``word_count``, Video-IFBench's ``response_length_constraint`` and IFEval's
``length_constraints:number_words`` all bound a word count, so one function breaks all three; the
family modules (:mod:`.ifeval`, :mod:`.vcifbench`, ...) map their type ids to it. A function gets
the :class:`~ifpo.verifiers.registry.ConstraintType` it corrupts, so it can read that type's params
and search with that type's checker.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ifpo.data_builders.corruptors.counts import (
    NUM_MARK,
    char_families,
    item_families,
    paragraph_families,
    sentence_families,
    word_families,
)
from ifpo.data_builders.corruptors.edits import (
    TOKEN,
    apply_edits,
    cap,
    delete_spans,
    flip_first,
    insertion_families,
    letter_style,
    line_spans,
    longest_first,
    nonblank_first,
    other_value,
    phrase_regex,
    replace_phrase,
    sentence_spans,
    styled,
    synonym,
    words_in,
)
from ifpo.data_builders.corruptors.formats import json_variants
from ifpo.data_builders.corruptors.oracle import Family, breaker, search_all
from ifpo.verifiers.registry import ConstraintType
from ifpo.verifiers.text import list_items, normalize_quotes

# Corruptors: counts and budgets


def corrupt_word_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Overflow a word budget with short filler words inside an existing sentence (the sentence
    count stays), or underflow it by deleting words, then whole sentences; the smallest number
    of words that crosses the bound, counted by the type's own checker.

    Example (``word_count``, 3 to 5 words): ``"A red ball rolls."`` ->
    ``"A red ball rolls for now."`` (the filler words depend on ``rng``); with at least 4 words
    -> ``"A red rolls."``.
    """
    unit = str(params.get("unit", "word"))
    families = word_families if unit in ("word", "words") else char_families
    return search_all(families(response, rng), breaker(ctype, params))


def corrupt_sentence_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Split a sentence at a comma or before a conjunction (the words stay), or merge two
    sentences with "; "; repeating or dropping a sentence are the fallbacks.

    Example (``sentence_count``, exactly 2): ``"It rains, so we wait. Then we go."`` ->
    ``"It rains. So we wait. Then we go."`` or ``"It rains, so we wait; then we go."``.
    """
    return search_all(sentence_families(response, rng), breaker(ctype, params))


def corrupt_paragraph_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a paragraph in two at a sentence boundary (words and sentences stay), or join two
    paragraphs into one keeping the line break; repeating or dropping a paragraph are fallbacks.

    Example (exactly 2): ``"One. Two.\\n\\nThree."`` -> ``"One.\\n\\nTwo.\\n\\nThree."`` or
    ``"One. Two.\\nThree."``.
    """
    return search_all(paragraph_families(response, rng), breaker(ctype, params))


# Corruptors: list formats


def _add_text_line(text: str, style: str) -> list[str]:
    line = styled("That is all.", style) if style != "lower" else "that is all."
    return [text.rstrip() + "\n" + line, line + "\n" + text.lstrip()]


def corrupt_list_format(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a list-format constraint: unbullet/unnumber items until too few remain, turn items
    into the other (disallowed) kind, add a line of text outside the list when only items are
    allowed, skip a number in a sequential numbered list, or run the items together on one line.

    Example (``numbered_list``, sequential): ``"1. cut\\n2. fry\\n3. serve"`` ->
    ``"1. cut\\n2. fry\\n4. serve"``; (``bullet_list`` without text) ``"- A cat\\n- A dog"`` ->
    ``"- A cat\\n- A dog\\nThat is all."``; (``ordered_list_output``, 2 items) the items run
    together on one line, ``"1. A cat 2. A dog"``.
    """
    breaks = breaker(ctype, params)
    items = list_items(response)
    lines = response.split("\n")
    out: list[str | None] = []
    numbered = [i for i in items if i.kind == "numbered"]
    if numbered:
        item = numbered[-1]
        new = list(lines)
        new[item.line] = NUM_MARK.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1}{m.group(3)}", new[item.line], count=1)
        out.append("\n".join(new))
    if params.get("allow_text") is False:
        out += _add_text_line(response, letter_style(response))
    if items:
        joined = [f"{j}. {item.text}" for j, item in enumerate(items, start=1)]
        first, last = items[0].line, items[-1].line
        out.append("\n".join(lines[:first] + [" ".join(joined)] + lines[last + 1 :]))
    out += search_all(item_families(response, rng, grow=False), breaks)  # min_items has no maximum
    return [c for c in out if c]


def corrupt_json(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a JSON answer: drop its closing brace, add a trailing comma, put a word before or
    after it, wrap an object in an array, rename a required key, or add a key the schema does
    not have (a forbidden key first), copying an existing value so value formats still hold.

    Example: ``'{"a": 1}'`` -> ``'{"a": 1'``, ``'result: {"a": 1}'`` (the lead word takes the
    answer's letter case), ``'{"a_info": 1}'``, ``'{"a": 1, "note": 1}'``.
    """
    return json_variants(response, params.get("forbidden_keys") or ())


# Corruptors: fixed openings and closings, labels


def _phrase_span(text: str, phrase: str, *, at_start: bool, ignore_case: bool) -> tuple[int, int] | None:
    """Where ``phrase`` sits at the start (after whitespace / a code fence) or at the end
    (before whitespace, quotes or a closing fence) of ``text``; quotes and spaces are flexible."""
    norm = normalize_quotes(text)
    words = normalize_quotes(phrase).split()
    if not words:
        return None
    body = r"\s+".join(re.escape(w) for w in words)
    flags = re.IGNORECASE if ignore_case else 0
    if at_start:
        m = re.compile(r"\s*(?:```[\w+-]*[ \t]*\n\s*)?(" + body + ")", flags).match(norm)
        return (m.start(1), m.end(1)) if m else None
    hits = [m for m in re.finditer(body, norm, flags) if not norm[m.end() :].strip(" \t\n\"'`")]
    return (hits[-1].start(), hits[-1].end()) if hits else None


def _affix_variants(text: str, phrase: str, *, at_start: bool, ignore_case: bool) -> list[str]:
    """Altered fixed text: its edge punctuation dropped, its first letter recased, a word
    swapped for a synonym, a word added before/after it, or the phrase deleted."""
    span = _phrase_span(text, phrase, at_start=at_start, ignore_case=ignore_case)
    style = letter_style(text)
    if span is None:
        return []
    start, end = span
    found = text[start:end]
    out: list[str] = []
    edge = found[-1] if found[-1] in ".:,;!?-" else None
    if edge:
        out.append(text[: end - 1] + text[end:])
    if not at_start and found[0] in "-–—#@" and len(found) > 1:
        out.append(text[:start] + found[1:].lstrip() + text[end:])
    out.append(text[:start] + flip_first(found) + text[end:])
    for m in TOKEN.finditer(found):
        syn = synonym(m.group())
        if syn:
            out.append(text[: start + m.start()] + syn + text[start + m.end() :])
            break
    if at_start:
        if found[:1].isupper() and style == "mixed":
            out.append(text[:start] + "So " + flip_first(found) + text[end:])
        else:
            out.append(text[:start] + styled("so ", style) + text[start:])
        rest = text[end:].lstrip()
        out.append(text[:start] + cap(rest, style))
    else:
        out.append(text[:end] + " " + styled("Thanks." if style != "lower" else "thanks.", style) + text[end:])
        out.append(text[:start].rstrip() + text[end:])
    return out


def corrupt_fixed_text(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Drop or alter the fixed opening/closing: remove its final punctuation, recase its first
    letter, swap a word for a synonym, add a word before (opening) or after (closing) it, or
    delete it.

    Example (``fixed_closing`` "End of report."): ``"It moves. End of report."`` ->
    ``"It moves. End of report"``; (``fixed_opening`` "Notice:") ``"Notice: open."`` ->
    ``"Notice open."``.
    """
    phrase, at_start = {
        "fixed_opening": ("text", True),
        "fixed_closing": ("text", False),
        "vsys_required_prefix": ("prefix", True),
        "vsys_required_suffix": ("suffix", False),
        "startend:end_checker": ("end_phrase", False),
        "combination:repeat_prompt": ("prompt_to_repeat", True),
    }[ctype.id]
    ignore_case = bool(params.get("ignore_case", ctype.id.startswith(("startend", "combination"))))
    return _affix_variants(response, params[phrase].strip(), at_start=at_start, ignore_case=ignore_case)


# Corruptors: letter case, contractions, punctuation


def _case_targets(text: str, params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Word spans inside the letter_case scope (item text, heading text, every line, ...)."""
    scope = params.get("scope", "all")
    spans = line_spans(text)
    if scope == "items":
        regions = [(spans[i.line][1] - len(i.text), spans[i.line][1]) for i in list_items(text)]
    elif scope == "headings":
        regions = [(s + len(m.group(0)), e) for s, e in spans if (m := re.match(r"\s{0,3}#{1,6}\s+", text[s:e]))]
    else:
        regions = [(0, len(text))]
    words = []
    for lo, hi in regions:
        words += words_in(text, lo, hi)
    exceptions = [p for p in params.get("exceptions") or [] if p.strip()]
    return [(s, e) for s, e in words if not any(text[s:e] in ex.split() for ex in exceptions)]


def _recase_variants(text: str, words: Sequence[tuple[int, int]], change: Callable[[str], str],
                     rng: random.Random) -> list[str]:
    if not words:
        return []
    picks = [words[len(words) // 2], words[-1]]
    rest = list(words)
    rng.shuffle(rest)
    out = []
    for s, e in list(dict.fromkeys(picks + rest[:3])):
        new = change(text[s:e])
        if new != text[s:e]:
            out.append(text[:s] + new + text[e:])
    return out


def corrupt_letter_case(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Change the case of one word: capitalise a word of a lowercase answer, lowercase a word of
    an uppercase one, lowercase a title word or a sentence start (or start a new lowercase
    sentence with one added period), always inside the constraint's scope.

    Example (``lower``): ``"a red circle moves right"`` -> ``"a red Circle moves right"``;
    (``sentence``) ``"A red circle. A blue one."`` -> ``"A red circle. a blue one."``.
    """
    case = {"change_case:english_capital": "upper", "change_case:english_lowercase": "lower"}.get(
        ctype.id, params.get("case")
    )
    scope = params.get("scope", "all")
    words = _case_targets(response, params)
    if scope == "first_word":
        words = words[:1]
    if case == "lower":
        words = [w for w in words if response[w[0] : w[1]].islower()]
        return _recase_variants(response, words, lambda w: w[:1].upper() + w[1:], rng)
    if case == "upper":
        words = [w for w in words if response[w[0] : w[1]].isupper()]
        return _recase_variants(response, words, str.lower, rng)
    if case == "title":
        words = [w for w in words if response[w[0]].isupper()]
        return _recase_variants(response, words, lambda w: w[:1].lower() + w[1:], rng)
    sents = sentence_spans(response)
    starts = []
    for s in sents[1:] + sents[:1]:
        m = TOKEN.search(response, s.start, s.end)
        if m and response[m.start()].isupper() and not (len(m.group()) > 1 and m.group().isupper()):
            starts.append((m.start(), m.end()))
    out = _recase_variants(response, starts, lambda w: w[:1].lower() + w[1:], rng)
    for s in longest_first(response, sents)[:2]:
        gaps = [m.start() for m in re.finditer(r"(?<=[^\W\d_]) (?=[a-z])", response[s.start : s.end])]
        if len(gaps) >= 2:
            pos = s.start + gaps[len(gaps) // 2]
            out.append(response[:pos] + "." + response[pos:])
    return out


# Corruptors: required, forbidden and repeated words


def _occurrence_pattern(phrase: str, *, ignore_case: bool, substring: bool = False) -> re.Pattern[str]:
    """How a checker finds ``phrase``: a whole word/phrase, or (IFEval) any word containing it."""
    if substring:
        return re.compile(r"[^\W_]*" + re.escape(phrase) + r"[^\W_]*", re.IGNORECASE if ignore_case else 0)
    return phrase_regex(phrase, ignore_case=ignore_case)


def _removal_families(text: str, patterns: Sequence[re.Pattern[str]]) -> list[Family]:
    """Remove occurrences (last first, or first first) by a synonym, by recasing them, or by
    deleting them; one pattern per phrase plus all phrases together."""
    if not patterns:
        return []
    together = re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    fams = []
    for pattern in [*patterns, together] if len(patterns) > 1 else patterns:
        matches = list(pattern.finditer(text))
        for how in ("synonym", "case", "delete"):
            for chosen in (matches[::-1], matches):

                def make(k: int, chosen: list[re.Match[str]] = chosen, how: str = how) -> str | None:
                    if k > len(chosen):
                        return None
                    edits = []
                    for m in chosen[:k]:
                        new = replace_phrase(m.group(), how)
                        if new is None:
                            return None
                        edits.append((m.start(), m.end(), new))
                    if how == "delete":
                        return delete_spans(text, [(s, e) for s, e, _ in edits])
                    return apply_edits(text, edits)

                fams.append(Family(make, len(matches)))
    return fams


def corrupt_required_words(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Remove a required word below its minimum (a synonym in its place, its case changed if the
    match is case-sensitive, or deleted), or repeat it past its maximum.

    Example (``exact_word_inclusion`` "center"): ``"They cross in the center."`` ->
    ``"They cross in the middle."``; (``keywords:frequency`` "fun" less than 2) ``"Fun."`` ->
    ``"Fun fun."``.
    """
    tid = ctype.id
    if tid == "exact_word_inclusion":
        phrases, ignore_case, substring = params["phrases"], params["ignore_case"], False
    elif tid == "required_keyword_inclusion":
        phrases, ignore_case, substring = params["keywords"], params["ignore_case"], False
    elif tid == "keywords:existence":
        phrases, ignore_case, substring = params["keywords"], True, True
    elif tid == "keywords:frequency":
        phrases, ignore_case, substring = [params["keyword"]], True, True
    else:
        phrases, ignore_case, substring = [params["keyword"]], params["ignore_case"], False
    phrases = nonblank_first([p.strip() for p in phrases])
    breaks = breaker(ctype, params)
    patterns = [_occurrence_pattern(p, ignore_case=ignore_case, substring=substring) for p in phrases]
    out = search_all(_removal_families(response, patterns), breaks)
    for phrase in phrases:
        out += search_all(insertion_families(response, phrase, rng), breaks)
    return out


def corrupt_forbidden_words(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Insert a forbidden word: where a word it is a synonym of stood ("disappears" ->
    "vanishes"), in place of another content word, or before a sentence's final punctuation.

    Example (``exact_word_exclusion`` "vanishes"): ``"The square disappears at 2 s."`` ->
    ``"The square vanishes at 2 s."``.
    """
    key = {"exact_word_exclusion": "phrases", "forbidden_keyword_exclusion": "keywords",
           "vsys_word_blacklist": "words", "keywords:forbidden_words": "forbidden_words"}[ctype.id]
    breaks = breaker(ctype, params)
    out: list[str] = []
    for phrase in nonblank_first([p.strip() for p in params[key]], 3):
        out += search_all(insertion_families(response, phrase, rng), breaks)
    return out


# Answer formats: closed option sets


def _lead_option(text: str, options: Sequence[str], ignore_case: bool) -> tuple[int, int] | None:
    lead = len(text) - len(text.lstrip(" \t\n*_`\"'“”‘’"))
    for option in sorted(options, key=len, reverse=True):
        opt = option.strip().rstrip(".。!！")
        if opt and re.match(re.escape(opt), text[lead:], re.IGNORECASE if ignore_case else 0):
            return lead, lead + len(opt)
    return None


def corrupt_option(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Answer outside the closed set: move the option to a value that is not allowed ("B" ->
    "E", "2.5 s" -> "2.6 s"), name a second option after it, add an explanation where none is
    allowed, drop the option's final period, or bury the option in a sentence.

    Example (options A-D): ``"B"`` -> ``"E"``, ``"B, A"``, ``"The answer is B"``.
    """
    if ctype.id == "detectable_format:constrained_response":
        options, ignore_case = ["My answer is yes.", "My answer is no.", "My answer is maybe."], False
    else:
        options, ignore_case = params["allowed_options"], params["ignore_case"]
    # a one-word answer ("B") says nothing about the answer's letter case
    style = letter_style(response) if len(words_in(response)) >= 3 else "mixed"
    out: list[str] = []
    span = _lead_option(response, options, ignore_case)
    if span is None:
        found = next((o for o in options if o in response), None)
        span = (response.find(found), response.find(found) + len(found)) if found else None
    if span:
        s, e = span
        chosen = response[s:e]
        other = other_value(chosen, options)
        if other:
            out.append(response[:s] + other + response[e:])
        if chosen.endswith("."):
            out.append(response[: e - 1] + response[e:])
        elif response[e : e + 1] == ".":
            out.append(response[:e] + response[e + 1 :])
        out.append(response[:s] + flip_first(chosen) + response[e:])
        second = next((o for o in options if o.strip().casefold() != chosen.strip().casefold()), None)
        if second:
            out.append(response[:e] + ", " + second.strip() + response[e:])
        word = re.search(r"\b(yes|no|maybe)\b", chosen)
        if word:
            swap = {"yes": "yeah", "no": "nope", "maybe": "perhaps"}[word.group()]
            out.append(response[: s + word.start()] + swap + response[s + word.end() :])
    lead = "The answer is" if style == "mixed" else styled("the answer is", style)
    out.append(f"{lead} {response.lstrip()}")
    out.append(response.rstrip() + " " + styled("because it fits best.", style))
    return out
