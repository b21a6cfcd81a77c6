"""The worker protocol: what each process of a verify or bench scaling run writes to
`<out_dir>/<reference|rankN>.json` and the parent reads back. One module, so that the writer
(common.py, parallel.py, scaling_worker.py, worker.py) and the readers (diagnosis.py, split.py,
scaling.py, batch.py) name the same fields.

Tensors never travel as JSON. The reference saves each step's gradients, parameters and
buffers (tensors.save) in the run directory (`tensor_file`); rank 0 of a data-parallel run
compares its own tensors against those files as it trains and records per tensor only a
summary (`TensorDiff`); the ranks compare their buffers with rank 0's over the process group
(`peer_diffs`). pp and tp ranks compare their own stage's tensors, or their shards against the
same slices of the reference's, the same way. Only bounded fingerprints are float lists: the
first PROBE_VALUES values of an output.
"""

from __future__ import annotations

import os
from typing import Any, Optional, TypedDict

KINDS = ("grads", "params", "buffers")


class EntryErrorRecord(TypedDict):
    message: str
    traceback: str  # the user's frames only, redacted


class _ErrorFields(TypedDict):
    type: str
    message: str
    step: int
    phase: str  # wrap | data | forward | backward | optimizer | run
    traceback: str


class ErrorRecord(_ErrorFields, total=False):
    # pgdoctor's own code raised it (entry.raised_by_pgdoctor): the worker reports a bug (exit 4),
    # never a verdict on the run; message and whole traceback as entry.internal_record gives them.
    bug: EntryErrorRecord
    at: float  # time.monotonic() in the rank when it caught the error (one clock machine-wide)


class Setup(TypedDict, total=False):
    params: list[str]  # model order
    requires_grad: dict[str, bool]
    shapes: dict[str, list[int]]
    dtype: str
    numel: int
    buffers: list[str]
    batchnorm: list[str]  # BatchNorm modules that are not SyncBatchNorm
    dropout: list[str]
    reduction: Optional[str]
    optimizer: dict[str, Any]  # the optimizer's class and its param groups' settings, as created
    init_digests: dict[str, str]  # fsdp: each parameter's digest as build() made it (nothing broadcasts it)


class TensorDiff(TypedDict, total=False):
    """One tensor of rank 0 against the reference's (or rank r's buffer against rank 0's)."""

    abs: float  # max |dist - ref| (inf: the shapes differ)
    ref_max: float  # max |ref| of that tensor
    over: int  # elements over the tolerance (data-parallel ranks: tolerance known in the rank)
    at: list[int]  # index of the largest difference (tp: within the rank's shard)
    ref: float  # the reference's value there
    dist: float  # the distributed run's value there


class StepRecord(TypedDict, total=False):
    step: int
    loss: float
    batch: int  # the rank's micro-batch size
    counted: int  # targets a mean loss with ignore_index averages over (not ignored), when it has one
    hash: str  # digest of the rank's micro-batch (inputs and targets)
    hashes: list[str]  # the reference: the digest of every rank's micro-batch, in rank order
    output: list[float]  # the first PROBE_VALUES values of the output (reference, pp, tp)
    output_parts: list[list[float]]  # reference, step 0: each rank's rows of the output, their first values
    output_part: list[float]  # data-parallel rank, step 0: the same values of its own output
    names: dict[str, list[str]]  # the reference: kind -> the tensors it saved (grads: those that got one)
    no_grad: list[str]  # parameters that require grad and got none
    scale: dict[str, float]  # the reference's max |value| over the model, per kind
    diffs: dict[str, dict[str, TensorDiff]]  # kind -> name -> against the reference (ddp/fsdp: rank 0)
    grad_dot: list[float]  # rank 0: [sum ref x dist, sum dist x dist] over the gradients
    peer_diffs: dict[str, TensorDiff]  # buffers of this rank against rank 0's that are not identical
    # step_evidence.py: the output's shape (step 0); the reference's loss gradient on rank 0's rows
    # moved by the other ranks' outputs (step 0, relative); the one factor the optimizer's step
    # multiplied this process's (local) gradients by, where there is one
    output_shape: list[int]
    loss_coupling: float
    grad_scale: float


class RankRecord(TypedDict, total=False):
    role: str  # reference | ddp | fsdp | pp | tp | scaling
    rank: int
    world: int
    pid: int
    steps: list[StepRecord]
    batches: list[int]  # micro-batch size per step, recorded before the forward (an empty one may raise)
    setup: Setup
    probe: list[float]  # a seeded forward of one fixed micro-batch (the first PROBE_VALUES values)
    loss_batch_ratio: Optional[float]  # loss(batch twice over) / loss(batch) on this rank: 2 sum, 1 mean
    error: ErrorRecord
    entry_error: EntryErrorRecord
    internal_error: EntryErrorRecord  # pgdoctor's own code raised: a bug (exit 4), whole traceback
    wall_s: float
    peak_rss_mib: float  # this process's peak resident memory (rank 0's includes the reference)
    # pp / tp
    stages: list[list[str]]
    tp_plan: dict[str, str]
    shards: dict[str, int]
    shapes: dict[str, list[int]]  # tp: the full parameters' shapes
    # bench scaling
    grad_bytes: int
    busbw_gbps: float
    latency_us: float
    buckets: Any


def new_record(role: str, rank: int, world: int) -> RankRecord:
    return {"role": role, "rank": rank, "world": world, "pid": os.getpid(), "steps": []}


def tensor_file(out_dir: str, step: int, kind: str) -> str:
    """Where the reference saves the tensors of one kind at one step (tensors.save)."""
    return os.path.join(out_dir, f"reference.step{step}.{kind}.tensors")


def steps_of(rec: RankRecord) -> list[StepRecord]:
    return rec.get("steps", [])
