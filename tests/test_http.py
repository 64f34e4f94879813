"""The endpoint HTTP policy (verifiers/http.py) against faulty servers on loopback.

``RawServer`` answers each connection with scripted bytes, so a test can send what no well-behaved
server would: a redirect to a second origin, a body cut short, a garbage status line. Every case
checks what the judge or the generator makes of it: an unjudged verdict / a recorded generation
error with the reason, the retries it spent, and that the API key never reaches the second origin.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.generation import GenerationConfig, GenerationError, OpenAIGenerator
from ifpo.verifiers.http import EndpointError, retry_after_seconds, with_retries
from ifpo.verifiers.judge import JudgeError, make_judge

SECRET = "sk-test-REDIRECT-SECRET"
GOOD = json.dumps({"choices": [{"message": {"content": '{"passed": true, "reason": "ok"}'}}]}).encode()


def http(status: str, body: bytes = b"", headers: dict[str, str] | None = None, length: int | None = None) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body) if length is None else length}",
            "Content-Type: application/json", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class RawServer:
    """Loopback TCP server: ``respond(n, request bytes) -> bytes`` for the n-th connection (0-based)."""

    def __init__(self, respond):
        self.respond = respond
        self.requests: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                conn.settimeout(5)
                try:
                    while b"\r\n\r\n" not in data:
                        data += conn.recv(65536)
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), 0)
                    while len(body) < length:
                        body += conn.recv(65536)
                except OSError:
                    continue
                self.requests.append(head + b"\r\n\r\n" + body)
                try:
                    conn.sendall(self.respond(len(self.requests) - 1, self.requests[-1]))
                except OSError:
                    pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.sock.close()


ITEM = {
    "id": "t1", "source": "test", "instruction": "Be cheerful.", "structure": "single", "tasks": [],
    "constraints": [{"id": "c1", "type": "tone", "dimension": "style", "description": "Use a cheerful tone.",
                     "params": {"tone": "cheerful"}}],
}


def judge_at(url, tmp_path, monkeypatch, **kw):
    monkeypatch.setenv("IFPO_HTTP_TEST_KEY", SECRET)
    cfg = {"model": "j", "base_url": url, "cache_dir": None, "backoff_s": 0.0, "max_retries": 2, "timeout_s": 3,
           "api_key_env": "IFPO_HTTP_TEST_KEY", **kw}
    return make_judge(cfg)


def verdict(judge):
    return ChecklistEvaluator(judge, task_gate=False).evaluate(ITEM, "Yay!").verdicts[0]


def test_a_redirect_to_another_origin_is_not_followed_and_the_key_never_reaches_it(tmp_path, monkeypatch):
    with RawServer(lambda n, req: http("200 OK", GOOD)) as second:
        location = f"{second.url}/chat/completions"
        with RawServer(lambda n, req: http("307 Temporary Redirect", headers={"Location": location})) as first:
            v = verdict(judge_at(first.url, tmp_path, monkeypatch))
            assert len(first.requests) == 1  # not retried either: a redirect will not change
            assert SECRET.encode() in first.requests[0]  # the configured origin got the key, as it should
        assert second.requests == []  # the second origin got nothing: no key, no question
    assert v.passed is None and "another origin" in v.error and location in v.error
    assert SECRET not in v.error


def test_a_same_origin_redirect_is_followed_with_the_key(tmp_path, monkeypatch):
    def respond(n, req):
        if n == 0:
            return http("308 Permanent Redirect", headers={"Location": "/v2/chat/completions"})
        return http("200 OK", GOOD)

    with RawServer(respond) as server:
        v = verdict(judge_at(server.url, tmp_path, monkeypatch))
        assert len(server.requests) == 2 and b"POST /v2/chat/completions" in server.requests[1]
        assert SECRET.encode() in server.requests[1]
    assert v.passed is True


@pytest.mark.parametrize(
    "name, reply, reason",
    [
        ("truncated body", http("200 OK", GOOD[:20], length=len(GOOD)), "RemoteProtocolError"),
        ("bad status line", b"GARBAGE NOT HTTP\r\n\r\n", "RemoteProtocolError"),
        ("closed without answer", b"", "RemoteProtocolError"),
        ("malformed JSON", http("200 OK", b'{"choices": [tru'), "not JSON"),
        ("wrong shape", http("200 OK", b'{"answer": 1}'), "unexpected response shape"),
        ("server error", http("500 Internal Server Error", b'{"error": "boom"}'), "HTTP 500"),
        ("deep JSON", http("200 OK", b"[" * 100000 + b"]" * 100000), "not JSON"),
    ],
)
def test_transport_failures_become_unjudged_verdicts_after_retries(tmp_path, monkeypatch, name, reply, reason):
    with RawServer(lambda n, req: reply) as server:
        judge = judge_at(server.url, tmp_path, monkeypatch)
        v = verdict(judge)
        assert len(server.requests) == 3, name  # first try + max_retries 2
    assert v.passed is None and reason in v.error and "after 3 attempt(s)" in v.error, (name, v.error)
    assert judge.stats.failures == 1 and judge.stats.all_failed and reason in judge.stats.first_error


@pytest.mark.parametrize("status", ["401 Unauthorized", "403 Forbidden", "400 Bad Request"])
def test_auth_and_client_errors_are_not_retried(tmp_path, monkeypatch, status):
    with RawServer(lambda n, req: http(status, b'{"error": "no"}')) as server:
        v = verdict(judge_at(server.url, tmp_path, monkeypatch, max_retries=4))
        assert len(server.requests) == 1
    assert v.passed is None and status.split()[0] in v.error and "after 1 attempt(s)" in v.error


def test_retry_after_is_honoured(tmp_path, monkeypatch):
    waits: list[float] = []
    calls = iter([EndpointError("busy", retry_after=7.0), EndpointError("busy"), "ok"])

    def call():
        value = next(calls)
        if isinstance(value, Exception):
            raise value
        return value

    assert with_retries(call, retries=3, backoff_s=0.5, sleep=waits.append) == "ok"
    assert waits == [7.0, 1.0]  # the server's 7 s beats the 0.5 s backoff; then the doubled backoff
    assert retry_after_seconds("3") == 3.0 and retry_after_seconds("soon") is None
    assert 0 <= retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0  # a past date: no wait

    def respond(n, req):
        return http("429 Too Many Requests", b"{}", headers={"Retry-After": "0"}) if n == 0 else http("200 OK", GOOD)

    with RawServer(respond) as server:
        assert verdict(judge_at(server.url, tmp_path, monkeypatch)).passed is True
        assert len(server.requests) == 2


def test_refused_connections_are_unjudged_and_a_missing_key_is_a_config_error(tmp_path, monkeypatch):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    judge = judge_at(f"http://127.0.0.1:{port}/v1", tmp_path, monkeypatch, max_retries=1)
    v = verdict(judge)
    assert v.passed is None and "ConnectError" in v.error
    monkeypatch.delenv("IFPO_HTTP_TEST_KEY")
    with pytest.raises(ValueError, match="IFPO_HTTP_TEST_KEY"):
        make_judge({"model": "j", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "IFPO_HTTP_TEST_KEY"})
    with pytest.raises(JudgeError):
        judge.ask([{"role": "user", "content": "x"}], {"required": ["passed"]})  # key gone mid-run: no request


def test_generation_endpoint_failures_are_recorded_per_answer_and_never_cross_origins(tmp_path, monkeypatch):
    monkeypatch.setenv("IFPO_HTTP_TEST_KEY", SECRET)
    answer = json.dumps({"choices": [{"message": {"content": "hello"}}]}).encode()
    with RawServer(lambda n, req: http("200 OK", answer)) as second:
        def respond(n, req):
            if b"redirect me" in req:
                return http("302 Found", headers={"Location": f"{second.url}/chat/completions"})
            if b"cut me" in req:
                return http("200 OK", answer[:10], length=len(answer))
            return http("200 OK", answer)

        with RawServer(respond) as first:
            gen = OpenAIGenerator(GenerationConfig(backend="openai", model="m", base_url=first.url, max_retries=1,
                                                   api_key_env="IFPO_HTTP_TEST_KEY", timeout_s=3))
            convs = [[{"role": "user", "content": [{"type": "text", "text": t}]}]
                     for t in ("fine", "redirect me", "cut me")]
            out = gen.generate_or_errors(convs)
        assert second.requests == []
    assert out[0] == "hello"
    assert isinstance(out[1], GenerationError) and "another origin" in str(out[1])
    assert isinstance(out[2], GenerationError) and "RemoteProtocolError" in str(out[2])
    assert all(SECRET not in str(x) for x in out)
    monkeypatch.delenv("IFPO_HTTP_TEST_KEY")
    with pytest.raises(ValueError, match="IFPO_HTTP_TEST_KEY"):
        OpenAIGenerator(GenerationConfig(backend="openai", model="m", api_key_env="IFPO_HTTP_TEST_KEY"))
