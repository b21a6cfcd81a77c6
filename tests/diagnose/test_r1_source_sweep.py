"""A source sweep of NCCL's WARN sites (NVIDIA/nccl, every v2.x tag 2.3.7-2.27.7: the format string of each
WARN(...) call, 603 distinct texts in 2.4.8-2.27.7 and 110 in 2.3.7 / 2.4.2, when the sources were .cu files),
its ncclGetErrorString texts in each era, and the NCCL_OFI_WARN texts of the aws-ofi-nccl plugin (v1.7.4 to
master, 859 texts), each rendered as NCCL's logger prints it ("host:pid:tid [dev] file:LINE NCCL WARN msg";
the site with its directory as the build names it - transport/net_ib.cc, misc/socket.cc - or the file alone as
many 2.19+ packages print it, and 2.23+'s "[date time] ... file:LINE (function) NCCL WARN") and run through
diagnose. Of NCCL's 603 texts of 2.4.8-2.27.7, 253 were silent in one of the path forms (221 in both) before
this sweep and 204 after; of 2.3.7 / 2.4.2's 110, 27 before and 23 after; of the plugin's 859, 282 before and
275 after (its silent ones are internal checks: free lists, message buffers, MR keys, GIN). Those left silent
are NCCL's internal bookkeeping (proxy op pools, GIN / RMA / device-runtime, symmetric memory, RAS, Windows
ports), CUDA-context echoes of an earlier fault ("[Proxy Service] Failed to set CUDA device 3"), and the
notes below that NCCL prints on healthy runs.

The families added (rules/nccl_warn_kind.py, nccl_warn_texts.py, ofi_plugin.py, the .cu chain of nccl_errors):
- the topology code's sources by file name alone (paths.cc, search.cc, topo.cc, xml.cc, xml.h, rings.cc,
  trees.cc, tuning.cc; 2.3-2.4's include/topo.h): RUN192, as graph/<file> already was;
- "Could not find real path of /sys/..." (realpath of a PCI path: ncclSystemError in every version), at any
  site: RUN171 (it was read only at graph/<file> with a "-> 2" chain below it);
- host allocations inside NCCL ("Failed to malloc N bytes", "malloc of N bytes failed"): RUN171;
- the proxy's Unix-domain-socket fd passing of cuMem handles (UDS: ..., ncclProxyCallBlockingUDS /
  ncclProxyClientGetFd ... failed): RUN615 (new), also behind torch's "Last error:";
- NCCL's reports that carry an ncclResult ("ncclAsyncJobComplete: job .. failed, job error 2",
  "ncclCommSetAsyncError: error comm .. sets state 6"): by the result, tier 1;
- 2.12+'s "No transport found for rank 0[..] -> rank 1[..]", "Unknown pattern for collective": RUN192;
- ibvwrap.h's "Call to ibv_poll_cq() returned -1", and ibvwrap's "Call to ibv_modify_qp failed with error No
  such device" quoted without the WARN head (rules/ib_async_events.py): RUN173; 2.3-2.4's "Error : Network
  returned 0 device": RUN294; the return chain of 2.3-2.4.2's .cu sources ("init.cu:864 -> 2"): by its result;
- aws-ofi-nccl's "Caught exception in plugin init/connect/...: <what>" and "No viable endpoint found for TCP
  provider": RUN294 (init) / RUN173 (connections);
- cudawrap's 2.13-2.18 "Retrieve cuMemCreate version 11000 failed with 500": RUN261, as its later wording;
- 2.27's "socketFinalizeAccept from 10.0.0.9<5555>: wrong type 3 != 1": RUN174, as 2.12-2.26's wording;
- NCCL's "Cuda failure 1 'invalid argument'" on a line of its own (the WARN head cut off,
  rules/nccl_wrappers.py): read as the WARN is;
- net_ib 2.12+'s "Could not find real path of mlx5_0 (/sys/...)" (NCCL goes on without the NIC's PCI path)
  and net_socket's clamping notes ("NCCL_SOCKET_NTHREADS is greater than the maximum allowed, setting to
  16"), read before as IB / socket failures, are silent.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers.diagnose_root import TRACEBACK_HEAD, prefixed, root_finding

HOST = "gpu-node-17:48213:48290 [3] "


def _forms(site: str, msg: str) -> list[str]:
    """The WARN line as the build prints its site: with the directory, without it, and 2.23+'s form."""
    base = os.path.basename(site)
    return [
        f"{HOST}{site} NCCL WARN {msg}",
        f"{HOST}{base} NCCL WARN {msg}",
        f"[2025-01-03 10:00:01] {HOST}{base} (fn) NCCL WARN {msg}",
    ]


