"""Iceberg Java's ``TestSchemaUpdate`` (core/src/test/java/org/apache/iceberg), re-expressed
as cases over ``toolkit.ops``.

Iceberg's ``SchemaUpdate`` resolves every name against the schema it started from; a
toolkit plan's steps see each other's results (docs/rules.md, "Order of a plan's steps").
Where a test only lists independent changes, its steps are written in an order that names
what exists at that step (testRename renames ``preferences.feature2`` before
``preferences``); where the test is about that difference, the case is a deliberate
difference (``differs=True``). Iceberg's case-insensitive mode has no counterpart: toolkit
paths are case-sensitive, so those tests expect the refusal that says so.
"""

from __future__ import annotations

from pyiceberg.types import DecimalType, IntegerType, ListType, MapType, StringType

from tests.peers.model import (
    Case,
    appended,
    changed,
    identified,
    lst,
    mp,
    opt,
    refused,
    reordered,
    req,
    schema,
    st,
    without,
)
from toolkit import ops as o
from toolkit.errors import RewriteNotApprovedError

U = "iceberg-java:TestSchemaUpdate."

# The test class's SCHEMA (last column ID 23): a struct, a map of structs keyed by a
# struct, a list of structs, a required list of required doubles and a string map.
SCHEMA = schema(
    req(1, "id", "int"),
    opt(2, "data", "string"),
    opt(3, "preferences", st(req(8, "feature1", "boolean"), opt(9, "feature2", "boolean")),
        "struct of named boolean options"),
    req(4, "locations", mp(
        10, st(req(20, "address", "string"), req(21, "city", "string"),
               req(22, "state", "string"), req(23, "zip", "int")),
        11, st(req(12, "lat", "float"), req(13, "long", "float")), required=True),
        "map of address to coordinate"),
    opt(5, "points", lst(14, st(req(15, "x", "long"), req(16, "y", "long"))),
        "2-D cartesian points"),
    req(6, "doubles", lst(17, "double", required=True)),
    opt(7, "properties", mp(18, "string", 19, "string"), "string map of properties"),
)

# Two top-level columns and a struct of two, as the move tests use them.
ID_DATA = schema(req(1, "id", "long"), req(2, "data", "string"))
WITH_STRUCT = schema(
    req(1, "id", "long"), req(2, "struct", st(req(3, "count", "long"), req(4, "data", "string")))
)
STRUCT_OF_3 = schema(
    req(1, "id", "long"),
    req(2, "struct", st(req(3, "count", "long"), req(4, "data", "string"),
                        req(5, "data_1", "string"))),
)
TOP_3 = schema(req(1, "id", "long"), req(2, "data", "string"), req(3, "data_1", "string"))
ABCD = schema(*(req(i, n, "int") for i, n in enumerate("abcd", start=1)))
WITH_ID = identified(SCHEMA, 1)

CASES: list[Case] = []

