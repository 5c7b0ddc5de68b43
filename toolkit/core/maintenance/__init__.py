"""Table maintenance as a plan, and the bounded logs in a table's properties."""
