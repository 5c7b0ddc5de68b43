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
