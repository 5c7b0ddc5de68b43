"""Running a peer case two ways: on the pure path (``toolkit.ops.plan_evolution`` over a
TableLayout built from the start schema by the Iceberg adapter) and through
``toolkit.evolve`` on a real table of an embedded SQLite catalog (PyIceberg only).

A data case (:class:`~tests.peers.model.DataCase`) runs through ``toolkit.simulate``
(:func:`simulate_case`) and, for some, through ``toolkit.ingest`` batch by batch on a real
table (:func:`ingest_case`), whose schema and rows read back are the simulation's."""

from __future__ import annotations

import itertools
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from tests.integration.readers import canonical, read_spark
from tests.peers.model import (
    Case,
    DataCase,
    Lines,
    Refusal,
    assert_schema,
    check_refusal,
    shown_rows,
)
from toolkit.core.evolution.layout import TableLayout
from toolkit.errors import ToolkitError
from toolkit.iceberg.schema import from_iceberg, identifier_ids, to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


# --- data cases ------------------------------------------------------------------------------


def batches_of(case: DataCase, folder: Path) -> list[Any]:
    """The case's batches as ``simulate`` and ``ingest`` take them: records as a list, lines
    as a ``.jsonl`` file in ``folder``."""
    return [b.write(folder, f"batch{i}") if isinstance(b, Lines) else list(b)
            for i, b in enumerate(case.batches)]


def simulate_case(case: DataCase, folder: Path) -> toolkit.Simulation | None:
    """Run the case through ``toolkit.simulate`` and check what it expects; the simulation,
    or None for a refusal."""
    batches = batches_of(case, folder)
    if isinstance(case.expect, Refusal):
        with pytest.raises(ToolkitError) as info:
            toolkit.simulate(batches, case.start, **case.options).rows  # noqa: B018 - runs it
        check_refusal(info.value, case.expect)
        return None
    sim = toolkit.simulate(batches, case.start, **case.options)
    assert_schema(sim.schema, case.expect, "simulate")
    assert shown_rows(sim.rows) == list(case.rows)
    assert [(q.reason, q.field, q.record) for q in sim.quarantined] == [
        (a.reason, a.field, a.record) for a in case.aside
    ]
    return sim


def ingest_case(
    case: DataCase, sim: toolkit.Simulation, catalog: Catalog, spark: SparkSession, folder: Path
) -> None:
    """Ingest the case's batches one by one into a new table (created with the case's start
    schema, if any): its schema and its rows read back through Spark are the simulation's,
    and as many records went to the quarantine."""
    if case.start is not None:
        name = make_table(catalog, case.start, case.start.highest_field_id)
    else:
        name = f"peers.t{next(_tables)}"
    reports = [
        toolkit.ingest(batch, name, catalog, spark, batch_id=f"b{i}", **case.options)
        for i, batch in enumerate(batches_of(case, folder))
    ]
    assert_schema(catalog.load_table(name).schema(), sim.schema, f"table of {case.id}")
    assert read_spark(spark, f"{catalog.name}.{name}") == canonical(sim.rows), case.id
    assert sum(r.quarantined for r in reports) == len(sim.quarantined), case.id
