"""Collecting while building: the runs' store, so that no run holds the warehouse (docs/architecture.md,
"Collecting while building")."""
