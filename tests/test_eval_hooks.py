"""Checkpoint evaluation: the training callback (tiny DPO run), `ifpo evaluate` (model + adapter, a real
loopback OpenAI-compatible server, resume), and distributed sharding across two real processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, user_text
from ifpo.eval_hooks.callback import EvalHookConfig, IfpoEvalCallback, generation_config, shard_indices
from ifpo.eval_hooks.core import REPORT, RESPONSES, VERDICTS, headline_metrics, read_responses
from ifpo.eval_hooks.evaluate import cli_main as evaluate_main
from ifpo.verifiers.schema import read_items

REPO = Path(__file__).resolve().parent.parent
ITEMS = REPO / "sample" / "items.jsonl"
N_EVAL = 6  # items per evaluation in the tiny-model tests (time on 2 CPU cores)
GEN = {"max_new_tokens": 8}
REPORT_KEYS = {"ipr", "cpr_micro", "cpr_macro", "cpr_by_dimension", "tcsr", "tisr", "unjudged", "by_constraint_type",
               "by_k", "items", "evaluation"}


# --- units --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, rank, world, expected, real",
    [
        (5, 0, 1, [0, 1, 2, 3, 4], 5),
        (5, 0, 2, [0, 2, 4], 3),
        (5, 1, 2, [1, 3, 3], 2),  # padded with its own last index: same number of generate calls as rank 0
        (2, 2, 3, [0], 0),  # more ranks than items: a pad-only shard
        (0, 0, 2, [], 0),
    ],
)
def test_shard_indices(n, rank, world, expected, real):
    assert shard_indices(n, rank, world) == (expected, real)


def test_shards_cover_every_item_once():
    for world in (1, 2, 3, 4, 7):
        seen = []
        for rank in range(world):
            idx, real = shard_indices(23, rank, world)
            seen += idx[:real]
        assert sorted(seen) == list(range(23))


def test_headline_metrics_drop_undefined_rates():
    report = {"ipr": 0.5, "cpr_micro": 0.75, "cpr_macro": None, "tcsr": None, "tisr": 0.25, "near_miss_rate": 1.0,
              "violations_per_failed": 1.0, "cpr_by_dimension": {"format": 0.5, "style": None},
              "unjudged": {"constraints": 3, "items_undetermined": 1, "task_gates": 2}, "n_items": 4}
    m = headline_metrics(report)
    assert m["eval_ifpo/ipr"] == 0.5 and m["eval_ifpo/tisr"] == 0.25 and m["eval_ifpo/cpr/format"] == 0.5
    assert "eval_ifpo/cpr_macro" not in m and "eval_ifpo/tcsr" not in m and "eval_ifpo/cpr/style" not in m
    assert m["eval_ifpo/unjudged/constraints"] == 3.0 and m["eval_ifpo/n_items"] == 4.0
    assert all(isinstance(v, float) for v in m.values())


def test_read_responses_drops_a_torn_line(tmp_path):
    path = tmp_path / RESPONSES
    path.write_text('{"id": "a", "response": "x"}\n{"id": "b", "response": "y"}\n{"id": "c", "resp', encoding="utf-8")
    assert read_responses(path) == ({"a": "x", "b": "y"}, True)
    assert read_responses(tmp_path / "missing.jsonl") == ({}, False)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"items": ""}, "'items'"),
        ({"items": "x.jsonl", "every_steps": -1}, "every_steps"),
        ({"items": "x.jsonl", "on_save": False, "on_start": False, "on_end": False}, "nothing would be evaluated"),
        ({"items": "x.jsonl", "max_items": 0}, "max_items"),
    ],
)
def test_eval_hook_config_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EvalHookConfig(**kwargs)


def test_eval_hook_config_unknown_key_suggests():
    with pytest.raises(ValueError, match="did you mean 'every_steps'"):
        EvalHookConfig.from_mapping({"items": "x.jsonl", "every_step": 5})


def test_generation_config_defaults_and_backend():
    cfg = generation_config(None)
    assert cfg.backend == "transformers" and cfg.temperature == 0.1 and cfg.max_new_tokens == 512
    assert generation_config({"temperature": 0.0}).temperature == 0.0
    with pytest.raises(ValueError, match="backend must be 'transformers'"):
        generation_config({"backend": "openai", "model": "m"})


# --- a tiny DPO run with the callback -------------------------------------------------------------


class TrackerStub:
    """A reporting callback like wandb's / tensorboard's: records what reaches ``on_log``."""

    def __init__(self):
        from transformers import TrainerCallback

        outer = self
        self.records: list[tuple[int, dict]] = []

        class _Stub(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                outer.records.append((state.global_step, dict(logs or {})))

        self.callback = _Stub()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from ifpo.train.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="module")
def dpo_run(tiny, tmp_path_factory):
    """4 DPO steps with LoRA on the tiny model, a checkpoint every 2 steps, the eval callback attached."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from trl import DPOConfig, DPOTrainer

    out = tmp_path_factory.mktemp("dpo") / "run"
    items = [i for i in read_items(ITEMS) if i.get("reference_response")]
    rows = [
        {
            "prompt": [{"role": "user", "content": [{"type": "text", "text": i["instruction"]}]}],
            "chosen": [{"role": "assistant", "content": [{"type": "text", "text": i["reference_response"]}]}],
            "rejected": [{"role": "assistant", "content": [{"type": "text", "text": "I cannot say."}]}],
        }
        for i in items[:8]
    ]
    torch.manual_seed(0)
    model = AutoModelForImageTextToText.from_pretrained(tiny)
    processor = AutoProcessor.from_pretrained(tiny)
    tracker = TrackerStub()
    callback = IfpoEvalCallback(ITEMS, eval_every_steps=0, on_save=True, generation=GEN, max_items=N_EVAL)
    args = DPOConfig(
        output_dir=str(out), max_steps=4, per_device_train_batch_size=2, save_steps=2, logging_steps=1,
        use_cpu=True, bf16=False, report_to=[], activation_checkpointing=False, learning_rate=1e-3, max_length=256,
        seed=0,
    )
    trainer = DPOTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=processor,
        peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]),
        callbacks=[tracker.callback, callback],
    )
    callback.attach(trainer)
    trainer.train()
    return {"out": out, "trainer": trainer, "tracker": tracker, "callback": callback}


