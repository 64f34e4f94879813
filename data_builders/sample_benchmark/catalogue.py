"""The constraint catalogue of the sample items, explicit: one function per constraint shape, so
that a description always states exactly its params (VCIFBench types first, then Video-IFBench's
function judges, then judge-route constraints with their evidence)."""

from __future__ import annotations

import json
from typing import Any

from ifpo.data_builders.sample_benchmark.compose import _c

# ---------------------------------------------------------------- constraint catalogue (explicit)
# One function per constraint shape, so that a description always states exactly its params.


def json_(keys: list[str] | None = None, top: str = "object") -> dict:
    what = "a single JSON object" if top == "object" else "a single JSON array of objects"
    keys_text = (f" whose {'objects have' if top == 'array' else 'object has'} the keys "
                 + ", ".join(f'"{k}"' for k in keys)) if keys else ""
    # The json checker refuses required_keys with top_level "array" (it checks array items only
    # under "any"), so an array of keyed objects is stated as an array and checked as "any".
    level = "any" if top == "array" and keys else top
    return _c("json", f"Output only valid JSON: {what}{keys_text}, with no text outside it.",
              {"top_level": level, "required_keys": keys})


def csv_(columns: list[str], min_rows: int) -> dict:
    header = ",".join(columns)
    return _c("csv", f"Output only CSV with the header row {header} and at least {min_rows} data rows, "
                     "with no other text.",
              {"min_rows": min_rows, "require_header": True, "columns": columns})


def bullets(min_items: int, allow_text: bool = False) -> dict:
    extra = "" if allow_text else " and no text outside the list"
    return _c("bullet_list", f"Format the answer as a bullet list with '-' markers, at least {min_items} "
                             f"items{extra}.", {"min_items": min_items, "allow_text": allow_text})


def numbered(min_items: int, allow_text: bool = False) -> dict:
    extra = "" if allow_text else " and no text outside the list"
    return _c("numbered_list", f"Format the answer as a numbered list (1., 2., ...) with at least {min_items} "
                               f"items{extra}.",
              {"min_items": min_items, "allow_text": allow_text, "require_sequential": True})


_MD_NAMES = {"heading": "a heading", "list": "a list", "emphasis": "**bold** emphasis", "table": "a table"}


def markdown(elements: list[str]) -> dict:
    need = " and ".join(_MD_NAMES[e] for e in elements)
    return _c("markdown", f"Use Markdown formatting, including {need}.", {"elements": elements})


def plain_text() -> dict:
    return _c("plain_text", "Use plain text only, with no Markdown formatting (no headings, bullets, "
                            "bold or tables).", {"allow_numbered": True})


def _range(lo: int | None, hi: int | None, unit: str) -> str:
    if lo is not None and hi is not None:
        return f"exactly {lo} {unit}" if lo == hi else f"{lo} to {hi} {unit}"
    return f"at least {lo} {unit}" if lo is not None else f"at most {hi} {unit}"


def word_count(lo: int | None, hi: int | None) -> dict:
    return _c("word_count", f"Answer in {_range(lo, hi, 'words')}.",
              {"min_count": lo, "max_count": hi, "unit": "word"})


def sentence_count(lo: int | None, hi: int | None) -> dict:
    return _c("sentence_count", f"Write {_range(lo, hi, 'sentences')}.", {"min_count": lo, "max_count": hi})


def paragraph_count(lo: int | None, hi: int | None) -> dict:
    return _c("paragraph_count", f"Write {_range(lo, hi, 'paragraphs')}, separated by blank lines.",
              {"min_count": lo, "max_count": hi})


def item_count(lo: int | None, hi: int | None, kind: str = "any") -> dict:
    unit = "list items" if kind == "any" else f"{kind} items"
    return _c("item_count", f"Give {_range(lo, hi, unit)}.", {"min_count": lo, "max_count": hi, "kind": kind})


def fixed_opening(text: str) -> dict:
    return _c("fixed_opening", f'Begin your response with exactly: "{text}"', {"text": text, "ignore_case": False})


