"""Hostile and malformed input (issue #6): every record is either taken with its values
recoverable exactly, or refused with an error naming the line (for files) and the field,
or set aside in quarantine; never an unexplained crash, never a silent drop.

The pure core is checked through ``toolkit.simulate`` / ``toolkit.profile`` and the
JSON-lines reader; the Spark path through ``toolkit.ingest`` of a JSON-lines file and of
a list of dicts, read back by Spark, PyIceberg and DuckDB.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from sqlglot import exp

import toolkit
from tests.integration.readers import read_duckdb, read_pyiceberg, read_spark
from toolkit.core.batch.observe import MAX_DEPTH
from toolkit.core.values.jsonlines import parse_lines, read_jsonl
from toolkit.core.values.types import ListOf, Struct
from toolkit.errors import (
    IncompatibleRecordError,
    LineTooDeepError,
    MalformedLineError,
    NestingTooDeepError,
    NotARecordError,
)
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Row = dict[str, Any]

#: keys a careless SQL generator or a case-insensitive engine would trip over
HOSTILE_KEYS: tuple[str, ...] = (
    "a.b",
    "a b",
    'a"b',
    "a'b",
    "a`b",
    "``",
    "a;b",
    "a; DROP TABLE t",
    'x" --',
    "",
    "Name",
    "name",
    "NAME",
    "ünï名",
    "k" * 5000,
)
BIG = 2**64 + 1  # beyond signed (and unsigned) 64 bits
TOO_DEEP = 1000


def deep_dict(levels: int, leaf: Any = 1) -> Any:
    """``levels`` objects nested in each other around ``leaf``."""
    v = leaf
    for _ in range(levels):
        v = {"k": v}
    return v


def deep_list(levels: int, leaf: Any = 1) -> Any:
    v = leaf
    for _ in range(levels):
        v = [v]
    return v


def deep_line(levels: int, opening: str = '{"k":', closing: str = "}") -> str:
    """A JSON line nested ``levels`` deep, written without recursion."""
    return '{"a":' + opening * levels + "1" + closing * levels + "}"


def by_family(schema: Struct, row: Row) -> dict[str, list[Any]]:
    """key -> the non-null values of its family's columns in one row (RULES 4: a column
    renamed for a case collision keeps its key in its doc)."""
    out: dict[str, list[Any]] = {}
    for c in schema.fields:
        if row.get(c.name) is not None:
            out.setdefault(c.family, []).append(row[c.name])
    return out


def as_keys(t: Any, value: Any) -> Any:
    """A routed value with every struct keyed by its source keys again (columns named
    apart for a case collision carry their key as family), null fields left out."""
    if isinstance(t, Struct) and value is not None:
        return {
            c.family: as_keys(c.type, value[c.name])
            for c in t.fields
            if value.get(c.name) is not None
        }
    if isinstance(t, ListOf) and value is not None:
        return [as_keys(t.element, x) for x in value]
    return value


def same(a: Any, b: Any) -> bool:
    """Equality where NaN equals NaN (a NaN read back is the NaN written)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# --- the pure core: simulate, profile, the JSON-lines reader -------------------------------


def test_every_hostile_key_is_its_own_column_and_keeps_its_value() -> None:
    record = {k: i for i, k in enumerate(HOSTILE_KEYS)}
    sim = toolkit.simulate([[record], [{k: f"s{i}" for i, k in enumerate(HOSTILE_KEYS)}]])
    schema = sim.table_schema
    assert {c.family for c in schema.fields} == set(HOSTILE_KEYS)
    names = [c.name for c in schema.fields]
    # RULES 4: names collide case-insensitively, so no two columns differ only by case
    assert len({n.lower() for n in names}) == len(names), names
    assert not sim.quarantined
    first, second = (by_family(schema, r) for r in sim.rows)
    for i, k in enumerate(HOSTILE_KEYS):
        assert i in first[k], (k[:20], first[k])
        assert f"s{i}" in second[k], (k[:20], second[k])


