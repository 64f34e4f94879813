"""ifpo: preference optimization of vision-language models on verified instruction-following data.

Subpackages: ``ifpo.verifiers``, ``ifpo.data_builders``, ``ifpo.train``, ``ifpo.eval_hooks`` (see
docs/DESIGN.md). In the repository they are the top-level folders ``verifiers/``, ``train/``, ...;
an installed wheel holds them under ``ifpo/`` (pyproject's ``package-dir``).
"""

import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

SUBPACKAGES = ("verifiers", "data_builders", "train", "eval_hooks")


class _CheckoutFinder:
    """Finds ``ifpo.<sub>`` in the checkout's top-level ``<sub>/`` folder, and only those four names.

    Installed from a wheel the subpackages sit inside ``ifpo/`` and this finder is never registered.
    In a source checkout (an editable install, or the repository root on ``sys.path`` as the entry
    scripts arrange) they are siblings of this folder; this makes the clone import exactly as the
    wheel does, without putting ``verifiers`` or ``train`` on ``sys.path`` as top-level names.
    """

    root = Path()

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        head, _, sub = fullname.partition(".")
        if head != __name__ or sub not in SUBPACKAGES:
            return None
        init = cls.root / sub / "__init__.py"
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])


_here = Path(__file__).resolve().parent
if not (_here / "verifiers").is_dir() and (_here.parent / "verifiers" / "__init__.py").is_file():
    _CheckoutFinder.root = _here.parent
    if not any(getattr(f, "__name__", "") == "_CheckoutFinder" for f in sys.meta_path):
        # First, so a second checkout (a git worktree) beats an editable install of the first one.
        sys.meta_path.insert(0, _CheckoutFinder)
