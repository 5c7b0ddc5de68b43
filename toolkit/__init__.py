"""Schema evolution for Apache Iceberg tables fed with drifting, semi-structured data.

>>> import toolkit
>>> [f.name for f in toolkit.simulate([[{"my_field": 1}], [{"my_field": "x"}]]).schema.fields]
['my_field', 'my_field_string']
"""

from __future__ import annotations

import sys
from typing import Any

from toolkit import errors, ops
from toolkit.api import Simulation, coalesce_sql, make_options, profile, simulate
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile
from toolkit.errors import *  # noqa: F403 (every error, importable from ``toolkit``)

#: Public names that live outside the pure core, loaded on first use: ``import toolkit``
#: must stay light and must never start a JVM.
_LAZY = {
    "catalog": "toolkit.iceberg.catalog",
    "spark_session": "toolkit.spark.session",
    "ingest": "toolkit.pipeline.ingest",
    "IngestReport": "toolkit.pipeline.ingest",
    "statistics": "toolkit.iceberg.statistics",
    "stream": "toolkit.pipeline.stream",
    "create_coalesce_view": "toolkit.spark.views",
    "explore": "toolkit.notebook",
    "preview": "toolkit.notebook",
    "plan_preview": "toolkit.pipeline.preview",
    "evolve": "toolkit.iceberg.operations",
    "preview_evolution": "toolkit.iceberg.operations",
    "lineage": "toolkit.iceberg.lineage",
    "undo": "toolkit.iceberg.lineage",
    "quarantine": "toolkit.iceberg.quarantine",
    "replay": "toolkit.pipeline.replay",
    "inspect_quarantine": "toolkit.notebook.build",
    "edit_schema": "toolkit.notebook.build",
    "compare_policies": "toolkit.notebook",
    "plan_maintenance": "toolkit.pipeline.maintain",
    "maintain": "toolkit.pipeline.maintain",
    "preview_maintenance": "toolkit.notebook.build",
    "MaintenancePlan": "toolkit.core.maintenance.steps",
    "MaintenanceReport": "toolkit.core.maintenance.steps",
}

__all__ = [
    *errors.__all__,
    "Options",
    "Profile",
    "Simulation",
    "coalesce_sql",
    "errors",
    "make_options",
    "ops",
    "profile",
    "simulate",
    *_LAZY,
]


def _in_kernel() -> bool:
    """Whether this runs inside a Jupyter kernel. A kernel has loaded IPython already, so
    outside one this costs a dictionary look-up and imports nothing."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half imported: no kernel to show progress in
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


if _in_kernel():  # Spark's progress under the running cell (toolkit.notebook.progress)
    from toolkit.notebook.progress import install as _show_progress
    from toolkit.notebook.warmup import install as _warm_spark

    _show_progress()
    _warm_spark()  # Spark started and warmed before the first Approve (issue 29)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
