"""toolkit.iceberg.catalog(): the embedded catalog, without Spark."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from toolkit.iceberg import catalog, embedded, embedded_folder


def test_embedded_catalog_is_created_in_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "lake"
    cat = catalog(folder)
    assert isinstance(cat, SqlCatalog)
    assert cat.name == "lakehouse"
    assert (folder / "catalog.db").is_file()
    assert (folder / "warehouse").is_dir()
    info = embedded(cat)
    assert info is not None
    assert info.folder == folder.resolve()
    assert info.jdbc_uri == f"jdbc:sqlite:{folder.resolve()}/catalog.db"
    assert info.warehouse == f"file://{folder.resolve()}/warehouse"


def test_default_folder_is_lakehouse_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cat = catalog()
    assert embedded_folder(cat) == tmp_path.resolve() / "lakehouse"
    assert (tmp_path / "lakehouse" / "catalog.db").is_file()


def test_name_is_kept(tmp_path: Path) -> None:
    assert catalog(tmp_path, name="events").name == "events"


def test_tables_survive_reopening_the_folder(tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "n", LongType(), required=False, doc="a number"))
    first = catalog(tmp_path)
    first.create_namespace("db")
    first.create_table("db.numbers", schema).append(
        pa.table({"n": [1, 2]}, schema=schema.as_arrow())
    )

    again = catalog(tmp_path)
    assert again.list_tables("db") == [("db", "numbers")]
    table = again.load_table("db.numbers")
    assert table.schema().find_field("n").doc == "a number"
    assert table.scan().to_arrow().column("n").to_pylist() == [1, 2]


def test_named_catalog_is_loaded_from_properties(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/other.db"
    cat = catalog(name="other", type="sql", uri=uri, warehouse=f"file://{tmp_path}")
    assert isinstance(cat, SqlCatalog)
    assert cat.name == "other"
    assert cat.properties["uri"] == uri
    assert not (tmp_path / "lakehouse").exists()


def test_in_memory_sqlite_is_not_embedded() -> None:
    cat = SqlCatalog("mem", uri="sqlite:///:memory:", warehouse="file:///tmp/unused")
    assert embedded(cat) is None


def test_docstring_examples_run() -> None:
    # `toolkit.iceberg.catalog` the attribute is the function; the module is in sys.modules.
    result = doctest.testmod(sys.modules["toolkit.iceberg.catalog"], optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_a_namespace_another_writer_created_at_the_same_moment_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PyIceberg's SQL catalog reports that race with the database's unique key error,
    not NamespaceAlreadyExistsError (seen in tests/reliability/test_writers.py)."""
    import sqlalchemy.exc

    from toolkit.iceberg.catalog import ensure_namespace

    cat = catalog(tmp_path / "lake")
    first = cat.create_namespace

    def raced(namespace: str, *args: object, **kwargs: object) -> None:
        first(namespace)  # the other writer
        raise sqlalchemy.exc.IntegrityError("INSERT ...", {}, Exception("UNIQUE constraint"))

    monkeypatch.setattr(cat, "create_namespace", raced)
    ensure_namespace(cat, "db")
    assert ("db",) in cat.list_namespaces()
    # a failure that left no namespace is not hidden
    monkeypatch.setattr(cat, "create_namespace", lambda *_: (_ for _ in ()).throw(OSError("disk")))
    with pytest.raises(OSError, match="disk"):
        ensure_namespace(cat, "other")
