"""Record this node's NVML answers as a replay fixture: `python -m pgdoctor.probes.gpu_record OUT.json`.

Runs the gpu probe through a RecordingBackend wrapped around the live backend, so the fixture
holds exactly the calls the probe makes, with real values and real errors (not-supported fields
come out as {"nvml_error": "NotSupported"}). Commit the file under tests/fixtures/nvml/ and say in
its "source" which node, driver and date it came from.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.gpu.health import read_all
from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlError, RecordingBackend


def record(path: str) -> int:
    rec = RecordingBackend(LiveBackend())
    try:
        rec.init()
    except NvmlError as exc:
        print(f"NVML did not start: {exc.reason.value}: {exc.detail}", file=sys.stderr)
        return 3
    try:
        ms = read_all(rec, ProbeContext(env=dict(os.environ)))
    finally:
        rec.shutdown()
    driver = next((m.value for m in ms if m.key == "gpu.driver_version"), "?")
    names = sorted({str(m.value) for m in ms if m.key == "gpu.name"})
    source = (
        f"recorded on {socket.gethostname()} ({', '.join(names)}; driver {driver}) on "
        f"{time.strftime('%Y-%m-%d', time.gmtime())} by python -m pgdoctor.probes.gpu_record"
    )
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(rec.fixture(source), fh, indent=1)
        fh.write("\n")
    print(f"wrote {path}: {len(rec.calls)} calls", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m pgdoctor.probes.gpu_record OUT.json", file=sys.stderr)
        return 2
    return record(argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
