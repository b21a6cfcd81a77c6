"""A symptom that holds only if its communicator never came up: look further down its log.

NCCL's socket connect retries and its interface list naming docker bridges / veth pairs
(rules/net_texts.py), and c10d's warning of one failed attempt to reach the store (rules/rendezvous.py:
every rank reached the store once any communicator of the job came up) are failures only when the log
ends, or the job fails, before this process's communicator finished its init ("Init COMPLETE",
"Connected all rings" / "trees"). A rule sees the 48
lines after its hit (text/scan.py), and a healthy init of 8 GPUs on each of two nodes prints hundreds of
channel and ring lines between the interface list and its "Init COMPLETE". So such a row marks its
event with the process whose init it waits for (facts[UNTIL_UP]: NCCL's "host:pid:" prefix, or "" for
any process), and here the rest of that log is read once per source (bytes in chunks; only lines that
hold one of NCCL's up-markers are looked at): the event stays only if no up-marker of that process
follows it. A failure of the job in between needs nothing here: the symptom's tier puts it behind.
A source that cannot be read again (standard input) keeps its events.

The same reading settles a kernel's own fault with nothing distributed in its window
(rules/gpu_runtime.py, facts[ONE_PROCESS]): it is the job's failure when another file is read with it
(a directory of ranks' logs) or when its log shows a second process anywhere (a rank, NCCL, c10d, a
launcher, an engine's workers: gpu_runtime.DISTRIBUTED_BYTES); in a single process it is that program's
bug and no failure of a distributed job.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pgdoctor.diagnose.event import ONE_PROCESS, UNTIL_UP, Event
from pgdoctor.diagnose.rules.gpu_runtime import DISTRIBUTED_BYTES
from pgdoctor.diagnose.text.reader import Source

# What NCCL prints once a communicator is up (init.cc, graph/connect.cc, 2.4-2.29), and c10d's record of
# a client that reached the store (socket.cpp: "[I socket.cpp:787] [c10d] The client socket has connected
# to [node-1]:29500 on [node-2]:51234."), which settles a failed attempt of its (any process's) client.
_UP_MARKERS = (
    b"Init COMPLETE",
    b"Connected all rings",
    b"Connected all trees",
    b"Init SUCCESS",
    b"client socket has connected to",
    # TensorFlow's between-graph training going on after its session reached every task (monitored_session's
    # "Done running local_init_op." and the step counter's "global_step/sec: 12.3"), which settles gRPC's
    # subchannel connect failures of its start-up (rules/grpc_transport.py)
    b"Done running local_init_op",
    b"global_step/sec",
    # vLLM's engine up after its start-up (v0 llm_engine.py / v1 engine/core.py "init engine (profile,
    # create kv cache, warmup model) took 41.2 seconds", uvicorn's "Application startup complete."), which
    # settles its shared-memory broadcast stall printed during a long compile (rules/vllm_engine.py)
    b"init engine (profile, create kv cache",
    b"Application startup complete",
    # Paddle's TCP store client once its connect succeeded (paddle/fluid/distributed/store/tcp_utils.cc
    # 2.3+, phi/core/distributed/store/tcp_utils.cc: VLOG(0) "Successfully connected to h:p"), which settles
    # that process's "Retry to connect to h:p while the server is not yet listening" (rules/peer_waits.py)
    b"Successfully connected to",
)


def _up_lines(src: Source) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of every line that holds an up-marker, in order; raises OSError when the
    source cannot be read again."""
    seen = 0  # newlines before `carry`
    carry = b""
    for chunk in src.chunks():
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        whole, carry = data[:cut], data[cut:]
        yield from _marked(whole, seen)
        seen += whole.count(b"\n")
    yield from _marked(carry, seen)


def _marked(data: bytes, seen: int) -> Iterator[tuple[int, bytes]]:
    if not data or not any(m in data for m in _UP_MARKERS):
        return
    for k, line in enumerate(data.split(b"\n")):
        if any(m in line for m in _UP_MARKERS):
            yield seen + k + 1, line


def _settled(src: Source, evs: list[Event]) -> set[int]:
    """The ids of `evs` whose process printed an up-marker after them. Reading stops once every
    event is settled (in a healthy log, at the last rank's "Init COMPLETE")."""
    waiting = {id(e): (e.line, str(e.facts[UNTIL_UP]).encode()) for e in evs}
    done: set[int] = set()
    try:
        for no, line in _up_lines(src):
            for key, (at, proc) in list(waiting.items()):
                if no > at and proc in line:
                    done.add(key)
                    del waiting[key]
            if not waiting:
                break
    except OSError:
        return set()
    return done


def _shows_a_job(src: Source) -> bool:
    """Whether the log shows a second process anywhere (True when it cannot be read again: an error, or
    standard input, which a second read finds empty although an event came from it)."""
    carry = b""
    read = 0
    try:
        for chunk in src.chunks():
            read += len(chunk)
            data = carry + chunk
            if DISTRIBUTED_BYTES.search(data):
                return True
            carry = data[-200:]  # a marker cut by the chunk boundary
    except OSError:
        return True
    return read == 0


def settle(events: list[Event], sources: Sequence[Source]) -> list[Event]:
    """`events` without those whose process's communicator came up further down their log, and without
    a single process's own kernel fault."""
    pending: dict[int, list[Event]] = {}
    alone: dict[int, list[Event]] = {}
    for e in events:
        if not 0 <= e.source_index < len(sources):
            continue
        if UNTIL_UP in e.facts:
            pending.setdefault(e.source_index, []).append(e)
        if e.facts.get(ONE_PROCESS) and len(sources) == 1:
            alone.setdefault(e.source_index, []).append(e)
    if not pending and not alone:
        return events
    gone: set[int] = set()
    for index, evs in pending.items():
        gone |= _settled(sources[index], evs)
    for index, evs in alone.items():
        whole = [e for e in evs if e.facts[ONE_PROCESS] == "whole"]
        gone |= {id(e) for e in whole}
        if len(whole) < len(evs) and not _shows_a_job(sources[index]):
            gone |= {id(e) for e in evs}
    return [e for e in events if id(e) not in gone]
