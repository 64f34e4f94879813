"""Corruptors for IFBench's instruction ids (``verifiers/rules/ifbench.py``).

IFBench's checks are small and varied (letter patterns, sentence shapes, fixed answers), so one
corruptor serves them all: it proposes a fixed, ordered set of minimal edits of the chosen response
(one word or sentence added, removed, repeated or recased; a line break, bracket, quote, comma or
``*`` added or removed; the last line dropped) plus, for count kwargs, repeated padding, and the
oracle (:func:`~ifpo.data_builders.corruptors.oracle.finish`) keeps only the edits that the id's own
checker fails, smallest first. Every returned candidate therefore breaks the constraint; when no
edit of the set does, the list is empty and the pair builder falls back as for any other type.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from ifpo.data_builders.corruptors.oracle import CorruptFn
from ifpo.verifiers.constraints import REGISTRY
from ifpo.verifiers.registry import ConstraintType

_WORD = re.compile(r"\S+")


def _edits(response: str, rng: random.Random) -> list[str]:
    words = [(m.start(), m.end()) for m in _WORD.finditer(response)]
    lines = response.split("\n")
    out: list[str] = []
    if words:
        s, e = words[len(words) // 2]
        w = response[s:e]
        out += [
            response[:s] + response[e:].lstrip(" "),  # drop a word
            response[:e] + " " + w + response[e:],  # repeat a word
            response[:s] + w.swapcase() + response[e:],  # recase a word
            response[:e] + "," + response[e:],  # add a comma
            response[: words[0][0]] + response[words[0][0] : words[0][1]].lower() + response[words[0][1] :],
            response[:e] + "\n" + response[e:].lstrip(" "),  # break a line
            response[:s] + w[::-1] + response[e:],  # reverse a word
            response[: words[-1][0]].rstrip(" "),  # drop the last word
            response[words[0][1] :].lstrip(" "),  # drop the first word
        ]
        if len(words) > 1:  # swap the first two words
            (s0, e0), (s1, e1) = words[0], words[1]
            out.append(response[:s0] + response[s1:e1] + response[e0:s1] + response[s0:e0] + response[e1:])
    sentences = re.split(r"(?<=[.!?])\s+", response.strip())
    if len(sentences) > 1:
        out.append(" ".join(sentences[:-1]))  # drop the last sentence
        out.append(" ".join(sentences[1:]))  # drop the first sentence
    out += [
        response.rstrip() + " And it is so.",  # add a sentence
        response.rstrip() + " Is it?",
        response.rstrip() + " the the the the the the the the",  # repeated filler words
        "\n".join(lines[:-1]) if len(lines) > 1 else None,  # drop the last line
        "\n".join(ln.lstrip() for ln in lines),  # no indentation
        " ".join(response.split()),  # squash whitespace and line breaks
        response.replace("*", ""),
        response.replace('"', "").replace("'", ""),
        re.sub(r"[()\[\]{}]", "", response),
        re.sub(r"\d", "7", response),
        response.rstrip() + " 12",
        "Note: " + response,  # something before the answer
        response.upper(),
        response.lower(),
    ]
    return [c for c in out if c]


def corrupt_ifbench(response: str, params: Mapping[str, Any], rng: random.Random, ctype: ConstraintType) -> list[str]:
    """Minimal edits of the chosen response that the id's checker fails (see the module docstring).

    Example (``words:alphabet``): ``"Apples bring cheer"`` -> ``"Apples bring bring cheer"``.
    """
    return _edits(response, rng)


CORRUPTORS: dict[str, CorruptFn] = {
    t.id: corrupt_ifbench for t in REGISTRY if t.source == "ifbench" and t.route != "judge"
}
NO_CORRUPTOR: dict[str, str] = {}
