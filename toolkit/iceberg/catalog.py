"""Open an Iceberg catalog: an embedded one in a folder, or a configured one by name.

The embedded default is PyIceberg's ``SqlCatalog`` over a SQLite file plus a local
warehouse folder. Spark can open the very same catalog through Iceberg's
``JdbcCatalog`` (see :func:`toolkit.spark.spark_session`), so PyIceberg, Spark and
DuckDB all see one set of tables without any server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table
from sqlalchemy.engine import make_url

DEFAULT_FOLDER = "lakehouse"
DEFAULT_NAME = "lakehouse"
CATALOG_DB = "catalog.db"
WAREHOUSE = "warehouse"

__all__ = ["EmbeddedCatalog", "catalog", "embedded", "embedded_folder", "load_table"]


def catalog(
    path: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
    **properties: str,
) -> Catalog:
    """Return an Iceberg catalog.

    * ``catalog()`` or ``catalog("some/folder")``: the embedded catalog kept in that
      folder (default ``./lakehouse``), created if missing: the SQLite file
      ``<folder>/catalog.db`` and the warehouse ``<folder>/warehouse``. Its name is
      ``name`` or ``"lakehouse"``; Spark must use the same name (it is stored in the
      catalog's rows), which :func:`toolkit.spark.spark_session` does.
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
    """
    if path is None and name is not None:
        return load_catalog(name, **properties)

    folder = Path(DEFAULT_FOLDER if path is None else path).expanduser().resolve()
    (folder / WAREHOUSE).mkdir(parents=True, exist_ok=True)
    props: dict[str, str] = {
        "uri": f"sqlite:///{folder}/{CATALOG_DB}",
        "warehouse": f"file://{folder}/{WAREHOUSE}",
    }
    props.update(properties)
    return SqlCatalog(name or DEFAULT_NAME, **props)


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


def load_table(cat: Catalog, identifier: str) -> Table | None:
    """The table ``identifier`` of ``cat``, or None when it does not exist (yet)."""
    try:
        return cat.load_table(identifier)
    except NoSuchTableError:
        return None
