"""Programmatic single-constraint corruptors: targeted negatives for DPO pairs.

VCIFBench §3.4 builds part of its DPO split by corrupting *one* constraint of a verified chosen
response while keeping the rest of the answer (an LLM does it there). For every rule- and
hybrid-route type in :data:`ifpo.verifiers.constraints.REGISTRY` this module does the same
programmatically: a corruptor takes the chosen response (which passes the constraint), the
constraint's resolved params and a seeded :class:`random.Random`, and returns candidate rejected
responses, most minimal first, each meant to break exactly that constraint and nothing else.
Judge-route types have no corruptor here (see :func:`supported`); the LLM corruptor handles them.

How a corruptor works: it proposes small edits (drop a closing brace, pad a sentence with short
filler words, split or merge sentences, unbullet an item, insert a forbidden word, ...) and, for
counts, *searches* the smallest edit that crosses the bound, using the type's own registered
checker as the oracle, so that a word or a sentence is counted exactly as the verifier counts it
(DESIGN.md: a verdict is computed one way in one place). Every returned candidate therefore fails
the target constraint; whether it leaves the item's *other* constraints alone is for the pair
builder to verify with the item in hand, which is why a corruptor offers several edits of
different kinds (e.g. padding inside a sentence keeps the sentence count, merging two sentences
keeps the word count).

Usage::

    rng = random.Random(0)
    corrupt_candidates("word_count", response, {"min_count": 20, "max_count": 40}, rng)

Determinism: the candidates depend only on (type, response, params, rng state); no set of strings
is ever iterated, so results do not change with ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import ConstraintType, UnknownNameError, resolve_params
from ifpo.verifiers.text import find_phrase, list_items, normalize_quotes, strip_code_fences

__all__ = [
    "CORRUPTORS",
    "Corruptor",
    "corrupt_candidates",
    "corruptor",
    "get_corruptor",
    "supported",
]

CorruptFn = Callable[[str, Mapping[str, Any], random.Random, ConstraintType], list[str]]


@dataclass(frozen=True)
class Corruptor:
    """A registered corruptor for one constraint type.

    Calling it with ``(response, resolved_params, rng)`` returns the distinct candidates that fail
    the type's checker, never the response itself or an empty string, smallest edit first.
    """

    type_id: str
    fn: CorruptFn

    @property
    def doc(self) -> str:
        return self.fn.__doc__ or ""

    def __call__(self, response: str, params: Mapping[str, Any], rng: random.Random) -> list[str]:
        ctype = REGISTRY.get(self.type_id)
        raw = self.fn(response, params, rng, ctype)
        return _finish(response, raw, _breaker(ctype, params))


#: type id -> corruptor, filled by :func:`corruptor` below (one explicit entry per type).
CORRUPTORS: dict[str, Corruptor] = {}


def corruptor(*type_ids: str) -> Callable[[CorruptFn], CorruptFn]:
    """Register ``fn`` as the corruptor of ``type_ids`` (several types may share one function).

    The function receives ``(response, params, rng, ctype)``; ``ctype`` tells a shared function
    which type it is corrupting and gives it the checker to search with.
    """

    def deco(fn: CorruptFn) -> CorruptFn:
        for type_id in type_ids:
            ctype = REGISTRY.get(type_id)  # an unknown id fails at import, with suggestions
            if ctype.route == "judge":
                raise ValueError(f"{type_id} is judge-route: it gets no programmatic corruptor")
            if type_id in CORRUPTORS:
                raise ValueError(f"corruptor for {type_id!r} is registered twice")
            CORRUPTORS[type_id] = Corruptor(type_id, fn)
        return fn

    return deco


def supported(type_id: str) -> bool:
    """Whether ``type_id`` (or its alias) has a programmatic corruptor; judge types never do.

    >>> supported("word_count"), supported("tone")
    (True, False)
    """
    if type_id not in REGISTRY:
        return False
    return REGISTRY.get(type_id).id in CORRUPTORS


def get_corruptor(type_id: str) -> Corruptor:
    """The corruptor of ``type_id``; an unknown or judge-route id raises ``KeyError`` naming the
    closest ids that have one.

    >>> get_corruptor("word_count").type_id
    'word_count'
    """
    if type_id in REGISTRY:
        ctype = REGISTRY.get(type_id)
        if ctype.id in CORRUPTORS:
            return CORRUPTORS[ctype.id]
        if ctype.route == "judge":
            raise UnknownNameError(
                f"{type_id!r} is judge-route: it has no programmatic corruptor (use the LLM corruptor)"
            )
    close = difflib.get_close_matches(type_id, list(CORRUPTORS), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownNameError(f"no corruptor for {type_id!r}{hint} ({len(CORRUPTORS)} types have one)")


def corrupt_candidates(
    ctype: ConstraintType | str,
    response: str,
    params: Mapping[str, Any] | None,
    rng: random.Random,
) -> list[str]:
    """Candidates breaking constraint ``ctype`` (a type or its id) in ``response``, minimal first.

    ``params`` are resolved (defaults filled, validated) first; a missing required one raises
    :class:`~verifiers.registry.MissingParamError` as for the checker. Every candidate fails the
    type's checker; it may be an empty list when the corruptor finds no edit that does.

    >>> corrupt_candidates("punctuation:no_comma", "Red and blue.", {}, random.Random(0))[0]
    'Red, and blue.'
    """
    if isinstance(ctype, str):
        ctype = REGISTRY.get(ctype)
    if not isinstance(response, str):
        raise TypeError(f"{ctype.id}: response must be str, got {type(response).__name__}")
    resolved = resolve_params(ctype, params)
    return get_corruptor(ctype.id)(response, resolved, rng)


# =============================================================================================
# Candidate bookkeeping and the checker oracle


def _breaker(ctype: ConstraintType, params: Mapping[str, Any]) -> Callable[[str], bool]:
    checker = ctype.checker
    if checker is None:
        raise ValueError(f"{ctype.id} is judge-route: there is no checker to corrupt against")

    def breaks(text: str) -> bool:
        return bool(text.strip()) and not checker(text, params).passed

    return breaks


def _edit_size(a: str, b: str) -> int:
    """Characters inserted + deleted to turn ``a`` into ``b`` (cheap bound on long texts)."""
    if len(a) + len(b) > 8000:
        prefix = len(_common_prefix(a, b))
        suffix = len(_common_prefix(a[prefix:][::-1], b[prefix:][::-1]))
        return len(a) + len(b) - 2 * (prefix + suffix)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def _finish(response: str, raw: Iterable[str | None], breaks: Callable[[str], bool]) -> list[str]:
    seen: list[str] = []
    for cand in raw:
        if not cand or not cand.strip() or cand == response or cand in seen:
            continue
        if breaks(cand):
            seen.append(cand)
    # stable sort: among equal edit sizes, the corruptor's own preference order stays
    return sorted(seen, key=lambda c: _edit_size(response, c))


def _search(make: Callable[[int], str | None], kmax: int, breaks: Callable[[str], bool]) -> str | None:
    """The text ``make(k)`` for the smallest ``k`` in ``1..kmax`` that breaks, found by doubling
    then bisection (edits are monotone: more padding never brings a count back into bounds).
    ``make`` returns None when it cannot do ``k`` edits."""
    lo, k, hit = 0, 1, None
    while k <= kmax:
        text = make(k)
        if text is None:
            break
        if breaks(text):
            hit = (k, text)
            break
        lo, k = k, k * 2
    if hit is None:
        if k > kmax and lo < kmax:  # the last doubling overshot kmax: try kmax itself
            text = make(kmax)
            if text is not None and breaks(text):
                hit = (kmax, text)
        if hit is None:
            return None
    hi, best = hit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        text = make(mid)
        if text is not None and breaks(text):
            hi, best = mid, text
        else:
            lo = mid
    return best


class Family(NamedTuple):
    """A monotone family of edits: ``make(k)`` applies ``k`` of them (None if fewer exist)."""

    make: Callable[[int], str | None]
    kmax: int


def _search_all(families: Iterable[Family], breaks: Callable[[str], bool]) -> list[str]:
    out = []
    for fam in families:
        if fam.kmax >= 1:
            hit = _search(fam.make, fam.kmax, breaks)
            if hit is not None:
                out.append(hit)
    return out


# =============================================================================================
# Text primitives


Edit = tuple[int, int, str]  # replace text[start:end] with the string


def _apply(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (overlapping ones after the first are dropped)."""
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            continue
        parts += [text[pos:start], new]
        pos = end
    return "".join(parts) + text[pos:]


def _style(text: str) -> str:
    """``upper`` (no lowercase letter), ``lower`` (no uppercase letter) or ``mixed``."""
    has_upper = any(c.isupper() for c in text)
    has_lower = any(c.islower() for c in text)
    if has_upper and not has_lower:
        return "upper"
    if not has_upper:
        return "lower"
    return "mixed"


def _styled(words: str, style: str) -> str:
    return words.upper() if style == "upper" else words


def _cap(word: str, style: str = "mixed") -> str:
    """Capitalise the first letter unless the text is all lowercase (then keep it)."""
    if style == "lower" or not word:
        return word
    return word[:1].upper() + word[1:]


def _flip_first(word: str) -> str:
    """Flip the case of the first cased letter: ``Notice`` -> ``notice``, ``red`` -> ``Red``."""
    for i, ch in enumerate(word):
        if ch.isalpha() and ch.lower() != ch.upper():
            return word[:i] + (ch.lower() if ch.isupper() else ch.upper()) + word[i + 1 :]
    return word


