"""The dry run's parse check, run with this tree's pgdoctor on the path: every `pgdoctor` command
of the steps (and of the children that run pgdoctor commands themselves) parses against the CLI
as click would parse it, option names, choices and ranges included, without running it; every
child module imports and has a main.

    python -m scripts.gpu_acceptance.parse_check       (prints one line per problem; exit 1 if any)
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from typing import Any

from scripts.gpu_acceptance.steps import STEPS


def _fill(argv: tuple[str, ...], work: str) -> list[str]:
    out = []
    for a in argv:
        a = a.replace("{py}", sys.executable).replace("{pid}", str(os.getpid()))
        if a.startswith("{work}"):
            a = a.replace("{work}", work)
            # Options that must name an existing file or folder get one.
            if os.path.splitext(a)[1]:
                os.makedirs(os.path.dirname(a), exist_ok=True)
                open(a, "a").close()
            else:
                os.makedirs(a, exist_ok=True)
        out.append(a)
    return out


def parse(argv: list[str]) -> str:
    """'' when `pgdoctor ARGV...` parses; else click's message."""
    import click

    from pgdoctor.cli import LAZY_COMMANDS, cli

    cmd: Any = cli
    args = argv[1:]
    ctx: Any = None
    try:
        while isinstance(cmd, click.Group):
            if not args:
                return "no command given"
            if args[0] not in cmd.list_commands(ctx or click.Context(cmd)):
                what = (
                    "not available in this tree" if cmd is cli and args[0] not in LAZY_COMMANDS else "unknown"
                )
                return f"`{args[0]}`: {what}"
            name = args[0]
            parent = ctx or click.Context(cmd, info_name="pgdoctor")
            sub = cmd.get_command(parent, name)
            ctx = (
                sub.make_context(name, list(args[1:]), parent=parent)
                if not isinstance(sub, click.Group)
                else click.Context(sub, info_name=name, parent=parent)
            )
            cmd, args = sub, args[1:]
        return ""
    except click.exceptions.Exit:
        return ""
    except click.ClickException as exc:
        return exc.format_message()


def problems() -> list[str]:
    out = []
    with tempfile.TemporaryDirectory(prefix="gpu-acceptance-dry-") as work:
        modules = set()
        for step in STEPS:
            for c in step.cmds:
                argv = _fill(c.argv, os.path.join(work, f"step{step.number}"))
                if c.argv[0] == "pgdoctor":
                    msg = parse(argv)
                    if msg:
                        out.append(f"step {step.number} ({step.name}) {c.label}: `{' '.join(c.argv)}`: {msg}")
                elif c.argv[1:2] == ("-m",):
                    modules.add((step, c.argv[2]))
        for step, name in sorted(modules, key=lambda t: (t[0].number, t[1])):
            try:
                mod = importlib.import_module(name)
            except Exception as exc:  # a child that does not import is the defect to report
                out.append(
                    f"step {step.number} ({step.name}): {name} does not import: {type(exc).__name__}: {exc}"
                )
                continue
            if not callable(getattr(mod, "main", None)):
                out.append(f"step {step.number} ({step.name}): {name} has no main()")
            for argv in getattr(mod, "pgdoctor_commands", lambda: [])():
                msg = parse(_fill(argv, os.path.join(work, "child")))
                # A command this tree does not have yet is the child's to report at run time.
                if msg and "not available in this tree" not in msg:
                    out.append(f"step {step.number} ({step.name}) {name}: `{' '.join(argv)}`: {msg}")
    return out


if __name__ == "__main__":
    found = problems()
    for p in found:
        print(p)
    sys.exit(1 if found else 0)
