"""PyIceberg's schema evolution tests: ``tests/integration/test_rest_schema.py`` (the cases
it does not share with Iceberg Java's TestSchemaUpdate) and the schema operations of
``tests/table/test_init.py``, re-expressed as cases over ``toolkit.ops``.

PyIceberg's integration tests create their tables through a catalog, which assigns fresh
field IDs; a start schema here is the table's schema as created (its IDs already fresh).
"""

from __future__ import annotations

from pyiceberg.types import DoubleType, IntegerType, ListType, MapType, StringType

from tests.peers.model import (
    Case,
    appended,
    changed,
    lst,
    mp,
    opt,
    refused,
    req,
    schema,
    st,
    without,
)
from toolkit import ops as o

R = "pyiceberg:test_rest_schema."
I = "pyiceberg:test_init."  # noqa: E741 - the suite's initial, as R is

CASES: list[Case] = []


def case(prefix: str, name: str, start, ops, expect, **kw) -> None:  # type: ignore[no-untyped-def]
    CASES.append(
        Case(prefix + name, start, ops, expect, cites=(prefix + name.split("[")[0],), **kw)
    )


# conftest's table_schema_simple and the integration suite's nested schema.
SIMPLE = schema(opt(1, "foo", "string"), req(2, "bar", "int"), opt(3, "baz", "boolean"), ids=[2])
NESTED = schema(
    opt(1, "foo", "string"),
    req(2, "bar", "int"),
    opt(3, "baz", "boolean"),
    req(4, "qux", lst(8, "string", required=True)),
    req(5, "quux", mp(9, "string", 10, mp(11, "string", 12, "int", required=True), required=True)),
    req(6, "location", lst(13, st(opt(14, "latitude", "float"), opt(15, "longitude", "float")),
                           required=True)),
    opt(7, "person", st(opt(16, "name", "string"), req(17, "age", "int"))),
    ids=[2],
)

# --- test_rest_schema.py ---------------------------------------------------------------------

case(R, "test_no_changes", SIMPLE, lambda: [], SIMPLE)
case(R, "test_add_already_exists[foo]", NESTED, lambda: [o.add("foo", IntegerType())],
     refused("foo", "is taken"))
case(R, "test_add_already_exists[location.latitude]", NESTED,
     lambda: [o.add(("location", "latitude"), "int")], refused("latitude", "is taken"))
case(R, "test_add_to_non_struct_type", SIMPLE, lambda: [o.add(("foo", "lat"), "int")],
     refused("foo", "not a struct"))
FOO_STRUCT = schema(opt(1, "foo", st(opt(2, "bar", "string"))))
case(R, "test_schema_evolution_nested_field", FOO_STRUCT, lambda: [o.widen("foo", "string")],
     refused("foo", "only primitives widen"))
UUID_FIXED = schema(opt(1, "col_uuid", "uuid"), opt(2, "col_fixed", "fixed[25]"))
case(R, "test_schema_evolution_via_transaction", UUID_FIXED,
     lambda: [o.add("col_string", StringType()), o.add("col_integer", IntegerType())],
     appended(UUID_FIXED, None, opt(3, "col_string", "string"), opt(4, "col_integer", "int")))
LOOKUP = schema(
    req(1, "location_lookup", mp(4, "string", 5, st(opt(6, "x", "float"), opt(7, "y", "float")),
                                 required=True)),
    req(2, "locations", lst(8, st(opt(9, "x", "float"), opt(10, "y", "float")), required=True)),
    opt(3, "person", st(opt(11, "name", "string"), req(12, "age", "int"))),
)
case(R, "test_schema_evolution_nested", LOOKUP, lambda: [
    o.add(("location_lookup", "z"), "float"),
    o.add(("locations", "z"), "float"),
    o.add(("person", "address"), "string"),
], appended(appended(appended(LOOKUP, 1, opt(13, "z", "float")), 2, opt(14, "z", "float")),
            3, opt(15, "address", "string")))
case(R, "test_delete_field", SIMPLE, lambda: [o.drop("foo")], without(SIMPLE, 1))
case(R, "test_delete_field_case_insensitive", SIMPLE, lambda: [o.drop("FOO")],
     refused("case-sensitive"), differs=True)
case(R, "test_delete_identifier_fields", SIMPLE, lambda: [o.drop("bar")],
     refused("bar", "identifier"))
