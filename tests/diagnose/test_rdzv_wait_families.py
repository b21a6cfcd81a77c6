"""Kubeflow worker pods stuck in the operator's init container, and torch's env:// message by its tail
(rules/rdzv_values.py), read at their sources:

- kubeflow/training-operator pkg/controller.v1/pytorch/initcontainer.go (v1.3-v1.8: init container
  "init-pytorch", busybox, 'until nslookup <master>; do echo waiting for master; sleep 2; done;', later
  'err=1;for i in $(seq N); ... exit $err'), as Kubernetes shows its state: the kubelet's BackOff event
  (pkg/kubelet/kuberuntime "Back-off restarting failed container %s in pod %s"), kubectl get pods' STATUS
  "Init:CrashLoopBackOff" / "Init:Error" / "Init:0/1", kubectl logs' 'container "pytorch" in pod "..." is
  waiting to start: PodInitializing': RUN222;
- torch/distributed/rendezvous.py (1.x-2.9) _env_rendezvous_handler's "Error initializing torch.distributed
  using env:// rendezvous: environment variable RANK expected, but not set", broken after "rendezvous:" or
  cut to its tail: RUN224.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

K8S = [
    (
        "  Warning  BackOff         2m49s                  kubelet            Back-off restarting failed "
        "container init-pytorch in pod random-exp-jw6qxmrm-worker-0_sampler(8d6860a7-204d-45c8-bb57)",
        {"pod": "random-exp-jw6qxmrm-worker-0"},
    ),
    (
        "Warning  BackOff  3m  kubelet  Back-off restarting failed container wait-for-master in pod "
        "job-a-worker-1_default(11aa)",
        {"pod": "job-a-worker-1"},
    ),
    (
        'Error from server (BadRequest): container "pytorch" in pod "jupyter-kernel-jxosi-worker-0" is '
        "waiting to start: PodInitializing",
        {"pod": "jupyter-kernel-jxosi-worker-0", "init_state": "PodInitializing"},
    ),
    (
        "pytorch-dist-mnist-worker-0   0/1     Init:CrashLoopBackOff   5          10m",
        {"init_state": "CrashLoopBackOff"},
    ),
    ("pytorch-dist-mnist-worker-1   0/1     Init:Error   2          4m", {"init_state": "Error"}),
    ("pytorch-dist-mnist-worker-1   0/1     Init:0/1     0          30m", {"init_state": "0/1"}),
]


@pytest.mark.parametrize("line,facts", K8S)
def test_worker_pod_waits_for_the_master(line: str, facts: dict[str, object]) -> None:
    _check(line + "\n", "RUN222", facts)


def test_other_pods_in_init_are_not_the_wait() -> None:
    # an app container of another pod, a master pod in its init: not the operator's worker wait
    root = _root(
        'Error from server (BadRequest): container "web" in pod "web-0" is waiting to start: '
        "PodInitializing\n"
    )
    assert root is None or root.code != "RUN222"
    root = _root(
        "Warning  BackOff  3m  kubelet  Back-off restarting failed container trainer in pod job-master-0\n"
    )
    assert root is None or root.code != "RUN222"


@pytest.mark.parametrize("var", ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"])
@pytest.mark.parametrize(
    "log",
    [
        "ValueError: Error initializing torch.distributed using env:// rendezvous:\n"
        "environment variable {var} expected, but not set\n",
        "environment variable {var} expected, but not set\n",
        "[rank0]: ValueError: Error initializing torch.distributed using env:// rendezvous: environment "
        "variable {var} expected, but not set\n",
    ],
)
def test_env_rendezvous_variable_not_set(log: str, var: str) -> None:
    _check(log.format(var=var), "RUN224", {"missing_variable": var})
