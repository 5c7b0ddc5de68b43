"""What arrived, per field: how many values of each type, and how many were null or missing.

Written data statistics count what was *written* to each column, so a value routed to
two columns of a family, or a list's elements, are counted once per column. A user asking
"how often did ``price`` arrive as a string?" needs what *arrived*: per field (a path of
keys, as the profile names it), the values of each RULES 1 type (``long``, ``string``,
``long[]``, ``record``...), with nulls and missing keys counted apart. Ingest records each
batch's arrivals with the batch (:mod:`toolkit.iceberg.statistics` reads them back from
the table's metadata alone); they merge by addition, like profiles.

With the counts go a few samples, as short texts taken from the profile's own samples (no
second look at the data), so that a table's statistics can show what a drifting value
looked like. Each batch's arrivals stay in the table's metadata, which every commit
rewrites (its cost grows with the metadata's size), so they are bounded (see
:meth:`Arrivals.of`): the types that are not a field's main type in the batch are sampled
first, at most :data:`SAMPLES_PER_DRIFT` texts per field and type (one of a main type),
each cut to :data:`SAMPLE_WIDTH` characters, at most :data:`BATCH_SAMPLES` per batch.

>>> from toolkit.core.batch.profile import profile
>>> a = Arrivals.of(profile([{"a": 1}, {"a": "x"}, {"a": None}, {"b": [1, 2]}]))
>>> a.arrived("a"), a.absent("a"), a.arrived("b")
({'long': 1, 'string': 1}, 2, {'long[]': 1})
>>> Arrivals.decode(a.encode()) == a
True
>>> (a + a).arrived("a"), a.shares("a")
({'long': 2, 'string': 2}, {'long': 0.5, 'string': 0.5})
>>> a.samples("a"), a.samples("b")
({'string': ('"x"',), 'long': ('1',)}, {'long[]': ('[1, 2]',)})
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolkit.core.batch.profile import SAMPLES_PER_TYPE, Profile, add_counts
from toolkit.core.values.types import RECORD, Shape
from toolkit.core.values.wording import VALUE_WIDTH, clip, value_text

__all__ = [
    "BATCH_SAMPLES",
    "SAMPLES_KEPT",
    "SAMPLES_PER_DRIFT",
    "SAMPLE_WIDTH",
    "Arrivals",
    "Path",
    "as_path",
    "merge_samples",
    "sample_text",
]

#: A field path: a dotted string (``"device.os"``) or a tuple of keys (when a key holds
#: a dot).
Path = str | tuple[str, ...]

#: Version 1 also reads what was written before samples were recorded: the optional
#: ``samples`` key is simply absent there (and a reader that predates it ignores it).
_VERSION = 1

#: At most this many sample texts per field and drifting type in one batch's arrivals
SAMPLES_PER_DRIFT = 2
#: At most this many sample texts in one batch's arrivals, over all its fields
BATCH_SAMPLES = 100
#: A sample's text is cut to this many characters (a table cell's, as the notebook shows it)
SAMPLE_WIDTH = VALUE_WIDTH
#: Arrivals added up keep this many (distinct, latest first) per field and type, as many
#: as a profile shows
SAMPLES_KEPT = SAMPLES_PER_TYPE

#: per field path, per type name: sample texts
SampleTexts = Mapping[tuple[str, ...], Mapping[str, tuple[str, ...]]]


def sample_text(shape: Shape, value: Any) -> str:
    """A sample value as a panel shows a value (:func:`~toolkit.core.values.wording.value_text`):
    JSON text (``"7"`` for a string, ``7`` for a number), records and arrays as the
    profile's short text already is; cut to :data:`SAMPLE_WIDTH` characters.

    >>> from toolkit.core.values.types import Shape
    >>> sample_text(Shape("string", 0), "x" * 80)[-3:], sample_text(Shape("long", 0), 7)
    ('xx…', '7')
    >>> sample_text(Shape("record", 0), "{'a': 1}"), sample_text(Shape("date", 0), "2024-06-01")
    ("{'a': 1}", '"2024-06-01"')
    """
    if isinstance(value, str) and (shape.type == RECORD or shape.dim):
        return clip(value, SAMPLE_WIDTH)  # the profile keeps them as short repr texts
    return value_text(value, SAMPLE_WIDTH)


def merge_samples(
    newer: Mapping[str, Sequence[str]], older: Mapping[str, Sequence[str]],
    keep: int = SAMPLES_KEPT,
) -> dict[str, tuple[str, ...]]:
    """Per type, the first ``keep`` distinct texts of ``newer``'s then ``older``'s (an
    associative merge: whichever way batches are grouped, the latest samples win).

    >>> merge_samples({"string": ["c", "b"]}, {"string": ["b", "a"], "long": ["1"]}, 3)
    {'string': ('c', 'b', 'a'), 'long': ('1',)}
    """
    out: dict[str, tuple[str, ...]] = {}
    for t in dict.fromkeys([*newer, *older]):
        texts = dict.fromkeys([*newer.get(t, ()), *older.get(t, ())])
        out[t] = tuple(texts)[:keep]
    return out


def as_path(path: Path) -> tuple[str, ...]:
    """A path as a tuple of keys.

    >>> as_path("device.os"), as_path(("a.b",))
    (('device', 'os'), ('a.b',))
    """
    return tuple(path.split(".")) if isinstance(path, str) else tuple(path)


@dataclass(frozen=True)
class Arrivals:
    """What a batch (or several, added up) brought: per field path, the values that
    arrived of each type name, and those null or missing where the record holding the
    field was present."""

    records: int = 0
    values: Mapping[tuple[str, ...], Mapping[str, int]] = field(default_factory=dict)
    absent_counts: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    sample_texts: SampleTexts = field(default_factory=dict)
    """Per field path and type name, a few sample texts (:func:`sample_text`), latest
    batch first."""

    @classmethod
    def of(cls, profile: Profile, *, known: Arrivals | None = None) -> Arrivals:
        """The arrivals a profile counted, with a bounded choice of its samples.

        Drift is what a reader wants to see, so the types of a field that are not its
        main (most frequent) type in the batch are sampled first, up to
        :data:`SAMPLES_PER_DRIFT` each. What is left of :data:`BATCH_SAMPLES` goes to main
        types, one each, for context and so that a field that drifted whole (all longs
        yesterday, all texts today) shows its new type in a narrow table. ``known``, what
        the table recorded before (the arrivals of its batches so far, added up), sharpens
        both in a wide table: a type a known field had not received counts as drift, and a
        main type it holds a sample of already is not sampled again. In rounds (drift
        types' first sample, their second, main types'), fields in the profile's order."""
        values = {
            path: {str(shape): n for shape, n in stats.counts.items() if n}
            for path, stats in profile.fields.items()
        }
        absent = {path: stats.nulls for path, stats in profile.fields.items() if stats.nulls}
        return cls(profile.records, values, absent, _chosen_samples(profile, known))

    def arrived(self, path: Path) -> dict[str, int]:
        """``{type name: values}`` that arrived for the field at ``path`` (nulls and
        missing keys not counted; an unknown field gives ``{}``)."""
        return dict(self.values.get(as_path(path), {}))

    def shares(self, path: Path) -> dict[str, float]:
        """Each type's share of the values that arrived for ``path`` (they sum to 1)."""
        counts = self.arrived(path)
        total = sum(counts.values())
        return {t: n / total for t, n in counts.items()} if total else {}

    def absent(self, path: Path) -> int:
        """Records where the field at ``path`` was null or missing (its enclosing record
        being present)."""
        return self.absent_counts.get(as_path(path), 0)

    def samples(self, path: Path) -> dict[str, tuple[str, ...]]:
        """``{type name: sample texts}`` recorded for the field at ``path``, latest batch
        first (types ingest sampled only: see :meth:`of`)."""
        return dict(self.sample_texts.get(as_path(path), {}))

    def without_samples(self) -> Arrivals:
        """The counts alone."""
        return replace(self, sample_texts={}) if self.sample_texts else self

    @property
    def paths(self) -> tuple[tuple[str, ...], ...]:
        """Every field path that arrived, in first-seen order."""
        return tuple(dict.fromkeys([*self.values, *self.absent_counts]))

    def __add__(self, other: Arrivals) -> Arrivals:
        values = {p: dict(v) for p, v in self.values.items()}
        for path, counts in other.values.items():
            values[path] = add_counts(values.get(path, {}), counts)
        absent = add_counts(self.absent_counts, other.absent_counts)
        # samples: the later batches' (the right operand's) first, SAMPLES_KEPT per type
        samples = {p: dict(v) for p, v in self.sample_texts.items()}
        for path, texts in other.sample_texts.items():
            samples[path] = merge_samples(texts, samples.get(path, {}))
        return Arrivals(self.records + other.records, values, absent, samples)

    def encode(self) -> str:
        """A compact text (JSON, deflated, base64) for a snapshot summary or property."""
        paths = self.paths
        doc: dict[str, Any] = {
            "version": _VERSION,
            "records": self.records,
            "fields": [
                [list(p), dict(self.values.get(p, {})), self.absent_counts.get(p, 0)]
                for p in paths
            ],
        }
        if self.sample_texts:
            # [index into "fields", {type: [text, ...]}]: a path is written once
            at = {p: i for i, p in enumerate(paths)}
            doc["samples"] = [
                [at[p], {t: list(v) for t, v in texts.items()}]
                for p, texts in self.sample_texts.items() if p in at and texts
            ]
        raw = json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        return base64.b64encode(zlib.compress(raw.encode(), 9)).decode("ascii")

    @classmethod
    def decode(cls, text: str) -> Arrivals:
        """The arrivals :meth:`encode` wrote; ``ValueError`` for anything else."""
        try:
            doc = json.loads(zlib.decompress(base64.b64decode(text)))
            if doc.get("version") != _VERSION:
                raise ValueError(f"version {doc.get('version')!r}, this toolkit reads "
                                 f"{_VERSION}")
            values = {tuple(p): {str(t): int(n) for t, n in v.items()} for p, v, _ in
                      doc["fields"]}
            absent = {tuple(p): int(a) for p, _, a in doc["fields"] if a}
            paths = [tuple(p) for p, _, _ in doc["fields"]]
            samples = {  # absent from arrivals written before samples were recorded
                paths[_index(i, len(paths))]: {str(t): tuple(_texts(v)) for t, v in texts.items()}
                for i, texts in doc.get("samples", ())
            }
            return cls(int(doc["records"]), {p: v for p, v in values.items() if v}, absent,
                       samples)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError,
                zlib.error) as exc:
            raise ValueError(f"not a record of arrivals written by this toolkit: {exc}") \
                from exc


