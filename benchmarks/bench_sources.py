"""The toolkit ingesting typed sources (a Parquet file, a pandas frame) against plain Spark.

One Spark session (``local[2]``) on a fresh embedded catalog in a temporary folder; every
figure is a ratio of two times taken in this same run (absolute times on a shared machine
vary 1.2-2.4x between runs, see BASELINES.md). The records are N typed rows (a pandas
frame: ``id`` int64, ``n`` int32, ``f`` float32, ``amount`` float64, ``name`` string,
``at`` a UTC timestamp over one week from 2024-06-01, as ``benchmarks.generate`` spreads
its events), written once as a Parquet file. Timed, each into a table of its own:

1. Parquet: ``toolkit.ingest("x.parquet", ...)`` into a fresh table (profile + plan +
   commit + route + append) over a plain Spark append of the same file,
   ``spark.read.parquet(f).writeTo(t).append()``, into a table created beforehand with
   the file's schema.
2. pandas: ``toolkit.ingest(frame, ...)`` into a fresh table over a plain Spark append of
   the same frame, ``spark.createDataFrame(frame).writeTo(t).append()``, with Spark's
   Arrow conversion on (``spark.sql.execution.arrow.pyspark.enabled``, the conversion
   Spark documents for pandas); the same without Arrow (Spark's default) is shown for
   information.

Both paths are warmed first on a sample of the rows; the pairs then run ``--repeat``
times in alternating order and the medians are compared. No target yet: the two ratios
are printed as measured. Nothing here asserts on time; it only reports.

    python -m benchmarks --sources --records 50000
    python -m benchmarks --sources --repeat 3
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.bench_spark import (
    LOAD_WARNING,
    NAMESPACE,
    create_like,
    load_average,
    load_lines,
    med,
    split,
    table_text,
    timed,
)

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

WARMUP_ROWS = 10_000
ARROW = "spark.sql.execution.arrow.pyspark.enabled"
_START_US = 1_717_200_000_000_000  # 2024-06-01T00:00:00Z, as benchmarks.generate starts
_SPAN_US = 7 * 86_400_000_000  # one week
_NAMES = ("Berlin", "Paris", "New York", "Sao Paulo", "Tokyo", "Lagos", "Sydney", "Mumbai")
STEPS = ("profile", "plan+commit", "route+append")
#: a pandas DataFrame (pandas ships no type information mypy reads)
Frame = Any


def typed_frame(n: int, seed: int = 0) -> Frame:
    """``n`` typed rows as a pandas frame (built through Arrow, which gives each column
    its exact type); the same ``(n, seed)`` always gives the same frame."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    at = _START_US + np.arange(n, dtype="int64") * (_SPAN_US // max(n, 1))
    table = pa.table(
        {
            "id": np.arange(n, dtype="int64"),
            "n": rng.integers(-1_000_000, 1_000_000, n, dtype="int32"),
            "f": rng.random(n, dtype="float32") * np.float32(100),
            "amount": np.round(rng.random(n) * 500, 2),
            "name": pa.array(np.array(_NAMES, dtype=object)[rng.integers(0, len(_NAMES), n)],
                             type=pa.string()),
            "at": pa.array(at + rng.integers(0, 500_000, n), type=pa.timestamp("us", "UTC")),
        }
    )
    return table.to_pandas()


@dataclass
class Pair:
    """The timings of one toolkit path and its plain Spark counterpart."""

    toolkit: list[float] = field(default_factory=list)
    spark: list[float] = field(default_factory=list)
    steps: list[dict[str, float]] = field(default_factory=list)
    info: list[float] = field(default_factory=list)  # pandas without Arrow
    rows: int = 0
    routed_in: str = ""
    columns: str = ""

    @property
    def ratio(self) -> float:
        return med(self.toolkit) / med(self.spark)


@dataclass
class Runs:
    parquet: Pair = field(default_factory=Pair)
    pandas: Pair = field(default_factory=Pair)
    warmup: float = 0.0


