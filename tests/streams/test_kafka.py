"""A drifting topic through a real Kafka-compatible broker (tansu, tests/servers.py):
streamed, and ingested as a bounded read, the table equals ``toolkit.simulate`` of the
same records, read back by Spark, DuckDB and PyIceberg; messages that are not JSON objects
are set aside with their topic, partition and offset; provenance columns come on request."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import (
    as_pyiceberg_reads_it,
    assert_table_is_the_simulation,
    canonical,
    read_duckdb,
    read_pyiceberg,
    read_spark,
    schema_summary,
)
from tests.integration.test_ingest import CORPUS
from tests.servers import KafkaBroker
from toolkit.core.batch.offsets import parse_batch_id
from toolkit.iceberg.ledger import batch_id_of
from toolkit.pipeline.stream import reports

pytestmark = pytest.mark.spark

#: what a record-less message looks like, and where it goes
NOT_RECORDS = ["42", "not json", '["a", "list"]']


@dataclass(frozen=True)
class Streamed:
    topic: str
    table: str
    logs: list[Any]


def lines(batch: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) for r in batch]


@pytest.fixture(scope="module")
def streamed(kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any) -> Streamed:
    """The three drifting batches, one wave each: produce it, then run the stream until
    it has read what the topic holds (availableNow). The second wave also carries
    messages that are no JSON object."""
    state = Streamed("drift", "db.kafka_drift", [])
    for w, batch in enumerate(CORPUS):
        kafka_broker.produce(state.topic, lines(batch) + (NOT_RECORDS if w == 1 else []))
        query = toolkit.stream(kafka_broker.url(state.topic), state.table, lakehouse, spark,
                               trigger={"availableNow": True})
        query.awaitTermination(120)
        assert not query.isActive and query.exception() is None
        state.logs.append(reports(query))
    return state


def test_streamed_topic_equals_the_simulation(
    streamed: Streamed, lakehouse: Catalog, spark: Any
) -> None:
    sim = toolkit.simulate(CORPUS)
    assert "my_field_string" in [f.name for f in sim.schema.fields]  # it did drift
    table = lakehouse.load_table(streamed.table)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    expected = canonical(sim.rows)
    assert read_spark(spark, f"{lakehouse.name}.{streamed.table}") == expected
    assert read_duckdb(table) == expected
    # PyIceberg reads a null list<struct> as [] (apache/iceberg-python#3833), so it is
    # compared for the rows of the last batch, written under the final schema
    last = canonical(as_pyiceberg_reads_it(sim.rows[-len(CORPUS[-1]):], sim.table_schema))
    assert all(row in read_pyiceberg(table) for row in last)


def test_each_micro_batch_is_named_by_its_offset_ranges(
    streamed: Streamed, lakehouse: Catalog
) -> None:
    table = lakehouse.load_table(streamed.table)
    ids = [batch_id_of(s) for s in table.snapshots()]
    assert [len(log) for log in streamed.logs] == [1, 1, 1]
    assert ids == [log.last.batch_id for log in streamed.logs]
    read = [parse_batch_id(i) for i in ids if i is not None]
    assert all(p is not None and p[0] == "drift" for p in read)
    # one range per partition, each batch starting where the one before ended
    per_batch = [{r.partition: (r.start, r.end) for r in p[1]} for p in read if p]
    for before, after in zip(per_batch, per_batch[1:], strict=False):
        assert {p: e for p, (_, e) in before.items()} == {p: s for p, (s, _) in after.items()}
    sizes = [sum(e - s for s, e in b.values()) for b in per_batch]
    assert sizes == [len(CORPUS[0]), len(CORPUS[1]) + len(NOT_RECORDS), len(CORPUS[2])]


def test_messages_that_are_not_objects_are_quarantined_with_their_place(
    streamed: Streamed, lakehouse: Catalog
) -> None:
    rows = toolkit.quarantine(lakehouse, streamed.table).rows
    assert sorted(r.raw for r in rows) == sorted(NOT_RECORDS)
    assert {r.reason for r in rows} == {"malformed", "not-a-record"}
    for r in rows:
        assert r.detail.startswith("topic drift, partition "), r.detail
        assert ", offset " in r.detail
    assert streamed.logs[1].last.quarantined == len(NOT_RECORDS)


def test_a_run_with_nothing_new_writes_nothing(
    streamed: Streamed, kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    before = len(lakehouse.load_table(streamed.table).snapshots())
    query = toolkit.stream(kafka_broker.url(streamed.topic), streamed.table, lakehouse,
                           spark, trigger={"availableNow": True})
    query.awaitTermination(120)
    assert len(reports(query)) == 0
    assert len(lakehouse.load_table(streamed.table).snapshots()) == before


def test_ingest_reads_the_topic_up_to_its_end_as_one_batch(
    streamed: Streamed, kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    report = toolkit.ingest(kafka_broker.url(streamed.topic), "db.kafka_bounded", lakehouse,
                            spark)
    assert report.rows_written == sum(len(b) for b in CORPUS)
    assert report.quarantined == len(NOT_RECORDS)
    sim = toolkit.simulate([[r for b in CORPUS for r in b]])
    assert_table_is_the_simulation(spark, lakehouse, "db.kafka_bounded", sim)
    again = toolkit.ingest(kafka_broker.url(streamed.topic), "db.kafka_bounded", lakehouse,
                           spark)
    assert again.skipped and again.rows_written == 0


def test_provenance_columns_on_request(
    kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    kafka_broker.produce("prov", ['{"a": 1}', '{"a": 2}'], partitions=[1, 1],
                         keys=["k1", None])
    toolkit.ingest(kafka_broker.url("prov"), "db.kafka_prov", lakehouse, spark,
                   provenance=True)
    table = lakehouse.load_table("db.kafka_prov")
    names = [f.name for f in table.schema().fields]
    assert {"_kafka_topic", "_kafka_partition", "_kafka_offset", "_kafka_timestamp",
            "_kafka_key"} <= set(names)
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["_kafka_offset"])
    assert [(r["a"], r["_kafka_topic"], r["_kafka_partition"], r["_kafka_offset"],
             r["_kafka_key"]) for r in rows] == [(1, "prov", 1, 0, "k1"), (2, "prov", 1, 1, None)]
    assert all(r["_kafka_timestamp"] is not None for r in rows)
    # off by default
    toolkit.ingest(kafka_broker.url("prov"), "db.kafka_plain", lakehouse, spark)
    assert [f.name for f in lakehouse.load_table("db.kafka_plain").schema().fields] == ["a"]


def test_the_readme_example_streams_a_drifting_topic(
    kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    """The Kafka example of docs/beyond-one-machine.md, run against the test broker with the
    run's own catalog and session (its two set-up lines), prints what the page says it
    prints."""
    import contextlib
    import io
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "beyond-one-machine.md").read_text()
    section = text.split("## From Kafka, exactly once", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    body = code.group(1)
    shown = re.findall(r"^# (\[.*?\])", body, re.M)
    kafka_broker.produce("orders", ['{"id": 1, "price": 10}', '{"id": 2, "price": "n/a"}',
                                    '{"id": 3, "tags": ["a"]}'])
    run = "\n".join(line for line in body.splitlines()
                    if not line.startswith(("cat = ", "spark = ")))
    run = run.replace("localhost:9092", kafka_broker.bootstrap)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(run, "beyond-one-machine.md", "exec"),
             {"toolkit": toolkit, "cat": lakehouse, "spark": spark})
    assert out.getvalue().strip() == shown[0]


def test_the_command_streams_a_topic_once(
    kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    """``toolkit stream kafka://HOST:PORT/TOPIC -t TABLE --once``, on the run's catalog
    folder (the command's session is the run's own: getOrCreate)."""
    from click.testing import CliRunner

    from toolkit.cli import cli
    from toolkit.iceberg.catalog import embedded_folder

    kafka_broker.produce("cli-events", ['{"n": 1}', '{"n": "x"}'])
    out = CliRunner().invoke(cli, ["stream", kafka_broker.url("cli-events"), "-t",
                                   "db.kafka_cli", "--catalog",
                                   str(embedded_folder(lakehouse)), "--once"])
    assert out.exit_code == 0, out.output
    assert "kafka:cli-events:" in out.output and "2 rows written" in out.output
    names = [f.name for f in lakehouse.load_table("db.kafka_cli").schema().fields]
    assert names == ["n", "n_long"]


def test_a_batch_of_nothing_but_non_records_moves_the_topic_on(
    kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any
) -> None:
    url = kafka_broker.url("junk")
    kafka_broker.produce("junk", ['{"a": 1}'], partitions=[0])
    toolkit.ingest(url, "db.kafka_junk", lakehouse, spark)
    kafka_broker.produce("junk", ["oops", "7"], partitions=[0, 0])
    report = toolkit.ingest(url, "db.kafka_junk", lakehouse, spark)
    assert (report.rows_written, report.quarantined) == (0, 2)
    assert report.batch_id.startswith("kafka:junk:0=1-3")  # in the ledger: read once
    assert toolkit.ingest(url, "db.kafka_junk", lakehouse, spark).skipped
    assert len(toolkit.quarantine(lakehouse, "db.kafka_junk").rows) == 2
