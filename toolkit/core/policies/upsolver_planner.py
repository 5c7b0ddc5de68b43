"""RULES 3.2-3.5: which columns a batch ("task time") adds, and why.

All types of a batch are decided together against the table as it was before the batch,
so the result never depends on the order of records inside it (RULES 3.3).

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.batch.options import Options
>>> opts = Options()
>>> p1 = plan_batch(Struct(), observe_struct([{"size": 4}], opts), opts)
>>> p2 = plan_batch(p1.after, observe_struct([{"size": 2.3}], opts), opts, batch=1)
>>> [c.column.name for c in p2.changes], p2.after.fields[-1].doc
(['size_double'], 'upsolver_evolved_from:size')

A plan's changes are operations of the one vocabulary (RULES 6): an added column is an
``add``, a widening a ``widen``, a column made optional an ``optional``; each carries the
rule that decided it.

>>> [op.to_json() for op in p2.operations]
[{'op': 'add', 'path': ['size_double'], 'type': 'double', 'doc': 'upsolver_evolved_from:size'}]
>>> print(*p2.reasons)
This batch had `size` as a double, which none of its columns holds: `size` holds longs (RULES 3.3)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from toolkit.core.batch.map_routing import outside_maps
from toolkit.core.batch.observed import Observed, ObservedField, Seen
from toolkit.core.batch.settings import Settings
from toolkit.core.evolution.batch_plan import (
    AddColumn,
    Plan,
    RareType,
    max_field_id,
    numbered_like_iceberg,
    renumbered_type,
    struct_prefix,
)
from toolkit.core.evolution.reasons import because
from toolkit.core.values.families import accepts, families, with_leaf, wrap_type
from toolkit.core.values.lattice import Lattice
from toolkit.core.values.naming import TakenNames, evolved_doc, suffixed
from toolkit.core.values.types import (
    ICEBERG_TYPE_OF,
    RECORD,
    Column,
    ColumnType,
    Kind,
    Primitive,
    Shape,
    Struct,
    type_to_str,
)
from toolkit.core.values.wording import a_shape, and_join, batch_number, from_record, shape_words


def plan_batch(
    schema: Struct, obs: Observed, options: Settings, batch: int = 0, last_assigned: int = 0,
    *, seen: Seen | None = None,
) -> Plan:
    """Plan the columns one batch adds to ``schema`` (RULES 3.2-3.5). ``obs`` is a batch's
    :class:`~toolkit.core.batch.observe.StructObservation` or a
    :class:`~toolkit.core.batch.summary.Summary` of it (what Spark partitions send back).
    ``last_assigned`` is the table's last assigned field ID: above the schema's highest
    when columns were dropped, and Iceberg never reuses an ID. With ``seen`` (the batch's
    profile) a new field's reasons say where in the batch it starts ("from record 1,501").

    With ``options.rare_type_percent`` the batch's rare types (:func:`rare_kinds`) take no
    part in planning: the plan lists them in ``rare``, each with what it would have added.

    >>> from toolkit.core.batch.options import Options
    >>> opts = Options(rare_type_percent=5)
    >>> from toolkit.core.batch.observe import observe_struct
    >>> batch = [{"price": 1.5}] * 99 + [{"price": "n/a"}]
    >>> plan = plan_batch(Struct(), observe_struct(batch, opts), opts)
    >>> [c.column.name for c in plan.changes], [str(r) for r in plan.rare]
    (['price'], ['1 of 100 values of `price` arrived as a string (1%, under the 5% rare-type \
threshold); set aside instead of adding price as string and price_double'])
    """
    percent = options.rare_type_percent
    rare = {} if percent is None else _rare_of(schema, obs, options.lattice, percent)
    places = {} if seen is None else seen.first_records(batch)
    if not rare:
        return _plan(schema, obs, options, batch, last_assigned, places)
    assert percent is not None
    full = _plan(schema, obs, options, batch, last_assigned, places)
    kept = _plan(schema, _without(obs, rare), options, batch, last_assigned, places)
    rare_types = tuple(
        RareType(key, shape, kinds, count, sum(obs.fields[key].counts.values()), percent,
                 _instead(full, kept, key))
        for key, shapes in sorted(rare.items())
        for shape, (kinds, count) in shapes.items()
    )
    return replace(kept, rare=rare_types)


def _plan(schema: Struct, obs: Observed, options: Settings, batch: int, last_assigned: int,
          places: Mapping[str, Mapping[Shape, int]]) -> Plan:
    last_id = max(max_field_id(schema), last_assigned)
    planner = _Planner(options.lattice, last_id, batch, places)
    planner.register((), schema)
    after = planner.plan_struct(schema, obs, (), record=True)
    return numbered_like_iceberg(Plan(batch, schema, after, tuple(planner.changes)), last_id)


# --- rare types (the upsolver policy's rare-type threshold, docs/rules.md) -----------------

def rare_kinds(
    fobs: ObservedField, members: list[Column], lattice: Lattice, percent: float
) -> dict[Shape, tuple[frozenset[Kind], int]]:
    """The rare types of one top-level key in one batch (docs/rules.md, *Rare types*): per
    shape (a type and its dimension) seen in fewer than ``percent`` % of the key's non-null
    values, the kinds of that shape that would need a new column (they fit no column of
    ``members``, the key's family before the batch; RULES 3.3's test), with how many values
    arrived in that shape. When every shape of the key is under the threshold none is rare
    (no type is common enough to keep), and records of a smaller dimension than the
    records kept are not rare (RULES 3.4: the larger record column gets their fields)."""
    counts = fobs.counts
    total = sum(counts.values())
    shapes: dict[Shape, int] = {}
    for k, n in counts.items():
        shapes[k.shape] = shapes.get(k.shape, 0) + n
    under = {s for s, n in shapes.items() if n * 100 < percent * total}
    if not under or len(under) == len(shapes):
        return {}

    def needs_column(k: Kind) -> bool:
        return any(
            (p.type != RECORD or creates_columns(fobs.nested(p.dim)))
            and not any(accepts(lattice, p, c) for c in members)
            for p in k.parts
        )

    out: dict[Shape, tuple[frozenset[Kind], int]] = {}
    for s in sorted(under, key=str):
        kinds = frozenset(k for k in counts if k.shape == s and needs_column(k))
        if kinds:
            out[s] = (kinds, shapes[s])
    aside = {k for kinds, _ in out.values() for k in kinds}
    kept_records = [k.dim for k in counts if k.type == RECORD and k not in aside]
    if kept_records:
        out = {
            s: v for s, v in out.items() if s.type != RECORD or s.dim >= max(kept_records)
        }
    return out


def _rare_of(
    schema: Struct, obs: Observed, lattice: Lattice, percent: float
) -> dict[str, dict[Shape, tuple[frozenset[Kind], int]]]:
    members = families(schema)
    out = {}
    for key, fobs in obs.fields.items():
        found = rare_kinds(fobs, members.get(key, []), lattice, percent)
        if found:
            out[key] = found
    return out


@dataclass(frozen=True)
class _KeptField:
    """One key's observation without its rare kinds."""

    counts: Mapping[Kind, int]
    whole: ObservedField

    def nested(self, max_dim: int) -> Observed:
        return self.whole.nested(max_dim)


