"""nccl_network and nccl_usage: NCCL's own errors, as torch reports them and as NCCL WARN lines.

Formats: torch (ProcessGroupNCCL / NCCLUtils) "NCCL error in: <file>:<line>, <ncclGetErrorString>
(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1" followed by
"ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device
error." and "Last error:" with NCCL's last WARN; NCCL (src/init.cc ncclGetErrorString):
"unhandled system error", "remote process exited or there was a network error", "invalid
usage", "internal error - please report this issue to the NCCL developers", "unhandled cuda
error", "invalid argument"; NCCL WARN lines (src/debug.cc): "\n<host>:<pid>:<tid> [<dev>]
<file>:<line> NCCL WARN <msg>", since 2.23 with "[%F %T] " and " (function)": NET/IB ("Got
completion from peer 10.0.0.2<57926> with error 12, opcode 0, len 0, vendor err 129" and newer
"with status=IBV_WC_RETRY_EXC_ERR(12) opcode=..."), ibv_* call failures, NET/Socket and
socket.cc ("Connection closed by remote peer", "Connect to 10.0.0.2<43251> failed : Connection
refused", "Call to recv from ... failed : Connection reset by peer"), "Bootstrap : no socket
interface found", "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000",
"Cuda failure 'out of memory'". Loader: "undefined symbol: ncclCommRegister" (torch built for a
newer NCCL than the one loaded). gloo (pair.cc): "Connection closed by peer [10.0.0.2]:5678",
"Connection reset by peer".

Across versions torch also wrote "NCCL error: <text>, NCCL version X" (the 1.1x watchdog) and
"NCCL Error 2: unhandled system error" (1.0); NCCL <= 2.3 printed "host:pid:tid [dev] file:line
WARN msg" without the word NCCL. WARNs are read by the source that prints them: the socket layer
("Call to connect failed : Connection timed out", "socketProgress: Connection closed by remote
peer", "Socket recv failed while polling"), NET/IB completions (also quoted in prose), argument
checks (RUN191), the topology search of graph/*.cc (RUN192), "Mismatched collective detected"
(RUN201) and the proxy's "Failed to execute operation Connect from rank 2, retcode 3" (by its
ncclResult_t). A socket failure that NCCL calls an internal error ("ncclSocketInit: ... neither
AF_INET nor AF_INET6") is network; a CUDA failure of the environment inside NCCL ("Cuda failure
802 'system not yet initialized'") is driver_env.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.rules.driver_env import cuda_error_events
from pgdoctor.diagnose.rules.nccl_platform import platform_feature
from pgdoctor.diagnose.rules.rendezvous import STORE_OP as _STORE_OP
from pgdoctor.diagnose.rules.timeouts import work_facts
from pgdoctor.diagnose.signature import Signature, gate, read
from pgdoctor.knowledge.cuda_errors import find_cuda_error

# torch's text: "NCCL error in: <file>:<line>, <text>, NCCL version X" (1.x-2.x), the watchdog's
# "NCCL error: <text>, NCCL version X" (1.1x-2.0), and 1.0's "NCCL Error 2: unhandled system error".
_TORCH = re.compile(r"NCCL error(?: in: (?P<where>\S+?),?|:)\s+(?P<err>[^(]*?)(?:\s*\(run with NCCL_DEBUG=\w+ for details\))?"
                    r"(?:,?\s*NCCL version (?P<ver>[\w.+-]+)|[`'\"]?\s*$)")
# ncclGetErrorString texts that only NCCL prints, also quoted in prose ("I got an unhandled system error").
_NCCL_TEXT = re.compile(r"unhandled system error|unhandled cuda error|remote process exited or there was a network error")
_OLD_TORCH = re.compile(r"NCCL Error (?P<num>\d): (?P<err>[a-z][a-z ,-]+[a-z])")
# NCCL's WARN record (debug.cc); NCCL <= 2.3 printed "host:pid:tid [dev] file:line WARN msg"
# without the word NCCL.
_WARN = re.compile(r"(?:NCCL WARN|^[\w.-]+:\d+:\d+ \[\d+\] (?:\S+:\d+ )?WARN) (?P<msg>.*)$")
_WORK = re.compile(r"WorkNCCL\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_INLINE_LAST = re.compile(r"Last error:\s*(.+)$")
# ncclResult_t names as torch's exceptions and users' prose quote them.
_NAME_ANYWHERE = re.compile(r"\b(ncclSystemError|ncclRemoteError|ncclInvalidUsage|ncclInvalidArgument|ncclInternalError|"
                            r"ncclUnhandledCudaError)\b")
_NCCL_VER = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
# RDMA transports: NCCL's own NET/IB and the network plugins that replace it (aws-ofi-nccl's NET/OFI
# over libfabric/EFA: "NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument").
_IB = re.compile(r"NET/IB|ibv_\w+|IBV_WC_\w+|mlx5_\d+|NET/OFI")
_IB_STATUS = re.compile(r"(?:with error (\d+)|status=(IBV_WC_\w+)\((\d+)\))")
_PEER = re.compile(r"(?:peer|to|from)\s+\[?(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]+)\]?(?:<(\d+)>|:(\d+))?")
# NCCL's socket layer (socket.cc, include/socket.h of <= 2.3, net_socket.cc, bootstrap.cc).
_SOCKET = re.compile(r"Connection (?:closed by (?:remote )?peer|reset by peer|refused|timed out)|Software caused connection abort|"
                     r"NET/Socket|No route to host|Broken pipe|Call to (?:connect|recv|send|accept|bind|listen)\b[^:]*failed|"
                     r"\bConnect to \S|socket progress error|ncclSocket\w+|Net : |"
                     # EAGAIN from the proxy's accept is NCCL's teardown at process exit, not a failure.
                     r"Socket (?:recv|send) failed|\[Service thread\] Accept failed(?!:? Resource temporarily unavailable)")
# The peer closed or reset the connection: NCCL's socket layer saw the other side go away.
_PEER_GONE = re.compile(r"Connection (?:closed|reset) by (?:remote )?peer")
_IFACE = re.compile(r"no socket interface found|No usable listening interface|Bootstrap : no socket|"
                    r"NCCL_SOCKET_IFNAME|neither AF_INET", re.I)
# Where a dropped connection is the job's own (not a dataset download's "ConnectionError").
_DIST_CONTEXT = re.compile(r"gloo|pair\.cc|ProcessGroup|c10d|torch[./]distributed|NCCL|all_?reduce|broadcast|barrier", re.I)
_IB_COMPLETION = re.compile(r"NET/IB\w*\s*:\s*Got completion from peer")
_DUP = re.compile(r"Duplicate GPU detected\s*:\s*rank (\d+) and rank (\d+) both on CUDA device ([0-9a-fA-F]+)")
_CUDA_FAIL = re.compile(r"Cuda failure (?:(\d+) )?'?([^'\n]+)'?", re.I)
_NCCL_ALLOC = re.compile(r"Failed to CUDA (?:calloc|malloc|host alloc)(?: async)?(?: (\d+) bytes)?")
_UNDEF = re.compile(r"undefined symbol: (nccl\w+)")
_VERSION = re.compile(r"NCCL version mismatch|requires NCCL (?:version )?[\d.]+|NCCL [\d.]+ or (?:newer|later) is required")

_KIND = {
    "unhandled system error": C.NCCL_SYSTEM_ERROR,
    "unhanled system error": C.NCCL_SYSTEM_ERROR,  # (sic) as some NCCL 2.x builds spelled it
    "remote process exited or there was a network error": C.NCCL_REMOTE_ERROR,
    "invalid usage": C.NCCL_INVALID_USAGE,
    "invalid argument": C.NCCL_INVALID_USAGE,
    "internal error": C.NCCL_INTERNAL_ERROR,
    "unhandled cuda error": C.NCCL_CUDA_ERROR,
}
_ERRNAMES = {
    "ncclSystemError": "unhandled system error", "ncclRemoteError": "remote process exited or there was a network error",
    "ncclInvalidUsage": "invalid usage", "ncclInvalidArgument": "invalid argument",
    "ncclInternalError": "internal error", "ncclUnhandledCudaError": "unhandled cuda error",
}


def _last_error(hit: Hit) -> str:
    """The `Last error:` NCCL appends to torch's exception (its last WARN), when present."""
    inline = _INLINE_LAST.search(hit.text)
    if inline:
        return inline.group(1).strip()
    lines = [ln for ln in hit.after(8) if ln.text.strip()]
    for i, ln in enumerate(lines):
        if ln.text.strip().startswith("Last error:"):
            rest = ln.text.split("Last error:", 1)[1].strip()
            if rest:
                return rest
            if i + 1 < len(lines) and not lines[i + 1].text.lstrip().startswith(("Exception raised from", "frame #")):
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
    dev = re.search(r"\b(mlx5_\d+(?::\d+)?)", text)
    if dev:
        f["ib_device"] = dev.group(1)
    if _IFACE.search(text):
        f["interface_problem"] = True
    return f


