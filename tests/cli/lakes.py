"""Small tables and files the command-line tests run on, made by the API (SQLite catalog,
PyIceberg, no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.core.values.types import Column, Struct
from toolkit.iceberg.catalog import NEW_TABLE_PROPERTIES, ensure_namespace
from toolkit.iceberg.ledger import STAGING_PROPERTY
from toolkit.iceberg.new_tables import (
    STAGING_FOR_PROPERTY,
    new_table_location,
    staging_identifier,
)
from toolkit.iceberg.schema import to_iceberg


def renamed_table(folder: Path) -> Catalog:
    """db.t (name, n) with two logged plans: #1 renames name to full_name, #2 drops n."""
    cat = toolkit.catalog(folder)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=to_iceberg(Struct((
        Column(1, "name", "string"), Column(2, "n", "long")))))
    for op in (toolkit.ops.rename("name", "full_name"), toolkit.ops.drop("n")):
        p = toolkit.preview_evolution(cat, "db.t", [op])
        toolkit.evolve(cat, "db.t", p.plan, expected=p.state)
    return cat


def names(cat: Catalog, table: str) -> list[str]:
    return [f.name for f in cat.load_table(table).schema().fields]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def left_staging_table(cat: Catalog, table: str, rows: int) -> str:
    """The staging table an ingest of typed columns into the new ``table`` makes (as
    ``toolkit.pipeline.ingest._fresh_one_pass`` makes it), holding ``rows`` rows, left
    behind as by a process that died before renaming it; its name."""
    ensure_namespace(cat, table.rsplit(".", 1)[0])
    staging = staging_identifier(table)
    made = cat.create_table(
        staging, schema=pa.schema([pa.field("n", pa.int64())]),
        location=new_table_location(cat, table),
        properties={**NEW_TABLE_PROPERTIES, STAGING_PROPERTY: "true",
                    STAGING_FOR_PROPERTY: table})
    made.append(pa.table({"n": pa.array(range(rows), pa.int64())}))
    return staging
