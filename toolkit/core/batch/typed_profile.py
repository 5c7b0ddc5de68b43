"""Typed columns observed and routed a column at a time (RULES 1-3), without their values.

A typed column (Parquet, ORC, a Spark DataFrame, an Arrow, pandas or Polars frame) already
knows its type, so the kind of each of its values (RULES 1) is decided by the column's type
and, for a few types, by one test on the value: a long beyond 2**53 that a double would
round, a text that spells an ISO date, a timestamp with digits below the epoch unit. Each
such test splits a column into *value classes*; every value of one class has the same kind,
which the core :class:`~toolkit.core.batch.observe.Classifier` gives by typing one representative
value of the class. So a batch's :class:`~toolkit.core.batch.summary.Summary` is the count of
every class of every column (``toolkit.spark.columnar`` counts them in one Spark
aggregation), and routing (RULES 3.1) is a column-to-column projection: each value of a
class lands in the columns :meth:`~toolkit.core.batch.routing.Router.rule` says, converted from
its kind's type to the column's.

A class whose values do not share one kind (a text that looks like a date-time: its kind
depends on its digits; a decimal of more digits than the evolved decimal column holds) has
no representative: a batch with such values is observed by the Python path, value by
value, as before. Nothing here guesses.

>>> from toolkit.core.batch.options import Options
>>> opts = Options()
>>> kinds = class_kinds("long", {"exact": 3, "lossy": 1}, opts)
>>> kinds["exact"], kinds["lossy"]
(Kind(type='long', dim=0, lossy=frozenset()), Kind(type='long', dim=0, lossy=frozenset({'double'})))
>>> s = typed_summary({"n": kinds}, {"n": {"exact": 3, "lossy": 1}}, 4)
>>> s.rows, s.fields["n"].counts[kinds["exact"]]
(4, 3)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from toolkit.core.batch.observe import Classifier
from toolkit.core.batch.options import Options
from toolkit.core.batch.routing import Router
from toolkit.core.batch.summary import FieldSummary, Summary
from toolkit.core.values.scalars import Float, Int
from toolkit.core.values.types import DECIMAL_DIGITS, Column, Kind, ListOf, Struct

__all__ = [
    "PYTHON",
    "SOURCE_TYPES",
    "Landing",
    "Target",
    "class_kinds",
    "decimal_source",
    "foreseen_kinds",
    "projection",
    "typed_summary",
    "usual_summary",
    "value_classes",
]

#: the representative of a class whose values the columnar path cannot type alike: a
#: batch holding any goes to the Python path
PYTHON: Final = object()

_UTC = dt.UTC
#: The types of typed columns this path knows, and the classes each splits into, with a
#: representative value as the Python path reads one of the class (``toolkit.arrow``).
#: The order of classes is the order of the tests ``toolkit.spark.columnar`` makes.
_CLASSES: Final[dict[str, tuple[tuple[str, Any], ...]]] = {
    "boolean": (("all", True),),
    # RULES 1: an int, short or byte column's values are ``Int`` (long, or int under widen)
    "byte": (("all", Int(1)),),
    "short": (("all", Int(1)),),
    "int": (("all", Int(1)),),
    # RULES 2: a long beyond 2**53 that a double rounds converts to no double
    "long": (("exact", 1), ("lossy", 2**53 + 1)),
    "float": (("all", Float(0.5)),),
    "double": (("all", 0.5),),
    # RULES 1: an ISO date text is a date; one that may be a date-time, or that starts
    # like one without being a date, is typed value by value in Python
    "string": (("text", "x"), ("date", "2024-01-01"), ("other", PYTHON)),
    "date": (("all", dt.date(2024, 1, 1)),),
    # RULES 2: digits below the epoch unit convert to no long (nor double); a timestamp
    # out of Python's years (1-9999) is typed in Python
    "timestamp": (
        ("whole", dt.datetime(2024, 1, 1, tzinfo=_UTC)),
        ("fraction", dt.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=_UTC)),
        ("far", PYTHON),
    ),
    # a decimal column whose every value the evolved decimal column holds exactly
    "decimal": (("all", Decimal("1")),),
}
#: the source types of typed columns (``decimal``: those :func:`decimal_source` admits)
SOURCE_TYPES: Final = frozenset(_CLASSES)


def decimal_source(precision: int, scale: int) -> bool:
    """Whether every value of a ``decimal(precision, scale)`` column fits the evolved
    decimal column (``DECIMAL_TYPE``) exactly, so all are one kind (RULES 1, typed values).

    >>> decimal_source(10, 2), decimal_source(38, 20), decimal_source(38, 10)
    (True, False, False)
    """
    whole, fraction = DECIMAL_DIGITS[0] - DECIMAL_DIGITS[1], DECIMAL_DIGITS[1]
    return scale <= fraction and precision - scale <= whole


def value_classes(source_type: str, options: Options) -> tuple[str, ...]:
    """The names of the classes a column of ``source_type`` splits into under ``options``.

    >>> value_classes("string", Options()), value_classes("string", Options(detect_dates=False))
    (('text', 'date', 'other'), ('text',))
    >>> value_classes("timestamp", Options(timestamp_unit="us"))
    ('whole', 'far')
    """
    names = tuple(name for name, _ in _CLASSES[source_type])
    if source_type == "string" and not options.detect_dates:
        return ("text",)  # RULES 1: detection switched off, every text is a string
    if source_type == "timestamp" and options.timestamp_unit == "us":
        # every microsecond is a whole epoch unit; whether a double holds the count
        # depends on the value: such timestamps (digits below the second, beyond 2**53
        # microseconds) are in the class the Python path types
        return ("whole", "far")
    return names


def class_kinds(
    source_type: str, counts: Mapping[str, int], options: Options
) -> dict[str, Kind] | None:
    """The kind of every class of a column that holds values (``counts`` by class), as
    the core classifier types the class's representative; None when a class that holds
    values has none (the batch goes to the Python path)."""
    classifier = Classifier(options)
    out: dict[str, Kind] = {}
    for name, representative in _CLASSES[source_type]:
        if not counts.get(name):
            continue
        if representative is PYTHON:
            return None
        kind = classifier.kind(representative)
        assert kind is not None
        out[name] = kind
    return out


def foreseen_kinds(source_type: str, options: Options) -> dict[str, Kind]:
    """The kind of every class of a column of ``source_type`` that has one: what a
    projection made before the batch is counted foresees (a value of another class is
    found in the counts afterwards, and the batch is done again).

    >>> sorted(foreseen_kinds("string", Options()))
    ['date', 'text']
    """
    names = value_classes(source_type, options)
    classes = {n: 1 for n, v in _CLASSES[source_type] if n in names and v is not PYTHON}
    found = class_kinds(source_type, classes, options)
    assert found is not None
    return found


def usual_summary(source_types: Mapping[str, str], options: Options) -> Summary:
    """The summary of a batch of typed columns (``source_types`` by name) as if each
    column held values of its first class only (a long a double holds, a text that is no
    date, a timestamp of whole units...): the guess a new table is made from before its
    first batch is read, and that the batch's counts then confirm or refute.

    >>> usual_summary({"n": "long", "s": "string"}, Options()).fields["s"].counts
    {Kind(type='string', dim=0, lossy=frozenset()): 1}
    """
    kinds = {n: foreseen_kinds(t, options) for n, t in source_types.items()}
    counts = {n: {value_classes(t, options)[0]: 1} for n, t in source_types.items()}
    return typed_summary(kinds, counts, 1)


def typed_summary(
    kinds: Mapping[str, Mapping[str, Kind]], counts: Mapping[str, Mapping[str, int]], rows: int
) -> Summary:
    """The summary of a batch of ``rows`` records of typed columns: per column, the count
    of each kind over its classes (a column of nulls only has no kind, and is a key all
    the same, as in the Python path's observation)."""
    fields = {}
    for name in sorted(counts):
        by_kind: dict[Kind, int] = {}
        for cls, n in counts[name].items():
            if n:
                k = kinds[name][cls]
                by_kind[k] = by_kind.get(k, 0) + n
        fields[name] = FieldSummary(by_kind)
    return Summary(fields, rows)


@dataclass(frozen=True)
class Landing:
    """The values of one class of one source column written into a target column:
    converted from ``from_type`` (their kind's) to the column's ``to_type`` (its Iceberg
    leaf type), under ``wrap`` list levels (RULES 3: 5 -> [5])."""

    source: str
    value_class: str
    from_type: str
    to_type: str
    wrap: int = 0


@dataclass(frozen=True)
class Target:
    """One column of the table, and the classes of values written into it (none: null)."""

    name: str
    landings: tuple[Landing, ...] = ()


def projection(
    schema: Struct, kinds: Mapping[str, Mapping[str, Kind]], options: Options
) -> tuple[Target, ...] | None:
    """RULES 3.1 for a batch of typed columns: what each column of ``schema`` (the plan's)
    receives, class by class, as :meth:`~toolkit.core.batch.routing.Router.rule` decides for
    the class's kind. None when a value lands where a column-wise conversion cannot take
    it (a record column, a map, a list of lists): the Python router does the batch."""
    router = Router(options)
    out = []
    for col in schema.fields:
        landings = []
        for cls, kind in kinds.get(col.family, {}).items():
            rule = router.rule(kind, col)
            if rule is None:
                continue
            leaf = _scalar_leaf(col)
            if rule.how != "convert" or leaf is None or kind.type is None:
                return None
            landings.append(Landing(col.family, cls, kind.type, leaf, rule.wrap))
        out.append(Target(col.name, tuple(landings)))
    return tuple(out)


def _scalar_leaf(col: Column) -> str | None:
    """The Iceberg type of a column's leaves under at most one list level, else None."""
    t = col.type
    if isinstance(t, ListOf):
        t = t.element
    return t if isinstance(t, str) else None
