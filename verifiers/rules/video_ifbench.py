"""Video-IFBench's 13 function judges, under their own ids and parameter names.

Behaviour follows the released scorer (``video_ifbench/function_judges.py`` in
github.com/Alexios-hub/Video-IFBench), reimplemented from its documented behaviour. Shared
conventions (docs/DESIGN.md, "Compatibility with the benchmarks' own ids"): the response is stripped
and an opening code fence (and a closing one at the very end) is removed first, as the scorer does;
keywords match as the scorer matches them (a keyword holding a Han character as a substring, any
other only where no word character of any script touches it, so "NASA" is not found in
"我用NASA数据"; curly quotes are not folded); words are
counted as the scorer counts them (Han characters separate words, so Latin words inside Chinese
count; Hangul and kana runs are words) and ``zh_length`` counts every non-space character;
paragraphs split on blank lines (CRLF, U+3000-only lines included).

An empty response (whitespace only, or an empty code fence: a ``` line and a ``` line) gets the scorer's
verdict, which is not always a failure: the scorer judges the empty text like any other (its
extraction falls back to the stripped response, with no empty-response guard). So it passes
``forbidden_keyword_exclusion``, and the counting checkers whose lower bound is 0
(``response_length_constraint``, ``paragraph_count_constraint``, ``list_item_count_constraint``,
``required_keyword_inclusion`` with at most 0 occurrences, ``span_localization`` with
``min_spans=0``); it fails the other seven. What fails an empty answer in a checklist is the task
gate and the item's other constraints.

Route: hybrid. Video-IFBench's released annotations carry no parameters, only the checklist
query; its scorer has an LLM extract them before the function judge runs. That is ifpo's hybrid
route: items that state the params are checked directly, imported ones get them extracted by the
judge (validated against the spec, recorded in the verdict).

The released scorer runs on a span an LLM extracted from the response; ifpo's rule route sees the
whole response, so where the scorer compares the span for equality ifpo looks for the required
thing *inside* the response (verbatim speech), and list-like parsing skips intro lines such as
``"Here are the labels:"``. Each checker's docstring states its decisions.
"""

from __future__ import annotations

import bisect
import csv
import functools
import io
import itertools
import json
import operator
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from ifpo.verifiers.registry import (
    Check,
    Param,
    register,
)
from ifpo.verifiers.text import (
    bounds_text,
    cjk_length,
    excerpt,
    find_phrase,
    in_bounds,
    json_type,
    listing,
    nonblank_lines,
    normalize_quotes,
    plural,
    squash_whitespace,
)

ROUTE = "hybrid"  # see the module docstring

SOURCE = "video_ifbench"
EMPTY = Check(False, "empty response")

# --------------------------------------------------------------------------------------------
# private helpers (shared text matching lives in verifiers.text, param checks in verifiers.registry)
# --------------------------------------------------------------------------------------------


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


# The scorer's fence rule: after stripping, a response that starts with ``` loses that opening
# (with any language tag and the whitespace after it) and a closing ``` at its very end; an
# unclosed fence, a one-line fence and an empty one ("```\n```", a lone "```") are handled the same
# way, so an empty fence is an empty response.
_FENCE_HEAD = re.compile(r"^```[A-Za-z0-9_+-]*\s*\n?")
_FENCE_TAIL = re.compile(r"\n?```\s*$")


def _target(response: str) -> str:
    text = response.strip()
    if text.startswith("```"):
        text = _FENCE_TAIL.sub("", _FENCE_HEAD.sub("", text))
    return text.strip()


def _lines(text: str) -> list[str]:
    """Non-blank lines, stripped, as the scorer reads lines (a zero-width character is not blank)."""
    return list(filter(None, map(str.strip, text.splitlines())))  # (in C: no Python step per line)


def _scorer_json(text: str) -> Any:
    """JSON as the scorer reads a span: the text, its fence-stripped form, then its first balanced
    ``{...}``/``[...]`` block; the first that parses wins. ``None`` when none parses, and also for
    JSON ``null`` (the scorer cannot tell the two apart)."""
    return _scorer_json_where(text)[0]


def _scorer_json_where(text: str) -> tuple[Any, str]:
    """:func:`_scorer_json` and where the value was found."""
    seen: set[str] = set()
    # Made one at a time: the embedded block is only looked for when the first two do not parse.
    candidates = (
        (make(), where)
        for make, where in (
            (text.strip, "whole response"),
            (lambda: _target(text), "fenced block"),
            (lambda: _first_balanced_block(text.strip()) or "", "embedded block"),
        )
    )
    for candidate, where in candidates:
        if not candidate or candidate in seen:
            continue
        seen.add(candidate)
        ok, value = _load_json(candidate)
        if ok:
            return value, where
    return None, ""


def _scalar_text(value: Any) -> str:
    """A JSON value as the scorer turns it into text: Python's ``str`` of it, stripped, where a falsy
    value (``0``, ``false``, ``null``, ``""``, ``[]``, ``{}``) is the empty string."""
    return str(value or "").strip()


