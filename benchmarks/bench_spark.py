"""The toolkit on Spark and Iceberg against plain Spark and plain PyIceberg, in one run.

One Spark session (``local[2]``) on a fresh embedded catalog in a temporary folder; every
figure that is judged is a ratio of two times taken in this same run (absolute times on a
shared machine vary 1.2-2.4x between runs, see BASELINES.md):

1. profiling: ``observe_on_spark`` (exact per-type tally inside the JVM when the tally jar
   is loaded, toolkit/spark/jvm/Tally.java; else in Spark's Python workers) over
   ``spark.read.json(f).schema`` (Spark's full schema inference): target <= 1.0.
2. ingest: ``toolkit.ingest(f, ...)`` into a fresh table (profile + plan + commit + route +
   append) over a plain Spark Iceberg append of the same file with its schema known
   (``spark.read.schema(s).json(f).writeTo(t).append()``, ``s`` the schema Spark inferred,
   the table created with it beforehand): target <= 1.5. Ingest's own split is read by
   wrapping the three steps ``ingest`` calls (in this process only; nothing is changed).
3. commit: ``commit_plan`` of a drift plan over PyIceberg's ``update_schema()`` adding the
   same columns with the same docs to an identical table (median of several pairs): target
   <= 1.2; and the growth on one table over 100 successive one-column commits, 100th / 1st:
   target <= 2.0 (raw PyIceberg, Spark's ``ALTER TABLE`` and ``commit_plan`` keeping every
   schema version measured alongside). ``--commits-only`` runs this part alone.
4. data growth: one table fed 100 successive ``toolkit.ingest`` batches of 300 records,
   with a schema change every 10th batch (a new field; the 100th also retypes one), after
   5 warm-up batches on another table, and maintained (``toolkit.maintain`` after every
   10th batch, keeping the last 10 snapshots, as a long-lived stream is run); median
   ingest time of batches 96-100 over that of batches 1-5: target <= 2.0. Printed
   alongside: the same never maintained, the harshest case (a schema change in every
   batch) maintained and not, a fresh table as wide as that case's 100th batch, the split
   per step, and the size of the tables' metadata files.
   ``--data-growth-only`` runs this part alone, ``--no-data-growth`` skips it.

The records are ``benchmarks.generate.records(N, seed)`` written once as JSON lines; with
``--keep-data DIR`` the file is kept in ``DIR`` (keyed by N and seed) and reused.

    python -m benchmarks --spark --records 100000
    python -m benchmarks --spark --keep-data /tmp/bench-data --repeat 3 --profile 25

Nothing here asserts on time; it only reports.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import functools
import io
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.generate import records, to_jsonl, write_jsonl

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from toolkit.core.evolution.batch_plan import Plan

TARGET_PROFILE = 1.0
TARGET_INGEST = 1.5
TARGET_COMMIT = 1.2
TARGET_GROWTH = 2.0
LOAD_WARNING = 1.5
NAMESPACE = "bench"
COMMIT_PAIRS = 15  # toolkit / raw PyIceberg commit pairs, median
GROWTH_STEPS = 100
GROWTH_SHOWN = (1, 10, 50, 100)
#: data growth: tables fed DATA_BATCHES ingest batches of DATA_ROWS records each, after
#: DATA_WARMUP batches on a table of their own. The target's scenario is the issue's: data
#: batches with a schema change every DATA_CHANGE_EVERY-th (a new field; every 10th change
#: also retypes the previous change's field), on a table maintained as a long-lived stream
#: is: ``toolkit.maintain`` after every DATA_MAINTAIN_EVERY batches, what
#: ``toolkit.stream(..., maintain_every=10, maintenance=DATA_MAINTENANCE)`` does (its time is
#: printed apart). Printed alongside, without a target: the same never maintained, and the
#: harshest case (a schema change in every batch, so the table gains a column per batch),
#: maintained and not, with a width control: a fresh table as wide as its 100th batch.
DATA_BATCHES = 100
DATA_ROWS = 300
DATA_WARMUP = 5
DATA_SHOWN = (1, 10, 50, 100)
DATA_CHANGE_EVERY = 10
DATA_MAINTAIN_EVERY = 10
DATA_MAINTENANCE: dict[str, Any] = {"older_than": dt.timedelta(0),
                                    "retain_last": DATA_MAINTAIN_EVERY}
#: Both paths are warmed on the same small file first, a sample of the whole stream: Spark
#: generates and compiles code per schema, and a warm-up on the stream's start alone (no
#: drift yet) would leave the timed run's classes cold.
WARMUP_LINES = 20_000
PROFILE_LINES = 20_000


# --------------------------------------------------------------------------- helpers


def load_average() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # not on every platform
        return (float("nan"),) * 3


def data_file(folder: Path, n: int, seed: int, log: Callable[[str], None]) -> Path:
    """The JSON-lines file of ``records(n, seed)`` in ``folder``, generated only if missing."""
    path = folder / f"drift-n{n}-seed{seed}.jsonl"
    if path.is_file() and path.stat().st_size > 0:
        log(f"reusing {path} ({path.stat().st_size / 1e6:.0f} MB)")
        return path
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    part = path.with_name(path.name + ".part")
    write_jsonl(part, n, seed)
    part.replace(path)  # a crash mid-write never leaves a truncated file behind the key
    mb = path.stat().st_size / 1e6
    log(f"generated {path} ({mb:.0f} MB) in {time.perf_counter() - t0:.1f} s")
    return path


def sample_file(src: Path, dst: Path, lines: int, total: int) -> Path:
    """Every k-th line of ``src``, about ``lines`` of them: a sample of the whole stream, so
    the warm-up meets the drift (and the schema) of the timed run, not only its start."""
    step = max(1, total // lines)
    with open(src, "rb") as f, open(dst, "wb") as out:
        for i, line in enumerate(f):
            if i % step == 0:
                out.write(line)
    return dst


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def load_lines(
    load0: tuple[float, float, float], load1: tuple[float, float, float]
) -> list[str]:
    """The load averages at start and end of a run, and a warning when the machine was
    busy (the ratios are then less reliable)."""
    return [
        "load average (1/5/15 min) at start " + "/".join(f"{x:.2f}" for x in load0)
        + ", at end " + "/".join(f"{x:.2f}" for x in load1),
        *(
            f"WARNING: load average {when} {lv[0]:.2f} > {LOAD_WARNING}: the machine is "
            "shared and busy; ratios are less reliable"
            for when, lv in (("at start", load0), ("at end", load1))
            if lv[0] > LOAD_WARNING
        ),
    ]


def verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "MISS"


def table_text(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i]) for i, c in enumerate(r))
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


@dataclass
class Split:
    """Seconds inside each step ``ingest`` calls, read by wrapping them (see :func:`split`)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def clocked(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0

        return clocked


@contextlib.contextmanager
def split(extra: dict[str, str] | None = None) -> Iterator[Split]:
    """Time ``observe_on_spark``, ``_plan_and_commit`` and ``write_batch`` inside ``ingest``
    (module globals of ``toolkit.pipeline.ingest``, looked up at call time), and the
    ``extra`` ones (step name: global's name), then restore them."""
    from toolkit.pipeline import ingest as pipeline

    s = Split()
    steps = {
        "profile": "observe_on_spark",
        "plan+commit": "_plan_and_commit",
        "route+append": "write_batch",
        **(extra or {}),
    }
    saved = {attr: getattr(pipeline, attr) for attr in steps.values()}
    try:
        for name, attr in steps.items():
            setattr(pipeline, attr, s.wrap(name, saved[attr]))
        yield s
    finally:
        for attr, fn in saved.items():
            setattr(pipeline, attr, fn)


# --------------------------------------------------------------------------- Spark side


def create_like(spark: SparkSession, name: str, schema: StructType) -> None:
    """An empty Iceberg table with exactly this Spark schema (created through Spark)."""
    spark.catalog.createTable(name, source="iceberg", schema=schema)


def spark_append(spark: SparkSession, path: Path, schema: StructType, name: str) -> float:
    """Seconds of a plain Spark append of the JSON file with its schema known."""
    return timed(lambda: spark.read.schema(schema).json(str(path)).writeTo(name).append())[0]


@dataclass
class SparkRuns:
    infer: list[float] = field(default_factory=list)
    observe: list[float] = field(default_factory=list)
    ingest: list[float] = field(default_factory=list)
    steps: list[dict[str, float]] = field(default_factory=list)
    append: list[float] = field(default_factory=list)
    append_toolkit_schema: list[float] = field(default_factory=list)
    ingest_columns: int = 0
    inferred_columns: int = 0
    rows_written: int = 0
    spark_schema: Any = None  # the table ingest created, as Spark sees it
    table_schema: Any = None  # the same in the core's model
    warmup: float = 0.0
    breakdown: dict[str, list[float]] = field(default_factory=dict)


def run_spark(
    spark: SparkSession,
    cat: Catalog,
    path: Path,
    repeat: int,
    warm: Path,
    log: Callable[[str], None],
    breakdown: bool = False,
) -> SparkRuns:
    import toolkit
    from toolkit.iceberg.schema import from_iceberg
    from toolkit.spark.batches import observe_on_spark

    opts = toolkit.make_options()
    fq = f"{cat.name}.{NAMESPACE}"
    out = SparkRuns()

    def observe(p: Path) -> Any:
        return observe_on_spark(spark.read.text(str(p)), "json", opts, 0)

    def infer(p: Path) -> StructType:
        return spark.read.json(str(p)).schema

    # Warm both paths on a small file: JIT, Iceberg classes, Python workers (reused).
    from toolkit.spark.tally import jvm_tally_ready

    where = "the JVM (toolkit.spark.tally)" if jvm_tally_ready(spark) else "Python workers"
    log(f"profiling tallies JSON lines in {where}")
    t0 = time.perf_counter()
    observe(warm)
    warm_schema = infer(warm)
    toolkit.ingest(warm, f"{NAMESPACE}.warm_ingest", cat, spark)
    create_like(spark, f"{fq}.warm_append", warm_schema)
    spark_append(spark, warm, warm_schema, f"{fq}.warm_append")
    out.warmup = time.perf_counter() - t0
    log(f"warm-up on {WARMUP_LINES} lines: {out.warmup:.1f} s")

    for r in range(repeat):
        # 1. profiling, alternating which goes first
        order = ("infer", "observe") if r % 2 == 0 else ("observe", "infer")
        for what in order:
            if what == "infer":
                s, schema = timed(lambda: infer(path))
                out.infer.append(s)
                out.inferred_columns = len(schema.fields)
            else:
                s, seen = timed(lambda: observe(path))
                out.observe.append(s)
                if seen.summary.rows:
                    log(f"  observe: {seen.summary.rows:,} rows")
            log(f"#{r + 1} {what}: {s:.2f} s")

        # 2. ingest into a fresh table, and the plain append of the same file
        ingest_name = f"{NAMESPACE}.ingest_{r}"
        append_name = f"{fq}.append_{r}"
        create_like(spark, append_name, schema)  # Spark's own inferred schema, outside timing
        order = ("ingest", "append") if r % 2 == 0 else ("append", "ingest")
        for what in order:
            if what == "ingest":
                with split() as steps:
                    s, rep = timed(lambda n=ingest_name: toolkit.ingest(path, n, cat, spark))
                out.ingest.append(s)
                out.steps.append(dict(steps.seconds))
                out.rows_written = rep.rows_written
                log(
                    f"#{r + 1} ingest: {s:.2f} s ("
                    + ", ".join(f"{k} {v:.2f} s" for k, v in steps.seconds.items())
                    + f"), {rep.rows_written:,} rows; {len(rep.plan.changes)} columns planned"
                )
            else:
                s = spark_append(spark, path, schema, append_name)
                out.append.append(s)
                log(f"#{r + 1} spark append (inferred schema): {s:.2f} s")

        # informational: Spark's JSON reader straight into the toolkit's columns
        spark_schema = spark.table(f"{cat.name}.{ingest_name}").schema
        info_name = f"{fq}.append_toolkit_schema_{r}"
        create_like(spark, info_name, spark_schema)
        s = spark_append(spark, path, spark_schema, info_name)
        out.append_toolkit_schema.append(s)
        log(f"#{r + 1} spark append (toolkit's schema, info): {s:.2f} s")

        out.spark_schema = spark_schema
        out.table_schema = from_iceberg(cat.load_table(ingest_name).schema())
        out.ingest_columns = len(spark_schema.fields)
        if breakdown:
            for name, s in breakdown_passes(spark, path, schema, spark_schema, out.table_schema):
                out.breakdown.setdefault(name, []).append(s)
                log(f"#{r + 1} {name}: {s:.2f} s")
    return out


# --------------------------------------------------------------------------- breakdown


def _count_rows() -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A worker function that only receives the Arrow chunks (nested: Spark's cloudpickle
    ships it by value, so workers need not import this module)."""

    def count(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        n = sum(b.num_rows for b in batches)
        yield pa.RecordBatch.from_pydict({"n": [n]})

    return count


def _parse_rows() -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A worker function that parses every line as the toolkit does, and nothing more."""

    def parse(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from toolkit.core.values.jsonlines import parse_line

        n = 0
        for b in batches:
            for line in b.column(0).to_pylist():
                if line:
                    parse_line(line)
                    n += 1
        yield pa.RecordBatch.from_pydict({"n": [n]})

    return parse


def breakdown_passes(
    spark: SparkSession, path: Path, inferred: StructType, spark_schema: StructType, schema: Any
) -> Iterator[tuple[str, float]]:
    """Extra full passes that split the toolkit's Spark steps: what Python workers cost
    before the engine runs, and what routing costs without the Iceberg write."""
    from pyspark.sql.pandas.types import to_arrow_schema

    import toolkit
    from toolkit.spark.workers import route_partition

    opts = toolkit.make_options()
    text = str(path)

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    route = functools.partial(
        route_partition, mode="json", options=opts, schema=schema,
        arrow_schema=to_arrow_schema(spark_schema),
    )
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("text -> python workers, count only", lambda: spark.read.text(text).mapInArrow(
            _count_rows(), "n long").collect()),
        ("text -> python workers, parse_line only", lambda: spark.read.text(text).mapInArrow(
            _parse_rows(), "n long").collect()),
        ("spark json parse, inferred schema -> noop", lambda: noop(
            spark.read.schema(inferred).json(text))),
        ("toolkit route (observe+route) -> noop", lambda: noop(
            spark.read.text(text).mapInArrow(route, spark_schema))),
    ]
    for name, fn in steps:
        yield name, timed(fn)[0]


# --------------------------------------------------------------------------- commits


@dataclass
class CommitRuns:
    toolkit: list[float]
    raw: list[float]
    columns: int  # columns the plan adds
    growth_toolkit: list[float]
    growth_raw: list[float]
    growth_spark: list[float]
    growth_plan: list[float]  # from_iceberg + Engine.plan before each toolkit commit
    grown: Table | None = None  # the toolkit's grown table, for --profile
    growth_kept: list[float] = field(default_factory=list)  # remove_unused_schemas=False


def raw_update(table: Table, plan: Plan) -> None:
    """What a user of PyIceberg alone writes: one ``update_schema`` with every column."""
    from toolkit.iceberg.schema import type_to_iceberg

    with table.update_schema() as update:
        for change in plan.changes:
            col = change.column
            update.add_column(path=change.path, field_type=type_to_iceberg(col.type), doc=col.doc)


def drift_plans(seed: int) -> tuple[Plan, Plan]:
    """The plan of an early batch (creates the table) and of a late, drifted batch."""
    from toolkit.core.engine import Engine
    from toolkit.core.values.types import Struct

    engine = Engine()
    sample = records(2_000, seed)
    first = engine.plan(Struct(), engine.observe(sample[:200], 0), 0)
    later = engine.plan(first.after, engine.observe(sample[-200:], 1), 1)
    return first, later


def run_commits(
    cat: Catalog, spark: SparkSession, seed: int, log: Callable[[str], None]
) -> CommitRuns:
    from toolkit.core.engine import Engine
    from toolkit.core.evolution.state import TableState
    from toolkit.core.values.types import Struct
    from toolkit.iceberg.commit import commit_plan
    from toolkit.iceberg.schema import from_iceberg, to_iceberg

    first, later = drift_plans(seed)
    base = to_iceberg(first.after)
    log(f"commit plan: {len(later.changes)} columns: " + ", ".join(
        ".".join(c.path) for c in later.changes))

    tk: list[float] = []
    raw: list[float] = []
    for i in range(COMMIT_PAIRS + 1):  # pair 0 warms both paths up, not counted
        a = cat.create_table(f"{NAMESPACE}.commit_tk_{i}", schema=base)
        b = cat.create_table(f"{NAMESPACE}.commit_raw_{i}", schema=base)

        def toolkit_commit(t: Table = a) -> None:
            commit_plan(t, later, TableState.of(t))

        def raw_commit(t: Table = b) -> None:
            raw_update(t, later)

        pair = (toolkit_commit, raw_commit) if i % 2 == 0 else (raw_commit, toolkit_commit)
        got = {fn: timed(fn)[0] for fn in pair}
        if i:
            tk.append(got[toolkit_commit])
            raw.append(got[raw_commit])
    log(f"commit pairs: toolkit {[round(x * 1e3, 1) for x in tk]} ms, "
        f"raw {[round(x * 1e3, 1) for x in raw]} ms")

    # Growth: 100 long columns c000.. in the first schema; change k sends {"c<k>": "text"}
    # so each commit adds exactly one documented column (c<k>_string, evolved from c<k>).
    engine = Engine()
    keys = [f"c{k:03d}" for k in range(GROWTH_STEPS)]
    wide = engine.plan(Struct(), engine.observe([dict.fromkeys(keys, 1)]))
    # Each series runs on its own, the toolkit's first: the others' tables grow big in
    # memory, and the garbage collector's passes over them would be charged to whichever
    # commit happens to trigger one.
    g = cat.create_table(f"{NAMESPACE}.grow_toolkit", schema=to_iceberg(wide.after))
    g_tk: list[float] = []
    g_plan: list[float] = []
    plans: list[Plan] = []
    for k, key in enumerate(keys, 1):
        t0 = time.perf_counter()
        plan = engine.plan(from_iceberg(g.schema()), engine.observe([{key: "text"}], k), k)
        g_plan.append(time.perf_counter() - t0)
        if len(plan.changes) != 1 or not plan.changes[0].column.doc:
            raise RuntimeError(f"growth step {k}: expected one documented column, got {plan}")
        state = TableState.of(g)
        s, g = timed(lambda t=g, p=plan, st=state: commit_plan(t, p, st))
        g_tk.append(s)
        plans.append(plan)
        if k in GROWTH_SHOWN:
            log(f"growth #{k}: toolkit {s * 1e3:.0f} ms")

    h = cat.create_table(f"{NAMESPACE}.grow_raw", schema=to_iceberg(wide.after))
    kept = cat.create_table(f"{NAMESPACE}.grow_kept", schema=to_iceberg(wide.after))
    s_name = f"{cat.name}.{NAMESPACE}.grow_spark"
    cat.create_table(f"{NAMESPACE}.grow_spark", schema=to_iceberg(wide.after))
    g_raw: list[float] = []
    g_spark: list[float] = []
    g_kept: list[float] = []
    for k, plan in enumerate(plans, 1):
        kept_state = TableState.of(kept)
        g_kept.append(timed(lambda p=plan, st=kept_state: commit_plan(
            kept, p, st, remove_unused_schemas=False))[0])
        g_raw.append(timed(lambda p=plan: raw_update(h, p))[0])
        col = plan.changes[0].column
        ddl = (
            f"ALTER TABLE {s_name} ADD COLUMN {col.name} string "
            f"COMMENT '{col.doc}'"
        )
        g_spark.append(timed(lambda q=ddl: spark.sql(q))[0])
        if k in GROWTH_SHOWN:
            log(f"growth #{k}: every schema kept {g_kept[-1] * 1e3:.0f} ms, "
                f"raw {g_raw[-1] * 1e3:.0f} ms, spark {g_spark[-1] * 1e3:.0f} ms")
    return CommitRuns(tk, raw, len(later.changes), g_tk, g_raw, g_spark, g_plan, g, g_kept)


def commit_report(commits: CommitRuns) -> tuple[list[str], list[str]]:
    """The commit tables, and the two commit verdict lines."""
    tk, raw = med(commits.toolkit), med(commits.raw)
    crow = [["commit", "median ms", "", "ratio"]]
    crow.append([f"3. PyIceberg update_schema ({commits.columns} documented columns)",
                 f"{raw * 1e3:.1f}", "", "-"])
    crow.append([f"3. toolkit commit_plan (same {commits.columns} columns)",
                 f"{tk * 1e3:.1f}", "", f"{tk / raw:.2f}"])

    grow = [["growth: commit #", *(str(k) for k in GROWTH_SHOWN), f"#{GROWTH_SHOWN[-1]}/#1",
             "med(96-100)/med(1-5)"]]
    for name, xs in (
        ("toolkit commit_plan (ms)", commits.growth_toolkit),
        ("  the same, every schema kept (ms)", commits.growth_kept),
        ("raw PyIceberg update_schema (ms)", commits.growth_raw),
        ("Spark ALTER TABLE ADD COLUMN (ms)", commits.growth_spark),
        ("toolkit plan before commit (ms)", commits.growth_plan),
    ):
        grow.append([name, *(f"{xs[k - 1] * 1e3:.1f}" for k in GROWTH_SHOWN),
                     f"{xs[-1] / xs[0]:.2f}", f"{med(xs[-5:]) / med(xs[:5]):.2f}"])

    r_commit = tk / raw
    # One commit takes about 10 ms, so a single timing is mostly noise (the same run has
    # given 1.99 and 2.01): the 1st and the 100th commit are each taken as the median of
    # the five commits around them (both single ratios are printed above).
    xs = commits.growth_toolkit
    r_growth = med(xs[-5:]) / med(xs[:5])
    tail = [
        f"commit   commit_plan / PyIceberg  = {r_commit:.2f} (target <= {TARGET_COMMIT}): "
        f"{verdict(r_commit, TARGET_COMMIT)}",
        f"growth   commit #96-100 / #1-5    = {r_growth:.2f} (target <= {TARGET_GROWTH}): "
        f"{verdict(r_growth, TARGET_GROWTH)}",
    ]
    return [*table_text(crow), "", *table_text(grow)], tail


def run_alone(
    name: str, part: Callable[[Any, Any], tuple[list[str], list[str]]]
) -> int:
    """One part of the bench alone, on its own catalog and Spark session: ``part(cat,
    spark)`` returns its table and verdict lines."""
    import toolkit

    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        cat = toolkit.catalog(Path(tmp, "lakehouse"))
        cat.create_namespace(NAMESPACE)
        spark = toolkit.spark_session(cat, **{"spark.master": "local[2]"})
        spark.sparkContext.setLogLevel("ERROR")
        try:
            load0 = load_average()
            table, tail = part(cat, spark)
            load1 = load_average()
        finally:
            spark.stop()
    print("\n".join([*table, "", *tail, *load_lines(load0, load1)]))
    return 0


def commits_only(seed: int, log: Callable[[str], None]) -> int:
    """``--commits-only``: part 3 alone."""
    return run_alone(
        "commits", lambda cat, spark: commit_report(run_commits(cat, spark, seed, log))
    )


# --------------------------------------------------------------------------- data growth


@dataclass
class DataGrowthRuns:
    """Per-batch seconds of successive ``toolkit.ingest`` calls on one table."""

    change_every: int  # a schema change in every that many-th batch
    maintain_every: int | None  # toolkit.maintain after every that many batches, or never
    maintenance: list[float]  # seconds of each toolkit.maintain
    ingest: list[float]
    steps: list[dict[str, float]]  # profile, plan+commit, commit (commit_plan), route+append
    changes: list[int]  # columns each batch's plan changed
    metadata: dict[int, tuple[int, int, int]]  # batch: (metadata.json bytes, schemas, snapshots)

    def ratio(self) -> float:
        return med(self.ingest[-5:]) / med(self.ingest[:5])

    @property
    def title(self) -> str:
        change = ("a schema change every batch" if self.change_every == 1
                  else f"a schema change every {self.change_every} batches")
        kept = ("never maintained" if self.maintain_every is None
                else f"maintained every {self.maintain_every}")
        return f"{change}, {kept}"


@dataclass
class DataGrowth:
    """The data growth runs: the target's (``target``) and those printed alongside."""

    target: DataGrowthRuns
    others: list[DataGrowthRuns]
    wide: list[float]  # seconds of batches 2-6 on a fresh table as wide as batch 100


def data_batch(
    base: Sequence[dict[str, Any]], k: int, rows: int, every: int = 1, wide: bool = False,
) -> list[dict[str, Any]]:
    """Batch ``k`` (1-based): its slice of ``base``; when ``k`` is a multiple of ``every``,
    with a new long field ``n<k>``, and at every 10th such change the previous change's
    field sent as text (a type change). ``wide``: with every field batch ``k`` would have
    had by then (the fields of all earlier changes too)."""
    out = []
    earlier = range(every, k + 1, every) if wide else (k,) if k % every == 0 else ()
    for r in base[(k - 1) * rows : k * rows]:
        r = {**r, **{f"n{j:03d}": j for j in earlier}}
        if k % (10 * every) == 0:
            r[f"n{k - every:03d}"] = f"s{k}"
        out.append(r)
    return out


def metadata_facts(cat: Catalog, name: str) -> tuple[int, int, int]:
    """The table's current metadata file size, schemas and snapshots it holds."""
    from urllib.parse import urlparse

    t = cat.load_table(name)
    loc = urlparse(t.metadata_location)
    size = Path(loc.path).stat().st_size if loc.scheme in ("", "file") else -1
    return size, len(t.metadata.schemas), len(t.metadata.snapshots)


def run_data_growth(
    cat: Catalog, spark: SparkSession, seed: int, log: Callable[[str], None],
    batches: int = DATA_BATCHES, rows: int = DATA_ROWS,
) -> DataGrowth:
    """``batches`` successive ``toolkit.ingest`` calls on each of four tables (JSON-lines
    files, so JSON's JVM path as a stream's micro-batches take; written beforehand, outside
    the timing), then the width control. The target's table is fed last, so its first
    batches, the ratio's base, run as warm as its last."""
    base = records(rows * (batches + DATA_WARMUP + 6), seed)
    with tempfile.TemporaryDirectory(prefix="bench-data-growth-") as tmp:

        def written(name: str, batch: list[dict[str, Any]]) -> Path:
            f = Path(tmp, f"{name}.jsonl")
            f.write_bytes(to_jsonl(batch))
            return f

        warm = [written(f"warm-{k}", data_batch(base[rows * batches :], k, rows))
                for k in range(1, DATA_WARMUP + 1)]
        runs = []
        for every, maintain_every in ((1, None), (1, DATA_MAINTAIN_EVERY),
                                      (DATA_CHANGE_EVERY, None),
                                      (DATA_CHANGE_EVERY, DATA_MAINTAIN_EVERY)):
            files = [written(f"batch-{every}-{k:03d}", data_batch(base, k, rows, every))
                     for k in range(1, batches + 1)]
            runs.append(_feed(cat, spark, log, files, warm, every, maintain_every))
        # a fresh table as wide as the every-batch-change tables' 100th batch (its first
        # batch creates it; the next five are timed)
        wide = [written(f"wide-{k}", data_batch(base, batches, rows, 1, wide=True))
                for k in range(6)]
        import toolkit

        times = []
        for k, f in enumerate(wide):
            t0 = time.perf_counter()
            toolkit.ingest(f, f"{NAMESPACE}.data_growth_wide", cat, spark,
                           batch_id=f"wide-{k}")
            times.append(time.perf_counter() - t0)
    return DataGrowth(runs[-1], runs[:-1], times[1:])


def _feed(
    cat: Catalog, spark: SparkSession, log: Callable[[str], None], files: Sequence[Path],
    warm: Sequence[Path], change_every: int, maintain_every: int | None,
) -> DataGrowthRuns:
    """One table fed ``files``, one ingest each, after ``warm`` on a table of its own."""
    import gc

    import toolkit

    out = DataGrowthRuns(change_every, maintain_every, [], [], [], [], {})
    what = f"{change_every}_{'never' if maintain_every is None else maintain_every}"
    batches = len(files)
    for w in warm:  # JIT, Iceberg classes, a table of their own
        toolkit.ingest(w, f"{NAMESPACE}.data_growth_warm_{what}", cat, spark)
    name = f"{NAMESPACE}.data_growth_{what}"
    for k, f in enumerate(files, 1):
        gc.collect()  # a collection of the last batch's garbage is not this batch's
        with split({"commit": "commit_plan"}) as steps:
            t0 = time.perf_counter()
            rep = toolkit.ingest(f, name, cat, spark, batch_id=f"data-growth-{k}")
            s = time.perf_counter() - t0
        out.ingest.append(s)
        out.steps.append(dict(steps.seconds))
        out.changes.append(len(rep.plan.changes))
        if k in (1, 5, batches // 2, batches):
            out.metadata[k] = metadata_facts(cat, name)
        if k in DATA_SHOWN:
            log(f"data growth, {out.title}, #{k}: ingest {s * 1e3:.0f} ms (" + ", ".join(
                f"{n} {v * 1e3:.0f} ms" for n, v in steps.seconds.items()) + ")")
        if maintain_every is not None and k % maintain_every == 0:
            t0 = time.perf_counter()
            toolkit.maintain(name, cat, spark, **DATA_MAINTENANCE)
            out.maintenance.append(time.perf_counter() - t0)
    missing = [k for k, c in enumerate(out.changes, 1)
               if k > 1 and k % change_every == 0 and not c]
    if missing:
        log(f"WARNING: data growth, {out.title}: batches without their schema change: "
            f"{missing}")
    return out


def growth_table(runs: DataGrowthRuns) -> list[str]:
    """One run's table: per step, batches 1, 10, 50, 100 and the medians the ratio takes,
    then the size of its metadata file."""
    n = len(runs.ingest)
    steps = ("profile", "plan+commit", "route+append")  # "commit" is inside plan+commit
    series = {
        "toolkit.ingest, one batch": runs.ingest,
        **{f"  {k}": [s.get(k, 0.0) for s in runs.steps] for k in steps[:2]},
        "    of which commit_plan": [s.get("commit", 0.0) for s in runs.steps],
        f"  {steps[2]}": [s.get(steps[2], 0.0) for s in runs.steps],
        "  other (load, ledger, refresh)": [
            t - sum(s.get(k, 0.0) for k in steps)
            for t, s in zip(runs.ingest, runs.steps, strict=True)
        ],
    }
    shown = [k for k in DATA_SHOWN if k <= n]
    rows = [[f"data growth, {runs.title} (ms)", *(f"#{k}" for k in shown), "med(1-5)",
             f"med({n - 4}-{n})", "ratio"]]
    for label, xs in series.items():
        a, b = med(xs[:5]), med(xs[-5:])
        rows.append([label, *(f"{xs[k - 1] * 1e3:.0f}" for k in shown), f"{a * 1e3:.0f}",
                     f"{b * 1e3:.0f}", f"{b / a:.2f}" if a else "-"])
    facts = ", ".join(
        f"#{k} {size / 1e3:.0f} KB, {schemas} schemas, {snaps} snapshots"
        for k, (size, schemas, snaps) in sorted(runs.metadata.items())
    )
    out = [*table_text(rows), f"table metadata.json: {facts}"]
    if runs.maintenance:
        out.append(f"toolkit.maintain, {len(runs.maintenance)} runs: median "
                   f"{med(runs.maintenance) * 1e3:.0f} ms, max "
                   f"{max(runs.maintenance) * 1e3:.0f} ms (not in the batches' times)")
    return out


def data_growth_report(runs: DataGrowth) -> tuple[list[str], list[str]]:
    """The data growth tables, and the verdict line (on the target's table)."""
    r = runs.target.ratio()
    harsh = runs.others[1]  # a schema change every batch, maintained
    wide = med(runs.wide)
    tail = [
        f"ratio commit-growth-with-data = {r:.2f} (target <= {TARGET_GROWTH}): "
        f"{verdict(r, TARGET_GROWTH)}",
        *(f"  ({o.title}: {o.ratio():.2f}, no target)" for o in runs.others),
        f"  (a fresh table as wide as the 100th batch of a schema change every batch: "
        f"{wide * 1e3:.0f} ms a batch; that 100th batch, maintained: "
        f"{med(harsh.ingest[-5:]) * 1e3:.0f} ms, {med(harsh.ingest[-5:]) / wide:.2f} of it)",
    ]
    tables: list[str] = []
    for run in (runs.target, *runs.others):
        tables += [*growth_table(run), ""]
    return tables[:-1], tail


def data_growth_only(seed: int, log: Callable[[str], None]) -> int:
    """``--data-growth-only``: the data growth bench alone."""
    return run_alone(
        "data-growth", lambda cat, spark: data_growth_report(run_data_growth(cat, spark, seed, log))
    )


# --------------------------------------------------------------------------- profiles


def profile_text(fn: Callable[[], Any], top: int, title: str) -> str:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    out.write(f"=== {title}\n")
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def profiles(path: Path, runs: SparkRuns, commits: CommitRuns, top: int) -> str:
    """cProfiles of what a Python worker runs (observe, route) on the first lines of the
    file, in this process, and of one more commit on the grown table."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    import toolkit
    from toolkit.core.engine import Engine
    from toolkit.core.evolution.state import TableState
    from toolkit.iceberg.commit import commit_plan
    from toolkit.iceberg.schema import from_iceberg
    from toolkit.spark.workers import observe_partition, route_partition

    opts = toolkit.make_options()
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for _, line in zip(range(PROFILE_LINES), f, strict=False)]
    chunks = [
        pa.RecordBatch.from_pydict({"value": lines[i : i + 10_000]})
        for i in range(0, len(lines), 10_000)
    ]
    n = len(lines)
    parts = []
    s, _ = timed(lambda: list(observe_partition(iter(chunks), mode="json", options=opts, batch=0)))
    parts.append(f"worker observe, 1 core, no profiler: {n:,} lines in {s:.2f} s "
                 f"({n / s:,.0f} records/s)")
    arrow_schema = to_arrow_schema(runs.spark_schema)
    route = functools.partial(
        route_partition, mode="json", options=opts, schema=runs.table_schema,
        arrow_schema=arrow_schema,
    )
    s, _ = timed(lambda: list(route(iter(chunks))))
    parts.append(f"worker route, 1 core, no profiler: {n:,} lines in {s:.2f} s "
                 f"({n / s:,.0f} records/s)")
    parts.append(profile_text(
        lambda: list(observe_partition(iter(chunks), mode="json", options=opts, batch=0)),
        top, f"observe_partition on {n:,} lines (what each Python worker runs to profile)",
    ))
    parts.append(profile_text(
        lambda: list(route(iter(chunks))), top,
        f"route_partition on {n:,} lines (what each Python worker runs before the append)",
    ))
    grown = commits.grown
    if grown is not None:
        engine = Engine()
        k = GROWTH_STEPS + 1
        new = engine.observe([{"profiled": 1}], k)  # one more column, on 101 schemas
        plan = engine.plan(from_iceberg(grown.schema()), new, k)
        parts.append(profile_text(
            lambda: commit_plan(grown, plan, TableState.of(grown)), top,
            f"commit_plan #{k} on the grown table ({len(grown.schemas())} schemas)",
        ))
    return "\n".join(parts)


# --------------------------------------------------------------------------- report


def report(
    n: int,
    size: int,
    repeat: int,
    runs: SparkRuns,
    commits: CommitRuns,
    load0: tuple[float, float, float],
    load1: tuple[float, float, float],
    setup_s: float,
    data_growth: DataGrowth | None = None,
) -> str:
    import pyiceberg
    import pyspark

    head = (
        f"{n:,} records ({size / n:.0f} B/record, {size / 1e6:.0f} MB), median of {repeat}; "
        f"Python {platform.python_version()}, pyspark {pyspark.__version__}, "
        f"pyiceberg {pyiceberg.__version__}, local[2] on {os.cpu_count()} cores\n"
        f"Spark session + catalog + warm-up: {setup_s:.1f} s; Spark inferred "
        f"{runs.inferred_columns} top-level columns, ingest created {runs.ingest_columns}; "
        f"ingest wrote {runs.rows_written:,} rows"
    )
    infer, observe, ingest, append = (
        med(runs.infer), med(runs.observe), med(runs.ingest), med(runs.append)
    )
    info = med(runs.append_toolkit_schema)
    step = {k: med([s.get(k, 0.0) for s in runs.steps]) for k in
            ("profile", "plan+commit", "route+append")}
    other = ingest - sum(step.values())

    def row(name: str, s: float, base: float | None = None, rate: bool = True) -> list[str]:
        return [
            name,
            f"{s:.2f}",
            f"{n / s:,.0f}" if rate and s else "-",
            "-" if base is None else f"{s / base:.2f}",
        ]

    rows = [["measurement", "median s", "records/s", "ratio"]]
    rows.append(row("1. spark.read.json(f).schema (full inference)", infer))
    rows.append(row("1. observe_on_spark(read.text(f)) (toolkit profile)", observe, infer))
    rows.append(row("2. spark json -> iceberg append (inferred schema)", append))
    rows.append(row("2. toolkit.ingest(f) (fresh table)", ingest, append))
    rows.append(row("     profile (observe_on_spark)", step["profile"], ingest, rate=False))
    rows.append(row("     plan + commit (create table)", step["plan+commit"], ingest, rate=False))
    rows.append(row("     route + append (write_batch)", step["route+append"], ingest, rate=False))
    rows.append(row("     other (load, dataframe, refresh)", other, ingest, rate=False))
    rows.append(row("   route + append vs the plain append", step["route+append"], append))
    rows.append(row("   spark json -> iceberg, toolkit's schema (info)", info, append))
    for name, xs in runs.breakdown.items():
        base = append if "noop" in name else infer
        rows.append(row(f"   {name} (vs {'append' if base is append else 'inference'})",
                        med(xs), base))

    commit_tables, commit_tail = commit_report(commits)
    growth_table, growth_tail = ([], []) if data_growth is None else data_growth_report(
        data_growth)
    r_profile, r_ingest = observe / infer, ingest / append
    tail = [
        f"profile  observe / inference      = {r_profile:.2f} (target <= {TARGET_PROFILE}): "
        f"{verdict(r_profile, TARGET_PROFILE)}",
        f"ingest   ingest / plain append    = {r_ingest:.2f} (target <= {TARGET_INGEST}): "
        f"{verdict(r_ingest, TARGET_INGEST)}",
        *commit_tail,
        *growth_tail,
        *load_lines(load0, load1),
    ]
    return "\n".join(
        [head, "", *table_text(rows), "", *commit_tables, "",
         *([*growth_table, ""] if growth_table else []), *tail]
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks --spark", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--records", type=int, default=1_000_000, help="records (default 1000000)")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs, median (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument(
        "--keep-data", metavar="DIR", type=Path, default=None,
        help="keep the generated JSON-lines file in DIR and reuse it (keyed by N and seed)",
    )
    ap.add_argument("--quiet", action="store_true", help="print only the final table")
    ap.add_argument(
        "--breakdown", action="store_true",
        help="also time extra full passes that split the Spark steps (workers' transfer "
        "and parse cost, routing without the Iceberg write)",
    )
    ap.add_argument(
        "--profile", type=int, metavar="TOP", default=0,
        help="also print cProfiles (top TOP functions) of a worker's observe and route "
        "and of one commit on the grown table",
    )
    ap.add_argument("--commits-only", action="store_true",
                    help="run only part 3, the schema commits (no records generated)")
    ap.add_argument("--data-growth-only", action="store_true",
                    help="run only the data growth bench: 100 ingest batches with data and "
                    "a schema change each, on one table (no big file generated)")
    ap.add_argument("--no-data-growth", action="store_true",
                    help="skip the data growth bench (about 2-3 minutes)")
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

    if args.commits_only:
        return commits_only(args.seed, log)
    if args.data_growth_only:
        return data_growth_only(args.seed, log)

    import toolkit

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        folder = args.keep_data.expanduser().resolve() if args.keep_data else Path(tmp, "data")
        path = data_file(folder, args.records, args.seed, log)
        warm = sample_file(path, Path(tmp, "warm.jsonl"), WARMUP_LINES, args.records)
        size = path.stat().st_size

        t0 = time.perf_counter()
        cat = toolkit.catalog(Path(tmp, "lakehouse"))
        cat.create_namespace(NAMESPACE)
        spark = toolkit.spark_session(cat, **{"spark.master": "local[2]"})
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()
        ready = time.perf_counter() - t0
        log(f"Spark session ready in {ready:.1f} s")
        try:
            runs = run_spark(spark, cat, path, args.repeat, warm, log, args.breakdown)
            setup_s = ready + runs.warmup
            commits = run_commits(cat, spark, args.seed, log)
            data_growth = None if args.no_data_growth else run_data_growth(
                cat, spark, args.seed, log)
            load1 = load_average()
            print(report(args.records, size, args.repeat, runs, commits, load0, load1, setup_s,
                         data_growth))
            if args.profile:
                print()
                print(profiles(path, runs, commits, args.profile))
        finally:
            spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
