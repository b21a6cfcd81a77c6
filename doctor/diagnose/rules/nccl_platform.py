"""driver_env under NCCL: platform features NCCL or its network plugin depends on that the stack
below cannot deliver.

Features NCCL turns on by itself when the hardware claims them (RUN292; also cudart's 800 "operation not
permitted" / 801 "operation not supported" at any other CUDACHECK, e.g. init.cc on a VMware vGPU without
UVM, or cuMem handle export in a container): NVLink SHARP multicast (transport/nvls.cc, whose CUCHECK
sites are all driver calls on multicast objects - cuMulticastCreate, cuMulticastAddDevice,
cuMulticastBindMem, cuMemMap - answering "operation not supported" / "not permitted" when the Fabric
Manager or IMEX does not provide multicast to this job, and 401 "the operation cannot be performed in the
present state" when the Fabric Manager was restarted under live GPUs) and DMA-BUF memory registration
(misc/ibvwrap.cc: "Call to ibv_reg_dmabuf_mr failed with error Operation not supported": the kernel or
the IB driver lacks it). NCCL_NVLS_ENABLE=0 / NCCL_DMABUF_ENABLE=0 turn them off. "Cuda failure 1
'invalid argument'" (or any CUDA failure but memory) at an nvls.cc line is the same refusal:
CUDA_ERROR_INVALID_VALUE from cuMulticastCreate / cuMemCreate / cuMulticastAddDevice when the device
attribute says multicast but the driver, the Fabric Manager, IMEX or a container without /dev/nvidia-caps
cannot back it (NCCL's own later wording at cuMulticastBindMem: "This is usually caused by a system or
configuration error in the Fabric Manager or NVSwitches"). Every remedy in the threads is of the platform
(restart the Fabric Manager and reset the GPUs, a driver that fits the NCCL, the container's caps,
NCCL_NVLS_ENABLE=0), never of the user's calls: driver_env, not NCCL usage.

The network plugin's provider search (RUN294): aws-ofi-nccl's find_ofi_provider warns "Couldn't find
any optimal provider" when libfabric's fi_getinfo answers -FI_ENODATA for every hint it tries (no EFA
device or driver in this host or container, a libfabric without the provider, or FI_PROVIDER naming
one that is absent). Its own printf ("WARN: Function: find_ofi_provider Line: 543: NET/OFI ...") and,
since the plugin logs through NCCL, "host:pid:tid [0] NCCL WARN NET/OFI Couldn't find any optimal
provider" both say it.

NCCL's own loading of the driver (misc/cudawrap.cc, 2.12-2.2x), every WARN of which returns ncclSystemError
(init.cc 2.13-2.2x ignores it, "(void)ncclCudaLibraryInit()": a process whose INFO lines go on after the WARN
was not stopped by it, and its dlopen WARN is then silent): "Failed to find CUDA library libcuda.so
(NCCL_CUDA_PATH='') : <dlerror>" (read by driver_env's loader row), "Failed to load CUDA missing symbol
cuGetProcAddress", "cuDriverGetVersion failed with 999", "CUDA some PFN functions not found in the library",
"Retrieve cuMemCreate failed with 500 status 1", "CUDA Driver version found is 11020. Minimum requirement is
11030": a libcuda older than the NCCL (RUN261) or one that cannot start (RUN262). NVML through NCCL
(misc/nvmlwrap.cc): "Failed to open libnvidia-ml.so.1", "nvmlInit_v2() failed: Driver Not Loaded",
"nvmlDeviceGetHandleByPciBusId() failed: Not Found" (RUN262; "GPU is lost" is gpu_hardware's, "Driver/library
version mismatch" driver_env's).

NCCL's topology check (graph/paths.cc): "P2P is disabled between NVLINK connected GPUs 1 and 0. This should
not be the case given their connectivity, and is probably due to a hardware issue." (RUN310,
gpu_hardware). Its INFO sibling for PCIe GPUs ("P2P is disabled between connected GPUs 1 and 0. You can
repress this message ...") is harmless and not matched.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gated_reader, read
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_NVLS_SOURCE = lazy_re.compile(r"\btransport/nvls\.cc:\d+|\bNVLS\b.*\b(?:fail|error|not supported)", re.I)
# What the driver answers at nvls.cc's cuMulticast* calls when the fabric cannot give the feature.
_NVLS_FABRIC_WORDS = (
    r"not supported|not available|not permitted|[Ff]abric|IMEX|cannot be performed in the present state"
)
_NVLS_REFUSED = lazy_re.compile(_NVLS_FABRIC_WORDS + r"|invalid argument|NVLink SHARP")
# Any other CUDA failure at an nvls.cc site is a driver call on a multicast object too: 999 'unknown
# error' there is the Fabric Manager stopped and restarted under live GPUs (NVIDIA/nccl-tests#276), 3 /
# 201 a driver without multicast. Only memory is the job's own (cuMemCreate 'out of memory': cuda_oom).
_NVLS_CUDA_FAILURE = lazy_re.compile(r"Cuda failure (?:\d+ )?'(?!out of memory)")
_DMABUF = lazy_re.compile(r"ibv_reg_dmabuf_mr failed|dmabuf\w* .*(?:not supported|failed)", re.I)
# The generic CUDA error (1 / CUDA_ERROR_INVALID_VALUE) at an nvls.cc call, with no word of the fabric: NCCL
# returns it as ncclUnhandledCudaError, which the reference corpora (v1, v2) class as NCCL's own (nccl_usage,
# RUN196); the driver's answers that name the fabric or its state stay RUN292.
_NVLS_GENERIC = lazy_re.compile(r"Cuda failure (?:1 )?'invalid argument'")
_NVLS_NAMES_FABRIC = lazy_re.compile(_NVLS_FABRIC_WORDS + r"|present state")
# cudart's 801 "operation not supported" / 800 "operation not permitted" at any other NCCL CUDACHECK: NCCL
# only calls what the device attributes claim, so the refusal is the platform's (a vGPU without UVM or
# cuMem, a container without the IPC permissions cuMem handle export needs). The whole quoted message
# only: "operation not permitted when stream is capturing" is a user's CUDA graph, not this.
_CUDA_REFUSED = lazy_re.compile(r"Cuda failure (?:80[01] )?'operation not (?:supported|permitted)'")
# The P2P transport's CUDA IPC (transport/p2p.cc p2pMap / p2pImportShareableBuffer: cudaIpcOpenMemHandle,
# cudaIpcGetMemHandle, cuMemImportFromShareableHandle; transport.cc:15x its caller in 2.1x) answering 1
# 'invalid argument': the peer's memory handle cannot be opened in this process - GPUs isolated one per
# container, a vGPU / WSL / VM without peer IPC, or processes that do not share the IPC namespace
# (NVIDIA/nccl#846; NCCL_P2P_DISABLE=1 or NCCL_CUMEM_ENABLE=0 and --ipc=host in the threads).
# NCCL 2.1-2.3 built the transport as transport/p2p.cu ("transport/p2p.cu:431 WARN failed to open CUDA IPC
# handle : 30 unknown error", horovod#1634: 2 GPUs on one node, NCCL 2.1.2).
_P2P_SOURCE = lazy_re.compile(r"(?:\btransport/p2p\.c[cu]|(?<![\w/])transport\.cc):\d+")
_P2P_IPC_REFUSED = lazy_re.compile(r"Cuda failure (?:1 )?'invalid argument'")
# cudaIpcOpenMemHandle answering cudaErrorUnknown (30; 999 since CUDA 10.1) on the peer's handle: the driver
# cannot map the other process's GPU memory here (VM / WSL / desktop driver, IOMMU / ACS), not the program.
_P2P_IPC_OPEN = lazy_re.compile(r"failed to open CUDA IPC handle\s*:\s*(?:30|999)\s+unknown error")


def platform_feature(hit: Hit, where: str, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """RUN292 for a feature NCCL turned on that the stack refused (`where`: the line that names the
    source file, `detail`: NCCL's message), else []."""
    feature = (
        "dmabuf"
        if _DMABUF.search(detail)
        else "nvls"
        if (
            _NVLS_SOURCE.search(where) and (_NVLS_REFUSED.search(detail) or _NVLS_CUDA_FAILURE.search(detail))
        )
        else "cuda_refused"
        if _CUDA_REFUSED.search(detail)
        else "p2p_ipc"
        if _P2P_SOURCE.search(where) and (_P2P_IPC_REFUSED.search(detail) or _P2P_IPC_OPEN.search(where))
        else ""
    )
    if not feature:
        return []
    if feature == "nvls" and _NVLS_GENERIC.search(detail) and not _NVLS_NAMES_FABRIC.search(detail):
        return [
            event(
                hit,
                C.NCCL_NVLS_CUDA_FAILURE.code,
                f"{hit.who()}: a CUDA call on NVLink SHARP multicast memory inside NCCL failed with 'invalid "
                f"argument' ({clip(detail, 120)}): the driver cannot back multicast here; NCCL_NVLS_ENABLE=0 "
                "turns NVLS off",
                {**base, "feature": feature},
                used,
                dedupe=(C.NCCL_NVLS_CUDA_FAILURE.code,),
            )
        ]
    what = {
        "nvls": "NVLink SHARP multicast (NVLS): the fabric (Fabric Manager / IMEX) does not provide it; "
        "NCCL_NVLS_ENABLE=0 turns it off",
        "dmabuf": "DMA-BUF registration of GPU memory with the NIC: the kernel or the IB driver does not "
        "support it; NCCL_DMABUF_ENABLE=0 turns it off",
        "p2p_ipc": "CUDA IPC between the ranks' GPUs (the P2P transport): GPUs isolated per container, a "
        "VM / WSL without peer IPC, or no shared IPC namespace (--ipc=host); NCCL_P2P_DISABLE=1 avoids it",
        "cuda_refused": "a CUDA operation the device claims (cuMem, UVM, IPC handles): the driver, a vGPU or "
        "the container refuses it; NCCL_CUMEM_ENABLE=0 avoids cuMem",
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


# Every WARN of the plugin's start that says the fabric under it is not one it can run on (aws-ofi-nccl
# src/nccl_ofi_net.c, nccl_ofi_rdma.c, nccl_ofi_sendrecv.c, v1.0.0 to v1.17): "Could not find any optimal
# provider" (v1.0.0) / "Couldn't find any optimal provider", "Only EFA provider is supported" (v1.4-v1.6's
# rdma protocol on a non-EFA provider), "OFI fi_getinfo() call failed: No data available" (v1.9+),
# "Couldn't open a fabric provider. RC: -61, ERROR: ...", "Querying provider capabilities failed: -61", v1.x's
# closing "aws-ofi-nccl initialization failed" (ofi_init, PACKAGE_NAME " initialization failed"),
# "Unable to find a protocol that worked.  Failing initialization." (v1.13+, after each protocol's "Failed to
# initialize rdma protocol"), "EFA provider requires at least libfabric version 1.22.0.", "Provider does not
# support 4 bytes of immediate data, required for RDMA transport".
_OFI_NO_PROVIDER = lazy_re.compile(
    r"NET/OFI (?:(?P<none>Couldn't find any optimal provider|Could not find any optimal provider)|"
    r"(?P<efa>Only EFA provider is supported|EFA provider requires at least libfabric version [\d.]+)|"
    r"(?P<getinfo>OFI fi_getinfo\(\) call failed|Couldn't open a fabric provider|"
    r"aws-ofi-nccl initialization failed|"
    r"Querying provider capabilities failed)|(?P<proto>Unable to find a protocol that worked)|"
    r"(?P<imm>Provider does not support \d+ bytes of immediate data))"
)
_OFI_REASONS = {
    "none": ("no_libfabric_provider", "found no usable fabric provider"),
    "efa": ("provider_not_efa", "runs only on the EFA provider (or a newer libfabric), not the one found"),
    "getinfo": ("no_libfabric_provider", "could not get or open a libfabric provider"),
    "proto": ("no_protocol", "could not start any of its protocols (rdma, sendrecv) on the provider found"),
    "imm": ("provider_lacks_feature", "found a provider without the features its RDMA protocol needs"),
}


def _ofi_no_provider(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    reason, said = _OFI_REASONS[m.lastgroup or "none"]
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's libfabric plugin (aws-ofi-nccl) {said}: no EFA device or driver visible "
            "here, a libfabric without the provider, or FI_PROVIDER naming an absent one",
            {"plugin": "aws-ofi-nccl", "reason": reason, "nccl_warn": clip(hit.text[m.start() :], 200)},
            dedupe=(row.code,),
        )
    ]


# misc/cudawrap.cc: the libcuda NCCL loaded lacks an entry point or a version NCCL needs ("Retrieve
# cuMemCreate failed with 500"; 2.13-2.18's LOAD_SYM "Retrieve cuMemCreate version 11000 failed with 500").
_CUDA_TOO_OLD = lazy_re.compile(
    r"Failed to load CUDA missing symbol (\w+)|CUDA some PFN functions not found in the library|"
    r"Retrieve (\w+)(?: version \d+)? failed with (\d+)|"
    r"CUDA Driver version found is (\d+)\. Minimum requirement is (\d+)"
)
_CUDA_NO_START = lazy_re.compile(r"cuDriverGetVersion failed with (\d+)")
# misc/cudawrap.cc's dlopen of libcuda failed: 2.12-2.18 "Failed to find CUDA library in <NCCL_CUDA_PATH>
# (NCCL_CUDA_PATH=<it>)" (the path printed as "(null)" when unset), 2.19+ "Failed to find CUDA library
# libcuda.so (NCCL_CUDA_PATH='') : <dlerror>" (the dlerror form is read by loader's rows, as elsewhere).
_CUDA_LIB = lazy_re.compile(r"Failed to find CUDA library(?: in)? (\S+)")
# misc/nvmlwrap.cc: NVMLCHECK's "nvmlX() failed: <nvmlErrorString>" and the library load.
_NVML_CALL = lazy_re.compile(
    r"\b(nvml\w+)\([^)]*\) failed: (.+?)\s*$|Failed to open (libnvidia-ml\.so[.\d]*)"
)
# graph/paths.cc (NCCL 2.12+): NVLink-connected GPUs whose NVML P2P status is not OK.
_P2P_DISABLED = lazy_re.compile(r"P2P is disabled between NVLINK connected GPUs (\d+) and (\d+)")


# Multi-node NVLink (GB200 NVL72 and the like): NCCL finds the NVLink domain but cannot export / import the
# FABRIC memory handles it needs through IMEX (mnnvl.cc 2.25+: "MNNVL (cliqueSize 4) is available but not
# working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set
# NCCL_MNNVL_ENABLE=0 to ignore this issue.", "... Check the IMEX configuration (nvidia-imex-ctl -N)"; 2.25's
# "... not supported on this system. Check the IMEX configuration."; 2.21-2.23 init.cc "MNNVL is not supported
# on this system"): the IMEX daemon or its channels are not set up for this job.
_MNNVL = lazy_re.compile(
    r"MNNVL (?:\(cliqueSize (\d+)\) )?is (?:available but )?not (?:working|supported) on this system"
)


def _mnnvl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"feature": "mnnvl"}
    if m.group(1):
        facts["clique_size"] = int(m.group(1))
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL could not use multi-node NVLink (MNNVL): IMEX does not give this job the "
            "fabric memory handles it needs (the nvidia-imex daemon, its channels under "
            "/dev/nvidia-caps-imex-channels in the container); NCCL_MNNVL_ENABLE=0 turns it off",
            facts,
            dedupe=(row.code, "mnnvl"),
        )
    ]


