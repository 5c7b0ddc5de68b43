"""The public contract of ``toolkit.simulate`` that other parts of the project rely on."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from pyiceberg.schema import Schema, index_by_id
from pyiceberg.types import ListType, LongType, NestedField, StructType

import toolkit
import toolkit.api
from toolkit.errors import NotARecordError, UnsupportedValueError


def test_simulate_returns_an_iceberg_schema_with_ids_docs_and_optional_columns() -> None:
    r = toolkit.simulate([[{"d": {"x": 1}, "size": 4}], [{"size": 2.3, "d": {"x": "s"}}]])
    assert isinstance(r.schema, Schema)
    assert [f.name for f in r.schema.fields] == ["d", "size", "size_double"]
    assert all(not f.required for f in r.schema.fields)
    assert r.schema.find_field("size_double").doc == "upsolver_evolved_from:size"
    assert r.schema.find_field("d.x_string").doc == "upsolver_evolved_from:x"
    assert sorted(index_by_id(r.schema)) == list(range(1, 6))  # unique, dense IDs


def test_simulate_rows_hold_every_column_in_input_order() -> None:
    r = toolkit.simulate([
        [{"n": 1, "d": {"x": 1}}, {"n": 2}],
        [{"d": {"y": "2024-01-02"}, "t": "2024-01-02T03:04:05Z"}],
    ])
    assert r.rows == [
        {"n": 1, "d": {"x": 1, "y": None}, "t": None},
        {"n": 2, "d": None, "t": None},
        {"n": None, "d": {"x": None, "y": dt.date(2024, 1, 2)},
         "t": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)},
    ]
    assert len(r.plans) == 2 and r.plans[1].batch == 1


def test_simulate_starts_from_a_declared_schema() -> None:
    declared = Schema(
        NestedField(7, "id", LongType(), required=True),
        NestedField(8, "tags", ListType(9, LongType(), element_required=False), required=False),
        NestedField(10, "m", StructType(NestedField(11, "k", LongType(), required=False)),
                    required=False),
    )
    r = toolkit.simulate([[{"id": 1, "tags": ["a"], "m": {"k": 1}}]], schema=declared)
    assert r.schema.find_field("id").required  # declared columns keep their contract
    assert r.schema.find_field("id").field_id == 7
    assert r.schema.find_field("tags_array_string").field_id == 12  # new IDs never reuse
    assert r.rows == [{"id": 1, "tags": None, "m": {"k": 1},
                       "tags_array_string": ["a"]}]


def test_simulate_options_date_detection_units_and_lattice() -> None:
    off = toolkit.simulate([[{"d": "2024-01-02"}]], detect_dates=False)
    assert str(off.schema.find_field("d").field_type) == "string"
    strict = toolkit.simulate([[{"t": "2024-01-02T00:00:00Z"}], [{"t": 5}]], lattice="strict")
    assert [f.name for f in strict.schema.fields] == ["t", "t_long", "t_string"]
    micros = toolkit.simulate([[{"t": 1}], [{"t": "1970-01-01T00:00:00.000002Z"}]],
                              timestamp_unit="us")
    assert micros.rows[1]["t"] == 2
    with pytest.raises(ValueError, match="unknown lattice 'loose'"):
        toolkit.simulate([[{"a": 1}]], lattice="loose")


def test_simulate_refuses_a_record_that_is_not_an_object_naming_batch_and_index() -> None:
    with pytest.raises(
        NotARecordError,
        match=r"batch 2, record 3 \(counting from 1\): expected a JSON object",
    ):
        toolkit.simulate([[{"a": 1}], [{"a": 1}, {"a": 2}, [1, 2]]], on_incompatible="fail")


def test_simulate_quarantines_a_record_that_is_not_an_object_by_default() -> None:
    sim = toolkit.simulate([[{"a": 1}], [{"a": 1}, {"a": 2}, [1, 2]]])
    assert [r["a"] for r in sim.rows] == [1, 1, 2]
    [q] = sim.quarantined
    assert (q.record, q.reason, q.batch, q.raw) == ([1, 2], "not-a-record", 1, "[1,2]")
    # its reason does not number it (a number would count from 0, or within a Spark chunk)
    assert q.detail == "expected a JSON object, got list [1, 2]"


def test_simulate_refuses_an_unknown_python_value_naming_the_field() -> None:
    with pytest.raises(UnsupportedValueError, match="field 'a': value"):
        toolkit.simulate([[{"a": object()}]], on_incompatible="fail")


def test_simulate_quarantines_only_the_record_holding_an_unknown_python_value() -> None:
    odd = object()
    sim = toolkit.simulate([[{"a": 1}, {"a": {"b": odd}}, {"a": 3}]])
    assert [r["a"] for r in sim.rows] == [1, 3]
    [q] = sim.quarantined
    assert (q.record, q.reason, q.field) == ({"a": {"b": odd}}, "invalid-value", "a.b")
    assert "field 'a.b': value" in q.detail


def test_an_unknown_value_inside_an_array_is_named_by_its_field() -> None:
    """It was named field '' before: the array's leaves were typed without their path."""
    delta = dt.timedelta(days=1)
    with pytest.raises(UnsupportedValueError, match=r"field 'tags\.a': value datetime\.timedelta"):
        toolkit.profile([{"tags": {"a": [[1], [delta]]}}])
    [q] = toolkit.simulate([[{"a": [delta], "b": 1}]]).quarantined
    assert (q.reason, q.field) == ("invalid-value", "a")


