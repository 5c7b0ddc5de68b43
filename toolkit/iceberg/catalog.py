"""Open an Iceberg catalog: an embedded one in a folder, or a configured one by name.

The embedded default is PyIceberg's ``SqlCatalog`` over a SQLite file plus a local
warehouse folder. Spark can open the very same catalog through Iceberg's
``JdbcCatalog`` (see :func:`toolkit.spark.spark_session`), so PyIceberg, Spark and
DuckDB all see one set of tables without any server.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import IcebergTables, SqlCatalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
)
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import StagedTable, Table, Transaction
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import (
    TableRequirement,
    TableUpdate,
    _apply_table_update,
    _TableMetadataUpdateContext,
    _update_table_metadata_log,
)
from pyiceberg.utils.datetime import datetime_to_millis
from sqlalchemy import Select, bindparam, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from toolkit.core.values.secrets import masked
from toolkit.errors import CatalogUnreachableError, CatalogURLError, TableNameError

DEFAULT_FOLDER = "lakehouse"
#: Properties of every table the toolkit creates. Iceberg's Java API writes zstd as the
#: Parquet codec of each table it creates (since 1.4); PyIceberg creates tables without
#: it, and Spark then writes them with the old default, gzip, several times slower to
#: compress (a third of a bulk ingest's time went to it).
NEW_TABLE_PROPERTIES: dict[str, str] = {"write.parquet.compression-codec": "zstd"}
#: URL schemes of S3 locations (PyIceberg, Hadoop S3A and DuckDB read all three)
S3_SCHEMES = ("s3", "s3a", "s3n")
DEFAULT_NAME = "lakehouse"
CATALOG_DB = "catalog.db"
WAREHOUSE = "warehouse"

__all__ = [
    "NEW_TABLE_PROPERTIES",
    "CachingSqlCatalog",
    "ViewCachingTransaction",
    "check_table_name",
    "ensure_namespace",
    "S3_SCHEMES",
    "EmbeddedCatalog",
    "catalog",
    "embedded",
    "embedded_folder",
    "load_table",
]


def catalog(
    path: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
    warehouse: str | None = None,
    **properties: str,
) -> Catalog:
    """Return an Iceberg catalog.

    * ``catalog()`` or ``catalog("some/folder")``: the embedded catalog kept in that
      folder (default ``./lakehouse``), created if missing: the SQLite file
      ``<folder>/catalog.db`` and the warehouse ``<folder>/warehouse``. Its name is
      ``name`` or ``"lakehouse"``; Spark must use the same name (it is stored in the
      catalog's rows), which :func:`toolkit.spark.spark_session` does.
    * ``catalog("postgresql://USER:PW@HOST:PORT/DB", warehouse="s3://bucket/path")``: a
      catalog kept in a shared database (PyIceberg's ``SqlCatalog``; ``sqlite:///file``
      and other SQLAlchemy URLs too), its tables' files under ``warehouse`` (a folder,
      ``s3://`` or ``s3a://``). Object store settings go in ``properties`` with
      PyIceberg's names: ``**{"s3.endpoint": ..., "s3.access-key-id": ...,
      "s3.secret-access-key": ...}``.
    * ``catalog("https://host/api/catalog", warehouse=...)``: an Iceberg REST catalog.
    * ``catalog(name="prod")`` (no path): a configured catalog, exactly as
      ``pyiceberg.catalog.load_catalog("prod", **properties)`` returns it (from
      ``~/.pyiceberg.yaml``, ``PYICEBERG_CATALOG__PROD__*`` variables or
      ``properties``, e.g. ``type="rest", uri="https://..."``).

    Extra ``properties`` given with a folder are passed on to ``SqlCatalog`` and
    override the defaults.

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> cat = catalog(folder)
    >>> cat.name
    'lakehouse'
    >>> cat.create_namespace("db")
    >>> catalog(folder).list_namespaces()
    [('db',)]
    >>> embedded_folder(cat) == Path(folder).resolve()
    True
    >>> catalog(f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}/wh").list_namespaces()
    [('db',)]
    """
    if warehouse is not None:
        properties["warehouse"] = warehouse
    if path is None and name is not None:
        return load_catalog(name, **properties)
    text = os.fspath(path) if path is not None else None
    if text is not None and "://" in text:
        return _from_url(text, name or DEFAULT_NAME, properties)

    folder = Path(DEFAULT_FOLDER if text is None else text).expanduser().resolve()
    (folder / WAREHOUSE).mkdir(parents=True, exist_ok=True)
    props: dict[str, str] = {
        "uri": f"sqlite:///{folder}/{CATALOG_DB}",
        "warehouse": f"file://{folder}/{WAREHOUSE}",
    }
    props.update(properties)
    return CachingSqlCatalog(name or DEFAULT_NAME, **props)


class CachingSqlCatalog(SqlCatalog):
    """PyIceberg's ``SqlCatalog``, keeping the metadata files it parsed or wrote last.

    A metadata file never changes once written (each commit writes a new one), and
    parsing it is most of a table load: a stream's batch loads its table's metadata several
    times (to plan, to publish, and inside each commit), the same file each time unless a
    writer committed meanwhile. The catalog row is still read on every load, so a load
    always sees the newest commit.

    >>> import tempfile
    >>> cat = catalog(tempfile.mkdtemp())
    >>> cat.create_namespace("db")
    >>> t = cat.create_table("db.t", schema=__import__("pyarrow").schema([("a", "int64")]))
    >>> cat.load_table("db.t").metadata is cat.load_table("db.t").metadata is t.metadata
    True
    """

    #: metadata files kept parsed (a few tables' latest)
    KEEP = 16

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        self._parsed: OrderedDict[str, TableMetadata] = OrderedDict()
        self._located: Select[str | None] | None = None

    def load_table(self, identifier: str | tuple[str, ...]) -> Table:
        """PyIceberg's, reading the table's metadata location by a plain query: a load
        after each commit of a batch (to plan, to publish, inside the commit) spent most
        of its time building the ORM's objects."""
        namespace = Catalog.namespace_to_string(Catalog.namespace_from(identifier))
        name = Catalog.table_name_from(identifier)
        if self._located is None:
            located = select(IcebergTables.metadata_location).where(
                IcebergTables.catalog_name == bindparam("catalog"),
                IcebergTables.table_namespace == bindparam("namespace"),
                IcebergTables.table_name == bindparam("name"))
            if (views_out := self._iceberg_type_filter()) is not None:
                located = located.where(views_out)
            self._located = located
        with self.engine.connect() as connection:
            location = connection.execute(
                self._located, {"catalog": self.name, "namespace": namespace, "name": name}
            ).scalar()
        if not location:  # no such table (or no metadata): PyIceberg's load says which
            return super().load_table(identifier)
        metadata = self._parsed.get(location)
        if metadata is None:  # parsed as PyIceberg parses it, then kept
            io = load_file_io(properties=self.properties, location=location)
            metadata = FromInputFile.table_metadata(io.new_input(location))
            self._keep(location, metadata)
        else:
            with contextlib.suppress(KeyError):  # another thread's load let it go meanwhile
                self._parsed.move_to_end(location)
        return Table(
            identifier=Catalog.identifier_to_tuple(namespace) + (name,),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )

    def _write_metadata(  # type: ignore[override]
        self, metadata: TableMetadata, io: FileIO, metadata_path: str
    ) -> None:
        super()._write_metadata(metadata, io, metadata_path)
        # the file just written (a commit's, or a new table's, which its creation loads at
        # once) is the one the next load reads, if the catalog takes it
        self._keep(metadata_path, metadata)

    def _update_and_stage_table(
        self, current_table: Table | None, table_identifier: Any,
        requirements: tuple[TableRequirement, ...], updates: tuple[TableUpdate, ...],
    ) -> StagedTable:
        """PyIceberg's, without its deep copy of the whole new metadata: the copy costs
        more than the rest of a stream's commit once a table holds a few hundred snapshots,
        and protects nothing here (the updates build new models and containers; none is
        changed in place, which the cache above relies on too)."""
        if current_table is None:
            return super()._update_and_stage_table(
                current_table, table_identifier, requirements, updates)
        for requirement in requirements:
            requirement.validate(current_table.metadata)
        metadata = _updated(current_table.metadata, updates, current_table.metadata_location)
        version = self._parse_metadata_version(current_table.metadata_location) + 1
        provider = load_location_provider(metadata.location, metadata.properties)
        location = provider.new_table_metadata_file_location(version)
        return StagedTable(
            identifier=table_identifier,
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(properties=metadata.properties, location=location),
            catalog=self,
        )

    def _keep(self, location: str, metadata: TableMetadata) -> None:
        self._parsed[location] = metadata
        self._parsed.move_to_end(location)
        while len(self._parsed) > self.KEEP:
            self._parsed.popitem(last=False)


