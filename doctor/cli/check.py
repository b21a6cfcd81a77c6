"""`pgdoctor check` and `pgdoctor collect`."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Optional

import click

from pgdoctor.checks.base import Config
from pgdoctor.cli import FiniteFloat, NamedPath
from pgdoctor.cli.output import (  # noqa: F401 (checked_output, write_report: older importers)
    checked_output,
    output_options,
    write_output,
    write_report,
)
from pgdoctor.engine.config import ConfigError, load_config
from pgdoctor.engine.errors import EXIT_INCOMPLETE, UserError
from pgdoctor.engine.plugins import load_plugins
from pgdoctor.engine.runner import Selection, build_report, was_interrupted
from pgdoctor.engine.runner import collect as collect_snapshot
from pgdoctor.knowledge.ranks import MAX_LOCAL_RANKS
from pgdoctor.model import Report, Severity, Snapshot, SnapshotFormatError, exit_code
from pgdoctor.probes.base import LEVELS, ProbeContext
from pgdoctor.render import FORMATS


def _names(value: Optional[str]) -> tuple[str, ...]:
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


def parse_selection(only: Optional[str], skip: Optional[str]) -> Selection:
    """Areas and codes (or slugs) accepted; anything else is a usage error naming it."""
    from pgdoctor.checks import load_all
    from pgdoctor.checks.base import CODES
    from pgdoctor.knowledge.areas import AREAS

    load_all()
    by_slug = {c.slug: c.code for c in CODES.values()}

    def resolve(name: str) -> str:
        if name in AREAS or name in CODES:
            return name
        if name.upper() in CODES:
            return name.upper()
        if name in by_slug:
            return by_slug[name]
        raise UserError(f"unknown area or code {name!r} in --only/--skip (areas: {', '.join(AREAS)})")

    return Selection(tuple(resolve(n) for n in _names(only)), tuple(resolve(n) for n in _names(skip)))


def probe_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by every command that probes this host."""
    opts = [
        click.option("--only", metavar="AREA|CODE,...", help="Run only these areas or codes."),
        click.option("--skip", metavar="AREA|CODE,...", help="Skip these areas or codes."),
        click.option(
            "--level",
            type=click.Choice(LEVELS),
            default="standard",
            show_default=True,
            help="quick: no torch import, no processes; full: load tests.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=FiniteFloat(min=0.1),
            default=120.0,
            show_default=True,
            help="Bound on the whole run, in seconds.",
        ),
        click.option(
            "--config",
            "config_path",
            type=NamedPath(dir_okay=False),
            default=None,
            help="TOML file of thresholds and expectations.",
        ),
        click.option(
            "--expect-gpus", type=click.IntRange(min=0), default=None, help="GPUs this node must have."
        ),
        click.option("--force", is_flag=True, help="Run heavy probes even on GPUs other processes use."),
        click.option(
            "--all-pairs",
            is_flag=True,
            help="Multi-node net check: measure every node pair, not only neighbours.",
        ),
        click.option(
            "--nproc",
            type=click.IntRange(min=1, max=MAX_LOCAL_RANKS),
            default=None,
            help="Collective probe: spawn N local ranks (default: one per GPU; none without GPUs).",
        ),
        click.option(
            "--backend",
            type=click.Choice(["auto", "nccl", "gloo"]),
            default="auto",
            show_default=True,
            help="Collective probe backend: NCCL on GPUs, gloo on CPU.",
        ),
        click.option(
            "--collective-timeout",
            "collective_timeout_s",
            type=FiniteFloat(min=0.5),
            default=30.0,
            show_default=True,
            help="A collective (or init) stuck longer than this names the missing ranks.",
        ),
    ]
    return functools.reduce(lambda f, opt: opt(f), reversed(opts), fn)


def with_cli_overrides(config: Config, expect_gpus: Optional[int]) -> Config:
    """Options that are expectations live in the config, so `check --from` judges a snapshot
    by the same rules as a live check."""
    if expect_gpus is None:
        return config
    return Config({**config, "expect.gpus": expect_gpus})


def prepare(
    only: Optional[str],
    skip: Optional[str],
    config_path: Optional[str],
    expect_gpus: Optional[int],
    **options: Any,
) -> tuple[Selection, Config, dict[str, Any]]:
    """What every probing command does first: plugins, --only/--skip, the config (with the CLI's
    expectations folded in) and the options the probes read."""
    load_plugins()
    selection = parse_selection(only, skip)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    return selection, with_cli_overrides(config, expect_gpus), {"expect_gpus": expect_gpus, **options}


def _progress(msg: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"\r\033[K{msg}", err=True, nl=False)


def make_context(level: str, config: Any, options: dict[str, Any]) -> ProbeContext:
    return ProbeContext(env=dict(os.environ), level=level, config=config, options=options)


