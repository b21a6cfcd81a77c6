#!/usr/bin/env bash
# The project's test command: lint, type-check, then the whole test suite (slow tests included).
# Quick subset while developing: python -m pytest -m "not slow"
set -euo pipefail
cd "$(dirname "$0")/.."
# The suite starts hundreds of Python processes (the CLI, ranks, probes) that import the rule catalogue.
# Where PYTHONDONTWRITEBYTECODE is set (containers set it), each one compiles ~350 modules of a fresh clone
# from source: a fresh-clone run took 12 min 14 s instead of about 8. Their bytecode goes to a cache outside
# the clone instead, so the tree stays free of __pycache__ as that setting intends.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
  export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/pgdoctor/pycache}"
fi
python -m ruff check .
python -m ruff format --check .
# One collection of the whole suite beside the type check (mypy uses one core): it leaves the bytecode of
# the imported modules and of pytest's rewritten test modules in the cache, so each of the workers below
# collects in about 6 CPU-s instead of 15 in a fresh clone (measured on 2 cores). Its output is not
# needed: the workers report any collection error themselves. Only for the whole suite: a run given a
# selection (the README walk runs the architecture tests) would collect every module for nothing.
if [ "$#" -eq 0 ]; then
  python -m pytest --collect-only -q -p no:xdist >/dev/null 2>&1 &
  warm=$!
  trap 'kill "$warm" 2>/dev/null || true' EXIT
  python tools/typecheck.py
  wait "$warm" || true
  trap - EXIT
else
  python tools/typecheck.py
fi
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
