"""The schema model keeps everything an Iceberg schema holds, and a plan changes only what it
lists (issue 26): required list elements and map values, map key and value IDs, docs,
defaults, identifier fields -- on random existing schemas, under users' plans and under
both policies' automatic plans."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import ops
from toolkit.core.batch.options import Options
from toolkit.core.engine import Engine
from toolkit.core.evolution.field_ids import field_ids
from toolkit.core.evolution.layout import TableLayout, fresh_ids, id_counter
from toolkit.core.evolution.operations import Operation
from toolkit.core.evolution.plans import Evolution, operation_from_json, plan_evolution
from toolkit.core.values.types import (
    Column,
    ColumnType,
    ListOf,
    MapOf,
    Struct,
    parse_type,
    type_to_str,
)
from toolkit.errors import OperationError

# --- random existing schemas -------------------------------------------------------------------

NAMES = ("a", "b", "c", "d")
PRIMITIVES = ("int", "long", "float", "double", "string", "date", "boolean")
DEFAULTS: dict[str, Any] = {"int": 7, "long": 8, "string": "z", "boolean": True}


def _types(depth: int) -> st.SearchStrategy[ColumnType]:
    prim: st.SearchStrategy[ColumnType] = st.sampled_from(PRIMITIVES)
    if depth == 0:
        return prim
    inner = _types(depth - 1)
    return st.one_of(
        prim,
        prim,
        st.builds(lambda e, r: ListOf(0, e, r), inner, st.booleans()),
        st.builds(lambda v, r: MapOf(0, "string", 0, v, r), inner, st.booleans()),
        _structs(depth - 1),
    )


@st.composite
def _column(draw: st.DrawFn, name: str, depth: int) -> Column:
    t = draw(_types(depth))
    required = draw(st.booleans())
    doc = draw(st.sampled_from([None, None, "why", "upsolver_evolved_from:a"]))
    default = DEFAULTS.get(t) if isinstance(t, str) and draw(st.booleans()) else None
    return Column(0, name, t, doc, required, default, default)


@st.composite
def _structs(draw: st.DrawFn, depth: int = 2) -> Struct:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    return Struct(tuple(draw(_column(n, depth)) for n in names))


@st.composite
def layouts(draw: st.DrawFn) -> TableLayout:
    """A random table: nested structs, lists and maps, required fields, required elements and
    values, docs, defaults; sometimes an identifier field."""
    raw = draw(_structs())
    schema = fresh_ids(raw, id_counter(0))
    assert isinstance(schema, Struct)
    layout = TableLayout(schema)
    top = [c for c in schema.fields if c.required and c.type in ("int", "long", "string")]
    if top and draw(st.booleans()):
        layout = replace(layout, identifier_ids=(top[0].id,))
    return layout


# --- what a plan may change ---------------------------------------------------------------------


def records(layout: TableLayout) -> dict[int, tuple[object, ...]]:
    """Per field ID, everything Iceberg keeps about it except its position: name, required,
    doc, defaults, and its own type (primitives by name, nested types by kind)."""
    out: dict[int, tuple[object, ...]] = {}

    def kind(t: ColumnType) -> object:
        return t if isinstance(t, str) else type(t).__name__

    def walk(t: ColumnType) -> None:
        if isinstance(t, Struct):
            for c in t.fields:
                out[c.id] = (c.name, c.required, c.doc, c.initial_default, c.write_default,
                             kind(c.type))  # fmt: skip
                walk(c.type)
        elif isinstance(t, ListOf):
            out[t.element_id] = ("element", t.element_required, kind(t.element))
            walk(t.element)
        elif isinstance(t, MapOf):
            out[t.key_id] = ("key", True, kind(t.key))
            out[t.value_id] = ("value", t.value_required, kind(t.value))
            walk(t.key)
            walk(t.value)

    walk(layout.schema)
    return out


def touched(plan: Evolution) -> set[int]:
    """The field IDs the plan's operations name (a drop: the field and all inside it)."""
    out: set[int] = set()
    for op, before in zip(plan.operations, plan.layouts, strict=False):
        subject = op.subject_id(before)
        if subject is not None:
            out.add(subject)
            if op.op == "drop":
                inside = {i for i, p in field_ids(before.schema).items()
                          if p[: len(field_ids(before.schema)[subject])]
                          == field_ids(before.schema)[subject]}  # fmt: skip
                out |= inside
    return out


