"""The vocabulary of the engine: observed kinds of values and the table schema model.

The core keeps its own small schema model (frozen dataclasses with tuples) so that
it imports no PyIceberg; ``toolkit.iceberg.schema`` converts it to and from
``pyiceberg.schema.Schema``.

>>> Shape("long", 1).suffix
'_array_long'
>>> Column(1, "a", ListOf(2, "long")).shape
Shape(type='long', dim=1)
>>> type_to_str(MapOf(2, "string", 3, "long"))
'map<string, long>'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple, TypeAlias, get_args

#: Primitive types of the lattice (RULES 2), by their Iceberg names. JSON brings the first
#: six; typed sources (RULES 1) also decimals and binary, and under the ``widen`` policy
#: their own int and float (docs/rules.md, typed values).
Primitive: TypeAlias = Literal[
    "boolean", "long", "double", "date", "timestamp", "string", "decimal", "binary", "int",
    "float",
]
PRIMITIVES: tuple[Primitive, ...] = get_args(Primitive)

#: What a value or a column holds at its leaves: a primitive, or a record (struct).
TypeName: TypeAlias = Literal[
    "boolean", "long", "double", "date", "timestamp", "string", "decimal", "binary", "int",
    "float", "record",
]
RECORD: Literal["record"] = "record"

#: The Iceberg type of a column evolution creates for decimal values: every decimal with
#: at most 20 integer digits and 18 fraction digits fits exactly (docs/rules.md); others
#: are observed as text, as integers beyond 64 bits are (RULES 1).
DECIMAL_DIGITS: Final = (38, 18)
DECIMAL_TYPE: Final = "decimal({}, {})".format(*DECIMAL_DIGITS)

#: The Iceberg primitive type written for each lattice type by evolution. Timestamps are
#: instants (JSON "Z"/offset strings, epoch numbers), so they are stored as ``timestamptz``.
ICEBERG_TYPE_OF: dict[Primitive, str] = {
    "boolean": "boolean",
    "long": "long",
    "double": "double",
    "date": "date",
    "timestamp": "timestamptz",
    "string": "string",
    "decimal": DECIMAL_TYPE,
    "binary": "binary",
    "int": "int",
    "float": "float",
}

#: Iceberg primitive types the upsolver policy routes into, and their lattice
#: type. Other declared types (int, float, decimals of another precision or scale, uuid,
#: map...) are opaque to it: values for such a family get their own suffixed columns
#: (documented in docs/rules.md), except JSON objects that fit a map (map_routing).
LATTICE_TYPE_OF: dict[str, Primitive] = {
    "boolean": "boolean",
    "long": "long",
    "double": "double",
    "date": "date",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",
    "string": "string",
    DECIMAL_TYPE: "decimal",
    "binary": "binary",
}


class Kind(NamedTuple):
    """The observed kind of one non-null value (RULES 1).

    ``type`` is None for an array with no typed leaf (``[]``, ``[[null]]``).
    ``lossy`` names the lattice types this particular value cannot be converted to
    exactly although its type is narrower (RULES 2, per-value exactness).
    ``mixed``: an array of records *and* primitive leaves (``[{"k": 1}, "a"]``, type
    ``record``) has here the widest type of its primitive leaves, which ``lossy`` is about;
    it is two :attr:`parts`, an array of records and one of primitives (docs/rules.md).

    >>> Kind(RECORD, 1, frozenset(), "string").parts
    (Kind(type='record', dim=1, lossy=frozenset()), Kind(type='string', dim=1, lossy=frozenset()))
    """

    type: TypeName | None
    dim: int
    lossy: frozenset[str] = frozenset()
    mixed: TypeName | None = None

    def __repr__(self) -> str:  # ``mixed`` only where there is one
        extra = "" if self.mixed is None else f", mixed={self.mixed!r}"
        return f"Kind(type={self.type!r}, dim={self.dim!r}, lossy={self.lossy!r}{extra})"

    @property
    def shape(self) -> Shape:
        return Shape(self.type, self.dim, self.mixed)

    @property
    def parts(self) -> tuple[Kind, ...]:
        """The kinds planning sees: a mixed array's records and its primitives, at the same
        dimension; any other kind is itself."""
        if self.mixed is None:
            return (self,)
        return (Kind(RECORD, self.dim), Kind(self.mixed, self.dim, self.lossy))


class Shape(NamedTuple):
    """A type and an array dimension: what a column holds, or a kind without its flags.
    ``mixed`` (never a column's): the primitive type of an array mixing records and
    primitives, shown ``(record|string)[]``."""

    type: TypeName | None
    dim: int
    mixed: TypeName | None = None

    def __repr__(self) -> str:  # ``mixed`` only where there is one
        extra = "" if self.mixed is None else f", mixed={self.mixed!r}"
        return f"Shape(type={self.type!r}, dim={self.dim!r}{extra})"

    @property
    def suffix(self) -> str:
        """The column-name suffix of RULES 4: ``_`` + dimension part + type."""
        dim_part = "" if self.dim == 0 else "array_" if self.dim == 1 else f"array{self.dim}_"
        return f"_{dim_part}{self.type}"

    def __str__(self) -> str:
        leaf = f"({self.type}|{self.mixed})" if self.mixed else self.type or "empty"
        return f"{leaf}{'[]' * self.dim}"


@dataclass(frozen=True, slots=True)
class ListOf:
    """An Iceberg list; ``element_id`` is the field ID of its element, which may be
    required (``list<required double>``: no null elements); evolution creates optional ones."""

    element_id: int
    element: ColumnType
    element_required: bool = False

    def __repr__(self) -> str:  # the flag only where it is set
        flag = ", element_required=True" if self.element_required else ""
        return f"ListOf(element_id={self.element_id!r}, element={self.element!r}{flag})"


@dataclass(frozen=True, slots=True)
class Struct:
    """An Iceberg struct: an ordered tuple of columns. The table schema is one too."""

    fields: tuple[Column, ...] = ()

    def by_name(self) -> dict[str, Column]:
        return {c.name: c for c in self.fields}


@dataclass(frozen=True, slots=True)
class MapOf:
    """An Iceberg map; ``key_id`` and ``value_id`` are the field IDs of its key and value.

    The ``widen`` policy writes into a map (RULES 5: its values widen by the matrix); the
    upsolver policy writes into a ``map<string, V>`` the JSON objects whose values fit V
    (``toolkit.core.batch.map_routing``) and never changes its type."""

    key_id: int
    key: ColumnType
    value_id: int
    value: ColumnType
    value_required: bool = False


@dataclass(frozen=True, slots=True)
class Opaque:
    """A declared type the core does not model (maps are :class:`MapOf`), kept as the
    catalog gave it. ``native`` keeps the catalog's own type object so a schema round-trips
    unchanged; ``ids`` are the field IDs inside it, so new IDs never reuse them."""

    text: str
    ids: tuple[int, ...] = ()
    native: object = field(default=None, compare=False, hash=False)


#: An Iceberg primitive type name (``"long"``, ``"timestamptz"``, ``"decimal(9, 2)"``...),
#: a list, a struct or a map.
ColumnType: TypeAlias = "str | ListOf | Struct | MapOf | Opaque"

EVOLVED_DOC_PREFIX = "upsolver_evolved_from:"


@dataclass(frozen=True, slots=True)
class Column:
    """One field of a struct, tracked by its Iceberg field ID. Columns evolution creates are
    always optional (RULES 3.5); a declared column may be required.

    ``initial_default`` and ``write_default`` are an Iceberg v3 field's defaults (the value
    rows written before the field existed read, and the value writers fill in), kept
    exactly as the catalog gave them so a schema written back is unchanged."""

    id: int
    name: str
    type: ColumnType
    doc: str | None = field(default=None)
    required: bool = False
    initial_default: object = field(default=None, repr=False)
    write_default: object = field(default=None, repr=False)

    @property
    def shape(self) -> Shape:
        """Leaf type and dimension; opaque declared types have type None."""
        dim, leaf = 0, self.type
        while isinstance(leaf, ListOf):
            dim, leaf = dim + 1, leaf.element
        if isinstance(leaf, Struct):
            return Shape(RECORD, dim)
        if isinstance(leaf, (MapOf, Opaque)):
            return Shape(None, dim)
        return Shape(LATTICE_TYPE_OF.get(leaf), dim)

    @property
    def leaf(self) -> ColumnType:
        """The type under all list levels."""
        leaf = self.type
        while isinstance(leaf, ListOf):
            leaf = leaf.element
        return leaf

    @property
    def evolved_from(self) -> str | None:
        """The source field this column was created for by evolution (RULES 4), if any."""
        if self.doc is not None and self.doc.startswith(EVOLVED_DOC_PREFIX):
            return self.doc[len(EVOLVED_DOC_PREFIX) :]
        return None

    @property
    def family(self) -> str:
        """The source key whose family this column belongs to (RULES 3, 4)."""
        return self.evolved_from if self.evolved_from is not None else self.name


def iter_ids(t: ColumnType) -> list[int]:
    """Every field ID used inside a type (list elements and nested fields)."""
    out: list[int] = []
    if isinstance(t, ListOf):
        out.append(t.element_id)
        out.extend(iter_ids(t.element))
    elif isinstance(t, Struct):
        for c in t.fields:
            out.append(c.id)
            out.extend(iter_ids(c.type))
    elif isinstance(t, MapOf):
        out.append(t.key_id)
        out.extend(iter_ids(t.key))
        out.append(t.value_id)
        out.extend(iter_ids(t.value))
    elif isinstance(t, Opaque):
        out.extend(t.ids)
    return out


def type_to_str(t: ColumnType) -> str:
    """A compact rendering: ``list<struct<a: long>>``; what is required says so
    (``list<required double>``, ``struct<id: required long>``), as :func:`parse_type` reads.

    >>> type_to_str(MapOf(1, "string", 2, ListOf(3, "double", True), value_required=True))
    'map<string, required list<required double>>'
    """
    if isinstance(t, ListOf):
        return f"list<{_required(t.element_required)}{type_to_str(t.element)}>"
    if isinstance(t, Struct):
        return "struct<" + ", ".join(
            f"{c.name}: {_required(c.required)}{type_to_str(c.type)}" for c in t.fields
        ) + ">"
    if isinstance(t, MapOf):
        value = f"{_required(t.value_required)}{type_to_str(t.value)}"
        return f"map<{type_to_str(t.key)}, {value}>"
    if isinstance(t, Opaque):
        return t.text
    return t


def _required(required: bool) -> str:
    return "required " if required else ""


# --- Iceberg type strings --------------------------------------------------------------------

_PRIMITIVE_NAMES: Final = frozenset(
    {
        "boolean", "int", "long", "float", "double", "date", "time", "timestamp",
        "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "unknown",
    }
)  # fmt: skip
_DECIMAL: Final = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED: Final = re.compile(r"fixed\[\s*(\d+)\s*\]")


def parse_type(text: str) -> ColumnType:
    """An Iceberg type string (``"long"``, ``"decimal(9,2)"``, ``"list<string>"``,
    ``"struct<a: long, b: list<int>>"``, ``"map<string, struct<lat: double>>"``) in the
    core's model; field IDs are 0 until the type is added to a table. A list element, map
    value or struct field written ``required`` is required (``list<required long>``,
    ``struct<id: required long>``); otherwise optional.

    >>> parse_type("struct<a: long, b: list<decimal(9,2)>>")
    Struct(fields=(Column(id=0, name='a', type='long', doc=None, required=False), \
Column(id=0, name='b', type=ListOf(element_id=0, element='decimal(9, 2)'), doc=None, \
required=False)))
    """
    parser = _TypeParser(text)
    t = parser.type()
    parser.end()
    return t


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def error(self, why: str) -> ValueError:
        return ValueError(f"invalid Iceberg type {self.text!r} at position {self.pos}: {why}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def take(self, token: str) -> bool:
        self.skip()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise self.error(f"expected {token!r}")

    def end(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            raise self.error("unexpected text after the type")

    def type(self) -> ColumnType:
        self.skip()
        if self.take("list<"):
            required = self.required()
            element = self.type()
            self.expect(">")
            return ListOf(0, element, required)
        if self.take("struct<"):
            fields: list[Column] = []
            if not self.take(">"):
                while True:
                    fields.append(self.field())
                    if self.take(">"):
                        break
                    self.expect(",")
            return Struct(tuple(fields))
        if self.take("map<"):
            key = self.type()
            self.expect(",")
            required = self.required()
            value = self.type()
            self.expect(">")
            return MapOf(0, key, 0, value, required)
        match = re.compile(r"[a-z_]+(\([^)]*\)|\[[^\]]*\])?").match(self.text, self.pos)
        if match is None:
            raise self.error("expected a type name")
        self.pos = match.end()
        word = match[0]
        if word in _PRIMITIVE_NAMES:
            return word
        if (d := _DECIMAL.fullmatch(word)) is not None:
            precision, scale = int(d[1]), int(d[2])
            if not 0 < precision <= 38 or scale > precision:
                raise self.error(f"decimal({precision}, {scale}) is out of range")
            return f"decimal({precision}, {scale})"
        if (f := _FIXED.fullmatch(word)) is not None:
            return f"fixed[{int(f[1])}]"
        raise self.error(f"unknown type {word!r}")

    def required(self) -> bool:
        """Whether a ``required`` (or ``optional``) word comes first; skips it."""
        self.skip()
        for word, required in (("required ", True), ("optional ", False)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return required
        return False

    def field(self) -> Column:
        self.skip()
        colon = self.text.find(":", self.pos)
        if colon < 0:
            raise self.error("expected 'name: type'")
        name = self.text[self.pos : colon].strip()
        if not name:
            raise self.error("a struct field needs a name")
        self.pos = colon + 1
        required = self.required()
        return Column(0, name, self.type(), required=required)


def as_type(t: ColumnType | str) -> ColumnType:
    return parse_type(t) if isinstance(t, str) else t
