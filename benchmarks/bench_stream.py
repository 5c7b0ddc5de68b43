"""Ingest in the steady state, over time, and at scale, against plain Spark appends, in one
run (``python -m benchmarks --stream``):

1. streaming: 200 micro-batches of 1,000 drifting records (JSON-lines files) into a table
   whose schema already holds the stream's kinds (it was fed a sample of the whole stream
   first, as a long-running stream's table is), ``toolkit.ingest`` per batch against a
   plain Spark Iceberg append of the same file into a table of Spark's inferred schema,
   the two alternating which goes first, batch by batch. Ratios: median per-batch time,
   ingest / append (target <= 1.2), and the same of the 95th percentiles (target <= 1.2).
2. growth: in the same run, the median ingest time of batches 191-200 over that of batches
   1-10 (target <= 1.3): a table written every batch, never maintained, must not slow
   down.
3. bulk: ``toolkit.ingest`` of one file of 1M drifting records into a table that already
   holds the file's kinds (fed a sample of it first, in this process), so it is written
   in one pass, against a plain Spark Iceberg append of the same file with its schema
   known (Spark's inferred one, found beforehand), alternating order: target <= 1.2.
   ``--no-bulk`` skips it.
4. scale: ``toolkit.ingest`` of 1M and of 4M records (one file each) into a fresh table,
   each in a process of its own: wall time 4M / 1M (target <= 4.4), and the peak resident
   memory of the driver, 4M / 1M, for the Python process and for Spark's JVM (targets
   <= 1.2). The JVM's heap is sized at its start (``-Xms`` = ``-Xmx`` = 1g, Spark's
   default driver memory): left to itself, G1 grows the heap toward that cap the longer a
   run lasts, whatever it holds, so the JVM's peak mostly measured the run's length. Even
   so, the kernel makes a page resident only once it is touched, so that peak can still
   grow a little with a longer run, and at this heap size it mostly shows growth outside
   the heap. What the driver keeps is shown too (what it retains, not a peak): the JVM's
   heap still in use after a full collection once the ingest is done, 4M / 1M (target
   <= 1.2).
   ``--no-scale`` skips it (generating 4M records takes a few minutes, kept with
   ``--keep-data``).

Each part runs ``--repeat`` times (default 3), alternating order; the ratios printed are
the medians of the repetitions' ratios, each repetition's shown too. Nothing here asserts
on time; it only reports, one ``ratio NAME = X (target <= Y): PASS|MISS`` line each.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.bench_spark import (
    data_file,
    load_average,
    load_lines,
    med,
    sample_file,
    verdict,
)
from benchmarks.generate import records, to_jsonl

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

TARGET_STREAM = 1.2
TARGET_STREAM_P95 = 1.2
TARGET_BULK = 1.2
TARGET_GROWTH = 1.3
TARGET_SCALE = 4.4
TARGET_RSS = 1.2
BATCHES = 200
ROWS = 1_000
#: the stream's sample its table is fed first (every k-th record of the whole stream)
WARM_ROWS = 20_000
GROWTH_WINDOW = 10
SCALE_SMALL = 1_000_000
SCALE_LARGE = 4_000_000
#: the scale runs' JVM heap, committed at start (see the module's docstring, part 4)
SCALE_HEAP = "1g"
NAMESPACE = "bench"


def p95(xs: Sequence[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1]


@dataclass
class StreamRun:
    """One repetition of the streaming part: per-batch seconds of each path."""

    ingest: list[float] = field(default_factory=list)
    append: list[float] = field(default_factory=list)
    one_pass: int = 0  # batches ingest wrote in one pass

    def ratio(self) -> float:
        return med(self.ingest) / med(self.append)

    def ratio95(self) -> float:
        return p95(self.ingest) / p95(self.append)

    def growth(self) -> float:
        return med(self.ingest[-GROWTH_WINDOW:]) / med(self.ingest[:GROWTH_WINDOW])

    def append_growth(self) -> float:
        return med(self.append[-GROWTH_WINDOW:]) / med(self.append[:GROWTH_WINDOW])


def stream_files(folder: Path, seed: int, batches: int) -> tuple[list[Path], Path]:
    """The stream's batches as JSON-lines files, and the sample of the whole stream."""
    folder.mkdir(parents=True, exist_ok=True)
    recs = records(batches * ROWS, seed)
    files = []
    for k in range(batches):
        f = folder / f"batch-{k:03d}.jsonl"
        f.write_bytes(to_jsonl(recs[k * ROWS : (k + 1) * ROWS]))
        files.append(f)
    warm = folder / "sample.jsonl"
    warm.write_bytes(to_jsonl(recs[:: max(1, len(recs) // WARM_ROWS)]))
    return files, warm


def run_stream(
    cat: Catalog, spark: SparkSession, files: Sequence[Path], warm: Path, rep: int,
    log: Callable[[str], None],
) -> StreamRun:
    import toolkit

    tag = "warm" if rep < 0 else str(rep)
    name = f"{NAMESPACE}.stream_{tag}"
    plain = f"{cat.name}.{NAMESPACE}.stream_plain_{tag}"
    # the stream's table already holds every kind the stream brings, as after months
    toolkit.ingest(warm, name, cat, spark, batch_id=f"sample-{rep}")
    schema = spark.read.json(str(warm)).schema
    spark.catalog.createTable(plain, source="iceberg", schema=schema)
    spark.read.schema(schema).json(str(warm)).writeTo(plain).append()
    out = StreamRun()
    for k, f in enumerate(files):
        gc.collect()  # a collection of the last batch's garbage is not this batch's
        order = ("ingest", "append") if (k + rep) % 2 == 0 else ("append", "ingest")
        for what in order:
            t0 = time.perf_counter()
            if what == "ingest":
                report = toolkit.ingest(f, name, cat, spark, batch_id=f"b{k}")
                out.ingest.append(time.perf_counter() - t0)
                out.one_pass += report.one_pass
            else:
                spark.read.schema(schema).json(str(f)).writeTo(plain).append()
                out.append.append(time.perf_counter() - t0)
        if k + 1 in (1, 10, 100, 200):
            log(f"stream #{rep + 1}, batch {k + 1}: ingest {out.ingest[-1] * 1e3:.0f} ms, "
                f"append {out.append[-1] * 1e3:.0f} ms")
    log(f"stream #{rep + 1}: median ingest {med(out.ingest) * 1e3:.0f} ms, append "
        f"{med(out.append) * 1e3:.0f} ms; {out.one_pass} of {len(files)} in one pass")
    return out


# --------------------------------------------------------------------------- bulk


@dataclass
class BulkRun:
    """One repetition of the bulk part: seconds of each path, and whether ingest wrote the
    file in one pass."""

    ingest: float
    append: float
    one_pass: bool

    def ratio(self) -> float:
        return self.ingest / self.append


def run_bulk(
    cat: Catalog, spark: SparkSession, big: Path, sample: Path, schema: Any, rep: int,
    log: Callable[[str], None],
) -> BulkRun:
    """``big`` ingested into a table fed ``sample`` first, and appended plainly (with
    ``schema``, Spark's inferred one) into a table of its own, alternating order."""
    import toolkit

    name = f"{NAMESPACE}.bulk_{rep}"
    plain = f"{cat.name}.{NAMESPACE}.bulk_plain_{rep}"
    toolkit.ingest(sample, name, cat, spark, batch_id=f"sample-{rep}")
    spark.catalog.createTable(plain, source="iceberg", schema=schema)
    spark.read.schema(schema).json(str(sample)).writeTo(plain).append()
    took: dict[str, float] = {}
    one_pass = False
    for what in (("ingest", "append") if rep % 2 == 0 else ("append", "ingest")):
        gc.collect()
        t0 = time.perf_counter()
        if what == "ingest":
            one_pass = toolkit.ingest(big, name, cat, spark, batch_id=f"bulk-{rep}").one_pass
        else:
            spark.read.schema(schema).json(str(big)).writeTo(plain).append()
        took[what] = time.perf_counter() - t0
    out = BulkRun(took["ingest"], took["append"], one_pass)
    log(f"bulk #{rep + 1}: ingest {out.ingest:.1f} s ({'one pass' if one_pass else 'two passes'}"
        f"), append {out.append:.1f} s")
    return out


# --------------------------------------------------------------------------- scale


def scale_child(path: str, folder: str) -> None:
    """Runs in a process of its own: one fresh-table ingest of ``path``; prints a JSON line
    with the wall time and the peak resident memory of this process and of Spark's JVM."""
    import psutil

    import toolkit

    cat = toolkit.catalog(Path(folder))
    spark = toolkit.spark_session(cat, **{
        "spark.master": "local[2]", "spark.driver.memory": SCALE_HEAP,
        # Spark refuses -Xmx among java options (spark.driver.memory sets it); -Xms is ours
        "spark.driver.defaultJavaOptions": f"-Xms{SCALE_HEAP}",
    })
    spark.range(1).count()
    jvm = psutil.Process(spark.sparkContext._gateway.proc.pid)  # type: ignore[union-attr]
    me = psutil.Process()
    # sampled, not getrusage's peak: Linux carries a process's peak over fork and exec, so
    # a child of a big parent would report the parent's size
    peak = {"jvm": 0, "python": 0}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                peak["jvm"] = max(peak["jvm"], jvm.memory_info().rss)
                peak["python"] = max(peak["python"], me.memory_info().rss)
            except psutil.Error:
                return
            done.wait(0.2)

    threading.Thread(target=watch, daemon=True).start()
    t0 = time.perf_counter()
    report = toolkit.ingest(path, f"{NAMESPACE}.scale", cat, spark)
    wall = time.perf_counter() - t0
    done.set()
    python_peak = peak["python"]
    jvm_lang = spark.sparkContext._jvm.java.lang  # type: ignore[union-attr]
    jvm_lang.System.gc()  # a full collection: what is left is what the driver still holds
    heap = jvm_lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage()
    print(json.dumps({"wall": wall, "rows": report.rows_written, "python_rss": python_peak,
                      "jvm_rss": peak["jvm"], "jvm_live": heap.getUsed(),
                      "jvm_heap": heap.getCommitted()}))
    spark.stop()


def run_scale_child(path: Path, tmp: Path) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(dir=tmp, prefix="scale-"))
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_stream", "--scale-child", str(path),
         str(folder)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- report


def ratio_line(name: str, values: Sequence[float], target: float) -> str:
    r = med(values)
    each = ", ".join(f"{v:.2f}" for v in values)
    return f"ratio {name} = {r:.2f} (target <= {target}): {verdict(r, target)}  [{each}]"


def stream_part(
    cat: Catalog, spark: SparkSession, tmp: Path, seed: int, batches: int, repeat: int,
    log: Callable[[str], None],
) -> list[str]:
    files, warm = stream_files(tmp / "stream", seed, batches)
    # warm both paths (JIT, classes, Python workers) on a table of their own
    run_stream(cat, spark, files[:20], warm, -1, lambda s: None)
    runs = [run_stream(cat, spark, files, warm, r, log) for r in range(repeat)]
    return [
        ratio_line("stream-median", [r.ratio() for r in runs], TARGET_STREAM),
        ratio_line("stream-p95", [r.ratio95() for r in runs], TARGET_STREAM_P95),
        ratio_line("stream-growth", [r.growth() for r in runs], TARGET_GROWTH),
        "  (plain append, batches 191-200 / 1-10: "
        + ", ".join(f"{r.append_growth():.2f}" for r in runs) + ")",
        "  (median ms per batch, ingest / append: " + ", ".join(
            f"{med(r.ingest) * 1e3:.0f} / {med(r.append) * 1e3:.0f}" for r in runs)
        + f"; batches in one pass: {', '.join(str(r.one_pass) for r in runs)})",
    ]


def bulk_part(
    cat: Catalog, spark: SparkSession, tmp: Path, folder: Path, seed: int, repeat: int,
    log: Callable[[str], None],
) -> list[str]:
    big = data_file(folder, SCALE_SMALL, seed, log)
    sample = sample_file(big, tmp / "bulk-sample.jsonl", WARM_ROWS, SCALE_SMALL)
    schema = spark.read.json(str(big)).schema  # once, outside the timing
    bulk = [run_bulk(cat, spark, big, sample, schema, r, log) for r in range(repeat)]
    return [
        ratio_line("bulk-1M", [b.ratio() for b in bulk], TARGET_BULK),
        "  (seconds, ingest / append: "
        + ", ".join(f"{b.ingest:.1f} / {b.append:.1f}" for b in bulk)
        + "; in one pass: " + ", ".join("yes" if b.one_pass else "no" for b in bulk) + ")",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks --stream",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-data", metavar="DIR", type=Path, default=None,
                    help="keep the generated scale files in DIR and reuse them")
    ap.add_argument("--batches", type=int, default=BATCHES,
                    help=f"streaming batches (default {BATCHES}; the growth ratio compares "
                    f"the last {GROWTH_WINDOW} with the first)")
    ap.add_argument("--no-scale", action="store_true", help="skip the 1M / 4M part")
    ap.add_argument("--no-stream", action="store_true", help="skip the streaming part")
    ap.add_argument("--no-bulk", action="store_true", help="skip the bulk 1M part")
    ap.add_argument("--scale-child", nargs=2, metavar=("FILE", "FOLDER"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.batches < 2 * GROWTH_WINDOW:
        ap.error(f"--batches must be at least {2 * GROWTH_WINDOW}: the growth ratio compares "
                 f"the last {GROWTH_WINDOW} batches with the first {GROWTH_WINDOW}")
    if args.scale_child:
        scale_child(*args.scale_child)
        return 0

    def log(s: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {s}", file=sys.stderr, flush=True)

    import toolkit

    load0 = load_average()
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp_name:
        tmp = Path(tmp_name)
        folder = args.keep_data.expanduser().resolve() if args.keep_data else tmp / "data"
        if not (args.no_stream and args.no_bulk):
            cat = toolkit.catalog(tmp / "lakehouse")
            cat.create_namespace(NAMESPACE)
            spark = toolkit.spark_session(cat, **{"spark.master": "local[2]"})
            try:
                if not args.no_stream:
                    lines += stream_part(cat, spark, tmp, args.seed, args.batches,
                                         args.repeat, log)
                if not args.no_bulk:
                    lines += bulk_part(cat, spark, tmp, folder, args.seed, args.repeat, log)
            finally:
                spark.stop()
        if not args.no_scale:
            small = data_file(folder, SCALE_SMALL, args.seed, log)
            large = data_file(folder, SCALE_LARGE, args.seed, log)
            walls, py, jv, live = [], [], [], []
            for r in range(args.repeat):
                order = (small, large) if r % 2 == 0 else (large, small)
                got = {p: run_scale_child(p, tmp) for p in order}
                s, la = got[small], got[large]
                log(f"scale #{r + 1}: 1M {s['wall']:.1f} s, 4M {la['wall']:.1f} s; peak RSS "
                    f"python {s['python_rss'] / 1e6:.0f} / {la['python_rss'] / 1e6:.0f} MB, "
                    f"jvm {s['jvm_rss'] / 1e6:.0f} / {la['jvm_rss'] / 1e6:.0f} MB (heap "
                    f"{s['jvm_heap'] / 1e6:.0f} / {la['jvm_heap'] / 1e6:.0f} MB, in use after "
                    f"a full GC {s['jvm_live'] / 1e6:.0f} / {la['jvm_live'] / 1e6:.0f} MB)")
                walls.append(la["wall"] / s["wall"])
                py.append(la["python_rss"] / s["python_rss"])
                jv.append(la["jvm_rss"] / s["jvm_rss"])
                live.append(la["jvm_live"] / s["jvm_live"])
            lines += [
                ratio_line("scale-4M/1M", walls, TARGET_SCALE),
                ratio_line("scale-rss-python-4M/1M", py, TARGET_RSS),
                ratio_line("scale-rss-jvm-4M/1M", jv, TARGET_RSS),
                ratio_line("scale-heap-in-use-jvm-4M/1M", live, TARGET_RSS),
            ]
    print("\n".join([*lines, *load_lines(load0, load_average())]))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    raise SystemExit(main())
