"""What the evolution editor shows, as data: the operations a user picks (RULES 6), the
table after them, the plan's text or the error that stops it, and the table's lineage.

Pure: no widget. A form is a list of :class:`FormField` per operation kind; the values a
user fills in become an operation with :func:`build_operation`, and the operations' own
validation (:mod:`toolkit.core.evolution.operations`) decides whether the plan holds. The HTML is
:mod:`toolkit.notebook.panels.editor.html`, the shell :mod:`toolkit.notebook.panels.editor.widget`.

>>> from toolkit.core.values.types import Column, Struct
>>> from toolkit.core.evolution.layout import TableLayout
>>> from toolkit.core.evolution.state import ABSENT
>>> m = EvolutionEditorModel("db.t", TableLayout(Struct((Column(1, "name", "string"),))), ABSENT)
>>> m = m.with_operation(build_operation("rename", {"path": ("name",), "new_name": "full"}))
>>> print(m.plan_text)
user: 1 operation
  ~ rename name -> full
>>> m.with_operation(build_operation("drop", {"path": "nope"})).error
"operation 2 (drop nope): no field 'nope' (fields: full)"
"""

from __future__ import annotations

import datetime as dt
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from toolkit.core.evolution.layout import TableLayout, as_path
from toolkit.core.evolution.lineage import undo_plan, undoes, undone_by
from toolkit.core.evolution.operations import (
    Operation,
    SortKey,
    WidenField,
    add,
    drop,
    make_optional,
    move_after,
    move_before,
    move_first,
    partition_by,
    remove_partition,
    rename,
    set_identifier_fields,
    sort_by,
    update_doc,
    widen_to,
)
from toolkit.core.evolution.plans import Evolution, plan_evolution
from toolkit.core.evolution.state import ABSENT, TableState
from toolkit.core.policies import decided_by_text
from toolkit.core.values.types import Column, ColumnType, ListOf, Struct, iter_ids
from toolkit.core.values.wording import counted, visible
from toolkit.errors import OperationError, PlanChangedError, StalePlanError, UndoMovedError
from toolkit.notebook.outcome import TableSize
from toolkit.notebook.schema_tree import SchemaNode, schema_tree

if TYPE_CHECKING:

    from toolkit.core.evolution.lineage import LineageEntry

__all__ = [
    "OPERATION_KINDS",
    "EvolutionEditorModel",
    "EvolutionOutcome",
    "EvolutionRequest",
    "FormField",
    "LineageRow",
    "build_operation",
    "form_of",
    "lineage_rows",
]

Path: TypeAlias = tuple[str, ...]
#: what feeds a form field's input: the table's fields, its structs, its list elements and
#: fields, its partition fields, Iceberg types, a fixed list, or free text
FieldKind: TypeAlias = Literal[
    "field", "widenable", "struct", "partition", "type", "choice", "text"
]

#: the operations the editor offers, in its menu's order
OPERATION_KINDS: Final = (
    "rename",
    "drop",
    "move first",
    "move before",
    "move after",
    "make optional",
    "widen",
    "add column",
    "change doc",
    "identifier fields",
    "add partition field",
    "remove partition field",
    "sort order",
)
OperationKind: TypeAlias = str

#: types offered for a new or widened column (any Iceberg type string is accepted)
TYPE_CHOICES: Final = (
    "boolean", "int", "long", "float", "double", "decimal(38, 2)", "string", "date",
    "timestamp", "timestamptz", "binary", "uuid", "list<string>", "struct<a: string>",
)  # fmt: skip
TRANSFORMS: Final = ("identity", "bucket", "truncate", "year", "month", "day", "hour", "void")
DIRECTIONS: Final = ("asc", "desc")
#: the value of an optional choice left empty
NONE: Final = ""


@dataclass(frozen=True)
class FormField:
    """One input of an operation's form."""

    name: str
    label: str
    kind: FieldKind
    choices: tuple[str, ...] = ()
    """For ``choice``: the values offered."""
    optional: bool = False
    hint: str = ""


