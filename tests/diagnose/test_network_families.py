"""The rendezvous/store family and the network-transport family, read at their sources across versions.

Every line below is a message as its source writes it, with the source named beside it (torch's c10d
socket.cpp, TCPStore.cpp, Utils.hpp/.cpp, distributed_c10d.py, rendezvous.py, elastic/rendezvous/;
python-etcd; gloo's transport/tcp, uv and ibverbs; NCCL's misc/socket.cc, include/socket.h, net_ib.cc,
ibvwrap.cc, bootstrap.cc, proxy.cc and aws-ofi-nccl), tried behind the prefixes real logs add. The
decoys are the same sources' records of a retry that then worked, or of a normal shutdown.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import failure_findings as _findings
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = [
    "",
    "[rank3]: ",
    "node7: ",
    "2025-01-02 03:04:05,678 - ERROR - ",
    "(RayWorkerWrapper pid=335, ip=10.1.0.67) ERROR 01-29 07:44:33 worker_base.py:467] ",
]
WARN = "node1:1234:5678 [0] {src} NCCL WARN "


# (line, code, facts the finding must carry)
RENDEZVOUS = [
    # c10d socket.cpp, client side: the summary records (2.0 "after 900000ms", 2.1+ "after 1800000ms" /
    # "after 600s"; "(host, port)"), one record per failed address (errno text; Windows "system error"),
    # IPv6 literals
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 600s while trying to connect to (10.0.0.1, 29500).",
        "RUN222",
        {"master_addr": "10.0.0.1", "master_port": 29500},
    ),
    (
        "RuntimeError: The client socket has timed out after 900000ms while trying to connect to (127.0.0.1, 29500).",
        "RUN222",
        {"master_port": 29500, "timeout_ms": 900000},
    ),
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 60s while trying to connect to (::1, 29500).",
        "RUN222",
        {"master_addr": "::1", "master_port": 29500},
    ),
    (
        "[E socket.cpp:922] [c10d] The client socket has failed to connect to any network address of (node-1, 29500).",
        "RUN222",
        {"master_addr": "node-1", "master_port": 29500},
    ),
    (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 (errno: 110 - Connection timed out).",
        "RUN222",
        {"master_port": 29500, "errno": 110},
    ),
    (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [fe80::1%eth0]:29500 (errno: 101 - Network is unreachable).",
        "RUN222",
        {"master_addr": "fe80::1%eth0", "errno": 101},
    ),
    # socket.cpp, server side: per-address bind records, the summary, and the libuv backend's record
    # (TCPStoreLibUvBackend.cpp 2.4+)
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).",
        "RUN223",
        {"port": 29500, "errno": 98},
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
        "RUN223",
        {"port": 29500},
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use).",
        "RUN223",
        {"port": 29500},
    ),
    ("RuntimeError: Address already in use", "RUN223", {}),  # 1.x tcp:// and env:// (c10d/Utils.cpp)
    # TCPStore / Utils before 1.11: "connect() timed out." (1.6-1.9), "... Original timeout was N ms." (1.10)
    ("RuntimeError: connect() timed out.", "RUN222", {}),
    ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", "RUN222", {"timeout_ms": 60000}),
    ("RuntimeError: Socket Timeout", "RUN222", {}),
    # TCPStore 2.x: the server waiting for its clients, a wait on keys, the old "[TCPStore.cpp:N]" form
    (
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "RUN221",
        {"joined": 1, "expected": 2},
    ),
    (
        "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0",
        "RUN222",
        {},
    ),
    (
        "RuntimeError: [../torch/csrc/distributed/c10d/TCPStore.cpp:1203] wait timeout after 1800000ms, keys: /default_pg/0//cuda//0",
        "RUN222",
        {},
    ),
    # distributed_c10d._store_based_barrier: 1.x "on rank: 0 ... worker_count=1", 2.x "on rank 3 ...
    # num_workers_joined=3 ... error=..."
    (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
        "RUN221",
        {"expected": 2, "joined": 1},
    ),
    (
        "torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 3, for key: store_based_barrier_key:1 (world_size=4, num_workers_joined=3, timeout=0:30:00 error=Socket Timeout)",
        "RUN221",
        {"expected": 4, "joined": 3},
    ),
    # Utils.hpp recvBytes (2.1+): the store's peer closed the connection
    (
        "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
        "RUN222",
        {},
    ),
    (
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: failed to recv, got 0 bytes",
        "RUN222",
        {"store_key": "0"},
    ),
    ("torch.distributed.DistNetworkError: Connection reset by peer", "RUN222", {}),
    # torch/distributed/rendezvous.py (1.x-2.x): env:// without a launcher, tcp:// without its parts
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but not set",
        "RUN224",
        {"missing_variable": "MASTER_ADDR"},
    ),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
        "RUN224",
        {"missing_variable": "RANK"},
    ),
    (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "RUN224",
        {"init_method": "tcp://"},
    ),
    ("KeyError: 'WORLD_SIZE'", "RUN224", {"missing_variable": "WORLD_SIZE"}),
    # TCPStore 2.4+: the libuv backend torchrun asks for by default, absent from the Windows wheels
    (
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        "RUN551",
        {"fix_env": "USE_LIBUV=0"},
    ),
    (
        "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was build without libuv support",
        "RUN551",
        {"store_backend": "libuv"},
    ),
    # elastic rendezvous: dynamic_rendezvous.py (c10d backend) and etcd_rendezvous.py raise the bare
    # class; other handlers add a message
    ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "RUN221", {}),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: The node 'node1_123_0' rendezvous has timed out after 600.00 seconds (timeout: 600s).",
        "RUN221",
        {},
    ),
    ("torch.distributed.elastic.rendezvous.api.RendezvousClosedError", "RUN221", {}),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
        "RUN222",
        {},
    ),
    (
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to etcd has failed. See inner exception for details.",
        "RUN222",
        {},
    ),
    # python-etcd (client.py), under torchelastic's etcd rendezvous
    (
        "etcd.EtcdConnectionFailed: Connection to etcd failed due to MaxRetryError(\"HTTPConnectionPool(host='10.0.0.1', port=2379): Max retries exceeded with url: /v2/keys/torchelastic/p2p/run_1/rdzv/active_version (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))\")",
        "RUN222",
        {"etcd_host": "10.0.0.1", "etcd_port": 2379},
    ),
    (
        "etcd.EtcdException: Could not get the list of servers, maybe you provided the wrong host(s) to connect to?",
        "RUN222",
        {},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "code", "facts"), RENDEZVOUS)
def test_rendezvous_and_store_texts(prefix: str, line: str, code: str, facts: dict[str, Any]) -> None:
    f = _root(prefix + line)
    # the one store text that is the build's, not the meeting's (RUN551, driver_env)
    assert (
        f is not None
        and f.code == code
        and f.category == ("driver_env" if code == "RUN551" else "rendezvous")
    ), (
        line,
        f,
    )
    for k, v in facts.items():
        assert f.facts.get(k) == v, (k, f.facts)


# NCCL's socket and IB layers, WARN lines as 2.4-2.22 print them (the WARN formats and torch's "Last
# error:" wrapping are tried by test_usage_families / test_diagnose_source_families).
NETWORK = [
    (
        WARN.format(src="misc/socket.cc:484")
        + "socketStartConnect: Connect to 10.0.0.2<43251> failed : Software caused connection abort",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        WARN.format(src="misc/socket.cc:567")
        + "socketPollConnect: connect returned Connection refused, exceeded error retry count (35)",
        "RUN174",
        {},
    ),
    (
        WARN.format(src="misc/socket.cc:540")
        + "socketProgressOpt: Call to recv from 10.0.0.2<55344> failed : Connection reset by peer",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        WARN.format(src="misc/socket.cc:47")
        + "socketProgress: Connection closed by remote peer 10.0.0.2<43251>",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        WARN.format(src="include/socket.h:403")
        + "Net : Connect to 10.0.0.2<43251> failed : Connection refused",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        WARN.format(src="include/socket.h:423") + "Call to recv failed : Connection reset by peer",
        "RUN174",
        {},
    ),
    (WARN.format(src="transport/net_socket.cc:430") + "NET/Socket : socket progress error", "RUN174", {}),
    # misc/socket.cc 2.19+: a connect that gave up, its poll, an accept
    (WARN.format(src="misc/socket.cc:606") + "socketStartConnect: exceeded timeouts (20000)", "RUN174", {}),
    (WARN.format(src="misc/socket.cc:606") + "socketStartConnect: exceeded retries (34)", "RUN174", {}),
    (WARN.format(src="misc/socket.cc:560") + "socketPollConnect: exceeded retries (34)", "RUN174", {}),
    (
        WARN.format(src="misc/socket.cc:533")
        + "socketPollConnect poll() failed with error Interrupted system call",
        "RUN174",
        {},
    ),
    (
        WARN.format(src="misc/socket.cc:553")
        + "socketPollConnect: Connect to 10.0.0.2<45135> returned 113(No route to host) errno 115(Operation now in progress)",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        WARN.format(src="misc/socket.cc:493") + "socketTryAccept: Accept failed: Too many open files",
        "RUN174",
        {},
    ),
    (
        WARN.format(src="misc/socket.cc:343")
        + "Net : No interface found in the same subnet as remote address 10.0.0.1<29500>",
        "RUN174",
        {},
    ),
    (
        WARN.format(src="misc/socket.cc:221")
        + "Net : error encountered when getting address info : Name or service not known",
        "RUN174",
        {},
    ),
    (WARN.format(src="bootstrap.cc:56") + "Bootstrap : no socket interface found", "RUN174", {}),
    (
        WARN.format(src="transport/net_ib.cc:1295")
        + "NET/IB : Got completion from peer 10.0.0.6<59166> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.5 remoteGids::ffff:10.0.0.6",
        "RUN173",
        {"peer": "10.0.0.6"},
    ),
    (
        WARN.format(src="transport/net_ib.cc:1053")
        + "NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
        "RUN173",
        {},
    ),
    (
        WARN.format(src="misc/ibvwrap.cc:252")
        + "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.5, remote GID ::ffff:10.0.0.6",
        "RUN173",
        {},
    ),
    (
        WARN.format(src="misc/ibvwrap.cc:106")
        + "Call to ibv_modify_qp failed with error Connection timed out",
        "RUN173",
        {},
    ),
    (WARN.format(src="transport/net_ib.cc:380") + "NET/IB : Unable to open device mlx5_0", "RUN173", {}),
    (WARN.format(src="transport/net_ib.cc:108") + "NET/IB : Got async event : port error", "RUN173", {}),
    # net_ib setup refusals without an error word (2.19+)
    (WARN.format(src="transport/net_ib/init.cc:590") + "NET/IB : No IP interface found.", "RUN173", {}),
    (
        WARN.format(src="transport/net_ib.cc:133")
        + "NET/IB : mlx5_0:1 async fatal event: local catastrophic error",
        "RUN173",
        {},
    ),
    (
        "node1:1234:5678 [0] NCCL WARN NET/OFI Unable to find a protocol that worked. Failing initialization.",
        "RUN294",
        {},
    ),
    (
        "node1:1234:5678 [0] NCCL WARN NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument",
        "RUN173",
        {},
    ),
    # aws-ofi-nccl (nccl_ofi_net.c / nccl_ofi_rdma.c): plugin init and completions
    ("ip-10-0-0-1:1234:5678 [0] NCCL WARN NET/OFI Failed to initialize rdma protocol", "RUN173", {}),
    (
        "ip-10-0-0-1:1234:5678 [0] NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available",
        "RUN294",
        {},
    ),
    (
        "ip-10-0-0-1:1234:5678 [0] NCCL WARN NET/OFI Unable to create domain. RC: -12, ERROR: Cannot allocate memory",
        "RUN173",
        {},
    ),
    (
        "ip-10-0-0-1:1234:5678 [0] NCCL WARN NET/OFI Request completed with error. RC: 5. Error: Input/output error. Completed length: 0, Request: { dev: 0, size: 0, state: CREATED, type: RECV }",
        "RUN173",
        {},
    ),
    # proxy.cc: the service thread's result code, 2 = ncclSystemError
    (
        WARN.format(src="proxy.cc:1527")
        + "[Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 2",
        "RUN171",
        {},
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.19.3\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "Last error:\n"
        "NET/IB : Got completion from peer 10.0.0.6<59166> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.5 remoteGids::ffff:10.0.0.6",
        "RUN172",
        {"peer": "10.0.0.6"},
    ),
    (
        "RuntimeError: NCCL error in: /opt/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. It can be also caused by unexpected exit of a remote peer, you can check NCCL warnings for failure information",
        "RUN171",
        {},
    ),
    # gloo's transports as torch raises them (tcp/pair.cc, uv/pair.cc, tcp/device.cc, ProcessGroupGloo)
    (
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:575] Connection closed by peer [172.17.0.2]:31124",
        "RUN174",
        {"peer": "172.17.0.2"},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Read error [10.0.0.2]:24323: Connection reset by peer",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "RuntimeError: [/opt/conda/conda-bld/pytorch_1/work/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [127.0.1.1]:60817: Connection refused",
        "RUN174",
        {"peer": "127.0.1.1"},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:399] writev [10.0.0.2]:5678: Broken pipe",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/uv/pair.cc:333] Connect timeout [10.0.0.2]:5678",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Socket unexpectedly closed [10.0.0.2]:5678",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "torch.distributed.DistBackendError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:5678",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        "RUN174",
        {},
    ),
    (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] Connect timeout [none]",
        "RUN174",
        {},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: eth0",
        "RUN174",
        {"interface": "eth0"},
    ),
    # gloo's ibverbs transport (transport/ibverbs/device.cc, pair.cc): an IB verbs call that failed
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/ibverbs/device.cc:76] ibv_open_device: Cannot allocate memory",
        "RUN173",
        {"backend": "gloo"},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/ibverbs/pair.cc:464] ibv_post_send: Invalid argument",
        "RUN173",
        {"backend": "gloo"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize(("line", "code", "facts"), NETWORK)
def test_network_transport_texts(prefix: str, line: str, code: str, facts: dict[str, Any]) -> None:
    f = _root(prefix + line)
    assert f is not None and f.code == code and f.category == "nccl_network", (line, f)
    for k, v in facts.items():
        assert f.facts.get(k) == v, (k, f.facts)


@pytest.mark.parametrize(
    "msg",
    [
        "NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and [0]mlx5_0:1/RoCE. Try selecting NICs of the same type",
        "NET/IB : Local mergedDev=mlx5_0+mlx5_1 has a different number of devices=2 as remoteDev=mlx5_0 nRemDevs=1",
    ],
)
def test_nic_merging_refusals_are_the_jobs_nic_settings(msg: str) -> None:
    # net_ib/connect.cc: NICs the job's NCCL_IB_HCA / NCCL_IB_MERGE_NICS paired that cannot be paired - the
    # same class as net_ib's "Attempted to merge incompatible devices" (NCCL usage, nic_config)
    f = _root(WARN.format(src="transport/net_ib/connect.cc:420") + msg)
    assert f is not None and f.category == "nccl_usage", f


def test_gloo_application_timeout_is_a_timeout() -> None:
    # tcp/pair.cc: the pair closed by the process group's own timeout, not by the network
    f = _root(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Application timeout caused pair closure"
    )
    assert f is not None and f.category == "collective_timeout", f


# Consequences: the store or a transport reports the loss of a peer that died first.
CONSEQUENCES = [
    (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.2 GiB is free.\n"
        "[rank1]: torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?\n",
        "cuda_oom",
    ),
    (
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 4000, in _store_based_barrier\n'
        "[rank1]:     store.add(store_key, 1)\n"
        "[rank1]: torch.distributed.DistNetworkError: Connection reset by peer\n"
        "E0101 00:00:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n",
        "host_oom",
    ),
    (
        "E0101 00:00:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n"
        "[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: failed to recv, got 0 bytes\n",
        "host_oom",
    ),
]


CONSEQUENCES += [
    # NCCL's remote error and gloo's closed pair echo a peer that died first (an OOM, a SIGKILL)
    (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.2 GiB is free.\n"
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.19.3\n"
        "[rank0]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
        "[rank0]: Last error:\n"
        "[rank0]: socketProgress: Connection closed by remote peer node2<43251>\n",
        "cuda_oom",
    ),
    (
        "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:5678\n"
        "E0101 00:00:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 1 (pid: 1234) of binary: /usr/bin/python\n",
        "host_oom",
    ),
]


@pytest.mark.parametrize(("log", "category"), CONSEQUENCES)
def test_a_lost_peer_is_the_consequence_of_its_death(log: str, category: str) -> None:
    f = _root(log)
    assert f is not None and f.category == category, f


DECOYS = [
    # socket.cpp: a failed attempt, then the record of the connect that worked
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 (errno: 110 - Connection timed out).\n"
    "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n",
    # Windows: the machine's own name's link-local IPv6 address refused by Winsock, then IPv4 connects
    "[W420 20:13:22.000000000 socket.cpp:764] [c10d] The client socket has failed to connect to [Auronya]:50175 (system error: 10049 - The requested address is not valid in its context.).\n"
    "INFO 04-20 20:13:22 [parallel_state.py:1712] rank 0 in world size 1 is assigned as DP rank 0\n",
    # errno 111: the store is not up yet, retried by design
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [node-1]:29500 (errno: 111 - Connection refused).\n",
    # the IPv6 lookup of a name that only has IPv4 addresses: socket.cpp goes on with IPv4, which connects
    "[W socket.cpp:697] [c10d] The IPv6 network addresses of (node-1, 29500) cannot be retrieved (gai error: -2 - Name or service not known).\n"
    "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n"
    "epoch 1 loss 0.3\n",
    "[W socket.cpp:436] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family not supported by protocol).\n",
    "[W socket.cpp:663] [c10d] The client socket cannot be initialized to connect to [localhost]:29500 (errno: 97 - Address family not supported by protocol).\n",
    # one family's bind failed, the other listens
    "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
    "[I socket.cpp:480] [c10d] The server socket has started to listen on 0.0.0.0:29500.\n"
    "epoch 1\n",
    # TCPStore's server when its clients hang up at the end of a run (2.3+)
    "Training finished.\n"
    "[W1204 11:47:45.949247853 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=77, addr=[::ffff:127.0.0.1]:39732, remote=[::ffff:127.0.0.1]:29600): failed to recv, got 0 bytes\n"
    "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first):\n",
    # NCCL's retried connect, then its rings
    "node1:1234:5678 [0] NCCL INFO Call to connect returned Connection refused, retrying\nnode1:1234:5678 [0] NCCL INFO Connected all rings\n",
    # socket.cc: a connection from another communicator (a stale process) is dropped and accept goes on;
    # EAGAIN of the accept is the teardown at exit
    "node1:1234:5678 [0] misc/socket.cc:465 NCCL WARN socketFinalizeAccept: wrong magic 1a2b3c4d != 5e6f7a8b\n",
    "node1:1234:5678 [0] misc/socket.cc:493 NCCL WARN socketTryAccept: Accept failed: Resource temporarily unavailable\n",
    # dynamic_rendezvous.py closing the rendezvous at the end of a healthy run
    "INFO:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node1_2313_0' has closed the rendezvous 'job1'.\n"
    "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.001 seconds\n",
    # an IB async event that is no error
    "node1:1234:5678 [0] transport/net_ib.cc:118 NCCL WARN NET/IB : mlx5_0:1 Got async event : GID table change\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_retries_and_shutdown_records_are_silent(log: str) -> None:
    assert _findings(log) == [], log


def test_server_summary_takes_its_port_from_the_address_not_the_source_line() -> None:
    log = (
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).\n"
        "[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.\n"
    )
    found = _findings(log)
    assert found and found[0].code == "RUN223" and found[0].facts["port"] == 29500
    assert all(f.facts.get("port") in (None, 29500) for f in found), [f.facts for f in found]


def test_a_barrier_that_counts_more_ranks_than_the_world_names_a_shared_store() -> None:
    # distributed_c10d._store_based_barrier counts every process that used the key: more than world_size
    # is two jobs (or a stale init file) on one store, or a launcher that started too many processes.
    f = _root(
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)"
    )
    assert f is not None and f.code == "RUN221" and f.facts["oversubscribed"] is True, f
    assert "more ranks counted than world_size" in f.message
    f = _root(
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 5, for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)"
    )
    assert f is not None and "oversubscribed" not in f.facts, f


def test_gloo_ibverbs_completion_status_is_named() -> None:
    f = _root(
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
        "  what():  [enforce fail at /opt/caffe2/third_party/gloo/gloo/transport/ibverbs/pair.cc:417] wc->status == IBV_WC_SUCCESS. 4 vs 0. Send for slot 34: local protection error\n"
    )
    assert f is not None and f.code == "RUN173", f
    assert f.facts["wc_status"] == 4 and f.facts["wc_status_name"] == "IBV_WC_LOC_PROT_ERR"


def test_the_etcd_backend_is_named() -> None:
    f = _root(
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to etcd has failed. See inner exception for details."
    )
    assert f is not None and f.facts.get("backend") == "etcd" and "etcd server" in f.message, f


def test_shutdown_noise_of_the_dump_check_is_silent() -> None:
    # ProcessGroupNCCL's heartbeat asks the store whether to dump; after the store's host exited it
    # warns, with the store's own text, at [W]: not a failure (the real one is elsewhere, or none).
    log = (
        '[rank3]:[W625 23:35:35.311127584 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0(default_pg) Rank 3] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: failed to recv, got 0 bytes\n'
        "[rank2]:[W625 23:35:35.303797152 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, addr=[::ffff:127.0.0.1]:37468, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes\n"
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first):\n"
    )
    assert _findings(log) == [], log


# torch 1.x TCPStore's connect raised the socket's strerror as it was (c10d/Utils.cpp SYSCHECK), under
# init_process_group's tcp:// / env:// handler.
@pytest.mark.parametrize("why", ["Connection timed out", "No route to host", "Network is unreachable"])
@pytest.mark.parametrize("handler", ["_tcp_rendezvous_handler", "_env_rendezvous_handler"])
def test_store_connect_errno_of_torch_1x(why: str, handler: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 47, in main\n'
        "    dist.init_process_group(backend='nccl', init_method='tcp://192.168.1.10:23456', rank=1, world_size=2)\n"
        '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/distributed_c10d.py", line 354, in init_process_group\n'
        "    store, rank, world_size = next(rendezvous(url))\n"
        f'  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/rendezvous.py", line 95, in {handler}\n'
        "    store = TCPStore(result.hostname, result.port, world_size, start_daemon)\n"
        f"RuntimeError: {why}\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN222" and f.facts["store_error"] == why, f


def test_a_traceback_cut_at_the_rendezvous_backend_raise() -> None:
    # c10d_rendezvous_backend._call_store's only raise is RendezvousConnectionError; a paste cut there
    # (Ray's actor prefix on every line) still says the agent lost its rendezvous store.
    p = "(CommandActor pid=552, ip=10.130.6.168) "
    log = (
        p + '  File "/home/ray/anaconda3/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/'
        'c10d_rendezvous_backend.py", line 73, in get_state\n'
        + p
        + '    base64_state: bytes = self._call_store("get", self._key)\n'
        + p
        + '  File "/home/ray/anaconda3/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/'
        'c10d_rendezvous_backend.py", line 115, in _call_store\n' + p + "    raise\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN222" and f.facts["cut_traceback"] is True, f
    # a frame of the backend that did not raise is no finding
    assert _findings(log.rsplit(p, 2)[0]) == []


BARRIER_2X = "[rank0]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 0, for key: store_based_barrier_key:1 (world_size=2, num_workers_joined=1, timeout=0:30:00 error=Socket Timeout)\n"


@pytest.mark.parametrize(
    ("death", "category"),
    [
        (
            "[rank1]: Traceback (most recent call last):\n"
            '[rank1]:   File "train.py", line 3, in <module>\n'
            "[rank1]: ModuleNotFoundError: No module named 'apex'\n",
            "process_crash",
        ),
        (
            "E0101 00:00:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 1 (pid: 1234) of binary: /usr/bin/python\n",
            "host_oom",
        ),
    ],
)
def test_a_barrier_short_of_a_rank_that_died_is_that_deaths_echo(death: str, category: str) -> None:
    for log in (death + BARRIER_2X, BARRIER_2X + death):
        f = _root(log)
        assert f is not None and f.category == category, f


def test_a_barrier_timeout_that_ends_its_own_rank_stays_the_root() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.8/dist-packages/torch/distributed/distributed_c10d.py", line 350, in _store_based_barrier\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)\n"
        "E0101 00:00:00.000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: /usr/bin/python\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN221", f


def test_the_agents_failed_shutdown_yields_to_the_error_that_stopped_it() -> None:
    # dynamic_rendezvous.py warns when the stopping agent cannot close the rendezvous; the workers' failure
    # that stopped it is the root, the warning alone is still a rendezvous finding
    warn = (
        "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'worker-1_17_0' has failed to "
        "shutdown the rendezvous 'none' due to an error of type RendezvousConnectionError.\n"
    )
    oom = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    f = _root(oom + warn)
    assert f is not None and f.category == "cuda_oom", f
    f = _root(warn)
    assert f is not None and f.code == "RUN222" and f.facts["during_shutdown"] is True, f
