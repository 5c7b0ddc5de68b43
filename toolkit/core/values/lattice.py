"""RULES 2: the primitive lattice, as one table of data.

``a <= b`` means every value of type ``a`` converts exactly into type ``b``. The
default table is the project's reading of the Upsolver reference; a stricter one is
another table, not a fork of the code.

>>> UPSOLVER.widest("long", "double")
'double'
>>> UPSOLVER.widest("boolean", "date")   # both convert to long, yet the answer is string
'string'
>>> UPSOLVER.widest_of(["boolean", "long", "date"])  # long is wider than both others
'long'
>>> STRICT.leq("timestamp", "long")
False
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from toolkit.core.values.types import PRIMITIVES, RECORD, Kind, Primitive, TypeName


@dataclass(frozen=True)
class Lattice:
    """A partial order over the primitives, given by its covering edges."""

    name: str
    edges: tuple[tuple[Primitive, Primitive], ...]
    _up: dict[str, frozenset[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # RULES 2: "string is wider than everything": every type reaches string.
        up: dict[str, set[str]] = {p: {p, "string"} for p in PRIMITIVES}
        changed = True
        for a, b in self.edges:
            up[a].add(b)
        while changed:  # transitive closure; the table is tiny
            changed = False
            for a in PRIMITIVES:
                grown = set().union(*(up[b] for b in up[a]))
                if grown - up[a]:
                    up[a] |= grown
                    changed = True
        object.__setattr__(self, "_up", {p: frozenset(s) for p, s in up.items()})

    def leq(self, a: str, b: str) -> bool:
        """True when every value of type ``a`` converts exactly into type ``b``."""
        return b in self._up.get(a, ())

    def up(self, a: str) -> frozenset[str]:
        """Every type that ``a`` converts into, ``a`` included."""
        return self._up.get(a, frozenset())

    def widest(self, a: Primitive, b: Primitive) -> Primitive:
        """RULES 2: ``b`` when ``a <= b``, ``a`` when ``b <= a``, else string.

        Deliberately not a least upper bound (boolean and date both convert to long,
        yet their common denominator is string).
        """
        if self.leq(a, b):
            return b
        if self.leq(b, a):
            return a
        return "string"

    def widest_of(self, types: Iterable[Primitive]) -> Primitive:
        """RULES 2 over a set: the type every other one converts into, else string.

        Folding :meth:`widest` pairwise would depend on the order (``boolean, date, long``
        gives string, ``boolean, long, date`` gives long); this does not.
        """
        distinct = set(types)
        for t in distinct:
            if all(self.leq(o, t) for o in distinct):
                return t
        return "string"

    def fits(self, kind: Kind, target: TypeName | None) -> bool:
        """Whether a value of ``kind`` converts exactly into ``target`` (dimensions aside)."""
        if kind.type is None:  # an array with no typed leaf fits any element type
            return True
        if kind.type == RECORD or target == RECORD or target is None:
            return kind.type == target
        return self.leq(kind.type, target) and target not in kind.lossy

    def widest_kind(self, kinds: Iterable[Kind]) -> Kind | None:
        """The widest of a set of kinds, honouring per-value exactness (RULES 2).

        The result is the kind every other one fits into exactly; failing that, string (a
        value that cannot reach a type exactly counts as non-convertible). Arrays with no
        typed leaf fit anything. Records beside primitives have no widest: None. The
        dimension is the largest; ``lossy`` keeps what the members cannot reach exactly.
        None for an empty set.
        """
        ks = set(kinds)
        if not ks:
            return None
        dim = max(k.dim for k in ks)
        typed = {k for k in ks if k.type is not None}
        if not typed:
            return Kind(None, dim)
        if any(k.type == RECORD for k in typed):
            return Kind(RECORD, dim) if all(k.type == RECORD for k in typed) else None
        for t in {k.type for k in typed}:
            if all(self.fits(k, t) for k in typed):
                assert t is not None
                lossy = frozenset().union(*(k.lossy for k in typed)) & self.up(t)
                return Kind(t, dim, lossy)
        return Kind("string", dim)


#: Typed sources' own types (RULES 1): decimals and binary reach string only (binary per
#: value: bytes that are UTF-8 text); int and float, which only the ``widen`` policy
#: observes, reach long and double, so its arrays of both take the wider element type.
_TYPED: tuple[tuple[Primitive, Primitive], ...] = (("int", "long"), ("float", "double"))

#: The project's reading of the Upsolver table (RULES 2).
UPSOLVER = Lattice(
    "upsolver",
    (
        ("boolean", "long"),
        ("long", "double"),
        ("double", "string"),
        ("date", "timestamp"),
        ("timestamp", "long"),
        *_TYPED,
    ),
)

#: A stricter reading: temporal types are incompatible with numbers.
STRICT = Lattice(
    "strict",
    (
        ("boolean", "long"),
        ("long", "double"),
        ("double", "string"),
        ("date", "timestamp"),
        ("timestamp", "string"),
        *_TYPED,
    ),
)
