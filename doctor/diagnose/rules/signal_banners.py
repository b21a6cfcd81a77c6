"""Fatal-signal banners of the C++ failure handlers that frameworks install, and launcher exit lines that
name a rank's return code.

Formats, read at their source:
- glog's failure signal handler (src/signalhandler.cc, glog 0.3-0.7; installed by PaddlePaddle, Caffe,
  Ray < 2, MXNet builds with glog, many C++ services): "*** Aborted at 1626842 (unix time) try "date -d
  @1626842" if you are using GNU date ***", "PC: @ 0x0 (unknown)", then "*** SIGSEGV (@0x0) received by PID
  5342 (TID 0x7efe568a6700) from PID 0; stack trace: ***" (a signal it has no name for: "*** Signal 7
  (@0x..) ..."; off Linux there is no "from PID N; "; glog 0.7 prints the TID as std::thread::id; absl
  before 2023 printed the same banner without the address, with " on cpu N"). The first frame of the
  stack under it that is not the handler's own is kept (`facts.frame`). Its
  kFailureSignals: SIGSEGV, SIGILL, SIGFPE, SIGABRT, SIGBUS, SIGTERM. si_pid is the sender: 0 for a fault
  the kernel raised, the launcher's or a user's PID for a SIGTERM. (Paddle's own "[SignalInfo: *** SIGSEGV
  ... from PID 0 ***]" is framework_exits'.)
- Abseil's failure signal handler (absl/debugging/failure_signal_handler.cc, WriteSignalMessage; installed
  by Ray 2.x's raylet and core workers, JAX/XLA, TensorFlow binaries, gRPC tools): "*** SIGSEGV received at
  time=1700000000 on cpu 5 ***" (no cpu: "*** SIGABRT received at time=1700000000 ***"; unnamed: "***
  Signal 7 received at time=..."), then "PC: @ 0x7f.. (unknown) fn". Its signals: SIGSEGV, SIGILL, SIGFPE,
  SIGABRT, SIGTERM, SIGBUS, SIGTRAP.
- MosaicML Composer's launcher (composer/cli/launcher.py, 0.10-0.2x, _print_process_exit_status and
  _aggregate_process_returncode): "Global rank 0 (PID 208865) exited with code -11" (Popen's returncode:
  -N for signal N), also as "ERROR:composer.cli.launcher:Global rank 0 ..."; _monitor_processes logs the
  death first as "ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11." (no PID).

- UCX's error handler (ucs/debug/debug.c ucs_debug_print_backtrace, UCX 1.4 to today; installed in every
  process that loads UCX: Open MPI / HPC-X, NCCL's UCX plugin, NIXL, UCC, torch's ucc backend) prints
  "[host:pid:0:tid] Caught signal 11 (Segmentation fault: ...)" (process_crash reads it) and then "====
  backtrace (tid:   4304) ====" (1.4-1.5: "==== backtrace ====") with frames " 0 0x0000000000014420
  __funlockfile()  ???:0" (1.4-1.7: " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2a4) [0x7f..]"). It prints
  the block for a fatal signal or a fatal error (ucs_fatal_error: an assertion, then abort). A paste that
  starts at the header, its signal line cut, shows the same death (tier 2, as the banners above); a header
  with no frame under it (a log that merely names the block) stays silent.

- zsh's own words for a job a signal ended (Src/signames2.awk, its table of signal.h's comments), where bash
  prints strsignal()'s: "zsh: segmentation fault  python train.py", "zsh: bus error  python train.py", "zsh:
  abort      python train.py", "zsh: illegal hardware instruction  python train.py", "zsh: floating point
  exception  python train.py", "zsh: trace trap  python train.py"; its job table: "[1]    1234 abort
  python train.py" (with "(core dumped)" after the word where a core was written). "killed" and
  "terminated" are host_oom's and external_kills'.
- the C++ runtime's last words before abort() when nothing was thrown (std::terminate with no exception:
  a std::thread destroyed while joinable, a rethrow outside a handler): "terminate called without an active
  exception" (libstdc++), SIGABRT; after an error line it is that error's end, and left to the error's row.
- Windows: Python's faulthandler (Modules/faulthandler.c faulthandler_exc_handler, 3.3+) "Windows fatal
  exception: access violation" (also "stack overflow", "illegal instruction", "in page error", "int divide by
  zero"; its "code 0x..." form is left: it prints C++ exceptions that were caught too), and the NTSTATUS a
  crashed process exits with, as IDEs and launchers print it: "Process finished with exit code -1073741819
  (0xC0000005)" (access violation), 3221225477 unsigned, -1073741571 / 0xC00000FD (stack overflow),
  -1073741795 / 0xC000001D (illegal instruction), -1073740791 / 0xC0000409 (a fast fail: abort() under MSVC,
  SIGABRT).

A fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP) or SIGABRT is the rank's death on a signal (RUN131); the
banner is the handler's record of that death, so it stands at tier 2: what led to it and shows in the log
(an uncaught C++ exception or failed check before a SIGABRT, an OOM, an NCCL error, a hang the watchdog
ended) leads, and alone it names the crash. SIGTERM was sent from outside (a launcher stopping the
survivors, a scheduler, a user: RUN133 as a consequence); Abseil's SIGTERM banner is left silent, since
Ray 2.x's workers print it on every routine shutdown.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launcher import EXIT, exit_event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.signals import SIGNAL_NAMES
from pgdoctor.model import lazy_re

# absl before 2023 printed glog's banner with " on cpu N" and without the address.
_GLOG = lazy_re.compile(
    r"\*\*\* (?:(?P<name>SIG[A-Z]{2,6})|Signal (?P<num>\d+)) (?:\(@(?:0x)?[0-9a-fA-F]+\) )?received by "
    r"PID (?P<pid>\d+) \(TID [^)]*\)(?: on cpu (?P<cpu>\d+))?(?: from PID (?P<sender>\d+))?;? stack trace:? "
    r"\*\*\*"
)
# The first frame of the stack printed under the banner that is not the handler's own.
_FRAME = lazy_re.compile(r"@\s+0x[0-9a-fA-F]+\s+(?:\d+\s+)?(?:\(unknown\)\s+)?([A-Za-z_][\w:~<>.]{1,120})")
_HANDLER_FRAMES = lazy_re.compile(
    r"^(?:\(unknown\)|__restore_rt|raise|abort|gsignal|__GI_\w+|__pthread_kill\w*|pthread_kill)$"
)
_ABSL = lazy_re.compile(
    r"\*\*\* (?:(?P<name>SIG[A-Z]{2,6})|Signal (?P<num>\d+)) received at time=\d+(?: on cpu "
    r"(?P<cpu>\d+))? \*\*\*"
)
# _monitor_processes' first record of the death, before the clean-up: "ERROR:composer.cli.launcher:Rank 0
# crashed with exit code -11." (no PID; a title keeps only this line).
_COMPOSER = lazy_re.compile(
    r"\bGlobal rank (?P<rank>\d+) \(PID (?P<pid>\d+)\) exited with code (?P<code>-?\d+)|"
    r"(?:^|[\s:])Rank (?P<rank2>\d+) crashed with exit code (?P<code2>-?\d+)"
)
_FAULTS = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP"}
_UCX_BT = lazy_re.compile(r"==== backtrace(?: \(tid:\s*\d+\))? ====")
_UCX_BT_FRAME = lazy_re.compile(
    r"^\s*(?P<n>\d+)\s+(?:0x[0-9a-fA-F]+\s+(?P<fn>[^\s(<]+)|\S+\((?P<sym>[\w:~<>.]*)\+0x[0-9a-fA-F]+\)\s+\[0x)"
)
_UCX_HANDLER = lazy_re.compile(
    r"^(?:killpg|raise|gsignal|abort|__sigaction|__restore_rt|__nss_database_lookup|__funlockfile|"
    r"_L_unlock_\d+|ucs_\w+|\?\?\?|)$"
)
# The signal line of the same block or another crash record in view: its own row reads the death.
_UCX_SIGNAL_SHOWN = lazy_re.compile(r"Caught signal \d+|received by PID|Signal: \w|Fatal Python error")


def _banner(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "SignalInfo:" in hit.text:
        return None  # Paddle's summary line: framework_exits reads it with its FatalError line
    sig = m.group("name") or SIGNAL_NAMES.get(int(m.group("num")), f"signal {m.group('num')}")
    handler = "glog" if row.name.startswith("glog") else "absl"
    facts: dict[str, Any] = {"signal": sig, "reporter": f"{handler} failure signal handler"}
    gd = m.groupdict()
    if gd.get("pid"):
        facts["pid"] = int(gd["pid"])
    if gd.get("sender") and gd["sender"] != "0":
        facts["sender_pid"] = int(gd["sender"])
    if gd.get("cpu"):
        facts["cpu"] = int(gd["cpu"])
    who = hit.who()
    if sig == "SIGTERM" and handler == "absl":
        return []  # Ray 2.x's workers print it for every routine shutdown of a worker or a cluster
    if sig == "SIGTERM":
        by = f" by PID {facts['sender_pid']}" if "sender_pid" in facts else ""
        msg = (
            f"{who} was terminated (SIGTERM{by}, {handler}'s failure handler): stopped from outside, by a "
            "launcher stopping the other ranks after one failed, a scheduler's limit or preemption, or a user"
        )
        return [row.event(hit, msg, facts, code=C.RANK_EXITED.code, tier=2, dedupe=(C.RANK_EXITED.code, sig))]
    if sig not in _FAULTS and sig != "SIGABRT":
        return []
    tail = (
        "an uncaught C++ exception or a failed check aborted it: the error printed before it is the cause"
        if sig == "SIGABRT"
        else "the stack trace below names the library it died in"
    )
    for ln in hit.after(12, same_rank=False):
        fn = _FRAME.search(ln.text)
        if fn and not _HANDLER_FRAMES.match(fn.group(1)):
            facts["frame"] = fn.group(1)
            break
    where = f" in {facts['frame']}" if "frame" in facts else ""
    msg = f"{who} died on {sig}{where} ({handler}'s failure handler): {tail}"
    return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, hit.rank, sig))]


def _ucx_backtrace(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    frames = []
    for ln in hit.after(12, same_rank=False):
        f = _UCX_BT_FRAME.match(ln.text)
        if not f:
            break
        frames.append(f.group("fn") or f.group("sym") or "")
    if not frames:
        return None  # the header alone: nothing shows that a process died
    near = [*hit.before(30, same_rank=False), *hit.after(40, same_rank=False)]
    if any(_UCX_SIGNAL_SHOWN.search(ln.text) for ln in near):
        return []  # the signal line (or another handler's record) is in view: its row reads the death
    facts: dict[str, Any] = {"reporter": "ucx", "signal_line": "cut"}
    own = [fn for fn in frames if not _UCX_HANDLER.match(fn)]
    if own:
        facts["frame"] = own[0]
    where = f" in {facts['frame']}" if "frame" in facts else ""
    msg = (
        f"{hit.who()} died{where}: UCX's error handler printed its backtrace (the 'Caught signal' line above "
        "it is not in the paste): a fatal signal or a fatal UCX error in that process"
    )
    return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, hit.rank, "ucx backtrace"))]


_ZSH_SIG = {
    "segmentation fault": "SIGSEGV",
    "bus error": "SIGBUS",
    "abort": "SIGABRT",
    "illegal hardware instruction": "SIGILL",
    "floating point exception": "SIGFPE",
    "trace trap": "SIGTRAP",
}
_ZSH_CRASH = lazy_re.compile(
    r"^\s*(?:zsh: |(?:\[\d+\][+-]? +)?(?P<pid>\d+) +)(?P<sig>"
    + "|".join(_ZSH_SIG)
    + r")(?: +\(core dumped\))?(?P<gap> +)(?P<cmd>\S.*)$"
)
_TERMINATE = lazy_re.compile(r"terminate called without an active exception")
_ERROR_BEFORE = lazy_re.compile(r"\w(?:Error|Exception)\b|\berror\b|\bERROR\b|\bFATAL\b")
_WIN_FAULT = lazy_re.compile(
    r"Windows fatal exception: (?P<what>access violation|stack overflow|illegal instruction|in page error|"
    r"int divide by zero)"
)
_NTSTATUS = {
    "c0000005": ("access violation", "SIGSEGV"),
    "c00000fd": ("stack overflow", "SIGSEGV"),
    "c000001d": ("illegal instruction", "SIGILL"),
    "c0000409": ("fast fail (abort)", "SIGABRT"),
}
_NT_BY_NUMBER = {
    "-1073741819": "c0000005",
    "3221225477": "c0000005",
    "-1073741571": "c00000fd",
    "3221225725": "c00000fd",
    "-1073741795": "c000001d",
    "3221225501": "c000001d",
    "-1073740791": "c0000409",
    "3221226505": "c0000409",
}
_WIN_EXIT = lazy_re.compile(
    r"(?i:exit(?:ed)? (?:with )?code|exit status|return(?:ed)? code|returncode)[ :=]*(?:"
    r"(?P<num>" + "|".join(_NT_BY_NUMBER) + r")\b(?: \((?i:0x)[0-9A-Fa-f]{8}\))?|"
    r"(?i:0x)(?P<hex>(?i:c0000005|c00000fd|c000001d|c0000409))\b)"
)


def _zsh_crash(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("pid") and len(m.group("gap")) < 2 and "core dumped" not in hit.text:
        return None  # "1234 abort the run": the job table's columns are wider than one blank
    sig = _ZSH_SIG[m.group("sig")]
    facts: dict[str, Any] = {"signal": sig, "reporter": "zsh", "command": clip(m.group("cmd"), 200)}
    msg = f"the shell (zsh) reports the command died on {sig} ({m.group('sig')}): {clip(m.group('cmd'), 80)}"
    return [row.event(hit, msg, facts, tier=2 if sig == "SIGABRT" else 0, dedupe=(row.code, "zsh", sig))]


def _terminate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_ERROR_BEFORE.search(ln.text) for ln in hit.before(6)):
        return []  # the error printed before it is what the process ended on; its own row reads it (or not)
    facts: dict[str, Any] = {"signal": "SIGABRT", "reporter": "c++ runtime"}
    msg = (
        f"{hit.who()} aborted: std::terminate with no exception in flight (a std::thread destroyed while "
        "still joinable, or a rethrow outside a handler); the lines before it say where"
    )
    return [row.event(hit, msg, facts, tier=2, dedupe=(row.code, hit.rank, "terminate"))]


def _win_fault(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what")
    sig = {"illegal instruction": "SIGILL", "int divide by zero": "SIGFPE"}.get(what, "SIGSEGV")
    facts: dict[str, Any] = {"signal": sig, "windows_exception": what, "reporter": "faulthandler"}
    msg = f"{hit.who()} died on a Windows fatal exception ({what}; faulthandler printed the Python frames)"
    return [row.event(hit, msg, facts, dedupe=(row.code, hit.rank, "windows", what))]


def _win_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = _NT_BY_NUMBER[m.group("num")] if m.group("num") else m.group("hex").lower()
    what, sig = _NTSTATUS[code]
    facts: dict[str, Any] = {"signal": sig, "ntstatus": f"0x{code.upper()}", "windows_exception": what}
    msg = f"a process exited with NTSTATUS 0x{code.upper()} ({what}): it crashed on Windows"
    return [
        row.event(hit, msg, facts, tier=2 if sig == "SIGABRT" else 1, dedupe=(row.code, "ntstatus", code))
    ]


def _composer(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = int(m.group("code") or m.group("code2"))
    if code == 0:
        return []
    rank = int(m.group("rank") or m.group("rank2"))
    facts: dict[str, Any] = {"exitcode": code, "rank": rank, "reporter": "composer launcher", "first": True}
    if m.group("pid"):
        facts["pid"] = int(m.group("pid"))
    if code < 0 and -code in SIGNAL_NAMES:
        facts["signal"] = SIGNAL_NAMES[-code]
    return [exit_event(hit, facts, rank)]


SIGNATURES = (
    Signature(
        "glog failure signal banner",
        _GLOG,
        _banner,
        C.FATAL_SIGNAL.code,
        anchors=(b"received by PID",),
        words=("received by pid",),
    ),
    Signature(
        "absl failure signal banner",
        _ABSL,
        _banner,
        C.FATAL_SIGNAL.code,
        anchors=(b" received at time=",),
        words=("received at time=",),
    ),
    Signature(
        "ucx backtrace, signal line cut",
        _UCX_BT,
        _ucx_backtrace,
        C.FATAL_SIGNAL.code,
        anchors=(b"==== backtrace",),
        words=("==== backtrace",),
        examples=("==== backtrace (tid:   4304) ====",),
    ),
    Signature(
        "zsh crash words",
        _ZSH_CRASH,
        _zsh_crash,
        C.FATAL_SIGNAL.code,
        anchors=(
            b"segmentation fault",
            b"bus error",
            b"abort",
            b"illegal hardware",
            b"floating point",
            b"trace trap",
        ),
        words=(
            "segmentation fault",
            "bus error",
            "abort",
            "illegal hardware",
            "floating point",
            "trace trap",
        ),
        anchor_from="zsh's signal words after its 'zsh: ' or its job number and pid",
        examples=("zsh: bus error  python train.py", "[1]    1234 abort      python train.py"),
    ),
    Signature(
        "terminate without an exception",
        _TERMINATE,
        _terminate,
        C.FATAL_SIGNAL.code,
        anchors=(b"terminate called without an active exception",),
        words=("terminate called without an active exception",),
    ),
    Signature(
        "windows fatal exception",
        _WIN_FAULT,
        _win_fault,
        C.FATAL_SIGNAL.code,
        anchors=(b"Windows fatal exception: ",),
        words=("windows fatal exception: ",),
    ),
    Signature(
        "windows crash status",
        _WIN_EXIT,
        _win_exit,
        C.FATAL_SIGNAL.code,
        anchors=(*(n.encode() for n in _NT_BY_NUMBER), b"C0000", b"c0000"),
        worth=(
            rb"(?:" + "|".join(_NT_BY_NUMBER).encode() + rb")\b",
            rb"0x[Cc]0000(?:005|0[Ff][Dd]|01[Dd]|409)\b",
        ),
        words=(*_NT_BY_NUMBER, "0xc0000"),
        anchor_from="the exit status as a number or NTSTATUS after the words that name it",
        examples=(
            "Process finished with exit code -1073741819 (0xC0000005)",
            "Process finished with exit code 3221225477",
            "exited with code 0xC0000409",
        ),
    ),
    Signature(
        "composer launcher exit",
        _COMPOSER,
        _composer,
        EXIT,
        tier=3,
        anchors=(b") exited with code", b" crashed with exit code"),
        words=("exited with code", "crashed with exit code"),
    ),
)

parse = gated_reader(SIGNATURES)
