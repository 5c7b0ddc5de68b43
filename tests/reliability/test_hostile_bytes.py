"""Bytes made by other systems (issue 25; docs/rules.md, "Bytes from other systems"): a
hostile corpus, line by line, "in its row exactly or in the quarantine", under both
policies, on the Python path (simulate, profile, the CLI) and on Spark (ingest, through
the Python workers and through the JVM router's one pass), with nothing logged at WARN or
above by Spark."""

from __future__ import annotations

import base64
import json
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.cli import cli
from toolkit.core.batch.quarantine import Quarantined, QuarantinedRow, reason_name
from toolkit.core.values.jsonlines import UnreadLine, parse_line, read_lines
from toolkit.errors import DuplicateKeyError, NotUtf8LineError
from toolkit.iceberg.quarantine import quarantine_tuples

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: (line bytes, what becomes of it): the values its row holds exactly, or the quarantine
#: reason (and, for a key named twice, the key path)
CORPUS: list[tuple[bytes, dict[str, Any] | tuple[str, str | None]]] = [
    (b'{"id": 1, "x": "plain", "n": 1}', {"id": 1, "x": "plain", "n": 1}),
    (b'{"id": 2, "v": "\xff"}', ("not-utf8", None)),
    (b'{"id": 3, "v": 5, "v": "five"}', ("duplicate-key", "v")),
    (b'{"id": 4, "x": 1e400}', {"id": 4, "x": "1e400"}),
    (b'{"id": 5, "x": -2.5E-400, "n": 7}', {"id": 5, "x": "-2.5E-400", "n": 7}),
    (b'{"id": 6, "r": {"a": 1, "a": 2}}', ("duplicate-key", "r.a")),
    (b'{"id": 7, "x": "caf\xc3\xa9 \xf0\x9f\x98\x80"}', {"id": 7, "x": "café 😀"}),
    (b'{"id": 8, "x": "\xc0\x80"}', ("not-utf8", None)),  # an overlong form of NUL
    (b'{"id": 9, "x": "\xed\xa0\x80"}', ("not-utf8", None)),  # an encoded surrogate
    (b'{"id": 10, "x": "\xe2\x82"}', ("not-utf8", None)),  # a character cut short
    (b'{"id": 11, "l": [{"k": 1}, {"k": 2, "k": 3}]}', ("duplicate-key", "l.k")),
    (b'{"id": 12, "x": "\\\\xff is text"}', {"id": 12, "x": "\\xff is text"}),
    (b'{"id": 13, "x": "a \\":\\" b", "n": 9}', {"id": 13, "x": 'a ":" b', "n": 9}),
    (b'{"id": 14 oops', ("malformed", None)),
    (b'{"id": 15, "x": "\xf4\x90\x80\x80"}', ("not-utf8", None)),  # beyond U+10FFFF
    (b'{"id": 16, "x" : "spaced", "n" : 0}', {"id": 16, "x": "spaced", "n": 0}),
]
LINES = b"".join(line + b"\n" for line, _ in CORPUS)
GOOD = {i + 1: want for i, (_, want) in enumerate(CORPUS) if isinstance(want, dict)}
BAD = {i + 1: (line, want) for i, (line, want) in enumerate(CORPUS) if isinstance(want, tuple)}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(LINES)
    return path


