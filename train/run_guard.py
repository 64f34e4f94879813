"""Runs that cannot be silently mixed: output_dir ownership, resume identity, complete checkpoints.

``train/dpo.py`` and ``train/grpo.py`` call :func:`prepare_output_dir` before training:

- an ``output_dir`` that already holds a run (checkpoints, a run manifest, an identity file) is
  refused unless the recipe says ``resume: true`` (continue it) or ``overwrite: true`` (start over:
  the previous run's checkpoints and records are removed first, so nothing of it leaks into the new
  one);
- ``resume: true`` compares the new run's identity (data fingerprint and every setting that changes
  what is trained) with the one written when the run started, and refuses naming what differs;
  settings that only change how long or how verbosely it runs (``max_steps``, logging, saving) may
  change;
- the checkpoint resumed from is the newest *complete* one: a job preempted during a save leaves a
  newest ``checkpoint-N`` without ``trainer_state.json`` (the Trainer writes it last) or with a torn
  one; that folder is skipped, and the run says which and why.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

IDENTITY_FILE = "run_identity.json"
RUN_RECORDS = ("run_manifest.json", "metrics.json", IDENTITY_FILE, "log_history.jsonl", "lengths.json",
               "recipe.resolved.yaml")
# Settings that may differ on resume: how long, how often, where to report; not what is trained.
RESUME_MAY_CHANGE = frozenset({
    "resume", "overwrite", "resume_from_checkpoint", "interrupt_after_steps", "max_steps", "num_train_epochs",
    "logging_steps", "logging_dir", "logging_first_step", "logging_strategy", "save_steps", "save_strategy",
    "save_total_limit", "eval_steps", "eval_strategy", "report_to", "run_name", "output_dir", "eval_hook",
    "dataloader_num_workers", "disable_tqdm", "log_pair_ids",
})
WEIGHT_FILES = ("adapter_model.safetensors", "adapter_model.bin", "model.safetensors", "pytorch_model.bin",
                "model.safetensors.index.json", "pytorch_model.bin.index.json")
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


class RunGuardError(ValueError):
    """This output_dir / resume combination would mix runs; the message says what to do."""


def checkpoints(output_dir: str | Path) -> list[Path]:
    """``checkpoint-N`` folders of ``output_dir``, oldest first."""
    out = Path(output_dir)
    if not out.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in out.iterdir() if p.is_dir() and (m := _CHECKPOINT.match(p.name))]
    return [p for _, p in sorted(found)]


def checkpoint_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be resumed from (``None``: complete)."""
    state = folder / "trainer_state.json"
    if not state.is_file():
        return "no trainer_state.json (the save was interrupted: the Trainer writes it last)"
    try:
        data = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return f"trainer_state.json unreadable ({type(exc).__name__})"
    if not isinstance(data, dict) or "global_step" not in data:
        return "trainer_state.json has no global_step"
    if not any((folder / name).is_file() and (folder / name).stat().st_size > 0 for name in WEIGHT_FILES):
        return "no model/adapter weights"
    return None


def resume_checkpoint(output_dir: str | Path) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The newest complete checkpoint and the newer ones skipped, each with why."""
    skipped: list[tuple[Path, str]] = []
    for folder in reversed(checkpoints(output_dir)):
        problem = checkpoint_problem(folder)
        if problem is None:
            return folder, skipped
        skipped.append((folder, problem))
    return None, skipped


def holds_run(output_dir: str | Path) -> list[str]:
    """What in ``output_dir`` belongs to an earlier run (empty: free to use).

    An identity file alone is not a run: a start that failed before its first checkpoint (a model
    that did not load, an OOM) trained nothing, and a plain rerun may take the folder over.
    """
    out = Path(output_dir)
    found = [p.name for p in checkpoints(out)]
    found += [name for name in ("run_manifest.json",) if (out / name).is_file()]
    return found


def identity(resolved: Mapping[str, Any], data_fingerprint: str) -> dict[str, Any]:
    """What makes two runs the same run: the data, and every setting that changes what is trained."""
    settings = {k: v for k, v in resolved.items() if k not in RESUME_MAY_CHANGE}
    return {"data_fingerprint": data_fingerprint,
            "settings": json.loads(json.dumps(settings, sort_keys=True, default=str))}


def prepare_output_dir(output_dir: str | Path, *, resume: bool, overwrite: bool, prog: str) -> Path | None:
    """Refuse to mix runs; on resume return the checkpoint to continue from (newest complete one)."""
    out = Path(output_dir)
    if resume and overwrite:
        raise RunGuardError("resume and overwrite contradict each other: give one")
    earlier = holds_run(out)
    if overwrite:
        for folder in checkpoints(out):
            shutil.rmtree(folder)
        for name in RUN_RECORDS:
            (out / name).unlink(missing_ok=True)
        return None
    if not resume:
        if earlier:
            raise RunGuardError(
                f"{out} already holds a run ({', '.join(earlier[:4])}{', ...' if len(earlier) > 4 else ''}); "
                "use resume: true (--resume) to continue it, overwrite: true (--overwrite) to replace it, "
                "or another output_dir"
            )
        return None
    checkpoint, skipped = resume_checkpoint(out)
    for folder, why in skipped:
        print(f"{prog}: resume: skipping {folder.name}: {why}; falling back to an earlier checkpoint")
    if checkpoint is None:
        detail = f" ({len(skipped)} incomplete: {', '.join(p.name for p, _ in skipped)})" if skipped else ""
        raise RunGuardError(f"resume: no complete checkpoint-* folder in {out}{detail}")
    if skipped:
        print(f"{prog}: resume: continuing from {checkpoint.name}")
    return checkpoint


def check_identity(output_dir: str | Path, current: Mapping[str, Any], *, resume: bool) -> None:
    """On resume, refuse other data or settings than the run started with; otherwise record them."""
    from ifpo.verifiers.io import write_json_atomic

    path = Path(output_dir) / IDENTITY_FILE
    if resume and path.is_file():
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise RunGuardError(f"{path}: unreadable ({type(exc).__name__}); cannot check what the run was") from None
        if not isinstance(previous, dict) or not isinstance(previous.get("settings", {}), dict):
            # Hand-edited or written by something else: what the run was cannot be told (AttributeError before).
            raise RunGuardError(f"{path}: expected an object with data_fingerprint and settings; cannot check what "
                                "the run was (overwrite: true starts over)")
        diffs = []
        if previous.get("data_fingerprint") != current["data_fingerprint"]:
            diffs.append(f"data fingerprint {str(previous.get('data_fingerprint'))[:12]} -> "
                         f"{current['data_fingerprint'][:12]}")
        before, now = previous.get("settings", {}), current["settings"]
        for key in sorted(set(before) | set(now)):
            if before.get(key) != now.get(key):
                diffs.append(f"{key}: {before.get(key)!r} -> {now.get(key)!r}")
        if diffs:
            raise RunGuardError(
                f"resume: {Path(output_dir)} was started with other data or settings ({'; '.join(diffs[:6])}"
                f"{'; ...' if len(diffs) > 6 else ''}); a resumed run must train what it started on. "
                "Use another output_dir, or overwrite: true to start over"
            )
        return
    write_json_atomic(path, dict(current))
