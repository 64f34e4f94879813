"""Everyday-command papercuts (issue 30): each row is something a user met, checked where it can fail."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO)}


# --- train/dpo.py answers --help and setting typos before torch / TRL are imported -------------------


@pytest.mark.parametrize("config", ["DPOConfig", "GRPOConfig"])
def test_trl_keys_read_from_source_equal_the_dataclass_fields(config):
    import trl
    from ifpo.train.recipe import config_keys_from_source

    real = [f.name for f in dataclasses.fields(getattr(trl, config)) if f.init]
    assert sorted(config_keys_from_source(config)) == sorted(real)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--help"], None),
        (["recipes/tiny.yaml", "--report_to", "tensorbord"], "did you mean 'tensorboard'?"),
        (["recipes/tiny.yaml", "--report_to", "tensorboard,wandbb"], "did you mean 'wandb'?"),
        (["recipes/tiny.yaml", "--report_too", "wandb"], "unknown key 'report_too' in the command line; did you mean 'report_to'?"),
        (["recipes/tiny.yaml", "--lora_rank", "8"], "unknown key 'lora_rank' in the command line; did you mean 'lora_r'?"),
        (["recipes/tiny.yaml", "--truncation_mode", "keep_end"], "truncation_mode is not used by ifpo"),
    ],
)
def test_help_and_typos_answer_without_heavy_imports(argv, message):
    """The audit measured 7.5 s for --help and 7.7 s for a report_to typo: torch and TRL were imported first."""
    code = ("import sys, io, contextlib; sys.argv = ['dpo.py']; import runpy; m = runpy.run_path('train/dpo.py');"
            f"rc = m['main']({argv!r}); heavy = sorted({{'torch', 'trl', 'transformers'}} & set(sys.modules));"
            "print('RC', rc, 'HEAVY', heavy)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"RC {0 if message is None else 2} HEAVY []"
    if message is not None:
        assert message in done.stderr


@pytest.mark.parametrize(
    "key, suggestion",
    [("lora_rank", "lora_r"), ("learning_rat", "learning_rate"), ("lora_alpa", "lora_alpha"), ("max_lenght", "max_length"),
     ("num_train_epoch", "num_train_epochs")],
)
def test_a_misspelt_key_suggests_the_recipes_own_key_first(tmp_path, key, suggestion):
    from ifpo.train.recipe import DPORecipe, RecipeError, read_recipe_values
    from trl import DPOConfig

    recipe = tmp_path / "r.yaml"
    recipe.write_text("lora_r: 8\n")
    with pytest.raises(RecipeError, match=rf"did you mean '{suggestion}'\?"):
        read_recipe_values([str(recipe), f"--{key}", "1"], DPORecipe, DPOConfig)


# --- messages -------------------------------------------------------------------------------------


def test_unknown_constraint_type_names_the_count_once():
    from ifpo.verifiers.constraints import REGISTRY
    from ifpo.verifiers.registry import UnknownNameError

    with pytest.raises(UnknownNameError) as info:
        REGISTRY.get("no_such_type_at_all")
    text = str(info.value)
    assert "known: " not in text and text.endswith(f"({len(REGISTRY.ids())} known; `ifpo constraints` lists them)")


# --- ifpo evaluate --recipe and its resume ------------------------------------------------------------


@pytest.mark.parametrize(
    "recipe, flags, expected",
    [
        ("video_fps: 0.5\n", [], 512),  # no limit in the recipe: the default
        ("eval_hook: {items: x.jsonl, generation: {temperature: 0, max_new_tokens: 96}}\n", [], 96),
        ("max_completion_length: 24\n", [], 24),  # GRPO: the rollouts' budget
        ("max_completion_length: 24\neval_hook: {items: x, generation: {max_new_tokens: 64}}\n", [], 64),
        ("max_completion_length: 24\n", ["--max-new-tokens", "7"], 7),  # the flag wins
    ],
)
def test_evaluate_recipe_sets_the_answer_budget(tmp_path, recipe, flags, expected):
    from ifpo.eval_hooks.evaluate import build_parser, generation_from_args

    path = tmp_path / "recipe.yaml"
    path.write_text(recipe)
    args = build_parser().parse_args(["--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", "i.jsonl",
                                      "--out", str(tmp_path / "o"), "--recipe", str(path), *flags])
    assert generation_from_args(args).max_new_tokens == expected


def test_evaluate_recipe_budget_must_be_a_positive_integer(tmp_path):
    from ifpo.eval_hooks.evaluate import build_parser, generation_from_args

    path = tmp_path / "recipe.yaml"
    path.write_text("max_completion_length: -3\n")
    args = build_parser().parse_args(["--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", "i.jsonl",
                                      "--out", str(tmp_path / "o"), "--recipe", str(path)])
    with pytest.raises(ValueError, match=r"recipe.yaml: max_completion_length: expected a positive integer, got -3"):
        generation_from_args(args)


def test_a_resumed_evaluation_says_what_it_kept(tmp_path, capsys):
    from ifpo.eval_hooks.evaluate import generate_resumable

    class Echo:
        def generate(self, conversations):
            return ["answer"] * len(conversations)

    items = [{"id": f"i{n}", "instruction": "say hi", "media": {}} for n in range(5)]
    (tmp_path / "responses.jsonl").write_text('{"id": "i0", "response": "a"}\n{"id": "i3", "response": "b"}\n')
    done = generate_resumable(items, Echo(), tmp_path, progress=False)
    assert len(done) == 5 and done["i0"] == "a"
    assert "2 of 5 item(s) already answered in responses.jsonl (kept), 3 to generate" in capsys.readouterr().err
    generate_resumable(items, Echo(), tmp_path, progress=False)
    assert "5 of 5 item(s) already answered" in capsys.readouterr().err


# --- the checkpoint evaluation reports progress ---------------------------------------------------


def test_checkpoint_evaluation_logs_a_line_per_batch(tmp_path, monkeypatch, caplog):
    """A checkpoint's evaluation on a real model takes minutes; it was silent until its report line."""
    import logging

    import torch
    from ifpo.eval_hooks import callback as cb

    calls: list[int] = []

    class Fake:
        def __init__(self, config, media_root, model=None, processor=None):
            pass

        def generate(self, conversations, progress=False):
            calls.append(len(conversations))
            return ["ok"] * len(conversations)

    monkeypatch.setattr(cb, "TransformersGenerator", Fake)
    hook = cb.IfpoEvalCallback(REPO / "sample" / "items.jsonl", generation={"batch_size": 2}, max_items=5)
    with caplog.at_level(logging.INFO, logger="ifpo.eval_hooks"):
        hook.evaluate(torch.nn.Linear(1, 1), object(), 10, tmp_path / "eval")
    assert calls == [2, 2, 1]
    lines = [r.getMessage() for r in caplog.records if r.name == "ifpo.eval_hooks"]
    assert lines[0] == "eval hook: step 10: generating answers to 5 item(s), 2 per batch"
    assert [line.split(" (")[0] for line in lines[1:4]] == [f"eval hook: step 10: {n}/5 answers" for n in (2, 4, 5)]


