"""Tables whose first data files carry no Iceberg field IDs: plain Parquet written by
pyarrow, then registered with PyIceberg's ``Table.add_files`` or Spark's ``add_files``
procedure (as a Hive table migrated to Iceberg has them). Readers give those files'
columns their IDs through the table's name mapping (``schema.name-mapping.default``, the
spec's Column Projection); the toolkit evolves such a table as a user drives it
(``profile``, ``simulate``, ``ingest`` of drifting JSON lines, ``evolve`` with its own
operations), and after each step Spark, PyIceberg and DuckDB read the old rows' values
under the columns' current names, the new rows' values, and nothing of an old column in
a new column that took its name (RULES 6: a rename never moves data, an added column
never reads values of a dropped one).

Peers re-expressed: apache/iceberg ``spark/v3.5/spark-extensions/src/test/java/org/apache/
iceberg/spark/extensions/TestAddFilesProcedure.java`` (``addDataUnpartitioned``: the table
reads what the plain files hold; ``addDataUnpartitionedExtraCol``: a column the files lack
reads null); apache/iceberg-python ``tests/integration/test_add_files.py``
(``test_add_files_to_unpartitioned_table_with_schema_updates``: files added after a schema
change read beside the first ones); apache/iceberg ``core/src/test/java/org/apache/iceberg/
mapping/TestMappingUpdates.java`` (a rename adds the new name beside the old one, an added
field, nested too, gets its own entry: ``testRenameMappingUpdate``,
``testRenameNestedFieldMappingUpdate``, ``testAddColumnMappingUpdate``,
``testAddNestedColumnMappingUpdate``). Deliberate difference (RULES 6): where a new field
takes a name the mapping holds for another field, Iceberg (apache/iceberg#811) and
PyIceberg (``tests/table/test_name_mapping.py::test_update_mapping``, field 19 ``name``)
move the name to the new field; the toolkit leaves it with the field the old files hold it
for (``toolkit.iceberg.name_mapping``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import NameMapping
from pyiceberg.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from sqlglot import exp

import toolkit
from tests.integration.readers import (
    canonical,
    read_duckdb,
    read_pyiceberg,
    read_spark,
    schema_summary,
)
from toolkit.core.evolution.operations import Operation

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_names = itertools.count()

ADDRESS = pa.struct([("city", pa.string()), ("zip", pa.string())])
#: the columns as a Hive table (or pandas) writes them: no field ID anywhere
PLAIN = pa.schema([("id", pa.int64()), ("name", pa.string()), ("n", pa.int32()),
                   ("amount", pa.int64()), ("legacy", pa.string()), ("addr", ADDRESS)])
OLD_FILES: list[list[dict[str, Any]]] = [
    [{"id": 1, "name": "ann", "n": 5, "amount": 100, "legacy": "L1",
      "addr": {"city": "Lyon", "zip": "69001"}},
     {"id": 2, "name": "bob", "n": None, "amount": 200, "legacy": "L2", "addr": None}],
    [{"id": 3, "name": None, "n": -7, "amount": None, "legacy": "L3",
      "addr": {"city": "Nice", "zip": None}}],
]  # fmt: skip
OLD = [r for rows in OLD_FILES for r in rows]


def _plain_files(folder: Path) -> list[str]:
    folder.mkdir()
    paths = []
    for i, rows in enumerate(OLD_FILES):
        path = folder / f"part-{i}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=PLAIN), path)
        paths.append(str(path))
    # the premise: Parquet columns without IDs (else the mapping is never consulted)
    fields = cast(pa.Schema, pq.read_schema(paths[0]))
    metadata = [fields.field(n).metadata for n in fields.names]
    assert not any(m and b"PARQUET:field_id" in m for m in metadata)
    return paths


def adopt(made_by: str, lakehouse: Catalog, spark: SparkSession, tmp_path: Path) -> str:
    """A table holding the plain files, registered as its maker does it; its name."""
    name = f"noids.{made_by}{next(_names)}"
    if ("noids",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("noids")
    files = _plain_files(tmp_path / "plain")
    if made_by == "pyiceberg":
        schema = Schema(
            NestedField(1, "id", LongType()), NestedField(2, "name", StringType()),
            NestedField(3, "n", IntegerType()), NestedField(4, "amount", LongType()),
            NestedField(5, "legacy", StringType()),
            NestedField(6, "addr", StructType(NestedField(7, "city", StringType()),
                                              NestedField(8, "zip", StringType()))),
        )  # fmt: skip
        lakehouse.create_table(name, schema).add_files(files)
    else:
        full = f"{lakehouse.name}.{name}"
        spark.sql(f"CREATE TABLE {full} (id BIGINT, name STRING, n INT, amount BIGINT, "
                  "legacy STRING, addr STRUCT<city: STRING, zip: STRING>) USING iceberg")
        source = exp.Literal.string(f"`parquet`.`{tmp_path / 'plain'}`").sql("spark")
        target = exp.Literal.string(name).sql("spark")
        spark.sql(f"CALL {lakehouse.name}.system.add_files(table => {target}, "
                  f"source_table => {source})")
    table = lakehouse.load_table(name)
    assert table.name_mapping() is not None, "add_files gives the table a name mapping"
    return name


def read_all(spark: SparkSession, lakehouse: Catalog, name: str) -> list[dict[str, Any]]:
    """The rows as Spark, PyIceberg and DuckDB read them: the same from all three."""
    table = lakehouse.load_table(name)
    rows = read_pyiceberg(table)
    assert read_spark(spark, f"{lakehouse.name}.{name}") == rows
    assert read_duckdb(table) == rows
    return rows


def by_id(rows: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {r["id"]: r for r in rows}


def padded(value: Any, t: Any) -> Any:
    """``value`` as a reader of a table of type ``t`` sees it: fields added after it was
    written read null."""
    if isinstance(t, StructType) and value is not None:
        return {f.name: padded(value.get(f.name), f.field_type) for f in t.fields}
    return value


def jsonl(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("made_by", ["pyiceberg", "spark"])
def test_the_plain_files_read_as_they_were_written(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path, made_by: str
) -> None:
    name = adopt(made_by, lakehouse, spark, tmp_path)
    assert read_all(spark, lakehouse, name) == canonical(OLD)


#: drift as JSON lines bring it: per policy, what each takes without a rewrite
DRIFT = {
    # a long field as text (-> amount_string), a new field, a new field in the struct
    "upsolver": [{"id": 10, "name": "cy", "amount": "n/a", "note": "first",
                  "addr": {"city": "Oslo", "zip": "0150", "floor": 3}}],
    # past the int column's range: widened to long in place; a new field
    "widen": [{"id": 11, "n": 2**40, "note": "wide", "addr": {"city": "Rome"}}],
}  # fmt: skip


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_drifting_ingests_keep_the_old_rows_and_files_added_later_read_too(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path, policy: str
) -> None:
    name = adopt("pyiceberg", lakehouse, spark, tmp_path)
    batch = jsonl(tmp_path / "day2.jsonl", DRIFT[policy])
    table = lakehouse.load_table(name)
    # what a user looks at first: the batch's profile, then the simulation over the table
    assert toolkit.profile(batch).stats("id").present == len(DRIFT[policy])
    sim = toolkit.simulate([batch], table.schema(), policy=policy)
    assert sim.plans[0].changed
    report = toolkit.ingest(batch, name, lakehouse, spark, "day2", policy=policy)
    assert report.quarantined == 0
    table = lakehouse.load_table(name)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    expected = canonical([padded(r, sim.schema.as_struct()) for r in OLD] + sim.rows)
    assert read_all(spark, lakehouse, name) == expected

    # more plain files land after the drift, holding the columns it added
    # (test_add_files_to_unpartitioned_table_with_schema_updates)
    added = [c.name for c in sim.schema.fields if c.name not in PLAIN.names]
    assert added, "the drift added columns"
    later = tmp_path / "later.parquet"
    row = {"id": 30, **{c: "late" for c in added}}
    arrow_schema = pa.schema([("id", pa.int64()), *((c, pa.string()) for c in added)])
    pq.write_table(pa.Table.from_pylist([row], schema=arrow_schema), later)
    lakehouse.load_table(name).add_files([str(later)])
    rows = by_id(read_all(spark, lakehouse, name))
    assert {c: rows[30][c] for c in added} == {c: "late" for c in added}
    assert by_id(expected) == {i: r for i, r in rows.items() if i != 30}


def test_the_toolkits_own_operations_keep_the_old_values_under_the_new_names(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    name = adopt("spark", lakehouse, spark, tmp_path)
    o = toolkit.ops
    plan: list[Operation] = [o.rename("name", "full_name"), o.rename("addr.zip", "postcode"),
            o.drop("legacy"), o.widen("n", "long"), o.move_first("amount")]
    preview = toolkit.preview_evolution(lakehouse, name, plan)
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state, drop_data=True)
    expected = [{"amount": r["amount"], "id": r["id"], "full_name": r["name"], "n": r["n"],
                 "addr": None if r["addr"] is None
                 else {"city": r["addr"]["city"], "postcode": r["addr"]["zip"]}}
                for r in OLD]
    assert read_all(spark, lakehouse, name) == canonical(expected)
    assert [f.name for f in lakehouse.load_table(name).schema().fields][:2] == ["amount", "id"]

    # columns under names only the old files hold: one a dropped column's, one a renamed
    # column's old name, one inside the struct; the old rows have no value for them
    plan = [o.add("legacy", "string"), o.add("name", "string"), o.add("addr.zip", "string")]
    preview = toolkit.preview_evolution(lakehouse, name, plan)
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    for r in expected:
        r.update(legacy=None, name=None)
        if r["addr"] is not None:
            r["addr"]["zip"] = None
    assert read_all(spark, lakehouse, name) == canonical(expected)

    # and the new rows fill them, by ingest as by the operations
    batch = jsonl(tmp_path / "again.jsonl", [{"id": 40, "name": "new name", "legacy": "new",
                                              "full_name": "F", "addr": {"zip": "75001"}}])
    toolkit.ingest(batch, name, lakehouse, spark, "again")
    rows = by_id(read_all(spark, lakehouse, name))
    assert (rows[40]["name"], rows[40]["legacy"], rows[40]["full_name"]) == ("new name", "new",
                                                                             "F")
    assert rows[40]["addr"] == {"city": None, "postcode": None, "zip": "75001"}
    assert {i: r for i, r in rows.items() if i != 40} == by_id(canonical(expected))


def test_a_drifting_field_named_as_a_dropped_column_starts_empty(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    """The column ``ingest`` adds (its fast schema commit) for a field under a dropped
    column's name reads null in the old rows."""
    name = adopt("pyiceberg", lakehouse, spark, tmp_path)
    preview = toolkit.preview_evolution(lakehouse, name, [toolkit.ops.drop("legacy")])
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state, drop_data=True)
    batch = jsonl(tmp_path / "back.jsonl", [{"id": 50, "legacy": 7}])
    toolkit.ingest(batch, name, lakehouse, spark, "back")
    rows = by_id(read_all(spark, lakehouse, name))
    assert rows[50]["legacy"] == 7
    assert [rows[r["id"]]["legacy"] for r in OLD] == [None] * len(OLD)


