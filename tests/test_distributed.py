"""Every shipped launch config trains correctly on 2 CPU processes: DDP, FSDP2, ZeRO-2, ZeRO-3, ZeRO-3 offload.

The end-to-end runs launch ``train/dpo.py`` / ``train/grpo.py`` through ``tests/launch_shim.py`` (accelerate's own
launcher with the config's real backend on CPU and gloo; ``use_cpu`` would turn FSDP and DeepSpeed into plain
DDP) on the small random tiny Qwen3-VL, on pairs and items whose media differ between the two ranks (images,
videos and text in different mixes per batch: the vision tower runs a different number of times on each rank
unless ifpo aligns it). Each DPO backend run checkpoints at step 2, stops, resumes to step 4, and must end on
DDP's adapter; the eval hook scores steps 0, 2 and 4 on mixed items. The fast tests are truth tables of
``train/distributed.py``'s refusals and the shipped configs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from ifpo.train.distributed import (
    DistributedSetupError,
    EmptyAdapterError,
    check_launch,
    check_saved_adapter,
)

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "accelerate_configs"
SHIM = REPO / "tests" / "launch_shim.py"
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "offline",
    "PYTHONPATH": str(REPO),
    # One thread per rank: the same float summation order in every run, so backends compare to DDP exactly.
    "OMP_NUM_THREADS": "1",
    # ZeRO-3 offload JIT-compiles DeepSpeed's CPU Adam (a few minutes on 2 cores, once): kept with the engine
    # venvs other tests cache, reused when present. One folder per venv: the build's command names the venv's
    # deepspeed and torch paths, so a CI clone's venv and the dev venv sharing a folder rebuilt it on every switch
    # (three builds of about a minute each in one morning here).
    "TORCH_EXTENSIONS_DIR": os.environ.get("TORCH_EXTENSIONS_DIR") or str(
        Path(os.environ.get("IFPO_TEST_VENVS", Path.home() / ".cache" / "ifpo-test-venvs")) / "torch-extensions"
        / hashlib.sha256(sys.prefix.encode()).hexdigest()[:10]),
}
# Steps 1-2 then 3-4 (resumed); 2 pairs per rank per step, 12 pairs ordered so the ranks' batches mix media
# differently (the final evaluation walks them in order: [video, image] on one rank, [text, text] on the other).
DPO_ARGS = ["--max_steps", "4", "--save_steps", "2", "--per_device_train_batch_size", "2",
            "--per_device_eval_batch_size", "2", "--eval_pairs", "train", "--logging_steps", "1",
            "--report_to", "none"]
PAIR_ORDER = "VITTVTIIVVIT"
ITEM_ORDER = "VTIT"  # the eval hook shards items[r::2]: a video and an image on rank 0, two texts on rank 1


def _deepspeed_missing() -> str | None:
    try:
        import deepspeed  # noqa: F401
    except Exception as exc:  # ImportError, or a broken build
        return f"deepspeed not importable ({exc.__class__.__name__}: {exc}); pip install -e .[deepspeed]"
    return None


def run(cmd: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-6000:])
    return done


def adapter(out: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(out / "adapter_model.safetensors"))


def losses(out: Path) -> dict[int, float]:
    rows = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in rows if "loss" in r}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The tiny model (as ``ifpo tiny-model --out`` writes it), 12 mixed pairs and 4 mixed eval items."""
    from ifpo.train.sample_pairs import build_sample_pairs
    from ifpo.train.tiny_model import build_tiny_model

    root = tmp_path_factory.mktemp("distributed")
    tiny = build_tiny_model(root / "tiny", seed=0)
    sample = build_sample_pairs(root / "sample_pairs")
    rows = [json.loads(line) for line in (sample / "pairs.jsonl").read_text().splitlines()]

    def kind(media: dict) -> str:
        return "V" if media.get("videos") else "I" if media.get("images") else "T"

    by_kind = {k: iter([r for r in rows if kind(r) == k]) for k in "VIT"}
    mixed = root / "pairs"
    mixed.mkdir()
    (mixed / "pairs.jsonl").write_text("".join(json.dumps(next(by_kind[k])) + "\n" for k in PAIR_ORDER))
    manifest = json.loads((sample / "manifest.json").read_text())
    (mixed / "manifest.json").write_text(json.dumps({**manifest, "num_pairs": len(PAIR_ORDER)}))

    items = [json.loads(line) for line in (REPO / "sample" / "items.jsonl").read_text().splitlines()]
    items = [i for i in items if i.get("structure") != "conflict"]
    by_kind = {k: iter([i for i in items if kind(i["media"]) == k]) for k in "VIT"}
    (root / "items.jsonl").write_text("".join(json.dumps(next(by_kind[k])) + "\n" for k in ITEM_ORDER))
    hook = {"items": str(root / "items.jsonl"), "root": str(REPO / "sample"),
            "generation": {"max_new_tokens": 6, "temperature": 0, "batch_size": 2}}
    return SimpleNamespace(root=root, tiny=tiny, pairs=mixed, items=root / "items.jsonl", hook=json.dumps(hook))


