"""node_devices: a framework's own count of the node's devices came up short at start-up (driver_env).

Formats, read at their sources:
- SageMaker's model-parallel library (smdistributed/modelparallel/backend/core.py, 1.x, the init status
  LOW_DEVICE_COUNT raised as WorkerSizeError): "The number of node-local MPI processes 8 cannot be larger
  than the device count 4" (some releases glue the two f-string halves: "8cannot"): the job starts more
  processes per node (processes_per_host, mpirun -N) than the node has visible GPUs (RUN264). The source line
  itself, `f"The number of node-local MPI processes {self.lib.smp_local_size()}"`, carries no numbers and
  stays silent.
- A framework's own RDMA transport that finds no InfiniBand / RoCE device and aborts (RUN645): OneFlow's
  ibverbs comm net (oneflow/core/comm_network/ibverbs/ibverbs_comm_network.cpp, glog's CHECK_GT: "Check
  failed: num_device > 0 (0 vs. 0) No IB device found"), TensorFlow 1.x's grpc+verbs server
  (tensorflow/contrib/verbs/rdma.cc, glog's CHECK: "Check failed: dev_list No InfiniBand device found"),
  Gloo's ibverbs transport (gloo/transport/ibverbs/device.cc, GLOO_THROW_INVALID_OPERATION_EXCEPTION: "No
  ibverbs devices present"). Silent: NCCL's "NET/IB : No device found." (INFO: it falls back to sockets), a
  tool's warning that falls back to Ethernet ("Warning: No infiniband device found! Falling back to
  ethernet."), a per-GPU mapping's "No IB device found for GPU 0": none of them is fatal.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SMP_LOCAL = lazy_re.compile(
    r"The number of node-local MPI processes (?P<n>\d+) ?cannot be larger than the device count (?P<d>\d+)"
)
_NO_RDMA = lazy_re.compile(
    r"Check failed: (?P<expr>[^\n]{0,80}?) ?(?:\((?P<a>\d+) vs\. (?P<b>\d+)\) )?"
    r"No (?:IB|InfiniBand|RDMA) devices? (?:was )?found(?! for)|"
    r"(?P<gloo>No ibverbs devices present)"
)


def _smp_local(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n, d = int(m.group("n")), int(m.group("d"))
    return [
        row.event(
            hit,
            f"{hit.who()}: SageMaker's model-parallel library was started with {n} processes on this node "
            f"but the node has {d} visible GPUs: start one process per GPU (processes_per_host / mpirun -N "
            f"{d}), or use an instance with {n} GPUs",
            {"framework": "smdistributed", "local_processes": n, "device_count": d},
            dedupe=(row.code, "smp_local_size"),
        )
    ]


def _no_rdma(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    expr = (m.group("expr") or "").strip()
    framework = (
        "gloo"
        if m.group("gloo")
        else "oneflow"
        if "num_device" in expr
        else "tensorflow-verbs"
        if "dev_list" in expr
        else None
    )
    facts: dict[str, Any] = {"transport": "ibverbs"}
    if framework:
        facts["framework"] = framework
    if m.group("a") is not None:
        facts["device_count"] = int(m.group("a"))
    return [
        row.event(
            hit,
            f"{hit.who()}: the framework's own RDMA transport found no InfiniBand / RoCE device on this host "
            "and aborted (no HCA, its driver not loaded, or /dev/infiniband not passed into the container): "
            "check `ibv_devices` where the job runs, pass the devices in, or turn that transport off "
            "(OneFlow's use_rdma, TensorFlow's protocol='grpc', Gloo's tcp transport)",
            facts,
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "smdistributed local processes over the device count",
        _SMP_LOCAL,
        _smp_local,
        C.DEVICE_MISMATCH.code,
        anchors=(b"node-local MPI processes",),
        worth=(rb"node-local MPI processes \d+ ?cannot be larger",),
        words=("node-local mpi processes",),
    ),
    Signature(
        "framework rdma transport without a device",
        _NO_RDMA,
        _no_rdma,
        C.RDMA_DEVICE_MISSING.code,
        anchors=(b"Check failed: ", b"No ibverbs devices present"),
        worth=(rb"Check failed: [^\n]{0,90}No (?:IB|InfiniBand|RDMA) device", rb"No ibverbs devices present"),
        words=("check failed: ", "no ibverbs devices present"),
        anchor_from="glog's 'Check failed: ' before the expression and the framework's message",
        examples=(
            "F0706 10:11:12.131415  2871 ibverbs_comm_network.cpp:125] Check failed: num_device > 0 "
            "(0 vs. 0) No IB device found",
            "F1012 08:40:03.512000 11721 rdma.cc:251] Check failed: dev_list No InfiniBand device found",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