def _no_infinity(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isinf(value)
    if isinstance(value, dict):
        return all(map(_no_infinity, value.values()))
    if isinstance(value, list):
        return all(map(_no_infinity, value))
    return True


def assert_in_row_exactly(rows: list[dict[str, Any]]) -> None:
    """Every good line's row, by its id, holds each of its values exactly (no infinity)."""
    by_id = {r["id"]: r for r in rows}
    assert sorted(by_id) == sorted(w["id"] for w in GOOD.values())
    for want in GOOD.values():
        row = by_id[want["id"]]
        assert {k: row[k] for k in want} == want
        assert _no_infinity(row)


def assert_set_aside_with_raw_line(items: list[Quarantined], numbered: bool = True) -> None:
    """Every bad line is in the quarantine, whole, with its reason (and line number)."""
    assert len(items) == len(BAD)
    for q, (number, (line, (reason, field))) in zip(items, sorted(BAD.items()), strict=True):
        assert (q.reason, q.field) == (reason, field), line
        if reason == "not-utf8":
            assert q.record == line  # every byte
            assert "\\x" in q.raw  # shown escaped
            assert base64.b64decode(q.stored) == line
        else:
            assert q.raw == line.decode()
        if numbered:
            assert f"line {number}: " in q.detail


# --- the reader ---------------------------------------------------------------------------


def test_each_line_is_read_or_set_aside_with_its_number_and_reason(corpus: Path) -> None:
    values = read_lines(corpus)
    assert len(values) == len(CORPUS)
    for number, (value, (line, want)) in enumerate(zip(values, CORPUS, strict=True), 1):
        if isinstance(want, dict):
            assert value == want
        else:
            assert isinstance(value, UnreadLine)
            assert (value.number, value.error.reason_key) == (number, want[0])
            assert value.raw == (line if want[0] == "not-utf8" else line.decode())


@pytest.mark.parametrize(
    ("text", "path"),
    [('{"a": 1, "a": 1}', ("a",)), ('{"a": {"b": {"c": 1, "d": 2, "c": 3}}}', ("a", "b", "c")),
     ('[{"a": 1}, [{"b": 2, "b": 2}]]', ("b",)), ('{"a" :1,"a": 2, "s":"\\":"}', ("a",)),
     ('{"n": 123456789012345678901234, "n": 1}', ("n",))],
)
def test_a_key_named_twice_is_named_by_its_path(text: str, path: tuple[str, ...]) -> None:
    with pytest.raises(DuplicateKeyError) as e:
        parse_line(text, 4)
    assert e.value.path == path
    assert str(e.value).startswith(f"line 4: duplicate key '{'.'.join(path)}'")


@pytest.mark.parametrize(
    "text", ['{"s": "\\":"}', '{"t": "12:30", "u": "x\\" : y"}', '{"a": [{"a": 1}, {"a": 2}]}',
             '{"a": {"a": {"a": 1}}}', '{"": 1, " ": 2}'],
)
def test_keys_alike_in_different_objects_or_colons_in_texts_are_no_duplicates(text: str) -> None:
    assert parse_line(text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e400", "1e400"), ("-1E+400", "-1E+400"), ("1e-400", "1e-400"), ("-0.5e-999", "-0.5e-999"),
     ("0e-999", 0.0), ("1e308", 1e308), ("5e-324", 5e-324), ("10" + "0" * 400 + ".5", None),
     ("Infinity", math.inf),
     # more digits than its double gives back (as the table shows it, Python's repr)
     ("3.14159265358979323846", None), ("1.0000000000000001", None),
     ("-12345678901234567890.0", None), ("1234567890123456789e-3", None),
     ("0.30000000000000004", 0.30000000000000004), ("1.50000000000000000000", 1.5),
     ("-0.0000012345678901234560", -1.234567890123456e-06), ("0.1e1", 1.0),
     # a subnormal double holds fewer digits; the smallest normal one all of them
     ("1.23e-322", None), ("2.2250738585072014e-308", 2.2250738585072014e-308),
     # a double's own digits, however many a writer printed (%.17g, Java's MIN_VALUE)
     ("0.10000000000000001", 0.1), ("4.9E-324", 5e-324),
     ("2.82879384806159008E17", 2.82879384806159e17)],
)
def test_numbers_beyond_the_double_range_keep_their_text(text: str, value: Any) -> None:
    got = parse_line(f'{{"x": {text}}}')["x"]
    assert got == (text if value is None else value)
    assert type(got) is type(text if value is None else value)


def test_bytes_that_are_not_utf8_are_named_and_kept() -> None:
    with pytest.raises(NotUtf8LineError) as e:
        parse_line(b'{"v": "ok \xff"}', 2)
    assert e.value.data == b'{"v": "ok \xff"}'
    assert str(e.value) == (
        "line 2: not UTF-8 text: byte 0xff at position 10 (invalid start byte) in "
        "'{\"v\": \"ok \\\\xff\"}'"
    )