@pytest.mark.slow
def test_dpo_run_writes_a_report_for_step_0_and_each_checkpoint(dpo_run):
    out = dpo_run["out"]
    assert sorted(p.name for p in (out / "eval").iterdir()) == ["checkpoint-0", "checkpoint-2", "checkpoint-4"]
    ids = [i["id"] for i in read_items(ITEMS)][:N_EVAL]
    for step in (0, 2, 4):
        folder = out / "eval" / f"checkpoint-{step}"
        report = json.loads((folder / REPORT).read_text())
        assert REPORT_KEYS <= set(report)
        assert report["n_items"] == N_EVAL and [i["id"] for i in report["items"]] == ids
        assert report["evaluation"]["step"] == step and report["evaluation"]["generation"]["max_new_tokens"] == 8
        assert [json.loads(line)["id"] for line in (folder / RESPONSES).read_text().splitlines()] == ids
        verdicts = [json.loads(line) for line in (folder / VERDICTS).read_text().splitlines()]
        assert [v["id"] for v in verdicts] == ids and all(v["verdicts"] for v in verdicts)
        assert not list(folder.glob(".*.tmp"))  # atomic writes leave no temporaries
    # The run trained: loss logged, LoRA weights moved away from their zero init.
    from safetensors.torch import load_file

    weights = load_file(out / "checkpoint-4" / "adapter_model.safetensors")
    assert any(v.abs().sum() > 0 for k, v in weights.items() if "lora_B" in k)


@pytest.mark.slow
def test_trackers_and_log_history_receive_the_metrics(dpo_run):
    records = dpo_run["tracker"].records
    eval_steps = [step for step, logs in records if "eval_ifpo/ipr" in logs]
    assert eval_steps == [0, 2, 4]
    step, logs = next(r for r in records if "eval_ifpo/ipr" in r[1])
    for key in ("eval_ifpo/cpr_micro", "eval_ifpo/cpr_macro", "eval_ifpo/unjudged/constraints", "eval_ifpo/cpr/format"):
        assert key in logs
    report0 = json.loads((dpo_run["out"] / "eval" / "checkpoint-0" / REPORT).read_text())
    assert logs["eval_ifpo/ipr"] == report0["ipr"]
    history = dpo_run["trainer"].state.log_history
    assert [h["step"] for h in history if "eval_ifpo/ipr" in h] == [0, 2, 4]
    # TRL's own metrics stay in the training records (the callback uses the base Trainer.log).
    train_logs = [logs for _, logs in records if "loss" in logs]
    assert len(train_logs) == 4 and all("rewards/accuracies" in logs for logs in train_logs)
    assert not any("rewards/accuracies" in logs for _, logs in records if "eval_ifpo/ipr" in logs)


