"""``toolkit.simulate`` throughput against plain orjson parsing, measured in one run.

Absolute rates on a shared machine vary 1.2-2.4x between runs (see BASELINES.md), so the
figure that matters is the ratio of two rates taken in the same process: the engine's
records/s over orjson's parse records/s on the same JSON lines. The target is a ratio of
at least 0.25 (the engine costs at most 4 parses), judged on the rate *with rows*, since
the contract of ``simulate`` includes the rows.

The records are generated once and serialized to JSON lines in memory; every step is timed
with ``time.perf_counter`` with the cyclic garbage collector enabled, as in a notebook.
The ``gc s`` column is the part of each median spent inside the collector (measured with
``gc.callbacks``): at a few hundred thousand records alive it is a large share of both the
parse and the engine.

    python -m benchmarks                          # 200k records, 10 batches, median of 3
    python -m benchmarks --records 50000 --repeat 5
    python -m benchmarks --profile 30             # plus a cProfile of one simulate + rows

Nothing here asserts on time; it only reports.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

import toolkit
from benchmarks.generate import batches, records, to_jsonl

TARGET_RATIO = 0.25

Batches = list[list[dict[str, Any]]]


class GcClock:
    """Seconds spent in the cyclic garbage collector, read around a timed step."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._start

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


@dataclass(frozen=True)
class Timing:
    """One measured step: wall seconds and seconds inside the GC, per repeat."""

    name: str
    seconds: list[float]
    gc_seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def gc_median(self) -> float:
        return statistics.median(self.gc_seconds)

    def rate(self, n: int) -> float:
        return n / self.median if self.median else float("inf")


@dataclass(frozen=True)
class Result:
    records: int
    batches: int
    repeat: int
    bytes_per_record: float
    parse: Timing
    simulate: Timing  # simulate() + plans + schema
    rows: Timing  # materializing .rows after simulate()
    with_rows: Timing  # simulate() + plans + schema + rows
    columns: int
    changes: int  # columns added by batches after the first (the drift)

    @property
    def parse_rate(self) -> float:
        return self.parse.rate(self.records)

    def ratio(self, t: Timing) -> float:
        return t.rate(self.records) / self.parse_rate


def _parse(lines: Sequence[bytes], clock: GcClock) -> tuple[float, float, list[Any]]:
    loads = orjson.loads
    g0 = clock.total
    t0 = time.perf_counter()
    parsed = [loads(line) for line in lines]
    return time.perf_counter() - t0, clock.total - g0, parsed


def _simulate(
    parts: Batches, clock: GcClock
) -> tuple[tuple[float, float, float, float], toolkit.Simulation, list[dict[str, Any]]]:
    """((s simulate + plans + schema, gc s of it, s of .rows, gc s of it), simulation, rows)."""
    g0 = clock.total
    t0 = time.perf_counter()
    sim = toolkit.simulate(parts)
    sim.plans  # noqa: B018  (already computed; read to state what is measured)
    sim.schema  # noqa: B018  (the PyIceberg schema: a cached property)
    t1 = time.perf_counter()
    g1 = clock.total
    rows = sim.rows
    t2 = time.perf_counter()
    return (t1 - t0, g1 - g0, t2 - t1, clock.total - g1), sim, rows


