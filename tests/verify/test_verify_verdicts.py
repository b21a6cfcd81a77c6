"""The user's own code failing in the one-process reference is the entry's error (exit 2 with
the user's traceback, secrets masked, terminal control neutralised), answered as soon as it
happens, never after --timeout; real gloo ranks."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

import pgdoctor
from pgdoctor.verify.entry import EntryError

HEAD = """import sys
import torch
from torch import nn


def data(rank, world, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(4, 8, generator=g), torch.randn(4, 3, generator=g)


def model():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
"""

# name -> (the entry's body, what the error says)
CASES = {
    "optimizer_raises": (
        "def make_opt(params):\n    raise ValueError('lr must be positive, token=s3cr3t-value "
        "\\x1b[2J')\n\n\n"
        "def build():\n    return {'model': model(), 'loss': nn.MSELoss(), 'data': data, 'optimizer': "
        "make_opt}\n",
        "ValueError",
    ),
    "optimizer_none": (
        "def build():\n    return {'model': model(), 'loss': nn.MSELoss(), 'data': data, 'optimizer': lambda "
        "p: None}\n",
        "returned NoneType, not a torch.optim.Optimizer",
    ),
    "no_parameters": (
        "def build():\n    return {'model': nn.ReLU(), 'loss': nn.MSELoss(), 'data': data}\n",
        "has no parameters",
    ),
    "loss_not_scalar": (
        "def build():\n    return {'model': model(), 'loss': nn.MSELoss(reduction='none'), 'data': data}\n",
        "not a scalar",
    ),
    # Callables of the wrong arity raised their TypeError in pgdoctor's frame that calls them:
    # "internal error ... a bug in pgdoctor", exit 4.
    "data_without_arguments": (
        "def build():\n    batches = [data(0, 1, 0)]\n    return {'model': model(), 'loss': nn.MSELoss(), "
        "'data': lambda: batches[0]}\n",
        "['data'] cannot be called as data(rank, world_size, step)",
    ),
    "loss_of_one_argument": (
        "def build():\n    return {'model': model(), 'loss': lambda out: out.sum(), 'data': data}\n",
        "['loss'] cannot be called as loss(output, target)",
    ),
    "exit_in_data": (
        "def quits(rank, world, step):\n    sys.exit('no more data')\n\n\n"
        "def build():\n    return {'model': model(), 'loss': nn.MSELoss(), 'data': quits}\n",
        "SystemExit",
    ),
}
TIMEOUT_S = 100.0


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("user_errors")
    out = {}
    for name, (body, _) in CASES.items():
        p = d / f"{name}.py"
        p.write_text(HEAD + "\n\n" + body)
        out[name] = p
    return out


@pytest.mark.slow
def test_user_code_failures_in_the_reference_are_the_entrys_error_at_once(entries: dict[str, Path]) -> None:
    t0 = time.monotonic()
    got = pgdoctor.verify.verify_many(
        [f"{entries[n]}:build" for n in CASES], nproc=2, steps=2, timeout_s=TIMEOUT_S
    )
    wall = time.monotonic() - t0
    for (name, (_, says)), res in zip(CASES.items(), got):
        assert isinstance(res, EntryError), (name, res)
        assert says in res.text(), (name, res.text())
    # Each is answered when it happens: five spawns of 2 ranks, not five timeouts.
    assert wall < 4 * TIMEOUT_S
    raised = got[0]
    assert isinstance(raised, EntryError)
    assert (
        f"{entries['optimizer_raises'].name}" in raised.user_traceback and "make_opt" in raised.user_traceback
    )
    assert "s3cr3t" not in raised.text() and "\x1b" not in raised.text() and "\\x1b" in raised.text()
    assert "doctor/verify" not in raised.user_traceback


@pytest.mark.slow
def test_cli_exit_2_with_the_users_traceback(entries: dict[str, Path]) -> None:
    t0 = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "verify",
            f"{entries['exit_in_data']}:build",
            "--timeout",
            str(TIMEOUT_S),
        ],
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT_S,
    )
    assert r.returncode == 2, r.stderr
    assert time.monotonic() - t0 < TIMEOUT_S / 2
    assert "SystemExit: no more data" in r.stderr and "exit_in_data.py" in r.stderr and "in quits" in r.stderr
    assert "Traceback" in r.stderr and "doctor/verify" not in r.stderr
