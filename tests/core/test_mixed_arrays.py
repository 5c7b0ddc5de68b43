"""Arrays mixing records and primitives (issue 12, docs/rules.md "Mixed arrays").

``x = [{"k": 1}, "a"]`` is split by position: its records go to the family's record array
column (``[{"k": 1}, null]``), its primitives to a primitive array column whose element is
the widest of the primitive leaves (``[null, "a"]``). Records are never written into
string columns (RULES 3); both parts are queryable and a reader zips them back.
"""

from __future__ import annotations

import random
from typing import Any

import duckdb
import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow

import toolkit
from tests.core.helpers import columns, docs, run
from toolkit.core.batch.observe import observe_struct
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import profile
from toolkit.core.batch.routing import Router, Rule, explain_record
from toolkit.core.batch.summary import summarize
from toolkit.core.engine import make_plan
from toolkit.core.values.types import RECORD, Column, Kind, ListOf, Shape, Struct
from toolkit.core.views import coalesce_sql

MIXED = Kind(RECORD, 1, frozenset(), "string")


def kinds_of(*values: Any) -> dict[Kind, int]:
    obs = observe_struct([{"x": v} for v in values], Options())
    return dict(obs.fields["x"].counts)


# --- observation and profile ---------------------------------------------------------------


def test_a_mixed_array_is_one_value_of_a_mixed_kind() -> None:
    assert kinds_of([{"k": 1}, "a"], [{"k": 2}, "b", None]) == {MIXED: 2}
    assert MIXED.parts == (Kind(RECORD, 1), Kind("string", 1))
    assert str(MIXED.shape) == "(record|string)[]"


def test_records_only_and_primitives_only_arrays_are_unchanged() -> None:
    assert kinds_of([{"k": 1}, None], [[{"k": 1}], []]) == {Kind(RECORD, 1): 1, Kind(RECORD, 2): 1}
    assert kinds_of([1, "a"], [1, 2.5]) == {Kind("string", 1): 1, Kind("double", 1): 1}
    r = run([{"x": [{"k": 1}]}, {"y": [1, "a"]}])
    assert columns(r.table_schema) == {"x": "list<struct<k: long>>", "y": "list<string>"}


def test_the_primitive_part_is_the_widest_of_the_primitive_leaves() -> None:
    """RULES 2 over the primitive leaves only; a long a double would round stays lossy."""
    assert kinds_of([{"k": 1}, 1, 2.5]) == {Kind(RECORD, 1, frozenset(), "double"): 1}
    assert kinds_of([{"k": 1}, True, "2024-01-01"]) == {MIXED: 1}  # boolean, date: string
    assert kinds_of([{"k": 1}, 2**53 + 1]) == {Kind(RECORD, 1, frozenset({"double"}), "long"): 1}


def test_the_dimension_is_the_whole_array_depth() -> None:
    """RULES 1: both parts take the array's largest depth (ragged leaves are wrapped)."""
    assert kinds_of([[{"k": 1}, 2], [3]]) == {Kind(RECORD, 2, frozenset(), "long"): 1}
    assert kinds_of([{"k": 1}, [2]]) == {Kind(RECORD, 2, frozenset(), "long"): 1}


def test_the_profile_shows_what_arrived() -> None:
    p = profile([{"x": [{"k": 1}, "a"]}, {"x": [1, "b"]}, {"x": None}])
    stats = p.fields[("x",)]
    assert stats.counts == {Shape(RECORD, 1, "string"): 1, Shape("string", 1): 1}
    assert stats.nulls == 1 and stats.present == 2  # one value each, not one per part
    assert stats.records_inside == 1 and p.fields[("x", "k")].counts == {Shape("long", 0): 1}
    assert "(record|string)[]" in str(p)


# --- planning and routing ------------------------------------------------------------------


def test_the_example_of_issue_12() -> None:
    r = run([{"x": [{"k": 1}, "a"]}])
    assert columns(r.table_schema) == {
        "x": "list<struct<k: long>>", "x_array_string": "list<string>",
    }
    assert docs(r.table_schema) == {"x": None, "x_array_string": "upsolver_evolved_from:x"}
    assert r.rows == [{"x": [{"k": 1}, None], "x_array_string": [None, "a"]}]
    assert [c.reason for c in r.plans[0].changes] == [
        "The first batch had `x` as a list of records and a list of strings; lists of "
        "records keep the name `x` (RULES 3.2)",
        "The first batch also had `x` as a list of strings, which gets its own column "
        "(RULES 3.2)",
    ]


