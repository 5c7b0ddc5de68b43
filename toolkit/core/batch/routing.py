"""RULES 3.1: every value is written to every column of its family that receives it.

Routing works a column at a time: for each column of a struct, the values of its family's
key are converted (or left null) in one pass, and a column whose values need no conversion
at all is the very list of input values.

>>> from toolkit.core.batch.observe import observe_struct
>>> from toolkit.core.policies.upsolver_planner import plan_batch
>>> from toolkit.core.batch.options import Options
>>> opts = Options()
>>> obs = observe_struct([{"a": 1}, {"a": [2, 3]}], opts)
>>> schema = plan_batch(Struct(), obs, opts).after
>>> Router(opts).rows(schema, obs)
[{'a': [1], 'a_long': 1}, {'a': [2, 3], 'a_long': None}]
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from itertools import islice, repeat
from typing import Any, Literal

from toolkit.core.batch.hint_plans import hinted_rows, lattice_view
from toolkit.core.batch.map_routing import map_value_column, object_fits
from toolkit.core.batch.observe import (
    Classifier,
    FieldObservation,
    StructObservation,
    observe_struct,
)
from toolkit.core.batch.quarantine import Quarantined
from toolkit.core.batch.settings import Settings
from toolkit.core.evolution.batch_plan import Plan, RareType
from toolkit.core.values.conversions import LOSSY
from toolkit.core.values.families import receives
from toolkit.core.values.types import RECORD, Column, Kind, ListOf, MapOf, Struct, type_to_str
from toolkit.core.values.widening import retype_value
from toolkit.errors import IncompatibleRecordError

#: the Python type of leaves that a column of each type holds as they came
_PYTHON_TYPE: dict[str, type] = {"boolean": bool, "long": int, "double": float, "string": str}
_NONE = type(None)

#: kinds whose Python values are already what a column of the same shape holds
_AS_IS = frozenset(Kind(t, 0) for t in _PYTHON_TYPE)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Rule:
    """How a value of one kind lands in a column that receives it (RULES 3.1): ``how`` it
    is written (``convert``: leaves converted to the column's type; ``records``: records
    routed field by field into the column's struct; ``empty``: an array with no typed
    leaf), and ``wrap``, the list levels around it (RULES 3: 5 -> [5] -> [[5]]).

    In a mixed array (docs/rules.md) each leaf lands in one of the two: ``convert`` leaves
    its records null, ``records`` its primitives, at the same positions."""

    how: Literal["convert", "records", "empty"]
    wrap: int


class _Skip(Exception):
    """A leaf that cannot be written exactly: the whole value stays null in that column."""


def rows_of(struct: Struct, columns: list[list[Any] | None], n: int) -> list[dict[str, Any]]:
    """Dicts keyed by column name, one per row, from column-wise values (None: all null)."""
    if not struct.fields:
        return [{} for _ in range(n)]
    names = [c.name for c in struct.fields]
    cols = [repeat(None, n) if c is None else c for c in columns]
    return [dict(zip(names, t)) for t in zip(*cols)]  # noqa: B905 (equal lengths)


def wrap(value: Any, times: int) -> Any:
    """RULES 3: a value of lower dimension is wrapped (5 -> [5] -> [[5]])."""
    for _ in range(times):
        value = [value]
    return value


class Router:
    """Routes observed batches into the columns of a schema (RULES 3.1)."""

    def __init__(self, options: Settings, classifier: Classifier | None = None) -> None:
        self.lattice = options.lattice
        self.conversions = options.conversions
        self.classifier = classifier or Classifier(options)
        self.options = options

    def rule(self, k: Kind, col: Column) -> Rule | None:
        """How a value of kind ``k`` lands in ``col``; None: it is not written there.
        The Python router and the JVM one (``toolkit.spark.router``) both route by it.

        >>> from toolkit.core.batch.options import Options
        >>> r = Router(Options())
        >>> r.rule(Kind("long", 0), Column(1, "a", ListOf(2, "double")))
        Rule(how='convert', wrap=1)
        >>> r.rule(Kind("double", 0), Column(1, "a", "long")) is None
        True
        """
        shape = col.shape
        if shape.type == RECORD:  # RULES 3.4: records of its own and lower dimensions
            if k.dim > shape.dim or k.type not in (RECORD, None):
                return None
            return Rule("records" if k.type == RECORD else "empty", shape.dim - k.dim)
        if k.mixed is not None:  # a mixed array's primitives (docs/rules.md)
            k = k.parts[1]
        if not receives(self.lattice, k, col):
            return None
        return Rule("convert", shape.dim - k.dim)

    def rows(self, struct: Struct, obs: StructObservation) -> list[dict[str, Any]]:
        return rows_of(struct, self.route_struct(struct, obs), len(obs.rows))

    def route_struct(self, struct: Struct, obs: StructObservation) -> list[list[Any] | None]:
        """The values of every column of ``struct``, aligned with ``obs.rows``."""
        if not obs.path:  # hinted decimal columns, as the upsolver policy sees them
            struct = lattice_view(struct, self.options)
        return [self.route_column(col, obs.fields.get(col.family)) for col in struct.fields]

    def route_column(self, col: Column, fobs: FieldObservation | None) -> list[Any] | None:
        if fobs is None or not fobs.counts:
            return None
        if isinstance(col.type, MapOf):
            return self._route_map(col, fobs)
        if col.shape.type == RECORD:
            return self._route_records(col, fobs)
        shape = col.shape
        if (
            fobs.plain
            and shape.type in _PYTHON_TYPE
            and all(k.dim == shape.dim and k.type in (None, shape.type) for k in fobs.counts)
        ):
            # every array already is what the column holds (regular, leaves of its exact
            # Python type): taken as it is, like the flat arrays of ``_converter``
            return fobs.values
        u = fobs.uniform
        if u is not None:
            if self.rule(u, col) is None:
                return None
            if u in _AS_IS and u.shape == col.shape:
                return fobs.values
            convert = self._converter(u, col)
            return [None if v is None else convert(v) for v in fobs.values]
        # per kind: the Python type of values already in the column's form, and the converter
        cache: dict[Kind, tuple[type | None, Callable[[Any], Any] | None]] = {}
        out: list[Any] = []
        append = out.append
        for v, k in zip(fobs.values, fobs.iter_kinds(), strict=True):
            if k is None:
                append(None)
                continue
            try:
                as_is, fn = cache[k]
            except KeyError:
                if self.rule(k, col) is None:
                    as_is, fn = None, None
                else:
                    same = k in _AS_IS and k.shape == col.shape
                    as_is = _PYTHON_TYPE[k.type] if same and k.type else None
                    fn = self._converter(k, col)
                cache[k] = as_is, fn
            if type(v) is as_is:
                append(v)
            else:
                append(None if fn is None else fn(v))
        return out

    def _route_map(self, col: Column, fobs: FieldObservation) -> list[Any] | None:
        """docs/rules.md, *Maps under automatic evolution*: a JSON object whose values all
        fit a declared ``map<string, V>`` is written into it, each value converted exactly
        as into a column of type V (RULES 3.1, 2); other values stay null there."""
        value = map_value_column(col)
        if value is None:
            return None
        kind = self.classifier.kind
        fits = [type(v) is dict and object_fits(self.lattice, col, v, kind) for v in fobs.values]
        if not any(fits):
            return None
        values = [x for v, ok in zip(fobs.values, fits, strict=True) if ok for x in v.values()]
        if isinstance(value.type, Struct):  # records routed field by field (RULES 3.4)
            records = [x for x in values if x is not None]
            rows = iter(self.rows(value.type, observe_struct(records, self.classifier)))
            converted = iter([None if x is None else next(rows) for x in values])
        else:
            cache: dict[Kind, Callable[[Any], Any]] = {}

            def one(x: Any) -> Any:
                k = kind(x)
                if k is None:
                    return None
                if k not in cache:
                    cache[k] = self._converter(k, value)
                return cache[k](x)

            converted = iter([one(x) for x in values])
        return [
            {key: next(converted) for key in v} if ok else None
            for v, ok in zip(fobs.values, fits, strict=True)
        ]

    def _converter(self, k: Kind, col: Column) -> Callable[[Any], Any]:
        """value of kind ``k`` -> its form in ``col`` (None where it cannot be exact)."""
        shape = col.shape
        physical = col.leaf
        assert isinstance(physical, str) and shape.type is not None
        target = shape.type
        convert = self.conversions.convert
        naive = physical == "timestamp"  # a declared timestamp without zone

        def scalar(v: Any, from_type: str) -> Any:
            out = convert(v, from_type, target)
            if out is LOSSY:
                raise _Skip
            if naive and isinstance(out, dt.datetime):
                out = out.replace(tzinfo=None)
            return out

        if k.dim == 0:
            from_type = k.type
            assert from_type is not None
            if shape.dim == 0 and not naive:
                direct = self._direct(from_type, target)
                if direct is not None:
                    return direct

            def one(v: Any) -> Any:
                try:
                    return wrap(scalar(v, from_type), shape.dim)
                except _Skip:
                    return None

            return one

        kind_of = self.classifier.kind

        def leaf(x: Any) -> Any:
            lk = kind_of(x)
            assert lk is not None
            if lk.type == RECORD:  # a mixed array's record: its record column has it
                return None
            if lk.type is None:
                raise _Skip
            return scalar(x, lk.type)

        as_is = _PYTHON_TYPE.get(target) if k.dim == 1 and not naive else None

        def array(v: Any) -> Any:
            if as_is is not None:  # a flat array whose leaves need no conversion
                types = set(map(type, v))
                types.discard(_NONE)
                if types <= {as_is}:
                    return wrap(v, shape.dim - 1)
            try:
                return wrap(normalize(v, k.dim, leaf), shape.dim - k.dim)
            except _Skip:
                return None

        return array

    def _direct(self, from_type: str, target: str) -> Callable[[Any], Any] | None:
        """A scalar -> scalar converter without the generic dispatch of ``convert``, for the
        common cases; None for the others."""
        table = self.conversions.table
        if from_type in ("boolean", "long", "double") and from_type != target:
            fn = table.get((from_type, target))  # ``own`` is the value itself
            if fn is None:
                return None

            def number(v: Any) -> Any:
                out = fn(v)
                return None if out is LOSSY else out

            return number
        if from_type in ("timestamp", "date") and target != "string":
            # the text was parsed when it was observed: reuse that value
            parsed = self.classifier.parsed
            own = self.conversions.own
            fn2 = None if from_type == target else table.get((from_type, target))
            if fn2 is None and from_type != target:
                return None

            def temporal(v: Any) -> Any:
                p = parsed.get(v) if type(v) is str else None
                if p is None:
                    p = own(v, from_type)
                out = p if fn2 is None else fn2(p)
                return None if out is LOSSY else out

            return temporal
        return None

    def _route_records(self, col: Column, fobs: FieldObservation) -> list[Any] | None:
        """RULES 3.4: records go into every record column of dimension >= theirs; the
        column's struct routes their fields recursively."""
        rules = {k: self.rule(k, col) for k in fobs.counts}
        if not any(rules.values()):
            return None
        leaf_struct = col.leaf
        assert isinstance(leaf_struct, Struct)
        nested = fobs.nested(col.shape.dim)
        routed: Iterator[dict[str, Any]] = iter(self.rows(leaf_struct, nested))
        out: list[Any] = []
        plain = fobs.plain
        for v, k in zip(fobs.values, fobs.iter_kinds(), strict=True):
            r = None if k is None else rules[k]
            if r is None or k is None:
                out.append(None)
            elif r.how == "empty":  # [] goes to any array column
                out.append(wrap(normalize(v, k.dim, _no_leaf), r.wrap))
            elif k.dim == 0:
                out.append(wrap(next(routed), r.wrap))
            elif plain and k.dim == 1:  # a regular list of records: its rows, in order
                out.append(wrap(list(islice(routed, len(v))), r.wrap))
            else:  # a mixed array's primitives are null here (docs/rules.md)
                out.append(wrap(normalize(v, k.dim, lambda x: _record(x, routed)), r.wrap))
        return out