@dataclass(frozen=True)
class _Kept:
    fields: Mapping[str, ObservedField]


def _without(obs: Observed, rare: Mapping[str, Mapping[Shape, tuple[frozenset[Kind], int]]]
             ) -> Observed:
    """``obs`` as the planner sees it once the rare kinds are set aside."""
    fields: dict[str, ObservedField] = dict(obs.fields)
    for key, shapes in rare.items():
        drop = {k for kinds, _ in shapes.values() for k in kinds}
        whole = fields[key]
        fields[key] = _KeptField({k: n for k, n in whole.counts.items() if k not in drop}, whole)
    return _Kept(fields)


def _instead(full: Plan, kept: Plan, key: str) -> tuple[str, ...]:
    """The top-level columns of ``key``'s family that ``full`` adds and ``kept`` does not
    (a name ``kept`` gives another type is told with its type: ``price as string``)."""
    have = {(c.column.name, type_to_str(c.column.type)) for c in kept.changes if not c.parent}
    names = {n for n, _ in have}
    out = []
    for c in full.changes:
        t = type_to_str(c.column.type)
        if c.parent or c.family != key or (c.column.name, t) in have:
            continue
        out.append(f"{c.column.name} as {t}" if c.column.name in names else c.column.name)
    return tuple(out)


