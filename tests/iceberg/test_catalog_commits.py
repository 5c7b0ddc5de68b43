"""The embedded catalog commits without PyIceberg's deep copy of the metadata
(CachingSqlCatalog._update_and_stage_table, a copy of PyIceberg 0.12's
update_table_metadata less that copy): it must make the very metadata PyIceberg makes, so
an upgrade of PyIceberg that changes its own fails here."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyiceberg.table.update import SetPropertiesUpdate, update_table_metadata

from toolkit.iceberg import catalog
from toolkit.iceberg.catalog import _updated


def test_updated_metadata_is_what_pyiceberg_makes(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=pa.schema([("a", pa.int64())]))
    t.append(pa.table({"a": [1, 2]}))
    t.append(pa.table({"a": [3]}))
    updates = (SetPropertiesUpdate(updates={"k": "v"}),)
    ours = _updated(t.metadata, updates, t.metadata_location)
    theirs = update_table_metadata(t.metadata, updates, metadata_location=t.metadata_location)
    # the same but for the time of the update, which each takes from the clock
    assert ours.model_copy(update={"last_updated_ms": 0}) == theirs.model_copy(
        update={"last_updated_ms": 0})
    assert ours.properties["k"] == "v"
    assert len(ours.metadata_log) == len(t.metadata.metadata_log) + 1
    # and a commit through the catalog reads back as written
    with t.transaction() as tx:
        tx.set_properties(k="w")
    assert cat.load_table("db.t").properties["k"] == "w"


def test_a_load_reads_the_catalog_row_every_time(tmp_path: Path) -> None:
    """The embedded catalog loads a table by a plain query of its metadata location
    (CachingSqlCatalog.load_table), keeping the files it parsed: another writer's commit
    is seen at the next load, a file it never parsed is read, and what is not a table
    fails as PyIceberg says."""
    import sqlite3

    import pytest
    from pyiceberg.exceptions import NoSuchTableError

    ours, theirs = catalog(tmp_path), catalog(tmp_path)  # two processes' catalogs
    ours.create_namespace("db")
    ours.create_table("db.t", schema=pa.schema([("a", pa.int64())]))
    before = ours.load_table("db.t")
    theirs.load_table("db.t").append(pa.table({"a": [1, 2]}))
    seen = ours.load_table("db.t")  # a file this catalog never parsed
    assert seen.metadata_location != before.metadata_location
    assert seen.scan().to_arrow()["a"].to_pylist() == [1, 2]
    before.refresh()
    assert before.metadata_location == seen.metadata_location
    with pytest.raises(NoSuchTableError, match="db.missing"):
        ours.load_table("db.missing")
    # a view another engine keeps in the same catalog is no table
    with sqlite3.connect(tmp_path / "catalog.db") as db:
        db.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                   "metadata_location, iceberg_type) VALUES (?, 'db', 'v', ?, 'VIEW')",
                   (ours.name, seen.metadata_location))
    with pytest.raises(NoSuchTableError, match="db.v"):
        ours.load_table("db.v")
