"""IFEval's 25 instruction ids, registered under their own names with their own kwargs names.

Semantics follow the reference checkers (google-research ``instruction_following_eval``, also
shipped as ``lm_eval/tasks/ifeval``). Each checker is the *strict* check of the response as given;
loose mode (IFEval's eight variants: first / last / both lines removed, ``*`` removed) is applied
around any rule checker by the evaluator (``ChecklistEvaluator(mode="loose")``,
:func:`ifpo.verifiers.text.loose_variants`). Reimplemented from behaviour. Sentences are NLTK's
English Punkt sentences and capital words are ``nltk.word_tokenize`` tokens, as in the reference
(the Punkt model comes from a wheel, never downloaded: :func:`ifpo.verifiers.text.punkt_sentences`).

Deliberate differences, each because the reference is not reproducible there:

- a kwarg the reference would draw at random when missing is ``required`` here: resolving the
  params raises :class:`~ifpo.verifiers.registry.MissingParamError` instead; out-of-range values
  the reference would also replace at random (negative counts, ``nth_paragraph`` outside
  ``1..num_paragraphs``, empty keyword lists) raise ``ValueError`` through ``params_check``;
- ``keywords:letter_frequency`` with a ``letter`` that is not an ASCII letter (the official data
  asks for "#" and "!") counts that character as given, as google-research's current checker does
  (lm-eval's copy and earlier versions draw a random letter there);
- language detection is seeded (``DetectorFactory.seed = 0``; the reference is unseeded and can
  flip on short text); a detection error counts as followed, as in the reference;
- keywords, forbidden words, section splitters and custom postscript markers are regexes, pasted
  unescaped as the reference pastes them ("a.b" matches "axb"); one that is not a valid regex
  (``C++``), where the reference raises ``re.error``, is matched literally instead.

An empty or whitespace-only response fails every id (the reference's evaluation loop does the same).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ifpo.verifiers.registry import (
    Check,
    Checker,
    Param,
    all_checks,
    at_least_check,
    nonblank_check,
    nonempty_strings_check,
    register,
)
from ifpo.verifiers.text import punkt_sentences, word_tokenize

SOURCE = "ifeval"

RELATIONS = ("less than", "at least")

CONSTRAINED_RESPONSE_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")

# langdetect 1.0.9's profiles, so an unsupported code is rejected up front instead of failing
# every response; "zh" matches both Chinese profiles. Kept literal to keep import cheap.
LANGDETECT_CODES = frozenset(
    "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml mr "
    "ne nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh zh-cn zh-tw".split()
)


# ---------------------------------------------------------------------------------------------
# private helpers
#
# These checkers run once per (response, constraint) in scoring and RL rewards, so they are kept
# cheap: no wrapper around each checker, patterns compiled once (module constants, or an
# ``lru_cache`` keyed by the param), constant ``Check`` objects where the reason is fixed, and
# detail that only a failure reports computed on failure. Where a plain string operation gives
# exactly the reference regex's result, it is used instead, with the argument in a comment; the
# ASCII-only shortcuts fall back to the regex for any other text.


def _ifeval(
    id: str,
    *,
    dimension: str,
    description: str,
    params: Iterable[Param] = (),
    params_check: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> Callable[[Checker], Checker]:
    """``register`` with IFEval's source. Each checker starts with the strict-mode rule that an
    empty or whitespace-only response fails (``if not response or response.isspace(): return
    _EMPTY``, inline rather than in a wrapper, whose extra call cost as much as some checks)."""
    params = tuple(params)
    ints = frozenset(p.name for p in params if p.kind == "int")
    return register(
        id,
        source=SOURCE,
        dimension=dimension,
        route="rule",
        params=params,
        description=description,
        params_check=params_check,
        params_coerce=_whole_floats(ints) if ints else None,
    )


def _whole_floats(ints: frozenset[str]) -> Callable[[Any, Mapping[str, Any]], dict[str, Any]]:
    """A ``params_coerce`` reading a whole float as the int it is (``300.0`` -> 300) for the int
    params ``ints``. A JSON export of the HF dataset (a nullable int column) stores the counts as
    floats, and the reference compares them as numbers, so ``num_words: 300.0`` is judged as 300
    there. A fraction (``2.5``) is kept as given, so validation still refuses it."""

    def coerce(ctype: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: int(v) if k in ints and type(v) is float and v.is_integer() else v for k, v in params.items()
        }

    return coerce


# Same test as verifiers.text.is_empty (str.strip and str.isspace agree on whitespace), inline in
# every checker, without copying the response.
_EMPTY = Check(False, "empty response")

# ``_make_check((passed, reason))`` is ``Check(passed, reason)`` without NamedTuple's Python-level
# ``__new__``, which took a third of the time of the cheaper checks.
_make_check = functools.partial(tuple.__new__, Check)


def _relation_param(name: str = "relation") -> Param:
    return Param(
        name,
        "str",
        required=True,
        choices=RELATIONS,
        help="'less than' (count < threshold) or 'at least' (count >= threshold)",
    )


def _non_negative(*names: str) -> Callable[[Mapping[str, Any]], str | None]:
    # The reference replaces a negative threshold with a random one; ifpo refuses it.
    return at_least_check(*names, minimum=0)


def _count(n: int, unit: str) -> str:
    """``"1 word"``, ``"3 words"``: every unit counted here takes a plain ``-s`` plural (as
    verifiers.text.plural would give), so the general rule is not needed."""
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _relation_check(count: int, unit: str, relation: str, threshold: int, of: str = "") -> Check:
    """E.g. ``Check(False, "12 sentences, expected less than 10")``."""
    passed = count < threshold if relation == "less than" else count >= threshold
    # %-formatting: a third cheaper than the f-string here (it formats ints directly).
    return _make_check(
        (
            passed,
            "%d %s%s%s, expected %s %d" % (count, unit, "" if count == 1 else "s", of, relation, threshold),  # noqa: UP031
        )
    )


def _quote(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "\\n")
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


# A character that means something in a regex. The reference pastes keywords, forbidden words,
# section splitters and custom postscript markers into regexes unescaped; a text without one of
# these matches the same as a regex and as a literal, so the string fast paths below keep to it.
_REGEX_META = re.compile(r"[.^$*+?{}\[\]\\|()]")


@functools.lru_cache(maxsize=4096)
def _reference_regex(prefix: str, text: str, suffix: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(prefix + text + suffix, flags)``: ``text`` pasted unescaped, as the reference does
    ("a.b" matches "axb", "why?" matches "wh"). Where that does not compile ("c++", "(x"), the
    reference raises ``re.error`` and has no verdict; ifpo then matches ``text`` literally."""
    try:
        return re.compile(prefix + text + suffix, flags)
    except re.error:
        return re.compile(prefix + re.escape(text) + suffix, flags)


