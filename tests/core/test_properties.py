"""Property-based tests of RULES 1-4 over random drifting records (hypothesis).

1. Nothing lost: every input value is recovered exactly from at least one column of its
   family in its row (RULES 2 principle, RULES 3.1). The oracle here is independent of the
   engine: it parses ISO texts and computes every lossless encoding itself.
2. Order independence: shuffling the records of each batch changes neither the schema
   after any batch nor the rows, up to the same permutation (RULES 3.3).
3. Replaying an applied batch adds no column (RULES 3.3, seed rule 2).
4. Every schema is a valid Iceberg schema: unique field IDs and full names, IDs and types
   stable from plan to plan, a plan's changes exactly the columns it adds, columns
   optional, names unique case-insensitively per struct, no empty struct, and PyIceberg /
   PyArrow accept it and round-trip it (RULES 3.5, 4, 6).

``TOOLKIT_HYPOTHESIS_EXAMPLES=5000 pytest tests/core/test_properties.py`` runs every
property with that many examples instead of the defaults below.

The minimal examples these properties found are kept at the end as plain tests.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.types import ListType, NestedField, StructType

import toolkit
from tests.core import strategies as gen
from toolkit.core.values.types import Column, ListOf, Struct
from toolkit.iceberg.schema import from_iceberg, to_iceberg

DOC_PREFIX = "upsolver_evolved_from:"  # RULES 4, spelled here rather than imported
_ENV_EXAMPLES = os.environ.get("TOOLKIT_HYPOTHESIS_EXAMPLES")


def examples(default: int) -> settings:
    """Settings for one property: ``default`` examples unless TOOLKIT_HYPOTHESIS_EXAMPLES
    asks for another number."""
    return settings(
        max_examples=int(_ENV_EXAMPLES) if _ENV_EXAMPLES else default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ============================================================================ the oracle
# The decoding rules, written without the engine's parsers and converters.

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DATE_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_TIMESTAMP_TEXT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?"
    r"(Z|([+-])(\d{2})(?::?(\d{2}))?)?",
    re.ASCII,
)


def iso_date(text: str) -> dt.date | None:
    m = _DATE_TEXT.fullmatch(text)
    if m is None:
        return None
    try:
        return dt.date(*map(int, m.groups()))
    except ValueError:
        return None


def iso_instant(text: str) -> dt.datetime | None:
    """The aware UTC instant of an ISO date-time text (no zone: UTC), or None (not a
    date-time, or an instant outside years 1-9999)."""
    spelled = local_and_offset(text)
    if spelled is None:
        return None
    local, offset = spelled
    try:
        return (local - (offset or dt.timedelta(0))).replace(tzinfo=dt.UTC)
    except OverflowError:
        return None


def local_and_offset(text: str) -> tuple[dt.datetime, dt.timedelta | None] | None:
    """The wall-clock time and offset (None: no zone) an ISO date-time text spells."""
    m = _TIMESTAMP_TEXT.fullmatch(text)
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, zone, sign, oh, om = m.groups()
    try:
        local = dt.datetime(
            int(y), int(mo), int(d), int(h), int(mi), int(s or 0), int((frac or "").ljust(6, "0"))
        )
    except ValueError:
        return None
    if not zone:
        return local, None
    offset = dt.timedelta(0)
    if zone != "Z":
        offset = dt.timedelta(hours=int(oh), minutes=int(om or 0))
        offset = offset if sign == "+" else -offset
    return local, offset


def utc_of(v: dt.datetime) -> dt.datetime | None:
    """A Python datetime's UTC instant (naive: UTC), or None outside years 1-9999."""
    try:
        return v.replace(tzinfo=dt.UTC) if v.tzinfo is None else v.astimezone(dt.UTC)
    except OverflowError:
        return None


def text_means(text: str, v: dt.date) -> bool:
    """Whether a text spells the Python date / datetime ``v`` (RULES 2: dates as
    ``YYYY-MM-DD``, timestamps as ISO-8601)."""
    if type(v) is dt.date:
        return iso_date(text) == v
    assert isinstance(v, dt.datetime)
    utc = utc_of(v)
    if utc is not None:
        return iso_instant(text) == utc
    # an instant out of range can only keep its own wall-clock time and offset
    return local_and_offset(text) == (v.replace(tzinfo=None), v.utcoffset())


