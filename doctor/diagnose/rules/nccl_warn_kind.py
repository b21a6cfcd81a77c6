"""NCCL's WARN records read by the source that prints them, when the detail alone (nccl_detail) does not
decide: argument checks (misc/argcheck.cc) and usage texts are invalid usage, the topology search
(graph/*.cc) an internal error, "Mismatched collective detected" a mismatch, the proxy's report and the
return chain below a WARN ("NCCL INFO file.cc:line -> 3") name the ncclResult_t, the bootstrap root's
checks a rank launched twice or with another world size. nccl_errors finds the WARN lines and calls
warn_kind; nccl_detail's special_detail reads the texts whose meaning does not depend on the source.
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.rules.nccl_detail import CHAIN, RESULT, from_detail, special_detail
from pgdoctor.diagnose.rules.nccl_warn_texts import UDS, USAGE_TEXT
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# WARN records by the NCCL source that prints them: argument checks (misc/argcheck.cc: "Reduce :
# invalid root 0", "invalid type 9", "invalid operation") are invalid usage; the topology and graph
# search (graph/*.cc: "Error : ring 0 does not loop back to start", "Could not find a path")
# are internal errors; "Mismatched collective detected ... around rank 39" is a mismatch.
# NCCL prints __FILE__: "graph/search.cc:1005" as the build names it, "search.cc:1005" where the build passes
# the file alone (many 2.19+ packages), "include/topo.h:27" in 2.3-2.4 (the topology code was a header then).
_WARN_SOURCE = lazy_re.compile(
    r"(?<![\w.-])(?:(?:misc/)?(?P<use>argcheck|enqueue)\.c[cu]|"
    r"(?P<graph>graph/\w+\.(?:cc|h)|(?:paths|search|topo|xml|rings|trees|tuning)\.(?:cc|h)|include/topo\.h)):\d+"
)
_WARN_USAGE = lazy_re.compile(
    r"\binvalid (?:root|type|operation|op|usage|argument|device pointer|config|rank|nranks|comm)\b", re.I
)
# NCCL 2.4's init.cc words the same check "Your program may be hanging, this may be caused by a collective
# mismatch around rank 3. Please check your collective calls at and around this rank."
# A paste cut before the rank ("init.cc:1247 NCCL WARN Mismatched collective detected" as a thread's title) is
# the same check: the rank, when shown, is the suspect.
_WARN_MISMATCH = lazy_re.compile(
    r"(?:Mismatched collective detected|may be caused by a collective mismatch)(?:.*?around rank (\d+))?"
)
# The ring checks of NCCL <= 2.6's init.cc (later graph/rings.cc): "Error : ring 0 does not contain rank 3",
# "... does not loop back to start (3 != 0)" - the rings NCCL built, or NCCL_RINGS gave, are not rings.
_RING_CHECK = lazy_re.compile(r"ring \d+ does not (?:contain rank|loop back)")
# The P2P transport's CUDA calls (transport/p2p.cc 2.4-2.29): "failed to open CUDA IPC handle : 217 peer
# access is not supported between these two devices", "rank 1 failed to get CUDA IPC handle to device 0(=0)
# : 201 invalid device context", "failed to peer with device 1(=1): 704 ...", "cudaIpcGetMemHandle failed :
# invalid argument": a CUDA failure inside NCCL, read as NCCL's own "Cuda failure" text is.
_P2P_CUDA = lazy_re.compile(
    r"(?:failed to (?:open CUDA IPC handle|get CUDA IPC handle to device \S+|peer with device \S+)|"
    r"cudaIpc\w+ failed)\s*:\s*(?:(?P<num>\d+)\s+)?(?P<what>[a-z][\w ,'-]*[a-z])"
)
# bootstrap.cc's root: "Bootstrap Root : rank 1 of 8 ranks has already checked in" (two processes with one
# rank).
_BOOTSTRAP_DUP = lazy_re.compile(r"rank (\d+) of (\d+) ranks has already checked in")
# ... and its check that every rank was started with the root's communicator size: "Bootstrap Root :
# mismatch in rank count from procs 8 : 16" (2.3-2.21: the root's nranks, then the caller's) and "Bootstrap
# Root : mismatch in info from procs, nranks 8 vs 16, nroots 1 vs 1, iroot 0 vs 0" (2.22+): ranks launched
# with different world sizes, or two jobs whose ranks reach one root (a shared NCCL_COMM_ID / unique id).
_BOOTSTRAP_COUNT = lazy_re.compile(
    r"Bootstrap Root : mismatch in "
    r"(?:rank count from procs (\d+) : (\d+)|info from procs, nranks (\d+) vs (\d+))"
)
# enqueue.cc: "Error : no algorithm/protocol available" (2.8-2.19), "No algorithm/protocol available for
# function AllReduce with datatype ncclFloat32. NCCL_ALGO was set to ..." (2.20+), and the symmetric
# kernels' "Error: no symmetric kernel available for function AllGather" (2.27+): NCCL_ALGO / NCCL_PROTO
# (or NCCL_SYM_*) exclude every choice this collective or topology can use.
_NO_ALGO = lazy_re.compile(r"[Nn]o (?:algorithm/protocol|symmetric kernel) available")
# The proxy thread's report names the ncclResult_t of the failed operation (proxy.cc):
# "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3",
# "[Service thread] Error encountered progressing operation=Connect, res=3, closing connection".
_PROXY = lazy_re.compile(
    r"Failed to execute operation (\w+) from rank (\d+), retcode (\d+)|"
    r"Error encountered progressing operation=(\w+), res=(\d+)"
)
# What the socket layer's words (nccl_detail.SOCKET) must not read: the proxy's UDS (RUN615, nccl_warn_texts),
# and net_socket's notes that it clamped a setting and went on ("NET/Socket : NCCL_SOCKET_NTHREADS is greater
# than the maximum allowed, setting to 16", "... the total number of sockets is greater than the maximum
# allowed, setting NCCL_NSOCKS_PERTHREAD to 4": printed on healthy runs that set them high).
NOT_SOCKET = lazy_re.compile(UDS.pattern + r"|greater than the maximum allowed, setting")
# NCCL's reports that carry the ncclResult_t of a failure a WARN before them usually explains (tier 1, read
# as the proxy's retcode is): group.cc "ncclAsyncJobComplete: job 0x.. failed, job error 2" (2.14+),
# init.cc "ncclCommSetAsyncError: error comm 0x.. sets state 6" (2.14+). The teardown's own reports
# ("commReclaim: ... failed in destroy/abort, error 3", "commDestroySync: ... sync hostStream error 1",
# "ncclProxyStop: ... destroys proxy resource error 3") stay nccl_teardown's observations.
_RESULT_REPORT = lazy_re.compile(
    r"(?:ncclAsyncJobComplete: job \S+ failed, job error|ncclCommSetAsyncError: error comm \S+ sets state) "
    r"(\d+)\s*$"
)


# The topology detection's realpath of a PCI path under /sys (misc/topo.cc 2.4-2.5, include/topo.h 2.3,
# graph/xml.cc 2.6+: "Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0"), which
# returns ncclSystemError in every version: a VM or container whose /sys lacks the device's PCI bridge.
# (net_socket's INFO "Could not find real path of /sys/class/net/lo/device", a virtual interface, is no WARN.)
_REAL_PATH = lazy_re.compile(r"Could not find real path of /sys/")


def _topology_system(hit: Hit, msg: str, src: Any) -> list[Event]:
    facts: dict[str, Any] = {"nccl_warn": msg[:300], "nccl_result": 2}
    if src:
        facts["nccl_source"] = src.group(0)
    return [
        event(
            hit,
            C.NCCL_SYSTEM_ERROR.code,
            f"{hit.who()}: a system call of NCCL's topology detection "
            f"failed: {clip(msg, 160)} (a PCI path missing from /sys: VMs, containers)",
            facts,
            dedupe=(C.NCCL_SYSTEM_ERROR.code, hit.rank, "topology"),
        )
    ]


def _result_report(hit: Hit, msg: str, m: re.Match[str]) -> list[Event]:
    res = int(m.group(1))
    kind = RESULT.get(res)
    if kind is None:
        return []
    return [
        event(
            hit,
            kind.code,
            f"{hit.who()}: NCCL reported ncclResult {res} ({clip(msg, 120)})",
            {"nccl_warn": msg[:300], "nccl_result": res},
            tier=1,
            dedupe=(kind.code, hit.rank, "result_report"),
        )
    ]


def warn_kind(hit: Hit, t: str, msg: str) -> list[Event]:
    special = special_detail(hit, msg, {"nccl_warn": msg[:300]}, None)
    if special:
        return special
    if _REAL_PATH.search(msg):
        return _topology_system(hit, msg, _WARN_SOURCE.search(t))
    m = _RESULT_REPORT.search(msg)
    if m:
        return _result_report(hit, msg, m)
    m = _P2P_CUDA.search(msg)
    if m:
        num = f"{m.group('num')} " if m.group("num") else ""
        return from_detail(
            hit, f"Cuda failure {num}'{m.group('what')}'", {"nccl_warn": msg[:300]}, None, 0, None
        )
    m = _WARN_MISMATCH.search(msg)
    if m:
        mfacts: dict[str, Any] = {"nccl_warn": msg[:300]}
        if m.group(1):
            mfacts["suspect_rank"] = int(m.group(1))
        return [
            event(
                hit,
                C.COLLECTIVE_MISMATCH.code,
                "NCCL detected mismatched collectives"
                + (f" around rank {m.group(1)}" if m.group(1) else " (the paste is cut before the rank)"),
                mfacts,
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
    if _WARN_USAGE.search(msg) and (src is None or src.group("use")):
        return [
            event(
                hit,
                C.NCCL_INVALID_USAGE.code,
                f"{hit.who()}: NCCL rejected a call: {clip(msg, 160)}",
                {"nccl_warn": msg[:300]},
                dedupe=(C.NCCL_INVALID_USAGE.code, hit.rank),
            )
        ]
    if _RING_CHECK.search(msg):
        return [
            event(
                hit,
                C.NCCL_INTERNAL_ERROR.code,
                f"{hit.who()}: NCCL's rings are not rings: {clip(msg, 160)} "
                "(NCCL_RINGS, or NCCL's topology search)",
                {"nccl_warn": msg[:300]},
                dedupe=(C.NCCL_INTERNAL_ERROR.code, hit.rank),
            )
        ]
    if (
        src
        and src.group("graph")
        and re.search(r"\bError\b|[Cc]ould not|failed|does not|[Uu]nable to find", msg)
        # search.cc's "Could not find a path for pattern 1, falling back to simple order": NCCL went on
        and not re.search(r"falling back|, ignoring|, disabling", msg)
    ):
        if returned(hit) == 2:  # a system call of the topology detection failed (realpath of a sysfs path)
            return _topology_system(hit, msg, src)
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
