"""Failures printed by non-PyTorch stacks and transport libraries whose one line names the cause.

Each row is a message family read at its source (the message is printed the same way by every
version cited):
- UCX (src/uct/ib/ud/base/ud_iface.c, rc/base/rc_iface.c, ib/base/ib_iface.c): ucs_fatal("transport
  error: %s", ucs_status_string(status)) prints "[host:pid:tid:tid] ud_iface.c:781  Fatal: transport
  error: Endpoint timeout" (or "Transport retry count exceeded", "Remote access error", ...): the
  InfiniBand / RoCE link to a peer failed (RUN173).
- ibverbs set-up in libraries that print it themselves (UCCL, DeepEP, Mooncake, ...): "Failed to modify
  QP to RTR: Connection timed out" / "to RTS" / "to INIT": the queue pair to a peer could not be
  brought up, a RoCE / IB reachability or GID / MTU problem (RUN173); PSM3's verbs HAL (libfabric's psm3
  provider under oneCCL and Intel MPI, psm3/hal_verbs) names the QP's kind and the device: "Failed to
  modify UD QP to INIT on mlx5_2: Operation not permitted", "Unable to create UD QP on mlx5_0: Cannot
  allocate memory".
- PSM3 / PSM2 (libfabric psm3 provider, Intel MPI and oneCCL under it): "Assertion failure at
  psm3/ptl_am/ptl.c:196: nbytes == req->req_data.recv_msglen": an internal assertion of the transport
  library (RUN192).
- Legate's NCCL check (legate.core src/core/comm/comm_nccl.cu, CHECK_NCCL): "Internal NCCL failure
  with error %s in file %s at line %d", ncclGetErrorString of the result: internal error (RUN192),
  invalid usage / argument (RUN191), unhandled system error (RUN171), remote error (RUN172).
- rabit (XGBoost's allreduce, src/allreduce_base.cc): the tracker connection "retry connect to
  ip(retry time N): [host]" ending in "connect to (failed): [host]" / "Socket Connect Error" is the
  rendezvous with the tracker (RUN222); "failed in ReconnectLink ... Connection was reset by peer" is a
  link between workers that broke (RUN174).
- LightGBM's socket network (src/network/linkers_socket.cpp, linker_topo): "Machine list file doesn't
  contain the local machine" (the machines list names no local address: RUN221) and "Connecting to
  rank N failed, waiting for M milliseconds" (a peer never listened: RUN222).
- MindSpore's dynamic cluster (ccsrc/distributed/cluster/cluster_context.cc): "This node could be
  redundant and is not successfully registered" (the scheduler did not register this node: RUN221).
  Its settings checked before that (cluster_context.cc InitNodeRole, collective_manager.cc, constants.h's
  kDetailedFailureReason, 1.6-2.x): "Role name '' is invalid. Maybe you are trying to call
  'mindspore.communication.init()' without using 'mpirun', ..." (MS_ROLE unset: init() outside mpirun /
  msrun), "Please set env 'WORKER_NUM' to a number greater than 0.", "The environment variable MS_WORKER_NUM
  is invalid.", "Scheduler and worker's configured MS_SCHED_HOST or MS_SCHED_PORT is not consistent with
  each other." (RUN224); "Configured scheduler port MS_SCHED_PORT is occupied by other processes." (RUN223);
  the last of the WARNING retries "Topology build timed out., retry(N/N)." (RUN221).
- JAX (jax/_src/xla_bridge.py): "TPU backend initialization is taking more than 60.0 seconds. Did you
  run your code on all TPU hosts?": the TPU pod's hosts did not all start (RUN221).
- Kubeflow training-operator (pkg/controller.v1/common/job.go, tensorflow/tfjob_controller.go): "TFJob
  myjob has failed because 1 Worker replica(s) failed." for every job kind: a replica's process
  failed (RUN133).
- Paddle's enforce traceback (paddle/fluid/memory/detail/system_allocator.cc, allocation/cuda_allocator.cc):
  frame 0 GetTraceBackString, frame 1 GPUAllocator::Alloc / CUDAAllocator::AllocateImpl: the GPU
  allocator threw, which it does only when cudaMalloc failed (RUN101).
- Ray's raylet summary hard-wrapped by a terminal: "... Workers (tasks /\\n actors) killed due to memory
  pressure (OOM)" (workers.py reads it unwrapped): host memory (RUN121).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_UCX = lazy_re.compile(
    r"(?:\[(?P<host>[\w.-]+):(?P<pid>\d+):\d+(?::\d+)?\]\s+)?(?P<src>\w+\.c):\d+\s+Fatal: transport error: "
    r"(?P<msg>.+)$"
)


def _ucx(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {"library": "ucx", "transport_error": m.group("msg").strip()}
    if m.group("host"):
        facts |= {"host": m.group("host"), "pid": int(m.group("pid"))}
    return [
        row.event(
            hit,
            f"{hit.who()}: UCX transport error ({clip(m.group('msg').strip(), 80)}) in {m.group('src')}: "
            "the InfiniBand / RoCE link to a peer failed",
            facts,
            dedupe=(row.code, "ucx"),
        )
    ]


_QP = lazy_re.compile(
    r"[Ff]ailed to modify (?:UD |RC |UC |DC )?QP to (?P<state>RTR|RTS|INIT)\b"
    r"(?: on (?P<dev>\w+(?::\d+)?))?[:,]?\s*(?P<why>.*)$"
    r"|Unable to create (?:UD |RC |UC )?QP on (?P<dev2>\w+(?::\d+)?)[:,]?\s*(?P<why2>.*)$"
)


def _qp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = (m.group("why") or m.group("why2") or "").strip()
    dev = m.group("dev") or m.group("dev2")
    step = f"moved to {m.group('state')}" if m.group("state") else "created"
    return [
        row.event(
            hit,
            f"{hit.who()}: a queue pair could not be {step}"
            + (f" on {dev}" if dev else "")
            + (f" ({clip(why, 80)})" if why else "")
            + ": the RDMA (RoCE / IB) path to a peer is not usable (GID index, MTU, routing, PFC, the "
            "device's permissions or locked-memory limit)",
            {
                "qp_state": m.group("state") or "create",
                **({"errno_text": why} if why else {}),
                **({"ib_device": dev} if dev else {}),
            },
            dedupe=(row.code, "qp"),
        )
    ]


_PSM = lazy_re.compile(r"Assertion failure at (?P<src>psm[23]?/\S+:\d+): (?P<expr>.+)$")


def _psm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: the PSM transport asserted at {m.group('src')} ({clip(m.group('expr'), 80)})",
            {"library": "psm3", "assertion": m.group("expr")},
            dedupe=(row.code, "psm"),
        )
    ]


_LEGATE = lazy_re.compile(
    r"Internal NCCL failure with error (?P<err>.+?) in file (?P<file>\S+) at line (?P<line>\d+)"
)
_LEGATE_CODES = {
    "internal error": C.NCCL_INTERNAL_ERROR.code,
    "invalid usage": C.NCCL_INVALID_USAGE.code,
    "invalid argument": C.NCCL_INVALID_USAGE.code,
    "unhandled system error": C.NCCL_SYSTEM_ERROR.code,
    "remote process exited or there was a network error": C.NCCL_REMOTE_ERROR.code,
}


def _legate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip().lower()
    code = next((c for k, c in _LEGATE_CODES.items() if err.startswith(k)), "")
    if not code:
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL returned '{m.group('err')}' to Legate ({m.group('file').rsplit('/', 1)[-1]}:"
            f"{m.group('line')})",
            {"nccl_error": m.group("err"), "framework": "legate"},
            code=code,
            dedupe=(code, "legate"),
        )
    ]


_RABIT_TRACKER = lazy_re.compile(
    r"^connect to \(failed\): \[(?P<host>[^\]]*)\]|^Socket Connect Error:(?P<why>.*)$"
)


def _rabit_tracker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("why") is not None:
        near = " ".join(ln.text for ln in hit.before(12))
        if "retry connect to ip" not in near and "connect to (failed)" not in near:
            return None
    host = m.group("host")
    return [
        row.event(
            hit,
            f"{hit.who()}: rabit could not connect to its tracker"
            + (f" at [{host}]" if host else f" ({clip(m.group('why').strip(), 60)})")
            + ": the tracker address must be a host / IP every worker reaches (not localhost)",
            {"framework": "rabit", **({"host": host} if host else {})},
            dedupe=(row.code, "rabit_tracker"),
        )
    ]


_RABIT_LINK = lazy_re.compile(r"failed in ReconnectLink\b.*?(?:NET - |: )(?P<why>[A-Z][^\n]*)$")


def _rabit_link(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: rabit could not re-establish its links to the other workers "
            f"({clip(m.group('why'), 80)})",
            {"framework": "rabit", "socket_error": m.group("why")},
            dedupe=(row.code, "rabit_link"),
        )
    ]


_LGBM = lazy_re.compile(
    r"(?P<list>Machine list file doesn't contain the local machine)|"
    r"Connecting to rank (?P<rank>\d+) failed, waiting for \d+ milliseconds"
)


def _lgbm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("list"):
        return [
            row.event(
                hit,
                f"{hit.who()}: LightGBM's machine list names no address of this host: set machines / "
                "local_listen_port so that this host appears in it",
                {"framework": "lightgbm"},
                dedupe=(row.code, "lgbm_list"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: LightGBM could not connect to rank {m.group('rank')}: that machine is not "
            "listening on its port (not started, a firewall, or a wrong machines list)",
            {"framework": "lightgbm", "peer_rank": int(m.group("rank"))},
            code=C.STORE_UNREACHABLE.code,
            dedupe=(C.STORE_UNREACHABLE.code, "lgbm_connect"),
        )
    ]


_MS_REDUNDANT = lazy_re.compile(r"This node could be redundant and is not successfully registered")


def _ms_redundant(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: MindSpore's scheduler did not register this node (more processes than "
            "MS_WORKER_NUM / MS_SERVER_NUM, or a stale scheduler on MS_SCHED_PORT)",
            {"framework": "mindspore"},
            dedupe=(row.code, "ms_redundant"),
        )
    ]


_MS_CLUSTER = lazy_re.compile(
    r"(?:Role name '(?P<role>[^']*)' is invalid\. )?(?P<launch>Maybe you are trying to call "
    r"'mindspore\.communication\.init\(\)' without using 'mpirun')|"
    r"(?P<unset>Please set env '(?:MS_)?(?:WORKER|SERVER)_NUM' to a number greater than 0|"
    r"The environment variable MS_(?:WORKER|SERVER)_NUM is invalid|"
    r"Scheduler and worker's configured MS_SCHED_HOST or MS_SCHED_PORT is not consistent)|"
    r"(?P<port>Configured scheduler port MS_SCHED_PORT is occupied)|"
    r"Topology build timed out\.?,? retry\((?P<i>\d+)/(?P<n>\d+)\)"
)


def _ms_cluster(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "mindspore"}
    if m.group("launch"):
        facts["ms_role"] = m.group("role") or ""
        msg = (
            "MindSpore's communication init() found no cluster role (MS_ROLE"
            + (f" is '{m.group('role')}'" if m.group("role") else " unset")
            + "): the process was not started by mpirun / msrun, nor given MS_ROLE, MS_WORKER_NUM, "
            "MS_SCHED_HOST and MS_SCHED_PORT"
        )
        return [row.event(hit, msg, facts, dedupe=(row.code, "ms_cluster"))]
    if m.group("unset"):
        facts["setting"] = clip(m.group("unset"), 120)
        msg = f"MindSpore's cluster settings are missing or disagree: {clip(m.group('unset'), 120)}"
        return [row.event(hit, msg, facts, dedupe=(row.code, "ms_cluster"))]
    if m.group("port"):
        msg = "MindSpore's scheduler could not take MS_SCHED_PORT: another process (a stale scheduler) has it"
        code = C.ADDRESS_IN_USE.code
        return [row.event(hit, msg, facts, code=code, dedupe=(code, "ms_cluster"))]
    if m.group("i") != m.group("n"):
        return []  # a retry while the other nodes register
    facts["retries"] = int(m.group("n"))
    msg = (
        "MindSpore's cluster topology was not built in time: not every node registered with the scheduler "
        "(MS_WORKER_NUM larger than the processes started, a node that died, or MS_SCHED_HOST unreachable)"
    )
    code = C.RENDEZVOUS_TIMEOUT.code
    return [row.event(hit, msg, facts, code=code, dedupe=(code, "ms_cluster"))]


_TPU_INIT = lazy_re.compile(
    r"TPU backend initialization is taking more than (?P<s>\d+(?:\.\d+)?) seconds\. "
    r"Did you run your code on all TPU hosts"
)


def _tpu_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: the TPU backend waited over {m.group('s')} s for the pod's other hosts: run the "
            "program on every host of the slice (gcloud ... ssh --worker=all)",
            {"framework": "jax", "waited_s": float(m.group("s"))},
            dedupe=(row.code, "tpu_init"),
        )
    ]


_KF_JOB = lazy_re.compile(
    r"(?P<kind>\w*Job) (?P<name>\S+) (?:has failed|is failed) because (?P<n>\d+) (?P<role>\w+) "
    r"replica\(s\) failed"
)


def _kf_job(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: {m.group('kind')} {m.group('name')} failed because {m.group('n')} "
            f"{m.group('role')} replica(s) failed: read that replica's pod log and its exit reason "
            "(kubectl describe pod: OOMKilled, Preempted, exit code)",
            {
                "job_kind": m.group("kind"),
                "failed_replicas": int(m.group("n")),
                "replica_type": m.group("role"),
            },
            dedupe=(row.code, "kf_job"),
        )
    ]


_PADDLE_TB = lazy_re.compile(r"^(?:\w*Error: )?\s*0\s+std::string paddle::platform::GetTraceBackString")
_PADDLE_ALLOC = lazy_re.compile(
    r"^\s*1\s+paddle::memory::(?:detail::GPUAllocator::Alloc|allocation::CUDAAllocator::AllocateImpl)\("
)


def _paddle_alloc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # Frame 0 is the enforce's own traceback builder, frame 1 the function that threw: Paddle's GPU
    # allocators throw only when cudaMalloc failed (PADDLE_THROW_BAD_ALLOC, "Out of memory error on GPU").
    nxt = hit.after(1, same_rank=False)
    if not nxt or not _PADDLE_ALLOC.search(nxt[0].text):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: Paddle's GPU allocator threw (frame 1: {nxt[0].text.split()[1].split('(')[0]}): "
            "the GPU ran out of memory",
            {"framework": "paddle", "allocator": nxt[0].text.split()[1].split("(")[0]},
            lines=[hit.line, nxt[0]],
            dedupe=(row.code, "paddle_alloc"),
        )
    ]


_RAY_WRAPPED = lazy_re.compile(r"killed due to memory pressure \(OOM\)")


def _ray_wrapped(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "(tasks / actors) killed" in hit.text:
        return None  # the unwrapped summary: workers.py's row
    near = " ".join(ln.text for ln in hit.before(2, same_rank=False)) + " " + hit.text
    if "Workers" not in near:
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: Ray's memory monitor killed workers because the node ran low on host memory",
            {"framework": "ray", "killer": "ray_memory_monitor"},
            dedupe=(row.code, "ray_wrapped"),
        )
    ]


SIGNATURES = (
    Signature(
        "ucx transport error",
        _UCX,
        _ucx,
        C.NCCL_IB_ERROR.code,
        anchors=(b"transport error:",),
        worth=(rb"Fatal: transport error:",),
        words=("transport error:",),
    ),
    Signature(
        "rdma qp transition failed",
        _QP,
        _qp,
        C.NCCL_IB_ERROR.code,
        anchors=(b"QP to ", b"QP on "),
        worth=(rb"to modify (?:UD |RC |UC |DC )?QP to ", rb"to create (?:UD |RC |UC )?QP on "),
        words=("qp to ", "qp on "),
    ),
    Signature(
        "psm assertion",
        _PSM,
        _psm,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"Assertion failure at psm",),
        worth=(rb"Assertion failure at psm",),
        words=("assertion failure at psm",),
    ),
    Signature(
        "legate nccl failure",
        _LEGATE,
        _legate,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"Internal NCCL failure",),
        worth=(rb"Internal NCCL failure",),
        words=("internal nccl failure",),
    ),
    Signature(
        "rabit tracker connect",
        _RABIT_TRACKER,
        _rabit_tracker,
        C.STORE_UNREACHABLE.code,
        anchors=(b"connect to (failed)", b"Socket Connect Error"),
        worth=(rb"connect to \(failed\)", rb"Socket Connect Error"),
        words=("connect to (failed)", "socket connect error"),
    ),
    Signature(
        "rabit reconnect link",
        _RABIT_LINK,
        _rabit_link,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"failed in ReconnectLink",),
        worth=(rb"failed in ReconnectLink",),
        words=("failed in reconnectlink",),
    ),
    Signature(
        "lightgbm network",
        _LGBM,
        _lgbm,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"contain the local machine", b"failed, waiting for"),
        worth=(rb"contain the local machine", rb"failed, waiting for"),
        words=("contain the local machine", "failed, waiting for"),
    ),
    Signature(
        "mindspore redundant node",
        _MS_REDUNDANT,
        _ms_redundant,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"not successfully registered",),
        worth=(rb"not successfully registered",),
        words=("not successfully registered",),
    ),
    Signature(
        "mindspore cluster settings",
        _MS_CLUSTER,
        _ms_cluster,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(
            b"without using 'mpirun'",
            b"to a number greater than 0",
            b"_NUM is invalid",
            b"MS_SCHED_HOST or MS_SCHED_PORT",
            b"MS_SCHED_PORT is occupied",
            b"Topology build timed out",
        ),
        words=("mpirun", "greater than 0", "_num is invalid", "ms_sched", "topology build"),
    ),
    Signature(
        "jax tpu backend init",
        _TPU_INIT,
        _tpu_init,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"on all TPU hosts",),
        worth=(rb"on all TPU hosts",),
        words=("on all tpu hosts",),
    ),
    Signature(
        "kubeflow job replica failed",
        _KF_JOB,
        _kf_job,
        C.RANK_EXITED.code,
        anchors=(b"replica(s) failed",),
        worth=(rb"replica\(s\) failed",),
        words=("replica(s) failed",),
    ),
    Signature(
        "paddle gpu allocator threw",
        _PADDLE_TB,
        _paddle_alloc,
        C.CUDA_OOM.code,
        anchors=(b"GetTraceBackString",),
        words=("gettracebackstring",),
    ),
    Signature(
        "ray memory pressure wrapped",
        _RAY_WRAPPED,
        _ray_wrapped,
        C.HOST_OOM_KILLED.code,
        anchors=(b"due to memory pressure (OOM)",),
        worth=(rb"due to memory pressure \(OOM\)",),
        words=("due to memory pressure (oom)",),
    ),
)

parse = gated_reader(SIGNATURES)
