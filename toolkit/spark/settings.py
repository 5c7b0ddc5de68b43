"""Spark session settings the toolkit needs for the length of one call, kept out of the
other calls running meanwhile on the same session (two streams, two threads ingesting).

A session's settings (``spark.conf``) are one map for every thread using the session: a
setting made around one call is seen by every call running meanwhile, and the first call
to restore it takes it away from under the others. Two kinds:

* a value that belongs to one write: Iceberg's write-audit-publish id
  (``spark.wap.id``), which makes a write to a staging table stage its snapshot instead
  of publishing it. Iceberg 1.10 reads it from the session only
  (``SparkWriteConf.wapId``; its write options carry no such id and no branch), so a
  write set up in one thread would stage under another write's id, or, once the other
  write had unset it, be published straight away, with no check of the ledger
  (``toolkit.iceberg.ledger``). :func:`own_clone` runs such a write in a session of
  its own, a clone of the caller's: no other write sees its settings
  (``toolkit.spark.plans.append`` writes there; :func:`own_session` hands a DataFrame
  over to one, for a JVM without the toolkit's helpers).
* a value every toolkit call wants the same: :func:`held` sets it while at least one
  call needs it, and puts back what was there when the last of them ends.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["held", "own_clone", "own_session", "settings_hash"]

_lock = threading.Lock()
#: the JVM class that reads and holds a session's settings (``jvm/Settings.java``)
SETTINGS = "toolkit.spark.jvm.Settings"


@dataclass(frozen=True)
class _Clone:
    """A session cloned from another, and the hash of that one's settings when this one
    last took them."""

    session: SparkSession
    settings: int


#: sessions writes used and gave back, by application: cloning one is cheap, but its
#: catalog is made anew at its first use (a catalog connection), so they are kept, as
#: many as writes ran at once, and serve any session of the application (a stream's
#: own session, the user's), their settings brought in step with it first
_idle: dict[str, list[_Clone]] = {}


#: each Spark context's application id, asked of the JVM once (two round trips a time)
_applications: weakref.WeakKeyDictionary[SparkContext, str] = weakref.WeakKeyDictionary()


def _application(spark: SparkSession) -> str:
    context = spark.sparkContext
    app = _applications.get(context)
    if app is None:
        app = _applications[context] = str(context.applicationId)
    return app


def _parent_key(spark: SparkSession) -> tuple[str, int]:
    jvm: Any = spark._jvm
    return (_application(spark), int(jvm.System.identityHashCode(spark._jsparkSession)))


def settings_hash(spark: SparkSession) -> int:
    """A hash of every setting ``spark`` has now, taken in the JVM (one round trip where
    the toolkit's helpers are there, ``jvm/Settings.java``)."""
    from toolkit.spark.tally import jvm_class

    helper = jvm_class(spark, SETTINGS)
    if helper is not None:
        return int(helper.hash(spark._jsparkSession))
    return int(spark._jsparkSession.sessionState().conf().getAllConfs().hashCode())


def _settings(spark: SparkSession, session: Any) -> dict[str, str]:
    jvm: Any = spark._jvm
    confs = session.sessionState().conf().getAllConfs()
    return dict(jvm.scala.collection.JavaConverters.mapAsJavaMapConverter(confs).asJava())


def _in_step(clone: _Clone, spark: SparkSession, now: int) -> _Clone:
    """``clone`` with the settings ``spark`` has now (a catalog added since, a setting
    changed or unset), when they changed since it took them."""
    if clone.settings == now:
        return clone
    jclone = clone.session._jsparkSession
    wanted, had = _settings(spark, spark._jsparkSession), _settings(spark, jclone)
    conf = jclone.sessionState().conf()
    for name in had.keys() - wanted.keys():
        conf.unsetConf(name)
    for name, value in wanted.items():
        if had.get(name) != value:
            conf.setConfString(name, value)
    return _Clone(clone.session, now)


@contextmanager
def own_clone(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[SparkSession]:
    """A session of its own for the block, cloned from ``spark``, with every setting and
    catalog ``spark`` has now, and ``settings`` set there for the block: what the block
    runs in it (a write) sees them; no other thread's work does, ``spark`` is left as it
    was, and the clone has its own settings back after the block. One a block gave back
    is used again, its settings brought in step first (when their hash differs from that
    of the settings it took last)."""
    from pyspark.sql import SparkSession

    app, now = _application(spark), settings_hash(spark)
    with _lock:
        idle = _idle.get(app, [])
        # one already in step with this session, if there is one
        at = next((i for i, c in enumerate(idle) if c.settings == now), len(idle) - 1)
        clone = idle.pop(at) if idle else None
    if clone is None:
        jclone = spark._jsparkSession.cloneSession()
        clone = _Clone(SparkSession(spark.sparkContext, jclone), now)
    clone = _in_step(clone, spark, now)
    session = clone.session
    # what the clone had (its caller's, brought in step) is put back after the block, as
    # jvm/Settings.java does for a write of a plan: the clone stays in step
    before = {name: session.conf.get(name, None) for name in settings}
    for name, value in settings.items():
        session.conf.set(name, value)
    try:
        yield session
    finally:
        for name, was in before.items():
            _put_back(session, name, was)
        with _lock:
            _idle.setdefault(app, []).append(clone)


@contextmanager
def own_session(frame: DataFrame, settings: Mapping[str, str]) -> Iterator[DataFrame]:
    """``frame`` (its plan) in a session of its own (:func:`own_clone`) where
    ``settings`` hold for the block."""
    from pyspark.sql import DataFrame

    with own_clone(frame.sparkSession, settings) as session:
        jvm: Any = session._jvm
        yield DataFrame(jvm.org.apache.spark.sql.Dataset.ofRows(
            session._jsparkSession, frame._jdf.queryExecution().analyzed()), session)


#: the settings :func:`held` holds, by (application, session, name): how many calls hold
#: it, and the value it had before the first (None: unset)
_holders: dict[tuple[str, int, str], tuple[int, str | None]] = {}


@contextmanager
def held(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` set on ``spark`` while the block runs, and while any other block
    holding them on the same session runs; the value each had before the first of them
    began is put back when the last one ends. Every caller wants the same value for a
    setting: the toolkit's own settings of this kind are constants."""
    app, session = _parent_key(spark)
    keys = [(app, session, name) for name in settings]
    with _lock:
        for key, (name, value) in zip(keys, settings.items(), strict=True):
            count, before = _holders.get(key, (0, None))
            if count == 0:
                before = spark.conf.get(name, None)
                spark.conf.set(name, value)
            _holders[key] = (count + 1, before)
    try:
        yield
    finally:
        with _lock:
            for key, name in zip(keys, settings, strict=True):
                count, before = _holders.pop(key)
                if count > 1:
                    _holders[key] = (count - 1, before)
                else:
                    _put_back(spark, name, before)


def _put_back(spark: SparkSession, name: str, was: str | None) -> None:
    """Setting ``name`` of ``spark`` as it was (None: unset), as ``jvm/Settings.java``
    puts back what a write of a plan held."""
    if was is None:
        spark.conf.unset(name)
    else:
        spark.conf.set(name, was)