def test_hostile_keys_inside_records_keep_their_values() -> None:
    inner = {k: i for i, k in enumerate(HOSTILE_KEYS)}
    record = {"outer": inner, "list": [inner]}
    sim = toolkit.simulate([[record]])
    (row,) = sim.rows
    assert as_keys(sim.table_schema, row) == record
    prof = toolkit.profile([{"outer": inner}])
    assert {p[1] for p in prof.fields if len(p) == 2} == set(HOSTILE_KEYS)


def test_keys_that_differ_only_by_case_never_share_a_column() -> None:
    sim = toolkit.simulate([[{"name": 1}], [{"Name": 2, "NAME": 3, "name": 4}]])
    schema = sim.table_schema
    assert {c.name: c.family for c in schema.fields} == {
        "name": "name", "NAME_2": "NAME", "Name_3": "Name",
    }
    assert [by_family(schema, r) for r in sim.rows] == [
        {"name": [1]},
        {"NAME": [3], "Name": [2], "name": [4]},
    ]


def test_ten_thousand_keys() -> None:
    record = {f"key_{i:05d}": i for i in range(10_000)}
    sim = toolkit.simulate([[record], [{"key_00000": "text"}]])
    assert len(sim.table_schema.fields) == 10_001  # and key_00000_string
    assert sim.rows[0] == {**record, "key_00000_string": None}
    assert sim.rows[1]["key_00000_string"] == "text"
    assert len(toolkit.profile([record]).fields) == 10_000


def test_integers_beyond_64_bits_keep_every_digit() -> None:
    records = list(parse_lines([f'{{"n": {BIG}}}', f'{{"n": {-BIG}}}', '{"n": 7}']))
    assert [r["n"] for r in records] == [BIG, -BIG, 7]  # the parser rounds nothing
    sim = toolkit.simulate([records])
    # RULES 1: beyond 64 bits the observed type is string; the digits are the value
    assert [int(r["n"]) for r in sim.rows] == [BIG, -BIG, 7]
    assert {c.name: c.type for c in sim.table_schema.fields} == {"n": "string", "n_long": "long"}


def test_nan_and_infinity_are_doubles() -> None:
    records = list(parse_lines(['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}', '{"x": 1}']))
    sim = toolkit.simulate([records])
    got = [r["x"] for r in sim.rows]
    assert math.isnan(got[0]) and got[1:] == [math.inf, -math.inf, 1.0]
    assert {c.name: c.type for c in sim.table_schema.fields} == {"x": "double"}


def test_a_malformed_line_is_named_by_its_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2,,}\n{"a": 3}\n')
    says = r"^line 3: malformed JSON '\{\"a\": 2,,\}': "
    with pytest.raises(MalformedLineError, match=says) as e:
        read_jsonl(path)
    assert e.value.number == 3


@pytest.mark.parametrize(
    "line", ['{"s": "\\ud800"}', '{"s": ["x\\udfff", 12345678901234567890123]}',
             '{"\\udc00": 1}', '{"a": NaN, "s": {"t": "\\ud83d"}}'],
)
def test_a_lone_surrogate_is_refused_as_malformed(line: str) -> None:
    """Valid JSON, but the text has no UTF-8 form: no Parquet file can store it. Refused
    when read (named, then quarantined whole or failing the batch), never mid-write."""
    with pytest.raises(MalformedLineError, match=r"^line 2: .*lone surrogate"):
        list(parse_lines(['{"s": "\\ud83d\\ude00"}', line]))
    assert list(parse_lines(['{"s": "\\ud83d\\ude00 \\u00e9"}'])) == [{"s": "\U0001f600 é"}]


def test_a_line_too_deep_to_parse_is_named_by_its_number() -> None:
    lines = ['{"a": 1}', deep_line(5_000), deep_line(5_000, "[", "]")]
    with pytest.raises(LineTooDeepError, match=r"^line 2: .*nested too deeply to parse"):
        list(parse_lines(lines))
    with pytest.raises(LineTooDeepError, match=r"^line 1: "):
        list(parse_lines(lines[2:]))


