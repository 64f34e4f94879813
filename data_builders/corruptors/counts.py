"""Edit families for counts: words, characters, sentences, paragraphs, lines and list items.

Each function returns monotone :class:`~ifpo.data_builders.corruptors.oracle.Family` objects (more
edits never bring a count back into bounds) of different kinds, so that the pair builder can pick
the candidate that leaves an item's *other* constraints alone (padding inside a sentence keeps the
sentence count, merging two sentences keeps the word count).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from ifpo.data_builders.corruptors.edits import (
    FILLER_UNITS,
    PLAIN_WORD,
    Edit,
    Sent,
    apply_edits,
    cap,
    delete_spans,
    filler,
    gap_is_same_line,
    letter_style,
    line_spans,
    longest_first,
    pad_points,
    sentence_spans,
    words_in,
)
from ifpo.data_builders.corruptors.oracle import Family
from ifpo.verifiers.text import list_items


def _removable_words(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Whole lowercase (or, in an all-caps text, uppercase) words between two spaces: deleting
    one with its space touches no punctuation, number or proper noun."""
    upper = letter_style(text) == "upper"
    out = []
    for start, end in words_in(text, lo, hi):
        word = text[start:end]
        if not PLAIN_WORD.fullmatch(word) or (word.isupper() if not upper else not word.isupper()):
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


def word_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by filler words at each pad point; underflow by deleting words (from the longest
    sentence, from every sentence in turn, at random) and then whole sentences."""
    style, offset = letter_style(text), rng.randrange(len(FILLER_UNITS))
    fams = [
        Family(lambda k, p=p: text[:p] + " " + filler(k, offset, style) + text[p:], 1 << 14)
        for p in pad_points(text, rng)
    ]
    sents = sentence_spans(text)
    longest = longest_first(text, sents)
    per_sentence = [list(reversed(_removable_words(text, s.start, s.end))) for s in sents]
    orders = []
    if longest:
        orders.append(list(reversed(_removable_words(text, longest[0].start, longest[0].end))))
    orders.append(_interleave(per_sentence))
    shuffled = _removable_words(text)
    rng.shuffle(shuffled)
    orders.append(shuffled)
    for order in orders:
        fams.append(Family(lambda k, o=order: delete_spans(text, o[:k]) if k <= len(o) else None, len(order)))
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
        return delete_spans(text, [(sents[i].start, sents[i].stop) for i in order[:k]])

    target = longest_first(text, [s for s in sents if s.stop > s.end] or list(sents))[0]

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
            edits.append((pos, pos + width + 1, joint + cap(nxt, style)))
    return edits


def _merge_edits(text: str, sents: Sequence[Sent], style: str, *, across_lines: bool) -> list[Edit]:
    """Edits each joining a sentence to the next with "; " (words unchanged)."""
    edits: list[Edit] = []
    for a, b in zip(sents, sents[1:]):
        same = gap_is_same_line(text, a.stop, b.start)
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


def sentence_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by splitting sentences (words unchanged) or repeating one; underflow by merging
    neighbours with "; " (same line, then across lines) or dropping sentences."""
    style, sents = letter_style(text), sentence_spans(text)
    splits = _split_edits(text, sents, style)
    shuffled = list(splits)
    rng.shuffle(shuffled)
    merges = _merge_edits(text, sents, style, across_lines=False)
    line_merges = _merge_edits(text, sents, style, across_lines=True)
    fams = [
        Family(lambda k, e=edits: apply_edits(text, e[:k]) if k <= len(e) else None, len(edits))
        for edits in (splits, shuffled, merges, list(reversed(merges)), merges + line_merges)
    ]
    return fams + _sentence_drop_dup_families(text, sents)


_PARA_SEP = re.compile(r"\n[ \t]*\n\s*")


def paragraph_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by breaking a paragraph at a sentence or line boundary (words and sentences
    unchanged) or repeating one; underflow by joining paragraphs (keeping the line break, or
    with a space) or dropping one."""
    sents = sentence_spans(text)
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
        return apply_edits(text, edits)

    def dup(k: int) -> str | None:
        if not paras:
            return None
        start, end = paras[-2] if len(paras) > 1 else paras[-1]
        return text[:end] + ("\n\n" + text[start:end]) * k + text[end:]

    fams = [
        Family(lambda k, e=edits: apply_edits(text, e[:k]) if k <= len(e) else None, len(edits))
        for edits in (splits, joins_line, joins_space)
    ]
    return fams + [Family(drop, len(paras) - 1), Family(dup, 256)]


def line_families(text: str, rng: random.Random) -> list[Family]:
    """Overflow by breaking a line between two sentences (or inside one) or repeating a line;
    underflow by joining lines with a space or dropping one."""
    style, sents = letter_style(text), sentence_spans(text)
    breaks: list[Edit] = []
    for a, b in zip(sents, sents[1:]):
        if gap_is_same_line(text, a.stop, b.start) and a.stop > a.end:
            breaks.append((a.stop, b.start, "\n"))
    breaks += _split_edits(text, sents, style, newline=True)
    joins = [(m.start(), m.end(), " ") for m in re.finditer(r"(?<=\S)[ \t]*\n[ \t]*(?=\S)", text)]
    joins.reverse()
    lines = [i for i, (s, e) in enumerate(line_spans(text)) if text[s:e].strip()]
    spans = line_spans(text)

    def drop(k: int) -> str | None:
        if k >= len(lines):
            return None
        order = [lines[i] for i in _drop_order(len(lines))[:k]]
        return delete_spans(text, [spans[i] for i in order])

    def dup(k: int) -> str | None:
        if not lines:
            return None
        s, e = spans[lines[-2] if len(lines) > 1 else lines[-1]]
        return text[:e] + ("\n" + text[s:e]) * k + text[e:]

    fams = [
        Family(lambda k, ed=edits: apply_edits(text, ed[:k]) if k <= len(ed) else None, len(edits))
        for edits in (breaks, joins)
    ]
    return fams + [Family(drop, len(lines) - 1), Family(dup, 256)]


def char_families(text: str, rng: random.Random) -> list[Family]:
    """Word families plus, for CJK text without spaces, deleting characters before the final
    punctuation of the longest sentence."""
    fams = word_families(text, rng)
    longest = longest_first(text, sentence_spans(text))
    if longest:
        s = longest[0]
        fams.append(Family(lambda k: text[: s.end - k] + text[s.end :] if k < s.end - s.start else None,
                           s.end - s.start - 1))
    return fams


# ---------------------------------------------------------------------------------------------
# List items


NUM_MARK = re.compile(r"^(\s*)(\d+)([.)])")


def _bump_label(line: str, ordinal: int, new_ordinal: int) -> str:
    """Renumber a copied list line: the marker and a leading label number ("Step 4:")."""
    m = NUM_MARK.match(line)
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


def item_families(text: str, rng: random.Random, kinds: Sequence[str] = ("bullet", "numbered"),
                   *, grow: bool = True) -> list[Family]:
    """Overflow by repeating the last item (renumbered) or adding a short filler item (unless not
    ``grow``); underflow by dropping items from the end, merging an item into the one before it,
    or unlisting items; both ways by converting items to the other list kind."""
    items = [i for i in list_items(text) if i.kind in kinds]
    if not items:
        return []
    lines = text.split("\n")
    style = letter_style(text)
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
            new.append(head + (" " if label else "") + filler(3, j, style))
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