# PyIceberg's test_rest_schema.py ports these tests of TestSchemaUpdate under its own names.
PORTED = {
    "testAmbiguousAdd": "test_ambiguous_column",
    "testDeleteThenAdd": "test_delete_then_add",
    "testDeleteThenAddNested": "test_delete_then_add_nested",
    "testDeleteMissingColumn": "test_delete_missing_column",
    "testAddDeleteConflict": "test_add_delete_conflict",
    "testRenameMissingColumn": "test_rename_missing_column",
    "testRenameDeleteConflict": "test_rename_missing_conflicts",
    "testDeleteRenameConflict": "test_rename_missing_conflicts",
    "testUpdateMissingColumn": "test_update_missing_column",
    "testUpdateDeleteConflict": "test_update_delete_conflict",
    "testDeleteUpdateConflict": "test_delete_update_conflict",
    "testDeleteMapKey": "test_delete_map_key",
    "testAddFieldToMapKey": "test_add_field_to_map_key",
    "testAlterMapKey": "test_alter_map_key",
    "testUpdateMapKey": "test_update_map_key",
    "testUpdateAddedColumnDoc": "test_update_added_column_doc",
    "testUpdateDeletedColumnDoc": "test_update_deleted_column_doc",
    "testMultipleMoves": "test_multiple_moves",
    "testMoveTopLevelColumnFirst": "test_move_top_level_column_first",
    "testMoveTopLevelColumnBeforeFirst": "test_move_top_level_column_before_first",
    "testMoveTopLevelColumnAfterLast": "test_move_top_level_column_after_last",
    "testMoveNestedFieldFirst": "test_move_nested_field_first",
    "testMoveNestedFieldBeforeFirst": "test_move_nested_field_before_first",
    "testMoveNestedFieldAfterLast": "test_move_nested_field_after_first",
    "testMoveNestedFieldAfter": "test_move_nested_field_after",
    "testMoveNestedFieldBefore": "test_move_nested_field_before",
    "testMoveMapValueStructField": "test_move_map_value_struct_field",
    "testMoveAddedTopLevelColumn": "test_move_added_top_level_column",
    "testMoveAddedTopLevelColumnAfterAddedColumn":
        "test_move_added_top_level_column_after_added_column",
    "testMoveAddedNestedStructField": "test_move_added_nested_struct_field",
    "testMoveAddedNestedStructFieldBeforeAddedColumn":
        "test_move_added_nested_field_before_added_column",
    "testMoveSelfReferenceFails": "test_move_self_reference_fails",
    "testMoveMissingColumnFails": "test_move_missing_column_fails",
    "testMoveBeforeAddFails": "test_move_before_add_fails",
    "testMoveMissingReferenceColumnFails": "test_move_missing_reference_column_fails",
    "testMovePrimitiveMapKeyFails": "test_move_primitive_map_key_fails",
    "testMovePrimitiveMapValueFails": "test_move_primitive_map_value_fails",
    "testMoveTopLevelBetweenStructsFails": "test_move_top_level_between_structs_fails",
    "testMoveBetweenStructsFails": "test_move_between_structs_fails",
    "testAddExistingIdentifierFields": "test_add_existing_identifier_fields",
    "testAddNewIdentifierFieldColumns": "test_add_new_identifiers_field_columns",
    "testAddNestedIdentifierFieldColumns": "test_add_nested_identifier_field_columns",
    "testAddDottedIdentifierFieldColumns": "test_add_dotted_identifier_field_columns",
    "testRemoveIdentifierFields": "test_remove_identifier_fields",
    "testSetIdentifierFieldsFails": "test_set_identifier_field_fails",
    "testDeleteIdentifierFieldColumns": "test_delete_identifier_field_columns",
    "testDeleteContainingNestedIdentifierFieldColumnsFails":
        "test_delete_containing_nested_identifier_field_columns_fails",
    "testRenameIdentifierFields": "test_rename_identifier_fields",
    "testMoveIdentifierFields": "test_move_identifier_fields",
    "testMoveIdentifierFieldsCaseInsensitive": "test_move_identifier_fields_case_insensitive",
    "testMixedChanges": "test_mixed_changes",
    "testAddNestedMapOfStructs": "test_add_nested_map_of_structs",
    "testAddNestedListOfStructs": "test_add_nested_list_of_structs",
}


def case(name: str, start, ops, expect, **kw) -> None:  # type: ignore[no-untyped-def]
    test = name.split("[")[0]
    ported = (f"pyiceberg:test_rest_schema.{PORTED[test]}",) if test in PORTED else ()
    CASES.append(Case(U + name, start, ops, expect, cites=(U + test, *ported), **kw))


# --- no change, deletes ----------------------------------------------------------------------

case("testNoChanges", SCHEMA, lambda: [], SCHEMA)

for path, ids in [
    ("id", (1,)), ("data", (2,)), ("preferences", (3,)), ("preferences.feature1", (8,)),
    ("preferences.feature2", (9,)), ("locations", (4,)), ("locations.lat", (12,)),
    ("locations.long", (13,)), ("points", (5,)), ("points.x", (15,)), ("points.y", (16,)),
    ("doubles", (6,)), ("properties", (7,)),
]:
    case(f"testDeleteFields[{path}]", SCHEMA, lambda p=path: [o.drop(p)], without(SCHEMA, *ids))

# The same deletes by Iceberg's full names (through ``element`` and ``value``) and by ID.
for path, ids in [
    ("locations.value.lat", (12,)), ("locations.value.long", (13,)),
    ("points.element.x", (15,)), ("points.element.y", (16,)),
    (3, (3,)), (8, (8,)), (12, (12,)), (15, (15,)), (7, (7,)),
]:
    label = f"#{path}" if isinstance(path, int) else path
    case(f"testDeleteFields[{label}]", SCHEMA, lambda p=path: [o.drop(p)], without(SCHEMA, *ids))

for path in ["Id", "Preferences.feature1", "Locations.lat", "Points.x"]:
    case(f"testDeleteFieldsCaseSensitiveDisabled[{path}]", SCHEMA, lambda p=path: [o.drop(p)],
         refused("case-sensitive"), differs=True)

# --- type changes ----------------------------------------------------------------------------

WIDENED = changed(changed(changed(SCHEMA, 1, field_type="long"), 12, field_type="double"),
                  13, field_type="double")
case("testUpdateTypes", SCHEMA, lambda: [
    o.widen("id", "long"), o.widen("locations.lat", "double"), o.widen("locations.long", "double"),
], WIDENED)
# A field's defaults (Iceberg format v3) are kept by every change that does not set them.
DEFAULTS = dict(initial_default=34, write_default=35)
WITH_DEFAULTS = schema(req(1, "i", "int", "description", **DEFAULTS))
case("testUpdateTypePreservesOtherMetadata", WITH_DEFAULTS, lambda: [o.widen("i", "long")],
     schema(req(1, "i", "long", "description", **DEFAULTS)), format_version=3)
