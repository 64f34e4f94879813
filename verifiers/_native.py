"""Loading the optional compiled modules of the text checkers (``verifiers/*.pyx``).

Each one (the Punkt candidate loop, the sentence reading, the Treebank padding) is built by
``pip install`` where a C compiler is found, and has a Python form that gives the same results,
slower. A module is used only where it is built from the interface its caller speaks (a stale
build in a source checkout is not used), and not where an environment variable asks for the
Python form (for comparisons).
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def compiled_module(name: str, interface: int, pure_env: str | None = None) -> Any:
    """The module ``ifpo.verifiers.<name>``, or None where it is not built (a source checkout without
    an install, no C compiler at install), where its ``INTERFACE`` is not ``interface``, or where
    the environment sets ``pure_env`` (to anything but "" or "0")."""
    if pure_env is not None and os.environ.get(pure_env, "") not in ("", "0"):
        return None
    try:
        module = importlib.import_module(f"ifpo.verifiers.{name}")
    except ImportError:
        return None
    return module if getattr(module, "INTERFACE", None) == interface else None
