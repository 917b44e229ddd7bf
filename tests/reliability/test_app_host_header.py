"""The app accepts only loopback Host headers (DNS rebinding), from the repo's own config."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo_config(monkeypatch):
    from streamlit import config

    monkeypatch.chdir(REPO)  # `bench app` runs streamlit from the repo root
    config.get_config_options(force_reparse=True)
    yield config
    config.get_config_options(force_reparse=True)


def test_only_loopback_hosts_reach_the_app(repo_config):
    from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

    assert repo_config.get_option("server.allowedHosts")
    for host in ("127.0.0.1:8501", "localhost:8501", "localhost"):
        assert is_host_allowed(host), host
    for host in ("evil.example", "evil.example:8501", "127.0.0.1.evil.example", None):
        assert not is_host_allowed(host), host