def test_the_mapping_keeps_every_name_its_files_hold(lakehouse: Catalog, tmp_path: Path,
                                                     spark: SparkSession) -> None:
    """The mapping itself after a rename and adds, top level and nested
    (TestMappingUpdates), and after a new field under a held name (the difference)."""
    name = adopt("pyiceberg", lakehouse, spark, tmp_path)
    o = toolkit.ops
    plan: list[Operation] = [o.rename("name", "full_name"), o.rename("addr.zip", "postcode"),
            o.add("addr.floor", "int"), o.add("name", "string"), o.add("tags", "string")]
    preview = toolkit.preview_evolution(lakehouse, name, plan)
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    table = lakehouse.load_table(name)
    mapping = table.name_mapping()
    assert isinstance(mapping, NameMapping)
    schema = table.schema()
    found = {f.field_id: f.names for f in mapping}
    assert found[schema.find_field("full_name").field_id] == ["name", "full_name"]
    assert found[schema.find_field("tags").field_id] == ["tags"]
    assert schema.find_field("name").field_id not in found  # its name is the old files'
    addr = next(f for f in mapping if f.field_id == schema.find_field("addr").field_id)
    inner = {f.field_id: f.names for f in addr.fields}
    assert inner[schema.find_field("addr.postcode").field_id] == ["zip", "postcode"]
    assert inner[schema.find_field("addr.floor").field_id] == ["floor"]


