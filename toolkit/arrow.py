"""Arrow data as the engine's plain records: a typed source keeps its own types (RULES 1).

Arrow tables and record batches (and through Arrow: pandas and Polars frames, Arrow
datasets and readers, the Arrow chunks Spark hands its Python workers) become lists of
records of the values ``toolkit.core.values.scalars`` lists, column by column:

=============================================  =================================================
Arrow type                                     value
=============================================  =================================================
int8, int16, int32, uint8, uint16              :class:`~toolkit.core.values.scalars.Int`
int64, uint32, uint64                          int (beyond 64 signed bits: text, RULES 1)
float16, float32                               :class:`~toolkit.core.values.scalars.Float`
float64                                        float (NaN stays NaN: only a null is a null)
decimal                                        :class:`~decimal.Decimal`
binary, large, fixed-size, view                bytes
string, large, view                            str
bool, date32, date64, null                     bool, ``datetime.date``, None
timestamp, any unit                            datetime (aware with a zone; naive: UTC), or
                                               its ISO text with every digit when it has
                                               digits below the microsecond (no Spark or
                                               Iceberg timestamp holds them: RULES 1 types
                                               such a text string, nothing is dropped)
time32, time64                                 its ISO text (no Spark type holds a time of day)
struct                                         dict
list, large, fixed-size, view                  list
map with string keys                           dict (a value repeating a key: as other keys)
map with other keys                            list of ``{"key": k, "value": v}`` records,
                                               the entries as Parquet and Spark store them
                                               (a key's ``str`` could merge 1 and "1")
dictionary-encoded                             its decoded values
pandas' period (extension type)                each Period's text (``2024-01``), not the count
                                               of periods since 1970 Arrow stores
anything else (duration, interval, extension   :func:`~toolkit.core.values.scalars.plain_value` of
types)                                         the Python value: a UUID as its text; what
                                               has no plain form stays (a timedelta, an
                                               interval), and the engine refuses it naming
                                               field and value
=============================================  =================================================

It stays fast: a column whose type needs no change is one ``to_pylist``; only columns
holding (at any depth) a type that does are converted, value by value.

pandas frames: a column of a numpy or pandas dtype goes through Arrow (its missing values,
NaN, None, NaT, pd.NA, are nulls: pandas' own meaning); an ``object`` column, where
drifting data usually lives (ints beside strings, which Arrow refuses to put in one
column), is converted value by value with ``plain_value``, and a value pandas calls
missing is a null there too. The index is not a column (``reset_index()`` keeps it).

>>> import pyarrow as pa
>>> table = pa.table({"n": pa.array([1, None], pa.int32()), "tags": [["a"], []]})
>>> rows = records(table)
>>> rows, type(rows[0]["n"]).__name__
([{'n': 1, 'tags': ['a']}, {'n': None, 'tags': []}], 'Int')
>>> records(pa.table({"t": pa.array([1_000_000_001], pa.timestamp("ns"))}))
[{'t': '1970-01-01T00:00:01.000000001'}]
>>> records(pa.table({"m": pa.array([[(1, "x")]], pa.map_(pa.int64(), pa.string()))}))
[{'m': [{'key': 1, 'value': 'x'}]}]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.core.values.scalars import Float, Int, plain_value

__all__ = [
    "column_values", "nanosecond_text", "pandas_records", "polars_records", "records",
    "int96_columns", "int96_overflows", "repeated_name", "struct_levels",
]

_T = pa.types

#: the types whose ``to_pylist`` values are plain already (see the module's table)
_PLAIN: Final[tuple[Callable[[Any], bool], ...]] = (
    _T.is_null, _T.is_boolean, _T.is_int64, _T.is_uint32, _T.is_uint64, _T.is_float64,
    _T.is_decimal, _T.is_string, _T.is_large_string, _T.is_string_view, _T.is_binary,
    _T.is_large_binary, _T.is_fixed_size_binary, _T.is_binary_view, _T.is_date,
)
_NARROW_INTS: Final = (_T.is_int8, _T.is_int16, _T.is_int32, _T.is_uint8, _T.is_uint16)
_NARROW_FLOATS: Final = (_T.is_float16, _T.is_float32)
_LISTS: Final = (
    _T.is_list, _T.is_large_list, _T.is_fixed_size_list, _T.is_list_view,
    _T.is_large_list_view,
)
_STRINGS: Final = (_T.is_string, _T.is_large_string, _T.is_string_view)
#: nanoseconds in one unit of a time or timestamp type
_NANOS: Final = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _is(t: Any, kinds: Sequence[Callable[[Any], bool]]) -> bool:
    return any(is_kind(t) for is_kind in kinds)


def _plain(t: Any) -> bool:
    """Whether every value of Arrow type ``t`` is plain as ``to_pylist`` gives it."""
    if _T.is_struct(t):
        return all(_plain(t.field(i).type) for i in range(t.num_fields))
    if _is(t, _LISTS):
        return _plain(t.value_type)
    if _T.is_dictionary(t):
        return _plain(t.value_type)
    if _T.is_timestamp(t):  # whole microseconds at most: a datetime holds them
        return bool(t.unit != "ns")
    return _is(t, _PLAIN)


def column_values(column: Any) -> list[Any]:
    """The plain values of an Arrow ``Array`` or ``ChunkedArray`` (see the module's table).

    >>> import pyarrow as pa
    >>> values = column_values(pa.chunked_array([pa.array([[1.5], None], pa.list_(pa.float32()))]))
    >>> values, type(values[0][0]).__name__
    ([[1.5], None], 'Float')
    """
    if _plain(column.type):
        return list(column.to_pylist())
    if isinstance(column, pa.ChunkedArray):
        return [v for chunk in column.chunks for v in _values(chunk)]
    return _values(column)


def _values(arr: Any) -> list[Any]:
    t = arr.type
    if _plain(t):
        return list(arr.to_pylist())
    if _T.is_dictionary(t):
        decoded = _values(arr.dictionary)
        return [None if i is None else decoded[i] for i in arr.indices.to_pylist()]
    if _is(t, _NARROW_INTS):
        return _wrapped(Int, arr)
    if _is(t, _NARROW_FLOATS):
        return _wrapped(Float, arr)
    if _T.is_timestamp(t):
        return _nanosecond_timestamps(arr)
    if _T.is_time(t):
        return _times(arr)
    if _T.is_struct(t):
        return _structs(arr)
    if _T.is_map(t):
        return _maps(arr)
    if _is(t, _LISTS):
        return _lists(arr)
    if isinstance(t, pa.ExtensionType) and t.extension_name == "pandas.period":
        # its storage, a count of periods since 1970, means nothing without their length:
        # each Period's text instead ('2024-01'), as plain_value gives it
        return [plain_value(v) for v in arr.to_pandas()]
    return [plain_value(v) for v in arr.to_pylist()]


def _wrapped(wrap: Callable[[Any], Any], arr: Any) -> list[Any]:
    values = arr.to_pylist()
    if arr.null_count == 0:  # the common case, and a third faster
        return list(map(wrap, values))
    return [None if v is None else wrap(v) for v in values]


def _nanosecond_timestamps(arr: Any) -> list[Any]:
    """Nanosecond timestamps: a datetime when a whole number of microseconds (aware in
    the type's zone, if it has one), else the ISO text of that datetime with all nine
    fraction digits (pandas' ``Timestamp.isoformat``, so a typed column and an ``object``
    column of the same instants give the same text)."""
    nanos = arr.cast(pa.int64()).to_pylist()
    micros = [None if n is None else n // 1000 for n in nanos]
    stamps = pa.array(micros, pa.timestamp("us", arr.type.tz)).to_pylist()
    return [
        d if n is None or n % 1000 == 0 else nanosecond_text(d, n % 1000)
        for d, n in zip(stamps, nanos, strict=True)
    ]


def nanosecond_text(stamp: dt.datetime, nanos: int) -> str:
    """``stamp``'s ISO text with ``nanos`` (0-999) after its microseconds.

    >>> nanosecond_text(dt.datetime(1500, 3, 1, tzinfo=dt.timezone.utc), 7)
    '1500-03-01T00:00:00.000000007+00:00'
    """
    text = stamp.isoformat(timespec="microseconds")
    cut = text.index(".") + 7  # after the microseconds, before any UTC offset
    return f"{text[:cut]}{nanos:03d}{text[cut:]}"


def _times(arr: Any) -> list[Any]:
    """Times of day as ISO texts: ``datetime.time.isoformat`` (as ``plain_value`` spells a
    time), with nine fraction digits when there are digits below the microsecond."""
    t = arr.type
    ticks = arr.cast(pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()
    per = _NANOS[t.unit]
    return [None if v is None else _time_text(v * per) for v in ticks]


def _time_text(nanos: int) -> str:
    seconds, fraction = divmod(nanos, 1_000_000_000)
    minutes, s = divmod(seconds, 60)
    h, m = divmod(minutes, 60)
    if fraction % 1000:
        return f"{h:02d}:{m:02d}:{s:02d}.{fraction:09d}"
    return dt.time(h, m, s, fraction // 1000).isoformat()


def _structs(arr: Any) -> list[Any]:
    t = arr.type
    names = [t.field(i).name for i in range(t.num_fields)]
    valid = arr.is_valid().to_pylist()
    if not names:
        return [{} if ok else None for ok in valid]
    fields = [_values(child) for child in arr.flatten()]  # the struct's nulls included
    return [
        dict(zip(names, values, strict=True)) if ok else None
        for ok, *values in zip(valid, *fields, strict=True)
    ]


def _lists(arr: Any) -> list[Any]:
    lengths = pc.list_value_length(arr).to_pylist()
    flat = _values(arr.flatten())  # the elements of the valid lists, in order
    out: list[Any] = []
    start = 0
    for n in lengths:
        if n is None:
            out.append(None)
        else:
            out.append(flat[start:start + n])
            start += n
    return out


def _maps(arr: Any) -> list[Any]:
    if len(arr) == 0:
        return []
    offsets = arr.offsets.to_pylist()  # into the whole keys and items, slice or not
    lo, hi = offsets[0], offsets[-1]
    keys = _values(arr.keys.slice(lo, hi - lo))
    items = _values(arr.items.slice(lo, hi - lo))
    named = _is(arr.type.key_type, _STRINGS)
    return [
        _map_value(list(zip(keys[a - lo:b - lo], items[a - lo:b - lo], strict=True)), named)
        if ok else None
        for ok, a, b in zip(arr.is_valid().to_pylist(), offsets[:-1], offsets[1:], strict=True)
    ]


def _map_value(pairs: list[tuple[Any, Any]], named: bool) -> Any:
    """A map's entries as a record when its keys are distinct texts, else as a list of
    key/value records: nothing is merged or dropped."""
    if named:
        record = dict(pairs)
        if len(record) == len(pairs):
            return record
    return [{"key": k, "value": v} for k, v in pairs]


# ------------------------------------------------------------------ tables and frames


def records(data: Any) -> list[dict[str, Any]]:
    """The plain records of an Arrow ``Table``, ``RecordBatch``, ``RecordBatchReader``
    (read to its end) or ``pyarrow.dataset.Dataset`` (read whole), one per row."""
    if hasattr(data, "read_all"):  # a reader
        data = data.read_all()
    elif hasattr(data, "to_table"):  # a dataset
        data = data.to_table()
    names = _distinct(data.column_names)
    for prefix, fields in struct_levels(data.schema):
        twin = repeated_name(f.name for f in fields)
        if twin is not None:  # Arrow refuses to make such records; say which field it is
            raise ValueError(f"two fields are named {prefix + twin!r} side by side: a "
                             "record holds one field a name")
    # Arrow builds the records (in C, twice as fast as zipping columns in Python) with a
    # null in place of each column that is not plain as it comes (nanoseconds need pandas
    # there, and it would convert them twice); those are then filled in value by value
    rest = [(i, c) for i, c in enumerate(data.columns) if not _plain(c.type)]
    for i, _ in rest:
        data = data.set_column(i, data.column_names[i], pa.nulls(data.num_rows))
    rows: list[dict[str, Any]] = data.to_pylist()
    for i, column in rest:
        name = names[i]
        for row, value in zip(rows, column_values(column), strict=True):
            row[name] = value
    return rows


def repeated_name(names: Iterable[str]) -> str | None:
    """The first name that a name before it already is: a record holds one field a name.

    >>> repeated_name(["a", "b", "a"]), repeated_name(["a", "A"])
    ('a', None)
    """
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def int96_columns(schema: Any) -> dict[str, str]:
    """Of a Parquet file's schema (``pyarrow.parquet.ParquetFile(path).schema``), each
    top-level column holding INT96 timestamps (Impala's, Hive's), with its first such
    leaf's path: Arrow reads them in nanoseconds, which keep every digit they hold, but
    overflow into other instants before 1677 and after 2262."""
    found: dict[str, str] = {}
    for i in range(len(schema)):
        leaf = schema.column(i)
        if leaf.physical_type == "INT96":
            found.setdefault(leaf.path.split(".")[0], leaf.path)
    return found


def int96_overflows(nanos: Any, micros: Any) -> dict[int, int]:
    """The places where ``nanos``, an INT96 column Arrow read in nanoseconds, overflowed
    into another instant, each with the nanoseconds since the epoch it holds: what
    ``micros``, the same column read in microseconds (``coerce_int96_timestamp_unit``),
    says to the microsecond, and the overflowed value (the same modulo 2**64) below it.

    >>> import pyarrow as pa
    >>> overflowed = pa.array([7 - 2**64 + 2**63], pa.timestamp("ns"))  # 2**63 + 7, wrapped
    >>> int96_overflows(overflowed, pa.array([2**63 // 1000], pa.timestamp("us")))
    {0: 9223372036854775815}
    """
    found: dict[int, int] = {}
    wrapped = nanos.cast(pa.int64()).to_pylist()
    for i, (n, us) in enumerate(zip(wrapped, micros.cast(pa.int64()).to_pylist(),
                                    strict=True)):
        if n is None or us is None:
            continue
        exact = n + round((us * 1000 - n) / 2**64) * 2**64
        if exact != n:
            found[i] = exact
    return found


def struct_levels(fields: Any, prefix: str = "") -> Iterator[tuple[str, list[Any]]]:
    """``fields`` (an Arrow schema's, or a struct's) and every struct's fields they hold
    at any depth (through lists, maps and dictionaries), each with the path before its
    names (``""``, ``"s."``, ``"s.t."``): where a name can repeat another."""
    yield prefix, list(fields)
    for field in fields:
        kind = field.type
        while _is(kind, _LISTS) or _T.is_map(kind) or _T.is_dictionary(kind):
            kind = kind.item_type if _T.is_map(kind) else kind.value_type
        if _T.is_struct(kind):
            yield from struct_levels([kind.field(i) for i in range(kind.num_fields)],
                                     f"{prefix}{field.name}.")


def _distinct(names: list[Any]) -> list[str]:
    """Column names as texts; a record cannot hold two fields of one name."""
    keys = [str(name) for name in names]
    twin = repeated_name(keys)
    if twin is not None:
        raise ValueError(f"two columns are named {twin!r}: a record holds one field a name")
    return keys


def _rows(names: list[Any], columns: list[list[Any]], n: int) -> list[dict[str, Any]]:
    """Records of ``n`` rows from columns."""
    keys = _distinct(names)
    if not columns:
        return [{} for _ in range(n)]
    # columns of one table are of one length (and unchecked zips are much faster here)
    return [dict(zip(keys, row, strict=False)) for row in zip(*columns, strict=False)]


def pandas_records(frame: Any) -> list[dict[str, Any]]:
    """The plain records of a pandas ``DataFrame`` (see the module's doc); column names
    become texts, as Arrow makes them."""
    columns = [_pandas_column(frame.iloc[:, i]) for i in range(frame.shape[1])]
    return _rows(list(frame.columns), columns, len(frame))


def _pandas_column(series: Any) -> list[Any]:
    if series.dtype != object:
        try:
            return column_values(pa.Array.from_pandas(series))  # pandas' missing: nulls
        except (pa.ArrowException, TypeError, ValueError):
            pass  # a dtype Arrow has no type for (a category of mixed values...)
    # an object column: Arrow would make one type of its mixed values (ints become
    # floats, or it refuses); each value keeps its own type instead
    missing = series.isna().tolist()
    values = series.tolist()
    return [None if gone else plain_value(v) for v, gone in zip(values, missing, strict=True)]


def polars_records(frame: Any) -> list[dict[str, Any]]:
    """The plain records of a Polars ``DataFrame``, or of a ``LazyFrame`` (collected).
    A column of Python objects (``pl.Object``) gives its objects, each as ``plain_value``
    makes it: Polars hands Arrow their addresses, as bytes."""
    if hasattr(frame, "collect"):
        frame = frame.collect()
    objects = [name for name, kind in frame.schema.items() if str(kind) == "Object"]
    if not objects:
        return records(frame.to_arrow())
    rows = records(frame.drop(objects).to_arrow())
    for name in objects:
        for row, value in zip(rows, frame.get_column(name).to_list(), strict=True):
            row[name] = plain_value(value)
    order = [str(name) for name in frame.columns]
    return [{name: row[name] for name in order} for row in rows]
