"""Exactly once from Kafka across crashes: a stream is killed at every stage of a
micro-batch (after the poll, after the schema commit, during the write, after the data
commit, before the consumer group's commit), then run again; every message lands exactly
once, and the table equals ``toolkit.simulate`` of the messages.

The kill comes from the child's own script (``kafka_crash_child.py``); SIGKILL goes to the
child's whole process group, so Spark's JVM dies with it. One child per stage crashes
(each on its own topic and table of one catalog), then one child resumes every table.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from typing import Any

import pytest

import toolkit
from tests.integration.readers import canonical, read_duckdb, schema_summary
from tests.integration.test_ingest import CORPUS
from tests.reliability import children
from tests.servers import KafkaBroker
from toolkit.core.batch.offsets import parse_batch_id
from toolkit.iceberg.ledger import batch_id_of, main_snapshots

pytestmark = pytest.mark.spark

STAGES = ("polled", "schema", "writing", "committed", "group")
#: what the table holds once the second micro-batch was killed at each stage
LANDED = {"polled": 1, "schema": 1, "writing": 1, "committed": 2, "group": 2}
#: the three drifting batches, two messages each, all on partition 0, in order
MESSAGES = [json.dumps(r) for batch in CORPUS for r in batch]


def table_name(stage: str) -> str:
    return f"db.kafka_crash_{stage}"


def topic(stage: str) -> str:
    return f"crash-{stage}"


def on_main(table: Any) -> list[str | None]:
    """The batch ids of the snapshots on `main`, oldest first (a staged snapshot that
    was never published is not one)."""
    return [batch_id_of(s) for s in reversed(list(main_snapshots(table)))]


@dataclass(frozen=True)
class Run:
    folder: str
    codes: dict[str, int]
    landed: dict[str, list[str | None]]
    group_offsets: dict[str, int]
    staged: dict[str, int]  # snapshots, on `main` or staged, after the crash
    logs: dict[str, str]


def group_offset(kafka: KafkaBroker, stage: str) -> int:
    """Partition 0's offset committed by the stream's consumer group (-1: none)."""
    from confluent_kafka import Consumer, TopicPartition

    group = f"toolkit-ingest_{table_name(stage).replace('.', '_')}"
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group})
    try:
        (tp,) = consumer.committed([TopicPartition(topic(stage), 0)], timeout=30)
        return int(tp.offset)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, kafka_broker: KafkaBroker) -> Run:
    assert all(len(b) == 2 for b in CORPUS)  # two messages per micro-batch: one batch each
    work = tmp_path_factory.mktemp("kafka-crashes")
    folder = work / "lake"
    toolkit.catalog(folder)
    for stage in STAGES:
        kafka_broker.produce(topic(stage), MESSAGES, partitions=[0] * len(MESSAGES))
    crashing = [
        children.start("kafka_crash_child.py",
                       [str(folder), kafka_broker.url(topic(s)), table_name(s), s],
                       work, f"crash-{s}")
        for s in STAGES
    ]
    # one child resumes every stream, one after the other: one JVM, not one a table; its
    # interpreter and JVM start now, its streams once the crashed ones are read
    pairs = [a for s in STAGES for a in (kafka_broker.url(topic(s)), table_name(s))]
    go = work / "resume.go"
    resuming = children.start("kafka_crash_child.py", [str(folder), "--resume", *pairs],
                              work, "resume", go=go)
    try:
        codes = dict(zip(STAGES, children.wait(crashing, timeout=300), strict=True))
        cat = toolkit.catalog(folder)
        landed = {s: on_main(cat.load_table(table_name(s))) for s in STAGES}
        offsets = {s: group_offset(kafka_broker, s) for s in STAGES}
        staged = {s: len(cat.load_table(table_name(s)).metadata.snapshots) for s in STAGES}
        logs = {s: c.output() for s, c in zip(STAGES, crashing, strict=True)}
        go.touch()
        (code,) = children.wait([resuming], timeout=300)
    finally:
        resuming.kill()
    assert code == 0, f"resuming failed ({code}):\n{resuming.output()[-6000:]}"
    return Run(str(folder), codes, landed, offsets, staged, logs)


@pytest.mark.parametrize("stage", STAGES)
def test_killed_where_intended(run: Run, stage: str) -> None:
    assert run.codes[stage] == -signal.SIGKILL, run.logs[stage][-4000:]
    assert len(run.landed[stage]) == LANDED[stage]
    if stage == "writing":  # the data files were written and staged, never published
        assert run.staged[stage] == LANDED[stage] + 1
    # the group's offsets trail the table: committed after it, never trusted over it
    assert run.group_offsets[stage] == 2


@pytest.mark.parametrize("stage", STAGES)
def test_every_message_lands_exactly_once(run: Run, stage: str) -> None:
    table = toolkit.catalog(run.folder).load_table(table_name(stage))
    ids = on_main(table)
    ranges = [parse_batch_id(i) for i in ids if i is not None]
    # the batches tile the topic: 0-2, 2-4, 4-6 on partition 0, none read twice
    assert [(r.start, r.end) for p in ranges if p for r in p[1] if r.partition == 0] == \
        [(0, 2), (2, 4), (4, 6)]
    sim = toolkit.simulate(CORPUS)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    assert read_duckdb(table) == canonical(sim.rows)
