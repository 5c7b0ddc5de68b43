"""File sources, one kind per format: each is chosen for its paths, globs and folders by
extension, and each format's records equal the same data as Python records; on Spark, the
DataFrame of a source carries those very records (CSV's edge cases included)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import pickle
import uuid
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import toolkit
from toolkit.core.values.jsonlines import read_jsonl
from toolkit.core.values.scalars import Float, Int
from toolkit.errors import MalformedLineError, SourceFormatError
from toolkit.pipeline import files
from toolkit.pipeline.files import dataframe, read_avro, read_csv
from toolkit.pipeline.preview import plan_preview
from toolkit.pipeline.sources import SOURCE_KINDS, source_kind
from toolkit.spark.workers import records_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

UTC = dt.UTC

# ------------------------------------------------------------------ which kind


@pytest.mark.parametrize(("path", "kind"), [
    ("day1.jsonl", "jsonl"), ("day1.json", "jsonl"), ("day1.ndjson", "jsonl"),
    ("day1.jsonl.gz", "jsonl"), ("DAY1.JSON.GZ", "jsonl"), ("day1.ndjson.gz", "jsonl"),
    ("data/*.parquet", "parquet"), ("part-0.snappy.parquet", "parquet"), ("x.orc", "orc"),
    ("x.csv", "csv"), ("x.csv.gz", "csv"), ("data/**/*.avro", "avro"),
    (Path("events.parquet"), "parquet"),  # also a folder Spark wrote, named like a file
])
def test_a_file_source_is_chosen_by_its_extension(path: str | Path, kind: str) -> None:
    chosen = source_kind(path)
    assert chosen.name == kind and chosen.home == "files"
    assert (chosen.mode, chosen.stream_reader is None) == {
        "jsonl": ("json", False), "parquet": ("rows", False), "orc": ("rows", False),
        "csv": ("rows", False), "avro": ("pickle", True),
    }[kind]


@pytest.mark.parametrize("path", ["x.txt", "x.parquet.gz", "x.avro.gz", "data/*", "x"])
def test_a_path_of_no_format_is_refused_naming_the_accepted_extensions(path: str) -> None:
    with pytest.raises(SourceFormatError) as err:
        source_kind(path)
    for extension in (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".parquet", ".orc", ".csv",
                      ".csv.gz", ".avro"):
        assert extension in str(err.value)
    assert repr(path) in str(err.value)


def test_a_folder_or_glob_is_of_its_files_format(tmp_path: Path) -> None:
    folder = tmp_path / "landing"
    folder.mkdir()
    for name in ("a.parquet", "b.parquet", "_SUCCESS", ".a.parquet.crc"):
        (folder / name).write_bytes(b"")  # Spark's marker and checksum files are skipped
    assert source_kind(folder).name == "parquet"
    assert source_kind(str(folder / "*")).name == "parquet"
    assert files.source_files(folder) == [folder / "a.parquet", folder / "b.parquet"]

    (folder / "notes.txt").write_text("")
    with pytest.raises(SourceFormatError, match="several formats .*notes.txt"):
        source_kind(folder)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceFormatError, match="folder holding no file"):
        source_kind(empty)


def test_only_avro_among_file_kinds_cannot_stream() -> None:
    kinds = [k for k in SOURCE_KINDS if k.home == "files"]
    assert [k.name for k in kinds] == ["jsonl", "parquet", "orc", "csv", "avro"]
    assert [k.name for k in kinds if k.stream_reader is None] == ["avro"]


def test_file_readers_are_imported_only_to_read() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolkit.pipeline.sources as s; s.source_kind('x.avro'); "
        "print(*(m in sys.modules for m in ('fastavro', 'pyarrow.parquet', 'pyarrow.orc')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_streaming_avro_or_an_empty_typed_folder_is_refused(tmp_path: Path) -> None:
    from toolkit.pipeline.stream import stream

    (tmp_path / "a.avro").write_bytes(b"")
    with pytest.raises(ValueError, match="'avro' cannot be streamed; streamable: jsonl, parquet"):
        stream(tmp_path, "db.t", None, None)  # type: ignore[arg-type]  # refused before use
    with pytest.raises(SourceFormatError,
                       match="holds no parquet file .*schema= in Python, --schema on the"):
        files.stream_reader("parquet")(None, str(tmp_path / "none"), {}, None)  # type: ignore[arg-type]
    assert files.folder_format(tmp_path / "none") == "jsonl"  # files may come later


# ------------------------------------------------------------------ records of each format

ROWS = [
    {"i": 1, "f": 1.5, "n": 2**40, "x": 0.25, "s": "a", "ok": True, "d": dt.date(2024, 1, 2),
     "t": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "tags": ["a", "b"],
     "dev": {"id": 7, "os": "ios"}, "amount": Decimal("1.10"), "raw": b"\x00x"},
    {"i": None, "f": None, "n": -3, "x": None, "s": None, "ok": None, "d": None, "t": None,
     "tags": None, "dev": None, "amount": None, "raw": None},
]
#: what a typed file reads as: int and float columns keep their width (RULES 1)
TYPED = [{**r, "i": None if r["i"] is None else Int(r["i"]),
          "f": None if r["f"] is None else Float(r["f"])} for r in ROWS]


def arrow_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, pa.schema([
        ("i", pa.int32()), ("f", pa.float32()), ("n", pa.int64()), ("x", pa.float64()),
        ("s", pa.string()), ("ok", pa.bool_()), ("d", pa.date32()),
        ("t", pa.timestamp("us", "UTC")), ("tags", pa.list_(pa.string())),
        ("dev", pa.struct([("id", pa.int64()), ("os", pa.string())])),
        ("amount", pa.decimal128(9, 2)), ("raw", pa.binary()),
    ]))


def typed_exact(rows: list[Any]) -> list[Any]:
    """Records with each value's type beside it (Int == 1 would hide a lost type)."""
    def of(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: of(x) for k, x in v.items()}
        if isinstance(v, list):
            return [of(x) for x in v]
        if isinstance(v, dt.datetime):  # one instant, whichever zone object says UTC
            v = v.astimezone(UTC) if v.tzinfo else v.replace(tzinfo=UTC)
        return (type(v).__name__, v)
    return [of(r) for r in rows]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows) + "\n"
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


