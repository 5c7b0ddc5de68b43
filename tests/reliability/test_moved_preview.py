"""A plan previewed in the notebook against a table that moved since (issue #6, RULES 6):
"Approve and commit" refuses it with a message that says what changed, applies nothing,
and "Preview again" plans against the table as it is now; that plan commits.

Real catalog, real Spark: the panel's default commit is ``toolkit.ingest`` held to the
previewed plan and table state; "another writer" is a plain ``ingest`` in between.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

from toolkit.core.evolution.state import TableState
from toolkit.notebook import PreviewPanel, preview
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def ids(spark: SparkSession, lakehouse: Catalog, table: str) -> list[int]:
    return sorted(r.id for r in spark.table(f"{lakehouse.name}.{table}").select("id").collect())


def state(lakehouse: Catalog, table: str) -> TableState:
    return TableState.of(lakehouse.load_table(table))


def refused(panel: PreviewPanel, lakehouse: Catalog, table: str) -> str:
    """Click "Approve and commit" on a stale preview; check nothing was applied and only
    "Preview again" is offered; return the outcome's message."""
    before = state(lakehouse, table)
    panel.approve_button.click()
    outcome = panel.outcome
    assert outcome is not None and outcome.kind == "stale", panel.message.value
    assert not outcome.ok and outcome.error_type == "StalePlanError"
    assert "The table changed since this preview: " in panel.message.value
    assert "Nothing was applied. Preview again" in panel.message.value
    assert state(lakehouse, table) == before  # nothing applied
    assert panel.approve_button.disabled  # a stale plan is never retried as is
    assert panel.preview_again_button.layout.display == ""
    return outcome.message


def test_schema_and_data_moved(lakehouse: Catalog, spark: SparkSession) -> None:
    table = "moved_preview.schema"
    ingest([{"id": 1, "n": 1}], table, lakehouse, spark, batch_id="day-1")
    panel = preview([{"id": 2, "n": "two"}], table, lakehouse, spark=spark, batch_id="day-2")
    planned = panel.preview.state
    assert [c.name for c in panel.model.new_columns] == ["n_string"]

    # another writer adds a column and rows meanwhile
    ingest([{"id": 3, "n": 3, "extra": True}], table, lakehouse, spark, batch_id="other")
    moved = state(lakehouse, table)
    assert moved.schema_id != planned.schema_id

    message = refused(panel, lakehouse, table)
    assert f"its schema changed (schema id {planned.schema_id} -> {moved.schema_id})" in message
    assert f"new data was committed (snapshot {planned.snapshot_id} -> {moved.snapshot_id})" in (
        message
    )
    assert ids(spark, lakehouse, table) == [1, 3]

    panel.preview_again_button.click()
    assert panel.outcome is None and panel.preview.state == moved
    assert "extra" in [n.name for root in panel.model.before for n in root.walk()]
    assert [c.name for c in panel.model.new_columns] == ["n_string"]
    assert not panel.approve_button.disabled

    panel.approve_button.click()
    outcome = panel.outcome
    assert outcome is not None and outcome.kind == "committed", panel.message.value
    assert outcome.rows_written == 1 and outcome.columns_added == ("n_string",)
    assert ids(spark, lakehouse, table) == [1, 2, 3]  # every row once


def test_only_data_moved(lakehouse: Catalog, spark: SparkSession) -> None:
    table = "moved_preview.data"
    ingest([{"id": 1, "n": 1}], table, lakehouse, spark, batch_id="day-1")
    panel = preview([{"id": 2, "n": 2.5}], table, lakehouse, spark=spark, batch_id="day-2")
    planned = panel.preview.state
    ingest([{"id": 3, "n": 3}], table, lakehouse, spark, batch_id="other")  # same schema
    moved = state(lakehouse, table)
    assert moved.schema_id == planned.schema_id

    message = refused(panel, lakehouse, table)
    assert "schema" not in message.split(":")[1].split(".")[0]  # only the data moved
    assert f"new data was committed (snapshot {planned.snapshot_id} -> {moved.snapshot_id})" in (
        message
    )

    panel.preview_again_button.click()
    panel.approve_button.click()
    assert panel.outcome is not None and panel.outcome.kind == "committed"
    assert ids(spark, lakehouse, table) == [1, 2, 3]


def test_table_created_since_a_preview_of_a_new_table(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "moved_preview.created"
    records: list[dict[str, Any]] = [{"id": 2, "n": "two"}]
    panel = preview(records, table, lakehouse, spark=spark, batch_id="mine")
    assert panel.model.new_table
    ingest([{"id": 1, "n": 1}], table, lakehouse, spark, batch_id="other")  # got there first

    message = refused(panel, lakehouse, table)
    assert "The table changed since this preview: another writer created it." in message

    panel.preview_again_button.click()
    assert not panel.model.new_table
    assert [c.name for c in panel.model.new_columns] == ["n_string"]
    panel.approve_button.click()
    assert panel.outcome is not None and panel.outcome.kind == "committed"
    assert ids(spark, lakehouse, table) == [1, 2]
