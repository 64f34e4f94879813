"""Bad-input truth tables, one per entry point: every bad input a clear error, nothing lost.

Each row feeds one command a file holding GOOD records and one kind of bad record (or a bad
setting) and checks: the exit code, no traceback, a message naming the file, line and field (or
the setting), and, where the command goes on, that the good records of the same file were still
processed. Commands run in-process through ``ifpo.cli.main`` / the entry scripts' ``main`` (one
interpreter for all rows: no subprocess start-up per case).

Exit codes (docs/exit-codes.md): 0 all input used; 1 done, but bad records were skipped (named);
2 a bad setting, a path, unusable input or --strict refusing a bad record (nothing written). The bad-record kinds are the categories of the reader policy (``verifiers/io.py``):
invalid UTF-8, broken JSON, over-deep nesting, a non-object line, a wrong field, an empty file;
BOM and CRLF are accepted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ifpo.cli import main as ifpo

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"
PNG = "media/images/i01_row_of_three.png"
MP4 = "media/videos/v01_circle_moves_right.mp4"


def item(i: int, **extra) -> dict:
    return {"id": f"good-{i}", "source": "t", "instruction": "Answer in 3 to 50 words.", "structure": "single",
            "constraints": [{"id": "c1", "type": "word_count", "dimension": "format", "description": "3-50 words",
                             "params": {"min_count": 3, "max_count": 50}}],
            "reference_response": "one two three four", **extra}


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


DEEP = b"[" * 200_000 + b"]" * 200_000 + b"\n"
# kind -> (bytes of the bad line, words the message must hold)
BAD_LINES = {
    "non_utf8": (b'{"id": "x\xff\xfe", "source": "t"}\n', "not UTF-8"),
    "broken_json": (b'{"id": "x", \n', "invalid JSON"),
    "deep_nesting": (DEEP, "nested too deeply"),
    "not_an_object": (b"[1, 2, 3]\n", "object"),  # "expected a JSON object" or "... an object with id and response"
    # What Python's json takes but JSON does not (or leaves ambiguous): each failed later, or the whole file.
    "lone_surrogate": (b'{"id": "x\\ud800", "source": "t"}\n', "lone surrogate escape \\ud800"),
    "huge_integer": (b'{"id": "x", "n": ' + b"9" * 5000 + b"}\n", "number too long to read"),
    "nan_token": (b'{"id": "x", "n": NaN}\n', "NaN is not a JSON value"),
    "float_overflow": (b'{"id": "x", "n": 1e400}\n', "number 1e400 is out of range"),
    "duplicate_key": (b'{"id": "x", "id": "y"}\n', "duplicate key 'id'"),
}


def run(capsys, argv, entry=ifpo):
    rc = entry(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out, err
    return rc, out, err


@pytest.fixture
def root(tmp_path):
    """A dataset root holding the sample media, plus a secret file outside it and a symlink to it."""
    data = tmp_path / "data"
    for rel in (PNG, MP4):
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_bytes((SAMPLE / rel).read_bytes())
    (tmp_path / "secret.png").write_bytes((SAMPLE / PNG).read_bytes())
    os.symlink(tmp_path / "secret.png", data / "media" / "images" / "link.png")
    (data / "media" / "images" / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return data


# --- ifpo validate ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_validate_bad_line_is_named_and_the_others_are_checked(root, capsys, kind):
    bad, words = BAD_LINES[kind]
    path = root / "items.jsonl"
    path.write_bytes(line(item(1)) + bad + line(item(2)))
    rc, out, err = run(capsys, ["validate", str(path)])
    assert rc == 1 and f"{path}:2:" in out and words in out
    assert "in 1 of 3 records" in err  # lines 1 and 3 were read and validated


@pytest.mark.parametrize(
    "media, words",
    [
        ({"images": ["media/images/link.png"]}, "resolves outside the dataset root"),
        ({"images": ["/etc/passwd"]}, "is absolute"),
        ({"images": ["../secret.png"]}, "escapes the dataset root"),
        ({"images": ["media/images/missing.png"]}, "not found"),
        ({"images": "media/images/x.png"}, "expected an array"),
        ({"images": [PNG + "\u0000.txt"]}, "holds a NUL character"),  # os calls raised: the whole file was lost
        ({"images": ["media/images"]}, "is a folder under the dataset root"),
        ({"images": [PNG.replace("/", "\\")]}, "write '/' as the separator"),
        ({"images": ["https://example.com/x.png"]}, "URLs are not fetched"),
    ],
)
def test_validate_media_confined_to_the_dataset_root(root, capsys, media, words):
    path = root / "items.jsonl"
    path.write_bytes(line(item(1, media={"images": [PNG]})) + line(item(2, media=media)))
    rc, out, _ = run(capsys, ["validate", str(path)])
    assert rc == 1 and f"{path}:2: item 'good-2' media.images" in out and words in out
    assert f"{path}:1:" not in out


def test_validate_bom_crlf_ok_empty_and_missing_files_refused(root, capsys):
    path = root / "items.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line(item(1)).replace(b"\n", b"\r\n") + line(item(2)).replace(b"\n", b"\r\n"))
    rc, out, _ = run(capsys, ["validate", str(path)])
    assert rc == 0 and "2 items" in out
    path.write_bytes(b"\n  \n")
    rc, out, _ = run(capsys, ["validate", str(path)])
    assert rc == 1 and f"{path}: no records" in out
    rc, _, err = run(capsys, ["validate", str(root / "nope.jsonl")])
    assert rc == 2 and "nope.jsonl" in err
    rc, _, err = run(capsys, ["validate", str(root)])
    assert rc == 2 and str(root) in err


# --- ifpo import --------------------------------------------------------------------------------


def vcif(i: int, chosen: str = "one two three four", **extra) -> dict:
    return {"id": f"q{i}", "video": MP4, "instruction": "Describe the clip in 3 to 10 words.",
            "constraints": [{"type": "word_count", "dimension": "format", "description": "3-10 words",
                             "params": {"min_count": 3, "max_count": 10}}], "chosen": chosen, **extra}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_import_bad_line_skipped_good_records_written(root, capsys, kind):
    bad, words = BAD_LINES[kind]
    src, out = root / "in.jsonl", root / "out.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + line(vcif(1)) + bad + line(vcif(2)).replace(b"\n", b"\r\n"))
    rc, stdout, err = run(capsys, ["import", "--format", "vcifbench", "--input", str(src), "--out", str(out)])
    assert rc == 1 and f"{src}:2:" in err and words in err
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["q1", "q2"]
    assert "1 record(s) skipped" in stdout


@pytest.mark.parametrize(
    "record, field, words",
    [
        (vcif(2, chosen="no"), "chosen", "fails its own constraint"),  # the benchmark's own answer breaks its rule
        (vcif(2, video="../secret.png"), "media.videos[0]", "escapes"),
        (vcif(2, constraints=[{"type": "word_cnt"}]), "constraints[0].type", "did you mean"),
        (vcif(2, constraints="word_count"), "constraints", "expected list"),
        ({**vcif(2), "chosen": 5}, "chosen", "expected str"),
        (vcif(2, video=MP4 + "\u0000"), "media.videos[0]", "holds a NUL character"),
        (vcif(2, constraints=[{"type": "word_count", "params": [3, 10]}]), "constraints[0].params",
         "expected an object of parameters, got list"),
        (vcif(2, constraints=[{"id": {"a": 1}, "type": "word_count", "params": {"min_count": 3, "max_count": 10}}]),
         "constraints[0].id", "expected str or int, got dict"),
        ({**vcif(2), "id": True}, "id", "expected str or int, got bool"),  # was imported as the id "True"
        (vcif(2, rejected={"text": "x"}), "rejected", "expected str, got dict"),
    ],
)
def test_import_bad_record_named_by_field(root, capsys, record, field, words):
    src, out = root / "in.jsonl", root / "out.jsonl"
    src.write_bytes(line(vcif(1)) + line(record))
    rc, _, err = run(capsys, ["import", "--format", "vcifbench", "--input", str(src), "--out", str(out)])
    assert rc == 1 and f"{src}:2:" in err and f" {field}:" in err and words in err, err
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["q1"]


def test_import_unregistered_id_with_params_becomes_checklist_item(root, capsys):
    src, out = root / "in.jsonl", root / "out.jsonl"
    rec = {"video_id": "v1", "video_path": MP4, "instructions": [{
        "instruction_id": "v1-0", "instruction_key": "single", "instruction_type": "single", "instruction": "Do it.",
        "constraints": [{"constraint_id": "made_up_rule", "checklist_query": "Is it done?", "params": {"k": 3}}]}]}
    src.write_bytes(line(rec))
    rc, _, err = run(capsys, ["import", "--format", "video_ifbench", "--input", str(src), "--out", str(out)])
    assert rc == 0, err
    c = json.loads(out.read_text())["constraints"][0]
    assert (c["type"], c["source_type"], c["params"], c["source_params"]) == ("checklist_item", "made_up_rule", {}, {"k": 3})


def test_import_strict_empty_and_missing(root, capsys):
    src, out = root / "in.jsonl", root / "out.jsonl"
    src.write_bytes(line(vcif(1)) + b"{oops\n")
    rc, _, err = run(capsys, ["import", "--format", "vcifbench", "--input", str(src), "--out", str(out), "--strict"])
    assert rc == 2 and "--strict" in err and not out.exists()
    src.write_bytes(b"")
    rc, _, err = run(capsys, ["import", "--format", "vcifbench", "--input", str(src), "--out", str(out)])
    assert rc == 2 and "no records" in err and not out.exists()
    rc, _, err = run(capsys, ["import", "--format", "vcifbench", "--input", str(root / "nope"), "--out", str(out)])
    assert rc == 2 and "nope" in err


# --- ifpo score ---------------------------------------------------------------------------------


def _score_files(root, items_lines: bytes, responses_lines: bytes):
    items, responses = root / "items.jsonl", root / "responses.jsonl"
    items.write_bytes(items_lines)
    responses.write_bytes(responses_lines)
    return items, responses


@pytest.mark.parametrize("where", ["items", "responses"])
@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_score_bad_line_named_good_ones_scored(root, capsys, kind, where):
    bad, words = BAD_LINES[kind]
    good_items = [line(item(1)), line(item(2))]
    good_resp = [line({"id": "good-1", "response": "one two three four"}),
                 line({"id": "good-2", "response": "one two three four"})]
    items_b = good_items[0] + (bad if where == "items" else b"") + good_items[1]
    resp_b = good_resp[0] + (bad if where == "responses" else b"") + good_resp[1]
    items, responses = _score_files(root, items_b, resp_b)
    report = root / "report.json"
    argv = ["score", "--items", str(items), "--responses", str(responses), "--out", str(report), "--no-progress"]
    rc, _, err = run(capsys, argv)
    named = items if where == "items" else responses
    assert rc == 1 and f"{named}:2:" in err and words in err, err
    data = json.loads(report.read_text())
    assert sorted(i["id"] for i in data["items"]) == ["good-1", "good-2"] and data["ipr"] == 1.0
    assert any(f"{named}:2:" in p for p in data["input_problems"])  # named in the report too
    rc, _, err = run(capsys, [*argv, "--strict"])
    assert rc == 2 and f"{named}:2:" in err


@pytest.mark.parametrize(
    "yaml_text, words",
    [
        ("model: j\ntimeout_s: soon\n", "timeout_s: expected a number, got str 'soon'"),
        ("model: j\nvision: 'no'\n", "vision: expected true or false"),
        ("model: j\ntemperature: hot\n", "temperature: expected a number"),
        ("model: j\nmax_retries: 2.5\n", "max_retries: expected an integer"),
        ("model: j\nmodle: x\n", "unknown key 'modle'; did you mean 'model'"),
        ("model: j\n  bad: [indent\n", ":2: YAML syntax error"),
        ("- a list\n", "expected a mapping"),
        ("model: j\napi_key_env: IFPO_UNSET_KEY_FOR_TEST\n", "IFPO_UNSET_KEY_FOR_TEST"),
        ("model: j\nbackend: grpc\n", "backend 'grpc'"),
        (None, "settings file not found"),
        ("model: j\ntimeout_s: .inf\n", "timeout_s: expected a finite number, got float inf"),  # httpx raised
        ("model: j\ntemperature: .nan\n", "temperature: expected a finite number"),
        ("model: j\nmodel: k\n", ":2: YAML syntax error: key 'model' is given twice (first at line 1)"),
        ("model: j\nbase_url: 'htp://127.0.0.1/v1'\n", "base_url: 'htp://127.0.0.1/v1' is not an http"),
        ("model: j\nbase_url: 'http://u:pw@127.0.0.1/v1'\n", "base_url: holds a user name or password"),
        ("model: j\nmax_retries: 1000000000000000000000\n", "max_retries must be <= 100"),  # retried forever
        ("model: j\nvideo_frames: 0\n", "video_frames must be >= 1"),
        ("model: j\nx: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
            f"x{n}: &a{n} [{', '.join([f'*a{n - 1}' if n > 1 else '*a'] * 10)}]\n" for n in range(1, 7)),
         "expand to over 1,000,000 values"),
    ],
)
def test_score_judge_config_errors_are_one_line_exit_2(root, capsys, monkeypatch, yaml_text, words):
    monkeypatch.delenv("IFPO_UNSET_KEY_FOR_TEST", raising=False)
    items, responses = _score_files(root, line(item(1)), line({"id": "good-1", "response": "a b c d"}))
    judge = root / "judge.yaml"
    if yaml_text is not None:
        judge.write_text(yaml_text)
    rc, _, err = run(capsys, ["score", "--items", str(items), "--responses", str(responses), "--out",
                              str(root / "r.json"), "--judge", str(judge), "--no-progress"])
    assert rc == 2 and words in err and str(judge) in err, err
    assert len(err.strip().splitlines()) == 1


def test_score_dead_judge_is_loud_and_exits_1_corrupt_media_fails_only_its_item(root, capsys):
    judged = {**item(1), "constraints": [{"id": "c1", "type": "tone", "dimension": "style",
                                          "description": "Be cheerful.", "params": {"tone": "cheerful"}}]}
    corrupt = {**judged, "id": "good-2", "media": {"images": ["media/images/corrupt.png"]}}
    items, responses = _score_files(root, line(judged) + line(corrupt),
                                    line({"id": "good-1", "response": "Yay"}) + line({"id": "good-2", "response": "Yay"}))
    judge = root / "judge.yaml"
    judge.write_text("model: j\nbase_url: http://127.0.0.1:9/v1\nmax_retries: 0\nvision: true\ncache_dir: null\n")
    report = root / "report.json"
    rc, _, err = run(capsys, ["score", "--items", str(items), "--responses", str(responses), "--out", str(report),
                              "--judge", str(judge), "--no-progress"])
    assert rc == 1 and "every judge request failed" in err and "First error" in err
    data = json.loads(report.read_text())
    errors = {i["id"]: i["verdicts"][0]["reason"] for i in data["items"]}
    assert "ConnectError" in errors["good-1"]
    assert "media 'media/images/corrupt.png' cannot be used" in errors["good-2"]  # its item, not the run


# --- ifpo build-pairs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "yaml_text, words",
    [
        ("max_candidates: '8'\n", "max_candidates: expected an integer, got str '8'"),
        ("workers: 2.5\n", "workers: expected an integer, got float 2.5"),
        ("seed: abc\n", "seed: expected an integer"),
        ("length_match: 'yes'\n", "length_match: expected true or false"),
        ("policy: my-model\n", "policy: expected a mapping or null"),
        ("kinds: corrupted\n", "kinds: expected a list, got str 'corrupted'"),
        ("kinds: []\n", "kinds: expected at least one pair kind"),
        ("kinds: [corupted]\n", "did you mean 'corrupted'"),
        ("length_tolerance: wide\n", "length_tolerance: expected a number"),
        ("judge: missing-judge.yaml\ncorruptor_llm: {model: m}\n", "missing-judge.yaml: settings file not found"),
        ("seed: [1\n", "YAML syntax error"),
        ("sed: 1\n", "did you mean 'seed'"),
        ("seed: 100000000000000000000000000000\n", "seed: expected a seed in 0..4294967295"),  # pyarrow raised at the end
        ("seed: -1\n", "seed: expected a seed in 0..4294967295"),
        ("judge: 5\n", "judge: expected the path of a judge YAML or a mapping"),  # AttributeError
        ("judge: [a]\n", "judge: expected the path of a judge YAML or a mapping"),
        ("length_tolerance: .nan\n", "length_tolerance: expected a finite number"),
        ("length_bias_warn: -1\n", "length_bias_warn must be >= 0"),
        ("kinds: [corrupted]\nkinds: [stripped]\n", ":2: YAML syntax error: key 'kinds' is given twice"),
        ("policy: {model: m, backend: openai, base_url: 'htp://x'}\n", "base_url: 'htp://x' is not an http"),
    ],
)
def test_build_pairs_config_errors_are_one_line_exit_2(root, capsys, yaml_text, words):
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)))
    config = root / "BUILD.yaml"
    config.write_text(yaml_text)
    rc, _, err = run(capsys, ["build-pairs", "--items", str(items), "--out", str(root / "pairs"), "--config",
                              str(config), "--no-progress"])
    assert rc == 2 and words in err, err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_build_pairs_bad_item_line_named_good_items_built(root, capsys, kind):
    bad, words = BAD_LINES[kind]
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)) + bad + line(item(2)))
    config = root / "BUILD.yaml"
    config.write_text("kinds: [corrupted]\n")
    out = root / "pairs"
    argv = ["build-pairs", "--items", str(items), "--out", str(out), "--config", str(config), "--no-progress"]
    rc, _, err = run(capsys, argv)
    assert rc == 1 and f"{items}:2:" in err and words in err
    built = {json.loads(x)["meta"]["item_id"] for x in (out / "pairs.jsonl").read_text().splitlines()}
    assert built == {"good-1", "good-2"}
    rc, _, err = run(capsys, [*argv[:4], str(root / "strict"), *argv[5:], "--strict"])
    assert rc == 2 and not (root / "strict" / "pairs.jsonl").exists()


# --- ifpo evaluate ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (["--temperature", "0.5", "--generation", "GEN"], "temperature: expected a number"),
        (["--generation", "MISSING"], "settings file not found"),
        (["--api-key-env", "IFPO_UNSET_KEY_FOR_TEST"], "IFPO_UNSET_KEY_FOR_TEST"),
        (["--temperature", "nan"], "--temperature, --endpoint: temperature: expected a finite number"),  # names the flag
        (["--video-fps", "nan"], "--endpoint, --video-fps: generation config: media: video_fps: expected a finite"),
        (["--seed", "9" * 25], "seed: expected a seed in 0..4294967295"),
        (["--api-key-env", "sk-live-123"], "api_key_env must be the NAME"),  # the value was echoed as a variable name
        (["--step", "-3"], "--step must be >= 0"),
        (["--endpoint", ""], "--endpoint is empty"),  # was: no endpoint, so 'm' was looked up on the hub
        (["--endpoint", "localhost:8000/v1"], "base_url: 'localhost:8000/v1' is not an http"),
    ],
)
def test_evaluate_setting_errors_are_one_line_exit_2(root, capsys, monkeypatch, args, words):
    monkeypatch.delenv("IFPO_UNSET_KEY_FOR_TEST", raising=False)
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)))
    (root / "gen.yaml").write_text("temperature: hot\n")
    args = [str(root / "gen.yaml") if a == "GEN" else str(root / "missing.yaml") if a == "MISSING" else a
            for a in args]
    if args[:2] == ["--temperature", "0.5"]:  # the YAML's value is what is refused; drop the flag that would override it
        args = args[2:]
    endpoint = [] if "--endpoint" in args else ["--endpoint", "http://127.0.0.1:9/v1"]
    rc, _, err = run(capsys, ["evaluate", "--model", "m", *endpoint, "--items",
                              str(items), "--out", str(root / "ev"), "--no-progress", *args])
    assert rc == 2 and words in err, err
    assert "sk-live" not in err


def test_evaluate_dead_endpoint_records_each_failure_and_exits_1(root, capsys):
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)) + b'{"id": \xff}\n' + line(item(2)))
    (root / "gen.yaml").write_text("max_retries: 0\ntimeout_s: 2\n")
    out = root / "ev"
    rc, _, err = run(capsys, ["evaluate", "--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items",
                              str(items), "--out", str(out), "--generation", str(root / "gen.yaml"), "--no-progress"])
    assert rc == 1 and f"{items}:2:" in err and "not UTF-8" in err
    assert "2 of 2 item(s) got no answer" in err and "ConnectError" in err
    failures = json.loads((out / "report.json").read_text())["evaluation"]["generation_failures"]
    assert failures["count"] == 2 and failures["items"] == ["good-1", "good-2"]


# --- ifpo compare -------------------------------------------------------------------------------


def test_compare_skips_unreadable_reports_and_draws_nan_as_null(root, capsys):
    from ifpo.eval_hooks.core import checkpoint_eval_dir, score_and_write
    from ifpo.verifiers.checklist import ChecklistEvaluator

    run_dir = root / "run"
    items = [item(1)]
    evaluator = ChecklistEvaluator(None)
    for step in (1, 2):
        score_and_write(items, {"good-1": "one two three four"}, checkpoint_eval_dir(run_dir, step), evaluator,
                        {"step": step})
    nan = checkpoint_eval_dir(run_dir, 2) / "report.json"
    nan.write_text(nan.read_text().replace('"ipr": 1.0', '"ipr": NaN'))
    for step, content in ((3, b'{"ipr": \xff}'), (4, b"[" * 100000), (5, b"")):
        folder = checkpoint_eval_dir(run_dir, step)
        folder.mkdir(parents=True)
        (folder / "report.json").write_bytes(content)
    page, js = root / "d.html", root / "c.json"
    rc, _, err = run(capsys, ["compare", str(run_dir), "--out", str(page), "--json", str(js)])
    assert rc == 1 and page.is_file()  # drawn, but with reports skipped and a NaN rate: named, exit 1
    for step in (3, 4, 5):
        assert f"checkpoint-{step}" in err
    assert f"WARNING: {nan}: not a number where a rate belongs (ipr, by_k.1.ipr)" in err, err
    assert "NaN" not in page.read_text() and "NaN" not in js.read_text()
    assert [c["step"] for c in json.loads(js.read_text())["checkpoints"]] == [1, 2]


# --- train/dpo.py: the pairs loader ---------------------------------------------------------------


def _pair(media=None):
    prompt = [{"role": "user", "content": [*([{"type": "image"}] if media else []), {"type": "text", "text": "q"}]}]
    return {"prompt": prompt, "chosen": [{"role": "assistant", "content": [{"type": "text", "text": "a"}]}],
            "rejected": [{"role": "assistant", "content": [{"type": "text", "text": "b"}]}],
            "images": [media] if media else [], "videos": [], "meta": {"item_id": "x", "kind": "corrupted"}}


@pytest.mark.parametrize(
    "bad, words",
    [
        (BAD_LINES["non_utf8"][0], ":2: not UTF-8"),
        (BAD_LINES["deep_nesting"][0], ":2: invalid JSON: nested too deeply"),
        (b'"a string"\n', ":2: expected a JSON object"),
        (line(_pair("/etc/hostname")), "is absolute"),
        (line(_pair("../secret.png")), "escapes the dataset root"),
        (line(_pair("media/images/link.png")), "resolves outside the dataset root"),
        (line({**_pair(), "chosen": ["not a message"]}), "chosen[0]: expected a message object"),
        (line({**_pair(), "meta": "{not json"}), "meta: expected an object"),
        (line({**_pair(), "images": "x.png"}), "images: expected a list"),
    ],
)
def test_dpo_pairs_loader_names_the_bad_line(root, bad, words):
    from ifpo.train.pairs import PairsError, load_pairs

    pairs = root / "pairs"
    pairs.mkdir()
    (pairs / "manifest.json").write_text(json.dumps({"media_root": "../"}))
    (pairs / "pairs.jsonl").write_bytes(line(_pair(PNG)) + bad)
    with pytest.raises(PairsError, match=None) as err:
        load_pairs(str(pairs), output_dir=root / "out")
    assert words in str(err.value) and "pairs.jsonl" in str(err.value)


def test_dpo_pairs_loader_manifest_and_stale_dataset(root):
    from ifpo.train.pairs import PairsError, load_pairs

    pairs = root / "pairs"
    pairs.mkdir()
    (pairs / "pairs.jsonl").write_bytes(line(_pair(PNG)))
    (pairs / "manifest.json").write_text('{"media_root": ')
    with pytest.raises(PairsError, match="manifest.json:1: pairs manifest is not valid JSON"):
        load_pairs(str(pairs), output_dir=root / "out")
    (pairs / "manifest.json").write_text(json.dumps({"media_root": "..", "pairs_sha256": "0" * 64, "pairs": 1}))
    from datasets import Dataset

    Dataset.from_list([_pair(PNG)]).save_to_disk(str(pairs / "dataset"))
    with pytest.raises(PairsError, match="stale"):
        load_pairs(str(pairs), output_dir=root / "out")
    import hashlib

    digest = hashlib.sha256((pairs / "pairs.jsonl").read_bytes()).hexdigest()
    (pairs / "manifest.json").write_text(json.dumps({"media_root": "..", "pairs_sha256": digest, "pairs": 1}))
    assert len(load_pairs(str(pairs), output_dir=root / "out").dataset) == 1


def test_dpo_pairs_with_corrupt_media_are_left_out_by_name(root):
    from ifpo.train.pairs import PairsError, load_pairs

    pairs = root / "pairs"
    pairs.mkdir()
    (pairs / "manifest.json").write_text(json.dumps({"media_root": "../"}))
    corrupt = {**_pair("media/images/corrupt.png"), "meta": {"item_id": "y", "kind": "stripped"}}
    (pairs / "pairs.jsonl").write_bytes(line(_pair(PNG)) + line(corrupt))
    loaded = load_pairs(str(pairs), output_dir=root / "out")
    assert loaded.dataset["pair_id"] == ["x/corrupted"]  # the good pair trains
    assert len(loaded.left_out) == 1
    assert "pairs.jsonl:2: pair 'y/stripped': images[0]:" in loaded.left_out[0]
    assert "corrupt.png" in loaded.left_out[0] and "cannot be decoded" in loaded.left_out[0]
    (pairs / "pairs.jsonl").write_bytes(line(corrupt))
    with pytest.raises(PairsError, match="no pair has decodable media"):
        load_pairs(str(pairs), output_dir=root / "out")


# --- train/grpo.py: the entry refuses bad runs before loading anything ------------------------------


def test_grpo_entry_refuses_bad_settings_and_a_taken_output_dir(tmp_path, capsys):
    from ifpo.train.grpo import main

    recipe = REPO / "recipes" / "tiny_grpo.yaml"
    (tmp_path / "checkpoint-3").mkdir()
    rc, _, err = run(capsys, [str(recipe), "--output_dir", str(tmp_path)], entry=main)
    assert rc == 2 and "already holds a run" in err
    rc, _, err = run(capsys, [str(recipe), "--output_dir", str(tmp_path / "new"), "--learning_rate", "fast"],
                     entry=main)
    assert rc == 2 and "learning_rate" in err


def test_grpo_items_with_corrupt_media_are_left_out_by_name(root, capsys):
    from types import SimpleNamespace

    from ifpo.train.grpo_trainer import load_training_items

    items = root / "items.jsonl"
    corrupt = {"images": ["media/images/corrupt.png"]}
    items.write_bytes(line(item(1, media={"images": [PNG]})) + line(item(2, media=corrupt)))
    recipe = SimpleNamespace(items=str(items), media_root=None, item_ids=None, item_media=["text", "image", "video"],
                             max_items=None)
    kept, _, _ = load_training_items(recipe)
    err = capsys.readouterr().err
    assert [i["id"] for i in kept] == ["good-1"]
    assert "item 'good-2': media.images[0]: 'media/images/corrupt.png' cannot be decoded" in err


@pytest.mark.parametrize("content", [b'{"builder_version": ', b"\xff\xfe", b"[1]", b'{"identity": [1, 2]}', b'"x"'])
def test_corrupt_state_files_of_a_resumable_command_are_named(root, capsys, content):
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)))
    out = root / "pairs"
    out.mkdir()
    (out / "build_state.json").write_bytes(content)
    rc, _, err = run(capsys, ["build-pairs", "--items", str(items), "--out", str(out), "--no-progress"])
    assert rc == 2 and "build_state.json" in err
    ev = root / "ev"
    ev.mkdir()
    (ev / "evaluation.json").write_bytes(content)
    rc, _, err = run(capsys, ["evaluate", "--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", str(items),
                              "--out", str(ev), "--no-progress"])
    assert rc == 2 and ("evaluation.json" in err or "other settings" in err), err


def test_writers_never_emit_non_standard_json(tmp_path):
    import math

    from ifpo.verifiers.io import dumps, write_json_atomic

    class Loss:  # a tensor-like value that only the default= converter knows
        def __float__(self):
            return math.nan

    write_json_atomic(tmp_path / "r.json", {"ipr": math.nan, "by": [math.inf, 0.5], "loss": 1.0})
    text = (tmp_path / "r.json").read_text()
    assert "NaN" not in text and "Infinity" not in text and json.loads(text) == {"ipr": None, "by": [None, 0.5],
                                                                                   "loss": 1.0}
    assert dumps({"loss": Loss()}, default=float) == '{"loss": null}'


@pytest.mark.parametrize(
    "hook, words",
    [
        ({"items": "i.jsonl", "every_steps": "often"}, "every_steps: expected an integer"),
        ({"items": "i.jsonl", "on_save": "no"}, "on_save: expected true or false"),
        ({"items": "i.jsonl", "generation": "greedy"}, "generation: expected a mapping"),
        ({"items": "i.jsonl", "evry_steps": 5}, "did you mean 'every_steps'"),
        ({"every_steps": 5}, "items: required setting is missing"),
    ],
)
def test_eval_hook_settings_are_typed(hook, words):
    from ifpo.eval_hooks.callback import EvalHookConfig

    with pytest.raises(ValueError, match=None) as err:
        EvalHookConfig.from_mapping(hook, source="eval_hook")
    assert str(err.value).startswith("eval_hook: ") and words in str(err.value)


@pytest.mark.parametrize(
    "generation, words",
    [
        ({"temperature": "hot"}, "temperature: expected a number, got str 'hot'"),
        ({"seed": "abc"}, "seed: expected an integer"),
        ({"media": {"video_fps": "fast"}}, "media: video_fps: expected a number"),
        ({"media": {"video_fsp": 2}}, "did you mean 'video_fps'"),
        ({"max_new_tokens": 0}, "max_new_tokens must be > 0"),
        ({"timeout_s": 0}, "timeout_s must be > 0"),
        ({"timeout_s": float("inf")}, "timeout_s: expected a finite number"),
        ({"max_retries": -1}, "max_retries must be in 0..100"),
        ({"temperature": -0.5}, "temperature must be >= 0"),
        ({"top_p": 2}, "top_p must be in (0, 1]"),
        ({"seed": 2**40}, "seed: expected a seed in 0..4294967295"),
        ({"backend": "openai", "base_url": "localhost:8000/v1"}, "base_url: 'localhost:8000/v1' is not an http"),
        ({"backend": "openai", "base_url": "http://127.0.0.1:80OO/v1"}, "is not a URL"),
        ({"api_key_env": "sk-live-123"}, "api_key_env must be the NAME"),  # was echoed: "variable sk-live-123 ..."
    ],
)
def test_generation_settings_are_typed(generation, words):
    from ifpo.verifiers.generation import GenerationConfig

    with pytest.raises(ValueError, match=None) as err:
        GenerationConfig.from_mapping({"model": "m", **generation}, source="gen.yaml")
    assert str(err.value).startswith("gen.yaml") and words in str(err.value), str(err.value)
    assert "sk-live" not in str(err.value)


def test_score_empty_responses_file_is_an_error(root, capsys):
    items, responses = _score_files(root, line(item(1)), b"\n\n")
    rc, _, err = run(capsys, ["score", "--items", str(items), "--responses", str(responses), "--out",
                              str(root / "r.json"), "--no-progress"])
    assert rc == 2 and f"{responses}: no records" in err and not (root / "r.json").exists()


# --- outputs never replace inputs -------------------------------------------------------------------


@pytest.mark.parametrize("how", ["same", "dotdot", "symlink"])
@pytest.mark.parametrize("command", ["import", "score", "build-pairs"])
def test_an_output_path_naming_an_input_is_refused_and_the_input_kept(root, capsys, command, how):
    """Outputs are replaced atomically, so `--out` = an input used to swap the user's file for the result."""
    items, responses = _score_files(root, line(item(1)), line({"id": "good-1", "response": "one two three four"}))
    if command == "import":
        items.write_bytes(line(vcif(1)))
    target = {"import": items, "score": responses, "build-pairs": items}[command]
    if command == "build-pairs":  # the items file kept in the output folder under an output's name
        target = root / "pairs.jsonl"
        target.write_bytes(items.read_bytes())
        items = target
    out = {"same": target, "dotdot": target.parent / "media" / ".." / target.name, "symlink": root / "link.out"}[how]
    if how == "symlink":
        os.symlink(target, out)
    before = target.read_bytes()
    argv = {"import": ["import", "--format", "vcifbench", "--input", str(items), "--out", str(out)],
            "score": ["score", "--items", str(items), "--responses", str(responses), "--out", str(out), "--no-progress"],
            "build-pairs": ["build-pairs", "--items", str(items), "--out", str(out.parent), "--no-progress"]}[command]
    rc, _, err = run(capsys, argv)
    assert rc == 2 and "is also the --" in err and "would replace that input" in err, err
    assert target.read_bytes() == before
    assert len(err.strip().splitlines()) == 1


