"""The one place that builds the notebook's panels from their sources: it reads the
tables, sources and plans (adapters, the pipeline), makes each panel's model
(:mod:`toolkit.notebook.panels`) and hands it, with the functions its buttons call, to
the panel's widget. ``toolkit.preview``, ``toolkit.explore``, ``toolkit.compare_policies``,
``toolkit.edit_schema``, ``toolkit.inspect_quarantine`` and
``toolkit.preview_maintenance`` are these functions.

The widgets load ipywidgets and plotly (the ``notebook`` extra): they are imported when a
panel is built, so the models (``statistics_model``) need neither.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.batch.options import REWRITES_WHEN_APPROVED, make_options, takes_options
from toolkit.core.batch.profile import Profile, profile_of
from toolkit.core.engine import Engine
from toolkit.core.evolution.state import TableState
from toolkit.core.maintenance.steps import STEPS
from toolkit.core.values.types import Struct
from toolkit.core.values.wording import counted
from toolkit.notebook.outcome import TableSize
from toolkit.notebook.panels.editor.model import EvolutionEditorModel, lineage_rows
from toolkit.notebook.panels.explore.model import StatisticsModel
from toolkit.notebook.panels.preview.model import CommitRequest
from toolkit.pipeline.sources import SourceKind, kind_of, records_of, source_kind

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyspark.sql import SparkSession

    from toolkit.core.batch.quarantine import Quarantine
    from toolkit.core.evolution.lineage import LineageEntry
    from toolkit.core.maintenance.steps import MaintenancePlan, MaintenanceReport
    from toolkit.iceberg.statistics import WrittenDataStatistics
    from toolkit.notebook.panels.editor.model import EvolutionRequest
    from toolkit.notebook.panels.editor.widget import EvolutionEditor
    from toolkit.notebook.panels.explore.widget import ExplorePanel
    from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
    from toolkit.notebook.panels.policies.widget import PolicyComparisonPanel
    from toolkit.notebook.panels.preview.widget import PreviewPanel
    from toolkit.notebook.panels.quarantine.model import ReplayRequest
    from toolkit.notebook.panels.quarantine.widget import QuarantinePanel
    from toolkit.pipeline.ingest import IngestReport
    from toolkit.pipeline.preview import Preview
    from toolkit.pipeline.replay import ReplayPreview, ReplayReport

__all__ = [
    "compare_policies",
    "edit_schema",
    "editor_model",
    "explore",
    "ingest_commit",
    "inspect_quarantine",
    "preview",
    "preview_maintenance",
    "statistics_model",
    "with_rewrite_costs",
]


def _is_table(source: object) -> bool:
    from pyiceberg.table import Table

    return isinstance(source, Table)


def _on_spark(kind: SourceKind, spark: SparkSession | None) -> bool:
    """Whether a source of ``kind`` is profiled on Spark: a DataFrame always, files when a
    session is given (Spark reads them all as one batch), records in memory never."""
    return kind.home == "spark" or (spark is not None and kind.home == "files")


@takes_options
def statistics_model(
    source: Any, *, spark: SparkSession | None = None, batch: int | None = None, **options: Any
) -> StatisticsModel:
    """What :func:`explore` shows, as data (no widget).

    ``source``: a list of dicts (one batch), a list of batches (lists of dicts), a
    JSON-lines path or glob (each file one batch, in name order; with ``spark``, Spark
    reads them all as one batch), a Spark DataFrame (profiled on Spark), a pandas, Arrow
    or Polars frame (one batch, its typed columns keeping their types), a PyIceberg
    ``Table`` (its written data statistics, from metadata only), a ``Profile`` or a
    ``WrittenDataStatistics``. Batches are numbered from ``batch`` (default 0). For data,
    the columns of each field are those of a new table fed with it, in order.
    """
    from toolkit.iceberg.statistics import WrittenDataStatistics, statistics

    if isinstance(source, StatisticsModel):
        return source
    if isinstance(source, Profile):
        return StatisticsModel.from_profile(source)
    if isinstance(source, WrittenDataStatistics):
        return StatisticsModel.from_statistics(source)
    if _is_table(source):
        source.refresh()
        return StatisticsModel.from_statistics(statistics(source))
    opts = make_options(**options)
    first = batch or 0
    kind = source_kind(source)
    if _on_spark(kind, spark):
        from toolkit.core.engine import make_plan
        from toolkit.spark.batches import observe_on_spark
        from toolkit.spark.progress import tracking

        session = spark if spark is not None else source.sparkSession
        label = os.fspath(source) if kind.home == "files" else "Spark DataFrame"
        what = label if kind.home == "files" else "a Spark DataFrame"
        # a notebook shows "Exploring <what>: Profiling 42% (21 of 50 tasks)" meanwhile, as
        # it does for ingest (observe_on_spark names its jobs "Profiling")
        with tracking(session, f"Exploring {what}") as track:
            df = kind.to_dataframe(session, source)
            seen = observe_on_spark(df, kind.mode, opts, first)
            track.finish(f"Profiled {counted(seen.profile.records, 'record')} of {what}")
        prof = seen.profile
        schema = make_plan(Struct(), seen.summary, opts, first).after
        return StatisticsModel.from_profile(prof, schema, source=label)
    batches = kind.records(source)  # a file of a path or glob is one batch
    label = (f"{os.fspath(source)} ({counted(len(batches), 'file')})"
             if kind.home == "files" else None)
    engine = Engine(opts)
    schema, prof = Struct(), Profile()
    for i, rows in enumerate(batches, first):
        obs = engine.observe(rows, i)
        schema = engine.plan(schema, obs, i).after
        prof = prof + profile_of(obs, i)
    # the header says the records and batches itself (StatisticsModel.counts): the source
    # only names where they came from (nothing, for records given in Python)
    return StatisticsModel.from_profile(prof, schema, source=label)


@takes_options
def explore(
    source: Any,
    *,
    spark: SparkSession | None = None,
    batch: int | None = None,
    page_size: int = 25,
    top: int = 20,
    **options: Any,
) -> ExplorePanel:
    """A panel of fields and their types for ``source`` (see :func:`statistics_model`):
    a search box, a paged table with evolved fields highlighted, the type mix of the
    ``top`` most drifted fields, and one field's types batch by batch."""
    from toolkit.notebook.panels.explore.widget import ExplorePanel

    model = statistics_model(source, spark=spark, batch=batch, **options)
    return ExplorePanel(model, page_size=page_size, top=top)


