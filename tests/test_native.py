"""verifiers/_native.py: when an optional compiled module is used, and when its Python form runs."""

from __future__ import annotations

import pytest
from ifpo.verifiers import _punkt, _sbd, _treebank
from ifpo.verifiers._native import compiled_module

# each compiled module and the interface its caller speaks
INTERFACES = {"_punkt_scan": _punkt._SCAN_INTERFACE, "_sbd_scan": _sbd._READER_INTERFACE,
              "_treebank_scan": _treebank._PADDER_INTERFACE}
BUILT = [name for name, interface in INTERFACES.items() if compiled_module(name, interface) is not None]


@pytest.mark.parametrize("name", BUILT or [pytest.param("-", marks=pytest.mark.skip("no compiled module built"))])
def test_a_module_is_used_only_at_its_interface_and_unless_the_environment_says_no(name, monkeypatch):
    module = compiled_module(name, INTERFACES[name])
    assert module is not None and module.__name__ == f"ifpo.verifiers.{name}"
    assert compiled_module(name, module.INTERFACE + 1) is None  # a stale build
    assert compiled_module(name, module.INTERFACE, "IFPO_TEST_PURE") is module
    for value, used in [("1", False), ("yes", False), ("0", True), ("", True)]:
        monkeypatch.setenv("IFPO_TEST_PURE", value)
        assert (compiled_module(name, module.INTERFACE, "IFPO_TEST_PURE") is module) is used, value


def test_a_module_that_is_not_built_is_none():
    assert compiled_module("_no_such_scan", 1) is None