def test_empty_output_paths_are_refused(root, capsys):
    items, responses = _score_files(root, line(item(1)), line({"id": "good-1", "response": "one two three four"}))
    rc, _, err = run(capsys, ["build-pairs", "--items", str(items), "--out", "", "--no-progress"])
    assert rc == 2 and "--out is empty" in err  # Path("") is the working directory: pairs landed there
    rc, _, err = run(capsys, ["score", "--items", str(items), "--responses", str(responses), "--out", "", "--no-progress"])
    assert rc == 2 and "output path is empty" in err


# --- resumable jobs: a journal of another shape is rebuilt, not a crash --------------------------------


@pytest.mark.parametrize(
    "journal",
    [
        b'{"item_id": "good-1"}\n',  # no pairs: KeyError at the end of the run
        b'{"item_id": ["good-1"], "pairs": [], "discards": {}}\n',  # unhashable id: TypeError
        b'{"item_id": "good-1", "pairs": "x", "discards": {}}\n',  # pairs a string: TypeError in the report
        b'{"item_id": "good-1", "pairs": [{"meta": 1}], "discards": {}}\n',
        b'{"item_id": "good-1", "pairs": [], "discards": {"x": "many"}}\n',
    ],
)
def test_build_pairs_resume_rebuilds_journal_lines_of_another_shape(root, capsys, journal):
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)) + line(item(2)))
    config = root / "BUILD.yaml"
    config.write_text("kinds: [corrupted]\n")
    argv = ["build-pairs", "--items", str(items), "--config", str(config), "--no-progress", "--out"]
    rc, _, _ = run(capsys, [*argv, str(root / "clean")])
    assert rc == 0
    out = root / "resumed"
    rc, _, _ = run(capsys, [*argv, str(out)])
    (out / "journal.jsonl").write_bytes(journal)
    rc, _, err = run(capsys, [*argv, str(out)])
    assert rc == 0, err
    assert (out / "pairs.jsonl").read_bytes() == (root / "clean" / "pairs.jsonl").read_bytes()