@takes_options(defaults={"allow_rewrites": REWRITES_WHEN_APPROVED})
def ingest_commit(
    catalog: Catalog, spark: SparkSession | None = None, **options: Any
) -> Callable[[CommitRequest], IngestReport]:
    """The default commit of a preview: :func:`toolkit.pipeline.ingest` of exactly the
    previewed records, held to the approved plan and the previewed table state, under the
    request's batch id. Without ``spark``, a session on ``catalog`` is started (or the
    running one reused) when a plan is approved; in a notebook :func:`preview` has started
    it in the background already (toolkit.notebook.warmup), and the Approve waits for it."""

    def commit(request: CommitRequest) -> IngestReport:
        from toolkit.pipeline.ingest import ingest

        session = spark
        if session is None:
            from toolkit.spark import spark_session

            session = spark_session(catalog)
        return ingest(
            list(request.records),
            request.table,
            catalog,
            session,
            batch_id=request.batch_id,
            approved=request.approved,
            expected=request.expected,
            **options,
        )

    return commit


def _records_to_preview(source: Any, format: str | None, table: str) -> list[Any]:
    """All the records of ``source`` (:func:`~toolkit.pipeline.sources.records_of`); a Spark
    DataFrame's are collected by Spark, so a notebook shows "Previewing a Spark DataFrame
    against db.events: Reading 42% (21 of 50 tasks)" meanwhile, as it does for ingest."""
    if kind_of(source, format).home != "spark":
        return records_of(source, format)  # read here, without Spark
    from toolkit.spark.progress import described, tracking

    session = source.sparkSession
    what = "a Spark DataFrame"
    with tracking(session, f"Previewing {what} against {table}") as track, described(
        session, "Reading"
    ):
        records = records_of(source, format)
        track.finish(f"Read {counted(len(records), 'record')} of {what} to preview against {table}")
    return records


