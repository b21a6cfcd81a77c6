"""The areas of a report: one status line each in the console, and the names --only/--skip take."""

from __future__ import annotations

# Order is the order of the console report.
AREAS: dict[str, str] = {
    "software": "Software: Python, torch, CUDA runtime, NCCL",
    "launch": "Launch environment: ranks, world size, master address",
    "knobs": "NCCL / gloo / torch settings",
    "host": "Host limits: /dev/shm, ulimits, memory, CPUs",
    "gpu": "GPU health (NVML)",
    "net": "Interconnect and network",
    "collectives": "Collective bandwidth, latency and correctness",
    "run": "Failures seen in a run (logs, flight recorder)",
    "hang": "A job that hangs now: where every live rank is (hang, run)",
    "plan": "Memory and communication plan",
    "verify": "Distributed equivalence and scaling of your model (verify, bench scaling)",
}


def area_title(area: str) -> str:
    return AREAS.get(area, area)
