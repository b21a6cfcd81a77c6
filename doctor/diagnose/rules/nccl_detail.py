"""What one NCCL failure text means: the detail after torch's "NCCL error in:" line, NCCL's "Last
error:" and its WARN lines, read by the source that prints them (socket layer, NET/IB, argument
checks, topology search, proxy, bootstrap). nccl_errors finds the lines; this module turns their
text into events with facts, with nccl_warn_texts' tables of WARN texts by check; a WARN whose text alone
does not decide is read by its source in nccl_warn_kind. The formats are listed in nccl_errors' docstring.
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.rules import loader
from pgdoctor.diagnose.rules.cuda_oom import rem_alloc_garbage
from pgdoctor.diagnose.rules.driver_env import cuda_error_events, nvml_mismatch_events
from pgdoctor.diagnose.rules.gpu_runtime import device_assert_before
from pgdoctor.diagnose.rules.nccl_platform import platform_detail, platform_feature
from pgdoctor.diagnose.rules.nccl_shm import SHM, shm_event
from pgdoctor.diagnose.rules.nccl_warn_texts import DETAIL_TABLE
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.nccl_results import TEXT_BY_NAME
from pgdoctor.model import lazy_re

# torch's "Last error: <WARN>" on one line; XLA's "Last NCCL warning(error) log entry (may be unrelated)
# '<WARN>'." after its "NCCL operation ncclGroupEnd() failed: ..." (quoted by users without its middle words:
# "Last NCCL warning(error): '<WARN>'").
_INLINE_LAST = lazy_re.compile(
    r"Last error:\s*(.+)$|"
    r"Last NCCL warning\(error\)(?: log entry \(may be unrelated\))?:? ?'(.+?)'\.?\s*$"
)
# RDMA transports: NCCL's own NET/IB and the network plugins that replace it (aws-ofi-nccl's NET/OFI
# over libfabric/EFA: "NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument").
# 2.23+ also "communicator encountered a fatal error (detected in ncclIbTest)" after NET/IB's async fatal
# event.
IB = lazy_re.compile(r"NET/IB|ibv_\w+|IBV_WC_\w+|mlx5_\d+|NET/OFI|fatal error \(detected in ncclIb\w*\)")
# What makes an RDMA line a failure of the fabric rather than a note: a completion with an error status, a
# verbs call or the plugin that failed.
_IB_FAILED = lazy_re.compile(
    r"Got completion from peer|IBV_WC_(?!SUCCESS)|\bfailed\b|[Ff]ailed to|[Uu]nable to"
)
# IBV_WC_RETRY_EXC_ERR (12), RNR_RETRY_EXC_ERR (13) and WR_FLUSH_ERR (5), by name or by number.
_WC_PEER_GONE = lazy_re.compile(r"IBV_WC_(?:RNR_)?RETRY_EXC_ERR|IBV_WC_WR_FLUSH_ERR|with error (?:5|12|13)\b")
_IB_STATUS = lazy_re.compile(r"(?:with error (\d+)|status=(IBV_WC_\w+)\((\d+)\))")
_PEER = lazy_re.compile(
    r"(?:peer|to|from)\s+\[?(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]+)\]?(?:<(\d+)>|:(\d+))?"
)
# NCCL's socket layer (socket.cc, include/socket.h of <= 2.3, net_socket.cc, bootstrap.cc).
SOCKET = lazy_re.compile(
    # (a quoted WARN line may carry two spaces between the words: "Connection reset  by peer.")
    r"Connection (?:closed by (?:remote )?peer|reset +by peer|refused|timed out)|Software caused connection "
    r"abort|"
    r"NET/Socket|No route to host|Broken pipe|"
    r"Call to \**(?:connect|recv|send|write|read|accept|bind|listen)\b[^:]*failed|"
    r"\bConnect to \S|socket progress error|ncclSocket\w+|Net : |"
    # EAGAIN from the proxy's accept is NCCL's teardown at process exit, not a failure.
    r"Socket (?:recv|send) failed|\[Service thread\] Accept failed(?!:? Resource temporarily unavailable)|"
    # socket.cc 2.19+: a connect that gave up ("socketStartConnect: exceeded timeouts (20000)", "...
    # exceeded retries (34)", "socketPollConnect: exceeded retries"), its poll failing ("socketPollConnect
    # poll() failed with error ..."), an accept failing ("socketTryAccept: Accept failed: Too many open
    # files").
    r"socket\w*Connect:? (?:exceeded (?:timeouts|retries)|poll\(\) (?:failed|returned))|"
    r"socketTryAccept: Accept failed(?!: Resource temporarily unavailable)|"
    # 2.23+: "socketPollConnect: connect to 10.0.0.2<43251> returned Connection refused, exceeded error
    # retry count after 35 attempts"; poll failing: "socketPollConnect to 10.0.0.2<43251> failed with error".
    r"exceeded error retry count|socketPollConnect to \S+ failed|"
    # socket(2) itself failed: "Net : Socket creation failed : Address family not supported by protocol"
    # (include/socket.h <= 2.11), "ncclSocketInit: Socket creation failed : ..." (2.12+).
    r"Socket creation failed|"
    # proxy.cc 2.12-2.18: the proxy's connect to the peer failed ("Proxy Call to rank 7 failed (Connect)"),
    # under an ncclInternalError or ncclSystemError.
    r"Proxy Call to rank \d+ failed \(\w+\)|"
    # socket.cc 2.16+: accept(2) failing with an errno other than EAGAIN ("get errno 24": too many open
    # files).
    r"socketTryAccept: get errno \d+|"
    # socket.cc 2.12+: the peer's socket is of another kind than this listener ("socketFinalizeAccept:
    # wrong type 3 != 4": a NetSocket connect to a NetIb listener, one node on IB and its peer on
    # sockets); "wrong magic" is a stray connection NCCL drops and accepts again, no failure.
    r"socketFinalizeAccept(?: from \S+)?: wrong type"
)
# The peer closed or reset the connection: NCCL's socket layer saw the other side go away.
_PEER_GONE = lazy_re.compile(r"Connection (?:closed|reset) by (?:remote )?peer")
IFACE = lazy_re.compile(
    r"no socket interface found|No usable listening interface|Bootstrap : no socket|"
    r"NCCL_SOCKET_IFNAME|neither AF_INET|verify NCCL_OOB_NET_IFNAME|No interface found in the same subnet",
    re.I,
)
# Where a dropped connection is the job's own (not a dataset download's "ConnectionError").
DIST_CONTEXT = lazy_re.compile(
    r"gloo|pair\.cc|ProcessGroup|c10d|torch[./]distributed|NCCL|all_?reduce|broadcast|barrier", re.I
)
IB_COMPLETION = lazy_re.compile(r"NET/IB\w*\s*:\s*Got completion from peer")
# init.cc (NCCL 2.4-2.2x, RCCL keeps it): "Duplicate GPU detected : rank %d and rank %d both on CUDA
# device %lx" (the bus id); a person retelling it drops the prefix or the id ("Error: rank 27 and rank 19
# both on CUDA device 53000 (PCI 53:00.0)", "Duplicate GPU detected: rank 3 and rank 7 both on CUDA device").
DUP = lazy_re.compile(
    r"(?:Duplicate GPU detected\s*:?\s*)?rank (\d+) and rank (\d+) both on CUDA device(?: ([0-9a-fA-F]+)\b)?"
)
# NCCL's shared-memory transport mapping its /dev/shm segment for the GPU: shmOpen's
# cudaHostRegister(ptr, size, cudaHostRegisterMapped) in include/shm.h (2.4-2.11, called from
# transport/shm.cu / shm.cc), ncclShmOpen's cudaHostRegister in misc/shmutils.cc (2.12+). transport/shm.cc's
# own CUDA calls in 2.19+ are cuMem host sharing (217 there is peer access: RUN291), not this. A CUDA failure
# at these lines ("include/shm.h:42 NCCL WARN Cuda failure 'invalid argument'", then "transport/shm.cu:187
# -> 1") is the segment or the host's pinning limits, not the job's use of NCCL.
_SHM_SOURCE = lazy_re.compile(r"(?<![\w/])(?:include/shm\.h|misc/shmutils\.cc):\d+")
CUDA_FAIL = lazy_re.compile(r"Cuda failure (?:(\d+) )?'?([^'\n]+)'?", re.I)
NCCL_ALLOC = lazy_re.compile(r"Failed to CUDA (?:calloc|malloc|host alloc)(?: async)?(?: (\d+) bytes)?")
# (the symbol quoted, as a title or a tool writes it: 'undefined symbol: "ncclCommWindowRegister"')
UNDEF = lazy_re.compile(r"undefined symbol: [\"'`]?(nccl\w+)")
# ... and ProcessGroupNCCL's own version floors (1.x-2.x): "AVG requires NCCL 2.10+", "PreMulSum requires
# NCCL>=2.11.1", "Capturing NCCL collectives is only allowed with NCCL >= 2.9.6", "ProcessGroupNCCL only
# supports alltoall* for NCCL lib version >= 2.7.0".
VERSION = lazy_re.compile(
    r"NCCL version mismatch|requires NCCL ?(?:version |>= ?)?[\d.]+|"
    r"NCCL [\d.]+ or (?:newer|later) is required|only allowed with NCCL >= ?[\d.]+|"
    r"for NCCL lib version >= ?[\d.]+"
)
# The floors' own words, which stand for them without the exception type before them (a thread's title).
VERSION_WORDS = (b"requires NCCL", b"for NCCL lib version", b"only allowed with NCCL")
# ProcessGroupNCCL's tensor checks (nccl_errors' _C10D_ARGS) by their own words likewise, as a title quotes
# "Tensors must be CUDA and dense"; "Backend nccl does not support <op>" is too plain for that: it keeps the
# exception type as its anchor.
TENSOR_CHECK_WORDS = (
    b"Tensors must be ",
    b"Tensors must have identical",
    b"Tensor list must be nonempty",
    b"dense tensor is supported for NCCL",
    b"ProcessGroupNCCL does not support",
    b"is currently not supported with NCCL",
    b"SMDDP does not support",
    # every backend's reduce-op check (ProcessGroupNCCL/Gloo/UCC in torch 1.x-2.x, XCCL in torch-xpu-ops):
    # "Cannot use ReduceOp.PREMUL_SUM with Gloo", "... with XCCL", "Cannot use ReduceOp.BAND with
    # non-integral dtype"
    b"Cannot use ReduceOp.",
    b"Tensors for P2P must be",
    b"end_coalescing before start_coalescing",
    b"tensors are not at the same device",
    b"tensors are not the same dtype",
    b"NCCL_SPLIT_NOCOLOR",
    b"before mem pool creation",
)
# ProcessGroupNCCL's checks of 2.x read in the CUDA builds' strings (torch 2.1.2-2.9.1 libtorch_cuda.so):
# "Tensors for P2P must be non-overlapping and dense" (send/recv), "Something went wrong. Did you call
# end_coalescing before start_coalescing?" (2.1-2.9, 2.1's "Somthing"), the device and dtype checks of the
# single-tensor collectives ("<op> tensors are not at the same device, found input tensor at cuda:0 and output
# tensor at cuda:1", "... tensors are not the same dtype, found input tensor with ..."); with their gate
# words.
TENSOR_CHECKS_2X = (
    r"Tensors for P2P must be non-overlapping and dense|"
    r"Did you call end_coalescing before start_coalescing|"
    r"tensors are not (?:at the same device, found input tensor at|the same dtype, found input tensor with)|"
    # split_group's color (2.6+) and register_mem_pool on a communicator not made yet (2.8+)
    r"Color must be a non-negative value or NCCL_SPLIT_NOCOLOR|"
    r"NCCL communicator has not been initialized before mem pool creation"
)
TENSOR_CHECK_GATE_2X = (
    "tensors for p2p",
    "end_coalescing",
    "tensors are not",
    "nccl_split_nocolor",
    "before mem pool creation",
)
# ... of which the reduce-op check of another backend is torch.distributed's (RUN301), not NCCL's; SageMaker's
# SMDDP backend refuses ops it lacks ("RuntimeError: SMDDP does not support: ReduceOp" for ReduceOp.AVG).
OTHER_BACKEND_OP = lazy_re.compile(
    r"(?:Cannot use ReduceOp\.\w+ with |(?=SMDDP ))(Gloo|XCCL|UCC|MPI|HCCL|SMDDP)\b"
)
_OWN_CHECK = lazy_re.compile(r"ProcessGroup(Gloo|MPI|UCC)::")


def rejection(tail: str, matched: str) -> tuple[str, str]:
    """(the backend whose check refused a call, what it said): ProcessGroupGloo's own checks are
    gloo's, not NCCL's, and say what was wrong after the prefix matched ("invalid tensor size...")."""
    m = OTHER_BACKEND_OP.search(matched) or _OWN_CHECK.search(matched)
    said = clip(tail.strip(), 200) if m and "::" in m.group(0) and tail.startswith(matched) else matched
    return (m.group(1).lower() if "::" in m.group(0) else m.group(1)) if m else "NCCL", said


KIND = {
    "unhandled system error": C.NCCL_SYSTEM_ERROR,
    "unhanled system error": C.NCCL_SYSTEM_ERROR,  # (sic) as some NCCL 2.x builds spelled it
    "remote process exited or there was a network error": C.NCCL_REMOTE_ERROR,
    "invalid usage": C.NCCL_INVALID_USAGE,
    "invalid argument": C.NCCL_INVALID_USAGE,
    "internal error": C.NCCL_INTERNAL_ERROR,
    "unhandled cuda error": C.NCCL_CUDA_ERROR,
    # NCCL 1.x's ncclGetErrorString (src/core.cu, torch <= 0.4's bundled NCCL, Horovod/TF of 2017-2018):
    # "NCCL Error 13: invalid data type", "ncclAllReduce failed: invalid device pointer".
    "invalid device pointer": C.NCCL_INVALID_USAGE,
    "invalid rank": C.NCCL_INVALID_USAGE,
    "unsupported device count": C.NCCL_INVALID_USAGE,
    "invalid device index": C.NCCL_INVALID_USAGE,
    "invalid data type": C.NCCL_INVALID_USAGE,
    "invalid reduction operations": C.NCCL_INVALID_USAGE,
    "parameter mismatch between ranks": C.COLLECTIVE_MISMATCH,
    "system error": C.NCCL_SYSTEM_ERROR,
    # ncclGetErrorString of a result it has no name for (2.4-2.29 "unknown result code"; torch adds "Unknown
    # NCCL error!" below): a plugin's or a newer library's code. NCCL failed without saying why.
    "unknown result code": C.NCCL_INTERNAL_ERROR,
    # ncclInProgress (2.14+) reaching a check that only accepts ncclSuccess: a non-blocking communicator
    # (TORCH_NCCL_USE_COMM_NONBLOCKING, ncclConfig_t.blocking=0) used where its caller waits for nothing.
    "nccl operation in progress": C.NCCL_INVALID_USAGE,
}


def kind_of(err: str) -> Any:
    """The code of ncclGetErrorString's text (lower case, read by its start); None for another text."""
    return next((c for k, c in KIND.items() if err.startswith(k)), None)


