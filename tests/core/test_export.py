"""Plans exported as code (toolkit.core.evolution.export): the Spark SQL run by Spark, and the
PyIceberg code run by PyIceberg, give the table the schema the plan gives."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, assume, given, settings
from pyiceberg.catalog import Catalog

from tests.core.plan_strategies import plans
from toolkit.core.batch.options import make_options
from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.export import (
    ExportError,
    operations_pyiceberg,
    operations_sql,
    plan_statements,
)
from toolkit.core.evolution.operations import add, drop, move_before, move_first, rename, widen_to
from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Struct
from toolkit.iceberg.schema import from_iceberg, to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_tables = itertools.count()
SLOW = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


def without_ids(t: ColumnType) -> ColumnType:
    """A type with every field ID 0: what remains is names, types, docs and required."""
    if isinstance(t, Struct):
        return Struct(tuple(replace(c, id=0, type=without_ids(c.type)) for c in t.fields))
    if isinstance(t, ListOf):
        return ListOf(0, without_ids(t.element))
    if isinstance(t, MapOf):
        return replace(t, key_id=0, value_id=0, key=without_ids(t.key),
                       value=without_ids(t.value))
    return t


def copy_of_before(catalog: Catalog, plan: Plan) -> tuple[str, bool]:
    """A new table with the plan's ``before`` schema (none for a plan that creates one);
    whether the catalog numbered it as the plan did (then IDs are compared too)."""
    name = f"export.t{next(_tables)}"
    if not plan.before.fields:
        return name, True
    catalog.create_namespace_if_not_exists("export")
    table = catalog.create_table(name, schema=to_iceberg(plan.before))
    return name, from_iceberg(table.schema()) == plan.before


def check_schema(catalog: Catalog, name: str, plan: Plan, same_ids: bool) -> None:
    got = from_iceberg(catalog.load_table(name).schema())
    assert without_ids(got) == without_ids(plan.after)
    if same_ids:  # field IDs as the engine assigns them: the plan numbers like Iceberg
        assert got == plan.after


@pytest.mark.spark
@settings(max_examples=12, deadline=None, suppress_health_check=SLOW)
@given(plan=plans())
def test_exported_spark_sql_gives_the_plans_schema(
    plan: Plan, lakehouse: Catalog, spark: SparkSession
) -> None:
    assume(not plan.rewrites and plan.after.fields)
    name, same_ids = copy_of_before(lakehouse, plan)
    for statement in plan_statements(plan, "spark", name):
        spark.sql(statement)
    check_schema(lakehouse, name, plan, same_ids)


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(plan=plans())
def test_exported_pyiceberg_code_gives_the_plans_schema(plan: Plan, lakehouse: Catalog) -> None:
    assume(not plan.rewrites and plan.after.fields)
    name, same_ids = copy_of_before(lakehouse, plan)
    code = plan.to_pyiceberg(name)
    compile(code, "<export>", "exec")
    exec(code, {"catalog": lakehouse})
    check_schema(lakehouse, name, plan, same_ids)


def _dotted_plans() -> list[Plan]:
    """RULES 4: a key ``dot.key`` and records ``dot`` holding ``key``, in both orders, under
    both policies: Iceberg's name index has ``dot.key`` for ``dot.element.key`` too."""
    out = []
    for policy in ("upsolver", "widen"):
        engine = Engine(make_options(policy=policy))
        for first, second in (
            ({"dot": [{"key": True}]}, {"dot.key": False}),
            ({"dot.key": False}, {"dot": [{"key": True}]}),
        ):
            before = engine.plan(Struct(), engine.observe([first]))
            out.append(engine.plan(before.after, engine.observe([second]), 1))
        out.append(engine.plan(Struct(), engine.observe([{"dot": [{"key": 1}], "dot.key": 2}])))
    return out