def _leaf_texts(value: Any) -> list[str]:
    """Non-empty leaf scalars of a JSON value, as :func:`_scalar_text` spells them (``true`` is
    ``'True'``, ``0`` is dropped), dict values and list items in order."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaf_texts(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaf_texts(v)]
    text = "" if value is None else _scalar_text(value)
    return [text] if text else []


def _phrase_found(text: str, phrase: str, ignore_case: bool) -> bool:
    """Whether ``text`` mentions ``phrase`` as the scorer's ``_contains_phrase`` decides.

    Whitespace runs squashed and both sides stripped; an empty side is never a mention. A phrase
    holding a Han character is a substring (lower-cased with ``ignore_case``); any other must not
    touch a Unicode word character on either side (Han, kana, Hangul, digits, ``_`` are word
    characters), compared with ``re.IGNORECASE`` when ``ignore_case``.

    >>> _phrase_found("0:05 - happy (smiling)", "happy", True), _phrase_found("unhappy", "happy", True)
    (True, False)
    """
    hay = squash_whitespace(text)
    return bool(hay) and _phrase_matcher(phrase, ignore_case)(hay)


def _bare_word(needle: str) -> str:
    """The pattern of ``needle`` touching no word character on either side: ``(?<!\\w)needle(?!\\w)``
    with the lookbehind after the literal (it looks back over the needle, whose every match has
    ``len(needle)`` characters, to the one before), so a search skips from one first letter to the
    next instead of trying the lookbehind at every position: the same matches."""
    return rf"{re.escape(needle)}(?<!\w[\s\S]{{{len(needle)}}})(?!\w)"


@functools.lru_cache(maxsize=256)
def _phrase_matcher(phrase: str, ignore_case: bool):
    """:func:`_phrase_found`'s test of one phrase on an already squashed, non-empty text (built
    once per phrase: a label list is tried on every entry)."""
    needle = squash_whitespace(phrase)
    if not needle:
        return lambda hay: False
    if _HAN.search(needle):
        if ignore_case:
            low = needle.lower()
            return lambda hay: low in hay.lower()
        return lambda hay: needle in hay
    pattern = re.compile(_bare_word(needle), re.IGNORECASE if ignore_case else 0)
    return lambda hay: pattern.search(hay) is not None


# Video-IFBench's word count: Han characters count as separators (kana and Hangul do not: their
# runs are words, Hangul words being space-separated), curly apostrophes and dashes fold to ASCII,
# and a word is a run of letters/digits joined by "-" or "'". So Latin words glued to Chinese
# count ("它是cat和dog" has 2), "안녕하세요 세계" has 2, "3.5" is 2 and "don't" 1, as the scorer counts.
_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_HAN_RANGES}]")
_HAN_RUN = re.compile(f"[{_HAN_RANGES}]+")
# The scorer's word, a run of letters/digits joined by "-" or "'", read where Han characters are
# separators: with Han left out of the letters instead of substituted by spaces (a Han character is
# neither a letter there nor a joiner, as a space is not), and with no whitespace squashed (a
# separator either way), the same words.
_VIF_WORD = re.compile(f"[^\\W_{_HAN_RANGES}]+(?:[-'][^\\W_{_HAN_RANGES}]+)*")
_VIF_FOLD = {"’": "'", "‘": "'", "‛": "'", "`": "'", "´": "'", "–": "-", "—": "-", "－": "-", "‐": "-", "‑": "-",
             "‒": "-"}


def _count_words(text: str) -> int:
    # each fold character present replaced in C (str.translate looks up every non-ASCII character:
    # 0.07 s/MB on CJK text)
    for old, new in _VIF_FOLD.items():
        if old in text:
            text = text.replace(old, new)
    return len(_VIF_WORD.findall(text))


# Video-IFBench's paragraph split: a line break, any whitespace (line breaks, CR, U+3000 included),
# a line break. A line holding only a zero-width character is not blank there, nor here.
_VIF_PARAGRAPHS = re.compile(r"\n\s*\n")


def _paragraphs(text: str) -> list[str]:
    return [part for part in _VIF_PARAGRAPHS.split(text.strip()) if part.strip()]


def _keyword_count(text: str, keyword: str, ignore_case: bool) -> int:
    """Occurrences of ``keyword`` as Video-IFBench's scorer counts them (its ``_contains_keyword``).

    ifpo is measured against that scorer, so this is its matching, not ifpo's general
    :func:`~ifpo.verifiers.text.find_phrase`: both sides have whitespace runs squashed and are
    stripped; ``ignore_case`` lower-cases both (``str.lower``); curly quotes are *not* folded. A
    keyword holding a Han character (the scorer's CJK class, kana and Hangul excluded) counts as a
    plain substring. Any other keyword must not touch a Unicode word character on either side,
    whatever its own edge characters are, and Han, kana and Hangul are word characters there: so
    "NASA" is not in "我用NASA数据" but is in "我用 NASA 数据", and "C++" is not in "C++代码".

    >>> _keyword_count("我用NASA数据", "NASA", True), _keyword_count("我用 NASA 数据", "nasa", True)
    (0, 1)
    """
    hay, needle = squash_whitespace(text), squash_whitespace(keyword)
    if ignore_case:
        hay, needle = hay.lower(), needle.lower()
    if not needle:
        return 0
    if _HAN.search(needle):
        return hay.count(needle)
    return len(re.findall(_bare_word(needle), hay))


def _fold(text: str, ignore_case: bool) -> str:
    # str.lower, as the scorer compares ("STRASSE" is not "straße" there, though casefold says so)
    return text.lower() if ignore_case else text


class _ScorerRaises(ValueError):
    """``json.loads`` raised something other than ``JSONDecodeError``: a number of over 4300 digits,
    which ``int()`` refuses. The scorer's JSON reader catches only ``JSONDecodeError``, so its judge
    raises there (before trying the next candidate) and its scorer records a failed check."""


def _load_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` or ``(False, None)``; JSON nested beyond the recursion limit raises
    RecursionError and a number too long for ``int()`` raises :class:`_ScorerRaises`, as the
    scorer's judge raises on both (see :func:`_fails_when_too_deep`)."""
    try:
        return True, json.loads(text)
    except json.JSONDecodeError:
        return False, None
    except ValueError as e:
        raise _ScorerRaises(str(e)) from None


def _fails_when_too_deep(checker):
    """A JSON-reading checker fails, with a reason, where the scorer's judge raises while reading
    JSON (nested too deeply for Python's recursion limit, or a number too long for ``int()``): its
    scorer records the raise as a failed check."""

    @functools.wraps(checker)
    def run(response: str, params: Mapping[str, Any]) -> Check:
        try:
            return checker(response, params)
        except RecursionError:
            return Check(False, "JSON nested too deeply to read (the scorer's judge errors here: a failed check)")
        except _ScorerRaises as e:
            return Check(False, f"JSON the scorer cannot read ({excerpt(str(e), 60)}; its judge errors here: a failed check)")

    return run


_FENCED_BLOCK = re.compile(r"```[\w+-]*[ \t]*\n(.*?)\n?```", re.DOTALL)


# A JSON string, quotes included, as the bracket scan reads one (a backslash escapes whatever comes
# next): each character has one reading, so a string that never closes fails in one pass.
_JSON_STRING = re.compile(r'("[^"\\]*(?:\\[\s\S][^"\\]*)*")')
_SCAN_CHUNK = 1 << 16


def _first_balanced_block(text: str) -> str | None:
    """The first ``{...}`` or ``[...]`` block, brackets balanced outside JSON strings.

    The strings after the opening bracket are cut out by one split (the text between two strings
    holds no quote; after the last string, a quote opens one that never closes, where nothing counts
    any more). The depth is then followed through the rest, joined, a chunk at a time: a chunk with
    fewer closing brackets than the depth cannot end the block and only adds its counts; else the
    depth after each character is accumulated in C until it is 0. (A Python step per character cost
    0.13 s/MB on a long text with an unclosed bracket.)
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    parts = _JSON_STRING.split(text[start + 1 :])  # outside, string, outside, ..., outside
    outside_parts = parts[0::2]
    quote = outside_parts[-1].find('"')
    if quote >= 0:
        outside_parts[-1] = outside_parts[-1][:quote]
    outside = "".join(outside_parts)
    step = {opening: 1, closing: -1}.get
    depth = 1
    for at in range(0, len(outside), _SCAN_CHUNK):
        chunk = outside[at : at + _SCAN_CHUNK]
        closes = chunk.count(closing)
        if depth > closes:
            depth += chunk.count(opening) - closes
            continue
        try:
            # the depth after chunk[k - 1] is 0: that character closes the block
            k = operator.indexOf(itertools.accumulate(map(step, chunk, itertools.repeat(0)), initial=depth), 0)
        except ValueError:
            depth += chunk.count(opening) - closes
            continue
        end = at + k - 1  # the closing bracket's index in ``outside``
        part = bisect.bisect_right(list(itertools.accumulate(map(len, outside_parts))), end)
        strings_before = sum(map(len, parts[1 : 2 * part : 2]))
        return text[start : start + 1 + end + strings_before + 1]
    return None


def _find_json(text: str) -> tuple[bool, Any, str]:
    """Parse the response as JSON: as the scorer reads it (:func:`_scorer_json`: the whole text,
    else its first {...}/[...] block), else, beyond the scorer, a fenced block anywhere (the
    scorer's judges see an extracted span, which would be that block).

    Returns ``(found, value, where)``; JSON ``null`` is not found, as in the scorer.
    """
    value, where = _scorer_json_where(text)
    if value is not None:
        return True, value, where
    for block in _FENCED_BLOCK.findall(text):
        ok, value = _load_json(block.strip())
        if ok and value is not None:
            return True, value, "fenced block"
    return False, None, ""


def _schema_value(schema: Any) -> tuple[Any, str | None]:
    """A schema skeleton given as dict/list, or as a JSON string of one; returns (skeleton, error).

    A string is read as the scorer reads one (the text, its fence-stripped form, then its first
    ``{...}``/``[...]`` block); ``""`` is no schema (the scorer's param sanitiser drops it; it keeps
    ``" "``, which no parse reads).
    An error is the scorer's failed verdict, not a refusal: its judge fails every response then."""
    if schema is None or schema == "":
        return None, None
    if isinstance(schema, str):
        try:
            parsed = _scorer_json(schema)
        except RecursionError:
            return None, "schema is nested too deeply to read"
        except _ScorerRaises:
            return None, "schema holds a number too long to read"
        if parsed is None:
            return None, "schema is a string but not valid JSON"
        schema = parsed
    if not isinstance(schema, (dict, list)):
        return None, f"schema must be a JSON object or array skeleton, got {json_type(schema)}"
    return schema, None


def _skeleton_errors(value: Any, skeleton: Any, path: str = "$") -> list[str]:
    """Where ``value`` departs from ``skeleton``.

    A dict means exactly those keys (recursively); a 1-item list means every item matches that
    item; a longer list means exactly that many items, position by position; an empty list means
    any array; any scalar means any scalar (null included).
    """
    if isinstance(skeleton, dict):
        if not isinstance(value, dict):
            return [f"expected object at {path}, got {json_type(value)}"]
        errors = [f"missing key {k!r} at {path}" for k in skeleton if k not in value]
        errors += [f"unexpected key {k!r} at {path}" for k in value if k not in skeleton]
        for k, sub in skeleton.items():
            if k in value:
                errors += _skeleton_errors(value[k], sub, f"{path}.{k}")
        return errors
    if isinstance(skeleton, list):
        if not isinstance(value, list):
            return [f"expected array at {path}, got {json_type(value)}"]
        if not skeleton:
            return []
        if len(skeleton) == 1:
            errors = []
            for i, item in enumerate(value):
                errors += _skeleton_errors(item, skeleton[0], f"{path}[{i}]")
            return errors
        errors = []
        if len(value) != len(skeleton):
            errors.append(f"expected {len(skeleton)} items at {path}, got {len(value)}")
        for i, (item, sub) in enumerate(zip(value, skeleton)):
            errors += _skeleton_errors(item, sub, f"{path}[{i}]")
        return errors
    if isinstance(value, (dict, list)):
        return [f"expected a scalar at {path}, got {json_type(value)}"]
    return []


# Param policy: a value the scorer's judges take is accepted here with the scorer's verdict, even
# where that verdict is fixed (min_occurrences 0 without a maximum always passes, min > max always
# fails, a negative bound is just a comparison, an unknown unit always fails). Blank list entries
# are dropped before the check, as the scorer's param sanitiser drops them (_scorer_lists). A value
# a judge cannot run (an invalid regex, an unreadable schema) raises or fails there, which the
# scorer records as a failed verdict: ifpo fails with the reason. Still refused: a value of the
# wrong JSON type ("3" for an int; the scorer's sanitiser would coerce it, ifpo's shared param
# types do not), an unknown param name, and a missing required one (the hybrid route has the judge
# extract it).


_LIST_PARAMS = frozenset(
    {
        "keywords",
        "allowed_options",
        "allowed_labels",
        "allowed_formats",
        "required_keys",
        "forbidden_keys",
        "allowed_values",
        "allowed_patterns",
        "custom_patterns",
    }
)


_DROP = object()  # a value the scorer's sanitiser drops (the default then applies)


def _scorer_text(value: Any) -> str:
    return str(value or "").strip()  # the scorer's text of a value: falsy (0, False, None) is ""


def _coerce_one(kind: str, value: Any) -> Any:
    """One value as the scorer's param sanitiser (``sanitize_rule_parameters``) leaves it, except
    that a value it cannot read ("ten" for an int) is kept, so validation names it: the scorer drops
    it (the default applies), but for a written item that is a mistake worth reporting."""
    if value is None:
        return _DROP
    if kind == "int":
        try:
            return int(float(value))  # "3" -> 3, 2.7 -> 2, True -> 1
        except (TypeError, ValueError, OverflowError):
            return value
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = _scorer_text(value).lower()
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        return _DROP if not text else value  # 0 is "" to the scorer, so dropped
    if kind == "str":
        return _scorer_text(value) or _DROP
    if kind == "list[str]":
        values = value
        if isinstance(value, str):
            values = [value]
            if value.strip().startswith("[") and value.strip().endswith("]"):
                try:
                    loaded = json.loads(value.strip())
                except ValueError:
                    loaded = None
                if isinstance(loaded, list):
                    values = loaded
        elif not isinstance(value, list):
            values = [value]
        return [t for t in (_scorer_text(v) for v in values) if t]
    return _DROP if value == "" else value  # a schema is passed as given ("" dropped)


def _scorer_params(ctype: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Params as the scorer's sanitiser hands them to a judge: ints from numeric strings and floats,
    bools from "true"/"yes"/"1"/"false"/"no"/"0", a string where a list is wanted as a 1-item list
    (or the JSON list it spells), list entries as stripped text with blanks dropped, strings
    stripped, and None or an empty string dropped, so the default applies. A dropped required param
    is missing (the scorer's judge would raise, a failed verdict; ifpo reports it missing, and the
    hybrid route has the judge extract it). A value it cannot read at all ("ten" for an int) and an
    unknown name are kept, so validation names them (the scorer would drop or ignore them)."""
    kinds = {p.name: p.kind for p in ctype.params}
    out: dict[str, Any] = {}
    for name, value in params.items():
        if name not in kinds:
            out[name] = value
            continue
        coerced = _coerce_one(kinds[name], value)
        if coerced is not _DROP:
            out[name] = coerced
    return out


def _scorer_lists(checker: Any) -> Any:
    """Run ``checker`` on its list params as the scorer's param sanitiser leaves them: blank entries
    (``""``, ``" "``) dropped, so ``keywords: ["dog", " "]`` is ``["dog"]`` and ``[" "]`` is ``[]``."""

    @functools.wraps(checker)
    def run(response: str, params: Mapping[str, Any]) -> Check:
        cleaned = {
            k: [x for x in v if str(x).strip()] if k in _LIST_PARAMS and isinstance(v, list) else v
            for k, v in params.items()
        }
        return checker(response, cleaned)

    return run


def _bad_regex_check(name: str, pattern: str, flags: int) -> Check | None:
    """The scorer's verdict on a pattern it cannot compile: its judge raises, which it records as a
    failed verdict. ifpo fails with the reason (the constraint is judged, not refused)."""
    try:
        re.compile(pattern, flags)
    except re.error as exc:
        return Check(False, f"{name} {pattern!r} is not a valid regular expression ({exc}); the scorer fails it")
    return None


# List-like parsing, shared by list_item_count_constraint and label_set_restriction: the scorer's
# order and markers (``-``, ``*``, ``•``, ``1.``, ``1)`` followed by whitespace; not ``+``).
# A marker starting a line, with the rest of the line: searched over "\n"-joined lines (no line
# holds a line end: "\n" stands for ^ and the whitespace after the marker stops at it)
_VIF_MARKED_LINE = re.compile(r"^(?:\d+[.)]|[-*•])[^\S\n]+(.*)", re.MULTILINE)
_VIF_INLINE = re.compile(r"(?:^|\s)(\d+[.)])\s+")
_VIF_NUMBER_HEAD = re.compile(r"^\d+[.)]\s+")
_VIF_COMMA = re.compile("[,，]")


def _list_like_items(text: str) -> tuple[Sequence[str], str]:
    """Split a response into list entries as the scorer does; returns ``(items, how found)``.

    In order: a JSON array (the whole text or its first ``[...]`` block; each non-empty element as
    :func:`_scalar_text` spells it, so ``0`` and ``""`` are no entry); lines with a list marker,
    when there are several lines or several such lines (other lines are ignored); inline numbering
    on one line (``1. a 2. b``: at least two numbers, the first starting with 1, not necessarily
    consecutive); comma-separated entries (``,`` or ``，``) when every line has a comma; a response
    that is only a whole number ``N`` counts ``N`` entries (``"0"`` ... ``"N-1"``, the scorer's
    reading of a bare count); else one entry per non-blank line.

    One deliberate difference (ifpo sees the whole response, the scorer an extracted span): in the
    last two line-based steps a line ending with ``:`` followed by more lines is an intro
    (``"Here are the labels:"``), not an entry.
    """
    parsed = _scorer_json(text)
    if isinstance(parsed, list):
        return [e for e in (_scalar_text(v) for v in parsed) if e], "JSON array"
    lines = _lines(text)
    # the marked lines' text after the marker, from one search of the joined lines (a regex call per
    # line cost 0.15 s/MB on short lines)
    marked = list(map(str.strip, _VIF_MARKED_LINE.findall("\n".join(lines))))
    if marked and (len(lines) > 1 or len(marked) > 1):
        return [m for m in marked if m], "list items"
    stripped = text.strip()
    if stripped and "\n" not in stripped:
        matches = list(_VIF_INLINE.finditer(stripped))
        if len(matches) >= 2 and matches[0].group(1).startswith("1"):
            ends = [m.start() for m in matches[1:]] + [len(stripped)]
            segments = [stripped[m.start(1) : end].strip() for m, end in zip(matches, ends)]
            items = [it for it in (_VIF_NUMBER_HEAD.sub("", seg, count=1).strip() for seg in segments) if it]
            if len(items) >= 2:
                return items, "inline numbering"
    # Intro lines: those ending with ":" before the first other line, the last line always kept
    # (found in C and sliced once: a slice per intro line copied the rest each time, quadratic on a
    # long run of such lines)
    try:
        intro = operator.indexOf(map(str.endswith, lines, itertools.repeat((":", "："))), False)
    except ValueError:
        intro = len(lines)
    body = lines[min(intro, max(len(lines) - 1, 0)):]
    if body and all("," in ln or "，" in ln for ln in body):
        # split at each comma and stripped: the same entries as splitting at "\s*[,，]\s*" (whose
        # leading \s* was tried at every position), in C
        items = list(filter(None, map(str.strip, itertools.chain.from_iterable(map(_VIF_COMMA.split, body)))))
        if items:
            return items, "comma-separated entries"
    if re.fullmatch(r"\d+", stripped):
        return _Numbered(int(stripped)), "a bare count"
    return body, "lines"


class _Numbered(Sequence[str]):
    """The scorer's entries for a bare count ``N``: ``"0"`` ... ``"N-1"``, made only when read."""

    def __init__(self, n: int):
        # len() cannot exceed sys.maxsize; the scorer cannot build such a list either
        self._range = range(min(n, sys.maxsize))

    def __len__(self) -> int:
        return len(self._range)

    def __getitem__(self, index):  # noqa: ANN001  (int or slice, as Sequence has it)
        if isinstance(index, slice):
            return [str(i) for i in self._range[index]]
        return str(self._range[index])


# --------------------------------------------------------------------------------------------
# structured_json_output
# --------------------------------------------------------------------------------------------


@register(
    "structured_json_output",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param(
            "top_level",
            "str",
            default="object",
            help="required type of the top-level JSON value: 'object' or 'array' (any case); "
            "another value (e.g. 'any') allows any JSON, as in the scorer",
        ),
        Param("required_keys", "list[str]", nullable=True, help="keys the top-level object must have"),
        Param("forbidden_keys", "list[str]", nullable=True, help="keys the top-level object must not have"),
        Param(
            "schema",
            "any",
            nullable=True,
            help="structure skeleton (dict/list or its JSON text): a dict means exactly those keys, "
            "a 1-item list means every item matches it",
        ),
    ],
    # no params_check: a key both required and forbidden, required keys with top_level 'array', or
    # an unreadable schema are judged as the scorer judges them (every response fails)
    description="Answer in valid JSON (top level: {top_level}).",
)
@_fails_when_too_deep
@_scorer_lists
def structured_json_output(response: str, params: Mapping[str, Any]) -> Check:
    """Valid JSON with the required top-level type, keys and structure skeleton.

    The JSON may be the whole response, a fenced block, or the first ``{...}``/``[...]`` block in
    it (as in the released scorer). Keys are checked on the top-level object only; ``schema``
    checks the structure recursively. A response that is JSON ``null`` is no JSON to the scorer
    (even with ``top_level="any"``); an empty one fails.

    >>> structured_json_output('{"events": []}', {"top_level": "object", "required_keys": ["events"],
    ...     "forbidden_keys": None, "schema": None}).passed
    True
    """
    text = _target(response)
    if not text:
        return EMPTY
    found, value, where = _find_json(text)
    if not found:
        return Check(False, "no valid JSON found in the response")
    # the scorer's reading (its sanitiser strips a string and drops an empty one, leaving the
    # default); only object/array constrain
    top = params["top_level"].strip().lower() or "object"
    if top in ("object", "array") and json_type(value) != top:
        return Check(False, f"top-level JSON value is {json_type(value)}, expected {top}")
    errors: list[str] = []
    required = params["required_keys"] or []
    if required and not isinstance(value, dict):
        return Check(False, f"required keys {required} need a top-level object, got {json_type(value)}")
    errors += [f"missing key {k!r} at $" for k in required if k not in value]
    if isinstance(value, dict):
        errors += [f"forbidden key {k!r} present at $" for k in params["forbidden_keys"] or [] if k in value]
    skeleton, schema_error = _schema_value(params["schema"])
    if schema_error:
        return Check(False, f"{schema_error}; the scorer fails every response with such a schema")
    if skeleton is not None:
        errors += [e for e in _skeleton_errors(value, skeleton) if e not in errors]
    if errors:
        return Check(False, listing(errors, 3, quote=False, sep="; "))
    suffix = "" if where == "whole response" else f" ({where})"
    return Check(True, f"valid JSON {json_type(value)}{suffix} matching the required structure")


# --------------------------------------------------------------------------------------------
# table_output
# --------------------------------------------------------------------------------------------

_DELIM_CELL = re.compile(r":?-{3,}:?")
_TABLE_FORMATS = ("markdown", "csv")


class _Table:
    def __init__(self, fmt: str, header: list[str] | None, rows: list[list[str]]):
        self.fmt, self.header, self.rows = fmt, header, rows


def _pipe_cells(line: str) -> list[str]:
    """A pipe-table row's cells as the scorer splits them: one outer ``|`` off each end, then every
    ``|`` separates (an escaped ``\\|`` too)."""
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [cell.strip() for cell in row.split("|")]


def _markdown_table(text: str) -> tuple[_Table | None, str]:
    """The first pipe table as the scorer finds it: a header of at least 2 cells, a delimiter row of
    as many ``---`` cells (3 dashes or more, ``:`` allowed at the ends), then the body rows up to
    the first row of another width; a header and delimiter with no body row is no table. Returns
    the table, or None and why the nearest candidate is none (for the reason)."""
    lines = _lines(text)
    why = ""
    for i in range(len(lines) - 1):
        if "|" not in lines[i] or "-" not in lines[i + 1]:
            continue  # a header of 1 cell, or a delimiter without dashes (read quickly)
        header, delim = _pipe_cells(lines[i]), _pipe_cells(lines[i + 1])
        if len(header) < 2 or len(header) != len(delim) or not all(_DELIM_CELL.fullmatch(c) for c in delim):
            continue
        rows: list[list[str]] = []
        for line in lines[i + 2 :]:
            cells = _pipe_cells(line)
            if len(cells) != len(header):
                break
            rows.append(cells)
        if rows:
            return _Table("markdown", header, rows), ""
        if not why:
            after = lines[i + 2] if i + 2 < len(lines) else None
            why = (
                "a markdown header and delimiter with 0 data rows is no table"
                if after is None
                else f"the row after the delimiter has {len(_pipe_cells(after))} cells, "
                f"the header {len(header)}"
            )
    return None, why


def _csv_table(text: str, require_header: bool) -> tuple[_Table | None, str]:
    """The whole text (stripped non-blank lines) read as CSV, as the scorer reads it: at least 2
    columns, every row the same width, and with ``require_header`` a header plus at least one row.
    Returns the table, or None and why (empty when the text does not look like CSV at all)."""
    lines = _lines(text)
    if len(lines) < (2 if require_header else 1):
        return None, ("a CSV header needs at least one data row" if lines and "," in lines[0] else "")
    reader = ([c.strip() for c in row] for row in csv.reader(io.StringIO("\n".join(lines))))
    first = next((r for r in reader if any(r)), None)
    if first is None or len(first) < 2:
        return None, ""  # not CSV: the rest is not read
    rows = [first] + [r for r in reader if any(r)]
    widths = sorted({len(r) for r in rows})
    if len(widths) > 1:
        return None, f"CSV rows have different numbers of fields {widths}"
    if require_header:
        if len(rows) < 2:
            return None, "a CSV header needs at least one data row"
        return _Table("csv", rows[0], rows[1:]), ""
    return _Table("csv", None, rows), ""


def _table_schema_errors(table: _Table, skeleton: Any) -> tuple[list[str], int]:
    """The scorer's table schema: a dict (or a list of dicts) is the structure of the row records,
    keyed by a unique, non-empty header; a list of names is the exact header; anything else is the
    structure of the rows (lists of cells). Returns the first errors (at least 3 when there are
    that many) and how many there are."""
    records_needed = isinstance(skeleton, dict) or (
        isinstance(skeleton, list) and bool(skeleton) and isinstance(skeleton[0], dict)
    )
    if records_needed:
        header = table.header or []
        if not header or "" in header or len(set(header)) != len(header):
            return ["the schema names the fields, which needs a header row of unique, non-empty names"], 1
        if not table.rows:
            return ["the schema names the fields, but the table has no data row"], 1
        records = _Records(header, table.rows)
        return _rows_skeleton_errors(records, [skeleton] if isinstance(skeleton, dict) else skeleton)
    if isinstance(skeleton, list) and skeleton and all(not isinstance(x, (dict, list)) for x in skeleton):
        names = [_scalar_text(x) for x in skeleton]
        if table.header is None:
            return ["schema names the columns, but the table has no header row"], 1
        return ([], 0) if table.header == names else ([f"header is {table.header}, expected {names}"], 1)
    return _rows_skeleton_errors(table.rows, skeleton)


class _Records(Sequence[dict]):
    """A table's rows as records (header -> cell), each made only when read."""

    def __init__(self, header: list[str], rows: list[list[str]]):
        self.header, self.rows = header, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):  # noqa: ANN001  (int or slice, as Sequence has it)
        if isinstance(index, slice):
            return [dict(zip(self.header, row)) for row in self.rows[index]]
        return dict(zip(self.header, self.rows[index]))


def _rows_skeleton_errors(rows: Sequence[Any], skeleton: Any) -> tuple[list[str], int]:
    """``_skeleton_errors(list(rows), skeleton, "$rows")``: its first errors (at least 3 when there are
    that many) and how many there are.

    Every row of a table has the same structure (the same width of text cells; as records, the same
    keys with text values), so under a 1-item skeleton each row departs from it in the same number
    of places, only the index in the path differs: the first rows are checked, the count is
    multiplied out (checking every row of a 1 MB table cost 0.3 s/MB)."""
    if not (isinstance(skeleton, list) and len(skeleton) == 1):
        errors = _skeleton_errors(list(rows), skeleton, "$rows")
        return errors, len(errors)
    head: list[str] = []
    per_row = 0
    for i in range(len(rows)):
        errors = _skeleton_errors(rows[i], skeleton[0], f"$rows[{i}]")
        if i == 0:
            per_row = len(errors)
            if not per_row:
                return [], 0
        head += errors
        if len(head) >= 3:
            break
    return head, per_row * len(rows)


def _table_formats(given: list[str] | None) -> list[str]:
    """The scorer's reading of ``allowed_formats``: lower-cased, blanks dropped, empty = both."""
    formats = [f.strip().lower() for f in given or [] if f.strip()]
    return formats or list(_TABLE_FORMATS)


@register(
    "table_output",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param(
            "allowed_formats",
            "list[str]",
            default=["markdown", "csv"],
            help="table syntaxes accepted ('markdown', 'csv', any case; empty means both; "
            "another name allows nothing)",
        ),
        Param("min_rows", "int", default=1, help="minimum number of data rows (header excluded)"),
        Param("require_header", "bool", default=True, help="the table must have a header row"),
        Param(
            "schema",
            "any",
            nullable=True,
            help="column names: a dict (or [dict]) of exactly these fields, or a list = exact header",
        ),
    ],
    # no params_check: allowed_formats is read as the scorer reads it (_table_formats), min_rows
    # is a comparison, and an unreadable schema fails every response there
    description="Present the answer as a table ({allowed_formats}) with at least {min_rows} data rows.",
)
@_scorer_lists
def table_output(response: str, params: Mapping[str, Any]) -> Check:
    """A Markdown pipe table or a CSV table with enough data rows (and the schema's columns).

    As the scorer finds tables. Markdown: the first header (2 cells or more) + ``|---|`` delimiter
    + body block anywhere in the response (the block ends at the first row of another width; with
    no body row there is no table); a pipe table always has a header row, even of empty cells, so
    ``require_header`` concerns CSV only. CSV: the whole response, at least 2 columns, every row the
    same width; with ``require_header`` its first row is the header and one more row is needed.
    ``min_rows`` counts data rows; any table found passes when one satisfies the rows and the
    schema. Header cells are compared as written (``**Time**`` is not ``Time``). An empty response
    has no table.

    >>> table_output("| t | event |\\n|---|---|\\n| 0:05 | jump |", {"allowed_formats": ["markdown"],
    ...     "min_rows": 1, "require_header": True, "schema": None}).passed
    True
    """
    text = _target(response)
    formats = _table_formats(params["allowed_formats"])
    if not set(formats) & set(_TABLE_FORMATS):  # the scorer looks for no table, so finds none
        return Check(False, f"no table format allowed: {formats} holds neither 'markdown' nor 'csv'")
    candidates: list[_Table] = []
    near: list[str] = []
    for fmt in ("markdown", "csv"):
        if fmt in formats:
            table, why = _markdown_table(text) if fmt == "markdown" else _csv_table(text, params["require_header"])
            if table is not None:
                candidates.append(table)
            elif why:
                near.append(why)
    if not candidates:
        why = f" ({'; '.join(near)})" if near else ""
        return Check(False, f"no {' or '.join(formats)} table found{why}")
    skeleton, schema_error = _schema_value(params["schema"])
    if schema_error:
        return Check(False, f"{schema_error}; the scorer fails every table with such a schema")
    problems: list[str] = []
    for table in candidates:
        n = len(table.rows)
        if n < params["min_rows"]:
            problems.append(f"{table.fmt}: {plural(n, 'data row')}, expected at least {params['min_rows']}")
            continue
        if skeleton is not None:
            errors, n_errors = _table_schema_errors(table, skeleton)
            if n_errors:
                more = f" (+{n_errors - 3} more)" if n_errors > 3 else ""
                problems.append(f"{table.fmt}: {listing(errors[:3], quote=False, sep='; ')}{more}")
                continue
        return Check(True, f"{table.fmt} table with {plural(n, 'data row')}")
    return Check(False, "; ".join(problems))


