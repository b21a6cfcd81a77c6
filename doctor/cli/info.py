"""`pgdoctor list` and `pgdoctor explain`: the code catalogue and the playbooks."""

from __future__ import annotations

import sys

import click

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CODES, CONFIG_KEYS
from pgdoctor.cli import emit_json
from pgdoctor.engine.errors import UserError
from pgdoctor.playbooks import find


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--config", "show_config", is_flag=True, help="List the config keys instead of the codes.")
@click.option("--area", default=None, help="Only codes of this area.")
def list_codes(as_json: bool, show_config: bool, area: str | None) -> None:
    """List every finding code with slug, severity and title (or the config keys)."""
    load_all()
    if show_config:
        keys = sorted(CONFIG_KEYS.values(), key=lambda k: k.name)
        if as_json:
            emit_json({"config_keys": [
                {"name": k.name, "type": k.type.__name__, "default": k.default, "doc": k.doc} for k in keys]})
            return
        for k in keys:
            click.echo(f"{k.name:<40} {k.type.__name__:<6} {k.default!r:<14} {k.doc}")
        return
    codes = sorted((c for c in CODES.values() if area in (None, c.area)), key=lambda c: c.code)
    if as_json:
        emit_json({"codes": [
            {"code": c.code, "slug": c.slug, "severity": c.severity.value, "category": c.category,
             "area": c.area, "title": c.title} for c in codes]})
        return
    for c in codes:
        click.echo(f"{c.code:<8} {c.severity.value:<5} {c.area:<12} {c.slug:<42} {c.title}")


@click.command()
@click.argument("code")
@click.option("--raw", is_flag=True, help="Print the Markdown source.")
def explain(code: str, raw: bool) -> None:
    """Show the playbook of CODE (a code such as ENV401 or its slug)."""
    pb = find(code)
    if pb is None:
        raise UserError(f"no finding code or slug {code!r} (pgdoctor list shows them)")
    if raw or not sys.stdout.isatty():
        click.echo(pb.text)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(f"# {pb.code} {pb.slug}: {pb.meta['title']}\n\n{pb.body}"))
