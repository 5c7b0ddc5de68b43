"""Running a peer case two ways: on the pure path (``toolkit.ops.plan_evolution`` over a
TableLayout built from the start schema by the Iceberg adapter) and through
``toolkit.evolve`` on a real table of an embedded SQLite catalog (PyIceberg only)."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.io import load_file_io
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.serializers import ToOutputFile
from pyiceberg.table.metadata import new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.types import NestedField, StringType

import toolkit
from tests.peers.model import Case, Refusal, assert_schema, check_refusal
from toolkit.core.evolution.layout import TableLayout
from toolkit.errors import ToolkitError
from toolkit.iceberg.schema import from_iceberg, identifier_ids, to_iceberg

_tables = itertools.count()

def layout_from(
    start: Schema, last_column_id: int, has_rows: bool = False, format_version: int = 2
) -> TableLayout:
    """The start schema as the core's TableLayout, by the adapter the table path uses; a
    peer's schema has no rows unless the case gives some."""
    return TableLayout(
        from_iceberg(start),
        last_column_id=last_column_id,
        identifier_ids=identifier_ids(start),
        has_rows=has_rows,
        format_version=format_version,
    )


def schema_from(layout: TableLayout) -> Schema:
    """A planned layout back as a PyIceberg schema."""
    return to_iceberg(layout.schema, identifier_ids=layout.identifier_ids)


def run_pure(case: Case) -> None:
    layout = layout_from(case.start, case.last_column_id, bool(case.rows), case.format_version)
    ops = _operations(case, case.expect)
    if ops is None:
        return
    if isinstance(case.expect, Refusal):
        with pytest.raises(ToolkitError) as info:
            toolkit.ops.plan_evolution(layout, ops, table="peers.t")
        check_refusal(info.value, case.expect)
        return
    plan = toolkit.ops.plan_evolution(layout, ops, table="peers.t")
    assert_schema(schema_from(plan.after), case.expect, "pure path")


def make_table(catalog: Catalog, start: Schema, last_column_id: int) -> str:
    """A table whose current schema is exactly ``start`` (its field IDs as given, which
    ``create_table`` would reassign) and whose last assigned column ID is
    ``last_column_id``: its first metadata file is written here and registered."""
    catalog.create_namespace_if_not_exists("peers")
    name = f"peers.t{next(_tables)}"
    location = f"{_warehouse(catalog)}/peers/{name.split('.')[1]}"
    metadata = new_table_metadata(
        Schema(NestedField(1, "placeholder", StringType())), UNPARTITIONED_PARTITION_SPEC,
        UNSORTED_SORT_ORDER, location,
    )
    metadata = metadata.model_copy(update={
        "schemas": [Schema(*start.fields, schema_id=0,
                           identifier_field_ids=start.identifier_field_ids)],
        "last_column_id": last_column_id,
    })
    path = f"{location}/metadata/00000-{uuid.uuid4()}.metadata.json"
    ToOutputFile.table_metadata(metadata, load_file_io(location=path).new_output(path))
    catalog.register_table(name, path)
    return name


def _warehouse(catalog: Catalog) -> str:
    return str(catalog.properties["warehouse"]).rstrip("/")


def _operations(case: Case, expect: Schema | Refusal) -> list[Any] | None:
    """The case's operations; None when building them was the refusal it expects (an
    operation that cannot even be written, which reaches no table)."""
    try:
        return list(case.ops())
    except ToolkitError as exc:
        if not isinstance(expect, Refusal):
            raise
        check_refusal(exc, expect)
        return None


def run_table(case: Case, catalog: Catalog) -> None:
    expect = case.expect if case.expect_table is None else case.expect_table
    ops = _operations(case, expect)
    if ops is None:
        return
    # a format v2 table even where the case's schema carries v3 defaults: PyIceberg does not
    # write v3 metadata, and a table read with defaults must keep them all the same
    name = make_table(catalog, case.start, case.last_column_id)
    assert_schema(catalog.load_table(name).schema(), case.start, "table as created")
    if case.rows:
        tbl = catalog.load_table(name)
        tbl.append(pa.Table.from_pylist(list(case.rows), schema=tbl.schema().as_arrow()))
    if isinstance(expect, Refusal):
        with pytest.raises(ToolkitError) as info:
            toolkit.evolve(catalog, name, ops)
        check_refusal(info.value, expect)
        assert_schema(catalog.load_table(name).schema(), case.start, "table after the refusal")
        return
    toolkit.evolve(catalog, name, ops)
    assert_schema(catalog.load_table(name).schema(), expect, "table")
