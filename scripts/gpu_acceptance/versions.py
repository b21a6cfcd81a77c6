"""Prints, as one JSON object, where this run happens: host, GPU, driver, torch, CUDA, NCCL.

Every recorded fixture carries this (as its "source"), so a reader knows which node said it.
"""

from __future__ import annotations

import json
import platform
import socket
import subprocess
import sys
import time
from typing import Any


def node() -> dict[str, Any]:
    out: dict[str, Any] = {
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        import torch

        out["torch"] = torch.__version__
        out["cuda"] = torch.version.cuda
        out["cuda_available"] = torch.cuda.is_available()
        if torch.cuda.is_available():
            out["gpu"] = torch.cuda.get_device_name(0)
            out["gpu_count"] = torch.cuda.device_count()
        try:
            v = torch.cuda.nccl.version()
            out["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except Exception as exc:  # a CPU build has no NCCL: say so, do not fail
            out["nccl"] = f"unavailable ({type(exc).__name__})"
    except ImportError as exc:
        out["torch"] = f"unavailable ({exc})"
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        out["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        out["nvidia_smi"] = f"unavailable ({exc})"
    return out


def source_line(info: dict[str, Any]) -> str:
    return (
        f"recorded on {info.get('host')} ({info.get('gpu', 'no GPU')}; nvidia-smi: {info.get('nvidia_smi')}; "
        f"torch {info.get('torch')}, CUDA {info.get('cuda')}, NCCL {info.get('nccl')}) at {info.get('date')} "
        f"by scripts/gpu-acceptance.sh"
    )


if __name__ == "__main__":
    json.dump(node(), sys.stdout, indent=1)
    print()