JSON_ROWS = [{"n": 1, "big": 2**70, "s": "é", "tags": [1, None]}, {"n": "x", "nested": {"a": 1.5}}]


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz", "d.ndjson", "d.json", "d.json.gz"])
def test_json_lines_read_plain_or_gzipped(tmp_path: Path, name: str) -> None:
    path = write_jsonl(tmp_path / name, JSON_ROWS)
    assert source_kind(path).records(path) == [JSON_ROWS]
    assert read_jsonl(path) == JSON_ROWS  # the core reader reads gzip too


@pytest.mark.parametrize("name", ["d.json", "d.json.gz"])
def test_a_json_file_starting_with_a_bracket_is_one_array_of_records(
    tmp_path: Path, name: str
) -> None:
    text = "\ufeff \n [\n" + ",\n".join(json.dumps(r) for r in JSON_ROWS) + "\n]\n"
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    assert source_kind(path).records(path) == [JSON_ROWS]
    lines = write_jsonl(tmp_path / "arrays.jsonl", [[1], [2]])  # type: ignore[list-item]
    # .jsonl: lines, whatever comes first; each such line is JSON but no record
    assert [[(u.raw, u.number, u.error.reason_key) for u in b]
            for b in source_kind(lines).records(lines)] == [
        [("[1]", 1, "not-a-record"), ("[2]", 2, "not-a-record")]]
    (tmp_path / "bad.json").write_text('[{"a": 1},\n{"a": 2}\n')
    with pytest.raises(MalformedLineError, match="bad.json is not one JSON array"):
        source_kind(tmp_path / "bad.json").records(tmp_path / "bad.json")


def test_parquet_and_orc_files_keep_their_types_each_file_one_batch(tmp_path: Path) -> None:
    pq.write_table(arrow_table(ROWS), tmp_path / "a.parquet")
    pq.write_table(arrow_table(ROWS[:1]), tmp_path / "b.parquet")
    got = source_kind(tmp_path).records(tmp_path)
    assert [typed_exact(b) for b in got] == [typed_exact(TYPED), typed_exact(TYPED[:1])]
    # ORC (Arrow's ORC writer cannot write a zoned timestamp: that column left out)
    po.write_table(arrow_table(ROWS).drop_columns(["t"]), tmp_path / "a.orc")
    expected = [{k: v for k, v in r.items() if k != "t"} for r in TYPED]
    assert typed_exact(source_kind(tmp_path / "a.orc").records(tmp_path / "a.orc")[0]) == (
        typed_exact(expected)
    )


