"""Typed sources at Spark's own speed: profile in one aggregation, route as a projection.

A typed column knows its type, so the kinds of its values (RULES 1) need no Python:
:mod:`toolkit.core.batch.typed_profile` splits each column into value classes whose values all
have one kind, and here each class is a Spark predicate, counted for every column in ONE
aggregation inside the JVM. The core plans on those counts as on any summary. Routing
(RULES 3.1) is then a ``select`` of Spark expressions, one per column of the plan's
schema: each class of values lands where the core's ``Router.rule`` says, converted by an
expression that is exactly the core's conversion (RULES 2) for every value of the class:
:data:`_CONVERSIONS` lists them, and a conversion not listed (a double into a string
column: Python's shortest round-trip text is not Spark's) sends the batch to the Python
router, never to a guess. The same goes for a class whose values do not share a kind.

Frames (pandas, Arrow, Polars) reach Spark as Arrow record batches, not as pickled
records: :mod:`toolkit.spark.arrow_frames`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

import pyarrow as pa

from toolkit.arrow import records as arrow_records
from toolkit.core.batch.observe import Classifier
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import SAMPLES_PER_TYPE, FieldStats, Profile
from toolkit.core.batch.summary import Summary
from toolkit.core.batch.typed_profile import (
    Landing,
    Target,
    class_kinds,
    decimal_source,
    typed_summary,
    value_classes,
)
from toolkit.core.values.types import DECIMAL_TYPE, Kind, Shape
from toolkit.spark.plans import JavaColumns, LazyFrame, java_columns

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

__all__ = [
    "TypedColumns",
    "class_counts",
    "class_predicates",
    "classified",
    "ROW_ID",
    "ROW_BITS",
    "built",
    "code_name",
    "head_records",
    "numbered",
    "observed_counts",
    "TypedSeen",
    "observe_typed",
    "routed_typed",
    "typed_columns",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: rows read from the head of a batch for the profile's samples (rarer kinds: a query each)
HEAD_ROWS: Final = 64
_TWO_53: Final = 2**53
_INT64_MIN: Final = -(2**63)


@dataclass(frozen=True)
class TypedColumns:
    """A DataFrame of typed columns under positional names (``c0``, ``c1``...: a name
    from data never enters an expression), with each column's name and source type."""

    #: the frame, its steps not analysed yet (:mod:`toolkit.spark.plans`)
    lazy: LazyFrame
    names: tuple[str, ...]
    types: tuple[str, ...]
    #: whether a column holds timestamps without a zone (read as UTC, RULES 1)
    naive: tuple[bool, ...]
    #: the columns whose class codes the frame holds (:func:`classified`)
    coded: frozenset[str] = frozenset()

    @property
    def frame(self) -> DataFrame:
        """The frame, analysed (once)."""
        return self.lazy.frame

    def value_names(self) -> list[str]:
        """The frame's columns of values (not the class codes :func:`classified` adds)."""
        return [f"c{i}" for i in range(len(self.names))]

    def column(self, name: str) -> Column:
        from pyspark.sql import functions as F

        i = self.names.index(name)
        c = F.col(f"c{i}")
        # a timestamp without zone is an instant in UTC (toolkit.arrow); the session's
        # zone is UTC (checked in typed_columns), so the cast keeps its wall clock
        return c.cast("timestamp") if self.naive[i] else c

    def source_type(self, name: str) -> str:
        return self.types[self.names.index(name)]


def _source_type(data_type: DataType, utc: bool) -> tuple[str, bool] | None:
    """The source type of a Spark column (:data:`toolkit.core.batch.typed_profile.SOURCE_TYPES`)
    and whether it is a timestamp without zone; None for the others (nested, binary...)."""
    from pyspark.sql import types as T

    simple: dict[type, str] = {
        T.BooleanType: "boolean", T.ByteType: "byte", T.ShortType: "short",
        T.IntegerType: "int", T.LongType: "long", T.FloatType: "float",
        T.DoubleType: "double", T.StringType: "string", T.DateType: "date",
        T.TimestampType: "timestamp",
    }
    found = simple.get(type(data_type))
    if found is not None:
        return found, False
    if isinstance(data_type, T.TimestampNTZType) and utc:
        return "timestamp", True
    if isinstance(data_type, T.DecimalType) and decimal_source(
            data_type.precision, data_type.scale):
        return "decimal", False
    return None


