"""Generated SQL is safe (issue #6): for every hostile name a key can bring, the RULES 7
COALESCE view parses to exactly one statement in every dialect, runs in Spark and in
DuckDB, and returns each key's values under the key's own name; no name ends a
statement or injects another (a sentinel table survives every view).

Names holding ``$`` and ``${...}`` (issue #25): Spark replaces ``${env:HOME}`` by the
driver's environment variable and ``${spark.app.name}`` by a setting in SQL text, also
when it parses a stored view to read it. The view is created and read right whether the
session substitutes or not, and no environment value reaches the SQL.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest
import sqlglot
from click.testing import CliRunner
from pyiceberg.catalog import Catalog
from sqlglot import exp

import toolkit
from tests.reliability.test_hostile import HOSTILE_KEYS
from toolkit.cli import cli
from toolkit.core.evolution.export import plan_statements
from toolkit.core.values.types import Struct
from toolkit.core.views import DIALECTS, Dialect
from toolkit.iceberg.catalog import embedded_folder
from toolkit.iceberg.duckdb import duckdb_connection, run_view
from toolkit.iceberg.schema import from_iceberg
from toolkit.pipeline.ingest import ingest
from toolkit.spark.views import SUBSTITUTE, create_coalesce_view

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SENTINEL = "sentinel"

#: names built to end a statement, open a comment or break out of any quoting
NAMES: tuple[str, ...] = (
    *HOSTILE_KEYS,
    f"a; DROP TABLE {SENTINEL}",
    f"a`; DROP TABLE {SENTINEL}; --",
    f'a"; DROP TABLE {SENTINEL}; --',
    f"a'; DROP TABLE {SENTINEL}; --",
    f"a]; DROP TABLE {SENTINEL}; --",
    "x` --",
    "x' --",
    "`a``b```",
    '"a""b"""',
    "-- comment",
    "/* open",
    "*/",
    "a\\",
    "a\nb",
    "tab\there",
    "Ωmega 名前 🚀",
    # Spark's variables (spark.sql.variable.substitute): an environment variable, a
    # setting, an unknown name (replaced by nothing), several in one name, a lone dollar
    "${env:HOME}",
    "${spark.app.name}",
    "${system:user.home}",
    "${no_such_variable}",
    "a${x}b${y}`${z}",
    "$",
    "a$b",
    "${",
)

#: Spark's substitutions of the names above, which must never show in SQL or messages
SUBSTITUTED = tuple(v for v in (os.environ.get("HOME"), os.path.expanduser("~")) if v)


def drifted(names: tuple[str, ...]) -> list[list[dict[str, Any]]]:
    """Two batches: every key a long, then a string, so every family folds in the view."""
    return [
        [{"id": 1, **{k: i for i, k in enumerate(names)}}],
        [{"id": 2, **{k: f"s{i}" for i, k in enumerate(names)}}],
    ]


#: each key's folded (string) value per id, as the view must return it
EXPECTED: dict[int, dict[str, str]] = {
    1: {k: str(i) for i, k in enumerate(NAMES)},
    2: {k: f"s{i}" for i, k in enumerate(NAMES)},
}


