"""`pgdoctor run -- COMMAND`: the job-script wrapper. COMMAND runs as a child with the evidence
environment (knowledge/evidence_env.py; the user's values win), its output passes through
unchanged and is kept, SIGINT/SIGTERM go to it, and pgdoctor exits with its code. While it runs,
progress is watched from evidence of steps (hang/progress.py): output lines with new step
content, the step counter and collective sequence number of the ranks' sockets; never CPU time,
which a rank spinning in a busy-wait burns without moving. When nothing moves for
`stall_after_s`, the `hang` snapshot of the job's ranks is taken and saved, before a watchdog or
the launcher kills them; in it a rank makes progress only when its frame moves. When COMMAND
ends, everything kept is diagnosed with `diagnose` and one report says the root cause."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Optional

from pgdoctor.checks.codes.hang import HANG_ALL_WAITING, HANG_CULPRIT, HANG_PROGRESSING
from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.hang import shim
from pgdoctor.hang.api import examine
from pgdoctor.hang.progress import Lines, counters_moved
from pgdoctor.knowledge.evidence_env import SHIM_DIR, prepared
from pgdoctor.model import Report
from pgdoctor.probes import guard, live
from pgdoctor.probes.processes import kill_group, reap_with_group, track, untrack
from pgdoctor.probes.ranks import ProcFs, Rank, Table

ROLL_CALL_FAILS = frozenset({HANG_CULPRIT.code, HANG_ALL_WAITING.code})
# The job runs under a guard (probes/guard.py), a child subreaper that is the command's parent: ranks that
# leave the launcher's process group (torchrun starts each in a session of its own) stay its descendants,
# and when the command ends, or `run` ends however it ends (a SIGKILL by the OOM killer or a scheduler),
# the guard kills every one of them. It reads the job's environment from a pipe whose write end only
# `run` holds, then waits for that end to close.
# Run by its path, isolated (-I): it imports nothing but the standard library.
POLL_S = 0.25
RANKS_EVERY_S = 1.0


@dataclass
class Watch:
    """What the watcher saw; the stall snapshots it took."""

    last_progress: float
    last_output: float
    lines: Lines = field(default_factory=Lines)
    counters: dict[int, Any] = field(default_factory=dict)  # pid -> the socket's last progress answer
    progress_lines: int = 0  # output lines that showed progress
    socket_moves: int = 0  # looks at which a rank's step or collective sequence number had moved
    last_snapshot: float = 0.0
    # When the last snapshot that found a hang (a fail finding) began: a later snapshot without one
    # (the ranks exiting after the job stepped on, slowly on a loaded node) proves nothing stalled.
    last_hang_snapshot: float = 0.0
    snapshotting: bool = False
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    hang_report: Optional[Report] = None
    armed: bool = True  # a stall takes one snapshot; progress re-arms it
    quiet_but_moving: int = 0  # snapshots that found progress (discarded)


def _pump(src: BinaryIO, dest: BinaryIO, keep: BinaryIO, watch: Watch, lock: threading.Lock) -> None:
    """The child's output, passed through unchanged and kept for the diagnosis.

    stdout and stderr share one kept file, so only whole lines go into it: a read returns
    whatever the pipe holds, often half a line under load, and two pumps writing halves would
    splice a traceback's exception line with the other stream's output."""
    partial = b""
    for chunk in iter(lambda: src.read1(1 << 16), b""):  # type: ignore[attr-defined]
        partial += chunk
        cut = partial.rfind(b"\n") + 1
        moved = stepped = False
        if cut or len(partial) > (1 << 20):  # a line longer than 1 MiB is kept in pieces
            whole, partial = (partial[:cut], partial[cut:]) if cut else (partial, b"")
            with lock:
                keep.write(whole)
                for line in whole.splitlines():
                    if watch.lines.feed(line[:4096]):
                        watch.progress_lines += 1
                        moved = True
                        stepped = stepped or watch.lines.stepped
        try:
            dest.write(chunk)
            dest.flush()
        except (OSError, ValueError):
            pass  # our own stdout went away: the job goes on, its output is still kept
        now = time.monotonic()
        watch.last_output = now
        # A heartbeat or a repeated warning is output, not progress; nor is what reading the ranks
        # makes them print during a snapshot (torch warns of a deprecated variable on a recorder dump),
        # but a step counter that moves then is: the job went on while it was read (a slow snapshot
        # on a loaded node), and the run must not end with that snapshot's hang as its root cause.
        if moved and (stepped or not watch.snapshotting):
            watch.last_progress = now
            watch.armed = True
    if partial:  # the last line had no newline
        with lock:
            keep.write(partial)


class Supervisor:
    def __init__(
        self,
        command: Sequence[str],
        stall_after_s: float,
        evidence_dir: str,
        hang_timeout_s: float = 30.0,
        env: Optional[Mapping[str, str]] = None,
    ):
        self.command = list(command)
        self.stall_after_s = stall_after_s
        self.evidence_dir = evidence_dir
        self.hang_timeout_s = hang_timeout_s
        self.live_dir = tempfile.mkdtemp(prefix="pgdoctor-live-")  # 0700: the ranks' sockets and pipes
        self.env, self.applied = prepared(env if env is not None else os.environ, evidence_dir, self.live_dir)
        # The shim that starts each rank's socket; it goes with live_dir when the run ends.
        shim.install(SHIM_DIR.format(live=self.live_dir))
        self.fs = ProcFs()
        now = time.monotonic()
        self.watch = Watch(last_progress=now, last_output=now)
        self.child: Optional[subprocess.Popen[bytes]] = None
        self.signals: list[str] = []
        self._guard_write: Optional[int] = None

    def run(self) -> int:
        os.makedirs(self.evidence_dir, exist_ok=True)
        log_path = os.path.join(self.evidence_dir, "launcher.log")
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        lock = threading.Lock()
        try:
            with open(log_path, "wb") as keep:
                # Own session: a Ctrl-C at the terminal reaches pgdoctor only, which forwards it once.
                guard_read, self._guard_write = os.pipe()
                try:
                    self.child = subprocess.Popen(
                        guard.argv(guard_read, self.command),
                        env=guard.own_env(),
                        stdin=None,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        start_new_session=True,
                        pass_fds=(guard_read,),
                    )
                finally:
                    os.close(guard_read)
                track(self.child)
                # The environment in a thread: past the pipe's buffer a write waits for the guard to read.
                threading.Thread(
                    target=guard.send_env, args=(self._guard_write, dict(self.env)), daemon=True
                ).start()
                for s in old:
                    signal.signal(s, self._forward)
                pumps = [
                    threading.Thread(target=_pump, args=(src, dest, keep, self.watch, lock), daemon=True)
                    for src, dest in (
                        (self.child.stdout, sys.stdout.buffer),
                        (self.child.stderr, sys.stderr.buffer),
                    )
                ]
                for t in pumps:
                    t.start()
                self._watch_until_exit()
                for t in pumps:
                    t.join(timeout=5)
            return self.child.returncode
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            if self._guard_write is not None:
                # pgdoctor itself failed while the job runs: the guard, seeing its pipe close, kills the
                # whole job, wherever its processes went; the group kill is the fallback.
                os.close(self._guard_write)
            if self.child is not None:
                if reap_with_group(self.child) is None:
                    try:
                        self.child.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        kill_group(self.child)
                        self.child.wait()
                untrack(self.child)
            shutil.rmtree(self.live_dir, ignore_errors=True)

    def _forward(self, signum: int, frame: Any) -> None:
        self.signals.append(signal.Signals(signum).name)
        # To the job's whole group, as a terminal's Ctrl-C reaches a foreground job: the launcher has
        # its own session, and one that does not pass the signal on (a shell) would leave its ranks
        # running. Only while the launcher is unreaped (returncode, not poll: poll would reap it),
        # so the group id cannot belong to anyone else yet.
        if self.child is not None and self.child.returncode is None:
            kill_group(self.child, signum)
            # A stopped job (kill -STOP, a debugger's stop) holds the signal pending until it runs
            # again: `run` then waited for it forever, `timeout 90 pgdoctor run` included. A shell's
            # `kill` of a stopped job resumes it the same way.
            kill_group(self.child, signal.SIGCONT)

    def _ranks(self) -> list[Rank]:
        assert self.child is not None
        return Table.read(self.fs, skip=[os.getpid()]).resolve(self.child.pid)

    def _watch_until_exit(self) -> None:
        assert self.child is not None
        ranks: list[Rank] = []
        looked = 0.0
        # reap_with_group: what the launcher leaves in its group when it ends (a shell's background
        # ranks, a rank's own helpers) is killed while the launcher is a zombie, before it is reaped.
        while reap_with_group(self.child) is None:
            time.sleep(POLL_S)
            now = time.monotonic()
            if now - looked >= RANKS_EVERY_S:
                looked = now
                ranks = self._ranks()
                if self._moved(ranks, now):
                    self.watch.last_progress = now
                    self.watch.armed = True
            if ranks and self.watch.armed and now - self.watch.last_progress >= self.stall_after_s:
                self.watch.armed = False
                self._snapshot(ranks, now)

    def _moved(self, ranks: Sequence[Rank], now: float) -> bool:
        """A rank's socket says its step counter or collective sequence number moved. CPU time is
        not asked: a spinning rank burns it while standing still."""
        moved = False
        for r in ranks:
            path = live.socket_path(r.proc.pid, r.proc.uid, r.proc.environ)
            if path is None:
                continue
            answer = live.ask(path, 0.5, request="progress")
            if answer is None:
                continue  # busy holding the GIL, or gone: no evidence either way
            if counters_moved(self.watch.counters.get(r.proc.pid), answer):
                moved = True
            self.watch.counters[r.proc.pid] = answer
        if moved:
            self.watch.socket_moves += 1
        return moved

    def _snapshot(self, ranks: Sequence[Rank], now: float) -> None:
        where = os.path.join(self.evidence_dir, f"hang-{len(self.watch.snapshots) + 1}")
        quiet_s = round(now - self.watch.last_progress, 1)
        started = time.monotonic()
        self.watch.snapshotting = True
        try:
            report = examine(
                ranks=ranks,
                samples=3,
                interval_s=0.3,
                timeout_s=self.hang_timeout_s,
                save_dir=where,
                quiet_s=quiet_s,
            )
        finally:
            self.watch.snapshotting = False
        # When it began: a step seen while it was taken is progress after it (recovered_after_snapshot).
        self.watch.last_snapshot = started
        culprit = next((f for f in report.findings if f.severity.value == "fail"), None)
        roll_call = [f for f in report.findings if f.code in ROLL_CALL_FAILS]
        moving = any(f.code == HANG_PROGRESSING.code for f in report.findings) and not roll_call
        if moving or (culprit is None and all(f.severity.value == "info" for f in report.findings)):
            # The ranks moved after all (a slow start on a loaded node, a long evaluation): no
            # hang, and its files must not outvote a later snapshot in the final diagnosis. A
            # flight recorder read mid-step says nothing then (one rank a collective ahead of a
            # peer that is on its way). The watch starts again from now.
            shutil.rmtree(where, ignore_errors=True)
            self.watch.quiet_but_moving += 1
            self.watch.last_progress, self.watch.armed = time.monotonic(), True
            return
        self.watch.hang_report = report
        if culprit is not None:
            self.watch.last_hang_snapshot = started
        self.watch.snapshots.append(
            {
                "dir": where,
                "after_quiet_s": quiet_s,
                "ranks": len(ranks),
                "culprit": culprit.message if culprit else None,
            }
        )
        print(
            f"pgdoctor run: no progress for {quiet_s:.0f} s; hang snapshot saved to "
            f"{where}" + (f": {culprit.message}" if culprit else ""),
            file=sys.stderr,
            flush=True,
        )


def exit_status(returncode: int) -> int:
    """A child killed by signal N exits the way a shell reports it: 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def final_report(
    sup: Supervisor, returncode: int, duration_s: float, preflight: Optional[Mapping[str, Any]] = None
) -> Report:
    """Everything the run kept, diagnosed as `pgdoctor diagnose DIR` would."""
    diag = diagnose_paths([sup.evidence_dir])
    findings = diag.findings
    w = sup.watch
    # A job that succeeded, with no stall or with steps again after its last snapshot (a phase
    # that neither printed nor stepped nor moved its frame for a while), has no root cause.
    recovered = bool(w.snapshots) and w.last_progress > (w.last_hang_snapshot or w.last_snapshot)
    if returncode == 0 and (not w.snapshots or recovered):
        findings = tuple(f for f in findings if f.severity.value != "fail")  # old errors a job recovered from
    meta = {
        **diag.meta,
        "command": sup.command,
        "exit_code": exit_status(returncode),
        "duration_s": round(duration_s, 3),
        "stall_after_s": sup.stall_after_s,
        "stall_snapshots": sup.watch.snapshots,
        "quiet_snapshots_without_hang": sup.watch.quiet_but_moving,
        "progress": {
            "output_lines": w.progress_lines,
            "socket_moves": w.socket_moves,
            "recovered_after_snapshot": recovered,
        },
        "env_applied": sup.applied,
        "signals_forwarded": sup.signals,
        "evidence_dir": sup.evidence_dir,
    }
    if preflight is not None:
        meta["preflight"] = dict(preflight)
    return Report(command="run", snapshot=None, findings=findings, meta=meta, extra=diag.extra)
