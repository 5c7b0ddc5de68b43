"""What arrived, per field: how many values of each type, and how many were null or missing.

Written data statistics count what was *written* to each column, so a value routed to
two columns of a family, or a list's elements, are counted once per column. A user asking
"how often did ``price`` arrive as a string?" needs what *arrived*: per field (a path of
keys, as the profile names it), the values of each RULES 1 type (``long``, ``string``,
``long[]``, ``record``...), with nulls and missing keys counted apart. Ingest records each
batch's arrivals with the batch (:mod:`toolkit.iceberg.statistics` reads them back from
the table's metadata alone); they merge by addition, like profiles.

>>> from toolkit.core.profile import profile
>>> a = Arrivals.of(profile([{"a": 1}, {"a": "x"}, {"a": None}, {"b": [1, 2]}]))
>>> a.arrived("a"), a.absent("a"), a.arrived("b")
({'long': 1, 'string': 1}, 2, {'long[]': 1})
>>> Arrivals.decode(a.encode()) == a
True
>>> (a + a).arrived("a"), a.shares("a")
({'long': 2, 'string': 2}, {'long': 0.5, 'string': 0.5})
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolkit.core.profile import Profile

__all__ = ["Arrivals", "Path", "as_path"]

#: A field path: a dotted string (``"device.os"``) or a tuple of keys (when a key holds
#: a dot).
Path = str | tuple[str, ...]

_VERSION = 1


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

    @classmethod
    def of(cls, profile: Profile) -> Arrivals:
        """The arrivals a profile counted."""
        values = {
            path: {str(shape): n for shape, n in stats.counts.items() if n}
            for path, stats in profile.fields.items()
        }
        absent = {path: stats.nulls for path, stats in profile.fields.items() if stats.nulls}
        return cls(profile.records, values, absent)

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

    @property
    def paths(self) -> tuple[tuple[str, ...], ...]:
        """Every field path that arrived, in first-seen order."""
        return tuple(dict.fromkeys([*self.values, *self.absent_counts]))

    def __add__(self, other: Arrivals) -> Arrivals:
        values: dict[tuple[str, ...], dict[str, int]] = {
            p: dict(v) for p, v in self.values.items()
        }
        for path, counts in other.values.items():
            mine = values.setdefault(path, {})
            for t, n in counts.items():
                mine[t] = mine.get(t, 0) + n
        absent = dict(self.absent_counts)
        for path, n in other.absent_counts.items():
            absent[path] = absent.get(path, 0) + n
        return Arrivals(self.records + other.records, values, absent)

    def encode(self) -> str:
        """A compact text (JSON, deflated, base64) for a snapshot summary or property."""
        doc: dict[str, Any] = {
            "version": _VERSION,
            "records": self.records,
            "fields": [
                [list(p), dict(self.values.get(p, {})), self.absent_counts.get(p, 0)]
                for p in self.paths
            ],
        }
        raw = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
        return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")

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
            return cls(int(doc["records"]), {p: v for p, v in values.items() if v}, absent)
        except (ValueError, TypeError, KeyError, zlib.error) as exc:
            raise ValueError(f"not a record of arrivals written by this toolkit: {exc}") \
                from exc