def test_values_that_are_not_records_fail_naming_the_record_or_go_to_quarantine() -> None:
    batch: list[Any] = [{"a": 1}, [1, 2], "text", 3, None, {"a": 2}]
    with pytest.raises(NotARecordError, match=r"batch 1, record 2 \(counting from 1\): "):
        toolkit.simulate([batch], on_incompatible="fail")
    sim = toolkit.simulate([batch])
    assert sim.rows == [{"a": 1}, {"a": 2}]
    assert [(q.record, q.reason) for q in sim.quarantined] == [
        ([1, 2], "not-a-record"), ("text", "not-a-record"), (3, "not-a-record"),
        (None, "not-a-record"),
    ]


@pytest.mark.parametrize("make", [deep_dict, deep_list], ids=["objects", "arrays"])
def test_nesting_at_the_limit_is_kept_whole(make: Any) -> None:
    value = make(MAX_DEPTH - 1)  # the record is one level: MAX_DEPTH in all
    sim = toolkit.simulate([[{"a": value}], [{"a": "x"}]])
    assert sim.rows[0]["a"] == value and not sim.quarantined
    assert toolkit.profile([{"a": value}]).records == 1
    assert toolkit.coalesce_sql(sim.table_schema, "db.t").startswith("SELECT")


@pytest.mark.parametrize("make", [deep_dict, deep_list], ids=["objects", "arrays"])
@pytest.mark.parametrize("levels", [MAX_DEPTH, TOO_DEEP])
def test_nesting_too_deep_names_the_field_and_depth(make: Any, levels: int) -> None:
    batch = [{"id": 1, "a": make(levels)}, {"id": 2, "a": {"k": 2}}]
    with pytest.raises(NestingTooDeepError) as e:
        toolkit.simulate([batch], on_incompatible="fail")
    err = e.value
    assert err.path[0] == "a" and err.depth > MAX_DEPTH and err.limit == MAX_DEPTH
    assert f"levels deep (objects and arrays, the record counted); the limit is {MAX_DEPTH}" in (
        str(err)
    )
    if make is deep_list:
        assert err.path == ("a",) and err.depth == levels + 1
    with pytest.raises(NestingTooDeepError):
        toolkit.profile(batch)
    # quarantined whole, with the field; the other record is written
    sim = toolkit.simulate([batch])
    assert sim.rows == [{"a": {"k": 2}, "id": 2}]
    (q,) = sim.quarantined
    assert q.record is batch[0] and q.reason == "invalid-value"
    assert q.field is not None and q.field.startswith("a") and "levels deep" in q.detail


def test_one_line_of_each_kind_of_hostile_input(tmp_path: Path) -> None:
    """A file mixing everything: read, simulate, nothing lost, nothing crashed."""
    path = tmp_path / "mixed.jsonl"
    path.write_text(HOSTILE_FILE)
    records = read_jsonl(path)
    sim = toolkit.simulate([records])
    assert len(sim.rows) + len(sim.quarantined) == len(records)
    assert [q.reason for q in sim.quarantined] == ["not-a-record", "invalid-value"]


HOSTILE_LINES: list[str] = [
    json.dumps({k: i for i, k in enumerate(HOSTILE_KEYS)} | {"id": 0}),
    f'{{"id": 1, "big": {BIG}, "x": NaN}}',
    f'{{"id": 2, "big": {-BIG}, "x": Infinity}}',
    '{"id": 3, "big": 5, "x": -Infinity, "Name": "again"}',
    '[1, 2, 3]',
    '{"id": 4, "a": ' + "[" * TOO_DEEP + "]" * TOO_DEEP + "}",
]
HOSTILE_FILE = "\n".join(HOSTILE_LINES) + "\n"


# --- Spark: toolkit.ingest of files and of lists of dicts -----------------------------------


