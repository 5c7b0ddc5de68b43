"""Field contracts on Spark give what ``toolkit.simulate`` gives (the Python engine is the
reference), under both policies: JSON lines are tallied by the JVM, the plan leaves out the
values the contracts refuse, and a batch with such values is routed by the core in Spark's
Python workers (the JVM router keeps the batches with none). The contracts are kept with
the table: a later ``ingest`` without them obeys them; ``freeze`` writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_pyiceberg
from toolkit.core.batch.contracts import CONTRACTS_PROPERTY
from toolkit.errors import ContractError
from toolkit.iceberg.quarantine import quarantine
from toolkit.pipeline.ingest import ingest
from toolkit.pipeline.replay import replay
from toolkit.pipeline.stream import reports, stream

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

DAY1 = [{"id": i, "quantity": i} for i in range(50)]
#: a text among the longs, and a new key in one record
DAY2 = [
    {"id": 100 + i, "quantity": "two" if i == 7 else i,
     **({"shipping": {"carrier": "ups"}} if i == 20 else {})}
    for i in range(40)
]
#: nothing the table cannot take
DAY3 = [{"id": 200 + i, "quantity": i} for i in range(10)]
CONTRACTS = {"quantity": "discard_row", "*": "discard_value"}


def lines(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
def test_ingest_obeys_the_contracts_the_table_keeps_as_simulate_does(
    jvm: SparkSession, lakehouse: Catalog, tmp_path: Path, policy: str
) -> None:
    table = f"contracts.orders_{policy}"
    day1, day2, day3 = (lines(tmp_path / f"day{n}.jsonl", d)
                        for n, d in ((1, DAY1), (2, DAY2), (3, DAY3)))
    first = ingest(day1, table, lakehouse, jvm, batch_id="day1", policy=policy,
                   contracts=CONTRACTS)
    assert first.plan.held == ()  # a new table takes its first batch as it comes
    assert json.loads(lakehouse.load_table(table).properties[CONTRACTS_PROPERTY]) == CONTRACTS

    # a freeze contract given with the batch fails it, naming field and value: nothing lands
    with pytest.raises(ContractError, match=r"field 'quantity': value \"two\"") as caught:
        ingest(day2, table, lakehouse, jvm, batch_id="day2", policy=policy,
               contracts={"quantity": "freeze"})
    assert (caught.value.field, caught.value.value) == ("quantity", "two")
    assert len(read_pyiceberg(lakehouse.load_table(table))) == 50
    assert quarantine(lakehouse, table).empty
    # ... and the table still keeps the contracts it had
    assert json.loads(lakehouse.load_table(table).properties[CONTRACTS_PROPERTY]) == CONTRACTS

    # no contracts given: the table's are obeyed
    second = ingest(day2, table, lakehouse, jvm, batch_id="day2", policy=policy)
    reference = toolkit.simulate([DAY1, DAY2], policy=policy, contracts=CONTRACTS)
    assert [str(b) for b in second.plan.held] == [str(b) for b in reference.plans[1].held]
    assert not second.plan.changed
    assert (second.routed_in, second.quarantined, second.rows_written) == ("python", 2, 39)
    assert read_pyiceberg(lakehouse.load_table(table)) == canonical(reference.rows)
    held = quarantine(lakehouse, table)
    assert [(json.loads(r.raw), r.reason, r.field, r.detail) for r in held.rows] == [
        (q.record, q.reason, q.field, q.detail) for q in reference.quarantined
    ]
    assert [(q.record, q.reason, q.field) for q in reference.quarantined] == [
        (DAY2[7], "contract", "quantity"), (DAY2[20], "contract-value", "shipping")]

    # a batch the contracts do not touch: the JVM router keeps it under the upsolver policy
    third = ingest(day3, table, lakehouse, jvm, batch_id="day3", policy=policy)
    assert third.plan.held == ()
    assert third.routed_in == ("jvm" if policy == "upsolver" else "python")
    reference = toolkit.simulate([DAY1, DAY2, DAY3], policy=policy, contracts=CONTRACTS)
    assert read_pyiceberg(lakehouse.load_table(table)) == canonical(reference.rows)

    # a contract's records go to the quarantine even when incompatible ones fail the batch
    fail = ingest([{"id": 300, "quantity": "three"}, {"id": 301, "quantity": 3}], table,
                  lakehouse, jvm, batch_id="day3b", policy=policy, on_incompatible="fail")
    assert (fail.quarantined, fail.rows_written) == (1, 1)

    # contracts given again replace the kept ones: with no `*`, a new key gets its column
    fourth = ingest([{"id": 999, "note": "late"}], table, lakehouse, jvm, batch_id="day4",
                    policy=policy, contracts={"quantity": "evolve"})
    assert fourth.plan.held == ()
    assert [c.column.name for c in fourth.plan.changes] == ["note"]
    rows = read_pyiceberg(lakehouse.load_table(table))
    assert len(rows) == 50 + 39 + 10 + 1 + 1
    assert {"id": 999, "quantity": None, "note": "late"} in rows
    assert json.loads(lakehouse.load_table(table).properties[CONTRACTS_PROPERTY]) == {
        "quantity": "evolve"}


def test_a_stream_obeys_the_tables_contracts_and_a_replay_with_new_ones_lands_them(
    jvm: SparkSession, lakehouse: Catalog, tmp_path: Path
) -> None:
    table = "contracts.streamed"
    ingest(lines(tmp_path / "day1.jsonl", DAY1), table, lakehouse, jvm, batch_id="day1",
           contracts=CONTRACTS)
    landing = tmp_path / "landing"
    landing.mkdir()
    lines(landing / "day2.jsonl", DAY2)
    query = stream(landing, table, lakehouse, jvm, checkpoint=tmp_path / "checkpoint",
                   trigger={"availableNow": True}, query_name="contracts_streamed")
    query.awaitTermination(120)
    assert not query.isActive and query.exception() is None
    [report] = reports(query).reports
    reference = toolkit.simulate([DAY1, DAY2], contracts=CONTRACTS)
    assert (report.quarantined, report.rows_written) == (2, 39)
    assert read_pyiceberg(lakehouse.load_table(table)) == canonical(reference.rows)

    # replayed under contracts that let `quantity` evolve: the record set aside whole lands
    # (a column for its text); the value taken out of a written record cannot be replayed
    replayed = replay(lakehouse, table, jvm, contracts={"quantity": "evolve"})
    assert replayed.ingest is not None
    assert [c.column.name for c in replayed.ingest.plan.changes] == ["quantity_string"]
    assert [(r.reason, r.field) for r in quarantine(lakehouse, table).rows] == [
        ("contract-value", "shipping")]
    rows = read_pyiceberg(lakehouse.load_table(table))
    assert len(rows) == 90 and {"id": 107, "quantity": None, "quantity_string": "two"} in rows