def dpo(data, out: Path, *extra: str) -> list[str]:
    return [str(REPO / "train" / "dpo.py"), str(REPO / "recipes" / "tiny.yaml"), "--model_name_or_path",
            str(data.tiny), "--pairs", str(data.pairs), "--output_dir", str(out), "--eval_hook", data.hook,
            *DPO_ARGS, *extra]


def torchrun(port: int) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(port)]


def shim(config: str, port: int) -> list[str]:
    return [sys.executable, str(SHIM), "--config_file", str(CONFIGS / config), "--num_processes", "2",
            "--main_process_port", str(port)]


@pytest.fixture(scope="module")
def ddp(data):
    """The reference: DDP over gloo (torchrun, use_cpu as the tiny recipe says), 4 uninterrupted steps."""
    out = data.root / "ddp"
    ok(run([*torchrun(29561), *dpo(data, out)], cwd=data.root))
    return out


# ------------------------------------------------------------------------------------------
# fast: refusals and the shipped configs
# ------------------------------------------------------------------------------------------


def fake_accelerator(*, kind="MULTI_GPU", processes=2, fsdp=None, deepspeed=None):
    state = SimpleNamespace(distributed_type=SimpleNamespace(value=kind), fsdp_plugin=fsdp, deepspeed_plugin=deepspeed)
    return SimpleNamespace(state=state, num_processes=processes)


def fsdp_plugin(state_dict_type="FULL_STATE_DICT", activation_checkpointing=False):
    return SimpleNamespace(state_dict_type=SimpleNamespace(name=state_dict_type),
                           activation_checkpointing=activation_checkpointing)


