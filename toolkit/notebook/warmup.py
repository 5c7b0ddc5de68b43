"""Spark in a notebook, ready before it is needed: the first Approve should not wait for a
JVM to start and load its classes (issue 29 measured 22 s to start, then 36 s for the first
commit of 20 rows, 7 s for the next ones).

In a Jupyter kernel (``import toolkit`` installs this, as it installs the progress line):

* a session :func:`toolkit.spark_session` has just started warms what a first write needs
  in a background thread (:func:`toolkit.pipeline.prepare.warm_first_write`: two sample
  days into a scratch catalog), while the user reads the preview;
* :func:`toolkit.preview` without ``spark`` starts the session its Approve will use in the
  background (:func:`start_spark`), so the panel shows at once and the Approve finds the
  session ready. An error starting it is printed under the cell when it happens, and
  raised by the Approve (and by ``toolkit.spark_session``) rather than swallowed.

``TOOLKIT_WARMUP=off`` in the kernel's environment turns both off.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import TYPE_CHECKING

from toolkit.spark.startup import Background, set_after_start, start_in_background

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

__all__ = ["install", "installed", "start_spark"]

log = logging.getLogger(__name__)

_installed = False


def install() -> None:
    """Warm the first write after each fresh Spark start, and let a preview start Spark
    in the background (done once per kernel)."""
    global _installed
    if os.environ.get("TOOLKIT_WARMUP", "").lower() == "off":  # a kernel that wants neither
        return
    set_after_start(_warm_in_background)
    _installed = True


def installed() -> bool:
    """Whether :func:`install` ran (in a kernel, ``import toolkit`` does)."""
    return _installed


def _warm_in_background(spark: SparkSession, cat: Catalog) -> None:
    threading.Thread(target=_warm, args=(spark,), name="toolkit: warming the first write",
                     daemon=True).start()


def _warm(spark: SparkSession) -> None:
    from toolkit.pipeline.prepare import warm_first_write

    try:
        warm_first_write(spark)
    except Exception as exc:  # noqa: BLE001 - the user's own ingest only takes longer
        log.warning("warming Spark for the first write failed (the first commit will "
                    "take longer, nothing else changes): %s", exc)


def _say_failed(exc: BaseException) -> None:
    print(f"Spark could not start in the background: {exc}\n"
          "Approve (or toolkit.spark_session) raises this error; once fixed, run the "
          "cell again.", file=sys.stderr)


def start_spark(cat: Catalog) -> Background[SparkSession]:
    """Start :func:`toolkit.spark_session` on ``cat`` in a background thread (once per
    catalog name) and return its handle; ``toolkit.spark_session(cat)`` waits for it.
    A failure is printed when it happens and raised by whoever waits for the session."""
    from toolkit.spark.session import spark_session

    return start_in_background(cat.name, lambda: spark_session(cat), on_error=_say_failed)
