"""`pgdoctor run -- COMMAND`: run a job's launcher under watch, snapshot a hang before the job is
killed, diagnose everything at the end; exit with COMMAND's code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Optional

import click

from pgdoctor.cli import FiniteFloat
from pgdoctor.cli.output import checked_dir, problem, write_output
from pgdoctor.engine.errors import UserError


def _checked_report(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """--report is checked before the job runs, as -o is (a link is written through, as before)."""
    if value is None:
        return value
    why = problem(value, follow_symlinks=True) if value else "an empty file name"
    if why:
        raise click.BadParameter(why, ctx, param)
    return value


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--stall-after",
    "stall_after_s",
    type=FiniteFloat(min=0.5),
    default=300.0,
    show_default=True,
    help="Seconds without progress (output, CPU time, socket step) before the hang snapshot; "
    "keep it below the job's collective timeout.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    callback=_checked_report,
    default=None,
    metavar="FILE",
    help="Write the run's report here (JSON).",
)
@click.option(
    "--save",
    "save_dir",
    type=click.Path(file_okay=False),
    callback=checked_dir,
    default=None,
    metavar="DIR",
    help="Keep the evidence here (output, hang snapshots, flight-recorder dumps); default: a temporary "
    "directory removed at the end.",
)
@click.option(
    "--preflight",
    is_flag=True,
    help="Run `pgdoctor check --level quick` first (its result is reported, the job runs whatever it says).",
)
@click.option(
    "--hang-timeout",
    "hang_timeout_s",
    type=FiniteFloat(min=1.0, max=600.0),
    default=30.0,
    show_default=True,
    help="Bound of one hang snapshot.",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(
    stall_after_s: float,
    report_path: Optional[str],
    save_dir: Optional[str],
    preflight: bool,
    hang_timeout_s: float,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND (torchrun, srun, python ...) as a child: output and exit code unchanged,
    SIGINT/SIGTERM forwarded. A stall takes the hang snapshot of its ranks; at the end the
    evidence is diagnosed into one report (--report FILE, a summary on stderr)."""
    from pgdoctor.hang.supervise import Supervisor, exit_status, final_report

    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UserError("no command: pgdoctor run [OPTIONS] -- COMMAND ...")
    if shutil.which(command[0]) is None:
        raise UserError(f"command not found: {command[0]}")
    evidence = save_dir or tempfile.mkdtemp(prefix="pgdoctor-run-")
    try:
        pre = _preflight() if preflight else None
        sup = Supervisor(command, stall_after_s, os.path.abspath(evidence), hang_timeout_s)
        t0 = time.monotonic()
        rc = sup.run()
        report = final_report(sup, rc, time.monotonic() - t0, preflight=pre)
        # The summary first: a report file the disk refuses at the end (checked before the job,
        # but a disk fills) is one error line after it, never the diagnosis lost with it.
        _summary(report, exit_status(rc), report_path)
        if report_path:
            doc = report.to_json()
            write_output(report_path, lambda fh: json.dump(doc, fh, indent=1, default=str), True)
    finally:
        if save_dir is None:
            shutil.rmtree(evidence, ignore_errors=True)
    raise click.exceptions.Exit(exit_status(rc))


def _preflight() -> dict[str, object]:
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "check", "--level", "quick", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        codes = [f["code"] for f in json.loads(p.stdout)["findings"]]
    except (ValueError, KeyError, TypeError):
        codes = []
    click.echo(
        f"pgdoctor run: preflight exit {p.returncode}" + (f" ({', '.join(codes)})" if codes else ""), err=True
    )
    return {"exit_code": p.returncode, "codes": codes}


def _summary(report: object, code: int, report_path: Optional[str]) -> None:
    from pgdoctor.model import Report

    assert isinstance(report, Report)
    where = f"; report: {report_path}" if report_path else ""
    root = next((f for f in report.findings if f.severity.value == "fail"), None)
    if root is None and code != 0:
        # A failed job whose logs end on an error no rule names (a SyntaxError, the user's own
        # exception): the diagnosis still marks it the root cause, and the summary says it.
        root = report.verdict.root
    if code == 0 and root is None:
        click.echo(f"pgdoctor run: ok (exit 0){where}", err=True)
        return
    cause = f"; root cause {root.code}: {root.message[:300]}" if root else "; no root cause found"
    click.echo(f"pgdoctor run: exit {code}{cause}{where}", err=True)
