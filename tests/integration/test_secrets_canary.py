"""A canary key planted in the environment must appear nowhere: log, warehouse, snapshot, dbt and
dlt files, command output, or any page of the app."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from tests.fakes.fake_server import FakeVendorServer

pytestmark = pytest.mark.slow

CANARY = "sk-canary-7f3e9c1d2b4a6e8f0a1b2c3d4e5f6a7b"
BENCH = str(Path(sys.executable).with_name("bench"))


def _text_columns(con) -> dict[tuple[str, str], list[str]]:
    """(schema, table) -> its text columns (VARCHAR, JSON, lists)."""
    columns: dict[tuple[str, str], list[str]] = {}
    for schema, table, column in con.execute(
        "select table_schema, table_name, column_name from information_schema.columns "
        "where data_type in ('VARCHAR', 'JSON') or data_type like '%[]'"
    ).fetchall():
        columns.setdefault((schema, table), []).append(column)
    return columns


def _db_hits(path: Path, needles: dict[str, bytes]) -> list[str]:
    """ "file:schema.table.column:needle" for every text cell holding a needle; one scan a table."""
    hits = []
    with duckdb.connect(str(path), read_only=True) as con:
        for (schema, table), columns in _text_columns(con).items():
            cells = [(column, name) for column in columns for name in needles]
            found = con.execute(
                "select "
                + ", ".join(
                    f'count_if(contains(cast("{column}" as varchar), ?))' for column, _ in cells
                )
                + f' from "{schema}"."{table}"',
                [needles[name].decode() for _, name in cells],
            ).fetchone()
            hits += [
                f"{path.name}:{schema}.{table}.{column}:{name}"
                for (column, name), n in zip(cells, found, strict=True)
                if n
            ]
    return hits


@pytest.fixture(scope="module")
def canary_run(tmp_path_factory):
    """One real `bench run qa` with the canary as every vendor and LLM key, the Brave lane
    against the loopback fake: (home, the finished process, the tokens Brave received, the
    echo run's processes).

    The run collects only (`--no-score`): the echoing-vendor run of
    `test_echoed_keys_and_gateway_credentials_never_persist` goes into the same data root next
    and its ingest, build and publish score both runs, with the canary still the OpenAI and
    Anthropic key in its environment. One full pipeline build, not two; every test reads the
    same root, and every process's output is searched for every planted key."""
    home = tmp_path_factory.mktemp("canary") / "home"
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
                "--no-score",
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
    return home, proc, sent, _echo_run(home)


def test_canary_key_never_persists(canary_run):
    home, proc, sent, echo_run = canary_run
    assert proc.returncode == 0, proc.stderr
    assert sent and all(token == CANARY for token in sent), "the key must reach the vendor"

    for printed in [proc, *echo_run.outputs]:
        assert CANARY not in printed.stdout + printed.stderr
    text_hits = [
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and p.suffix != ".duckdb" and CANARY.encode() in p.read_bytes()
    ]
    assert text_hits == []
    assert _db_hits(home / "warehouse.duckdb", {"raw": CANARY.encode()}) == []
    assert _db_hits(home / "serve.duckdb", {"raw": CANARY.encode()}) == []
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        calls = con.execute(
            "select count(*) from marts.dim_events where event_type = 'provider_call_completed' "
            "and (payload->>'lane') = 'brave_search'"
        ).fetchone()[0]
    assert calls == 3, (
        "the brave calls must be in the warehouse (redacted), or this test proves nothing"
    )


def test_canary_never_reaches_the_app(canary_run, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    source, proc, _sent, _echo = canary_run
    assert proc.returncode == 0, proc.stderr
    home = tmp_path / "home"  # a copy: the app must not write into the run's data root
    shutil.copytree(source, home)
    monkeypatch.setenv("BENCH_HOME", str(home))
    pages = sorted((Path(__file__).resolve().parents[2] / "app" / "app_pages").glob("*.py"))
    assert pages
    for page in pages:
        if page.name == "__init__.py":
            continue
        at = AppTest.from_file(str(page), default_timeout=60).run()
        rendered = repr([element for element in at])
        assert CANARY not in rendered, page.name


# --- vendors that echo the key back, in every encoding (issue #14 point 2) --------------------

ECHO_CANARY = "sk-canary-echo-5d4c3b2a1f0e9d8c7b6a"
GATEWAY_CANARY = "sk-canary-gateway-1a2b3c4d5e6f7a8b"


def _needles(secret: str) -> dict[str, bytes]:
    """How a leaked key can look on disk or on screen, computed without the scrubber's code."""
    import base64
    from urllib.parse import quote

    return {
        "raw": secret.encode(),
        "json-escaped": "".join(f"\\u{ord(c):04x}" for c in secret).encode(),
        "json-escaped-upper": "".join(f"\\u{ord(c):04X}" for c in secret).encode(),
        "percent": quote(secret + "/", safe="").encode(),
        "base64": base64.b64encode(secret.encode()).rstrip(b"=")[:-2],
        "base64-basic": base64.b64encode(f"user:{secret}".encode())[8:-4],
    }


def _echo_body(secret: str) -> str:
    """A 401 like real APIs send, naming the key in every form: the \\u escapes are JSON escapes
    (decoded by the client into the plain key) and also literal text (kept as backslash-u)."""
    import base64
    from urllib.parse import quote

    escaped = "".join(f"\\u{ord(c):04x}" for c in secret)
    return (
        '{"error": {"message": "Incorrect API key provided: ' + secret + '", '
        '"decoded": "' + escaped + '", '
        '"literal": "' + escaped.replace("\\", "\\\\") + '", '
        '"percent": "' + quote(secret + "/", safe="") + '", '
        '"base64": "' + base64.b64encode(secret.encode()).decode() + '", '
        '"basic": "Basic ' + base64.b64encode(f"user:{secret}".encode()).decode() + '"}}'
    )


class _EchoVendor:
    """Answers every request with 401 and the presented key echoed back in every encoding."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                body = _echo_body(ECHO_CANARY).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Echo-Key", ECHO_CANARY)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _file_hits(root: Path, needles: dict[str, bytes]) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path.relative_to(root)}:{name}" for name, n in needles.items() if n in data]
    return hits


@dataclass
class _EchoRun:
    outputs: list[subprocess.CompletedProcess]
    gateway_calls: int


def _echo_run(home: Path) -> _EchoRun:
    """`bench run qa` into `home` (scored: ingest, build, publish) with Brave echoing its key
    and an openai-compatible synthesizer behind a credentialed URL, then status, verify and an
    export; the canary stays the OpenAI and Anthropic key, unused by this run's lanes."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.qa.llm_fake import FakeLlmServer

    echoed = _echo_body(ECHO_CANARY).replace('"', "'")
    with _EchoVendor() as vendor, FakeLlmServer(lambda prompt: f"Answer. {echoed}") as llm:
        host = llm.base_url.split("://", 1)[1]
        synthesizer = f"openai-compatible:m@http://user:{GATEWAY_CANARY}@{host}/v1"
        env = {
            **os.environ,
            "BENCH_HOME": str(home),
            "BRAVE_SEARCH_API_KEY": ECHO_CANARY,
            "OPENAI_COMPATIBLE_API_KEY": GATEWAY_CANARY,
            "OPENAI_API_KEY": CANARY,
            "ANTHROPIC_API_KEY": CANARY,
            "BENCH_BASE_URL_BRAVE": vendor.base_url,
        }
        command = [BENCH, "run", "qa", "--questions", "demo", "--lanes", "brave_search,local-bm25"]
        command += ["--limit", "3", "--synthesizer", synthesizer]
        outputs = [subprocess.run(command, capture_output=True, text=True, env=env)]
        gateway_calls = len(llm.calls)
    for extra in (["status"], ["verify"], ["export", "dim_events", "--out", str(home / "x.csv")]):
        outputs.append(subprocess.run([BENCH, *extra], capture_output=True, text=True, env=env))
    return _EchoRun(outputs, gateway_calls)


def test_echoed_keys_and_gateway_credentials_never_persist(canary_run):
    """Brave echoes its key in a 401 (raw, JSON-escaped, percent, base64); the synthesizer is
    an openai-compatible gateway whose URL carries credentials and whose completions quote
    the key. Nothing of either may reach the data root, a DuckDB file, an export or output.
    The run shares the canary run's data root (`canary_run`)."""
    home, _proc, _sent, echo_run = canary_run
    outputs = echo_run.outputs
    # A refused key aborts its lane (exit 1) after the rest of the run is scored.
    assert outputs[0].returncode in (0, 1), outputs[0].stderr[-3000:]
    assert "HTTP 401" in outputs[0].stderr, outputs[0].stderr[-3000:]
    assert echo_run.gateway_calls, "the gateway must have been called, or this test proves nothing"
    for extra, output in zip(("status", "verify", "export"), outputs[1:], strict=True):
        assert output.returncode == 0, (extra, output.stderr[-2000:])

    found = 0
    for secret in (ECHO_CANARY, GATEWAY_CANARY):
        needles = _needles(secret)
        printed = "".join(o.stdout + o.stderr for o in outputs).encode()
        hits = [name for name, n in needles.items() if n in printed]
        hits += _file_hits(home, needles)
        hits += _db_hits(home / "warehouse.duckdb", needles)
        hits += _db_hits(home / "serve.duckdb", needles)
        assert hits == [], secret
        found += len(hits)
    assert found == 0
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        (failed,) = con.execute(
            "select count(*) from marts.dim_events where event_type = 'provider_call_failed' "
            "and payload::varchar like '%[REDACTED]%'"
        ).fetchone()
    assert failed >= 1, "the echoed 401s must be in the warehouse, scrubbed"
