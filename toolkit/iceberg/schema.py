"""The core's schema model to and from ``pyiceberg.schema.Schema``.

>>> from toolkit.core.types import Column, ListOf, Struct
>>> schema = to_iceberg(Struct((Column(1, "a", ListOf(2, "long"), "upsolver_evolved_from:b"),)))
>>> print(schema)
table {
  1: a: optional list<long> (upsolver_evolved_from:b)
}
>>> from_iceberg(schema) == Struct((Column(1, "a", ListOf(2, "long"), "upsolver_evolved_from:b"),))
True
>>> print(type_to_iceberg(type_from_iceberg(MapType(3, "string", 4, "int", value_required=False))))
map<string, int>
"""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)

from toolkit.core.types import Column, ColumnType, ListOf, MapOf, Opaque, Struct


def _field_ids(t: IcebergType) -> tuple[int, ...]:
    out: list[int] = []
    if isinstance(t, StructType):
        for f in t.fields:
            out += [f.field_id, *_field_ids(f.field_type)]
    elif isinstance(t, ListType):
        out += [t.element_id, *_field_ids(t.element_type)]
    elif isinstance(t, MapType):
        out += [t.key_id, *_field_ids(t.key_type), t.value_id, *_field_ids(t.value_type)]
    return tuple(out)


def type_from_iceberg(t: IcebergType) -> ColumnType:
    """A PyIceberg type in the core's model."""
    if isinstance(t, StructType):
        return Struct(tuple(column_from_iceberg(f) for f in t.fields))
    if isinstance(t, ListType):
        return ListOf(t.element_id, type_from_iceberg(t.element_type))
    if isinstance(t, MapType):
        key, value = type_from_iceberg(t.key_type), type_from_iceberg(t.value_type)
        return MapOf(t.key_id, key, t.value_id, value, t.value_required)
    if isinstance(t, PrimitiveType):
        return str(t)
    return Opaque(str(t), _field_ids(t), t)


def column_from_iceberg(f: NestedField) -> Column:
    return Column(f.field_id, f.name, type_from_iceberg(f.field_type), f.doc, f.required)


def from_iceberg(schema: Schema) -> Struct:
    """A PyIceberg schema (a table's current one, say) in the core's model."""
    return Struct(tuple(column_from_iceberg(f) for f in schema.fields))


def type_to_iceberg(t: ColumnType) -> IcebergType:
    if isinstance(t, Struct):
        return StructType(*(column_to_iceberg(c) for c in t.fields))
    if isinstance(t, ListOf):
        return ListType(t.element_id, type_to_iceberg(t.element), element_required=False)
    if isinstance(t, MapOf):
        return MapType(
            t.key_id, type_to_iceberg(t.key), t.value_id, type_to_iceberg(t.value),
            value_required=t.value_required,
        )
    if isinstance(t, Opaque):
        assert isinstance(t.native, IcebergType), f"opaque type {t.text} lost its native form"
        return t.native
    parsed: IcebergType = IcebergType.handle_primitive_type(t, None)  # type: ignore[operator]
    return parsed


def column_to_iceberg(c: Column) -> NestedField:
    return NestedField(c.id, c.name, type_to_iceberg(c.type), required=c.required, doc=c.doc)


def to_iceberg(struct: Struct, schema_id: int = 0) -> Schema:
    """The core's schema as a PyIceberg ``Schema``."""
    return Schema(*(column_to_iceberg(c) for c in struct.fields), schema_id=schema_id)