def _record(x: Any, routed: Iterator[dict[str, Any]]) -> Any:
    """A record leaf's routed row; null for a primitive leaf (a mixed array's)."""
    return next(routed) if type(x) is dict else None


def _no_leaf(x: Any) -> Any:
    raise AssertionError(f"an array without typed leaves has a leaf: {x!r}")


def normalize(value: list[Any], depth: int, leaf: Callable[[Any], Any]) -> list[Any]:
    """An array at exactly ``depth`` levels with converted leaves: RULES 1 ragged arrays
    take the largest depth and shallower leaves are wrapped (``[1, [2]]`` -> ``[[1], [2]]``);
    null elements stay null."""
    out: list[Any] = []
    for x in value:
        if type(x) is list:
            out.append(normalize(x, depth - 1, leaf))
        elif x is None:
            out.append(None)
        else:
            out.append(wrap(leaf(x), depth - 1))
    return out


def conform(value: Any, old: Any, new: Any, rewritten: Mapping[int, int] | None = None) -> Any:
    """A value written under an older type, as a reader of the newer type sees it: struct
    fields matched by field ID, fields added since read as null (RULES 3.5), widened
    fields converted (RULES 5). ``rewritten`` maps the ID of a rewritten field to the ID
    it had when the value was written (a rewrite converts the old values)."""
    if value is None or old == new:
        return value
    if isinstance(new, ListOf) and isinstance(old, ListOf):
        return [conform(x, old.element, new.element, rewritten) for x in value]
    if isinstance(new, Struct) and isinstance(old, Struct):
        by_id = {c.id: c for c in old.fields}
        out = {}
        for c in new.fields:
            o = by_id.get(c.id)
            while o is None and rewritten and c.id in rewritten:  # a rewritten field
                o = by_id.get(rewritten[c.id])
                c = replace(c, id=rewritten[c.id])
            out[c.name] = (
                None if o is None else conform(value.get(o.name), o.type, c.type, rewritten)
            )
        return out
    if isinstance(old, str) and isinstance(new, str):
        return retype_value(value, old, new)  # RULES 5: a widened column
    return value


