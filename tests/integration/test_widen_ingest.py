"""RULES 5 on real tables: ``ingest(..., policy="widen")`` equals the Python reference,
widens in place, quarantines what the table cannot take (or fails the batch), and sets
aside lines that are not records under either policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

import toolkit
from tests.integration.readers import canonical, read_duckdb, read_spark, schema_summary
from toolkit.errors import IncompatibleRecordError
from toolkit.iceberg.quarantine import quarantine
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

DECLARED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType(), required=False),
    NestedField(3, "f", FloatType(), required=False),
    NestedField(4, "d", DoubleType(), required=False),
    NestedField(5, "s", StringType(), required=False),
    NestedField(6, "b", BinaryType(), required=False),
    NestedField(7, "flag", BooleanType(), required=False),
    NestedField(8, "tags", ListType(10, IntegerType(), element_required=False), required=False),
    NestedField(9, "pos", StructType(NestedField(11, "x", FloatType(), required=False)),
                required=False),
)

# Every cell a JSON value can reach: longs, doubles and texts into int, float, double,
# string, binary and boolean columns, in place only (no rewrite is approved here).
BATCHES: list[list[dict[str, Any]]] = [
    [
        {"id": 1, "i": 5, "f": 0.5, "d": 1, "s": 7, "b": "bytes", "flag": True, "tags": [1, 2],
         "pos": {"x": 0.25}},
        {"id": 2, "i": 2**40, "f": 0.1, "d": 2.5, "s": 2.5, "tags": [2**33], "pos": {"x": 0.1}},
    ],
    [
        {"id": 3, "i": "text", "flag": 1},  # a rewrite not approved, and an X cell
        {"id": 4, "b": 5, "new": "fresh"},  # long into binary: X
        {"i": 6, "s": "kept"},  # a required column left null: made optional
    ],
]


def _fresh(lakehouse: Catalog, name: str) -> None:
    lakehouse.create_namespace_if_not_exists("widen")
    if lakehouse.table_exists(name):
        lakehouse.drop_table(name)
    lakehouse.create_table(name, schema=DECLARED)


def test_widening_ingest_equals_the_simulation_and_quarantines_the_same_records(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    _fresh(lakehouse, "widen.cells")
    reports = [
        ingest(b, "widen.cells", lakehouse, spark, batch_id=f"w{i}", policy="widen")
        for i, b in enumerate(BATCHES)
    ]
    sim = toolkit.simulate(BATCHES, from_iceberg(DECLARED), policy="widen", allow_rewrites=False)
    table = lakehouse.load_table("widen.cells")

    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    fields = {f.name: f for f in table.schema().fields}
    assert str(fields["i"].field_type) == "long"  # int -> long in place
    assert str(fields["f"].field_type) == "double"  # float -> double in place
    assert str(table.schema().find_field("tags.element").field_type) == "long"
    assert str(table.schema().find_field("pos.x").field_type) == "double"
    assert fields["id"].required is False  # left null by a record of batch 2
    assert [[(r.before, r.after, r.in_place) for r in rep.plan.retypes] for rep in reports] == [
        [(r.before, r.after, r.in_place) for r in p.retypes] for p in sim.plans
    ]
    assert [(r.before, r.after) for r in reports[1].plan.pending] == [("long", "string")]

    expected = canonical(sim.rows)
    assert read_spark(spark, f"{lakehouse.name}.widen.cells") == expected
    assert read_duckdb(table) == expected

    q = quarantine(lakehouse, "widen.cells")
    got = sorted((r.raw, r.reason, r.field, r.observed, r.batch_id) for r in q.rows)
    want = sorted((item.raw, item.reason, item.field, item.observed, f"w{item.batch}")
                  for item in sim.quarantined)
    assert got == want
    assert {r.reason for r in q.rows} == {"incompatible", "rewrite-not-approved"}
    assert reports[1].quarantined == 2 and reports[1].rows_written == 1

    # each committed plan is logged in the table by the commit that applied it
    log = toolkit.lineage(table)
    assert [(e.decided_by, e.batch) for e in log] == [("RULES 5", "w0"), ("RULES 5", "w1")]
    assert [str(op) for op in log[1].operations] == ["+ add new: string", "? make optional id"]


def test_on_incompatible_fail_refuses_the_batch_and_writes_nothing(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    _fresh(lakehouse, "widen.fail")
    before = lakehouse.load_table("widen.fail").schema()
    with pytest.raises(IncompatibleRecordError, match=r"field 'flag': value 12 observed as long "
                       r"does not fit column type boolean"):
        ingest([{"id": 1, "i": 2**40}, {"id": 2, "flag": 12}], "widen.fail", lakehouse, spark,
               policy="widen", on_incompatible="fail")
    table = lakehouse.load_table("widen.fail")
    assert table.schema() == before and table.current_snapshot() is None
    assert not quarantine(lakehouse, "widen.fail")


def test_lines_that_are_no_records_go_to_quarantine_and_the_rest_is_written(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "dirty.jsonl"
    path.write_text("\n".join([
        json.dumps({"a": 1}), "{not json", json.dumps([1, 2]), json.dumps({"a": "x"}), "",
    ]) + "\n")
    report = ingest(str(path), "widen.dirty", lakehouse, spark, batch_id="d1")
    assert (report.rows_written, report.quarantined) == (2, 2)
    table = lakehouse.load_table("widen.dirty")
    assert read_duckdb(table) == canonical(toolkit.simulate([[{"a": 1}, {"a": "x"}]]).rows)
    q = quarantine(lakehouse, "widen.dirty")
    assert sorted((r.reason, r.raw) for r in q.rows) == [
        ("malformed", "{not json"), ("not-a-record", "[1, 2]")
    ]
    again = ingest(str(path), "widen.dirty", lakehouse, spark, batch_id="d1")
    assert again.skipped and len(quarantine(lakehouse, "widen.dirty").rows) == 2

    with pytest.raises(IncompatibleRecordError, match="malformed JSON '{not json'"):
        ingest(str(path), "widen.dirty", lakehouse, spark, batch_id="d2", on_incompatible="fail")


def test_a_rewrite_waits_for_approval_then_keeps_the_name_and_old_snapshots(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    from toolkit.pipeline.preview import plan_preview
    from toolkit.pipeline.replay import replay

    name = "widen.rewrite"
    ingest([{"n": 1}, {"n": 2}], name, lakehouse, spark, batch_id="r0", policy="widen")
    old = lakehouse.load_table(name).current_snapshot()
    assert old is not None

    # unattended: the rewrite is not approved, the text waits in quarantine
    first = ingest([{"n": 3}, {"n": "three"}], name, lakehouse, spark, batch_id="r1",
                   policy="widen")
    assert [(r.before, r.after) for r in first.plan.pending] == [("long", "string")]
    assert (first.rows_written, first.quarantined) == (1, 1)
    assert str(lakehouse.load_table(name).schema().find_field("n").field_type) == "long"

    # the preview shows the rewrite with what it touches; approving it runs it
    batch = [{"n": "four"}]
    preview = plan_preview(batch, name, lakehouse, policy="widen")
    [rewrite] = preview.plan.rewrites
    assert (rewrite.before, rewrite.after, rewrite.rows) == ("long", "string", 3)
    assert rewrite.bytes and "REWRITE" in str(preview.plan)
    report = ingest(batch, name, lakehouse, spark, batch_id="r2", policy="widen",
                    approved=preview.plan, expected=preview.state)
    table = lakehouse.load_table(name)
    field = table.schema().find_field("n")
    assert (str(field.field_type), field.field_id) == ("string", rewrite.new_id)
    sim = toolkit.simulate([[{"n": 1}, {"n": 2}], [{"n": 3}], batch], policy="widen")
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert report.plan.rewrites and report.rows_written == 1
    assert read_spark(spark, f"{lakehouse.name}.{name}") == canonical(sim.rows)
    # time travel: the snapshot before the rewrite still reads its longs
    before = spark.sql(
        f"SELECT n FROM {lakehouse.name}.{name} VERSION AS OF {old.snapshot_id}"
    ).collect()
    assert sorted(r.n for r in before) == [1, 2]

    # the quarantined text now fits: replay it, nothing lost, nothing twice
    log = toolkit.lineage(table)
    assert [(e.decided_by, e.batch) for e in log] == [("RULES 5", "r0"), ("RULES 5", "r2")]
    replayed = replay(lakehouse, name, spark, policy="widen")
    assert replayed.written == 1
    values = sorted(r["n"] for r in read_spark(spark, f"{lakehouse.name}.{name}"))
    assert values == ["1", "2", "3", "four", "three"]
    assert not quarantine(lakehouse, name)


def test_a_declared_map_column_widens_its_values_in_place(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    from pyiceberg.types import MapType

    name = "widen.maps"
    declared = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "m", MapType(3, StringType(), 4, IntegerType(), value_required=False),
                    required=False),
    )
    lakehouse.create_namespace_if_not_exists("widen")
    if lakehouse.table_exists(name):
        lakehouse.drop_table(name)
    lakehouse.create_table(name, schema=declared)
    batches: list[list[dict[str, Any]]] = [
        [{"id": 1, "m": {"a": 1, "b": None}}, {"id": 2, "m": {}}],
        [{"id": 3, "m": {"a": 2, "b": 2**40}}, {"id": 4, "m": {"a": True}}, {"id": 5, "m": 7}],
    ]
    reports = [ingest(b, name, lakehouse, spark, batch_id=f"m{i}", policy="widen")
               for i, b in enumerate(batches)]
    sim = toolkit.simulate(batches, from_iceberg(declared), policy="widen",
                           allow_rewrites=False)
    table = lakehouse.load_table(name)

    assert str(table.schema().find_field("m").field_type) == "map<string, long>"
    assert table.schema().find_field("m.value").field_id == 4  # promoted in place
    # a JSON integer is a long (RULES 1): the first batch already widens the values
    assert [[(r.path, r.before, r.after, r.in_place) for r in rep.plan.retypes]
            for rep in reports] == [[(("m", "value"), "int", "long", True)], []]
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert (reports[1].rows_written, reports[1].quarantined) == (1, 2)
    expected = canonical(sim.rows)
    assert [r["m"] for r in expected] == [{"a": 1, "b": None}, {}, {"a": 2, "b": 2**40}]
    assert read_spark(spark, f"{lakehouse.name}.{name}") == expected
    assert read_duckdb(table) == expected
    q = quarantine(lakehouse, name)
    assert sorted((r.field, r.reason, r.observed) for r in q.rows) == [
        ("m", "incompatible", "long"), ("m.value", "incompatible", "boolean")
    ]
