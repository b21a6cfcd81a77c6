"""Torch's own distributed failure messages, audited at their source across releases (1.8-2.7 and main):
the c10d store and sockets (TCPStore*.cpp, socket.cpp), init_process_group and its rendezvous
(distributed_c10d.py, rendezvous.py), torchelastic (elastic/rendezvous, elastic/multiprocessing), the DDP
reducer (reducer.cpp, nn/parallel/distributed.py), ProcessGroupWrapper, ProcessGroupNCCL's watchdog and
flight recorder, Work, and FSDP's setup checks. Each row is the message as a failing job prints it, the
file and releases it comes from, and the code diagnose must name first (None: a line a healthy run also
prints, which must stay silent). Every row is also run under the prefixes real logs put before it.
"""

from __future__ import annotations

from typing import Optional

import pytest

from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[default0]:"]

ROWS: list[tuple[str, Optional[str]]] = [
    # socket.cpp (2.0+; 1.10-1.13 "connect() timed out. Original timeout was N ms.")
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying "
        "to connect to (10.0.0.1, 29500).",
        "RUN222",
    ),
    (
        "RuntimeError: The client socket has timed out after 1800s "
        "while trying to connect to (node0, 29500).",
        "RUN222",
    ),
    ("RuntimeError: connect() timed out. Original timeout was 1800000 ms.", "RUN222"),
    (
        "RuntimeError: The client socket has failed to connect to any network address of (node0, 29500). The "
        "client socket has failed to connect to node0:29500 (errno: 110 - Connection timed out).",
        "RUN222",
    ),
    # socket.cpp / TCPStore.cpp bind failures (2.0+; 1.8-1.9 "Address already in use"; 2.4+ libuv)
    (
        "RuntimeError: The server socket has failed to listen on any local network address. The server "
        "socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has "
        "failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
        "RUN223",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
        "address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "RUN223",
    ),
    ("RuntimeError: Address already in use", "RUN223"),
    # TCPStore.cpp waitForWorkers (2.0+), distributed_c10d._store_based_barrier (1.8-2.2)
    (
        "torch.distributed.DistStoreError: Timed out after 901 "
        "seconds waiting for clients. 1/2 clients joined.",
        "RUN221",
    ),
    (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
        "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "RUN221",
    ),
    # TCPStore.cpp wait/get (2.1+ "wait timeout after Nms, keys: ..."; 1.x "Socket Timeout") and
    # ProcessGroupNCCL.cpp broadcastUniqueNCCLID (2.1+) wrapping them
    ("torch.distributed.DistStoreError: wait timeout after 600000ms, keys: /default_pg/0//cuda//0", "RUN222"),
    ("RuntimeError: Socket Timeout", "RUN222"),
    (
        "torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
        "RUN222",
    ),
    # socket.cpp warnings of every healthy multi-node start (1.13+; 2.4+ glog prefix)
    (
        "[W socket.cpp:426] [c10d] The server socket cannot be "
        "initialized on [::]:29500 (errno: 97 - Address "
        "family not supported by protocol).",
        None,
    ),
    (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - "
        "Cannot assign requested address).",
        None,
    ),
    (
        "[W1205 01:02:03.456789 123 torch/csrc/distributed/c10d/socket.cpp:752] [c10d] The client socket has "
        "failed to connect to [node0]:29500 (errno: 22 - Invalid argument).",
        None,
    ),
    # rendezvous.py (1.8+)
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
        "MASTER_ADDR expected, but not set",
        "RUN224",
    ),
    ("RuntimeError: No rendezvous handler for foo://", "RUN224"),
    (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "RUN224",
    ),
    # distributed_c10d.py (1.8+): a collective before init is a setup problem (RUN224); a second init is usage
    (
        "RuntimeError: Default process group has not been initialized, please make sure to call "
        "init_process_group.",
        "RUN224",
    ),
    ("RuntimeError: trying to initialize the default process group twice!", "RUN301"),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "RUN263"),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "RUN262"),
    # elastic/rendezvous/api.py, dynamic_rendezvous.py, c10d_rendezvous_backend.py (1.9+)
    ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "RUN221"),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d "
        "store has failed. See inner exception for details.",
        "RUN222",
    ),
    ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "RUN221"),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousStateError: The rendezvous state is corrupt. See "
        "inner exception for details.",
        "RUN222",
    ),
    (
        "ValueError: The rendezvous backend 'c10' is not registered. Did you forget to call `register`?",
        "RUN224",
    ),
    # elastic/multiprocessing/api.py (1.9+; 2.4+ glog-style prefix)
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1234) "
        "of binary: /usr/bin/python3",
        "RUN121",
    ),
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed "
        "(exitcode: -11) local_rank: 0 (pid: 1234) "
        "of binary: /usr/bin/python3",
        "RUN131",
    ),
    # alone, the agent's SIGTERM to the other workers still says a worker died (the log lost the rest)
    (
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1235 closing signal SIGTERM",
        "RUN133",
    ),
    (
        "W1205 01:02:03.456000 140 "
        "torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1235 "
        "closing signal SIGTERM",
        "RUN133",
    ),
    # elastic/agent/server/api.py, local_elastic_agent.py, launch.py, run.py: healthy-run lines
    (
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. "
        "Waiting 300 seconds for other agents to finish.",
        None,
    ),
    (
        "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:Local worker group finished "
        "(WorkerState.SUCCEEDED)",
        None,
    ),
    (
        "/usr/lib/python3/dist-packages/torch/distributed/launch.py:181: FutureWarning: The module "
        "torch.distributed.launch is deprecated",
        None,
    ),
    (
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
        "system being overloaded, please further tune the variable for optimal performance in your "
        "application as needed.",
        None,
    ),
    # reducer.cpp (1.8+): unused / re-used parameters are the ranks' gradients disagreeing (RUN202/RUN203)
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
        "This error indicates that your module has parameters that were not used in producing loss.",
        "RUN202",
    ),
    (
        "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the "
        "following reasons: 1) Use of a module parameter outside the `forward` function.",
        "RUN203",
    ),
    (
        "RuntimeError: Your training graph has changed in this "
        "iteration, e.g., one parameter is used in first "
        "iteration, but then got unused in the second iteration. "
        "this is not compatible with static_graph set "
        "to True.",
        "RUN202",
    ),
    # nn/parallel/distributed.py, reducer.cpp verify_params_across_processes (1.8-1.9 "params[0] ...")
    (
        "RuntimeError: DistributedDataParallel is not needed when a module doesn't have any parameter that "
        "requires a gradient.",
        "RUN301",
    ),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 10 params, while rank 1 has "
        "inconsistent 9 params.",
        "RUN201",
    ),
    (
        "RuntimeError: params[0] in this process with sizes [10, 5] appears not to match sizes of the same "
        "param in process 0.",
        "RUN201",
    ),
    (
        "[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP constructor, but did "
        "not find any unused parameters in the forward pass.",
        None,
    ),
    (
        "[W reducer.cpp:325] Warning: Grad strides do not match bucket view strides. This may indicate grad "
        "was not created according to the gradient layout contract",
        None,
    ),
    # ProcessGroupWrapper.cpp (1.10+, TORCH_DISTRIBUTED_DEBUG=DETAIL) and monitoredBarrier (ProcessGroupGloo)
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=5, OpType=ALLREDUCE, "
        "TensorShape=[10], TensorDtypes=Float), but "
        "Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=5, OpType=BROADCAST, "
        "TensorShape=[10], TensorDtypes=Float).",
        "RUN201",
    ),
    ("RuntimeError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 30000 ms", "RUN153"),
    (
        "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for "
        "send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        "RUN153",
    ),
    # ProcessGroupNCCL.cpp watchdog (1.10-2.0 "[E ProcessGroupNCCL.cpp:NNN]", 2.2+ "[PG 0 Rank 0]")
    (
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 "
        "milliseconds before timing out.",
        "RUN151",
    ),
    (
        "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, "
        "Timeout(ms)=1800000) ran for 1800452 milliseconds before timing out.",
        "RUN151",
    ),
    (
        "[rank1]:[E1205 01:02:03.456789 123 "
        "ProcessGroupNCCL.cpp:1595] [PG 0 Rank 1] Timeout at NCCL work: 3, "
        "last enqueued NCCL work: 3, last completed NCCL work: 2.",
        "RUN151",
    ),
    # heartbeat monitor (2.2+) and its stuck-watchdog text (2.4+)
    (
        "[rank0]:[E1205 01:02:03.456789 123 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed "
        "out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
        "RUN152",
    ),
    (
        "[rank3]:[E1205 01:02:03.456789 123 "
        "ProcessGroupNCCL.cpp:1424] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds "
        "without making progress in monitoring enqueued "
        "collectives.",
        "RUN152",
    ),
    # flight recorder dump chatter and shutdown warnings (2.2+): printed by healthy runs too
    (
        "[rank1]:[E1205 01:02:03.456789 123 "
        "ProcessGroupNCCL.cpp:1414] [PG 0 Rank 1] Observed flight recorder "
        "dump signal from another rank via TCPStore.",
        None,
    ),
    (
        "[rank0]:[W1205 01:02:03.456789 123 ProcessGroupNCCL.cpp:1496] Warning: WARNING: "
        "destroy_process_group() was not called before program exit, which can leak resources.",
        None,
    ),
    (
        "[rank0]:[W1205 01:02:03.456789 123 "
        "ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT "
        "been destroyed before we destruct ProcessGroupNCCL.",
        None,
    ),
    (
        "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use "
        "TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
        None,
    ),
    (
        "UserWarning: barrier(): using the device under current context. You can specify `device_id` in "
        "`init_process_group` to mute this warning.",
        None,
    ),
    # gloo unbound_buffer.cc under ProcessGroupGloo (1.8+)
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out waiting "
        "1800000ms for recv operation to complete",
        "RUN153",
    ),
    # the store's connection lost under a call (TCPStore.cpp / Utils.hpp 2.0+, "Failed to recv" 2.2+)
    ("torch.distributed.DistNetworkError: Connection reset by peer", "RUN222"),
    ("torch.distributed.DistNetworkError: Broken pipe", "RUN222"),
    (
        "torch.distributed.DistStoreError: Failed to recv, got 0 bytes. Connection was likely closed. Did "
        "the remote server shutdown or crash?",
        "RUN222",
    ),
    (
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
        "from [0] via c10d key-value store by key '0', but store->get('0') got error: Failed to recv, got 0 "
        "bytes. Connection was likely closed. Did the remote server shutdown or crash?",
        "RUN222",
    ),
    (
        "[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to "
        "(node0, 29500).",
        "RUN222",
    ),
    # launch.py (1.8-1.9): the launcher's own exception for a worker that died
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=1']' "
        "died with <Signals.SIGKILL: 9>.",
        "RUN121",
    ),
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=1']' "
        "died with <Signals.SIGSEGV: 11>.",
        "RUN131",
    ),
    # ProcessGroupGloo.cpp logAndThrow (1.10+): the logged copy of the monitored barrier's error
    (
        "[E ProcessGroupGloo.cpp:138] Rank 0 successfully reached monitoredBarrier, but received errors "
        "while waiting for send/recv from rank 1. Please check rank 1 logs for faulty rank.",
        "RUN153",
    ),
    (
        "[rank0]:[E1205 01:02:03.456789 12 torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:2965] [Rank 0]: "
        "Ranks 1, 3 failed to pass monitoredBarrier in 30000 ms",
        "RUN153",
    ),
    # ProcessGroupNCCL.cpp: the watchdog's exception and its blocking-wait twin (1.10-2.7)
    (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [PG 0 Rank 0] "
        "Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
        "ran for 600049 milliseconds before timing out.",
        "RUN151",
    ),
    (
        "[rank0]:[E1205 01:02:03.456 ProcessGroupNCCL.cpp:1606] [PG 0 Rank 0] Exception (either an error or "
        "timeout) detected by watchdog at work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4.",
        "RUN151",
    ),
    (
        "[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "RUN151",
    ),
    (
        "RuntimeError: [Rank 0] Work WorkNCCL(SeqNum=7, OpType=ALLREDUCE) timed out in blocking wait "
        "(TORCH_NCCL_BLOCKING_WAIT=1).",
        "RUN151",
    ),
    # flight recorder chatter (2.3+): follows the failure, never the cause
    (
        "[rank0]:[E1205 01:02:03.456 ProcessGroupNCCL.cpp:1606] [PG 0 Rank 0] First PG on this rank to "
        "signal dumping.",
        None,
    ),
    (
        "[rank0]:[E1205 01:02:03.456 ProcessGroupNCCL.cpp:1606] [PG 0 Rank 0] Stack trace of the failed "
        "collective not found, potentially because FlightRecorder is disabled. You can enable it by setting "
        "TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
        None,
    ),
    # ProcessGroupNCCL.cpp check_gpu_tensors (1.8+), distributed_c10d._check_single_tensor
    ("RuntimeError: Tensors must be CUDA and dense", "RUN191"),
    ("RuntimeError: Tensors must be contiguous", "RUN191"),
    # fsdp/_runtime_utils.py, _init_utils.py, _flat_param.py (2.0+)
    (
        "RuntimeError: An FSDP-managed module unexpectedly has parameters on cpu. Make sure to move the "
        "module to cuda:0 before training.",
        "RUN301",
    ),
    (
        "RuntimeError: An FSDP-managed module with parameter CPU "
        "offloading enabled has parameters on cuda:0. "
        "Make sure to not move the module from CPU when offloading parameters.",
        "RUN301",
    ),
    ("ValueError: Inconsistent compute device and `device_id` on rank 1: cuda:0 vs cuda:1", "RUN301"),
    ("RuntimeError: FSDP only supports single device modules but got params on {cuda:0, cuda:1}", "RUN301"),
    (
        "RuntimeError: FSDP does not support modules with different "
        "device types but got params on cuda and cpu",
        "RUN301",
    ),
    (
        "RuntimeError: FSDP does not support changing parameters between forward and backward for FULL_SHARD",
        "RUN301",
    ),
    (
        "ValueError: ('Manual wrapping with ShardingStrategy.HYBRID_SHARD', 'requires explicit specification "
        "of process group or device_mesh.')",
        "RUN301",
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("message,code", ROWS)
def test_torch_message_names_its_cause(prefix: str, message: str, code: Optional[str]) -> None:
    root = _root(prefix + message)
    if code is None:
        assert root is None, (message, root)
    else:
        assert root is not None and root.code == code, (message, root)


def test_fsdp_quoted_source_line_alone_is_not_the_error() -> None:
    # A traceback's quoted raise line is not the exception: only the exception line below it counts.
    assert _root('            "An FSDP-managed module unexpectedly has parameters on "') is None


def test_rendezvous_backend_names_the_backend() -> None:
    root = _root(
        "ValueError: The rendezvous backend 'etcd-v2' is not registered. Did you forget to call `register`?"
    )
    assert root is not None and root.category == "rendezvous" and "etcd-v2" in root.message


# Whole records, not single lines: 1.x TCPStore's bare socket error is the store's only under the
# store-based barrier's frames (distributed_c10d.py 1.8-1.13); torchelastic's ChildFailedError summary
# (errors/__init__.py, 1.9-2.7) carries the child's own exception from its error file, a signal, or
# nothing but the exit code.
_FAILED = (
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + "=" * 60 + "\ntrain.py FAILED\n"
    "Root Cause (first observed failure):\n[1]:\n  time      : 2024-05-01_10:11:12\n  host      : node1\n"
    "  rank      : 1 (local_rank: 1)\n"
)
RECORDS = [
    (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", '
        "line 219, in _store_based_barrier\n    worker_count = store.add(store_key, 0)\n"
        "RuntimeError: Connection reset by peer",
        "RUN222",
    ),
    (
        _FAILED + "  exitcode  : 1 (pid: 1235)\n"
        "  error_file: /tmp/torchelastic_ab12/none_cd34/attempt_0/1/error.json\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "train.py", line 50, in main\n      loss.backward()\n'
        "  torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.10 GiB of which 1.02 GiB is free.\n" + "=" * 60,
        "RUN101",
    ),
    (
        _FAILED + "  exitcode  : -6 (pid: 1235)\n  error_file: <N/A>\n"
        "  traceback : Signal 6 (SIGABRT) received by PID 1235\n" + "=" * 60,
        "RUN131",
    ),
    (
        _FAILED + "  exitcode  : 1 (pid: 1235)\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
        + "="
        * 60,
        "RUN133",
    ),
]


@pytest.mark.parametrize("log,code", RECORDS)
def test_torch_records_name_their_cause(log: str, code: str) -> None:
    root = _root(log)
    assert root is not None and root.code == code, (log[-120:], root)


def test_a_bare_socket_error_without_store_frames_stays_silent() -> None:
    # "Connection reset by peer" alone could be any socket in any program.
    assert _root("RuntimeError: Connection reset by peer") is None