def _from_detail(hit: Hit, detail: str, base: dict[str, Any], used: Any, tier: int, kind_code: Any) -> list[Event]:
    """Route by NCCL's own detail text: an OOM or illegal access inside NCCL is that, not NCCL."""
    r = hit.rank
    oom = _NCCL_ALLOC.search(detail)
    if oom:  # NCCL's own GPU allocation failed: the GPU is full (include/alloc.h)
        return [event(hit, C.CUDA_OOM.code, f"NCCL could not allocate GPU memory ({oom.group(0)})",
                      {**base, "format": "nccl", "likely_cause": "insufficient_memory",
                       **({"requested_bytes": int(oom.group(1)), "bytes": int(oom.group(1))} if oom.group(1) else {})},
                      used, dedupe=(C.CUDA_OOM.code, r, "nccl"))]
    cf = _CUDA_FAIL.search(detail)
    if cf:
        what = cf.group(2).strip().rstrip("'")
        env = cuda_error_events(hit, what)
        if env:  # the driver stack is not ready (Fabric Manager, old driver): not NCCL's fault
            for ev in env:
                ev.facts.update(base)
                ev.evidence = hit.evidence(used) if used else ev.evidence
            return env
        if "out of memory" in what:
            return [event(hit, C.CUDA_OOM.code, f"NCCL could not allocate GPU memory (Cuda failure '{what}')",
                          {**base, "format": "nccl", "likely_cause": "insufficient_memory"}, used,
                          dedupe=(C.CUDA_OOM.code, r, "nccl"))]
        if "illegal" in what or "launch failure" in what:
            return [event(hit, C.CUDA_ILLEGAL_ACCESS.code, f"CUDA error inside NCCL: {what} (often a software bug)",
                          {**base, "cuda_error": what}, used, dedupe=(C.CUDA_ILLEGAL_ACCESS.code, r))]
        if "driver version is insufficient" in what:
            return [event(hit, C.DRIVER_TOO_OLD.code, f"NCCL: {what}", {**base, "cuda_error": what}, used,
                          dedupe=(C.DRIVER_TOO_OLD.code, r))]
        if kind_code is None or kind_code is C.NCCL_CUDA_ERROR:
            facts = {**base, "cuda_error": what}
            if cf.group(1):
                facts["cuda_error_code"] = int(cf.group(1))
            return [event(hit, C.NCCL_CUDA_ERROR.code, f"{hit.who()}: a CUDA call inside NCCL failed: '{what}'", facts,
                          used, tier=1, dedupe=(C.NCCL_CUDA_ERROR.code, r))]
    special = _special_detail(hit, detail, base, used)
    if special:
        return special
    if _IFACE.search(detail):
        kind_code = C.NCCL_SOCKET_ERROR  # whatever NCCL called it, no usable interface is the cause
    elif kind_code is C.NCCL_INTERNAL_ERROR and _SOCKET.search(detail):
        kind_code = C.NCCL_SOCKET_ERROR  # NCCL reports some socket failures as internal errors
    elif kind_code in (C.NCCL_SYSTEM_ERROR, C.NCCL_REMOTE_ERROR) or kind_code is None:
        if _IB.search(detail) and kind_code is not C.NCCL_REMOTE_ERROR:
            kind_code = C.NCCL_IB_ERROR
        elif _SOCKET.search(detail) and kind_code is None:
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
    if facts.get("interface_problem"):
        tier = 0  # a configuration error, not the echo of a dead peer
    elif kind_code in (C.NCCL_REMOTE_ERROR, C.NCCL_SOCKET_ERROR) or (
            kind_code is C.NCCL_SYSTEM_ERROR and _PEER_GONE.search(detail)):
        tier = max(tier, 1)  # also "unhandled system error" whose Last error is the peer hanging up
    what = f"NCCL {base['nccl_error_text']}" if "nccl_error_text" in base else "NCCL WARN"
    msg = f"{hit.who()}: {what}" + (f": {detail[:200]}" if detail else "")
    return [event(hit, kind_code.code, msg, facts, used, tier=tier, dedupe=(kind_code.code, r))]