# transport/nvls.cc's own sentence at cuMulticastBindMem (2.19+): "Failed to bind NVLink SHARP (NVLS)
# Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'."
# (2.2x adds "at MC group 1f offset 0"; later releases go on "This is usually caused by a system or
# configuration error in the Fabric Manager or NVSwitches."). Read here when it is quoted without NCCL's WARN
# prefix (a CI job's line in a PR, a README, torch's "Last error:" through platform_detail); with the prefix
# the WARN rows read it with the host, pid and device.
_NVLS_BIND = lazy_re.compile(r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory\b[^\n]*")


def _nvls_bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NCCL WARN" in hit.text:
        return None
    # NCCL 2.2x+ (transport/nvls.cc) writes the driver's answer on the next lines: "Failed to bind
    # NVLink SHARP (NVLS) Multicast memory of size 2097152:" / "CUDA error 401 'the operation cannot be
    # performed in the present state'." / "This is usually caused by a system or configuration error in the
    # Fabric Manager or NVSwitches."
    said = " ".join([m.group(0).strip(), *(ln.text.strip() for ln in hit.after(2, same_rank=False))])
    return platform_feature(hit, said, said, {"nccl_warn": clip(said, 200)}, None) or None


def _not_info(hit: Hit) -> bool:
    return "NCCL INFO" not in hit.text


# NCCL 2.13-2.2x call the driver's loading at communicator init as "(void)ncclCudaLibraryInit()": a failed
# dlopen of libcuda costs only the features that need the driver API (DMA-BUF, cuMem), and the same process
# goes on with its init ("... NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ...", "Using network IB"). Its later
# INFO lines say the warning did not stop it.
_PID = lazy_re.compile(r"^\s*([\w.-]+:\d+):\d+ \[\d+\]")


def _init_went_on(hit: Hit) -> bool:
    me = _PID.match(hit.text)
    if not me:
        return False
    return any(
        "NCCL INFO" in ln.text and (p := _PID.match(ln.text)) is not None and p.group(1) == me.group(1)
        for ln in hit.after(40, same_rank=False)
    )


def _cuda_too_old(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _not_info(hit):
        return None
    facts: dict[str, Any] = {"reason": "libcuda_too_old_for_nccl"}
    if m.group(1) or m.group(2):
        facts["symbol"] = m.group(1) or m.group(2)
    if m.group(4):
        facts.update(driver_version_found=int(m.group(4)), driver_version_required=int(m.group(5)))
    return [
        row.event(
            hit,
            f"{hit.who()}: the CUDA driver library NCCL loaded is older than this NCCL needs "
            f"({clip(m.group(0), 100)}): update the driver, or use a NCCL/PyTorch built for it",
            facts,
            dedupe=(row.code, "nccl_cudawrap"),
        )
    ]


def _cuda_no_start(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _not_info(hit):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL could not query the CUDA driver (cuDriverGetVersion failed with "
            f"{m.group(1)}): the driver is not usable from this process",
            {"reason": "device_init_failed", "cuda_error_number": int(m.group(1))},
            dedupe=(row.code, "device_init_failed"),
        )
    ]


def _cuda_lib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _not_info(hit) or "cannot open shared object" in hit.text:
        return None
    if _init_went_on(hit):
        return []  # init.cc ignores the result, "(void)ncclCudaLibraryInit(); // can fail on old drivers"
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL could not load the CUDA driver library ({clip(m.group(0), 100)}): libcuda.so "
            "is not on the loader's path here (no driver in the container, NCCL_CUDA_PATH pointing at a "
            "toolkit, which holds no libcuda), or a CUDA/NCCL build that does not fit this driver",
            {"library": "libcuda.so", "reason": "libcuda_not_found", "path": m.group(1)},
            dedupe=(row.code, "nccl_cudawrap"),
        )
    ]


