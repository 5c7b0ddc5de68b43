"""A table's name mapping (``schema.name-mapping.default``) kept in step with its schema.

Data files written outside Iceberg (a Hive table taken in by Spark's ``migrate``,
``snapshot`` or ``add_files``; plain Parquet registered with PyIceberg's
``Table.add_files``) carry no field IDs: readers (Spark, PyIceberg, DuckDB) give their
columns the IDs this mapping names (the spec's "Column Projection"). Every schema commit
of the toolkit sets the mapping :func:`mapping_properties` gives for its new schema, so
that those files keep reading under the table's schema as it evolves:

- a field keeps every name it had (files written under an old name still hold that
  name): a rename adds the new name beside the old ones;
- a dropped field keeps its entry (old files still hold its column);
- a field gets its current name only where no other field of the same struct holds that
  name in the mapping: a name the old files hold for another field stays that field's.

The last rule differs from Iceberg's own ``MappingUtil.update`` (apache/iceberg#811) and
PyIceberg's ``update_mapping``, which move such a name to the new field: a column added
under the name of a dropped one then reads the dropped values from the old files, and a
column added under a renamed one's old name takes the renamed column's old values, which
then read null. RULES 6: a rename never moves data; an added column never reads values of
a dropped one. The price: a file added later without field IDs, holding the new column
under that name, has it read as the old field's (null in the current schema) until the
mapping is changed by hand.

>>> from pyiceberg.schema import Schema
>>> from pyiceberg.types import LongType, NestedField, StringType
>>> from pyiceberg.table.name_mapping import create_mapping_from_schema
>>> old = Schema(NestedField(1, "id", LongType()), NestedField(2, "name", StringType()))
>>> mapping = create_mapping_from_schema(old)
>>> renamed = Schema(NestedField(1, "id", LongType()), NestedField(2, "full_name", StringType()),
...                  NestedField(3, "name", StringType()))
>>> print(kept_in_step(mapping, renamed))
[
  ([id] -> 1)
  ([name, full_name] -> 2)
]
"""

from __future__ import annotations

from collections.abc import Sequence

from pyiceberg.schema import Schema
from pyiceberg.table import TableProperties
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.name_mapping import MappedField, NameMapping
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType

__all__ = ["MAPPING_PROPERTY", "kept_in_step", "mapping_properties"]

MAPPING_PROPERTY = TableProperties.DEFAULT_NAME_MAPPING


def mapping_properties(metadata: TableMetadata, schema: Schema) -> dict[str, str]:
    """The table property giving ``schema`` the mapping of the table ``metadata`` holds
    (before the commit that makes ``schema`` current), kept in step as the module says;
    empty for a table without a mapping (every file it has was written with field IDs)."""
    mapping = metadata.name_mapping()
    if mapping is None:
        return {}
    return {MAPPING_PROPERTY: kept_in_step(mapping, schema).model_dump_json()}


def kept_in_step(mapping: NameMapping, schema: Schema) -> NameMapping:
    """``mapping`` for a table whose schema is now ``schema``."""
    return NameMapping(_struct(list(mapping), schema.fields))


def _struct(mapped: Sequence[MappedField], fields: Sequence[NestedField]) -> list[MappedField]:
    current = {f.field_id: f for f in fields}
    held = {name for m in mapped for name in m.names}
    out: list[MappedField] = []
    for entry in mapped:
        field = current.get(entry.field_id) if entry.field_id is not None else None
        if field is None:  # dropped (or names mapped to no ID): the old files still hold it
            out.append(entry)
            continue
        names = list(entry.names)
        if field.name not in held:
            names.append(field.name)
            held.add(field.name)
        out.append(_entry(field.field_id, names, field.field_type, entry.fields))
    known = {m.field_id for m in mapped}
    for field in fields:
        if field.field_id not in known and field.name not in held:
            held.add(field.name)
            out.append(_entry(field.field_id, [field.name], field.field_type, []))
    return out


def _entry(
    field_id: int, names: list[str], t: IcebergType, mapped: Sequence[MappedField]
) -> MappedField:
    # (by the wire name: PyIceberg's model takes it, and mypy sees only that one)
    return MappedField.model_validate(
        {"field-id": field_id, "names": names, "fields": _inside(t, mapped)}
    )


def _inside(t: IcebergType, mapped: Sequence[MappedField]) -> list[MappedField]:
    if isinstance(t, StructType):
        return _struct(mapped, t.fields)
    if isinstance(t, ListType):
        return _slots(mapped, ((t.element_id, "element", t.element_type),))
    if isinstance(t, MapType):
        return _slots(mapped, ((t.key_id, "key", t.key_type), (t.value_id, "value", t.value_type)))
    return list(mapped)


def _slots(
    mapped: Sequence[MappedField], slots: Sequence[tuple[int, str, IcebergType]]
) -> list[MappedField]:
    """A list's element, a map's key and value: fixed names, mapped by ID."""
    by_id = {m.field_id: m for m in mapped}
    out = []
    for field_id, name, t in slots:
        entry = by_id.get(field_id)
        if entry is None:
            out.append(_entry(field_id, [name], t, []))
        else:
            out.append(_entry(field_id, list(entry.names), t, entry.fields))
    return out