def typed_columns(df: DataFrame) -> TypedColumns | None:
    """``df`` as :class:`TypedColumns`, or None when a column is of a type the columnar
    path does not type (records, lists, maps, binary...) or two names differ only in case
    (Spark resolves names without case)."""
    spark = df.sparkSession
    utc = spark.conf.get("spark.sql.session.timeZone") in ("UTC", "Etc/UTC", "GMT", "Z")
    names, types, naive = [], [], []
    for f in df.schema.fields:
        found = _source_type(f.dataType, utc)
        if found is None:
            return None
        names.append(f.name)
        types.append(found[0])
        naive.append(found[1])
    if not names or len({n.lower() for n in names}) != len(names):
        return None
    return TypedColumns(LazyFrame.positional_of(df), tuple(names), tuple(types),
                        tuple(naive))


#: Spark expressions built before, by what they were built from. A batch's class codes
#: and routing take hundreds of py4j calls to build (tens of ms a batch, more than the
#: rest of the driver's work); the expressions name columns by position (``c0``, ``t0``:
#: no name from data), unresolved, so one serves every batch of the same layout.
_BUILT: dict[tuple[Any, ...], Any] = {}
_BUILT_MAX: Final = 1024
_NOT_BUILT: Final = object()


def built(key: tuple[Any, ...], build: Callable[[], _T]) -> _T:
    """``build()``, or what it gave for the same ``key`` in this JVM before."""
    from pyspark import SparkContext

    full = (id(SparkContext._gateway), *key)  # a Column is a reference into one JVM
    found = _BUILT.get(full, _NOT_BUILT)
    if found is _NOT_BUILT:
        if len(_BUILT) >= _BUILT_MAX:
            _BUILT.clear()
        found = _BUILT[full] = build()
    return found  # type: ignore[no-any-return]


# ------------------------------------------------------------------ value classes


def _exact_double(c: Column) -> Column:
    """RULES 2: whether a long converts exactly to a double (its odd part holds in 53
    bits), computed in decimals so nothing overflows."""
    from pyspark.sql import functions as F

    low = c.bitwiseAND(-c).cast("decimal(38,0)")
    fits = F.abs(c).cast("decimal(38,0)") <= low * F.lit(_TWO_53).cast("decimal(38,0)")
    # most longs are within 2**53: a comparison decides them, the decimals only the rest
    return F.when(c.between(-_TWO_53, _TWO_53), F.lit(True)) \
        .when(c == F.lit(_INT64_MIN), F.lit(True)).otherwise(fits)


def _date_parts(c: Column) -> tuple[Column, Column, Column]:
    """Year, month and day of a ``YYYY-MM-DD`` text (numbers cast from its digits)."""
    from pyspark.sql import functions as F

    return tuple(F.substring(c, at, n).cast("int") for at, n in ((1, 4), (6, 2), (9, 2)))  # type: ignore[return-value]