@pytest.mark.slow
def test_callback_restores_train_mode_and_rng_and_skips_done_steps(tiny, tmp_path):
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor, TrainerState, TrainingArguments

    model = AutoModelForImageTextToText.from_pretrained(tiny).train()
    processor = AutoProcessor.from_pretrained(tiny)
    cb = IfpoEvalCallback(ITEMS, generation={"max_new_tokens": 4, "temperature": 0.7}, max_items=2, output_dir=tmp_path)
    rng = torch.random.get_rng_state()
    state = TrainerState()
    state.global_step = 3
    args = TrainingArguments(output_dir=str(tmp_path / "ignored"), report_to=[], use_cpu=True)
    cb.on_save(args, state, None, model=model, processing_class=processor)
    assert model.training and torch.equal(rng, torch.random.get_rng_state())
    assert (tmp_path / "eval" / "checkpoint-3" / REPORT).is_file()
    assert [h["step"] for h in state.log_history] == [3]  # not attached: log_history only
    # A resumed run (new callback, same folder) does not redo or relog a finished step.
    again = IfpoEvalCallback(ITEMS, generation={"max_new_tokens": 4}, max_items=2, output_dir=tmp_path)
    again.on_save(args, state, None, model=model, processing_class=processor)
    assert [h["step"] for h in state.log_history] == [3] and again.reports == {}


@pytest.mark.slow
def test_callback_says_loudly_when_judge_calls_fail(tiny, tmp_path, capsys):
    from transformers import AutoModelForImageTextToText, AutoProcessor, TrainerState, TrainingArguments

    model = AutoModelForImageTextToText.from_pretrained(tiny)
    processor = AutoProcessor.from_pretrained(tiny)
    dead = {"model": "j", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "cache_dir": None}
    cb = IfpoEvalCallback(ITEMS, generation={"max_new_tokens": 4}, max_items=1, output_dir=tmp_path, judge=dead)
    state = TrainerState()
    state.global_step = 2
    args = TrainingArguments(output_dir=str(tmp_path / "ignored"), report_to=[], use_cpu=True)
    cb.on_save(args, state, None, model=model, processing_class=processor)
    err = capsys.readouterr().err
    report = json.loads((tmp_path / "eval" / "checkpoint-2" / REPORT).read_text())
    failed = report["judge"]["failures"]
    assert failed > 0  # the sample's first item has judge-route constraints
    assert f"eval hook: step 2: WARNING: {failed} of {failed} judge request(s) failed" in err
    assert "First error:" in err and "Connect" in err
    assert state.log_history[-1]["eval_ifpo/judge/failures"] == float(failed)


# --- ifpo evaluate --------------------------------------------------------------------------------


@pytest.mark.slow
def test_evaluate_model_with_adapter(dpo_run, tiny, tmp_path, capsys):
    ckpt = dpo_run["out"] / "checkpoint-4"
    out = tmp_path / "ev"
    argv = ["--model", str(tiny), "--adapter", str(ckpt), "--items", str(ITEMS), "--out", str(out),
            "--limit", str(N_EVAL), "--max-new-tokens", "8", "--temperature", "0", "--no-progress"]
    assert evaluate_main(argv) == 0
    printed = capsys.readouterr().out
    assert "IPR" in printed and str(out / REPORT) in printed
    report = json.loads((out / REPORT).read_text())
    assert report["evaluation"]["kind"] == "model + adapter" and report["evaluation"]["step"] == 4
    assert report["n_items"] == N_EVAL
    # A checkpoint folder alone is enough: its adapter_config names the base model.
    out2 = tmp_path / "ev2"
    cfg = json.loads((ckpt / "adapter_config.json").read_text())
    assert cfg["base_model_name_or_path"]
    argv2 = ["--model", str(ckpt), "--items", str(ITEMS), "--out", str(out2), "--limit", "2",
             "--max-new-tokens", "8", "--temperature", "0", "--no-progress"]
    assert evaluate_main(argv2) == 0
    # Greedy with the same weights: the same answers as the --adapter form.
    first = read_responses(out / RESPONSES)[0]
    second = read_responses(out2 / RESPONSES)[0]
    assert second == {k: first[k] for k in second}


