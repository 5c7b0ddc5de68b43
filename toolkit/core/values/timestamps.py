"""Timestamp formats and epoch units a field arrived in (docs/rules.md, *Timestamp
formats and epoch units*).

RULES 1 types ISO texts as dates and timestamps whatever their spelling, and RULES 2
reads a long written into a timestamp column by its magnitude. Both hide how a field's
times really arrived: ISO texts with and without an offset (those without are read as
UTC), epoch seconds beside epoch milliseconds. The profile counts them per field, so a
long column holding mixed epoch units is visible before it is queried.

Counting is per value (per leaf in arrays), by *label*:

- a value typed ``timestamp`` or ``date`` (RULES 1): its format, ``iso_offset`` (an ISO
  date-time text with ``Z`` or an offset), ``iso_local`` (an ISO date-time text without
  one), ``iso_date`` (``YYYY-MM-DD``), or for typed sources ``datetime_aware``,
  ``datetime_naive``, ``date_value``;
- a whole number (a value typed ``long``): ``epoch_s``, ``epoch_ms``, ``epoch_us`` or
  ``epoch_ns`` when it *looks like an epoch time*, else ``other_long``.

**Looks like an epoch time**: the unit RULES 2 reads from its magnitude
(:func:`~toolkit.core.values.conversions.epoch_unit_of`, the rule ``long_timestamp_unit="auto"``
uses) puts its instant in :data:`EPOCH_WINDOW`, from 2000-01-01 to 2100-01-01. Each
unit's window lies inside that unit's band of magnitudes, so the window never contradicts
the unit the conversion would take. Counters, sizes and small ids are never in it
(the window starts at 946,684,800).

The counts are kept whatever the field; a :class:`TimestampReport` *shows* epoch units
only for a field that is a time field: it also arrived as timestamps or dates, or its name
says time (``created_at``, ``updatedAt``, ``event_ts``, ``epoch``...). So ids in the
billions are not reported as epoch seconds.

>>> tally([1704164645, 1704164645000, 7, "2024-01-02T03:04:05Z"],
...       [Kind("long", 0)] * 3 + [Kind("timestamp", 0)])
{'epoch_s': 1, 'epoch_ms': 1, 'other_long': 1, 'iso_offset': 1}
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import Any, Final

from toolkit.core.values.conversions import epoch_unit_of
from toolkit.core.values.types import Kind, Shape
from toolkit.core.values.wording import and_join

__all__ = [
    "EPOCH_UNITS",
    "EPOCH_WINDOW",
    "FORMATS",
    "TimestampReport",
    "epoch_label",
    "looks_like_time",
    "report",
    "tally",
]

#: the instants a whole number must denote, in the unit its magnitude implies, to count
#: as an epoch time: [2000-01-01, 2100-01-01)
EPOCH_WINDOW: Final = (
    dt.datetime(2000, 1, 1, tzinfo=dt.UTC),
    dt.datetime(2100, 1, 1, tzinfo=dt.UTC),
)
_PER_SECOND: Final[dict[str, int]] = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_WINDOW_SECONDS: Final = tuple(int((t - _EPOCH).total_seconds()) for t in EPOCH_WINDOW)

#: labels of formats, in the order reports list them, and how they read
FORMATS: Final[dict[str, str]] = {
    "iso_offset": "ISO date-times with an offset",
    "iso_local": "ISO date-times without an offset (read as UTC)",
    "iso_date": "ISO dates",
    "datetime_aware": "date-times with a time zone",
    "datetime_naive": "date-times without a time zone (read as UTC)",
    "date_value": "dates",
}
#: epoch units (RULES 2 names), their labels and how they read
EPOCH_UNITS: Final[dict[str, str]] = {
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
}
OTHER_LONG: Final = "other_long"
_TEMPORAL_TYPES: Final = frozenset({"timestamp", "date"})
_COUNTED_TYPES: Final = frozenset({"timestamp", "date", "long"})
#: words of a field name that say it holds times
TIME_WORDS: Final = frozenset({
    "at", "time", "times", "timestamp", "ts", "date", "datetime", "epoch", "created",
    "updated", "modified", "deleted", "expires", "expiry", "expiration", "when",
})
_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def epoch_label(v: int) -> str:
    """``epoch_<unit>`` when ``v`` looks like an epoch time, else ``other_long``.

    >>> epoch_label(1_717_315_254), epoch_label(1_717_315_254_178), epoch_label(42)
    ('epoch_s', 'epoch_ms', 'other_long')
    >>> epoch_label(1_717_315_254_178_000_000), epoch_label(5_000_000_000)  # 2128: outside
    ('epoch_ns', 'other_long')
    """
    unit = epoch_unit_of(v)
    per = _PER_SECOND[unit]
    lo, hi = _WINDOW_SECONDS
    return f"epoch_{unit}" if lo * per <= v < hi * per else OTHER_LONG


def _has_offset(text: str) -> bool:
    """Whether an ISO date-time text (one RULES 1 typed as a timestamp) has ``Z`` or an
    offset: it ends with Z, or holds a sign after its ``YYYY-MM-DDTHH:MM`` (the date's
    dashes come before)."""
    return text[-1] == "Z" or "+" in text[16:] or "-" in text[16:]


def _text_label(text: str) -> str:
    """The format of an ISO text RULES 1 typed as a date or a timestamp."""
    if len(text) == 10:
        return "iso_date"
    return "iso_offset" if _has_offset(text) else "iso_local"


#: the window of each unit, as whole numbers of that unit: ``epoch_label`` is
#: ``epoch_<unit>`` exactly inside one (each lies inside its unit's band of magnitudes;
#: tests/core/test_timestamp_report.py checks it against :func:`epoch_unit_of`)
_WINDOWS: Final = tuple(
    (f"epoch_{unit}", _WINDOW_SECONDS[0] * per, _WINDOW_SECONDS[1] * per)
    for unit, per in _PER_SECOND.items()
)


def _label(v: Any) -> str | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return epoch_label(v)
    if isinstance(v, str):
        return _text_label(v)
    if isinstance(v, dt.datetime):
        return "datetime_naive" if v.tzinfo is None else "datetime_aware"
    if isinstance(v, dt.date):
        return "date_value"
    return None  # booleans in a long array, say


def _leaves(v: Any) -> Iterator[Any]:
    stack = [v]
    while stack:
        x = stack.pop()
        if type(x) is list:
            stack.extend(reversed(x))
        elif x is not None:
            yield x


def tally(
    values: Iterable[Any], kinds: Iterable[Kind | None], uniform: Kind | None = None
) -> dict[str, int]:
    """Counts per label of the values typed ``timestamp``, ``date`` or ``long`` (leaves of
    arrays one by one), aligned with their kinds. ``uniform``: every non-null value has
    this kind (an observation's fast path). Whole columns are counted with C-level steps
    (a sort for whole numbers), not a Python call per value: the engine profiles every
    batch it ingests."""
    if uniform is not None and uniform.type not in _COUNTED_TYPES:
        return {}
    if uniform is not None:
        values = values if isinstance(values, list) else list(values)
        present = values if None not in values else [v for v in values if v is not None]
        group = "nested" if uniform.dim else "long" if uniform.type == "long" else "time"
        groups = {group: present}
    else:
        # one route per distinct kind (kinds are tuples: hashed in C), then each group
        # picked out of the column by ``compress``
        kinds = kinds if isinstance(kinds, list) else list(kinds)
        routes: dict[str, set[Kind]] = {}
        for k in set(kinds):
            if k is not None and k.type in _COUNTED_TYPES:
                group = "nested" if k.dim else "long" if k.type == "long" else "time"
                routes.setdefault(group, set()).add(k)
        values = values if isinstance(values, list) else list(values)
        groups = {g: list(compress(values, map(ks.__contains__, kinds)))
                  for g, ks in routes.items()}
    longs, times, nested = (groups.get(g, []) for g in ("long", "time", "nested"))
    out: dict[str, int] = {}
    _count_longs(longs, out)
    if set(map(type, times)) <= {str}:  # ISO texts only, the usual case
        texts, others = times, []
    else:
        texts = [v for v in times if type(v) is str]
        others = [v for v in times if type(v) is not str]
    _count_texts(texts, out)
    for leaf in chain(others, chain.from_iterable(map(_leaves, nested))):
        label = _label(leaf)
        if label is not None:
            out[label] = out.get(label, 0) + 1
    return out


def _count_texts(texts: list[str], out: dict[str, int]) -> None:
    """:func:`_text_label` counted over ISO texts RULES 1 typed (they match its pattern,
    ``YYYY-MM-DD[(T| )HH:MM[:SS[.f]]][Z|(+|-)HH[[:]MM]]``) by counting characters of
    them all at once: a ``Z`` or a ``+`` is always an offset, and every text has two
    dashes in its date, so the dashes beyond those are offsets too."""
    if not texts:
        return
    n = len(texts)
    dates = list(map(len, texts)).count(10)
    joined = "".join(texts)
    offsets = joined.count("Z") + joined.count("+") + joined.count("-") - 2 * n
    for label, k in (("iso_offset", offsets), ("iso_local", n - dates - offsets),
                     ("iso_date", dates)):
        if k:
            out[label] = out.get(label, 0) + k


def _count_longs(ints: list[Any], out: dict[str, int]) -> None:
    """:func:`epoch_label` counted over a column: the windows are intervals, so a sort
    and a bisection per bound count them (tests check it equals the label per value)."""
    if not ints:
        return
    if max(ints) < _WINDOW_SECONDS[0]:  # counters, sizes: no epoch time in any unit
        out[OTHER_LONG] = out.get(OTHER_LONG, 0) + len(ints)
        return
    ordered = sorted(ints)
    inside = 0
    for label, lo, hi in _WINDOWS:
        n = bisect_left(ordered, hi) - bisect_left(ordered, lo)
        if n:
            out[label] = out.get(label, 0) + n
            inside += n
    if len(ordered) - inside:
        out[OTHER_LONG] = out.get(OTHER_LONG, 0) + len(ordered) - inside


def add(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> dict[str, int] | None:
    """Counts merged; None (not gathered) wins, so a partial count never passes for whole."""
    if a is None or b is None:
        return None
    out = dict(a)
    for k, n in b.items():
        out[k] = out.get(k, 0) + n
    return out


def looks_like_time(name: str) -> bool:
    """Whether a field name says it holds times: one of its words (split at ``_``,
    ``-``, ``.``, spaces and camelCase) is in :data:`TIME_WORDS`.

    >>> [looks_like_time(n) for n in ("created_at", "updatedAt", "event_ts", "count", "data")]
    [True, True, True, False, False]
    """
    return any(w.lower() in TIME_WORDS for w in _WORD.findall(name))


@dataclass(frozen=True)
class TimestampReport:
    """The timestamp formats and epoch units one field arrived in."""

    path: tuple[str, ...]
    #: values typed timestamp or date, per format label (:data:`FORMATS`)
    formats: Mapping[str, int] = field(default_factory=dict)
    #: whole numbers that look like epoch times, per unit (``s``, ``ms``, ``us``, ``ns``);
    #: empty for a field that is not a time field
    units: Mapping[str, int] = field(default_factory=dict)
    #: whole numbers of a time field that look like no epoch time of 2000-2100
    other_longs: int = 0
    #: a time field: it arrived as timestamps or dates, or its name says time
    time_field: bool = False
    #: False when the profile did not count formats (the JVM tally of JSON lines)
    gathered: bool = True

    @property
    def mixed_units(self) -> bool:
        return len(self.units) > 1

    @property
    def mixed_formats(self) -> bool:
        return len(self.formats) > 1

    @property
    def mixed(self) -> bool:
        return self.mixed_units or self.mixed_formats

    @property
    def empty(self) -> bool:
        return not self.formats and not self.units

    def sentence(self) -> str | None:
        """One line for people (None when no time value arrived), e.g. ``created_at:
        1,200 whole numbers look like epoch milliseconds and 30 like epoch seconds:
        mixed units``."""
        if self.empty:
            return None
        parts = []
        fmts = [(n, FORMATS[k]) for k, n in _ordered(self.formats, FORMATS)]
        if fmts:
            (n0, w0), *rest = fmts
            head = f"{n0:,} {'value is' if n0 == 1 else 'values are'} {_one(w0, n0)}"
            parts.append(and_join([head, *(f"{n:,} {_one(w, n)}" for n, w in rest)]))
        units = [(n, EPOCH_UNITS[k]) for k, n in _ordered(self.units, EPOCH_UNITS)]
        if units:
            (n0, w0), *rest = units
            verb = "whole number looks" if n0 == 1 else "whole numbers look"
            phrases = [f"{n0:,} {verb} like epoch {w0}",
                       *(f"{n:,} like epoch {w}" for n, w in rest)]
            if self.other_longs:
                phrases.append(f"{self.other_longs:,} like no epoch time of 2000-2100")
            parts.append(and_join(phrases))
        elif self.other_longs:
            verb = "whole number looks" if self.other_longs == 1 else "whole numbers look"
            parts.append(f"{self.other_longs:,} {verb} like no epoch time of 2000-2100")
        verdict = [w for w, on in (("formats", self.mixed_formats), ("units", self.mixed_units))
                   if on]
        text = f"{'.'.join(self.path)}: {'; '.join(parts)}"
        return text + (f": mixed {and_join(verdict)}" if verdict else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "formats": dict(_ordered(self.formats, FORMATS)),
            "epoch_units": dict(_ordered(self.units, EPOCH_UNITS)),
            "other_longs": self.other_longs,
            "mixed_formats": self.mixed_formats,
            "mixed_units": self.mixed_units,
            "sentence": self.sentence(),
        }


def _one(words: str, n: int) -> str:
    """``ISO dates`` -> ``ISO date`` for one value (the plural is the words' first noun)."""
    if n != 1:
        return words
    head, _, tail = words.partition(" with")
    head = head.replace("date-times", "date-time").replace("dates", "date")
    return head + (" with" + tail if tail else "")


def _ordered(counts: Mapping[str, int], order: Mapping[str, str]) -> list[tuple[str, int]]:
    """Most frequent first; ties in the order of ``order``."""
    rank = {k: i for i, k in enumerate(order)}
    return sorted(counts.items(), key=lambda kv: (-kv[1], rank.get(kv[0], len(rank))))


def report(
    path: tuple[str, ...], counts: Mapping[Shape, int], labels: Mapping[str, int] | None
) -> TimestampReport:
    """The report of one profiled field: its shapes' counts and its label counts (None:
    not gathered)."""
    if labels is None:
        return TimestampReport(path, gathered=False)
    time_field = any(s.type in _TEMPORAL_TYPES for s in counts) or (
        bool(path) and looks_like_time(path[-1])
    )
    formats = {k: n for k, n in labels.items() if k in FORMATS}
    units: dict[str, int] = {}
    if time_field:
        units = {k[len("epoch_"):]: n for k, n in labels.items() if k.startswith("epoch_")}
    other = labels.get(OTHER_LONG, 0) if units or formats else 0
    return TimestampReport(path, formats, units, other, time_field)