def test_a_mistyped_option_names_the_nearest_one_and_every_option() -> None:
    with pytest.raises(toolkit.ToolkitError) as caught:
        toolkit.simulate([{"a": 1}], detect_date=False)
    text = str(caught.value)
    assert "unknown option 'detect_date'; did you mean 'detect_dates'?" in text
    assert "rare_type_percent" in text and isinstance(caught.value, TypeError)


def test_a_table_name_without_namespace_says_how_to_write_it(tmp_path: Path) -> None:
    cat = toolkit.catalog(tmp_path / "lake")
    with pytest.raises(ValueError, match=r"name a table as 'namespace.name', e.g. 'db.orders'"):
        toolkit.plan_preview([{"a": 1}], "orders", cat)


def test_one_batch_of_records_given_alone_is_one_batch() -> None:
    assert toolkit.simulate([{"a": 1}, {"a": 2}]).rows == [{"a": 1}, {"a": 2}]


def test_an_item_that_is_no_record_is_named_with_its_position() -> None:
    expected = r"record 2 \(counting from 1\): expected a JSON object \(dict\), got int 7"
    with pytest.raises(toolkit.ToolkitError, match=expected):
        toolkit.profile([{"a": 1}, 7])


def test_a_value_among_records_is_set_aside_not_read_as_a_source() -> None:
    """One batch of records holding a value that is no record: the engine sets it aside
    (RULES 5), as the records source promises; it is not taken for a file or frame."""
    run = toolkit.simulate([{"a": 1}, 5, {"a": 2}])
    assert run.rows == [{"a": 1}, {"a": 2}]
    assert [q.reason for q in run.quarantined] == ["not-a-record"]


def test_every_public_name_resolves_and_none_loads_until_used() -> None:
    """``import toolkit`` (and the command line's ``--help``, or the error a typo gives)
    loads none of PyIceberg, Spark, sqlglot or Arrow: each public name loads what it needs
    when first used, and every name in ``__all__`` is there."""
    heavy = ("pyiceberg", "pyspark", "sqlglot", "pyarrow", "sqlalchemy")
    script = (
        "import sys, toolkit, toolkit.cli\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "missing = [n for n in toolkit.__all__ if getattr(toolkit, n, None) is None]\n"
        "print(missing, 'pyiceberg' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["[]", "[] True"]
    assert toolkit.simulate is toolkit.api.simulate
    assert toolkit.ops.add is not None
