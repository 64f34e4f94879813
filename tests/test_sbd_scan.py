"""The compiled sentence reading (verifiers/_sbd_scan.pyx) against the expression it reproduces.

split_sentences reads its sentences with one expression, ``_sbd._READ``; where the extension is
built, ``_sbd_scan.read`` reads the same pieces on the characters (faster: no string per piece, no
join). Both must give the same pieces on random texts drawn from every character the expression
tells apart, and the whole splitter the same sentences with either (tests/test_text.py compares the
splitter with stock pysbd).
"""

from __future__ import annotations

import os
import random

import bench_modules
import pytest
from ifpo.verifiers import _sbd

# every character class _READ tells apart: its marks (and the pair markers), the brackets and quotes
# it opens and closes with, the comma before a closing quote, ASCII capitals (what may follow a
# closer) and other letters, spaces other than the line break, line breaks, other marks
PIECES = (list("。．.！!?？") + ["\ue010", "\ue011", "\ue012", "\ue013"]
          + list("（）「」()'\"“”,") + ["A", "Z", "É", "a", "z", "1", "_", "中", "-", "*"]
          + [" ", "  ", "\t", "\u00a0", "\u3000", "\x1c", "\n", "\n\n"]
          + ["(ab) C", "（x） Y", "「x」 Q", "'ab' C", '"ab" D', "“ab” E", "'a,' B", "“a,” B", "''' C", '""" C',
             "“a”” B", "\ue011\ue013", "\ue012\ue010 x.", "a .", "a  ", " . . ", "x. Y"])


def _texts(n: int, seed: int, longest: int = 30) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, longest))) for _ in range(n)]


def _reference(text: str, sep: str, drop_wordless: bool) -> str:
    joined = "".join(sep + piece for piece in _sbd._READ.findall(text))
    if drop_wordless:
        joined = (_sbd._NO_ALNUM_PIECE if sep == "\x00" else _sbd._NO_ALNUM_PIECE_PUA).sub("", joined)
    return joined


@pytest.fixture(scope="module")
def reader():
    if _sbd._READER is None:
        pytest.skip("the compiled reading is not built (test_compiled_reading_is_built says why)")
    return _sbd._READER


def test_compiled_reading_is_built(can_compile):
    """Where a C compiler is, the install builds it, so it must be there (without it split_sentences
    reads with the expression: the same sentences, slower)."""
    if os.environ.get("IFPO_SBD_PURE", "") not in ("", "0"):
        pytest.skip("IFPO_SBD_PURE is set: the expression reads by request")
    if _sbd._READER is None and not can_compile:
        pytest.skip("no C compiler or Python headers here: the compiled reading cannot be built")
    assert _sbd._READER is not None, "ifpo.verifiers._sbd_scan is not built: reinstall (pip install -e .)"


def test_the_environment_asks_for_the_expression(monkeypatch):
    monkeypatch.setenv("IFPO_SBD_PURE", "1")
    assert _sbd._compiled_reader() is None


@pytest.mark.parametrize("sep", ["\x00", "\ue000"])
@pytest.mark.parametrize("drop_wordless", [False, True])
def test_reads_the_pieces_of_the_expression(reader, sep, drop_wordless):
    texts = _texts(20_000, seed=5) + ["", "a", "\n", " ", "  ", "(", "'", "“”", "a\n", "a \n", "a .", "\ue011\ue010"]
    texts.append("\n".join(texts[:500]))
    differ = [t for t in texts if reader.read(t, sep, drop_wordless) != _reference(t, sep, drop_wordless)]
    assert not differ, [(t, reader.read(t, sep, drop_wordless), _reference(t, sep, drop_wordless)) for t in differ[:3]]


def test_reads_every_kind_of_string(reader):
    # one-, two- and four-byte strings, and text around the largest code point
    for text in ["plain ascii. Next one", "caf\u00e9 \u00e0 la. Oui", "\u4e2d\u6587\u3002\u597d", "emoji \U0001f600. Z",
                 "\U0010ffff. \U0010ffff"]:
        assert reader.read(text, "\x00", False) == _reference(text, "\x00", False)


def test_separator_must_be_one_character(reader):
    with pytest.raises(ValueError, match="one character"):
        reader.read("a. b.", "", False)


def test_splitter_gives_the_same_sentences_either_way(monkeypatch):
    """split_sentences and count_sentences with the compiled reading and with the expression: random
    texts of the reading's characters, of the masking passes' (tests/test_sbd_passes.py), many lines
    at once, the bench shapes, and a quote split that leaves a piece without a letter (dropped)."""
    if _sbd._READER is None:
        pytest.skip("the compiled reading is not built")
    words = ["Mr. ", "Dr. ", "e.g. ", "1. ", "a) ", "(i) ", "U.S. ", "x@y.com", "...", " . ", "?!", "!!", "Yahoo! ",
             "He said \"Hi.\" She left.", "'Yes.' No", "[1] ", "3.5 ", "\x00", "\ue003"]
    texts = _texts(6000, seed=9) + ["".join(t) for t in (random.Random(3).choices(words + PIECES, k=12)
                                                            for _ in range(4000))]
    texts += ['x. -" Ab', '." Bc d.', '?" Ab. -" Cd', 'x\x00. -" Ab']
    texts.append("\n".join(texts[:800]))
    texts += bench_modules.load("checker_scaling").shapes(20_000).values()
    compiled = [(_sbd.split_lines_into_sentences(t), _sbd.count_sentences(t)) for t in texts]
    monkeypatch.setattr(_sbd, "_READER", None)
    pure = [(_sbd.split_lines_into_sentences(t), _sbd.count_sentences(t)) for t in texts]
    differ = [(t, c, p) for t, c, p in zip(texts, compiled, pure, strict=True) if c != p]
    assert not differ, differ[:3]
    assert compiled[texts.index('x. -" Ab')] == (["x.", "Ab"], 2)  # (the quote split's '-"' dropped)
