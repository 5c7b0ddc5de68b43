"""DuckDB as an independent reader of the toolkit's Iceberg tables (needs the `dev` extra:
``duckdb``, ``duckdb-extension-iceberg`` and ``duckdb-extension-avro``, same versions).

DuckDB reads a table's current metadata file with ``iceberg_scan`` and resolves columns by
field ID, so renamed fields read right, and runs the DuckDB rendering of the RULES 7
COALESCE view over it.

>>> import tempfile
>>> import pyarrow as pa
>>> import toolkit
>>> from toolkit.iceberg.schema import to_iceberg
>>> cat = toolkit.catalog(tempfile.mkdtemp())
>>> cat.create_namespace("db")
>>> sim = toolkit.simulate([[{"my_field": 1}], [{"my_field": "abc"}]])
>>> t = cat.create_table("db.t", sim.schema)
>>> t.append(pa.Table.from_pylist(sim.rows, schema=sim.schema.as_arrow()))
>>> read_table(t)
[{'my_field': 1, 'my_field_string': None}, {'my_field': None, 'my_field_string': 'abc'}]
>>> run_view(t)
[{'my_field': '1'}, {'my_field': 'abc'}]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from sqlglot import exp

from toolkit.core.values.types import Struct
from toolkit.iceberg.catalog import S3_SCHEMES
from toolkit.iceberg.views import coalesce_sql

__all__ = ["duckdb_connection", "extension_path", "read_table", "register", "run_view"]

#: DuckDB extensions needed to read Iceberg tables (avro for manifests), in loading order
EXTENSIONS = ("avro", "iceberg")


def extension_path(name: str) -> Path:
    """The file of a DuckDB extension shipped by the PyPI package ``duckdb-extension-<name>``.

    Those packages hold only the extension file, under
    ``<package>/extensions/v<duckdb version>/<name>.duckdb_extension``.
    """
    import importlib

    module = f"duckdb_extension_{name}"
    try:
        package = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"DuckDB's {name} extension is missing: pip install "
            f"'duckdb-extension-{name}=={duckdb.__version__}'"
        ) from exc
    assert package.__file__ is not None
    path = Path(package.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = path / f"{name}.duckdb_extension"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: do duckdb ({duckdb.__version__}) and {module} versions differ?"
        )
    return path


def duckdb_connection(database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the iceberg and avro extensions loaded by path.

    Automatic extension install and load are off: the default would try to download avro
    (no network needed, none used). Time zone is UTC, as in the toolkit's Spark sessions.
    """
    con = duckdb.connect(
        database,
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    for name in EXTENSIONS:
        con.execute(f"LOAD '{extension_path(name)}'")
    con.execute("SET TimeZone = 'UTC'")
    return con


def reach_object_store(con: duckdb.DuckDBPyConnection, table: Table) -> None:
    """Let ``con`` read ``table`` where it lives: for a table in S3, DuckDB's httpfs
    extension (PyPI ``duckdb-extension-httpfs``) with a secret made of the table's own
    ``s3.*`` settings (endpoint, keys, region, path-style addressing)."""
    scheme = table.metadata_location.split("://", 1)[0]
    if scheme not in S3_SCHEMES:
        return
    con.execute(f"LOAD '{extension_path('httpfs')}'")
    props = {k: str(v) for k, v in table.io.properties.items() if v is not None}
    options = ["TYPE S3"]
    endpoint = props.get("s3.endpoint")
    if endpoint:
        virtual = props.get("s3.force-virtual-addressing") == "true"
        options += [
            _option("ENDPOINT", endpoint.split("://", 1)[-1].rstrip("/")),
            _option("USE_SSL", endpoint.startswith("https")),
            _option("URL_STYLE", "vhost" if virtual else "path"),
        ]
    for key, name in (("s3.access-key-id", "KEY_ID"), ("s3.secret-access-key", "SECRET"),
                      ("s3.session-token", "SESSION_TOKEN"), ("s3.region", "REGION")):
        if props.get(key):
            options.append(_option(name, props[key]))
    # sqlglot has no node for CREATE SECRET: each value is quoted by sqlglot on its own
    con.execute(f"CREATE OR REPLACE SECRET toolkit_s3 ({', '.join(options)})")


def _option(name: str, value: str | bool) -> str:
    literal = exp.Boolean(this=value) if isinstance(value, bool) else exp.Literal.string(value)
    return f"{name} {literal.sql('duckdb')}"


def _scan(table: Table) -> exp.Func:
    """``iceberg_scan('<current metadata file>')``, the path quoted by sqlglot."""
    return exp.func("iceberg_scan", exp.Literal.string(table.metadata_location))


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def read_table(
    table: Table, connection: duckdb.DuckDBPyConnection | None = None
) -> list[dict[str, Any]]:
    """Every row of the PyIceberg ``table``'s current snapshot, read by DuckDB."""
    con = connection or duckdb_connection()
    reach_object_store(con, table)
    select = exp.select("*").from_(_scan(table))
    return _fetch(con, select.sql("duckdb"))


def register(
    table: Table,
    connection: duckdb.DuckDBPyConnection,
    name: str | None = None,
) -> str:
    """Make ``table``'s current snapshot a DuckDB view and return its name, as SQL.

    ``name`` defaults to the table's identifier without the catalog: ``db.t`` becomes the
    view ``"db"."t"`` (schema ``db`` created if needed; nested namespaces joined by ``_``).
    The view reads the metadata file current now: register again after new commits.
    """
    if name is None:
        *namespace, leaf = table.name()
        relation = exp.table_(
            exp.to_identifier(leaf, quoted=True),
            db=exp.to_identifier("_".join(namespace), quoted=True) if namespace else None,
        )
    else:
        relation = exp.to_table(name, dialect="duckdb")
    db = relation.args.get("db")
    if db is not None:
        catalog = relation.args.get("catalog")
        schema = exp.Create(this=exp.Table(db=db, catalog=catalog), kind="SCHEMA", exists=True)
        connection.execute(schema.sql("duckdb"))
    create = exp.Create(
        this=relation, kind="VIEW", replace=True, expression=exp.select("*").from_(_scan(table))
    )
    connection.execute(create.sql("duckdb"))
    return relation.sql("duckdb")


def run_view(
    table: Table,
    schema: Schema | Struct | None = None,
    *,
    connection: duckdb.DuckDBPyConnection | None = None,
    name: str | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """The rows of the RULES 7 COALESCE view over ``table``, rendered for DuckDB
    (``toolkit.coalesce_sql(schema, name, "duckdb")``) and run by DuckDB.

    ``schema`` is the schema the view is built from: the table's current one by default.
    The table is registered as the relation ``name`` (see :func:`register`). ``options``
    as for :func:`toolkit.coalesce_sql` (``lattice``, ``timestamp_unit``...).
    """
    con = connection or duckdb_connection()
    relation = register(table, con, name)
    sql = coalesce_sql(table.schema() if schema is None else schema, relation, "duckdb",
                       properties=table.metadata.properties, **options)
    return _fetch(con, sql)
