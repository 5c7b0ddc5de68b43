"""Table maintenance as a plan, the rules: which snapshots expire and which are kept (and
why), which small files compact into about how many, which manifests are rewritten, which
orphan files go, decided from :class:`~toolkit.core.maintenance.steps.TableFacts` alone. Each
rule follows the Iceberg procedure that applies it, so the plan's numbers are the run's.

What a plan never removes: the current snapshot, a snapshot a branch or tag points to, the
last ``retain_last`` snapshots of every branch, a snapshot no branch holds that is less
than a day old (a staged write may be in flight), the snapshot of a replay under way,
orphan files younger than a day, the files of the table's staging tables (they are another
table's), and a staging table updated within the last day (an ingest may be writing it).
The batch ids of expired snapshots are folded into the ingest ledger first, so a batch is
never written twice after its snapshot is gone.

>>> from toolkit.core.maintenance.steps import Ref, Snapshot
>>> from toolkit.core.evolution.state import TableState
>>> day = 86_400_000
>>> facts = TableFacts(
...     "db.t", TableState(0, 3), measured_at_ms=10 * day,
...     snapshots=tuple(Snapshot(i, i - 1 or None, i * day, f"b{i}") for i in (1, 2, 3)),
...     refs=(Ref("main", 3, "branch"),),
... )
>>> step = plan_expiry(facts, older_than_ms=9 * day, retain_last=1)
>>> step.expire, [k.why for k in step.kept]
((1, 2), ['the current one, the last of branch main'])
>>> print(step.sentence.split(" Time travel")[0])
Expire 2 of 3 snapshots (3 older than 1970-01-10 00:00 UTC); keep 1 of them: the \
current one, the last of branch main. Their batch ids (b1, b2) are first kept in the \
ingest ledger, so those batches are still never written twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from toolkit.core.maintenance.steps import (
    DAY_MS,
    MAX_GROUP_SIZE,
    Compact,
    DataFile,
    DropStagingTables,
    ExpireSnapshots,
    KeptSnapshot,
    MaintenancePlan,
    MaintenanceStep,
    OrphanSearch,
    RemoveOrphanFiles,
    RewriteManifests,
    Snapshot,
    TableFacts,
    check_steps,
    listed,
    time_text,
)
from toolkit.core.values.wording import counted

__all__ = [
    "expected_output_files",
    "make_plan",
    "plan_compaction",
    "plan_expiry",
    "plan_manifests",
    "plan_orphans",
    "plan_staging_tables",
]


def _ancestors(snapshot_id: int, by_id: Mapping[int, Snapshot]) -> list[Snapshot]:
    """``snapshot_id`` and its ancestors still in the metadata, newest first."""
    out: list[Snapshot] = []
    snap = by_id.get(snapshot_id)
    while snap is not None and len(out) <= len(by_id):  # a cycle cannot loop forever
        out.append(snap)
        snap = None if snap.parent_id is None else by_id.get(snap.parent_id)
    return out


def plan_expiry(facts: TableFacts, *, older_than_ms: int, retain_last: int) -> ExpireSnapshots:
    """Which snapshots older than ``older_than_ms`` to expire, and which to keep and why:
    the current one, those a branch or tag points to, the last ``retain_last`` of each
    branch, one no branch holds that is less than a day old (a staged write in flight),
    and the one a replay under way needs."""
    if retain_last < 1:
        raise ValueError(
            f"{facts.table}: retain_last must keep at least 1 snapshot, not {retain_last}"
        )
    by_id = {s.snapshot_id: s for s in facts.snapshots}
    why: dict[int, list[str]] = {}

    def keep(snapshot_id: int, reason: str) -> None:
        why.setdefault(snapshot_id, []).append(reason)

    if facts.state.snapshot_id is not None:
        keep(facts.state.snapshot_id, "the current one")
    on_branch: set[int] = set()
    for ref in facts.refs:
        if ref.kind == "tag":
            keep(ref.snapshot_id, f"tag {ref.name}")
            continue
        if ref.name != "main":
            keep(ref.snapshot_id, f"the head of branch {ref.name}")
        line = _ancestors(ref.snapshot_id, by_id)
        on_branch.update(s.snapshot_id for s in line)
        last = "the last" if retain_last == 1 else f"one of the last {retain_last}"
        for snap in line[:retain_last]:
            keep(snap.snapshot_id, f"{last} of branch {ref.name}")
    in_flight = facts.measured_at_ms - DAY_MS
    for snap in facts.snapshots:
        if snap.snapshot_id not in on_branch and snap.timestamp_ms >= in_flight:
            keep(snap.snapshot_id, "on no branch and under a day old (a staged write may be "
                 "publishing it)")
        if facts.pending_batch is not None and snap.batch_id == facts.pending_batch:
            keep(snap.snapshot_id, f"needed by a replay under way (batch {snap.batch_id})")

    old = [s for s in facts.snapshots if s.timestamp_ms < older_than_ms]
    expire = tuple(s.snapshot_id for s in old if s.snapshot_id not in why)
    kept = tuple(
        KeptSnapshot(s.snapshot_id, s.batch_id, ", ".join(why[s.snapshot_id]))
        for s in old
        if s.snapshot_id in why
    )
    gone = [by_id[i] for i in expire]
    # only batches on a branch were published: the others never reached a reader
    batches = tuple(s.batch_id for s in gone if s.batch_id and s.snapshot_id in on_branch)
    blocked = None
    if facts.retention_rules:
        blocked = (
            f"{'; '.join(facts.retention_rules)}. Under that retention Iceberg's "
            "expire_snapshots would also expire snapshots (or drop branches and tags) this "
            "plan does not list; remove it, or expire with Iceberg's own tools"
        )
    return ExpireSnapshots(
        older_than_ms, retain_last, len(facts.snapshots), expire, batches, kept,
        _what_is_lost(gone, batches), blocked,
    )


def _what_is_lost(gone: Sequence[Snapshot], batches: Sequence[str]) -> tuple[str, ...]:
    """What readers of the table can no longer do once ``gone`` are expired, in words."""
    if not gone:
        return ()
    notes = [
        "Time travel and rollback to the expired snapshots will no longer work; the "
        "table's current rows, its lineage log and undo are not affected."
    ]
    if batches:
        which = ("that batch" if len(batches) == 1
                 else f"those {counted(len(batches), 'batch')}")
        notes.append(
            f"Written Data Statistics will no longer show what {which} wrote one by one "
            "(the live totals stay)."
        )
    replays = [s.replay_of for s in gone if s.replay_of]
    if replays:
        notes.append(
            f"{counted(len(replays), 'replay')} recorded only in these snapshots "
            f"({listed(replays)}) will no longer be recognized as already done: replaying "
            "the same ids again finds them gone from the quarantine instead."
        )
    return tuple(notes)


def expected_output_files(size: int, target: int, min_size: int, write_max: int) -> int:
    """How many files Iceberg's bin-packing writes for ``size`` bytes (its
    ``expectedOutputFiles``: a remainder big enough gets a file of its own, otherwise
    it is spread over the others when they stay within 10% of the target).

    >>> mb = 1024 * 1024
    >>> expected_output_files(3 * mb, 512 * mb, 384 * mb, 716 * mb)
    1
    >>> expected_output_files(1100 * mb, 512 * mb, 384 * mb, 716 * mb)
    2
    """
    if size < target:
        return 1
    with_rest, without = -(-size // target), size // target
    if size % target > min_size:
        return with_rest
    if size / without < min(1.1 * target, write_max):
        return without
    return with_rest


def plan_compaction(
    facts: TableFacts, *, target_file_size: int | None, min_input_files: int
) -> Compact:
    """The files Iceberg's ``rewrite_data_files`` (bin-pack) rewrites, partition by
    partition: files under 75% or over 180% of the target, in groups that have at least
    ``min_input_files`` of them (or more bytes than one target file, or a too-large one)."""
    target = target_file_size or facts.target_file_size
    if target <= 0 or min_input_files < 1:
        raise ValueError(
            f"{facts.table}: target_file_size must be positive (not {target}) and "
            f"min_input_files at least 1 (not {min_input_files})"
        )
    min_size, max_size = int(target * 0.75), int(target * 1.8)
    write_max = int(target + (max_size - target) * 0.5)
    by_partition: dict[str, list[DataFile]] = {}
    for f in facts.data_files:
        by_partition.setdefault(f.partition, []).append(f)
    small = files = size = into = 0
    for group_files in by_partition.values():
        candidates = [f for f in group_files if f.size < min_size or f.size > max_size]
        small += len(candidates)
        for group in _packed(candidates):
            total = sum(f.size for f in group)
            n = len(group)
            if (n > 1 and n >= min_input_files) or (n > 1 and total > target) or (
                total > max_size
            ):
                files, size = files + n, size + total
                into += expected_output_files(total, target, min_size, write_max)
    return Compact(target, min_input_files, len(facts.data_files), small, files, size, into)


def _packed(files: Sequence[DataFile]) -> list[list[DataFile]]:
    """Files in groups of at most 100 GB, in order (Iceberg's packer, one bin open)."""
    groups: list[list[DataFile]] = []
    total = 0
    for f in files:
        if not groups or total + f.size > MAX_GROUP_SIZE:
            groups.append([])
            total = 0
        groups[-1].append(f)
        total += f.size
    return groups


def plan_manifests(facts: TableFacts, *, after_compaction: bool = False) -> RewriteManifests:
    """The manifests Iceberg's ``rewrite_manifests`` rewrites: per content (data,
    deletes), those of the table's partition spec, into one per target size; nothing when
    a single manifest is already within it."""
    files = into = 0
    for content in ("data", "deletes"):
        chosen = [
            m for m in facts.manifests
            if m.content == content and m.spec_id == facts.default_spec_id
        ]
        if not chosen:
            continue
        total = sum(m.length for m in chosen)
        target = max(1, -(-total // facts.manifest_target_size))
        if target == 1 and len(chosen) == 1:
            continue
        files, into = files + len(chosen), into + target
    return RewriteManifests(len(facts.manifests), files, into, after_compaction)


def plan_orphans(
    facts: TableFacts, *, older_than_ms: int, found: Sequence[str]
) -> RemoveOrphanFiles:
    """The orphan files a dry run ``found``, minus any under another table's folder and
    the toolkit's fold files the table's properties point to (no snapshot references
    them, so Iceberg counts them as orphans: see ``toolkit.core.maintenance.folding``)."""
    if older_than_ms > facts.measured_at_ms - DAY_MS:
        raise ValueError(
            f"{facts.table}: orphan files are removed only when older than a day (files of "
            f"writes in flight must survive); {time_text(older_than_ms)} is too recent"
        )
    keep: list[str] = []
    notes = []

    def set_aside(theirs: list[str], whose: str, fate: str) -> None:
        if theirs:
            notes.append(f"{counted(len(theirs), 'file')} of {whose} "
                         f"{'is' if len(theirs) == 1 else 'are'} {fate}.")
            keep.extend(theirs)

    for name, folder in facts.foreign_folders:
        prefix = folder.rstrip("/") + "/"
        set_aside([f for f in found if _under(f, prefix)], f"{name} under its folder",
                  "left alone")
    # a staging table's files lie in this table's folder (it was made where the table
    # would be) but are that table's: dropping it (its own step) deletes them
    staging = {_bare(f) for t in facts.staging_tables for f in t.files}
    set_aside([f for f in found if _bare(f) in staging], "staging tables",
              "left to drop_staging_tables")
    folds = {_bare(f) for f in facts.fold_files}
    set_aside([f for f in found if _bare(f) in folds],
              "the toolkit's logs (lineage, arrivals, the ingest ledger)", "kept")
    kept = set(keep)
    files = tuple(f for f in found if f not in kept)
    return RemoveOrphanFiles(older_than_ms, files, tuple(notes))


def plan_staging_tables(facts: TableFacts, *, older_than_ms: int) -> DropStagingTables:
    """The table's staging tables last updated before ``older_than_ms`` (left by ingests
    that stopped between writing and renaming them), to drop; the younger ones are kept,
    as an ingest under way may be writing them."""
    old = tuple(t for t in facts.staging_tables if t.last_updated_ms < older_than_ms)
    young = tuple(t for t in facts.staging_tables if t.last_updated_ms >= older_than_ms)
    return DropStagingTables(older_than_ms, old, young)


def _bare(p: str) -> str:
    """A path without its ``file:`` spelling (``file:/x``, ``file:///x``: ``x``)."""
    return p.split(":", 1)[1].lstrip("/") if p.startswith("file:") else p


def _under(path: str, prefix: str) -> bool:
    """Whether ``path`` is under the folder ``prefix``, whatever the ``file:`` spelling."""
    return path.startswith(prefix) or _bare(path).startswith(_bare(prefix))


def make_plan(
    facts: TableFacts,
    steps: Iterable[str],
    *,
    older_than_ms: int,
    retain_last: int,
    target_file_size: int | None,
    min_input_files: int,
    orphans: OrphanSearch | None,
    staging_older_than_ms: int | None = None,
) -> MaintenancePlan:
    """The plan of the chosen ``steps`` for ``facts`` (``orphans``: the dry run's files,
    needed when orphan removal is chosen; ``staging_older_than_ms``: staging tables
    updated since are kept, default a day before the facts were measured)."""
    chosen = check_steps(steps)
    planned: list[MaintenanceStep] = []
    compaction = None
    for name in chosen:
        if name == "compact":
            compaction = plan_compaction(
                facts, target_file_size=target_file_size, min_input_files=min_input_files
            )
            planned.append(compaction)
        elif name == "rewrite_manifests":
            after = compaction is not None and compaction.todo
            planned.append(plan_manifests(facts, after_compaction=after))
        elif name == "expire_snapshots":
            planned.append(
                plan_expiry(facts, older_than_ms=older_than_ms, retain_last=retain_last)
            )
        elif name == "drop_staging_tables":
            planned.append(plan_staging_tables(
                facts, older_than_ms=facts.measured_at_ms - DAY_MS
                if staging_older_than_ms is None else staging_older_than_ms))
        else:
            if orphans is None:
                raise ValueError(f"{facts.table}: orphan removal needs the dry run's files")
            planned.append(
                plan_orphans(facts, older_than_ms=orphans.older_than_ms, found=orphans.found)
            )
    return MaintenancePlan(
        facts.table, facts.state, facts.measured_at_ms, tuple(planned),
        tuple(sorted((r.name, r.snapshot_id) for r in facts.refs)),
    )