case("testUpdateDocPreservesOtherMetadata", WITH_DEFAULTS,
     lambda: [o.update_doc("i", "longer description")],
     schema(req(1, "i", "int", "longer description", **DEFAULTS)), format_version=3)
case("testUpdateTypes[by full name]", SCHEMA, lambda: [
    o.widen("id", "long"), o.widen("locations.value.lat", "double"),
    o.widen("locations.value.long", "double"),
], WIDENED)
case("testUpdateTypes[by ID]", SCHEMA, lambda: [
    o.widen(1, "long"), o.widen(12, "double"), o.widen(13, "double"),
], WIDENED)
case("testUpdateTypesCaseInsensitive", SCHEMA, lambda: [
    o.widen("ID", "long"), o.widen("Locations.Lat", "double"), o.widen("Locations.Long", "double"),
], refused("case-sensitive"), differs=True)

# testUpdateFailure walks every pair of primitives: exactly int->long, float->double and
# decimal(9, 2)->decimal(18, 2) change in place, a type to itself is no change, every
# other pair is refused.
for old, new in [("int", "long"), ("float", "double"), ("decimal(9, 2)", "decimal(18, 2)")]:
    start = schema(req(1, "col", old))
    case(f"testUpdateFailure[{old}->{new}]", start, lambda n=new: [o.widen("col", n)],
         changed(start, 1, field_type=new))
for same in ["int", "string", "date", "decimal(9, 2)"]:
    start = schema(req(1, "col", same))
    case(f"testUpdateFailure[{same}->{same}]", start, lambda t=same: [o.widen("col", t)], start)
for old, new in [
    ("long", "int"), ("double", "float"), ("boolean", "int"), ("string", "int"),
    ("date", "timestamp"), ("timestamptz", "timestamp"), ("decimal(9, 2)", "decimal(9, 3)"),
    ("decimal(18, 2)", "decimal(9, 2)"), ("fixed[3]", "fixed[4]"), ("uuid", "string"),
    ("binary", "fixed[3]"), ("time", "long"),
]:
    case(f"testUpdateFailure[{old}->{new}]", schema(req(1, "col", old)),
         lambda n=new: [o.widen("col", n)], refused("col", "cannot widen"))
# RULES 5's matrix widens these too, by rewriting the data into a new column (a new field
# ID, so no reader mixes old and new files): the plan shows the rewrite, and committing it
# needs the approval (``rewrite=True``) that the plan alone does not give.
for old, new in [("int", "string"), ("long", "double")]:
    case(f"testUpdateFailure[{old}->{new}]", schema(req(1, "col", old)),
         lambda n=new: [o.widen("col", n)], schema(req(2, "col", new)),
         expect_table=refused("rewrite", error=RewriteNotApprovedError), differs=True)

# --- renames ---------------------------------------------------------------------------------

RENAMED = changed(changed(changed(changed(changed(changed(
    SCHEMA, 2, name="json"), 3, name="options"), 9, name="newfeature"), 12, name="latitude"),
    15, name="X"), 16, name="y.y")
case("testRename", SCHEMA, lambda: [
    o.rename("data", "json"),
    o.rename("preferences.feature2", "newfeature"),  # inside a column renamed next
    o.rename("preferences", "options"),
    o.rename("locations.lat", "latitude"),
    o.rename("points.x", "X"),
    o.rename("points.y", "y.y"),  # a name with a dot
], RENAMED)
case("testRename[by ID]", SCHEMA, lambda: [
    o.rename(2, "json"), o.rename(3, "options"), o.rename(9, "newfeature"),
    o.rename(12, "latitude"), o.rename(15, "X"), o.rename(16, "y.y"),
], RENAMED)
case("testRenameCaseInsensitive", SCHEMA, lambda: [o.rename("Data", "json")],
     refused("case-sensitive"), differs=True)

# --- adds ------------------------------------------------------------------------------------

ADDED = appended(appended(appended(
    SCHEMA, 4, opt(25, "alt", "float")),
    5, opt(26, "z", "long"), opt(27, "t.t", "long")),
    None, opt(24, "toplevel", "decimal(9, 2)"))
case("testAddFields", SCHEMA, lambda: [
    o.add("toplevel", "decimal(9, 2)"),
    o.add("locations.alt", "float"),  # into a map's value struct
    o.add("points.z", "long"),  # into a list's element struct
    o.add(("points", "t.t"), "long"),  # a name with a dot
], ADDED)

case("testAddFields[by full name]", SCHEMA, lambda: [
    o.add("toplevel", "decimal(9, 2)"),
    o.add("locations.value.alt", "float"),
    o.add("points.element.z", "long"),
    o.add(("points", "element", "t.t"), "long"),
], ADDED)

