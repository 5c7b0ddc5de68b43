"""One embedded catalog and one Spark session (local[2]) for the whole test run, shared by
every folder (a conftest per folder would start a second pair of session fixtures)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

from toolkit.iceberg import catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def lakehouse(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """An embedded catalog (SQLite + local warehouse) in a temporary folder."""
    return catalog(tmp_path_factory.mktemp("lakehouse"))


@pytest.fixture(scope="session")
def spark(lakehouse: Catalog) -> Iterator[SparkSession]:
    """A Spark session that sees `lakehouse` under the same catalog name."""
    from toolkit.spark import spark_session

    session = spark_session(lakehouse, **{"spark.master": "local[2]"})
    yield session
    session.stop()