# The enum and CuPy names of each result (knowledge/nccl_results.py), to its text.
ERRNAMES = lazy_re.ByText(TEXT_BY_NAME)  # a caseless reading captures the names lower-cased

# torch's sentence after the ncclResult name (NCCLUtils.cpp getNcclErrorDetailStr, 1.11+):
# "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
# "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting
# prematurely.", "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.". A thread's title
# or a paste cut before the name keeps only the sentence, which names one result as well as the name does.
# (Its "Internal check failed." and "Call to CUDA function failed." are too plain to stand for NCCL alone:
# they keep the name.) Sentence -> ncclGetErrorString text, as ERRNAMES.
TORCH_DETAIL = lazy_re.ByText(
    {
        "System call (e.g. socket, malloc) or external library call failed": "unhandled system error",
        "A call failed possibly due to a network error or a remote process exiting prematurely": (
            "remote process exited or there was a network error"
        ),
        "This usually reflects invalid usage of NCCL library": "invalid usage",
    }
)
TORCH_DETAIL_TEXT = lazy_re.compile("(" + "|".join(re.escape(t) for t in TORCH_DETAIL) + ")")
# the scanner's anchors of those sentences (each sentence holds one)
TORCH_DETAIL_WORDS = (
    "(e.g. socket, malloc)",
    "possibly due to a network error",
    "invalid usage of NCCL library",
)


