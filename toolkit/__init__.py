"""Schema evolution for Apache Iceberg tables fed with drifting, semi-structured data.

>>> import toolkit
>>> [f.name for f in toolkit.simulate([[{"my_field": 1}], [{"my_field": "x"}]]).schema.fields]
['my_field', 'my_field_string']
"""

from __future__ import annotations

from typing import Any

from toolkit.api import Simulation, coalesce_sql, make_options, profile, simulate
from toolkit.core.options import Options
from toolkit.core.profile import Profile

__all__ = [
    "Options",
    "Profile",
    "Simulation",
    "catalog",
    "coalesce_sql",
    "make_options",
    "profile",
    "simulate",
    "spark_session",
]


def __getattr__(name: str) -> Any:
    # Catalog and Spark helpers load lazily: ``import toolkit`` must not start a JVM.
    if name == "catalog":
        from toolkit.iceberg.catalog import catalog

        return catalog
    if name == "spark_session":
        from toolkit.spark.session import spark_session

        return spark_session
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