# --------------------------------------------------------------------------------------------
# ordered_list_output
# --------------------------------------------------------------------------------------------


_LIST_LINE = {"numbered": re.compile(r"^\d+[.)]\s+"), "bullet": re.compile(r"^[-*•]\s+")}


@register(
    "ordered_list_output",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("min_items", "int", default=1, help="minimum number of list items"),
        Param("allow_numbered", "bool", default=True, help="numbered items ('1.', '2)') count"),
        Param("allow_bullets", "bool", default=True, help="bullet items ('-', '*', '•') count"),
    ],
    # no params_check: min_items 0 (or below) passes everything, no allowed kind fails everything,
    # both as in the scorer
    description="Organise the answer as a list with at least {min_items} items.",
)
def ordered_list_output(response: str, params: Mapping[str, Any]) -> Check:
    """At least ``min_items`` list lines of an allowed kind (numbered and/or bullet).

    As the scorer: a list line is a stripped line starting ``1.``/``1)`` (numbered) or ``-``, ``*``,
    ``•`` (bullet) followed by whitespace (``+`` is not a bullet there); lines of a disallowed kind
    are not counted; the numbering need not be sequential; other lines (an intro, a closing remark)
    are allowed. An empty response has no list line, so it fails unless ``min_items`` is 0 or less.

    >>> ordered_list_output("1. cut\\n2. fry", {"min_items": 2, "allow_numbered": True,
    ...     "allow_bullets": False}).passed
    True
    """
    kinds = {
        k for k, ok in (("numbered", params["allow_numbered"]), ("bullet", params["allow_bullets"])) if ok
    }
    if not kinds:  # the scorer's verdict: no marker rule enabled
        return Check(False, "allow_numbered and allow_bullets are both false: no list kind is accepted")
    found = [kind for ln in _lines(_target(response)) for kind, line in _LIST_LINE.items() if line.match(ln)]
    counted = [kind for kind in found if kind in kinds]
    ignored = len(found) - len(counted)
    what = " or ".join(sorted(kinds))
    note = f" ({plural(ignored, 'item')} of a disallowed list kind ignored)" if ignored else ""
    n = len(counted)
    if n >= params["min_items"]:
        return Check(True, f"{plural(n, what + ' item')}, expected at least {params['min_items']}")
    return Check(False, f"{plural(n, what + ' item')}, expected at least {params['min_items']}{note}")