def last_error(hit: Hit) -> str:
    """The `Last error:` NCCL appends to torch's exception (its last WARN), when present. torch writes
    "Last error: Unknown NCCL Error" when ncclGetLastError had nothing (NCCLUtils.cpp 2.x): no detail."""
    detail = _last_error(hit)
    return "" if detail.strip().rstrip(".!").lower() == "unknown nccl error" else detail


def _last_error(hit: Hit) -> str:
    inline = _INLINE_LAST.search(hit.text)
    if inline:
        return (inline.group(1) or inline.group(2)).strip()
    lines = [ln for ln in hit.after(8) if ln.text.strip()]
    for i, ln in enumerate(lines):
        # torch's "ncclSystemError: ... or device error. " is exactly 100 columns with its trailing
        # space, so the reader may take it for a terminal wrap and join "Last error:" onto it.
        if ln.text.strip().startswith("Last error:") or ln.text.rstrip().endswith("Last error:"):
            rest = ln.text.split("Last error:", 1)[1].strip()
            if rest:
                return rest
            if i + 1 < len(lines) and not lines[i + 1].text.lstrip().startswith(
                ("Exception raised from", "frame #")
            ):
                return lines[i + 1].text.strip()  # (an empty "Last error:" is followed by the C++ stack)
    return ""


