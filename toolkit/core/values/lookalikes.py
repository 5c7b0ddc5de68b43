"""Names that look alike: two fields of one struct whose names read the same to a person
(equal after NFKC normalisation and case folding, or differing only by characters that draw
nothing), such as ``café`` composed and decomposed, or ``admin`` and ``ad\\u200bmin``. Each
is its own field and column (RULES 4 keeps keys apart); the plan says so in a warning, so
a reviewer does not approve two columns believing them one.

>>> from toolkit.core.values.types import Column
>>> after = Struct((Column(1, "caf\\u00e9", "long"), Column(2, "cafe\\u0301", "long")))
>>> print(lookalike_warnings(Struct(), after)[0])
names that look alike: "caf\\xe9" and "cafe\\u0301" are different fields, which read the \
same (they differ only by Unicode form, case or invisible characters)
"""

from __future__ import annotations

from collections.abc import Iterator

from toolkit.core.values.types import ColumnType, ListOf, Struct
from toolkit.core.values.wording import and_join, lookalike_key, visible

__all__ = ["lookalike_warnings"]


def _structs(t: ColumnType, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                         Struct]]:
    """Every struct inside ``t`` by its Iceberg full name (list elements are ``element``)."""
    if isinstance(t, ListOf):
        yield from _structs(t.element, (*prefix, "element"))
    elif isinstance(t, Struct):
        yield prefix, t
        for c in t.fields:
            yield from _structs(c.type, (*prefix, c.name))


def _shown(names: list[str]) -> list[str]:
    """The names as a warning quotes them: made visible, or, where that still shows two
    alike, with every character beyond ASCII as its code (``caf\\xe9``)."""
    shown = [visible(n) for n in names]
    if len({lookalike_key(s) for s in shown}) < len(shown):
        shown = [n.encode("ascii", "backslashreplace").decode("ascii") for n in names]
    return ['"' + s + '"' for s in shown]


def lookalike_warnings(before: Struct, after: Struct) -> tuple[str, ...]:
    """A sentence per group of fields of one struct of ``after`` whose names look alike,
    where at least one of them is new since ``before`` (an old pair was told already)."""
    old = {prefix: {c.name for c in s.fields} for prefix, s in _structs(before)}
    out = []
    for prefix, struct in _structs(after):
        families: dict[str, list[str]] = {}
        for c in struct.fields:
            group = families.setdefault(lookalike_key(c.family), [])
            if c.family not in group:
                group.append(c.family)
        known = old.get(prefix, set())
        for names in families.values():
            if len(names) < 2 or all(n in known for n in names):
                continue
            where = f" in {visible('.'.join(prefix))}" if prefix else ""
            out.append(
                f"names that look alike{where}: {and_join(_shown(names))} are different "
                "fields, which read the same (they differ only by Unicode form, case or "
                "invisible characters)")
    return tuple(out)
