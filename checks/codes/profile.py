"""Codes of per-rank profiler trace analysis (`pgdoctor diagnose DIR` with torch.profiler / Kineto
traces or pgdoctor's rank event files): the straggler and its cause, communication left exposed,
data-loading stalls, an idle GPU, and steps bound by kernel launches.

They extend the lab's imbalance codes (RUN401-RUN404) to any job's traces. Emitted by
pgdoctor.diagnose.profile.findings.
"""

from __future__ import annotations

from pgdoctor.checks.base import config_key, register_code

TRACE_STRAGGLER = register_code(
    "RUN405",
    "trace-straggler",
    "warn",
    "imbalance",
    "One rank is late every step and the others wait for it in their collectives",
    "run",
)
TRACE_EXPOSED_COMM = register_code(
    "RUN406",
    "trace-exposed-communication",
    "warn",
    "performance",
    "Communication is not hidden behind compute: the ranks sit in collectives for a large share of the step",
    "run",
)
TRACE_DATA_STALL = register_code(
    "RUN407",
    "trace-data-loading-stall",
    "warn",
    "performance",
    "Ranks spend a large share of each step waiting for the next batch from their DataLoader",
    "run",
)
TRACE_GPU_IDLE = register_code(
    "RUN408",
    "trace-gpu-underutilised",
    "warn",
    "performance",
    "The GPU runs nothing for a large share of the analysed steps",
    "run",
)
TRACE_LAUNCH_BOUND = register_code(
    "RUN409",
    "trace-kernel-launch-bound",
    "warn",
    "performance",
    "Steps are bound by kernel launches: most kernels finish faster than the CPU launches them",
    "run",
)

EXPOSED_COMM_PCT = config_key(
    "traces.exposed_comm_pct",
    float,
    25.0,
    "RUN406: exposed communication (not overlapped by compute), % of the window",
    hi=100.0,
)
DATA_STALL_PCT = config_key(
    "traces.data_stall_pct", float, 10.0, "RUN407: DataLoader time, % of the step", hi=100.0
)
GPU_IDLE_PCT = config_key(
    "traces.gpu_idle_pct", float, 40.0, "RUN408: GPU idle, % of the analysed window", hi=100.0
)
SHORT_KERNEL_PCT = config_key(
    "traces.short_kernel_pct",
    float,
    50.0,
    "RUN409: kernels shorter than their launch call, % of compute kernels",
    hi=100.0,
)
LAUNCH_IDLE_PCT = config_key(
    "traces.launch_bound_idle_pct",
    float,
    30.0,
    "RUN409: GPU idle, % of the window, above which short kernels mean launch-bound",
    hi=100.0,
)
