"""Apache Spark's own JSON test inputs (tests/reliability/spark_json_cases.py, each citing
the Spark test or test-data it comes from), read as files another system wrote: every
line lands in its row exactly as RULES says, or in the quarantine with its bytes, its
reason and its line number (docs/rules.md, "Hostile input", "Bytes from other systems");
never a crash, never a batch stopped. ``toolkit.simulate`` is the reference, and
``toolkit.ingest`` on Spark writes what it says."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_spark, schema_summary
from tests.reliability.spark_json_cases import CASES, ON_SPARK, SAME, Case
from toolkit.cli import cli
from toolkit.core.batch.conversion_warnings import UnwrittenRecords
from toolkit.core.batch.quarantine import Quarantined, QuarantinedRow
from toolkit.core.values.types import ListOf, Struct
from toolkit.errors import ToolkitError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the UTF-8 byte order mark, which Spark's text reader drops at the start of a file
BOM = b"\xef\xbb\xbf"


def safe(name: str) -> str:
    """A case's name as a file or table name."""
    return re.sub(r"\W", "_", name).lower()


def write(case: Case, folder: Path, name: str = "input") -> Path:
    path = folder / (safe(name) + case.suffix)
    path.write_bytes(gzip.compress(case.data) if case.suffix.endswith(".gz") else case.data)
    return path


def file_lines(case: Case) -> list[bytes]:
    """The file's lines as Spark's text reader ends them (\\n, \\r\\n, \\r), numbered
    from 1 by their place."""
    return case.data.removeprefix(BOM).splitlines()


def type_text(t: Any) -> str:
    if isinstance(t, ListOf):
        return f"list<{type_text(t.element)}>"
    if isinstance(t, Struct):
        return "struct<" + ", ".join(f"{c.name}: {type_text(c.type)}" for c in t.fields) + ">"
    return str(t)