ONE_ID = schema(req(1, "id", "int"))
case("testAddNestedStruct", ONE_ID, lambda: [
    o.add("location", st(req(1, "lat", IntegerType()), opt(2, "long", IntegerType()))),
], appended(ONE_ID, None, opt(2, "location", st(req(3, "lat", "int"), opt(4, "long", "int")))))
case("testAddNestedMapOfStructs", ONE_ID, lambda: [
    o.add("locations", MapType(
        1, st(req(20, "address", StringType()), req(21, "city", StringType()),
              req(22, "state", StringType()), req(23, "zip", IntegerType())),
        2, st(req(9, "lat", IntegerType()), opt(8, "long", IntegerType())),
        value_required=False)),
], appended(ONE_ID, None, opt(2, "locations", mp(
    3, st(req(5, "address", "string"), req(6, "city", "string"), req(7, "state", "string"),
          req(8, "zip", "int")),
    4, st(req(9, "lat", "int"), opt(10, "long", "int"))))))
case("testAddNestedListOfStructs", ONE_ID, lambda: [
    o.add("locations", ListType(
        1, st(req(9, "lat", IntegerType()), opt(8, "long", IntegerType())),
        element_required=False)),
], appended(ONE_ID, None,
            opt(2, "locations", lst(3, st(req(4, "lat", "int"), opt(5, "long", "int"))))))
# Iceberg adds a required column only when told incompatible changes are allowed; the
# toolkit adds one where no row can lack it: a table with no rows.
case("testAddRequiredColumnWithoutDefault[a table with rows]", ONE_ID,
     lambda: [o.add("data", "string", required=True)], refused("data", "required"),
     rows=({"id": 1},))
case("testAddRequiredColumnWithoutDefault[allowIncompatibleChanges, no rows]", ONE_ID,
     lambda: [o.add("data", "string", required=True)],
     appended(ONE_ID, None, req(2, "data", "string")))
case("testAddRequiredColumnCaseInsensitive", ONE_ID, lambda: [o.add("ID", "string")],
     refused("ID", "is taken"))
case("testAddMultipleRequiredColumnCaseInsensitive", ONE_ID,
     lambda: [o.add("data", "string"), o.add("DATA", "string")], refused("DATA", "is taken"))
case("testMakeColumnOptional", ONE_ID, lambda: [o.make_optional("id")],
     schema(opt(1, "id", "int")))
case("testAmbiguousAdd", SCHEMA, lambda: [o.add("preferences.booleans", "boolean")],
     appended(SCHEMA, 3, opt(24, "booleans", "boolean")), differs=True)
case("testAddAlreadyExists[preferences.feature1]", SCHEMA,
     lambda: [o.add("preferences.feature1", "boolean")], refused("feature1", "is taken"))
case("testAddAlreadyExists[preferences]", SCHEMA,
     lambda: [o.add("preferences", "boolean")], refused("preferences", "is taken"))

# --- mixed changes ---------------------------------------------------------------------------

# Iceberg's expected schema, except that ``json`` stays optional: the toolkit has no
# operation that makes a column required (RULES 5), so the test's requireColumn("data") has
# no counterpart and is left out. The other steps are ordered so each names what exists.
MIXED = schema(
    req(1, "id", "long", "unique id"),
    opt(2, "json", "string"),
    opt(3, "options", st(req(8, "feature1", "boolean"), opt(9, "newfeature", "boolean")),
        "struct of named boolean options"),
    req(4, "locations", mp(
        10, st(req(20, "address", "string"), req(21, "city", "string"),
               req(22, "state", "string"), req(23, "zip", "int")),
        11, st(req(12, "latitude", "double", "latitude"), opt(25, "alt", "float"),
               req(28, "description", "string", "Location description")), required=True),
        "map of address to coordinate"),
    opt(5, "points", lst(14, st(opt(15, "X", "long"), req(16, "y.y", "long"),
                                opt(26, "z", "long"), opt(27, "t.t", "long", "name with '.'"))),
        "2-D cartesian points"),
    req(6, "doubles", lst(17, "double", required=True)),
    opt(24, "toplevel", "decimal(9, 2)"),
)
case("testMixedChanges", SCHEMA, lambda: [
    o.add("toplevel", DecimalType(9, 2)),
    o.add("locations.alt", "float"),
    o.add("points.z", "long"),
    o.add(("points", "t.t"), "long", doc="name with '.'"),
    o.widen("id", "long"),
    o.update_doc("id", "unique id"),
    o.widen("locations.lat", "double"),
    o.update_doc("locations.lat", "latitude"),
    o.rename("data", "json"),
    o.rename("preferences.feature2", "newfeature"),
    o.rename("preferences", "options"),
    o.rename("locations.lat", "latitude"),
    o.make_optional("points.x"),
    o.rename("points.x", "X"),
    o.rename("points.y", "y.y"),
    o.drop("locations.long"),
    o.drop("properties"),
    o.add("locations.description", "string", doc="Location description", required=True),
], MIXED, differs=True)

