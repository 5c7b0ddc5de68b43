"""A batch's plan: the columns it adds, the columns it widens or makes optional, the
rewrites awaiting approval and the rare types set aside, whichever policy made it (RULES
3-6); and the field IDs of a plan numbered as Iceberg numbers them.

>>> from toolkit.core.values.types import Column
>>> add = AddColumn((), Column(2, "n_double", "double"), "n", "")
>>> Plan(0, Struct((Column(1, "n", "long"),)), Struct(), (add,)).headline
'1 column added'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Self

from toolkit.core.batch.contract_terms import ContractBreach
from toolkit.core.evolution.layout import TableLayout
from toolkit.core.evolution.operations import Adding, MakeOptional, Operation, Widening
from toolkit.core.values.lookalikes import lookalike_warnings
from toolkit.core.values.types import (
    Column,
    ColumnType,
    Kind,
    ListOf,
    MapOf,
    Shape,
    Struct,
    iter_ids,
    type_to_str,
)
from toolkit.core.values.wording import a_shape, and_join, batch_number, counted, shape_words


@dataclass(frozen=True)
class AddColumn(Adding):
    """One column a plan adds, with the rule that decided it: an ``add`` operation (RULES
    6) whose column carries the field IDs the planner assigned, as Iceberg will."""

    parent: tuple[str, ...]  # Iceberg full name of the enclosing struct ("items", "element")
    column: Column
    family: str
    reason: str

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.parent, self.column.name)

    @property
    def type(self) -> ColumnType:
        return self.column.type

    @property
    def doc(self) -> str | None:
        return self.column.doc

    def __str__(self) -> str:
        doc = f"  doc={self.column.doc!r}" if self.column.doc else ""
        return (
            f"+ {'.'.join(self.path)}: {type_to_str(self.column.type)}"
            f" (id {self.column.id}){doc}\n    {self.reason}"
        )


@dataclass(frozen=True)
class Retype(Widening):
    """A column (or list element) whose type a plan widens (RULES 5): a ``widen`` operation
    (RULES 6) to ``after``. ``in_place`` when Iceberg promotes the type without touching
    data; otherwise a rewrite of the column, whose ``rows`` and ``bytes`` a real table fills
    in from its metadata."""

    path: tuple[str, ...]  # Iceberg full name (list elements are "element")
    column_id: int
    before: str
    after: str
    in_place: bool
    reason: str
    rows: int | None = None
    bytes: int | None = None
    #: a rewrite writes a new column in the old one's place, under the same name but a new
    #: field ID (as Iceberg assigns it): old snapshots keep reading the old column
    new_id: int | None = None

    @property
    def name(self) -> str:
        return ".".join(self.path)

    @property
    def to(self) -> str:
        return self.after

    @property
    def rewrite(self) -> bool:
        return not self.in_place

    def planned_on(self, table: TableLayout) -> Self:
        return replace(self, in_place=not self.needs_rewrite(table))

    def with_cost(self, rows: int, bytes: int) -> Self:
        return replace(self, rows=rows, bytes=bytes)

    @property
    def how(self) -> str:
        """``in place``, or ``REWRITE`` with the rows and bytes it touches when known."""
        if self.in_place:
            return "in place"
        if self.rows is None:
            return "REWRITE"
        return f"REWRITE: {counted(self.rows, 'row')}, {counted(self.bytes or 0, 'byte')}"

    def __str__(self) -> str:
        how = "in place" if self.in_place else f"REWRITE as id {self.new_id}"
        touched = "" if self.rows is None else f", {self.rows} rows / {self.bytes} bytes"
        return (
            f"~ {'.'.join(self.path)}: {self.before} -> {self.after} (id {self.column_id}, "
            f"{how}{touched})\n    {self.reason}"
        )


@dataclass(frozen=True)
class Plan:
    """What one batch changes in the table schema.

    ``changes`` are the added columns; ``retypes`` and ``optionals`` the widenings the
    widening policy applies (RULES 5); ``pending`` the rewrites it would need but that were
    not approved: the values needing them are quarantined or fail the batch instead;
    ``rare`` the rare types of the ``upsolver`` policy's threshold (``rare_type_percent``):
    the plan does not evolve for them, and the records holding them are set aside;
    ``held`` the values the field contracts refuse (``contracts``, docs/rules.md): the
    plan does not evolve for them either, and routing fails, sets aside or takes them out.
    """

    batch: int
    before: Struct
    after: Struct
    changes: tuple[AddColumn, ...]
    retypes: tuple[Retype, ...] = ()
    optionals: tuple[MakeOptional, ...] = ()
    pending: tuple[Retype, ...] = ()
    rare: tuple[RareType, ...] = ()
    held: tuple[ContractBreach, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.retypes or self.optionals)

    @property
    def rewrites(self) -> tuple[Retype, ...]:
        """The widenings that rewrite data (they run only when approved)."""
        return tuple(r for r in self.retypes if not r.in_place)

    @property
    def rewritten(self) -> dict[int, str]:
        """The names of the columns the rewrites replace by new ones, by old field ID."""
        return {r.column_id: r.name for r in self.rewrites}

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The plan as operations (RULES 6), in the order one schema commit applies them:
        the added columns, the widenings in place, the columns made optional. Rewrites are
        not among them (:attr:`rewrites`): they rewrite data too, and run only when
        approved."""
        return self._committed()

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why, per operation of :attr:`operations` (the rule that decided it)."""
        return tuple(c.reason for c in self._committed())

    def _committed(self) -> tuple[AddColumn | Retype | MakeOptional, ...]:
        return (*self.changes, *(r for r in self.retypes if r.in_place), *self.optionals)

    def same_changes(self, other: Plan) -> bool:
        """Whether both plans change the schema the same way (what approval compares): the
        changes, not the words of their reasons, which a plan file saved by an older
        version words otherwise."""
        def key(r: Retype) -> tuple[object, ...]:
            return (r.path, r.column_id, r.before, r.after, r.in_place)

        def added(c: AddColumn) -> tuple[object, ...]:
            return (c.parent, c.column, c.family)

        def optional(o: MakeOptional) -> tuple[object, ...]:
            return (o.path, o.column_id)

        return (
            [added(c) for c in self.changes] == [added(c) for c in other.changes]
            and [key(r) for r in self.retypes] == [key(r) for r in other.retypes]
            and [optional(o) for o in self.optionals] == [optional(o) for o in other.optionals]
        )

    def to_sql(self, dialect: Literal["spark", "trino"], table: str) -> str:
        """The plan as ``ALTER TABLE`` statements (``CREATE TABLE`` for a new table) for
        Spark SQL or Trino, names quoted (:func:`toolkit.core.evolution.export.plan_sql`).

        >>> from toolkit.core.values.types import Column
        >>> add = AddColumn((), Column(2, "n_string", "string", "upsolver_evolved_from:n"),
        ...                 "n", "")
        >>> print(Plan(1, Struct((Column(1, "n", "long"),)), Struct(), (add,)
        ...            ).to_sql("trino", "db.t"))
        ALTER TABLE "db"."t" ADD COLUMN "n_string" VARCHAR COMMENT 'upsolver_evolved_from:n';
        """
        from toolkit.core.evolution.export import plan_sql  # loaded late: export reads plans

        return plan_sql(self, dialect, table)

    def to_pyiceberg(self, table: str) -> str:
        """The plan as PyIceberg code for a ``catalog`` in scope: one ``update_schema``
        block, or ``create_table`` for a new table
        (:func:`toolkit.core.evolution.export.plan_pyiceberg`)."""
        from toolkit.core.evolution.export import plan_pyiceberg

        return plan_pyiceberg(self, table)

    def describe_changes(self) -> str:
        """The columns the plan adds, in one line (what approval compares, in words).

        >>> from toolkit.core.values.types import Column
        >>> Plan(0, Struct(), Struct(), (AddColumn((), Column(1, "a", "long"), "a", ""),)
        ...      ).describe_changes()
        'add a long'
        """
        return "; ".join(
            f"add {'.'.join(c.path)} {type_to_str(c.column.type)}" for c in self.changes
        )

    @property
    def headline(self) -> str:
        """What the plan does, in a few words, without naming its batch.

        >>> Plan(0, Struct(), Struct(), ()).headline
        'no schema change'
        """
        if not self.changed and not self.pending and not self.rare and not self.held:
            return "no schema change"
        parts = [f"{counted(len(self.changes), 'column')} added"] if self.changes else []
        if (self.rare or self.held) and not self.changed:
            parts.append("no schema change")
        if self.retypes:
            rewrites = counted(len(self.rewrites), "rewrite")
            parts.append(f"{len(self.retypes):,} widened ({rewrites})")
        if self.optionals:
            parts.append(f"{len(self.optionals):,} made optional")
        if self.pending:
            parts.append(f"{counted(len(self.pending), 'rewrite')} awaiting approval")
        if self.rare:
            parts.append(f"{counted(len(self.rare), 'rare type')} set aside")
        if self.held:
            n = sum(b.count for b in self.held)
            parts.append(f"{counted(n, 'value')} refused by contracts")
        return ", ".join(parts)

    @property
    def details(self) -> list[str]:
        """A line per change, per rewrite awaiting approval, per rare type set aside, and
        per group of new names that look alike (:mod:`toolkit.core.values.lookalikes`)."""
        lines = [str(c) for c in (*self.changes, *self.retypes, *self.optionals)]
        lines += [f"{r} [not approved]" for r in self.pending]
        lines += [f"- {r}" for r in self.rare]
        lines += [f"- {b}" for b in self.held]
        return lines + [f"warning: {w}" for w in lookalike_warnings(self.before, self.after)]

    def __str__(self) -> str:
        return "\n".join([f"batch {batch_number(self.batch)}: {self.headline}", *self.details])


def max_field_id(struct: Struct) -> int:
    return max(iter_ids(struct), default=0)


@dataclass(frozen=True)
class RareType:
    """A type of one top-level key that a batch sets aside instead of evolving the schema
    for: ``count`` of the key's ``total`` non-null values arrived as ``shape``, under the
    ``percent`` threshold (``rare_type_percent``), and its ``kinds`` fit no column of the
    key's family. The records holding a value of those kinds are set aside (reason
    ``rare-type``); ``instead`` says what the batch would have added without the
    threshold."""

    key: str
    shape: Shape
    kinds: frozenset[Kind]
    count: int
    total: int
    percent: float
    instead: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """The share of the key's values that arrived as ``shape``, in percent."""
        return 100 * self.count / self.total

    def __str__(self) -> str:
        instead = (
            "instead of adding " + and_join(self.instead)
            if self.instead
            else "instead of evolving the schema for it"
        )
        return (
            f"{self.count:,} of {self.total:,} values of `{self.key}` arrived as "
            f"{a_shape(self.shape) if self.count == 1 else shape_words(self.shape, many=True)} "
            f"({_share_text(self.share, self.percent)}%, under the {self.percent:g}% rare-type "
            f"threshold); set aside {instead}"
        )


