"""train/sft.py: recipe parsing, the warm start's partial obedience, example encoding and a real tiny run."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from ifpo.data_builders.sample_benchmark.world import PREFERRED_KINDS, make_items, write_world
from ifpo.train.recipe import RecipeError
from ifpo.train.sft import parse_recipe, partial_obedience

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--learning_rat", "1e-3"], "did you mean 'learning_rate'"),
        (["--responses", "chosen"], "responses must be one of"),
        (["--obey_rate", "1.5"], "obey_rate must be in [0, 1]"),
        (["--max_steps", "0"], "max_steps must be positive"),
        (["--video_min_frames", "0"], "video_min_frames"),
        (["--vision_warmup_steps", "-1"], "vision_warmup_steps must be >= 0"),
        (["--vision_qa_share", "1.0"], "vision_qa_share must be in [0, 1"),
        (["--responses", "reference", "--vision_qa_share", "0.3"], "vision_qa_share needs responses: world_partial"),
    ],
)
def test_bad_recipe_values_are_named(extra, message):
    with pytest.raises(RecipeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_recipe([str(REPO / "recipes" / "tiny_sft.yaml"), *extra])


def test_recipe_resolves_defaults_file_then_command_line():
    recipe = parse_recipe([str(REPO / "recipes" / "tiny_sft.yaml"), "--max_steps", "7"])
    assert recipe.max_steps == 7 and recipe.responses == "world_partial" and recipe.learning_rate == 3e-3


def test_partial_obedience_follows_the_preferred_kinds():
    items = [i for i, _ in make_items(400, "train", seed=0)]
    rng = random.Random(0)
    hits = {True: [0, 0], False: [0, 0]}
    for item in items:
        kind = item["world"]["scene"]["kind"]
        for cid, obeyed in partial_obedience(item, rng, 0.85).items():
            preferred = kind in PREFERRED_KINDS[item["world"]["roles"][cid]]
            hits[preferred][0] += obeyed
            hits[preferred][1] += 1
    assert 0.8 < hits[True][0] / hits[True][1] < 0.9
    assert 0.1 < hits[False][0] / hits[False][1] < 0.2


def test_alignment_examples_are_flat_colours_first_then_single_shapes():
    import numpy as np
    from ifpo.data_builders.sample_benchmark.media import BACKGROUND_RGB, PALETTE
    from ifpo.data_builders.sample_benchmark.world import SHAPES, alignment_examples

    examples = alignment_examples(50, seed=3)
    assert [(q, a) for _, q, a in examples] == [(q, a) for _, q, a in alignment_examples(50, seed=3)]
    for k, (image, question, answer) in enumerate(examples):
        pixels = {tuple(p) for p in np.asarray(image).reshape(-1, 3)}
        if k < 20:  # the first 40%: the whole image is the colour asked for
            color = answer.removeprefix("It is ").removesuffix(".")
            assert question == "What colour is the image?" and pixels == {PALETTE[color]}
        else:  # one shape on white: its colour is in the image, as is its shape word in the answer
            assert BACKGROUND_RGB in pixels and len(pixels) == 2
            color = next(c for c, rgb in PALETTE.items() if rgb in pixels)
            if question == "What colour is the shape?":
                assert answer == f"It is {color}."
            else:
                assert answer.removeprefix("It is a ").removesuffix(".") in SHAPES


def test_pixel_questions_answer_with_the_facts_the_pixel_rules_check():
    from ifpo.data_builders.sample_benchmark.world import pixel_questions

    for item, _ in make_items(40, "train", seed=1):
        objs = item["world"]["scene"]["objects"]
        (_, first), (_, last), (_, count) = pixel_questions(item)
        n = {2: "two", 3: "three"}[len(objs)]
        assert (first, last, count) == (f"It is {objs[0]['color']}.", f"It is {objs[-1]['color']}.", f"There are {n} shapes.")
        for c in item["constraints"]:  # the rule's required phrase holds the same fact
            role = item["world"]["roles"][c["id"]]
            if role in ("first_color", "last_color", "count"):
                fact = {"first_color": first, "last_color": last, "count": count}[role]
                # the same words, so the same tokens as the descriptions (" red", not "red")
                assert c["params"]["phrases"][0] in fact


@pytest.mark.slow
def test_tiny_sft_run_masks_the_prompt_and_saves_a_loadable_model(tmp_path):
    from ifpo.train.sft import SFTRecipe, encode_examples, load_model, targets
    from ifpo.verifiers.schema import read_items

    items_path = write_world(tmp_path / "world", 6, "train", seed=0)
    recipe = SFTRecipe(items=str(items_path), responses="reference", output_dir=str(tmp_path / "sft"), max_steps=3,
                       per_device_train_batch_size=2, logging_steps=1)
    items = read_items(items_path)
    processor, _ = load_model(recipe)
    examples = encode_examples(items, targets(items, recipe), processor, recipe.media(), items_path.parent)
    for item, ex in zip(items, examples):
        target = ex["labels"][ex["labels"] != -100]
        assert processor.tokenizer.decode(target) == item["reference_response"] + "<|im_end|>"
        assert (ex["labels"][: len(ex["input_ids"]) - len(target)] == -100).all()
    proc = subprocess.run(
        [sys.executable, "train/sft.py", "recipes/tiny_sft.yaml", "--items", str(items_path), "--responses", "reference",
         "--vision_qa_share", "0", "--vision_warmup_steps", "2", "--output_dir", str(tmp_path / "run"),
         "--max_steps", "3", "--per_device_train_batch_size", "2", "--logging_steps", "1",
         "--threads", "1"],  # a 2-thread pool on 2 shared cores waits on the busy one
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(tmp_path / "run")
    assert sum(p.numel() for p in model.parameters()) > 1_000_000
    lines = (tmp_path / "run" / "log_history.jsonl").read_text().splitlines()
    assert len(lines) == 2 + 3 and '"stage": "vision_warmup"' in lines[0]


def test_bad_items_path_is_one_line_error(tmp_path):
    proc = subprocess.run([sys.executable, "train/sft.py", "recipes/tiny_sft.yaml", "--items", str(tmp_path / "no.jsonl"),
                           "--output_dir", str(tmp_path / "o")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "items:" in proc.stderr and "Traceback" not in proc.stderr