# --------------------------------------------------------------------------------------------
# closed_set_option_output
# --------------------------------------------------------------------------------------------

_DECORATION = "*_`\"'“”‘’「」『』"
_TRAILING_PUNCT = ".。!！"


def _undecorate(text: str) -> str:
    """Strip Markdown emphasis, wrapping quotes and a final period: ``**B.**`` -> ``B``."""
    value = text.strip()
    for _ in range(3):
        value = value.strip().strip(_DECORATION).strip().rstrip(_TRAILING_PUNCT).strip()
    return value


@register(
    "closed_set_option_output",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("allowed_options", "list[str]", required=True, help="the options the answer must be one of"),
        Param("allow_explanation", "bool", default=False, help="text may follow the chosen option"),
        Param("ignore_case", "bool", default=True, help="compare options case-insensitively"),
    ],
    description="Answer with exactly one of: {allowed_options}.",
)
@_scorer_lists
def closed_set_option_output(response: str, params: Mapping[str, Any]) -> Check:
    """The response is one of ``allowed_options`` (optionally followed by an explanation).

    Wrapping emphasis/quotes and a final period are tolerated (``**B.**`` answers ``B``: the
    scorer compares an extracted span, ifpo the whole response). With ``allow_explanation`` the
    response must *start* with an option followed by the end or a non-word character
    (``B) because ...``), whatever the option's own last character (``C++x`` does not start with
    ``C++``); as in the scorer, what follows is not read, so ``A, B`` passes. An empty response
    (whitespace, an empty code fence) is no option and fails, as in the scorer.

    >>> closed_set_option_output("Yes", {"allowed_options": ["Yes", "No"], "allow_explanation": False,
    ...     "ignore_case": True}).passed
    True
    """
    text = _target(response)
    if not text:
        return EMPTY
    ic = params["ignore_case"]
    options = params["allowed_options"]
    by_len = sorted(options, key=len, reverse=True)
    answer = _undecorate(text)
    for option in options:
        if _fold(answer, ic) == _fold(_undecorate(option), ic):
            return Check(True, f"answer {option!r} is an allowed option")
    lead = text.lstrip().lstrip(_DECORATION).lstrip()
    for option in by_len:
        opt = _undecorate(option) or option
        head = re.match(re.escape(opt), lead, re.IGNORECASE if ic else 0)
        if head is None:
            continue
        rest = lead[head.end() :]
        # As the scorer: the option must be followed by the end or a non-word character, in any
        # script ("是的" does not start with the option "是"; "是，因为…" does).
        if rest and _is_word_char(rest[0]):
            continue
        if not _undecorate(rest):
            return Check(True, f"answer {option!r} is an allowed option")
        if not params["allow_explanation"]:
            return Check(
                False,
                f"answer starts with option {option!r} but adds {excerpt(rest)}; explanations are not allowed",
            )
        return Check(True, f"answer starts with allowed option {option!r}, followed by an explanation")
    return Check(False, f"answer {excerpt(text)} is not one of the allowed options {options}")


# --------------------------------------------------------------------------------------------
# response_length_constraint, paragraph_count_constraint, list_item_count_constraint
# --------------------------------------------------------------------------------------------

