"""Codes of `pgdoctor plan`; its rules over the ranked layouts are in pgdoctor.plan.findings."""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "plan"

PLAN101 = register_code(
    "PLAN101",
    "plan-does-not-fit",
    "fail",
    "capacity",
    "The planned layout does not fit in GPU memory",
    AREA,
)
PLAN102 = register_code(
    "PLAN102",
    "plan-communication-dominates",
    "warn",
    "performance",
    "Communication takes longer than computation in each step",
    AREA,
)
PLAN103 = register_code(
    "PLAN103",
    "plan-tensor-parallel-across-nodes",
    "warn",
    "performance",
    "Tensor parallelism spans more than one node",
    AREA,
)
PLAN104 = register_code(
    "PLAN104",
    "plan-pipeline-bubble-high",
    "warn",
    "performance",
    "Pipeline bubble above 20% of the step",
    AREA,
)
PLAN105 = register_code(
    "PLAN105",
    "plan-global-batch-not-divisible",
    "fail",
    "configuration",
    "Global batch is not divisible by data-parallel size x micro-batch",
    AREA,
)
PLAN106 = register_code(
    "PLAN106",
    "plan-host-memory-exceeded",
    "fail",
    "capacity",
    "Offloaded states do not fit in the nodes' host memory",
    AREA,
)
