"""Kafka: messages per second through ``toolkit.stream("kafka://...")`` against the same
messages read by the same client (``toolkit.kafka.TopicReader``, confluent-kafka) and
appended by plain Spark (``spark.read.json`` of the lines, ``writeTo(...).append()``).

A tansu broker (the test servers' one, ``tests/servers.py``) runs on 127.0.0.1 for the
run; the topic holds ``--records`` drifting JSON records over 4 partitions. Each timed run
reads the whole topic into a fresh table; the toolkit and the plain path alternate, and
the medians are compared. It prints one ``ratio kafka = X (target <= 1.3): PASS|MISS``
line; absolute times on a shared machine mean little, ratios taken in one run do.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

TARGET = 1.3
TOPIC = "bench"


def records(n: int, seed: int = 0) -> list[str]:
    """Drifting records: ``price`` a long, then sometimes text; ``tags`` now and then."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r: dict[str, object] = {"id": i, "price": rng.randint(1, 10_000),
                                "at": "2026-11-27T10:00:00Z", "user": {"name": f"u{i % 97}"}}
        if i % 10 == 3:
            r["price"] = "n/a"
        if i % 7 == 0:
            r["tags"] = ["a", "b"][: 1 + i % 2]
        out.append(json.dumps(r))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks --kafka",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=50_000, help="messages (default 50000)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs, median (default 1)")
    args = ap.parse_args(argv)

    def log(s: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {s}", file=sys.stderr, flush=True)

    import toolkit
    from tests.servers import kafka_broker
    from toolkit.kafka import KafkaTopic, TopicReader, plan_ranges

    with tempfile.TemporaryDirectory(prefix="bench-kafka-") as tmp, kafka_broker() as kafka:
        t0 = time.perf_counter()
        kafka.produce(TOPIC, records(args.records))
        log(f"produced {args.records:,} messages in {time.perf_counter() - t0:.1f} s")
        cat = toolkit.catalog(Path(tmp, "lakehouse"))
        cat.create_namespace("bench")
        spark = toolkit.spark_session(cat, **{"spark.master": "local[2]"})
        spark.sparkContext.setLogLevel("ERROR")
        url = kafka.url(TOPIC)

        def by_toolkit(table: str) -> None:
            q = toolkit.stream(url, table, cat, spark, trigger={"availableNow": True},
                               query_name=table.replace(".", "_"))
            q.awaitTermination()

        def by_plain_spark(table: str) -> None:
            with TopicReader(KafkaTopic.parse(url), f"plain-{table}") as reader:
                ranges = plan_ranges({}, reader.watermarks(), {})
                lines = [m.value.decode() for m in reader.read(ranges) if m.value]
            frame = spark.createDataFrame([(line,) for line in lines], "value string")
            df = spark.read.json(frame.rdd.map(lambda row: row[0]))
            df.writeTo(f"{cat.name}.{table}").create()

        times: dict[str, list[float]] = {"toolkit": [], "plain": []}
        by_toolkit("bench.warm_toolkit")  # a first job in a fresh JVM is slower
        by_plain_spark("bench.warm_plain")
        for i in range(args.repeat):
            order = [("toolkit", by_toolkit), ("plain", by_plain_spark)]
            for name, fn in order if i % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                fn(f"bench.{name}_{i}")
                times[name].append(time.perf_counter() - t0)
                log(f"{name} run {i}: {times[name][-1]:.2f} s")
        spark.stop()
    ours, plain = statistics.median(times["toolkit"]), statistics.median(times["plain"])
    ratio = ours / plain
    print(f"kafka: {args.records:,} messages; toolkit stream {ours:.2f} s "
          f"({args.records / ours:,.0f} msg/s), read + plain Spark append {plain:.2f} s "
          f"({args.records / plain:,.0f} msg/s)")
    print(f"ratio kafka = {ratio:.2f} (target <= {TARGET}): "
          f"{'PASS' if ratio <= TARGET else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