# --- compare: one report of any content never costs the other runs' dashboard ------------------------


def test_compare_skips_reports_python_cannot_hold_and_odd_trainer_state(root, capsys):
    from ifpo.eval_hooks.core import checkpoint_eval_dir, score_and_write
    from ifpo.verifiers.checklist import ChecklistEvaluator

    run_dir = root / "run"
    score_and_write([item(1)], {"good-1": "one two three four"}, checkpoint_eval_dir(run_dir, 1),
                    ChecklistEvaluator(None), {"step": 1})
    good = (checkpoint_eval_dir(run_dir, 1) / "report.json").read_text()
    assert '"ipr": 1.0' in good
    for step, bad in ((2, '"ipr": ' + "1" * 5000), (3, '"ipr": 1.0, "note": "\\udc00"'), (4, '"ipr": 1.0, "ipr": 0.0')):
        folder = checkpoint_eval_dir(run_dir, step)  # a complete report but for one value
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(good.replace('"ipr": 1.0', bad, 1))
    (run_dir / "checkpoint-1").mkdir(exist_ok=True)
    (run_dir / "checkpoint-1" / "trainer_state.json").write_text("[1, 2]")  # not transformers' object
    page, js = root / "d.html", root / "c.json"
    rc, _, err = run(capsys, ["compare", str(run_dir), "--out", str(page), "--json", str(js)])
    assert rc == 1, err  # drawn, reports skipped (named)
    for step in (2, 3, 4):
        assert f"checkpoint-{step}" in err
    assert [c["step"] for c in json.loads(js.read_text())["checkpoints"]] == [1]


