"""Plan and run a table's maintenance (toolkit.preview_maintenance)."""