def _icase(keyword: str) -> re.Pattern[str]:
    """The reference's ``re.search(keyword, value, flags=re.IGNORECASE)`` pattern."""
    return _reference_regex("", keyword, "", re.IGNORECASE)


def _ascii_lower(response: str) -> str | None:
    r"""``response.lower()`` when the response is ASCII, else None.

    For ASCII text and an ASCII literal, a case-insensitive regex match is exactly a substring
    match of the lowered strings; beyond ASCII, ``re.IGNORECASE`` and ``str.lower`` differ (e.g.
    "\u017f", long s, matches "s" under IGNORECASE), so callers fall back to the regex.
    """
    return response.lower() if response.isascii() else None


_ASCII_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _has_whole_word(lowered: str, word: str) -> bool:
    r"""``re.search(r"\b" + re.escape(word) + r"\b", lowered)`` for ASCII ``lowered`` and ``word``.

    ``\b`` holds where exactly one side is a word character, and on ASCII text ``\w`` is
    ``[A-Za-z0-9_]``; every occurrence, overlapping ones included, is tried as the regex would.
    """
    starts_word, ends_word = word[0] in _ASCII_WORD_CHARS, word[-1] in _ASCII_WORD_CHARS
    size, end = len(lowered), len(word)
    i = lowered.find(word)
    while i >= 0:
        j = i + end
        before = i > 0 and lowered[i - 1] in _ASCII_WORD_CHARS
        after = j < size and lowered[j] in _ASCII_WORD_CHARS
        if before != starts_word and after != ends_word:
            return True
        i = lowered.find(word, i + 1)
    return False


def _whole_word_icase(word: str) -> re.Pattern[str]:
    """The reference's ``re.search(r"\b" + word + r"\b", value, flags=re.IGNORECASE)`` pattern."""
    return _reference_regex(r"\b", word, r"\b", re.IGNORECASE)


# IFEval counts words with nltk's RegexpTokenizer(r"\w+"): "don't" is two words and CJK runs are
# words, unlike verifiers.text.words, so the reference regex is kept here.
_IFEVAL_WORD = re.compile(r"\w+")


# For ASCII text, \w is [A-Za-z0-9_]: bytes.translate maps word bytes to "a" and the rest to " ",
# and the word count is the number of " a" transitions, plus one if the text starts with a word.
# Same count as the regex, without building a string per word (~20x faster on a paragraph).
_WORD_BYTES = bytes(
    ord("a") if chr(b) in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_" else ord(" ")
    for b in range(256)
)


def _count_words(text: str) -> int:
    if text.isascii():
        mapped = text.encode("ascii").translate(_WORD_BYTES)
        return mapped.count(b" a") + (mapped[:1] == b"a")
    return len(_IFEVAL_WORD.findall(text))


def _detect_language(text: str) -> tuple[str | None, str]:
    """``(code, "")`` or ``(None, why)``; seeded, so the same text always gets the same code."""
    # Imported here: langdetect loads ~55 language profiles, too slow for module import.
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0  # unseeded langdetect (as in the reference) can flip on short text
    _untrack_profiles()
    try:
        return detect(_detection_prefix(text)), ""
    except LangDetectException as e:
        return None, str(e)


_LANGDETECT_READ = "1.0.9"  # the release whose Detector.append the prefix below was read from


@functools.lru_cache(maxsize=1)
def _langdetect_cleaning() -> tuple[list[tuple[re.Pattern[str], Callable[[re.Match[str]], str], int]], int] | None:
    """langdetect's cleaning steps ``(pattern, replacement, longest match)`` and how many cleaned
    characters it reads (``max_text_length``); None on another release or a step of unbounded width."""
    import importlib.metadata
    from re import _parser

    from langdetect import detector_factory
    from langdetect.detector import Detector
    from langdetect.utils.ngram import NGram

    try:
        if importlib.metadata.version("langdetect") != _LANGDETECT_READ:
            return None
        steps = []
        for pattern, repl in ((Detector.URL_RE, lambda m: " "), (Detector.MAIL_RE, lambda m: " "),
                              (NGram.ALPHABET_WITH_DMARK, lambda m: NGram.normalize_vi(m.group()))):
            low, high = _parser.parse(pattern.pattern, pattern.flags).getwidth()
            if low == 0 or high >= _parser.MAXREPEAT:
                return None
            steps.append((pattern, repl, high))
        detector_factory.init_factory()
        return steps, detector_factory._factory.create().max_text_length
    except Exception:  # another layout of langdetect's internals: detect on the whole text
        return None


def _detection_prefix(text: str) -> str:
    """A prefix of ``text`` that langdetect classifies exactly as the whole text.

    ``Detector.append`` substitutes URLs, then e-mail addresses, then Vietnamese letters with a
    combining mark, over the whole text, and then reads only the first ``max_text_length`` (10,000)
    characters of the result: on a long text nearly all of that work is thrown away (a 1 MB token
    without spaces cost ~0.2-0.3 s in the e-mail pattern alone). A prefix is used when the cleaned
    text's first 10,000 characters are the same for every text starting with it (each step's
    output is known up to its matches tried within its longest match of the prefix's end)."""
    cleaning = _langdetect_cleaning()
    if cleaning is None:
        return text
    steps, limit = cleaning
    size = 4 * limit + sum(width for _, _, width in steps)
    while size < len(text):
        known = text[:size]
        for pattern, repl, width in steps:
            known = _known_after_sub(known, pattern, repl, width)
        if len(known) >= limit:
            return text[:size]
        size *= 4
    return text


