"""`pgdoctor topo`: the GPU/NIC topology matrix of this node (or of a snapshot), in the spirit of
`nvidia-smi topo -m`, from sysfs PCI paths and NUMA nodes; GPU-GPU cells from NVML when the gpu
probe can run (or the snapshot has its `gpu.topology`)."""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from pgdoctor.cli import NamedPath, emit_json
from pgdoctor.engine.errors import UserError
from pgdoctor.model import Measurement

LEGEND = (
    "X = self, NV = NVLink peer access, PIX = at most one PCIe bridge, PXB = several PCIe bridges, "
    "PHB = through the PCIe host bridge, NODE = across host bridges within a NUMA node, "
    "SYS = across NUMA nodes"
)


KEYS = ("topo.matrix", "topo.gpus", "topo.nics", "gpu.topology", "gpu.cpu_affinity", "gpu.numa_node")


def _live(ctx: Any = None) -> list[Measurement]:
    """This node's topology (sysfs), with NVML's GPU-GPU levels and CPU/NUMA affinity where the
    gpu probe answers. `ctx` is a ProbeContext (tests give fixture trees and NVML replays)."""
    from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
    from pgdoctor.probes.gpu.health import gpu_probe
    from pgdoctor.probes.topology import topology

    ctx = ctx or ProbeContext(env=dict(os.environ), level="quick")
    out = topology(ctx)
    try:
        out += [m for m in gpu_probe(ctx) if m.key in KEYS]
    except ProbeUnavailable:
        pass  # no NVML: cells and affinity stay as sysfs sees them
    return out


def _from(path: str) -> list[Measurement]:
    from pgdoctor.cli.check import load_snapshot  # one reader of named snapshots: /dev/zero never hangs

    return [m for m in load_snapshot(path).measurements() if m.key in KEYS]


@click.command()
@click.option(
    "--from",
    "from_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="Print the topology recorded in a snapshot instead of this node's.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def topo(from_path: Optional[str], as_json: bool) -> None:
    """Print the GPU/NIC topology matrix (PCIe paths, CPU and NUMA affinity)."""
    show(
        _from(from_path) if from_path else _live(),
        as_json,
        "in this snapshot" if from_path else "on this node",
    )


def show(measurements: list[Measurement], as_json: bool, where: str) -> None:
    from pgdoctor.probes.topology import format_matrix, with_nvml, with_nvml_affinity

    found = {
        m.key: m.value
        for m in measurements
        if m.key in ("topo.matrix", "topo.gpus", "topo.nics", "gpu.topology")
    }
    matrix: Any = found.get("topo.matrix")
    if not isinstance(matrix, dict):
        raise UserError("no topology in this snapshot (it was collected without the net area)")
    if not _sound(matrix):
        raise UserError(
            f"the topology {where} is damaged (topo.matrix is not what the topology probe writes)"
        )
    per_gpu: dict[str, dict[int, Any]] = {"gpu.cpu_affinity": {}, "gpu.numa_node": {}}
    for m in measurements:
        if m.key in per_gpu and m.scope.gpu_index is not None and m.ok:
            per_gpu[m.key][m.scope.gpu_index] = m.value
    matrix = with_nvml_affinity(
        with_nvml(matrix, found.get("gpu.topology")), per_gpu["gpu.cpu_affinity"], per_gpu["gpu.numa_node"]
    )
    if as_json:
        emit_json({"matrix": matrix, "gpus": found.get("topo.gpus", []), "nics": found.get("topo.nics", [])})
        return
    if not any(str(name).startswith("GPU") for name in matrix["devices"]):
        nics = [
            f"{n} (NUMA {numa})" if isinstance(numa, int) and numa >= 0 else str(n)
            for n, numa in zip(matrix["devices"], matrix["numa_nodes"])
        ]
        click.echo(f"no NVIDIA GPU {where}" + (f"; PCI NICs: {', '.join(nics)}" if nics else ""))
        return
    click.echo(format_matrix(matrix))
    click.echo(f"\n{LEGEND}")


def _sound(matrix: dict[str, Any]) -> bool:
    """The shape the topology probe writes: device names, and a row of cells per device. A snapshot
    edited or damaged otherwise (`"topo.matrix": {"a": [1]}`) was an internal error (KeyError)."""
    devices, cells = matrix.get("devices"), matrix.get("cells")
    return (
        isinstance(devices, list)
        and all(isinstance(d, str) for d in devices)
        and isinstance(cells, list)
        and len(cells) == len(devices)
        and all(isinstance(row, list) and len(row) == len(devices) for row in cells)
        and all(isinstance(matrix.get(k), (list, type(None))) for k in ("numa_nodes", "cpu_affinity"))
    )