# (site, message, code, category): NCCL's failure WARNs as users paste them, by family.
SWEEP = [
    # NET/IB: async events, completions, verbs calls (transport/net_ib.cc, net_ib/*.cc 2.23+)
    ("transport/net_ib.cc:93", "NET/IB : Got async event : port error", "RUN173", "nccl_network"),
    (
        "transport/net_ib.cc:93",
        "NET/IB : Got async event : local catastrophic error",
        "RUN173",
        "nccl_network",
    ),
    ("transport/net_ib.cc:93", "NET/IB : mlx5_0:1 Got async event : port error", "RUN173", "nccl_network"),
    (
        "transport/net_ib/common.cc:123",
        "NET/IB : mlx5_0:1 async fatal event: local catastrophic error",
        "RUN173",
        "nccl_network",
    ),
    (
        "transport/net_ib/common.cc:140",
        "NET/IB : mlx5_0:1 async fatal event on QP (0x55d0): local work queue catastrophic error",
        "RUN173",
        "nccl_network",
    ),
    (
        "transport/net_ib.cc:1090",
        "NET/IB : Got completion from peer 10.0.0.2<52424> with error 12, opcode 0, len 0, vendor err 129 "
        "(Send)",
        "RUN173",
        "nccl_network",
    ),
    (
        "transport/net_ib/p2p.cc:720",
        "NET/IB: Got completion from peer 10.0.0.2<52424> with status=5 opcode=0 len=0 vendor err 249 (Send) "
        "localGid fe80::1 remoteGids fe80::2 hca mlx5_0",
        "RUN173",
        "nccl_network",
    ),
    (
        "misc/ibvwrap.cc:252",
        "Call to ibv_modify_qp failed with error Connection timed out",
        "RUN173",
        "nccl_network",
    ),
    (
        "misc/ibvwrap.cc:106",
        "Call to ibv_reg_mr failed with error Cannot allocate memory",
        "RUN173",
        "nccl_network",
    ),
    ("include/ibvwrap.h:63", "Call to ibv_poll_cq() returned -1", "RUN173", "nccl_network"),
    ("transport/net_ib.cc:461", "NET/IB : Unable to open device mlx5_0", "RUN173", "nccl_network"),
    ("transport/net_ib.cc:461", "NET/IB : No IP interface found.", "RUN173", "nccl_network"),
    # sockets and the bootstrap (include/socket.h 2.4-2.11, misc/socket.cc 2.12+)
    (
        "include/socket.h:403",
        "Connect to 10.0.0.2<35171> failed : Connection refused",
        "RUN174",
        "nccl_network",
    ),
    (
        "misc/socket.cc:484",
        "socketStartConnect: Connect to 10.0.0.2<35171> failed : Software caused connection abort",
        "RUN174",
        "nccl_network",
    ),
    (
        "misc/socket.cc:49",
        "socketProgress: Connection closed by remote peer gpu2<47836>",
        "RUN174",
        "nccl_network",
    ),
    ("misc/socket.cc:466", "socketStartConnect: exceeded retries (20)", "RUN174", "nccl_network"),
    (
        "misc/socket.cc:578",
        "socketStartConnect: connect to 10.0.0.2<45123> returned Connection refused, exceeded error retry "
        "count after 35 attempts",
        "RUN174",
        "nccl_network",
    ),
    (
        "misc/socket.cc:534",
        "socketFinalizeAccept from 10.0.0.9<5555>: wrong type 3 != 1",
        "RUN174",
        "nccl_network",
    ),
    ("misc/socket.cc:441", "socketFinalizeAccept: wrong type 3 != 1", "RUN174", "nccl_network"),
    ("bootstrap.cc:76", "Bootstrap : no socket interface found", "RUN174", "nccl_network"),
    ("transport/net_socket.cc:46", "NET/Socket : no interface found", "RUN174", "nccl_network"),
    ("transport/net.cc:480", "Error : Network returned 0 device", "RUN294", "nccl_network"),
    # shared memory (include/shm.h, misc/shmutils.cc) and host memory (include/alloc.h)
    (
        "misc/shmutils.cc:112",
        "Error while creating shared memory segment /dev/shm/nccl-HIvt5y (size 9637888), error: No space "
        "left on device (28)",
        "RUN171",
        "nccl_network",
    ),
    ("include/alloc.h:178", "Failed to malloc 4294967296 bytes", "RUN171", "nccl_network"),
    ("transport/p2p.cc:60", "malloc of 4194304 bytes failed", "RUN171", "nccl_network"),
    # the proxy's cuMem fd passing over its Unix domain socket (misc/ipcsocket.cc, proxy.cc 2.17+): RUN615
    ("misc/ipcsocket.cc:142", "UDS: Receiving data over socket failed : 11", "RUN615", "nccl_network"),
    ("misc/ipcsocket.cc:152", "UDS: Receiving data over socket failed", "RUN615", "nccl_network"),
    (
        "misc/ipcsocket.cc:79",
        "UDS: Sending data over socket /tmp/nccl-socket-1-e2c1 failed : Connection refused (111)",
        "RUN615",
        "nccl_network",
    ),
    (
        "proxy.cc:1275",
        "ncclProxyCallBlockingUDS call to tpRank 1(53b1e2c1) failed : 2",
        "RUN615",
        "nccl_network",
    ),
    (
        "proxy.cc:1299",
        "ncclProxyClientGetFd call to tpRank 1 handle 0x7f8 failed : 2",
        "RUN615",
        "nccl_network",
    ),
    # the proxy's and the group's reports of an ncclResult
    (
        "proxy.cc:1013",
        "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3",
        "RUN192",
        "nccl_usage",
    ),
    ("group.cc:89", "ncclAsyncJobComplete: job 0x55d0 failed, job error 2", "RUN171", "nccl_network"),
    ("init.cc:2647", "ncclCommSetAsyncError: error comm 0x55d0 sets state 6", "RUN172", "nccl_network"),
    # the topology code (graph/*.cc; include/topo.h 2.3-2.4)
    ("graph/paths.cc:192", "Error : could not find CPU close to GPU 3", "RUN192", "nccl_usage"),
    ("graph/xml.cc:478", "GetXmlFromCpu : could not find CPU numa ID.", "RUN192", "nccl_usage"),
    ("graph/topo.cc:882", "Add PCI Link error : could not find PCI SW 1f", "RUN192", "nccl_usage"),
    ("graph/search.cc:229", "Could not find gpu rank 3", "RUN192", "nccl_usage"),
    ("graph/topo.cc:720", "Set CPU affinity : unable to find GPU/CPU for rank 3", "RUN192", "nccl_usage"),
    (
        "graph/xml.cc:648",
        "Could not find real path of /sys/class/pci_bus/0000:00/../../0000:00:1e.0",
        "RUN171",
        "nccl_network",
    ),
    (
        "include/topo.h:27",
        "Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0",
        "RUN171",
        "nccl_network",
    ),
    ("transport.cc:39", "No transport found for rank 0[1000] -> rank 1[2000]", "RUN192", "nccl_usage"),
    ("enqueue.cc:2216", "Unknown pattern for collective 3 algorithm 4", "RUN192", "nccl_usage"),
    # argument checks, init checks, versions
    (
        "misc/argcheck.cc:39",
        "AllReduce : invalid root 0 (root should be in the 0..0 range)",
        "RUN191",
        "nccl_usage",
    ),
    (
        "init.cc:1339",
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
        "RUN193",
        "nccl_usage",
    ),
    (
        "init.cc:522",
        "Mismatched collective detected, please check your collective calls at and around rank 3.",
        "RUN201",
        "collective_mismatch",
    ),
    # CUDA calls inside NCCL
    ("include/alloc.h:48", "Failed to CUDA malloc 1048576 bytes", "RUN101", "cuda_oom"),
    ("enqueue.cc:1164", "Cuda failure 'an illegal memory access was encountered'", "RUN244", "gpu_hardware"),
    (
        "transport/p2p.cc:228",
        "failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
        "RUN291",
        "driver_env",
    ),
    ("misc/nvmlwrap.cc:40", "nvmlInit() failed: Driver/library version mismatch", "RUN261", "driver_env"),
    # CUDACHECK's "Cuda failure '<cudaGetErrorString>'" (include/checks.h): the CUDA error decides
    ("init.cc:1120", "Cuda failure 'initialization error'", "RUN262", "driver_env"),
    (
        "init.cc:1120",
        "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
        "RUN261",
        "driver_env",
    ),
    ("init.cc:1120", "Cuda failure 'invalid device ordinal'", "RUN264", "driver_env"),
    ("enqueue.cc:1164", "Cuda failure 'uncorrectable ECC error encountered'", "RUN242", "gpu_hardware"),
    ("enqueue.cc:1164", "Cuda failure 'unspecified launch failure'", "RUN244", "gpu_hardware"),
    (
        "enqueue.cc:1164",
        "Cuda failure 'uncorrectable NVLink error detected during the execution'",
        "RUN241",
        "gpu_hardware",
    ),
    ("enqueue.cc:1164", "Cuda failure 'unknown error'", "RUN194", "nccl_usage"),
    # the CUDA driver API NCCL loads (misc/cudawrap.cc): an entry point the driver lacks
    ("misc/cudawrap.cc:114", "Retrieve cuMemCreate version 11000 failed with 500", "RUN261", "driver_env"),
    ("misc/cudawrap.cc:114", "Retrieve cuMemCreate failed with 500 status 1", "RUN261", "driver_env"),
]


