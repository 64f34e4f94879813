"""VSysBench: system-message constraints for multimodal models (5 main categories, 22 sub-categories).

Every id is prefixed ``vsys_`` so that it never clashes with another benchmark's ids; the
dimension is the VSysBench main category (``style``, ``format``, ``background_knowledge``,
``content_control``, ``visual_processing``). Sub-categories whose compliance is a property of the
text alone get a rule checker; those that need the image or a reading of tone/meaning are
judge-route. :data:`SUBCATEGORIES` maps each of the paper's 22 sub-categories to its ids.

Concrete formats decided here (the paper gives examples, not grammars):

- ``vsys_structured_output``: the whole response (one surrounding code fence stripped) must parse.
  JSON/YAML must be an object or array (a bare scalar is not "structured"); ``required_keys``
  are top-level object keys (exact); for XML they are element tags anywhere in the tree; for CSV
  and Markdown tables they are header columns (whitespace, ``**`` and case ignored). CSV needs a
  header plus at least one data row, two or more columns and the same field count on every row.
- ``vsys_metadata_injection`` encodings (field names compare case-insensitively, with spaces and
  hyphens read as ``_``):

  * ``json_line``: one line holding a JSON object, optionally after ``marker``
    (``[META] {"image_type": "photo", "count": 3}``);
  * ``yaml_block``: consecutive ``key: value`` lines, optionally under a ``marker`` line or
    between ``---`` lines;
  * ``bracket_block`` (default; marker default ``[META]``): ``[META] key: value; key: value [/META]``
    on one line (the closing tag is optional there), or the marker alone on a line followed by
    ``key: value`` lines up to the closing tag ``[/META]`` or a blank line. Pairs are separated
    by newlines, ``;``, ``|`` or ``,``;
  * ``hashtags``: a line made only of hashtags, each ``#field_value`` or ``#field:value``.

  ``yaml_frontmatter`` is the position ``---`` / YAML mapping / ``---`` at the very start.
  A mapping nested one level (``{"metadata": {...}}``) also provides its keys.
- ``vsys_template_sections`` markers: ``## Title``; ``[SOME_CAPS]`` (capitals, digits, ``_``,
  spaces); ``**Title**`` at line start; or ``custom``, a regex matched at the start of each line
  (title: named group ``title``, else group 1, else the match). Lines inside fenced code blocks
  are never markers. Every section needs a body; text before the first marker fails unless
  ``allow_preamble``. Titles compare case-insensitively, ``_`` read as a space, surrounding
  ``# * [ ] :`` ignored.
- ``vsys_dynamic_tagging``: a hashtag starts with a letter (``#1`` is not a tag), a mention is not
  preceded by a word character (e-mail addresses are not mentions). Position ``end``/``start``
  counts only the run of tags at the very end/start, separated by whitespace or ``, ; | / .``.
- ``vsys_bilingual_mapping``: the template's literal text must appear as written (whitespace
  flexible, curly quotes read as straight); a value cannot span lines. A placeholder at the very
  start of the template captures up to four words; one at the very end stops at ``, ; |`` or the
  end of the line.
- Keyword and blacklist matching: whole words for Latin script, substrings for CJK.

Sub-categories with more than one id (see :data:`SUBCATEGORIES`): Knowledge Sourcing
(``vsys_source_tags`` rule + ``vsys_knowledge_sourcing`` judge for tag correctness and
per-claim granularity), Content Inclusion (``vsys_required_prefix``, ``vsys_required_suffix``,
``vsys_keyword_frequency`` + ``vsys_content_inclusion`` judge for other positions/content),
Content Exclusion (``vsys_word_blacklist`` + ``vsys_content_exclusion`` judge for topics).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from ifpo.verifiers.registry import (
    Check,
    Param,
    all_checks,
    at_least_error,
    bounds_check,
    bounds_error,
    nonblank_check,
    nonblank_error,
    nonempty_strings_check,
    nonempty_strings_error,
    regex_error,
    register,
    register_judge,
)
from ifpo.verifiers.text import (
    bounds_text,
    cjk_length,
    count_phrase,
    count_words,
    excerpt,
    has_cjk,
    in_bounds,
    is_empty,
    iter_list_items,
    listing,
    match_lines,
    nonblank_lines,
    normalize_quotes,
    plural,
    split_paragraphs,
    split_sentences,
    strip_code_fences,
    table_cells,
)

SOURCE = "vsysbench"

# The five adversarial user-prefix styles of the misaligned condition (DJ is the paper's default).
OVERRIDE_STYLES = {
    "DJ": "Direct Jailbreak",
    "PP": "Polite Personal",
    "RP": "Roleplay",
    "AC": "Authority Claim",
    "UB": "Urgency Bypass",
}

_EMPTY = Check(False, "empty response")


# ----------------------------------------------------------------------------------------------
# Private helpers (shared text matching lives in verifiers.text, param checks in verifiers.registry)


@lru_cache(maxsize=256)
def _compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _norm_key(key: Any) -> str:
    return re.sub(r"[\s\-]+", "_", str(key).strip().strip("\"'").casefold())


def _yaml():
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - PyYAML is a project dependency
        raise ImportError("YAML checks need PyYAML: pip install pyyaml") from exc
    return yaml


def _mapping_keys(obj: Mapping[Any, Any]) -> list[str]:
    """Top-level keys plus those of mappings nested one level (``{"metadata": {...}}``)."""
    keys = [str(k) for k in obj]
    for value in obj.values():
        if isinstance(value, Mapping):
            keys.extend(str(k) for k in value)
    return keys


# ----------------------------------------------------------------------------------------------
# Format: Structured Output

_STRUCTURED_FORMATS = ("json", "yaml", "xml", "csv", "markdown_table")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def _missing_keys(found: list[str], required: list[str], *, loose: bool) -> list[str]:
    if loose:
        have = {_norm_header(k) for k in found}
        return [k for k in required if _norm_header(k) not in have]
    have_exact = set(found)
    return [k for k in required if k not in have_exact]


def _norm_header(cell: str) -> str:
    return " ".join(cell.strip().strip("*_`").split()).casefold()


def _parse_structured(text: str, fmt: str) -> tuple[str | None, list[str]]:
    """Return ``(error, keys_or_columns)``; error is None when the text parses as ``fmt``."""
    if fmt == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", []
        if not isinstance(obj, (dict, list)):
            return f"JSON top level is a {type(obj).__name__}, expected an object or array", []
        return None, list(obj) if isinstance(obj, dict) else ["<array>"]
    if fmt == "yaml":
        yaml = _yaml()
        try:
            obj = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            return f"not valid YAML ({str(exc).splitlines()[0]})", []
        if not isinstance(obj, (dict, list)):
            return f"YAML top level is a {type(obj).__name__}, expected a mapping or sequence", []
        return None, [str(k) for k in obj] if isinstance(obj, dict) else ["<array>"]
    if fmt == "xml":
        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            return f"not well-formed XML ({exc})", []
        return None, [el.tag for el in root.iter()]
    if fmt == "csv":
        rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
        if len(rows) < 2:
            return f"{plural(len(rows), 'CSV row')}, expected a header and at least one data row", []
        width = len(rows[0])
        if width < 2:
            return "CSV header has 1 column, expected at least 2 comma-separated columns", []
        for i, row in enumerate(rows[1:], start=2):
            if len(row) != width:
                return f"CSV row {i} has {len(row)} fields, the header has {width}", []
        return None, rows[0]
    # markdown_table: every non-blank line is a table row, the second one the separator.
    lines = nonblank_lines(text)
    if len(lines) < 3:
        return f"{plural(len(lines), 'line')}, expected a Markdown table (header, separator, rows)", []
    not_row = next((ln for ln in lines if "|" not in ln), None)
    if not_row is not None:
        return f"line {excerpt(not_row)} is not a table row (the response must be only the table)", []
    if not _TABLE_SEPARATOR.match(lines[1].strip()):
        return f"second line {excerpt(lines[1])} is not a separator row like '| --- | --- |'", []
    header = table_cells(lines[0])
    for i, line in enumerate([lines[1], *lines[2:]], start=2):
        n = len(table_cells(line))
        if n != len(header):
            return f"table line {i} has {n} cells, the header has {len(header)}", []
    return None, header


@register(
    "vsys_structured_output",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param("format", "str", required=True, choices=_STRUCTURED_FORMATS, help="serialization format"),
        Param(
            "required_keys",
            "list[str]",
            nullable=True,
            help="json/yaml: top-level object keys; xml: element tags; csv/markdown_table: header columns",
        ),
    ],
    description="Output the response strictly as {format}.",
    params_check=nonempty_strings_check("required_keys", allow_none=True),
)
def vsys_structured_output(response: str, params: Mapping[str, Any]) -> Check:
    """The whole response (one code fence stripped) parses as ``format`` and has ``required_keys``.

    Example: ``{"format": "json", "required_keys": ["objects"]}`` passes ``'{"objects": []}'``.

    >>> vsys_structured_output('{"objects": ["car"], "count": 1}',
    ... {'required_keys': ['objects', 'count'], 'format': 'json'}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    fmt = params["format"]
    text = strip_code_fences(response)
    error, found = _parse_structured(text, fmt)
    if error:
        return Check(False, error)
    required = params.get("required_keys") or []
    if required:
        if fmt in ("json", "yaml") and found == ["<array>"]:
            return Check(
                False, f"{fmt} top level is an array, expected an object with keys {listing(required)}"
            )
        missing = _missing_keys(found, required, loose=fmt in ("csv", "markdown_table"))
        if missing:
            what = {"xml": "element(s)", "csv": "column(s)", "markdown_table": "column(s)"}.get(fmt, "key(s)")
            return Check(False, f"{fmt} lacks required {what} {listing(missing)}")
    return Check(True, f"valid {fmt}" + (f" with {listing(required)}" if required else ""))


# ----------------------------------------------------------------------------------------------
# Format: Template

_MARKER_STYLES = ("markdown_heading", "bracketed_caps", "bold_inline", "custom")
_MARKER_PATTERNS = {
    "markdown_heading": re.compile(r"##[ \t]+(?P<title>\S.*?)[ \t#]*$"),
    "bracketed_caps": re.compile(r"\[(?P<title>[A-Z0-9][A-Z0-9_ &/\-]*)\]"),
    "bold_inline": re.compile(r"\*\*(?P<title>[^*\n]+?)\*\*"),
}
_MARKER_HINT = {
    "markdown_heading": "'## Title'",
    "bracketed_caps": "'[SECTION_NAME]'",
    "bold_inline": "'**Title**'",
}


def _norm_title(title: str) -> str:
    title = normalize_quotes(title).replace("_", " ")
    return " ".join(title.strip().strip("#*[]: \t").split()).casefold()


def _marker_match(line: str, style: str, pattern: str | None) -> tuple[str, str] | None:
    """``(title, rest of line)`` when ``line`` opens a section, else None."""
    stripped = line.strip()
    if style == "custom":
        m = _compile(pattern or "").match(stripped)
        if not m or not m.group(0):
            return None
        if "title" in m.re.groupindex:
            title = m.group("title") or ""
        else:
            title = (m.group(1) or "") if m.re.groups else m.group(0)
        return title, stripped[m.end() :]
    m = _MARKER_PATTERNS[style].match(stripped)
    if not m:
        return None
    if style == "bracketed_caps" and not re.search(r"[A-Z]", m.group("title")):
        return None  # "[1]" is a citation, not a section marker
    rest = "" if style == "markdown_heading" else stripped[m.end() :]
    return m.group("title"), rest


# What a line opening a section of a built-in style starts with, once stripped (its pattern's first
# characters): only such lines and fences are read one by one (below).
_MARKER_START = {"markdown_heading": "##", "bracketed_caps": "[", "bold_inline": "**"}


def _sections(text: str, style: str, pattern: str | None) -> tuple[str, list[tuple[str, str]]]:
    """Split into ``(preamble, [(title, body), ...])``; fenced code is never a marker."""
    start = _MARKER_START.get(style)
    if start is None:
        return _sections_line_by_line(text, style, pattern)
    # A built-in style: only a line whose stripped text starts with a fence or the marker's start can
    # toggle a fence or open a section. Those are found in C; the sections are slices of the lines between
    # (a line-by-line loop cost ~0.3 s per MB on a million blank lines). A fence line never opens a
    # built-in section (it starts with '`').
    lines = text.splitlines()
    keys = ("```", start)
    found = itertools.compress(range(len(lines)), map(str.startswith, map(str.lstrip, lines), itertools.repeat(keys)))
    in_fence = False
    marks: list[tuple[int, tuple[str, str]]] = []
    for i in found:
        if lines[i].lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence:
            hit = _marker_match(lines[i], style, pattern)
            if hit is not None:
                marks.append((i, hit))
    preamble = "\n".join(lines[: marks[0][0]] if marks else lines).strip()
    ends = [i for i, _ in marks[1:]] + [len(lines)]
    return preamble, [(title, "\n".join([rest, *lines[i + 1 : end]]).strip())
                      for (i, (title, rest)), end in zip(marks, ends)]


def _sections_line_by_line(text: str, style: str, pattern: str | None) -> tuple[str, list[tuple[str, str]]]:
    """:func:`_sections` for any style (a custom pattern may match any line): every line is read."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    in_fence = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
        hit = None if in_fence else _marker_match(line, style, pattern)
        if hit is not None:
            sections.append((hit[0], [hit[1]]))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return "\n".join(preamble).strip(), [(t, "\n".join(body).strip()) for t, body in sections]


def _template_params_check(p: Mapping[str, Any]) -> str | None:
    problem = at_least_error(p, "section_count", 1)
    if problem:
        return problem
    if p["marker"] == "custom":
        if p.get("pattern") is None:
            return "marker 'custom' needs a pattern (a regex matched at the start of each line)"
        problem = regex_error(p["pattern"])
        if problem:
            return problem
    elif p.get("pattern") is not None:
        return f"pattern is only used with marker 'custom', not {p['marker']!r}"
    titles = p.get("section_titles")
    if titles is not None and len(titles) != p["section_count"]:
        return f"section_titles has {len(titles)} titles but section_count is {p['section_count']}"
    return None


@register(
    "vsys_template_sections",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param("section_count", "int", required=True, help="exact number of sections"),
        Param("marker", "str", required=True, choices=_MARKER_STYLES, help="how a section starts"),
        Param("pattern", "str", nullable=True, help="regex for marker 'custom', matched at line start"),
        Param("section_titles", "list[str]", nullable=True, help="titles required, in this order"),
        Param("allow_preamble", "bool", default=False, help="accept text before the first section"),
    ],
    description="Structure the response in exactly {section_count} sections, each starting with a {marker} marker.",
    params_check=_template_params_check,
)
def vsys_template_sections(response: str, params: Mapping[str, Any]) -> Check:
    """Exactly ``section_count`` non-empty sections opened by the ``marker`` style.

    Example: ``{"section_count": 2, "marker": "markdown_heading"}`` passes ``"## A\\nx\\n## B\\ny"``.

    >>> vsys_template_sections('## Summary\\nA red car.\\n## Details\\nIt is parked.\\n## Verdict\\nSafe.',
    ... {'pattern': None, 'section_titles': None, 'allow_preamble': False, 'section_count': 3, 'marker': 'markdown_heading'}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    style, n = params["marker"], params["section_count"]
    preamble, sections = _sections(strip_code_fences(response), style, params.get("pattern"))
    hint = _MARKER_HINT.get(style, f"pattern {params.get('pattern')!r}")
    titles = [t for t, _ in sections]
    if len(sections) != n:
        found = f" ({listing(titles)})" if titles else ""
        return Check(
            False, f"{plural(len(sections), 'section')} opened by {hint}{found}, expected exactly {n}"
        )
    if preamble and not params["allow_preamble"]:
        return Check(
            False, f"text before the first section: {excerpt(preamble)}; start with the first {hint} marker"
        )
    empty = [t for t, body in sections if not body]
    if empty:
        return Check(False, f"section(s) {listing(empty)} have no content")
    expected = params.get("section_titles")
    if expected:
        for i, (got, want) in enumerate(zip(titles, expected), start=1):
            if _norm_title(got) != _norm_title(want):
                return Check(False, f"section {i} is titled {got!r}, expected {want!r}")
    return Check(True, f"{plural(n, 'section')} opened by {hint}: {listing(titles)}")


# ----------------------------------------------------------------------------------------------
# Format: Output Length

_LENGTH_UNITS = ("characters", "words", "sentences", "lines", "paragraphs")
_RELATIONS = ("exact", "at_most", "at_least", "between")


def _length_bounds(p: Mapping[str, Any]) -> tuple[int | None, int | None]:
    n, m, rel = p["n"], p.get("m"), p["relation"]
    return {"exact": (n, n), "at_most": (None, n), "at_least": (n, None), "between": (n, m)}[rel]


def _measure(text: str, unit: str, count_whitespace: bool) -> int:
    if unit == "characters":
        return len(text.replace("\r\n", "\n")) if count_whitespace else cjk_length(text)
    if unit == "words":
        return count_words(text)
    if unit == "sentences":
        return len(split_sentences(text))
    if unit == "lines":
        return len(nonblank_lines(text))
    return len(split_paragraphs(text))


def _length_params_check(p: Mapping[str, Any]) -> str | None:
    if p["relation"] == "between" and p.get("m") is None:
        return "relation 'between' needs m (the upper bound)"
    if p["relation"] != "between" and p.get("m") is not None:
        return f"m is only used with relation 'between', not {p['relation']!r}"
    return bounds_error(p, "n", "m", minimum=1)


@register(
    "vsys_output_length",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param("unit", "str", required=True, choices=_LENGTH_UNITS),
        Param("relation", "str", required=True, choices=_RELATIONS),
        Param("n", "int", required=True, help="the bound (lower bound for 'between')"),
        Param("m", "int", nullable=True, help="upper bound, only for relation 'between'"),
        Param("count_whitespace", "bool", default=True, help="characters: count spaces and newlines too"),
    ],
    description="Write a response of {relation} {n} {unit}.",
    params_check=_length_params_check,
)
def vsys_output_length(response: str, params: Mapping[str, Any]) -> Check:
    """Length in ``unit`` (ifpo's shared counting, one code fence stripped) meets ``relation``.

    Example: ``{"unit": "sentences", "relation": "at_most", "n": 2}`` fails 3 sentences
    with ``"3 sentences, expected at most 2"``. Words skip CJK characters (use ``characters``).

    >>> vsys_output_length('One. Two.',
    ... {'m': None, 'count_whitespace': True, 'unit': 'sentences', 'relation': 'at_most', 'n': 2}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    unit = params["unit"]
    text = strip_code_fences(response)
    count = _measure(text, unit, params["count_whitespace"])
    lo, hi = _length_bounds(params)
    got = plural(count, unit[:-1])
    if in_bounds(count, lo, hi):
        return Check(True, f"{got} ({bounds_text(lo, hi)})")
    hint = (
        "; CJK characters are not words, count them with unit 'characters'"
        if unit == "words" and has_cjk(text)
        else ""
    )
    return Check(False, f"{got}, expected {bounds_text(lo, hi)}{hint}")


# ----------------------------------------------------------------------------------------------
# Format: Metadata Injection

_META_POSITIONS = ("top", "end", "after_first_paragraph", "yaml_frontmatter")
_META_ENCODINGS = ("json_line", "yaml_block", "bracket_block", "hashtags")
_FIELD_KEY = re.compile(r"(?:^|[;|,\n])\s*[\"']?([^\W\d][\w\- ]*?)[\"']?\s*[:=]")
_HASHTAG_LINE = re.compile(r"#[^\s#,]+(?:[\s,]+#[^\s#,]+)*,?")


def _closing(marker: str | None) -> str | None:
    m = re.fullmatch(r"\[([^\]/]+)\]", marker or "")
    return f"[/{m.group(1)}]" if m else None


def _parse_json_line(lines: list[str], i: int, marker: str | None) -> tuple[int, list[str]] | None:
    line = lines[i].strip()
    if marker:
        if not line.startswith(marker):
            return None
        line = line[len(marker) :].strip()
        if not line and i + 1 < len(lines):  # the marker alone on its line, the JSON on the next
            i += 1
            line = lines[i].strip()
        close = _closing(marker)
        if close and line.endswith(close):
            line = line[: -len(close)].strip()
        elif close and i + 1 < len(lines) and lines[i + 1].strip() == close:
            i += 1
    if not (line.startswith("{") and line.endswith("}")):
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    return (i, _mapping_keys(obj)) if isinstance(obj, dict) else None


def _parse_yaml_block(lines: list[str], i: int, marker: str | None) -> tuple[int, list[str]] | None:
    j = i
    if marker:
        if lines[i].strip() != marker:
            return None
        j += 1
    fenced = j < len(lines) and lines[j].strip() == "---"
    if fenced:
        j += 1
    close = _closing(marker)
    start = j
    while j < len(lines) and lines[j].strip() and lines[j].strip() not in ("---", "...", close):
        j += 1
    if j == start:
        return None
    end = j - 1
    if j < len(lines) and (
        (fenced and lines[j].strip() in ("---", "...")) or (close and lines[j].strip() == close)
    ):
        end = j
    yaml = _yaml()
    try:
        obj = yaml.safe_load("\n".join(lines[start:j]))
    except yaml.YAMLError:
        return None
    return (end, _mapping_keys(obj)) if isinstance(obj, dict) and obj else None


def _parse_bracket_block(lines: list[str], i: int, marker: str | None) -> tuple[int, list[str]] | None:
    marker = marker or "[META]"
    close = _closing(marker)
    first = lines[i].strip()
    if not first.startswith(marker):
        return None
    rest = first[len(marker) :]
    if close and close in rest:
        content, end = rest[: rest.index(close)], i
    elif rest.strip():  # one-line form without a closing tag
        content, end = rest, i
    else:
        body: list[str] = []
        j = i + 1
        end = i
        while j < len(lines) and lines[j].strip():
            s = lines[j].strip()
            if close and close in s:
                body.append(s[: s.index(close)])
                end = j
                break
            body.append(s)
            end = j
            j += 1
        content = "\n".join(body)
    return end, [m.group(1) for m in _FIELD_KEY.finditer(content.strip())]


def _parse_hashtags(lines: list[str], i: int, marker: str | None) -> tuple[int, list[str]] | None:
    content = lines[i].strip()
    if marker:
        if not content.startswith(marker):
            return None
        content = content[len(marker) :].strip()
    tags: list[str] = []
    j = i
    while _HASHTAG_LINE.fullmatch(content):
        tags += re.findall(r"#([^\s#,]+)", content)
        j += 1
        if j >= len(lines):
            break
        content = lines[j].strip()
    return (j - 1, tags) if tags else None


_META_PARSERS = {
    "json_line": _parse_json_line,
    "yaml_block": _parse_yaml_block,
    "bracket_block": _parse_bracket_block,
    "hashtags": _parse_hashtags,
}


def _meta_starts(lines: list[str], encoding: str, marker: str | None) -> Iterator[int]:
    """The indices, in order, of the lines where a block of ``encoding`` can start: what its parser
    tests first (the stripped line starts with the marker, or with "{" / "#", or is the YAML marker;
    any non-blank line for YAML without one), found in C. Every other line's parse is None, so the
    searches over every line skip them (a parser call per line cost 0.18 s/MB on short lines)."""
    head = marker or {"bracket_block": "[META]", "json_line": "{", "hashtags": "#"}.get(encoding)
    if head and head == head.strip() and len(head.splitlines()) == 1:
        # One search of the joined lines (the lines hold no line end, "\n" stands for ^): with no
        # outer whitespace in the head, the stripped line starts with it (equals it, for the YAML
        # marker) exactly when the line does after its leading whitespace. Line numbers in C.
        joined = "\n".join(lines)
        tail = r"[^\S\n]*$" if encoding == "yaml_block" else ""
        pattern = re.compile(rf"^[^\S\n]*{re.escape(head)}{tail}", re.MULTILINE)
        return iter(match_lines(pattern, joined))
    stripped = map(str.strip, lines)
    if encoding == "yaml_block":
        flags = map(operator.eq, stripped, itertools.repeat(marker)) if marker else stripped
    else:
        flags = map(str.startswith, stripped, itertools.repeat(head))
    return itertools.compress(itertools.count(), flags)


def _field_present(field: str, keys: list[str], encoding: str) -> bool:
    want = _norm_key(field)
    for key in keys:
        got = _norm_key(key)
        if got == want or (encoding == "hashtags" and got.startswith(want) and got[len(want)] in "_:="):
            return True
    return False


def _frontmatter(lines: list[str]) -> tuple[int, list[str]] | None:
    if not lines or lines[0].strip() != "---":
        return None
    close = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), None)
    if close is None or close == 1:
        return None
    yaml = _yaml()
    try:
        obj = yaml.safe_load("\n".join(lines[1:close]))
    except yaml.YAMLError:
        return None
    return (close, _mapping_keys(obj)) if isinstance(obj, dict) else None


def _metadata_params_check(p: Mapping[str, Any]) -> str | None:
    problem = nonempty_strings_error("required_fields", p["required_fields"]) or nonblank_error(p, "marker")
    if problem:
        return problem
    if p["position"] == "yaml_frontmatter" and p.get("encoding") not in (None, "yaml_block"):
        return f"position 'yaml_frontmatter' implies encoding 'yaml_block', got {p['encoding']!r}"
    if p.get("marker") is not None and p["position"] == "yaml_frontmatter":
        return "marker is not used with position 'yaml_frontmatter' (the block is delimited by '---')"
    return None


@register(
    "vsys_metadata_injection",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param("position", "str", required=True, choices=_META_POSITIONS),
        Param(
            "encoding",
            "str",
            nullable=True,
            choices=_META_ENCODINGS,
            help="default bracket_block (yaml_block for position yaml_frontmatter)",
        ),
        Param("required_fields", "list[str]", required=True, help="field names the block must hold"),
        Param("marker", "str", nullable=True, help="block marker, e.g. '[META]' (bracket_block default)"),
    ],
    description="Insert a metadata block at the {position} of the response with fields {required_fields}.",
    params_check=_metadata_params_check,
)
def vsys_metadata_injection(response: str, params: Mapping[str, Any]) -> Check:
    """A metadata block in ``encoding`` sits at ``position`` and holds every ``required_fields``.

    Example: ``{"position": "top", "required_fields": ["image_type"]}`` passes
    ``"[META] image_type: photo [/META]\\nA red car."``.

    >>> vsys_metadata_injection('[META] image_type: photo; count: 3 [/META]\\nA red car.',
    ... {'encoding': None, 'marker': None, 'position': 'top', 'required_fields': ['image_type', 'count']}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    position, marker = params["position"], params.get("marker")
    encoding = params.get("encoding") or ("yaml_block" if position == "yaml_frontmatter" else "bracket_block")
    lines = response.strip().splitlines()
    shown_marker = marker or ("[META]" if encoding == "bracket_block" else None)
    label = f"metadata block ({encoding}" + (f", marker {shown_marker!r})" if shown_marker else ")")
    parse = _META_PARSERS[encoding]
    found: tuple[int, list[str]] | None = None
    if position == "yaml_frontmatter":
        found = _frontmatter(lines)
        if found is None:
            return Check(
                False,
                f"no YAML front matter ('---', key: value lines, '---') at the start; starts with {excerpt(lines[0])}",
            )
    elif position == "top":
        found = parse(lines, 0, marker)
    elif position == "after_first_paragraph":
        blank = next((k for k, ln in enumerate(lines) if not ln.strip()), None)
        start = (
            None if blank is None else next((k for k in range(blank, len(lines)) if lines[k].strip()), None)
        )
        if start is None:
            return Check(False, f"the response is one paragraph; expected {label} after the first paragraph")
        found = parse(lines, start, marker)
    else:  # end: the earliest start whose block reaches the last line is the whole block
        last = len(lines) - 1
        for k in _meta_starts(lines, encoding, marker):
            hit = parse(lines, k, marker)
            if hit is not None and hit[0] == last:
                found = hit
                break
    if found is None:
        where = {
            "top": "at the top",
            "end": "at the end",
            "after_first_paragraph": "after the first paragraph",
        }[position]
        elsewhere = next((k for k in _meta_starts(lines, encoding, marker) if parse(lines, k, marker)), None)
        extra = f"; found one at line {elsewhere + 1}" if elsewhere is not None else ""
        return Check(False, f"no {label} {where}{extra}")
    keys = found[1]
    missing = [f for f in params["required_fields"] if not _field_present(f, keys, encoding)]
    if missing:
        have = f"; it has {listing(keys)}" if keys else ""
        return Check(False, f"{label} lacks field(s) {listing(missing)}{have}")
    return Check(True, f"{label} at {position} with {listing(params['required_fields'])}")


# ----------------------------------------------------------------------------------------------
# Format: Dynamic Tagging

_TAG_SYNTAXES = ("hashtag", "mention", "xml_tag", "custom")
_TAG_POSITIONS = ("end", "start", "anywhere")
_TAG_SEP = re.compile(r"[\s,;|/·.!]*")
_TAG_REGEX = {
    "hashtag": r"(?<![\w#&/])#([^\W\d_]\w*)",
    "mention": r"(?<![\w@.])@([^\W\d]\w*(?:[.\-]\w+)*)",
}


def _tag_regex(p: Mapping[str, Any]) -> re.Pattern[str]:
    syntax = p["syntax"]
    if syntax == "xml_tag":
        name = re.escape(p["tag_name"])
        return _compile(rf"<{name}(?:\s[^>]*)?>(.*?)</{name}\s*>", re.DOTALL)
    if syntax == "custom":
        return _compile(p["pattern"])
    return _compile(_TAG_REGEX[syntax])


def _tag_value(m: re.Match[str]) -> str:
    value = m.group(1) if m.re.groups else m.group(0)
    return (value or "").strip()


def _edge_run(text: str, matches: list[re.Match[str]], at_end: bool) -> list[re.Match[str]]:
    """The tags forming the very end (or start) of ``text``, separated only by separators."""
    run: list[re.Match[str]] = []
    if at_end:
        edge = len(text)
        for m in reversed(matches):
            if not _TAG_SEP.fullmatch(text, m.end(), edge):
                break
            run.insert(0, m)
            edge = m.start()
    else:
        edge = 0
        for m in matches:
            gap_ok = (
                not text[edge : m.start()].strip() if not run else _TAG_SEP.fullmatch(text, edge, m.start())
            )
            if not gap_ok:
                break
            run.append(m)
            edge = m.end()
    return run


def _norm_tag(tag: str, ignore_case: bool) -> str:
    tag = normalize_quotes(tag).strip().lstrip("#@").strip()
    return tag.casefold() if ignore_case else tag


def _tagging_params_check(p: Mapping[str, Any]) -> str | None:
    syntax = p["syntax"]
    if syntax == "xml_tag" and not (p.get("tag_name") or "").strip():
        return "syntax 'xml_tag' needs tag_name (e.g. 'location' for <location>...</location>)"
    if syntax == "xml_tag" and not re.fullmatch(r"[A-Za-z_][\w.\-]*", p["tag_name"]):
        return f"tag_name {p['tag_name']!r} is not a valid XML tag name"
    if syntax == "custom":
        if p.get("pattern") is None:
            return "syntax 'custom' needs pattern (a regex; group 1, if any, is the tag value)"
        problem = regex_error(p["pattern"])
        if problem:
            return problem
    elif p.get("pattern") is not None:
        return f"pattern is only used with syntax 'custom', not {syntax!r}"
    if syntax != "xml_tag" and p.get("tag_name") is not None:
        return f"tag_name is only used with syntax 'xml_tag', not {syntax!r}"
    return bounds_error(p, "min_tags", "max_tags", minimum=1)


@register(
    "vsys_dynamic_tagging",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param(
            "syntax",
            "str",
            required=True,
            choices=_TAG_SYNTAXES,
            help="#Hash_Tag, @mention, <tag>v</tag>, regex",
        ),
        Param("tag_name", "str", nullable=True, help="element name for syntax 'xml_tag'"),
        Param("pattern", "str", nullable=True, help="regex for syntax 'custom'; group 1 is the value"),
        Param("position", "str", default="anywhere", choices=_TAG_POSITIONS),
        Param("min_tags", "int", default=1),
        Param("max_tags", "int", nullable=True),
        Param(
            "required_tags", "list[str]", nullable=True, help="exact tags expected (e.g. from ground truth)"
        ),
        Param("ignore_case", "bool", default=True, help="for required_tags"),
    ],
    description="Add {syntax} tags ({position}) derived from the image.",
    params_check=_tagging_params_check,
)
def vsys_dynamic_tagging(response: str, params: Mapping[str, Any]) -> Check:
    """At least ``min_tags`` tags of ``syntax`` at ``position``, including every ``required_tags``.

    Example: ``{"syntax": "hashtag", "position": "end", "required_tags": ["BrandDetected_Nike"]}``
    passes ``"A running shoe. #BrandDetected_Nike"``.

    >>> vsys_dynamic_tagging('A running shoe. #BrandDetected_Nike',
    ... {'tag_name': None, 'pattern': None, 'position': 'end', 'min_tags': 1, 'max_tags': None, 'required_tags': None, 'ignore_case': True, 'syntax': 'hashtag'}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    text = normalize_quotes(response).strip()
    position, syntax = params["position"], params["syntax"]
    matches = [m for m in _tag_regex(params).finditer(text) if _tag_value(m)]
    run = matches if position == "anywhere" else _edge_run(text, matches, at_end=position == "end")
    kind = {"xml_tag": f"<{params.get('tag_name')}> tag", "custom": "tag"}.get(syntax, syntax)
    where = "" if position == "anywhere" else f" at the {position}"
    lo, hi = params["min_tags"], params.get("max_tags")
    if not in_bounds(len(run), lo, hi):
        elsewhere = (
            f" ({len(matches)} elsewhere in the response)" if position != "anywhere" and matches else ""
        )
        edge = text[-40:] if position == "end" else text[:40]
        tail = (
            f"; the response {'ends' if position == 'end' else 'starts'} with {excerpt(edge)}"
            if not run and position != "anywhere"
            else ""
        )
        return Check(
            False, f"{plural(len(run), kind)}{where}, expected {bounds_text(lo, hi)}{elsewhere}{tail}"
        )
    values = [_tag_value(m) for m in run]
    required = params.get("required_tags") or []
    if required:
        have = {_norm_tag(v, params["ignore_case"]) for v in values}
        missing = [t for t in required if _norm_tag(t, params["ignore_case"]) not in have]
        if missing:
            return Check(False, f"missing tag(s) {listing(missing)}{where}; found {listing(values)}")
    return Check(True, f"{plural(len(run), kind)}{where}: {listing(values)}")


# ----------------------------------------------------------------------------------------------
# Format: Bilingual Mapping

_PLACEHOLDER = re.compile(r"\{(l1|l2)\}")
_LEAD_TERM = r"\w[^\s,;:|()<>\[\]{}=/]*(?:[ \t]+[^\s,;:|()<>\[\]{}=/]+){0,3}"


def _literal_regex(part: str) -> str:
    return "".join(r"[ \t]*" if tok.isspace() else re.escape(tok) for tok in re.split(r"(\s+)", part) if tok)


def _pair_regex(template: str, values: Mapping[str, str] | None = None) -> re.Pattern[str]:
    """Regex for one pair of ``template``; with ``values``, for that exact pair (case-insensitive)."""
    parts = _PLACEHOLDER.split(normalize_quotes(template))
    literals = [p for k, p in enumerate(parts) if k % 2 == 0]
    first_literal = next((p.strip() for p in literals if p.strip()), "")
    stop = rf"[ \t]*(?:[,;|]|$|{re.escape(first_literal)})"
    out: list[str] = []
    for k, part in enumerate(parts):
        if k % 2 == 0:
            out.append(_literal_regex(part))
        elif values is not None:
            value = r"\s+".join(re.escape(w) for w in normalize_quotes(values[part]).split())
            before = r"(?<!\w)" if k == 1 and not parts[0].strip() else ""
            after = r"(?!\w)" if k == len(parts) - 2 and not parts[-1].strip() else ""
            out.append(f"{before}(?i:{value}){after}")
        elif k == 1 and not parts[0].strip():
            out.append(f"(?P<{part}>{_LEAD_TERM})")
        elif k == len(parts) - 2 and not parts[-1].strip():
            out.append(rf"(?P<{part}>[^\n]+?)(?={stop})")
        else:
            out.append(rf"(?P<{part}>[^\n]+?)")
    return _compile("".join(out), re.MULTILINE)


def _bilingual_params_check(p: Mapping[str, Any]) -> str | None:
    template = p["delimiter_format"]
    names = _PLACEHOLDER.findall(template)
    if sorted(names) != ["l1", "l2"]:
        return f"delimiter_format must contain {{l1}} and {{l2}} exactly once each, got {template!r}"
    parts = _PLACEHOLDER.split(template)
    if not parts[2].strip():
        return f"delimiter_format {template!r} has no delimiter between {{l1}} and {{l2}}"
    problem = at_least_error(p, "min_pairs", 1)
    if problem:
        return problem
    for pair in p.get("pairs") or []:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) and v.strip() for v in pair)
        ):
            return f"each entry of pairs must be [l1, l2] (two non-empty strings), got {pair!r}"
    return None


@register(
    "vsys_bilingual_mapping",
    source=SOURCE,
    dimension="format",
    route="rule",
    params=[
        Param(
            "delimiter_format",
            "str",
            required=True,
            help="template with {l1} and {l2}, e.g. '[EN] {l1} / [FR] {l2}'",
        ),
        Param("min_pairs", "int", default=1, help="distinct pairs required"),
        Param("pairs", "list", nullable=True, help="[[l1, l2], ...] that must appear (case-insensitive)"),
    ],
    description="Map recognized items across languages in the format {delimiter_format}.",
    params_check=_bilingual_params_check,
)
def vsys_bilingual_mapping(response: str, params: Mapping[str, Any]) -> Check:
    """At least ``min_pairs`` distinct pairs written as ``delimiter_format``, including ``pairs``.

    Example: ``{"delimiter_format": "<en>{l1}</en> = <ko>{l2}</ko>"}`` passes
    ``"<en>cat</en> = <ko>고양이</ko>"``.

    >>> vsys_bilingual_mapping('<en>cat</en> = <ko>고양이</ko>',
    ... {'min_pairs': 1, 'pairs': None, 'delimiter_format': '<en>{l1}</en> = <ko>{l2}</ko>'}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    template = params["delimiter_format"]
    text = normalize_quotes(response)
    found = {
        (m.group("l1").strip().casefold(), m.group("l2").strip().casefold())
        for m in _pair_regex(template).finditer(text)
        if m.group("l1").strip() and m.group("l2").strip()
    }
    if len(found) < params["min_pairs"]:
        return Check(
            False,
            f"{plural(len(found), 'pair')} in the format {template!r}, expected at least {params['min_pairs']}",
        )
    missing = [
        pair
        for pair in params.get("pairs") or []
        if not _pair_regex(template, {"l1": pair[0], "l2": pair[1]}).search(text)
    ]
    if missing:
        shown = ", ".join(template.replace("{l1}", a).replace("{l2}", b) for a, b in missing[:3])
        return Check(False, f"missing pair(s): {shown}")
    return Check(True, f"{plural(len(found), 'pair')} in the format {template!r}")


# ----------------------------------------------------------------------------------------------
# Content Control: Content Inclusion (rule-checkable forms) and Content Exclusion


def _affix(response: str, params: Mapping[str, Any], name: str) -> Check:
    if is_empty(response):
        return _EMPTY
    want = normalize_quotes(params[name].strip())
    text = normalize_quotes(response.strip())
    a, b = (text, want) if not params["ignore_case"] else (text.casefold(), want.casefold())
    at_start = name == "prefix"
    ok = a.startswith(b) if at_start else a.endswith(b)
    if ok:
        return Check(True, f"{'starts' if at_start else 'ends'} with {want!r}")
    edge = text[: len(want) + 10] if at_start else text[-(len(want) + 10) :]
    return Check(False, f"response {'starts' if at_start else 'ends'} with {excerpt(edge)}, expected {want!r}")


@register(
    "vsys_required_prefix",
    source=SOURCE,
    dimension="content_control",
    route="rule",
    params=[
        Param("prefix", "str", required=True, help="exact text the response must begin with"),
        Param("ignore_case", "bool", default=False),
    ],
    description="Always begin your response with the exact prefix: {prefix}",
    params_check=nonblank_check("prefix"),
)
def vsys_required_prefix(response: str, params: Mapping[str, Any]) -> Check:
    """The response, leading whitespace stripped, starts with ``prefix`` (quotes normalised).

    Example: ``{"prefix": "[System Alert]"}`` passes ``"[System Alert] Two cats."``.

    >>> vsys_required_prefix('[System Alert] Two cats.',
    ... {'ignore_case': False, 'prefix': '[System Alert]'}).passed
    True
    """
    return _affix(response, params, "prefix")


@register(
    "vsys_required_suffix",
    source=SOURCE,
    dimension="content_control",
    route="rule",
    params=[
        Param("suffix", "str", required=True, help="exact text the response must end with"),
        Param("ignore_case", "bool", default=False),
    ],
    description="Always end your response with the exact text: {suffix}",
    params_check=nonblank_check("suffix"),
)
def vsys_required_suffix(response: str, params: Mapping[str, Any]) -> Check:
    """The response, trailing whitespace stripped, ends with ``suffix`` (quotes normalised).

    Example: ``{"suffix": "- VisionBot"}`` passes ``"Two cats.\\n- VisionBot"``.

    >>> vsys_required_suffix('Two cats.\\n- VisionBot',
    ... {'ignore_case': False, 'suffix': '- VisionBot'}).passed
    True
    """
    return _affix(response, params, "suffix")


@register(
    "vsys_word_blacklist",
    source=SOURCE,
    dimension="content_control",
    route="rule",
    params=[
        Param("words", "list[str]", required=True, help="forbidden words or phrases"),
        Param("ignore_case", "bool", default=True),
        Param("match_plurals", "bool", default=False, help="also forbid word+s / word+es"),
    ],
    description="You are strictly prohibited from using the words {words}.",
    params_check=nonempty_strings_check("words"),
)
def vsys_word_blacklist(response: str, params: Mapping[str, Any]) -> Check:
    """None of ``words`` occurs (whole words for Latin script, substrings for CJK).

    Example: ``{"words": ["car"]}`` fails ``"A red car."`` and passes ``"A red carpet."``.

    >>> vsys_word_blacklist('A red vehicle is parked.',
    ... {'ignore_case': True, 'match_plurals': False, 'words': ['car', 'person']}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    hits = [
        (w, count_phrase(response, w, ignore_case=params["ignore_case"], plurals=params["match_plurals"]))
        for w in params["words"]
    ]
    used = [f"{w!r} ({n}x)" if n > 1 else repr(w) for w, n in hits if n]
    if used:
        return Check(False, f"uses forbidden word(s) {', '.join(used)}")
    return Check(True, f"none of {plural(len(hits), 'forbidden word')} used")


@register(
    "vsys_keyword_frequency",
    source=SOURCE,
    dimension="content_control",
    route="rule",
    params=[
        Param("keyword", "str", required=True),
        Param("min_occurrences", "int", required=True),
        Param("max_occurrences", "int", nullable=True),
        Param("ignore_case", "bool", default=True),
    ],
    description="Use the keyword {keyword} at least {min_occurrences} times.",
    params_check=all_checks(
        nonblank_check("keyword"),
        bounds_check("min_occurrences", "max_occurrences", reject_unbounded=True),
    ),
)
def vsys_keyword_frequency(response: str, params: Mapping[str, Any]) -> Check:
    """``keyword`` occurs min..max times (whole word for Latin script, substring for CJK).

    Example: ``{"keyword": "safety", "min_occurrences": 2}`` fails ``"Safety first."`` (1 time).

    >>> vsys_keyword_frequency('Safety first. Stay safe; safety matters.',
    ... {'max_occurrences': None, 'ignore_case': True, 'keyword': 'safety', 'min_occurrences': 2}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    keyword = params["keyword"]
    n = count_phrase(response, keyword, ignore_case=params["ignore_case"])
    lo, hi = params["min_occurrences"], params.get("max_occurrences")
    got = f"{keyword!r} appears {plural(n, 'time')}"
    if in_bounds(n, lo, hi):
        return Check(True, got)
    return Check(False, f"{got}, expected {bounds_text(lo, hi)}")


# ----------------------------------------------------------------------------------------------
# Background Knowledge: Knowledge Sourcing (rule-checkable form)

_TRAILING_PUNCT = ".!?。！？,;:\"'"
_TAG_ONLY_STRIP = _TRAILING_PUNCT + " \t\n"  # what a unit holding only tags may have besides them


_HEADING_START = re.compile(r"#{1,6}\s")


def _count_untagged(units: list[str], tags: list[str], placement: str) -> int:
    """How many units :func:`_tagged` refuses, read in one pass over the units joined.

    A unit ends with a tag exactly when a tag is followed only by whitespace and trailing
    punctuation to its end (what _tagged's loop strips one character at a time), and at most one
    such match ends at a unit's end; units holding a NUL are counted one by one."""
    joined = "\x00".join(units)  # (a unit holds a NUL when there are more than the joins)
    if placement != "end" or joined.count("\x00") != len(units) - 1 or any("\x00" in t for t in tags):
        return sum(1 for u in units if not _tagged(u, tags, placement))
    tail = "".join(re.escape(c) for c in _TRAILING_PUNCT)
    pattern = _compile("(?:" + "|".join(re.escape(t) for t in tags) + rf")[\s{tail}]*(?=\x00|\Z)")
    return len(units) - len(pattern.findall(joined))


def _tagged(unit: str, tags: list[str], placement: str) -> bool:
    if placement == "contains":
        return any(t in unit for t in tags)
    ends = tuple(tags)
    unit = unit.rstrip()
    while unit:
        if unit.endswith(ends):
            return True
        if unit[-1] not in _TRAILING_PUNCT:
            return False
        unit = unit[:-1].rstrip()
    return False


@register(
    "vsys_source_tags",
    source=SOURCE,
    dimension="background_knowledge",
    route="rule",
    params=[
        Param(
            "tags", "list[str]", required=True, help="allowed source tags, e.g. ['[Visible]', '[External]']"
        ),
        Param("granularity", "str", default="sentence", choices=("sentence", "paragraph")),
        Param(
            "placement",
            "str",
            default="end",
            choices=("end", "contains"),
            help="tag ends or is inside each unit",
        ),
        Param("ignore_case", "bool", default=False),
    ],
    description="Tag every {granularity} with its source, one of {tags}.",
    params_check=nonempty_strings_check("tags"),
)
def vsys_source_tags(response: str, params: Mapping[str, Any]) -> Check:
    """Every sentence (or paragraph) ends with (or contains) one of ``tags``; headings are skipped.

    Example: ``{"tags": ["[Visible]", "[External]"]}`` passes
    ``"A tower [Visible]. Built in 1889 [External]."``. A tag alone after a full stop belongs to
    the sentence before it.

    >>> vsys_source_tags('A tower [Visible]. Built in 1889 [External].',
    ... {'granularity': 'sentence', 'placement': 'end', 'ignore_case': False, 'tags': ['[Visible]', '[External]']}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    fold = (lambda s: s.casefold()) if params["ignore_case"] else (lambda s: s)
    tags = [fold(normalize_quotes(t.strip())) for t in params["tags"]]
    text = fold(normalize_quotes(response))
    granularity = params["granularity"]
    raw = split_sentences(text) if granularity == "sentence" else split_paragraphs(text)
    units: list[str] = []
    starts = tuple(tags)
    # a unit whose first character is kept by every tag removal and by the strip below is no
    # tag-only unit (no removal can take a first character that no tag starts with)
    kept_first = set(_TAG_ONLY_STRIP) | {t[0] for t in tags}
    # Nor does it start with a tag or a heading: a unit whose first character is none of these is
    # kept as it is. Only the others are read in the loop below; the first characters of all are
    # read in C, and the plain units between two others are taken as a slice (a Python step per
    # unit cost 0.08 s/MB on short lines).
    special = kept_first | {"#"}
    # (a unit with a character that is neither stripped nor in a tag keeps it through every removal
    # and the strip: it is no tag-only unit, found without the removals)
    tag_or_strip = "".join(set(_TAG_ONLY_STRIP).union(*tags))
    tagless = not any(map(text.__contains__, tags))
    if tagless and granularity == "sentence":
        # no unit starts with a tag, and none is tag-only: a sentence holds a letter or digit
        # (split_sentences drops the other pieces), which no stripping takes and, with no tag in the
        # text, no removal either; only a unit starting with "#" may be other than kept (a heading)
        others = [m.start() for m in re.finditer("#", "".join(map(operator.itemgetter(0), raw)))] if "#" in text else []
    else:
        firsts = "".join(map(operator.itemgetter(0), raw))
        others = [m.start() for m in re.finditer("[" + re.escape("".join(sorted(special))) + "]", firsts)]
        # of those, only a unit that starts with a tag or "#", or is nothing but tags and stripped
        # characters, can be other than kept as it is (found in C: a quote or a mark starts many units,
        # and on "[x. " lines every unit is made of tag characters: the removals are made there too, in
        # the loop's order)
        candidates = list(map(raw.__getitem__, others))
        maybe_tag_only = list(map(operator.not_, map(str.strip, candidates, itertools.repeat(tag_or_strip))))
        rests = list(itertools.compress(candidates, maybe_tag_only))
        for t in tags:
            rests = list(map(str.replace, rests, itertools.repeat(t), itertools.repeat("")))
        tag_only = iter(map(operator.not_, map(str.strip, rests, itertools.repeat(_TAG_ONLY_STRIP))))
        tag_only_flags = [next(tag_only) if maybe else False for maybe in maybe_tag_only]
        others = list(itertools.compress(others, map(
            operator.or_, map(str.startswith, candidates, itertools.repeat((*starts, "#"))), tag_only_flags)))
    done = 0
    for i in others:
        units += raw[done:i]
        done = i + 1
        unit = raw[i]
        lead = next((t for t in tags if unit.startswith(t)), None) if unit.startswith(starts) else None
        if units and lead is not None:  # "... blue. [Visible] Next ...": the tag closes the previous one
            units[-1] = f"{units[-1]} {lead}"
            unit = unit[len(lead) :].strip()
            if not unit:
                continue
        if units and unit[0] in kept_first and not unit.strip(tag_or_strip):
            rest = unit
            for t in tags:
                rest = rest.replace(t, "")
            if not rest.strip(_TAG_ONLY_STRIP):
                units[-1] = f"{units[-1]} {unit}"  # "… blue. [Visible]": the tag closes the previous sentence
                continue
        if not (unit[0] == "#" and _HEADING_START.match(unit)):
            units.append(unit)
    units += raw[done:]
    if not units:
        return Check(False, f"no {granularity} to tag")
    missing = len(units) if tagless else _count_untagged(units, tags, params["placement"])  # (no tag: none has one)
    if missing:
        how = "end with" if params["placement"] == "end" else "contain"
        first = next(u for u in units if not _tagged(u, tags, params["placement"]))
        return Check(
            False,
            f"{missing} of {len(units)} {granularity}s do not {how} a tag "
            f"({listing(params['tags'])}); first: {excerpt(first)}",
        )
    return Check(True, f"all {plural(len(units), granularity)} tagged")


# ----------------------------------------------------------------------------------------------
# Visual Processing: Object Itemization

_ITEM_STYLES = ("object_prefix", "numbered", "id_codes")


def _item_numbers(text: str, p: Mapping[str, Any]) -> tuple[list[int], str]:
    """Item numbers in order (first appearance for labels/codes) and a label for reasons."""
    style = p["style"]
    if style == "numbered":
        return [
            it.number for it in iter_list_items(text) if it.kind == "numbered" and it.number is not None
        ], "numbered item"
    if style == "object_prefix":
        label = p["label"]
        regex = _compile(rf"(?<!\w){re.escape(label)}[_\- ]?(\d+)(?!\d)", re.IGNORECASE)
        numbers = [int(m.group(1)) for m in regex.finditer(text)]
        name = f"{label}_N item"
    else:
        numbers = []
        for m in _compile(p["pattern"]).finditer(text):
            digits = m.group(1) if m.re.groups else (re.findall(r"\d+", m.group(0)) or [""])[-1]
            if digits and digits.isdigit():
                numbers.append(int(digits))
        name = "ID code"
    seen: list[int] = []
    for n in numbers:
        if n not in seen:
            seen.append(n)
    return seen, name


def _itemization_params_check(p: Mapping[str, Any]) -> str | None:
    if p["style"] == "id_codes":
        if p.get("pattern") is None:
            return "style 'id_codes' needs pattern, a regex whose group 1 is the number (e.g. 'OBJ-(\\d+)')"
        problem = regex_error(p["pattern"])
        if problem:
            return problem
    elif p.get("pattern") is not None:
        return f"pattern is only used with style 'id_codes', not {p['style']!r}"
    return nonblank_error(p, "label") or at_least_error(p, "expected_count", 1)


@register(
    "vsys_object_itemization",
    source=SOURCE,
    dimension="visual_processing",
    route="rule",
    params=[
        Param("style", "str", required=True, choices=_ITEM_STYLES, help="Object_1:, 1./2., or ID codes"),
        Param("label", "str", default="Object", help="object_prefix label: Object_1, Truck 1, ..."),
        Param(
            "pattern", "str", nullable=True, help="id_codes regex; group 1 (or the last digits) is the number"
        ),
        Param("expected_count", "int", nullable=True, help="number of objects in the image, when known"),
    ],
    description="Enumerate each visible object as a separate, sequentially numbered item ({style}).",
    params_check=_itemization_params_check,
)
def vsys_object_itemization(response: str, params: Mapping[str, Any]) -> Check:
    """Objects are numbered 1, 2, ..., k in order (``expected_count`` = k when given).

    Example: ``{"style": "object_prefix", "expected_count": 2}`` passes
    ``"Object_1: red car\\nObject_2: bus"``. Labels and codes count by first appearance.

    >>> vsys_object_itemization('Object_1: car\\nObject_2: bus\\nObject_1 is left of Object_2.',
    ... {'label': 'Object', 'pattern': None, 'expected_count': 2, 'style': 'object_prefix'}).passed
    True
    """
    if is_empty(response):
        return _EMPTY
    numbers, name = _item_numbers(response, params)
    if not numbers:
        hint = {"object_prefix": f"'{params['label']}_1:'", "numbered": "'1.'"}.get(
            params["style"], repr(params.get("pattern"))
        )
        return Check(False, f"no {name}s found; start items with {hint}")
    expected = list(range(1, len(numbers) + 1))
    if numbers != expected:
        bad = next(i for i, (a, b) in enumerate(zip(numbers, expected)) if a != b)
        shown = ", ".join(map(str, numbers[: bad + 1]))
        return Check(
            False, f"numbering {shown} is not sequential from 1 (item {bad + 1} is numbered {numbers[bad]})"
        )
    count = params.get("expected_count")
    if count is not None and len(numbers) != count:
        return Check(False, f"{plural(len(numbers), name)}, expected {count}")
    return Check(True, f"{plural(len(numbers), name)} numbered 1-{len(numbers)}")


# ----------------------------------------------------------------------------------------------
# Judge-route sub-categories: the judge answers the description as a yes/no checklist question.

register_judge(
    "vsys_persona_role_play",
    source=SOURCE,
    dimension="style",
    params=[
        Param("persona", "str", required=True, help="e.g. 'a seasoned art critic'"),
        Param(
            "signature_behavior", "str", nullable=True, help="catchphrase, vocabulary lock, structural quirk"
        ),
    ],
    description="Respond as {persona}, keeping the persona's tone and domain terminology throughout.",
)
register_judge(
    "vsys_tone_manner",
    source=SOURCE,
    dimension="style",
    params=[
        Param("tone", "str", required=True, help="e.g. 'cold, objective and factual'"),
        Param(
            "enforcement", "str", nullable=True, help="must use marker, must avoid marker, must match pattern"
        ),
    ],
    description="Respond strictly in a {tone} tone.",
)
register_judge(
    "vsys_audience_adaptation",
    source=SOURCE,
    dimension="style",
    params=[
        Param("audience", "str", required=True, help="e.g. 'a 5-year-old child'"),
        Param(
            "adaptation_signal",
            "str",
            nullable=True,
            help="vocabulary substitution, inline glossing, analogy",
        ),
    ],
    description="Adapt vocabulary and tone for {audience}.",
)
register_judge(
    "vsys_language_anchoring",
    source=SOURCE,
    dimension="style",
    params=[
        Param("language", "str", required=True, help="output language, e.g. 'Korean'"),
        Param(
            "quotation_handling", "str", nullable=True, help="preserve original in quotes, transliterate only"
        ),
    ],
    description="Write the whole response in {language}, whatever the language of the input or the image text.",
)
register_judge(
    "vsys_narrative_perspective",
    source=SOURCE,
    dimension="style",
    params=[
        Param("person", "str", required=True, help="first person singular, second person, third person, ..."),
        Param("tense", "str", nullable=True, help="simple past, simple present, present continuous, ..."),
        Param(
            "epistemic_stance",
            "str",
            nullable=True,
            help="certain assertive, evidential witness, speculative",
        ),
    ],
    description="Narrate exclusively in the {person} point of view.",
)
register_judge(
    "vsys_prior_knowledge_restriction",
    source=SOURCE,
    dimension="background_knowledge",
    params=[
        Param("restriction", "str", required=True, help="e.g. 'no real-world proper names'"),
        Param("allowed_source", "str", nullable=True, help="image pixels only, image + user message only"),
        Param(
            "substitution", "str", nullable=True, help="describe by appearance, use a generic category term"
        ),
    ],
    description="Do not use external knowledge ({restriction}); rely only on what is visible.",
)
register_judge(
    "vsys_domain_terminology",
    source=SOURCE,
    dimension="background_knowledge",
    params=[
        Param("terminology", "str", required=True, help="e.g. 'anatomical terms', 'ICD-10 codes'"),
        Param(
            "term_map",
            "dict",
            nullable=True,
            help="lay term -> required term, e.g. {'collarbone': 'clavicle'}",
        ),
        Param("enforcement", "str", nullable=True, help="must use the specific term, abbreviation only, ..."),
    ],
    description="Use {terminology} for every relevant concept.",
)
register_judge(
    "vsys_knowledge_sourcing",
    source=SOURCE,
    dimension="background_knowledge",
    params=[
        Param("tags", "list[str]", required=True, help="source tags, e.g. ['[Visible]', '[External]']"),
        Param("granularity", "str", nullable=True, help="per sentence, per factual claim, summary table"),
    ],
    description="Attribute every factual claim to its correct source with one of {tags}.",
)
register_judge(
    "vsys_content_inclusion",
    source=SOURCE,
    dimension="content_control",
    params=[
        Param("element", "str", required=True, help="required element, e.g. 'a user safety reminder'"),
        Param(
            "position", "str", nullable=True, help="very first token, very last token, every paragraph start"
        ),
    ],
    description="Include {element} in the response.",
)
register_judge(
    "vsys_content_exclusion",
    source=SOURCE,
    dimension="content_control",
    params=[
        Param("target", "str", required=True, help="topic or content to avoid"),
        Param(
            "substitution_policy", "str", nullable=True, help="paraphrase, drop silently, explicit refusal"
        ),
    ],
    description="Do not mention {target}.",
)
register_judge(
    "vsys_conditional_branching",
    source=SOURCE,
    dimension="content_control",
    params=[
        Param("condition", "str", required=True, help="visual trigger, e.g. 'the image is a document'"),
        Param(
            "branches",
            "dict",
            required=True,
            help="outcome -> required behaviour, e.g. {'yes': 'output JSON'}",
        ),
        Param(
            "active_branch", "str", nullable=True, help="the branch that applies to this image, when known"
        ),
    ],
    description="Depending on whether {condition}, follow the matching branch: {branches}.",
)
register_judge(
    "vsys_numerical_branching",
    source=SOURCE,
    dimension="content_control",
    params=[
        Param("quantity", "str", required=True, help="what is counted, e.g. 'boxes'"),
        Param(
            "branches",
            "dict",
            required=True,
            help="threshold -> behaviour, e.g. {'>=3': 'prepend [STOCK_SUFFICIENT]'}",
        ),
        Param("expected_count", "number", nullable=True, help="the true count, when known"),
    ],
    description="Count the {quantity} and act on the threshold: {branches}.",
)
register_judge(
    "vsys_dynamic_calculation",
    source=SOURCE,
    dimension="content_control",
    params=[
        Param("operation", "str", required=True, help="e.g. 'count x $0.75'"),
        Param("output_format", "str", nullable=True, help="e.g. '[Count] x $0.75 = $[Total]'"),
        Param("expected_result", "str", nullable=True, help="the correct result, when known"),
    ],
    description="Compute {operation} from the visual count and report it.",
)
register_judge(
    "vsys_visual_justification",
    source=SOURCE,
    dimension="visual_processing",
    params=[
        Param("evidence_format", "str", required=True, help="e.g. 'Evidence: [visual cue]'"),
        Param("specificity", "str", nullable=True, help="abstract visual cue, specific pixel region"),
    ],
    description="State the specific visual evidence used, in the format {evidence_format}.",
)
register_judge(
    "vsys_spatial_referencing",
    source=SOURCE,
    dimension="visual_processing",
    params=[
        Param("tag_format", "str", required=True, help="e.g. '[Position: top/bottom/left/right]'"),
        Param(
            "coordinate_system",
            "str",
            nullable=True,
            help="directional words, pixel coordinates, bounding box",
        ),
        Param("targets", "str", nullable=True, help="which objects need a location, e.g. 'every object'"),
    ],
    description="Give each described object's location as {tag_format}, and the locations must be correct.",
)


# ----------------------------------------------------------------------------------------------
# Taxonomy: main category -> [(sub-category as in the paper's Table 9, ifpo type id), ...].
# A sub-category listed twice has a rule id for its checkable forms and a judge id for the rest.

SUBCATEGORIES: dict[str, list[tuple[str, str]]] = {
    "style": [
        ("Persona & Role-Play", "vsys_persona_role_play"),
        ("Tone & Manner", "vsys_tone_manner"),
        ("Audience Adaptation", "vsys_audience_adaptation"),
        ("Language Anchoring", "vsys_language_anchoring"),
        ("Narrative Perspective", "vsys_narrative_perspective"),
    ],
    "format": [
        ("Structured Output", "vsys_structured_output"),
        ("Template", "vsys_template_sections"),
        ("Bilingual Mapping", "vsys_bilingual_mapping"),
        ("Output Length", "vsys_output_length"),
        ("Metadata Injection", "vsys_metadata_injection"),
        ("Dynamic Tagging", "vsys_dynamic_tagging"),
    ],
    "background_knowledge": [
        ("Prior Knowledge Restriction", "vsys_prior_knowledge_restriction"),
        ("Domain Terminology", "vsys_domain_terminology"),
        ("Knowledge Sourcing", "vsys_source_tags"),
        ("Knowledge Sourcing", "vsys_knowledge_sourcing"),
    ],
    "content_control": [
        ("Content Inclusion", "vsys_required_prefix"),
        ("Content Inclusion", "vsys_required_suffix"),
        ("Content Inclusion", "vsys_keyword_frequency"),
        ("Content Inclusion", "vsys_content_inclusion"),
        ("Content Exclusion", "vsys_word_blacklist"),
        ("Content Exclusion", "vsys_content_exclusion"),
        ("Conditional Branching", "vsys_conditional_branching"),
        ("Numerical Branching", "vsys_numerical_branching"),
        ("Dynamic Calculation", "vsys_dynamic_calculation"),
    ],
    "visual_processing": [
        ("Object Itemization", "vsys_object_itemization"),
        ("Visual Justification", "vsys_visual_justification"),
        ("Spatial Referencing", "vsys_spatial_referencing"),
    ],
}


def subcategory_of(type_id: str) -> tuple[str, str]:
    """``(main category, sub-category)`` of a ``vsys_`` id; raises ValueError for other ids."""
    for main, entries in SUBCATEGORIES.items():
        for name, tid in entries:
            if tid == type_id:
                return main, name
    raise ValueError(f"{type_id!r} is not a VSysBench type id (see SUBCATEGORIES)")