_WORD_UNITS = ("word", "words")
_CHAR_UNITS = (  # the scorer's aliases of zh_length
    "zh_length",
    "zh_len",
    "zh-char",
    "zh_char",
    "zh_chars",
    "cjk_length",
    "cjk_char",
    "cjk_chars",
    "char",
    "chars",
    "character",
    "characters",
)


@register(
    "response_length_constraint",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("min_count", "int", required=True, help="inclusive lower bound"),
        Param("max_count", "int", required=True, help="inclusive upper bound"),
        Param(
            "unit",
            "str",
            default="word",
            help="'word' (CJK characters are not words) or 'zh_length' (every non-space character); "
            "any letter case; another unit fails every response, as in the scorer",
        ),
    ],
    description="Answer in {min_count} to {max_count} {unit} units.",
)
def response_length_constraint(response: str, params: Mapping[str, Any]) -> Check:
    """Length in words (``unit="word"``) or non-space characters (``zh_length`` and aliases).

    An empty response (whitespace, an empty code fence) has length 0, so it passes when
    ``min_count`` is 0, as in the scorer; a punctuation-only one has 0 words.

    >>> response_length_constraint("A man jumps.", {"min_count": 1, "max_count": 5, "unit": "word"})
    Check(passed=True, reason='3 words, expected 1-5')
    """
    text = _target(response)
    given = params["unit"].strip().lower() or "word"  # the scorer's unit normalisation; "" = default
    if given in _WORD_UNITS:
        n, unit = _count_words(text), "word"
    elif given in _CHAR_UNITS:
        n, unit = cjk_length(text), "character"
    else:  # the scorer's verdict for an unknown unit is a failure, whatever the response
        known = ", ".join(_WORD_UNITS + _CHAR_UNITS)
        return Check(False, f"unsupported length unit {params['unit']!r} (known, any case: {known})")
    lo, hi = params["min_count"], params["max_count"]
    return Check(in_bounds(n, lo, hi), f"{plural(n, unit)}, expected {bounds_text(lo, hi)}")


@register(
    "paragraph_count_constraint",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("min_count", "int", required=True, help="inclusive lower bound"),
        Param("max_count", "int", required=True, help="inclusive upper bound"),
    ],
    description="Write {min_count} to {max_count} paragraphs separated by blank lines.",
)
def paragraph_count_constraint(response: str, params: Mapping[str, Any]) -> Check:
    """Paragraphs are separated by blank lines (whitespace-only, CRLF and U+3000 included), as the scorer splits.

    An empty response has 0 paragraphs (it passes when ``min_count`` is 0, as in the scorer).

    >>> paragraph_count_constraint("One.\\n\\nTwo.", {"min_count": 2, "max_count": 2})
    Check(passed=True, reason='2 paragraphs, expected exactly 2')
    """
    n = len(_paragraphs(_target(response)))
    lo, hi = params["min_count"], params["max_count"]
    return Check(in_bounds(n, lo, hi), f"{plural(n, 'paragraph')}, expected {bounds_text(lo, hi)}")


@register(
    "list_item_count_constraint",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("min_count", "int", required=True, help="inclusive lower bound"),
        Param("max_count", "int", required=True, help="inclusive upper bound"),
    ],
    description="List {min_count} to {max_count} items.",
)
@_fails_when_too_deep
def list_item_count_constraint(response: str, params: Mapping[str, Any]) -> Check:
    """Number of list entries, found as by :func:`_list_like_items` (JSON array, Markdown list
    items, inline ``1. 2. 3.`` numbering, comma-separated entries, a bare count, else non-blank
    lines). An empty response has 0 entries (it passes when ``min_count`` is 0, as in the scorer).

    >>> list_item_count_constraint("- a\\n- b\\n- c", {"min_count": 3, "max_count": 3})
    Check(passed=True, reason='3 items (list items), expected exactly 3')
    """
    items, how = _list_like_items(_target(response))
    n = len(items)
    lo, hi = params["min_count"], params["max_count"]
    return Check(in_bounds(n, lo, hi), f"{plural(n, 'item')} ({how}), expected {bounds_text(lo, hi)}")


# --------------------------------------------------------------------------------------------
# required_keyword_inclusion, forbidden_keyword_exclusion
# --------------------------------------------------------------------------------------------


@register(
    "required_keyword_inclusion",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="content",
    route=ROUTE,
    params=[
        Param("keywords", "list[str]", required=True, help="words or phrases to include"),
        Param("match_all", "bool", default=True, help="every keyword must meet the count (else any one)"),
        Param("min_occurrences", "int", default=1, help="minimum occurrences of each keyword"),
        Param("max_occurrences", "int", nullable=True, help="maximum occurrences of each keyword"),
        Param("ignore_case", "bool", default=True, help="match case-insensitively"),
    ],
    # min_occurrences 0 without a maximum, or min > max, are judged (pass / fail everything).
    description="Include the keyword(s) {keywords}.",
)
@_scorer_lists
def required_keyword_inclusion(response: str, params: Mapping[str, Any]) -> Check:
    """Each (or, without ``match_all``, some) keyword occurs between min and max times.

    Matching is the scorer's (:func:`_keyword_count`): a keyword holding a Han character counts as
    a substring; any other must not touch a word character of any script (so a Latin keyword glued
    to Chinese is not found); whitespace runs are squashed, curly quotes are not folded. An empty
    response holds every keyword 0 times, so it passes when 0 is within the bounds
    (``min_occurrences=0, max_occurrences=0``), as in the scorer.

    >>> required_keyword_inclusion("The chef dices onions.", {"keywords": ["onions"], "match_all": True,
    ...     "min_occurrences": 1, "max_occurrences": None, "ignore_case": True}).passed
    True
    """
    text = _target(response)
    lo, hi = params["min_occurrences"], params["max_occurrences"]
    expected = bounds_text(lo, hi)
    counts = {k: _keyword_count(text, k, params["ignore_case"]) for k in params["keywords"]}
    bad = {k: n for k, n in counts.items() if not in_bounds(n, lo, hi)}
    good = [k for k in counts if k not in bad]
    detail = ", ".join(f"{k!r} {plural(n, 'time')}" for k, n in bad.items())
    if params["match_all"]:  # with no keywords, "all of none" holds, as in the scorer
        if bad:
            return Check(False, f"{detail}; each keyword expected {expected} times")
        return Check(True, f"all {len(counts)} keyword(s) occur {expected} times")
    if not counts:  # and "any of none" does not
        return Check(False, "no keywords given, so none occurs (match_all is false)")
    if good:
        return Check(True, f"{good[0]!r} occurs {counts[good[0]]} time(s), expected {expected}")
    return Check(False, f"no keyword occurs {expected} times: {detail}")


@register(
    "forbidden_keyword_exclusion",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="content",
    route=ROUTE,
    params=[
        Param("keywords", "list[str]", required=True, help="words or phrases that must not appear"),
        Param("ignore_case", "bool", default=True, help="match case-insensitively"),
    ],
    description="Do not use the word(s) {keywords}.",
)
@_scorer_lists
def forbidden_keyword_exclusion(response: str, params: Mapping[str, Any]) -> Check:
    """No keyword occurs (same matching as :func:`required_keyword_inclusion`).

    An empty response holds no keyword, so it passes, as in the scorer (the checklist's task gate
    and the other constraints of the item are what fail an empty answer).

    >>> forbidden_keyword_exclusion("He runs.", {"keywords": ["run"], "ignore_case": True}).passed
    True
    """
    text = _target(response)
    counts = {k: _keyword_count(text, k, params["ignore_case"]) for k in params["keywords"]}
    found = {k: n for k, n in counts.items() if n}
    if found:
        detail = ", ".join(f"{k!r} ({plural(n, 'time')})" for k, n in found.items())
        return Check(False, f"forbidden keyword(s) present: {detail}")
    return Check(True, f"none of the {len(counts)} forbidden keyword(s) appear")


# --------------------------------------------------------------------------------------------
# normalized_value_format
# --------------------------------------------------------------------------------------------

_DEFAULT_SEPARATOR = r"(?:\n+|[;；])"


def _matching_values(items: list[str], values: set[str], patterns: list[re.Pattern[str]], ignore_case: bool,
                     full: bool) -> tuple[int, list[str]]:
    """How many of ``items`` are one of ``values`` (lower-cased first with ``ignore_case``) or match
    one of ``patterns`` (whole, with ``full``), and the first three that are not, in order.

    One verdict per distinct value (matching depends on the value only), every step over all of them
    at once in C (map, compress): a Python step per value cost 0.15-0.3 s/MB on a long list."""
    distinct = list(dict.fromkeys(items))
    ok = list(map(values.__contains__, map(str.lower, distinct) if ignore_case else distinct))
    for p in patterns:
        left = list(itertools.compress(range(len(distinct)), map(operator.not_, ok)))
        if not left:
            break
        test = p.fullmatch if full else p.search
        for i in itertools.compress(left, map(test, map(distinct.__getitem__, left))):
            ok[i] = True
    verdict = dict(zip(distinct, ok))
    item_ok = list(map(verdict.__getitem__, items))
    return item_ok.count(True), list(itertools.islice(itertools.compress(items, map(operator.not_, item_ok)), 3))


