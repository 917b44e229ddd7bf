"""The real app in Debian chromium (Playwright, no browser download), on loopback only.

Starts `streamlit run app/streamlit_app.py` from the repo root with BENCH_HOME pointing at the
test snapshot, checks the leaderboard renders, then deep-links the lineage page to the item whose
provider output carries `<script>`/`<img onerror>` and proves it stays inert text.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from app_harness import APP_SCRIPT, REPO_ROOT, ServeSnapshot

CHROMIUM = Path("/usr/bin/chromium")
DEAD_PORT = 9  # discard: nothing listens on it here
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Every request beyond loopback goes to a dead proxy and fails without reaching the network
    # (chromium never proxies loopback); `guarded_page` records each one. Intercepting every
    # request with Playwright's `route` did the same at ~1.7x the time a page (29 s -> 17 s
    # for the 14 pages): each request made a round trip through the driver.
    f"--proxy-server=http://127.0.0.1:{DEAD_PORT}",
]
STARTUP_TIMEOUT_S = 60
RENDER_TIMEOUT_MS = 30_000

pytestmark = [
    pytest.mark.slow,  # builds the real snapshot (dbt)
    pytest.mark.browser,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(base_url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"streamlit exited with {server.returncode}:\n{log.read_text()}")
        try:
            with opener.open(f"{base_url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.25)
    pytest.fail(f"streamlit not healthy after {STARTUP_TIMEOUT_S} s:\n{log.read_text()}")


@contextmanager
def running_app(bench_home: Path, log: Path) -> Iterator[str]:
    """`streamlit run app/streamlit_app.py` on a free loopback port over `bench_home`; yields
    its base URL once healthy and always stops it (SIGTERM, then kill)."""
    port = free_port()
    env = {**os.environ, "BENCH_HOME": str(bench_home), "NO_PROXY": "127.0.0.1"}
    command = [
        sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT.relative_to(REPO_ROOT)),
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with log.open("wb") as sink:
        server = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, server, log)
        yield base_url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@dataclass
class GuardedPage:
    """A chromium page that may reach only 127.0.0.1, records every dialog (an injected
    `alert` would open one) and every off-loopback request, and keeps named screenshots."""

    page: Any
    shots_dir: Path
    offsite: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    shots: list[Path] = field(default_factory=list)

    def shoot(self, name: str) -> None:
        path = self.shots_dir / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.shots.append(path)

    def assert_inert(self, marker: str) -> None:
        """Nothing the planted payload could do happened: no injected <img>, no script
        holding `marker`, no dialog, no request beyond loopback."""
        assert self.page.locator('img[src="x"]').count() == 0
        assert self.page.evaluate(
            "marker => [...document.scripts].every(s => !s.textContent.includes(marker))", marker
        )
        assert not self.dialogs, self.dialogs
        assert not self.offsite, f"the app tried to reach beyond loopback: {self.offsite}"


def is_loopback(url: str) -> bool:
    """A URL the app may reach: 127.0.0.1, or one with no network host (data:, blob:, about:)."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https", "ws", "wss"}:
        return True
    return parts.hostname == "127.0.0.1"


@contextmanager
def guarded_page(shots_dir: Path, *, height: int = 1800) -> Iterator[GuardedPage]:
    """Launch Debian chromium (no download), yield a `GuardedPage`, always close the browser;
    afterwards print the screenshots and copy them to $BENCH_APP_SCREENSHOT_DIR if set."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": 1600, "height": height})
            guarded = GuardedPage(context.new_page(), shots_dir)

            def record_offsite(request) -> None:
                if not is_loopback(request.url):
                    guarded.offsite.append(request.url)

            context.on("request", record_offsite)
            guarded.page.on(
                "dialog", lambda dialog: (guarded.dialogs.append(dialog.message), dialog.dismiss())
            )
            yield guarded
        finally:
            browser.close()
    for path in guarded.shots:
        print(f"screenshot: {path}")
    artifacts = os.environ.get("BENCH_APP_SCREENSHOT_DIR")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        for path in guarded.shots:
            shutil.copy(path, Path(artifacts) / path.name)


@pytest.fixture
def app_url(serve_snapshot: ServeSnapshot, tmp_path: Path) -> Iterator[str]:
    with running_app(serve_snapshot.home, tmp_path / "streamlit.log") as url:
        yield url


def test_leaderboard_and_lineage_render_provider_html_inert(
    app_url: str, serve_snapshot: ServeSnapshot, tmp_path: Path
) -> None:
    expect = sync_api.expect
    with guarded_page(tmp_path) as guarded:
        page = guarded.page
        page.goto(f"{app_url}/extraction_leaderboard")
        expect(page.get_by_role("heading", name="Extraction leaderboard")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        expect(page.locator('[data-testid="stMetricValue"]').first).to_be_visible()
        guarded.shoot("leaderboard")

        fixture = serve_snapshot.require_fixture()
        page.goto(f"{app_url}/item_lineage?{urlencode(fixture.malicious)}")
        expect(page.get_by_role("heading", name="Item lineage")).to_be_visible(
            timeout=RENDER_TIMEOUT_MS
        )
        planted = page.locator('[data-testid="stCode"]').filter(has_text="<script>document.title")
        expect(planted.first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        expect(planted).to_have_count(2)  # raw output and ground truth, both as text
        expect(
            page.get_by_text(f"item {fixture.malicious['item']}", exact=False).first
        ).to_be_visible()
        page.wait_for_timeout(500)  # give any injected handler a chance to fire

        assert "pwned" not in page.title()
        guarded.assert_inert("pwned")
        guarded.shoot("lineage")


def test_the_guard_records_and_blocks_every_request_beyond_loopback(tmp_path: Path) -> None:
    """What the page tests' `not guarded.offsite` rests on: an off-loopback request (by name or
    by address) is recorded and fails, while loopback is served."""
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    local = f"http://127.0.0.1:{server.server_address[1]}/"
    offsite = ["http://example.com/pixel.png", "http://198.51.100.7/beacon"]
    try:
        with guarded_page(tmp_path) as guarded:
            page = guarded.page
            failures: dict[str, str | None] = {}
            page.on(
                "requestfailed", lambda request: failures.update({request.url: request.failure})
            )
            page.goto(local)
            statuses = page.evaluate(
                "urls => Promise.all(urls.map(u => fetch(u, {mode: 'no-cors'})"
                ".then(() => 'ok', () => 'failed')))",
                [local, *offsite],
            )
    finally:
        server.shutdown()
        server.server_close()
    assert statuses == ["ok", "failed", "failed"]
    assert guarded.offsite == offsite
    # refused by the dead proxy, not by a missing network: it never left the machine
    assert failures == dict.fromkeys(offsite, "net::ERR_PROXY_CONNECTION_FAILED")
