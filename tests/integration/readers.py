"""Read a committed table back three ways (PyIceberg, Spark, DuckDB), normalized so the
three can be compared with each other and with ``toolkit.simulate``'s rows."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from pyiceberg.table import Table

from toolkit.core.types import ListOf, Struct
from toolkit.iceberg.duckdb import read_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Row = dict[str, Any]


def normalize(value: Any) -> Any:
    """Timestamps as aware UTC (Spark hands back naive session-time values)."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    return value


def canonical(rows: list[Row]) -> list[Row]:
    """Rows in a fixed order: Iceberg does not keep the order of appended rows."""
    rows = [normalize(r) for r in rows]
    return sorted(rows, key=lambda r: json.dumps(r, default=str, sort_keys=True))


def as_pyiceberg_reads_it(rows: list[Row], schema: Struct) -> list[Row]:
    """PyIceberg 0.12 reads a null ``list<struct>`` as ``[]`` (apache/iceberg-python#3833,
    fix pending in #3834). The data at rest is right (Spark and DuckDB read null); this
    turns the expected rows into what PyIceberg returns, so the comparison stays exact
    everywhere else."""

    def fix(value: Any, t: Any) -> Any:
        if isinstance(t, ListOf):
            if value is None:
                return [] if isinstance(t.element, Struct) else None
            return [fix(v, t.element) for v in value]
        if isinstance(t, Struct) and value is not None:
            return {c.name: fix(value.get(c.name), c.type) for c in t.fields}
        return value

    return [{c.name: fix(r.get(c.name), c.type) for c in schema.fields} for r in rows]


def read_pyiceberg(table: Table) -> list[Row]:
    table.refresh()
    return canonical(table.scan().to_arrow().to_pylist())


def read_spark(spark: SparkSession, name: str) -> list[Row]:
    return canonical([r.asDict(recursive=True) for r in spark.table(name).collect()])


def read_duckdb(table: Table) -> list[Row]:
    table.refresh()
    return canonical(read_table(table))
