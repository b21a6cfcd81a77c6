"""The pgdoctor command line. Thin: parse options, call the runner, render, exit.

Commands other than the core ones live in their own modules and are imported only when
invoked (LAZY_COMMANDS), so `pgdoctor --help` and `pgdoctor explain` stay fast and never
import torch.
"""

from __future__ import annotations

import errno
import importlib
import io
import math
import os
import signal
import sys
import warnings
from typing import Any, NoReturn, Optional

import click

from pgdoctor import __version__
from pgdoctor.engine.errors import (
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UserError,
    resource_exhaustion,
)

# name -> "module:attribute" of a click command; one line per command.
LAZY_COMMANDS: dict[str, str] = {
    "check": "pgdoctor.cli.check:check",
    "collect": "pgdoctor.cli.check:collect",
    "list": "pgdoctor.cli.info:list_codes",
    "explain": "pgdoctor.cli.info:explain",
    "diagnose": "pgdoctor.cli.diagnose:diagnose",
    "repro": "pgdoctor.cli.repro:repro",
    "plan": "pgdoctor.cli.plan:plan_cmd",
    "bench": "pgdoctor.cli.bench:bench",
    "topo": "pgdoctor.cli.topo:topo",
    "verify": "pgdoctor.cli.verify:verify",
    "hang": "pgdoctor.cli.hang:hang",
    "run": "pgdoctor.cli.run:run",
}

# Short help per lazy command, so `pgdoctor --help` lists them without importing them.
COMMAND_HELP: dict[str, str] = {
    "check": "Pre-flight: probe this host and report findings (exit 0/1/2/3).",
    "collect": "Write a snapshot of everything probed (support bundle; input of check --from).",
    "list": "List every finding code with slug, severity and title.",
    "explain": "Show the playbook of a finding code or slug.",
    "diagnose": "Find the root cause of a failed run in its logs and flight-recorder dumps (exit 1 when "
    "found).",
    "repro": "Reproduce an OOM, a collective timeout or load imbalance in a small instrumented DDP/PP/TP "
    "run, and diagnose it.",
    "plan": "Predict memory and communication per GPU for dp x tp x pp x ZeRO layouts before a job runs.",
    "bench": "Benchmarks on their own: `bench collectives` (nccl-tests style sweep, correctness, findings), "
    "`bench scaling` (speedup per added rank).",
    "topo": "Print the GPU/NIC topology matrix of this node (PCIe paths, NUMA nodes; like nvidia-smi topo "
    "-m).",
    "verify": "Check that N ranks train your model exactly as one process does, and name the bug if not "
    "(exit 0/1/2).",
    "hang": "What every live rank of a job is doing now, and the rank the others wait for (exit 0/1/2/3).",
    "run": "Run a job script's launcher under watch: snapshot a hang before the job is killed, diagnose at "
    "the end.",
}


class FiniteFloat(click.FloatRange):
    """A float option that refuses nan and inf (NaN passes every comparison as false, so a
    `--timeout nan` bounded nothing) and, by default, anything over a week of seconds."""

    name = "finite float"

    def __init__(self, min: Optional[float] = None, max: Optional[float] = 7 * 24 * 3600.0) -> None:
        super().__init__(min=min, max=max)

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return super().convert(value, param, ctx)  # click's own "is not a valid float"
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(value, param, ctx)


