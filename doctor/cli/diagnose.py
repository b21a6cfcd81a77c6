"""`pgdoctor diagnose`: logs and flight-recorder dumps of a failed job -> root cause, facts, playbook."""

from __future__ import annotations

import sys
from typing import Any, Optional

import click

from pgdoctor.cli import FiniteFloat, NamedPath
from pgdoctor.cli.output import output_options
from pgdoctor.engine.deadline import DeadlineExceeded, deadline
from pgdoctor.engine.errors import EXIT_INCOMPLETE, UserError
from pgdoctor.model import exit_code


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--flight-recorder",
    "fr_dirs",
    multiple=True,
    metavar="DIR",
    help="Directory (or file) of per-rank flight-recorder dumps, pickle or JSON. Repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--format", "fmt", default=None, help="Output format (console, json, ...).")
@output_options()
@click.option("--exit-zero", is_flag=True, help="Always exit 0 (report-only use).")
@click.option(
    "--all-steps",
    is_flag=True,
    help="Profiler traces: analyse the last ProfilerStep too (left out by default, as HTA does).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=FiniteFloat(min=0.1),
    default=600.0,
    show_default=True,
    help="Bound the whole diagnosis (a pipe that never ends, a huge directory): exit 3 past it.",
)
@click.option(
    "--config",
    "config_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="TOML config (as for check): the traces.* thresholds of the profiler-trace findings.",
)
def diagnose(
    paths: tuple[str, ...],
    fr_dirs: tuple[str, ...],
    as_json: bool,
    fmt: Optional[str],
    output: Optional[str],
    exit_zero: bool,
    all_steps: bool,
    timeout_s: float,
    config_path: Optional[str],
) -> None:
    """Find the root cause of a failed run in its logs (files, directories, '-' for stdin, gzip, xz, bzip2)
    and flight-recorder dumps. Exit 1 when a failure was found, 0 when none."""
    from pgdoctor.cli.output import write_report
    from pgdoctor.diagnose.api import diagnose_paths
    from pgdoctor.diagnose.flight.dump import DumpError
    from pgdoctor.diagnose.text.reader import SourceError
    from pgdoctor.render import FORMATS

    # No input is a usage error even with stdin a pipe: in a job script an empty $LOGS must not
    # read as "no failure found". Stdin is read only when asked for with '-'.
    if not paths and not fr_dirs:
        raise UserError("no input: give log files or directories, '-' for stdin, or --flight-recorder DIR")
    config = None
    if config_path is not None:
        from pgdoctor.engine.config import ConfigError, load_config

        try:
            config = load_config(config_path)
        except ConfigError as exc:
            raise UserError(str(exc)) from None
    fmt = "json" if as_json else (fmt or "console")
    if fmt != "console" and fmt not in FORMATS:
        raise UserError(
            f"unknown format {fmt!r} (known: console, {', '.join(sorted(set(FORMATS) - {'console'}))})"
        )
    try:
        with deadline(timeout_s):
            # Under the deadline: a stdin that never sends a byte nor closes (`tail -f log |`, a
            # stuck producer) waited here forever, before --timeout started counting.
            stdin: Any = sys.stdin.buffer  # a BufferedReader: peek waits for the first byte or EOF
            if set(paths) == {"-"} and not fr_dirs and not stdin.peek(1)[:1]:
                raise UserError("no input: '-' read an empty stdin")
            report = diagnose_paths(list(paths), list(fr_dirs), all_steps=all_steps, config=config)
    except DeadlineExceeded:
        click.echo(
            f"pgdoctor: incomplete: diagnose did not finish within --timeout {timeout_s:g} s", err=True
        )
        raise click.exceptions.Exit(EXIT_INCOMPLETE) from None
    except (SourceError, DumpError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot read {exc.filename or 'input'}: {exc.strerror}") from None
    if fmt == "console":  # the root-cause layout (and rich) imported only where it is printed
        from pgdoctor.diagnose.render import render as console_render

        write_report(report, fmt, output, console_render)
    else:
        write_report(report, fmt, output)
    raise click.exceptions.Exit(exit_code(report, exit_zero))