def test_judge_cache_dir_that_is_a_file_is_named(root, capsys):
    items, responses = _score_files(root, line(item(1)), line({"id": "good-1", "response": "a b c d"}))
    judge = root / "judge.yaml"
    judge.write_text(f"model: j\ncache_dir: {items}\n")
    rc, _, err = run(capsys, ["score", "--items", str(items), "--responses", str(responses), "--out",
                              str(root / "r.json"), "--judge", str(judge), "--no-progress"])
    assert rc == 2 and f"cache_dir: {items} is a file, expected a folder" in err and str(judge) in err, err


@pytest.mark.parametrize("name", ["responses.jsonl", "report.json", "evaluation.json"])
def test_evaluate_never_replaces_an_items_file_kept_in_out(root, capsys, name):
    """`--overwrite` deletes the folder's outputs: an items file saved there under such a name went with them."""
    out = root / "ev"
    out.mkdir()
    items = out / name
    items.write_bytes(line(item(1)))
    rc, _, err = run(capsys, ["evaluate", "--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", str(items),
                              "--out", str(out), "--overwrite", "--no-progress"])
    assert rc == 2 and "is also the --items file" in err and items.read_bytes() == line(item(1)), err
    rc, _, err = run(capsys, ["evaluate", "--model", "m", "--endpoint", "http://127.0.0.1:9/v1", "--items", str(items),
                              "--out", str(items), "--no-progress"])
    assert rc == 2 and "expected an output folder, not a file" in err