def epoch_ms(instant: dt.datetime) -> int | None:
    """Milliseconds since the epoch, when the instant has no sub-millisecond digits."""
    micros = (instant - EPOCH) // dt.timedelta(microseconds=1)
    return micros // 1000 if micros % 1000 == 0 else None


def double_text(f: float) -> str:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return repr(f)


def encodings(v: Any, detect_dates: bool) -> dict[str, list[Any]]:
    """Iceberg primitive type -> the stored values that decode back to the primitive v."""
    if type(v) is bool:
        text = "true" if v else "false"
        return {"boolean": [v], "long": [int(v)], "double": [float(v)], "string": [text]}
    if type(v) is int:
        if not INT64_MIN <= v <= INT64_MAX:
            return {"string": [str(v)]}  # RULES 1: beyond 64 bits, decimal digits
        out: dict[str, list[Any]] = {"long": [v], "string": [str(v)]}
        if int(float(v)) == v:
            out["double"] = [float(v)]
        return out
    if type(v) is float:
        return {"double": [v], "string": [double_text(v)]}
    if type(v) is dt.date:
        return instant_encodings(dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC), date=v)
    if type(v) is dt.datetime:
        utc = utc_of(v)
        return {} if utc is None else instant_encodings(utc)
    assert type(v) is str, v
    out = {"string": [v]}  # ISO texts keep their own spelling in string columns
    if not detect_dates:
        return out
    day = iso_date(v)
    if day is not None:
        return instant_encodings(
            dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC), date=day, text=v
        )
    instant = iso_instant(v)
    return out if instant is None else instant_encodings(instant, text=v)


def instant_encodings(
    instant: dt.datetime, date: dt.date | None = None, text: str | None = None
) -> dict[str, list[Any]]:
    """A date (at midnight UTC) or a timestamp: as itself, in a timestamptz column, as
    epoch milliseconds when exact (RULES 2), and its own text if it came as one."""
    out: dict[str, list[Any]] = {"timestamptz": [instant]}
    if date is not None:
        out["date"] = [date]
    if text is not None:
        out["string"] = [text]
    ms = epoch_ms(instant)
    if ms is not None:
        out["long"] = [ms]
        out["double"] = [float(ms)]
    return out


def same(stored: Any, expected: Any) -> bool:
    """Strict equality: same Python type, NaN equals NaN, -0.0 differs from 0.0, and a
    timestamptz value must be an aware UTC datetime."""
    if type(stored) is not type(expected):
        return False
    if type(expected) is float:
        if math.isnan(expected):
            return math.isnan(stored)
        return stored == expected and math.copysign(1, stored) == math.copysign(1, expected)
    if type(expected) is dt.datetime:
        return stored.utcoffset() == dt.timedelta(0) and stored == expected
    if type(expected) is dict:
        return stored.keys() == expected.keys() and all(
            same(stored[k], expected[k]) for k in expected
        )
    if type(expected) is list:
        return len(stored) == len(expected) and all(map(same, stored, expected))
    return bool(stored == expected)


def depth(v: Any) -> int:
    """RULES 1: an array's dimension is its nesting depth ([] has dimension 1)."""
    if type(v) is not list:
        return 0
    return 1 + max((depth(x) for x in v), default=0)


def dim(t: Any) -> int:
    return 1 + dim(t.element) if isinstance(t, ListOf) else 0


def wrapped(v: Any, times: int) -> Any:
    for _ in range(times):
        v = [v]
    return v


def ragged_to(v: list[Any], d: int) -> list[Any]:
    """RULES 1: a ragged array takes the largest depth; shallower leaves are wrapped,
    null elements stay null, empty arrays stay empty."""
    return [
        ragged_to(x, d - 1) if type(x) is list else None if x is None else wrapped(x, d - 1)
        for x in v
    ]


def array_leaves(v: list[Any]) -> Iterator[Any]:
    for x in v:
        if type(x) is list:
            yield from array_leaves(x)
        elif x is not None:
            yield x


def is_mixed(v: Any) -> bool:
    """An array whose leaves are records and primitives (docs/rules.md, mixed arrays)."""
    if type(v) is not list:
        return False
    kinds = {type(x) is dict for x in array_leaves(v)}
    return kinds == {True, False}


