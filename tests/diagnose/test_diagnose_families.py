"""Message families of `pgdoctor diagnose`, each with the variants its source prints across
versions (the text is written from the source's format strings: c10d socket.cpp and TCPStore,
distributed rendezvous.py, ProcessGroupNCCL.cpp, NCCL's socket/net/argcheck/graph WARNs, the CUDA
error enum, the NVIDIA driver's NVRM records and Xid catalogue, torchrun / DeepSpeed /
torch.multiprocessing / DataLoader / Ray / vLLM), the paste shapes real reports have, and the
causal rules that pick the root cause among them."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.knowledge.cuda_errors import find_cuda_error
from pgdoctor.knowledge.xid import describe_xid


def _root(text: str) -> tuple[Optional[str], dict[str, Any]]:
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    return (real[0].code, real[0].facts) if real else (None, {})


def _code(text: str) -> Optional[str]:
    return _root(text)[0]


# --- c10d sockets, TCPStore and the rendezvous -------------------------------------------------


@pytest.mark.parametrize(
    "text,port",
    [
        (
            "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).\n"
            "[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).\n"
            "[E socket.cpp:500] [c10d] The server socket has failed to listen on any local network address.",
            29500,
        ),
        (
            "[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - Address already in use).",
            47531,
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
            "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
            29500,
        ),
        ("RuntimeError: Address already in use", None),
    ],
)
def test_store_port_clash_every_format(text: str, port: Optional[int]) -> None:
    code, facts = _root(text)
    assert code == "RUN223" and facts.get("port") == port


@pytest.mark.parametrize(
    "text,addr,port,ms",
    [
        (
            "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234",
            "192.0.0.1",
            1234,
            60000,
        ),
        (
            "RuntimeError: The client socket has timed out after 900000ms while trying to connect to (10.0.0.1, 29500).",
            "10.0.0.1",
            29500,
            900000,
        ),
        (
            "torch.distributed.DistStoreError: The client socket has timed out after 1800000ms while trying to connect to "
            "(node-0, 29400).",
            "node-0",
            29400,
            1800000,
        ),
    ],
)
def test_store_client_timeout_formats(text: str, addr: str, port: int, ms: int) -> None:
    code, facts = _root(text)
    assert code == "RUN222" and (facts["master_addr"], facts["master_port"], facts["timeout_ms"]) == (
        addr,
        port,
        ms,
    )


def test_client_connect_errors_refused_is_retried_others_are_failures() -> None:
    refused = "[W socket.cpp:752] [c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused)."
    assert _code(refused) is None  # socket.cpp retries a refused connect until its own timeout
    ipv6_localhost = (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - "
        "Cannot assign requested address)."
    )
    assert _code(ipv6_localhost) is None  # localhost's IPv6 address on a host without IPv6; IPv4 follows
    for line, errno in (
        (
            "[W socket.cpp:697] [c10d] The client socket has failed to connect to [::ffff:0.104.99.143]:47389 "
            "(errno: 110 - Connection timed out).",
            110,
        ),
        (
            "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:601] [c10d] The client socket has failed to connect to "
            "[kubernetes.docker.internal]:12345 (system error: 10049 - unknown error).",
            10049,
        ),
    ):
        code, facts = _root(line)
        assert code == "RUN222" and facts["errno"] == errno
    assert (
        _code(
            "[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of "
            "(6841231, 47389)."
        )
        == "RUN222"
    )
    assert _code("RuntimeError: connect() timed out. Original timeout was 60000 ms.") == "RUN222"
    assert (
        _code(
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d "
            "store has failed. See inner exception for details."
        )
        == "RUN222"
    )


def test_store_based_barrier_wait_and_timeout_name_the_counts_and_rank() -> None:
    wait = (
        "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
        "rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)"
    )
    code, facts = _root(wait)
    assert code == "RUN221" and (facts["expected"], facts["joined"], facts["rank"]) == (2, 1, 0)
    done = "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes."
    assert _code(wait + "\n" + done) is None
    timeout = (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: "
        "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)"
    )
    code, facts = _root(timeout)
    assert code == "RUN221" and facts["rank"] == 2


def test_tcpstore_socket_timeout_of_torch_1x() -> None:
    text = (
        '  File "torch/distributed/distributed_c10d.py", line 703, in _new_process_group_helper\n'
        "    pg = ProcessGroupGloo(prefix_store, rank, world_size, timeout=timeout)\nRuntimeError: Socket Timeout\n"
    )
    assert _code(text) == "RUN222"


@pytest.mark.parametrize("var", ["MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"])
def test_env_rendezvous_missing_variable(var: str) -> None:
    code, facts = _root(
        f"ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        f"variable {var} expected, but not set"
    )
    assert code == "RUN224" and facts["missing_variable"] == var
    assert (
        _code("ValueError: Error initializing torch.distributed using tcp:// rendezvous: port number missing")
        == "RUN224"
    )


# --- CUDA errors of the environment, by message, number and name ---------------------------------


@pytest.mark.parametrize(
    "text,code",
    [
        ("RuntimeError: CUDA error: system not yet initialized", "RUN262"),
        (
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
            "before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
            "RUN262",
        ),
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=802 : system not yet initialized",
            "RUN262",
        ),
        (
            'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"',
            "RUN262",
        ),
        (
            "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:51",
            "RUN261",
        ),
        ("RuntimeError: CUDA error: forward compatibility was attempted on non supported HW", "RUN261"),
        (
            "RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at /pytorch/aten/src/THC/THCGeneral.cpp:51",
            "RUN262",
        ),
        ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "RUN262"),
        (
            "AssertionError:\nThe NVIDIA driver on your system is too old (found version 9000).\nPlease update your GPU driver",
            "RUN261",
        ),
        ("RuntimeError: Distributed package doesn't have NCCL built in", "RUN263"),
        ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "RUN265"),
        ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "RUN262"),
        (
            "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, "
            "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.",
            "RUN262",
        ),
        (
            "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161",
            "RUN261",
        ),
        (
            "Error: UserWarning: Attempted to get default timeout for nccl backend, but NCCL support is not compiled",
            "RUN263",
        ),
        ("运行报错Distributed package doesn't have NCCL built in,查询资料", "RUN263"),
    ],
)
def test_cuda_environment_errors(text: str, code: str) -> None:
    assert _code(text) == code


def test_cuda_error_catalogue_names_and_numbers() -> None:
    for name, number in (
        ("cudaErrorSystemNotReady", 802),
        ("CUDA_ERROR_SYSTEM_NOT_READY", 802),
        ("cudaErrorNoDevice", 100),
        ("cudaErrorInsufficientDriver", 35),
    ):
        err = find_cuda_error(f"failed: {name}")
        assert err is not None and err.number == number
    assert (
        find_cuda_error("loss error 0.3 initialization error rate") is None
    )  # the generic text needs its prefix


def test_nccl_cuda_failure_of_the_environment_is_driver_env() -> None:
    text = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 802 'system not yet initialized'\n"
    )
    assert _code(text) == "RUN262"


def test_loader_errors_and_vllm_nccl_loading() -> None:
    vllm = (
        "ERROR 04-23 19:30:01 pynccl.py:53] Failed to load NCCL library from libnccl.so.2 .It is expected if you "
        "are not running on NVIDIA/AMD GPUs."
    )
    code, facts = _root(vllm)
    assert code == "RUN263" and facts["library"] == "libnccl.so.2"
    assert (
        _code(
            "INFO 04-23 19:30:01 pynccl_utils.py:17] Failed to import NCCL library: libnccl.so.2: cannot open "
            "shared object file: No such file or directory"
        )
        == "RUN263"
    )
    # NCCL's own plugin probe at INFO is harmless
    assert (
        _code(
            "node:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such "
            "file or directory No plugin found (libnccl-net.so), using internal implementation"
        )
        is None
    )


# --- NVRM and Xids ---------------------------------------------------------------------------------


def test_nvrm_record_wrapped_over_lines_without_an_xid() -> None:
    text = (
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "               NVRM: fallen off the bus and is not responding to commands.\n"
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
    )
    code, facts = _root(text)
    assert code == "RUN243" and facts["pci_bus_id"] == "0000:b3:00.0"


@pytest.mark.parametrize(
    "line",
    [
        "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
        "Unable to determine the device handle for gpu 0000:3B:00.0: GPU is lost. Reboot the system to recover this GPU",
    ],
)
def test_nvml_cannot_reach_the_gpu(line: str) -> None:
    assert _code(line) == "RUN243"


@pytest.mark.parametrize(
    "line,xid,code",
    [
        (
            "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
            94,
            "RUN242",
        ),
        ("kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)", 145, "RUN241"),
        (
            "NVRM: Xid (PCI:0000:9c:00): 171, pid=1234, name=python3, Uncorrectable ECC Error: DRAM",
            171,
            "RUN242",
        ),
        ("NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000", 31, "RUN241"),
    ],
)
def test_xid_record_variants(line: str, xid: int, code: str) -> None:
    got, facts = _root(line)
    assert got == code and facts["xid"] == xid


def test_xid_quoted_by_a_monitoring_tool_and_gsp_timeout_without_xid() -> None:
    quoted = (
        '[XID found] (54 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=4071838, name=python, Timeout after '
        '45s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4)."'
    )
    code, facts = _root(quoted)
    assert code == "RUN241" and (facts["xid"], facts["pid"], facts["pci_bus_id"]) == (
        119,
        4071838,
        "0000:9b:00",
    )
    bare = "[   84.738339] NVRM: GPU6 rpcRecvPoll: Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL)"
    code, facts = _root(bare)
    assert code == "RUN241" and facts["xid"] == 119


def test_cleanup_xid_names_the_xid_that_caused_it() -> None:
    text = "\n".join(
        f"kernel: NVRM: Xid (PCI:0000:{b}:00): 45, pid=18189{i}, name=python3, Ch 0000000{i} caused by "
        f"previous Xid {x}"
        for i, (b, x) in enumerate((("dc", 149), ("ed", 145), ("ba", 145)))
    )
    code, facts = _root(text)
    assert code == "RUN241" and facts["xid"] == 149 and facts["reported_by_xid"] == 45


def test_xid_catalogue_has_the_newer_nvlink_and_memory_entries() -> None:
    for x in (137, 144, 145, 149, 171, 172):
        info = describe_xid(x)
        assert info is not None and info.severity == "fail"


def test_cuda_uncorrectable_nvlink_error_is_hardware() -> None:
    assert (
        _code("RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution")
        == "RUN241"
    )


# --- NCCL: torch's wording across versions, WARNs by source ---------------------------------------


@pytest.mark.parametrize(
    "text,code",
    [
        # 1.1x-2.0 watchdog wording, everything flattened onto one line
        (
            "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. terminate called after throwing an "
            "instance of 'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, NCCL "
            "version 2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
            "prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, "
            "vendor err 129",
            "RUN172",
        ),
        (
            "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:272, unhandled system error",
            "RUN171",
        ),
        (
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  NCCL Error 2: unhandled system error",
            "RUN171",
        ),
        (
            "I try to run with pytorch 1.11. But I got a ncclSystemError: System call (socket, malloc, munmap, etc) failed",
            "RUN171",
        ),
        (
            "We hit these errors on two nodes: NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 "
            "len=32696 vendor err 129 (Send)",
            "RUN173",
        ),
    ],
)
def test_nccl_errors_as_torch_and_users_quote_them(text: str, code: str) -> None:
    assert _code(text) == code


@pytest.mark.parametrize(
    "line",
    [
        "gpu-1:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",  # NCCL <= 2.3
        "node-a:7:9 [0] misc/socket.cc:484 NCCL WARN socketProgressOpt: Call to recv from 10.0.0.2<43251> failed : "
        "Connection reset by peer",
        "node-a:7:9 [0] misc/socket.cc:568 NCCL WARN Net : Connect to 10.0.0.2<43251> failed : No route to host",
        "worker:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to f",  # cut by the paste
        "ubuntu:39964:40044 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40",
        "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
    ],
)
def test_nccl_socket_warn_family(line: str) -> None:
    assert _code(line) == "RUN174"


def test_gloo_interface_and_store_connection_errors() -> None:
    assert (
        _code(
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
            "Unable to find address for: eth0"
        )
        == "RUN174"
    )
    # the store client lost its server (rank 0 gone): rendezvous, not a collective's connection
    assert _code("torch.distributed.DistNetworkError: Connection reset by peer") == "RUN222"
    assert (
        _code(
            "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 "
            '&& device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50'
        )
        == "RUN264"
    )


def test_socket_failure_reported_as_internal_error_is_network() -> None:
    text = (
        "[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\n...\n"
        "[trainer0|0]:ncclInternalError: Internal check failed.\n[trainer0|0]:Last error:\n"
        "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)\n"
    )
    assert _code(text) == "RUN174"


@pytest.mark.parametrize(
    "line,code",
    [
        (
            "(train_rft pid=2657296) 2024-05-11 14:10:52.227 n176:2657296:2658232 [0] include/alloc.h:102 NCCL WARN Cuda "
            "failure 1 'invalid argument'",
            "RUN194",
        ),
        (
            "pytorch host-0:22789:28201 [0] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (14 != 0)",
            "RUN192",
        ),
        (
            "YYY:2396:2428 [0] misc/argcheck.cc:40 NCCL WARN Reduce : invalid root 0 (root should be in the 0..0 range)",
            "RUN191",
        ),
        (
            "`init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39.`",
            "RUN201",
        ),
        ("```Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 40```", "RUN193"),
        # the proxy thread names the ncclResult_t of the operation that failed
        (
            "user:16901:16967 [2] proxy.cc:1519 NCCL WARN [Proxy Service 2] Failed to execute operation Connect from rank 2, "
            "retcode 3",
            "RUN192",
        ),
        (
            "node:1:2 [0] proxy.cc:1485 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=2, "
            "closing connection",
            "RUN171",
        ),
        # a size mismatch in the bootstrap's own exchange (bootstrap.cc, the only source of "received"): NCCL's
        # internal error, no collective of the program (the transports' "receiving" is the program's)
        (
            "node:1:2 [0] bootstrap.cc:77 NCCL WARN Message truncated : received 2048 bytes instead of 1024",
            "RUN192",
        ),
        (
            "node:1:2 [0] shm.cc:120 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)",
            "RUN171",
        ),
    ],
)
def test_nccl_warn_by_source(line: str, code: str) -> None:
    assert _code(line) == code


def test_async_nccl_error_of_a_collective_keeps_its_op_and_seq() -> None:
    text = (
        "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1000000) raised the "
        "following async exception: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
        "version 2.25.1\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
        "error. \nLast error:\n\nException raised from checkForNCCLErrorsInternal at ProcessGroupNCCL.cpp:2501\n"
    )
    code, facts = _root(text)
    assert code == "RUN171" and (facts["op"], facts["seq"], facts["nccl_version"]) == (
        "ALLREDUCE",
        2,
        "2.25.1",
    )


def test_torch_nccl_error_detail_decides_the_code() -> None:
    head = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "{}, NCCL version 2.19.3\n{}\nLast error:\n{}\n"
    )
    dup = head.format(
        "invalid usage (run with NCCL_DEBUG=WARN for details)",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000",
    )
    code, facts = _root(dup)
    assert code == "RUN193" and facts["bus_id"] == "1a000"
    trunc = head.format(
        "internal error - please report this issue to the NCCL developers",
        "ncclInternalError: Internal check failed.",
        "NET/Socket : peer 10.0.0.2<41234> message truncated : receiving 1024 bytes instead of 256",
    )
    assert _code(trunc) == "RUN201"
    shm = head.format(
        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)",
    )
    code, facts = _root(shm)
    assert code == "RUN171" and facts["likely_cause"] == "shared_memory"


def test_mpirun_timestamped_and_tagged_nccl_record_keeps_host_and_rank() -> None:
    code, facts = _root(
        "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN "
        "Cuda failure 'invalid argument'"
    )
    # the P2P transport's CUDA IPC refused (transport.cc:15x 'invalid argument'): the platform's, RUN292
    assert code == "RUN292" and (facts["host"], facts["rank"]) == ("tomte401", 0)


def test_a_download_that_lost_its_connection_is_not_the_jobs_network() -> None:
    text = (
        'Traceback (most recent call last):\n  File "data.py", line 3, in fetch\n'
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub.example', port=443): Max retries "
        "exceeded (Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    assert _code(text) == "RUN132"


def test_nccl_return_chain_without_its_warn() -> None:
    text = (
        "dgxa100:1050:1315 [0] NCCL INFO Channel 15/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7\n"
        "dgxa100:1050:1316 [0] NCCL INFO include/net.h:25 -> 2\ndgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2\n"
    )
    code, facts = _root(text)
    assert code == "RUN171" and facts["nccl_result"] == 2
    # with its WARN the WARN leads: the chain only echoes it
    warn = "node:1:9 [0] misc/socket.cc:484 NCCL WARN socketProgressOpt: Call to recv from 10.0.0.2<43251> failed : Connection reset by peer\n"
    assert _code(warn + "node:1:9 [0] NCCL INFO misc/socket.cc:496 -> 6\n") == "RUN174"


def test_harmless_nccl_warns_stay_silent() -> None:
    text = (
        "YYY:2396:2428 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "node-a:1:9 [0] init.cc:1990 NCCL WARN Cuda failure 'driver shutting down'\n"
    )
    assert _code(text) is None


def test_loaded_libnccl_older_than_torch_needs_is_environment() -> None:
    code = _code(
        "ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree"
    )
    assert code == "RUN195"
    from pgdoctor.checks.base import CODES

    assert CODES["RUN195"].category == "driver_env"


# --- ProcessGroupNCCL watchdog records -------------------------------------------------------------


def _wd(rank: int, seq: int = 2070, op: str = "REDUCE") -> str:
    return (
        f"[rank{rank}]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective "
        f"operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        f"60003{rank} milliseconds before timing out."
    )


def test_watchdog_record_hard_wrapped_mid_number_keeps_its_facts() -> None:
    text = (
        "[rank1]:[E407 10:02:26.551756518 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=492\n09, OpType=ALLGATHER, NumelIn=43, NumelOut=172, Timeout(ms)=1800000) ran for "
        "1800056 milliseconds before timing out.\n"
    )
    code, facts = _root(text)
    assert code == "RUN151" and (facts["seq"], facts["op"], facts["timeout_ms"]) == (
        49209,
        "ALLGATHER",
        1800000,
    )


def test_watchdog_record_under_a_runner_tag_wrapped_before_worknccl() -> None:
    text = "\n".join(
        _wd(r)
        .replace("timeout: WorkNCCL", "timeout: \nWorkNCCL")
        .replace("[rank", "dinov2-giant-nodes.cn-d004 [stderr] [rank", 1)
        for r in (14, 12, 11, 15)
    )
    code, facts = _root(text)
    assert code == "RUN151" and (facts["op"], facts["seq"], facts["host"]) == ("REDUCE", 2070, "cn-d004")
    assert facts["ranks"] == [11, 12, 14, 15] and facts["suspect_ranks"] == [13]


def test_watchdog_record_cut_by_the_paste_still_counts() -> None:
    cut = (
        "[1763]   1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 "
        "ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati"
    )
    code, facts = _root(cut)
    assert code == "RUN151" and facts["rank"] == 5
    # prose about a timeout is no record
    assert (
        _code("I have patched this but Watchdog caught collective operation timeout problems still happen")
        is None
    )


def test_watchdog_thread_exception_without_ran_for() -> None:
    text = (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG 1 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, "
        "NumelOut=443687168, Timeout(ms)=600000) ra"
    )
    code, facts = _root(text)
    assert code == "RUN151" and (facts["seq"], facts["op"], facts["numel_in"]) == (
        199,
        "_REDUCE_SCATTER_BASE",
        7098994688,
    )


def test_watchdog_seq_line_of_newer_torch() -> None:
    text = (
        "[rank5]:[E626 16:48:25.440238649 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) Rank 5]  failure "
        "detected by watchdog at work sequence id: 120049 PG status: last enqueued work: 120051, last completed "
        "work: 120048\n"
    )
    code, facts = _root(text)
    assert code == "RUN151" and (facts["seq"], facts["last_enqueued_seq"], facts["rank"]) == (
        120049,
        120051,
        5,
    )


def test_rank_missing_from_the_timeout_list_is_named() -> None:
    code, facts = _root("\n".join(_wd(r, 88121, "ALLREDUCE") for r in (0, 1, 2, 4, 5, 6, 7)))
    assert code == "RUN151" and facts["suspect_ranks"] == [3]


# --- workers, launchers and their exit records ----------------------------------------------------


@pytest.mark.parametrize(
    "text,code,signal",
    [
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
            "RUN131",
            "SIGBUS",
        ),
        (
            "RuntimeError: DataLoader worker (pid 3855) is killed by signal: Bus error. It is possible that dataloader's "
            "workers are out of shared memory. Please try to raise your shared memory limit.",
            "RUN131",
            "SIGBUS",
        ),
        ("ERROR: Unexpected segmentation fault encountered in worker.", "RUN131", "SIGSEGV"),
        ("RuntimeError: DataLoader worker (pid 7579) is killed by signal: Killed.", "RUN121", "SIGKILL"),
    ],
)
def test_dataloader_worker_deaths(text: str, code: str, signal: str) -> None:
    got, facts = _root(text)
    assert got == code and facts["signal"] == signal


def test_ray_worker_deaths() -> None:
    died = (
        "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
        "the problem, check the logs for the dead worker. RayTask ID: ffff Worker ID: fead Node ID: 201f Worker IP "
        "address: 10.0.7.57 Worker port: 10046"
    )
    code, facts = _root(died)
    assert code == "RUN133" and facts["host"] == "10.0.7.57"
    assert (
        _code(
            "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of "
            "file. (1) The process is killed by SIGKILL by OOM killer due to high memory usage."
        )
        == "RUN133"
    )
    assert (
        _code("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.")
        == "RUN121"
    )


def test_actor_and_engine_worker_deaths_and_scheduler_cancellation() -> None:
    assert (
        _code("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.")
        == "RUN133"
    )
    assert (
        _code(
            "ERROR 01-01 00:00:00 [multiproc_executor.py:140] Worker proc VllmWorker-0 died unexpectedly, "
            "shutting down executor."
        )
        == "RUN133"
    )
    cancel = "slurmstepd: error: *** JOB 1234567 ON gpu-node-17 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***"
    code, facts = _root(cancel)
    assert code == "RUN133" and (facts["reason"], facts["host"]) == ("time limit", "gpu-node-17")
    # after a hang the cancellation is a consequence: the timeout stays the root cause
    assert _code(_wd(3, 11, "ALLREDUCE") + "\n" + cancel) == "RUN151"


def test_native_allocator_abort_interleaved_by_two_ranks() -> None:
    text = (
        "memory allocation of memory allocation of 20971522097152 bytes failed\n bytes failed\n"
        "memory allocation of 2097152 bytes failed\n"
    )
    code, facts = _root(text)
    assert code == "RUN122" and facts["bytes"] == 2097152


@pytest.mark.parametrize(
    "line",
    [
        "slurmstepd: error: Exceeded job memory limit at some point.",
        "Status: Failed\nReason: Evicted\nMessage: The node was low on resource: memory. Container trainer was using "
        "123Gi, which exceeds its request of 0.",
        "slurmstepd: error: Job 4242 exceeded memory limit (134217728 > 125829120), being killed",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=4242.0. Some of your processes may have been killed by the "
        "cgroup out-of-memory handler.",
    ],
)
def test_slurm_memory_limit_kills(line: str) -> None:
    assert _code(line) == "RUN121"


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 236 params, while rank 1 has inconsistent 0 "
        "params.",
        "RuntimeError: [1]: params[0] in this process with sizes [512, 256] appears not to match sizes of the same param in "
        "process 0.",
        "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:510] op.preamble.length <= op.nbytes. 8 vs 4",
    ],
)
def test_ranks_that_disagree_on_the_model_or_the_sizes(line: str) -> None:
    assert _code(line) == "RUN201"


def test_two_ranks_glued_on_one_line_are_split() -> None:
    code, facts = _root(
        "[rank0]: step 41 loss 2.7713[rank1]: RuntimeError: CUDA error: an illegal memory access was "
        "encountered"
    )
    assert code == "RUN244" and facts["rank"] == 1


def test_host_memory_report_at_the_limit_is_host_oom() -> None:
    rep = "[2023-04-07 13:08:55,469] [INFO] [utils.py:838:see_memory_usage] CPU Virtual Memory:  used = {} GB, percent = {}%\n"
    assert _code(rep.format("28.43", "22.6") + rep.format("120.70", "97.9")) == "RUN121"
    assert _code(rep.format("120.70", "97.9") + rep.format("28.43", "22.6")) is None  # memory went down again


def test_teardown_only_excerpts() -> None:
    torchrun = "".join(
        f"> WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {p} closing signal SIGTERM\n"
        for p in (484376, 484377, 484379, 484380)
    )
    code, facts = _root(torchrun)
    assert code == "RUN133" and facts["suspect_pid"] == 484378  # the one that got no SIGTERM
    signalled = "[WARNING] Received 15 death signal, shutting down workers\n" + torchrun
    code, facts = _root(signalled)
    assert code == "RUN133" and facts["launcher_signal"] == "SIGTERM" and "suspect_pid" not in facts
    deepspeed = "".join(
        f"[2022-05-15 00:12:57,785] [INFO] [launch.py:178:sigkill_handler] Killing subprocess {p}\n"
        for p in (97277, 97278)
    )
    code, facts = _root(deepspeed)
    assert code == "RUN133" and facts["killed_pids"] == [97277, 97278] and "suspect_pid" not in facts


@pytest.mark.parametrize(
    "text,code,exitcode",
    [
        (
            "```python\n  rank      : 0 (local_rank: 0)\n  exitcode  : -11 (pid: 6421)\n  error_file: <N/A>\n"
            "  traceback : Signal 11 (SIGSEGV) received by PID 6421\n======\n```",
            "RUN131",
            -11,
        ),
        (
            "[ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 2450457) of binary: "
            "/bin/python Traceback (most recent call last): File /x/launch.py , line 195, in <module> main() raise "
            "ChildFailedError(",
            "RUN121",
            -9,
        ),
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
            "RUN121",
            -9,
        ),
        (
            "subprocess.CalledProcessError: Command '['/usr/bin/python', '-u', 'train.py', '--local_rank=0']' returned "
            "non-zero exit status -9.",
            "RUN121",
            -9,
        ),
        ("deepspeed ds_z3_offload_config单卡全量微调训练glm4出现exits with return code = -9。", "RUN121", -9),
        ("srun: error: node-3: task 5: Out Of Memory", "RUN121", -9),
        # Open MPI's first-failure summary: a shell status 137 is SIGKILL
        (
            "mpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated. "
            "The first process to do so was:\n\n  Process name: [[1234,1],3]\n  Exit code:    137",
            "RUN121",
            -9,
        ),
    ],
)
def test_exit_records_in_every_shape(text: str, code: str, exitcode: int) -> None:
    got, facts = _root(text)
    assert got == code and facts["exitcode"] == exitcode


def test_rocm_allocator_oom_is_cuda_oom() -> None:
    text = (
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 63.98 GiB "
        "of which 0 bytes is free. Of the allocated memory 60.31 GiB is allocated by PyTorch, and 1.55 GiB is reserved "
        "by PyTorch but unallocated."
    )
    code, facts = _root(text)
    assert code == "RUN101" and facts["requested_bytes"] == 2 << 30


# --- paste shapes ----------------------------------------------------------------------------------

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a total capacity of 14.75 GiB "
    "of which 1.66 GiB is free."
)


@pytest.mark.parametrize(
    "text",
    [
        '> Traceback (most recent call last):\n>   File "train.py", line 3, in <module>\n> ' + OOM,
        "| 2024-01-01T12:00:00Z | " + OOM + " |",
        "**" + OOM + "**",
        "`" + OOM + "`",
        "ERROR 04-22 15:53:33 worker_base.py:153] " + OOM,
        "[1763] " + OOM,
        "[trainer0|0]:" + OOM,
        "[pod/trainer-0/pytorch] [rank0]: " + OOM,
        "trainer-1  | " + OOM,
        "[rank: 0] " + OOM,
    ],
)
def test_markdown_table_viewer_and_logger_wrappers(text: str) -> None:
    assert _code(text) == "RUN101"


@pytest.mark.parametrize(
    "prefix", ["[Mon Dec  2 04:00:00 2024] ", "[  +0.000316] ", "Dec  2 04:00:00 node-7 kernel: "]
)
def test_kernel_log_prefixes(prefix: str) -> None:
    code, facts = _root(
        prefix + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."
    )
    assert code == "RUN243" and facts["xid"] == 79


def test_terminal_wrap_mid_word_is_joined() -> None:
    text = (
        "[rank0]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 0] Process group watchdog thread terminated with "
        "exception: CUDA erro\nr: unspecified launch failure\n0: CUDA kernel errors might be asynchronously reported "
        "at some other API call, so the stacktrace below might be incorrect\n.\n"
    )
    assert _code(text) == "RUN244"


# --- causality -------------------------------------------------------------------------------------


def test_the_watchdogs_own_abort_is_a_consequence() -> None:
    text = (
        "(RayWorkerVllm pid=7046) Fatal Python error: Aborted\n(RayWorkerVllm pid=7046)\n"
        "[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: an "
        "illegal memory access was encountered\n"
    )
    assert _code(text) == "RUN244"
    assert _code("Fatal Python error: Aborted\n") == "RUN131"  # alone, the abort is all there is


def test_exception_the_run_survived_does_not_beat_a_later_sigkill() -> None:
    steps = "".join(f"[default0]: step {i} loss 2.0\n" for i in range(100))
    text = (
        '[default0]: Traceback (most recent call last):\n[default0]:   File "eval.py", line 9, in run\n'
        "[default0]: ValueError: bad sample skipped\n"
        + steps
        + "E1003 10:21:08.104000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
        "local_rank: 0 (pid: 81234) of binary: /usr/bin/python3\n"
    )
    code, facts = _root(text)
    assert code == "RUN121" and facts["exitcode"] == -9


def test_a_specific_failure_beats_the_bare_exception_that_carries_it() -> None:
    text = (
        'Traceback (most recent call last):\n  File "torch/cuda/__init__.py", line 108, in _check_driver\n'
        "AssertionError: \nThe NVIDIA driver on your system is too old (found version 9000).\n"
    )
    assert _code(text) == "RUN261"


def test_unrecognised_error_is_an_info_note_and_a_decoy_stays_silent() -> None:
    findings = diagnose_sources([("a.log", "loading shards\nKeyError: 'input_ids'\n")])
    assert [(f.code, f.severity.value) for f in findings] == [("RUN134", "info")]
    assert "KeyError" in findings[0].message
    clean = "[rank0]: step 1 loss 2.4\nUserWarning: TypedStorage is deprecated\n[rank0]: step 2 loss 2.3\n"
    assert diagnose_sources([("b.log", clean)]) == []


def test_traceback_flattened_onto_one_line_is_cut_again() -> None:
    text = (
        'I got this: Traceback (most recent call last):   File "train.py", line 3, in <module>     x = y[5] '
        "IndexError: list index out of range"
    )
    code, facts = _root(text)
    assert (
        code == "RUN132" and facts["exception"] == "IndexError" and facts["frame"] == "train.py:3 in <module>"
    )


def test_accelerate_launcher_exit_record_goes_with_the_users_exception() -> None:
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
        "KeyError: 'labels'\n"
        "subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' returned non-zero exit status 1.\n"
    )
    code, facts = _root(text)
    assert code == "RUN132" and facts["exitcode"] == 1
