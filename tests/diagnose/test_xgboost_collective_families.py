"""XGBoost's collective (doctor/diagnose/rules/xgboost_collective.py) read at its source, XGBoost 2.0-3.x:
src/collective/result.cc prints a failed Result as one "- " line per level ("- [tracker.cc:286|12:58:58]: ..."
in 2.1+ with the place), under "XGBoostError: [time] .../src/collective/result.cc:78:" (Python) or
"ml.dmlc.xgboost4j.java.XGBoostError:" (JVM); comm.cc (tracker / ring bootstrap), socket.cc (connect),
poll_utils.h ("Poll timeout:N seconds."), loop.cc ("Encountered EOF. The other end is likely closed."),
comm.cc's error listener ("Another worker is running into error.").
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding

PY = "xgboost.core.XGBoostError: [10:01:02] /workspace/src/collective/result.cc:78: \n"
JVM = "ml.dmlc.xgboost4j.java.XGBoostError: [15:05:31] /workspace/src/collective/result.cc:78: \n"

TRACKER = [
    # 2.1-3.x Python
    (
        PY + "- Failed to bootstrap the communication group.\n- Bootstrap failed.\n"
        "- Failed to connect to the tracker.\n- Failed to connect to 10.1.2.3:9091\n"
        "- connect failed. system error:Connection refused\n",
        {"host": "10.1.2.3", "port": 9091, "error": "Connection refused"},
    ),
    # 2.1+ with the place before each level
    (
        JVM + "- [comm.cc:290|12:58:58]: Failed to bootstrap the communication group.\n"
        "- [comm.cc:41|12:58:58]: Failed to connect to the tracker.\n"
        "- [socket.cc:189|12:58:58]: Failed to connect to node131:38437\n",
        {"host": "node131", "port": 38437},
    ),
    # 2.0's rabit (allreduce_base.cc) wording of the same
    (
        JVM.replace("src/collective/result.cc:78", "rabit/src/allreduce_base.cc:127")
        + "- Failed to connect to the tracker.\n- Failed to recieve the verification number.\n",
        {},
    ),
]


@pytest.mark.parametrize(("log", "facts"), TRACKER)
def test_tracker_unreachable_is_the_rendezvous(log: str, facts: dict) -> None:
    check_root(log, "RUN222", facts)


def test_workers_that_cannot_reach_each_other_is_the_network() -> None:
    log = (
        PY + "- Failed to bootstrap the communication group.\n- Failed to connect to other workers.\n"
        "- Failed to connect to 10.0.0.7:41234\n- connect failed. system error:No route to host\n"
    )
    check_root(log, "RUN174", {"host": "10.0.0.7", "error": "No route to host"})
    log = PY + "- Bootstrap failed to connect to ring next.\n- Failed to connect to 10.0.0.8:40001\n"
    check_root(log, "RUN174", {"port": 40001})


def test_poll_timeout_in_a_collective_is_a_collective_timeout() -> None:
    check_root(PY + "- Poll timeout:1800 seconds.\n", "RUN151", {"timeout_s": 1800})


def test_poll_timeout_while_bootstrapping_is_the_rendezvous() -> None:
    log = (
        PY
        + "- Failed to bootstrap the communication group.\n- Bootstrap failed.\n- Poll timeout:300 seconds.\n"
    )
    check_root(log, "RUN221", {"timeout_s": 300})


def test_eof_from_a_peer_is_the_link() -> None:
    check_root(PY + "- Encountered EOF. The other end is likely closed. system error:Success\n", "RUN174")


def test_another_worker_failed_yields_to_that_error() -> None:
    warn = (
        "[10:01:02] WARNING: /workspace/src/collective/comm.cc:365: Another worker is running into error.\n"
    )
    check_root(warn, "RUN133")
    root = root_finding(warn + PY + "- Poll timeout:1800 seconds.\n")
    assert root is not None and root.code == "RUN151", root


DECOYS = [
    "[10:01:02] Task 3 connected to the tracker\n",
    "INFO: poll timeout is set to 1800 seconds (dmlc_timeout)\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_stay_silent(log: str) -> None:
    assert root_finding(log) is None
