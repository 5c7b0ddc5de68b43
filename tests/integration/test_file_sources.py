"""Files of every format on real tables: ``ingest(path)`` gives what ``simulate([path])``
gives (field IDs, names, types, docs; rows through PyIceberg, Spark and DuckDB), for
Parquet, ORC, CSV, Avro and gzipped JSON; and streams of Parquet files, and streams a user
builds, ingest each micro-batch like a folder's."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import (
    assert_table_is_the_simulation,
)
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.stream import reports, stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

UTC = dt.UTC

#: two days of one feed; the second drifts (a price arrives as text, a count as a
#: fraction, a new field) and Parquet, ORC and Avro files carry each day's own types
DAY1 = [
    {"id": 1, "price": 1.5, "qty": 3, "name": "a,b", "ok": True, "day": dt.date(2024, 1, 2),
     "at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "tags": ["x", "y"],
     "dev": {"id": 7, "os": "ios"}},
    {"id": 2, "price": None, "qty": 4, "name": None, "ok": False, "day": None, "at": None,
     "tags": [], "dev": None},
]
DAY2 = [
    {"id": 3, "price": "n/a", "qty": 2.5, "name": 'say "hi"', "ok": None,
     "day": dt.date(2024, 1, 3), "at": dt.datetime(2024, 1, 3, tzinfo=UTC), "tags": None,
     "dev": {"id": 8, "os": "android"}, "amount": Decimal("9.99")},
]


def arrow_day(rows: list[dict[str, Any]], *, zone: str | None = "UTC") -> pa.Table:
    """A day as Arrow: id an int32, the price a float32 or (day 2) a string."""
    drifted = isinstance(rows[0]["price"], str)
    fields = [
        ("id", pa.int32()), ("price", pa.string() if drifted else pa.float32()),
        ("qty", pa.float64() if drifted else pa.int64()), ("name", pa.string()),
        ("ok", pa.bool_()), ("day", pa.date32()), ("at", pa.timestamp("us", zone)),
        ("tags", pa.list_(pa.string())),
        ("dev", pa.struct([("id", pa.int64()), ("os", pa.string())])),
    ]
    if drifted:
        fields.append(("amount", pa.decimal128(9, 2)))
    if zone is None:
        rows = [{**r, "at": r["at"] and r["at"].replace(tzinfo=None)} for r in rows]
    return pa.Table.from_pylist(rows, pa.schema(fields))


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(arrow_day(rows), path)
    return path


def write_orc(path: Path, rows: list[dict[str, Any]]) -> Path:
    po.write_table(arrow_day(rows, zone=None), path)  # ORC's timestamp: naive, read as UTC
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Texts only: CSV has no types (RULES 1 detects the ISO dates); lists and records
    as their JSON text."""
    import csv
    import io

    def text(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, dt.datetime):
            return v.isoformat().replace("+00:00", "Z")
        if isinstance(v, list | dict):
            return json.dumps(v)
        return str(v).lower() if isinstance(v, bool) else str(v)

    names = list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO(newline="")
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(names)
    w.writerows([[text(r.get(k)) for k in names] for r in rows])
    path.write_bytes(gzip.compress(out.getvalue().encode()) if path.suffix == ".gz"
                     else out.getvalue().encode())
    return path


def write_avro(path: Path, rows: list[dict[str, Any]]) -> Path:
    import fastavro

    def opt(t: Any) -> list[Any]:
        return ["null", t]

    drifted = isinstance(rows[0]["price"], str)
    fields = [
        {"name": "id", "type": "int"},
        {"name": "price", "type": opt("string" if drifted else "float")},
        {"name": "qty", "type": "double" if drifted else "long"},
        {"name": "name", "type": opt("string")}, {"name": "ok", "type": opt("boolean")},
        {"name": "day", "type": opt({"type": "int", "logicalType": "date"})},
        {"name": "at", "type": opt({"type": "long", "logicalType": "timestamp-micros"})},
        {"name": "tags", "type": opt({"type": "array", "items": "string"})},
        {"name": "dev", "type": opt({"type": "record", "name": "Dev", "fields": [
            {"name": "id", "type": "long"}, {"name": "os", "type": "string"}]})},
    ]
    if drifted:
        fields.append({"name": "amount", "type": opt(
            {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2})})
    schema = {"type": "record", "name": "Event", "fields": fields}
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), rows)
    return path


def write_json_gz(path: Path, rows: list[dict[str, Any]]) -> Path:
    def default(v: Any) -> str:
        return v.isoformat().replace("+00:00", "Z") if isinstance(v, dt.date) else str(v)

    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r, default=default) + "\n" for r in rows)
    return path


