"""collective_mismatch and the lagging rank, from the reports torch prints about its own ranks: the
flight recorder analyzer's text output and TORCH_NCCL_DESYNC_DEBUG's report, and DDP's static-graph
check.

Formats, read at their source:
- the flight recorder analyzer (torch/distributed/flight_recorder/components/utils.py error_analysis,
  types.py EntryState.log, `torchfrtrace` / tools/flight_recorder in 2.5-2.6): "Collective sequence
  number: 5 has errors" ... "error msg: Culprit rank 1; Error type: COLLECTIVE_TYPE_MISMATCH, Expected
  collective type: 'all_reduce' does not match found collective type: 'broadcast'" (also
  SIZE_OR_SYNTAX_MISMATCH and COLLECTIVE_DTYPE_MISMATCH, several culprits joined by ", "); "Input/output
  mismatch in the collective sequence number: 7" (all_to_all whose totals disagree); "Not all ranks
  joining collective, sequence number: 5" ... "missing ranks: {1, 3}" (a rank never entered it: the
  hang, not a mismatch). COLLECTIVE_STATE_MISMATCH (one rank finished, another only scheduled) says
  who is slow, not that the calls differ, and is left to the timeout that comes with it.
- TORCH_NCCL_DESYNC_DEBUG (c10d TraceUtils.h retrieveDesyncReport, 1.11-2.x): "Snapshot of ranks'
  latest states:" then "#100 started ranks:" and one "[0, 2] started ALLREDUCE" line per collective
  name: two names at one sequence number are ranks in different collectives. The report is built only
  after a collective timed out, so its other lines stand for that timeout: "[0] Timeout at collective:
  ALLREDUCE, #329", "ranks [1] are the lagging ranks that caused this timeout. They never joined any
  collectives", "the lagging/dead/mismatched ranks that caused the desync are:", and its asserts when the
  store's trace is inconsistent ("Timeout rank [0] last trace item must be kEventStart. thisSeq = 329, col
  = _REDUCE_SCATTER_BASE", "Timeout rank [0] must have collective tracking iteam in c10::Store trace",
  "Trace shouldn't be empty while enabled GLOO_ASYNC_TIMEOUT_DEBUG"), raised through the watchdog
  ("NCCL watchdog thread terminated with exception: ...", "Exception raised from retrieveDesyncReport at
  ...TraceUtils.h") or caught by ProcessGroupNCCL ("Failed to retrieve TORCH_NCCL_DESYNC_DEBUG report").
- FSDP's first-iteration order check ("Forward order differs across ranks: rank 0 is all-gathering 43
  parameters while rank 1228 is all-gathering 1 parameters") and its optimizer-state check ("Rank 1 has
  different values for step: 8016.0. Other ranks: 7870.0").
- DeepSpeed ZeRO-3's parameter coordinator (runtime/zero/partitioned_param_coordinator.py, 0.9-0.16):
  "Invalidate trace cache @ step 1: expected module 15, but got module 313" (and "... @ step 0 and module
  36666: cache has only 0 modules"): the modules ran in another order than the recorded trace. It is
  also printed by healthy runs whose control flow changes (generation, eval), so it counts only where
  the job made no step after it: ranks that run different modules (MoE experts, a data mix) then
  all-gather different parameters and hang until the watchdog.
- reducer.cpp with static_graph=True: "Your training graph has changed in this iteration, e.g., one
  parameter is used in first iteration, but then got unused in the second iteration."
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.progress import is_progress
from pgdoctor.model import lazy_re

_FR_HAS_ERRORS = lazy_re.compile(r"Collective sequence number: (\d+) has errors")
_FR_CULPRIT = lazy_re.compile(
    r"Culprit rank (\d+); Error type: (COLLECTIVE_TYPE_MISMATCH|SIZE_OR_SYNTAX_MISMATCH|"
    r"COLLECTIVE_DTYPE_MISMATCH)(?:, ([^;]*?))?(?=, Culprit rank|$)"
)
_FR_IO = lazy_re.compile(r"Input/output mismatch in the collective sequence number: (\d+)")
_FR_MISSING = lazy_re.compile(r"Not all ranks joining collective,? sequence number: (\d+)")
_FR_MISSING_RANKS = lazy_re.compile(r"missing ranks: \{([\d, ]+)\}")
_FR_COLLECTIVE = lazy_re.compile(r"^\s*collective: (?:nccl|xccl|gloo):(\w+)")
_SNAPSHOT = lazy_re.compile(r"#(\d+) started ranks:")
_STARTED = lazy_re.compile(r"\[([\d, ]+)\] started (\S+)")
_STARTED_ONE = lazy_re.compile(r"started (\S+)$")
_DESYNC_TIMEOUT = lazy_re.compile(
    r"Timeout rank \[(?P<r1>\d+)\] (?:last trace item must be kEventStart|must have collective tracking)"
    r"|\[(?P<r2>\d+)\] Timeout at collective: (?P<op>\w+), #(?P<seq>\d+)"
    r"|ranks \[(?P<lag>[\d, ]+)\] are the lagging ranks that caused this timeout"
    r"|lagging/dead/mismatched ranks that caused the desync"
    r"|from retrieveDesyncReport at"
    r"|Failed to retrieve (?:TORCH_)?NCCL_DESYNC_DEBUG report"
    r"|Trace shouldn't be empty while enabled GLOO_ASYNC_TIMEOUT_DEBUG"
)
_TIMEOUT_RANK = lazy_re.compile(r"Timeout rank \[(\d+)\]")
_DESYNC_SEQ = lazy_re.compile(r"thisSeq = (\d+), col = (\w+)|Timeout at collective: (\w+), #(\d+)")
_STATIC_GRAPH = lazy_re.compile(r"Your training graph has changed in this iteration")
# FSDP's execution-order check on the first iteration (fsdp/_exec_order_utils.py, TORCH_DISTRIBUTED_DEBUG
# INFO/DETAIL): "Forward order differs across ranks: rank 0 is all-gathering 43 parameters while rank 1228
# is all-gathering 1 parameters"; and its optimizer-state check (fsdp/_optim_utils.py): "Rank 1 has
# different values for step: 8016.0. Other ranks: 7870.0".
_FSDP_ORDER = lazy_re.compile(
    r"Forward order differs across ranks:?(?:.*?\brank (\d+) is .*?while rank (\d+) is)?"
)
_FSDP_STATE = lazy_re.compile(r"Rank (\d+) has different values for (\w+): (\S+?)\.? Other ranks: (\S+)")


def _ranks(text: str) -> list[int]:
    return sorted({int(x) for x in re.findall(r"\d+", text)})


def _report_lines(hit: Hit, n: int) -> list[str]:
    return [hit.text] + [ln.text for ln in hit.after(n, same_rank=False)]


def _op(lines: list[str]) -> Optional[str]:
    for t in lines:
        m = _FR_COLLECTIVE.search(t)
        if m:
            return m.group(1)
    return None


def _fr_errors(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lines = _report_lines(hit, 16)
    culprits: dict[int, str] = {}
    for t in lines[1:] if m.re == _FR_HAS_ERRORS else lines:
        for c in _FR_CULPRIT.finditer(t):
            culprits.setdefault(int(c.group(1)), (c.group(3) or c.group(2)).strip())
    if not culprits:
        return None  # "has errors" alone: the analyzer found only state differences
    seq = int(m.group(1)) if m.re == _FR_HAS_ERRORS else None
    facts: dict[str, Any] = {"ranks": sorted(culprits), "source": "flight_recorder_analyzer"}
    if seq is not None:
        facts["seq"] = seq
    op = _op(lines)
    if op:
        facts["op"] = op
    why = "; ".join(f"rank {r}: {clip(w, 120)}" for r, w in sorted(culprits.items()))
    at = f" at sequence number {seq}" if seq is not None else ""
    return [
        row.event(
            hit,
            f"the flight recorder analyzer found ranks in a different collective{at}: {why}",
            facts,
            rank=min(culprits) if len(culprits) == 1 else None,
            dedupe=(row.code, seq),
        )
    ]


def _fr_io(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lines = _report_lines(hit, 10)
    facts: dict[str, Any] = {"seq": int(m.group(1)), "source": "flight_recorder_analyzer"}
    op = _op(lines)
    if op:
        facts["op"] = op
    return [
        row.event(
            hit,
            f"the flight recorder analyzer: the ranks' input and output sizes of collective {m.group(1)}"
            f"{' (' + op + ')' if op else ''} do not add up: the ranks passed different split sizes",
            facts,
            dedupe=(row.code, m.group(1)),
        )
    ]


def _fr_missing(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lines = _report_lines(hit, 10)
    facts: dict[str, Any] = {"seq": int(m.group(1)), "source": "flight_recorder_analyzer"}
    for t in lines:
        mr = _FR_MISSING_RANKS.search(t)
        if mr:
            facts["ranks"] = _ranks(mr.group(1))
            break
    op = _op(lines)
    if op:
        facts["op"] = op
    who = f"rank(s) {', '.join(map(str, facts['ranks']))}" if "ranks" in facts else "some ranks"
    return [
        row.event(
            hit,
            f"the flight recorder analyzer: {who} never joined collective {m.group(1)}"
            f"{' (' + op + ')' if op else ''} that the other ranks wait in",
            facts,
            rank=facts["ranks"][0] if len(facts.get("ranks", [])) == 1 else None,
            dedupe=(row.code, m.group(1)),
        )
    ]


def _snapshot(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    groups: dict[str, list[int]] = {}
    for ln in hit.after(12, same_rank=False):
        s = _STARTED.search(ln.text)
        if s is not None:
            groups.setdefault(s.group(2), []).extend(_ranks(s.group(1)))
            continue
        # a single rank's "[1] started BROADCAST" loses its bracket to the line reader (a viewer's line
        # number looks the same): the collective still counts, its rank is unknown
        one = _STARTED_ONE.match(ln.text.strip())
        if one is not None:
            groups.setdefault(one.group(1), [])
        elif _SNAPSHOT.search(ln.text) or "finished ranks:" in ln.text:
            break
    if len(groups) < 2:
        return []  # one collective at this sequence number: the timeout's report, read there
    facts: dict[str, Any] = {"seq": int(m.group(1)), "ops": sorted(groups)}
    desc = "; ".join(f"{op}" + (f" on {sorted(r)}" if r else "") for op, r in sorted(groups.items()))
    msg = f"ranks started different collectives at sequence number {m.group(1)} ({desc})"
    known = {op: r for op, r in groups.items() if r}
    if len(known) == len(groups):  # every group's ranks shown: the smallest group is the suspect
        odd = min(groups, key=lambda k: (len(groups[k]), k))
        facts["ranks"] = sorted(groups[odd])
        msg += f": suspect rank(s) {facts['ranks']}"
    return [row.event(hit, msg, facts, dedupe=(row.code, "desync_snapshot"))]


def _desync_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"mode": "watchdog", "source": "desync_debug_report"}
    text = " ".join(_report_lines(hit, 3))
    q = _DESYNC_SEQ.search(text)
    if q:
        facts["seq"] = int(q.group(1) or q.group(4))
        facts["op"] = q.group(2) or q.group(3)
    tr = _TIMEOUT_RANK.search(text)
    r = m.group("r1") or m.group("r2") or (tr.group(1) if tr else None)
    rank = int(r) if r is not None else hit.rank
    if rank is not None:
        facts["rank"] = rank
    if m.group("lag"):
        facts["ranks_never_joined"] = _ranks(m.group("lag"))
    what = f"{facts['op']} #{facts['seq']}" if "seq" in facts else "a collective"
    msg = f"{hit.who(rank)}: {what} timed out (TORCH_NCCL_DESYNC_DEBUG's report runs only after a timeout)"
    if "ranks_never_joined" in facts:
        msg += f"; ranks {facts['ranks_never_joined']} never joined any collective"
    return [row.event(hit, msg, facts, rank=rank, dedupe=(row.code, rank, None, facts.get("seq")))]


def _fsdp_order(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "fsdp_exec_order"}
    if m.group(1):
        facts["ranks_compared"] = sorted({int(m.group(1)), int(m.group(2))})
    return [
        row.event(
            hit,
            "FSDP: the ranks all-gather different parameters in the forward pass (their modules run in a "
            "different order or take different branches)"
            + (f": ranks {facts['ranks_compared']}" if "ranks_compared" in facts else ""),
            facts,
            dedupe=(row.code, "fsdp_order"),
        )
    ]


# DeepSpeed's assert_ints_same_as_other_ranks (runtime/utils.py, used by ZeRO-3's parameter fetch and its
# partitioned-parameter checks): "RuntimeError: disagreement between rank0 and rank2: rank0: [...], rank2:
# [...]". The ranks fetch different parameters (a branch, a module skipped on some ranks): their next
# all-gathers differ.
_DISAGREE = lazy_re.compile(r"disagreement between rank\s*(\d+) and rank\s*(\d+)")


def _disagree(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    first, other = int(m.group(1)), int(m.group(2))
    return [
        row.event(
            hit,
            f"DeepSpeed: rank {other} disagrees with rank {first} about the parameters to fetch (ZeRO-3's "
            "per-rank check): the ranks run different modules or branches, so their all-gathers differ",
            {
                "kind": "zero3_param_disagreement",
                "ranks_compared": sorted({first, other}),
                "suspect_rank": other,
            },
            dedupe=(row.code, "disagreement", other),
        )
    ]


def _fsdp_state(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    r = int(m.group(1))
    return [
        row.event(
            hit,
            f"FSDP: rank {r} holds a different {m.group(2)} ({m.group(3)}) than the other ranks "
            f"({m.group(4)}): "
            "the ranks' optimizer states diverged",
            {"kind": "fsdp_state_differs", "rank": r, "key": m.group(2)},
            rank=r,
            dedupe=(row.code, "fsdp_state"),
        )
    ]


_ZERO3_TRACE = lazy_re.compile(
    r"Invalidate trace cache @ step (\d+)(?::\s*expected module (\d+), but got module (\d+)| and module "
    r"(\d+): cache has only \d+ modules)"
)


def _zero3_trace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(is_progress(ln.text) for ln in hit.after(48, same_rank=False)):
        return []  # the job went on stepping: the trace was rebuilt, nothing hung
    facts: dict[str, Any] = {
        "kind": "zero3_trace_invalidated",
        "framework": "deepspeed",
        "step": int(m.group(1)),
    }
    if m.group(2):
        facts["expected_module"], facts["got_module"] = int(m.group(2)), int(m.group(3))
    return [
        row.event(
            hit,
            "DeepSpeed ZeRO-3 ran its modules in another order than the recorded trace and the job made "
            "no step after it: ranks that run different modules (MoE experts, a mix of inputs) all-gather "
            "different parameters and wait for each other",
            facts,
            dedupe=(row.code, "zero3_trace"),
        )
    ]


def _static_graph(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "DDP with static_graph=True: a parameter used in one iteration went unused in another "
            "(the graph changed between iterations)",
            {"kind": "static_graph_changed"},
            dedupe=(row.code, "static_graph"),
        )
    ]


SIGNATURES = (
    Signature(
        "flight recorder analyzer culprit",
        lazy_re.compile(f"{_FR_HAS_ERRORS.pattern}|{_FR_CULPRIT.pattern}"),
        _fr_errors,
        C.FR_OP_MISMATCH.code,
        anchors=(b"has errors", b"Culprit rank"),
        worth=(rb"has errors", rb"Culprit rank"),
        words=("has errors", "culprit rank"),
    ),
    Signature(
        "flight recorder analyzer sizes",
        _FR_IO,
        _fr_io,
        C.FR_OP_MISMATCH.code,
        anchors=(b"Input/output mismatch",),
        worth=(rb"Input/output mismatch",),
        words=("input/output mismatch",),
    ),
    Signature(
        "flight recorder analyzer missing ranks",
        _FR_MISSING,
        _fr_missing,
        C.FR_RANKS_MISSING.code,
        anchors=(b"Not all ranks joining",),
        worth=(rb"Not all ranks joining",),
        words=("not all ranks joining",),
    ),
    Signature(
        "desync debug snapshot",
        _SNAPSHOT,
        _snapshot,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"started ranks:",),
        worth=(rb"started ranks:",),
        words=("started ranks:",),
    ),
    Signature(
        "desync debug report of a timeout",
        _DESYNC_TIMEOUT,
        _desync_timeout,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,  # a timeout, as the watchdog's own line: a mismatch the snapshot shows leads it
        anchors=(
            b"Timeout rank [",
            b"] Timeout at collective: ",
            b"are the lagging ranks that caused",
            b"lagging/dead/mismatched ranks",
            b"from retrieveDesyncReport",
            b"NCCL_DESYNC_DEBUG report",
            b"Trace shouldn't be empty while",
        ),
        words=(
            "timeout rank [",
            "] timeout at collective: ",
            "are the lagging ranks that caused",
            "lagging/dead/mismatched ranks",
            "from retrievedesyncreport",
            "nccl_desync_debug report",
            "trace shouldn't be empty while",
        ),
    ),
    Signature(
        "fsdp forward order",
        _FSDP_ORDER,
        _fsdp_order,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"order differs across ranks",),
        worth=(rb"order differs across ranks",),
        words=("order differs across ranks",),
    ),
    Signature(
        "deepspeed ranks disagree",
        _DISAGREE,
        _disagree,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"disagreement between rank",),
        worth=(rb"disagreement between rank",),
        words=("disagreement between rank",),
    ),
    Signature(
        "fsdp state differs",
        _FSDP_STATE,
        _fsdp_state,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"has different values for",),
        worth=(rb"has different values for",),
        words=("has different values for",),
    ),
    Signature(
        "zero3 trace cache invalidated, then no step",
        _ZERO3_TRACE,
        _zero3_trace,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(b"Invalidate trace cache",),
        worth=(rb"Invalidate trace cache",),
        words=("invalidate trace cache",),
    ),
    Signature(
        "ddp static graph changed",
        _STATIC_GRAPH,
        _static_graph,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(b"graph has changed",),
        worth=(rb"graph has changed",),
        words=("graph has changed",),
    ),
)
parse = gated_reader(SIGNATURES)
