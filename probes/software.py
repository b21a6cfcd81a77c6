"""Versions of Python, torch, its CUDA runtime and NCCL.

At quick level torch is not imported: its version comes from the distribution metadata and its
CUDA runtime from torch/version.py read as text. The torch_runtime probe (standard) imports torch
for what only a live import knows: NCCL's version and which backends were compiled in.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import re
from pathlib import Path

from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable, probe

SRC_META = "importlib.metadata"


def _torch_version_file() -> Path | None:
    spec = importlib.util.find_spec("torch")  # does not import torch
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    return path if path.exists() else None


def _field(text: str, name: str) -> str | None:
    m = re.search(rf"^{name}\s*(?::\s*[^=]+)?=\s*(?P<v>.+)$", text, re.MULTILINE)
    if not m:
        return None
    raw = m.group("v").strip()
    if raw == "None":
        return None
    return raw.strip("'\"")


@probe("software", area="software", level="quick")
def software(ctx: ProbeContext) -> list[Measurement]:
    out = [
        Measurement("software.python.version", platform.python_version(), source="platform.python_version"),
        Measurement("software.python.executable", __import__("sys").executable, source="sys.executable"),
    ]
    try:
        torch_version: str | Unavailable = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = Unavailable(Reason.NOT_PRESENT, "no distribution named torch")
    out.append(Measurement("software.torch.version", torch_version, source=SRC_META))
    vfile = _torch_version_file()
    if vfile is None:
        cuda: str | Unavailable | None = Unavailable(Reason.NOT_PRESENT, "torch/version.py not found")
        hip: str | Unavailable | None = cuda
    else:
        text = vfile.read_text(encoding="utf-8", errors="replace")
        cuda, hip = _field(text, "cuda"), _field(text, "hip")
    # None is a real answer here (a CPU build), so it is recorded as null, not Unavailable.
    out.append(Measurement("software.torch.cuda_runtime", cuda, source=f"file:{vfile}" if vfile else ""))
    out.append(Measurement("software.torch.hip_runtime", hip, source=f"file:{vfile}" if vfile else ""))
    for dist in ("nvidia-ml-py", "nvidia-nccl-cu12", "nvidia-nccl-cu11", "nvidia-nccl-cu13"):
        try:
            out.append(
                Measurement(f"software.dist.{dist}", importlib.metadata.version(dist), source=SRC_META)
            )
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


@probe("torch_runtime", area="software", level="standard", timeout_s=30.0)
def torch_runtime(ctx: ProbeContext) -> list[Measurement]:
    if importlib.util.find_spec("torch") is None:
        raise ProbeUnavailable(Reason.NOT_PRESENT, "torch is not installed")
    from pgdoctor.probes.torch_import import import_distributed

    torch, dist = import_distributed(ctx.env)

    src = "torch"
    out = [
        Measurement("software.torch.runtime_version", str(torch.__version__), source="torch.__version__"),
        Measurement(
            "software.torch.distributed_available",
            bool(dist.is_available()),
            source="torch.distributed.is_available",
        ),
    ]
    if dist.is_available():
        out.append(
            Measurement(
                "software.torch.nccl_available",
                bool(dist.is_nccl_available()),
                source="torch.distributed.is_nccl_available",
            )
        )
        out.append(
            Measurement(
                "software.torch.gloo_available",
                bool(dist.is_gloo_available()),
                source="torch.distributed.is_gloo_available",
            )
        )
    nccl: str | Unavailable
    try:
        raw = torch.cuda.nccl.version()
        nccl = ".".join(str(x) for x in raw) if isinstance(raw, tuple) else str(raw)
    except Exception as exc:  # CPU builds raise; the reason is the data
        nccl = Unavailable(Reason.NOT_SUPPORTED, f"{type(exc).__name__}: {exc}".strip())
    out.append(Measurement("software.torch.nccl_version", nccl, source="torch.cuda.nccl.version"))
    out.append(Measurement("software.torch.cuda_compiled", torch.version.cuda is not None, source=src))
    # The cuDNN torch loads (a wheel's or the system's): only a live import knows which; None on
    # a CPU build, where torch has no cuDNN.
    cudnn: int | Unavailable | None
    try:
        cudnn = torch.backends.cudnn.version()
    except Exception as exc:
        cudnn = Unavailable(Reason.ERROR, f"{type(exc).__name__}: {exc}".strip())
    out.append(Measurement("software.torch.cudnn_version", cudnn, source="torch.backends.cudnn.version"))
    return out
