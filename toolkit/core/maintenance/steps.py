"""Table maintenance as a plan, the vocabulary: the facts a plan is made from (measured
from a table's metadata beforehand), its steps (expire snapshots, compact small files,
rewrite manifests, remove orphan files, drop the staging tables stopped ingests left), each
with a sentence in plain words and the
table state it was made against, and what a run did.

Pure: the facts (:class:`TableFacts`) are measured by ``toolkit.iceberg.maintenance`` (and
the orphan files by a dry run on Spark, ``toolkit.spark.maintenance``); the rules that
turn facts into steps are ``toolkit.core.maintenance.rules``; the plan is applied by
``toolkit.pipeline.maintain``, refused if the table moved since
(:class:`~toolkit.core.evolution.state.TableState`).

>>> step = Compact(512 * 1024 * 1024, 5, data_files=13, small_files=12, files=12,
...                bytes=12 * 1024 * 1024, into=1)
>>> print(step.sentence)
Compact 12 small data files (12 MB) of 13 into about 1 file of up to 512 MB; the rows \
stay the same.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from toolkit.core.evolution.state import TableState
from toolkit.core.values.wording import counted

__all__ = [
    "DAY_MS",
    "STEPS",
    "Compact",
    "DataFile",
    "DropStagingTables",
    "ExpireSnapshots",
    "KeptSnapshot",
    "MaintenancePlan",
    "MaintenanceReport",
    "MaintenanceStep",
    "Manifest",
    "OrphanSearch",
    "Ref",
    "RemoveOrphanFiles",
    "RewriteManifests",
    "Snapshot",
    "StagingTable",
    "StepName",
    "StepResult",
    "TableFacts",
    "UnreadableColumn",
    "listed",
    "check_steps",
    "size_text",
    "time_text",
]

StepName: TypeAlias = Literal[
    "compact", "rewrite_manifests", "expire_snapshots", "remove_orphan_files",
    "drop_staging_tables",
]
#: the steps, in the order a run applies them: compaction first (its new files then get
#: their manifests rewritten), expiry before orphan removal (as Iceberg advises); the
#: staging tables other tables are, apart from the table's own metadata, last
STEPS: Final[tuple[StepName, ...]] = (
    "compact", "rewrite_manifests", "expire_snapshots", "remove_orphan_files",
    "drop_staging_tables",
)
DAY_MS: Final = 86_400_000
#: Iceberg's defaults: data file target size, manifest target size, group size limit
DEFAULT_TARGET_FILE_SIZE: Final = 512 * 1024 * 1024
DEFAULT_MANIFEST_SIZE: Final = 8 * 1024 * 1024
MAX_GROUP_SIZE: Final = 100 * 1024 * 1024 * 1024
#: how many names (batch ids, files) a sentence lists before "..."
LISTED: Final = 5


# --- the facts a plan is made from ------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """One snapshot of the table's metadata."""

    snapshot_id: int
    parent_id: int | None
    timestamp_ms: int
    batch_id: str | None = None
    """The toolkit batch it wrote (``toolkit.batch-id`` in its summary), if any."""
    replay_of: str | None = None
    """On a quarantine table: the replay batch whose rows this snapshot removed."""


@dataclass(frozen=True)
class Ref:
    """A branch or tag: a name pointing to a snapshot."""

    name: str
    snapshot_id: int
    kind: Literal["branch", "tag"]


@dataclass(frozen=True)
class DataFile:
    """A live data file of the current snapshot."""

    path: str
    size: int
    records: int
    partition: str = ""
    """The file's partition (and spec), as a key: files compact within one partition."""


@dataclass(frozen=True)
class Manifest:
    """A manifest of the current snapshot."""

    path: str
    length: int
    content: Literal["data", "deletes"]
    spec_id: int


