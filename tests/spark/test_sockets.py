"""py4j's answers leave the JVM at once (``toolkit/spark/jvm/Sockets.java``): an answer
over 8 KB had waited 44 ms for Python's delayed acknowledgement (Nagle's algorithm on
the JVM's side), which every stream batch paid reading its tally."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.spark.tally import SOCKETS_CLASS, TALLY_CLASS, jvm_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_every_py4j_connection_answers_without_delay(spark: SparkSession) -> None:
    assert jvm_class(spark, TALLY_CLASS) is not None  # a first lookup in this JVM
    sockets = jvm_class(spark, SOCKETS_CLASS)
    assert sockets is not None
    gateway: Any = spark.sparkContext._gateway
    server = gateway.java_gateway_server
    long_answer: list[int] = []

    def other_thread() -> None:  # a connection of its own, opened after the first lookup
        text = spark._jvm.org.apache.commons.lang3.StringUtils.repeat("x", 50_000)
        long_answer.append(len(text))

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert long_answer == [50_000]
    assert sockets.delayed(server) == 0  # the old connections and the new one
    assert sockets.noDelay(server) == 0  # a second call finds nothing left to do
