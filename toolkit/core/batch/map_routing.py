"""RULES 3 for a declared map column under the ``upsolver`` policy (docs/rules.md, *Maps
under automatic evolution*): a JSON object arriving for a ``map<string, V>`` column is a
value of that column when each of its values is compatible with V (RULES 3: type <= V,
dimension <= V's, exact for that value, RULES 2), and is written into the map (RULES 3.1).
The planner asks :func:`batch_fits` of a whole batch (RULES 3.3: a batch whose objects
all fit needs no record column for them); the router asks :func:`object_fits` of each
object, which gives the same answer for every object of such a batch and never depends on
the order of records or on how a batch is split.

>>> from toolkit.core.batch.observe import Classifier
>>> from toolkit.core.batch.options import Options
>>> col = Column(1, "m", MapOf(2, "string", 3, "double"))
>>> lattice, kind = Options().lattice, Classifier(Options()).kind
>>> object_fits(lattice, col, {"a": 1, "b": 2.5}, kind), object_fits(lattice, col, {"a": "x"}, kind)
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.observed import Observed, ObservedField
from toolkit.core.values.families import accepts, families
from toolkit.core.values.types import RECORD, Column, Kind, MapOf, Struct

#: RULES 1: the kind of one value (None for null)
if TYPE_CHECKING:
    from toolkit.core.values.lattice import Lattice


KindOf = Callable[[Any], Kind | None]

#: the kind of a JSON object at the top of a map column's family
OBJECT = Kind(RECORD, 0)


def map_value_column(col: Column) -> Column | None:
    """The map's value as a column a JSON object's values are judged against, or None when
    the column does not take objects: a map under list levels, a key other than string
    (JSON keys are strings), a required value (a null must be writable), or a value type
    this policy does not route into (a map, an opaque type, a list of records)."""
    t = col.type
    if not isinstance(t, MapOf) or t.key != "string" or t.value_required:
        return None
    value = Column(t.value_id, "value", t.value)
    shape = value.shape
    if shape.type is None or (shape.type == RECORD and not isinstance(t.value, Struct)):
        return None
    return value


def _record_members(members: list[Column], dim: int) -> list[Column]:
    """The record columns a record of dimension ``dim`` goes into (RULES 3.4)."""
    return [c for c in members if c.shape.type == RECORD and c.shape.dim >= dim]


# --- a batch, from its observation (a partition summary as well) --------------------------


def batch_fits(lattice: Lattice, col: Column, fobs: ObservedField) -> bool:
    """Whether every JSON object of a batch's ``fobs`` (for ``col``'s family) fits ``col``."""
    value = map_value_column(col)
    if value is None or OBJECT not in fobs.counts:
        return False
    return all(
        _kind_fits(lattice, [value], k, f)
        for f in fobs.nested(0).fields.values()
        for k in f.counts
    )


def outside_maps(
    lattice: Lattice, members: list[Column], fobs: ObservedField, kinds: list[Kind]
) -> list[Kind]:
    """``kinds`` of a family without its JSON objects when a map column of the family takes
    them all (RULES 3.3: compatible with an existing column, so no new column for them)."""
    if OBJECT in kinds and any(batch_fits(lattice, c, fobs) for c in members):
        return [k for k in kinds if k != OBJECT]
    return kinds


def _kind_fits(lattice: Lattice, members: list[Column], k: Kind, f: ObservedField) -> bool:
    """RULES 3.3: values of kind ``k`` need no new column among ``members``."""
    for p in k.parts:
        if p.type != RECORD:
            if not any(accepts(lattice, p, c) for c in members):
                return False
            continue
        into = _record_members(members, p.dim)
        if not into or not all(_struct_fits(lattice, c, f.nested(c.shape.dim)) for c in into):
            return False
    return True


def _struct_fits(lattice: Lattice, col: Column, obs: Observed) -> bool:
    leaf = col.leaf
    assert isinstance(leaf, Struct)
    members = families(leaf)
    return all(
        key in members and _kind_fits(lattice, members[key], k, f)
        for key, f in obs.fields.items()
        for k in f.counts
    )


# --- one object, from its values --------------------------------------------------------


def object_fits(lattice: Lattice, col: Column, value: dict[str, Any], kind: KindOf) -> bool:
    """Whether one JSON object fits the map column ``col`` (see :func:`batch_fits`)."""
    v = map_value_column(col)
    return v is not None and all(_value_fits(lattice, [v], x, kind) for x in value.values())


def _value_fits(lattice: Lattice, members: list[Column], x: Any, kind: KindOf) -> bool:
    k = kind(x)
    if k is None:
        return True
    for p in k.parts:
        if p.type != RECORD:
            if not any(accepts(lattice, p, c) for c in members):
                return False
            continue
        into = _record_members(members, p.dim)
        if not into or not all(
            _record_fits(lattice, c, r, kind) for c in into for r in _records(x)
        ):
            return False
    return True


def _record_fits(lattice: Lattice, col: Column, record: dict[str, Any], kind: KindOf) -> bool:
    leaf = col.leaf
    assert isinstance(leaf, Struct)
    members = families(leaf)
    return all(
        kind(x) is None or (key in members and _value_fits(lattice, members[key], x, kind))
        for key, x in record.items()
    )


def _records(x: Any) -> Iterator[dict[str, Any]]:
    """The records in a value: itself, or those at any depth of an array."""
    if type(x) is dict:
        yield x
    elif type(x) is list:
        for e in x:
            yield from _records(e)
