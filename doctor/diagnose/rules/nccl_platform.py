"""driver_env under NCCL: platform features NCCL or its network plugin depends on that the stack
below cannot deliver.

Features NCCL turns on by itself when the hardware claims them (RUN292): NVLink SHARP multicast
(transport/nvls.cc, whose CUCHECK sites are all driver calls on multicast objects - cuMulticastCreate,
cuMulticastAddDevice, cuMulticastBindMem, cuMemMap - answering "operation not supported" / "not
permitted" when the Fabric Manager or IMEX does not provide multicast to this job, and 401 "the
operation cannot be performed in the present state" when the Fabric Manager was restarted under live
GPUs) and DMA-BUF memory registration (misc/ibvwrap.cc: "Call to ibv_reg_dmabuf_mr failed with error
Operation not supported": the kernel or the IB driver lacks it). NCCL_NVLS_ENABLE=0 /
NCCL_DMABUF_ENABLE=0 turn them off. "Cuda failure 1 'invalid argument'" at an nvls.cc line is the same
refusal: CUDA_ERROR_INVALID_VALUE from cuMulticastCreate / cuMemCreate / cuMulticastAddDevice when the
device attribute says multicast but the driver, the Fabric Manager, IMEX or a container without
/dev/nvidia-caps cannot back it (NCCL's own later wording at cuMulticastBindMem: "This is usually caused
by a system or configuration error in the Fabric Manager or NVSwitches"). Every remedy in the threads is
of the platform (restart the Fabric Manager and reset the GPUs, a driver that fits the NCCL, the
container's caps, NCCL_NVLS_ENABLE=0), never of the user's calls: driver_env, not NCCL usage.

The network plugin's provider search (RUN294): aws-ofi-nccl's find_ofi_provider warns "Couldn't find
any optimal provider" when libfabric's fi_getinfo answers -FI_ENODATA for every hint it tries (no EFA
device or driver in this host or container, a libfabric without the provider, or FI_PROVIDER naming
one that is absent). Its own printf ("WARN: Function: find_ofi_provider Line: 543: NET/OFI ...") and,
since the plugin logs through NCCL, "host:pid:tid [0] NCCL WARN NET/OFI Couldn't find any optimal
provider" both say it.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.knowledge.clip import clip

_NVLS_SOURCE = re.compile(r"\btransport/nvls\.cc:\d+|\bNVLS\b.*\b(?:fail|error|not supported)", re.I)
# What the driver answers at nvls.cc's cuMulticast* calls when the fabric cannot give the feature.
_NVLS_REFUSED = re.compile(
    r"not supported|not available|not permitted|[Ff]abric|IMEX|cannot be performed in the present state|"
    r"invalid argument|NVLink SHARP"
)
_DMABUF = re.compile(r"ibv_reg_dmabuf_mr failed|dmabuf\w* .*(?:not supported|failed)", re.I)


def platform_feature(hit: Hit, where: str, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """RUN292 for a feature NCCL turned on that the stack refused (`where`: the line that names the
    source file, `detail`: NCCL's message), else []."""
    feature = (
        "dmabuf"
        if _DMABUF.search(detail)
        else "nvls"
        if (_NVLS_SOURCE.search(where) and _NVLS_REFUSED.search(detail))
        else ""
    )
    if not feature:
        return []
    what = {
        "nvls": "NVLink SHARP multicast (NVLS): the fabric (Fabric Manager / IMEX) does not provide it; "
        "NCCL_NVLS_ENABLE=0 turns it off",
        "dmabuf": "DMA-BUF registration of GPU memory with the NIC: the kernel or the IB driver does not "
        "support it; NCCL_DMABUF_ENABLE=0 turns it off",
    }[feature]
    return [
        event(
            hit,
            C.NCCL_PLATFORM_FEATURE.code,
            f"{hit.who()}: NCCL could not use {what} ({clip(detail, 120)})",
            {**base, "feature": feature},
            used,
            dedupe=(C.NCCL_PLATFORM_FEATURE.code, feature),
        )
    ]


_OFI_NO_PROVIDER = re.compile(r"NET/OFI Couldn't find any optimal provider")


def _ofi_no_provider(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's libfabric plugin (aws-ofi-nccl) found no usable fabric provider: "
            "no EFA device or driver visible here, a libfabric without the provider, or FI_PROVIDER "
            "naming an absent one",
            {"plugin": "aws-ofi-nccl", "reason": "no_libfabric_provider"},
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "libfabric provider missing",
        _OFI_NO_PROVIDER,
        _ofi_no_provider,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"WARN",),
        worth=(rb"WARN",),
        words=("couldn't find any optimal provider",),
        anchor_from="the plugin's 'WARN: Function: ...' or NCCL's 'NCCL WARN' before the message",
        examples=(
            "10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal "
            "provider",
            "node-1:1234:1250 [0] NCCL WARN NET/OFI Couldn't find any optimal provider",
        ),
    ),
)
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
