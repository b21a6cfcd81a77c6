"""Runs probes under timeouts into a Snapshot, then checks over it into a Report.

Probes run in daemon threads: one that hangs is abandoned at its deadline (reported as
unavailable/timeout) and cannot keep pgdoctor alive; one that raises is `crashed` with the
exception as its reason. Probes that spawn processes own them and must kill them on their
own deadline (pgdoctor.probes.processes), since a thread cannot be killed.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Callable, Optional

from pgdoctor import __version__
from pgdoctor.checks import load_all as load_checks
from pgdoctor.checks.base import CHECKS, CODES, CheckSpec, Config
from pgdoctor.model import (
    CheckResult,
    Finding,
    Measurement,
    ProbeResult,
    Reason,
    Report,
    Severity,
    Snapshot,
    Status,
    sorted_findings,
)
from pgdoctor.probes import load_all as load_probes
from pgdoctor.probes.base import LEVELS, PROBES, ProbeContext, ProbeSpec, ProbeUnavailable, level_rank

ProgressFn = Callable[[str], None]


@dataclass(frozen=True)
class Selection:
    """--only/--skip: names are areas or codes (a code selects its check's area and filters
    findings to that code)."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    def _area_of(self, name: str) -> str:
        return CODES[name].area if name in CODES else name

    def area_selected(self, area: str) -> bool:
        if self.only and area not in {self._area_of(n) for n in self.only}:
            return False
        return area not in self.skip

    def finding_selected(self, f: Finding) -> bool:
        codes_only = {n for n in self.only if n in CODES}
        areas_only = {n for n in self.only if n not in CODES}
        if self.only and f.code not in codes_only and f.area not in areas_only:
            return False
        return f.code not in self.skip and f.area not in self.skip

    @property
    def requested_areas(self) -> tuple[str, ...]:
        return tuple(sorted({self._area_of(n) for n in self.only}))


# Below this address-space limit (ulimit -v) pgdoctor starts no threads. A new thread can run out
# of address space inside its own start-up, after Thread.start has committed to waiting for it,
# and CPython then waits forever: `check --level quick` under 200 MiB hung 1 run in 3, deaf to
# SIGTERM. Each thread costs up to an 8 MiB stack and a 64 MiB malloc arena of address space.
THREADS_NEED_AS = 1 << 30


def _threads_affordable() -> bool:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return soft == resource.RLIM_INFINITY or soft >= THREADS_NEED_AS


def _started(t: threading.Thread) -> bool:
    """Start `t`; False when the process may start no more threads (a process or memory limit)."""
    if not _threads_affordable():
        return False
    try:
        t.start()
        return True
    except RuntimeError as exc:
        if "can't start new thread" not in str(exc):
            raise
        return False


def _run_one(spec: ProbeSpec, ctx: ProbeContext, deadline: float) -> ProbeResult:
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = spec.fn(ctx)
        except BaseException as exc:
            box["error"] = exc

    start = time.monotonic()
    timeout = max(0.0, min(spec.timeout_s, deadline - start))
    t = threading.Thread(target=target, name=f"probe:{spec.name}", daemon=True)
    if _started(t):
        t.join(timeout)
    else:  # no thread to be had (ulimit -u, -v): the probe runs here, bounded by its own calls
        target()
    duration = time.monotonic() - start
    if t.is_alive():
        return ProbeResult(
            spec.name,
            spec.area,
            Status.UNAVAILABLE,
            f"{Reason.TIMEOUT.value}: no answer within {timeout:.1f} s",
            duration,
        )
    err = box.get("error")
    if isinstance(err, ProbeUnavailable):
        return ProbeResult(
            spec.name, spec.area, Status.UNAVAILABLE, f"{err.reason.value}: {err.detail}", duration
        )
    if err is not None:
        return ProbeResult(spec.name, spec.area, Status.CRASHED, f"{type(err).__name__}: {err}", duration)
    value = box.get("value")
    if not isinstance(value, list) or not all(isinstance(m, Measurement) for m in value):
        return ProbeResult(
            spec.name, spec.area, Status.CRASHED, "probe returned something other than measurements", duration
        )
    return ProbeResult(spec.name, spec.area, Status.PASSED, "", duration, tuple(value))


