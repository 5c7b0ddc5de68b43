"""Where a batch's records come from, and how each kind of source reaches Spark.

:func:`as_dataframe` turns a source (Python records, a path or glob of JSON-lines files,
a Spark DataFrame) into a DataFrame and the :data:`~toolkit.spark.workers.Mode` its
records travel in.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.spark.workers import Mode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["as_dataframe"]


def as_dataframe(spark: SparkSession, source: Any) -> tuple[DataFrame, Mode]:
    """A source as a DataFrame and how its records are carried."""
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StringType

    if isinstance(source, DataFrame):
        fields = source.schema.fields
        if len(fields) == 1 and isinstance(fields[0].dataType, StringType):
            return source, "json"
        return source, "rows"
    if isinstance(source, str | Path):
        return spark.read.text(str(source)), "json"
    # Python records travel pickled, so workers see exactly the values simulate() sees.
    rows = [(pickle.dumps(dict(r)),) for r in source]
    slices = max(1, min(len(rows), spark.sparkContext.defaultParallelism))
    rdd = spark.sparkContext.parallelize(rows, slices)
    return spark.createDataFrame(rdd, "value binary"), "pickle"