@pytest.mark.parametrize(("site", "msg", "code", "category"), SWEEP)
def test_nccl_warn_in_every_site_form(site: str, msg: str, code: str, category: str) -> None:
    for line in _forms(site, msg):
        root = root_finding(line)
        assert root is not None and (root.code, root.category) == (code, category), (line, root)


# The same WARNs behind a launcher's prefix, and below a traceback.
@pytest.mark.parametrize(("site", "msg", "code", "category"), SWEEP[21:40])
@pytest.mark.parametrize("prefix", ["[rank1]: ", "[default0]:", "(RayWorkerWrapper pid=1234) "])
def test_nccl_warn_behind_prefix(site: str, msg: str, code: str, category: str, prefix: str) -> None:
    root = root_finding(prefixed(prefix, _forms(site, msg)[1]))
    assert root is not None and root.category == category, (prefix, msg, root)


# torch's error with NCCL's last WARN after "Last error:" (NCCLUtils getNcclErrorDetailStr, 2.0+).
TORCH_HEAD = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "Last error:\n"
)


@pytest.mark.parametrize(
    ("last", "code"),
    [
        ("UDS: Receiving data over socket failed : 11", "RUN615"),
        ("ncclProxyCallBlockingUDS call to tpRank 1(53b1e2c1) failed : 2", "RUN615"),
        ("Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0", "RUN171"),
    ],
)
def test_torch_last_error(last: str, code: str) -> None:
    root = root_finding(prefixed("[rank1]: ", TRACEBACK_HEAD + TORCH_HEAD + last))
    assert root is not None and root.code == code, (last, root)


