"""RULES 6: partition spec and sort order evolution, as operations of a plan.

Partition fields and sort keys name their source by path; the layout tracks it by field ID,
like Iceberg, so a later rename never breaks them. Each operation has the same face as a
schema operation (:class:`~toolkit.core.evolution.operations.Operation`): ``op`` and JSON form,
``apply_to``, ``inverse``, ``subject_id`` and ``stage``.

>>> from toolkit.core.evolution.layout import TableLayout
>>> from toolkit.core.values.types import Column, Struct
>>> table = TableLayout(Struct((Column(1, "id", "long"),)))
>>> op = AddPartitionField(("id",), "bucket[8]")
>>> op.apply_to(table).partition, op.inverse(table)
((PartitionField(source_id=1, transform='bucket[8]', name='id_bucket_8'),), \
RemovePartitionField(partition_name='id_bucket_8'))
>>> op.to_json()
{'op': 'partition', 'source': ['id'], 'transform': 'bucket[8]'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final, Protocol, Self

from toolkit.core.evolution.layout import (
    DIRECTIONS,
    NULL_ORDERS,
    Direction,
    NullOrder,
    PartitionField,
    Path,
    SortField,
    TableLayout,
    as_layout,
    dotted,
    find,
    id_of_name,
    inside_list,
    path_of_id,
    sort_text,
)
from toolkit.core.values.types import Column, Struct, type_to_str
from toolkit.errors import OperationError


class SpecEditor(Protocol):
    """How an adapter stages partition spec and sort order changes on a real table (the
    part of :class:`~toolkit.core.evolution.operations.TableEditor` these operations use)."""

    def add_partition_field(self, source: Path, transform: str, name: str) -> None: ...

    def remove_partition_field(self, name: str) -> None: ...

    def replace_sort_order(self, keys: tuple[SortKey, ...]) -> None: ...


_TRANSFORM: Final = re.compile(r"(identity|void|year|month|day|hour)|(bucket|truncate)\[(\d+)\]")
_TIME_TRANSFORMS: Final = frozenset({"year", "month", "day", "hour"})
_INTEGRAL: Final = frozenset({"int", "long"})
_TIMES: Final = frozenset({"timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"})
_BUCKETABLE: Final = _INTEGRAL | _TIMES | {"date", "time", "string", "uuid", "binary"}


def _transform_accepts(transform: str, source: str) -> bool:
    """Whether Iceberg's ``transform`` applies to a source of type ``source``."""
    kind = transform.split("[")[0]
    decimal = source.startswith("decimal(")
    fixed = source.startswith("fixed[")
    if kind in ("identity", "void"):
        return True
    if kind == "bucket":
        return source in _BUCKETABLE or decimal or fixed
    if kind == "truncate":
        return source in _INTEGRAL | {"string", "binary"} or decimal
    if kind in ("year", "month", "day"):
        return source in _TIMES | {"date"}
    return kind == "hour" and source in _TIMES


def _check_transform(transform: str, op: str) -> str:
    m = _TRANSFORM.fullmatch(transform.replace(" ", ""))
    if m is None:
        raise OperationError(
            op,
            f"unknown transform {transform!r} (identity, bucket[N], truncate[W], year, month, "
            "day, hour, void)",
        )
    if m[2] is not None and int(m[3]) <= 0:
        raise OperationError(op, f"{m[2]} needs a positive parameter, got {transform!r}")
    return m[0]


def _partition_name(source: str, transform: str) -> str:
    """Iceberg's default partition field names."""
    kind, _, arg = transform.partition("[")
    arg = arg.rstrip("]")
    if kind == "identity":
        return source
    if kind == "bucket":
        return f"{source}_bucket_{arg}"
    if kind == "truncate":
        return f"{source}_trunc_{arg}"
    if kind == "void":
        return f"{source}_null"
    return f"{source}_{kind}"


def _partition_source(table: TableLayout, path: Path, transform: str, op: str) -> Column:
    found = find(table.schema, path, op)
    if inside_list(table.schema, found.parent, op):
        raise OperationError(op, f"{dotted(path)} is inside a list: it cannot be a source")
    t = found.column.type
    if not isinstance(t, str):
        raise OperationError(op, f"{dotted(path)} is {type_to_str(t)}: sources are primitives")
    if not _transform_accepts(transform, t):
        raise OperationError(op, f"{transform} cannot transform {t} values of {dotted(path)}")
    return found.column


class _SpecOperation:
    """Shared behaviour: no field to re-check when planned, and an inverse always exists."""

    op: ClassVar[str]

    def planned_on(self, table: TableLayout) -> Self:
        return self

    @property
    def why_irreversible(self) -> None:
        return None

    def subject_id(self, table: TableLayout) -> int | None:
        return None