@register(
    "normalized_value_format",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("allowed_patterns", "list[str]", nullable=True, help="regexes a value may match"),
        Param("allowed_values", "list[str]", nullable=True, help="exact values allowed"),
        Param("require_full_match", "bool", default=True, help="a pattern must match the whole value"),
        Param("ignore_case", "bool", default=False, help="case-insensitive values and patterns"),
        Param("allow_multiple", "bool", default=False, help="several values split by separator_pattern"),
        Param("separator_pattern", "str", default=_DEFAULT_SEPARATOR, help="regex splitting values"),
    ],
    description="Give the value in the required normalised format.",
)
@_fails_when_too_deep
@_scorer_lists
def normalized_value_format(response: str, params: Mapping[str, Any]) -> Check:
    """Every value matches an allowed value or pattern.

    Values are, as the scorer finds them: the non-empty leaf scalars when the response (or its
    first ``{...}``/``[...]`` block) is JSON, spelt as :func:`_scalar_text` spells them (a JSON
    string ``"00:05"`` is the value ``00:05``; ``true`` is ``True``; ``0`` is no value); else the
    split pieces when ``allow_multiple``; else the whole (stripped) response. With
    ``allow_multiple`` and ``require_full_match=False``, pieces matching nothing are ignored (the
    released scorer's rule) and at least one piece must match. An empty response has no value and
    fails, whatever the patterns.

    >>> normalized_value_format("00:05", {"allowed_patterns": [r"\\d{2}:\\d{2}"], "allowed_values": None,
    ...     "require_full_match": True, "ignore_case": False, "allow_multiple": False,
    ...     "separator_pattern": r"(?:\\n+|[;；])"}).passed
    True
    """
    text = _target(response)
    if not text:
        return EMPTY  # the scorer: no value to validate
    ic = params["ignore_case"]
    items = _leaf_texts(_scorer_json(text))
    if not items:
        if params["allow_multiple"]:  # the separator is only compiled here, as in the scorer
            # the scorer's sanitiser strips a string param and drops an empty one (the default)
            sep = params["separator_pattern"].strip() or _DEFAULT_SEPARATOR
            bad = _bad_regex_check("separator_pattern", sep, 0)
            if bad:
                return bad
            # (a group in the separator gives None pieces)
            items = list(filter(None, map(str.strip, filter(None, re.split(sep, text)))))
        else:
            items = [text]
    if not items:  # only separators (";"): the scorer finds no value to validate
        return Check(False, "no value left after splitting at separator_pattern")
    if not params["allowed_values"] and not params["allowed_patterns"]:  # the scorer's verdict
        return Check(False, "no allowed_patterns or allowed_values given, so no value can match")
    for i, pattern in enumerate(params["allowed_patterns"] or []):
        bad = _bad_regex_check(f"allowed_patterns[{i}]", pattern, re.IGNORECASE if ic else 0)
        if bad:
            return bad
    values = {_fold(v, ic) for v in params["allowed_values"] or []}
    patterns = [re.compile(p, re.IGNORECASE if ic else 0) for p in params["allowed_patterns"] or []]
    full = params["require_full_match"]

    n_matched, unmatched = _matching_values(items, values, patterns, ic, full)
    n_unmatched = len(items) - n_matched
    lenient = params["allow_multiple"] and not full
    allowed = []
    if params["allowed_values"]:
        allowed.append(f"values {listing(params['allowed_values'], 5)}")
    if params["allowed_patterns"]:
        allowed.append(f"patterns {listing(params['allowed_patterns'], 5)}")
    allowed_text = " or ".join(allowed)
    if lenient:
        if n_matched:
            return Check(True, f"{n_matched} of {plural(len(items), 'value')} match the format")
        return Check(False, f"no value matches {allowed_text}")
    if n_unmatched:
        shown = ", ".join(excerpt(u, 30) for u in unmatched)
        more = f" (+{n_unmatched - 3} more)" if n_unmatched > 3 else ""
        how = "fully match" if full else "match"
        return Check(
            False,
            f"{n_unmatched} of {plural(len(items), 'value')} do not {how} {allowed_text}: {shown}{more}",
        )
    return Check(True, f"all {plural(len(items), 'value')} match the format")


# --------------------------------------------------------------------------------------------
# label_set_restriction
# --------------------------------------------------------------------------------------------


@register(
    "label_set_restriction",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param("allowed_labels", "list[str]", required=True, help="the labels that may be used"),
        Param("ignore_case", "bool", default=True, help="compare labels case-insensitively"),
        Param("allow_duplicates", "bool", default=True, help="a label may label more than one entry"),
    ],
    description="Use only the labels {allowed_labels}.",
)
@_fails_when_too_deep
@_scorer_lists
def label_set_restriction(response: str, params: Mapping[str, Any]) -> Check:
    """Every entry of the response uses an allowed label.

    Entries are found as for :func:`list_item_count_constraint`: JSON array values, Markdown list
    items, inline numbering, comma-separated entries (``happy, sad``), a bare count, else lines; an
    intro line ending with ``:`` is skipped. An entry uses a label when it mentions it as the
    scorer's ``_contains_phrase`` decides (:func:`_phrase_found`: a substring for a label holding
    Han, else not touching a word character of any script), so ``Label: happy`` and
    ``0:05 - happy (smiling)`` both use ``happy``, ``我很happy`` does not; an entry mentioning no
    allowed label fails. Every allowed label an entry mentions counts, overlapping ones too
    (``very happy`` mentions ``happy`` and ``very happy``); without ``allow_duplicates`` a label
    mentioned by two entries fails. An empty response has no entry and fails, as in the scorer.

    >>> label_set_restriction("happy, sad", {"allowed_labels": ["happy", "sad"], "ignore_case": True,
    ...     "allow_duplicates": True}).passed
    True
    """
    items, how = _list_like_items(_target(response))
    if not items:
        return Check(False, "no labelled entries found")
    labels = params["allowed_labels"]
    ic = params["ignore_case"]
    outside: list[str] = []
    uses: dict[str, int] = {}
    matchers = [(label, _phrase_matcher(label, ic)) for label in labels]
    for item in items:
        hay = squash_whitespace(item)
        found = [label for label, mentions in matchers if mentions(hay)] if hay else []
        if not found:
            outside.append(item)
            if len(outside) > 3:
                break  # the verdict is settled; a bare count can stand for millions of entries
        for label in found:
            key = _fold(label, ic)
            uses[key] = uses.get(key, 0) + 1
    if outside:
        shown = ", ".join(excerpt(o, 30) for o in outside[:3])
        more = " (and more)" if len(outside) > 3 else ""
        count = "4 or more" if len(outside) > 3 else str(len(outside))
        return Check(
            False,
            f"{count} of {plural(len(items), 'entry')} ({how}) use no allowed label "
            f"{listing(labels, 5)}: {shown}{more}",
        )
    dupes = {k: n for k, n in uses.items() if n > 1}
    if dupes and not params["allow_duplicates"]:
        detail = ", ".join(f"{k!r} used {n} times" for k, n in dupes.items())
        return Check(False, f"duplicate labels are not allowed: {detail}")
    return Check(True, f"all {plural(len(items), 'entry')} ({how}) use allowed labels")


# --------------------------------------------------------------------------------------------
# verbatim_speech_constraint
# --------------------------------------------------------------------------------------------

class _DropPunctuation(dict):
    """A ``str.translate`` table: every Unicode punctuation character (category P*) to None, any
    other to itself, filled in per character on first sight (a Python loop per character cost
    1.5 s/MB; a full table of the code space would cost a second to build)."""

    def __missing__(self, cp: int) -> int | None:
        value = None if unicodedata.category(chr(cp))[0] == "P" else cp
        self[cp] = value
        return value


_DROP_PUNCTUATION = _DropPunctuation()


@functools.lru_cache(maxsize=64)
def _ascii_keeping(kept: str) -> dict[int, None]:
    """A ``str.translate`` table deleting every ASCII character but NUL and those of ``kept``."""
    return dict.fromkeys(c for c in range(1, 128) if chr(c) not in kept)


def _punctuation_among(text: str) -> str:
    """The punctuation characters among ``text``'s distinct ones. On long text that is mostly Han
    (no Han character is punctuation), the Han runs are cut out first: hashing every character into
    the set cost 0.05 s/MB on Chinese text, the cut a third of that."""
    if len(text) > 100_000 and len(_HAN.findall(text, 0, 4096)) > 2048:
        text = _HAN_RUN.sub("", text)
    return "".join(char for char in set(text) if _DROP_PUNCTUATION[ord(char)] is None)


def _drop_punctuation(text: str, among: str | None = None) -> str:
    """``text.translate(_DROP_PUNCTUATION)``. On ASCII text translate caches each character's entry
    and is fast; on other text it looks the table up for every character (about 70-150 ns each), so
    the punctuation among the text's distinct characters is removed with one str.replace each (a
    removal cannot make another punctuation character appear). ``among``: characters that hold
    every punctuation character of ``text`` (a text it was taken from), so that its distinct
    characters need not be found again."""
    if text.isascii():
        return text.translate(_DROP_PUNCTUATION)
    for char in _punctuation_among(text if among is None else among):
        if char in text:
            text = text.replace(char, "")
    return text


def _speech_norm(text: str, *, quotes: bool, whitespace: bool, among: str | None = None) -> str:
    """The scorer's normalisation of speech: quotes folded (with ``quotes``), every punctuation
    character dropped (an apostrophe inside a word too: ``let's`` is ``lets``), whitespace squashed
    (with ``whitespace``), and always lower-cased (the scorer takes ``ignore_case`` but never reads
    it). ``among``: as for :func:`_drop_punctuation`."""
    if quotes:
        # the released scorer also folds guillemets, backtick and acute accent used as quotes
        text = normalize_quotes(text, extended=True)
    value = _drop_punctuation(text, among)
    value = squash_whitespace(value) if whitespace else value.strip()
    return value.lower()


def _speech_norms(texts: list[str], known: Mapping[str, str] | None = None, among: str | None = None) -> list[str]:
    """``[_speech_norm(t, quotes=True, whitespace=True) for t in texts]``, as one pass over the texts
    joined by NUL (a function call per text cost 2 µs: 0.2 s/MB on a long list of short quotes).
    ``known``: texts already normalised so by the caller (the whole response, whose one line is
    often the only candidate), taken from there instead of normalising them again. ``among``: as for
    :func:`_drop_punctuation`, for every text.

    NUL survives every step (it is no quote, punctuation, whitespace or letter), so squashing the
    whole leaves at most one space at each end of a text, which its strip removes; lower-casing reads
    its neighbours only for a final sigma, which a NUL ends as the end of a text does (neither is a
    cased or case-ignorable character, nor is whitespace). Texts holding a NUL are normalised one
    by one."""
    if known and not known.keys().isdisjoint(texts):  # (isdisjoint: no Python step per text)
        rest = [t for t in texts if t not in known]
        done = iter(_speech_norms(rest, among=among))
        return [known[t] if t in known else next(done) for t in texts]
    joined = "\x00".join(texts)
    if not texts or joined.count("\x00") != len(texts) - 1:  # a text holds a NUL
        return [_speech_norm(t, quotes=True, whitespace=True, among=among) for t in texts]
    joined = _drop_punctuation(normalize_quotes(joined, extended=True), among).lower()
    return list(map(str.strip, " ".join(joined.split()).split("\x00")))


# A single-quoted segment not touching a word character outside: (?<!\w)'([^'\n]+)'(?!\w) with the
# lookbehind after the opening quote (looking back past it), so a search skips from quote to quote.
_SINGLE_QUOTED = re.compile(r"'(?<!\w')([^'\n]+)'(?!\w)")


def _quoted_segments(text: str) -> list[str]:
    plain = normalize_quotes(text, extended=True)
    segments = re.findall(r'"([^"\n]+)"', plain) + _SINGLE_QUOTED.findall(plain)
    return list(filter(None, map(str.strip, segments)))  # (stripped and non-empty, in C)


def _scorer_segments(text: str, quoted_text: list[str] | None = None, text_lines: list[str] | None = None) -> list[str]:
    """The scorer's speech segments: the quoted utterances, else the lines when there are several,
    else the whole (fence-stripped) text. ``quoted_text``, ``text_lines``: ``_quoted_segments(text)``
    and ``_lines(text)`` when the caller has them (reused when fence-stripping leaves the text as it is)."""
    raw = _target(text)
    quoted = quoted_text if quoted_text is not None and raw == text else _quoted_segments(raw)
    if quoted:
        return quoted
    lines = text_lines if text_lines is not None and raw == text else _lines(raw)
    return lines if len(lines) > 1 else ([raw] if raw else [])