@pytest.mark.spark
def test_spark_accepts_a_dotted_key_beside_records_holding_its_name(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    for plan in _dotted_plans():
        name, same_ids = copy_of_before(lakehouse, plan)
        for statement in plan_statements(plan, "spark", name):
            spark.sql(statement)
        check_schema(lakehouse, name, plan, same_ids)


def test_pyiceberg_accepts_a_dotted_key_beside_records_holding_its_name(
    lakehouse: Catalog,
) -> None:
    for plan in _dotted_plans():
        name, same_ids = copy_of_before(lakehouse, plan)
        exec(plan.to_pyiceberg(name), {"catalog": lakehouse})
        check_schema(lakehouse, name, plan, same_ids)


def _record_plan() -> Plan:
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"x y": {"a": 1}}]))
    return engine.plan(first.after, engine.observe([{"x y": {"a": "it's", "b`": [1]}}]), 1)


def test_nested_fields_are_added_by_their_full_names_and_every_name_is_quoted() -> None:
    plan = _record_plan()
    assert plan_statements(plan, "spark", "db.t") == [
        "ALTER TABLE `db`.`t` ADD COLUMN `x y`.`a_string` STRING "
        "COMMENT 'upsolver_evolved_from:a'",
        "ALTER TABLE `db`.`t` ADD COLUMN `x y`.`b``` ARRAY<BIGINT>",
    ]
    assert plan.to_sql("trino", "cat.db.t").splitlines() == [
        'ALTER TABLE "cat"."db"."t" ADD COLUMN "x y"."a_string" VARCHAR '
        "COMMENT 'upsolver_evolved_from:a';",
        'ALTER TABLE "cat"."db"."t" ADD COLUMN "x y"."b`" ARRAY(BIGINT);',
    ]


def test_a_new_table_is_created_with_its_namespace() -> None:
    engine = Engine()
    plan = engine.plan(Struct(), engine.observe([{"n": 1, "at": "2024-05-01T10:00:00Z"}]))
    assert plan_statements(plan, "trino", "db.t") == [
        'CREATE SCHEMA IF NOT EXISTS "db"',
        'CREATE TABLE "db"."t" ("at" TIMESTAMP(6) WITH TIME ZONE, "n" BIGINT)',
    ]
    assert plan_statements(plan, "spark", "db.t")[1] == (
        "CREATE TABLE `db`.`t` (`at` TIMESTAMP, `n` BIGINT) USING ICEBERG"
    )


def test_a_users_operations_become_their_statements() -> None:
    table = Struct((Column(1, "id", "int"), Column(2, "name", "string"), Column(3, "x", "long")))
    ops = [widen_to("id", "long"), rename("name", "full_name"), move_before("x", "id"),
           move_first("full_name"), drop("x"), add("tags", "list<string>", "it's")]
    assert operations_sql(table, ops, "spark", "db.t").splitlines() == [
        "ALTER TABLE `db`.`t` ALTER COLUMN `id` TYPE BIGINT;",
        "ALTER TABLE `db`.`t` RENAME COLUMN `name` TO `full_name`;",
        "ALTER TABLE `db`.`t` ALTER COLUMN `x` FIRST;",
        "ALTER TABLE `db`.`t` ALTER COLUMN `full_name` FIRST;",
        "ALTER TABLE `db`.`t` DROP COLUMN `x`;",
        "ALTER TABLE `db`.`t` ADD COLUMN `tags` ARRAY<STRING> COMMENT 'it\\'s';",
    ]
    code = operations_pyiceberg(table, ops, "db.t")
    assert code.count("with table.update_schema() as update:") == len(ops)
    assert "update.move_before(('x',), ('id',))" in code
    with pytest.raises(ExportError, match="Trino cannot reorder columns"):
        operations_sql(table, ops, "trino", "db.t")


def test_what_an_engine_cannot_express_is_refused_in_plain_words() -> None:
    table = Struct((Column(1, "n", "long"),))
    with pytest.raises(ExportError, match="rewrites data"):
        operations_sql(table, [widen_to("n", "string", rewrite=True)], "spark", "db.t")
    with pytest.raises(ExportError, match="type uuid has no Spark SQL name"):
        operations_sql(table, [add("u", "uuid")], "spark", "db.t")
    with pytest.raises(ExportError, match="unknown SQL dialect 'mysql'"):
        operations_sql(table, [add("u", "long")], "mysql", "db.t")  # type: ignore[arg-type]