# --- simulate and profile, both policies --------------------------------------------------


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_simulate_writes_every_good_line_and_sets_the_others_aside(
    corpus: Path, policy: str
) -> None:
    sim = toolkit.simulate([corpus], policy=policy)
    assert_in_row_exactly(sim.rows)
    assert_set_aside_with_raw_line(list(sim.quarantined))
    assert {c.name: c.type for c in sim.table_schema.fields} == {
        "id": "long", "n": "long", "x": "string"}


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_failing_on_a_bad_line_names_it(corpus: Path, policy: str) -> None:
    with pytest.raises(NotUtf8LineError, match=r"^line 2: not UTF-8"):
        toolkit.simulate([corpus], policy=policy, on_incompatible="fail")


def test_profile_counts_the_good_lines_and_the_lines_set_aside(corpus: Path) -> None:
    p = toolkit.profile(corpus)
    assert p.records == len(GOOD) and p.lines_set_aside == len(BAD)
    assert sorted(p.fields[("x",)].samples) == [toolkit.core.values.types.Shape("string", 0)]


def test_the_cli_profile_succeeds_and_says_which_lines_it_set_aside(corpus: Path) -> None:
    result = CliRunner().invoke(cli, ["profile", str(corpus)])
    assert result.exit_code == 0, result.output
    assert f"{len(GOOD)} records profiled" in result.output
    assert f"{len(BAD)} lines set aside, not profiled:" in result.output
    assert f"{reason_name('not-utf8')}: line 2: not UTF-8 text: byte 0xff" in result.output
    assert "duplicate key: line 3: duplicate key 'v'" in result.output


