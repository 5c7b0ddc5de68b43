"""Type hints on real tables (docs/rules.md, *Type hints*): ``ingest(..., hints=...)``
equals ``simulate`` with the same hints under both policies, from Python records and from
JSON lines (which the JVM would tally and route: hinted batches take the Python workers,
explicitly, with the same result); the table keeps its hints, so a later ingest given
none still obeys them, and hints given again replace them."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import assert_table_is_the_simulation
from toolkit.core.batch.hints import HINTS_PROPERTY
from toolkit.iceberg.quarantine import quarantine
from toolkit.pipeline.ingest import ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

HINTS = {"price": "decimal(10,2)", "ts": "timestamp[ms]"}
FIRST: list[dict[str, Any]] = [
    {"id": 1, "price": 12.50, "ts": 1704164645000},
    {"id": 2, "price": "12.50", "ts": "2024-01-02T03:04:05Z"},
    {"id": 3, "price": 3, "ts": None},
    {"id": 4, "price": "n/a", "ts": 1704164645123},
]
# a later batch, given no hints: the table's hints hold
LATER: list[dict[str, Any]] = [
    {"id": 5, "price": "7.25", "ts": 1704164646000},
    {"id": 6, "price": 1.234, "ts": True},
]


def _jsonl(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
@pytest.mark.parametrize("source", ["records", "jsonl"])
def test_ingest_with_hints_equals_simulate_and_later_batches_obey_the_table(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, policy: str, source: str
) -> None:
    name = f"hints.{policy}_{source}"
    lakehouse.create_namespace_if_not_exists("hints")
    if lakehouse.table_exists(name):
        lakehouse.drop_table(name)

    def given(i: int, records: list[dict[str, Any]]) -> Any:
        return records if source == "records" else _jsonl(tmp_path, f"b{i}", records)

    first = ingest(given(0, FIRST), name, lakehouse, spark, batch_id="b0", policy=policy,
                   hints=HINTS)
    later = ingest(given(1, LATER), name, lakehouse, spark, batch_id="b1", policy=policy)
    # JSON lines are what the JVM tallies and routes: a hinted batch is routed in Python
    assert first.routed_in == later.routed_in == "python"

    sim = toolkit.simulate([FIRST, LATER], policy=policy, hints=HINTS)
    assert_table_is_the_simulation(spark, lakehouse, name, sim)
    # the longs the hint read as timestamps are told, by both, for both batches (the
    # later one under the hints the table keeps)
    told = [tuple(str(w) for w in sim.warnings if w.batch == i) for i in (0, 1)]
    assert [first.warnings, later.warnings] == told
    assert told[0] == ("ts: 2 longs were written as timestamps (1704164645000 -> "
                       "2024-01-02T03:04:05Z) by the hint `ts=timestamp[ms]`",)
    table = lakehouse.load_table(name)
    fields = {f.name: str(f.field_type) for f in table.schema().fields}
    assert fields["price"] == "decimal(10, 2)" and fields["ts"] == "timestamp"
    assert json.loads(table.metadata.properties[HINTS_PROPERTY]) == {
        "price": "decimal(10, 2)", "ts": "timestamp[ms]"}
    prices = {r["id"]: r["price"] for r in sim.rows}
    assert prices[1] == prices[2] == Decimal("12.50") and prices[3] == Decimal("3.00")
    assert prices[5] == Decimal("7.25")  # obeyed without being given again

    q = quarantine(lakehouse, name)
    assert sorted((r.field, r.batch_id) for r in q.rows) == sorted(
        (item.field, f"b{item.batch}") for item in sim.quarantined)
    if policy == "widen":
        assert {json.loads(r.raw)["id"] for r in q.rows} == {4, 6}


def test_hints_given_again_replace_those_the_table_keeps(
    lakehouse: Catalog, spark: SparkSession
) -> None:
    name = "hints.replaced"
    lakehouse.create_namespace_if_not_exists("hints")
    if lakehouse.table_exists(name):
        lakehouse.drop_table(name)
    ingest([{"a": 1}], name, lakehouse, spark, batch_id="b0", hints={"a": "double"})
    ingest([{"a": 2, "b": "2.5"}], name, lakehouse, spark, batch_id="b1",
           hints={"b": "double"})
    table = lakehouse.load_table(name)
    assert json.loads(table.metadata.properties[HINTS_PROPERTY]) == {"b": "double"}
    assert {f.name: str(f.field_type) for f in table.schema().fields} == {
        "a": "double", "b": "double"}
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["a"])
    assert rows == [{"a": 1.0, "b": None}, {"a": 2.0, "b": 2.5}]


def _fresh(lakehouse: Catalog, name: str) -> None:
    lakehouse.create_namespace_if_not_exists("hints")
    if lakehouse.table_exists(name):
        lakehouse.drop_table(name)


def test_a_replay_obeys_the_hints_the_table_keeps(lakehouse: Catalog, spark: SparkSession) -> None:
    from toolkit.pipeline.replay import replay

    name = "hints.replayed"
    _fresh(lakehouse, name)
    # one `qty` in 21 is text: a rare type under a 5% threshold, set aside to replay later
    batch = [{"id": i, "qty": i, "price": "1.50"} for i in range(20)]
    batch.append({"id": 99, "qty": "two", "price": "4.50"})
    first = ingest(batch, name, lakehouse, spark, batch_id="b0", rare_type_percent=5,
                   hints={"price": "decimal(10,2)"})
    assert first.quarantined == 1
    replay(lakehouse, name, spark)  # given no hints: the table's hold
    table = lakehouse.load_table(name)
    assert {f.name: str(f.field_type) for f in table.schema().fields} == {
        "id": "long", "price": "decimal(10, 2)", "qty": "long", "qty_string": "string"}
    rows = {r["id"]: r for r in table.scan().to_arrow().to_pylist()}
    assert (rows[99]["price"], rows[99]["qty_string"]) == (Decimal("4.50"), "two")
    assert rows[0]["price"] == Decimal("1.50")


def test_a_stream_ingests_with_hints(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    from toolkit.pipeline.stream import stream

    name = "hints.streamed"
    _fresh(lakehouse, name)
    landing = tmp_path / "landing"
    landing.mkdir()
    _jsonl(landing, "first", FIRST)
    query = stream(landing, name, lakehouse, spark, checkpoint=tmp_path / "checkpoint",
                   trigger={"availableNow": True}, hints=HINTS)
    query.awaitTermination(120)
    assert not query.isActive and query.exception() is None
    sim = toolkit.simulate([FIRST], hints=HINTS)
    assert_table_is_the_simulation(spark, lakehouse, name, sim)
    assert json.loads(lakehouse.load_table(name).metadata.properties[HINTS_PROPERTY])[
        "price"] == "decimal(10, 2)"


def test_the_jvm_router_declines_a_hinted_batch_by_name() -> None:
    from toolkit.core.batch.options import make_options
    from toolkit.core.values.types import Column, Struct
    from toolkit.spark.router import jvm_routing

    schema = Struct((Column(1, "price", "decimal(10, 2)"),))
    codes = {("price",): frozenset({1})}
    # the Python workers convert hinted values (the routing table would need the JVM)
    assert jvm_routing(schema, codes, make_options(hints={"price": "decimal(10,2)"})) is None