# --- ifpo compare: a run against its own baseline; unrelated models are not "regressions" ---------------


def _evaluation(folder: Path, model: str, step, right: bool):
    from ifpo.eval_hooks.core import score_and_write
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.schema import read_items

    items = [i for i in read_items(REPO / "sample" / "items.jsonl") if i.get("reference_response")][:6]
    responses = {i["id"]: (i["reference_response"] if right else "I do not know.") for i in items}
    score_and_write(items, responses, folder, ChecklistEvaluator(None, media_root=REPO / "sample"),
                    {"step": step, "model": model, "items": str(REPO / "sample" / "items.jsonl")})


@pytest.mark.parametrize(
    "models, expected",
    [
        (("Qwen/A", "Qwen/B"), "not regressions"),  # two unrelated models: differences only, and said so
        (("Qwen/A", "Qwen/A"), "regression(s)"),  # one base model evaluated twice (base, then base + adapter)
    ],
)
def test_compare_pairs_runs_only_as_asked_and_names_unrelated_models(tmp_path, capsys, models, expected):
    from ifpo.eval_hooks.compare import cli_main
    from ifpo.eval_hooks.core import checkpoint_eval_dir
    from ifpo.eval_hooks.reports import default_pair, discover

    _evaluation(checkpoint_eval_dir(tmp_path / "run1", 0), models[0], 0, right=False)
    _evaluation(checkpoint_eval_dir(tmp_path / "run1", 10), models[0], 10, right=True)
    _evaluation(tmp_path / "other", models[1], None, right=False)
    comp = discover([tmp_path / "run1", tmp_path / "other"])
    a, b = default_pair(comp)
    assert (a.label, b.label) == ("run1 @ step 0", "run1 @ step 10")  # run1 against its own step 0
    assert cli_main([str(tmp_path / "run1"), str(tmp_path / "other"), "--out", str(tmp_path / "d.html"),
                     "--a", "run1@10", "--b", "other"]) == 0
    out = capsys.readouterr().out
    assert expected in out and ("regression(s)" in out) == (expected == "regression(s)")
    # Only one-evaluation runs of different models: no pair unless asked.
    only = discover([tmp_path / "other", checkpoint_eval_dir(tmp_path / "run1", 10)])
    assert (default_pair(only) is None) == (models[0] != models[1])