def test_the_issue_file_profiles(tmp_path: Path) -> None:
    """``printf '{"id":1}\\n{"v":"\\xff"}\\n{"id":3}\\n' > u.jsonl; toolkit profile u.jsonl``"""
    path = tmp_path / "u.jsonl"
    path.write_bytes(b'{"id":1}\n{"v":"\xff"}\n{"id":3}\n')
    result = CliRunner().invoke(cli, ["profile", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert '"set_aside"' in result.output and '"line": 2' in result.output


def test_a_stored_row_gives_the_bytes_back_and_shows_them_escaped() -> None:
    q = Quarantined(b'{"v":"\xff"}', "not-utf8", None, None, None, "b1", "line 2: ...")
    (row,) = quarantine_tuples([q], "b1")
    read = QuarantinedRow.stored_as(row)
    assert read.data == read.record == b'{"v":"\xff"}'
    assert read.raw == '{"v":"\\xff"}' and not read.replayable


# --- Spark -----------------------------------------------------------------------------


@contextmanager
def spark_log(spark: SparkSession, level: str = "WARN") -> Iterator[Any]:
    """What the JVM logs meanwhile at ``level`` or above, Spark's loggers set to log it:
    a log4j2 appender on the root logger, writing into a Java ``StringWriter``."""
    jvm: Any = spark._jvm
    log4j = jvm.org.apache.logging.log4j
    ctx = log4j.LogManager.getContext(False)
    config = ctx.getConfiguration()
    writer = jvm.java.io.StringWriter()
    layout = log4j.core.layout.PatternLayout.createDefaultLayout()
    appender = log4j.core.appender.WriterAppender.createAppender(
        layout, None, writer, "toolkit-test-capture", False, True)
    appender.start()
    config.addAppender(appender)
    root = config.getRootLogger()
    spark_logger = config.getLoggerConfig("org.apache.spark")
    before = (root.getLevel(), spark_logger.getLevel())
    wanted = log4j.Level.getLevel(level)
    root.addAppender(appender, wanted, None)
    root.setLevel(wanted)
    spark_logger.setLevel(wanted)
    ctx.updateLoggers()
    try:
        yield writer
    finally:
        root.removeAppender("toolkit-test-capture")
        root.setLevel(before[0])
        spark_logger.setLevel(before[1])
        ctx.updateLoggers()
        appender.stop()


def spark_rows(spark: SparkSession, lakehouse: Catalog, table: str) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.table(f"{lakehouse.name}.{table}").collect()]


@pytest.mark.spark
@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_ingest_writes_every_good_line_and_quarantines_the_others_quietly(
    lakehouse: Catalog, spark: SparkSession, corpus: Path, policy: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first batch goes through Spark's Python workers (a new table), the second, which
    fits the table, through the JVM router's one pass (upsolver): each line lands in its
    row or in the quarantine with its raw bytes, and neither Spark nor the toolkit logs a
    warning."""
    table = f"hostile_bytes.{policy}"
    reports = []
    with caplog.at_level(logging.WARNING, logger="toolkit"), spark_log(spark) as logged:
        probe: Any = spark._jvm
        probe.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.Probe").warn("p")
        assert "p" in logged.toString()  # the capture sees Spark's warnings
        logged.getBuffer().setLength(0)
        for batch in ("b1", "b2"):
            reports.append(toolkit.ingest(
                str(corpus), table=table, catalog=lakehouse, spark=spark, batch_id=batch,
                policy=policy,
            ))
    assert logged.toString() == ""
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.rows_written for r in reports] == [len(GOOD)] * 2
    assert [r.quarantined for r in reports] == [len(BAD)] * 2
    if policy == "upsolver":  # the second batch fits: routed and tallied in one JVM pass
        assert (reports[1].one_pass, reports[1].routed_in) == (True, "jvm")
    rows = spark_rows(spark, lakehouse, table)
    assert_in_row_exactly(rows[: len(GOOD)])
    assert_in_row_exactly(rows[len(GOOD):])
    q = toolkit.quarantine(lakehouse, table)
    for batch in ("b1", "b2"):
        items = [r.as_quarantined() for r in q.rows if r.batch_id == batch]
        # the JVM router names each line's file and number; the Python workers cannot
        one_pass = batch == "b2" and policy == "upsolver"
        assert_set_aside_with_raw_line(items, numbered=one_pass)
        if one_pass:
            assert all(corpus.name in i.detail for i in items)
    stored = spark.table(f"{lakehouse.name}.{q.quarantine_table}").collect()
    assert {base64.b64decode(r.raw) for r in stored if r.reason == "not-utf8"} == {
        line for line, want in BAD.values() if want[0] == "not-utf8"}


@pytest.mark.spark
def test_a_line_the_jvm_sets_aside_that_python_reads_goes_the_two_pass_way(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """A line the JVM tokenizer will not read but Python does (nested deeper than the JVM
    walks): Python decides, so the one pass is dropped and the batch routed again; the
    Python path sets the record aside as too deep, and writes the other."""
    table = "hostile_bytes.deep"
    first = tmp_path / "a.jsonl"
    first.write_text('{"id": 1, "r": {"r": 1}}\n')
    toolkit.ingest(str(first), table=table, catalog=lakehouse, spark=spark, batch_id="a")
    second = tmp_path / "b.jsonl"
    deep = '{"id": 2, "r": ' + "[" * 101 + "]" * 101 + "}"
    second.write_text(f'{{"id": 3, "r": {{"r": 2}}}}\n{deep}\n')
    report = toolkit.ingest(str(second), table=table, catalog=lakehouse, spark=spark,
                            batch_id="b")
    assert (report.one_pass, report.rows_written, report.quarantined) == (False, 1, 1)
    (q,) = toolkit.quarantine(lakehouse, table).rows
    assert (q.reason, q.raw) == ("invalid-value", deep)
    rows = {r["id"]: r for r in spark_rows(spark, lakehouse, table)}
    assert rows[3]["r"] == {"r": 2} and sorted(rows) == [1, 3]


@pytest.mark.spark
def test_a_text_frame_of_the_corpus_keeps_its_bytes(spark: SparkSession, corpus: Path) -> None:
    """A DataFrame of JSON lines given to ``simulate``: its lines are read as the bytes
    Spark holds, never through a Java string (which would put U+FFFD for each bad byte)."""
    sim = toolkit.simulate([spark.read.text(str(corpus))])
    assert_in_row_exactly(sim.rows)
    assert_set_aside_with_raw_line(list(sim.quarantined))
