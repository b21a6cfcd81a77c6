"""What one NCCL failure text means: the detail after torch's "NCCL error in:" line, NCCL's "Last
error:" and its WARN lines, read by the source that prints them (socket layer, NET/IB, argument
checks, topology search, proxy, bootstrap). nccl_errors finds the lines; this module turns their
text into events with facts, with nccl_warn_texts' tables of WARN texts by check. The formats are
listed in nccl_errors' docstring.
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.rules import loader
from pgdoctor.diagnose.rules.driver_env import cuda_error_events, nvml_mismatch_events
from pgdoctor.diagnose.rules.gpu_runtime import device_assert_before
from pgdoctor.diagnose.rules.nccl_platform import platform_detail, platform_feature
from pgdoctor.diagnose.rules.nccl_warn_texts import DETAIL_TABLE, USAGE_TEXT
from pgdoctor.knowledge.clip import clip

# torch's "Last error: <WARN>" on one line; XLA's "Last NCCL warning(error) log entry (may be unrelated)
# '<WARN>'." after its "NCCL operation ncclGroupEnd() failed: ...".
_INLINE_LAST = re.compile(
    r"Last error:\s*(.+)$|Last NCCL warning\(error\) log entry \(may be unrelated\) '(.+?)'\.?\s*$"
)
NCCL_VER = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
# RDMA transports: NCCL's own NET/IB and the network plugins that replace it (aws-ofi-nccl's NET/OFI
# over libfabric/EFA: "NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument").
IB = re.compile(r"NET/IB|ibv_\w+|IBV_WC_\w+|mlx5_\d+|NET/OFI")
_IB_STATUS = re.compile(r"(?:with error (\d+)|status=(IBV_WC_\w+)\((\d+)\))")
_PEER = re.compile(
    r"(?:peer|to|from)\s+\[?(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]+)\]?(?:<(\d+)>|:(\d+))?"
)
# NCCL's socket layer (socket.cc, include/socket.h of <= 2.3, net_socket.cc, bootstrap.cc).
SOCKET = re.compile(
    r"Connection (?:closed by (?:remote )?peer|reset by peer|refused|timed out)|Software caused connection "
    r"abort|"
    r"NET/Socket|No route to host|Broken pipe|Call to (?:connect|recv|send|accept|bind|listen)\b[^:]*failed|"
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
    r"Proxy Call to rank \d+ failed \(Connect\)"
)
# The peer closed or reset the connection: NCCL's socket layer saw the other side go away.
_PEER_GONE = re.compile(r"Connection (?:closed|reset) by (?:remote )?peer")
IFACE = re.compile(
    r"no socket interface found|No usable listening interface|Bootstrap : no socket|"
    r"NCCL_SOCKET_IFNAME|neither AF_INET|verify NCCL_OOB_NET_IFNAME|No interface found in the same subnet",
    re.I,
)
# Where a dropped connection is the job's own (not a dataset download's "ConnectionError").
DIST_CONTEXT = re.compile(
    r"gloo|pair\.cc|ProcessGroup|c10d|torch[./]distributed|NCCL|all_?reduce|broadcast|barrier", re.I
)
IB_COMPLETION = re.compile(r"NET/IB\w*\s*:\s*Got completion from peer")
DUP = re.compile(r"Duplicate GPU detected\s*:\s*rank (\d+) and rank (\d+) both on CUDA device ([0-9a-fA-F]+)")
CUDA_FAIL = re.compile(r"Cuda failure (?:(\d+) )?'?([^'\n]+)'?", re.I)
NCCL_ALLOC = re.compile(r"Failed to CUDA (?:calloc|malloc|host alloc)(?: async)?(?: (\d+) bytes)?")
UNDEF = re.compile(r"undefined symbol: (nccl\w+)")
# ... and ProcessGroupNCCL's own version floors (1.x-2.x): "AVG requires NCCL 2.10+", "PreMulSum requires
# NCCL>=2.11.1", "Capturing NCCL collectives is only allowed with NCCL >= 2.9.6", "ProcessGroupNCCL only
# supports alltoall* for NCCL lib version >= 2.7.0".
VERSION = re.compile(
    r"NCCL version mismatch|requires NCCL ?(?:version |>= ?)?[\d.]+|"
    r"NCCL [\d.]+ or (?:newer|later) is required|only allowed with NCCL >= ?[\d.]+|"
    r"for NCCL lib version >= ?[\d.]+"
)

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
}
ERRNAMES = {
    "ncclSystemError": "unhandled system error",
    "ncclRemoteError": "remote process exited or there was a network error",
    "ncclInvalidUsage": "invalid usage",
    "ncclInvalidArgument": "invalid argument",
    "ncclInternalError": "internal error",
    "ncclUnhandledCudaError": "unhandled cuda error",
    # CuPy's NcclError (Ray's collective library, Chainer): "NCCL_ERROR_INVALID_USAGE: invalid usage".
    "NCCL_ERROR_SYSTEM_ERROR": "unhandled system error",
    "NCCL_ERROR_REMOTE_ERROR": "remote process exited or there was a network error",
    "NCCL_ERROR_INVALID_USAGE": "invalid usage",
    "NCCL_ERROR_INVALID_ARGUMENT": "invalid argument",
    "NCCL_ERROR_INTERNAL_ERROR": "internal error",
    "NCCL_ERROR_UNHANDLED_CUDA_ERROR": "unhandled cuda error",
}


def last_error(hit: Hit) -> str:
    """The `Last error:` NCCL appends to torch's exception (its last WARN), when present."""
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
        env = cuda_error_events(hit, what) or cuda_error_events(hit, f"Cuda failure '{what}'")
        if env:  # the driver stack is not ready (Fabric Manager, old driver): not NCCL's fault
            for ev in env:
                ev.facts.update(base)
                ev.evidence = hit.evidence(used) if used else ev.evidence
            return env
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
    special = _special_detail(hit, detail, base, used)
    if special:
        return special
    if IFACE.search(detail):
        kind_code = C.NCCL_SOCKET_ERROR  # whatever NCCL called it, no usable interface is the cause
    elif kind_code is C.NCCL_INTERNAL_ERROR and (
        SOCKET.search(detail) or (not detail and _network_chain(hit))
    ):
        kind_code = C.NCCL_SOCKET_ERROR  # NCCL reports some socket failures as internal errors
    elif kind_code in (C.NCCL_SYSTEM_ERROR, C.NCCL_REMOTE_ERROR) or kind_code is None:
        if IB.search(detail) and kind_code is not C.NCCL_REMOTE_ERROR:
            kind_code = C.NCCL_IB_ERROR
        elif SOCKET.search(detail) and kind_code is None:
            kind_code = C.NCCL_SOCKET_ERROR
    if kind_code is None:
        return []
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
    what = f"NCCL {base['nccl_error_text']}" if "nccl_error_text" in base else "NCCL WARN"
    msg = f"{hit.who()}: {what}" + (f": {clip(detail, 200)}" if detail else "")
    return [event(hit, kind_code.code, msg, facts, used, tier=tier, dedupe=(kind_code.code, r))]


