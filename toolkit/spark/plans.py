"""A DataFrame with projections and filters stacked on it that Spark analyses once, when
the DataFrame is asked for (``jvm/Plans.java``).

Spark analyses every ``select`` and ``where`` as it is made, walking the whole plan
below it: about 8 ms a step on two cores, more as the plan deepens. The one pass of a
typed batch stacks four steps before its write, so building them unanalysed and
analysing the stack once saves it some 30 ms a batch. A JVM without the helper (a
session the toolkit did not start) gets a DataFrame at each step, as before.

:func:`append` writes such a frame (or any DataFrame) in a session of its own, where it is
analysed, once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["PLANS", "JavaColumns", "LazyFrame", "append", "appended", "java_columns"]

#: the JVM class that stacks steps on a plan unanalysed (``jvm/Plans.java``)
PLANS: Final = "toolkit.spark.jvm.Plans"


@dataclass(frozen=True)
class JavaColumns:
    """Columns for :meth:`LazyFrame.select`, with their JVM array made once (a py4j call
    per column), so that expressions kept for a layout's every batch cost nothing more."""

    columns: tuple[Column, ...]
    array: Any  # Column[] in the JVM; None when the JVM has no helper


def java_columns(spark: SparkSession, columns: Sequence[Column]) -> JavaColumns:
    """``columns`` with their JVM array (:class:`JavaColumns`)."""
    from toolkit.spark.tally import jvm_class

    if jvm_class(spark, PLANS) is None:
        return JavaColumns(tuple(columns), None)
    jvm: Any = spark._jvm
    gateway: Any = spark.sparkContext._gateway
    array = gateway.new_array(jvm.org.apache.spark.sql.Column, len(columns))
    for i, c in enumerate(columns):
        array[i] = c._jc
    return JavaColumns(tuple(columns), array)


@dataclass(frozen=True)
class LazyFrame:
    """A DataFrame's plan with steps stacked on it, not analysed yet; :attr:`frame` is the
    DataFrame (analysed then, once)."""

    session: SparkSession
    #: the JVM's LogicalPlan; None when the JVM has no helper: :attr:`done` holds the steps
    plan: Any
    done: DataFrame | None = None

    @staticmethod
    def of(df: DataFrame) -> LazyFrame:
        """``df``, for steps to be stacked on."""
        from toolkit.spark.tally import jvm_class

        if jvm_class(df.sparkSession, PLANS) is None:
            return LazyFrame(df.sparkSession, None, df)
        return LazyFrame(df.sparkSession, df._jdf.queryExecution().analyzed())

    @staticmethod
    def positional_of(df: DataFrame) -> LazyFrame:
        """``df`` with its columns renamed by position (:meth:`positional`), in one round
        trip to the JVM where the steps took three."""
        from toolkit.spark.tally import jvm_class

        plans = jvm_class(df.sparkSession, PLANS)
        if plans is None:
            return LazyFrame.of(df).positional()
        return LazyFrame(df.sparkSession, plans.positional(df._jdf))

    def _plans(self) -> Any:
        from toolkit.spark.tally import jvm_class

        return jvm_class(self.session, PLANS)

    def _below(self) -> Any:
        """The plan to stack on: the analysed one once :attr:`frame` was asked for (the
        analysis skips what is analysed already)."""
        if "frame" in self.__dict__:
            return self.frame._jdf.queryExecution().analyzed()
        return self.plan

    def positional(self) -> LazyFrame:
        """The columns renamed ``c0``, ``c1``... by position (what ``toDF`` does)."""
        if self.done is not None:
            return LazyFrame(self.session, None, self.done.toDF(
                *(f"c{i}" for i in range(len(self.done.columns)))))
        return LazyFrame(self.session, self._plans().positional(self._below()))

    def select(self, columns: JavaColumns) -> LazyFrame:
        """``columns`` of the rows (what ``DataFrame.select`` does)."""
        if self.done is not None or columns.array is None:
            return LazyFrame(self.session, None, self.frame.select(*columns.columns))
        return LazyFrame(self.session, self._plans().select(self._below(), columns.array))

    def stacked(self, step: Any) -> LazyFrame:
        """The plan a JVM ``step`` (a function of a LogicalPlan) makes of this one; only
        for a frame whose JVM has the helper (:attr:`done` unset)."""
        assert self.done is None
        return LazyFrame(self.session, step(self._below()))

    @cached_property
    def frame(self) -> DataFrame:
        """The DataFrame, analysed now (a name that does not resolve fails here)."""
        from pyspark.sql import DataFrame

        if self.done is not None:
            return self.done
        return DataFrame(self._plans().frame(self.session._jsparkSession, self.plan),
                         self.session)


def append(
    frame: DataFrame | LazyFrame,
    table: str,
    options: Mapping[str, str],
    settings: Mapping[str, str],
) -> None:
    """Append ``frame``'s rows to ``table`` (Spark's name of it) with the write
    ``options``, in a session of its own (:func:`toolkit.spark.settings.own_clone`) where
    ``settings`` hold for this write alone, by :func:`appended`. A JVM without the helper
    writes it with ``DataFrameWriterV2``."""
    from toolkit.spark.settings import own_clone, own_session
    from toolkit.spark.tally import jvm_class

    spark = frame.session if isinstance(frame, LazyFrame) else frame.sparkSession
    if jvm_class(spark, PLANS) is None or (isinstance(frame, LazyFrame) and
                                           frame.done is not None):
        df = frame.frame if isinstance(frame, LazyFrame) else frame
        with own_session(df, settings) as own:
            own.writeTo(table).options(**options).append()
        return
    plan = frame._below() if isinstance(frame, LazyFrame) else \
        frame._jdf.queryExecution().analyzed()
    with own_clone(spark, {}) as session:
        appended(session, plan, table, options, settings)


def appended(
    session: SparkSession,
    plan: Any,
    table: str,
    options: Mapping[str, str],
    settings: Mapping[str, str],
) -> None:
    """Append the rows of ``plan`` (a JVM LogicalPlan) to ``table`` with the write
    ``options`` and ``settings`` set on ``session`` for the write alone, in one call into
    the JVM (``jvm/Plans.java``): the plan is analysed there, in ``session``, once; a
    :class:`LazyFrame` made elsewhere is not analysed twice."""
    from toolkit.spark.tally import jvm_class

    jvm_class(session, PLANS).append(session._jsparkSession, plan, table,
                                     json.dumps(dict(options)), json.dumps(dict(settings)))