def assert_only_listed_changes(plan: Evolution) -> None:
    before, after = records(plan.before), records(plan.after)
    changed = touched(plan)
    for field_id, record in before.items():
        if field_id not in changed:
            assert after.get(field_id) == record, (field_id, record, after.get(field_id))
    if not any(op.op == "identifier" for op in plan.operations):
        assert plan.after.identifier_ids == plan.before.identifier_ids
    assert (plan.after.partition, plan.after.sort) == (plan.before.partition, plan.before.sort)


# --- random plans -------------------------------------------------------------------------------


def _candidates(layout: TableLayout, draw: st.DrawFn) -> Operation:
    paths = [p for p in field_ids(layout.schema).values() if "key" not in p]
    path = draw(st.sampled_from(paths))
    new_name = draw(st.sampled_from(("n1", "n2", "A", "B")))
    kinds: list[Operation] = [
        ops.rename(path, new_name) if path[-1] not in ("element", "value") else ops.drop(path),
        ops.drop(path),
        ops.update_doc(path, draw(st.sampled_from([None, "new doc"]))),
        ops.make_optional(path),
        ops.widen(path, draw(st.sampled_from(("long", "double", "string")))),
        ops.move_first(path),
        ops.add(
            (*path, new_name),
            draw(st.sampled_from(("long", "list<required int>", "map<string, struct<q: long>>"))),
        ),
        ops.add((new_name,), "struct<x: required long>"),
        ops.set_identifier_fields(path),
    ]
    return draw(st.sampled_from(kinds))


@st.composite
def plans(draw: st.DrawFn) -> Evolution:
    """A random plan on a random table: each drawn operation that applies is kept."""
    layout = draw(layouts())
    kept: list[Operation] = []
    current = layout
    for _ in range(draw(st.integers(1, 5))):
        op = _candidates(current, draw)
        try:
            current = plan_evolution(current, [op]).after
        except OperationError:
            continue
        kept.append(op)
    try:
        return plan_evolution(layout, kept)
    except OperationError:  # a final check (identifier fields) refused the whole plan
        return plan_evolution(layout, [])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_a_users_plan_changes_only_what_it_lists(plan: Evolution) -> None:
    assert_only_listed_changes(plan)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_a_plan_reads_back_from_its_json_form(plan: Evolution) -> None:
    again = [operation_from_json(op.to_json()) for op in plan.operations]
    assert plan_evolution(plan.before, again).after == plan.after


_values = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(-2, 2, allow_nan=False),
    st.text("xy", max_size=2),
    st.lists(st.integers(0, 3), max_size=2),
    st.fixed_dictionaries({"a": st.integers(0, 3)}),
    st.lists(
        st.fixed_dictionaries({"b": st.integers(0, 3), "e": st.text("x", max_size=1)}), max_size=2
    ),  # fmt: skip
)