@pytest.mark.slow
def test_evaluate_resumes_a_partial_in_process_run(tiny, tmp_path):
    out = tmp_path / "ev"
    argv = ["--model", str(tiny), "--items", str(ITEMS), "--out", str(out), "--limit", "4",
            "--max-new-tokens", "4", "--no-progress"]
    assert evaluate_main(argv) == 0
    ids = [i["id"] for i in read_items(ITEMS)][:4]
    # Simulate a crash after two answers (and a torn third line); mark the kept answers to see they are reused.
    (out / REPORT).unlink()
    (out / RESPONSES).write_text(
        "".join(json.dumps({"id": i, "response": "KEPT"}) + "\n" for i in ids[:2]) + '{"id": "' + ids[2], encoding="utf-8"
    )
    assert evaluate_main(argv) == 0
    responses = read_responses(out / RESPONSES)[0]
    assert list(responses) == ids and [responses[i] for i in ids[:2]] == ["KEPT", "KEPT"]
    assert all(responses[i] != "KEPT" for i in ids[2:])


def _reference_server(items):
    """Answers each prompt with the item's reference response (or a refusal when it has none)."""
    by_instruction = {i["instruction"]: i.get("reference_response") or "No." for i in items}

    def handler(body):
        return 200, by_instruction.get(user_text(body), "No.")

    return handler


@pytest.mark.slow
def test_evaluate_endpoint_on_a_loopback_server_and_resume(tmp_path, capsys):
    items = read_items(ITEMS)[:10]
    out = tmp_path / "api"
    with FakeOpenAI(_reference_server(items)) as server:
        argv = ["--endpoint", server.base_url, "--model", "served-model", "--items", str(ITEMS), "--out", str(out),
                "--limit", "10", "--concurrency", "4", "--no-progress"]
        assert evaluate_main(argv) == 0
        assert len(server.requests) == 10
        body = server.requests[0]
        assert body["model"] == "served-model" and body["temperature"] == 0.1 and body["max_tokens"] == 512
        # Video frames travel as image parts.
        assert any(p.get("type") == "image_url" for m in body["messages"] for p in m["content"])
        report = json.loads((out / REPORT).read_text())
        assert report["evaluation"]["kind"] == "endpoint" and report["evaluation"]["endpoint"] == server.base_url
        # Reference responses pass every rule-checked constraint.
        rule_verdicts = [v for it in report["items"] for v in it["verdicts"] if v["route"] == "rule"]
        assert rule_verdicts and all(v["passed"] for v in rule_verdicts)
        # A rerun finds everything done: no request at all, same report.
        assert evaluate_main(argv) == 0
        assert len(server.requests) == 10
        # Other settings in the same folder: refused, nothing sent.
        capsys.readouterr()
        assert evaluate_main([*argv, "--temperature", "0.7"]) == 2
        assert "other settings" in capsys.readouterr().err and len(server.requests) == 10
        # --overwrite starts again.
        assert evaluate_main([*argv, "--temperature", "0.7", "--overwrite"]) == 0
        assert len(server.requests) == 20


