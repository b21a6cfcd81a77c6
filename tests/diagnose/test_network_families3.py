"""NCCL network failures that reach a log as their final words without NCCL's WARN prefix, read at their
sources: the connect that gave up (misc/socket.cc 2.19-2.22 "socketStartConnect: exceeded retries (34)" /
"exceeded timeouts (20000)", 2.23+ "socketPollConnect: connect to <addr> returned <errno>, exceeded error
retry count after 35 attempts"), the proxy service thread losing a local rank's socket (proxy.cc 2.12+
"[Service thread] Could not receive type from localRank N, res=R, closed=C", also with its file:line
mangled into markdown links by an issue editor), NCCL's interface choice naming docker bridges / veth
pairs in a log that ends before the communicator came up (bootstrap.cc / net_socket.cc "Using"),
and ncclSystemError's string wrapped by a framework
that names the NCCL call on the next line (HugeCTR). Decoys: the string in prose, or not over an NCCL call.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import failure_findings as _findings

PREFIXES = ["", "node7: ", "[1,3]<stdout>:", "2024-05-01 10:00:00 | "]


# (log, code, facts the finding must carry)
CASES = [
    (
        "socketPollConnect: connect to 22.11.219.25<47479> returned Connection refused, exceeded error "
        "retry count after 35 attempts\n",
        "RUN174",
        {"socket_error": "Connection refused", "attempts": 35},
    ),
    (
        "socketPollConnect: connect to 10.0.0.2<43251> returned Connection timed out, exceeded error "
        "retry count after 35 attempts\n",
        "RUN174",
        {"socket_error": "Connection timed out", "attempts": 35},
    ),
    (
        "socketPollConnect: connect to [fe80::1%eth0]<40021> returned No route to host, exceeded error "
        "retry count after 35 attempts\n",
        "RUN174",
        {"socket_error": "No route to host"},
    ),
    ("socketStartConnect: exceeded retries (34)\n", "RUN174", {"attempts": 34}),
    ("socketStartConnect: exceeded timeouts (20000)\n", "RUN174", {"attempts": 20000}),
    (
        "[Service thread] Could not receive type from localRank 7, res=3, closed=0\n",
        "RUN174",
        {"peer_local_rank": 7, "nccl_result": 3},
    ),
    (
        "A100-02:2358430:2358556 [1] [[proxy.cc:1495](http://proxy.cc:1495/)](http://proxy.cc:1495/) NCCL "
        "WARN [Service thread] Could not receive type from localRank 7, res=3, closed=0\n\n"
        "A100-02:2358430:2358556 [1] [[proxy.cc:1519](http://proxy.cc:1519/)](http://proxy.cc:1519/) NCCL "
        "WARN [Proxy Service 9] Failed to execute operation Connect from rank 15, retcode 3\n"
        "A100-02:2358430:2358556 [1] NCCL INFO socketProgressOpt: abort called\n",
        "RUN174",
        {"peer_local_rank": 7},
    ),
    (
        "gpu3:81:90 [2] proxy.cc:1464 NCCL WARN [Service thread] Could not receive type from localRank 0, "
        "res=2, closed=1\n",
        "RUN174",
        {"peer_local_rank": 0, "nccl_result": 2},
    ),
    (
        "RuntimeError: Runtime error: unhandled system error\n"
        "        ncclGroupEnd() at ResourceManagerCore(/hugectr/HugeCTR/src/resource_managers/"
        "resource_manager_core.cpp:176)\n",
        "RUN171",
        {"nccl_call": "ncclGroupEnd"},
    ),
    (
        "node1:1:2 [0] NCCL INFO Bootstrap : Using br-05ab815fa14e:172.19.0.1<0>\n",
        "RUN174",
        {"virtual_interfaces": ["br-05ab815fa14e"]},
    ),
    (
        "node1:1:2 [0] NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]veth07ee21a:172.19.0.1<0>\n",
        "RUN174",
        {"virtual_interfaces": ["veth07ee21a"], "interfaces": ["bond0", "veth07ee21a"]},
    ),
    (
        "INFO NET/Socket : Using\n[0]bond0:192.168.1.161<0>\n[1]br-05ab815fa14e:172.19.0.1<0>\n"
        "[2]veth6163fba:fe80::b878:6cff:fe52:abe2%veth6163fba<0>\n[3]docker0:172.17.0.1<0>\n",
        "RUN174",
        {"virtual_interfaces": ["br-05ab815fa14e", "veth6163fba", "docker0"]},
    ),
    (
        "RuntimeError: Runtime error: unhandled system error\n"
        "        ncclCommInitRank(&comm, n, id, rank) at init_nccl(/src/comm.cpp:88)\n",
        "RUN171",
        {"nccl_call": "ncclCommInitRank"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_network_final_texts(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    text = "".join(prefix + ln + "\n" for ln in log.splitlines())
    found = _findings(text)
    assert found, text
    assert found[0].category == "nccl_network", [(f.code, f.category) for f in found]
    mine = [f for f in found if f.code == code]
    assert mine, [(f.code, f.message) for f in found]
    for key, value in facts.items():
        assert any(f.facts.get(key) == value for f in mine), (key, [f.facts for f in mine])


DECOYS = [
    "I got unhandled system error when training, any idea?\n",
    "ERROR: unhandled system error\nsomething else went on\n",
    "RuntimeError: Runtime error: unhandled system error\n   at main.py line 3\n",
    # the bridge was used and the communicator came up anyway; a plain interface list
    "node1:1:2 [0] NCCL INFO Bootstrap : Using br-05ab815fa14e:172.19.0.1<0>\n"
    "node1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 - Init COMPLETE\n",
    "node1:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n",
    "the retry count was exceeded after 3 attempts, retrying the download\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_prose_and_other_frames_are_silent(log: str) -> None:
    assert [f.code for f in _findings(log) if f.category == "nccl_network"] == []
