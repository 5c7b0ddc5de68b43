"""RULES 4: names and docs of the columns evolution creates.

>>> suffixed("coordinates", Shape("long", 3))
'coordinates_array3_long'
>>> free_name("name", {"name", "name_2"})
'name_3'
>>> evolved_doc("size")
'upsolver_evolved_from:size'
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from toolkit.core.values.types import (
    EVOLVED_DOC_PREFIX,
    ColumnType,
    ListOf,
    MapOf,
    Shape,
    Struct,
)


def suffixed(key: str, shape: Shape) -> str:
    """``key`` + ``_`` + dimension part + type (``a_array_string``, ``x_array3_long``)."""
    return key + shape.suffix


def evolved_doc(key: str) -> str:
    """The Iceberg field doc every column created by evolution carries."""
    return EVOLVED_DOC_PREFIX + key


def free_name(wanted: str, taken_lower: Iterable[str], dim: int = 0) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3``... : the first name not taken.

    Names collide case-insensitively (Spark, DuckDB, Trino and Athena resolve names that
    way), so ``taken_lower`` holds lower-cased names. Iceberg also names a list's element
    ``<name>.element``, so a column of dimension ``dim`` needs those names free too.

    >>> free_name("a", {"a.element"}, dim=1)
    'a_2'
    >>> free_name("", set())
    '_2'
    """
    # a set is read as it is: copying it for each new column would make 5,000 new
    # columns quadratic
    taken = taken_lower if isinstance(taken_lower, AbstractSet) else set(taken_lower)
    return _first_free(wanted, (taken,), dim)


def _first_free(wanted: str, takens: tuple[AbstractSet[str], ...], dim: int) -> str:
    def free(name: str) -> bool:
        return all(
            (name + ".element" * d).lower() not in taken
            for taken in takens
            for d in range(dim + 1)
        )

    # An empty key cannot name a column (Iceberg's Parquet writer refuses empty names):
    # numbered like a collision, ``_2``, its doc keeps the key.
    if wanted and free(wanted):
        return wanted
    n = 2
    while not free(f"{wanted}_{n}"):
        n += 1
    return f"{wanted}_{n}"


