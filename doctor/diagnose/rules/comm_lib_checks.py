"""A communication library's own check of how it is used, below the framework: NVSHMEM running out of a pool
its settings size (RUN586) and gloo's collective algorithms refusing their context or buffers (RUN587). Both
nccl_usage: the library is fine, the way it was configured or called is not.

Formats, read at their sources:
- NVSHMEM (NVIDIA/nvshmem src/host, 2.x-3.x; printed through NVSHMEMI_ERROR_JMP "<file>:<line>: non-zero
  status: <n> <msg>", NVSHMEMI_ERROR_PRINT / _EXIT "<file>:<function>:<line>: <msg>", 3.7's "<file>:<line>:
  error status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) <msg>"): team/team_internal.cpp "No more teams available (max
  = 7), try setting NVSHMEM_MAX_TEAMS environment variable" (the team pool, NVSHMEMX_ERROR_OUT_OF_MEMORY
  though no GPU memory is short; DeepEP's low-latency mode and NVSHMEM-based kernels split teams per group),
  "Unable to allocate enough duplicate teams. This will cause significant performance degradation. Please
  increase NVSHMEM_MAX_TEAMS. Exiting", "Requested 40 teams, but only 32 are supported", "Team index 9 out of
  bounds", "Team index already in use"; mem/mem_heap.cpp "nvshmem malloc failed (hint: check if total
  allocation has exceeded NVSHMEM symmetric size = 1073741824, NVSHMEM symmetric size can be increased using
  NVSHMEM_SYMMETRIC_SIZE environment variable)" (the symmetric heap NVSHMEM reserved at init is full: the
  buffers asked for are larger than NVSHMEM_SYMMETRIC_SIZE), "symmetry check for size failed" / "symmetry
  check failed" (PEs allocated different sizes: nvshmem_malloc is collective), init.cu "nvshmem API called
  before nvshmem_init". Their consequences ("...:nvshmemi_team_allocate_resources:1975: Failed to set team
  index for team -1 is_dupl: 0") repeat the refusal. The transport modules' status lines are
  nvshmem_transport's (RUN393).
- gloo (pytorch/gloo gloo/allgather.cc, allgatherv.cc, allreduce.cc, reduce.cc, alltoall(v).cc, broadcast.cc,
  gather(v).cc, scatter.cc, 2019-2025; the older algorithm classes in gloo/*.h): GLOO_ENFORCE throws
  gloo::EnforceNotMet "[enforce fail at <path>/gloo/allgather.cc:31] context->getPair(recvRank). missing
  connection between rank 0 (this process) and rank 0" (a context without a pair to that peer: a one-process
  world on a gloo before its size-1 support, Horovod's gloo controller with -np 1, or a context never
  connected as a full mesh), and the buffer checks ("[enforce fail at .../gloo/allgather.cc:39] out->size ==
  in->size * context->size. 4096 vs 8192", "opts.elementSize > 0", "in->size % context->size == 0"), raised
  through torch ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/allreduce.cc:...]") or printed by
  std::terminate ("what():  [enforce fail at ...]", then "Aborted", exit status 134). The transport's enforce
  failures (gloo/transport/...) are gloo_errors' and rdzv_values'.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_NVSHMEM = lazy_re.compile(
    r"(?P<teams>No more teams available \(max = (?P<max>\d+)\)|"
    r"Unable to allocate enough duplicate teams|Requested (?P<req>\d+) teams, but only (?P<sup>\d+) are "
    r"supported)|"
    r"(?P<heap>nvshmem malloc failed \(hint: check if total allocation has exceeded NVSHMEM symmetric size"
    r"(?: = (?P<size>\d+))?)|"
    r"(?P<sym>symmetry check (?:for size )?failed)|"
    r"(?P<early>nvshmem API called before nvshmem_init)"
)
# the symmetry check's words are generic: only on NVSHMEM's own line (its source file or its name)
_NVSHMEM_LINE = lazy_re.compile(r"mem_heap\.cpp|nvshmem|NVSHMEM")

_GLOO = lazy_re.compile(
    r"\[enforce fail at (?P<path>[^\]\s]*?\bgloo/(?P<algo>allgatherv?|allreduce\w*|alltoallv?|barrier\w*|"
    r"broadcast\w*|gatherv?|reduce\w*|scatter\w*)\.(?:cc|h)):(?P<line>\d+)\]\s*(?P<cond>[^\n]*)|"
    r"(?P<pair>missing connection between rank (?P<me>\d+) \(this process\) and rank (?P<peer>\d+))"
)


def _nvshmem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    facts: dict[str, Any]
    if m.group("teams"):
        facts = {"resource": "teams", "setting": "NVSHMEM_MAX_TEAMS"}
        if m.group("max"):
            facts["max_teams"] = int(m.group("max"))
        why = "its team pool is used up (more teams or team duplicates than NVSHMEM_MAX_TEAMS allows)"
    elif m.group("heap"):
        facts = {"resource": "symmetric_heap", "setting": "NVSHMEM_SYMMETRIC_SIZE"}
        if m.group("size"):
            facts["symmetric_size"] = int(m.group("size"))
        why = "its symmetric heap is full (the buffers asked for exceed NVSHMEM_SYMMETRIC_SIZE)"
    elif m.group("sym"):
        if not _NVSHMEM_LINE.search(t):
            return None
        facts = {"problem": "symmetry"}
        why = "the PEs allocated different sizes (nvshmem_malloc is collective: one size on every PE)"
    else:
        facts = {"problem": "called_before_init"}
        why = "it was called before nvshmem_init"
    facts["nvshmem_error"] = clip(m.group(0), 120)
    msg = f"{hit.who()}: NVSHMEM refused: {why}; no GPU or fabric fault"
    return [row.event(hit, msg, facts, dedupe=(row.code, facts.get("resource") or facts.get("problem")))]


def _gloo(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"backend": "gloo"}
    pair = re.search(r"missing connection between rank (\d+) \(this process\) and rank (\d+)", hit.text)
    if m.group("algo"):
        facts["collective"] = m.group("algo")
        facts["gloo_source"] = f"{m.group('path').rsplit('/', 1)[-1]}:{m.group('line')}"
        facts["check"] = clip(m.group("cond").strip(), 120)
    if pair:
        me, peer = int(pair.group(1)), int(pair.group(2))
        facts.update(rank=me, peer_rank=peer, problem="missing_pair")
        why = (
            "a one-process world on a gloo without size-1 support (Horovod's gloo controller with -np 1): "
            "run "
            "with more processes or upgrade gloo / Horovod"
            if me == peer
            else f"the context has no connection to rank {peer} (it was never connected as a full mesh)"
        )
    else:
        why = "the buffers or options the caller passed do not fit the collective"
    where = f" in {facts['collective']}" if "collective" in facts else ""
    msg = f"gloo refused a collective{where}: {why}"
    return [row.event(hit, msg, facts, dedupe=(row.code, facts.get("collective", "pair")))]


SIGNATURES = (
    Signature(
        "nvshmem resource limit or usage",
        _NVSHMEM,
        _nvshmem,
        C.NVSHMEM_LIMIT_OR_USAGE.code,
        anchors=(
            b"No more teams available",
            b"Unable to allocate enough duplicate teams",
            b" teams, but only ",
            b"nvshmem malloc failed (hint",
            b"symmetry check ",
            b"nvshmem API called before nvshmem_init",
        ),
        words=("teams", "nvshmem", "symmetry check"),
        examples=(
            "/dvs/p4/build/sw/rel/gpgpu/toolkit/r13.2/main_nvshmem/src/host/team/team_internal.cpp:1821: "
            "error "
            "status: 2 (NVSHMEMX_ERROR_OUT_OF_MEMORY) No more teams available (max = 7), try setting "
            "NVSHMEM_MAX_TEAMS environment variable",
            "/workspace/nvshmem/src/host/mem/mem_heap.cpp:2266: nvshmemi_symmetric_heap_static::"
            "allocate_symmetric_memory:2266: nvshmem malloc failed (hint: check if total allocation has "
            "exceeded "
            "NVSHMEM symmetric size = 1073741824, NVSHMEM symmetric size can be increased using "
            "NVSHMEM_SYMMETRIC_SIZE environment variable)",
        ),
    ),
    Signature(
        "gloo collective check",
        _GLOO,
        _gloo,
        C.GLOO_COLLECTIVE_CHECK.code,
        anchors=(b"[enforce fail at ", b"missing connection between rank "),
        worth=(
            rb"\[enforce fail at [^\]\s]*gloo/(?:all|barrier|broadcast|gather|reduce|scatter)",
            rb"missing connection between rank \d+ \(this process\)",
        ),
        words=("gloo/", "missing connection between rank"),
        examples=(
            "Wed Aug 14 16:00:50 2019[0]<stderr>:  what():  [enforce fail at horovod/third_party/gloo/gloo/"
            "allgather.cc:31] context->getPair(recvRank). missing connection between rank 0 (this process) "
            "and "
            "rank 0",
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/allgather.cc:39] out->size == in->size "
            "* "
            "context->size. 4096 vs 8192",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
