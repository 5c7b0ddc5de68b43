"""The preview's promise: ``toolkit.simulate`` of a JSON-lines file shows what
``toolkit.ingest`` of it lands (schema and rows, read back through Spark), and says the same
thing about what it could not write. Each case is a tiny file; each names the rule or the
decision (docs/rules.md) both follow."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import toolkit
from tests.integration.readers import canonical, read_spark, schema_summary
from toolkit.errors import OperationError
from toolkit.pipeline.ingest import IngestReport, ingest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

_names = itertools.count()


def _lines(tmp_path: Path, *records: Any) -> str:
    path = tmp_path / f"batch{next(_names)}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _fresh(lakehouse: Catalog, name: str) -> str:
    lakehouse.create_namespace_if_not_exists("agree")
    table = f"agree.{name}"
    if lakehouse.table_exists(table):
        lakehouse.drop_table(table)
    return table


def _ingest_all(
    lakehouse: Catalog, spark: SparkSession, table: str, paths: list[str], **options: Any
) -> list[IngestReport]:
    return [ingest(p, table, lakehouse, spark, batch_id=f"b{i}", **options)
            for i, p in enumerate(paths)]


def test_records_of_only_nulls_are_not_written_by_either_and_both_say_why(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # RULES 3.5: nulls make no column, and no data file holds a row without one
    paths = [_lines(tmp_path, {"a": None}, {"a": None}), _lines(tmp_path, {"a": 1})]
    table = _fresh(lakehouse, "nulls")
    reports = _ingest_all(lakehouse, spark, table, paths)
    sim = toolkit.simulate(paths)

    assert schema_summary(lakehouse.load_table(table).schema()) == schema_summary(sim.schema)
    landed = read_spark(spark, f"{lakehouse.name}.{table}")
    assert landed == canonical(sim.rows) == [{"a": 1}]
    assert [r.rows_written for r in reports] == [0, 1]
    told = ("2 records were not written to the table: it has no column yet, as every value "
            "so far was null or an empty record, which makes no column (RULES 3.5), and a row "
            "needs a column to be written (any record set aside is in the quarantine)")
    assert reports[0].warnings == (told,)
    assert [str(w) for w in sim.warnings] == [told]
    assert sim.summary == ("3 records in 2 batches, 1 written; 1 column; 2 not written, as "
                           "the table had no column yet")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        # long -> double is a rewrite: a new column under a new field ID (RULES 5)
        ({"id": 1.5, "s": "a"}, "id would be rewritten as a new column under a new field ID"),
        # a null makes the column optional under the widen policy (RULES 5)
        ({"id": None, "s": "a"}, "id is optional: identifier fields are required"),
    ],
    ids=["rewrite", "optional"],
)
def test_a_batch_changing_an_identifier_field_is_refused_by_both(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path, record: dict[str, Any],
    problem: str,
) -> None:
    # docs/rules.md, Identifier fields and the policies: refused whole, nothing committed
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "s", StringType(), required=False),
                    identifier_field_ids=[1])
    table = _fresh(lakehouse, "ids")
    lakehouse.create_table(table, schema)
    path = _lines(tmp_path, {"id": 7, "s": "b"}, record)

    with pytest.raises(OperationError, match=problem) as simulated:
        toolkit.simulate([path], schema, policy="widen", allow_rewrites=True)
    with pytest.raises(OperationError, match=problem) as ingested:
        ingest(path, table, lakehouse, spark, policy="widen", allow_rewrites=True)
    assert simulated.value.detail == ingested.value.detail
    assert "nothing was committed" in simulated.value.detail
    after = lakehouse.load_table(table)
    assert after.schema() == schema and after.current_snapshot() is None


def test_the_conversion_warning_shows_the_batch_s_own_first_value_on_both(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # docs/rules.md, conversion warnings: the example is the first value converted, not a
    # made-up one; the JVM tally's samples are the Python path's
    paths = [_lines(tmp_path, {"q": 2, "s": "x", "d": 0.5}),
             _lines(tmp_path, {"q": False, "s": 2.5, "d": True}, {"q": True, "s": 7})]
    table = _fresh(lakehouse, "examples")
    reports = _ingest_all(lakehouse, spark, table, paths)
    sim = toolkit.simulate(paths)
    expected = (
        "d: 1 boolean was written as a number (true -> 1.0); a contract `d=freeze` refuses it",
        "q: 2 booleans were written as numbers (false -> 0); a contract `q=freeze` refuses "
        "them",
        's: 1 double was written as text (2.5 -> "2.5"); a contract `s=freeze` refuses it',
        's: 1 long was written as text (7 -> "7"); a contract `s=freeze` refuses it',
    )
    assert reports[1].warnings == expected
    assert tuple(str(w) for w in sim.warnings) == expected
    assert read_spark(spark, f"{lakehouse.name}.{table}") == canonical(sim.rows)


def test_a_record_after_a_line_set_aside_has_one_number_in_every_report(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # docs/rules.md, Record numbers: a line set aside is no record, for the profile, the
    # plan, simulate and ingest alike; the quarantine names it by its line
    day1 = _lines(tmp_path, {"n": 1})
    day2 = tmp_path / "day2.jsonl"
    day2.write_text('{"n": 2}\n{"n": \n{"n": "two", "shipping": {"zip": "1"}}\n')
    table = _fresh(lakehouse, "numbers")
    reports = _ingest_all(lakehouse, spark, table, [day1, str(day2)])
    sim = toolkit.simulate([day1, str(day2)])
    said = "Batch 2 had `shipping` as a record, from record 2 "
    assert said in str(reports[1].plan) and said in str(sim.plans[1])
    assert reports[1].profile.first_seen("n", batch=1) == {"long": 1, "string": 2}
    assert toolkit.profile(str(day2)).first_seen("n") == {"long": 1, "string": 2}
    assert [q.detail[:7] for q in sim.quarantined] == ["line 2:"]


def test_leaves_of_lists_written_as_another_kind_are_warned_alike(
    lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    # RULES 1 writes each leaf as its array's widest type; the JVM tally counts leaves per
    # class (Tally.java) as the Python observation counts them per type: the same lines
    paths = [_lines(tmp_path, {"a": [1, 1.1, True], "r": {"t": [33, "x"]}}, {"a": [2.5]}),
             _lines(tmp_path, {"a": [False, 3, True], "r": {"t": [[7, "y"], 2**60]}},
                    {"a": [2**60, 1, None]})]
    table = _fresh(lakehouse, "leaves")
    reports = _ingest_all(lakehouse, spark, table, paths)
    sim = toolkit.simulate(paths)
    told = [tuple(str(w) for w in sim.warnings if w.batch == i) for i in (0, 1)]
    assert [r.warnings for r in reports] == told
    assert told == [
        ("a: 1 boolean inside lists was written as a number",
         "r.t: 1 long inside lists was written as text"),
        ("a: 2 booleans inside lists were written as numbers",
         "r.t: 2 longs inside lists were written as text"),
    ]
    assert read_spark(spark, f"{lakehouse.name}.{table}") == canonical(sim.rows)


@pytest.mark.parametrize("policy", ["widen", "upsolver"])
def test_values_of_a_record_set_aside_whole_are_not_warned_as_written(
    policy: str, lakehouse: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    """A record the policy sets aside after reading it (RULES 5's X cell under widen; a
    rare type under upsolver) wrote none of its values: its long `id` is not warned as
    "written as text"; the next record's is, with its own value as the example."""
    rare = {"rare_type_percent": 40.0} if policy == "upsolver" else {}
    first = _lines(tmp_path, {"id": "a", "d": True})
    second = _lines(tmp_path, {"id": 3, "d": [1.5]}, {"id": "b", "d": False},
                    {"id": "c", "d": True}, {"id": "e", "d": False})
    third = _lines(tmp_path, {"id": 3, "d": [1.5]}, {"id": 4, "d": True},
                   {"id": "f", "d": False}, {"id": "g", "d": True})
    table = _fresh(lakehouse, f"aside_{policy}")
    paths = [first, second, third]
    reports = _ingest_all(lakehouse, spark, table, paths, policy=policy, **rare)
    sim = toolkit.simulate(paths, policy=policy, **rare)
    assert [q.reason for q in sim.quarantined] == ["incompatible" if policy == "widen"
                                                    else "rare-type"] * 2
    assert [r.quarantined for r in reports] == [0, 1, 1]
    warned = [list(r.warnings) for r in reports]
    assert warned == [[], [], ['id: 1 long was written as text; a contract `id=freeze` '
                               'refuses it']]
    assert warned == [[str(w) for w in sim.warnings if w.batch == i] for i in range(3)]
    assert read_spark(spark, f"{lakehouse.name}.{table}") == canonical(sim.rows)
