#!/usr/bin/env bash
# Downloads, here (with network), the wheels that scripts/gpu-acceptance.sh installs on a GPU node
# without network: the packages pgdoctor uses that a CUDA image usually lacks. Only binary wheels
# for CPython 3.12 on manylinux x86_64, without their dependencies (each of these has none that
# such an image lacks). The folder is ignored by git; carry it to the node with the tree.
#   bash scripts/gpu-wheels.sh [DIR]          (default .gpu-wheels)
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-.gpu-wheels}"
# One source for the list and the versions: the acceptance run checks the same names.
mapfile -t pkgs < <(python3 scripts/gpu_acceptance/wheels.py --requirements)
mkdir -p "$dest"
# pip matches a manylinux tag exactly, so name the common ones; --no-deps: see above.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
  -d "$dest" "${pkgs[@]}"
python3 scripts/gpu_acceptance/wheels.py --check "$dest"