def _known_after_sub(prefix: str, pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], width: int) -> str:
    """The start of ``pattern.sub(repl, t)`` that is the same for every text ``t`` starting with ``prefix``.

    A match tried at position ``s`` reads at most ``prefix[s : s + width]`` (``width``: the longest
    match), so the tries at ``s < decided`` (two characters of margin) come out as they do in ``t``:
    their matches are replaced, the positions between them copied; the rest is unknown."""
    decided = len(prefix) - width - 2
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(prefix):
        if m.start() >= decided:
            break
        out += [prefix[pos : m.start()], repl(m)]
        pos = m.end()
    if decided > pos:
        out.append(prefix[pos:decided])
    return "".join(out)


@functools.lru_cache(maxsize=1)
def _untrack_profiles() -> None:
    """Load langdetect's profiles once and hold each n-gram's probabilities as a tuple, not a list.

    The profiles are ~88k lists that the garbage collector walks on every full collection, which
    made every allocation-heavy checker in the same process (list items, markdown, tokenizers)
    up to 2x slower once a language constraint had been checked. Tuples of floats are untracked by
    the collector; langdetect only reads them (``lang_prob_map[i]``), so detection is unchanged.
    """
    from langdetect import detector_factory

    detector_factory.init_factory()
    table = detector_factory._factory.word_lang_prob_map
    for word, probs in table.items():
        table[word] = tuple(probs)


def _language_matches(detected: str, expected: str) -> bool:
    return detected == expected or detected.split("-")[0] == expected


# ---------------------------------------------------------------------------------------------
# keywords:*


