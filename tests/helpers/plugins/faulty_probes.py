"""Test plugin: probes that hang, raise and kill their own child, and a check that crashes.
Loaded through PGDOCTOR_PLUGINS by tests/cli/test_cli.py only."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from pgdoctor.checks.base import check
from pgdoctor.model import Measurement
from pgdoctor.probes.base import probe

WHICH = set(os.environ.get("PGDOCTOR_TEST_FAULTS", "hang,raise,segv,crashcheck").split(","))

if "hang" in WHICH:
    @probe("test_hang", area="host", timeout_s=float(os.environ.get("PGDOCTOR_TEST_HANG_TIMEOUT", "1")))
    def hang(ctx):
        time.sleep(3600)
        return []

if "raise" in WHICH:
    @probe("test_raise", area="host")
    def boom(ctx):
        raise RuntimeError("probe exploded")

if "segv" in WHICH:
    @probe("test_segv", area="host")
    def segv(ctx):
        # The crash happens in a child, as it would in a native library called out of process.
        rc = subprocess.run([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"], timeout=10).returncode
        if rc != 0:
            raise RuntimeError(f"child died with signal {-rc}")
        return [Measurement("test.segv", rc)]

if "crashcheck" in WHICH:
    @check("host", [], needs=["host"])
    def crashing_check(snap, config):
        return [1 / 0]  # type: ignore[list-item]
