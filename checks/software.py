"""Software versions: torch present, built for the hardware this host has, new enough."""

from __future__ import annotations

import re

from pgdoctor.checks.base import Config, check, config_key, evidence_of, register_code
from pgdoctor.model import Finding, Snapshot

ENV101 = register_code(
    "ENV101",
    "torch-not-installed",
    "fail",
    "driver_env",
    "PyTorch is not installed in this Python",
    "software",
)
ENV102 = register_code(
    "ENV102",
    "torch-cpu-build-on-gpu-host",
    "fail",
    "driver_env",
    "CPU-only PyTorch build on a host with NVIDIA GPUs",
    "software",
)
ENV103 = register_code(
    "ENV103",
    "torch-older-than-required",
    "warn",
    "driver_env",
    "PyTorch older than the required minimum",
    "software",
)
ENV104 = register_code(
    "ENV104",
    "nccl-unavailable-on-gpu-host",
    "fail",
    "nccl_usage",
    "PyTorch has no NCCL backend on a GPU host",
    "software",
)
ENV105 = register_code(
    "ENV105",
    "torch-distributed-unavailable",
    "fail",
    "driver_env",
    "PyTorch was built without torch.distributed",
    "software",
)

MIN_TORCH = config_key("software.min_torch", str, "2.2", "Oldest torch version accepted without a warning.")


def version_tuple(text: str) -> tuple[int, ...]:
    """`2.13.0+cu124` -> (2, 13, 0); pre-release tags after the numbers are ignored."""
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", text)
    if not m:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(x) for x in m.group(1).split("."))


def gpu_count(snap: Snapshot) -> int:
    """GPUs the kernel driver knows on this host (0 when unknown)."""
    return int(snap.value("host.nvidia.gpu_count", 0) or 0)


@check("software", [ENV101, ENV102, ENV103], needs=["software", "host"])
def torch_build(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    version = snap.get("software.torch.version")
    if version is not None and not version.ok:
        python = snap.value("software.python.executable", "this Python")
        return [
            ENV101.finding(
                f"no torch distribution in {python}, the Python pgdoctor runs in; the pre-flight "
                "judges this environment, so run it in the job's own environment",
                evidence=evidence_of(version),
                facts={"python": python},
            )
        ]
    torch_version = snap.value("software.torch.version")
    cuda = snap.get("software.torch.cuda_runtime")
    gpus = gpu_count(snap)
    if (
        torch_version
        and gpus > 0
        and cuda is not None
        and cuda.ok
        and cuda.value is None
        and not snap.value("software.torch.hip_runtime")
    ):
        out.append(
            ENV102.finding(
                f"torch {torch_version} has no CUDA runtime but this host has {gpus} NVIDIA GPU(s)",
                evidence=evidence_of(version)
                + evidence_of(cuda)
                + evidence_of(snap.get("host.nvidia.gpu_count")),
                facts={"torch_version": torch_version, "gpus": gpus},
            )
        )
    if torch_version:
        minimum = config[MIN_TORCH.name]
        if version_tuple(torch_version) < version_tuple(minimum):
            out.append(
                ENV103.finding(
                    f"torch {torch_version} is older than {minimum}",
                    evidence=evidence_of(version),
                    facts={"torch_version": torch_version, "min_torch": minimum},
                )
            )
    return out


@check("software", [ENV104, ENV105], needs=["torch_runtime", "host"])
def torch_distributed(snap: Snapshot, config: Config) -> list[Finding]:
    dist = snap.get("software.torch.distributed_available")
    if dist is not None and dist.value is False:
        return [ENV105.finding("torch.distributed.is_available() is False", evidence=evidence_of(dist))]
    nccl = snap.get("software.torch.nccl_available")
    compiled = snap.value("software.torch.cuda_compiled")
    if nccl is not None and nccl.value is False and compiled and gpu_count(snap) > 0:
        return [
            ENV104.finding(
                f"torch has CUDA but no NCCL backend, and this host has {gpu_count(snap)} GPU(s)",
                evidence=evidence_of(nccl) + evidence_of(snap.get("host.nvidia.gpu_count")),
            )
        ]
    return []
