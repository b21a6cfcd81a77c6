"""torch's CUDA-only texts that no other family reads, taken from the strings of the CUDA builds' libraries
(libtorch_cuda*.so, libc10_cuda.so of torch 1.13.1, 2.1.2, 2.6.0, 2.9.1; libc10.so of 2.13 for the
allocator settings it parses since they moved to c10/core):

- CUDA caching allocator settings (c10/cuda/CUDAAllocatorConfig.cpp 1.13-2.8, c10/core/AllocatorConfig.cpp
  2.9+), parsed from PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) at the first CUDA allocation:
  "Unrecognized CachingAllocator option: expandable_segment", 2.9+ "Unrecognized key 'x' in Accelerator
  allocator config.",
  "CachingAllocator option max_split_size_mb too small, must be > 20" (">= " later, also
  max_non_split_rounding_mb, large_segment_size_mb "must be > "), "Error parsing CachingAllocator settings,
  expected :", "Expected a single True/False argument for expandable_segments" (and pinned_use_*),
  "Error, expecting garbage_collection_threshold value" (and roundup_power2_divisions, pinned_*),
  "Error parsing roundup_power2_divisions value", "garbage_collect_threshold too small, set it 0.0~1.0"
  (too big; 2.9+ "is invalid, set it in (0.0, 1.0)"), "Expected closing bracket ']' in ConfigTokenizer but
  reached end of config", "Unknown allocator backend, options are native and cudaMallocAsync",
  "Allocator backend parsed at runtime != allocator backend parsed at load time"; what the settings turn on
  and the job cannot use: "backend:cudaMallocAsync requires CUDA runtime 11.4 or newer, but
  cudaDriverGetVersion returned 11020", "cudaMallocAsync does not yet support shareIpcHandle. If you need
  it, ..." (getIpcDevPtr, recordHistory, attachOutOfMemoryObserver, ...), "Tensors allocated with
  expandable_segments:True cannot be shared between processes. Consider using expandable_segments:False in
  data loading workers via ...", "The kernel on this machine does not support the pidfd_open syscall
  (pidfd_getfd) needed to use IPC for CUDA tensors when expandable_segments:True is set.",
  "torch.cuda.MemPool doesn't currently support expandable_segments." (RUN366).
- ProcessGroupNCCL's health check (TORCH_ENABLE_NCCL_HEALTH_CHECK, 1.13-2.1): "ProcessGroupNCCL: Health
  check failure: Failed to initialize NCCL communicator on rank 3" - a test communicator made at
  init_process_group could not be created; NCCL's own WARN lines say why (RUN363).
- ProcessGroupNCCL 2.3-2.4's heartbeat monitor on a rank that another rank's timeout reached through the
  store: "[PG 0 Rank 1] Received a global timeout from another rank and will start to dump the debug info.
  Last enqueued NCCL work: 10, last completed NCCL work: 9." (RUN151, tier 2: the rank that timed out says
  which collective). 2.6+'s "Observed flight recorder dump signal from another rank via TCPStore." stays
  silent: a dump requested through the store (by hand, or by another job's tool) prints it in a healthy
  run too (tests/diagnose/test_torch_message_audit.py).
- The heartbeat monitor's last word before it aborts the process (ProcessGroupNCCL.cpp 2.2-2.5, LOG(FATAL)
  "[F ...]"; torch_npu's ProcessGroupHCCL and the other vendors' copies say the same of their own backend):
  "ProcessGroupNCCL's watchdog detected a collective timeout and notified current rank." (2.2-2.3), "... a
  collective timeout from rank 3 and notified the current rank.", "... from the local rank.", "... detected a
  dump signal from rank 3 and notified the current rank." (2.4-2.5), each followed by "This is most likely
  caused by incorrect usages of collectives ...": a collective timed out (here or on the rank it names) and
  the monitor killed the process - RUN151 at tier 2 (the rank that timed out names the collective). Its
  "... detected an exception from the local rank." stays silent: an NCCL error ends there as well as a
  timeout. "Could not acquire GIL within 300 ms on exit, possible GIL induced hang", printed only after the
  monitor's loop ended on a timeout or a stuck watchdog - RUN152 at tier 2. Torch 1.8-1.12's "[Rank 0] Found
  key in store: NCCLABORTEDCOMM:<id>, from rank: 1. This means that rank has aborted its NCCL communicators
  previously and is not in a healthy state.. Aborting appropriate communicators": another rank's watchdog
  aborted that communicator (a collective that timed out there, with NCCL_ASYNC_ERROR_HANDLING) and this rank
  follows - RUN151 at tier 2, the rank named is the one to read.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_ALLOC_CONF = lazy_re.compile(
    r"Unrecognized CachingAllocator option: ?(?P<opt>[\w.]*)|"
    r"Unrecognized key '(?P<key>[^'\s]*)' in (?:\w+ )?(?:[Aa]llocator|CachingAllocator) config|"
    r"CachingAllocator option (?P<small>\w+) (?:too small, )?must be >|"
    r"Error parsing (?:CachingAllocator settings|roundup_power2_divisions value)|"
    r"Expected a single True/False argument for (?P<flag>expandable_segments|pinned_\w+)|"
    r"Error, expecting (?P<val>garbage_collection_threshold|roundup_power2_divisions|pinned_\w+) value|"
    r"garbage_collect(?:ion)?_threshold (?:too (?:small|big), set it|is invalid, set it in)|"
    r"Expected closing bracket '\]' in ConfigTokenizer|"
    r"Unknown allocator backend, options are native and cudaMallocAsync|"
    r"Allocator backend parsed at runtime != allocator backend parsed at load time"
)
_ALLOC_FEATURE = lazy_re.compile(
    r"backend:cudaMallocAsync requires CUDA runtime 11\.4 or newer|"
    r"cudaMallocAsync does not yet support (?P<api>\w+)|"
    r"Tensors allocated with expandable_segments:True cannot be shared between processes|"
    r"does not support the (?P<syscall>pidfd_\w+) syscall needed to use IPC for CUDA tensors|"
    r"MemPool doesn't currently support expandable_segments"
)


def _alloc_conf(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    setting = next((g for g in m.groups() if g), "")
    facts: dict[str, Any] = {"env": "PYTORCH_CUDA_ALLOC_CONF", "allocator_check": m.group(0)}
    if setting:
        facts["setting"] = setting
    return [
        row.event(
            hit,
            f"{hit.who()}: PyTorch's CUDA allocator rejected its settings ({m.group(0)}): "
            "PYTORCH_CUDA_ALLOC_CONF holds a key or value this torch does not accept; "
            "print it on every node and correct it (key:value pairs, comma-separated)",
            facts,
            dedupe=(row.code, "alloc_conf"),
        )
    ]


def _alloc_feature(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = m.group(0)
    facts: dict[str, Any] = {"env": "PYTORCH_CUDA_ALLOC_CONF", "allocator_check": t}
    if "cudaMallocAsync" in t:
        facts["setting"] = "backend:cudaMallocAsync"
        what = "backend:cudaMallocAsync cannot serve what the job does here"
    else:
        facts["setting"] = "expandable_segments:True"
        what = "expandable_segments:True cannot be shared between processes on this machine"
    for key in ("api", "syscall"):
        if m.group(key):
            facts[key] = m.group(key)
    return [
        row.event(
            hit,
            f"{hit.who()}: {what} ({t}): turn that setting off in PYTORCH_CUDA_ALLOC_CONF for the "
            "processes that share CUDA tensors (DataLoader workers, torch.multiprocessing), or stop sharing "
            "them",
            facts,
            dedupe=(row.code, "alloc_feature"),
        )
    ]


_HEALTH = lazy_re.compile(
    r"Health check failure: Failed to initialize NCCL communicator(?: on rank (?P<rank>\d+))?"
)


def _health(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    r = int(m.group("rank")) if m.group("rank") else hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: ProcessGroupNCCL's health check (TORCH_ENABLE_NCCL_HEALTH_CHECK) "
            f"could not create "
            "an NCCL communicator at init_process_group: rerun with NCCL_DEBUG=INFO to see NCCL's reason "
            "(the network or interface NCCL picked is the usual cause across nodes)",
            {"health_check": True},
            rank=r,
            dedupe=(row.code, r, "health"),
        )
    ]


_GLOBAL_TIMEOUT = lazy_re.compile(
    r"Received a global timeout from another rank(?:.*?Last enqueued NCCL work:\s*(?P<enq>-?\d+),\s*"
    r"last completed NCCL work:\s*(?P<done>-?\d+))?"
)


def _global_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"timeout_from": "another rank"}
    if m.group("enq"):
        facts["last_enqueued"] = int(m.group("enq"))
        facts["last_completed"] = int(m.group("done"))
    return [
        row.event(
            hit,
            f"{hit.who()}: another rank's collective timed out and told this one through the store; "
            "the rank that timed out names the collective",
            facts,
            dedupe=(row.code, hit.rank, "global_timeout"),
        )
    ]


# The monitor's exit message (2.2-2.5): after a timeout on this rank or on the rank it names.
_MONITOR_EXIT = lazy_re.compile(
    r"ProcessGroup(?P<backend>[A-Z]?CCL|\w+)'s watchdog detected a (?:collective timeout|dump signal)"
    r"(?: from (?P<src>this local rank|the local rank|rank \d+))?(?: and notified (?:the )?current rank)?"
)
_GIL_ON_EXIT = lazy_re.compile(r"Could not acquire GIL within \d+ ?ms on exit, possible GIL induced hang")
_ABORTED_COMM = lazy_re.compile(r"Found key in store: NCCLABORTEDCOMM:\S*?,? from rank: (?P<peer>\d+)")


def _monitor_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    src = m.group("src") or ""
    facts: dict[str, Any] = {"monitor_exit": True, "backend": m.group("backend").lower()}
    if src.startswith("rank "):
        facts["timeout_from_rank"] = int(src.split()[1])
    where = f"on {src}" if src.startswith("rank ") else "on this rank" if src else "on this or another rank"
    return [
        row.event(
            hit,
            f"{hit.who()}: the heartbeat monitor ended the process after a collective timed out {where}; the "
            "rank whose watchdog caught the timeout names the collective",
            facts,
            dedupe=(row.code, hit.rank, "monitor_exit"),
        )
    ]


def _gil_on_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: the heartbeat monitor stopped the process (a collective timed out or the watchdog "
            "hung) and the Python interpreter's lock was held: a thread stuck while holding the GIL (a "
            "data-loader, a callback, a CUDA call) is a likely reason the ranks stopped meeting",
            {"gil_held": True},
            dedupe=(row.code, hit.rank, "gil_on_exit"),
        )
    ]


def _aborted_comm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    peer = int(m.group("peer"))
    return [
        row.event(
            hit,
            f"{hit.who()}: rank {peer} had aborted the communicator (its watchdog caught a failed or "
            f"timed-out collective) and this rank aborted too: read rank {peer}'s log for the collective",
            {"aborted_by_rank": peer},
            dedupe=(row.code, "aborted_comm", peer),
        )
    ]


SIGNATURES = (
    Signature(
        "heartbeat monitor exit after a timeout",
        _MONITOR_EXIT,
        _monitor_exit,
        C.WATCHDOG_TIMEOUT.code,
        tier=2,
        anchors=(b"'s watchdog detected a collective timeout", b"'s watchdog detected a dump signal"),
        words=("watchdog detected a",),
    ),
    Signature(
        "heartbeat monitor found the GIL held",
        _GIL_ON_EXIT,
        _gil_on_exit,
        C.HEARTBEAT_TIMEOUT.code,
        tier=2,
        anchors=(b"Could not acquire GIL within",),
        words=("possible gil induced hang",),
    ),
    Signature(
        "another rank aborted the communicator (1.8-1.12)",
        _ABORTED_COMM,
        _aborted_comm,
        C.WATCHDOG_TIMEOUT.code,
        tier=2,
        anchors=(b"Found key in store: NCCLABORTEDCOMM",),
        words=("ncclabortedcomm",),
    ),
    Signature(
        "cuda allocator settings",
        _ALLOC_CONF,
        _alloc_conf,
        C.CUDA_ALLOC_CONF_REJECTED.code,
        anchors=(
            b"CachingAllocator",
            b"Unrecognized key '",
            b"True/False argument for",
            b"Error, expecting ",
            b"Error parsing roundup_power2",
            b"_threshold too ",
            b"_threshold is invalid",
            b"in ConfigTokenizer",
            b"llocator backend",
        ),
        words=(
            "cachingallocator",
            "unrecognized key",
            "true/false argument",
            "error, expecting",
            "roundup_power2",
            "_threshold",
            "configtokenizer",
            "allocator backend",
        ),
        anchor_from="the 'Unrecognized key ' of the 2.9+ parser, whose config name follows the key",
        examples=(
            "RuntimeError: Unrecognized CachingAllocator option: expandable_segment",
            "RuntimeError: Unrecognized key 'expandable_segment' in Accelerator allocator config.",
            "RuntimeError: Unknown allocator backend, options are native and cudaMallocAsync",
        ),
    ),
    Signature(
        "cuda allocator feature",
        _ALLOC_FEATURE,
        _alloc_feature,
        C.CUDA_ALLOC_CONF_REJECTED.code,
        anchors=(
            b"backend:cudaMallocAsync requires",
            b"cudaMallocAsync does not yet support",
            b"expandable_segments:True cannot be shared",
            b"needed to use IPC for CUDA tensors",
            b"doesn't currently support expandable_segments",
        ),
        words=("cudamallocasync", "expandable_segments", "ipc for cuda tensors"),
    ),
    Signature(
        "nccl health check",
        _HEALTH,
        _health,
        C.NCCL_COMM_NOT_CREATED.code,
        tier=1,
        anchors=(b"Health check failure: Failed to initialize NCCL",),
        words=("health check failure",),
    ),
    Signature(
        "global timeout from another rank",
        _GLOBAL_TIMEOUT,
        _global_timeout,
        C.WATCHDOG_TIMEOUT.code,
        tier=2,
        anchors=(b"Received a global timeout from another rank",),
        words=("global timeout",),
    ),
)
parse = gated_reader(SIGNATURES)
