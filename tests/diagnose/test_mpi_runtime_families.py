"""Open MPI's runtime and openib help texts (rules/mpi_runtime.py), read at their sources: Open MPI v2.1.6 /
v3.1.6 / v4.1.8 orte/tools/orterun/help-orterun.txt ([proc-exit-no-sync], [proc-comm-failed],
[proc-heartbeat-failed], [daemon-died-during-execution], [proc-mem-exceeded]) and
opal/mca/btl/openib/help-mpi-btl-openib.txt ([pp retry exceeded], [pp rnr retry exceeded], [srq rnr retry
exceeded], [of error event]); PRRTE's src/mca/schizo/prte/help-prun.txt (Open MPI 5, "prterun" and its other
wrap of [proc-exit-no-sync])."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

RULE = "-" * 74 + "\n"
CASES = [
    (
        "mpirun has exited due to process rank 3 with PID 4242 on\nnode n1 exiting improperly. There are "
        "three "
        'reasons this could occur:\n\n1. this process did not call "init" before exiting, but others in\n',
        "RUN133",
        {"exited_rank": 3, "pid": 4242, "host": "n1"},
    ),
    (
        "prterun has exited due to process rank 2 with PID 4242 on node n3 exiting\nimproperly. There are "
        "three "
        "reasons this could occur:\n",
        "RUN133",
        {"exited_rank": 2, "host": "n3"},
    ),
    (
        "A critical communication path was lost to:\n\n  My name:      [[12345,0],0]\n  Process name: "
        "[[12345,1],3]\n  Node:         n2\n",
        "RUN174",
        {"host": "n2", "problem": "comm_path_lost"},
    ),
    (
        "mpirun failed to receive scheduled heartbeat communications from a remote\nprocess:\n\n  Process "
        "name: "
        "[[12345,0],1]\n  Node:         n2\n",
        "RUN174",
        {"host": "n2", "problem": "heartbeat_lost"},
    ),
    (
        "mpirun has detected that a required daemon terminated during execution\nof the application with a "
        "non-zero status. This is a fatal error.\n",
        "RUN174",
        {"problem": "daemon_died"},
    ),
    (
        "A process exceeded memory limits:\n\n  Process name: [[12345,1],3]\n  Node:         n2\n",
        "RUN121",
        {"host": "n2", "killer": "orte_memory_sensor"},
    ),
    (
        "The InfiniBand retry count between two MPI processes has been\nexceeded.  "
        '"Retry count" is defined in '
        "the InfiniBand spec 1.2\n(section 12.7.38):\n\nBelow is some information about the host that "
        "raised the "
        "error and the\npeer to which it was connected:\n\n  Local host:   n1\n  Local device: mlx5_0\n  "
        "Peer "
        "host:    n2\n",
        "RUN173",
        {"host": "n1", "ib_device": "mlx5_0", "peer_host": "n2", "problem": "retry_exceeded"},
    ),
    (
        'The OpenFabrics "receiver not ready" retry count on a per-peer\n'
        "connection between two MPI processes "
        "has been exceeded.\n\n  Local host:   n1\n  Local device: mlx4_0\n  Peer host:    n2\n",
        "RUN173",
        {"problem": "rnr_retry_exceeded", "peer_host": "n2"},
    ),
    (
        'The OpenFabrics "receiver not ready" retry count on a shared receive\n'
        "queue or XRC receive queue has "
        "been exceeded.\n",
        "RUN173",
        {"problem": "rnr_retry_exceeded"},
    ),
    (
        "The OpenFabrics stack has reported a network error event.  Open MPI\nwill try to continue, but "
        "your job "
        "may end up failing.\n\n  Local host:        n1\n  MPI process PID:   1234\n  Error number:      10 "
        "(IBV_EVENT_PORT_ERR)\n",
        "RUN173",
        {"ib_event": "IBV_EVENT_PORT_ERR", "host": "n1"},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "node1: "])
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_open_mpi_runtime_family(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    text = RULE + log + RULE
    _check("".join(prefix + ln + "\n" for ln in text.splitlines()), code, facts)


def test_the_ranks_own_exception_outranks_exiting_improperly() -> None:
    log = (
        '[1,0]<stderr>:Traceback (most recent call last):\n[1,0]<stderr>:  File "train.py", line 10, in '
        "<module>\n[1,0]<stderr>:    main()\n[1,0]<stderr>:ValueError: bad shape\n"
        + RULE
        + "mpirun has exited due to process rank 0 with PID 0 on\nnode n1 exiting improperly. There are "
        "three "
        "reasons this could occur:\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN132", root


# PRRTE's shapes (help-prun.txt): the signal wrapped onto the next line, and the first failed process named
# "[prterun-<host>-<pid>@<job>,<rank>]" above its exit code.
@pytest.mark.parametrize(
    ("log", "code", "facts"),
    [
        (
            "prterun noticed that process rank 3 with PID 4242 on node n1 exited on\nsignal 9 (Killed).\n",
            "RUN121",
            {"rank": 3, "host": "n1", "exitcode": -9},
        ),
        (
            "prterun noticed that process rank 2 with PID 4242 on node n1 exited on\nsignal 11 (Segmentation "
            "fault).\n",
            "RUN131",
            {"rank": 2},
        ),
        (
            "prterun detected that one or more processes exited with non-zero status,\n"
            "thus causing the job to be terminated. The first process to do so was:\n\n"
            "   Process name: [prterun-node1-12345@1,3]\n   Exit code:    1\n",
            "RUN133",
            {"rank": 3},
        ),
    ],
)
def test_prrte_exit_records(log: str, code: str, facts: dict[str, object]) -> None:
    _check(RULE + log + RULE, code, facts)


# UCX's status strings (src/ucs/type/status.c) after Open MPI's pml_ucx send / recv.
@pytest.mark.parametrize(
    ("line", "facts"),
    [
        ("[node1:12345] pml_ucx.c:865  Error: ucx send failed: Endpoint timeout", {"op": "send"}),
        (
            "[node1:12345] pml_ucx.c:609  Error: ucx recv failed: Connection reset by remote peer",
            {"op": "recv"},
        ),
    ],
)
def test_ucx_link_failures(line: str, facts: dict[str, object]) -> None:
    _check(line + "\n", "RUN174", facts)
