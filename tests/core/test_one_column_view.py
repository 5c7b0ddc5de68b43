"""Issue 28: one view a user queries. The COALESCE view has exactly one column per source
key at every level, named as the key; each reads as its ``view_types`` entry, else the
family's type when every sibling converts into it exactly, else string (records and lists
as JSON text). DuckDB runs it over the table's rows; Trino and Athena are parsed."""

from __future__ import annotations

import datetime as dt
from typing import Any

import duckdb
import pyarrow as pa
import pytest
import sqlglot
from pyiceberg.io.pyarrow import schema_to_pyarrow
from sqlglot import exp

import toolkit
from toolkit.core.evolution.view_folds import view_folds
from toolkit.iceberg.views import as_struct

UTC = dt.UTC

#: an order feed that drifts: a record that became a string, a nested field that became a
#: long, a quantity that once was text, a time that became epoch milliseconds, inside
#: a record too, and a list of records whose nested field drifts
ORDERS: list[list[dict[str, Any]]] = [
    [
        {"id": 1, "quantity": 2, "address": {"zip": "01234", "city": "Oslo"},
         "customer": {"name": "Ann"},
         "started": "2024-06-01T08:00:00Z",
         "shipping": {"eta": "2024-06-03T12:00:00Z"},
         "items": [{"sku": "a", "qty": 1}]},
        {"id": 2, "quantity": 3, "address": {"zip": "0150", "city": "Oslo"},
         "started": "2024-06-01T09:30:00.500Z", "items": []},
    ],
    [
        {"id": 3, "quantity": "two", "address": "12 Main St, Springfield",
         "customer": [{"name": "Bo", "vip": True}],
         "started": 1717315254178, "shipping": {"eta": 1717416000000},
         "items": [{"sku": "b", "qty": "many"}, {"sku": "c", "qty": 4}]},
        {"id": 4, "quantity": 5, "address": {"zip": 98765, "city": "Bergen"},
         "customer": {"name": "Cy"},
         "started": 1717315254, "shipping": None, "items": None},
    ],
]

KEYS = ["address", "customer", "id", "items", "quantity", "shipping", "started"]


@pytest.fixture(scope="module")
def orders() -> toolkit.Simulation:
    return toolkit.simulate(ORDERS)


def run_in_duckdb(result: toolkit.Simulation, **options: Any) -> tuple[list[str], list[Any],
                                                                        list[dict[str, Any]]]:
    """The view of ``result`` over its rows in DuckDB: its column names, types and rows."""
    arrow = pa.Table.from_pylist(result.rows, schema=schema_to_pyarrow(result.schema))
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("staged", arrow)
    con.execute("CREATE TABLE t AS SELECT * FROM staged")
    cur = con.execute(toolkit.coalesce_sql(result.schema, table="t", dialect="duckdb",
                                           **options))
    names = [d[0] for d in cur.description]
    types = [d[1] for d in cur.description]
    rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    return names, types, sorted(rows, key=lambda r: r["id"])


def test_the_table_drifted_into_families(orders: toolkit.Simulation) -> None:
    names = {f.name for f in orders.schema.fields}
    assert {"address_string", "started_long", "quantity_string"} <= names
    nested = as_struct(orders.schema).by_name()
    assert "eta_long" in {c.name for c in nested["shipping"].type.fields}  # type: ignore[union-attr]


def test_duckdb_view_has_one_column_per_source_key(orders: toolkit.Simulation) -> None:
    names, types, _ = run_in_duckdb(orders)
    assert names == KEYS
    by_name = dict(zip(names, types, strict=True))
    assert str(by_name["started"]) == "TIMESTAMP WITH TIME ZONE"
    assert str(by_name["address"]) == "VARCHAR"
    assert str(by_name["items"]) == "STRUCT(qty VARCHAR, sku VARCHAR)[]"
    assert str(by_name["shipping"]) == "STRUCT(eta TIMESTAMP WITH TIME ZONE)"
    assert str(by_name["customer"]) == "STRUCT(\"name\" VARCHAR, vip BOOLEAN)[]"


def test_duckdb_view_returns_every_value_a_reader_expects(orders: toolkit.Simulation) -> None:
    _, _, rows = run_in_duckdb(orders)
    assert [r["address"] for r in rows] == [
        '{"city":"Oslo","zip":"01234"}', '{"city":"Oslo","zip":"0150"}',
        "12 Main St, Springfield", '{"city":"Bergen","zip":"98765"}']
    assert [r["quantity"] for r in rows] == ["2", "3", "two", "5"]
    assert [r["customer"] for r in rows] == [
        [{"name": "Ann", "vip": None}], None, [{"name": "Bo", "vip": True}],
        [{"name": "Cy", "vip": None}]]
    assert [r["started"] for r in rows] == [
        dt.datetime(2024, 6, 1, 8, tzinfo=UTC),
        dt.datetime(2024, 6, 1, 9, 30, 0, 500000, tzinfo=UTC),
        dt.datetime(2024, 6, 2, 8, 0, 54, 178000, tzinfo=UTC),
        dt.datetime(2024, 6, 2, 8, 0, 54, tzinfo=UTC)]
    assert [r["shipping"] for r in rows] == [
        {"eta": dt.datetime(2024, 6, 3, 12, tzinfo=UTC)}, None,
        {"eta": dt.datetime(2024, 6, 3, 12, tzinfo=UTC)}, None]
    assert [r["items"] for r in rows] == [
        [{"qty": "1", "sku": "a"}], [],
        [{"qty": "many", "sku": "b"}, {"qty": "4", "sku": "c"}], None]


