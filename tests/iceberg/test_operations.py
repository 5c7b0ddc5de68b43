"""RULES 6 on real tables: each operation with Iceberg's correctness guarantee, read back
through Spark SQL and PyIceberg; atomic commits, stale refusal, lineage and undo.

Tables live in the shared SQLite catalog (``lakehouse``) and are written with PyIceberg
appends or Spark's Iceberg writer (``spark``); a few rows each.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError
from sqlglot import exp

import toolkit
from toolkit import ops
from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.options import Options
from toolkit.core.evolution.lineage import plan_lineage_properties
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.errors import (
    IrreversibleError,
    OperationError,
    RewriteNotApprovedError,
    StalePlanError,
)
from toolkit.iceberg.lineage import lineage, undo
from toolkit.iceberg.operations import evolve, layout_of, preview_evolution
from toolkit.iceberg.schema import from_iceberg, type_to_iceberg

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NS = "evo"
_names = itertools.count()

DATA = pa.table(
    {
        "id": pa.array([1, 2, 3], pa.int64()),
        "name": pa.array(["ann", None, "cy"], pa.string()),
        "n": pa.array([10, None, 2**40], pa.int64()),
        "small": pa.array([1, -2, None], pa.int32()),
        "ratio": pa.array([0.5, None, 1.25], pa.float32()),
    }
)


@pytest.fixture
def table(lakehouse: Catalog) -> str:
    """A fresh table holding DATA (one PyIceberg append)."""
    with contextlib.suppress(NamespaceAlreadyExistsError):
        lakehouse.create_namespace(NS)
    name = f"{NS}.t{next(_names)}"
    lakehouse.create_table(name, schema=DATA.schema).append(DATA)
    return name


def spark_rows(
    spark: SparkSession, catalog: Catalog, name: str, snapshot: int | None = None
) -> list[dict[str, Any]]:
    """Rows through Spark SQL (``VERSION AS OF`` for an older snapshot), by id."""
    source = exp.to_table(f"{catalog.name}.{name}")
    if snapshot is not None:
        source.set(
            "version",
            exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(snapshot)),
        )
    sql = exp.select("*").from_(source).sql(dialect="spark")
    rows = [r.asDict(recursive=True) for r in spark.sql(sql).collect()]
    return sorted(rows, key=lambda r: r.get("id") or r.get("key") or 0)


def py_rows(catalog: Catalog, name: str, snapshot: int | None = None) -> list[dict[str, Any]]:
    """Rows through a PyIceberg scan (of an older snapshot when given), by id."""
    rows = catalog.load_table(name).scan(snapshot_id=snapshot).to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r.get("id") or r.get("key") or 0)


def both(spark: SparkSession, catalog: Catalog, name: str) -> list[dict[str, Any]]:
    """The rows, asserting Spark and PyIceberg read the same."""
    via_spark, via_py = spark_rows(spark, catalog, name), py_rows(catalog, name)
    assert via_spark == via_py
    return via_py


def column_values(rows: list[dict[str, Any]], name: str) -> list[Any]:
    return [r[name] for r in rows]


def test_a_renamed_column_keeps_its_data_and_undo_renames_it_back(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    entry = toolkit.evolve(lakehouse, table, [ops.rename("name", "full_name")], batch="b1")
    rows = both(spark, lakehouse, table)
    assert column_values(rows, "full_name") == ["ann", None, "cy"]
    assert "name" not in rows[0]
    assert (entry.decided_by, entry.batch) == ("user", "b1")
    assert entry.inverse() == (ops.rename("full_name", "name"),)

    toolkit.undo(lakehouse, table, entry)
    assert column_values(both(spark, lakehouse, table), "name") == ["ann", None, "cy"]


def test_an_added_column_never_reads_a_dropped_columns_values_under_the_same_name(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    before = lakehouse.load_table(table).current_snapshot()
    assert before is not None
    toolkit.evolve(lakehouse, table, [ops.drop("name"), ops.add("name", "string")],
                   drop_data=True)
    rows = both(spark, lakehouse, table)
    assert column_values(rows, "name") == [None, None, None]
    assert column_values(rows, "id") == [1, 2, 3]
    # old snapshots read as they were
    assert column_values(spark_rows(spark, lakehouse, table, before.snapshot_id), "name") == [
        "ann", None, "cy",
    ]  # fmt: skip


def test_a_reorder_changes_no_value(lakehouse: Catalog, spark: SparkSession, table: str) -> None:
    before = both(spark, lakehouse, table)
    toolkit.evolve(lakehouse, table, [ops.move_first("ratio"), ops.move_after("id", "n")])
    after = both(spark, lakehouse, table)
    assert list(after[0]) == ["ratio", "name", "n", "id", "small"]
    assert after == before  # same values under every name (dict equality ignores order)


def test_a_drop_changes_no_other_column(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    before = both(spark, lakehouse, table)
    entry = toolkit.evolve(lakehouse, table, [ops.drop("n")], drop_data=True)
    after = both(spark, lakehouse, table)
    assert after == [{k: v for k, v in r.items() if k != "n"} for r in before]
    assert entry.inverse() is None
    with pytest.raises(IrreversibleError, match="a drop cannot be undone"):
        undo(lakehouse, table, entry)


def test_make_optional_then_nulls_can_be_written(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    name = f"{table}_req"
    tbl = lakehouse.create_table(name, schema=schema)
    tbl.append(pa.table({"id": [1], "v": ["a"]}, schema=schema))
    assert tbl.schema().find_field("id").required
    toolkit.evolve(lakehouse, name, [ops.make_optional("id")])
    assert not lakehouse.load_table(name).schema().find_field("id").required
    spark.createDataFrame([(None, "b")], "id long, v string").writeTo(
        f"{lakehouse.name}.{name}"
    ).append()
    assert sorted(column_values(both(spark, lakehouse, name), "v")) == ["a", "b"]


def test_in_place_widenings_rewrite_nothing(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    snapshot = lakehouse.load_table(table).current_snapshot()
    preview = preview_evolution(
        lakehouse, table, [ops.widen("small", "long"), ops.widen("ratio", "double")]
    )
    assert preview.plan.rewrites == ()
    toolkit.evolve(lakehouse, table, preview.plan, expected=preview.state)
    tbl = lakehouse.load_table(table)
    assert str(tbl.schema().find_field("small").field_type) == "long"
    assert str(tbl.schema().find_field("ratio").field_type) == "double"
    assert tbl.current_snapshot() == snapshot  # no data file written
    rows = both(spark, lakehouse, table)
    assert column_values(rows, "small") == [1, -2, None]
    assert column_values(rows, "ratio") == [0.5, None, 1.25]


def test_a_rewrite_keeps_the_name_needs_approval_and_time_travel_reads_old_values(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    old = lakehouse.load_table(table).current_snapshot()
    assert old is not None
    with pytest.raises(RewriteNotApprovedError, match=r"rewrites the data \(3 rows"):
        toolkit.evolve(lakehouse, table, [ops.widen("n", "string")])
    assert lakehouse.load_table(table).current_snapshot() == old  # refused: nothing changed

    preview = preview_evolution(
        lakehouse, table, [ops.widen("n", "string"), ops.widen("ratio", "string")]
    )
    rewrite = preview.plan.rewrites[0]
    assert (rewrite.rewrite, rewrite.rows) == (True, 3)
    assert rewrite.bytes is not None and rewrite.bytes > 0
    assert "REWRITE (3 rows" in str(preview)
    entry = toolkit.evolve(lakehouse, table, preview.plan, expected=preview.state)

    tbl = lakehouse.load_table(table)
    assert [f.name for f in tbl.schema().fields] == ["id", "name", "n", "small", "ratio"]
    assert str(tbl.schema().find_field("n").field_type) == "string"
    rows = both(spark, lakehouse, table)
    assert column_values(rows, "n") == ["10", None, "1099511627776"]
    assert column_values(rows, "ratio") == ["0.5", None, "1.25"]
    assert column_values(rows, "name") == ["ann", None, "cy"]
    # one commit: the schema change and the rewritten data arrive together
    assert [s.snapshot_id for s in tbl.snapshots()][:-1] == [old.snapshot_id]
    # time travel returns the old values, through Spark and PyIceberg
    for rows_then in (
        spark_rows(spark, lakehouse, table, old.snapshot_id),
        py_rows(lakehouse, table, old.snapshot_id),
    ):
        assert column_values(rows_then, "n") == [10, None, 2**40]
    assert entry.irreversible and entry.inverse() is None


def test_a_lossy_rewrite_is_refused(lakehouse: Catalog, table: str) -> None:
    with pytest.raises(ValueError, match=r"value 1099511627777 would change"):
        tbl = lakehouse.load_table(table)
        tbl.append(
            pa.table(
                {"id": [4], "name": ["d"], "n": [2**40 + 1], "small": [0], "ratio": [0.0]},
                schema=DATA.schema,
            )  # fmt: skip
        )
        toolkit.evolve(lakehouse, table, [ops.widen("small", "float", rewrite=True),
                                          ops.widen("n", "float", rewrite=True)])  # fmt: skip
    assert str(lakehouse.load_table(table).schema().find_field("n").field_type) == "long"


def test_partition_spec_evolution_partitions_new_data(
    lakehouse: Catalog, spark: SparkSession, table: str
) -> None:
    preview = preview_evolution(lakehouse, table, [ops.partition_by("id", "bucket[4]")])
    assert [p.name for p in preview.plan.after.partition] == ["id_bucket_4"]
    entry = toolkit.evolve(lakehouse, table, preview.plan, expected=preview.state)
    target = f"{lakehouse.name}.{table}"
    spark.createDataFrame(
        [(7, "g", None, None, None)], "id long, name string, n long, small int, ratio float"
    ).writeTo(target).append()

    files = lakehouse.load_table(table).inspect.files().to_pylist()
    partitions = sorted((f["spec_id"], f["partition"]["id_bucket_4"]) for f in files)
    assert partitions[0] == (0, None)  # the old file keeps its (unpartitioned) layout
    assert partitions[1][0] == 1 and partitions[1][1] in range(4)  # new data is bucketed
    assert len(both(spark, lakehouse, table)) == 4

    toolkit.undo(lakehouse, table, entry)  # removes the partition field again
    assert lakehouse.load_table(table).spec().is_unpartitioned()
    spark.createDataFrame(
        [(8, "h", None, None, None)], "id long, name string, n long, small int, ratio float"
    ).writeTo(target).append()
    # the unpartitioned spec is current again (Iceberg reuses spec 0): the new file uses it
    files = lakehouse.load_table(table).inspect.files().to_pylist()
    assert sorted(f["spec_id"] for f in files) == [0, 0, 1]
    assert [r["id"] for r in both(spark, lakehouse, table)] == [1, 2, 3, 7, 8]


def test_sort_order_evolution_and_undo(lakehouse: Catalog, table: str) -> None:
    entry = toolkit.evolve(lakehouse, table, [ops.sort_by("name", ops.SortKey(("id",), "desc"))])
    order = lakehouse.load_table(table).sort_order()
    assert [(f.source_id, f.direction.value, f.null_order.value) for f in order.fields] == [
        (2, "asc", "nulls-first"),
        (1, "desc", "nulls-last"),
    ]
    toolkit.undo(lakehouse, table, entry)
    assert lakehouse.load_table(table).sort_order().is_unsorted


def test_a_plan_with_an_invalid_operation_commits_nothing(lakehouse: Catalog, table: str) -> None:
    location = lakehouse.load_table(table).metadata_location
    with pytest.raises(OperationError, match=r"operation 3 \(drop nope\): no field 'nope'"):
        toolkit.evolve(
            lakehouse, table, [ops.rename("name", "x"), ops.add("y", "long"), ops.drop("nope")]
        )
    tbl = lakehouse.load_table(table)
    assert tbl.metadata_location == location
    assert [f.name for f in tbl.schema().fields] == ["id", "name", "n", "small", "ratio"]
    assert lineage(tbl) == ()


def test_a_plan_is_refused_when_the_table_moved_since_its_preview(
    lakehouse: Catalog, table: str
) -> None:
    preview = preview_evolution(lakehouse, table, [ops.rename("name", "x")])
    lakehouse.load_table(table).append(DATA)  # another writer
    with pytest.raises(StalePlanError, match="moved since the plan was made"):
        toolkit.evolve(lakehouse, table, preview.plan, expected=preview.state)
    # a previewed plan is checked against the current schema even without `expected`
    toolkit.evolve(lakehouse, table, [ops.rename("name", "other")])
    with pytest.raises(StalePlanError):
        toolkit.evolve(lakehouse, table, preview.plan)
    assert [f.name for f in lakehouse.load_table(table).schema().fields][1] == "other"


def test_lineage_logs_each_plan_with_who_why_and_batch(lakehouse: Catalog, table: str) -> None:
    evolve(lakehouse, table, [ops.add("email", "string", doc="contact")], batch="day2",
           reason="CRM export")  # fmt: skip
    evolve(lakehouse, table, [ops.drop("small")], decided_by="cleanup job", drop_data=True)
    first, second = lineage(lakehouse.load_table(table))
    assert (first.seq, first.decided_by, first.batch, first.reason) == (
        1, "user", "day2", "CRM export",
    )  # fmt: skip
    assert first.operations == (ops.add("email", "string", doc="contact"),)
    assert first.inverse() == (ops.drop("email"),)
    assert (second.seq, second.decided_by, second.inverse()) == (2, "cleanup job", None)
    assert "drop cannot be undone" in second.irreversible[0]


def test_undo_of_an_add_drops_it_unless_the_column_was_replaced(
    lakehouse: Catalog, table: str
) -> None:
    entry = evolve(lakehouse, table, [ops.add("extra", "long")])
    evolve(lakehouse, table, [ops.drop("extra"), ops.add("extra", "long")])
    with pytest.raises(OperationError, match="the table changed since lineage entry 1"):
        undo(lakehouse, table, entry)
    latest = lineage(lakehouse.load_table(table))[-1]
    assert latest.inverse() is None  # it holds a drop
    again = evolve(lakehouse, table, [ops.add("more", "long")])
    undo(lakehouse, table, again.seq)
    names = [f.name for f in lakehouse.load_table(table).schema().fields]
    assert "more" not in names and "extra" in names
    assert lineage(lakehouse.load_table(table))[-1].reason == f"undo of lineage entry {again.seq}"


def test_automatic_plans_log_their_rule_and_batch(lakehouse: Catalog, table: str) -> None:
    tbl = lakehouse.load_table(table)
    opts = Options()
    plan = plan_batch(from_iceberg(tbl.schema()), observe_struct([{"n": "text"}], opts), opts, 4)
    props = plan_lineage_properties(plan, tbl.properties, "day4")
    with tbl.transaction() as txn:  # what the automatic commit does, in its own commit
        with txn.update_schema() as update:
            for change in plan.changes:
                field_type = type_to_iceberg(change.column.type)
                update.add_column(change.path, field_type, doc=change.column.doc)
        txn.set_properties(props)
    (entry,) = lineage(lakehouse.load_table(table))
    assert (entry.decided_by, entry.batch) == ("RULES 3", "day4")
    assert entry.operations == (ops.add("n_string", "string", doc="upsolver_evolved_from:n"),)
    assert entry.reasons[0] is not None and entry.reasons[0].endswith("(RULES 3.3)")
    assert entry.inverse() == (ops.drop("n_string"),)
    assert layout_of(lakehouse.load_table(table)).schema.by_name()["n_string"].doc == (
        "upsolver_evolved_from:n"
    )
