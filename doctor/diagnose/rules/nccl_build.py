"""nccl_build: an NCCL built with a CUDA that has no code for the GPUs it runs on (driver_env).

Formats (read at their source, NVIDIA/nccl src/init.cc 2.3-2.6): the banner "NCCL version 2.4.8+cuda10.2"
(the CUDA NCCL was compiled with) and the init line "NCCL INFO Using 256 threads, Min Comp Cap 8, Trees
disabled" (2.3-2.6; "INFO Min Comp Cap 3" in 2.1-2.2's format without the NCCL tag): the smallest compute
capability among the communicator's GPUs. A CUDA older than that capability (sm_70 needs CUDA 9.0, sm_80
11.0, sm_90 11.8, sm_100 / sm_120 12.8) compiled no kernels for it, so NCCL's first collective fails with
"no kernel image is available" / "invalid device function" (the A100 under a cu10.x PyTorch). Silent when a
communicator came up or a test ran anyway (a build that carried PTX the driver compiled), and when the banner
is not in the log (RUN265).

The kernels' shared memory (src/enqueue.cc ncclInitKernelsForDevice, called from init.cc's device set-up):
NCCL sizes its kernels' dynamic shared memory for the architectures it was built for and checks it against
the device's opt-in maximum. 2.25 logs "NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem
79856", lowers the attribute and goes on; 2.26-2.28 "NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds
device/fn maxSharedMem 79856" and 2.29+ "NCCL WARN cudaArch 1200 dynamic smem 82240 exceeds device/fn
maxSharedMem 79856" return ncclSystemError: this NCCL does not fit the GPU (a consumer Blackwell, sm_120,
under an NCCL built before it was supported). RUN265; the 2.25 INFO only where no communicator came up (tier
1).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge import nccl_version
from pgdoctor.model import lazy_re

_MIN_COMP_CAP = lazy_re.compile(r"\bMin Comp Cap (?P<cc>\d{1,2})\b")
# The first CUDA release with code for each compute capability's major number.
_CUDA_FOR_CC = {7: (9, 0), 8: (11, 0), 9: (11, 8), 10: (12, 8), 12: (12, 8)}


def _min_comp_cap(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    need = _CUDA_FOR_CC.get(int(m.group("cc")))
    if need is None:
        return []
    built = next(
        (
            v
            for v in (nccl_version.find(ln.text) for ln in [*hit.before(40, same_rank=False), hit.line])
            if v is not None and v.cuda
        ),
        None,
    )
    if built is None or built.cuda is None:
        return []
    parts = [int(x) for x in built.cuda.split(".")[:2] if x.isdigit()]
    if not parts or (parts[0], parts[1] if len(parts) > 1 else 0) >= need:
        return []
    cc = m.group("cc")
    return [
        row.event(
            hit,
            f"NCCL {built.printed} was compiled with CUDA {built.cuda}, which has no code for compute "
            f"capability {cc}.x (that needs CUDA {need[0]}.{need[1]}+): its kernels cannot run on these GPUs "
            "('no kernel image' / 'invalid device function' at the first collective); install a PyTorch or "
            f"NCCL built for CUDA {need[0]}.{need[1]} or newer",
            {
                "compute_capability": int(cc),
                "reason": "nccl_built_for_older_cuda",
                **built.facts(),
                UNTIL_UP: "",
            },
            dedupe=(row.code, "nccl_arch"),
        )
    ]


_SMEM = lazy_re.compile(
    r"(?:cudaArch (?P<arch>\d{3,4}) )?(?:ncclMaxSharedMem|dynamic smem) (?P<need>\d+) exceeds device/fn "
    r"maxSharedMem (?P<have>\d+)"
)


def _smem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    warned = "WARN" in hit.text or m.group("arch") is not None
    facts: dict[str, object] = {
        "reason": "nccl_smem_exceeds_device",
        "shared_mem_needed": int(m.group("need")),
        "shared_mem_device": int(m.group("have")),
    }
    if m.group("arch"):
        facts["cuda_arch"] = int(m.group("arch"))
    if not warned:
        facts[UNTIL_UP] = ""  # 2.25 lowers the limit and goes on: a cause only if no communicator came up
    return [
        row.event(
            hit,
            f"NCCL's kernels need {m.group('need')} bytes of shared memory and this GPU gives "
            f"{m.group('have')}: this NCCL build does not fit the GPU (a GPU newer than the NCCL, e.g. an "
            "RTX 50xx / sm_120 under NCCL < 2.26 or a PyTorch built before CUDA 12.8); install a PyTorch / "
            "NCCL built for this GPU (NCCL 2.26+ with CUDA 12.8+)",
            facts,
            tier=None if warned else 1,
            dedupe=(row.code, "nccl_smem"),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl kernels' shared memory over the device's",
        _SMEM,
        _smem,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"exceeds device/fn maxSharedMem",),
        words=("exceeds device/fn maxsharedmem",),
    ),
    Signature(
        "nccl built for a cuda older than the gpu",
        _MIN_COMP_CAP,
        _min_comp_cap,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"Min Comp Cap ",),
        words=("min comp cap",),
    ),
)
parse = gated_reader(SIGNATURES)
