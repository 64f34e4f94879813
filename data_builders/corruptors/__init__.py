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
(docs/DESIGN.md, "The verdict contract": a verdict is computed one way in one place). Every returned candidate therefore fails
the target constraint; whether it leaves the item's *other* constraints alone is for the pair
builder to verify with the item in hand, which is why a corruptor offers several edits of
different kinds (e.g. padding inside a sentence keeps the sentence count, merging two sentences
keeps the word count).

Usage::

    rng = random.Random(0)
    corrupt_candidates("word_count", response, {"min_count": 20, "max_count": 40}, rng)

Layout (docs/adding-a-constraint-type.md): :mod:`.registry` builds the table from one module per
family beside the checker families of ``verifiers/rules/`` (:mod:`.ifeval`, :mod:`.vcifbench`,
:mod:`.video_ifbench`, :mod:`.vsysbench`); functions that several families' types share are in
:mod:`.shared`; the edit machinery is in :mod:`.oracle` (checker oracle and search),
:mod:`.edits` (text primitives), :mod:`.counts` (edit families for counts) and :mod:`.formats`
(broken JSON, CSV and tables).

Determinism: the candidates depend only on (type, response, params, rng state); no set of strings
is ever iterated, so results do not change with ``PYTHONHASHSEED``.
"""

from __future__ import annotations

from ifpo.data_builders.corruptors.registry import (
    CORRUPTORS,
    FAMILIES,
    NO_CORRUPTOR,
    Corruptor,
    corrupt_candidates,
    get_corruptor,
    supported,
)

__all__ = [
    "CORRUPTORS",
    "FAMILIES",
    "NO_CORRUPTOR",
    "Corruptor",
    "corrupt_candidates",
    "get_corruptor",
    "supported",
]
