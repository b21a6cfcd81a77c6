"""A Python exception at the end of a traceback, when no category explains it.

It becomes a finding (RUN132) only if it killed its rank; `causality` decides that from the
exit records. Exceptions that are themselves consequences of a distributed failure elsewhere
(the launcher's ChildFailedError, c10d's DistBackendError after an abort, signals) are left to
their own modules.

Autograd's anomaly mode (torch.autograd.set_detect_anomaly / detect_anomaly, python_anomaly_mode.cpp
PyAnomalyMetadata::print_stack, 1.x-2.x) warns just before it re-raises the error a backward node threw:
"UserWarning: Error detected in AccumulateGrad. Traceback of forward call that caused the error:" (or
"... Error detected in MulBackward0. No forward pass information available. Enable detect anomaly during
forward pass for more information."). The forward stack follows, then the exception: a paste cut inside
that stack still shows a rank whose backward raised (RUN132, as the exception it announces), which its
peers' gloo or NCCL records echo.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, Event, Hit
from pgdoctor.diagnose.rules.init_stacks import (
    arg_check_cut,
    collective_cut,
    cut_chunks,
    meeting_cut,
    query_cut,
)
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_EXC = lazy_re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.)*(?P<short>[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit)))"
    r"(?::\s?(?P<msg>.*))?$"
)
# sys.unraisablehook's header (Python 3.8+; "Exception ignored in: <function ...__del__ at 0x..>"), and
# the shutdown variant "Exception ignored on ...": the exception below it did not propagate.
_IGNORED = ("Exception ignored in", "Exception ignored on", "Exception ignored while")
_FRAME = lazy_re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_NOT_ROOT = frozenset(
    {
        "ChildFailedError",
        "SignalException",
        "KeyboardInterrupt",
        "SystemExit",
        "RendezvousClosedError",
        "CalledProcessError",
        "DistBackendError",
        "DistNetworkError",
        "DistStoreError",
        "BrokenPipeError",
        "GeneratorExit",
        # torch.multiprocessing.spawn's wrappers around a child's own failure
        "ProcessRaisedException",
        "ProcessExitedException",
    }
)


def _exception(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("short") in _NOT_ROOT or m.group("short").startswith("nccl"):
        return []  # ncclRemoteError: ... is the second line of torch's NCCL error (nccl_errors)
    frames = []
    seen_traceback = ignored = False
    prev = ""
    for ln in hit.before(40):
        f = _FRAME.match(ln.text)
        if f:
            frames.append(f"{f.group('file')}:{f.group('line')} in {f.group('func')}")
        if "Traceback (most recent call last)" in ln.text:
            seen_traceback = True
            frames = []
            ignored = prev.lstrip().startswith(_IGNORED)
        prev = ln.text
    if ignored:
        return []  # Python's unraisable hook printed it and the program went on (a __del__ at exit)
    msg = (m.group("msg") or "").strip()
    if not (seen_traceback or frames):
        # An exception line without its traceback: not a failure by itself, but the note of last
        # resort when nothing else explains the log (causality turns it into an info finding).
        return [
            row.event(
                hit,
                f"{m.group('type')}: {clip(msg, 160)}",
                {"exception": m.group("type"), "exception_message": msg[:300]},
                tier=3,
                code=C.UNRECOGNISED_ERROR.code,
                dedupe=(C.UNRECOGNISED_ERROR.code, hit.rank, m.group("type"), msg[:100]),
            )
        ]
    facts = {"exception": m.group("type"), "exception_message": msg[:300]}
    if frames:
        facts["frame"] = frames[-1]
    r = hit.rank
    if frames and _STORE_RAISE.search(frames[-1]) and _STORE_FAILURE.fullmatch(m.group("short")):
        # raised by the rendezvous itself (its handlers, the TCPStore constructor under _create_c10d_store,
        # an elastic backend's store): a message no store row knows, but the ranks did not meet
        return [
            row.event(
                hit,
                f"{hit.who(r)} raised {m.group('short')} while creating or reaching the rendezvous store "
                f"({frames[-1]}): {clip(msg, 160)}: the ranks did not meet",
                {**facts, "store_op": "create"},
                code=C.STORE_UNREACHABLE.code,
                dedupe=(C.STORE_UNREACHABLE.code, r, "store_raise"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who(r)} raised {m.group('short')}: {clip(msg, 160)}"
            + (f" at {frames[-1]}" if frames else ""),
            facts,
            dedupe=(row.code, r, m.group("type"), msg[:100]),
        )
    ]


_RENDEZVOUS_FRAME = lazy_re.compile(
    r"distributed/rendezvous\.py:\d+ in \w+|distributed/elastic/rendezvous/\S+:\d+ in \w+|"
    r" in _create_c10d_store$|TCPStore"
)
# The last frame of a traceback raised inside the meeting: rendezvous.py's handlers and store creation (also a
# Windows path), an elastic rendezvous backend's module, the TCPStore made by _create_c10d_store /
# _create_tcp_store.
_STORE_RAISE = lazy_re.compile(
    r"distributed[/\\](?:elastic[/\\]rendezvous[/\\]\w+|rendezvous)\.py:\d+ in \w+$|"
    r" in _create_(?:c10d|tcp)_store$"
)
# The exceptions a store or a rendezvous raises when the ranks cannot meet (a bad address or URL, a refused
# or timed-out connection, the store's and the elastic rendezvous's own classes); an interpreter's error
# raised there (RecursionError, MemoryError, a NameError of a patched module) is the program's bug.
_STORE_FAILURE = lazy_re.compile(
    r"(?:Runtime|Value|Timeout|OS|Socket|Connection\w*|BrokenPipe|Dist\w*|Rendezvous\w*|\w*Store\w*)Error|"
    r"Rendezvous\w*Exception|gaierror"
)
_TRACEBACK = lazy_re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
# The process's GPU set-up: torch's lazy CUDA init and device calls (torch/cuda/__init__.py: _lazy_init runs
# torch._C._cuda_init, where the driver, device visibility and Fabric Manager errors are raised; set_device,
# get_device_properties), and the serving frameworks' worker step that makes them (vLLM's init_device, v0 and
# v1, which the WorkerProc / RayWorkerWrapper start-up calls first).
_DEVICE_INIT_FRAME = lazy_re.compile(
    r"torch/cuda/__init__\.py:\d+ in (?:_lazy_init|set_device|get_device_properties|current_device|"
    r"device_count|_check_capability|init)$|"
    r"vllm/\S*worker\S*\.py:\d+ in init_device$"
)


def _cut_traceback(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """A traceback whose exception line never comes: the paste (or the log) ends inside its frames.
    Not a failure, but not "nothing found" either: an info note that names its last frames."""
    after = hit.after(LINES_AFTER)
    if len(after) >= LINES_AFTER:
        return []  # the window ends before the traceback may: its end is not known
    rest = [ln.text for ln in after if ln.text.strip()]
    if not rest or any(_EXC.match(t) or not (_FRAME.match(t) or t[:1].isspace()) for t in rest):
        return []  # its exception line (or other output) follows: not cut
    frames = [
        f"{f.group('file')}:{f.group('line')} in {f.group('func')}" for f in map(_FRAME.match, rest) if f
    ]
    if not frames:
        return []
    if _RENDEZVOUS_FRAME.search(frames[-1]):
        # cut inside init_process_group's rendezvous (distributed/rendezvous.py's handlers create or reach
        # the TCPStore there; elastic's rendezvous backends): whatever was raised, the ranks did not meet
        return [
            row.event(
                hit,
                f"a traceback ends inside the rendezvous ({frames[-1]}) before its exception line: the "
                "store could not be created or reached",
                {"frame": frames[-1], "cut": True},
                tier=2,
                code=C.RENDEZVOUS_TIMEOUT.code,
                dedupe=(C.RENDEZVOUS_TIMEOUT.code, hit.rank, "cut"),
            )
        ]
    # cut where a frame's source line starts the meeting (init_stacks reads the same chunks; a headed
    # traceback whose innermost frame names no torch file, only the call's keyword arguments)
    chunks = cut_chunks(hit)
    meeting = (meeting_cut(row, hit, chunks) or query_cut(row, hit, chunks)) if chunks else None
    if meeting:
        return meeting
    checked = arg_check_cut(row, hit, chunks) if chunks else []
    if checked:
        return checked  # cut in torch.distributed's check of the call's arguments: refused, not a timeout
    # cut inside a collective: whatever it raised (the watchdog's timeout, an NCCL error), the peers did not
    # complete it with this rank; any failure found elsewhere in the paste is the better record
    cut = [(f.group("file"), f.group("func")) for f in map(_FRAME.match, rest) if f]
    collective = collective_cut(row, hit, cut, frames[-1], "traceback")
    if collective:
        return collective
    if _DEVICE_INIT_FRAME.search(frames[-1]):
        # cut where the process sets up its GPU: what it raised there is the driver's or the device's answer
        # (no driver, none visible, 802, a busy device); any failure the paste shows elsewhere comes first
        return [
            row.event(
                hit,
                f"a traceback ends inside the GPU's set-up ({frames[-1]}) before its exception line: the "
                "process could not initialise its CUDA device (driver, device visibility or device state)",
                {"frame": frames[-1], "cut": True, "reason": "device_init_failed"},
                tier=2,
                code=C.NO_CUDA_DEVICE.code,
                dedupe=(C.NO_CUDA_DEVICE.code, hit.rank, "cut"),
            )
        ]
    return [
        row.event(
            hit,
            f"a traceback ends before its exception line; last frame {frames[-1]}",
            {
                "exception": "traceback cut before its exception line",
                "exception_message": "last frames: " + "; ".join(frames[-3:]),
                "frame": frames[-1],
            },
            tier=3,
            code=C.UNRECOGNISED_ERROR.code,
            dedupe=(C.UNRECOGNISED_ERROR.code, hit.rank, "cut"),
        )
    ]


_ANOMALY = lazy_re.compile(
    r"Error detected in (?P<node>[\w:<>]+)\. (?:Traceback of forward call that caused the error|"
    r"No forward pass information available)"
)


def _anomaly(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    node = m.group("node")
    return [
        row.event(
            hit,
            f"{hit.who()}: autograd's anomaly mode caught an error in the backward of {node} (the exception "
            "it re-raises follows its forward stack): the rank's own training error, not a communication "
            "fault; its peers' waits and timeouts echo it",
            {
                "exception": "autograd error (anomaly mode)",
                "exception_message": clip(m.group(0), 160),
                "node": node,
            },
            tier=0,
            dedupe=(row.code, hit.rank, "anomaly"),
        )
    ]


# The generic anchors and line tests: every exception line, whatever module reads it.
SIGNATURES = (
    Signature(
        "autograd anomaly error",
        _ANOMALY,
        _anomaly,
        C.PYTHON_EXCEPTION.code,
        anchors=(b"Error detected in ",),
        words=("error detected in ",),
    ),
    Signature(
        "python exception",
        _EXC,
        _exception,
        C.PYTHON_EXCEPTION.code,
        anchors=(b"rror", b"xception"),
        worth=(rb"Error\b", rb"Exception\b", rb"Interrupt\b", rb"\berror\b", rb"\bexception\b"),
        anchor_from="the exception's type name (...Error, ...Exception); an Interrupt or Exit line is read "
        "when another anchor is in it",
        examples=(
            "RuntimeError: boom",
            "torch.distributed.DistBackendError: NCCL error",
            "ValueError",
            "SomeException: x",
        ),
    ),
    Signature(
        "traceback cut",
        _TRACEBACK,
        _cut_traceback,
        C.UNRECOGNISED_ERROR.code,
        tier=3,
        anchors=(b"Traceback (most recent call last)",),
        worth=(rb"Traceback \(most recent call last\)",),
    ),
)

parse = gated_reader(SIGNATURES)