class TakenNames:
    """The lower-cased Iceberg full names in use, indexed under every struct prefix they lie
    below: ``a.b.c`` is ``a.b.c`` under ``""``, ``b.c`` under ``"a."`` and ``c`` under
    ``"a.b."``. A new column's name is checked against the names under its struct's
    prefix, deeper ones included (RULES 4: a key ``b.c`` collides with a nested
    ``b``.``c``), and reading them is a look-up, not a pass over every name of the table:
    5,000 new keys would make that quadratic.

    Iceberg's name index also holds short names: a field inside a list of structs or a
    map's struct values is found without the ``element`` / ``value`` step (``dot.key`` for
    ``dot.element.key``), and adding a column whose full name is one of them fails ("Cannot
    add column, name already exists"). So both forms are taken, and a struct's names are
    checked under its short name too (RULES 4).

    >>> taken = TakenNames()
    >>> taken.add("Rec.X")
    >>> sorted(taken.under(())), sorted(taken.under(("rec",))), sorted(taken.under(("x",)))
    (['rec.x'], ['x'], [])
    """

    def __init__(self) -> None:
        self._under: dict[str, set[str]] = {"": set()}
        # lower-cased ``full.`` -> ``short.`` prefix of every struct below a list or map
        self._short: dict[str, str] = {}

    def add(self, full_name: str) -> None:
        name = full_name.lower()
        self._under[""].add(name)
        dot = name.find(".")
        while dot >= 0:  # every dot ends a prefix, as ``startswith(prefix + ".")`` reads it
            self._under.setdefault(name[: dot + 1], set()).add(name[dot + 1 :])
            dot = name.find(".", dot + 1)

    def add_type(self, prefix: tuple[str, ...], t: ColumnType) -> None:
        """Every name in Iceberg's index of the fields inside ``t``, the struct at full name
        ``prefix`` (a table schema at ``()``), short names included.

        >>> from toolkit.core.values.types import Column
        >>> taken = TakenNames()
        >>> taken.add_type((), Struct((Column(1, "dot", ListOf(2, Struct((
        ...     Column(3, "key", "boolean"),)))),)))
        >>> sorted(taken.under(()))
        ['dot', 'dot.element', 'dot.element.key', 'dot.key']
        """
        head = _head(prefix)
        self._nested(head, self._short.get(head, head), t)

    def _nested(self, full: str, short: str, t: ColumnType) -> None:
        # Iceberg's IndexByName: a list element or map value that is a struct is left out
        # of its fields' short names; any other element, value or key is not.
        if isinstance(t, Struct):
            if full != short:
                self._short[full] = short
            for c in t.fields:
                self._field(full, short, c.name, c.type, inner=False)
        elif isinstance(t, ListOf):
            self._field(full, short, "element", t.element, inner=True)
        elif isinstance(t, MapOf):
            self._field(full, short, "key", t.key, inner=False)
            self._field(full, short, "value", t.value, inner=True)

    def _field(self, full: str, short: str, name: str, t: ColumnType, *, inner: bool) -> None:
        self.add(full + name)
        self.add(short + name)
        skipped = inner and isinstance(t, Struct)
        self._nested(f"{full}{name}.".lower(), short if skipped else f"{short}{name}.".lower(), t)

    def under(self, prefix: tuple[str, ...]) -> AbstractSet[str]:
        """The names below ``prefix`` (a struct's Iceberg full name), relative to it."""
        return self._under.get(_head(prefix), frozenset())

    def short_of(self, prefix: tuple[str, ...]) -> str:
        """The start of the short names below the struct at full name ``prefix`` (``dot.``
        for ``dot.element``), as :meth:`holder` looks them up; the full one if it has none."""
        head = _head(prefix)
        return self._short.get(head, head)

    def holder(self, name: str, prefix: tuple[str, ...] = ()) -> str | None:
        """The name in Iceberg's index (full, or short) that a field ``name`` in the struct
        at full name ``prefix`` would share with a field already there, or None.

        >>> from toolkit.core.values.types import Column
        >>> taken = TakenNames()
        >>> taken.add_type((), Struct((Column(1, "dot.key", "long"),)))
        >>> taken.add_type((), Struct((Column(2, "dot", ListOf(3, Struct())),)))
        >>> taken.holder("key", ("dot", "element")), taken.holder("k", ("dot", "element"))
        ('dot.key', None)
        """
        head = _head(prefix)
        for h in (head, self._short.get(head, head)):
            if name.lower() in self._under.get(h, frozenset()):
                return h + name.lower()
        return None

    def claim(
        self, wanted: str, prefix: tuple[str, ...] = (), dim: int = 0, *, record: bool = False
    ) -> str:
        """The name a new column gets in the struct at ``prefix`` (:func:`free_name` of
        ``wanted`` against the names under it, and under its short name), now taken with
        its list elements' names (``name.element``...): the next column of the batch cannot
        take it. ``record``: the column holds structs, whose fields are claimed next, under
        its short name (without the last ``element``).

        >>> taken = TakenNames()
        >>> taken.add("rec.tags")
        >>> taken.claim("Tags", ("rec",), dim=1), taken.claim("tags", ("rec",))
        ('Tags_2', 'tags_3')
        >>> sorted(taken.under(("rec",)))
        ['tags', 'tags_2', 'tags_2.element', 'tags_3']
        >>> taken.claim("dot", dim=1, record=True), taken.claim("key", ("dot", "element"))
        ('dot', 'key')
        >>> taken.claim("dot.key")
        'dot.key_2'
        """
        head = _head(prefix)
        short = self._short.get(head, head)
        takens: tuple[AbstractSet[str], ...] = (self._under.get(head, frozenset()),)
        if short != head:
            takens += (self._under.get(short, frozenset()),)
        name = _first_free(wanted, takens, dim)
        for d in range(dim + 1):
            self.add(head + name + ".element" * d)
            self.add(short + name + ".element" * d)
        inner = f"{head}{name}{'.element' * dim}.".lower()
        inner_short = f"{short}{name}{'.element' * max(dim - 1, 0)}.".lower()
        if record and inner != inner_short:
            self._short[inner] = inner_short
        return name


def _head(prefix: tuple[str, ...]) -> str:
    """``prefix`` as the lower-cased start of the full names below it (``a.b.``)."""
    return ".".join(prefix).lower() + "." if prefix else ""


def shared_index_names(struct: Struct) -> dict[str, frozenset[int]]:
    """The lower-cased names that Iceberg's name index of ``struct`` would give to more
    than one field, full or short (``dot.key`` for ``dot.element.key`` beside a column
    ``dot.key``), with those fields' IDs. Iceberg refuses to add a column under such a
    name (RULES 4: the planners never make one).

    >>> from toolkit.core.values.types import Column
    >>> shared_index_names(Struct((
    ...     Column(1, "dot", ListOf(2, Struct((Column(3, "key", "boolean"),)))),
    ...     Column(4, "Dot.Key", "boolean"),
    ... )))
    {'dot.key': frozenset({3, 4})}
    """
    ids: dict[str, set[int]] = {}

    def field(full: str, short: str, name: str, field_id: int, t: ColumnType, inner: bool) -> None:
        for n in {full + name, short + name}:
            ids.setdefault(n.lower(), set()).add(field_id)
        skipped = inner and isinstance(t, Struct)
        nested(f"{full}{name}.", short if skipped else f"{short}{name}.", t)

    def nested(full: str, short: str, t: ColumnType) -> None:
        # as TakenNames._nested: Iceberg's IndexByName
        if isinstance(t, Struct):
            for c in t.fields:
                field(full, short, c.name, c.id, c.type, False)
        elif isinstance(t, ListOf):
            field(full, short, "element", t.element_id, t.element, True)
        elif isinstance(t, MapOf):
            field(full, short, "key", t.key_id, t.key, False)
            field(full, short, "value", t.value_id, t.value, True)

    nested("", "", struct)
    return {n: frozenset(i) for n, i in ids.items() if len(i) > 1}
