"""Trackers keep every curve: training logs and eval-hook metrics at their own steps, in one run per job.

The slow test runs ``train/dpo.py recipes/tiny.yaml`` with ``logging_steps: 5`` (the recipe's), the eval
hook every 10 steps and a final ``trainer.evaluate()`` after training (``eval_pairs: train``), reporting to
tensorboard, wandb (offline), trackio (local store under ``TRACKIO_DIR``) and MLflow (a ``file:`` store),
then reads each tracker's own files or API: tensorboard's event files (its EventAccumulator), wandb's
``run-*.wandb`` record log, trackio's ``SQLiteStorage`` and ``mlflow.MlflowClient``. trackio and mlflow
are skipped where their packages are not installed (the ``dev`` extra installs them).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from ifpo.train.callbacks import RecipeConfigCallback, flatten_config
from ifpo.train.recipe import RecipeError, _check_trackers

REPO = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "offline",
    "WANDB_SILENT": "true",
    "PYTHONPATH": str(REPO),
    # One OpenMP thread: a 2-thread pool on 2 shared cores waits on the busy one (tiny DPO steps 3-4x slower).
    "OMP_NUM_THREADS": "1",
}


# --- report_to --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "report_to, error",
    [
        ("none", None),
        ("all", None),
        ("wandb", None),
        (["tensorboard", "wandb"], None),
        ("comet", "did you mean 'comet_ml'"),
        ("tensorbord", "did you mean 'tensorboard'"),
        ("nothing_like_it", "supported: azure_ml"),
    ],
)
def test_report_to_names_are_transformers_trackers(report_to, error):
    if error is None:
        _check_trackers(report_to)
    else:
        with pytest.raises(RecipeError, match=error):
            _check_trackers(report_to)


@pytest.mark.parametrize("name, package", [("mlflow", "mlflow"), ("comet_ml", "comet_ml"), ("trackio", "trackio"),
                                           ("swanlab", "swanlab"), ("clearml", "clearml")])
def test_a_supported_tracker_without_its_package_is_one_line(name, package, monkeypatch):
    from ifpo.train import recipe
    from transformers.integrations import integration_utils

    check = recipe.TRACKER_PACKAGES[name][0]
    monkeypatch.setattr(integration_utils, check, lambda: False)
    with pytest.raises(RecipeError, match=rf"^report_to: {name} needs its package: pip install {package}"):
        _check_trackers([name])
    monkeypatch.setattr(integration_utils, check, lambda: True)
    _check_trackers([name])


def test_every_transformers_tracker_has_a_package_hint():
    from ifpo.train.recipe import TRACKER_PACKAGES
    from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

    assert set(INTEGRATION_TO_CALLBACK) == set(TRACKER_PACKAGES)


# --- recipe config --------------------------------------------------------------------------------


def test_flatten_config_nests_with_dots():
    flat = flatten_config({"lora_r": 16, "eval_hook": {"every_steps": 10, "generation": {"temperature": 0.1}},
                           "loss_type": ["sigmoid"]}, "ifpo.")
    assert flat == {"ifpo.lora_r": 16, "ifpo.eval_hook.every_steps": 10, "ifpo.eval_hook.generation.temperature": 0.1,
                    "ifpo.loss_type": ["sigmoid"]}


class _Recorder:
    def __init__(self):
        self.calls: list[tuple[str, dict]] = []

    def log_params(self, params):
        self.calls.append(("log_params", dict(params)))

    def log_parameters(self, params):
        self.calls.append(("log_parameters", dict(params)))


def _bare(cls, **attrs):
    obj = cls.__new__(cls)
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


def test_recipe_reaches_mlflow_in_bounded_batches_and_comet():
    from transformers.integrations import CometCallback, MLflowCallback

    mlflow, comet = _Recorder(), _Recorder()
    config = {f"k{i}": i for i in range(130)} | {"long": "x" * 300}
    callbacks = [_bare(MLflowCallback, _ml_flow=mlflow, _auto_end_run=False, _MAX_PARAM_VAL_LENGTH=250, _MAX_PARAMS_TAGS_PER_BATCH=100),
                 _bare(CometCallback, _experiment=comet)]

    class Handler:
        pass

    trainer = Handler()
    trainer.callback_handler = Handler()
    trainer.callback_handler.callbacks = callbacks
    callback = RecipeConfigCallback(config)
    callback.trainer = trainer

    class State:
        is_world_process_zero = True

    callback.on_train_begin(None, State(), None)
    assert callback.delivered == ["MLflowCallback", "CometCallback"]
    sizes = [len(p) for _, p in mlflow.calls]
    assert sizes == [100, 30]  # the 300-character value is over MLflow's limit and left out
    assert mlflow.calls[0][1]["ifpo.k0"] == "0"
    assert comet.calls == [("log_parameters", {f"ifpo.{k}": v for k, v in config.items()})]


# --- a real run: both trackers' files --------------------------------------------------------


def read_wandb_records(path: Path) -> list:
    """The protobuf records of a wandb ``run-*.wandb`` file (LevelDB log layout: 32 KiB blocks of chunks)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B", path
    block, pos, pending, records = 32768, 7, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # a block's tail too short for a chunk header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 1:  # full
            records.append(chunk)
        elif kind == 2:  # first
            pending = chunk
        elif kind == 3:  # middle
            pending += chunk
        elif kind == 4:  # last
            records.append(pending + chunk)
            pending = b""
    parsed = []
    for raw in records:
        record = pb.Record()
        record.ParseFromString(raw)
        parsed.append(record)
    return parsed


