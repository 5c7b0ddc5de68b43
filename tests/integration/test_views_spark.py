"""RULES 7 views on real tables: Spark stores the COALESCE view as an Iceberg view in the
shared catalog, and DuckDB, running its own rendering over the same table, agrees."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

from toolkit.iceberg.duckdb import duckdb_connection, read_table, run_view
from toolkit.pipeline.ingest import ingest
from toolkit.spark.views import create_coalesce_view

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

TABLE = "views_spark.drift"
VIEW = "views_spark.drift_folded"

BATCHES: list[list[dict[str, Any]]] = [
    [
        {"id": 1, "my_field": 1, "size": 4, "a": [1, 2], "ts": "2024-06-01T08:03:29.430Z"},
        {"id": 2, "my_field": 2, "size": 5, "a": [], "ts": "2024-06-01T09:00:00.000Z"},
    ],
    [
        {"id": 3, "my_field": "abc", "size": 2.3, "a": "x", "ts": 1717315254178},
        {"id": 4, "my_field": 7, "size": 6, "a": [3], "ts": "2024-06-02T10:00:00.001Z"},
        {"id": 5},
    ],
]

# Every family folded to its common denominator (string, double, array<string>), whichever
# column each value landed in; the timestamp family as timestamps (issue 28; it was epoch
# milliseconds before).
def _at(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


FOLDED: list[dict[str, Any]] = [
    {"id": 1, "my_field": "1", "size": 4.0, "a": ["1", "2"], "ts": _at(1717229009430)},
    {"id": 2, "my_field": "2", "size": 5.0, "a": [], "ts": _at(1717232400000)},
    {"id": 3, "my_field": "abc", "size": 2.3, "a": ["x"], "ts": _at(1717315254178)},
    {"id": 4, "my_field": "7", "size": 6.0, "a": ["3"], "ts": _at(1717322400001)},
    {"id": 5, "my_field": None, "size": None, "a": None, "ts": None},
]


def instants(value: Any) -> Any:
    """Datetimes as UTC instants, nested ones too (Spark gives local naive datetimes,
    DuckDB zone-aware ones)."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)
    if isinstance(value, dict):
        return {k: instants(v) for k, v in value.items()}
    if isinstance(value, list):
        return [instants(v) for v in value]
    return value


def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted((instants(r) for r in rows), key=lambda r: r["id"])


@pytest.fixture(scope="module")
def folded(lakehouse: Catalog, spark: SparkSession) -> dict[str, Any]:
    """Ingest the drifting batches, create the view in Spark, read it in both engines."""
    for i, batch in enumerate(BATCHES):
        ingest(batch, TABLE, lakehouse, spark, batch_id=f"drift-{i}")
    table = lakehouse.load_table(TABLE)
    sql = create_coalesce_view(spark, TABLE, VIEW)
    spark_rows = spark.sql(f"SELECT * FROM {lakehouse.name}.{VIEW}").collect()
    con = duckdb_connection()
    return {
        "table": table,
        "sql": sql,
        "spark": by_id([r.asDict(recursive=True) for r in spark_rows]),
        "duckdb": by_id(run_view(table, connection=con)),
        "raw": read_table(table, con),
    }


def test_spark_stores_the_view_in_the_catalog(
    folded: dict[str, Any], lakehouse: Catalog, spark: SparkSession
) -> None:
    names = [f.name for f in folded["table"].schema().fields]
    for evolved in ("my_field_string", "size_double", "a_string", "ts_long"):
        assert evolved in names, f"the batches should have evolved {evolved}: {names}"
    name, sql = lakehouse.name, folded["sql"]
    assert sql.startswith(f"CREATE OR REPLACE VIEW {name}.{VIEW} AS SELECT")
    assert f"FROM {name}.{TABLE}" in sql
    assert ("COALESCE(`my_field_string`, CAST(`my_field` AS STRING)) AS `my_field` /* my_field:"
            " long and string fold into string (longs as text) */") in sql
    # An Iceberg view in the shared catalog, not a temporary view of this session.
    views = [r.viewName for r in spark.sql(f"SHOW VIEWS IN {name}.views_spark").collect()]
    assert VIEW.split(".")[1] in views
    assert lakehouse.list_tables("views_spark") == [tuple(TABLE.split("."))]
    # Creating it again replaces it (the way to follow a schema that evolved since).
    assert create_coalesce_view(spark, f"{name}.{TABLE}", f"{name}.{VIEW}") == sql


def test_spark_view_folds_each_family(folded: dict[str, Any]) -> None:
    assert folded["spark"][:4] == FOLDED[:4]
    absent = {k: v for k, v in folded["spark"][4].items() if k != "a"}
    assert absent == {k: v for k, v in FOLDED[4].items() if k != "a"}
    # The view hides the evolved columns; the table itself still has them.
    assert set(folded["spark"][0]) == {"id", "my_field", "size", "a", "ts"}
    assert len(folded["raw"]) == len(FOLDED) and "a_string" in folded["raw"][0]


def test_duckdb_rendering_returns_the_same_rows(folded: dict[str, Any]) -> None:
    assert folded["duckdb"] == folded["spark"]


def test_absent_array_family_folds_to_null(folded: dict[str, Any]) -> None:
    assert folded["spark"][4]["a"] is None
    assert folded["duckdb"][4]["a"] is None
