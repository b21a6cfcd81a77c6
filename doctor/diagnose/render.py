"""Console output of `pgdoctor diagnose`: the root cause first with its facts and playbook, the
cascade under it. Machine formats use the shared renderers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from pgdoctor.knowledge import terminal
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.jobwide_words import header, lines
from pgdoctor.knowledge.ranks import count_label, rank_ranges
from pgdoctor.knowledge.readable import readable
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import Finding, Report

# Facts worth a line under the root cause, in this order; the rest is in --json.
_KEY_FACTS = (
    "rank",
    "ranks",
    "host",
    "gpu_index",
    "requested_bytes",
    "free_bytes",
    "total_bytes",
    "allocated_bytes",
    "reserved_unallocated_bytes",
    "other_process_bytes",
    "likely_cause",
    "pg_id",
    "pg",
    "op",
    "seq",
    "kind",
    "numel_in",
    "timeout_ms",
    "ran_for_ms",
    "seq_by_rank",
    "lagging_ranks",
    "late_ranks",
    "missing_ranks",
    "input_sizes",
    "input_dtypes",
    "frames",
    "exception",
    "exception_message",
    "frame",
    "signal",
    "exitcode",
    "xid",
    "xid_meaning",
    "pci_bus_id",
    "peer",
    "ib_status",
    "nccl_last_error",
    "library",
    "master_addr",
    "master_port",
    "port",
    "unused_params",
    "param",
    "per_rank",
    "odd_ranks",
    # Ascend (rules/hccl.py): the device HCCL lost, the CANN record's code, the runtime's or HCCL's number
    "suspect_device",
    "error_code",
    "npu_error",
    "hccl_error",
)


def _fmt(key: str, value: Any) -> str:
    if key.endswith("_bytes") and isinstance(value, int):
        return fmt_bytes(value)
    if isinstance(value, list) and key.endswith("ranks") and value and all(isinstance(v, int) for v in value):
        # a set of ranks: ranges in brackets, with the count when it is long
        return f"[{rank_ranges(value)}]" + (f" ({len(value)})" if len(value) > 8 else "")
    if isinstance(value, list) and len(value) > 8:
        return f"{readable(value[:8], 160)} (+{len(value) - 8})"
    if isinstance(value, dict) and len(value) > 8 and all(str(k).isdigit() for k in value):
        # per-rank values ({"0": 2070, "1": 2070, ...}): each value once, with its ranks as ranges
        by_value: dict[str, list[int]] = {}
        for k, v in value.items():
            by_value.setdefault(str(v), []).append(int(k))
        return (
            "{"
            + ", ".join(f"{v}: {count_label(ranks, 4)}" for v, ranks in list(by_value.items())[:4])
            + (f", ... {len(by_value) - 4} more values" if len(by_value) > 4 else "")
            + "}"
        )
    return readable(value, 200)  # lists and dicts as words, not Python reprs


def _facts_line(f: Finding) -> str:
    parts = [
        f"{k}={_fmt(k, f.facts[k])}" for k in _KEY_FACTS if k in f.facts and f.facts[k] not in (None, "", [])
    ]
    return ", ".join(parts)


def _where(f: Finding) -> str:
    parts = [f"rank {f.scope.rank}"] if f.scope.rank is not None else []
    if f.scope.host:
        parts.append(f.scope.host)
    return f" ({', '.join(parts)})" if parts else ""


def _jobwide(console: Console, report: Report) -> None:
    """One line per failure signature across the job's ranks, and what stands out among them
    (the words are knowledge/jobwide_words.py's, which the HTML report prints too)."""
    job = report.meta.get("jobwide")
    if not job:
        return
    root = report.verdict.root
    console.print(f"\n  {escape(header(job, _dump_ranks(report.meta)))}")
    for style, text in lines(job, root.scope.rank if root is not None else None):
        console.print(f"    [{_STYLE[style]}]{escape(text)}[/]" if style else f"    {escape(text)}")


_STYLE = {"warn": "yellow", "fail": "red", "dim": "dim"}


def _dump_ranks(meta: Mapping[str, Any]) -> int:
    dumps = (meta.get("flight_recorder") or {}).get("dumps") or []
    return len({d.get("rank") for d in dumps if isinstance(d, Mapping)})


def _say(console: Console, indent: str, text: str, style: str = "") -> None:
    """One line of the report, indented; on a terminal too narrow for it, wrapped between words
    under its own indent (knowledge.terminal), not back at column 0."""
    for line in terminal.wrap(text, indent=indent + "  ", first=indent):
        console.print(line, style=style or None, markup=False, highlight=False)


def _network(console: Console, found: list[Finding]) -> None:
    """Performance findings about the network NCCL chose (NET117), after the root cause."""
    for f in found:
        console.print(f"\n  [yellow]{escape('[!]')}[/] [bold]{f.code}[/] {escape(f.title)}")
        _say(console, "    ", f.message)
        for e in f.evidence[:4]:
            _say(
                console,
                "    ",
                (f"{e.file}:{e.line}: " if e.file and e.line else "") + clip(e.text, 300),
                "dim",
            )
        console.print(f"    [dim]playbook:[/] {escape(f.title)} -> pgdoctor explain {f.code}")


def _notes(console: Console, meta: Mapping[str, Any]) -> None:
    for note in meta.get("notes") or []:
        console.print(f"[blue]note:[/] {escape(note)}")


def render(report: Report, out: TextIO, color: bool = False) -> None:
    # Profiler traces (RUN405-RUN409) are performance, not failure: they get their own section after
    # the root cause and cascade of the logs and dumps of the same job.
    from dataclasses import replace

    from pgdoctor.diagnose.profile.console import section

    perf = [f for f in report.findings if f.facts.get("source") == "traces"]
    # NCCL's network choice read from the logs (NET117): performance too, in a section of its own.
    net = [f for f in report.findings if f.facts.get("source") == "nccl_logs"]
    console = Console(
        file=out,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        width=terminal.width(120),
        soft_wrap=not terminal.fit(),
    )
    verdict = report.verdict  # of the whole report, performance findings included
    if perf or net:
        report = replace(report, findings=tuple(f for f in report.findings if f not in perf and f not in net))
    _render(report, console, [*perf, *net])
    section(console, report.extra.get("traces"), perf)
    _network(console, net)
    console.print(f"\n[bold]{escape(verdict.summary())}[/]")


def _render(report: Report, console: Console, perf: list[Finding]) -> None:
    sources = report.meta.get("sources", [])
    scanned = f"{len(sources)} file(s), {sum(s.get('lines', 0) for s in sources)} lines"
    fr = report.meta.get("flight_recorder")
    if fr:
        scanned += f", {len(fr.get('dumps', []))} flight-recorder dump(s)"
    if report.extra.get("traces"):
        scanned += f", {len(report.extra['traces'].get('ranks', {}))} profiler trace(s)"
    hang = report.extra.get("hang")
    if hang:
        from pgdoctor.diagnose.stacks.report import console_lines

        scanned += f", {sum(len(j['ranks']) for j in hang.get('jobs', ()))} rank(s) of hang evidence"
        for line in console_lines(hang):
            console.print(escape(line))
    if not report.findings and report.incomplete_reasons:  # every input skipped: not an all-clear
        for reason in report.incomplete_reasons:
            console.print(f"[yellow]incomplete:[/] {escape(reason)} ({escape(scanned)} read).")
        _notes(console, report.meta)
        _skipped(console, report)
        return
    if not report.findings:
        if perf:  # no failure, but the traces show where the time goes: not [ok]
            worst = max(perf, key=lambda f: f.severity.rank).severity.value
            console.print(
                f"[yellow]{escape('[!]')}[/] no failure found in {escape(scanned)}; {len(perf)} performance "
                f"finding(s) ({worst}) below"
            )
        else:
            console.print(f"[green]{escape('[ok]')}[/] no failure found in {escape(scanned)}.")
        _notes(console, report.meta)
        _skipped(console, report)  # an all-clear names what it did not read
        return
    root, cascade = report.findings[0], report.findings[1:]
    if root.severity.value == "info" and not cascade:  # a note (RUN134), not a failure
        console.print(
            f"[green]{escape('[ok]')}[/] no failure found in {escape(scanned)}; "
            f"note {root.code}: {escape(root.message)}"
        )
        for e in root.evidence[:2]:
            _say(
                console,
                "    ",
                (f"{e.file}:{e.line}: " if e.file and e.line else "") + clip(e.text, 300),
                "dim",
            )
        console.print(f"    [dim]playbook:[/] {escape(root.title)} -> pgdoctor explain {root.code}")
        _notes(console, report.meta)
        _skipped(console, report)
        return
    scope = _where(root)
    console.print(
        f"[red]{escape('[x]')} Root cause:[/] [bold]{root.code}[/] {escape(root.title)} "
        f"[dim]\\[{root.category}][/]"
        f"{escape(scope)}"
    )
    _say(console, "    ", root.message)
    facts = _facts_line(root)
    if facts:
        _say(console, "    ", f"facts: {facts}", "dim")
    for e in root.evidence[:4]:
        where = f"{e.file}:{e.line}: " if e.file and e.line else (f"{e.file}: " if e.file else "")
        _say(console, "    ", where + clip(e.text, 300), "dim")
    console.print(f"    [dim]playbook:[/] {escape(root.title)} -> pgdoctor explain {root.code}")
    if cascade:
        console.print(f"\n  Cascade ({len(cascade)}): consequences of {root.code}")
        for f in cascade:
            sc = _where(f)
            console.print(f"    [yellow]-[/] {f.code} {escape(f.title)}{escape(sc)}")
            _say(console, "      ", clip(f.message, 300))
            if f.evidence:
                e = f.evidence[0]
                where = f"{e.file}:{e.line}: " if e.file and e.line else ""
                _say(console, "      ", where + clip(e.text, 200), "dim")
    _jobwide(console, report)
    _notes(console, report.meta)
    _skipped(console, report)
    console.print(f"\n{len(report.findings)} finding(s) from {escape(scanned)}.")


def _skipped(console: Any, report: Report) -> None:
    """Every input that was not read, with its reason: binaries and earlier reports of a job
    directory in one line each, unreadable files and refused dumps one by one."""
    binaries = report.meta.get("skipped_binary_files") or []
    if binaries:
        console.print(f"[dim]skipped {len(binaries)} binary file(s): {escape(', '.join(binaries[:3]))}[/]")
    reports = report.meta.get("skipped_pgdoctor_reports") or []
    if reports:
        console.print(
            f"[dim]skipped {len(reports)} earlier pgdoctor report(s): {escape(', '.join(reports[:3]))}[/]"
        )
    for s in report.meta.get("skipped_unreadable_files") or []:
        console.print(f"[yellow]skipped:[/] {escape(s)}")
    for s in (report.meta.get("flight_recorder") or {}).get("skipped") or []:
        console.print(f"[yellow]skipped:[/] {escape(s)}")
