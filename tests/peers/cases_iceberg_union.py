"""Union by name: Iceberg Java's ``TestSchemaUnionByFieldName`` and the union cases of
PyIceberg's ``tests/test_schema.py`` (the same suite, ported), re-expressed as
``toolkit.ops.union_by_name(schema)`` cases. A case cites both tests where it is in both.

The peers walk every primitive type; the types Iceberg format v3 adds (variant, unknown,
timestamp_ns, geometry, geography) are left out, as the stack writes v2 tables (listed in
docs/rules.md).
"""

from __future__ import annotations

import pyarrow as pa

from tests.peers.model import Case, changed, lst, mp, opt, refused, req, schema, st
from toolkit import ops as o

J = "iceberg-java:TestSchemaUnionByFieldName."
P = "pyiceberg:test_schema."

# The primitives both suites walk, as far as a format v2 table holds them.
PRIMITIVES = [
    "string", "time", "timestamp", "timestamptz", "uuid", "date", "boolean", "binary",
    "double", "int", "fixed[10]", "decimal(10, 2)", "long", "float",
]

CASES: list[Case] = []
EMPTY = schema()


def case(java: str, py: str | None, start, new, expect, **kw) -> None:  # type: ignore[no-untyped-def]
    """A union case: ``start`` evolved by ``union_by_name(new)`` gives ``expect``."""
    cites = (J + java.split("[")[0], *((P + py,) if py else ()))
    CASES.append(Case(J + java, start, lambda: [o.union_by_name(new)], expect, cites=cites, **kw))


TOP = schema(*(opt(i, t, t) for i, t in enumerate(PRIMITIVES, start=1)))
case("testAddTopLevelPrimitives", "test_add_top_level_primitives", EMPTY, TOP, TOP)
for t in PRIMITIVES:
    s = schema(opt(1, "aList", lst(2, t)))
    case(f"testAddTopLevelListOfPrimitives[{t}]", "test_add_top_level_list_of_primitives",
         EMPTY, s, s)
for t in PRIMITIVES:
    s = schema(opt(1, "aMap", mp(2, t, 3, t)))
    case(f"testAddTopLevelMapOfPrimitives[{t}]", "test_add_top_level_map_of_primitives",
         EMPTY, s, s)
for t in PRIMITIVES:
    s = schema(opt(1, "aStruct", st(opt(2, "primitive", t))))
    case(f"testAddTopLevelStructOfPrimitives[{t}]", "test_add_top_struct_of_primitives",
         EMPTY, s, s)
EMPTY_STRUCT = schema(opt(1, "aStruct", st()))
for t in PRIMITIVES:
    s = schema(opt(1, "aStruct", st(opt(2, "primitive", t))))
    case(f"testAddNestedPrimitive[{t}]", "test_add_nested_primitive", EMPTY_STRUCT, s, s)
NESTED_ALL = schema(opt(1, "aStruct", st(*(opt(i, t, t) for i, t in enumerate(PRIMITIVES, 2)))))
case("testAddNestedPrimitives", "test_add_nested_primitives", EMPTY_STRUCT, NESTED_ALL, NESTED_ALL)


def nested_lists(depth: int, leaf: str, first_id: int) -> object:
    return leaf if depth == 0 else lst(first_id, nested_lists(depth - 1, leaf, first_id + 1))  # type: ignore[arg-type]


# The peers nest decimal(11, 20), a scale above its precision, which Spark and DuckDB
# refuse to read; decimal(11, 2) keeps the nesting.
LISTS = schema(opt(1, "aList", nested_lists(9, "decimal(11, 2)", 2)))  # type: ignore[arg-type]
case("testAddNestedLists", "test_add_nested_lists", EMPTY, LISTS, LISTS)


def nested_structs(depth: int, first_id: int) -> object:
    if depth == 0:
        return opt(first_id, "aString", "string")
    return opt(first_id, f"struct{7 - depth}", st(nested_structs(depth - 1, first_id + 1)))  # type: ignore[arg-type]


STRUCTS = schema(nested_structs(6, 1))  # type: ignore[arg-type]
case("testAddNestedStruct", "test_add_nested_struct", EMPTY, STRUCTS, STRUCTS)


def nested_maps(depth: int, first_id: int) -> object:
    inner = "string" if depth == 1 else nested_maps(depth - 1, first_id + 2)
    return mp(first_id, "string", first_id + 1, inner)  # type: ignore[arg-type]


MAPS = schema(opt(1, "struct", nested_maps(6, 2)))  # type: ignore[arg-type]
case("testAddNestedMaps", "test_add_nested_maps", EMPTY, MAPS, MAPS)

# --- what a union refuses --------------------------------------------------------------------

# Iceberg refuses a long where the table has a string; in the toolkit's union a type whose
# values fit the table's column (RULES 5: a long into a string column is a string) leaves
# the column as it is, as a narrower number does in both.
STRING_LIST = schema(opt(1, "aList", lst(2, "string")))
case("testDetectInvalidTopLevelList", "test_detect_invalid_top_level_list",
     STRING_LIST, schema(opt(1, "aList", lst(2, "long"))), STRING_LIST, differs=True)
STRING_MAP = schema(opt(1, "aMap", mp(2, "string", 3, "string")))
case("testDetectInvalidTopLevelMapValue", "test_detect_invalid_top_level_maps", STRING_MAP,
     schema(opt(1, "aMap", mp(2, "string", 3, "long"))), STRING_MAP, differs=True)
case("testDetectInvalidTopLevelMapKey", "test_detect_invalid_top_level_maps", STRING_MAP,
     schema(opt(1, "aMap", mp(2, "uuid", 3, "string"))), refused("aMap", "cannot change"))
