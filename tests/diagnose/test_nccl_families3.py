"""NCCL network, internal/usage and timeout families read at their sources, with the prefixes real logs
put before them (torchrun's [rankN]: / [defaultN]:, mpirun's [1,0]<stderr>:, timestamps, host names):

- ncclResult by its number alone ("NCCL error 2", "ncclResult 7", "NCCL Error 8") and the texts
  ncclGetErrorString gives results it has no name for ("unknown result code", torch's "Unknown NCCL error!")
  or that torch's blocking check does not expect ("NCCL operation in progress": a non-blocking communicator);
- non-blocking communicators that did not come up (NCCLUtils.cpp "NCCL timeout in communicator
  initialization.", C10D_CHECK_TIMEOUT's "NCCL timeout in: <file>:<line>", cuda/nccl.cpp's "NCCL timeout when
  waiting for nonblocking call to become successful.") and Work::wait's "Operation timed out!" (Work.cpp 2.x,
  ProcessGroup.cpp 1.x, ProcessGroupGloo);
- NCCL WARN sites of the socket, NET/IB and proxy paths 2.4-2.29 (async fatal events, proxy calls, accept
  failures, connections that are not NCCL's), torch's internal error whose Last error is a NET/IB completion;
- bootstrap.cc's size check ("Message truncated : received", its own exchange: an internal error), unlike the
  transports' ("receiving ... instead of" / "collective mismatch error": the program's collectives);
- two ranks' watchdogs stuck at different SeqNums where one had completed the other's work (a desync);
- precedence: a network error or a timeout on one rank after another rank died of an OOM, a crash or a kill.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

PREFIXES = ["", "[rank1]: ", "[default0]:", "[1,0]<stderr>:", "2024-05-01T10:00:00.123Z ", "node-3: "]


def _prefixed(prefix: str, log: str) -> str:
    return "".join(prefix + ln + "\n" for ln in log.splitlines())


# (log, code, facts the root finding must carry)
CASES: list[tuple[str, str, dict[str, Any]]] = [
    # ncclResult by number, no text (old wrappers' own CHECK macros)
    ("RuntimeError: NCCL error 2", "RUN171", {"nccl_result": 2}),
    ("RuntimeError: NCCL Error 3", "RUN192", {"nccl_result": 3}),
    ("RuntimeError: ncclResult 6", "RUN172", {"nccl_result": 6}),
    ("RuntimeError: NCCL Error 7", "RUN191", {"nccl_result": 7, "likely_cause": "nonblocking_comm"}),
    ("RuntimeError: ncclResult_t: 7", "RUN191", {"nccl_result": 7}),
    ("RuntimeError: NCCL error 8", "RUN151", {"nccl_result": 8}),
    # programs' own CHECK macros: the file, the line and ncclGetErrorString's text
    (
        "NCCL err main.cu:42: invalid usage (run with NCCL_DEBUG=WARN for details)",
        "RUN191",
        {"where": "main.cu:42"},
    ),
    (
        "NCCL err /src/app/comm.cu:118 internal error - please report this issue to the NCCL developers",
        "RUN192",
        {},
    ),
    ("NCCL error at comm.cpp:77: invalid argument (run with NCCL_DEBUG=WARN for details)", "RUN191", {}),
    (
        "Failed: NCCL error test.cu:30 'unhandled system error (run with NCCL_DEBUG=INFO for details)'",
        "RUN171",
        {},
    ),
    # ncclGetErrorString texts
    (
        "RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unknown result code, NCCL version 2.17.1\nUnknown NCCL error!",
        "RUN192",
        {"nccl_version": "2.17.1"},
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:76, NCCL operation in progress, NCCL version 2.18.1",
        "RUN191",
        {"nccl_error": "nccl operation in progress"},
    ),
    (
        "RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:121, internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\n"
        "ncclInternalError: Internal check failed.\n"
        "Last error:\n"
        "NET/IB : Got completion from peer 10.0.0.5<33021> with status=IBV_WC_REMOTE_ACCESS_ERR(10) opcode=0 len=0 vendor err 136 (Recv) localGid ::ffff:10.0.0.4 remoteGids::ffff:10.0.0.5 hca mlx5_2",
        "RUN173",
        {"ib_status": "IBV_WC_REMOTE_ACCESS_ERR", "ib_device": "mlx5_2"},
    ),
    # non-blocking communicators
    (
        "torch.distributed.DistBackendError: NCCL timeout in communicator initialization.",
        "RUN151",
        {"phase": "communicator_init", "nonblocking": True},
    ),
    (
        "torch.distributed.DistBackendError: NCCL timeout in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2107",
        "RUN151",
        {"where": "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2107"},
    ),
    (
        "RuntimeError: NCCL timeout when waiting for nonblocking call to become successful.",
        "RUN151",
        {"phase": "nccl_call"},
    ),
    (
        "RuntimeError: NCCL communicator was aborted on rank 2. Original reason for failure was: NCCL timeout in communicator initialization.",
        "RUN151",
        {"phase": "communicator_init"},
    ),
    # Work::wait(timeout)
    (
        "RuntimeError: [../torch/csrc/distributed/c10d/Work.cpp:84] Operation timed out!",
        "RUN151",
        {"mode": "work_wait", "where": "Work.cpp:84"},
    ),
    (
        "RuntimeError: [/pytorch/torch/lib/c10d/ProcessGroup.cpp:70] Operation timed out!",
        "RUN151",
        {"where": "ProcessGroup.cpp:70"},
    ),
    (
        "RuntimeError: [../torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:142] Operation timed out!",
        "RUN153",
        {"backend": "gloo"},
    ),
    (
        '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 3421, in barrier\n'
        "    work.wait()\n"
        "RuntimeError: Operation timed out!",
        "RUN151",
        {"mode": "work_wait"},
    ),
    # NCCL WARN sites of the socket / NET/IB / proxy paths
    (
        "gpu-node-3:81234:81299 [2] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_2:1 Got async event : port error",
        "RUN173",
        {"ib_device": "mlx5_2:1"},
    ),
    (
        "[2024-09-01 10:00:00] gpu-node-3:81234:81299 [2] transport/net_ib.cc:140 NCCL WARN NET/IB : mlx5_2:1 async fatal event: local catastrophic error",
        "RUN173",
        {},
    ),
    (
        "gpu-node-3:81234:81299 [2] transport/net_ib.cc:152 NCCL WARN NET/IB : mlx5_2:1 async fatal event on QP (0x55d1c8a0b2c0): QP fatal error",
        "RUN173",
        {},
    ),
    (
        "gpu-node-3:81234:81299 [2] transport/net_ib.cc:111 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)",
        "RUN173",
        {},
    ),
    (
        "gpu-node-3:81234:81299 [2] proxy.cc:1006 NCCL WARN Proxy Call to rank 7 failed (Setup)",
        "RUN174",
        {"peer_rank": 7},
    ),
    (
        "gpu-node-3:81234:81299 [2] proxy.cc:1291 NCCL WARN [Service thread] Could not receive type from localRank 3",
        "RUN174",
        {"peer_local_rank": 3},
    ),
    (
        "gpu-node-3:81234:81299 [2] misc/socket.cc:570 NCCL WARN socketTryAccept: get errno 24 that is not EAGAIN or EWOULDBLOCK",
        "RUN174",
        {},
    ),
    (
        "gpu-node-3:81234:81299 [2] misc/socket.cc:591 NCCL WARN socketPollConnect: connect to 10.1.2.3<40915> failed : Connection refused",
        "RUN174",
        {"peer": "10.1.2.3", "peer_port": 40915},
    ),
    (
        "gpu-node-3:81234:81299 [2] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to recv from 10.1.2.3<40915> failed : Connection reset by peer",
        "RUN174",
        {"peer": "10.1.2.3"},
    ),
    (
        "gpu-node-3:81234:81299 [2] misc/ibvwrap.cc:252 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out, errno 110",
        "RUN173",
        {},
    ),
    # gloo's transports and stores (third_party/gloo, 2018-2025): the ibverbs transport's deadlines are timeouts
    # like the tcp transport's; the stores' "Wait timeout" is the rendezvous that other ranks never reached
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/ibverbs/unbound_buffer.cc:138] Timed out waiting 1800000ms for recv operation to complete",
        "RUN153",
        {"transport": "ibverbs"},
    ),
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/ibverbs/pair.cc:265] Timeout waiting for memory region from [10.0.0.2]:1234",
        "RUN153",
        {},
    ),
    (
        "RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/buffer.cc:72] Read timeout [10.0.0.2]:40521",
        "RUN153",
        {},
    ),
    (
        'RuntimeError: [../third_party/gloo/gloo/rendezvous/file_store.cc:152] Wait timeout for key(s): ["rank_1"]',
        "RUN221",
        {"store_keys": '["rank_1"]'},
    ),
    ("RuntimeError: [/pytorch/torch/lib/c10d/FileStore.cpp:336] Wait timeout", "RUN221", {}),
    (
        '  File "/home/u/anaconda3/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 283, in init_process_group\n'
        "    _default_pg = ProcessGroupGloo(store, rank, world_size)\n"
        "RuntimeError: Wait timeout",
        "RUN221",
        {},
    ),
    # NCCL 2.4's init.cc mismatch check and ring checks; the P2P transport's CUDA calls
    (
        "node1:1234:1290 [0] init.cc:1256 NCCL WARN Your program may be hanging, this may be caused by a collective mismatch around rank 3. Please check your collective calls at and around this rank. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
        "RUN201",
        {"suspect_rank": 3},
    ),
    ("node1:1234:1290 [0] init.cc:380 NCCL WARN Error : ring 0 does not contain rank 3", "RUN192", {}),
    (
        "node1:1234:1290 [0] transport/p2p.cc:190 NCCL WARN rank 1 failed to get CUDA IPC handle to device 0(=0) : 201 invalid device context",
        "RUN194",
        {"cuda_error": "invalid device context", "cuda_error_code": 201},
    ),
    (
        "node1:1234:1290 [0] transport/p2p.cc:120 NCCL WARN cudaIpcGetMemHandle failed : invalid argument",
        "RUN292",  # CUDA IPC refused between the ranks' GPUs (rules/nccl_platform.py p2p_ipc)
        {},
    ),
    # libfabric's EFA provider failing a completion under aws-ofi-nccl
    (
        "libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65 Peer EFA addr: fi_addr_efa://[fe80::b8:aff:fe44:425]:0:947699476 Peer host id: i-0ce6d3d57139f053c (7)",
        "RUN173",
        {"provider": "efa", "fi_error": 5, "provider_error": 7, "fi_message": "Invalid address"},
    ),
    # bootstrap.cc's own size check: an internal error, not the program's collectives
    (
        "compute-st-p4de24xlarge-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4\n"
        "compute-st-p4de24xlarge-2:4827:6900 [4] NCCL INFO bootstrap.cc:554 -> 3\n"
        "compute-st-p4de24xlarge-2:4827:6900 [4] NCCL INFO transport.cc:204 -> 3",
        "RUN192",
        {"bytes": 256, "expected_bytes": 4, "nccl_check": "bootstrap_size"},
    ),
    (
        "gpu1:100:200 [0] bootstrap.cc:236 NCCL WARN Message truncated : received 8,16 bytes instead of 4,16",
        "RUN192",
        {"bytes": 8, "expected_bytes": 4},
    ),
    (
        'env1 with ngctorch24:03 (nccl 2.20.5) failed with "Message truncated : received 1024 bytes instead of 256"',
        "RUN192",
        {"bytes": 1024},
    ),
    # ... while the transports' size checks stay the program's collectives
    (
        "gpu-node-3:81234:81299 [2] transport/net_socket.cc:488 NCCL WARN NET/Socket : peer 10.0.5.194<41988> message truncated : receiving 4 bytes instead of 2. If you believe your socket network is in healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
        "RUN201",
        {"bytes": 4, "expected_bytes": 2},
    ),
    (
        "gpu-node-3:81234:81299 [2] transport/net_ib.cc:1081 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.0.0.6<58683> collective mismatch error, local size 496640 remote size 65536",
        "RUN201",
        {},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_family_root(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    check_root(_prefixed(prefix, log), code, facts)


# The same records as JSON log records (Ray, vLLM, Kubernetes loggers): escaped newlines and quotes, the
# record cut off before its end.
JSON_CASES = [
    (
        '{"level": "ERROR", "logger": "ray.train", "message": "Traceback (most recent call last):\\n  File \\"/app/train.py\\", line 88, in train_func\\n    dist.barrier()\\ntorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \\nLast error:\\nsocketStartConnect: Connect to 10.0.0.2<35617> failed : Connection refus',
        "RUN171",
    ),
    (
        '{"severity":"ERROR","msg":"worker failed","error":"RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:121, internal error - please report this issue to the NCCL developers, NCCL version 2.18.1\\nncclInternalError: Internal check failed.\\nLast error:\\nNET/IB : Got completion from peer 10.0.0.5<33021> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.4 remoteGids::ffff:10.0.0.5 hca mlx5_2\\"}',
        "RUN173",
    ),
    (
        '{"message": "RuntimeError: [../torch/csrc/distributed/c10d/Work.cpp:84] Operation timed out!\\n", "level": "error"}',
        "RUN151",
    ),
    (
        '{"py_callstack": "Traceback (most recent call last):\\n  File \\"train.py\\", line 20, in main\\n    dist.all_reduce(t)\\ntorch.distributed.DistBackendError: NCCL timeout in communicator initialization.\\n", "timestamp": "1712345678"}',
        "RUN151",
    ),
]


@pytest.mark.parametrize(("log", "code"), JSON_CASES)
def test_json_escaped_records(log: str, code: str) -> None:
    check_root(log + "\n", code)


# Watchdog records of two ranks of one group at different SeqNums, where the later rank had completed the
# earlier one's work and the one after it: the ranks' collectives were matched out of order.
CROSSED = (
    "[rank0]:[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=_REDUCE_SCATTER_BASE, NumelIn=106343680, NumelOut=53171840, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.\n"
    "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank1]:[E1122 06:40:01.902604829 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=126, OpType=_ALLGATHER_BASE, NumelIn=378702080, NumelOut=757404160, Timeout(ms)=600000) ran for 600079 milliseconds before timing out.\n"
    "[rank1]:[E1122 06:40:01.903028278 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 126, last enqueued NCCL work: 128, last completed NCCL work: 125.\n"
)
# 2.5+ words the sequence line "failure detected by watchdog at work sequence id: N PG status: ...".
CROSSED_25 = (
    "[rank2]:[E227 23:07:54.322446753 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=700, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=1800000) ran for 1800034 milliseconds before timing out.\n"
    "[rank2]:[E227 23:07:54.322713545 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 700 PG status: last enqueued work: 703, last completed work: 699\n"
    "[rank5]:[E227 23:07:54.323599416 ProcessGroupNCCL.cpp:629] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=709, OpType=BROADCAST, NumelIn=4096, NumelOut=4096, Timeout(ms)=1800000) ran for 1800060 milliseconds before timing out.\n"
    "[rank5]:[E227 23:07:54.323727781 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 5]  failure detected by watchdog at work sequence id: 709 PG status: last enqueued work: 712, last completed work: 708\n"
)
# One work apart (rank 0 completed the work rank 1 is stuck in, and nothing after it): reported, and labelled
# by the real-log corpus, as the timeout it is (a rank that left the loop first).
ONE_APART = (
    "[rank1]:[E1030 03:19:32.584828663 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=215121, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.\n"
    "[rank1]:[E1030 03:19:32.585495736 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 215121, last enqueued NCCL work: 215121, last completed NCCL work: 215120.\n"
    "[rank0]:[E1030 03:19:32.598350807 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=215122, OpType=BROADCAST, NumelIn=2149508, NumelOut=2149508, Timeout(ms)=600000) ran for 600093 milliseconds before timing out.\n"
    "[rank0]:[E1030 03:19:32.599256168 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 215122, last enqueued NCCL work: 215122, last completed NCCL work: 215121.\n"
)
# Both ranks stuck at one SeqNum (one rank late): a timeout.
SAME_SEQ = (
    "[rank0]:[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.\n"
    "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 122, last completed NCCL work: 121.\n"
    "[rank1]:[E1122 06:40:01.902604829 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600079 milliseconds before timing out.\n"
    "[rank1]:[E1122 06:40:01.903028278 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 125, last completed NCCL work: 121.\n"
)


# Two ranks stuck in two different groups: their SeqNums are unrelated.
TWO_GROUPS = (
    "[rank0]:[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=ALLREDUCE, NumelIn=10, NumelOut=10, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.\n"
    "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 122, last completed NCCL work: 121.\n"
    "[rank1]:[E1122 06:40:01.902604829 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3000, OpType=ALLGATHER, NumelIn=10, NumelOut=20, Timeout(ms)=600000) ran for 600079 milliseconds before timing out.\n"
    "[rank1]:[E1122 06:40:01.903028278 ProcessGroupNCCL.cpp:1785] [PG ID 3 PG GUID 3 Rank 1] Exception (either an error or timeout) detected by watchdog at work: 3000, last enqueued NCCL work: 3001, last completed NCCL work: 2999.\n"
)


def test_crossed_seqnums_are_a_desync() -> None:
    check_root(CROSSED, "RUN201", {"kind": "watchdog_crossed", "seq_by_rank": {"0": 122, "1": 126}})
    check_root(CROSSED_25, "RUN201", {"ops_by_rank": {"2": "ALLREDUCE", "5": "BROADCAST"}})
    found = failure_findings(CROSSED)
    assert [f.code for f in found][:2] == ["RUN201", "RUN151"], [f.code for f in found]


@pytest.mark.parametrize("log", [ONE_APART, SAME_SEQ, TWO_GROUPS])
def test_late_rank_stays_a_timeout(log: str) -> None:
    check_root(log, "RUN151")


OOM_RANK1 = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.02 GiB is free."
# (log, the root's code): a network error or a timeout on rank 0 after rank 1 died, in either file order.
PRECEDENCE = [
    (
        "[rank0]:[E1001 10:00:05.000000 ProcessGroupNCCL.cpp:1500] [PG 0 Rank 0] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3\n"
        "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "[rank0]: Last error:\n"
        "[rank0]: socketProgress: Connection closed by remote peer node-2<49024>\n" + OOM_RANK1,
        "RUN101",
    ),
    (
        OOM_RANK1
        + "\n[rank0]:[E1001 10:30:05.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=1800000) ran for 1800021 milliseconds before timing out.",
        "RUN101",
    ),
    (
        "[rank0]:[E1001 10:30:05.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=1800000) ran for 1800021 milliseconds before timing out.\n"
        + OOM_RANK1,
        "RUN101",
    ),
    (
        "node-1:4321:4399 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node-2<49024>\n"
        "node-1:4321:4399 [0] NCCL INFO misc/socket.cc:752 -> 6\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.20.5\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "Last error:\n"
        "socketProgress: Connection closed by remote peer node-2<49024>\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4322 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 4322) of binary: /usr/bin/python3",
        "RUN121",
    ),
    (
        "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:29512\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2024-05-01_10:00:00\n"
        "  host      : node-2\n"
        "  rank      : 1 (local_rank: 1)\n"
        "  exitcode  : -11 (pid: 4322)\n"
        "  error_file: <N/A>\n"
        "  traceback : Signal 11 (SIGSEGV) received by PID 4322\n"
        "============================================================",
        "RUN131",
    ),
    (
        "[rank0]: torch.distributed.DistBackendError: NCCL timeout in communicator initialization.\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 23.65 GiB of which 3.06 MiB is free.",
        "RUN101",
    ),
    (
        "[rank0]: RuntimeError: [../torch/csrc/distributed/c10d/Work.cpp:84] Operation timed out!\n"
        + OOM_RANK1,
        "RUN101",
    ),
    # a bare unhandled system error (NCCL < 2.13 had no ncclRemoteError for a peer that exited) next to another
    # rank's OOM, SIGKILL or segfault: that death
    (
        "[rank0]: RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n"
        "[rank1]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total capacity; 13.02 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)",
        "RUN101",
    ),
    (
        "[rank0]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "[rank0]: Last error:\n"
        "[rank0]: socketProgress: Connection reset by peer\n" + OOM_RANK1,
        "RUN101",
    ),
    (
        "[rank0]: RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4321 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 4322) of binary: /usr/bin/python3",
        "RUN121",
    ),
    (
        "[rank0]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3\n"
        "[rank1]: Fatal Python error: Segmentation fault",
        "RUN131",
    ),
    # torch's "Last error: Unknown NCCL Error" (ncclGetLastError had nothing) is no detail of its own
    (
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "[rank0]: Last error: Unknown NCCL Error\n" + OOM_RANK1,
        "RUN101",
    ),
    (
        "libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address (7)\n"
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total capacity of 79.10 GiB of which 1.02 GiB is free.",
        "RUN101",
    ),
    # NET/IB's retries exhausted on the peer of a rank that died of an OOM: the OOM, whatever the order
    (
        "[1,0]<stderr>:node-1:4321:4399 [0] transport/net_ib.cc:788 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43251> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=0 len=0 vendor err 129 (Send)\n"
        "[1,1]<stderr>:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.10 GiB total capacity; 77.02 GiB already allocated; 1.02 GiB free; 77.50 GiB reserved in total by PyTorch)",
        "RUN101",
    ),
    (
        "2024-05-01T10:00:01Z [default0]:[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.20.5\n"
        "2024-05-01T10:00:01Z [default0]:[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "2024-05-01T10:00:00Z [default1]:[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.02 GiB is free.",
        "RUN101",
    ),
]


@pytest.mark.parametrize(("log", "code"), PRECEDENCE)
def test_the_death_leads_its_echoes(log: str, code: str) -> None:
    check_root(log + "\n", code)


def test_a_system_error_with_a_cause_of_its_own_keeps_the_lead() -> None:
    # /dev/shm too small is this rank's own failure, whatever another rank died of afterwards
    log = (
        "[rank0]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "[rank0]: Last error:\n"
        "[rank0]: Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)\n"
        "[rank1]: Fatal Python error: Aborted\n"
    )
    check_root(log, "RUN171", {"likely_cause": "shared_memory"})


def test_ib_retries_alone_stay_the_fabric() -> None:
    # both hosts' proxies give up on each other and a teardown CUDA failure follows: the fabric is the cause
    log = (
        "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129\n"
        "gpu5:35917:35994 [0] NCCL INFO include/net.h:34 -> 2\n"
        "gpu4:35902:35977 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129\n"
        "gpu4:35902:35977 [0] NCCL INFO include/net.h:34 -> 2\n"
    )
    check_root(log, "RUN173")


DECOYS = [
    "RuntimeError: Operation timed out!\n",
    "RuntimeError: Wait timeout\n",
    "requests.exceptions.ReadTimeout: Operation timed out!\n",
    "We hit NCCL error 2.18 times a week, any idea?\n",
    "node-1:1:2 [0] NCCL INFO ncclResult 0\n",
    "gpu-node-3:81234:81299 [2] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : GID table change\n",
    "gpu-node-3:81234:81299 [2] NCCL INFO NET/IB : No device found.\n",
    "the message was truncated: received 100 bytes of the download instead of 200\n",
    # the heartbeat monitor polling rank 0's store after rank 0 exited (also at the end of a healthy run)
    '[rank10]:[W305 10:17:38.040221001 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 10] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Broken pipe\n'
    "[rank15]:[W305 10:17:38.404745404 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=102, addr=node8:33978, remote=10.99.91.59:5000): Broken pipe\n",
    '(WorkerDict pid=26110) [rank7]:[W1120 01:13:20.892421310 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0(default_pg) Rank 7] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer [repeated 5x across cluster]\n',
    '[rank3]:[W322 13:52:50.468051515 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0(default_pg) Rank 3] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?\n',
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_are_silent(log: str) -> None:
    assert root_finding(log) is None, failure_findings(log)


GARBAGE = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory."


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_garbage_allocation_size_is_no_full_gpu(prefix: str) -> None:
    # alone: the collective whose size came back garbage (the allocator's >= 1 EiB refusal)
    check_root(_prefixed(prefix, GARBAGE), "RUN151", {"garbage_size": True})


def test_a_garbage_allocation_size_yields_to_what_is_shown() -> None:
    timeout = (
        "[rank0]:[E1001 10:30:05.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800021 milliseconds before timing out.\n"
        "[rank0]: " + GARBAGE + "\n"
    )
    check_root(timeout, "RUN151", {"seq": 88, "op": "BROADCAST"})
    check_root(OOM_RANK1 + "\n[rank0]: " + GARBAGE + "\n", "RUN101")
