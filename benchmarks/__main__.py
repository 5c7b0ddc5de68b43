"""``python -m benchmarks``: the pure-engine benchmark (:mod:`benchmarks.bench_simulate`);
``python -m benchmarks --spark``: the toolkit on Spark and Iceberg against plain Spark
and plain PyIceberg (:mod:`benchmarks.bench_spark`); ``python -m benchmarks --sources``:
typed sources (a Parquet file, a pandas frame) against plain Spark
(:mod:`benchmarks.bench_sources`); ``python -m benchmarks --stream``: ingest in the steady
state, over 200 batches and at 4M records, against plain appends
(:mod:`benchmarks.bench_stream`); ``python -m benchmarks --kafka``: a Kafka topic through
``toolkit.stream`` against the same client and plain Spark (:mod:`benchmarks.bench_kafka`);
``python -m benchmarks --coldstart``: a fresh process to its first commit, against plain
Spark (:mod:`benchmarks.bench_coldstart`).
Other options go to the chosen one."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--spark" in args:
        args.remove("--spark")
        from benchmarks.bench_spark import main as spark_main

        return spark_main(args)
    if "--stream" in args:
        args.remove("--stream")
        from benchmarks.bench_stream import main as stream_main

        return stream_main(args)
    if "--kafka" in args:
        args.remove("--kafka")
        from benchmarks.bench_kafka import main as kafka_main

        return kafka_main(args)
    if "--coldstart" in args:
        args.remove("--coldstart")
        from benchmarks.bench_coldstart import main as coldstart_main

        return coldstart_main(args)
    if "--sources" in args:
        args.remove("--sources")
        from benchmarks.bench_sources import main as sources_main

        return sources_main(args)
    from benchmarks.bench_simulate import main as simulate_main

    return simulate_main(args)


raise SystemExit(main())
