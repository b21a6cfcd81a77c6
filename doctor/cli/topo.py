"""`pgdoctor topo`: the GPU/NIC topology matrix of this node (or of a snapshot), in the spirit of
`nvidia-smi topo -m`, from sysfs PCI paths and NUMA nodes; GPU-GPU cells from NVML when the gpu
probe can run (or the snapshot has its `gpu.topology`)."""

from __future__ import annotations

import os
from typing import Any, Optional

import click

from pgdoctor.cli import emit_json
from pgdoctor.engine.errors import UserError
from pgdoctor.model import Measurement, Snapshot, SnapshotFormatError

LEGEND = ("X = self, NV = NVLink peer access, PIX = at most one PCIe bridge, PXB = several PCIe bridges, "
          "PHB = through the PCIe host bridge, NODE = across host bridges within a NUMA node, "
          "SYS = across NUMA nodes")


def _live() -> list[Measurement]:
    from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
    from pgdoctor.probes.gpu.health import gpu_probe
    from pgdoctor.probes.topology import topology

    ctx = ProbeContext(env=dict(os.environ), level="quick")
    out = topology(ctx)
    try:
        out += [m for m in gpu_probe(ctx) if m.key == "gpu.topology"]
    except ProbeUnavailable:
        pass  # no NVML: GPU-GPU cells stay as sysfs sees them
    return out


def _from(path: str) -> list[Measurement]:
    try:
        with open(path, encoding="utf-8") as fh:
            snap = Snapshot.loads(fh.read())
    except OSError as exc:
        raise UserError(f"cannot read snapshot {path}: {exc.strerror}") from None
    except SnapshotFormatError as exc:
        raise UserError(f"{path}: {exc}") from None
    return [m for m in snap.measurements() if m.key in ("topo.matrix", "topo.gpus", "topo.nics", "gpu.topology")]


@click.command()
@click.option("--from", "from_path", type=click.Path(dir_okay=False), default=None,
              help="Print the topology recorded in a snapshot instead of this node's.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def topo(from_path: Optional[str], as_json: bool) -> None:
    """Print the GPU/NIC topology matrix (PCIe paths and NUMA nodes)."""
    from pgdoctor.probes.topology import format_matrix, with_nvml

    found = {m.key: m.value for m in (_from(from_path) if from_path else _live())}
    matrix: Any = found.get("topo.matrix")
    if not isinstance(matrix, dict):
        raise UserError("no topology in this snapshot (it was collected without the net area)")
    matrix = with_nvml(matrix, found.get("gpu.topology"))
    if as_json:
        emit_json({"matrix": matrix, "gpus": found.get("topo.gpus", []), "nics": found.get("topo.nics", [])})
        return
    if not matrix["devices"]:
        click.echo("no NVIDIA GPU and no PCI NIC on this node (nothing of vendor 0x10de or a network class in "
                   "/sys/bus/pci/devices)")
        return
    if not found.get("topo.gpus"):
        click.echo("no NVIDIA GPU on this node (no PCI device of vendor 0x10de in /sys/bus/pci/devices): "
                   "the matrix below has the NICs only\n")
    click.echo(format_matrix(matrix))
    click.echo(f"\n{LEGEND}")