class NamedPath(click.Path):
    """A path option that refuses an empty name. `--from "$SNAP"` with SNAP unset arrives as "",
    which the commands' `if from_path:` read as "not given": check then probed the live host and
    passed, topo printed this node's matrix, plan ignored the measurements."""

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path (an unset variable?)", param, ctx)
        return super().convert(value, param, ctx)


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(LAZY_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        cmd = getattr(importlib.import_module(module), attr)
        assert isinstance(cmd, click.Command)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMAND_HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pgdoctor")
@click.option(
    "--wide",
    is_flag=True,
    expose_value=False,
    help="Console tables at their full width, lines never wrapped (anywhere on the command line).",
)
def cli() -> None:
    """pgdoctor: diagnose and troubleshoot multi-GPU distributed PyTorch training.

    \b
    Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
    2 usage or configuration error; 3 incomplete (a requested probe could not
    run or a check crashed); 4 internal error (a bug in pgdoctor: one line,
    PGDOCTOR_TRACEBACK=1 for the traceback); 130 interrupted. 1 wins over 3.

    \b
    On a terminal, console output fits its width (COLUMNS wins); --wide
    prints tables whole. Into a pipe or a file nothing is folded.
    """


def _console_width(args: list[str]) -> list[str]:
    """Takes --wide out of the arguments (every command accepts it) and decides the console width
    once for every renderer (pgdoctor.knowledge.terminal)."""
    from pgdoctor.knowledge import terminal

    head, sep, tail = (
        (args[: args.index("--")], ["--"], args[args.index("--") + 1 :]) if "--" in args else (args, [], [])
    )
    wide = "--wide" in head
    if sys.stdout.isatty():
        # COLUMNS, when set, wins over the terminal's own size (shutil's rule). Into a pipe it does
        # not count: shells and readline export it to children that then write to files.
        import shutil

        terminal.configure(shutil.get_terminal_size().columns, wide)
    else:
        terminal.configure(None, wide)
    return [a for a in head if a != "--wide"] + sep + tail


def _raise_interrupt(signum: int, frame: Any) -> NoReturn:
    # Remembered as well as raised: a KeyboardInterrupt raised inside a __del__ or a weakref
    # callback (the garbage collector runs them at any bytecode, often during `import torch`) is
    # printed as "Exception ignored" and lost. The wait loops and main() look at the flag.
    from pgdoctor.probes.processes import note_termination

    note_termination()
    raise KeyboardInterrupt


class _ClosedStdout(io.TextIOBase):
    """sys.stdout when pgdoctor was started with it closed (`cmd >&-`): a report written to it is
    the one-line OSError below (exit 2), and `-o FILE` still works."""

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed (pgdoctor was started with >&-); give -o FILE")

    def flush(self) -> None:
        pass


def _std_streams() -> None:
    """Started with fd 0, 1 or 2 closed, the next file pgdoctor opens would get that number, and
    a child or a print would write into it: /dev/null holds each one instead."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if fd == 1:
                sys.stdout = _ClosedStdout()
            elif fd == 2:
                sys.stderr = open(fd, "w", closefd=False)  # noqa: SIM115 (lives as long as the process)
            else:
                sys.stdin = open(fd, closefd=False)  # noqa: SIM115


def _preload_unwinder() -> None:
    """Under an address-space limit, glibc loads libgcc_s when a thread exits, fails, and aborts
    the process ("libgcc_s.so.1 must be installed for pthread_exit to work"): loaded up front."""
    import resource

    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        return
    try:
        import ctypes

        ctypes.CDLL("libgcc_s.so.1")
    except OSError:
        pass


def main(argv: Optional[list[str]] = None) -> NoReturn:
    _std_streams()
    _preload_unwinder()
    from pgdoctor.cli.sink import ReaderLeft, install

    install()  # every console line, whoever prints it, through one neutralising writer
    from pgdoctor.diagnose.text import sre_cache

    sre_cache.install()  # the catalogue's patterns compiled from code saved by an earlier run
    # SIGTERM (Slurm, Kubernetes) unwinds like Ctrl-C, so cleanup handlers run. SIGINT gets its
    # default handler back: started with it ignored (nohup, `cmd &` in a script), pgdoctor would
    # otherwise never end on Ctrl-C or an orchestrator's SIGINT.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        rc = _run(argv)
    except KeyboardInterrupt:  # in the start-up before the command (the sweep, the warning filters)
        _error_line("pgdoctor: interrupted")
        rc = EXIT_INTERRUPTED
    except ReaderLeft:
        rc = _reader_left()
    try:
        # What is still buffered goes out here, where a reader that left is answered, not in the
        # interpreter's exit flush ("Exception ignored ... BrokenPipeError", exit 120).
        sys.stdout.flush()
        sys.stderr.flush()
    except ReaderLeft:
        rc = _reader_left()
    except (OSError, ValueError):
        pass
    sys.exit(rc)


def _run(argv: Optional[list[str]]) -> int:
    from pgdoctor.cli.sink import ReaderLeft
    from pgdoctor.probes.processes import QUIET_WARNINGS, clean_stale_temp

    clean_stale_temp()  # what a SIGKILLed pgdoctor left in the temp directory

    for message in QUIET_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=UserWarning)
    args = _console_width(list(sys.argv[1:] if argv is None else argv))
    try:
        rc = cli.main(args=args, prog_name="pgdoctor", standalone_mode=False)
    except click.exceptions.Exit as exc:
        rc = exc.exit_code
    except click.ClickException as exc:
        # Usage errors and UserError: one line, no traceback, no usage dump.
        _error_line(f"pgdoctor: error: {exc.format_message()}")
        rc = EXIT_USAGE
    except click.exceptions.Abort:
        _error_line("pgdoctor: interrupted")
        rc = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        _error_line("pgdoctor: interrupted")
        rc = EXIT_INTERRUPTED
    except (BrokenPipeError, ReaderLeft):
        # `pgdoctor list | head`: the reader left; not an error of ours.
        rc = _reader_left()
    except (MemoryError, RuntimeError, OSError) as exc:
        _quiet_stdout()
        limit = resource_exhaustion(exc)
        if limit is not None:
            _error_line(f"pgdoctor: incomplete: {limit}")
            rc = EXIT_INCOMPLETE
        elif isinstance(exc, OSError):
            # The environment refused (stdout on a full disk, a file that vanished): one line.
            _error_line(
                f"pgdoctor: error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
            )
            rc = EXIT_USAGE
        else:
            rc = _internal_error(exc)
    except Exception as exc:  # a bug of ours: one line naming it, never exit 1 ("findings")
        _quiet_stdout()
        rc = _internal_error(exc)
    from pgdoctor.probes.processes import termination_requested

    if termination_requested() and rc != EXIT_INTERRUPTED:
        # The SIGTERM's exception was swallowed somewhere and the run went on: the caller asked
        # it to stop, so it did not finish as asked.
        _error_line("pgdoctor: interrupted")
        rc = EXIT_INTERRUPTED
    return rc if isinstance(rc, int) else EXIT_OK


# An error line names what the user typed or named, which may be anything: 100 KB of it, or
# `\x1b[2J` in a file name, which click.echo would strip from a pipe (the line then names another
# file) and which the sink would show only on a terminal. The line is written escaped (the sink
# redacts it, as all of stderr) and clipped.
ERROR_LINE_CHARS = 2000


def _error_line(line: str) -> None:
    from pgdoctor.knowledge.clip import clip
    from pgdoctor.model.redact import neutral, redact_text

    click.echo(clip(neutral(redact_text(line)), ERROR_LINE_CHARS), err=True)


def _reader_left() -> int:
    """stdout's reader went away: what is left to write goes to /dev/null, and the run ends with 0
    (not an error of pgdoctor's; the reader took what it wanted)."""
    for fd in (1, 2):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
        except OSError:
            pass
    return EXIT_OK


def require_torch_importable() -> None:
    """Commands that import torch refuse first an environment in which the import itself fails
    (and a retry would abort the interpreter): one line naming the variable, exit 2."""
    from pgdoctor.knowledge.torch_env import torch_import_problem

    problem = torch_import_problem(os.environ)
    if problem:
        raise UserError(f"{problem}; pgdoctor explain ENV406")


def _quiet_stdout() -> None:
    """Flush what the report printed so far; if stdout itself is what failed, drop it."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def _internal_error(exc: BaseException) -> int:
    import traceback

    from pgdoctor.knowledge.clip import clip

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    message = clip(str(exc).splitlines()[0], 300) if str(exc) else ""
    _error_line(
        f"pgdoctor: internal error: {type(exc).__name__}: {message}{where} "
        f"(a bug in pgdoctor {__version__}; PGDOCTOR_TRACEBACK=1 prints the traceback)"
    )
    if os.environ.get("PGDOCTOR_TRACEBACK"):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        worker = getattr(exc, "worker_traceback", "")
        if worker:  # verify's worker process: where the bug was raised
            print(worker, file=sys.stderr)
    return EXIT_INTERNAL


def emit_json(obj: Any) -> None:
    from pgdoctor.model import numbers

    click.echo(numbers.dumps(obj, indent=1, default=str))  # never NaN or Infinity