@pytest.mark.parametrize("policy", ["upsolver", "widen"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=layouts(),
    batch=st.lists(
        st.dictionaries(st.sampled_from(NAMES), _values, max_size=3), min_size=1, max_size=3
    ),
)
def test_an_automatic_plan_changes_only_what_it_lists(
    policy: str, layout: TableLayout, batch: list[dict[str, Any]]
) -> None:
    engine = Engine(Options(policy=policy))  # type: ignore[arg-type]
    try:
        plan = engine.plan(layout.schema, engine.observe(batch), 1)
    except Exception as exc:  # a batch a policy refuses as a whole is not this test's subject
        from toolkit.errors import ToolkitError

        assert isinstance(exc, ToolkitError), exc
        return
    planned = (*plan.operations, *plan.rewrites)
    try:
        evolution = plan_evolution(layout, planned)
    except OperationError as exc:
        # the policies do not know identifier fields: a plan that would make one optional
        # or retype it beyond a promotion is refused whole (Iceberg's rule), never
        # committed half; a promotion (int to long) is Iceberg's to allow, and is
        assert any(op.subject_id(layout) in layout.identifier_ids for op in planned), exc
        assert "identifier field" in str(exc)
        return
    assert evolution.after.schema == plan.after
    assert_only_listed_changes(evolution)


# --- the seven causes of issue 26, one by one --------------------------------------------------

POINTS = TableLayout(
    Struct((
        Column(1, "id", "long", required=True),
        Column(2, "points", ListOf(3, Struct((Column(4, "x", "long"), Column(5, "y", "long"))),
                                   element_required=True)),
        Column(6, "locations", MapOf(7, "string", 8, Struct((Column(9, "lat", "float"),
                                                             Column(10, "long", "float"))),
                                     value_required=True)),
        Column(11, "vals", ListOf(12, "double", element_required=True)),
    )),
    identifier_ids=(1,),
)  # fmt: skip


def test_required_list_elements_and_map_values_stay_required() -> None:
    after = plan_evolution(POINTS, [ops.add("z", "long"), ops.widen("locations.lat", "double")])
    vals = after.schema.by_name()["vals"].type
    points = after.schema.by_name()["points"].type
    locations = after.schema.by_name()["locations"].type
    assert isinstance(vals, ListOf) and vals.element_required
    assert isinstance(points, ListOf) and points.element_required
    assert isinstance(locations, MapOf) and locations.value_required


@pytest.mark.parametrize("path", ["locations.long", "locations.value.long", 10])
@pytest.mark.parametrize(
    "make",
    [
        lambda p: ops.rename(p, "latitude"),
        lambda p: ops.widen(p, "double"),
        lambda p: ops.drop(p),
        lambda p: ops.move_first(p),
        lambda p: ops.update_doc(p, "degrees"),
    ],
    ids=["rename", "widen", "drop", "move", "doc"],
)
def test_fields_of_a_map_value_struct_are_reached_every_way(path: Any, make: Any) -> None:
    plan = plan_evolution(POINTS, [make(path)])
    assert plan.after != plan.before
    assert_only_listed_changes(plan)


@pytest.mark.parametrize("path", ["locations.alt", "locations.value.alt"])
def test_adding_into_a_map_value_struct(path: str) -> None:
    after = plan_evolution(POINTS, [ops.add(path, "int")]).after
    assert type_to_str(after.schema.by_name()["locations"].type) == (
        "map<string, required struct<lat: float, long: float, alt: int>>"
    )
    assert after.last_column_id == 13


def test_an_added_map_gets_new_ids_and_reads_back_from_lineage_json() -> None:
    plan = plan_evolution(POINTS, [ops.add("m", "map<string, struct<a: long>>")])
    m = plan.after.schema.by_name()["m"]
    assert m.id == 13 and isinstance(m.type, MapOf)
    assert (m.type.key_id, m.type.value_id) == (14, 15)
    again = operation_from_json(plan.operations[0].to_json())
    assert plan_evolution(POINTS, [again]).after == plan.after


@pytest.mark.parametrize("path", ["points.x", "points.element.x", 4])
def test_renaming_a_list_struct_field_to_a_case_variant(path: Any) -> None:
    after = plan_evolution(POINTS, [ops.rename(path, "X")]).after
    assert "X: long" in type_to_str(after.schema.by_name()["points"].type)


def test_dropping_the_only_column_is_fine_when_the_plan_adds_one() -> None:
    table = TableLayout(Struct((Column(1, "a", "long"),)))
    after = plan_evolution(table, [ops.drop("a"), ops.add("b", "string")]).after
    assert [c.name for c in after.schema.fields] == ["b"]
    with pytest.raises(OperationError, match=r"operation 1 \(drop a\): a table keeps at least"):
        plan_evolution(table, [ops.drop("a")])


def test_dropping_an_identifier_field_is_refused_unless_the_plan_changes_them() -> None:
    with pytest.raises(OperationError, match=r"operation 1 \(drop id\): identifier field id"):
        plan_evolution(POINTS, [ops.drop("id")])
    after = plan_evolution(POINTS, [ops.drop("id"), ops.set_identifier_fields()]).after
    assert after.identifier_ids == ()


def test_widening_to_its_own_type_is_a_no_op() -> None:
    plan = plan_evolution(POINTS, [ops.widen("id", "long"), ops.widen("vals.element", "double")])
    assert plan.after == plan.before and len(plan.operations) == 2


# --- new operations -----------------------------------------------------------------------------


def test_make_optional_reaches_list_elements_and_map_values() -> None:
    after = plan_evolution(
        POINTS,
        [
            ops.make_optional("points.element"),
            ops.make_optional("locations.value"),
            ops.make_optional(12),
        ],  # fmt: skip
    ).after
    assert type_to_str(after.schema.by_name()["points"].type).startswith("list<struct")
    assert "required" not in type_to_str(after.schema.by_name()["locations"].type)
    assert type_to_str(after.schema.by_name()["vals"].type) == "list<double>"
    with pytest.raises(OperationError, match="a map's key is always required"):
        plan_evolution(POINTS, [ops.make_optional("locations.key")])


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        (("vals",), "not a primitive"),
        (("points.x",), "inside a list or map"),
        (("locations.lat",), "inside a list or map"),
        (("vals.element",), "list element or map part"),
    ],
)
def test_identifier_fields_follow_icebergs_rules(fields: tuple[str, ...], why: str) -> None:
    with pytest.raises(OperationError, match=why):
        plan_evolution(POINTS, [ops.set_identifier_fields(*fields)])


