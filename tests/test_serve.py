"""``ifpo serve`` as a real process on loopback: its answers equal in-process scoring, OpenRLHF's protocol, and
the faults (malformed requests, body limit, token, a client leaving mid-request, a slow judge, kill -9 and
restart). No timing assertions: latency and throughput are bench/serve_load.py's.
"""

from __future__ import annotations

import json
import os
import random
import socket
import time
from pathlib import Path

import psutil
import pytest
from fake_openai import FakeOpenAI
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.reward_adapters import openrlhf_completion
from ifpo.verifiers.rewards import RewardSpec, reward_values
from serve_helpers import Server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample" / "items.jsonl"
ITEMS = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
BY_ID = {it["id"]: it for it in ITEMS}
PROMPT = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n<video>Describe it.<|im_end|>\n<|im_start|>assistant\n"


def _completions(item) -> list[str]:
    ref = item.get("reference_response") or ""
    return [ref, "", "   ", ref.upper(), "A red circle moves right, then stops.", ref + " " + ref]


def _expected(item, text, names, unjudged="drop", empty="zero"):
    record = ChecklistEvaluator().evaluate(item, text)
    return reward_values(record, [RewardSpec.parse(n) for n in names], text, unjudged=unjudged, empty=empty)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    s = Server("--items", str(SAMPLE), "--pool", "1", "--max-body-mb", "1", log=log).start()
    yield s
    s.stop()


# -- answers ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unjudged,empty", [("drop", "zero"), ("zero", "score"), ("none", "zero")])
def test_native_rewards_equal_in_process_scoring(server, unjudged, empty):
    names = ["cpr", "ipr", "tcsr", "cpr:format", "ipr:content"]
    rng = random.Random(0)
    items = rng.sample([it for it in ITEMS if it.get("structure") != "conflict"], 12)
    pairs = [(it, text) for it in items for text in _completions(it)]
    entries = [{"item_id": it["id"], "completion": t} if i % 2 else {"item": it, "completion": t}
               for i, (it, t) in enumerate(pairs)]
    status, answer = server.post("/v1/rewards", {"completions": entries, "rewards": names, "unjudged": unjudged,
                                                 "empty": empty})
    assert status == 200, answer
    assert len(answer["results"]) == len(pairs)
    for (item, text), result in zip(pairs, answer["results"]):
        assert result["item_id"] == item["id"]
        assert result["rewards"] == _expected(item, text, names, unjudged, empty), (item["id"], text)
        assert [v["constraint_id"] for v in result["verdicts"]] == [c["id"] for c in item["constraints"]]
        assert all(isinstance(v["reason"], str) and v["reason"] for v in result["verdicts"])
    unjudged_total = sum(v["passed"] is None for r in answer["results"] for v in r["verdicts"])
    assert answer["unjudged"] == unjudged_total > 0  # the sample has judge-route constraints and no judge here


def test_openrlhf_get_reward_as_openrlhf_sends_it(server):
    items = [it for it in ITEMS if it.get("structure") != "conflict"][:6]
    texts = [(it.get("reference_response") or "x") for it in items]
    # openrlhf/utils/agent.py: query = decode(prompt tokens + response tokens, skip_special_tokens=False)
    queries = [PROMPT + t + "<|im_end|>" for t in texts]
    labels = [it["id"] if i % 2 else json.dumps(it) for i, it in enumerate(items)]
    status, answer = server.post("/get_reward", {"query": queries, "prompts": [PROMPT] * len(items), "labels": labels})
    assert status == 200, answer
    expected = [_expected(it, t, ["cpr"])["cpr"] for it, t in zip(items, texts)]
    assert answer["rewards"] == answer["scores"] == [0.0 if e is None else e for e in expected]
    assert set(answer["extra_logs"]) == {"cpr", "unjudged"}
    assert all(len(v) == len(items) for v in answer["extra_logs"].values())


@pytest.mark.parametrize("query,prompt,expected", [
    (PROMPT + "Hi.<|im_end|>", PROMPT, "Hi."),
    (PROMPT + "Hi.<|im_end|><|endoftext|>", PROMPT, "Hi."),
    (PROMPT + "Hi.", PROMPT, "Hi."),
    ("<|im_start|>assistant\nHi.<|im_end|>", PROMPT, "Hi."),  # prompt truncated from the left: the marker
    (PROMPT + "<|im_end|>", PROMPT, ""),
    ("Hi.", None, "Hi."),
])
def test_openrlhf_query_split(query, prompt, expected):
    assert openrlhf_completion(query, prompt) == expected


