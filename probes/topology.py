"""PCIe topology of GPUs and NICs from sysfs, in the spirit of `nvidia-smi topo -m`.

GPUs are NVIDIA PCI functions (vendor 0x10de, class 0x0300xx VGA or 0x0302xx 3D controller);
NICs are the PCI functions behind /sys/class/infiniband/* and /sys/class/net/*. The relation of
two devices comes from their sysfs paths (the chain of bridges from the root complex) and NUMA
nodes, with nvidia-smi's legend:

  X    the same device              PIX  at most one PCIe bridge between them
  PXB  several PCIe bridges, same root complex
  PHB  through a PCIe host bridge (same root complex, no shared bridge)
  NODE different host bridges on the same NUMA node
  SYS  different NUMA nodes (crosses the CPU interconnect: QPI/UPI/xGMI)

Where the gpu probe measured NVML's view (gpu.topology), `with_nvml` lets GPU-GPU cells take
NVML's answer and show NV for pairs that NVLink peer access connects. Without NVIDIA GPUs the probe still maps
NICs and NUMA nodes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe
from pgdoctor.probes.ib import PCI_RE, numa_node, pci_address

NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")
RANK = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}
# gpu probe (NVML nvmlDeviceGetTopologyCommonAncestor) level names -> nvidia-smi legend.
NVML_LEVELS = {
    "internal": "X",
    "single": "PIX",
    "multiple": "PXB",
    "hostbridge": "PHB",
    "node": "NODE",
    "system": "SYS",
}


def _read(ctx: ProbeContext, path: str) -> Optional[str]:
    try:
        return ctx.fs.read_stripped(path)
    except OSError:
        return None


def pci_chain(ctx: ProbeContext, pci: str) -> list[str]:
    """Root complex then every bridge down to the device: [pci0000:00, 0000:00:01.0, ..., pci]."""
    real = os.path.realpath(ctx.fs.path(f"/sys/bus/pci/devices/{pci}"))
    parts = real.split(os.sep)
    roots = [i for i, p in enumerate(parts) if p.startswith("pci") and ":" in p]
    if not roots:
        return [pci]
    return [parts[roots[-1]]] + [p for p in parts[roots[-1] + 1 :] if PCI_RE.match(p)]


def relation(a: dict[str, Any], b: dict[str, Any]) -> str:
    ca, cb = a["chain"], b["chain"]
    if a["pci"] == b["pci"]:
        return "X"
    if ca[0] != cb[0]:
        na, nb = a.get("numa_node"), b.get("numa_node")
        return "SYS" if na is not None and nb is not None and na >= 0 and nb >= 0 and na != nb else "NODE"
    common = 0
    for x, y in zip(ca[1:], cb[1:]):
        if x != y:
            break
        common += 1
    if common == 0:
        return "PHB"
    # Bridges each side passes below the shared one; one downstream port per side is one switch.
    below_a, below_b = len(ca) - 2 - common, len(cb) - 2 - common
    return "PIX" if max(below_a, below_b) <= 1 else "PXB"


def gpus(ctx: ProbeContext) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pci in ctx.fs.listdir("/sys/bus/pci/devices"):
        base = f"/sys/bus/pci/devices/{pci}"
        vendor, cls = _read(ctx, f"{base}/vendor"), _read(ctx, f"{base}/class") or ""
        if vendor != NVIDIA_VENDOR or not cls.startswith(GPU_CLASSES):
            continue
        # local_cpulist: the CPUs the kernel counts as close to the device (its NUMA node's),
        # what nvidia-smi topo -m prints as CPU Affinity.
        out.append(
            {
                "name": f"GPU{len(out)}",
                "pci": pci,
                "device_id": _read(ctx, f"{base}/device"),
                "numa_node": numa_node(ctx, pci),
                "cpu_affinity": _read(ctx, f"{base}/local_cpulist"),
                "chain": pci_chain(ctx, pci),
            }
        )
    return out


def nics(ctx: ProbeContext) -> list[dict[str, Any]]:
    """RDMA devices first (NCCL's IB/RoCE transport), then physical Ethernet functions not
    already listed as the netdev of an RDMA device."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for dev in ctx.fs.listdir("/sys/class/infiniband"):
        pci = pci_address(ctx, f"/sys/class/infiniband/{dev}/device")
        if pci:
            out.append(
                {
                    "name": dev,
                    "kind": "rdma",
                    "pci": pci,
                    "numa_node": numa_node(ctx, pci),
                    "cpu_affinity": _read(ctx, f"/sys/bus/pci/devices/{pci}/local_cpulist"),
                    "chain": pci_chain(ctx, pci),
                }
            )
            seen.add(pci)
    for dev in ctx.fs.listdir("/sys/class/net"):
        if not ctx.fs.exists(f"/sys/class/net/{dev}/device"):
            continue  # virtual: lo, veth, bridges, bonds
        pci = pci_address(ctx, f"/sys/class/net/{dev}/device")
        if pci and pci not in seen:
            out.append(
                {
                    "name": dev,
                    "kind": "ethernet",
                    "pci": pci,
                    "numa_node": numa_node(ctx, pci),
                    "cpu_affinity": _read(ctx, f"/sys/bus/pci/devices/{pci}/local_cpulist"),
                    "chain": pci_chain(ctx, pci),
                }
            )
            seen.add(pci)
    return out


def matrix(devs: list[dict[str, Any]], nvml_pairs: Any = None) -> dict[str, Any]:
    m = {
        "devices": [d["name"] for d in devs],
        "cells": [[relation(a, b) for b in devs] for a in devs],
        "numa_nodes": [d.get("numa_node") for d in devs],
        "cpu_affinity": [d.get("cpu_affinity") for d in devs],
    }
    return with_nvml(m, nvml_pairs)


def with_nvml_affinity(m: dict[str, Any], cpus: Mapping[int, Any], numa: Mapping[int, Any]) -> dict[str, Any]:
    """The matrix with each GPU's CPU and NUMA affinity as NVML answered it (the gpu probe's
    gpu.cpu_affinity and gpu.numa_node, by GPU index), where it answered; sysfs's elsewhere."""
    names = m["devices"]
    affinity = list(m.get("cpu_affinity") or [None] * len(names))
    nodes = list(m.get("numa_nodes") or [None] * len(names))
    for i, name in enumerate(names):
        index = int(name[3:]) if name.startswith("GPU") and name[3:].isdigit() else None
        if index is None:
            continue
        if isinstance(cpus.get(index), str) and cpus[index]:
            affinity[i] = cpus[index]
        if isinstance(numa.get(index), int) and not isinstance(numa.get(index), bool):
            nodes[i] = numa[index]
    return {**m, "cpu_affinity": affinity, "numa_nodes": nodes}


def with_nvml(m: dict[str, Any], nvml_pairs: Any) -> dict[str, Any]:
    """The matrix with GPU-GPU cells from the gpu probe's `gpu.topology` pairs (NVML indices are
    PCI-bus order, as the sysfs GPU names are)."""
    if not isinstance(nvml_pairs, list):
        return m
    cells = [list(row) for row in m["cells"]]
    index = {name: i for i, name in enumerate(m["devices"])}
    for p in nvml_pairs:
        ia, ib = index.get(f"GPU{p.get('a')}"), index.get(f"GPU{p.get('b')}")
        if ia is None or ib is None:
            continue
        level = "NV" if p.get("p2p_nvlink") == "ok" else NVML_LEVELS.get(str(p.get("ancestor")))
        if level:
            cells[ia][ib] = cells[ib][ia] = level
    return {**m, "cells": cells}


def format_matrix(m: dict[str, Any]) -> str:
    """Text matrix like `nvidia-smi topo -m`, with its CPU Affinity and NUMA Affinity columns
    (N/A where unknown: a snapshot from before the column, a NUMA node of -1)."""
    names = m["devices"]
    width = max([len(n) for n in names] + [4]) + 2
    cpus = [c if isinstance(c, str) and c else "N/A" for c in m.get("cpu_affinity") or [None] * len(names)]
    cpu_width = max([len(c) for c in cpus] + [len("CPU Affinity")]) + 2
    lines = [
        "".ljust(width)
        + "".join(n.ljust(width) for n in names)
        + "CPU Affinity".ljust(cpu_width)
        + "NUMA Affinity"
    ]
    for name, row, cpu, numa in zip(names, m["cells"], cpus, m["numa_nodes"]):
        node = "N/A" if numa is None or numa < 0 else str(numa)
        lines.append(name.ljust(width) + "".join(c.ljust(width) for c in row) + cpu.ljust(cpu_width) + node)
    return "\n".join(lines)


@probe("topology", area="net", level="quick")
def topology(ctx: ProbeContext) -> list[Measurement]:
    g, n = gpus(ctx), nics(ctx)
    src = "sysfs:/sys/bus/pci/devices"
    driver = _read(ctx, "/sys/module/nvidia/version")
    out = [
        Measurement("topo.gpus", g, source=src),
        Measurement("topo.nics", n, source=src),
        Measurement("topo.matrix", matrix(g + n, None), source=src),
        Measurement(
            "topo.nvidia_driver_version",
            driver
            if driver
            else Unavailable(Reason.DRIVER_NOT_LOADED, "/sys/module/nvidia/version is absent"),
            source="sysfs:/sys/module/nvidia/version",
        ),
    ]
    return out
