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
    return dict(spec)


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
