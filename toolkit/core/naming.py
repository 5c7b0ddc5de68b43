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

from toolkit.core.types import EVOLVED_DOC_PREFIX, Shape


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

    def free(name: str) -> bool:
        return all(
            (name + ".element" * d).lower() not in taken for d in range(dim + 1)
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

    >>> taken = TakenNames()
    >>> taken.add("Rec.X")
    >>> sorted(taken.under(())), sorted(taken.under(("rec",))), sorted(taken.under(("x",)))
    (['rec.x'], ['x'], [])
    """

    def __init__(self) -> None:
        self._under: dict[str, set[str]] = {"": set()}

    def add(self, full_name: str) -> None:
        name = full_name.lower()
        self._under[""].add(name)
        dot = name.find(".")
        while dot >= 0:  # every dot ends a prefix, as ``startswith(prefix + ".")`` reads it
            self._under.setdefault(name[: dot + 1], set()).add(name[dot + 1 :])
            dot = name.find(".", dot + 1)

    def under(self, prefix: tuple[str, ...]) -> AbstractSet[str]:
        """The names below ``prefix`` (a struct's Iceberg full name), relative to it."""
        head = ".".join(prefix).lower() + "." if prefix else ""
        return self._under.get(head, frozenset())

    def claim(self, wanted: str, prefix: tuple[str, ...] = (), dim: int = 0) -> str:
        """The name a new column gets in the struct at ``prefix`` (:func:`free_name` of
        ``wanted`` against the names under it), now taken with its list elements' names
        (``name.element``...): the next column of the batch cannot take it.

        >>> taken = TakenNames()
        >>> taken.add("rec.tags")
        >>> taken.claim("Tags", ("rec",), dim=1), taken.claim("tags", ("rec",))
        ('Tags_2', 'tags_3')
        >>> sorted(taken.under(("rec",)))
        ['tags', 'tags_2', 'tags_2.element', 'tags_3']
        """
        name = free_name(wanted, self.under(prefix), dim)
        full = ".".join((*prefix, name))
        for d in range(dim + 1):
            self.add(full + ".element" * d)
        return name
