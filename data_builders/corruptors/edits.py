"""Text primitives the corruptors edit with: non-overlapping edits, letter-case style, filler
words, synonyms, sentence and line offsets, phrase patterns, and adding or removing a phrase.

Sentences are found as :func:`ifpo.verifiers.text.split_sentences` finds them, but with offsets,
so an edit can be placed inside one without creating a new one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ifpo.data_builders.corruptors.oracle import Family
from ifpo.verifiers.text import strip_code_fences

Edit = tuple[int, int, str]  # replace text[start:end] with the string


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (overlapping ones after the first are dropped)."""
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            continue
        parts += [text[pos:start], new]
        pos = end
    return "".join(parts) + text[pos:]


def letter_style(text: str) -> str:
    """``upper`` (no lowercase letter), ``lower`` (no uppercase letter) or ``mixed``."""
    has_upper = any(c.isupper() for c in text)
    has_lower = any(c.islower() for c in text)
    if has_upper and not has_lower:
        return "upper"
    if not has_upper:
        return "lower"
    return "mixed"


def styled(words: str, style: str) -> str:
    return words.upper() if style == "upper" else words


def cap(word: str, style: str = "mixed") -> str:
    """Capitalise the first letter unless the text is all lowercase (then keep it)."""
    if style == "lower" or not word:
        return word
    return word[:1].upper() + word[1:]


def flip_first(word: str) -> str:
    """Flip the case of the first cased letter: ``Notice`` -> ``notice``, ``red`` -> ``Red``."""
    for i, ch in enumerate(word):
        if ch.isalpha() and ch.lower() != ch.upper():
            return word[:i] + (ch.lower() if ch.isupper() else ch.upper()) + word[i + 1 :]
    return word


# Filler for padding a word budget: words of at most three letters, no commas, no contractions,
# no capitals, so that style, lexical-diversity and punctuation constraints keep their verdict.
FILLER_UNITS = ("as you can see", "and so on", "all the way", "for now", "as it is", "and so on too")


def filler(k: int, offset: int, style: str) -> str:
    words: list[str] = []
    i = offset
    while len(words) < k:
        words.extend(FILLER_UNITS[i % len(FILLER_UNITS)].split())
        i += 1
    return styled(" ".join(words[:k]), style)


# A small synonym table: a required word is replaced by a near-synonym (the answer stays fluent
# and about as long), and a forbidden word is preferably put where its synonym stood.
_SYNONYMS = {
    "center": "middle", "centre": "middle", "middle": "center", "only": "just", "just": "only",
    "moves": "travels", "travels": "moves", "move": "travel", "moving": "travelling",
    "diagonally": "slantwise", "overlap": "coincide", "disappears": "vanishes", "vanishes": "disappears",
    "disappear": "vanish", "vanish": "disappear", "appears": "emerges", "appear": "emerge",
    "red": "crimson", "green": "emerald", "blue": "azure", "yellow": "golden", "purple": "violet",
    "orange": "amber", "black": "dark", "white": "pale", "square": "box", "circle": "disc",
    "circles": "discs", "squares": "boxes", "triangle": "wedge", "star": "asterisk", "seconds": "secs",
    "second": "next", "first": "initial", "total": "sum", "four": "4", "three": "3", "two": "2",
    "top": "upper", "bottom": "lower", "shape": "figure", "shapes": "figures", "object": "item",
    "objects": "items", "image": "picture", "video": "clip", "clip": "video", "frame": "picture",
    "big": "large", "large": "big", "small": "little", "little": "small", "quickly": "rapidly",
    "slowly": "gradually", "closed": "shut", "open": "unlocked", "beautiful": "pretty", "nice": "fine",
    "lovely": "pleasant", "maybe": "possibly", "probably": "likely", "approximately": "roughly",
    "about": "around", "several": "some", "sign": "board", "signs": "boards", "exit": "way out",
    "teleport": "jump", "teleports": "jumps", "stop": "halt", "answer": "reply", "motion": "movement",
    "color": "colour", "colour": "color", "count": "number", "question": "query", "position": "place",
    "corner": "angle", "time": "moment", "event": "happening", "river": "stream", "stone": "rock",
}