def _segments_equal(segments: list[str], wanted: list[str], flags: Mapping[str, bool],
                    known: Mapping[str, str] | None = None) -> bool:
    """Whether the non-empty normalised ``segments`` are exactly ``wanted``, normalising lazily: the
    first segment that differs (or one more than ``wanted`` holds) decides, so a long list of lines
    is not normalised whole to find that its first line is not the utterance. ``known``: segments
    the caller has normalised with ``flags`` already (the whole text), not normalised again."""
    i = 0
    for segment in segments:
        norm = known[segment] if known and segment in known else _speech_norm(segment, **flags)
        if not norm:
            continue
        if i >= len(wanted) or norm != wanted[i]:
            return False
        i += 1
    return i == len(wanted)


@register(
    "verbatim_speech_constraint",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="content",
    route=ROUTE,
    params=[
        Param("expected_utterance", "str", required=True, help="the words that must be quoted verbatim"),
        Param("normalize_whitespace", "bool", default=True, help="any whitespace run equals one space"),
        Param("normalize_quotes", "bool", default=True, help="curly apostrophes equal straight ones"),
        Param("ignore_case", "bool", default=False, help="unused: the scorer lower-cases either way"),
        Param(
            "allow_wrapping_quotes",
            "bool",
            default=True,
            help="quotes around the utterance are tolerated (always true: quotes are punctuation)",
        ),
    ],
    description="Quote the speech verbatim: {expected_utterance}",
)
def verbatim_speech_constraint(response: str, params: Mapping[str, Any]) -> Check:
    """The expected utterance's words appear in the response, in order, verbatim.

    As in the released scorer, every punctuation character is dropped on both sides (apostrophes
    inside words too, so ``let's``, ``let’s`` and ``lets`` are equal) and quotes around the
    utterance are therefore always tolerated; whitespace follows ``normalize_whitespace``; letter
    case never matters (the scorer lower-cases both sides whatever ``ignore_case`` says). The
    utterance must sit at word boundaries (substring match for CJK). The scorer's own test also
    passes: the response's quoted utterances (else its lines, else the whole text), normalised the
    same way, equal the expected ones. An empty or punctuation-only response holds no words and
    fails.

    >>> verbatim_speech_constraint('He shouts: “Let’s go now!”', {"expected_utterance": "Let's go now.",
    ...     "normalize_whitespace": True, "normalize_quotes": True, "ignore_case": False,
    ...     "allow_wrapping_quotes": True}).passed
    True
    """
    text = _target(response)
    if not text:
        return EMPTY  # the scorer: no segment, which never equals the expected one
    flags = {"quotes": params["normalize_quotes"], "whitespace": params["normalize_whitespace"]}
    expected = _speech_norm(params["expected_utterance"], **flags)
    if not expected:  # the scorer: no expected segment, and its pass needs one
        return Check(False, "expected_utterance holds no words (empty or punctuation only), so nothing matches")
    # the punctuation of any piece of the text, its quotes folded (to " and ': ´ is no punctuation)
    marks = None if text.isascii() else _punctuation_among(text) + "\"'"
    hay = _speech_norm(text, **flags, among=marks)
    known = {text: hay}  # the whole text is often a segment and the one candidate: normalised once
    if find_phrase(hay, expected, normalize=False):
        return Check(True, f"utterance {excerpt(params['expected_utterance'])} found verbatim")

    def normalized(segments: list[str]) -> list[str]:
        return [n for n in (_speech_norm(seg, **flags) for seg in segments) if n]

    # The scorer's own test, which the search inside the text can miss where dropping a quote glues
    # two words ('"go"x' is "gox" there, while its quoted segment is "go").
    wanted = normalized(_scorer_segments(params["expected_utterance"]))
    quoted = _quoted_segments(text)  # read once: for the scorer's segments and for the hint
    # Without quotes, the text's lines once too: the scorer's segments, and on ASCII text the hint's
    # candidates (nonblank_lines, stripped, are then exactly these: no zero-width character).
    lines = None if quoted else _lines(text)
    if wanted and _segments_equal(_scorer_segments(text, quoted, lines), wanted, flags, known):
        utterance = excerpt(params["expected_utterance"])
        return Check(True, f"utterance {utterance} is what the response quotes, verbatim")
    if quoted:
        candidates = quoted
    elif lines is not None and text.isascii():
        candidates = lines
    else:
        candidates = [ln.strip() for ln in nonblank_lines(text)]
    plain_expected = _speech_norm(params["expected_utterance"], quotes=True, whitespace=True)
    best, best_ratio = "", 0.0
    # The same ratios as SequenceMatcher(None, cand, expected).ratio() per candidate, with less work
    # (a matcher per line cost 1.2 s/MB on a long list): expected is indexed once; a candidate seen
    # before cannot beat the best; nor can one whose quick_ratio bound (shared characters, counted
    # by str.count) is at most the best or under 0.5, below which no hint is shown anyway.
    # The distinct candidates are normalised in one pass (_speech_norms). The shared characters are
    # at most those of a candidate that the expected text holds at all: these are kept, for every
    # candidate in one pass, and a candidate whose bound from their number cannot pass is skipped
    # before anything is counted (counting per candidate cost 0.2 s/MB on a long list of short lines).
    matcher = SequenceMatcher(None, "", plain_expected)
    expected_counts = Counter(plain_expected)
    chars, wanted_counts = list(expected_counts), list(expected_counts.values())
    distinct = list(dict.fromkeys(candidates))
    norms = _speech_norms(distinct, known if flags["quotes"] and flags["whitespace"] else None, marks)
    joined = "\x00".join(norms)
    if "\x00" in plain_expected or joined.count("\x00") != len(norms) - 1:
        held = norms  # a NUL of their own: no one pass (the counts below are exact either way)
    elif joined.isascii():  # the same deletion by a translate table (cached per character on ASCII)
        held = joined.translate(_ascii_keeping(plain_expected)).split("\x00")
    else:
        others = re.compile(f"[^{re.escape(plain_expected)}\\x00]+") if plain_expected else re.compile("[^\\x00]+")
        held = others.sub("", joined).split("\x00")
    # The candidates whose first bound below is under 0.5 are dropped before the loop, in C: for t > 0,
    # 2.0 * k / t < 0.5 exactly when 4 * k < t (lengths are far below 2**52, where the division could
    # round up to 0.5); t = 0 keeps the candidate, as the loop does (on a long list of short lines,
    # skipping them one by one in the loop cost 0.05 s/MB).
    at = itertools.compress(range(len(norms)), map(
        operator.ge, map(operator.mul, map(len, held), itertools.repeat(4)),
        map(operator.add, map(len, norms), itertools.repeat(len(plain_expected)))))
    seen: set[str] = set()
    for cand, norm, kept in map(lambda i: (distinct[i], norms[i], held[i]), at):
        total = len(norm) + len(plain_expected)
        if total and (2.0 * len(kept) / total <= best_ratio or 2.0 * len(kept) / total < 0.5):
            continue  # the bound below is at most this one, so it would skip the candidate too
        if norm in seen:
            continue
        seen.add(norm)
        shared = sum(map(min, map(kept.count, chars), wanted_counts))
        bound = 2.0 * shared / total if total else 1.0
        if bound <= best_ratio or bound < 0.5:
            continue
        matcher.set_seq1(norm)
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = cand, ratio
    hint = f"; closest: {excerpt(best, 60)}" if best_ratio >= 0.5 else ""
    return Check(False, f"utterance {excerpt(params['expected_utterance'], 60)} not found verbatim{hint}")


# --------------------------------------------------------------------------------------------
# span_localization
# --------------------------------------------------------------------------------------------

