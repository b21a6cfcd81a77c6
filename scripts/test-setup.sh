#!/usr/bin/env bash
# Installs pgdoctor with its test dependencies. torch is pinned to the CPU wheel here: an
# unpinned torch pulls a multi-GB CUDA build. Users declare their own torch (>=2.2).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --upgrade pip
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -e ".[test]"
# Debian packages some tests use (iproute2 for network namespaces, gcc for the NVTX injection
# library, chromium for the HTML report); installed when we are root and apt exists.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=""
  command -v ip >/dev/null || need="$need iproute2"
  command -v gcc >/dev/null || need="$need gcc"
  command -v tc >/dev/null || need="$need iproute2"
  if [ -n "$need" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
  fi
  # Only the HTML report's browser test needs chromium, and it skips without one: a mirror
  # without chromium must not fail the setup.
  if ! command -v chromium >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "test-setup: chromium could not be installed; the HTML browser test will skip" >&2
  fi
fi
# A real Nsight Systems (Debian non-free 2022.4, unpacked into ~/.cache/pgdoctor/nsys, not
# installed) for the tests that profile pgdoctor runs; they skip with the reason it gives.
bash scripts/nsys-setup.sh >/dev/null \
  || echo "test-setup: Nsight Systems could not be set up; the nsys tests will skip" >&2