class ViewCachingTransaction(Transaction):
    """PyIceberg's transaction, whose view of the metadata as staged so far
    (``table_metadata``) is worked out once per staged state, without a deep copy.

    PyIceberg's works out the view again, and deep-copies the whole metadata (every schema,
    snapshot and property the table keeps), at each look: a dozen looks per schema change
    (its schema update, the requirements it checks, the commit), which took most of a
    schema change's time on a table with a few dozen schemas and snapshots. The view is
    shared by its readers: the updates build new models and containers and change none in
    place (what :class:`CachingSqlCatalog` relies on too)."""

    _view: tuple[TableMetadata, tuple[TableUpdate, ...], TableMetadata] | None = None

    @property
    def table_metadata(self) -> TableMetadata:
        base, updates = self._table.metadata, self._updates
        view = self._view
        # the same table metadata and the same staged updates (a new tuple at each stage)
        if view is None or view[0] is not base or view[1] is not updates:
            view = (base, updates, _updated(base, updates, None))
            self._view = view
        return view[2]


def _updated(
    base: TableMetadata, updates: tuple[TableUpdate, ...], location: str | None
) -> TableMetadata:
    """``base`` with ``updates`` applied: PyIceberg's ``update_table_metadata`` (0.12)
    for a table that exists, less the final deep copy (with no ``location``, a
    transaction's view: no entry in the metadata log)."""
    context = _TableMetadataUpdateContext()
    metadata = base
    for update in updates:
        metadata = _apply_table_update(update, metadata, context)
    if context.has_changes():
        if location is not None:
            metadata = _update_table_metadata_log(metadata, location, base.last_updated_ms)
        if base.last_updated_ms == metadata.last_updated_ms:
            metadata = metadata.model_copy(
                update={"last_updated_ms": datetime_to_millis(datetime.now().astimezone())})
    metadata.spec().check_compatible(metadata.schema())
    metadata.sort_order().check_compatible(metadata.schema())
    return metadata