# --- log lines: rounded rates, a concise GRPO line -------------------------------------------------


def test_checkpoint_evaluation_logs_rounded_rates(tmp_path, monkeypatch, caplog):
    import logging

    import torch
    from ifpo.eval_hooks import callback as cb

    class Fake:
        def __init__(self, *args, **kwargs):
            pass

        def generate(self, conversations, progress=False):
            return ["no"] * len(conversations)

    monkeypatch.setattr(cb, "TransformersGenerator", Fake)
    hook = cb.IfpoEvalCallback(REPO / "sample" / "items.jsonl", max_items=3)
    with caplog.at_level(logging.INFO, logger="ifpo.eval_hooks"):
        hook.evaluate(torch.nn.Linear(1, 1), object(), 0, tmp_path / "eval")
    (line,) = [r.getMessage() for r in caplog.records if " IPR " in r.getMessage()]
    import re

    assert re.match(r"eval hook: step 0 IPR (\d+\.\d%|n/a) CPR micro (\d+\.\d%|n/a) -> ", line), line


GRPO_RECORD = {"loss": 0.012345678, "grad_norm": 0.98765, "learning_rate": 1e-05, "num_tokens": 123456.0,
               "completions/mean_length": 23.5, "completions/min_length": 12.0, "completions/max_length": 24.0,
               "completions/clipped_ratio": 0.75, "completions/mean_terminated_length": 0.0,
               **{f"rewards/checklist/{s}": 0.123456789 for s in ("mean", "std")},
               **{f"rewards/ifpo/{d}": 0.333333333 for d in ("format", "content", "style", "structure", "ipr", "cpr")},
               "reward": 0.4567891, "reward_std": 0.1234567, "frac_reward_zero_std": 0.25, "kl": 0.000123456,
               "entropy": 1.23456789, **{f"clip_ratio/{k}": 0.0 for k in ("low_mean", "low_min", "high_mean",
                                                                             "high_max", "region_mean")},
               "step_time": 12.3456789, "epoch": 0.333333333}


def test_grpo_console_line_is_short(capsys):
    from ifpo.train.callbacks import GRPO_CONSOLE_KEYS, concise_console
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    class Handler:
        callbacks = [ProgressCallback(), PrinterCallback()]

    class Trainer:
        callback_handler = Handler()

    class State:
        is_world_process_zero = is_local_process_zero = True

    trainer = Trainer()
    concise_console(trainer, GRPO_CONSOLE_KEYS)
    capsys.readouterr()
    progress, printer = trainer.callback_handler.callbacks
    written: list[str] = []
    progress.training_bar = type("Bar", (), {"write": lambda self, text: written.append(text)})()
    progress.on_log(None, State(), None, logs=dict(GRPO_RECORD))
    printer.on_log(None, State(), None, logs=dict(GRPO_RECORD))
    printed = capsys.readouterr().out.strip()
    assert written == [printed]
    assert len(str(GRPO_RECORD)) > 800 and len(printed) < 250, printed
    assert printed.startswith("{loss: 0.01235, reward: 0.4568, reward_std: 0.1235, kl: 0.0001235, entropy: 1.235,")
    assert printed.endswith(f"(+{len(GRPO_RECORD) - 10} more in log_history.jsonl)")
    printer.on_log(None, State(), None, logs={"eval_ifpo/ipr": 0.5, "epoch": 1.0})  # not a training step's record
    assert capsys.readouterr().out.strip() == "{eval_ifpo/ipr: 0.5, epoch: 1}"
