"""The docs stay true: every path, module, name and ``ifpo`` command they mention exists, every
in-code pointer into docs/ lands on a real file and section, and nothing points outside the repo.

Checked documents: ``docs/*.md`` and ``README.md``. What counts as a mention:

- a repository path: a token starting with a top-level folder of the repo (``verifiers/...``,
  ``train/dpo.py``, ``recipes/tiny.yaml``) or naming a top-level file; placeholders (``<family>``)
  and globs are skipped;
- a dotted name ``ifpo.<subpackage>.x[.Name[.attr]]``: the module must exist, and a trailing name must be
  defined at the top level of that module (a class's attribute in the class body);
- ``ifpo <command>`` inside code (backticks or a fenced block): a subcommand of ``ifpo/cli.py``;
- a relative Markdown link ``[text](target)``.
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

from ifpo.cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
TOP = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in
             {"build", "dist", "runs", "out", "ifpo.egg-info"})
PACKAGE_DIR = {"ifpo": "ifpo", "verifiers": "verifiers", "data_builders": "data_builders", "train": "train",
               "eval_hooks": "eval_hooks"}
PATH = re.compile(rf"(?<![\w./~$-])((?:{'|'.join(map(re.escape, TOP))})/[\w./<>*{{}}-]*|pyproject\.toml|README\.md)")
# ifpo.<subpackage>... only: README also shows tracker keys such as ifpo.lora_r
DOTTED = re.compile(r"(?<![\w.])ifpo\.(?:verifiers|data_builders|train|eval_hooks|cli)(?:\.\w+)*")
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
COMMAND = re.compile(r"(?:^|[\s`(])ifpo ([a-z][\w-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOC_REF = re.compile(r"docs/([\w-]+\.md)(?:,?\s+\(?[\"“]([^\"”'’]+))?")
# Files outside the repository that code must not point at (the design notes and papers live in docs/).
OUTSIDE = re.compile(r"\.\./shared|shared/(?:DESIGN|ANCHORS|papers)|ANCHORS\.md|(?<![\w/])papers/")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _doc_ids() -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in DOCS]


@cache
def _module_names(path: Path) -> dict[str, set[str]]:
    """Top-level names of a module, each with the names bound in its body (for classes)."""
    tree = ast.parse(_text(path))
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            body = set()
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    body.add(sub.name)
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                    body.add(sub.target.id)
                elif isinstance(sub, ast.Assign):
                    body |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
            names[node.name] = body
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        names[t.id] = set()
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = set()
    return names


def resolve_dotted(name: str) -> str | None:
    """Why ``ifpo.a.b.C`` does not exist, or None when it does."""
    parts = name.split(".")
    if len(parts) == 1:
        return None
    folder = ROOT / (PACKAGE_DIR.get(parts[1], "") if parts[1] in PACKAGE_DIR and parts[1] != "ifpo" else "ifpo")
    rest = parts[2:] if parts[1] in PACKAGE_DIR and parts[1] != "ifpo" else parts[1:]
    module: Path | None = folder / "__init__.py"
    while rest and (folder / rest[0]).is_dir() and (folder / rest[0] / "__init__.py").is_file():
        folder = folder / rest.pop(0)
        module = folder / "__init__.py"
    if rest and (folder / f"{rest[0]}.py").is_file():
        module = folder / f"{rest.pop(0)}.py"
    if not rest:
        return None
    names = _module_names(module)
    if rest[0] not in names:
        return f"{rest[0]!r} is not defined in {module.relative_to(ROOT)}"
    if len(rest) > 1 and names[rest[0]] and rest[1] not in names[rest[0]]:
        return f"{rest[1]!r} is not defined in class {rest[0]} of {module.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_named_paths_exist(doc):
    missing = set()
    for match in PATH.finditer(_text(doc)):
        token = match.group(1).rstrip(".,:;")
        if any(c in token for c in "<>*{}"):
            continue
        if not (ROOT / token).exists():
            missing.add(token)
    assert not missing, f"{doc.name} names paths that do not exist: {sorted(missing)}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_named_modules_and_names_exist(doc):
    problems = {name: why for name in set(DOTTED.findall(_text(doc))) if (why := resolve_dotted(name))}
    assert not problems, f"{doc.name} names modules or names that do not exist: {problems}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_named_ifpo_commands_exist(doc):
    if doc.name == "cli.md":
        pytest.skip("generated from the parsers' own help (tests/test_cli_docs.py); its help prose says 'ifpo item'")
    code = "\n".join(CODE.findall(_text(doc)))
    unknown = {c for c in COMMAND.findall(code) if c not in SUBCOMMANDS}
    assert not unknown, f"{doc.name} names ifpo commands that do not exist: {sorted(unknown)} (see ifpo/cli.py)"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_relative_links_resolve(doc):
    broken = []
    for target in LINK.findall(_text(doc)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (doc.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{doc.name} links to missing files: {broken}"


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                             text=True, check=True, timeout=60).stdout.split()
        files = [ROOT / f for f in out]
    except (OSError, subprocess.SubprocessError):  # not a git checkout: every file under the root
        files = [p for p in ROOT.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts]
    suffixes = {".py", ".md", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".txt"}
    return [f for f in files if f.suffix in suffixes and f.is_file()]


def test_in_code_pointers_into_docs_land():
    headings: dict[str, list[str]] = {}
    for doc in (ROOT / "docs").glob("*.md"):
        headings[doc.name] = [h.strip() for h in re.findall(r"^#+\s+(.*)$", _text(doc), re.M)]
    bad = []
    for path in _tracked_text_files():
        if "docs" in path.relative_to(ROOT).parts:
            continue
        for match in DOC_REF.finditer(_text(path)):
            name, section = match.group(1), match.group(2)
            where = f"{path.relative_to(ROOT)}: docs/{name}"
            if name not in headings:
                bad.append(f"{where} does not exist")
            elif section and not any(h.startswith(section.strip()) for h in headings[name]):
                bad.append(f"{where} has no section {section.strip()!r}")
    assert not bad, "\n".join(bad)


def test_design_notes_are_cited_inside_the_repo_only():
    bad = []
    for path in _tracked_text_files():
        rel = path.relative_to(ROOT)
        if path == Path(__file__).resolve():  # the patterns themselves
            continue
        text = _text(path)
        for match in OUTSIDE.finditer(text):
            bad.append(f"{rel}:{text.count(chr(10), 0, match.start()) + 1}: {match.group()!r}")
        if rel.parts[0] != "docs":  # inside docs/, DESIGN.md is a sibling
            for match in re.finditer(r"(?<![\w/])DESIGN\.md", text):
                bad.append(f"{rel}:{text.count(chr(10), 0, match.start()) + 1}: bare DESIGN.md (write docs/DESIGN.md)")
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad)


README_MAX_LINES = 250
# The user docs the README must link where they exist (other pages may be added; these are the reference).
README_DOCS = tuple(f"docs/{name}.md" for name in (
    "DESIGN", "adding-a-constraint-type", "cli", "guide", "exit-codes", "benchmarks", "distributed", "vllm", "rewards",
    "text", "exports", "tracking"))


def test_readme_links_the_docs():
    readme = _text(ROOT / "README.md")
    missing = [doc for doc in README_DOCS if (ROOT / doc).is_file() and f"]({doc})" not in readme]
    assert not missing, f"README.md does not link {missing}"
    unlinked = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "docs").glob("*.md"))
                if f"]({p.relative_to(ROOT).as_posix()})" not in readme and not any(
                    f"]({p.name})" in _text(d) for d in (ROOT / "docs").glob("*.md") if d != p)]
    assert not unlinked, f"docs pages reachable from no link: {unlinked}"


def test_readme_is_short():
    lines = _text(ROOT / "README.md").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}; move reference to docs/)"


# --- every command in the README works -------------------------------------------------------------

# Each command of the README's ```bash blocks, run as written in a folder that mirrors the checkout.
# Training and generation are cut short by appended overrides (the same command, fewer steps/items).
SHORTER = {
    "train/dpo.py": ["--max_steps", "2", "--max_pairs", "16", "--eval_hook.max_items", "4"],
    "train/grpo.py": ["--max_steps", "1", "--eval_hook.max_items", "4"],
}
# Not run here: the two commands are the whole suite and the main job (CI runs both); the pip lines
# install ifpo (tests/test_install.py builds and installs the wheel, tests/test_light_install.py the core).
NOT_RUN = ("bash scripts/test.sh", "bash scripts/main.sh", "pip install")
MIRRORED = ("sample", "recipes", "train", "tests", "accelerate_configs", "bench")


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", _text(ROOT / "README.md"), re.S)
    commands = []
    for block in blocks:
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def test_readme_commands_are_known_kinds():
    kinds = ("ifpo ", "accelerate launch ", *NOT_RUN)
    odd = [c for c in readme_commands() if not c.startswith(kinds)]
    assert not odd, f"README commands this test does not know how to run: {odd}"
    assert any(c.startswith("bash scripts/main.sh") for c in readme_commands())
    assert any(c.startswith("bash scripts/test.sh") for c in readme_commands())
    for script in ("scripts/main.sh", "scripts/test.sh"):
        proc = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{script}: {proc.stderr}"


@pytest.mark.slow
def test_readme_commands_run(tmp_path):
    """The quick start, in order, on the bundled sample: every command exits 0 (all input used)."""
    import os
    import sys

    for name in MIRRORED:
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "WANDB_MODE": "offline", "OMP_NUM_THREADS": "1"}
    ran = 0
    for command in readme_commands():
        if command.startswith(NOT_RUN):
            continue
        extra = next((v for k, v in SHORTER.items() if f" {k} " in f" {command} "), [])
        proc = subprocess.run(f"{command} {' '.join(extra)}", shell=True, cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, f"README command failed (exit {proc.returncode}): {command}\n{proc.stderr[-3000:]}"
        ran += 1
    assert ran >= 10


def test_the_checks_can_fail():
    # the matchers themselves: a wrong name, path, command or section is caught
    assert resolve_dotted("ifpo.verifiers.checklist.ChecklistEvaluator") is None
    assert resolve_dotted("ifpo.verifiers.checklist.NoSuchThing")
    assert resolve_dotted("ifpo.data_builders.corruptors.registry.FAMILIES") is None
    assert PATH.search("see `verifiers/nope.py`").group(1) == "verifiers/nope.py"
    assert COMMAND.findall("`ifpo build-pairs --items x`") == ["build-pairs"]
    assert DOC_REF.search('(docs/DESIGN.md, "Metrics")').groups() == ("DESIGN.md", "Metrics")
    assert OUTSIDE.search("see ../shared/DESIGN.md")