# WARN records by the NCCL source that prints them: argument checks (misc/argcheck.cc: "Reduce :
# invalid root 0", "invalid type 9", "invalid operation") are invalid usage; the topology and graph
# search (graph/*.cc: "Error : ring 0 does not loop back to start", "Could not find a path")
# are internal errors; "Mismatched collective detected ... around rank 39" is a mismatch.
_WARN_SOURCE = re.compile(r"\b(misc/argcheck|graph/\w+|enqueue)\.cc:\d+")
_WARN_USAGE = re.compile(r"\binvalid (?:root|type|operation|op|usage|argument|device pointer|config|rank|nranks|comm)\b",
                         re.I)
_WARN_MISMATCH = re.compile(r"Mismatched collective detected.*?around rank (\d+)")
# init.cc's checks of ncclConfig_t: "Invalid config blocking attribute value -2147483648" (a config
# struct filled by NCCL_CONFIG_INITIALIZER of a newer NCCL than the library: its magic/size differ).
_CONFIG_ATTR = re.compile(r"Invalid config (\w+) attribute value")
# bootstrap.cc's root: "Bootstrap Root : rank 1 of 8 ranks has already checked in" (two processes with one rank).
_BOOTSTRAP_DUP = re.compile(r"rank (\d+) of (\d+) ranks has already checked in")
# enqueue.cc: "Error : no algorithm/protocol available" (NCCL_ALGO / NCCL_PROTO exclude every choice).
_NO_ALGO = re.compile(r"no algorithm/protocol available")
# The proxy thread's report names the ncclResult_t of the failed operation (proxy.cc):
# "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3",
# "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection".
_PROXY = re.compile(r"Failed to execute operation (\w+) from rank (\d+), retcode (\d+)|"
                    r"Error encountered progressing operation=(\w+), res=(\d+)")
