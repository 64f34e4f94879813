"""Corruptors for VSysBench's system-message types (``verifiers/rules/vsysbench.py``)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ifpo.data_builders.corruptors.counts import (
    char_families,
    line_families,
    paragraph_families,
    sentence_families,
    word_families,
)
from ifpo.data_builders.corruptors.edits import (
    apply_edits,
    fence_body,
    flip_first,
    letter_style,
    styled,
    synonym,
    with_body,
)
from ifpo.data_builders.corruptors.formats import csv_variants, json_variants, lead_line, md_table_variants
from ifpo.data_builders.corruptors.oracle import CorruptFn, Family, breaker, search_all
from ifpo.data_builders.corruptors.shared import (
    corrupt_fixed_text,
    corrupt_forbidden_words,
    corrupt_required_words,
)
from ifpo.verifiers.registry import ConstraintType


def corrupt_output_length(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Cross the length bound in the constraint's unit with the edits of the matching count
    corruptor (filler words, sentence splits/merges, paragraph breaks/joins, line breaks/joins).

    Example (``unit: sentences``, at most 2): ``"It is red. It is blue."`` ->
    ``"It is. Red. It is blue."`` or ``"It is red. It is red. It is blue."``.
    """
    families = {
        "characters": char_families,
        "words": word_families,
        "sentences": sentence_families,
        "lines": line_families,
        "paragraphs": paragraph_families,
    }[params["unit"]]
    return search_all(families(response, rng), breaker(ctype, params))


def _yaml_variants(response: str) -> list[str]:
    body, offset = fence_body(response)
    lines = body.split("\n")
    out = [with_body(response, body, offset, body + "\n- " + styled("broken item", letter_style(body))),
           with_body(response, body, offset, body + "\n" + lines[0] + " ["),
           with_body(response, body, offset, "\n".join(lines[:1] + ["   " + ln for ln in lines[1:2]] + lines[2:]))]
    for m in list(re.finditer(r"(?m)^([\w\- ]+)(?=:)", body))[:4]:
        out.append(with_body(response, body, offset, body[: m.start()] + m.group(1) + "_info" + body[m.end() :]))
    return out


def _xml_variants(response: str) -> list[str]:
    body, offset = fence_body(response)
    out = []
    last = body.rstrip()
    close = re.search(r"</[^>]+>\s*$", last)
    if close:
        out.append(with_body(response, body, offset, last[: close.start()]))
    for tag in list(dict.fromkeys(re.findall(r"<([A-Za-z_][\w.\-]*)[\s>]", body)))[:5]:
        renamed = re.sub(rf"(</?){re.escape(tag)}(?=[\s>/])", rf"\g<1>{tag}_info", body)
        out.append(with_body(response, body, offset, renamed))
    return out


def corrupt_structured_output(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Break the serialization the format asks for (JSON: a closing brace dropped or a key
    renamed; YAML: a stray item or bad indentation; XML: the root's closing tag dropped or a
    required tag renamed; CSV: a row with an extra field; Markdown table: a cell dropped).

    Example (json, ``required_keys: [objects]``): ``'{"objects": []}'`` -> ``'{"objects": []'`` or
    ``'{"objects_info": []}'``.
    """
    fmt = params["format"]
    if fmt == "json":
        return json_variants(response)
    if fmt == "yaml":
        return _yaml_variants(response)
    if fmt == "xml":
        return _xml_variants(response)
    if fmt == "csv":
        return csv_variants(response)
    return md_table_variants(response)


_SECTION_MARKERS = {
    "markdown_heading": re.compile(r"^(\s*)##[ \t]+(\S.*?)[ \t#]*$"),
    "bracketed_caps": re.compile(r"^(\s*)\[([A-Z0-9][A-Z0-9_ &/\-]*)\]"),
    "bold_inline": re.compile(r"^(\s*)\*\*([^*\n]+?)\*\*"),
}


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
        new_title = synonym(title) or ("Notes" if title.lower() != "notes" else "Remarks")
        if style == "bracketed_caps":
            new_title = new_title.upper().replace(" ", "_")
        out.append(with_line(i, lines[i][: m.start(2)] + new_title + lines[i][m.end(2) :]))
    i, m = marks[-1]
    body = next((ln for ln in lines[i + 1 :] if ln.strip()), lines[i][m.end() :].strip() or "See above.")
    extra = {"markdown_heading": "## Notes", "bracketed_caps": "[NOTES]", "bold_inline": "**Notes**"}.get(style)
    if extra:
        out.append(response.rstrip() + "\n\n" + extra + "\n" + body)
    lead, _ = lead_line(letter_style(response))
    out.append(lead.rstrip(":") + " as follows.\n" + response.lstrip())
    return out


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
        for new in (parts[0] if len(parts) > 1 else value + "s", flip_first(value)):
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


def corrupt_bilingual(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Write pairs in another format: the delimiter between the two languages changed (``/`` ->
    ``|``) in as few pairs as it takes, or a language label altered.

    Example (``[EN] {l1} / [FR] {l2}``, 2 pairs): ``"[EN] red / [FR] rouge"`` ->
    ``"[EN] red | [FR] rouge"``.
    """
    parts = re.split(r"\{l[12]\}", params["delimiter_format"])
    breaks = breaker(ctype, params)
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
            return apply_edits(response, [(h, h + len(literal), swapped) for h in hits[:k]])

        fams.append(Family(make, len(hits)))
    return search_all(fams, breaks)


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
    out += search_all(line_families(response, rng)[2:], breaker(ctype, params))
    return out


#: vsysbench type id -> its corruptor; :mod:`ifpo.data_builders.corruptors.registry` reads this table.
CORRUPTORS: dict[str, CorruptFn] = {
    "vsys_output_length": corrupt_output_length,
    "vsys_required_prefix": corrupt_fixed_text,
    "vsys_required_suffix": corrupt_fixed_text,
    "vsys_keyword_frequency": corrupt_required_words,
    "vsys_word_blacklist": corrupt_forbidden_words,
    "vsys_structured_output": corrupt_structured_output,
    "vsys_template_sections": corrupt_template_sections,
    "vsys_metadata_injection": corrupt_metadata,
    "vsys_dynamic_tagging": corrupt_tagging,
    "vsys_bilingual_mapping": corrupt_bilingual,
    "vsys_source_tags": corrupt_source_tags,
    "vsys_object_itemization": corrupt_itemization,
}

#: vsysbench rule/hybrid types that get no programmatic corruptor, each with the reason (none today).
NO_CORRUPTOR: dict[str, str] = {}