def test_evaluate_mode_is_scored_recorded_and_guards_the_resume(tmp_path, capsys):
    """`--mode loose` scores with IFEval's loose definition, is recorded in the folder's settings and
    report, and a resume with the other mode is refused; a folder from before `--mode` reads as strict."""
    item = {"id": "rain", "source": "ifeval", "instruction": "Describe rain, all lowercase.", "structure": "single",
            "tasks": [], "constraints": [{"id": "c0", "type": "change_case:english_lowercase", "dimension": "format",
                                          "description": "All lowercase.", "params": {}}]}
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(item) + "\n")
    # A chatty capitalised first line: fails strict, passes loose (the variant without the first line).
    with FakeOpenAI(lambda body: (200, "Sure! Here it is:\nrain falls softly.")) as server:
        base = ["--endpoint", server.base_url, "--model", "m", "--items", str(items), "--no-progress"]

        def verdict(out):
            report = json.loads((out / REPORT).read_text())
            return report["mode"], report["evaluation"]["mode"], report["items"][0]["verdicts"][0]["passed"]

        loose, strict = tmp_path / "loose", tmp_path / "strict"
        assert evaluate_main([*base, "--out", str(loose), "--mode", "loose"]) == 0
        assert verdict(loose) == ("loose", "loose", True)
        assert json.loads((loose / "evaluation.json").read_text())["identity"]["mode"] == "loose"
        assert evaluate_main([*base, "--out", str(strict)]) == 0  # strict is the default
        assert verdict(strict) == ("strict", "strict", False)
        assert len(server.requests) == 2
        # Resuming the loose folder in strict mode: refused, nothing sent, the loose report kept.
        capsys.readouterr()
        assert evaluate_main([*base, "--out", str(loose), "--mode", "strict"]) == 2
        err = capsys.readouterr().err
        assert "other settings (mode: 'loose' -> 'strict'" in err and "ifpo score" in err
        assert len(server.requests) == 2 and verdict(loose) == ("loose", "loose", True)
        # The same mode resumes (nothing left to generate).
        assert evaluate_main([*base, "--out", str(loose), "--mode", "loose"]) == 0
        assert len(server.requests) == 2
        # A record written before --mode existed: strict resumes it, loose is refused.
        record = json.loads((strict / "evaluation.json").read_text())
        del record["identity"]["mode"]
        (strict / "evaluation.json").write_text(json.dumps(record))
        assert evaluate_main([*base, "--out", str(strict)]) == 0
        assert evaluate_main([*base, "--out", str(strict), "--mode", "loose"]) == 2
        assert len(server.requests) == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--adapter", "x"], "--adapter applies"),
        (["--model", "m", "--limit", "0"], "--limit must be > 0"),
        (["--model", "m", "--adapter", "/nonexistent"], "no adapter_config.json"),
    ],
)
def test_evaluate_rejects_bad_input(argv, message, tmp_path, capsys):
    assert evaluate_main([*argv, "--items", str(ITEMS), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


# --- distributed: two real processes (gloo) --------------------------------------------------------

DIST_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import torch.distributed as dist
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from ifpo.eval_hooks.callback import IfpoEvalCallback
    dist.init_process_group("gloo")
    tiny, items, out = sys.argv[2], sys.argv[3], sys.argv[4]
    model = AutoModelForImageTextToText.from_pretrained(tiny)
    processor = AutoProcessor.from_pretrained(tiny)
    cb = IfpoEvalCallback(items, generation={"max_new_tokens": 4, "temperature": 0.0}, max_items=5, output_dir=out)
    from pathlib import Path
    metrics = cb.evaluate(model, processor, 7, Path(out) / "eval" / "checkpoint-7")
    print("METRICS " + json.dumps({"rank": dist.get_rank(), "metrics": metrics, "wrote": bool(cb.reports)}), flush=True)
    dist.destroy_process_group()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_ranks_shard_gather_and_log_the_same_metrics(tiny, tmp_path):
    script = tmp_path / "dist_eval.py"
    script.write_text(DIST_SCRIPT, encoding="utf-8")
    out = tmp_path / "run"
    port = _free_port()
    procs = []
    for rank in range(2):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, str(script), str(REPO), str(tiny), str(ITEMS), str(out)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=240)
        assert p.returncode == 0, stderr[-2000:]
        results.append(json.loads(next(line for line in stdout.splitlines() if line.startswith("METRICS "))[8:]))
    results.sort(key=lambda r: r["rank"])
    assert [r["wrote"] for r in results] == [True, False]  # only the main process scores and writes
    assert results[0]["metrics"] == results[1]["metrics"] and "eval_ifpo/cpr_micro" in results[0]["metrics"]
    folder = out / "eval" / "checkpoint-7"
    report = json.loads((folder / REPORT).read_text())
    assert report["evaluation"]["world_size"] == 2
    ids = [i["id"] for i in read_items(ITEMS)][:5]
    assert list(read_responses(folder / RESPONSES)[0]) == ids  # both shards, back in item order


def test_callback_from_recipe_mapping(tmp_path):
    cb = IfpoEvalCallback.from_config(
        {"items": str(ITEMS), "every_steps": 5, "on_save": False, "max_items": 3, "generation": {"temperature": 0.0}},
        output_dir=tmp_path,
    )
    assert cb.eval_every_steps == 5 and not cb.on_save_enabled and len(cb.items) == 3
    assert cb.generation.temperature == 0.0 and cb.generation.max_new_tokens == 512
    assert cb.media_root == ITEMS.parent and cb.judge is None
