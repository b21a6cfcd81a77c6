"""Root cause, not cascade: order events into findings.

A rank's OOM, crash or hardware error comes before the other ranks' timeouts; remote errors and
dropped connections echo a peer that died; "Some NCCL operations have failed", SIGTERM,
"Killing subprocess" and ChildFailedError are consequences. Each event has a cause tier
(0 cause, 1 usually a symptom, 2 consequence, 3 exit records and markers). The root is the best
tier; within it the earliest by timestamp when the events carry comparable clocks, then the rank
torchrun names as the first failure, then position in the logs; a bare Python exception yields to
a recognised failure of its tier. Every other finding is listed after it with facts["cascade_of"].

A hardware event (a GPU fallen off the bus, an uncorrectable ECC error, an Xid whose remedy is a
reset, reboot or drain) outranks the software errors it causes (CUDA errors, crashes, NCCL
errors, exits), whatever the file order and whether or not the files share a clock: the kernel
logs an Xid when the driver notices, which may be after the rank saw its CUDA error. With
comparable clocks a software error leads only when it came more than HARDWARE_SLACK_S before.

A Python exception counts only when it ended its rank, and never explains an exit by a signal (an
exception exits with code 1): training that went on after it and was then SIGKILLed has the
SIGKILL as its root. Ray's report of a dead worker ("Worker PID: N") is a consequence of a failure that
process logged behind Ray's "(RayWorker pid=N)" prefix. Ranks missing from a watchdog-timeout list are named
as suspects. A log that
holds only the launcher's teardown still says a worker died. When nothing is a failure but an
error line is there, an info note (RUN134) quotes the last one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from pgdoctor.checks.base import CODES
from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import POSITION, Event
from pgdoctor.diagnose.rules.launcher import EXIT, MARKER, teardown
from pgdoctor.diagnose.rules.nccl_transport import OBSERVED
from pgdoctor.diagnose.watchdog_desync import crossed_timeouts, disagreeing_timeouts, stranded_timeouts
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.ranks import count_label, rank_ranges, span_gaps
from pgdoctor.knowledge.signals import SIGNAL_SENDERS
from pgdoctor.model import Evidence, Finding, Scope, Severity

# How close to the end of its log a traceback must be to count as the rank's last words when no
# launcher recorded the exit.
TAIL_LINES = 40
MAX_EVIDENCE = 6
# How much earlier than a hardware event a software error may be stamped and still be its
# consequence (the driver reports an Xid after the fault that the rank's CUDA call returned).
HARDWARE_SLACK_S = 60.0
# A bare Python exception printed in the same second as a recognised failure is that failure's own
# traceback (a logger that stamps every line, kubectl --timestamps): it does not lead by microseconds.
GENERIC_SLACK_S = 1.0
# What a rank dies of that its peers' transports then report as a vanished peer.
_DEATHS = {"cuda_oom", "host_oom", "process_crash"}
_HW_XID_ACTIONS = ("reset", "reboot", "drain")
# Python exceptions that no transport raises (the user's own code failed: a KeyError, a bad shape): a rank
# that died of one is a death like a crash, and the peers' network errors that a dead peer explains
# (facts peer_may_have_died) are its echo. A RuntimeError may be NCCL's or gloo's own: not in the set.
_OWN_EXCEPTIONS = frozenset(
    {
        "KeyError",
        "IndexError",
        "ValueError",
        "TypeError",
        "AttributeError",
        "NameError",
        "UnboundLocalError",
        "ZeroDivisionError",
        "AssertionError",
        "FileNotFoundError",
        "ModuleNotFoundError",
        "ImportError",
        "NotImplementedError",
        "RecursionError",
    }
)
# What a failing GPU makes a process say; an OOM, a rendezvous or a driver-version problem has
# causes of its own and keeps its place.
_CAUSED_BY_HARDWARE = {"process_crash", "nccl_network", "nccl_usage", "collective_timeout"}


# What a launcher's exit record of a rank adds to the root cause it explains.
_FROM_EXIT = ("pid", "local_rank", "host", "signal")
# A watchdog timeout that ran this long was not cut short by the launcher tearing its workers down
# (torchrun polls every 5 s and sends SIGTERM at once): longer than any agent's monitor interval and grace.
_WAITED_OUT_MS = 60_000


def is_hardware(e: Event) -> bool:
    """A fault of the GPU itself. Xids of the "application" kind (13, 31, 43) are the driver's
    view of a software fault, not its cause."""
    if e.code in (C.GPU_OFF_BUS.code, C.GPU_ECC.code):
        return True
    return e.code == C.GPU_XID.code and e.facts.get("xid_action") in _HW_XID_ACTIONS


def caused_by_hardware(e: Event) -> bool:
    """A software error that a hardware fault of its node produces (RUN244 names Xids and ECC as
    the hardware cause of an illegal memory access)."""
    # A GPU lost from the bus is also why the runtime finds no device (nvidia-container-cli's "nvml
    # error: unknown error", "no CUDA-capable device is detected" beside nvidia-smi's "Unable to determine
    # the device handle for GPU1: ...: Unknown Error").
    return e.code in (C.CUDA_ILLEGAL_ACCESS.code, C.NO_CUDA_DEVICE.code) or (
        e.code in CODES and CODES[e.code].category in _CAUSED_BY_HARDWARE
    )


def _dedupe(events: list[Event]) -> list[Event]:
    seen: dict[tuple[Any, ...], Event] = {}
    for e in sorted(events, key=POSITION):
        first = seen.get(e.dedupe)
        if first is None:
            e.facts.setdefault("occurrences", 1)
            seen[e.dedupe] = e
        else:
            first.facts["occurrences"] = first.facts.get("occurrences", 1) + 1
    return list(seen.values())


def _root_exit(exits: list[Event]) -> Optional[Event]:
    bad = [e for e in exits if e.facts.get("exitcode") not in (0, None)]
    for pred in (lambda e: e.facts.get("root"), lambda e: e.facts.get("first")):
        chosen = [e for e in bad if pred(e)]
        if chosen:
            return min(chosen, key=lambda e: e.position)
    return min(bad, key=lambda e: e.position) if bad else None


def _exit_finding_event(ex: Event) -> Event:
    """A rank that exited without any recognised reason in the logs: the exit record is all we have."""
    code_n = ex.facts.get("exitcode")
    sig = ex.facts.get("signal")
    who = (
        f"rank {ex.rank}"
        if ex.rank is not None
        else (f"local rank {ex.facts['local_rank']}" if "local_rank" in ex.facts else "a rank")
    )
    host = f" on {ex.facts['host']}" if ex.facts.get("host") else ""
    if code_n == -9:
        code = C.HOST_OOM_KILLED.code
        msg = (
            f"{who}{host} was killed by SIGKILL (exit code -9) as the first failure; with no other error "
            f"this is "
            "most often the kernel's OOM killer (check dmesg on that host)"
        )
    elif sig in ("SIGSEGV", "SIGABRT", "SIGILL", "SIGBUS", "SIGFPE", "SIGTRAP", "SIGSYS"):
        code = C.FATAL_SIGNAL.code
        msg = f"{who}{host} died on {sig} (exit code {code_n}) as the first failure"
        if sig == "SIGBUS":
            msg += (
                ": most often shared memory ran out (/dev/shm too small in a container: --shm-size or "
                "--ipc=host) or a memory-mapped file changed under the process"
            )
    elif sig in SIGNAL_SENDERS:
        code = C.RANK_EXITED.code
        msg = (
            f"{who}{host} was ended by {sig} (exit code {code_n}) as the first failure, with no error of its "
            f"own in the log: a signal from outside, usually {SIGNAL_SENDERS[sig]}"
        )
    else:
        code = C.RANK_EXITED.code
        msg = (
            f"{who}{host} exited with code {code_n} as the first failure; its log shows no recognised error "
            "(read that rank's own output)"
        )
    facts = {k: v for k, v in ex.facts.items() if not k.startswith("_") and k not in ("root", "first")}
    return Event(
        code,
        ex.source,
        ex.line,
        ex.source_index,
        msg,
        ex.rank,
        facts,
        list(ex.evidence),
        ex.ts,
        0,
        (code, ex.rank, "exit"),
    )


def _by_signal(ex: Event) -> bool:
    code = ex.facts.get("exitcode")
    return isinstance(code, int) and code < 0


def _aborted(ex: Event) -> bool:
    """SIGABRT (-6) comes from inside the process (std::terminate, abort()), never from outside:
    torch 2.13's gloo aborts in a static destructor at exit after an uncaught Python exception
    ("terminate called without an active exception"), so the abort is that exception's
    consequence, unlike SIGKILL or SIGTERM, which another process sends while the rank runs on."""
    return ex.facts.get("exitcode") == -6


def _killed(ex: Event) -> bool:
    """Ended by a signal from outside (SIGKILL of the OOM killer, the launcher's SIGTERM)."""
    return _by_signal(ex) and not _aborted(ex)


def _exception_fatal(
    e: Event,
    exits: list[Event],
    exits_by_rank: Mapping[int, Event],
    died: bool,
    source_lines: Mapping[str, int],
) -> bool:
    """Did this Python exception end its rank? Yes when an exit record with an exit code, or an
    abort (SIGABRT: the exception's own teardown), is there for its rank (or for some rank, when
    ranks are unknown), or when it is the end of its log. No when the process it could belong to
    was later killed from outside (-9 SIGKILL of the OOM killer, -15): training went on after the
    exception, and that signal is what ended it."""
    later_signal = any(
        _killed(ex)
        and ex.source == e.source
        and ex.line > e.line
        and (ex.rank is None or e.rank is None or ex.rank == e.rank)
        for ex in exits
    )
    if e.rank is not None and e.rank in exits_by_rank:
        return not _killed(exits_by_rank[e.rank])
    coded = [ex for ex in exits if isinstance(ex.facts.get("exitcode"), int) and ex.facts["exitcode"] > 0]
    if coded and (e.rank is None or not exits_by_rank):
        return True
    if later_signal:
        return False
    near_end = e.line >= source_lines.get(e.source, 0) - TAIL_LINES
    return near_end or (died and not exits and (e.rank is None or not exits_by_rank))


def _note(notes: list[Event]) -> list[Finding]:
    """No failure explains the logs, but they hold an error no rule knows: say which (info)."""
    if not notes:
        return []
    last = max(notes, key=lambda e: e.position)
    what = last.facts.get("exception") or "error"
    text = f"{what}: {last.facts.get('exception_message', '')}".strip().rstrip(":")
    ev = Event(
        C.UNRECOGNISED_ERROR.code,
        last.source,
        last.line,
        last.source_index,
        f"no failure rule matches, but the logs end on an error: {clip(text, 200)}",
        last.rank,
        {k: v for k, v in last.facts.items() if k in ("exception", "exception_message", "frame", "rank")},
        list(last.evidence),
        last.ts,
        3,
        (C.UNRECOGNISED_ERROR.code,),
    )
    return [_finding(C.UNRECOGNISED_ERROR.code, [ev], None, {})]


def _ts_key(events: Sequence[Event]) -> Optional[str]:
    kinds = {e.ts[0] for e in events if e.ts}
    if len(kinds) == 1 and all(e.ts for e in events):
        return next(iter(kinds))
    return None


def _seq_facts(events: list[Event]) -> dict[str, Any]:
    """Per-rank sequence numbers of the timed-out collectives; ranks with a lower number are behind."""
    seq: dict[int, int] = {}
    enq: dict[int, int] = {}
    done: dict[int, int] = {}
    for e in events:
        if e.rank is None:
            continue
        if "seq" in e.facts and e.cause_tier <= 1:
            seq.setdefault(e.rank, e.facts["seq"])
        if "last_enqueued_seq" in e.facts:
            enq[e.rank] = e.facts["last_enqueued_seq"]
        if "last_completed_seq" in e.facts:
            done[e.rank] = e.facts["last_completed_seq"]
    out: dict[str, Any] = {}
    if seq:
        out["seq_by_rank"] = {str(k): v for k, v in sorted(seq.items())}
    if enq:
        out["last_enqueued_by_rank"] = {str(k): v for k, v in sorted(enq.items())}
    if done:
        out["last_completed_by_rank"] = {str(k): v for k, v in sorted(done.items())}
    basis = enq or seq
    if len(set(basis.values())) > 1:
        low = min(basis.values())
        out["lagging_ranks"] = sorted(r for r, v in basis.items() if v == low)
        out["max_seq"] = max(basis.values())
        out["min_seq"] = low
    return out


def _silent_ranks(ranks: list[int]) -> list[int]:
    """Ranks inside the span of those that report a watchdog timeout but absent from it. Every
    healthy rank waiting in the collective times out; the one that never entered it does not."""
    if len(ranks) < 2:
        return []
    # Walked pair by pair: the span of two ranks read from a log may be 10**30 wide.
    gaps = span_gaps(ranks, max(1, len(ranks) // 2))
    return gaps or []


_WORK_KEYS = ("op", "seq", "timeout_ms", "numel_in", "numel_out", "ran_for_ms", "pg_id", "pg_name")


def _finding(
    code: str,
    events: list[Event],
    root_code: Optional[str],
    exits_by_rank: Mapping[int, Event],
    root_exit: Optional[Event] = None,
) -> Finding:
    c = CODES[code]
    first = events[0]
    facts: dict[str, Any] = {k: v for k, v in first.facts.items() if not k.startswith("_")}
    ranks = sorted({e.rank for e in events if e.rank is not None})
    if ranks and "ranks" not in facts:  # a rule that names the ranks involved (both of a clash) knows better
        facts["ranks"] = ranks
    facts["occurrences"] = sum(e.facts.get("occurrences", 1) for e in events)
    msg = first.message
    if code in (C.WATCHDOG_TIMEOUT.code, C.HEARTBEAT_TIMEOUT.code, C.GLOO_TIMEOUT.code):
        # One timeout is printed in several records (the work, the seq line, the watchdog's exit):
        # the first may lack the op or the timeout that a later record of the same work carries.
        for e in events[1:]:
            if (first.rank is None or e.rank == first.rank) and e.facts.get(
                "seq", facts.get("seq")
            ) == facts.get("seq", e.facts.get("seq")):
                for k in _WORK_KEYS:
                    if k in e.facts:
                        facts.setdefault(k, e.facts[k])
        sf = _seq_facts(events)
        facts.update(sf)
        if len(ranks) > 1:
            msg += f" (timed out on {count_label(ranks)})"  # ranges: a thousand ranks stay one short line
        if "lagging_ranks" in sf:
            lagging = sf["lagging_ranks"]
            msg += (
                f"; ranks report different sequence numbers ({sf['min_seq']} vs {sf['max_seq']}): "
                f"{count_label(lagging)} {'is' if len(lagging) == 1 else 'are'} behind"
            )
        silent = _silent_ranks(ranks)
        if silent:
            facts["suspect_ranks"] = silent
            msg += (
                f"; rank(s) {rank_ranges(silent)} reported no timeout: the suspect (never reached the "
                "collective, hung or died first)"
            )
    elif len(ranks) > 1:
        msg += f" (seen on {count_label(ranks)})"
    if first.rank is not None and first.rank in exits_by_rank and "exitcode" not in facts:
        ex = exits_by_rank[first.rank]
        facts["exitcode"] = ex.facts.get("exitcode")
        for k in _FROM_EXIT:  # the launcher's record of that rank says where it ran and how it ended
            if k in ex.facts:
                facts.setdefault(k, ex.facts[k])
        msg += f"; rank {first.rank} exited with {ex.facts.get('exitcode')}"
    elif (
        root_code is None
        and root_exit is not None
        and "exitcode" not in facts
        and (first.rank is None or root_exit.rank is None or first.rank == root_exit.rank)
    ):
        # The launcher's first failure, when ranks cannot tell it apart from the root cause's process.
        facts["exitcode"] = root_exit.facts.get("exitcode")
        for k in _FROM_EXIT:
            if k in root_exit.facts:
                facts.setdefault(k, root_exit.facts[k])
        msg += f"; the launcher reports exit code {facts['exitcode']}"
    if root_code is None:
        facts["root_cause"] = True
    else:
        facts["cascade_of"] = root_code
    evidence: list[Evidence] = []
    for e in events:
        if len(evidence) >= MAX_EVIDENCE:
            break
        for ev in e.evidence:
            if len(evidence) < MAX_EVIDENCE and ev not in evidence:
                evidence.append(ev)
    severity = None
    if "xid_severity" in facts:
        severity = Severity(facts["xid_severity"])
    host = facts.get("host") if isinstance(facts.get("host"), str) else None
    scope = Scope(host=host, rank=first.rank, file=first.source or None)
    return c.finding(msg, scope=scope, evidence=evidence, facts=facts, severity=severity)


def assemble(events: list[Event], source_lines: Mapping[str, int]) -> list[Finding]:
    # What NCCL said about its network is no failure: transport.py judges it for the whole job.
    events = [e for e in events if e.code != OBSERVED]
    exits = _dedupe([e for e in events if e.code == EXIT])
    markers = [e for e in events if e.code == MARKER]
    failures = _dedupe([e for e in events if e.code not in (EXIT, MARKER)])
    root_exit = _root_exit(exits)
    root_rank = root_exit.rank if root_exit is not None else None
    exits_by_rank: dict[int, Event] = {}
    for ex in sorted(exits, key=POSITION):
        if ex.rank is not None and ex.facts.get("exitcode") not in (0, None):
            exits_by_rank.setdefault(ex.rank, ex)
    died = (
        bool(exits_by_rank) or any(e.facts.get("exitcode") not in (0, None) for e in exits) or bool(markers)
    )

    notes = [e for e in failures if e.code == C.UNRECOGNISED_ERROR.code]
    failures = [e for e in failures if e.code != C.UNRECOGNISED_ERROR.code]
    kept: list[Event] = []
    for e in failures:
        if e.code == C.PYTHON_EXCEPTION.code and not _exception_fatal(
            e, exits, exits_by_rank, died, source_lines
        ):
            notes.append(e)  # handled, or the run went on after it: not why the job died
            continue
        kept.append(e)
    # The kernel names the pid it killed; torchrun's table maps pids to ranks.
    pid_rank = {ex.facts["pid"]: ex.rank for ex in exits if ex.rank is not None and "pid" in ex.facts}
    for e in kept:
        if e.rank is None and e.facts.get("pid") in pid_rank:
            e.rank = pid_rank[e.facts["pid"]]
            e.facts["rank"] = e.rank
    kept.extend(disagreeing_timeouts(kept) or crossed_timeouts(kept) or stranded_timeouts(kept))
    # Ray's report that a worker died ("A worker died or was killed ... Worker PID: 1080651 ... Worker exit
    # type: SYSTEM_ERROR") says that it died, not why: a failure that same process logged behind Ray's
    # "(RayWorker pid=1080651) " prefix (the watchdog's timeout, then its abort of the process) is why.
    for e in kept:
        wp = e.facts.get("worker_pid")
        if wp is not None and any(
            o is not e and o.facts.get("proc_pid") == wp and o.cause_tier <= 1 for o in kept
        ):
            e.cause_tier = max(e.cause_tier, 2)
    if root_exit is not None:
        # The exit record becomes a finding only when nothing in the logs explains that rank's death.
        # A Python exception ends its process with exit code 1, or with SIGABRT when torch aborts
        # in its teardown; never with a signal from outside.
        by_signal = _killed(root_exit)
        # Nor does a network error that a peer's death explains (it is that death's echo, not its reason),
        # unless that death was a SIGTERM: a supervisor's teardown after a failure (torchrun's agent, vLLM's
        # worker monitor, mp.spawn), not a death of its own that the error could echo.
        echoes = root_exit.facts.get("signal") != "SIGTERM"
        explains = [
            e
            for e in kept
            if not (
                by_signal
                and (e.code == C.PYTHON_EXCEPTION.code or (echoes and e.facts.get("peer_may_have_died")))
            )
        ]
        # An exit record without a global rank (torchrun's "local_rank: 2") is explained by any cause.
        explained = any(
            e.cause_tier == 0 and (e.rank is None or root_exit.rank is None or e.rank == root_exit.rank)
            for e in explains
        ) or any(e.cause_tier <= 1 and e.rank is not None and e.rank == root_exit.rank for e in explains)
        # SIGABRT (-6) is how the NCCL watchdog ends its process after a timeout or an NCCL error
        # ("terminate called after throwing ... Watchdog caught collective operation timeout"): the
        # abort is that failure's consequence whenever the rank it names could be the one that exited.
        # Exit code 1 is how a raised exception ends its process: a recognised error raised on the ranks
        # (a monitored barrier's or a store's RuntimeError, tier 1) explains it like the abort above.
        if not explained and root_exit.facts.get("exitcode") in (-6, 1):
            explained = any(
                e.cause_tier <= 1 and (e.rank is None or root_exit.rank is None or e.rank == root_exit.rank)
                for e in explains
            )
        # SIGKILL (-9) of a local rank recorded by the launcher after another rank of the same stream had
        # waited out its whole collective timeout: the agent tears every worker down within its monitor
        # interval (5 s) of a death, so a rank that sat minutes in a collective was not left waiting by that
        # kill; the kill came with or after the timeout (ColossalAI#2531: rank 0's ALLGATHER ran 1803741 ms,
        # then local_rank 1 exited -9). A kernel OOM record would be its own tier-0 event and explain the
        # exit. SIGABRT (-6) of another rank recorded after such a timeout is the same story told by the
        # watchdog of that rank (it waited in the same collective and aborted its process: composer's
        # "Rank 1 crashed with exit code -6." after rank 0's "Watchdog caught collective operation
        # timeout", llm-foundry#203); a rank that aborted first on a failure of its own is recorded before
        # the others' timeouts, which come a whole timeout later.
        if not explained and root_exit.facts.get("exitcode") in (-9, -6):
            explained = any(
                e.code == C.WATCHDOG_TIMEOUT.code
                and e.cause_tier <= 1
                and e.source == root_exit.source
                and e.line < root_exit.line
                and (root_exit.rank is None or e.rank != root_exit.rank)
                and isinstance(e.facts.get("ran_for_ms"), int)
                and e.facts["ran_for_ms"] >= _WAITED_OUT_MS
                for e in explains
            )
        # srun's record of tasks ended by SIGTERM / SIGHUP / SIGINT ("task 1: Terminated") is the step being
        # ended: slurmstepd signals every task of the step at once (a time limit, scancel, the abort after
        # another task failed), so the task number names no rank of its own; anything else read for the job
        # (slurmstepd's cancel line and its reason, a hang before it, a peer's error) explains it.
        if not explained and root_exit.facts.get("reporter") == "srun":
            explained = root_exit.facts.get("signal") in ("SIGTERM", "SIGHUP", "SIGINT") and bool(explains)
        if not explained:
            kept.append(_exit_finding_event(root_exit))
    if not kept:
        td = teardown(markers)  # only the launcher's teardown was pasted: a worker died first
        if td is None:
            return _note(notes)
        kept.append(td)

    best = min(e.cause_tier for e in kept)
    group = [e for e in kept if e.cause_tier == best]
    kind = _ts_key(group)

    hardware = any(is_hardware(e) for e in group)
    # A network error that a peer's death also explains (facts["peer_may_have_died"]: NET/IB retries
    # exhausted, a bare unhandled system error) next to a rank that died of its own failure in the same tier:
    # the death leads, the network error is its echo. An abort (SIGABRT) is how ranks end after an NCCL
    # error, and a Python exception may be the NCCL error's own traceback: neither is such a death, unless
    # the exception is one no transport raises (_OWN_EXCEPTIONS).
    died_ranks = {
        e.rank
        for e in group
        if (
            e.code != C.PYTHON_EXCEPTION.code
            or str(e.facts.get("exception", "")).rsplit(".", 1)[-1] in _OWN_EXCEPTIONS
        )
        and e.code in CODES
        and CODES[e.code].category in _DEATHS
        and e.facts.get("signal") != "SIGABRT"
    }

    def rank_key(e: Event) -> tuple[Any, ...]:
        pref = 0 if root_rank is not None and e.rank == root_rank else 1
        # A bare Python exception says less than a recognised failure of the same tier (often it
        # is that failure's own traceback, or its echo): it leads only when nothing else does.
        generic = 1 if e.code == C.PYTHON_EXCEPTION.code or e.facts.get("inferred_from") == "words" else 0
        consequence = 1 if hardware and caused_by_hardware(e) else 0
        slack = (HARDWARE_SLACK_S if consequence else 0.0) + (GENERIC_SLACK_S if generic else 0.0)
        ts = (e.ts[1] + slack) if kind and e.ts else 0.0
        echo = 1 if e.facts.get("peer_may_have_died") and (died_ranks - {e.rank} or None in died_ranks) else 0
        return (echo, ts, consequence, generic, pref, e.position)

    root = min(group, key=rank_key)
    if root.rank is None and root_exit is not None and root_exit.rank is not None and root.cause_tier == 0:
        # A traceback without a rank prefix: torchrun's first failure says whose it was.
        root.rank = root_exit.rank
        root.facts["rank"] = root.rank
        root.facts["rank_from"] = "launcher first failure"
    by_code: dict[str, list[Event]] = defaultdict(list)
    for e in sorted(kept, key=lambda e: (e is not root, e.cause_tier, e.source_index, e.line)):
        by_code[e.code].append(e)
    order = [
        root.code,
        *sorted(
            (c for c in by_code if c != root.code),
            key=lambda c: (min(e.cause_tier for e in by_code[c]), min(map(POSITION, by_code[c]))),
        ),
    ]
    findings = [_finding(root.code, by_code[root.code], None, exits_by_rank, root_exit)]
    for code in order[1:]:
        findings.append(_finding(code, by_code[code], root.code, exits_by_rank))
    return findings


# A log failure of these categories is a reason for a rank to be late, not a symptom of waiting.
_CAUSE_CATEGORIES = {
    "cuda_oom",
    "host_oom",
    "process_crash",
    "gpu_hardware",
    "driver_env",
    "nccl_usage",
    "rendezvous",
    "collective_mismatch",
}


# The dumps' kinds of fault in which ranks wait (see flight/collectives.py), as opposed to mismatches.
_HANG_KINDS = {"missing", "no_dump", "cut_dump", "late", "state", "not_completed"}


def join_flight(logs: list[Finding], flight: list[Finding]) -> list[Finding]:
    """Log findings and flight-recorder findings of one job as one root-cause list. The dump's
    root (which group, collective, sequence number, which ranks) leads, unless the logs show why
    its culprit rank was late (an OOM, a crash, an exception on that rank), or the dump's only
    finding is a missing dump and the logs show a cause on any rank: then that reason leads and
    carries the dump's where (fr_pg, fr_seq, fr_op). Everything else is its cascade."""
    from dataclasses import replace

    if not flight or not logs:
        return logs or flight
    fr_root, log_root = flight[0], logs[0]
    culprits = set(fr_root.facts.get("culprit_ranks") or [])
    why = [
        f
        for f in logs
        if f.category in _CAUSE_CATEGORIES and f.scope.rank is not None and f.scope.rank in culprits
    ]
    # A hang (ranks wait for ones that never came) beside a rank that left no dump: that rank's
    # own failure in its log (an abort on a size mismatch, an OOM, a crash) is what the others
    # waited behind, through whichever peer it broke first. A mismatch the dumps show keeps the
    # lead: a rank that aborted on it is its consequence.
    if fr_root.facts.get("kind") in _HANG_KINDS:
        dead = {r for f in flight for r in f.facts.get("no_dump_ranks") or () if isinstance(r, int)}
        why += [
            f
            for f in logs
            if f.category in _CAUSE_CATEGORIES
            and f.scope.rank is not None
            and f.scope.rank in dead - culprits
        ]
    # A dump missing while the dumps that exist agree says only that some rank died or was torn
    # down before dumping: when the logs show a cause (an OOM, a crash) on any rank, the launcher's
    # teardown after it explains the missing dump, whichever rank it was.
    only_missing = fr_root.facts.get("kind") == "no_dump"
    if log_root.category in _CAUSE_CATEGORIES and (
        log_root.scope.rank is None or log_root.scope.rank in culprits or only_missing
    ):
        why = [log_root]
    if why:
        lead = why[0]
        facts = {
            **lead.facts,
            "fr_code": fr_root.code,
            "fr_pg": fr_root.facts.get("pg"),
            "fr_seq": fr_root.facts.get("seq"),
            "fr_op": fr_root.facts.get("op"),
            "root_cause": True,
        }
        facts.pop("cascade_of", None)
        rest = [f for f in [*flight, *logs] if f is not lead]
        head = replace(lead, facts=facts)
    else:
        head = replace(fr_root, facts={**fr_root.facts, "root_cause": True})
        rest = [*flight[1:], *logs]
    out = [head]
    for f in rest:
        facts = {k: v for k, v in f.facts.items() if k != "root_cause"}
        facts["cascade_of"] = head.code
        out.append(replace(f, facts=facts))
    return out