#: URL schemes of catalog databases, and the SQLAlchemy driver each gets when the URL
#: names none (the one the ``postgres`` extra installs)
_SQL_DRIVERS = {"postgresql": "postgresql+psycopg2", "postgres": "postgresql+psycopg2"}


def _from_url(url: str, name: str, properties: dict[str, str]) -> Catalog:
    scheme, rest = url.split("://", 1)
    if scheme in ("http", "https"):
        return load_catalog(name, **{"type": "rest", "uri": url, **properties})
    if scheme in ("file", "gs", "abfs", *S3_SCHEMES):
        raise CatalogURLError(
            f"{masked(url)!r} is a storage location, not a catalog: pass it as warehouse= with the "
            "catalog's database URL (or a folder for the embedded catalog)"
        )
    uri = f"{_SQL_DRIVERS.get(scheme, scheme)}://{rest}"
    if "warehouse" not in properties and not uri.startswith("sqlite"):
        raise CatalogURLError(
            f"catalog({masked(url)!r}) needs warehouse=: where the tables' files go "
            "(e.g. 's3://bucket/path'; executors on a cluster must all reach it)"
        )
    if any(key.startswith("s3.") for key in properties):
        # PyArrow's S3 client (AWS SDK) sends checksums that S3-compatible servers
        # (MinIO, rclone, Ceph) may refuse; AWS itself accepts either.
        os.environ.setdefault("AWS_REQUEST_CHECKSUM_CALCULATION", "when_required")
        os.environ.setdefault("AWS_RESPONSE_CHECKSUM_VALIDATION", "when_required")
    try:
        make_url(uri)  # parsed first: SQLAlchemy's own errors may quote the URL whole
        return CachingSqlCatalog(name, uri=uri, **properties)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"Opening {masked(url)!r} needs the database driver {exc.name!r}: "
            "pip install 'toolkit[postgres]'"
        ) from exc
    except (ValueError, ArgumentError) as exc:  # NoSuchModuleError too: an unknown scheme
        if not isinstance(exc, ArgumentError) and _parses(uri):
            raise  # not the URL's fault
        # not chained (a traceback would show the original, URL and all), and its words
        # masked too
        raise CatalogURLError(
            f"{masked(url)!r} is not a catalog URL this toolkit can open "
            f"({masked(str(exc))}): write it as postgresql://user@host:port/database "
            "(the password as :password after the user, or ?password=), sqlite:///file, "
            "or https://... for a REST catalog"
        ) from None
    except DBAPIError as exc:
        # the driver's first line says why ("password authentication failed for user
        # ..."); not chained, as above
        reason = str(exc.orig or exc).strip().splitlines()[0]
        raise CatalogUnreachableError(
            f"cannot open the catalog {masked(url)!r}: {masked(reason)}") from None