@dataclass(frozen=True)
class StagingTable:
    """A staging table of the table (``<table>__toolkit_new_<id>``, marked as standing in
    for it): a new table is written under that name, then renamed in one step; a process
    that died in between left it behind (``toolkit.iceberg.new_tables``)."""

    identifier: str
    last_updated_ms: int
    """When its metadata last changed (an ingest writing it changes it)."""
    data_files: int
    rows: int
    """The data files and rows its snapshots wrote, staged or not: never published under
    the table's name."""
    files: tuple[str, ...] = ()
    """Every file it references (data, manifests, metadata): they lie in the table's
    folder, yet are not the table's orphans."""


@dataclass(frozen=True)
class TableFacts:
    """What the table's metadata says, when it was read: everything a plan is made from."""

    table: str
    state: TableState
    measured_at_ms: int
    snapshots: tuple[Snapshot, ...] = ()
    refs: tuple[Ref, ...] = ()
    data_files: tuple[DataFile, ...] = ()
    manifests: tuple[Manifest, ...] = ()
    default_spec_id: int = 0
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE
    """The table's ``write.target-file-size-bytes`` (Iceberg's default if unset)."""
    manifest_target_size: int = DEFAULT_MANIFEST_SIZE
    """The table's ``commit.manifest.target-size-bytes`` (Iceberg's default if unset)."""
    pending_batch: str | None = None
    """The batch id of a replay under way from the table's quarantine: settling it needs
    to see that batch in the table."""
    foreign_folders: tuple[tuple[str, str], ...] = ()
    """(table, folder) of other tables whose files live under this table's folder: their
    files look like orphans here and are never removed."""
    retention_rules: tuple[str, ...] = ()
    """Retention set on the table's refs (a branch's maximum snapshot age, a ref's maximum
    age), in words: under them Iceberg's ``expire_snapshots`` would expire snapshots or
    drop refs beyond any plan's list, so no expiry is planned while they are set."""
    fold_files: tuple[str, ...] = ()
    """The toolkit's fold files the table's properties point to (older entries of its
    lineage, arrivals and ingest ledger): never orphans, whatever Iceberg says."""
    staging_tables: tuple[StagingTable, ...] = ()
    """The staging tables of the table still in the catalog, whatever their age."""

    @property
    def ref_map(self) -> Mapping[str, int]:
        return {r.name: r.snapshot_id for r in self.refs}


@dataclass(frozen=True)
class OrphanSearch:
    """What a dry run of Iceberg's orphan search found: the files older than
    ``older_than_ms`` that no metadata references."""

    older_than_ms: int
    found: tuple[str, ...]


# --- the steps ----------------------------------------------------------------------------


@dataclass(frozen=True)
class KeptSnapshot:
    """A snapshot old enough to expire that the plan keeps, and why."""

    snapshot_id: int
    batch_id: str | None
    why: str


