"""Edit a table's schema by hand, under RULES 6 (toolkit.edit_schema)."""
