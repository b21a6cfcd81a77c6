"""Codes of the failure lab (`pgdoctor repro`): load imbalance measured from a run's trace,
and a rank stalled outside a collective, seen in the ranks' own open-range reports.

The lab's oom and timeout runs are diagnosed with the log diagnoser's own codes; these are
the findings only the lab's instrumentation can give. Emitted by pgdoctor.lab.diagnosis.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

DDP_RANK_IMBALANCE = register_code(
    "RUN401",
    "lab-ddp-rank-imbalance",
    "warn",
    "imbalance",
    "One data-parallel rank computes longer than the others, which wait for it",
    "run",
)
PP_STAGE_IMBALANCE = register_code(
    "RUN402",
    "lab-pp-stage-imbalance",
    "warn",
    "imbalance",
    "One pipeline stage is slower than the others and sets the pace of the pipeline",
    "run",
)
TP_SHARD_IMBALANCE = register_code(
    "RUN403",
    "lab-tp-shard-imbalance",
    "warn",
    "imbalance",
    "One tensor-parallel shard computes longer than the others, which wait in its all-reduces",
    "run",
)
RANK_STALLED = register_code(
    "RUN404",
    "lab-rank-stalled-outside-collective",
    "fail",
    "collective_timeout",
    "A rank was stalled outside the collective or send/recv its peers timed out in",
    "run",
)
