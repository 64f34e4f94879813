"""The installed distribution: one import namespace (``ifpo``), nothing else at the top level.

The repository keeps its top-level ``verifiers/``, ``train/``, ... folders; pyproject's
``package-dir`` installs them as ``ifpo.verifiers``, ``ifpo.train``, ... (docs/DESIGN.md,
"Layout"). The slow test builds a real wheel, installs it non-editable into a fresh venv and runs
the suite's imports from there; the fast tests check pyproject against the folders on disk, so a
new subpackage cannot be left out of the wheel.

The fresh venv gets its dependencies from this venv's site-packages through ``PYTHONPATH``:
``.pth`` files are only processed in site directories, so the editable install's finder stays
out and every ``ifpo`` module must come from the wheel (the test checks each ``__file__``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
PACKAGE_DIR: dict[str, str] = SETUPTOOLS["package-dir"]
PACKAGES: list[str] = SETUPTOOLS["packages"]
# Names other projects own: none may be importable from the wheel, nor imported by ifpo.
FOREIGN = ("verifiers", "train", "data_builders", "eval_hooks")
SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".ruff_cache"}


def _package_folders() -> dict[str, Path]:
    """Dotted package name -> folder, for every folder with an ``__init__.py`` under a mapped root."""
    found: dict[str, Path] = {}
    for pkg, rel in PACKAGE_DIR.items():
        root = ROOT / rel
        for init in sorted(root.rglob("__init__.py")):
            parts = init.parent.relative_to(root).parts
            if any(p in SKIP_DIRS or p.startswith(".") for p in parts):
                continue
            # a folder nested in another mapped root (none today) is that root's package
            name = ".".join((pkg, *parts)) if parts else pkg
            found.setdefault(name, init.parent)
    return found


def test_every_package_folder_is_listed_in_pyproject():
    folders = _package_folders()
    missing = sorted(set(folders) - set(PACKAGES))
    assert not missing, (
        f"package folders not in pyproject.toml [tool.setuptools] packages (the wheel would lack them): "
        f"{', '.join(f'{n} ({folders[n].relative_to(ROOT)})' for n in missing)}"
    )
    stale = sorted(set(PACKAGES) - set(folders))
    assert not stale, f"pyproject.toml lists packages with no folder/__init__.py: {', '.join(stale)}"


def test_no_package_folder_outside_the_mapped_roots():
    mapped = {(ROOT / rel).resolve() for rel in PACKAGE_DIR.values()}
    stray = []
    for child in sorted(ROOT.iterdir()):
        if child.is_dir() and child.name not in SKIP_DIRS and not child.name.startswith("."):
            if (child / "__init__.py").is_file() and child.resolve() not in mapped:
                stray.append(child.name)
    assert not stray, f"top-level packages pyproject does not install under ifpo: {stray}"


def test_package_dir_maps_every_subpackage_under_ifpo():
    assert set(PACKAGE_DIR) == {"ifpo", *(f"ifpo.{s}" for s in FOREIGN)}
    assert all(p == "ifpo" or p.startswith("ifpo.") for p in PACKAGES)


# ---------------------------------------------------------------------------------------------
# The wheel, installed

CHECK_IMPORTS = r"""
import importlib, json, pkgutil, sys
import ifpo
import ifpo.verifiers.schema, ifpo.train.recipe, ifpo.data_builders.build, ifpo.eval_hooks.core
names = sorted(m.name for m in pkgutil.walk_packages(ifpo.__path__, "ifpo."))
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:  # reported, not raised: the test names every module that fails
        failed[name] = f"{type(exc).__name__}: {exc}"