def network_facts(text: str) -> dict[str, Any]:
    f: dict[str, Any] = {}
    p = _PEER.search(text)
    if p:
        f["peer"] = p.group(1)
        if p.group(2) or p.group(3):
            f["peer_port"] = int(p.group(2) or p.group(3))
    s = _IB_STATUS.search(text)
    if s:
        f["ib_status"] = s.group(2) or f"error {s.group(1)}"
        if s.group(3):
            f["ib_status_code"] = int(s.group(3))
    proxy = re.search(r"Proxy Call to rank (\d+) failed", text)
    if proxy:
        f["peer_rank"] = int(proxy.group(1))  # the rank whose proxy this process could not reach
    dev = re.search(r"\b(mlx5_\d+(?::\d+)?)", text)
    if dev:
        f["ib_device"] = dev.group(1)
    if IFACE.search(text):
        f["interface_problem"] = True
    return f


def from_detail(
    hit: Hit, detail: str, base: dict[str, Any], used: Any, tier: int, kind_code: Any
) -> list[Event]:
    """Route by NCCL's own detail text: an OOM or illegal access inside NCCL is that, not NCCL."""
    r = hit.rank
    oom = NCCL_ALLOC.search(detail)
    if (oom or "out of memory" in detail) and rem_alloc_garbage(hit):
        return []  # NCCL's remote allocation service read a garbage size from a closed socket (cuda_oom.py)
    if oom:  # NCCL's own GPU allocation failed: the GPU is full (include/alloc.h)
        return [
            event(
                hit,
                C.CUDA_OOM.code,
                f"NCCL could not allocate GPU memory ({oom.group(0)})",
                {
                    **base,
                    "format": "nccl",
                    "likely_cause": "insufficient_memory",
                    **(
                        {"requested_bytes": int(oom.group(1)), "bytes": int(oom.group(1))}
                        if oom.group(1)
                        else {}
                    ),
                },
                used,
                dedupe=(C.CUDA_OOM.code, r, "nccl"),
            )
        ]
    cf = CUDA_FAIL.search(detail)
    if cf:
        what = cf.group(2).strip().rstrip("'")
        # A driver call on a multicast object refused (nvls.cc): the platform, whatever CUDA said.
        feature = platform_feature(hit, f"{hit.text} {detail}", detail, base, used)
        if feature:
            return feature
        # the generic "initialization error" is only known for CUDA's in NCCL's own words
        # (with its number: a message retyped at its end is still known by it)
        num = f"{cf.group(1)} " if cf.group(1) else ""
        env = cuda_error_events(hit, what) or cuda_error_events(hit, f"Cuda failure {num}'{what}'")
        if env:  # the driver stack is not ready (Fabric Manager, old driver): not NCCL's fault
            for ev in env:
                ev.facts.update(base)
                ev.evidence = hit.evidence(used) if used else ev.evidence
            return env
        if _SHM_SOURCE.search(f"{hit.text} {detail}") and "out of memory" not in what:
            return [
                event(
                    hit,
                    C.NCCL_SYSTEM_ERROR.code,
                    f"{hit.who()}: NCCL could not map its shared-memory segment into the GPU's address space "
                    f"(cudaHostRegister of /dev/shm: Cuda failure '{what}'): /dev/shm or the locked-memory "
                    "limit of this container; NCCL_SHM_DISABLE=1 avoids the SHM transport",
                    {**base, "cuda_error": what, "likely_cause": "shared_memory"},
                    used,
                    dedupe=(C.NCCL_SYSTEM_ERROR.code, r, "shm"),
                )
            ]
        if "invalid device ordinal" in what:  # cudaSetDevice on a GPU this process cannot see
            return [
                event(
                    hit,
                    C.DEVICE_MISMATCH.code,
                    f"{hit.who()}: NCCL was asked for a GPU index that is not visible (Cuda failure "
                    f"'{what}': more ranks per node than visible GPUs, or a wrong CUDA_VISIBLE_DEVICES)",
                    {**base, "cuda_error": what},
                    used,
                    dedupe=(C.DEVICE_MISMATCH.code, r),
                )
            ]
        if "out of memory" in what:
            return [
                event(
                    hit,
                    C.CUDA_OOM.code,
                    f"NCCL could not allocate GPU memory (Cuda failure '{what}')",
                    {**base, "format": "nccl", "likely_cause": "insufficient_memory"},
                    used,
                    dedupe=(C.CUDA_OOM.code, r, "nccl"),
                )
            ]
        if "illegal" in what or "launch failure" in what:
            if device_assert_before(hit):
                return []  # the program's own device-side assertion came first: its bug, not the GPU
            return [
                event(
                    hit,
                    C.CUDA_ILLEGAL_ACCESS.code,
                    f"CUDA error inside NCCL: {what} (often a software bug)",
                    {**base, "cuda_error": what},
                    used,
                    dedupe=(C.CUDA_ILLEGAL_ACCESS.code, r),
                )
            ]
        if "driver version is insufficient" in what:
            return [
                event(
                    hit,
                    C.DRIVER_TOO_OLD.code,
                    f"NCCL: {what}",
                    {**base, "cuda_error": what},
                    used,
                    dedupe=(C.DRIVER_TOO_OLD.code, r),
                )
            ]
        if (cf.group(1) == "999" or what == "unknown error") and _init_chain(hit):
            return [
                event(
                    hit,
                    C.NCCL_INIT_CUDA_FAILURE.code,
                    f"{hit.who()}: CUDA answered 999 'unknown error' while NCCL created its communicator "
                    "(its return chain runs through init.cc): the driver or the device state is broken for "
                    "this process (WSL / a desktop driver, a GPU left in a bad state, a driver upgrade "
                    "without a reboot)",
                    {**base, "cuda_error": what, "cuda_error_code": 999, "phase": "communicator_init"},
                    used,
                    dedupe=(C.NCCL_INIT_CUDA_FAILURE.code, r),
                )
            ]
        if kind_code is None or kind_code is C.NCCL_CUDA_ERROR:
            facts = {**base, "cuda_error": what}
            if cf.group(1):
                facts["cuda_error_code"] = int(cf.group(1))
            return [
                event(
                    hit,
                    C.NCCL_CUDA_ERROR.code,
                    f"{hit.who()}: a CUDA call inside NCCL failed: '{what}'",
                    facts,
                    used,
                    tier=1,
                    dedupe=(C.NCCL_CUDA_ERROR.code, r),
                )
            ]
    # NCCL's loading of the driver and NVML, and its topology's NVLink check, under torch's wrapper.
    platform = platform_detail(hit, detail, base, used)
    if platform:
        return platform
    stack = loader.detail_events(hit, detail) or nvml_mismatch_events(hit, detail)
    if stack:
        for ev in stack:
            ev.facts.update(base)
            ev.evidence = hit.evidence(used) if used else ev.evidence
        return stack
    special = special_detail(hit, detail, base, used)
    if special:
        return special
    if IFACE.search(detail):
        kind_code = C.NCCL_SOCKET_ERROR  # whatever NCCL called it, no usable interface is the cause
    elif kind_code is C.NCCL_INTERNAL_ERROR and (
        SOCKET.search(detail) or (not detail and _network_chain(hit))
    ):
        kind_code = C.NCCL_SOCKET_ERROR  # NCCL reports some socket failures as internal errors
    elif kind_code is C.NCCL_INTERNAL_ERROR and IB.search(detail) and _IB_FAILED.search(detail):
        kind_code = C.NCCL_IB_ERROR  # ... and some fabric failures (a completion error, an ibv_* call)
    elif kind_code in (C.NCCL_SYSTEM_ERROR, C.NCCL_REMOTE_ERROR) or kind_code is None:
        if IB.search(detail) and kind_code is not C.NCCL_REMOTE_ERROR:
            kind_code = C.NCCL_IB_ERROR
        elif SOCKET.search(detail) and kind_code is None:
            kind_code = C.NCCL_SOCKET_ERROR
    if kind_code is None:
        return []
    if kind_code is C.NCCL_CUDA_ERROR and not detail:
        site = comm_init_site(hit, base)
        if site:
            return [
                event(
                    hit,
                    C.NCCL_INIT_CUDA_FAILURE.code,
                    f"{hit.who()}: a CUDA call failed while NCCL created its communicator ({site}), "
                    "before any tensor of the program was involved: the driver, the CUDA runtime and the "
                    "NCCL build do not fit, or the GPUs cannot be shared in this container",
                    {**base, "phase": "communicator_init", "init_site": site},
                    used,
                    dedupe=(C.NCCL_INIT_CUDA_FAILURE.code, r),
                )
            ]
    if kind_code is C.NCCL_CUDA_ERROR:
        tier = max(tier, 1)  # a CUDA call failed under NCCL: the CUDA error itself is the cause when shown
    facts = {**base, **network_facts(detail)}
    if detail:
        facts["nccl_last_error"] = detail[:300]
    # A remote error, a dropped connection or a refused one is most often the echo of a peer
    # that died first: a symptom (tier 1) unless nothing better is found.
    if facts.get("interface_problem") or "Socket creation failed" in detail:
        tier = 0  # a configuration error (or a local socket(2) refused), not the echo of a dead peer
    elif kind_code in (C.NCCL_REMOTE_ERROR, C.NCCL_SOCKET_ERROR) or (
        kind_code is C.NCCL_SYSTEM_ERROR and _PEER_GONE.search(detail)
    ):
        tier = max(tier, 1)  # also "unhandled system error" whose Last error is the peer hanging up
    if (kind_code is C.NCCL_IB_ERROR and _WC_PEER_GONE.search(detail)) or (
        kind_code is C.NCCL_SYSTEM_ERROR and tier == 0 and (not detail or SOCKET.search(detail))
    ):
        # A completion that gave up on the peer (retries exhausted, work flushed from a QP in error), or an
        # unhandled system error with no cause of its own in sight (NCCL < 2.13 had no ncclRemoteError: torch
        # says "It can be also caused by unexpected exit of a remote peer"), is also what a rank sees when the
        # process at the other end died: causality lets that death lead when the logs show one on another
        # rank (the network stays the cause otherwise, so the tier is kept).
        facts["peer_may_have_died"] = True
    what = f"NCCL {base['nccl_error_text']}" if "nccl_error_text" in base else "NCCL WARN"
    msg = f"{hit.who()}: {what}" + (f": {clip(detail, 200)}" if detail else "")
    return [event(hit, kind_code.code, msg, facts, used, tier=tier, dedupe=(kind_code.code, r))]