@dataclass(frozen=True)
class _Wanted:
    key: str
    shape: Shape
    original: bool
    reason: str
    seed: Struct = Struct()  # fields a new record column starts with


class _Planner:
    def __init__(self, lattice: Lattice, last_id: int, batch: int = 0,
                 places: Mapping[str, Mapping[Shape, int]] | None = None) -> None:
        self.lattice, self.last_id, self.batch = lattice, last_id, batch
        self.places = places or {}  # per top-level key and shape, its first record
        self.changes: list[AddColumn] = []
        # Iceberg indexes every field by its dotted full name and short name (no ``element``
        # of a list of structs), so a key ``dot.key`` and a nested ``dot``.``key`` collide:
        # names are checked against these too (RULES 4), lower-cased like every name.
        self.full_names = TakenNames()

    def register(self, prefix: tuple[str, ...], t: ColumnType) -> None:
        self.full_names.add_type(prefix, t)

    def next_id(self) -> int:
        self.last_id += 1
        return self.last_id

    def plan_struct(
        self, struct: Struct, obs: Observed, prefix: tuple[str, ...], *, record: bool
    ) -> Struct:
        """Plan one struct level, whose Iceberg full name is ``prefix``. ``record`` is False
        inside a column being created: its nested fields are part of that column's type,
        not changes of their own."""
        members = families(struct)
        wanted: list[_Wanted] = []
        for key, fobs in obs.fields.items():
            # a mixed array counts as an array of records and one of primitives (docs/rules.md)
            kinds = list(dict.fromkeys(
                p
                for k in fobs.counts
                for p in k.parts
                if p.type != RECORD or creates_columns(fobs.nested(p.dim))
            ))
            if not kinds:
                continue  # RULES 3.5: a field with only nulls creates no column yet
            if key in members:  # objects that fit a declared map go into it (map_routing)
                kinds = outside_maps(self.lattice, members[key], fobs, kinds)
                wanted += self._later_batch(key, members[key], kinds)
            else:
                wanted += self._first_batch(key, kinds, self.places.get(key, {}) if (
                    record and not prefix) else {})

        named = self._name(wanted, prefix)

        fields = []
        for col in struct.fields:  # existing record columns evolve recursively (RULES 3.4)
            seen = obs.fields.get(col.family)
            shape = col.shape
            if (
                shape.type == RECORD
                and seen is not None
                and any(k.type == RECORD and k.dim <= shape.dim for k in seen.counts)
            ):
                leaf = col.leaf
                assert isinstance(leaf, Struct)
                grown = self.plan_struct(
                    leaf, seen.nested(shape.dim), struct_prefix((*prefix, col.name), shape.dim),
                    record=record,
                )
                if grown is not leaf:
                    col = replace(col, type=with_leaf(col.type, grown))
            fields.append(col)

        for name, w in named:
            col = self._new_column(name, w, obs.fields[w.key], (*prefix, name))
            fields.append(col)
            if record:
                self.changes.append(AddColumn(prefix, col, w.key, w.reason))
        if not named and all(a is b for a, b in zip(fields, struct.fields, strict=True)):
            return struct
        return Struct(tuple(fields))

    def _new_column(
        self, name: str, w: _Wanted, fobs: ObservedField, full: tuple[str, ...]
    ) -> Column:
        col_id = self.next_id()
        element_ids = [self.next_id() for _ in range(w.shape.dim)]
        leaf: str | Struct
        if w.shape.type == RECORD:
            seed = renumbered_type(w.seed, lambda _: self.next_id())  # fresh IDs
            assert isinstance(seed, Struct)
            inner = struct_prefix(full, w.shape.dim)
            self.register(inner, seed)
            leaf = self.plan_struct(seed, fobs.nested(w.shape.dim), inner, record=False)
        else:
            assert w.shape.type is not None
            leaf = ICEBERG_TYPE_OF[w.shape.type]
        # RULES 4: every column created by evolution is documented, and so is an original
        # whose name had to change because of a collision (the doc keeps key -> column).
        doc = None if (w.original and name == w.key) else evolved_doc(w.key)
        return Column(col_id, name, wrap_type(leaf, w.shape.dim, element_ids), doc)

    def _name(self, wanted: list[_Wanted], prefix: tuple[str, ...]) -> list[tuple[str, _Wanted]]:
        """RULES 4 names; originals first so a suffix never takes a key's own name.
        RULES 3.3: the columns a batch adds are ordered by name. The struct's own fields
        are among the names under ``prefix``: every struct planned is registered first.
        They are claimed before any field nested in them (``dot.key`` beside new records
        ``dot`` whose ``key`` becomes ``key_2``, whichever came first: docs/rules.md)."""
        named = []
        originals = sorted((w for w in wanted if w.original), key=lambda w: w.key)
        others = sorted(
            (w for w in wanted if not w.original), key=lambda w: suffixed(w.key, w.shape)
        )
        for w in originals + others:
            want = w.key if w.original else suffixed(w.key, w.shape)
            record = w.shape.type == RECORD
            named.append((self.full_names.claim(want, prefix, w.shape.dim, record=record), w))
        return sorted(named, key=lambda nw: nw[0])

    def _first_batch(
        self, key: str, kinds: list[Kind], places: Mapping[Shape, int]
    ) -> list[_Wanted]:
        """RULES 3.2: a batch that sees ``key`` for the first time; ``places``: per shape,
        the first record of the batch holding one (issue #28: where drift starts)."""
        seen = and_join(a_shape(s) for s in sorted({k.shape for k in kinds}, key=str))
        who = "The first batch" if self.batch == 0 else f"Batch {batch_number(self.batch)}"
        had = f"{who} had `{key}` as {seen}{from_record(places.values())}"
        several = len({k.shape for k in kinds}) > 1
        records = [k.dim for k in kinds if k.type == RECORD]
        typed = [k for k in kinds if k.type not in (None, RECORD)]
        top = max(k.dim for k in kinds)
        if records:
            original = Shape(RECORD, max(records))
            # a record takes the original name
            why = f"{had}; {shape_words(original, many=True)} keep the name `{key}`" if (
                several) else had
        else:
            widest = self.lattice.widest_kind(typed)
            # RULES 1: an array with no typed leaf anywhere is created as an array of string
            leaf = "string" if widest is None else widest.type
            original = Shape(leaf, top)
            held = shape_words(original, many=True)
            if widest is None:
                why = (f"{who} had `{key}` only as {seen}, with no value to type: "
                       f"the column `{key}` holds {held}")
            elif not several:
                why = had
            elif top:  # the largest dimension takes the original name, with the widest type
                why = f"{had}; the column `{key}` holds {held}, which hold all of them"
            else:  # the widest type takes the original name
                why = f"{had}; the column `{key}` holds the widest of them, {held}"
        out = [_Wanted(key, original, True, because(why, "3.2"))]
        shapes = {k.shape for k in kinds if k.type is not None}
        for shape in sorted(shapes - {original}, key=str):
            # RULES 3.2 / seed edge case 1: long is dropped beside double, as long as every
            # long of the batch is exact as a double.
            if (
                shape.type == "long"
                and Shape("double", shape.dim) in shapes
                and not any(k.shape == shape and "double" in k.lossy for k in kinds)
            ):
                continue
            why = (f"{who} also had `{key}` as {a_shape(shape)}"
                   f"{from_record([places[shape]] if shape in places else [])}, "
                   "which gets its own column")
            out.append(_Wanted(key, shape, False, because(why, "3.2")))
        # RULES 1: an empty array goes to a column of its dimension or more; beside records
        # of a smaller dimension there is none, so it gets an array of the family's common
        # denominator (docs/rules.md).
        widest_dim = max(w.shape.dim for w in out)
        empties = [k.dim for k in kinds if k.type is None and k.dim > widest_dim]
        if empties:
            primitive = [k.type for k in typed if k.type is not None and k.type != RECORD]
            leaf = self.lattice.widest_of(primitive) if primitive else "string"
            shape = Shape(leaf, max(empties))
            why = (
                f"{who} also had `{key}` as {a_shape(Shape(None, max(empties)))}, "
                f"deeper than its other columns: a column of {shape_words(shape, many=True)} "
                "takes it"
            )
            out.append(_Wanted(key, shape, False, because(why, "3.2")))
        return out

    def _later_batch(self, key: str, members: list[Column], kinds: list[Kind]) -> list[_Wanted]:
        """RULES 3.3: a batch that sees an existing family; each kind is judged against
        the family as it was before the batch."""
        existing = {c.shape for c in members}
        primitive_cols = [c.shape for c in members if c.shape.type not in (None, RECORD)]
        have = and_join(f"`{c.name}` holds {_held(c)}" for c in members)
        out: dict[Shape, _Wanted] = {}
        seed = Struct()
        for k in sorted(kinds, key=lambda k: (str(k.shape), sorted(k.lossy))):
            if any(accepts(self.lattice, k, c) for c in members):
                continue  # RULES 3.3 (seed rule 2): converted and routed, no new column
            types = [s.type for s in primitive_cols if s.type is not None and s.type != RECORD]
            top = max([s.dim for s in primitive_cols] + [k.dim])
            fits_none = (
                f"This batch had `{key}` as {a_shape(k.shape)}, which none of its columns holds"
            )
            if k.type == RECORD:
                wants = [(Shape(RECORD, k.dim), f"{fits_none}: {have}")]
                seed = _seed(members, k.dim)
            elif k.type is None:
                # An empty array that fits no column: one array column of the family's
                # common denominator (string when the family has no primitive column).
                leaf: Primitive = self.lattice.widest_of(types) if types else "string"
                wants = [(Shape(leaf, k.dim), f"{fits_none}: {have}")]
            else:
                cd = Shape(self.lattice.widest_of([*types, k.type]), top)
                now = and_join(dict.fromkeys(
                    shape_words(s, many=True) for s in sorted({*primitive_cols, k.shape}, key=str)
                ))
                wants = [
                    (k.shape, f"{fits_none}: {have}"),
                    (cd, f"`{key}` now has {now}: a column of {shape_words(cd, many=True)}, "
                         "their common denominator, holds them all"),
                ]
            for shape, reason in wants:
                if shape not in existing and shape not in out:
                    out[shape] = _Wanted(key, shape, False, because(reason, "3.3"),
                                         seed if shape.type == RECORD else Struct())
        return list(out.values())


