"""Nothing lost, Spark path: random drifting nested batches (the core property tests'
strategies) go through ``toolkit.ingest`` into a real table, one table per example; every
input value must be recovered exactly from its row as the table reads back (through
DuckDB, an independent reader), by the same oracle as the Python path's
``tests/core/test_properties.py``, and the table must equal ``toolkit.simulate``.

Each record carries its position as an extra key ``_n`` (a long column), so its row can
be found in the table, which does not keep the order of rows.

Sizes: 10 examples in ``make test``, 200 with ``TOOLKIT_RELIABILITY=long``;
``TOOLKIT_SPARK_EXAMPLES=<n>`` asks for any other number.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pyiceberg.catalog import Catalog

import toolkit
from tests.core import strategies as gen
from tests.core.test_properties import Oracle, canon
from tests.integration.readers import normalize, schema_summary
from tests.reliability.children import LONG_RUN
from toolkit.iceberg.duckdb import read_table
from toolkit.iceberg.schema import from_iceberg

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("TOOLKIT_SPARK_EXAMPLES", 200 if LONG_RUN else 10))
_tables = itertools.count()


def numbered(batches: list[gen.Batch]) -> list[gen.Batch]:
    """The batches with each record's position added as ``_n``."""
    n = itertools.count()
    return [[{**r, "_n": next(n)} for r in batch] for batch in batches]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batches=gen.batches, options=gen.options)
def test_nothing_is_lost_on_the_spark_path(
    lakehouse: Catalog, spark: Any, batches: list[gen.Batch], options: dict[str, Any]
) -> None:
    name = f"props.t{next(_tables)}"
    batches = numbered(batches)
    for i, batch in enumerate(batches):
        toolkit.ingest(batch, name, lakehouse, spark, batch_id=f"b{i}", **options)
    sim = toolkit.simulate(batches, **options)
    table = lakehouse.load_table(name)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)

    struct = from_iceberg(table.schema())
    rows = {row["_n"]: row for row in map(normalize, read_table(table))}
    records = [r for batch in batches for r in batch]
    assert sorted(rows) == [r["_n"] for r in records]  # every record once, as one row
    oracle = Oracle(options.get("detect_dates", True))
    for record in records:
        lost = oracle.lost(record, struct, rows[record["_n"]])
        assert not lost, f"record {record['_n']}: {lost}\nschema:\n{sim.schema}"

    expected = {row["_n"]: canon(normalize(row)) for row in sim.rows}
    assert {n: canon(row) for n, row in rows.items()} == expected
