"""Timestamp families in the COALESCE view (docs/rules.md, *Timestamp formats and epoch
units*, *What the view folds to*): issue 28 reads them as one TIMESTAMP column, whole
numbers read in the field's epoch unit (by their magnitude unless a unit is fixed), never
raw seconds beside milliseconds. Views run in DuckDB."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb
import pytest
import sqlglot

import toolkit
from tests.core.helpers import run
from tests.core.test_views import query_view
from toolkit.core.values.types import Column, Struct
from toolkit.core.views import DIALECTS, coalesce_sql, epoch_units_of
from toolkit.iceberg.views import as_struct

UTC = dt.UTC
SECONDS = 1_704_153_600  # 2024-01-02T00:00:00Z
TS = "2024-01-02T00:00:00.250Z"
MIDNIGHT = dt.datetime(2024, 1, 2, tzinfo=UTC)
QUARTER = dt.datetime(2024, 1, 2, 0, 0, 0, 250000, tzinfo=UTC)


def test_epoch_seconds_and_millis_read_as_the_same_instants() -> None:
    """A timestamp field that later gets epoch SECONDS, then milliseconds: the long column
    holds them raw; the view gives one TIMESTAMP for every row."""
    r = run([{"s": TS}], [{"s": SECONDS}], [{"s": SECONDS * 1000 + 5}])
    assert [c.name for c in r.schema.fields] == ["s", "s_long"]
    assert [x["s_long"] for x in r.rows] == [None, SECONDS, SECONDS * 1000 + 5]
    rows = query_view(r)
    assert list(rows[0]) == ["s"]  # one column for the field
    assert [x["s"] for x in rows] == [QUARTER, MIDNIGHT, MIDNIGHT + dt.timedelta(microseconds=5000)]


def fold_by_hand(rows: list[tuple[Any, ...]], **options: Any) -> list[Any]:
    """The view over a table whose rows hold longs only in ``ts_long`` (rows a writer
    other than the toolkit wrote), read in DuckDB with the session in another zone."""
    schema = Struct((Column(1, "ts", "timestamptz"),
                     Column(2, "ts_long", "long", "upsolver_evolved_from:ts")))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'America/New_York'")  # the view must not depend on it
    con.execute("CREATE TABLE t (ts TIMESTAMPTZ, ts_long BIGINT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    sql = coalesce_sql(schema, "t", "duckdb", **options)
    return [row[0] for row in con.execute(sql).fetchall()]


def test_longs_read_by_their_magnitude_by_default() -> None:
    """RULES 2: below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds,
    else nanoseconds: the reading the engine used for the timestamp column."""
    longs = [SECONDS, SECONDS * 1000, SECONDS * 10**6, SECONDS * 10**9, -SECONDS]
    got = fold_by_hand([(None, n) for n in longs])
    assert got[:4] == [MIDNIGHT] * 4
    assert got[4] == dt.datetime(1916, 1, 1, tzinfo=UTC)  # before the epoch, in seconds


def test_longs_read_in_a_fixed_unit_when_one_is_given() -> None:
    got = fold_by_hand([(None, SECONDS * 1000)], long_timestamp_unit="ms")
    assert got == [MIDNIGHT]
    got = fold_by_hand([(None, SECONDS)], long_timestamp_unit="ms")
    assert got == [dt.datetime(1970, 1, 20, 17, 22, 33, 600000, tzinfo=UTC)]
    # a view_types entry gives the unit of one field; without one, the option's
    got = fold_by_hand([(None, SECONDS)], long_timestamp_unit="ms",
                       view_types={"ts": "timestamp[s]"})
    assert got == [MIDNIGHT]
    got = fold_by_hand([(None, SECONDS)], long_timestamp_unit="ms",
                       view_types={"ts": "timestamp"})
    assert got == [dt.datetime(1970, 1, 20, 17, 22, 33, 600000, tzinfo=UTC)]  # not seconds


def test_the_timestamp_column_is_read_first() -> None:
    got = fold_by_hand([(MIDNIGHT, 5), (None, SECONDS)])
    assert got == [MIDNIGHT, MIDNIGHT]


def test_the_comment_says_the_units_a_profile_saw() -> None:
    batches = [[{"s": TS}], [{"s": SECONDS}, {"s": SECONDS * 1000 + 5}]]
    r = run(*batches)
    seen = toolkit.profile([x for b in batches for x in b])
    assert epoch_units_of(seen) == {"s": frozenset({"s", "ms"})}
    rows = query_view(r, profile=seen)
    assert list(rows[0]) == ["s"]
    assert [x["s"] for x in rows] == [QUARTER, MIDNIGHT, MIDNIGHT + dt.timedelta(microseconds=5000)]
    sql = toolkit.coalesce_sql(r.schema, "db.events", "spark", profile=seen)
    assert ("/* s: timestamp and long fold into timestamp (longs read as epoch s, ms, us or ns "
            "by their magnitude; whole numbers seen as epoch s, ms) */") in sql


def test_a_family_with_doubles_reads_timestamps_first_as_epoch_numbers() -> None:
    """A double among them: the family's type is double (every sibling converts into it
    exactly); timestamps read as epoch ms, the timestamp column first."""
    r = run([{"s": TS}], [{"s": SECONDS}], [{"s": 2.5}])
    assert {c.name for c in r.schema.fields} == {"s", "s_long", "s_double"}
    assert [x["s"] for x in query_view(r)] == [SECONDS * 1000 + 250.0, SECONDS * 1000.0, 2.5]
    assert "timestamps as epoch ms" in toolkit.coalesce_sql(r.schema, "t", "duckdb")


def test_every_dialect_renders_one_statement_even_with_comment_breaking_names() -> None:
    key = "a*/ ; DROP TABLE t; /*b"
    batches = [[{key: TS}], [{key: SECONDS}, {key: SECONDS * 1000}]]
    r = run(*batches)
    seen = toolkit.profile([x for b in batches for x in b])
    for dialect in DIALECTS:
        sql = toolkit.coalesce_sql(r.schema, "db.events", dialect, view="db.v", profile=seen)
        read = "athena" if dialect == "athena" else dialect
        statements = sqlglot.parse(sql, read=read)
        assert len(statements) == 1, sql
        assert "/* a* / ; DROP TABLE t; / *b: timestamp and long fold into" in sql  # defused
    rows = query_view(r, profile=seen)
    assert list(rows[0]) == [key]


def test_unknown_epoch_units_are_a_clear_error() -> None:
    r = run([{"s": TS}], [{"s": SECONDS}])
    with pytest.raises(ValueError, match="unknown epoch units \\['minutes'\\] for 's'"):
        coalesce_sql(as_struct(r.schema), "t", epoch_units={"s": {"minutes"}})


def test_a_first_batch_of_both_reads_its_timestamp_column_first() -> None:
    """One batch of both: the original name is the long column (RULES 3.2), the timestamp
    column is ``s_timestamp``; the view reads the instants first, as TIMESTAMP."""
    r = run([{"s": TS}, {"s": SECONDS}])
    assert [c.name for c in r.schema.fields] == ["s", "s_timestamp"]
    assert [x["s"] for x in r.rows] == [SECONDS * 1000 + 250, SECONDS]
    assert [x["s"] for x in query_view(r)] == [QUARTER, MIDNIGHT]


def test_a_date_family_reads_as_timestamps() -> None:
    """A date column beside whole numbers: dates as their UTC midnight, longs by their
    magnitude; one TIMESTAMP column."""
    batches = [[{"d": "2024-01-02"}], [{"d": SECONDS + 60}]]
    r = run(*batches)
    assert [c.name for c in r.schema.fields] == ["d", "d_long"]
    rows = query_view(r)
    assert rows == [{"d": MIDNIGHT}, {"d": MIDNIGHT + dt.timedelta(seconds=60)}]
