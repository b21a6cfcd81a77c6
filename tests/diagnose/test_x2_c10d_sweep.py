"""A source sweep of torch.distributed's own error strings (torch 2.13.0+cpu: `strings` on
lib/libtorch_cpu.so for c10d's C++ - ProcessGroupGloo.cpp, Work.cpp, ProcessGroup.hpp, TCPStore.cpp,
gloo's tcp/pair.cc - and the raise statements of torch/distributed/*.py): each message a failing
multi-rank job prints that the diagnosis left silent, written as a user pastes it (behind the launcher
prefixes), with the class its meaning gives; and the healthy INFO/WARNING lines of the same sources, which
stay silent. Every variant is written from the printing source, not copied from a thread."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, prefixed, root_finding

CASES = [
    # gloo tcp/pair.cc (torch 2.13's bundled gloo): a peer's buffer of another size - the ranks disagree
    (
        "RuntimeError: Received data size doesn't match expected size. Is there a distributed collective "
        "mismatch in your code?",
        "RUN201",
        "collective_mismatch",
    ),
    (
        "torch.distributed.DistBackendError: [../third_party/gloo/gloo/transport/tcp/pair.cc:461] "
        "Received data size doesn't match expected size. "
        "Is there a distributed collective mismatch in your code?",
        "RUN201",
        "collective_mismatch",
    ),
    # TCPStore.cpp's wait without its [file:line] head
    ("RuntimeError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0", "RUN222", "rendezvous"),
    # TCPStore.cpp (2.13 spelling "built"; 2.4-2.5 said "build")
    (
        "RuntimeError: use_libuv was requested but PyTorch was built without libuv support, run with "
        "USE_LIBUV=0 to disable it.",
        "RUN551",
        "driver_env",
    ),
    (
        "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv "
        "support, run with USE_LIBUV=0 to disable it.",
        "RUN551",
        "driver_env",
    ),
    # distributed_c10d.get_node_local_rank (2.6+)
    (
        "RuntimeError: LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context and want the "
        "code to run locally instead.",
        "RUN224",
        "rendezvous",
    ),
    # distributed_c10d's backend check, torch 2.4+ XCCL
    ("RuntimeError: Distributed package doesn't have XCCL built in", "RUN263", "driver_env"),
    # torch/distributed/run.py and elastic/rendezvous/*: the launcher's settings
    ('RuntimeError: nnodes=1:2:3 is not in "MIN:MAX" format', "RUN224", "rendezvous"),
    ("ValueError: Unsupported nproc_per_node value: foo", "RUN224", "rendezvous"),
    (
        "ValueError: The maximum number of nodes (1) must be greater than or equal to the minimum number of "
        "nodes (2).",
        "RUN224",
        "rendezvous",
    ),
    ("ValueError: The minimum number of nodes (0) must be greater than zero.", "RUN224", "rendezvous"),
    ("ValueError: The join timeout (-1) must be positive.", "RUN224", "rendezvous"),
    ("ValueError: The read timeout must be a positive integer.", "RUN224", "rendezvous"),
    ("ValueError: The run id must be a non-empty string.", "RUN224", "rendezvous"),
    ("ValueError: Invalid store type given. Currently only supports file and tcp.", "RUN224", "rendezvous"),
    (
        "RuntimeError: The rendezvous backend 'etcd' does not match the requested backend 'c10d'.",
        "RUN224",
        "rendezvous",
    ),
    ("ValueError: The etcd protocol must be HTTP or HTTPS.", "RUN224", "rendezvous"),
    ("RuntimeError: port number missing", "RUN224", "rendezvous"),
    ("RuntimeError: world size parameter missing", "RUN224", "rendezvous"),
    # c10d usage (RUN301): ProcessGroupGloo.cpp, Work.cpp, ProcessGroup.hpp splitGroup, distributed_c10d.py
    ("RuntimeError: ProcessGroupGloo::send takes a single tensor", "RUN301", "nccl_usage"),
    (
        "RuntimeError: Work needs to be completed before calling result(). "
        "Should call wait() before result().",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: work result does not support list of lists, use .getFuture() and value()",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: Split ranks should not have duplicates. Please provide a list of unique ranks "
        "to split the group.",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: Split ranks cannot be empty. "
        "Please provide a non-empty list of ranks to split the group.",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: the split group's size should be no larger than the world_size "
        "set by init_process_group",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: Requested device type for splitGroup is not present in the parent process group: cuda",
        "RUN301",
        "nccl_usage",
    ),
    (
        "ValueError: Rank 5 at index 0 is out of bounds for group size 4. Valid ranks are in range [0, 3].",
        "RUN301",
        "nccl_usage",
    ),
    (
        "ValueError: Duplicate rank 1 found in ranks_to_exclude at index 2. "
        "Each rank can only be excluded once.",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: Cannot access device backend for process group '2'. Ensure the process group was "
        "initialized with a compatible device backend and devices are available.",
        "RUN301",
        "nccl_usage",
    ),
    # reducer.cpp / torch/nn/parallel/distributed.py
    (
        "RuntimeError: Detected at least one parameter gradient is not the expected DDP bucket view with "
        "gradient_as_bucket_view=True. This may happen (for example) if multiple allreduce hooks were "
        "registered onto the same parameter.",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: Compiled autograd is not compatible with C++ DDP Reducer, please use "
        'torch._dynamo.config.optimize_ddp="python_reducer".',
        "RUN301",
        "nccl_usage",
    ),
    # device_mesh.py (2.2-2.13)
    (
        "RuntimeError: Mesh should not be bigger than default world size 4, but found 8 ranks!",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: DeviceMesh only support homogeneous hardware, but found 16 ranks and 3 cuda devices!",
        "RUN301",
        "nccl_usage",
    ),
    (
        "RuntimeError: mesh_shape and mesh_dim_names should have same length! Found "
        "len(mesh_dim_names): 3 and len(mesh_shape):2.",
        "RUN301",
        "nccl_usage",
    ),
    # pipelining/stage.py, schedules.py (2.4-2.13)
    ("RuntimeError: Pipeline group size 8 cannot be larger than number of stages 4", "RUN301", "nccl_usage"),
    (
        "ValueError: Number of microbatches (2) must be greater than or equal to the number of stages (4).",
        "RUN301",
        "nccl_usage",
    ),
    (
        "ValueError: Interleaved 1F1B requires the number of microbatches to be a multiple of the number of "
        "rounds (4), but got 6.",
        "RUN301",
        "nccl_usage",
    ),
    ("ValueError: ZBV requires exactly 2 stages per rank, but got 3.", "RUN301", "nccl_usage"),
]


@pytest.mark.parametrize(("line", "code", "category"), CASES)
@pytest.mark.parametrize("prefix", [*LAUNCHER_PREFIXES[:3], "[rank3]: "])
def test_c10d_source_message(line: str, code: str, category: str, prefix: str) -> None:
    root = root_finding(prefixed(prefix, line))
    assert root is not None and (root.code, root.category) == (code, category), (line, root)


@pytest.mark.parametrize(("line", "code", "category"), CASES[:3] + CASES[19:22])
def test_c10d_source_message_under_traceback(line: str, code: str, category: str) -> None:
    root = root_finding(prefixed("[rank1]: ", TRACEBACK_HEAD + line))
    assert root is not None and root.code == code, (line, root)


def test_gloo_size_mismatch_without_bytes_has_backend() -> None:
    root = root_finding(CASES[0][0])
    assert root is not None and root.facts.get("backend") == "gloo"


def test_local_rank_names_the_variable() -> None:
    root = root_finding(CASES[5][0])
    assert root is not None and root.facts.get("missing_variable") == "LOCAL_RANK"


# The same sources' healthy lines: progress and warnings a working job prints.
HEALTHY = [
    "[W1204 12:00:00.000000 123 socket.cpp:752] [c10d] The client socket has failed to connect to "
    "[node1]:29500 (errno: 111 - Connection refused).",
    "[W1204 12:00:00.000000 123 ProcessGroupGloo.cpp:760] Warning: Unable to resolve hostname to a (local) "
    "address. Using the loopback address as fallback. Manually set the network interface to bind to with "
    "GLOO_SOCKET_IFNAME. (function operator())",
    "[I1204 12:00:00.000000 123 TCPStore.cpp:312] The server has started on port = 29500.",
    "[I1204 12:00:00.000000 123 socket.cpp:888] [c10d] The client socket has connected to [node1]:29500 on "
    "SocketImpl(fd=5, addr=[node2]:40000, remote=[node1]:29500).",
    "[W1204 12:00:00.000000 123 TCPStore.cpp:320] Starting store with 1024 workers but somaxconn is 128.This "
    "might cause instability during bootstrap, consider increasing it.",
    "[I1204 12:00:00.000000 123 ProcessGroupGloo.cpp:123] Built-in communication hook ALLREDUCE "
    "is registered.",
    "[I1204 12:00:00.000000 123 debug.cpp:50] Finished writing Flight Recorder debug info to /tmp/fr_trace_0",
    "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for "
    "key:store_based_barrier_key:1 with 8 nodes.",
    "  nnodes             : 1:2",
    "The run id is job-42; the maximum number of nodes is 4.",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_c10d_lines_stay_silent(line: str) -> None:
    assert root_finding(line) is None, line