def _share_text(share: float, percent: float) -> str:
    """``share`` with as few digits as show it is under ``percent`` (0.15, not 0.150000).

    >>> _share_text(0.15, 1), _share_text(0.9996, 1), _share_text(100 / 30, 5)
    ('0.15', '0.9996', '3.33')
    """
    for digits in range(3, 10):
        text = f"{share:.{digits}g}"
        if "e" not in text and float(text) < percent:
            return text
    return f"{share:.9f}".rstrip("0")


# --- field IDs and full names -----------------------------------------------------------


def numbered_like_iceberg(plan: Plan, last_id: int) -> Plan:
    """New field IDs as Iceberg itself assigns them, so a preview shows the IDs the table
    will get: a new table is numbered afresh (a struct's fields first, then their types);
    an existing one numbers each added column, then its type, in the order of the adds."""
    mapping: dict[int, int] = {}
    counter = iter(range(last_id + 1, 1 << 31))

    def fresh(t: ColumnType) -> None:
        if isinstance(t, Struct):
            for c in t.fields:
                mapping[c.id] = next(counter)
            for c in t.fields:
                fresh(c.type)
        elif isinstance(t, ListOf):
            mapping[t.element_id] = next(counter)
            fresh(t.element)
        elif isinstance(t, MapOf):  # a map copied into a new record column (RULES 3.4)
            mapping[t.key_id] = next(counter)
            mapping[t.value_id] = next(counter)
            fresh(t.key)
            fresh(t.value)

    if not plan.before.fields:
        fresh(plan.after)
    else:
        for change in plan.changes:
            mapping[change.column.id] = next(counter)
            fresh(change.column.type)
    if all(k == v for k, v in mapping.items()):
        return plan
    def id_of(old: int) -> int:
        return mapping.get(old, old)

    changes = tuple(replace(c, column=_renumbered(c.column, id_of)) for c in plan.changes)
    after = renumbered_type(plan.after, id_of)
    assert isinstance(after, Struct)
    return replace(plan, after=after, changes=changes)


