"""Schema evolution for Apache Iceberg tables fed with drifting, semi-structured data.

>>> import toolkit
>>> [f.name for f in toolkit.simulate([[{"my_field": 1}], [{"my_field": "x"}]]).schema.fields]
['my_field', 'my_field_string']
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from toolkit import errors
from toolkit.core.batch.options import Options
from toolkit.core.batch.profile import Profile
from toolkit.errors import *  # noqa: F403 (every error, importable from ``toolkit``)

#: Public names loaded on first use: ``import toolkit`` must stay light (the command
#: line's ``--help`` and a typo's error come before PyIceberg, sqlglot or Spark load) and
#: must never start a JVM.
_LAZY = {
    "Simulation": "toolkit.api",
    "coalesce_sql": "toolkit.api",
    "make_options": "toolkit.api",
    "profile": "toolkit.api",
    "simulate": "toolkit.api",
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

# every name written out, as type checkers read it (tests/test_public_api.py)
__all__ = [
    *errors.__all__,
    "catalog",
    "coalesce_sql",
    "compare_policies",
    "create_coalesce_view",
    "edit_schema",
    "errors",
    "evolve",
    "explore",
    "ingest",
    "IngestReport",
    "inspect_quarantine",
    "lineage",
    "maintain",
    "MaintenancePlan",
    "MaintenanceReport",
    "make_options",
    "ops",
    "Options",
    "plan_maintenance",
    "plan_preview",
    "preview",
    "preview_evolution",
    "preview_maintenance",
    "Profile",
    "profile",
    "quarantine",
    "replay",
    "simulate",
    "Simulation",
    "spark_session",
    "statistics",
    "stream",
    "undo",
]

if TYPE_CHECKING:  # what a type checker reads for the names loaded on first use
    from toolkit import ops
    from toolkit.api import Simulation, coalesce_sql, make_options, profile, simulate
    from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport
    from toolkit.iceberg.catalog import catalog
    from toolkit.iceberg.lineage import lineage, undo
    from toolkit.iceberg.operations import evolve, preview_evolution
    from toolkit.iceberg.quarantine import quarantine
    from toolkit.iceberg.statistics import statistics
    from toolkit.notebook import compare_policies, explore, preview
    from toolkit.notebook.build import edit_schema, inspect_quarantine, preview_maintenance
    from toolkit.pipeline.ingest import IngestReport, ingest
    from toolkit.pipeline.maintain import maintain, plan_maintenance
    from toolkit.pipeline.preview import plan_preview
    from toolkit.pipeline.replay import replay
    from toolkit.pipeline.stream import stream
    from toolkit.spark.session import spark_session
    from toolkit.spark.views import create_coalesce_view


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
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "ops":
        return importlib.import_module("toolkit.ops")
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