PERSON_ID = schema(opt(1, "foo", "string"),
                   req(2, "person", st(req(3, "name", "string"), req(4, "age", "int"))), ids=[3])
case(R, "test_delete_identifier_fields_nested", PERSON_ID, lambda: [o.drop("person")],
     refused("person", "identifier"))
for path, fid in [
    ("foo", 1), ("baz", 3), ("qux", 4), ("quux", 5), ("location", 6),
    ("location.element.latitude", 14), ("location.element.longitude", 15), ("person", 7),
    ("person.name", 16), ("person.age", 17),
]:
    case(R, f"test_deletes[{path}]", NESTED, lambda p=path: [o.drop(p)], without(NESTED, fid))
case(R, "test_deletes_case_insensitive[Person.name]", NESTED, lambda: [o.drop("Person.name")],
     refused("case-sensitive"), differs=True)
BAR_LOCATION = schema(
    req(1, "bar", "int"),
    req(2, "location", lst(3, st(opt(4, "latitude", "float"), opt(5, "longitude", "float")),
                           required=True)),
)
case(R, "test_update_types", BAR_LOCATION, lambda: [
    o.widen("bar", "long"), o.widen("location.latitude", "double"),
    o.widen("location.longitude", "double"),
], changed(changed(changed(BAR_LOCATION, 1, field_type="long"), 4, field_type="double"),
           5, field_type="double"))
case(R, "test_update_types_case_insensitive", BAR_LOCATION, lambda: [o.widen("baR", "long")],
     refused("case-sensitive"), differs=True)
for old, new in [("int", "long"), ("float", "double"), ("decimal(9, 2)", "decimal(18, 2)")]:
    start = schema(req(1, "bar", old))
    case(R, f"test_allowed_updates[{old}->{new}]", start, lambda n=new: [o.widen("bar", n)],
         changed(start, 1, field_type=new))
# PyIceberg changes string <-> binary in place (Iceberg Java refuses both); the toolkit
# refuses them as widenings: a type change Iceberg cannot make in place is a rewrite, and
# binary and string are not one another's widening for a column (RULES 5).
for old, new in [("string", "binary"), ("binary", "string")]:
    case(R, f"test_allowed_updates[{old}->{new}]", schema(req(1, "bar", old)),
         lambda n=new: [o.widen("bar", n)], refused("bar", "RULES 5"), differs=True)
for old, new in [
    ("boolean", "int"), ("long", "int"), ("double", "float"), ("date", "timestamp"),
    ("time", "timestamp"), ("timestamp", "timestamptz"), ("uuid", "fixed[4]"),
    ("fixed[3]", "fixed[4]"), ("decimal(18, 2)", "int"), ("string", "long"),
]:
    case(R, f"test_disallowed_updates[{old}->{new}]", schema(req(1, "bar", old)),
         lambda n=new: [o.widen("bar", n)], refused("bar", "cannot widen"))
case(R, "test_rename_simple", SIMPLE, lambda: [o.rename("foo", "vo"), o.rename("bar", "var")],
     changed(changed(SIMPLE, 1, name="vo"), 2, name="var"))
FOO_BAR = schema(req(1, "foo", st(opt(2, "bar", "string"))))
case(R, "test_rename_simple_nested", FOO_BAR, lambda: [o.rename("foo.bar", "vo")],
     changed(FOO_BAR, 2, name="vo"))
DOTS = schema(req(1, "a.b", st(opt(2, "c.d", "string"))))
case(R, "test_rename_simple_nested_with_dots", DOTS, lambda: [o.rename(("a.b", "c.d"), "e.f")],
     changed(DOTS, 2, name="e.f"))
RENAME_START = schema(
    req(1, "location_lookup", mp(5, "string", 6, st(opt(7, "x", "float"), opt(8, "y", "float")),
                                 required=True)),
    req(2, "locations", lst(9, st(opt(10, "x", "float"), opt(11, "y", "float")), required=True)),
    opt(3, "person", st(opt(12, "name", "string"), req(13, "leeftijd", "int"))),
    req(4, "foo", "string"),
)
case(R, "test_rename", RENAME_START, lambda: [
    o.rename("foo", "bar"), o.rename("location_lookup.x", "latitude"),
    o.rename("locations.x", "latitude"), o.rename("person.leeftijd", "age"),
], changed(changed(changed(changed(RENAME_START, 4, name="bar"), 7, name="latitude"),
                   10, name="latitude"), 13, name="age"))
