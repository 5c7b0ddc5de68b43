"""A policy is a plug-in (issue 27): a toy policy written here, registered by this test,
is taken by ``policy=`` and run by ``simulate`` and the notebook's comparison, as the
policies the toolkit ships are. It touches no other file of the toolkit.

The toy, ``json_column``: each key keeps the column of the type it first arrived as; a
value of any other type (a drifting field) is written, with its key, into one JSON string
column, ``_drift``, instead of a new column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

import toolkit
from toolkit.core import policies
from toolkit.core.batch.observe import Classifier, StructObservation
from toolkit.core.batch.observed import Observed, Seen
from toolkit.core.batch.options import Options, make_options
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.routing import Router
from toolkit.core.batch.settings import Settings
from toolkit.core.evolution.batch_plan import AddColumn, Plan, max_field_id
from toolkit.core.policies import ComparisonRun, EvolutionPolicy
from toolkit.core.policies.base import Columns
from toolkit.core.values.types import Column, Struct
from toolkit.notebook.panels.policies.model import policy_comparison

DRIFT = "_drift"
#: the column type of a value of each Python type (the toy takes flat records only)
TYPE_OF = {bool: "boolean", int: "long", float: "double", str: "string"}


@dataclass(frozen=True)
class JsonColumnPolicy(EvolutionPolicy):
    """Drifting fields as one JSON column."""

    name: ClassVar[str] = "json_column"
    does: ClassVar[str] = "drifting fields as one JSON string column"
    brief: ClassVar[str] = "a JSON drift column"
    rules: ClassVar[str] = "RULES 3"
    rule: ClassVar[str] = "RULES 3"
    sets_aside: ClassVar[bool] = False
    jvm_routes: ClassVar[bool] = False  # it routes in Python, by its own plan
    widens: ClassVar[bool] = False
    comparison: ClassVar[tuple[ComparisonRun, ...]] = (ComparisonRun(name, f"{name} ({brief})"),)

    def plan(
        self, schema: Struct, obs: Observed, options: Settings, batch: int = 0,
        last_assigned: int = 0, seen: Seen | None = None,
    ) -> Plan:
        names = {c.name for c in schema.fields}
        ids = iter(range(max(max_field_id(schema), last_assigned) + 1, 1 << 31))
        adds = []
        for key, field in obs.fields.items():
            kinds = {k.type for k in field.counts if k.dim == 0}
            if key not in names and len(kinds) == 1 and len(field.counts) == 1:
                adds.append(AddColumn((), Column(next(ids), key, kinds.pop()), key, "first seen"))
        if DRIFT not in names:
            adds.append(AddColumn((), Column(next(ids), DRIFT, "string"), DRIFT, "drift"))
        after = Struct((*schema.fields, *(a.column for a in adds)))
        return Plan(batch, schema, after, tuple(adds))

    def route(
        self, plan: Plan, obs: StructObservation, options: Settings, router: Router,
        batch: int | str = 0,
    ) -> tuple[Columns, int, list[Quarantined]]:
        rows = list(self._rows(plan.after, obs.rows))
        return [[r[c.name] for r in rows] for c in plan.after.fields], len(rows), []

    def fit(
        self, plan: Plan, rows: list[dict[str, Any]], options: Settings,
        classifier: Classifier, batch: int | str = 0,
    ) -> tuple[list[dict[str, Any]], list[Quarantined]]:
        return list(self._rows(plan.after, rows)), []

    @staticmethod
    def _rows(table: Struct, records: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        types = {c.name: c.type for c in table.fields}
        for record in records:
            row: dict[str, Any] = dict.fromkeys(types)
            drift = {}
            for key, value in record.items():
                if value is None:
                    continue
                if key != DRIFT and types.get(key) == TYPE_OF.get(type(value)):
                    row[key] = value
                else:
                    drift[key] = value
            row[DRIFT] = json.dumps(drift) if drift else None
            yield row


JSON_COLUMN = JsonColumnPolicy()


@pytest.fixture
def registered() -> Iterator[EvolutionPolicy]:
    policies.register(JSON_COLUMN)  # the one registry line, made by the test
    yield JSON_COLUMN
    policies.POLICIES.remove(JSON_COLUMN)


def test_the_name_is_taken_by_every_entry_point(registered: EvolutionPolicy) -> None:
    assert make_options(policy="json_column").policy is registered
    assert Options(policy="json_column") == Options(policy=registered)
    assert policies.policy_names()[-1] == "json_column"


def test_simulate_runs_it(registered: EvolutionPolicy) -> None:
    sim = toolkit.simulate([[{"n": 1, "s": "a"}], [{"n": "one", "s": "b"}]], policy="json_column")
    assert [(c.name, c.type) for c in sim.table_schema.fields] == [
        ("n", "long"), ("s", "string"), (DRIFT, "string"),
    ]
    assert sim.rows == [
        {"n": 1, "s": "a", DRIFT: None},
        {"n": None, "s": "b", DRIFT: '{"n": "one"}'},
    ]


def test_the_comparison_panel_runs_it(registered: EvolutionPolicy) -> None:
    comparison = policy_comparison([[{"n": 1}], [{"n": "one"}]])
    outcome = comparison.outcome("json_column")
    assert outcome.label == "json_column (a JSON drift column)"
    assert outcome.columns_added == ("n", DRIFT) and outcome.quarantined == 0


def test_an_unregistered_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown policy 'json_column'; choose one of upsolver"):
        make_options(policy="json_column")
