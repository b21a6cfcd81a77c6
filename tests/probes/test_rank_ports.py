"""The MASTER_PORT of the ranks pgdoctor spawns itself (verify, the lab, the collective sweep):
drawn below the kernel's ephemeral range, never twice, and replaced once when a rank finds it taken."""

from __future__ import annotations

import socket
import sys

from pgdoctor.probes.processes import (
    ChildOutcome,
    ephemeral_low,
    free_port,
    port_taken,
    run_children,
    with_free_port,
)
from tests.helpers.paths import ROOT

# Rank 0 of a store, as verify's and the lab's workers open it (probes/store.py).
_STORE = (
    "import os; from pgdoctor.probes.store import tcp_store; "
    "tcp_store('127.0.0.1', int(os.environ['MASTER_PORT']), 1, True, 10); print('listening')"
)


def test_ports_lie_below_the_ephemeral_range_and_are_never_given_twice() -> None:
    low = ephemeral_low()
    ports = [free_port() for _ in range(100)]
    assert len(set(ports)) == 100
    assert all(1024 <= p < low for p in ports), (low, sorted(ports)[-3:])


def test_a_port_a_rank_finds_taken_is_replaced_once() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen(1)
        taken = held.getsockname()[1]
        tried: list[int] = []
        firsts: list[list[ChildOutcome]] = []

        def spawn(port: int) -> list[ChildOutcome]:
            tried.append(port)
            env = {"MASTER_PORT": str(port), "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
            out = run_children([[sys.executable, "-c", _STORE]], [env], 120)
            firsts.append(out)
            return out

        outcomes = with_free_port(spawn, taken)
    assert tried[0] == taken and len(tried) == 2 and tried[1] != taken
    assert "Address already in use" in firsts[0][0].stderr and firsts[0][0].returncode != 0
    assert port_taken(firsts[0], taken)
    assert outcomes[0].returncode == 0 and "listening" in outcomes[0].stdout, outcomes[0].stderr[-400:]


def _outcome(stderr: str) -> ChildOutcome:
    return ChildOutcome(0, ("x",), 1, False, 0.1, "", stderr)


def test_only_a_line_that_names_the_port_counts() -> None:
    # The user's own server failing is no reason to spawn the ranks again.
    assert not port_taken([_outcome("OSError: [Errno 98] Address already in use\n")], 29511)
    assert not port_taken([_outcome("my server on 295110: Address already in use\n")], 29511)
    torch_says = (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
        "address. port: 29511, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
    )
    assert port_taken([_outcome(torch_says)], 29511)
    assert port_taken([_outcome("rank 0 cannot listen on 127.0.0.1:29511: Address already in use")], 29511)
