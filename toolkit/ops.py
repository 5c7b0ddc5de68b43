"""Iceberg evolution operations a user writes into a plan (RULES 6), for ``toolkit.evolve``.

Paths are dotted strings or tuples of names (a tuple when a name contains a dot); a field
that exists may also be named by its field ID (an ``int``). Nothing here touches a table:
build a list, preview it, commit it.

>>> import toolkit
>>> plan = [
...     toolkit.ops.rename("name", "full_name"),
...     toolkit.ops.add("address.zip", "string", doc="postal code"),
...     toolkit.ops.widen("visits", "long"),
...     toolkit.ops.move_first("full_name"),
...     toolkit.ops.partition_by("signup", "day"),
...     toolkit.ops.sort_by("full_name", toolkit.ops.SortKey(("visits",), "desc")),
... ]
>>> for op in plan:
...     print(op)
~ rename name -> full_name
+ add address.zip: string  doc='postal code'
^ widen visits -> long
> move full_name first
+ partition by day(signup)
= sort by full_name asc nulls-first, visits desc nulls-last

Every operation carries its JSON name (``op``) and form (``to_json``); ``OPERATIONS`` maps
each name to its class (what lineage reads back, and what a UI lists):

>>> sorted(toolkit.ops.OPERATIONS)
['add', 'doc', 'drop', 'identifier', 'move', 'optional', 'partition', 'rename', 'sort', \
'union', 'unpartition', 'widen']
>>> plan[0].op, plan[0].to_json()
('rename', {'op': 'rename', 'path': ['name'], 'to': 'full_name'})

By field ID: every operation on an existing field takes one where it takes a path (the
field, a move's anchor, a partition or sort source); the ID is looked up when the plan is
made (``preview_evolution``, ``plan_evolution``), and the plan, like the lineage log, keeps
the path found and the ID. ``print(toolkit.preview_evolution(catalog, "db.t",
[]).plan.before)`` shows a table's IDs. A new field has no ID yet: ``add`` takes a path.

>>> from toolkit.core.values.types import Column, Struct
>>> people = toolkit.ops.TableLayout(Struct((Column(1, "id", "long"), Column(2, "name", "string"))))
>>> by_id = [toolkit.ops.rename(2, "full_name"), toolkit.ops.move_before(2, 1)]
>>> for op in by_id:
...     print(op, op.to_json())
~ rename #2 -> full_name {'op': 'rename', 'to': 'full_name', 'id': 2}
> move #2 before #1 {'op': 'move', 'position': 'before', 'anchor_id': 1, 'id': 2}
>>> print(toolkit.ops.plan_evolution(people, by_id, table="db.people"))
user: 2 operations
  ~ rename name (#2) -> full_name
  > move full_name (#2) before id (#1)
>>> toolkit.ops.plan_evolution(people, [toolkit.ops.drop(9)], table="db.people")
Traceback (most recent call last):
...
toolkit.errors.OperationError: operation 1 (drop #9): no field has ID 9 in db.people (its ...
>>> toolkit.ops.add(3, "string")
Traceback (most recent call last):
...
toolkit.errors.OperationError: add 3: a new field has no field ID yet (Iceberg assigns one ...

Every Iceberg table, not only the toolkit's: fields inside list elements and map values are
named as in Iceberg (``points.x`` or ``points.element.x``, ``locations.lat`` or
``locations.value.lat``), the elements and values themselves as ``points.element`` and
``m.value``; docs and identifier fields have their operations; types may also be
PyIceberg's (``add("m", MapType(...))``); ``union_by_name(schema)`` evolves a table to hold
a PyIceberg, Arrow or Spark schema or a frame's (docs/rules.md says what a plan keeps):

>>> o = toolkit.ops
>>> new = [o.update_doc("price", "in euros"), o.set_identifier_fields("id"),
...        o.make_optional("points.element"), o.add("locations.value.alt", "int")]
>>> for op in new:
...     print(op, op.to_json())
~ doc price -> 'in euros' {'op': 'doc', 'path': ['price'], 'doc': 'in euros'}
= identifier fields: id {'op': 'identifier', 'paths': [['id']]}
? make optional points.element {'op': 'optional', 'path': ['points', 'element']}
+ add locations.value.alt: int {'op': 'add', 'path': ['locations', 'value', 'alt'], \
'type': 'int'}

On a table: ``toolkit.preview_evolution(catalog, "db.t", plan)`` shows the result (and
which widenings rewrite data); ``toolkit.evolve(catalog, "db.t", preview.plan,
expected=preview.state)`` commits it atomically and logs it (``toolkit.lineage(table)``);
``toolkit.undo(catalog, "db.t", entry)`` reverses a logged rename or add.
"""

