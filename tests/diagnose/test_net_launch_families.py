"""Network and launch families of the stacks around torch, read at their source, each line as real logs
print it (prefixes included), and the decoys that share their words.

- Open MPI's TCP BTL (opal/mca/btl/tcp/btl_tcp_endpoint.c BTL_ERROR, 1.x-4.x; 5.x's "got ... expected ...";
  help-mpi-btl-tcp.txt "client connect fail" / "client handshake fail", 4.x-5.x): RUN174.
- Open MPI's start-up help texts (help-mpi-runtime.txt, help-orte-runtime.txt, help-mca-bml-r2.txt,
  ess/slurm's direct-launch text, 1.x-5.x): RUN304 for a runtime that could not join its launcher, RUN174
  for ranks no transport connects. Slurm's PMIx fence timeout (plugins/mpi/pmix/pmixp_coll_ring.c): RUN221.
- Open MPI's launch of its daemons (plm/base "A daemon (pid ...) died unexpectedly", routed's "ORTE does not
  know how to route a message") and a csh login shell's "export: Command not found.": RUN303.
- UCX's wireup without a transport (ucp/wireup/select.c, ucp_ep.c "Destination is unreachable"): RUN174.
- TensorFlow's eager cluster start-up (core/common_runtime/eager/context_distributed_manager.cc, TF 2.4-2.16,
  LOG(ERROR) of the status before it returns) and GrpcServer::Init's "Could not start gRPC server"
  (distributed_runtime/rpc/grpc_server_lib.cc): RUN221 / RUN222 / RUN223; the executor's StartAbort beside
  the start-up failure is its echo.
- Ray's GCS (src/ray/rpc/gcs/gcs_rpc_client.h, python/ray/_private/services.py, Ray 2.x): unreachable head
  RUN222 (unless the node connects later), ray.init without a cluster to join RUN224.
- slurmstepd failing to exec slurmd's own copy of the batch script is the node's fault, not a launch: silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[1,3]<stderr>:", "node7: ", "2025-01-02 03:04:05,678 - ERROR - "]

CASES = [
    # Open MPI TCP BTL, 1.10-4.1 (btl_tcp_endpoint.c, line numbers differ by version)
    (
        "[pi01][[24145,1],0][btl_tcp_endpoint.c:626:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier [[24145,1],3]",
        "RUN174",
        {"peer": "[[24145,1],3]"},
    ),
    (
        "[ip-26-0-164-166][[16971,28321],8][btl_tcp_endpoint.c:625:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier [[16971,28321],13]",
        "RUN174",
        {"problem": "unexpected_peer_identity"},
    ),
    # 5.x
    (
        "[er-head][[56247,2],5][btl_tcp_endpoint.c:668:mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier: got [[56247,2],0] expected [[56247,1],0]",
        "RUN174",
        {"peer": "[[56247,2],0]"},
    ),
    # help-mpi-btl-tcp.txt [client connect fail], with its table
    (
        "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\nshould not happen.\n\nYour Open MPI job may now hang or fail.\n\n  Local host: gpu-a\n  PID:        1234\n  Message:    connect() to 10.0.0.2:1024 failed\n  Error:      No route to host (113)\n",
        "RUN174",
        {"problem": "tcp_connect_failed"},
    ),
    (
        "WARNING: Open MPI failed to handshake with a connecting peer MPI\nprocess over TCP.  This should not happen.\n",
        "RUN174",
        {"problem": "tcp_handshake_failed"},
    ),
    # help-mpi-runtime.txt, MPI_INIT with the PML's unreachable peers
    (
        'It looks like MPI_INIT failed for some reason; your parallel process is\nlikely to abort.  There are many reasons that a parallel process can\nfail during MPI_INIT; some of which are due to configuration or environment\nproblems.  This failure appears to be an internal failure; here\'s some\nadditional information (which may only be relevant to an Open MPI\ndeveloper):\n\n  PML add procs failed\n  --> Returned "Unreachable" (-12) instead of "Success" (0)\n',
        "RUN174",
        {"problem": "mpi_peers_unreachable", "returned": "Unreachable"},
    ),
    # the runtime that could not start in the rank
    (
        'It looks like MPI_INIT failed for some reason; your parallel process is\nlikely to abort.  There are many reasons that a parallel process can\nfail during MPI_INIT; some of which are due to configuration or environment\nproblems.  This failure appears to be an internal failure; here\'s some\nadditional information (which may only be relevant to an Open MPI\ndeveloper):\n\n  ompi_mpi_init: ompi_rte_init failed\n  --> Returned "(null)" (-43) instead of "Success" (0)\n',
        "RUN304",
        {"step": "ompi_mpi_init: ompi_rte_init"},
    ),
    (
        "It looks like orte_init failed for some reason; your parallel process is\nlikely to abort.  There are many reasons that a parallel process can\nfail during orte_init; some of which are due to configuration or\nenvironment problems.  This failure appears to be an internal failure;\nhere's some additional information (which may only be relevant to an\nOpen MPI developer):\n\n  orte_ess_init failed\n  --> Returned value Unable to start a daemon on the local node (-127) instead of ORTE_SUCCESS\n",
        "RUN304",
        {"init": "orte_init", "step": "orte_ess_init"},
    ),
    # 5.x (PRRTE) wording
    (
        'It looks like MPI runtime init failed for some reason; your parallel process is\nlikely to abort.  There are many reasons that a parallel process can\nfail during RTE init; some of which are due to configuration or environment\nproblems.\n\n  num local peers\n  --> Returned "Bad parameter" (-5) instead of "Success" (0)\n',
        "RUN304",
        {"init": "MPI runtime init"},
    ),
    # help-mca-bml-r2.txt [unreachable proc]
    (
        "At least one pair of MPI processes are unable to reach each other for\nMPI communications.  This means that no Open MPI device has indicated\nthat it can be used to communicate between these processes.\n\n  Process 1 ([[40013,1],0]) is on host: n1\n  Process 2 ([[40013,1],1]) is on host: n2\n  BTLs attempted: self sm\n\nYour MPI job is now going to abort; sorry.\n",
        "RUN174",
        {"btls": "self sm"},
    ),
    # ess/slurm direct launch: the Open MPI install has no PMI for srun (RUN552, driver_env)
    (
        '[cn0610:26671] OPAL ERROR: Not initialized in file /usr/local/src/openmpi/openmpi-4.0.4/opal/mca/pmix/ext2x/ext2x_client.c at line 112\n--------------------------------------------------------------------------\nThe application appears to have been direct launched using "srun",\nbut OMPI was not built with SLURM\'s PMI support and therefore cannot\nexecute.\n',
        "RUN552",
        {"problem": "mpi_without_slurm_pmi"},
    ),
    # Slurm's PMIx plugin (pmixp_coll_ring.c, 19.05+)
    (
        "srun: error: mpi/pmix_v3: pmixp_coll_ring_reset_if_to: gpu-a [0]: pmixp_coll_ring.c:742: 0x7f2c3c0b2a10: collective timeout seq=0",
        "RUN221",
        {"host": "gpu-a"},
    ),
    # plm/base (help-plm-base.txt / orte_plm_base_daemon_failed)
    (
        "A daemon (pid 1234) died unexpectedly with status 127 while attempting\nto launch so we are aborting.\n",
        "RUN303",
        {"exitcode": 127},
    ),
    (
        "A daemon (pid unknown) died unexpectedly on signal 1  while attempting to\nlaunch so we are aborting.\n",
        "RUN303",
        {"signal_number": 1},
    ),
    # help-routed-base.txt
    (
        "--------------------------------------------------------------------------\nORTE does not know how to route a message to the specified daemon\nlocated on the indicated node:\n\n  my node:   node1091\n  target node:  node1029\n\nThis is usually an internal programming error that should be\nreported to the developers.\n",
        "RUN303",
        {"host": "node1029"},
    ),
    # tcsh/csh answering MXNet tools/launch.py's ssh command
    (
        "cc0011@thorin:../mxnet/tools/bandwidth$ python ../launch.py -H ../hosts -n 1 python measure.py --kv-store dist_sync\nexport: Command not found.\nexport: Command not found.\n",
        "RUN303",
        {"problem": "remote_shell_not_sh"},
    ),
    # UCX wireup (ucp/wireup/select.c)
    (
        "[1651234.123456] [gpu-a:1234:0]       select.c:434  UCX  ERROR   no active messages transport to <no debug data>: self/memory - Destination is unreachable, tcp/eth0 - no am bcopy",
        "RUN174",
        {"problem": "ucx_no_transport"},
    ),
    (
        "[1651234.123456] [gpu-a:1234:0]       ucp_ep.c:1234 UCX  ERROR   ucp_ep_create() failed: Destination is unreachable",
        "RUN174",
        {"transport": "ucx"},
    ),
    # TensorFlow's eager cluster start-up (context_distributed_manager.cc)
    (
        "2023-05-25 11:10:57.934497: E tensorflow/core/common_runtime/eager/context_distributed_manager.cc:737] Deadline Exceeded",
        "RUN221",
        {"problem": "tf_cluster_startup"},
    ),
    (
        "E0525 11:10:57.934497  1234 context_distributed_manager.cc:737] failed to connect to all addresses",
        "RUN222",
        {"framework": "tensorflow"},
    ),
    (
        "2021-03-02 10:00:00.000000: E tensorflow/core/common_runtime/eager/context_distributed_manager.cc:512] UNKNOWN: Could not start gRPC server",
        "RUN223",
        {"problem": "tf_cluster_startup"},
    ),
    # Ray's GCS client and ray.init's address lookup
    (
        "[2024-01-01 00:00:00,000 E 1234 1234] gcs_rpc_client.h:212: Failed to connect to GCS at address 10.0.0.1:6379 within 5 seconds.",
        "RUN222",
        {"address": "10.0.0.1:6379"},
    ),
    (
        "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.",
        "RUN224",
        {"problem": "ray_no_cluster"},
    ),
    # GrpcServer::Init, raised through tf.distribute.Server
    (
        "tensorflow.python.framework.errors_impl.UnknownError: Could not start gRPC server",
        "RUN223",
        {"problem": "grpc_server_bind"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)])
def test_network_and_launch_families(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    text = "".join(prefix + ln + "\n" for ln in log.splitlines())
    f = _root(text)
    assert f is not None and f.code == code, (text, f)
    for k, v in facts.items():
        assert f.facts.get(k) == v, (k, f.facts)


def test_tf_start_abort_beside_a_failed_cluster_start_is_its_echo() -> None:
    # tensorflow/tensorflow#60706: the executor's abort logged a moment before the start-up's own error
    log = (
        "2023-05-25 11:10:57.934361: E tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded\n"
        "Additional GRPC error information from remote target /job:worker/replica:0/task:0:\n"
        "2023-05-25 11:10:57.934497: E tensorflow/core/common_runtime/eager/context_distributed_manager.cc:737] Deadline Exceeded\n"
    )
    f = _root(log)
    assert f is not None and f.code == "RUN221" and f.category == "rendezvous", f


DECOYS = [
    # slurmd's own copy of the batch script: a node fault (ArjunaCluster/ArjunaUsers#46)
    "slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory",
    "slurmstepd: error: execve(): /var/spool/slurmd/job12345/slurm_script: Permission denied",
    # the manager's INFO/WARNING records
    "2023-05-25 11:10:57.934497: I tensorflow/core/common_runtime/eager/context_distributed_manager.cc:737] Remote worker /job:worker/replica:0/task:1 is not alive: ",
    "I0525 11:10:57.934497  1234 context_distributed_manager.cc:737] Deadline Exceeded",
    # a GCS connect retried on the way to a connection (a healthy start)
    "[2026-03-01 22:48:01,851 W 6578 6578] rpc_client.h:153: Failed to connect to GCS at address 10.166.166.106:6379 within 5 seconds.\n2026-03-01 22:48:03,000 INFO worker.py:1821 -- Connected to Ray cluster. View the dashboard at http://127.0.0.1:8265",
    "2023-05-25 11:10:57.934497: W tensorflow/core/common_runtime/eager/context_distributed_manager.cc:737] Device filters can only be specified when initializing the cluster.",
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_stay_silent(log: str) -> None:
    assert _root(log) is None, log