def split(v: list[Any], *, keep_records: bool) -> list[Any]:
    """A mixed array at full depth with only its records (or only its primitives), the
    other leaves null at their positions (a shallower leaf is wrapped, as RULES 1 wraps
    it: its null is too)."""
    def leaf(x: Any) -> Any:
        return x if (type(x) is dict) == keep_records else None

    def walk(x: Any) -> Any:
        if type(x) is list:
            return [walk(y) for y in x]
        return None if x is None else leaf(x)

    return [walk(x) for x in v]


def informative(v: Any) -> bool:
    """False for values that hold nothing but records without a non-null field (``{}``,
    ``{"x": None}``, ``[{}]``): null and missing are the same (RULES 1), such records
    create no column (the project's documented choice; a data file cannot hold an empty
    struct), so there is nothing to recover."""
    if v is None:
        return False
    if type(v) is dict:
        return any(map(informative, v.values()))
    if type(v) is list:
        leaves = list(array_leaves(v))
        records = [x for x in leaves if type(x) is dict]
        # an array of primitives, even an empty one, is a value (RULES 1)
        return len(records) < len(leaves) or not records or any(map(informative, records))
    return True


def family(struct: Struct, key: str) -> list[Column]:
    """The columns of ``key``'s family in one struct: doc ``upsolver_evolved_from:key``,
    or no such doc and the name ``key`` (RULES 4)."""
    return [
        c
        for c in struct.fields
        if c.doc == DOC_PREFIX + key or (not (c.doc or "").startswith(DOC_PREFIX) and c.name == key)
    ]


class Oracle:
    """Decides whether a stored row recovers an input record (RULES 2: every input value
    can be recovered exactly from at least one column of its row)."""

    def __init__(self, detect_dates: bool) -> None:
        self.detect_dates = detect_dates

    def lost(self, record: dict[str, Any], struct: Struct, row: dict[str, Any]) -> list[str]:
        """The keys of ``record`` whose value no column of their family recovers."""
        if list(row) != [c.name for c in struct.fields]:
            return [f"<row keys {list(row)} are not the columns {list(struct.by_name())}>"]
        out = []
        for key, v in record.items():
            if not informative(v):
                continue
            cols = family(struct, key)
            if is_mixed(v):
                if not self.mixed_recovered(v, cols, row):
                    out.append(f"{key}={v!r} not split into {[row[c.name] for c in cols]}")
                continue
            if not any(self.recovered(v, c.type, row[c.name]) for c in cols):
                seen = {c.name: row[c.name] for c in cols}
                out.append(f"{key}={v!r} not in {seen}")
        return out

    def mixed_recovered(self, v: list[Any], cols: list[Column], row: dict[str, Any]) -> bool:
        """An array mixing records and primitives (docs/rules.md): one record column holds
        its records and one primitive column its primitives, at the same positions of the
        array at its full depth (RULES 1), nulls elsewhere; records with nothing in them
        (``{}``) may have no column yet."""
        full = ragged_to(v, depth(v))
        records = split(full, keep_records=True)
        primitives = split(full, keep_records=False)
        has = any(informative(x) for x in array_leaves(v) if type(x) is dict)
        return any(self.recovered(primitives, c.type, row[c.name]) for c in cols) and (
            not has or any(self.recovered(records, c.type, row[c.name]) for c in cols)
        )

    def recovered(self, v: Any, t: Any, stored: Any) -> bool:
        """Whether ``stored``, in a column of type ``t``, decodes back to ``v``."""
        d = depth(v)
        if d > dim(t):
            return False
        for _ in range(dim(t) - d):  # RULES 3: a value of lower dimension is wrapped
            if type(stored) is not list or len(stored) != 1:
                return False
            stored, t = stored[0], t.element
        if d == 0:
            return self.leaf(v, t, stored, in_array=False)
        return self.array(ragged_to(v, d), t, stored)

    def array(self, v: list[Any], t: Any, stored: Any) -> bool:
        if not isinstance(t, ListOf) or type(stored) is not list or len(stored) != len(v):
            return False
        for x, y in zip(v, stored, strict=True):
            if x is None:
                ok = y is None
            elif type(x) is list:
                ok = self.array(x, t.element, y)
            else:
                ok = self.leaf(x, t.element, y, in_array=True)
            if not ok:
                return False
        return True

    def leaf(self, v: Any, t: Any, stored: Any, *, in_array: bool) -> bool:
        if stored is None:
            return False
        if type(v) is dict:  # records are never written into string columns (RULES 3)
            return isinstance(t, Struct) and type(stored) is dict and not self.lost(v, t, stored)
        if not isinstance(t, str):
            return False
        if isinstance(v, dt.date) and t == "string":  # Python dates and datetimes
            return type(stored) is str and text_means(stored, v)
        return any(same(stored, e) for e in encodings(v, self.detect_dates).get(t, ()))


