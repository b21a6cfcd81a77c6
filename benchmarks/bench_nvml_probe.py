"""The NVML probe over 8 fake GPUs: pgdoctor's own time, without NVML's.

Replays the 8x H100 recording (tests/fixtures/nvml/h100_sxm_8gpu.json) through the gpu probe and
subtracts the time spent inside the backend's call(), so what remains is pgdoctor's own work:
building measurements, converting units, walking NVLink links and GPU pairs. On real hardware
NVML's own latency comes on top (typically 10-100 us per call; the probe makes the number of
calls printed below). Target: under 50 ms.

    python benchmarks/bench_nvml_probe.py [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from pgdoctor.probes.base import ProbeContext
from pgdoctor.probes.gpu.health import gpu_probe
from pgdoctor.probes.gpu.nvml import ReplayBackend

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "nvml" / "h100_sxm_8gpu.json"


class TimedReplay(ReplayBackend):
    """Replay that accounts for the time spent answering, so it can be taken out."""

    def __init__(self, calls: dict[str, Any]):
        super().__init__(calls)
        self.backend_s = 0.0

    def call(self, function: str, *args: int) -> Any:
        start = time.perf_counter()
        try:
            return super().call(function, *args)
        finally:
            self.backend_s += time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    calls = json.loads(FIXTURE.read_text())["calls"]
    own, total, backend = [], [], []
    n_calls = n_measurements = 0
    for _ in range(args.repeats):
        replay = TimedReplay(calls)
        ctx = ProbeContext(env={}, options={"nvml_backend": replay})
        start = time.perf_counter()
        ms = gpu_probe(ctx)
        elapsed = time.perf_counter() - start
        total.append(elapsed)
        backend.append(replay.backend_s)
        own.append(elapsed - replay.backend_s)
        n_calls, n_measurements = len(replay.log), len(ms)
    ms_of = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
    print(f"gpu probe, 8 fake H100 GPUs, {args.repeats} runs")
    print(f"  NVML calls per run:         {n_calls}")
    print(f"  measurements per run:       {n_measurements}")
    print(f"  total (median):             {ms_of(total):.2f} ms")
    print(f"  inside the replay backend:  {ms_of(backend):.2f} ms")
    print(
        f"  pgdoctor's own (median):    {ms_of(own):.2f} ms   (max {1000 * max(own):.2f} ms; target < 50 ms)"
    )
    print(f"  own time per NVML call:     {1e6 * statistics.median(own) / n_calls:.1f} us")


if __name__ == "__main__":
    main()
