"""`-o FILE`, the one way every command writes a report or a snapshot to a file.

- Checked up front (`checked_output`, the option's callback): a missing or read-only directory,
  a directory as the file, or a symbolic link fails in milliseconds, before a long run.
- Never half-written: the text goes to a temporary file in the same directory, is flushed to
  disk, then renamed over FILE. A full disk or a kill mid-write leaves the previous report whole
  and FILE never holds half a JSON document.
- A symbolic link is refused unless `--follow-symlinks` is given (run as root, `-o` once wrote
  through a planted link onto its target). A link to a device or pipe (`/dev/stdout`) is written
  as it is, like a device or a FIFO itself: nothing there can be lost.
- Temporary files of a run that was SIGKILLed mid-write (their name holds the writer's pid) are
  removed by the next write into the same directory.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, TextIO

import click

from pgdoctor.engine.errors import UserError

if TYPE_CHECKING:
    from pgdoctor.model import Report
    from pgdoctor.render import Renderer

_TMP = ".pgdoctor-tmp"
_TMP_NAME = re.compile(rf"^\..+\.(\d+){re.escape(_TMP)}$")


def _streamed(path: str) -> bool:
    """A device, FIFO or socket (or a link to one): written in place, never renamed over."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def problem(path: str, follow_symlinks: bool = False) -> Optional[str]:
    """Why `path` cannot take a report, or None."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.islink(path) and not follow_symlinks and not _streamed(path):
        return (
            f"{path} is a symbolic link (to {os.readlink(path)}); pgdoctor does not write through links "
            "unless --follow-symlinks is given"
        )
    if os.path.isdir(path):
        return f"{path} is a directory"
    if not os.path.isdir(parent):
        return f"directory {parent} does not exist"
    if not os.access(parent, os.W_OK) and not _streamed(path):
        return f"directory {parent} is not writable"
    return None


def checked_output(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """-o is checked before any work runs: a typo in the directory fails in milliseconds, not
    after the whole pre-flight (or a bench that runs for minutes)."""
    if value in (None, "-"):
        return value
    if not value:  # `-o "$OUT"` with OUT unset: not stdout, which the script did not ask for
        raise click.BadParameter("an empty file name", ctx, param)
    why = problem(value, following(ctx))
    if why:
        raise click.BadParameter(why, ctx, param)
    return value


def dir_problem(path: str) -> Optional[str]:
    """Why `path` cannot take a directory of evidence (`hang --save`, `run --save`, `repro --keep`),
    or None: it is a directory pgdoctor can write into, or one it can create."""
    if not path:
        return "an empty directory name"
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{path} exists and is not a directory"
    probe = os.path.abspath(path)
    while not os.path.exists(probe):  # the nearest ancestor that exists is where it is created
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        return f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"directory {probe} is not writable"
    return None


def checked_dir(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """An evidence directory is checked before any work runs (a job or a hang snapshot is not
    taken only for its evidence to be lost at the end)."""
    if value is None:
        return value
    why = dir_problem(value)
    if why:
        raise click.BadParameter(why, ctx, param)
    return value


_FOLLOW = "pgdoctor.follow_symlinks"


def following(ctx: Optional[click.Context] = None) -> bool:
    ctx = ctx or click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().meta.get(_FOLLOW))


def _follow(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.find_root().meta[_FOLLOW] = value


def output_options(
    help_text: str = "Write the report here instead of stdout.", required: bool = False
) -> Callable[[Any], Any]:
    """`-o/--output FILE` and `--follow-symlinks`, the same on every command that writes a file."""

    def wrap(f: Any) -> Any:
        f = click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False),
            default=None,
            required=required,
            callback=checked_output,
            help=help_text,
        )(f)
        return click.option(
            "--follow-symlinks",
            is_flag=True,
            is_eager=True,
            expose_value=False,
            callback=_follow,
            help="Let -o write through a symbolic link (refused by default).",
        )(f)

    return wrap


def _clean_stale(parent: str) -> None:
    """Temporary files whose writer is gone (killed mid-write) are removed."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        m = _TMP_NAME.match(name)
        if not m:
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # its writer still runs
        except ProcessLookupError:
            pass
        except (OSError, ValueError, OverflowError):
            continue
        try:
            os.unlink(os.path.join(parent, name))
        except OSError:
            pass


def write_output(
    path: str, write: Callable[[TextIO], object], follow_symlinks: Optional[bool] = None
) -> None:
    """Call `write(fh)` on a temporary file beside `path`, then rename it over `path`."""
    follow_symlinks = following() if follow_symlinks is None else follow_symlinks
    why = problem(path, follow_symlinks)
    if why:  # checked up front too; the file system may have changed during the run
        raise UserError(f"cannot write {path}: {why}")
    if _streamed(path):  # /dev/stdout is a link to the pipe: opened by its own name
        try:
            with open(path, "w", encoding="utf-8") as fh:
                write(fh)
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
        return
    if os.path.islink(path):  # --follow-symlinks: the link stays, its target is replaced whole
        path = os.path.realpath(path)
    parent = os.path.dirname(os.path.abspath(path))
    _clean_stale(parent)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{os.getpid()}{_TMP}")
    try:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL | os.O_NOFOLLOW, mode)
        with open(fd, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UserError(
            f"cannot write {path}: {exc.strerror or exc} (the previous file, if any, is unchanged)"
        ) from None
    except BaseException:  # an interrupt mid-write: the previous report stays, no temporary file
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_report(report: Report, fmt: str, output: Optional[str], render: Optional[Renderer] = None) -> None:
    """Render to `output` (a file) or stdout; colour only for the console format on a terminal.
    `render` replaces the format's renderer (diagnose has its own console layout). Here, beside
    write_output, rather than in the check command's module: diagnose and hang print a report
    without importing the engine, probes and checks that `check` needs."""
    from pgdoctor.render import get_renderer

    render = render or get_renderer(fmt)
    if output:
        write_output(output, lambda fh: render(report, fh, False))
    else:
        render(report, sys.stdout, fmt == "console" and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
