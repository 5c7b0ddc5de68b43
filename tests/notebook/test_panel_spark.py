"""The preview panel with the real engine: approve commits through Spark and PyIceberg."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

from tests.notebook.panel_tables import DATA
from toolkit.notebook import explore, preview

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_preview_approve_and_commit_the_sample_days(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    table = "notebook_ui.events"
    day1 = preview(str(DATA / "sample_day1.jsonl"), table, lakehouse, spark=spark, sample=3)
    assert day1.model.new_table
    day1.approve_button.click()
    assert day1.outcome is not None and day1.outcome.kind == "committed", day1.message.value
    assert day1.outcome.rows_written == 20

    day2 = preview(str(DATA / "sample_day2.jsonl"), table, lakehouse, spark=spark, sample=3)
    before = lakehouse.load_table(table).schema()
    assert [c.name for c in day2.model.new_columns] == [
        "device.os_version", "my_field_string", "size_double", "started_long",
    ]
    day2.approve_button.click()

    outcome = day2.outcome
    assert outcome is not None and outcome.kind == "committed", day2.message.value
    # the table's schema changed exactly as previewed, with the previewed field IDs
    now = lakehouse.load_table(table)
    assert now.schema().schema_id != before.schema_id
    after = {n.full_name: n.field_id for root in day2.model.after for n in root.walk()}
    for name, field_id in after.items():
        assert now.schema().find_field(name).field_id == field_id, name
    assert now.schema().find_field("my_field_string").doc == "upsolver_evolved_from:my_field"
    # the panel reports the snapshot and the rows written, then the table's statistics
    snapshot = now.current_snapshot()
    assert snapshot is not None and outcome.snapshot_id == snapshot.snapshot_id
    assert outcome.rows_written == 20 and outcome.batch_id == day2.model.batch_id
    assert f"Committed snapshot {snapshot.snapshot_id} to {table}: 20 rows written" in (
        day2.message.value
    )
    assert day2.statistics_panel is not None
    stats = day2.statistics_panel.base
    # batches labelled by commit time and a short id (the preview made the ids up)
    assert stats.records == 40 and len(stats.batches) == 2
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d \([0-9a-f]{4}\)", b)
               for b in stats.batches), stats.batches
    assert stats.field("my_field").columns == ("my_field", "my_field_string")
    # what arrived, not what each column was written (RULES 3.1 routes day 2's ten longs
    # to my_field_string as well): 30 longs and 10 texts in 40 records, shares summing to 1
    mine = stats.field("my_field")
    assert [(t.label, t.count) for t in mine.types] == [("long", 30), ("string", 10)]
    assert sum(t.share for t in mine.types) == pytest.approx(1.0)
    assert [b.counts for b in mine.by_batch] == [
        (("long", 20), ("string", 0)), (("long", 10), ("string", 10))]

    # approving the same data again writes nothing twice (same batch id)
    again = preview(str(DATA / "sample_day2.jsonl"), table, lakehouse, spark=spark).approve()
    assert again.kind == "skipped" and again.batch_id == outcome.batch_id
    assert lakehouse.load_table(table).current_snapshot() == snapshot

    # explore profiles a Spark DataFrame (or a path, given spark=) in Spark's workers
    day3 = explore(spark.read.text(str(DATA / "sample_day3.jsonl")), batch=2)
    assert day3.base.records == 20 and day3.base.batches == ("2",)
    # RULES 3.2: a first batch with records and arrays of records: the array takes "device"
    assert day3.base.field("device").columns == ("device", "device_record")
    by_path = explore(str(DATA / "sample_day3.jsonl"), spark=spark, batch=2).base
    local = explore(str(DATA / "sample_day3.jsonl"), batch=2).base  # the same, without Spark
    assert by_path.rows == local.rows == day3.base.rows
