"""The source registry: each kind of source a batch can come from is one entry.

A :class:`SourceKind` knows how to recognise its sources, how to become a Spark DataFrame
(and in which :data:`~toolkit.spark.workers.Mode` its records then travel to Spark's
Python workers), how to give its records to Python without Spark (previews, profiles),
whether it can be read as a stream, and whether the JVM fast path (the tally and router
of ``toolkit.spark.tally`` and ``toolkit.spark.router``) may take it. :func:`source_kind`
picks the first entry of :data:`SOURCE_KINDS` that matches a source; ``ingest``,
``stream`` and the notebook panels all ask it, so no one else guesses what a source is.

>>> source_kind([{"a": 1}]).name
'records'
>>> source_kind("data/day1.jsonl").name, source_kind("data/*.parquet").name
('jsonl', 'parquet')
>>> source_kind([[{"a": 1}], [{"a": "x"}]]).records([[{"a": 1}], [{"a": "x"}]])
[[{'a': 1}], [{'a': 'x'}]]

Files are one kind per format, chosen by extension (``toolkit.pipeline.files`` reads
them); a path of no format raises :class:`~toolkit.errors.SourceFormatError` naming the
accepted extensions.

Adding a source kind (XML files, a Delta table...) is one entry plus its tests:

1. Write its functions here: ``matches(source)`` (cheap; never consume the source),
   ``to_dataframe(spark, source)``, ``records(source)`` (a list of batches of Python
   records, without Spark when the source allows it), and ``stream_reader(spark,
   location, options, schema)`` if Spark can stream it.
2. Add a :class:`SourceKind` to :data:`SOURCE_KINDS`, before any entry that would match
   its sources too (order decides). Choose the ``mode`` its DataFrame carries records
   in: ``rows`` for typed columns, ``json`` for one string column of JSON lines (which
   the JVM tally and router then take), ``pickle`` for Python objects. ``home`` says
   where its records live (``memory``, ``files``, ``spark``).
3. Add its tests to ``tests/pipeline/test_sources.py``: it is chosen for its sources,
   and its records equal those of the same data as Python records.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolkit.arrow import pandas_records, polars_records
from toolkit.arrow import records as arrow_records
from toolkit.core.values.jsonlines import ReadRecords, read_values
from toolkit.errors import SourceFormatError
from toolkit.pipeline import files
from toolkit.spark.misreads import (
    Misread,
    name_twin,
    repeated_field,
    spark_misread,
    year_month_column,
)
from toolkit.spark.workers import JVM_MODES, Mode, line_bytes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "SOURCE_KINDS",
    "Home",
    "SourceKind",
    "as_dataframe",
    "kind_of",
    "micro_batch_records",
    "records_of",
    "source_kind",
    "source_named",
]

log = logging.getLogger(__name__)

#: where a source's records live: in Python's memory, in files, or in Spark already
Home: TypeAlias = Literal["memory", "files", "spark"]


@dataclass(frozen=True)
class SourceKind:
    """One kind of source, and everything the toolkit does with it."""

    #: its name (``stream(format=...)`` takes it)
    name: str
    #: what it accepts, for the error listing the accepted kinds
    accepts: str
    #: whether ``source`` is of this kind (cheap; never consumes the source)
    matches: Callable[[Any], bool]
    #: the source as a Spark DataFrame whose records travel in :attr:`mode`
    to_dataframe: Callable[[SparkSession, Any], DataFrame]
    #: the source's records as Python values, batch by batch (previews and profiles)
    records: Callable[[Any], list[list[Any]]]
    #: how its DataFrame carries records to Spark's Python workers
    mode: Mode
    #: where its records live (the notebook profiles ``memory`` in Python even with a
    #: Spark session, ``files`` on Spark when given one, ``spark`` always on Spark)
    home: Home
    #: a streaming DataFrame of the sources appearing at a location, with Spark reader
    #: options and a schema (a ``StructType``, a DDL string, or None: the kind's own, or
    #: that of the files there now); None: it cannot be streamed
    stream_reader: (
        Callable[[SparkSession, str, Mapping[str, str], Any], DataFrame] | None
    ) = None

    @property
    def jvm_fast_path(self) -> bool:
        """Whether the JVM tally and router take its records: they read the one carriage
        of JSON lines (``toolkit.spark.workers.JVM_MODES``), whatever the source."""
        return self.mode in JVM_MODES


# ------------------------------------------------------------------ files


def _is_path(source: object) -> bool:
    return isinstance(source, str | os.PathLike)


def _is_format(fmt: str, source: object) -> bool:
    """A path, glob or folder of ``fmt`` files, by their extension."""
    return isinstance(source, str | os.PathLike) and files.guess_format(source) == fmt


def _file_kind(fmt: str, accepts: str, mode: Mode) -> SourceKind:
    """The kind of files of format ``fmt``: each file one batch in Python, all of them one
    DataFrame on Spark (``toolkit.pipeline.files``)."""
    return SourceKind(
        fmt, accepts, partial(_is_format, fmt), partial(_files_dataframe, fmt),
        partial(files.records, fmt), mode, "files", stream_reader=files.stream_reader(fmt),
    )


def _files_dataframe(fmt: str, spark: SparkSession, source: Any) -> DataFrame:
    return files.dataframe(spark, fmt, source)


def _read_here_dataframe(fmt: str, spark: SparkSession, source: Any) -> DataFrame:
    """Files' records, read in Python as ``simulate`` reads them, pickled to Spark: Avro
    (no spark-avro jar here), and the files Spark would read otherwise."""
    return _records_dataframe(spark, [r for b in files.records(fmt, source) for r in b])


def _misread(fmt: str, source: object) -> Misread | None:
    """The first column of a local Parquet or ORC source that Spark would read otherwise
    than ``simulate`` does (:mod:`toolkit.spark.misreads`); None for any other source."""
    if not isinstance(source, str | os.PathLike):
        return None
    found = spark_misread(files.local_files(source), fmt)
    if found is not None:
        log.info("%r is read by Arrow, not Spark: %s", os.fspath(source), found)
    return found


def micro_batch_records(paths: Sequence[Path], fmt: str) -> list[Any] | None:
    """The records of a stream's micro-batch of ``fmt`` files on this disk, when they are
    read here as ``ingest(path)`` reads them: Parquet or ORC files Spark would read
    otherwise (:func:`_misread`), by Arrow. None when Spark reads them: CSV files are
    checked for bytes that are not UTF-8 first (:func:`~toolkit.pipeline.files.check_utf8`),
    as a batch of them is."""
    if fmt == "csv":
        for path in paths:
            files.check_utf8(path)
    if fmt not in _READ_HERE:
        return None
    found = spark_misread(paths, fmt)
    if found is None:
        return None
    log.info("a micro-batch is read by Arrow, not Spark: %s", found)
    return [r for path in sorted(paths) for r in files.read_file(fmt, path)]


def _read_here_kind(fmt: str) -> SourceKind:
    """The kind of ``fmt`` files (Parquet, ORC) on this disk that Spark would read
    otherwise than ``simulate`` does: one value changed, dropped or refused. They are read
    by Arrow, as ``simulate`` reads them, and their records travel pickled. It takes the
    place of the format's own kind for such sources, whether the source tells its format
    or a caller names it (:func:`_read_here`)."""
    return SourceKind(
        f"{fmt}-read-here", f"{fmt} files on this disk that Spark would read otherwise "
        "(nanosecond timestamps, unsigned 64-bit integers...)",
        lambda source: _is_format(fmt, source) and _misread(fmt, source) is not None,
        partial(_read_here_dataframe, fmt), partial(files.records, fmt), "pickle", "files",
    )


# ------------------------------------------------------------------ Spark DataFrames


def _is_dataframe(source: object) -> bool:
    """A Spark DataFrame (classic or Connect), told without importing pyspark."""
    return any(
        c.__name__ == "DataFrame" and c.__module__.startswith("pyspark.sql")
        for c in type(source).__mro__
    )


def _is_text_frame(source: Any) -> bool:
    """A DataFrame of one string column: JSON lines."""
    if not _is_dataframe(source):
        return False
    from pyspark.sql.types import StringType

    fields = source.schema.fields
    return len(fields) == 1 and isinstance(fields[0].dataType, StringType)


def _same_frame(spark: SparkSession, source: Any) -> DataFrame:
    """The DataFrame itself; refused when two of its columns differ only by case and the
    session ignores case (Spark then cannot tell them apart to read either)."""
    frame: DataFrame = source
    twin = name_twin(frame.columns)
    if twin is not None and spark.conf.get("spark.sql.caseSensitive", "false") != "true":
        raise SourceFormatError(
            f"the DataFrame's column {twin!r} has another column's name but for case, "
            "which this Spark session cannot tell apart (spark.sql.caseSensitive is off): "
            "rename one of them, or hand the rows over as a pandas or Arrow frame"
        )
    return frame


def _typed_frame(spark: SparkSession, source: Any) -> DataFrame:
    """The DataFrame of typed columns itself (:func:`_same_frame`), once it is known its
    rows can reach Python (:func:`_readable_frame`)."""
    return _same_frame(spark, _readable_frame(source))


def _readable_frame(source: Any) -> Any:
    """``source``; refused, naming the field, when a record of it repeats a field's name
    (:func:`toolkit.spark.misreads.repeated_field`), or it holds year-month intervals,
    which Spark cannot hand to Python and no Iceberg type holds
    (:func:`toolkit.spark.misreads.year_month_column`)."""
    twin = repeated_field(source.schema)
    if twin is not None:
        raise SourceFormatError(
            f"the DataFrame has two fields named {twin!r} side by side: a record holds one "
            "field a name (nor can Spark hand such rows over to Python), so rename one of "
            "them first"
        )
    column = year_month_column(source.schema)
    if column is not None:
        raise SourceFormatError(
            f"the DataFrame's column {column!r} holds year-month intervals (Spark's "
            "INTERVAL YEAR TO MONTH), which Spark cannot hand over to Python and no "
            "Iceberg type holds: cast them to strings first (their text, such as "
            "INTERVAL '1-2' YEAR TO MONTH, keeps every digit)"
        )
    return source


def _text_frame_records(source: Any) -> list[list[Any]]:
    """The JSON lines of the frame, parsed (blank lines skipped, as workers do), read as
    the bytes Spark holds (a Java string would replace bytes that are not UTF-8 by U+FFFD);
    a line that cannot be taken whole is an ``UnreadLine`` the engine sets aside."""
    return [read_values(line for b in source._collect_as_arrow() for line in line_bytes(b))]


def _typed_frame_records(source: Any) -> list[list[Any]]:
    """The rows as Arrow hands them to Spark's Python workers, typed as they type them
    (RULES 1: an int column's values are ``Int``...; see ``toolkit.arrow``)."""
    return [[r for b in _readable_frame(source)._collect_as_arrow()
              for r in arrow_records(b)]]


# ------------------------------------------------------------------ Python records


def _is_records(source: object) -> bool:
    return isinstance(source, Iterable) and not isinstance(source, str | bytes | Mapping)


def _records_dataframe(spark: SparkSession, source: Any) -> DataFrame:
    # Python records travel pickled, so workers see exactly the values simulate() sees;
    # an item that is no mapping travels as it is, for the engine to set aside (dict() would
    # fail on 1 and make ["ab", "cd"] the record {"a": "b", "c": "d"})
    rows = [(pickle.dumps(dict(r) if isinstance(r, Mapping) else r),) for r in source]
    slices = max(1, min(len(rows), spark.sparkContext.defaultParallelism))
    rdd = spark.sparkContext.parallelize(rows, slices)
    return spark.createDataFrame(rdd, "value binary")


def _record_batches(source: Any) -> list[list[Any]]:
    """A list of records (one batch) or a list of lists of records (batches)."""
    items = list(source)
    if items and all(isinstance(b, list | tuple) for b in items):
        return [list(b) for b in items]
    return [items]


# ------------------------------------------------------------------ in-memory frames


def _made_by(package: str, *names: str) -> Callable[[object], bool]:
    """Whether a source is of a class called one of ``names`` from ``package``: told by
    its class's module and name, so pandas and Polars are never imported to ask."""

    def matches(source: object) -> bool:
        return any(
            c.__name__ in names and c.__module__.split(".")[0] == package
            for c in type(source).__mro__
        )

    return matches


def _frame_kind(
    name: str, accepts: str, matches: Callable[[Any], bool],
    records_of: Callable[[Any], list[dict[str, Any]]],
) -> SourceKind:
    """A kind of in-memory frame: its typed records (``toolkit.arrow``) are one batch.
    They travel to Spark pickled, so its workers see exactly the values ``simulate()``
    sees: Spark's own conversion of a frame would refuse a drifting ``object`` column and
    re-type others (uint64, nanoseconds, maps)."""
    return SourceKind(
        name, accepts, matches,
        lambda spark, source: _records_dataframe(spark, records_of(source)),
        lambda source: [records_of(source)], "pickle", "memory",
    )


#: by format, the kinds of files Spark would read otherwise (:func:`_read_here_kind`)
_READ_HERE: dict[str, SourceKind] = {f: _read_here_kind(f) for f in ("parquet", "orc")}

#: every kind of source, in the order they are tried
SOURCE_KINDS: tuple[SourceKind, ...] = (
    _file_kind(
        "jsonl", "a path, glob or folder (str or os.PathLike) of .jsonl, .json or .ndjson "
        "files (gzipped too: .jsonl.gz...), a .json file being JSON lines or one array",
        "json",
    ),
    _file_kind("parquet", "a path, glob or folder of .parquet files", "rows"),
    _file_kind("orc", "a path, glob or folder of .orc files", "rows"),
    _file_kind("csv", "a path, glob or folder of .csv or .csv.gz files (a header)", "rows"),
    SourceKind(
        "avro", "a path, glob or folder of .avro files", partial(_is_format, "avro"),
        partial(_read_here_dataframe, "avro"), partial(files.records, "avro"), "pickle",
        "files",
    ),
    SourceKind(
        "jsonl-dataframe", "a Spark DataFrame of one string column of JSON lines",
        _is_text_frame, _same_frame, _text_frame_records, "json", "spark",
    ),
    SourceKind(
        "dataframe", "a Spark DataFrame of typed columns", _is_dataframe, _typed_frame,
        _typed_frame_records, "rows", "spark",
    ),
    _frame_kind(
        "pandas", "a pandas DataFrame (its index left out)",
        _made_by("pandas", "DataFrame"), pandas_records,
    ),
    _frame_kind(
        "arrow", "a pyarrow Table, RecordBatch, RecordBatchReader or dataset",
        _made_by("pyarrow", "Table", "RecordBatch", "RecordBatchReader", "Dataset"),
        arrow_records,
    ),
    _frame_kind(
        "polars", "a Polars DataFrame or LazyFrame (collected)",
        _made_by("polars", "DataFrame", "LazyFrame"), polars_records,
    ),
    SourceKind(
        "records", "Python records (an iterable of dicts, or a list of lists of them)",
        _is_records, _records_dataframe, _record_batches, "pickle", "memory",
    ),
)


def source_kind(source: Any) -> SourceKind:
    """The first kind of :data:`SOURCE_KINDS` ``source`` is of (a :class:`TypeError`
    listing the accepted kinds when none; for a path, a
    :class:`~toolkit.errors.SourceFormatError` listing the accepted extensions)."""
    for kind in SOURCE_KINDS:
        if kind.matches(source):
            return _read_here(kind, source)
    if _is_path(source):
        raise files.unknown_format(source)
    accepted = "; ".join(f"{k.name}: {k.accepts}" for k in SOURCE_KINDS)
    raise TypeError(f"cannot read a {type(source).__name__} as a source; accepted: {accepted}")


def source_named(name: str) -> SourceKind:
    """The kind of source called ``name``.

    >>> source_named("xml")
    Traceback (most recent call last):
    ...
    ValueError: no source kind 'xml'; choose one of jsonl, parquet, orc, csv, avro, ..., records
    """
    for kind in SOURCE_KINDS:
        if kind.name == name:
            return kind
    names = ", ".join(k.name for k in SOURCE_KINDS)
    raise ValueError(f"no source kind {name!r}; choose one of {names}")


def as_dataframe(
    spark: SparkSession, source: Any, format: str | None = None
) -> tuple[DataFrame, SourceKind]:
    """A source as a DataFrame, and its kind (``kind.mode``: how its records travel;
    ``kind.jvm_fast_path``: whether the JVM may tally and route them). ``format`` names
    the kind when the source cannot tell it (a folder of files without extensions; a
    DataFrame of one string column that is no JSON: ``"dataframe"``)."""
    kind = kind_of(source, format)
    return kind.to_dataframe(spark, source), kind


def kind_of(source: Any, format: str | None = None) -> SourceKind:
    """The kind ``format`` names, else the kind ``source`` is of (:func:`source_kind`)."""
    return source_kind(source) if format is None else _read_here(source_named(format), source)


def _read_here(kind: SourceKind, source: Any) -> SourceKind:
    """``kind``; for Parquet or ORC files on this disk that Spark would read otherwise
    than ``simulate`` does, the kind that reads them by Arrow (:func:`_read_here_kind`)."""
    here = _READ_HERE.get(kind.name)
    return here if here is not None and _misread(kind.name, source) is not None else kind


def records_of(source: Any, format: str | None = None) -> list[Any]:
    """All the records of a source of any kind, as one batch (each file's, in name order).

    >>> records_of([{"a": 1}, {"a": 2}])
    [{'a': 1}, {'a': 2}]
    """
    batches = kind_of(source, format).records(source)
    if len(batches) == 1 and isinstance(batches[0], ReadRecords):
        return batches[0]  # one file's lines, which name the records set aside after reading
    return [r for b in batches for r in b]
