"""Field contracts (docs/rules.md, *Contracts*) in ``toolkit.simulate``, under both
policies: ``freeze`` fails the batch naming field, value and record; ``discard_row`` sets
the record aside (reason ``contract``); ``discard_value`` takes the value out to the
quarantine and writes the record without it. Nothing is lost (a property test)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.core.batch.contracts import (
    CONTRACTS_PROPERTY,
    Contracts,
    holds,
)
from toolkit.core.batch.conversion_warnings import UnwrittenRecords
from toolkit.core.batch.options import Options, make_options, obeyed
from toolkit.core.evolution.planfile import plan_from_json, plan_to_json
from toolkit.core.values.lattice import UPSOLVER
from toolkit.core.values.types import Column, Kind
from toolkit.errors import ContractError, ToolkitError

POLICIES = ["upsolver", "widen"]
DAY1 = [{"id": i, "quantity": i} for i in range(5)]
#: "two" among the longs, and a key the table has no column for
DAY2 = [{"id": 10, "quantity": 3}, {"id": 11, "quantity": "two"},
        {"id": 12, "quantity": 4, "shipping": {"carrier": "ups"}}]


@pytest.mark.parametrize("policy", POLICIES)
def test_freeze_fails_the_batch_naming_field_value_and_record(policy: str) -> None:
    with pytest.raises(ToolkitError) as caught:
        toolkit.simulate([DAY1, DAY2], policy=policy, contracts={"quantity": "freeze"})
    error = caught.value
    assert isinstance(error, ContractError) and isinstance(error, ValueError)
    assert (error.field, error.value, error.where) == ("quantity", "two", "record 2 of batch 2")
    assert str(error) == (
        "record 2 of batch 2: field 'quantity': value \"two\" arrived as a string; no column "
        "of it holds a string (quantity long), and its contract is freeze: no new column or "
        "widening may be made for it (docs/rules.md, Contracts); nothing was written")


@pytest.mark.parametrize("policy", POLICIES)
def test_discard_row_sets_the_record_aside_and_writes_the_rest(policy: str) -> None:
    run = toolkit.simulate([DAY1, DAY2], policy=policy, contracts={"quantity": "discard_row"})
    assert [(q.record, q.reason, q.field, q.observed) for q in run.quarantined] == [
        (DAY2[1], "contract", "quantity", "string")]
    assert [r["id"] for r in run.rows] == [0, 1, 2, 3, 4, 10, 12]
    assert "quantity_string" not in [c.name for c in run.table_schema.fields]
    assert [c.name for c in run.table_schema.fields if c.family == "quantity"] == ["quantity"]
    assert str(run.plans[1]).splitlines()[-1] == (
        "- 1 of 3 values of `quantity` arrived as a string; no column of `quantity` holds it "
        "(quantity long): its contract discard_row sets its record aside (reason contract)")


@pytest.mark.parametrize("policy", POLICIES)
def test_discard_value_writes_the_record_without_the_value(policy: str) -> None:
    run = toolkit.simulate([DAY1, DAY2], policy=policy, contracts={"quantity": "discard_value"})
    assert [(q.record, q.reason, q.field) for q in run.quarantined] == [
        (DAY2[1], "contract-value", "quantity")]
    row = next(r for r in run.rows if r["id"] == 11)
    assert row["quantity"] is None and "quantity_string" not in row
    assert len(run.rows) == 8


@pytest.mark.parametrize("policy", POLICIES)
def test_star_holds_every_new_field_and_only_new_ones(policy: str) -> None:
    run = toolkit.simulate([DAY1, DAY2], policy=policy, contracts={"*": "discard_value"})
    # `quantity` has a column: `*` leaves it to evolve; `shipping` is new: taken out
    assert [(q.reason, q.field) for q in run.quarantined] == [("contract-value", "shipping")]
    assert "shipping" not in [c.name for c in run.table_schema.fields]
    assert len(run.rows) == 8
    assert policy == "widen" or "quantity_string" in [c.name for c in run.table_schema.fields]
    # a field's own contract beats `*`
    own = toolkit.simulate([DAY1, DAY2], policy=policy,
                           contracts={"*": "discard_value", "shipping": "evolve"})
    assert own.quarantined == () or all(q.field != "shipping" for q in own.quarantined)
    assert "shipping" in [c.name for c in own.schema.fields]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_new_table_takes_its_first_batch_as_it_comes(policy: str) -> None:
    # as dlt does: the first batch sets the schema the contracts then hold
    run = toolkit.simulate([DAY2], policy=policy, contracts={"*": "freeze", "quantity": "freeze"})
    assert run.plans[0].held == () and run.quarantined == ()
    assert len(run.rows) == 3


@pytest.mark.parametrize("policy", POLICIES)
def test_a_named_field_the_table_lacks_is_held_by_its_contract(policy: str) -> None:
    with pytest.raises(ContractError, match="field 'shipping'"):
        toolkit.simulate([DAY1, DAY2], policy=policy, contracts={"shipping": "freeze"})


def test_the_strictest_contract_a_record_meets_decides() -> None:
    batch = [{"id": 20, "quantity": "x", "note": "n"}]
    run = toolkit.simulate([DAY1, batch], contracts={"quantity": "discard_value",
                                                     "*": "discard_row"})
    assert [(q.reason, q.field) for q in run.quarantined] == [("contract", "note")]
    assert len(run.rows) == 5
    both = toolkit.simulate([DAY1, batch], contracts={"quantity": "discard_value",
                                                      "note": "discard_value"})
    # one item per value taken out, each with its record as it came
    assert [(q.reason, q.field, q.record) for q in both.quarantined] == [
        ("contract-value", "note", batch[0]), ("contract-value", "quantity", batch[0])]
    assert both.rows[-1] == {"id": 20, "quantity": None}


def test_under_widen_a_widening_is_a_change_a_freeze_refuses() -> None:
    table = [Column(1, "n", "int")]
    assert holds(True, UPSOLVER, table, Kind("int", 0))
    assert not holds(True, UPSOLVER, table, Kind("long", 0))  # int -> long, in place
    assert not holds(True, UPSOLVER, [Column(1, "n", "long")], Kind("long", 1))
    assert holds(False, UPSOLVER, [Column(1, "n", "double")], Kind("long", 0))  # RULES 3.3
    assert not holds(False, UPSOLVER, [], Kind("long", 0))


def test_contracts_are_checked_and_kept_as_json() -> None:
    c = Contracts.of({"quantity": "freeze", "*": "discard_row"})
    assert c.to_json() == '{"*":"discard_row","quantity":"freeze"}'
    assert Contracts.from_json(c.to_json()) == c and Contracts.from_json(None) == Contracts()
    assert make_options(contracts={"quantity": "freeze"}).contracts == Contracts.of(
        {"quantity": "freeze"})
    assert Options().contracts is None  # none given: the table's hold
    with pytest.raises(ValueError, match="unknown mode 'keep'"):
        make_options(contracts={"a": "keep"})
    with pytest.raises(ValueError, match="give a mapping of field to mode"):
        Contracts.of(["quantity=freeze"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more than the 4,096 a property may"):
        Contracts.of({f"field_{i}": "freeze" for i in range(400)})


def test_options_without_contracts_take_the_tables() -> None:
    kept = {CONTRACTS_PROPERTY: '{"quantity":"freeze"}'}
    assert obeyed(Options(), kept).contracts == Contracts.of(
        {"quantity": "freeze"})
    assert obeyed(Options(), None).contracts == Contracts()
    given = make_options(contracts={})  # given (even empty): replaces what the table keeps
    assert obeyed(given, kept).contracts == Contracts()


def test_a_plan_file_keeps_what_the_contracts_refused() -> None:
    run = toolkit.simulate([DAY1, DAY2], contracts={"quantity": "discard_row",
                                                    "*": "discard_value"})
    plan = run.plans[1]
    assert [b.key for b in plan.held] == ["quantity", "shipping"]
    again = plan_from_json(json.loads(json.dumps(plan_to_json(plan))))
    assert again == plan and str(again) == str(plan)
    assert plan.headline == "no schema change, 2 values refused by contracts"


# --- nothing is lost ---------------------------------------------------------------------------

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["a", "2"]),
                   st.floats(-2, 2, allow_nan=False).map(lambda f: round(f, 1) + 0.5),
                   st.lists(st.integers(0, 3), max_size=2))
RECORDS = st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), VALUES, max_size=4),
                   min_size=1, max_size=8)
CONTRACTS = st.dictionaries(st.sampled_from(["a", "b", "c", "*"]),
                            st.sampled_from(["evolve", "discard_row", "discard_value"]),
                            max_size=3)


@settings(max_examples=120, deadline=None)
@given(batches=st.lists(RECORDS, min_size=2, max_size=3), contracts=CONTRACTS,
       policy=st.sampled_from(POLICIES))
def test_nothing_a_contract_refuses_is_lost(
    batches: list[list[dict[str, Any]]], contracts: dict[str, str], policy: str
) -> None:
    run = toolkit.simulate(batches, policy=policy, contracts=contracts)
    rows = iter(run.rows)
    refused = [q for q in run.quarantined if q.reason in ("contract", "contract-value")]
    # (compared as JSON: 0 == False in Python)
    whole = [json.dumps(q.record, sort_keys=True) for q in run.quarantined
             if q.reason != "contract-value"]
    taken = {(json.dumps(q.record, sort_keys=True), q.field) for q in refused
             if q.reason == "contract-value"}
    unwritten = 0
    for record, plan in ((r, p) for b, p in zip(batches, run.plans, strict=True) for r in b):
        text = json.dumps(record, sort_keys=True)
        if text in whole:  # set aside whole (a contract, or the widen policy's matrix)
            whole.remove(text)
            continue
        # a batch leaving the table without a column writes no row, and says so (RULES 3.5)
        unwritten += not plan.after.fields
        row = next(rows) if plan.after.fields else {}
        for key, value in record.items():
            if value is None:
                continue
            # a value is in a column of its family, or in the quarantine with its record
            family = [c.name for c in run.table_schema.fields if c.family == key]
            if all(row.get(name) is None for name in family):
                assert (json.dumps(record, sort_keys=True), key) in taken, (record, key)
    assert next(rows, None) is None
    assert unwritten == sum(w.count for w in run.warnings if isinstance(w, UnwrittenRecords))
    # and no contract other than evolve let its field evolve once the table had a column
    held = Contracts.of(contracts)
    for plan in run.plans:
        if not plan.before.fields:
            continue
        had = {c.family for c in plan.before.fields}
        for change in plan.changes:
            assert held.mode_for(change.family, new=change.family not in had) == "evolve"
        for retype in plan.retypes:
            assert held.mode_for(retype.path[0], new=False) == "evolve"


@pytest.mark.parametrize("policy", POLICIES)
def test_a_discard_contract_quarantines_even_when_incompatible_records_fail(policy: str) -> None:
    # on_incompatible="fail" is about what the table cannot take; a contract said what to do
    run = toolkit.simulate([DAY1, DAY2], policy=policy, on_incompatible="fail",
                           contracts={"quantity": "discard_row", "*": "discard_value"})
    assert [(q.reason, q.field) for q in run.quarantined] == [
        ("contract", "quantity"), ("contract-value", "shipping")]


def test_a_record_the_widen_policy_sets_aside_keeps_the_value_a_contract_took_out() -> None:
    table = [{"flag": True, "n": 1}]
    batch = [{"flag": 1, "n": 2, "extra": "x"}]  # a long into a boolean column: X (RULES 5)
    run = toolkit.simulate([table, batch], policy="widen", contracts={"*": "discard_value"})
    assert [(q.reason, q.record) for q in run.quarantined] == [("incompatible", batch[0])]


#: batches whose second one is written only across kinds into the first's columns
CROSSING = {
    "a boolean into a number column": [[{"q": 2}], [{"q": True}, {"q": 3}]],
    "a number into a text column": [[{"s": "a"}], [{"s": 2.5}]],
    "a boolean inside a list into a list of numbers": [[{"t": [1]}], [{"t": [True]}]],
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", list(CROSSING))
def test_the_contract_a_conversion_warning_names_refuses_those_values(
    name: str, policy: str
) -> None:
    """A conversion warning ends with the contract that refuses its values (docs/rules.md,
    Conversion warnings): that contract does, and a discarding one sets them aside, with
    no warning left for values no longer written."""
    batches = CROSSING[name]
    warned = [str(w) for w in toolkit.simulate(batches, policy=policy).warnings]
    advice = [w.split("a contract `")[1].split("`")[0] for w in warned if "a contract `" in w]
    if not advice:  # the widen policy sets these values aside itself (RULES 5)
        assert policy == "widen" and not warned, warned
        return
    for contract in advice:
        key, mode = contract.split("=")
        with pytest.raises(ContractError):
            toolkit.simulate(batches, policy=policy, contracts={key: mode})
        kept = toolkit.simulate(batches, policy=policy, contracts={key: "discard_row"})
        assert not kept.warnings and [q.reason for q in kept.quarantined] == ["contract"]