# Everyday words rich in each letter (keywords:letter_frequency pads with one of them).
LETTER_WORDS = "banana bubble accept added free egg giggle high jinx kick lull mummy noon pop quiz error sass tattoo unusual valve wow box yay jazz".split()

TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
PLAIN_WORD = re.compile(r"[A-Za-z]+")


class Sent(NamedTuple):
    """A sentence: ``text[start:end]`` is its content, ``text[end:stop]`` its final punctuation."""

    start: int
    end: int
    stop: int


_SENT_PUNCT = re.compile(r"[.!?。！？]+[\"'”’)\]]*(?=\s|$)")
_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "no.", "st.")
_MARKERISH = re.compile(r"\s*(?:[-*+•·]\s*)?(?:\d+|[A-Za-z])")  # "1." / "A." are not sentences


def sentence_spans(text: str) -> list[Sent]:
    """Sentences line by line, as :func:`ifpo.verifiers.text.split_sentences` sees them, with offsets;
    a list number or option letter ("1.", "A.") stays with the sentence after it."""
    out: list[Sent] = []
    for line in re.finditer(r"[^\n]+", text):
        base, raw = line.start(), line.group()
        start = base + len(raw) - len(raw.lstrip())
        content_end = base + len(raw.rstrip())
        for m in _SENT_PUNCT.finditer(raw):
            end, stop = base + m.start(), base + m.end()
            segment = text[start:end]
            if end <= start or not any(c.isalnum() for c in segment):
                continue
            if text[start:stop].lower().endswith(_ABBREV) or _MARKERISH.fullmatch(segment):
                continue
            out.append(Sent(start, end, stop))
            nxt = stop
            while nxt < content_end and text[nxt] in " \t":
                nxt += 1
            start = nxt
        if start < content_end and any(c.isalnum() for c in text[start:content_end]):
            out.append(Sent(start, content_end, content_end))
    return out