# ============================================================================ the checks


def written_records(batches: list[Any], result: toolkit.Simulation) -> list[Any]:
    """The records ``result`` wrote rows for: a batch that left the table without a column
    wrote none, and its warning counts them (RULES 3.5: only nulls and empty records)."""
    unwritten = [b for b, p in zip(batches, result.plans, strict=True) if not p.after.fields]
    told = [w for w in result.warnings if type(w).__name__ == "UnwrittenRecords"]
    assert sum(w.count for w in told) == sum(map(len, unwritten))  # type: ignore[union-attr]
    return [r for b, p in zip(batches, result.plans, strict=True) if p.after.fields for r in b]


def check_nothing_lost(batches: list[gen.Batch], **options: Any) -> toolkit.Simulation:
    result = toolkit.simulate(batches, **options)
    records = written_records(batches, result)
    assert len(result.rows) == len(records)
    oracle = Oracle(options.get("detect_dates", True))
    for i, (record, row) in enumerate(zip(records, result.rows, strict=True)):
        lost = oracle.lost(record, result.table_schema, row)
        assert not lost, f"record {i}: {lost}\nschema:\n{result.schema}"
    return result


def canon(v: Any) -> Any:
    """A strictly typed form of a row value: NaN equals NaN, 1 differs from True and 1.0."""
    if type(v) is dict:
        return ("dict", tuple((k, canon(x)) for k, x in v.items()))
    if type(v) is list:
        return ("list", tuple(canon(x) for x in v))
    if type(v) is float:
        return ("float", "nan" if math.isnan(v) else v.hex())
    if type(v) is dt.datetime:
        return ("datetime", v.isoformat())
    return (type(v).__name__, v)


def check_same_under_shuffle(
    batches: list[gen.Batch], perms: list[list[int]], **options: Any
) -> None:
    shuffled = [[b[j] for j in p] for b, p in zip(batches, perms, strict=True)]
    base = toolkit.simulate(batches, **options)
    other = toolkit.simulate(shuffled, **options)
    assert [p.after for p in other.plans] == [p.after for p in base.plans]
    assert other.table_schema == base.table_schema
    # (PyIceberg's Schema.__eq__ calls an empty schema unequal to itself: compare structs)
    assert other.schema.as_struct() == base.schema.as_struct()
    expected, offset = [], 0  # row k of a shuffled batch is row perm[k] of the original
    for b, p, plan in zip(batches, perms, base.plans, strict=True):
        if not plan.after.fields:
            continue  # no row written (RULES 3.5): see written_records
        expected += [base.rows[offset + j] for j in p]
        offset += len(b)
    assert [canon(r) for r in other.rows] == [canon(r) for r in expected]


def check_replay(batches: list[gen.Batch], j: int, **options: Any) -> None:
    base = toolkit.simulate(batches, **options)
    again = toolkit.simulate([*batches, batches[j]], **options)
    assert not again.plans[-1].changed, str(again.plans[-1])
    assert again.table_schema == base.table_schema


def id_paths(t: Any, parent: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], int, str]]:
    """(Iceberg full name, field ID, type tag) of every field and list element in a type;
    list elements are named ``element``, as Iceberg does."""
    if isinstance(t, ListOf):
        path = (*parent, "element")
        yield path, t.element_id, _tag(t.element)
        yield from id_paths(t.element, path)
    elif isinstance(t, Struct):
        for c in t.fields:
            path = (*parent, c.name)
            yield path, c.id, _tag(c.type)
            yield from id_paths(c.type, path)


def _tag(t: Any) -> str:
    return "list" if isinstance(t, ListOf) else "struct" if isinstance(t, Struct) else str(t)


