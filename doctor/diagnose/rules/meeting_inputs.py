"""What the ranks' meeting reads before it starts: the file of a file:// store, the launcher's variables, the
coordinator's address. Each row is a family read at its source.

- c10d's FileStore (torch/csrc/distributed/c10d/FileStore.cpp 1.0-2.x, SYSASSERT: a std::system_error whose
  text is "<call>: <strerror>"): "RuntimeError: open(/shared/store_file): No such file or directory" (the file
  of init_method='file://...' is not on a file system every rank sees, or a rank deleted it: 1.0's
  pytorch#13750), "open(...): Permission denied" / "Read-only file system", and "flock: Function not
  implemented" / "flock: No locks available" (a file system without flock(2): NFS without lockd, some FUSE and
  Lustre mounts). RUN655. The open() form is read only where the store is in sight (file://, FileStore,
  init_process_group, torch's distributed frames); "flock: " with those errnos is FileStore's own text.
- Slurm's compressed per-node counts (SLURM_TASKS_PER_NODE, SLURM_STEP_TASKS_PER_NODE,
  SLURM_JOB_CPUS_PER_NODE: "2(x4)" is two on each of four nodes, "4,2(x3)" a heterogeneous list) read with
  int() by a trainer's own set-up: "ValueError: invalid literal for int() with base 10: '1(x2)'". Only Slurm
  writes "(xN)" in a count. RUN656.
- PaddlePaddle's role maker (fluid/incubate/fleet/base/role_maker.py 1.x: assert ..., "can't find
  PADDLE_TRAINER_ENDPOINTS"; distributed/fleet/base/role_maker.py 2.x: "ValueError: Can not find
  PADDLE_TRAINERS_NUM, please check your environment.") started outside paddle.distributed.launch / fleetrun,
  the variables the launcher sets missing. RUN224.
- The TPU driver's and XLA's gRPC client to a remote host (tpu_driver grpc_tpu_driver, jax 0.2 on Colab /
  Cloud TPU VMs): "RuntimeError: Deadline exceeded: Failed to connect to remote server at address:
  grpc://10.0.0.2:8470. Error from gRPC: Deadline Exceeded." - the coordinator's address never answered.
  RUN222.
- A gRPC server that could not bind its port (grpc core chttp2_server.cc "No address added out of total N
  resolved", its referenced error "Unable to configure socket" with os_error "Address already in use" (RUN223)
  or "Cannot assign requested address" (RUN222: the endpoint names an address that is not this host's, as for
  the store)): Paddle's pserver / gen_nccl_id servers, TensorFlow's and Flower's servers.
- PaddlePaddle's static-graph op that hands the NCCL (BKCL, HCCL, XCCL) unique id from trainer 0 to the others
  over its own sockets (operators/collective/gen_nccl_id_op.cc, c_gen_nccl_id_op.cc, 1.x-2.x) failing as an
  op: "EnforceNotMet: Invoke operator gen_nccl_id error." (1.5-1.6) / "[operator < c_gen_nccl_id > error]"
  (1.7+) - the trainers did
  not meet (an endpoint not up or not reachable, PADDLE_TRAINER_ENDPOINTS wrong). RUN222 at tier 1: the
  op's own detail ("connect addr=... timeout", peer_bootstrap.py) or a trainer's death leads when in sight.
- Launcher sizes that do not match the node, said by the program that checks them: OneFlow's placement
  (oneflow/core/framework/parallel_conf_util / placement check, 0.7+: "Placement is invalid because rank must
  be less than world size!": a placement names ranks the launch did not start - a multi-rank script run as
  plain python, without oneflow.distributed.launch) and ms-swift's arguments (swift/llm/argument, 1.x-3.x:
  "ValueError: DeepSpeed is not compatible with MP. n_gpu: 8, local_world_size: 1.", earlier an
  AssertionError without the sizes: the launcher started fewer processes on the node than it has visible
  GPUs, so swift would split the model over them, which DeepSpeed cannot). RUN224.
- One line (a title, a question) that quotes a port clash with NCCL's system error ("What is the reason of
  'RuntimeError: Address already in use', 'RuntimeError: NCCL error in: ...ProcessGroupNCCL.cpp:784, unhandled
  system error, NCCL version 2.7.8'"): the bind that failed is the cause the system error reports (torch's
  store or NCCL's bootstrap could not take its port): RUN223, as rendezvous.py reads the clash alone. This
  module stands before nccl_errors in MODULES for that line.
- gRPC Python's channel state as Flower's client logs it (flwr/client/grpc_client/connection.py, 0.x-1.x:
  "DEBUG flower 2020-12-17 14:45:45,394 | connection.py:36 | ChannelConnectivity.TRANSIENT_FAILURE"): the
  channel to the server never became READY and the client gave up ("Insecure gRPC channel closed", a
  traceback) - the server is not up or not reachable at --server_address. RUN222. A READY after it is a client
  that started before its server (healthy); a paste that ends in the state with nothing after says nothing.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_OPEN = lazy_re.compile(
    r"\bopen\((?P<path>[^()\n]{1,300})\): (?P<err>No such file or directory|Permission denied|"
    r"Read-only file system|Stale file handle|Is a directory|Too many open files|No space left on device)"
)
_FLOCK = lazy_re.compile(
    r"(?:RuntimeError: |Error: |what\(\):\s+|^\s*)flock: (?P<err>Function not implemented|No locks available|"
    r"Operation not supported|Input/output error|Bad file descriptor|Stale file handle)"
)
# The store in sight: its URL or class, the meeting's call, torch.distributed's frames, or 1.0's DDP broadcast
# (the store's first read after the meeting: pytorch#13750). A DDP or data frame alone is not enough: a
# loader's own C++ open() says the same words.
_STORE_CONTEXT = lazy_re.compile(
    r"file://|FileStore|init_process_group|init_method|torch[/\\]distributed[/\\]|\bc10d\b|"
    r"_dist_broadcast_coalesced|rendezvous"
)
_SLURM_COUNT = lazy_re.compile(
    r"invalid literal for int\(\) with base 10: '(?P<v>\d+\(x\d+\)(?:,\d+(?:\(x\d+\))?)*|"
    r"\d+(?:,\d+(?:\(x\d+\))?)*,\d+\(x\d+\)(?:,\d+(?:\(x\d+\))?)*)'"
)
_SLURM_VAR = lazy_re.compile(r"SLURM_\w+")
_PADDLE_ENV = lazy_re.compile(
    r"(?:[Cc]an't|[Cc]an not|[Cc]annot) find (?P<var>PADDLE_[A-Z_]+|TRAINING_ROLE|POD_IP)"
    r"(?P<tail>, please check your environment|\s*$|\W)"
)
_PADDLE_LEAD = lazy_re.compile(r"AssertionError|ValueError|please check your environment")
_REMOTE = lazy_re.compile(
    r"Failed to connect to remote server at address: (?P<addr>\S+?)\.?(?:\s|$)(?:.*?Error from gRPC: "
    r"(?P<why>[^.\n]+))?"
)
_GEN_ID = lazy_re.compile(
    r"(?:Invoke operator |[Oo]perator <? ?)(?P<op>(?:c_)?gen_(?:nccl|bkcl|hccl|xccl|cncl)_id)(?: >)? error"
)
_ONEFLOW_PLACEMENT = lazy_re.compile(r"Placement is invalid because rank must be less than world size")
_SWIFT_MP = lazy_re.compile(
    r"DeepSpeed is not compatible with MP\.(?:\s*n_gpu: (?P<n>\d+), local_world_size: (?P<local>\d+))?"
)
_CLASH_WITH_SYSTEM_ERROR = lazy_re.compile(
    r"[Aa]ddress already in use.{0,300}?unhandled system error|"
    r"unhandled system error.{0,300}?[Aa]ddress already in use"
)
_CHANNEL_FAILURE = lazy_re.compile(r"ChannelConnectivity\.TRANSIENT_FAILURE")
_CHANNEL_READY = lazy_re.compile(r"ChannelConnectivity\.READY")
_CHANNEL_GAVE_UP = lazy_re.compile(r"gRPC channel closed|^\W*Traceback \(most recent call last\)")
_GRPC_BIND = lazy_re.compile(r"No address added out of total \d+ resolved")
_OS_ERROR = lazy_re.compile(r'"os_error":\s*"(?P<err>[^"]+)"|"errno":\s*(?P<no>\d+)')


def _in_sight(hit: Hit, n: int = 30) -> bool:
    texts = [*(ln.text for ln in hit.before(n, same_rank=False)), hit.text]
    texts += [ln.text for ln in hit.after(6, same_rank=False)]
    return any(_STORE_CONTEXT.search(t) for t in texts)


def _file_store(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _in_sight(hit):
        return None  # another program's open(): not the store's file
    path = m.group("path").strip()
    err = m.group("err")
    return [
        row.event(
            hit,
            f"{hit.who()}: the file:// store's file {clip(path, 80)} could not be opened ({err}): every rank "
            "must see the same file on a shared file system that this rank can write, and no rank may delete "
            "it while others still open it",
            {"store": "FileStore", "path": path, "error": err, "call": "open"},
            dedupe=(row.code, "filestore"),
        )
    ]


def _flock(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err")
    if not m.group(0).startswith(("RuntimeError", "what")) and not _in_sight(hit):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: the file:// store could not lock its file (flock: {err}): the file system under "
            "init_method does not support flock(2) (NFS without lockd, some FUSE or Lustre mounts); put the "
            "file on a local or lock-capable shared file system, or use env:// / tcp://",
            {"store": "FileStore", "error": err, "call": "flock"},
            dedupe=(row.code, "filestore"),
        )
    ]


def _slurm_count(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    v = m.group("v")
    near = [ln.text for ln in hit.after(12, same_rank=False)] + [ln.text for ln in hit.before(12)]
    var = next((vm.group(0) for t in near for vm in [_SLURM_VAR.search(t)] if vm), None)
    facts: dict[str, object] = {"value": v, "launcher": "srun"}
    if var:
        facts["variable"] = var
    return [
        row.event(
            hit,
            f"{hit.who()}: the set-up read Slurm's per-node count '{v}' as a number"
            + (f" ({var})" if var else "")
            + ": Slurm writes repeated counts compressed ('2(x4)' is 2 on each of 4 nodes); read "
            "SLURM_NTASKS_PER_NODE or SLURM_NTASKS / SLURM_NNODES instead, or expand the '(xN)' form",
            facts,
            dedupe=(row.code, "slurm_count"),
        )
    ]


def _paddle_env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _PADDLE_LEAD.search(hit.text):
        return None
    var = m.group("var")
    return [
        row.event(
            hit,
            f"{hit.who()}: PaddlePaddle's fleet found no {var}: the trainer was started without "
            "python -m paddle.distributed.launch (or fleetrun), which sets the PADDLE_* variables of every "
            "trainer (PADDLE_TRAINER_ENDPOINTS, PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM, "
            "PADDLE_CURRENT_ENDPOINT)",
            {"framework": "paddle", "variable": var, "launcher": "python -m paddle.distributed.launch"},
            dedupe=(row.code, "paddle_env"),
        )
    ]


def _remote(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = m.group("addr")
    why = (m.group("why") or "").strip()
    return [
        row.event(
            hit,
            f"{hit.who()}: could not connect to the remote server {addr}"
            + (f" ({why})" if why else "")
            + ": the coordinator / TPU host at that address is not up or not reachable from here (a wrong "
            "address, a stopped or preempted host, a firewall)",
            {"address": addr, "grpc_error": why or None, "problem": "remote_connect"},
            dedupe=(row.code, "remote_connect"),
        )
    ]


def _gen_id(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = m.group("op")
    return [
        row.event(
            hit,
            f"{hit.who()}: Paddle's {op} op failed: trainer 0 could not hand the communicator id to the "
            "other trainers over its sockets - a trainer not up, or an endpoint of PADDLE_TRAINER_ENDPOINTS "
            "(--ips) wrong or unreachable",
            {"framework": "paddle", "op": op, "problem": "communicator_id_exchange"},
            tier=1,
            dedupe=(row.code, "paddle_id"),
        )
    ]


def _oneflow_placement(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: OneFlow's placement names a rank the launch did not start (rank >= world size): "
            "run the script under python -m oneflow.distributed.launch --nproc_per_node N (which sets "
            "WORLD_SIZE, RANK, MASTER_ADDR), or make the placement's ranks fit the world that was launched",
            {"framework": "oneflow", "problem": "placement_rank_beyond_world"},
            dedupe=(row.code, "oneflow_placement"),
        )
    ]


def _swift_mp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text[: m.start()]:
        return []  # the source line of the raise, shown above its exception
    n, local = m.group("n"), m.group("local")
    if n and local and int(n) <= int(local):
        return None
    sizes = f" ({n} GPUs visible, {local} process(es) on the node)" if n else ""
    return [
        row.event(
            hit,
            f"{hit.who()}: the launch started fewer processes on this node than it has visible GPUs{sizes}, "
            "so the trainer would split the model over the GPUs, which DeepSpeed cannot: set NPROC_PER_NODE "
            "(torchrun --nproc_per_node) to the GPUs of each node, or CUDA_VISIBLE_DEVICES to one GPU per "
            "process",
            {
                "framework": "ms-swift",
                "n_gpu": int(n) if n else None,
                "local_world_size": int(local) if local else None,
            },
            dedupe=(row.code, "swift_mp"),
        )
    ]


def _clash_with_system_error(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: 'Address already in use' with NCCL's unhandled system error: a port of the "
            "job's meeting was taken (another job or a stale run on MASTER_PORT, or NCCL's bootstrap port); "
            "the system error is what the failed bind left",
            {"error": "Address already in use", "nccl_error": "unhandled system error"},
            dedupe=(row.code,),
        )
    ]


def _channel_failure(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    later = [ln.text for ln in hit.after(12, same_rank=False)]
    end = next((i for i, t in enumerate(later) if _CHANNEL_GAVE_UP.search(t)), None)
    if end is None or any(_CHANNEL_READY.search(t) or _CHANNEL_FAILURE.search(t) for t in later[:end]):
        # nothing after the state says the client gave up, or it connected (or a later record of the same
        # state reads it)
        return []
    return [
        row.event(
            hit,
            f"{hit.who()}: the gRPC channel to the server stayed in TRANSIENT_FAILURE and the client gave "
            "up: the server is not running or not reachable at the address the client was given",
            {"problem": "grpc_channel_never_ready", "grpc_state": "TRANSIENT_FAILURE"},
            tier=1,
            dedupe=(row.code, "grpc_channel"),
        )
    ]


def _grpc_bind(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = ""
    no = None
    for om in _OS_ERROR.finditer(hit.text):
        err = om.group("err") or err
        no = int(om.group("no")) if om.group("no") else no
    if err.lower().startswith("address already in use") or no == 98:
        code = C.ADDRESS_IN_USE.code
        what = "its port is taken (another server or a stale run still holds it)"
    elif err.lower().startswith("cannot assign requested address") or no == 99:
        code = C.STORE_UNREACHABLE.code
        what = "the address it was given is not one of this host's (a wrong endpoint / IP list)"
    else:
        return None  # no cause named (the line cut before it): not this row's to guess
    return [
        row.event(
            hit,
            f"{hit.who()}: a gRPC server could not bind its address ({err or no}): {what}",
            {"error": err or None, "errno": no, "problem": "grpc_bind"},
            code=code,
            dedupe=(code, "grpc_bind"),
        )
    ]


SIGNATURES = (
    Signature(
        "c10d file store open",
        _OPEN,
        _file_store,
        C.FILE_STORE_UNUSABLE.code,
        anchors=(b"open(",),
        worth=(rb"open\([^()\n]{1,300}\): (?:No such|Permission|Read-only|Stale|Is a|Too many|No space)",),
        words=("open(",),
    ),
    Signature(
        "c10d file store flock",
        _FLOCK,
        _flock,
        C.FILE_STORE_UNUSABLE.code,
        anchors=(b"flock: ",),
        words=("flock: ",),
    ),
    Signature(
        "slurm compressed count read as int",
        _SLURM_COUNT,
        _slurm_count,
        C.SLURM_COUNT_FORMAT.code,
        anchors=(b"invalid literal for int() with base 10: '",),
        worth=(rb"invalid literal for int\(\) with base 10: '[\d,]*\d+\(x\d",),
        words=("invalid literal for int()",),
    ),
    Signature(
        "paddle fleet launch variables missing",
        _PADDLE_ENV,
        _paddle_env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"find PADDLE_", b"find TRAINING_ROLE", b"find POD_IP"),
        worth=(rb"(?:n't|not) find (?:PADDLE_|TRAINING_ROLE|POD_IP)",),
        words=("find paddle_", "find training_role", "find pod_ip"),
    ),
    Signature(
        "remote server connect",
        _REMOTE,
        _remote,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Failed to connect to remote server at address",),
        words=("failed to connect to remote server at address",),
    ),
    Signature(
        "paddle communicator id op",
        _GEN_ID,
        _gen_id,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"gen_nccl_id", b"gen_bkcl_id", b"gen_hccl_id", b"gen_xccl_id", b"gen_cncl_id"),
        worth=(rb"(?:Invoke operator |[Oo]perator <? ?)(?:c_)?gen_\w+_id(?: >)? error",),
        words=("_id error", "_id > error"),
    ),
    Signature(
        "oneflow placement beyond world",
        _ONEFLOW_PLACEMENT,
        _oneflow_placement,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"Placement is invalid because rank must be less than world size",),
        words=("rank must be less than world size",),
    ),
    Signature(
        "swift deepspeed with model parallel",
        _SWIFT_MP,
        _swift_mp,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"DeepSpeed is not compatible with MP.",),
        worth=(rb"DeepSpeed is not compatible with MP\.",),
        words=("deepspeed is not compatible with mp.",),
    ),
    Signature(
        "port clash quoted with the nccl system error",
        _CLASH_WITH_SYSTEM_ERROR,
        _clash_with_system_error,
        C.ADDRESS_IN_USE.code,
        anchors=(b"ddress already in use",),
        worth=(
            rb"ddress already in use.{0,300}?unhandled system error|"
            rb"unhandled system error.{0,300}?ddress already",
        ),
        words=("address already in use",),
    ),
    Signature(
        "grpc channel never ready",
        _CHANNEL_FAILURE,
        _channel_failure,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"ChannelConnectivity.TRANSIENT_FAILURE",),
        words=("channelconnectivity.transient_failure",),
    ),
    Signature(
        "grpc server bind",
        _GRPC_BIND,
        _grpc_bind,
        C.ADDRESS_IN_USE.code,
        anchors=(b"No address added out of total",),
        words=("no address added out of total",),
    ),
)
parse = gated_reader(SIGNATURES)