def read_three_ways(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> tuple[Struct, list[list[Row]]]:
    """The table's schema and its rows as Spark, PyIceberg and DuckDB read them."""
    tbl = lakehouse.load_table(table)
    rows = [
        read_spark(spark, f"{lakehouse.name}.{table}"),
        read_pyiceberg(tbl),
        read_duckdb(tbl),
    ]
    return from_iceberg(tbl.schema()), rows


@pytest.mark.spark
def test_ingest_a_file_of_hostile_keys_big_integers_and_nan(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(HOSTILE_LINES[:4]) + "\n")
    table = "hostile.keys"
    report = ingest(str(path), table, lakehouse, spark, batch_id="hostile-0")
    assert report.rows_written == 4 and report.quarantined == 0
    schema, readers = read_three_ways(lakehouse, spark, table)
    source = {int(r["id"]): r for r in read_jsonl(path)}
    for reader, rows in zip(("spark", "pyiceberg", "duckdb"), readers, strict=True):
        assert len(rows) == 4, reader
        for row in rows:
            fam = by_family(schema, row)
            record = source[int(fam["id"][0])]
            for key, value in record.items():
                got = fam.get(key, [])
                if key == "big" and abs(value) > 2**63:  # RULES 1: its digits, as text
                    got = [int(v) for v in got if isinstance(v, str)]
                assert any(same(value, g) for g in got), (reader, key[:20], value, got)
            assert set(fam) <= set(record), reader  # nothing invented


@pytest.mark.spark
def test_spark_sql_resolves_every_case_variant_without_ambiguity(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """Spark resolves names case-insensitively; RULES 4 naming keeps them apart, so every
    column of the table can be selected by its own name, in one query, with no error."""
    table = "hostile.cases"
    ingest([{"name": 1}], table, lakehouse, spark, batch_id="cases-0")
    ingest([{"Name": 2, "NAME": 3, "name": 4}], table, lakehouse, spark, batch_id="cases-1")
    assert spark.conf.get("spark.sql.caseSensitive") == "false"
    names = [c.name for c in from_iceberg(lakehouse.load_table(table).schema()).fields]
    assert sorted(names) == ["NAME_2", "Name_3", "name"]
    query = exp.select(*(exp.column(exp.to_identifier(n, quoted=True)) for n in names)).from_(
        exp.to_table(f"{lakehouse.name}.{table}")
    )
    rows = {tuple(r) for r in spark.sql(query.sql("spark")).collect()}
    by_name = dict(zip(names, zip(*rows, strict=True), strict=True))
    assert sorted(filter(None, by_name["name"])) == [1, 4]
    assert list(filter(None, by_name["NAME_2"])) == [3]
    assert list(filter(None, by_name["Name_3"])) == [2]




@pytest.mark.spark
@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ('{"a": 2,,}', r"malformed JSON '\{\"a\": 2,,\}'"),
        ("[1, 2, 3]", "expected a JSON object, got list"),
        (HOSTILE_LINES[5], r"field 'a': value nested at least 1001 levels deep"),
        ('{"a": "\\ud800"}', "lone surrogate"),
    ],
    ids=["malformed", "not-an-object", "too-deep", "lone-surrogate"],
)
def test_ingest_refuses_a_hostile_line_with_an_error_naming_it(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, bad: str, says: str
) -> None:
    table = "hostile.refused"
    path = tmp_path / "one_bad.jsonl"
    path.write_text(f'{{"a": 1}}\n{bad}\n')
    with pytest.raises(IncompatibleRecordError, match=says):
        ingest(str(path), table, lakehouse, spark, on_incompatible="fail")
    assert not lakehouse.table_exists(table)  # nothing was created


