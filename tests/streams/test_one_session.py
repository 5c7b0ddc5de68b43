"""Two writers at once in one process and one Spark session: two Kafka streams (two topics
into two tables, two topics into one table, one topic into one table twice) and two
threads calling ``toolkit.ingest``. Each table holds each of its records once, read back
by Spark, and ``toolkit.statistics`` counts what arrived once.

The two writers' staged appends are put in the order that once broke this: the second
writer is inside its append (its write-audit-publish id set) when the first one's append
ends. The order is forced by holding each writer's first append
(``toolkit.spark.plans.appended``, which every staged write goes through, or
``DataFrameWriterV2.append`` in a JVM without the toolkit's helpers) until the other
writer is where the order needs it; nothing else is changed.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.servers import KafkaBroker
from toolkit.pipeline.stream import reports

pytestmark = pytest.mark.spark

#: how long a writer waits for the other one to reach its place before the test fails
#: (a guard against a hang, not a measure: the order is given by events)
STUCK = 300.0


@dataclass
class Order:
    """The order of the first appends of two threads, ``first`` and ``second`` (thread
    names): the first one's append starts once the second one is inside its own, which
    waits until :meth:`first_done` says the first writer's batch is in."""

    first: str
    second: str
    _second_inside: threading.Event = field(default_factory=threading.Event)
    _first_in: threading.Event = field(default_factory=threading.Event)
    _held: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def first_done(self) -> None:
        self._first_in.set()

    def before_append(self) -> None:
        name = threading.current_thread().name
        with self._lock:
            if name not in (self.first, self.second) or name in self._held:
                return
            self._held.add(name)
        if name == self.first:
            _wait(self._second_inside, f"{self.second} never reached its append")
        else:
            self._second_inside.set()
            _wait(self._first_in, f"{self.first} never finished its first batch")


def _wait(event: threading.Event, why: str) -> None:
    if not event.wait(STUCK):
        raise AssertionError(why)


@pytest.fixture
def order(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str], Order]]:
    """Install an :class:`Order` of two threads' first appends."""
    from pyspark.sql.readwriter import DataFrameWriterV2

    from toolkit.spark import plans

    real, real_appended = DataFrameWriterV2.append, plans.appended
    made: list[Order] = []

    def append(self: DataFrameWriterV2) -> None:
        for o in made:
            o.before_append()
        real(self)

    def appended(*args: Any) -> None:
        for o in made:
            o.before_append()
        real_appended(*args)

    monkeypatch.setattr(DataFrameWriterV2, "append", append)
    monkeypatch.setattr(plans, "appended", appended)

    def make(first: str, second: str) -> Order:
        made.append(Order(first, second))
        return made[-1]

    yield make
    # the order was kept only if both writers' appends went through the hooks
    for o in made:
        assert o._held == {o.first, o.second}, f"appends never held: {o}"


def _ids(spark: Any, lakehouse: Catalog, table: str) -> list[int]:
    return sorted(r["id"] for r in spark.table(f"{lakehouse.name}.{table}").collect())


def _arrived(lakehouse: Catalog, table: str) -> int:
    """How many ``id`` values arrived in ``table``, as ingest counted them."""
    return sum(toolkit.statistics(lakehouse.load_table(table)).arrived("id").values())