def column_paths(struct: Struct, parent: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The path of every column, by names only (list levels skipped)."""
    out = set()
    for c in struct.fields:
        out.add((*parent, c.name))
        leaf = c.type
        while isinstance(leaf, ListOf):
            leaf = leaf.element
        if isinstance(leaf, Struct):
            out |= column_paths(leaf, (*parent, c.name))
    return out


def check_valid_schema(s: Struct) -> None:
    """RULES 3.5, 4, 6: a schema Iceberg, PyIceberg and Parquet accept."""
    named = list(id_paths(s))
    ids = [fid for _, fid, _ in named]
    assert len(ids) == len(set(ids)), f"duplicate field IDs in {sorted(ids)}"
    assert all(fid > 0 for fid in ids)
    full = [".".join(p) for p, _, _ in named]
    assert len(full) == len(set(full)), f"two fields share an Iceberg full name: {full}"

    def walk(t: Any) -> None:
        if isinstance(t, ListOf):
            walk(t.element)
        elif isinstance(t, Struct):
            assert t is s or t.fields, "an empty struct column (Parquet cannot write one)"
            lower = [c.name.lower() for c in t.fields]
            assert len(lower) == len(set(lower)), f"names collide case-insensitively: {lower}"
            for c in t.fields:
                assert not c.required, f"column {c.name} is required"  # RULES 3.5
                if c.doc is not None and c.doc.startswith(DOC_PREFIX):
                    assert c.name.startswith(c.doc[len(DOC_PREFIX) :]), (c.name, c.doc)
                walk(c.type)

    walk(s)
    schema = to_iceberg(s)  # PyIceberg indexes names and IDs: duplicates are refused
    assert from_iceberg(schema) == s
    assert schema.highest_field_id == max(ids, default=0)
    for fid in ids:
        schema.find_field(fid)

    def optional(f: NestedField) -> None:
        assert not f.required
        if isinstance(f.field_type, ListType):
            assert not f.field_type.element_required
            optional(f.field_type.element_field)
        elif isinstance(f.field_type, StructType):
            for g in f.field_type.fields:
                optional(g)

    for f in schema.fields:
        optional(f)
    schema_to_pyarrow(schema)


def check_plans(result: toolkit.Simulation) -> None:
    """IDs and types of existing fields never change; new IDs are fresh; a plan's changes
    are exactly the columns it adds (RULES 3.5, 6)."""
    plans = result.plans
    for prev, nxt in zip(plans, plans[1:], strict=False):
        assert prev.after == nxt.before
    assert not plans or plans[-1].after == result.table_schema
    for plan in plans:
        check_valid_schema(plan.after)
        before = {p: (fid, tag) for p, fid, tag in id_paths(plan.before)}
        after = {p: (fid, tag) for p, fid, tag in id_paths(plan.after)}
        for path, (fid, tag) in before.items():
            assert path in after, f"{path} vanished in batch {plan.batch}"
            assert after[path][0] == fid, f"{path} changed ID in batch {plan.batch}"
            assert after[path][1] == tag, f"{path} changed type in batch {plan.batch}"
        top = max((fid for fid, _ in before.values()), default=0)
        assert all(fid > top for p, (fid, _) in after.items() if p not in before)

        old, new = column_paths(plan.before), column_paths(plan.after)
        added = {p for p in new if p not in old and (len(p) == 1 or p[:-1] in old)}
        # a change's path may spell list levels ("element"); no generated key is "element"
        changed = {tuple(n for n in c.path if n != "element") for c in plan.changes}
        assert changed == added, str(plan)
        assert plan.changed == bool(added)


# ============================================================================ properties


@examples(600)
@given(batches=gen.batches, options=gen.options)
def test_nothing_is_lost(batches: list[gen.Batch], options: dict[str, Any]) -> None:
    check_nothing_lost(batches, **options)


@examples(300)
@given(batches=gen.batches, options=gen.options, data=st.data())
def test_batch_result_ignores_record_order(
    batches: list[gen.Batch], options: dict[str, Any], data: st.DataObject
) -> None:
    perms = [
        data.draw(st.permutations(range(len(b))), label=f"order of batch {i}")
        for i, b in enumerate(batches)
    ]
    check_same_under_shuffle(batches, perms, **options)


@examples(300)
@given(batches=gen.batches, options=gen.options, data=st.data())
def test_replaying_a_batch_adds_no_column(
    batches: list[gen.Batch], options: dict[str, Any], data: st.DataObject
) -> None:
    check_replay(batches, data.draw(st.integers(0, len(batches) - 1), label="replayed"), **options)


@examples(400)
@given(batches=gen.batches, options=gen.options)
def test_every_schema_is_a_valid_iceberg_schema(
    batches: list[gen.Batch], options: dict[str, Any]
) -> None:
    result = toolkit.simulate(batches, **options)
    check_plans(result)
    check_valid_schema(result.table_schema)
    assert result.schema.as_struct() == to_iceberg(result.table_schema).as_struct()


# ============================================================================ the oracle itself


@pytest.mark.parametrize(
    ("value", "column_type", "stored", "ok"),
    [
        (True, "long", 1, True),
        (True, "long", True, False),
        (1, "boolean", True, False),
        (2**53 + 1, "double", float(2**53), False),
        (2**70, "string", str(2**70), True),
        (float("nan"), "string", "NaN", True),
        (float("nan"), "double", float("nan"), True),
        (-0.0, "double", 0.0, False),
        ("2024-01-02", "date", dt.date(2024, 1, 2), True),
        ("2024-01-02", "timestamptz", dt.datetime(2024, 1, 2, tzinfo=dt.UTC), True),
        ("2024-01-02", "long", 1704153600000, True),
        ("2024-01-02T03:04:05.5+01:00", "long", 1704161045500, True),
        ("2024-01-02T03:04:05.0005Z", "long", 1704164645000, False),
        ("2024-01-02 03:04", "timestamptz", dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.UTC), True),
        ("2024-01-02 03:04", "timestamptz", dt.datetime(2024, 1, 2, 3, 4), False),
        ("0001-01-01T00:30:00+01:00", "string", "0001-01-01T00:30:00+01:00", True),
        ([1, [2]], ListOf(1, ListOf(2, "long")), [[1], [2]], True),
        ([1, [2]], ListOf(1, ListOf(2, ListOf(3, "long"))), [[[1], [2]]], True),
        ([None, []], ListOf(1, ListOf(2, "string")), [None, []], True),
        (5, ListOf(1, "long"), [5], True),
        # records are never written into string columns, not even inside arrays (RULES 3)
        ([{"a": 1}, 2], ListOf(1, "string"), ['{"a":1}', "2"], False),
        ({"a": 1}, "string", '{"a":1}', False),
    ],
)
def test_oracle_decodes(value: Any, column_type: Any, stored: Any, ok: bool) -> None:
    assert Oracle(detect_dates=True).recovered(value, column_type, stored) is ok


_R = Column(1, "m", ListOf(2, Struct((Column(3, "a", "long"),))))
_R2 = Column(1, "m", ListOf(2, ListOf(3, Struct((Column(4, "a", "long"),)))))
_S = Column(5, "m_array_string", ListOf(6, "string"), "upsolver_evolved_from:m")
_S2 = Column(5, "m_array2_string", ListOf(6, ListOf(7, "string")), "upsolver_evolved_from:m")


@pytest.mark.parametrize(
    ("value", "cols", "stored", "ok"),
    [
        ([{"a": 1}, "x"], [_R, _S], [[{"a": 1}, None], [None, "x"]], True),
        ([{"a": 1}, "x"], [_R, _S], [[{"a": 1}, None], None], False),  # primitives lost
        ([{"a": 1}, "x"], [_R, _S], [None, [None, "x"]], False),  # records lost
        ([{"a": 1}, "x"], [_R, _S], [[{"a": 1}], ["x"]], False),  # positions lost
        ([{}, "x"], [_S], [[None, "x"]], True),  # an empty record has nowhere to go
        # ragged: the shallow leaf is wrapped in both columns (RULES 1)
        ([{"a": 1}, ["x", None]], [_R2, _S2], [[[{"a": 1}], [None, None]], [[None], ["x", None]]],
         True),
    ],
)
def test_oracle_splits_mixed_arrays(
    value: list[Any], cols: list[Column], stored: list[Any], ok: bool
) -> None:
    assert is_mixed(value)
    row = {c.name: v for c, v in zip(cols, stored, strict=True)}
    assert Oracle(detect_dates=True).mixed_recovered(value, cols, row) is ok


@pytest.mark.parametrize(
    ("value", "informs"),
    [
        ({}, False),
        ({"x": None}, False),
        ([{}], False),
        ([[], {}], False),
        ([], True),
        ([None], True),
        ({"x": []}, True),
        ([{}, 1], True),
        ({"x": {"y": 0}}, True),
    ],
)
def test_oracle_ignores_records_without_fields(value: Any, informs: bool) -> None:
    assert informative(value) is informs


def test_oracle_reads_families_by_doc() -> None:
    batches = [[{"a": 1, "A": "x"}], [{"a": "y", "A": 2}]]
    result = check_nothing_lost(batches)
    by_family = {k: [c.name for c in family(result.table_schema, k)] for k in ("a", "A")}
    # originals are named in key order: "A" keeps its name, "a" becomes a_2 (RULES 4)
    assert by_family == {"a": ["a_2", "a_string"], "A": ["A"]}


# ============================================================================ found examples
# Minimal failures these properties found (fixed in the engine since), kept as examples.


def _valid(batches: list[gen.Batch]) -> None:
    result = toolkit.simulate(batches)
    check_plans(result)
    check_valid_schema(result.table_schema)


FOUND: list[tuple[str, Callable[[], None]]] = [
    # RULES 1: {"x": None} is {}, which creates no column (no empty struct)
    ("record of nulls", lambda: _valid([[{"r": {"x": None}}]])),
    # RULES 3.3: widest over a set, not a fold in arrival order (boolean vs date)
    (
        "order",
        lambda: check_same_under_shuffle(
            [[{"a": True}, {"a": 5}, {"a": "2024-01-01"}]], [[0, 2, 1]]
        ),
    ),
    # docs/rules.md: records in mixed arrays go to a record column, whatever they hold
    ("NaN in mixed array", lambda: check_nothing_lost([[{"a": [1, {"x": float("nan")}]}]])),
    ("2**64 in mixed array", lambda: check_nothing_lost([[{"a": [1, {"x": 2**64}]}]])),
    # RULES 1: an empty array goes to any column of dimension >= 1, record arrays too
    ("[] beside record[]", lambda: check_nothing_lost([[{"a": []}, {"a": [{"b": 1}]}]])),
    ("[] beside record", lambda: check_nothing_lost([[{"a": []}, {"a": {"b": 1}}]])),
    ("[] beside record, replayed", lambda: check_replay([[{"a": []}, {"a": {"b": 1}}]], 0)),
    # RULES 2 exception: a boolean leaf of a long array is not written to timestamps
    (
        "boolean to timestamp",
        lambda: check_nothing_lost([[{"a": ["2000-01-01T00:00:00Z"]}], [{"a": [False, 0]}]]),
    ),
    # RULES 1: a date-time whose UTC instant is before year 1 stays a string
    ("instant out of range", lambda: check_nothing_lost([[{"t": "0001-01-01T00:30:00+01:00"}]])),
    # Iceberg full names: a key "dot.key" beside a record "dot" with a field "key"
    ("dotted key", lambda: _valid([[{"dot.key": 1, "dot": {"key": 2}}]])),
]


@pytest.mark.parametrize("check", [c for _, c in FOUND], ids=[name for name, _ in FOUND])
def test_found_example(check: Callable[[], None]) -> None:
    check()


def test_key_named_like_a_list_element_is_a_valid_schema() -> None:
    # RULES 4: Iceberg names a list's element "<name>.element"; a key spelled so is renamed
    _valid([[{"a": [1], "a.element": 2}]])
    _valid([[{"a.element": 2}], [{"a": [1]}]])  # and a list never takes such a name later
    later = toolkit.simulate([[{"a.element": 2}], [{"a": [1]}]]).table_schema
    assert [c.name for c in later.fields] == ["a.element", "a_2"]


def test_out_of_range_datetime_in_a_record_of_a_mixed_array_is_kept() -> None:
    plus_one = dt.timezone(dt.timedelta(hours=1))
    check_nothing_lost([[{"t": [{"x": dt.datetime(1, 1, 1, 0, 30, tzinfo=plus_one)}, 1]}]])
