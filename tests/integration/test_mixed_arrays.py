"""Arrays mixing records and primitives (issue 12) through a real ingest: a JSON-lines
file routed in the JVM, read back by Spark, DuckDB and PyIceberg, and its COALESCE view.

The records land in the family's record column and the primitives in its primitive
column, at the same positions (docs/rules.md, mixed arrays): both are queryable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import assert_table_is_the_simulation
from toolkit.pipeline.ingest import ingest
from toolkit.spark.views import create_coalesce_view

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

BATCHES: list[list[dict[str, Any]]] = [
    [
        {"id": 1, "x": [{"k": 1}, "a"], "r": {"y": [[{"z": True}, 2.5], [3]]}},
        {"id": 2, "x": [{"k": 2}, None, 3], "r": {"y": [{"z": False}]}},
        {"id": 3, "x": ["b", "c"], "r": {"y": [1, 2]}},
    ],
    [
        {"id": 4, "x": [{"k": 3, "j": "new"}, 1.5, True], "r": {"y": [[{"z": True}], "t"]}},
        {"id": 5, "x": [{"k": 4}], "r": None},
        {"id": 6, "x": 7},
    ],
]


def test_mixed_arrays_split_in_the_jvm_and_read_back(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    reports = []
    for i, batch in enumerate(BATCHES):
        path = tmp_path / f"mixed-{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in batch))
        reports.append(ingest(str(path), "mixed.events", lakehouse, spark, batch_id=f"m{i}"))
    assert [r.routed_in for r in reports] == ["jvm", "jvm"]

    sim = toolkit.simulate(BATCHES)
    table = lakehouse.load_table("mixed.events")
    assert table.schema().as_struct() == sim.schema.as_struct()
    assert_table_is_the_simulation(spark, lakehouse, "mixed.events", sim)

    # what issue 12 asks for, queried in Spark: records and primitives at their positions
    got = {
        r["id"]: r.asDict(recursive=True)
        for r in spark.sql(
            f"SELECT id, x, x_array_string, x_array_long, r.y AS y, r.y_array2_double AS yd"
            f" FROM {lakehouse.name}.mixed.events"
        ).collect()
    }
    assert got[1]["x"] == [{"k": 1, "j": None}, None]
    assert got[1]["x_array_string"] == [None, "a"]
    assert got[2]["x"] == [{"k": 2, "j": None}, None, None]
    assert got[2]["x_array_long"] == [None, None, 3]
    # a later batch: its double and boolean fit the family's string column (RULES 3.3)
    assert got[4]["x"] == [{"k": 3, "j": "new"}, None, None]
    assert got[4]["x_array_string"] == [None, "1.5", "true"]
    assert got[1]["y"] == [[{"z": True}, None], [None]]
    assert got[1]["yd"] == [[None, 2.5], [3.0]]
    # a query reaches the records' fields (JSON text never could)
    ks = spark.sql(
        f"SELECT id, element.k AS k FROM {lakehouse.name}.mixed.events"
        " LATERAL VIEW explode(x) AS element WHERE element IS NOT NULL"
    ).collect()
    assert sorted((r.id, r.k) for r in ks) == [(1, 1), (2, 2), (4, 3), (5, 4)]

    # RULES 7, issue 28: one view column per key; the family has a record column, so it
    # folds into JSON text, and the comment says a mixed list reads its records only
    sql = create_coalesce_view(spark, "mixed.events", "mixed.events_folded")
    assert "a list mixing records and values reads its records only" in sql
    frame = spark.sql(f"SELECT * FROM {lakehouse.name}.mixed.events_folded")
    assert "x_array_long" not in frame.columns and "x" in frame.columns
    rows = {r.id: r.asDict() for r in frame.collect()}
    assert len(rows) == 6
    assert rows[1]["x"] == '[{"k":1,"j":null},null]'
