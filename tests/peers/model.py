"""The peers' schema-evolution tests as data: a start schema and a list of ``toolkit.ops``
operations lead to an expected schema, or to a refusal (:class:`Case`); batches of records
lead to a table schema, the rows a reader of it sees and the records set aside
(:class:`DataCase`).

A case is written with PyIceberg's own schema types (the form the peers' tests use), by the
small builders below, so each one reads like the test it comes from:

>>> print(render(schema(req(1, "id", "int"), opt(2, "tags", lst(3, "string", required=True)))))
1: id: required int
2: tags: optional list
  3: element: required string

Expected schemas are compared by :func:`render`: every field ID, name, type, required-ness
(list elements and map values too), doc, default and the order of fields, plus the
identifier fields; a mismatch fails with a line diff of the two renderings.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
)

from toolkit.errors import OperationError, ToolkitError

TypeLike = IcebergType | str


def T(t: TypeLike) -> IcebergType:  # noqa: N802 - reads like a type in the case tables
    """A PyIceberg type from Iceberg's own type text (``"int"``, ``"decimal(9, 2)"``)."""
    if isinstance(t, IcebergType):
        return t
    parsed: IcebergType = IcebergType.handle_primitive_type(t, None)  # type: ignore[operator]
    return parsed


def req(fid: int, name: str, t: TypeLike, doc: str | None = None, **defaults: Any) -> NestedField:
    """A required field (Iceberg Java's ``required(id, name, type, doc)``)."""
    return NestedField(fid, name, T(t), required=True, doc=doc, **defaults)


def opt(fid: int, name: str, t: TypeLike, doc: str | None = None, **defaults: Any) -> NestedField:
    """An optional field (Iceberg Java's ``optional(id, name, type, doc)``)."""
    return NestedField(fid, name, T(t), required=False, doc=doc, **defaults)


def lst(element_id: int, element: TypeLike, *, required: bool = False) -> ListType:
    return ListType(element_id, T(element), element_required=required)


def mp(
    key_id: int, key: TypeLike, value_id: int, value: TypeLike, *, required: bool = False
) -> MapType:
    return MapType(key_id, T(key), value_id, T(value), value_required=required)


def st(*fields: NestedField) -> StructType:
    return StructType(*fields)


def schema(*fields: NestedField, ids: Iterable[int] = ()) -> Schema:
    """A table schema; ``ids`` are its identifier field IDs."""
    return Schema(*fields, identifier_field_ids=list(ids))


