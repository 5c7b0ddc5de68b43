"""What a plan file binds, checked before it is applied (docs/plan-files.md, "What a plan
file binds"; RULES 6: what a user approves is exactly what is committed, or nothing is).

A plan is reviewed for a batch: these files, this table, this catalog, these options. The
plan file holds the SHA-256 of each source file as it was when the plan was made, and a
digest of each other part (:func:`toolkit.core.evolution.planfile.bound_digests`), so a file that
changed since, a plan file edited by hand after the review (its ``source`` pointed at
other files, its ``catalog``, ``table`` or ``options`` changed) or a ``--catalog`` naming
another catalog is refused (:class:`~toolkit.errors.UnreviewedPlanError`) before anything
is written.
"""

from __future__ import annotations

import hashlib
import os
from glob import has_magic
from pathlib import Path

from toolkit.core.evolution.planfile import BOUND_PARTS, PlanFile, bound_digests
from toolkit.core.values.wording import and_join
from toolkit.errors import UnreviewedPlanError
from toolkit.pipeline.files import source_files

__all__ = ["check_parts", "check_reviewed", "check_source", "source_digest"]

#: bytes read at a time while hashing a file
_CHUNK = 1 << 20


def _base(source: str) -> Path:
    """The folder a source's file names are taken relative to: a folder's own, a file's
    parent, a glob's part before its first wildcard."""
    if has_magic(source):
        head: list[str] = []
        for part in Path(source).parts:
            if has_magic(part):
                break
            head.append(part)
        return Path(*head) if head else Path(".")
    path = Path(source)
    return path if path.is_dir() else path.parent


def source_digest(source: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """The SHA-256 of each file a local path, glob or folder holds (the files ``ingest``
    reads), by its name relative to the source (``day1.jsonl``, ``2024/05/a.jsonl``);
    None for no source or a remote one (``s3://...``), which cannot be read here; an empty
    mapping when it holds no file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "day1.jsonl").write_text('{"id": 1}\\n')
    >>> source_digest(folder / "day1.jsonl")
    {'day1.jsonl': 'sha256:82b0cf5da91b6a7e02f031e2da2fa5ed1261dce4c85ae20d63db9d1e84a4c384'}
    >>> list(source_digest(folder)) == list(source_digest(f"{folder}/*.jsonl")) == ["day1.jsonl"]
    True
    """
    if source is None:
        return None
    text = os.fspath(source)
    if "://" in text and not text.startswith("file:"):
        return None
    try:
        files = source_files(text)
    except FileNotFoundError:
        return {}
    base = _base(text[len("file://"):] if text.startswith("file://") else text)
    out: dict[str, str] = {}
    for path in files:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
        try:
            name = path.relative_to(base).as_posix()
        except ValueError:
            name = path.name
        out[name] = "sha256:" + digest.hexdigest()
    return out


def _source_changes(planfile: PlanFile) -> list[str]:
    """What differs between the source's files now and those the plan was made with."""
    if planfile.source is None:
        return []
    made = planfile.source_digest
    if made is None:
        return ["the plan file holds no digest of its source's files (it was written before "
                "plan files bound them, or by hand), so what it would write cannot be "
                "matched to what was reviewed"]
    now = source_digest(planfile.source)
    if now is None:
        return [f"the source {planfile.source} cannot be read here to check it against "
                "what was reviewed"]
    changed = sorted(name for name in made.keys() & now.keys() if made[name] != now[name])
    gone = sorted(made.keys() - now.keys())
    new = sorted(now.keys() - made.keys())
    out = [f"the source file {name} changed since the plan was made" for name in changed]
    if gone:
        out.append(f"the source file{'s' if len(gone) > 1 else ''} {and_join(gone)} "
                   f"{'are' if len(gone) > 1 else 'is'} no longer in {planfile.source}")
    if new:
        out.append(f"{planfile.source} holds {'files' if len(new) > 1 else 'a file'} the "
                   f"plan was not made with: {and_join(new)}")
    return out


#: each bound part of a plan file, as a sentence says it changed
_PART_WORDS = {
    "table": "the plan file's table changed since the plan was made",
    "catalog": "the plan file's catalog (or warehouse) changed since the plan was made",
    "options": "the plan file's options (or source format) changed since the plan was made",
}


def check_parts(
    planfile: PlanFile, where: str, *, catalog: str | None = None,
    warehouse: str | None = None,
) -> None:
    """Refuse (:class:`~toolkit.errors.UnreviewedPlanError`, naming each difference) a
    plan file whose table, catalog or options are not those the plan was made with, or
    that is applied to another catalog (``catalog`` and ``warehouse``: how the ones it is
    applied to are recorded, masked; None: the plan file's own). Reads no file: it answers
    before a catalog is opened (an edited ``catalog`` would otherwise be created).

    A plan file written before plan files bound these is refused too: nothing in it says
    what was reviewed (docs/plan-files.md)."""
    changes = []
    if planfile.reviewed is None:
        changes.append("the plan file holds no digests of its table, catalog and options "
                       "(it was written before plan files bound them, or by hand)")
    else:
        now = bound_digests(planfile)
        changes += [_PART_WORDS[part] for part in BOUND_PARTS
                    if planfile.reviewed.get(part) != now[part]]
    if catalog is not None and planfile.catalog is not None and catalog != planfile.catalog:
        changes.append(f"--catalog names {catalog}, not the catalog the plan was made on "
                       f"({planfile.catalog})")
    if warehouse is not None and warehouse != planfile.warehouse:
        changes.append(f"--warehouse names {warehouse}, not the warehouse the plan was made "
                       f"with ({planfile.warehouse or 'none'})")
    if changes:
        raise UnreviewedPlanError(where, changes)


def check_source(planfile: PlanFile, where: str) -> None:
    """Refuse (:class:`~toolkit.errors.UnreviewedPlanError`) a plan file whose source's
    files are not those the plan was made with: one changed, gone or added, or the file
    holds no digest of them (written before plan files bound them)."""
    changes = _source_changes(planfile)
    if changes:
        raise UnreviewedPlanError(where, changes)


def check_reviewed(
    planfile: PlanFile, where: str, *, catalog: str | None = None,
    warehouse: str | None = None,
) -> None:
    """:func:`check_parts`, then :func:`check_source`: the plan file binds what was
    reviewed, or nothing is applied."""
    check_parts(planfile, where, catalog=catalog, warehouse=warehouse)
    check_source(planfile, where)
