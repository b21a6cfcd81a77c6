#!/usr/bin/env bash
# The project's test command: lint, type-check, then the whole test suite (slow tests included).
# Quick subset while developing: python -m pytest -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
python -m ruff check .
python -m ruff format --check .
python tools/typecheck.py
# Three workers on two cores: most multi-process tests wait (for timeouts, ranks, sockets), so a
# third worker fills the idle time: 6.7 min instead of about 9.5 min on 2 cores. PGDOCTOR_TEST_WORKERS=0
# runs everything in this process (for a debugger).
workers="${PGDOCTOR_TEST_WORKERS:-3}"
if [ "$workers" = 0 ]; then
  python -m pytest -q "$@"
else
  # The slowest tests are printed at the end, so a run that nears the 10-minute budget says where it went.
  # loadgroup: tests that share an expensive module fixture carry one xdist_group and stay on one worker.
  python -m pytest -q -n "$workers" --dist loadgroup --durations=15 "$@"
fi