# WARN records by the NCCL source that prints them: argument checks (misc/argcheck.cc: "Reduce :
# invalid root 0", "invalid type 9", "invalid operation") are invalid usage; the topology and graph
# search (graph/*.cc: "Error : ring 0 does not loop back to start", "Could not find a path")
# are internal errors; "Mismatched collective detected ... around rank 39" is a mismatch.
_WARN_SOURCE = re.compile(r"\b(misc/argcheck|graph/\w+|enqueue)\.cc:\d+")
_WARN_USAGE = re.compile(
    r"\binvalid (?:root|type|operation|op|usage|argument|device pointer|config|rank|nranks|comm)\b", re.I
)
_WARN_MISMATCH = re.compile(r"Mismatched collective detected.*?around rank (\d+)")
# init.cc's checks of ncclConfig_t: "Invalid config blocking attribute value -2147483648" (a config
# struct filled by NCCL_CONFIG_INITIALIZER of a newer NCCL than the library: its magic/size differ).
# A small value (blocking 2, cgaClusterSize 9) is the caller's own setting: invalid usage (below).
_CONFIG_ATTR = re.compile(r"Invalid config (\w+) attribute value (?:-2147483648|-?\d{6,})\b")
# bootstrap.cc's root: "Bootstrap Root : rank 1 of 8 ranks has already checked in" (two processes with one
# rank).
_BOOTSTRAP_DUP = re.compile(r"rank (\d+) of (\d+) ranks has already checked in")
# ... and its check that every rank was started with the root's communicator size: "Bootstrap Root :
# mismatch in rank count from procs 8 : 16" (2.3-2.21: the root's nranks, then the caller's) and "Bootstrap
# Root : mismatch in info from procs, nranks 8 vs 16, nroots 1 vs 1, iroot 0 vs 0" (2.22+): ranks launched
# with different world sizes, or two jobs whose ranks reach one root (a shared NCCL_COMM_ID / unique id).
_BOOTSTRAP_COUNT = re.compile(
    r"Bootstrap Root : mismatch in "
    r"(?:rank count from procs (\d+) : (\d+)|info from procs, nranks (\d+) vs (\d+))"
)
# enqueue.cc: "Error : no algorithm/protocol available" (2.8-2.19), "No algorithm/protocol available for
# function AllReduce with datatype ncclFloat32. NCCL_ALGO was set to ..." (2.20+), and the symmetric
# kernels' "Error: no symmetric kernel available for function AllGather" (2.27+): NCCL_ALGO / NCCL_PROTO
# (or NCCL_SYM_*) exclude every choice this collective or topology can use.
_NO_ALGO = re.compile(r"[Nn]o (?:algorithm/protocol|symmetric kernel) available")
# The proxy thread's report names the ncclResult_t of the failed operation (proxy.cc):
# "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3",
# "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection".
_PROXY = re.compile(
    r"Failed to execute operation (\w+) from rank (\d+), retcode (\d+)|"
    r"Error encountered progressing operation=(\w+), res=(\d+)"
)
# NCCL_DEBUG=INFO prints every frame an error returns through: "NCCL INFO transport/net.cc:515 -> 2";
# the number is the ncclResult_t. Alone (its WARN cut off) it still names the kind of failure.
CHAIN = re.compile(r"NCCL INFO (\S+\.(?:cc|cu|h)):(\d+) -> ([1-7])\b")
# Frames of NCCL's socket layer (misc/socket.cc since 2.12, transport/net_socket.cc, bootstrap.cc's sockets).
SOCKET_FRAME = re.compile(r"(?:^|/)(?:socket|net_socket)\.cc$")
RESULT = {
    1: C.NCCL_CUDA_ERROR,
    2: C.NCCL_SYSTEM_ERROR,
    3: C.NCCL_INTERNAL_ERROR,
    4: C.NCCL_INVALID_USAGE,
    5: C.NCCL_INVALID_USAGE,
    6: C.NCCL_REMOTE_ERROR,
}