# ncclGetErrorString in each era (2.4-2.18 plain, 2.19+ with its advice), as torch wraps it.
RESULTS = [
    ("unhandled system error", "RUN171"),
    ("internal error", "RUN192"),
    ("invalid usage", "RUN191"),
    ("unhandled cuda error", "RUN194"),
    ("remote process exited or there was a network error", "RUN172"),
    ("unhandled system error (run with NCCL_DEBUG=INFO for details)", "RUN171"),
    ("internal error - please report this issue to the NCCL developers", "RUN192"),
    ("invalid usage (run with NCCL_DEBUG=WARN for details)", "RUN191"),
    ("invalid argument (run with NCCL_DEBUG=WARN for details)", "RUN191"),
]


@pytest.mark.parametrize(("text", "code"), RESULTS)
def test_nccl_result_text(text: str, code: str) -> None:
    line = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
        f"{text}, NCCL version 2.14.3"
    )
    root = root_finding(line)
    assert root is not None and root.code == code, (text, root)


# NCCL 2.3-2.4.2 built its sources as .cu: the return chain below a WARN names them.
@pytest.mark.parametrize(
    "chain",
    [
        "node1:430:2237 [0] NCCL INFO init.cu:864 -> 2",
        "node1:430:2237 [0] NCCL INFO misc/group.cu:69 -> 2 [Async thread]",
    ],
)
def test_cu_return_chain(chain: str) -> None:
    root = root_finding(chain)
    assert root is not None and root.code == "RUN171", (chain, root)


