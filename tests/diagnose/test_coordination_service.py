"""The XLA/TSL coordination service (JAX's and TF's multi-host rendezvous): a barrier that timed out,
and the leader stopping because registration failed, in the shapes the runtime and its wrappers print
them (coordination_service.cc across jaxlib 0.4.x, the gRPC status record, TF's exception type).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import failure_findings

_TASKS = "/job:jax_worker/replica:0/task:1\n/job:jax_worker/replica:0/task:3\n"
_GRPC = (
    "Additional GRPC error information from remote target unknown_target_for_coordination_leader while "
    "calling /tensorflow.CoordinationService/Barrier:\n"
)
CASES = [
    # older jaxlib: Barrier_id, the tasks one per line after the record
    (
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
        "PjRT_Client_Connect. Timed out task names:\n" + _TASKS + "\n" + _GRPC,
        "PjRT_Client_Connect",
        True,
        [1, 3],
    ),
    # newer jax exception type and the "Id:" wording of the start-up barrier
    (
        "jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: "
        "[Init]Wait_for_all_tasks_to_register::0. This usually happens because a task triggered the barrier "
        "too early or too slowly. Please look at the task logs (both timed out and first task) to debug "
        "further.",
        "[Init]Wait_for_all_tasks_to_register::0",
        True,
        [],
    ),
    # the leader's record: registration failed, then the barrier it gave up on
    (
        "Stopping coordination service as cluster registration failed. This may be due to 1) some tasks "
        "crashed earlier before connecting, 2) some tasks were never scheduled, or 3) scheduling delays.\n\n"
        "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0.",
        "[Init]Wait_for_all_tasks_to_register::0",
        True,
        [],
    ),
    # a user barrier after start-up (levanter's multihost_broadcast_sync)
    (
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
        "multihost_broadcast_sync0. Timed out task names:\n/job:jax_worker/replica:0/task:3\n"
        "/job:jax_worker/replica:0/task:0\n",
        "multihost_broadcast_sync0",
        False,
        [0, 3],
    ),
    # TF multi-worker: the same service under TensorFlow's exception type
    (
        "tensorflow.python.framework.errors_impl.DeadlineExceededError: Barrier timed out. Barrier_id: "
        "CoordinationServiceBarrier. Timed out task names:\n/job:worker/replica:0/task:2\n",
        "CoordinationServiceBarrier",
        False,
        [2],
    ),
]
PREFIXES = ["", "[rank0]: ", "E0125 19:34:15.371885 140 coordination_service.cc:612] ", "(worker, pid=77) "]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "barrier", "startup", "tasks"), CASES)
def test_a_coordination_barrier_timeout_is_the_rendezvous(
    prefix: str, log: str, barrier: str, startup: bool, tasks: list[int]
) -> None:
    text = "\n".join(prefix + line if line else line for line in log.splitlines())
    real = failure_findings(text)
    assert real and real[0].code == "RUN221", [(f.code, f.message) for f in real]
    facts = real[0].facts
    assert facts["barrier"] == barrier and facts["startup"] is startup, facts
    if tasks and not prefix.startswith("E0125"):
        assert facts["ranks"] == tasks, facts


def test_registration_failure_alone() -> None:
    text = (
        "Stopping coordination service as cluster registration failed. This may be due to 1) some tasks "
        "crashed earlier before connecting, 2) some tasks were never scheduled, or 3) scheduling delays.\n"
    )
    real = failure_findings(text)
    assert [f.code for f in real][:1] == ["RUN221"] and real[0].facts["startup"] is True


@pytest.mark.parametrize(
    "text",
    [
        # a healthy multi-host start: the service's INFO lines
        "I0125 19:30:01.000000 1 coordination_service.cc:570] /job:jax_worker/replica:0/task:0 has "
        "connected to coordination service.\n"
        "I0125 19:30:02.000000 1 coordination_service.cc:601] Barrier(PjRT_Client_Connect) has passed "
        "with status: OK\n",
        # prose that names the words without the runtime's record
        "We noticed the barrier timed out once last week, retrying fixed it.\n",
    ],
)
def test_healthy_or_prose_stays_silent(text: str) -> None:
    real = failure_findings(text)
    assert real == [], [(f.code, f.message) for f in real]