@pytest.mark.parametrize(("env", "accelerator", "lora", "refused"), [
    ({}, fake_accelerator(), True, None),
    ({"ACCELERATE_USE_FSDP": "true"}, fake_accelerator(kind="MULTI_CPU"), True, "asks for FSDP"),
    ({"ACCELERATE_USE_DEEPSPEED": "true"}, fake_accelerator(kind="MULTI_CPU"), True, "asks for DeepSpeed"),
    ({"ACCELERATE_USE_FSDP": "true"}, fake_accelerator(kind="FSDP", fsdp=fsdp_plugin()), True, None),
    ({}, fake_accelerator(kind="FSDP", fsdp=fsdp_plugin("SHARDED_STATE_DICT")), True, "SHARDED_STATE_DICT"),
    ({}, fake_accelerator(kind="FSDP", fsdp=fsdp_plugin("SHARDED_STATE_DICT")), False, "SHARDED_STATE_DICT"),
    ({}, fake_accelerator(kind="FSDP", fsdp=fsdp_plugin(activation_checkpointing=True)), True, "0 tensors"),
    ({}, fake_accelerator(kind="FSDP", fsdp=fsdp_plugin(activation_checkpointing=True)), False, None),
    ({"WORLD_SIZE": "2"}, fake_accelerator(kind="NO", processes=1), True, "each runs alone"),
    ({"WORLD_SIZE": "2"}, fake_accelerator(kind="MULTI_CPU", processes=2), True, None),
])
def test_launch_settings_that_lose_the_adapter_or_the_backend_are_refused(monkeypatch, env, accelerator, lora,
                                                                         refused):
    for name in ("ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if refused is None:
        check_launch(accelerator, use_lora=lora)
    else:
        with pytest.raises(DistributedSetupError, match=refused):
            check_launch(accelerator, use_lora=lora)


def test_shipped_fsdp_config_is_not_refused(monkeypatch):
    """fsdp2.yaml as shipped, read by accelerate's own plugin: a full state dict, the model's checkpointing."""
    from accelerate.utils import FullyShardedDataParallelPlugin

    config = yaml.safe_load((CONFIGS / "fsdp2.yaml").read_text())["fsdp_config"]
    plugin = FullyShardedDataParallelPlugin(
        fsdp_version=config["fsdp_version"], state_dict_type=config["fsdp_state_dict_type"],
        activation_checkpointing=config.get("fsdp_activation_checkpointing", False))
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    check_launch(fake_accelerator(kind="FSDP", fsdp=plugin), use_lora=True)


def test_an_empty_or_missing_adapter_is_an_error(tmp_path):
    from safetensors.torch import save_file

    with pytest.raises(EmptyAdapterError, match="no adapter_model.safetensors"):
        check_saved_adapter(tmp_path)
    save_file({}, str(tmp_path / "adapter_model.safetensors"))  # what peft writes when its filter matched nothing
    with pytest.raises(EmptyAdapterError, match="0 tensors"):
        check_saved_adapter(tmp_path)
    save_file({"a.lora_B.weight": torch.zeros(2, 2)}, str(tmp_path / "adapter_model.safetensors"))
    assert check_saved_adapter(tmp_path) == 1  # all-zero lora_B is the initial adapter, not an empty one


# ------------------------------------------------------------------------------------------
# slow: two processes
# ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ddp_equals_a_single_process_at_the_same_global_batch(data, ddp):
    single = data.root / "single"
    ok(run([sys.executable, *dpo(data, single, "--per_device_train_batch_size", "4",
                                "--per_device_eval_batch_size", "4")], cwd=data.root))
    expected, got = losses(single), losses(ddp)
    assert sorted(got) == [1, 2, 3, 4]
    for step in expected:
        assert got[step] == pytest.approx(expected[step], abs=1e-5), step
    manifest = json.loads((ddp / "run_manifest.json").read_text())
    assert manifest["distributed"]["type"] == "MULTI_CPU" and manifest["distributed"]["num_processes"] == 2
    assert manifest["distributed"]["vision_passes_aligned"] is False  # DDP gathers nothing inside a forward


BACKENDS = {
    "fsdp2.yaml": {"type": "FSDP", "fsdp": {"version": 2, "state_dict_type": "FULL_STATE_DICT"}},
    "zero2.yaml": {"type": "DEEPSPEED", "deepspeed": {"zero_stage": 2}},
    "zero3.yaml": {"type": "DEEPSPEED", "deepspeed": {"zero_stage": 3, "zero3_init_flag": True}},
    "zero3_offload.yaml": {"type": "DEEPSPEED", "deepspeed": {"zero_stage": 3, "offload_param": "cpu",
                                                              "offload_optimizer": "cpu"}},
}


def _subset(expected: dict, got: dict) -> bool:
    return all(_subset(v, got.get(k) or {}) if isinstance(v, dict) else got.get(k) == v for k, v in expected.items())


@pytest.mark.slow
@pytest.mark.parametrize("config", list(BACKENDS))
def test_backend_checkpoints_resumes_and_ends_on_ddps_adapter(data, ddp, config):
    if config != "fsdp2.yaml" and (reason := _deepspeed_missing()):
        pytest.skip(reason)
    out = data.root / config.removesuffix(".yaml")
    port = 29571 + list(BACKENDS).index(config)
    extra = []
    if config.startswith("zero3"):
        # ZeRO-3 with zero3_init_flag builds the tiny model itself (model: tiny), the path that deadlocked.
        extra = ["--model_name_or_path", "tiny"]
    first = ok(run([*shim(config, port), *dpo(data, out, "--interrupt_after_steps", "2", "--use_cpu", "false",
                                               *extra)], cwd=data.root))
    assert (out / "checkpoint-2").is_dir() and not (out / "adapter_model.safetensors").exists()
    assert check_saved_adapter(out / "checkpoint-2") > 0
    ok(run([*shim(config, port), *dpo(data, out, "--resume", "--use_cpu", "false", *extra)], cwd=data.root))
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert _subset(BACKENDS[config], manifest["distributed"]), manifest["distributed"]
    assert manifest["distributed"]["num_processes"] == 2
    if config != "zero2.yaml":
        assert manifest["distributed"]["vision_passes_aligned"] is True
    # The eval hook scored the base weights, the checkpoint and the final weights on mixed-media items.
    for step in (0, 2, 4):
        report = json.loads((out / "eval" / f"checkpoint-{step}" / "report.json").read_text())
        assert report["n_items"] == len(ITEM_ORDER)
    expected, got = adapter(ddp), adapter(out)
    assert len(got) > 0 and expected.keys() == got.keys()
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], atol=1e-5, rtol=1e-4, msg=name)
    assert any("lora_B" in n and w.abs().max() > 0 for n, w in got.items())
    assert "Traceback" not in first.stderr