WRITERS = {
    "parquet": (write_parquet, ".parquet"),
    "orc": (write_orc, ".orc"),
    "csv": (write_csv, ".csv.gz"),
    "avro": (write_avro, ".avro"),
    "json.gz": (write_json_gz, ".json.gz"),
}


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_ingest_of_files_equals_the_simulation_of_the_same_files(
    fmt: str, lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    write, suffix = WRITERS[fmt]
    paths = [write(tmp_path / f"day{i}{suffix}", day) for i, day in enumerate((DAY1, DAY2), 1)]
    name = f"files.{fmt.replace('.', '_')}"
    reports_ = [ingest(p, name, lakehouse, spark, batch_id=p.name) for p in paths]
    sim = toolkit.simulate(paths)  # each path one batch
    assert [r.plan.changes for r in reports_] == [p.changes for p in sim.plans]
    assert [r.rows_written for r in reports_] == [2, 1]
    assert {r.routed_in for r in reports_} == ({"jvm"} if fmt == "json.gz" else {"python"})
    assert_table_is_the_simulation(spark, lakehouse, name, sim)
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert (types["day"], types["at"]) == ("date", "timestamptz")
    if fmt == "csv":  # every cell a text: the ISO ones were detected (RULES 1)
        assert (types["price"], types["qty"]) == ("string", "string")
    else:  # it did drift
        assert {"price_string", "qty_double"} <= set(types)


def test_a_json_array_document_ingests_like_its_records(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """A .json array document is parsed in Python and reaches the JVM as JSON lines."""
    doc = tmp_path / "day.json"
    doc.write_text(json.dumps([{"n": 2**70, "s": "é"}, {"n": 1.5, "tags": [1]}], indent=1))
    report = ingest(doc, "files.array", lakehouse, spark, batch_id="doc")
    assert report.routed_in == "jvm" and report.rows_written == 2
    assert_table_is_the_simulation(spark, lakehouse, "files.array", toolkit.simulate([doc]))


# ------------------------------------------------------------------ streams


def drop(folder: Path, name: str, rows: list[dict[str, Any]], write: Any) -> Path:
    """Write a file beside the folder, then move it in whole (what a stream needs)."""
    tmp = write(folder.parent / f".{name}", rows)
    return Path(shutil.move(tmp, folder / name))


def run_stream(source: Any, table: str, lakehouse: Catalog, spark: SparkSession,
               checkpoint: Path, **kw: Any) -> list[Any]:
    query = stream(source, table, lakehouse, spark, checkpoint=checkpoint,
                   trigger={"availableNow": True}, query_name=table.replace(".", "_"), **kw)
    query.awaitTermination(120)
    assert not query.isActive and query.exception() is None
    return reports(query).reports


def write_with_extra(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A day's Parquet file with one more column, ``extra``."""
    plain = [{k: v for k, v in r.items() if k != "extra"} for r in rows]
    table = arrow_day(plain).append_column("extra", pa.array([r["extra"] for r in rows]))
    pq.write_table(table, path)
    return path


def test_a_stream_of_parquet_files_equals_the_simulation_of_its_waves(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    landing, checkpoint = tmp_path / "landing", tmp_path / "checkpoint"
    landing.mkdir()
    first = [{**r, "price": None if r["price"] is None else r["price"] + 1} for r in DAY1]
    drop(landing, "a.parquet", DAY1, write_parquet)
    drop(landing, "b.parquet", first, write_parquet)
    wave1 = run_stream(landing, "files.streamed", lakehouse, spark, checkpoint)
    # the second wave brings a new column: the restarted query reads the folder's schema
    later = [{**DAY1[0], "id": 9, "extra": "new"}]
    drop(landing, "c.parquet", later, write_with_extra)
    wave2 = run_stream(landing, "files.streamed", lakehouse, spark, checkpoint)
    assert [r.batch_id for r in wave1 + wave2] == ["files_streamed:0", "files_streamed:1"]
    sim = toolkit.simulate([[*DAY1, *first], later])
    assert_table_is_the_simulation(spark, lakehouse, "files.streamed", sim)


def test_a_streaming_dataframe_built_by_hand_is_ingested_micro_batch_by_micro_batch(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    lines, typed = tmp_path / "lines", tmp_path / "typed"
    lines.mkdir()
    typed.mkdir()
    (lines / "a.jsonl").write_text('{"n": 1, "s": "x"}\n{"n": "two"}\n')
    write_parquet(typed / "a.parquet", DAY1)

    text = spark.readStream.text(str(lines))  # one string column: JSON lines
    got = run_stream(text, "files.by_hand", lakehouse, spark, tmp_path / "c1")
    assert [(r.batch_id, r.rows_written, r.routed_in) for r in got] == [
        ("files_by_hand:0", 2, "jvm")
    ]
    assert_table_is_the_simulation(
        spark, lakehouse, "files.by_hand", toolkit.simulate([[{"n": 1, "s": "x"}, {"n": "two"}]])
    )

    schema = spark.read.parquet(str(typed)).schema
    frame = spark.readStream.schema(schema).parquet(str(typed))  # typed columns
    got = run_stream(frame, "files.typed_by_hand", lakehouse, spark, tmp_path / "c2")
    assert [(r.batch_id, r.rows_written) for r in got] == [("files_typed_by_hand:0", 2)]
    assert_table_is_the_simulation(
        spark, lakehouse, "files.typed_by_hand", toolkit.simulate([typed / "a.parquet"])
    )
    with pytest.raises(TypeError, match="streaming DataFrame"):
        stream(spark.read.parquet(str(typed)), "files.x", lakehouse, spark)