def with_rewrite_costs(preview: Preview, catalog: Catalog) -> Preview:
    """``preview`` with the rows and bytes each rewrite of its plan touches (the table's
    current snapshot, from its summary), so the panel can show them. Approval compares
    what a plan changes, not these counts."""
    plan = preview.plan
    if not plan.rewrites:
        return preview
    from dataclasses import replace

    from toolkit.iceberg.operations import rewrite_cost

    rows, size = rewrite_cost(catalog.load_table(preview.table))
    retypes = tuple(
        r if r.in_place else replace(r, rows=rows, bytes=size) for r in plan.retypes
    )
    return replace(preview, plan=replace(plan, retypes=retypes))


@takes_options
def preview(
    source: Any = None,
    table: str | None = None,
    catalog: Catalog | None = None,
    *,
    plan: str | os.PathLike[str] | None = None,
    spark: SparkSession | None = None,
    sample: int = 20,
    commit: Callable[[CommitRequest], IngestReport] | None = None,
    batch_id: str | None = None,
    **options: Any,
) -> PreviewPanel:
    """Plan one batch against ``table`` without changing anything, and show it.

    ``source`` is a list of dicts, a JSON-lines path or glob, or any other source
    ``ingest`` takes (a frame; a Spark DataFrame, whose rows Spark collects with its
    progress shown); the plan is made on all of its records (``sample`` limits only the
    records whose landings are shown). "Approve
    and commit" calls ``commit`` (default :func:`ingest_commit`: ``ingest`` with the
    approved plan, the previewed table state and a batch id derived from the table and the
    records, so approving the same data twice writes it once). If the table moved
    meanwhile nothing is applied and "Preview again" re-reads the source and re-plans.
    ``options`` as for :func:`toolkit.simulate`: with ``policy="widen"`` the panel also
    shows the columns widened (in place, or by a rewrite with the rows and bytes it
    touches), the rewrites awaiting approval (``allow_rewrites=False``), the columns made
    optional and the records that would be quarantined; approving commits exactly that
    plan, its rewrites included.

    ``plan`` instead: a plan file (``toolkit preview --save``, docs/plan-files.md). The
    panel shows exactly its plan and table state, for its source, table, batch id and
    options (``catalog`` defaults to the one the file names); approving commits that plan,
    or is refused if the table moved since the file was written. A plan file that no
    longer binds what was reviewed (a source file changed, its table, catalog or options
    edited: docs/plan-files.md) is refused with ``toolkit.UnreviewedPlanError``.
    """
    from dataclasses import replace

    from toolkit.iceberg.statistics import statistics
    from toolkit.notebook.panels.preview.widget import PreviewPanel
    from toolkit.pipeline.preview import plan_preview

    saved, fmt = None, None
    if plan is not None:
        from toolkit.core.evolution.planfile import loads
        from toolkit.errors import PlanFileError
        from toolkit.iceberg.catalog import catalog as open_catalog
        from toolkit.pipeline.reviewed import check_reviewed

        saved = loads(Path(plan).read_text(encoding="utf-8"), os.fspath(plan))
        if saved.source is None:
            raise PlanFileError(f"{os.fspath(plan)}: the plan file names no source to read")
        # what is shown for approval is what was reviewed, or nothing is (as `toolkit apply`)
        check_reviewed(saved, os.fspath(plan))
        source, table, fmt, batch_id = saved.source, saved.table, saved.format, saved.batch_id
        options = dict(saved.options)
        if catalog is None:
            where = {} if saved.warehouse is None else {"warehouse": saved.warehouse}
            catalog = open_catalog(saved.catalog or "lakehouse", **where)
    if source is None or table is None or catalog is None:
        raise TypeError("preview needs a source, a table and a catalog, or plan= (a plan file)")
    src, name, cat = source, table, catalog
    opts = make_options(**options)

    def make() -> Preview:
        planned = plan_preview(_records_to_preview(src, fmt, name), name, cat, **options)
        return with_rewrite_costs(planned, cat)

    def table_statistics() -> WrittenDataStatistics:
        return statistics(cat.load_table(name))

    # a plan file's panel shows the file's plan whole, its rare types too (the records they
    # set aside are shown set aside); only the records come from planning the source again
    first = make() if saved is None else replace(
        plan_preview(_records_to_preview(src, fmt, name), name, cat, **options),
        plan=saved.plan, state=saved.state,
    )
    if spark is None and commit is None:
        _start_spark_early(cat)
    return PreviewPanel(
        first,
        commit if commit is not None else ingest_commit(cat, spark, **options),
        options=opts,
        sample=sample,
        batch_id=batch_id,
        statistics=table_statistics,
        repreview=make,
        table_size=lambda: TableSize.of(cat.load_table(name)),
    )


