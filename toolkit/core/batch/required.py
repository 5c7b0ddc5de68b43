"""Records that would leave a required field of the table empty (docs/rules.md, *Every
Iceberg table*): set aside whole, as any record the table cannot take.

Columns evolution creates are optional (RULES 3.5), but a table made elsewhere may
require a field (an identifier field, ``id bigint NOT NULL``), a list's elements or a
map's values. A record that brings no value such a field can hold (the key missing,
null, or a value routed to another column of its family: ``"7"`` for a long ``id``) has
no row the table can store; a write would fail the whole batch. The record goes to the
quarantine (``on_incompatible="fail"``: the batch fails naming it) and waits there,
raw, for the field to be made optional or the record to be mended, then replayed.

>>> from toolkit.core.values.types import Column, Struct
>>> table = Struct((Column(1, "id", "long", required=True), Column(2, "s", "string")))
>>> unfilled(table, {"id": None, "s": "x"}), unfilled(table, {"id": 1, "s": None})
(('id', 'long'), None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.routing import rows_of
from toolkit.core.values.types import ColumnType, ListOf, MapOf, Shape, Struct, type_to_str
from toolkit.core.values.wording import a_shape
from toolkit.errors import IncompatibleRecordError, ToolkitError

if TYPE_CHECKING:
    from toolkit.core.batch.observe import Classifier

__all__ = ["requires", "set_aside_unfilled", "stored", "unfilled"]


def requires(t: ColumnType) -> bool:
    """Whether a value of ``t`` (a table schema: any of its columns) has a required part.

    >>> from toolkit.core.values.types import Column, ListOf
    >>> requires(Struct((Column(1, "a", ListOf(2, "long", element_required=True)),)))
    True
    """
    if isinstance(t, Struct):
        return any(c.required or requires(c.type) for c in t.fields)
    if isinstance(t, ListOf):
        return t.element_required or requires(t.element)
    if isinstance(t, MapOf):
        return t.value_required or requires(t.value)
    return False


def unfilled(struct: Struct, row: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first required place a routed ``row`` (keyed by ``struct``'s column names)
    leaves empty, as its dotted path in the table and its type; None when there is none."""
    for col in struct.fields:
        value = row.get(col.name)
        if value is None:
            if col.required:
                return col.name, type_to_str(col.type)
            continue
        inner = _inside(col.type, value)
        if inner is not None:
            return f"{col.name}.{inner[0]}", inner[1]
    return None


def _inside(t: ColumnType, value: Any) -> tuple[str, str] | None:
    if isinstance(t, Struct) and isinstance(value, Mapping):
        return unfilled(t, value)
    if isinstance(t, ListOf) and isinstance(value, Sequence) and not isinstance(value, str):
        return _each(t.element, t.element_required, value, "element")
    if isinstance(t, MapOf):
        values = value.values() if isinstance(value, Mapping) else (v for _, v in value)
        return _each(t.value, t.value_required, list(values), "value")
    return None


def _each(
    t: ColumnType, required: bool, values: Sequence[Any], name: str
) -> tuple[str, str] | None:
    for v in values:
        if v is None:
            if required:
                return name, type_to_str(t)
            continue
        inner = _inside(t, v)
        if inner is not None:
            return f"{name}.{inner[0]}", inner[1]
    return None


def set_aside_unfilled(
    struct: Struct, rows: Sequence[Mapping[str, Any]], records: Sequence[Any],
    classifier: Classifier, batch: int | str = 0, on_incompatible: str = "quarantine",
) -> tuple[list[int], list[Quarantined]]:
    """The places of the ``rows`` (routed from ``records``, one each) the table can
    store, and the records of the others set aside as ``missing-required``; with
    ``on_incompatible="fail"`` the first such record raises
    :class:`~toolkit.errors.IncompatibleRecordError` instead.

    >>> from toolkit.core.batch.observe import Classifier
    >>> from toolkit.core.batch.options import Options
    >>> from toolkit.core.values.types import Column
    >>> table = Struct((Column(1, "id", "long", required=True),))
    >>> kept, aside = set_aside_unfilled(table, [{"id": 1}, {"id": None}],
    ...                                  [{"id": 1}, {"id": "7"}], Classifier(Options()))
    >>> kept, aside[0].reason, aside[0].field, aside[0].observed
    ([0], 'missing-required', 'id', 'string')
    >>> print(aside[0].detail)
    field 'id' is required (long) and this record leaves it empty (its value there is a \
string, written to another column): the table stores a record whole or not at all
    """
    kept: list[int] = []
    aside: list[Quarantined] = []
    for i, (row, record) in enumerate(zip(rows, records, strict=True)):
        empty = unfilled(struct, row)
        if empty is None:
            kept.append(i)
            continue
        path, type_text = empty
        shape = _observed_at(record, path, classifier)
        held = "" if shape is None else \
            f" (its value there is {a_shape(shape)}, written to another column)"
        item = Quarantined(
            record, "missing-required", path, None if shape is None else str(shape),
            type_text, batch,
            f"field {path!r} is required ({type_text}) and this record leaves it empty"
            f"{held}: the table stores a record whole or not at all",
        )
        if on_incompatible == "fail":
            raise IncompatibleRecordError(item)
        aside.append(item)
    return kept, aside


def stored(
    struct: Struct, columns: list[list[Any] | None], records: Sequence[Any],
    classifier: Classifier, batch: int | str = 0, on_incompatible: str = "quarantine",
) -> tuple[list[list[Any] | None], int, list[Quarantined]]:
    """``columns`` (of ``struct``, routed from ``records``, a row each) without the rows
    that leave a required place empty, how many rows stay, and those rows' records set
    aside (:func:`set_aside_unfilled`). A table with nothing required costs one walk of
    its schema."""
    n = len(records)
    if not requires(struct):
        return columns, n, []
    kept, aside = set_aside_unfilled(struct, rows_of(struct, columns, n), records,
                                     classifier, batch, on_incompatible)
    if not aside:
        return columns, n, []
    return [None if c is None else [c[i] for i in kept] for c in columns], len(kept), aside


def _observed_at(record: Any, path: str, classifier: Classifier) -> Shape | None:
    """The shape of the record's own value at a top-level ``path``, when it has one (a
    nested place is named by the table's path alone)."""
    if "." in path or not isinstance(record, Mapping):
        return None
    value = record.get(path)
    if value is None:
        return None
    try:
        k = classifier.kind(value, (path,))
    except ToolkitError:  # a value with no type: the path says enough
        return None
    return None if k is None else k.shape
