"""Small tables and files the command-line tests run on, made by the API (SQLite catalog,
PyIceberg, no Spark)."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.catalog import Catalog

import toolkit
from toolkit.core.values.types import Column, Struct
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
