"""The types of the COALESCE view's columns (issue 28): ``view_types`` entries
(:func:`parse_view_type`), the type hints a table keeps (:func:`hinted_view_types`), the
fields a view has (:func:`view_paths`), and the SQL types of columns and targets, one
sqlglot tree per type, rendered per dialect.

>>> sql_type(parse_view_type("price", "decimal(10,2)")).sql("spark")
'DECIMAL(10, 2)'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from sqlglot import exp

from toolkit.core.batch.hints import HINTS_PROPERTY
from toolkit.core.values.conversions import LongTimestampUnit
from toolkit.core.values.types import Column, ColumnType, ListOf, MapOf, Opaque, Struct  # noqa: F401  (Column: the examples)
from toolkit.errors import ViewTypeError

__all__ = [
    "HINTS_PROPERTY",
    "HintLike",
    "Target",
    "array_of",
    "check_view_types",
    "column_sql_type",
    "hinted_view_types",
    "parse_view_type",
    "sql_type",
    "struct_type",
    "view_paths",
]

#: SQL types of the lattice types (and the other Iceberg primitives a column may have)
_SQL_TYPE: Final[dict[str, str]] = {
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "date": "date",
    "time": "time",
    "timestamp": "timestamptz",  # RULES 1: timestamps are instants (stored as timestamptz)
    "timestamptz": "timestamptz",
    "string": "text",
    "uuid": "uuid",
    "binary": "binary",
}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


@dataclass(frozen=True, slots=True)
class Target:
    """What a folded column reads as: a type (the lattice's names, ``decimal(P, S)``,
    ``int``, ``float``...), a list dimension and, for a timestamp read from longs, their
    epoch unit (``auto``: each long's magnitude, RULES 2)."""

    type: str
    dim: int = 0
    unit: LongTimestampUnit = "auto"

    def __str__(self) -> str:
        return self.type + "[]" * self.dim


def parse_view_type(path: str, text: str) -> Target:
    """A ``view_types`` entry: an Iceberg type name (``long``, ``string``,
    ``decimal(10,2)``, ``timestamp``...; ``timestamp[ms]`` reads longs as epoch ms).

    >>> parse_view_type("ts", "timestamp[s]"), parse_view_type("p", "decimal(10,2)")
    (Target(type='timestamp', dim=0, unit='s'), Target(type='decimal(10, 2)', dim=0, unit='auto'))
    >>> parse_view_type("q", "integer")
    Traceback (most recent call last):
    ...
    toolkit.errors.ViewTypeError: view_types: field 'q' cannot be read as 'integer'; ...
    """
    t = text.strip().lower()
    unit: LongTimestampUnit = "auto"
    m = re.fullmatch(r"(timestamptz|timestamp)\[(s|ms|us|ns)\]", t)
    if m:
        t, unit = m.group(1), m.group(2)  # type: ignore[assignment]
    if t == "timestamptz":
        t = "timestamp"
    d = _DECIMAL.match(t)
    if d:
        t = f"decimal({int(d.group(1))}, {int(d.group(2))})"
    elif t not in _SQL_TYPE or t in ("time", "uuid"):
        choices = "boolean, int, long, float, double, decimal(P,S), date, timestamp, " \
                  "timestamp[s|ms|us|ns], string, binary"
        raise ViewTypeError(f"view_types: field {path!r} cannot be read as {text!r}; "
                            f"choose one of {choices}")
    return Target(t, 0, unit)




class HintLike(Protocol):
    """A type hint as the options hold it (toolkit.core.batch.hints.Hint)."""

    @property
    def field(self) -> str: ...

    @property
    def text(self) -> str: ...


def hinted_view_types(
    view_types: Mapping[str, str] | None = None,
    hints: Iterable[HintLike] = (),
    properties: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The ``view_types`` a view reads with (issue 28: a hinted field reads as its hint's
    type): the hints a table keeps (its ``properties``), then the ``hints`` of the options,
    then ``view_types``; a later one wins for a field.

    >>> hinted_view_types({"q": "string"}, properties={HINTS_PROPERTY: '{"q": "long", "p":'
    ...                   ' "decimal(10, 2)"}'})
    {'q': 'string', 'p': 'decimal(10, 2)'}
    """
    out: dict[str, str] = {}
    kept = (properties or {}).get(HINTS_PROPERTY)
    if kept:
        try:
            loaded = json.loads(kept)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):  # a property another writer spoilt is not the view's
            out.update((str(k), str(v)) for k, v in loaded.items())
    out.update((h.field, h.text) for h in hints)
    out.update(view_types or {})
    return out


def view_paths(schema: Struct) -> set[str]:
    """The dotted path of every field of the view (a family's key, nested ones through
    records and lists of records): what ``view_types`` may name.

    >>> sorted(view_paths(Struct((Column(1, "a", Struct((Column(2, "b", "long"),))),
    ...                           Column(3, "a_string", "string", "upsolver_evolved_from:a")))))
    ['a', 'a.b']
    """
    out: set[str] = set()

    def walk(struct: Struct, prefix: str) -> None:
        for col in struct.fields:
            path = prefix + col.family
            out.add(path)
            if isinstance(col.leaf, Struct):
                walk(col.leaf, path + ".")

    walk(schema, "")
    return out


def check_view_types(schema: Struct, view_types: Mapping[str, str] | None) -> None:
    """Refuse a ``view_types`` entry that names no field of the view (a misspelt one would
    otherwise change nothing, silently), naming it."""
    paths = view_paths(schema)
    for path in view_types or {}:
        if path not in paths:
            near = sorted(paths)[:12]
            raise ViewTypeError(f"view_types: the view has no field {path!r}; its fields "
                                f"are {', '.join(repr(p) for p in near)}"
                                f"{'...' if len(paths) > 12 else ''}")


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def array_of(t: exp.DataType, dim: int) -> exp.DataType:
    for _ in range(dim):
        t = exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[t], nested=True)
    return t


def _leaf_sql(name: str) -> exp.DataType | None:
    d = _DECIMAL.match(name)
    if d:
        return exp.DataType.build(f"decimal({d.group(1)}, {d.group(2)})")
    if name.startswith("fixed"):
        return exp.DataType.build("binary")
    known = _SQL_TYPE.get(name)
    return None if known is None else exp.DataType.build(known)


def sql_type(target: Target) -> exp.DataType:
    """The SQL type a folded column reads as."""
    leaf = _leaf_sql(target.type)
    assert leaf is not None, target
    return array_of(leaf, target.dim)


def struct_type(names: list[str], types: list[exp.DataType]) -> exp.DataType:
    return exp.DataType(
        this=exp.DataType.Type.STRUCT,
        expressions=[exp.ColumnDef(this=_ident(n), kind=t) for n, t in zip(names, types,
                                                                            strict=True)],
        nested=True,
    )


def column_sql_type(t: ColumnType) -> exp.DataType | None:
    """The SQL type of a stored column's type (None: one the toolkit has no name for)."""
    if isinstance(t, ListOf):
        inner = column_sql_type(t.element)
        return None if inner is None else array_of(inner, 1)
    if isinstance(t, Struct):
        types = [column_sql_type(c.type) for c in t.fields]
        if any(x is None for x in types):
            return None
        return struct_type([c.name for c in t.fields], types)  # type: ignore[arg-type]
    if isinstance(t, MapOf):
        k, v = column_sql_type(t.key), column_sql_type(t.value)
        if k is None or v is None:
            return None
        return exp.DataType(this=exp.DataType.Type.MAP, expressions=[k, v], nested=True)
    if isinstance(t, Opaque):
        return None
    return _leaf_sql(t)
