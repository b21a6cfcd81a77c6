"""`pgdoctor explain` as people read it: styled on a terminal, plain in a pipe, the file with --raw."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import pgdoctor.playbooks
from pgdoctor.cli.info import plain_playbook, render_playbook
from pgdoctor.playbooks import FRONT_MATTER_KEYS, Playbook, find
from tests.helpers.tty import terminal_output

# Colour switches from the caller's shell would decide the test instead of the code under test.
ENV = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
ESC = "\x1b"


def _playbook(code: str) -> Playbook:
    pb = find(code)
    assert pb is not None
    return pb


def _explain(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", "explain", *argv],
        capture_output=True,
        timeout=60,
        env={**ENV, **(env or {})},
    )


def _explain_on_a_terminal(*argv: str, env: dict[str, str] | None = None) -> str:
    """Run explain with stdout on a pseudo-terminal, so isatty() is true as in a real shell."""
    rc, raw, err = terminal_output(
        ["explain", *argv], {**ENV, "TERM": "xterm-256color", "COLUMNS": "100", **(env or {})}, timeout=60
    )
    assert rc == 0, err
    # The tty turns each \n into \r\n on the way out.
    return raw.decode("utf-8").replace("\r\n", "\n")


def _has_front_matter(out: str) -> bool:
    lines = out.splitlines()
    return "---" in lines or any(line.startswith(f"{key}:") for line in lines for key in FRONT_MATTER_KEYS)


@pytest.mark.parametrize("name", ["ENV101", "dev-shm-too-small", "env501"])
def test_piped_output_is_plain_text_without_front_matter(name: str) -> None:
    proc = _explain(name)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode("utf-8")
    pb = _playbook(name)
    assert ESC not in out
    assert not _has_front_matter(out), out[:400]
    first = out.splitlines()[0]
    for field in (pb.code, pb.slug, pb.meta["severity"], pb.meta["category"], pb.meta["title"]):
        assert field in first
    assert "## What it means" in out and pb.sections["What it means"] in out
    assert out == plain_playbook(pb)


def test_no_color_on_a_terminal_prints_the_plain_text() -> None:
    out = _explain_on_a_terminal("ENV101", env={"NO_COLOR": "1"})
    assert out == plain_playbook(_playbook("ENV101"))


def test_a_terminal_gets_the_styled_rendering() -> None:
    out = _explain_on_a_terminal("ENV101")
    pb = _playbook("ENV101")
    assert ESC + "[" in out
    assert not _has_front_matter(out)
    assert _strip_ansi(out).splitlines()[0] == plain_playbook(pb).splitlines()[0]
    assert "## What it means" not in out and "What it means" in out


@pytest.mark.parametrize("name", ["ENV101", "dev-shm-too-small"])
def test_raw_prints_the_file_byte_for_byte(name: str) -> None:
    pb = _playbook(name)
    on_disk = (Path(pgdoctor.playbooks.__file__).parent / pb.filename).read_bytes()
    assert on_disk.startswith(b"---\ncode: ")
    proc = _explain(name, "--raw")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == on_disk
    # Even on a terminal: --raw is for people who want the file, not a rendering of it.
    assert _explain_on_a_terminal(name, "--raw").encode("utf-8") == on_disk.replace(b"\r\n", b"\n")


def test_render_playbook_styles_and_hides_the_yaml() -> None:
    pb = _playbook("ENV101")
    buf = io.StringIO()
    render_playbook(pb, _forced_terminal(buf))
    out = buf.getvalue()
    assert ESC + "[" in out
    assert not _has_front_matter(out)
    for key in FRONT_MATTER_KEYS:
        assert f"{key}: " not in out
    assert "## " not in out  # headings are rendered, not printed as Markdown source
    visible = _strip_ansi(out)
    assert visible.splitlines()[0] == plain_playbook(pb).splitlines()[0]
    assert "What it means" in visible and "Known false positives" in visible


def test_render_playbook_keeps_brackets_in_the_title_literal() -> None:
    pb = _playbook("ENV101")
    odd = Playbook(pb.filename, {**pb.meta, "title": "[bold]not markup[/bold] [x]"}, pb.sections, pb.text)
    buf = io.StringIO()
    render_playbook(odd, _forced_terminal(buf))
    assert "[bold]not markup[/bold] [x]" in _strip_ansi(buf.getvalue())


@pytest.mark.parametrize("extra", [[], ["--raw"]])
def test_unknown_code_exits_2_with_one_line(extra: list[str]) -> None:
    proc = _explain("XYZ999", *extra)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode("utf-8").strip().splitlines()
    assert len(err) == 1 and "XYZ999" in err[0]


def _forced_terminal(buf: io.StringIO) -> Console:
    # Explicit colour settings: the test must not depend on the TERM or NO_COLOR it runs under.
    return Console(file=buf, force_terminal=True, color_system="standard", no_color=False, width=200)


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
