"""Families of collective usage and collective timeouts read at their sources, with look-alikes that stay
silent: every backend's reduce-op check (torch ProcessGroupGloo/NCCL/UCC 1.x-2.x, torch-xpu-ops' XCCL:
nccl_errors), FastMoE's numbered NCCL check (nccl_wrappers), gloo's "Application timeout caused pair
closure" without its [pair.cc:N] prefix (gloo_errors), and collective_lifecycle's rows: rabit / MPI called
after finalize (RUN378), JAX's pmap device checks (RUN379), a CUDA graph capture broken in a multi-GPU
worker (RUN380). Every variant is written from the printing source, not copied from a thread."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# -- reduce-op checks: "Cannot use ReduceOp.<OP> with <backend>" (ProcessGroupGloo.cpp, ProcessGroupNCCL.cpp
# getNcclReduceOp, ProcessGroupUCC.cpp, torch-xpu-ops ProcessGroupXCCL.cpp), and Gloo's integral check ---
REDUCE_OPS = [
    ("ValueError: Cannot use ReduceOp.PREMUL_SUM with XCCL", "RUN301", "XCCL"),
    ("RuntimeError: Cannot use ReduceOp.PREMUL_SUM with Gloo", "RUN301", "Gloo"),
    ("RuntimeError: Cannot use ReduceOp.AVG with UCC", "RUN301", "UCC"),
    ("RuntimeError: Cannot use ReduceOp.BAND with NCCL", "RUN191", None),
    ("RuntimeError: Cannot use ReduceOp.BAND with non-integral dtype", "RUN191", None),
    ("[distributed] ValueError: Cannot use ReduceOp.PREMUL_SUM with XCCL", "RUN301", "XCCL"),
]


@pytest.mark.parametrize(("line", "code", "backend"), REDUCE_OPS)
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:3])
def test_every_backends_reduce_op_check(line: str, code: str, backend: object, prefix: str) -> None:
    root = root_finding(prefixed(prefix, line))
    assert root is not None and root.code == code and root.category == "nccl_usage", root
    if backend:
        assert backend in root.facts["c10d_check"]


# -- FastMoE's NCCL check: fprintf "NCCL Error at %s:%d value %d" (its cuda/ sources, USE_NCCL=1) ----
@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("NCCL Error at /home/u/fastmoe/cuda/global_exchange.cpp:127 value 5", "nccl_usage"),
        ("NCCL Error at fastmoe/cuda/stream_manager.cpp:40 value 4", "nccl_usage"),
        ("NCCL Error at /src/fmoe/cuda/global_exchange.cpp:88 value 2", "nccl_network"),
        ("NCCL Error at /src/fmoe/cuda/global_exchange.cpp:88 value 6", "nccl_network"),
        ("NCCL Error at a.cu:3 value 3", "nccl_usage"),
    ],
)
def test_fastmoe_numbered_nccl_check(line: str, category: str) -> None:
    root = root_finding(line)
    assert root is not None and root.category == category, root
    assert root.facts["where"].endswith(line.split(" value")[0].split(" at ")[1].rsplit("/", 1)[-1])


# -- gloo tcp/pair.cc's "Application timeout caused pair closure", printed without its "[file:line] " --
@pytest.mark.parametrize(
    "log",
    [
        "Application timeout caused pair closure",
        "Rank 1 training step error: Application timeout caused pair closure\n"
        "Rank 1 training step error: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:547] "
        "Connection closed by peer [10.0.0.2]:5678",
        "RuntimeError: Application timeout caused pair closure",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Application timeout caused pair "
        "closure",
    ],
)
def test_gloo_pair_closed_on_timeout_with_or_without_its_place(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN153" and root.category == "collective_timeout", root


# -- RUN378: rabit (engine.cc, allreduce_base.cc), Open MPI (errhandler), MPICH (src/mpi/init) ---------------
AFTER_FINALIZE = [
    ("Doing rabit call after Finalize", {"framework": "rabit"}),
    (
        "[12:00:00] /xgboost/rabit/src/engine.cc:77: the rabit has not been initialized",
        {"framework": "rabit"},
    ),
    ("[12:00:00] /xgboost/rabit/src/allreduce_base.cc:116: can only call Init once", {"framework": "rabit"}),
    (
        "*** The MPI_Comm_rank() function was called after MPI_FINALIZE was invoked.\n"
        "*** This is disallowed by the MPI standard.\n*** Your MPI job will now abort.",
        {"framework": "mpi", "mpi_call": "MPI_Comm_rank"},
    ),
    (
        "*** The MPI_Allreduce() function was called after MPI_FINALIZE was invoked.",
        {"mpi_call": "MPI_Allreduce"},
    ),
    ("Attempting to use an MPI routine after finalizing MPICH", {"framework": "mpi"}),
]


@pytest.mark.parametrize(("log", "facts"), AFTER_FINALIZE)
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:4])
def test_collective_library_called_after_finalize(log: str, facts: dict[str, str], prefix: str) -> None:
    check_root(prefixed(prefix, log), "RUN378", facts)


# -- RUN379: jax/interpreters/pxla.py (0.2), jax/_src/interpreters/pxla.py (0.4), core.py / lax/parallel.py --
PMAP = [
    (
        "ValueError: On multi-host platforms, the input to pmapped functions must have leading axis size "
        "equal to the number of local devices if no `devices` argument is specified. Got axis_size=2, "
        "num_local_devices=8",
        {"axis_size": 2, "num_local_devices": 8},
    ),
    (
        "ValueError: On multi-host platforms, pmapped functions must run across all devices, i.e. "
        "num_replicas * num_partitions should equal the number of local devices. Got num_replicas=2, "
        "num_partitions=1, and num_local_devices=8",
        {"framework": "jax"},
    ),
    (
        "ValueError: Leading axis size of input to pmapped function must equal the number of local devices "
        "passed to pmap. Got axis_size=4, num_local_devices=2.",
        {"axis_size": 4, "num_local_devices": 2},
    ),
    ("NameError: unbound axis name: batch", {"axis_name": "batch"}),
    (
        "NameError: unbound axis name: i. The following axis names (e.g. defined by pmap) are available to "
        "collective operations: ['j']",
        {"axis_name": "i"},
    ),
]


@pytest.mark.parametrize(("log", "facts"), PMAP)
def test_jax_pmap_device_and_axis_checks(log: str, facts: dict[str, object]) -> None:
    check_root(log, "RUN379", facts)


# -- RUN380: cudaErrorStreamCapture* (900-908) as torch raises them, in a worker of a multi-GPU job ----------
CAPTURE_ERRORS = [
    "operation failed due to a previous error during capture",
    "operation not permitted when stream is capturing",
    "capturing stream has unjoined work",
    "operation would make the legacy stream depend on a capturing blocking stream",
]


@pytest.mark.parametrize("what", CAPTURE_ERRORS)
def test_graph_capture_broken_in_a_tensor_parallel_worker(what: str) -> None:
    log = (
        "(RayWorkerVllm pid=7) ERROR 04-28 20:50:23 ray_utils.py:44]     super().capture_end()\n"
        f"(RayWorkerVllm pid=7) ERROR 04-28 20:50:23 ray_utils.py:44] RuntimeError: CUDA error: {what}\n"
    )
    check_root(log, "RUN380", {"cuda_error": what, "worker": "RayWorkerVllm"})


def test_graph_capture_broken_by_a_collective_in_a_rank() -> None:
    log = (
        '[rank1]:   File "/vllm/distributed/device_communicators/pynccl.py", line 120, in all_reduce\n'
        "[rank1]: RuntimeError: CUDA error: operation not permitted when stream is capturing\n"
    )
    check_root(log, "RUN380", {"rank": 1})


def test_graph_capture_error_of_a_single_program_is_not_a_collective() -> None:
    root = root_finding("RuntimeError: CUDA error: operation not permitted when stream is capturing")
    assert root is None or root.code != "RUN380"


# -- look-alikes that stay silent ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "INFO: rabit Finalize done",
        "MPI_Finalize called by all ranks",
        "pmap over 8 local devices, axis_size=8",
        "INFO 04-28 20:50:23 model_runner.py:924] Graph capturing finished in 5 secs.",
        "NCCL Error at startup was handled",
    ],
)
def test_look_alikes_stay_silent(line: str) -> None:
    root = root_finding(line)
    assert root is None, root


# -- Horovod's coordinator (horovod/common/controller.cc, 0.28): every "Mismatched ..." it builds ----------
HOROVOD_MISMATCHES = [
    "Mismatched prescale and/or postscale factors: One rank sent factors (1, 0.5), but another rank sent "
    "factors (1, 0.25).",
    "Mismatched reduction operation: One rank sent reduction op 1, but another rank sent reduction op 0.",
    "Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device GPU, but another rank "
    "specified device CPU.",
    "Mismatched ALLGATHER tensor shapes: One rank sent a tensor with dimension 1 equal to 5, but another "
    "rank sent a tensor with dimension 1 equal to 6.",
    "Mismatched operations: One rank did an ALLREDUCE, but another rank did an ALLGATHER.",
    "Mismatched alltoall tensor shapes",
    "Mismatched prescale and/or postscale factors",
]


@pytest.mark.parametrize("line", HOROVOD_MISMATCHES)
def test_horovod_mismatches_in_every_wording(line: str) -> None:
    root = root_finding(line)
    assert root is not None and root.code == "RUN201" and root.category == "collective_mismatch", root


def test_a_plain_data_type_mismatch_is_not_horovods() -> None:
    assert root_finding("Mismatched data types") is None


# -- the watchdog's record of torch-xpu-ops' ProcessGroupXCCL (WorkXCCL, as WorkNCCL / WorkHCCL) -------------
def test_xccl_watchdog_record() -> None:
    check_root(
        "RuntimeError: [Rank 0] Watchdog caught collective operation timeout: WorkXCCL(SeqNum=5, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600114 milliseconds before "
        "timing out.",
        "RUN151",
        {"backend": "xccl", "seq": 5, "op": "ALLREDUCE", "timeout_ms": 600000},
    )


# -- torch.distributed.rpc's deadline (rpc/utils.cpp kRpcTimeoutErrorStr 1.6-2.x; ProcessGroupAgent 1.4) --
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: RPC ran for more than set timeout (60000 ms) and will now be marked with an error",
        "[W tensorpipe_agent.cpp:940] RPC ran for more than set timeout (60000 ms) and will now be marked "
        "with an error",
        "RuntimeError: RPC ran for more than 60000 milliseconds and timed out.",
    ],
)
def test_rpc_timeout(line: str) -> None:
    check_root(line, "RUN151", {"framework": "torch.rpc", "timeout_ms": 60000})