# aws-ofi-nccl (NCCL_OFI_WARN, __PRETTY_FUNCTION__:LINE as the site since v1.14).
OFI = [
    (
        "nccl_net_ofi_init(ncclDebugLogger_t):210 NCCL WARN NET/OFI Caught exception in plugin init: "
        "OFI call fi_getinfo failed: No data available",
        "RUN294",
    ),
    (
        "connect(...):88 NCCL WARN NET/OFI Caught exception in plugin connect: Failed to insert address",
        "RUN173",
    ),
    (
        "nccl_ofi_ofiutils.c:210 NCCL WARN NET/OFI No viable endpoint found for TCP provider. Try and relax "
        "the filters using OFI_NCCL_USE_IPV6_TCP or OFI_NCCL_EXCLUDE_TCP_IF environment variables",
        "RUN294",
    ),
]


@pytest.mark.parametrize(("tail", "code"), OFI)
def test_ofi_plugin_warn(tail: str, code: str) -> None:
    root = root_finding("ip-10-0-0-1:48213:48290 [3] " + tail)
    assert root is not None and root.code == code, (tail, root)


# NCCL's verbs wrapper quoted without its WARN head (a thread's title, a paste of the message alone).
@pytest.mark.parametrize(
    "line",
    [
        "Call to ibv_modify_qp failed with error No such device",
        "[rank0]: Call to ibv_reg_mr failed with error Cannot allocate memory",
        "Call to ibv_poll_cq() returned -1",
        "NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory",
    ],
)
def test_verbs_call_without_warn_head(line: str) -> None:
    root = root_finding(line)
    assert root is not None and root.code == "RUN173", (line, root)


# NCCL's CUDACHECK text with the WARN head cut off (the first line of a paste): read as the WARN is.
@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("Cuda failure 1 'invalid argument'", "RUN194"),
        ("Cuda failure 'out of memory'", "RUN101"),
        ("[rank0]: Cuda failure 2 'out of memory'", "RUN101"),
        ("Cuda failure 'invalid device ordinal'", "RUN264"),
    ],
)
def test_cuda_failure_without_warn_head(line: str, code: str) -> None:
    root = root_finding(line + "\nTraceback (most recent call last):\n")
    assert root is not None and root.code == code, (line, root)