def run_sources(
    spark: SparkSession,
    cat: Catalog,
    frame: Frame,
    path: Path,
    warm_frame: Frame,
    warm_path: Path,
    repeat: int,
    log: Callable[[str], None],
) -> Runs:
    import toolkit

    fq = f"{cat.name}.{NAMESPACE}"
    out = Runs()

    def plain_parquet(p: Path, table: str) -> None:
        spark.read.parquet(str(p)).writeTo(table).append()

    def plain_pandas(f: Frame, table: str, arrow: bool = True) -> None:
        spark.conf.set(ARROW, str(arrow).lower())
        try:
            spark.createDataFrame(f).writeTo(table).append()
        finally:
            spark.conf.set(ARROW, "true")

    def pandas_schema(f: Frame, arrow: bool = True) -> Any:
        spark.conf.set(ARROW, str(arrow).lower())
        try:
            return spark.createDataFrame(f.head(100)).schema
        finally:
            spark.conf.set(ARROW, "true")

    parquet_schema = spark.read.parquet(str(path)).schema
    arrow_schema, plain_schema = pandas_schema(frame), pandas_schema(frame, arrow=False)

    # Warm every path on the sample: JIT, Iceberg classes, Python workers (reused).
    t0 = time.perf_counter()
    toolkit.ingest(str(warm_path), f"{NAMESPACE}.warm_parquet_ingest", cat, spark)
    create_like(spark, f"{fq}.warm_parquet_append", parquet_schema)
    plain_parquet(warm_path, f"{fq}.warm_parquet_append")
    toolkit.ingest(warm_frame, f"{NAMESPACE}.warm_pandas_ingest", cat, spark)
    create_like(spark, f"{fq}.warm_pandas_append", arrow_schema)
    plain_pandas(warm_frame, f"{fq}.warm_pandas_append")
    create_like(spark, f"{fq}.warm_pandas_plain", plain_schema)
    plain_pandas(warm_frame, f"{fq}.warm_pandas_plain", arrow=False)
    out.warmup = time.perf_counter() - t0
    log(f"warm-up on {len(warm_frame):,} rows: {out.warmup:.1f} s")

    def ingest(pair: Pair, source: Any, name: str, what: str) -> float:
        with split() as steps:
            s, rep = timed(lambda: toolkit.ingest(source, name, cat, spark))
        pair.steps.append(dict(steps.seconds))
        pair.rows, pair.routed_in = rep.rows_written, str(rep.routed_in)
        pair.columns = ", ".join(
            f"{f.name} {f.field_type}" for f in cat.load_table(name).schema().fields
        )
        log(
            f"  {what}: {s:.2f} s ("
            + ", ".join(f"{k} {v:.2f} s" for k, v in steps.seconds.items())
            + f"), {rep.rows_written:,} rows, routed in {rep.routed_in}"
        )
        return s

    def plain(what: str, fn: Callable[[Any, str], None], source: Any, table: str) -> float:
        s = timed(lambda: fn(source, table))[0]
        log(f"  {what}: {s:.2f} s")
        return s

    for r in range(repeat):
        toolkit_first = r % 2 == 0
        log(f"#{r + 1}: {'toolkit' if toolkit_first else 'plain Spark'} first")
        pq_append, pd_append = f"{fq}.parquet_append_{r}", f"{fq}.pandas_append_{r}"
        create_like(spark, pq_append, parquet_schema)  # outside timing
        create_like(spark, pd_append, arrow_schema)
        pairs: list[tuple[Pair, Callable[[], float], Callable[[], float]]] = [
            (
                out.parquet,
                partial(ingest, out.parquet, str(path), f"{NAMESPACE}.parquet_ingest_{r}",
                        "toolkit.ingest(x.parquet)"),
                partial(plain, "spark.read.parquet -> append", plain_parquet, path, pq_append),
            ),
            (
                out.pandas,
                partial(ingest, out.pandas, frame, f"{NAMESPACE}.pandas_ingest_{r}",
                        "toolkit.ingest(frame)"),
                partial(plain, "spark.createDataFrame(frame) (Arrow) -> append",
                        plain_pandas, frame, pd_append),
            ),
        ]
        for pair, mine, theirs in pairs:
            for fn in (mine, theirs) if toolkit_first else (theirs, mine):
                (pair.toolkit if fn is mine else pair.spark).append(fn())
        info = f"{fq}.pandas_plain_{r}"
        create_like(spark, info, plain_schema)
        out.pandas.info.append(plain(
            "spark.createDataFrame(frame) (no Arrow, info) -> append",
            partial(plain_pandas, arrow=False), frame, info,
        ))
    return out


