"""Console output fits a 120-column terminal (a pseudo-terminal of 120x40): plan's layout
tables drop the memory breakdown and say so, list and list --config wrap their last column under
itself, reports wrap between words; --wide (anywhere on the line) prints everything whole. Into a
pipe without COLUMNS nothing is folded (grep keeps whole lines)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.helpers.paths import FIXTURES, ROOT
from tests.helpers.tty import run_on_terminal

PLAN = ["plan", "--params", "7B", "--gpu", "h100-sxm", "--nodes", "2"]


def _run(*args: str, terminal: bool = True) -> str:
    if terminal:
        rc, out, err = run_on_terminal(list(args), columns=120)
        assert rc in (0, 1), err[-2000:]
        return out
    env = dict(os.environ, COLUMNS="80")  # leaked by a shell or readline: a pipe ignores it
    res = subprocess.run(
        [sys.executable, "-m", "pgdoctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    return res.stdout


def _widest(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


@pytest.mark.parametrize(
    "args",
    [
        PLAN,
        ["list"],
        ["list", "--config"],
        ["diagnose", str(FIXTURES / "logs" / "host_oom_dmesg_and_torchrun.log")],
        ["check", "--level", "quick", "--only", "software,host"],
    ],
    ids=["plan", "list", "list-config", "diagnose", "check"],
)
def test_every_line_fits_120_columns(args: list[str]) -> None:
    assert _widest(_run(*args)) <= 120


def test_plan_drops_the_breakdown_on_a_narrow_terminal_and_wide_keeps_it() -> None:
    narrow = _run(*PLAN)
    head = next(line for line in narrow.splitlines() if line.startswith("#"))
    assert "total" in head and "params" not in head
    assert "memory breakdown (params, grads, optim, acts, buffers) is left out; --wide or --json" in narrow
    for wide in (_run(*PLAN, "--wide"), _run("--wide", *PLAN)):
        head = next(line for line in wide.splitlines() if line.startswith("#"))
        assert "params" in head and "buffers" in head and "left out" not in wide
        assert _widest(wide) > 120
    assert "…" not in narrow  # folded, never cut with an ellipsis


def test_list_config_keeps_every_key_whole_and_a_pipe_keeps_rows_whole() -> None:
    from pgdoctor.checks import load_all
    from pgdoctor.checks.base import CONFIG_KEYS

    load_all()
    narrow = _run("list", "--config")
    for name in CONFIG_KEYS:
        assert name in narrow
    piped = _run("list", "--config", terminal=False)
    rows = [line for line in piped.splitlines()[1:] if line.strip()]
    assert len(rows) == len(CONFIG_KEYS)  # one line each: nothing folded into a pipe
    assert all(line == line.rstrip() for line in piped.splitlines())


def test_a_wrapped_report_line_stays_under_its_indent() -> None:
    text = _run("diagnose", str(FIXTURES / "logs" / "host_oom_dmesg_and_torchrun.log"))
    for line in text.splitlines():
        if line.strip():
            assert line.startswith((" ", "[x]", "[!]", "[ok]", "FAILED", "PASSED", "INCOMPLETE")) or re.match(
                r"\d+ finding", line
            ), line