# "Message truncated : received 2048 bytes instead of 1024": ranks posted the same collective with
# different sizes (or different collectives): a mismatch, whatever error NCCL returned for it.
# NCCL <= 2.4's socket transport words it "message truncated : receiving 696320 bytes instead of 32768";
# NET/IB (2.12+) "req 0/1 tag 0 peer 10.0.0.6<58683> collective mismatch error, local size 496640 remote
# size 65536" (2.8-2.11: "collective mismatch error local size 131072 remote 0 addr 7f08... rkey 83000 seq
# 2/2").
TRUNCATED = re.compile(
    # bootstrap.cc 2.19+ also "received 8,16 bytes instead of 4,16" (two messages at once): the first pair
    r"[Mm]essage truncated\s*:\s*receiv(?:ed|ing) (\d+)(?:,\d+)? bytes instead of (\d+)|"
    r"collective mismatch error,? local size (\d+) remote(?: size)? (\d+)"
)
# /dev/shm too small (containers without --shm-size / --ipc=host): "Error while creating shared
# memory segment /dev/shm/nccl-vzIpS6 (size 9637888)", shm_open / posix_fallocate failures.
_SHM = re.compile(r"shared memory segment|/dev/shm/|shm_open|posix_fallocate|ftruncate", re.I)


# An internal error returned through the bootstrap's or the socket layer's frames ("NCCL INFO
# bootstrap.cc:312 -> 3", "misc/socket.cc:58 -> 3") just above a report that carries no WARN of its own.
_NET_FRAME = re.compile(r"NCCL INFO (?:\S*/)?(?:bootstrap|socket|net_socket)\.cc:\d+ -> [36]\b")


