"""Iceberg catalogs: an embedded one shared by PyIceberg, Spark and DuckDB, or any configured."""

from toolkit.iceberg.catalog import EmbeddedCatalog, catalog, embedded, embedded_folder

__all__ = ["EmbeddedCatalog", "catalog", "embedded", "embedded_folder"]
