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
>>> source_kind("data/day1.jsonl").name
'jsonl'
>>> source_kind([[{"a": 1}], [{"a": "x"}]]).records([[{"a": 1}], [{"a": "x"}]])
[[{'a': 1}], [{'a': 'x'}]]

Adding a source kind (Parquet, CSV, a pandas frame...) is one entry plus its tests:

1. Write its functions here: ``matches(source)`` (cheap; never consume the source),
   ``to_dataframe(spark, source)``, ``records(source)`` (a list of batches of Python
   records, without Spark when the source allows it), and ``stream_reader(spark,
   location, options)`` if Spark can stream it.
2. Add a :class:`SourceKind` to :data:`SOURCE_KINDS`, before any entry that would match
   its sources too (order decides). Choose the ``mode`` its DataFrame carries records
   in: ``rows`` for typed columns, ``json`` for one string column of JSON lines (which
   the JVM tally and router then take), ``pickle`` for Python objects. ``home`` says
   where its records live (``memory``, ``files``, ``spark``).
3. Add its tests to ``tests/pipeline/test_sources.py``: it is chosen for its sources,
   and its records equal those of the same data as Python records.
"""

from __future__ import annotations

import glob
import os
import pickle
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolkit.core.jsonlines import parse_line, read_jsonl
from toolkit.spark.workers import JVM_MODES, Mode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "SOURCE_KINDS",
    "Home",
    "SourceKind",
    "as_dataframe",
    "jsonl_files",
    "source_kind",
    "source_named",
]

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
    #: options; None: it cannot be streamed
    stream_reader: Callable[[SparkSession, str, Mapping[str, str]], DataFrame] | None = None

    @property
    def jvm_fast_path(self) -> bool:
        """Whether the JVM tally and router take its records: they read the one carriage
        of JSON lines (``toolkit.spark.workers.JVM_MODES``), whatever the source."""
        return self.mode in JVM_MODES


# ------------------------------------------------------------------ JSON-lines files


def _is_path(source: object) -> bool:
    return isinstance(source, str | os.PathLike)


def jsonl_files(source: str | os.PathLike[str]) -> list[Path]:
    """A JSON-lines path or glob as its files, sorted (a glob matching nothing fails)."""
    text = os.fspath(source)
    if glob.has_magic(text):
        files = sorted(Path(p) for p in glob.glob(text, recursive=True))
        if not files:
            raise FileNotFoundError(f"no file matches {text!r}")
        return files
    path = Path(text)
    if not path.is_file():
        raise FileNotFoundError(f"no such JSON-lines file: {text!r}")
    return [path]


def _jsonl_dataframe(spark: SparkSession, source: Any) -> DataFrame:
    return spark.read.text(os.fspath(source))


def _jsonl_records(source: Any) -> list[list[Any]]:
    """Each file one batch, in name order."""
    return [read_jsonl(f) for f in jsonl_files(source)]


def _text_stream(spark: SparkSession, location: str, options: Mapping[str, str]) -> DataFrame:
    reader = spark.readStream.format("text")
    if options:
        reader = reader.options(**options)
    return reader.load(location)


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
    frame: DataFrame = source
    return frame


def _text_frame_records(source: Any) -> list[list[Any]]:
    """The JSON lines of the frame, parsed (blank lines skipped, as workers do)."""
    lines = [row[0] for row in source.collect()]
    return [[parse_line(line) for line in lines if line is not None and line.strip()]]


def _typed_frame_records(source: Any) -> list[list[Any]]:
    """The rows as Arrow hands them to Spark's Python workers."""
    return [[r for b in source._collect_as_arrow() for r in b.to_pylist()]]


# ------------------------------------------------------------------ Python records


def _is_records(source: object) -> bool:
    return isinstance(source, Iterable) and not isinstance(source, str | bytes | Mapping)


def _records_dataframe(spark: SparkSession, source: Any) -> DataFrame:
    # Python records travel pickled, so workers see exactly the values simulate() sees.
    rows = [(pickle.dumps(dict(r)),) for r in source]
    slices = max(1, min(len(rows), spark.sparkContext.defaultParallelism))
    rdd = spark.sparkContext.parallelize(rows, slices)
    return spark.createDataFrame(rdd, "value binary")


def _record_batches(source: Any) -> list[list[Any]]:
    """A list of records (one batch) or a list of lists of records (batches)."""
    items = list(source)
    if items and all(isinstance(b, list | tuple) for b in items):
        return [list(b) for b in items]
    return [items]


#: every kind of source, in the order they are tried
SOURCE_KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        "jsonl", "a path or glob of JSON-lines files (str or os.PathLike)", _is_path,
        _jsonl_dataframe, _jsonl_records, "json", "files", stream_reader=_text_stream,
    ),
    SourceKind(
        "jsonl-dataframe", "a Spark DataFrame of one string column of JSON lines",
        _is_text_frame, _same_frame, _text_frame_records, "json", "spark",
    ),
    SourceKind(
        "dataframe", "a Spark DataFrame of typed columns", _is_dataframe, _same_frame,
        _typed_frame_records, "rows", "spark",
    ),
    SourceKind(
        "records", "Python records (an iterable of dicts, or a list of lists of them)",
        _is_records, _records_dataframe, _record_batches, "pickle", "memory",
    ),
)


def source_kind(source: Any) -> SourceKind:
    """The first kind of :data:`SOURCE_KINDS` ``source`` is of (a :class:`TypeError`
    listing the accepted kinds when none)."""
    for kind in SOURCE_KINDS:
        if kind.matches(source):
            return kind
    accepted = "; ".join(f"{k.name}: {k.accepts}" for k in SOURCE_KINDS)
    raise TypeError(f"cannot read a {type(source).__name__} as a source; accepted: {accepted}")


def source_named(name: str) -> SourceKind:
    """The kind of source called ``name``.

    >>> source_named("parquet")
    Traceback (most recent call last):
    ...
    ValueError: no source kind 'parquet'; choose one of jsonl, jsonl-dataframe, dataframe, records
    """
    for kind in SOURCE_KINDS:
        if kind.name == name:
            return kind
    names = ", ".join(k.name for k in SOURCE_KINDS)
    raise ValueError(f"no source kind {name!r}; choose one of {names}")


def as_dataframe(spark: SparkSession, source: Any) -> tuple[DataFrame, SourceKind]:
    """A source as a DataFrame, and its kind (``kind.mode``: how its records travel;
    ``kind.jvm_fast_path``: whether the JVM may tally and route them)."""
    kind = source_kind(source)
    return kind.to_dataframe(spark, source), kind