_PATH = FormField("path", "field", "field")
_ANCHOR = FormField("anchor", "next to", "field")
_FORMS: Final[dict[str, tuple[FormField, ...]]] = {
    "rename": (_PATH, FormField("new_name", "new name", "text")),
    "drop": (_PATH,),
    "move first": (_PATH,),
    "move before": (_PATH, _ANCHOR),
    "move after": (_PATH, _ANCHOR),
    "make optional": (_PATH,),
    "widen": (
        FormField("path", "field", "widenable"),
        FormField("to", "to type", "type", hint="int->long and float->double are in place"),
    ),
    "add column": (
        FormField("parent", "in", "struct", optional=True),
        FormField("name", "name", "text"),
        FormField("type", "type", "type"),
        FormField("doc", "doc", "text", optional=True),
    ),
    "change doc": (_PATH, FormField("doc", "doc", "text", optional=True, hint="empty: none")),
    "identifier fields": (
        FormField("key", "identified by", "field", optional=True, hint="none: no identifier"),
        FormField("then", "and by", "field", optional=True),
    ),
    "add partition field": (
        FormField("source", "source", "field"),
        FormField("transform", "transform", "choice", TRANSFORMS),
        FormField("width", "N", "text", optional=True, hint="buckets, or truncate width"),
        FormField("partition_name", "name", "text", optional=True, hint="default: Iceberg's"),
    ),
    "remove partition field": (FormField("name", "partition field", "partition"),),
    "sort order": (
        FormField("key", "sort by", "field", optional=True, hint="none: unsorted"),
        FormField("direction", "order", "choice", DIRECTIONS),
        FormField("then", "then by", "field", optional=True),
        FormField("then_direction", "order", "choice", DIRECTIONS),
    ),
}


#: the operation (a key of the core's ``OPERATIONS``, its JSON name) each form builds: the
#: editor's menu speaks in plain words, the vocabulary stays the core's
FORM_OPERATION: Final[dict[OperationKind, str]] = {
    "rename": "rename",
    "drop": "drop",
    "move first": "move",
    "move before": "move",
    "move after": "move",
    "make optional": "optional",
    "widen": "widen",
    "add column": "add",
    "change doc": "doc",
    "identifier fields": "identifier",
    "add partition field": "partition",
    "remove partition field": "unpartition",
    "sort order": "sort",
}


def form_of(kind: OperationKind) -> tuple[FormField, ...]:
    """The inputs of an operation kind (one of :data:`OPERATION_KINDS`)."""
    try:
        return _FORMS[kind]
    except KeyError:
        raise ValueError(
            f"unknown operation {kind!r}; choose one of {', '.join(OPERATION_KINDS)}"
        ) from None


def _text(values: Mapping[str, Any], name: str) -> str:
    value = values.get(name)
    return "" if value is None else str(value).strip()


def _path(values: Mapping[str, Any], name: str, kind: str, label: str) -> Path:
    value = values.get(name)
    if value is None or value == NONE or value == ():
        raise OperationError(kind, f"choose the {label}")
    return as_path(value)