# Benign: WARNs NCCL prints on healthy runs (it goes on), and the near-misses of the rows above.
BENIGN = [
    ("misc/ibvwrap.cc:60", "Failed to open libibverbs.so[.1]"),
    ("transport/net_ib.cc:93", "NET/IB : Got async event : GID table change"),
    ("misc/socket.cc:431", "socketFinalizeAccept: wrong magic 5f2a != 3c4d"),
    ("misc/rings.cc:90", "Could not create rings, falling back on simple ring"),
    ("graph/search.cc:765", "Could not find a path for pattern 4, falling back to simple order"),
    ("transport.cc:464", "Cannot initialize CollNet, using point-to-point network instead"),
    ("graph/xml.cc:589", "No NVML device handle. Skipping nvlink detection."),
    ("graph/xml.cc:102", "Unable to open /tmp/topo.xml, not dumping topology."),
    ("init.cc:621", "NCCL_WORK_FIFO_DEPTH=1000 is being ignored because it is not a power of 2."),
    (
        "transport/net_socket.cc:420",
        "NET/Socket : NCCL_SOCKET_NTHREADS is greater than the maximum allowed, setting to 16",
    ),
    (
        "transport/net_socket.cc:431",
        "NET/Socket : the total number of sockets is greater than the maximum allowed, setting "
        "NCCL_NSOCKS_PERTHREAD to 4",
    ),
    ("transport/net.cc:890", "NET: GDR Flush only supported on x86_64"),
    ("transport/shm.cc:62", "Ignoring SHM locality, must be 1 (sender side) or 2 (receiver side, default)"),
    ("plugin/profiler.cc:140", "Profiler init failed with error (2). Continue without profiler."),
    ("bootstrap.cc:196", "no device found matching eth9, ignoring"),
    ("proxy.cc:1516", "Unable to create thread context due to old driver, disabling."),
    ("graph/tuning.cc:120", "Invalid NCCL_NTHREADS 1000 (maximum 512)."),
    ("init.cc:720", "CollNet currently only supports up to 8 GPUs per node, disabling CollNet"),
    ("init.cc:1200", "NCCL_CGA_CLUSTER_SIZE value 8 is too big. Limiting value to 4."),
    (
        "transport/net_ib.cc:500",
        "NET/IB: Ip address '10.0.0' is invalid for family AF_INET, ignoring address",
    ),
    ("graph/connect.cc:120", "User asked for a maximum of 64 channels, setting it to 32"),
    ("init.cc:1500", "Cuda failure 'driver shutting down'"),
    ("transport/net_ib.cc:320", "Could not find real path of mlx5_0 (/sys/class/infiniband/mlx5_0/device)"),
    ("misc/mlx5dvsymbols.cc:45", "dlvsym failed on mlx5dv_query_device - undefined symbol version MLX5_1.0"),
    # near-misses: a result report that is no failure, the teardown's own report, the name-length check
    ("init.cc:2647", "ncclCommSetAsyncError: error comm 0x55d0 sets state 7"),
    ("init.cc:2869", "commReclaim: cleanup comm 0x55d0 rank 3 failed in destroy/abort, error 3"),
]


@pytest.mark.parametrize(("site", "msg"), BENIGN)
def test_benign_nccl_warn_stays_silent(site: str, msg: str) -> None:
    for line in _forms(site, msg):
        assert root_finding(line) is None, line


# Healthy lines that share the new rows' words.
HEALTHY = [
    "node1:5021:5386 [0] NCCL INFO UDS: Creating listening socket /tmp/nccl-socket-0-e2c1",
    "node1:5021:5386 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
    "node1:5021:5386 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.",
    "node1:5021:5386 [0] NCCL INFO init.cu:864 -> 0",
    "node1:5021:5386 [0] NCCL INFO Ring 00 : 0 -> 1 [receive] via NET/Socket/0",
    "node1:5021:5386 [0] NCCL INFO Topology detection: network path /sys/devices/pci0000:00 is not a PCI "
    "device (vmbus). Attaching to first CPU",
    "Failed to malloc 4096 bytes for the image cache, retrying with a smaller one",
    "Cuda failure 'driver shutting down'",
    "e53b7da88fea:2493:2753 [0] NCCL INFO Could not find real path of /sys/class/net/lo/device",
    "node1:5021:5386 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
    "node1:5021:5386 [0] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev "
    "mlx5_0:1, curr state INIT, next state RTR, retrying 1/7 after 100 msec of sleep",
    "node1:5021:5386 [0] NCCL INFO Call to mlx5dv_get_data_direct_sysfs_path failed with error Operation not "
    "supported errno 95",
    "node1:5021:5386 [0] NCCL INFO NET/OFI Using transport protocol RDMA (platform set)",
    "node1:5021:5386 [0] NCCL INFO search.cc:765 Could not find a path for pattern 4, falling back to simple "
    "order",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_lines_stay_silent(line: str) -> None:
    assert root_finding(line) is None, line