def wandb_history(records) -> list[dict]:
    rows = []
    for r in records:
        if r.WhichOneof("record_type") == "history":
            rows.append({(i.key or "/".join(i.nested_key)): json.loads(i.value_json) for i in r.history.item})
    return rows


def wandb_config(records) -> dict:
    config = {}
    for r in records:
        if r.WhichOneof("record_type") == "config":
            for u in r.config.update:
                config[u.key or "/".join(u.nested_key)] = json.loads(u.value_json)
    return config


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


OPTIONAL_TRACKERS = [name for name in ("trackio", "mlflow") if _installed(name)]


@pytest.fixture(scope="module")
def tracked_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("tracked")
    out = work / "out"
    hook = {"items": str(REPO / "sample" / "items.jsonl"), "max_items": 2, "every_steps": 10,
            "generation": {"max_new_tokens": 4, "temperature": 0}}
    done = subprocess.run(
        [sys.executable, str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"), "--output_dir", str(out),
         "--max_steps", "20", "--logging_steps", "5", "--eval_pairs", "train", "--max_pairs", "8",
         "--report_to", ",".join(["tensorboard", "wandb", *OPTIONAL_TRACKERS]), "--eval_hook", json.dumps(hook)],
        cwd=work, env={**ENV, "WANDB_DIR": str(work), "TRACKIO_DIR": str(work / "trackio"),
                       # MLflow 3.x keeps its file store behind this switch (its sqlite store needs the full mlflow).
                       "MLFLOW_TRACKING_URI": (work / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true",
                       "MLFLOW_EXPERIMENT_NAME": "ifpo-test"},
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return work, out, done


@pytest.mark.slow
def test_train_and_eval_curves_reach_tensorboard_at_their_steps(tracked_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, out, _ = tracked_run
    # One accumulator per log folder: the writer reopened for the records after train end adds a second file there.
    accs = [EventAccumulator(str(d)).Reload() for d in sorted({p.parent for p in out.rglob("events.out.tfevents.*")})]

    def steps(tag):
        return sorted(e.step for a in accs if tag in a.Tags()["scalars"] for e in a.Scalars(tag))

    assert steps("train/loss") == [5, 10, 15, 20]  # the eval hook at 10 and 20 cancels no training log
    assert steps("eval/ifpo/ipr") == [0, 10, 20]
    assert steps("eval/loss") == [20]  # train/dpo.py's trainer.evaluate() after training
    assert any("eval/ifpo/responses/text_summary" in a.Tags()["tensors"] for a in accs)
    assert any("ifpo/recipe/text_summary" in a.Tags()["tensors"] for a in accs)


@pytest.mark.slow
def test_train_and_eval_curves_tables_and_recipe_reach_wandb(tracked_run):
    work, _, _ = tracked_run
    (run_file,) = work.glob("wandb/offline-run-*/run-*.wandb")
    records = read_wandb_records(run_file)
    history = wandb_history(records)

    def steps(key):
        return sorted(row["train/global_step"] for row in history if key in row)

    assert steps("train/loss") == [5, 10, 15, 20]
    assert steps("eval/ifpo/ipr") == [0, 10, 20]
    assert steps("eval/loss") == [20]
    tables = [row for row in history if row.get("eval/ifpo/responses/_type") == "table-file"]
    assert [row["train/global_step"] for row in tables] == [0, 10, 20]
    assert all(row["eval/ifpo/responses/nrows"] == 2 and row["eval/ifpo/responses/ncols"] == 7 for row in tables)
    table_files = list(work.glob("wandb/offline-run-*/files/media/table/eval/ifpo/responses_*.table.json"))
    content = json.loads(table_files[0].read_text())
    assert content["columns"] == ["step", "item", "response", "passed", "failed", "unjudged", "all_passed"]
    config = wandb_config(records)
    assert config["ifpo.lora_r"] == 16 and config["ifpo.eval_hook.every_steps"] == 10
    assert config["ifpo.image_max_pixels"] == 16384 and config["learning_rate"] == 5e-3


@pytest.mark.slow
@pytest.mark.skipif("trackio" not in OPTIONAL_TRACKERS, reason="trackio is not installed (pip install trackio)")
def test_trackio_gets_every_curve_at_the_trainers_step_in_one_run(tracked_run):
    """transformers' TrackioCallback logs without a step (trackio counted 1, 2, 4, 5 and 0, 3, 6) and closes the run
    at train end, so the final evaluation opened a second run at step 0 without ifpo's config."""
    work, _, _ = tracked_run
    # trackio fixes its store folder (TRACKIO_DIR) at import: read it in a process of its own.
    code = ("import json, sys; from trackio.sqlite_storage import SQLiteStorage as S; p = 'huggingface'; "
            "runs = S.get_runs(p); json.dump({'runs': runs, 'logs': S.get_logs(p, runs[0]) if runs else [], "
            "'config': S.get_run_config(p, runs[0]) if runs else None}, sys.stdout, default=str)")
    done = subprocess.run([sys.executable, "-c", code], env={**ENV, "TRACKIO_DIR": str(work / "trackio")},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    store = json.loads(done.stdout)
    assert len(store["runs"]) == 1, store["runs"]  # one run per training job (project: TrainingArguments.project)
    logs = store["logs"]

    def steps(key):
        return sorted(row["step"] for row in logs if key in row)

    assert steps("train/loss") == [5, 10, 15, 20]
    assert steps("eval/ifpo/ipr") == [0, 10, 20]
    assert steps("eval/loss") == [20]
    assert all(row["step"] == row["train/global_step"] for row in logs if "train/global_step" in row)
    config = store["config"]
    assert config["ifpo.lora_r"] == 16 and config["ifpo.eval_hook.every_steps"] == 10 and config["learning_rate"] == 5e-3


@pytest.mark.slow
@pytest.mark.skipif("mlflow" not in OPTIONAL_TRACKERS, reason="mlflow is not installed (pip install mlflow-skinny)")
def test_mlflow_gets_every_curve_at_the_trainers_step_in_one_run(tracked_run):
    """MLflowCallback ends its run at train end; the evaluation after it started a second run of its own."""
    import mlflow

    work, _, _ = tracked_run
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # read by the client below, as by the run's
    client = mlflow.MlflowClient(tracking_uri=(work / "mlruns").as_uri())
    experiment = client.get_experiment_by_name("ifpo-test")
    (run,) = client.search_runs([experiment.experiment_id])  # one run per training job

    def steps(key):
        return sorted(m.step for m in client.get_metric_history(run.info.run_id, key))

    assert steps("loss") == [5, 10, 15, 20]
    assert steps("eval_ifpo/ipr") == [0, 10, 20]
    assert steps("eval_loss") == [20]
    assert run.data.params["ifpo.lora_r"] == "16" and run.data.params["ifpo.eval_hook.every_steps"] == "10"
    assert run.info.status == "FINISHED"


# --- what the user reads: help text and logs -------------------------------------------------------


@pytest.mark.parametrize("script", ["dpo", "grpo"])
def test_help_states_each_default_once_and_lists_eval_hook_sub_keys(script):
    import re

    from ifpo.train import grpo_recipe, recipe

    text = (recipe if script == "dpo" else grpo_recipe).recipe_help()
    assert not [line for line in text.splitlines() if len(re.findall(r"\(default", line)) > 1]
    assert "attention kernel: sdpa, flash_attention_2, eager (default: transformers' choice)\n" in text
    for key in ("every_steps", "on_save", "max_items", "judge"):  # eval_hook keys
        assert re.search(rf"^    {key} ", text, re.M), key
    for key in ("max_new_tokens", "temperature", "media"):  # eval_hook.generation keys, with the hook's defaults
        assert re.search(rf"^      {key} ", text, re.M), key
    assert re.search(r"^      temperature .*\(default: 0\.1\)$", text, re.M)


@pytest.mark.slow
def test_batched_generation_logs_no_processor_kwargs_warning(tmp_path):
    """transformers warns once per apply_chat_template call given a processor kwarg outside processor_kwargs;
    the eval hook generates through this path at every checkpoint (92 warnings in the main job before)."""
    import logging

    import transformers
    from ifpo.train.tiny_model import build_tiny_model
    from ifpo.verifiers.generation import item_messages, make_generator
    from ifpo.verifiers.schema import read_items

    items = read_items(REPO / "sample" / "items.jsonl")[:3]
    generator = make_generator({"backend": "transformers", "model": str(build_tiny_model(tmp_path / "tiny", seed=0)),
                                "max_new_tokens": 2, "batch_size": 3}, REPO / "sample")
    records: list[str] = []

    class Grab(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Grab()
    transformers.logging.get_logger().addHandler(handler)
    try:
        out = generator.generate([item_messages(i) for i in items])
    finally:
        transformers.logging.get_logger().removeHandler(handler)
    assert len(out) == 3
    assert not [r for r in records if "processor_kwargs" in r]


# Two processes log each ifpo line once: tests/test_dpo.py (test_two_processes_log_each_line_once), on the
# torchrun launch that also checks the ranks' pairs.


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], {}),
        (["--recipe", "{recipe}"], {"video_fps": 0.5, "video_max_side": 720, "image_max_pixels": 50176}),
        (["--recipe", "{recipe}", "--video-max-frames", "32", "--video-fps", "1"],
         {"video_fps": 1.0, "video_max_side": 720, "image_max_pixels": 50176, "video_max_frames": 32}),
        (["--generation", "{generation}"], {"video_fps": 4.0, "video_min_frames": 2}),
        (["--generation", "{generation}", "--recipe", "{recipe}"],
         {"video_fps": 0.5, "video_min_frames": 2, "video_max_side": 720, "image_max_pixels": 50176}),
    ],
)
def test_evaluate_takes_the_recipes_media_keys(tmp_path, argv, expected):
    from ifpo.eval_hooks.evaluate import build_parser, generation_from_args

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("video_fps: 0.5\nvideo_max_side: 720\nimage_max_pixels: 50176\nlearning_rate: 1.0e-5\nlora_r: 8\n")
    generation = tmp_path / "gen.yaml"
    generation.write_text("temperature: 0\nmedia: {video_fps: 4.0, video_min_frames: 2}\n")
    argv = [a.format(recipe=recipe, generation=generation) for a in argv]
    args = build_parser().parse_args(["--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", "i.jsonl",
                                      "--out", str(tmp_path / "o"), *argv])
    assert generation_from_args(args).media == expected


def test_evaluate_recipe_errors_are_one_line(tmp_path):
    from ifpo.eval_hooks.evaluate import build_parser, generation_from_args

    args = build_parser().parse_args(["--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", "i.jsonl",
                                      "--out", str(tmp_path / "o"), "--recipe", str(tmp_path / "missing.yaml")])
    with pytest.raises(ValueError, match="missing.yaml: settings file not found"):
        generation_from_args(args)
    (tmp_path / "bad.yaml").write_text("video_fps: -1\n")
    args.recipe = str(tmp_path / "bad.yaml")
    with pytest.raises(ValueError, match="video_fps must be positive"):
        generation_from_args(args)
