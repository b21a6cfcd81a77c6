"""Families of v16's dev misses in cuda_oom, process_killed and nccl_system_error, read at their sources:

- glog's failure signal handler (glog src/signalhandler.cc 0.3-0.7, DumpSignalInfo: "*** SIGSEGV (@0x0)
  received by PID N (TID 0x..) from PID 0; stack trace: ***", "*** Signal 7 (@0x..) ..." for an unnamed
  one; no "from PID" off Linux) and Abseil's (absl/debugging/failure_signal_handler.cc
  WriteSignalMessage: "*** SIGSEGV received at time=N on cpu C ***", no cpu when unknown): RUN131 (faults,
  SIGABRT), RUN133 (SIGTERM);
- MosaicML Composer's launcher (composer/cli/launcher.py 0.10.0 and 0.23.0: "Global rank %s (PID %s) exited
  with code %s"): an exit record (RUN131 for a signal, RUN133 for a code);
- subprocess.CalledProcessError's "died with <Signals.SIGSEGV: 11>." cut after the signal's name (a title);
- Ray 0.7-0.8's raylet "A worker died or was killed while executing task <id>." (RUN133);
- CuPy's memory pool (cupy/cuda/memory.pyx: v2-v6 "out of memory to allocate N bytes (total M bytes)", v7+
  "Out of memory allocating 1,024 bytes (allocated so far: 0 bytes)."), TensorFlow's executor OOM hint
  ("report_tensor_allocations_upon_oom"), the TPU compiler's "Allocation type: scoped", ROCclr's queue
  callback "HSA_STATUS_ERROR_OUT_OF_RESOURCES" (rocdevice.cpp, ROCm 6-7 "Available Free mem : N MB"), cuDNN's
  CUDNN_STATUS_NOT_INITIALIZED (tier 1), a retyped "torch.cuda.OutOfMemoryError: CUDA outof memory": RUN101;
- the kernel's mlx5_ib completion errors (drivers/infiniband/hw/mlx5/cq.c; ib_wc_status_msg texts of
  drivers/infiniband/core/verbs.c), TensorPipe's ibv transport (tensorpipe/common/ibv.h TP_THROW_SYSTEM):
  RUN173; UCX's TCP transport (uct/tcp/tcp_ep.c, ucs/sys/sock.c), NIXL's "Unexpected UCX error: <status>"
  (src/utils/ucx/ucx_utils.cpp), Open MPI's help-mpi-btl-tcp.txt "dropped inbound connection" / "server
  accept cannot find guid": RUN174.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

CASES = [
    # glog
    (
        "*** SIGSEGV (@0x0) received by PID 4242 (TID 0x7f3c2a1b4700) from PID 0; stack trace: ***",
        "RUN131",
        {"signal": "SIGSEGV", "pid": 4242},
    ),
    (
        "*** SIGBUS (@0x7f00deadbeef) received by PID 77 (TID 0x7f3c2a1b4700) from PID 77; stack trace: ***",
        "RUN131",
        {"signal": "SIGBUS", "pid": 77},
    ),
    ("*** SIGILL (@0x55d) received by PID 9 (TID 0x7f) stack trace: ***", "RUN131", {"signal": "SIGILL"}),
    (
        "*** Signal 7 (@0x7f00) received by PID 12 (TID 0x7f3c) from PID 0; stack trace: ***",
        "RUN131",
        {"signal": "SIGBUS"},
    ),
    (
        "*** SIGTERM (@0x38400000db2) received by PID 5342 (TID 0x7efe568a6700) from PID 3506; stack "
        "trace: ***",
        "RUN133",
        {"signal": "SIGTERM", "pid": 5342, "sender_pid": 3506},
    ),
    (
        "*** SIGABRT (@0x3e800001a2b) received by PID 6699 (TID 140213) from PID 6699; stack trace: ***",
        "RUN131",
        {"signal": "SIGABRT"},
    ),
    # absl
    ("*** SIGSEGV received at time=1700000000 on cpu 5 ***", "RUN131", {"signal": "SIGSEGV", "cpu": 5}),
    ("*** SIGFPE received at time=1700000000 ***", "RUN131", {"signal": "SIGFPE"}),
    ("*** Signal 7 received at time=1700000000 on cpu 1 ***", "RUN131", {"signal": "SIGBUS"}),
    # composer
    (
        "ERROR:composer.cli.launcher:Global rank 0 (PID 208865) exited with code -11",
        "RUN131",
        {"pid": 208865, "exitcode": -11},
    ),
    ("Global rank 3 (PID 4242) exited with code 1", "RUN133", {"exitcode": 1}),
    # CalledProcessError cut after the signal's name
    ("died with <Signals.SIGSEGV: 1", "RUN131", {"signal": "SIGSEGV", "exitcode": -11}),
    # Ray 0.8
    (
        "2020-03-28 18:22:59,901\tWARNING worker.py:1072 -- A worker died or was killed while executing task "
        "ffffffffffffffffeb124b350200.",
        "RUN133",
        {"reporter": "ray"},
    ),
    # OOM layers
    (
        "Exception in main training loop: out of memory to allocate 205520896 bytes (total "
        "16068929536 bytes)",
        "RUN101",
        {"reported_by": "CuPy", "requested_bytes": 205520896, "pool_total_bytes": 16068929536},
    ),
    (
        "Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,048 bytes).",
        "RUN101",
        {"reported_by": "CuPy", "requested_bytes": 1073741824},
    ),
    (
        "Hint: If you want to see a list of allocated tensors when OOM happens, add "
        "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
        "RUN101",
        {"reported_by": "TensorFlow"},
    ),
    ("  Allocation type: scoped", "RUN101", {"reported_by": "XLA"}),
    ("    Allocation type: HLO temp", "RUN101", {"reported_by": "XLA"}),
    (
        ":0:rocdevice.cpp :3671: Callback: Queue 0x7f1c Aborting with error : "
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES: "
        "The runtime failed to allocate the necessary resources. Code: 0x1008  Available Free mem : 4 MB",
        "RUN101",
        {"free_mb": 4, "hsa_status": "HSA_STATUS_ERROR_OUT_OF_RESOURCES"},
    ),
    ("CUDNN failure: CUDNN_STATUS_NOT_INITIALIZED", "RUN101", {"reported_by": "cuDNN"}),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "RUN101", {"reported_by": "cuDNN"}),
    ("torch.cuda.0utOfMemoryError: CUDA outof memory", "RUN101", {}),
    # transports
    (
        "[Wed Jul 29 14:40:27 2026] mlx5_bond_0/1: QP 51291 error: local length error (0x8e 0x0 0x0)",
        "RUN173",
        {"fabric_error": "local length error", "device": "mlx5_bond_0/1"},
    ),
    (
        "[12345.678] mlx5_0:dump_cqe:272:(pid 0): WC error: 12, Message: transport retry counter exceeded",
        "RUN173",
        {"fabric_error": "transport retry counter exceeded"},
    ),
    (
        "[1749803291.555759] [host-1:7053 :0]          tcp_ep.c:1260 UCX  ERROR tcp_ep 0x3c502370 "
        "(state=CONNECTED): send(110) failed: Input/output error",
        "RUN174",
        {"transport": "ucx_tcp", "call": "send", "error": "Input/output error"},
    ),
    (
        "[1614000000.1] [node1:4242:0]         sock.c:325  UCX  ERROR connect(fd=48, "
        "dest_addr=10.0.0.2:38811) "
        "failed: Connection refused",
        "RUN174",
        {"call": "connect", "error": "Connection refused"},
    ),
    (
        "W0613 08:28:11.555796    7053 ucx_utils.cpp:43] Unexpected UCX error: Endpoint timeout",
        "RUN174",
        {"error": "Endpoint timeout"},
    ),
    (
        'RuntimeError: In operator() at tensorpipe/common/ibv.h:172 "": Invalid argument',
        "RUN173",
        {"transport": "ibv", "error": "Invalid argument"},
    ),
    (
        "Open MPI accepted a TCP connection from what appears to be a another Open MPI process but "
        "cannot find "
        "a corresponding process entry for that peer.",
        "RUN174",
        {"problem": "inbound_peer_unknown"},
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


OMPI_INBOUND = """--------------------------------------------------------------------------
Open MPI detected an inbound MPI TCP connection request from a peer
that appears to be part of this MPI job (i.e., it identified itself as
part of this Open MPI job), but it is from an IP address that is
unexpected.  This is highly unusual.

