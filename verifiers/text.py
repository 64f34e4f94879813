"""Text primitives shared by every rule checker, so that a word or a sentence is counted one way.

Conventions (DESIGN.md, "Compatibility"): leading/trailing code fences are stripped before
format checks; words are Latin-script tokens (CJK characters are not words; they are counted by
:func:`cjk_length`); paragraphs split on blank lines; curly quotes normalise to straight ones.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FENCE_OPEN = re.compile(r"^\s*```[\w+-]*[ \t]*\n")
_FENCE_CLOSE = re.compile(r"\n?```\s*$")

# CJK Unified Ideographs (+ext A), compatibility ideographs, Hiragana, Katakana, Hangul, and
# CJK punctuation / full-width forms. Kept as ranges so the check is one comparison chain.
_CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x309F),
    (0x30A0, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
)

_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*|\d+(?:[.,]\d+)*", re.UNICODE)
_SENT_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+|(?<=[。！？])")
_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "no.", "st.")
_PARA_SPLIT = re.compile(r"\n[ \t]*\n+")
_BULLET = re.compile(r"^[ \t]*([-*+•·])[ \t]+(\S.*)$")
_NUMBERED = re.compile(r"^[ \t]*(\d+)([.)])[ \t]+(\S.*)$")

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'"})


def strip_code_fences(text: str) -> str:
    """Remove one surrounding Markdown code fence (```json ... ```) and outer whitespace.

    >>> strip_code_fences("```json\\n{\\"a\\": 1}\\n```")
    '{"a": 1}'
    """
    stripped = text.strip()
    if _FENCE_OPEN.match(stripped) and stripped.rstrip().endswith("```"):
        stripped = _FENCE_OPEN.sub("", stripped, count=1)
        stripped = _FENCE_CLOSE.sub("", stripped, count=1)
    return stripped.strip()


def normalize_quotes(text: str) -> str:
    """Curly quotes to straight ones."""
    return text.translate(_QUOTES)


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def has_cjk(text: str) -> bool:
    return any(is_cjk(c) for c in text)


def cjk_length(text: str) -> int:
    """Every non-whitespace character (Video-IFBench's ``zh_length``)."""
    return sum(1 for c in text if not c.isspace())


def words(text: str) -> list[str]:
    """Latin-script words and numbers; CJK characters are skipped (they are not words).

    >>> words("Don't stop: 3 red squares, 红色")
    ["Don't", 'stop', '3', 'red', 'squares']
    """
    return [w for w in _WORD.findall(normalize_quotes(text)) if not any(is_cjk(c) for c in w)]


def count_words(text: str) -> int:
    return len(words(text))


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs are separated by one or more blank lines; empty ones are dropped."""
    return [p.strip() for p in _PARA_SPLIT.split(text.strip()) if p.strip()]


def split_sentences(text: str) -> list[str]:
    """Deterministic sentence split on ``. ! ?`` (and CJK ``。！？``) followed by space or end.

    Common abbreviations (e.g., i.e., etc.) and decimals do not end a sentence. List items and
    lines without final punctuation count as one sentence each.
    """
    sentences: list[str] = []
    for line in text.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        parts = _SENT_END.split(line)
        buffer = ""
        for part in parts:
            if not part:
                continue
            buffer = f"{buffer} {part}".strip() if buffer else part.strip()
            if buffer.lower().endswith(_ABBREV):
                continue
            if buffer:
                sentences.append(buffer)
                buffer = ""
        if buffer:
            sentences.append(buffer)
    return [s for s in sentences if any(ch.isalnum() for ch in s)]


def count_sentences(text: str) -> int:
    return len(split_sentences(text))


class ListItem(NamedTuple):
    kind: str  # "bullet" | "numbered"
    marker: str  # "-", "*", "1.", "2)", ...
    number: int | None
    text: str
    line: int  # 0-based line index


def list_items(text: str) -> list[ListItem]:
    """Every line that starts a bullet (``- * + •``) or numbered (``1.`` / ``1)``) list item."""
    items: list[ListItem] = []
    for i, line in enumerate(text.splitlines()):
        m = _NUMBERED.match(line)
        if m:
            items.append(ListItem("numbered", m.group(1) + m.group(2), int(m.group(1)), m.group(3).strip(), i))
            continue
        m = _BULLET.match(line)
        if m and not re.match(r"^[ \t]*(\*\*|--)", line):
            items.append(ListItem("bullet", m.group(1), None, m.group(2).strip(), i))
    return items


def nonblank_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def is_empty(text: str) -> bool:
    return not text or not text.strip()


def plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def bounds_text(min_count: int | None, max_count: int | None) -> str:
    """Human text for a count range: '40-60', 'at least 3', 'at most 5', 'exactly 2'."""
    if min_count is not None and max_count is not None:
        return f"exactly {min_count}" if min_count == max_count else f"{min_count}-{max_count}"
    if min_count is not None:
        return f"at least {min_count}"
    if max_count is not None:
        return f"at most {max_count}"
    return "any number"


def in_bounds(n: int, min_count: int | None, max_count: int | None) -> bool:
    return (min_count is None or n >= min_count) and (max_count is None or n <= max_count)