def test_positions_and_nulls_are_kept() -> None:
    r = run([{"x": [None, "a", {"k": 1}, None, {"k": None}, 2]}])
    assert r.rows[0] == {
        "x": [None, None, {"k": 1}, None, {"k": None}, None],
        "x_array_string": [None, "a", None, None, None, "2"],
    }


def test_several_primitive_types_land_in_every_column_that_receives_them() -> None:
    """RULES 3.1: the primitive part goes to its exact column and every wider one."""
    r = run([{"x": [{"k": 1}, 1, 2.5, True]}, {"x": [{"k": 2}, True, "2024-01-01"]}])
    assert columns(r.table_schema) == {
        "x": "list<struct<k: long>>", "x_array_double": "list<double>",
        "x_array_string": "list<string>",
    }
    assert r.rows == [
        {"x": [{"k": 1}, None, None, None], "x_array_double": [None, 1.0, 2.5, 1.0],
         "x_array_string": [None, "1", "2.5", "true"]},
        {"x": [{"k": 2}, None, None], "x_array_double": None,
         "x_array_string": [None, "true", "2024-01-01"]},
    ]


def test_dimension_two_and_ragged_arrays() -> None:
    """Both parts at the array's depth; a shallow leaf is wrapped in both columns, so the
    two columns always have the same shape and zip back leaf by leaf."""
    r = run([{"x": [[{"k": 1}, 2], [3, None], None]}, {"x": [{"k": 4}, [5]]}])
    assert columns(r.table_schema) == {
        "x": "list<list<struct<k: long>>>", "x_array2_long": "list<list<long>>",
    }
    assert r.rows == [
        {"x": [[{"k": 1}, None], [None, None], None],
         "x_array2_long": [[None, 2], [3, None], None]},
        {"x": [[{"k": 4}], [None]], "x_array2_long": [[None], [5]]},
    ]


def test_mixed_arrays_inside_records() -> None:
    """RULES 3.4: the nested key's family is split inside the struct, at every dimension."""
    r = run([{"r": {"x": [{"k": 1}, "a"]}}, {"r": [{"x": [[{"k": 2}], 3]}]}])
    assert columns(r.table_schema) == {
        "r": "list<struct<x: list<list<struct<k: long>>>, x_array2_long: list<list<long>>, "
             "x_array_record: list<struct<k: long>>, x_array_string: list<string>>>",
        "r_record": "struct<x: list<struct<k: long>>, x_array_string: list<string>>",
    }
    first, second = r.rows
    assert first["r_record"] == {"x": [{"k": 1}, None], "x_array_string": [None, "a"]}
    assert second["r"] == [{"x": [[{"k": 2}], [None]], "x_array2_long": [[None], [3]],
                            "x_array_record": None, "x_array_string": None}]


def test_a_later_batch_adds_what_the_family_lacks() -> None:
    """RULES 3.3, part by part: a record column, and the primitive column with its common
    denominator; a family that has both adds nothing."""
    r = run([{"x": 1}], [{"x": [{"k": 1}, "a", None]}], [{"x": [{"k": 2}, 3]}])
    assert columns(r.table_schema) == {
        "x": "long", "x_array_record": "list<struct<k: long>>", "x_array_string": "list<string>",
    }
    assert not r.plans[2].changed
    assert r.rows[1:] == [
        {"x": None, "x_array_record": [{"k": 1}, None, None],
         "x_array_string": [None, "a", None]},
        {"x": None, "x_array_record": [{"k": 2}, None], "x_array_string": [None, "3"]},
    ]


def test_records_of_a_mixed_array_evolve_the_record_column() -> None:
    r = run([{"x": [{"k": 1}]}], [{"x": [{"k": 1, "j": 2}, "a"]}])
    assert columns(r.table_schema) == {
        "x": "list<struct<k: long, j: long>>", "x_array_string": "list<string>",
    }
    assert r.rows[1] == {"x": [{"k": 1, "j": 2}, None], "x_array_string": [None, "a"]}