# The socket layer's INFO retries of a connect that is refused (socket.h / socket.cc 2.4-2.22, and 2.23+'s
# "socketPollConnect: connect to <addr> returned Connection refused, retrying (3/34)") around the report.
_CONNECT_RETRY = re.compile(r"(?:Call to connect|connect to \S+) returned [\w ]+, retrying")


def _network_chain(hit: Hit) -> bool:
    return any(_NET_FRAME.search(ln.text) for ln in hit.before(12, same_rank=False)) or any(
        _CONNECT_RETRY.search(ln.text)
        for ln in hit.before(12, same_rank=False) + hit.after(24, same_rank=False)
    )


def _special_detail(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """Details whose meaning does not depend on which error code NCCL wrapped them in."""
    feature = platform_feature(hit, detail, detail, base, used)
    if feature:
        return feature
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
                C.NCCL_VERSION.code,
                f"{hit.who()}: NCCL rejected its communicator config ({clip(detail, 120)}): "
                "the ncclConfig_t came from another NCCL version's header than the library loaded",
                {**base, "nccl_last_error": detail[:300], "config_attribute": m.group(1)},
                used,
                dedupe=(C.NCCL_VERSION.code, "config"),
            )
        ]
    if _SHM.search(detail):
        return [
            event(
                hit,
                C.NCCL_SYSTEM_ERROR.code,
                f"{hit.who()}: NCCL could not create its shared memory segment "
                "(/dev/shm too small: a container without --shm-size or --ipc=host)",
                {**base, "nccl_last_error": detail[:300], "likely_cause": "shared_memory"},
                used,
                dedupe=(C.NCCL_SYSTEM_ERROR.code, "shm"),
            )
        ]
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


