"""collective_timeout: a collective that did not finish in time, in every format.

Formats (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp across versions):
- watchdog, 1.x-2.1: "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operation
  timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, [NumelIn=52, NumelOut=52, ]Timeout(ms)=600000)
  ran for 600097 milliseconds before timing out."
- watchdog, 2.2+: the same after "[rank1]:[E1001 12:00:00.123456789 ProcessGroupNCCL.cpp:616]
  [PG 0 Rank 1] " or "[PG ID 0 PG GUID 0(default_pg) Rank 1] ".
- "Timeout at NCCL work: 5, last enqueued NCCL work: 6, last completed NCCL work: 4." and
  "Exception (either an error or timeout) detected by watchdog at work: 32, last enqueued NCCL
  work: 32, last completed NCCL work: 31." (per rank: shows which ranks are behind)
- blocking wait: "[Rank 0] Caught collective operation timeout: WorkNCCL(...) ran for N
  milliseconds before timing out." (old) and "Work WorkNCCL(...) timed out in blocking wait
  (TORCH_NCCL_BLOCKING_WAIT=1)." (new)
- heartbeat monitor: "Heartbeat monitor timed out! Process will be terminated after dumping
  debug info. workMetaList_.size()=2", "ProcessGroupNCCL's watchdog got stuck for 600 seconds
  ...", older "[Rank 0] NCCL monitor thread timeout."
- gloo (third_party/gloo/gloo/transport/tcp/unbound_buffer.cc): "Timed out waiting 5000ms for
  recv operation to complete"; gloo monitored barrier: "Rank 1 failed to pass monitoredBarrier
  in 5000 ms".
- non-blocking communicators (2.1+): "NCCL timeout in communicator initialization.", "NCCL timeout in:
  <file>:<line>", "NCCL timeout when waiting for nonblocking call to become successful."; Work::wait with a
  timeout (Work.cpp 2.x, ProcessGroup.cpp 1.x, ProcessGroupGloo): "[...Work.cpp:84] Operation timed out!".
- 2.5+: "failure detected by watchdog at work sequence id: 120049 PG status: last enqueued
  work: 120051, last completed work: 120048".
- pasted records: "ran for ..." cut off, the record hard-wrapped anywhere (even inside a number:
  the continuation is joined without a space), or cut before its WorkNCCL(...) (then only the
  rank is known); a sentence about a timeout in prose is no record.
- torch_npu's ProcessGroupHCCL (Ascend NPUs) copies these texts with WorkHCCL(...) for WorkNCCL(...) (and
  torch-xpu-ops' ProcessGroupXCCL, Intel GPUs, with WorkXCCL(...)),
  "Some HCCL operations have failed or timed out." and "(TORCH_HCCL_BLOCKING_WAIT=1 or
  HCCL_BLOCKING_WAIT=1)": the same rows read them (the device-side HCCL timeouts are rules/hccl.py's).
- consequences (tier 2, no finding of their own): "Some NCCL operations have failed or timed
  out.", "Received a dump signal due to a collective timeout from rank 7 ... Last enqueued NCCL
  work: N, last completed NCCL work: M."
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, read
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.model import lazy_re

# "ran for N milliseconds" may be cut off by a paste; the WorkNCCL(...) record alone is enough.
_WATCHDOG = lazy_re.compile(
    r"[Cc]aught\s+collective\s+operation\s+timeout:\s*Work[NHX]CCL\((?P<work>[^()]*(?:\([^()]*\)[^()]*)*)"
    r"(?:\)\s*ran\s+for\s+(?P<ran>\d+)\s+milliseconds)?"
)
# The record cut before its head ("WorkNCCL(SeqNum=5125, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for
# 1807734 millisecond"): "ran for" after a work record is only ever the watchdog's timeout, also where a
# person retyped the unit ("WorkNCCL(OpType=ALLREDUCE, SeqNum=458) ran for 1800600 ms before timing out.").
_RAN_FOR = lazy_re.compile(
    r"Work[NHX]CCL\((?P<work>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*ran\s+for\s+(?P<ran>\d+)\s*(?:milli|ms\b)"
)
_WHOLE_RECORD = lazy_re.compile(r"Work[NHX]CCL\([^()]*(?:\([^()]*\)[^()]*)*\)")
# The record cut before its WorkNCCL(...): "[Rank 5] Watchdog caught collective operati", or inside the
# record's name ("...operation timeout: WorkNCC", after a progress bar that never printed its newline); cut
# sooner, its own "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c" says it (no other message opens so).
_WATCHDOG_CUT = lazy_re.compile(
    r"Watchdog caught col\w*(?: op\w*(?: tim\w*)?)?:?\s*(?:Work[NHX]CCL\(.*|W(?:o(?:rk?)?|ork[NHX]C{0,2})?)?$"
    r"|"
    r"\[E[\d :.]*ProcessGroup[NHX]CCL\.cpp:\d+\]\s*\[(?:PG \d+ )?Rank \d+\]\s*Watchdog c(?:a\w*(?: co?)?)?$"
)
# The watchdog's timeout told in other words than its record (a title, a wrapper's summary): "operation
# timeout: WorkNCCL at step 4", "WorkNCCL timed out after 30 minutes": the work's name after a timeout, or
# before "timed out" (not a "WorkNCCL timeout" setting, nor the record's own "Timeout(ms)=" field).
_WORK_TIMEOUT_WORDS = lazy_re.compile(
    r"\b(?:[Oo]peration|[Cc]ollective|[Ww]atchdog|NCCL) time[ -]?out:?\s+(?:WorkNCCL|WorkHCCL)\b|"
    r"\b(?:WorkNCCL|WorkHCCL)\b(?!\()[^\n]{0,40}?\b(?:timed out|timing out)\b"
)
_BLOCKING = lazy_re.compile(r"Work\s+Work[NHX]CCL\((?P<work>.*?)\)\s*timed out in blocking wait")
_KV = lazy_re.compile(r"(\w+(?:\(ms\))?)=([^,\s)]+)")
_PG = lazy_re.compile(
    r"\[PG (?:ID )?(?P<pg>\d+)(?: PG GUID (?P<guid>[^\s(\]]+))?\s*(?:\((?P<name>[^)]*)\))?\s*Rank "
    r"(?P<rank>\d+)\]"
)
_SEQ = lazy_re.compile(
    r"(?:Timeout at NCCL work|detected by watchdog at work):\s*(?P<at>-?\d+),\s*last enqueued NCCL work:\s*"
    r"(?P<enq>-?\d+),\s*last completed NCCL work:\s*(?P<done>-?\d+)|"
    # 2.5+: "failure detected by watchdog at work sequence id: 120049 PG status: last
    # enqueued work: 120051, last completed work: 120048"
    r"failure detected by watchdog at work sequence id:\s*(?P<at2>-?\d+)\s*PG status:\s*last enqueued "
    r"work:\s*"
    r"(?P<enq2>-?\d+),\s*last completed work:\s*(?P<done2>-?\d+)"
)
_DUMP_SIGNAL = lazy_re.compile(
    r"dump signal due to a collective timeout from\s+(?P<src>.*?) and .*?Last enqueued NCCL work:\s*"
    r"(?P<enq>-?\d+),\s*last completed NCCL work:\s*(?P<done>-?\d+)"
)
_HEARTBEAT = lazy_re.compile(
    r"Heartbeat monitor timed out|watchdog got stuck for (\d+) seconds|NCCL monitor thread timeout|"
    # 2.4+: the monitor's last line, "Terminating the process after attempting to dump debug info, due to
    # ProcessGroupNCCL watchdog hang." (the record above it may be cut from the paste)
    r"due to ProcessGroupNCCL watchdog hang"
)
# (a paste may hide the number: "Timed out waiting xxxx ms for recv operation")
_GLOO = lazy_re.compile(r"Timed out waiting (\d+|[xX]+|N+)\s*ms for (recv|send) operation to complete")
_MONITORED = lazy_re.compile(r"Ranks? ([\d, ]+) failed to pass monitoredBarrier in (\d+) ms")
# ProcessGroupGloo::monitoredBarrier on a rank other than 0 (1.10-2.x): "Rank 3 successfully reached
# monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0
# logs for [the ]faulty rank." Rank 0 names the late ranks ("Ranks 2 failed to pass"); this rank
# only knows that rank 0 gave up on someone: rank 0's log says who.
_REACHED = lazy_re.compile(
    r"Rank (\d+) successfully reached monitoredBarrier, but received errors while waiting for send/recv "
    r"from rank (\d+)"
)
# The watchdog's C++ stack without its message line (the paste began below it): the frame
# WorkNCCL::checkTimeout is only on the stack of a collective that ran past its timeout (2.x;
# an NCCL error goes through checkAndSetException instead).
_STACK = lazy_re.compile(r"ProcessGroupNCCL::WorkNCCL::checkTimeout\b")
_CONSEQUENCE = lazy_re.compile(
    r"Some [NH]CCL operations have failed or timed out|taking the entire process down"
)

# ProcessGroupNCCL 1.7-1.9 aborted its communicators after the watchdog saw a work time out (or another
# rank abort) and raised only "NCCL communicator was aborted on rank 1." - the reason was appended
# (". Original reason for failure was: ...", read by the rows of that reason) from 1.10 on. Bare, it
# is most often a timeout's consequence: a weak timeout finding (tier 2).
_ABORTED = lazy_re.compile(r"NCCL communicator was aborted(?: on rank (\d+))?\.?\s*$")

# A non-blocking communicator (TORCH_NCCL_USE_COMM_NONBLOCKING, 2.1+) that did not become ready within
# TORCH_NCCL_NONBLOCKING_TIMEOUT: NCCLUtils.cpp's waitUntilInitialized "NCCL timeout in communicator
# initialization." (2.2+), NCCLUtils.hpp's C10D_CHECK_TIMEOUT "NCCL timeout in: <file>:<line>" around a
# call left ncclInProgress (init, split, finalize, group end), torch/csrc/cuda/nccl.cpp's "NCCL timeout when
# waiting for nonblocking call to become successful."; also as the reason of an aborted communicator.
# Init waits for every rank: a rank that never arrived (dead, slow, stuck before init) or a bootstrap
# that cannot connect leaves the others here - a timeout, whose cause is on the rank that did not come.
_NB_TIMEOUT = lazy_re.compile(
    r"NCCL timeout (?:in communicator initiali[sz]ation|in: (?P<where>\S+?:\d+)|"
    r"when waiting for nonblocking call to become successful)"
)
# Work::wait(timeout) (Work.cpp 2.0+, ProcessGroup.cpp 1.x, ProcessGroupUCC / ProcessGroupGloo's works):
# "[../torch/csrc/distributed/c10d/Work.cpp:84] Operation timed out!" - a work waited on with a timeout
# (work.wait(timeout), gloo's collectives, a monitored barrier's send/recv) that did not complete. The words
# are common outside torch: without the c10d source in brackets, a torch.distributed frame or
# ProcessGroup line above must say whose they are.
# No "[" before c10d/ProcessGroup in the bracket: "[^\]]*" read from every "[" of a long stretch without
# "]" to its end (quadratic). No real line nests one there (the corpora read the same).
# torch-xpu-ops' ProcessGroupXCCL (src/xccl/ProcessGroupXCCL.cpp WorkXCCL::wait, 2.7+) words the same wait
# "Work timed out after 1800021 milliseconds." (LOG(ERROR) from ProcessGroupXCCL.cpp, then raised as
# torch.distributed.DistBackendError).
_WAIT = lazy_re.compile(
    r"(?:\[(?P<where>[^\[\]]*(?:c10d|ProcessGroup)\S*?\.cpp:\d+)\]\s*)?Operation timed out!|"
    r"(?P<xwhere>ProcessGroupXCCL\.cpp:\d+\]\s*|DistBackendError: )?Work timed out after (?P<ms>\d+) "
    r"milliseconds"
)
_DIST_ABOVE = lazy_re.compile(
    r"torch[/.]distributed|distributed_c10d|c10d|ProcessGroup|\bwork\.wait\(|dist\.\w+\("
)

_INT_KEYS = {"SeqNum": "seq", "NumelIn": "numel_in", "NumelOut": "numel_out", "Timeout(ms)": "timeout_ms"}


def _pg_facts(text: str) -> dict[str, Any]:
    m = _PG.search(text)
    if not m:
        return {}
    f: dict[str, Any] = {"pg_id": int(m.group("pg")), "rank": int(m.group("rank"))}
    if m.group("name"):
        f["pg_name"] = m.group("name")
    if m.group("guid"):
        f["pg_guid"] = m.group("guid")
    return f


def work_facts(work: str) -> dict[str, Any]:
    f: dict[str, Any] = {}
    for k, v in _KV.findall(work):
        if k in _INT_KEYS:
            try:
                f[_INT_KEYS[k]] = int(v)
            except ValueError:
                pass
        elif k == "OpType":
            f["op"] = v
    return f


def _rank(hit: Hit, facts: dict[str, Any]) -> Optional[int]:
    r = hit.line.rank
    return r if r is not None else facts.get("rank", hit.rank)


def _joined(hit: Hit) -> tuple[str, Optional[list[Line]]]:
    """The hit line, or the watchdog record a hard wrap cut, joined again (and its lines)."""
    t = hit.text
    if _WATCHDOG_CUT.search(t) and not _WHOLE_RECORD.search(t):
        joined, used = hit.block(4, sep="")  # a hard wrap cut the record: the rest is on the next lines
        if any(f"Work{b}CCL(" in joined for b in "NHX"):
            return joined, used
    return t, None


def _work(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t, record = _joined(hit)
    facts = {**_pg_facts(t), **work_facts(m.group("work"))}
    if "WorkHCCL(" in t or "WorkXCCL(" in t:  # torch_npu's ProcessGroupHCCL, torch-xpu-ops' XCCL: same record
        facts["backend"] = "hccl" if "WorkHCCL(" in t else "xccl"
    if "ran" in m.groupdict() and m.group("ran"):
        facts["ran_for_ms"] = int(m.group("ran"))
    facts["mode"] = (
        "blocking_wait"
        if (
            "blocking wait" in t or (t.lstrip().startswith(("[Rank", "RuntimeError")) and "Watchdog" not in t)
        )
        else "watchdog"
    )
    # The seq line ("Timeout at NCCL work ...") follows on the same rank.
    for ln in hit.after(4):
        s = _SEQ.search(ln.text)
        if s:
            facts["last_enqueued_seq"] = int(s.group("enq") or s.group("enq2"))
            facts["last_completed_seq"] = int(s.group("done") or s.group("done2"))
            break
    r = _rank(hit, facts)
    if r is not None:
        facts["rank"] = r
    op = facts.get("op", "collective")
    msg = (
        f"{hit.who(r)}: {op} SeqNum={facts.get('seq', '?')} "
        f"ran {facts.get('ran_for_ms', facts.get('timeout_ms', '?'))} ms, past its timeout "
        f"({facts.get('timeout_ms', '?')} ms)"
    )
    return [
        row.event(hit, msg, facts, record, rank=r, dedupe=(row.code, r, facts.get("pg_id"), facts.get("seq")))
    ]


def _cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _pg_facts(_joined(hit)[0])
    r = _rank(hit, facts)
    return [
        row.event(
            hit,
            f"{hit.who(r)}: the NCCL watchdog caught a collective timeout "
            "(the record is cut off: no op or sequence number)",
            facts,
            rank=r,
            dedupe=(row.code, r, facts.get("pg_id"), None),
        )
    ]


def _work_timeout_words(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    r = _rank(hit, {})
    return [
        row.event(
            hit,
            f"{hit.who(r)}: a NCCL work timed out (said in words, without the watchdog's record)",
            {},
            rank=r,
            dedupe=(row.code, r, None, None),
        )
    ]


def _seq(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {
        **_pg_facts(_joined(hit)[0]),
        "last_enqueued_seq": int(m.group("enq") or m.group("enq2")),
        "last_completed_seq": int(m.group("done") or m.group("done2")),
        "seq": int(m.group("at") or m.group("at2")),
    }
    r = _rank(hit, facts)
    return [
        row.event(
            hit,
            f"{hit.who(r)}: watchdog stopped at work {facts['seq']} (last enqueued "
            f"{facts['last_enqueued_seq']}, "
            f"last completed {facts['last_completed_seq']})",
            facts,
            rank=r,
            dedupe=(row.code, r, facts.get("pg_id"), facts["seq"]),
        )
    ]


def _dump_signal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {
        **_pg_facts(_joined(hit)[0]),
        "last_enqueued_seq": int(m.group("enq")),
        "last_completed_seq": int(m.group("done")),
        "dump_signal_from": m.group("src").strip(),
    }
    r = _rank(hit, facts)
    return [
        row.event(
            hit,
            f"{hit.who(r)}: told to dump by {facts['dump_signal_from']} (last enqueued "
            f"{facts['last_enqueued_seq']},"
            f" last completed {facts['last_completed_seq']})",
            facts,
            rank=r,
            dedupe=(row.code, r, "dump"),
        )
    ]


def _heartbeat(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _pg_facts(_joined(hit)[0])
    stuck = m.group(1)
    if stuck is None:
        for ln in hit.after(3):
            s = re.search(r"watchdog got stuck for (\d+) seconds", ln.text)
            if s:
                stuck = s.group(1)
                break
    if stuck:
        facts["heartbeat_timeout_s"] = int(stuck)
    r = _rank(hit, facts)
    return [
        row.event(
            hit,
            f"{hit.who(r)}: the NCCL watchdog made no progress"
            + (f" for {stuck} s" if stuck else "")
            + "; the heartbeat monitor terminated the process",
            facts,
            rank=r,
            dedupe=(row.code, r),
        )
    ]


def _gloo(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"direction": m.group(2), "backend": "gloo"}
    if m.group(1).isdigit():
        facts["timeout_ms"] = int(m.group(1))
    src = re.search(r"\[([^\]]*gloo[^\]]*?):(\d+)\]", _joined(hit)[0])
    if src:
        facts["gloo_source"] = f"{src.group(1).rsplit('/', 1)[-1]}:{src.group(2)}"
    r = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: gloo {m.group(2)} timed out"
            + (f" after {m.group(1)} ms" if m.group(1).isdigit() else "")
            + " waiting for a peer",
            facts,
            rank=r,
            dedupe=(row.code, r),
        )
    ]


def _monitored(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    missing = [int(x) for x in re.findall(r"\d+", m.group(1))]
    # The suspects are the ranks it names; the event stays the reporting rank's (rank 0's), so that the
    # launcher's record of that rank's exit is explained by it.
    facts: dict[str, Any] = {
        "missing_ranks": missing,
        "suspect_ranks": missing,
        "timeout_ms": int(m.group(2)),
    }
    facts["backend"] = "gloo"
    return [
        row.event(
            hit,
            f"monitored barrier: rank(s) {missing} did not arrive within {m.group(2)} ms",
            facts,
            dedupe=(row.code, "monitored", tuple(missing)),
        )
    ]


def _reached(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    me, coord = int(m.group(1)), int(m.group(2))
    facts: dict[str, Any] = {
        "backend": "gloo",
        "monitored_barrier": True,
        "reporter_rank": me,
        "coordinator_rank": coord,
        "suspect_ranks": [coord],
    }
    return [
        row.event(
            hit,
            f"rank {me} reached the monitored barrier, but rank {coord} (its coordinator) gave up on a "
            f"late rank; rank {coord}'s log names it",
            facts,
            rank=me,
            dedupe=(row.code, "monitored_reached", me),
        )
    ]


def _stack(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # The message line, when it is in the excerpt, is the better record of the same timeout.
    if any("caught collective operation timeout" in ln.text for ln in [*hit.before(24), *hit.after(24)]):
        return []
    r = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: the NCCL watchdog's stack shows a collective that ran past its timeout "
            "(WorkNCCL::checkTimeout; the message line with the op and SeqNum is not in the excerpt)",
            {"from_stack": True},
            rank=r,
            dedupe=(row.code, r, "stack"),
        )
    ]


# What the watchdog's teardown line is the consequence of, when the excerpt shows it.
_TEARDOWN_CAUSE = lazy_re.compile(
    r"Work[NHX]CCL\(|Watchdog caught|[NH]CCL error|nccl\w+Error|NCCL WARN|[Tt]imed out|Exception"
)


def _consequence(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    r = hit.rank
    # Alone (the excerpt holds neither the work that failed nor an NCCL error), the teardown is the best
    # record of why the process died: the watchdog aborts it (SIGABRT, exit -6), most often on a timeout.
    alone = not any(
        _TEARDOWN_CAUSE.search(ln.text)
        for ln in [*hit.before(24, same_rank=False), *hit.after(24, same_rank=False)]
        if not _CONSEQUENCE.search(ln.text)
    )
    return [
        row.event(
            hit,
            f"{hit.who(r)}: NCCL operations failed or timed out; process taken down",
            {**_pg_facts(_joined(hit)[0])},
            tier=1 if alone else None,
            rank=r,
            dedupe=(row.code, r, "teardown"),
        )
    ]


def _aborted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    r = int(m.group(1)) if m.group(1) else hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: ProcessGroupNCCL aborted its NCCL communicator without saying why "
            "(torch < 1.10): most often after a collective timed out here or on another rank",
            {"aborted": True},
            rank=r,
            dedupe=(row.code, r, "teardown"),
        )
    ]


def _nb_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    init = "initiali" in m.group(0) or "init" in (m.group("where") or "").lower()
    facts: dict[str, Any] = {"nonblocking": True, "phase": "communicator_init" if init else "nccl_call"}
    if m.group("where"):
        facts["where"] = m.group("where")
    r = hit.rank
    what = "its NCCL communicator did not finish initialising" if init else "a non-blocking NCCL call"
    return [
        row.event(
            hit,
            f"{hit.who(r)}: {what} within TORCH_NCCL_NONBLOCKING_TIMEOUT (non-blocking communicator): a rank "
            "that never joined (dead, slow or stuck before its first collective) or a bootstrap that cannot "
            "connect",
            facts,
            rank=r,
            dedupe=(row.code, r, "nonblocking"),
        )
    ]


def _wait(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if (
        not m.group("where")
        and not m.group("xwhere")
        and not any(_DIST_ABOVE.search(ln.text) for ln in hit.before(12))
    ):
        return None  # "Operation timed out!" of some other library
    facts: dict[str, Any] = {"mode": "work_wait"}
    if m.group("ms"):
        facts["elapsed_ms"] = int(m.group("ms"))
    if m.group("where"):
        facts["where"] = m.group("where").rsplit("/", 1)[-1]
        if "Gloo" in m.group("where"):
            facts["backend"] = "gloo"
    r = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: a torch.distributed work waited on with a timeout did not complete "
            + (
                f"(WorkXCCL::wait: timed out after {facts['elapsed_ms']} ms)"
                if "elapsed_ms" in facts
                else "(Work::wait: 'Operation timed out!')"
            )
            + ": a peer never joined the collective",
            facts,
            rank=r,
            code=C.GLOO_TIMEOUT.code if facts.get("backend") == "gloo" else "",
            dedupe=(row.code, r, "work_wait"),
        )
    ]


# torch.distributed.rpc's own deadline (rpc/utils.cpp kRpcTimeoutErrorStr, TensorPipe agent, 1.6-2.x): "RPC
# ran for more than set timeout (60000 ms) and will now be marked with an error"; 1.4-1.5's ProcessGroupAgent:
# "RPC ran for more than 60000 milliseconds and timed out.": the callee did not answer in time.
_RPC = lazy_re.compile(r"RPC ran for more than (?:set timeout \((?P<ms>\d+) ms\)|(?P<ms2>\d+) milliseconds)")


# The RPC group's all-gather (rpc/api.py _all_gather, 1.6-2.x: "Followers ['w1', 'w3'] timed out in
# _all_gather after 15.00 seconds. The first exception is ..."): init_rpc's exchange of the workers' device
# maps and its closing all-gather, the graceful shutdown's _wait_all_workers, and _barrier
# (GraphLearn-for-PyTorch's global_barrier). Announced in a start-up ("Initializing ...", an init_rpc frame)
# and no shutdown frame near it, it is the group's meeting that some worker never reached: a rendezvous,
# not a stuck call.
_RPC_GATHER = lazy_re.compile(r"timed out in _all_gather after")
_RPC_START = lazy_re.compile(r"[Ii]nitiali[sz]ing\b|\binit_rpc\b|_init_rpc_backend|init_client|init_server")


def _rpc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ms = m.group("ms") or m.group("ms2")
    near = [ln.text for ln in hit.before(12, same_rank=False)]
    if (
        _RPC_GATHER.search(hit.text)
        and any(_RPC_START.search(t) for t in near)
        and not any("shutdown" in t for t in [*near, hit.text])
    ):
        followers = re.search(r"Followers (\[[^\]]*\])", hit.text)
        return [
            row.event(
                hit,
                f"{hit.who()}: the RPC group's all-gather at start-up timed out ({ms} ms; waited for "
                f"{followers.group(1) if followers else 'some workers'}): those workers never reached the "
                "meeting (not started, another address or world size, or a network between them that drops "
                "the RPC agent's connections)",
                {"framework": "torch.rpc", "timeout_ms": int(ms), "problem": "rpc_init_all_gather"},
                code=C.RENDEZVOUS_TIMEOUT.code,
                dedupe=(C.RENDEZVOUS_TIMEOUT.code, "rpc_gather"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: an RPC did not complete within its timeout ({ms} ms): the callee is stuck, slow "
            "(a first call that compiles kernels) or gone",
            {"framework": "torch.rpc", "timeout_ms": int(ms)},
            dedupe=(row.code, hit.rank, "rpc"),
        )
    ]


W = C.WATCHDOG_TIMEOUT.code
SIGNATURES = (
    Signature("rpc timeout", _RPC, _rpc, W, tier=1, anchors=(b"RPC ran for more than",)),
    Signature(
        "watchdog record",
        _WATCHDOG,
        _work,
        W,
        tier=1,
        anchors=(b"imeout", b"atchdog"),
        worth=(rb"\btimeout\b", rb"Timeout", rb"atchdog"),
    ),
    Signature(
        "watchdog record without its head",
        _RAN_FOR,
        _work,
        W,
        tier=1,
        anchors=(b"CCL(",),
    ),
    Signature(
        "blocking wait", _BLOCKING, _work, W, tier=1, anchors=(b"imed out",), worth=(rb"[Tt]imed out",)
    ),
    Signature("watchdog record cut", _WATCHDOG_CUT, _cut, W, tier=1, anchors=(b"atchdog",)),
    Signature(
        "watchdog sequence numbers",
        _SEQ,
        _seq,
        W,
        tier=1,
        anchors=(b"imeout", b"atchdog"),
        worth=(rb"Timeout", rb"atchdog"),
    ),
    Signature(
        "dump signal", _DUMP_SIGNAL, _dump_signal, W, tier=2, anchors=(b"imeout",), worth=(rb"\btimeout\b",)
    ),
    Signature(
        "heartbeat monitor",
        _HEARTBEAT,
        _heartbeat,
        C.HEARTBEAT_TIMEOUT.code,
        tier=1,
        anchors=(b"imed out", b"atchdog", b"imeout"),
        worth=(rb"[Tt]imed out", rb"atchdog", rb"\btimeout\b"),
    ),
    Signature(
        "gloo timeout",
        _GLOO,
        _gloo,
        C.GLOO_TIMEOUT.code,
        tier=1,
        anchors=(b"imed out",),
        worth=(rb"[Tt]imed out",),
    ),
    Signature(
        "monitored barrier",
        _MONITORED,
        _monitored,
        C.GLOO_TIMEOUT.code,
        tier=1,
        # also alone on its line: under ProcessGroupWrapper's "Monitored Barrier encountered error
        # running collective: ... Error: " and in LOG(ERROR) "[E ProcessGroupGloo.cpp:136] [Rank 0]: Rank 1
        # failed ..."
        anchors=(b"rror", b"monitoredBarrier"),
        worth=(rb"Error\b", rb"pass monitoredBarrier"),
        anchor_from="the 'RuntimeError: ' before the barrier's message",
        examples=("RuntimeError: Rank 1 failed to pass monitoredBarrier in 5000 ms",),
    ),
    Signature(
        "monitored barrier reached",
        _REACHED,
        _reached,
        C.GLOO_TIMEOUT.code,
        tier=1,
        # ProcessGroupGloo's logAndThrow logs the text first ("[E ProcessGroupGloo.cpp:138] ..."), no "Error".
        anchors=(b"rror", b"monitoredBarrier"),
        worth=(rb"Error\b", rb"monitoredBarrier"),
        anchor_from="the 'RuntimeError: ' before the barrier's message",
        examples=(
            "RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors while waiting "
            "for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        ),
    ),
    Signature(
        "non-blocking communicator timeout",
        _NB_TIMEOUT,
        _nb_timeout,
        W,
        tier=1,
        anchors=(b"NCCL timeout",),
        worth=(rb"NCCL timeout",),
    ),
    Signature(
        "work wait timeout",
        _WAIT,
        _wait,
        W,
        tier=1,
        anchors=(b"imed out!", b"Work timed out after"),
        worth=(rb"Operation timed out!", rb"Work timed out after \d+ milliseconds"),
    ),
    Signature("watchdog stack", _STACK, _stack, W, tier=1, anchors=(b"imeout",), worth=(rb"Timeout",)),
    Signature(
        "work timeout in words",
        _WORK_TIMEOUT_WORDS,
        _work_timeout_words,
        W,
        tier=1,
        anchors=(b"WorkNCCL", b"WorkHCCL"),
        words=("worknccl", "workhccl"),
        examples=("[Bug] bash scripts/finetune/finetune_hunyuan.sh operation timeout: WorkNCCL at step 4",),
    ),
    Signature(
        "process taken down",
        _CONSEQUENCE,
        _consequence,
        W,
        tier=2,
        # 2.x: "[Rank 3] To avoid data inconsistency, we are taking the entire process down." on a line
        # of its own
        anchors=(b"imed out", b"entire process down"),
        worth=(rb"[Tt]imed out", rb"entire process down"),
        anchor_from="the record's own 'failed or timed out' sentence",
        examples=(
            "what():  [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous "
            "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        ),
    ),
    Signature(
        "communicator aborted",
        _ABORTED,
        _aborted,
        W,
        tier=2,
        anchors=(b"was aborted",),
        worth=(rb"was aborted",),
    ),
)


def parse(hit: Hit) -> list[Event]:
    return read(hit, SIGNATURES, _joined(hit)[0])
