"""Finding codes of `pgdoctor diagnose` from RUN500 on (RUN300-RUN399 are spent: run3.py, run3b.py;
RUN401-RUN409 are the lab's, checks/codes/lab.py): checks/codes/run.py re-exports every name here too,
so a rule reads all its codes as `run.X`. Categories as in run.py; the range says nothing about the
category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# --- r2 (s17): DeepSpeed ZeRO-3's runtime, framework OOM reports, interrupted launcher waits ---
# Category collective_mismatch: DeepSpeed ZeRO-3's parameter coordinator (runtime/zero/
# partitioned_param_coordinator.py, parameter_offload.py, partition_parameters.py, 0.6-0.16) found parameters
# in flight or in the wrong state against the module trace it prefetches along ("still have inflight params",
# "tracing error at step N", "AssertionError: {'id': .., 'status': 'NOT_AVAILABLE', ...}"): the modules ran
# in another order or number than the recorded trace. Remedy: stage3_prefetch_bucket_size 0, the same
# submodules every step, another DeepSpeed release, or ZeRO-2.
ZERO3_TRACE_MISMATCH = register_code(
    "RUN510",
    "zero3-trace-mismatch",
    "fail",
    "collective_mismatch",
    "DeepSpeed ZeRO-3's parameter coordinator lost track of its prefetch trace (parameters in flight or in "
    "the wrong state)",
    AREA,
)
# Category cuda_oom: DeepSpeed ZeRO-3's stage3.py step warning "N pytorch allocator cache flushes since last
# step. this happens when there is high memory pressure" (0.3-0.16): torch's caching allocator had to free
# its cache and retry allocations. Remedy: lower the micro-batch / sequence length, stage3_max_live_parameters
# or the prefetch bucket, offload, or call get_accelerator().empty_cache() on all ranks together.
GPU_MEMORY_PRESSURE = register_code(
    "RUN511",
    "gpu-memory-pressure",
    "warn",
    "cuda_oom",
    "The GPU is at its memory limit: the allocator freed its cache and retried allocations",
    AREA,
)
# Category collective_timeout: a KeyboardInterrupt (Ctrl-C) traceback of a launcher waiting on its ranks
# (torch.multiprocessing.spawn's join, torchrun's _invoke_run, torch.distributed.launch's process.wait,
# DeepSpeed's / accelerate's launchers) or of a rank waiting in a collective (distributed_c10d.py barrier,
# all_reduce, torch.cuda.synchronize): the job hung and a person stopped it. Remedy: find where the ranks
# wait (py-spy dump of every rank, NCCL_DEBUG=INFO, TORCH_DISTRIBUTED_DEBUG=DETAIL, a shorter timeout).
INTERRUPTED_WHILE_WAITING = register_code(
    "RUN512",
    "interrupted-while-waiting",
    "warn",
    "collective_timeout",
    "The job was interrupted by hand (Ctrl-C) while it waited on its ranks or in a collective: it hung",
    AREA,
)
# Category collective_mismatch: autograd's "Mismatch in shape: grad_output[0] has a shape of X and output[0]
# has a shape of Y" under a pipeline schedule (ColossalAI backward_by_grad, DeepSpeed pipe engine, Megatron
# schedules, torch.distributed.pipelining): the gradient the next stage sent back has another shape than this
# stage's output. Remedy: make the stages agree on the exchanged shapes (pad to a fixed sequence length, turn
# off the p2p shape-metadata cache, equal micro-batch sizes).
PIPELINE_SHAPE_MISMATCH = register_code(
    "RUN513",
    "pipeline-shape-mismatch",
    "fail",
    "collective_mismatch",
    "Pipeline stages exchanged tensors of different shapes (a gradient does not match its stage's output)",
    AREA,
)
