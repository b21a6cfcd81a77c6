"""x2 of 2026-12-07 (late): launch and process-manager (rendezvous_init) messages of real threads that the
rules did not read, each read as its family (the program that prints it, across versions and wrappers). The
variants below are not in a thread unless a URL is given.

- Open MPI's PMI-1 / PMI-2 components for a direct launch (opal/mca/pmix/s1, s2, help-pmix-base.txt,
  1.8-4.x): "PMI2_Init failed to intialize.  Return code: 1" (the source's spelling), above ess/slurm's
  "direct launched using srun" text: RUN552 like that text (rules/mpi_bootstrap.py); a "PMI2_Init failed"
  of a program's own fallback or source line stays silent.
- MPICH's simple PMI making each rank a singleton and failing to start mpiexec (simple_pmi.c
  PMII_singinit, MPICH2 1.x-4.x): "PMII_singinit: execv failed: ...", "[unset]:   This singleton init
  program attempted to access some feature", "write_line error; fd=-1 buf=:cmd=get kvsname=singinit_kvs_"
  (4.1+ "PMIU_write error"): RUN222, as the other PMI calls of MPI_Init's meeting; questions about
  singleton init stay silent.
- kubectl exec as the remote shell of an MPI launch on Kubernetes (mpi-operator v1's kubexec.sh,
  kube-openmpi): "error: unable to upgrade connection: container not found ("mpi-master")", "pod does not
  exist", "Error from server (NotFound): pods ... not found", a completed pod, a pod without a host, the
  launcher without its kubectl: RUN303 (rules/remote_launch.py), only beside the launcher's words; a
  person's own kubectl exec stays silent.
- Ray's head out of reach in 2.5+'s words and Ray Client's (python/ray/_private/utils.py "Unable to connect to
  GCS (ray head) at ...", util/client/worker.py "Ray Client connection timed out. Ensure that the Ray Client
  port ..." and "ConnectionError: ray client connection timeout"): RUN222 like the older "Unable to connect to
  GCS at" (rules/peer_bootstrap.py); a retry followed by the connection, and titles or questions that quote
  the words, stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

_DASH = "-" * 74
_DIRECT = (
    'The application appears to have been direct launched using "srun",\n'
    "but OMPI was not built with SLURM's PMI support and therefore cannot\n"
    "execute. There are several options for building PMI support under\n"
    "SLURM, depending upon the SLURM version you are using:"
)
_KUBEXEC = (
    "+ /opt/kube/kubectl exec tf-worker-1 -- /bin/sh -c     PATH=/usr/local/bin:$PATH ; export PATH ;   "
    '/usr/local/bin/orted -mca ess "env" -mca ess_base_vpid 1 -mca plm "rsh" -mca plm_rsh_agent '
    '"/etc/mpi/kubexec.sh"'
)

# (log, code, category)
FAILURES = [
    # Open MPI's s1/s2 PMI components
    # https://github.com/ArjunaCluster/ArjunaUsers/issues/172
    (
        "srun: error: spank: x11.so: Plugin file not found\n"
        f"{_DASH}\nPMI2_Init failed to intialize.  Return code: 1\n{_DASH}\n"
        f"{_DASH}\nPMI2_Init failed to intialize.  Return code: 1\n{_DASH}\n{_DASH}\n{_DIRECT}",
        "RUN552",
        "driver_env",
    ),
    ("PMI2_Init failed to intialize.  Return code: 1", "RUN552", "driver_env"),
    # variants: PMI-1's component, Open MPI 4.x's return code 14, a corrected spelling
    ("PMI_Init failed to intialize.  Return code: 14", "RUN552", "driver_env"),
    (
        f"cmd=init pmi_version=2 pmi_subversion=0\n{_DASH}\nPMI2_Init failed to intialize.  Return code: 14",
        "RUN552",
        "driver_env",
    ),
    ("PMI2_Init failed to initialize.  Return code: 14", "RUN552", "driver_env"),
    # MPICH's singleton init
    # https://github.com/pmodels/mpich/issues/6924
    (
        "PMII_singinit: execv failed: No such file or directory\n"
        "[unset]:   This singleton init program attempted to access some feature\n"
        "[unset]:   for which process manager support was required, e.g. spawn or universe_size.\n"
        "[unset]:   But the necessary mpiexec is not in your path.\n"
        "[unset]: write_line error; fd=-1 buf=:cmd=get kvsname=singinit_kvs_943014_0 "
        "key=PMI_mpi_memory_alloc_kinds\n:\nsystem msg for write_line failure : Bad file descriptor\n"
        "exp-9-17: 0 / 1 OK",
        "RUN222",
        "rendezvous",
    ),
    # variants: MPICH2 1.0's comma, a rank's tag, 4.1+'s PMIU_write, perror's other errno, the init's stack
    ("[cli_0]:   This singleton init program attempted to access some feature", "RUN222", "rendezvous"),
    (
        "  But, the necessary mpiexec is not in your path.\nPMII_singinit: execv failed: Permission denied",
        "RUN222",
        "rendezvous",
    ),
    (
        "[unset]: PMIU_write error; fd=-1 buf=:cmd=get kvsname=singinit_kvs_12345_0 key=PMI_dead_processes",
        "RUN222",
        "rendezvous",
    ),
    (
        "PMII_singinit: execv failed: No such file or directory\n"
        "Fatal error in MPI_Init: Other MPI error, error stack:\n"
        "MPIR_Init_thread(805).....: fail failed\n"
        "MPID_Init(1859)...........: channel initialization failed",
        "RUN222",
        "rendezvous",
    ),
    # kubectl exec of an MPI launch
    # https://github.com/everpeace/kube-openmpi/issues/25
    (
        "kubectl exec -it coco-master -- mpiexec --allow-run-as-root   --hostfile "
        "/kube-openmpi/generated/hostfile   --display-map -n 4 -npernode 1 sh -c 'echo $(hostname):hello'\n"
        "Defaulting container name to mpi-master.\n\n"
        "Use 'kubectl describe pod/coco-master -n default' to see all of the containers in this pod.\n"
        'error: unable to upgrade connection: container not found ("mpi-master")',
        "RUN303",
        "rendezvous",
    ),
    # variants: mpi-operator v1's kubexec.sh with a pod gone, not yet scheduled, completed; no kubectl
    (_KUBEXEC + '\nError from server (NotFound): pods "tf-worker-1" not found', "RUN303", "rendezvous"),
    (_KUBEXEC + "\nerror: unable to upgrade connection: pod does not exist", "RUN303", "rendezvous"),
    (
        _KUBEXEC + "\nError from server (BadRequest): pod tf-worker-1 does not have a host assigned",
        "RUN303",
        "rendezvous",
    ),
    (
        _KUBEXEC + "\nerror: cannot exec into a container in a completed pod; current phase is Failed",
        "RUN303",
        "rendezvous",
    ),
    (
        f"/etc/mpi/kubexec.sh: line 5: /opt/kube/kubectl: No such file or directory\n{_DASH}\n"
        "ORTE was unable to reliably start one or more daemons.",
        "RUN303",
        "rendezvous",
    ),
]

_RAY_CLIENT_TB = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/job.py", line 2, in <module>\n'
    '    ray.init("ray://10.157.148.2:10001")\n'
    '  File "/opt/conda/lib/python3.10/site-packages/ray/util/client/worker.py", line 150, in __init__\n'
    "    self._connect_channel()\n"
)
FAILURES += [
    # https://github.com/ray-project/ray/issues/37107
    (
        "2023-07-05 16:46:54 2023-07-05 21:46:54,656     WARNING utils.py:1401 -- Unable to connect to GCS "
        "(ray head) at 172.17.0.2:6379. Check that (1) Ray with matching version started successfully at the "
        "specified address, (2) this node can reach the specified address, and (3) there is no firewall "
        "setting preventing access.",
        "RUN222",
        "rendezvous",
    ),
    # https://github.com/ray-project/ray/issues/46733
    (
        "/data/anaconda3/envs/qwen/lib/python3.10/site-packages/ray/util/client/worker.py:253: UserWarning: "
        "Ray Client connection timed out. Ensure that the Ray Client port on the head node is reachable from "
        "your local machine. See https://docs.ray.io/en/latest/cluster/ray-client.html#step-2-check-ports "
        "for more information.\n  warnings.warn(\n"
        + _RAY_CLIENT_TB
        + "ConnectionError: ray client connection timeout",
        "RUN222",
        "rendezvous",
    ),
    # variants: the exception alone (Ray 1.x's traceback cut), the 2.x warning from a Ray actor's prefix
    (_RAY_CLIENT_TB + "ConnectionError: ray client connection timeout", "RUN222", "rendezvous"),
    (
        "(TrainTrainable pid=812) /opt/ray/util/client/worker.py:258: UserWarning: Ray Client connection "
        "timed out. Ensure that the Ray Client port on the head node is reachable from your local machine.",
        "RUN222",
        "rendezvous",
    ),
]

SILENT = [
    # Ray: a retry the connection follows, questions and titles quoting the words
    "2023-07-05 21:46:54,656     WARNING utils.py:1401 -- Unable to connect to GCS (ray head) at "
    "172.17.0.2:6379. Check that (1) Ray with matching version started successfully at the specified "
    "address.\n"
    "2023-07-05 21:46:59,656     INFO worker.py:1636 -- Connected to Ray cluster. View the dashboard at "
    "127.0.0.1:8265",
    "How to set ray client connection timeout?",
    "[ConnectionError: ray client connection timeout]",
    '`ray.init` connect to remote Ray cluster raises error "ray client connection timeout"',
    # a program's own PMI fallback, its source, a PMI write that is not a singleton's
    "PMI2_Init failed, falling back to PMI1",
    'if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS) fprintf(stderr, "PMI2_Init failed\\n");',
    "[unset]: write_line error; fd=9 buf=:cmd=init pmi_version=1 pmi_subversion=1",
    # questions about singleton init
    "How do I use singleton init program with MPICH?",
    "MPICH singleton init: is mpiexec needed?",
    # a person's own kubectl exec, and kubectl's words without a launch
    'error: unable to upgrade connection: container not found ("mpi")',
    'Error from server (NotFound): pods "my-notebook" not found',
    'kubectl exec -it web-0 -- bash\nerror: unable to upgrade connection: container not found ("web")',
    "$ kubectl exec -it web-0 -- bash\nerror: unable to upgrade connection: Forbidden (user=kube-apiserver, "
    "verb=create, resource=nodes, subresource=proxy)",
]


@pytest.mark.parametrize(("log", "code", "category"), FAILURES)
def test_family_lines_read(log: str, code: str, category: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and (root.code, root.category) == (code, category), (log, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_pmi2_component_behind_every_prefix(prefix: str) -> None:
    log = f"{_DASH}\nPMI2_Init failed to intialize.  Return code: 14\n{_DASH}"
    check_root(prefixed(prefix, log), "RUN552", {"pmi_call": "PMI2_Init", "return_code": 14})


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_singleton_behind_every_prefix(prefix: str) -> None:
    log = (
        "PMII_singinit: execv failed: No such file or directory\n"
        "[unset]:   This singleton init program attempted to access some feature"
    )
    check_root(prefixed(prefix, log), "RUN222", {"problem": "mpi_singleton"})


def test_ray_client_facts() -> None:
    check_root(
        _RAY_CLIENT_TB + "ConnectionError: ray client connection timeout\n",
        "RUN222",
        {"framework": "ray", "problem": "ray_client_unreachable"},
    )


def test_kubectl_facts() -> None:
    check_root(
        _KUBEXEC + '\nError from server (NotFound): pods "tf-worker-1" not found\n',
        "RUN303",
        {"launcher": "kubectl exec", "pod": "tf-worker-1"},
    )
