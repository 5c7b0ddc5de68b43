"""What a replay of quarantined records may do (RULES 5, RULES 6), decided before it runs.

Two rules, both pure:

1. A record is routed by field ID, not by name: it was set aside against the table's schema
   *then*; a key naming a field of that schema is renamed to the name the same field ID
   has *now* (:func:`by_field_id`). A record quarantined before ``name`` was renamed to
   ``full_name`` lands in ``full_name``, and never brings ``name`` back as a new column.
2. A replay offers only the records that can land now (:func:`landing`): the records are
   run through the engine against the table's schema now, under the replay's options; those
   it sets aside again stay in the quarantine, each with the reason it cannot land, and the
   replay plans with the others only, so every schema change it commits is one the rows it
   writes need.

>>> from toolkit.core.values.types import Column, Struct
>>> then = Struct((Column(1, "id", "long"), Column(2, "name", "string")))
>>> now = Struct((Column(1, "id", "long"), Column(2, "full_name", "string"),
...               Column(3, "name", "string")))
>>> by_field_id({"id": 7, "name": "Cy", "extra": 1}, then, now)
{'id': 7, 'full_name': 'Cy', 'extra': 1}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.core.batch.hint_plans import hinted_rows
from toolkit.core.batch.options import Options
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.engine import simulate_batches
from toolkit.core.values.conversions import render_json
from toolkit.core.values.types import ColumnType, ListOf, Struct

__all__ = ["Landing", "by_field_id", "landing"]


def by_field_id(record: Any, then: Struct, now: Struct) -> Any:
    """``record`` (set aside against the schema ``then``) with each key that names a field
    of ``then`` renamed to the name the same field ID has in ``now``, recursively through
    structs and lists of structs. Keys ``then`` does not know, fields dropped since, and a
    rename onto a key the record already has are left as they are."""
    if not isinstance(record, dict):
        return record
    old = {c.name: c for c in then.fields}
    new = {c.id: c for c in now.fields}
    out: dict[str, Any] = {}
    for key, value in record.items():
        was = old.get(key)
        is_now = None if was is None else new.get(was.id)
        if was is None or is_now is None:
            out.setdefault(key, value)
            continue
        name = is_now.name
        if name != key and name in record:
            name = key  # the record names both: keep each value where it is
        out[name] = _inside(value, was.type, is_now.type)
    return out


def _inside(value: Any, then: ColumnType, now: ColumnType) -> Any:
    if isinstance(then, Struct) and isinstance(now, Struct):
        return by_field_id(value, then, now)
    if isinstance(then, ListOf) and isinstance(now, ListOf) and isinstance(value, list):
        return [_inside(v, then.element, now.element) for v in value]
    return value


@dataclass(frozen=True)
class Landing:
    """Which records of a replay can land in the table now: their indexes (in the order
    given) and, for each of the others, why not (what the engine set it aside for)."""

    lands: tuple[int, ...]
    cannot: tuple[tuple[int, Quarantined], ...]


def landing(
    records: Sequence[Mapping[str, Any]], schema: Struct, options: Options
) -> Landing:
    """Run ``records`` as one batch against ``schema`` (the table now) under ``options``
    and set aside those the engine sets aside; again on the rest until none is (a record
    left out can change the plan, and so what the others need), so the records kept land
    together under one plan that only they make."""
    left = list(range(len(records)))
    cannot: list[tuple[int, Quarantined]] = []
    # hinted values converted once, up front: the engine then sets aside these very records
    if options.hints:
        records = hinted_rows([dict(r) for r in records], options)
    while left:
        run = simulate_batches([[records[i] for i in left]], schema, options)
        if not run.quarantined:
            break
        aside = _matched(left, records, run.quarantined)
        if not aside:  # nothing matched: take none rather than loop
            cannot += [(i, run.quarantined[0]) for i in left]
            left = []
            break
        cannot += sorted(aside.items())
        left = [i for i in left if i not in aside]
    return Landing(tuple(left), tuple(sorted(cannot, key=lambda c: c[0])))


def _matched(
    left: Sequence[int], records: Sequence[Mapping[str, Any]], aside: Sequence[Quarantined]
) -> dict[int, Quarantined]:
    """The index of each record set aside: the very object when the engine kept it, else
    the first record not matched yet with the same JSON text."""
    by_object = {id(records[i]): i for i in left}
    out: dict[int, Quarantined] = {}
    for q in aside:
        i = by_object.get(id(q.record))
        if i is None or i in out:
            text = q.raw
            i = next((j for j in left if j not in out and render_json(records[j]) == text),
                     None)
            if i is None:
                continue
        out[i] = q
    return out