def _iso_date(c: Column) -> Column:
    """A text ``YYYY-MM-DD`` of ASCII digits naming a real date of years 1-9999, as
    ``toolkit.core.values.conversions.parse_date`` reads it. Told by arithmetic, not by Spark's
    date parser, which raises on texts its legacy parser would read otherwise."""
    from pyspark.sql import functions as F

    y, m, d = _date_parts(c)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    days = F.when(m == 2, F.when(leap, 29).otherwise(28)) \
        .when(m.isin(4, 6, 9, 11), 30).otherwise(31)
    valid = (y >= 1) & m.between(1, 12) & (d >= 1) & (d <= days)
    return F.when(c.rlike("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), valid).otherwise(F.lit(False))


def _class_code(cols: TypedColumns, name: str, options: Options) -> Column | None:
    """The class of each value of column ``name`` as its index in the column's classes
    (:func:`toolkit.core.batch.typed_profile.value_classes`; null for a null), one test
    after another, the cheap ones first; None for a column of one class (every value is
    in it). Computed once per row (:func:`classified`), so that counting and routing
    compare a small number instead of testing texts again."""
    i = cols.names.index(name)
    return built(("code", i, cols.types[i], cols.naive[i], options),
                  lambda: _class_code_of(cols, name, options))


#: the JVM class that makes the class codes (``jvm/ClassCode.java``)
CLASS_CODE: Final = "toolkit.spark.jvm.ClassCode"


def _class_code_of(
    cols: TypedColumns, name: str, options: Options, *, jvm: bool = True
) -> Column | None:
    """The class codes of column ``name``: made by one JVM call per value
    (``jvm/ClassCode.java``: the tests below, in the same order) when the session has the
    toolkit's helpers and ``jvm``, else by the Spark expressions below."""
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import functions as F

    from toolkit.spark.tally import jvm_class

    c = cols.column(name)
    source = cols.source_type(name)
    classes = value_classes(source, options)
    if len(classes) == 1:
        return None
    helper = jvm_class(cols.lazy.session, CLASS_CODE) if jvm else None
    if helper is not None:
        if source == "long":
            return SparkColumn(helper.ofLong(c._jc))
        if source == "string":
            return SparkColumn(helper.ofText(c._jc))
        if source == "timestamp":
            per = _MICROS_PER[options.timestamp_unit] if "fraction" in classes else 1
            return SparkColumn(helper.ofTime(c._jc, per, _FIRST_MICROS, _LAST_MICROS))
    at = {cls: F.lit(i) for i, cls in enumerate(classes)}
    code = F.when(c.isNull(), F.lit(None).cast("int"))
    if source == "long":
        # most longs are within 2**53: a comparison decides them
        return (code.when(c.between(-_TWO_53, _TWO_53), at["exact"])
                .when(_exact_double(c), at["exact"]).otherwise(at["lossy"]))
    if source == "string":
        # Classifier._str_kind: a text whose first four characters are digits and fifth a
        # dash is a date when it is one, a string when it is ten characters long and no
        # date, else maybe a date-time (value by value in Python). Digits: any Unicode
        # number, so the test takes in all Python's str.isdigit takes. Most texts have
        # no dash, or none fifth: those tests alone decide them.
        return (code.when(~c.contains("-"), at["text"])  # a byte search: no copy
                .when(F.substring(c, 5, 1) != F.lit("-"), at["text"])
                .when(~F.substring(c, 1, 4).rlike("^\\p{N}{4}$"), at["text"])
                .when(_iso_date(c), at["date"])
                .when((F.length(c) != F.lit(10)) | c.rlike("[^\\x00-\\x7f]"), at["other"])
                .otherwise(at["text"]))
    if source == "timestamp":
        micros = F.unix_micros(c)
        # Python's years 1-9999 in UTC, compared as epoch microseconds (no calendar work)
        inside = micros.between(_FIRST_MICROS, _LAST_MICROS)
        if "fraction" in classes:
            per = _MICROS_PER[options.timestamp_unit]
            return (code.when(~inside, at["far"])
                    .when(micros % F.lit(per) == F.lit(0), at["whole"])
                    .otherwise(at["fraction"]))
        whole = (micros % F.lit(1_000_000) == F.lit(0)) | _exact_double(micros)
        return code.when(inside & whole, at["whole"]).otherwise(at["far"])
    raise AssertionError(f"no class test for {source} columns")  # pragma: no cover


def classified(cols: TypedColumns, options: Options) -> TypedColumns:
    """``cols`` with the class of each value of every column of several classes computed
    once per row, as a column of its own (:func:`_class_code`)."""

    spark = cols.lazy.session

    def build() -> tuple[frozenset[str], JavaColumns]:
        from pyspark.sql import functions as F

        codes = {n: code for n in cols.names
                 if (code := _class_code(cols, n, options)) is not None}
        return frozenset(codes), java_columns(spark, [
            *map(F.col, cols.value_names()),
            *(code.alias(code_name(cols, n)) for n, code in codes.items())])

    coded, exprs = built(("classified", cols.names, cols.types, cols.naive, options), build)
    if not coded:
        return cols
    return TypedColumns(cols.lazy.select(exprs), cols.names, cols.types, cols.naive, coded)


def code_name(cols: TypedColumns, name: str) -> str:
    """The column of the class codes of column ``name`` in a frame :func:`classified`."""
    return f"t{cols.names.index(name)}"


def class_predicates(
    cols: TypedColumns, name: str, options: Options
) -> dict[str, Column]:
    """A Spark predicate per value class of column ``name`` (nulls in none): a comparison
    of its class code (:func:`classified`)."""
    i = cols.names.index(name)
    return built(("classes", i, cols.types[i], cols.naive[i], name in cols.coded, options),
                  lambda: _class_predicates_of(cols, name, options))


def _class_predicates_of(
    cols: TypedColumns, name: str, options: Options
) -> dict[str, Column]:
    from pyspark.sql import functions as F

    classes = value_classes(cols.source_type(name), options)
    if len(classes) == 1:
        return {classes[0]: cols.column(name).isNotNull()}
    code = F.col(code_name(cols, name)) if name in cols.coded \
        else _class_code(cols, name, options)
    assert code is not None
    return {cls: code == F.lit(i) for i, cls in enumerate(classes)}


_MICROS_PER: Final = {"s": 1_000_000, "ms": 1_000, "us": 1}
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: the first and last microsecond of Python's years 1-9999, in UTC, since the epoch
_FIRST_MICROS: Final = (dt.datetime(1, 1, 1, tzinfo=dt.UTC) - _EPOCH) // dt.timedelta(
    microseconds=1)
_LAST_MICROS: Final = (dt.datetime.max.replace(tzinfo=dt.UTC) - _EPOCH) // dt.timedelta(
    microseconds=1)


