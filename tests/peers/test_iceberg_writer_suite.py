"""Iceberg's tests of Spark write-time schema merging (``TestDataFrameWriterV2``,
``TestDataFrameWriterV2Coercion``), run as the project's tests (tests/peers/
cases_iceberg_writer.py).

Every case makes its table with Spark SQL in the test catalog, as Iceberg's test does,
then gives the same typed DataFrames to ``toolkit.simulate`` (with the table's schema) and
to ``toolkit.ingest`` batch by batch: the schema (IDs, names, types, docs, order), the rows
Spark reads back and the records set aside are what the case expects, and ingest is the
simulation. A case marked as a deliberate difference is listed, with Iceberg's behaviour
and the RULES reason, in docs/rules.md.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_spark
from tests.peers.cases_iceberg_writer import CASES, ICEBERG_TESTS, WriterCase
from tests.peers.differences import WRITER_DIFFERENCES, docs_rows, documented_rows
from tests.peers.model import (
    Refusal,
    assert_ids_cite_their_tests,
    assert_schema,
    check_refusal,
    shown_rows,
)
from toolkit.errors import ToolkitError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SECTION = "### Spark write-time schema merging"
_tables = itertools.count()


def _session(spark: SparkSession, case: WriterCase) -> SparkSession:
    """A session of the shared Spark context with the case's own settings, as Iceberg's
    test clones its session, so they never leak into other tests."""
    own = spark.newSession()
    for key, value in case.conf.items():
        own.conf.set(key, value)
    return own


def _table_rows(spark: SparkSession, lakehouse: Catalog, name: str) -> list[dict[str, object]]:
    spark.catalog.refreshTable(f"{lakehouse.name}.{name}")
    return read_spark(spark, f"{lakehouse.name}.{name}")


@pytest.mark.spark
@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_ingest_equals_simulate(
    case: WriterCase, spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    session = _session(spark, case)
    name = f"writer.t{next(_tables)}"
    session.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.writer")
    start = None
    if case.create is not None:
        session.sql(f"CREATE TABLE {lakehouse.name}.{name} ({case.create}) USING iceberg")
        start = lakehouse.load_table(name).schema()
    batches = case.sources(session, tmp_path)

    if isinstance(case.expect, Refusal):
        with pytest.raises(ToolkitError) as info:
            toolkit.simulate(batches, start, **case.options).rows  # noqa: B018 - runs it
        check_refusal(info.value, case.expect)
        *before, last = batches
        for i, batch in enumerate(before):
            toolkit.ingest(batch, name, lakehouse, session, batch_id=f"b{i}", **case.options)
        landed = lakehouse.load_table(name).schema()
        with pytest.raises(ToolkitError) as info:
            toolkit.ingest(last, name, lakehouse, session, batch_id="last", **case.options)
        check_refusal(info.value, case.expect)
        assert_schema(lakehouse.load_table(name).schema(), landed, "table after the refusal")
        assert _table_rows(session, lakehouse, name) == canonical(list(case.rows))
        return

    sim = toolkit.simulate(batches, start, **case.options)
    assert_schema(sim.schema, case.expect, "simulate")
    assert shown_rows(sim.rows) == list(case.rows)
    assert [(q.reason, q.field) for q in sim.quarantined] == list(case.aside)

    reports = [toolkit.ingest(batch, name, lakehouse, session, batch_id=f"b{i}", **case.options)
               for i, batch in enumerate(batches)]
    assert_schema(lakehouse.load_table(name).schema(), case.expect, "table")
    assert _table_rows(session, lakehouse, name) == canonical(sim.rows)
    assert sum(r.quarantined for r in reports) == len(case.aside)


def test_every_iceberg_test_is_cited() -> None:
    cited = {cite for c in CASES for cite in c.cites}
    assert cited == set(ICEBERG_TESTS)


def test_case_ids_are_unique_and_cite_their_test() -> None:
    assert_ids_cite_their_tests(CASES)


def test_the_deliberate_differences_are_the_cases_marked_so() -> None:
    assert {c.id for c in CASES if c.differs} == set(WRITER_DIFFERENCES)


def test_docs_list_every_deliberate_difference() -> None:
    assert documented_rows(SECTION) == docs_rows(WRITER_DIFFERENCES)
