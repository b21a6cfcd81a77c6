"""c10d socket.cpp records (rules/c10d_socket.py), read at the source: pytorch torch/csrc/distributed/c10d/
socket.cpp (2.1-2.9: formatSockAddr's getnameinfo warning, SocketImpl::accept's errors, tryConnect's
"has timed out, will retry"), in the record shapes of torch < 2.2 ("[W socket.cpp:204] [c10d] ...") and 2.2+
("[W522 06:29:34.248915854 socket.cpp:204] [c10d] ...", a Windows build's full path).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

HEADS = [
    "[W socket.cpp:204] [c10d] ",
    "[W522 06:29:34.248915854 socket.cpp:204] [c10d] ",
    "[W C:\\actions-runner\\_work\\pytorch\\pytorch\\torch\\csrc\\distributed\\c10d\\socket.cpp:204] [c10d] ",
    "[rank0]:[W522 06:29:34.248915854 socket.cpp:204] [c10d] ",
]


@pytest.mark.parametrize("head", HEADS)
@pytest.mark.parametrize("err", [-3, -2, 11004])
def test_reverse_lookup_where_the_start_up_stops(head: str, err: int) -> None:
    line = f"{head}The hostname of the client socket cannot be retrieved. err={err}\n"
    _check(line * 2, "RUN222", {"gai_error": err})


def test_reverse_lookup_in_a_run_that_went_on_is_quiet() -> None:
    log = (
        "[W socket.cpp:204] [c10d] The hostname of the client socket cannot be retrieved. err=-3\n"
        "[rank0] epoch 0 step 10 loss 2.31\n"
    )
    assert _root(log) is None


def test_reverse_lookup_before_the_communicator_came_up_is_quiet() -> None:
    log = (
        "[W socket.cpp:204] [c10d] The hostname of the client socket cannot be retrieved. err=-3\n"
        + "[W socket.cpp:204] [c10d] socket record\n" * 60
        + "node1:1234:1300 [0] NCCL INFO comm 0x55d0 rank 0 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN222"


@pytest.mark.parametrize(
    "line,error",
    [
        (
            "[E socket.cpp:435] [c10d] The server socket on [::]:29500 has failed to accept a connection "
            "[24] (Too many open files).",
            "[24] (Too many open files)",
        ),
        ("[E socket.cpp:431] [c10d] The server socket on [::]:29500 is not listening for connections.", None),
    ],
)
def test_store_server_stops_accepting(line: str, error: object) -> None:
    root = _root(line + "\n")
    assert root is not None and root.code == "RUN222", root
    if error:
        assert root.facts.get("error") == error


def test_connect_attempt_timed_out_where_the_log_stops() -> None:
    line = "[W socket.cpp:697] [c10d] The server socket on [node-1]:29500 has timed out, will retry.\n"
    _check(line * 3, "RUN222", {"store_address": "[node-1]:29500"})
    assert _root(line + "[rank1] epoch 0 step 10 loss 2.31\n") is None
