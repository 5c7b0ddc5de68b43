"""Deterministic, drifting JSON-like event records for benchmarks.

Every record is a web/app event with ~28 top-level keys and ~41 leaf values (~700 bytes of
JSON): nested records (``device``, ``geo``), a list of records (``items``), a 3-deep int
array (``coordinates``), arrays of strings (``tags``), and keys whose type drifts across
and within batches. Drift depends on a record's position ``p = i / n`` in the stream, so
contiguous batches (:func:`batches`) see it arrive the way a real feed would:

- ``my_field``: long for the first half of the stream, then a string (``"MF-123"``).
- ``size``: long; from p >= 0.2, 40% doubles (within a batch).
- ``started``: ISO timestamp text; from p >= 0.3, half are epoch milliseconds (long).
- ``flag``: boolean; from p >= 0.4, 3% are the text ``"yes"``.
- ``code``: digit text with leading zeros; from p >= 0.6, half are ints.
- ``device.version``: text ``"13.2"``; from p >= 0.7, 25% are ints.
- ``channel``: a string, or (20%) an array of strings: sometimes scalar, sometimes array.
- missing keys and nulls: ``referrer`` (missing or null), ``geo`` (null), ``retries``,
  ``coupon``, ``note`` (mostly missing/null), empty ``items`` and ``tags``.

>>> rs = records(1_000, seed=1)
>>> len(rs), rs == records(1_000, seed=1), rs != records(1_000, seed=2)
(1000, True, True)
>>> sorted({type(r["my_field"]).__name__ for r in rs[:500]} | {"then"})
['int', 'then']
>>> sorted({type(r["my_field"]).__name__ for r in rs[500:]})
['str']
>>> [len(b) for b in batches(rs, 3)]
[334, 333, 333]
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

T = TypeVar("T")

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_START_MS = 1_717_200_000_000  # 2024-06-01T00:00:00Z
_SPAN_MS = 7 * 86_400_000  # the stream covers one week
_CHUNK = 50_000  # records written at a time

# events by weight: a uniform choice from this tuple is a weighted choice of event
_EVENTS = (
    ("page_view",) * 8
    + ("click",) * 5
    + ("search",) * 2
    + ("add_to_cart",) * 2
    + ("checkout", "login", "logout")
)
_OS = (
    ("android", ("12", "13", "14")),
    ("ios", ("16.4", "17.1", "17.5")),
    ("windows", ("10", "11")),
    ("macos", ("13.2", "14.5")),
    ("linux", ("6.1", "6.8")),
)
_CITIES = (
    ("Berlin", 52.52, 13.405),
    ("Paris", 48.857, 2.352),
    ("New York", 40.713, -74.006),
    ("Sao Paulo", -23.55, -46.633),
    ("Tokyo", 35.676, 139.65),
    ("Lagos", 6.524, 3.379),
    ("Sydney", -33.869, 151.209),
    ("Mumbai", 19.076, 72.878),
)
_COUNTRIES = ("DE", "FR", "US", "BR", "JP", "NG", "AU", "IN")
_LANGS = ("de-DE", "fr-FR", "en-US", "pt-BR", "ja-JP", "en-NG", "en-AU", "hi-IN")
_TAGS = ("eu", "us", "beta", "new_user", "returning", "mobile", "promo", "vip", "churn_risk")
_CHANNELS = ("web", "email", "push", "sms", "ads", "organic")
_CURRENCIES = ("EUR", "USD", "BRL", "JPY", "NGN", "AUD", "INR")
_PAGES = ("/", "/search", "/product/{}", "/cart", "/checkout", "/account", "/category/{}")
_REFERRERS = (
    "https://www.google.com/",
    "https://duckduckgo.com/",
    "https://t.co/x",
    "https://news.ycombinator.com/",
    "android-app://com.example.app",
)
_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/125.0.0.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/125.0.6422.113 Mobile",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Version/17.5 Safari/605.1.15",
)


def _iso(ms: int) -> str:
    """``2024-06-01T08:03:29.430Z`` for an epoch-millisecond instant."""
    d = _EPOCH + dt.timedelta(milliseconds=ms)
    return (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
        f".{ms % 1000:03d}Z"
    )


def _record(rng: random.Random, i: int, n: int) -> dict[str, Any]:
    r = rng.random
    randrange = rng.randrange
    choice = rng.choice
    p = i / n

    ts_ms = _START_MS + i * _SPAN_MS // n + randrange(0, 500)
    started_ms = ts_ms - randrange(1_000, 3_600_000)
    os_name, versions = choice(_OS)
    city, lat, lon = choice(_CITIES)
    country = randrange(len(_COUNTRIES))
    page = choice(_PAGES)
    ts = _iso(ts_ms)
    n_tags = randrange(0, 4)

    rec: dict[str, Any] = {
        "event_id": f"{rng.getrandbits(64):016x}-{i:08d}",
        "event": choice(_EVENTS),
        "ts": ts,
        "event_date": ts[:10],
        "user_id": randrange(1, 5_000_000),
        "session_id": f"s-{rng.getrandbits(40):010x}",
        "my_field": randrange(1, 100_000) if p < 0.5 else f"MF-{randrange(1, 1000)}",
        "size": (round(r() * 20, 1) if p >= 0.2 and r() < 0.4 else randrange(1, 20)),
        "started": (started_ms if p >= 0.3 and r() < 0.5 else _iso(started_ms)),
        "flag": "yes" if p >= 0.4 and r() < 0.03 else r() < 0.5,
        "code": (
            randrange(0, 100_000) if p >= 0.6 and r() < 0.5 else f"{randrange(0, 100_000):05d}"
        ),
        "device": {
            "id": f"dev-{randrange(1000, 10_000)}",
            "os": os_name,
            "version": (
                int(float(choice(versions))) if p >= 0.7 and r() < 0.25 else choice(versions)
            ),
        },
        "geo": None
        if r() < 0.05
        else {
            "lat": round(lat + (r() - 0.5) / 5, 5),
            "lon": round(lon + (r() - 0.5) / 5, 5),
            "city": city,
        },
        "items": [
            {
                "sku": f"SKU-{randrange(10_000, 100_000)}",
                "qty": randrange(1, 5),
                "price": round(0.99 + r() * 200, 2),
            }
            for _ in range(randrange(0, 4))
        ],
        "coordinates": [
            [[randrange(-90, 91), randrange(-180, 181)] for _ in range(randrange(1, 3))]
            for _ in range(randrange(1, 3))
        ],
        "tags": [choice(_TAGS) for _ in range(n_tags)] if n_tags else [],
        "channel": (rng.sample(_CHANNELS, randrange(1, 3)) if r() < 0.2 else choice(_CHANNELS)),
        "amount": round(r() * 500, 2),
        "currency": choice(_CURRENCIES),
        "page": page.format(randrange(1, 5000)) if "{}" in page else page,
        "duration_ms": randrange(5, 120_000),
        "is_mobile": os_name in ("android", "ios"),
        "ip": f"{randrange(1, 224)}.{randrange(256)}.{randrange(256)}.{randrange(1, 255)}",
        "user_agent": choice(_AGENTS),
        "country": _COUNTRIES[country],
        "lang": _LANGS[country],
        "score": round(r(), 4),
    }
    x = r()
    if x < 0.55:
        rec["referrer"] = choice(_REFERRERS)
    elif x < 0.75:
        rec["referrer"] = None  # else: the key is missing
    if r() < 0.2:
        rec["retries"] = randrange(1, 4)
    if r() < 0.1:
        rec["coupon"] = f"SAVE{randrange(5, 50)}"
    x = r()
    if x < 0.05:
        rec["note"] = choice(("gift", "fragile", "call before delivery"))
    elif x < 0.5:
        rec["note"] = None
    return rec


def records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` drifting event records; the same ``(n, seed)`` always gives the same records."""
    rng = random.Random(seed)
    return [_record(rng, i, n) for i in range(n)]


def to_jsonl(recs: Sequence[dict[str, Any]]) -> bytes:
    """JSON lines (one compact object per line, trailing newline)."""
    dumps = orjson.dumps
    return b"\n".join(map(dumps, recs)) + b"\n" if recs else b""


def write_jsonl(path: str | Path, n: int, seed: int = 0) -> Path:
    """Write ``records(n, seed)`` as JSON lines to ``path``; returns the path. Written a
    chunk at a time: 4M records held at once take more memory than the machine has."""
    out = Path(path)
    rng = random.Random(seed)
    dumps = orjson.dumps
    with open(out, "wb") as f:
        for start in range(0, n, _CHUNK):
            f.write(b"".join(dumps(_record(rng, i, n)) + b"\n"
                             for i in range(start, min(n, start + _CHUNK))))
    return out


def batches(recs: Sequence[T], k: int) -> list[list[T]]:
    """``recs`` split into ``k`` contiguous batches whose sizes differ by at most one
    (the first ``len(recs) % k`` batches are one longer)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    q, rem = divmod(len(recs), k)
    out, start = [], 0
    for j in range(k):
        end = start + q + (1 if j < rem else 0)
        out.append(list(recs[start:end]))
        start = end
    return out
