"""Reports for the renderer tests.

The base report is a real `check --level quick` of this host with NCCL_SOCKET_IFNAME pointing
at an interface that does not exist (a real ENV401 fail, plus whatever the host gives). This
CPU machine has no GPU, so per-GPU measurements are written here with the keys, units, scopes
and sources the gpu probe (probes/gpu/health.py) writes from NVML; collective rows are made by the
sweep's own `make_row` from per-rank times, and trace events by pgdoctor.trace.events's own writer
and merge (the formats a real sweep and a real repro run produce).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from pgdoctor.checks.base import Config
from pgdoctor.engine.runner import build_report, collect
from pgdoctor.model import Finding, Measurement, ProbeResult, Report, Scope, Severity, Status
from pgdoctor.probes.base import ProbeContext

# A failing knob (ENV401) and an info one (ENV408), so every renderer meets both severities.
FAILING_ENV = {"NCCL_SOCKET_IFNAME": "nosuchif", "TORCH_NCCL_BLOCKING_WAIT": "1"}


def live_report(extra_env: dict[str, str] | None = None) -> Report:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "TORCH_"))}
    env.update(FAILING_ENV if extra_env is None else extra_env)
    snap = collect(ProbeContext(env=env, level="quick"), timeout_s=30.0)
    return build_report("check", snap, Config({}), meta={"options": {}, "from": None})


def gpu_measurements(n: int = 2) -> list[Measurement]:
    out = []
    for i in range(n):
        s = Scope(gpu_index=i, gpu_uuid=f"GPU-5f1e0000-7c3a-4e21-9d55-a0000000000{i}")
        out += [
            Measurement("gpu.uuid", s.gpu_uuid, scope=s, source="nvml:nvmlDeviceGetUUID"),
            Measurement("gpu.name", "NVIDIA H100 80GB HBM3", scope=s, source="nvml:nvmlDeviceGetName"),
            Measurement("gpu.temp_c", 31 + 7 * i, unit="C", scope=s, source="nvml:nvmlDeviceGetTemperature"),
            Measurement(
                "gpu.power.draw_w", 71.5 + i, unit="W", scope=s, source="nvml:nvmlDeviceGetPowerUsage"
            ),
            Measurement(
                "gpu.ecc.volatile.uncorrected",
                2 if i == 1 else 0,
                scope=s,
                source="nvml:nvmlDeviceGetTotalEccErrors",
            ),
            Measurement("gpu.persistence_mode", True, scope=s, source="nvml:nvmlDeviceGetPersistenceMode"),
            Measurement(
                "gpu.nvlink.active",
                True,
                scope=dataclasses.replace(s, link="0"),
                source="nvml:nvmlDeviceGetNvLinkState",
            ),
        ]
    return out


def gpu_finding(index: int = 1) -> Finding:
    return Finding(
        code="GPU101",
        slug="gpu-ecc-uncorrected-volatile",
        severity=Severity.FAIL,
        category="gpu_hardware",
        title="Uncorrectable ECC errors since the last driver load",
        message=f"GPU {index}: 2 uncorrectable ECC error(s) since the driver loaded",
        area="gpu",
        scope=Scope(gpu_index=index, gpu_uuid=f"GPU-5f1e0000-7c3a-4e21-9d55-a0000000000{index}"),
    )


def sweep_rows(ops: Sequence[str] = ("all_reduce", "all_gather"), world: int = 2) -> list[dict[str, Any]]:
    from pgdoctor.knowledge.collectives import make_row

    rows = []
    for op in ops:
        nbytes = 8
        while nbytes <= (1 << 24):
            # A latency floor of 30 us and a 20 GB/s link, as a 2-GPU PCIe box would measure.
            t = 30.0 + nbytes / 20e3
            rows.append(make_row(op, nbytes, [{"times_us": [t, t * 1.05], "wrong": None}] * world).to_json())
            nbytes *= 8
    return rows


def collective_measurements(rows: Sequence[dict[str, Any]]) -> list[Measurement]:
    out = [Measurement("collectives.backend", "gloo"), Measurement("collectives.world_size", 2)]
    out += [Measurement(f"collectives.{r['op']}.{r['bytes']}", r, source=f"probe:{r['op']}") for r in rows]
    out.append(
        Measurement("collectives.all_reduce.busbw_peak_gbps", max(r["busbw_gbps"] for r in rows), unit="GB/s")
    )
    return out


def with_measurements(
    report: Report,
    probe: str,
    area: str,
    measurements: Sequence[Measurement],
    findings: Sequence[Finding] = (),
) -> Report:
    """The report with one more probe's measurements (and findings) on its snapshot."""
    assert report.snapshot is not None
    extra = ProbeResult(probe, area, Status.PASSED, "", 0.01, tuple(measurements))
    snap = dataclasses.replace(report.snapshot, probes=(*report.snapshot.probes, extra))
    return dataclasses.replace(report, snapshot=snap, findings=(*report.findings, *findings))


def trace(ranks: int = 2) -> dict[str, Any]:
    """A merged trace as pgdoctor.trace.events writes it: per-rank event files, then merge."""
    from pgdoctor.trace.events import EventWriter, merge

    with tempfile.TemporaryDirectory(prefix="pgdoctor-trace-") as d:
        base = 1_000_000_000
        for rank in range(ranks):
            w = EventWriter(d, rank)
            for step in range(3):
                t0 = base + step * 10_000_000
                w.complete("step", {"step": step}, t0, t0 + 9_000_000)
                w.complete("fwd", {}, t0 + 100_000, t0 + 3_000_000, depth=1)
                w.complete("bwd", {}, t0 + 3_000_000, t0 + 7_000_000 + rank * 1_500_000, depth=1)
                w.complete(
                    "comm.all_reduce",
                    {"bucket": 0, "bytes": 1 << 20},
                    t0 + 5_000_000,
                    t0 + 8_000_000,
                    track="comm",
                )
            w.flush()
        return merge(d)


def rich_report() -> Report:
    """Findings (ENV401 real, GPU101 on GPU 1), two GPUs, a sweep and a two-rank trace."""
    rep = live_report()
    rep = with_measurements(rep, "gpu", "gpu", gpu_measurements(), [gpu_finding()])
    rep = with_measurements(rep, "collectives", "collectives", collective_measurements(sweep_rows()))
    return dataclasses.replace(rep, extra={"trace_events": trace()["traceEvents"]})