# Where a bare "unhandled cuda error" was raised while the communicator was being created: the NCCL call a
# wrapper names (Horovod's and TensorFlow's "ncclCommInitRank failed: ...", XLA's "NCCL operation
# ncclCommInitRank(&comm, nranks, id, rank) failed: ..."), or a framework's communicator set-up in the
# message or on the stack (Paddle: platform/collective_helper.cc's NCCLCommContext::CreateComm,
# distributed.init_parallel_env / parallel_helper._init_parallel_ctx, fluid's ParallelExecutor constructor
# building its NCCLContextMap: its Python frame, or the C++ frame "paddle::platform::NCCLContextMap::
# NCCLContextMap()" of the "*** Check failure stack trace: ***" glog prints below its check). torch's
# ProcessGroupNCCL creates communicators lazily inside the first collective, and its message does not say
# which, so torch's bare wording stays RUN194.
_INIT_CALL = lazy_re.compile(r"^ncclCommInit\w*$|^ncclCommSplit$")
_INIT_FRAME = lazy_re.compile(
    r"collective_helper\.cc|\binit_parallel_env\b|\b_init_parallel_ctx\b|NCCLCommContext|NCCLContextMap|"
    r"parallel_executor\.py\S*,? line \d+, in __init__"
)
# A frame of glog's check-failure stack ("    @     0x7fd3677bda0c  paddle::platform::NCCLContextMap::...").
_GLOG_FRAME = lazy_re.compile(r"^\s*@\s+0x[0-9a-f]+\s")