# --- delete, then add; conflicts -------------------------------------------------------------

case("testDeleteThenAdd", ONE_ID, lambda: [o.drop("id"), o.add("id", IntegerType())],
     schema(opt(2, "id", "int")))
case("testDeleteThenAddNested", SCHEMA,
     lambda: [o.drop("preferences.feature1"), o.add("preferences.feature1", "boolean")],
     appended(without(SCHEMA, 8), 3, opt(24, "feature1", "boolean")))
case("testDeleteMissingColumn", SCHEMA, lambda: [o.drop("col")], refused("no field 'col'"))
# Iceberg refuses to drop what the same update adds (or a struct it adds to); a toolkit
# plan's steps apply in order, so the drop removes what the step before added.
case("testAddDeleteConflict[col]", SCHEMA, lambda: [o.add("col", "int"), o.drop("col")],
     SCHEMA, differs=True)
case("testAddDeleteConflict[preferences]", SCHEMA,
     lambda: [o.add("preferences.feature3", "int"), o.drop("preferences")],
     without(SCHEMA, 3), differs=True)
case("testRenameMissingColumn", SCHEMA, lambda: [o.rename("col", "fail")],
     refused("no field 'col'"))
case("testRenameDeleteConflict[id]", SCHEMA, lambda: [o.rename("id", "col"), o.drop("id")],
     refused("no field 'id'"))
case("testRenameDeleteConflict[col]", SCHEMA, lambda: [o.rename("id", "col"), o.drop("col")],
     without(SCHEMA, 1), differs=True)
case("testDeleteRenameConflict", SCHEMA, lambda: [o.drop("id"), o.rename("id", "identifier")],
     refused("no field 'id'"))
case("testUpdateMissingColumn", SCHEMA, lambda: [o.widen("col", "date")], refused("no field 'col'"))
case("testUpdateMissingColumnDoc", SCHEMA, lambda: [o.update_doc("col", "description")],
     refused("no field 'col'"))
case("testUpdateDeleteConflict", SCHEMA, lambda: [o.widen("id", "long"), o.drop("id")],
     without(SCHEMA, 1), differs=True)
case("testDeleteUpdateConflict", SCHEMA, lambda: [o.drop("id"), o.widen("id", "long")],
     refused("no field 'id'"))

# --- maps' keys and values -------------------------------------------------------------------

case("testDeleteMapKey", SCHEMA, lambda: [o.drop("locations.key")], refused("key", "cannot change"))
case("testDeleteMapValue", SCHEMA, lambda: [o.drop("locations.value")],
     refused("map value, not a field"))
case("testAddFieldToMapKey", SCHEMA, lambda: [o.add("locations.key.address_line_2", "string")],
     refused("key", "cannot change"))
case("testAlterMapKey", SCHEMA, lambda: [o.widen("locations.key.zip", "long")],
     refused("key", "cannot change"))
M = schema(req(1, "m", mp(2, "int", 3, "double")))
case("testUpdateMapKey", M, lambda: [o.widen("m.key", "long")], refused("key", "cannot change"))

# --- changes to added and deleted columns ----------------------------------------------------

ONE_I = schema(req(1, "i", "int"))
case("testUpdateAddedColumnType", ONE_I, lambda: [o.add("value", "int"), o.widen("value", "long")],
     appended(ONE_I, None, opt(2, "value", "long")))
case("testUpdateAddedColumnDoc", ONE_I,
     lambda: [o.add("value", "long"), o.update_doc("value", "a value")],
     appended(ONE_I, None, opt(2, "value", "long", "a value")))
case("testUpdateDeletedColumnDoc", ONE_I, lambda: [o.drop("i"), o.update_doc("i", "a value")],
     refused("no field 'i'"), last_id=3)

# --- moves -----------------------------------------------------------------------------------

case("testMultipleMoves", ABCD, lambda: [
    o.move_first("d"), o.move_first("c"), o.move_after("b", "d"), o.move_before("d", "a"),
], reordered(ABCD, None, 3, 2, 4, 1))
SWAPPED = reordered(ID_DATA, None, 2, 1)
case("testMoveTopLevelColumnFirst", ID_DATA, lambda: [o.move_first("data")], SWAPPED)
case("testMoveTopLevelColumnBeforeFirst", ID_DATA, lambda: [o.move_before("data", "id")], SWAPPED)
case("testMoveTopLevelColumnAfterLast", ID_DATA, lambda: [o.move_after("id", "data")], SWAPPED)
TS_LAST = appended(ID_DATA, None, opt(3, "ts", "timestamptz"))
case("testMoveTopLevelColumnAfter", TS_LAST, lambda: [o.move_after("ts", "id")],
     reordered(TS_LAST, None, 1, 3, 2))