def build_operation(kind: OperationKind, values: Mapping[str, Any]) -> Operation:
    """The operation a filled form stands for; raises :class:`OperationError` naming the
    operation and the input that is missing or malformed (whether it applies to the table
    is the plan's check). Paths are tuples of names (or dotted strings).

    >>> print(build_operation("add partition field", {"source": ("id",), "transform": "bucket",
    ...                                               "width": "8"}))
    + partition by bucket[8](id)
    >>> build_operation("rename", {"path": ("a",), "new_name": " "})
    Traceback (most recent call last):
    ...
    toolkit.errors.OperationError: rename: give the new name
    """
    form_of(kind)  # a clear error for an unknown kind
    if kind == "rename":
        new_name = _text(values, "new_name")
        path = _path(values, "path", kind, "field")
        if not new_name:
            raise OperationError(kind, "give the new name")
        return rename(path, new_name)
    if kind == "drop":
        return drop(_path(values, "path", kind, "field"))
    if kind == "move first":
        return move_first(_path(values, "path", kind, "field"))
    if kind in ("move before", "move after"):
        path = _path(values, "path", kind, "field")
        anchor = _path(values, "anchor", kind, "field to move it next to")
        return (move_before if kind == "move before" else move_after)(path, anchor)
    if kind == "make optional":
        return make_optional(_path(values, "path", kind, "field"))
    if kind == "widen":
        path = _path(values, "path", kind, "field")
        to = _text(values, "to")
        if not to:
            raise OperationError(kind, "give the type to widen to")
        return widen_to(path, to)
    if kind == "add column":
        name = _text(values, "name")
        if not name:
            raise OperationError(kind, "give the new column's name")
        if not _text(values, "type"):
            raise OperationError(kind, f"give the type of {name}")
        parent = values.get("parent") or ()
        doc = _text(values, "doc") or None
        try:
            return add((*as_path(parent), name) if parent else (name,), _text(values, "type"), doc)
        except ValueError as exc:
            raise OperationError(f"add {name}", str(exc)) from exc
    if kind == "change doc":
        return update_doc(_path(values, "path", kind, "field"), _text(values, "doc") or None)
    if kind == "identifier fields":
        return set_identifier_fields(*(
            as_path(values[n]) for n in ("key", "then") if values.get(n) not in (None, NONE, ())
        ))
    if kind == "add partition field":
        source = _path(values, "source", kind, "source field")
        transform = _text(values, "transform") or "identity"
        width = _text(values, "width")
        if transform in ("bucket", "truncate"):
            if not width.isdigit() or int(width) <= 0:
                what = "number of buckets" if transform == "bucket" else "truncate width"
                raise OperationError(kind, f"{transform} needs a positive {what}, got {width!r}")
            transform = f"{transform}[{width}]"
        return partition_by(source, transform, _text(values, "partition_name") or None)
    if kind == "remove partition field":
        name = _text(values, "name")
        if not name:
            raise OperationError(kind, "choose the partition field to remove")
        return remove_partition(name)
    keys = []
    for field_name, direction in (("key", "direction"), ("then", "then_direction")):
        if values.get(field_name) not in (None, NONE, ()):
            order = _text(values, direction) or "asc"
            if order not in DIRECTIONS:
                raise OperationError(kind, f"order must be asc or desc, got {order!r}")
            keys.append(SortKey(as_path(values[field_name]), order))  # type: ignore[arg-type]
    return sort_by(*keys)


# --- the table's fields, as the inputs offer them ---------------------------------------------


def _walk(struct: Struct, prefix: Path = ()) -> Iterator[tuple[Path, Column]]:
    for col in struct.fields:
        path = (*prefix, col.name)
        yield path, col
        t: ColumnType = col.type
        inner = path
        while isinstance(t, ListOf):
            t, inner = t.element, (*inner, "element")
        if isinstance(t, Struct):
            yield from _walk(t, inner)


def _label(path: Path) -> str:
    # a drop-down shows its labels as text: invisible and bidi characters written out
    return visible(".".join(path))


def field_choices(struct: Struct) -> tuple[tuple[str, Path], ...]:
    """(dotted Iceberg full name, path) of every field, nested ones included."""
    return tuple((_label(p), p) for p, _ in _walk(struct))


def _through_lists(struct: Struct) -> Iterator[tuple[Path, ColumnType]]:
    """Every field's full path and type down through its list levels
    (``tags.element``)."""
    for path, col in _walk(struct):
        t, inner = col.type, path
        while isinstance(t, ListOf):
            t, inner = t.element, (*inner, "element")
        yield inner, t


def widenable_choices(struct: Struct) -> tuple[tuple[str, Path], ...]:
    """Primitive fields and primitive list elements (``tags.element``)."""
    return tuple((_label(p), p) for p, t in _through_lists(struct) if isinstance(t, str))


def struct_choices(struct: Struct) -> tuple[tuple[str, Path], ...]:
    """Where a column can be added: the top level, then every struct (through lists)."""
    inner = [(_label(p), p) for p, t in _through_lists(struct) if isinstance(t, Struct)]
    return (("(top level)", ()), *inner)


# --- lineage ---------------------------------------------------------------------------------

#: the words entries logged by older versions give when no inverse could be worked out
_OLD_REPLAY = "the plan could not be replayed to compute its inverse: "


def _sentence(text: str) -> str:
    return text.rstrip(". ")


def _why_irreversible(entry: LineageEntry) -> tuple[str, ...]:
    """Why the entry has no inverse, in the operations' own words (as the code says it
    now), else as logged (a plan whose reverse could not be worked out)."""
    said = tuple(w for op in entry.operations if (w := op.why_irreversible) is not None)
    if said:
        return said
    return tuple(_plain_logged(r) for r in entry.irreversible)


def _plain_logged(reason: str) -> str:
    """A logged reason, in the words the toolkit uses now."""
    if not reason.startswith(_OLD_REPLAY):
        return reason
    detail = reason.removeprefix(_OLD_REPLAY)
    return f"the toolkit could not work out how to reverse it when it was committed ({detail})"


