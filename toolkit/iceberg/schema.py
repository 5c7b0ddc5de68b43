"""The core's schema model to and from ``pyiceberg.schema.Schema``.

>>> from toolkit.core.values.types import Column, ListOf, Struct
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

from collections.abc import Iterable
from typing import Any, cast

from pyiceberg.schema import Schema
from pyiceberg.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)

from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Opaque, Struct


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
        return ListOf(t.element_id, type_from_iceberg(t.element_type), t.element_required)
    if isinstance(t, MapType):
        key, value = type_from_iceberg(t.key_type), type_from_iceberg(t.value_type)
        return MapOf(t.key_id, key, t.value_id, value, t.value_required)
    if isinstance(t, PrimitiveType):
        return str(t)
    return Opaque(str(t), _field_ids(t), t)


def column_from_iceberg(f: NestedField) -> Column:
    return Column(
        f.field_id,
        f.name,
        type_from_iceberg(f.field_type),
        f.doc,
        f.required,
        f.initial_default,
        f.write_default,
    )


def from_iceberg(schema: Schema) -> Struct:
    """A PyIceberg schema (a table's current one, say) in the core's model."""
    return Struct(tuple(column_from_iceberg(f) for f in schema.fields))


def type_to_iceberg(t: ColumnType) -> IcebergType:
    if isinstance(t, Struct):
        return StructType(*(column_to_iceberg(c) for c in t.fields))
    if isinstance(t, ListOf):
        return ListType(
            t.element_id, type_to_iceberg(t.element), element_required=t.element_required
        )
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
    return NestedField(
        c.id,
        c.name,
        type_to_iceberg(c.type),
        required=c.required,
        doc=c.doc,
        initial_default=c.initial_default,
        write_default=cast(Any, c.write_default),  # kept as read from the catalog
    )


def to_iceberg(
    struct: Struct, schema_id: int = 0, identifier_ids: Iterable[int] = ()
) -> Schema:
    """The core's schema as a PyIceberg ``Schema`` (with ``identifier_ids``, the table's
    identifier fields, from :attr:`~toolkit.core.evolution.layout.TableLayout.identifier_ids`)."""
    return Schema(
        *(column_to_iceberg(c) for c in struct.fields),
        schema_id=schema_id,
        identifier_field_ids=list(identifier_ids),
    )


def identifier_ids(schema: Schema) -> tuple[int, ...]:
    """A schema's identifier fields, in the core's form (sorted field IDs)."""
    return tuple(sorted(schema.identifier_field_ids))


def as_core_type(t: ColumnType | str | IcebergType) -> ColumnType:
    """A type a user wrote, as a PyIceberg type (``MapType(...)``, ``LongType()``) or as
    the toolkit's (a type string or the core's model), in the core's model: how the faces
    take PyIceberg types (the pure core never imports PyIceberg). Field IDs inside a
    PyIceberg type are kept here; adding the type assigns fresh ones."""
    if isinstance(t, IcebergType):
        return type_from_iceberg(t)
    return t


def union_target(schema: Any) -> Struct:
    """The schema a union by name evolves a table to, in the core's model, from a PyIceberg
    ``Schema`` or ``StructType``, a pyarrow ``Schema``, a Spark ``StructType``, or a frame
    (pandas, Arrow, Polars or Spark ``DataFrame``: its schema). Arrow and Spark types are
    converted as PyIceberg converts them when it creates a table from them; a nullable
    field is optional."""
    if isinstance(schema, Schema):
        return from_iceberg(schema)
    if isinstance(schema, StructType):
        converted = type_from_iceberg(schema)
        assert isinstance(converted, Struct)
        return converted
    arrow = _arrow_schema(schema)
    if arrow is None:
        from toolkit.errors import OperationError

        raise OperationError(
            "union by name",
            f"cannot read a schema from {type(schema).__name__}: pass a PyIceberg Schema, a "
            "pyarrow Schema, a Spark StructType or a pandas, Arrow, Polars or Spark frame",
        )
    from pyiceberg.io.pyarrow import _ConvertToIcebergWithoutIDs, visit_pyarrow
    from pyiceberg.schema import assign_fresh_schema_ids

    without_ids = visit_pyarrow(arrow, _ConvertToIcebergWithoutIDs())
    return from_iceberg(assign_fresh_schema_ids(without_ids))


def _arrow_schema(source: Any) -> Any:
    """A pyarrow schema for ``source``, or None when it is none of the known kinds."""
    import pyarrow as pa

    if isinstance(source, pa.Schema):
        return source
    if isinstance(source, pa.Table | pa.RecordBatch):
        return source.schema
    module = type(source).__module__
    if module.startswith("pyspark"):
        from pyspark.sql.pandas.types import to_arrow_schema

        struct = source.schema if hasattr(source, "schema") else source
        return to_arrow_schema(struct)
    if module.startswith("pandas"):
        return pa.Schema.from_pandas(source, preserve_index=False)
    if module.startswith("polars"):
        return source.to_arrow().schema if hasattr(source, "to_arrow") else None
    return None