TS_FIRST = reordered(TS_LAST, None, 3, 1, 2)
case("testMoveTopLevelColumnBefore", TS_FIRST, lambda: [o.move_before("ts", "data")],
     reordered(TS_LAST, None, 1, 3, 2))
IN_STRUCT_SWAPPED = reordered(WITH_STRUCT, 2, 4, 3)
case("testMoveNestedFieldFirst", WITH_STRUCT, lambda: [o.move_first("struct.data")],
     IN_STRUCT_SWAPPED)
case("testMoveNestedFieldBeforeFirst", WITH_STRUCT,
     lambda: [o.move_before("struct.data", "struct.count")], IN_STRUCT_SWAPPED)
case("testMoveNestedFieldAfterLast", WITH_STRUCT,
     lambda: [o.move_after("struct.count", "struct.data")], IN_STRUCT_SWAPPED)
WITH_TS = appended(WITH_STRUCT, 2, opt(5, "ts", "timestamptz"))
case("testMoveNestedFieldAfter", WITH_TS, lambda: [o.move_after("struct.ts", "struct.count")],
     reordered(WITH_TS, 2, 3, 5, 4))
case("testMoveNestedFieldBefore", reordered(WITH_TS, 2, 5, 3, 4),
     lambda: [o.move_before("struct.ts", "struct.data")], reordered(WITH_TS, 2, 3, 5, 4))
TS_COUNT_DATA = st(opt(5, "ts", "timestamptz"), req(3, "count", "long"), req(4, "data", "string"))
LIST = schema(req(1, "id", "long"), req(2, "list", lst(6, TS_COUNT_DATA)))
case("testMoveListElementField", LIST, lambda: [o.move_before("list.ts", "list.data")],
     reordered(LIST, 2, 3, 5, 4), last_id=6)
case("testMoveListElementField[by full name]", LIST,
     lambda: [o.move_before("list.element.ts", "list.element.data")],
     reordered(LIST, 2, 3, 5, 4), last_id=6)
MAP = schema(req(1, "id", "long"), req(2, "map", mp(6, "string", 7, TS_COUNT_DATA)))
case("testMoveMapValueStructField[by full name]", MAP,
     lambda: [o.move_before("map.value.ts", "map.value.data")], reordered(MAP, 2, 3, 5, 4))
case("testMoveMapValueStructField[by ID]", MAP, lambda: [o.move_before(5, 4)],
     reordered(MAP, 2, 3, 5, 4))
case("testMoveMapValueStructField", MAP, lambda: [o.move_before("map.ts", "map.data")],
     reordered(MAP, 2, 3, 5, 4))
case("testMoveAddedTopLevelColumn", ID_DATA,
     lambda: [o.add("ts", "timestamptz"), o.move_after("ts", "id")],
     schema(req(1, "id", "long"), opt(3, "ts", "timestamptz"), req(2, "data", "string")))
case("testMoveAddedTopLevelColumnAfterAddedColumn", ID_DATA, lambda: [
    o.add("ts", "timestamptz"), o.add("count", "long"),
    o.move_after("ts", "id"), o.move_after("count", "ts"),
], schema(req(1, "id", "long"), opt(3, "ts", "timestamptz"), opt(4, "count", "long"),
          req(2, "data", "string")))
case("testMoveAddedNestedStructField", WITH_STRUCT,
     lambda: [o.add("struct.ts", "timestamptz"), o.move_before("struct.ts", "struct.count")],
     reordered(appended(WITH_STRUCT, 2, opt(5, "ts", "timestamptz")), 2, 5, 3, 4))
case("testMoveAddedNestedStructFieldBeforeAddedColumn", WITH_STRUCT, lambda: [
    o.add("struct.ts", "timestamptz"), o.add("struct.size", "long"),
    o.move_before("struct.ts", "struct.count"), o.move_before("struct.size", "struct.ts"),
], reordered(appended(WITH_STRUCT, 2, opt(5, "ts", "timestamptz"), opt(6, "size", "long")),
             2, 6, 5, 3, 4))
case("testMoveSelfReferenceFails[before]", ID_DATA, lambda: [o.move_before("id", "id")],
     refused("itself"))
case("testMoveSelfReferenceFails[after]", ID_DATA, lambda: [o.move_after("id", "id")],
     refused("itself"))
for kind, make in [("first", lambda: o.move_first("items")),
                   ("before", lambda: o.move_before("items", "id")),
                   ("after", lambda: o.move_after("items", "data"))]:
    case(f"testMoveMissingColumnFails[{kind}]", ID_DATA, lambda m=make: [m()],
         refused("no field 'items'"))
for kind, make in [("first", lambda: o.move_first("ts")),
                   ("before", lambda: o.move_before("ts", "id")),
                   ("after", lambda: o.move_after("ts", "data"))]:
    case(f"testMoveBeforeAddFails[{kind}]", ID_DATA,
         lambda m=make: [m(), o.add("ts", "timestamptz")], refused("no field 'ts'"))