from __future__ import annotations

from typing import Any

from toolkit.core.evolution.layout import PathLike, TableLayout
from toolkit.core.evolution.operations import OPERATIONS as _SCHEMA_AND_SPEC
from toolkit.core.evolution.operations import (
    AddField,
    Operation,
    SortKey,
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
)
from toolkit.core.evolution.operations import add as _add
from toolkit.core.evolution.operations import widen_to as _widen_to
from toolkit.core.evolution.plans import Evolution, plan_evolution
from toolkit.core.evolution.union import UnionByName
from toolkit.core.values.types import ColumnType, Struct
from toolkit.errors import OperationError

#: every operation by its JSON name (``op``): the core's, and union by name (which a plan
#: holds as the operations it expands to)
OPERATIONS: dict[str, type[Any]] = {**_SCHEMA_AND_SPEC, UnionByName.op: UnionByName}


def _core_type(t: Any) -> ColumnType | str:
    """A type as the core takes it: a type string or the core's model as they are; a
    PyIceberg type (``pyiceberg.types.MapType(...)``) converted by the Iceberg adapter."""
    if isinstance(t, str) or type(t).__module__.startswith("toolkit."):
        return t  # type: ignore[no-any-return]
    from toolkit.iceberg.schema import as_core_type  # loaded only for a PyIceberg type

    return as_core_type(t)


def add(
    path: PathLike, type: Any, doc: str | None = None, *, required: bool = False
) -> AddField:
    """Add a field: ``add("address.zip", "string")``, ``add("m", MapType(...))`` (a
    PyIceberg type too), ``add("locations.value.zip", "string")``; ``required=True`` only on
    a table with no rows (Iceberg refuses a required column existing rows lack)."""
    return _add(path, _core_type(type), doc, required=required)


def widen(path: PathLike | int, to: Any, *, rewrite: bool = False) -> Operation:
    """Widen a field, list element (``"tags.element"``) or map value (``"m.value"``) to
    ``to`` (a type string or a PyIceberg primitive type); to its own type: a no-op."""
    return _widen_to(path, str(_core_type(to)), rewrite=rewrite)


def union_by_name(schema: Any) -> UnionByName:
    """Evolve the table to hold ``schema`` (PyIceberg ``Schema``, pyarrow ``Schema``, Spark
    ``StructType``, or a pandas / Arrow / Polars / Spark frame), like PyIceberg's
    ``union_by_name``: missing fields are added (nested too), types widen by Iceberg's
    promotions, fields optional in ``schema`` become optional; nothing is dropped. A plan
    shows it as those adds, widenings and changes."""
    if isinstance(schema, Struct):
        return UnionByName(schema)  # the core's own model
    from toolkit.iceberg.schema import union_target  # loaded only when used

    return UnionByName(union_target(schema))

__all__ = [
    "OPERATIONS",
    "Evolution",
    "Operation",
    "OperationError",
    "SortKey",
    "TableLayout",
    "add",
    "drop",
    "make_optional",
    "move_after",
    "move_before",
    "move_first",
    "partition_by",
    "plan_evolution",
    "remove_partition",
    "rename",
    "set_identifier_fields",
    "sort_by",
    "union_by_name",
    "update_doc",
    "widen",
]