def test_a_rewrite_converts_the_plain_files_and_time_travel_still_reads_them(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    """A widening that rewrites (RULES 5) reads the plain files through the mapping and
    writes their values converted; the snapshot before it still reads the old values,
    because the old column keeps its name for the files it had (the new one, under the
    same name, is written with field IDs)."""
    name = adopt("pyiceberg", lakehouse, spark, tmp_path)
    before = lakehouse.load_table(name).current_snapshot()
    assert before is not None
    preview = toolkit.preview_evolution(lakehouse, name, [toolkit.ops.widen("amount", "string")])
    assert [r.rows for r in preview.plan.rewrites] == [len(OLD)]
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)
    converted = [{**r, "amount": None if r["amount"] is None else str(r["amount"])} for r in OLD]
    assert read_all(spark, lakehouse, name) == canonical(converted)
    # time travel, through PyIceberg and Spark SQL's VERSION AS OF
    then = lakehouse.load_table(name).scan(snapshot_id=before.snapshot_id).to_arrow()
    assert canonical(then.to_pylist()) == canonical(OLD)
    source = exp.to_table(f"{lakehouse.name}.{name}")
    source.set("version", exp.Version(this="VERSION", kind="AS OF",
                                      expression=exp.Literal.number(before.snapshot_id)))
    sql = exp.select("*").from_(source).sql(dialect="spark")
    assert canonical([r.asDict(recursive=True) for r in spark.sql(sql).collect()]) == \
        canonical(OLD)


