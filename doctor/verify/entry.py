"""The user's entry: `path/to/file.py:NAME` or `package.module:NAME`, a function without
arguments that returns the mapping pgdoctor verify trains (model, loss, data, optimizer, stages).

Loading and calling it happens in the worker processes only; the command's own process checks
the text and the file, so a user's exception is always the user's traceback, shown as a usage
error (exit 2) by the command.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Mapping
from typing import Any, Callable

REQUIRED = ("model", "loss", "data")
OPTIONAL = ("optimizer", "stages", "tp")


class EntryError(Exception):
    """The entry cannot be used: a bad spec, a missing file, or the user's code raised
    (`user_traceback` then holds the user's frames)."""

    def __init__(self, message: str, user_traceback: str = ""):
        # The user's text is shown as it is: secrets masked, terminal control made visible.
        from pgdoctor.model.redact import neutral, redact_text

        super().__init__(neutral(redact_text(message)))
        self.user_traceback = neutral(redact_text(user_traceback))

    def text(self) -> str:
        return str(self) + (f"\n{self.user_traceback.rstrip()}" if self.user_traceback else "")


def parse(entry: str) -> tuple[str, str]:
    """(module path or file path, NAME); raises EntryError on a malformed spec."""
    target, sep, name = entry.rpartition(":")
    if not sep or not target or not name.isidentifier():
        raise EntryError(f"entry {entry!r} is not path/to/file.py:NAME or package.module:NAME")
    return target, name


def check(entry: str) -> str:
    """Validate the spec without running user code; returns it with a file path made absolute."""
    target, name = parse(entry)
    if target.endswith(".py") or os.sep in target:
        if not os.path.isfile(target):
            what = "is not a regular file" if os.path.exists(target) else "does not exist"
            raise EntryError(f"entry file {target!r} {what}")
        return f"{os.path.abspath(target)}:{name}"
    if not all(part.isidentifier() for part in target.split(".")):
        raise EntryError(f"entry module {target!r} is not a dotted module name")
    return entry


def user_traceback(exc: BaseException) -> str:
    """The traceback without pgdoctor's own frames."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith(here) and not f.filename.startswith("<frozen ")
    ]
    lines = [
        "Traceback (most recent call last):\n",
        *traceback.format_list(frames),
        *traceback.format_exception_only(type(exc), exc),
    ]
    return "".join(lines)


def load(entry: str) -> Callable[[], Any]:
    target, name = parse(entry)
    try:
        if target.endswith(".py") or os.sep in target:
            path = os.path.abspath(target)
            sys.path.insert(0, os.path.dirname(path))
            mod_name = "pgdoctor_entry_" + os.path.splitext(os.path.basename(path))[0]
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise EntryError(f"cannot import {path}")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = mod
            spec.loader.exec_module(mod)
        else:
            sys.path.insert(0, os.getcwd())
            mod = importlib.import_module(target)
    except EntryError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            # the entry's own module is missing: no frame of the user's to show
            raise EntryError(
                f"no module named {exc.name!r} for entry module {target} (a file is path/to/file.py:NAME)"
            ) from None
        raise EntryError(f"importing {target} raised {type(exc).__name__}", user_traceback(exc)) from None
    except BaseException as exc:  # catches-interrupts: the user's module may sys.exit(); it is reported
        raise EntryError(f"importing {target} raised {type(exc).__name__}", user_traceback(exc)) from None
    fn = getattr(mod, name, None)
    if not callable(fn):
        raise EntryError(f"{target} has no callable {name}")
    return fn  # type: ignore[no-any-return]


def call(fn: Callable[[], Any], entry: str) -> dict[str, Any]:
    """NAME() checked against the contract."""
    try:
        spec = fn()
    except BaseException as exc:  # catches-interrupts: the user's function may sys.exit(); it is reported
        raise EntryError(f"{entry}() raised {type(exc).__name__}", user_traceback(exc)) from None
    if not isinstance(spec, Mapping):
        raise EntryError(f"{entry}() returned {type(spec).__name__}, not a mapping with model, loss, data")
    missing = [k for k in REQUIRED if k not in spec]
    if missing:
        raise EntryError(f"{entry}() returned no {', '.join(missing)} (needs {', '.join(REQUIRED)})")
    import torch

    if not isinstance(spec["model"], torch.nn.Module):
        raise EntryError(f"{entry}()['model'] is {type(spec['model']).__name__}, not a torch.nn.Module")
    if next(iter(spec["model"].parameters()), None) is None:
        raise EntryError(f"{entry}()['model'] has no parameters: there is nothing to train or compare")
    for k in ("loss", "data"):
        if not callable(spec[k]):
            raise EntryError(f"{entry}()['{k}'] is not callable")
    for k, call_shape in _CALLED_AS.items():
        if k in spec and callable(spec[k]) and not _accepts(spec[k], call_shape.count(",") + 1):
            raise EntryError(f"{entry}()['{k}'] cannot be called as {k}{call_shape}: pgdoctor calls it so")
    return dict(spec)


# How pgdoctor calls the entry's callables. A `data` of no argument (lambda: batches) raised its
# TypeError in pgdoctor's frame, so it was "internal error: ... a bug in pgdoctor" (exit 4).
_CALLED_AS = {
    "data": "(rank, world_size, step)",
    "loss": "(output, target)",
    "optimizer": "(params)",
}


def _accepts(fn: Callable[..., Any], n: int) -> bool:
    import inspect

    try:
        inspect.signature(fn).bind(*range(n))
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: it is called and judged then
        return True
    return True


def entry_of(build: Any) -> str:
    """The entry spec of a function object (the Python API): file:qualname."""
    if isinstance(build, str):
        return build
    import inspect

    name = getattr(build, "__qualname__", "")
    if not name.isidentifier():
        raise EntryError(f"{build!r} is not a module-level function: the ranks import it by name")
    path = inspect.getsourcefile(build)
    if not path:
        raise EntryError(f"cannot find the source file of {build!r}")
    return f"{os.path.abspath(path)}:{name}"


class Verdict(RuntimeError):
    """A rank's failure that pgdoctor raises on purpose, naming what the entry's model does (DDP
    parameters without a gradient): a verdict on the entry, never a bug of pgdoctor."""


class InternalError(RuntimeError):
    """pgdoctor's own code (pgdoctor.verify, run in a worker) raised while it ran the reference or
    a rank: a bug of pgdoctor (exit 4), never the entry's error. `worker_traceback` holds the
    worker's whole traceback (printed with PGDOCTOR_TRACEBACK=1)."""

    def __init__(self, message: str, worker_traceback: str = ""):
        super().__init__(message)
        self.worker_traceback = worker_traceback


def _pgdoctor_dirs() -> tuple[str, ...]:
    """The directories of pgdoctor's own packages (pgdoctor.verify, pgdoctor.model, ...): not the
    repository's examples or tests, where a user's entry may live."""
    dirs = {os.path.dirname(os.path.abspath(__file__ or ""))}
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        top = name == "pgdoctor" or (name.startswith("pgdoctor.") and name.count(".") == 1)
        if top and file and getattr(mod, "__path__", None):
            dirs.add(os.path.dirname(os.path.abspath(file)))
    return tuple(d + os.sep for d in dirs)


def _is_library(filename: str) -> bool:
    return filename.startswith("<") or any(
        part in filename for part in ("/site-packages/", "/dist-packages/", "/lib/python")
    )


def raised_by_pgdoctor(exc: BaseException) -> bool:
    """Whether `exc` is a bug of pgdoctor rather than the entry's error, from its traceback's frames,
    innermost first: the first frame in pgdoctor's own files makes it pgdoctor's; one in the user's
    files, or in a package such as torch (which pgdoctor only hands the user's model, data and loss:
    a shape mismatch in nn.MSELoss is the entry's), makes it the entry's; the standard library's
    frames (json, copy, ...) are skipped, so pgdoctor's own misuse of them is pgdoctor's."""
    if isinstance(exc, (EntryError, Verdict, InternalError)) or not isinstance(exc, Exception):
        return False  # SystemExit, KeyboardInterrupt: the entry's sys.exit() or the user's Ctrl-C
    if isinstance(exc, RuntimeError) or type(exc).__module__.split(".")[0] == "torch":
        # torch's C++ errors (RuntimeError and its subclasses) have no frame of their own: a
        # torch.cat of the user's mismatched batches raises "in" pgdoctor's frame. The entry's.
        return False
    ours = _pgdoctor_dirs()
    for f in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.abspath(f.filename) if not f.filename.startswith("<") else f.filename
        if path.startswith(ours):
            return True
        if not _is_library(path) or "-packages/" in path:
            return False  # the user's file, or a package given the user's objects
    return False


def internal_record(exc: BaseException) -> dict[str, str]:
    """What a worker writes for pgdoctor's own exception: one line naming the bug and where it
    was raised (the innermost of pgdoctor's frames), and the whole traceback."""
    ours = _pgdoctor_dirs()
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f for f in reversed(frames) if os.path.abspath(f.filename).startswith(ours)), None)
    at = f" at {where.filename}:{where.lineno} in {where.name}" if where else ""
    text = str(exc).strip().splitlines()
    return {
        "message": f"{type(exc).__name__}: {text[0][:300] if text else ''}{at}",
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:],
    }
