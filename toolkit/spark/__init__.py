"""Spark, wired to the same Iceberg catalog PyIceberg uses (needs the `spark` extra)."""

from toolkit.errors import SparkSetupError
from toolkit.spark.session import iceberg_runtime_jar, spark_conf, spark_session

__all__ = ["SparkSetupError", "iceberg_runtime_jar", "spark_conf", "spark_session"]
