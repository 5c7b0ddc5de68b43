"""Nothing stored is destroyed without a yes (docs/rules.md, "What asks for a yes"): a plan
that drops columns holding values (a drop, the undo of an added column) states the
columns and their non-null values, and runs only with ``drop_data=True``. Counts come from
the manifests' metrics, or a scan where a file has none. Real tables, embedded catalog."""

from __future__ import annotations

import contextlib
import itertools

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError

import toolkit
from toolkit import ops
from toolkit.errors import DataLossError
from toolkit.iceberg.lineage import undo_preview
from toolkit.iceberg.operations import preview_evolution

NS = "destroy"
_names = itertools.count()


def new_table(lakehouse: Catalog, properties: dict[str, str] | None = None) -> str:
    with contextlib.suppress(NamespaceAlreadyExistsError):
        lakehouse.create_namespace(NS)
    name = f"{NS}.t{next(_names)}"
    schema = pa.schema([pa.field("id", pa.int64())])
    table = lakehouse.create_table(name, schema=schema, properties=properties or {})
    table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    return name


def add_gift_and_note(lakehouse: Catalog, name: str) -> int:
    """Entry adding ``gift`` and ``note``; then three rows, two with a gift, none a note."""
    entry = toolkit.evolve(lakehouse, name, [ops.add("gift", "string"), ops.add("note", "string")])
    table = lakehouse.load_table(name)
    table.append(pa.table({
        "id": pa.array([3, 4, 5], pa.int64()),
        "gift": pa.array(["pen", None, "mug"]),
        "note": pa.array([None, None, None], pa.string()),
    }))
    return entry.seq


def names(lakehouse: Catalog, name: str) -> list[str]:
    return [f.name for f in lakehouse.load_table(name).schema().fields]


def test_undo_of_an_added_column_holding_values_is_refused_with_the_counts(
    lakehouse: Catalog,
) -> None:
    name = new_table(lakehouse)
    seq = add_gift_and_note(lakehouse, name)
    before = lakehouse.load_table(name).metadata

    with pytest.raises(toolkit.ToolkitError) as caught:
        toolkit.undo(lakehouse, name, seq)

    assert isinstance(caught.value, DataLossError) and isinstance(caught.value, ValueError)
    text = str(caught.value)
    assert "gift (2 values)" in text and "note (no values)" in text
    assert "drops 2 columns holding 2 values of 5 rows" in text
    assert "drop_data=True" in text
    assert caught.value.columns == ("gift",)
    # nothing changed: same schema, same log
    after = lakehouse.load_table(name).metadata
    assert after.current_schema_id == before.current_schema_id
    assert len(toolkit.lineage(lakehouse.load_table(name))) == 1

    done = toolkit.undo(lakehouse, name, seq, drop_data=True)
    assert done.reason == f"undo of lineage entry {seq}"
    assert names(lakehouse, name) == ["id"]


def test_a_column_that_holds_no_values_is_dropped_without_a_yes_and_says_so(
    lakehouse: Catalog,
) -> None:
    name = new_table(lakehouse)
    entry = toolkit.evolve(lakehouse, name, [ops.add("note", "string")])

    preview = undo_preview(lakehouse, name, entry.seq)
    assert not preview.destruction.needs_yes
    assert "drops 1 column holding no values (note): nothing stored is destroyed" in str(preview)

    toolkit.undo(lakehouse, name, entry.seq)  # no drop_data needed: nothing is destroyed
    assert names(lakehouse, name) == ["id"]


def test_a_drop_in_evolve_needs_drop_data(lakehouse: Catalog) -> None:
    name = new_table(lakehouse)
    add_gift_and_note(lakehouse, name)

    with pytest.raises(DataLossError, match=r"this plan drops 1 column holding 2 values"):
        toolkit.evolve(lakehouse, name, [ops.drop("gift")])
    assert names(lakehouse, name) == ["id", "gift", "note"]

    preview = preview_evolution(lakehouse, name, [ops.drop("gift"), ops.drop("note")])
    assert [(c.name, c.values) for c in preview.destruction.columns] == [
        ("gift", 2), ("note", 0)]
    assert preview.destruction.rows == 5
    assert preview.destruction.bytes is not None and preview.destruction.bytes > 0

    toolkit.evolve(lakehouse, name, [ops.drop("note")])  # empty: no yes needed
    toolkit.evolve(lakehouse, name, [ops.drop("gift")], drop_data=True)
    assert names(lakehouse, name) == ["id"]


def test_a_column_added_and_dropped_by_one_plan_destroys_nothing(lakehouse: Catalog) -> None:
    name = new_table(lakehouse)
    preview = preview_evolution(lakehouse, name, [ops.add("tmp", "long"), ops.drop("tmp")])
    assert not preview.destruction


def test_values_are_counted_by_a_scan_where_files_have_no_metrics(lakehouse: Catalog) -> None:
    # metrics off: the manifests hold no value counts, so the values are read
    name = new_table(lakehouse, {"write.metadata.metrics.default": "none"})
    add_gift_and_note(lakehouse, name)
    preview = preview_evolution(lakehouse, name, [ops.drop("gift")])
    assert [(c.name, c.values) for c in preview.destruction.columns] == [("gift", 2)]
    with pytest.raises(DataLossError, match=r"gift \(2 values\)"):
        toolkit.evolve(lakehouse, name, [ops.drop("gift")])


def test_a_struct_column_counts_the_values_of_its_fields(lakehouse: Catalog) -> None:
    name = new_table(lakehouse)
    toolkit.evolve(lakehouse, name, [ops.add("addr", "struct<city: string, zip: long>")])
    table = lakehouse.load_table(name)
    table.append(pa.Table.from_pylist(
        [{"id": 9, "addr": {"city": "Oslo", "zip": None}}, {"id": 10, "addr": None}],
        schema=table.schema().as_arrow(),
    ))
    preview = preview_evolution(lakehouse, name, [ops.drop("addr")])
    assert [(c.name, c.values) for c in preview.destruction.columns] == [("addr", 1)]
    with pytest.raises(DataLossError, match=r"addr \(1 value\)"):
        toolkit.evolve(lakehouse, name, [ops.drop("addr")])