The inbound connection has been dropped, and the peer should simply
try again with a different IP interface (i.e., the job should
hopefully be able to continue).

  Local host:          node0
  Local PID:           8136
  Peer hostname:       node1 ([[30832,1],1])
  Source IP of socket: 10.10.10.8
  Known IPs of peer:
\t10.1.102.5
--------------------------------------------------------------------------"""


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:"])
def test_open_mpi_inbound_connection_dropped(prefix: str) -> None:
    _check(
        prefixed(prefix, OMPI_INBOUND),
        "RUN174",
        {"problem": "inbound_from_unexpected_ip", "source_ip": "10.10.10.8", "host": "node0"},
    )


def test_glog_banner_behind_an_error_is_not_the_cause() -> None:
    # an NCCL error printed before the handler's record of the death leads
    log = (
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL "
        "version 2.14.3\n"
        "*** SIGABRT (@0x3e800001a2b) received by PID 6699 (TID 0x7f) from PID 6699; stack trace: ***\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN131", root


QUIET = [
    # Ray 2.x workers at a routine shutdown
    "(raylet) *** SIGTERM received at time=1700000000 on cpu 3 ***",
    "*** SIGTERM received at time=1700000000 on cpu 3 ***",
    '*** Aborted at 1626842 (unix time) try "date -d @1626842" if you are using GNU date ***',
    "Global rank 0 (PID 4242) exited with code 0",
    "QP 12 created on mlx5_0",
    "Allocation type: pinned host memory for the dataset",
]


@pytest.mark.parametrize("line", QUIET)
def test_quiet(line: str) -> None:
    assert _root(line + "\n") is None
