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
    taken = set(taken_lower)

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
