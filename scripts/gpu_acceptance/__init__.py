"""The GPU acceptance run: `bash scripts/gpu-acceptance.sh` (docs/gpu.md).

Runs on a node with one NVIDIA GPU and no network: pgdoctor from this tree, the wheels carried in
.gpu-wheels/, six steps each under its own timeout, everything written under one folder. Its
modules use only the standard library until pgdoctor is linked in, so `--dry-run` works anywhere.
"""
