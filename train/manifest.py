"""The run manifest written beside a trained adapter: what ran, on what code, data and packages."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any

PACKAGES = ("torch", "torchvision", "transformers", "trl", "peft", "accelerate", "datasets", "av", "qwen-vl-utils",
            "deepspeed", "wandb", "ifpo")
REPO_ROOT = Path(__file__).resolve().parent.parent


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a run depends on (``None`` when absent)."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_state(repo: Path = REPO_ROOT) -> dict[str, Any]:
    """Commit and whether tracked files differ from it (read-only git calls; nothing when git is absent)."""

    def run(*cmd: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(repo), *cmd], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = run("rev-parse", "HEAD")
    dirty = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if dirty is None else bool(dirty)}


def run_manifest(*, recipe, pairs, dropped, lengths, ref_cache, metrics, world_size, interrupted, elapsed,
                 distributed: dict | None = None) -> dict:
    """Everything needed to tell two runs apart or reproduce one."""
    return {
        "entry": "train/dpo.py",
        "recipe": str(recipe.path),
        "model": recipe.ifpo.model_name_or_path,
        "git": git_state(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "world_size": world_size,
        # The backend the accelerator really ran (DDP, FSDP, DeepSpeed stage, offload): a launch config that fell
        # back to DDP shows here (train/distributed.py, describe).
        "distributed": distributed,
        "data": {
            "source": pairs.source,
            "fingerprint": pairs.fingerprint,
            "pairs": len(pairs.dataset),
            "dropped_over_max_length": dropped,
            "left_out_undecodable_media": list(getattr(pairs, "left_out", [])),
            "lengths": lengths,
        },
        "reference_log_probs_cache": None if ref_cache is None else str(ref_cache),
        "interrupted": interrupted,
        "metrics": metrics,
        "elapsed_s": round(elapsed, 1),
    }
