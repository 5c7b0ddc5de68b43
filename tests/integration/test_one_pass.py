"""The one-pass steady state: a batch of JSON lines that fits its table's schema is routed
and tallied in the same pass (toolkit.spark.batches.write_one_pass), and must write
exactly what the planned path (observe, plan, route) writes. Differential: the same
random batches into two tables, one with the one-pass path switched off."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog

import toolkit
from tests.integration.readers import canonical, read_spark, schema_summary
from toolkit.iceberg.ledger import WRITE_ID_PROPERTY, ingested_batches, main_snapshots
from toolkit.pipeline import ingest as pipeline
from toolkit.pipeline.ingest import IngestReport, ingest
from toolkit.spark.router import KIND_CODES_PROPERTY, kept_codes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def value(rng: random.Random, drift: float) -> Any:
    """A value of a field that is mostly a long, and drifts with probability ``drift``."""
    if rng.random() >= drift:
        return rng.choice([rng.randint(-5, 5), None])
    return rng.choice(["text", 2.5, True, 2**60 + 1, [1, 2], {"x": 1}, [[1]], "2024-01-02"])


def record(rng: random.Random, drift: float) -> dict[str, Any]:
    r: dict[str, Any] = {"id": rng.randint(0, 10**6)}
    for key in ("a", "b"):
        if rng.random() < 0.9:
            r[key] = value(rng, drift)
    if rng.random() < 0.8:
        r["nested"] = {"x": value(rng, drift), "name": rng.choice(["p", "q"])}
    if rng.random() < 0.5:
        r["tags"] = rng.choice([["t"], [], ["t", "u"], None])
    if rng.random() < drift / 4:
        r[f"new_{rng.randint(0, 3)}"] = 1
    return r


def batches(seed: int, n: int = 7, size: int = 15) -> list[list[dict[str, Any]]]:
    """A stream whose batches mostly fit what came before: a few drift, most do not."""
    rng = random.Random(seed)
    return [[record(rng, 0.4 if rng.random() < 0.3 else 0.0) for _ in range(size)]
            for _ in range(n)]


def feed(
    lake: Catalog, spark: SparkSession, tmp: Path, name: str, stream: list[list[dict[str, Any]]]
) -> list[IngestReport]:
    out = []
    for i, batch in enumerate(stream):
        path = tmp / f"{name}-{i}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in batch))
        out.append(ingest(str(path), f"onepass.{name}", lake, spark, batch_id=f"b{i}"))
    return out


def arrived_everywhere(lake: Catalog, name: str) -> dict[str, dict[str, int]]:
    stats = toolkit.statistics(lake.load_table(f"onepass.{name}"))
    return {".".join(p): stats.arrived(p) for p in stats.arrivals.paths}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_pass_writes_exactly_what_the_planned_path_writes(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    seed: int,
) -> None:
    stream = batches(seed)
    one = feed(lakehouse, spark, tmp_path, f"one_{seed}", stream)
    with monkeypatch.context() as m:
        m.setattr(pipeline, "_one_pass_codes", lambda *a: None)
        two = feed(lakehouse, spark, tmp_path, f"two_{seed}", stream)
    assert not any(r.one_pass for r in two)

    # the same plans, rows, schema, and what each batch brought
    assert [r.plan.changes for r in one] == [r.plan.changes for r in two]
    assert [r.rows_written for r in one] == [r.rows_written for r in two] == [
        len(b) for b in stream]
    a, b = (lakehouse.load_table(f"onepass.{n}_{seed}") for n in ("one", "two"))
    assert schema_summary(a.schema()) == schema_summary(b.schema())
    assert read_spark(spark, f"{lakehouse.name}.onepass.one_{seed}") == read_spark(
        spark, f"{lakehouse.name}.onepass.two_{seed}")
    assert read_spark(spark, f"{lakehouse.name}.onepass.one_{seed}") == canonical(
        toolkit.simulate(stream).rows)
    assert arrived_everywhere(lakehouse, f"one_{seed}") == arrived_everywhere(
        lakehouse, f"two_{seed}")

    # a batch that needed a change took the planned path; the others, after the first
    # (which creates the table), were read once
    for r in one:
        if r.plan.changed:
            assert not r.one_pass
    assert any(r.one_pass for r in one), "no batch of the stream took the one-pass path"
    # nothing staged by a pass that was done again stays behind
    published = {s.snapshot_id for s in main_snapshots(a)}
    assert {s.snapshot_id for s in a.metadata.snapshots} == published
    assert len(published) == len(stream)


def test_a_batch_needing_a_change_takes_the_planned_path(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    fits = [{"n": 1, "s": "a"}, {"n": 2}]
    drifts = [{"n": "three", "s": "b"}]
    reports = feed(lakehouse, spark, tmp_path, "drift", [fits, fits, drifts, fits])
    assert [r.one_pass for r in reports] == [False, True, False, True]
    assert [len(r.plan.changes) for r in reports] == [2, 0, 1, 0]
    table = lakehouse.load_table("onepass.drift")
    assert [c.name for c in table.schema().fields] == ["n", "s", "n_string"]
    # the pass that was done again left no staged snapshot
    writes = [s.summary.additional_properties.get(WRITE_ID_PROPERTY)
              for s in table.metadata.snapshots]
    assert len(writes) == 4
    assert read_spark(spark, f"{lakehouse.name}.onepass.drift") == canonical(
        toolkit.simulate([fits, fits, drifts, fits]).rows)


def test_a_kind_the_table_did_not_foresee_is_routed_again_on_the_same_tally(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list whose leaves are longs beyond 2**53 has its own kind code: the table foresees
    it only once a batch showed it. It needs no change (a long list holds it), yet the
    first pass wrote it as null, so the batch is routed again, observed only once."""
    first = [{"k": [1, 2]}]
    lossy = [{"k": [1, 2**60 + 1]}]
    observed = []
    made = pipeline.observe_on_spark

    def counting(*args: Any) -> Any:
        observed.append(1)
        return made(*args)

    monkeypatch.setattr(pipeline, "observe_on_spark", counting)
    reports = feed(lakehouse, spark, tmp_path, "lossy", [first, lossy, lossy])
    assert [r.one_pass for r in reports] == [False, False, True]
    assert [r.plan.changed for r in reports] == [True, False, False]
    assert len(observed) == 1  # the first batch, which created the table
    assert read_spark(spark, f"{lakehouse.name}.onepass.lossy") == canonical(
        toolkit.simulate([first, lossy, lossy]).rows)


