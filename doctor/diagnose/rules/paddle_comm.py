"""PaddlePaddle's collective runtime: its communication task manager's timeouts and its TCPStore's start-up
barrier.

collective_timeout in PaddlePaddle: the communication task manager's report of a collective that ran past
the process group's timeout (Paddle 2.6+, the watchdog of its ProcessGroupNCCL / ProcessGroupCustom tasks).

Format (paddle/phi/core/distributed/comm_task_manager.cc, a glog WARNING "W0301 10:30:00.123456 12345
comm_task_manager.cc:146] " before it; the task's trace from nccl_comm_task.cc GetTraceMsg): "Find timeout
start but not finish task:group_key:group_0,group_ranks:[0, 1, 2, 3],global_rank:2,local_rank:2,
comm_count:118,op:allreduce,started:1,completed:0,numel:4096,nranks:4" - the collective started on this
rank and its peers never finished it (a peer is missing or stuck) - and "Find timeout init but not start
task:..." - the collective was enqueued here and never started on the device (the work before it on this
rank's stream is stuck). Either way the cause is on a rank that did not arrive, as for c10d's watchdog.

rendezvous: the TCPStore's master waits for every worker to add itself (phi/core/distributed/store/
tcp_store.cc waitWorkers, under init_parallel_env) and gives up after its timeout with a FatalError
"_timeout:900 elapsed:901 (elapsed > _timeout)=1" and "TCPStore timeouted and not all workers got ready." -
ranks that never started or cannot reach the master, like c10d's store-based barrier.

nccl_network: Paddle's own text of an NCCL failure (platform/enforce.h build_nvidia_error_msg, 2.0-2.2
" Nccl error, <ncclGetErrorString>, detail: <strerror(errno)>", 2.3+ phi/core/enforce.h "NCCL error(2),
unhandled system error.  Detail: <strerror(errno)>"), raised as "OSError: (External) ..." / "ExternalError:".
Paddle adds a detail only when errno is ENOSPC or EAGAIN ("No space left on device", "Resource temporarily
unavailable") and then prints its hint "Please try one of the following solutions: 1. export
NCCL_SHM_DISABLE=1; ... 3. Increase shared memory by setting the -shm-size option": NCCL's shared-memory
segment in /dev/shm could not be made (RUN171), whatever NCCL result the call returned. The SIGABRT that
Paddle's signal handler reports after it is its consequence.

nccl_usage: Paddle's collective layer refusing the arguments of a call (PADDLE_ENFORCE in paddle/fluid/
distributed/collective/ process_group_nccl.cc, check.cc, utils.h, 2.4+; paddle/phi/core/distributed/ 2.6+;
the static graph's c_* ops in paddle/fluid/operators/collective/): "InvalidArgumentError: The length of
size_on_each_rank must be equal to world_size." (Python "ValueError: (InvalidArgument) ..."), then the hint
line "[Hint: Expected ..., but received ...] (at /.../paddle/fluid/distributed/collective/
process_group_nccl.cc:222)". An InvalidArgument, PreconditionNotMet or Unimplemented raised there is the
program's call (split sizes, tensor places, dtypes), not the transport; External (NCCL's own error) and
ResourceExhausted are read by their own rows.

driver_env: a Paddle build without the collective ops (Windows and CPU-only wheels compile no NCCL ops): the
op registry's lookup of one of them fails, in Fluid's Python (framework.py OpProtoHolder.get_op_proto, 1.x)
"ValueError: Operator \"gen_nccl_id\" has not been registered.", in C++ (framework/op_info.h) 1.x "Operator
gen_nccl_id has not been registered" and 2.x "NotFoundError: Operator (c_gen_nccl_id) is not registered.".
Read for the communication ops only (gen_nccl_id / c_gen_*_id, c_comm_init*, the c_* collectives, nccl*):
RUN263, as TensorFlow's NCCL ops missing from its build. Any other op not registered is a model's or a
plug-in's.

nccl_network in Paddle 1.x's parameter-server runtime (paddle/pserver/LightNetwork.cpp, 2016-2018, glog): the
trainer's SocketClient::TcpClient retries a refused connect(2) once a second ("W... LightNetwork.cpp:397]
connection refused by pserver, try again!", silent: the pserver may still be coming up) and after eight tries
ends the process with "F... LightNetwork.cpp:399] connection refused by pserver, maybe pserver failed!" (the
pserver never listened at that address and port, or died: RUN174, tier 1 so that a pserver's own failure in
the log comes first); any other connect error is PCHECK's "Check failed: error >= 0 ERROR connecting to
<host>: <strerror> [<errno>]" (timed out, no route: RUN174).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import KIND, from_detail
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_TASK = lazy_re.compile(
    r"Find timeout (?P<state>start but not finish|init but not start) task:\s*(?P<trace>.*)$"
)
_FIELD = lazy_re.compile(r"(group_key|global_rank|local_rank|comm_count|op|numel|nranks):([^,]+)")
_RANKS = lazy_re.compile(r"group_ranks:\[([^\]]*)\]")
_INT = {"global_rank": "rank", "comm_count": "seq", "numel": "numel_in", "nranks": "group_size"}


def _task(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    trace = m.group("trace")
    facts: dict[str, Any] = {"backend": "paddle", "started": m.group("state").startswith("start")}
    for k, v in _FIELD.findall(trace):
        if k in _INT:
            try:
                facts[_INT[k]] = int(v)
            except ValueError:
                pass
        elif k == "op":
            facts["op"] = v.strip().upper()
        elif k == "group_key":
            facts["pg_name"] = v.strip()
    ranks = _RANKS.search(trace)
    if ranks:
        facts["group_ranks"] = [int(x) for x in re.findall(r"-?\d+", ranks.group(1))]
    r = facts.get("rank", hit.rank)
    what = (
        "started and did not finish: a peer never joined it"
        if facts["started"]
        else "was enqueued and never started: the work before it on this rank's stream is stuck"
    )
    return [
        row.event(
            hit,
            f"{hit.who(r)}: Paddle's {facts.get('op', 'collective')} #{facts.get('seq', '?')} "
            f"ran past the process group timeout and {what}",
            facts,
            rank=r,
            dedupe=(row.code, r, facts.get("pg_name"), facts.get("seq")),
        )
    ]


_STORE = lazy_re.compile(
    r"TCPStore timeouted and not all workers got ready|"
    r"_timeout:(?P<t>\d+) elapsed:(?P<e>\d+) \(elapsed > _timeout\)=1"
)


def _store(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"backend": "paddle", "store": "tcp_store"}
    if m.group("t"):
        facts["timeout_s"], facts["elapsed_s"] = int(m.group("t")), int(m.group("e"))
    return [
        row.event(
            hit,
            "Paddle's TCPStore master gave up waiting for every worker to join"
            + (f" after {facts['elapsed_s']} s" if "elapsed_s" in facts else "")
            + ": some ranks never started, crashed before init_parallel_env, or cannot reach the master",
            facts,
            dedupe=(row.code, "paddle_store"),
        )
    ]


_SHM = lazy_re.compile(
    r"(?:Nccl|NCCL) error(?:\((?P<num>\d+)\))?, (?P<what>[^.,]*)[.,]\s+[Dd]etail: "
    r"(?P<errno>Resource temporarily unavailable|No space left on device)"
)


def _shm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "backend": "paddle",
        "likely_cause": "shared_memory",
        "errno": m.group("errno"),
        "nccl_error": m.group("what").strip(),
    }
    return [
        row.event(
            hit,
            f"{hit.who()}: an NCCL call failed with {m.group('errno')} while NCCL set up its shared memory "
            "(/dev/shm too small: run the container with --shm-size or --ipc=host, or NCCL_SHM_DISABLE=1)",
            facts,
            dedupe=(row.code, "shm"),
        )
    ]


_ENFORCE_AT = lazy_re.compile(
    # the store (phi/core/distributed/store/) is the rendezvous, read by the TCPStore row below
    r"\(at \S*?paddle/(?:fluid/distributed/collective|phi/core/distributed(?!/store/)|fluid/operators/"
    r"collective)/\S*?(?P<file>[\w.]+\.(?:cc|h|cu)):(?P<line>\d+)\)"
)
_ENFORCE_KIND = lazy_re.compile(
    r"\b(?P<kind>InvalidArgument|PreconditionNotMet|Unimplemented)(?:Error:|\))\s*(?P<msg>[^\[]*)"
)


def _enforce_at(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    for ln in (hit.line, *reversed(hit.before(4))):
        k = _ENFORCE_KIND.search(ln.text)
        if k:
            break
    else:
        return None
    msg = k.group("msg").split(" (at ")[0].strip()[:160]
    facts: dict[str, Any] = {"framework": "paddle", "error_type": k.group("kind")}
    facts["where"] = f"{m.group('file')}:{m.group('line')}"
    if msg:
        facts["error"] = msg
    said = f" ({msg})" if msg else ""
    return [
        row.event(
            hit,
            f"PaddlePaddle's collective layer rejected the call's arguments at {facts['where']}{said}: the "
            "program passes the collective something it does not accept (sizes, tensor places, dtypes)",
            facts,
            dedupe=(row.code, "paddle_enforce"),
        )
    ]


# Paddle 0.x-1.x (fluid, 2017-2020): PADDLE_ENFORCE on an ncclResult_t (platform/enforce.h's overload for
# it) throws EnforceNotMet with ncclGetErrorString's text and the place, "<text> at [<file>:<line>]":
# "invalid argument at [/paddle/paddle/operators/nccl_op.cu.cc:193]" (an ncclBcast root outside the
# communicator), "internal error at [/paddle/paddle/fluid/platform/nccl_helper.h:106]" (ncclCommInitAll),
# "unhandled system error at [.../collective_helper.cc:...]". The text names NCCL's result as torch's
# "NCCL error ... <text>" does, and is classified the same way (KIND). Only at an NCCL or collective source
# file: "invalid argument" is CUDA's text for cudaErrorInvalidValue too.
_OLD_ENFORCE = lazy_re.compile(
    r"(?P<text>"
    + "|".join(re.escape(t) for t in sorted(KIND, key=len, reverse=True))
    + r")`?\s+at \[(?P<path>[^\]\s]*?"
    r"(?P<file>[\w.]*(?:nccl|collective|c_\w+_op)[\w.]*\.(?:cc|h|cu)):(?P<line>\d+))\]"
)


def _old_enforce(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = m.group("text")
    where = f"{m.group('file')}:{m.group('line')}"
    base = {"framework": "paddle", "nccl_error_text": text, "where": where}
    return from_detail(hit, f"{text} (PaddlePaddle, at {where})", base, None, 0, KIND[text])


# the op registry's lookup (Python 1.x, C++ 1.x and 2.x wordings) of a communication op
_COMM_OP = (
    r"(?:c_)?gen_(?:nccl|bkcl|hccl|xccl|cncl)_id|c_comm_init\w*|"
    r"c_(?:allreduce|allgather|broadcast|reducescatter|reduce|alltoall|sync_comm_stream|wait_comm|scatter)\w*|"
    r"nccl\w*"
)
_NO_COMM_OP = lazy_re.compile(
    r"Operator \\?\"?\(?(?P<op>" + _COMM_OP + r")\)?\\?\"? (?:has not been|is not) registered"
)


def _no_comm_op(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = m.group("op")
    return [
        row.event(
            hit,
            f"this PaddlePaddle build has no collective ops (operator {op} is not registered): Windows and "
            "CPU-only wheels are built without NCCL; install the Linux GPU build (paddlepaddle-gpu) for "
            "multi-GPU training",
            {"problem": "framework_without_nccl", "framework": "paddle", "op": op},
            dedupe=(row.code, "paddle_no_nccl"),
        )
    ]


# glog's PCHECK appends ": <strerror> [<errno>]" to the message; a quoted sentence is the source's, not a log.
_PSERVER = lazy_re.compile(
    r"(?<![\"'])(?P<refused>connection refused by pserver, maybe pserver failed!?)|"
    r"(?<![\"'])\bERROR connecting to (?P<addr>[^\s:]+): (?P<err>[A-Z][A-Za-z ]+?) \[(?P<errno>\d+)\]"
)


def _pserver(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "paddle", "reporter": "paddle pserver socket (LightNetwork.cpp)"}
    if m.group("refused"):
        facts.update(error="Connection refused", retries=8)
        msg = (
            "a Paddle trainer could not connect to its parameter server: refused 8 times, 1 s apart "
            "(LightNetwork.cpp): no pserver listens at that address and port (not started, died, or "
            "--pservers / --port name another one); start the pservers first and check their logs"
        )
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "pserver"))]
    err, addr = m.group("err"), m.group("addr")
    facts.update(error=err, errno=int(m.group("errno")), peer=addr)
    msg = (
        f"a Paddle trainer could not connect to its parameter server at {addr} ({err}): "
        "the network between the nodes (a firewall, a route, the address the pserver was given)"
    )
    return [row.event(hit, msg, facts, dedupe=(row.code, "pserver"))]


SIGNATURES = (
    Signature(
        "paddle build without collective ops",
        _NO_COMM_OP,
        _no_comm_op,
        C.LIBRARY_MISSING.code,
        anchors=(b"has not been registered", b"is not registered"),
        words=("has not been registered", "is not registered"),
        examples=('ValueError: Operator "gen_nccl_id" has not been registered.',),
    ),
    Signature(
        "paddle 1.x pserver socket",
        _PSERVER,
        _pserver,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"maybe pserver failed", b"ERROR connecting to"),
        worth=(rb"maybe pserver failed", rb"ERROR connecting to [^\s:]+: [A-Z][A-Za-z ]+ \[\d+\]"),
        words=("maybe pserver failed", "error connecting to"),
    ),
    Signature(
        "paddle 1.x nccl enforce",
        _OLD_ENFORCE,
        _old_enforce,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b" at [",),
        worth=(rb"\berror at \[|\b(?:argument|usage|pointer|rank|count|index|type|operations) at \[",),
        words=("nccl", "collective", "_op."),
        anchor_from="the enforce's place ' at [/paddle/.../nccl_op.cu.cc:193]' after NCCL's text",
        examples=("invalid argument at [/paddle/paddle/operators/nccl_op.cu.cc:193]",),
    ),
    Signature(
        "paddle nccl error with shared-memory errno",
        _SHM,
        _shm,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"etail: Resource temporarily", b"etail: No space left"),
        worth=(rb"etail: Resource temporarily", rb"etail: No space left"),
        words=("etail: resource temporarily", "etail: no space left"),
    ),
    Signature(
        "paddle collective argument check",
        _ENFORCE_AT,
        _enforce_at,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"fluid/distributed/collective/", b"core/distributed/", b"operators/collective/"),
        worth=(rb"paddle/(?:fluid/distributed/collective|phi/core/distributed|fluid/operators/collective)/",),
        words=("distributed/collective/", "core/distributed/", "operators/collective/"),
        anchor_from="the enforce's location '(at .../paddle/fluid/distributed/collective/FILE:LINE)'",
        examples=(
            "  [Hint: Expected length_size_on_each_rank == world_size, but received length_size_on_each_rank:"
            "16 != world_size:8.] (at /work/Paddle/paddle/fluid/distributed/collective/"
            "process_group_nccl.cc:222)",
        ),
    ),
    Signature(
        "paddle comm task timeout",
        _TASK,
        _task,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"Find timeout ",),
        worth=(rb"Find timeout ",),
        words=("find timeout",),
    ),
    Signature(
        "paddle TCPStore start-up timeout",
        _STORE,
        _store,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"TCPStore timeouted", b"(elapsed > _timeout)=1"),
        worth=(rb"TCPStore timeouted", rb"\(elapsed > _timeout\)=1"),
        words=("tcpstore timeouted", "elapsed > _timeout"),
    ),
)
parse = gated_reader(SIGNATURES)
