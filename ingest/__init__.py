"""Load the event log into DuckDB `raw` tables with dlt (incremental, insert-only, quarantining)."""