def test_an_empty_batch_writes_nothing_on_either_path(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    reports = feed(lakehouse, spark, tmp_path, "empty", [[{"n": 1}], [{"n": 2}]])
    assert reports[1].one_pass
    path = tmp_path / "blank.jsonl"
    path.write_text("\n\n")
    report = ingest(str(path), "onepass.empty", lakehouse, spark, batch_id="blank")
    assert (report.rows_written, report.snapshot_id) == (0, None)
    table = lakehouse.load_table("onepass.empty")
    assert "blank" not in ingested_batches(table)  # the batch id may come again, with data
    assert {s.snapshot_id for s in table.metadata.snapshots} == {
        s.snapshot_id for s in main_snapshots(table)}  # nothing staged stays behind


def test_a_table_another_writer_changed_during_the_pass_is_planned_again(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer adds a column while the batch is routed in one pass: the staged rows
    were routed without it, so the batch is planned again against the table as it is now
    and routed again, as the planned path does when the table moves under its plan."""
    first = [[{"a": 1}], [{"a": 2}]]
    made = pipeline.write_one_pass

    def another_writer_meanwhile(*args: Any) -> Any:
        out = made(*args)
        toolkit.evolve(lakehouse, "onepass.moved", [toolkit.ops.add("b", "string")])
        return out

    reports = feed(lakehouse, spark, tmp_path, "moved", first)
    assert reports[1].one_pass
    monkeypatch.setattr(pipeline, "write_one_pass", another_writer_meanwhile)
    path = tmp_path / "late.jsonl"
    path.write_text('{"a": 3, "b": "x"}\n')
    late = ingest(str(path), "onepass.moved", lakehouse, spark, batch_id="late")
    assert not late.one_pass and late.attempts == 2
    assert late.rows_written == 1
    rows = sorted(read_spark(spark, f"{lakehouse.name}.onepass.moved"), key=lambda r: r["a"])
    assert rows[-1] == {"a": 3, "b": "x"}
    table = lakehouse.load_table("onepass.moved")
    assert {s.snapshot_id for s in table.metadata.snapshots} == {
        s.snapshot_id for s in main_snapshots(table)}


def test_the_array_shapes_a_table_saw_are_kept_in_its_properties(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """The one-pass routing of a table with list columns foresees the shapes of arrays its
    batches brought, which the table keeps (a job per batch, a new process, sees them):
    a table that keeps none yet (written before they were kept) takes two passes once."""
    fits = [{"k": [1, 2], "s": "a"}, {"k": [[3]], "s": None}]
    feed(lakehouse, spark, tmp_path, "kept", [fits])
    table = lakehouse.load_table("onepass.kept")
    kept = kept_codes(table.properties)
    assert set(kept) == {("k",)} and len(kept[("k",)]) == 2  # [long] and [[long]]
    assert json.loads(table.properties[KIND_CODES_PROPERTY]) == [
        [["k"], sorted(kept[("k",)])]]

    with table.transaction() as tx:  # as a table written before the codes were kept
        tx.remove_properties(KIND_CODES_PROPERTY)
    again = [ingest(str(tmp_path / "kept-0.jsonl"), "onepass.kept", lakehouse, spark,
                    batch_id=f"again-{i}") for i in range(2)]
    assert [r.one_pass for r in again] == [False, True]
    assert kept_codes(lakehouse.load_table("onepass.kept").properties) == kept
    assert read_spark(spark, f"{lakehouse.name}.onepass.kept") == canonical(
        toolkit.simulate([fits, fits, fits]).rows)
