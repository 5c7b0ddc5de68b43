"""The peer cases that are about a table's history rather than one schema change: a plan
made against a table that moved since is refused (PyIceberg's concurrent update), and
undoing an add gives back the table's earlier schema (PyIceberg's reverted change).
PyIceberg only, an embedded SQLite catalog."""

from __future__ import annotations

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.peers.model import appended, assert_schema, opt, schema
from tests.peers.runner import make_table
from toolkit import ops as o
from toolkit.errors import StalePlanError

UUID_FIXED = schema(opt(1, "col_uuid", "uuid"), opt(2, "col_fixed", "fixed[25]"))
SIMPLE = schema(opt(1, "foo", "string"), opt(2, "bar", "int"), opt(3, "baz", "boolean"))


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return toolkit.catalog(tmp_path_factory.mktemp("history"))


def test_a_plan_for_a_table_that_moved_since_is_refused(catalog: Catalog) -> None:
    """pyiceberg:test_rest_schema.test_schema_evolution_via_transaction: two adds commit one
    after the other; a plan previewed before a concurrent add is refused, and the table
    keeps the concurrent add only."""
    name = make_table(catalog, UUID_FIXED, 2)
    toolkit.evolve(catalog, name, [o.add("col_string", "string")])
    toolkit.evolve(catalog, name, [o.add("col_integer", "int")])
    preview = toolkit.preview_evolution(catalog, name, [o.add("col_double", "double")])
    toolkit.evolve(catalog, name, [o.add("col_long", "long")])  # the concurrent update
    with pytest.raises(StalePlanError):
        toolkit.evolve(catalog, name, preview.plan, expected=preview.state)
    expected = appended(
        UUID_FIXED, None, opt(3, "col_string", "string"), opt(4, "col_integer", "int"),
        opt(5, "col_long", "long"),
    )
    assert_schema(catalog.load_table(name).schema(), expected, "table")


def test_dropping_what_a_plan_added_gives_back_the_earlier_schema(catalog: Catalog) -> None:
    """pyiceberg:test_rest_schema.test_revert_changes: add a column, then drop it in a later
    plan: the table's schema is its first one again, and its history keeps both."""
    name = make_table(catalog, SIMPLE, 3)
    toolkit.evolve(catalog, name, [o.add("data", "int")])
    toolkit.evolve(catalog, name, [o.drop("data")])
    table = catalog.load_table(name)
    assert_schema(table.schema(), SIMPLE, "table")
    history = [s for s in table.schemas().values() if s.fields]
    assert [[f.name for f in s.fields] for s in history] == [
        ["foo", "bar", "baz"], ["foo", "bar", "baz", "data"]
    ]
    assert table.metadata.last_column_id == 4  # the dropped column's ID is never reused
