"""A canary key planted in the environment must appear nowhere: log, warehouse, snapshot, dbt and
dlt files, command output, or any page of the app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from collectors.testing.fake_server import FakeVendorServer

pytestmark = pytest.mark.slow

CANARY = "sk-canary-7f3e9c1d2b4a6e8f0a1b2c3d4e5f6a7b"
BENCH = str(Path(sys.executable).with_name("bench"))


def _text_columns(con) -> list[tuple[str, str, str]]:
    return con.execute(
        "select table_schema, table_name, column_name from information_schema.columns "
        "where data_type in ('VARCHAR', 'JSON') or data_type like '%[]'"
    ).fetchall()


def _db_hits(path: Path) -> list[str]:
    hits = []
    with duckdb.connect(str(path), read_only=True) as con:
        for schema, table, column in _text_columns(con):
            found = con.execute(
                f'select count(*) from "{schema}"."{table}" where contains(cast("{column}" as varchar), ?)',
                [CANARY],
            ).fetchone()[0]
            if found:
                hits.append(f"{path.name}:{schema}.{table}.{column}")
    return hits


def test_canary_key_never_persists(tmp_path):
    home = tmp_path / "home"
    with FakeVendorServer() as fake:
        env = {
            **os.environ,
            "BENCH_HOME": str(home),
            "BRAVE_SEARCH_API_KEY": CANARY,
            "OPENAI_API_KEY": CANARY,
            "ANTHROPIC_API_KEY": CANARY,
            "BENCH_BASE_URL_BRAVE": fake.base_urls()["brave"],
        }
        proc = subprocess.run(
            [
                BENCH,
                "run",
                "qa",
                "--questions",
                "demo",
                "--lanes",
                "brave_search,local-bm25",
                "--limit",
                "3",
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        sent = [
            {k.lower(): v for k, v in r.headers.items()}.get("x-subscription-token")
            for r in fake.requests_for("brave")
        ]
    assert proc.returncode == 0, proc.stderr
    assert sent and all(token == CANARY for token in sent), "the key must reach the vendor"

    assert CANARY not in proc.stdout + proc.stderr
    text_hits = [
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and p.suffix != ".duckdb" and CANARY.encode() in p.read_bytes()
    ]
    assert text_hits == []
    assert _db_hits(home / "warehouse.duckdb") == []
    assert _db_hits(home / "serve.duckdb") == []
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        calls = con.execute(
            "select count(*) from marts.dim_events where event_type = 'provider_call_completed' "
            "and (payload->>'lane') = 'brave_search'"
        ).fetchone()[0]
    assert calls == 3, (
        "the brave calls must be in the warehouse (redacted), or this test proves nothing"
    )


def test_canary_never_reaches_the_app(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    home = tmp_path / "home"
    with FakeVendorServer() as fake:
        env = {
            **os.environ,
            "BENCH_HOME": str(home),
            "BRAVE_SEARCH_API_KEY": CANARY,
            "BENCH_BASE_URL_BRAVE": fake.base_urls()["brave"],
        }
        subprocess.run(
            [BENCH, "run", "qa", "--questions", "demo", "--lanes", "brave_search", "--limit", "2"],
            check=True,
            capture_output=True,
            env=env,
        )
    monkeypatch.setenv("BENCH_HOME", str(home))
    pages = sorted((Path(__file__).resolve().parents[2] / "app" / "app_pages").glob("*.py"))
    assert pages
    for page in pages:
        if page.name == "__init__.py":
            continue
        at = AppTest.from_file(str(page), default_timeout=60).run()
        rendered = repr([element for element in at])
        assert CANARY not in rendered, page.name