case("testMoveMissingReferenceColumnFails[before]", ID_DATA,
     lambda: [o.move_before("id", "items")], refused("no field 'items'"))
case("testMoveMissingReferenceColumnFails[after]", ID_DATA,
     lambda: [o.move_after("data", "items")], refused("no field 'items'"))
MAP_SS = appended(ID_DATA, None, opt(3, "map", mp(4, "string", 5, "string", required=True)))
case("testMovePrimitiveMapKeyFails", MAP_SS, lambda: [o.move_before("map.key", "map.value")],
     refused("map.key", "cannot change"))
MAP_SE = appended(ID_DATA, None, opt(3, "map", mp(4, "string", 5, st(), required=True)))
case("testMovePrimitiveMapValueFails", MAP_SE, lambda: [o.move_before("map.value", "map.key")],
     refused("map.value", "not a field"))
LIST_S = appended(ID_DATA, None, opt(3, "list", lst(4, "string", required=True)))
case("testMovePrimitiveListElementFails", LIST_S,
     lambda: [o.move_before("list.element", "list")], refused("list.element", "not a field"))
AB_STRUCT = schema(req(1, "a", "int"), req(2, "b", "int"),
                   req(3, "struct", st(req(4, "x", "int"), req(5, "y", "int"))))
case("testMoveTopLevelBetweenStructsFails", AB_STRUCT, lambda: [o.move_before("a", "struct.x")],
     refused("struct.x", "same struct"))
S1_S2 = schema(req(1, "s1", st(req(3, "a", "int"), req(4, "b", "int"))),
               req(2, "s2", st(req(5, "x", "int"), req(6, "y", "int"))))
case("testMoveBetweenStructsFails", S1_S2, lambda: [o.move_before("s2.x", "s1.a")],
     refused("s2.x", "same struct"))

# --- identifier fields -----------------------------------------------------------------------

case("testAddExistingIdentifierFields", SCHEMA, lambda: [o.set_identifier_fields("id")], WITH_ID)
NEW_FIELD = appended(SCHEMA, None, req(24, "new_field", "string"))
case("testAddNewIdentifierFieldColumns[add, then set]", SCHEMA, lambda: [
    o.add("new_field", "string", required=True), o.set_identifier_fields("id", "new_field"),
], identified(NEW_FIELD, 1, 24))
# Iceberg checks identifier fields against the update's result; a toolkit step sees only
# the steps before it, so naming a field a later step adds is refused.
case("testAddNewIdentifierFieldColumns[set, then add]", SCHEMA, lambda: [
    o.set_identifier_fields("id", "new_field"), o.add("new_field", "string", required=True),
], refused("no field 'new_field'"), differs=True)
REQ_STRUCT = appended(SCHEMA, None, req(24, "required_struct", st(req(25, "field", "string"))))
case("testAddNestedIdentifierFieldColumns[existing]", REQ_STRUCT,
     lambda: [o.set_identifier_fields("required_struct.field")], identified(REQ_STRUCT, 25))
NEW_STRUCT = appended(SCHEMA, None, req(24, "new", st(req(25, "field", "string"))))
case("testAddNestedIdentifierFieldColumns[added]", SCHEMA, lambda: [
    o.add("new", st(req(25, "field", StringType())), required=True),
    o.set_identifier_fields("new.field"),
], identified(NEW_STRUCT, 25))
NEW_DEEP = appended(SCHEMA, None,
                    req(24, "new", st(req(25, "field", st(req(26, "nested", "string"))))))
case("testAddNestedIdentifierFieldColumns[added, two levels]", SCHEMA, lambda: [
    o.add("new", st(req(25, "field", st(req(26, "nested", StringType())))), required=True),
    o.set_identifier_fields("new.field.nested"),
], identified(NEW_DEEP, 26))
case("testAddDottedIdentifierFieldColumns", SCHEMA, lambda: [
    o.add(("dot.field",), "string", required=True),
    o.set_identifier_fields("id", ("dot.field",)),
], identified(appended(SCHEMA, None, req(24, "dot.field", "string")), 1, 24))
TWO_NEW = appended(SCHEMA, None, req(24, "new_field", "string"), req(25, "new_field2", "string"))
case("testRemoveIdentifierFields[one]", identified(TWO_NEW, 1, 24, 25),
     lambda: [o.set_identifier_fields("new_field", "new_field2")], identified(TWO_NEW, 24, 25))
case("testRemoveIdentifierFields[all]", identified(TWO_NEW, 24, 25),
     lambda: [o.set_identifier_fields()], TWO_NEW)