@dataclass(frozen=True)
class UnreadableColumn:
    """A column that only the snapshots to expire still read: one the table dropped, or a
    rewritten column's values as stored before the conversion (a rewrite gives the column
    a new field ID, RULES 6). Once those snapshots expire, these values are readable
    nowhere.

    >>> print(UnreadableColumn("secret", 2, 5, lineage=2).sentence)
    The expired snapshots are the last that read column secret (dropped in lineage #2): \
its 5 values will no longer be readable.
    >>> print(UnreadableColumn("price", 3, 4, lineage=3, rewritten=True).sentence)
    The expired snapshots are the last that read column price as stored before its \
rewrite (lineage #3): its 4 values as they were before the conversion will no longer be \
readable (the table keeps them converted).
    """

    name: str
    """Its dotted path, as the expired snapshots' schema names it."""
    field_id: int
    values: int | None
    """Its non-null values (of its leaf fields, for a struct, list or map) in the data
    files those snapshots reference; None: not counted (``uncounted`` says why)."""
    lineage: int | None = None
    """The lineage entry that dropped or rewrote it, when the log tells."""
    rewritten: bool = False
    """A rewrite replaced it (the table holds its values converted), rather than a drop."""
    uncounted: str | None = None
    at_most: bool = False
    """Delete files remove rows of those data files (a position or equality delete): the
    count takes in the values of rows already deleted, so it is an upper bound."""

    @property
    def short(self) -> str:
        """A few words: ``column secret (5 values)``, ``column v (up to 5 values)``.

        >>> UnreadableColumn("v", 2, 5, at_most=True, rewritten=True).short
        'column v (up to 5 values as stored before its rewrite)'
        """
        values = ("values not counted" if self.values is None
                  else ("up to " if self.at_most else "") + counted(self.values, "value"))
        before = " as stored before its rewrite" if self.rewritten else ""
        return f"column {self.name} ({values}{before})"

    @property
    def sentence(self) -> str:
        entry = f"lineage #{self.lineage}" if self.lineage is not None else None
        values = (f"its values (not counted: {self.uncounted})" if self.values is None
                  else f"up to {counted(self.values, 'value')} of it (delete files removed "
                  "some of its rows; the count takes them in)" if self.at_most
                  else f"its {counted(self.values, 'value')}")
        if self.rewritten:
            return (
                f"The expired snapshots are the last that read column {self.name} as stored "
                f"before its rewrite{f' ({entry})' if entry else ''}: {values} as they were "
                "before the conversion will no longer be readable (the table keeps them "
                "converted)."
            )
        dropped = f"dropped in {entry}" if entry else "no longer in the table's schema"
        return (
            f"The expired snapshots are the last that read column {self.name} ({dropped}): "
            f"{values} will no longer be readable."
        )


@dataclass(frozen=True)
class ExpireSnapshots:
    """Expire snapshots older than a time, except those a reader or the ledger needs."""

    older_than_ms: int
    retain_last: int
    total: int
    """Snapshots in the table when the plan was made."""
    expire: tuple[int, ...]
    """The snapshot ids to expire (exactly these: nothing else is expired)."""
    batches: tuple[str, ...]
    """The batch ids of those snapshots, folded into the ingest ledger first."""
    kept: tuple[KeptSnapshot, ...]
    """Snapshots older than ``older_than_ms`` that are kept, with why."""
    lost: tuple[str, ...] = ()
    """What readers can no longer do once these snapshots are gone, in words."""
    blocked: str | None = None
    """Why nothing may be expired at all (retention set on the refs), in words."""
    unreadable: tuple[UnreadableColumn, ...] = ()
    """The columns whose values only these snapshots read (dropped or rewritten since),
    with how many: expiring them makes those values unreadable."""
    removed_rows: int = 0
    """Rows that deletes or overwrites removed from the table and that only these
    snapshots read (at least this many when an overwrite also wrote rows)."""
    removed_rows_at_least: bool = False
    """Whether ``removed_rows`` is a lower bound: an overwrite wrote rows as it removed
    others, and only the difference is known to be gone."""
    name: StepName = field(default="expire_snapshots", init=False)

    @property
    def losing(self) -> tuple[UnreadableColumn, ...]:
        """The columns of :attr:`unreadable` that hold values (or may: not counted)."""
        return tuple(c for c in self.unreadable if c.values != 0)

    def _removed(self) -> str:
        bound = "at least " if self.removed_rows_at_least else ""
        return f"{bound}{counted(self.removed_rows, 'row')} that deletes or overwrites removed"

    @property
    def destroys(self) -> tuple[str, ...]:
        """What becomes readable nowhere once these snapshots expire, in words: per
        column, then the rows deletes removed. Empty when nothing does."""
        notes = [c.sentence for c in self.losing]
        if self.removed_rows:
            notes.append(f"The expired snapshots are the last that read {self._removed()} "
                         "from the table: they will no longer be readable.")
        return tuple(notes)

    @property
    def gone(self) -> tuple[str, ...]:
        """What becomes readable nowhere once these snapshots expire, a few words each
        (``column secret (5 values)``). Empty when nothing does."""
        return (*(c.short for c in self.losing),
                *((self._removed(),) if self.removed_rows else ()))

    @property
    def todo(self) -> bool:
        return bool(self.expire) and self.blocked is None

    @property
    def sentence(self) -> str:
        if self.blocked is not None:
            return f"Not expiring any snapshot: {self.blocked}."
        old = len(self.expire) + len(self.kept)
        cutoff = time_text(self.older_than_ms)
        if not old:
            return (
                f"No snapshot to expire: none of the {counted(self.total, 'snapshot')} is "
                f"older than {cutoff}."
            )
        # each reason once (the last 5 of main, the current one...), in order of appearance
        why = ", ".join(dict.fromkeys(r for k in self.kept for r in k.why.split(", ")))
        keep = f"; keep {len(self.kept):,} of them: {why}" if self.kept else ""
        if not self.expire:
            return (
                f"No snapshot to expire: of the {counted(old, 'snapshot')} older than "
                f"{cutoff}, every one is kept: {why}."
            )
        text = (
            f"Expire {len(self.expire):,} of {counted(self.total, 'snapshot')} ({old:,} older "
            f"than {cutoff}){keep}."
        )
        if self.batches:
            text += (
                f" Their batch ids ({listed(self.batches)}) are first kept in the ingest "
                "ledger, so those batches are still never written twice."
            )
        return text + "".join(f" {note}" for note in (*self.destroys, *self.lost))