# ------------------------------------------------------------------------------------------
# slow: GRPO on the sharded backends (the vision tower and generate() run collectives inside)
# ------------------------------------------------------------------------------------------

# One prompt per rank per step (4 rollouts each): a video or an image prompt on one rank, text on the other.
GRPO_ARGS = ["--max_steps", "2", "--save_steps", "1", "--save_total_limit", "2", "--per_device_train_batch_size",
             "4", "--num_generations", "4", "--max_completion_length", "8", "--logging_steps", "1",
             "--report_to", "none"]


def grpo(data, out: Path, *extra: str) -> list[str]:
    return [str(REPO / "train" / "grpo.py"), str(REPO / "recipes" / "tiny_grpo.yaml"), "--model_name_or_path",
            str(data.tiny), "--items", str(data.items), "--media_root", str(REPO / "sample"), "--output_dir",
            str(out), "--eval_hook", data.hook, *GRPO_ARGS, *extra]


@pytest.fixture(scope="module")
def grpo_ddp(data):
    out = data.root / "grpo-ddp"
    ok(run([*torchrun(29581), *grpo(data, out)], cwd=data.root))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("config", ["fsdp2.yaml", "zero3.yaml"])
def test_grpo_on_a_sharded_backend_resumes_to_ddps_adapter(data, grpo_ddp, config):
    if config != "fsdp2.yaml" and (reason := _deepspeed_missing()):
        pytest.skip(reason)
    out = data.root / f"grpo-{config.removesuffix('.yaml')}"
    port = 29591 + ["fsdp2.yaml", "zero3.yaml"].index(config)
    ok(run([*shim(config, port), *grpo(data, out, "--interrupt_after_steps", "1", "--use_cpu", "false")],
           cwd=data.root))
    assert check_saved_adapter(out / "checkpoint-1") > 0
    ok(run([*shim(config, port), *grpo(data, out, "--resume", "--use_cpu", "false")], cwd=data.root))
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert _subset(BACKENDS[config], manifest["distributed"]), manifest["distributed"]
    assert manifest["distributed"]["vision_passes_aligned"] is True
    for step in (0, 1, 2):
        assert (out / "eval" / f"checkpoint-{step}" / "report.json").is_file()
    expected, got = adapter(grpo_ddp), adapter(out)
    assert len(got) > 0 and expected.keys() == got.keys()
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], atol=1e-5, rtol=1e-4, msg=name)
