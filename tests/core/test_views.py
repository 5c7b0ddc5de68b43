"""RULES 7: COALESCE views, generated for several dialects and run for real in DuckDB."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from pyiceberg.io.pyarrow import schema_to_pyarrow

import toolkit
from tests.core.helpers import run
from toolkit.core.views import DIALECTS

UTC = dt.UTC


def query_view(result: toolkit.Simulation, **options: Any) -> list[dict[str, Any]]:
    """Load the simulated table into DuckDB and select from its generated view (made with
    ``options`` of ``coalesce_sql``)."""
    arrow = pa.Table.from_pylist(result.rows, schema=schema_to_pyarrow(result.schema))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA db")
    con.register("staged", arrow)
    con.execute("CREATE TABLE db.events AS SELECT * FROM staged")
    con.execute(
        toolkit.coalesce_sql(result.schema, "db.events", "duckdb", view="db.unified", **options)
    )
    cur = con.execute("SELECT * FROM db.unified")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_rules_7_seed_coalesce_of_my_field() -> None:
    r = run([{"my_field": 1}], [{"my_field": "abc"}], [{"my_field": 7}])
    for dialect, sql in {
        "spark": "SELECT COALESCE(`my_field_string`, CAST(`my_field` AS STRING)) AS `my_field`"
        " /* my_field: long and string fold into string (longs as text) */ FROM db.events",
        "trino": 'SELECT COALESCE("my_field_string", CAST("my_field" AS VARCHAR)) AS "my_field"'
        " /* my_field: long and string fold into string (longs as text) */ FROM db.events",
    }.items():
        assert toolkit.coalesce_sql(r.schema, "db.events", dialect) == sql  # type: ignore[arg-type]
    assert [x["my_field"] for x in query_view(r)] == ["1", "abc", "7"]


def test_rules_7_scalars_feeding_an_array_view_column_are_wrapped() -> None:
    r = run([{"a": [1, 2]}], [{"a": "x"}], [{"a": 3}])
    assert "ARRAY(`a_string`)" in toolkit.coalesce_sql(r.schema, "t", "spark")
    assert [x["a"] for x in query_view(r)] == [["1", "2"], ["x"], ["3"]]


def test_rules_7_view_reads_a_timestamp_family_as_timestamps() -> None:
    """Issue 28: ISO text then epoch milliseconds read as one TIMESTAMP column (it was
    BIGINT epoch milliseconds before)."""
    r = run([{"s": "2024-01-02T00:00:00.250Z"}], [{"s": 1704153600000}])
    assert [x["s"] for x in query_view(r)] == [
        dt.datetime(2024, 1, 2, 0, 0, 0, 250000, tzinfo=UTC), dt.datetime(2024, 1, 2, tzinfo=UTC)]


def test_rules_7_records_of_two_dimensions_fold_into_a_list_of_records() -> None:
    """Issue 28: one column per source key; a record converts exactly into the list of
    records (RULES 3.4: that column has the record's fields), so it reads as one."""
    r = run([{"d": {"x": 1, "y": "a"}, "n": 5}], [{"d": [{"x": 2, "z": True}]}])
    rows = query_view(r)
    assert list(rows[0]) == ["d", "n"]
    assert [x["d"] for x in rows] == [[{"x": 1, "y": "a", "z": None}],
                                      [{"x": 2, "y": None, "z": True}]]
    assert "d: record and record[] fold into record[] (records as one-element lists)" in \
        toolkit.coalesce_sql(r.schema, "t", "duckdb")


def test_rules_7_records_that_do_not_fit_the_list_fold_into_json_text() -> None:
    """A nested field of another type in the two structs: no record type holds both, so
    the common denominator, JSON text."""
    r = run([{"d": {"x": 1}}], [{"d": [{"x": "s"}]}])
    rows = query_view(r)
    assert [x["d"] for x in rows] == ['{"x":1}', '[{"x":"s"}]']


HOSTILE = ['a"b', "a`b", "x; DROP TABLE t; --", "Ünï cödé", "a.b", " ", "select"]


@pytest.mark.parametrize("key", HOSTILE)
def test_rules_7_names_from_data_cannot_break_out_of_the_sql(key: str) -> None:
    r = run([{key: 1}], [{key: "s"}])
    for dialect in DIALECTS:
        sql = toolkit.coalesce_sql(r.schema, "db.events", dialect)
        statements = sqlglot.parse(sql, read="athena" if dialect == "athena" else dialect)
        assert len(statements) == 1
        assert statements[0].selects[0].alias_or_name == key  # type: ignore[union-attr]
    assert [x[key] for x in query_view(r)] == ["1", "s"]


def test_rules_7_every_dialect_renders_and_parses() -> None:
    r = run([{"a": 1, "b": True, "c": "2024-01-02"}],
            [{"a": "x", "b": 2.5, "c": 5, "d": [[1]]}], [{"d": 1}])
    for dialect in DIALECTS:
        sql = toolkit.coalesce_sql(r.schema, "db.events", dialect, view="db.v", pretty=True)
        assert sqlglot.parse_one(sql, read=dialect) is not None
    assert len(query_view(r)) == 3


def test_rules_7_unknown_dialect_is_a_clear_error() -> None:
    r = run([{"a": 1}])
    with pytest.raises(ValueError, match="unknown dialect 'oracle'"):
        toolkit.coalesce_sql(r.schema, "t", "oracle")  # type: ignore[arg-type]


def test_rules_7_a_row_without_a_value_in_an_array_family_folds_to_null() -> None:
    r = run([{"a": [1]}], [{"a": "x"}], [{"b": 1}])
    assert [x["a"] for x in query_view(r)] == [["1"], ["x"], None]