# Filler for padding a word budget: words of at most three letters, no commas, no contractions,
# no capitals, so that style, lexical-diversity and punctuation constraints keep their verdict.
_FILLER_UNITS = ("as you can see", "and so on", "all the way", "for now", "as it is", "and so on too")


def _filler(k: int, offset: int, style: str) -> str:
    words: list[str] = []
    i = offset
    while len(words) < k:
        words.extend(_FILLER_UNITS[i % len(_FILLER_UNITS)].split())
        i += 1
    return _styled(" ".join(words[:k]), style)


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
_LETTER_WORDS = "banana bubble accept added free egg giggle high jinx kick lull mummy noon pop quiz error sass tattoo unusual valve wow box yay jazz".split()

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_PLAIN_WORD = re.compile(r"[A-Za-z]+")


class Sent(NamedTuple):
    """A sentence: ``text[start:end]`` is its content, ``text[end:stop]`` its final punctuation."""

    start: int
    end: int
    stop: int


_SENT_PUNCT = re.compile(r"[.!?。！？]+[\"'”’)\]]*(?=\s|$)")
_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "no.", "st.")
_MARKERISH = re.compile(r"\s*(?:[-*+•·]\s*)?(?:\d+|[A-Za-z])")  # "1." / "A." are not sentences


def _sentences(text: str) -> list[Sent]:
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


def _words_in(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    end = len(text) if end is None else end
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text, start, end)]


def _longest_first(text: str, sents: Sequence[Sent]) -> list[Sent]:
    return sorted(sents, key=lambda s: -len(_words_in(text, s.start, s.end)))


def _gap_is_same_line(text: str, a: int, b: int) -> bool:
    return "\n" not in text[a:b]


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, newline excluded."""
    spans, pos = [], 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _delete(text: str, spans: Iterable[tuple[int, int]]) -> str:
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
    return _apply(text, edits)


def _phrase_regex(phrase: str, *, ignore_case: bool, whole_word: bool = True) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(p) for p in phrase.split())
    if whole_word and phrase[:1].isalnum():
        body = r"(?<![^\W_])" + body
    if whole_word and phrase[-1:].isalnum():
        body = body + r"(?![^\W_])"
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def _match_case(template: str, word: str) -> str:
    """``word`` in the letter case of ``template`` (UPPER, Capitalised or as given)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _synonym(word: str) -> str | None:
    syn = _SYNONYMS.get(word.lower())
    return _match_case(word, syn) if syn else None


def _body(response: str) -> tuple[str, int]:
    """The response without one surrounding code fence, and its offset in the response."""
    body = strip_code_fences(response)
    return body, max(response.find(body), 0)


def _with_body(response: str, body: str, offset: int, new_body: str) -> str:
    return response[:offset] + new_body + response[offset + len(body) :]


# =============================================================================================
# Edit families for counts (words, sentences, paragraphs, lines, list items)


def _pad_points(text: str, rng: random.Random) -> list[int]:
    """Where filler words go: before the final punctuation of the longest sentence (so no new
    sentence appears), after a word in the middle of it (inside a JSON string, a list item or a
    table cell), at the end of the first and last sentences, and after a random word."""
    sents = _sentences(text)
    points: list[int] = []
    ordered = _longest_first(text, sents)
    with_punct = [s for s in ordered if s.stop > s.end]
    if with_punct:
        points.append(with_punct[0].end)
    inner = [e for _, e in _words_in(text) if re.match(r" [^\W\d_]", text[e : e + 2])]
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


