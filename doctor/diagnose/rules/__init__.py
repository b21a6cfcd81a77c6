"""One module per failure family: turns the lines around a trigger into events with facts.

Each module exports SIGNATURES, its rows (`pgdoctor.diagnose.signature`), and `parse(hit)`.
This package is the catalogue: MODULES in the order a hit is offered to them (specific before
generic; the first module that answers wins, pyexc last), and the scanner's literal ANCHORS and
line test WORTH, built from every row, so that a line a row reads is never skipped by the scanner.
"""

from __future__ import annotations

import re

from pgdoctor.diagnose.rules import (
    accel_env,
    accel_faults,
    build_fit,
    c10d_usage,
    coordination_service,
    cuda_oom,
    desync_hints,
    desync_reports,
    device_comm_faults,
    device_visibility,
    driver_env,
    driver_stack,
    external_kills,
    framework_exits,
    fsdp_usage,
    gloo_errors,
    gpu_hardware,
    gpu_nvml,
    gpu_runtime,
    grpc_transport,
    hccl,
    hccl_rootinfo,
    horovod_rendezvous,
    host_oom,
    init_stacks,
    launch_start,
    launcher,
    loader,
    memory_trend,
    mismatch,
    model_mismatch,
    mpi_bootstrap,
    mpi_exits,
    mpi_fabric,
    mxnet_kvstore,
    nccl_errors,
    nccl_platform,
    nccl_tests,
    nccl_transport,
    nccl_wrappers,
    net_texts,
    oneccl,
    oom_layers,
    other_stacks,
    paddle_comm,
    peer_bootstrap,
    peer_waits,
    process_crash,
    pyexc,
    ray_train,
    rdzv_config,
    rdzv_values,
    remote_launch,
    rendezvous,
    rocm_runtime,
    stack_fit,
    stalled_cancel,
    store_client,
    store_errors,
    stuck_stacks,
    tf_collectives,
    timeouts,
    userspace_oom,
    vocabulary,
    worker_losses,
    workers,
    xgboost_collective,
    xla_runtime,
)
from pgdoctor.diagnose.signature import Signature, anchors_of, worth_of
from pgdoctor.model import lazy_re

# Order matters where two modules could read the same line: specific before generic.
MODULES = (
    gpu_hardware,
    gpu_nvml,
    gpu_runtime,
    rocm_runtime,
    accel_faults,
    device_comm_faults,
    hccl_rootinfo,
    hccl,
    worker_losses,
    host_oom,
    userspace_oom,
    external_kills,
    memory_trend,
    cuda_oom,
    oom_layers,
    nccl_tests,
    nccl_platform,
    nccl_transport,
    horovod_rendezvous,
    gloo_errors,
    nccl_errors,
    nccl_wrappers,
    mpi_fabric,
    mpi_exits,
    oneccl,
    other_stacks,
    xgboost_collective,
    ray_train,
    net_texts,
    peer_waits,
    stack_fit,
    driver_env,
    build_fit,
    device_visibility,
    loader,
    driver_stack,
    accel_env,
    desync_reports,
    mismatch,
    model_mismatch,
    rendezvous,
    rdzv_config,
    store_client,
    store_errors,
    rdzv_values,
    init_stacks,
    mpi_bootstrap,
    peer_bootstrap,
    remote_launch,
    launch_start,
    coordination_service,
    xla_runtime,
    tf_collectives,
    mxnet_kvstore,
    grpc_transport,
    fsdp_usage,
    c10d_usage,
    timeouts,
    paddle_comm,
    stalled_cancel,
    workers,
    framework_exits,
    process_crash,
    stuck_stacks,
    desync_hints,
    launcher,
    vocabulary,
    pyexc,
)
SIGNATURES: tuple[Signature, ...] = tuple(row for mod in MODULES for row in mod.SIGNATURES)
# The net under the families reads only the lines no family row owns.
vocabulary.bind_families(
    tuple(row for mod in MODULES if mod not in (vocabulary, pyexc) for row in mod.SIGNATURES)
)

# Literal anchors (scan.py): a line holding none of them is invisible to diagnose. They are loose on
# purpose ("rror" is in Error and error) so that one search over the bytes finds every candidate.
ANCHORS: tuple[bytes, ...] = anchors_of(SIGNATURES)
# A hit line must also match this before a window is cut around it: the anchors are loose
# ("rror" is in "val_error"), and a log that prints a metric named like that on every step must
# not spend its window budget on it. Every row's lines match its own fragments.
WORTH: re.Pattern[bytes] = lazy_re.compile(b"|".join(worth_of(SIGNATURES)))
