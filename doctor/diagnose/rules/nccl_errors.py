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
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event

_TORCH = re.compile(r"NCCL error in: (?P<where>\S+?),?\s+(?P<err>[^(]*?)(?:\s*\(run with NCCL_DEBUG=\w+ for details\))?"
                    r",?\s*NCCL version (?P<ver>[\w.+-]+)")
_WARN = re.compile(r"NCCL WARN (?P<msg>.*)$")
_NCCL_VER = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_IB = re.compile(r"NET/IB|ibv_\w+|IBV_WC_\w+|mlx5_\d+")
_IB_STATUS = re.compile(r"(?:with error (\d+)|status=(IBV_WC_\w+)\((\d+)\))")
_PEER = re.compile(r"(?:peer|to|from)\s+\[?(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]+)\]?(?:<(\d+)>|:(\d+))?")
_SOCKET = re.compile(r"Connection (?:closed by (?:remote )?peer|reset by peer|refused)|Software caused connection abort|"
                     r"NET/Socket|No route to host|Broken pipe")
_IFACE = re.compile(r"no socket interface found|No usable listening interface|Bootstrap : no socket|"
                    r"NCCL_SOCKET_IFNAME", re.I)
_DUP = re.compile(r"Duplicate GPU detected\s*:\s*rank (\d+) and rank (\d+) both on CUDA device ([0-9a-fA-F]+)")
_CUDA_FAIL = re.compile(r"Cuda failure '?([^'\n]+)'?")
_UNDEF = re.compile(r"undefined symbol: (nccl\w+)")
_VERSION = re.compile(r"NCCL version mismatch|requires NCCL (?:version )?[\d.]+|NCCL [\d.]+ or (?:newer|later) is required")

_KIND = {
    "unhandled system error": C.NCCL_SYSTEM_ERROR,
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
    lines = [ln for ln in hit.after(8) if ln.text.strip()]
    for i, ln in enumerate(lines):
        if ln.text.strip().startswith("Last error:"):
            rest = ln.text.split("Last error:", 1)[1].strip()
            if rest:
                return rest
            if i + 1 < len(lines):
                return lines[i + 1].text.strip()
    return ""


def _network_facts(text: str) -> dict[str, Any]:
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
    cf = _CUDA_FAIL.search(detail)
    if cf:
        what = cf.group(1).strip().rstrip("'")
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
    if _IFACE.search(detail):
        kind_code = C.NCCL_SOCKET_ERROR  # whatever NCCL called it, no usable interface is the cause
    elif kind_code in (C.NCCL_SYSTEM_ERROR, C.NCCL_REMOTE_ERROR) or kind_code is None:
        if _IB.search(detail) and kind_code is not C.NCCL_REMOTE_ERROR:
            kind_code = C.NCCL_IB_ERROR
        elif _SOCKET.search(detail) and kind_code is None:
            kind_code = C.NCCL_SOCKET_ERROR
    if kind_code is None:
        return []
    facts = {**base, **_network_facts(detail)}
    if detail:
        facts["nccl_last_error"] = detail[:300]
    # A remote error, a dropped connection or a refused one is most often the echo of a peer
    # that died first: a symptom (tier 1) unless nothing better is found.
    if facts.get("interface_problem"):
        tier = 0  # a configuration error, not the echo of a dead peer
    elif kind_code in (C.NCCL_REMOTE_ERROR, C.NCCL_SOCKET_ERROR):
        tier = max(tier, 1)
    what = f"NCCL {base['nccl_error_text']}" if "nccl_error_text" in base else "NCCL WARN"
    msg = f"{hit.who()}: {what}" + (f": {detail[:200]}" if detail else "")
    return [event(hit, kind_code.code, msg, facts, used, tier=tier, dedupe=(kind_code.code, r))]


def parse(hit: Hit) -> list[Event]:
    t = hit.text
    m = _TORCH.search(t)
    if m:
        err = m.group("err").strip().lower()
        code = next((c for k, c in _KIND.items() if err.startswith(k)), None)
        base: dict[str, Any] = {"nccl_error": err, "nccl_version": m.group("ver"), "where": m.group("where"),
                                "nccl_error_text": m.group("err").strip()}
        detail = _last_error(hit)
        if code is None and not detail:
            return []
        return _from_detail(hit, detail, base, None, 0, code)
    for name, err in _ERRNAMES.items():
        if t.lstrip().startswith(name + ":"):
            # The second line of torch's message; the first one ("NCCL error in:") is the finding.
            prev = " ".join(ln.text for ln in hit.before(2))
            if "NCCL error in:" in prev:
                return []
            return _from_detail(hit, _last_error(hit), {"nccl_error": err, "nccl_error_text": err}, None, 0, _KIND[err])
    m = _DUP.search(t)
    if m:
        a, b, dev = int(m.group(1)), int(m.group(2)), m.group(3)
        return [event(hit, C.NCCL_DUPLICATE_GPU.code, f"ranks {b} and {a} both use the GPU at bus id {dev}",
                      {"ranks": sorted({a, b}), "bus_id": dev}, dedupe=(C.NCCL_DUPLICATE_GPU.code, dev))]
    m = _UNDEF.search(t)
    if m:
        return [event(hit, C.NCCL_VERSION.code,
                      f"the loaded libnccl lacks {m.group(1)}: PyTorch was built against a newer NCCL",
                      {"missing_symbol": m.group(1)}, dedupe=(C.NCCL_VERSION.code, m.group(1)))]
    if _VERSION.search(t):
        v = _NCCL_VER.search(t)
        return [event(hit, C.NCCL_VERSION.code, f"NCCL version problem: {t.strip()[:160]}",
                      {"nccl_version": v.group(1)} if v else {}, dedupe=(C.NCCL_VERSION.code,))]
    m = _WARN.search(t)
    if m:
        msg = m.group("msg")
        cf = _CUDA_FAIL.search(msg)
        if cf:
            return _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, None) if \
                any(k in cf.group(1) for k in ("out of memory", "illegal", "launch failure", "insufficient")) else []
        if _IB.search(msg) and re.search(r"fail|error|[Ee]rr|IBV_WC_(?!SUCCESS)", msg):
            return _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, C.NCCL_IB_ERROR)
        if _SOCKET.search(msg) or _IFACE.search(msg):
            return _from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 1, C.NCCL_SOCKET_ERROR)
        return []
    if ("gloo" in t or "Connection" in t) and _SOCKET.search(t) and re.search(r"Error|error", t):
        # gloo / c10d socket errors outside NCCL: the peer went away.
        return [event(hit, C.NCCL_SOCKET_ERROR.code, f"{hit.who()}: connection to a peer failed: {t.strip()[:160]}",
                      {"backend": "gloo" if "gloo" in t else "unknown", **_network_facts(t)}, tier=1,
                      dedupe=(C.NCCL_SOCKET_ERROR.code, hit.rank))]
    return []
