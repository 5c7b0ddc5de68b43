"""The profile's type tally inside the JVM: ``jvm/Tally.java``, compiled at install.

Observing JSON lines in Spark's Python workers spends most of its time walking values in
Python. ``Tally.java`` walks the lines with Jackson inside the executors and sends back,
per partition, the tree of a :class:`~toolkit.core.batch.summary.Summary` whose kinds are *codes*
(classes of values the core :class:`~toolkit.core.batch.observe.Classifier` types alike), plus
the first few raw texts per field path and code. Here each code becomes a
:class:`~toolkit.core.values.types.Kind` by classifying a representative value with the core
Classifier itself, and samples are parsed with the core's own line parser: the lattice,
the per-value exactness rules and the sample rendering stay in ``toolkit.core``.

A partition whose lines the JVM cannot read exactly as Python does (a line that is not a
JSON object, malformed JSON, duplicate keys...) is observed again by the Python path
(:func:`toolkit.spark.workers.observe_partition`), which sets such lines aside or fails
as it always does: the JVM path never skips a line the Python path would not skip.

The jar is compiled with ``javac`` against pyspark's jars at install (``make install``, into
``<venv>/share/toolkit/jvm``: :mod:`toolkit.spark.startup`), or at first use into
``$TOOLKIT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/toolkit`` or ``~/.cache/toolkit``), named
by the hash of its sources either way;
:func:`toolkit.spark.spark_session` puts it on ``spark.jars``. Without ``javac`` the
toolkit keeps the Python path (exact, slower) and logs a warning once.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import weakref
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.observe import Classifier
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import SAMPLES_PER_TYPE, FieldStats, Profile, sample_summary
from toolkit.core.batch.summary import FieldSummary, Summary
from toolkit.core.values.jsonlines import parse_line
from toolkit.core.values.types import RECORD, Kind, Shape

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "TALLY_CLASS", "Tallied", "build_helper_jar", "is_array_code", "jvm_class", "jvm_tally_ready",
    "observe_json", "tallied_payloads", "tally_jar",
]

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("jvm") / "Tally.java"
#: every source of the jar: the tally, and the router that reuses its tokenizer
SOURCES = tuple(SOURCE.with_name(n) for n in ("Tally.java", "Router.java", "ClassTally.java",
                                               "ClassCode.java", "HeadRows.java",
                                               "JvmExpression.java", "Sockets.java",
                                               "Plans.java", "Settings.java"))
TALLY_CLASS = "toolkit.spark.jvm.Tally"

#: A value of each scalar code of Tally.java, in code order: the Classifier types each
#: exactly as the JVM classed it (TIMESTAMP_FRACTION: a fraction of the epoch unit, or
#: microseconds a double holds; TIMESTAMP_FAR: microseconds beyond what a double holds).
REPRESENTATIVES: tuple[Any, ...] = (
    True,  # BOOLEAN
    1,  # LONG
    2**53 + 1,  # LONG_LOSSY
    0.5,  # DOUBLE
    "x",  # STRING
    "2024-01-01",  # DATE
    "2024-01-01T00:00:00",  # TIMESTAMP
    "2024-01-01T00:00:00.000001",  # TIMESTAMP_FRACTION
    "9999-12-31T23:59:59.999999",  # TIMESTAMP_FAR
    {},  # RECORD
)
#: an array's kind code is ``depth << ARRAY_SHIFT | mask`` (Tally.arrayCode): a depth of
#: at least 1, and a bit of ``mask`` per leaf code above, which must all fit below the shift
ARRAY_SHIFT = 10
#: Tally.RECORD: the code of a record, and its bit in an array code's mask of leaf codes
RECORD_CODE = REPRESENTATIVES.index({})


def is_array_code(code: int) -> bool:
    """Whether a kind code of Tally.java is an array's (every other code is a scalar's or
    a record's): the one test of it, in Python.

    >>> is_array_code(RECORD_CODE), is_array_code(1 << ARRAY_SHIFT | 1 << RECORD_CODE)
    (False, True)
    """
    return code >= 1 << ARRAY_SHIFT


# --------------------------------------------------------------------------- the jar


def cache_dir() -> Path:
    """Where compiled jars are kept."""
    env = os.environ.get("TOOLKIT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolkit"


def _pyspark_jars() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    return jars if jars.is_dir() else None


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "javac").exists():
        return str(Path(home, "bin", "javac"))
    return shutil.which("javac")


def _helper_key(jars: Path) -> str:
    """The jar's name for these sources, compiled against these pyspark jars: a changed
    source or a new pyspark gets its own jar."""
    source = b"".join(p.read_bytes() for p in SOURCES)
    key = hashlib.sha256(source + str(sorted(p.name for p in jars.glob("*.jar"))).encode())
    return f"toolkit-tally-{key.hexdigest()[:16]}.jar"


def build_helper_jar(folder: Path) -> Path | None:
    """Compile ``jvm/*.java`` into ``folder`` (unless the jar for these sources is there
    already): what ``make install`` runs (``python -m toolkit.pipeline.prepare``), and
    :func:`tally_jar` at first use when install did not. None, with a warning, when it
    cannot be built."""
    jars = _pyspark_jars()
    javac = _javac()
    if jars is None or javac is None:
        log.warning("javac or pyspark's jars not found: profiling stays in Python workers "
                    "(exact, several times slower); install a JDK (make sysdeps)")
        return None
    jar = folder / _helper_key(jars)
    if jar.is_file():
        return jar
    try:
        jar.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="toolkit-tally-") as tmp:
            classes = Path(tmp, "classes")
            subprocess.run(
                [javac, "--release", "8", "-nowarn", "-encoding", "UTF-8",
                 "-cp", str(jars / "*"), "-d", str(classes), *map(str, SOURCES)],
                check=True, capture_output=True, text=True, timeout=300,
            )
            partial = Path(tmp, jar.name)
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
                for f in sorted(classes.rglob("*.class")):
                    z.write(f, f.relative_to(classes).as_posix())
            # another process may compile the same source meanwhile: the rename is atomic
            fd, dest = tempfile.mkstemp(dir=jar.parent, suffix=".jar")
            os.close(fd)
            shutil.copyfile(partial, dest)
            os.chmod(dest, 0o644)  # mkstemp's 0600 would keep other users of a venv out
            os.replace(dest, jar)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", None) or exc
        log.warning("compiling %s failed, profiling and routing stay in Python workers: %s",
                    SOURCE.parent, detail)
        return None
    return jar


@functools.cache
def tally_jar() -> Path | None:
    """The compiled jar of ``jvm/`` (the tally and the router), or None with a warning when
    it cannot be built: profiling and routing stay in Python workers then. The one ``make
    install`` compiled (:func:`toolkit.spark.startup.share_dir`) when it is there for these
    sources; else the user's cache's, compiled now if needed (2-3 s, once)."""
    from toolkit.spark.startup import share_dir

    jars = _pyspark_jars()
    if jars is not None:
        installed = share_dir() / _helper_key(jars)
        if installed.is_file():
            return installed
    return build_helper_jar(cache_dir())


#: per JVM gateway, the classes looked up in it (None: not there)
_CLASSES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def jvm_class(spark: SparkSession, name: str) -> Any:
    """The static methods of the JVM class ``name`` (e.g. ``"toolkit.spark.jvm.Router"``)
    of ``spark``'s gateway (:class:`_Statics`), or None when that JVM has no such class.
    Looked up once per gateway: each lookup costs py4j a round trip per dotted part, and a
    stream's every batch needs the same classes."""
    from py4j.java_gateway import JavaClass  # type: ignore[import-untyped]

    jvm: Any = spark._jvm
    if jvm is None:
        return None
    classes = _CLASSES.get(jvm)
    if classes is None:
        classes = _CLASSES[jvm] = {}
        _answers_at_once(spark, classes)
    if name not in classes:
        found: Any = jvm
        try:
            for part in name.split("."):
                found = getattr(found, part)
        except Exception:  # noqa: BLE001 - a JVM without the class, or no gateway
            found = None
        classes[name] = _Statics(found) if isinstance(found, JavaClass) else None
    return classes[name]


class _Statics:
    """A JVM class's static methods, each looked up once: py4j asks the JVM what a name
    of a class is at every look, a round trip before each call (some ten a typed batch)."""

    def __init__(self, klass: Any) -> None:
        self._klass = klass

    def __getattr__(self, name: str) -> Any:
        member = getattr(self._klass, name)
        setattr(self, name, member)  # found in the instance from now on
        return member


#: the JVM class that makes py4j's answers leave at once (``jvm/Sockets.java``)
SOCKETS_CLASS = "toolkit.spark.jvm.Sockets"


def _answers_at_once(spark: SparkSession, classes: dict[str, Any]) -> None:
    """Have the JVM of ``spark`` send its answers to Python without waiting
    (``jvm/Sockets.java``): an answer over 8 KB waited 44 ms for an acknowledgement,
    which a stream's tally payloads and a wide table's schema pay on every batch. Done
    once per JVM, at its first class lookup; a JVM without the helper keeps its way."""
    from py4j.java_gateway import JavaClass

    found: Any = spark._jvm
    try:
        for part in SOCKETS_CLASS.split("."):
            found = getattr(found, part)
        if isinstance(found, JavaClass):
            gateway: Any = spark.sparkContext._gateway
            found.noDelay(gateway.java_gateway_server)
    except Exception as exc:  # noqa: BLE001 - slower answers, never a failed batch
        log.info("py4j answers keep their delay: %s", exc)
    classes[SOCKETS_CLASS] = _Statics(found) if isinstance(found, JavaClass) else None


def jvm_tally_ready(spark: SparkSession) -> bool:
    """Whether the session's JVM has the tally class (its jar was on ``spark.jars`` when the
    session started)."""
    return jvm_class(spark, TALLY_CLASS) is not None


# --------------------------------------------------------------------------- observation


class KindCodes:
    """Kind codes of Tally.java -> core Kinds, under one set of options."""

    def __init__(self, options: Options) -> None:
        self.classifier = Classifier(options)
        self._kinds: dict[int, Kind] = {}

    def __call__(self, code: int) -> Kind:
        k = self._kinds.get(code)
        if k is None:
            k = self._kinds[code] = self._resolve(code)
        return k

    def _resolve(self, code: int) -> Kind:
        if not is_array_code(code):
            value = REPRESENTATIVES[code]
        else:
            depth, mask = code >> ARRAY_SHIFT, code & ((1 << ARRAY_SHIFT) - 1)
            value = [v for bit, v in enumerate(REPRESENTATIVES) if mask >> bit & 1]
            for _ in range(depth - 1):
                value = [value]
        kind = self.classifier.kind(value)
        assert kind is not None
        return kind


def summary_of(level: Mapping[str, Any], kinds: KindCodes) -> Summary:
    """A payload's Summary tree as the core's Summary."""
    fields = {}
    for key in sorted(level["fields"]):
        f = level["fields"][key]
        counts: dict[Kind, int] = {}
        flat = f["counts"]
        for code, n in zip(flat[::2], flat[1::2], strict=True):
            k = kinds(code)
            counts[k] = counts.get(k, 0) + n
        records = {dim: summary_of(sub, kinds) for dim, sub in f["records"]}
        fields[key] = FieldSummary(counts, records)
    return Summary(fields, level["rows"])


def profile_of_summary(
    summary: Summary, samples: Sequence[Sequence[Any]], kinds: KindCodes, batch: int,
    arrived: Sequence[Sequence[Any]] = (),
    leaves: Mapping[tuple[str, ...], Sequence[int]] | None = None,
) -> Profile:
    """profile.profile_of, from a partition's Summary and the JVM's samples: a path's counts
    are its kinds' shapes summed over every record dimension above it. ``arrived``: per path
    and kind code, the first and last record of the partition (from 1) holding one;
    ``leaves``: per path, the flat ``[array code, leaf code, count, ...]`` of arrays of
    several leaf codes (:attr:`FieldStats.leaves`, kept for several leaf *types*)."""
    counts: dict[tuple[str, ...], dict[Shape, int]] = {}
    inside: dict[tuple[str, ...], int] = {}

    def walk(level: Summary, path: tuple[str, ...]) -> None:
        for key, f in level.fields.items():
            p = (*path, key)
            c = counts.setdefault(p, {})
            for k, n in f.counts.items():
                c[k.shape] = c.get(k.shape, 0) + n
            inside[p] = inside.get(p, 0) + sum(s.rows for s in f.records.values())
            for sub in f.records.values():
                walk(sub, p)

    walk(summary, ())
    found: dict[tuple[str, ...], list[tuple[int, Shape, Any]]] = {}
    for path, code, seq, text in samples:
        found.setdefault(tuple(path), []).append((seq, kinds(code).shape, text))
    spans: dict[tuple[str, ...], dict[Shape, tuple[int, int]]] = {}
    for path, code, first, last in arrived:
        at = spans.setdefault(tuple(path), {})
        shape = kinds(code).shape
        had = at.get(shape)
        at[shape] = (first - 1, last - 1) if had is None else (
            min(had[0], first - 1), max(had[1], last - 1))
    fields = {}
    for path, c in counts.items():
        picked: dict[Shape, list[Any]] = {}
        for _, shape, text in sorted(found.get(path, ()), key=lambda s: s[0]):
            bucket = picked.setdefault(shape, [])
            if len(bucket) < SAMPLES_PER_TYPE:
                v = parse_line(text)
                bucket.append(sample_summary(v) if shape.type == RECORD or shape.dim else v)
        seen = batch if c else None
        found_leaves = _leaf_counts((leaves or {}).get(path, ()), kinds)
        fields[path] = FieldStats(
            path, c, seen, seen, {s: tuple(vs) for s, vs in picked.items()},
            {batch: c} if c else {}, inside[path],
            spans={batch: spans.get(path, {})} if c else {},
            leaves={batch: found_leaves} if found_leaves else {},
        )
    return Profile(fields, summary.rows, starts={batch: 0})


def _leaf_counts(flat: Sequence[int], kinds: KindCodes) -> dict[tuple[Shape, str], int]:
    """Per (array shape, leaf type), the leaves of arrays whose primitive leaves are of
    several types (the Classifier's test: two leaf codes of one type, a long and a long
    beyond 2**53, are one type)."""
    by_code: dict[int, dict[str, int]] = {}
    for code, leaf, n in zip(flat[::3], flat[1::3], flat[2::3], strict=True):
        t = kinds(leaf).type
        assert t is not None
        mine = by_code.setdefault(code, {})
        mine[t] = mine.get(t, 0) + n
    out: dict[tuple[Shape, str], int] = {}
    for code, types in by_code.items():
        if len(types) > 1:
            shape = kinds(code).shape
            for name, n in types.items():
                out[shape, name] = out.get((shape, name), 0) + n
    return out


def leaves_at(
    level: Mapping[str, Any], path: tuple[str, ...], out: dict[tuple[str, ...], list[int]]
) -> None:
    """The leaf counts of a payload's Summary tree (``[array code, leaf code, count, ...]``),
    by field path, over every record dimension."""
    for key, f in level["fields"].items():
        p = (*path, key)
        if "leaves" in f:
            out.setdefault(p, []).extend(f["leaves"])
        for _, sub in f["records"]:
            leaves_at(sub, p, out)


@dataclass(frozen=True)
class Tallied:
    """A DataFrame of JSON lines observed: the merged summary and profile of all its
    partitions, and the Python path's whole results for the partitions the JVM handed back
    (in partition order)."""

    summary: Summary
    profile: Profile
    handed_back: tuple[tuple[Any, ...], ...] = ()
    #: the kind codes seen at each field path (keys from the top, whatever the record
    #: dimensions between), in the partitions the JVM tallied: what the JVM router's
    #: table covers (toolkit.spark.router)
    codes: Mapping[tuple[str, ...], frozenset[int]] = field(default_factory=dict)
    #: lines the JVM router set aside as it routed (it could not read them), in partition
    #: order: per line, its file (None: no file), its line number there (-1: unknown) and
    #: its bytes; Python reads them again (``toolkit.spark.workers.reread``)
    aside: tuple[tuple[str | None, int, bytes], ...] = ()


def observe_json(
    df: DataFrame,
    options: Options,
    batch: int,
    python_path: Callable[[DataFrame], Sequence[tuple[Any, ...]]],
) -> Tallied:
    """The Summary and Profile of a DataFrame of JSON lines (one string column), tallied in
    the JVM; equal to what the Python workers give.

    ``python_path`` observes a DataFrame in Python workers: per partition, in order, a
    tuple starting with its (Summary, Profile). It observes the partitions the JVM hands
    back (the others are empty by then).
    """
    spark = df.sparkSession
    tally = jvm_class(spark, TALLY_CLASS)
    assert tally is not None, "a session whose JVM has the tally class"
    payloads = [json.loads(p) for p in tally.observe(
        df._jdf, options.detect_dates, options.timestamp_unit
    )]
    fallback = sorted(p["partition"] for p in payloads if "fallback" in p)
    for p in payloads:
        if "fallback" in p:
            log.info("partition %s observed by the Python path: %s", p["partition"],
                     p["fallback"])
    parts, codes = _read_payloads([p for p in payloads if "fallback" not in p], options, batch)
    if fallback:
        from pyspark.sql import functions as F

        # a narrow filter keeps each row in its partition: partition i of the result is
        # partition i of df, with the same lines in the same order
        only = df.where(F.spark_partition_id().isin(fallback))
        observed = python_path(only)
        for i in fallback:
            parts[i] = observed[i]
    return _merged(parts, codes, tuple(parts[i] for i in fallback))


def tallied_payloads(
    texts: Iterable[str], partitions: int, options: Options, batch: int
) -> Tallied | None:
    """The tally of a DataFrame of ``partitions`` partitions from the payloads its tasks
    sent (``Router.routeTallied``: one per run of a task, so a partition may come more than
    once, each time the same); None unless every partition sent one it could tally whole.
    The lines the router set aside come with it (:attr:`Tallied.aside`)."""
    by_partition: dict[int, dict[str, Any]] = {}
    for text in texts:
        p = json.loads(text)
        by_partition.setdefault(p["partition"], p)
    if sorted(by_partition) != list(range(partitions)):
        return None
    for p in by_partition.values():
        if "fallback" in p:
            log.info("partition %s not tallied in one pass: %s", p["partition"], p["fallback"])
            return None
    parts, codes = _read_payloads(list(by_partition.values()), options, batch)
    aside = tuple(
        (file, number, base64.b64decode(data))
        for i in sorted(by_partition) for file, number, data, _ in by_partition[i].get("aside", ())
    )
    return dataclasses.replace(_merged(parts, codes), aside=aside)


def _read_payloads(
    payloads: Sequence[Mapping[str, Any]], options: Options, batch: int
) -> tuple[dict[int, tuple[Any, ...]], dict[tuple[str, ...], set[int]]]:
    """Per partition, the (Summary, Profile) of its payload; and the kind codes seen, by
    field path."""
    kinds = KindCodes(options)
    parts: dict[int, tuple[Any, ...]] = {}
    codes: dict[tuple[str, ...], set[int]] = {}
    for p in payloads:
        codes_at(p["summary"], (), codes)
        s = summary_of(p["summary"], kinds)
        leaves: dict[tuple[str, ...], list[int]] = {}
        leaves_at(p["summary"], (), leaves)
        parts[p["partition"]] = s, profile_of_summary(
            s, p["samples"], kinds, batch, p.get("seen", ()), leaves
        )
    return parts, codes


def _merged(
    parts: Mapping[int, tuple[Any, ...]],
    codes: Mapping[tuple[str, ...], set[int]],
    handed_back: tuple[tuple[Any, ...], ...] = (),
) -> Tallied:
    summary, prof = Summary(), Profile()
    for i in sorted(parts):  # samples merge in partition order, as the Python path's do
        summary, prof = summary + parts[i][0], prof + parts[i][1]
    return Tallied(
        summary, prof, handed_back, {path: frozenset(c) for path, c in codes.items()}
    )


def codes_at(
    level: Mapping[str, Any], path: tuple[str, ...], out: dict[tuple[str, ...], set[int]]
) -> None:
    """Adds the kind codes of a payload's Summary tree to ``out``, by field path."""
    for key, f in level["fields"].items():
        p = (*path, key)
        out.setdefault(p, set()).update(f["counts"][::2])
        for _, sub in f["records"]:
            codes_at(sub, p, out)