def _seed(members: list[Column], dim: int) -> Struct:
    """RULES 3.4: the largest dimension receives all nested fields. Every record routed to
    a smaller record column of the family will also reach a new larger one, so the new one
    starts with the fields those columns have (largest first; IDs are renumbered)."""
    fields: dict[str, Column] = {}
    smaller = [c for c in members if c.shape.type == RECORD and c.shape.dim < dim]
    for col in sorted(smaller, key=lambda c: -c.shape.dim):
        leaf = col.leaf
        assert isinstance(leaf, Struct)
        for f in leaf.fields:
            fields.setdefault(f.name.lower(), f)
    return Struct(tuple(fields.values()))


def creates_columns(obs: Observed) -> bool:
    """Whether records observed so would give their column at least one field: a record
    column is only created then (docs/rules.md), as data files cannot hold an empty struct."""
    for fobs in obs.fields.values():
        for k in fobs.counts:
            if k.mixed is not None or k.type != RECORD or creates_columns(fobs.nested(k.dim)):
                return True
    return False


__all__ = ["creates_columns", "plan_batch", "rare_kinds"]


def _held(col: Column) -> str:
    """What a column of the family holds, in words: ``longs``; a declared type outside the
    lattice (a table made elsewhere: ``int``, ``decimal(10, 2)``, a map) by its name, as
    no shape of the lattice says it (docs/rules.md, *Declared types outside the lattice*)."""
    if col.shape.type is None:
        return f"{type_to_str(col.type)} values"
    return shape_words(col.shape, many=True)