def _undo_blocker(entry: LineageEntry, layout: TableLayout) -> str | None:
    """Why the entry's inverse no longer applies to the table as it is (the rule
    :func:`toolkit.undo` follows: :func:`toolkit.core.evolution.lineage.undo_plan`), or None when it
    does. An entry without inverse, or already undone, is told apart by its row."""
    if entry.inverse() is None:
        return None
    try:
        undo_plan(entry, (), layout)
    except UndoMovedError as exc:
        # why, without the error's closing "nothing was applied": the row is read before
        # anything is tried, and a refused "Undo" says "Nothing was changed." itself
        return exc.why
    except (OperationError, ValueError) as exc:
        return f"the table changed since, and its reverse no longer applies ({exc})"
    return None


@dataclass(frozen=True)
class LineageRow:
    """One committed plan of the table's log, and whether its "Undo" button can be used:
    not when the plan has no inverse, when a later entry undid it already, or when the
    table changed so that its inverse no longer applies; :attr:`status` says which."""

    seq: int
    at: str
    decided_by: str
    batch: str | None
    reason: str | None
    operations: tuple[str, ...]
    undo: tuple[str, ...] | None
    """The operations that undo it; None when it cannot be (:attr:`irreversible`)."""
    irreversible: tuple[str, ...]
    """Why no schema change undoes it, in plain words (empty when one does)."""
    undone_by: int | None = None
    """The later entry that undid it (and is not undone itself)."""
    undoes: int | None = None
    """The entry this one undid (it is an undo)."""
    blocked: str | None = None
    """Why its inverse no longer applies to the table as it is now."""
    reasons: tuple[str | None, ...] = ()
    """Why each operation, as logged: a sentence, then the rule (None: none given)."""

    @property
    def can_undo(self) -> bool:
        """Whether its "Undo" button is offered."""
        return self.undo is not None and self.undone_by is None and self.blocked is None

    @property
    def why_not(self) -> str | None:
        """Why it cannot be undone now, in a sentence; None when it can."""
        if self.undo is None:
            reasons = "; ".join(_sentence(r) for r in self.irreversible) or "it has no reverse"
            return f"This change cannot be undone automatically: {reasons}."
        if self.undone_by is not None:
            return f"Already undone by entry {self.undone_by}."
        if self.blocked is not None:
            return f"It can no longer be undone automatically: {_sentence(self.blocked)}."
        return None

    @property
    def status(self) -> str:
        """What its undo cell says: what "Undo" commits, or why there is no undo."""
        why = self.why_not
        if why is not None:
            return why
        steps = "; ".join(self.undo or ()) or "nothing"
        redo = f" (this redoes entry {self.undoes})" if self.undoes is not None else ""
        return f"Undo commits{redo}: {steps}"

    @property
    def button_label(self) -> str:
        if self.can_undo:
            return f"Undo #{self.seq}"
        return "Undone" if self.undone_by is not None else "Cannot undo"

    @property
    def title(self) -> str:
        """``#2 by the upsolver policy (RULES 3), batch day2``: who decided it, in words."""
        head = f"#{self.seq} by {decided_by_text(self.decided_by)}"
        if self.batch is not None:
            head += f", batch {self.batch}"
        if self.reason:
            head += f": {self.reason}"
        return head

    @classmethod
    def of(
        cls,
        entry: LineageEntry,
        entries: Sequence[LineageEntry] = (),
        layout: TableLayout | None = None,
    ) -> LineageRow:
        """The row of ``entry``; ``entries`` (the whole log) tell whether a later entry
        undid it, ``layout`` (the table now) whether its inverse still applies."""
        inverse = entry.inverse()
        at = dt.datetime.fromtimestamp(entry.at_ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        later = undone_by(entries, entry.seq)
        blocked = None
        if later is None and layout is not None:
            blocked = _undo_blocker(entry, layout)
        return cls(
            entry.seq, f"{at} UTC", entry.decided_by, entry.batch, entry.reason,
            tuple(str(op).strip() for op in entry.operations),
            None if inverse is None else tuple(str(op).strip() for op in inverse),
            () if inverse is not None else _why_irreversible(entry),
            None if later is None else later.seq,
            undoes(entry),
            blocked,
            entry.reasons,
        )


def lineage_rows(
    entries: Sequence[LineageEntry], layout: TableLayout | None = None
) -> tuple[LineageRow, ...]:
    """Every entry's row, oldest first (see :meth:`LineageRow.of`)."""
    return tuple(LineageRow.of(e, entries, layout) for e in entries)


# --- the editor's state ----------------------------------------------------------------------


@dataclass(frozen=True)
class EvolutionRequest:
    """What "Commit" sends: the plan and the table state it was made against."""

    table: str
    plan: Evolution
    expected: TableState


@dataclass(frozen=True)
class EvolutionEditorModel:
    """A table's layout, the operations picked so far, and what they would make of it.

    ``rewrite_cost`` (rows, bytes of the current snapshot) is shown beside a widening that
    rewrites data; ``size`` (rows, data files, bytes of the current snapshot) in the
    question "Commit" asks before a plan that rewrites data. The plan is checked
    operation by operation exactly as
    :func:`toolkit.evolve` checks it; :attr:`error` is the first operation that cannot
    apply, in the operations' own words.
    """

    table: str
    layout: TableLayout
    state: TableState
    operations: tuple[Operation, ...] = ()
    rewrite_cost: tuple[int, int] | None = None
    lineage: tuple[LineageRow, ...] = ()
    size: TableSize | None = None

    def row(self, seq: int) -> LineageRow | None:
        """Lineage entry ``seq``'s row (None: the log has no such entry)."""
        return next((r for r in self.lineage if r.seq == seq), None)

    @property
    def rewrite_size(self) -> TableSize | None:
        """What a rewrite of every data file touches, as far as it is known."""
        if self.size is not None:
            return self.size
        if self.rewrite_cost is not None:
            rows, size = self.rewrite_cost
            return TableSize(rows, None, size)
        return None

    # --- editing (each returns a new model) ---------------------------------------------

    def with_operation(self, op: Operation) -> EvolutionEditorModel:
        return replace(self, operations=(*self.operations, op))

    def without(self, index: int) -> EvolutionEditorModel:
        if not 0 <= index < len(self.operations):
            raise IndexError(f"no operation {index} (the plan has {len(self.operations)})")
        return replace(self, operations=self.operations[:index] + self.operations[index + 1 :])

    def cleared(self) -> EvolutionEditorModel:
        return replace(self, operations=())

    # --- the plan ---------------------------------------------------------------------------

    @cached_property
    def _checked(self) -> tuple[Evolution | None, str | None]:
        try:
            plan = plan_evolution(self.layout, self.operations)
        except (OperationError, ValueError) as exc:
            return None, str(exc)
        if self.rewrite_cost is not None and plan.rewrites:
            rows, size = self.rewrite_cost
            ops = tuple(
                replace(op, rows=rows, bytes=size)
                if isinstance(op, WidenField) and op.rewrite
                else op
                for op in plan.operations
            )
            plan = replace(plan, operations=ops)
        return plan, None

    @property
    def plan(self) -> Evolution | None:
        """The checked plan (widenings marked as rewrites where they are); None on error."""
        return self._checked[0]

    @property
    def error(self) -> str | None:
        return self._checked[1]

    @property
    def can_commit(self) -> bool:
        return bool(self.operations) and self.error is None

    @property
    def current(self) -> TableLayout:
        """The layout after the operations that apply: what the next one is checked on."""
        plan = self.plan
        if plan is not None:
            return plan.after
        layout = self.layout
        for op in self.operations:
            try:
                layout = op.apply_to(layout)
            except (OperationError, ValueError):
                break
        return layout

    @property
    def plan_text(self) -> str:
        if not self.operations:
            return "No operation yet: pick one above and add it to the plan."
        plan = self.plan
        return str(plan) if plan is not None else f"The plan cannot apply: {self.error}"

    @property
    def rewrites(self) -> tuple[WidenField, ...]:
        plan = self.plan
        return () if plan is None else plan.rewrites

    @property
    def before_tree(self) -> tuple[SchemaNode, ...]:
        return schema_tree(self.layout.schema)

    @property
    def after_tree(self) -> tuple[SchemaNode, ...]:
        after = self.current.schema
        old = set(iter_ids(self.layout.schema))
        return schema_tree(after, [i for i in iter_ids(after) if i not in old])

    @property
    def request(self) -> EvolutionRequest:
        plan = self.plan
        if plan is None or not self.operations:
            raise OperationError("commit", self.error or "the plan has no operation")
        return EvolutionRequest(self.table, plan, self.state)

    # --- what the inputs offer --------------------------------------------------------------

    def choices(self, f: FormField) -> tuple[tuple[str, Any], ...]:
        """(label, value) pairs a form field offers, from the table after the operations
        picked so far (a field renamed by the plan is offered under its new name)."""
        schema = self.current.schema
        empty: tuple[tuple[str, Any], ...] = ((NONE, NONE),) if f.optional else ()
        if f.kind == "field":
            return (*empty, *field_choices(schema))
        if f.kind == "widenable":
            return widenable_choices(schema)
        if f.kind == "struct":
            return struct_choices(schema)
        if f.kind == "partition":
            return tuple((p.name, p.name) for p in self.current.partition)
        if f.kind == "type":
            return tuple((t, t) for t in TYPE_CHOICES)
        if f.kind == "choice":
            return tuple((c, c) for c in f.choices)
        return ()

    @property
    def where(self) -> str:
        """The table's state as read: its schema id and snapshot."""
        if self.state == ABSENT:
            return "the table does not exist"
        return f"schema id {self.state.schema_id}, snapshot {self.state.snapshot_id}"

    @property
    def summary(self) -> str:
        """The table's state and the plan's, after a heading that names the table
        ("Evolution of db.t: schema id 0, snapshot 7; 1 operation, ready to commit")."""
        n = len(self.operations)
        status = (
            "no operation yet"
            if not n
            else f"{counted(n, 'operation')}, "
            + ("ready to commit" if self.error is None else "blocked")
        )
        rewrites = f", {counted(len(self.rewrites), 'rewrite')}" if self.rewrites else ""
        return f"{self.where}; {status}{rewrites}"


# --- what a commit or an undo did ---------------------------------------------------------------

OutcomeKind: TypeAlias = Literal[
    "committed", "undone", "cancelled", "reloaded", "stale", "refused", "error"
]


@dataclass(frozen=True)
class EvolutionOutcome:
    """What "Commit", "Undo", "Cancel" or "Reload table" did, in plain words; an error
    keeps its traceback."""

    kind: OutcomeKind
    title: str
    message: str
    seq: int | None = None
    error_type: str | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.kind in ("committed", "undone", "cancelled", "reloaded")

    @classmethod
    def from_entry(cls, entry: LineageEntry, table: str, *, undo: bool = False) -> EvolutionOutcome:
        # the title and the message are read as one line ("Done. Committed to ..."): the
        # title never repeats the message's first words
        ops = "; ".join(str(op).strip() for op in entry.operations)
        if undo:
            return cls(
                "undone", "Undone",
                f"Committed to {table} as lineage entry #{entry.seq} ({entry.reason}): {ops}.",
                entry.seq,
            )
        return cls(
            "committed", "Done",
            f"Committed to {table} in one commit, logged as lineage entry #{entry.seq}: {ops}.",
            entry.seq,
        )

    @classmethod
    def not_undoable(cls, row: LineageRow) -> EvolutionOutcome:
        """Why "Undo" of ``row`` is refused before anything is tried."""
        why = row.why_not or "It cannot be undone now."
        return cls("refused", f"Entry #{row.seq} not undone", f"{why} Nothing was changed.")

    @classmethod
    def from_exception(cls, exc: BaseException) -> EvolutionOutcome:
        tb = "".join(traceback.format_exception(exc))
        name = type(exc).__name__
        if isinstance(exc, StalePlanError):
            # in the editor's words: the error's own message advises a preview or an ingest
            return cls(
                "stale", "The table changed",
                f"Since the editor read {exc.table}, {exc.moved}. Nothing was applied. "
                "Reload the table (the plan is kept) and check the plan again.",
                error_type=name, traceback=tb,
            )
        if isinstance(exc, PlanChangedError):  # its message says nothing was applied
            return cls("stale", "The plan no longer fits", f"{exc}.", error_type=name,
                       traceback=tb)
        if isinstance(exc, ValueError):  # the operations' and the rewrite's own refusals
            return cls("refused", "Refused", f"{exc}", error_type=name, traceback=tb)
        return cls("error", "It failed", f"{name}: {exc}", error_type=name, traceback=tb)
