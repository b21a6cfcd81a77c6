"""Families read at their sources for the v13 misses (w5, round 14a):

- torch/testing/_internal/common_distributed.py (MultiProcessTestCase._check_return_codes, 1.8-2.x): a rank
  process whose exitcode is still None at the test's timeout: "Process 0 terminated or timed out after N
  seconds" (2.x f-string and .format), "Process 1 timed out after N seconds" (1.x), "Rank 0 terminated or
  timed out after ..." (forks): RUN338;
- xla/service/rendezvous.cc (2024): "rendezvous.cc:43] Stack for thread tf_replicas/5068:" and absl frames
  ending in an xla::gpu::Nccl*Thunk: RUN151 with the collective as `op`;
- dmlc/dgl src/rpc/network/tcp_socket.cc (0.5-2.x): "Failed bind on <ip>:<port> , error: <strerror>",
  "Failed listen on socket fd: N , error: ...": RUN223 (RUN222 for "Cannot assign requested address");
- torch/distributed/elastic/agent/server/api.py: "Received 1 death signal, shutting down workers" (the agent's
  SignalException handler, Python 3.11+ formats the signal as its number) alone: RUN133 (SIGHUP);
- libtpu's multi-host start-up: "TPU initialization failed: Invalid --<hash>_slice_builder_worker_addresses
  specified. Expected 4 worker addresses, got 1.": RUN224;
- ProcessGroupNCCL's heartbeat monitor (2.3-2.6) whose store poll (TCPStore::check) failed: the store's host
  left, not a hung watchdog: never RUN152.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import prefixed
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank0]: ", "node7: ", "[1,0]<stderr>:"]

TEST_HANG = [
    ("RuntimeError: Process 0 terminated or timed out after 300.0761675834656 seconds", {"rank": 0}),
    ("RuntimeError: Process 1 timed out after 100 seconds", {"rank": 1, "timeout_s": 100.0}),
    ("RuntimeError: Rank 2 terminated or timed out after 120.5 seconds", {"rank": 2}),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "facts"), TEST_HANG)
def test_distributed_test_harness_timeout(prefix: str, line: str, facts: dict) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/testing/_internal/common_distributed.py", '
        "line 1175, in _check_return_codes\n"
        "    raise RuntimeError(\n" + line
    )
    _check(prefixed(prefix, log), "RUN338", facts)


XLA_STACK = (
    """E1002 05:16:35.729531    5068 rendezvous.cc:43] Stack for thread tf_replicas/5068:
   @      clock_gettime
   @      xla/stream_executor/cuda/cuda_driver.cc:1358 stream_executor::gpu::GpuDriver::SynchronizeStream()
   @      xla/stream_executor/stream_common.cc:148 stream_executor::StreamCommon::BlockHostUntilDone()
   @      xla/service/gpu/runtime/nccl_all_to_all_thunk.cc:313 xla::gpu::RunMemCpyAllToAll()
   @      xla/service/gpu/runtime/nccl_all_to_all_thunk.cc:189 xla::gpu::NcclAllToAllStartThunk::"""
    "RunNcclCollective()"
)


def test_xla_rendezvous_stack_dump() -> None:
    _check(XLA_STACK, "RUN151", {"op": "all-to-all", "thread": "tf_replicas/5068"})


def test_xla_rendezvous_stack_dump_all_reduce() -> None:
    log = XLA_STACK.replace("NcclAllToAllStartThunk", "NcclAllReduceStartThunk").replace(
        "RunMemCpyAllToAll", "RunAllReduce"
    )
    _check(log, "RUN151", {"op": "all-reduce"})


DGL = [
    (
        "[14:49:15] /opt/dgl/src/rpc/network/tcp_socket.cc:76: Failed bind on 10.0.0.5:34567 , "
        "error: Success",
        "RUN223",
        {"port": 34567},
    ),
    (
        "[02:11:03] /opt/dgl/src/rpc/network/tcp_socket.cc:76: Failed bind on 172.31.2.4:30050 , "
        "error: Address already in use",
        "RUN223",
        {"port": 30050},
    ),
    ("Failed listen on socket fd: 12 , error: Address already in use", "RUN223", {}),
    # DGL 0.5.x: "Failed bind on <ip>:<port> ,errno=N" then socket_communicator.cc's DGLError
    (
        "/opt/dgl/src/rpc/network/tcp_socket.cc:69: Failed bind on 10.2.3.4:3026 ,errno=99",
        "RUN222",
        {"errno": 99},
    ),
    (
        "/opt/dgl/src/rpc/network/tcp_socket.cc:69: Failed bind on 10.2.3.4:3026 ,errno=98",
        "RUN223",
        {"port": 3026},
    ),
    (
        "dgl._ffi.base.DGLError: [11:33:22] /opt/dgl/src/rpc/network/socket_communicator.cc:197: Cannot bind "
        "to 10.2.3.4:3026",
        "RUN223",
        {"port": 3026},
    ),
    (
        "[10:00:00] /opt/dgl/src/rpc/network/tcp_socket.cc:76: Failed bind on 10.1.1.9:30050 , error: Cannot "
        "assign requested address",
        "RUN222",
        {"port": 30050},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "code", "facts"), DGL)
def test_dgl_rpc_bind(prefix: str, line: str, code: str, facts: dict) -> None:
    _check(prefixed(prefix, line), code, facts)


@pytest.mark.parametrize(
    "line",
    [
        "W1229 16:43:25.650000 190834 /envs/lf/lib/python3.12/site-packages/torch/distributed/elastic/agent/"
        "server/api.py:723] Received 1 death signal, shutting down workers",
        "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers",
        "[2024-05-01 10:00:00,000] torch.distributed.elastic.agent.server.api: [WARNING] Received "
        "Signals.SIGHUP death signal, shutting down workers",
    ],
)
def test_agent_death_signal_alone(line: str) -> None:
    log = " 59%|#####     | 1663/2840 [6:59:31<4:51:53, 14.88s/it]" + line
    root = _root(log)
    assert root is not None and root.code == "RUN133", root
    assert root.facts.get("signal") == "SIGHUP", root.facts


@pytest.mark.parametrize("prefix", ["", "[rank3]: "])
def test_tpu_slice_worker_addresses(prefix: str) -> None:
    line = (
        "RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: Invalid "
        "--2a886c8_slice_builder_worker_addresses specified. Expected 4 worker addresses, got 1."
    )
    _check(prefixed(prefix, line), "RUN224", {"world_size": 4, "workers_given": 1})


def test_heartbeat_store_poll_is_not_a_hung_watchdog() -> None:
    log = "\n".join(
        [
            "frame #4: c10d::TCPStore::check(std::vector<std::string> const&) + 0x2a9 (0x7fee800d92a9 in "
            "/x/torch/lib/libtorch_cpu.so)",
            "frame #5: c10d::ProcessGroupNCCL::heartbeatMonitor() + 0x379 (0x7fee3177bad9 in "
            "/x/torch/lib/libtorch_cuda.so)",
            "frame #6: <unknown function> + 0xd8198 (0x7fef40f1c198 in /x/lib/libstdc++.so.6)",
            "",
            "[rank2]:[W729 10:15:17.529377834 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76, "
            "addr=[localhost]:60902, remote=[localhost]:29500): Connection reset by peer",
            "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:675 (most "
            "recent call first):",
        ]
    )
    root = _root(log)
    assert root is None or root.code != "RUN152", root