def compact(value: Any) -> Any:
    """A value as a reader sees what it holds: records without their null fields (a
    column a record lacks reads null), null list elements kept."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


def text(rows: Any) -> str:
    """Rows as comparable text: 1 and 1.0 and true differ, NaN equals NaN."""
    return json.dumps(rows, sort_keys=True, default=repr)


def expected_rows(case: Case) -> list[dict[str, Any]]:
    if case.rows != SAME:
        assert isinstance(case.rows, list)
        return case.rows
    aside = {n for n, _ in case.aside}
    return [compact(json.loads(line)) for n, line in enumerate(file_lines(case), 1)
            if n not in aside and line.strip()]


def raw_bytes(q: Quarantined) -> bytes:
    record = q.record
    assert isinstance(record, str | bytes), q
    return record if isinstance(record, bytes) else record.encode()


def assert_set_aside(items: list[Quarantined], case: Case) -> None:
    """Each line set aside, in line order: its reason, the bytes it came as, and a detail
    naming its line."""
    got = file_lines(case)
    assert [q.reason for q in items] == [r for _, r in case.aside]
    for q, (number, _) in zip(items, case.aside, strict=True):
        assert raw_bytes(q) == got[number - 1], (number, q)
        assert f"line {number}: " in q.detail, q.detail


@pytest.mark.parametrize("name", list(CASES))
def test_each_spark_input_lands_in_its_row_or_in_the_quarantine(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    sim = toolkit.simulate([write(case, tmp_path)])
    assert {c.name: type_text(c.type) for c in sim.table_schema.fields} == case.columns
    assert text([compact(r) for r in sim.rows]) == text(expected_rows(case))
    assert_set_aside(list(sim.quarantined), case)
    # nothing lost: every line that is not blank is a row, a line set aside, or a record
    # a warning counts as not written (the table has no column yet, RULES 3.5)
    unwritten = sum(w.count for w in sim.warnings if isinstance(w, UnwrittenRecords))
    assert len(sim.rows) + len(sim.quarantined) + unwritten \
        == sum(1 for x in file_lines(case) if x.strip())


@pytest.mark.parametrize("name", list(CASES))
def test_each_spark_input_profiles_counting_the_lines_set_aside(
    name: str, tmp_path: Path
) -> None:
    case = CASES[name]
    profile = toolkit.profile(write(case, tmp_path))
    # every line that is not blank and not set aside is a record, written or not
    read = sum(1 for x in file_lines(case) if x.strip()) - len(case.aside)
    assert (profile.records, profile.lines_set_aside) == (read, len(case.aside))


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.aside])
def test_failing_on_a_line_set_aside_names_it(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    first, _ = case.aside[0]
    with pytest.raises(ToolkitError, match=rf"^line {first}: "):
        toolkit.simulate([write(case, tmp_path)], on_incompatible="fail")


def test_the_profile_command_lists_every_line_set_aside(tmp_path: Path) -> None:
    """``toolkit profile`` of Spark's corrupt records: it profiles the good one and lists
    the others by line, JSON that is no object included."""
    case = CASES["additionalCorruptRecords"]
    result = CliRunner().invoke(cli, ["profile", str(write(case, tmp_path)), "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)["set_aside"]
    assert [(s["line"], s["reason"]) for s in listed] == list(case.aside)


def test_a_byte_order_mark_is_dropped_where_spark_drops_it(tmp_path: Path) -> None:
    """At the start of the file only: one later in the file is a line that is not JSON,
    set aside as its bytes."""
    path = tmp_path / "marks.jsonl"
    path.write_bytes(BOM + b'{"a": 1}\n' + BOM + b'{"a": 2}\n{"a": 3}\n')
    sim = toolkit.simulate([path])
    assert sim.rows == [{"a": 1}, {"a": 3}]
    (q,) = sim.quarantined
    assert (q.reason, raw_bytes(q)) == ("malformed", BOM + b'{"a": 2}')


def test_a_boolean_among_numbers_in_an_array_is_warned(tmp_path: Path) -> None:
    # RULES 1 types one array by its widest leaf (arrayElementTypeConflict, [1, 1.1, true]):
    # the true is written 1.0, and the conversion warnings count array leaves too
    path = tmp_path / "leaves.jsonl"
    path.write_bytes(b'{"a": [1, 1.1, true]}\n{"a": [2.5]}\n')
    sim = toolkit.simulate([path])
    assert sim.rows == [{"a": [1.0, 1.1, 1.0]}, {"a": [2.5]}]
    assert [str(w) for w in sim.warnings] == ["a: 1 boolean inside lists was written as a number"]



def test_a_record_set_aside_after_reading_keeps_its_line_and_names_it(tmp_path: Path) -> None:
    """'wide nested json table' (JsonSuite), nested instead of wide."""
    deep = '{"a": ' + "[" * 25 + "]" * 25 + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text('{"a": [1]}\n' + deep + "\n")
    (q,) = toolkit.simulate([path]).quarantined
    assert q.reason == "invalid-value"
    assert (q.raw, q.detail.startswith("line 2: ")) == (deep, True)


def test_a_record_the_widen_policy_refuses_keeps_its_line_and_names_it(tmp_path: Path) -> None:
    """RULES 5 sets the record aside after it was read: the quarantine keeps the line as
    it came (its own spacing and key order), not JSON made again from its values."""
    first, second = tmp_path / "b1.jsonl", tmp_path / "b2.jsonl"
    first.write_text('{"id": 1, "d": true}\n')
    line = '{"d":1.5,   "id":2}'
    second.write_text('{"id": 3, "d": false}\n' + line + "\n")
    (q,) = toolkit.simulate([first, second], policy="widen").quarantined
    assert (q.reason, q.raw) == ("incompatible", line)
    assert q.detail.startswith("line 2: field 'd': value 1.5")


# --- Spark: toolkit.ingest equals toolkit.simulate ------------------------------------------


def stored(row: QuarantinedRow) -> Quarantined:
    """A quarantine row as the line it keeps: its bytes, or its text as it came (not
    read as JSON)."""
    return dataclasses.replace(row.as_quarantined(),
                               record=row.raw if row.data is None else row.data)


def line_of(q: Quarantined) -> int:
    """The line number a detail names (0: none)."""
    named = re.search(r"line (\d+): ", q.detail)
    return 0 if named is None else int(named[1])


def as_read(q: Quarantined) -> tuple[str, str | None, str | None, bytes]:
    """What a user reads of a line set aside, wherever it was read."""
    return q.reason, q.field, q.observed, raw_bytes(q)


@pytest.mark.spark
def test_ingest_on_spark_lands_what_simulate_says(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """Each case twice, as batches b1 (a new table: Spark's Python workers or the JVM
    tally) and b2 (a batch that fits: the JVM router's one pass, which numbers the lines it
    sets aside): the table and its quarantine are what ``simulate`` of the same two
    batches says. One test over the cases, so they share one warm session."""
    for name in ON_SPARK:
        case = CASES[name]
        path = write(case, tmp_path, name)
        sim = toolkit.simulate([path, path])
        table = f"spark_json.{safe(name)}"
        reports = [toolkit.ingest(str(path), table=table, catalog=lakehouse, spark=spark,
                                  batch_id=b) for b in ("b1", "b2")]
        assert [r.quarantined for r in reports] == [len(case.aside)] * 2, name
        if sim.rows:
            loaded = lakehouse.load_table(table)
            assert schema_summary(loaded.schema()) == schema_summary(sim.schema), name
            assert text(read_spark(spark, f"{lakehouse.name}.{table}")) == text(
                canonical(sim.rows)), name
        else:  # no record: no table, only its quarantine
            assert not lakehouse.table_exists(table), name
        kept = toolkit.quarantine(lakehouse, table).rows
        for batch, index in (("b1", 0), ("b2", 1)):
            items = [stored(r) for r in kept if r.batch_id == batch]
            want = [q for q in sim.quarantined if q.batch == index]
            assert sorted(map(as_read, items), key=repr) == sorted(map(as_read, want), key=repr), (
                name, batch)
            if reports[index].one_pass:  # the JVM router names each line's file and number
                assert_set_aside(sorted(items, key=line_of), case)
                assert all(path.name in q.detail for q in items), name

