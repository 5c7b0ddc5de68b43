"""Spark, wired to the same Iceberg catalog PyIceberg uses (needs the `spark` extra)."""

from typing import TYPE_CHECKING, Any

from toolkit.errors import SparkSetupError

if TYPE_CHECKING:
    from toolkit.spark.session import iceberg_runtime_jar, spark_conf, spark_session

__all__ = ["SparkSetupError", "iceberg_runtime_jar", "spark_conf", "spark_session"]


def __getattr__(name: str) -> Any:
    # loaded on first use: the modules of this package that need no session (progress,
    # misreads) are imported without PyIceberg's catalog and Spark's settings
    if name in __all__:
        from toolkit.spark import session

        return getattr(session, name)
    raise AttributeError(f"module 'toolkit.spark' has no attribute {name!r}")
