"""toolkit.iceberg.statistics: written data statistics from a real table's manifests.

The table is a real PyIceberg table in the embedded SQLite catalog, written in three
appends (three batches) with a schema evolution in between; no Spark, no mocks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

from toolkit.iceberg import catalog
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.statistics import (
    WrittenDataStatistics,
    statistics,
)

EVOLVED = "upsolver_evolved_from:"

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "my_field", LongType(), required=False),
    NestedField(
        3,
        "device",
        StructType(
            NestedField(4, "os", StringType(), required=False),
            NestedField(5, "version", LongType(), required=False),
        ),
        required=False,
    ),
    NestedField(
        6,
        "items",
        ListType(
            7,
            StructType(NestedField(8, "qty", LongType(), required=False)),
            element_required=False,
        ),
        required=False,
    ),
    NestedField(9, "tags", ListType(10, StringType(), element_required=False), required=False),
)

BATCH_1: dict[str, list[Any]] = {
    "id": [1, 2, 3],
    "my_field": [10, None, 30],
    "device": [{"os": "ios", "version": 17}, None, {"os": "android", "version": None}],
    "items": [[{"qty": 1}, {"qty": 2}], [], None],
    "tags": [["a"], ["b", "c"], None],
}
# after the evolution: my_field_string (family my_field), device.os_long (family device.os)
BATCH_2: dict[str, list[Any]] = {
    "id": [4, 5],
    "my_field": [None, 50],
    "device": [
        {"os": None, "version": None, "os_long": 16},
        {"os": "ios", "version": 18, "os_long": None},
    ],
    "items": [[{"qty": None}], [{"qty": 5}]],
    "tags": [None, []],
    "my_field_string": ["forty", None],
}
BATCH_3: dict[str, list[Any]] = {
    "id": [6, 7],
    "my_field": [None, None],
    "device": [None, None],
    "items": [None, None],
    "tags": [["d"], None],
    "my_field_string": ["sixty", "seventy"],
}


def _append(table: Table, data: dict[str, list[Any]], batch: str | None) -> None:
    props = {} if batch is None else {BATCH_ID_PROPERTY: batch}
    table.append(pa.table(data, schema=table.schema().as_arrow()), snapshot_properties=props)


def _evolve(table: Table) -> None:
    with table.update_schema() as update:
        update.add_column("my_field_string", StringType(), doc=f"{EVOLVED}my_field")
        update.add_column(("device", "os_long"), LongType(), doc=f"{EVOLVED}os")


def _events(folder: Path) -> Table:
    cat = catalog(folder)
    cat.create_namespace("db")
    tbl = cat.create_table("db.events", SCHEMA)
    _append(tbl, BATCH_1, "b1")
    _evolve(tbl)
    _append(tbl, BATCH_2, "b2")
    _append(tbl, BATCH_3, "b3")
    return tbl


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The events table, shared by the tests that only read it."""
    return _events(tmp_path_factory.mktemp("lake"))


@pytest.fixture
def own_table(tmp_path: Path) -> Table:
    """A fresh events table, for a test that changes it."""
    return _events(tmp_path)


def _counts(stats: WrittenDataStatistics) -> dict[str, tuple[int, int | None]]:
    return {c.name: (c.values, c.nulls) for c in stats.columns}


def test_live_values_and_nulls_per_column(table: Table) -> None:
    stats = statistics(table)
    assert stats.table == "db.events"
    assert (stats.records, stats.data_files, stats.delete_files) == (7, 3, 0)
    assert stats.snapshot_id == table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    # schema order, pre-order: each struct field, then its fields; primitive list elements
    assert _counts(stats) == {
        "id": (7, 0),
        "my_field": (3, 4),
        "device": (3, None),  # the most values of any leaf (os)
        "device.os": (3, 4),
        "device.version": (2, 5),
        "device.os_long": (1, 6),  # the 3 rows of b1 predate it: they read null
        "items": (3, None),
        "items.element.qty": (3, 5),
        "tags": (4, None),
        "tags.element": (4, 4),  # elements: a, b, c, d
        "my_field_string": (3, 4),
    }
    # outside lists, every row is a value or a null
    for c in stats.columns:
        if c.leaf and "element" not in c.path:
            assert c.values + (c.nulls or 0) == stats.records, c.name
        assert c.exact == c.leaf
        assert c.files_without_metrics == 0