def test_view_types_override_a_family(orders: toolkit.Simulation) -> None:
    names, types, rows = run_in_duckdb(
        orders, view_types={"quantity": "long", "items.qty": "long"})
    assert str(dict(zip(names, types, strict=True))["quantity"]) == "BIGINT"
    assert [r["quantity"] for r in rows] == [2, 3, None, 5]  # "two" reads NULL, as said
    assert [r["items"] for r in rows][2] == [{"qty": None, "sku": "b"}, {"qty": 4, "sku": "c"}]
    sql = toolkit.coalesce_sql(orders.schema, "t", "duckdb", view_types={"quantity": "long"})
    assert ("quantity: long and string read as long (strings that do not read as long are "
            "NULL)") in sql


def test_the_sql_and_the_folds_say_what_each_field_folds_to(orders: toolkit.Simulation) -> None:
    said = [str(f) for f in view_folds(as_struct(orders.schema))]
    assert said == [
        "address: record and string fold into string (records as JSON text)",
        "customer: record and record[] fold into record[] (records as one-element lists)",
        "items.qty: long and string fold into string (longs as text)",
        "quantity: long and string fold into string (longs as text)",
        "shipping.eta: timestamp and long fold into timestamp (longs read as epoch s, ms, us "
        "or ns by their magnitude)",
        "started: timestamp and long fold into timestamp (longs read as epoch s, ms, us or "
        "ns by their magnitude)",
    ]
    sql = toolkit.coalesce_sql(orders.schema, "t", "spark")
    for text in said:
        assert text in sql


@pytest.mark.parametrize("dialect", ["trino", "athena", "spark", "duckdb"])
def test_every_dialect_has_one_column_per_source_key(
    orders: toolkit.Simulation, dialect: str
) -> None:
    sql = toolkit.coalesce_sql(orders.schema, "db.orders", dialect, view="db.orders_v")  # type: ignore[arg-type]
    statements = sqlglot.parse(sql, read=dialect)
    assert len(statements) == 1
    select = statements[0].expression  # type: ignore[union-attr]
    assert [e.alias_or_name for e in select.selects] == KEYS
    if dialect in ("trino", "athena"):
        # Trino names a row's fields by a cast: the folded struct keeps the source keys
        assert 'AS ROW("qty" VARCHAR, "sku" VARCHAR)' in sql
        assert "JSON_FORMAT(CAST(\"address\" AS JSON))" in sql
        assert 'FROM_UNIXTIME("started_long")' in sql
    # the nested reads go through the struct, never a table of the field's name
    assert all(isinstance(d.this, exp.Paren) for d in select.find_all(exp.Dot))


@pytest.mark.parametrize("key", ['a"b', "a'b", "x; DROP TABLE t; --", "a.b", "${env:HOME}"])
def test_nested_names_from_data_cannot_break_out(key: str) -> None:
    r = toolkit.simulate([[{"r": {key: 1}}], [{"r": {key: "s"}}]])
    for dialect in ("spark", "trino", "duckdb", "athena"):
        sql = toolkit.coalesce_sql(r.schema, "db.events", dialect)  # type: ignore[arg-type]
        assert len(sqlglot.parse(sql, read=dialect)) == 1
    arrow = pa.Table.from_pylist(r.rows, schema=schema_to_pyarrow(r.schema))
    con = duckdb.connect()
    con.register("staged", arrow)
    con.execute("CREATE TABLE t AS SELECT * FROM staged")
    got = con.execute(toolkit.coalesce_sql(r.schema, "t", "duckdb")).fetchall()
    assert got == [({key: "1"},), ({key: "s"},)]


def test_spark_reads_a_struct_with_a_substituted_name_as_stored() -> None:
    """Spark replaces ``${...}`` in a stored view's text: a struct holding such a name is
    not rebuilt there (the other dialects fold it)."""
    r = toolkit.simulate([[{"r": {"${x}": 1}}], [{"r": {"${x}": "s"}}]])
    assert "${" not in toolkit.coalesce_sql(r.schema, "t", "spark").replace("$ {", "")


def test_an_unknown_view_type_names_the_field(orders: toolkit.Simulation) -> None:
    with pytest.raises(toolkit.ToolkitError, match="field 'quantity' cannot be read as 'integer'"):
        toolkit.coalesce_sql(orders.schema, "t", "duckdb", view_types={"quantity": "integer"})


def test_a_view_type_for_no_field_is_refused(orders: toolkit.Simulation) -> None:
    with pytest.raises(toolkit.ToolkitError, match="the view has no field 'quantty'"):
        toolkit.coalesce_sql(orders.schema, "t", "duckdb", view_types={"quantty": "long"})


def test_a_map_and_its_record_sibling_fold_into_json_text() -> None:
    """A declared map beside the record column evolution added for objects that did not
    fit it (issue 26): one column, each as its JSON text."""
    from toolkit.core.values.types import Column, MapOf, Struct

    schema = Struct((
        Column(1, "m", MapOf(2, "string", 3, "long")),
        Column(4, "m_record", Struct((Column(5, "a", "string"),)), "upsolver_evolved_from:m"),
    ))
    con = duckdb.connect()
    con.execute('CREATE TABLE t (m MAP(VARCHAR, BIGINT), m_record STRUCT(a VARCHAR))')
    con.execute("INSERT INTO t VALUES (MAP {'k': 1}, NULL), (NULL, {'a': 'x'})")
    sql = toolkit.coalesce_sql(schema, "t", "duckdb")
    assert "m: map and record fold into string (records as JSON text; maps as JSON text)" in sql
    assert sorted(r[0] for r in con.execute(sql).fetchall()) == ['{"a":"x"}', '{"k":1}']
