"""Reports of a collective that the ranks did not complete together, quoted without the head that the other
modules read them by.

Formats, read at their source:
- The flight recorder analyzer (torch/distributed/flight_recorder/components/types.py, 2.5-2.9): MatchInfo's
  "Error type: COLLECTIVE_STATE_MISMATCH, Expected state: 'scheduled' does not match found state:
  'completed'" after "Culprit rank 1; " in its "error msg:" line. The ranks ran the same collective (type,
  sizes and dtypes matched: those are checked first) but one had completed it while another had only
  scheduled or started it: the job hung in that collective, a timeout (RUN283), not a mismatch (the type /
  size / dtype culprits are desync_reports'). Tier 1: the report's other culprits and the watchdog say more.
- ProcessGroupNCCL's WorkNCCL::printTraceback (2.5+, ProcessGroupNCCL.cpp, and 2.8+ ProcessGroupInterface in
  c10d's shared header), called by the watchdog when a work failed (a timeout, or an NCCL error it caught):
  "Stack trace of the failed collective: " then the Python frames of the call, one per line, "#0 broadcast
  from /usr/.../torch/distributed/distributed_c10d.py:2968". A paste of this block alone still says a
  collective of this rank failed in the watchdog: RUN151 at tier 1 (the watchdog's own record, or an NCCL
  error, is the better record when shown). Its "Stack trace of the failed collective not found, potentially
  because FlightRecorder is disabled" is chatter after the record (test_torch_message_audit) and is not read.
- Horovod's stall inspector (horovod/common/stall_inspector.cc, 0.20+): the table under "Missing ranks:",
  one line per rank with the tensors it has not submitted, "3: [global_tensor_horovod_sum_have_data/
  HorovodAllreduce_globals_horovod_have_more_data_placeholder_0, ...]" ("0!: [...]" past the shutdown
  time), pasted without the report's head (mismatch.py reads the report whole): the ranks submitted
  different tensors (RUN201, tier 1). PyTorch's names: "1: [allreduce.noname.12, allreduce.fc.weight]".
- fairscale's ShardedDataParallel (fairscale/nn/data_parallel/sharded_ddp.py, 0.1-0.3) at the start of the
  next backward: "AssertionError: A bucket failed to be sent, probably unused parameters.Either remove the
  unused parameter or de-activate ShardedDDP buckets -set reduce_buffer_size to 0-": a parameter got no
  gradient, so its bucket was never reduced, as DDP's unused-parameter error (RUN202).
- Megatron-LM core's DDP (megatron/core/distributed/param_and_grad_buffer.py, grad_buffer.py before it,
  2023-2025, finish_grad_sync with --overlap-grad-reduce): "AssertionError: Communication call has not been
  issued for this bucket (97/98 params have grad available)": a bucket's reduce is issued by the backward
  hooks once every parameter in it has its gradient; one that requires grad but took no part in the forward
  (a new layer not called, a tower a batch did not use) never gets it (RUN202; without the overlap the
  reduce is issued for every bucket).
- Words that say some ranks left the loop before the others, in a trainer's own report or a thread's
  title: CosyVoice's join wrapper ("WARNING Rank 1 model.join() exit failed, some ranks may have exited
  early: Rank 1 successfully reached monitoredBarrier, but received errors ...", the gloo monitored barrier it
  calls at every step), "One rank finishes early and the others hang in all_reduce", "其他卡已经提前结束".
  Ranks given different numbers of batches: the one that ran out left while the others wait in the
  gradient all-reduce (or the join's barrier) it never joins, DDP join's "exhausted inputs" in words
  (RUN201, read before the monitored barrier's timeout that is its consequence; tier 1 in a title). A rank
  that left because it died says so (an exit code, a signal, killed, crashed, OOM): that line is not read
  here, nor a question ("How to stop all ranks when one of the GPUs finishes early?").
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _ASKING, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_FR_STATE = lazy_re.compile(
    r"Culprit rank (\d+); Error type: COLLECTIVE_STATE_MISMATCH"
    r"(?:, Expected state: '(\w+)' does not match found state: '(\w+)')?"
)
_FR_SEQ = lazy_re.compile(r"Collective sequence number: (\d+) has errors")
_FR_OP = lazy_re.compile(r"^\s*collective: (?:nccl|xccl|gloo):(\w+)")


def _fr_state(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"source": "flight_recorder_analyzer", "ranks": [int(m.group(1))]}
    if m.group(2):
        facts["states"] = {"expected": m.group(2), "found": m.group(3)}
    for ln in reversed(hit.before(12, same_rank=False)):
        seq, op = _FR_SEQ.search(ln.text), _FR_OP.search(ln.text)
        if op and "op" not in facts:
            facts["op"] = op.group(1)
        if seq:
            facts["seq"] = int(seq.group(1))
            break
    at = f" {facts['op']}" if "op" in facts else ""
    at += f" (sequence number {facts['seq']})" if "seq" in facts else ""
    states = f" ('{m.group(2)}' on one, '{m.group(3)}' on the other)" if m.group(2) else ""
    return [
        row.event(
            hit,
            f"the flight recorder analyzer: the ranks were in the same collective{at} but rank {m.group(1)} "
            f"was in another state{states}: the collective did not complete on every rank (the job hung "
            "there; find the rank that never finished it)",
            facts,
            rank=int(m.group(1)),
            dedupe=(row.code, "fr_state", facts.get("seq")),
        )
    ]


_FAILED_TRACE = lazy_re.compile(r"Stack trace of the failed collective:")
_TRACE_OP = lazy_re.compile(r"^\s*#0 (\w+) from \S*distributed_c10d\.py:\d+")


def _failed_trace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "watchdog_failed_collective_trace"}
    for ln in hit.after(3, same_rank=False):
        op = _TRACE_OP.search(ln.text)
        if op:
            facts["op"] = op.group(1)
            break
    what = f"its {facts['op']}" if "op" in facts else "a collective"
    return [
        row.event(
            hit,
            f"{hit.who()}: the NCCL watchdog printed the stack of {what} that failed on this rank: the "
            "collective did not complete (a timeout unless an NCCL error is shown beside it)",
            facts,
            dedupe=(row.code, "failed_collective_trace"),
        )
    ]


# One table line of the stall report: "3: [name, name]" (the line normaliser may have read "3: " as a rank
# prefix), "0!: [...]"; the names are TensorFlow / Keras op names that hold Horovod's op.
# PyTorch's Horovod names its ops "<op>.<name>" or "<op>.noname.<handle>" (horovod/torch/mpi_ops_v2.cc
# GetOpName: "allreduce.noname.12", DistributedOptimizer's "allreduce.fc.weight").
_HVD_ROW = lazy_re.compile(
    r"^\s*(?:(?P<rank>\d+)!?: )?(?!\[\[)\[(?:[^\]\s,]*Horovod"
    r"(?:Allreduce|Allgather|Broadcast|Alltoall|Reducescatter|ReduceScatter)_[^\]]*|"
    r"(?P<torch>(?:allreduce|allgather|broadcast|alltoall|reducescatter)\.[\w.]+)(?:, [^\]]*)?)\]\s*$"
)


def _hvd_row(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank")) if m.group("rank") else hit.line.rank
    if m.group("torch") and (rank is None or m.group("torch").endswith(".py")):
        return None  # a bare "[allreduce.x]" is no table row without the rank before it
    facts: dict[str, Any] = {"kind": "horovod_stall", "framework": "horovod"}
    if rank is not None:
        facts["suspect_ranks"] = facts["missing_ranks"] = [rank]
    who = f"; rank {rank} has not submitted these" if rank is not None else ""
    return [
        row.event(
            hit,
            "Horovod's stall inspector: some ranks submitted collectives that the others did not "
            f"(different tensors, or a subset of ranks reached the collective){who}",
            facts,
            rank=rank,
            dedupe=(row.code, "horovod_stall"),
        )
    ]


_SHARDED_BUCKET = lazy_re.compile(r"A bucket failed to be sent, probably unused parameters")


def _sharded_bucket(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "fairscale ShardedDDP: a gradient bucket was never reduced because some parameters got no "
            "gradient in the backward (unused parameters): remove them, or set reduce_buffer_size=0",
            {"kind": "sharded_ddp_unused_parameters", "framework": "fairscale"},
            dedupe=(row.code, "sharded_ddp_bucket"),
        )
    ]


# (a title keeps the sentence without the counts)
_MEGATRON_BUCKET = lazy_re.compile(
    r"Communication call has not been issued for this bucket"
    r"(?: \((?P<have>\d+)/(?P<all>\d+) params have grad available\))?"
)


def _megatron_bucket(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "bucket_not_reduced", "framework": "megatron"}
    counts = ""
    if m.group("all"):
        facts.update(params_with_grad=int(m.group("have")), params_in_bucket=int(m.group("all")))
        counts = f" ({m.group('have')} of its {m.group('all')} parameters got a gradient)"
    return [
        row.event(
            hit,
            f"{hit.who()}: Megatron's overlapped gradient reduce was never issued for a bucket{counts}: some "
            "parameters that require grad took no part in the forward (a layer defined but not called, a "
            "branch a batch skipped); use them, freeze them, or drop --overlap-grad-reduce",
            facts,
            dedupe=(row.code, "megatron_bucket"),
        )
    ]


# some ranks left the loop first: a rank word (not "process" or "server": "server exited early" is a crash
# report), then exited / finished / left and early / first / before the others
_LEFT_EARLY = lazy_re.compile(
    r"(?i)\b(?:some|one|other|a|several|\d+|the other)\s+(?:of\s+(?:the\s+)?)?(?:ranks?|gpus?|replicas?)\s+"
    r"(?:may\s+|might\s+|must\s+)?(?:have\s+|has\s+|had\s+)?(?:already\s+)?"
    r"(?:exited|exits|finished|finishes|left|leaves|quit|quits|ended|ends|returned|returns|stopped|stops)\s+"
    r"(?:the\s+(?:loop|epoch|training|data\s?loader)\s+)?(?:early|earlier|first|prematurely|before\s+the\s+others)"
    r"\b|(?:其他|其余|有的|某些|部分|某张|某个)(?:卡|rank|进程|gpu|GPU)[^，。,.;；]{0,6}(?:提前|先)(?:结束|退出|跑完)"
)
# a rank that left because it died: that failure's own row reads it
_DIED = lazy_re.compile(
    r"(?i)exit ?code|exitcode|return code|\bsignal|\bsig(?:kill|segv|abrt|term|bus)\b|\bkill\w*|crash\w*|"
    r"\boom\b|out of memory|segfault|core dump|崩溃|被杀"
)


def _left_early(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _DIED.search(hit.text) or _ASKING.match(hit.text) or hit.text.rstrip().endswith(("?", "？")):
        return None
    return [
        row.event(
            hit,
            f'{hit.who()}: some ranks left the loop before the others ("{m.group(0)}"): the ranks were given '
            "different numbers of batches, and the others wait in a collective the ranks that left never "
            "join (give every rank the same number of batches: drop_last, DistributedSampler, or DDP's "
            "join())",
            {"kind": "uneven_inputs", "inferred_from": "words"},
            # a trainer's own report of why its barrier failed is the cause of the timeout beside it; a
            # person's words (a title) stay behind any program's record
            tier=1 if _title(hit) else 0,
            dedupe=(row.code, "uneven_inputs"),
        )
    ]


SIGNATURES = (
    Signature(
        "flight recorder analyzer state mismatch",
        _FR_STATE,
        _fr_state,
        C.FR_NOT_COMPLETED.code,
        tier=1,
        anchors=(b"COLLECTIVE_STATE_MISMATCH",),
    ),
    Signature(
        "watchdog stack of the failed collective",
        _FAILED_TRACE,
        _failed_trace,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"Stack trace of the failed collective:",),
    ),
    Signature(
        "horovod stall table line",
        _HVD_ROW,
        _hvd_row,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(
            b"HorovodAllreduce_",
            b"HorovodAllgather_",
            b"HorovodBroadcast_",
            b"HorovodAlltoall_",
            b"HorovodReducescatter_",
            b"HorovodReduceScatter_",
            b"[allreduce.",
            b"[allgather.",
            b"[broadcast.",
            b"[alltoall.",
            b"[reducescatter.",
        ),
    ),
    Signature(
        "fairscale sharded ddp bucket not sent",
        _SHARDED_BUCKET,
        _sharded_bucket,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(b"A bucket failed to be sent",),
    ),
    Signature(
        "megatron bucket reduce never issued",
        _MEGATRON_BUCKET,
        _megatron_bucket,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(b"Communication call has not been issued for this bucket",),
    ),
    Signature(
        "ranks left the loop early in words",
        _LEFT_EARLY,
        _left_early,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(
            b" early",
            b" earlier",
            b" first",
            b"prematurely",
            b"before the others",
            "提前".encode(),
            "先结束".encode(),
            "先退出".encode(),
            "先跑完".encode(),
        ),
        worth=(
            rb"(?i:\b(?:ranks?|gpus?|replicas?)\s+(?:\w+\s+){0,3}(?:exit|finish|left|leave|quit|end|return|stop)\w*"
            rb"\s+(?:\w+\s+){0,2}(?:early|earlier|first|prematurely|before the others))",
            "提前".encode(),
            "先结束".encode(),
            "先退出".encode(),
            "先跑完".encode(),
        ),
        words=("early", "first", "prematurely", "before the others", "提前", "先结束", "先退出", "先跑完"),
        anchor_from="the report's words in their usual spellings",
        examples=(
            "2025-12-19 09:03:13,924 WARNING Rank 1 model.join() exit failed, some ranks may have exited "
            "early: Rank 1 successfully reached monitoredBarrier",
            "One rank finishes early and others hang in allreduce",
            "其他卡已经提前结束了",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
