"""Issue 26: ingesting into a table Spark SQL created with map columns, under the
``upsolver`` policy, gives what ``toolkit.simulate`` gives: objects that fit a map land in
it, a batch with one that does not gets the family's record column (docs/rules.md, *Maps
under automatic evolution*)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_spark, schema_summary
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BATCHES = [
    [{"id": 1, "counts": {"a": 1, "b": None}, "points": {"p": {"x": 3, "label": "q"}}},
     {"id": 2, "counts": {}, "points": {"p": {"x": 4}}}],
    [{"id": 3, "counts": {"a": 2}}, {"id": 4, "counts": {"a": 1.5}}],
]  # fmt: skip


@pytest.mark.spark
def test_objects_for_map_columns_land_as_simulate_says(
    spark: SparkSession, lakehouse: Catalog
) -> None:
    name = "adopted.maps"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.adopted")
    spark.sql(
        f"CREATE TABLE {lakehouse.name}.{name} (id BIGINT, counts MAP<STRING, BIGINT>, "
        "points MAP<STRING, STRUCT<x: BIGINT, label: STRING>>) USING iceberg"
    )
    sim = toolkit.simulate(BATCHES, lakehouse.load_table(name).schema())
    for i, batch in enumerate(BATCHES):
        assert ingest(batch, name, lakehouse, spark, f"b{i}").quarantined == 0
    table = lakehouse.load_table(name)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert table.schema().find_field("counts_record") is not None
    assert "points_record" not in [f.name for f in table.schema().fields]
    rows = read_spark(spark, f"{lakehouse.name}.{name}")
    assert rows == canonical(sim.rows)
    by_id = {r["id"]: r for r in rows}
    assert by_id[1]["counts"] == {"a": 1, "b": None}
    assert by_id[2]["points"] == {"p": {"x": 4, "label": None}}
    assert by_id[3]["counts"] == {"a": 2} and by_id[4]["counts"] is None


def test_the_jvm_router_leaves_a_batch_with_objects_for_a_map_to_python() -> None:
    from toolkit.core.batch.options import Options
    from toolkit.core.values.types import Column, MapOf, Struct
    from toolkit.spark.router import fitting_codes, jvm_routing

    schema = Struct((Column(1, "id", "long"), Column(2, "m", MapOf(3, "string", 4, "long"))))
    codes = fitting_codes(schema)
    assert jvm_routing(schema, codes, Options()) is None  # the map's field arrives
    without_m = {k: v for k, v in codes.items() if k != ("m",)}
    assert jvm_routing(schema, without_m, Options()) is not None
