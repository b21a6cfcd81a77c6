"""`pgdoctor list` and `pgdoctor explain`: the code catalogue and the playbooks."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CODES, CONFIG_KEYS
from pgdoctor.cli import emit_json
from pgdoctor.engine.errors import UserError
from pgdoctor.engine.plugins import load_plugins
from pgdoctor.playbooks import Playbook, find

if TYPE_CHECKING:
    from rich.console import Console


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--config", "show_config", is_flag=True, help="List the config keys instead of the codes.")
@click.option("--area", default=None, help="Only codes of this area.")
def list_codes(as_json: bool, show_config: bool, area: str | None) -> None:
    """List every finding code with slug, severity and title (or the config keys)."""
    load_all()
    load_plugins()  # a site plugin's codes (PGDOCTOR_PLUGINS) are codes its reports show
    if show_config:
        keys = sorted(CONFIG_KEYS.values(), key=lambda k: k.name)
        if as_json:
            emit_json(
                {
                    "config_keys": [
                        {"name": k.name, "type": k.type.__name__, "default": k.default, "doc": k.doc}
                        for k in keys
                    ]
                }
            )
            return
        _table(
            ("key", "type", "default", "what it sets"),
            [(k.name, k.type.__name__, repr(k.default), k.doc) for k in keys],
        )
        return
    areas = sorted({c.area for c in CODES.values()})
    if area is not None and area not in areas:
        raise UserError(f"unknown area {area!r} (known: {', '.join(areas)})")
    codes = sorted((c for c in CODES.values() if area in (None, c.area)), key=lambda c: c.code)
    if as_json:
        emit_json(
            {
                "codes": [
                    {
                        "code": c.code,
                        "slug": c.slug,
                        "severity": c.severity.value,
                        "category": c.category,
                        "area": c.area,
                        "title": c.title,
                    }
                    for c in codes
                ]
            }
        )
        return
    _table(
        ("code", "sev", "area", "slug", "title"),
        [(c.code, c.severity.value, c.area, c.slug, c.title) for c in codes],
    )


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Columns that fit the terminal: the last one (title, doc) wraps between words under itself;
    into a pipe every row stays one line (grep)."""
    from rich.console import Console
    from rich.table import Table

    from pgdoctor.knowledge import terminal

    console = Console(
        file=sys.stdout,
        force_terminal=False,
        no_color=True,
        highlight=False,
        width=terminal.width(terminal.WIDE),
        soft_wrap=not terminal.fit(),
    )
    fit = terminal.fit()
    table = Table(box=None, pad_edge=False, show_header=True, header_style="", expand=fit)
    for i, name in enumerate(head):
        last = i == len(head) - 1
        # On a terminal a long value (a list of ops as a default) folds in a column of its own.
        table.add_column(
            name,
            no_wrap=not last and name != "default",
            overflow="fold",
            ratio=1 if last and fit else None,
            max_width=16 if name == "default" and fit else None,
        )
    for row in rows:
        table.add_row(*(_plain(c) for c in row))
    with console.capture() as captured:
        console.print(table)
    for line in captured.get().splitlines():  # rich pads every cell; a line ends where its text does
        click.echo(line.rstrip())


def _plain(text: str) -> Any:
    from rich.text import Text

    return Text(text)


@click.command()
@click.argument("code")
@click.option(
    "--raw", is_flag=True, help="Print the playbook file exactly as on disk, front matter included."
)
def explain(code: str, raw: bool) -> None:
    """Show the playbook of CODE (a code such as ENV401 or its slug)."""
    pb = find(code)
    if pb is None:
        load_all()
        load_plugins()
        known = CODES.get(code.strip().upper()) or next(
            (c for c in CODES.values() if c.slug == code.strip()), None
        )
        if known is not None:  # a site plugin's code: registered, but pgdoctor ships no playbook for it
            raise UserError(
                f"{known.code} ({known.title}) comes from a site plugin (PGDOCTOR_PLUGINS) and has no "
                "playbook here; ask whoever maintains that plugin"
            )
        raise UserError(f"no finding code or slug {code!r} (pgdoctor list shows them)")
    if raw:
        click.echo(pb.source(), nl=False)
    elif _wants_styling():
        from rich.console import Console

        render_playbook(pb, Console())
    else:
        click.echo(plain_playbook(pb), nl=False)


# Same colours as the console report, so a code looks the same in `check` and in `explain`.
_SEVERITY_STYLE = {"fail": "bold red", "warn": "bold yellow", "info": "bold cyan"}


def _wants_styling() -> bool:
    # NO_COLOR counts only when non-empty (no-color.org), as rich itself reads it.
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def playbook_header(pb: Playbook) -> str:
    return f"{pb.code} {pb.slug} [{pb.meta['severity']}, {pb.meta['category']}]: {pb.meta['title']}"


def plain_playbook(pb: Playbook) -> str:
    """The header and the Markdown body: for pipes, logs and `less`, where ANSI codes are noise."""
    return f"{playbook_header(pb)}\n\n{pb.body.rstrip()}\n"


def render_playbook(pb: Playbook, console: Console) -> None:
    """The header in colour, then the body through rich's Markdown, on CONSOLE."""
    from rich.markdown import Markdown
    from rich.text import Text

    # Text pieces, not markup: titles and slugs may hold brackets that rich would parse as tags.
    header = Text.assemble(
        (pb.code, "bold"),
        " ",
        (pb.slug, "dim"),
        " ",
        (f"[{pb.meta['severity']}", _SEVERITY_STYLE.get(pb.meta["severity"], "bold")),
        (f", {pb.meta['category']}]", "dim"),
        ": ",
        (pb.meta["title"], "bold"),
    )
    console.print(header)
    console.print()
    console.print(Markdown(pb.body))
