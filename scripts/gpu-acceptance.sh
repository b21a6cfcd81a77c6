#!/usr/bin/env bash
# The GPU acceptance run (docs/gpu.md): on one node with an NVIDIA GPU, no network needed, from the
# repository root of a checkout that carries .gpu-wheels/ (made by scripts/gpu-wheels.sh).
#   bash scripts/gpu-acceptance.sh [--out DIR] [--only 1,4]   results in DIR (default $OUT)
#   bash scripts/gpu-acceptance.sh --dry-run                  checks, without a GPU, that it is ready
set -euo pipefail
cd "$(dirname "$0")/.."
# The node's python3 is the one that holds its torch; PYTHON overrides it.
exec "${PYTHON:-python3}" -m scripts.gpu_acceptance "$@"
