"""Runs that cannot be silently mixed (train/run_guard.py): output_dir ownership, resume identity, complete checkpoints.

The checkpoint folders here are laid out as transformers' Trainer writes them (weights first,
``trainer_state.json`` last); a job killed during a save leaves the newest folder without it, or
with a torn one. The last test runs ``train/dpo.py``'s entry in-process up to the guard (it refuses
before any model is loaded), checking the exit code and the one-line message.
"""

from __future__ import annotations

import json

import pytest
from ifpo.train.run_guard import (
    RunGuardError,
    check_identity,
    identity,
    prepare_output_dir,
    resume_checkpoint,
)


def _checkpoint(out, step, *, state=True, weights=True, torn=False):
    folder = out / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    if weights:
        (folder / "adapter_model.safetensors").write_bytes(b"weights")
    if state:
        text = json.dumps({"global_step": step, "log_history": []})
        (folder / "trainer_state.json").write_text(text[: len(text) // 2] if torn else text)
    return folder


@pytest.mark.parametrize(
    "newest, expect",
    [
        ({"state": False}, "no trainer_state.json"),  # killed before the Trainer's last write
        ({"torn": True}, "unreadable"),  # killed during it
        ({"weights": False, "state": False}, "no trainer_state.json"),  # an empty folder
        ({"weights": False}, "no model/adapter weights"),
    ],
)
def test_resume_falls_back_to_the_newest_complete_checkpoint(tmp_path, capsys, newest, expect):
    _checkpoint(tmp_path, 2)
    _checkpoint(tmp_path, 4)
    _checkpoint(tmp_path, 6, **newest)
    chosen = prepare_output_dir(tmp_path, resume=True, overwrite=False, prog="t")
    assert chosen == tmp_path / "checkpoint-4"
    out = capsys.readouterr().out
    assert "skipping checkpoint-6" in out and expect in out and "continuing from checkpoint-4" in out


def test_resume_without_a_complete_checkpoint_is_refused(tmp_path):
    _checkpoint(tmp_path, 3, state=False)
    with pytest.raises(RunGuardError, match=r"no complete checkpoint.*checkpoint-3"):
        prepare_output_dir(tmp_path, resume=True, overwrite=False, prog="t")
    assert resume_checkpoint(tmp_path / "missing") == (None, [])


def test_checkpoints_sort_by_step_not_by_name(tmp_path):
    _checkpoint(tmp_path, 9)
    _checkpoint(tmp_path, 10)
    assert resume_checkpoint(tmp_path)[0].name == "checkpoint-10"


@pytest.mark.parametrize("leftover", ["checkpoint-5", "run_manifest.json"])
def test_an_output_dir_holding_a_run_is_refused_without_resume_or_overwrite(tmp_path, leftover):
    if leftover.startswith("checkpoint"):
        _checkpoint(tmp_path, 5)
    else:
        (tmp_path / leftover).write_text("{}")
    with pytest.raises(RunGuardError, match="already holds a run.*--resume.*--overwrite"):
        prepare_output_dir(tmp_path, resume=False, overwrite=False, prog="t")
    # overwrite clears the earlier run's checkpoints and records, so nothing of it leaks in
    (tmp_path / "unrelated.txt").write_text("kept")
    assert prepare_output_dir(tmp_path, resume=False, overwrite=True, prog="t") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["unrelated.txt"]
    with pytest.raises(RunGuardError, match="contradict"):
        prepare_output_dir(tmp_path, resume=True, overwrite=True, prog="t")


def test_a_fresh_output_dir_is_free(tmp_path):
    (tmp_path / "sample_pairs").mkdir()  # what the sample pairs spec writes there is not a run
    # nor is the identity of a start that failed before its first checkpoint
    (tmp_path / "run_identity.json").write_text("{}")
    assert prepare_output_dir(tmp_path, resume=False, overwrite=False, prog="t") is None


@pytest.mark.parametrize(
    "change, named",
    [
        ({"fingerprint": "other-data"}, "data fingerprint"),
        ({"settings": {"learning_rate": 1e-4}}, "learning_rate"),
        ({"settings": {"beta": 0.5}}, "beta"),
    ],
)
def test_resume_on_other_data_or_settings_is_refused(tmp_path, change, named):
    resolved = {"learning_rate": 5e-6, "beta": 0.1, "max_steps": 10, "output_dir": str(tmp_path)}
    check_identity(tmp_path, identity(resolved, "data-1"), resume=False)  # the run starts: recorded
    # the same run, longer and logging differently: allowed
    check_identity(tmp_path, identity({**resolved, "max_steps": 20, "logging_steps": 1}, "data-1"), resume=True)
    changed = identity({**resolved, **change.get("settings", {})}, change.get("fingerprint", "data-1"))
    with pytest.raises(RunGuardError, match=f"other data or settings.*{named}"):
        check_identity(tmp_path, changed, resume=True)


@pytest.mark.parametrize("content", ["[1, 2]", '{"data_fingerprint": "d", "settings": [1]}', "[" * 100000])
def test_resume_with_an_identity_file_of_another_shape_is_refused_by_name(tmp_path, content):
    (tmp_path / "run_identity.json").write_text(content)  # AttributeError / RecursionError escaped before
    with pytest.raises(RunGuardError, match="run_identity.json: (expected an object|unreadable)"):
        check_identity(tmp_path, identity({"beta": 0.1}, "d"), resume=True)


def test_dpo_entry_refuses_an_output_dir_holding_a_run(tmp_path, capsys):
    from pathlib import Path

    from ifpo.train.dpo import main

    recipe = Path(__file__).resolve().parent.parent / "recipes" / "tiny.yaml"
    (tmp_path / "run_manifest.json").write_text("{}")
    rc = main([str(recipe), "--output_dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "already holds a run" in err and "Traceback" not in err
    # resume with only an interrupted save: the fallback finds nothing complete, one line, exit 2
    _checkpoint(tmp_path, 1, state=False)
    rc = main([str(recipe), "--output_dir", str(tmp_path), "--resume"])
    err = capsys.readouterr().err
    assert rc == 2 and "no complete checkpoint" in err and "Traceback" not in err
