"""The platform refusing what the job's libraries ask of it (rules/platform_signs.py and the retyped
peer-access texts of knowledge/cuda_errors.py), session of 2026-12-07, rule writer r1, read at the messages' sources:

- NCCL's P2P transport refused by CUDA ("Could not enable P2P between dev ..."), and cuda-samples'
  p2pBandwidthLatencyTest showing P2P slower than the host path: RUN590 (warn, tier 2);
- aws-ofi-nccl's fi_setopt refused by an older libfabric ("NET/OFI Couldn't set FI_OPT_..."): RUN591;
- libfabric's memory registration failing ("Unable to register MR ...: Bad address"): RUN385;
- torch's expandable-segments IPC needing pidfd_getfd / pidfd_open: RUN366;
- a script's own `assert torch.cuda.device_count() > local_rank` (YOLO's "insufficient CUDA devices for DDP
  command"): RUN264; a title naming "invalid device ordinal": RUN264;
- submitit outside Slurm (LocalExecutor, JobEnvironment): RUN550;
- NCCL's P2P transport error chain with result 1 and nothing said before it: RUN291;
- lmdeploy TurboMind's Windows barrier stub (tensor parallelism on Windows): RUN334;
- cudaErrorPeerAccessUnsupported as titles retype it ("... between two devices"): RUN291.
Each row has near-misses: healthy or unrelated lines with the same words that stay without a failure.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, prefixed, root_finding

PREFIXES = ["", "[rank1]: ", "node7: ", "(RayWorkerWrapper pid=1234) "]

P2P_REFUSED = (
    "ava-s0:537555:537626 [2] NCCL INFO Could not enable P2P between dev 2(=3d000) and dev 3(=3e000)\n"
    "ava-s0:537555:537626 [2] NCCL INFO Could not enable P2P between dev 5(=89000) and dev 4(=88000)\n"
)

BW_HEAD = """[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA RTX A6000, pciBusID: 3, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA RTX A6000, pciBusID: 21, pciDeviceID: 0, pciDomainID:0
Device=0 CAN Access Peer Device=1
Device=1 CAN Access Peer Device=0
P2P Connectivity Matrix
     D\\D     0     1
     0\t     1     1
     1\t     1     1
"""
BW_BROKEN = (
    BW_HEAD
    + """Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 673.20  13.15
     1  12.99 673.20
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 673.49   2.60
     1   2.12 672.33
"""
)
BW_HEALTHY = (
    BW_HEAD
    + """Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 673.20  13.15
     1  12.99 673.20
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 673.49  25.10
     1  24.90 672.33
Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 680.11  17.02
     1  16.87 679.90
Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
   D\\D     0      1
     0 681.00  50.12
     1  50.33 680.54
"""
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_nccl_p2p_refused_by_the_platform(prefix: str) -> None:
    check_root(
        prefixed(prefix, P2P_REFUSED.rstrip("\n")), "RUN590", {"reason": "p2p_refused", "gpus": [2, 3]}
    )


def test_p2p_bandwidth_test_slower_with_p2p() -> None:
    check_root(BW_BROKEN, "RUN590", {"reason": "p2p_slower_than_host", "gpus": [1, 0], "pairs": 2})


def test_p2p_refused_stays_behind_a_real_error() -> None:
    log = (
        "node1:15874:17284 [4] NCCL INFO Could not enable P2P between dev 4(=61000) and dev 3(=42000)\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3\n"
        "Last error:\nNet : Call to recv from 10.0.0.2<56843> failed : Connection refused\n"
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN590", root


@pytest.mark.parametrize(
    "log",
    [
        # NCCL's topology notice on boards whose driver disables P2P (RTX 4090): every healthy run prints it
        "host:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. You can repress this "
        "message with NCCL_IGNORE_DISABLED_P2P=1.\n",
        "host:182125:182125 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n",
        "host:17102:17338 [1] NCCL INFO Channel 00/0 : 1[1c0] -> 0[1b0] via P2P/IPC\n",
        "host:17102:17338 [1] NCCL INFO P2P Chunksize set to 524288\n",
        BW_HEALTHY,
        # (the test's output that stops at its first matrix header is no longer here: a released thread,
        # v21F-driver_env-002, shows it is the copies that hung, RUN590 p2p_test_stopped, test_s25_r2_families)
    ],
)
def test_p2p_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log) == []


OFI_SETOPT = [
    "configure_sendrecv_inorder:213 NCCL WARN NET/OFI Couldn't set FI_OPT_E",
    "ip-10-0-1-5:1234:1290 [0] nccl_net_ofi_rdma.c:6120 NCCL WARN NET/OFI Couldn't set "
    "FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES. RC: -92, ERROR: Protocol not available",
    "ip-10-0-1-5:1234:1290 [0] nccl_net_ofi_rdma.c:5901 NCCL WARN NET/OFI Couldn't set FI_OPT_CUDA_API_PERMITTED. "
    "RC: -92, ERROR: Protocol not available",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", OFI_SETOPT)
def test_ofi_plugin_libfabric_option_rejected(prefix: str, line: str) -> None:
    check_root(prefix + line + "\n", "RUN591", {"library": "aws-ofi-nccl"})


@pytest.mark.parametrize(
    "log",
    [
        "ip-10-0-1-5:1234:1234 [0] NCCL INFO NET/OFI Setting FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES not "
        "supported.\n",
        "ip-10-0-1-5:1234:1234 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)\n",
    ],
)
def test_ofi_plugin_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log) == []


FI_MR = [
    "libfabric:6413:1763620725::efa:mr:efa_mr_reg_impl():849<warn> Unable to register MR of 146800640 bytes: "
    "Bad address, ibv pd: 0x7f2128005540, total mr reg size 79699968, mr reg count 3",
    "libfabric:6413:1763620725::efa:mr:efa_mr_regattr():1003<warn> Unable to register MR: Bad address",
    "libfabric:811:1700000000::verbs:mr:vrb_mr_reg_common():120<warn> Unable to register MR: Cannot allocate memory",
]


@pytest.mark.parametrize("line", FI_MR)
def test_libfabric_memory_registration_failed(line: str) -> None:
    check_root(line + "\n", "RUN385", {"library": "libfabric"})


@pytest.mark.parametrize(
    "log",
    [
        # libfabric falls back to cudaMemcpy after these two: alone they are no failure
        "libfabric:6413:1763620725::core:core:cuda_gdrcopy_dev_register():320<warn> gdr_pin_buffer failed! error: "
        "Invalid argument ptr: 0xdc12000000 len: 146800640\n",
        "libfabric:6413:1763620725::efa:mr:efa_mr_hmem_setup():231<warn> Unable to register handle for GPU memory. "
        "err: 22 buf: 0xdc12000000 len: 146800640\n",
        "libfabric:6413:1763620725::efa:mr:efa_mr_reg_impl():862<info> Registered memory at 0x7f2279f80800 of size "
        "8192 for ibv pd 0x7f212800d7c0, total mr reg size 79699968, mr reg count 3\n",
    ],
)
def test_libfabric_registration_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log) == []


PIDFD = [
    (
        "(VllmGenerationWorker pid=36530) Error in VllmInternalWorkerExtension.update_weights_from_ipc_handles: "
        "pidfd_getfd: Operation not permitted",
        {"syscall": "pidfd_getfd", "error": "Operation not permitted"},
    ),
    ("RuntimeError: pidfd_open: Operation not permitted", {"syscall": "pidfd_open"}),
    (
        "RuntimeError: The kernel on this machine does not support the pidfd_getfd syscall needed to use IPC for "
        "CUDA tensors when expandable_segments:True is set. Consider using expandable_segments:False",
        {"syscall": "pidfd_getfd"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,facts", PIDFD)
def test_expandable_segments_ipc_syscall(prefix: str, line: str, facts: dict[str, object]) -> None:
    check_root(prefix + line + "\n", "RUN366", {"reason": "expandable_segments_ipc", **facts})


@pytest.mark.parametrize(
    "log",
    [
        "INFO: using pidfd_getfd to share file descriptors between workers\n",
        "checking for pidfd_open... yes\n",
    ],
)
def test_pidfd_near_misses_stay_silent(log: str) -> None:
    assert failure_findings(log) == []


RANK_ASSERT = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 543, in <module>\n'
    "    assert torch.cuda.device_count() > opt.local_rank\n"
    "AssertionError\n"
)
YOLOV5_ASSERT = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 640, in <module>\n'
    "    main(opt)\n"
    '  File "train.py", line 527, in main\n'
    "    assert torch.cuda.device_count() > LOCAL_RANK, 'insufficient CUDA devices for DDP command'\n"
    "AssertionError: insufficient CUDA devices for DDP command\n"
)


@pytest.mark.parametrize("prefix", ["", "[rank3]: "])
@pytest.mark.parametrize("log", [RANK_ASSERT, YOLOV5_ASSERT])
def test_scripts_local_rank_gpu_check(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log.rstrip("\n")), "RUN264", {"reason": "fewer_gpus_than_local_ranks"})


def test_local_rank_check_passing_in_a_listing_stays_silent() -> None:
    # the source line quoted in a listing of the script, no assertion raised after it
    log = "    if rank == 0:\n        assert torch.cuda.device_count() > opt.local_rank\n    torch.cuda.set_device(0)\n"
    assert failure_findings(log) == []


SUBMITIT = [
    "ValueError: LocalExecutor can use only one node. Use nodes=1",
    "RuntimeError: Could not figure out which environment the job is runnning in. Known environments: slurm, "
    "local, controller.",
]


@pytest.mark.parametrize("line", SUBMITIT)
def test_submitit_without_slurm(line: str) -> None:
    check_root(line + "\n", "RUN550", {"library": "submitit"})


def test_submitit_local_executor_at_work_stays_silent() -> None:
    log = "Submitted job 12345 with LocalExecutor (nodes=1, gpus_per_node=8)\n"
    assert failure_findings(log) == []


P2P_CHAIN = (
    "[2025-03-18 21:25:59] nickelpie-job-0:1:92 [0] NCCL INFO transport/p2p.cc:352 -> 1\n"
    "[2025-03-18 21:25:59] nickelpie-job-0:1:92 [0] NCCL INFO transport/p2p.cc:489 -> 1\n"
    "[2025-03-18 21:25:59] nickelpie-job-0:1:92 [0] NCCL INFO transport.cc:197 -> 1\n"
)


def test_nccl_p2p_transport_chain() -> None:
    check_root(P2P_CHAIN, "RUN291", {"reason": "p2p_transport_cuda_failure"})


def test_p2p_chain_after_a_warn_that_says_more_is_that_warns() -> None:
    log = (
        "host:1:92 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n"
        "host:1:92 [0] NCCL INFO transport/p2p.cc:352 -> 1\n"
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN291", root


def test_p2p_chain_of_another_result_is_not_the_platforms() -> None:
    log = "host:1:92 [0] NCCL INFO transport/p2p.cc:352 -> 2\nhost:1:92 [0] NCCL INFO transport.cc:197 -> 2\n"
    root = root_finding(log)
    assert root is None or root.code != "RUN291", root


TM_BARRIER = [
    "RuntimeError: [TM][ERROR]  Assertion fail: D:\\a\\lmdeploy\\lmdeploy\\src/turbomind/models/llama/Barrier.h:20",
    "[TM][ERROR]  Assertion fail: C:\\build\\lmdeploy\\src\\turbomind\\utils\\Barrier.h:21",
]


@pytest.mark.parametrize("line", TM_BARRIER)
def test_turbomind_windows_barrier(line: str) -> None:
    check_root(line + "\n", "RUN334", {"platform": "windows"})


def test_turbomind_other_assertion_is_not_the_barrier() -> None:
    log = (
        "RuntimeError: [TM][ERROR]  Assertion fail: /lmdeploy/src/turbomind/models/llama/LlamaBatch.cc:311\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN334", root


@pytest.mark.parametrize(
    "title",
    [
        "Distributed Training: invalid device ordinal",
        "invalid device ordinal when training on 2 nodes",
        "[Bug] Invalid device ordinal with torchrun --nproc_per_node 8",
    ],
)
def test_invalid_device_ordinal_title(title: str) -> None:
    check_root(title + "\n", "RUN264", {"read_as": "title"})


def test_invalid_device_ordinal_in_prose_of_a_log_stays_silent() -> None:
    log = "step 10 loss 1.23\nnote: a wrong CUDA_VISIBLE_DEVICES list gives invalid device ordinal\nstep 11 loss 1.22\n"
    assert failure_findings(log) == []


@pytest.mark.parametrize(
    "title",
    [
        "peer access is not supported between two devices",
        "peer access not supported between these two devices",
        "[TensorRT-LLM] peer access is not supported between the two devices on 2x A30",
    ],
)
def test_peer_access_retyped(title: str) -> None:
    check_root(title + "\n", "RUN291")


def test_peer_access_retyped_in_a_warning_stays_silent() -> None:
    log = "warning: failed to enable p2p on gpu #0: peer access is not supported between two devices\n"
    assert failure_findings(log) == []


IMBALANCE = (
    "UserWarning: \n"
    "    There is an imbalance between your GPUs. You may want to exclude GPU 4 which\n"
    "    has less than 75% of the memory or cores of GPU 0. You can do so by setting\n"
    "    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES\n"
    "    environment variable.\n"
    "  warnings.warn(imbalance_warn.format(device_ids[min_pos], device_ids[max_pos]))\n"
)
NCCL_ERROR_1 = "terminate called after throwing an instance of 'std::runtime_error'\n  what():  NCCL Error 1: unhandled cuda error\n"


def test_dataparallel_over_mixed_gpus_then_nccl_cuda_error() -> None:
    check_root(IMBALANCE + NCCL_ERROR_1, "RUN335", {"reason": "mixed_gpu_models", "odd_gpu": 4})


def test_imbalance_warning_alone_stays_silent() -> None:
    assert failure_findings(IMBALANCE + "Epoch 1/10: loss 0.53\n") == []


def test_nccl_error_1_without_the_warning_stays_nccls() -> None:
    check_root(NCCL_ERROR_1 + "Aborted (core dumped)\n", "RUN194")