# NCCL_DEBUG=INFO's return chain of a failure inside communicator creation: "NCCL INFO init.cc:1259 -> 1"
# (init.cu in 2.4-2.8), the frames of initTransportsRank / ncclCommInitRankFunc.
_INIT_CHAIN = lazy_re.compile(r"NCCL INFO (?:\S*/)?init\.(?:cc|cu):\d+ -> 1\b")


def _init_chain(hit: Hit) -> bool:
    """The CUDA failure's return chain (the INFO lines after it) passes through NCCL's init.cc / init.cu."""
    return any(_INIT_CHAIN.search(ln.text) for ln in hit.after(12))


def comm_init_site(hit: Hit, base: dict[str, Any]) -> str:
    """The communicator set-up a bare NCCL CUDA failure was raised in (RUN313), or ""."""
    call = str(base.get("nccl_call") or "")
    if _INIT_CALL.search(call):
        return call
    after = hit.after(24, same_rank=False)
    # the next lines, and the frames of a glog stack trace below the check further on
    frames = [ln for ln in after[4:] if _GLOG_FRAME.search(ln.text)]
    for ln in [*hit.before(24, same_rank=False), hit.line, *after[:4], *frames]:
        m = _INIT_FRAME.search(ln.text)
        if m:
            return m.group(0)
    return ""