def load_snapshot(path: str) -> Snapshot:
    """A snapshot a user names (`check --from`, `topo --from`): through the bounded reader (regular
    files only, a byte-order mark read), every problem one UserError."""
    from pgdoctor.probes.files import InputError, read_text_input

    try:
        return Snapshot.loads(read_text_input(path, "snapshot"))
    except InputError as exc:
        raise UserError(str(exc)) from None
    except (SnapshotFormatError, RecursionError) as exc:
        raise UserError(
            f"{path}: {exc if isinstance(exc, SnapshotFormatError) else 'nested too deep'}"
        ) from None


@click.command()
@probe_options
@click.option(
    "--from",
    "from_path",
    type=NamedPath(dir_okay=False),
    default=None,
    help="Check a saved snapshot instead of probing this host.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default=None, help="Output format.")
@output_options()
@click.option("--fail-on", type=click.Choice(["warn", "fail"]), default="fail", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Always exit 0 (report-only use).")
def check(
    only: Optional[str],
    skip: Optional[str],
    level: str,
    timeout_s: float,
    config_path: Optional[str],
    expect_gpus: Optional[int],
    force: bool,
    all_pairs: bool,
    nproc: Optional[int],
    backend: str,
    collective_timeout_s: float,
    from_path: Optional[str],
    as_json: bool,
    fmt: Optional[str],
    output: Optional[str],
    fail_on: str,
    exit_zero: bool,
) -> None:
    """Pre-flight: probe this host (or read --from) and report findings."""
    selection, config, options = prepare(
        only,
        skip,
        config_path,
        expect_gpus,
        force=force,
        nproc=nproc,
        backend=backend,
        collective_timeout_s=collective_timeout_s,
        timeout_s=timeout_s,
    )
    from pgdoctor.engine import multinode

    if not from_path and multinode.wanted(os.environ, selection):
        result = multinode.run_check(
            make_context(level, config, options),
            selection,
            config,
            timeout_s,
            all_pairs=all_pairs,
            fail_on=Severity(fail_on),
            exit_zero=exit_zero,
            meta={"options": options | {"all_pairs": all_pairs}, "from": None, "fail_on": fail_on},
        )
        if result.report is not None:
            write_report(result.report, "json" if as_json else (fmt or "console"), output)
        raise click.exceptions.Exit(result.code)
    meta = {"options": options, "from": from_path, "fail_on": fail_on}
    snapshot: Optional[Snapshot] = None
    if from_path:
        report = _check_saved(from_path, config, selection, meta, timeout_s)
    else:
        snapshot = collect_snapshot(make_context(level, config, options), selection, timeout_s, _progress)
        if sys.stderr.isatty():
            click.echo("\r\033[K", err=True, nl=False)
        report = build_report("check", snapshot, config, selection, meta=meta)
    write_report(report, "json" if as_json else (fmt or "console"), output)
    if snapshot is not None and was_interrupted(snapshot):
        # The partial report is out; exit 130 like any interruption. A replayed snapshot was not
        # interrupted now: its interrupted probes make it incomplete (exit 3) instead.
        raise KeyboardInterrupt
    raise click.exceptions.Exit(exit_code(report, exit_zero))


def _check_saved(
    path: str, config: Any, selection: Selection, meta: dict[str, Any], timeout_s: float
) -> Report:
    """`check --from`: no probe runs, but --timeout still bounds the run (a 66 MB snapshot once
    took 38 s under --timeout 1)."""
    from pgdoctor.engine.deadline import DeadlineExceeded, deadline

    try:
        with deadline(timeout_s):
            return build_report("check", load_snapshot(path), config, selection, meta=meta)
    except DeadlineExceeded:
        click.echo(
            f"pgdoctor: incomplete: checking {path} did not finish within --timeout {timeout_s:g} s", err=True
        )
        raise click.exceptions.Exit(EXIT_INCOMPLETE) from None


@click.command()
@probe_options
@output_options("Snapshot file to write (JSON); '-' for stdout.", required=True)
def collect(
    only: Optional[str],
    skip: Optional[str],
    level: str,
    timeout_s: float,
    config_path: Optional[str],
    expect_gpus: Optional[int],
    force: bool,
    all_pairs: bool,
    nproc: Optional[int],
    backend: str,
    collective_timeout_s: float,
    output: str,
) -> None:
    """Write a snapshot of everything probed: the support bundle and the input of check --from."""
    selection, config, options = prepare(
        only,
        skip,
        config_path,
        expect_gpus,
        force=force,
        nproc=nproc,
        backend=backend,
        collective_timeout_s=collective_timeout_s,
        timeout_s=timeout_s,
    )
    snapshot = collect_snapshot(make_context(level, config, options), selection, timeout_s, _progress)
    text = snapshot.dumps()
    if output == "-":
        click.echo(text)
        if was_interrupted(snapshot):
            raise KeyboardInterrupt
        return
    write_output(output, lambda fh: fh.write(text + "\n"))
    if was_interrupted(snapshot):
        # A partial bundle is still worth having; the exit status says it is partial.
        click.echo(f"wrote {output} ({len(snapshot.probes)} probes, interrupted: partial)", err=True)
        raise KeyboardInterrupt
    click.echo(f"wrote {output} ({len(snapshot.probes)} probes)", err=True)