def _parses(uri: str) -> bool:
    try:
        make_url(uri)
    except (ValueError, ArgumentError):
        return False
    return True


@dataclass(frozen=True)
class EmbeddedCatalog:
    """Where an embedded (SQLite-backed ``SqlCatalog``) catalog keeps its state."""

    name: str
    database: Path
    """The SQLite file holding the catalog's tables."""
    warehouse: str
    """The warehouse location (a URI such as ``file:///.../warehouse``), may be empty."""

    @property
    def folder(self) -> Path:
        """The folder holding the SQLite file (the folder given to :func:`catalog`)."""
        return self.database.parent

    @property
    def jdbc_uri(self) -> str:
        """The same database as a JDBC URI, for Iceberg's Java ``JdbcCatalog``."""
        return f"jdbc:sqlite:{self.database}"


def embedded(cat: Catalog) -> EmbeddedCatalog | None:
    """Describe ``cat`` if it is an embedded SQLite catalog, else return ``None``.

    Any PyIceberg ``SqlCatalog`` whose URI is a SQLite file counts, whether or not
    :func:`catalog` made it; an in-memory SQLite database does not (no other process
    could open it).
    """
    if not isinstance(cat, SqlCatalog):
        return None
    url = make_url(str(cat.properties.get("uri", "")))
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    database = Path(url.database).expanduser().resolve()
    warehouse = str(cat.properties.get("warehouse", ""))
    return EmbeddedCatalog(name=cat.name, database=database, warehouse=warehouse)


def embedded_folder(cat: Catalog) -> Path | None:
    """The folder of an embedded SQLite catalog, or ``None`` for any other catalog."""
    info = embedded(cat)
    return None if info is None else info.folder


def ensure_namespace(cat: Catalog, namespace: str) -> None:
    """Create ``namespace`` unless it exists. Two writers may create it at the same moment:
    the loser of that race gets ``NamespaceAlreadyExistsError`` from most catalogs, but the
    SQL catalog's own unique key error from PyIceberg's ``SqlCatalog``; either way the
    namespace is there, which is all the caller needs."""
    try:
        cat.create_namespace(namespace)
    except NamespaceAlreadyExistsError:
        return
    except Exception as exc:
        try:
            cat.load_namespace_properties(namespace)
        except NoSuchNamespaceError:
            raise exc from None  # it was not that race: the error as it was
        # it exists: another writer created it first


def check_table_name(identifier: object) -> None:
    """Refuse a table name without its namespace, saying how to write it.

    >>> check_table_name("db.orders")
    >>> try:
    ...     check_table_name("orders")
    ... except ValueError as exc:
    ...     print(str(exc).partition(": ")[2])
    name a table as 'namespace.name', e.g. 'db.orders'
    """
    if isinstance(identifier, str):
        parts = identifier.split(".")
    elif isinstance(identifier, tuple):
        parts = [str(p) for p in identifier]
    else:
        raise TypeError(f"a table name is a text such as 'db.orders', not {identifier!r}")
    if len(parts) < 2 or not all(p.strip() for p in parts):
        raise TableNameError(identifier)


def load_table(cat: Catalog, identifier: str) -> Table | None:
    """The table ``identifier`` (``namespace.name``) of ``cat``, or None when it does not
    exist (yet); a name without a namespace is refused (:class:`TableNameError`)."""
    check_table_name(identifier)
    try:
        return cat.load_table(identifier)
    except NoSuchTableError:
        return None
