"""The documented entry point `python -m pgdoctor.probes.gpu_record OUT.json`; the recorder itself
lives in pgdoctor.probes.gpu.record."""

from __future__ import annotations

import sys

from pgdoctor.probes.gpu.record import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
