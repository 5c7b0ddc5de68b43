"""Cold start: a fresh Python process to its first committed batch (issue 29).

Each run is a fresh interpreter (its own JVM), timed from its first line to the commit:

* toolkit: ``import toolkit``, ``toolkit.spark_session(cat)`` on a new embedded catalog,
  ``toolkit.ingest(day1, "db.events", cat, spark)`` of the quickstart's day 1 (20 records);
* plain:   ``import pyspark``, a session with the same catalog settings (the Iceberg
  runtime, the SQLite driver, the catalog; no helpers, no class archive), then
  ``spark.read.json(day1 file)`` and ``writeTo("db.events").create()``;
* info: the toolkit again with ``TOOLKIT_CLASS_ARCHIVE=off`` (what the class archive that
  ``make install`` records buys; see toolkit.spark.startup).

The pairs run ``--repeat`` times in alternating order; each pair gives a ratio, and the
median of them is the figure::

    python -m benchmarks --coldstart --repeat 3

It prints ``ratio coldstart = X (target <= 1.2): PASS|MISS  [r1, r2, r3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from benchmarks.bench_spark import load_average, load_lines, med, table_text, verdict

TARGET = 1.2
MASTER = "local[2]"

# the children print one JSON line of step -> seconds since their first line
_TOOLKIT_CHILD = """
import time; t0 = time.perf_counter(); steps = {}
import json, os, sys, orjson
import toolkit
steps["import"] = time.perf_counter() - t0
lines = open(sys.argv[2], "rb").read().splitlines()
day1 = [orjson.loads(line) for line in lines if line.strip()]
cat = toolkit.catalog(sys.argv[1])
spark = toolkit.spark_session(cat, master=sys.argv[3])
steps["session"] = time.perf_counter() - t0
report = toolkit.ingest(day1, "db.events", cat, spark)
assert report.rows_written == len(day1), report
steps["commit"] = time.perf_counter() - t0
from pyspark import SparkContext
jvm = open(f"/proc/{SparkContext._gateway.proc.pid}/stat").read().rsplit(")", 1)[1].split()
steps["cpu"] = sum(os.times()[:2]) + (int(jvm[11]) + int(jvm[12])) / os.sysconf("SC_CLK_TCK")
print(json.dumps(steps), flush=True)
"""

_PLAIN_CHILD = """
import time; t0 = time.perf_counter(); steps = {}
import json, os, sys
from pyspark.sql import SparkSession
steps["import"] = time.perf_counter() - t0
builder = SparkSession.builder
for key, value in json.loads(sys.argv[1]).items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
steps["session"] = time.perf_counter() - t0
spark.sql("CREATE NAMESPACE IF NOT EXISTS db")
spark.read.json(sys.argv[2]).writeTo("db.events").using("iceberg").create()
steps["commit"] = time.perf_counter() - t0
from pyspark import SparkContext
jvm = open(f"/proc/{SparkContext._gateway.proc.pid}/stat").read().rsplit(")", 1)[1].split()
steps["cpu"] = sum(os.times()[:2]) + (int(jvm[11]) + int(jvm[12])) / os.sysconf("SC_CLK_TCK")
print(json.dumps(steps), flush=True)
"""


def _run(code: str, args: Sequence[str], env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    steps: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return steps


def plain_settings(folder: Path) -> dict[str, str]:
    """The settings a plain Spark user writes for the same catalog: toolkit.spark_conf's,
    which hold no helper jar and no class archive (spark_session adds those)."""
    import toolkit
    from toolkit.spark.session import spark_conf

    cat = toolkit.catalog(folder)
    return spark_conf(cat, master=MASTER)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks --coldstart",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="pairs of runs, median (default 1)")
    ap.add_argument("--no-info", action="store_true",
                    help="skip the run without the class archive")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    def log(s: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {s}", file=sys.stderr, flush=True)

    from toolkit.spark.startup import ARCHIVE_ENV, class_archive_options
    from toolkit.spark.tally import tally_jar

    day1 = str(files("toolkit") / "data" / "sample_day1.jsonl")
    load0 = load_average()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")])}
    env.pop(ARCHIVE_ENV, None)
    runs: dict[str, list[dict[str, float]]] = {"toolkit": [], "plain": [], "no archive": []}
    with tempfile.TemporaryDirectory(prefix="bench-coldstart-") as tmp:
        conf = plain_settings(Path(tmp, "probe"))
        jar = tally_jar()
        archive = class_archive_options([*conf["spark.jars"].split(","), str(jar or "")])
        log("class archive: " + (archive[0].split("=", 1)[1] if archive else
                                 "none (run `python -m toolkit.pipeline.prepare`)"))

        def toolkit_run(i: int, extra: dict[str, str] | None = None) -> dict[str, float]:
            folder = Path(tmp, f"t{i}-{len(extra or {})}")
            return _run(_TOOLKIT_CHILD, [str(folder), day1, MASTER], {**env, **(extra or {})})

        def plain_run(i: int) -> dict[str, float]:
            settings = plain_settings(Path(tmp, f"p{i}"))
            return _run(_PLAIN_CHILD, [json.dumps(settings), day1], env)

        for i in range(args.repeat):
            order = ("toolkit", "plain") if i % 2 == 0 else ("plain", "toolkit")
            for what in order:
                steps = toolkit_run(i) if what == "toolkit" else plain_run(i)
                runs[what].append(steps)
                log(f"run {i + 1} {what}: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items()))
            if not args.no_info:
                steps = toolkit_run(i, {ARCHIVE_ENV: "off"})
                runs["no archive"].append(steps)
                log(f"run {i + 1} toolkit, no class archive: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in steps.items()))
    load1 = load_average()

    rows = [["fresh process to first commit", "import", "session", "first write", "total",
             "CPU s"]]
    labels = {"toolkit": "toolkit.spark_session + toolkit.ingest(day1)",
              "plain": "plain session + read.json + writeTo.create",
              "no archive": "toolkit, TOOLKIT_CLASS_ARCHIVE=off (info)"}
    for what, label in labels.items():
        if not runs[what]:
            continue
        imp = med([s["import"] for s in runs[what]])
        ses = med([s["session"] - s["import"] for s in runs[what]])
        wr = med([s["commit"] - s["session"] for s in runs[what]])
        tot = med([s["commit"] for s in runs[what]])
        cpu = med([s["cpu"] for s in runs[what]])
        rows.append([label, f"{imp:.2f}", f"{ses:.2f}", f"{wr:.2f}", f"{tot:.2f}", f"{cpu:.1f}"])
    ratios = [t["commit"] / p["commit"] for t, p in zip(runs["toolkit"], runs["plain"],
                                                         strict=True)]
    r = med(ratios)
    each = ", ".join(f"{v:.2f}" for v in ratios)
    print(f"cold start, the quickstart's day 1 (20 records), {MASTER}, median of "
          f"{args.repeat} (seconds from a fresh interpreter's first line; CPU s: its Python "
          "and its JVM, what a busy machine inflates least)")
    print("\n".join(table_text(rows)))
    if runs["no archive"]:
        off = [n["commit"] / p["commit"] for n, p in zip(runs["no archive"], runs["plain"],
                                                          strict=True)]
        print(f"without the class archive the ratio would be {med(off):.2f} (info)")
    print(f"ratio coldstart = {r:.2f} (target <= {TARGET}): {verdict(r, TARGET)}  [{each}]")
    print("\n".join(load_lines(load0, load1)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
