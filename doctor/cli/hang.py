"""`pgdoctor hang`: what every live rank of a job is doing now, and the rank the others wait for."""

from __future__ import annotations

from typing import Optional, TextIO

import click

from pgdoctor.cli import FiniteFloat
from pgdoctor.cli.output import checked_dir, output_options
from pgdoctor.engine.errors import UserError
from pgdoctor.model import Report, exit_code


def render_console(report: Report, out: TextIO, color: bool = False) -> None:
    """The roll-call table (culprit first), then the findings with their playbooks."""
    from pgdoctor.diagnose.stacks.report import console_lines

    lines = console_lines(report.extra.get("hang", {}))
    if not lines:
        lines = ["no rank process of a torch.distributed job found on this node"]
    out.write("\n".join(lines) + "\n")
    marks = {"fail": "[x]", "warn": "[!]", "info": "[ok]"}
    for f in report.findings:
        out.write(f"\n{marks.get(f.severity.value, '[-]')} {f.code} {f.title}\n    {f.message}\n")
        for key in ("frame", "frames", "workers", "ranges", "missing_ranks"):
            if f.facts.get(key):
                out.write(f"    {key}: {f.facts[key]}\n")
        out.write(f"    playbook: pgdoctor explain {f.code}\n")
    for reason in report.incomplete_reasons:
        out.write(f"\nincomplete: {reason}\n")
    if report.meta.get("saved_to"):
        out.write(
            f"\nevidence saved to {report.meta['saved_to']} (pgdoctor diagnose {report.meta['saved_to']})\n"
        )


@click.command()
@click.argument("pids", nargs=-1, type=int)
@click.option(
    "--samples",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    help="Stacks per rank; a frame that moves between them (or CPU time that grows) is progress.",
)
@click.option(
    "--interval",
    "interval_s",
    type=FiniteFloat(min=0.0, max=60.0),
    default=0.5,
    show_default=True,
    help="Seconds between samples.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloat(min=0.5, max=3600.0),
    default=30.0,
    show_default=True,
    help="Bound the whole command; a stack tool that does not answer is killed and its rank reported.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object on stdout (the report with a `hang` section)."
)
@click.option("--format", "fmt", default=None, help="Output format (console, json, junit, ...).")
@output_options()
@click.option(
    "--save",
    "save_dir",
    type=click.Path(file_okay=False),
    callback=checked_dir,
    default=None,
    metavar="DIR",
    help="Write the evidence (per-rank stacks, flight recorders) for `pgdoctor diagnose DIR`.",
)
@click.option(
    "--tiers",
    "tiers",
    default="proc,socket,torch,py-spy,pystack,nvml",
    show_default=True,
    help="Evidence tiers to use, in order: socket (pgdoctor's per-rank socket, no ptrace), torch "
    "(torch's own worker server on TORCH_WORKER_SERVER_SOCKET, no ptrace), py-spy, pystack, "
    "nvml (each rank's GPU SM utilisation); "
    "proc is always read. `--tiers proc,socket,torch` never attaches to a rank.",
)
@click.option("--exit-zero", is_flag=True, help="Always exit 0 (report-only use).")
def hang(
    pids: tuple[int, ...],
    samples: int,
    interval_s: float,
    timeout_s: float,
    as_json: bool,
    fmt: Optional[str],
    output: Optional[str],
    save_dir: Optional[str],
    tiers: str,
    exit_zero: bool,
) -> None:
    """Where every rank of the torch.distributed jobs on this node is, and which rank the others
    wait for. PIDS: ranks or launchers (torchrun, srun, mpirun, a shell); default: every job found
    in /proc. Exit 0 no hang, 1 a hang, 2 usage, 3 incomplete (no stacks and no culprit)."""
    from pgdoctor.cli.check import write_report
    from pgdoctor.hang.api import NotARank, examine
    from pgdoctor.hang.collect import TIERS
    from pgdoctor.render import FORMATS

    chosen = [t.strip() for t in tiers.split(",") if t.strip()]
    unknown = sorted(set(chosen) - {"proc", *TIERS})
    if unknown:
        raise UserError(f"unknown tier(s) {', '.join(unknown)} in --tiers (known: proc, {', '.join(TIERS)})")
    fmt = "json" if as_json else (fmt or "console")
    if fmt != "console" and fmt not in FORMATS:
        raise UserError(
            f"unknown format {fmt!r} (known: console, {', '.join(sorted(set(FORMATS) - {'console'}))})"
        )
    try:
        report = examine(
            pids,
            samples=samples,
            interval_s=interval_s,
            timeout_s=timeout_s,
            save_dir=save_dir,
            tiers=[t for t in chosen if t != "proc"],
        )
    except NotARank as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write {exc.filename or save_dir}: {exc.strerror}") from None
    write_report(report, fmt, output, render_console if fmt == "console" else None)
    raise click.exceptions.Exit(exit_code(report, exit_zero))
