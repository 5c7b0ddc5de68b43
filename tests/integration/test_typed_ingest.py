"""Typed values on real tables (docs/rules.md, typed values): records holding numpy and
pandas scalars, decimals and bytes, ingested through Spark, equal the simulation, read
back through PyIceberg, Spark and DuckDB, under both policies."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import (
    assert_table_is_the_simulation,
)
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

BATCHES: list[list[dict[str, Any]]] = [
    [
        {"n": np.int32(1), "f": np.float32(0.5), "amount": Decimal("1.10"), "blob": b"ab",
         "at": pd.Timestamp("2024-01-02T03:04:05Z"), "ok": np.bool_(True),
         "big": np.int64(2**62), "tags": [np.int16(1), np.int16(2)]},
        {"n": np.int32(-2), "f": np.float32(1e30), "amount": None, "blob": None,
         "at": pd.NaT, "ok": np.bool_(False), "big": np.uint64(2**64 - 1), "tags": []},
    ],
    [
        {"n": "seven", "amount": Decimal("1E+30"), "blob": b"\xff", "f": 2.5,
         "tags": [np.float64(0.25)]},
        {"n": 8, "amount": Decimal("-0.000000000000000001"), "blob": "text"},
    ],
]


def test_typed_records_ingest_as_they_simulate_under_the_automatic_policy(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    for i, batch in enumerate(BATCHES):
        report = ingest(batch, "typed.auto", lakehouse, spark, batch_id=f"b{i}")
        assert report.quarantined == 0
    sim = toolkit.simulate(BATCHES)
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert types["amount"] == "decimal(38, 18)" and types["blob"] == "binary"
    assert types["amount_string"] == "string" and types["n"] == "long"
    assert_table_is_the_simulation(spark, lakehouse, "typed.auto", sim)


def test_typed_records_ingest_as_they_simulate_under_the_widening_policy(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    batch = [
        {"n": np.int16(3), "f": np.float32(0.5), "amount": Decimal("2.25"), "blob": b"\x00"},
        {"n": np.int8(-1), "f": np.float32(-1.5), "amount": Decimal("1E+30"), "blob": b"x"},
        {"n": b"\xff", "amount": Decimal("-7")},  # bytes into int: incompatible (RULES 5)
    ]
    report = ingest(batch, "typed.widen", lakehouse, spark, batch_id="b0", policy="widen")
    sim = toolkit.simulate([batch], policy="widen")
    types = {f.name: str(f.field_type) for f in sim.schema.fields}
    assert types == {"amount": "decimal(38, 18)", "blob": "binary", "f": "float", "n": "int"}
    # the decimal beyond the column's digits and the bytes are set aside, not changed
    assert sorted(q.field for q in sim.quarantined) == ["amount", "n"]
    assert report.quarantined == 2
    assert_table_is_the_simulation(spark, lakehouse, "typed.widen", sim)
