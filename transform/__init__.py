"""The build engine: log -> raw (dlt ingest) -> build selection -> marts (dbt) -> serving
snapshot (publish). `bench` calls it; it never imports `bench` or `app` (import-linter).

Its state is listed in one module, `transform.state`."""