def test_columns_know_ids_types_families_and_evolution(table: Table) -> None:
    stats = statistics(table)
    schema = table.schema()
    string = stats["my_field_string"]
    assert string.field_id == schema.find_field("my_field_string").field_id
    assert (string.type, string.family, string.evolved, string.evolved_from) == (
        "string",
        "my_field",
        True,
        "my_field",
    )
    assert stats["my_field"].family == "my_field" and not stats["my_field"].evolved
    os_long = stats["device.os_long"]
    assert (os_long.path, os_long.family, os_long.evolved) == (
        ("device", "os_long"),
        "device.os",
        True,
    )
    assert os_long.field_id == schema.find_field("device.os_long").field_id
    assert stats["device"].type == "struct<os: string, version: long, os_long: long>"
    assert stats["items"].type == "list<struct<qty: long>>"
    assert stats["items.element.qty"].field_id == schema.find_field("items.element.qty").field_id
    element = stats["tags.element"]
    assert (element.kind, element.type, element.family, element.leaf) == (
        "element",
        "string",
        "tags",
        True,
    )
    assert [c.top_level for c in stats.columns].count(True) == 6
    with pytest.raises(KeyError):
        stats["nope"]


def test_families_group_named_fields_in_schema_order(table: Table) -> None:
    families = {k: [c.name for c in v] for k, v in statistics(table).families.items()}
    assert families == {
        "id": ["id"],
        "my_field": ["my_field", "my_field_string"],
        "device": ["device"],
        "device.os": ["device.os", "device.os_long"],
        "device.version": ["device.version"],
        "items": ["items"],
        "items.element.qty": ["items.element.qty"],
        "tags": ["tags"],  # tags.element is a part of tags, not a member
    }


def test_snapshots_in_commit_order_with_what_each_batch_wrote(table: Table) -> None:
    stats = statistics(table)
    snaps = stats.snapshots
    assert [s.snapshot_id for s in snaps] == [s.snapshot_id for s in table.snapshots()]
    assert [s.batch_id for s in snaps] == ["b1", "b2", "b3"]
    assert [s.operation for s in snaps] == ["append"] * 3
    assert [s.records_added for s in snaps] == [3, 2, 2]
    assert [s.data_files_added for s in snaps] == [1, 1, 1]
    assert [(s.data_files_removed, s.records_removed) for s in snaps] == [(0, 0)] * 3
    assert [s.timestamp for s in snaps] == sorted(s.timestamp for s in snaps)
    assert snaps[0].schema_id == 0 and snaps[2].schema_id == 1
    # type drift across batches: which member of a family received values when
    assert stats.written("my_field") == (2, 1, 0)
    assert stats.written("my_field_string") == (0, 1, 2)
    assert stats.written("device.os") == (2, 1, 0)
    assert stats.written("device.os_long") == (0, 1, 0)
    assert stats.written("device") == (2, 1, 0)
    assert stats.written("items.element.qty") == (2, 1, 0)
    assert stats.written("tags") == (3, 0, 1)
    assert snaps[1].written("my_field_string") == 1
    assert [name for name, _ in snaps[0].values] == [c.name for c in stats.columns]
    assert all(s.unmeasured == () for s in snaps)


def test_first_batch_with_a_value(table: Table) -> None:
    stats = statistics(table)
    ids = [s.snapshot_id for s in stats.snapshots]
    first = {c.name: c.first_batch_id for c in stats.columns}
    assert first == {
        "id": "b1",
        "my_field": "b1",
        "device": "b1",
        "device.os": "b1",
        "device.version": "b1",
        "device.os_long": "b2",
        "items": "b1",
        "items.element.qty": "b1",
        "tags": "b1",
        "tags.element": "b1",
        "my_field_string": "b2",
    }
    assert stats["my_field_string"].first_snapshot_id == ids[1]
    assert stats["id"].first_snapshot_id == ids[0]


def test_no_data_file_is_read(own_table: Table) -> None:
    before = statistics(own_table)
    data = sorted(Path(own_table.location().removeprefix("file://"), "data").rglob("*.parquet"))
    assert len(data) == 3
    for f in data:
        f.unlink()
    with pytest.raises(FileNotFoundError):
        own_table.scan().to_arrow()  # the data really is gone
    assert statistics(own_table) == before


def test_deleted_files_leave_the_live_counts_but_not_the_history(own_table: Table) -> None:
    own_table.delete("id >= 6")  # drops b3's whole file
    own_table.delete("id == 4")  # rewrites b2's file without row 4
    stats = statistics(own_table)
    assert (stats.records, stats.data_files) == (4, 2)
    assert stats["my_field_string"].values == 0  # forty, sixty and seventy are gone
    assert stats["my_field_string"].nulls == 4
    assert stats["device.os_long"].values == 0
    assert stats["my_field"].values == 3
    assert [s.batch_id for s in stats.snapshots][:3] == ["b1", "b2", "b3"]
    later = stats.snapshots[3:]
    assert sum(s.records_removed for s in later) == 4  # b3's 2 rows, then b2's file of 2
    assert sum(s.records_added for s in later) == 1  # row 5, rewritten
    assert stats.written("my_field_string")[:3] == (0, 1, 2)  # what was written stays
    assert stats["my_field_string"].first_batch_id == "b2"