def test_identifier_fields_reject_optional_and_floating_fields() -> None:
    table = TableLayout(Struct((Column(1, "f", "double", required=True), Column(2, "o", "long"))))
    with pytest.raises(OperationError, match="not float or double"):
        plan_evolution(table, [ops.set_identifier_fields("f")])
    with pytest.raises(OperationError, match="o is optional"):
        plan_evolution(table, [ops.set_identifier_fields(2)])
    plan = plan_evolution(POINTS, [ops.set_identifier_fields("id")])
    assert str(plan.operations[0]) == "= identifier fields: id"
    undo = plan.inverse()
    assert undo is not None and undo.after.identifier_ids == (1,)


def test_update_doc_and_its_inverse() -> None:
    plan = plan_evolution(POINTS, [ops.update_doc("id", "the key")])
    assert plan.after.schema.by_name()["id"].doc == "the key"
    undo = plan.inverse()
    assert undo is not None and undo.after == POINTS
    assert str(plan.operations[0]) == "~ doc id -> 'the key'"


def test_a_required_add_only_where_no_row_lacks_it() -> None:
    with pytest.raises(OperationError, match="a required field needs a value in every existing"):
        plan_evolution(POINTS, [ops.add("r", "long", required=True)])
    empty = replace(POINTS, has_rows=False)
    after = plan_evolution(empty, [ops.add("r", "long", required=True)]).after
    assert after.schema.by_name()["r"].required


def test_union_by_name_expands_into_the_operations_it_needs() -> None:
    target = parse_type(
        "struct<id: required long, points: list<struct<x: long, y: long, z: long>>, "
        "locations: map<string, struct<lat: double, long: float>>, vals: list<double>, "
        "extra: string>"
    )
    assert isinstance(target, Struct)
    plan = plan_evolution(POINTS, [ops.union_by_name(target)])
    assert [str(op) for op in plan.operations] == [
        "? make optional points.element",
        "+ add points.element.z: long",
        "? make optional locations.value",
        "^ widen locations.value.lat -> double",
        "? make optional vals.element",
        "+ add extra: string",
    ]
    assert_only_listed_changes(plan)
    with pytest.raises(OperationError, match="id is optional: identifier fields are required"):
        plan_evolution(POINTS, [ops.union_by_name(Struct((Column(0, "id", "long"),)))])


def test_union_by_name_never_narrows_and_refuses_what_iceberg_cannot() -> None:
    target = parse_type("struct<id: required int, vals: list<required float>>")
    assert isinstance(target, Struct)
    assert plan_evolution(POINTS, [ops.union_by_name(target)]).operations == ()
    with pytest.raises(OperationError, match="vals is list<required double> in the table"):
        plan_evolution(POINTS, [ops.union_by_name(Struct((Column(0, "vals", "string"),)))])