@dataclass(frozen=True)
class Landing:
    """Where one input value lands: a column, and the value as that column holds it."""

    key: str
    value: Any
    kind: Kind
    column: str
    stored: Any

    @property
    def converted(self) -> bool:
        return type(self.stored) is not type(self.value) or self.stored != self.value


def explain_record(router: Router, struct: Struct, record: dict[str, Any]) -> list[Landing]:
    """Every column each top-level value of ``record`` is written to (RULES 3.1), in schema
    order: what a preview shows per sample record. Records land whole in record columns.
    A hinted value lands as the engine routes it, converted first (docs/rules.md, Type
    hints); its landing shows the value as it came."""
    obs = observe_struct(hinted_rows([record], router.options), router.classifier)
    routed = router.route_struct(struct, obs)
    out = []
    for col, values in zip(struct.fields, routed, strict=True):
        if values is None or values[0] is None:
            continue
        fobs = obs.fields[col.family]
        kind = fobs.kind_at(0)
        assert kind is not None
        out.append(Landing(col.family, record.get(col.family, fobs.values[0]), kind, col.name,
                           values[0]))
    return out


def set_aside_rare(
    plan: Plan, obs: StructObservation, batch: int | str = 0, on_incompatible: str = "quarantine"
) -> tuple[list[dict[str, Any]], list[Quarantined]]:
    """The records of ``obs`` the plan writes, and those holding a value of one of its rare
    types (``plan.rare``, the ``upsolver`` policy's rare-type threshold) set aside whole, in
    order; with ``on_incompatible="fail"`` the first one raises
    :class:`~toolkit.errors.IncompatibleRecordError` instead. A record is set aside for
    the first rare type it holds, in the plan's order (docs/rules.md, *Rare types*).

    >>> from toolkit.core.policies.upsolver_planner import plan_batch
    >>> from toolkit.core.batch.options import Options
    >>> opts = Options(rare_type_percent=10)
    >>> batch = [{"n": i} for i in range(19)] + [{"n": "many"}]
    >>> obs = observe_struct(batch, opts)
    >>> kept, aside = set_aside_rare(plan_batch(Struct(), obs, opts), obs)
    >>> len(kept), aside[0].record, aside[0].reason, aside[0].table_type
    (19, {'n': 'many'}, 'rare-type', 'long')
    """
    if not plan.rare:
        return obs.rows, []
    by_key: dict[str, list[RareType]] = {}
    for r in plan.rare:
        by_key.setdefault(r.key, []).append(r)
    held: list[RareType | None] = [None] * len(obs.rows)
    for key, rare in by_key.items():
        fobs = obs.fields.get(key)
        if fobs is None:
            continue
        for i, k in enumerate(fobs.iter_kinds()):
            if k is not None and held[i] is None:
                held[i] = next((t for t in rare if k in t.kinds), None)
    family = {key: ", ".join(
        type_to_str(c.type) for c in plan.after.fields if c.family == key
    ) or None for key in by_key}
    kept: list[dict[str, Any]] = []
    aside: list[Quarantined] = []
    for row, rare_type in zip(obs.rows, held, strict=True):
        if rare_type is None:
            kept.append(row)
            continue
        item = Quarantined(
            row, "rare-type", rare_type.key, str(rare_type.shape), family[rare_type.key],
            batch, str(rare_type),
        )
        if on_incompatible == "fail":
            raise IncompatibleRecordError(item)
        aside.append(item)
    return kept, aside
