"""The light install: ``pip install ifpo`` (no extra) has no torch, and every command that needs no model works.

One venv (``tests/engine_venvs.py``: cached under ``IFPO_TEST_VENVS``; about 2.5 minutes to build on 2 cores
the first time, seconds to refresh) with ``pip install <checkout>`` and nothing else. The commands that need
the ``train`` extra print one line naming ``pip install "ifpo[train]"`` and exit non-zero, no traceback.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from engine_venvs import ROOT, ifpo_venv, run

pytestmark = pytest.mark.slow

SAMPLE = ROOT / "sample" / "items.jsonl"
TRAIN_MODULES = ("torch", "torchvision", "transformers", "trl", "peft", "accelerate", "wandb", "qwen_vl_utils")
# Commands of the light install (their --help must work: the module imports without the extra).
LIGHT_COMMANDS = ("validate", "constraints", "score", "judge-agreement", "import", "build-pairs", "export",
                  "compare", "serve", "sample", "evaluate")


@pytest.fixture(scope="module")
def light() -> Path:
    return ifpo_venv("light")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_training_package_is_installed(light):
    done = run(light, "-c", "import importlib.util as u, json, sys; "
                            f"print(json.dumps([m for m in {TRAIN_MODULES!r} if u.find_spec(m)]))")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    where = run(light, "-c", "import ifpo.verifiers.checklist as c; print(c.__file__)")
    assert str(light.parents[1]) in where.stdout, "ifpo must come from the venv, not the checkout"


@pytest.mark.parametrize("command", LIGHT_COMMANDS)
def test_light_commands_start(light, command):
    done = run(light, "-m", "ifpo.cli", command, "--help")
    assert done.returncode == 0, f"ifpo {command} --help in the light install:\n{done.stderr[-2000:]}"


def test_train_command_names_the_extra(light, tmp_path):
    done = run(light, "-m", "ifpo.cli", "tiny-model", "--out", str(tmp_path / "m"))
    assert done.returncode not in (0, 1) and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and 'pip install "ifpo[train]"' in lines[0], done.stderr


def test_score_runs_without_torch(light, tmp_path):
    items = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"id": it["id"], "response": it.get("reference_response") or ""}) + "\n"
                                 for it in items))
    out = tmp_path / "report.json"
    done = run(light, "-m", "ifpo.cli", "score", "--items", str(SAMPLE), "--responses", str(responses),
               "--out", str(out), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["cpr_micro"] is not None and len(report["items"]) == len(items)


def test_serve_answers_without_torch(light):
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.rewards import RewardSpec, reward_values

    port = _free_port()
    server = subprocess.Popen([str(light.parent / "ifpo"), "serve", "--items", str(SAMPLE), "--port", str(port),
                               "--pool", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              cwd="/tmp")
    try:
        deadline = time.time() + 120
        while True:
            try:
                health = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2))
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    pytest.fail(f"ifpo serve did not come up: {server.stderr.read()[-2000:]}")
                time.sleep(0.5)
        assert health["status"] == "ok" and health["items"] == 77
        item = json.loads(SAMPLE.read_text().splitlines()[0])
        text = "A red circle moves to the right."
        body = json.dumps({"completions": [{"item_id": item["id"], "completion": text}], "rewards": ["cpr", "ipr"]})
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/rewards", data=body.encode(), method="POST")
        answer = json.load(urllib.request.urlopen(request, timeout=60))
        # the same numbers as in-process scoring in the dev venv
        record = ChecklistEvaluator().evaluate(item, text)
        expected = reward_values(record, [RewardSpec("cpr"), RewardSpec("ipr")], text)
        assert answer["results"][0]["rewards"] == expected
    finally:
        server.kill()
        server.wait()


def test_export_to_verl_without_torch(light, tmp_path):
    done = run(light, "-m", "ifpo.cli", "export", str(SAMPLE), "--to", "verl", "--out", str(tmp_path / "verl"),
               "--media", "absolute", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = run(light, "-c", "import pyarrow.parquet as pq, sys; print(pq.read_table(sys.argv[1]).num_rows)",
               str(tmp_path / "verl" / "train.parquet"))
    assert rows.stdout.strip() == "77", rows.stderr
