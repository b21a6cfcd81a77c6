"""The failure lab: small real distributed training runs (DDP, pipeline-, tensor-parallel) that
fail or degrade in one named way, instrumented with pgdoctor ranges, and diagnosed.

Modules: spec (what to run), faults (how a rank fails), ddp / pp / tp (the strategies),
worker (one rank: `python -m pgdoctor.lab.worker SPEC`), launch (start the ranks, gather
what they left), imbalance (trace analysis), diagnosis (findings of a run).
Nothing here imports torch at import time except the worker and the strategy modules,
which only rank processes import.
"""

from __future__ import annotations

FAULTS = ("oom", "timeout", "imbalance")
STRATEGIES = ("ddp", "pp", "tp")