def report(
    n: int,
    size: int,
    repeat: int,
    runs: Runs,
    load0: tuple[float, float, float],
    load1: tuple[float, float, float],
    setup_s: float,
) -> str:
    import pyiceberg
    import pyspark

    head = (
        f"{n:,} typed records (id int64, n int32, f float32, amount float64, name string, "
        f"at timestamp; Parquet {size / 1e6:.1f} MB), median of {repeat}; "
        f"Python {platform.python_version()}, pyspark {pyspark.__version__}, "
        f"pyiceberg {pyiceberg.__version__}, local[2] on {os.cpu_count()} cores\n"
        f"Spark session + catalog + warm-up: {setup_s:.1f} s; ingest wrote "
        f"{runs.parquet.rows:,} rows (Parquet, routed in {runs.parquet.routed_in}) and "
        f"{runs.pandas.rows:,} rows (pandas, routed in {runs.pandas.routed_in}) per run\n"
        f"table from Parquet: {runs.parquet.columns}\n"
        f"table from pandas:  {runs.pandas.columns}"
    )

    def row(name: str, s: float, base: float | None = None, rate: bool = True) -> list[str]:
        return [
            name,
            f"{s:.2f}",
            f"{n / s:,.0f}" if rate and s else "-",
            "-" if base is None else f"{s / base:.2f}",
        ]

    rows = [["measurement", "median s", "records/s", "ratio"]]
    for pair, plain, mine in (
        (runs.parquet, "spark.read.parquet(f) -> iceberg append", 'toolkit.ingest("x.parquet")'),
        (runs.pandas, "spark.createDataFrame(frame), Arrow -> iceberg append",
         "toolkit.ingest(frame)"),
    ):
        base, total = med(pair.spark), med(pair.toolkit)
        rows.append(row(plain, base))
        rows.append(row(f"{mine} (fresh table)", total, base))
        step = {k: med([s.get(k, 0.0) for s in pair.steps]) for k in STEPS}
        rows.append(row("     profile (observe_on_spark)", step["profile"], total, rate=False))
        rows.append(row("     plan + commit (create table)", step["plan+commit"], total,
                        rate=False))
        rows.append(row("     route + append (write_batch)", step["route+append"], total,
                        rate=False))
        rows.append(row("     other (source, dataframe, refresh)",
                        total - sum(step.values()), total, rate=False))
        if pair.info:
            rows.append(row("   spark.createDataFrame(frame), no Arrow (Spark's default; info)",
                            med(pair.info), base))

    tail = [
        f"ratio sources/parquet-ingest = {runs.parquet.ratio:.2f} (no target yet: measured)",
        f"ratio sources/pandas-ingest = {runs.pandas.ratio:.2f} (no target yet: measured)",
        *load_lines(load0, load1),
    ]
    return "\n".join([head, "", *table_text(rows), "", *tail])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks --sources", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--records", type=int, default=200_000, help="records (default 200000)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs, median (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--quiet", action="store_true", help="print only the final table")
    args = ap.parse_args(argv)
    if args.records < 1 or args.repeat < 1:
        ap.error("--records and --repeat must be >= 1")

    def log(s: str) -> None:
        if not args.quiet:
            print(f"[{time.strftime('%H:%M:%S')}] {s}", file=sys.stderr, flush=True)

    load0 = load_average()
    log("load average at start: " + "/".join(f"{x:.2f}" for x in load0))
    if load0[0] > LOAD_WARNING:
        log(f"WARNING: load average {load0[0]:.2f} > {LOAD_WARNING}: the machine is busy")

    import toolkit

    with tempfile.TemporaryDirectory(prefix="bench-sources-") as tmp:
        t0 = time.perf_counter()
        frame = typed_frame(args.records, args.seed)
        step = max(1, args.records // WARMUP_ROWS)
        warm_frame = frame.iloc[::step].reset_index(drop=True)  # a sample of every part
        path, warm_path = Path(tmp, "typed.parquet"), Path(tmp, "warm.parquet")
        frame.to_parquet(path, index=False)
        warm_frame.to_parquet(warm_path, index=False)
        size = path.stat().st_size
        log(f"generated {args.records:,} rows, {path} ({size / 1e6:.1f} MB) in "
            f"{time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        cat = toolkit.catalog(Path(tmp, "lakehouse"))
        cat.create_namespace(NAMESPACE)
        spark = toolkit.spark_session(cat, **{"spark.master": "local[2]", ARROW: "true"})
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()
        ready = time.perf_counter() - t0
        log(f"Spark session ready in {ready:.1f} s")
        try:
            runs = run_sources(spark, cat, frame, path, warm_frame, warm_path, args.repeat, log)
            load1 = load_average()
            print(report(args.records, size, args.repeat, runs, load0, load1,
                         ready + runs.warmup))
        finally:
            spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
