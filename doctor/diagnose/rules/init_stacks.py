"""rendezvous, from the shape of a paste: a Python stack that ends inside the ranks' meeting (the process
group's store, the elastic agent's rendezvous) with no exception line after it.

Users paste the frames and cut before the message (the message is in the issue's title), or the paste
starts mid-traceback with no "Traceback (most recent call last):" header (pyexc's cut-traceback row reads
the headed ones). What is known is where the process was when it died: in torch/distributed/rendezvous.py's
handlers (_tcp_rendezvous_handler, _env_rendezvous_handler, _create_c10d_store: the TCPStore is made
there), an elastic handler's next_rendezvous (static_tcp_rendezvous.py's TCPStore(...), etcd_rendezvous.py,
dynamic_rendezvous.py), the agent's _rendezvous, the store-based barrier, or a trainer's own frame calling
init_process_group / distributed_init with only decorators' wrappers (c10d_logger, elastic metrics) below
it. Whatever was raised there, the ranks did not meet: tier 2, so any failure found elsewhere in the paste
is the cause. A paste whose line breaks were lost (the frames glued on one line) reads the same.
The same cut stack ending inside a collective instead (distributed_c10d.py's calls past c10d_logger's wrapper,
DDP's parameter broadcast: knowledge/dist_calls.cut_in_collective, which pyexc's headed row reads too) is a
collective its peers did not complete with this rank: RUN151, tier 2.

torchrun's agent also logs "[default] Rendezvous'ing worker group" right before it calls the rendezvous;
a torchrun traceback cut after that record (and before "Rendezvous complete") died in it. When the record
follows "Worker group FAILED. 3/3 attempts left; will restart worker group", the worker's failure was
handled and the job ended because the agents could not meet again: tier 0, the cause. Where the agent's INFO
lines are not shown (torch 2.0-2.x log at WARNING), its start-up records stand for that one: run.py's
OMP_NUM_THREADS banner, launcher/api.py's "config has no run_id" and launch-config dump.

A C++ backtrace alone whose frames are a store read under ProcessGroupNCCL's broadcastUniqueNCCLID is a rank
that could not read rank 0's NCCL unique id from the store (its message cut off above the frames): tier 1.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.dist_calls import COLLECTIVE_CALLS, cut_in_collective
from pgdoctor.model import lazy_re

_FRAME = lazy_re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
# Frames of the meeting itself: rendezvous.py's handlers and store creation, the elastic handlers' entry
# (next_rendezvous) and the agent's call of it. A frame deeper in an elastic backend (get_state,
# _call_store) is not read: a paste cut there says nothing of what it raised (store_errors.py reads the
# backend's raise).
_MEETING_FILE = lazy_re.compile(r"distributed/rendezvous\.py$")
_MEETING_FUNC = frozenset(
    {
        "init_process_group",
        "_store_based_barrier",
        "_create_c10d_store",
        "_rendezvous",
        "next_rendezvous",
        "rendezvous",
        # the agent's meeting: _initialize_workers runs _rendezvous, then _assign_worker_ranks, which
        # exchanges the role infos over the store (_share_and_gather); only then does it spawn the workers
        "_initialize_workers",
        "_assign_worker_ranks",
        "_share_and_gather",
        # the agent's run loop: what it raises past its caller is the (re-)rendezvous's error; a worker's
        # failure is returned, not raised (launch_agent raises ChildFailedError after run returns). Its one
        # other raise, a signal's SignalException, comes from the monitor's sleep, which meeting_cut leaves.
        "_invoke_run",
        # frameworks' functions that are the meeting and nothing else: ColossalAI's launchers
        # (colossalai/initialize.py: launch_from_torch reads the launcher's variables, then launch calls
        # init_process_group), Megatron-LM's _initialize_distributed, Lightning's init_dist_connection
        "launch_from_torch",
        "launch_from_slurm",
        "launch_from_openmpi",
        "_initialize_distributed",
        "init_dist_connection",
        # CuPy's NCCLBackend (cupyx/distributed/_nccl_comm.py, 12.x-13.x): rank 0 starts cupy's own TCP store,
        # every rank reads the NCCL unique id through it before the communicator is made
        "_init_with_tcp_store",
        # Horovod's launcher waiting for every task to register with its driver (horovod/run/ 0.16-0.19 and
        # horovod/runner/ 0.20+, common/service/driver_service.py and task_service.py, spark/driver/): the
        # waits raise only their start timeout, "Timed out waiting for tasks to start" / "... for tasks to
        # update task-to-task addresses" (launch_start.py reads the message itself)
        "wait_for_initial_registration",
        "wait_for_task_to_task_address_updates",
    }
)
# A trainer's frame whose source line starts the process group: torch's own call, and the wrappers most
# trainers have (fairseq's distributed_init, DeiT/MAE's init_distributed_mode, DeepSpeed's init_distributed).
# The agent's own call of the meeting too ("self._initialize_workers(worker_group)", "self._rendezvous(
# worker_group)", "rdzv_handler.next_rendezvous()"): a paste cut in the wrapper frames below such a line.
_INIT_CALL = lazy_re.compile(
    r"\b(?:init_process_group|distributed_init|init_distributed(?:_mode)?|init_dist)\(|TCPStore\(|"
    # the same frameworks' calls; ColossalAI's whether or not the paste kept the call's "(" (cut at the name)
    r"\bcolossalai\.launch(?:_from_(?:torch|slurm|openmpi)\b|\()|\b(?:_initialize_distributed|init_dist_connection)\(|"
    r"\.(?:_initialize_workers|_rendezvous|next_rendezvous|_invoke_run)\(|"
    # the keyword arguments of the process group's start on one line (the last line of a multi-line
    # init_process_group / init_rpc call, which Python < 3.8 shows as the frame's source)
    r"^\s*(?:[\w.]+\()?world_size=[^,()]+, ?rank=|^\s*(?:[\w.]+\()?rank=[^,()]+, ?world_size="
)
# What may stand below the meeting's frame in a cut stack: decorators' wrappers, which call through.
_WRAPPER = lazy_re.compile(
    r"c10d_logger\.py$|/elastic/metrics/api\.py$|/multiprocessing/errors/__init__\.py$"
)
_AGENT_RDZV = lazy_re.compile(r"Rendezvous'ing worker group")
# The agent's records before it calls the rendezvous, when its INFO lines are not shown (torch 2.0-2.x log at
# WARNING): run.py's OMP_NUM_THREADS banner (its closing row of asterisks), launcher/api.py's "config has no
# run_id, generated a random run_id: ..." and its launch-config dump ("  metrics_cfg      : {}"), the c10d
# backend's "Process 8 hosts the TCP store for the C10d rendezvous backend.". A torchrun traceback cut right
# after one of them died before any worker said anything: in the agents' meeting.
_AGENT_START = lazy_re.compile(
    r"\*{20,}\s*$|config has no run_id, generated a random run_id|"
    r"^\s*(?:metrics_cfg|log_line_prefix_template|local_addr)\s*: |"
    r"hosts the TCP store for the C10d rendezvous"
)
# The command the user ran, the line right before the agent's traceback: nothing of any worker came between.
_LAUNCH_CMD = lazy_re.compile(
    r"^\s*(?:\$ |# )?(?:(?:\w+=\S+ )*(?:bash|sh) \S+\.sh\b|torchrun |accelerate launch |"
    r"python3? -m torch\.distributed\.(?:run|launch) |deepspeed |llamafactory-cli )"
)
_AGENT_DONE = lazy_re.compile(r"Rendezvous complete|Starting worker group")
_EXC_LINE = lazy_re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit)\b")
# elastic/agent/server/api.py: "[default] Worker group FAILED. 3/3 attempts left; will restart worker group".
_RESTART = lazy_re.compile(r"(\d+/\d+) attempts left; will restart worker group")
_TORCHRUN = lazy_re.compile(r'File "[^"]*(?:/bin/torchrun|distributed/run\.py|distributed/launch\.py)"')


# A frame's source line whose indentation the paste lost: "return f(*args, **kwargs)", "main()",
# "store, rank, world_size = next(rendezvous_iterator)", "self._store = TCPStore(  # type: ignore".
_FLUSH_SOURCE = lazy_re.compile(
    r"^(?:return |raise |yield |await )?[A-Za-z_][\w.]*(?:\[[^\]]*\])*(?:\s*,\s*[A-Za-z_][\w.]*)*"
    r"\s*(?:[-+*/|]?=\s*\S.*|\(.*)$|^\)+.*$"
)


def _stack_line(t: str) -> bool:
    """A line of a Python stack: a frame, its source line (indented, or flush left where the paste lost
    the indentation), the carets under it; never an exception line or a log record."""
    if _EXC_LINE.match(t):
        return False
    s = t.strip()
    if _FRAME.match(t) or s.startswith("^") or s in ("```", ""):
        return True
    if t[:1].isspace():
        return not s.startswith("[")
    return bool(_FLUSH_SOURCE.match(s))


# The user's own words after the paste's code block: "anyone faced same problem?", "Any suggestions? thanks."
# A sentence (three words or more, ending in ".", "?", "!" or ":"), after a blank line, that names no error.
_PROSE = lazy_re.compile(r"^\s*[A-Za-z]\S*(?: \S+){2,}[.?!:]\s*$")
_ERRORISH = lazy_re.compile(r"Error|Exception|Traceback|File \"|[Ff]ailed|[Tt]imed out|\berror\b")


def _without_prose_tail(after: list[Line]) -> list[Line]:
    """The lines after the hit without a few lines of the user's prose that follow the stack after a blank
    line (the paste's code block ended there): the stack still ends the paste."""
    for k, ln in enumerate(after):
        if ln.text.strip():
            continue
        tail = [t.text for t in after[k + 1 :] if t.text.strip() and t.text.strip() != "```"]
        if 0 < len(tail) <= 3 and all(_PROSE.match(t) and not _ERRORISH.search(t) for t in tail):
            return after[:k]
        break
    return after


def _stack(hit: Hit) -> Optional[list[str]]:
    """The stack around the hit, from its first line to the end of the paste, if the paste ends inside it;
    None when an exception line or other output follows, or the window ran out before the end."""
    after = hit.after(LINES_AFTER, same_rank=False)
    after = _without_prose_tail(after)
    if len(after) >= LINES_AFTER or not all(_stack_line(ln.text) for ln in after):
        return None
    head: list[str] = []
    for ln in reversed(hit.before(40, same_rank=False)):
        if not _stack_line(ln.text) or "Traceback (most recent call last)" in ln.text:
            break
        head.insert(0, ln.text)
    return [t for t in [*head, hit.text, *(ln.text for ln in after)] if t.strip() not in ("", "```")]


def ends_in_stack(hit: Hit) -> bool:
    """Whether the paste ends inside the Python stack around the hit, before its exception line (_stack)."""
    return _stack(hit) is not None


# detectron2's launcher (engine/launch.py _distributed_worker, 0.1-0.6, and the trainers that copied it: EVA,
# detrex, AdelaiDet, ...) re-raises only what init_process_group raised ("except Exception as e: logger.error(
# 'Process group URL: ...'); raise e"): a stack cut at that raise is cut in the meeting.
_D2_RERAISE = lazy_re.compile(r"^raise(?: e)?\s*$")


def _meeting(frame: re.Match[str], source: str) -> bool:
    if _MEETING_FILE.search(frame.group("file")) or frame.group("func") in _MEETING_FUNC:
        return True
    if frame.group("func") == "_distributed_worker" and _D2_RERAISE.match(source.strip()):
        return True
    return bool(_INIT_CALL.search(source))


_FRAME_START = lazy_re.compile(r'(?=\bFile "[^"]+", line \d+, in )')
# An exception line glued after a frame's source ("...  foo() RuntimeError: boom"): a word ending in Error or
# Exception followed by ":" or the end ("raise RuntimeError(" is source).
_EXC_GLUED = lazy_re.compile(r"\b[A-Za-z_][\w.]*(?:Error|Exception)(?::|\s*$)")


def cut_chunks(hit: Hit) -> Optional[list[str]]:
    """The frames of the Python stack around the hit, one chunk each (its `File "...", line N, in f` header
    and its source text), innermost last, when the paste ends inside that stack before its exception line;
    None otherwise. Split inside lines too, so that a paste whose line breaks were lost (every frame glued on
    one line) reads the same. rules/cut_phases.py reads the same chunks."""
    rest = _stack(hit)
    if rest is None:
        return None
    chunks = [c for c in _FRAME_START.split(" \n".join(rest)) if _FRAME.match(c)]
    if not chunks or _EXC_GLUED.search(_FRAME.sub("", chunks[-1], count=1)):
        return None  # no frame, or the exception line is glued after the last one: not cut
    return chunks


def chunk_frame(chunk: str) -> tuple[str, str, str]:
    """(file with "/" separators, function, source text) of one chunk of cut_chunks."""
    f = _FRAME.match(chunk)
    assert f is not None
    return f.group("file").replace("\\", "/"), f.group("func"), chunk[f.end() :].strip()


def _cut_in_meeting(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    chunks = cut_chunks(hit)
    if chunks is None:
        return None
    return (
        meeting_cut(row, hit, chunks) or query_cut(row, hit, chunks) or _cut_in_collective(row, hit, chunks)
    )


# torch.distributed's own frames below init_process_group that are still the meeting: the backend's name
# checked (distributed_c10d.py's Backend.__new__, which raises on "tcp" and unknown names), the rendezvous
# handlers (rendezvous.py). Not the process group's creation (_new_process_group_helper and below: NCCL or
# gloo built in, the device, the communicator) nor a collective: those are no meeting.
_MEETING_BELOW = lazy_re.compile(r"torch[\\/]distributed[\\/](?:distributed_c10d|rendezvous)\.py$")
_NOT_MEETING_BELOW = frozenset({"_new_process_group_helper", "_new_group_with_tag"}) | COLLECTIVE_CALLS


_MONITOR_SLEEP = lazy_re.compile(r"\btime\.sleep\(|_monitor_workers\(")


def meeting_cut(row: Signature, hit: Hit, chunks: list[str]) -> Optional[list[Event]]:
    """A stack cut inside the ranks' meeting (cut_chunks' frames): its innermost meeting frame with only
    wrappers, or torch.distributed's own checks and handlers of the meeting, below it. pyexc's headed row
    reads its cut tracebacks with it too (a frame whose source line is the meeting's call, e.g. the last line
    of a multi-line init_process_group call, "world_size=args.world_size, rank=args.rank)", which Python < 3.8
    shows). None when the stack ends elsewhere."""
    inner = None
    for c in chunks:
        f = _FRAME.match(c)
        assert f is not None
        if f.group("func") == "_invoke_run" and _MONITOR_SLEEP.search(c[f.end() :]):
            inner = None  # the agent's monitor loop asleep: a signal (SignalException) is raised there
        elif _meeting(f, c[f.end() :]):
            inner = f
        elif inner is not None and (
            _MEETING_BELOW.search(f.group("file")) and f.group("func") not in _NOT_MEETING_BELOW
        ):
            continue
        elif not (_WRAPPER.search(f.group("file")) or f.group("func") == "wrapper"):
            inner = None
    if inner is None:
        return None
    where = f"{inner.group('file').rsplit('/', 1)[-1]}:{inner.group('line')} in {inner.group('func')}"
    return [
        row.event(
            hit,
            f"a stack ends inside the rendezvous ({where}) before its exception line: the ranks' store "
            "could not be created or reached",
            {"frame": where, "cut": True},
            tier=2,
            code=C.RENDEZVOUS_TIMEOUT.code,
            dedupe=(C.RENDEZVOUS_TIMEOUT.code, "cut"),
        )
    ]


# A frame whose source line asks the default process group its size or rank (torch.distributed's
# get_world_size / get_rank, imported as dist or torch.distributed), or torch's own frame of it
# (distributed_c10d.py): these
# raise only where no process group was made ("Default process group has not been initialized, please make
# sure to call init_process_group." 1.8+, "Default process group is not initialized" before): a trainer run
# without a launcher that builds a DistributedSampler or reduces a loss anyway.
_QUERY_CALL = lazy_re.compile(r"\b(?:dist|distributed|torch\.distributed)\.get_(?:world_size|rank)\(\s*\)")
_QUERY_FRAME = frozenset({"get_world_size", "get_rank"})


def query_cut(row: Signature, hit: Hit, chunks: list[str]) -> Optional[list[Event]]:
    """A stack cut (cut_chunks' frames) whose innermost frame asks the default process group its world size or
    rank: nothing had initialised it (RUN224, tier 2). pyexc's headed row reads its cut tracebacks with it
    too. None when the stack ends elsewhere."""
    file, func, source = chunk_frame(chunks[-1])
    in_torch = file.endswith("distributed/distributed_c10d.py") and func in _QUERY_FRAME
    if not (in_torch or _QUERY_CALL.search(source)):
        return None
    where = f"{file.rsplit('/', 1)[-1]} in {func}"
    return [
        row.event(
            hit,
            f"a stack ends where it asks the default process group its size or rank ({where}) before its "
            "exception line: no process group was initialised (the script ran without a launcher, or before "
            "init_process_group)",
            {"frame": where, "cut": True, "problem": "process group not initialised"},
            tier=2,
            code=C.RENDEZVOUS_CONFIG.code,
            dedupe=(C.RENDEZVOUS_CONFIG.code, "cut"),
        )
    ]


# distributed_c10d.py's checks of a collective's arguments (1.x-2.x): the gather/scatter list on the right
# rank, the tensor's type, one dtype, the op, the p2p list, the timeout, a peer other than itself, the group
# rank. A cut stack whose innermost frame is one of them, or calls one, raised there (ValueError, TypeError):
# the program's call was refused before any communication, whatever the collective (not a timeout).
_ARG_CHECKS = (
    r"_(?:validate_output_list_for_rank|check_single_tensor|check_tensor_list|ensure_all_tensors_same_dtype|"
    r"check_op|check_p2p_op_list|check_valid_timeout|check_not_self_rank|canonicalize_group_rank)"
)
_ARG_CHECK_CALL = lazy_re.compile(r"(?:^|[^\w.])" + _ARG_CHECKS + r"\(")
_ARG_CHECK_FUNC = lazy_re.compile(_ARG_CHECKS + "$")


def arg_check_cut(row: Signature, hit: Hit, chunks: list[str]) -> list[Event]:
    inner = None
    for c in reversed(chunks):
        f = _FRAME.match(c)
        if f and not f.group("file").replace("\\", "/").endswith("torch/distributed/c10d_logger.py"):
            inner = (f, c[f.end() :].strip())
            break
    if inner is None or not inner[0].group("file").replace("\\", "/").endswith("distributed_c10d.py"):
        return []
    f, source = inner
    call = _ARG_CHECK_CALL.search(source)
    if not (call or _ARG_CHECK_FUNC.match(f.group("func"))):
        return []
    check = call.group(0).strip(" (") if call else f.group("func")
    return [
        row.event(
            hit,
            f"a stack ends in torch.distributed's check of a collective's arguments ({f.group('func')}: "
            f"{check}) before its exception line: the call was refused (a list, tensor, dtype or rank "
            "that does not fit), nothing was communicated",
            {"frame": f"distributed_c10d.py in {f.group('func')}", "cut": True, "c10d_check": check},
            tier=2,
            code=C.C10D_INVALID_USAGE.code,
            dedupe=(C.C10D_INVALID_USAGE.code, hit.rank, "cut"),
        )
    ]


def _cut_in_collective(row: Signature, hit: Hit, chunks: list[str]) -> list[Event]:
    checked = arg_check_cut(row, hit, chunks)
    if checked:
        return checked
    frames = [(f.group("file"), f.group("func")) for f in map(_FRAME.match, chunks) if f]
    shown = f"{frames[-1][0].rsplit('/', 1)[-1]} in {frames[-1][1]}" if frames else ""
    return collective_cut(row, hit, frames, shown, "stack")


# vLLM's worker start-up calls whose first collective creates the NCCL communicator (worker.py 0.2-0.6,
# distributed/parallel_state.py)
_VLLM_START = frozenset(
    {
        "init_device",
        "init_worker_distributed_environment",
        "init_distributed_environment",
        "ensure_model_parallel_initialized",
        "initialize_model_parallel",
    }
)


def collective_cut(
    row: Signature, hit: Hit, frames: list[tuple[str, str]], shown: str, kind: str
) -> list[Event]:
    """A Python stack cut before its exception line (its (file, function) frames, innermost last; `shown`, the
    innermost as the finding names it; `kind`, "stack" or "traceback") that ends inside a collective
    (distributed_c10d's calls, DDP's parameter broadcast): the peers did not complete it with this rank,
    whatever it raised (a timeout, an NCCL error): RUN151, tier 2 (under vLLM's worker start-up, RUN363: the
    communicator's creation raised). [] when it ends elsewhere. pyexc's headed
    row reads its cut tracebacks with it too."""
    op = cut_in_collective(frames)
    if op is None:
        return []
    if any(func in _VLLM_START for _file, func in frames) and any(
        "vllm/" in f.replace("\\", "/") for f, _ in frames
    ):
        # vLLM's worker start-up (worker.py init_device -> init_worker_distributed_environment's warm-up
        # all_reduce, parallel_state's init_distributed_environment / ensure_model_parallel_initialized): the
        # first collective creates the NCCL communicator, and vLLM's worker record ("Error executing method
        # init_device") means it raised; a hang there prints no stack. NCCL could not create it; its reason
        # (ncclSystemError, an internal or CUDA error) was cut off: RUN363, tier 2.
        return [
            row.event(
                hit,
                f"a {kind} of vLLM's worker start-up ends inside its first collective ({shown}) before its "
                "exception line: the NCCL communicator could not be created (NCCL's reason was cut off)",
                {"frame": shown, "cut": True, "op": op, "stage": "vllm_worker_init"},
                tier=2,
                code=C.NCCL_COMM_NOT_CREATED.code,
                dedupe=(C.NCCL_COMM_NOT_CREATED.code, hit.rank, "cut"),
            )
        ]
    return [
        row.event(
            hit,
            f"a {kind} ends inside a collective ({shown}) before its exception line: the {op} did not "
            "complete (a timeout, or an NCCL error whose line the excerpt cut off)",
            {"frame": shown, "cut": True, "op": op},
            tier=2,
            code=C.WATCHDOG_TIMEOUT.code,
            dedupe=(C.WATCHDOG_TIMEOUT.code, hit.rank, "cut"),
        )
    ]


def _agent_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = [
        ln.text for ln in hit.before(4, same_rank=False) if ln.text.strip() and ln.text.strip() != "```"
    ]
    if not before or not (
        _AGENT_RDZV.search(before[-1]) or _AGENT_START.search(before[-1]) or _LAUNCH_CMD.match(before[-1])
    ):
        return None
    if _AGENT_RDZV.search(before[-1]):
        record = '"Rendezvous\'ing worker group"'
    elif _LAUNCH_CMD.match(before[-1]):
        record = "the command that started it"
    else:
        record = "the agent's start-up records"
    rest = _stack(hit)
    if rest is None or not any(_TORCHRUN.search(t) for t in rest):
        return None
    if any(_AGENT_DONE.search(t) for t in rest):
        return None
    restart = _RESTART.search(" ".join(ln.text for ln in hit.before(12, same_rank=False)))
    facts: dict[str, object] = {"cut": True, "agent_rendezvous": True}
    if restart:
        # The worker failure before it was handled (restarts were left); the job ended when the agent
        # could not form the group again (elastic's closed-rendezvous-on-restart): that is the cause.
        facts["restart"] = True
        facts["attempts_left"] = restart.group(1)
    return [
        row.event(
            hit,
            f"torchrun's agent died in its rendezvous (its traceback starts right after {record} and is cut "
            "before the exception): the agents could not "
            + ("form the group again after a handled worker failure" if restart else "form the group"),
            facts,
            tier=0 if restart else None,
            dedupe=(row.code, "cut"),
        )
    ]


# A C++ backtrace (c10::Error's "frame #N: ...") whose frames are a store read inside ProcessGroupNCCL's
# broadcastUniqueNCCLID: a rank waited in the store for rank 0's NCCL unique id and the read failed (its
# message, "[3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store
# ... got error: Socket Timeout", cut off above the frames). 1.x-2.x: "c10d::PrefixStore::get",
# "c10d::TCPStore::get", "c10d::TCPStore::doWait", "c10d::detail::TCPClient::receiveValue" below
# "c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, ...)". Without a store frame under it
# the failure was rank 0's own ncclGetUniqueId (NCCL's bootstrap), not the store's.
_UID_FRAME = lazy_re.compile(r"frame #\d+: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID\b")
_STORE_FRAME = lazy_re.compile(
    r"frame #\d+: c10d::(?:\w*Store::(?:get|wait|doWait|doGet|check)\b|detail::TCPClient::|tcputil::recv)"
)


def _uid_frames(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_STORE_FRAME.search(ln.text) for ln in hit.before(12, same_rank=True)):
        return None
    if any("ncclUniqueId from" in ln.text for ln in hit.before(40, same_rank=False)):
        return []  # its message is in the paste: store_errors.py reads it there
    return [
        row.event(
            hit,
            "a rank's store read for rank 0's NCCL unique id failed (its backtrace: a store get inside "
            "broadcastUniqueNCCLID; the message was cut off): the rank could not get the id through the "
            "store (rank 0 never published it, the store's host went away, or the wait timed out)",
            {"store_op": "broadcastUniqueNCCLID", "cut": True},
            dedupe=(row.code, "uid_frames"),
        )
    ]


SIGNATURES = (
    Signature(
        "stack cut in the rendezvous",
        lazy_re.compile(
            r'rendezvous\w*\.py", line \d+, in \w+|distributed_c10d\.py", line \d+, in \w+|'
            r'(?:parallel/distributed|distributed/utils)\.py", line \d+, in \w+|'
            r", in (?:_rendezvous|next_rendezvous)\s*$|_initialize_workers|_assign_worker_ranks|_invoke_run|"
            r"\.(?:_rendezvous|next_rendezvous)\(|"
            r"(?:init_process_group|distributed_init|init_distributed\w*|init_dist|TCPStore)\("
        ),
        _cut_in_meeting,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=2,
        anchors=(
            b"rendezvous",
            b"distributed_c10d",
            b"parallel/distributed.py",
            b"distributed/utils.py",
            b"init_process_group(",
            b"distributed_init",
            b"init_dist",
            b"TCPStore(",
            b"_initialize_workers",
            b"_assign_worker_ranks",
            b"_invoke_run",
        ),
        words=(
            "rendezvous",
            "distributed_c10d",
            "parallel/distributed.py",
            "distributed/utils.py",
            "init_process_group(",
            "distributed_init",
            "init_dist",
            "tcpstore(",
            "_initialize_workers",
            "_assign_worker_ranks",
            "_invoke_run",
        ),
    ),
    Signature(
        "agent traceback cut in its rendezvous",
        lazy_re.compile(r"^\s*Traceback \(most recent call last\):\s*$"),
        _agent_cut,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=2,
        anchors=(b"Traceback (most recent call last)",),
        worth=(rb"Traceback \(most recent call last\)",),
        words=("traceback",),
    ),
    Signature(
        "store read for the nccl id, frames only",
        _UID_FRAME,
        _uid_frames,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"broadcastUniqueNCCLID",),
        words=("broadcastuniquencclid",),
    ),
)
parse = gated_reader(SIGNATURES)
