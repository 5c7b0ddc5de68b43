"""Tables whose data files are ORC or Avro, as Spark, Flink or Trino users make them
(``write.format.default``). PyIceberg 0.12 writes only Parquet and reads no Avro data file;
the toolkit rewrites such a table's rows through the process's Spark session that sees the
catalog, in the table's own format, counts a drop's values through it, and where there is
no such session says so in plain words, naming the table and its format, with nothing
applied (no session is simulated by making the lookup find none). What a user checks: the rows Spark
reads back, the format of every data file (Spark's ``files`` metadata table), the error
text and the counts.

Re-expresses, on foreign formats, iceberg-java's
``spark/src/test/java/org/apache/iceberg/spark/sql/TestAlterTable.java``
(``testDropColumn``: the column is gone, the rows stay) and the toolkit's own
``tests/integration/test_widen_ingest.py`` (a rewrite's rows read back converted).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.errors import DataLossError, FileFormatError, WriteFormatError
from toolkit.iceberg import spark_rewrite
from toolkit.iceberg.new_tables import table_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

FORMATS = ("orc", "avro")
_names = itertools.count()


def made_by_spark(spark: SparkSession, lakehouse: Catalog, fmt: str) -> tuple[str, str]:
    """A table made and filled by Spark SQL in ``fmt``: (its name, as Spark names it)."""
    name = f"foreign.{fmt}{next(_names)}"
    full = f"{lakehouse.name}.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.foreign")
    spark.sql(f"CREATE TABLE {full} (id bigint, v string, n int) USING iceberg "
              f"TBLPROPERTIES ('write.format.default'='{fmt}')")
    spark.sql(f"INSERT INTO {full} VALUES (1, 'a', 1), (2, NULL, 2), (3, 'c', NULL)")
    return name, full


def rows(spark: SparkSession, full: str) -> list[tuple[Any, ...]]:
    spark.catalog.refreshTable(full)
    return sorted((tuple(r) for r in spark.table(full).collect()), key=repr)


def file_formats(spark: SparkSession, full: str) -> set[str]:
    """The format of every data file of the current snapshot, as Spark lists them."""
    return {r[0] for r in spark.sql(f"SELECT file_format FROM {full}.files").collect()}


def tables_in(spark: SparkSession, lakehouse: Catalog) -> set[str]:
    return {r.tableName for r in spark.sql(f"SHOW TABLES IN {lakehouse.name}.foreign").collect()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_ingest_rewrite_runs_through_spark_in_the_tables_format(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path, fmt: str
) -> None:
    name, full = made_by_spark(spark, lakehouse, fmt)
    day = tmp_path / "day.jsonl"
    # RULES 5: a text into the long `id` and a double into the int `n` rewrite both
    day.write_text("\n".join(json.dumps(r) for r in [
        {"id": "x4", "v": "d", "n": 4.5}, {"id": 5, "v": "e", "n": 6}]) + "\n")
    report = toolkit.ingest(str(day), name, lakehouse, spark, policy="widen",
                            allow_rewrites=True, batch_id="day")
    assert report.rows_written == 2
    assert rows(spark, full) == sorted([
        ("1", "a", 1.0), ("2", None, 2.0), ("3", "c", None), ("x4", "d", 4.5), ("5", "e", 6.0),
    ], key=repr)
    assert file_formats(spark, full) == {fmt.upper()}
    assert tables_in(spark, lakehouse) >= {name.split(".")[1]}
    assert not [t for t in tables_in(spark, lakehouse) if "__toolkit_new_" in t]
    # the staging table's own metadata is gone: every file in the folder is the table's
    table = lakehouse.load_table(name)
    on_disk = {str(p) for p in Path(table.location().removeprefix("file:")).rglob("*")
               if p.is_file() and not p.name.startswith(".")}
    assert on_disk - {urlparse(p).path for p in table_files(table)} == set()


@pytest.mark.parametrize("fmt", FORMATS)
def test_rewrite_without_spark_is_refused_in_plain_words(
    spark: SparkSession, lakehouse: Catalog, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, full = made_by_spark(spark, lakehouse, fmt)
    before = rows(spark, full)
    schema = lakehouse.load_table(name).schema()
    with monkeypatch.context() as no_session, pytest.raises(FileFormatError) as caught:
        no_session.setattr(spark_rewrite, "spark_seeing", lambda _table: None)
        toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    text = str(caught.value)
    shown = {"orc": "ORC", "avro": "Avro"}[fmt]
    assert text.startswith(f"table {name}: the rewrite of id reads every row")
    assert f"data files are {shown} (write.format.default={fmt})" in text
    assert "nothing was applied" in text and "toolkit.spark_session(catalog)" in text
    assert rows(spark, full) == before
    assert lakehouse.load_table(name).schema() == schema

    # with the session, the same plan runs, in the table's format
    toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    assert rows(spark, full) == sorted([("1", "a", 1), ("2", None, 2), ("3", "c", None)],
                                       key=repr)
    assert file_formats(spark, full) == {fmt.upper()}


def test_avro_drop_says_its_values_are_not_counted_and_runs_when_told(
    spark: SparkSession, lakehouse: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, full = made_by_spark(spark, lakehouse, "avro")
    # with the session, the values are counted: 2 of the 3 rows hold one
    with pytest.raises(DataLossError) as counted:
        toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")])
    assert "drops 1 column holding 2 values of 3 rows: v (2 values)" in str(counted.value)
    preview = toolkit.preview_evolution(lakehouse, name, [toolkit.ops.drop("v")])
    assert preview.destruction.values == 2

    monkeypatch.setattr(spark_rewrite, "spark_seeing", lambda _table: None)
    with pytest.raises(DataLossError) as caught:
        toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")])
    assert str(caught.value).startswith(
        f"table {name}: this plan drops 1 column of a table of 3 rows, not every value "
        "counted: v (values not counted: the table's data files are Avro, which PyIceberg "
        "cannot read and whose manifests count no values; a Spark session that sees this "
        "catalog (toolkit.spark_session(catalog)) counts them)")
    assert caught.value.columns == ("v",)
    assert "v" in lakehouse.load_table(name).schema().column_names

    toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")], drop_data=True)
    assert rows(spark, full) == sorted([(1, 1), (2, 2), (3, None)], key=repr)


def test_orc_drop_counts_from_the_manifests(spark: SparkSession, lakehouse: Catalog) -> None:
    name, full = made_by_spark(spark, lakehouse, "orc")
    with pytest.raises(DataLossError) as caught:
        toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")])
    assert "drops 1 column holding 2 values of 3 rows" in str(caught.value)
    toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")], drop_data=True)
    assert rows(spark, full) == sorted([(1, 1), (2, 2), (3, None)], key=repr)


def test_spark_counts_nested_values(spark: SparkSession, lakehouse: Catalog) -> None:
    """Leaves below structs, lists and maps, counted where their parents are not null."""
    name = f"foreign.nested{next(_names)}"
    full = f"{lakehouse.name}.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.foreign")
    spark.sql(f"CREATE TABLE {full} (id bigint, s struct<a: bigint, b: array<string>>, "
              "m map<string, struct<x: bigint>>) USING iceberg "
              "TBLPROPERTIES ('write.format.default'='avro')")
    spark.sql(f"INSERT INTO {full} VALUES "
              "(1, named_struct('a', 1, 'b', array('p', NULL, 'q')),"
              " map('k', named_struct('x', 1))),"
              "(2, NULL, map('k', named_struct('x', NULL), 'l', NULL)),"
              "(3, named_struct('a', NULL, 'b', NULL), NULL)")
    counts = {path: toolkit.preview_evolution(lakehouse, name, [toolkit.ops.drop(path)]
                                              ).destruction.values
              for path in ("s", "s.b", "m", "m.value.x")}
    # s: a=1 and p, q; s.b: p, q; m: keys k, k, l and x=1; m.value.x: 1
    assert counts == {"s": 3, "s.b": 2, "m": 4, "m.value.x": 1}


def test_a_rewrite_on_a_table_whose_write_format_is_junk_is_refused_in_plain_words(
    spark: SparkSession, lakehouse: Catalog
) -> None:
    """``write.format.default`` set by another tool to no format Iceberg writes: the
    rewrite is refused naming the table and the value, and nothing changes (it failed
    with a bare ``KeyError: 'CSV'``)."""
    name = "foreign.junk_format"
    toolkit.ingest([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], name, lakehouse, spark)
    table = lakehouse.load_table(name)
    with table.transaction() as tx:
        tx.set_properties({"write.format.default": "csv\x1b[31m"})
    schema = lakehouse.load_table(name).schema()
    with pytest.raises(WriteFormatError) as caught:
        toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    text = str(caught.value)
    assert text.startswith(f"table {name}: the rewrite of id reads every row")
    assert "names none Iceberg writes data files in ('csv\\x1b[31m'; parquet, orc or avro)" \
        in text and "\x1b" not in text
    assert "nothing was applied" in text
    assert lakehouse.load_table(name).schema() == schema
    assert sorted(r["id"] for r in lakehouse.load_table(name).scan().to_arrow().to_pylist()) \
        == [1, 2]
