"""The examples in the docstrings run as written, in every module of ``toolkit/``.

The modules are found by walking the package, so a new module's examples run without
being listed anywhere. The one module left out is skipped by a rule, not by name: a
``__main__`` module runs the command line when imported.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import toolkit


def runs_when_imported(name: str) -> bool:
    """``python -m`` entry points do their work on import: nothing to doctest."""
    return name.rsplit(".", 1)[-1] == "__main__"


MODULES = [
    "toolkit",
    *(
        m.name
        for m in pkgutil.walk_packages(toolkit.__path__, "toolkit.")
        if not runs_when_imported(m.name)
    ),
]


def test_every_module_is_collected() -> None:
    """The walk reaches every subpackage's modules (a test of the test)."""
    assert {"toolkit.errors", "toolkit.cli", "toolkit.core.types"} <= set(MODULES)
    assert any(m.startswith("toolkit.notebook.") for m in MODULES)
    assert any(m.startswith("toolkit.spark.") for m in MODULES)
    assert "toolkit.__main__" not in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