def _ordered(specs: Iterable[ProbeSpec]) -> list[ProbeSpec]:
    """Dependencies (`after`) first, otherwise by name; stable so snapshots diff cleanly."""
    todo = sorted(specs, key=lambda s: s.name)
    names = {s.name for s in todo}
    done: list[ProbeSpec] = []
    placed: set[str] = set()
    while todo:
        for s in todo:
            if all(a in placed or a not in names for a in s.after):
                done.append(s)
                placed.add(s.name)
                todo.remove(s)
                break
        else:
            raise ValueError(f"probe dependency cycle among {[s.name for s in todo]}")
    return done


def collect(
    ctx: ProbeContext,
    selection: Selection = Selection(),
    timeout_s: float = 60.0,
    progress: Optional[ProgressFn] = None,
    host: Optional[str] = None,
) -> Snapshot:
    """Run the selected probes at ctx.level; independent probes run concurrently."""
    load_probes()
    load_checks()
    deadline = time.monotonic() + timeout_s
    # A selected area's probes, plus the probes its checks read from other areas (the software
    # checks need the host's GPU count, say).
    needed = {n for c in CHECKS.values() if selection.area_selected(c.area) for n in c.needs}
    specs = [
        s
        for s in PROBES.values()
        if (selection.area_selected(s.area) or s.name in needed)
        and level_rank(s.level) <= level_rank(ctx.level)
    ]
    results: dict[str, ProbeResult] = {}
    ordered = _ordered(specs)
    try:
        _run_waves(ctx, ordered, results, deadline, progress)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: keep what finished, say what did not, and let the caller render
        # the partial report. Probes' own children are killed by pgdoctor.probes.processes at exit.
        for s in ordered:
            if s.name not in results:
                results[s.name] = ProbeResult(
                    s.name,
                    s.area,
                    Status.UNAVAILABLE,
                    f"{Reason.INTERRUPTED.value}: pgdoctor was interrupted",
                )
    return Snapshot(
        host=host or socket.gethostname(),
        time_unix=ctx.clock(),
        pgdoctor_version=__version__,
        level=ctx.level,
        probes=tuple(results[s.name] for s in ordered),
    )


def was_interrupted(snapshot: Snapshot) -> bool:
    return any(p.reason.startswith(Reason.INTERRUPTED.value) for p in snapshot.probes)


def _run_waves(
    ctx: ProbeContext,
    ordered: list[ProbeSpec],
    results: dict[str, ProbeResult],
    deadline: float,
    progress: Optional[ProgressFn],
) -> None:
    # Waves: every probe whose dependencies are done runs in the same wave, concurrently.
    while len(results) < len(ordered):
        wave = [
            s
            for s in ordered
            if s.name not in results and all(a in results or a not in PROBES for a in s.after)
        ]
        previous = [m for r in results.values() for m in r.measurements]
        wave_ctx = ProbeContext(
            env=ctx.env,
            fs=ctx.fs,
            commands=ctx.commands,
            clock=ctx.clock,
            level=ctx.level,
            options=ctx.options,
            config=ctx.config,
            previous=previous,
        )
        box: dict[str, ProbeResult] = {}
        threads = []
        for s in wave:
            if progress:
                progress(f"probing {s.name}")
            t = threading.Thread(
                target=lambda s=s, box=box, c=wave_ctx: box.__setitem__(s.name, _run_one(s, c, deadline)),
                daemon=True,
            )
            if _started(t):
                threads.append(t)
            else:  # the single-threaded path: this probe in this thread
                box[s.name] = _run_one(s, wave_ctx, deadline)
        try:
            for t in threads:
                # _run_one bounds itself; the extra second only covers thread start-up.
                t.join(max(0.0, deadline - time.monotonic()) + 1.0)
        except KeyboardInterrupt:
            results.update(box)  # the probes of this wave that finished before Ctrl-C count
            raise
        for s in wave:
            results[s.name] = box.get(s.name) or ProbeResult(
                s.name, s.area, Status.UNAVAILABLE, f"{Reason.TIMEOUT.value}: the run's --timeout was reached"
            )