@takes_options(leave_out=("policy", "allow_rewrites"))  # what it compares
def compare_policies(
    sample: Iterable[Any], schema: Any = None, **options: Any
) -> PolicyComparisonPanel:
    """What each policy would do with ``sample`` (records, or a list of batches), side by
    side: the ``upsolver`` policy, the ``widen`` policy with rewrites approved, and without.
    ``schema`` is where the table starts: None (a new table), a PyIceberg table (then each
    rewrite shows the rows and bytes it touches) or schema. Every number comes from
    :func:`toolkit.simulate`; ``panel.model`` holds them
    (:class:`~toolkit.notebook.panels.policies.model.PolicyComparison`, printable as a
    text table)."""
    from toolkit.notebook.panels.policies.model import policy_comparison
    from toolkit.notebook.panels.policies.widget import PolicyComparisonPanel

    return PolicyComparisonPanel(policy_comparison(sample, schema, **options))


# --- the panels of a table: its quarantine, its evolution, its maintenance ---------------


@takes_options
def inspect_quarantine(
    catalog: Catalog,
    table: str,
    *,
    spark: SparkSession | None = None,
    samples: int = 3,
    **options: Any,
) -> QuarantinePanel:
    """The quarantine inspector of ``table``: its groups, and "Replay selected", which
    replays the chosen records with :func:`toolkit.pipeline.replay.replay` under the
    plan shown for them (refused if the table moved meanwhile). ``options`` (``policy=``,
    ``on_incompatible=``...) are those of ``toolkit.ingest``. Without ``spark``, a session
    on ``catalog`` is started (or the running one reused) when a replay is asked for.
    """
    make_options(**options)  # a misspelt option fails now, not when a replay is planned
    from toolkit.iceberg.quarantine import discard as discard_rows
    from toolkit.iceberg.quarantine import quarantine
    from toolkit.notebook.panels.quarantine.widget import QuarantinePanel
    from toolkit.pipeline import replay as r

    def reload() -> Quarantine:
        return quarantine(catalog, table)

    def plan(ids: Sequence[str]) -> ReplayPreview:
        return r.replay_preview(catalog, table, ids=ids, **options)

    def replay(request: ReplayRequest) -> ReplayReport:
        session = spark
        if session is None:
            from toolkit.spark import spark_session

            session = spark_session(catalog)
        return r.replay(
            catalog, table, session, ids=request.ids, approved=request.approved,
            expected=request.expected, **options,
        )

    def discard(ids: Sequence[str]) -> int:
        return discard_rows(catalog, table, ids)

    return QuarantinePanel(
        reload(), replay, reload=reload, plan=plan, discard=discard, samples=samples
    )