def _nvml_call(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _not_info(hit):
        return None
    if m.group(3):
        return [
            row.event(
                hit,
                f"{hit.who()}: NCCL could not load NVML ({m.group(3)}): the driver's user-space libraries "
                "are missing here (no driver, or a container started without them)",
                {"library": m.group(3), "reason": "no_driver"},
                dedupe=(row.code, "no_driver"),
            )
        ]
    call, err = m.group(1), m.group(2)
    if "GPU is lost" in err or "version mismatch" in err:
        return None  # gpu_hardware's and driver_env's own rows
    facts = {"nvml_call": call, "nvml_error": err}
    if err.startswith("Unknown Error"):
        return [
            row.event(
                hit,
                f"{hit.who()}: NVML cannot reach a GPU ({call}: Unknown Error): the GPU stopped answering "
                "or the driver lost it; see dmesg for Xid 79 / 119",
                facts,
                tier=1,
                code=C.GPU_OFF_BUS.code,
                dedupe=(C.GPU_OFF_BUS.code, "nvml"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's NVML call failed ({call}: {clip(err, 60)}): the driver or the GPUs this "
            "process sees do not fit (no driver, permissions, or a device NVML cannot find)",
            {**facts, "reason": "nvml_error"},
            dedupe=(row.code, "nvml", call),
        )
    ]


def _p2p_disabled(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a, b = int(m.group(1)), int(m.group(2))
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL found GPUs {a} and {b} joined by NVLink but with peer-to-peer disabled "
            "(NVLink down or degraded, or the NVSwitch fabric out of step): that node cannot run NCCL across "
            "them",
            {"gpus": [a, b]},
            dedupe=(row.code, min(a, b), max(a, b)),
        )
    ]


_WARN = "NCCL's 'NCCL WARN' before the message"
SIGNATURES = (
    Signature(
        "libfabric provider missing",
        _OFI_NO_PROVIDER,
        _ofi_no_provider,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"WARN",),
        words=(
            "find any optimal provider",
            "efa provider",
            "fi_getinfo() call failed",
            "open a fabric provider",
            "aws-ofi-nccl initialization failed",
            "provider capabilities",
            "protocol that worked",
            "bytes of immediate data",
        ),
        anchor_from="the plugin's 'WARN: Function: ...' or NCCL's 'NCCL WARN' before the message",
        examples=(
            "10.3.35.83: WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal "
            "provider",
            "node-1:1234:1250 [0] NCCL WARN NET/OFI Couldn't find any optimal provider",
            "[bug] NCCL WARN NET/OFI Only EFA provider is supported",
        ),
    ),
    Signature(
        "nvls multicast bind refused, quoted bare",
        _NVLS_BIND,
        _nvls_bind,
        C.NCCL_PLATFORM_FEATURE.code,
        anchors=(b"Failed to bind NVLink SHARP (NVLS) Multicast memory",),
        words=("failed to bind nvlink sharp",),
    ),
    Signature(
        "multi-node nvlink not working",
        _MNNVL,
        _mnnvl,
        C.NCCL_PLATFORM_FEATURE.code,
        anchors=(b"MNNVL",),
        # not the "MNNVL 0" of every communicator's init line (NCCL INFO, 2.21+)
        worth=(rb"MNNVL (?:\(cliqueSize \d+\) )?is ",),
        words=("mnnvl",),
    ),
    Signature(
        "nvlink peers without p2p",
        _P2P_DISABLED,
        _p2p_disabled,
        C.GPU_NVLINK_P2P_DISABLED.code,
        anchors=(b"WARN", b"P2P is disabled"),
        worth=(rb"WARN", rb"P2P is disabled"),
        words=("p2p is disabled between nvlink",),
    ),
    Signature(
        "libcuda too old for nccl",
        _CUDA_TOO_OLD,
        _cuda_too_old,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"WARN",),
        words=("missing symbol", "pfn functions", "retrieve ", "minimum requirement"),
        anchor_from=_WARN,
        examples=(
            "node1:1234:5678 [0] NCCL WARN Failed to load CUDA missing symbol cuGetProcAddress",
            "node1:1234:5678 [0] NCCL WARN CUDA some PFN functions not found in the library",
            "node1:1234:5678 [0] NCCL WARN Retrieve cuMemCreate failed with 500 status 1",
            "node1:1234:5678 [0] NCCL WARN CUDA Driver version found is 11020. Minimum requirement is 11030",
        ),
    ),
    Signature(
        "cuda driver does not start under nccl",
        _CUDA_NO_START,
        _cuda_no_start,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"WARN",),
        words=("cudrivergetversion failed",),
        anchor_from=_WARN,
        examples=("node1:1234:5678 [0] NCCL WARN cuDriverGetVersion failed with 999",),
    ),
    Signature(
        "libcuda not found by nccl",
        _CUDA_LIB,
        _cuda_lib,
        C.LIBRARY_MISSING.code,
        anchors=(b"Failed to find CUDA library",),
        words=("failed to find cuda library",),
    ),
    Signature(
        "nvml under nccl",
        _NVML_CALL,
        _nvml_call,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"WARN",),
        words=("nvml", "libnvidia-ml"),
        anchor_from=_WARN,
        examples=(
            "node1:1234:5678 [0] NCCL WARN nvmlInit_v2() failed: Driver Not Loaded",
            "node1:1234:5678 [0] NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found",
            "node1:1234:5678 [0] NCCL WARN Failed to open libnvidia-ml.so.1",
        ),
    ),
)
parse = gated_reader(SIGNATURES)


def platform_detail(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """The events of this module's rows for NCCL's own text repeated after torch's "NCCL error in:"
    ("Last error:"), where the WARN prefix is gone, with the wrapper's facts; [] when none reads it."""
    evs = read(hit, SIGNATURES, detail) if detail else []
    for ev in evs:
        ev.facts.update(base)
        if used:
            ev.evidence = hit.evidence(used)
    return evs
