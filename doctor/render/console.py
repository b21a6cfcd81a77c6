"""Doctor-style console report: one status line per area, findings indented under it."""

from __future__ import annotations

import datetime
import functools
from collections import defaultdict
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from pgdoctor.knowledge import terminal
from pgdoctor.knowledge.areas import area_title
from pgdoctor.model import Finding, Report, Severity, Status
from pgdoctor.render import report_areas

_MARK = {
    "ok": ("[ok]", "green"),
    "warn": ("[!]", "yellow"),
    "fail": ("[x]", "red"),
    "none": ("[-]", "dim"),
    "info": ("[ok]", "green"),
}


def area_status(area: str, report: Report) -> tuple[str, str]:
    """(mark key, detail) for one area."""
    findings = [f for f in report.findings if f.area == area]
    worst = max((f.severity.rank for f in findings), default=-1)
    if worst == Severity.FAIL.rank:
        return "fail", ""
    if worst == Severity.WARN.rank:
        return "warn", ""
    probes = [p for p in (report.snapshot.probes if report.snapshot else ()) if p.area == area]
    checks = [c for c in report.checks if c.area == area]
    crashed = [c for c in checks if c.status is Status.CRASHED] + [
        p for p in probes if p.status is Status.CRASHED
    ]
    if crashed:
        return "fail", f"{crashed[0].name} crashed: {crashed[0].reason}"
    ran = [c for c in checks if c.status in (Status.PASSED, Status.FAILED)]
    # The probe named like its area (gpu, host, software) is what the area is about: when it
    # could not measure and nothing was found, a side check that passed does not make it [ok].
    primary = next((p for p in probes if p.name == area), None)
    if not findings and primary is not None and primary.status in (Status.UNAVAILABLE, Status.SKIPPED):
        return "none", primary.reason
    if not ran:
        reasons = [p.reason for p in probes if p.reason] + [c.reason for c in checks if c.reason]
        return "none", reasons[0] if reasons else "not run"
    return ("info" if findings else "ok"), _found(area, report)


def _found(area: str, report: Report) -> str:
    """What an area that passed found, where a user wants it at a glance: the torch that the
    pre-flight judged, its build and Python (a CPU wheel in a GPU job is the classic surprise)."""
    snap = report.snapshot
    if area != "software" or snap is None or not snap.value("software.torch.version"):
        return ""
    cuda, hip = snap.value("software.torch.cuda_runtime"), snap.value("software.torch.hip_runtime")
    build = f"CUDA {cuda} build" if cuda else f"ROCm {hip} build" if hip else "CPU build"
    nccl = snap.value("software.torch.nccl_version")
    parts = [f"torch {snap.value('software.torch.version')} ({build})"]
    if isinstance(nccl, str) and nccl:
        parts.append(f"NCCL {nccl}")
    parts.append(f"Python {snap.value('software.python.version', '?')}")
    return ", ".join(parts)


def area_details(area: str, report: Report) -> list[str]:
    """Measurements worth seeing under an area's status line: the busbw-versus-size plot of a
    collective sweep (the full tables are `pgdoctor bench collectives`)."""
    if area != "collectives" or report.snapshot is None:
        return []
    from pgdoctor.knowledge.collectives import rows_of
    from pgdoctor.render.collectives import plot

    rows = [row for row, _ in rows_of(report.snapshot)]
    return plot(rows, width=40) if rows else []


def _finding_lines(f: Finding, color: bool) -> list[str]:
    sev = {"fail": "red", "warn": "yellow", "info": "cyan"}[f.severity.value]
    scope = f" ({f.scope.label()})" if f.scope.label() else ""
    lines = [
        f"    [{sev}]{f.severity.value}[/] {f.code} {escape(f.title)}{escape(scope)}",
        f"      {escape(f.message)}",
    ]
    for e in f.evidence[:3]:
        where = f"{e.file}:{e.line}: " if e.file else ""
        lines.append(f"      [dim]{escape(where + e.text)}[/]")
    if f.code in _playbook_codes():  # a site plugin's code has no playbook to point at
        lines.append(f"      [dim]-> pgdoctor explain {f.code}[/]")
    return lines


@functools.lru_cache(maxsize=1)
def _playbook_codes() -> frozenset[str]:
    from pgdoctor.playbooks import all_playbooks

    return frozenset(pb.code for pb in all_playbooks())


def replay_line(report: Report) -> str:
    """`check --from` judges a snapshot taken elsewhere: say so first, with its host and time, so
    a pasted report is never mistaken for a live run of this machine."""
    source, snap = report.meta.get("from"), report.snapshot
    if not source or snap is None:
        return ""
    when = datetime.datetime.fromtimestamp(snap.time_unix, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC"
    )
    host = snap.host or "an unnamed host"
    return (
        f"replay of {source}: snapshot of {host} probed {when} at level {snap.level}; nothing was probed now"
    )


def render(report: Report, out: TextIO, color: bool = False, details: bool = True) -> None:
    """`details=False` leaves out the measurements drawn under an area (area_details): for a
    caller that has already printed fuller views of them, such as `bench collectives`'s tables
    and plot, which would otherwise appear twice."""
    console = Console(
        file=out,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        width=terminal.width(120),
        soft_wrap=not terminal.fit(),
    )
    areas = report_areas(report)
    by_area: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        by_area[f.area].append(f)
    replay = replay_line(report)
    if replay:
        console.print(f"[bold]{escape(replay)}[/]\n")
    for area in areas:
        key, detail = area_status(area, report)
        mark, style = _MARK[key]
        tail = f" [dim]- {escape(detail)}[/]" if detail else ""
        console.print(f"[{style}]{escape(mark)}[/] {escape(area_title(area))}{tail}")
        for f in by_area.get(area, []):
            for line in _finding_lines(f, color):
                console.print(line)
        for line in area_details(area, report) if details else ():
            console.print(f"    {line}", markup=False)
    counts = {s: sum(1 for f in report.findings if f.severity is s) for s in Severity}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n) or "no findings"
    host = report.snapshot.host if report.snapshot else ""
    console.print(f"\n{summary}{' on ' + host if host else ''}.")
    for reason in report.incomplete_reasons:
        console.print(f"[yellow]incomplete:[/] {escape(reason)}")
    style = {"failed": "red", "incomplete": "yellow", "passed": "green"}[report.verdict.status]
    console.print(f"[bold {style}]{escape(report.verdict.summary())}[/]")
