"""Interconnect presets: per-direction bandwidth and per-message latency of a link.

`line_gbps` is the link's per-direction line rate in GB/s (bytes, decimal). `busbw_gbps` is
the ring all-reduce bus bandwidth such a link reaches in practice (nccl-tests' definition:
time = bytes x 2(n-1)/n / busbw), which is what the planner divides by. `latency_us` is the
cost of one step of a ring (one message hop), the α of the α-β model; a ring all-reduce over
n ranks pays 2(n-1) of them.

For NICs the numbers are per port (one NIC); a node with several NICs multiplies them
(--nics-per-node).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    name: str
    line_gbps: float
    busbw_gbps: float
    latency_us: float
    scope: str  # "intra" (inside a node) or "inter" (between nodes)
    source: str

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


PRESETS: dict[str, Link] = {
    # NVLink: per-GPU per-direction rate = links x per-link rate (NVIDIA A100/H100/B200 datasheets:
    # 600/900/1800 GB/s bidirectional). Achieved ring busbw: nccl-tests all_reduce_perf plateaus,
    # 8xA100 ~230 GB/s, 8xH100 ~370 GB/s without NVLink SHARP; NVLink5 assumed at the same 82%.
    "nvlink3": Link(
        "nvlink3", 300.0, 230.0, 2.0, "intra", "A100: 12 links x 25 GB/s; nccl-tests ~230 GB/s busbw"
    ),
    "nvlink4": Link(
        "nvlink4", 450.0, 370.0, 2.0, "intra", "H100/H200: 18 links x 25 GB/s; nccl-tests ~370 GB/s busbw"
    ),
    "nvlink5": Link(
        "nvlink5", 900.0, 740.0, 2.0, "intra", "B200: 18 links x 50 GB/s; busbw assumed 82% as NVLink4"
    ),
    # AMD Infinity Fabric (MI300X): 7 links x 64 GB/s per direction to the 7 peers; RCCL's ring
    # all-reduce on 8 GPUs reaches ~70% of it (assumed, as NVLink's measured share).
    "xgmi3": Link(
        "xgmi3", 448.0, 315.0, 3.0, "intra", "MI300X: 7 x 64 GB/s Infinity Fabric; busbw assumed 70%"
    ),
    # PCIe x16: 16 GT/s (Gen4) or 32 GT/s (Gen5) x 16 lanes x 128/130 encoding; GPU-to-GPU through
    # a PCIe switch or the CPU root complex reaches ~75-80% of it in nccl-tests (p2p or SHM).
    "pcie4": Link("pcie4", 31.5, 24.0, 5.0, "intra", "Gen4 x16 16 GT/s x 16 x 128/130; ~24 GB/s measured"),
    "pcie5": Link("pcie5", 63.0, 48.0, 5.0, "intra", "Gen5 x16 32 GT/s x 16 x 128/130; ~48 GB/s measured"),
    # InfiniBand: HDR 200 Gb/s and NDR 400 Gb/s per port per direction; one NDR NIC reaches
    # 46-49 GB/s busbw in nccl-tests between two nodes, HDR ~23-24 GB/s. Latency: NCCL's
    # network step on IB is a few microseconds (ib_write_lat itself ~1-2 us).
    "ib-hdr": Link("ib-hdr", 25.0, 23.5, 5.0, "inter", "HDR 200 Gb/s per port; ~23.5 GB/s busbw per NIC"),
    "ib-ndr": Link("ib-ndr", 50.0, 47.0, 5.0, "inter", "NDR 400 Gb/s per port; ~46-49 GB/s busbw per NIC"),
    # Ethernet through the kernel TCP stack (NCCL socket transport or gloo): goodput ~94% of
    # line rate (1500-byte MTU framing), and tens of microseconds per message.
    "eth-100g": Link(
        "eth-100g", 12.5, 10.0, 20.0, "inter", "100 Gb/s; TCP sockets reach ~80% with NCCL's socket transport"
    ),
    "eth-10g": Link("eth-10g", 1.25, 1.17, 30.0, "inter", "10 Gb/s; TCP goodput ~9.4 Gb/s"),
    "eth-1g": Link("eth-1g", 0.125, 0.1175, 50.0, "inter", "1 Gb/s; TCP goodput ~940 Mb/s"),
}

DEFAULT_INTRA = "nvlink4"
DEFAULT_INTER = "ib-ndr"


def get(name: str) -> Link:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown interconnect {name!r} (known: {', '.join(PRESETS)})") from None


def measured(name: str, busbw_gbps: float, latency_us: float, scope: str, source: str) -> Link:
    """A link described by a measurement instead of a datasheet."""
    return Link(name, busbw_gbps, busbw_gbps, latency_us, scope, source)
