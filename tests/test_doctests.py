"""The examples in the docstrings run as written, in every module of ``toolkit/``.

The modules are found by walking the package, so a new module's examples run without
being listed anywhere. The one module left out is skipped by a rule, not by name: a
``__main__`` module runs the command line when imported. A notebook panel's view-model
(found by the same walk) must also show itself in examples.
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
    assert {"toolkit.errors", "toolkit.cli", "toolkit.core.values.types"} <= set(MODULES)
    assert any(m.startswith("toolkit.notebook.") for m in MODULES)
    assert any(m.startswith("toolkit.spark.") for m in MODULES)
    assert "toolkit.__main__" not in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def is_panel_model(name: str) -> bool:
    """A notebook panel's view-model: ``toolkit.notebook.<panel>_model``, or the ``model``
    module of a panel's own folder."""
    parts = name.split(".")
    return parts[:2] == ["toolkit", "notebook"] and (
        parts[-1] == "model" or parts[-1].endswith("_model")
    )


PANEL_MODELS = [m for m in MODULES if is_panel_model(m)]


def test_the_panel_models_are_found() -> None:
    """The rule finds the six panels' models (a test of the test)."""
    assert len(PANEL_MODELS) >= 6, PANEL_MODELS


@pytest.mark.parametrize("name", PANEL_MODELS)
def test_every_panel_model_has_examples_that_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