@dataclass(frozen=True)
class Compact:
    """Rewrite small data files into files of about the target size (bin-packing)."""

    target_file_size: int
    min_input_files: int
    data_files: int
    """Live data files now."""
    small_files: int
    """Files outside the wanted size range (under 75% or over 180% of the target)."""
    files: int
    """Of those, the files Iceberg's rule rewrites (enough of them in one partition)."""
    bytes: int
    into: int
    """About how many files they become."""
    name: StepName = field(default="compact", init=False)

    @property
    def todo(self) -> bool:
        return self.files > 0

    @property
    def sentence(self) -> str:
        target = size_text(self.target_file_size)
        if not self.todo:
            why = (
                f"{self.small_files:,} of {counted(self.data_files, 'data file')} "
                f"{'is' if self.small_files == 1 else 'are'} small, fewer than "
                f"{self.min_input_files:,} in any partition"
                if self.small_files
                else f"none of the {counted(self.data_files, 'data file')} is far from {target}"
            )
            return f"Nothing to compact: {why}."
        return (
            f"Compact {counted(self.files, 'small data file')} ({size_text(self.bytes)}) of "
            f"{self.data_files:,} into about {counted(self.into, 'file')} of up to {target}; "
            "the rows stay the same."
        )


@dataclass(frozen=True)
class RewriteManifests:
    """Rewrite the current snapshot's manifests into fewer, so scans plan faster."""

    manifests: int
    files: int
    """Manifests to rewrite (those of the table's partition spec)."""
    into: int
    after_compaction: bool = False
    """Compaction runs first and adds manifests: the counts are those before it."""
    name: StepName = field(default="rewrite_manifests", init=False)

    @property
    def todo(self) -> bool:
        return self.files > 0 or self.after_compaction

    @property
    def sentence(self) -> str:
        after = (
            " (counted before the compaction, which adds its own; the run reports the "
            "real numbers)"
            if self.after_compaction
            else ""
        )
        if not self.files:
            if self.after_compaction:
                return (
                    f"Rewrite the manifests the compaction leaves ({self.manifests} now) "
                    "if there is more than one."
                )
            return f"Nothing to rewrite: {counted(self.manifests, 'manifest')}, already compact."
        return f"Rewrite {counted(self.files, 'manifest')} into {self.into:,}{after}."


