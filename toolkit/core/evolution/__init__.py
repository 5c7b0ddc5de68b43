"""Evolution as plans: layout, Iceberg's operations, plans, lineage, plan files."""
