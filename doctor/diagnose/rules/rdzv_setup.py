"""rendezvous, continued: the process group's set-up as its own records and frames show it failing, where the
message that would say so is cut off, or is a framework's own wording of an uninitialised group. Read at their
sources:

- ProcessGroupNCCL.cpp broadcastUniqueNCCLID (1.x-2.x) raises "[3] is setting up NCCL communicator and
  retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket
  Timeout" (1.x spelled it "retreiving"). That sentence is only built in the store read's catch block, so its
  opening alone, a paste or a title cut before "by key" / "store->get", is the failed read: RUN222 at tier 1,
  as store_errors.py reads the whole message (that module comes first and owns every line that says
  "store->get(").
- gloo's full-mesh set-up under ProcessGroupGloo (third_party/gloo, torch 1.x-2.x): the c10 record's frames
  ("frame #12: gloo::rendezvous::Context::connectFullMesh(std::shared_ptr<gloo::rendezvous::Store>, ...)",
  2.x's "gloo::transport::tcp::Context::createAndConnectAllPairs" between them) or a gdb stack ("#5 0x.. in
  gloo::rendezvous::Context::connectFullMesh(...)") over a store read ("gloo::rendezvous::PrefixStore::wait",
  "c10d::ProcessGroupGloo::GlooStore::get", "c10d::TCPStore::doWait"): the rank waited in the store for its
  peers' gloo addresses and the read failed (its message cut off above the frames): the ranks did not meet,
  RUN221 at tier 1. connectFullMesh without a store frame under it failed in the pairs' connect, the network's
  (gloo_errors.py reads "connectFullMesh failed with ..." when it is there).
- MosaicML's composer.utils.dist (and the copies in llm-foundry and streaming): "RuntimeError: The
  world_size(8) > 1, but the distributed package is not available or has not been initialized. Please
  check you have initialized the distributed runtime and that PyTorch has been built with distributed
  support." (composer adds "If calling this function outside Trainer, please ensure that
  `composer.utils.dist.initialize_dist` has been called first."): WORLD_SIZE says several ranks and no
  process group was made; torch's "Default process group has not been initialized" in that framework's
  words (RUN224, as rdzv_config.py reads torch's).
- The package before c10d (THD: torch/distributed/__init__.py 0.2-0.4, torch/distributed/deprecated/ in 1.0)
  guarded every collective and send/recv with "assert torch.distributed._initialized == _INITIALIZED_PG,
  \"collective only supported in process-group mode\"" and get_rank / get_world_size with a bare "assert
  torch.distributed._initialized" (1.0: "assert torch.distributed.deprecated._initialized"), whose
  AssertionError has no text: the message, or that assert as the source line under a traceback's last frame
  (a paste cut at it), is a collective or a rank query before init_process_group: RUN224, as torch's
  "Default process group has not been initialized" (a listing of the source, not under a frame, says
  nothing).
- MosaicML streaming's wait for its local leader (streaming/base/util.py wait_for_local_leader, 0.4-0.x;
  Composer and llm-foundry runs): the other local ranks poll for /tmp/streaming/local_sync, which local rank 0
  creates, and give up with "RuntimeError: Waiting for local rank 0, bailing out: 60.000 < 60.033 sec." (its
  wait_for_file_to_exist: "{err_msg}, bailing out: {timeout} < {elapsed} sec."). The local ranks did not meet:
  local rank 0 reached the dataset late or never (it failed or is still busy), or the ranks do not share /tmp
  (a container per process): RUN221. The same helper's download waits ("Index file ... took too long to
  download") are not a meeting and are not read.
- A store address that is a path: DeepSpeed's runner (launcher/runner.py, 0.3-0.16) takes the first word of
  `ssh <first host> hostname -I` as the master address when --master_addr is not given, and a login script
  that prints on a non-interactive shell (a .bashrc that echoes the files it sources) hands it that text:
  "Using IP address of /root/cuda11.8.bashrc for node node-1" and "... deepspeed.launcher.launch
  --world_info=... --master_addr=/root/cuda11.8.bashrc --master_port=29500" (pdsh, Accelerate's DeepSpeed
  launch under it). The same value given to torchrun / torch.distributed.launch (--master_addr /
  --master-addr) or exported as MASTER_ADDR: no host is named by a path or URL, so the store cannot be
  reached: RUN224 (the rendezvous settings), the cause of whatever follows. An unexpanded shell expression
  ("$MASTER_ADDR", "$(cat /tmp/master)") is what a user typed, not a value, and says nothing. Its row
  (PATH_ADDR_ROW) is listed in nccl_transport.py, before that module's observation of the same command
  line's node count, which would own the line.
- torch.distributed.rpc used before init_rpc: rpc_agent.cpp getCurrentRpcAgent's assert, "Current RPC agent
  is not set!" (1.6-1.x: "agent INTERNAL ASSERT FAILED at ".../rpc_agent.cpp":247, please report a bug to
  PyTorch. Current RPC agent is not set!", 1.5's "currentRpcAgent_ INTERNAL ASSERT FAILED"; 2.x adds "Did you
  initialize the RPC framework (e.g. by calling `rpc.init_rpc`)?"), 1.4's "Default rpc agent is not
  initialized!", and rpc/api.py's "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
  An RRef, Pipe (pipeline.sync, which needs the RPC framework even on one process) or rpc_sync without the
  framework's set-up: the RPC world was never made, RUN224 as torch's uninitialised default group. Its
  double set-up ("Current RPC agent is set!") is another failure and is not read.
- TensorRT-LLM: the engine was built for tp x pp ranks and the runtime's MPI world is another size:
  runtime/model_runner.py (0.5-0.x) "AssertionError: Engine world size (2 * 1) != Runtime world size (1)"
  (older examples/run.py "Engine world size (2) != Runtime world size (1)"), the C++ runtime's
  worldConfig.cpp "MPI size 1 != TP size 2 * PP size 1" (" * CP Size 1" since 0.12). A runtime size of 1
  under "mpirun -n 2" is each process alone in its own MPI world (mpi4py built against another MPI than the
  mpirun that started it, or no mpirun at all); another size is a launch of a different -n: RUN224.
  The same check without its sizes: worldConfig.cpp before 0.9 "Assertion failed: mpiSize == tp * pp" (a
  bare TLLM_CHECK), and the executor's leader mode (executor/executorImpl.cpp, the Triton backend's
  default) "With communicationMode kLEADER, MPI worldSize is expected to be equal to tp*pp when
  participantIds are not specified" ("tp*pp*cp" since 0.12): RUN224 too.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# The opening of ProcessGroupNCCL's store-read error, cut before its "store->get('0') got error: ..." part
# (which store_errors.py reads).
_UID_OPENING = lazy_re.compile(
    r"(?:\[(?P<rank>\d+)\] )?is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId"
    r"(?: from \[(?P<src>\d+)\])?"
)


def _uid_opening(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any("store->get(" in ln.text for ln in [hit.line, *hit.after(2)]):
        return []  # the whole message (or its wrapped rest): store_errors.py's row reads it
    # "[15] " at a line's start is read as the line's rank prefix by the text layer
    me = int(m.group("rank")) if m.group("rank") else hit.rank
    src = int(m.group("src")) if m.group("src") else 0  # the id is always rank 0's (the group's rank 0)
    return [
        row.event(
            hit,
            f"{hit.who(me)}: the store read of rank {src}'s NCCL unique id failed (torch's message is cut "
            "before its error): the rank could not get the id through the store (rank "
            f"{src} never published it, the store's host went away, or the wait timed out)",
            {
                **({"rank": me} if me is not None else {}),
                "waited_for_rank": src,
                "store_error": "(the message is cut before its error)",
            },
            dedupe=(row.code, "uid_opening"),
        )
    ]


# gloo's full-mesh set-up in a c10 record ("frame #12: gloo::rendezvous::Context::connectFullMesh(") or a gdb
# stack ("#5  0x00007f.. in gloo::rendezvous::Context::connectFullMesh(").
_FULL_MESH_FRAME = lazy_re.compile(r"(?:frame #\d+: |^#\d+\s.*?)gloo::rendezvous::Context::connectFullMesh\b")
# The store read under it: gloo's prefix store, ProcessGroupGloo's adapter, c10d's stores.
_STORE_READ_FRAME = lazy_re.compile(
    r"gloo::rendezvous::\w*Store::(?:wait|get|multi_get)\b|ProcessGroupGloo::GlooStore::\w+|"
    r"c10d::\w*Store::(?:get|wait|doWait|doGet|check)\b|c10d::detail::TCPClient::"
)
# Its message, when the paste holds it: the rows that read it are the better record.
_MESSAGE_SAID = lazy_re.compile(
    r"connectFullMesh failed|Socket Timeout|[Ww]ait timeout|Timeout waiting for key|DistStoreError|"
    r"got error:|Connection (?:refused|reset)"
)


def _full_mesh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    above = [ln.text for ln in hit.before(12, same_rank=False)]
    if not any(_STORE_READ_FRAME.search(t) for t in above):
        return None  # the pairs' connect failed, not the store read
    if any(_MESSAGE_SAID.search(ln.text) for ln in hit.before(40, same_rank=False)):
        return []
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo's full-mesh set-up failed in its store read (frames: a store wait under "
            "gloo::rendezvous::Context::connectFullMesh; the message was cut off): the rank waited for its "
            "peers' gloo addresses and they never came (a rank that did not reach the group's creation, "
            "another world size or group on some rank, or the store's host gone)",
            {"from_stack": True, "store_op": "connectFullMesh", "backend": "gloo", "cut": True},
            dedupe=(row.code, "gloo_full_mesh"),
        )
    ]


# composer/utils/dist.py (and its copies): the world size says several ranks, no process group exists.
_WORLD_NOT_INIT = lazy_re.compile(
    r"The world_size\((?P<n>\d+)\) > 1, but the distributed package is not available or has not been "
    r"init(?:ialized)?"
)


def _world_not_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n"))
    return [
        row.event(
            hit,
            f"the world size is {n} but no process group was created: the script never initialised "
            "torch.distributed (composer.utils.dist.initialize_dist / init_process_group) before a "
            "collective, or this torch was built without distributed support",
            {"problem": "default process group not initialized", "world_size": n, "framework": "composer"},
            dedupe=(row.code, "world_not_init"),
        )
    ]


# THD's guards (0.2-1.0): the assertion's message, or the assert as the raising frame's source line.
_THD_NOT_INIT = lazy_re.compile(
    r"collective only supported in process-group mode|"
    r"\bassert torch\.distributed(?:\.deprecated)?\._initialized(?: == _INITIALIZED_PG\b)?"
)
_FRAME_LINE = lazy_re.compile(r'\bFile "[^"]+", line \d+, in \w+')


def _thd_not_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(0).startswith("assert"):
        # (a frame line wrapped onto its source line is joined to it by the text layer)
        before = [hit.text[: m.start()], *(ln.text for ln in hit.before(1, same_rank=False))]
        if not any(_FRAME_LINE.search(t) for t in before):
            return None  # the source quoted outside a traceback: no assertion failed
    return [
        row.event(
            hit,
            "a collective or a rank query ran before init_process_group (torch.distributed before c10d, "
            "0.2-1.0, asserts that the package was initialised): the process group was never created",
            {"problem": "default process group not initialized", "package": "torch.distributed (THD)"},
            dedupe=(row.code, "not_initialized"),
        )
    ]


_LOCAL_LEADER = lazy_re.compile(r"Waiting for local rank 0, bailing out: (?P<t>[\d.]+) < (?P<dt>[\d.]+) sec")


def _local_leader(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    me = hit.line.rank  # the line's "rank 0" is the leader waited for, not the rank that gave up
    ev = row.event(
        hit,
        f"{hit.who(me) if me is not None else 'a local rank'} waited {m.group('t')} s for local rank 0 to "
        "create /tmp/streaming/local_sync and gave up (MosaicML streaming): local rank 0 reached the "
        "dataset late or never (it failed first, or is still busy), or the local ranks do not share /tmp (a "
        "container per process)",
        {"framework": "mosaicml-streaming", "waited_for_rank": 0, "timeout_s": float(m.group("t"))},
        dedupe=(row.code, "local_leader"),
    )
    if me is None:
        ev.rank = None
        ev.facts.pop("rank", None)
    return [ev]


_RPC_NOT_INIT = lazy_re.compile(
    r"Current RPC agent is not set!|Default rpc agent is not initialized!|"
    r"RPC has not been initialized\. Call torch\.distributed\.rpc\.init_rpc first"
)


def _rpc_not_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "torch.distributed.rpc was used before its framework was set up: no RPC agent exists (call "
            "torch.distributed.rpc.init_rpc on every process first; Pipe and RRef need it even on one "
            "process)",
            {"problem": "rpc not initialized"},
            dedupe=(row.code, "rpc_not_init"),
        )
    ]


_TRT_WORLD = lazy_re.compile(
    r"Engine world size \((?P<e>\d+(?: \* \d+)*)\) != Runtime world size \((?P<r>\d+)\)|"
    r"MPI size (?P<r2>\d+) != TP size (?P<tp>\d+) \* PP size (?P<pp>\d+)(?: \* CP [Ss]ize (?P<cp>\d+))?"
)


def _trt_world(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("e") is not None:
        engine, runtime = _product(m.group("e")), int(m.group("r"))
    else:
        engine = int(m.group("tp")) * int(m.group("pp")) * int(m.group("cp") or 1)
        runtime = int(m.group("r2"))
    if engine == runtime:
        return []
    why = (
        "each process is alone in its own MPI world (started without mpirun, or mpi4py built against "
        "another MPI than the mpirun that started it)"
        if runtime == 1
        else f"the launch started {runtime} processes (mpirun -n) for an engine built for {engine}"
    )
    return [
        row.event(
            hit,
            f"TensorRT-LLM: the engine was built for {engine} ranks and the runtime's MPI world holds "
            f"{runtime}: " + why,
            {
                "problem": "world size mismatch",
                "framework": "tensorrt_llm",
                "world_size": engine,
                "runtime_size": runtime,
            },
            dedupe=(row.code, "trt_world"),
        )
    ]


# The check's sizeless texts (TLLM_CHECK's "Assertion failed: <condition>", the executor's leader-mode check).
_TRT_WORLD_BARE = lazy_re.compile(
    r"Assertion failed: mpiSize == tp \* pp\b|MPI worldSize is expected to be equal to tp\*pp(?:\*cp)?\b"
)


def _trt_world_bare(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "TensorRT-LLM: the MPI world does not hold tp x pp ranks of the engine: the launch started "
            "another number of processes (mpirun -n, Triton's world_size) than the engine was built for, or "
            "each process is alone in its own MPI world (no mpirun)",
            {"problem": "world size mismatch", "framework": "tensorrt_llm"},
            dedupe=(row.code, "trt_world"),
        )
    ]


def _product(text: str) -> int:
    """ "2 * 1" -> 2."""
    out = 1
    for part in text.split("*"):
        out *= int(part)
    return out


# A master address that is a path or a URL: the launch command's option, the environment, DeepSpeed's runner.
PATH_ADDR = lazy_re.compile(
    r"(?P<how>(?:--master_addr|--master-addr)[= ]+|\bMASTER_ADDR=|Using IP address of )['\"]?"
    r"(?P<addr>[^\s'\";,$`]*/[^\s'\";,]*)"
)
_FOR_NODE = lazy_re.compile(r"Using IP address of \S+ for node (\S+)")


def path_addr(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = m.group("addr")
    if "$" in addr or "`" in addr or "<" in addr or "{" in addr:
        return None  # a shell expression or a placeholder the user typed, not the value the launcher used
    facts: dict[str, Any] = {"master_addr": addr, "problem": "master address is not a host"}
    node = _FOR_NODE.search(hit.text)
    if node:
        facts["host"] = node.group(1)
    runner = "DeepSpeed's runner" if "Using IP address" in m.group("how") or "deepspeed" in hit.text else ""
    why = (
        " (DeepSpeed's runner takes the first word `ssh <first host> hostname -I` prints: a login script "
        "that echoes on a non-interactive shell gave it that text; pass --master_addr or silence the script)"
        if runner
        else ""
    )
    return [
        row.event(
            hit,
            f"the rendezvous address is '{clip(addr, 80)}', a path or URL, not a host name or IP address: "
            f"no rank can reach a store there{why}",
            facts,
            dedupe=(row.code, "path_addr"),
        )
    ]


PATH_ADDR_ROW = Signature(
    "master address that is a path",
    PATH_ADDR,
    path_addr,
    C.RENDEZVOUS_CONFIG.code,
    anchors=(b"--master_addr", b"--master-addr", b"MASTER_ADDR=", b"Using IP address of "),
    worth=(rb"(?:--master[-_]addr[= ]+|MASTER_ADDR=|Using IP address of )['\"]?[^\s'\";,$`]*/",),
    words=("master_addr", "master-addr", "using ip address of"),
)

SIGNATURES = (
    Signature(
        "nccl unique id store read, cut before its error",
        _UID_OPENING,
        _uid_opening,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"is setting up NCCL communicator and retr",),
        worth=(rb"is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId",),
        words=("is setting up nccl communicator",),
    ),
    Signature(
        "gloo full-mesh store read, frames only",
        _FULL_MESH_FRAME,
        _full_mesh,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"gloo::rendezvous::Context::connectFullMesh",),
        words=("gloo::rendezvous::context::connectfullmesh",),
    ),
    Signature(
        "composer world size without a process group",
        _WORLD_NOT_INIT,
        _world_not_init,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"> 1, but the distributed package is not available",),
        words=("but the distributed package is not available",),
    ),
    Signature(
        "torch.distributed (THD) used before init_process_group",
        _THD_NOT_INIT,
        _thd_not_init,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"only supported in process-group mode", b"assert torch.distributed"),
        words=("only supported in process-group mode", "assert torch.distributed"),
        examples=(
            "AssertionError: collective only supported in process-group mode",
            "    assert torch.distributed.deprecated._initialized",
        ),
    ),
    Signature(
        "streaming's wait for local rank 0",
        _LOCAL_LEADER,
        _local_leader,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"Waiting for local rank 0, bailing out",),
        words=("waiting for local rank 0, bailing out",),
    ),
    Signature(
        "rpc framework not initialised",
        _RPC_NOT_INIT,
        _rpc_not_init,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(
            b"Current RPC agent is not set",
            b"rpc agent is not initialized",
            b"RPC has not been initialized",
        ),
        words=(
            "current rpc agent is not set",
            "rpc agent is not initialized",
            "rpc has not been initialized",
        ),
        examples=(
            "RuntimeError: agent INTERNAL ASSERT FAILED at "
            '"/pytorch/torch/csrc/distributed/rpc/rpc_agent.cpp":247, please report a bug to PyTorch. '
            "Current RPC agent is not set!",
            "RuntimeError: Current RPC agent is not set! Did you initialize the RPC framework (e.g. by "
            "calling "
            "`rpc.init_rpc`)?",
            "RuntimeError: RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.",
        ),
    ),
    Signature(
        "tensorrt-llm engine and runtime world sizes",
        _TRT_WORLD,
        _trt_world,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b") != Runtime world size (", b" != TP size "),
        words=("!= runtime world size", "!= tp size"),
        examples=(
            "AssertionError: Engine world size (2 * 1) != Runtime world size (1)",
            "AssertionError: Engine world size (4) != Runtime world size (2)",
            "[TensorRT-LLM][ERROR] Assertion failed: MPI size 1 != TP size 2 * PP size 1 * CP Size 1",
        ),
    ),
    Signature(
        "tensorrt-llm world size check, no sizes",
        _TRT_WORLD_BARE,
        _trt_world_bare,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"mpiSize == tp * pp", b"MPI worldSize is expected to be equal to tp"),
        words=("mpisize == tp * pp", "mpi worldsize is expected"),
    ),
)
parse = gated_reader(SIGNATURES)
