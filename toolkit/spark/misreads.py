"""Files that Spark's readers read otherwise than ``simulate`` does: a Parquet or ORC file
on this disk with a column whose values Spark cannot read, reads as another type, or
reads with digits dropped. ``toolkit.pipeline.sources`` reads such a file with Arrow, as
``simulate`` reads it, and pickles its records to Spark. That is slower, but no value
changes.

What Spark 3.5 does to them (checked on files pyarrow writes, ``tests/spark/test_misreads.py``):

- Parquet and ORC, told by the footer: it refuses columns whose names differ only by
  case (its analyzer ignores case), where RULES 3 gives the second its own column.
- Parquet, told by the footer: it refuses nanosecond timestamps, times of day, UUIDs,
  16-bit floats and decimals of more than 38 digits; it reads unsigned 64-bit integers
  as ``decimal(20, 0)``, where RULES 1 types an integer as a long, or as text beyond
  64-bit signed range.
- Parquet INT96 timestamps and every ORC timestamp carry nanoseconds. Spark reads them as
  microseconds and drops the digits below without a word. Only the values tell, so the
  timestamp columns are read. A file whose timestamps are all whole microseconds (what
  Spark and Hive write) reads the same either way, and keeps Spark's reading. An INT96
  timestamp before 1677 or after 2262 overflows Arrow's nanoseconds: such a file is read
  here too, as ``toolkit.pipeline.files`` mends those values, so that both paths read
  every one of its digits alike.

>>> import pyarrow as pa, pyarrow.parquet as pq, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp(), "u.parquet")
>>> pq.write_table(pa.table({"id": pa.array([2**64 - 1], pa.uint64())}), path)
>>> print(spark_misread([path], "parquet"))
u.parquet, column `id`: unsigned 64-bit integers, which Spark reads as decimals
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from toolkit.arrow import int96_columns, int96_overflows, repeated_name, struct_levels

__all__ = [
    "Misread", "case_twin", "name_twin", "repeated_field", "spark_misread",
    "year_month_column",
]

_REFUSED: Final = ", which Spark cannot read"
#: rows read at a time when the values must tell
_BATCH_ROWS: Final = 65_536
#: the most digits a Spark decimal holds
_SPARK_DIGITS: Final = 38
#: Parquet logical types Spark 3.5 refuses, by the footer's name of the type
_PARQUET_TYPES: Final = {
    "Float16": "16-bit floats" + _REFUSED,
    "UUID": "UUIDs" + _REFUSED,
    "Time": "times of day" + _REFUSED,
}
_NANOS: Final = "timestamps in nanoseconds" + _REFUSED
_CASE: Final = "another column's name but for case, which Spark cannot tell apart"
_WIDE_DECIMAL: Final = "decimals of more than 38 digits" + _REFUSED
_UNSIGNED_64: Final = "unsigned 64-bit integers, which Spark reads as decimals"
_DROPPED: Final = "timestamps with digits below the microsecond, which Spark drops"
_INT96_RANGE: Final = ("INT96 timestamps before 1677 or after 2262 (Arrow's nanoseconds "
                       "overflow, and are read again in microseconds)")
#: what Spark cannot read at all, not even to infer a schema (the rest it reads otherwise)
_REFUSALS: Final = frozenset({*_PARQUET_TYPES.values(), _NANOS, _CASE, _WIDE_DECIMAL})


@dataclass(frozen=True)
class Misread:
    """A column of a file that Spark would read otherwise than ``simulate`` does."""

    file: Path
    #: the column's path in the file (dotted for a nested one)
    column: str
    #: what Spark does to its values, in words
    why: str

    @property
    def refused(self) -> bool:
        """Whether Spark cannot read the column at all (not even its schema)."""
        return self.why in _REFUSALS

    def __str__(self) -> str:
        return f"{self.file.name}, column `{self.column}`: {self.why}"


def spark_misread(files: Sequence[Path], fmt: str) -> Misread | None:
    """The first column of ``files`` (of format ``fmt``) that Spark would read otherwise
    than ``simulate`` does; None when Spark reads them all alike, or ``fmt`` is neither
    Parquet nor ORC. A file that cannot be read here is left to Spark, which says what
    is wrong with it."""
    if fmt not in ("parquet", "orc"):
        return None
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        # a file is looked at once while it stays the same (kinds are asked several times)
        found = _file_misread(os.fspath(path), stat.st_mtime_ns, stat.st_size, fmt)
        if found is not None:
            return found
    return None


@lru_cache(maxsize=512)
def _file_misread(path: str, mtime_ns: int, size: int, fmt: str) -> Misread | None:
    import pyarrow as pa

    try:
        found = _parquet(path) if fmt == "parquet" else _orc(path)
    except (OSError, pa.ArrowException):
        return None
    return None if found is None else Misread(Path(path), *found)


def _parquet(path: str) -> tuple[str, str] | None:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    twin = case_twin(parquet.schema_arrow)
    if twin is not None:
        return twin, _CASE
    schema = parquet.schema
    for i in range(len(schema)):
        leaf = schema.column(i)
        logical = json.loads(leaf.logical_type.to_json())
        kind = logical.get("Type")
        if kind in _PARQUET_TYPES:
            return leaf.path, _PARQUET_TYPES[kind]
        if kind == "Timestamp" and logical.get("timeUnit") == "nanoseconds":
            return leaf.path, _NANOS
        if kind == "Decimal" and int(logical["precision"]) > _SPARK_DIGITS:
            return leaf.path, _WIDE_DECIMAL
        if kind == "Int" and int(logical["bitWidth"]) == 64 and not logical["isSigned"]:
            return leaf.path, _UNSIGNED_64
    int96 = int96_columns(schema)  # top-level column -> the leaf's path
    if not int96:
        return None
    # Arrow reads INT96 in nanoseconds, which a year before 1677 or after 2262 overflows:
    # told by reading the columns in microseconds too (such a file is read here, as
    # toolkit.pipeline.files reads it). Batch by batch, to stop at the first such value
    # and hold one batch at a time
    columns = list(int96)
    wide = pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
    for nanos, micros in zip(parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns),
                             wide.iter_batches(batch_size=_BATCH_ROWS, columns=columns),
                             strict=True):
        for name, shown in int96.items():
            if name == shown and int96_overflows(nanos.column(name), micros.column(name)):
                return shown, _INT96_RANGE
            if _sub_microsecond([nanos.column(name)]):
                return shown, _DROPPED
    return None


def _orc(path: str) -> tuple[str, str] | None:
    import pyarrow.orc as po

    orc = po.ORCFile(path)
    twin = case_twin(orc.schema)
    if twin is not None:
        return twin, _CASE
    names = [f.name for f in orc.schema if _has_timestamp(f.type)]
    if not names:
        return None
    stripes = (orc.read_stripe(i, columns=names) for i in range(orc.nstripes))
    return _first_dropped(stripes, {n: n for n in names})


def _first_dropped(batches: Iterable[Any], columns: dict[str, str]) -> tuple[str, str] | None:
    """The first of ``columns`` (read name -> the path to name) whose timestamps in
    ``batches`` (an ORC file's stripes) have digits below the microsecond."""
    for batch in batches:
        for name, shown in columns.items():
            if _sub_microsecond([batch.column(name)]):
                return shown, _DROPPED
    return None


def name_twin(names: Iterable[str]) -> str | None:
    """The first name another before it has but for case (Spark's analyzer ignores case by
    default, ``spark.sql.caseSensitive``).

    >>> name_twin(["a", "b", "A"]), name_twin(["a", "b"])
    ('A', None)
    """
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            return name
        seen.add(name.lower())
    return None


def _spark_fields(kind: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every Spark type ``kind`` (a ``StructType``) holds, at any depth, with the path of
    the field it is (an array's elements and a map's keys and values: their field's),
    the struct types included."""
    from pyspark.sql import types as T

    yield path, kind
    if isinstance(kind, T.ArrayType):
        yield from _spark_fields(kind.elementType, path)
    elif isinstance(kind, T.MapType):
        yield from _spark_fields(kind.keyType, path)
        yield from _spark_fields(kind.valueType, path)
    elif isinstance(kind, T.StructType):
        for field in kind.fields:
            yield from _spark_fields(field.dataType, f"{path}.{field.name}".lstrip("."))


def year_month_column(kind: Any) -> str | None:
    """The first column of Spark type ``kind`` (a ``StructType``) holding year-month
    intervals, at any depth (in records, arrays and maps): Spark hands them to Python as
    an Arrow type pyarrow cannot read (``interval_months``), and no Iceberg type holds
    them. Spark's other interval (days to seconds) reaches Python as a ``timedelta``,
    which the engine refuses value by value (RULES 1: the record goes to the quarantine).

    >>> from pyspark.sql.types import *
    >>> year_month_column(StructType([StructField("a", ArrayType(YearMonthIntervalType()))]))
    'a'
    >>> year_month_column(StructType([StructField("d", DayTimeIntervalType())])) is None
    True
    """
    from pyspark.sql.types import YearMonthIntervalType

    return next((path for path, t in _spark_fields(kind)
                 if isinstance(t, YearMonthIntervalType)), None)


def repeated_field(kind: Any) -> str | None:
    """The path of the first field of Spark type ``kind`` (a ``StructType``) whose record
    holds another field of the very same name, at any depth: Spark lets a struct repeat a
    name (``named_struct('a', 1, 'a', 2)``), a record (and Arrow, which carries rows to
    Python) cannot.

    >>> from pyspark.sql.types import *
    >>> inner = StructType([StructField("a", LongType()), StructField("a", StringType())])
    >>> repeated_field(StructType([StructField("s", ArrayType(inner))]))
    's.a'
    """
    from pyspark.sql.types import StructType

    for path, t in _spark_fields(kind):
        twin = repeated_name(f.name for f in t.fields) if isinstance(t, StructType) else None
        if twin is not None:
            return f"{path}.{twin}".lstrip(".")
    return None


def case_twin(fields: Any) -> str | None:
    """The first field whose name another field beside it has but for case (Spark's
    analyzer ignores case by default), at any depth of records (Arrow ``fields``)."""
    for prefix, level in struct_levels(fields):
        twin = name_twin(field.name for field in level)
        if twin is not None:
            return f"{prefix}{twin}"
    return None


def _has_timestamp(kind: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_timestamp(kind):
        return True
    return any(_has_timestamp(kind.field(i).type) for i in range(kind.num_fields))


def _sub_microsecond(arrays: Iterable[Any]) -> bool:
    """Whether a nanosecond timestamp among ``arrays`` (at any depth) has digits below the
    microsecond."""
    import pyarrow as pa

    for array in arrays:
        kind = array.type
        if pa.types.is_timestamp(kind):
            if kind.unit == "ns" and _loses_digits(array):
                return True
            continue
        if pa.types.is_struct(kind):
            inner = [array.field(i) for i in range(kind.num_fields)]
        elif pa.types.is_map(kind):
            inner = [array.keys, array.items]
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind) \
                or pa.types.is_fixed_size_list(kind):
            inner = [array.flatten()]
        else:
            continue
        if _sub_microsecond(inner):
            return True
    return False


def _loses_digits(array: Any) -> bool:
    import pyarrow as pa

    try:
        array.cast(pa.timestamp("us", array.type.tz), safe=True)
    except pa.ArrowInvalid:  # the cast would drop digits
        return True
    return False
