"""Families of driver_env / gpu_hardware messages whose variants the rows missed.

- nvidia-smi's "Unable to determine the device handle for GPU<bus id>: <status>" (rules/gpu_nvml.py): the
  status cut from a title or a paste's last line, nvidia-smi.exe's "Unable to detect ..." wording in a
  Windows guest, a bus id masked by the user. Real lines: NVIDIA/open-gpu-kernel-modules#387 (the title),
  jamesstringer90/Easy-GPU-PV#276 (detect), NVIDIA/dcgm-exporter#604 (masked id). The other statuses NVML
  can give ("Insufficient Permissions", "Not Found": a container or a driver not loaded) stay silent.
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
