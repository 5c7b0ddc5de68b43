"""Where the toolkit deliberately differs from the peers' own tests: one table of data per
kind of suite, which docs/rules.md lists row for row and the cases marked ``differs=True``
match: :data:`DIFFERENCES` for the schema-operation suites ("Where we differ from Iceberg's
own tests", checked by tests/peers/test_peer_suites.py), :data:`DLT_DIFFERENCES` for dlt's
data-typing tests ("Where we differ from dlt's own tests", tests/peers/test_dlt_suite.py).

Each entry: case id -> (what the peer does, what the toolkit does, the reason). Cases in
``NOT_RUN`` have no case: they need what the toolkit deliberately lacks (an operation that
makes a field required, RULES 5; Iceberg format v3's defaults and types, which the stack
does not write).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

J = "iceberg-java:TestSchemaUpdate."
JU = "iceberg-java:TestSchemaUnionByFieldName."
R = "pyiceberg:test_rest_schema."
I = "pyiceberg:test_init."  # noqa: E741

CASE = "paths are case-sensitive (`did you mean ...? names are case-sensitive`)"
CASE_WHY = "exact names (RULES 4 only makes names *collide* case-insensitively)"
ORDER = "plan order: each step sees the steps before it"
REWRITE = "planned as a rewrite into a new column; committing needs `rewrite=True`"
REQUIRED = "no operation makes a field required"
V3 = "Iceberg format v3 (defaults), which the stack does not write"

DIFFERENCES: dict[str, tuple[str, str, str]] = {
    # --- run as cases --------------------------------------------------------------------
    **{
        f"{J}testDeleteFieldsCaseSensitiveDisabled[{p}]": (
            "deletes, case-insensitive mode", CASE, CASE_WHY)
        for p in ["Id", "Preferences.feature1", "Locations.lat", "Points.x"]
    },
    f"{J}testUpdateTypesCaseInsensitive": ("widens, case-insensitive mode", CASE, CASE_WHY),
    f"{J}testUpdateFailure[int->string]": ("refuses the type change", REWRITE, "RULES 5 matrix"),
    f"{J}testUpdateFailure[long->double]": ("refuses the type change", REWRITE, "RULES 5 matrix"),
    f"{J}testRenameCaseInsensitive": ("renames, case-insensitive mode", CASE, CASE_WHY),
    f"{J}testAmbiguousAdd": (
        "refuses `preferences.booleans` as ambiguous",
        "adds `booleans` to `preferences` (a top-level name with a dot is a tuple)",
        "`toolkit.ops` paths: a dotted string is a path",
    ),
    f"{J}testMixedChanges": (
        "also makes `data` required", "leaves it optional (the plan omits that step)",
        f"RULES 5: {REQUIRED}",
    ),
    f"{J}testAddDeleteConflict[col]": (
        "refuses dropping a column it adds", "adds, then drops", ORDER),
    f"{J}testAddDeleteConflict[preferences]": (
        "refuses dropping a struct it adds to", "adds, then drops the struct", ORDER),
    f"{J}testRenameDeleteConflict[col]": (
        "refuses: `col` is missing before the update", "renames, then drops `col`", ORDER),
    f"{J}testUpdateDeleteConflict": (
        "refuses dropping a column it widens", "widens, then drops", ORDER),
    f"{J}testAddNewIdentifierFieldColumns[set, then add]": (
        "checks identifier fields on the result", "refuses: the field is added by a later step",
        ORDER),
    f"{J}testMoveIdentifierFieldsCaseInsensitive": ("moves, case-insensitive mode", CASE, CASE_WHY),
    f"{J}testCaseInsensitiveAddTopLevelAndMove": ("moves, case-insensitive mode", CASE, CASE_WHY),
    f"{J}testCaseInsensitiveAddNestedAndMove": ("adds, case-insensitive mode", CASE, CASE_WHY),
    f"{J}testCaseInsensitiveMoveAfterNewlyAddedField": (
        "moves, case-insensitive mode", CASE, CASE_WHY),
    f"{R}test_delete_field_case_insensitive": ("deletes, case-insensitive mode", CASE, CASE_WHY),
    f"{R}test_deletes_case_insensitive[Person.name]": (
        "deletes, case-insensitive mode", CASE, CASE_WHY),
    f"{R}test_update_types_case_insensitive": ("widens, case-insensitive mode", CASE, CASE_WHY),
    **{
        f"{R}test_allowed_updates[{change}]": (
            "changes the type in place (Iceberg Java refuses it)", "refuses the widening",
            "RULES 5: in place only int->long, float->double, decimal precision")
        for change in ["string->binary", "binary->string"]
    },
    f"{R}test_add_required_column_case_insensitive[case-sensitive]": (
        "adds `ID` beside `id`", "refuses: the names collide", "RULES 4"),
    **{
        case_id: ("refuses a type that is not a promotion",
                  "keeps the table's string column: the values fit it",
                  "RULES 5 matrix: a long or float into a string column is a string")
        for case_id in [
            f"{JU}testDetectInvalidTopLevelList", f"{JU}testDetectInvalidTopLevelMapValue",
            "pyiceberg:test_schema.test_detect_invalid_promotion_string_to_float",
        ]
    },
    f"{JU}testAddFieldWithDefault": (
        "adds the field with its defaults", "adds the field without defaults", V3),
    f"{JU}testUpdateColumnDefaults": (
        "sets the column's write default", "leaves the column's defaults as they are", V3),
    # --- not run: what the toolkit deliberately lacks --------------------------------------
    **{
        f"{J}{name}": ("makes a field required", f"nothing to run: {REQUIRED}", "RULES 5")
        for name in ["testRequireColumn", "testRequireColumnCaseInsensitive"]
    },
    **{
        f"{I}{name}": ("makes a list element or map value required",
                       f"nothing to run: {REQUIRED}", "RULES 5")
        for name in [
            "test_update_list_element_required", "test_update_map_value_required",
            "test_update_list_and_map_in_single_schema_change",
            "test_update_nested_list_in_struct_required",
        ]
    },
    **{
        f"{J}{name}": ("sets or keeps a default value", "nothing to run: no default operation", V3)
        for name in [
            "testUpdateDefaultPreservesOtherMetadata", "testUpdateColumnDefaultToNull",
            "testUpdateRequiredColumnDefaultToNullThrows", "testAddColumnWithDefault",
            "testAddColumnWithUpdateColumnDefault", "testAddRequiredColumnWithDefault",
            "testAddRequiredColumnWithUpdateColumnDefault",
            "testAddColumnWithDefaultToRequiredColumn",
            "testAddColumnWithUpdateColumnDefaultToRequiredColumn",
            "testUpdateMissingColumnDefaultValue",
        ]
    },
    **{
        f"{J}{name}": ("adds a column of type `unknown`", "nothing to run: no `unknown` type",
                       "Iceberg format v3 type")
        for name in ["testAddUnknown", "testAddUnknownNonNullDefault", "testAddRequiredUnknown"]
    },
    f"{JU}testAddTopLevelPrimitives[v3 types]": (
        "adds variant, unknown, timestamp_ns, geometry, geography",
        "the union cases use the v2 primitives only", "Iceberg format v3 types"),
    **{
        f"{R}{name}": ("adds a field with defaults", "nothing to run", V3)
        for name in [
            "test_initial_default_all_columns", "test_add_required_column_initial_default",
            "test_add_required_column_initial_default_invalid_value",
        ]
    },
}

NOT_RUN: tuple[str, ...] = tuple(
    case_id for case_id, (_, ours, _) in DIFFERENCES.items()
    if ours.startswith("nothing to run") or ours.startswith("the union cases")
)


D = "dlt:tests/"
NC = f"{D}common/normalizers/test_json_relational_no_coercion.py::"
JR = f"{D}common/normalizers/test_json_relational.py::"
INF = f"{D}normalize/test_json_item_inference.py::"
COE = f"{D}common/schema/test_coercion.py::"
DET = f"{D}common/schema/test_detections.py::"

NO_PARSE = "RULES 3.3: a text is no number, however it reads"
HINTS = "docs/rules.md, Type hints"
TYPED = "docs/rules.md, Typed values"
ONLY_LONGS = "RULES 2: exact conversions only; of numbers only a long reaches a timestamp"

#: dlt's data-typing cases (tests/peers/cases_dlt.py) that differ on purpose: case id ->
#: (what dlt's test asserts, what the toolkit does, the reason)
DLT_DIFFERENCES: dict[str, tuple[str, str, str]] = {
    f"{INF}test_coerce_new_null_value": (
        "keeps the first batch's row of nulls", "writes no row for it and warns that 1 "
        "record was not written", "RULES 3.5: nulls make no column, and no data file holds "
        "a row of no column"),
    f"{NC}test_relational_coerces_same_cases[text_col_gets_bool]": (
        "writes `True` into the text column", "writes `true`",
        "RULES 2: a boolean's text is `true`/`false`"),
    f"{NC}test_relational_coerces_same_cases[bigint_col_gets_text]": (
        "parses `\"200\"` into the bigint column", "adds `col_string`", NO_PARSE),
    f"{NC}test_relational_coerces_same_cases[double_col_gets_text]": (
        "parses `\"3.14\"` into the double column", "adds `col_string`", NO_PARSE),
    f"{COE}test_coerce_type_to_bigint[round double]": (
        "writes `-762162.0` into the bigint column", "adds `x_double`",
        "RULES 2: a double is not narrower than a long, whatever its value"),
    f"{COE}test_coerce_type_to_double[bool]": (
        "refuses `False` (a variant `x__v_bool`)", "writes `0.0`, with a conversion warning",
        "RULES 2: boolean <= long <= double"),
    f"{COE}test_coerce_type_to_bool": (
        "reads `\"yes\"` and `0` as booleans", "adds `b_string` and `b_long`",
        "RULES 3.3: neither is narrower than a boolean"),
    f"{COE}test_coerce_type_to_text[binary]": (
        "writes bytes as Base64 text",
        "writes UTF-8 bytes as that text; other bytes get `t_binary`",
        f"{TYPED}: binary converts to string per value"),
    f"{COE}test_coerce_to_numeric[decimal]": (
        "writes a text, a bigint and a double into the decimal column",
        "adds `n_string`, `n_long`, `n_double`", f"{TYPED}: a decimal converts to string only"),
    f"{COE}test_coerce_type_to_timestamp[double]": (
        "reads the double as epoch seconds, its tenth of a microsecond dropped",
        "adds `ts_double`, the value whole", ONLY_LONGS),
    f"{COE}test_coerce_type_to_timestamp[epoch text]": (
        "parses `\" 1580405246 \"` as epoch seconds", "adds `ts_string`, the text as sent",
        "RULES 1: a text that is no ISO date-time is a string"),
    f"{COE}test_coerce_type_to_date": (
        "truncates timestamps to their day", "adds `d_timestamp`",
        "RULES 2: a timestamp is not narrower than a date"),
    f"{INF}test_coerce_row[first row]": (
        "reads `78172.128` as a timestamp and `\"0xFF\"` as 255",
        "adds `timestamp_double` beside the hinted column; `value` is a string",
        f"{ONLY_LONGS}; RULES 1"),
    f"{INF}test_coerce_row[bool variant]": (
        "adds `confidence__v_bool`", "the `double` hint takes `False` as `0.0`",
        f"RULES 2: boolean <= double; {HINTS}"),
    f"{INF}test_coerce_row[variant name taken]": (
        "fails: the variant's name is a binary column",
        "adds `new_colbool_timestamp_2` and `new_colbool_string`",
        "RULES 4: a taken name is numbered"),
    f"{INF}test_coerce_row_iso_timestamp[double]": (
        "reads the double as epoch seconds", "adds `timestamp_double`", ONLY_LONGS),
    f"{INF}test_coerce_json_variant[records and lists]": (
        "keeps each value whole in a json variant",
        "a record column; the list splits by position into records and strings",
        "docs/rules.md, Mixed arrays"),
    f"{INF}test_coerce_json_variant[record into text]": (
        "writes the dict into the text column as JSON text", "adds `strX_record`",
        "RULES 3: records never go to string columns"),
    f"{INF}test_preserve_column_order": (
        "keeps the order in which columns arrived", "orders a batch's new columns by name",
        "RULES 3.3"),
    f"{INF}test_map_column_preferred_type[decimal]": (
        "trims `\" -0.821 \"` into the decimal", "keeps that text, spaces and all",
        f"{HINTS}: a text converts when it spells the value"),
    f"{D}normalize/test_normalize.py::test_schema_changes": (
        "`int` bigint then `int__v_text` in the nested table, as rows arrive",
        "`comp.int` string and `comp.int_long`", "RULES 3.2: a batch's types are decided together"),
    f"{D}normalize/test_normalize.py::test_normalize_typed_json": (
        "`big_decimal` a decimal, `time` a time", "both strings, their text",
        f"{TYPED}: nothing is rounded; no Spark type holds a time of day"),
    f"{JR}test_flatten_fix_field_name": (
        "no column for an empty list", "`f 2` and `c x` are arrays of string",
        "RULES 1: an empty array with no other evidence"),
    f"{JR}test_normalize_empty_keys": (
        "names an empty key `_empty`", "names it `_2`, doc `upsolver_evolved_from:`",
        "docs/rules.md, Hostile input"),
    f"{JR}test_wrap_in_dict": (
        "wraps an item that is no object as `{\"value\": ...}`",
        "sets it aside (`not-a-record`)", "docs/rules.md, Types and values"),
    f"{JR}test_list_in_list": (
        "child tables; records and numbers in one",
        "one list of depth 3, records and numbers split by position",
        "RULES 1 (ragged arrays); docs/rules.md, Mixed arrays"),
    f"{DET}test_timestamp_detection": (
        "its opt-in detection reads a number near now as a timestamp", "a double",
        "RULES 1: a number is a long or a double"),
    f"{DET}test_iso_date_detection": (
        "its opt-in detection reads `19750521`, `1975-05`, `1975` as dates",
        "strings; `1975-05-21` also a date", "RULES 1: a date is `YYYY-MM-DD`"),
    f"{DET}test_detection_large_integer": (
        "its opt-in detection makes 2^63 a wei (decimal)", "strings; 2^63-1 also in `a_long`",
        "RULES 1: an integer beyond 64 bits is text"),
}


def docs_rows(table: Mapping[str, tuple[str, str, str]] | None = None) -> list[str]:
    """The rows of a docs/rules.md table of differences, in ``table``'s order (default:
    :data:`DIFFERENCES`; also :data:`DLT_DIFFERENCES`, :data:`WRITER_DIFFERENCES`)."""
    return [f"| `{case_id}` | {theirs} | {ours} | {why} |"
            for case_id, (theirs, ours, why) in (table or DIFFERENCES).items()]


#: the docs the tables of differences are listed in
RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def documented_rows(heading: str) -> list[str]:
    """The table rows docs/rules.md lists under ``heading`` (a whole heading line, e.g.
    ``## Where we differ from dlt's own tests``), up to the next heading of any level."""
    text = RULES_MD.read_text(encoding="utf-8")
    assert heading in text, heading
    section = re.split(r"\n#{2,} ", text.split(heading, 1)[1], maxsplit=1)[0]
    return [line for line in section.splitlines() if line.startswith("| `")]



W = "iceberg-java:TestDataFrameWriterV2."
WC = "iceberg-java:TestDataFrameWriterV2Coercion."
FLOAT_IS_DOUBLE = "RULES 1: under the `upsolver` policy a float counts as a double"
NAMED = "RULES 3.3: a batch's new columns are ordered by name"

#: Iceberg's Spark write tests (tests/peers/cases_iceberg_writer.py) that differ on purpose:
#: case id -> (what Iceberg's test asserts, what the toolkit does, the reason)
WRITER_DIFFERENCES: dict[str, tuple[str, str, str]] = {
    f"{W}testMergeSchemaSparkProperty[upsolver]": (
        "adds `new_col float`, read back `12.06F`",
        "adds `new_col double`, the float's value exactly (`12.0600004196167`)",
        FLOAT_IS_DOUBLE),
    f"{W}testMergeSchemaSparkConfiguration[upsolver]": (
        "adds `salary float`", "adds `salary double`, the float's value (`120000.34375`)",
        FLOAT_IS_DOUBLE),
    f"{W}testMergeSchemaIgnoreCastingDecimalToDecimalWithNarrowerPrecision[upsolver]": (
        "writes both DataFrames' decimals into `id decimal(6,2)`",
        "adds `id_decimal decimal(38, 18)` for them; `id` stays null",
        "docs/rules.md, Types and values: `upsolver` never writes a declared type outside "
        "its lattice (`widen` writes `id`)"),
    f"{W}testWriteWithCaseSensitiveOption[case-sensitive]": (
        "adds `ID` and `DaTa` (4 fields), which read null", "adds no column",
        "RULES 3.5: a field of only nulls creates no column yet"),
    **{
        f"{W}testWriteWithCaseSensitiveOption[values, case-{mode}]": (
            f"{iceberg} (the test's rows with values)", "adds `DaTa_2` and `ID_2`",
            "RULES 4: names collide case-insensitively; each key keeps its own column")
        for mode, iceberg in [
            ("insensitive", "writes `ID`, `DaTa` into `id`, `data`"),
            ("sensitive", "adds `ID` and `DaTa`"),
        ]
    },
    **{
        f"{WC}testByteAndShortCoercion[{t}, {policy}]": (
            "makes `id int, data string`", f"makes `data string, id {id_type}`", why)
        for t in ("byte", "short")
        for policy, id_type, why in [
            ("upsolver", "long", f"RULES 1: a byte or short counts as a long; {NAMED}"),
            ("widen", "int", NAMED),
        ]
    },
}


if __name__ == "__main__":  # prints a docs table: python -m tests.peers.differences [dlt|writer]
    import sys

    which = sys.argv[1] if sys.argv[1:] else "iceberg"
    table, peer = {"dlt": (DLT_DIFFERENCES, "dlt"), "writer": (WRITER_DIFFERENCES, "Iceberg"),
                   "iceberg": (DIFFERENCES, "Iceberg")}[which]
    print(f"| case | {peer}'s test | the toolkit | reason |")
    print("|---|---|---|---|")
    print("\n".join(docs_rows(table)))
