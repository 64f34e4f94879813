"""Fixtures shared by several test modules (a module that defines its own of the same name wins).

``tiny_dir``, ``processor`` and ``pairs`` are module-scoped: each module that asks builds its own tiny
Qwen3-VL (seconds) and stand-in sample pairs, so modules stay independent of one another's order.
"""

from __future__ import annotations

import pytest
from ifpo.train.pairs import load_pairs
from ifpo.train.sample_pairs import build_sample_pairs
from ifpo.train.tiny_model import build_tiny_model


def pytest_addoption(parser):
    parser.addoption(
        "--learning-seed", type=int, default=0,
        help="seed of the learning tests' training, sampling and pair building (tests/test_efficacy.py, the on-policy "
        "test): their margins must hold on seeds other than the default 0 too")


@pytest.fixture(scope="session")
def learning_seed(request) -> int:
    return request.config.getoption("--learning-seed")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def processor(tiny_dir):
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_dir)
    processor.tokenizer.padding_side = "left"
    return processor


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    out = build_sample_pairs(tmp_path_factory.mktemp("pairs") / "sample")
    return load_pairs(str(out), output_dir=out.parent)
