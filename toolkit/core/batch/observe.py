"""RULES 1: the observed kind of every value of a batch, column by column.

A batch is observed one struct level at a time: for each key, the list of its values
(aligned with the rows), their kinds, and for records the nested observation. Working
a column at a time lets the common case (every value of a key of one type) be decided
by C-level ``set(map(type, values))`` instead of a Python loop per value.

>>> from toolkit.core.batch.options import Options
>>> obs = observe_struct([{"a": 1, "b": "2024-01-02"}, {"a": 2.5}], Options())
>>> sorted(str(k.shape) for k in obs.fields["a"].counts)
['double', 'long']
>>> obs.fields["b"].nulls
1
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import chain, compress, repeat
from operator import is_, is_not
from typing import Any, Final

from toolkit.core.batch.settings import Settings
from toolkit.core.values.conversions import (
    LOSSY,
    MICROS_PER,
    as_utc,
    bytes_text,
    decimal_fits,
    long_to_double,
    parse_date,
    parse_timestamp,
)
from toolkit.core.values.scalars import Float, Int
from toolkit.core.values.types import DECIMAL_DIGITS, RECORD, Kind
from toolkit.errors import NestingTooDeepError, NoExactTypeError, UnsupportedValueError

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
_DOUBLE_EXACT: Final = 2**53

K_BOOLEAN: Final = Kind("boolean", 0)
K_LONG: Final = Kind("long", 0)
K_DOUBLE: Final = Kind("double", 0)
K_DATE: Final = Kind("date", 0)
K_TIMESTAMP: Final = Kind("timestamp", 0)
K_STRING: Final = Kind("string", 0)
K_RECORD: Final = Kind(RECORD, 0)
K_EMPTY1: Final = Kind(None, 1)
K_LONG1: Final = Kind("long", 1)
K_STRING1: Final = Kind("string", 1)
K_INT: Final = Kind("int", 0)
K_FLOAT: Final = Kind("float", 0)
K_DECIMAL: Final = Kind("decimal", 0)
K_BINARY: Final = Kind("binary", 0)
#: bytes that are not UTF-8 text: no exact string form (RULES 2, per value)
K_BINARY_NOT_TEXT: Final = Kind("binary", 0, frozenset({"string"}))
_FLAT: Final[dict[type, Kind]] = {
    bool: Kind("boolean", 1),
    float: Kind("double", 1),
    dt.date: Kind("date", 1),
    dict: Kind(RECORD, 1),
}
_NONE: Final = type(None)
#: the kind name of a level of array leaves that all have one of these Python types
_LEAF_NAME: Final[dict[type, str]] = {
    bool: "boolean",
    int: "long",
    float: "double",
    str: "string",
    dict: RECORD,
}
#: kinds decided by the Python type alone (the others need the value: int, str, list...)
_CONST_KINDS: Final[dict[type, Kind | None]] = {
    _NONE: None,
    bool: K_BOOLEAN,
    float: K_DOUBLE,
    dict: K_RECORD,
    dt.date: K_DATE,
}

_EMPTY: Final[dict[str, Any]] = {}

#: The deepest nesting of objects and arrays a record may have, the record itself counted
#: (``{"a": [1]}`` is 2 deep). Deeper values are refused with a clear error (or
#: quarantined) rather than failing or stalling downstream: Arrow's IPC (Spark's workers)
#: stops at 64 levels, Arrow's Parquet reader (PyIceberg) at 49 list levels, DuckDB's
#: reading time grows threefold per list level past 20 (minutes at 31), and pickle,
#: sqlglot and the engine's own walks recurse once per level.
MAX_DEPTH: Final = 20


def _decimal_kind(v: Decimal) -> Kind:
    """A decimal, when its Iceberg column (``DECIMAL_TYPE``) holds it exactly; else text,
    as RULES 1 keeps integers beyond 64 bits (docs/rules.md, typed values)."""
    return K_DECIMAL if decimal_fits(v, *DECIMAL_DIGITS) else K_STRING


def _binary_kind(v: bytes) -> Kind:
    return K_BINARY if bytes_text(v) is not LOSSY else K_BINARY_NOT_TEXT


class Classifier:
    """Gives each value its kind, under one set of options."""

    def __init__(self, options: Settings) -> None:
        self.options = options
        self.lattice = options.lattice
        self.conversions = options.conversions
        self._scalar: dict[type, Callable[[Any], Kind]] = {
            bool: lambda v: K_BOOLEAN,
            int: self._int_kind,
            float: lambda v: K_DOUBLE,
            str: self._str_kind,
            dt.datetime: self._datetime_kind,
            dt.date: lambda v: K_DATE,
            dict: lambda v: K_RECORD,
            list: self._array_kind,
            Decimal: _decimal_kind,
            bytes: _binary_kind,
        }
        # RULES 1, typed sources: int/short/byte count as long and float as double, but
        # under a policy that widens (RULES 5), which keeps their own types to widen them.
        own = options.policy.widens
        self._scalar[Int] = (lambda v: K_INT) if own else (lambda v: K_LONG)
        self._scalar[Float] = (lambda v: K_FLOAT) if own else (lambda v: K_DOUBLE)
        self._widest: dict[frozenset[Kind], Kind | None] = {}
        #: ISO texts this batch's observation parsed, for the router (the engine clears it)
        self.parsed: dict[str, dt.date] = {}
        self._per = MICROS_PER[options.timestamp_unit]
        self._array_kinds: dict[tuple[str | None, int], Kind] = {}
        #: the kinds of arrays seen with primitive leaves of several types (``[1, true]``):
        #: the profile counts their leaves (RULES 1 writes each as the widest)
        self.several_leaf_types: set[Kind] = set()

    def _flat_kind(self, t: type, v: list[Any]) -> Kind | None:
        """The kind of a flat array whose leaves all have Python type ``t``, when it is
        decided without looking at each leaf in Python; else None."""
        if t is str:
            if not self.options.detect_dates or not any(
                s[:4].isdigit() and s[4:5] == "-" for s in v if s is not None
            ):
                return K_STRING1
            return None
        if t is int:
            ints = [x for x in v if x is not None] if None in v else v
            ok = min(ints) >= -_DOUBLE_EXACT and max(ints) <= _DOUBLE_EXACT
            return K_LONG1 if ok else None
        return _FLAT.get(t)

    def kind(self, value: Any, path: Sequence[str] = ()) -> Kind | None:
        """The kind of one value; None for null."""
        if value is None:
            return None
        try:
            fn = self._scalar[type(value)]
        except KeyError:
            raise UnsupportedValueError(path, value) from None
        try:
            return fn(value)
        except NoExactTypeError:
            raise NoExactTypeError(path, value) from None
        except UnsupportedValueError as exc:  # a leaf of an array: named by its field
            if exc.path or not path:
                raise
            raise UnsupportedValueError(path, exc.value) from None

    def _int_kind(self, v: int) -> Kind:
        if -_DOUBLE_EXACT <= v <= _DOUBLE_EXACT:
            return K_LONG
        if v < INT64_MIN or v > INT64_MAX:
            return K_STRING  # RULES 1: beyond 64 bits, text keeps every digit
        return K_LONG if long_to_double(v) is not LOSSY else Kind("long", 0, frozenset({"double"}))

    def _str_kind(self, v: str) -> Kind:
        if not self.options.detect_dates or not (v[:4].isdigit() and v[4:5] == "-"):
            return K_STRING
        if len(v) == 10:
            d = parse_date(v)
            if d is None:
                return K_STRING
            self.parsed[v] = d
            return K_DATE
        ts = parse_timestamp(v)
        if ts is None:
            return K_STRING
        self.parsed[v] = ts
        return self._timestamp_kind(ts)

    def _datetime_kind(self, v: dt.datetime) -> Kind:
        try:
            as_utc(v)
        except OverflowError:  # its UTC instant is before year 1 or after 9999
            return K_STRING
        return self._timestamp_kind(v)

    def _timestamp_kind(self, v: dt.datetime) -> Kind:
        micro = v.microsecond
        # A whole number of epoch units (EPOCH is a whole second) converts exactly to long,
        # and to double too at s / ms units (2**53 ms is beyond year 9999).
        if micro == 0 or (self._per > 1 and micro % self._per == 0):
            return K_TIMESTAMP
        lossy = frozenset(
            t
            for t in self.lattice.up("timestamp")
            if t not in ("timestamp", "string")
            and self.conversions.convert(v, "timestamp", t) is LOSSY
        )
        return Kind("timestamp", 0, lossy) if lossy else K_TIMESTAMP

    def _array_kind(self, v: list[Any]) -> Kind:
        """RULES 1: dimension = nesting depth; element = widest of the leaves."""
        types = set(map(type, v))
        if list not in types:  # one level: most arrays are flat and of one type
            types.discard(_NONE)
            if not types:
                return K_EMPTY1
            if len(types) == 1:
                flat = self._flat_kind(types.pop(), v)
                if flat is not None:
                    return flat
        depth = 0
        leaves: set[Kind] = set()
        stack: list[tuple[list[Any], int]] = [(v, 1)]
        while stack:
            items, level = stack.pop()
            depth = max(depth, level)
            for x in items:
                if type(x) is list:
                    stack.append((x, level + 1))
                elif x is not None:
                    leaves.add(self.kind(x))  # type: ignore[arg-type]
        key = frozenset(leaves)
        try:
            elem = self._widest[key]
        except KeyError:
            elem = self._widest[key] = self.lattice.widest_kind(key)
        if elem is None and leaves:  # records beside primitives: a mixed array
            return self._mixed_kind(leaves, depth)
        if elem is None:
            return Kind(None, depth)
        if elem.type == "string" and any("string" in k.lossy for k in leaves):
            raise NoExactTypeError((), v)
        out = Kind(elem.type, depth, elem.lossy)
        if len({k.type for k in leaves}) > 1:
            self.several_leaf_types.add(out)
        return out

    def _mixed_kind(self, leaves: set[Kind], depth: int) -> Kind:
        """An array of records and primitives (docs/rules.md, mixed arrays): a record kind
        whose ``mixed`` is the widest of the primitive leaves (RULES 2), at the array's
        dimension; its records go to a record column, its primitives to a primitive one."""
        prims = frozenset(k for k in leaves if k.type != RECORD)
        try:
            widest = self._widest[prims]
        except KeyError:
            widest = self._widest[prims] = self.lattice.widest_kind(prims)
        assert widest is not None and widest.type is not None
        out = Kind(RECORD, depth, widest.lossy, widest.type)
        if len({k.type for k in prims}) > 1:
            self.several_leaf_types.add(out)
        return out


@dataclass
class FieldObservation:
    """Everything one batch says about one key of one struct level."""

    path: tuple[str, ...]
    values: list[Any]
    #: kind of each value, or None where ``uniform`` gives the kind of every non-null value
    kinds: list[Kind | None] | None
    uniform: Kind | None
    counts: dict[Kind, int]
    nulls: int
    classifier: Classifier
    #: every non-null value is a regular array whose leaves all have one exact Python type
    #: (see ``_regular_arrays``): a column of that very shape may take the values as they are
    plain: bool = False
    _nested: dict[int, StructObservation] = field(default_factory=dict, repr=False)
    #: objects and arrays around this key's values: 1 for the keys of a top-level record
    depth: int = 1

    def kind_at(self, i: int) -> Kind | None:
        if self.kinds is not None:
            return self.kinds[i]
        return None if self.values[i] is None else self.uniform

    def iter_kinds(self) -> Iterator[Kind | None]:
        if self.kinds is not None:
            return iter(self.kinds)
        u = self.uniform
        return (None if v is None else u for v in self.values)

    @property
    def record_dims(self) -> list[int]:
        return sorted({k.dim for k in self.counts if k.type == RECORD})

    def record_leaves(self, max_dim: int, min_dim: int = 0) -> list[dict[str, Any]]:
        """Every record leaf of the values that are records of dimension
        ``min_dim..max_dim``, in row order."""
        out: list[dict[str, Any]] = []
        for v, k in zip(self.values, self.iter_kinds(), strict=True):
            if k is not None and k.type == RECORD and min_dim <= k.dim <= max_dim:
                if k.dim == 0:
                    out.append(v)
                else:
                    _collect_dicts(v, out)
        return out

    def record_origins(self, max_dim: int) -> list[int] | None:
        """For each record of ``record_leaves(max_dim)``, the index of the value it came
        from (None when that is its own index: every value one record). Profiles use it to
        number a nested value by its top-level record; routing never needs it."""
        values = self.values
        if self.kinds is None and self.uniform is not None and self.uniform.dim == 0:
            if self.uniform.type != RECORD:
                return []
            if self.nulls == 0:
                return None
            # C-level: the places of the non-null values
            return list(compress(range(len(values)), map(is_not, values, repeat(None))))
        if self.kinds is not None and all(
            k.dim == 0 or k.type != RECORD or k.dim > max_dim for k in self.counts
        ):  # records of dimension 0 only: their kind is the constant K_RECORD (checked)
            places = list(compress(range(len(values)), map(is_, self.kinds, repeat(K_RECORD))))
            if len(places) == self.counts.get(K_RECORD, 0):
                return places
        out: list[int] = []
        for i, (v, k) in enumerate(zip(self.values, self.iter_kinds(), strict=True)):
            if k is not None and k.type == RECORD and k.dim <= max_dim:
                if k.dim == 0:
                    out.append(i)
                else:
                    found: list[dict[str, Any]] = []
                    _collect_dicts(v, found)
                    out += [i] * len(found)
        return out

    def nested(self, max_dim: int) -> StructObservation:
        """The observation of the records routed into a record column of dimension max_dim
        (RULES 3.4: a record column receives the records of its own and lower dimensions)."""
        dims = [d for d in self.record_dims if d <= max_dim]
        key = dims[-1] if dims else -1
        if key not in self._nested:
            self._nested[key] = observe_struct(
                self.record_leaves(max_dim), self.classifier, self.path, self.depth + key + 1
            )
        return self._nested[key]


    def records_at(self, dim: int) -> StructObservation:
        """The observation of the records of exactly this dimension (for summaries)."""
        return observe_struct(
            self.record_leaves(dim, dim), self.classifier, self.path, self.depth + dim + 1
        )


def _collect_dicts(v: list[Any], out: list[dict[str, Any]]) -> None:
    for x in v:
        if type(x) is dict:
            out.append(x)
        elif type(x) is list:
            _collect_dicts(x, out)


@dataclass
class StructObservation:
    """One struct level of a batch: its rows (dicts) and an observation per key."""

    path: tuple[str, ...]
    rows: list[dict[str, Any]]
    fields: dict[str, FieldObservation]
    #: the values type hints converted before these rows were observed, per key
    #: (:data:`toolkit.core.batch.hints.HintTally`; top level only: hints name top-level keys)
    hinted: dict[str, dict[tuple[str, str, str], tuple[int, Any, Any]]] = field(
        default_factory=dict)


def observe_struct(
    rows: list[dict[str, Any]],
    options: Settings | Classifier,
    path: tuple[str, ...] = (),
    depth: int = 1,
) -> StructObservation:
    """Observe every key of a list of records (one struct level, recursively on demand).

    ``depth`` is how deep the records are nested (1: top-level records); a value nested
    deeper than :data:`MAX_DEPTH` raises :class:`NestingTooDeepError`.
    """
    classifier = options if isinstance(options, Classifier) else Classifier(options)
    if depth > MAX_DEPTH and rows:
        raise NestingTooDeepError(path, depth, MAX_DEPTH)
    keys: set[str] = set().union(*rows) if rows else set()
    fields = {}
    for key in sorted(keys):
        values = [r.get(key) for r in rows]
        fobs = fields[key] = _observe_values((*path, key), values, classifier)
        fobs.depth = depth
        # array dimensions come from iterative walks; nothing recursive has seen them yet
        deepest = depth + max((k.dim for k in fobs.counts), default=0)
        if deepest > MAX_DEPTH:
            raise NestingTooDeepError(fobs.path, deepest, MAX_DEPTH)
    return StructObservation(path, rows, fields)


def _regular_arrays(arrays: list[list[Any]], classifier: Classifier) -> tuple[Kind, int] | None:
    """The kind every non-empty array of ``arrays`` has, and how many are empty, when all
    are regular: at each depth, every element a list, or every one a leaf of the same exact
    Python type (no null element, no empty list below the top). Decided a level at a time
    over the whole column with C-level ``chain`` / ``set(map(type))``; None otherwise (the
    arrays are then typed one by one)."""
    empties = arrays.count([])
    if empties == len(arrays):
        return None
    level = list(chain.from_iterable(arrays))
    dim = 1
    types = set(map(type, level))
    while types == {list}:
        if [] in level:
            return None
        level = list(chain.from_iterable(level))
        dim += 1
        types = set(map(type, level))
    if len(types) != 1:
        return None
    t = types.pop()
    name = _LEAF_NAME.get(t)
    if name is None:
        return None
    if t is int and not (min(level) >= -_DOUBLE_EXACT and max(level) <= _DOUBLE_EXACT):
        return None
    if t is str and classifier.options.detect_dates and any(
        s[:4].isdigit() and s[4:5] == "-" for s in level
    ):
        return None
    key = (name, dim)
    k = classifier._array_kinds.get(key)
    if k is None:
        k = classifier._array_kinds[key] = Kind(name, dim)  # type: ignore[arg-type]
    return k, empties


def _observe_values(
    path: tuple[str, ...], values: list[Any], classifier: Classifier
) -> FieldObservation:
    nulls = values.count(None)
    types = set(map(type, values))
    types.discard(type(None))
    present = len(values) - nulls
    uniform: Kind | None = None
    if types == {list}:
        arrays = values if nulls == 0 else [v for v in values if v is not None]
        regular = _regular_arrays(arrays, classifier)
        if regular is not None:
            k, empties = regular
            if not empties:
                counts = {k: present}
                return FieldObservation(path, values, None, k, counts, nulls, classifier, True)
            e1 = K_EMPTY1
            kinds = [None if v is None else k if v else e1 for v in values]
            full = present - empties
            counts = {k: full, e1: empties} if arrays[0] else {e1: empties, k: full}
            return FieldObservation(path, values, kinds, None, counts, nulls, classifier, True)
    if len(types) == 1:
        t = next(iter(types))
        if t is float:
            uniform = K_DOUBLE
        elif t is bool:
            uniform = K_BOOLEAN
        elif t is dict:
            uniform = K_RECORD
        elif t is dt.date:
            uniform = K_DATE
        elif t is int:
            ints = values if nulls == 0 else [v for v in values if v is not None]
            if min(ints) >= -_DOUBLE_EXACT and max(ints) <= _DOUBLE_EXACT:
                uniform = K_LONG
        elif t is str and (
            not classifier.options.detect_dates
            or not any(s[:4].isdigit() and s[4:5] == "-" for s in values if s is not None)
        ):
            uniform = K_STRING
    if uniform is not None or present == 0:
        counts = {uniform: present} if uniform is not None else {}
        return FieldObservation(path, values, None, uniform, counts, nulls, classifier)
    kind = classifier.kind
    const = _CONST_KINDS
    kinds = [const[type(v)] if type(v) in const else kind(v, path) for v in values]
    counter = Counter(kinds)
    counter.pop(None, None)
    return FieldObservation(
        path, values, kinds, None, dict(counter), nulls, classifier  # type: ignore[arg-type]
    )
