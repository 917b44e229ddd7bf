"""Streamlit UI over the published serving snapshot (`$BENCH_HOME/serve.duckdb`, schema `marts`).

Reads only through `app.data`; imports nothing of ours but `warehouse` (import-linter)."""