def write_avro(path: Path, schema: dict[str, Any], rows: list[dict[str, Any]]) -> Path:
    import fastavro

    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), rows)
    return path


AVRO_SCHEMA = {"type": "record", "name": "Event", "namespace": "test", "fields": [
    {"name": "i", "type": ["null", "int"]},
    {"name": "f", "type": ["null", "float"]},
    {"name": "n", "type": "long"},
    {"name": "x", "type": ["null", "double"]},
    {"name": "s", "type": ["null", "string"]},
    {"name": "ok", "type": ["null", "boolean"]},
    {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
    {"name": "t", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
    {"name": "tags", "type": ["null", {"type": "array", "items": "string"}]},
    {"name": "dev", "type": ["null", {"type": "record", "name": "Dev", "fields": [
        {"name": "id", "type": "long"}, {"name": "os", "type": "string"}]}]},
    {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                         "precision": 9, "scale": 2}]},
    {"name": "raw", "type": ["null", "bytes"]},
]}


def test_avro_values_are_typed_by_their_schema(tmp_path: Path) -> None:
    path = write_avro(tmp_path / "a.avro", AVRO_SCHEMA, ROWS)
    assert typed_exact(source_kind(path).records(path)[0]) == typed_exact(TYPED)

    schema = {"type": "record", "name": "R", "fields": [
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "H", "size": 2}},
        {"name": "cents", "type": {"type": "fixed", "name": "C", "size": 4,
                                   "logicalType": "decimal", "precision": 5, "scale": 2}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "grid", "type": {"type": "array", "items": {"type": "array", "items": "float"}}},
        {"name": "either", "type": ["int", "long", "string"]},  # an integer reads long
        {"name": "again", "type": ["null", "Color", "H"]},
        {"name": "self", "type": ["null", "R"]},
    ]}
    row = {"ms": dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=UTC),
           "local": dt.datetime(2024, 1, 2, 3, 4, 5, 6), "id": str(uuid.UUID(int=5)),
           "color": "RED", "hash": b"ab", "cents": Decimal("1.25"), "at": dt.time(1, 2, 3),
           "m": {"k": 1}, "grid": [[0.5]], "either": 3, "again": "RED",
           "self": {"ms": dt.datetime(2024, 1, 1, tzinfo=UTC), "local": dt.datetime(2024, 1, 1),
                    "id": str(uuid.UUID(int=6)), "color": "RED", "hash": b"cd",
                    "cents": Decimal("0.01"), "at": dt.time(0), "m": {}, "grid": [],
                    "either": "s", "again": b"ef", "self": None}}
    got = read_avro(write_avro(tmp_path / "b.avro", schema, [row]))
    expected = {**row, "at": "01:02:03", "m": {"k": Int(1)}, "grid": [[Float(0.5)]],
                "self": {**row["self"], "at": "00:00:00"}}  # type: ignore[dict-item]
    assert typed_exact(got) == typed_exact([expected])

    not_records = write_avro(tmp_path / "c.avro", {"type": "array", "items": "int"}, [[1]])  # type: ignore[list-item]
    with pytest.raises(SourceFormatError, match="Avro file of array values, not of records"):
        read_avro(not_records)


# ------------------------------------------------------------------ CSV


def write_bytes(path: Path, text: str) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


#: CSV edge cases, one file each (a header line, then rows); see docs/rules.md, Sources
CSV_CASES = {
    # a BOM, empty cells (quoted or not: null), spaces kept, ISO texts left to RULES 1
    "plain.csv": '\ufeffid,text,note, spaced ,when\n1,,"",  x  ,2024-01-02\n'
                 '2,"multi\nline","q""uote",,2024-01-02T03:04:05Z\n\n3,"a,b",x"y,"\r\n",NaN\n',
    # CRLF files: a CRLF inside quotes reads \n (Spark normalises it); duplicate names
    "crlf.csv": 'id,text,A,a\r\n4,"crlf\r\ninside",1,2\r\n5,"lf\ninside",,\r\n',
    # CR files, an empty header name (Spark: _c<index>)
    "cr.csv": 'id,,x\r6,"cr\rinside",q\r',
    "zipped.csv.gz": "id,text\n7,zipped\n",
    "empty.csv": "",
    "header_only.csv": "id,text\n",
}
CSV_RECORDS = {
    "plain.csv": [
        {"id": "1", "text": None, "note": None, " spaced ": "  x  ", "when": "2024-01-02"},
        {"id": "2", "text": "multi\nline", "note": 'q"uote', " spaced ": None,
         "when": "2024-01-02T03:04:05Z"},
        {"id": "3", "text": "a,b", "note": 'x"y', " spaced ": "\r\n", "when": "NaN"},
    ],
    "crlf.csv": [{"id": "4", "text": "crlf\ninside", "A2": "1", "a3": "2"},
                 {"id": "5", "text": "lf\ninside", "A2": None, "a3": None}],
    "cr.csv": [{"id": "6", "_c1": "cr\ninside", "x": "q"}],
    "zipped.csv.gz": [{"id": "7", "text": "zipped"}],
    "empty.csv": [],
    "header_only.csv": [],
}


