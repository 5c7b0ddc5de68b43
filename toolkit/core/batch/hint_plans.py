"""What type hints do to a batch (docs/rules.md, *Type hints*; the hints themselves are
:mod:`toolkit.core.batch.hints`): its hinted values are converted before it is observed
(:func:`hinted_rows`), a hinted field gets its column of the hint's type before the batch
is planned (:func:`seeded`, :func:`with_seeds`), so every policy plans against it as a
column the table already declares (RULES 3.2), and a table's kept hints hold for a batch
given none (:func:`toolkit.core.batch.options.obeyed`).

>>> from toolkit.core.batch.options import Options
>>> from toolkit.core.batch.hints import parse_hints
>>> opts = Options(hints=parse_hints({"price": "decimal(10,2)"}))
>>> hinted_rows([{"price": 3}], opts)
[{'price': Decimal('3.00')}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolkit.core.batch.hints import (
    HINTS_PROPERTY,
    HintTally,
    convert_hinted,
    hints_property,
)
from toolkit.core.batch.observed import Observed
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.settings import Settings
from toolkit.core.evolution.batch_plan import AddColumn, Plan, numbered_like_iceberg
from toolkit.core.evolution.reasons import because
from toolkit.core.values.families import families
from toolkit.core.values.naming import TakenNames, evolved_doc, suffixed
from toolkit.core.values.types import DECIMAL_TYPE, RECORD, Column, Struct
from toolkit.errors import HintError

__all__ = ["as_they_came", "hinted_rows", "hints_note", "lattice_view", "real_types",
           "seeded", "with_seeds"]


def hinted_rows(
    rows: list[dict[str, Any]], options: Settings, tally: HintTally | None = None
) -> list[dict[str, Any]]:
    """``rows`` with their hinted values converted
    (:func:`~toolkit.core.batch.hints.convert_hinted`), run before a
    batch is observed on every path (simulate, preview, ingest's Python
    workers); idempotent. ``tally`` counts the values converted (the observation keeps it
    for the profile: the conversion warnings tell the ones that cross kinds)."""
    return convert_hinted(rows, options.hints, options.conversions, tally)


def as_they_came(
    aside: list[Quarantined], hinted: Sequence[dict[str, Any]], given: Sequence[dict[str, Any]]
) -> list[Quarantined]:
    """``aside`` (set aside from the ``hinted`` rows) holding the records as they came
    (``given``, in the same order): a quarantined record keeps its values unconverted.

    >>> from toolkit.core.batch.options import Options
    >>> from toolkit.core.batch.hints import parse_hints
    >>> opts = Options(hints=parse_hints({"p": "long"}), policy="widen")
    >>> given = [{"p": "3", "q": True}]
    >>> hinted = hinted_rows(given, opts)
    >>> q = Quarantined(hinted[0], "incompatible", "q", "boolean", "long", 0, "...")
    >>> as_they_came([q], hinted, given)[0].record is given[0]
    True
    """
    by_id = {id(h): g for h, g in zip(hinted, given, strict=True) if h is not g}
    if not by_id:
        return aside
    return [replace(q, record=by_id.get(id(q.record), q.record)) for q in aside]


def hints_note(options: Settings, properties: Mapping[str, str]) -> dict[str, str]:
    """The table property to set with a batch: the options' hints when the table keeps
    other ones (or none); nothing otherwise.

    >>> from toolkit.core.batch.options import Options
    >>> from toolkit.core.batch.hints import parse_hints
    >>> opts = Options(hints=parse_hints({"p": "long"}))
    >>> hints_note(opts, {}), hints_note(opts, hints_property(opts.hints))
    ({'toolkit.hints': '{"p": "long"}'}, {})
    """
    if not options.hints:
        return {}
    note = hints_property(options.hints)
    return {} if properties.get(HINTS_PROPERTY) == note[HINTS_PROPERTY] else note


def seeded(
    schema: Struct, obs: Observed, options: Settings, last_id: int
) -> tuple[Struct, tuple[AddColumn, ...]]:
    """``schema`` with a column of the hint's type for every hinted field the batch brings
    a value for and whose family has none yet, and those columns as ``add`` operations
    (field IDs from ``last_id + 1``; :func:`with_seeds` numbers them as Iceberg will).

    A field the table keeps as records, or that brings only records, is refused (a hint
    names a field of one value). Under the ``upsolver`` policy a family without a column of
    the hint's type gets one beside its others (suffixed, RULES 4); under ``widen`` its one
    column changes type only by the matrix (RULES 5), so the hint is refused."""
    if not options.hints:
        return schema, ()
    members = families(schema)
    taken = TakenNames()
    taken.add_type((), schema)
    adds: list[AddColumn] = []
    for h in options.hints:
        _refuse_nested(h.field, h.text, obs, members)
        fobs = obs.fields.get(h.field)
        kinds = [] if fobs is None else [k for k in fobs.counts if k.type is not None]
        own = members.get(h.field, [])
        if any(c.shape.type == RECORD for c in own if c.name == h.field) or (
                not own and kinds and all(k.type == RECORD for k in kinds)):
            raise HintError(h.field, h.text, "the field is a record; a hint gives the type "
                            "of a field that holds single values (name one inside it)")
        if not kinds or any(c.type == h.type for c in own):
            continue
        said = f"The hints give `{h.field}` the type {h.text}"
        if not own:
            name = taken.claim(h.field)
            doc = None if name == h.field else evolved_doc(h.field)
            why = f"{said}: its column has that type from its first batch"
        elif not options.policy.widens:  # a family grows by a suffixed column (RULES 4)
            name, doc = taken.claim(suffixed(h.field, h.shape)), evolved_doc(h.field)
            why = f"{said}, which none of its columns holds: a column of that type joins them"
        else:
            held = ", ".join(f"`{c.name}` {c.type}" for c in own)
            raise HintError(h.field, h.text, f"the table holds it as {held}, and under the "
                            "widen policy a column changes type only by the matrix (RULES 5)")
        last_id += 1
        adds.append(AddColumn((), Column(last_id, name, h.type, doc), h.field,
                              because(why, "2")))
    if not adds:
        return schema, ()
    return Struct((*schema.fields, *(a.column for a in adds))), tuple(adds)


def _refuse_nested(
    field: str, text: str, obs: Observed, members: Mapping[str, Sequence[Column]]
) -> None:
    """A dotted hint names a top-level key (``a.b`` as it arrives); one that would name a
    field inside a record the batch or table holds (``address.zip``) is refused rather
    than matching nothing: hints inside records are not taken (docs/rules.md)."""
    parts = field.split(".")
    for i in range(1, len(parts)):
        head = ".".join(parts[:i])
        seen = obs.fields.get(head)
        record = (seen is not None and any(k.type == RECORD for k in seen.counts)) or any(
            c.shape.type == RECORD for c in members.get(head, ()))
        if record and field not in obs.fields and field not in members:
            raise HintError(field, text, f"`{head}` is a record: hints name top-level fields, "
                            "not fields inside records")


def with_seeds(plan: Plan, schema: Struct, adds: Sequence[AddColumn], last_id: int) -> Plan:
    """The plan a policy made against the :func:`seeded` schema, as the plan of ``schema``:
    the hinted columns are among its added columns, all of them ordered by name (RULES
    3.3), numbered as Iceberg numbers them."""
    if not adds:
        return plan
    seeds = {a.column.id for a in adds}
    top = [c for c in plan.changes if not c.parent]
    nested = [c for c in plan.changes if c.parent]
    added = sorted([*adds, *top], key=lambda c: c.column.name)
    grown = {c.id: c for c in plan.after.fields}
    new_ids = seeds | {c.column.id for c in top}
    kept = [c for c in plan.after.fields if c.id not in new_ids]
    after = Struct((*kept, *(grown[a.column.id] for a in added)))
    combined = replace(plan, before=schema, after=after, changes=(*nested, *added))
    return numbered_like_iceberg(combined, last_id)


def lattice_view(struct: Struct, options: Settings) -> Struct:
    """``struct`` as the upsolver policy plans and routes it: a hinted decimal column is
    seen as the decimal column evolution creates (``DECIMAL_TYPE``), whose values are
    Python decimals; every decimal value of a hinted field fits its hint
    (:func:`hinted_rows`), so routing writes it unchanged. Any other declared decimal stays
    opaque (docs/rules.md)."""
    decimals = {h.field: h.type for h in options.hints
                if h.lattice == "decimal" and h.type != DECIMAL_TYPE}
    if not decimals:
        return struct
    fields = tuple(
        replace(c, type=DECIMAL_TYPE) if decimals.get(c.family) == c.type else c
        for c in struct.fields
    )
    if all(a is b for a, b in zip(fields, struct.fields, strict=True)):
        return struct
    return Struct(fields)


def real_types(viewed: Struct, real: Struct) -> Struct:
    """``viewed`` (a plan's schema made on :func:`lattice_view`) with the declared types of
    ``real``'s columns back, by field ID."""
    if viewed is real:
        return real
    types = {c.id: c.type for c in real.fields}
    return Struct(tuple(
        replace(c, type=types[c.id]) if c.id in types and c.type == DECIMAL_TYPE
        and types[c.id] != c.type else c
        for c in viewed.fields
    ))