#: (topic, table) of the two queries, by scenario
SCENARIOS = {
    "two topics into two tables": (("duo-a", "db.duo_a"), ("duo-b", "db.duo_b")),
    "two topics into one table": (("uno-a", "db.uno"), ("uno-b", "db.uno")),
    "one topic into one table twice": (("same", "db.same"), ("same", "db.same")),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_two_streams_at_once_land_every_record_once(
    scenario: str, kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any,
    order: Callable[[str, str], Order],
) -> None:
    queries = SCENARIOS[scenario]
    sent: dict[str, list[int]] = {}
    for k, (topic, _) in enumerate(queries):
        if topic not in sent:
            sent[topic] = list(range(100 * k, 100 * k + 6))
            kafka_broker.produce(topic, [json.dumps({"id": i}) for i in sent[topic]],
                                 partitions=[0] * 6)
    names = [f"{topic}-{k}" for k, (topic, _) in enumerate(queries)]
    schedule = order(names[0], names[1])
    started = [
        toolkit.stream(kafka_broker.url(topic), table, lakehouse, spark, query_name=name,
                       trigger={"availableNow": True}, max_messages=3,
                       on_batch=(lambda _: schedule.first_done()) if k == 0 else None)
        for k, (name, (topic, table)) in enumerate(zip(names, queries, strict=True))
    ]
    for q in started:
        q.awaitTermination(STUCK)
    assert [q.exception() for q in started] == [None, None]
    assert all(len(reports(q)) for q in started)

    expected: dict[str, list[int]] = {}
    for topic, table in queries:
        expected[table] = sorted(set(expected.get(table, [])) | set(sent[topic]))
    for table, ids in expected.items():
        assert _ids(spark, lakehouse, table) == ids, table
        assert _arrived(lakehouse, table) == len(ids), table


class _Ingest(threading.Thread):
    """``toolkit.ingest`` in a thread of its own name; what it returned or raised."""

    def __init__(self, name: str, call: Callable[[], Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.call, self.result, self.error = call, None, None

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as exc:
            self.error = exc


SOURCES: dict[str, Callable[[list[int]], Any]] = {
    "records": lambda ids: [{"id": i} for i in ids],
    "an Arrow table": lambda ids: pa.table({"id": pa.array(ids, pa.int64())}),
}


@pytest.mark.parametrize("kind", list(SOURCES))
@pytest.mark.parametrize("same_batch", [True, False], ids=["same batch id", "two batch ids"])
def test_two_threads_ingesting_at_once_land_every_record_once(
    kind: str, same_batch: bool, lakehouse: Catalog, spark: Any,
    order: Callable[[str, str], Order],
) -> None:
    """The same batch (a retry while the first run still writes, say) lands once; two
    batches land whole, each counted once."""
    table = f"db.threads_{'same' if same_batch else 'two'}_{kind.split()[-1]}"
    toolkit.ingest(SOURCES[kind]([-1]), table, lakehouse, spark, "seed")
    batches = [("first", [1, 2, 3]), ("second", [1, 2, 3] if same_batch else [4, 5])]
    schedule = order("first", "second")

    def run(name: str, ids: list[int]) -> Any:
        bid = "b1" if same_batch else f"b-{name}"
        report = toolkit.ingest(SOURCES[kind](ids), table, lakehouse, spark, bid)
        if name == "first":
            schedule.first_done()
        return report

    threads = [_Ingest(name, lambda n=name, i=ids: run(n, i)) for name, ids in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(STUCK)
    assert [t.error for t in threads] == [None, None]

    expected = sorted({-1, *(i for _, ids in batches for i in ids)})
    assert _ids(spark, lakehouse, table) == expected
    assert _arrived(lakehouse, table) == len(expected)
    written = sorted(t.result.rows_written for t in threads if t.result is not None)
    assert written == ([0, 3] if same_batch else [2, 3])


def test_a_second_stream_under_a_running_name_is_refused(
    kafka_broker: KafkaBroker, lakehouse: Catalog, spark: Any, tmp_path: Path
) -> None:
    """Two topics into one table under the default name would share its checkpoint."""
    kafka_broker.produce("named-a", ['{"id": 1}'])
    kafka_broker.produce("named-b", ['{"id": 2}'])
    running = toolkit.stream(kafka_broker.url("named-a"), "db.named", lakehouse, spark,
                             trigger="1 second")
    try:
        with pytest.raises(toolkit.QueryNameTakenError, match="ingest_db_named"):
            toolkit.stream(kafka_broker.url("named-b"), "db.named", lakehouse, spark)
        with pytest.raises(toolkit.QueryNameTakenError, match="ingest_db_named"):
            toolkit.stream(tmp_path, "db.named", lakehouse, spark,
                           trigger={"availableNow": True})
    finally:
        running.stop()
    other = toolkit.stream(kafka_broker.url("named-b"), "db.named", lakehouse, spark,
                           trigger={"availableNow": True})
    other.awaitTermination(STUCK)
    assert other.exception() is None
    assert _ids(spark, lakehouse, "db.named") == [1, 2]


def test_a_setting_two_calls_hold_is_put_back_when_the_last_one_ends(spark: Any) -> None:
    """The order that left Arrow's local-relation threshold at 0 for good: two calls set
    it, the first one ends, then the second."""
    from toolkit.spark.settings import held

    key = "spark.sql.execution.arrow.localRelationThreshold"
    before = spark.conf.get(key, None)
    with contextlib.ExitStack() as first:
        first.enter_context(held(spark, {key: "0"}))
        second = contextlib.ExitStack()
        second.enter_context(held(spark, {key: "0"}))
    assert spark.conf.get(key) == "0"  # the second call still runs with it
    second.close()
    assert spark.conf.get(key, None) == before


def test_a_write_session_has_the_settings_its_parent_has_now(spark: Any) -> None:
    """A write's own session is used again by later writes: it takes the settings (a
    catalog added, say) the caller's session has by then, and never keeps a write's id."""
    from toolkit.spark.settings import own_session

    frame, probe, wap = spark.range(1), "spark.toolkit.test.probe", "spark.wap.id"
    seen = []
    for value in ("1", "2", None):
        if value is None:
            spark.conf.unset(probe)
        else:
            spark.conf.set(probe, value)
        with own_session(frame, {wap: f"w{value}"}) as own:
            session = own.sparkSession
            assert session._jsparkSession != spark._jsparkSession
            seen.append((session.conf.get(probe, None), session.conf.get(wap, None),
                         spark.conf.get(wap, None)))
            assert own.count() == 1
        assert session.conf.get(wap, None) is None
    assert seen == [("1", "w1", None), ("2", "w2", None), (None, "wNone", None)]
    # a session given back is taken again: the sessions kept do not grow
    from toolkit.spark import settings

    kept = sum(len(v) for v in settings._idle.values())
    with own_session(frame, {wap: "again"}) as own:
        assert own.count() == 1
    assert sum(len(v) for v in settings._idle.values()) == kept >= 1


def test_a_write_session_puts_back_a_setting_its_parent_has(spark: Any) -> None:
    """A write that holds a setting its caller's session has too leaves the write session
    with the caller's value after it (as jvm/Settings.java puts back what it set), so the
    next write that takes that session sees the caller's settings."""
    from toolkit.spark.settings import own_session, settings_hash

    frame, probe = spark.range(1), "spark.toolkit.test.held"
    spark.conf.set(probe, "the caller's")
    try:
        with own_session(frame, {probe: "the write's"}) as own:
            session = own.sparkSession
            assert session.conf.get(probe) == "the write's"
        assert session.conf.get(probe, None) == "the caller's"
        assert settings_hash(session) == settings_hash(spark)
    finally:
        spark.conf.unset(probe)
