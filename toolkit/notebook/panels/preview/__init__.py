"""Preview one batch's plan against a table, approve and commit it (toolkit.preview)."""
