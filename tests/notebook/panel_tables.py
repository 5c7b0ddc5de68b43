"""Real Iceberg tables for the panels' tests, written by PyIceberg alone (no Spark).

Each batch goes through the core engine exactly as ``ingest`` runs it (observe, plan,
commit the plan, route), and PyIceberg appends the routed rows, with the batch id in the
snapshot summary: what Written Data Statistics read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

import toolkit
from toolkit.core.batch.profile import profile
from toolkit.core.engine import Engine, read_rows
from toolkit.core.evolution.state import TableState
from toolkit.core.values.jsonlines import read_jsonl
from toolkit.core.values.types import Struct
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.schema import from_iceberg, to_iceberg
from toolkit.pipeline.preview import Preview

DATA = Path(__file__).resolve().parents[2] / "toolkit" / "data"


def sample_day(n: int) -> list[dict[str, Any]]:
    """The bundled sample data of day ``n`` (1, 2 or 3), 20 records each."""
    return read_jsonl(DATA / f"sample_day{n}.jsonl")


def write_batches(
    cat: Catalog, identifier: str, batches: Sequence[Sequence[dict[str, Any]]]
) -> Table:
    engine = Engine()
    table: Table | None = None
    for i, rows in enumerate(batches):
        current = Struct() if table is None else from_iceberg(table.schema())
        obs = engine.observe(rows, i)
        plan = engine.plan(current, obs, i)
        if table is None:
            cat.create_namespace_if_not_exists(identifier.rsplit(".", 1)[0])
            table = cat.create_table(identifier, schema=to_iceberg(plan.after))
        else:
            table = commit_plan(table, plan, TableState.of(table))
        data = read_rows(plan.after, [engine.route(plan.after, obs)])
        arrow = pa.Table.from_pylist(data, schema=table.schema().as_arrow())
        table.append(arrow, snapshot_properties={BATCH_ID_PROPERTY: f"b{i}"})
    assert table is not None
    return table


#: the evolution editor's table: top-level fields of each kind, a struct and a list
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "visits", IntegerType(), required=False),
    NestedField(4, "score", LongType(), required=False),
    NestedField(5, "signup", TimestamptzType(), required=False),
    NestedField(
        6, "address", StructType(NestedField(7, "city", StringType(), required=False)),
        required=False,
    ),
    NestedField(8, "tags", ListType(9, StringType(), element_required=False), required=False),
)


def make_table(cat: Catalog, identifier: str = "db.people") -> Table:
    """``db.people``: eight fields (a struct, a list) and two rows, written by PyIceberg."""
    cat.create_namespace_if_not_exists(identifier.rsplit(".", 1)[0])
    table = cat.create_table(identifier, schema=SCHEMA)
    rows = [
        {"id": 1, "name": "Ada", "visits": 3, "score": 10, "signup": None,
         "address": {"city": "Paris"}, "tags": ["a"]},
        {"id": 2, "name": "Bob", "visits": 5, "score": 20, "signup": None,
         "address": None, "tags": None},
    ]  # fmt: skip
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    return table


def seed_preview() -> Preview:
    """The seed example: my_field was 1 (a long column); now "abc" and 7 arrive."""
    first = toolkit.simulate([[{"my_field": 1}]]).table_schema
    engine = Engine()
    records = ({"my_field": "abc"}, {"my_field": 7}, {"my_field": None, "n": 2})
    plan = engine.plan(first, engine.observe(records, 1), 1)
    return Preview("db.seed", plan, TableState(0, 1), profile(records), records)
