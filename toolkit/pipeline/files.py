"""Files of every common format as sources: which format a path names, and how each one
reads, in Python (previews, ``simulate``) and on Spark (``ingest``, ``stream``).

A source is a path, a glob (``data/*.parquet``) or a folder holding files of one format
(its visible files: Spark skips names starting with ``_`` or ``.``, and so does this
module). The format comes from the extension, a trailing ``.gz`` stripped first for the
text formats (:data:`EXTENSIONS`); a folder's format is that of its files.

>>> format_of("data/day1.jsonl.gz"), format_of("data/*.parquet"), format_of("x.txt")
('jsonl', 'parquet', None)
>>> print(accepted_extensions().replace("; ", "\\n"))
jsonl: .jsonl, .json, .ndjson (also gzipped: .jsonl.gz...)
parquet: .parquet
orc: .orc
csv: .csv, .csv.gz
avro: .avro

Each file is one batch in Python; Spark reads a source whole, as one batch. How each
format reads (the choices are written down in ``docs/rules.md``, "Sources"):

* **jsonl** (``.jsonl``, ``.json``, ``.ndjson``): JSON lines, read by Spark's text reader
  (the JVM fast path). A ``.json`` file whose first character that is not blank is ``[``
  is one JSON array of records instead: it is parsed in Python, and its items reach Spark
  re-serialised as JSON lines, beside the text of the other files.
* **parquet**, **orc**: Arrow's readers (``toolkit.arrow`` keeps their types); Spark's,
  with ``mergeSchema`` (a column missing from a file reads null; files whose types
  disagree raise :class:`~toolkit.errors.SourceFormatError`: ingest them one by one).
* **csv**: a header line, every cell a text (RULES 1 then detects ISO dates), an empty
  cell null; Python reads what Spark's CSV reader reads (:func:`read_csv`).
* **avro**: read in Python with fastavro (:func:`read_avro`), on Spark too (no spark-avro
  jar here): its records reach Spark pickled, like Python records. It cannot be streamed.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import os
import re
from collections.abc import Callable, Mapping
from glob import glob, has_magic
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final
from urllib.parse import urlparse

from toolkit.core.values.jsonlines import read_json_array, read_lines, starts_with_array
from toolkit.core.values.scalars import Float, Int, plain_value
from toolkit.core.values.secrets import masked
from toolkit.core.values.wording import counted
from toolkit.errors import SourceFormatError
from toolkit.spark.cluster import reachable_input
from toolkit.spark.misreads import spark_misread
from toolkit.spark.parquet_footer import footer_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "CSV_OPTIONS",
    "PARQUET_OPTIONS",
    "EXTENSIONS",
    "accepted_extensions",
    "dataframe",
    "folder_format",
    "format_of",
    "guess_format",
    "check_utf8",
    "local_files",
    "read_avro",
    "read_csv",
    "read_file",
    "records",
    "source_files",
    "stream_reader",
    "unknown_format",
]

#: the extensions each format is chosen by (lowercase; ``.json`` may be one JSON array)
EXTENSIONS: Final[dict[str, tuple[str, ...]]] = {
    "jsonl": (".jsonl", ".json", ".ndjson"),
    "parquet": (".parquet",),
    "orc": (".orc",),
    "csv": (".csv",),
    "avro": (".avro",),
}
#: the text formats, which may also come gzipped (``.jsonl.gz``): Spark's text and CSV
#: readers decompress a ``.gz`` file, Python reads it through :mod:`gzip`
GZIPPED: Final = frozenset({"jsonl", "csv"})

#: Spark's Parquet reader: dates and timestamps as the file holds them (the proleptic
#: Gregorian calendar, as Arrow reads them for ``simulate``, and PyIceberg and DuckDB). A
#: file no Spark 3 wrote (pyarrow, Impala, Trino...) holding a date before 1582-10-15 or
#: a timestamp before 1900 is refused otherwise (it might come from a legacy system's
#: hybrid calendar); a file Spark 2 wrote says so, and Spark still converts its values
PARQUET_OPTIONS: Final[dict[str, str]] = {
    "datetimeRebaseMode": "CORRECTED",
    "int96RebaseMode": "CORRECTED",
}
#: by format, what Spark's reader of Parquet or ORC files is told beyond its defaults
_SPARK_READS: Final[dict[str, dict[str, str]]] = {"parquet": PARQUET_OPTIONS}

#: Spark's CSV reader, as :func:`read_csv` reads too: a header, texts only (no inference),
#: RFC 4180 quotes (a quote doubled inside quotes), records spanning lines, and a row
#: whose number of cells differs from the header's fails (nothing is dropped silently)
CSV_OPTIONS: Final[dict[str, str]] = {
    "header": "true",
    "inferSchema": "false",
    "escape": '"',
    "multiLine": "true",
    "mode": "FAILFAST",
    "enforceSchema": "false",
    "encoding": "UTF-8",
}


# ------------------------------------------------------------------ which format


def format_of(name: str | os.PathLike[str]) -> str | None:
    """The format a file name (or a glob, or a folder named like a file) names by its
    extension, or None."""
    text = os.fspath(name).rstrip("/\\").lower()
    gz = text.endswith(".gz")
    if gz:
        text = text[:-3]
    for fmt, extensions in EXTENSIONS.items():
        if text.endswith(extensions) and (fmt in GZIPPED or not gz):
            return fmt
    return None


def accepted_extensions() -> str:
    """The extensions of every format, for error messages."""
    parts = []
    for fmt, extensions in EXTENSIONS.items():
        listed = ", ".join(extensions)
        if fmt in GZIPPED:
            listed += (
                f", {extensions[0]}.gz" if len(extensions) == 1
                else f" (also gzipped: {extensions[0]}.gz...)"
            )
        parts.append(f"{fmt}: {listed}")
    return "; ".join(parts)


def _is_local(text: str) -> bool:
    scheme = urlparse(text).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def _local(text: str) -> str:
    return urlparse(text).path if text.startswith("file:") else text


def _visible(path: Path) -> bool:
    return not path.name.startswith(("_", "."))


def _listed(text: str) -> list[Path]:
    """The visible files a local path, glob or folder holds (none when it names nothing);
    a file named on its own is read whatever its name."""
    text = _local(text)
    if not has_magic(text) and Path(text).is_file():
        return [Path(text)]
    found = [Path(p) for p in glob(text, recursive=True)] if has_magic(text) else [Path(text)]
    out: list[Path] = []
    for path in found:
        if path.is_dir():
            out += [p for p in path.iterdir() if p.is_file() and _visible(p)]
        elif path.is_file() and _visible(path):
            out.append(path)
    return sorted(out)


def local_files(source: str | os.PathLike[str]) -> list[Path]:
    """The visible files a path, glob or folder on this disk holds, sorted by name; none
    for a remote one, or one naming nothing."""
    text = os.fspath(source)
    return _listed(text) if _is_local(text) else []


def guess_format(source: str | os.PathLike[str]) -> str | None:
    """The format of a path, glob or folder: its extension's, else (a folder, a glob such
    as ``data/*``) that of every file it holds. None when it names none, holds no file,
    or holds files of several formats (:func:`unknown_format` says which)."""
    text = os.fspath(source)
    named = format_of(text)
    if named is not None or not _is_local(text):
        return named
    formats = {format_of(p.name) for p in _listed(text)}
    return formats.pop() if len(formats) == 1 else None


def folder_format(location: str | os.PathLike[str]) -> str:
    """The format of the files a folder streams: :func:`guess_format`'s, ``jsonl`` for a
    folder holding no file yet (files may come after a stream starts) or a remote one
    whose name tells none; a folder of several formats raises :func:`unknown_format`."""
    text = os.fspath(location)
    fmt = guess_format(text)
    if fmt is not None:
        return fmt
    if _is_local(text) and _listed(text):
        raise unknown_format(text)
    return "jsonl"


def unknown_format(source: str | os.PathLike[str]) -> SourceFormatError:
    """The error for a path whose format :func:`guess_format` cannot tell."""
    text = os.fspath(source)
    shown = masked(text)  # a remote source's URL may hold a password or a token
    local = _is_local(text) and (has_magic(text) or Path(_local(text)).is_dir())
    files = _listed(text) if local else []  # a folder's or a glob's, not a file's own
    if not files:
        what = f"cannot tell the format of {shown!r} from its name"
        if _is_local(text) and Path(_local(text)).is_dir():
            what = f"{shown!r} is a folder holding no file to tell its format"
    else:
        names = sorted({p.name for p in files}, key=lambda n: (format_of(n) or "", n))
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        what = f"{text!r} holds files of several formats or unknown extensions ({shown})"
    return SourceFormatError(
        f"{what}: a file source is chosen by its files' extension; accepted: "
        f"{accepted_extensions()}. Name the files so, or pass format= (one of "
        f"{', '.join(EXTENSIONS)})"
    )


def source_files(source: str | os.PathLike[str]) -> list[Path]:
    """A path, glob or folder as its visible files, sorted by name (a glob matching
    nothing, or a missing path, raises :class:`FileNotFoundError`)."""
    text = os.fspath(source)
    files = _listed(text)
    if not files:
        if has_magic(text):
            raise FileNotFoundError(f"no file matches {text!r}")
        if not Path(_local(text)).exists():
            raise FileNotFoundError(f"no such file or folder: {text!r}")
    return files


# ------------------------------------------------------------------ Python records


def records(fmt: str, source: str | os.PathLike[str]) -> list[list[Any]]:
    """The records of a source of format ``fmt``, each file one batch, in name order."""
    return [read_file(fmt, path) for path in source_files(source)]


def read_file(fmt: str, path: Path) -> list[Any]:
    """The records of one file of format ``fmt``."""
    if fmt == "jsonl":
        return read_json(path)
    if fmt == "csv":
        return read_csv(path)
    if fmt == "avro":
        return read_avro(path)
    from toolkit.arrow import records as arrow_records

    if fmt == "parquet":
        return _parquet_records(path)
    if fmt == "orc":
        import pyarrow.orc as po

        return arrow_records(po.ORCFile(path).read())
    raise ValueError(f"no file format {fmt!r}; choose one of {', '.join(EXTENSIONS)}")


def _parquet_records(path: Path) -> list[dict[str, Any]]:
    """The records of a Parquet file (``toolkit.arrow``). Arrow reads INT96 timestamps
    (Impala's, Hive's) as nanoseconds, keeping every digit, but one outside 1677-2262
    overflows there into another instant without a word: such a value is read again in
    microseconds, which hold every year, and its digits below them are taken from the
    overflowed nanoseconds (the same modulo 2**64), as the ISO text ``toolkit.arrow``
    gives any such timestamp."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from toolkit.arrow import int96_columns, int96_overflows, nanosecond_text
    from toolkit.arrow import records as arrow_records

    parquet = pq.ParquetFile(path)
    rows = arrow_records(table := parquet.read())
    int96 = [top for top, leaf in int96_columns(parquet.schema).items() if top == leaf]
    if not int96:
        return rows
    wide = pq.ParquetFile(path, coerce_int96_timestamp_unit="us").read(columns=int96)
    for name in int96:
        moved = int96_overflows(table.column(name), wide.column(name))
        if not moved:
            continue
        micros = pa.array([exact // 1000 for exact in moved.values()], wide.column(name).type)
        again = arrow_records(pa.table({name: micros}))
        for (i, exact), row in zip(moved.items(), again, strict=True):
            stamp, below = row[name], exact % 1000  # the digits below the microsecond
            rows[i][name] = nanosecond_text(stamp, below) if below else stamp
    return rows


def _is_array_document(path: Path) -> bool:
    """A ``.json`` file (gzipped or not) whose first character not blank is ``[``."""
    name = path.name.lower().removesuffix(".gz")
    return name.endswith(".json") and starts_with_array(path)


def read_json(path: Path) -> list[Any]:
    """A JSON-lines file's records, or the items of a ``.json`` file holding one array. A
    line that cannot be taken whole (not UTF-8, not JSON, a key twice) is an
    :class:`~toolkit.core.values.jsonlines.UnreadLine` in its place, which the engine sets aside
    with its line number, as ``ingest`` does: one such line never stops a batch."""
    return read_json_array(path) if _is_array_document(path) else read_lines(path)


def _open_text(path: Path) -> IO[str]:
    """A file's text, undecoded line endings (CSV reads them itself), through gzip for a
    ``.gz`` name; a UTF-8 byte order mark is skipped, as Spark does."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _read_text(path: Path) -> str:
    """A file's whole text (as :func:`_open_text`), its bytes checked first
    (:func:`check_utf8`)."""
    check_utf8(path)
    with _open_text(path) as f:
        return f.read()


def check_utf8(path: Path) -> None:
    """Refuse a file holding bytes that are not UTF-8, naming their line: Spark would read
    them as U+FFFD and change the text unseen. Read a megabyte at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    offset = lines = 0
    with opener(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                at = max(exc.start - (len(exc.object) - len(chunk)), 0)  # bytes held over
                line = lines + chunk[:at].count(b"\n") + 1
                utf16 = chunk.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) \
                    and not offset
                raise SourceFormatError(
                    f"{path}: line {line:,} holds bytes "
                    f"that are not UTF-8 ({exc.object[exc.start:exc.end]!r} at byte "
                    f"{offset + at:,}). Spark would read them as U+FFFD, changing the text: "
                    "re-encode the file as UTF-8 (" + (
                        "it is UTF-16: iconv -f UTF-16 -t UTF-8" if utf16 else
                        "iconv -f LATIN1 -t UTF-8, if it is Latin-1") + ")"
                ) from None
            lines += chunk.count(b"\n")
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise SourceFormatError(
                f"{path}: its last line ends within a UTF-8 character (byte {offset:,}): "
                "the file is cut short or not UTF-8"
            ) from None


def _line_separator(text: str) -> str:
    """The line ending Spark's CSV parser (univocity) takes for a file's: the first one
    in it, even inside a quoted cell."""
    found = re.search(r"\r\n?|\n", text)
    return found.group() if found else "\n"


def _safe_header(names: list[str]) -> list[str]:
    """Column names as Spark's CSV reader makes them (``CSVUtils.makeSafeHeader``, case
    insensitive): an empty name is ``_c<index>``, names equal but for case take their
    index as a suffix (``a,A`` -> ``a0, A1``)."""
    lowered = [n.lower() for n in names if n]
    twice = {n for n in lowered if lowered.count(n) > 1}
    return [
        f"_c{i}" if not n else f"{n}{i}" if n.lower() in twice else n
        for i, n in enumerate(names)
    ]


def read_csv(path: Path) -> list[dict[str, Any]]:
    """The records of a CSV file, as Spark's CSV reader reads it with :data:`CSV_OPTIONS`.

    The first row that is not blank is the header (see :func:`_safe_header`); blank lines
    are skipped. Every cell is a text, kept as it is (spaces too); an empty cell, quoted
    or not, is null. Quotes follow RFC 4180 (a quote inside a quoted cell is doubled); a
    quoted cell may span lines, and the file's line ending inside it reads ``\\n`` (Spark
    normalises it so). Refused, with the file and row: a row whose number of cells
    differs from the header's (Spark's FAILFAST), a quote out of place, and line endings
    mixed outside quoted cells (Spark would read the other ones into the cells).
    """
    _unlimited_cells()
    text = _read_text(path)
    sep = _line_separator(text)
    try:
        rows = [row for row in csv.reader(io.StringIO(text, newline=""), strict=True) if row]
    except csv.Error as exc:
        raise SourceFormatError(f"{path}: not RFC 4180 CSV: {exc}") from None
    _check_line_endings(path, text, sep, rows)
    if sep != "\n":
        rows = [[cell.replace(sep, "\n") for cell in row] for row in rows]
    if not rows:
        return []
    header = _safe_header(rows[0])
    out = []
    for number, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise SourceFormatError(
                f"{path}: row {number:,} has {counted(len(row), 'cell')}, the header "
                f"{len(header):,}: "
                f"a malformed CSV record (Spark's FAILFAST refuses it too): {row[:5]!r}"
            )
        out.append({k: (v if v else None) for k, v in zip(header, row, strict=True)})
    return out


def _unlimited_cells() -> None:
    """Lift the csv module's limit of 128 KiB a cell (Spark's reader has none)."""
    if csv.field_size_limit() < _CELL_LIMIT:
        csv.field_size_limit(_CELL_LIMIT)


_CELL_LIMIT: Final = 2**31 - 1


def _check_line_endings(path: Path, text: str, sep: str, rows: list[list[str]]) -> None:
    """Refuse line endings other than ``sep`` outside quoted cells (the csv module takes
    any as the end of a row, Spark's parser only ``sep``)."""
    cells = [cell for row in rows for cell in row if "\r" in cell or "\n" in cell]

    def stray(mark: str, text: str, cells: list[str]) -> int:
        def bare(s: str) -> int:
            n = s.count(mark)
            return n - s.count("\r\n") if sep == "\r\n" else n

        return bare(text) - sum(bare(c) for c in cells)

    marks = {"\n": ("\r",), "\r": ("\n",), "\r\n": ("\r", "\n")}[sep]
    if any(stray(m, text, cells) for m in marks):
        raise SourceFormatError(
            f"{path}: mixes line endings ({sep!r} first, others after): Spark's CSV reader "
            "would read the others into the cells; write the file with one line ending"
        )


# ------------------------------------------------------------------ Avro


def read_avro(path: Path) -> list[dict[str, Any]]:
    """The records of an Avro object container file, each value typed by its schema
    (RULES 1): int -> ``Int``, long -> int, float -> ``Float``, double -> float,
    bytes and fixed -> bytes, decimal -> ``Decimal``, date -> date, timestamp-millis and
    -micros -> datetime (UTC; the local- ones naive), time-millis and -micros, uuid ->
    their ISO text, enum and string -> str, record and map -> dict, array -> list, union
    -> the value (in a union of int and long, or of float and double, an integer reads
    as a long and a number as a double: the value does not tell its branch)."""
    import fastavro

    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        kind = schema.get("type") if isinstance(schema, dict) else schema
        if kind not in ("record", "error"):
            raise SourceFormatError(f"{path}: an Avro file of {kind} values, not of records")
        convert = _Avro().converter(schema)
        return [convert(r) for r in reader]


def _same(value: Any) -> Any:
    return value


#: the conversion of an Avro primitive's values (the others are what fastavro gives)
_PRIMITIVE: Final[dict[str, Callable[[Any], Any]]] = {"int": Int, "float": Float, "bytes": bytes}
#: primitives whose Python values are one type, tried first in a union: an integer is a
#: long before an int, a number a double before a float, a boolean before either
_UNION_ORDER: Final = ("null", "boolean", "long", "int", "double", "float", "string", "bytes")
_MATCH: Final[dict[str, type]] = {
    "boolean": bool, "long": int, "int": int, "double": float, "float": float,
    "string": str, "bytes": bytes, "enum": str, "fixed": bytes, "array": list, "map": dict,
}


class _Avro:
    """Converters from fastavro's values to the engine's, compiled from a writer schema."""

    def __init__(self) -> None:
        self.named: dict[str, Callable[[Any], Any]] = {}
        self.definitions: dict[str, Any] = {}

    def converter(self, schema: Any) -> Callable[[Any], Any]:
        if isinstance(schema, str):
            if schema in self.named:  # a named type, maybe still being compiled
                return lambda v: self.named[schema](v)
            return _PRIMITIVE.get(schema, _same)
        if isinstance(schema, list):
            return self._union(schema)
        kind = schema["type"]
        logical = self._logical(schema, kind)
        if kind in ("record", "error"):
            return self._record(schema)
        if kind == "array":
            item = self.converter(schema["items"])
            return lambda v: [None if x is None else item(x) for x in v]
        if kind == "map":
            value = self.converter(schema["values"])
            return lambda v: {k: None if x is None else value(x) for k, x in v.items()}
        if kind in ("enum", "fixed"):
            conv = logical or (bytes if kind == "fixed" else _same)
            self.named[schema["name"]], self.definitions[schema["name"]] = conv, schema
            return conv
        return logical or self.converter(kind)  # a primitive written as {"type": "int"}

    @staticmethod
    def _logical(schema: Mapping[str, Any], kind: Any) -> Callable[[Any], Any] | None:
        """The values of a logical type fastavro decodes (decimal, date, times, uuid):
        their plain values; None for an unknown one (its base type's values)."""
        from fastavro.read import LOGICAL_READERS

        logical = schema.get("logicalType")
        if logical is None or not isinstance(kind, str):
            return None
        return plain_value if f"{kind}-{logical}" in LOGICAL_READERS else None

    def _record(self, schema: Mapping[str, Any]) -> Callable[[Any], Any]:
        name = schema["name"]
        fields: list[tuple[str, Callable[[Any], Any]]] = []

        def convert(v: Mapping[str, Any]) -> dict[str, Any]:
            return {k: None if v.get(k) is None else c(v[k]) for k, c in fields}

        self.named[name], self.definitions[name] = convert, schema
        fields += [(f["name"], self.converter(f["type"])) for f in schema["fields"]]
        return convert

    def _branch_kind(self, branch: Any) -> str:
        if isinstance(branch, str):
            definition = self.definitions.get(branch)
            return branch if definition is None else str(definition["type"])
        if isinstance(branch, dict):
            kind = branch["type"]
            if isinstance(kind, str) and branch.get("logicalType"):
                return "logical" if self._logical(branch, kind) else kind
            return self._branch_kind(kind) if isinstance(kind, dict | list) else str(kind)
        return "union"

    def _union(self, branches: list[Any]) -> Callable[[Any], Any]:
        """A union's value through the converter of the branch it is of: a record by its
        field names, another value by its Python type (see :data:`_UNION_ORDER`)."""
        compiled = [(b, self._branch_kind(b), self.converter(b)) for b in branches]
        records = [
            (frozenset(f["name"] for f in self._definition(b)["fields"]), conv)
            for b, kind, conv in compiled if kind in ("record", "error")
        ]
        rank = {k: i for i, k in enumerate(_UNION_ORDER)}
        ordered = sorted(
            (c for c in compiled if c[1] in _MATCH), key=lambda c: rank.get(c[1], len(rank))
        )
        others = [(_MATCH[kind], conv) for _, kind, conv in ordered]

        def convert(v: Any) -> Any:
            if v is None:
                return None
            if type(v) is dict:
                for keys, conv in records:
                    if frozenset(v) == keys:
                        return conv(v)
            for wanted, conv in others:
                if type(v) is wanted:
                    return conv(v)
            return plain_value(v)  # a logical type's value: a decimal, date, UUID...

        return convert

    def _definition(self, branch: Any) -> Mapping[str, Any]:
        if isinstance(branch, str):
            found: Mapping[str, Any] = self.definitions[branch]
            return found
        return branch if branch.get("fields") is not None else self._definition(branch["type"])


# ------------------------------------------------------------------ Spark DataFrames


def dataframe(spark: SparkSession, fmt: str, source: str | os.PathLike[str]) -> DataFrame:
    """A source of format ``fmt`` (jsonl, parquet, orc or csv) as one Spark DataFrame:
    JSON lines as one string column (``value``), the others typed."""
    text = os.fspath(source)
    reachable_input(spark, text)  # executors read it: on a cluster, not this disk
    if fmt == "jsonl":
        return _jsonl_dataframe(spark, text)
    if fmt == "csv":
        return _csv_dataframe(spark, text)
    if fmt in ("parquet", "orc"):
        reader = spark.read.format(fmt).options(**_SPARK_READS.get(fmt, {}))
        if not os.path.isfile(text):
            # the files of a folder may each hold other columns (drift across files); a
            # single file has one schema, and merging ORC schemas costs a Spark job
            reader = reader.option("mergeSchema", "true")
        elif fmt == "parquet" and (schema := footer_schema(spark, text)) is not None:
            reader = reader.schema(schema)  # Spark's inference runs a job of its own
        try:
            return reader.load(text)
        except Exception as exc:
            message = str(exc)
            if "Illegal Parquet type" in message:
                # Spark 3.5 reads no nanosecond timestamps, times of day, UUIDs...; files
                # on this disk are read by Arrow instead (toolkit.spark.misreads), these
                # are elsewhere: say so, never guess
                raise SourceFormatError(
                    f"{masked(text)}: Spark cannot read a column of these {fmt} files "
                    f"({_illegal_type(message)}). Read them with pyarrow "
                    "(pyarrow.parquet.read_table) and ingest the Arrow table, which keeps "
                    "every value"
                ) from exc
            if "CANNOT_MERGE" not in message and "Failed to merge" not in message:
                raise
            raise SourceFormatError(
                f"{text}: its {fmt} files disagree on a column's type, which one Spark "
                f"DataFrame cannot hold{_schemas_of(str(exc))}. Ingest them as separate "
                "batches (one ingest per file); each file's records still evolve the table"
            ) from exc
    raise ValueError(f"Spark reads no {fmt!r} files here; avro goes through Python")


def _illegal_type(message: str) -> str:
    """The type Spark's Parquet reader refused, as its error names it."""
    found = re.search(r"Illegal Parquet type: ([^.\n]+)", message)
    return found[1].strip() if found else "a type Spark does not know"


def _schemas_of(message: str) -> str:
    """The two schemas Spark's merge error names, if it does."""
    found = re.search(
        r"Initial schema:\s*(.+?)\s*Schema that cannot be merged with the initial schema:"
        r"\s*(.+?)\.?\s*$", message, re.MULTILINE | re.DOTALL,
    )
    return f" (one file: {found[1]}, another: {found[2]})" if found else ""


def _jsonl_dataframe(spark: SparkSession, text: str) -> DataFrame:
    """Spark's text reader over JSON lines; the items of JSON array documents (read in
    Python) join as JSON lines of their own."""
    files = _listed(text) if _is_local(text) else []
    arrays = [f for f in files if _is_array_document(f)]
    if not arrays:
        return spark.read.text(text)
    lines = [(_json_line(item),) for f in arrays for item in read_json_array(f)]
    frame = spark.createDataFrame(lines, "value string")
    rest = [str(f) for f in files if f not in arrays]
    return spark.read.text(rest).unionByName(frame) if rest else frame


def _json_line(value: Any) -> str:
    """One item of a JSON array as a JSON line that reads back as the same value."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _csv_dataframe(spark: SparkSession, text: str) -> DataFrame:
    """Spark's CSV reader (:data:`CSV_OPTIONS`); local files are read in groups of one
    header, joined by column name (a column a file lacks reads null), so files with other
    headers still make one DataFrame. Elsewhere (and in streams) Spark checks each file's
    header against the first file's (``enforceSchema`` off: names it renames, a duplicate
    or an empty one, then fail); within a group of one header it need not."""
    reader = spark.read.options(**CSV_OPTIONS)
    if not _is_local(text):
        return reader.csv(text)
    groups: dict[tuple[str, ...], list[str]] = {}
    for path in source_files(text):
        groups.setdefault(_csv_header(path), []).append(str(path))
    same = reader.option("enforceSchema", "true")
    frames = [same.csv(paths) for header, paths in groups.items() if header]
    if not frames:
        return reader.csv(text)
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out


def _csv_header(path: Path) -> tuple[str, ...]:
    _unlimited_cells()
    check_utf8(path)  # the whole file: Spark reads it next
    with _open_text(path) as f:
        for row in csv.reader(f):
            if row:
                return tuple(_safe_header(row))
    return ()


def stream_reader(fmt: str) -> Callable[[SparkSession, str, Mapping[str, str], Any], DataFrame]:
    """Spark's file stream of format ``fmt`` over a folder: ``(spark, folder, options,
    schema)``. JSON lines stream as text (no schema); parquet, orc and csv need one:
    ``schema`` (a ``StructType`` or a DDL string) or, when None, the schema of the files
    in the folder now, read as a batch (one for all: later files must fit it)."""

    def read(
        spark: SparkSession, location: str, options: Mapping[str, str], schema: Any
    ) -> DataFrame:
        if fmt == "jsonl":
            if schema is not None:
                raise ValueError("JSON lines stream as text: schema= is for parquet, orc, csv")
            reachable_input(spark, location)
            return spark.readStream.format("text").options(**options).load(location)
        defaults = CSV_OPTIONS if fmt == "csv" else {
            "mergeSchema": "true", **_SPARK_READS.get(fmt, {})}
        merged = {**defaults, **options}
        if schema is None:
            schema = _folder_schema(spark, fmt, location, merged)
        reachable_input(spark, location)
        return spark.readStream.format(fmt).options(**merged).schema(schema).load(location)

    return read


#: how a stream is given its files' schema, in the Python API and on the command line
_GIVE_SCHEMA: Final = ("give it (schema= in Python, --schema on the command line: a DDL "
                       "string such as 'id long, name string')")


def _folder_schema(
    spark: SparkSession, fmt: str, location: str, options: Mapping[str, str]
) -> Any:
    """The schema of the files a folder holds, for its stream (none: an error)."""
    empty = SourceFormatError(
        f"{masked(location)} holds no {fmt} file to infer the stream's schema from: "
        f"{_GIVE_SCHEMA}"
    )
    read: str | list[str] = location
    if _is_local(location):
        listed = _listed(location)
        if not listed:
            raise empty
        # files Spark cannot read (nanoseconds...) are read by Arrow, micro-batch by
        # micro-batch (toolkit.spark.misreads): the others give the stream its schema
        refused = [m for p in listed if (m := spark_misread([p], fmt)) and m.refused]
        if refused:
            read = [str(p) for p in listed if p not in {m.file for m in refused}]
            if not read:
                raise SourceFormatError(
                    f"{masked(location)}: Spark cannot read its files ({refused[0]}), so "
                    f"they give the stream no schema: {_GIVE_SCHEMA}. Such files are read "
                    "by Arrow, micro-batch by micro-batch")
    try:
        return spark.read.format(fmt).options(**options).load(read).schema
    except Exception as exc:
        if "UNABLE_TO_INFER_SCHEMA" in str(exc) or "Unable to infer" in str(exc):
            raise empty from exc
        raise
