"""The event contract and everything that touches the log and the DuckDB files.

Imports nothing else of ours (enforced by import-linter)."""

__version__ = "0.1.0"
