"""Judge backends and checklist evaluation against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI, user_text
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.judge import JudgeConfig, JudgeError, OpenAIJudge, make_judge, parse_json_answer

ITEM = {
    "id": "t1",
    "source": "test",
    "instruction": "Describe the video cheerfully in 3 to 5 words, mentioning the red circle.",
    "structure": "single",
    "tasks": [{"name": "summarization", "description": "Summarize the video."}],
    "constraints": [
        {"id": "tone", "type": "tone", "dimension": "style", "description": "Use a cheerful tone.",
         "judge_context": "The video shows a red circle moving right."},
        {"id": "len", "type": "word_count", "dimension": "format", "description": "Use 3 to 5 words."},
        {"id": "mention", "type": "content_inclusion", "dimension": "content", "description": "Mention the circle.",
         "sub_questions": ["Does it mention a circle?", "Does it say the circle is red?"]},
        {"id": "nocomma", "type": "punctuation:no_comma", "dimension": "format", "description": "No commas."},
    ],
}


def smart_handler(body):
    """Answers like a judge that reads the prompt: extraction, gate, sub-questions, plain checks."""
    text = user_text(body)
    if "Extract the parameter values" in text:
        return 200, json.dumps({"params": {"min_count": 3, "max_count": 5}})
    if "Required task(s)" in text:
        return 200, '{"passed": true, "reason": "it summarizes"}'
    if "Answer each yes/no question" in text:
        return 200, '```json\n{"answers": [true, false], "reason": "red is missing"}\n```'
    return 200, 'Verdict: {"passed": "yes", "reason": "cheerful enough"}'


def judge_for(server, tmp_path, **kw):
    cfg = {"model": "judge-1", "base_url": server.base_url, "cache_dir": str(tmp_path / "cache"),
           "backoff_s": 0.01, "max_retries": 2, "timeout_s": 5, **kw}
    return make_judge(cfg)


def by_id(result):
    return {v.constraint_id: v for v in result.verdicts}


def _cached_answers(folder) -> int:
    import sqlite3

    path = folder / "answers.sqlite3"
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]


def test_good_answers_give_verdicts_and_rerun_hits_the_cache(tmp_path):
    with FakeOpenAI(smart_handler) as server:
        judge = judge_for(server, tmp_path)
        result = ChecklistEvaluator(judge).evaluate(ITEM, "A happy circle moves!")
        v = by_id(result)
        assert v["tone"].passed is True and v["tone"].reason == "cheerful enough"
        # hybrid: params extracted by the judge, then the rule checker decides (4 words in 3-5)
        assert v["len"].passed is True and v["len"].params_source == "judge"
        assert v["len"].params["min_count"] == 3 and v["len"].params["max_count"] == 5
        # sub-questions: one "no" fails the constraint and names the failed question
        assert v["mention"].passed is False and "Does it say the circle is red?" in v["mention"].reason
        assert v["nocomma"].passed is True and v["nocomma"].route == "rule"
        assert result.task_gate is True
        calls = len(server.requests)
        assert calls == 4  # tone, extraction, sub-questions, task gate (the rule check needs no call)
        assert judge.stats.requests == 4 and judge.stats.cache_hits == 0

        # A rerun (new judge object, same cache dir) never pays twice.
        judge2 = judge_for(server, tmp_path)
        again = ChecklistEvaluator(judge2).evaluate(ITEM, "A happy circle moves!")
        assert len(server.requests) == calls
        assert judge2.stats.cache_hits == 4 and judge2.stats.requests == 0
        assert [x.passed for x in again.verdicts] == [x.passed for x in result.verdicts]
        # The request asked for schema-constrained JSON.
        assert server.requests[0]["response_format"]["type"] == "json_schema"


def test_extracted_params_outside_the_spec_are_unjudged(tmp_path):
    def handler(body):
        if "Extract the parameter values" in user_text(body):
            return 200, '{"params": {"min_count": "three", "max_count": 5}}'
        return 200, '{"passed": true, "reason": "ok"}'

    with FakeOpenAI(handler) as server:
        v = by_id(ChecklistEvaluator(judge_for(server, tmp_path)).evaluate(ITEM, "A happy circle moves!"))
    assert v["len"].passed is None
    assert "do not fit the spec" in v["len"].error and "expected int" in v["len"].error


@pytest.mark.parametrize(
    "name,handler,delay,expect",
    [
        ("malformed JSON", lambda b: (200, "I would say it passes."), 0.0, "no JSON object"),
        ("HTTP 500", lambda b: (500, {"error": "boom"}), 0.0, "HTTP 500"),
        ("missing key", lambda b: (200, '{"verdict": true}'), 0.0, "lacks required key 'passed'"),
        ("timeout", lambda b: (200, '{"passed": true, "reason": "late"}'), 1.5, "timed out"),
    ],
)
def test_judge_failures_are_unjudged_never_pass_or_fail(tmp_path, name, handler, delay, expect):
    item = {**ITEM, "constraints": [ITEM["constraints"][0], ITEM["constraints"][3]]}
    with FakeOpenAI(handler, delay=delay) as server:
        judge = judge_for(server, tmp_path, max_retries=1, timeout_s=0.5)
        result = ChecklistEvaluator(judge, task_gate=False).evaluate(item, "Great, fun!")
        n_requests = len(server.requests)
    tone, nocomma = result.verdicts
    assert tone.passed is None, name
    assert expect in tone.error, tone.error
    assert "after 2 attempt(s)" in tone.error
    assert n_requests == 2  # first try + one retry
    assert judge.stats.failures == 1
    assert nocomma.passed is False  # the rule verdict is unaffected by the judge failure
    # Failures are not cached: nothing was written.
    assert _cached_answers(tmp_path / "cache") == 0


def test_retry_recovers_from_a_transient_error(tmp_path):
    state = {"n": 0}

    def flaky(body):
        state["n"] += 1
        return (500, {"error": "warming up"}) if state["n"] == 1 else (200, '{"passed": false, "reason": "flat"}')

    item = {**ITEM, "constraints": [ITEM["constraints"][0]]}
    with FakeOpenAI(flaky) as server:
        judge = judge_for(server, tmp_path)
        result = ChecklistEvaluator(judge, task_gate=False).evaluate(item, "It moves.")
    assert result.verdicts[0].passed is False
    assert judge.stats.retries == 1 and judge.stats.requests == 1


def test_without_a_judge_judge_routes_are_unjudged_and_rules_still_run():
    result = ChecklistEvaluator(None).evaluate(ITEM, "A happy, circle moves!")
    v = by_id(result)
    assert v["tone"].passed is None and "no judge is configured" in v["tone"].reason
    assert v["len"].passed is None and "lacks ['min_count', 'max_count']" in v["len"].reason
    assert v["nocomma"].passed is False
    assert result.task_gate is None


def test_hybrid_with_complete_params_needs_no_judge():
    item = json.loads(json.dumps(ITEM))
    item["constraints"][1]["params"] = {"min_count": 3, "max_count": 5}
    v = by_id(ChecklistEvaluator(None).evaluate(item, "one two three four five six"))
    assert v["len"].passed is False and v["len"].params_source == "item"
    assert "6 words" in v["len"].reason


def test_api_key_comes_from_the_environment_and_never_reaches_cache_or_stats(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-123"
    monkeypatch.setenv("IFPO_TEST_KEY", secret)
    item = {**ITEM, "constraints": [ITEM["constraints"][0]]}
    with FakeOpenAI(smart_handler) as server:
        judge = judge_for(server, tmp_path, api_key_env="IFPO_TEST_KEY")
        ChecklistEvaluator(judge, task_gate=False).evaluate(item, "Yay!")
        assert server.headers[0]["Authorization"] == f"Bearer {secret}"
    stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert _cached_answers(tmp_path / "cache") == 1 and secret.encode() not in stored
    assert secret not in repr(judge.config) and secret not in json.dumps(judge.stats.as_dict())

    # Unset when the judge is made: a configuration error naming the variable, before any request.
    monkeypatch.delenv("IFPO_TEST_KEY")
    with FakeOpenAI(smart_handler) as server:
        with pytest.raises(ValueError, match="IFPO_TEST_KEY"):
            judge_for(server, tmp_path / "other", api_key_env="IFPO_TEST_KEY", max_retries=0)
    # Gone during a run: that verdict is unjudged, nothing is sent, and it is not retried.
    monkeypatch.setenv("IFPO_TEST_KEY", secret)
    with FakeOpenAI(smart_handler) as server:
        judge = judge_for(server, tmp_path / "other", api_key_env="IFPO_TEST_KEY", max_retries=3, backoff_s=5.0)
        monkeypatch.delenv("IFPO_TEST_KEY")
        v = ChecklistEvaluator(judge, task_gate=False).evaluate(item, "Yay!").verdicts[0]
        assert server.requests == []
    assert v.passed is None and "IFPO_TEST_KEY" in v.error and "after 1 attempt" in v.error


def test_conflict_items_get_the_conflict_diagnosis(tmp_path):
    item = {
        **ITEM,
        "structure": "conflict",
        "constraints": [
            {"id": "inc", "type": "exact_word_inclusion", "dimension": "content", "description": "Include 'NASA'.",
             "params": {"phrases": ["NASA"]}},
            {"id": "low", "type": "letter_case", "dimension": "format", "description": "Write all in lowercase.",
             "params": {"case": "lower"}},
        ],
        "conflict": {"template": "case_exact_word", "conflicting": ["inc", "low"]},
    }

    def handler(body):
        assert "unsatisfiable" in user_text(body) and "Include 'NASA'." in user_text(body)
        return 200, '{"detected": true, "localized": true, "answered": false, "reason": "asks to clarify"}'

    with FakeOpenAI(handler) as server:
        result = ChecklistEvaluator(judge_for(server, tmp_path)).evaluate(item, "These rules conflict: ...")
    assert result.conflict == {"detected": True, "localized": True, "answered": False, "reason": "asks to clarify"}
    assert result.task_gate is None


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"passed": true}', {"passed": True}),
        ('```json\n{"passed": false, "reason": "x"}\n```', {"passed": False, "reason": "x"}),
        ('Sure. {"a": {"b": "}"}} trailing', {"a": {"b": "}"}}),
        ('noise {bad json} then {"ok": 1}', {"ok": 1}),
    ],
)
def test_parse_json_answer(text, expected):
    assert parse_json_answer(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "no braces here", "[1, 2]"])
def test_parse_json_answer_rejects(text):
    with pytest.raises(ValueError):
        parse_json_answer(text)


def test_judge_config_errors_are_clear(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: m\nbase_ur: http://x\n")
    with pytest.raises(ValueError, match="unknown key 'base_ur'; did you mean 'base_url'"):
        JudgeConfig.from_yaml(path)
    with pytest.raises(ValueError, match="NAME of an environment variable"):
        JudgeConfig(model="m", api_key_env="sk-abc-123")
    with pytest.raises(ValueError, match="'model' is required"):
        JudgeConfig()
    with pytest.raises(ValueError, match="backend"):
        JudgeConfig(model="m", backend="grpc")


def test_unreachable_server_is_a_judge_error(tmp_path):
    judge = OpenAIJudge(JudgeConfig(model="m", base_url="http://127.0.0.1:9/v1", cache_dir=None, max_retries=0,
                                    timeout_s=2))
    with pytest.raises(JudgeError, match="after 1 attempt"):
        judge.ask([{"role": "user", "content": "hi"}], {"required": ["passed"]})


@pytest.mark.slow
def test_in_process_transformers_backend_runs_the_tiny_model(tmp_path):
    from ifpo.train.tiny_model import build_tiny_model

    model_dir = build_tiny_model(tmp_path / "tiny", seed=0)
    judge = make_judge({"backend": "transformers", "model": str(model_dir), "max_tokens": 8, "max_retries": 1,
                        "backoff_s": 0.0, "cache_dir": str(tmp_path / "cache")})
    item = {**ITEM, "constraints": [ITEM["constraints"][0], ITEM["constraints"][3]]}
    result = ChecklistEvaluator(judge, task_gate=False).evaluate(item, "Great fun!")
    tone, nocomma = result.verdicts
    # A random tiny model cannot write JSON: the verdict is unjudged, with the parse error recorded.
    assert tone.passed is None and "no JSON object" in tone.error
    assert judge.stats.failures == 1 and judge.stats.seconds > 0
    assert nocomma.passed is True


def test_vlm_judge_receives_the_image_and_sampled_video_frames(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parent.parent / "sample"
    item = {**ITEM, "media": {"images": ["media/images/i01_row_of_three.png"],
                              "videos": ["media/videos/v01_circle_moves_right.mp4"]},
            "constraints": [ITEM["constraints"][0]]}
    with FakeOpenAI(smart_handler) as server:
        judge = judge_for(server, tmp_path, vision=True, video_frames=3)  # rounded up to 4: frames come in pairs
        ChecklistEvaluator(judge, media_root=sample, task_gate=False).evaluate(item, "Yay!")
        parts = server.requests[0]["messages"][-1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 1 + 4 and all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in images)
    assert parts[-1]["type"] == "text" and "Use a cheerful tone." in parts[-1]["text"]


def test_answer_cache_survives_concurrent_writers_and_kill_9(tmp_path):
    """Four processes write the one SQLite store at once; a fifth is SIGKILLed mid-write. Every answer
    the finished writers stored reads back, and the file passes SQLite's integrity check."""
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from ifpo.verifiers.judge import AnswerCache

    script = (
        "import sys; from pathlib import Path; from ifpo.verifiers.judge import AnswerCache\n"
        "c = AnswerCache(Path(sys.argv[1])); w = sys.argv[2]; n = int(sys.argv[3])\n"
        "for i in range(n): c.put(f'{w}-{i}', 'm', {'passed': True, 'i': i})\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), f"w{k}", "300"]) for k in range(4)]
    victim = subprocess.Popen([sys.executable, "-c", script, str(tmp_path), "victim", "100000"])
    time.sleep(1.5)
    victim.send_signal(signal.SIGKILL)
    assert all(p.wait(timeout=120) == 0 for p in writers)
    victim.wait(timeout=30)
    cache = AnswerCache(tmp_path)
    assert all(cache.get(f"w{k}-{i}") == {"passed": True, "i": i} for k in range(4) for i in range(300))
    with sqlite3.connect(tmp_path / AnswerCache.FILE) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # the former one-file-per-answer layout still reads
    legacy = tmp_path / "ab" / "abcd.json"
    legacy.parent.mkdir()
    legacy.write_text(json.dumps({"model": "m", "answer": {"passed": False}}))
    assert cache.get("abcd") == {"passed": False}


def test_answer_cache_retries_a_busy_database(tmp_path, monkeypatch):
    """A busy or locked answer from SQLite (a concurrent write, or WAL recovery after a kill -9) is
    retried on a fresh connection: the answer is stored, not dropped."""
    import sqlite3

    from ifpo.verifiers.judge import AnswerCache

    cache = AnswerCache(tmp_path)
    real_db, calls = cache._db, {"n": 0}

    class Busy:
        def execute(self, *args):
            raise sqlite3.OperationalError("database is locked")

        def close(self):
            pass

    def flaky():
        calls["n"] += 1
        if calls["n"] <= 2:
            cache._local.db = Busy()
            return cache._local.db
        return real_db()

    monkeypatch.setattr(cache, "_db", flaky)
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    cache.put("k", "m", {"passed": True})
    assert calls["n"] == 3
    assert AnswerCache(tmp_path).get("k") == {"passed": True}
