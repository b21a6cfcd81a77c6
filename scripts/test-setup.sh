#!/usr/bin/env bash
# Installs pgdoctor with its test dependencies. The tests want torch 2.13.0 built for the CPU:
# PyPI's Linux torch is the CUDA build, which pulls several GB of NVIDIA wheels. So torch comes
# from PyTorch's CPU wheel index when that answers within a few seconds; where it does not (an
# offline mirror, a machine with only PyPI or a local wheel directory) the plain pin is
# installed from whatever pip is configured with, and this script says so.
# PGDOCTOR_TORCH_INDEX=URL names another CPU index; PGDOCTOR_TORCH_INDEX=none skips the probe.
# PGDOCTOR_SETUP_DRY_RUN=1 prints the torch install command instead of running anything.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_PIN="torch==2.13.0"
TORCH_INDEX="${PGDOCTOR_TORCH_INDEX-https://download.pytorch.org/whl/cpu}"
PROBE_TIMEOUT_S=5

# Does the index serve a torch page? urllib honours the proxy variables pip honours; any error,
# an HTTP status other than 200 or the timeout means no.
index_answers() {
  python - "$1/torch/" "$PROBE_TIMEOUT_S" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
}

if [ "$TORCH_INDEX" != none ] && index_answers "$TORCH_INDEX"; then
  torch_cmd=(python -m pip install --quiet --index-url "$TORCH_INDEX" "$TORCH_PIN")
  echo "test-setup: $TORCH_PIN from the CPU wheel index $TORCH_INDEX" >&2
else
  torch_cmd=(python -m pip install --quiet "$TORCH_PIN")
  echo "test-setup: the CPU wheel index ${TORCH_INDEX} is not reachable (${PROBE_TIMEOUT_S} s limit); installing" \
       "the plain pin $TORCH_PIN from pip's configured indexes (on PyPI for Linux x86_64 that is the CUDA build)" >&2
fi
if [ -n "${PGDOCTOR_SETUP_DRY_RUN:-}" ]; then
  printf '%s\n' "${torch_cmd[*]}"
  exit 0
fi
python -m pip install --quiet --upgrade pip
"${torch_cmd[@]}"
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