def warn_kind(hit: Hit, t: str, msg: str) -> list[Event]:
    special = _special_detail(hit, msg, {"nccl_warn": msg[:300]}, None)
    if special:
        return special
    m = _WARN_MISMATCH.search(msg)
    if m:
        r = int(m.group(1))
        return [
            event(
                hit,
                C.COLLECTIVE_MISMATCH.code,
                f"NCCL detected mismatched collectives around rank {r}",
                {"nccl_warn": msg[:300], "suspect_rank": r},
                dedupe=(C.COLLECTIVE_MISMATCH.code,),
            )
        ]
    m = _PROXY.search(msg)
    if m:
        res = int(m.group(3) or m.group(5))
        kind = RESULT.get(res)
        if kind is None:
            return []
        facts: dict[str, Any] = {
            "nccl_warn": msg[:300],
            "nccl_result": res,
            "proxy_op": m.group(1) or m.group(4),
        }
        if m.group(2):
            facts["rank"] = int(m.group(2))
        # the proxy reports an error that a WARN before it usually explains: a symptom of it
        return [
            event(
                hit,
                kind.code,
                f"{hit.who()}: NCCL's proxy failed operation {facts['proxy_op']} (ncclResult {res})",
                facts,
                tier=1,
                dedupe=(kind.code, hit.rank, "proxy"),
            )
        ]
    m = _BOOTSTRAP_DUP.search(msg)
    if m:
        return [
            event(
                hit,
                C.RENDEZVOUS_CONFIG.code,
                f"NCCL's bootstrap root saw rank {m.group(1)} of {m.group(2)} check in "
                "twice: two processes were given the same rank (RANK / node rank of the launch)",
                {
                    "nccl_warn": msg[:300],
                    "duplicate_rank": int(m.group(1)),
                    "nranks": int(m.group(2)),
                    "problem": "duplicate_rank",
                },
                dedupe=(C.RENDEZVOUS_CONFIG.code, "duplicate_rank"),
            )
        ]
    m = _BOOTSTRAP_COUNT.search(msg)
    if m:
        mine, theirs = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
        return [
            event(
                hit,
                C.RENDEZVOUS_CONFIG.code,
                f"NCCL's bootstrap root expects {mine} ranks but a process checked in with {theirs}: "
                "the ranks were launched with different world sizes, or two jobs share one bootstrap root "
                "(NCCL_COMM_ID, a reused unique id)",
                {"nccl_warn": msg[:300], "nranks": mine, "peer_nranks": theirs, "problem": "nranks_mismatch"},
                dedupe=(C.RENDEZVOUS_CONFIG.code, "nranks_mismatch"),
            )
        ]
    if _NO_ALGO.search(msg):
        return [
            event(
                hit,
                C.NCCL_INVALID_USAGE.code,
                f"{hit.who()}: NCCL found no algorithm/protocol for a collective "
                "(NCCL_ALGO / NCCL_PROTO restrict it to ones this collective or topology cannot use)",
                {"nccl_warn": msg[:300], "likely_cause": "nccl_algo_or_proto_setting"},
                dedupe=(C.NCCL_INVALID_USAGE.code, "no_algo"),
            )
        ]
    src = _WARN_SOURCE.search(t)
    u = USAGE_TEXT.search(msg)
    if u:
        return [
            event(
                hit,
                C.NCCL_INVALID_USAGE.code,
                f"{hit.who()}: NCCL rejected a call: {clip(msg, 160)}",
                {"nccl_warn": msg[:300], "usage_check": u.lastgroup},
                tier=1 if u.lastgroup == "aborted" else 0,  # the abort has a cause of its own, when shown
                dedupe=(C.NCCL_INVALID_USAGE.code, hit.rank),
            )
        ]
    if _WARN_USAGE.search(msg) and (src is None or "argcheck" in src.group(1) or "enqueue" in src.group(1)):
        return [
            event(
                hit,
                C.NCCL_INVALID_USAGE.code,
                f"{hit.who()}: NCCL rejected a call: {clip(msg, 160)}",
                {"nccl_warn": msg[:300]},
                dedupe=(C.NCCL_INVALID_USAGE.code, hit.rank),
            )
        ]
    if (
        src
        and src.group(1).startswith("graph/")
        and re.search(r"\bError\b|[Cc]ould not|failed|does not", msg)
        # search.cc's "Could not find a path for pattern 1, falling back to simple order": NCCL went on
        and not re.search(r"falling back|, ignoring|, disabling", msg)
    ):
        if returned(hit) == 2:  # a system call of the topology detection failed (realpath of a sysfs path)
            return [
                event(
                    hit,
                    C.NCCL_SYSTEM_ERROR.code,
                    f"{hit.who()}: a system call of NCCL's topology detection "
                    f"failed: {clip(msg, 160)} (a PCI path missing from /sys: VMs, containers)",
                    {"nccl_warn": msg[:300], "nccl_source": src.group(0), "nccl_result": 2},
                    dedupe=(C.NCCL_SYSTEM_ERROR.code, hit.rank, "topology"),
                )
            ]
        return [
            event(
                hit,
                C.NCCL_INTERNAL_ERROR.code,
                f"{hit.who()}: NCCL's topology search failed: {clip(msg, 160)}",
                {"nccl_warn": msg[:300], "nccl_source": src.group(0)},
                dedupe=(C.NCCL_INTERNAL_ERROR.code, hit.rank),
            )
        ]
    res = returned(hit)
    if res in (3, 4, 5):
        # Any other WARN whose function returned ncclInternalError / ncclInvalidArgument / ncclInvalidUsage
        # (the "-> 3" frame below it, NCCL_DEBUG=INFO): the WARN says why, the chain says which kind.
        kind = RESULT[res]
        return [
            event(
                hit,
                kind.code,
                f"{hit.who()}: NCCL {ERRORS[res]}: {clip(msg, 160)}",
                {"nccl_warn": msg[:300], "nccl_result": res},
                dedupe=(kind.code, hit.rank),
            )
        ]
    return []


# ncclGetErrorString's text for each ncclResult_t the chain fallback above reads.
ERRORS = {3: "internal error", 4: "invalid argument", 5: "invalid usage"}


def returned(hit: Hit) -> int:
    """The ncclResult_t of the return chain right below a WARN (0 when none follows): it says which
    kind of failure the WARN's function returned."""
    for ln in hit.after(3):
        m = CHAIN.search(ln.text)
        if m:
            return int(m.group(3))
    return 0
