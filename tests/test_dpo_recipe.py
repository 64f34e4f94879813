"""Recipe parsing for train/dpo.py: precedence, unknown keys, type conversion, bad combinations, shipped recipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ifpo.train.recipe import DPORecipe, RecipeError, dump_resolved, parse_recipe

REPO = Path(__file__).resolve().parent.parent
CPU = ["--use_cpu", "true", "--bf16", "false"]


def write(tmp_path: Path, text: str, name: str = "r.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_defaults_then_yaml_then_command_line(tmp_path):
    path = write(tmp_path, "learning_rate: 1e-3\nbeta: 0.2\nlora_r: 8\nuse_cpu: true\nbf16: false\n")
    recipe = parse_recipe([path, "--learning_rate", "2e-4", "--lora_r=4", "--output_dir", str(tmp_path / "o")])
    assert recipe.args.learning_rate == pytest.approx(2e-4)  # command line beats YAML
    assert recipe.args.beta == pytest.approx(0.2)  # YAML beats default
    assert recipe.ifpo.lora_r == 4
    assert recipe.ifpo.lora_alpha == DPORecipe().lora_alpha  # default kept
    # ifpo owns max_length and the precompute: TRL must neither truncate nor run its own precompute.
    assert recipe.args.max_length is None and recipe.args.precompute_ref_log_probs is False
    assert recipe.ifpo.max_length == 4096


def test_lists_flags_and_none(tmp_path):
    path = write(tmp_path, "use_cpu: true\nbf16: false\n")
    recipe = parse_recipe([path, "--loss_type", "sigmoid,sft", "--loss_weights", "[1.0, 0.5]", "--resume",
                           "--report_to", "none", "--max_length", "null", "--label_smoothing", "0.1"])
    assert recipe.args.loss_type == ["sigmoid", "sft"]
    assert recipe.args.loss_weights == [1.0, 0.5]
    assert recipe.ifpo.resume is True
    assert recipe.ifpo.max_length is None
    assert recipe.args.label_smoothing == pytest.approx(0.1)
    assert recipe.args.report_to in ([], "none", ["none"])


@pytest.mark.parametrize(
    ("text", "argv", "expected"),
    [
        ("lerning_rate: 1e-5\n", [], "unknown key 'lerning_rate'.*did you mean 'learning_rate'"),
        ("", ["--lora_alfa", "8"], "unknown key 'lora_alfa' in the command line.*did you mean 'lora_alpha'"),
        ("", ["--max_steps", "many"], "max_steps: expected an integer"),
        ("overlong: truncate\n", [], "overlong must be 'error' or 'drop'"),
        ("use_lora: false\nlora_vision: true\n", [], "lora_vision: true needs use_lora: true"),
        ("truncation_mode: keep_end\n", [], "truncation_mode is not used by ifpo"),
        ("loss_type: [sigmoid, sft]\nloss_weights: [1.0]\n", [], "loss_weights"),
        ("report_to: mlfow\n", [], "report_to: 'mlfow' is not a tracker.*did you mean 'mlflow'"),
        ("video_min_pixels: 100000\nvideo_max_pixels: 1000\n", [], "video_min_pixels .* exceeds video_max_pixels"),
        ("- a\n- b\n", [], "expected a mapping of settings, got list"),
        # Values TRL/torch/numpy refused only after the model was built (or mid-training), far from their key:
        ("learning_rate: 1.0e-5\nlearning_rate: 2.0e-5\n", [], ":4: YAML syntax error: key 'learning_rate' is given twice"),
        ("", ["--learning_rate", "nan"], "learning_rate: expected a finite number"),
        ("", ["--video_fps", "inf"], "video_fps: expected a finite number"),  # NaN frames mid-training
        ("", ["--seed", "-1"], "seed: expected a seed in 0..4294967295"),  # numpy's set_seed error
        ("", ["--tiny_seed", "99999999999999999999"], "tiny_seed: expected a seed"),  # torch overflow
        ("", ["--per_device_train_batch_size", "0"], "per_device_train_batch_size must be >= 1"),
        ("", ["--learning_rate", "-1"], "learning_rate must be >= 0"),
    ],
)
def test_bad_recipes_name_the_key(tmp_path, text, argv, expected):
    path = write(tmp_path, "use_cpu: true\nbf16: false\n" + text if not text.startswith("-") else text)
    with pytest.raises(RecipeError, match=expected):
        parse_recipe([path, *argv])


def test_bf16_on_cpu_is_refused(tmp_path):
    path = write(tmp_path, "learning_rate: 1e-5\n")
    with pytest.raises(RecipeError, match="use_cpu: true and bf16: false"):
        parse_recipe([path, "--use_cpu", "true"])


def test_recipe_must_come_first(tmp_path):
    with pytest.raises(RecipeError, match="recipe comes first"):
        parse_recipe(["--learning_rate", "1e-5"])
    with pytest.raises(RecipeError, match="not found"):
        parse_recipe([str(tmp_path / "missing.yaml")])


@pytest.mark.parametrize("name", ["tiny.yaml", "qwen3vl2b.yaml", "qwen3vl4b.yaml", "qwen3vl8b.yaml"])
def test_shipped_recipes_parse(tmp_path, name):
    # the real recipes evaluate on held-out items the user names (tests/test_eval_hook_defaults.py)
    items = [] if name == "tiny.yaml" else ["--eval_hook.items", str(REPO / "sample" / "world" / "heldout.jsonl")]
    recipe = parse_recipe([str(REPO / "recipes" / name), *CPU, "--output_dir", str(tmp_path), *items])
    dump_resolved(recipe, tmp_path / "resolved.yaml")
    resolved = yaml.safe_load((tmp_path / "resolved.yaml").read_text())
    assert resolved["model_name_or_path"] == recipe.ifpo.model_name_or_path
    if name == "qwen3vl8b.yaml":
        # VCIFBench's DPO settings.
        assert recipe.ifpo.lora_r == 16 and recipe.ifpo.video_fps == 0.5 and recipe.ifpo.video_max_side == 720
        assert recipe.args.per_device_train_batch_size == 1 and recipe.args.gradient_accumulation_steps == 8
        assert recipe.args.learning_rate == pytest.approx(1e-5)
        assert recipe.args.activation_checkpointing is True


def test_accelerate_configs_are_complete():
    configs = {p.name: yaml.safe_load(p.read_text()) for p in (REPO / "accelerate_configs").glob("*.yaml")}
    expected = {
        "single_gpu.yaml": "NO",
        "ddp.yaml": "MULTI_GPU",
        "zero2.yaml": "DEEPSPEED",
        "zero3.yaml": "DEEPSPEED",
        "zero3_offload.yaml": "DEEPSPEED",
        "fsdp2.yaml": "FSDP",
        "multi_node.yaml": "MULTI_GPU",
    }
    for name, kind in expected.items():
        assert configs[name]["distributed_type"] == kind, name
    assert configs["zero3_offload.yaml"]["deepspeed_config"]["offload_optimizer_device"] == "cpu"
    assert configs["fsdp2.yaml"]["fsdp_config"]["fsdp_version"] == 2
    assert configs["multi_node.yaml"]["num_machines"] > 1


def test_bad_recipe_exits_with_one_line_and_no_traceback(tmp_path):
    path = write(tmp_path, "use_cpu: true\nbf16: false\nlerning_rate: 1e-5\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(REPO / "train" / "dpo.py"), path], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("train/dpo.py: error:")]
    assert errors == [
        "train/dpo.py: error: unknown key 'lerning_rate' in " + path + "; did you mean 'learning_rate'?"
    ]


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b"learning_rate: \xff\n", "not UTF-8 text .byte offset 15."),  # was a bare UnicodeDecodeError
        (b"a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + b"".join(
            f"a{n}: &a{n} [{', '.join(['*a' if n == 1 else f'*a{n - 1}'] * 10)}]\n".encode() for n in range(1, 7)),
         "expand to over 1,000,000 values"),
    ],
)
def test_recipe_files_are_read_like_every_settings_file(tmp_path, raw, expected):
    path = tmp_path / "recipe.yaml"
    path.write_bytes(raw)
    with pytest.raises(RecipeError, match=expected) as err:
        parse_recipe([str(path)])
    assert str(path) in str(err.value)
