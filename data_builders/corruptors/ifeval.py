"""Corruptors for IFEval's instruction ids (``verifiers/rules/ifeval.py``)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ifpo.data_builders.corruptors.counts import item_families, paragraph_families
from ifpo.data_builders.corruptors.edits import (
    LETTER_WORDS,
    apply_edits,
    cap,
    delete_spans,
    letter_style,
    match_case,
    pad_points,
    sentence_spans,
    styled,
    synonym,
    words_in,
)
from ifpo.data_builders.corruptors.oracle import CorruptFn, Family, breaker, search_all
from ifpo.data_builders.corruptors.shared import (
    corrupt_fixed_text,
    corrupt_forbidden_words,
    corrupt_json,
    corrupt_letter_case,
    corrupt_option,
    corrupt_required_words,
    corrupt_sentence_budget,
    corrupt_word_budget,
)
from ifpo.verifiers.registry import ConstraintType


def corrupt_no_comma(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add a comma after a word in the middle of the answer.

    Example: ``"Red and blue."`` -> ``"Red, and blue."``.
    """
    words = [(s, e) for s, e in words_in(response) if response[e : e + 1] == " "]
    if not words:
        return [response.rstrip() + ","]
    picks = [words[0], words[len(words) // 2]]
    rng.shuffle(words)
    return [response[:e] + "," + response[e:] for s, e in dict.fromkeys(picks + words[:2])]


def corrupt_letter_frequency(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add words rich in the letter (``less than``) or delete words containing it (``at least``).

    Example (letter "z", less than 2): ``"A zebra."`` -> ``"A zebra jazz."``.
    """
    letter = params["letter"].strip().lower()
    breaks = breaker(ctype, params)
    word = max(LETTER_WORDS, key=lambda w: w.count(letter))
    word = styled(word, letter_style(response))
    fams = [Family(lambda k, p=p: response[:p] + (" " + word) * k + response[p:], 4096)
            for p in pad_points(response, rng)[:2]]
    holders = sorted(words_in(response), key=lambda w: -response[w[0] : w[1]].lower().count(letter))
    holders = [w for w in holders if letter in response[w[0] : w[1]].lower()]
    fams.append(Family(lambda k: delete_spans(response, holders[:k]) if k <= len(holders) else None, len(holders)))
    return search_all(fams, breaks)


def corrupt_capital_words(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Uppercase lowercase words (``less than``) or lowercase ALL-CAPS words (``at least``).

    Example (less than 2): ``"A VERY good idea."`` -> ``"A VERY GOOD idea."``.
    """
    breaks = breaker(ctype, params)
    lower = [w for w in words_in(response) if response[w[0] : w[1]].islower()]
    caps = [w for w in words_in(response) if response[w[0] : w[1]].isupper()]
    rng.shuffle(lower)
    fams = [
        Family(lambda k: apply_edits(response, [(s, e, response[s:e].upper()) for s, e in lower[:k]])
               if k <= len(lower) else None, len(lower)),
        Family(lambda k: apply_edits(response, [(s, e, response[s:e].lower()) for s, e in caps[::-1][:k]])
               if k <= len(caps) else None, len(caps)),
    ]
    return search_all(fams, breaks)


# Neutral sentences for pushing the detected language away from the required one.
_LANGUAGE_BANK = {
    "en": "The weather is pleasant today and the children are playing in the garden with their friends.",
    "fr": "Le temps est agréable aujourd'hui et les enfants jouent dans le jardin avec leurs amis.",
    "de": "Das Wetter ist heute angenehm und die Kinder spielen mit ihren Freunden im Garten.",
    "es": "El tiempo es agradable hoy y los niños juegan en el jardín con sus amigos.",
}


def corrupt_language(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Write part of the answer in another language: sentences of a neutral passage in another
    language are added (after, then before the answer) until the detected language changes.

    Example (``en``): ``"The cat sleeps."`` -> ``"The cat sleeps. Le temps est agréable ..."``.
    """
    wanted = params["language"].split("-")[0]
    other = next(code for code in ("fr", "de", "en", "es") if code != wanted)
    sentence = _LANGUAGE_BANK[other]
    breaks = breaker(ctype, params)
    fams = [Family(lambda k: response.rstrip() + (" " + sentence) * k, 64),
            Family(lambda k: (sentence + " ") * k + response.lstrip(), 64)]
    return search_all(fams, breaks)


def corrupt_star_paragraphs(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add a ``***`` divider between two sentences, or remove dividers (joining paragraphs).

    Example (exactly 2): ``"Red. Blue.\\n***\\nGreen."`` -> ``"Red. Blue.\\nGreen."`` or
    ``"Red.\\n***\\nBlue.\\n***\\nGreen."``.
    """
    sents = sentence_spans(response)
    adds = [(a.stop, b.start, "\n***\n") for a, b in zip(sents, sents[1:])
            if "***" not in response[a.stop : b.start] and a.stop > a.end][::-1]
    removes = [(m.start(), m.end(), "\n") for m in re.finditer(r"\s?\*\*\*\s?", response)][::-1]
    fams = [Family(lambda k, e=e: apply_edits(response, e[:k]) if k <= len(e) else None, len(e)) for e in (adds, removes)]
    return search_all(fams, breaker(ctype, params))


def corrupt_nth_paragraph(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Start paragraph n with another word (a synonym, or without the required word), or change
    the number of paragraphs.

    Example (paragraph 2 starts with "then"): ``"Hi.\\n\\nThen, bye."`` -> ``"Hi.\\n\\nBye."``.
    """
    out: list[str] = []
    paras = [m for m in re.finditer(r"[^\n](?:.|\n(?!\n))*", response) if m.group().strip()]
    nth = params["nth_paragraph"]
    if nth <= len(paras):
        para = paras[nth - 1]
        first = re.match(r"\s*[\"']?([^\W_]+)[,.:;!?]?\s*", para.group())
        if first:
            s, e = para.start() + first.start(1), para.start() + first.end()
            word = first.group(1)
            rest = response[e:]
            out.append(response[:s] + cap(rest[:1]) + rest[1:])
            for new in (synonym(word), match_case(word, "also")):
                if new:
                    out.append(response[:s] + new + response[s + len(word) :])
    return out + search_all(paragraph_families(response, rng), breaker(ctype, params))


def corrupt_placeholders(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Fill placeholders: ``[name]`` loses its brackets, as few as needed.

    Example (at least 2): ``"Dear [name], see you at [place]."`` -> ``"Dear [name], see you at place."``.
    """
    hits = list(re.finditer(r"\[([^\[\]]*?)\]", response))[::-1]
    fam = Family(lambda k: apply_edits(response, [(m.start(), m.end(), m.group(1)) for m in hits[:k]])
                 if k <= len(hits) else None, len(hits))
    return search_all([fam], breaker(ctype, params))


def corrupt_postscript(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Spoil the postscript: its marker loses its periods (``P.S.`` -> ``PS``) or it is deleted.

    Example: ``"Thanks.\\n\\nP.S. See you."`` -> ``"Thanks.\\n\\nPS See you."``.
    """
    marker = params["postscript_marker"].strip()
    letters = [re.escape(c) for c in marker if c.isalpha()]
    pattern = re.compile(r"\s?\.?\s?".join(letters) + r"\.?", re.IGNORECASE)
    hits = [m for m in pattern.finditer(response) if "." in m.group() or not letters]
    out = []
    for m in hits[::-1][:2]:
        out.append(response[: m.start()] + m.group().replace(".", "").replace(" ", "") + response[m.end() :])
        line_start = response.rfind("\n", 0, m.start()) + 1
        out.append(response[:line_start].rstrip())
    return out


def corrupt_bullet_count(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat, add, drop, merge or unbullet bullet points (``*``/``-``) until the count is off.

    Example (exactly 2): ``"* one\\n* two"`` -> ``"* one\\n* two\\n* two"`` or ``"* one"``.
    """
    return search_all(item_families(response, rng, ("bullet",)), breaker(ctype, params))


def corrupt_highlights(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Unhighlight ``*sections*`` (markers removed), as few as needed.

    Example (at least 2): ``"*one* and *two*"`` -> ``"*one* and two"``.
    """
    hits = list(re.finditer(r"\*\*([^\n*]+)\*\*|\*([^\n*]+)\*", response))[::-1]
    fam = Family(lambda k: apply_edits(response, [(m.start(), m.end(), m.group(1) or m.group(2)) for m in hits[:k]])
                 if k <= len(hits) else None, len(hits))
    return search_all([fam], breaker(ctype, params))


def corrupt_sections(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Unmark sections: ``Section 2`` becomes ``Part 2`` (or loses its number), as few as needed.

    Example (at least 2): ``"Section 1\\nA\\nSection 2\\nB"`` -> ``"Section 1\\nA\\nPart 2\\nB"``.
    """
    spliter = params["section_spliter"].strip()
    hits = list(re.finditer(re.escape(spliter) + r"(\s?)(\d+)", response))[::-1]
    part = match_case(spliter, "part")
    fams = [
        Family(lambda k: apply_edits(response, [(m.start(), m.end(), part + m.group(1) + m.group(2)) for m in hits[:k]])
               if k <= len(hits) else None, len(hits)),
        Family(lambda k: apply_edits(response, [(m.start(), m.end(), spliter) for m in hits[:k]])
               if k <= len(hits) else None, len(hits)),
    ]
    return search_all(fams, breaker(ctype, params))


def corrupt_title(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Remove the title's double angular brackets (or make them single).

    Example: ``"<<Ode to Joy>>\\nA poem."`` -> ``"Ode to Joy\\nA poem."``.
    """
    titles = list(re.finditer(r"<<([^\n]+?)>>", response))
    return [
        apply_edits(response, [(m.start(), m.end(), m.group(1)) for m in titles]),
        apply_edits(response, [(m.start(), m.end(), f"<{m.group(1)}>") for m in titles]),
    ]


def corrupt_two_responses(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the two-responses format: drop the ``******`` separator, make both answers the
    same, or add a third.

    Example: ``"Yes.\\n******\\nNo."`` -> ``"Yes.\\nNo."`` or ``"Yes.\\n******\\nYes."``.
    """
    parts = response.split("******")
    if len(parts) < 2:
        return []
    out = ["\n".join(p.strip("\n") for p in parts)]
    out.append(parts[0].rstrip() + "\n******\n" + parts[0].strip())
    out.append(response.rstrip() + "\n******\n" + parts[0].strip() + " " + styled("Also.", letter_style(response)))
    return out


def corrupt_quotation(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Remove the wrapping double quotes (the closing one, the opening one, or both), or make
    them curly.

    Example: ``'"Hello there."'`` -> ``'"Hello there.'`` or ``"Hello there."``.
    """
    text = response.strip()
    if len(text) < 2:
        return []
    inner = text[1:-1]
    return [text[:-1], text[1:], inner, "“" + inner + "”"]


#: ifeval type id -> its corruptor; :mod:`ifpo.data_builders.corruptors.registry` reads this table.
CORRUPTORS: dict[str, CorruptFn] = {
    "length_constraints:number_words": corrupt_word_budget,
    "length_constraints:number_sentences": corrupt_sentence_budget,
    "detectable_format:json_format": corrupt_json,
    "startend:end_checker": corrupt_fixed_text,
    "combination:repeat_prompt": corrupt_fixed_text,
    "change_case:english_capital": corrupt_letter_case,
    "change_case:english_lowercase": corrupt_letter_case,
    "punctuation:no_comma": corrupt_no_comma,
    "keywords:existence": corrupt_required_words,
    "keywords:frequency": corrupt_required_words,
    "keywords:forbidden_words": corrupt_forbidden_words,
    "keywords:letter_frequency": corrupt_letter_frequency,
    "change_case:capital_word_frequency": corrupt_capital_words,
    "detectable_format:constrained_response": corrupt_option,
    "language:response_language": corrupt_language,
    "length_constraints:number_paragraphs": corrupt_star_paragraphs,
    "length_constraints:nth_paragraph_first_word": corrupt_nth_paragraph,
    "detectable_content:number_placeholders": corrupt_placeholders,
    "detectable_content:postscript": corrupt_postscript,
    "detectable_format:number_bullet_lists": corrupt_bullet_count,
    "detectable_format:number_highlighted_sections": corrupt_highlights,
    "detectable_format:multiple_sections": corrupt_sections,
    "detectable_format:title": corrupt_title,
    "combination:two_responses": corrupt_two_responses,
    "startend:quotation": corrupt_quotation,
}

#: ifeval rule/hybrid types that get no programmatic corruptor, each with the reason (none today).
NO_CORRUPTOR: dict[str, str] = {}
