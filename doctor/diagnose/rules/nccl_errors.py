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
"Cuda failure 'out of memory'". Loader: "undefined symbol: ncclCommRegister" (torch built for a newer NCCL
than the one loaded). gloo (pair.cc): "Connection closed by peer [10.0.0.2]:5678", "... reset by peer".

Across versions torch also wrote "NCCL error: <text>, NCCL version X" (the 1.1x watchdog) and "NCCL Error 2:
unhandled system error" (1.0; "NCCL Error 13: invalid data type" with NCCL 1.x's own strings); Horovod,
TensorFlow and XLA print "<ncclCall> failed: <text>", CuPy "NCCL_ERROR_INVALID_USAGE: invalid usage"; NCCL <=
2.3 printed "host:pid:tid [dev] file:line WARN msg" without the word NCCL. WARNs are read by the source that
prints them: the socket layer ("Call to connect failed : Connection timed out", "socketProgress: Connection
closed by remote peer", "Socket recv failed while polling"), NET/IB completions (also quoted in prose),
argument checks (RUN191), the topology search of graph/*.cc (RUN192), "Mismatched collective detected"
(RUN201) and the proxy's "Failed to execute operation Connect from rank 2, retcode 3" (by its ncclResult_t). A
socket failure that NCCL calls an internal error ("ncclSocketInit: ... neither AF_INET nor AF_INET6") is
network; a CUDA failure of the environment inside NCCL ("Cuda failure 802 'system not yet initialized'") is
driver_env.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.c10d_usage import traceback_op
from pgdoctor.diagnose.rules.nccl_detail import (
    CHAIN,
    CUDA_FAIL,
    DIST_CONTEXT,
    DUP,
    ERRNAMES,
    IB,
    IB_COMPLETION,
    IFACE,
    KIND,
    NCCL_ALLOC,
    OTHER_BACKEND_OP,
    RESULT,
    SOCKET,
    SOCKET_FRAME,
    TENSOR_CHECK_GATE_2X,
    TENSOR_CHECK_WORDS,
    TENSOR_CHECKS_2X,
    TORCH_DETAIL,
    TORCH_DETAIL_TEXT,
    TORCH_DETAIL_WORDS,
    UNDEF,
    VERSION,
    VERSION_WORDS,
    from_detail,
    kind_of,
    last_error,
    network_facts,
    rejection,
)
from pgdoctor.diagnose.rules.nccl_platform import platform_feature
from pgdoctor.diagnose.rules.nccl_warn_kind import NOT_SOCKET, warn_kind
from pgdoctor.diagnose.rules.store_errors import SHUTDOWN_POLL
from pgdoctor.diagnose.rules.store_errors import STORE_OP as _STORE_OP
from pgdoctor.diagnose.rules.timeouts import work_facts
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge import nccl_version
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.cuda_errors import find_cuda_error
from pgdoctor.model import lazy_re

# torch's text: "NCCL error in: <file>:<line>, <text>, NCCL version X" (1.x-2.x), the watchdog's "NCCL
# error: <text>, NCCL version X" (1.1x-2.0), 1.0's "NCCL Error 2: unhandled system error"; a paste may elide
# the path's head ("NCCL error in: ... /c10d/ProcessGroupNCCL.cpp:290, ..."), a retyping space the colon.
_TORCH = lazy_re.compile(
    r"NCCL error(?: in: (?P<where>(?:(?:\.{3}|\u2026) ?)?\S+?),?| ?:)\s+"
    r"(?P<err>[^(]*?)(?:\s*\(run with NCCL_DEBUG=\w+ for details\))?"
    r"(?:,?\s*NCCL version (?P<ver>" + nccl_version.NUMBER + r")|[`'\"]?\s*$)"
)
# ncclGetErrorString texts, in prose or a title's capitals too; ncclInternalError's up to a retyped "is sue".
_NCCL_TEXT = lazy_re.compile(
    r"(?i:unhandled system error|unhandled cuda error|internal error - please report th)|"
    r"remote process exited or there was a network error"
)
_OLD_TORCH = lazy_re.compile(r"NCCL Error (?P<num>\d+): (?P<err>[a-z][a-z ,-]+[a-z])")
# NCCL's WARN record (debug.cc); NCCL <= 2.3 printed "host:pid:tid [dev] file:line WARN msg" without the word
# NCCL. A line pasted without its "host:pid:tid [dev] " prefix keeps the source: "include/socket.h:344 WARN
# ...". NCCL 1.x (core.h's WARN macro) printed the level first, then the source: "WARN src/reduce.cu:126 Cuda
# failure 'invalid resource handle'", "WARN src/core.cu:506 failed to allocate ...".
_WARN = lazy_re.compile(
    r"(?:NCCL WARN|^[\w.-]+:\d+:\d+ \[\d+\] (?:\S+:\d+ )?WARN|^[\w./-]+\.(?:h|cc|cu|c):\d+ WARN|"
    r"^WARN [\w./-]+\.(?:h|cc|cu|c):\d+) (?P<msg>.*)$"
)
_WORK = lazy_re.compile(r"WorkNCCL\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
# ncclResult_t names as torch's exceptions and users' prose quote them.
_NAME_ANYWHERE = lazy_re.compile(r"\b(" + "|".join(ERRNAMES) + r")\b")


def _torch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    err = m.group("err").strip().lower()
    code = kind_of(err)
    gd = m.groupdict()
    base: dict[str, Any] = {"nccl_error": err, "nccl_error_text": m.group("err").strip()}
    base.update(nccl_version.facts_of(gd.get("ver")))
    if gd.get("where"):
        base["where"] = gd["where"]
    w = _WORK.search(t)  # "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised ... NCCL error: ..."
    if w:
        base.update(work_facts(w.group(1)))
    detail = last_error(hit) or _explaining_line(hit, code)
    if code is None and not detail:
        return []
    return from_detail(hit, detail, base, None, 0, code)


def _explaining_line(hit: Hit, code: Any) -> str:
    """For torch's NCCL error without "Last error:": a line below it that names the CUDA failure
    behind it (NCCL's "Cuda failure 'out of memory'" / "Failed to CUDA calloc", or a CUDA error of the
    environment quoted in prose: "CUDA driver version is insufficient for CUDA runtime version")."""
    if code not in (C.NCCL_CUDA_ERROR, C.NCCL_INTERNAL_ERROR, C.NCCL_SYSTEM_ERROR, None):
        return ""
    for ln in hit.after(48, same_rank=False):
        t = ln.text
        if NCCL_ALLOC.search(t) or re.search(r"Cuda failure (?:\d+ )?'?out of memory", t):
            return t.strip()
        if code is C.NCCL_CUDA_ERROR and find_cuda_error(t) is not None:
            return f"Cuda failure '{find_cuda_error(t).message}'"  # type: ignore[union-attr]
    return ""


# The wrappers that print the failed NCCL call and ncclGetErrorString, NCCL 1.x-2.x: Horovod's
# nccl_operations.cc ("horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: invalid
# usage"), TensorFlow's NcclManager ("ncclAllReduce failed: invalid data type"), XLA's ("INTERNAL: NCCL
# operation ncclGroupEnd() failed: internal error - please report this issue to the NCCL developers. Last
# NCCL warning(error) log entry (may be unrelated) '...'."; arguments may hold calls: "(comm.get(), ...)").
_CALL_FAILED = lazy_re.compile(
    r"\b(?P<call>nccl[A-Z]\w+)(?:\((?:[^()]|\([^()]*\))*\))? failed: (?P<err>[a-z][a-z ,/-]*[a-z])(?:\W|$)"
)


def _call_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").lower()
    code = kind_of(err)
    if code is None:
        return None
    base: dict[str, Any] = {
        "nccl_error": err,
        "nccl_error_text": m.group("err"),
        "nccl_call": m.group("call"),
    }
    return from_detail(hit, last_error(hit) or _explaining_line(hit, code), base, None, 0, code)


# torch's message quoted from its middle (its "NCCL error in: " cut by a paste or a title): "../torch/csrc/
# distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - ..., NCCL version 2.19.3"; NCCLUtils 1.11+.
# (?<!\S): the leftmost match starts where its run of non-space characters does (\S* takes the rest),
# so searches are linear, not quadratic, in a long run.
_TORCH_TAIL = lazy_re.compile(
    r"(?<!\S)(?P<where>\S*(?:ProcessGroupNCCL|NCCLUtils)\.[ch]pp:\d+),\s+(?P<err>[a-z][^(,]*?)"
    r"(?:\s*\(run with NCCL_DEBUG=\w+ for details\))?,?\s*"
    r"NCCL version (?P<ver>" + nccl_version.NUMBER + r")"
)
# The NCCLCHECK macros of programs that call NCCL themselves print the file, the line and
# ncclGetErrorString: NCCL's examples and TensorRT-LLM ("Failed, NCCL error ncclCommunicator.cpp:90 'invalid
# usage (run with NCCL_DEBUG=WARN for details)'"), TransformerEngine's userbuffers (the same words, the text
# empty when the result code is not one NCCL names), nccl-tests before 2.13 ("Test NCCL failure
# common.cu:483 'internal error'") and since ("node1: Test NCCL failure common.cu:1204 'unhandled cuda error
# (run with NCCL_DEBUG=INFO for details) / <ncclGetLastError>'").
_CHECK_MACRO = lazy_re.compile(
    r"(?:Failed, NCCL error|NCCL failure) (?P<where>\S+:\d+) '(?P<err>[^'/(]*?)"
    r"(?:\s*\(run with NCCL_DEBUG=\w+ for details\))?\s*(?:/ ?(?P<last>[^']*(?:'[^']*'[^']*)?))?'"
)


_TEST_HOST = lazy_re.compile(r"\s*([\w.-]+): Test NCCL failure")


def _check_macro(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip().lower()
    code = kind_of(err)
    if err and code is None:
        return None
    base: dict[str, Any] = {"nccl_error": err or "(no text)", "where": m.group("where")}
    host = _TEST_HOST.match(hit.text)
    if host:
        base["host"] = host.group(1)  # nccl-tests names the host before its report
    base["nccl_error_text"] = m.group("err").strip() or "call failed (no text from ncclGetErrorString)"
    detail = (
        (m.group("last") or "").strip().rstrip("'").strip() or last_error(hit) or _explaining_line(hit, code)
    )
    # An empty text is a result code ncclGetErrorString does not name: NCCL failed, no reason given.
    return from_detail(hit, detail, base, None, 0, code or C.NCCL_INTERNAL_ERROR)


def _second_line(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # The second line of torch's message; the first one ("NCCL error in:") is the finding.
    prev = " ".join(ln.text for ln in hit.before(2))
    if "NCCL error in:" in prev:
        return []
    err = ERRNAMES.get(m.group(1)) or TORCH_DETAIL[m.group(1)]  # the name, or torch's sentence for it
    kind = KIND[err]
    detail = last_error(hit) or _explaining_line(hit, kind)
    return from_detail(hit, detail, {"nccl_error": err, "nccl_error_text": err}, None, 0, kind)


def _duplicate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    a, b, dev = int(m.group(1)), int(m.group(2)), m.group(3)
    # init.cc prints "rank <other> and rank <own>": the second is the rank that found the clash.
    return [
        row.event(
            hit,
            f"ranks {b} and {a} both use the GPU" + (f" at bus id {dev}" if dev else " (bus id not shown)"),
            {"ranks": sorted({a, b}), "bus_id": dev},
            rank=hit.line.rank if hit.line.rank is not None else b,
            dedupe=(row.code, dev),
        )
    ]


def _undefined(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the loaded libnccl lacks {m.group(1)}: the program (PyTorch, nccl-tests, a framework) was "
            "built against a newer NCCL than the loader found (an older libnccl first on the path)",
            {"missing_symbol": m.group(1)},
            dedupe=(row.code, m.group(1)),
        )
    ]


def _version(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    v = nccl_version.find(t)
    return [
        row.event(
            hit,
            f"NCCL version problem: {clip(t.strip(), 160)}",
            v.facts() if v else {},
            dedupe=(row.code,),
        )
    ]


def _chain(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    res = int(m.group(3))
    kind = RESULT.get(res)
    if kind is None:
        return []
    if SOCKET_FRAME.search(m.group(1)) or (res == 3 and m.group(1).endswith("bootstrap.cc")):
        # the socket layer, and the bootstrap over it, return ncclInternalError for many socket failures
        kind = C.NCCL_SOCKET_ERROR
    return [
        row.event(
            hit,
            f"{hit.who()}: an NCCL call failed with ncclResult {res} (return chain from "
            f"{m.group(1)}:{m.group(2)}; NCCL says why on its WARN line for this call, logged with "
            f"NCCL_DEBUG=WARN)",
            {"nccl_result": res, "nccl_source": f"{m.group(1)}:{m.group(2)}"},
            code=kind.code,
            dedupe=(kind.code, hit.rank, "chain"),
        )
    ]


def _warn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    msg = m.group("msg")
    if msg.rstrip().endswith(":") or re.search(r"message truncated\s*$", msg):
        # a WARN cut after its colon by a paste or a terminal ("... message truncated :" then "receiving
        # 1048576 bytes instead of 65536"): its continuation is the rest of the one message
        _, used = hit.block(2)
        msg = " ".join([msg.rstrip()] + [ln.text.strip() for ln in used[1:]])
    feature = platform_feature(hit, t, msg, {"nccl_warn": msg[:300]}, None)
    if feature:
        return feature
    cf = CUDA_FAIL.search(msg)
    if cf:
        # "driver shutting down" at exit is NCCL noticing the process end, not a failure.
        return (
            []
            if "shutting down" in cf.group(2)
            else from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, None)
        )
    # aws-ofi-nccl's init says "NET/OFI Failed to initialize rdma protocol" (capital F): the plugin's
    # transport did not come up, a network failure like NET/IB's.
    # net_ib 2.12+'s "Could not find real path of mlx5_0 (/sys/...)" is a note: it goes on without a PCI path.
    # net_ib's "NET/IB : No IP interface found." (2.19+, a RoCE device without an address) has no error
    # word; its NIC-merging refusals are the job's NIC settings (nccl_warn_texts' nic_config), not here.
    if (
        IB.search(msg)
        and re.search(
            r"[Ff]ail|error|[Ee]rr|IBV_WC_(?!SUCCESS)|[Uu]nable|ERROR|[Cc]ouldn.t|[Cc]ould not|\) returned -|"
            r"No IP interface found|posted incorrect receive info",
            msg,
        )
        and not re.search(r"incompatible devices|different number of devices|real path of \w+ \(", msg)
    ):
        return from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 0, C.NCCL_IB_ERROR)
    if (SOCKET.search(msg) or IFACE.search(msg)) and not NOT_SOCKET.search(msg):
        return from_detail(hit, msg, {"nccl_warn": msg[:300]}, None, 1, C.NCCL_SOCKET_ERROR)
    return warn_kind(hit, t, msg)


def _ib_completion(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("Last error" in ln.text for ln in hit.before(3)):
        return None
    t = hit.text  # quoted without its WARN prefix (prose)
    return from_detail(hit, t[m.start() :], {"nccl_warn": t[m.start() :][:300]}, None, 0, C.NCCL_IB_ERROR)


def _name_anywhere(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if hit.text.lstrip().startswith(m.group(1)):
        return None
    err = ERRNAMES[m.group(1)]
    return from_detail(hit, last_error(hit), {"nccl_error": err, "nccl_error_text": err}, None, 0, KIND[err])


def _nccl_text(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group(0).lower()
    near = " ".join([hit.text] + [ln.text for ln in hit.before(3)]).lower()
    # NCCL unnamed: not "unhandled system error", "Internal error - ... the plugin" or a program's exception
    # ("RuntimeError: Unhandled CUDA error in my kernel"); its other texts (a title's prose too) are NCCL's.
    own = re.search(r"\w(?:Error|Exception):", hit.text[: m.start()])
    if "nccl" not in near and "rccl" not in near and (err.startswith(("unhandled s", "internal")) or own):
        return None
    err = "internal error" if err.startswith("internal") else err
    detail = last_error(hit) or _explaining_line(hit, KIND[err])
    return from_detail(hit, detail, {"nccl_error": err, "nccl_error_text": err}, None, 0, KIND[err])


# ProcessGroupNCCL's checks of the tensors it is given (check_gpu_single_tensor and friends, 1.0-2.x):
# "Tensors must be contiguous", "Tensors must be CUDA and dense", 1.0's "Only CUDA dense tensor is supported
# for NCCL collective operations", "Tensor list must be nonempty", "Tensors must be on the same device",
# "Tensors must be non-overlapping and dense", "Tensors must have identical type" (the coalesced collectives'
# check_gpu_tensors_same) - the program's call, whichever backend error type wraps it; and a collective the
# backend does not have: 1.x "ProcessGroupNCCL does not support gather" / "... recvAnysource", the base
# class's "ProcessGroup nccl does not support alltoall", 2.x Backend.hpp "Backend nccl does not support
# allgather_into_tensor_coalesced", "allreduce_coalesced is currently not supported with NCCL"; the shape,
# type and operator checks of the single-tensor collectives (2.x): "output tensor size must be equal to
# world_size times input tensor size" (allgather_into_tensor), "input tensor must be the same size as output
# size times world size" (reduce_scatter_tensor), "... must be the same type as the output tensor", "Cannot
# use ReduceOp.BAND with NCCL". ProcessGroupGloo's invalidArgument (1.0-2.x) prefixes its checks with the
# collective: "ProcessGroupGloo::broadcast: invalid root rank: 3", "ProcessGroupGloo::allgather: requires
# non-empty input tensor list", "... invalid tensor type at index 0 (expected ..., got ...)", "...:
# unsupported device type cuda".
_C10D_ARGS = lazy_re.compile(
    r"Tensors must be contiguous|Tensors must be CUDA and dense|"
    r"Only CUDA dense tensor is supported for NCCL|Tensor list must be nonempty|"
    r"Tensors must be on the same device|Tensor list input and output must have the same size|"
    r"Tensors must be non-overlapping and dense|Tensors must have identical (?:type|size|strides)|"
    r"Tensors must be on distinct GPU devices|Expected list of tensors on the same device|"
    r"Tensor list (?:operands|input) to scatter/gather must|\w+ tensor operands to scatter/gather must|"
    r"Corresponding input/output tensors to scatter/gather must|"
    r"Input tensor data type is not supported for NCCL process group|Unconvertible NCCL type|"
    r"Unsupported Float8 type for NCCL reduction|Float8 dtypes are not curr?ently supported for NCCL|"
    r"Cannot use ReduceOp\.\w+ with boolean inputs|PreMulSum Data type must be|"
    r"ProcessGroupNCCL::\w+: (?:[Rr]equires|Incorrect|invalid|Invalid)|" + TENSOR_CHECKS_2X + "|"
    r"Tensor list mustn't be larger than the number of available GPUs|"
    r"Cannot use ReduceOp\.\w+ with (?:NCCL|Gloo|XCCL|UCC|MPI|HCCL|non-integral dtype)\b|"
    r"ProcessGroupGloo::\w+: (?:requires|invalid|unsupported|only supports|input|output|expect)|"
    r"input tensor must be the same (?:type as the output tensor|size as output size times world size)|"
    r"output tensor size must be equal to world_size times input tensor size|"
    r"output tensor must have the same type as input tensor|"
    r"Tensor input and output of \w+ must have the same number of elements|"
    r"ProcessGroup(?:NCCL|Gloo|MPI|UCC)? \w* ?does not support \w+|Backend \w+ does not "
    r"(?:support|implement) \w+|"
    r"\w+ is currently not supported with NCCL|SMDDP does not support: \w+"
)


def _c10d_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"c10d_check": m.group(0)}
    if op := traceback_op(hit):
        facts["op"] = op
    other = OTHER_BACKEND_OP.search(m.group(0))
    backend, said = rejection(hit.text[m.start() :], m.group(0))
    return [
        row.event(
            hit,
            f"{hit.who()}: the collective was called with tensors the {backend} backend rejects: {said}",
            facts,
            dedupe=(row.code, hit.rank, "args"),
            code=C.C10D_INVALID_USAGE.code if other else "",
        )
    ]


# enqueue.cc's "Error : no algorithm/protocol available for function ReduceScatter with datatype
# ncclFloat32. NCCL_ALGO was set to nvls" quoted without its WARN prefix (2.8-2.28; the lower-case "Error :"
# form is the WARN's own text): NCCL_ALGO / NCCL_PROTO / CollNet leave no algorithm for that collective.
_NO_ALGO_TEXT = lazy_re.compile(
    r"Error ?: [Nn]o algorithm/protocol available(?: for function (?P<op>\w+) with datatype (?P<dtype>\w+))?"
    r"(?:\.? NCCL_ALGO was set to (?P<algo>\S+?)\.?(?:\s|$))?"
)


def _no_algo(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NCCL WARN" in hit.text or any("Last error" in ln.text for ln in hit.before(2)):
        return None  # the WARN row, or torch's exception above it, reads it
    facts: dict[str, Any] = {"nccl_warn": m.group(0), "likely_cause": "nccl_algo_or_proto_setting"}
    for key in ("op", "dtype", "algo"):
        if m.group(key):
            facts["nccl_algo" if key == "algo" else key] = m.group(key)
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL found no algorithm/protocol for "
            f"{m.group('op') or 'a collective'} (NCCL_ALGO / NCCL_PROTO / CollNet leave none it can use)",
            facts,
            dedupe=(row.code, "no_algo"),
        )
    ]


def _peer_socket(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    if SHUTDOWN_POLL.search(t):
        return []  # the heartbeat monitor's poll of a store that rank 0 closed at its exit
    if _STORE_OP.search(" ".join([*(ln.text for ln in hit.before(16)), t])):
        # a store operation (the store-based barrier, the rendezvous), or THD's init naming its source on the
        # line ("Connection reset by peer at .../THD/process_group/General.cpp:20"): the rendezvous module's
        return None
    if not (
        ("gloo" in t or "Connection" in t)
        and re.search(r"Error|error", t)
        and "store->" not in t
        and "DistNetworkError" not in t
        and "DistStoreError" not in t
        and DIST_CONTEXT.search(" ".join([t] + [ln.text for ln in hit.before(4)]))
    ):
        return None  # a store client that lost its server is the rendezvous module's
    # gloo / c10d socket errors outside NCCL: the peer went away.
    return [
        row.event(
            hit,
            f"{hit.who()}: connection to a peer failed: {clip(t.strip(), 160)}",
            {"backend": "gloo" if "gloo" in t else "unknown", **network_facts(t)},
            dedupe=(row.code, hit.rank),
        )
    ]


_NAMES = tuple(name.lower() for name in ERRNAMES)
_EXC = "the exception type ('RuntimeError: ', 'ImportError: ') before the message"
SIGNATURES = (
    Signature(
        "torch nccl error",
        _TORCH,
        _torch,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        words=("nccl error",),
    ),
    Signature(
        "torch 1.0 nccl error",
        _OLD_TORCH,
        _torch,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("nccl error",),
    ),
    Signature(
        "torch nccl error without its head",
        _TORCH_TAIL,
        _torch,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"ProcessGroupNCCL.", b"NCCLUtils."),
        worth=(rb"ProcessGroupNCCL\.cpp:\d+, ", rb"NCCLUtils\.[ch]pp:\d+, "),
        words=("nccl version",),
    ),
    Signature(
        "nccl check macro",
        _CHECK_MACRO,
        _check_macro,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"NCCL error", b"NCCL failure"),
        worth=(rb"NCCL error", rb"NCCL failure"),
        words=("failed, nccl error", "nccl failure"),
    ),
    Signature(
        "ncclResult line",
        lazy_re.compile(r"^\s*(" + "|".join(ERRNAMES) + r"):"),
        _second_line,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=_NAMES,
        anchor_from="the 'Error' of the ncclResult name; ncclInvalidUsage / ncclInvalidArgument lines only "
        "when "
        "an error word is in them (the first line, 'NCCL error in:', is the finding)",
        examples=(
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
            "error.",
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (error 5).",
        ),
    ),
    Signature(
        "duplicate gpu",
        DUP,
        _duplicate,
        C.NCCL_DUPLICATE_GPU.code,
        anchors=(b"Duplicate GPU", b"both on CUDA device"),
        words=("duplicate gpu detected", "both on cuda device"),
    ),
    Signature(
        "undefined nccl symbol",
        UNDEF,
        _undefined,
        C.NCCL_VERSION.code,
        # the message's own words too: a title drops the exception type
        anchors=(b"rror", b"undefined symbol"),
        worth=(rb"Error\b", rb"undefined symbol"),
        words=("undefined symbol: nccl", 'undefined symbol: "nccl', "undefined symbol: 'nccl"),
        anchor_from=_EXC,
        examples=(
            "ImportError: /usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
            "ncclCommRegister",
        ),
    ),
    Signature(
        "nccl version",
        VERSION,
        _version,
        C.NCCL_VERSION.code,
        anchors=(b"version mismatch", b"rror", *VERSION_WORDS),
        worth=(rb"version mismatch", rb"Error\b", *(re.escape(a) for a in VERSION_WORDS)),
        words=(
            "nccl version mismatch",
            "requires nccl",
            "or newer is required",
            "or later is required",
            "only allowed with nccl",
            "nccl lib version",
        ),
        anchor_from=_EXC,
        examples=("RuntimeError: this build requires NCCL 2.19.3 or newer",),
    ),
    Signature(
        "nccl return chain",
        CHAIN,
        _chain,
        C.NCCL_SYSTEM_ERROR.code,
        tier=1,
        anchors=(b".cc:", b".cu:"),
        worth=(rb"\.(?:cc|cu|h):\d+ -> [1-7]\b",),
        words=("nccl info",),
        anchor_from="the '.cc:' of the source file (a '.cu:' or '.h:' frame is read when a '.cc:' one is in "
        "the line)",
        examples=("node-1:1234:1250 [0] NCCL INFO transport/net.cc:515 -> 2",),
    ),
    Signature(
        "nccl warn",
        _WARN,
        _warn,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"WARN",),
        worth=(rb"NCCL WARN", rb"^WARN [\w./-]+\.(?:h|cc|cu|c):\d+ "),
        words=("warn ",),
    ),
    Signature(
        "ib completion in prose",
        IB_COMPLETION,
        _ib_completion,
        C.NCCL_IB_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"ompletion from peer",),
        words=("got completion from peer",),
        anchor_from="the completion's own 'with error 12' / 'status=IBV_WC_...' (an 'error' word)",
        examples=(
            "NET/IB : Got completion from peer 10.0.0.2<57926> with error 12, opcode 0, len 0, "
            "vendor err 129",
        ),
    ),
    Signature(
        "ncclResult name in a line",
        _NAME_ANYWHERE,
        _name_anywhere,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=_NAMES,
        anchor_from="the 'Error' of the name or the exception type before it",
        examples=("RuntimeError: ncclInternalError: Internal check failed.",),
    ),
    Signature(
        "nccl call failed",
        _CALL_FAILED,
        _call_failed,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b" failed: ",),
        worth=(rb"nccl\w+(?:\([^)]*\))? failed: ",),
        words=(" failed: ",),
    ),
    Signature(
        "ncclGetErrorString text",
        _NCCL_TEXT,
        _nccl_text,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(b"rror",),
        worth=(rb"\berror\b",),
        words=(
            "unhandled system error",
            "unhandled cuda error",
            "internal error - please report th",
            "remote process exited or there was a network error",
        ),
    ),
    Signature(
        "torch's ncclResult sentence",
        TORCH_DETAIL_TEXT,
        _second_line,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=tuple(w.encode() for w in TORCH_DETAIL_WORDS),
        words=tuple(w.lower() for w in TORCH_DETAIL_WORDS),
        examples=(
            "System call (e.g. socket, malloc) or external library call failed or device error.",
            "A call failed possibly due to a network error or a remote process exiting prematurely.",
        ),
    ),
    Signature(
        "c10d argument check",
        _C10D_ARGS,
        _c10d_args,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"rror", *TENSOR_CHECK_WORDS),
        worth=(rb"Error\b", *(re.escape(a) for a in TENSOR_CHECK_WORDS)),
        words=(
            "tensors must be",
            "tensors must have",
            "cannot use reduceop",
            "processgroupgloo::",
            "input tensor must be",
            "output tensor",
            "tensor input and output",
            "only cuda dense tensor",
            "tensor list",
            "does not support",
            "does not implement",
            "currently not supported with nccl",
            "scatter/gather must",
            "distinct gpu devices",
            "tensors on the same device",
            "not supported for nccl process group",
            "unconvertible nccl type",
            "float8",
            "with boolean inputs",
            "premulsum data type",
            "processgroupnccl::",
            *TENSOR_CHECK_GATE_2X,
        ),
        anchor_from="the exception type ('ValueError: ', 'RuntimeError: ') before torch's check",
        examples=(
            "ValueError: Tensors must be contiguous",
            "RuntimeError: Only CUDA dense tensor is supported for NCCL collective operations",
            "RuntimeError: ProcessGroupNCCL does not support gather",
            "RuntimeError: Backend nccl does not support allgather_into_tensor_coalesced",
            "RuntimeError: allreduce_coalesced is currently not supported with NCCL",
        ),
    ),
    Signature(
        "no algorithm in prose",
        _NO_ALGO_TEXT,
        _no_algo,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("no algorithm/protocol available",),
    ),
    Signature(
        "peer connection",
        SOCKET,
        _peer_socket,
        C.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"rror",),
        worth=(rb"Error\b", rb"\berror\b"),
        words=("gloo", "connection"),
        anchor_from="an 'Error' / 'error' in the line (required by the row)",
        examples=(
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
            "[10.0.0.2]:5678",
        ),
    ),
)
# Every finding of parse() needs one of its row's words in the hit line (lower case; checked
# before any pattern): the watchdog's own lines ("WorkNCCL(...)") name NCCL but are the timeouts module's.
parse = gated_reader(SIGNATURES)