def test_new_operations_export_as_code() -> None:
    from toolkit.core.evolution.export import operations_pyiceberg, operations_sql
    from toolkit.errors import ExportError

    plan = [ops.update_doc("id", "key's"), ops.set_identifier_fields("id"),
            ops.make_optional("vals.element"), ops.add("locations.value.alt", "int")]  # fmt: skip
    assert operations_sql(POINTS, plan, "spark", "db.t").splitlines() == [
        "ALTER TABLE `db`.`t` ALTER COLUMN `id` COMMENT 'key\\'s';",
        "ALTER TABLE `db`.`t` SET IDENTIFIER FIELDS `id`;",
        "ALTER TABLE `db`.`t` ALTER COLUMN `vals`.`element` DROP NOT NULL;",
        "ALTER TABLE `db`.`t` ADD COLUMN `locations`.`value`.`alt` INT;",
    ]
    assert operations_sql(POINTS, plan[:1], "trino", "db.t") == (
        'COMMENT ON COLUMN "db"."t"."id" IS \'key\'\'s\';'
    )
    with pytest.raises(ExportError, match="Trino has no statement"):
        operations_sql(POINTS, plan[1:2], "trino", "db.t")
    code = operations_pyiceberg(POINTS, plan, "db.t")
    assert "update.update_column(('id',), doc=\"key's\")" in code
    assert "update.set_identifier_fields('id')" in code
    empty = replace(POINTS, has_rows=False)
    code = operations_pyiceberg(empty, [ops.add("r", "list<required long>", required=True)], "t.t")
    assert "update_schema(allow_incompatible_changes=True)" in code
    assert "element_required=True), required=True)" in code


@pytest.mark.parametrize(
    ("policy", "fits", "other"),
    [
        # widen: an object whose values fit goes into the map; one whose values do not is set
        # aside (quarantined), as a list's elements are
        ("widen", {"id": 1, "m": {"a": 1}}, []),
        # upsolver: an object whose values fit goes into the map too; one whose values do
        # not gets the family's record column (tests/core/test_map_routing.py)
        ("upsolver", {"id": 1, "m": {"a": 1}}, []),
    ],
)
def test_an_object_for_a_map_column_never_crashes(
    policy: str, fits: dict[str, Any], other: list[str]
) -> None:
    import toolkit

    schema = Struct((Column(1, "id", "long"), Column(2, "m", MapOf(3, "string", 4, "long"))))
    sim = toolkit.simulate([[{"id": 1, "m": {"a": 1}}]], schema=schema, policy=policy)
    row = sim.rows[0]
    assert {k: v for k, v in row.items() if v is not None} == fits
    assert [f.name for f in sim.schema.fields][2:] == other
    again = toolkit.simulate([[{"id": 1, "m": {"a": "text"}}]], schema=schema, policy=policy)
    assert again.schema.find_field("m").field_type == sim.schema.find_field("m").field_type


def test_a_map_copied_into_a_new_record_column_gets_new_ids() -> None:
    from toolkit.core.values.types import iter_ids

    a = Struct((Column(3, "b", "int"), Column(4, "c", MapOf(5, "string", 6, "int"))))
    schema = Struct((Column(1, "a", a), Column(2, "b", "int")))
    engine = Engine()
    plan = engine.plan(schema, engine.observe([{"a": [{"b": 0, "e": ""}]}]), 1)
    ids = iter_ids(plan.after)
    assert len(ids) == len(set(ids)), plan.after
    assert plan_evolution(TableLayout(schema), plan.operations).after.schema == plan.after


def _struct_paths(s: Struct, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The canonical path of every struct in ``s`` (itself first), below lists and maps too."""
    out = [prefix]
    for c in s.fields:
        t = c.type
        while isinstance(t, ListOf | MapOf):
            t = t.element if isinstance(t, ListOf) else t.value
        if isinstance(t, Struct):
            out += _struct_paths(t, (*prefix, c.name))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts(), name=st.sampled_from(
    ["a", "A", "b", "x", "key", "element", "value", "a.b", "d.key", "a.element.b"]),
    data=st.data())
def test_a_new_names_check_reads_the_name_index_as_a_whole_one_would(
    layout: TableLayout, name: str, data: st.DataObject
) -> None:
    """check_free indexes only the top-level columns that can hold the name (RULES 4): it
    finds what Iceberg's whole name index of the table finds, short names included."""
    from toolkit.core.evolution.layout import _index_holder, iceberg_name
    from toolkit.core.values.naming import TakenNames

    schema = layout.schema
    parent = data.draw(st.sampled_from(_struct_paths(schema)))
    # a dotted top-level name can be the short name a field inside a list or map would get
    if parent and data.draw(st.booleans()):
        dotted = ".".join((*parent, name))
        if dotted.lower() not in {c.name.lower() for c in schema.fields}:
            schema = replace(schema, fields=(*schema.fields, Column(999, dotted, "long")))
    full_parent = iceberg_name(schema, parent)
    whole = TakenNames()
    whole.add_type((), schema)
    assert _index_holder(schema, full_parent, name) == whole.holder(name, full_parent)
