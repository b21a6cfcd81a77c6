"""Families of driver_env / gpu_hardware messages whose variants the rows missed.

- nvidia-smi's "Unable to determine the device handle for GPU<bus id>: <status>" (rules/gpu_nvml.py): the
  status cut from a title or a paste's last line, nvidia-smi.exe's "Unable to detect ..." wording in a
  Windows guest, a bus id masked by the user. Real lines: NVIDIA/open-gpu-kernel-modules#387 (the title),
  jamesstringer90/Easy-GPU-PV#276 (detect), NVIDIA/dcgm-exporter#604 (masked id). The other statuses NVML
  can give ("Insufficient Permissions", "Not Found": a container or a driver not loaded) stay silent.
- The NCCL / c10d availability probes of a PyTorch build answering False (rules/build_probes.py):
  torch.distributed.is_nccl_available(), torch.cuda.nccl.is_available(tensors) (torch/cuda/nccl.py, whose
  warning "PyTorch is not compiled with NCCL support" may stand between the call and its answer) and
  torch.distributed.is_available(). Real session: NVIDIA/nccl#1561 (Jetson wheel); the print forms are
  synthetic, built from the calls. The nccl.py warning alone stays silent (DataParallel on Windows asks it
  and runs on).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding


@pytest.mark.parametrize(
    "log",
    [
        # NVIDIA/open-gpu-kernel-modules#387: the title
        "Unable to determine the device handle for GPU",
        "Unable to determine the device handle for GPU0000:03:00.0:",
        "$ nvidia-smi\nUnable to determine the device handle for GPU 0000:0B:00.0\n",
        '"Unable to determine the device handle for GPU 0000:0B:00.0"',
        # jamesstringer90/Easy-GPU-PV#276: nvidia-smi.exe in a Hyper-V guest
        "Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error",
        # NVIDIA/dcgm-exporter#604: the title, bus id masked
        "Unable to determine the device handle for ******: Unknown Error how to monitor",
        "Unable to determine the device handle for GPU1: 0000:02:00.0: GPU is lost.  Reboot the system",
    ],
)
def test_device_handle_variants_are_a_lost_gpu(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN243" and root.category == "gpu_hardware", (log, root)


@pytest.mark.parametrize(
    "log",
    [
        "Unable to determine the device handle for GPU 0000:0B:00.0: Insufficient Permissions",
        "Unable to determine the device handle for GPUs in a container, how do I mount them?",
        "Unable to determine the device handle for GPU happens only after reboot",
    ],
)
def test_device_handle_other_statuses_and_prose_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN243", (log, root)


_JETSON = (
    ">>> import torch\n"
    ">>> torch.distributed.is_available( )\n"
    "True\n"
    ">>> torch.distributed.is_nccl_available()\n"
    "False\n"
)
_NCCL_PY = (
    ">>> torch.cuda.nccl.is_available(torch.randn(1).cuda())\n"
    "/usr/local/lib/python3.8/dist-packages/torch/cuda/nccl.py:15: UserWarning: PyTorch is not compiled with "
    "NCCL support\n"
    "  warnings.warn('PyTorch is not compiled with NCCL support')\n"
    "False\n"
)


@pytest.mark.parametrize(
    ("log", "library"),
    [
        (_JETSON, "NCCL"),  # NVIDIA/nccl#1561
        (_NCCL_PY, "NCCL"),  # NVIDIA/nccl#1561, the second probe
        ("print(torch.distributed.is_nccl_available())\nFalse\n", "NCCL"),
        ("torch.distributed.is_nccl_available(): False\n", "NCCL"),
        ("dist.is_nccl_available() = False\n", "NCCL"),
        (">>> torch.distributed.is_available()\nFalse\n", "torch.distributed"),
    ],
)
def test_backend_probe_answering_false_is_a_build_without_it(log: str, library: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN263" and root.category == "driver_env", (log, root)
    assert root.facts["library"] == library


@pytest.mark.parametrize(
    "log",
    [
        ">>> torch.distributed.is_nccl_available()\nTrue\n",
        "torch.distributed.is_nccl_available(): True\n",
        "if torch.distributed.is_nccl_available():\n    backend = 'nccl'\nelse:\n    backend = 'gloo'\n",
        ">>> torch.cuda.is_available()\nFalse\n",  # no GPU: not this row's
        # DataParallel on a Windows build asks torch.cuda.nccl and runs on without it
        "C:\\Python\\lib\\site-packages\\torch\\cuda\\nccl.py:15: UserWarning: PyTorch is not compiled "
        "with NCCL support\n  warnings.warn('PyTorch is not compiled with NCCL support')\n"
        "Epoch 1: loss 0.41\n",
    ],
)
def test_backend_probe_answering_true_or_the_warning_alone_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN263", (log, root)


# cuda-samples' p2pBandwidthLatencyTest, NVIDIA/nccl#257 (4x GTX 1080 Ti, IOMMU on): pairs across the two
# switches CANNOT
_P2P_CANNOT = (
    "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
    "Device: 0, GeForce GTX 1080 Ti, pciBusID: 83, pciDeviceID: 0, pciDomainID:0\n"
    "Device=0 CAN Access Peer Device=1\n"
    "Device=0 CANNOT Access Peer Device=2\n"
    "Device=0 CANNOT Access Peer Device=3\n"
    "Device=1 CAN Access Peer Device=0\n"
    "Device=1 CANNOT Access Peer Device=2\n"
)
# pytorch/pytorch#1637: the test stops after its first matrix header
_P2P_STOPPED = (
    "P2P Connectivity Matrix\n"
    "     D\\D     0     1\n"
    "     0\t     1     1\n"
    "     1\t     1     1\n"
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1\n"
)
# NVIDIA/TensorRT-LLM#1374: cuda-python's probe in a REPL
_CUDA_PYTHON_PROBE = (
    ">>> from cuda import cudart\n"
    ">>> error, result = cudart.cudaDeviceCanAccessPeer(0, 1)\n"
    ">>> print(error)\n"
    "cudaError_t.cudaSuccess\n"
    ">>> print(result)\n"
    "0\n"
)


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        (_P2P_CANNOT, "p2p_refused"),
        (_P2P_STOPPED, "p2p_test_stopped"),
        (
            _P2P_STOPPED.replace("Unidirectional P2P=Disabled", "Bidirectional P2P=Enabled"),
            "p2p_test_stopped",
        ),
        (_CUDA_PYTHON_PROBE, "p2p_refused"),
        # simpleP2P's lines (synthetic, from the sample's printf formats)
        ("> Peer access from Tesla K80 (GPU0) -> Tesla K80 (GPU1) : No\n", "p2p_refused"),
        (
            "Two or more GPUs with Peer-to-Peer access capability are required for simpleP2P.\n"
            "Peer to Peer access is not available amongst GPUs in the system, waiving test.\n",
            "p2p_refused",
        ),
        (">>> torch.cuda.can_device_access_peer(0, 1)\nFalse\n", "p2p_refused"),
        ("cudaDeviceCanAccessPeer(0, 1) = 0\n", "p2p_refused"),
    ],
)
def test_p2p_tests_that_say_the_platform_refuses_it(log: str, reason: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN590" and root.category == "driver_env", (log, root)
    assert root.facts["reason"] == reason


def test_p2p_cannot_names_the_pairs() -> None:
    root = root_finding(_P2P_CANNOT)
    assert root is not None and root.facts["pairs"] == 3 and root.facts["gpus"] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "log",
    [
        "Device=0 CAN Access Peer Device=1\nDevice=1 CAN Access Peer Device=0\n",
        "> Peer access from Tesla K80 (GPU0) -> Tesla K80 (GPU1) : Yes\n",
        ">>> torch.cuda.can_device_access_peer(0, 1)\nTrue\n",
        "if torch.cuda.can_device_access_peer(0, 1):\n    model = model.to('cuda:1')\n",
        # the matrix header with its rows, then the next matrix: the test went on
        "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 528.41  10.86\n"
        "     1  10.92 530.05\nUnidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
        "   D\\D     0      1\n     0 529.37  11.61\n     1  11.56 531.28\n",
    ],
)
def test_p2p_tests_that_pass_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN590", (log, root)


# chenhang98/BPR#25 (Colab, elastic agent's "Signal 9 (SIGKILL)" in the title): the log stops at tcmalloc's
# report, glued to the progress bar's last line
_TCMALLOC_COLAB = (
    "load checkpoint from local path: /content/drive/MyDrive/BPR/hrnet18s_coco-c172955f.pth\n"
    "[>>] 265813/265813, 23.2 task/s, elapsed: 11473s, ETA:     0stcmalloc: large alloc 1453056000 bytes == "
    "0x55764ff10000 @  0x7fcd6cfe02a4 0x5573dd2994cc 0x5573dd3551a2 0x5573dd34d7df\n"
)


@pytest.mark.parametrize(
    ("log", "failed"),
    [
        (_TCMALLOC_COLAB, False),
        # synthetic, from src/tcmalloc.cc's format: two reports, the second failed ((nil))
        (
            "tcmalloc: large alloc 2147483648 bytes == 0x7f0000000000 @  0x7f 0x55\n"
            "tcmalloc: large alloc 4294967296 bytes == (nil) @  0x7f 0x55\n",
            True,
        ),
    ],
)
def test_log_that_stops_at_tcmalloc_large_allocs_is_host_oom(log: str, failed: bool) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN121" and root.category == "host_oom", (log, root)
    assert root.facts["alloc_failed"] is failed


def test_tcmalloc_large_alloc_in_a_run_that_goes_on_stays_silent() -> None:
    log = (
        "tcmalloc: large alloc 1453056000 bytes == 0x55764ff10000 @  0x7fcd6cfe02a4\n"
        "Epoch 1 loss 0.31\nEpoch 2 loss 0.22\nEpoch 3 loss 0.17\nEpoch 4 loss 0.15\nsaved checkpoint\n"
    )
    assert root_finding(log) is None
