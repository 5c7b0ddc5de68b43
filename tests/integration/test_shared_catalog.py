"""PyIceberg, Spark and DuckDB share one embedded catalog: each sees the others' commits."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from toolkit.iceberg import embedded
from toolkit.iceberg.duckdb import duckdb_connection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_pyiceberg_spark_duckdb_share_one_table(lakehouse: Catalog, spark: SparkSession) -> None:
    name = lakehouse.name
    lakehouse.create_namespace_if_not_exists("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "event", StringType(), required=False, doc="what happened"),
    )
    table = lakehouse.create_table("db.t", schema)
    table.append(pa.table({"id": [1, 2], "event": ["view", "click"]}, schema=schema.as_arrow()))

    # Spark reads PyIceberg's commit, column doc included.
    rows = spark.sql(f"SELECT id, event FROM {name}.db.t ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, "view"), (2, "click")]
    comments = {
        r["col_name"]: r["comment"] for r in spark.sql(f"DESCRIBE TABLE {name}.db.t").collect()
    }
    assert comments["event"] == "what happened"

    # Spark writes a row and evolves the schema.
    spark.sql(f"INSERT INTO {name}.db.t VALUES (3, 'buy')")
    spark.sql(f"ALTER TABLE {name}.db.t ADD COLUMN c string COMMENT 'x'")

    # PyIceberg sees both commits.
    table = lakehouse.load_table("db.t")
    field = table.schema().find_field("c")
    assert (field.field_type, field.doc) == (StringType(), "x")
    seen = table.scan().to_arrow().sort_by("id").to_pylist()
    assert seen == [
        {"id": 1, "event": "view", "c": None},
        {"id": 2, "event": "click", "c": None},
        {"id": 3, "event": "buy", "c": None},
    ]

    # PyIceberg commits after Spark's (the SQLite file must not stay locked by Spark).
    with table.update_schema() as update:
        update.add_column("d", LongType(), doc="y")
    comments = {
        r["col_name"]: r["comment"] for r in spark.sql(f"DESCRIBE TABLE {name}.db.t").collect()
    }
    assert comments["d"] == "y"
    table = lakehouse.load_table("db.t")

    # DuckDB, an independent reader, reads the current metadata file to the same rows.
    con = duckdb_connection()
    got = con.execute(
        "SELECT id, event, c FROM iceberg_scan(?) ORDER BY id", [table.metadata_location]
    ).fetchall()
    assert got == [(r["id"], r["event"], r["c"]) for r in seen]


def test_spark_view_lives_in_the_shared_catalog(lakehouse: Catalog, spark: SparkSession) -> None:
    name = lakehouse.name
    # Once Spark has opened the catalog, PyIceberg must still be able to commit.
    spark.sql(f"SHOW NAMESPACES IN {name}").collect()
    lakehouse.create_namespace_if_not_exists("views")
    schema = Schema(NestedField(1, "n", LongType(), required=False))
    lakehouse.create_table("views.numbers", schema).append(
        pa.table({"n": [1, 2, 3]}, schema=schema.as_arrow())
    )

    spark.sql(f"CREATE VIEW {name}.views.big AS SELECT n FROM {name}.views.numbers WHERE n > 1")
    rows = spark.sql(f"SELECT n FROM {name}.views.big ORDER BY n").collect()
    assert [r.n for r in rows] == [2, 3]

    # Stored in the same SQLite catalog as an Iceberg view; PyIceberg's table listing
    # is not confused by it.
    info = embedded(lakehouse)
    assert info is not None
    with sqlite3.connect(info.database) as db:
        kinds = dict(
            db.execute(
                "SELECT table_name, iceberg_type FROM iceberg_tables"
                " WHERE catalog_name = ? AND table_namespace = 'views'",
                (name,),
            ).fetchall()
        )
    assert kinds == {"numbers": "TABLE", "big": "VIEW"}
    assert lakehouse.list_tables("views") == [("views", "numbers")]
