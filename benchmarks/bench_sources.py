"""The toolkit ingesting typed sources (Parquet and ORC files, a typed Spark DataFrame, a
pandas frame) against plain Spark (issue 29).

One Spark session (``local[2]``) on a fresh embedded catalog in a temporary folder; every
figure is a ratio of two times taken in this same run (absolute times on a shared machine
vary 1.2-2.4x between runs, see BASELINES.md). The records are N typed rows (a pandas
frame: ``id`` int64, ``n`` int32, ``f`` float32, ``amount`` float64, ``name`` string,
``at`` a UTC timestamp over one week from 2024-06-01, as ``benchmarks.generate`` spreads
its events), written once as a Parquet and an ORC file. Timed, each into a table of its
own, against a plain Spark append of the same data into a table created beforehand:

1. Parquet, ORC, a typed DataFrame (``spark.read.parquet(f)``, as another job hands one
   over): ``toolkit.ingest`` into a fresh table (profile + plan + commit + route +
   append; target <= 1.3), and into a table that already holds the source's kinds (the
   steady state, the table ingested once before outside timing; target <= 1.15), over
   the same rows cast to the toolkit's types and appended
   (``spark.read.<format>(f).select(...).writeTo(t).append()``; ``df.select(...)``), and,
   for information, over ``spark.read.<format>(f).writeTo(t).append()`` into a table of
   the source's own types.
2. pandas: ``toolkit.ingest(frame)`` into a fresh table over
   ``spark.createDataFrame(frame).writeTo(t).append()`` with Spark's Arrow conversion on
   (``spark.sql.execution.arrow.pyspark.enabled``; target <= 1.3); the same without
   Arrow (Spark's default) is shown for information.

Each target is checked against a plain append of the same data into a table of the same
column types: RULES 1 stores an int32 column as a long and a float32 as a double, and
Spark's own cast-and-append into those types costs 1.1-1.2x its append of the narrower
types (measured here: 1.01-1.48 over five runs at 200,000 rows, 1.18 at a million), a
cost no toolkit work can take off. So the baseline of the verdicts is
``spark.read.<format>(f).select(<casts>).writeTo(t).append()`` into a table of the
toolkit's types, timed in the same alternating runs; the ratio over the append of the
source's own types is printed too, as information (``info`` lines). A pandas frame's
baseline stays Spark's own ``createDataFrame`` with Arrow, into the frame's types.

Every path is warmed first on a sample of the rows (the steady state's one pass and the
casts into the toolkit's types too); the pairs then run ``--repeat`` times in alternating
order. Each run gives a ratio, and the median of the runs' ratios is printed as
``ratio sources/NAME = X (target <= Y): PASS|MISS`` with each run's ratio and the median
times. Nothing here asserts on time; it only reports.

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


def write_orc(frame: Frame, path: Path) -> None:
    """The frame as an ORC file (pyarrow's writer)."""
    import pyarrow as pa
    import pyarrow.orc as po

    table = pa.Table.from_pandas(frame, preserve_index=False)
    # Spark reads no ORC "timestamp with local time zone": the UTC wall clock, zoneless
    at = table.column("at").cast(pa.timestamp("us"))
    po.write_table(table.set_column(table.schema.get_field_index("at"), "at", at), path)


@dataclass
class Pair:
    """The timings of one toolkit path and its plain Spark counterpart."""

    name: str
    target: float
    toolkit_what: str
    plain_what: str
    toolkit: list[float] = field(default_factory=list)
    spark: list[float] = field(default_factory=list)
    steps: list[dict[str, float]] = field(default_factory=list)
    info: list[float] = field(default_factory=list)  # pandas without Arrow
    #: the plain append again, into a table of the toolkit's types (RULES 1: int32 and
    #: float32 columns become long and double), with the casts that take the rows there:
    #: the baseline of the verdict (what is left over it is the toolkit's own work)
    typed: list[float] = field(default_factory=list)
    rows: int = 0
    routed_in: str = ""
    columns: str = ""

    @property
    def base(self) -> list[float]:
        """The baseline of the verdict: the append into a table of the toolkit's types
        where it was timed (a file or a DataFrame), else the plain append."""
        return self.typed or self.spark

    @property
    def ratios(self) -> list[float]:
        """Each run's ratio: the toolkit over its baseline, timed next to each other."""
        return [t / s for t, s in zip(self.toolkit, self.base, strict=True)]

    @property
    def ratio(self) -> float:
        """The median of the runs' ratios, as ``bench_stream`` and ``bench_coldstart``
        take theirs: a pair timed side by side shares the machine's speed of the moment,
        which drifts from one run to the next."""
        return med(self.ratios)

    def lines(self) -> list[str]:
        """``ratio NAME = X (target <= Y): PASS|MISS`` with the repetitions, and the
        ratio over the append of the source's own types (information) where the verdict's
        baseline is another."""
        verdict = "PASS" if self.ratio <= self.target else "MISS"
        each = ", ".join(f"{r:.2f}" for r in self.ratios)
        over = " (the same rows into the toolkit's types)" if self.typed else ""
        out = [f"ratio sources/{self.name} = {self.ratio:.2f} (target <= {self.target}): "
               f"{verdict}  (runs: {each}; medians {med(self.toolkit):.2f} s / "
               f"{med(self.base):.2f} s{over})"]
        if self.typed:
            own = med(self.toolkit) / med(self.spark)
            cast = med(self.typed) / med(self.spark)
            out.append(f"info sources/{self.name} over an append of the source's own types "
                       f"= {own:.2f} (Spark's own cast into the toolkit's types: {cast:.2f}; "
                       f"medians {med(self.toolkit):.2f} s / {med(self.spark):.2f} s)")
        return out


#: Issue 29's targets: a typed source into a fresh table, and into a table that already
#: holds its kinds (the steady state), over a plain Spark append of the same data
FRESH, STEADY = 1.3, 1.15


def cast_into(df: Any, table: str, schema: Any) -> None:
    """Plain Spark's append of ``df``'s rows cast into ``schema``, the toolkit's types."""
    from pyspark.sql import functions as F

    df.select(*(F.col(f.name).cast(f.dataType).alias(f.name)
                for f in schema.fields)).writeTo(table).append()


@dataclass
class Runs:
    pairs: list[Pair] = field(default_factory=list)
    warmup: float = 0.0


#: the steps of ``ingest`` timed apart: each is the Python path's function or the columnar
#: path's (``toolkit.pipeline.typed``), whichever ran
_STEP_GLOBALS = {"profile (columnar)": "observe_columnar",
                 "route+append (columnar)": "write_columnar",
                 "one pass": "write_columnar_one_pass"}


def _steps(seconds: dict[str, float]) -> dict[str, float]:
    return {
        "profile": seconds.get("profile", 0.0) + seconds.get("profile (columnar)", 0.0),
        "plan+commit": seconds.get("plan+commit", 0.0),
        # the steady state's one pass profiles while it routes and appends
        "route+append": seconds.get("route+append", 0.0)
        + seconds.get("route+append (columnar)", 0.0) + seconds.get("one pass", 0.0),
    }


def run_sources(
    spark: SparkSession,
    cat: Catalog,
    frame: Frame,
    path: Path,
    warm_frame: Frame,
    warm_path: Path,
    repeat: int,
    log: Callable[[str], None],
    orc: Path | None = None,
    warm_orc: Path | None = None,
) -> Runs:
    import toolkit

    fq = f"{cat.name}.{NAMESPACE}"
    out = Runs()
    orc = orc or path.with_suffix(".orc")
    warm_orc = warm_orc or warm_path.with_suffix(".orc")

    def plain_file(fmt: str, p: Path, table: str) -> None:
        spark.read.format(fmt).load(str(p)).writeTo(table).append()

    def plain_frame(df: Any, table: str) -> None:
        df.writeTo(table).append()

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
    orc_schema = spark.read.orc(str(orc)).schema
    arrow_schema, plain_schema = pandas_schema(frame), pandas_schema(frame, arrow=False)
    typed_df = spark.read.parquet(str(path))  # a typed DataFrame another job hands over

    # Warm every path on the sample: JIT, Iceberg classes, Python workers (reused), the
    # code Spark generates for each plan. A second ingest into the same table is the
    # steady state's one pass, a plan of its own; the casts into the toolkit's types are
    # the plain appends' baseline.
    t0 = time.perf_counter()
    for src, name in ((str(warm_path), "parquet"), (str(warm_orc), "orc"),
                      (warm_frame, "pandas"), (spark.read.parquet(str(warm_path)), "df")):
        for _ in range(2):
            toolkit.ingest(src, f"{NAMESPACE}.warm_{name}_ingest", cat, spark)
    for fmt, p, schema in (("parquet", warm_path, parquet_schema), ("orc", warm_orc, orc_schema)):
        create_like(spark, f"{fq}.warm_{fmt}_append", schema)
        plain_file(fmt, p, f"{fq}.warm_{fmt}_append")
        kinds = spark.table(f"{cat.name}.{NAMESPACE}.warm_{fmt}_ingest").schema
        create_like(spark, f"{fq}.warm_{fmt}_typed", kinds)
        cast_into(spark.read.format(fmt).load(str(p)), f"{fq}.warm_{fmt}_typed", kinds)
    create_like(spark, f"{fq}.warm_pandas_append", arrow_schema)
    plain_pandas(warm_frame, f"{fq}.warm_pandas_append")
    create_like(spark, f"{fq}.warm_pandas_plain", plain_schema)
    plain_pandas(warm_frame, f"{fq}.warm_pandas_plain", arrow=False)
    out.warmup = time.perf_counter() - t0
    log(f"warm-up on {len(warm_frame):,} rows: {out.warmup:.1f} s")

    def ingest(pair: Pair, source: Any, name: str) -> float:
        with split(_STEP_GLOBALS) as steps:
            s, rep = timed(lambda: toolkit.ingest(source, name, cat, spark))
        pair.steps.append(_steps(steps.seconds))
        pair.rows, pair.routed_in = rep.rows_written, str(rep.routed_in)
        pair.columns = ", ".join(
            f"{f.name} {f.field_type}" for f in cat.load_table(name).schema().fields
        )
        log(
            f"  {pair.toolkit_what}: {s:.2f} s ("
            + ", ".join(f"{k} {v:.2f} s" for k, v in pair.steps[-1].items())
            + f"), {rep.rows_written:,} rows, routed in {rep.routed_in}"
        )
        return s

    def plain(pair: Pair, fn: Callable[[], None]) -> float:
        s = timed(fn)[0]
        log(f"  {pair.plain_what}: {s:.2f} s")
        return s

    sources: list[tuple[str, str, Any, str, Any, Callable[[str], None]]] = [
        # (name, what, toolkit source, plain what, plain schema, plain append into a table)
        ("parquet", 'toolkit.ingest("x.parquet")', str(path), "spark.read.parquet -> append",
         parquet_schema, partial(plain_file, "parquet", path)),
        ("orc", 'toolkit.ingest("x.orc")', str(orc), "spark.read.orc -> append", orc_schema,
         partial(plain_file, "orc", orc)),
        ("dataframe", "toolkit.ingest(typed DataFrame)", typed_df, "df.writeTo -> append",
         parquet_schema, partial(plain_frame, typed_df)),
    ]
    # the sources as plain Spark reads them, for the appends into the toolkit's types
    frames: dict[str, Callable[[], Any]] = {
        "parquet": lambda: spark.read.parquet(str(path)),
        "orc": lambda: spark.read.orc(str(orc)),
        "dataframe": lambda: typed_df,
    }

    def plain_typed(name: str, table: str, schema: Any) -> None:
        cast_into(frames[name](), table, schema)

    def cast_plain(pair: Pair, name: str, table: str, schema: Any) -> float:
        s = timed(lambda: plain_typed(name, table, schema))[0]
        log(f"  {pair.plain_what}, into the toolkit's types: {s:.2f} s")
        return s

    for name, what, _, plain_what, _, _ in sources:
        out.pairs.append(Pair(f"{name}-fresh", FRESH, f"{what} (fresh table)", plain_what))
        out.pairs.append(Pair(f"{name}-steady", STEADY, f"{what} (holds its kinds)",
                              f"{plain_what} (a table holding rows)"))
    pandas_pair = Pair("pandas-fresh", FRESH, "toolkit.ingest(frame) (fresh table)",
                       "spark.createDataFrame(frame) (Arrow) -> append")
    out.pairs.append(pandas_pair)
    by_name = {p.name: p for p in out.pairs}

    for r in range(repeat):
        toolkit_first = r % 2 == 0
        log(f"#{r + 1}: {'toolkit' if toolkit_first else 'plain Spark'} first")
        # (pair, the toolkit, the plain append, the plain append into the toolkit's types)
        todo: list[tuple[Pair, Callable[[], float], Callable[[], float],
                         Callable[[], float] | None]] = []
        for name, _, source, _, schema, append in sources:
            # the steady state: a table that already holds this source's kinds (and rows)
            steady_t, steady_p = f"{NAMESPACE}.{name}_steady_{r}", f"{fq}.{name}_held_{r}"
            toolkit.ingest(source, steady_t, cat, spark)  # outside timing
            create_like(spark, steady_p, schema)
            append(steady_p)
            # the toolkit's types, as its table of these rows has them
            kinds = spark.table(f"{cat.name}.{steady_t}").schema
            for pair, t, p, held in ((by_name[f"{name}-fresh"],
                                      f"{NAMESPACE}.{name}_ingest_{r}",
                                      f"{fq}.{name}_append_{r}", False),
                                     (by_name[f"{name}-steady"], steady_t, steady_p, True)):
                if not held:
                    create_like(spark, p, schema)  # outside timing
                typed_p = f"{p}_typed"
                create_like(spark, typed_p, kinds)
                if held:
                    plain_typed(name, typed_p, kinds)
                todo.append((pair, partial(ingest, pair, source, t),
                             partial(plain, pair, partial(append, p)),
                             partial(cast_plain, pair, name, typed_p, kinds)))
        pd_append = f"{fq}.pandas_append_{r}"
        create_like(spark, pd_append, arrow_schema)
        todo.append((pandas_pair,
                     partial(ingest, pandas_pair, frame, f"{NAMESPACE}.pandas_ingest_{r}"),
                     partial(plain, pandas_pair, partial(plain_pandas, frame, pd_append)),
                     None))
        for pair, mine, theirs, cast in todo:
            runs = [(pair.toolkit, mine), (pair.spark, theirs)]
            if cast is not None:
                runs.append((pair.typed, cast))
            for into, fn in runs if toolkit_first else runs[::-1]:
                into.append(fn())
        info = f"{fq}.pandas_plain_{r}"
        create_like(spark, info, plain_schema)
        t = timed(lambda: plain_pandas(frame, info, arrow=False))[0]  # noqa: B023
        log(f"  spark.createDataFrame(frame) (no Arrow, info) -> append: {t:.2f} s")
        pandas_pair.info.append(t)
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
        f"Spark session + catalog + warm-up: {setup_s:.1f} s; routed in: "
        + ", ".join(f"{p.name} {p.routed_in}" for p in runs.pairs) + "\n"
        + "\n".join(sorted({f"table from {p.name.split('-')[0]}: {p.columns}"
                            for p in runs.pairs}))
    )

    def row(name: str, s: float, base: float | None = None, rate: bool = True) -> list[str]:
        return [
            name,
            f"{s:.2f}",
            f"{n / s:,.0f}" if rate and s else "-",
            "-" if base is None else f"{s / base:.2f}",
        ]

    rows = [["measurement", "median s", "records/s", "ratio"]]
    for pair in runs.pairs:
        base, total = med(pair.spark), med(pair.toolkit)
        rows.append(row(pair.plain_what, base))
        rows.append(row(pair.toolkit_what, total, base))
        step = {k: med([s.get(k, 0.0) for s in pair.steps]) for k in STEPS}
        rows.append(row("     profile", step["profile"], total, rate=False))
        rows.append(row("     plan + commit", step["plan+commit"], total, rate=False))
        rows.append(row("     route + append (one pass: with the profile)",
                        step["route+append"], total, rate=False))
        rows.append(row("     other (source, dataframe, refresh)",
                        total - sum(step.values()), total, rate=False))
        if pair.typed:
            rows.append(row("   the same, into the toolkit's types, cast (the verdict's base)",
                            med(pair.typed), base))
            rows.append(row("   toolkit over that", total, med(pair.typed)))
        if pair.info:
            rows.append(row("   spark.createDataFrame(frame), no Arrow (Spark's default; info)",
                            med(pair.info), base))

    tail = [*(line for p in runs.pairs for line in p.lines()), *load_lines(load0, load1)]
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
        write_orc(frame, path.with_suffix(".orc"))
        write_orc(warm_frame, warm_path.with_suffix(".orc"))
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
