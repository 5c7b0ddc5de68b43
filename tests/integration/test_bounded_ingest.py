"""A first batch wide enough that its lineage entry and its arrivals are too big for the
table's properties (issue 25): ingest creates the table, commits the plan with the entry
in a fold file, and publishes the batch with its arrivals in another; lineage, statistics
and the ledger read them back, and the rows are all there."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import read_pyiceberg
from toolkit.core.maintenance.folding import WINDOW_BYTES, pointer_key
from toolkit.iceberg.ledger import ingested_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

KEYS = 400


def test_a_wide_first_batch_keeps_the_properties_bounded(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    name = "bounded.wide"
    wide = [{f"key_{i:04d}": i + n for i in range(KEYS)} for n in range(3)]
    toolkit.ingest(wide, name, lakehouse, spark, batch_id="wide")
    toolkit.ingest([{"key_0000": "text"}], name, lakehouse, spark, batch_id="drift")
    table = lakehouse.load_table(name)

    assert sum(len(k) + len(v) for k, v in table.properties.items()) <= WINDOW_BYTES
    assert pointer_key("lineage") in table.properties
    first, second = toolkit.lineage(table)
    assert (first.batch, len(first.operations)) == ("wide", KEYS)
    assert second.batch == "drift" and "key_0000_string" in str(second.operations[0])
    stats = toolkit.statistics(table)
    assert stats.arrived("key_0399") == {"long": 3}
    assert stats.arrived("key_0000") == {"long": 3, "string": 1}
    assert {"wide", "drift"} <= ingested_batches(table)
    rows = read_pyiceberg(table)
    assert len(rows) == 4
    assert sorted(r["key_0399"] for r in rows if r["key_0399"] is not None) == [399, 400, 401]
