"""Tables other engines made with row-level deletes (Iceberg v2 merge-on-read).

Spark's merge-on-read DELETE, UPDATE and MERGE write position delete files; Flink upsert
tables and CDC pipelines write equality delete files, which Spark cannot write, so they are
written here through Iceberg's Java API in the tests' Spark JVM, as Iceberg's own tests do
(apache/iceberg ``data/src/test/java/org/apache/iceberg/data/FileHelpers.java``
``writeDeleteFile`` committed with ``table.newRowDelta().addDeletes(...)``, as in
``spark/src/test/java/org/apache/iceberg/spark/source/TestSparkReaderDeletes.java``
``testEqualityDeleteWithFilter``). PyIceberg 0.12 applies position deletes and refuses to
scan a table with equality deletes (apache/iceberg#6568).

What a user checks, reading back with Spark: deleted rows stay deleted after an ingest and
after a rewrite, live rows keep their values, and the counts a drop reports are those of
the live rows (as Spark counts them); without a Spark session, what PyIceberg cannot read is
refused in plain words, with nothing applied.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.errors import DataLossError, EqualityDeletesError
from toolkit.iceberg import spark_rewrite

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

KINDS = ("position", "equality")
_names = itertools.count()
#: both written as Spark's merge-on-read (format version 2)
MERGE_ON_READ = {"format-version": "2", "write.delete.mode": "merge-on-read",
                 "write.update.mode": "merge-on-read", "write.merge.mode": "merge-on-read"}
#: what every table holds before its deletes; rows 2 and 3 are deleted
ROWS = ((1, "a", 1), (2, "b", 2), (3, "c", 3), (4, None, 4))
LIVE = [(1, "a", 1), (4, None, 4)]


def with_deletes(spark: SparkSession, lakehouse: Catalog, kind: str,
                 fmt: str = "parquet") -> tuple[str, str]:
    """A table Spark made and filled, rows 2 and 3 then deleted by ``kind`` delete files:
    (its name, as Spark names it)."""
    name = f"deletes.{kind}{next(_names)}"
    full = f"{lakehouse.name}.{name}"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.deletes")
    props = {**MERGE_ON_READ, "write.format.default": fmt}
    listed = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(f"CREATE TABLE {full} (id bigint, v string, n int) USING iceberg "
              f"TBLPROPERTIES ({listed})")
    spark.createDataFrame(list(ROWS), "id bigint, v string, n int").writeTo(full).append()
    if kind == "position":
        spark.sql(f"DELETE FROM {full} WHERE id IN (2, 3)")
    else:
        delete_by_key(spark, full, "id", [2, 3])
    assert {r.content for r in spark.sql(f"SELECT content FROM {full}.delete_files")
            .collect()} == {1 if kind == "position" else 2}
    assert rows(spark, full) == LIVE
    return name, full


def delete_by_key(spark: SparkSession, full: str, column: str, keys: list[int]) -> None:
    """Commit one equality delete file removing the rows whose long ``column`` is in
    ``keys``: a Parquet file carrying the column's field ID, registered with Iceberg's
    ``FileMetadata`` and committed as a row delta, as a Flink upsert does."""
    jvm: Any = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, full)
    field_id = table.schema().findField(column).fieldId()
    path = f"{table.location()}/data/eq-delete-{next(_names)}.parquet"
    local = Path(path.removeprefix("file:"))
    field = pa.field(column, pa.int64(), metadata={"PARQUET:field_id": str(field_id)})
    pq.write_table(pa.table([pa.array(keys, pa.int64())], schema=pa.schema([field])), local)
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)  # type: ignore[union-attr]
    ids[0] = field_id
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
              .ofEqualityDeletes(ids).withPath(path).withFormat("parquet")
              .withFileSizeInBytes(local.stat().st_size).withRecordCount(len(keys)).build())
    table.newRowDelta().addDeletes(delete).commit()


def rows(spark: SparkSession, full: str) -> list[tuple[Any, ...]]:
    spark.catalog.refreshTable(full)
    return sorted((tuple(r) for r in spark.table(full).collect()), key=repr)


def lines(tmp_path: Path, records: list[dict[str, Any]]) -> str:
    path = tmp_path / f"batch{next(_names)}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.mark.parametrize("kind", KINDS)
def test_ingest_adds_a_column_and_deleted_rows_stay_deleted(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path, kind: str
) -> None:
    name, full = with_deletes(spark, lakehouse, kind)
    # RULES 3.3 (upsolver): a text for the int `n` lands in a new `n_string`
    report = toolkit.ingest(lines(tmp_path, [{"id": 5, "v": "e", "n": "many"}]), name,
                            lakehouse, spark, batch_id="day2")
    assert report.rows_written == 1
    assert rows(spark, full) == [(1, "a", 1, None), (4, None, 4, None), (5, "e", None, "many")]
    # its statistics come from the manifests and say the deletes are not subtracted
    stats = toolkit.statistics(lakehouse.load_table(name))
    listed = spark.sql(f"SELECT count(*) FROM {full}.delete_files").first()
    assert listed is not None and stats.delete_files == listed[0]
    assert f"{listed[0]} delete files not applied" in str(stats)


@pytest.mark.parametrize("kind", KINDS)
def test_a_widening_rewrite_keeps_deleted_rows_deleted(
    spark: SparkSession, lakehouse: Catalog, tmp_path: Path, kind: str
) -> None:
    name, full = with_deletes(spark, lakehouse, kind)
    # RULES 5 (widen): a text into the long `id` and a double into the int `n` rewrite both
    report = toolkit.ingest(lines(tmp_path, [{"id": "x6", "v": "f", "n": 6.5}]), name,
                            lakehouse, spark, policy="widen", allow_rewrites=True,
                            batch_id="day2")
    assert report.rows_written == 1
    assert rows(spark, full) == [("1", "a", 1.0), ("4", None, 4.0), ("x6", "f", 6.5)]


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_evolve_rewrites_an_equality_deleted_table_through_spark(
    spark: SparkSession, lakehouse: Catalog, fmt: str
) -> None:
    name, full = with_deletes(spark, lakehouse, "equality", fmt)
    toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    assert rows(spark, full) == [("1", "a", 1), ("4", None, 4)]
    assert {r[0] for r in spark.sql(f"SELECT file_format FROM {full}.data_files").collect()} \
        == {fmt.upper()}


def test_a_rewrite_without_spark_is_refused_in_plain_words(
    spark: SparkSession, lakehouse: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, full = with_deletes(spark, lakehouse, "equality")
    schema = lakehouse.load_table(name).schema()
    with monkeypatch.context() as no_session, pytest.raises(EqualityDeletesError) as caught:
        no_session.setattr(spark_rewrite, "spark_seeing", lambda _table: None)
        toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    text = str(caught.value)
    assert text.startswith(f"table {name}: the rewrite of id reads every row")
    assert "1 equality delete file " in text and "PyIceberg does not apply" in text
    assert "nothing was applied" in text and "toolkit.spark_session(catalog)" in text
    assert lakehouse.load_table(name).schema() == schema
    assert rows(spark, full) == LIVE


@pytest.mark.parametrize("kind", KINDS)
def test_a_drop_counts_only_the_live_rows_values(
    spark: SparkSession, lakehouse: Catalog, kind: str
) -> None:
    name, full = with_deletes(spark, lakehouse, kind)
    live = spark.sql(f"SELECT count(*) AS rows, count(v) AS values FROM {full}").first()
    assert live is not None and (live["rows"], live["values"]) == (2, 1)
    preview = toolkit.preview_evolution(lakehouse, name, [toolkit.ops.drop("v")])
    assert (preview.destruction.rows, preview.destruction.values) == (live["rows"],
                                                                      live["values"])
    with pytest.raises(DataLossError) as caught:
        toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")])
    assert "drops 1 column holding 1 value of 2 rows: v (1 value)" in str(caught.value)
    toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")], drop_data=True)
    assert rows(spark, full) == [(1, 1), (4, 4)]


def test_a_drop_without_spark_says_its_values_are_not_counted(
    spark: SparkSession, lakehouse: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, full = with_deletes(spark, lakehouse, "equality")
    monkeypatch.setattr(spark_rewrite, "spark_seeing", lambda _table: None)
    with pytest.raises(DataLossError) as caught:
        toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")])
    assert "v (values not counted: the table has 1 equality delete file, which PyIceberg " \
        "does not apply" in str(caught.value)
    # the rows of the files, deleted ones too (4; 2 live): a bound, said as one
    assert "drops 1 column of a table of up to 4 rows, not every value counted" \
        in str(caught.value)
    assert "v" in lakehouse.load_table(name).schema().column_names
    toolkit.evolve(lakehouse, name, [toolkit.ops.drop("v")], drop_data=True)
    assert rows(spark, full) == [(1, 1), (4, 4)]


@pytest.mark.parametrize(("kind", "fmt"), [("equality", "parquet"), ("position", "orc")])
def test_spark_reads_match_columns_changed_since_the_last_write(
    spark: SparkSession, lakehouse: Catalog, kind: str, fmt: str
) -> None:
    """Spark reads a snapshot with the schema it was written with; columns added and
    renamed since (a schema change writes no data) are matched by field ID."""
    name, full = with_deletes(spark, lakehouse, kind, fmt)
    toolkit.evolve(lakehouse, name, [toolkit.ops.add("w", "string"),
                                     toolkit.ops.rename("v", "label")])
    live = spark.sql(f"SELECT count(label) FROM {full}").first()
    assert live is not None
    counted = toolkit.preview_evolution(lakehouse, name, [toolkit.ops.drop("label")])
    assert counted.destruction.values == live[0] == 1
    toolkit.evolve(lakehouse, name, [toolkit.ops.widen("id", "string", rewrite=True)])
    assert rows(spark, full) == [("1", "a", 1, None), ("4", None, 4, None)]