ID_FLOAT_DOUBLE = schema(opt(1, "id", "int"), req(2, "float", "float"), req(3, "double", "double"))
for name, start, field, words in [
    ("missing ID", ID_FLOAT_DOUBLE, 999, ("no field has ID 999",)),
    ("optional", ID_FLOAT_DOUBLE, "id", ("id is optional", "are required")),
    ("float", ID_FLOAT_DOUBLE, "float", ("float", "not float or double")),
    ("double", ID_FLOAT_DOUBLE, "double", ("double", "not float or double")),
    ("unknown", SCHEMA, "unknown", ("no field 'unknown'",)),
    ("not primitive", SCHEMA, "locations", ("locations", "not a primitive")),
    ("optional data", SCHEMA, "data", ("data is optional", "are required")),
    ("in a map", SCHEMA, "locations.key.zip", ("locations.key", "cannot change")),
    ("in a list", SCHEMA, "points.element.x", ("points.x", "inside a list or map")),
]:
    case(f"testSetIdentifierFieldsFails[{name}]", start,
         lambda f=field: [o.set_identifier_fields(f)], refused(*words))
case("testDeleteIdentifierFieldColumns[drop, then reset]", WITH_ID,
     lambda: [o.drop("id"), o.set_identifier_fields()], without(SCHEMA, 1))
case("testDeleteIdentifierFieldColumns[reset, then drop]", WITH_ID,
     lambda: [o.set_identifier_fields(), o.drop("id")], without(SCHEMA, 1))
case("testDeleteIdentifierFieldColumnsFails", WITH_ID, lambda: [o.drop("id")],
     refused("id", "identifier"))
OUT = identified(appended(SCHEMA, None, req(24, "out", st(req(25, "nested", "string")))), 25)
case("testDeleteContainingNestedIdentifierFieldColumnsFails", OUT, lambda: [o.drop("out")],
     refused("out", "identifier"))
case("testRenameIdentifierFields", WITH_ID, lambda: [o.rename("id", "id2")],
     changed(WITH_ID, 1, name="id2"))
IDS_MOVED = reordered(WITH_ID, None, 2, 3, 4, 1, 5, 6, 7)
case("testMoveIdentifierFields[after]", WITH_ID, lambda: [o.move_after("id", "locations")],
     IDS_MOVED)
case("testMoveIdentifierFields[before]", WITH_ID, lambda: [o.move_before("id", "locations")],
     reordered(WITH_ID, None, 2, 3, 1, 4, 5, 6, 7))
case("testMoveIdentifierFields[first]", WITH_ID, lambda: [o.move_first("id")], WITH_ID)
case("testMoveIdentifierFieldsCaseInsensitive", WITH_ID,
     lambda: [o.move_after("iD", "locations")], refused("case-sensitive"), differs=True)

# --- a deleted column's name reused, then moved ----------------------------------------------

NEW_ID = req(4, "id", "int")
for kind, move, order in [
    ("AfterAnotherColumn", lambda: o.move_after("id", "data"), (2, 4, 3)),
    ("BeforeAnotherColumn", lambda: o.move_before("id", "data_1"), (2, 4, 3)),
    ("ToFirst", lambda: o.move_first("id"), (4, 2, 3)),
]:
    case(f"testMoveTopDeletedColumn{kind}", TOP_3,
         lambda m=move: [o.drop("id"), o.add("id", IntegerType(), required=True), m()],
         reordered(appended(without(TOP_3, 1), None, NEW_ID), None, *order))
NEW_DATA = req(6, "data", "int")
for kind, move, order in [
    ("AfterAnotherColumn", lambda: o.move_after("struct.data", "struct.count"), (3, 6, 5)),
    ("BeforeAnotherColumn", lambda: o.move_before("struct.data", "struct.data_1"), (3, 6, 5)),
    ("ToFirst", lambda: o.move_first("struct.data"), (6, 3, 5)),
]:
    case(f"testMoveDeletedNestedStructField{kind}", STRUCT_OF_3,
         lambda m=move: [o.drop("struct.data"), o.add("struct.data", "int", required=True), m()],
         reordered(appended(without(STRUCT_OF_3, 4), 2, NEW_DATA), 2, *order))

# --- case-insensitive adds and moves ---------------------------------------------------------

ONE_LONG = schema(req(1, "id", "long"))
case("testCaseInsensitiveAddTopLevelAndMove", ONE_LONG,
     lambda: [o.add("data", "string"), o.move_first("dAtA")], refused("case-sensitive"),
     differs=True)
S_F1 = schema(req(1, "id", "long"), opt(2, "struct", st(req(3, "field1", "string"))))
case("testCaseInsensitiveAddNestedAndMove", S_F1,
     lambda: [o.add("STRUCT.field2", "int")], refused("case-sensitive"), differs=True)
case("testCaseInsensitiveMoveAfterNewlyAddedField", S_F1, lambda: [
    o.add("struct.field2", "int"), o.add("struct.field3", "double"),
    o.move_after("STRUCT.FIELD3", "struct.FIELD2"),
], refused("case-sensitive"), differs=True)
