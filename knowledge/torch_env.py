"""Environment values that make `import torch.distributed` itself fail, read at their source.

c10d reads TORCH_DISTRIBUTED_DEBUG when torch.distributed is first imported, upper-cases it and
throws unless it is OFF, INFO or DETAIL; a second import in the same process then aborts the
whole interpreter in pybind ("cannot initialize type ... already defined"). So the value is
judged before anything imports torch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

DIST_DEBUG_LEVELS = ("OFF", "INFO", "DETAIL")


def torch_import_problem(env: Mapping[str, str]) -> Optional[str]:
    """Why importing torch.distributed would fail in this environment, or None."""
    raw = env.get("TORCH_DISTRIBUTED_DEBUG")
    if raw is not None and raw.strip() and raw.strip().upper() not in DIST_DEBUG_LEVELS:
        return (
            f"TORCH_DISTRIBUTED_DEBUG={raw!r} makes import torch.distributed fail "
            f"(it accepts {', '.join(DIST_DEBUG_LEVELS)})"
        )
    return None
