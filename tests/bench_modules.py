"""The ``bench/`` scripts as modules, for tests that reuse their generators and shapes.

``bench/`` is not a package (its scripts run by path), so each is loaded from its file, once.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


@cache
def load(name: str) -> ModuleType:
    """``bench/<name>.py`` as a module, e.g. ``load("efficacy")``."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