def test_health_counts_requests(server):
    before = server.get("/health")[1]
    server.post("/v1/rewards", {"completions": [{"item_id": ITEMS[0]["id"], "completion": "x"}]})
    after = server.get("/health")[1]
    assert after["requests"] == before["requests"] + 1 and after["completions"] == before["completions"] + 1
    assert after["status"] == "ok" and after["items"] == len(ITEMS) and 0 <= after["unjudged_rate"] <= 1


# -- faults ----------------------------------------------------------------------------------------------------


def _malformed() -> list[tuple[str, bytes, str | None]]:
    """(endpoint, body, the field the error must name or None) for 200 malformed requests."""
    good = {"item_id": ITEMS[0]["id"], "completion": "x"}
    cases: list[tuple[str, object, str | None]] = [
        ("/v1/rewards", {}, "completions"),
        ("/v1/rewards", {"completions": "x"}, "completions"),
        ("/v1/rewards", {"completions": [3]}, "completions[0]"),
        ("/v1/rewards", {"completions": [{"completion": "x"}]}, "completions[0]"),
        ("/v1/rewards", {"completions": [{**good, "item": ITEMS[0]}]}, "completions[0]"),
        ("/v1/rewards", {"completions": [{"item_id": "nope", "completion": "x"}]}, "completions[0].item_id"),
        ("/v1/rewards", {"completions": [{"item_id": 7, "completion": "x"}]}, "completions[0].item_id"),
        ("/v1/rewards", {"completions": [{"item_id": ITEMS[0]["id"], "completion": 5}]}, "completions[0].completion"),
        ("/v1/rewards", {"completions": [good, {"item_id": ITEMS[0]["id"]}]}, "completions[1].completion"),
        ("/v1/rewards", {"completions": [{"item": {"id": "z"}, "completion": "x"}]}, "completions[0].item.source"),
        ("/v1/rewards", {"completions": [{"item": {**ITEMS[0], "structure": "weird"}, "completion": "x"}]},
         "completions[0].item.structure"),
        ("/v1/rewards", {"completions": [{"item": [1], "completion": "x"}]}, "completions[0].item"),
        ("/v1/rewards", {"completions": [good], "rewards": ["cpr", "foo"]}, "rewards"),
        ("/v1/rewards", {"completions": [good], "rewards": "cpr"}, "rewards"),
        ("/v1/rewards", {"completions": [good], "rewards": ["cpr:colour"]}, "rewards"),
        ("/v1/rewards", {"completions": [good], "rewards": ["cpr", "cpr"]}, "rewards"),
        ("/v1/rewards", {"completions": [good], "unjudged": "maybe"}, "unjudged"),
        ("/v1/rewards", {"completions": [good], "empty": 0}, "empty"),
        ("/v1/rewards", {"completions": [good], "type_weights": {"word_count": -1}}, "type_weights.word_count"),
        ("/v1/rewards", {"completions": [good], "type_weights": [1]}, "type_weights"),
        ("/v1/rewards", {"completions": [good], "verdicts": "yes"}, "verdicts"),
        ("/get_reward", {}, "query"),
        ("/get_reward", {"query": ["x"]}, "labels"),
        ("/get_reward", {"query": ["x"], "labels": []}, "labels"),
        ("/get_reward", {"query": ["x"], "labels": ["nope"]}, "labels[0]"),
        ("/get_reward", {"query": [1], "labels": [ITEMS[0]["id"]]}, "query[0]"),
        ("/get_reward", {"query": ["x"], "prompts": [], "labels": [ITEMS[0]["id"]]}, "prompts"),
        ("/get_reward", {"query": ["x"], "prompts": ["p"], "labels": [ITEMS[0]["id"]]}, "query[0]"),
        ("/get_reward", {"query": ["x"], "labels": ["{not json"]}, "labels[0]"),
        ("/get_reward", {"query": ["x"], "labels": [None]}, "labels[0]"),
    ]
    raw: list[tuple[str, bytes, str | None]] = [(p, json.dumps(b).encode(), f) for p, b, f in cases]
    raw += [(p, body, "") for p in ("/v1/rewards", "/get_reward") for body in (
        b"", b"{", b"not json", b"[]", b"null", b"\xff\xfe", b"[" * 100000, b'{"completions": [' + b"[" * 50000,
        json.dumps([good]).encode())]
    rng = random.Random(1)
    while len(raw) < 200:  # random byte and key damage to valid bodies
        path, body, _ = rng.choice(raw[:len(cases)])
        data = bytearray(json.dumps({"completions": [good], "query": ["x"], "labels": [3]}).encode())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        raw.append((rng.choice(("/v1/rewards", "/get_reward")), bytes(data), None))
    return raw[:200]