def _not_run(probe: str, level: str) -> str:
    load_probes()  # a replayed snapshot (check --from) ran no probe here
    spec = PROBES.get(probe)
    # A snapshot's level is its writer's label ("bench"; a hand-edited "ultra"): ranked only when it
    # is a probe level (level_rank raised ValueError, exit 4, on check --from).
    if spec is not None and level in LEVELS and level_rank(spec.level) > level_rank(level):
        return f"probe {probe} runs at --level {spec.level} and above (this run: {level})"
    return f"probe {probe} did not run (its area was not selected)"


def _check_status(spec: CheckSpec, snapshot: Snapshot) -> Optional[CheckResult]:
    """skipped/unavailable when a probe the check reads did not run or could not measure."""
    for need in spec.needs:
        p = snapshot.probe(need)
        if p is None:
            return CheckResult(
                spec.name, spec.area, Status.SKIPPED, _not_run(need, snapshot.level), 0.0, spec.codes
            )
        if p.status is not Status.PASSED:
            return CheckResult(
                spec.name, spec.area, Status.UNAVAILABLE, f"probe {need}: {p.reason}", 0.0, spec.codes
            )
    return None


def run_checks(
    snapshot: Snapshot, config: Config, selection: Selection = Selection()
) -> tuple[list[Finding], list[CheckResult]]:
    load_checks()
    findings: list[Finding] = []
    results: list[CheckResult] = []
    for spec in sorted(CHECKS.values(), key=lambda c: c.name):
        if not selection.area_selected(spec.area):
            continue
        blocked = _check_status(spec, snapshot)
        if blocked:
            results.append(blocked)
            continue
        start = time.monotonic()
        try:
            found = [f for f in spec.fn(snapshot, config) if selection.finding_selected(f)]
        except Exception as exc:  # a crashed check is a result, never the end of the run
            results.append(
                CheckResult(
                    spec.name,
                    spec.area,
                    Status.CRASHED,
                    f"{type(exc).__name__}: {exc}",
                    time.monotonic() - start,
                    spec.codes,
                )
            )
            continue
        findings.extend(found)
        # A check's status follows the severities it found: info findings are notes on a pass
        # (the console's [ok], the exit code and every renderer's status agree).
        serious = [f for f in found if f.severity is not Severity.INFO]
        status = Status.FAILED if serious else Status.PASSED
        reason = "" if serious or not found else "info: " + ", ".join(sorted({f.code for f in found}))
        results.append(
            CheckResult(spec.name, spec.area, status, reason, time.monotonic() - start, spec.codes)
        )
    return sorted_findings(findings), results


# Unavailable reasons that are answers, not failures to measure: "this host has no InfiniBand"
# is a complete result of the InfiniBand probe.
ANSWERED = (Reason.NOT_PRESENT.value, Reason.NOT_REQUESTED.value)


def incomplete_reasons(snapshot: Snapshot, checks: Sequence[CheckResult], selection: Selection) -> list[str]:
    """Why a run is incomplete (exit 3): a crashed or timed-out probe, a crashed check, or an
    area the user asked for by name that could not be measured (absent hardware is an answer)."""
    reasons = []
    requested = set(selection.requested_areas)
    for p in snapshot.probes:
        timed_out = p.reason.startswith((Reason.TIMEOUT.value, Reason.INTERRUPTED.value))
        if p.status is Status.CRASHED or timed_out:
            reasons.append(f"probe {p.name} {p.status.value}: {p.reason}")
        elif p.status is Status.UNAVAILABLE and p.area in requested and not p.reason.startswith(ANSWERED):
            reasons.append(f"probe {p.name} unavailable: {p.reason}")
    for c in checks:
        if c.status is Status.CRASHED:
            reasons.append(f"check {c.name} crashed: {c.reason}")
    return reasons


def build_report(
    command: str,
    snapshot: Snapshot,
    config: Config,
    selection: Selection = Selection(),
    meta: Optional[dict] = None,
) -> Report:
    findings, checks = run_checks(snapshot, config, selection)
    return Report(
        command=command,
        snapshot=snapshot,
        findings=tuple(findings),
        checks=tuple(checks),
        requested_areas=selection.requested_areas,
        incomplete_reasons=tuple(incomplete_reasons(snapshot, checks, selection)),
        meta=dict(meta or {}),
    )