@dataclass(frozen=True)
class AddPartitionField(_SpecOperation):
    """Add ``transform(source)`` to the partition spec; old data keeps its layout, new data is
    written with the new spec. Transforms: identity, bucket[N], truncate[W], year, month,
    day, hour, void."""

    source: Path
    transform: str
    partition_name: str | None = None

    op: ClassVar[str] = "partition"

    @property
    def name(self) -> str:
        return f"partition by {self.transform}({dotted(self.source)})"

    def apply_to(self, table: TableLayout) -> TableLayout:
        transform = _check_transform(self.transform, self.name)
        col = _partition_source(table, self.source, transform, self.name)
        source_name = dotted(path_of_id(table.schema, col.id) or self.source)
        name = self.partition_name or _partition_name(source_name, transform)
        for p in table.partition:
            if p.source_id == col.id and p.transform == transform:
                raise OperationError(self.name, f"the spec already has it as {p.name!r}")
            if p.name.lower() == name.lower():
                raise OperationError(self.name, f"partition name {name!r} is taken")
            if (
                p.source_id == col.id
                and p.transform in _TIME_TRANSFORMS
                and transform in _TIME_TRANSFORMS
            ):
                raise OperationError(
                    self.name,
                    f"{source_name} is already partitioned by {p.transform} ({p.name!r}): "
                    "remove it first",
                )
        # Iceberg: a partition name may equal a column name only for identity on that column
        clash = id_of_name(table.schema, name)
        if clash is not None and not (transform == "identity" and clash == col.id):
            raise OperationError(self.name, f"partition name {name!r} is a column's name")
        field_ = PartitionField(col.id, transform, name)
        return replace(table, partition=(*table.partition, field_))

    def inverse(self, before: TableLayout | Struct) -> RemovePartitionField:
        after = self.apply_to(as_layout(before))
        return RemovePartitionField(after.partition[-1].name)

    def subject_id(self, table: TableLayout) -> int:
        return find(table.schema, self.source, self.name).column.id

    def stage(self, editor: SpecEditor, before: TableLayout, after: TableLayout) -> None:
        editor.add_partition_field(self.source, self.transform, after.partition[-1].name)

    def to_json(self) -> dict[str, Any]:
        out = {"op": self.op, "source": list(self.source), "transform": self.transform}
        if self.partition_name is not None:
            out["name"] = self.partition_name
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AddPartitionField:
        return cls(tuple(data["source"]), data["transform"], data.get("name"))

    def __str__(self) -> str:
        alias = f" as {self.partition_name}" if self.partition_name else ""
        return f"+ partition by {self.transform}({dotted(self.source)}){alias}"


@dataclass(frozen=True)
class RemovePartitionField(_SpecOperation):
    """Remove the partition field called ``partition_name``; written data keeps its layout."""

    partition_name: str

    op: ClassVar[str] = "unpartition"

    @property
    def name(self) -> str:
        return f"remove partition field {self.partition_name}"

    def apply_to(self, table: TableLayout) -> TableLayout:
        kept = tuple(p for p in table.partition if p.name != self.partition_name)
        if len(kept) == len(table.partition):
            known = ", ".join(p.name for p in table.partition) or "none"
            raise OperationError(
                self.name, f"no partition field {self.partition_name!r} (fields: {known})"
            )
        return replace(table, partition=kept)

    def inverse(self, before: TableLayout | Struct) -> AddPartitionField:
        layout = as_layout(before)
        removed = next(p for p in layout.partition if p.name == self.partition_name)
        source = path_of_id(layout.schema, removed.source_id)
        assert source is not None
        return AddPartitionField(source, removed.transform, removed.name)

    def stage(self, editor: SpecEditor, before: TableLayout, after: TableLayout) -> None:
        editor.remove_partition_field(self.partition_name)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "name": self.partition_name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RemovePartitionField:
        return cls(data["name"])

    def __str__(self) -> str:
        return f"- partition field {self.partition_name}"


@dataclass(frozen=True)
class SortKey:
    """One key of a sort order, by path; Iceberg's default null order is nulls first when
    ascending and nulls last when descending."""

    source: Path
    direction: Direction = "asc"
    null_order: NullOrder | None = None
    transform: str = "identity"

    def __post_init__(self) -> None:
        if self.null_order is None:  # spelled out, so equal orders compare equal
            default = "nulls-first" if self.direction == "asc" else "nulls-last"
            object.__setattr__(self, "null_order", default)

    @property
    def nulls(self) -> NullOrder:
        assert self.null_order is not None
        return self.null_order

    def __str__(self) -> str:
        return f"{sort_text(self.transform, dotted(self.source))} {self.direction} {self.nulls}"


@dataclass(frozen=True)
class ReplaceSortOrder(_SpecOperation):
    """Replace the table's sort order (an empty one: unsorted). Old data keeps its order."""

    keys: tuple[SortKey, ...]

    op: ClassVar[str] = "sort"
    name: ClassVar[str] = "sort order"

    def apply_to(self, table: TableLayout) -> TableLayout:
        fields = []
        for key in self.keys:
            if key.direction not in DIRECTIONS or key.nulls not in NULL_ORDERS:
                raise OperationError(self.name, f"invalid direction or null order in {key}")
            transform = _check_transform(key.transform, self.name)
            col = _partition_source(table, key.source, transform, self.name)
            fields.append(SortField(col.id, transform, key.direction, key.nulls))
        if len({f.source_id for f in fields}) != len(fields):
            raise OperationError(self.name, "a column appears twice in the sort order")
        return replace(table, sort=tuple(fields))

    def inverse(self, before: TableLayout | Struct) -> ReplaceSortOrder:
        layout = as_layout(before)
        keys = []
        for s in layout.sort:
            path = path_of_id(layout.schema, s.source_id)
            assert path is not None
            keys.append(SortKey(path, s.direction, s.null_order, s.transform))
        return ReplaceSortOrder(tuple(keys))

    def stage(self, editor: SpecEditor, before: TableLayout, after: TableLayout) -> None:
        editor.replace_sort_order(self.keys)

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "keys": [
                {"source": list(k.source), "direction": k.direction, "nulls": k.nulls,
                 "transform": k.transform}
                for k in self.keys
            ],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReplaceSortOrder:
        return cls(
            tuple(
                SortKey(tuple(k["source"]), k["direction"], k["nulls"], k["transform"])
                for k in data["keys"]
            )
        )

    def __str__(self) -> str:
        return "= sort by " + (", ".join(str(k) for k in self.keys) or "nothing (unsorted)")


__all__ = [
    "AddPartitionField",
    "RemovePartitionField",
    "ReplaceSortOrder",
    "SortKey",
    "SpecEditor",
]