@dataclass(frozen=True)
class RemoveOrphanFiles:
    """Delete files in the table's folder that no metadata references, older than a time
    (a dry run found them; exactly those are removed, if still unreferenced)."""

    older_than_ms: int
    files: tuple[str, ...]
    left_alone: tuple[str, ...] = ()
    """What the dry run found that is never removed (another table's files), in words."""
    name: StepName = field(default="remove_orphan_files", init=False)

    @property
    def todo(self) -> bool:
        return bool(self.files)

    @property
    def sentence(self) -> str:
        cutoff = time_text(self.older_than_ms)
        note = "".join(f" {n}" for n in self.left_alone)
        if not self.files:
            return f"No orphan file older than {cutoff} was found.{note}"
        names = listed([f.rsplit("/", 1)[-1] for f in self.files])
        return (
            f"Remove {counted(len(self.files), 'orphan file')} older than {cutoff}, which no "
            f"snapshot references ({names}): left by writes that failed or were "
            f"dropped.{note}"
        )


@dataclass(frozen=True)
class DropStagingTables:
    """Drop the staging tables that stopped ingests left (older than a time: an ingest
    under way may be writing a younger one), and delete their files."""

    older_than_ms: int
    drop: tuple[StagingTable, ...]
    """Exactly these are dropped, each only if still a staging table, unchanged since."""
    young: tuple[StagingTable, ...] = ()
    """Staging tables updated since ``older_than_ms``: kept."""
    name: StepName = field(default="drop_staging_tables", init=False)

    @property
    def todo(self) -> bool:
        return bool(self.drop)

    @property
    def sentence(self) -> str:
        """What the step drops and keeps.

        >>> left = StagingTable("db.t__toolkit_new_ab12cd34ef56", 0, 3, 1200)
        >>> print(DropStagingTables(1, (left,)).sentence)
        Drop 1 staging table a stopped ingest left (db.t__toolkit_new_ab12cd34ef56, 3 data \
files, 1,200 rows never published) and delete its files; rerunning that batch writes it.
        """
        young = ""
        if self.young:
            names = listed([t.identifier for t in self.young])
            young = (
                f"{counted(len(self.young), 'staging table')} updated since "
                f"{time_text(self.older_than_ms)} ({names}) "
                f"{'is' if len(self.young) == 1 else 'are'} kept: an ingest may be "
                f"writing {'it' if len(self.young) == 1 else 'them'}."
            )
        if not self.drop:
            return ("No staging table left by a stopped ingest"
                    + (f" older than {time_text(self.older_than_ms)}; {young}"
                       if young else "."))
        one = len(self.drop) == 1
        shown = "; ".join(
            f"{t.identifier}, " + (
                f"{counted(t.data_files, 'data file')}, {counted(t.rows, 'row')} never "
                "published" if t.data_files else "no data file")
            for t in self.drop[:LISTED]
        )
        more = len(self.drop) - LISTED
        shown += f"; and {more} more" if more > 0 else ""
        return (
            f"Drop {counted(len(self.drop), 'staging table')} "
            f"{'a stopped ingest' if one else 'stopped ingests'} left ({shown}) and delete "
            f"{'its' if one else 'their'} files; rerunning "
            f"{'that batch writes it' if one else 'those batches writes them'}."
            + (f" {young}" if young else "")
        )


MaintenanceStep: TypeAlias = (
    ExpireSnapshots | Compact | RewriteManifests | RemoveOrphanFiles | DropStagingTables
)


@dataclass(frozen=True)
class MaintenancePlan:
    """The steps a maintenance run applies to one table, and the state they were planned
    against (a run on a table that moved since is refused)."""

    table: str
    state: TableState
    made_at_ms: int
    steps: tuple[MaintenanceStep, ...]
    refs: tuple[tuple[str, int], ...] = ()
    """(name, snapshot id) of every branch and tag when planned: compared too."""

    @property
    def todo(self) -> bool:
        return any(s.todo for s in self.steps)

    def step(self, name: StepName) -> MaintenanceStep | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def expiry(self) -> ExpireSnapshots | None:
        step = self.step("expire_snapshots")
        return step if isinstance(step, ExpireSnapshots) else None

    def __str__(self) -> str:
        head = f"maintenance of {self.table} (planned {time_text(self.made_at_ms)})"
        if not self.steps:
            return f"{head}: no step chosen"
        return "\n".join([f"{head}:", *(f"  {s.name}: {s.sentence}" for s in self.steps)])


