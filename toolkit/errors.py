"""Every error the toolkit raises on purpose, under one root: :class:`ToolkitError`.

Each class also keeps the built-in base it always had (``ValueError``, ``TypeError``,
``KeyError``, ``RuntimeError``), so code that catches those keeps working. Each carries
what it is about as attributes (the field, the value, the table), and its message says
what to do next. All are importable from ``toolkit``::

    try:
        toolkit.ingest(batch, "db.t", cat, spark, approved=p.plan, expected=p.state)
    except toolkit.StalePlanError:
        ...  # the table moved since the preview: preview again

>>> issubclass(StalePlanError, ToolkitError), issubclass(StalePlanError, RuntimeError)
(True, True)
>>> str(OperationError("rename a", "no field 'a'"))
"rename a: no field 'a'"
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol


# What an error reads of the values it names (the core's TableState, Plan, Quarantined,
# WidenField), as protocols: the errors sit below everything else and import none of it.
class _State(Protocol):
    def moved_to(self, now: Any) -> str: ...


class _Plan(Protocol):
    def describe_changes(self) -> str: ...


def batch_number(batch: int | str) -> str:
    """A batch as a person names it: the engine's batch index counted from 1 (its first
    batch is batch 1), a batch id (text) as it is. Here, in the lowest layer, because the
    errors' messages name batches too; every other face takes it from
    :mod:`toolkit.core.values.wording`.

    >>> batch_number(0), batch_number(1999), batch_number("day2")
    ('1', '2,000', 'day2')
    """
    return f"{batch + 1:,}" if isinstance(batch, int) else batch


class _SetAside(Protocol):
    @property
    def batch(self) -> int | str: ...

    @property
    def detail(self) -> str: ...


class _Widening(Protocol):
    @property
    def path(self) -> tuple[str, ...]: ...

    @property
    def to(self) -> str: ...

    @property
    def rows(self) -> int | None: ...

    @property
    def bytes(self) -> int | None: ...


class ToolkitError(Exception):
    """The root of every error the toolkit raises on purpose."""


# --- bad input (RULES 1) ---------------------------------------------------------------------


class MalformedLineError(ToolkitError, ValueError):
    """A line of a JSON-lines source that is not JSON (and the root of every reason a line
    cannot be taken whole as a record: its subclasses below)."""

    #: the quarantine reason of such a line (``toolkit.core.batch.quarantine.REASON_TERMS``)
    reason_key = "malformed"

    def __init__(self, line: str, reason: str, number: int | None = None) -> None:
        self.line, self.number = line, number
        where = f"line {number}: " if number is not None else ""
        shown = line.rstrip("\r\n")[:120]
        super().__init__(f"{where}malformed JSON {shown!r}: {reason}")


class LineTooDeepError(MalformedLineError):
    """A line of valid JSON nested deeper than the parser walks (about 1,000 levels)."""

    def __init__(self, line: str, number: int | None = None) -> None:
        super().__init__(line, "nested too deeply to parse (over 1,000 objects and arrays)", number)


class DuplicateKeyError(MalformedLineError):
    """A JSON object that names one key twice: no value of it is kept over the other, the
    record is set aside whole (docs/rules.md, "Bytes from other systems")."""

    reason_key = "duplicate-key"

    def __init__(self, line: str, path: Sequence[str], number: int | None = None) -> None:
        self.path = tuple(path)
        where = f"line {number}: " if number is not None else ""
        shown = line.rstrip("\r\n")[:120]
        ValueError.__init__(
            self, f"{where}duplicate key {'.'.join(self.path)!r} in {shown!r}: a JSON object "
            "names each key once, and neither value is taken over the other"
        )
        self.line, self.number = line, number


class NotUtf8LineError(MalformedLineError):
    """A line whose bytes are not UTF-8 text: kept as its bytes (``data``), shown escaped."""

    reason_key = "not-utf8"

    def __init__(self, data: bytes, error: UnicodeDecodeError, number: int | None = None) -> None:
        self.data = data
        shown = data.rstrip(b"\r\n")[:120].decode("utf-8", "backslashreplace")
        where = f"line {number}: " if number is not None else ""
        ValueError.__init__(
            self, f"{where}not UTF-8 text: byte 0x{data[error.start]:02x} at position "
            f"{error.start:,} ({error.reason}) in {shown!r}"
        )
        self.line, self.number = shown, number


class NotARecordLineError(MalformedLineError):
    """A line of a JSON-lines source that is JSON but not an object (``[1, 2]``, ``"a"``,
    ``42``): set aside whole as the text it arrived as, never as a value rendered again
    (``value`` is what it parsed to)."""

    reason_key = "not-a-record"

    def __init__(self, line: str, value: Any, number: int | None = None) -> None:
        self.value = value
        where = f"line {number}: " if number is not None else ""
        shown = line.rstrip("\r\n")[:120]
        ValueError.__init__(
            self, f"{where}expected a JSON object, got {type(value).__name__} {shown!r}"
        )
        self.line, self.number = line, number


class UnsupportedValueError(ToolkitError, TypeError):
    """A value of a Python type the engine does not know how to type (RULES 1)."""

    def __init__(self, path: Sequence[str], value: Any) -> None:
        self.path = tuple(path)
        self.value = value
        super().__init__(
            f"field {'.'.join(self.path)!r}: value {value!r} of type {type(value).__name__} "
            "has no type here: a value is null, bool, int, float, str, date, datetime, "
            "Decimal, bytes, dict or list, or a numpy/pandas scalar, UUID or time of day "
            "(docs/rules.md, typed values)"
        )


class NoExactTypeError(ToolkitError, ValueError):
    """An array whose leaves no one column type holds exactly: bytes that are not UTF-8
    text beside other values (docs/rules.md, typed values)."""

    def __init__(self, path: Sequence[str], value: Any) -> None:
        self.path = tuple(path)
        self.value = value
        text = repr(value)
        super().__init__(
            f"field {'.'.join(self.path)!r}: array {text[:80]} mixes bytes that are not "
            "UTF-8 text with other values: no column type holds them all exactly, so the "
            "record is set aside (docs/rules.md, typed values)"
        )


class NestingTooDeepError(ToolkitError, ValueError):
    """A value nested deeper than the engine's limit of objects and arrays
    (``toolkit.core.batch.observe.MAX_DEPTH``)."""

    def __init__(self, path: Sequence[str], depth: int, limit: int) -> None:
        self.path, self.depth, self.limit = tuple(path), depth, limit
        shown = ".".join(self.path)
        if len(shown) > 120:  # a path as deep as the value: its start and its end
            shown = f"{shown[:60]}…{shown[-40:]}"
        super().__init__(
            f"field {shown!r}: value nested at least {depth} levels deep (objects and "
            f"arrays, the record counted); the limit is {limit}"
        )


class NotARecordError(ToolkitError, TypeError):
    """A batch item that is not a JSON object (dict). ``index`` is its place in the batch
    counted from 0, as Python counts; the message counts from 1, as a person does (and as
    the notebook's landing grid numbers records)."""

    def __init__(self, batch: int, index: int, value: Any) -> None:
        self.batch, self.index, self.value = batch, index, value
        text = repr(value)
        super().__init__(
            f"batch {batch_number(batch)}, record {index + 1:,} (counting from 1): expected a "
            f"JSON object (dict), got {type(value).__name__} {text[:80]}"
        )


class IncompatibleRecordError(ToolkitError, ValueError):
    """A record the table cannot take, under ``on_incompatible="fail"`` (RULES 5)."""

    def __init__(self, item: _SetAside) -> None:
        self.item = item
        super().__init__(f"batch {batch_number(item.batch)}: {item.detail}")


class ContractError(ToolkitError, ValueError):
    """A value a ``freeze`` contract refuses (docs/rules.md, *Contracts*): no column of its
    field holds it as it is, and the field may not get a new one. The batch writes
    nothing. ``field``, ``value`` and ``where`` (the record's place) say which."""

    def __init__(self, field: str, value: Any, where: str, detail: str) -> None:
        self.field, self.value, self.where = field, value, where
        super().__init__(f"{where}: {detail}")


class UnknownOptionError(ToolkitError, TypeError):
    """A keyword option no function of the toolkit knows: names it, the nearest known
    one, and every option there is."""

    def __init__(self, given: str, known: Sequence[str]) -> None:
        import difflib

        self.given, self.known = given, tuple(known)
        near = difflib.get_close_matches(given, known, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else "."
        super().__init__(f"unknown option {given!r}{hint} The options are: {', '.join(known)}")


class HintError(ToolkitError, ValueError):
    """A type hint the toolkit cannot take (docs/rules.md, *Type hints*): names the
    field, the hint as given, and why."""

    def __init__(self, field: str, hint: str, why: str) -> None:
        self.field, self.hint, self.why = field, hint, why
        super().__init__(f"hint for `{field}`: {why}" if field else f"hints {hint}: {why}")


class TableNameError(ToolkitError, ValueError):
    """A table name without its namespace."""

    def __init__(self, name: object) -> None:
        self.name = name
        shown = str(name)
        last = shown.rsplit(".", 1)[-1] or "orders"
        super().__init__(
            f"table name {shown!r}: name a table as 'namespace.name', e.g. 'db.{last}'"
        )


# --- plans and operations (RULES 6) ----------------------------------------------------------


class OperationError(ToolkitError, ValueError):
    """An operation that cannot apply to the table as it is; names the operation and field."""

    def __init__(self, operation: str, message: str) -> None:
        self.operation, self.detail = operation, message
        super().__init__(f"{operation}: {message}")


class IrreversibleError(ToolkitError, ValueError):
    """The logged plan has no inverse made of schema changes; nothing was committed."""

    def __init__(self, seq: int, reasons: tuple[str, ...]) -> None:
        self.seq, self.reasons = seq, reasons
        super().__init__(f"lineage entry {seq} cannot be undone: " + "; ".join(reasons))


class AlreadyUndoneError(ToolkitError, ValueError):
    """The lineage entry was undone already (by a later entry not itself undone); nothing
    was committed."""

    def __init__(self, seq: int, by: int) -> None:
        self.seq, self.by = seq, by
        super().__init__(
            f"lineage entry {seq} was already undone by entry {by}; nothing was changed (to "
            f"redo it, undo entry {by})"
        )


class UndoMovedError(OperationError):
    """Undoing the entry would act on another field than the entry changed: the table
    changed since (say the column it added was dropped and added again)."""

    def __init__(
        self, operation: str, seq: int, logged: int | None, current: int | None
    ) -> None:
        self.seq, self.logged, self.current = seq, logged, current
        #: what undoing would do, in words ("drop x", without the operation's symbol)
        self.what = operation.split(" ", 1)[-1]
        #: why it cannot be undone, in words: the message less its "nothing was applied"
        self.why = (
            f"the table changed since lineage entry {seq}; undoing it would {self.what}, now "
            f"another column than the one this entry changed (field ID {current}, not "
            f"{logged})"
        )
        super().__init__(operation, f"{self.why}; nothing was applied")


class StalePlanError(ToolkitError, RuntimeError):
    """The table moved since the plan was made; the plan was not applied."""

    def __init__(self, table: str, planned: _State, now: _State, detail: str = "") -> None:
        self.table, self.planned, self.now = table, planned, now
        #: what moved, in words ("its schema went from id 0 to 1")
        self.moved = planned.moved_to(now) or "another writer committed first"
        #: what else the check found, written to follow ``moved`` (``" (...)"``, ``"; ..."``
        #: or "")
        self.detail = detail
        super().__init__(
            f"table {table} moved since the plan was made ({self.moved}){detail}: "
            "the plan was not applied; preview or ingest again to re-plan"
        )


class PlanChangedError(ToolkitError, RuntimeError):
    """The data needs other schema changes than the plan that was approved."""

    def __init__(self, table: str, approved: _Plan, needed: _Plan) -> None:
        self.table, self.approved, self.needed = table, approved, needed
        super().__init__(
            f"table {table}: the batch needs other changes than the approved plan "
            f"(approved: {approved.describe_changes() or 'none'}; needed: "
            f"{needed.describe_changes() or 'none'}); nothing was applied: preview again"
        )


class UnreviewedPlanError(ToolkitError, RuntimeError):
    """A plan file that no longer binds what was reviewed: its source's files, its
    catalog, table or options are not those it was made with (docs/plan-files.md); the
    plan was not applied."""

    def __init__(self, where: str, changes: Sequence[str]) -> None:
        #: what differs, in words ("the source file day1.jsonl changed since the plan was made")
        self.where, self.changes = where, tuple(changes)
        super().__init__(
            f"{where}: {'; '.join(self.changes)}. Nothing was applied: preview the source "
            "again and review the new plan"
        )


class RewriteNotApprovedError(ToolkitError, ValueError):
    """A widening needs a data rewrite that the plan did not approve; nothing was applied."""

    def __init__(self, table: str, op: _Widening, old: str) -> None:
        self.table, self.operation = table, op
        touched = ", ".join(
            f"{n:,} {unit}" for n, unit in ((op.rows, "rows"), (op.bytes, "bytes")) if n is not None
        )
        super().__init__(
            f"table {table}: widening {'.'.join(op.path)} from {old} to {op.to} rewrites the "
            f"data{f' ({touched})' if touched else ''}; approve it by committing the previewed "
            "plan, or write the operation with rewrite=True. Nothing was applied"
        )


class RewriteLossError(ToolkitError, ValueError):
    """A rewrite would change a value (a long beyond 2**53 as a double, say); refused."""

    def __init__(self, field: str, old: str, new: str, value: Any) -> None:
        self.field, self.old, self.new, self.value = field, old, new, value
        super().__init__(
            f"cannot rewrite {field} from {old} to {new}: value {value!r} would change; "
            "nothing was applied"
        )


class DataLossError(ToolkitError, ValueError):
    """A plan would make stored values unreadable from the current table (it drops columns
    holding values: a drop, or the undo of an added column) and was not told to; nothing
    was applied. ``destruction`` holds the counts (columns, values, rows, bytes); pass
    ``drop_data=True`` (``--yes`` on the command line) to run it."""

    def __init__(self, table: str, what: str, destruction: object) -> None:
        self.table, self.what, self.destruction = table, what, destruction
        #: the dotted names of the columns holding values that would be dropped
        self.columns = tuple(getattr(c, "name", str(c))
                             for c in getattr(destruction, "holding", ()))
        super().__init__(
            f"table {table}: {what} {destruction}. Those values would no longer be readable "
            "from the table (older snapshots keep them until they expire); nothing was "
            "applied. To run it anyway, pass drop_data=True"
        )


class FileFormatError(ToolkitError, ValueError):
    """A change that reads and writes a table's rows, whose data files are in a format
    PyIceberg cannot write (ORC, Avro: a table Spark, Flink or Trino users made with
    ``write.format.default``), with no Spark session that sees its catalog to do it;
    nothing was applied.
    ``formats`` names the table's formats (``ORC``, ``Avro``)."""

    def __init__(self, table: str, what: str, formats: str, default: str) -> None:
        self.table, self.what, self.formats = table, what, formats
        super().__init__(
            f"table {table}: {what} reads every row and writes it again, and the table's "
            f"data files are {formats} (write.format.default={default}), which PyIceberg "
            "cannot write; nothing was applied. With a Spark session that sees this catalog "
            "(toolkit.spark_session(catalog), as ingest is given), Spark rewrites the rows "
            "in the table's own format"
        )


class WriteFormatError(ToolkitError, ValueError):
    """A change that reads and writes a table's rows, on a table whose
    ``write.format.default`` names no format Iceberg writes data files in (a value another
    tool set: ``csv``, a typo); nothing was applied. ``default`` is the property's value."""

    def __init__(self, table: str, what: str, default: str) -> None:
        self.table, self.what, self.default = table, what, default
        super().__init__(
            f"table {table}: {what} reads every row and writes it again, in the format the "
            f"table's write.format.default names, and it names none Iceberg writes data "
            f"files in ({default!r}; parquet, orc or avro); nothing was applied. Set it to "
            f"one of them first (ALTER TABLE {table} SET TBLPROPERTIES "
            "('write.format.default'='parquet'))"
        )



class EqualityDeletesError(ToolkitError, ValueError):
    """A change that reads a table's rows, on a table with equality delete files (as Flink
    upsert tables and CDC pipelines write them), which PyIceberg 0.12 does not apply, with
    no Spark session that sees its catalog to read the rows; nothing was applied.
    ``files`` is the number of live equality delete files."""

    def __init__(self, table: str, what: str, files: int) -> None:
        self.table, self.what, self.files = table, what, files
        super().__init__(
            f"table {table}: {what} reads every row and writes it again, and the table has "
            f"{files} equality delete file{'s' * (files != 1)} (rows deleted by key, as "
            "Flink upserts and CDC pipelines write them), which PyIceberg does not apply "
            "(apache/iceberg#6568): read without them the deleted rows would come back; "
            "nothing was applied. With a Spark session that sees this catalog "
            "(toolkit.spark_session(catalog), as ingest is given), Spark reads the rows with "
            "the deletes applied"
        )

# --- quarantine and replay (RULES 5) ---------------------------------------------------------


class UnknownIdsError(ToolkitError, KeyError):
    """Ids that are not (or no longer) in the quarantine table."""

    def __init__(self, table: str, ids: Iterable[str]) -> None:
        self.table, self.ids = table, tuple(sorted(ids))
        shown = ", ".join(self.ids[:5]) + (" ..." if len(self.ids) > 5 else "")
        ids = f"{len(self.ids):,} id{'s' * (len(self.ids) != 1)}"
        super().__init__(f"{table}: {ids} not in the quarantine: {shown}")

    def __str__(self) -> str:
        return str(self.args[0])


class NotReplayableError(ToolkitError, ValueError):
    """Chosen rows that cannot go back through ingest (a malformed line, not a record)."""

    def __init__(self, table: str, rows: Sequence[Any]) -> None:
        self.table, self.ids = table, tuple(r.id for r in rows)
        reasons = ", ".join(sorted({r.reason for r in rows}))
        sample = rows[0].raw if rows else ""
        super().__init__(
            f"{table}: {len(rows):,} chosen row{'s' * (len(rows) != 1)} cannot be replayed "
            f"({reasons}: e.g. "
            f"{sample[:80]!r}); they are not JSON objects. They stay in the quarantine; "
            f"discard(catalog, table, ids) removes them for good"
        )


# --- sources ---------------------------------------------------------------------------------


class SourceFormatError(ToolkitError, ValueError):
    """A file source the toolkit cannot read as one batch: a name whose extension names
    no format it reads (the message lists them), a folder of no files or of several
    formats, or files whose schemas one Spark DataFrame cannot hold."""


# --- the machine and the stream ----------------------------------------------------------------


class SparkSetupError(ToolkitError, RuntimeError):
    """Something Spark needs on this machine (Java, a jar) is missing."""


class CheckpointLostError(ToolkitError, RuntimeError):
    """A query starts on a new checkpoint, yet the table already holds batches committed
    under its query name: its epochs would restart at 0 and be skipped as already ingested."""


class CatalogURLError(ToolkitError, ValueError):
    """A catalog URL that names no catalog the toolkit can open (a port that is not a
    number, an unknown scheme, a storage location, no warehouse); the message shows the
    URL with its secrets masked."""


class CatalogUnreachableError(ToolkitError, ConnectionError):
    """A catalog database that could not be reached or refused the connection (a server
    down, a wrong password, a port out of range); the message names the URL with its
    secrets masked, and the driver's reason."""


class PlanFileError(ToolkitError, ValueError):
    """A file that is not a plan file this toolkit reads: another format, a newer
    version, or a key missing or of the wrong kind (the message names it)."""


class ExportError(ToolkitError, ValueError):
    """A plan (or one of its operations) that the chosen engine cannot express; the
    message says which and what to do instead."""


class KafkaSourceError(ToolkitError, RuntimeError):
    """A Kafka source that cannot be read: a malformed ``kafka://HOST:PORT/TOPIC``, a
    broker that does not answer, a topic it does not have, the client not installed."""


class CatalogFeatureError(ToolkitError, RuntimeError):
    """Something the catalog's server does not offer (a REST catalog without views, say):
    the message says what, and the path that does without it."""


class ViewTypeError(ToolkitError, ValueError):
    """A ``view_types`` entry the COALESCE view cannot read a field as (an unknown type
    name, say): the message names the field and the type."""


class QueryNameTakenError(ToolkitError, ValueError):
    """A stream started under the name of a query still running in this process (two
    sources into one table under its default name, say): the two would share the
    checkpoint the name picks. The message names the query."""


__all__ = [
    "batch_number",
    "AlreadyUndoneError",
    "CatalogURLError",
    "CatalogUnreachableError",
    "CheckpointLostError",
    "ContractError",
    "DataLossError",
    "DuplicateKeyError",
    "EqualityDeletesError",
    "ExportError",
    "FileFormatError",
    "HintError",
    "IncompatibleRecordError",
    "IrreversibleError",
    "KafkaSourceError",
    "CatalogFeatureError",
    "LineTooDeepError",
    "MalformedLineError",
    "NestingTooDeepError",
    "NoExactTypeError",
    "NotARecordError",
    "NotARecordLineError",
    "NotReplayableError",
    "NotUtf8LineError",
    "OperationError",
    "PlanChangedError",
    "PlanFileError",
    "QueryNameTakenError",
    "RewriteLossError",
    "RewriteNotApprovedError",
    "SourceFormatError",
    "SparkSetupError",
    "StalePlanError",
    "ToolkitError",
    "UndoMovedError",
    "WriteFormatError",
    "UnknownIdsError",
    "UnreviewedPlanError",
    "UnsupportedValueError",
    "ViewTypeError",
]
