"""What bus bandwidth and latency a collective should reach on this hardware, and why.

Pure: it reads a Topology (built by the check from GPU, InfiniBand and launch measurements) and
returns a number with the sentence that explains it, e.g. "expected >= 360 GB/s: 18 NVLink4
links x 25 GB/s = 450 GB/s per GPU per direction x 0.8 ring efficiency". Line rates are per
direction, which is what busbw is compared with (nccl-tests PERFORMANCE.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

# GB/s per link per direction, by NVLink version as NVML numbers it (nvmlDeviceGetNvLinkVersion):
# NVLink1 (P100) 20; NVLink2 (V100) 25; NVLink3 (A100, 12 links = 300); NVLink4 (H100/H200,
# 18 links = 450); NVLink5 (B200, 18 links = 900).
NVLINK_GBPS_PER_LINK = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 50.0}

# GB/s per lane per direction after line coding: Gen1/2 8b/10b, Gen3+ 128b/130b, Gen6 FLIT.
PCIE_GBPS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


@dataclass(frozen=True)
class Topology:
    """The facts an expectation rests on; None where the snapshot did not measure them."""

    backend: str
    world_size: int
    nodes: int = 1
    gpu_name: Optional[str] = None
    nvlink_links: Optional[int] = None  # active links of one GPU
    nvlink_version: Optional[int] = None
    pcie_gen: Optional[int] = None  # max generation of the GPU's link (idle links downclock)
    pcie_width: Optional[int] = None
    nvswitch: Optional[bool] = None  # GPU 0's links end at a switch (True) or at GPUs (False)
    nvlink_peers: Optional[int] = None  # distinct GPUs GPU 0's links reach directly
    nic_ports: int = 0  # active InfiniBand/RoCE ports on this node
    nic_gbps: float = 0.0  # their summed rate, GB/s per direction
    host_memcpy_gbps: Optional[float] = None


@dataclass(frozen=True)
class Expectation:
    busbw_gbps: Optional[float]
    why: str
    latency_us: Optional[float] = None


def _pcie(t: Topology, cfg: Mapping[str, Any]) -> tuple[Optional[float], str]:
    if t.pcie_gen in PCIE_GBPS_PER_LANE and t.pcie_width:
        lane = PCIE_GBPS_PER_LANE[t.pcie_gen]  # type: ignore[index]
        line = lane * t.pcie_width
        eff = float(cfg["collectives.pcie_efficiency"])
        return (
            line * eff,
            f"PCIe Gen{t.pcie_gen} x{t.pcie_width} = {line:.1f} GB/s per direction x {eff:g} efficiency",
        )
    return None, "no NVLink or PCIe link facts measured (GPU probe)"


def _intra_node(t: Topology, cfg: Mapping[str, Any]) -> tuple[Optional[float], str]:
    local = max(1, t.world_size // max(1, t.nodes))
    if t.nvlink_links and t.nvswitch is False and t.nvlink_peers is not None and t.nvlink_peers + 1 < local:
        # Direct NVLink (bridges, meshes) that does not reach every GPU of the job: the ring
        # has hops over PCIe, which set its pace.
        value, why = _pcie(t, cfg)
        return value, (
            f"NVLink joins GPU 0 to {t.nvlink_peers} of the other {local - 1} GPUs (no NVSwitch), "
            f"so the ring crosses PCIe: {why}"
        )
    if t.nvlink_links and t.nvlink_version in NVLINK_GBPS_PER_LINK:
        per = NVLINK_GBPS_PER_LINK[t.nvlink_version]  # type: ignore[index]
        line = t.nvlink_links * per
        eff = float(cfg["collectives.nvlink_efficiency"])
        via = " via NVSwitch" if t.nvswitch else ""
        return line * eff, (
            f"{t.nvlink_links} NVLink{t.nvlink_version} links{via} x {per:g} GB/s = {line:g} GB/s "
            f"per GPU per direction x {eff:g} ring efficiency"
        )
    return _pcie(t, cfg)


def expected(t: Topology, cfg: Mapping[str, Any]) -> Expectation:
    """The busbw plateau to expect, or None with the reason it cannot be derived."""
    override = float(cfg["collectives.expected_busbw_gbps"])
    latency = _latency(t, cfg)
    if override > 0:
        return Expectation(
            override,
            f"expected >= {override:g} GB/s (collectives.expected_busbw_gbps in the config)",
            latency,
        )
    if t.world_size < 2:
        return Expectation(None, "one rank moves no data between ranks (busbw factor 0)", latency)
    if t.backend == "gloo":
        if not t.host_memcpy_gbps:
            return Expectation(None, "host memory-copy bandwidth was not measured", latency)
        eff = float(cfg["collectives.gloo_efficiency"])
        value = t.host_memcpy_gbps * eff
        return Expectation(
            value,
            f"expected >= {value:.2f} GB/s: gloo over TCP, {eff:g} x the host's measured "
            f"memory-copy bandwidth of {t.host_memcpy_gbps:.1f} GB/s",
            latency,
        )
    intra, why = _intra_node(t, cfg)
    if t.nodes > 1:
        if not t.nic_gbps:
            return Expectation(None, f"{t.nodes} nodes but no active InfiniBand/RoCE port measured", latency)
        eff = float(cfg["collectives.network_efficiency"])
        net = t.nic_gbps * eff
        per_port = t.nic_gbps / max(1, t.nic_ports)
        net_why = f"{t.nic_ports} NIC port(s) x {per_port:g} = {t.nic_gbps:g} GB/s per node x {eff:g}"
        if intra is None or net < intra:
            return Expectation(net, f"expected >= {net:.0f} GB/s across {t.nodes} nodes: {net_why}", latency)
        return Expectation(
            intra,
            f"expected >= {intra:.0f} GB/s: {why} (the network, {net:.0f} GB/s, is not the limit)",
            latency,
        )
    if intra is None:
        return Expectation(None, why, latency)
    gpus = f"{t.world_size} GPUs" + (f" ({t.gpu_name})" if t.gpu_name else "")
    return Expectation(intra, f"expected >= {intra:.0f} GB/s because {gpus}: {why}", latency)


def _latency(t: Topology, cfg: Mapping[str, Any]) -> float:
    if t.backend == "gloo":
        return float(cfg["collectives.expected_latency_us_gloo"])
    if t.nodes > 1:
        return float(cfg["collectives.expected_latency_us_nccl_multinode"])
    return float(cfg["collectives.expected_latency_us_nccl"])