def view_names(schema: Struct) -> dict[str, str]:
    """key -> the name of its view column: the key itself, numbered like its table column
    when it collides case-insensitively with an earlier one or is empty (RULES 4)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for c in schema.fields:
        if c.family not in out:
            name = c.family
            if not name or name.lower() in taken:
                n = 2
                while f"{name}_{n}".lower() in taken:
                    n += 1
                name = f"{name}_{n}"
            out[c.family] = name
            taken.add(name.lower())
    return out


@pytest.fixture(scope="module")
def schema() -> Struct:
    return toolkit.simulate(drifted(NAMES)).table_schema


def test_every_hostile_name_is_a_family_that_folds(schema: Struct) -> None:
    families: dict[str, list[str]] = {}
    for c in schema.fields:
        families.setdefault(c.family, []).append(c.name)
    assert set(families) == {"id", *NAMES}
    assert all(len(cols) == 2 for k, cols in families.items() if k != "id"), families


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("create", [False, True], ids=["select", "create-view"])
def test_the_view_parses_to_exactly_one_statement(
    schema: Struct, dialect: Dialect, create: bool
) -> None:
    sql = toolkit.coalesce_sql(schema, "db.t", dialect, view="db.v" if create else None)
    statements = sqlglot.parse(sql, read=dialect)
    assert len(statements) == 1, sql
    (tree,) = statements
    assert tree is not None
    assert tree.sql(dialect) == sql  # round trip: the text is what the tree says
    select = tree.expression if create else tree
    assert isinstance(select, exp.Select)
    names = view_names(schema)
    outputs = [p.alias_or_name for p in select.expressions]
    if create:
        assert isinstance(tree, exp.Create)
        view = tree.this
        if isinstance(view, exp.Schema):  # Spark, names with ${: the view's column list
            assert dialect == "spark"
            outputs = [i.name for i in view.expressions]
            view = view.this
        assert view.sql(dialect) == "db.v"
    # one projection per family, named by its key; reading only the table's columns
    assert outputs == list(names.values())
    columns = {c.name for c in schema.fields}
    assert {c.name for c in select.find_all(exp.Column)} <= columns
    assert [t.sql(dialect) for t in select.find_all(exp.Table)] == ["db.t"]
    assert not list(tree.find_all(exp.Drop, exp.Command, exp.Semicolon))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_name_ends_the_statement(dialect: Dialect) -> None:
    """Even alone, each name renders as one statement with its own name in it."""
    for name in NAMES:
        schema = toolkit.simulate([[{name: 1}], [{name: "x"}]]).table_schema
        sql = toolkit.coalesce_sql(schema, "db.t", dialect)
        (tree,) = sqlglot.parse(sql, read=dialect)
        assert tree is not None
        projections = tree.expressions
        assert len(projections) == 1, (name, sql)
        assert projections[0].alias_or_name == (name or "_2"), (name, sql)


# --- run for real: Spark (the view stored in the catalog) and DuckDB ------------------------

TABLE = "sql_safety.hostile"
VIEW = "sql_safety.hostile_folded"


@pytest.fixture(scope="module")
def hostile_table(lakehouse: Catalog, spark: SparkSession) -> Struct:
    """The table ingested by Spark in two drifting batches, and a sentinel table beside."""
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.sql_safety")
    spark.sql(f"CREATE TABLE {lakehouse.name}.sql_safety.{SENTINEL} (x INT) USING iceberg")
    spark.sql(f"INSERT INTO {lakehouse.name}.sql_safety.{SENTINEL} VALUES (42)")
    for i, batch in enumerate(drifted(NAMES)):
        ingest(batch, TABLE, lakehouse, spark, batch_id=f"sql-safety-{i}")
    return from_iceberg(lakehouse.load_table(TABLE).schema())


def check_folded(rows: list[dict[str, Any]], schema: Struct) -> None:
    names = view_names(schema)
    assert len(rows) == 2
    for row in rows:
        assert set(row) == set(names.values())
        want = EXPECTED[row[names["id"]]]
        got = {k: row[names[k]] for k in NAMES}
        assert got == want


@pytest.mark.spark
def test_the_spark_view_runs_and_returns_each_key(
    hostile_table: Struct, lakehouse: Catalog, spark: SparkSession
) -> None:
    sql = create_coalesce_view(spark, TABLE, VIEW)
    assert len(sqlglot.parse(sql, read="spark")) == 1
    rows = [r.asDict() for r in spark.table(f"{lakehouse.name}.{VIEW}").collect()]
    check_folded(rows, hostile_table)
    # the sentinel is still there, untouched
    sentinel = spark.table(f"{lakehouse.name}.sql_safety.{SENTINEL}").collect()
    assert [r.x for r in sentinel] == [42]
    assert lakehouse.load_table(f"sql_safety.{SENTINEL}") is not None


@pytest.mark.spark
def test_the_duckdb_view_runs_and_returns_each_key(
    hostile_table: Struct, lakehouse: Catalog
) -> None:
    con = duckdb_connection()
    con.execute(f"CREATE TABLE {SENTINEL} (x INTEGER)")
    con.execute(f"INSERT INTO {SENTINEL} VALUES (42)")
    rows = run_view(lakehouse.load_table(TABLE), connection=con)
    check_folded(rows, hostile_table)
    assert con.execute(f"SELECT x FROM {SENTINEL}").fetchall() == [(42,)]


# --- Spark's variable substitution (issue #25) ----------------------------------------------


def no_variable_text(sql: str) -> None:
    """Spark SQL text whose query Spark cannot rewrite: no ``${`` outside the view's column
    list and the comment saying to run it with substitution off."""
    assert not any(v in sql for v in SUBSTITUTED), sql
    tree = sqlglot.parse_one(sql, read="spark")
    select = tree.expression if isinstance(tree, exp.Create) else tree
    aliases = {a.alias for a in select.find_all(exp.Alias)}
    for node in select.find_all(exp.Column, exp.Literal):
        assert "${" not in node.name, (node, sql)
    if isinstance(tree, exp.Create):
        assert not [a for a in aliases if "${" in a], sql


@pytest.mark.spark
@pytest.mark.parametrize("substitute", ["true", "false"], ids=["substituting", "not"])
def test_names_with_spark_variables_create_and_read_in_any_session(
    hostile_table: Struct, lakehouse: Catalog, spark: SparkSession, substitute: str
) -> None:
    """The contract: create_coalesce_view on keys ``${env:HOME}`` and ``${spark.app.name}``
    works and the view returns their values, in a session that substitutes (Spark's
    default) or not, and read back from either kind of session."""
    assert spark.conf.get(SUBSTITUTE) == "false"  # the toolkit's sessions
    view = f"{VIEW}_{substitute}"
    try:
        spark.conf.set(SUBSTITUTE, substitute)
        sql = create_coalesce_view(spark, TABLE, view)
        assert spark.conf.get(SUBSTITUTE) == substitute  # as it was
        no_variable_text(sql)
        for reading in ("true", "false"):
            spark.conf.set(SUBSTITUTE, reading)
            rows = [r.asDict() for r in spark.table(f"{lakehouse.name}.{view}").collect()]
            check_folded(rows, hostile_table)
    finally:
        spark.conf.set(SUBSTITUTE, "false")


@pytest.mark.spark
def test_the_sql_toolkit_view_prints_runs_with_substitution_off(
    hostile_table: Struct, lakehouse: Catalog, spark: SparkSession
) -> None:
    """The Spark SQL ``toolkit view`` prints says to turn substitution off; so run, it
    creates the view, which then reads right in a session that substitutes."""
    folder = embedded_folder(lakehouse)
    assert folder is not None
    view = f"{lakehouse.name}.{VIEW}_printed"
    out = CliRunner().invoke(cli, ["view", TABLE, "--catalog", str(folder), "--dialect", "spark",
                                   "--view", view], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    sql = out.output
    assert "SET spark.sql.variable.substitute=false" in sql
    no_variable_text(sql)
    try:
        spark.sql(sql)  # substitution off, as the comment says (the toolkit's sessions)
        spark.conf.set(SUBSTITUTE, "true")
        rows = [r.asDict() for r in spark.table(view).collect()]
        check_folded(rows, hostile_table)
    finally:
        spark.conf.set(SUBSTITUTE, "false")
    # the bare SELECT keeps each key as its alias, and reads every column as written
    out = CliRunner().invoke(cli, ["view", TABLE, "--catalog", str(folder), "--dialect", "spark"],
                             catch_exceptions=False)
    assert "SET spark.sql.variable.substitute=false" in out.output
    rows = [r.asDict() for r in spark.sql(out.output).collect()]
    check_folded(rows, hostile_table)


@pytest.mark.spark
def test_exported_spark_sql_turns_substitution_off_first(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    """The plan as Spark SQL (``toolkit export --as spark-sql``) for names with ``${``
    starts by turning substitution off; run statement by statement in a session that
    substitutes, it adds the columns by their own names."""
    names = ("${env:HOME}", "${spark.app.name}", "a${x}b")
    plan = toolkit.simulate([[{"id": 1}], [{"id": 2, **{k: 1 for k in names}}]]).plans[1]
    statements = plan_statements(plan, "spark", "sql_safety.exported")
    assert statements[0] == "SET spark.sql.variable.substitute=false"
    assert not any(v in s for s in statements for v in SUBSTITUTED)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {lakehouse.name}.sql_safety")
    spark.sql(f"CREATE TABLE {lakehouse.name}.sql_safety.exported (id BIGINT) USING iceberg")
    try:
        spark.conf.set(SUBSTITUTE, "true")
        for statement in statements:
            spark.sql(statement)
    finally:
        spark.conf.set(SUBSTITUTE, "false")
    columns = [f.name for f in lakehouse.load_table("sql_safety.exported").schema().fields]
    assert columns == ["id", *sorted(names)]