# NCCL_DEBUG=INFO prints every frame an error returns through: "NCCL INFO transport/net.cc:515 -> 2";
# the number is the ncclResult_t. Alone (its WARN cut off) it still names the kind of failure.
_CHAIN = re.compile(r"NCCL INFO (\S+\.(?:cc|cu|h)):(\d+) -> ([1-7])\b")
# Frames of NCCL's socket layer (misc/socket.cc since 2.12, transport/net_socket.cc, bootstrap.cc's sockets).
_SOCKET_FRAME = re.compile(r"(?:^|/)(?:socket|net_socket)\.cc$")
_RESULT = {1: C.NCCL_CUDA_ERROR, 2: C.NCCL_SYSTEM_ERROR, 3: C.NCCL_INTERNAL_ERROR, 4: C.NCCL_INVALID_USAGE,
           5: C.NCCL_INVALID_USAGE, 6: C.NCCL_REMOTE_ERROR}


# "Message truncated : received 2048 bytes instead of 1024": ranks posted the same collective with
# different sizes (or different collectives): a mismatch, whatever error NCCL returned for it.
# NCCL <= 2.4's socket transport words it "message truncated : receiving 696320 bytes instead of 32768";
# NET/IB (2.12+) "req 0/1 tag 0 peer 10.0.0.6<58683> collective mismatch error, local size 496640 remote
# size 65536" (2.8-2.11: "collective mismatch error local size 131072 remote 0 addr 7f08... rkey 83000 seq 2/2").
TRUNCATED = re.compile(r"[Mm]essage truncated\s*:\s*receiv(?:ed|ing) (\d+) bytes instead of (\d+)|"
                        r"collective mismatch error,? local size (\d+) remote(?: size)? (\d+)")
# /dev/shm too small (containers without --shm-size / --ipc=host): "Error while creating shared
# memory segment /dev/shm/nccl-vzIpS6 (size 9637888)", shm_open / posix_fallocate failures.
_SHM = re.compile(r"shared memory segment|/dev/shm/|shm_open|posix_fallocate|ftruncate", re.I)