def fixed_closing(text: str) -> dict:
    return _c("fixed_closing", f'End your response with exactly: "{text}"', {"text": text, "ignore_case": False})


def prefix_label(prefix: str, scope: str = "items") -> dict:
    shown = prefix.replace("{n}", "N")
    where = {"items": "list item", "lines": "line", "paragraphs": "paragraph"}[scope]
    numbered_note = " where N counts up from 1" if "{n}" in prefix else ""
    return _c("prefix_label", f'Begin each {where} with the label "{shown}"{numbered_note}.',
              {"prefix": prefix, "scope": scope, "ignore_case": False})


def letter_case(case: str, scope: str = "all", exceptions: list[str] | None = None) -> dict:
    what = {"lower": "only lowercase letters", "upper": "only uppercase letters",
            "title": "title case", "sentence": "sentence case"}[case]
    where = {"all": "", "items": " in every list item", "lines": " on every line",
             "headings": " in every heading", "first_word": " in the first word"}[scope]
    exc = f" (except {', '.join(exceptions)})" if exceptions else ""
    return _c("letter_case", f"Use {what}{where}{exc}.",
              {"case": case, "scope": scope, "exceptions": list(exceptions or [])})


def no_contractions() -> dict:
    return _c("no_contractions", 'Do not use contractions (write "do not", not "don\'t").', {})


def _quoted(words: list[str], noun: str) -> str:
    """'the exact word "x"' / 'the exact words "x" and "y"'."""
    shown = [f'"{w}"' for w in words]
    if len(shown) == 1:
        return f"{noun} {shown[0]}"
    return f"{noun}s {', '.join(shown[:-1])} and {shown[-1]}"


def include(phrases: list[str], min_occurrences: int = 1) -> dict:
    noun = "exact phrase" if any(" " in p for p in phrases) else "exact word"
    times = "" if min_occurrences == 1 else f" at least {min_occurrences} times each"
    return _c("exact_word_inclusion", f"Include the {_quoted(phrases, noun)} verbatim{times}.",
              {"phrases": phrases, "ignore_case": False, "min_occurrences": min_occurrences,
               "match_all": True})


def exclude(phrases: list[str]) -> dict:
    return _c("exact_word_exclusion", f"Do not use the {_quoted(phrases, 'word')}.",
              {"phrases": phrases, "ignore_case": True, "whole_word": True})


def lexical(terms: list[str] | None, max_occurrences: int = 1) -> dict:
    times = "once" if max_occurrences == 1 else f"{max_occurrences} times"
    if terms is None:
        desc = f"Avoid repetition: use no content word (four or more letters) more than {times}."
    else:
        desc = f"Avoid repeating key terms: use each of {', '.join(repr(t) for t in terms)} at most {times}."
    return _c("lexical_diversity", desc, {"terms": terms, "max_occurrences": max_occurrences})


# Video-IFBench function judges


def vif_json(required_keys: list[str] | None = None, schema: Any = None, top: str = "object",
             forbidden_keys: list[str] | None = None) -> dict:
    parts = [f"Answer in valid JSON with a top-level {top}"]
    if required_keys:
        parts.append(" containing the keys " + ", ".join(f'"{k}"' for k in required_keys))
    if forbidden_keys:
        parts.append(" and without the keys " + ", ".join(f'"{k}"' for k in forbidden_keys))
    if schema is not None:
        parts.append(f", following the structure {json.dumps(schema)}")
    return _c("structured_json_output", "".join(parts) + ".",
              {"top_level": top, "required_keys": required_keys, "forbidden_keys": forbidden_keys,
               "schema": schema})


def table(min_rows: int, columns: list[str], formats: tuple[str, ...] = ("markdown",)) -> dict:
    fmt = " or ".join("a Markdown table" if f == "markdown" else "a CSV table" for f in formats)
    return _c("table_output", f"Present the answer as {fmt} with the columns {', '.join(columns)} and at "
                              f"least {min_rows} data rows.",
              {"allowed_formats": list(formats), "min_rows": min_rows, "require_header": True,
               "schema": columns})


