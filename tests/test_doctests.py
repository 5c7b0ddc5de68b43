"""The examples in the public docstrings run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import toolkit.cli
import toolkit.core

MODULES = [
    "toolkit",
    "toolkit.errors",
    "toolkit.api",
    "toolkit.iceberg.schema",
    "toolkit.iceberg.duckdb",
    "toolkit.iceberg.commit",
    "toolkit.iceberg.lineage",
    "toolkit.iceberg.quarantine",
    "toolkit.iceberg.views",
    "toolkit.pipeline.replay",
    "toolkit.notebook.common",
    "toolkit.notebook.schema_tree",
    "toolkit.pipeline.sources",
    "toolkit.pipeline.files",
    "toolkit.pipeline.reviewed",
    "toolkit.arrow",
    "toolkit.ops",
    "toolkit.iceberg.ledger",
    "toolkit.iceberg.catalog",
    "toolkit.spark.cluster",
    "toolkit.spark.session",
    "toolkit.spark.maintenance",
    "toolkit.spark.logs",
    "toolkit.spark.progress",
    "toolkit.spark.tally",
    "toolkit.spark.router",
    "toolkit.notebook.progress",
    "toolkit.notebook.paging",
    "toolkit.iceberg.statistics",
    "toolkit.cli",
    *(f"toolkit.cli.{m.name}" for m in pkgutil.iter_modules(toolkit.cli.__path__)),
    "toolkit.core.values.jsonlines",
    *(m.name for m in pkgutil.walk_packages(toolkit.core.__path__, "toolkit.core.")),
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