def _special_detail(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """Details whose meaning does not depend on which error code NCCL wrapped them in."""
    feature = platform_feature(hit, detail, detail, base, used)
    if feature:
        return feature
    m = TRUNCATED.search(detail)
    if m:
        got, want = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        return [event(hit, C.COLLECTIVE_MISMATCH.code, f"{hit.who()}: NCCL received {got} bytes where {want} "
                      "were expected: ranks called the collective with different sizes (or different collectives)",
                      {**base, "nccl_last_error": detail[:300], "bytes": int(got), "expected_bytes": int(want)},
                      used, dedupe=(C.COLLECTIVE_MISMATCH.code, "truncated"))]
    m = _DUP.search(detail)
    if m:
        a, b, dev = int(m.group(1)), int(m.group(2)), m.group(3)
        return [event(hit, C.NCCL_DUPLICATE_GPU.code, f"ranks {b} and {a} both use the GPU at bus id {dev}",
                      {**base, "ranks": sorted({a, b}), "bus_id": dev}, used, dedupe=(C.NCCL_DUPLICATE_GPU.code, dev))]
    m = _CONFIG_ATTR.search(detail)
    if m:
        return [event(hit, C.NCCL_VERSION.code, f"{hit.who()}: NCCL rejected its communicator config ({detail[:120]}): "
                      "the ncclConfig_t came from another NCCL version's header than the library loaded",
                      {**base, "nccl_last_error": detail[:300], "config_attribute": m.group(1)},
                      used, dedupe=(C.NCCL_VERSION.code, "config"))]
    if _SHM.search(detail):
        return [event(hit, C.NCCL_SYSTEM_ERROR.code, f"{hit.who()}: NCCL could not create its shared memory segment "
                      "(/dev/shm too small: a container without --shm-size or --ipc=host)",
                      {**base, "nccl_last_error": detail[:300], "likely_cause": "shared_memory"}, used,
                      dedupe=(C.NCCL_SYSTEM_ERROR.code, "shm"))]
    return []


def _warn_kind(hit: Hit, t: str, msg: str) -> list[Event]:
    special = _special_detail(hit, msg, {"nccl_warn": msg[:300]}, None)
    if special:
        return special
    m = _WARN_MISMATCH.search(msg)
    if m:
        r = int(m.group(1))
        return [event(hit, C.COLLECTIVE_MISMATCH.code, f"NCCL detected mismatched collectives around rank {r}",
                      {"nccl_warn": msg[:300], "suspect_rank": r}, dedupe=(C.COLLECTIVE_MISMATCH.code,))]
    m = _PROXY.search(msg)
    if m:
        res = int(m.group(3) or m.group(5))
        kind = _RESULT.get(res)
        if kind is None:
            return []
        facts: dict[str, Any] = {"nccl_warn": msg[:300], "nccl_result": res, "proxy_op": m.group(1) or m.group(4)}
        if m.group(2):
            facts["rank"] = int(m.group(2))
        # the proxy reports an error that a WARN before it usually explains: a symptom of it
        return [event(hit, kind.code, f"{hit.who()}: NCCL's proxy failed operation {facts['proxy_op']} (ncclResult {res})",
                      facts, tier=1, dedupe=(kind.code, hit.rank, "proxy"))]
    m = _BOOTSTRAP_DUP.search(msg)
    if m:
        return [event(hit, C.RENDEZVOUS_CONFIG.code, f"NCCL's bootstrap root saw rank {m.group(1)} of {m.group(2)} check in "
                      "twice: two processes were given the same rank (RANK / node rank of the launch)",
                      {"nccl_warn": msg[:300], "duplicate_rank": int(m.group(1)), "nranks": int(m.group(2)),
                       "problem": "duplicate_rank"}, dedupe=(C.RENDEZVOUS_CONFIG.code, "duplicate_rank"))]
    if _NO_ALGO.search(msg):
        return [event(hit, C.NCCL_INVALID_USAGE.code, f"{hit.who()}: NCCL found no algorithm/protocol for a collective "
                      "(NCCL_ALGO / NCCL_PROTO restrict it to ones this collective or topology cannot use)",
                      {"nccl_warn": msg[:300], "likely_cause": "nccl_algo_or_proto_setting"},
                      dedupe=(C.NCCL_INVALID_USAGE.code, "no_algo"))]
    src = _WARN_SOURCE.search(t)
    if _WARN_USAGE.search(msg) and (src is None or "argcheck" in src.group(1) or "enqueue" in src.group(1)):
        return [event(hit, C.NCCL_INVALID_USAGE.code, f"{hit.who()}: NCCL rejected a call: {msg[:160]}",
                      {"nccl_warn": msg[:300]}, dedupe=(C.NCCL_INVALID_USAGE.code, hit.rank))]
    if src and src.group(1).startswith("graph/") and re.search(r"\bError\b|[Cc]ould not|failed|does not", msg):
        if _returned(hit) == 2:  # a system call of the topology detection failed (realpath of a sysfs path)
            return [event(hit, C.NCCL_SYSTEM_ERROR.code, f"{hit.who()}: a system call of NCCL's topology detection "
                          f"failed: {msg[:160]} (a PCI path missing from /sys: VMs, containers)",
                          {"nccl_warn": msg[:300], "nccl_source": src.group(0), "nccl_result": 2},
                          dedupe=(C.NCCL_SYSTEM_ERROR.code, hit.rank, "topology"))]
        return [event(hit, C.NCCL_INTERNAL_ERROR.code, f"{hit.who()}: NCCL's topology search failed: {msg[:160]}",
                      {"nccl_warn": msg[:300], "nccl_source": src.group(0)}, dedupe=(C.NCCL_INTERNAL_ERROR.code, hit.rank))]
    return []


def _returned(hit: Hit) -> int:
    """The ncclResult_t of the return chain right below a WARN (0 when none follows): it says which
    kind of failure the WARN's function returned."""
    for ln in hit.after(3):
        m = _CHAIN.search(ln.text)
        if m:
            return int(m.group(3))
    return 0


def _torch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    err = m.group("err").strip().lower()
    code = next((c for k, c in _KIND.items() if err.startswith(k)), None)
    gd = m.groupdict()
    base: dict[str, Any] = {"nccl_error": err, "nccl_error_text": m.group("err").strip()}
    if gd.get("ver"):
        base["nccl_version"] = gd["ver"]
    if gd.get("where"):
        base["where"] = gd["where"]
    w = _WORK.search(t)  # "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised ... NCCL error: ..."
    if w:
        base.update(work_facts(w.group(1)))
    detail = _last_error(hit) or _explaining_line(hit, code)
    if code is None and not detail:
        return []
    return _from_detail(hit, detail, base, None, 0, code)


def _explaining_line(hit: Hit, code: Any) -> str:
    """For torch's NCCL error without "Last error:": a line below it that names the CUDA failure
    behind it (NCCL's "Cuda failure 'out of memory'" / "Failed to CUDA calloc", or a CUDA error of the
    environment quoted in prose: "CUDA driver version is insufficient for CUDA runtime version")."""
    if code not in (C.NCCL_CUDA_ERROR, C.NCCL_INTERNAL_ERROR, C.NCCL_SYSTEM_ERROR, None):
        return ""
    for ln in hit.after(48, same_rank=False):
        t = ln.text
        if _NCCL_ALLOC.search(t) or re.search(r"Cuda failure (?:\d+ )?'?out of memory", t):
            return t.strip()
        if code is C.NCCL_CUDA_ERROR and find_cuda_error(t) is not None:
            return f"Cuda failure '{find_cuda_error(t).message}'"  # type: ignore[union-attr]
    return ""


def _second_line(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # The second line of torch's message; the first one ("NCCL error in:") is the finding.
    prev = " ".join(ln.text for ln in hit.before(2))
    if "NCCL error in:" in prev:
        return []
    err = _ERRNAMES[m.group(1)]
    return _from_detail(hit, _last_error(hit) or _explaining_line(hit, _KIND[err]),
                        {"nccl_error": err, "nccl_error_text": err}, None, 0, _KIND[err])


def _duplicate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a, b, dev = int(m.group(1)), int(m.group(2)), m.group(3)
    return [row.event(hit, f"ranks {b} and {a} both use the GPU at bus id {dev}",
                      {"ranks": sorted({a, b}), "bus_id": dev}, dedupe=(row.code, dev))]


def _undefined(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [row.event(hit, f"the loaded libnccl lacks {m.group(1)}: PyTorch was built against a newer NCCL than the one "
                      "the loader found (another libnccl earlier on the library path, or two nvidia-nccl wheels)",
                      {"missing_symbol": m.group(1)}, dedupe=(row.code, m.group(1)))]


def _version(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    v = _NCCL_VER.search(t)
    return [row.event(hit, f"NCCL version problem: {t.strip()[:160]}",
                      {"nccl_version": v.group(1)} if v else {}, dedupe=(row.code,))]


def _chain(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    res = int(m.group(3))
    kind = _RESULT.get(res)
    if kind is None:
        return []
    if _SOCKET_FRAME.search(m.group(1)):
        kind = C.NCCL_SOCKET_ERROR  # the socket layer returns ncclInternalError for many socket failures
    return [row.event(hit, f"{hit.who()}: an NCCL call failed with ncclResult {res} (return chain from "
                      f"{m.group(1)}:{m.group(2)}; NCCL says why on its WARN line for this call, logged with NCCL_DEBUG=WARN)",
                      {"nccl_result": res, "nccl_source": f"{m.group(1)}:{m.group(2)}"}, code=kind.code,
                      dedupe=(kind.code, hit.rank, "chain"))]


def _warn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    msg = m.group("msg")
    feature = platform_feature(hit, t, msg, {"nccl_warn": msg[:300]}, None)
    if feature:
        return feature
    cf = _CUDA_FAIL.search(msg)
    if cf:
        # "driver shutting down" at exit is NCCL noticing the process end, not a failure.
        return [] if "shutting down" in cf.group(2) else _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, None)
    if _IB.search(msg) and re.search(r"fail|error|[Ee]rr|IBV_WC_(?!SUCCESS)|[Uu]nable|ERROR|[Cc]ouldn.t|[Cc]ould not", msg):
        return _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, C.NCCL_IB_ERROR)
    if _SOCKET.search(msg) or _IFACE.search(msg):
        return _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 1, C.NCCL_SOCKET_ERROR)
    return _warn_kind(hit, t, msg)


def _ib_completion(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("Last error" in ln.text for ln in hit.before(3)):
        return None
    t = hit.text  # quoted without its WARN prefix (prose)
    return _from_detail(hit, t[m.start():], {"nccl_warn": t[m.start():][:300]}, None, 0, C.NCCL_IB_ERROR)


def _name_anywhere(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if hit.text.lstrip().startswith(m.group(1)):
        return None
    err = _ERRNAMES[m.group(1)]
    return _from_detail(hit, _last_error(hit), {"nccl_error": err, "nccl_error_text": err}, None, 0, _KIND[err])


def _nccl_text(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "nccl" not in " ".join([hit.text] + [ln.text for ln in hit.before(3)]).lower():
        return None  # "NCCL error", but also TF/JAX's "ncclCommInitRank failed: unhandled system error"
    err = m.group(0)
    return _from_detail(hit, _last_error(hit) or _explaining_line(hit, _KIND[err]),
                        {"nccl_error": err, "nccl_error_text": err}, None, 0, _KIND[err])


# ProcessGroupNCCL's checks of the tensors it is given (check_gpu_single_tensor and friends, 1.0-2.x):
# "Tensors must be contiguous", "Tensors must be CUDA and dense", 1.0's "Only CUDA dense tensor is
# supported for NCCL collective operations", "Tensor list must be nonempty", "Tensors must be on the
# same device" - the program's call, whichever backend error type wraps it; and a collective the backend
# does not have: 1.x "ProcessGroupNCCL does not support gather" / "... recvAnysource", the base class's
# "ProcessGroup nccl does not support alltoall", 2.x Backend.hpp "Backend nccl does not support allgather_into_tensor_coalesced",
# "allreduce_coalesced is currently not supported with NCCL".
_C10D_ARGS = re.compile(r"Tensors must be contiguous|Tensors must be CUDA and dense|"
                        r"Only CUDA dense tensor is supported for NCCL|Tensor list must be nonempty|"
                        r"Tensors must be on the same device|Tensor list input and output must have the same size|"
                        r"ProcessGroup(?:NCCL|Gloo|MPI|UCC)? \w* ?does not support \w+|Backend \w+ does not (?:support|implement) \w+|"
                        r"\w+ is currently not supported with NCCL")


def _c10d_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [row.event(hit, f"{hit.who()}: the collective was called with tensors the NCCL backend rejects: {m.group(0)}",
                      {"c10d_check": m.group(0)}, dedupe=(row.code, hit.rank, "args"))]


def _peer_socket(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if _STORE_OP.search(" ".join(ln.text for ln in hit.before(16))):
        return None  # a store operation (the store-based barrier, the rendezvous): the rendezvous module's
    if not (("gloo" in t or "Connection" in t) and re.search(r"Error|error", t)
            and "store->" not in t and "DistNetworkError" not in t and "DistStoreError" not in t
            and _DIST_CONTEXT.search(" ".join([t] + [ln.text for ln in hit.before(4)]))):
        return None  # a store client that lost its server is the rendezvous module's
    # gloo / c10d socket errors outside NCCL: the peer went away.
    return [row.event(hit, f"{hit.who()}: connection to a peer failed: {t.strip()[:160]}",
                      {"backend": "gloo" if "gloo" in t else "unknown", **network_facts(t)},
                      dedupe=(row.code, hit.rank))]


_NAMES = tuple(name.lower() for name in _ERRNAMES)
_EXC = "the exception type ('RuntimeError: ', 'ImportError: ') before the message"
SIGNATURES = (
    Signature("torch nccl error", _TORCH, _torch, C.NCCL_SYSTEM_ERROR.code, anchors=(b"rror",), worth=(rb"\berror\b",),
              words=("nccl error",)),
    Signature("torch 1.0 nccl error", _OLD_TORCH, _torch, C.NCCL_SYSTEM_ERROR.code, anchors=(b"rror",), worth=(rb"Error\b",),
              words=("nccl error",)),
    Signature("ncclResult line", re.compile(r"^\s*(" + "|".join(_ERRNAMES) + r"):"), _second_line,
              C.NCCL_SYSTEM_ERROR.code, anchors=(b"rror",), worth=(rb"Error\b",), words=_NAMES,
              anchor_from="the 'Error' of the ncclResult name; ncclInvalidUsage / ncclInvalidArgument lines only when "
                          "an error word is in them (the first line, 'NCCL error in:', is the finding)",
              examples=("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
                        "error.", "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (error 5).")),
    Signature("duplicate gpu", _DUP, _duplicate, C.NCCL_DUPLICATE_GPU.code, anchors=(b"Duplicate GPU",),
              worth=(rb"Duplicate GPU",), words=("duplicate gpu detected",)),
    Signature("undefined nccl symbol", _UNDEF, _undefined, C.NCCL_VERSION.code, anchors=(b"rror",), worth=(rb"Error\b",),
              words=("undefined symbol: nccl",), anchor_from=_EXC,
              examples=("ImportError: /usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                        "ncclCommRegister",)),
    Signature("nccl version", _VERSION, _version, C.NCCL_VERSION.code, anchors=(b"version mismatch", b"rror"),
              worth=(rb"version mismatch", rb"Error\b"),
              words=("nccl version mismatch", "requires nccl", "or newer is required", "or later is required"),
              anchor_from=_EXC, examples=("RuntimeError: this build requires NCCL 2.19.3 or newer",)),
    Signature("nccl return chain", _CHAIN, _chain, C.NCCL_SYSTEM_ERROR.code, tier=1, anchors=(b".cc:",),
              worth=(rb"\.(?:cc|cu|h):\d+ -> [1-7]\b",), words=("nccl info",),
              anchor_from="the '.cc:' of the source file (a '.cu:' or '.h:' frame is read when a '.cc:' one is in the line)",
              examples=("node-1:1234:1250 [0] NCCL INFO transport/net.cc:515 -> 2",)),
    Signature("nccl warn", _WARN, _warn, C.NCCL_SYSTEM_ERROR.code, anchors=(b"WARN",), worth=(rb"NCCL WARN",),
              words=("warn ",)),
    Signature("ib completion in prose", _IB_COMPLETION, _ib_completion, C.NCCL_IB_ERROR.code, anchors=(b"rror",),
              worth=(rb"ompletion from peer",), words=("got completion from peer",),
              anchor_from="the completion's own 'with error 12' / 'status=IBV_WC_...' (an 'error' word)",
              examples=("NET/IB : Got completion from peer 10.0.0.2<57926> with error 12, opcode 0, len 0, vendor err 129",)),
    Signature("ncclResult name in a line", _NAME_ANYWHERE, _name_anywhere, C.NCCL_SYSTEM_ERROR.code, anchors=(b"rror",),
              worth=(rb"Error\b",), words=_NAMES, anchor_from="the 'Error' of the name or the exception type before it",
              examples=("RuntimeError: ncclInternalError: Internal check failed.",)),
    Signature("ncclGetErrorString text", _NCCL_TEXT, _nccl_text, C.NCCL_SYSTEM_ERROR.code, anchors=(b"rror",),
              worth=(rb"\berror\b",), words=("unhandled system error", "unhandled cuda error",
                                             "remote process exited or there was a network error")),
    Signature("c10d argument check", _C10D_ARGS, _c10d_args, C.NCCL_INVALID_USAGE.code, anchors=(b"rror",),
              worth=(rb"Error\b",), words=("tensors must be", "only cuda dense tensor", "tensor list", "does not support",
                                           "does not implement", "currently not supported with nccl"),
              anchor_from="the exception type ('ValueError: ', 'RuntimeError: ') before torch's check",
              examples=("ValueError: Tensors must be contiguous",
                        "RuntimeError: Only CUDA dense tensor is supported for NCCL collective operations",
                        "RuntimeError: ProcessGroupNCCL does not support gather",
                        "RuntimeError: Backend nccl does not support allgather_into_tensor_coalesced",
                        "RuntimeError: allreduce_coalesced is currently not supported with NCCL")),
    Signature("peer connection", _SOCKET, _peer_socket, C.NCCL_SOCKET_ERROR.code, tier=1, anchors=(b"rror",),
              worth=(rb"Error\b", rb"\berror\b"), words=("gloo", "connection"),
              anchor_from="an 'Error' / 'error' in the line (required by the row)",
              examples=("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
                        "[10.0.0.2]:5678",)),
)
# Every finding of parse() needs one of its row's words in the hit line (lower case; checked
# before any pattern): the watchdog's own lines ("WorkNCCL(...)") name NCCL but are the timeouts module's.
_WORDS = gate(SIGNATURES)


def parse(hit: Hit) -> list[Event]:
    if _WORDS is not None and not hit.may_hold(_WORDS):
        return []
    return read(hit, SIGNATURES)
