"""The tiny random Qwen3-VL: offline build, reload through the Auto classes, seeding, image and
mp4 video forward passes, generation, and the ``ifpo tiny-model`` command."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ifpo.train.tiny_model import (
    ADDED_TEXT_TOKENS,
    MANIFEST_NAME,
    SPECIAL_TOKENS,
    TinySpec,
    build_tiny_model,
    build_tokenizer,
    cli_main,
    read_manifest,
)

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
av = pytest.importorskip("av")
Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def processor(tiny_dir):
    return transformers.AutoProcessor.from_pretrained(tiny_dir)


@pytest.fixture(scope="module")
def model(tiny_dir):
    return transformers.AutoModelForImageTextToText.from_pretrained(tiny_dir).eval()


@pytest.fixture(scope="module")
def mp4_path(tmp_path_factory):
    """1 s, 8 frames at 8 fps, 64x64: a bar moving down over a red ramp."""
    path = tmp_path_factory.mktemp("media") / "clip.mp4"
    codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=8)
        stream.width = stream.height = 64
        stream.pix_fmt = "yuv420p"
        for i in range(8):
            frame = np.zeros((64, 64, 3), np.uint8)
            frame[..., 0] = 30 * i
            frame[8 * i : 8 * i + 8, :, 1] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def _image_messages():
    image = Image.new("RGB", (80, 60), (255, 0, 0))
    return [
        {"role": "system", "content": "Answer in one sentence."},
        {
            "role": "user",
            "content": [
                {"type": "image", "image": image},
                {"type": "text", "text": "What colour is the image?"},
            ],
        },
    ]


def _video_messages(frames):
    return [
        {
            "role": "user",
            "content": [{"type": "video", "video": frames}, {"type": "text", "text": "Describe the video."}],
        }
    ]


def _safetensors(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


# ------------------------------------------------------------------------------------------
# build and reload
# ------------------------------------------------------------------------------------------


def test_reloads_with_auto_classes(tiny_dir, processor, model):
    assert type(processor).__name__ == "Qwen3VLProcessor"
    assert type(processor.video_processor).__name__ == "Qwen3VLVideoProcessor"
    assert type(model).__name__ == "Qwen3VLForConditionalGeneration"
    tok = processor.tokenizer
    cfg = model.config
    assert cfg.text_config.vocab_size == len(tok)
    assert cfg.image_token_id == tok.convert_tokens_to_ids("<|image_pad|>") == processor.image_token_id
    assert cfg.video_token_id == tok.convert_tokens_to_ids("<|video_pad|>") == processor.video_token_id
    assert cfg.vision_start_token_id == tok.convert_tokens_to_ids("<|vision_start|>")
    assert cfg.vision_end_token_id == tok.convert_tokens_to_ids("<|vision_end|>")
    assert cfg.vision_config.out_hidden_size == cfg.text_config.hidden_size
    assert (tiny_dir / "chat_template.jinja").is_file()


def test_parameter_count_under_one_million(tiny_dir, model):
    n = sum(p.numel() for p in model.parameters())
    assert n < 1_000_000
    assert read_manifest(tiny_dir)["num_parameters"] == n


def test_same_seed_same_weights_other_seed_differs(tiny_dir, tmp_path):
    again = _safetensors(build_tiny_model(tmp_path / "again", seed=0))
    other = _safetensors(build_tiny_model(tmp_path / "other", seed=1))
    first = _safetensors(tiny_dir)
    assert again.keys() == first.keys() == other.keys()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert any(not torch.equal(first[k], other[k]) for k in first)
    # the tokenizer never depends on the seed
    assert (tmp_path / "other" / "tokenizer.json").read_text() == (tiny_dir / "tokenizer.json").read_text()


def test_build_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        build_tiny_model(tmp_path)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"deepstack_visual_indexes": (2,)}, "within vision_depth"),
        ({"text_heads": 3}, "divisible by text_heads"),
        ({"num_position_embeddings": 200}, "perfect square"),
    ],
)
def test_spec_rejects_bad_sizes(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TinySpec(**kwargs)


# ------------------------------------------------------------------------------------------
# tokenizer and chat template
# ------------------------------------------------------------------------------------------


def test_tokenizer_special_tokens_and_round_trip(processor):
    tok = processor.tokenizer
    assert 300 <= len(tok) <= 2100
    for token in SPECIAL_TOKENS + ADDED_TEXT_TOKENS:
        ids = tok(token, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1 and tok.convert_ids_to_tokens(ids[0]) == token
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert tok.bos_token is None
    text = 'Answer in JSON: {"colour": "red", "count": 3}; 12.5% of 2025-01-31, naïve café!'
    assert tok.decode(tok(text)["input_ids"]) == text
    # the corpus was learnt: common instruction words are single tokens
    assert len(tok(" video", add_special_tokens=False)["input_ids"]) == 1
    assert len(tok(" sentences", add_special_tokens=False)["input_ids"]) == 1


def test_tokenizer_is_deterministic():
    assert build_tokenizer().get_vocab() == build_tokenizer().get_vocab()


def test_chat_template_matches_qwen3_vl_layout(processor):
    messages = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "image"},
                {"type": "video"},
                {"type": "text", "text": "Compare them."},
            ],
        },
        {"role": "assistant", "content": "They match."},
        {"role": "user", "content": "Why?"},
    ]
    text = processor.apply_chat_template(messages, add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
        "<|vision_start|><|video_pad|><|vision_end|>Compare them.<|im_end|>\n"
        "<|im_start|>assistant\nThey match.<|im_end|>\n"
        "<|im_start|>user\nWhy?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert not processor.apply_chat_template(messages[:2]).endswith("<|im_start|>assistant\n")


# ------------------------------------------------------------------------------------------
# forward passes
# ------------------------------------------------------------------------------------------


def test_image_prompt_forward_and_generate(processor, model):
    inputs = processor.apply_chat_template(
        _image_messages(), tokenize=True, return_dict=True, return_tensors="pt", add_generation_prompt=True
    )
    grid = inputs["image_grid_thw"]
    n_pads = int((inputs["input_ids"] == processor.image_token_id).sum())
    assert n_pads == int(grid.prod(-1).sum()) // 4 > 0
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits.shape == (1, inputs["input_ids"].shape[1], len(processor.tokenizer))
    assert torch.isfinite(out.logits).all()
    generated = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert generated.shape[1] > inputs["input_ids"].shape[1]
    assert isinstance(processor.batch_decode(generated[:, inputs["input_ids"].shape[1] :])[0], str)


def test_mp4_video_prompt_forward(processor, model, mp4_path):
    from transformers.video_utils import load_video

    frames, meta = load_video(str(mp4_path), backend="pyav", fps=2)
    assert frames.shape == (2, 64, 64, 3) and meta.fps == 8.0 and list(meta.frames_indices) == [0, 4]
    inputs = processor.apply_chat_template(
        _video_messages(frames),
        tokenize=True,
        return_dict=True,
        return_tensors="pt",
        add_generation_prompt=True,
        processor_kwargs={"video_metadata": [meta], "do_sample_frames": False},
    )
    grid = inputs["video_grid_thw"]
    assert grid.tolist() == [[1, 4, 4]]
    assert int((inputs["input_ids"] == processor.video_token_id).sum()) == int(grid.prod(-1).sum()) // 4
    # frames 0 and 4 at 8 fps form one temporal patch, stamped with their mean time
    assert "<0.2 seconds>" in processor.decode(inputs["input_ids"][0])
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits.shape == (1, inputs["input_ids"].shape[1], len(processor.tokenizer))
    assert torch.isfinite(out.logits).all()


def test_processor_samples_frames_from_a_fully_decoded_video(processor, mp4_path):
    from transformers.video_utils import load_video

    frames, meta = load_video(str(mp4_path), backend="pyav")
    assert frames.shape[0] == 8
    prompt = processor.apply_chat_template(_video_messages(frames), add_generation_prompt=True)
    inputs = processor(text=[prompt], videos=[frames], video_metadata=[meta], return_tensors="pt")
    # fps 2 over 1 s asks for 2 frames; min_frames lifts that to 4, i.e. 2 temporal patches
    assert inputs["video_grid_thw"].tolist() == [[2, 4, 4]]
    assert processor.decode(inputs["input_ids"][0]).count(" seconds>") == 2


def test_mp4_path_decoding_depends_on_torchcodec(processor, mp4_path):
    """The docstring's claim: without torchcodec (and with torchvision >= 0.26) a path cannot be
    decoded by the processor. If this machine gains a decoder, the path must simply work."""
    from transformers.utils import is_torchcodec_available
    from transformers.video_utils import is_torchvision_video_decoding_available

    messages = _video_messages(str(mp4_path))
    kwargs = {"tokenize": True, "return_dict": True, "return_tensors": "pt", "add_generation_prompt": True}
    if is_torchcodec_available() or is_torchvision_video_decoding_available():
        assert processor.apply_chat_template(messages, **kwargs)["video_grid_thw"].shape == (1, 3)
    else:
        with pytest.raises(ImportError, match="torchcodec"):
            processor.apply_chat_template(messages, **kwargs)


# ------------------------------------------------------------------------------------------
# command line
# ------------------------------------------------------------------------------------------


def test_cli_writes_then_refuses_non_empty_dir(tmp_path, capsys):
    out = tmp_path / "cli"
    assert cli_main(["--out", str(out), "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["seed"] == 3
    assert f"{manifest['num_parameters']:,d}" in printed and "model.safetensors" in printed

    assert cli_main(["--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "not empty" in captured.err and "--force" in captured.err and "Traceback" not in captured.err

    assert cli_main(["--out", str(out), "--force", "--seed", "4"]) == 0
    assert json.loads((out / MANIFEST_NAME).read_text())["seed"] == 4


def test_cli_refuses_a_file_and_is_routed_by_ifpo(tmp_path, capsys):
    from ifpo.cli import main

    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["tiny-model", "--out", str(a_file)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_cli_pixel_reading_needs_learnable_and_names_its_own_cache(capsys):
    from ifpo.train.tiny_model import PIXEL_READING_BUILD, PIXEL_READING_VERSION, cli_main, learnable_key

    with pytest.raises(SystemExit) as exc:
        cli_main(["--pixel-reading"])
    assert exc.value.code == 2 and "--pixel-reading needs --learnable" in capsys.readouterr().err
    # its own cache entry: building it never replaces (or is mistaken for) the learnable default
    assert learnable_key(PIXEL_READING_BUILD, PIXEL_READING_VERSION) != learnable_key()
