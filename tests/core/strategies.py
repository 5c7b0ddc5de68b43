"""Hypothesis strategies: drifting JSON-like records in batches (RULES 1-4 property tests).

Keys come from a small alphabet so that families collide across batches and records:
``a`` and ``A`` collide case-insensitively (RULES 4), ``a_string`` and ``a_long`` look like
suffixed columns of ``a``, ``dot.key`` is also the Iceberg full name of field ``key`` of a record
``dot``, ``x y`` and ``ünï`` need quoting. Values cover every observed type of RULES 1:
nulls, booleans, longs (small, around 2**53, around 2**63, beyond 64 bits), doubles
(integral ones, NaN, infinities, -0.0), plain strings, ISO dates, ISO date-times (``T`` or
space, with or without seconds, 0-6 fraction digits, ``Z``, offsets or none, some whose
UTC instant leaves years 1-9999), Python dates and datetimes, arrays up to dimension 3
(ragged, with nulls, empty), records up to two levels deep (some with only null fields),
arrays of records and arrays mixing records with primitives.
``a.element`` is also the Iceberg full name of the element of a list ``a``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

TOP_KEYS = ("a", "b", "A", "a_string", "a_long", "x y", "dot.key", "dot", "ünï", "a.element")
NESTED_KEYS = ("a", "b", "A", "a_string", "key")

Record = dict[str, Any]
Batch = list[Record]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# ---------------------------------------------------------------------------- primitives

small_ints = st.integers(-1000, 1000)
edge_ints = st.sampled_from(
    [
        0,
        1,
        -1,
        2**31,
        2**53 - 1,
        2**53,
        2**53 + 1,
        -(2**53) - 1,
        INT64_MAX,
        INT64_MIN,
        INT64_MAX - 1,
        1_704_164_645,  # epoch seconds: routed into timestamp columns (RULES 2 exception)
        1_704_164_645_123,  # epoch milliseconds
        1_704_164_645_123_456,  # epoch microseconds
        10**18,  # nanoseconds by magnitude
    ]
)
near_2_53 = st.integers(2**53 - 3, 2**53 + 3) | st.integers(-(2**53) - 3, -(2**53) + 3)
near_2_63 = st.integers(INT64_MAX - 2, INT64_MAX + 3) | st.integers(INT64_MIN - 3, INT64_MIN + 2)
huge_ints = st.integers(2**64, 2**80) | st.integers(-(2**80), -(2**64))

#: mostly small integers, sometimes at the edges of exact doubles and of 64 bits
ints = st.one_of(small_ints, small_ints, small_ints, edge_ints, near_2_53, near_2_63, huge_ints)
special_floats = st.sampled_from(
    [0.0, -0.0, 1.0, 2.0, -3.0, 0.5, 1e16, 2.0**53, 2.0**63, 1e300, 5e-324, 0.1]
)
non_finite = st.sampled_from([float("nan"), float("inf"), float("-inf")])
floats = st.one_of(special_floats, special_floats, st.floats(allow_nan=False), non_finite)

plain_strings = st.one_of(
    st.sampled_from(
        [
            "",
            "x",
            "hello",
            "true",
            "false",
            "5",
            "2.0",
            "NaN",
            "null",
            "ünï",
            "2024",
            "2024-13-01",
            "2023-02-29",
            "2024-01-01T25:00:00",
            "12:00",
            "2024-1-1",
            "{}",
            "[1]",
        ]
    ),
    st.text(alphabet="ab1-: T", max_size=6),
)


@st.composite
def iso_dates(draw: st.DrawFn) -> str:
    """``YYYY-MM-DD``, mostly recent, sometimes at the ends of the calendar."""
    d = draw(
        st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31))
        | st.sampled_from([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1)])
    )
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


@st.composite
def iso_timestamps(draw: st.DrawFn) -> str:
    """ISO-8601 date-times: ``T`` or space, seconds optional, 0-6 fraction digits, ``Z``,
    an offset (``+05:30``, ``-0800``, ``+01``) or none (naive: UTC)."""
    moment = draw(
        st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 12, 31))
        | st.datetimes()  # years 1-9999: with an offset, the UTC instant may leave them
    )
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    text += draw(st.sampled_from(["T", "T", " "]))
    text += f"{moment.hour:02d}:{moment.minute:02d}"
    if draw(st.integers(0, 5)):  # seconds are usually there
        text += f":{moment.second:02d}"
        digits = draw(st.integers(0, 6))
        if digits:
            text += "." + f"{moment.microsecond:06d}"[:digits]
    sign = draw(st.sampled_from("+-"))
    hours = draw(st.integers(0, 14))
    minutes = draw(st.sampled_from([0, 0, 30, 45]))
    zone = draw(
        st.sampled_from(
            [
                "",
                "Z",
                "Z",
                f"{sign}{hours:02d}:{minutes:02d}",
                f"{sign}{hours:02d}{minutes:02d}",
                f"{sign}{hours:02d}",
            ]
        )
    )
    return text + zone


strings = st.one_of(plain_strings, iso_dates(), iso_timestamps())

#: RULES 1 also types Python dates and datetimes (naive: UTC; aware: any offset, so some
#: UTC instants leave years 1-9999)
temporal_objects = st.dates() | st.datetimes(
    timezones=st.sampled_from(
        [
            None,
            dt.UTC,
            dt.timezone(dt.timedelta(hours=1)),
            dt.timezone(-dt.timedelta(hours=5, minutes=30)),
        ]
    )
)
primitives = st.one_of(st.booleans(), ints, floats, strings, strings, temporal_objects)

# ---------------------------------------------------------------------------- nested values


def _arrays(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    """Arrays of dimension 1 to 3 over ``leaf``: ragged, with null elements, maybe empty."""
    elem = st.one_of(st.none(), leaf, leaf)
    dim1 = st.lists(elem, max_size=3)
    dim2 = st.lists(st.one_of(elem, dim1, dim1), max_size=3)
    dim3 = st.lists(st.one_of(elem, dim2, dim2), max_size=3)
    return st.one_of(dim1, dim1, dim2, dim3)


def _records(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Record]:
    """Records with up to 4 keys, mostly with a non-null field; sometimes ``{}`` or only
    nulls, which RULES 1 reads alike (null and missing are the same)."""
    keys = st.sampled_from(NESTED_KEYS)
    filled = st.dictionaries(keys, value, min_size=1, max_size=2)
    return st.tuples(
        st.lists(keys, max_size=2), st.one_of(filled, filled, filled, st.just({}))
    ).map(lambda t: {**dict.fromkeys(t[0]), **t[1]})


def _values(prim: st.SearchStrategy[Any], depth: int) -> st.SearchStrategy[Any]:
    """A field value: primitive, array, record (``depth`` levels of records left) or an
    array of records / of records mixed with primitives."""
    if depth == 0:
        return st.one_of(prim, prim, _arrays(prim))
    records = _records(_values(prim, depth - 1))
    return st.one_of(
        prim,
        prim,
        prim,
        _arrays(prim),
        _arrays(prim),
        records,
        records,
        _arrays(records),
        _arrays(st.one_of(records, prim)),  # mixed: records and primitives split
    )


_VALUES = _values(primitives, 2)
_RECORDS = _records(_values(primitives, 1))
#: what a key mostly holds in a run with stable families: its values still drift
_PROFILES = (
    primitives,
    st.one_of(st.booleans(), ints, floats),
    strings,
    _arrays(primitives),
    _RECORDS,
    _arrays(_RECORDS),
    _VALUES,
)


@st.composite
def _field_values(draw: st.DrawFn) -> Any:
    # a named composite keeps the strategy's repr short in Hypothesis' reports
    return draw(_VALUES)


#: the value of a top-level key: records nest up to two levels below it
values = _field_values()

records: st.SearchStrategy[Record] = st.dictionaries(
    st.sampled_from(TOP_KEYS), st.none() | values, max_size=4
)


@st.composite
def _drifting_batches(draw: st.DrawFn) -> list[Batch]:
    """Batches where each key mostly keeps one profile (records stay records...), so
    families, nested record columns and arrays evolve over several batches."""
    profile = {k: draw(st.sampled_from(_PROFILES)) for k in TOP_KEYS}
    out = []
    for _ in range(draw(st.integers(1, 4))):
        batch = []
        for _ in range(draw(st.integers(1, 6))):
            keys = draw(st.lists(st.sampled_from(TOP_KEYS), unique=True, max_size=4))
            batch.append({k: draw(st.none() | profile[k] | profile[k] | values) for k in keys})
        out.append(batch)
    return out


#: 1-4 batches of 1-6 records: either every value drawn at random, or drifting families
batches: st.SearchStrategy[list[Batch]] = st.one_of(
    st.lists(st.lists(records, min_size=1, max_size=6), min_size=1, max_size=4),
    _drifting_batches(),
)
#: engine options: ISO date detection is switched off in some runs (RULES 1)
options: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {"detect_dates": st.sampled_from([True, True, False])}
)