_CLOCK = r"\d{1,2}(?:[:：]\d{2}){1,2}(?:\.\d+)?"
_SECONDS = r"\d+(?:\.\d+)?(?:\s*(?:s|secs?|seconds?|秒)(?![A-Za-z]))?"
_TIME = rf"(?:{_CLOCK}|{_SECONDS})"
_SEP = r"(?:-->|->|-|–|—|~|～|to|until|till|through|到|至)"
# Boundaries are Latin letters/digits only: a span glued to CJK text ("从0:12到0:15") still counts.
_SPAN_PATTERNS = (
    # 00:05-00:09, [3.5s - 7s], from 0:12 to 0:15, 3-7秒, 从0:12到0:15, 00:01 --> 00:04
    rf"(?<![A-Za-z0-9_.:：])(?P<a>{_TIME})\s*{_SEP}\s*(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    rf"\bbetween\s+(?P<a>{_TIME})\s+and\s+(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    rf"\b(?:start(?:s|ing)?|begin(?:s|ning)?)(?:\s+(?:at|time))?\s*[:=：]?\s*(?P<a>{_TIME})\s*[,;，；]?\s*"
    rf"(?:and\s+)?end(?:s|ing)?(?:\s+(?:at|time))?\s*[:=：]?\s*(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    rf"(?:开始|起始)\s*[:：]?\s*(?P<a>{_TIME})\s*[,，;；]?\s*(?:结束|截止)\s*[:：]?\s*(?P<b>{_TIME})",
)
# The same patterns written to run faster, equal match for match (tests/test_rules_video_ifbench.py
# compares them with _SPAN_PATTERNS). Python's regex engine skips quickly to a pattern's first
# character only when the pattern opens with one, not with a lookbehind or \b, so the first
# character comes first and the lookbehind checks what precedes it ("\bbetween" is
# "b(?<=\bb)etween"). The first pattern also looks ahead, before reading a time, for what its
# separator needs: after the number's digits, colons and points, optional spaces, a unit (letters)
# and spaces, a separator's first character. That holds wherever the pattern matches, so it removes
# no match; on digit-heavy text without spans (tables, CSV, JSON) most numbers fail it at once.
_CLOCK_REST = r"(?:[:：]\d{2}){1,2}(?:\.\d+)?"  # _CLOCK after its first \d
_SECONDS_REST = r"(?:\.\d+)?(?:\s*(?:s|secs?|seconds?|秒)(?![A-Za-z]))?"  # _SECONDS after its first \d
_SEP_AHEAD = r"(?=[\d:：.]*\s*[^\W\d_]*\s*[-–—~～到至tuTU])"
_FAST_SPAN_PATTERNS = (
    rf"(?P<a>\d(?<![A-Za-z0-9_.:：]\d){_SEP_AHEAD}(?:\d?{_CLOCK_REST}|\d*{_SECONDS_REST}))"
    rf"\s*{_SEP}\s*(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    rf"b(?<=\bb)etween\s+(?P<a>{_TIME})\s+and\s+(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    rf"[sb](?<=\b[sb])(?:tart(?:s|ing)?|egin(?:s|ning)?)(?:\s+(?:at|time))?\s*[:=：]?\s*(?P<a>{_TIME})\s*[,;，；]?\s*"
    rf"(?:and\s+)?end(?:s|ing)?(?:\s+(?:at|time))?\s*[:=：]?\s*(?P<b>{_TIME})(?![A-Za-z0-9_:：])",
    _SPAN_PATTERNS[3],
)
_SPAN_RES = {
    flags: tuple(re.compile(p, flags) for p in _FAST_SPAN_PATTERNS) for flags in (0, re.IGNORECASE)
}
_CLOCK_TOKEN = re.compile(_CLOCK.replace("[:：]", ":"))
_SECONDS_TOKEN = re.compile(r"(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|秒)?", re.IGNORECASE)
_START_KEYS = ("start", "start_time", "start_timestamp", "begin", "from", "start_sec", "start_s")
_END_KEYS = ("end", "end_time", "end_timestamp", "until", "to", "end_sec", "end_s")


def _seconds(token: Any) -> tuple[float, bool] | None:
    """(seconds, explicit) for a time token; explicit = a clock or a unit was written."""
    if not isinstance(token, str):
        if isinstance(token, bool):
            return None
        return (float(token), True) if isinstance(token, (int, float)) else None
    tok = token.strip()
    if "：" in tok:
        tok = tok.replace("：", ":")
    if ":" in tok and _CLOCK_TOKEN.fullmatch(tok):  # a clock holds a colon
        total = 0.0
        for part in tok.split(":"):
            total = total * 60 + float(part)
        return total, True
    m = _SECONDS_TOKEN.fullmatch(tok)
    if m:
        return float(m.group(1)), m.group(2) is not None
    return None


def _span_key(a: Any, b: Any) -> tuple[float, float] | None:
    sa, sb = _seconds(a), _seconds(b)
    if sa is None or sb is None or not (sa[1] or sb[1]):
        return None  # "3-7" without a clock or a unit is a number range, not a time span
    return round(sa[0], 3), round(sb[0], 3)


def _json_spans(value: Any) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    if isinstance(value, list):
        for item in value:
            spans += _json_spans(item)
    elif isinstance(value, dict):
        start = next((value[k] for k in _START_KEYS if k in value), None)
        end = next((value[k] for k in _END_KEYS if k in value), None)
        key = _span_key(start, end) if start is not None and end is not None else None
        if key is not None:
            spans.append(key)
        for item in value.values():
            spans += _json_spans(item)
    return spans


def _distinct_keys(hits: list[tuple[int, int, Any]]) -> dict[Any, None]:
    """The keys of the spans that count, each once: by start (the longer first at one start), a span
    that overlaps one already counted is skipped (e.g. matched by two patterns)."""
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
    # Distinct keys in first-seen order, kept as dict keys: a membership test on a list made a
    # response of many distinct spans (a long subtitle-like list) quadratic.
    keys: dict[Any, None] = {}
    last_end = -1
    for start, end, key in hits:
        if start < last_end:
            continue
        last_end = end
        keys.setdefault(key)
    return keys


def _builtin_span_keys(text: str, flags: int) -> dict[Any, None]:
    """``_distinct_keys(_builtin_spans(text, flags))``. When only the first pattern finds spans (a
    list of "3s - 7s" lines), they cannot overlap (one finditer's matches do not), so every one
    counts: their keys are read from ``findall``'s groups, without match objects, positions or a sort."""
    if _builtin_spans(text, flags, first=False):  # spans of several patterns: their positions decide
        return _distinct_keys(_builtin_spans(text, flags))
    compiled = _SPAN_RES.get(flags) or tuple(re.compile(p, flags) for p in _FAST_SPAN_PATTERNS)
    # (a loop, as in _builtin_spans: building the keys with zip and maps in C kept enough new container
    # objects alive to set off two full garbage collections per MB, 0.05 s each in a loaded process)
    read: dict[str, tuple[float, bool] | None] = {}  # token -> _rounded_seconds(token), each read once
    get = read.get
    keys: dict[Any, None] = {}
    for a, b in compiled[0].findall(text):  # (a, b) of each match
        sa = get(a, _UNREAD)
        if sa is _UNREAD:
            sa = read[a] = _rounded_seconds(a)
        sb = get(b, _UNREAD)
        if sb is _UNREAD:
            sb = read[b] = _rounded_seconds(b)
        if sa is None or sb is None or not (sa[1] or sb[1]):
            continue  # as in _span_key: a bare number range is no span
        keys[sa[0], sb[0]] = None
    return keys


def _builtin_spans(text: str, flags: int, first: bool = True) -> list[tuple[int, int, tuple[float, float]]]:
    """(start, end, key) of each built-in span of ``text`` (``first=False``: of every pattern but
    the first)."""
    hits = []
    compiled = _SPAN_RES.get(flags) or tuple(re.compile(p, flags) for p in _FAST_SPAN_PATTERNS)
    # _span_key inlined, each time token of this response read (and rounded) once: tokens repeat
    # ("2024" in every date of a list, each end of a span list the next start), and a function call
    # or two per match cost 0.2 s/MB on a list of 50k spans
    read: dict[str, tuple[float, bool] | None] = {}  # token -> (seconds to the ms, explicit) or None
    get = read.get
    lowered = text.lower()
    for i, (pattern, needs) in enumerate(zip(compiled, _SPAN_NEEDS)):
        if not (first or i) or not needs(lowered):
            continue
        for m in pattern.finditer(text):
            a, b = m.group(1, 2)  # "a" and "b": the patterns' only capturing groups
            sa = get(a, _UNREAD)
            if sa is _UNREAD:
                sa = read[a] = _rounded_seconds(a)
            sb = get(b, _UNREAD)
            if sb is _UNREAD:
                sb = read[b] = _rounded_seconds(b)
            if sa is None or sb is None or not (sa[1] or sb[1]):
                continue  # as in _span_key: a bare number range is no span
            hits.append((m.start(), m.end(), (sa[0], sb[0])))
    return hits


_UNREAD: Any = object()
# What each span pattern's match holds, lower-cased, whatever the case flag: "between"; "tart" or
# "beg", and "end" (letters whose every case-insensitive match lower-cases to the letter itself:
# not "s", which also matches "ſ", nor "i", which also matches "İ" and "ı"). A text without it is
# not searched. The first and last patterns are searched quickly anyway (they open on a digit or
# a CJK character).
_SPAN_NEEDS = (
    lambda low: True,
    lambda low: "between" in low,
    lambda low: ("tart" in low or "beg" in low) and "end" in low,
    lambda low: True,
)
# The unit characters of a time token, any case (and "ſ", a case-insensitive "s")
_UNIT_CHARS = "sSſeEcCoOnNdD秒"


def _rounded_seconds(token: str) -> tuple[float, bool] | None:
    r"""``_seconds`` of a time token a span pattern matched, its seconds rounded to the ms.

    Without a colon the token is a number, then optional whitespace and a unit (the seconds form
    of ``_TIME``), read directly: explicit when it ends in a unit, the number before the unit and
    the whitespace (``float`` skips whitespace as ``\s`` matches it)."""
    if ":" in token or "：" in token:
        seconds = _seconds(token)
        return None if seconds is None else (round(seconds[0], 3), seconds[1])
    # (a float of an integer is already rounded: round is skipped without a ".")
    if token[-1].isdigit():
        return (round(float(token), 3) if "." in token else float(token)), False
    number = token.rstrip(_UNIT_CHARS)
    return (round(float(number), 3) if "." in number else float(number)), True


@register(
    "span_localization",
    source=SOURCE,
    params_coerce=_scorer_params,
    dimension="format",
    route=ROUTE,
    params=[
        Param(
            "custom_patterns",
            "list[str]",
            nullable=True,
            help="extra regexes that also count as span expressions",
        ),
        Param("min_spans", "int", default=1, help="minimum number of distinct time spans"),
        Param("max_spans", "int", nullable=True, help="maximum number of distinct time spans"),
        Param("expected_span_count", "int", nullable=True, help="exact number of distinct time spans"),
        Param("ignore_case", "bool", default=True, help="case-insensitive matching"),
    ],
    # no params_check: bounds are comparisons to the scorer (a crossed or negative min/max, or an
    # expected count outside them, is a fixed verdict) and a bad custom pattern is a failed one
    description="Localise the answer with explicit time spans (start-end).",
)
@_fails_when_too_deep
@_scorer_lists
def span_localization(response: str, params: Mapping[str, Any]) -> Check:
    """Count distinct time-span expressions against min/max/expected.

    Built-in forms: ``00:05-00:09``, ``1:02:03 – 1:02:10``, ``[3.5s - 7s]``, ``3-7 seconds``,
    ``from 0:12 to 0:15``, ``between 0:12 and 0:15``, ``start: 0:12, end: 0:15``, ``00:01 --> 00:04``,
    ``从0:12到0:15``, ``开始 0:12 结束 0:15``, and JSON objects with ``start``/``end``-style keys. A
    bare number range (``3-7``) is not a span. ``custom_patterns`` add to these (the released
    scorer lets them replace the built-ins; here a response using either form is counted). Spans
    are counted once each: ``0:05-0:09`` restated as ``00:05 to 00:09`` is one span, and text
    matched by two patterns counts once. An empty response has 0 spans (it passes with
    ``min_spans=0``, as in the scorer).

    >>> span_localization("Jump at 00:05-00:09.", {"custom_patterns": None, "min_spans": 1,
    ...     "max_spans": None, "expected_span_count": None, "ignore_case": True}).passed
    True
    """
    text = _target(response)
    flags = re.IGNORECASE if params["ignore_case"] else 0
    for i, pattern in enumerate(params["custom_patterns"] or []):
        bad = _bad_regex_check(f"custom_patterns[{i}]", pattern, flags)
        if bad:
            return bad
    if not params["custom_patterns"]:
        keys = _builtin_span_keys(text, flags)
    else:
        hits: list[tuple[int, int, Any]] = list(_builtin_spans(text, flags))
        for pattern in params["custom_patterns"]:
            for m in re.finditer(pattern, text, flags):
                if m.end() == m.start():
                    continue
                # A custom match that is also a built-in span gets the same key, so it counts once.
                inner = _builtin_spans(m.group(0), flags)
                key = inner[0][2] if inner else _fold(squash_whitespace(m.group(0)), params["ignore_case"])
                hits.append((m.start(), m.end(), key))
        keys = _distinct_keys(hits)
    parsed = _scorer_json(text)  # the response or its first {...}/[...] block, as the scorer reads it
    # JSON spans not already found in the text; each JSON span counts, even one the JSON repeats
    json_keys = [k for k in _json_spans(parsed) if k not in keys] if parsed is not None else []
    n = len(keys) + len(json_keys)
    lo, hi, exact = params["min_spans"], params["max_spans"], params["expected_span_count"]
    expected = f"exactly {exact}" if exact is not None else bounds_text(lo, hi)
    passed = in_bounds(n, lo, hi) and (exact is None or n == exact)
    return Check(passed, f"{plural(n, 'distinct time span')}, expected {expected}")
