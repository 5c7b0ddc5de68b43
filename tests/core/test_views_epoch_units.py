"""Issue 15: the COALESCE view never folds whole numbers of different epoch units into one
column silently (docs/rules.md, *Timestamp formats and epoch units*). Views run in DuckDB."""

from __future__ import annotations

import pytest
import sqlglot

import toolkit
from tests.core.helpers import run
from tests.core.test_views import query_view
from toolkit.core.views import DIALECTS, coalesce_sql, epoch_units_of
from toolkit.iceberg.views import as_struct

SECONDS = 1_704_153_600  # 2024-01-02T00:00:00Z
TS = "2024-01-02T00:00:00.250Z"


def test_epoch_seconds_are_read_through_the_timestamp_column_never_raw() -> None:
    """A timestamp field that later gets epoch SECONDS: the long column holds them raw
    (1704153600), the timestamp column as instants. The view gives epoch milliseconds for
    every row, never raw seconds beside milliseconds."""
    r = run([{"s": TS}], [{"s": SECONDS}], [{"s": SECONDS * 1000 + 5}])
    assert [c.name for c in r.schema.fields] == ["s", "s_long"]
    # the first row was written before s_long existed
    assert [x["s_long"] for x in r.rows] == [None, SECONDS, SECONDS * 1000 + 5]
    assert [x["s"] for x in query_view(r)] == [SECONDS * 1000 + 250, SECONDS * 1000,
                                               SECONDS * 1000 + 5]


def test_the_view_unit_follows_timestamp_unit() -> None:
    r = run([{"s": "2024-01-02T00:00:00Z"}], [{"s": SECONDS * 1000}], timestamp_unit="s")
    assert [x["s"] for x in query_view(r, timestamp_unit="s")] == [SECONDS, SECONDS]


def test_a_long_column_seen_in_mixed_units_stays_out_of_the_fold() -> None:
    batches = [[{"s": TS}], [{"s": SECONDS}, {"s": SECONDS * 1000 + 5}]]
    r = run(*batches)
    seen = toolkit.profile([x for b in batches for x in b])
    assert epoch_units_of(seen) == {"s": frozenset({"s", "ms"})}
    rows = query_view(r, profile=seen)
    assert list(rows[0]) == ["s", "s_long"]  # the long column is its own view column
    assert [x["s"] for x in rows] == [SECONDS * 1000 + 250, SECONDS * 1000, SECONDS * 1000 + 5]
    assert [x["s_long"] for x in rows] == [None, SECONDS, SECONDS * 1000 + 5]
    sql = toolkit.coalesce_sql(r.schema, "db.events", "spark", profile=seen)
    assert "/* s: epoch ms of \"s\"; whole numbers arrived as epoch s, ms:" in sql
    assert "`s_long` /* raw whole numbers (epoch s, ms), not folded into s */" in sql
    assert "COALESCE" not in sql  # nothing else to fold with the timestamp column


def test_longs_in_the_view_unit_are_folded() -> None:
    batches = [[{"s": TS}], [{"s": SECONDS * 1000}]]
    r = run(*batches)
    seen = toolkit.profile([x for b in batches for x in b])
    rows = query_view(r, profile=seen)
    assert list(rows[0]) == ["s"]
    assert [x["s"] for x in rows] == [SECONDS * 1000 + 250, SECONDS * 1000]
    # but not when the view's unit is another one
    rows = query_view(r, profile=seen, timestamp_unit="s")
    assert list(rows[0]) == ["s", "s_long"]


def test_a_family_with_doubles_reads_timestamps_first_and_keeps_doubles() -> None:
    r = run([{"s": TS}], [{"s": SECONDS}], [{"s": 2.5}])
    assert {c.name for c in r.schema.fields} == {"s", "s_long", "s_double"}
    assert [x["s"] for x in query_view(r)] == [SECONDS * 1000 + 250.0, SECONDS * 1000.0, 2.5]


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
        assert "/* a* / ; DROP TABLE t; / *b: epoch ms of" in sql  # defused in comments
    rows = query_view(r, profile=seen)
    assert list(rows[0]) == [key, key + "_long"]


def test_unknown_epoch_units_are_a_clear_error() -> None:
    r = run([{"s": TS}], [{"s": SECONDS}])
    with pytest.raises(ValueError, match="unknown epoch units \\['minutes'\\] for 's'"):
        coalesce_sql(as_struct(r.schema), "t", epoch_units={"s": {"minutes"}})


def test_a_first_batch_of_both_reads_its_timestamp_column_first() -> None:
    """One batch of both: the original name is the long column (RULES 3.2), the timestamp
    column is ``s_timestamp``; the view still reads the instants first."""
    r = run([{"s": TS}, {"s": SECONDS}])
    assert [c.name for c in r.schema.fields] == ["s", "s_timestamp"]
    assert [x["s"] for x in r.rows] == [SECONDS * 1000 + 250, SECONDS]
    assert [x["s"] for x in query_view(r)] == [SECONDS * 1000 + 250, SECONDS * 1000]


def test_the_sql_says_what_the_fold_reads() -> None:
    batches = [[{"s": TS}], [{"s": SECONDS * 1000}]]
    r = run(*batches)
    unknown = toolkit.coalesce_sql(r.schema, "db.events", "trino")
    assert ('COALESCE(CAST(TO_UNIXTIME("s") * 1000 AS BIGINT), "s_long") AS "s" /* s: epoch ms'
            ' of "s", then "s_long" as stored (the units of its whole numbers unchecked) */'
            ) in unknown
    seen = toolkit.profile([x for b in batches for x in b])
    checked = toolkit.coalesce_sql(r.schema, "db.events", "trino", profile=seen)
    assert ('/* s: epoch ms of "s", then "s_long" (whole numbers seen in epoch ms only) */'
            in checked)


def test_a_date_family_keeps_longs_of_another_unit_apart() -> None:
    """A date column receives no longs (the routing exception is for timestamp columns):
    whole numbers in seconds beside dates stay their own column once a profile shows it."""
    batches = [[{"d": "2024-01-02"}], [{"d": SECONDS}]]
    r = run(*batches)
    seen = toolkit.profile([x for b in batches for x in b])
    rows = query_view(r, profile=seen)
    assert rows == [{"d": SECONDS * 1000, "d_long": None}, {"d": None, "d_long": SECONDS}]