def ordered_list(min_items: int, numbered_only: bool = False) -> dict:
    kind = "a numbered list" if numbered_only else "a list"
    return _c("ordered_list_output", f"Organise the answer as {kind} with at least {min_items} items.",
              {"min_items": min_items, "allow_numbered": True, "allow_bullets": not numbered_only})


def closed_set(options: list[str], allow_explanation: bool = False) -> dict:
    shown = ", ".join(f'"{o}"' for o in options)
    extra = (", then you may add a short explanation" if allow_explanation
             else ", with nothing else")
    return _c("closed_set_option_output", f"Answer with exactly one of {shown}{extra}.",
              {"allowed_options": options, "allow_explanation": allow_explanation, "ignore_case": True})


def response_length(lo: int, hi: int) -> dict:
    return _c("response_length_constraint", f"Keep the response between {lo} and {hi} words.",
              {"min_count": lo, "max_count": hi, "unit": "word"})


def paragraph_count_vif(lo: int, hi: int) -> dict:
    return _c("paragraph_count_constraint",
              f"Use {_range(lo, hi, 'paragraphs')} in total, separated by blank lines.",
              {"min_count": lo, "max_count": hi})


def list_count(lo: int, hi: int) -> dict:
    return _c("list_item_count_constraint", f"List {_range(lo, hi, 'entries')}.", {"min_count": lo, "max_count": hi})


def keywords(words: list[str], min_occurrences: int = 1, max_occurrences: int | None = None) -> dict:
    if max_occurrences is None:
        bound = "" if min_occurrences == 1 else f" at least {min_occurrences} times"
    elif min_occurrences == max_occurrences:
        bound = f" exactly {min_occurrences} times" + (" each" if len(words) > 1 else "")
    else:
        bound = f" between {min_occurrences} and {max_occurrences} times"
    return _c("required_keyword_inclusion", f"Use the {_quoted(words, 'keyword')}{bound}.",
              {"keywords": words, "match_all": True, "min_occurrences": min_occurrences,
               "max_occurrences": max_occurrences, "ignore_case": True})


def forbidden(words: list[str]) -> dict:
    return _c("forbidden_keyword_exclusion", f"Never use the {_quoted(words, 'keyword')}.",
              {"keywords": words, "ignore_case": True})


def value_format(description: str, patterns: list[str] | None = None, values: list[str] | None = None,
                 allow_multiple: bool = False) -> dict:
    return _c("normalized_value_format", description,
              {"allowed_patterns": patterns, "allowed_values": values, "require_full_match": True,
               "ignore_case": False, "allow_multiple": allow_multiple,
               "separator_pattern": r"(?:\n+|[;；])"})


def labels(allowed: list[str], allow_duplicates: bool = True) -> dict:
    shown = ", ".join(f'"{w}"' for w in allowed)
    dup = "" if allow_duplicates else ", each at most once"
    return _c("label_set_restriction", f"Label every entry with one of the labels {shown}{dup}.",
              {"allowed_labels": allowed, "ignore_case": True, "allow_duplicates": allow_duplicates})


def verbatim(utterance: str) -> dict:
    return _c("verbatim_speech_constraint",
              "Quote the text shown in the image exactly as written, in double quotation marks.",
              {"expected_utterance": utterance, "normalize_whitespace": True, "normalize_quotes": True,
               "ignore_case": False, "allow_wrapping_quotes": True})


def spans(count: int | None = None, min_spans: int = 1) -> dict:
    if count is not None:
        desc = (f"Localise the answer with exactly {count} explicit time span{'s' if count > 1 else ''} "
                "written as 'start s to end s'.")
        params = {"custom_patterns": None, "min_spans": min_spans, "max_spans": None,
                  "expected_span_count": count, "ignore_case": True}
    else:
        desc = f"Localise the answer with at least {min_spans} explicit time span(s) written as 'start s to end s'."
        params = {"custom_patterns": None, "min_spans": min_spans, "max_spans": None,
                  "expected_span_count": None, "ignore_case": True}
    return _c("span_localization", desc, params)


def judge(ctype: str, description: str, params: dict, context: str, subs: list[str] | None = None) -> dict:
    return _c(ctype, description, params, context=context, subs=subs)
