"""Separate virtual environments for the tests that install ifpo apart from the dev venv.

The light install (no ``train`` extra) and the RL engines (verl, OpenRLHF, ms-swift) pin packages that
conflict with the dev venv's, so each gets its own venv under ``IFPO_TEST_VENVS`` (default
``~/.cache/ifpo-test-venvs``), keyed by what went into it and reused while that stays the same. A reused
venv gets the current checkout's ifpo again when the checkout's files changed (``--no-deps``, seconds).
Where a package cannot be installed (no registry, no wheel for this platform) the calling test is skipped
with pip's last lines.

ifpo is installed from a copy of the checkout's files (``git ls-files``: tracked and untracked-but-not-
ignored), so the build never writes into the shared working tree, and with ``CC=/bin/false``: the
compiled modules are optional (pyproject's ``ext-modules``), and a light install must not need them.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def venv_root() -> Path:
    return Path(os.environ.get("IFPO_TEST_VENVS") or Path.home() / ".cache" / "ifpo-test-venvs")


def _pip(python: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "CC": "/bin/false", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def checkout_copy(dest: Path) -> Path:
    """The checkout's files (what ``pip install <repo>`` would see, without build outputs) under ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file() or src.suffix in (".so", ".c") and src.parent.name == "verifiers":
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    _drop_missing_extensions(dest / "pyproject.toml")
    return dest


def _drop_missing_extensions(pyproject: Path) -> None:
    """Leave out of the copy's pyproject an ``ext-modules`` line whose source file is not in the checkout (the
    compiled modules are optional and being removed; setuptools refuses a missing source even then)."""
    import re

    lines = pyproject.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not (m := re.search(r'sources = \["([^"]+)"\]', line))
            or (pyproject.parent / m.group(1)).is_file()]
    pyproject.write_text("".join(kept), encoding="utf-8")


# Engine venvs hold torch with its CUDA libraries (about 6 GB, 10-15 minutes to build on 2 busy cores): a test run
# builds them only when asked (IFPO_BUILD_ENGINE_VENVS=1, or `python tests/test_engines.py`), and otherwise reuses
# them where present or skips, saying so. The light venv (no torch, ~650 MB, ~2.5 minutes) is always built.
BUILD_ENV = "IFPO_BUILD_ENGINE_VENVS"


def ifpo_venv(name: str, packages: tuple[str, ...] = (), no_deps: tuple[str, ...] = (), *, heavy: bool = False) -> Path:
    """A venv with the light ifpo (no extra) plus ``packages`` (resolved) and ``no_deps`` (``--no-deps``);
    returns its python. Skips the test where pip cannot install them, or where a ``heavy`` venv is absent and
    building it was not asked for."""
    # keyed by what is installed, not by the whole pyproject (an edit elsewhere in it must not rebuild torch-sized
    # venvs): the core dependencies, the engine's packages, the Python version
    import tomllib

    core = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    key = hashlib.sha256(repr((sorted(core), packages, no_deps, sys.version_info[:2])).encode()).hexdigest()[:10]
    venv = venv_root() / f"{name}-{key}"
    python = venv / "bin" / "python"
    ready, installed = venv / ".ready", venv / ".ifpo-source"
    if heavy and not ready.exists() and os.environ.get(BUILD_ENV) != "1":
        pytest.skip(f"the {name} venv ({venv}) is not built: it holds torch and its CUDA libraries (about "
                    f"6 GB, 10-15 minutes); build it with {BUILD_ENV}=1 or `python tests/test_engines.py`")
    venv.parent.mkdir(parents=True, exist_ok=True)
    # One test process at a time builds or updates a venv: the suite runs files in parallel (pytest-xdist), and two
    # files share the ms-swift venv. ifpo is reinstalled only when the checkout's files changed, so a test using the
    # venv in one worker never sees another worker reinstall ifpo under it.
    with (venv.parent / f"{venv.name}.lock").open("w") as lock, tempfile.TemporaryDirectory() as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        repo = checkout_copy(Path(tmp) / "ifpo")
        source = _tree_digest(repo)
        if not ready.exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            # setuptools in the venv, so a reused venv reinstalls ifpo without build isolation
            steps = [("setuptools>=74.1", "wheel"), (str(repo), *packages)]
            if no_deps:
                steps.append(("--no-deps", *no_deps))
            for args in steps:
                done = _pip(python, *args)
                if done.returncode != 0:
                    pytest.skip(f"pip install {' '.join(args)} failed in {venv}: {done.stderr.strip()[-600:]}")
            ready.touch()
        elif not installed.is_file() or installed.read_text() != source:
            done = _pip(python, "--no-deps", "--force-reinstall", "--no-build-isolation", str(repo))
            if done.returncode != 0:
                pytest.fail(f"reinstalling ifpo into {venv} failed: {done.stderr.strip()[-600:]}")
        installed.write_text(source)
    return python


def _tree_digest(root: Path) -> str:
    """sha256 over the relative paths and bytes of every file under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run(python: Path, *args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    """``python *args`` in that venv, nothing of the dev venv on its path."""
    env = {**os.environ, **kwargs.pop("env", {})}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    # not the checkout: `python -c` / `-m` put the working directory first on sys.path
    kwargs.setdefault("cwd", tempfile.gettempdir())
    return subprocess.run([str(python), *args], capture_output=True, text=True, env=env, timeout=timeout, **kwargs)