case("testReplaceListWithPrimitive", "test_replace_list_with_primitive",
     schema(opt(1, "aColumn", lst(2, "string"))), schema(opt(1, "aColumn", "string")),
     refused("aColumn", "cannot change"))
STRING_COL = schema(opt(1, "aCol", "string"))
CASES.append(Case(
    P + "test_detect_invalid_promotion_string_to_float", STRING_COL,
    lambda: [o.union_by_name(schema(opt(1, "aCol", "float")))], STRING_COL,
    cites=(P + "test_detect_invalid_promotion_string_to_float",), differs=True))

# --- docs, defaults and type promotion -------------------------------------------------------

# Defaults are Iceberg format v3, which the stack does not write: a union creates none (an
# added field comes without them, an existing field keeps its own).
case("testAddFieldWithDefault", None, EMPTY,
     schema(opt(1, "test", "long", "description", initial_default=34, write_default=35)),
     schema(opt(1, "test", "long", "description")), format_version=3, differs=True)
case("testUpdateColumnDefaults", None, schema(req(1, "aCol", "int")),
     schema(req(1, "aCol", "int", initial_default=34, write_default=35)),
     schema(req(1, "aCol", "int")), format_version=3, differs=True)

A_COL = schema(req(1, "aCol", "int"))
case("testUpdateColumnDoc", None, A_COL, schema(req(1, "aCol", "int", "description")),
     schema(req(1, "aCol", "int", "description")))
for old, new, name, py in [
    ("int", "long", "testTypePromoteIntegerToLong", "test_promote_int_to_long"),
    ("float", "double", "testTypePromoteFloatToDouble", "test_promote_float_to_double"),
    ("decimal(20, 1)", "decimal(22, 1)", "testTypePromoteDecimalToFixedScaleWithWiderPrecision",
     "test_type_promote_decimal_to_fixed_scale_with_wider_precision"),
]:
    start = schema(req(1, "aCol", old))
    case(name, py, start, schema(req(1, "aCol", new)), changed(start, 1, field_type=new))
# A narrower type in the new schema leaves the column as it is: its values still fit.
for old, new, name, py in [
    ("double", "float", "testIgnoreTypePromoteDoubleToFloat", "test_allow_double_to_float"),
    ("long", "int", "testIgnoreTypePromoteLongToInt", "test_allow_long_to_int"),
    ("decimal(20, 1)", "decimal(10, 1)", "testIgnoreTypePromoteDecimalToNarrowerPrecision", None),
]:
    start = schema(req(1, "aCol", old))
    case(name, py, start, schema(req(1, "aCol", new)), start)

# --- nested additions ------------------------------------------------------------------------


def in_list(*fields):  # type: ignore[no-untyped-def]
    return schema(req(1, "struct1", st(opt(2, "struct2", st(opt(3, "list", lst(4, st(*fields))))))))


case("testAddPrimitiveToNestedStruct", "test_add_nested_structs",
     in_list(opt(5, "value", "string")), in_list(opt(5, "time", "time")),
     in_list(opt(5, "value", "string"), opt(6, "time", "time")))
MIRROR_A = schema(
    opt(9, "struct1", st(opt(8, "string1", "string"))), opt(6, "list1", lst(7, "string")),
    *(opt(i, f"string{n}", "string") for i, n in zip([5, 4, 3, 2, 1], range(2, 7), strict=True)),
)
MIRROR_B = schema(
    opt(1, "struct1", st(opt(2, "string1", "string"))), opt(3, "list1", lst(4, "string")),
    *(opt(i, f"string{n}", "string") for i, n in zip(range(5, 10), range(2, 7), strict=True)),
)
case("testMirroredSchemas", "test_mirrored_schemas", MIRROR_A, MIRROR_B, MIRROR_A)
MAP1 = opt(1, "map1", mp(2, "string", 3, lst(4, st(opt(5, "string1", "string")))))
WITH_STRUCT1 = schema(MAP1, opt(6, "struct1", st(opt(7, "d1", st(opt(8, "d2", "string"))))))
case("addNewTopLevelStruct", "test_add_new_top_level_struct", schema(MAP1), WITH_STRUCT1,
     WITH_STRUCT1)
S3 = opt(3, "s3", st(opt(4, "s4", "string")))
REPEAT = opt(5, "repeat", st(opt(6, "s1", st(opt(7, "s2", st(opt(8, "s3", st(
    opt(9, "s4", "string")))))))))
APPENDED = schema(req(1, "s1", st(opt(2, "s2", st(S3, REPEAT)))))
case("testAppendNestedStruct", "test_append_nested_struct",
     schema(req(1, "s1", st(opt(2, "s2", st(S3))))), APPENDED, APPENDED)


def lists_in(*fields):  # type: ignore[no-untyped-def]
    return schema(req(1, "s1", st(opt(2, "s2", st(opt(3, "s3", st(*fields)))))))


case("testAppendNestedLists", "test_append_nested_lists",
     lists_in(opt(4, "list1", lst(5, "string"))), lists_in(opt(4, "list2", lst(5, "string"))),
     lists_in(opt(4, "list1", lst(5, "string")), opt(6, "list2", lst(7, "string"))))

# --- from an Arrow schema (PyIceberg) --------------------------------------------------------

ARROW = pa.schema([
    pa.field("foo", pa.string(), nullable=False),
    pa.field("bar", pa.int32(), nullable=True),
    pa.field("baz", pa.bool_(), nullable=True),
])
CASES.append(Case(
    P + "test_union_with_pa_schema", schema(req(1, "foo", "string")),
    lambda: [o.union_by_name(ARROW)],
    schema(req(1, "foo", "string"), opt(2, "bar", "int"), opt(3, "baz", "boolean")),
    cites=(P + "test_union_with_pa_schema",)))