# init.cc's checks of ncclConfig_t: "Invalid config blocking attribute value -2147483648" (a config
# struct filled by NCCL_CONFIG_INITIALIZER of a newer NCCL than the library: its magic/size differ).
# A small value (blocking 2, cgaClusterSize 9) is the caller's own setting: invalid usage (below).
_CONFIG_ATTR = lazy_re.compile(r"Invalid config (\w+) attribute value (?:-2147483648|-?\d{6,})\b")
# NCCL_DEBUG=INFO prints every frame an error returns through: "NCCL INFO transport/net.cc:515 -> 2";
# the number is the ncclResult_t. Alone (its WARN cut off) it still names the kind of failure.
CHAIN = lazy_re.compile(r"NCCL INFO (\S+\.(?:cc|cu|h)):(\d+) -> ([1-7])\b")
# Frames of NCCL's socket layer (misc/socket.cc since 2.12, transport/net_socket.cc, bootstrap.cc's sockets).
SOCKET_FRAME = lazy_re.compile(r"(?:^|/)(?:socket|net_socket)\.cc$")
RESULT = {
    1: C.NCCL_CUDA_ERROR,
    2: C.NCCL_SYSTEM_ERROR,
    3: C.NCCL_INTERNAL_ERROR,
    4: C.NCCL_INVALID_USAGE,
    5: C.NCCL_INVALID_USAGE,
    6: C.NCCL_REMOTE_ERROR,
}


# A transport that received more than the receiver posted: ranks posted the same collective with
# different sizes (or different collectives): a mismatch, whatever error NCCL returned for it.
# (bootstrap.cc's "received" wording, also matched here, is read first by bootstrap_truncated below.)
# NCCL's socket transport words it "message truncated : receiving 696320 bytes instead of 32768";
# NET/IB (2.12+) "req 0/1 tag 0 peer 10.0.0.6<58683> collective mismatch error, local size 496640 remote
# size 65536" (2.8-2.11: "collective mismatch error local size 131072 remote 0 addr 7f08... rkey 83000 seq
# 2/2").
TRUNCATED = lazy_re.compile(
    # bootstrap.cc 2.19+ also "received 8,16 bytes instead of 4,16" (two messages at once): the first pair
    # and the transports' "receiving" wording quoted without its head ('NCCL error "receiving 524288 bytes
    # instead of 65536"'): only NCCL's transports say "receiving ... bytes instead of"
    r"(?:[Mm]essage truncated\s*:\s*receiv(?:ed|ing)|\breceiving) (\d+)(?:,\d+)? bytes instead of (\d+)|"
    r"collective mismatch error,? local size (\d+) remote(?: size)? (\d+)"
)
# bootstrap.cc's own check, worded "received" in every version (2.4-2.29; the transports say "receiving" or
# "collective mismatch"): a message of NCCL's out-of-band exchange (connection setup, communicator split,
# allgather of peer info) had another size than the receiver expected. No user tensor goes through it, so
# it is no desync of the program's collectives: NCCL itself (a known bug of some releases, e.g. 2.19.3 on
# EFA) or ranks that loaded different NCCL builds - an internal error, as NCCL returns it.
BOOTSTRAP_TRUNCATED = lazy_re.compile(
    r"Message truncated\s*:\s*received (\d+)(?:,\d+)? bytes instead of (\d+)"
)


