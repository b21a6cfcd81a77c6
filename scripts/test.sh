#!/usr/bin/env bash
# The project's test command: lint, type-check, then the whole test suite (slow tests included).
# Quick subset while developing: python -m pytest -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check .
python tools/typecheck.py
python -m pytest -q "$@"