def _renumbered(col: Column, id_of: Callable[[int], int]) -> Column:
    return replace(col, id=id_of(col.id), type=renumbered_type(col.type, id_of))


def renumbered_type(t: ColumnType, id_of: Callable[[int], int]) -> ColumnType:
    """``t`` with every field ID inside it replaced by ``id_of(old ID)``."""
    if isinstance(t, Struct):
        return replace(t, fields=tuple(_renumbered(c, id_of) for c in t.fields))
    if isinstance(t, ListOf):
        return replace(t, element_id=id_of(t.element_id),
                       element=renumbered_type(t.element, id_of))
    if isinstance(t, MapOf):
        return replace(t, key_id=id_of(t.key_id), key=renumbered_type(t.key, id_of),
                       value_id=id_of(t.value_id), value=renumbered_type(t.value, id_of))
    return t


def full_names(prefix: tuple[str, ...], t: ColumnType) -> list[tuple[str, ...]]:
    """Iceberg's full names of every field inside ``t`` (list elements are ``element``)."""
    out: list[tuple[str, ...]] = []
    if isinstance(t, ListOf):
        inner = (*prefix, "element")
        out += [inner, *full_names(inner, t.element)]
    elif isinstance(t, Struct):
        for c in t.fields:
            name = (*prefix, c.name)
            out += [name, *full_names(name, c.type)]
    return out


def struct_prefix(name: tuple[str, ...], dim: int) -> tuple[str, ...]:
    """The full name of the struct inside a record column of dimension ``dim``."""
    return (*name, *("element",) * dim)


__all__ = ["AddColumn", "MakeOptional", "Plan", "RareType", "Retype", "full_names",
           "max_field_id", "numbered_like_iceberg", "renumbered_type", "struct_prefix"]
