"""Iceberg's maintenance procedures, called on Spark: ``rewrite_data_files``,
``rewrite_manifests``, ``expire_snapshots`` and ``remove_orphan_files`` (also as the dry
run that finds orphan files for a plan).

Every name and value in the ``CALL`` text is quoted here: identifiers part by part in
backticks (a backtick doubled), strings as SQL literals (quote and backslash escaped),
numbers and times formatted from ``int`` values, so a table name from a user is never
spliced into SQL as it is::

    >>> procedure_sql("lake", "rewrite_manifests", [("table", table_arg("lake", ("db", "e`v")))])
    "CALL `lake`.`system`.`rewrite_manifests`(table => '`lake`.`db`.`e``v`')"
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolkit.spark.progress import described
from toolkit.spark.views import ESCAPED_LITERALS, as_written

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "compact",
    "expire_snapshots",
    "find_orphan_files",
    "procedure_sql",
    "quote_identifier",
    "remove_orphan_files",
    "rewrite_manifests",
    "spelled_like",
    "sql_string",
    "table_arg",
    "timestamp_literal",
]


def quote_identifier(parts: Sequence[str]) -> str:
    """A multi-part name with every part in backticks.

    >>> quote_identifier(["lake", "db", "odd.`name`"])
    '`lake`.`db`.`odd.``name```'
    """
    if not parts:
        raise ValueError("an identifier needs at least one part")
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)


def sql_string(text: str, *, escapes: bool = True) -> str:
    """``text`` as a Spark SQL string literal. With ``escapes`` (Spark's default parser)
    a quote and a backslash are escaped; without (``escapedStringLiterals`` on) a text
    holding either cannot be written safely and is refused.

    >>> print(sql_string("it's a \\\\ path"))
    'it\\'s a \\\\ path'
    """
    if escapes:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if "'" in text or "\\" in text:
        raise ValueError(
            f"{text!r} holds a quote or a backslash, which cannot be passed to an Iceberg "
            f"procedure while {ESCAPED_LITERALS} is on"
        )
    return f"'{text}'"


def timestamp_literal(ms: int) -> str:
    """A time in milliseconds since the epoch as a ``TIMESTAMP`` literal in UTC (whatever
    the session's time zone).

    >>> timestamp_literal(1_700_000_000_123)
    "TIMESTAMP '2023-11-14 22:13:20.123000Z'"
    """
    at = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return f"TIMESTAMP '{at.strftime('%Y-%m-%d %H:%M:%S.%f')}Z'"


def table_arg(catalog_name: str, name: Sequence[str], *, escapes: bool = True) -> str:
    """The ``table`` argument of a procedure: the quoted name, catalog first (so no part
    of the name can be mistaken for another catalog), as a string literal."""
    return sql_string(quote_identifier([catalog_name, *name]), escapes=escapes)


def procedure_sql(catalog_name: str, procedure: str, args: Sequence[tuple[str, str]]) -> str:
    """``CALL <catalog>.system.<procedure>(name => value, ...)``; ``args`` are argument
    names (this module's constants) and values already written as literals."""
    named = ", ".join(f"{name} => {value}" for name, value in args)
    return f"CALL {quote_identifier([catalog_name, 'system', procedure])}({named})"


def _escapes(spark: SparkSession) -> bool:
    return str(spark.conf.get(ESCAPED_LITERALS, "false")).lower() != "true"


def _call(
    spark: SparkSession, catalog_name: str, name: Sequence[str], procedure: str,
    args: Sequence[tuple[str, str]] = (),
) -> list[Any]:
    with as_written(spark):  # a table's name may hold ``${`` too
        table = ("table", table_arg(catalog_name, name, escapes=_escapes(spark)))
        return spark.sql(procedure_sql(catalog_name, procedure, [table, *args])).collect()


def _counts(rows: list[Any]) -> dict[str, int]:
    """The one output row of a procedure as counts (0 for a null)."""
    if not rows:
        return {}
    return {key: int(value or 0) for key, value in rows[0].asDict().items()}


def spelled_like(path: str, location: str) -> str:
    """``path`` spelled as the table's ``location`` spells its folder: Hadoop lists local
    files as ``file:/x`` where the metadata says ``file:///x``, and the procedure keeps
    only listed files that start with the table's location.

    >>> spelled_like("file:/w/db/t/data/a.parquet", "file:///w/db/t")
    'file:///w/db/t/data/a.parquet'
    >>> spelled_like("s3a://b/db/t/a.parquet", "s3a://b/db/t")
    's3a://b/db/t/a.parquet'
    """
    base = location.rstrip("/")
    if path.startswith(base + "/") or not (path.startswith("file:") and base.startswith("file:")):
        return path
    bare, folder = "/" + path[5:].lstrip("/"), "/" + base[5:].lstrip("/")
    return base + bare[len(folder):] if bare.startswith(folder + "/") else path


@described(None, "Looking for orphan files")
def find_orphan_files(
    spark: SparkSession, catalog_name: str, name: Sequence[str], older_than_ms: int,
    location: str,
) -> tuple[str, ...]:
    """The files under the table's folder (``location``) that no metadata references and
    that are older than ``older_than_ms``: ``remove_orphan_files`` as a dry run (nothing
    is deleted), spelled as ``location`` spells the folder."""
    rows = _call(
        spark, catalog_name, name, "remove_orphan_files",
        [("older_than", timestamp_literal(older_than_ms)), ("dry_run", "true")],
    )
    return tuple(sorted(spelled_like(str(r["orphan_file_location"]), location) for r in rows))


@described(None, "Removing orphan files")
def remove_orphan_files(
    spark: SparkSession,
    catalog_name: str,
    name: Sequence[str],
    files: Sequence[str],
    older_than_ms: int,
) -> tuple[str, ...]:
    """Remove exactly ``files`` (what a dry run found), each only if no metadata
    references it now: they are handed to the procedure as its file list
    (``file_list_view``), so no other file of the folder is considered. Returns the files
    removed."""
    from pyspark.sql.types import StringType, StructField, StructType, TimestampType

    if not files:
        return ()
    # The procedure keeps listed files older than ``older_than``: the dry run found these
    # older than that, so they are listed as just before it.
    listed_at = dt.datetime.fromtimestamp((older_than_ms - 1) / 1000, dt.UTC)
    schema = StructType(
        [StructField("file_path", StringType(), False),
         StructField("last_modified", TimestampType(), False)]
    )
    view = f"toolkit_orphans_{uuid.uuid4().hex}"
    spark.createDataFrame([(f, listed_at) for f in files], schema).createOrReplaceTempView(view)
    try:
        rows = _call(
            spark, catalog_name, name, "remove_orphan_files",
            [("older_than", timestamp_literal(older_than_ms)),
             ("file_list_view", sql_string(view, escapes=_escapes(spark)))],
        )
    finally:
        spark.catalog.dropTempView(view)
    return tuple(sorted(str(r["orphan_file_location"]) for r in rows))


@described(None, "Rewriting data files")
def compact(
    spark: SparkSession,
    catalog_name: str,
    name: Sequence[str],
    *,
    target_file_size: int,
    min_input_files: int,
) -> dict[str, int]:
    """``rewrite_data_files`` (bin-pack) with these sizes; its output counts."""
    options: Mapping[str, int] = {
        "target-file-size-bytes": int(target_file_size),
        "min-input-files": int(min_input_files),
    }
    pairs = ", ".join(f"'{k}', '{v}'" for k, v in options.items())  # constants and ints
    return _counts(
        _call(spark, catalog_name, name, "rewrite_data_files", [("options", f"MAP({pairs})")])
    )


@described(None, "Rewriting manifests")
def rewrite_manifests(
    spark: SparkSession, catalog_name: str, name: Sequence[str]
) -> dict[str, int]:
    """``rewrite_manifests``; its output counts."""
    return _counts(_call(spark, catalog_name, name, "rewrite_manifests"))


@described(None, "Expiring snapshots")
def expire_snapshots(
    spark: SparkSession, catalog_name: str, name: Sequence[str], snapshot_ids: Sequence[int]
) -> dict[str, int]:
    """Expire exactly ``snapshot_ids``, and the files only they needed; its output counts.

    Nothing else is expired: ``older_than`` is set to the epoch, so the procedure's own
    age rule (by default: whatever is five days old) selects no snapshot, and Iceberg
    still refuses a snapshot a branch or tag points to."""
    if not snapshot_ids:
        return {}
    ids = ", ".join(f"{int(i)}L" for i in snapshot_ids)
    return _counts(
        _call(
            spark, catalog_name, name, "expire_snapshots",
            [("older_than", timestamp_literal(0)), ("snapshot_ids", f"ARRAY({ids})")],
        )
    )
