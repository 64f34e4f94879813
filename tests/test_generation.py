"""Generation backends: batched in-process generation equals one-by-one; HTTP sends media parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from ifpo.verifiers.generation import GenerationConfig, item_messages, make_generator

SAMPLE = Path(__file__).resolve().parent.parent / "sample"
ITEMS = [json.loads(line) for line in (SAMPLE / "items.jsonl").read_text().splitlines()]


def _mixed():
    videos = [i for i in ITEMS if i["media"].get("videos")][:2]
    images = [i for i in ITEMS if i["media"].get("images")][:2]
    texts = [i for i in ITEMS if not i["media"].get("videos") and not i["media"].get("images")][:1]
    return [item_messages(i) for i in videos + images + texts]


@pytest.mark.slow
def test_batched_generation_matches_one_by_one(tmp_path):
    from ifpo.train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", seed=0)
    convs = _mixed()
    cfg = {"backend": "transformers", "model": str(model), "max_new_tokens": 10}
    one = make_generator({**cfg, "batch_size": 1}, SAMPLE).generate(convs)
    batched = make_generator({**cfg, "batch_size": 5}, SAMPLE).generate(convs)
    assert batched == one and len(one) == 5


def test_openai_backend_sends_images_and_video_frames():
    seen = []

    def handler(body):
        seen.append(body)
        return 200, "an answer"

    with FakeOpenAI(handler) as server:
        gen = make_generator({"backend": "openai", "model": "m", "base_url": server.base_url, "media": {"video_fps": 1.0}},
                             SAMPLE)
        out = gen.generate(_mixed()[:1] + _mixed()[2:3])
    assert out == ["an answer", "an answer"]
    # requests run concurrently: identify them by their parts, not their order
    counts = sorted(sum(p["type"] == "image_url" for p in b["messages"][-1]["content"]) for b in seen)
    assert counts == [1, 4]  # one image; 4 s of video at 1 fps
    urls = [p["image_url"]["url"] for b in seen for p in b["messages"][-1]["content"] if p["type"] == "image_url"]
    assert all(u.startswith("data:image/png;base64,") for u in urls)


def test_generation_config_errors():
    with pytest.raises(ValueError, match="did you mean 'max_new_tokens'"):
        GenerationConfig.from_mapping({"model": "m", "max_tokens": 5})
    with pytest.raises(ValueError, match="did you mean 'video_fps'"):
        GenerationConfig(model="m", media={"video_fsp": 1})
    with pytest.raises(ValueError, match="batch_size must be > 0"):
        GenerationConfig(model="m", batch_size=0)