# --- what a run did -----------------------------------------------------------------------


@dataclass(frozen=True)
class StepResult:
    """What one step did: the counts its Iceberg procedure returned, and a sentence."""

    name: StepName
    ran: bool
    counts: tuple[tuple[str, int], ...] = ()
    sentence: str = ""

    def count(self, key: str) -> int:
        return dict(self.counts).get(key, 0)


@dataclass(frozen=True)
class MaintenanceReport:
    """What :func:`toolkit.maintain` did to one table."""

    table: str
    plan: MaintenancePlan
    results: tuple[StepResult, ...]
    state: TableState
    """The table's state after the run."""

    def result(self, name: StepName) -> StepResult | None:
        return next((r for r in self.results if r.name == name), None)

    @property
    def changed(self) -> bool:
        return any(r.ran for r in self.results)

    def __str__(self) -> str:
        if not self.results:
            return f"{self.table}: maintenance had nothing to do"
        return "\n".join(
            [f"maintenance of {self.table}:", *(f"  {r.name}: {r.sentence}" for r in self.results)]
        )

    @staticmethod
    def compacted(counts: Mapping[str, int]) -> StepResult:
        """The result of ``rewrite_data_files`` (its output row)."""
        n, into = counts.get("rewritten_data_files_count", 0), counts.get(
            "added_data_files_count", 0
        )
        size = size_text(counts.get("rewritten_bytes_count", 0))
        text = f"compacted {n} data files ({size}) into {into}" if n else "nothing compacted"
        return StepResult("compact", True, tuple(counts.items()), text)

    @staticmethod
    def manifests_rewritten(counts: Mapping[str, int]) -> StepResult:
        """The result of ``rewrite_manifests``."""
        n, into = counts.get("rewritten_manifests_count", 0), counts.get(
            "added_manifests_count", 0
        )
        text = f"rewrote {n} manifests into {into}" if n else "no manifest needed rewriting"
        return StepResult("rewrite_manifests", True, tuple(counts.items()), text)

    @staticmethod
    def expired(
        snapshots: int, counts: Mapping[str, int], planned: ExpireSnapshots | None = None
    ) -> StepResult:
        """The result of ``expire_snapshots``; ``snapshots``: how many left the metadata;
        ``planned``: the step, whose values readable nowhere now are named (when the run
        expired every snapshot it listed, the last readers of those values).

        >>> step = ExpireSnapshots(0, 1, 2, (7,), (), (),
        ...                        unreadable=(UnreadableColumn("secret", 2, 5, 2),))
        >>> print(MaintenanceReport.expired(1, {"deleted_data_files_count": 1}, step).sentence)
        expired 1 snapshot, deleting 1 data file no snapshot left needs; readable nowhere \
now: column secret (5 values)
        """
        deleted = [
            (counts.get("deleted_data_files_count", 0), "data file"),
            (counts.get("deleted_manifest_files_count", 0), "manifest"),
            (counts.get("deleted_manifest_lists_count", 0), "manifest list"),
            (
                counts.get("deleted_position_delete_files_count", 0)
                + counts.get("deleted_equality_delete_files_count", 0),
                "delete file",
            ),
            (counts.get("deleted_statistics_files_count", 0), "statistics file"),
        ]
        files = ", ".join(counted(n, what) for n, what in deleted if n) or "no file"
        text = f"expired {counted(snapshots, 'snapshot')}, deleting {files} no snapshot left needs"
        if planned is not None and snapshots == len(planned.expire) and planned.gone:
            text += "; readable nowhere now: " + ", ".join(planned.gone)
        return StepResult(
            "expire_snapshots", True, (("expired_snapshots", snapshots), *counts.items()), text
        )

    @staticmethod
    def not_expired(planned: ExpireSnapshots) -> StepResult:
        """The result of an expiry a run did not make: a plan nobody reviewed (a stream's
        maintenance, :func:`toolkit.maintain` without a plan) whose snapshots are the last
        readers of stored values.

        >>> step = ExpireSnapshots(0, 1, 2, (7, 8), (), (),
        ...                        unreadable=(UnreadableColumn("secret", 2, 5, 2),))
        >>> print(MaintenanceReport.not_expired(step).sentence)
        kept 2 snapshots: expiring them would make readable nowhere column secret \
(5 values); to expire them, review the plan (toolkit.plan_maintenance, or toolkit \
maintain without --yes) and apply it, or pass allow_losses=True
        """
        them = "it" if len(planned.expire) == 1 else "them"
        text = (f"kept {counted(len(planned.expire), 'snapshot')}: expiring {them} would make "
                f"readable nowhere {', '.join(planned.gone)}; to expire {them}, review the plan "
                "(toolkit.plan_maintenance, or toolkit maintain without --yes) and apply it, "
                "or pass allow_losses=True")
        return StepResult("expire_snapshots", False, (("expired_snapshots", 0),), text)

    @staticmethod
    def orphans_removed(files: Sequence[str]) -> StepResult:
        """The result of ``remove_orphan_files`` (the files it removed)."""
        text = (f"removed {counted(len(files), 'orphan file')}" if files
                else "no orphan file removed")
        return StepResult(
            "remove_orphan_files", True, (("orphan_files_removed", len(files)),), text
        )

    @staticmethod
    def staging_dropped(dropped: int, files: int, kept: Sequence[str] = ()) -> StepResult:
        """The result of dropping staging tables: ``dropped`` tables and ``files`` files
        gone; ``kept``: why each planned one that was not dropped was kept, in words.

        >>> print(MaintenanceReport.staging_dropped(1, 5, ["db.t__toolkit_new_ab: it no "
        ...       "longer exists"]).sentence)
        dropped 1 staging table, deleting 5 files; kept db.t__toolkit_new_ab: it no longer exists
        """
        text = (f"dropped {counted(dropped, 'staging table')}, deleting "
                f"{counted(files, 'file')}" if dropped else "no staging table dropped")
        text += "".join(f"; kept {why}" for why in kept)
        return StepResult(
            "drop_staging_tables", True,
            (("staging_tables_dropped", dropped), ("staging_files_deleted", files)), text,
        )