def test_metrics_mode_none_is_reported_as_a_lower_bound(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "a", LongType(), required=False),
        NestedField(2, "b", StringType(), required=False),
    )
    tbl = cat.create_table("db.t", schema, properties={"write.metadata.metrics.column.b": "none"})
    _append(tbl, {"a": [1, None], "b": ["x", "y"]}, "b1")
    stats = statistics(tbl)
    b = stats["b"]
    assert (b.values, b.nulls, b.files_without_metrics, b.exact) == (0, 0, 1, False)
    assert stats["a"].exact and (stats["a"].values, stats["a"].nulls) == (1, 1)
    assert stats.snapshots[0].unmeasured == ("b",)
    assert "0+" in str(stats)


def test_empty_table(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    cat.create_namespace("db")
    stats = statistics(cat.create_table("db.empty", SCHEMA))
    assert (stats.snapshot_id, stats.records, stats.snapshots) == (None, 0, ())
    assert all(c.values == 0 and c.first_batch_id is None for c in stats.columns)
    assert "db.empty" in str(stats)


def test_a_snapshot_without_a_batch_id(tmp_path: Path) -> None:
    cat = catalog(tmp_path)
    cat.create_namespace("db")
    tbl = cat.create_table("db.t", Schema(NestedField(1, "a", LongType(), required=False)))
    _append(tbl, {"a": [1]}, None)
    stats = statistics(tbl)
    snap = stats.snapshots[0]
    assert snap.batch_id is None
    assert stats["a"].first_snapshot_id == snap.snapshot_id
    assert stats["a"].first_batch_id is None
    assert f"snapshot {snap.snapshot_id}" in str(stats)


def test_rows_and_text(table: Table) -> None:
    stats = statistics(table)
    rows = stats.to_rows()
    assert rows[-1] == {
        "column": "my_field_string",
        "field_id": stats["my_field_string"].field_id,
        "type": "string",
        "kind": "field",
        "family": "my_field",
        "evolved": True,
        "values": 3,
        "nulls": 4,
        "exact": True,
        "first_snapshot_id": stats.snapshots[1].snapshot_id,
        "first_batch_id": "b2",
    }
    assert [r["column"] for r in rows] == [c.name for c in stats.columns]
    history = stats.history_rows()
    assert len(history) == 3 * len(stats.columns)
    drift = {(r["batch"], r["column"]): r["values"] for r in history if r["family"] == "my_field"}
    assert drift == {
        ("b1", "my_field"): 2,
        ("b1", "my_field_string"): 0,
        ("b2", "my_field"): 1,
        ("b2", "my_field_string"): 1,
        ("b3", "my_field"): 0,
        ("b3", "my_field_string"): 2,
    }
    text = str(stats)
    lines = text.splitlines()
    assert lines[0].startswith("Written data statistics of db.events: 7 records in 3 data")
    assert lines[1].split() == [
        "column", "id", "type", "family", "evolved", "values", "nulls", "first", "batch"
    ]  # fmt: skip
    row = next(line for line in lines if line.startswith("my_field_string "))
    assert row.split()[-5:] == ["my_field", "yes", "3", "4", "b2"]
    assert "device.os_long" in text and "Batches (commit order):" in text
    batch_3 = next(line for line in lines if line.startswith("2 "))
    assert "b3" in batch_3 and "my_field_string=2" in batch_3 and "tags=1" in batch_3


def test_arrivals_an_older_version_kept_in_the_snapshot_summary_still_count(
    tmp_path: Path,
) -> None:
    """Versions before the per-snapshot table property kept a batch's arrivals in its
    snapshot's summary (``toolkit.arrivals``): a table they wrote keeps its statistics."""
    from toolkit.core.batch.arrivals import Arrivals
    from toolkit.core.batch.profile import profile

    cat = catalog(tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.old", Schema(NestedField(1, "n", LongType(), required=False)))
    brought = Arrivals.of(profile([{"n": 1}, {"n": 2}, {"n": None}]))
    t.append(pa.table({"n": pa.array([1, 2, None], pa.int64())}),
             snapshot_properties={BATCH_ID_PROPERTY: "b1", "toolkit.arrivals": brought.encode()})
    assert statistics(cat.load_table("db.old")).arrived("n") == {"long": 2}
