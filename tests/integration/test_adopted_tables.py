"""Tables the toolkit did not create (issue 26): made by Spark SQL (a map of structs, an
array of structs, NOT NULL fields, an identifier field, a partition spec, a sort order) and
by PyIceberg (required list elements and map values too), then fed drifting batches under
both policies. Every flag a plan does not list stays as it was, and Spark, PyIceberg and
DuckDB read the table back."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import (
    DoubleType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

import toolkit
from tests.integration.readers import read_duckdb, read_pyiceberg, read_spark
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Struct
from toolkit.errors import IncompatibleRecordError
from toolkit.iceberg.operations import layout_of
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_names = itertools.count()

#: drifting batches every policy takes without touching existing fields' flags: a new
#: column, a new field in the array's structs, longs into string and double columns, and
#: an object for the map column
BATCHES: list[list[dict[str, Any]]] = [
    [{"id": 10, "name": "a", "ts": "2024-01-02T03:04:05Z", "vals": [1.5],
      "points": [{"x": 1, "y": 2}], "extra": True}],
    [{"id": 11, "name": 7, "ts": "2024-01-03T00:00:00Z", "vals": [2],
      "points": [{"x": 3, "y": 4, "z": 5}], "locations": {"home": {"lat": 1.5, "lon": 2.5}}}],
]  # fmt: skip


def flags(table: Table) -> tuple[dict[int, tuple[object, ...]], tuple[object, ...]]:
    """Per field ID: name, required, doc and type (nested types by kind, with their
    elements' and values' required flags); and the identifier fields, spec and order."""
    layout = layout_of(table)
    out: dict[int, tuple[object, ...]] = {}

    def walk(t: ColumnType) -> None:
        if isinstance(t, Struct):
            for c in t.fields:
                kind = c.type if isinstance(c.type, str) else type(c.type).__name__
                out[c.id] = (c.name, c.required, c.doc, kind)
                walk(c.type)
        elif isinstance(t, ListOf):
            out[t.element_id] = ("element", t.element_required)
            walk(t.element)
        elif isinstance(t, MapOf):
            out[t.value_id] = ("value", t.value_required)
            walk(t.value)

    walk(layout.schema)
    return out, (layout.identifier_ids, layout.partition, layout.sort)


def spark_table(spark: SparkSession, lakehouse: Catalog) -> str:
    name = f"adopted.spark{next(_names)}"
    full = f"{lakehouse.name}.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.adopted")
    spark.sql(
        f"CREATE TABLE {full} (id BIGINT NOT NULL COMMENT 'row key', name STRING, "
        "ts TIMESTAMP, locations MAP<STRING, STRUCT<lat: DOUBLE, lon: DOUBLE>>, "
        "points ARRAY<STRUCT<x: BIGINT, y: BIGINT>>, vals ARRAY<DOUBLE>, "
        "meta STRUCT<source: STRING NOT NULL, n: INT>) USING iceberg PARTITIONED BY (days(ts))"
    )
    spark.sql(f"ALTER TABLE {full} SET IDENTIFIER FIELDS id")
    spark.sql(f"ALTER TABLE {full} WRITE ORDERED BY name")
    spark.sql(
        f"INSERT INTO {full} VALUES (1, 'first', TIMESTAMP '2024-01-01 00:00:00', "
        "map('work', named_struct('lat', 1.0D, 'lon', 2.0D)), "
        "array(named_struct('x', 1L, 'y', 2L)), array(0.5D), named_struct('source', 's', 'n', 1))"
    )
    return name


def pyiceberg_table(lakehouse: Catalog) -> str:
    if ("adopted",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("adopted")
    name = f"adopted.py{next(_names)}"
    schema = Schema(
        NestedField(1, "id", LongType(), required=True, doc="row key"),
        NestedField(2, "name", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "locations", MapType(5, StringType(), 6, StructType(
            NestedField(7, "lat", DoubleType()), NestedField(8, "lon", DoubleType())),
            value_required=True)),
        NestedField(9, "points", ListType(10, StructType(
            NestedField(11, "x", LongType()), NestedField(12, "y", LongType())),
            element_required=True)),
        NestedField(13, "vals", ListType(14, DoubleType(), element_required=True)),
        identifier_field_ids=[1],
    )  # fmt: skip
    lakehouse.create_table(
        name,
        schema=schema,
        partition_spec=PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day")),
        sort_order=SortOrder(SortField(2, IdentityTransform())),
    )
    return name


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
@pytest.mark.parametrize("made_by", ["spark", "pyiceberg"])
def test_an_adopted_table_keeps_every_flag_its_plans_do_not_list(
    spark: SparkSession, lakehouse: Catalog, made_by: str, policy: str
) -> None:
    name = spark_table(spark, lakehouse) if made_by == "spark" else pyiceberg_table(lakehouse)
    table = lakehouse.load_table(name)
    before, around = flags(table)
    for i, batch in enumerate(BATCHES):
        report = ingest(batch, name, lakehouse, spark, f"b{i}", policy=policy)
        assert report.quarantined == 0
        # these batches need no change to an existing field: every plan only adds
        assert all(op.op == "add" for op in report.plan.operations), report.plan
    table.refresh()
    after, around_after = flags(table)
    assert {i: after.get(i) for i in before} == before
    assert around_after == around
    assert table.schema().find_field("extra") is not None
    assert table.schema().find_field("points.z") is not None

    ids = [r["id"] for r in read_pyiceberg(table)]
    assert sorted(ids) == sorted([10, 11] + ([1] if made_by == "spark" else []))
    assert [r["id"] for r in read_spark(spark, f"{lakehouse.name}.{name}")] == ids
    assert [r["id"] for r in read_duckdb(table)] == ids
    # Spark sees the NOT NULL fields as not nullable still
    spark_schema = spark.table(f"{lakehouse.name}.{name}").schema
    assert not spark_schema["id"].nullable
    names = {r["id"]: r["name"] for r in read_spark(spark, f"{lakehouse.name}.{name}")}
    assert names[11] == "7"  # a long into the string column, as text (RULES 2)


#: records an adopted table cannot store whole: the identifier missing, null, or a text
#: that goes to `id_string`; a null among list elements the table requires; a record for
#: a struct that lacks its required field (the Spark table's `meta.source`)
LEAVE_EMPTY: list[dict[str, Any]] = [
    {"id": 20, "name": "kept", "vals": [1.5], "meta": {"source": "s"}},
    {"name": "no id"},
    {"id": None, "name": "null id"},
    {"id": "21", "name": "id as text"},
    {"id": 22, "vals": [1.5, None]},
    {"id": 23, "meta": {"n": 5}},
    {"id": 24, "name": "kept too", "meta": None},
]


def _as_source(kind: str, records: list[dict[str, Any]], spark: SparkSession,
               tmp_path: Any) -> Any:
    if kind == "records":
        return records
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    if kind == "jsonl":
        return str(path)
    return spark.read.json(str(path), schema="id long, name string")  # typed DataFrame


@pytest.mark.parametrize(("made_by", "policy", "kind"), [
    ("spark", "upsolver", "records"), ("spark", "upsolver", "jsonl"),
    ("pyiceberg", "upsolver", "jsonl"), ("pyiceberg", "upsolver", "records"),
    ("spark", "upsolver", "dataframe"),
])  # fmt: skip
def test_a_record_that_leaves_a_required_field_empty_waits_in_the_quarantine(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Any, made_by: str, policy: str,
    kind: str,
) -> None:
    """Where a write of the whole batch failed on Spark (``Value at index is null``) and
    ``simulate`` wrote rows the table cannot hold, each such record is set aside, raw,
    naming the field; the rest of the batch lands as ``simulate`` says."""
    name = spark_table(spark, lakehouse) if made_by == "spark" else pyiceberg_table(lakehouse)
    table = lakehouse.load_table(name)
    records = LEAVE_EMPTY if kind != "dataframe" else \
        [{"id": r.get("id") if isinstance(r.get("id"), int) else None, "name": r.get("name")}
         for r in LEAVE_EMPTY]
    before = read_pyiceberg(table)
    sim = toolkit.simulate([before, records], table.schema(), policy=policy)
    source = _as_source(kind, records, spark, tmp_path)
    report = ingest(source, name, lakehouse, spark, "b0", policy=policy)

    # (a JSON line is kept as the file holds it, spaces and all: compared as parsed)
    expected_aside = sorted((q.field, json.dumps(json.loads(q.raw), sort_keys=True))
                            for q in sim.quarantined if q.reason == "missing-required")
    assert expected_aside, "the batch holds records the table cannot store"
    assert report.quarantined == len(sim.quarantined)
    held = spark.table(f"{lakehouse.name}.{name}__quarantine").collect()
    assert sorted((r["field"], json.dumps(json.loads(r["raw"]), sort_keys=True)) for r in held
                  if r["reason"] == "missing-required") == expected_aside
    assert all("is required" in r["detail"] for r in held if r["reason"] == "missing-required")
    table.refresh()
    ids = sorted(r["id"] for r in read_pyiceberg(table))
    assert ids == sorted(r["id"] for r in sim.rows)
    assert None not in ids and 20 in ids and 24 in ids
    assert sorted(r["id"] for r in read_spark(spark, f"{lakehouse.name}.{name}")) == ids
    assert sorted(r["id"] for r in read_duckdb(table)) == ids


def test_failing_on_a_record_that_leaves_a_required_field_empty_names_it(
    lakehouse: Catalog,
) -> None:
    table = lakehouse.load_table(pyiceberg_table(lakehouse))
    with pytest.raises(IncompatibleRecordError, match="field 'id' is required") as err:
        toolkit.simulate([LEAVE_EMPTY], table.schema(), on_incompatible="fail")
    assert err.value.item.record == {"name": "no id"}


def test_the_widen_policy_sets_aside_a_null_among_required_elements(
    lakehouse: Catalog,
) -> None:
    """The widen policy makes a required column optional when a null arrives (RULES 5),
    the identifier fields aside (refused whole); required list elements stay required,
    so the record holding a null among them waits in the quarantine."""
    schema = lakehouse.load_table(pyiceberg_table(lakehouse)).schema()
    sim = toolkit.simulate([LEAVE_EMPTY], Schema(*schema.fields), policy="widen")
    assert [(q.reason, q.field) for q in sim.quarantined] == [("missing-required",
                                                               "vals.element")]
    assert sim.quarantined[0].record == {"id": 22, "vals": [1.5, None]}
    assert not sim.schema.find_field("id").required
    assert len(sim.rows) == len(LEAVE_EMPTY) - 1
