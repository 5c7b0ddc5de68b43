"""Notebook panels: explore how fields drift, preview a plan, approve and commit it.

Example (notebook cells)::

    import toolkit

    toolkit.explore([[{"my_field": 1}], [{"my_field": "abc"}]])  # fields, types, drift
    toolkit.explore(cat.load_table("db.events"))                   # a committed table

    panel = toolkit.preview("data/day2.jsonl", "db.events", cat, spark=spark)
    panel            # schema before/after, new columns, landings, SQL, "Approve and commit"
    panel.approve()  # what the button does; panel.outcome says what happened

Both return panels whose view-model (``panel.model``) holds everything shown, so a
notebook run headless can read it and call ``panel.approve()`` as the button does.

Every panel is a package of three modules under :mod:`toolkit.notebook.panels`:
``model`` (the view-model: plain data, neither ipywidgets nor plotly), ``html`` (its HTML,
as strings) and ``widget`` (a thin ipywidgets shell; ipywidgets and plotly come with the
``notebook`` extra)::

    panels/explore/      toolkit.explore: fields, type drift
    panels/preview/      toolkit.preview: a plan, commit it
    panels/policies/     toolkit.compare_policies
    panels/editor/       toolkit.edit_schema: RULES 6
    panels/quarantine/   toolkit.inspect_quarantine
    panels/maintenance/  toolkit.preview_maintenance

Shared by several panels: ``common`` (values as short texts, the stylesheet),
``schema_tree`` (a schema as a tree, and its HTML), ``outcome`` (what a commit did, and
any outcome's HTML), ``figures`` (the plotly figures of the explore model).
:mod:`toolkit.notebook.build` builds every panel from its sources.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.notebook.build import (
    compare_policies,
    edit_schema,
    explore,
    ingest_commit,
    inspect_quarantine,
    preview,
    preview_maintenance,
    statistics_model,
    with_rewrite_costs,
)

if TYPE_CHECKING:
    from toolkit.notebook.panels.editor.widget import EvolutionEditor
    from toolkit.notebook.panels.explore.widget import ExplorePanel
    from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
    from toolkit.notebook.panels.policies.widget import PolicyComparisonPanel
    from toolkit.notebook.panels.preview.widget import PreviewPanel

__all__ = [
    "EvolutionEditor",
    "ExplorePanel",
    "MaintenancePanel",
    "PolicyComparisonPanel",
    "PreviewPanel",
    "compare_policies",
    "edit_schema",
    "explore",
    "ingest_commit",
    "inspect_quarantine",
    "preview",
    "preview_maintenance",
    "statistics_model",
    "with_rewrite_costs",
]

#: the widget classes, by name, and their modules: they load ipywidgets and plotly, so
#: only when asked for
_WIDGETS = {
    "EvolutionEditor": "toolkit.notebook.panels.editor.widget",
    "ExplorePanel": "toolkit.notebook.panels.explore.widget",
    "MaintenancePanel": "toolkit.notebook.panels.maintenance.widget",
    "PolicyComparisonPanel": "toolkit.notebook.panels.policies.widget",
    "PreviewPanel": "toolkit.notebook.panels.preview.widget",
}


def __getattr__(name: str) -> Any:
    if name in _WIDGETS:
        import importlib

        return getattr(importlib.import_module(_WIDGETS[name]), name)
    raise AttributeError(f"module 'toolkit.notebook' has no attribute {name!r}")