# ------------------------------------------------------------------ observation


@dataclass(frozen=True)
class TypedSeen:
    """A batch of typed columns observed: the kind of every class that holds values."""

    columns: TypedColumns
    kinds: Mapping[str, Mapping[str, Kind]]
    counts: Mapping[str, Mapping[str, int]]


def class_counts(
    cols: TypedColumns, options: Options
) -> tuple[dict[str, Mapping[str, Column]], list[Column], list[tuple[str, str]]]:
    """The class predicates of every column, the aggregations counting the rows and each
    class (``rows``, ``k0``, ``k1``...) and giving the row ids of each class's first and
    last value (``f0``, ``l0``...: where drift starts, docs/rules.md) over a frame
    :func:`numbered`, with the rows of each of its partitions (``p0``, ``p1``...: up to
    :data:`COUNTED_PARTITIONS` of them), and the (column, class) each ``k`` counts."""
    from pyspark.sql import functions as F

    predicates: dict[str, Mapping[str, Column]] = {
        n: class_predicates(cols, n, options) for n in cols.names}
    aggs = [F.count(F.lit(1)).alias("rows")]
    keys: list[tuple[str, str]] = []
    for name in cols.names:
        for cls, pred in predicates[name].items():
            j = len(keys)
            row_id = F.when(pred, F.col(ROW_ID))
            aggs += [F.count_if(pred).alias(f"k{j}"), F.min(row_id).alias(f"f{j}"),
                     F.max(row_id).alias(f"l{j}")]
            keys.append((name, cls))
    parts = _partitions(cols.frame)
    if 1 < parts <= COUNTED_PARTITIONS:
        part = F.shiftright(F.col(ROW_ID), ROW_BITS)
        aggs += [F.count_if(part == F.lit(q)).alias(f"p{q}") for q in range(parts)]
    return predicates, aggs, keys


#: the column of :func:`numbered` (positional names are ``c0``, ``c1``...: no clash)
ROW_ID: Final = "rid"
#: the bits of a row id (``monotonically_increasing_id``) below its partition's number
ROW_BITS: Final = 33
#: a batch of up to this many partitions has their rows counted by the aggregation that
#: counts its classes; beyond, a job of its own counts them (record numbers need them)
COUNTED_PARTITIONS: Final = 64


def _partitions(frame: DataFrame) -> int:
    """How many partitions Spark reads ``frame`` in (planned, not run)."""
    jdf: Any = frame._jdf
    return int(jdf.rdd().getNumPartitions())


def numbered(frame: DataFrame) -> DataFrame:
    """``frame`` with each row's Spark row id (its partition in the high bits, its place
    in the partition below): Spark takes no non-deterministic value inside an aggregate,
    so the id is a column the aggregation reads."""
    from pyspark.sql import functions as F

    return frame.withColumn(ROW_ID, F.monotonically_increasing_id())


