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
from pyiceberg.table import Table

from toolkit.core.engine import Engine, read_rows
from toolkit.core.evolution.state import TableState
from toolkit.core.values.jsonlines import read_jsonl
from toolkit.core.values.types import Struct
from toolkit.iceberg.commit import commit_plan
from toolkit.iceberg.ledger import BATCH_ID_PROPERTY
from toolkit.iceberg.schema import from_iceberg, to_iceberg

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