def _removable_words(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Whole lowercase (or, in an all-caps text, uppercase) words between two spaces: deleting
    one with its space touches no punctuation, number or proper noun."""
    upper = _style(text) == "upper"
    out = []
    for start, end in _words_in(text, lo, hi):
        word = text[start:end]
        if not _PLAIN_WORD.fullmatch(word) or (word.isupper() if not upper else not word.isupper()):
            continue
        if start > 0 and text[start - 1] == " " and text[end : end + 1] == " ":
            out.append((start, end))
    return out


def _interleave(groups: Sequence[Sequence[Any]]) -> list[Any]:
    out, i = [], 0
    while any(i < len(g) for g in groups):
        out.extend(g[i] for g in groups if i < len(g))
        i += 1
    return out


def _word_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by filler words at each pad point; underflow by deleting words (from the longest
    sentence, from every sentence in turn, at random) and then whole sentences."""
    style, offset = _style(text), rng.randrange(len(_FILLER_UNITS))
    fams = [
        Family(lambda k, p=p: text[:p] + " " + _filler(k, offset, style) + text[p:], 1 << 14)
        for p in _pad_points(text, rng)
    ]
    sents = _sentences(text)
    longest = _longest_first(text, sents)
    per_sentence = [list(reversed(_removable_words(text, s.start, s.end))) for s in sents]
    orders = []
    if longest:
        orders.append(list(reversed(_removable_words(text, longest[0].start, longest[0].end))))
    orders.append(_interleave(per_sentence))
    shuffled = _removable_words(text)
    rng.shuffle(shuffled)
    orders.append(shuffled)
    for order in orders:
        fams.append(Family(lambda k, o=order: _delete(text, o[:k]) if k <= len(o) else None, len(order)))
    fams += _sentence_drop_dup_families(text, sents)
    return fams


def _drop_order(n: int) -> list[int]:
    """Sentence/paragraph indices to drop: inner ones from the end first, then the last, then the
    first (openings and closings are often constrained themselves)."""
    inner = list(range(n - 2, 0, -1))
    return inner + ([n - 1] if n > 1 else []) + [0]


def _sentence_drop_dup_families(text: str, sents: Sequence[Sent]) -> list[Family]:
    if not sents:
        return []
    order = _drop_order(len(sents))

    def drop(k: int) -> str | None:
        if k >= len(sents):
            return None
        return _delete(text, [(sents[i].start, sents[i].stop) for i in order[:k]])

    target = _longest_first(text, [s for s in sents if s.stop > s.end] or list(sents))[0]

    def dup(k: int) -> str:
        copy = text[target.start : target.stop]
        return text[: target.stop] + (" " + copy) * k + text[target.stop :]

    return [Family(drop, len(sents) - 1), Family(dup, 512)]


_CONJ = re.compile(r" (?=(?:and|then|while|but|so|where|which|because|before|after|until)\b)")


def _split_edits(text: str, sents: Sequence[Sent], style: str, *, newline: bool = False) -> list[Edit]:
    """Edits each splitting one sentence in two: at ", " first, then before a conjunction, then
    between two words in the middle. With ``newline`` the break is a line break instead."""
    commas, conjs, spaces = [], [], []
    for s in sents:
        seg = text[s.start : s.end]
        for m in re.finditer(r", (?=[^\W\d_])", seg):
            commas.append(s.start + m.start())
        for m in _CONJ.finditer(seg):
            conjs.append(s.start + m.start())
        gaps = [s.start + m.start() for m in re.finditer(r"(?<=[^\W\d_]) (?=[^\W\d_])", seg)]
        inner = gaps[1:-1] if len(gaps) >= 4 else gaps
        if inner:
            mid = gaps[len(gaps) // 2]
            spaces.extend(sorted(inner, key=lambda g, m=mid: abs(g - m)))
    edits: list[Edit] = []
    taken: list[int] = []
    for pos in commas + conjs + spaces:
        if any(abs(pos - t) < 4 for t in taken):
            continue
        taken.append(pos)
        width = 2 if text[pos] == "," else 1
        nxt = text[pos + width]
        joint = "\n" if newline else ". "
        if newline:
            edits.append((pos, pos + width + 1, ("." if width == 2 else "") + joint + nxt))
        else:
            edits.append((pos, pos + width + 1, joint + _cap(nxt, style)))
    return edits


def _merge_edits(text: str, sents: Sequence[Sent], style: str, *, across_lines: bool) -> list[Edit]:
    """Edits each joining a sentence to the next with "; " (words unchanged)."""
    edits: list[Edit] = []
    for a, b in zip(sents, sents[1:]):
        same = _gap_is_same_line(text, a.stop, b.start)
        if same == across_lines or (same and a.stop == a.end):
            continue
        if across_lines and (list_items(text[a.start : a.stop]) or list_items(text[b.start : b.stop + 1])):
            continue
        closers = "".join(c for c in text[a.end : a.stop] if c not in ".!?。！？")
        word = re.match(r"[^\W\d_]+", text[b.start :])
        first = text[b.start]
        if word and style == "mixed" and word.group() != "I" and word.group()[1:].islower():
            first = first.lower()
        edits.append((a.end, b.start + 1, closers + "; " + first))
    return edits


def _sentence_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by splitting sentences (words unchanged) or repeating one; underflow by merging
    neighbours with "; " (same line, then across lines) or dropping sentences."""
    style, sents = _style(text), _sentences(text)
    splits = _split_edits(text, sents, style)
    shuffled = list(splits)
    rng.shuffle(shuffled)
    merges = _merge_edits(text, sents, style, across_lines=False)
    line_merges = _merge_edits(text, sents, style, across_lines=True)
    fams = [
        Family(lambda k, e=edits: _apply(text, e[:k]) if k <= len(e) else None, len(edits))
        for edits in (splits, shuffled, merges, list(reversed(merges)), merges + line_merges)
    ]
    return fams + _sentence_drop_dup_families(text, sents)


_PARA_SEP = re.compile(r"\n[ \t]*\n\s*")


def _paragraph_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by breaking a paragraph at a sentence or line boundary (words and sentences
    unchanged) or repeating one; underflow by joining paragraphs (keeping the line break, or
    with a space) or dropping one."""
    sents = _sentences(text)
    splits: list[Edit] = []
    for a, b in zip(sents, sents[1:]):
        gap = text[a.stop : b.start]
        if not _PARA_SEP.search(gap) and a.stop > a.end:
            splits.append((a.stop, b.start, "\n\n"))
    for m in re.finditer(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)", text):
        splits.append((m.start(), m.end(), "\n\n"))
    splits.sort(key=lambda e: -e[0])
    seps = list(_PARA_SEP.finditer(text))
    joins_line = [(m.start(), m.end(), "\n") for m in reversed(seps)]
    joins_space = [(m.start(), m.end(), " ") for m in reversed(seps)]
    paras = [(m.start(), m.end()) for m in re.finditer(r"\S(?:.|\n(?![ \t]*\n))*", text)]

    def drop(k: int) -> str | None:
        if k >= len(paras):
            return None
        order = _drop_order(len(paras))[:k]
        edits = []
        for i in order:
            start, end = paras[i]
            if i + 1 < len(paras):
                end = paras[i + 1][0]
            elif i > 0:
                start = paras[i - 1][1]
            edits.append((start, end, ""))
        return _apply(text, edits)

    def dup(k: int) -> str | None:
        if not paras:
            return None
        start, end = paras[-2] if len(paras) > 1 else paras[-1]
        return text[:end] + ("\n\n" + text[start:end]) * k + text[end:]

    fams = [
        Family(lambda k, e=edits: _apply(text, e[:k]) if k <= len(e) else None, len(edits))
        for edits in (splits, joins_line, joins_space)
    ]
    return fams + [Family(drop, len(paras) - 1), Family(dup, 256)]


def _line_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by breaking a line between two sentences (or inside one) or repeating a line;
    underflow by joining lines with a space or dropping one."""
    style, sents = _style(text), _sentences(text)
    breaks: list[Edit] = []
    for a, b in zip(sents, sents[1:]):
        if _gap_is_same_line(text, a.stop, b.start) and a.stop > a.end:
            breaks.append((a.stop, b.start, "\n"))
    breaks += _split_edits(text, sents, style, newline=True)
    joins = [(m.start(), m.end(), " ") for m in re.finditer(r"(?<=\S)[ \t]*\n[ \t]*(?=\S)", text)]
    joins.reverse()
    lines = [i for i, (s, e) in enumerate(_line_spans(text)) if text[s:e].strip()]
    spans = _line_spans(text)

    def drop(k: int) -> str | None:
        if k >= len(lines):
            return None
        order = [lines[i] for i in _drop_order(len(lines))[:k]]
        return _delete(text, [spans[i] for i in order])

    def dup(k: int) -> str | None:
        if not lines:
            return None
        s, e = spans[lines[-2] if len(lines) > 1 else lines[-1]]
        return text[:e] + ("\n" + text[s:e]) * k + text[e:]

    fams = [
        Family(lambda k, ed=edits: _apply(text, ed[:k]) if k <= len(ed) else None, len(edits))
        for edits in (breaks, joins)
    ]
    return fams + [Family(drop, len(lines) - 1), Family(dup, 256)]


def _char_families(text: str, rng: random.Random) -> list[Family]:
    """Word families plus, for CJK text without spaces, deleting characters before the final
    punctuation of the longest sentence."""
    fams = _word_families(text, rng)
    longest = _longest_first(text, _sentences(text))
    if longest:
        s = longest[0]
        fams.append(Family(lambda k: text[: s.end - k] + text[s.end :] if k < s.end - s.start else None,
                           s.end - s.start - 1))
    return fams


# ---------------------------------------------------------------------------------------------
# List items


_NUM_MARK = re.compile(r"^(\s*)(\d+)([.)])")


def _bump_label(line: str, ordinal: int, new_ordinal: int) -> str:
    """Renumber a copied list line: the marker and a leading label number ("Step 4:")."""
    m = _NUM_MARK.match(line)
    if m:
        line = f"{m.group(1)}{new_ordinal}{m.group(3)}" + line[m.end() :]
        head = m.end() - len(m.group(2)) + len(str(new_ordinal))
    else:
        head = len(line) - len(line.lstrip()) + 2
    rest = re.sub(rf"(?<!\d){ordinal}(?!\d)", str(new_ordinal), line[head : head + 30], count=1)
    return line[:head] + rest + line[head + 30 :]


def _item_label(text: str) -> str:
    """A leading label of an item ("Step 3:", "**Gone:**"), or ''."""
    m = re.match(r"^(\**[^\W\d_][\w ]{0,20}?(?: ?\d+)?\s*:\**)\s", text)
    return m.group(1) if m else ""


def _item_families(text: str, rng: random.Random, kinds: Sequence[str] = ("bullet", "numbered"),
                   *, grow: bool = True) -> list[Family]:
    """Overflow by repeating the last item (renumbered) or adding a short filler item (unless not
    ``grow``); underflow by dropping items from the end, merging an item into the one before it,
    or unlisting items; both ways by converting items to the other list kind."""
    items = [i for i in list_items(text) if i.kind in kinds]
    if not items:
        return []
    lines = text.split("\n")
    style = _style(text)
    last = items[-1]
    n = len(items)

    def rebuild(new_lines: list[str]) -> str:
        return "\n".join(new_lines)

    def dup(k: int) -> str:
        copies = [_bump_label(lines[last.line], n, n + j) for j in range(1, k + 1)]
        return rebuild(lines[: last.line + 1] + copies + lines[last.line + 1 :])

    label = _item_label(last.text)
    marker_line = lines[last.line]
    marker_end = marker_line.find(last.text)

    def filler_item(k: int) -> str:
        new = []
        for j in range(1, k + 1):
            head = _bump_label(marker_line[:marker_end] + label, n, n + j)
            new.append(head + (" " if label else "") + _filler(3, j, style))
        return rebuild(lines[: last.line + 1] + new + lines[last.line + 1 :])

    def drop(k: int) -> str | None:
        if k >= n:
            return None
        gone = {i.line for i in items[n - k :]}
        return rebuild([ln for j, ln in enumerate(lines) if j not in gone])

    def merge(k: int) -> str | None:
        if k >= n:
            return None
        new = list(lines)
        for idx in range(n - 1, n - 1 - k, -1):
            prev, cur = items[idx - 1], items[idx]
            new[prev.line] = new[prev.line].rstrip().rstrip(".") + "; " + cur.text
            new[cur.line] = None  # type: ignore[call-overload]
        return rebuild([ln for ln in new if ln is not None])

    def unlist(k: int, order: Sequence[Any]) -> str | None:
        if k > len(order):
            return None
        new = list(lines)
        for item in order[:k]:
            new[item.line] = item.text
        return rebuild(new)

    def convert(k: int) -> str | None:
        if k > n:
            return None
        new = list(lines)
        for j, item in enumerate(items[n - k :], start=n - k + 1):
            indent = lines[item.line][: len(lines[item.line]) - len(lines[item.line].lstrip())]
            mark = "-" if item.kind == "numbered" else f"{j}."
            new[item.line] = f"{indent}{mark} {item.text}"
        return rebuild(new)

    backwards = list(reversed(items))
    growing = [Family(dup, 256), Family(filler_item, 256)] if grow else []
    return growing + [
        Family(drop, n - 1),
        Family(merge, n - 1),
        Family(lambda k: unlist(k, backwards), n),
        Family(lambda k: unlist(k, items), n),
        Family(convert, n),
    ]



# =============================================================================================
# Corruptors: counts and budgets


@corruptor("word_count", "response_length_constraint", "length_constraints:number_words")
def corrupt_word_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Overflow a word budget with short filler words inside an existing sentence (the sentence
    count stays), or underflow it by deleting words, then whole sentences; the smallest number
    of words that crosses the bound, counted by the type's own checker.

    Example (``word_count``, 3 to 5 words): ``"A red ball rolls."`` ->
    ``"A red ball rolls for now."`` (the filler words depend on ``rng``); with at least 4 words
    -> ``"A red rolls."``.
    """
    unit = str(params.get("unit", "word"))
    families = _word_families if unit in ("word", "words") else _char_families
    return _search_all(families(response, rng), _breaker(ctype, params))


@corruptor("sentence_count", "length_constraints:number_sentences")
def corrupt_sentence_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Split a sentence at a comma or before a conjunction (the words stay), or merge two
    sentences with "; "; repeating or dropping a sentence are the fallbacks.

    Example (``sentence_count``, exactly 2): ``"It rains, so we wait. Then we go."`` ->
    ``"It rains. So we wait. Then we go."`` or ``"It rains, so we wait; then we go."``.
    """
    return _search_all(_sentence_families(response, rng), _breaker(ctype, params))


@corruptor("paragraph_count", "paragraph_count_constraint")
def corrupt_paragraph_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a paragraph in two at a sentence boundary (words and sentences stay), or join two
    paragraphs into one keeping the line break; repeating or dropping a paragraph are fallbacks.

    Example (exactly 2): ``"One. Two.\\n\\nThree."`` -> ``"One.\\n\\nTwo.\\n\\nThree."`` or
    ``"One. Two.\\nThree."``.
    """
    return _search_all(_paragraph_families(response, rng), _breaker(ctype, params))


@corruptor("item_count")
def corrupt_item_budget(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat the last item (renumbered, label number bumped) or add a filler item; drop, merge
    or unbullet items; or turn items into the other list kind.

    Example (exactly 2): ``"1. Step 1: cut\\n2. Step 2: fry"`` ->
    ``"1. Step 1: cut\\n2. Step 2: fry\\n3. Step 3: fry"``.
    """
    return _search_all(_item_families(response, rng), _breaker(ctype, params))


@corruptor("list_item_count_constraint")
def corrupt_list_entries(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """As ``item_count`` for Markdown lists; for a JSON array, repeat or drop an element; for
    line-per-entry answers, repeat or drop a line; for comma-separated entries, repeat or drop one.

    Example (exactly 3): ``"- a\\n- b\\n- c"`` -> ``"- a\\n- b\\n- c\\n- c"``; ``'["a", "b"]'`` (exactly 2)
    -> ``'["a", "b", "b"]'``.
    """
    breaks = _breaker(ctype, params)
    body, offset = _body(response)
    fams = _item_families(response, rng)
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if isinstance(value, list) and value:
        style = _json_style(body)

        def dump(v: list[Any]) -> str:
            return _with_body(response, body, offset, json.dumps(v, **style))

        fams.append(Family(lambda k: dump(value + [value[-1]] * k), 256))
        fams.append(Family(lambda k: dump(value[:-k]) if k < len(value) else None, len(value) - 1))
    if not fams:
        fams = _line_families(response, rng)
        entries = list(re.finditer(r"[,;，；、]\s*", body))
        if entries:
            last = entries[-1]
            tail = body[last.end() :]
            fams.append(Family(lambda k: _with_body(response, body, offset, body + (last.group() + tail) * k), 64))
            fams.append(Family(lambda k: _with_body(response, body, offset, body[: entries[-k].start()])
                               if k <= len(entries) else None, len(entries)))
    return _search_all(fams, breaks)


@corruptor("vsys_output_length")
def corrupt_output_length(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Cross the length bound in the constraint's unit with the edits of the matching count
    corruptor (filler words, sentence splits/merges, paragraph breaks/joins, line breaks/joins).

    Example (``unit: sentences``, at most 2): ``"It is red. It is blue."`` ->
    ``"It is. Red. It is blue."`` or ``"It is red. It is red. It is blue."``.
    """
    families = {
        "characters": _char_families,
        "words": _word_families,
        "sentences": _sentence_families,
        "lines": _line_families,
        "paragraphs": _paragraph_families,
    }[params["unit"]]
    return _search_all(families(response, rng), _breaker(ctype, params))


# =============================================================================================
# Corruptors: list formats


def _add_text_line(text: str, style: str) -> list[str]:
    line = _styled("That is all.", style) if style != "lower" else "that is all."
    return [text.rstrip() + "\n" + line, line + "\n" + text.lstrip()]


@corruptor("bullet_list", "numbered_list", "ordered_list_output")
def corrupt_list_format(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a list-format constraint: unbullet/unnumber items until too few remain, turn items
    into the other (disallowed) kind, add a line of text outside the list when only items are
    allowed, skip a number in a sequential numbered list, or run the items together on one line.

    Example (``numbered_list``, sequential): ``"1. cut\\n2. fry\\n3. serve"`` ->
    ``"1. cut\\n2. fry\\n4. serve"``; (``bullet_list`` without text) ``"- A cat\\n- A dog"`` ->
    ``"- A cat\\n- A dog\\nThat is all."``; (``ordered_list_output``, 2 items) the items run
    together on one line, ``"1. A cat 2. A dog"``.
    """
    breaks = _breaker(ctype, params)
    items = list_items(response)
    lines = response.split("\n")
    out: list[str | None] = []
    numbered = [i for i in items if i.kind == "numbered"]
    if numbered:
        item = numbered[-1]
        new = list(lines)
        new[item.line] = _NUM_MARK.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1}{m.group(3)}", new[item.line], count=1)
        out.append("\n".join(new))
    if params.get("allow_text") is False:
        out += _add_text_line(response, _style(response))
    if items:
        joined = [f"{j}. {item.text}" for j, item in enumerate(items, start=1)]
        first, last = items[0].line, items[-1].line
        out.append("\n".join(lines[:first] + [" ".join(joined)] + lines[last + 1 :]))
    out += _search_all(_item_families(response, rng, grow=False), breaks)  # min_items has no maximum
    return [c for c in out if c]


# =============================================================================================
# Corruptors: JSON, CSV, tables, Markdown


def _json_style(body: str) -> dict[str, Any]:
    """json.dumps options that reproduce ``body``'s layout as closely as possible."""
    if "\n" in body.strip():
        m = re.search(r"\n( +)\S", body)
        return {"indent": len(m.group(1)) if m else 2, "ensure_ascii": False}
    compact = not re.search(r"[,:] ", body)
    return {"separators": (",", ":") if compact else (", ", ": "), "ensure_ascii": False}


def _first_scalar(value: Any) -> Any:
    if isinstance(value, dict):
        for v in value.values():
            found = _first_scalar(v)
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        return next((s for v in value if (s := _first_scalar(v)) is not None), None)
    return value


def _lead_line(style: str) -> tuple[str, str]:
    lead = "Result:" if style == "mixed" else ("RESULT:" if style == "upper" else "result:")
    tail = "That is all." if style == "mixed" else ("THAT IS ALL." if style == "upper" else "that is all.")
    return lead, tail


def _json_variants(response: str, extra_keys: Sequence[str] = ()) -> list[str]:
    """Broken JSON: a closing bracket dropped, a trailing comma, text before/after it, the other
    top-level type, a key renamed, or an extra (e.g. forbidden) key with a copied value."""
    body, offset = _body(response)
    stripped = body.rstrip()
    out: list[str] = []

    def put(new_body: str) -> None:
        out.append(_with_body(response, body, offset, new_body))

    if stripped.endswith(("}", "]")):
        put(stripped[:-1])
        put(stripped[:-1].rstrip() + "," + stripped[-1])
    lead, tail = _lead_line(_style(body))
    put(f"{lead} {body}")
    put(f"{body}\n{tail}")
    try:
        value = json.loads(body)
    except ValueError:
        return out
    style = _json_style(body)
    if isinstance(value, dict):
        put(json.dumps([value], **style))
    elif isinstance(value, list):
        put(json.dumps({"items": value}, **style))
    obj = value if isinstance(value, dict) else next((v for v in value if isinstance(v, dict)), None) \
        if isinstance(value, list) else None
    if obj:
        for key in list(obj)[:4]:
            pattern = re.compile(r'"' + re.escape(key) + r'"(?=\s*:)')
            put(pattern.sub(f'"{key}_info"', body, count=1))
        copied = json.dumps(_first_scalar(obj), ensure_ascii=False)
        sep = ", " if style.get("separators", (", ",))[0] == ", " else ","
        colon = ": " if sep == ", " else ":"
        close = body.find("}") if isinstance(value, list) else body.rfind("}")
        for key in [*extra_keys, "note"]:
            if key in obj:
                continue
            inner = body[:close].rstrip()
            joiner = "" if inner.endswith("{") else sep
            put(inner + f'{joiner}"{key}"{colon}{copied}' + body[close:])
    return out


@corruptor("json", "structured_json_output", "detectable_format:json_format")
def corrupt_json(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a JSON answer: drop its closing brace, add a trailing comma, put a word before or
    after it, wrap an object in an array, rename a required key, or add a key the schema does
    not have (a forbidden key first), copying an existing value so value formats still hold.

    Example: ``'{"a": 1}'`` -> ``'{"a": 1'``, ``'result: {"a": 1}'`` (the lead word takes the
    answer's letter case), ``'{"a_info": 1}'``, ``'{"a": 1, "note": 1}'``.
    """
    return _json_variants(response, params.get("forbidden_keys") or ())


def _csv_variants(response: str, delimiter: str = ",") -> list[str]:
    """Broken CSV: a quoted cell followed by a space (invalid quoting), an extra or a missing
    field in the last row, a header cell renamed, recased or repeated, a text line on top."""
    body, offset = _body(response)
    lines = body.split("\n")
    rows = [i for i, ln in enumerate(lines) if ln.strip()]
    if len(rows) < 2:
        return []
    out: list[str] = []

    def put(new_lines: list[str]) -> None:
        out.append(_with_body(response, body, offset, "\n".join(new_lines)))

    last = rows[-1]
    cells = lines[last].split(delimiter)
    new = list(lines)
    new[last] = f'"{cells[0].strip()}" ' + delimiter + delimiter.join(cells[1:])
    put(new)
    new = list(lines)
    new[last] = lines[last] + delimiter + cells[-1].strip()
    put(new)
    if len(cells) > 1:
        new = list(lines)
        new[last] = delimiter.join(cells[:-2] + [cells[-2].rstrip() + " " + cells[-1].lstrip()])
        put(new)
    header = lines[rows[0]].split(delimiter)
    for j, cell in enumerate(header[:4]):
        for replacement in (_flip_first(cell), _synonym(cell.strip()), cell.strip() + "s"):
            if replacement and replacement != cell:
                new = list(lines)
                new[rows[0]] = delimiter.join(header[:j] + [replacement] + header[j + 1 :])
                put(new)
    if len(header) > 1:
        new = list(lines)
        new[rows[0]] = delimiter.join([header[0], header[0]] + header[2:])
        put(new)
        swapped = []
        for i, ln in enumerate(lines):
            cells = ln.split(delimiter)
            swapped.append(delimiter.join([cells[1], cells[0]] + cells[2:]) if i in rows and len(cells) > 1 else ln)
        put(swapped)
    lead, _ = _lead_line(_style(body))
    put([lead.rstrip(":") + " the table:"] + lines)
    return out


def _data_row_families(response: str, first_data: int) -> list[Family]:
    """Drop data rows from the end (a table with too few rows)."""
    lines = response.split("\n")
    data = [i for i, ln in enumerate(lines) if ln.strip() and i >= first_data]

    def drop(k: int) -> str | None:
        if k >= len(data) + 1 or k > len(data):
            return None
        gone = data[len(data) - k :]
        return "\n".join(ln for i, ln in enumerate(lines) if i not in gone)

    return [Family(drop, len(data))]


@corruptor("csv")
def corrupt_csv(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a CSV answer: invalid quoting (``"red" ,3``), a row with one field too many or too
    few, a required header column renamed, a repeated header name, a text line above the table,
    or too few data rows.

    Example: ``"color,count\\nred,3"`` -> ``'color,count\\n"red" ,3'`` or ``"color,count\\nred,3,3"``.
    """
    out = _csv_variants(response, params["delimiter"])
    first = next((i for i, ln in enumerate(response.split("\n")) if ln.strip()), 0) + 1
    return out + _search_all(_data_row_families(response, first), _breaker(ctype, params))


_DELIM_LINE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")


def _md_table_variants(response: str) -> list[str]:
    """Broken Markdown table: a cell dropped from the last row, the delimiter row removed, a
    header cell renamed or recased, a text line after the table."""
    lines = response.split("\n")
    delim = next((i for i, ln in enumerate(lines) if _DELIM_LINE.match(ln)), None)
    if delim is None or delim == 0:
        return []
    rows = [i for i in range(delim + 1, len(lines)) if "|" in lines[i]]
    out: list[str] = []

    def put(new: list[str]) -> None:
        out.append("\n".join(new))

    if rows:
        last = rows[-1]
        line = lines[last].rstrip()
        cut = line[:-1].rstrip().rfind("|") if line.endswith("|") else line.rfind("|")
        if cut > 0:
            new = list(lines)
            new[last] = line[:cut] + ("|" if line.endswith("|") else "")
            put(new)
    put(lines[:delim] + lines[delim + 1 :])
    swapped = list(lines)
    for i in [delim - 1, delim, *rows]:
        parts = lines[i].split("|")
        first = 1 if lines[i].lstrip().startswith("|") else 0
        if len(parts) > first + 2 or (len(parts) > first + 1 and not lines[i].rstrip().endswith("|")):
            parts[first], parts[first + 1] = parts[first + 1], parts[first]
            swapped[i] = "|".join(parts)
    put(swapped)
    header = lines[delim - 1]
    for m in list(re.finditer(r"[^|]+", header))[:4]:
        cell = m.group().strip()
        if not cell:
            continue
        for replacement in (_synonym(cell), _flip_first(cell), cell + "s"):
            if replacement and replacement != cell:
                new = list(lines)
                start = m.start() + m.group().find(cell)
                new[delim - 1] = header[:start] + replacement + header[start + len(cell) :]
                put(new)
    _, tail = _lead_line(_style(response))
    end = (rows[-1] if rows else delim) + 1
    put(lines[:end] + [tail] + lines[end:])
    return out


@corruptor("table_output")
def corrupt_table(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break a table answer: a row with a cell missing (or a CSV row with an extra field), no
    delimiter row, a schema column renamed or recased (``question`` -> ``Question``), or too
    few data rows.

    Example: ``"| t | e |\\n|---|---|\\n| 1 s | jump |"`` -> ``"| t | e |\\n|---|---|\\n| 1 s |"``.
    """
    lines = response.split("\n")
    delim = next((i for i, ln in enumerate(lines) if _DELIM_LINE.match(ln)), None)
    out = _md_table_variants(response) if delim is not None else _csv_variants(response)
    first = (delim + 1) if delim is not None else next((i for i, ln in enumerate(lines) if ln.strip()), 0) + 1
    return out + _search_all(_data_row_families(response, first), _breaker(ctype, params))


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
        if _DELIM_LINE.match(ln)
        else (ln.strip().strip("|").strip() if ln.strip().startswith("|") else ln)
        for ln in t.split("\n")
    ),
    "code": lambda t: re.sub(r"(?m)^\s*(?:```|~~~).*\n?", "", t).replace("`", ""),
    "link": lambda t: re.sub(r"!?\[([^\]\n]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", r"\1 (\2)", t),
    "blockquote": lambda t: re.sub(r"(?m)^(\s{0,3})>\s?", r"\1", t),
    "rule": lambda t: re.sub(r"(?m)^\s{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\n?", "", t),
}


@corruptor("markdown")
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
    words = [(s, e) for s, e in _words_in(text) if _PLAIN_WORD.fullmatch(text[s:e])]
    inner = words[3:-3] or words[1:-1] or words
    if not inner:
        return []
    picks = [inner[len(inner) // 2]]
    rest = [w for w in inner if w != picks[0]]
    rng.shuffle(rest)
    return picks + rest[: n - 1]


@corruptor("plain_text")
def corrupt_plain_text(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add Markdown to plain text: bold one word in the middle (word and sentence counts stay),
    put a word in backticks, make the first line a heading or the last line a bullet.

    Example: ``"The cat sits on the mat."`` -> ``"The cat sits **on** the mat."``.
    """
    out = [_apply(response, [(s, e, f"**{response[s:e]}**")]) for s, e in _inner_words(response, rng)]
    out += [_apply(response, [(s, e, f"`{response[s:e]}`")]) for s, e in _inner_words(response, rng, 1)]
    out.append("# " + response.lstrip())
    lines = response.rstrip().split("\n")
    if len(lines) > 1:
        out.append("\n".join(lines[:-1] + ["- " + lines[-1].lstrip()]))
    if not params.get("allow_numbered", True):
        out.append("1. " + response.lstrip())
    return out


# =============================================================================================
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
    style = _style(text)
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
    out.append(text[:start] + _flip_first(found) + text[end:])
    for m in _TOKEN.finditer(found):
        syn = _synonym(m.group())
        if syn:
            out.append(text[: start + m.start()] + syn + text[start + m.end() :])
            break
    if at_start:
        if found[:1].isupper() and style == "mixed":
            out.append(text[:start] + "So " + _flip_first(found) + text[end:])
        else:
            out.append(text[:start] + _styled("so ", style) + text[start:])
        rest = text[end:].lstrip()
        out.append(text[:start] + _cap(rest, style))
    else:
        out.append(text[:end] + " " + _styled("Thanks." if style != "lower" else "thanks.", style) + text[end:])
        out.append(text[:start].rstrip() + text[end:])
    return out


@corruptor("fixed_opening", "fixed_closing", "vsys_required_prefix", "vsys_required_suffix",
           "startend:end_checker", "combination:repeat_prompt")
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


_DECOR = re.compile(r"^\s*(?:(?:#{1,6}|>|[-*+•·]|\d+[.)])\s+)*")


@corruptor("prefix_label")
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


# =============================================================================================
# Corruptors: letter case, contractions, punctuation


def _case_targets(text: str, params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Word spans inside the letter_case scope (item text, heading text, every line, ...)."""
    scope = params.get("scope", "all")
    spans = _line_spans(text)
    if scope == "items":
        regions = [(spans[i.line][1] - len(i.text), spans[i.line][1]) for i in list_items(text)]
    elif scope == "headings":
        regions = [(s + len(m.group(0)), e) for s, e in spans if (m := re.match(r"\s{0,3}#{1,6}\s+", text[s:e]))]
    else:
        regions = [(0, len(text))]
    words = []
    for lo, hi in regions:
        words += _words_in(text, lo, hi)
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


@corruptor("letter_case", "change_case:english_capital", "change_case:english_lowercase")
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
    sents = _sentences(response)
    starts = []
    for s in sents[1:] + sents[:1]:
        m = _TOKEN.search(response, s.start, s.end)
        if m and response[m.start()].isupper() and not (len(m.group()) > 1 and m.group().isupper()):
            starts.append((m.start(), m.end()))
    out = _recase_variants(response, starts, lambda w: w[:1].lower() + w[1:], rng)
    for s in _longest_first(response, sents)[:2]:
        gaps = [m.start() for m in re.finditer(r"(?<=[^\W\d_]) (?=[a-z])", response[s.start : s.end])]
        if len(gaps) >= 2:
            pos = s.start + gaps[len(gaps) // 2]
            out.append(response[:pos] + "." + response[pos:])
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


@corruptor("no_contractions")
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
    style = _style(response)
    tail = [response[:p] + " " + _styled("and that's it", style) + response[p:] for p in _pad_points(response, rng)[:2]]
    return sites[:6] + tail


@corruptor("punctuation:no_comma")
def corrupt_no_comma(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add a comma after a word in the middle of the answer.

    Example: ``"Red and blue."`` -> ``"Red, and blue."``.
    """
    words = [(s, e) for s, e in _words_in(response) if response[e : e + 1] == " "]
    if not words:
        return [response.rstrip() + ","]
    picks = [words[0], words[len(words) // 2]]
    rng.shuffle(words)
    return [response[:e] + "," + response[e:] for s, e in dict.fromkeys(picks + words[:2])]


# =============================================================================================
# Corruptors: required, forbidden and repeated words


def _occurrence_pattern(phrase: str, *, ignore_case: bool, substring: bool = False) -> re.Pattern[str]:
    """How a checker finds ``phrase``: a whole word/phrase, or (IFEval) any word containing it."""
    if substring:
        return re.compile(r"[^\W_]*" + re.escape(phrase) + r"[^\W_]*", re.IGNORECASE if ignore_case else 0)
    return _phrase_regex(phrase, ignore_case=ignore_case)


def _replace_phrase(found: str, how: str) -> str | None:
    if how == "synonym":
        for m in _TOKEN.finditer(found):
            syn = _synonym(m.group())
            if syn:
                return found[: m.start()] + syn + found[m.end() :]
        return None
    if how == "case":
        if found.isupper() and sum(c.isalpha() for c in found) > 1:
            return found.lower()
        new = _flip_first(found)
        return new if new != found else None
    return ""


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
                        new = _replace_phrase(m.group(), how)
                        if new is None:
                            return None
                        edits.append((m.start(), m.end(), new))
                    if how == "delete":
                        return _delete(text, [(s, e) for s, e, _ in edits])
                    return _apply(text, edits)

                fams.append(Family(make, len(matches)))
    return fams


def _content_words(text: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e in _words_in(text) if _PLAIN_WORD.fullmatch(text[s:e]) and len(text[s:e]) >= 4
            and text[s:e].islower()]


def _insertion_families(text: str, phrase: str, rng: random.Random) -> list[Family]:
    """Add occurrences of ``phrase``: in place of a word it is a synonym of, in place of other
    content words (from the end, at random), or inserted before a sentence's final punctuation."""
    fams = []
    target = phrase.lower()
    swaps = [(s, e) for s, e in _words_in(text) if _SYNONYMS.get(text[s:e].lower()) == target]
    content = [w for w in _content_words(text) if text[w[0] : w[1]].lower() != target]
    shuffled = list(content)
    rng.shuffle(shuffled)
    for order in (swaps + content[::-1], swaps + shuffled):

        def replace(k: int, order: list[tuple[int, int]] = order) -> str | None:
            if k > len(order):
                return None
            return _apply(text, [(s, e, _match_case(text[s:e], phrase)) for s, e in order[:k]])

        fams.append(Family(replace, len(order)))
    for p in _pad_points(text, rng)[:3]:
        fams.append(Family(lambda k, p=p: text[:p] + (" " + phrase) * k + text[p:], 256))
    return fams


def _keep(phrases: Sequence[str], limit: int = 4) -> list[str]:
    return [p for p in phrases if p.strip()][:limit]


@corruptor("exact_word_inclusion", "required_keyword_inclusion", "keywords:existence",
           "keywords:frequency", "vsys_keyword_frequency")
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
    phrases = _keep([p.strip() for p in phrases])
    breaks = _breaker(ctype, params)
    patterns = [_occurrence_pattern(p, ignore_case=ignore_case, substring=substring) for p in phrases]
    out = _search_all(_removal_families(response, patterns), breaks)
    for phrase in phrases:
        out += _search_all(_insertion_families(response, phrase, rng), breaks)
    return out


@corruptor("exact_word_exclusion", "forbidden_keyword_exclusion", "vsys_word_blacklist", "keywords:forbidden_words")
def corrupt_forbidden_words(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Insert a forbidden word: where a word it is a synonym of stood ("disappears" ->
    "vanishes"), in place of another content word, or before a sentence's final punctuation.

    Example (``exact_word_exclusion`` "vanishes"): ``"The square disappears at 2 s."`` ->
    ``"The square vanishes at 2 s."``.
    """
    key = {"exact_word_exclusion": "phrases", "forbidden_keyword_exclusion": "keywords",
           "vsys_word_blacklist": "words", "keywords:forbidden_words": "forbidden_words"}[ctype.id]
    breaks = _breaker(ctype, params)
    out: list[str] = []
    for phrase in _keep([p.strip() for p in params[key]], 3):
        out += _search_all(_insertion_families(response, phrase, rng), breaks)
    return out


@corruptor("lexical_diversity")
def corrupt_lexical_diversity(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat a limited term beyond its limit (with ``terms: null``, the most frequent content
    words), by putting it in place of other content words or adding it to a sentence.

    Example (``terms: [soup]``, at most 1): ``"The soup is hot and tasty."`` ->
    ``"The soup is hot and soup."``.
    """
    terms = params["terms"]
    if terms is None:
        counts: dict[str, int] = {}
        for s, e in _content_words(response):
            counts[response[s:e].lower()] = counts.get(response[s:e].lower(), 0) + 1
        terms = sorted(counts, key=lambda w: -counts[w])[:3]
    breaks = _breaker(ctype, params)
    out: list[str] = []
    for term in _keep(terms, 3):
        out += _search_all(_insertion_families(response, term, rng), breaks)
    return out


@corruptor("keywords:letter_frequency")
def corrupt_letter_frequency(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add words rich in the letter (``less than``) or delete words containing it (``at least``).

    Example (letter "z", less than 2): ``"A zebra."`` -> ``"A zebra jazz."``.
    """
    letter = params["letter"].strip().lower()
    breaks = _breaker(ctype, params)
    word = max(_LETTER_WORDS, key=lambda w: w.count(letter))
    word = _styled(word, _style(response))
    fams = [Family(lambda k, p=p: response[:p] + (" " + word) * k + response[p:], 4096)
            for p in _pad_points(response, rng)[:2]]
    holders = sorted(_words_in(response), key=lambda w: -response[w[0] : w[1]].lower().count(letter))
    holders = [w for w in holders if letter in response[w[0] : w[1]].lower()]
    fams.append(Family(lambda k: _delete(response, holders[:k]) if k <= len(holders) else None, len(holders)))
    return _search_all(fams, breaks)


@corruptor("change_case:capital_word_frequency")
def corrupt_capital_words(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Uppercase lowercase words (``less than``) or lowercase ALL-CAPS words (``at least``).

    Example (less than 2): ``"A VERY good idea."`` -> ``"A VERY GOOD idea."``.
    """
    breaks = _breaker(ctype, params)
    lower = [w for w in _words_in(response) if response[w[0] : w[1]].islower()]
    caps = [w for w in _words_in(response) if response[w[0] : w[1]].isupper()]
    rng.shuffle(lower)
    fams = [
        Family(lambda k: _apply(response, [(s, e, response[s:e].upper()) for s, e in lower[:k]])
               if k <= len(lower) else None, len(lower)),
        Family(lambda k: _apply(response, [(s, e, response[s:e].lower()) for s, e in caps[::-1][:k]])
               if k <= len(caps) else None, len(caps)),
    ]
    return _search_all(fams, breaks)


# =============================================================================================
# Corruptors: Video-IFBench answer formats


def _lead_option(text: str, options: Sequence[str], ignore_case: bool) -> tuple[int, int] | None:
    lead = len(text) - len(text.lstrip(" \t\n*_`\"'“”‘’"))
    for option in sorted(options, key=len, reverse=True):
        opt = option.strip().rstrip(".。!！")
        if opt and re.match(re.escape(opt), text[lead:], re.IGNORECASE if ignore_case else 0):
            return lead, lead + len(opt)
    return None


def _other_value(value: str, taken: Sequence[str]) -> str | None:
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


@corruptor("closed_set_option_output", "detectable_format:constrained_response")
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
    style = _style(response) if len(_words_in(response)) >= 3 else "mixed"
    out: list[str] = []
    span = _lead_option(response, options, ignore_case)
    if span is None:
        found = next((o for o in options if o in response), None)
        span = (response.find(found), response.find(found) + len(found)) if found else None
    if span:
        s, e = span
        chosen = response[s:e]
        other = _other_value(chosen, options)
        if other:
            out.append(response[:s] + other + response[e:])
        if chosen.endswith("."):
            out.append(response[: e - 1] + response[e:])
        elif response[e : e + 1] == ".":
            out.append(response[:e] + response[e + 1 :])
        out.append(response[:s] + _flip_first(chosen) + response[e:])
        second = next((o for o in options if o.strip().casefold() != chosen.strip().casefold()), None)
        if second:
            out.append(response[:e] + ", " + second.strip() + response[e:])
        word = re.search(r"\b(yes|no|maybe)\b", chosen)
        if word:
            swap = {"yes": "yeah", "no": "nope", "maybe": "perhaps"}[word.group()]
            out.append(response[: s + word.start()] + swap + response[s + word.end() :])
    lead = "The answer is" if style == "mixed" else _styled("the answer is", style)
    out.append(f"{lead} {response.lstrip()}")
    out.append(response.rstrip() + " " + _styled("because it fits best.", style))
    return out


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
    return [m for m in (value + ".", _flip_first(value), value.replace(" ", ""), "~" + value) if m != value]


@corruptor("normalized_value_format")
def corrupt_value_format(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Put one value out of format: a trailing period ("0.5 s" -> "0.5 s."), its case flipped,
    its space removed, or a "~" before it; inside JSON the value is changed in place (a number
    becomes a string), so the JSON stays valid.

    Example (pattern ``\\d+\\.\\d s``): ``"2.0 s"`` -> ``"2.0 s."``; ``'{"t": "0.5 s"}'`` ->
    ``'{"t": "0.5 s."}'``.
    """
    body, offset = _body(response)
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
                out.append(_with_body(response, body, offset, new))
        return out
    if params["allow_multiple"]:
        pieces = [m for m in re.finditer(r"[^\n;；]+", body) if m.group().strip()]
        for m in pieces[::-1][:2]:
            piece = m.group().strip()
            s = m.start() + m.group().find(piece)
            for mutated in _value_mutations(piece):
                out.append(_with_body(response, body, offset, body[:s] + mutated + body[s + len(piece) :]))
        out.append(_with_body(response, body, offset, "".join(
            p.group().replace(p.group().strip(), p.group().strip() + ".") if p.group().strip() else p.group()
            for p in re.finditer(r"[^\n;；]+|[\n;；]+", body))))
        return out
    return [_with_body(response, body, offset, m) for m in _value_mutations(body.strip())]


@corruptor("label_set_restriction")
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
        for new in (_synonym(found), _match_case(found, "other")):
            if new and new.casefold() not in folded:
                out.append(response[: m.start()] + new + response[m.end() :])
        first = hits[0].group()
        if m is not hits[0] and first.casefold() != found.casefold():
            out.append(response[: m.start()] + first + response[m.end() :])
    return out


@corruptor("verbatim_speech_constraint")
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
    for new in (found.lower() if found.isupper() else _flip_first(found), _other_value(found, [found]),
                _replace_phrase(found, "synonym")):
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


@corruptor("span_localization")
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


# =============================================================================================
# Corruptors: VSysBench system-message formats


def _yaml_variants(response: str) -> list[str]:
    body, offset = _body(response)
    lines = body.split("\n")
    out = [_with_body(response, body, offset, body + "\n- " + _styled("broken item", _style(body))),
           _with_body(response, body, offset, body + "\n" + lines[0] + " ["),
           _with_body(response, body, offset, "\n".join(lines[:1] + ["   " + ln for ln in lines[1:2]] + lines[2:]))]
    for m in list(re.finditer(r"(?m)^([\w\- ]+)(?=:)", body))[:4]:
        out.append(_with_body(response, body, offset, body[: m.start()] + m.group(1) + "_info" + body[m.end() :]))
    return out


def _xml_variants(response: str) -> list[str]:
    body, offset = _body(response)
    out = []
    last = body.rstrip()
    close = re.search(r"</[^>]+>\s*$", last)
    if close:
        out.append(_with_body(response, body, offset, last[: close.start()]))
    for tag in list(dict.fromkeys(re.findall(r"<([A-Za-z_][\w.\-]*)[\s>]", body)))[:5]:
        renamed = re.sub(rf"(</?){re.escape(tag)}(?=[\s>/])", rf"\g<1>{tag}_info", body)
        out.append(_with_body(response, body, offset, renamed))
    return out


@corruptor("vsys_structured_output")
def corrupt_structured_output(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the serialization the format asks for (JSON: a closing brace dropped or a key
    renamed; YAML: a stray item or bad indentation; XML: the root's closing tag dropped or a
    required tag renamed; CSV: a row with an extra field; Markdown table: a cell dropped).

    Example (json, ``required_keys: [objects]``): ``'{"objects": []}'`` -> ``'{"objects": []'`` or
    ``'{"objects_info": []}'``.
    """
    fmt = params["format"]
    if fmt == "json":
        return _json_variants(response)
    if fmt == "yaml":
        return _yaml_variants(response)
    if fmt == "xml":
        return _xml_variants(response)
    if fmt == "csv":
        return _csv_variants(response)
    return _md_table_variants(response)


_SECTION_MARKERS = {
    "markdown_heading": re.compile(r"^(\s*)##[ \t]+(\S.*?)[ \t#]*$"),
    "bracketed_caps": re.compile(r"^(\s*)\[([A-Z0-9][A-Z0-9_ &/\-]*)\]"),
    "bold_inline": re.compile(r"^(\s*)\*\*([^*\n]+?)\*\*"),
}


@corruptor("vsys_template_sections")
def corrupt_template_sections(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the section template: demote a section marker to plain text (one section fewer),
    add a section, rename a section title, or put a line before the first section.

    Example (2 ``## `` sections): ``"## A\\nx\\n## B\\ny"`` -> ``"## A\\nx\\nB\\ny"``, or
    ``"## A\\nx\\n## B\\ny\\n\\n## Notes\\ny"``.
    """
    lines = response.split("\n")
    style = params["marker"]
    regex = _SECTION_MARKERS.get(style) or re.compile(r"^(\s*)(" + (params.get("pattern") or "(?!)") + ")")
    marks = [(i, m) for i, ln in enumerate(lines) if (m := regex.match(ln))]
    out: list[str] = []
    if not marks:
        return out

    def with_line(i: int, new: str | None) -> str:
        return "\n".join(lines[:i] + ([] if new is None else [new]) + lines[i + 1 :])

    for i, m in list(dict.fromkeys([marks[-1], marks[0]])):
        title = m.group(2).strip()
        rest = lines[i][m.end() :]
        out.append(with_line(i, m.group(1) + title.title().replace("_", " ") + (":" + rest if rest.strip() else rest)))
        new_title = _synonym(title) or ("Notes" if title.lower() != "notes" else "Remarks")
        if style == "bracketed_caps":
            new_title = new_title.upper().replace(" ", "_")
        out.append(with_line(i, lines[i][: m.start(2)] + new_title + lines[i][m.end(2) :]))
    i, m = marks[-1]
    body = next((ln for ln in lines[i + 1 :] if ln.strip()), lines[i][m.end() :].strip() or "See above.")
    extra = {"markdown_heading": "## Notes", "bracketed_caps": "[NOTES]", "bold_inline": "**Notes**"}.get(style)
    if extra:
        out.append(response.rstrip() + "\n\n" + extra + "\n" + body)
    lead, _ = _lead_line(_style(response))
    out.append(lead.rstrip(":") + " as follows.\n" + response.lstrip())
    return out


@corruptor("vsys_metadata_injection")
def corrupt_metadata(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the metadata block: rename a required field, remove the block marker, or move the
    block to the other end of the response.

    Example: ``"[META] image_type: photo [/META]\\nA car."`` ->
    ``"[META] meta_image_type: photo [/META]\\nA car."`` or ``"A car.\\n[META] image_type: photo [/META]"``.
    """
    out: list[str] = []
    for field in params["required_fields"]:
        words = re.split(r"[\s_\-]+", field.strip())
        pattern = r"[\s_\-]+".join(re.escape(w) for w in words)
        for m in list(re.finditer(rf"(?i)(?<![\w#])#?{pattern}(?=\s*[\"']?\s*[:=_])", response))[:1]:
            hashed = m.group().startswith("#")
            new = ("#" if hashed else "") + "meta_" + m.group().lstrip("#")
            out.append(response[: m.start()] + new + response[m.end() :])
    marker = params.get("marker") or ("[META]" if params.get("encoding") in (None, "bracket_block") else None)
    if marker and marker in response:
        closing = re.fullmatch(r"\[([^\]/]+)\]", marker)
        new = response.replace(marker, "", 1)
        if closing:
            new = new.replace(f"[/{closing.group(1)}]", "", 1)
        out.append(new)
    lines = response.strip().split("\n")
    blank = next((k for k, ln in enumerate(lines) if not ln.strip()), None)
    if params["position"] in ("top", "yaml_frontmatter"):
        end = 0
        if lines[0].strip() == "---":
            end = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), 0)
        elif marker and lines[0].strip() == marker or (blank and not lines[0].rstrip().endswith(("]", "}"))):
            end = (blank - 1) if blank else 0
        out.append("\n".join(lines[end + 1 :] + lines[: end + 1]))
    elif params["position"] == "end":
        start = max((k for k, ln in enumerate(lines) if not ln.strip()), default=len(lines) - 1)
        start = start + 1 if start < len(lines) - 1 and not lines[start].strip() else len(lines) - 1
        out.append("\n".join(lines[start:] + lines[:start]))
    return out


_TAG_PATTERNS = {
    "hashtag": r"(?<![\w#&/])#([^\W\d_]\w*)",
    "mention": r"(?<![\w@.])@([^\W\d]\w*(?:[.\-]\w+)*)",
}


@corruptor("vsys_dynamic_tagging")
def corrupt_tagging(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the tags: unmark a tag (``#Nike`` -> ``Nike``), change a required tag's value, add
    one tag too many, or move the tags from the end to the start (or back).

    Example (``required_tags: [ShapeCount_Six]``, at the end): ``"Six shapes. #ShapeCount_Six"`` ->
    ``"Six shapes. ShapeCount_Six"`` or ``"Six shapes. #ShapeCount"``.
    """
    syntax = params["syntax"]
    if syntax == "xml_tag":
        name = re.escape(params["tag_name"])
        regex = re.compile(rf"<{name}(?:\s[^>]*)?>(.*?)</{name}\s*>", re.DOTALL)
    elif syntax == "custom":
        regex = re.compile(params["pattern"])
    else:
        regex = re.compile(_TAG_PATTERNS[syntax])
    tags = list(regex.finditer(response))
    out: list[str] = []
    for m in list(dict.fromkeys(tags[::-1][:1] + tags[:1])):
        value = m.group(1) if regex.groups else m.group()
        out.append(response[: m.start()] + value + response[m.end() :])
        vs, ve = (m.span(1) if regex.groups else m.span())
        parts = value.rsplit("_", 1)
        for new in (parts[0] if len(parts) > 1 else value + "s", _flip_first(value)):
            out.append(response[:vs] + new + response[ve:])
    if tags:
        last = tags[-1]
        extra = response[last.start() : last.end()].replace(
            last.group(1) if regex.groups else last.group(), "Extra", 1)
        out.append(response[: last.end()] + " " + extra + response[last.end() :])
        first_start = min(t.start() for t in tags)
        run = response[first_start:].strip()
        head = response[:first_start].rstrip()
        if head and params["position"] == "end":
            out.append(run + "\n" + head)
        elif params["position"] == "start":
            tail_start = tags[-1].end()
            out.append(response[tail_start:].strip() + " " + response[:tail_start].strip())
    return out


_DELIM_SWAP = {"/": "|", "|": "/", "=": ":", ":": "=", "-": "/", "→": "->", "->": "=>", "—": "-"}


@corruptor("vsys_bilingual_mapping")
def corrupt_bilingual(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Write pairs in another format: the delimiter between the two languages changed (``/`` ->
    ``|``) in as few pairs as it takes, or a language label altered.

    Example (``[EN] {l1} / [FR] {l2}``, 2 pairs): ``"[EN] red / [FR] rouge"`` ->
    ``"[EN] red | [FR] rouge"``.
    """
    parts = re.split(r"\{l[12]\}", params["delimiter_format"])
    breaks = _breaker(ctype, params)
    fams: list[Family] = []
    for literal in (parts[1].strip(), parts[0].strip()):
        if not literal:
            continue
        hits = [m.start() for m in re.finditer(re.escape(literal), response)][::-1]
        new = next((v for k, v in _DELIM_SWAP.items() if k in literal and literal.replace(k, v) != literal), None)
        swapped = literal.replace(next(k for k in _DELIM_SWAP if k in literal), new) if new else literal[:-1] or ";"
        if literal in ("[EN]", "[FR]") or literal.startswith("["):
            swapped = literal.replace("[", "(").replace("]", ")")

        def make(k: int, hits: list[int] = hits, literal: str = literal, swapped: str = swapped) -> str | None:
            if k > len(hits):
                return None
            return _apply(response, [(h, h + len(literal), swapped) for h in hits[:k]])

        fams.append(Family(make, len(hits)))
    return _search_all(fams, breaks)


@corruptor("vsys_source_tags")
def corrupt_source_tags(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Leave one sentence (or paragraph) untagged: its source tag is removed.

    Example (``[Visible]``/``[External]``): ``"A tower [Visible]. Built in 1889 [External]."`` ->
    ``"A tower [Visible]. Built in 1889."``.
    """
    hits = sorted((m for t in params["tags"] for m in re.finditer(re.escape(t.strip()), response)),
                  key=lambda m: m.start())
    out = []
    for m in list(dict.fromkeys(hits[::-1][:1] + hits[:1] + hits[len(hits) // 2 : len(hits) // 2 + 1])):
        start = m.start()
        while start > 0 and response[start - 1] in " \t":
            start -= 1
        out.append(response[:start] + response[m.end() :])
    return out


@corruptor("vsys_object_itemization")
def corrupt_itemization(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the numbering of the objects: skip a number, or drop/add an item when the count is
    known.

    Example: ``"Object_1: car\\nObject_2: bus"`` -> ``"Object_1: car\\nObject_3: bus"``.
    """
    style = params["style"]
    if style == "object_prefix":
        regex = re.compile(rf"(?<!\w){re.escape(params['label'])}[_\- ]?(\d+)(?!\d)", re.IGNORECASE)
    elif style == "numbered":
        regex = re.compile(r"(?m)^[ \t]*(\d+)(?=[.)][ \t]+\S)")
    else:
        regex = re.compile(params["pattern"])
    hits = [m for m in regex.finditer(response) if (m.group(1) if regex.groups else m.group()).strip()]
    out: list[str] = []
    for m in list(dict.fromkeys(hits[::-1][:1] + hits[1:2])):
        span = m.span(1) if regex.groups else m.span()
        digits = re.search(r"\d+", response[span[0] : span[1]])
        if digits:
            s = span[0] + digits.start()
            e = span[0] + digits.end()
            out.append(response[:s] + str(int(digits.group()) + 1) + response[e:])
    # whole lines dropped or repeated (the families after line breaks and joins)
    out += _search_all(_line_families(response, rng)[2:], _breaker(ctype, params))
    return out


# =============================================================================================
# Corruptors: the remaining IFEval ids


# Neutral sentences for pushing the detected language away from the required one.
_LANGUAGE_BANK = {
    "en": "The weather is pleasant today and the children are playing in the garden with their friends.",
    "fr": "Le temps est agréable aujourd'hui et les enfants jouent dans le jardin avec leurs amis.",
    "de": "Das Wetter ist heute angenehm und die Kinder spielen mit ihren Freunden im Garten.",
    "es": "El tiempo es agradable hoy y los niños juegan en el jardín con sus amigos.",
}


@corruptor("language:response_language")
def corrupt_language(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Write part of the answer in another language: sentences of a neutral passage in another
    language are added (after, then before the answer) until the detected language changes.

    Example (``en``): ``"The cat sleeps."`` -> ``"The cat sleeps. Le temps est agréable ..."``.
    """
    wanted = params["language"].split("-")[0]
    other = next(code for code in ("fr", "de", "en", "es") if code != wanted)
    sentence = _LANGUAGE_BANK[other]
    breaks = _breaker(ctype, params)
    fams = [Family(lambda k: response.rstrip() + (" " + sentence) * k, 64),
            Family(lambda k: (sentence + " ") * k + response.lstrip(), 64)]
    return _search_all(fams, breaks)


@corruptor("length_constraints:number_paragraphs")
def corrupt_star_paragraphs(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Add a ``***`` divider between two sentences, or remove dividers (joining paragraphs).

    Example (exactly 2): ``"Red. Blue.\\n***\\nGreen."`` -> ``"Red. Blue.\\nGreen."`` or
    ``"Red.\\n***\\nBlue.\\n***\\nGreen."``.
    """
    sents = _sentences(response)
    adds = [(a.stop, b.start, "\n***\n") for a, b in zip(sents, sents[1:])
            if "***" not in response[a.stop : b.start] and a.stop > a.end][::-1]
    removes = [(m.start(), m.end(), "\n") for m in re.finditer(r"\s?\*\*\*\s?", response)][::-1]
    fams = [Family(lambda k, e=e: _apply(response, e[:k]) if k <= len(e) else None, len(e)) for e in (adds, removes)]
    return _search_all(fams, _breaker(ctype, params))


@corruptor("length_constraints:nth_paragraph_first_word")
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
            out.append(response[:s] + _cap(rest[:1]) + rest[1:])
            for new in (_synonym(word), _match_case(word, "also")):
                if new:
                    out.append(response[:s] + new + response[s + len(word) :])
    return out + _search_all(_paragraph_families(response, rng), _breaker(ctype, params))


@corruptor("detectable_content:number_placeholders")
def corrupt_placeholders(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Fill placeholders: ``[name]`` loses its brackets, as few as needed.

    Example (at least 2): ``"Dear [name], see you at [place]."`` -> ``"Dear [name], see you at place."``.
    """
    hits = list(re.finditer(r"\[([^\[\]]*?)\]", response))[::-1]
    fam = Family(lambda k: _apply(response, [(m.start(), m.end(), m.group(1)) for m in hits[:k]])
                 if k <= len(hits) else None, len(hits))
    return _search_all([fam], _breaker(ctype, params))


@corruptor("detectable_content:postscript")
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


@corruptor("detectable_format:number_bullet_lists")
def corrupt_bullet_count(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Repeat, add, drop, merge or unbullet bullet points (``*``/``-``) until the count is off.

    Example (exactly 2): ``"* one\\n* two"`` -> ``"* one\\n* two\\n* two"`` or ``"* one"``.
    """
    return _search_all(_item_families(response, rng, ("bullet",)), _breaker(ctype, params))


@corruptor("detectable_format:number_highlighted_sections")
def corrupt_highlights(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Unhighlight ``*sections*`` (markers removed), as few as needed.

    Example (at least 2): ``"*one* and *two*"`` -> ``"*one* and two"``.
    """
    hits = list(re.finditer(r"\*\*([^\n*]+)\*\*|\*([^\n*]+)\*", response))[::-1]
    fam = Family(lambda k: _apply(response, [(m.start(), m.end(), m.group(1) or m.group(2)) for m in hits[:k]])
                 if k <= len(hits) else None, len(hits))
    return _search_all([fam], _breaker(ctype, params))


@corruptor("detectable_format:multiple_sections")
def corrupt_sections(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Unmark sections: ``Section 2`` becomes ``Part 2`` (or loses its number), as few as needed.

    Example (at least 2): ``"Section 1\\nA\\nSection 2\\nB"`` -> ``"Section 1\\nA\\nPart 2\\nB"``.
    """
    spliter = params["section_spliter"].strip()
    hits = list(re.finditer(re.escape(spliter) + r"(\s?)(\d+)", response))[::-1]
    part = _match_case(spliter, "part")
    fams = [
        Family(lambda k: _apply(response, [(m.start(), m.end(), part + m.group(1) + m.group(2)) for m in hits[:k]])
               if k <= len(hits) else None, len(hits)),
        Family(lambda k: _apply(response, [(m.start(), m.end(), spliter) for m in hits[:k]])
               if k <= len(hits) else None, len(hits)),
    ]
    return _search_all(fams, _breaker(ctype, params))


@corruptor("detectable_format:title")
def corrupt_title(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Remove the title's double angular brackets (or make them single).

    Example: ``"<<Ode to Joy>>\\nA poem."`` -> ``"Ode to Joy\\nA poem."``.
    """
    titles = list(re.finditer(r"<<([^\n]+?)>>", response))
    return [
        _apply(response, [(m.start(), m.end(), m.group(1)) for m in titles]),
        _apply(response, [(m.start(), m.end(), f"<{m.group(1)}>") for m in titles]),
    ]


@corruptor("combination:two_responses")
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
    out.append(response.rstrip() + "\n******\n" + parts[0].strip() + " " + _styled("Also.", _style(response)))
    return out


@corruptor("startend:quotation")
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
