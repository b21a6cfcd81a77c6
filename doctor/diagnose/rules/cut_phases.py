"""What the last frames of a Python stack cut before its exception line tell, where the released corpora show
that they name one root cause (rules/init_stacks.py reads the meeting and the collectives the same way).

Users paste the frames and leave the message out (it is in the thread's title, or the paste ends at the
screen's edge). The stack still says in which phase of the job the process died. Measured over every released
corpus case whose log holds such a cut stack (tests/diagnose/test_r1_families.py has the table), most phases
name no one class: a cut in a DDP construction is an NCCL error of any of three classes, a cut in mp.spawn's
join, in a forward, a backward or an optimizer step, in a Ray get, is anything. Three phases do:

- DeepSpeed's engine putting the model and its ZeRO optimizer on the GPUs (deepspeed/runtime/engine.py's
  _configure_distributed_model, whose `self.module.to(self.device)` moves the whole model;
  _configure_optimizer / _configure_zero_optimizer / _configure_basic_optimizer / _configure_fp16_optimizer /
  _configure_bf16_optimizer; the ZeRO, BF16 and FP16 optimizers' __init__ in runtime/zero/stage_1_and_2.py,
  stage3.py, bf16_optimizer.py, fp16/fused_optimizer.py and unfused_optimizer.py, which allocate the fp32
  master copies and the optimizer states, and their _create_* / _setup_* / initialize_optimizer_states
  steps) and Accelerate's prepare (accelerator.py's prepare, _prepare_one, prepare_model, _prepare_deepspeed,
  which moves the model to its device and wraps it): the innermost frame is one of them, its source line no
  communication call (_broadcast_model, init_distributed, a barrier: those are the network's) and no check (an
  assert or raise of the config). It ran out of GPU memory: RUN101, tier 2 (any failure found elsewhere in
  the paste is the cause). Rich's tracebacks (rich.traceback, installed by Accelerate's, DeepSpeed's and
  typer's pretty errors) draw the same frames in a box: "│ /.../deepspeed/runtime/engine.py:1146 in  │", the
  function on the line or the next one ("│ _configure_distributed_model  │"), the failing source line marked
  "❱" ("│ ❱ 297 │   self._configure_distributed_model(model)  │"): read the same way where the box's last
  frame is such a set-up frame and no exception line follows it.
- A distributed launch on native Windows or macOS: the stack is a launcher's (torchrun's or
  torch.distributed.launch's agent: run.py, launcher/api.py, elastic/, torchrun.exe; torch.multiprocessing's
  spawn / start_processes, or a frame whose source line calls them; accelerate launch) under Windows or macOS
  paths (C:\\..., D:/..., /Users/..., /opt/homebrew/...), or any stack after torchrun's own "NOTE: Redirects
  are currently not supported in Windows or MacOs." (redirects.py prints it on those two platforms only).
  PyTorch has no NCCL backend there and the Windows wheels no libuv store: RUN570, tier 2. A stack of the
  meeting (init_stacks) or of a collective is left to those readings.
- DDP's reducer check: the innermost source line is the reducer's prepare_for_backward / prepare_for_forward,
  or 2.0+'s `inputs, kwargs = self._pre_forward(*inputs, **kwargs)` in torch/nn/parallel/distributed.py's
  forward (its body raises "Expected to have finished reduction in the prior iteration"): RUN202, tier 2
  (every released stack that reached either was that error).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, Event, Hit
from pgdoctor.diagnose.rules.init_stacks import chunk_frame, cut_chunks, meeting_cut
from pgdoctor.diagnose.rules.rdzv_values import _EXC_LINE, _STACK_REST
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.dist_calls import cut_in_collective
from pgdoctor.model import lazy_re

# --- DeepSpeed's and Accelerate's set-up of the model and its optimizer on the GPUs -------------------------
_SETUP_FRAME = lazy_re.compile(
    r"deepspeed/runtime/engine\.py in (?:_configure_distributed_model|_configure_optimizer|"
    r"_configure_zero_optimizer|_configure_basic_optimizer|_configure_fp16_optimizer|"
    r"_configure_bf16_optimizer)$|"
    r"deepspeed/runtime/(?:zero/stage(?:_1_and_2|3|2|1)?|bf16_optimizer|fp16/(?:fused|unfused)_optimizer)"
    r"\.py in (?:__init__|_create_\w+|_setup_\w+|initialize_optimizer_states)$|"
    r"accelerate/accelerator\.py in (?:prepare|_prepare_one|prepare_model|_prepare_deepspeed|<genexpr>)$"
)
# a source line that communicates (the engine's parameter broadcast, DeepSpeed's process group start, a
# collective: an NCCL or store failure, not memory), or that checks and raises (an assert of the config, e.g.
# "zero stage 1 requires an optimizer": the user's setting, not memory)
_NOT_MEMORY_SOURCE = lazy_re.compile(
    r"broadcast|init_distributed|init_process_group|barrier|all_reduce|all_gather|reduce_scatter|new_group|"
    r"^(?:assert|raise)\b"
)
# decorators' wrappers that call through (DeepSpeed's nvtx instrument, c10d_logger)
_THROUGH = lazy_re.compile(r"deepspeed/utils/nvtx\.py$|torch/distributed/c10d_logger\.py$")


def _innermost(chunks: list[str]) -> tuple[str, str, str]:
    frames = [chunk_frame(c) for c in chunks]
    while len(frames) > 1 and _THROUGH.search(frames[-1][0]):
        frames.pop()
    return frames[-1]


def _setup_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    chunks = cut_chunks(hit)
    if chunks is None:
        return None
    file, func, source = _innermost(chunks)
    if not _SETUP_FRAME.search(f"{file} in {func}") or _NOT_MEMORY_SOURCE.search(source):
        return None
    where = f"{file.rsplit('/', 1)[-1]} in {func}"
    framework = "Accelerate's prepare" if "accelerate/" in file else "DeepSpeed's engine set-up"
    return [
        row.event(
            hit,
            f"a stack ends inside {framework} ({where}) before its exception line: the model and its "
            "optimizer states are being placed on the GPUs there, and what fails there is GPU memory (the "
            "released corpora: every such cut was an out-of-memory)",
            {"frame": where, "cut": True, "phase": "model_and_optimizer_setup"},
            dedupe=(row.code, hit.rank, "cut setup"),
        )
    ]


# --- the same set-up frames in rich's boxed traceback ---------------------------------------------------
_RICH_FRAME = lazy_re.compile(r"^(?P<file>\S+\.py):(?P<line>\d+) in\b\s*(?P<func>[\w<>]*)$")
_RICH_FUNC = lazy_re.compile(r"^(?P<func>[\w<>]+)$")
_RICH_SOURCE = lazy_re.compile(r"^❱\s*\d+\s*│(?P<src>.*)$")
# a box's rows: the reader joins rows of one width as a wrapped line ("│ a ││ b │"), so split them again (a
# source row's guides, "❱ 297 │   │   x = f()", stay in it)
_ROW_EDGE = lazy_re.compile(r"││|^\s*[│╭╰]|│\s*$")
# an exception line after the box (rich prints it under "╰───╯"): the paste is not cut
_EXC_AFTER = lazy_re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt|Exit)\b(?::|\s*$)")


def _rich_setup_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frame: Optional[tuple[str, str]] = None
    source = ""
    cells: list[str] = []
    for ln in [hit.line, *hit.after(400, same_rank=False)]:
        if "│" not in ln.text and _EXC_AFTER.match(ln.text):
            return None  # the exception line is there: its own reading
        cells += [c.strip() for c in _ROW_EDGE.split(ln.text) if c.strip()]
    for i, cell in enumerate(cells):
        f = _RICH_FRAME.match(cell)
        if f:
            func = f.group("func")
            nxt = _RICH_FUNC.match(cells[i + 1]) if not func and i + 1 < len(cells) else None
            frame, source = (
                (f.group("file").replace("\\", "/"), func or (nxt.group("func") if nxt else "")),
                "",
            )
        elif src := _RICH_SOURCE.match(cell):
            source = src.group("src").replace("│", " ").strip()
    if (
        frame is None
        or not _SETUP_FRAME.search(f"{frame[0]} in {frame[1]}")
        or _NOT_MEMORY_SOURCE.search(source)
    ):
        return None
    where = f"{frame[0].rsplit('/', 1)[-1]} in {frame[1]}"
    framework = "Accelerate's prepare" if "accelerate/" in frame[0] else "DeepSpeed's engine set-up"
    return [
        row.event(
            hit,
            f"a boxed (rich) stack ends inside {framework} ({where}) before its exception line: the model "
            "and its optimizer states are being placed on the GPUs there, and what fails there is GPU memory",
            {"frame": where, "cut": True, "phase": "model_and_optimizer_setup", "format": "rich"},
            dedupe=(row.code, hit.rank, "cut setup"),
        )
    ]


# --- a distributed launch on native Windows or macOS -------------------------------------------------------
_PLATFORM_PATH = lazy_re.compile(
    r"^(?:[A-Za-z]:/|/Users/|/opt/homebrew/|/Library/Frameworks/Python\.framework/)"
)
_LAUNCHER_FILE = lazy_re.compile(
    r"torch/distributed/(?:run|launch)\.py$|torch/distributed/launcher/api\.py$|torch/distributed/elastic/|"
    r"/torchrun(?:\.exe|-script\.py)?(?:/__main__\.py)?$|torch/multiprocessing/spawn\.py$|"
    r"accelerate/commands/(?:launch|accelerate_cli)\.py$"
)
_LAUNCHER_SOURCE = lazy_re.compile(r"\b(?:spawn|start_processes)\(")
_NOTE = "Redirects are currently not supported in Windows or MacOs"


def _platform_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    chunks = cut_chunks(hit)
    if chunks is None:
        return None
    frames = [chunk_frame(c) for c in chunks]
    noted = any(_NOTE in ln.text for ln in [*hit.before(40, same_rank=False), hit.line])
    on_platform = noted or any(_PLATFORM_PATH.search(f) for f, _fn, _s in frames)
    launcher = noted or any(_LAUNCHER_FILE.search(f) for f, _fn, _s in frames)
    launcher = launcher or bool(_LAUNCHER_SOURCE.search(frames[-1][2]))
    if not (on_platform and launcher):
        return None
    if meeting_cut(row, hit, chunks) or cut_in_collective([(f, fn) for f, fn, _s in frames]):
        return None  # the meeting's or a collective's (init_stacks reads them)
    where = f"{frames[-1][0].rsplit('/', 1)[-1]} in {frames[-1][1]}"
    platform = "Windows or macOS (torchrun's note)" if noted else "native Windows or macOS"
    return [
        row.event(
            hit,
            f"a distributed launch on {platform} died before its exception line (last frame {where}): "
            "PyTorch has no NCCL backend there, and the Windows wheels no libuv store",
            {"frame": where, "cut": True, "platform": "windows_or_macos", "torchrun_note": noted},
            dedupe=(row.code, "cut platform"),
        )
    ]


# --- DDP's reducer check that the previous iteration's reduction finished, torch 1.0-1.6 ----------------
# DistributedDataParallel's forward asks its reducer whether the last backward reduced every bucket: 1.0-1.6
# `self.reducer.prepare_for_backward(list(_find_tensors(output)))` at the end of forward (1.4-1.6 without
# find_unused_parameters: `self.reducer.prepare_for_backward([])`), and `self.reducer.prepare_for_forward()`
# in 2.x's _pre_forward. reducer.cpp's error there is ensure_prior_reduction_finished's "Expected to have
# finished reduction in the prior iteration before starting a new one" (parameters that got no gradient: the
# ranks' reductions no longer line up). A stack whose innermost source line is that call, cut before its
# exception line, is that error (every such stack in the released corpora was). 1.7+'s
# `self.reducer._rebuild_buckets()` is rdzv_values' row (tier 1); this one says the same of the older call.
_REDUCER_CALL = lazy_re.compile(
    r"\breducer\.(?:prepare_for_backward|prepare_for_forward)\(|\bself\._pre_forward\("
)
# 2.0+'s DistributedDataParallel.forward calls `inputs, kwargs = self._pre_forward(*inputs, **kwargs)`, whose
# body runs that check (prepare_for_forward, then `self.reducer._rebuild_buckets()`, where the error is
# raised); a paste cut right after forward's frame is that error too (every released stack that reached
# _pre_forward was). Only DDP's own frame: FSDP's `_pre_forward(self, handle, ...)` (its unshard's
# all-gather) and a user's module of that name say nothing of the reducer.
_DDP_FILE = lazy_re.compile(r"torch/nn/parallel/distributed\.py$")


def _reducer_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    chunks = cut_chunks(hit)
    if chunks is None:
        return None
    file, func, source = chunk_frame(chunks[-1])
    call = _REDUCER_CALL.search(source)
    if call is None:
        return None  # the stack goes on below the reducer's call: it died elsewhere
    if call.group(0).startswith("self.") and not _DDP_FILE.search(file):
        return None  # a _pre_forward of another wrapper's or of the user's
    where = f"{file.rsplit('/', 1)[-1]} in {func}"
    return [
        row.event(
            hit,
            f"a stack ends at DDP's reducer check ({where}: {call.group(0).rstrip('(')}) before its "
            "exception line: there the reducer raises only that the previous iteration's gradient "
            "reduction did not finish (parameters that received no gradient)",
            {"frame": where, "cut": True, "phase": "ddp_reducer_check"},
            dedupe=(row.code, hit.rank, "cut reducer"),
        )
    ]


# --- DDP replicating its module over several GPUs in one process, torch 1.0-1.8 ---------------------------
# DistributedDataParallel's constructor (torch/nn/parallel/distributed.py __init__, _ddp_init_helper since
# 1.1) calls `replicate(self.module, self.device_ids, detach=True)` only when it was given (or defaulted to:
# device_ids=None with a CUDA module meant every visible GPU until 1.9) more than one device: the single-
# process multi-device mode. replicate.py's _broadcast_coalesced_reshape then copies the parameters with
# comm.broadcast_coalesced, which raises "all tensors must be on devices[0]" when the module sits on another
# GPU than device_ids[0] (model.cuda() on rank 1 under device_ids [0..7]). A stack cut there is a launch of
# one process per GPU that left device_ids unset (mmdetection 1.x's MMDistributedDataParallel(model.cuda()),
# every such stack in the released corpora): the device binding, not NCCL.
_DDP_CTOR = lazy_re.compile(r"torch/nn/parallel/distributed\.py in (?:__init__|_ddp_init_helper)$")
_REPLICATE_FILE = lazy_re.compile(
    r"torch/nn/parallel/(?:replicate|comm|_functions)\.py$|torch/cuda/comm\.py$"
)


def _replicate_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    chunks = cut_chunks(hit)
    if chunks is None:
        return None
    frames = [chunk_frame(c) for c in chunks]
    if not _REPLICATE_FILE.search(frames[-1][0]):
        return None  # the stack goes on below the replication: it died elsewhere
    if not any(_DDP_CTOR.search(f"{file} in {func}") for file, func, _s in frames):
        return None  # nn.DataParallel's own replicate in its forward: several GPUs in one process by design
    where = f"{frames[-1][0].rsplit('/', 1)[-1]} in {frames[-1][1]}"
    return [
        row.event(
            hit,
            f"a stack ends in DistributedDataParallel's constructor replicating the module over several GPUs "
            f"of one process ({where}) before its exception line: DDP was given (or defaulted to) more than "
            "one device_id; with one process per GPU, move the model to cuda:<local_rank> and pass "
            "device_ids=[local_rank]",
            {"frame": where, "cut": True, "phase": "ddp_replicate", "usage_check": "device"},
            dedupe=(row.code, hit.rank, "cut replicate"),
        )
    ]


# The same call in rich's boxed traceback (transformers', accelerate's): the frame's head
# "...distributed.py:1519 in forward" above its "❱ 1519 │ ... self._pre_forward(*inputs, **kwargs)" line,
# nothing after it but the box, blank or context lines (rdzv_values reads `self.reducer._rebuild_buckets()`
# in such a box the same way).
_PRE_FORWARD = lazy_re.compile(r"\bself\._pre_forward\(\*")
_DDP_FORWARD_HEAD = lazy_re.compile(r"torch[\\/]nn[\\/]parallel[\\/]distributed\.py:\d+ in forward\b")
_FRAME_HEAD = lazy_re.compile(r'File "|\S+\.py:\d+ in \w+')


def _boxed_pre_forward(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(LINES_AFTER, same_rank=False)
    if hit.lines[-1].no - hit.line.no >= LINES_AFTER:
        return None
    if any(_EXC_LINE.search(ln.text) or not _STACK_REST.search(ln.text) for ln in after):
        return None  # the exception line is there, or other output follows
    if any(_FRAME_HEAD.search(ln.text) for ln in after):
        return None  # a deeper frame follows: it died below
    if not any(_DDP_FORWARD_HEAD.search(ln.text) for ln in hit.before(4, same_rank=False)):
        return None  # not DDP's own forward
    return [
        row.event(
            hit,
            "a stack ends at DDP's forward calling _pre_forward (torch/nn/parallel/distributed.py) before "
            "its exception line: there the reducer raises only that the previous iteration's gradient "
            "reduction did not finish (parameters that received no gradient)",
            {"frame": "distributed.py in forward", "cut": True, "phase": "ddp_reducer_check"},
            dedupe=(row.code, hit.rank, "cut reducer"),
        )
    ]


_TRACEBACK = lazy_re.compile(r"Traceback \(most recent call last\):\s*$")

SIGNATURES = (
    Signature(
        "stack cut at ddp's reducer check",
        _REDUCER_CALL,
        _reducer_cut,
        C.DDP_UNFINISHED_REDUCTION.code,
        tier=2,
        anchors=(
            b"reducer.prepare_for_backward(",
            b"reducer._rebuild_buckets(",
            b"reducer.prepare_for_forward(",
            b"self._pre_forward(",
        ),
        words=("reducer.", "_pre_forward("),
        examples=(
            "    self.reducer.prepare_for_backward([])",
            "    self.reducer.prepare_for_backward(list(_find_tensors(output)))",
            "        self.reducer.prepare_for_forward()",
            "    inputs, kwargs = self._pre_forward(*inputs, **kwargs)",
        ),
    ),
    Signature(
        "stack cut in ddp's replication over several gpus",
        lazy_re.compile(r'nn[\\/]parallel[\\/]replicate\.py", line \d+, in \w+'),
        _replicate_cut,
        C.C10D_INVALID_USAGE.code,
        tier=2,
        anchors=(b"parallel/replicate.py", b"parallel\\replicate.py"),
        words=("replicate.py",),
        anchor_from="the frame's path: torch/nn/parallel/replicate.py (with / or \\)",
        examples=(
            '  File "/usr/lib/python3.7/site-packages/torch/nn/parallel/replicate.py", line 96, in replicate',
        ),
    ),
    Signature(
        "boxed stack cut at ddp's _pre_forward",
        _PRE_FORWARD,
        _boxed_pre_forward,
        C.DDP_UNFINISHED_REDUCTION.code,
        tier=2,
        anchors=(b"self._pre_forward(*",),
        words=("_pre_forward(",),
    ),
    Signature(
        "stack cut in deepspeed's or accelerate's gpu set-up",
        lazy_re.compile(
            r'deepspeed[\\/]runtime[\\/]engine\.py", line \d+, in _configure_|'
            r'deepspeed[\\/]runtime[\\/]zero[\\/]stage\w*\.py", line \d+, in \w+|'
            r'deepspeed[\\/]runtime[\\/](?:bf16_optimizer|fp16[\\/]\w+)\.py", line \d+, in \w+|'
            r'accelerate[\\/]accelerator\.py", line \d+, in (?:prepare|_prepare|<genexpr>)'
        ),
        _setup_cut,
        C.CUDA_OOM.code,
        tier=2,
        anchors=(
            b"deepspeed/runtime/engine.py",
            b"deepspeed\\runtime\\engine.py",
            b"deepspeed/runtime/zero/stage",
            b"deepspeed\\runtime\\zero\\stage",
            b"deepspeed/runtime/bf16_optimizer.py",
            b"deepspeed\\runtime\\bf16_optimizer.py",
            b"deepspeed/runtime/fp16/",
            b"deepspeed\\runtime\\fp16\\",
            b"accelerate/accelerator.py",
            b"accelerate\\accelerator.py",
        ),
        words=("engine.py", "zero", "accelerator.py", "bf16_optimizer", "fp16"),
        anchor_from="the frame's path: deepspeed/runtime/engine.py, deepspeed/runtime/zero/stage*.py, "
        "deepspeed/runtime/bf16_optimizer.py, deepspeed/runtime/fp16/*.py, accelerate/accelerator.py "
        "(with / or \\)",
        examples=(
            '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1505, in '
            "_configure_zero_optimizer",
            '  File "C:\\py\\lib\\site-packages\\accelerate\\accelerator.py", line 1030, in _prepare_one',
            '  File "/usr/lib/python3/dist/deepspeed/runtime/bf16_optimizer.py", line 97, in __init__',
        ),
    ),
    Signature(
        "rich stack cut in deepspeed's or accelerate's gpu set-up",
        lazy_re.compile(
            r"│\s*\S*(?:deepspeed[\\/]runtime[\\/](?:engine|zero[\\/]stage\w*|bf16_optimizer|fp16[\\/]\w+)|"
            r"accelerate[\\/]accelerator)\.py:\d+ in\b"
        ),
        _rich_setup_cut,
        C.CUDA_OOM.code,
        tier=2,
        anchors=(
            b"deepspeed/runtime/engine.py",
            b"deepspeed/runtime/zero/stage",
            b"deepspeed/runtime/bf16_optimizer.py",
            b"deepspeed/runtime/fp16/",
            b"accelerate/accelerator.py",
        ),
        words=("engine.py", "zero", "accelerator.py", "bf16_optimizer", "fp16"),
        anchor_from="the frame's path in rich's box: deepspeed/runtime/engine.py, zero/stage*.py, "
        "bf16_optimizer.py, fp16/*.py, accelerate/accelerator.py",
        examples=(
            "│ /usr/lib/python3.10/site-packages/deepspeed/runtime/engine.py:1146 in   │",
            "│ /opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py:1202 in prepare │",
        ),
    ),
    Signature(
        "stack cut in a windows launcher frame",
        # a paste that starts below the "Traceback" header: a launcher's frame under a Windows path
        lazy_re.compile(
            r'File "[A-Za-z]:[^"]*(?:torchrun\.exe|[\\/]distributed[\\/](?:run|launch)\.py|'
            r"[\\/]launcher[\\/]api\.py|[\\/]multiprocessing[\\/]spawn\.py)"
        ),
        _platform_cut,
        C.DIST_LAUNCH_ON_WINDOWS_OR_MACOS.code,
        tier=2,
        anchors=(
            b"torchrun.exe",
            b"\\distributed\\run.py",
            b"\\distributed\\launch.py",
            b"\\launcher\\api.py",
            b"\\multiprocessing\\spawn.py",
        ),
        words=("torchrun.exe", "run.py", "launch.py", "api.py", "spawn.py"),
        anchor_from="the frame's Windows path: torchrun.exe, torch\\distributed\\run.py or launch.py, "
        "launcher\\api.py, torch\\multiprocessing\\spawn.py",
        examples=(
            '  File "C:\\Users\\dev\\envs\\t\\Scripts\\torchrun.exe\\__main__.py", line 7, in <module>',
            '  File "D:\\conda\\lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 246, in spawn',
        ),
    ),
    Signature(
        "traceback cut in a launch on windows or macos",
        _TRACEBACK,
        _platform_cut,
        C.DIST_LAUNCH_ON_WINDOWS_OR_MACOS.code,
        tier=2,
        anchors=(b"Traceback (most recent call last)",),
        worth=(rb"Traceback \(most recent call last\)",),
        words=("traceback",),
    ),
)
parse = gated_reader(SIGNATURES)
