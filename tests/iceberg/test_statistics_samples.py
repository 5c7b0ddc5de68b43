"""Samples of what arrived, recorded at ingest with each batch and read back from the
table's metadata alone (issue 14): a field that drifts from long to string shows what
its texts looked like, in ``toolkit.statistics(table).samples(path)`` and in the
explorer's statistics panel."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from pyiceberg.catalog import Catalog
from pyspark.sql import SparkSession

import toolkit
from toolkit.core.batch.arrivals import Arrivals
from toolkit.iceberg.statistics import (
    EXPIRED_ARRIVALS_PROPERTY,
    SNAPSHOT_ARRIVALS_PREFIX,
    fold_arrivals,
    stale_arrivals_properties,
)
from toolkit.notebook.panels.explore.html import field_table_html
from toolkit.notebook.panels.explore.model import StatisticsModel

pytestmark = pytest.mark.spark


def test_samples_of_a_drifting_field_come_from_metadata_alone(
    lakehouse: Catalog, spark: SparkSession,
) -> None:
    name = "samples.events"
    toolkit.ingest([{"id": i, "price": 100 + i} for i in range(20)], name, lakehouse, spark,
                   batch_id="day1")
    # the whole batch drifts: price arrives as text only
    toolkit.ingest([{"id": 20 + i, "price": f"{i}.5 EUR"} for i in range(20)], name, lakehouse,
                   spark, batch_id="day2")
    # then mostly longs again, and two texts: texts drift inside this batch
    toolkit.ingest([{"id": 40 + i, "price": 200 + i} for i in range(8)]
                   + [{"id": 48, "price": "late 1"}, {"id": 49, "price": "late 2"}],
                   name, lakehouse, spark, batch_id="day3")
    table = lakehouse.load_table(name)

    # from metadata alone: with every data file gone, the samples are still there
    files = list(Path(urlparse(table.location()).path, "data").rglob("*.parquet"))
    assert files
    for f in files:
        f.unlink()
    stats = toolkit.statistics(lakehouse.load_table(name))

    assert stats.arrived("price") == {"long": 28, "string": 22}
    # each batch sampled its main type once and a type drifting inside it twice; the
    # latest batches' first
    assert stats.samples("price") == {
        "string": ('"late 1"', '"late 2"', '"0.5 EUR"'), "long": ("200", "100")}
    assert stats.samples("price", limit=1) == {"string": ('"late 1"',), "long": ("200",)}
    assert stats.samples("nowhere") == {}
    day1, day2 = stats.snapshots[0], stats.snapshots[1]
    assert (day1.batch_id, day2.batch_id) == ("day1", "day2")
    assert day1.arrivals is not None and day1.arrivals.samples("price") == {"long": ("100",)}
    assert day2.arrivals is not None and day2.arrivals.samples("price") == {
        "string": ('"0.5 EUR"',)}

    # the explorer's statistics panel shows them as a profile's
    row = StatisticsModel.from_statistics(stats).field("price")
    assert [(t.type, t.sample_texts) for t in row.types] == [
        ("long", ("200", "100")), ("string", ('"late 1"', '"late 2"', '"0.5 EUR"'))]
    html = field_table_html(StatisticsModel.from_statistics(stats).filter("price").page(0))
    assert ">samples</th>" in html and "&quot;0.5 EUR&quot;" in html

    # expiring folds the counts, not the samples
    folded = fold_arrivals(table, [stats.snapshots[0].snapshot_id])
    assert folded.ids == {day1.snapshot_id}
    body = folded.properties[EXPIRED_ARRIVALS_PROPERTY].partition(":")[2]
    assert Arrivals.decode(body).arrived("price") == {"long": 20}  # day1's
    assert Arrivals.decode(body).sample_texts == {}

    # once folded, the batch's own arrivals property (samples and all) may be removed,
    # and no other: in the commit that sets the fold, or after it
    key = f"{SNAPSHOT_ARRIVALS_PREFIX}{day1.snapshot_id}"
    assert stale_arrivals_properties(table) == ()
    assert stale_arrivals_properties(table, folded.ids) == (
        (key,) if key in table.metadata.properties else ())
    with table.transaction() as tx:
        tx.set_properties(folded.properties)
    assert stale_arrivals_properties(table) == (
        (key,) if key in table.metadata.properties else ())
    after = toolkit.statistics(table)
    assert after.arrived("price") == stats.arrived("price")  # day1 counted once
    assert after.samples("price") == {
        "string": ('"late 1"', '"late 2"', '"0.5 EUR"'), "long": ("200",)}