# --- what a case expects ---------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """The plan is refused with ``error`` (a ToolkitError subclass) whose message contains
    every one of ``phrases``; nothing is committed."""

    error: type[ToolkitError] = OperationError
    phrases: tuple[str, ...] = ()


def refused(*phrases: str, error: type[ToolkitError] = OperationError) -> Refusal:
    return Refusal(error, phrases)


@dataclass(frozen=True)
class Case:
    """One case of a peer's test suite.

    ``cites`` names the test(s) it re-expresses (``iceberg-java:TestSchemaUpdate.testAddFields``,
    ``pyiceberg:test_rest_schema.test_add_struct``); the first is the case's id, with a
    ``[variant]`` suffix where one peer test holds several cases. ``ops`` builds the
    operations when the case runs (an operation that cannot even be built is a refusal
    too). ``expect_table`` is what the table path expects where it differs from the pure
    path (a plan that shows a rewrite, which committing needs approved). ``last_id`` is
    the table's last assigned column ID when it is higher than the start schema's highest
    (Iceberg never reuses one). ``rows`` are written to the table first (the pure path's
    layout then may have rows). ``format_version`` is the pure path's layout's (3 where a
    schema carries default values; the table path's table is v2, all PyIceberg writes).
    ``differs`` marks a deliberate difference from the peer, listed in docs/rules.md.
    """

    id: str
    start: Schema
    ops: Callable[[], Sequence[Any]]
    expect: Schema | Refusal
    expect_table: Schema | Refusal | None = None
    last_id: int = 0
    rows: tuple[dict[str, Any], ...] = ()
    format_version: int = 2
    cites: tuple[str, ...] = ()
    differs: bool = False

    @property
    def last_column_id(self) -> int:
        return max(self.last_id, self.start.highest_field_id)

    def param(self, path: str) -> Any:
        """This case as a pytest parameter for ``path`` (``"pure"`` or ``"table"``)."""
        return pytest.param(self, id=self.id)


@dataclass(frozen=True)
class Lines:
    """A batch as JSON lines, where the bytes matter (an integer literal beyond 64 bits, a
    number a double cannot hold): written to a ``.jsonl`` file when the case runs, so the
    table path reads it as Spark reads files."""

    text: str

    @classmethod
    def of(cls, *records: Mapping[str, Any]) -> Lines:
        """The records as JSON lines (``json.dumps``), for a case that runs on the table
        path as files: Spark's JVM then types and routes them rather than Python."""
        return cls("".join(json.dumps(r) + "\n" for r in records))

    def write(self, folder: Path, name: str) -> str:
        path = folder / f"{name}.jsonl"
        path.write_text(self.text, encoding="utf-8")
        return str(path)


#: one batch of a data case: its records (dicts; other items are no records), or its lines
Batch = tuple[Any, ...] | Lines


@dataclass(frozen=True)
class SetAside:
    """A record set aside (``reason`` as the quarantine names it, ``field`` the offending
    value's path or None, ``record`` as it arrived)."""

    reason: str
    field: str | None
    record: Any


@dataclass(frozen=True)
class DataCase:
    """One case of a peer's data-typing tests: batches of records, in order, given to
    ``toolkit.simulate`` (and, for some, to ``toolkit.ingest`` on a real table).

    ``expect`` is the final table schema (compared by :func:`render`: IDs, names, types,
    docs, order) or a refusal. ``rows`` are the records as a reader of the final table sees
    them, in input order, each without its null columns (a key left out reads null), so a
    value's column says where it was routed. ``aside`` are the records set aside, in order.
    ``options`` go to ``simulate`` / ``ingest`` as keywords; ``start`` is the table's
    schema before the first batch. ``cites`` and ``differs`` as for :class:`Case`.
    """

    id: str
    batches: tuple[Batch, ...]
    expect: Schema | Refusal
    rows: tuple[dict[str, Any], ...] = ()
    aside: tuple[SetAside, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    start: Schema | None = None
    cites: tuple[str, ...] = ()
    differs: bool = False

    def param(self) -> Any:
        return pytest.param(self, id=self.id)


def shown_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their null columns, as :attr:`DataCase.rows` writes them."""
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


# --- rendering and comparing -----------------------------------------------------------------


def _defaults(f: NestedField) -> str:
    parts = []
    if f.initial_default is not None:
        parts.append(f"initial-default={f.initial_default!r}")
    if f.write_default is not None:
        parts.append(f"write-default={f.write_default!r}")
    return f" [{', '.join(parts)}]" if parts else ""


def _type_lines(t: IcebergType, indent: str) -> tuple[str, list[str]]:
    """The head word of a type and the lines of what it holds."""
    if isinstance(t, StructType):
        return "struct", [line for f in t.fields for line in _field_lines(f, indent)]
    if isinstance(t, ListType):
        head, inner = _type_lines(t.element_type, indent + "  ")
        flag = "required" if t.element_required else "optional"
        return "list", [f"{indent}{t.element_id}: element: {flag} {head}", *inner]
    if isinstance(t, MapType):
        khead, kinner = _type_lines(t.key_type, indent + "  ")
        vhead, vinner = _type_lines(t.value_type, indent + "  ")
        flag = "required" if t.value_required else "optional"
        return "map", [
            f"{indent}{t.key_id}: key: {khead}", *kinner,
            f"{indent}{t.value_id}: value: {flag} {vhead}", *vinner,
        ]
    assert isinstance(t, PrimitiveType), t
    return str(t), []


def _field_lines(f: NestedField, indent: str) -> list[str]:
    head, inner = _type_lines(f.field_type, indent + "  ")
    doc = f" ({f.doc})" if f.doc is not None else ""
    flag = "required" if f.required else "optional"
    return [f"{indent}{f.field_id}: {f.name}: {flag} {head}{doc}{_defaults(f)}", *inner]


def render(s: Schema) -> str:
    """Every field with its ID, name, required-ness, type, doc and defaults, one a line and
    indented by nesting; then the identifier fields, if any."""
    lines = [line for f in s.fields for line in _field_lines(f, "")]
    if s.identifier_field_ids:
        lines.append(f"identifier fields: {sorted(s.identifier_field_ids)}")
    return "\n".join(lines)


def assert_schema(got: Schema, want: Schema, where: str) -> None:
    """Fail with a readable diff when ``got`` is not ``want`` (by :func:`render`)."""
    expected, actual = render(want), render(got)
    if expected != actual:
        diff = list(difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "expected", f"got ({where})", lineterm=""
        ))
        first = [line for line in diff[2:] if line[:1] in "-+"][:2]
        headline = f"{where}: " + " / ".join(" ".join(line.split()) for line in first)
        pytest.fail("\n".join([headline, *diff]), pytrace=False)


def assert_ids_cite_their_tests(cases: Sequence[Any]) -> None:
    """Every case's id (``.id``) is its own, and starts with the peer test it cites first
    (``.cites``): a peer suite's every kind of case."""
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    for c in cases:
        assert c.cites and c.id.split("[")[0] == c.cites[0], c.id


def check_refusal(exc: BaseException, refusal: Refusal) -> None:
    """The error a refused case raised is the one it expects, in words naming the rule."""
    assert isinstance(exc, refusal.error), f"{type(exc).__name__}: {exc}"
    for phrase in refusal.phrases:
        assert phrase.lower() in str(exc).lower(), f"{phrase!r} not in: {exc}"


# --- expected schemas as edits of a start schema ---------------------------------------------


def _struct_of(t: IcebergType) -> StructType | None:
    """The struct new fields of a column of type ``t`` go into (Iceberg: a struct, a list's
    element struct or a map's value struct)."""
    if isinstance(t, ListType):
        return _struct_of(t.element_type)
    if isinstance(t, MapType):
        return _struct_of(t.value_type)
    return t if isinstance(t, StructType) else None


def _edit_type(t: IcebergType, edit: Callable[[NestedField], list[NestedField]]) -> IcebergType:
    if isinstance(t, StructType):
        return StructType(*(g for f in t.fields for g in edit(_edit_field(f, edit))))
    if isinstance(t, ListType):
        return ListType(t.element_id, _edit_type(t.element_type, edit), t.element_required)
    if isinstance(t, MapType):
        return MapType(
            t.key_id, _edit_type(t.key_type, edit), t.value_id,
            _edit_type(t.value_type, edit), t.value_required,
        )
    return t


def _edit_field(f: NestedField, edit: Callable[[NestedField], list[NestedField]]) -> NestedField:
    return f.model_copy(update={"field_type": _edit_type(f.field_type, edit)})


def _edited(
    s: Schema, edit: Callable[[NestedField], list[NestedField]], ids: Iterable[int] | None = None
) -> Schema:
    top = _edit_type(StructType(*s.fields), edit)
    assert isinstance(top, StructType)
    keep = list(s.identifier_field_ids) if ids is None else list(ids)
    return Schema(*top.fields, identifier_field_ids=keep)


def without(s: Schema, *field_ids: int) -> Schema:
    """``s`` without the fields of ``field_ids`` (and all they hold)."""
    return _edited(s, lambda f: [] if f.field_id in field_ids else [f])


def changed(s: Schema, field_id: int, **changes: Any) -> Schema:
    """``s`` with field ``field_id``'s attributes changed (``name``, ``field_type``,
    ``required``, ``doc``); ``element_required`` / ``value_required`` change the flag of
    the field's list element or map value."""
    def edit(f: NestedField) -> list[NestedField]:
        if f.field_id != field_id:
            return [f]
        update = dict(changes)
        if "field_type" in update:
            update["field_type"] = T(update["field_type"])
        t = f.field_type
        if "element_required" in update:
            assert isinstance(t, ListType)
            flag = update.pop("element_required")
            update["field_type"] = ListType(t.element_id, t.element_type, flag)
        if "value_required" in update:
            assert isinstance(t, MapType)
            update["field_type"] = MapType(
                t.key_id, t.key_type, t.value_id, t.value_type, update.pop("value_required")
            )
        return [f.model_copy(update=update)]

    return _edited(s, edit)


def appended(s: Schema, parent_id: int | None, *fields: NestedField) -> Schema:
    """``s`` with ``fields`` added at the end of the top level (``parent_id`` None) or of the
    struct a field holds (itself, its list element's or its map value's)."""
    if parent_id is None:
        return Schema(*s.fields, *fields, identifier_field_ids=list(s.identifier_field_ids))

    def edit(f: NestedField) -> list[NestedField]:
        if f.field_id != parent_id:
            return [f]

        def grow(t: IcebergType) -> IcebergType:
            if isinstance(t, ListType):
                return ListType(t.element_id, grow(t.element_type), t.element_required)
            if isinstance(t, MapType):
                value = grow(t.value_type)
                return MapType(t.key_id, t.key_type, t.value_id, value, t.value_required)
            assert isinstance(t, StructType)
            return StructType(*t.fields, *fields)

        return [f.model_copy(update={"field_type": grow(f.field_type)})]

    return _edited(s, edit)


def reordered(s: Schema, parent_id: int | None, *order: int) -> Schema:
    """``s`` with the fields of one struct (top level, or the one a field holds) in the
    order of their IDs ``order``."""
    def sort(t: StructType) -> StructType:
        by_id = {f.field_id: f for f in t.fields}
        assert sorted(by_id) == sorted(order), (sorted(by_id), order)
        return StructType(*(by_id[i] for i in order))

    if parent_id is None:
        top = sort(StructType(*s.fields))
        return Schema(*top.fields, identifier_field_ids=list(s.identifier_field_ids))

    def edit(f: NestedField) -> list[NestedField]:
        if f.field_id != parent_id:
            return [f]

        def into(t: IcebergType) -> IcebergType:
            if isinstance(t, ListType):
                return ListType(t.element_id, into(t.element_type), t.element_required)
            if isinstance(t, MapType):
                value = into(t.value_type)
                return MapType(t.key_id, t.key_type, t.value_id, value, t.value_required)
            assert isinstance(t, StructType)
            return sort(t)

        return [f.model_copy(update={"field_type": into(f.field_type)})]

    return _edited(s, edit)


def identified(s: Schema, *field_ids: int) -> Schema:
    """``s`` with identifier fields ``field_ids``."""
    return Schema(*s.fields, identifier_field_ids=list(field_ids))
