"""Killed processes in every scheduler's and platform's words, and network transports beyond NCCL's
common WARN lines. Each case is written from the text at its source: Slurm's slurmstepd and srun, PBS
Pro / Torque's MOM and mail, IBM LSF's TERM_ reasons, the kubelet's eviction and node-shutdown managers
and the scheduler's preemption, Ray's GCS actor death causes (gcs_actor_manager.cc) and its raylet agent,
GCE / AWS / AWS Batch / SkyPilot preemption records, concurrent.futures and loky pools; NCCL's net_ib.cc
async-event thread (2.19+ and older), UCX's UD transport and the libfabric EFA provider's completion
errors. A preemption or a lost node is the root over the peers' dropped connections that echo it; the
lines of a healthy run stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, failure_findings, prefixed, root_finding

OOM, EXITED, SIGNAL = "RUN121", "RUN133", "RUN131"
IB, SOCKET = "RUN173", "RUN174"

KILLED: list[tuple[str, str, dict[str, Any]]] = [
    # Slurm: the cancel line's outside reasons are causes; srun's node failure; stepd's give-up
    (
        "slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-05-01T14:00:00 DUE TO PREEMPTION ***",
        EXITED,
        {"reason": "preemption", "preempted": True},
    ),
    (
        "slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-05-01T14:00:00 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        EXITED,
        {"reason": "node failure", "node_lost": True},
    ),
    (
        "slurmstepd: error: *** JOB 123456 ON gpu-node-01 CANCELLED AT 2024-05-01T14:00:00 DUE TO TIME LIMIT ***",
        EXITED,
        {"reason": "time limit"},
    ),
    ("srun: error: Node failure on gpu-node-07", EXITED, {"reason": "node failure", "host": "gpu-node-07"}),
    (
        "slurmstepd: error: *** JOB 123456 STEPD TERMINATED ON gpu-node-01 AT 2024-05-01T14:05:00 DUE TO JOB NOT ENDING WITH SIGNALS ***",
        EXITED,
        {"reason": "stepd terminated", "host": "gpu-node-01"},
    ),
    ("Caught signal SIGUSR2 on gpu-node-3: this job is preempted.", EXITED, {"reason": "preemption"}),
    # PBS Pro / Torque
    (
        "=>> PBS: job killed: walltime 86420 exceeded limit 86400",
        EXITED,
        {"reporter": "pbs", "reason": "walltime limit"},
    ),
    ("PBS: job killed: ncpus 5.02 exceeded limit 4", EXITED, {"reason": "ncpus limit"}),
    (
        "=>> PBS: job killed: node 1 (gpu-2-17) requested job terminate, 'EOF' (code 1099) - received SISTER_EOF attempting to communicate with sister MOM's",
        EXITED,
        {"reason": "node failure", "host": "gpu-2-17"},
    ),
    (
        "PBS Job Id: 2600365.mskcc-fe1.local\nJob Name:   STDIN\nExec host:  gpu-2-17/5\njob deleted\nJob deleted at request of root@mskcc-fe1.local\njob preempted (node failure)",
        EXITED,
        {"reason": "preemption", "preemption_reason": "node failure"},
    ),
    ("Job exceeded its walltime limit. Job was aborted", EXITED, {"reason": "walltime limit"}),
    ("Aborted by PBS Server", EXITED, {"reason": "aborted by server"}),
    ("=>> PBS: job killed: mem 4194304kb exceeded limit 4194304kb", OOM, {"killer": "pbs_memory_limit"}),
    ("PBS: job killed: pvmem 10737418240 exceeded limit 8589934592", OOM, {"limit_kind": "pvmem"}),
    (
        "Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted",
        OOM,
        {"killer": "pbs_memory_limit"},
    ),
    # LSF: who ended the job decides the tier; memory is host_oom
    (
        "TERM_PREEMPT: job killed after preemption.\nExited with exit code 130.",
        EXITED,
        {"lsf_reason": "TERM_PREEMPT", "reason": "preemption"},
    ),
    (
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.",
        EXITED,
        {"reason": "run time limit"},
    ),
    ("TERM_OWNER: job killed by owner.\nExited with exit code 130.", EXITED, {"lsf_reason": "TERM_OWNER"}),
    ("TERM_LOAD: job killed after load exceeds threshold.", EXITED, {"preempted": True}),
    (
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\nExited with exit code 137.",
        OOM,
        {"killer": "lsf_memory_limit"},
    ),
    ("TERM_SWAP: job killed after reaching LSF swap usage limit.", OOM, {"killer": "lsf_memory_limit"}),
    # Kubernetes
    (
        "Message: The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 9Gi. Container trainer was using 50Gi, which exceeds its request of 0.",
        EXITED,
        {"reason": "eviction", "resource": "ephemeral-storage"},
    ),
    (
        "Status:  Failed\nReason:  Evicted\nMessage: The node was low on resource: memory. Threshold quantity: 100Mi, available: 91736Ki.",
        OOM,
        {},
    ),
    (
        "  Warning  Terminated  pod/trainer-worker-0  Pod was terminated in response to imminent node shutdown.",
        EXITED,
        {"reason": "node shutdown"},
    ),
    (
        "  Warning  Preempting  pod/trainer-worker-1  Preempted in order to admit critical pod",
        EXITED,
        {"reason": "preemption"},
    ),
    (
        "  Normal   Preempted  pod/trainer-worker-1  Preempted by pod 3f2a9c on node gpu-7",
        EXITED,
        {"host": "gpu-7"},
    ),
    (
        "    Message: default-scheduler: preempting to accommodate a higher priority pod",
        EXITED,
        {"reason": "preemption"},
    ),
    (
        '    Message: Usage of EmptyDir volume "dshm" exceeds the limit "64Gi". ',
        EXITED,
        {"reason": "eviction", "volume": "dshm"},
    ),
    (
        "    Message: Pod ephemeral local storage usage exceeds the total limit of containers 10Gi. ",
        EXITED,
        {"resource": "ephemeral-storage"},
    ),
    (
        '    Message: Container trainer exceeded its local ephemeral storage limit "10Gi". ',
        EXITED,
        {"resource": "ephemeral-storage"},
    ),
    (
        "  Warning  DeadlineExceeded  job/train  Job was active longer than specified deadline",
        EXITED,
        {"reason": "time limit"},
    ),
    # HTCondor
    (
        "004 (1234.000.000) 2024-05-01 10:00:00 Job was evicted.",
        EXITED,
        {"reporter": "htcondor", "preempted": True},
    ),
    (
        "Hold reason: Error from slot1_1@node7: Job has gone over cgroup memory limit of 2048 megabytes. Last measured usage: 2100 megabytes.",
        OOM,
        {"limit_mb": 2048},
    ),
    # Ray
    (
        "The actor died because its node has died. Node Id: 699d13151ee3786638d9e6b4032998bf07c30173d64a9654537f5751\n\tthe actor's node was terminated expectedly: received SIGTERM",
        EXITED,
        {
            "reason": "node terminated expectedly",
            "node_id": "699d13151ee3786638d9e6b4032998bf07c30173d64a9654537f5751",
        },
    ),
    (
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n\tclass_name: TrainWorker\n\tactor_id: 2a\nThe actor died because its node has died. Node Id: 7c1e\n\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats",
        EXITED,
        {"reason": "node terminated unexpectedly", "node_id": "7c1e"},
    ),
    (
        "The actor died because its node has died. Node Id: 7c1e\n\tthe actor's node was preempted: spot instance reclaimed",
        EXITED,
        {"reason": "preemption", "preempted": True},
    ),
    (
        "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n\tclass_name: RayTrainWorker\n\tip: 10.72.56.3\nThe actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0",
        EXITED,
        {"node_id": "677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0"},
    ),
    (
        "The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff Owner Ip address: 172.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed.",
        EXITED,
        {"reason": "owner node crashed"},
    ),
    (
        "Raylet is terminated. Termination is unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer, (2) Invalid memory access from Raylet causing SIGSEGV or SIGBUS, (3) Other termination signals. Last 20 lines of the Raylet logs:",
        EXITED,
        {"reason": "raylet died"},
    ),
    (
        "ray.exceptions.ObjectLostError: Failed to retrieve object 00ff.\n\nAll copies of 00ff have been lost due to node failure. Check cluster logs (`/tmp/ray/session_latest/logs`) for more information about the failure.",
        EXITED,
        {"reason": "node failure"},
    ),
    # clouds and their job managers
    ("compute.instances.preempted: Instance was preempted.", EXITED, {"reporter": "gce"}),
    ("2024-05-01T10:00:00Z EC2 Spot Instance Interruption Warning for i-0abc", EXITED, {"reporter": "aws"}),
    ("statusReason: Host EC2 (instance i-0abc123) terminated.", EXITED, {"instance": "i-0abc123"}),
    (
        "I 05-01 10:00:00 controller.py:230] Cluster is preempted or failed (status: INIT). Recovering...",
        EXITED,
        {"reporter": "skypilot", "cluster_status": "INIT"},
    ),
    # process pools
    (
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or pending.",
        EXITED,
        {"process": "pool_worker"},
    ),
    (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an excessive memory usage causing the Operating System to kill the worker.\n\nThe exit codes of the workers are {SIGKILL(-9)}",
        OOM,
        {"signal": "SIGKILL"},
    ),
    (
        "joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the executor was unexpectedly terminated. This could be caused by a segmentation fault while calling the function or by an excessive memory usage causing the Operating System to kill the worker.\n\nThe exit codes of the workers are {SIGSEGV(-11)}",
        EXITED,
        {"signal": "SIGSEGV"},
    ),
]


@pytest.mark.parametrize(("text", "code", "facts"), KILLED, ids=[f"k{i}" for i in range(len(KILLED))])
@pytest.mark.parametrize(
    "prefix", ["", LAUNCHER_PREFIXES[4], LAUNCHER_PREFIXES[5]], ids=["bare", "host", "logging"]
)
def test_killed_by_a_scheduler_or_platform(prefix: str, text: str, code: str, facts: dict[str, Any]) -> None:
    root = root_finding(prefixed(prefix, text))
    assert root is not None and root.code == code, (text, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (k, root.facts)


NETWORK: list[tuple[str, str, dict[str, Any]]] = [
    # NCCL net_ib.cc's async-event thread, 2.19+ (per device and port) and before
    (
        "node1:4242:4300 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error",
        IB,
        {},
    ),
    (
        "node1:4242:4300 [0] transport/net_ib.cc:99 NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP (0x55d0c0): local access violation work queue error",
        IB,
        {},
    ),
    (
        "node1:4242:4300 [0] transport/net_ib.cc:96 NCCL WARN NET/IB : mlx5_0:1 async fatal event on CQ (0x55d0c0): CQ error",
        IB,
        {},
    ),
    (
        "node1:4242:4300 [0] transport/net_ib.cc:110 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)",
        IB,
        {},
    ),
    ("node1:4242:4300 [0] transport/net_ib.cc:83 NCCL WARN NET/IB : Got async event : port error", IB, {}),
    # UCX's UD transport, libfabric's EFA provider
    (
        "[node1:4242 :0:4242]  ud_ep.c:278  Fatal: UD endpoint 0x1c3f4d0 to <no debug data>: unhandled timeout error",
        IB,
        {"transport": "ucx_ud", "peer_may_have_died": True},
    ),
    (
        "libfabric:4242:1701234567::efa:ep_ctrl:efa_rdm_ep_handle_error():123<warn> Encountered error RX when processing packet. err: 5 (Input/output error) provider error: Unreachable remote (prov_errno: 21)",
        IB,
        {"transport": "efa", "fabric_error": "Unreachable remote"},
    ),
    (
        "node1:4242:4300 [0] NCCL WARN NET/OFI Request completed with error. RC: 5. Error: 13 (Unresponsive receiver). Completed length: 0",
        IB,
        {},
    ),
    # gloo and NCCL sockets (2.x wordings)
    (
        "RuntimeError: [/opt/conda/conda-bld/pytorch_1/work/third_party/gloo/gloo/transport/tcp/pair.cc:210] address family mismatch",
        SOCKET,
        {"problem": "address_family_mismatch"},
    ),
    ("RuntimeError: address family mismatch", SOCKET, {"backend": "gloo"}),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:41234",
        SOCKET,
        {},
    ),
    (
        "terminate called after throwing an instance of 'gloo::IoException'\n  what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:575] Read error [10.0.0.2]:41234: Connection reset by peer",
        SOCKET,
        {},
    ),
    (
        "node1:4242:4300 [0] misc/socket.cc:538 NCCL WARN socketProgress: Connection closed by remote peer fe80::1%eth0<41234>",
        SOCKET,
        {},
    ),
    (
        "node1:4242:4300 [0] misc/socket.cc:47 NCCL WARN socketProgressOpt: Call to send to 10.0.0.2<41234> failed : Broken pipe",
        SOCKET,
        {},
    ),
]


@pytest.mark.parametrize(("text", "code", "facts"), NETWORK, ids=[f"n{i}" for i in range(len(NETWORK))])
@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:5], ids=["bare", "rank", "default", "mpirun", "host"])
def test_transport_failures_beyond_nccl_common_warns(
    prefix: str, text: str, code: str, facts: dict[str, Any]
) -> None:
    root = root_finding(prefixed(prefix, text))
    assert root is not None and root.code == code, (text, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (k, root.facts)


_CLOSED = "node1:4243:4300 [1] misc/socket.cc:538 NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.2<41234>\n"
_GLOO = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:41234\n"


@pytest.mark.parametrize(
    "death",
    [
        "slurmstepd: error: *** JOB 123 ON node2 CANCELLED AT 2024-05-01T14:00:00 DUE TO PREEMPTION ***\n",
        "srun: error: Node failure on node2\n",
        "=>> PBS: job killed: node 1 (node2) requested job terminate, 'EOF' (code 1099) - received SISTER_EOF attempting to communicate with sister MOM's\n",
        "TERM_PREEMPT: job killed after preemption.\n",
        "The actor died because its node has died. Node Id: 699d\n\tthe actor's node was preempted: spot\n",
        "Pod was terminated in response to imminent node shutdown.\n",
    ],
    ids=["slurm", "srun", "pbs", "lsf", "ray", "k8s"],
)
@pytest.mark.parametrize("echo", [_CLOSED, _GLOO], ids=["nccl", "gloo"])
def test_a_lost_node_leads_over_the_peers_dropped_connections(death: str, echo: str) -> None:
    for log in (echo + death, death + echo):
        found = failure_findings(log)
        assert found and found[0].code == EXITED, (log, found)
        assert any(f.code == SOCKET for f in found[1:])


@pytest.mark.parametrize(
    "limit",
    [
        "slurmstepd: error: *** JOB 123 ON node2 CANCELLED AT 2024-05-01T14:00:00 DUE TO TIME LIMIT ***\n",
        "=>> PBS: job killed: walltime 86420 exceeded limit 86400\n",
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n",
    ],
    ids=["slurm", "pbs", "lsf"],
)
def test_a_time_limit_is_the_end_of_something_else(limit: str) -> None:
    found = failure_findings(_CLOSED + limit)
    assert found and found[0].code == SOCKET, found


HEALTHY = [
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "PBS: job resources used: walltime=01:00:00,mem=4194304kb",
    "Job preemption is disabled for this queue",
    "TERM_DONE: job finished normally",
    "Successfully completed.",
    "Exited with exit code 0.",
    "  Normal  Scheduled  pod/trainer-worker-0  Successfully assigned default/trainer-worker-0 to gpu-7",
    "Status:  Running",
    "I 05-01 10:00:00 controller.py:200] Cluster is UP. Job is running.",
    "(pid=4242) INFO worker.py:100 -- actor restarted on node 10.0.0.5",
    "Spot instance launched: i-0abc",
    "node1:4242:4300 [0] transport/net_ib.cc:110 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port active(9)",
    "node1:4242:4300 [0] transport/net_ib.cc:105 NCCL WARN NET/IB : mlx5_0:1 GID table changed",
    "node1:4242:4300 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
    "libfabric:4242:1701234567::efa:core:efa_device_construct():120<info> device efa_0 created",
    "[1701234567.1] [node1:4242 :0] ucp_context.c:1774 UCX  INFO  UCP version is 1.15",
    "Preemption handling: checkpoint saved at step 1200",
    "000 (1234.000.000) 2024-05-01 10:00:00 Job submitted from host: <10.0.0.1:9618>",
    "  Normal  Completed  job/train  Job completed",
]


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_lines_stay_silent(line: str) -> None:
    assert failure_findings(line + "\n") == []


_IB12 = "node1:4243:4300 [0] transport/net_ib.cc:1287 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41234> with error 12, opcode 0, len 0, vendor err 129\n"
_UCX_UD = "[node1:4242 :0:4242]  ud_ep.c:278  Fatal: UD endpoint 0x1c3f4d0 to <no debug data>: unhandled timeout error\n"
_EFA = (
    "libfabric:4242:1701234567::efa:cq:efa_rdm_cq_poll():123<warn> Encountered error: Unresponsive receiver\n"
)


def _raised(exc: str) -> str:
    return (
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 10, in <module>\n'
        "[rank1]:     x = batch['foo']\n"
        f"[rank1]: {exc}\n"
    )


@pytest.mark.parametrize(
    "exc",
    ["KeyError: 'foo'", "ValueError: bad shape", "AssertionError", "IndexError: list index out of range"],
)
@pytest.mark.parametrize("echo", [_IB12, _UCX_UD, _EFA], ids=["ib-retry", "ucx-ud", "efa"])
def test_a_rank_that_raised_its_own_error_leads_over_the_fabric_losing_it(exc: str, echo: str) -> None:
    for log in (_raised(exc) + echo, echo + _raised(exc)):
        found = failure_findings(log)
        assert found and found[0].code == "RUN132", (log, found)


def test_a_runtime_error_may_be_the_transport_own_and_does_not_outrank_it() -> None:
    found = failure_findings(_raised("RuntimeError: something went wrong") + _IB12)
    assert found and found[0].code == IB, found