def _record_numbers(
    cols: TypedColumns, ids: Sequence[int], sizes: Mapping[int, int] | None = None
) -> dict[int, int]:
    """Each of ``ids`` (Spark row ids of ``cols``' frame) as its row's place among all
    the rows of the frame, from 0 (the Python path's record index, ``toolkit.core.batch.profile``).
    Rows of the first partition need nothing more; others need the row counts of the
    partitions before theirs: ``sizes`` (by partition), else one small job counting rows
    by partition."""
    mask = (1 << ROW_BITS) - 1
    parts = {i >> ROW_BITS for i in ids}
    offset = {0: 0}
    if parts - {0}:
        if sizes is None:
            from pyspark.sql import functions as F

            sizes = {int(r["p"]): int(r["n"]) for r in cols.frame.groupBy(
                F.spark_partition_id().alias("p")).agg(F.count(F.lit(1)).alias("n")).collect()}
        total = 0
        for p in range(max(parts) + 1):
            offset[p] = total
            total += sizes.get(p, 0)
    return {i: offset[i >> ROW_BITS] + (i & mask) for i in ids}


def observe_typed(
    cols: TypedColumns, options: Options, batch: int
) -> tuple[Summary, Profile, TypedSeen] | None:
    """The summary and profile of a batch of typed columns, from one Spark aggregation
    (and, for kinds the batch's first rows do not show, a small query for the profile's
    samples); None when a class holding values has no single kind (the Python path
    observes the batch)."""
    cols = classified(cols, options)
    predicates, aggs, keys = class_counts(cols, options)
    row = numbered(cols.frame).agg(*aggs).collect()[0]
    return observed_counts(cols, row.asDict(), keys, predicates, options, batch)


