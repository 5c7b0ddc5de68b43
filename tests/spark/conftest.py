"""The Spark session with the toolkit's JVM classes (the tally and the router)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from toolkit.spark.tally import jvm_tally_ready, tally_jar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="module")
def jvm(spark: SparkSession) -> SparkSession:
    """The session, which must have the toolkit's jar (the JDK is a system dependency)."""
    assert tally_jar() is not None, "javac could not compile toolkit/spark/jvm/*.java"
    assert jvm_tally_ready(spark)
    return spark
