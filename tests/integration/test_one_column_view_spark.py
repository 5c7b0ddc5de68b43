"""Issue 28 on a real table: the view Spark stores has one column per source key, nested
families folded inside their structs, and returns every value a reader expects; DuckDB's
rendering over the same table returns the same rows."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

from tests.core.test_one_column_view import KEYS, ORDERS
from tests.integration.test_views_spark import by_id
from toolkit.core.evolution.view_types import HINTS_PROPERTY
from toolkit.iceberg.duckdb import duckdb_connection, run_view
from toolkit.pipeline.ingest import ingest
from toolkit.spark.views import create_coalesce_view

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

TABLE = "one_view.orders"
VIEW = "one_view.orders_v"
UTC = dt.UTC

EXPECTED: list[dict[str, Any]] = [
    {"id": 1, "quantity": "2", "address": '{"city":"Oslo","zip":"01234"}',
     "started": dt.datetime(2024, 6, 1, 8, tzinfo=UTC),
     "shipping": {"eta": dt.datetime(2024, 6, 3, 12, tzinfo=UTC)},
     "items": [{"qty": "1", "sku": "a"}], "customer": [{"name": "Ann", "vip": None}]},
    {"id": 2, "quantity": "3", "address": '{"city":"Oslo","zip":"0150"}',
     "started": dt.datetime(2024, 6, 1, 9, 30, 0, 500000, tzinfo=UTC), "shipping": None,
     "items": [], "customer": None},
    {"id": 3, "quantity": "two", "address": "12 Main St, Springfield",
     "started": dt.datetime(2024, 6, 2, 8, 0, 54, 178000, tzinfo=UTC),
     "shipping": {"eta": dt.datetime(2024, 6, 3, 12, tzinfo=UTC)},
     "items": [{"qty": "many", "sku": "b"}, {"qty": "4", "sku": "c"}],
     "customer": [{"name": "Bo", "vip": True}]},
    {"id": 4, "quantity": "5", "address": '{"city":"Bergen","zip":"98765"}',
     "started": dt.datetime(2024, 6, 2, 8, 0, 54, tzinfo=UTC), "shipping": None,
     "items": None, "customer": [{"name": "Cy", "vip": None}]},
]


@pytest.fixture(scope="module")
def viewed(lakehouse: Catalog, spark: SparkSession) -> dict[str, Any]:
    for i, batch in enumerate(ORDERS):
        ingest(batch, TABLE, lakehouse, spark, batch_id=f"orders-{i}")
    sql = create_coalesce_view(spark, TABLE, VIEW, view_types={"id": "long"})
    frame = spark.table(f"{lakehouse.name}.{VIEW}")
    rows = [r.asDict(recursive=True) for r in frame.collect()]
    table = lakehouse.load_table(TABLE)
    return {"sql": sql, "columns": frame.columns, "types": dict(frame.dtypes),
            "spark": by_id(rows), "duckdb": by_id(run_view(table, connection=duckdb_connection()))}


def test_spark_view_has_one_column_per_source_key(viewed: dict[str, Any]) -> None:
    assert sorted(viewed["columns"]) == KEYS
    assert viewed["types"]["started"] == "timestamp"
    assert viewed["types"]["items"] == "array<struct<qty:string,sku:string>>"
    assert viewed["types"]["shipping"] == "struct<eta:timestamp>"
    assert viewed["types"]["customer"] == "array<struct<name:string,vip:boolean>>"
    assert "address: record and string fold into string (records as JSON text)" in viewed["sql"]


def test_spark_view_returns_every_value_a_reader_expects(viewed: dict[str, Any]) -> None:
    assert viewed["spark"] == EXPECTED


def test_duckdb_reads_the_same_rows(viewed: dict[str, Any]) -> None:
    assert viewed["duckdb"] == EXPECTED


def test_a_field_the_table_keeps_a_hint_for_reads_as_it(
    viewed: dict[str, Any], lakehouse: Catalog, spark: SparkSession
) -> None:
    """The table's ``toolkit.hints`` property, as Spark's catalog loads it: ``quantity``
    reads as a long, ``"two"`` as NULL (the comment says so)."""
    table = lakehouse.load_table(TABLE)
    with table.transaction() as tx:
        tx.set_properties({HINTS_PROPERTY: json.dumps({"quantity": "long"})})
    spark.sql(f"REFRESH TABLE {lakehouse.name}.{TABLE}")
    sql = create_coalesce_view(spark, TABLE, f"{VIEW}_hinted")
    assert "quantity: long and string read as long" in sql
    frame = spark.table(f"{lakehouse.name}.{VIEW}_hinted")
    assert dict(frame.dtypes)["quantity"] == "bigint"
    got = sorted((r.id, r.quantity) for r in frame.collect())
    assert got == [(1, 2), (2, 3), (3, None), (4, 5)]