@pytest.mark.spark
def test_python_records_with_a_lone_surrogate_fail_naming_the_column(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """Python strings may hold one (JSON lines refuse it when read): the write fails with
    the column and the value, not a bare UnicodeEncodeError."""
    records = [{"a": 1, "s": "ok"}, {"s": "fine", "d": {"t": "x\udfff"}}]
    with pytest.raises(Exception, match=r"column 'd': value .* holds a lone surrogate"):
        ingest(records, "hostile.surrogate", lakehouse, spark)


@pytest.mark.spark
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "too-deep"])
def test_ingest_quarantines_what_it_cannot_take_and_writes_the_rest(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, deep: bool
) -> None:
    table = f"hostile.mixed_{'deep' if deep else 'shallow'}"
    path = tmp_path / "mixed.jsonl"
    lone = '{"id": 8, "a": "\\ud800"}'  # a lone surrogate: no UTF-8 form
    lines = ['{"id": 9, "a": [1]}', '{"a": 2,,}', lone, *HOSTILE_LINES[: 6 if deep else 5]]
    path.write_text("\n".join(lines) + "\n")
    report = ingest(str(path), table, lakehouse, spark, batch_id="mixed-0")
    reasons = ["malformed", "malformed", "not-a-record"] + (["invalid-value"] if deep else [])
    assert report.rows_written == 5 and report.quarantined == len(reasons)
    quarantined = spark.table(f"{lakehouse.name}.{report.quarantine_table}").collect()
    assert sorted(r.reason for r in quarantined) == sorted(reasons)
    assert {r.batch_id for r in quarantined} == {"mixed-0"}
    raws = {r.raw for r in quarantined}
    assert '{"a": 2,,}' in raws  # a line that is no JSON: as it arrived
    assert lone in raws
    assert [1, 2, 3] in [json.loads(r.raw) for r in quarantined if r.reason == "not-a-record"]
    if deep:
        assert HOSTILE_LINES[5] in raws  # the raw line, whole
    schema, readers = read_three_ways(lakehouse, spark, table)
    for rows in readers:
        assert sorted(by_family(schema, r)["id"][0] for r in rows) == [0, 1, 2, 3, 9]


@pytest.mark.spark
@pytest.mark.parametrize("make", [deep_dict, deep_list], ids=["objects", "arrays"])
def test_ingest_nesting_at_the_limit_reads_back_whole(
    lakehouse: Catalog, spark: SparkSession, make: Any
) -> None:
    """Arrow's IPC (Spark's workers) and Parquet readers have nesting limits of their own:
    MAX_DEPTH stays within them, so what the engine takes every reader reads."""
    table = f"hostile.deep_{make.__name__}"
    value = make(MAX_DEPTH - 1)
    ingest([{"id": 1, "a": value}], table, lakehouse, spark, batch_id="deep-0")
    _, readers = read_three_ways(lakehouse, spark, table)
    for rows in readers:
        assert rows == [{"id": 1, "a": value}]


#: keys of the wide record ingested by Spark: 10,000 in the long run
#: (``TOOLKIT_RELIABILITY_SCALE`` above 1, as for the other reliability tests); 2,000 in CI,
#: where 10,000 columns cost about two minutes of Spark planning and writing on 2 cores
WIDE_KEYS = 10_000 if int(os.environ.get("TOOLKIT_RELIABILITY_SCALE", "1")) > 1 else 2_000


@pytest.mark.spark
def test_ingest_a_record_with_thousands_of_keys(lakehouse: Catalog, spark: SparkSession) -> None:
    """Written whole; read whole by PyIceberg. Spark reads it by column: its vectorized
    Parquet reader holds a batch per column, and a full scan of 10,000 columns exceeds the
    default 1 GiB driver heap (an OutOfMemoryError that would end the shared session)."""
    table = "hostile.wide"
    record = {f"key_{i:05d}": i for i in range(WIDE_KEYS)}
    report = ingest([record], table, lakehouse, spark, batch_id="wide-0")
    assert report.rows_written == 1
    tbl = lakehouse.load_table(table)
    assert [c.name for c in tbl.schema().fields] == list(record)
    assert tbl.scan().to_arrow().to_pylist() == [record]
    some = ["key_00000", "key_01234", f"key_{WIDE_KEYS - 1:05d}"]
    (row,) = spark.table(f"{lakehouse.name}.{table}").select(*some).collect()
    assert row.asDict() == {k: record[k] for k in some}
