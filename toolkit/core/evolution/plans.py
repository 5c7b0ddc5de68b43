"""A plan of Iceberg operations (RULES 6): checked in order against a table's layout,
with who decided it and why, its preview, its inverse, and its JSON form (lineage).

>>> from toolkit.core.evolution.operations import add, rename
>>> from toolkit.core.values.types import Column, Struct
>>> table = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
>>> evo = plan_evolution(table, [rename("name", "full_name"), add("age", "int")])
>>> [(c.id, c.name, c.type) for c in evo.schema.fields]
[(1, 'id', 'long'), (2, 'full_name', 'string'), (3, 'age', 'int')]
>>> print(evo.inverse())
user: 2 operations: undo
  - drop age
  ~ rename full_name -> name

Fields may be named by ID; each ID is looked up when the plan is made, in the layout the
operation applies to (after the plan's earlier operations), and the plan keeps both:

>>> print(plan_evolution(table, [rename(2, "full_name")]))
user: 1 operation
  ~ rename name (#2) -> full_name
>>> plan_evolution(table, [rename(7, "x")], table="db.people")
Traceback (most recent call last):
...
toolkit.errors.OperationError: operation 1 (rename #7): no field has ID 7 in db.people (its \
fields' IDs: 1 id, 2 name); print(toolkit.preview_evolution(catalog, 'db.people', \
[]).plan.before) shows the columns' IDs, toolkit.edit_schema(catalog, 'db.people') every \
field's in a notebook
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from toolkit.core.evolution.field_ids import locate
from toolkit.core.evolution.field_operations import Expanding, check_result
from toolkit.core.evolution.layout import TableLayout, as_layout
from toolkit.core.evolution.operations import (
    BY_ID_OPERATIONS,
    OPERATIONS,
    Operation,
    WidenField,
    Widening,
)
from toolkit.core.evolution.union import UnionByName
from toolkit.core.policies import decided_by_text
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import counted
from toolkit.errors import OperationError

# --- plans -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evolution:
    """A plan of operations against one layout of a table, with who decided it and why.

    ``decided_by`` is ``"user"`` or the rule that made the plan (``"RULES 3"``, shown as
    ``the upsolver policy (RULES 3)``:
    :func:`~toolkit.core.policies.decided_by_text`); ``batch``
    the batch that triggered it; ``reasons`` an optional reason per operation. Build one
    with :func:`plan_evolution`, which checks every operation in order.
    """

    before: TableLayout
    operations: tuple[Operation, ...]
    decided_by: str = "user"
    batch: str | None = None
    reason: str | None = None
    reasons: tuple[str | None, ...] = field(default=())

    @cached_property
    def layouts(self) -> tuple[TableLayout, ...]:
        """The layout before each operation, then after the last one."""
        out = [self.before]
        for i, op in enumerate(self.operations):
            try:
                out.append(op.apply_to(out[-1]))
            except OperationError as exc:
                raise OperationError(f"operation {i + 1} ({exc.operation})", exc.detail) from exc
        check_result(self.before, self.operations, out)
        return tuple(out)

    @property
    def after(self) -> TableLayout:
        return self.layouts[-1]

    @property
    def schema(self) -> Struct:
        """The schema the table has once the plan is committed."""
        return self.after.schema

    @property
    def rewrites(self) -> tuple[WidenField, ...]:
        """The widenings that rewrite data (shown with the rows/bytes they touch), as
        :class:`WidenField` (a policy's :class:`~toolkit.core.evolution.batch_plan.Retype` too)."""
        return tuple(
            op.as_widen_field()
            for op in self.operations
            if isinstance(op, Widening) and op.rewrite
        )

    @property
    def irreversible(self) -> tuple[str, ...]:
        """Why the plan cannot be undone by schema changes (empty: :meth:`inverse` works)."""
        why = tuple(w for op in self.operations if (w := op.why_irreversible) is not None)
        if not self.before.schema.fields and self.after.schema.fields:
            # its inverse would drop every column, which Iceberg refuses (check_result)
            why += ("the table had no column before: undoing the plan would leave it none, "
                    "and an Iceberg table keeps at least one",)  # fmt: skip
        return why

    def inverse(self) -> Evolution | None:
        """The plan that undoes this one, applied to the layout after it; None when one of
        its operations has no inverse (see :attr:`irreversible`)."""
        if self.irreversible:
            return None
        undo: list[Operation] = []
        for op, before in zip(self.operations, self.layouts, strict=False):
            back = op.inverse(before)
            assert back is not None
            undo.append(back)
        return plan_evolution(
            self.after,
            reversed(undo),
            decided_by=self.decided_by,
            batch=self.batch,
            reason=f"undo: {self.reason}" if self.reason else "undo",
        )

    def subject_ids(self) -> tuple[int | None, ...]:
        """Per operation, the field ID of the field it acts on when it applies (None for
        adds and partition removals). Undo compares them so it never acts on a field that
        merely has the same name as the one the plan changed."""
        return tuple(
            subject_id(op, before)
            for op, before in zip(self.operations, self.layouts, strict=False)
        )

    def __str__(self) -> str:
        head = f"{decided_by_text(self.decided_by)}: {counted(len(self.operations), 'operation')}"
        if self.batch is not None:
            head += f" (batch {self.batch})"
        if self.reason:
            head += f": {self.reason}"
        return "\n".join([head, *operation_lines(self.operations, self.reasons)])


def operation_lines(
    operations: Sequence[Operation], reasons: Sequence[str | None]
) -> list[str]:
    """Each operation on a line of its own, its reason (if any) under it: how a plan and a
    lineage entry list what they do."""
    lines = []
    for i, op in enumerate(operations):
        lines.append(f"  {op}")
        why = reasons[i] if i < len(reasons) else None
        if why:
            lines.append(f"      {why}")
    return lines


def subject_id(op: Operation, layout: TableLayout) -> int | None:
    """The field ID an operation acts on in ``layout`` (None: adds, partition removals and
    sort orders); each operation knows its own (``op.subject_id``)."""
    return op.subject_id(layout)


def plan_evolution(
    before: TableLayout | Struct,
    operations: Iterable[Operation],
    *,
    decided_by: str = "user",
    batch: str | None = None,
    reason: str | None = None,
    reasons: Sequence[str | None] = (),
    table: str | None = None,
) -> Evolution:
    """Check ``operations`` in order against ``before`` and return the plan; raises
    :class:`OperationError` naming the first operation and field that cannot apply.

    A field named by ID is looked up in the layout the operation applies to (``table``,
    the table's name, is what an unknown ID's error names); the planned operation keeps
    the path found and the ID. Each widening is marked as a rewrite exactly when Iceberg
    cannot do it in place, so the preview shows it; committing such a plan is the approval
    of that rewrite.
    """
    layout = as_layout(before)
    ops: list[Operation] = []
    layouts = [layout]
    for i, asked in enumerate(operations):
        try:
            # an operation that stands for several (union by name) is planned as them
            expanded = asked.expand(layouts[-1]) if isinstance(asked, Expanding) else [asked]
            for one in expanded:
                op = locate(one, layouts[-1], table).planned_on(layouts[-1])
                layouts.append(op.apply_to(layouts[-1]))
                ops.append(op)
        except OperationError as exc:
            raise OperationError(f"operation {i + 1} ({exc.operation})", exc.detail) from exc
    # docs/rules.md, order of a plan: Iceberg's checks on the final schema, made on the result
    check_result(layout, ops, layouts)
    return Evolution(layout, tuple(ops), decided_by, batch, reason, tuple(reasons))


# --- a plan as JSON (lineage) ----------------------------------------------------------------


def operation_to_json(op: Operation) -> dict[str, Any]:
    """A compact JSON-able form of an operation (types as Iceberg type strings).

    >>> from toolkit.core.evolution.operations import widen_to
    >>> operation_to_json(widen_to("id", "long"))
    {'op': 'widen', 'path': ['id'], 'to': 'long', 'rewrite': False}
    """
    return op.to_json()


def operation_from_json(data: Mapping[str, Any]) -> Operation:
    """The operation :func:`operation_to_json` wrote (its class found by the JSON ``op``
    in :data:`~toolkit.core.evolution.operations.OPERATIONS`; a partition or sort naming its source
    by field ID, in :data:`~toolkit.core.evolution.operations.BY_ID_OPERATIONS`).

    >>> from toolkit.core.evolution.operations import partition_by, rename
    >>> [operation_from_json(op.to_json()) == op for op in (rename(2, "x"), partition_by(3))]
    [True, True]
    """
    kind = data.get("op")
    known: dict[str, type[Operation]] = {**OPERATIONS, UnionByName.op: UnionByName}
    cls = (BY_ID_OPERATIONS.get(kind) or known.get(kind)) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown operation {kind!r} in {dict(data)!r}")
    return cls.from_json(data)


__all__ = [
    "Evolution", "operation_from_json", "operation_lines", "operation_to_json",
    "plan_evolution", "subject_id",
]
