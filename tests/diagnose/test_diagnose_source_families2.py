"""More message families read at their source (continues test_diagnose_source_families.py): each case
is written from the format string of the code that prints it (Open MPI / PRRTE's errmgr help text,
NCCL's transport/nvls.cc CUCHECK sites, the aws-ofi-nccl plugin), with the prefixes and redactions
real logs add."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import root_finding as _root

# -- Open MPI's "noticed that ... exited on signal": 1.2's "job rank", 1.3+ "process rank", PRRTE's prterun ------


@pytest.mark.parametrize(
    ("line", "code", "pid"),
    [
        (
            "mpirun noticed that process rank 1 with PID 4242 on node gpu-3 exited on signal 9 (Killed).",
            "RUN121",
            4242,
        ),
        (
            "mpirun noticed that job rank 1 with PID 4242 on node gpu-3 exited on signal 9 (Killed).",
            "RUN121",
            4242,
        ),
        (
            "prterun noticed that process rank 1 with PID 4242 on node gpu-3 exited on signal 11 (Segmentation fault).",
            "RUN131",
            4242,
        ),
        # a paste with the PID blanked out
        (
            "mpirun noticed that process rank 1 with PID xxxxxx on node gpu-3 exited on signal 9 (Killed).",
            "RUN121",
            None,
        ),
    ],
)
def test_open_mpi_signal_record_in_every_form(line: str, code: str, pid: Any) -> None:
    log = (
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n" + line + "\n"
    )
    root = _root(log)
    assert root is not None and root.code == code
    assert root.facts["rank"] == 1 and root.facts["host"] == "gpu-3" and root.facts.get("pid") == pid


# -- NVLS: the driver's answers at transport/nvls.cc's cuMulticast* calls that name the fabric's side ------------


@pytest.mark.parametrize(
    "prefix", ["", "[2025-07-21 19:05:29] node004:27907:27907 [1] ", "node004:27907:27907 [1] "]
)
@pytest.mark.parametrize(
    "failure",
    [
        "Cuda failure 401 'the operation cannot be performed in the present state'",
        "Cuda failure 800 'operation not permitted'",
        "Cuda failure 'operation not supported'",
    ],
)
def test_nvls_multicast_refused_by_the_fabric_is_driver_env(prefix: str, failure: str) -> None:
    log = (
        f"{prefix}transport/nvls.cc:254 NCCL WARN {failure}\n"
        "node004:27907:27907 [1] NCCL INFO transport/nvls.cc:409 -> 1\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN292" and root.category == "driver_env"
    assert root.facts["feature"] == "nvls"


def test_a_cuda_failure_elsewhere_in_nccl_is_not_nvls() -> None:
    root = _root(
        "node004:27907:27907 [1] enqueue.cc:1100 NCCL WARN Cuda failure 401 "
        "'the operation cannot be performed in the present state'\n"
    )
    assert root is not None and root.code != "RUN292"


# -- aws-ofi-nccl: find_ofi_provider's WARN when libfabric has no provider (fi_getinfo -FI_ENODATA) -------------


@pytest.mark.parametrize(
    "line",
    [
        "10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider",
        "WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider",
        "gpu-7:4711:4790 [0] NCCL WARN NET/OFI Couldn't find any optimal provider",
        "[2024-03-01 10:00:00] gpu-7:4711:4790 [0] NCCL WARN NET/OFI Couldn't find any optimal provider",
    ],
)
def test_libfabric_plugin_without_a_provider_is_driver_env(line: str) -> None:
    log = (
        f"gpu-7:4711:4711 [0] NCCL INFO NET/OFI Setting RDMAV_FORK_SAFE environment variable to 1.\n{line}\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN294" and root.category == "nccl_network"
    assert root.facts["reason"] == "no_libfabric_provider"


def test_libfabric_plugin_that_found_its_provider_is_silent() -> None:
    # the TRACE before the fallback search and a provider found: nothing wrong
    log = (
        "gpu-7:4711:4711 [0] NCCL INFO NET/OFI Could not find any optimal provider supporting GPUDirect RDMA\n"
        "gpu-7:4711:4711 [0] NCCL INFO NET/OFI Selected Provider is efa\n"
    )
    assert _root(log) is None


# -- NCCL's socket layer: misc/socket.cc / net_socket.cc frames return ncclInternalError (3) for socket failures --


@pytest.mark.parametrize("frame", ["misc/socket.cc:47", "transport/net_socket.cc:426", "misc/socket.cc:550"])
def test_return_chain_from_the_socket_layer_is_network(frame: str) -> None:
    log = (
        f"kasago:1001461:1009778 [1] NCCL INFO {frame} -> 3\n"
        "kasago:1001461:1009778 [1] NCCL INFO bootstrap.cc:180 -> 3\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN174" and root.category == "nccl_network"


def test_return_chain_elsewhere_keeps_its_ncclresult() -> None:
    root = _root("kasago:1001461:1009778 [1] NCCL INFO graph/search.cc:1100 -> 3\n")
    assert root is not None and root.code == "RUN192"


@pytest.mark.parametrize("prefix", ["", "[2024-02-01 10:00:00] "])
def test_proxy_service_accept_failure_is_network(prefix: str) -> None:
    root = _root(
        f"{prefix}kasago:1001461:1003249 [1] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Success\n"
    )
    assert root is not None and root.category == "nccl_network"


# -- graph/*.cc WARNs: the ncclResult of the chain below says whether a system call failed -----------------------


def test_topology_warn_that_returned_a_system_error_is_network() -> None:
    log = (
        "bfclient02:14681:14750 [0] graph/xml.cc:332 NCCL WARN Could not find real path of "
        "/sys/class/pci_bus/0000:0d/../../0000:0d:00.0\n"
        "bfclient02:14681:14750 [0] NCCL INFO graph/xml.cc:648 -> 2\n"
        "bfclient02:14681:14750 [0] NCCL INFO graph/topo.cc:523 -> 2\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN171" and root.facts["nccl_result"] == 2


def test_topology_warn_that_returned_an_internal_error_stays_internal() -> None:
    log = (
        "worker-0:75:95 [2] graph/xml.h:101 NCCL WARN Attribute busid of node nic not found\n"
        "worker-0:75:95 [2] NCCL INFO graph/topo.cc:493 -> 3\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN192"
    # the cpu node's arch is written by NCCL's own detection (xml.cc getXmlFromCpu): only a supplied
    # topology XML lacks it, which is the platform's file (RUN302), not an internal error
    root = _root(log.replace("busid of node nic", "arch of node cpu"))
    assert root is not None and root.code == "RUN302"


# -- gloo's TCP transport: GLOO_ERROR_MSG's "[<path>/gloo/transport/tcp/pair.cc:N] " before the text ------------


@pytest.mark.parametrize(
    ("text", "tier0"),
    [
        ("connect [127.0.1.1]:60817: Connection refused", True),
        ("connect [172.31.71.170]:13195: Connection refused", False),
        ("Connection closed by peer [10.0.0.2]:5678", False),
        ("Read error [10.0.0.2]:5678: Connection reset by peer", False),
        ("writev [10.0.0.2]:5678: Broken pipe", False),
        ("Connect timeout [10.0.0.2]:5678", False),
    ],
)
@pytest.mark.parametrize(
    "path",
    ["<some path>/gloo/gloo/transport/tcp/pair.cc:761", "../third_party/gloo/gloo/transport/tcp/pair.cc:598"],
)
def test_gloo_pair_socket_failure_in_every_form(text: str, tier0: bool, path: str) -> None:
    root = _root(f"[{path}] {text}\n")
    assert root is not None and root.code == "RUN174" and root.facts["backend"] == "gloo"
    assert root.facts["peer_port"] == int(text.split("]:")[1].split(":")[0])
    assert (root.facts.get("likely_cause") == "host_name_resolves_to_loopback") == tier0


def test_gloo_recv_timeout_is_not_a_socket_failure() -> None:
    root = _root(
        "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv "
        "operation to complete\n"
    )
    assert root is None or root.code != "RUN174"


# -- os.environ['RANK'] in a script started without a launcher: os.py's __getitem__ raises KeyError ------------


@pytest.mark.parametrize("var", ["RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"])
@pytest.mark.parametrize("quote", ["'", '"'])
def test_launcher_variable_missing_from_the_environment_is_rendezvous(var: str, quote: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 48, in init_dist\n'
        f"    rank = int(os.environ[{quote}{var}{quote}])\n"
        '  File "/usr/lib/python3.8/os.py", line 675, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        f"KeyError: {quote}{var}{quote}\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN224" and root.facts["missing_variable"] == var


def test_another_key_error_stays_a_python_crash() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    lr = cfg['RANKS']\n"
        "KeyError: 'RANKS'\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN224"


# -- NET/IB's size check, 2.8-2.11 wording (no comma, "remote N") and 2.12+ ("remote size N") ------------------


@pytest.mark.parametrize(
    "msg",
    [
        "NET/IB : collective mismatch error local size 131072 remote 0 addr 7f083e630000 rkey 83000 seq 2/2",
        "NET/IB : req 0/1 tag 0 peer 10.0.0.6<58683> collective mismatch error, local size 131072 remote size 0",
    ],
)
@pytest.mark.parametrize("prefix", ["", "node-2:3011:3090 [1] "])
def test_net_ib_collective_size_mismatch_in_every_form(msg: str, prefix: str) -> None:
    root = _root(f"{prefix}NCCL WARN {msg}\n")
    assert root is not None and root.code == "RUN201" and root.category == "collective_mismatch"
    assert (root.facts["bytes"], root.facts["expected_bytes"]) in ((0, 131072), (131072, 0))


# -- a collective the backend does not have: torch 1.x's ProcessGroupNCCL, the base class, 2.x's Backend --------


@pytest.mark.parametrize(
    "text",
    [
        "ProcessGroupNCCL does not support gather",
        "ProcessGroupNCCL does not support recvAnysource",
        "ProcessGroup nccl does not support alltoall",
        "Backend nccl does not support allgather_into_tensor_coalesced",
        "allreduce_coalesced is currently not supported with NCCL",
    ],
)
@pytest.mark.parametrize("prefix", ["RuntimeError: ", "[rank1]: RuntimeError: "])
def test_collective_the_backend_lacks_is_invalid_usage(text: str, prefix: str) -> None:
    root = _root(f"{prefix}{text}\n")
    assert root is not None and root.code == "RUN191" and root.category == "nccl_usage"


# -- Horovod's stall inspector: the old "[missing ranks: N]" per tensor and 0.20+'s "Missing ranks:" table ------

_HVD = (
    "[2021-03-01 10:00:00.000000: W /tmp/pip-req-build/horovod/common/stall_inspector.cc:105] One or more tensors "
    "were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
    "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different "
    "tensors or that only subset of ranks is submitting tensors, which will cause deadlock.\n"
)


@pytest.mark.parametrize(
    ("table", "missing"),
    [
        (
            "Stalled ops:\nHorovodBroadcast_conv1_weights_0 [missing ranks: 0]\nHorovodBroadcast_fc_bias_0 [missing ranks: 0]\n",
            [0],
        ),
        (
            "Missing ranks:\n1: [HorovodAllreduce_grads_0, HorovodAllreduce_grads_1]\n3: [HorovodAllreduce_grads_0]\n",
            [1, 3],
        ),
        ("", None),
    ],
)
def test_horovod_stall_inspector_is_a_desync(table: str, missing: Any) -> None:
    root = _root(_HVD + table)
    assert root is not None and root.code == "RUN201" and root.facts["framework"] == "horovod"
    assert root.facts.get("suspect_ranks") == missing


def test_horovod_stall_after_a_rank_crashed_names_the_crash() -> None:
    log = (
        "[1]<stderr>:Traceback (most recent call last):\n"
        '[1]<stderr>:  File "train.py", line 9, in <module>\n'
        "[1]<stderr>:RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.78 GiB total capacity; "
        "13.20 GiB already allocated; 1.02 GiB free; 13.50 GiB reserved in total by PyTorch)\n"
        + _HVD
        + "Stalled ops:\nHorovodAllreduce_grads_0 [missing ranks: 1]\n"
    )
    root = _root(log)
    assert root is not None and root.category == "cuda_oom"


# -- ROCm's runtime: the hardware-exception and memory-fault handlers -----------------------------------------


@pytest.mark.parametrize("lead", ["", " 41%|████▌     | 366/903 [5:15:39<6:53:09, 46.16s/it]", "Error: "])
def test_rocm_gpu_hang_is_gpu_hardware(lead: str) -> None:
    root = _root(
        f"{lead}HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang\n"
        "Aborted (core dumped)\n"
    )
    assert root is not None and root.code == "RUN295" and root.category == "gpu_hardware"
    assert root.facts["hsa_node"] == 9 and root.facts["reason"] == "GPU Hang"


def test_rocm_ecc_exception_is_an_ecc_error() -> None:
    root = _root("HW Exception by GPU node-2 (Agent handle: 0x55cf74a379c0) reason :ECC error\n")
    assert root is not None and root.code == "RUN242"


def test_rocm_memory_access_fault_is_the_illegal_access_finding() -> None:
    root = _root(
        "Memory access fault by GPU node-1 (Agent handle: 0x55d4f1e0) on address 0x7f1c2a000000. Reason: Page "
        "not present or supervisor privilege.\n"
    )
    assert root is not None and root.code == "RUN244" and root.facts["address"] == "0x7f1c2a000000"


# -- NCCL's size check quoted outside a WARN (a summary, a note): still the mismatch it names --------------------


@pytest.mark.parametrize(
    ("line", "got", "want"),
    [
        ("rank 13: message truncated : receiving 696320 bytes instead of 32768", 696320, 32768),
        ("the job died: collective mismatch error, local size 496640 remote size 65536", 65536, 496640),
    ],
)
def test_nccl_size_check_quoted_in_prose_is_a_mismatch(line: str, got: int, want: int) -> None:
    root = _root(line + "\n")
    assert root is not None and root.code == "RUN201"
    assert (root.facts["bytes"], root.facts["expected_bytes"]) == (got, want)


# -- Open MPI's TCP transport: "peer process has unexpectedly disconnected" (help-mpi-btl-tcp.txt) ------------

_PEER_GONE = (
    "--------------------------------------------------------------------------\n"
    "An MPI communication peer process has unexpectedly disconnected.  This\n"
    "usually indicates a failure in the peer process (e.g., a crash or\n"
    "otherwise exiting without calling MPI_FINALIZE first).\n\n"
    "  Local host: reco-313\n  Local PID:  7720\n  Peer host:  reco-316\n"
    "--------------------------------------------------------------------------\n"
)


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:"])
def test_open_mpi_peer_hung_up_alone_says_a_rank_died(prefix: str) -> None:
    log = "".join(prefix + ln + "\n" for ln in _PEER_GONE.splitlines())
    root = _root(log)
    assert root is not None and root.code == "RUN133" and root.category == "process_crash"
    assert root.facts["peer_host"] == "reco-316"


def test_open_mpi_peer_hung_up_after_an_oom_kill_names_the_kill() -> None:
    log = (
        _PEER_GONE
        + "mpirun noticed that process rank 1 with PID 4242 on node reco-316 exited on signal 9 (Killed).\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN121"


# -- detectron2's launcher: "Process group URL: <dist_url>" at ERROR when init_process_group raised -------------


@pytest.mark.parametrize(
    "line",
    [
        "ERROR [01/24 21:11:46 d2.engine.launch]: Process group URL: None",
        "[01/24 21:11:46] d2.engine.launch ERROR: Process group URL: None",
        "2024-01-24 21:11:46 | ERROR | yolox.core.launch:120 - Process group URL: None",
    ],
)
def test_detectron2_launch_without_a_dist_url_is_rendezvous_config(line: str) -> None:
    root = _root(line + "\nTraceback (most recent call last):\nException: \n")
    assert root is not None and root.code == "RUN224" and root.facts["init_method"] is None
    assert root.facts["launcher"] == ("detectron2" if "d2." in line else "a copy of detectron2's launch.py")


def test_detectron2_url_line_with_a_url_is_left_to_the_error_after_it() -> None:
    root = _root("ERROR [01/24 21:11:46 d2.engine.launch]: Process group URL: tcp://127.0.0.1:50152\n")
    assert root is None or root.code != "RUN224"