def words_in(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    end = len(text) if end is None else end
    return [(m.start(), m.end()) for m in TOKEN.finditer(text, start, end)]


def longest_first(text: str, sents: Sequence[Sent]) -> list[Sent]:
    return sorted(sents, key=lambda s: -len(words_in(text, s.start, s.end)))


def gap_is_same_line(text: str, a: int, b: int) -> bool:
    return "\n" not in text[a:b]


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, newline excluded."""
    spans, pos = [], 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def delete_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Delete spans with the spaces after them; a line left blank by that is removed whole."""
    edits: list[Edit] = []
    for start, end in spans:
        if end < len(text) and text[end] not in " \t\n":
            while start > 0 and text[start - 1] in " \t":  # "in the center." -> "in the."
                start -= 1
        while end < len(text) and text[end] in " \t":
            end += 1
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        if not text[line_start:start].strip() and not text[end:line_end].strip():
            start, end = line_start, min(line_end + 1, len(text))
            if line_end == len(text) and line_start > 0:
                start = line_start - 1  # the last line: drop the newline before it instead
        edits.append((start, end, ""))
    return apply_edits(text, edits)


def phrase_regex(phrase: str, *, ignore_case: bool, whole_word: bool = True) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(p) for p in phrase.split())
    if whole_word and phrase[:1].isalnum():
        body = r"(?<![^\W_])" + body
    if whole_word and phrase[-1:].isalnum():
        body = body + r"(?![^\W_])"
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def match_case(template: str, word: str) -> str:
    """``word`` in the letter case of ``template`` (UPPER, Capitalised or as given)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def synonym(word: str) -> str | None:
    syn = _SYNONYMS.get(word.lower())
    return match_case(word, syn) if syn else None


def fence_body(response: str) -> tuple[str, int]:
    """The response without one surrounding code fence, and its offset in the response."""
    body = strip_code_fences(response)
    return body, max(response.find(body), 0)


def with_body(response: str, body: str, offset: int, new_body: str) -> str:
    return response[:offset] + new_body + response[offset + len(body) :]


def pad_points(text: str, rng: random.Random) -> list[int]:
    """Where filler words go: before the final punctuation of the longest sentence (so no new
    sentence appears), after a word in the middle of it (inside a JSON string, a list item or a
    table cell), at the end of the first and last sentences, and after a random word."""
    sents = sentence_spans(text)
    points: list[int] = []
    ordered = longest_first(text, sents)
    with_punct = [s for s in ordered if s.stop > s.end]
    if with_punct:
        points.append(with_punct[0].end)
    inner = [e for _, e in words_in(text) if re.match(r" [^\W\d_]", text[e : e + 2])]
    if ordered:
        s = ordered[0]
        mid = [e for e in inner if s.start < e < s.end]
        if mid:
            points.append(mid[len(mid) // 2])
    for s in (sents[:1] + sents[-1:]) if sents else []:
        if s.stop > s.end:
            points.append(s.end)
    if inner:
        points.append(inner[rng.randrange(len(inner))])
    if not points:
        points.append(len(text.rstrip()))
    return list(dict.fromkeys(points))


def replace_phrase(found: str, how: str) -> str | None:
    if how == "synonym":
        for m in TOKEN.finditer(found):
            syn = synonym(m.group())
            if syn:
                return found[: m.start()] + syn + found[m.end() :]
        return None
    if how == "case":
        if found.isupper() and sum(c.isalpha() for c in found) > 1:
            return found.lower()
        new = flip_first(found)
        return new if new != found else None
    return ""


def content_words(text: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e in words_in(text) if PLAIN_WORD.fullmatch(text[s:e]) and len(text[s:e]) >= 4
            and text[s:e].islower()]


def insertion_families(text: str, phrase: str, rng: random.Random) -> list[Family]:
    """Add occurrences of ``phrase``: in place of a word it is a synonym of, in place of other
    content words (from the end, at random), or inserted before a sentence's final punctuation."""
    fams = []
    target = phrase.lower()
    swaps = [(s, e) for s, e in words_in(text) if _SYNONYMS.get(text[s:e].lower()) == target]
    content = [w for w in content_words(text) if text[w[0] : w[1]].lower() != target]
    shuffled = list(content)
    rng.shuffle(shuffled)
    for order in (swaps + content[::-1], swaps + shuffled):

        def replace(k: int, order: list[tuple[int, int]] = order) -> str | None:
            if k > len(order):
                return None
            return apply_edits(text, [(s, e, match_case(text[s:e], phrase)) for s, e in order[:k]])

        fams.append(Family(replace, len(order)))
    for p in pad_points(text, rng)[:3]:
        fams.append(Family(lambda k, p=p: text[:p] + (" " + phrase) * k + text[p:], 256))
    return fams


def nonblank_first(phrases: Sequence[str], limit: int = 4) -> list[str]:
    return [p for p in phrases if p.strip()][:limit]


def other_value(value: str, taken: Sequence[str]) -> str | None:
    """A value like ``value`` that is not in ``taken``: the next free letter, a digit moved by one."""
    folded = [t.strip().casefold() for t in taken]
    if len(value) == 1 and value.isalpha():
        for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            cand = ch if value.isupper() else ch.lower()
            if cand.casefold() not in folded:
                return cand
    digits = [m.start() for m in re.finditer(r"\d", value)]
    for pos in digits[::-1][:1] + digits[:1]:
        for step in range(1, 10):
            cand = value[:pos] + str((int(value[pos]) + step) % 10) + value[pos + 1 :]
            if cand.casefold() not in folded:
                return cand
    return None