@pytest.mark.parametrize("content, words", [(b"[1]", "expected a JSON object (PEFT's adapter config), got list"),
                                            (b"\xff{", "adapter config is not UTF-8")])
def test_evaluate_names_a_corrupt_adapter_config(root, capsys, content, words):
    adapter = root / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_bytes(content)
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)))
    rc, _, err = run(capsys, ["evaluate", "--model", str(adapter), "--items", str(items), "--out", str(root / "ev"),
                              "--device", "cpu", "--no-progress"])
    assert rc == 2 and f"{adapter / 'adapter_config.json'}: " in err and words in err, err


def _two_checkpoints(root):
    from ifpo.eval_hooks.core import checkpoint_eval_dir, score_and_write
    from ifpo.verifiers.checklist import ChecklistEvaluator

    run_dir = root / "run"
    for step in (1, 2):
        score_and_write([item(1), item(2)], {"good-1": "one two three four", "good-2": "one two"},
                        checkpoint_eval_dir(run_dir, step), ChecklistEvaluator(None), {"step": step})
    return run_dir, checkpoint_eval_dir(run_dir, 2) / "report.json"


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda r: {**r, "evaluation": [1]}, "evaluation: expected an object, got list"),  # AttributeError before
        (lambda r: {**r, "ipr": "high"}, "ipr: expected a number or null, got str"),  # format error: exit 2 for all
        (lambda r: {**r, "n_items": "2"}, "n_items: expected a number or null, got str"),
        (lambda r: {**r, "cpr_by_dimension": [1]}, "cpr_by_dimension: expected an object"),
        (lambda r: {**r, "by_constraint_type": "x"}, "by_constraint_type: expected an object"),
        (lambda r: {**r, "by_k": {"1": 0.5}}, "by_k: expected an object"),
        (lambda r: {**r, "items": [{**r["items"][0], "id": 7}]}, "items[0].id: expected a string, got int"),
        (lambda r: {**r, "items": [{**r["items"][0], "verdicts": "x"}]}, "items[0].verdicts: expected a list"),
        (lambda r: {**r, "items": [{**r["items"][0], "verdicts": [1]}]}, "items[0].verdicts[0]: expected an object"),
        (lambda r: {**r, "items": [r["items"][0], r["items"][0]]}, "items[1].id: 'good-1' appears twice"),
    ],
)
def test_compare_skips_a_report_of_another_shape_by_field_and_draws_the_rest(root, capsys, change, words):
    run_dir, report = _two_checkpoints(root)
    report.write_text(json.dumps(change(json.loads(report.read_text()))))
    page, js = root / "d.html", root / "c.json"
    rc, _, err = run(capsys, ["compare", str(run_dir), "--out", str(page), "--json", str(js), "--csv", str(root / "c.csv")])
    assert rc == 1 and f"skipped {report}: not an ifpo report: {words}" in err, err
    assert [c["step"] for c in json.loads(js.read_text())["checkpoints"]] == [1] and page.is_file()