@pytest.fixture
def csv_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "csv"
    folder.mkdir()
    for name, text in CSV_CASES.items():
        write_bytes(folder / name, text)
    return folder


def test_csv_cells_are_texts_and_empty_cells_null(csv_folder: Path) -> None:
    for name, expected in CSV_RECORDS.items():
        assert read_csv(csv_folder / name) == expected, name
    assert source_kind(csv_folder).records(csv_folder) == [
        CSV_RECORDS[p.name] for p in sorted(csv_folder.iterdir())
    ]


@pytest.mark.parametrize(("text", "error"), [
    ("a,b\n1,2,3\n", "row 2 has 3 cell"),
    ("a,b\n1\n", "row 2 has 1 cell"),
    ('a,b\n1,"x"y\n', "not RFC 4180"),
    ('a,b\n1,"x\n', "not RFC 4180"),
    ("a,b\n1,x\r\n2,y\n", "mixes line endings"),
    ("a,b\r\n1,x\n2,y\r\n", "mixes line endings"),
])
def test_csv_spark_would_read_otherwise_is_refused(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(SourceFormatError, match=error):
        read_csv(write_bytes(tmp_path / "bad.csv", text))


#: beyond the first megabyte read: the line is still counted right
_LATE = b"id,name\n" + b"1,abcdefgh\n" * 110_000 + b"2,caf\xe9\n"


@pytest.mark.parametrize(("raw", "error"), [
    (b"id,name\n1,caf\xe9\n", r"line 2 holds bytes that are not UTF-8 \(b'\\xe9' at byte 13\)"
     r".*U\+FFFD.*iconv -f LATIN1"),
    ("id,name\n1,é\n".encode("utf-16"), r"line 1 .*it is UTF-16: iconv -f UTF-16 -t UTF-8"),
    (b"id,name\n1,caf\xc3", "its last line ends within a UTF-8 character"),
    (_LATE, r"line 110,002 holds .*\\xe9.* byte 1,210,013"),
], ids=["latin-1", "utf-16", "cut", "late"])
def test_csv_bytes_that_are_not_utf8_are_refused_naming_the_line(
    tmp_path: Path, raw: bytes, error: str
) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes(raw)
    with pytest.raises(SourceFormatError, match=error):
        read_csv(path)
    gz = tmp_path / "latin.csv.gz"
    gz.write_bytes(gzip.compress(raw))
    with pytest.raises(SourceFormatError, match=error):
        read_csv(gz)


# ------------------------------------------------------------------ on Spark


@pytest.mark.spark
def test_csv_bytes_spark_would_turn_into_replacement_characters_are_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Spark's CSV reader reads a byte that is not UTF-8 as U+FFFD: the Spark path checks
    the whole of each local file before Spark reads it, not only its header."""
    path = tmp_path / "late.csv"
    path.write_bytes(_LATE)
    with pytest.raises(SourceFormatError, match=r"late.csv: line 110,002 holds bytes"):
        source_kind(path).to_dataframe(spark, path)


def frame_records(df: Any, mode: str) -> list[Any]:
    """The records Spark's Python workers get from a source's DataFrame."""
    return [r for b in df._collect_as_arrow() for r in records_of(b, mode)]  # type: ignore[arg-type]


def without_nulls(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [{k: v for k, v in r.items() if v is not None} for r in rows]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.mark.spark
def test_csv_on_spark_equals_csv_in_python(spark: SparkSession, csv_folder: Path) -> None:
    kind = source_kind(csv_folder)
    python = [r for b in kind.records(csv_folder) for r in b]
    df = kind.to_dataframe(spark, csv_folder)  # files of other headers: joined by name
    # Spark gives every column to every row (null where a file lacks it)
    assert without_nulls(frame_records(df, kind.mode)) == without_nulls(python)


@pytest.mark.spark
def test_typed_files_on_spark_carry_the_python_records(
    spark: SparkSession, tmp_path: Path
) -> None:
    pq.write_table(arrow_table(ROWS), tmp_path / "a.parquet")
    pq.write_table(arrow_table(ROWS[:1]).drop_columns(["s"]), tmp_path / "b.parquet")
    kind = source_kind(tmp_path)
    python = [r for b in kind.records(tmp_path) for r in b]
    df = kind.to_dataframe(spark, tmp_path)  # mergeSchema: b's missing column reads null
    spark_rows = frame_records(df, kind.mode)
    assert typed_exact(without_nulls(spark_rows)) == typed_exact(without_nulls(python))

    avro = write_avro(tmp_path / "a.avro", AVRO_SCHEMA, ROWS)
    kind = source_kind(avro)
    carried = [pickle.loads(r[0]) for r in kind.to_dataframe(spark, avro).collect()]
    assert typed_exact(carried) == typed_exact(TYPED)


@pytest.mark.spark
def test_files_whose_types_disagree_are_refused_on_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    pq.write_table(pa.table({"a": pa.array([1], pa.int64())}), tmp_path / "1.parquet")
    pq.write_table(pa.table({"a": ["x"]}), tmp_path / "2.parquet")
    with pytest.raises(SourceFormatError, match="disagree on a column's type.*separate batches"):
        source_kind(tmp_path).to_dataframe(spark, tmp_path)
    # in Python each file is its own batch, and both read
    assert source_kind(tmp_path).records(tmp_path) == [[{"a": 1}], [{"a": "x"}]]


@pytest.mark.spark
def test_parquet_nanoseconds_spark_cannot_read_are_read_by_arrow_or_refused_saying_why(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "ns.parquet"
    pq.write_table(pa.table({"t": pa.array([1_000_000_001], pa.timestamp("ns", "UTC"))}), path)
    # on this disk, Arrow reads it as simulate does: every digit as text
    kind = source_kind(path)
    assert kind.mode == "pickle"
    carried = [pickle.loads(r[0]) for r in kind.to_dataframe(spark, path).collect()]
    assert carried == [{"t": "1970-01-01T00:00:01.000000001+00:00"}]
    assert kind.records(path) == [[{"t": "1970-01-01T00:00:01.000000001+00:00"}]]
    # Spark's own reading (files elsewhere: S3, a cluster's disk) is refused, saying why
    with pytest.raises(SourceFormatError, match=r"Spark cannot read a column.*TIMESTAMP\(NANOS"
                       r".*ingest the Arrow table"):
        dataframe(spark, "parquet", path)


@pytest.mark.spark
def test_json_arrays_reach_spark_as_json_lines_beside_the_lines_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    (tmp_path / "a.json").write_text(json.dumps(JSON_ROWS, indent=2))
    write_jsonl(tmp_path / "b.jsonl.gz", JSON_ROWS[:1])
    kind = source_kind(tmp_path)
    python = [r for b in kind.records(tmp_path) for r in b]
    df = kind.to_dataframe(spark, tmp_path)
    assert kind.mode == "json" and df.columns == ["value"]
    got = frame_records(df, kind.mode)
    key = json.dumps
    assert sorted(got, key=key) == sorted(python, key=key) and len(got) == 3


def test_a_file_whose_name_tells_no_format_is_read_with_format(tmp_path: Path) -> None:
    path = tmp_path / "events.log"
    path.write_text('{"a": 1}\n{"a": "x"}\n')
    with pytest.raises(SourceFormatError, match=r"pass format= \(one of jsonl, parquet"):
        toolkit.profile(path)
    assert toolkit.profile(path, format="jsonl").records == 2
    for batches in ([path], path):
        sim = toolkit.simulate(batches, format="jsonl")
        assert [f.name for f in sim.schema.fields] == ["a", "a_long"]  # RULES 3.2
    preview = plan_preview(path, "db.t", toolkit.catalog(tmp_path / "lake"), format="jsonl")
    assert len(preview.records) == 2
