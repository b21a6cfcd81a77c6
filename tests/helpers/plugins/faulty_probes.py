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

# With PGDOCTOR_TEST_MARKS=DIR a test can wait for readiness instead of sleeping: both probes below
# run in the wave after environment and software; test_quick finishes at once and leaves DIR/quick,
# and test_hang leaves DIR/hang only once DIR/quick exists, then hangs. So when DIR/hang exists,
# an earlier wave has finished and a probe of the hanging probe's own wave has finished too.
MARKS = os.environ.get("PGDOCTOR_TEST_MARKS")
AFTER = ("environment", "software") if MARKS else ()


def _mark(name):
    if MARKS:
        with open(os.path.join(MARKS, name), "w"):
            pass


if "hang" in WHICH:

    @probe(
        "test_hang",
        area="host",
        timeout_s=float(os.environ.get("PGDOCTOR_TEST_HANG_TIMEOUT", "1")),
        after=AFTER,
    )
    def hang(ctx):
        while MARKS and not os.path.exists(os.path.join(MARKS, "quick")):
            time.sleep(0.01)
        _mark("hang")
        time.sleep(3600)
        return []

    if MARKS:

        @probe("test_quick", area="host", after=AFTER)
        def quick(ctx):
            _mark("quick")
            return [Measurement("test.quick", 1)]


if "raise" in WHICH:

    @probe("test_raise", area="host")
    def boom(ctx):
        raise RuntimeError("probe exploded")


if "segv" in WHICH:

    @probe("test_segv", area="host")
    def segv(ctx):
        # The crash happens in a child, as it would in a native library called out of process.
        rc = subprocess.run(
            [sys.executable, "-c", "import ctypes; ctypes.string_at(0)"], timeout=10
        ).returncode
        if rc != 0:
            raise RuntimeError(f"child died with signal {-rc}")
        return [Measurement("test.segv", rc)]


if "crashcheck" in WHICH:

    @check("host", [], needs=["host"])
    def crashing_check(snap, config):
        return [1 / 0]  # type: ignore[list-item]
