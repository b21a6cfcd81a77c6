"""platform_signs: the platform under the job refuses what the job's libraries ask of it (driver_env).

Formats, read at their sources:
- NCCL's P2P transport (src/transport/p2p.cc p2pCanConnect, 2.x) when its topology says two GPUs should use
  P2P and cudaDeviceCanAccessPeer says no: "NCCL INFO Could not enable P2P between dev 0(=1b0) and dev
  3(=1e0)", printed as the transport is set up. NCCL goes on through host memory: an INFO line of a run that
  may well work, so the code is a warning (RUN590) at tier 2, behind any error the log holds (a dropped
  connection's tier-1 symptom too); it is what such
  a log says when the job then hangs (VMs with passed-through GPUs, PCIe ACS or an IOMMU in the way: four
  released cases). The topology's notice "P2P is disabled between connected GPUs 0 and 1. You can repress
  this message with NCCL_IGNORE_DISABLED_P2P=1." stays silent: on boards whose driver disables P2P (RTX
  4090) every healthy run prints it (p3p-other_ambiguous-001, -002). "NCCL_P2P_DISABLE set by environment",
  "via P2P/IPC" and "P2P Chunksize" are healthy lines (silent).
- aws-ofi-nccl's fi_setopt of an endpoint option it was compiled to know, refused by the libfabric loaded at
  run time with an error other than -FI_EOPNOTSUPP: "NET/OFI Couldn't set
  FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES. RC: -92, ERROR: Protocol not available" (plugin built
  against a newer libfabric than the one loaded: RUN591). Other NET/OFI failures are the network's rows'.
- libfabric's memory registration (prov/efa efa_mr.c, prov/verbs): "efa_mr_reg_impl():849<warn> Unable to
  register MR of 146800640 bytes: Bad address", "efa_mr_regattr():1003<warn> Unable to register MR: Bad
  address": the NIC could not pin the GPU buffer (GDRCopy / dmabuf / peer-memory module, kernel): RUN385.
  "Unable to register handle for GPU memory" and "gdr_pin_buffer failed!" are followed in libfabric by a
  fallback to cudaMemcpy (silent alone).
- PyTorch's CUDA caching allocator importing another process's expandable segment (torch 2.2+, CUDA IPC with
  expandable_segments:True): "pidfd_getfd: Operation not permitted" / "pidfd_open: ..." (TORCH_CHECK with the
  errno's text; a container without SYS_PTRACE or a seccomp profile that blocks the call), and its ENOSYS
  message "The kernel on this machine does not support the pidfd_getfd syscall needed to use IPC for CUDA
  tensors when expandable_segments:True is set": RUN366 (a feature the allocator's settings turn on).
- A training script's own check of the visible GPUs against its local rank (YOLOv5/v7 and their forks:
  `assert torch.cuda.device_count() > LOCAL_RANK, 'insufficient CUDA devices for DDP command'`): the
  assertion's source line in the traceback with the AssertionError after it, or its message: RUN264.
- submitit outside the scheduler it was written for: its LocalExecutor's "ValueError: LocalExecutor can use
  only one node. Use nodes=1" (AutoExecutor fell back to the local machine because no Slurm was found), and
  JobEnvironment's "Could not figure out which environment the job is runnning in. Known environments:
  slurm, local, controller." (its own spelling): RUN550.
- cuda-samples' p2pBandwidthLatencyTest: a "P2P=Enabled Bandwidth" matrix (uni- or bidirectional) in which a
  pair of GPUs moves data at under half the rate of the "P2P=Disabled" matrix printed above it (through the
  host): P2P is allowed but broken by the platform (PCIe ACS, IOMMU): RUN590 (tier 2). A healthy box prints
  enabled rates at or above the disabled ones (silent), and a test that failed says so itself (RUN291's
  rows).
- NCCL's error chain out of its P2P transport with result 1 (ncclUnhandledCudaError) and no WARN line saying
  more: "NCCL INFO transport/p2p.cc:352 -> 1" (the CUDA IPC or cuMem import/export of a peer's buffer,
  cudaDeviceEnablePeerAccess: GPUs in separate containers, no shared IPC namespace, no P2P): RUN291. A WARN
  line before it (Cuda failure 'out of memory', ...) is read by its own row.
- lmdeploy TurboMind's Windows build (src/turbomind/models/llama/Barrier.h under _MSC_VER) has no thread
  barrier and asserts one thread ("FT_CHECK(count == 1)"): "RuntimeError: [TM][ERROR]  Assertion fail:
  D:\\a\\lmdeploy\\lmdeploy\\src/turbomind/models/llama/Barrier.h:20" is tensor parallelism (--tp > 1) on
  native Windows, which that build cannot do: RUN334.
- A thread's title that names cudart's "invalid device ordinal" (101) without the program's error marker
  ("Distributed Training: invalid device ordinal"): RUN264, read only in a one-line paste (in a log the rows
  of rules/device_visibility.py want torch's "CUDA error: " before it).
- torch.nn.DataParallel's balance check (torch/nn/parallel/data_parallel.py _check_balance, 1.x-2.x) warns
  "There is an imbalance between your GPUs. You may want to exclude GPU 4 which has less than 75% of the
  memory or cores of GPU 0": the GPUs are of different models. A CUDA failure inside NCCL after it ("NCCL
  Error 1: unhandled cuda error", torch/csrc/cuda/nccl.cpp's broadcast of the replicas) is the odd GPU (an
  architecture this build or NCCL has no code for, no P2P with the others): RUN335. The warning alone is
  a running job's (silent); the NCCL error without it stays RUN194.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_P2P_REFUSED = lazy_re.compile(
    r"Could not enable P2P between dev (?P<a>\d+)\(=[0-9a-fA-F]+\) and dev (?P<b>\d+)"
)


def _p2p_refused(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a, b = m.group("a"), m.group("b")
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL expected P2P between GPU {a} and GPU {b}, but CUDA refused peer access "
            "(NCCL goes through host memory instead; a VM, PCIe ACS / IOMMU, or a board or driver without "
            "P2P): "
            "where the job then hangs or crawls, enable P2P in the platform or run with NCCL_P2P_DISABLE=1",
            {"reason": "p2p_refused", "gpus": sorted({int(a), int(b)})},
            dedupe=(row.code,),
        )
    ]


_OFI_SETOPT = lazy_re.compile(r"NET/OFI Couldn't set (?P<opt>FI_OPT_\w*)(?P<rest>[^\n]*)")


def _ofi_setopt(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    opt = m.group("opt")
    return [
        row.event(
            hit,
            f"{hit.who()}: the NCCL OFI plugin could not set {opt} on its libfabric endpoint: the plugin was "
            "built against another (newer) libfabric than the one this process loaded; run with the "
            "libfabric the plugin was built with (LD_LIBRARY_PATH) or rebuild the plugin against this one",
            {"option": opt, "library": "aws-ofi-nccl"},
            dedupe=(row.code, opt),
        )
    ]


_FI_MR = lazy_re.compile(r"Unable to register MR(?: of (?P<bytes>\d+) bytes)?: (?P<why>[A-Za-z][\w ]*[a-z])")


def _fi_mr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, object] = {"library": "libfabric", "error": m.group("why")}
    if m.group("bytes"):
        facts["bytes"] = int(m.group("bytes"))
    return [
        row.event(
            hit,
            f"{hit.who()}: libfabric could not register a buffer with the NIC ({m.group('why')}): GPU memory "
            "registration needs GPUDirect RDMA (dmabuf or the peer-memory module, GDRCopy) that this kernel "
            "and driver provide; check the EFA/verbs stack, the kernel version and ulimit -l",
            facts,
            dedupe=(row.code,),
        )
    ]


_PIDFD = lazy_re.compile(
    r"\b(?P<call>pidfd_getfd|pidfd_open): ?(?P<why>[A-Z][\w ]*[a-z])|"
    r"does not support the (?P<call2>pidfd_getfd|pidfd_open) syscall needed to use IPC for CUDA tensors"
)


def _pidfd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    call = m.group("call") or m.group("call2")
    why = m.group("why") or "the kernel has no such syscall"
    return [
        row.event(
            hit,
            f"{hit.who()}: sharing a CUDA tensor between processes with expandable_segments:True needs "
            f"{call}, which failed ({why}): the container lacks SYS_PTRACE or its seccomp profile blocks "
            "the call, or the kernel is older than 5.6; grant it, or turn expandable_segments off for "
            "these processes",
            {"reason": "expandable_segments_ipc", "syscall": call, "error": why},
            dedupe=(row.code, call),
        )
    ]


_RANK_GPU_ASSERT = lazy_re.compile(
    r"assert torch\.cuda\.device_count\(\) >=? (?:\w+\.)?(?:local_rank|LOCAL_RANK)\b|"
    r"insufficient CUDA devices for DDP command"
)
_ASSERTION = lazy_re.compile(r"^\s*AssertionError\b")


def _rank_gpu_assert(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not m.group(0).startswith("insufficient") and not any(
        _ASSERTION.search(ln.text) for ln in hit.after(6, False)
    ):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: the script checks that its local rank has a GPU and found fewer visible GPUs than "
            "local ranks: more processes per node than CUDA_VISIBLE_DEVICES (or --device, or the scheduler's "
            "GPUs per task) gives; launch one process per visible GPU",
            {"reason": "fewer_gpus_than_local_ranks", "check": clip(m.group(0), 80)},
            dedupe=(row.code, "local_rank_assert"),
        )
    ]


_SUBMITIT = lazy_re.compile(
    r"LocalExecutor can use only one node|"
    r"Could not figure out which environment the job is run+ing in\. Known environments"
)


def _submitit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: submitit is not running under Slurm ({m.group(0)}): it fell back to the local "
            "machine, which cannot run a multi-node job; submit from a Slurm login node, or launch the "
            "ranks directly (torchrun on each node)",
            {"scheduler": "slurm", "library": "submitit"},
            dedupe=(row.code, "submitit"),
        )
    ]


_BW_ENABLED = lazy_re.compile(r"(?P<dir>Unidirectional|Bidirectional) P2P=Enabled Bandwidth")
_BW_ROW = lazy_re.compile(r"^\s*(\d+)((?:\s+\d+(?:\.\d+)?)+)\s*$")


def _matrix(lines: list[Line]) -> dict[int, list[float]]:
    """The rows of the bandwidth matrix that starts at lines[0] (its "D\\D" header), up to the first other
    line."""
    rows: dict[int, list[float]] = {}
    for ln in lines:
        m = _BW_ROW.match(ln.text)
        if m is None:
            if rows:
                break
            continue
        rows[int(m.group(1))] = [float(x) for x in m.group(2).split()]
    return rows


def _p2p_bandwidth(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    enabled = _matrix(hit.after(20, False))
    before = hit.before(24, False)
    start = next(
        (
            i
            for i in range(len(before) - 1, -1, -1)
            if f"{m.group('dir')} P2P=Disabled Bandwidth" in before[i].text
        ),
        None,
    )
    if start is None or not enabled:
        return []
    disabled = _matrix(before[start + 1 :])
    slow = [
        (a, b, on, disabled[a][b])
        for a, ons in enabled.items()
        for b, on in enumerate(ons)
        if a != b and a in disabled and b < len(disabled[a]) and on < 0.5 * disabled[a][b]
    ]
    if not slow:
        return []
    a, b, on, off = min(slow, key=lambda s: s[2] / max(s[3], 1e-9))
    return [
        row.event(
            hit,
            f"p2pBandwidthLatencyTest: with P2P enabled, GPU {a} -> GPU {b} moves {on:g} GB/s against "
            f"{off:g} GB/s "
            f"through the host ({len(slow)} slow pairs): peer-to-peer is allowed but broken by the platform "
            "(PCIe ACS or an IOMMU redirecting it); NCCL's P2P transport over these pairs hangs or crawls. "
            "Turn "
            "ACS off / iommu=pt, or run with NCCL_P2P_DISABLE=1",
            {
                "reason": "p2p_slower_than_host",
                "gpus": [a, b],
                "p2p_gbps": on,
                "host_gbps": off,
                "pairs": len(slow),
            },
            dedupe=(row.code,),
        )
    ]


_P2P_CHAIN = lazy_re.compile(r"\btransport/p2p\.cc:\d+ -> 1\b")
_SAYS_MORE = lazy_re.compile(r"NCCL WARN|Cuda failure|CUDA failure|out of memory|Last error")


def _p2p_chain(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_SAYS_MORE.search(ln.text) for ln in hit.before(8) + hit.after(12)):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's P2P transport failed on a CUDA call (result 1) while mapping a peer GPU's "
            "buffer (CUDA IPC / cuMem import, peer access): GPUs in separate containers or without a shared "
            "IPC namespace, or without P2P between them; run the ranks in one container (--ipc=host) or set "
            "NCCL_P2P_DISABLE=1",
            {"reason": "p2p_transport_cuda_failure", "nccl_source": m.group(0).split(" ")[0]},
            dedupe=(row.code, "p2p_chain"),
        )
    ]


_TM_BARRIER = lazy_re.compile(r"Assertion fail: \S*turbomind[/\\]\S*Barrier\.h:\d+")


def _tm_barrier(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: lmdeploy TurboMind's Windows build has no barrier between tensor-parallel threads "
            f"({m.group(0)}): --tp above 1 cannot run on native Windows; run with --tp 1 there, or under "
            "Linux / WSL2",
            {"library": "lmdeploy turbomind", "platform": "windows"},
            dedupe=(row.code, "turbomind_barrier"),
        )
    ]


_ORDINAL_TITLE = lazy_re.compile(r"\binvalid device ordinal\b|\bInvalid device ordinal\b")
_MARKED = lazy_re.compile(r"rror|ERROR|[Ff]ailure|FAIL")


def _ordinal_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if len(hit.lines) != 1 or len(hit.text) > 240 or _MARKED.search(hit.text):
        return None  # a program's own line: rules/device_visibility.py's rows
    return [
        row.event(
            hit,
            f"the title names CUDA's 'invalid device ordinal' ({clip(hit.text, 120)}): a rank asked for a "
            "GPU "
            "index beyond the visible ones (more processes per node than CUDA_VISIBLE_DEVICES or the "
            "scheduler's GPUs per task give)",
            {"cuda_error": "invalid device ordinal", "read_as": "title"},
            dedupe=(row.code,),
        )
    ]


_NCCL_CUDA_ERROR = lazy_re.compile(r"NCCL Error 1: unhandled cuda error")
_IMBALANCE = lazy_re.compile(r"There is an imbalance between your GPUs\. You may want to exclude GPU (\d+)")


def _mixed_dp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = hit.before(24, False)
    warned = next(
        (
            w
            for w in (
                _IMBALANCE.search(" ".join(ln.text for ln in before[i : i + 2])) for i in range(len(before))
            )
            if w
        ),
        None,
    )
    if warned is None:
        return None
    gpu = int(warned.group(1))
    return [
        row.event(
            hit,
            f"{hit.who()}: DataParallel warned that GPU {gpu} is a different, smaller model than GPU 0, and "
            "NCCL's broadcast to the replicas then failed on a CUDA call: the odd GPU cannot run what the "
            f"others run; leave it out (CUDA_VISIBLE_DEVICES or device_ids without GPU {gpu})",
            {"reason": "mixed_gpu_models", "odd_gpu": gpu, "framework": "DataParallel"},
            dedupe=(row.code, "dataparallel"),
        )
    ]


SIGNATURES = (
    Signature(
        "nccl p2p refused by the platform",
        _P2P_REFUSED,
        _p2p_refused,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"Could not enable P2P between dev",),
        words=("could not enable p2p between",),
        examples=(
            "ava-s0:537555:537626 [2] NCCL INFO Could not enable P2P between dev 2(=3d000) and dev 3(=3e000)",
        ),
    ),
    Signature(
        "ofi plugin libfabric option rejected",
        _OFI_SETOPT,
        _ofi_setopt,
        C.OFI_LIBFABRIC_OPTION_REJECTED.code,
        anchors=(b"NET/OFI Couldn't set FI_OPT",),
        words=("couldn't set fi_opt",),
        examples=(
            "configure_sendrecv_inorder:213 NCCL WARN NET/OFI Couldn't set FI_OPT_E",
            "ip-10-0-1-5:1234:1290 [0] nccl_net_ofi_rdma.c:6120 NCCL WARN NET/OFI Couldn't set "
            "FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES. RC: -92, ERROR: Protocol not available",
        ),
    ),
    Signature(
        "libfabric memory registration failed",
        _FI_MR,
        _fi_mr,
        C.RDMA_MEMORY_REGISTRATION.code,
        tier=1,
        anchors=(b"Unable to register MR",),
        worth=(rb"Unable to register MR(?: of \d+ bytes)?: [A-Za-z]",),
        words=("unable to register mr",),
        examples=(
            "libfabric:6413:1763620725::efa:mr:efa_mr_reg_impl():849<warn> Unable to register MR of "
            "146800640 "
            "bytes: Bad address, ibv pd: 0x7f2128005540, total mr reg size 79699968, mr reg count 3",
            "libfabric:6413:1763620725::efa:mr:efa_mr_regattr():1003<warn> Unable to register MR: "
            "Bad address",
        ),
    ),
    Signature(
        "expandable segments ipc syscall refused",
        _PIDFD,
        _pidfd,
        C.CUDA_ALLOC_CONF_REJECTED.code,
        anchors=(b"pidfd_getfd", b"pidfd_open"),
        worth=(rb"pidfd_(?:getfd|open): ?[A-Z]", rb"(?:pidfd_getfd|pidfd_open) syscall needed to use IPC"),
        words=("pidfd_getfd", "pidfd_open"),
        examples=(
            "(VllmGenerationWorker pid=36530) Error in VllmInternalWorkerExtension.update_weights_from_ipc_"
            "handles: pidfd_getfd: Operation not permitted",
            "RuntimeError: pidfd_open: Operation not permitted",
        ),
    ),
    Signature(
        "script's local rank gpu check",
        _RANK_GPU_ASSERT,
        _rank_gpu_assert,
        C.DEVICE_MISMATCH.code,
        anchors=(b"assert torch.cuda.device_count() >", b"insufficient CUDA devices for DDP"),
        worth=(rb"assert torch\.cuda\.device_count\(\) >", rb"insufficient CUDA devices for DDP"),
        words=("assert torch.cuda.device_count() >", "insufficient cuda devices for ddp"),
        examples=(
            "    assert torch.cuda.device_count() > opt.local_rank",
            "AssertionError: insufficient CUDA devices for DDP command",
        ),
    ),
    Signature(
        "submitit without slurm",
        _SUBMITIT,
        _submitit,
        C.SCHEDULER_ENV_MISSING.code,
        anchors=(b"LocalExecutor can use only one node", b"Could not figure out which environment the job"),
        words=("localexecutor can use only one node", "could not figure out which environment the job"),
        examples=(
            "ValueError: LocalExecutor can use only one node. Use nodes=1",
            "RuntimeError: Could not figure out which environment the job is runnning in. "
            "Known environments: "
            "slurm, local, controller.",
        ),
    ),
    Signature(
        "p2p bandwidth test slower with p2p",
        _BW_ENABLED,
        _p2p_bandwidth,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=2,
        anchors=(b"P2P=Enabled Bandwidth",),
        worth=(rb"directional P2P=Enabled Bandwidth",),
        words=("p2p=enabled bandwidth",),
        examples=("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",),
    ),
    Signature(
        "nccl p2p transport chain",
        _P2P_CHAIN,
        _p2p_chain,
        C.PEER_ACCESS_UNSUPPORTED.code,
        anchors=(b"transport/p2p.cc:",),
        worth=(rb"transport/p2p\.cc:\d+ -> 1\b",),
        words=("transport/p2p.cc:",),
        examples=("[2025-03-18 21:25:59] nickelpie-job-0:1:92 [0] NCCL INFO transport/p2p.cc:352 -> 1",),
    ),
    Signature(
        "turbomind windows barrier",
        _TM_BARRIER,
        _tm_barrier,
        C.COLLECTIVE_BACKEND_MISSING.code,
        anchors=(b"Barrier.h:",),
        worth=(rb"Assertion fail: \S*turbomind[/\\]\S*Barrier\.h:\d+",),
        words=("barrier.h:",),
        examples=(
            "RuntimeError: [TM][ERROR]  Assertion fail: D:\\a\\lmdeploy\\lmdeploy\\src/turbomind/models/"
            "llama/"
            "Barrier.h:20",
        ),
    ),
    Signature(
        "invalid device ordinal in a title",
        _ORDINAL_TITLE,
        _ordinal_title,
        C.DEVICE_MISMATCH.code,
        anchors=(b"invalid device ordinal", b"Invalid device ordinal"),
        words=("invalid device ordinal",),
        examples=("Distributed Training: invalid device ordinal",),
    ),
    Signature(
        "dataparallel over mixed gpus then nccl cuda error",
        _NCCL_CUDA_ERROR,
        _mixed_dp,
        C.MIXED_GPU_MODELS.code,
        anchors=(b"NCCL Error 1: unhandled cuda error",),
        words=("nccl error 1: unhandled cuda error",),
        examples=("  what():  NCCL Error 1: unhandled cuda error",),
    ),
)
parse = gated_reader(SIGNATURES)