def test_compare_verdicts_file_of_another_shape_falls_back_to_the_report(root, capsys):
    run_dir, report = _two_checkpoints(root)
    (report.parent / "verdicts.jsonl").write_text('{"id": "good-1", "verdicts": "no"}\n{"id": "good-2", "verdicts": [3]}\n')
    rc, _, err = run(capsys, ["compare", str(run_dir), "--out", str(root / "d.html"), "--json", str(root / "c.json")])
    assert rc == 1 and f"WARNING: {report.parent / 'verdicts.jsonl'}: 2 unreadable or malformed record(s)" in err, err
    data = json.loads((root / "c.json").read_text())
    assert [c["step"] for c in data["checkpoints"]] == [1, 2] and len(data["warnings"]) == 1


@pytest.mark.parametrize("which", ["--out", "--json", "--csv"])
def test_compare_outputs_never_replace_a_report_or_items_file(root, capsys, which):
    run_dir, report = _two_checkpoints(root)
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)))
    for target in (report, report.parent / "responses.jsonl", items):
        before = target.read_bytes()
        argv = {"--out": str(root / "d.html")} | {which: str(target)}
        rc, _, err = run(capsys, ["compare", str(run_dir), "--items", str(items), *[x for kv in argv.items() for x in kv]])
        assert rc == 2 and "writing it would replace that input" in err and target.read_bytes() == before, err
    rc, _, err = run(capsys, ["compare", str(run_dir), "--out", str(root / "d.html"), "--csv", str(root / "d.html")])
    assert rc == 2 and "must be different files" in err


