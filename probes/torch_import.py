"""Importing torch.distributed is a probe step that can fail: this is the one place probes do it.

A failed import is remembered and never retried in the same process (a retry aborts the
interpreter), and values known to break it are refused before the first try, so the rest of
the report survives."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Optional

from pgdoctor.knowledge.torch_env import torch_import_problem
from pgdoctor.model import Reason
from pgdoctor.probes.base import ProbeUnavailable

_LOCK = threading.Lock()
_FAILED: Optional[str] = None


def import_distributed(env: Mapping[str, str]) -> tuple[Any, Any]:
    """(torch, torch.distributed), or ProbeUnavailable with the reason."""
    global _FAILED
    problem = torch_import_problem(env)
    if problem:
        raise ProbeUnavailable(Reason.ERROR, problem)
    with _LOCK:
        if _FAILED:
            raise ProbeUnavailable(Reason.ERROR, _FAILED)
        try:
            import torch
            import torch.distributed as dist
        except ImportError as exc:
            raise ProbeUnavailable(Reason.LIBRARY_NOT_FOUND, f"torch is not importable: {exc}") from None
        except Exception as exc:  # torch's own init raised: keep the reason, never import again
            _FAILED = (
                f"import torch.distributed failed: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            )
            raise ProbeUnavailable(Reason.ERROR, _FAILED) from None
    return torch, dist
