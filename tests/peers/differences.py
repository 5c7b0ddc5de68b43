"""Where the toolkit deliberately differs from the peers' own tests: one table of data, which
docs/rules.md lists row for row ("Where we differ from Iceberg's own tests") and the cases
marked ``differs=True`` match (tests/peers/test_peer_suites.py checks both).

Each entry: case id -> (what the peer does, what the toolkit does, the reason). Cases in
``NOT_RUN`` have no case: they need what the toolkit deliberately lacks (an operation that
makes a field required, RULES 5; Iceberg format v3's defaults and types, which the stack
does not write).
"""

from __future__ import annotations

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


def docs_rows() -> list[str]:
    """The rows of docs/rules.md's table, in this table's order."""
    return [f"| `{case_id}` | {theirs} | {ours} | {why} |"
            for case_id, (theirs, ours, why) in DIFFERENCES.items()]


if __name__ == "__main__":  # prints the docs table: python -m tests.peers.differences
    print("| case | Iceberg's test | the toolkit | reason |")
    print("|---|---|---|---|")
    print("\n".join(docs_rows()))
