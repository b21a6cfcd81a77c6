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