def test_records_without_fields_create_no_record_column() -> None:
    """docs/rules.md, empty records: only the primitive part makes a column then."""
    r = run([{"x": [{}, "a"]}, {"x": [{"k": None}, 1]}])
    assert columns(r.table_schema) == {"x": "list<string>", "x_array_long": "list<long>"}
    assert r.rows == [
        {"x": [None, "a"], "x_array_long": None},
        {"x": [None, "1"], "x_array_long": [None, 1]},
    ]


def test_the_order_of_records_and_a_replay_change_nothing() -> None:
    batch = [{"x": [{"k": 1}, "a"]}, {"x": 5}, {"x": [[{"k": "s"}], 2.5]}, {"x": [1, 2]}]
    base = run(batch)
    shuffled = batch[:]
    random.Random(12).shuffle(shuffled)
    assert run(shuffled).table_schema == base.table_schema
    assert not run(batch, batch).plans[1].changed


def test_planning_from_a_summary_equals_planning_from_the_observation() -> None:
    """What Spark partitions send back (a Summary) plans the same columns."""
    opts = Options()
    rows = [{"x": [{"k": 1}, "a"]}, {"r": {"y": [[{"z": 1}], True]}}]
    obs = observe_struct(rows, opts)
    assert make_plan(Struct(), summarize(obs), opts).after == make_plan(Struct(), obs, opts).after


def test_the_rule_of_a_mixed_kind_per_column() -> None:
    """Router.rule, which the JVM's routing table is made of: a record column takes the
    records (``records``), a primitive one the primitives (``convert``), by the lattice."""
    router = Router(Options())
    records = Column(1, "x", ListOf(2, Struct((Column(3, "k", "long"),))))
    texts = Column(4, "x_array_string", ListOf(5, "string"))
    longs = Column(6, "x_array_long", ListOf(7, "long"))
    assert router.rule(MIXED, records) == Rule("records", 0)
    assert router.rule(MIXED, texts) == Rule("convert", 0)
    assert router.rule(MIXED, longs) is None
    assert router.rule(Kind(RECORD, 1, frozenset(), "long"), longs) == Rule("convert", 0)


def test_a_preview_shows_both_landings() -> None:
    r = run([{"x": [{"k": 1}, "a"]}])
    landings = explain_record(Router(Options()), r.table_schema, {"x": [{"k": 2}, "b"]})
    assert [(x.column, x.stored) for x in landings] == [
        ("x", [{"k": 2}, None]), ("x_array_string", [None, "b"]),
    ]


# --- views and the widening policy ----------------------------------------------------------


def test_views_fold_the_family_into_one_column() -> None:
    """RULES 7, issue 28: a family with a record column folds into its JSON text (one view
    column per key); a list mixing records and values is stored as two lists, and the
    view's comment says it reads the records only."""
    r = run([{"x": 1}], [{"x": [{"k": 1}, "a"]}])
    sql = coalesce_sql(r.table_schema, "db.events", "duckdb")
    assert "a list mixing records and values reads its records only" in sql
    arrow = pa.Table.from_pylist(r.rows, schema=schema_to_pyarrow(r.schema))
    con = duckdb.connect()
    con.execute("CREATE SCHEMA db")
    con.register("staged", arrow)
    con.execute("CREATE TABLE db.events AS SELECT * FROM staged")
    got = con.execute(sql).fetchall()
    assert got == [("1",), ('[{"k":1},null]',)]


def test_the_widening_policy_quarantines_mixed_arrays() -> None:
    """RULES 5: one column per key, and no column type holds records and primitives: such a
    value is incompatible; it counts for no new column's type."""
    r = toolkit.simulate(
        [[{"x": [{"k": 1}, "a"], "y": 1}], [{"x": ["b"]}, {"x": [{"k": 1}, "c"]}]],
        policy="widen",
    )
    assert columns(r.table_schema) == {"y": "long", "x": "list<string>"}
    assert r.rows == [{"y": None, "x": ["b"]}]
    assert [(q.reason, q.field, q.observed) for q in r.quarantined] == [
        ("incompatible", "x", "(record|string)[]"),
        ("incompatible", "x.element", "record"),
    ]