# --- ifpo export --------------------------------------------------------------------------------------


@pytest.fixture
def pairs_dir(root, capsys):
    items = root / "items.jsonl"
    items.write_bytes(line(item(1, media={"images": [PNG]})) + line(item(2)))
    (root / "BUILD.yaml").write_text("kinds: [corrupted]\n")
    rc, _, _ = run(capsys, ["build-pairs", "--items", str(items), "--out", str(root / "pairs"), "--config",
                            str(root / "BUILD.yaml"), "--no-progress"])
    assert rc == 0
    return root / "pairs"


@pytest.mark.parametrize(
    "recipe, words",
    [
        (b"video_fps: fast\n", "media budget: video_fps: expected a number, got str 'fast'"),  # was a TypeError text
        (b"video_fps: .nan\n", "media budget: video_fps: expected a finite number"),  # was exported
        (b"video_fps: 1\nvideo_fps: 2\n", ":2: YAML syntax error: key 'video_fps' is given twice"),  # was exported
        (b"video_fps: \xff\n", "not UTF-8 text"),  # named no file
        (b"a: [\n", ":2: YAML syntax error"),
    ],
)
def test_export_recipe_goes_through_the_typed_settings_helper(pairs_dir, root, capsys, recipe, words):
    (root / "r.yaml").write_bytes(recipe)
    rc, _, err = run(capsys, ["export", str(pairs_dir), "--to", "ms-swift", "--out", str(root / "ex"), "--recipe",
                              str(root / "r.yaml")])
    assert rc == 2 and str(root / "r.yaml") in err and words in err, err
    assert not (root / "ex" / "train.jsonl").exists()


def test_export_refuses_its_input_folder_an_empty_name_and_an_odd_media_root(pairs_dir, root, capsys):
    before = (pairs_dir / "pairs.jsonl").read_bytes()
    rc, _, err = run(capsys, ["export", str(pairs_dir), "--to", "ms-swift", "--out", str(pairs_dir)])
    assert rc == 2 and "is the pairs folder itself" in err and not (pairs_dir / "train.jsonl").exists()
    rc, _, err = run(capsys, ["export", str(pairs_dir), "--to", "ms-swift", "--out", str(pairs_dir / "pairs.jsonl")])
    assert rc == 2 and "is a file, expected an output folder" in err
    assert (pairs_dir / "pairs.jsonl").read_bytes() == before
    rc, _, err = run(capsys, ["export", str(pairs_dir), "--to", "llamafactory", "--out", str(root / "ex"), "--name", " "])
    assert rc == 2 and "--name: expected a dataset name" in err
    manifest = json.loads((pairs_dir / "manifest.json").read_text())
    (pairs_dir / "manifest.json").write_text(json.dumps({**manifest, "media_root": [1]}))
    rc, _, err = run(capsys, ["export", str(pairs_dir), "--to", "ms-swift", "--out", str(root / "ex")])
    assert rc == 2 and "manifest.json: media_root: expected a folder path string, got list" in err  # TypeError before