def run(
    data: bytes,
    k: int = 10,
    repeat: int = 3,
    log: Callable[[str], None] = lambda s: None,
) -> tuple[Result, Batches]:
    """Time parsing ``data`` (JSON lines) and simulating its records in ``k`` batches,
    ``repeat`` times each; also returns the parsed batches."""
    if not gc.isenabled():
        gc.enable()
    lines = data.splitlines()
    n = len(lines)
    parse_s: list[float] = []
    parse_gc: list[float] = []
    parsed: list[Any] = []
    with GcClock() as clock:
        for i in range(repeat):
            parsed = []  # free the previous parse outside the timed region
            s, g, parsed = _parse(lines, clock)
            parse_s.append(s)
            parse_gc.append(g)
            log(f"parse #{i + 1}: {s:.3f} s (gc {g:.3f} s)")

        parts = batches(parsed, k)
        del parsed
        times: list[tuple[float, float, float, float]] = []
        columns = changes = 0
        for i in range(repeat):
            t, sim, rows = _simulate(parts, clock)
            if len(rows) != n:
                raise RuntimeError(f"simulate returned {len(rows)} rows for {n} records")
            times.append(t)
            columns = len(sim.table_schema.fields)
            changes = sum(len(p.changes) for p in sim.plans[1:])
            del sim, rows  # freed before the next timed run
            log(f"simulate #{i + 1}: {t[0]:.3f} s (gc {t[1]:.3f} s) + rows {t[2]:.3f} s")

    sim_s, sim_gc, rows_s, rows_gc = (list(c) for c in zip(*times, strict=True))
    both = [a + b for a, b in zip(sim_s, rows_s, strict=True)]
    both_gc = [a + b for a, b in zip(sim_gc, rows_gc, strict=True)]
    return Result(
        records=n,
        batches=k,
        repeat=repeat,
        bytes_per_record=len(data) / n,
        parse=Timing("orjson.loads per line", parse_s, parse_gc),
        simulate=Timing("simulate (plans + schema)", sim_s, sim_gc),
        rows=Timing(".rows only", rows_s, rows_gc),
        with_rows=Timing("simulate + rows", both, both_gc),
        columns=columns,
        changes=changes,
    ), parts


def report(res: Result) -> str:
    """A small text table of the result."""
    n = res.records
    head = (
        f"{n:,} records ({res.bytes_per_record:.0f} B/record), {res.batches} batches, "
        f"median of {res.repeat}; Python {platform.python_version()}, "
        f"orjson {orjson.__version__}\nfinal schema: {res.columns} top-level columns, "
        f"{res.changes} added by drift after the first batch"
    )
    table = [("measurement", "median s", "gc s", "records/s", "vs parse")]
    for t in (res.parse, res.simulate, res.rows, res.with_rows):
        ratio = "-" if t is res.parse or t is res.rows else f"{res.ratio(t):.3f}"
        table.append((t.name, f"{t.median:.3f}", f"{t.gc_median:.3f}", f"{t.rate(n):,.0f}", ratio))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i]) for i, c in enumerate(r))
        for r in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    ratio = res.ratio(res.with_rows)
    only = res.ratio(res.simulate)
    tail = (
        f"ratio simulate+rows / parse = {ratio:.3f} (target >= {TARGET_RATIO}): "
        f"{'PASS' if ratio >= TARGET_RATIO else 'MISS'}\n"
        f"ratio simulate only / parse = {only:.3f} "
        f"({'PASS' if only >= TARGET_RATIO else 'MISS'} without rows)"
    )
    return "\n".join([head, "", *lines, "", tail])


def profile(parts: Batches, top: int = 30) -> str:
    """cProfile of one ``simulate`` + ``.rows`` on parsed batches: top functions by own
    time, then by cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    sim = toolkit.simulate(parts)
    sim.schema  # noqa: B018
    sim.rows  # noqa: B018
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=200_000, help="records (default 200000)")
    ap.add_argument("--batches", type=int, default=10, help="batches (default 10)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs, median (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--quiet", action="store_true", help="print only the final table")
    ap.add_argument(
        "--profile",
        type=int,
        metavar="TOP",
        default=0,
        help="also print a cProfile (top TOP functions) of one simulate + rows",
    )
    args = ap.parse_args(argv)
    if args.records < 1 or args.batches < 1 or args.repeat < 1:
        ap.error("--records, --batches and --repeat must be >= 1")

    def log(s: str) -> None:
        if not args.quiet:
            print(s, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    data = to_jsonl(records(args.records, args.seed))
    log(
        f"generated {args.records:,} records ({len(data) / args.records:.0f} B each) "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    res, parts = run(data, args.batches, args.repeat, log)
    del data
    print(report(res))
    if args.profile:
        print()
        print(profile(parts, args.profile))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
