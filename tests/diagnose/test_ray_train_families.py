"""Ray Train v2's controller errors (doctor/diagnose/rules/ray_train.py), read at their source:
python/ray/train/v2/_internal/exceptions.py (Ray 2.43+): BroadcastCollectiveTimeoutError ("The
broadcast operation timed out after N seconds. Please make sure all worker ranks call `ray.train.report`." /
"The following ranks have not called it: [..]"), behind the "(TrainController pid=N)" prefix.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding


def test_worker_group_startup_timeout_stays_launch_starts() -> None:
    """launch_start.py reads WorkerGroupStartupTimeoutError; the FailurePolicy's wrapping of it too."""
    log = (
        "(TrainController pid=33120) [FailurePolicy] Decision: FailureDecision.RETRY, Error source: "
        "controller, Error count / maximum errors allowed: 1/inf, Error: Training failed due to controller "
        "error:\n"
        "(TrainController pid=33120) The worker group startup timed out after 30.0 seconds waiting for 2 "
        "workers. Possible causes include insufficient cluster resources and transient network issues.\n"
    )
    check_root(log, "RUN221", {"workers": 2})


def test_report_barrier_names_the_ranks_that_never_called_it() -> None:
    log = (
        "ray.train.v2._internal.exceptions.BroadcastCollectiveTimeoutError: The broadcast operation timed "
        "out after 1800.00 seconds. Please make sure all worker ranks call `ray.train.report`. \n"
        "The following ranks have not called it: [1, 3]\n"
        "You can set this timeout with the RAY_TRAIN_REPORT_BARRIER_TIMEOUT_S environment variable (current "
        "value: 1800.00 s).\n"
    )
    check_root(log, "RUN201", {"ranks": [1, 3], "op": "ray.train.report"})


DECOYS = [
    "INFO worker_group.py:180 -- Waiting for worker group startup (timeout 30 seconds)\n",
    "Set RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S=600 so that the worker group startup does not time out\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_stay_silent(log: str) -> None:
    assert root_finding(log) is None