def check_steps(steps: Iterable[str]) -> tuple[StepName, ...]:
    """The chosen steps in run order; an unknown name is refused, naming it.

    >>> check_steps(["expire_snapshots", "compact"])
    ('compact', 'expire_snapshots')
    """
    chosen = set(steps)
    unknown = sorted(chosen - set(STEPS))
    if unknown:
        raise ValueError(
            f"unknown maintenance {'step' if len(unknown) == 1 else 'steps'} "
            f"{', '.join(map(repr, unknown))}; the steps are "
            + ", ".join(STEPS)
        )
    return tuple(s for s in STEPS if s in chosen)


# --- words --------------------------------------------------------------------------------


def listed(names: Sequence[str], limit: int = LISTED) -> str:
    """The first few names, and how many more.

    >>> listed(["a", "b", "c"], 2)
    'a, b and 1 more'
    """
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def size_text(size: int) -> str:
    """Bytes in words (powers of 1024, as Iceberg's sizes are set).

    >>> size_text(596), size_text(512 * 1024 * 1024), size_text(1536)
    ('596 B', '512 MB', '1.5 kB')
    """
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def time_text(ms: int) -> str:
    """A time in milliseconds since the epoch, in UTC, to the minute (seconds if any).

    >>> time_text(0), time_text(61_000)
    ('1970-01-01 00:00 UTC', '1970-01-01 00:01:01 UTC')
    """
    at = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return at.strftime("%Y-%m-%d %H:%M:%S UTC" if at.second else "%Y-%m-%d %H:%M UTC")
