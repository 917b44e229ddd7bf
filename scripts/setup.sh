#!/usr/bin/env bash
# Create .venv (Python 3.11) and install the pinned stack; idempotent and quick when up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || { echo "error: Python 3.11 is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2; exit 2; }

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.installed-$(cat requirements.lock.txt pyproject.toml | sha256sum | cut -c1-16)
# pyproject.toml declares the dependencies (ranges); the lock pins the tested set (uv included).
# Extras: dev (tests, lint), inspect (inspect_ai, for the tests of `--format inspect`) and lake
# (DuckDB's DuckLake extensions as wheels, for the lake tests).
install_with_uv() {
  # uv installs the same pins in about 19 s where pip takes about 50 (measured on 2 cores).
  # --compile-bytecode as pip does: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE
  # is set (this machine) every process then compiles what it imports (`dbt --version` 2.9 s, not 1.5)
  .venv/bin/python -m pip install -q -c requirements.lock.txt uv >/dev/null 2>&1 \
    && .venv/bin/python -m uv pip install --python .venv/bin/python -q --compile-bytecode -c requirements.lock.txt -e ".[dev,inspect,lake]"
}
install_with_pip() {  # what a user's `pip install` does (README), where uv is unavailable
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -c requirements.lock.txt -e ".[dev,inspect,lake]"
}
if [ ! -f "$stamp" ]; then
  echo "installing the pinned stack into .venv..." >&2
  install_with_uv || { echo "uv unavailable; installing with pip (about a minute)..." >&2; install_with_pip; }
  rm -f .venv/.installed-* && touch "$stamp"
fi
