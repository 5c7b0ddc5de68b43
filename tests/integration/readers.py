"""Read a committed table back three ways (PyIceberg, Spark, DuckDB), normalized so the
three can be compared with each other and with ``toolkit.simulate``'s rows."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog
from pyiceberg.table import Table

from toolkit.core.values.types import ListOf, Struct
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


def as_pyiceberg_reads_it(
    rows: list[Row], schema: Struct, written: Sequence[Struct] | None = None
) -> list[Row]:
    """PyIceberg 0.12 reads a null ``list<struct>`` as ``[]`` (apache/iceberg-python#3833,
    fix pending in #3834). The data at rest is right (Spark and DuckDB read null); this
    turns the expected rows into what PyIceberg returns, so the comparison stays exact
    everywhere else. A column its data file does not have (added after the row was
    written) still reads as null: ``written`` gives, per row, the schema it was written
    under (default: ``schema``)."""

    def fix(value: Any, t: Any, w: Any) -> Any:
        if w is None:  # not in the row's data file
            return value
        if isinstance(t, ListOf):
            if value is None:
                return [] if isinstance(t.element, Struct) else None
            return [fix(v, t.element, w.element) for v in value]
        if isinstance(t, Struct) and value is not None:
            had = {c.id: c.type for c in w.fields}
            return {c.name: fix(value.get(c.name), c.type, had.get(c.id)) for c in t.fields}
        return value

    schemas = written if written is not None else [schema] * len(rows)
    return [fix(r, schema, w) for r, w in zip(rows, schemas, strict=True)]


def read_pyiceberg(table: Table) -> list[Row]:
    table.refresh()
    return canonical(table.scan().to_arrow().to_pylist())


def read_spark(spark: SparkSession, name: str) -> list[Row]:
    return canonical([r.asDict(recursive=True) for r in spark.table(name).collect()])


def read_duckdb(table: Table) -> list[Row]:
    table.refresh()
    return canonical(read_table(table))


def schema_summary(schema: Any) -> list[tuple[int, str, str, str | None]]:
    """Every field (nested too) as (id, full name, type, doc): what the user checks."""
    from pyiceberg.schema import index_by_id

    return sorted(
        (fid, schema.find_column_name(fid), str(f.field_type), f.doc)
        for fid, f in index_by_id(schema).items()
    )


def assert_table_is_the_simulation(
    spark: SparkSession, catalog: Catalog, name: str, sim: Any
) -> None:
    """The table ``name`` of ``catalog`` is what ``sim`` (a ``toolkit.Simulation``) says:
    same field IDs, names, types and docs, same rows through Spark, DuckDB and PyIceberg."""
    table = catalog.load_table(name)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    expected = canonical(sim.rows)
    assert read_spark(spark, f"{catalog.name}.{name}") == expected
    assert read_duckdb(table) == expected
    assert read_pyiceberg(table) == canonical(as_pyiceberg_reads_it(sim.rows, sim.table_schema))