POINT = pa.struct([("x", pa.int64()), ("y", pa.int64())])
PLACE = pa.struct([("lat", pa.float64())])


def test_fields_inside_lists_and_maps_keep_reading(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    """Renamed and added fields inside a list's elements and a map's values: the old file
    and a file written later under the new names both read."""
    if ("noids",) not in lakehouse.list_namespaces():
        lakehouse.create_namespace("noids")
    name = f"noids.nested{next(_names)}"
    table = lakehouse.create_table(name, Schema(
        NestedField(1, "id", LongType()),
        NestedField(2, "points", ListType(3, StructType(
            NestedField(4, "x", LongType()), NestedField(5, "y", LongType())),
            element_required=False)),
        NestedField(6, "places", MapType(7, StringType(), 8, StructType(
            NestedField(9, "lat", DoubleType())), value_required=False)),
    ))  # fmt: skip
    first = tmp_path / "first.parquet"
    plain = pa.schema([("id", pa.int64()), ("points", pa.list_(POINT)),
                       ("places", pa.map_(pa.string(), PLACE))])
    pq.write_table(pa.Table.from_pylist(
        [{"id": 1, "points": [{"x": 1, "y": 2}], "places": [("home", {"lat": 1.5})]}],
        schema=plain), first)  # fmt: skip
    table.add_files([str(first)])
    o = toolkit.ops
    plan: list[Operation] = [
        o.rename("points.x", "px"), o.rename("places.value.lat", "latitude"),
        o.add("places.value.alt", "double"), o.add("points.z", "long"),
    ]
    preview = toolkit.preview_evolution(lakehouse, name, plan)
    toolkit.evolve(lakehouse, name, preview.plan, expected=preview.state)

    later = tmp_path / "later.parquet"
    point = pa.struct([("px", pa.int64()), ("y", pa.int64()), ("z", pa.int64())])
    place = pa.struct([("latitude", pa.float64()), ("alt", pa.float64())])
    renamed = pa.schema([("id", pa.int64()), ("points", pa.list_(point)),
                         ("places", pa.map_(pa.string(), place))])
    row = {"id": 2, "points": [{"px": 3, "y": 4, "z": 5}],
           "places": [("work", {"latitude": 2.5, "alt": 9.0})]}
    pq.write_table(pa.Table.from_pylist([row], schema=renamed), later)
    table = lakehouse.load_table(name)
    table.add_files([str(later)])

    expected = {
        1: ([{"px": 1, "y": 2, "z": None}], {"home": {"latitude": 1.5, "alt": None}}),
        2: ([{"px": 3, "y": 4, "z": 5}], {"work": {"latitude": 2.5, "alt": 9.0}}),
    }
    # (PyIceberg hands a map back as key-value pairs, DuckDB as a dict)
    via_py = {r["id"]: (r["points"], dict(r["places"])) for r in read_pyiceberg(table)}
    assert via_py == expected
    assert {r["id"]: (r["points"], r["places"]) for r in read_duckdb(table)} == expected
    via_spark = read_spark(spark, f"{lakehouse.name}.{name}")
    assert {r["id"]: (r["points"], r["places"]) for r in via_spark} == expected
