"""NVIDIA GPUs as the kernel's PCI bus lists them, independent of the driver and NVML.

This is what tells "no GPU here" (a CPU machine: the GPU area does not apply) from "GPUs here
but NVML cannot see them" (a driver problem, or a GPU that fell off the bus). NVSwitches and
other NVIDIA bridges are not GPUs: only display (0x0300) and 3D (0x0302) controllers count.
"""

from __future__ import annotations

import os

from pgdoctor.model import Measurement, Reason
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe

NVIDIA_VENDOR = "0x10de"
# GPUs handed to virtual machines are not this host's to use: they never show up in NVML here.
PASSTHROUGH_DRIVERS = ("vfio-pci", "pci-stub")
GPU_CLASSES = ("0x0300", "0x0302")
PCI_DEVICES = "/sys/bus/pci/devices"


def _driver(ctx: ProbeContext, dev: str) -> str:
    """The bound driver's name ("" when none is bound, e.g. after the nvidia driver failed to probe)."""
    link = ctx.fs.path(f"{PCI_DEVICES}/{dev}/driver")
    return os.path.basename(os.path.realpath(link)) if os.path.islink(link) else ""


@probe("gpu_pci", area="gpu", level="quick")
def gpu_pci(ctx: ProbeContext) -> list[Measurement]:
    found = []
    for dev in ctx.fs.listdir(PCI_DEVICES):
        try:
            vendor = ctx.fs.read_stripped(f"{PCI_DEVICES}/{dev}/vendor").lower()
            cls = ctx.fs.read_stripped(f"{PCI_DEVICES}/{dev}/class").lower()
        except OSError:
            continue
        if (
            vendor == NVIDIA_VENDOR
            and cls.startswith(GPU_CLASSES)
            and _driver(ctx, dev) not in PASSTHROUGH_DRIVERS
        ):
            found.append(dev)
    if not found:
        raise ProbeUnavailable(Reason.NOT_PRESENT, "no NVIDIA GPU on the PCI bus")
    src = f"sysfs:{PCI_DEVICES}/*/vendor,class"
    return [
        Measurement("gpu.pci.count", len(found), source=src),
        Measurement("gpu.pci.bus_ids", found, source=src),
    ]
