"""The exit-code policy of docs/exit-codes.md as one truth table across every command.

0: all input used. 1: finished, but input was left out, each case named on stderr and in the
command's report. 2: bad settings or unusable input, nothing written. Each row builds its files,
runs the command in-process through ``ifpo.cli.main`` (or a training script's ``main``) and checks
the code, the words that name what was left out, and what was (not) written. The five cases that
were silent before (exit 0, nothing said) have their own rows: a corrupt image sent to a vision
judge, a corrupt media file in ``ifpo validate``, a negative ``duration_sec`` in a Video-IFBench
import, and ``ifpo compare`` on a report holding a NaN rate or broken responses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from ifpo.cli import main as ifpo

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"
PNG = "media/images/i01_row_of_three.png"
CORRUPT = "media/images/corrupt.png"
MP4 = "media/videos/v01_circle_moves_right.mp4"


def item(i: int, **extra) -> dict:
    return {"id": f"good-{i}", "source": "t", "instruction": "Answer in 3 to 50 words.", "structure": "single",
            "constraints": [{"id": "c1", "type": "word_count", "dimension": "format", "description": "3-50 words",
                             "params": {"min_count": 3, "max_count": 50}}],
            "reference_response": "one two three four", **extra}


def judged_item(i: int, **extra) -> dict:
    return item(i, constraints=[{"id": "c1", "type": "tone", "dimension": "style", "description": "Be cheerful.",
                                 "params": {"tone": "cheerful"}}], **extra)


def jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def answer(text: str):
    return lambda body: (200, text)


@pytest.fixture
def root(tmp_path):
    for rel in (PNG, MP4):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes((SAMPLE / rel).read_bytes())
    (tmp_path / CORRUPT).write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return tmp_path


def responses(root: Path, ids=("good-1", "good-2"), extra=()) -> Path:
    return jsonl(root / "responses.jsonl", [*({"id": i, "response": "one two three four"} for i in ids), *extra])


def score_argv(root: Path, *extra: str) -> list[str]:
    return ["score", "--items", str(root / "items.jsonl"), "--responses", str(root / "responses.jsonl"),
            "--out", str(root / "report.json"), "--no-progress", *extra]


def vif(duration) -> dict:
    return {"video_id": "v1", "video_path": MP4, "duration_sec": duration, "instructions": [{
        "instruction_id": "v1-0", "instruction_key": "single", "instruction_type": "single", "instruction": "Do it.",
        "constraints": [{"constraint_id": "made_up_rule", "checklist_query": "Is it done?"}]}]}


def evaluation(root: Path, name: str, step: int, *, mutate: Callable[[Path], None] | None = None) -> Path:
    """One scored evaluation folder under root/run (the real writer), optionally damaged after."""
    from ifpo.eval_hooks.core import checkpoint_eval_dir, score_and_write
    from ifpo.verifiers.checklist import ChecklistEvaluator

    folder = checkpoint_eval_dir(root / name, step)
    score_and_write([item(1), item(2)], {"good-1": "one two three four", "good-2": "a b"}, folder,
                    ChecklistEvaluator(None), {"step": step})
    if mutate:
        mutate(folder)
    return folder


def nan_rate(folder: Path) -> None:
    report = folder / "report.json"
    report.write_text(re.sub(r'"ipr": [0-9.]+', '"ipr": NaN', report.read_text(), count=1))


def broken_responses(folder: Path) -> None:
    with open(folder / "responses.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"id": "good-3", "resp\n')


# Each row: a setup (root -> argv), the expected code, words stderr must hold, and a check of what was written.
# The setups build only what their row needs, in the row's own tmp folder.


def _validate_ok(root):
    return ["validate", str(jsonl(root / "items.jsonl", [item(1, media={"images": [PNG], "videos": [MP4]})]))]


def _validate_bad_record(root):
    return ["validate", str(jsonl(root / "items.jsonl", [item(1), {**item(2), "structure": "loop"}]))]


def _validate_corrupt_media(root):  # silent before: the file existed, so it was "valid"
    return ["validate", str(jsonl(root / "items.jsonl", [item(1), item(2, media={"images": [CORRUPT]})]))]


def _import_ok(root):
    return ["import", "--format", "video_ifbench", "--input", str(jsonl(root / "in.jsonl", [vif(12.5)])),
            "--out", str(root / "out.jsonl")]


def _import_negative_duration(root):  # silent before: copied onto the item
    src = jsonl(root / "in.jsonl", [vif(12.5), {**vif(-3), "video_id": "v2"}])
    return ["import", "--format", "video_ifbench", "--input", str(src), "--out", str(root / "out.jsonl")]


def _import_nothing_usable(root):
    return ["import", "--format", "video_ifbench", "--input", str(jsonl(root / "in.jsonl", [vif(-3)])),
            "--out", str(root / "out.jsonl")]


def _import_strict(root):
    return [*_import_negative_duration(root), "--strict"]


def _build(root, records, *extra):
    (root / "BUILD.yaml").write_text("kinds: [corrupted]\n")
    return ["build-pairs", "--items", str(jsonl(root / "items.jsonl", records)), "--out", str(root / "pairs"),
            "--config", str(root / "BUILD.yaml"), "--no-progress", *extra]


def _score_ok(root):
    jsonl(root / "items.jsonl", [item(1), item(2)])
    responses(root)
    return score_argv(root)


def _score_skipped_record(root):
    jsonl(root / "items.jsonl", [item(1), "{broken", item(2)])
    responses(root)
    return score_argv(root)


def _score_missing_response(root):
    jsonl(root / "items.jsonl", [item(1), item(2)])
    responses(root, ids=("good-1",))
    return score_argv(root)


def _score_empty_responses(root):
    jsonl(root / "items.jsonl", [item(1)])
    (root / "responses.jsonl").write_text("\n")
    return score_argv(root)


def _agreement(root, labels):
    jsonl(root / "items.jsonl", [item(1), item(2)])
    responses(root)
    assert ifpo(score_argv(root)) == 0
    return ["judge-agreement", "--labels", str(jsonl(root / "labels.jsonl", labels)),
            "--report", str(root / "report.json")]


def _compare(root, *mutations):
    for step, mutate in enumerate(mutations):
        evaluation(root, "run", step, mutate=mutate)
    return ["compare", str(root / "run"), "--out", str(root / "d.html"), "--json", str(root / "c.json")]


def _compare_skipped(root):
    argv = _compare(root, None)
    bad = root / "run" / "eval" / "checkpoint-9"
    bad.mkdir(parents=True)
    (bad / "report.json").write_text('{"ipr": ')
    return argv


def _export(root):
    assert ifpo(_build(root, [item(1)])) == 0
    return ["export", str(root / "pairs"), "--to", "llamafactory", "--out", str(root / "x")]


ROWS = {
    # name: (setup, code, stderr words, check(root) or None)
    "help": (lambda root: ["--help"], 0, [], None),
    "unknown command": (lambda root: ["scroe"], 2, ["Did you mean score"], None),
    "validate: all valid": (_validate_ok, 0, [], None),
    "validate: an invalid record": (_validate_bad_record, 1, ["items.jsonl:2: item 'good-2' structure:"], None),
    "validate: a corrupt media file": (_validate_corrupt_media, 1,
                                       [f"items.jsonl:2: item 'good-2' media.images[0]: media file '{CORRUPT}' "
                                        "cannot be decoded"], None),
    "validate: no such file": (lambda root: ["validate", str(root / "nope.jsonl")], 2, ["not found"], None),
    "constraints: listed": (lambda root: ["constraints", "word_count"], 0, [], None),
    "constraints: unknown type": (lambda root: ["constraints", "word_cont"], 2, ["word_count"], None),
    "import: all records": (_import_ok, 0, [], lambda root: (root / "out.jsonl").is_file()),
    "import: a negative duration_sec": (_import_negative_duration, 1,
                                        ["in.jsonl:2:", "duration_sec: expected a positive number of seconds, got -3"],
                                        lambda root: len((root / "out.jsonl").read_text().splitlines()) == 1),
    "import: no usable record": (_import_nothing_usable, 2, ["no record could be imported"],
                                 lambda root: not (root / "out.jsonl").exists()),
    "import: --strict with a bad record": (_import_strict, 2, ["--strict"],
                                           lambda root: not (root / "out.jsonl").exists()),
    "build-pairs: all items": (lambda root: _build(root, [item(1), item(2)]), 0, [],
                               lambda root: (root / "pairs" / "pairs.jsonl").is_file()),
    "build-pairs: an invalid record": (lambda root: _build(root, [item(1), "[1]", item(2)]), 1,
                                       ["items.jsonl:2:", "skipping 1 invalid record(s)"],
                                       lambda root: (root / "pairs" / "pairs.jsonl").is_file()),
    "build-pairs: --strict": (lambda root: _build(root, [item(1), "[1]"], "--strict"), 2, ["items.jsonl:2:"],
                              lambda root: not (root / "pairs").exists()),
    "build-pairs: bad config": (lambda root: [*_build(root, [item(1)])[:-1], "--seed", "-1"], 2, ["seed"], None),
    "score: all scored": (_score_ok, 0, [], None),
    "score: an unreadable record": (_score_skipped_record, 1, ["items.jsonl:2: invalid JSON"],
                                    lambda root: len(json.loads((root / "report.json").read_text())["input_problems"]) == 1),
    "score: an item without a response": (_score_missing_response, 1, ["1 item(s) without a response"],
                                          lambda root: json.loads((root / "report.json").read_text())[
                                              "missing_responses"] == ["good-2"]),
    "score: --strict": (lambda root: [*_score_skipped_record(root), "--strict"], 2, ["items.jsonl:2:"],
                        lambda root: not (root / "report.json").exists()),
    "score: an empty responses file": (_score_empty_responses, 2, ["no records"],
                                       lambda root: not (root / "report.json").exists()),
    "judge-agreement: every label": (lambda root: _agreement(root, [{"id": "good-1", "constraint_id": "c1",
                                                                      "label": True}]), 0, [], None),
    "judge-agreement: a label the report lacks": (
        lambda root: _agreement(root, [{"id": "good-1", "constraint_id": "c1", "label": True},
                                       {"id": "good-9", "constraint_id": "c1", "label": True}]),
        1, ["not_in_report 1"], None),
    "judge-agreement: unreadable labels": (lambda root: _agreement(root, ["{oops"]), 2, ["labels.jsonl:1:"], None),
    "compare: every report whole": (lambda root: _compare(root, None, None), 0, [], None),
    "compare: a corrupt report": (_compare_skipped, 1, ["skipped", "checkpoint-9", "corrupt JSON"],
                                  lambda root: len(json.loads((root / "c.json").read_text())["skipped"]) == 1),
    "compare: a NaN rate": (lambda root: _compare(root, None, nan_rate), 1,
                            ["WARNING:", "checkpoint-1/report.json: not a number where a rate belongs (ipr)"],
                            lambda root: "NaN" not in (root / "d.html").read_text()),
    "compare: broken responses": (lambda root: _compare(root, broken_responses), 1,
                                  ["WARNING:", "checkpoint-0/responses.jsonl: unreadable line(s)"],
                                  lambda root: len(json.loads((root / "c.json").read_text())["warnings"]) == 1),
    "compare: nothing readable": (lambda root: (root / "run").mkdir() or ["compare", str(root / "run"), "--out",
                                                                         str(root / "d.html")],
                                  2, ["no readable report.json"], lambda root: not (root / "d.html").exists()),
    "export: every pair": (_export, 0, [], lambda root: (root / "x").is_dir()),
    "export: unknown format": (lambda root: ["export", str(root), "--to", "axolotl", "--out", str(root / "x")],
                               2, ["axolotl"], None),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_exit_code_truth_table(root, capsys, name):
    setup, code, words, check = ROWS[name]
    argv = setup(root)
    capsys.readouterr()
    rc = ifpo(argv)
    out, err = capsys.readouterr()
    if argv[0] == "validate":
        err = out + err  # validate's report is its list of errors, on stdout; the count is on stderr
    assert "Traceback" not in err
    assert rc == code, f"{name}: exit {rc}, expected {code}\n{err}"
    for w in words:
        assert w in err, f"{name}: {w!r} not on stderr:\n{err}"
    if check is not None:
        assert check(root), name


def _judge_yaml(root: Path, base_url: str) -> Path:
    path = root / "judge.yaml"
    path.write_text(f"model: j\nbase_url: {base_url}\nmax_retries: 0\nvision: true\ncache_dir: null\n")
    return path


def test_score_corrupt_image_for_a_vision_judge_is_named_and_exits_1(root, capsys):
    """Silent before: a working judge, an item whose image does not decode; its verdict was unjudged, exit 0."""
    jsonl(root / "items.jsonl", [judged_item(1, media={"images": [PNG]}), judged_item(2, media={"images": [CORRUPT]})])
    responses(root)
    with FakeOpenAI(answer('{"passed": true, "reason": "cheerful"}')) as server:
        rc = ifpo(score_argv(root, "--judge", str(_judge_yaml(root, server.base_url))))
    err = capsys.readouterr().err
    assert rc == 1, err
    # Two questions of good-2 need its image: the constraint and the task gate.
    assert "2 judge question(s) not asked" in err and f"item 'good-2': media {CORRUPT!r} cannot be used" in err, err
    report = json.loads((root / "report.json").read_text())
    verdicts = {i["id"]: i["verdicts"][0] for i in report["items"]}
    assert verdicts["good-1"]["passed"] is True and verdicts["good-2"]["passed"] is None
    assert report["judge"]["media_failures"] == 2 and CORRUPT in report["judge"]["first_media_error"]
    # The same items with a readable image: every question asked, exit 0.
    jsonl(root / "items.jsonl", [judged_item(1, media={"images": [PNG]}), judged_item(2, media={"images": [PNG]})])
    with FakeOpenAI(answer('{"passed": true, "reason": "cheerful"}')) as server:
        assert ifpo(score_argv(root, "--judge", str(_judge_yaml(root, server.base_url)))) == 0, capsys.readouterr().err


def test_evaluate_codes(root, capsys):
    """An endpoint answers everything: 0; an invalid record skipped: 1 (named, and in report.json); --strict: 2."""
    jsonl(root / "items.jsonl", [item(1), item(2)])
    with FakeOpenAI(answer("one two three four")) as server:
        argv = ["evaluate", "--model", "m", "--endpoint", server.base_url, "--items", str(root / "items.jsonl"),
                "--no-progress"]
        assert ifpo([*argv, "--out", str(root / "a")]) == 0, capsys.readouterr().err
        jsonl(root / "items.jsonl", [item(1), {**item(2), "structure": "loop"}])
        capsys.readouterr()
        assert ifpo([*argv, "--out", str(root / "b")]) == 1
        err = capsys.readouterr().err
        assert "items.jsonl:2: item 'good-2' structure:" in err and "1 invalid item record(s) skipped" in err, err
        problems = json.loads((root / "b" / "report.json").read_text())["evaluation"]["input_problems"]
        assert len(problems) == 1 and "good-2" in problems[0]
        assert ifpo([*argv, "--out", str(root / "c"), "--strict"]) == 2
        assert not (root / "c" / "report.json").exists()


@pytest.mark.parametrize("script", ["dpo", "grpo"])
def test_training_scripts_bad_recipe_exits_2(tmp_path, capsys, script):
    import importlib

    main = importlib.import_module(f"ifpo.train.{script}").main
    assert main([str(tmp_path / "missing.yaml"), "--output_dir", str(tmp_path / "o")]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_grpo_left_out_items_are_returned_for_the_manifest_and_the_exit_code(root, capsys):
    """train/grpo.py exits 1 when `left_out` is not empty: the loader fills it, one line per item."""
    from types import SimpleNamespace

    from ifpo.train.grpo_trainer import load_training_items

    items = jsonl(root / "items.jsonl", [item(1, media={"images": [PNG]}), item(2, media={"images": [CORRUPT]})])
    recipe = SimpleNamespace(items=str(items), media_root=None, item_ids=None, item_media=["text", "image", "video"],
                             max_items=None)
    left_out: list[str] = []
    kept, _, _ = load_training_items(recipe, left_out)
    assert [i["id"] for i in kept] == ["good-1"]
    assert len(left_out) == 1 and "item 'good-2': media.images[0]" in left_out[0] and "cannot be decoded" in left_out[0]
