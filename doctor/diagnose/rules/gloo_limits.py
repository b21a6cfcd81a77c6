"""gloo_limits: a process group on gloo (or MPI) was given an argument only NCCL takes (RUN367, driver_env).

Formats, read at the source: torch.distributed.barrier (distributed_c10d.py 1.x) raises "RuntimeError:
Function argument device_ids not supported for the selected backend gloo" ("... backend mpi" likewise) when
device_ids is passed to a group that is not NCCL's. yolov5's, YOLOv6's and ultralytics'
torch_distributed_zero_first call dist.barrier(device_ids=[local_rank]) unconditionally, so the job fails
there once it runs on gloo: native Windows (torch has no NCCL there, the scripts fall back to gloo), macOS, a
CPU node or a CPU-only torch.
A collective that gloo lacks ("ProcessGroupGloo does not support reduce_scatter") is the job's use of the
backend, nccl_usage's, not this row's.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_DEVICE_IDS = lazy_re.compile(
    r"Function argument (?P<arg>device_ids) not supported for the selected backend (?P<backend>\w+)"
)


def _device_ids(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    backend = m.group("backend").lower()
    return [
        row.event(
            hit,
            f"{hit.who()}: barrier(device_ids=...) is NCCL-only and the job runs on {backend} (native "
            "Windows, macOS or a CPU / NCCL-less torch falls back to it): run on Linux / WSL2 with "
            f"backend='nccl', or call barrier() without device_ids on {backend}",
            {"backend": backend, "argument": m.group("arg")},
            dedupe=(row.code, backend),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl-only argument on another backend",
        _DEVICE_IDS,
        _device_ids,
        C.GLOO_REJECTS_NCCL_ARGUMENT.code,
        anchors=(b"not supported for the selected backend",),
        words=("not supported for the selected backend",),
    ),
)
parse = gated_reader(SIGNATURES)