def bootstrap_truncated(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """bootstrap.cc's size check (BOOTSTRAP_TRUNCATED) as an internal error with its sizes, or []."""
    m = BOOTSTRAP_TRUNCATED.search(detail)
    if m is None or "NET/Socket" in detail:
        return []
    return [
        event(
            hit,
            C.NCCL_INTERNAL_ERROR.code,
            f"{hit.who()}: NCCL's bootstrap received a {m.group(1)}-byte message where it expected "
            f"{m.group(2)} bytes: its own out-of-band exchange between ranks disagreed (an NCCL bug of that "
            "release, or ranks that loaded different NCCL builds); no user collective is involved",
            {
                **base,
                "nccl_last_error": detail[:300],
                "bytes": int(m.group(1)),
                "expected_bytes": int(m.group(2)),
                "nccl_check": "bootstrap_size",
            },
            used,
            dedupe=(C.NCCL_INTERNAL_ERROR.code, "bootstrap_size"),
        )
    ]


# An internal error returned through the bootstrap's or the socket layer's frames ("NCCL INFO
# bootstrap.cc:312 -> 3", "misc/socket.cc:58 -> 3") just above a report that carries no WARN of its own.
_NET_FRAME = lazy_re.compile(r"NCCL INFO (?:\S*/)?(?:bootstrap|socket|net_socket)\.cc:\d+ -> [36]\b")


# The socket layer's INFO retries of a connect that is refused (socket.h / socket.cc 2.4-2.22, and 2.23+'s
# "socketPollConnect: connect to <addr> returned Connection refused, retrying (3/34)") around the report.
_CONNECT_RETRY = lazy_re.compile(r"(?:Call to connect|connect to \S+) returned [\w ]+, retrying")


def _network_chain(hit: Hit) -> bool:
    return any(_NET_FRAME.search(ln.text) for ln in hit.before(12, same_rank=False)) or any(
        _CONNECT_RETRY.search(ln.text)
        for ln in hit.before(12, same_rank=False) + hit.after(24, same_rank=False)
    )


def special_detail(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """Details whose meaning does not depend on which error code NCCL wrapped them in."""
    feature = platform_feature(hit, detail, detail, base, used)
    if feature:
        return feature
    boot = bootstrap_truncated(hit, detail, base, used)
    if boot:
        return boot
    m = TRUNCATED.search(detail)
    if m:
        got, want = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        return [
            event(
                hit,
                C.COLLECTIVE_MISMATCH.code,
                f"{hit.who()}: NCCL received {got} bytes where {want} "
                "were expected: ranks called the collective with different sizes (or different collectives)",
                {
                    **base,
                    **{k: v for k, v in network_facts(detail).items() if k in ("peer", "peer_port")},
                    "nccl_last_error": detail[:300],
                    "bytes": int(got),
                    "expected_bytes": int(want),
                },
                used,
                dedupe=(C.COLLECTIVE_MISMATCH.code, "truncated"),
            )
        ]
    m = DUP.search(detail)
    if m:
        a, b, dev = int(m.group(1)), int(m.group(2)), m.group(3)
        return [
            event(
                hit,
                C.NCCL_DUPLICATE_GPU.code,
                f"ranks {b} and {a} both use the GPU at bus id {dev}",
                {**base, "ranks": sorted({a, b}), "bus_id": dev},
                used,
                rank=hit.line.rank if hit.line.rank is not None else b,
                dedupe=(C.NCCL_DUPLICATE_GPU.code, dev),
            )
        ]
    m = _CONFIG_ATTR.search(detail)
    if m:
        return [
            event(
                hit,
                C.NCCL_CONFIG_FROM_OTHER_VERSION.code,
                f"{hit.who()}: NCCL rejected its communicator config ({clip(detail, 120)}): "
                "the ncclConfig_t came from another NCCL version's header than the library loaded",
                {**base, "nccl_last_error": detail[:300], "config_attribute": m.group(1)},
                used,
                dedupe=(C.NCCL_CONFIG_FROM_OTHER_VERSION.code,),
            )
        ]
    if SHM.search(detail):  # /dev/shm, by the errno it names (rules/nccl_shm.py)
        return shm_event(hit, detail, base, used)
    for pattern, kind, why, tag in DETAIL_TABLE:
        m = pattern.search(detail)
        if m:
            return [
                event(
                    hit,
                    kind.code,
                    f"{hit.who()}: {why} ({clip(detail, 160)})",
                    {**base, "nccl_last_error": detail[:300], "nccl_check": tag},
                    used,
                    dedupe=(kind.code, hit.rank, tag),
                )
            ]
    return []
