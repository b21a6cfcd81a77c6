"""Families of the released v14 held-out half (group oom_net_misc), read at their sources:

- c10d reducer.cpp ensure_prior_reduction_finished's detail lines alone ("Parameters which did not receive
  grad for rank 1: ...", "Parameter indices which did not receive grad for rank 0: 3 4"), as an issue's
  title writes them (lower case, the list left off): RUN202;
- c10d TraceUtils.h retrieveDesyncReport (TORCH_NCCL_DESYNC_DEBUG, built only after a collective timed
  out): its report lines and its internal asserts, raised through the watchdog or caught by
  ProcessGroupNCCL ("Failed to retrieve TORCH_NCCL_DESYNC_DEBUG report"): RUN151.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

UNUSED = [
    ("Parameters which did not receive grad for rank 3: head.fc.weight, head.fc.bias", {"rank": 3}),
    ("Parameter indices which did not receive grad for rank 0: 12 13 14", {"rank": 0}),
    ("parameters which did not receive grad for rank 1", {"rank": 1}),
    ("Parameter indices which did not receive grad for rank 2", {"rank": 2}),
    ("RuntimeError: DDP fails: Parameters which did not receive grad for rank 5:", {"rank": 5}),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("line", "facts"), UNUSED)
def test_reducer_unused_parameter_lines_alone(prefix: str, line: str, facts: dict[str, object]) -> None:
    _check(prefixed(prefix, line), "RUN202", facts)


DESYNC = [
    (
        "[I ProcessGroupNCCL.cpp:854] [Rank 0] NCCL watchdog thread terminated with exception: "
        "traceMap[thisSeq][myRank].second == kEventStart INTERNAL ASSERT FAILED at "
        '"/opt/pytorch/torch/csrc/distributed/c10d/TraceUtils.h":237, please report a bug to PyTorch. '
        "Timeout rank [0] last trace item must be kEventStart. thisSeq = 57, col = ALLREDUCE",
        {"seq": 57, "op": "ALLREDUCE", "rank": 0},
    ),
    (
        "[E ProcessGroupNCCL.cpp:1300] [PG 0 Rank 2] Failed to retrieve TORCH_NCCL_DESYNC_DEBUG report.  "
        "Please file an issue. Error: Timeout rank [2] must have collective tracking iteam in c10::Store "
        "trace",
        {},
    ),
    (
        "[E ProcessGroupNCCL.cpp:470] [Rank 1] Failed to retrieve NCCL_DESYNC_DEBUG report.  Please file an "
        "issue. Error: Trace shouldn't be empty while enabled GLOO_ASYNC_TIMEOUT_DEBUG",
        {},
    ),
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 3] \n\t - [3] Timeout at collective: BROADCAST, #12\n\t - To our "
        "best knowledge, ranks [1, 2] are the lagging ranks that caused this timeout. They never joined "
        "any collectives",
        {"seq": 12, "op": "BROADCAST", "rank": 3},
    ),
    (
        "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
        "\t   - [2] joined but didn't finish collective #88 (count from 1)\n"
        "\t     [0, 1, 3] finished collective #88, but didn't join collective #89 (count from 1)",
        {},
    ),
    (
        "Exception raised from retrieveDesyncReport at /opt/pytorch/torch/csrc/distributed/c10d/TraceUtils.h:"
        "237 (most recent call first):",
        {},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[rank0]:", "2024-03-01 10:00:00 "])
@pytest.mark.parametrize(("log", "facts"), DESYNC)
def test_desync_debug_report_is_a_timeout(prefix: str, log: str, facts: dict[str, object]) -> None:
    _check(prefixed(prefix, log), "RUN151", facts)


# NCCL 2.7-2.11 bootstrap.cc ncclRemoteMemAllocationService: a peer's socket closed, the size read next is
# garbage, and include/alloc.h's OOM follows on the service's thread (returned through bootstrap.cc).
REM_ALLOC = (
    "gpu-a:39:298 [0] include/socket.h:423 NCCL WARN Net : Connection closed by remote peer 10.0.0.4<52638>\n"
    "gpu-a:39:298 [0] NCCL INFO include/socket.h:445 -> 2\n"
    "gpu-a:39:298 [0] NCCL INFO bootstrap.cc:229 -> 2\n"
    "gpu-a:39:298 [0] bootstrap.cc:279 NCCL WARN [Rem Allocator] Allocation failed (segment 0, fd 130)\n"
    "gpu-a:39:298 [0] include/alloc.h:48 NCCL WARN {oom}\n"
    "gpu-a:39:298 [0] NCCL INFO bootstrap.cc:231 -> 1\n"
    "gpu-a:39:298 [0] bootstrap.cc:279 NCCL WARN [Rem Allocator] Allocation failed (segment 0, fd 130)\n"
    "Train Epoch: 1 [0/246000 (0%)]\tLoss: 0.0367\n"
)


@pytest.mark.parametrize(
    "oom", ["Cuda failure 'out of memory'", "Failed to CUDA calloc 2305843009213693952 bytes"]
)
@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "worker-1: "])
def test_nccl_remote_allocator_garbage_size_is_not_a_gpu_oom(oom: str, prefix: str) -> None:
    root = _root(prefixed(prefix, REM_ALLOC.format(oom=oom).rstrip("\n")))
    assert root is not None and root.category == "nccl_network", root


def test_nccl_oom_outside_the_allocator_service_stays_an_oom() -> None:
    log = (
        "node1:100:100 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n"
        "node1:100:100 [0] NCCL INFO channel.cc:30 -> 1\n"
        "node1:100:100 [0] NCCL INFO init.cc:400 -> 1\n"
    )
    root = _root(log)
    assert root is not None and root.category == "cuda_oom", root


# XLA's report of the buffers live when an allocation failed, printed under its OOM only, kept in part.
XLA_REPORTS = [
    "BufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    6.00MiB",
    'Peak buffers:\n\tBuffer 1:\n\t\tSize: 6.00MiB\n\t\tOperator: op_name="jit(step)/jit(main)/dot_general" '
    'source_file="/w/model.py" source_line=689\n\t\tXLA Label: concatenate\n\t\tShape: f32[4096,128,3]\n'
    "\t\t==========================",
    "\tBuffer 13:\n\t\tSize: 96.00MiB\n\t\tXLA Label: fusion\n\t\tShape: bf16[128,6,256,256]",
    "  Largest program allocations in hbm:\n\n  1. Size: 4.00G\n     Shape: f32[32768,32768]{1,0}\n"
    "     Unpadded size: 4.00G\n     XLA label: fusion.1 = fusion(%p0, %p1), kind=kOutput\n"
    "     Allocation type: HLO temp",
    "Program hbm requirement 19.11G:\n    global           1.61M\n    HLO temp         19.10G",
    "Ran out of memory in memory space vmem. Exceeded vmem capacity by 2.5M.",
]


@pytest.mark.parametrize("prefix", ["", "(MeshHostWorker pid=489) ", "[1,0]<stderr>:"])
@pytest.mark.parametrize("log", XLA_REPORTS)
def test_xla_oom_buffer_report_is_a_device_oom(prefix: str, log: str) -> None:
    root = _root(prefixed(prefix, log))
    assert root is not None and root.category == "cuda_oom", root


# An issue's title names an OOM by the training phase it struck in, without the device.
PHASE_TITLES = [
    '"out of memory" during validation',
    "OOM after first epoch with DDP",
    "Out of memory in backward pass on 8 cards",
    "out of memory when fine-tuning the 13B model",
    "[Bug] Out Of Memory at inference after training",
]


@pytest.mark.parametrize("title", PHASE_TITLES)
def test_title_naming_an_oom_by_its_training_phase(title: str) -> None:
    root = _root(title)
    assert root is not None and root.category == "cuda_oom", root


@pytest.mark.parametrize(
    "title",
    [
        "Process killed: out of memory during training",
        "RAM out of memory during validation",
        "dataloader worker out of memory during eval",
        "how to avoid out of memory during training",
        "training runs fine, no OOM, but the loss is nan",
    ],
)
def test_titles_of_host_memory_or_questions_are_not_a_device_oom(title: str) -> None:
    root = _root(title)
    assert root is None or root.category != "cuda_oom", root


# oneCCL's ATL over libfabric: a provider found whose device refused it (ATL_OFI_CALL on fi_domain,
# fi_scalable_ep, fi_endpoint..., or the psm3 provider's verbs QP) is the network device; no provider at all
# (fi_getinfo -61, "can't create providers for name shm") stays the missing provider (RUN294).
_CCL = "2025:05:23-19:04:20:(168955) |CCL_ERROR| "
CCL_DEVICE = [
    (
        _CCL
        + "atl_ofi_helper.cpp:1635 atl_ofi_open_nw_provs: can not open network providers\n"
        + _CCL
        + "atl_ofi.cpp:237 init: can't find suitable provider\n"
        + _CCL
        + "atl_ofi_helper.cpp:1204 atl_ofi_prov_init: fi_scalable_ep(prov->domain, info, &prov->sep, "
        "nullptr)\n fails with ret: -12, strerror: Cannot allocate memory",
        {"ofi_call": "fi_scalable_ep", "fi_errno": -12},
    ),
    (
        _CCL + "atl_ofi_helper.cpp:1190 atl_ofi_prov_init: fi_domain(prov->fabric, info, &prov->domain, "
        "nullptr) fails with ret: -13, strerror: Permission denied",
        {"ofi_call": "fi_domain", "fi_errno": -13},
    ),
    (
        _CCL + "atl_ofi_helper.cpp:1384 atl_ofi_open_nw_provs: can not open network providers\n"
        "[1748048660.727622923] node2:rank3.python: Failed to modify UD QP to INIT on mlx5_0: Operation not "
        "permitted",
        {"problem": "ofi_device_refused"},
    ),
]


@pytest.mark.parametrize(("log", "facts"), CCL_DEVICE)
def test_oneccl_provider_refused_by_its_device_is_the_network(log: str, facts: dict[str, object]) -> None:
    _check(log + "\n", "RUN365", facts)


def test_oneccl_without_any_provider_stays_the_missing_provider() -> None:
    log = (
        _CCL
        + "atl_ofi_helper.cpp:867 atl_ofi_get_prov_list: fi_getinfo error: ret -61, providers 0\n"
        + _CCL
        + "atl_ofi_helper.cpp:907 atl_ofi_get_prov_list: can't create providers for name shm\n"
        + _CCL
        + "atl_ofi_helper.cpp:1243 atl_ofi_open_nw_provs: atl_ofi_get_prov_list(ctx, prov_name, "
        "base_hints, &prov_list)\n fails with status: 1\n"
        + _CCL
        + "atl_ofi_helper.cpp:1384 atl_ofi_open_nw_provs: can not open network providers\n"
        + _CCL
        + "atl_ofi.cpp:243 init: can't find suitable provider\n"
    )
    _check(log, "RUN294", {"provider": "shm"})


@pytest.mark.parametrize(
    "line",
    [
        "[1748048660.727622923] hedp017:rank7.python: Failed to modify UD QP to INIT on mlx5_2: "
        "Operation not permitted",
        "node3:rank0.python: Failed to modify RC QP to RTR on mlx5_1:1: Connection timed out",
        "node3:rank0.python: Unable to create UD QP on mlx5_0: Cannot allocate memory",
    ],
)
def test_psm3_verbs_queue_pair_failures(line: str) -> None:
    _check(line + "\n", "RUN173")


# CUDA IPC between ranks of a node (Open MPI smcuda / common_cuda, UCX cuda_ipc): the peer's GPU memory
# cannot be mapped here, the refusal NCCL's P2P transport meets too (RUN291).
CUDA_IPC = [
    "[clima.gps.caltech.edu:3667226] Failed to register remote memory, rc=-1",
    "clima.gps.caltech.edu:3667226] Failed to register remote memory, rc=-1",
    "The call to cuIpcOpenMemHandle failed. This is an unrecoverable error and will cause the program to "
    "abort.\n  cuIpcOpenMemHandle return value:   205\n  address: 0x200200000",
    "[1700000000.123456] [node1:4242:0]  cuda_ipc_cache.c:183  UCX  ERROR cuIpcOpenMemHandle() failed: "
    "invalid argument",
]


@pytest.mark.parametrize("prefix", ["", "[1,2]<stderr>:", "srun: "])
@pytest.mark.parametrize("log", CUDA_IPC)
def test_mpi_cuda_ipc_to_a_peer_rank(prefix: str, log: str) -> None:
    _check(prefixed(prefix, log), "RUN291", {"transport": "cuda_ipc"})


def test_mpi_cuda_ipc_handle_export_warning_is_not_a_failure() -> None:
    log = (
        "The call to cuIpcGetMemHandle failed. This means the GPU RDMA protocol cannot be used.\n"
        "  cuIpcGetMemHandle return value:   1\n"
    )
    assert _root(log) is None


# MPICH's ch4:ofi netmod (Intel MPI, Cray MPICH) at MPI_Init with no libfabric provider: RUN294.
MPICH_OFI = [
    "Abort(2138767) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Unknown error class, error "
    "stack:\nMPIR_Init_thread(189)........: \nMPID_Init(1561)..............: \n"
    "MPIDI_OFI_mpi_init_hook(1584): \nopen_fabric(2663)............: \n"
    "find_provider(2819)..........: OFI fi_getinfo() failed (ofi_init.c:2819:find_provider:No data "
    "available)",
    "Fatal error in PMPI_Init_thread\nMPIDI_OFI_mpi_init_hook\nopen_fabric(1559): OFI fi_getinfo() failed "
    "(ofi_init.c:1559:open_fabric:No data available)",
    "find_provider (2684)..........:\nOFI fi_getinfo() failed (ofi_init.c:2684:find_provider:",
]


@pytest.mark.parametrize("log", MPICH_OFI)
def test_mpich_ofi_without_a_provider(log: str) -> None:
    _check(log + "\n", "RUN294", {"library": "mpich_ofi"})


QUIET = [
    # healthy: the reducer's setting and DDP's docs words, not its error
    "find_unused_parameters=True: parameters which did not receive grad are skipped in the all-reduce",
    "[I ProcessGroupNCCL.cpp:700] [Rank 0] ProcessGroupNCCL initialized with following options: "
    "TORCH_NCCL_DESYNC_DEBUG: 1",
    "TORCH_NCCL_DESYNC_DEBUG=1 prints a desync report after a timeout",
    "XLA label names are shown by the memory viewer",
    "Memory requirement of the program: 5G (fits)",
    "psm3 QP to INIT transition took 3 ms",
    "send fails with ret: 0 retries left 3",
]


@pytest.mark.parametrize("log", QUIET)
def test_look_alikes_stay_quiet(log: str) -> None:
    assert _root(log + "\n") is None