def _start_spark_early(cat: Catalog) -> None:
    """In a notebook, the session the Approve will need starts now, in the background
    (toolkit.notebook.warmup), unless one runs already or pyspark is not installed."""
    from toolkit.notebook.warmup import installed, start_spark

    if not installed():
        return
    try:
        from pyspark import SparkContext
    except ImportError:
        return
    if SparkContext._active_spark_context is None:
        start_spark(cat)


def editor_model(catalog: Catalog, table: str) -> EvolutionEditorModel:
    """The editor's model of ``table`` as it is now: layout, state, rewrite cost, lineage."""
    from toolkit.iceberg.lineage import lineage
    from toolkit.iceberg.operations import layout_of, rewrite_cost

    tbl = catalog.load_table(table)
    tbl.refresh()
    layout = layout_of(tbl)
    return EvolutionEditorModel(
        table,
        layout,
        TableState.of(tbl),
        rewrite_cost=rewrite_cost(tbl),
        lineage=lineage_rows(lineage(tbl), layout),
        size=TableSize.of(tbl),
    )


def edit_schema(catalog: Catalog, table: str) -> EvolutionEditor:
    """An editor of ``table``'s evolution (RULES 6): rename, drop, move, make optional,
    widen, add columns, add or remove partition fields, set the sort order; see the schema
    after and the plan, commit it atomically (:func:`toolkit.evolve` with the previewed
    state, so a table that moved meanwhile is refused), and undo logged plans."""
    from toolkit.iceberg.lineage import undo as undo_entry
    from toolkit.iceberg.operations import evolve
    from toolkit.notebook.panels.editor.widget import EvolutionEditor

    def commit(request: EvolutionRequest, /, *, drop_data: bool = False) -> LineageEntry:
        return evolve(catalog, request.table, request.plan, expected=request.expected,
                      drop_data=drop_data)

    def undo(seq: int, expected: TableState, /, *, drop_data: bool = False) -> LineageEntry:
        return undo_entry(catalog, table, seq, expected=expected, drop_data=drop_data)

    return EvolutionEditor(
        editor_model(catalog, table),
        commit=commit,
        undo=undo,
        reload=lambda: editor_model(catalog, table),
    )


def preview_maintenance(
    table: str,
    catalog: Catalog,
    *,
    spark: SparkSession | None = None,
    **options: Any,
) -> MaintenancePanel:
    """The maintenance panel of ``table``: the plan of
    :func:`toolkit.pipeline.maintain.plan_maintenance` (``options``: ``older_than``,
    ``retain_last``, ``target_file_size``, ``min_input_files``, ``orphans_older_than``,
    ``staging_older_than``, ``steps``), and "Apply this plan", which runs exactly it with
    :func:`toolkit.pipeline.maintain.maintain` (refused if the table moved meanwhile).
    Without ``spark``, a session on ``catalog`` is started (or the running one reused)
    when one is needed: for the orphan files' dry run, and to apply.
    """
    from toolkit.notebook.panels.maintenance.widget import MaintenancePanel
    from toolkit.pipeline import maintain as m

    def session() -> SparkSession:
        if spark is not None:
            return spark
        from toolkit.spark import spark_session

        return spark_session(catalog)

    def needs_spark() -> bool:
        return "remove_orphan_files" in set(options.get("steps", STEPS))

    def replan() -> MaintenancePlan:
        return m.plan_maintenance(
            table, catalog, session() if needs_spark() else spark, **options
        )

    def apply(plan: MaintenancePlan) -> MaintenanceReport:
        return m.maintain(table, catalog, session(), plan)

    return MaintenancePanel(replan(), apply, replan=replan)