FOO = schema(opt(1, "foo", "string"))
case(R, "test_add_struct", FOO, lambda: [
    o.add("location", st(opt(3, "x", DoubleType()), opt(4, "y", DoubleType()))),
], appended(FOO, None, opt(2, "location", st(opt(3, "x", "double"), opt(4, "y", "double")))))
A = schema(opt(1, "a", "boolean"))
case(R, "test_add_required_column[a table with rows]", A,
     lambda: [o.add("data", IntegerType(), required=True)], refused("data", "required"),
     rows=({"a": True},))
case(R, "test_add_required_column[allow_incompatible_changes, no rows]", A,
     lambda: [o.add("data", IntegerType(), required=True)],
     appended(A, None, req(2, "data", "int")))
ID_BOOL = schema(opt(1, "id", "boolean"))
# PyIceberg (case-sensitive by default) adds ``ID`` beside ``id``; RULES 4 makes names
# collide case-insensitively, as Spark, DuckDB and Trino resolve them.
case(R, "test_add_required_column_case_insensitive[case-sensitive]", ID_BOOL,
     lambda: [o.add("ID", "int")], refused("ID", "is taken"), differs=True)
case(R, "test_make_column_optional", schema(req(1, "foo", "string")),
     lambda: [o.make_optional("foo")], schema(opt(1, "foo", "string")))

# --- tests/table/test_init.py ----------------------------------------------------------------

# the table_v2 fixture's schema (last column ID 3)
V2 = schema(req(1, "x", "long"), req(2, "y", "long", "comment"), req(3, "z", "long"), ids=[1, 2])
case(I, "test_add_column", V2, lambda: [o.add("b", IntegerType())],
     appended(V2, None, opt(4, "b", "int")))
case(I, "test_update_column[doc]", V2, lambda: [o.update_doc("y", "comment2")],
     changed(V2, 2, doc="comment2"))
case(I, "test_update_column[empty doc]", V2, lambda: [o.update_doc("y", "")],
     changed(V2, 2, doc=""))
case(I, "test_update_column[optional]", V2, lambda: [o.make_optional("z")],
     changed(V2, 3, required=False))
case(I, "test_update_column[union, doc]", V2,
     lambda: [o.union_by_name(changed(V2, 2, doc="comment2"))], changed(V2, 2, doc="comment2"))
case(I, "test_update_column[union, optional]", V2,
     lambda: [o.union_by_name(changed(V2, 3, required=False))], changed(V2, 3, required=False))
for t in ["boolean", "int", "long", "float", "double", "date", "time", "timestamp",
          "timestamptz", "string", "uuid", "binary"]:
    case(I, f"test_add_primitive_type_column[{t}]", V2,
         lambda t=t: [o.add(f"new_column_{t}", t, doc=f"new_column_{t}")],
         appended(V2, None, opt(4, f"new_column_{t}", t, f"new_column_{t}")))
case(I, "test_add_nested_type_column", V2,
     lambda: [o.add("new_column_struct",
                    st(opt(1, "lat", DoubleType()), opt(2, "long", DoubleType())))],
     appended(V2, None, opt(4, "new_column_struct",
                            st(opt(5, "lat", "double"), opt(6, "long", "double")))))
case(I, "test_add_nested_map_type_column", V2,
     lambda: [o.add("new_column_map", MapType(1, StringType(), 2, IntegerType(), False))],
     appended(V2, None, opt(4, "new_column_map", mp(5, "string", 6, "int"))))
case(I, "test_add_nested_list_type_column", V2, lambda: [o.add("new_column_list", ListType(
    101, st(opt(102, "lat", DoubleType()), opt(103, "long", DoubleType())),
    element_required=False))],
    appended(V2, None, opt(4, "new_column_list",
                           lst(5, st(opt(6, "lat", "double"), opt(7, "long", "double"))))))
TAGS = appended(V2, None, opt(4, "tags", lst(5, "string", required=True)))
case(I, "test_update_list_element_required_to_optional", TAGS,
     lambda: [o.make_optional("tags.element")], changed(TAGS, 4, element_required=False))
METADATA = appended(V2, None, opt(4, "metadata", mp(5, "string", 6, "int", required=True)))
case(I, "test_update_map_value_required_to_optional", METADATA,
     lambda: [o.make_optional("metadata.value")], changed(METADATA, 4, value_required=False))
case(I, "test_update_map_key_fails", METADATA, lambda: [o.make_optional("metadata.key")],
     refused("key", "always required"))
