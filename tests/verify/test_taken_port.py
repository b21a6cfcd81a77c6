"""verify's ranks when their MASTER_PORT is taken between its choice and rank 0's bind (seconds of
importing torch on a busy host): spawned again on a new port, not a crashed run."""

from __future__ import annotations

import socket

from pgdoctor.probes.processes import free_port
from pgdoctor.verify.launch import launch
from pgdoctor.verify.result import config


def test_verify_runs_on_a_new_port_when_its_first_is_taken() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen(1)
        run = launch("pgdoctor.verify.examples:mlp", "ddp", 2, config(2, 1, "ddp", "gloo", 30), 90,
                     port=held.getsockname()[1])  # fmt: skip
    assert [o.returncode for o in run.outcomes] == [0, 0], run.outcomes[0].stderr[-600:]
    assert run.reference and all(run.ranks)
    assert not any("already in use" in o.stderr for o in run.outcomes)
