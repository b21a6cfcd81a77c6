"""A source sweep of the distributed layers of frameworks other than torch, each message as a failing
multi-worker job prints it (its usual prefix), read at source:

- horovod 0.28.1 (PyPI sdist, the last release): horovod/runner/driver/driver_service.py and
  runner/common/util/network.py ("Horovod was unable to connect to ... on any of the following addresses",
  "Unable to find a set of common task-to-task communication interfaces"), runner/launch.py ("ssh not
  successful for host", "could not connect to some hosts via ssh"), common/operations.cc ("Horovod could not
  be initialized: Different ranks tried to set up mismatching numbers of process sets"), common/basics.py
  ("Horovod has not been initialized; use hvd.init().", "Horovod has not been built with MPI support"),
  common/util.py ("Extension horovod.torch has not been built"): rules/horovod_runner.py.
- ray 2.60.0 (PyPI wheel): python/ray/train/_internal/backend_executor.py ("Placement group creation timed
  out", "Some workers returned results while others didn't"), train/v2/api/exceptions.py and
  v2/_internal/callbacks/nccl_ras.py (NCCLHangError, PreemptionError): rules/ray_train.py.
- jax 0.10.2 (PyPI wheel): jax/_src/distributed.py ("process_id and num_processes must be nonnegative, with
  process_id < num_processes"), jax/_src/clusters/ompi_cluster.py, k8s_cluster.py:
  rules/coordination_service.py.
- xgboost 3.2.0 (PyPI wheel, `strings lib/libxgboost.so`): "Failed to bootstrap the communication group."
  over tracker.cc's deeper lines: rules/xgboost_collective.py.
- mpi4py 4.1.2 (PyPI sdist): src/mpi4py/_mpiabi.py "RuntimeError: cannot load MPI library" with one dlerror
  line per name: rules/loader.py.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, check_root, prefixed, root_finding

HVD_TS = "[2024-03-01 10:00:00.123456: E /tmp/pip-install/horovod/common/operations.cc:682] "
XGB = "xgboost.core.XGBoostError: [10:01:02] /workspace/src/collective/result.cc:78: \n"

CASES = [
    # horovod: the driver service no task can reach (horovod.spark / horovodrun / Ray's Horovod)
    (
        "Exception: Horovod was unable to connect to horovod driver service on any of the following "
        "addresses: {'lo': [('127.0.0.1', 34211)], 'eth0': [('10.0.0.1', 34211)]}.\n\n"
        "One possible cause of this problem is "
        "that horovod currently requires every host to have at least one routable network interface with the "
        "same name across all of the hosts.",
        "RUN222",
        {"problem": "horovod_service_unreachable", "service": "horovod driver service"},
    ),
    (
        "Exception: Horovod was unable to connect to horovod task service #1 on any of the following "
        "addresses: {'eth0': [('10.0.0.2', 40123)]}.",
        "RUN222",
        {"service": "horovod task service #1"},
    ),
    (
        "Exception: Unable to find a set of common task-to-task communication interfaces: "
        "[('eth0', '10.0.0.1'), ('ib0', '192.168.1.1')]",
        "RUN174",
        {"problem": "no_common_interface"},
    ),
    (
        "Checking ssh on all remote hosts.\nssh not successful for host worker-1:\n"
        "ssh: connect to host worker-1 port 22: Connection refused\n\n"
        + TRACEBACK_HEAD
        + "RuntimeError: could not connect to some hosts via ssh",
        "RUN303",
        {},
    ),
    (
        TRACEBACK_HEAD + "RuntimeError: could not connect to some hosts via ssh",
        "RUN303",
        {"launcher": "horovodrun"},
    ),
    (
        HVD_TS + "Horovod could not be initialized: Different ranks tried to set up mismatching numbers of "
        "process sets",
        "RUN201",
        {"problem": "process_sets_mismatch"},
    ),
    (TRACEBACK_HEAD + "ValueError: Horovod has not been initialized; use hvd.init().", "RUN224", {}),
    (
        TRACEBACK_HEAD
        + "ValueError: Horovod has not been built with MPI support. Ensure MPI is installed and "
        "reinstall Horovod with HOROVOD_WITH_MPI=1 to debug the build error.",
        "RUN263",
        {"missing": "MPI"},
    ),
    (
        TRACEBACK_HEAD + "ImportError: Extension horovod.torch has not been built: /usr/local/lib/python3.8/"
        "site-packages/horovod/torch/mpi_lib_v2.cpython-38-x86_64-linux-gnu.so not found\n"
        "If this is not expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1 to debug the build error.",
        "RUN263",
        {"missing": "horovod.torch"},
    ),
    # ray train
    (
        "TimeoutError: Placement group creation timed out. Make sure your cluster either has enough "
        "resources or use an autoscaling cluster. If you are running on a cluster, make sure you specify "
        "an address in "
        '`ray.init()`, for example, `ray.init("auto")`. You can also increase the timeout by setting the '
        "TRAIN_PLACEMENT_GROUP_TIMEOUT_S environment variable. Current resources available: {'CPU': 8.0}, "
        "resources requested by the placement group: [{'GPU': 1}, {'GPU': 1}]",
        "RUN221",
        {"problem": "placement_group_timeout", "requested": "[{'GPU': 1}, {'GPU': 1}]"},
    ),
    (
        "RuntimeError: Some workers returned results while others didn't. Make sure that `session.report()` "
        "are called the same number of times on all workers.",
        "RUN201",
        {"problem": "uneven_reports"},
    ),
    (
        "ray.train.v2.api.exceptions.NCCLHangError: Training failed due to worker errors:\n"
        "1 of 2 communicators have a collective mismatch and made no progress for 300 seconds (10 polls). "
        "This usually means that the collective is deadlocked / hanging. The possible reasons for this is: a "
        "rank hit a divergent code path, exited early, a GPU or network hardware failure, or a "
        "collective was launched with a mismatched shape, dtype, or call order.",
        "RUN201",
        {"problem": "nccl_ras_hang", "communicators": 1, "timeout_s": 300},
    ),
    (
        "ray.train.v2.api.exceptions.PreemptionError: Training was interrupted by node preemption "
        "(preempted_ranks=[2, 3], drain_timed_out=False).",
        "RUN133",
        {"reason": "preemption", "ranks": [2, 3]},
    ),
    # jax.distributed
    (
        TRACEBACK_HEAD + "ValueError: process_id and num_processes must be nonnegative, with process_id < "
        "num_processes. Got process_id=4, num_processes=4.",
        "RUN224",
        {"problem": "jax_settings_missing"},
    ),
    (
        TRACEBACK_HEAD + "RuntimeError: Could not parse coordinator IP address from Open MPI environment.",
        "RUN224",
        {},
    ),
    (
        TRACEBACK_HEAD
        + "RuntimeError: To enable automatic bootstrap in a K8s cluster, jobs must be indexed by "
        'setting `completionMode: "Indexed"`.',
        "RUN224",
        {},
    ),
    (
        TRACEBACK_HEAD + "RuntimeError: Cannot automatically initialize distributed workload: pod "
        "train-abc12 does not have a controller.",
        "RUN224",
        {},
    ),
    (
        TRACEBACK_HEAD + "RuntimeError: In K8s, cluster automatic bootstrap only supports Job/JobSet.",
        "RUN224",
        {},
    ),
    (
        TRACEBACK_HEAD + "RuntimeError: Kubernetes API Error: 403 - Forbidden\n"
        "It appears that the Kubernetes service account (SA) associated with this job\n"
        "does not have the permission for pod introspection. Please either grant the",
        "RUN224",
        {},
    ),
    # xgboost: the bootstrap broke on a deeper line no other row reads
    (
        XGB + "- [comm.cc:290|12:58:58]: Failed to bootstrap the communication group.\n"
        "- [tracker.cc:120|12:58:58]: Failed to recv init command from tracker.\n",
        "RUN222",
        {"problem": "bootstrap_failed", "error": "Failed to recv init command from tracker."},
    ),
    (
        XGB + "- Failed to bootstrap the communication group.\n- Failed to get address info:Name or service "
        "not known\n",
        "RUN222",
        {"problem": "bootstrap_failed"},
    ),
    # mpi4py 4.x: the MPI library is not on the loader's path
    (
        TRACEBACK_HEAD + "RuntimeError: cannot load MPI library\n"
        "libmpi.so.40: cannot open shared object file: No such file or directory\n"
        "libmpi.so.12: cannot open shared object file: No such file or directory",
        "RUN263",
        {},
    ),
    (
        TRACEBACK_HEAD
        + "ImportError: libmpi.so.40: cannot open shared object file: No such file or directory",
        "RUN263",
        {},
    ),
]


@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_framework_message_has_its_class(log: str, code: str, facts: dict) -> None:
    check_root(log, code, facts)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize(("log", "code"), [(c[0], c[1]) for c in CASES[:3] + CASES[9:13]])
def test_behind_a_launcher_prefix(prefix: str, log: str, code: str) -> None:
    check_root(prefixed(prefix, log), code)


def test_an_earlier_bootstrap_timeout_outranks_the_generic_bootstrap_row() -> None:
    check_root(
        XGB + "- Failed to bootstrap the communication group.\n- Poll timeout:300 seconds.\n", "RUN221"
    )


def test_an_earlier_tracker_connect_outranks_the_generic_bootstrap_row() -> None:
    log = (
        XGB + "- Failed to bootstrap the communication group.\n- Failed to connect to the tracker.\n"
        "- Failed to connect to 10.1.2.3:9091\n"
    )
    check_root(log, "RUN222", {"problem": "tracker_unreachable"})


DECOYS = [
    # horovod/common/operations.cc, a healthy job's warning
    "[2024-03-01 10:00:00.123456: W horovod/common/operations.cc:585] WARNING: Using different number "
    "of ranks per node might cause performance loss in hierarchical allgather and hierarchical allreduce. "
    "Consider "
    "changing the number of ranks per node.\n",
    "Checking ssh on all remote hosts.\nSSH was successful into all the remote hosts.\n",
    # jax/_src/distributed.py's INFO lines
    "I0301 10:00:00.000000 140 distributed.py:90] Starting JAX distributed service on [::]:1234\n"
    "I0301 10:00:00.000000 140 distributed.py:100] Connecting to JAX distributed service on 10.0.0.1:1234\n",
    # ray train's healthy start
    "(RayTrainWorker pid=123, ip=10.0.0.2) Setting up process group for: env:// [rank=0, world_size=4]\n"
    "(RayTrainWorker pid=123, ip=10.0.0.2) Moving model to device: cuda:0\n",
    "export TRAIN_PLACEMENT_GROUP_TIMEOUT_S=600  # placement group creation timed out on a busy cluster\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_healthy_lines_stay_silent(log: str) -> None:
    assert root_finding(log) is None