def _index(i: Any, n: int) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
        raise IndexError(f"samples of field {i!r}, of {n} fields")
    return i


def _texts(found: Iterable[Any]) -> Iterator[str]:
    for text in found:
        if not isinstance(text, str):
            raise TypeError(f"a sample is text, not {text!r}")
        yield text


def _main(counts: Mapping[Shape, int]) -> Shape | None:
    """A field's most frequent type in the batch (ties: the first by name). One pass, as
    it runs for every field of every batch."""
    best, most = None, 0
    for shape, n in counts.items():
        if n > most or (n == most and n and str(shape) < str(best)):
            best, most = shape, n
    return best


def _chosen_samples(profile: Profile, known: Arrivals | None) -> dict[
        tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The samples :meth:`Arrivals.of` records (its docstring says which). Only the
    samples chosen are rendered: a batch of thousands of fields renders about a hundred."""
    drift: list[tuple[tuple[str, ...], Shape, tuple[Any, ...]]] = []
    main: list[tuple[tuple[str, ...], Shape, tuple[Any, ...]]] = []
    for path, stats in profile.fields.items():
        top = _main(stats.counts)
        before = None if known is None else known.values.get(path)
        sampled = None if known is None else known.sample_texts.get(path)
        for shape, found in stats.samples.items():
            if not found or not stats.counts.get(shape):
                continue
            if shape != top or (before is not None and str(shape) not in before):
                drift.append((path, shape, found))
            elif not sampled or not sampled.get(str(shape)):
                main.append((path, shape, found))
    out: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}
    budget = BATCH_SAMPLES
    for group, rounds in ((drift, SAMPLES_PER_DRIFT), (main, 1)):
        rendered: dict[int, list[str]] = {}
        for round_ in range(rounds):
            for i, (path, shape, found) in enumerate(group):
                if budget == 0:
                    return out
                if i not in rendered:  # the distinct texts of the few the profile kept
                    rendered[i] = list(dict.fromkeys(
                        sample_text(shape, v) for v in found[: 2 * SAMPLES_PER_DRIFT]))
                texts = rendered[i]
                if round_ < len(texts):
                    per_type = out.setdefault(path, {})
                    per_type[str(shape)] = (*per_type.get(str(shape), ()), texts[round_])
                    budget -= 1
    return out
