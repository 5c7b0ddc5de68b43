"""Policy simulation side by side: every number of the comparison is what ``simulate``
gives under each policy, checked here against ``simulate`` itself and by hand."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import BooleanType, IntegerType, LongType, NestedField

import toolkit
import toolkit.notebook.panels.policies.model
from tests.notebook.panel_tables import sample_day
from toolkit.iceberg import catalog
from toolkit.iceberg.operations import rewrite_cost
from toolkit.notebook import PolicyComparisonPanel, compare_policies
from toolkit.notebook.panels.policies.model import POLICY_SETUPS, policy_comparison

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_docstring_examples() -> None:
    result = doctest.testmod(toolkit.notebook.panels.policies.model)
    assert result.failed == 0 and result.attempted > 0


def test_the_counts_are_simulates() -> None:
    days = [sample_day(n) for n in (1, 2, 3)]
    comparison = policy_comparison(days)
    assert comparison.records == 60 and comparison.batches == 3
    assert [o.key for o in comparison.outcomes] == ["upsolver", "widen", "widen-no-rewrites"]
    for setup, outcome in zip(POLICY_SETUPS, comparison.outcomes, strict=True):
        sim = toolkit.simulate(days, **setup.options)
        assert len(outcome.columns_added) == sum(len(p.changes) for p in sim.plans)
        assert len(outcome.widened_in_place) == sum(
            1 for p in sim.plans for r in p.retypes if r.in_place
        )
        assert len(outcome.rewrites) == sum(len(p.rewrites) for p in sim.plans)
        assert outcome.quarantined == len(sim.quarantined)
        assert outcome.records_written == len(sim.rows) == 60 - len(sim.quarantined)
        assert outcome.schema == str(sim.schema)
    # the automatic policy keeps every record, in suffixed columns; widening sets some aside
    upsolver, widen, strict = comparison.outcomes
    assert upsolver.quarantined == 0 and "my_field_string" in upsolver.columns_added
    assert widen.quarantined > 0 and not any("_string" in c for c in widen.columns_added)
    assert strict.quarantined >= widen.quarantined


def test_values_converted_by_hand() -> None:
    # size: 4 then 2.3 -> upsolver keeps both as they came (size, size_double); widening
    # rewrites size to double, so the 4 reads 4.0: converted; without the rewrite, the
    # record with 2.3 is set aside and nothing is converted
    day1 = [{"size": 4, "name": "a"}, {"size": 5, "name": "b"}]
    day2 = [{"size": 2.3, "name": "c"}]
    c = policy_comparison([day1, day2])
    upsolver, widen, strict = c.outcomes
    assert (upsolver.values, upsolver.values_converted) == (6, 0)
    assert upsolver.columns_added == ("name", "size", "size_double")
    assert (widen.values, widen.values_converted) == (6, 2)
    assert widen.rewrites == ("size: long -> double",) and widen.quarantined == 0
    assert (strict.values, strict.values_converted) == (4, 0)
    assert strict.pending == ("size: long -> double",) and strict.rewrites == ()
    assert strict.quarantined_by_reason == (("rewrite-not-approved", 1),)
    assert strict.rewrites_needed == widen.rewrites_needed == 1
    # the reason in words, counted, not its key
    assert dict(c.rows())["records quarantined"] == (
        "0", "0", "1 record: a value needs a column rewrite nobody approved")
    assert "rewrite-not-approved" not in str(c)
    # one batch of records is a sample too; nested records are counted value by value
    nested = policy_comparison([{"a": {"x": 1, "y": "t"}}, {"a": {"x": "one"}}])
    assert nested.batches == 1
    up, wi, _ = nested.outcomes
    assert (up.values, up.values_converted) == (3, 0)
    assert (wi.values, wi.values_converted) == (3, 1)  # the 1 lands in a.x as "1"


def test_from_a_table(tmp_path: Path) -> None:
    cat: Catalog = catalog(tmp_path / "lake")
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=Schema(
        NestedField(1, "n", IntegerType(), required=False),
        NestedField(2, "score", LongType(), required=False),
        NestedField(3, "flag", BooleanType(), required=True),
    ))  # fmt: skip
    rows = [{"n": 1, "score": 10, "flag": True}, {"n": 2, "score": 20, "flag": False}]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    sample: list[dict[str, Any]] = [
        {"n": 3, "score": "high", "flag": True},
        {"n": 4, "score": 5, "flag": "maybe"},
    ]

    c = policy_comparison(sample, table)

    assert c.table == "db.t"
    assert (c.table_rows, c.table_bytes) == rewrite_cost(table)
    upsolver, widen, strict = c.outcomes
    assert upsolver.columns_added == ("flag_string", "n_long", "score_string")
    assert widen.widened_in_place == ("n: int -> long",)
    assert widen.rewrites == ("score: long -> string",)
    assert widen.quarantined_by_reason == (("incompatible", 1),)
    assert strict.pending == ("score: long -> string",)
    assert strict.quarantined == 2
    text = str(c)
    assert text.startswith("2 records in 1 batch against db.t")
    assert "(each touches 2 rows," in text
    assert "1 not approved (records set aside): score: long -> string" in text
    assert dict(c.rows())["records quarantined"] == (
        # the upsolver policy routes "maybe" to flag_string, which leaves the required
        # `flag` empty: the table cannot store that record (docs/rules.md)
        "1 record: a record that leaves a field the table requires empty",
        "1 record: a value its column cannot take, even widened",
        # several reasons: the total first, as every other row leads with its count
        "2 records — 1: a value its column cannot take, even widened; "
        "1: a value needs a column rewrite nobody approved",
    )


def test_the_options_are_shared_but_the_policy_is_what_varies() -> None:
    with pytest.raises(ValueError, match="policy= is what the comparison varies"):
        policy_comparison([{"a": 1}], policy="widen")
    days = [[{"d": "2024-05-01"}], [{"d": 7}]]
    dated = policy_comparison(days)
    assert dated.outcome("upsolver").columns_added == ("d", "d_long")  # a date, then a long
    texts = policy_comparison(days, detect_dates=False).outcome("upsolver")
    assert texts.columns_added == ("d",)  # a text, then a long the string column takes
    assert (texts.values, texts.values_converted) == (2, 1)
    with pytest.raises(KeyError, match="no policy 'x'"):
        dated.outcome("x")


def test_the_panel() -> None:
    panel = compare_policies([[{"size": 4}], [{"size": 2.3, "flag": "x"}]])
    assert toolkit.compare_policies is compare_policies
    assert isinstance(panel, PolicyComparisonPanel)
    html = panel.table.value
    for label in ("upsolver (suffixed columns)", "widen, rewrites approved",
                  "widen, no rewrites", "values converted", "records quarantined"):
        assert label in html
    assert "2 records in 2 batches</b> on a new table" in html
    assert "automatic" not in html  # one name per policy: the word policy= takes
    assert panel.picker.value == "upsolver"
    assert "size_double" in panel.detail.value
    panel.picker.value = "widen"
    assert "size: optional double" in panel.detail.value
    assert "REWRITE" in panel.detail.value
    panel.show("widen-no-rewrites")
    assert panel.picker.value == "widen-no-rewrites"
    assert "[not approved]" in panel.detail.value
    assert panel._repr_mimebundle_()[WIDGET_MIME]["model_id"] == panel.widget.model_id
