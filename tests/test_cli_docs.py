"""docs/cli.md is the commands' own --help: regenerate it in-process and compare (a stale page fails).

The fix for a failure is `python scripts/gen_cli_docs.py` (then commit docs/cli.md with the change of
options or help text that made it stale).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current(monkeypatch):
    gen = _generator()
    monkeypatch.setenv("COLUMNS", gen.WIDTH)  # render() sets it; monkeypatch restores the caller's afterwards
    want = gen.render()
    have = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert have == want, "docs/cli.md is stale: run python scripts/gen_cli_docs.py"


def test_cli_reference_covers_every_command():
    from ifpo.cli import SUBCOMMANDS

    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in SUBCOMMANDS if f"## `ifpo {name}`" not in page]
    assert not missing, f"docs/cli.md lacks {missing}: run python scripts/gen_cli_docs.py"
    assert "## `train/dpo.py`" in page and "## `train/grpo.py`" in page
