"""The two test servers this folder's tests use start, answer like the real thing, and
stop: a Kafka-compatible broker (tansu) and an Iceberg REST catalog (lakana)."""

from __future__ import annotations

import socket
import uuid

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table.update import AssertRefSnapshotId, SetPropertiesUpdate
from pyiceberg.types import LongType, NestedField

from tests import servers


def _listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return True
    except OSError:
        return False


def test_the_broker_keeps_what_is_produced_and_stops() -> None:
    from confluent_kafka import Consumer, TopicPartition

    with servers.kafka_broker() as kafka:
        kafka.produce("t", ['{"a": 1}', '{"a": 2}'], partitions=[0, 0])
        consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": "g",
                             "enable.auto.commit": False})
        try:
            consumer.assign([TopicPartition("t", 0, 0)])
            got: list[bytes] = []
            while len(got) < 2:
                msgs = consumer.consume(10, timeout=10)
                assert msgs, "the broker handed back nothing within 10 s"
                got += [m.value() for m in msgs if m.error() is None]
        finally:
            consumer.close()
        assert got == [b'{"a": 1}', b'{"a": 2}']
        address = kafka.bootstrap
    assert not _listening(address)


def test_the_rest_catalog_commits_checks_and_stops() -> None:
    with servers.rest_catalog_server() as rest:
        cat = load_catalog("rest", **rest.properties())
        schema = Schema(NestedField(1, "n", LongType(), required=False))
        name = f"bronze.t_{uuid.uuid4().hex[:8]}"
        cat.create_table(name, schema)
        rows = pa.table({"n": pa.array([1], pa.int64())})
        cat.load_table(name).append(rows)
        first, second = cat.load_table(name), cat.load_table(name)
        first.append(rows)
        # optimistic concurrency: a commit requiring the `main` it last saw is refused (409)
        # once another writer moved it (PyIceberg's own append would retry on top)
        stale = AssertRefSnapshotId(ref="main", snapshot_id=second.metadata.current_snapshot_id)
        with pytest.raises(CommitFailedException):
            cat.commit_table(second, (stale,), (SetPropertiesUpdate(updates={"x": "y"}),))
        table = cat.load_table(name)
        assert table.scan().to_arrow().num_rows == 2
        assert "x" not in table.properties
        address = rest.uri.removeprefix("http://")
    assert not _listening(address)
