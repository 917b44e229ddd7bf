"""The `bench` command: thin orchestration of collectors, ingest, dbt and publish."""
