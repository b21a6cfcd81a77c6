"""r2's source sweep (2026-12-07): the failure messages of PyTorch's distributed layer, rendered as real logs
show them, with the class an engineer would name (or silence for what is no failure, or says too little
alone).

Sources read: c10d socket.cpp (1.11-2.9: connect, listen, bind, name lookups), TCPStore.cpp (waitForWorkers,
doWait's "Socket Timeout", the responses it expects), TCPStoreLibUvBackend.cpp (bind/listen/accept in libuv's
words, its records of a client that left), distributed_c10d.py and rendezvous.py (env://, tcp://, file://
errors, the store-based barrier), ProcessGroupNCCL.cpp (watchdog, blocking wait, heartbeat monitor and its
exit messages 2.2-2.5, the NCCLABORTEDCOMM store key of 1.8-1.12, the GIL check on exit, the debug-dump
records), ProcessGroupGloo.cpp (monitoredBarrier, connectFullMesh), ProcessGroupWrapper.cpp (fingerprint
mismatch), reducer.cpp and logger.cpp, torch.distributed.elastic (dynamic_rendezvous.py,
c10d_rendezvous_backend.py, etcd_*, agent/server/api.py, multiprocessing/api.py and errors/), the 1.x
launch.py, and gloo's own enforce and transport messages (context.cc, rendezvous/*.cc, transport/tcp).
Messages read: about 330 rendered lines; kept here 158 whose wording the sources print (106 failures, 52 no
failure or too little alone; the others were guesses at wordings the sources do not print, left out). Before
the sweep's rows, 10 of the 106 failures were silent and 4 got another class (the store-init timeout in a
person's words as a collective timeout, RedisStore's connect and the libuv accept as network faults), and 2 of
the 52 silent ones were read as network faults (the libuv server's records of a client that left); after: 0.

Families added (rows in existing modules, existing codes):
- the heartbeat monitor's exit after a timeout, every variant ("ProcessGroupNCCL's watchdog detected a
  collective timeout [from ...] and notified [the] current rank", "... a dump signal from rank N ...",
  the vendors' ProcessGroupHCCL copies), the GIL check on exit, 1.x's NCCLABORTEDCOMM key
  (torch_cuda_texts.py, RUN151/RUN152 at tier 2);
- "Timed out initializing process group" in any words (rdzv_init.py, RUN221);
- the libuv store's accept failure in libuv's words (c10d_socket.py, RUN222) and its records of a client
  that left, owned silently (c10d_socket.py);
- gloo's own meeting: context.cc's rank/size checks (RUN224), RedisStore's connect (RUN222), a backing
  context not fully connected (RUN221) (gloo_rendezvous.py).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LINE_PREFIXES, root_category, root_finding

KILLED = ("host_oom", "process_crash")  # the corpus' process_killed class

# (message as a log shows it, the class it must get)
FAILURES: list[tuple[str, object]] = [
    # --- socket.cpp / TCPStore.cpp / TCPStoreLibUvBackend.cpp: the store's server and clients
    (
        "[W socket.cpp:436] [c10d] The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use).",
        "rendezvous",
    ),
    (
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
        "rendezvous",
    ),
    (
        "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.",
        "rendezvous",
    ),
    (
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to bind. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous",
    ),
    (
        "RuntimeError: The client socket has timed out after 1800s while trying to connect to (10.0.0.1, 29500).",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (127.0.0.1, 29500).",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of (node1, 29500).",
        "rendezvous",
    ),
    (
        "[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to (10.1.2.3, 29500).",
        "rendezvous",
    ),
    (
        "RuntimeError: The client socket has failed to connect to any network address of (gpu-node-0, 29500). The client socket has failed to connect to [gpu-node-0]:29500 (errno: 113 - No route to host).",
        "rendezvous",
    ),
    (
        "[W socket.cpp:697] [c10d] The IPv4 network addresses of (node-0, 29500) cannot be retrieved (gai error: -3 - Temporary failure in name resolution).",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
        "rendezvous",
    ),
    ("RuntimeError: connect() timed out. Original timeout was 1800000 ms.", "rendezvous"),
    ("RuntimeError: Socket Timeout", "rendezvous"),
    ("torch.distributed.DistStoreError: Socket Timeout", "rendezvous"),
    ("RuntimeError: Stop_waiting response is expected", "rendezvous"),
    ("RuntimeError: wait_canceled response is expected", "rendezvous"),
    (
        "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0",
        "rendezvous",
    ),
    (
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.",
        "rendezvous",
    ),
    (
        "[W1203 12:00:00.123456789 TCPStoreLibUvBackend.cpp:1090] [c10d] Failed to accept client due to Failed to accept socket. code: -24, name: EMFILE, message: too many open files",
        "rendezvous",
    ),
    (
        "torch.distributed.DistNetworkError: Failed to accept socket. code: -103, name: ECONNABORTED, message: software caused connection abort",
        "rendezvous",
    ),
    ("RuntimeError: use_libuv was requested but PyTorch was build without libuv support", "driver_env"),
    # --- distributed_c10d.py / rendezvous.py: init_process_group and its meeting
    (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "rendezvous",
    ),
    (
        "torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 3, for key: store_based_barrier_key:1 (world_size=8, num_workers_joined=7, timeout=0:30:00 error=Wait timeout)",
        "rendezvous",
    ),
    ("RuntimeError: Timed out initializing process group with --num_nodes=2 in DeepSpeed", "rendezvous"),
    ("timed out initializing process group when using 2 nodes", "rendezvous"),
    (
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
        "rendezvous",
    ),
    (
        "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        "rendezvous",
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but not set",
        "rendezvous",
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
        "rendezvous",
    ),
    (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "rendezvous",
    ),
    (
        "ValueError: Error initializing torch.distributed using file:// rendezvous: world size parameter missing",
        "rendezvous",
    ),
    (
        "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group.",
        "rendezvous",
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "driver_env"),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "driver_env"),
    ("RuntimeError: trying to initialize the default process group twice!", "nccl_usage"),
    (
        "RuntimeError: The new group's rank should be within the world_size set by init_process_group",
        "nccl_usage",
    ),
    # --- ProcessGroupNCCL.cpp: watchdog, blocking wait, heartbeat monitor
    (
        "[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800826 milliseconds before timing out.",
        "collective_timeout",
    ),
    (
        "RuntimeError: Work WorkNCCL(SeqNum=7, OpType=SEND, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 5, last enqueued NCCL work: 5, last completed NCCL work: 4.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:577] [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "collective_timeout",
    ),
    (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [PG 0 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.",
        "collective_timeout",
    ),
    (
        "RuntimeError: NCCL communicator was aborted on rank 0.  Original reason for failure was: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800537 milliseconds before timing out.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1182] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1270] [PG 0 Rank 1] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API hang blocking the watchdog.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 2] Received a global timeout from another rank and will start to dump the debug info. Last enqueued NCCL work: 12, last completed NCCL work: 11.",
        "collective_timeout",
    ),
    (
        "[rank1]:[E1203 12:00:00.123456 ProcessGroupNCCL.cpp:1267] [PG 0 (default_pg) Rank 1] Received a dump signal due to a collective timeout from rank 3 and we will try our best to dump the debug info. Last enqueued NCCL work: 1234, last completed NCCL work: 1233.",
        "collective_timeout",
    ),
    (
        "[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] ProcessGroupNCCL's watchdog detected a collective timeout and notified current rank. This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run.",
        "collective_timeout",
    ),
    (
        "[rank0]:[F1203 12:00:00.123456 ProcessGroupNCCL.cpp:1306] [PG 0 (default_pg) Rank 0] ProcessGroupNCCL's watchdog detected a collective timeout from this local rank and notified the current rank. This is most likely caused by incorrect usages of collectives",
        "collective_timeout",
    ),
    (
        "[rank1]:[F1203 12:00:00.123456 ProcessGroupNCCL.cpp:1306] [PG 0 (default_pg) Rank 1] ProcessGroupNCCL's watchdog detected a dump signal from rank 3 and notified the current rank. This is most likely caused by incorrect usages of collectives",
        "collective_timeout",
    ),
    (
        "[F ProcessGroupHCCL.cpp:1306] [PG 0 Rank 1] ProcessGroupHCCL's watchdog detected a dump signal from rank 3 and notified the current rank.",
        "collective_timeout",
    ),
    (
        "[F ProcessGroupNCCL.cpp:1224] [PG 0 Rank 0] [PG 0 Rank 0] Terminating the process after attempting to dump debug info, due to collective timeout or exception.",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1600] [Rank 0] Could not acquire GIL within 300 ms on exit, possible GIL induced hang",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 0] Found key in store: NCCLABORTEDCOMM:8a9b3c, from rank: 1. This means that rank has aborted its NCCL communicators previously and is not in a healthy state.. Aborting appropriate communicators",
        "collective_timeout",
    ),
    (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.20.5\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "nccl_network",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1800] [Rank 0] Collective WorkNCCL(SeqNum=5, OpType=ALLREDUCE) raised the following async exception: NCCL error: unhandled system error",
        "nccl_network",
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3",
        "nccl_usage",
    ),
    ("RuntimeError: Tensors must be CUDA and dense", "nccl_usage"),
    ("RuntimeError: output tensor size must be equal to world_size times input tensor size", "nccl_usage"),
    # --- ProcessGroupGloo.cpp and gloo (transport, context, rendezvous)
    ("RuntimeError: Rank 1 failed to pass monitoredBarrier in 30000 ms", "collective_timeout"),
    (
        "[E ProcessGroupGloo.cpp:2796] [Rank 0]: Ranks 1 failed to pass monitoredBarrier in 600000 ms",
        "collective_timeout",
    ),
    (
        "[E ProcessGroupGloo.cpp:138] Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        "collective_timeout",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
        "collective_timeout",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:446] Write timeout [10.0.0.2]:34567",
        "collective_timeout",
    ),
    ("RuntimeError: Application timeout caused pair closure", "collective_timeout"),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:12345",
        "nccl_network",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:30366: Connection refused",
        "nccl_network",
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "nccl_network",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: eth0",
        "nccl_network",
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:211] address family mismatch",
        "nccl_network",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/socket.cc:95] rv != -1. -1 vs -1. bind: Address already in use",
        "rendezvous",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/context.cc:23] rank < size. 4 vs 4",
        "rendezvous",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/context.cc:22] rank >= 0. -1 vs 0",
        "rendezvous",
    ),
    (
        'RuntimeError: [../third_party/gloo/gloo/rendezvous/file_store.cc:151] Wait timeout for key(s): ["rank_1"]',
        "rendezvous",
    ),
    (
        "RuntimeError: [external/gloo/gloo/rendezvous/redis_store.cc:25] Connecting to Redis: Connection refused",
        "rendezvous",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/rendezvous/context.cc:49] Backing context not fully connected",
        "rendezvous",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 8192 vs 4096",
        "collective_mismatch",
    ),
    # --- ProcessGroupWrapper.cpp, reducer.cpp: ranks that disagree
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[10], TensorDtypes=Float), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=12, OpType=BROADCAST, TensorShape=[10], TensorDtypes=Float).Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Error when verifying shape tensors for collective ALLREDUCE on rank 0. This likely indicates that input shapes into the collective are mismatched across ranks. Got shapes:  10 [ CPULongType{1} ]",
        "collective_mismatch",
    ),
    (
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 161 params, while rank 1 has inconsistent 160 params.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: [2]: params[4] in this process with sizes [243, 256] appears not to match sizes of the same param in process 0.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: params[127] in this process with sizes [256, 256, 1, 1] appears not to match strides of the same param in process 0.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function.",
        "collective_mismatch",
    ),
    (
        "RuntimeError: Parameters which did not receive grad for rank 0: module.fc2.bias, module.fc2.weight",
        "collective_mismatch",
    ),
    # --- torch.distributed.elastic: rendezvous
    ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "rendezvous"),
    ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "rendezvous"),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
        "rendezvous",
    ),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to etcd has failed. See inner exception for details.",
        "rendezvous",
    ),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousStateError: The state object is corrupt. See inner exception for details.",
        "rendezvous",
    ),
    (
        "ValueError: The hostname of the rendezvous endpoint 'my_host:29400' must be a dot-separated list of labels, an IPv4 address, or an IPv6 address.",
        "rendezvous",
    ),
    (
        "ValueError: The rendezvous backend 'etcd-v3' is not registered. Did you forget to call `register`?",
        "rendezvous",
    ),
    (
        "ValueError: The maximum number of rendezvous nodes (1) must be greater than or equal to the minimum number of rendezvous nodes (2).",
        "rendezvous",
    ),
    # --- elastic agent and multiprocessing, launch.py, mp.spawn: processes that died
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python",
        KILLED,
    ),
    (
        "E1203 12:00:00.123000 140000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 2 (pid: 5678) of binary: /opt/conda/bin/python",
        KILLED,
    ),
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 3 (pid: 1234) of binary: /usr/bin/python",
        KILLED,
    ),
    ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 1234 got signal: 15", KILLED),
    (
        "WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting down workers",
        KILLED,
    ),
    ("  exitcode  : -9 (pid: 1234)", KILLED),
    ("  traceback : Signal 9 (SIGKILL) received by PID 1234", KILLED),
    (
        "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=1']' died with <Signals.SIGKILL: 9>.",
        KILLED,
    ),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL", KILLED),
    ("Exception: process 0 terminated with signal SIGSEGV", KILLED),
]

# No failure, or too little alone: each must stay silent.
SILENT: list[str] = [
    # socket.cpp's per-address records that its connect and listen loops go past (retried by design; the
    # errno 99 / 22 of a loopback or IPv6 record is the IPv6 try of a host that has IPv4)
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).",
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node1]:29500 (errno: 111 - Connection refused).",
    "[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 22 - Invalid argument).",
    "[W socket.cpp:697] [c10d] The IPv6 network addresses of (master, 29500) cannot be retrieved (gai error: -2 - Name or service not known).",
    "[W socket.cpp:426] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family not supported by protocol).",
    # an errno alone: any socket of any program (the store's frames around it say which, store_errors.py)
    "RuntimeError: Connection reset by peer",
    "RuntimeError: Broken pipe",
    # the libuv server's side of a rank that left (every rank's at a healthy exit; its own log says why)
    "[W1203 12:00:00.123456789 TCPStoreLibUvBackend.cpp:136] [c10d] Write to client failed. code:-32 name:EPIPE desc:broken pipe.",
    "[W1203 12:00:00.123456789 TCPStoreLibUvBackend.cpp:118] [c10d - debug] Read callback failed. code:-104 name:ECONNRESET desc:connection reset by peer",
    "[I1203 12:00:00.123456789 TCPStoreLibUvBackend.cpp:110] [c10d - debug] Remote peer closed the connection.",
    "[W1203 12:00:00.123456789 TCPStore.cpp:380] [c10d] Starting store with 4096 workers but somaxconn is 4096.This might cause instability during bootstrap, consider increasing it.",
    # other programs' accept failures, without libuv's code and name
    "ERROR Failed to accept client connection: too many open files",
    # ProcessGroupNCCL records of a healthy run, and consequences that name no cause
    "[W ProcessGroupNCCL.cpp:2302] Rank 0 using best-guess GPU 0 to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a particular device.",
    "[W ProcessGroupNCCL.cpp:1176] WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
    "[I ProcessGroupNCCL.cpp:686] [Rank 0] ProcessGroupNCCL initialization options:NCCL_ASYNC_ERROR_HANDLING: 1, NCCL_DESYNC_DEBUG: 0, NCCL_ENABLE_TIMING: 0, NCCL_BLOCKING_WAIT: 0, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0",
    "[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
    "[rank0]:[W1203 12:00:00.123 ProcessGroupNCCL.cpp:1168] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL destructor entered.",
    "[I ProcessGroupNCCL.cpp:1254] [PG 0 Rank 0] ProcessGroupNCCL aborts successfully.",
    "[I ProcessGroupNCCL.cpp:1070] [PG 0 Rank 0] ProcessGroupNCCL destroyed  communicator on CUDA device: 0 with stream: 3",
    "[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] ProcessGroupNCCL preparing to dump debug info.",
    "[E ProcessGroupNCCL.cpp:1025] [PG 0 Rank 3] Observed flight recorder dump signal from another rank via TCPStore.",
    "I1203 12:00:00.123456 ProcessGroupNCCL.cpp:1100] Could acquire GIL on exit",
    "[I ProcessGroupNCCL.cpp:1245] [PG 0 Rank 0] main process destroyed cuda before watchdog loop exited, terminating watchdog. (Watchdog caught exception: CUDA driver error: driver shutting down",
    "[rank0]:[I1203 12:00:00.1 ProcessGroupNCCL.cpp:960] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL initialization options: size: 8, global rank: 0, TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0",
    "[rank0]:[I1203 12:00:00.1 ProcessGroupNCCL.cpp:969] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL environments: NCCL version: 2.21.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3, TORCH_NCCL_DUMP_ON_TIMEOUT: 0, TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: 60000, TORCH_NCCL_DESYNC_DEBUG: 0, TORCH_NCCL_ENABLE_TIMING: 0, TORCH_NCCL_BLOCKING_WAIT: 0, TORCH_DISTRIBUTED_DEBUG: OFF, TORCH_NCCL_ENABLE_MONITORING: 1, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 480",
    "[rank0]:[I1203 ProcessGroupNCCL.cpp:2302] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL broadcast unique ID through store took 0.05 ms",
    "[rank0]:[W1203 ProcessGroupNCCL.cpp:1250] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "[W1203 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host node0:29500 - retrying (try=0, timeout=1800000ms, delay=476ms): The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection refused).\n[I1203 socket.cpp:500] [c10d] The client socket has connected to [node0]:29500 on SocketImpl(fd=5, addr=[node1]:4512, remote=[node0]:29500).",
    # the monitor's exit after an exception: an NCCL error ends there as well as a timeout
    "[E ProcessGroupNCCL.cpp:1600] [PG 0 Rank 0] ProcessGroupNCCL's watchdog detected an exception from the local rank. This is most likely caused by incorrect usages of collectives",
    "[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Received a dump signal from this local rank and will start to dump the debug info. Last enqueued NCCL work: 5, last completed NCCL work: 4.",
    # the rank that aborted writes the key (1.8-1.12, VLOG): its own cause is elsewhere in its log
    "I1203 12:00:00.123456 ProcessGroupNCCL.cpp:711] [Rank 1] Wrote aborted communicator id to store: NCCLABORTEDCOMM:8a9b3c",
    # a gloo context that did connect
    "DEBUG gloo::rendezvous::ContextFactory: backing context connected (8 pairs)",
    # a setting, not a timeout
    "INFO: timeout for initializing process group set to 1800 s",
    "Initializing process group with timeout 0:30:00",
    "INFO Connecting to Redis: localhost:6379",
    # gloo's fallback warning
    "[W ProcessGroupGloo.cpp:2777] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())",
    # reducer.cpp / logger.cpp: performance notes and progress
    "[W reducer.cpp:1300] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration,  which can adversely affect performance.",
    "[I reducer.cpp:1926] [Rank 0] Reducer buckets have been rebuilt in this iteration.",
    "[W reducer.cpp:283] Warning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
    "[I logger.cpp:330] [Rank 0]: DDP Initialized with: broadcast_buffers: 1 bucket_cap_bytes: 26214400 find_unused_parameters: 0 gradient_as_bucket_view: 0 has_sync_bn: 0 is_multi_device_module: 0 iteration: 0 num_parameter_tensors: 161 output_device: 0 rank: 0 total_parameter_size_bytes: 498028544 world_size: 8 backend_name: nccl",
    # elastic: progress of a healthy run, a retried state, a restart that names no cause
    "INFO:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'gpu-1_1234_0' attempted to join the next round of the rendezvous 'none'.",
    "INFO:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'gpu-1_1234_0' has joined round 0 of the rendezvous 'none' as rank 0 in a world of size 2.",
    "torch.distributed.elastic.rendezvous.etcd_rendezvous.EtcdRendezvousRetryableFailure",
    "torch.distributed.elastic.rendezvous.api.RendezvousError: Rendezvous state transition no longer possible. Must re-enter.",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish",
    "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0003 seconds",
    "W1203 12:00:00.123000 140000 torch/distributed/run.py:793] *****************************************",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "WARNING:torch.distributed.elastic.multiprocessing.errors.error_handler:no error file defined for parent, to copy child error file (/tmp/torchelastic_x/none_y/attempt_0/0/error.json)",
    "FutureWarning: The module torch.distributed.launch is deprecated and will be removed in future. Use torchrun.",
    "train.py: error: unrecognized arguments: --local-rank=0",
]


@pytest.mark.parametrize("line,want", FAILURES)
def test_sweep_failures_get_their_class(line: str, want: object) -> None:
    got = root_category(line)
    assert got in (want if isinstance(want, tuple) else (want,)), (line, got)


@pytest.mark.parametrize("line", SILENT)
def test_sweep_benign_lines_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


_NEW = [
    (
        "[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] ProcessGroupNCCL's watchdog detected a collective timeout "
        "and notified current rank.",
        "RUN151",
    ),
    (
        "[E ProcessGroupNCCL.cpp:1600] Could not acquire GIL within 300 ms on exit, possible GIL induced hang",
        "RUN152",
    ),
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 0] Found key in store: NCCLABORTEDCOMM:8a9b3c, from rank: 1. This "
        "means that rank has aborted its NCCL communicators previously",
        "RUN151",
    ),
    ("RuntimeError: Timed out initializing process group with --num_nodes=2 in DeepSpeed", "RUN221"),
    ("[c10d] Failed to accept socket. code: -24, name: EMFILE, message: too many open files", "RUN222"),
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/context.cc:23] rank < size. 4 vs 4", "RUN224"),
    ("RuntimeError: [gloo/rendezvous/redis_store.cc:25] Connecting to Redis: Connection refused", "RUN222"),
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize("line,code", _NEW)
def test_new_family_rows_behind_every_prefix(prefix: str, line: str, code: str) -> None:
    f = root_finding(prefix + line)
    assert f is not None and f.code == code, (prefix + line, f)


def test_monitor_exit_names_the_rank_that_timed_out() -> None:
    f = root_finding(
        "[rank1]:[F1203 ProcessGroupNCCL.cpp:1306] [PG 0 (default_pg) Rank 1] ProcessGroupNCCL's watchdog "
        "detected a dump signal from rank 3 and notified the current rank."
    )
    assert f is not None and f.facts.get("timeout_from_rank") == 3, f


def test_monitor_exit_yields_to_the_watchdog_record_of_the_rank() -> None:
    # tier 2: the watchdog's own record says which collective; the monitor's exit is its consequence
    log = (
        "[rank1]:[E1203 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLGATHER, NumelIn=4, NumelOut=8, Timeout(ms)=600000) ran for 600100 "
        "milliseconds before timing out.\n"
        "[rank1]:[F1203 ProcessGroupNCCL.cpp:1306] [PG 0 Rank 1] ProcessGroupNCCL's watchdog detected a "
        "collective timeout from this local rank and notified the current rank."
    )
    f = root_finding(log)
    assert f is not None and f.code == "RUN151" and f.facts.get("monitor_exit") is None, f


def test_gloo_context_rank_facts() -> None:
    f = root_finding(
        "RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/context.cc:27] rank < size. 8 vs 8"
    )
    assert f is not None and f.facts.get("rank") == 8 and f.facts.get("world_size") == 8, f


def test_gloo_other_enforces_are_not_the_meeting() -> None:
    # context.cc's timeout check and a transport buffer's enforce are no rank / size disagreement
    for line in (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/context.cc:62] timeout.count() >= 0. Invalid timeout",
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/buffer.cc:103] sendPending_ > 0. 0 vs 0. No send to wait for",
    ):
        f = root_finding(line)
        assert f is None or f.category != "rendezvous", (line, f)


def test_libuv_client_records_do_not_hide_the_cause() -> None:
    log = (
        "[W1203 12:00:00.1 TCPStoreLibUvBackend.cpp:136] [c10d] Write to client failed. code:-32 name:EPIPE "
        "desc:broken pipe.\n"
        "E1203 12:00:00.2 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
        "local_rank: 1 (pid: 5678) of binary: /usr/bin/python"
    )
    f = root_finding(log)
    assert f is not None and f.category in KILLED, f