# --- ifpo judge-agreement, ifpo sample -------------------------------------------------------------


@pytest.mark.parametrize(
    "report, words",
    [
        ("[1]", "expected a JSON object (an ifpo score report), got list"),  # AttributeError before
        ('{"items": "x"}', "items: expected a list of {id, verdicts}, got str"),
        ('{"items": [{"id": "good-1", "verdicts": [1]}]}', "items[0].verdicts[0]: expected an object"),  # TypeError
        ('{"items": [{"id": "good-1", "verdicts": [{"constraint_id": "c1", "passed": true}]}]}',
         "items[0].verdicts[0]: expected an object with constraint_id, type and passed"),  # KeyError 'type'
    ],
)
def test_judge_agreement_names_a_report_of_another_shape(root, capsys, report, words):
    labels, path = root / "labels.jsonl", root / "report.json"
    labels.write_bytes(line({"id": "good-1", "constraint_id": "c1", "label": True}))
    path.write_text(report)
    rc, _, err = run(capsys, ["judge-agreement", "--labels", str(labels), "--report", str(path)])
    assert rc == 2 and f"{path}: {words}" in err, err


def test_judge_agreement_empty_labels_and_an_output_naming_an_input(root, capsys):
    labels, report = root / "labels.jsonl", root / "report.json"
    labels.write_text("\n")
    report.write_text('{"items": []}')
    rc, _, err = run(capsys, ["judge-agreement", "--labels", str(labels), "--report", str(report)])
    assert rc == 2 and f"{labels}: no records" in err  # scored nothing and exited 0 before
    labels.write_bytes(line({"id": "good-1", "constraint_id": "c1", "label": True}))
    rc, _, err = run(capsys, ["judge-agreement", "--labels", str(labels), "--report", str(report), "--out", str(report)])
    assert rc == 2 and "would replace that input" in err and report.read_text() == '{"items": []}'


def test_sample_world_refuses_an_item_count_no_machine_holds(tmp_path, capsys):
    rc, _, err = run(capsys, ["sample", "--world", "--split", "train", "--n", "999999999999", "--out", str(tmp_path)])
    assert rc == 2 and "--n must be <= 100,000" in err and not any(tmp_path.iterdir())  # it ran out of memory before


# --- media that exists but does not decode: a MediaError for its item, never an escaping IndexError -----


def _frameless_mp4(path):
    import av

    with av.open(str(path), "w") as container:  # a valid header, a video stream, no frame at all
        stream = container.add_stream("mpeg4", rate=4)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        container.start_encoding()
    return path


@pytest.mark.parametrize("name", ["frameless.mp4", "empty.mp4", "empty.png", "text.png"])
def test_undecodable_media_is_a_media_error_naming_the_file(tmp_path, name):
    from ifpo.verifiers.media import MediaBudget, MediaError, load_image, load_video

    path = tmp_path / name
    if name == "frameless.mp4":
        _frameless_mp4(path)
    else:
        path.write_bytes(b"" if name.startswith("empty") else b"not an image")
    load = load_video if name.endswith(".mp4") else load_image
    with pytest.raises(MediaError, match="cannot be decoded") as err:  # IndexError / ZeroDivisionError before
        load(path, MediaBudget(), 28)
    assert str(path) in str(err.value)


def test_evaluate_in_process_fails_only_the_items_whose_media_do_not_decode(root, capsys):
    """A 0-frame mp4 raised IndexError out of the in-process generator: a traceback, no report at all."""
    _frameless_mp4(root / "media" / "frameless.mp4")
    (root / "media" / "text.png").write_text("not an image")
    rc, _, _ = run(capsys, ["tiny-model", "--out", str(root / "tiny")])
    assert rc == 0
    items = root / "items.jsonl"
    items.write_bytes(line(item(1)) + line(item(2, media={"videos": ["media/frameless.mp4"]}))
                      + line(item(3, media={"images": ["media/text.png"]})) + line(item(4, media={"videos": [MP4]})))
    out = root / "ev"
    rc, _, err = run(capsys, ["evaluate", "--model", str(root / "tiny"), "--items", str(items), "--out", str(out),
                              "--device", "cpu", "--max-new-tokens", "4", "--no-progress"])
    assert rc == 1 and "2 of 4 item(s) got no answer" in err and "frameless.mp4' cannot be decoded" in err, err
    report = json.loads((out / "report.json").read_text())
    assert sorted(i["id"] for i in report["items"]) == ["good-1", "good-4"]
    assert report["evaluation"]["generation_failures"]["items"] == ["good-2", "good-3"]


@pytest.mark.parametrize("content, words", [(b"[1]", "expected a Qwen3-VL config object, got list"),  # AttributeError
                                            (b"\xff{", "random model config is not UTF-8 text")])
def test_random_model_config_of_another_shape_is_named(tmp_path, content, words):
    from ifpo.train.model import _random_model

    config = tmp_path / "config.json"
    config.write_bytes(content)
    with pytest.raises(ValueError, match=None) as err:
        _random_model(config, None, None, None, 0)
    assert str(err.value).startswith(f"{config}: ") and words in str(err.value)


# --- the launcher's environment and ifpo tiny-model's flags -----------------------------------------


@pytest.mark.parametrize("entry", ["dpo", "grpo"])
@pytest.mark.parametrize("rank", ["abc", "-1", "1.5"])
def test_a_rank_that_is_not_a_rank_is_named(tmp_path, capsys, monkeypatch, entry, rank):
    # RANK comes from torchrun/accelerate; a stray value said "invalid literal for int()" without naming it.
    import importlib

    from ifpo.cli import run_command

    main = importlib.import_module(f"ifpo.train.{entry}").main
    monkeypatch.setenv("RANK", rank)
    recipe = REPO / "recipes" / ("tiny.yaml" if entry == "dpo" else "tiny_grpo.yaml")
    argv = [str(recipe), "--output_dir", str(tmp_path / "out")]
    rc, _, err = run(capsys, argv, entry=lambda a: run_command(f"train/{entry}.py", main, a))
    assert rc == 2 and f"environment variable RANK={rank!r}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--out", "X", "--seed", "99999999999999999999"], "--seed: expected a seed in 0..4294967295"),
        (["--out", "X", "--seed", "-1"], "--seed: expected a seed in 0..4294967295, got -1"),
        (["--out", ""], "argument --out: expected a folder, got an empty path"),
    ],
)
def test_tiny_model_flags_are_named(tmp_path, capsys, argv, words):
    argv = [str(tmp_path / "m") if a == "X" else a for a in argv]
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        ifpo(["tiny-model", *argv])
    assert exc.value.code == 2 and words in capsys.readouterr().err and not (tmp_path / "m").exists()