@_ifeval(
    "keywords:existence",
    dimension="content",
    params=[Param("keywords", "list[str]", required=True, help="words that must all appear")],
    params_check=nonempty_strings_check("keywords"),
    description="Include keywords {keywords} in the response.",
)
def keywords_existence(response: str, p: Mapping[str, Any]) -> Check:
    """Every keyword appears, case-insensitively, anywhere (substrings count, as in IFEval).

    Example: ``keywords=["dog", "park"]`` passes "The Dogs ran in the park."

    >>> keywords_existence('The Dogs ran in the park.', {'keywords': ['dog', 'park']}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    keywords = p["keywords"]
    if response.isascii():  # see _ascii_lower
        lowered = response.lower()
        missing = [
            k
            for k in keywords
            if not (
                k.lower() in lowered if k.isascii() and not _REGEX_META.search(k) else _icase(k).search(response)
            )
        ]
    else:
        missing = [k for k in keywords if not _icase(k).search(response)]
    if missing:
        return _make_check((False, f"missing keyword(s) {missing}"))
    return _make_check((True, f"all {len(keywords)} keyword(s) present"))


@_ifeval(
    "keywords:frequency",
    dimension="content",
    params=[
        Param("keyword", "str", required=True, help="the word to count"),
        Param("frequency", "int", required=True, help="threshold on the number of occurrences"),
        _relation_param(),
    ],
    params_check=all_checks(_non_negative("frequency"), nonblank_check("keyword")),
    description="In your response, the word {keyword} should appear {relation} {frequency} times.",
)
def keywords_frequency(response: str, p: Mapping[str, Any]) -> Check:
    """Case-insensitive occurrences of ``keyword`` (substrings count, as in IFEval).

    Example: ``keyword="fun", frequency=2, relation="at least"`` passes "Fun, fun, fun."

    >>> keywords_frequency('Fun, fun, fun.',
    ... {'keyword': 'fun', 'frequency': 2, 'relation': 'at least'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    keyword = p["keyword"].strip()
    lowered = _ascii_lower(response)
    if lowered is not None and keyword.isascii() and not _REGEX_META.search(keyword):
        # str.count counts non-overlapping occurrences left to right, as re.findall does.
        n = lowered.count(keyword.lower())
    else:
        n = len(_icase(keyword).findall(response))
    return _relation_check(n, "occurrence", p["relation"], p["frequency"], of=f" of {keyword!r}")


@_ifeval(
    "keywords:forbidden_words",
    dimension="content",
    params=[Param("forbidden_words", "list[str]", required=True, help="words that must not appear")],
    params_check=nonempty_strings_check("forbidden_words"),
    description="Do not include keywords {forbidden_words} in the response.",
)
def keywords_forbidden_words(response: str, p: Mapping[str, Any]) -> Check:
    """No forbidden word appears as a whole word, case-insensitively.

    Example: ``forbidden_words=["cat"]`` passes "Concatenate it." and fails "A Cat sat."

    >>> keywords_forbidden_words('Concatenate it.', {'forbidden_words': ['cat']}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    lowered = _ascii_lower(response)
    found = [
        w
        for w, low in _forbidden_plan(tuple(p["forbidden_words"]))
        if (
            _has_whole_word(lowered, low)
            if lowered is not None and low is not None
            else _whole_word_icase(w).search(response)
        )
    ]
    if found:
        return _make_check((False, f"forbidden word(s) used: {found}"))
    return _NO_FORBIDDEN


_NO_FORBIDDEN = Check(True, "no forbidden word used")


@functools.lru_cache(maxsize=1024)
def _forbidden_plan(words: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """The distinct words, sorted (as the reason lists them), each with its lowered form when it
    is ASCII without a regex metacharacter (searched as a string in ASCII responses) or None
    (always searched by the reference's regex)."""
    return tuple(
        (w, w.lower() if w.isascii() and not _REGEX_META.search(w) else None) for w in sorted(set(words))
    )


def _check_letter(p: Mapping[str, Any]) -> str | None:
    # Any single character is accepted and counted as given, as google-research's current checker
    # does (it draws a random letter only for an empty or longer value). lm-eval's copy and earlier
    # versions also replace a character that is not an ASCII letter with a random one, which
    # no one can reproduce; the official input_data.jsonl has two such records (keys 1122, 1129
    # ask for "#" and "!"), and counting the character the prompt names is what it asks for.
    letter = p.get("letter")
    if not isinstance(letter, str) or len(letter.strip()) != 1:
        return f"letter must be a single character, got {letter!r}"
    return _non_negative("let_frequency")(p)


@_ifeval(
    "keywords:letter_frequency",
    dimension="content",
    params=[
        Param("letter", "str", required=True, help="a single letter (or other character), counted case-insensitively"),
        Param("let_frequency", "int", required=True, help="threshold on the number of occurrences"),
        _relation_param("let_relation"),
    ],
    params_check=_check_letter,
    description="In your response, the letter {letter} should appear {let_relation} {let_frequency} times.",
)
def keywords_letter_frequency(response: str, p: Mapping[str, Any]) -> Check:
    """Occurrences of one letter, case-insensitively; a non-letter ("#") is counted as given.

    Example: ``letter="z", let_frequency=2, let_relation="at least"`` passes "Zig zag."

    >>> keywords_letter_frequency('Zig zag.',
    ... {'letter': 'z', 'let_frequency': 2, 'let_relation': 'at least'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    letter = p["letter"].strip().lower()
    # The reference counts the characters of the lowered response (a Counter), so a letter whose
    # lower case is two characters ("İ" -> "i̇") is never counted.
    n = response.lower().count(letter) if len(letter) == 1 else 0
    return _relation_check(
        n, "occurrence", p["let_relation"], p["let_frequency"], of=f" of letter {letter!r}"
    )


# ---------------------------------------------------------------------------------------------
# language:*


def _check_language(p: Mapping[str, Any]) -> str | None:
    if p.get("language") not in LANGDETECT_CODES:
        return f"language {p.get('language')!r} is not a langdetect code (known: {', '.join(sorted(LANGDETECT_CODES))})"
    return None


@_ifeval(
    "language:response_language",
    dimension="style",
    params=[Param("language", "str", required=True, help="ISO 639-1 code, e.g. 'en', 'fr', 'zh'")],
    params_check=_check_language,
    description="Your ENTIRE response should be in {language} language, no other language is allowed.",
)
def response_language(response: str, p: Mapping[str, Any]) -> Check:
    """The language langdetect (seeded) finds equals ``language``; undetectable text counts as followed (as IFEval).

    Example: ``language="fr"`` passes "Bonjour, je suis très content de vous voir aujourd'hui."

    >>> response_language('This is a complete sentence written in plain English.',
    ... {'language': 'en'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    detected, why = _detect_language(response)
    if detected is None:
        # As the reference: a text langdetect cannot classify (no letters) counts as followed.
        return _make_check((True, f"language could not be detected ({why}); counted as followed, as IFEval does"))
    if _language_matches(detected, p["language"]):
        return _make_check((True, f"detected language {detected}"))
    return _make_check((False, f"detected language {detected}, expected {p['language']}"))


# ---------------------------------------------------------------------------------------------
# length_constraints:*


@_ifeval(
    "length_constraints:number_sentences",
    dimension="format",
    params=[
        Param("num_sentences", "int", required=True, help="threshold on the number of sentences"),
        _relation_param(),
    ],
    params_check=_non_negative("num_sentences"),
    description="Your response should contain {relation} {num_sentences} sentences.",
)
def number_sentences(response: str, p: Mapping[str, Any]) -> Check:
    """Sentences as NLTK's English Punkt model splits them (``nltk.sent_tokenize``, as the reference).

    Example: ``num_sentences=3, relation="less than"`` passes "One. Two."

    >>> number_sentences('One. Two.', {'num_sentences': 3, 'relation': 'less than'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    n = len(punkt_sentences(response))
    return _relation_check(n, "sentence", p["relation"], p["num_sentences"])


@_ifeval(
    "length_constraints:number_paragraphs",
    dimension="format",
    params=[Param("num_paragraphs", "int", required=True, help="exact number of paragraphs")],
    params_check=_non_negative("num_paragraphs"),
    description="There should be {num_paragraphs} paragraphs. Paragraphs are separated with the markdown divider: ***",
)
def number_paragraphs(response: str, p: Mapping[str, Any]) -> Check:
    """Exactly ``num_paragraphs`` paragraphs separated by ``***``; an empty one in between fails.

    Example: ``num_paragraphs=2`` passes "First.\\n***\\nSecond."

    >>> number_paragraphs('First.\\n***\\nSecond.', {'num_paragraphs': 2}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    # The reference splits on r"\s?\*\*\*\s?". Splitting on "***" alone cuts at the same star runs
    # ("*" is not whitespace, so the optional space never moves a cut) and leaves at most one
    # extra space at a part's edge, which changes no part's emptiness below.
    parts = response.split("***")
    n = len(parts)
    for i, part in enumerate(parts):
        if not part.strip():
            if i in (0, len(parts) - 1):
                n -= 1
            else:
                return _make_check((False, f"empty paragraph between '***' dividers (paragraph {i + 1})"))
    return _make_check(
        (
            n == p["num_paragraphs"],
            f"{_count(n, 'paragraph')} separated by '***', expected exactly {p['num_paragraphs']}",
        )
    )


@_ifeval(
    "length_constraints:number_words",
    dimension="format",
    params=[
        Param("num_words", "int", required=True, help="threshold on the number of words"),
        _relation_param(),
    ],
    params_check=_non_negative("num_words"),
    description="Answer with {relation} {num_words} words.",
)
def number_words(response: str, p: Mapping[str, Any]) -> Check:
    """Words are ``\\w+`` runs, as IFEval counts them ("don't" is two words).

    Example: ``num_words=5, relation="less than"`` passes "Short and sweet."

    >>> number_words('Short and sweet.', {'num_words': 5, 'relation': 'less than'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    return _relation_check(_count_words(response), "word", p["relation"], p["num_words"])


def _check_nth_paragraph(p: Mapping[str, Any]) -> str | None:
    problem = _non_negative("num_paragraphs")(p) or nonblank_check("first_word")(p)
    if problem:
        return problem
    if not 1 <= p["nth_paragraph"] <= p["num_paragraphs"]:
        return f"nth_paragraph must be between 1 and num_paragraphs ({p['num_paragraphs']}), got {p['nth_paragraph']}"
    return None


# The first word ends at the first of these characters (the reference's punctuation set).
_FIRST_WORD = re.compile(r"[^.,?!'\"]*")


@_ifeval(
    "length_constraints:nth_paragraph_first_word",
    dimension="format",
    params=[
        Param("num_paragraphs", "int", required=True, help="exact number of paragraphs (split on '\\n\\n')"),
        Param("nth_paragraph", "int", required=True, help="1-based index of the paragraph to check"),
        Param("first_word", "str", required=True, help="the word that paragraph must start with"),
    ],
    params_check=_check_nth_paragraph,
    description=(
        "There should be {num_paragraphs} paragraphs. Paragraphs and only paragraphs are separated with "
        "each other by two new lines as if it was '\\n\\n' in python. Paragraph {nth_paragraph} must "
        "start with word {first_word}."
    ),
)
def nth_paragraph_first_word(response: str, p: Mapping[str, Any]) -> Check:
    """Exactly ``num_paragraphs`` paragraphs (split on ``\\n\\n``) and paragraph n starts with the word.

    Example: ``num_paragraphs=2, nth_paragraph=2, first_word="then"`` passes "Hi.\\n\\nThen, bye."

    >>> nth_paragraph_first_word('Hi.\\n\\nThen, bye.',
    ... {'num_paragraphs': 2, 'nth_paragraph': 2, 'first_word': 'then'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    # As the reference: the paragraph count leaves out blank pieces of the split on "\n\n", but
    # paragraph n is the n-th piece of the raw split, and a blank one there fails.
    pieces = response.split("\n\n")
    n = sum(1 for piece in pieces if piece and not piece.isspace())
    # first_word is lowered, not stripped, as in the reference: " then" matches no first word.
    nth, expected = p["nth_paragraph"], p["first_word"].lower()
    if nth > n:
        return _make_check(
            (False, f"{_count(n, 'paragraph')}, no paragraph {nth}; expected exactly {p['num_paragraphs']}")
        )
    paragraph = pieces[nth - 1].strip()
    if not paragraph:
        return _make_check((False, f"paragraph {nth} (split on '\\n\\n') is blank"))
    word = paragraph.split(None, 1)[0].lstrip("'").lstrip('"')
    first = _FIRST_WORD.match(word).group()
    # The reference lowers letter by letter; str.lower on the whole word differs only for a
    # final Greek sigma, so that is kept for non-ASCII words.
    first = first.lower() if first.isascii() else "".join(ch.lower() for ch in first)
    if n == p["num_paragraphs"] and first == expected:
        return _make_check(
            (True, f"{n} paragraph{'' if n == 1 else 's'}, paragraph {nth} starts with {expected!r}")
        )
    problems = []
    if n != p["num_paragraphs"]:
        problems.append(f"{_count(n, 'paragraph')}, expected exactly {p['num_paragraphs']}")
    if first != expected:
        problems.append(f"paragraph {nth} starts with {first!r}, expected {expected!r}")
    return _make_check((False, "; ".join(problems)))


# ---------------------------------------------------------------------------------------------
# detectable_content:*


@_ifeval(
    "detectable_content:number_placeholders",
    dimension="content",
    params=[Param("num_placeholders", "int", required=True, help="minimum number of [placeholders]")],
    params_check=_non_negative("num_placeholders"),
    description=(
        "The response must contain at least {num_placeholders} placeholders represented by square "
        "brackets, such as [address]."
    ),
)
def number_placeholders(response: str, p: Mapping[str, Any]) -> Check:
    """At least ``num_placeholders`` square-bracket placeholders like ``[name]``.

    Example: ``num_placeholders=2`` passes "Dear [name], see you at [place]."

    >>> number_placeholders('Dear [name], see you at [place].', {'num_placeholders': 2}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    n = _PLACEHOLDER.findall(response).count("]")
    return _relation_check(n, "placeholder", "at least", p["num_placeholders"])


# The reference counts re.findall(r"\[.*?\]", response): each "[" up to the first "]" after it on its
# line. Retried from every "[" of a line whose "]" never comes, that scan is quadratic (a 1 MB line of
# "[x. " took minutes). Here a "[" takes the rest of its line when no "]" follows: the same matches end
# in "]" (no later "[" of that line could have matched either), counted by their last group.
_PLACEHOLDER = re.compile(r"\[[^\]\n]*+(\]?)")

# The reference searches the lowered response for r"\s*p\.\s?p\.\s?s.*$" / r"\s*p\.\s?s\..*$" (or
# r"\s*<marker>.*$") in MULTILINE mode. The leading \s* may match nothing and ".*$" always
# matches up to the end of the line, so a match exists exactly where the core pattern (or the
# lowered marker, as a substring) occurs; the core patterns start with a literal, which the
# regex engine scans for quickly.
_PS_PATTERNS = {"P.P.S": re.compile(r"p\.\s?p\.\s?s"), "P.S.": re.compile(r"p\.\s?s\.")}


@_ifeval(
    "detectable_content:postscript",
    dimension="content",
    params=[Param("postscript_marker", "str", required=True, help="e.g. 'P.S.' or 'P.P.S'")],
    params_check=nonblank_check("postscript_marker"),
    description="At the end of your response, please explicitly add a postscript starting with {postscript_marker}",
)
def postscript(response: str, p: Mapping[str, Any]) -> Check:
    """A postscript marker appears, case-insensitively (``P.S.`` also accepts ``p. s.``).

    Example: ``postscript_marker="P.S."`` passes "Thanks.\\n\\nP.S. See you soon."

    >>> postscript('Hi.\\nP.P.S bye', {'postscript_marker': 'P.P.S'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    marker = p["postscript_marker"].strip()
    lowered = response.lower()
    pattern = _PS_PATTERNS.get(marker)
    if pattern is None and _REGEX_META.search(marker):
        # A custom marker is pasted lowered into r"\s*<marker>.*$" (MULTILINE), as the reference does.
        pattern = _reference_regex(r"\s*", marker.lower(), r".*$", re.MULTILINE)
    if pattern.search(lowered) if pattern else marker.lower() in lowered:
        return _make_check((True, f"postscript starting with {marker!r} found"))
    return _make_check((False, f"no postscript starting with {marker!r}; add one at the end"))


# ---------------------------------------------------------------------------------------------
# detectable_format:*


@_ifeval(
    "detectable_format:number_bullet_lists",
    dimension="format",
    params=[Param("num_bullets", "int", required=True, help="exact number of markdown bullet points")],
    params_check=_non_negative("num_bullets"),
    description="Your answer must contain exactly {num_bullets} bullet points. Use the markdown bullet points such as:\n* This is point 1. \n* This is point 2",
)
def number_bullet_lists(response: str, p: Mapping[str, Any]) -> Check:
    """Exactly ``num_bullets`` lines starting with ``*`` (not ``**``) or ``-``, as IFEval counts.

    Example: ``num_bullets=2`` passes "* one\\n* two"; numbered items do not count.

    >>> number_bullet_lists('* one\\n* two', {'num_bullets': 2}).passed
    True
    """
    # IFEval's own line patterns (not verifiers.text.list_items): "-x" without a space and a "---"
    # rule count as bullets there, "+" and numbered items do not.
    if not response or response.isspace():
        return _EMPTY
    n = _count_bullets(response)
    return _make_check(
        (n == p["num_bullets"], f"{_count(n, 'bullet point')}, expected exactly {p['num_bullets']}")
    )


def _count_bullets(response: str) -> int:
    r"""``len(re.findall(r"^\s*\*[^\*].*$", response, re.M)) + len(re.findall(r"^\s*-.*$", response, re.M))``.

    IFEval's two scans (not verifiers.text.list_items: "-x" without a space and a "---" rule
    count, "+" and numbered items do not), without the ``^\s*`` that runs over every blank line
    after each line start (quadratic on a run of blank lines). A match starts at a line start and
    its ``\s*`` may run over blank lines, so each match is one line whose first non-space character
    is the marker, and ``.*$`` ends it at that line's end. One exception: a star line that ends
    right after its ``*`` matches only if a line follows (``[^*]`` takes the newline), and the match
    then runs to the end of that next line, which cannot start a star match itself (it is still
    scanned for a dash: the scans are separate). So: one match per line start (a newline, the text
    framed by one) followed by spaces and the marker, the star one taking the character after it too:
    where that is the newline, the next line has none left to start with (a test compares both with
    IFEval's scans).
    """
    text = "\n" + response
    return len(_DASH_LINE.findall(text)) + len(_STAR_LINE.findall(text))


# (A newline first: the engine skips to each in C.)
_DASH_LINE = re.compile(r"\n(?=[^\S\n]*-)")
_STAR_LINE = re.compile(r"\n[^\S\n]*\*[^*]")


@_ifeval(
    "detectable_format:constrained_response",
    dimension="format",
    description="Answer with one of the following options: ('My answer is yes.', 'My answer is no.', 'My answer is maybe.')",
)
def constrained_response(response: str, p: Mapping[str, Any]) -> Check:
    """The response contains one of "My answer is yes." / "...no." / "...maybe." (case-sensitive).

    Example: passes "My answer is no." and fails "my answer is no".

    >>> constrained_response('My answer is no.', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    # The reference strips the response first; the options neither start nor end with
    # whitespace, so that changes no substring test.
    for option, found in _CONSTRAINED_FOUND.items():
        if option in response:
            return found
    return _CONSTRAINED_MISSING


_CONSTRAINED_FOUND = {option: Check(True, f"contains {option!r}") for option in CONSTRAINED_RESPONSE_OPTIONS}
_CONSTRAINED_MISSING = Check(
    False, f"contains none of {list(CONSTRAINED_RESPONSE_OPTIONS)} (exact case and final period)"
)


@_ifeval(
    "detectable_format:number_highlighted_sections",
    dimension="format",
    params=[Param("num_highlights", "int", required=True, help="minimum number of *highlighted* sections")],
    params_check=_non_negative("num_highlights"),
    description="Highlight at least {num_highlights} sections in your answer with markdown, i.e. *highlighted section*.",
)
def number_highlighted_sections(response: str, p: Mapping[str, Any]) -> Check:
    """At least ``num_highlights`` non-empty ``*...*`` or ``**...**`` spans on one line.

    Example: ``num_highlights=2`` passes "*one* and *two*".

    >>> number_highlighted_sections('*one* and *two*', {'num_highlights': 2}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    n = 0
    if "*" in response:  # neither pattern matches without one (nor the second without "**")
        found = _HIGHLIGHT.findall(response)
        n = len(found) - found.count("")
        if "**" in response:
            found = _DOUBLE_HIGHLIGHT.findall(response)
            n += len(found) - found.count("")
    return _relation_check(n, "highlighted section", "at least", p["num_highlights"])


# IFEval counts the matches of \*[^\n\*]*\* and of \*\*[^\n\*]*\*\* whose text between the stars is not
# blank (``str.strip``'s whitespace is the engine's \s). A match is unique at its start (the text between
# is every non-star up to the next star on the line), so these find the same matches: a blank one by
# the first branch, which also takes the blank ones that follow it at once (a run of stars is one
# match, not one string built per pair), the others by the second, whose group is that text (never
# blank there). findall gives "" for the first branch's matches (a test compares with IFEval's scans).
# (The stars first, outside the branches: the engine then skips to a star in C.)
_HIGHLIGHT = re.compile(r"\*(?:[^\S\n]*\*(?:\*[^\S\n]*\*)*|([^\n*]*)\*)")
_DOUBLE_HIGHLIGHT = re.compile(r"\*\*(?:[^\S\n]*\*\*(?:\*\*[^\S\n]*\*\*)*|([^\n*]*)\*\*)")


@_ifeval(
    "detectable_format:multiple_sections",
    dimension="structure",
    params=[
        Param("section_spliter", "str", required=True, help="section keyword, e.g. 'Section' or 'SECTION'"),
        Param("num_sections", "int", required=True, help="minimum number of sections"),
    ],
    params_check=all_checks(_non_negative("num_sections"), nonblank_check("section_spliter")),
    description="Your response must have {num_sections} sections. Mark the beginning of each section with {section_spliter} X.",
)
def multiple_sections(response: str, p: Mapping[str, Any]) -> Check:
    """At least ``num_sections`` markers "<section_spliter> <number>" (case-sensitive).

    Example: ``section_spliter="Section", num_sections=2`` passes "Section 1\\nA\\nSection 2\\nB".

    >>> multiple_sections('Section 1\\nA\\nSection 2\\nB',
    ... {'section_spliter': 'Section', 'num_sections': 2}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    spliter = p["section_spliter"].strip()
    if _REGEX_META.search(spliter):
        # Pasted into the reference's pattern as it is, whose groups (if the spliter has any) re.split
        # returns as pieces too: its count, exactly.
        n = len(_reference_regex(r"\s?", spliter, r"\s?\d+\s?").split(response)) - 1
    else:
        n = len(_section_marker(spliter).findall(response))
    return _relation_check(n, f"'{spliter} N' section", "at least", p["num_sections"])


@functools.lru_cache(maxsize=1024)
def _section_marker(spliter: str) -> re.Pattern[str]:
    # The reference counts the pieces of re.split(r"\s?<spliter>\s?\d+\s?") minus one, i.e. the
    # matches. The stripped spliter starts and the next match can only start with a non-space, so
    # the optional spaces around a match never change where the next one is found: the matches of
    # r"<spliter>\s?\d+" are as many, and this pattern starts with a literal the engine scans for.
    return re.compile(re.escape(spliter) + r"\s?\d+")


@_ifeval(
    "detectable_format:json_format",
    dimension="format",
    description="Entire output should be wrapped in JSON format. You can use markdown ticks such as ```.",
)
def json_format(response: str, p: Mapping[str, Any]) -> Check:
    """The whole response parses as JSON, after removing one ```json / ``` fence.

    Example: passes '```json\\n{"a": 1}\\n```' and fails 'Here it is: {"a": 1}'.

    >>> json_format('{"a": 1}', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    # IFEval's fence removal (not verifiers.text.strip_code_fences): only json/Json/JSON or bare
    # fences, and no newline needed after the opening ticks. The reference chains the four
    # removeprefix calls, so after "```json" a directly following "```" goes too ("```json```{}").
    value = (
        response.strip()
        .removeprefix("```json")
        .removeprefix("```Json")
        .removeprefix("```JSON")
        .removeprefix("```")
        .removesuffix("```")
        .strip()
    )
    if not value or value[0] not in _JSON_FIRST_CHARS:
        # json.loads would fail at once with this message; raising and formatting that error
        # costs more than the rest of the check.
        return _JSON_NO_VALUE
    # json.loads(value) minus its three Python-level wrappers, which cost twice the C scan of a
    # small document: a leading BOM is refused (here by the filter above), JSON whitespace around
    # the value skipped (there is none: the value is stripped), one value scanned, and anything
    # after it is "Extra data". Same verdicts and error messages as json.loads (but for a BOM).
    try:
        end = _JSON_SCAN(value, 0)[1]
    except StopIteration as e:  # no value at e.value
        error = json.JSONDecodeError("Expecting value", value, e.value)
    except ValueError as e:
        # A JSONDecodeError, or int() refusing a number of over 4300 digits: the reference catches
        # ValueError, so both are "not JSON" there.
        error = e
    except RecursionError:  # nested deeper than the interpreter's limit (the reference raises here)
        return _make_check((False, "not valid JSON: nested too deeply to parse"))
    else:
        if end == len(value):
            return _JSON_VALID
        error = json.JSONDecodeError("Extra data", value, _JSON_WHITESPACE(value, end).end())
    return _make_check((False, f"not valid JSON: {error}"))


# Characters a JSON document can start with for json.loads (NaN and Infinity included); the value
# is already stripped.
_JSON_FIRST_CHARS = frozenset('{["-0123456789tfnNI')
_JSON_NO_VALUE = Check(False, "not valid JSON: Expecting value: line 1 column 1 (char 0)")
_JSON_VALID = Check(True, "valid JSON")
_JSON_SCAN = json.JSONDecoder().scan_once
_JSON_WHITESPACE = json.decoder.WHITESPACE.match


@_ifeval(
    "detectable_format:title",
    dimension="format",
    description="Your answer must contain a title, wrapped in double angular brackets, such as <<poem of joy>>.",
)
def title(response: str, p: Mapping[str, Any]) -> Check:
    """A non-empty title in double angular brackets on one line.

    Example: passes "<<Ode to Joy>>\\nA poem." and fails "<< >>".

    >>> title('<<Ode to Joy>>\\nA poem.', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    for found in _TITLE.findall(response):
        if found.lstrip("<").rstrip(">").strip():
            return _make_check((True, f"title {found}"))
    return _NO_TITLE


_TITLE = re.compile(r"<<[^\n]+>>")
_NO_TITLE = Check(False, "no title wrapped in double angular brackets, e.g. <<my title>>")


# ---------------------------------------------------------------------------------------------
# combination:*


@_ifeval(
    "combination:two_responses",
    dimension="structure",
    description="Give two different responses. Responses and only responses should be separated by 6 asterisk symbols: ******.",
)
def two_responses(response: str, p: Mapping[str, Any]) -> Check:
    """Exactly two different non-empty responses separated by ``******``.

    Example: passes "Yes.\\n******\\nNo." and fails "Yes.\\n******\\nYes."

    >>> two_responses('Yes.\\n******\\nNo.', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    parts = response.split("******")
    kept = []
    for i, part in enumerate(parts):
        if part.strip():
            kept.append(part.strip())
        elif i not in (0, len(parts) - 1):
            return _make_check((False, "empty response between '******' separators"))
    if len(kept) != 2:
        return _make_check(
            (False, f"{_count(len(kept), 'response')} separated by '******', expected exactly 2")
        )
    if kept[0] == kept[1]:
        return _make_check((False, "the two responses are identical"))
    return _make_check((True, "two different responses separated by '******'"))


@_ifeval(
    "combination:repeat_prompt",
    dimension="structure",
    params=[
        Param("prompt_to_repeat", "str", required=True, help="the request to repeat word for word first")
    ],
    params_check=nonblank_check("prompt_to_repeat"),
    description="First repeat the request word for word without change, then give your answer.",
)
def repeat_prompt(response: str, p: Mapping[str, Any]) -> Check:
    """The response starts with ``prompt_to_repeat`` (case-insensitive, outer whitespace ignored).

    Example: ``prompt_to_repeat="Write a haiku."`` passes "write a haiku. Autumn moonlight..."

    >>> repeat_prompt('Write a haiku. Autumn moonlight...', {'prompt_to_repeat': 'Write a haiku.'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    prompt = p["prompt_to_repeat"].strip().lower()
    if response.strip().lower().startswith(prompt):
        return _REPEATS_PROMPT
    return _make_check((False, f"does not start with the request {_quote(p['prompt_to_repeat'].strip())}"))


_REPEATS_PROMPT = Check(True, "starts by repeating the request")


# ---------------------------------------------------------------------------------------------
# startend:*


@_ifeval(
    "startend:end_checker",
    dimension="format",
    params=[Param("end_phrase", "str", required=True, help="the exact phrase the response must end with")],
    params_check=nonblank_check("end_phrase"),
    description="Finish your response with this exact phrase {end_phrase}. No other words should follow this phrase.",
)
def end_checker(response: str, p: Mapping[str, Any]) -> Check:
    """The response ends with ``end_phrase`` (case-insensitive; outer whitespace and '"' ignored).

    Example: ``end_phrase="Any other questions?"`` passes "Done. Any other questions?  \\n"

    >>> end_checker('Done. Any other questions?  \\n', {'end_phrase': 'Any other questions?'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    value = response.strip().strip('"')
    phrase, passed = _end_phrase(p["end_phrase"])
    # Only the tail can matter; on ASCII text lowering keeps lengths, so only the tail is lowered.
    tail = value[-len(phrase) :].lower() if value.isascii() else value.lower()
    if tail.endswith(phrase):
        return passed
    return _make_check(
        (
            False,
            f"ends with {_quote(value.lower()[-len(phrase) :])}, expected {_quote(p['end_phrase'].strip())}",
        )
    )


@functools.lru_cache(maxsize=1024)
def _end_phrase(end_phrase: str) -> tuple[str, Check]:
    """The phrase as compared (stripped, lowered) and the Check for a response ending with it."""
    return end_phrase.strip().lower(), Check(True, f"ends with {_quote(end_phrase.strip())}")


@_ifeval(
    "startend:quotation",
    dimension="format",
    description="Wrap your entire response with double quotation marks.",
)
def quotation(response: str, p: Mapping[str, Any]) -> Check:
    """The stripped response starts and ends with a straight double quote.

    Example: passes '"Hello there."' and fails 'Hello there.'

    >>> quotation('"Hello there."', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    value = response.strip()
    if len(value) > 1 and value[0] == '"' and value[-1] == '"':
        return _QUOTED
    if len(value) > 1 and value[0] in "“”" and value[-1] in "“”":
        # IFEval (strict) wants straight quotes; say so, since curly ones look right to a person.
        return _make_check((False, 'wrapped in curly quotes “…”; IFEval requires straight double quotes "…"'))
    return _make_check((False, f"not wrapped in double quotes (starts {value[:1]!r}, ends {value[-1:]!r})"))


_QUOTED = Check(True, "wrapped in double quotes")


# ---------------------------------------------------------------------------------------------
# change_case:* and punctuation:*


@_ifeval(
    "change_case:capital_word_frequency",
    dimension="format",
    params=[
        Param("capital_frequency", "int", required=True, help="threshold on the number of ALL-CAPS words"),
        _relation_param("capital_relation"),
    ],
    # No minimum: unlike the other counts, the reference keeps a negative capital_frequency (it
    # draws one only when it is missing), so "at least -1" passes and "less than -1" fails.
    description="In your response, words with all capital letters should appear {capital_relation} {capital_frequency} times.",
)
def capital_word_frequency(response: str, p: Mapping[str, Any]) -> Check:
    """Tokens of ``nltk.word_tokenize`` in all capital letters ("AI-BASED" is one), as the reference counts.

    Example: ``capital_frequency=2, capital_relation="at least"`` passes "VERY GOOD idea."

    >>> capital_word_frequency('VERY GOOD idea.',
    ... {'capital_frequency': 2, 'capital_relation': 'at least'}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    return _relation_check(_capital_words(response), "all-capital word", p["capital_relation"], p["capital_frequency"])


def _capital_words(response: str) -> int:
    """How many tokens of ``word_tokenize(response)`` are all capitals (``str.isupper``)."""
    return sum(map(str.isupper, word_tokenize(response)))


def _english_case(response: str, case: str) -> Check:
    if not response or response.isspace():
        return _EMPTY
    ok_case = response.isupper() if case == "upper" else response.islower()
    if not ok_case:
        # As in the reference, the case test comes first, so language detection is skipped.
        if not any(ch.isalpha() for ch in response):
            return _make_check((False, "no letters at all"))
        wrong = next(
            (
                w
                for w in response.split()
                if (not w.isupper() if case == "upper" else not w.islower()) and any(ch.isalpha() for ch in w)
            ),
            None,
        )
        what = "lowercase" if case == "upper" else "capital"
        example = f" (e.g. {wrong!r})" if wrong else ""
        return _make_check((False, f"contains {what} letters{example}; expected all {case}case"))
    detected, why = _detect_language(response)
    if detected is None:
        # As the reference: a detection error counts as English.
        return _make_check((True, f"all {case}case; language could not be detected ({why}), counted as English as IFEval does"))
    if detected != "en":
        return _make_check((False, f"all {case}case, but detected language {detected}, expected English"))
    return _make_check((True, f"English, all {case}case"))


@_ifeval(
    "change_case:english_capital",
    dimension="format",
    description="Your entire response should be in English, and in all capital letters.",
)
def english_capital(response: str, p: Mapping[str, Any]) -> Check:
    """All cased characters are upper case and the language is English.

    Example: passes "THIS IS MY ANSWER ABOUT THE WEATHER TODAY." and fails "This is my answer."

    >>> english_capital('THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG NEAR THE RIVER BANK TODAY.', {}).passed
    True
    """
    return _english_case(response, "upper")


@_ifeval(
    "change_case:english_lowercase",
    dimension="format",
    description="Your entire response should be in English, and in all lowercase letters. No capital letters are allowed.",
)
def english_lowercase(response: str, p: Mapping[str, Any]) -> Check:
    """All cased characters are lower case and the language is English.

    Example: passes "this is my answer about the weather today." and fails "This is my answer."

    >>> english_lowercase('the quick brown fox jumps over the lazy dog near the river bank today.  \\n',
    ... {}).passed
    True
    """
    return _english_case(response, "lower")


@_ifeval(
    "punctuation:no_comma",
    dimension="format",
    description="In your entire response, refrain from the use of any commas.",
)
def no_comma(response: str, p: Mapping[str, Any]) -> Check:
    """No ASCII comma anywhere (IFEval does not count the full-width '，').

    Example: passes "Red and blue." and fails "Red, blue."

    >>> no_comma('Red and blue.', {}).passed
    True
    """
    if not response or response.isspace():
        return _EMPTY
    first = response.find(",")
    if first < 0:
        return _NO_COMMAS
    # The line of the first comma, found around it rather than by splitting every line.
    end = response.find("\n", first)
    line = response[response.rfind("\n", 0, first) + 1 : end if end >= 0 else None]
    return _make_check(
        (False, f"{_count(response.count(','), 'comma')}, expected none (first in {_quote(line.strip())})")
    )


_NO_COMMAS = Check(True, "no commas")