def observed_counts(
    cols: TypedColumns,
    row: Mapping[str, Any],
    keys: Sequence[tuple[str, str]],
    predicates: Mapping[str, Mapping[str, Column]],
    options: Options,
    batch: int,
    head: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[Summary, Profile, TypedSeen] | None:
    """:func:`observe_typed` from the counts its aggregation gave (``row``), and the
    batch's :func:`head_records` if read already."""
    counts: dict[str, dict[str, int]] = {n: {} for n in cols.names}
    for j, (name, cls) in enumerate(keys):
        counts[name][cls] = int(row[f"k{j}"])
    kinds: dict[str, dict[str, Kind]] = {}
    for name in cols.names:
        found = class_kinds(cols.source_type(name), counts[name], options)
        if found is None:
            log.info("column %r holds values typed one by one: the Python path observes "
                     "the batch", name)
            return None
        kinds[name] = found
    rows = int(row["rows"])
    summary = typed_summary(kinds, counts, rows)
    seen = TypedSeen(cols, kinds, counts)
    ends = {(name, cls): (int(row[f"f{j}"]), int(row[f"l{j}"]))
            for j, (name, cls) in enumerate(keys) if counts[name][cls]}
    sizes = {int(k[1:]): int(v) for k, v in row.items() if k[0] == "p" and k[1:].isdigit()}
    at = _record_numbers(cols, [i for pair in ends.values() for i in pair],
                         sizes or None)
    spans = {key: (at[a], at[b]) for key, (a, b) in ends.items()}
    return summary, _profile(seen, predicates, options, batch, rows, spans, head), seen


def _profile(
    seen: TypedSeen, predicates: Mapping[str, Mapping[str, Column]], options: Options,
    batch: int, rows: int, spans: Mapping[tuple[str, str], tuple[int, int]],
    head: Sequence[Mapping[str, Any]] | None = None,
) -> Profile:
    """The profile the Python path makes of the same rows: counts per shape, the first
    values of each shape in source order (``head``: the batch's first rows, when the
    caller read them already), and the first and last record of each shape (``spans``:
    per column and class, from 0; ``toolkit.core.batch.profile``)."""
    cols = seen.columns
    classifier = Classifier(options)
    wanted: dict[str, dict[Shape, int]] = {}
    for name in cols.names:
        shapes: dict[Shape, int] = {}
        for cls, n in seen.counts[name].items():
            if n:
                shape = seen.kinds[name][cls].shape
                shapes[shape] = shapes.get(shape, 0) + n
        wanted[name] = shapes
    samples: dict[str, dict[Shape, list[Any]]] = {n: {} for n in cols.names}
    for record in head_records(cols) if head is None else head:
        for name, value in record.items():
            _add_sample(samples[name], classifier.kind(value, (name,)), value)
    for name in cols.names:
        for shape, n in wanted[name].items():
            have = len(samples[name].get(shape, ()))
            if have >= min(n, SAMPLES_PER_TYPE):
                continue
            # a rarer kind: its first values, in source order (a limit keeps the order)
            from functools import reduce

            preds = [predicates[name][c] for c, k in seen.kinds[name].items()
                     if k.shape == shape]
            where = reduce(lambda a, b: a | b, preds)
            i = cols.names.index(name)
            found = _records(cols.frame.where(where).select(f"c{i}").limit(SAMPLES_PER_TYPE),
                             (name,))
            samples[name][shape] = [r[name] for r in found]
    fields: dict[tuple[str, ...], FieldStats] = {}
    for name in cols.names:
        counts = wanted[name]
        at = batch if counts else None
        by_shape: dict[Shape, tuple[int, int]] = {}
        for cls, kind in seen.kinds[name].items():
            span = spans.get((name, cls))
            if span is None:
                continue
            had = by_shape.get(kind.shape, span)
            by_shape[kind.shape] = (min(had[0], span[0]), max(had[1], span[1]))
        fields[(name,)] = FieldStats(
            (name,), counts, at, at, {s: tuple(v) for s, v in samples[name].items()},
            {batch: counts} if counts else {},
            spans={batch: by_shape} if counts else {},
        )
    return Profile(fields, rows, starts={batch: 0})


def head_records(cols: TypedColumns) -> list[dict[str, Any]]:
    """The first :data:`HEAD_ROWS` rows of the batch, as the Python path reads them (the
    profile's first samples come from them)."""
    return _records(cols.frame.select(*cols.value_names()).limit(HEAD_ROWS), cols.names)


def _add_sample(found: dict[Shape, list[Any]], kind: Kind | None, value: Any) -> None:
    if kind is None:
        return
    bucket = found.setdefault(kind.shape, [])
    if len(bucket) < SAMPLES_PER_TYPE:
        bucket.append(value)


def _records(frame: DataFrame, names: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``frame`` as the Python path reads them (Arrow, ``toolkit.arrow``),
    under the source's names."""
    batches = frame._collect_as_arrow()
    if not batches:
        return []
    table = pa.Table.from_batches(batches).rename_columns(list(names))
    return arrow_records(table)


# ------------------------------------------------------------------ routing

#: RULES 2 conversions a Spark expression does exactly as ``toolkit.core.values.conversions`` does
#: for every value of a class that reaches it: ``(kind's type, column's Iceberg type)`` ->
#: the expression on the value in its own type. A pair not here (a double or a timestamp
#: into a string column: Spark spells them otherwise; a long into a timestamp column,
#: the routing exception, read by magnitude) goes to the Python router.
Conversion = Callable[[Any, Options], Any]


def _same(v: Column, o: Options) -> Column:
    return v


def _as(type_name: str) -> Conversion:
    def cast(v: Column, o: Options) -> Column:
        return v.cast(type_name)

    return cast


def _epoch_days(v: Column) -> Column:
    from pyspark.sql import functions as F

    return F.unix_date(v).cast("long")


def _date_to_long(v: Column, o: Options) -> Column:
    # the date's midnight in UTC, in epoch units (always whole)
    from pyspark.sql import functions as F

    return _epoch_days(v) * F.lit(86_400 * 1_000_000 // _MICROS_PER[o.timestamp_unit])


def _date_to_timestamp(v: Column, o: Options) -> Column:
    from pyspark.sql import functions as F

    return F.timestamp_seconds(_epoch_days(v) * F.lit(86_400))


def _timestamp_to_long(v: Column, o: Options) -> Column:
    from pyspark.sql import functions as F

    unit = {"s": F.unix_seconds, "ms": F.unix_millis, "us": F.unix_micros}
    return unit[o.timestamp_unit](v)


def _to_double(to_long: Conversion) -> Conversion:
    def convert(v: Column, o: Options) -> Column | None:
        # below 2**53 epoch units for every date and timestamp only in seconds and ms
        return None if o.timestamp_unit == "us" else to_long(v, o).cast("double")

    return convert


_CONVERSIONS: Final[dict[tuple[str, str], Conversion]] = {
    ("boolean", "boolean"): _same,
    ("boolean", "long"): _as("long"),
    ("boolean", "double"): _as("double"),
    ("boolean", "string"): _as("string"),  # true / false
    ("long", "long"): _same,
    ("long", "double"): _as("double"),  # the class that lands here is exact (RULES 2)
    ("long", "string"): _as("string"),  # decimal digits
    ("double", "double"): _same,
    ("string", "string"): _same,
    ("date", "date"): _same,
    ("date", "timestamptz"): _date_to_timestamp,
    ("date", "long"): _date_to_long,
    ("date", "double"): _to_double(_date_to_long),
    ("date", "string"): _as("string"),  # YYYY-MM-DD
    ("timestamp", "timestamptz"): _same,
    ("timestamp", "long"): _timestamp_to_long,  # whole units: the class that lands here
    ("timestamp", "double"): _to_double(_timestamp_to_long),
    ("decimal", DECIMAL_TYPE): _same,
}


def _own(cols: TypedColumns, landing: Landing) -> Column:
    """A source value in its kind's own type (RULES 1: ints as longs, floats as doubles,
    an ISO date text as its date)."""
    from pyspark.sql import functions as F

    c = cols.column(landing.source)
    source = cols.source_type(landing.source)
    if source == "string" and landing.value_class == "date" and landing.to_type != "string":
        return F.make_date(*_date_parts(c))
    if source in ("byte", "short", "int"):
        return c.cast("long")
    if source == "float":
        return c.cast("double")
    return c


def _landed(cols: TypedColumns, landing: Landing, options: Options) -> Column | None:
    from pyspark.sql import functions as F

    source = cols.source_type(landing.source)
    if landing.to_type == "string" and source == "string":
        value: Column | None = cols.column(landing.source)  # a text keeps its spelling
    else:
        convert = _CONVERSIONS.get((landing.from_type, landing.to_type))
        value = None if convert is None else convert(_own(cols, landing), options)
    if value is None or landing.wrap > 1:
        return None
    return F.array(value) if landing.wrap else value


def routed_typed(
    seen: TypedSeen,
    targets: Sequence[Target],
    schema: StructType,
    options: Options,
) -> LazyFrame | None:
    """The batch's rows routed into ``schema`` (the Spark schema of the plan's table, one
    field per target) as one projection, not analysed yet (the write analyses the stack of
    steps below it, names, codes, count, once, in its own session:
    :func:`toolkit.spark.plans.append`); None when a landing has no exact expression (the
    Python router does the batch)."""
    cols = seen.columns
    held = tuple(tuple(c for c, n in seen.counts[name].items() if n) for name in cols.names)
    def build() -> JavaColumns | None:
        exprs = _routing(cols, dict(zip(cols.names, held, strict=True)), targets, schema,
                         options)
        return None if exprs is None else java_columns(cols.lazy.session, exprs)

    exprs = built(("routed", cols.names, cols.types, cols.naive, cols.coded, tuple(targets),
                    schema.json(), held, options), build)
    return None if exprs is None else cols.lazy.select(exprs)


def _routing(
    cols: TypedColumns,
    held: Mapping[str, Sequence[str]],
    targets: Sequence[Target],
    schema: StructType,
    options: Options,
) -> list[Column] | None:
    """The expressions of :func:`routed_typed`, one per target, for columns that hold
    values of the classes ``held``."""
    from pyspark.sql import functions as F

    predicates = {n: class_predicates(cols, n, options) for n in cols.names}
    exprs = []
    for target, field in zip(targets, schema.fields, strict=True):
        out: Column | None = None
        for landing in target.landings:
            value = _landed(cols, landing, options)
            if value is None:
                log.info("%s -> %s (%s): no exact Spark expression; routing in Python",
                         landing.from_type, landing.to_type, target.name)
                return None
            if _lands_alike(target, held[landing.source]):  # every value, one way: no test
                out = value
                break
            pred = predicates[landing.source][landing.value_class]
            out = F.when(pred, value) if out is None else out.when(pred, value)
        expr = F.lit(None) if out is None else out
        exprs.append(expr.cast(field.dataType).alias(field.name))
    return exprs


def _lands_alike(target: Target, held: Sequence[str]) -> bool:
    """Whether every class the column holds lands in ``target`` by one conversion (the
    column's values then need no class test there)."""
    ways = {(x.from_type, x.to_type, x.wrap) for x in target.landings}
    return len(ways) == 1 and set(held) <= {x.value_class for x in target.landings} \
        and not (_DATE_TEXTS & set(held))


#: classes whose values' own form depends on the class (a date text read as its date)
_DATE_TEXTS: Final = frozenset({"date"})
