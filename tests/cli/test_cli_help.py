"""What a new user meets first: --version, -h, an example in every --help, useful type labels,
completion, and errors that name the offline alternative."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from bench.cli import cli_command
from bench.help import EXAMPLES, package_version, walk
from bench.hints import offline_hint
from tests.bench_cli import run_bench


def _bench(
    *args: str,
    env: dict[str, str] | None = None,
    home: Path | None = None,
    subprocess: bool = False,
    input: str | None = None,
):
    """`bench <args>` on a wide console, with `input` piped to it, in this process
    (tests/bench_cli.py) unless `subprocess`: the installed entry point, where the process
    itself is under test."""
    wide = {**(env or {}), "COLUMNS": "200"}
    return run_bench(home, *args, env=wide, check=False, subprocess=subprocess, stdin=input)


def test_version_and_short_help() -> None:
    version = _bench("--version", subprocess=True)
    assert version.returncode == 0
    assert version.stdout.strip() == f"bench {package_version()}"
    assert package_version() == "0.1.0"  # installed metadata, not the fallback
    short = _bench("-h", subprocess=True)
    assert short.returncode == 0
    assert "Usage: bench" in short.stdout
    assert "--install-completion" in short.stdout  # completion is enabled
    assert "-h" in _bench("run", "draco", "-h").stdout


def test_every_command_has_an_example_in_its_help() -> None:
    root = cli_command()
    paths = [path for path, _ in walk(root)]
    missing = [path for path in paths if path not in EXAMPLES]
    assert not missing, f"commands without an example in bench/help.py EXAMPLES: {missing}"
    stale = sorted(set(EXAMPLES) - set(paths))
    assert not stale, f"examples for commands that do not exist: {stale}"
    for path, command in walk(root):
        assert "$ bench " in (command.epilog or ""), path
    rescore = _bench("rescore", "--help").stdout
    assert "$ bench rescore --weights" in rescore


def test_flags_show_no_bool_and_text_options_show_their_name() -> None:
    text = _bench("run", "draco", "--help").stdout
    option_lines = [line for line in text.splitlines() if line.lstrip("│ ").startswith("--")]
    assert any("--help" in line for line in option_lines)
    for root_help in (_bench("--help").stdout, _bench("build", "-h").stdout):
        assert "--version" in root_help or "--with-unit-tests" in root_help
        assert "<bool>" not in root_help, root_help
    bool_lines = [line for line in option_lines if "<bool>" in line]
    assert option_lines and not bool_lines, bool_lines
    assert any("--judge" in line and "JUDGE" in line for line in option_lines)


def test_missing_judge_key_names_the_offline_judge(tmp_path: Path) -> None:
    env = {k: "" for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    result = _bench("run", "draco", "--tasks", "demo", env=env, home=tmp_path / "home")
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "--judge offline" in result.stderr


def test_simpleqa_download_failure_names_dataset_file(tmp_path: Path) -> None:
    from collectors.qa.dataset import DatasetError
    from collectors.qa.simpleqa import load_simpleqa

    def no_network(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    with pytest.raises(DatasetError) as caught:
        load_simpleqa(
            cache_dir=tmp_path, client=httpx.Client(transport=httpx.MockTransport(no_network))
        )
    hint = offline_hint(caught.value, ["run", "simpleqa", "--limit", "5"])
    assert hint is not None and "--dataset-file" in hint
    assert offline_hint(caught.value, ["ingest"]) is None


def test_busy_port_fails_before_printing_the_url(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _bench("app", "--port", str(port), home=tmp_path / "home", subprocess=True)
    assert result.returncode == 2
    assert f"port {port}" in result.stderr and "--port" in result.stderr
    assert "http://" not in result.stdout
