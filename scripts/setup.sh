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
if [ ! -f "$stamp" ]; then
  echo "installing the pinned stack into .venv (about a minute)..." >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  # pyproject.toml declares the dependencies (ranges); the lock pins the tested set.
  .venv/bin/python -m pip install -q -c requirements.lock.txt -e ".[dev]"
  rm -f .venv/.installed-* && touch "$stamp"
fi
