"""The automatic policy's rare-type threshold (``rare_type_percent``, docs/rules.md *Rare
types*): a type seen in fewer than that share of a top-level field's values in a batch, and
which would need a new column, does not evolve the schema; the records holding it are set
aside (reason ``rare-type``), and replaying them with the threshold off evolves it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from toolkit.core.batch.observe import Classifier, observe_struct
from toolkit.core.batch.options import Options, make_options
from toolkit.core.engine import Engine
from toolkit.core.policies import UPSOLVER, WIDEN
from toolkit.core.policies.upsolver_planner import plan_batch
from toolkit.core.values.types import Column, ListOf, Struct
from toolkit.errors import IncompatibleRecordError
from toolkit.iceberg import catalog
from toolkit.pipeline.preview import plan_preview

#: day 1: 2,000 prices, all doubles; day 2: 1,997 doubles and 3 texts
DAY1 = [{"id": i, "price": i + 0.5} for i in range(2000)]
DAY2 = [{"id": 2000 + i, "price": 1.25 if i not in (10, 500, 1999) else "n/a"}
        for i in range(2000)]
SENTENCE = (
    "3 of 2,000 values of `price` arrived as strings (0.15%, under the 1% rare-type "
    "threshold); set aside instead of adding price_string"
)


def names(schema: Struct) -> list[str]:
    return [c.name for c in schema.fields]


def test_off_by_default_every_type_evolves() -> None:
    assert Options().rare_type_percent is None
    assert make_options().rare_type_percent is None
    sim = toolkit.simulate([DAY1, DAY2])
    assert names(sim.table_schema) == ["id", "price", "price_string"]
    assert sim.quarantined == () and len(sim.rows) == 4000


def test_a_rare_type_is_set_aside_instead_of_adding_its_column() -> None:
    sim = toolkit.simulate([DAY1, DAY2], rare_type_percent=1)
    assert names(sim.table_schema) == ["id", "price"]
    assert [(q.record, q.reason, q.field, q.observed, q.table_type, q.batch, q.detail)
            for q in sim.quarantined] == [
        (DAY2[i], "rare-type", "price", "string", "double", 1, SENTENCE) for i in (10, 500, 1999)
    ]
    written = sim.rows
    assert len(written) == 3997
    assert written[2000:] == [
        {"id": r["id"], "price": 1.25} for r in DAY2 if r["price"] != "n/a"
    ]
    plan = sim.plans[1]
    assert not plan.changed and plan.operations == ()
    assert str(plan) == f"batch 2: no schema change, 1 rare type set aside\n- {SENTENCE}"


def test_replaying_the_records_with_the_threshold_off_evolves_and_loses_nothing() -> None:
    first = toolkit.simulate([DAY1, DAY2], rare_type_percent=1)
    again = [q.record for q in first.quarantined]
    replayed = toolkit.simulate([again], schema=first.table_schema)
    assert [c.column.name for c in replayed.plans[0].changes] == ["price_string"]
    assert replayed.rows == [{"id": r["id"], "price": None, "price_string": "n/a"} for r in again]
    # with the threshold still on, the replayed batch is all texts: nothing is rare in it
    still = toolkit.simulate([again], schema=first.table_schema, rare_type_percent=1)
    assert still.quarantined == ()


def test_a_rare_type_that_has_its_column_already_is_written() -> None:
    table = Struct((Column(1, "id", "long"), Column(2, "price", "double"),
                    Column(3, "price_string", "string", "upsolver_evolved_from:price")))
    sim = toolkit.simulate([DAY2], schema=table, rare_type_percent=1)
    assert sim.quarantined == () and sim.plans[0].rare == ()
    assert [r["price_string"] for r in sim.rows if r["price"] is None] == ["n/a"] * 3


def test_a_rare_type_that_converts_into_a_column_is_written_converted() -> None:
    batch = [{"price": 2.5}] * 998 + [{"price": 7}, {"price": 8}]  # longs fit price::double
    sim = toolkit.simulate([DAY1, batch], rare_type_percent=1)
    assert sim.quarantined == () and names(sim.table_schema) == ["id", "price"]
    assert [r["price"] for r in sim.rows[-2:]] == [7.0, 8.0]


def test_a_rare_type_in_a_first_batch_leaves_the_original_name_to_the_common_one() -> None:
    batch = [{"price": 1.5}] * 99 + [{"price": "n/a"}]
    sim = toolkit.simulate([batch], rare_type_percent=5)
    assert [(c.name, c.type) for c in sim.table_schema.fields] == [("price", "double")]
    (q,) = sim.quarantined
    assert q.record == {"price": "n/a"} and q.detail == (
        "1 of 100 values of `price` arrived as a string (1%, under the 5% rare-type threshold); "
        "set aside instead of adding price as string and price_double"
    )


def test_an_array_shape_is_a_type_of_its_own() -> None:
    batch = [{"tags": "a"}] * 199 + [{"tags": ["a", "b"]}]
    sim = toolkit.simulate([[{"tags": "x"}], batch], rare_type_percent=1)
    assert names(sim.table_schema) == ["tags"]
    assert [(q.observed, q.detail) for q in sim.quarantined] == [(
        "string[]",
        "1 of 200 values of `tags` arrived as a list of strings (0.5%, under the 1% rare-type "
        "threshold); set aside instead of adding tags_array_string",
    )]
    off = toolkit.simulate([[{"tags": "x"}], batch])
    assert names(off.table_schema) == ["tags", "tags_array_string"]


def test_a_rare_record_is_set_aside_and_nested_fields_are_not_judged() -> None:
    batch = [{"p": 1}] * 99 + [{"p": {"amount": 2}}]
    sim = toolkit.simulate([batch], rare_type_percent=2)
    assert names(sim.table_schema) == ["p"] and sim.quarantined[0].observed == "record"
    assert "instead of adding p as struct<amount: long> and p_long" in sim.quarantined[0].detail
    # inside records every type evolves (the threshold judges top-level keys only)
    nested = [{"r": {"x": 1}}] * 99 + [{"r": {"x": "s"}}]
    sim = toolkit.simulate([nested], rare_type_percent=2)
    assert sim.quarantined == ()
    inner = sim.table_schema.fields[0].type
    assert isinstance(inner, Struct) and names(inner) == ["x", "x_long"]


def test_a_share_at_the_threshold_is_not_rare_nor_are_types_all_under_it() -> None:
    at = [{"v": 1}] * 99 + [{"v": "s"}]  # exactly 1%: not under it
    assert toolkit.simulate([at], rare_type_percent=1).quarantined == ()
    assert names(toolkit.simulate([at], rare_type_percent=1).table_schema) == ["v", "v_long"]
    spread = [{"v": 1}, {"v": "s"}, {"v": True}] * 5  # each a third: none kept, so none rare
    sim = toolkit.simulate([spread], rare_type_percent=50)
    assert sim.quarantined == () and names(sim.table_schema) == ["v", "v_boolean", "v_long"]


def test_the_decision_does_not_depend_on_record_order() -> None:
    shuffled = list(DAY2)
    random.Random(7).shuffle(shuffled)
    a = toolkit.simulate([DAY1, DAY2], rare_type_percent=1)
    b = toolkit.simulate([DAY1, shuffled], rare_type_percent=1)
    assert a.plans == b.plans
    key = lambda q: q.record["id"]  # noqa: E731
    assert sorted(a.quarantined, key=key) == sorted(b.quarantined, key=key)


def test_failing_instead_names_the_field_and_the_share() -> None:
    with pytest.raises(IncompatibleRecordError, match=r"batch 2: 3 of 2,000 values of `price`"):
        toolkit.simulate([DAY1, DAY2], rare_type_percent=1, on_incompatible="fail")


@pytest.mark.parametrize("value, why", [
    (0, "is out of range"), (-1, "is out of range"), (75, "is out of range"),
    (float("nan"), "is out of range"), ("1%", "is not a number"), (True, "is not a number"),
])
def test_a_threshold_outside_the_range_is_refused_naming_it(value: Any, why: str) -> None:
    with pytest.raises(ValueError) as err:
        toolkit.simulate([DAY1], rare_type_percent=value)
    assert str(err.value) == (
        f"rare_type_percent={value!r} {why}: give a share in percent above 0 and at most 50 "
        "(1 means 1%), or None to switch the rare-type threshold off"
    )


def test_the_widen_policy_refuses_the_threshold() -> None:
    with pytest.raises(ValueError, match=r"rare_type_percent=1 is an option of the upsolver"):
        toolkit.simulate([DAY1], policy="widen", rare_type_percent=1)


def test_the_policy_routes_and_sets_aside_by_the_plan() -> None:
    opts = Options(rare_type_percent=1)
    table = toolkit.simulate([DAY1]).table_schema
    plan = UPSOLVER.plan(table, observe_struct(DAY2, opts), opts, 1)
    assert plan == plan_batch(table, observe_struct(DAY2, opts), opts, 1)
    assert UPSOLVER.sets_aside_under(plan) and WIDEN.sets_aside_under(plan)
    assert not UPSOLVER.sets_aside_under(plan_batch(table, observe_struct(DAY1, opts), opts))
    rows, aside = UPSOLVER.fit(plan, DAY2, opts, Classifier(opts), 1)
    assert [q.detail for q in aside] == [SENTENCE] * 3
    assert rows == toolkit.simulate([DAY1, DAY2], rare_type_percent=1).rows[2000:]
    assert UPSOLVER.rejected(plan, DAY2, opts, Classifier(opts), 1) == aside
    # the engine's run is the same policy
    assert Engine(opts).run([DAY1, DAY2]).quarantined == tuple(
        q for q in aside
    )


def test_a_deeper_array_is_a_rare_type_like_any_other() -> None:
    opts = Options(rare_type_percent=10)
    batch = [{"xs": [1, 2]}] * 19 + [{"xs": [[1], [2]]}]
    plan = plan_batch(Struct(), observe_struct(batch, opts), opts)
    assert [(c.column.name, c.column.type) for c in plan.changes] == [
        ("xs", ListOf(2, "long"))
    ]
    assert [str(r.shape) for r in plan.rare] == ["long[][]"]


def test_every_public_entry_point_takes_the_threshold(tmp_path: Path) -> None:
    lake: Catalog = catalog(tmp_path / "lake")
    assert toolkit.profile(DAY2, rare_type_percent=1) is not None
    preview = plan_preview(DAY1 + DAY2, "db.prices", lake, rare_type_percent=1)
    assert [str(r) for r in preview.plan.rare] == [
        "3 of 4,000 values of `price` arrived as strings (0.075%, under the 1% rare-type "
        "threshold); set aside instead of adding price as string and price_double"
    ]
    panel = toolkit.compare_policies([DAY1, DAY2], rare_type_percent=1)
    assert [o.key for o in panel.model.outcomes] == [
        "upsolver", "upsolver-rare", "widen", "widen-no-rewrites"
    ]
    with pytest.raises(ValueError, match="rare_type_percent=200 is out of range"):
        plan_preview(DAY1, "db.prices", lake, rare_type_percent=200)
