"""A real Iceberg REST catalog (lakana, tests/servers.py, its tables in an S3 server): the
toolkit's ingest, stream, statistics, lineage, undo and maintenance through
``toolkit.catalog("http://...", token=..., prefix=...)``, Spark writing with Iceberg's
REST client. A table ingested batch by batch equals ``toolkit.simulate``; two writers at
once lose nothing; views, which the server cannot keep, are refused in plain words.

Spark runs in child processes (``rest_child.py``): the S3 jars must be on a JVM's class
path from its start, and the test run's one session has none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import toolkit
from tests import servers
from tests.integration.readers import (
    as_pyiceberg_reads_it,
    canonical,
    read_pyiceberg,
    schema_summary,
)
from tests.integration.test_ingest import CORPUS
from tests.reliability import children
from tests.servers import KafkaBroker

pytestmark = pytest.mark.spark

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Rest:
    settings: Path  # what a child opens the catalog with
    properties: dict[str, str]
    work: Path

    def catalog(self) -> object:
        props = dict(self.properties)
        return toolkit.catalog(props.pop("uri"), name="rest", **props)

    def run(self, name: str, *steps: str) -> str:
        child = self.start(name, *steps)
        (code,) = children.wait([child], timeout=400)
        assert code == 0, f"{name} failed ({code}):\n{child.output()[-6000:]}"
        return child.output()

    def start(self, name: str, *steps: str) -> children.Child:
        child = children.start("../streams/rest_child.py", [str(self.settings), *steps],
                               self.work, name)
        return child


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rest]:
    work = tmp_path_factory.mktemp("rest")
    with pytest.MonkeyPatch.context() as env:
        # the AWS SDKs of pyarrow and of lakana's botocore send aws-chunked uploads the S3
        # server refuses (HTTP 411) unless told not to; lakana inherits this environment
        env.setenv("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
        env.setenv("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_required")
        with servers.s3_server(buckets=("lake",)) as s3, \
                servers.rest_catalog_server(s3=s3) as server:
            yield _rest(work, s3, server)


def _rest(work: Path, s3: servers.S3Server, server: servers.RestCatalogServer) -> Rest:
    props = {"uri": server.uri, "token": server.token, "prefix": server.prefix,
             "s3.endpoint": s3.endpoint, "s3.access-key-id": s3.access_key,
             "s3.secret-access-key": s3.secret_key, "s3.region": "us-east-1"}
    settings = work / "settings.json"
    settings.write_text(json.dumps(props))
    return Rest(settings, props, work)


@dataclass(frozen=True)
class Solo:
    output: str  # the solo child's
    writers: list[children.Child]  # started with it, each waiting for the first writer's batch


@pytest.fixture(scope="module")
def solo(rest: Rest, kafka_broker: KafkaBroker) -> Iterator[Solo]:
    """The output of one child that runs, one after the other, the steps each test below
    reads (a JVM with the S3 jars takes seconds to start: one, not one a test): the first
    writer's batch; three batches and one again; a Kafka topic, a batch, upkeep and a view
    on a third table.

    The two writers of :func:`test_two_writers_lose_nothing` start with it: each starts its
    JVM while the solo child works, waits until the first writer's batch is on main, then
    ingests (the two at once, meeting a table that exists); their JVMs' starts overlap the
    solo child's steps instead of coming after them."""
    kafka_broker.produce("rest-events", [json.dumps(r) for r in CORPUS[0]])
    writers = [rest.start(f"writer{i}", "wait:gold.shared", f"ingest:gold.shared:{i}:w")
               for i in (1, 2)]
    try:
        yield Solo(rest.run("solo", "ingest:gold.shared:0:w", "ingest:bronze.events:0,1,2",
                            "ingest:bronze.events:0",
                            f"kafka:{kafka_broker.url('rest-events')}:silver.events",
                            "ingest:silver.events:1", "upkeep:silver.events",
                            "view:silver.events"), writers)
    finally:
        for writer in writers:  # (waited for by their test; killed if it did not run)
            writer.kill()


def test_batch_by_batch_equals_the_simulation(rest: Rest, solo: Solo) -> None:
    out = solo.output
    assert "ingest:bronze.events:0 -> b0 rows=0 skipped=True" in out  # once only
    table = rest.catalog().load_table("bronze.events")  # type: ignore[attr-defined]
    sim = toolkit.simulate(CORPUS)
    assert schema_summary(table.schema()) == schema_summary(sim.schema)
    # read back by PyIceberg: each row as the schema it was written under reads it
    written = [toolkit.simulate(CORPUS[: i + 1]).table_schema
               for i, batch in enumerate(CORPUS) for _ in batch]
    assert read_pyiceberg(table) == canonical(
        as_pyiceberg_reads_it(sim.rows, sim.table_schema, written))


def test_two_writers_lose_nothing(rest: Rest, solo: Solo) -> None:
    # the first writer's batch is in (solo): the two meet a table that exists
    both = solo.writers
    for child, code in zip(both, children.wait(both, timeout=400), strict=True):
        assert code == 0, child.output()[-6000:]
        assert "wait:gold.shared -> waited" in child.output()
    rows = rest.catalog().load_table("gold.shared").scan().to_arrow()  # type: ignore[attr-defined]
    assert sorted(rows.column("writer").to_pylist()) == [0, 0, 1, 1, 2, 2]


def test_kafka_statistics_lineage_undo_maintenance_and_views(solo: Solo) -> None:
    out = solo.output
    assert "silver.events -> rows=2" in out, out[-4000:]
    assert "-> statistics=WrittenDataStatistics" in out
    assert "-> undo=" in out and "-> maintain=" in out
    assert "view:silver.events -> refused: " in out, out[-4000:]