def test_200_malformed_requests_get_4xx_naming_the_field_and_the_server_keeps_answering(server):
    item = ITEMS[0]
    good = {"completions": [{"item_id": item["id"], "completion": item["reference_response"]}], "rewards": ["cpr"]}
    status, before = server.post("/v1/rewards", good)
    assert status == 200
    for path, body, field in _malformed():
        status, answer = server.post(path, None, raw=body)
        if field is None:  # random damage may leave a valid request: then it must be a right answer
            assert status in (200, 400, 413, 422), (body, answer)
            continue
        assert 400 <= status < 500, (path, body[:200], answer)
        assert isinstance(answer, dict) and answer.get("error"), answer
        if field:
            assert answer.get("field") == field, (path, body[:200], answer)
    assert server.post("/v1/rewards", good) == (200, before)
    assert server.get("/health")[0] == 200


def test_body_over_the_limit_is_413(server):
    import http.client

    big = json.dumps({"completions": [{"item_id": ITEMS[0]["id"], "completion": "word " * 300_000}]}).encode()
    # The server answers 413 from the declared length before reading the body and closes: a client still sending
    # 1.5 MB then gets a broken pipe or a reset instead of the answer (it did under a loaded CI). So send the
    # headers and read the answer, as a client honouring an early response does.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    try:
        conn.putrequest("POST", "/v1/rewards")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(big)))
        conn.endheaders()
        response = conn.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 413 and "max-body-mb" in answer["error"]
    assert server.get("/health")[0] == 200


def test_bearer_token_from_the_environment_never_logged(tmp_path):
    secret = "s3cr3t-token-value"
    log = tmp_path / "serve.log"
    s = Server("--items", str(SAMPLE), "--pool", "0", "--token-env", "MY_TOKEN", env={"MY_TOKEN": secret},
               log=log).start()
    try:
        body = {"completions": [{"item_id": ITEMS[0]["id"], "completion": "x"}]}
        assert s.post("/v1/rewards", body)[0] == 401
        assert s.post("/v1/rewards", body, headers={"Authorization": "Bearer wrong"})[0] == 401
        assert s.post("/get_reward", {"query": ["x"], "labels": [ITEMS[0]["id"]]})[0] == 401
        assert s.post("/v1/rewards", body, headers={"Authorization": f"Bearer {secret}"})[0] == 200
        assert s.get("/health")[0] == 200  # liveness needs no token
    finally:
        s.stop()
    assert secret not in log.read_text()


def _raw_http(port: int, payload: bytes, read: bool) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        if read:
            sock.recv(10)


