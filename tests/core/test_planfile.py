"""Plan files (toolkit.core.evolution.planfile): stable, versioned JSON that loads back
into the very plan and table state it was written from."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.plan_strategies import costed_plans
from toolkit.core.batch.options import make_options
from toolkit.core.engine import Engine
from toolkit.core.evolution.batch_plan import Plan
from toolkit.core.evolution.planfile import (
    FORMAT,
    VERSION,
    PlanFile,
    PlanFileError,
    dumps,
    loads,
    schema_from_json,
    schema_to_json,
)
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.values.types import Column, ListOf, MapOf, Opaque, Shape, Struct

states = st.just(ABSENT) | st.builds(
    TableState, st.integers(0, 2**31), st.none() | st.integers(-(2**63), 2**63 - 1)
)
names = st.text(min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    plan=costed_plans(),
    state=states,
    table=names,
    batch_id=names,
    source=st.none() | names,
    options=st.fixed_dictionaries({}, optional={"policy": st.sampled_from(["upsolver", "widen"]),
                                                "detect_dates": st.booleans()}),
)
def test_a_plan_file_loads_back_exactly(
    plan: Plan, state: TableState, table: str, batch_id: str, source: str | None,
    options: dict[str, object],
) -> None:
    written = PlanFile(table, plan, state, batch_id, source, options=options, catalog="lake")
    text = dumps(written)
    again = loads(text)
    assert again == written
    assert again.plan == plan and again.state == state
    assert dumps(again) == text  # stable: writing what was read gives the same bytes


def test_schemas_keep_maps_opaque_types_required_fields_and_docs() -> None:
    schema = Struct((
        Column(1, "id", "long", required=True),
        Column(2, "tags", MapOf(5, "string", 6, ListOf(7, "decimal(9, 2)"), True), "tags"),
        Column(3, "shape", Opaque("geometry", (8,))),
        Column(4, "ünï \"quoted\"", Struct((Column(9, "x", "timestamptz", "when"),))),
    ))  # fmt: skip
    assert schema_from_json(json.loads(json.dumps(schema_to_json(schema)))) == schema


def test_the_file_is_sorted_one_item_per_line_and_says_what_it_is() -> None:
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    plan = engine.plan(first.after, engine.observe([{"size": 2.5}]), 1)
    text = dumps(PlanFile("db.events", plan, TableState(0, 42), "day2", "/data/day2.jsonl"))
    doc = json.loads(text)
    assert (doc["format"], doc["version"]) == (FORMAT, VERSION) == ("toolkit-plan", 1)
    assert list(doc) == sorted(doc) and text.endswith("}\n")
    assert '\n  "format": "toolkit-plan",\n' in text
    assert doc["summary"] == [
        "db.events, batch 2 (id day2): 1 column added (against schema id 0, snapshot 42)",
        "+ size_double: double (id 2)  doc='upsolver_evolved_from:size'",
        "    This batch had `size` as a double, which none of its columns holds: `size` holds "
        "longs (RULES 3.3)",
    ]
    assert doc["plan"]["after"]["fields"][1] == {
        "id": 2, "name": "size_double", "required": False, "type": "double",
        "doc": "upsolver_evolved_from:size",
    }
    # one item per line: no line holds two values of a list or an object
    assert not any('", "' in line or "}, {" in line for line in text.splitlines())


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "p.json: not JSON"),
        ('{"format": "something-else", "version": 1}', "not a toolkit plan file"),
        ('{"format": "toolkit-plan", "version": 2}', "version 2 is not one this toolkit reads"),
        ('{"format": "toolkit-plan", "version": 1, "table": "t"}', "key 'state' is missing"),
    ],
)
def test_anything_else_is_refused_in_plain_words(text: str, says: str) -> None:
    with pytest.raises(PlanFileError, match=says):
        loads(text, "p.json")


def test_a_plan_file_an_older_version_wrote_still_loads_reads_well_and_applies() -> None:
    """Older versions stored a reason as ``RULES 3.3: <phrase>``: it loads as today's
    faces show a reason (the sentence, then the rule as a footnote), and approval compares
    what the plans change, not how their reasons are worded, so the old file still
    applies to the batch it was made for."""
    engine = Engine()
    first = engine.plan(Struct(), engine.observe([{"size": 4}]))
    plan = engine.plan(first.after, engine.observe([{"size": 2.5}]), 1)
    doc = json.loads(dumps(PlanFile("db.events", plan, TableState(0, 42), "day2")))
    doc["plan"]["changes"][0]["reason"] = (
        "RULES 3.3: size arrived as double, which fits none of size::long"
    )
    old = loads(json.dumps(doc))
    assert old.plan.changes[0].reason == (
        "size arrived as double, which fits none of size::long (RULES 3.3)"
    )
    assert old.plan.same_changes(plan) and plan.same_changes(old.plan)


def test_a_plan_saved_with_a_rare_type_threshold_keeps_its_rare_types() -> None:
    """The rare types a plan sets aside are in the file, kinds and all (the notebook's
    preview of the file routes records by them), and the summary of the loaded file still
    says what is set aside; a file written before plans kept them loads with none."""
    engine = Engine(make_options(rare_type_percent=5))
    # strings mostly: 2 longs a double cannot hold exactly and 1 array of records and
    # strings are rare, each a kind of its own
    records = [{"n": "x"}] * 97 + [{"n": 2**60 + 1}] * 2 + [{"n": [{"a": 1}, "x"]}]
    plan = engine.plan(Struct(), engine.observe(records))
    assert {(r.shape, r.count) for r in plan.rare} == {
        (Shape("long", 0), 2), (Shape("record", 1, "string"), 1)}
    written = PlanFile("db.t", plan, ABSENT, "b1", options={"rare_type_percent": 5})
    text = dumps(written)
    again = loads(text)
    assert again.plan.rare == plan.rare and again == written
    assert dumps(again) == text
    assert again.summary == written.summary
    assert again.summary.split("\n")[0] == (
        "db.t, batch 1 (id b1): 1 column added, 2 rare types set aside (against a table that "
        "does not exist yet)")
    assert "- 2 of 100 values of `n` arrived as longs (2%, under the 5% rare-type threshold); " \
           "set aside instead of adding " in again.summary
    doc = json.loads(text)
    del doc["plan"]["rare"]
    assert loads(json.dumps(doc)).plan == replace(plan, rare=())
