"""One embedded catalog and one Spark session (local[2]) for the whole test run, shared by
every folder (a conftest per folder would start a second pair of session fixtures)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

from tests import servers
from toolkit.iceberg import catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def lakehouse(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """An embedded catalog (SQLite + local warehouse) in a temporary folder."""
    return catalog(tmp_path_factory.mktemp("lakehouse"))


#: the code cache of the run's one Spark session (see :func:`spark`)
LONG_RUN_CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"


@pytest.fixture(scope="session")
def spark(lakehouse: Catalog) -> Iterator[SparkSession]:
    """A Spark session that sees `lakehouse` under the same catalog name."""
    from tests.reliability.children import SHORT_LIVED_JVM
    from toolkit.spark import spark_session

    # the quick compiler only, as the tests' child processes: the run's jobs are many and
    # small, and the optimising compiler's work on them never paid back (tests/spark/
    # test_router.py and tests/integration/test_{ingest,stream}.py: 143 s with it, 120 s
    # without); what runs is the same code either way. The quick compiler alone gets a
    # code cache of 48 MB, which the run's thousands of generated classes filled a third
    # of the way through once ("CodeCache is full", then "Out of space in CodeCache for
    # adapters": a VirtualMachineError, which ends the JVM): this one session lives for the
    # whole run, so it gets the optimising compiler's default size
    java = f"{SHORT_LIVED_JVM} {LONG_RUN_CODE_CACHE}"
    session = spark_session(lakehouse, **{"spark.master": "local[2]",
                                          "spark.driver.defaultJavaOptions": java})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[servers.KafkaBroker]:
    """A Kafka-compatible broker (tansu) on 127.0.0.1, started on first use, stopped at the
    end of the run: `.bootstrap`, `.url(topic)`, `.produce(topic, values)`."""
    with servers.kafka_broker() as broker:
        yield broker

