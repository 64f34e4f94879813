"""Rewards per second in-process vs. through ``ifpo serve``, at 1, 8 and 64 concurrent clients, rule-only and
with a loopback judge; request latency p50 / p99. Loopback addresses only.

    python bench/serve_load.py [--completions 384] [--batch 4] [--clients 1 8 64] [--pool N] [--judge-delay 0.0]

The completions are the sample items' reference responses and variants of them (distinct texts, so the judge
cache cannot answer a repeat: the judge runs with its cache off). In-process: one
``ChecklistEvaluator.evaluate_many`` over all of them plus the reward numbers. Server: ``ifpo serve --pool N``
(default: the cores) as a separate process; each client thread posts ``--batch`` completions per request to
``/v1/rewards`` until all are scored. The loopback judge is tests/fake_openai.py (an HTTP server in this process
answering every question ``passed: true`` after ``--judge-delay`` seconds).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai import FakeOpenAI  # noqa: E402
from ifpo.verifiers.checklist import ChecklistEvaluator  # noqa: E402
from ifpo.verifiers.judge import make_judge  # noqa: E402
from ifpo.verifiers.rewards import RewardSpec, reward_values  # noqa: E402
from serve_helpers import Server  # noqa: E402

SAMPLE = ROOT / "sample" / "items.jsonl"
REWARDS = ["cpr", "ipr", "tcsr"]


def _workload(n: int, tag: str = "variant") -> list[tuple[dict, str]]:
    items = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    items = [it for it in items if it.get("structure") != "conflict"]
    pairs = []
    for i in range(n):
        item = items[i % len(items)]
        ref = item.get("reference_response") or "An answer."
        pairs.append((item, f"{ref} ({tag} {i})" if i >= len(items) or tag != "variant" else ref))
    return pairs


def _warmup() -> list[tuple[dict, str]]:
    """Every item once, other texts than the measured ones: the first use of a checker loads its resources
    (language profiles, tokenizer models, compiled patterns), which the measured runs must not pay."""
    n = sum(1 for line in SAMPLE.read_text().splitlines() if line.strip())
    return _workload(n, tag="warm-up")


def _judge_answer(body):
    text = json.dumps(body)
    if "Answer each yes/no question" in text:
        return 200, json.dumps({"answers": [True] * 8, "reason": "ok"})
    if "Extract the parameter values" in text:
        return 200, json.dumps({"params": {}})
    return 200, json.dumps({"passed": True, "reason": "ok"})


def in_process(pairs, judge_cfg) -> float:
    evaluator = ChecklistEvaluator(make_judge(judge_cfg) if judge_cfg else None)
    specs = [RewardSpec.parse(r) for r in REWARDS]
    evaluator.evaluate_many(_warmup(), progress=False)
    start = time.perf_counter()
    results = evaluator.evaluate_many(pairs, progress=False)
    for r, (_, text) in zip(results, pairs):
        reward_values(r, specs, text)
    return len(pairs) / (time.perf_counter() - start)


def through_server(server: Server, pairs, clients: int, batch: int) -> tuple[float, float, float]:
    bodies = [json.dumps({"completions": [{"item_id": it["id"], "completion": t} for it, t in pairs[i:i + batch]],
                          "rewards": REWARDS, "verdicts": False}).encode() for i in range(0, len(pairs), batch)]
    latencies: list[float] = []
    lock = threading.Lock()
    local = threading.local()

    def post(body: bytes) -> None:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
        start = time.perf_counter()
        conn.request("POST", "/v1/rewards", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{response.status}: {data[:300]!r}")
        with lock:
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(post, bodies))
    seconds = time.perf_counter() - start
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))]
    return len(pairs) / seconds, statistics.median(latencies) * 1000, p99 * 1000


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=384)
    parser.add_argument("--batch", type=int, default=4, help="completions per request")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--pool", type=int, default=os.cpu_count() or 1, help="ifpo serve --pool")
    parser.add_argument("--judge-delay", type=float, default=0.0, help="seconds the loopback judge takes per answer")
    args = parser.parse_args(argv)
    pairs = _workload(args.completions)
    rows = []
    with FakeOpenAI(_judge_answer, delay=args.judge_delay) as judge, tempfile.TemporaryDirectory() as tmp:
        judge_cfg = {"model": "loopback", "base_url": judge.base_url, "cache_dir": None, "max_retries": 0,
                     "concurrency": 16}
        judge_yaml = Path(tmp) / "judge.yaml"
        judge_yaml.write_text(json.dumps(judge_cfg))  # JSON is YAML
        for label, cfg, extra in (("rule-only", None, []), ("loopback judge", judge_cfg, ["--judge", str(judge_yaml)])):
            rate = in_process(pairs, cfg)
            rows.append((label, "in-process", "-", rate, None, None))
            print(f"{label:15} in-process           {rate:8.1f} rewards/s", flush=True)
            server = Server("--items", str(SAMPLE), "--pool", str(args.pool), *extra,
                            log=Path(tmp) / f"serve-{len(rows)}.log").start()
            try:
                # warm-up: every pool process sees every item once (other texts than the measured ones)
                through_server(server, _warmup() * args.pool, args.pool, args.batch)
                for clients in args.clients:
                    rate, p50, p99 = through_server(server, pairs, clients, args.batch)
                    rows.append((label, "server", clients, rate, p50, p99))
                    print(f"{label:15} server {clients:3} clients  {rate:8.1f} rewards/s  p50 {p50:8.1f} ms  "
                          f"p99 {p99:8.1f} ms", flush=True)
            finally:
                server.stop()
    print(f"\n{args.completions} completions, {args.batch} per request, server --pool {args.pool}, "
          f"{os.cpu_count()} cores, judge delay {args.judge_delay} s\n")
    print("| workload | path | clients | rewards/s | p50 ms | p99 ms |\n| --- | --- | --- | --- | --- | --- |")
    for label, path, clients, rate, p50, p99 in rows:
        print(f"| {label} | {path} | {clients} | {rate:.1f} | {_fmt(p50)} | {_fmt(p99)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