import wandb  # noqa: F401  (its weave hook reports the integrations it finds in sys.modules)
print(json.dumps({
    "files": {n: m.__file__ for n, m in sys.modules.items() if n == "ifpo" or n.startswith("ifpo.")},
    "names": names,
    "failed": failed,
    "foreign": [n for n in FOREIGN_NAMES if n in sys.modules or any(k.startswith(n + ".") for k in sys.modules)],
    "checkout_finder": any(getattr(f, "__name__", "") == "_CheckoutFinder" for f in sys.meta_path),
}))
""".replace("FOREIGN_NAMES", repr(FOREIGN))


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build a wheel from a copy of the sources (so the checkout gets no build/ folder), install it
    with ``--no-deps`` into a fresh venv; return the paths and the environment to run it in."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for rel in PACKAGE_DIR.values():
        shutil.copytree(ROOT / rel, src / rel, ignore=ignore)
    wheels = tmp / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
         cwd=tmp)
    (wheel,) = wheels.glob("ifpo-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         cwd=tmp)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).stdout.strip())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]  # the dependencies; its .pth files stay unread
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {"tmp": tmp, "src": src, "wheel": wheel, "python": python, "site": site, "env": env, "venv": venv}


@pytest.mark.slow
def test_wheel_names_only_ifpo_at_the_top_level(installed):
    with zipfile.ZipFile(installed["wheel"]) as whl:
        names = whl.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert whl.read(top_level).decode().split() == ["ifpo"]
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ifpo"}, sorted(tops)
    # every file of the copied package folders is in the wheel (a data file needs package-data)
    expected = {
        f"{pkg.replace('.', '/')}/{f.relative_to(installed['src'] / rel).as_posix()}"
        for pkg, rel in PACKAGE_DIR.items()
        for f in (installed["src"] / rel).rglob("*")
        if f.is_file() and not any(p.startswith(".") for p in f.parts)
    }
    missing = sorted(expected - set(names))
    assert not missing, f"files of the package folders missing from the wheel: {missing[:10]}"
    # pure Python: the install needs no C compiler, and one wheel serves every platform
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c", ".pyx"))]
    assert Path(installed["wheel"]).name.endswith("-py3-none-any.whl"), Path(installed["wheel"]).name


@pytest.mark.slow
def test_installed_record_and_pip_show_list_only_ifpo(installed):
    (dist_info,) = installed["site"].glob("ifpo-*.dist-info")
    assert (dist_info / "top_level.txt").read_text().split() == ["ifpo"]
    record = [line.split(",")[0] for line in (dist_info / "RECORD").read_text().splitlines() if line.strip()]
    tops = {p.split("/")[0] for p in record if not p.startswith("..")}  # ../../../bin/ifpo: the console script
    assert tops == {"ifpo", dist_info.name}, sorted(tops)
    for name in FOREIGN:
        assert not (installed["site"] / name).exists(), f"the wheel installed a top-level {name}/"
    env = {k: v for k, v in installed["env"].items() if k != "PYTHONPATH"}  # only the fresh venv's dists
    shown = _run([sys.executable, "-m", "pip", "--python", str(installed["python"]), "show", "-f", "ifpo"],
                 cwd=installed["tmp"], env=env).stdout
    files = shown.split("Files:", 1)[1].split()
    assert {f.split("/")[0] for f in files if not f.startswith("..")} == {"ifpo", dist_info.name}


@pytest.mark.slow
def test_suite_imports_from_the_wheel_and_claims_no_foreign_name(installed):
    out = _run([str(installed["python"]), "-c", CHECK_IMPORTS], cwd=installed["tmp"], env=installed["env"]).stdout
    report = json.loads(out.strip().splitlines()[-1])
    assert not report["failed"], f"modules that fail to import from the wheel: {report['failed']}"
    site = str(installed["site"])
    elsewhere = {n: f for n, f in report["files"].items() if not str(f).startswith(site)}
    assert not elsewhere, f"ifpo modules imported from outside the fresh venv: {elsewhere}"
    for name in ("ifpo.verifiers.schema", "ifpo.train.recipe", "ifpo.data_builders.build", "ifpo.eval_hooks.core",
                 "ifpo.train.dpo", "ifpo.data_builders.corruptors.registry"):
        assert name in report["names"] and name in report["files"], name
    assert not report["checkout_finder"], "the checkout finder must not be registered in an installed wheel"
    # wandb's weave hook lists "verifiers" among the integrations it looks for in sys.modules
    assert report["foreign"] == [], f"importing ifpo put foreign top-level names in sys.modules: {report['foreign']}"


@pytest.mark.slow
def test_entry_points_run_from_the_wheel(installed):
    env, cwd = installed["env"], installed["tmp"]
    assert "usage: ifpo" in _run([str(installed["venv"] / "bin" / "ifpo"), "--help"], cwd=cwd, env=env).stdout
    # `accelerate launch train/dpo.py ...` with the installed copy of the script: the launcher starts it
    # as a file with the fresh venv's interpreter, which must find ifpo in the wheel
    script = installed["site"] / "ifpo" / "train" / "dpo.py"
    launch = [str(installed["python"]), "-m", "accelerate.commands.launch", "--num_processes", "1", "--cpu",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    help_ = _run([*launch, str(script), "--help"], cwd=cwd, env=env).stdout
    assert "Settings resolve as ifpo defaults" in help_


@pytest.mark.slow
def test_dpo_script_runs_from_the_checkout(tmp_path):
    # `accelerate launch train/dpo.py recipe.yaml` from a clone: the script, run by path from anywhere
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = _run([sys.executable, str(ROOT / "train" / "dpo.py"), "--help"], cwd=tmp_path, env=env)
    assert "Settings resolve as ifpo defaults" in proc.stdout