def test_client_disconnecting_mid_request_does_not_hurt_the_server(server):
    item = ITEMS[1]
    good = {"completions": [{"item_id": item["id"], "completion": item["reference_response"]}] * 50}
    status, expected = server.post("/v1/rewards", good)
    assert status == 200
    body = json.dumps(good).encode()
    head = (f"POST /v1/rewards HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    for _ in range(5):
        _raw_http(server.port, head + body[: len(body) // 2], read=False)  # leaves while sending its body
        _raw_http(server.port, head + body, read=False)  # leaves while the server scores
        _raw_http(server.port, head[:20], read=False)  # leaves inside the headers
    time.sleep(1)
    assert server.post("/v1/rewards", good) == (200, expected)


def _judge_handler(body):
    """A judge whose verdict depends on the request (so a wrong cache hit would show)."""
    text = json.dumps(body)
    if "Answer each yes/no question" in text:
        return 200, json.dumps({"answers": [True, "red" in text], "reason": "judged"})
    return 200, json.dumps({"passed": "red" in text, "reason": "judged"})


def test_slow_judge_gets_504_and_other_requests_keep_being_answered(tmp_path):
    with FakeOpenAI(_judge_handler, delay=4.0) as judge:
        judge_yaml = tmp_path / "judge.yaml"
        judge_yaml.write_text(f"model: j\nbase_url: {judge.base_url}\ncache_dir: {tmp_path / 'cache'}\n"
                              "timeout_s: 30\nmax_retries: 0\n")
        s = Server("--items", str(SAMPLE), "--judge", str(judge_yaml), "--pool", "2", "--timeout-s", "1.5",
                   log=tmp_path / "serve.log").start()
        try:
            judged = next(it for it in ITEMS if any(c.get("type") in ("chronological",) for c in it["constraints"]))
            status, answer = s.post("/v1/rewards", {"completions": [{"item_id": judged["id"], "completion": "x"}]})
            assert status == 504 and "timeout-s" in answer["error"]
            # a request with no judge work in it is answered meanwhile (and rightly)
            rule_only = {"id": "r1", "source": "t", "instruction": "Say hi.", "structure": "single", "tasks": [],
                         "media": {"videos": [], "images": []},
                         "constraints": [{"id": "c1", "type": "word_count", "dimension": "format",
                                          "description": "1 to 3 words", "params": {"min_count": 1, "max_count": 3,
                                                                                    "unit": "word"}}]}
            status, answer = s.post("/v1/rewards", {"completions": [{"item": rule_only, "completion": "hi there"}],
                                                    "rewards": ["cpr", "ipr"]})
            assert status == 200 and answer["results"][0]["rewards"] == {"cpr": 1.0, "ipr": 1.0}
            assert s.get("/health")[0] == 200
        finally:
            s.stop()


def test_kill_9_and_restart_answer_a_repeated_request_the_same(tmp_path):
    with FakeOpenAI(_judge_handler) as judge:
        judge_yaml = tmp_path / "judge.yaml"
        judge_yaml.write_text(f"model: j\nbase_url: {judge.base_url}\ncache_dir: {tmp_path / 'cache'}\n"
                              "max_retries: 0\nconcurrency: 4\n")
        items = [it for it in ITEMS if it.get("structure") != "conflict"][:10]
        body = {"completions": [{"item_id": it["id"], "completion": t} for it in items for t in _completions(it)[:3]],
                "rewards": ["cpr", "ipr", "tcsr"]}
        s = Server("--items", str(SAMPLE), "--judge", str(judge_yaml), "--pool", "2", log=tmp_path / "serve.log")
        try:
            s.start()
            status, first = s.post("/v1/rewards", body)
            assert status == 200 and first["unjudged"] == 0
            asked = len(judge.requests)
            assert asked > 0
            pool = psutil.Process(s.proc.pid).children(recursive=True)
            assert pool
            s.kill()
            # the check processes go with their server (none left holding memory)
            gone, alive = psutil.wait_procs(pool, timeout=15)
            assert not alive, [p.cmdline() for p in alive]
            s.start()
            assert s.post("/v1/rewards", body) == (200, first)
            assert len(judge.requests) == asked  # every judge answer came from the cache
        finally:
            s.stop()


def test_a_killed_check_process_is_replaced(server):
    import signal

    item = ITEMS[0]
    good = {"completions": [{"item_id": item["id"], "completion": item["reference_response"]}]}
    expected = server.post("/v1/rewards", good)
    children = psutil.Process(server.proc.pid).children(recursive=True)
    workers = [c for c in children if "multiprocessing" in " ".join(c.cmdline())]
    assert workers, [c.cmdline() for c in children]
    for w in workers:
        os.kill(w.pid, signal.SIGKILL)
    time.sleep(0.5)
    status, answer = server.post("/v1/rewards", good)
    # the request that finds the pool broken gets 503 (retry), never a wrong reward
    assert (status, answer) == expected or status == 503, answer
    assert server.post("/v1/rewards", good) == expected


def test_several_server_workers_answer_alike_and_log(tmp_path):
    log = tmp_path / "serve.log"
    s = Server("--items", str(SAMPLE), "--workers", "2", "--pool", "1", log=log)
    try:
        s.start()
        item = ITEMS[2]
        body = {"completions": [{"item_id": item["id"], "completion": t} for t in _completions(item)],
                "rewards": ["cpr", "ipr"]}
        expected = [_expected(item, t, ["cpr", "ipr"]) for t in _completions(item)]
        pids = set()
        # until a deadline, not a count: start() returns when the first worker answers, and on loaded cores (the
        # suite runs files in parallel) the second can take seconds longer to import and bind
        deadline = time.monotonic() + 60
        while len(pids) < 2 and time.monotonic() < deadline:
            status, answer = s.post("/v1/rewards", body)
            assert status == 200 and [r["rewards"] for r in answer["results"]] == expected
            pids.add(s.get("/health")[1]["pid"])
        assert len(pids) == 2, "uvicorn spread 60 s of requests' health checks over one worker only"
        children = psutil.Process(s.proc.pid).children(recursive=True)
    finally:
        s.stop()
    gone, alive = psutil.wait_procs(children, timeout=15)
    assert not alive, [p.cmdline() for p in alive]
    assert "POST /v1/rewards 200 n=6" in log.read_text()  # the workers' request log lines
