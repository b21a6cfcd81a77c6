"""Rendezvous and launch families read at their source, fifth part: the XLA/TSL coordination service's RPCs
at start-up and shutdown (JAX's jax.distributed.initialize, TF multi-worker), the tail of ProcessGroupNCCL's
ncclUniqueId store error, a master whose DNS name never resolved in a Kubernetes init container, Slurm's and
MPI's launch failures before any rank ran (RUN304), horovodrun's ssh check and start timeout, Ray Train's
worker-group start-up timeout, and HCCL's root-info (topology exchange) server. Each case is written from the
format string that prints it, with the prefixes real logs add; healthy lines of the same tools stay silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

PREFIXES = [
    "",
    "[rank1]: ",
    "[1,0]<stderr>:",
    "2024-01-01 12:00:00,123 - ERROR - ",
    "(RayTrainWorker pid=2044) ",
    "> ",
]


def _prefixed(prefix: str, text: str) -> str:
    return "".join(prefix + line + "\n" for line in text.splitlines())


# -- the coordination service (tsl coordination_service_agent.cc, xla/pjrt/distributed/client.cc) -------------

_GLOG = "E0412 23:39:41.656900 1234 client.cc:96] "
_TF_LOG = "2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] "
_GRPC_REGISTER = (
    "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
    "/tensorflow.CoordinationService/RegisterTask:\n"
    ':{"created":"@1712965181.656280441","description":"Deadline Exceeded","file":"external/com_github_grpc_grpc/'
    'src/core/ext/filters/deadline/deadline_filter.cc","file_line":69,"grpc_status":4}\n'
)

STARTUP = [
    _TF_LOG
    + "Coordination service agent in error status: DEADLINE_EXCEEDED: Deadline Exceeded\n"
    + _GRPC_REGISTER,
    _GRPC_REGISTER
    + _GLOG
    + "Coordination service agent in error status: DEADLINE_EXCEEDED: Deadline Exceeded\n",
    _GLOG
    + "Failed to connect to distributed JAX controller: waited too long for some tasks to show up. This may "
    "be due to 1) some tasks crashed earlier before connecting, 2) some tasks were never scheduled, or 3) "
    "scheduling delays.\n",
    "F0726 22:13:21.000000 77 client.h:80] Terminating process because the JAX distributed service detected fatal "
    "errors. absl::Status: DEADLINE_EXCEEDED: Deadline Exceeded\nRPC: /tensorflow.CoordinationService/RegisterTask\n",
    "Traceback (most recent call last):\n"
    '  File "/root/train.py", line 89, in main\n'
    '    jax.distributed.initialize(coordinator_address="10.0.0.1:1234", num_processes=8, process_id=3)\n'
    '  File "/usr/lib/python3.11/site-packages/jax/_src/distributed.py", line 180, in initialize\n'
    "    global_state.initialize(coordinator_address, num_processes, process_id,\n"
    '  File "/usr/lib/python3.11/site-packages/jax/_src/distributed.py", line 95, in initialize\n'
    "    self.client.connect()\n"
    "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", STARTUP)
def test_coordination_service_registration_that_timed_out(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN221", {"problem": "coordination_rpc", "phase": "startup"})


UNREACHABLE = [
    "[rank0] :UNAVAILABLE:failed to connect to all addresses; last error: UNKNOWN:\n"
    "ipv4:10.186.213.145:13305: Failed to connect to remote host: Connection refused\n"
    "[rank3] WatchTasksAsync failed for task 3: UNAVAILABLE: failed to connect to all addresses\n",
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.12/site-packages/jax/_src/distributed.py", line 129, in initialize\n'
    "    self.client.connect()\n"
    "jax.errors.JaxRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: "
    "ipv4:10.0.0.7:8476: Failed to connect to remote host: Connection refused\n",
    _GLOG + "Coordination service agent in error status: UNAVAILABLE: failed to connect to all addresses\n"
    "Additional GRPC error information from remote target coordination_service while calling "
    "/tensorflow.CoordinationService/RegisterTask:\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", UNREACHABLE)
def test_coordination_service_not_reachable(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN222", {"problem": "coordination_rpc"})


_SHUTDOWN = (
    "2023-02-17 06:08:24.084633: E external/org_tensorflow/tensorflow/tsl/distributed_runtime/coordination/"
    "coordination_service_agent.cc:481] Failed to disconnect from coordination service with status: "
    "DEADLINE_EXCEEDED: Deadline Exceeded\n"
    "Additional GRPC error information from remote target unknown_target_for_coordination_leader:\n"
    ':{"created":"@1676614104.084285325","description":"Error received from peer ipv4:26.0.134.228:64719",'
    '"grpc_message":"Deadline Exceeded","grpc_status":4}. Proceeding with agent shutdown anyway.\n'
    "Error in atexit._run_exitfuncs:\n"
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.8/site-packages/jax/_src/distributed.py", line 168, in shutdown\n'
    "    global_state.shutdown()\n"
    '  File "/venv/lib/python3.8/site-packages/jax/_src/distributed.py", line 87, in shutdown\n'
    "    self.client.shutdown()\n"
    "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded\n"
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_shutdown_that_cannot_disconnect_alone_is_the_coordination_failure(prefix: str) -> None:
    check_root(_prefixed(prefix, _SHUTDOWN), "RUN221", {"phase": "shutdown"})


def test_jaxlibs_shutdown_result_that_is_not_ok() -> None:
    log = (
        "2023-05-01 10:00:00.000000: I external/xla/xla/pjrt/distributed/client.cc:180] Distributed task shutdown "
        "result: DEADLINE_EXCEEDED: Deadline Exceeded\n"
    )
    check_root(log, "RUN221", {"phase": "shutdown"})


def test_a_shutdown_that_cannot_disconnect_follows_an_earlier_failure() -> None:
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.10 GiB of which 1.06 GiB is free.\n" + _SHUTDOWN
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN221", root
    assert "RUN221" in {f.code for f in failure_findings(log)}


HEALTHY_COORDINATION = [
    # a connect the client makes again: the coordinator was still starting (jaxlib's client, then Connected)
    "2024-01-01 00:00:00.000: E external/xla/xla/pjrt/distributed/client.cc:100] Coordination service agent: "
    "RegisterTask failed: UNAVAILABLE: failed to connect to all addresses; will retry\n"
    "I0101 00:00:05.000 client.cc:120] Connected to distributed JAX controller\n",
    "2021-10-26 01:19:17.133471: I external/org_tensorflow/tensorflow/compiler/xla/pjrt/distributed/service.cc:369] "
    "Jax service listening on 10.128.0.47:1456\n"
    "2021-10-26 01:19:28.339404: I external/org_tensorflow/tensorflow/compiler/xla/pjrt/distributed/client.cc:129] "
    "Connected to distributed JAX controller\n"
    "2021-10-26 01:19:28.375758: I external/org_tensorflow/tensorflow/compiler/xla/pjrt/distributed/client.cc:163] "
    "Waiting for all distributed JAX tasks to shut down.\n"
    "2021-10-26 01:19:28.376179: I external/org_tensorflow/tensorflow/compiler/xla/pjrt/distributed/client.cc:180] "
    "Distributed task shutdown result: OK\n",
    "INFO:2025-06-17 10:07:59,101:jax._src.distributed:132: Starting JAX distributed service on [::]:9876\n"
    "INFO:2025-06-17 10:07:59,102:jax._src.distributed:149: Connecting to JAX distributed service on "
    "localhost:9876\n",
    "Filtering local host names.\nRemote host found: 10.21.102.16\nChecking ssh on all remote hosts.\n"
    "SSH was successful into all the remote hosts.\nTesting interfaces on all the hosts.\n"
    "Waiting for the hosts to acknowledge.\nNotified all the hosts that the registration is complete.\n",
    "Attempting to start training worker group of size 8 with the following resources: [{'GPU': 1}] * 8\n"
    "Started training worker group of size 8\n",
    "I0412 23:39:41.656900 1234 coordination_service_agent.cc:300] Coordination agent has successfully "
    "connected.\n",
    "I0412 23:39:41.700000 1234 client.cc:100] Connected to distributed JAX controller\n",
    "I0412 23:39:41.800000 1234 coordination_service_agent.cc:400] Polling for error from coordination service. "
    "This is a long-running RPC that will return only if an error is encountered or cancelled (e.g. due to "
    "shutdown).\n",
    "I0412 23:59:41.000000 1234 coordination_service_agent.cc:500] Coordination agent has initiated Shutdown().\n"
    "I0412 23:59:41.100000 1234 coordination_service_agent.cc:510] Coordination agent has successfully shut "
    "down.\n",
    "I0412 23:59:41.200000 1234 coordination_service_agent.cc:520] Cancelling error polling because the service "
    "or the agent is shutting down.\n",
    # gRPC's words from another service (Ray's GCS), no coordination service anywhere near
    "(raylet) [2024-01-01 12:00:00,000 W 123 123] gcs_client.cc:100: Failed to connect to GCS: UNAVAILABLE: "
    "failed to connect to all addresses; retrying\n(raylet) Connected to GCS\nepoch 1 step 10 loss 2.1\n",
]


@pytest.mark.parametrize("log", HEALTHY_COORDINATION)
def test_healthy_coordination_service_lines_stay_silent(log: str) -> None:
    assert not [f for f in failure_findings(log) if f.code in ("RUN221", "RUN222")], failure_findings(log)


def test_a_heartbeat_failure_mid_run_is_not_read_as_the_rendezvous() -> None:
    log = (
        "E0929 17:42:48.594192 1044529 coordination_service_agent.cc:332] Polled an error from coordination "
        "service (this can be an error from this or another task).\n"
        "Additional GRPC error information from remote target coordination_service while calling "
        "/tensorflow.CoordinationService/PollForError:\n"
    )
    assert not [f for f in failure_findings(log) if f.code in ("RUN221", "RUN222")]


# -- ProcessGroupNCCL's ncclUniqueId store read, only its tail kept -------------------------------------------

_FRAMES = (
    "frame #50: _PyRun_SimpleFileObject + 0x19f (0x5b890f in /home/user/envs/train/bin/python)\n"
    "frame #51: _PyRun_AnyFileObject + 0x43 (0x5b8673 in /home/user/envs/train/bin/python)\n"
    "frame #52: Py_RunMain + 0x38d (0x5b542d in /home/user/envs/train/bin/python)\n"
    "frame #53: Py_BytesMain + 0x39 (0x585609 in /home/user/envs/train/bin/python)\n"
    "frame #54: <unknown function> + 0x29d90 (0x7fdffbfb9d90 in /lib/x86_64-linux-gnu/libc.so.6)\n"
    "frame #55: __libc_start_main + 0x80 (0x7fdffbfb9e40 in /lib/x86_64-linux-gnu/libc.so.6)\n"
    "frame #56: /home/user/envs/train/bin/python() [0x5854be]\n"
)
TAILS = [
    ". This may indicate a possible application crash on rank 0 or a network set up issue.",
    "This may indicate a possible application crash on rank 0 or a network set up issue.",
]


@pytest.mark.parametrize("prefix", ["", "[rank2]: ", "[default2]:", "[2,0]<stderr>:"])
@pytest.mark.parametrize("tail", TAILS)
def test_the_tail_of_the_unique_id_store_error(prefix: str, tail: str) -> None:
    log = _prefixed(prefix, _FRAMES + tail)
    check_root(log, "RUN222", {"waited_for_rank": 0})


def test_the_whole_unique_id_store_error_is_read_once() -> None:
    log = (
        "[rank2]: torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n"
        "[rank2]: Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:670 (most recent "
        "call first):\n" + _prefixed("[rank2]: ", _FRAMES + TAILS[0])
    )
    check_root(log, "RUN222")
    assert len([f for f in failure_findings(log) if f.code == "RUN222"]) == 1


# -- a Kubernetes init container that waited for the master's name ------------------------------------------

_AGENT_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/ac2/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/opt/ac2/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 268, in launch_agent\n'
    "    result = agent.run()\n"
)
NSLOOKUP = [
    "nslookup: can't resolve '(null)': Name does not resolve\n"
    "nslookup: can't resolve 'job-master-0': Name does not resolve\nwaiting for master\n",
    "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\n** server can't find job-master-0: NXDOMAIN\n\n"
    "waiting for master\n",
]
FAILURES_AFTER = [
    _AGENT_TRACEBACK,
    "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
    "(job-master-0, 23456).\n",
]


@pytest.mark.parametrize("wait", NSLOOKUP)
@pytest.mark.parametrize("failure", FAILURES_AFTER)
def test_a_master_name_that_never_resolved(wait: str, failure: str) -> None:
    log = wait + "\n" + failure
    root = root_finding(log)
    assert root is not None and root.code == "RUN222", root


@pytest.mark.parametrize("wait", NSLOOKUP)
def test_the_init_containers_wait_that_the_run_goes_past_is_silent(wait: str) -> None:
    log = (
        wait + "Server:    10.96.0.10\nName:      job-master-0.default.svc.cluster.local\n"
        "Address 1: 10.244.1.17\n[rank0]: epoch 0 step 10 loss 2.91\n"
    )
    assert root_finding(log) is None


# -- Slurm's and MPI's launch failures (RUN304) -----------------------------------------------------------------

SRUN = [
    ("srun: error: Unable to create step for job 4359715: More processors requested than permitted", {}),
    (
        "srun: error: Unable to create step for job 22456499: Requested node configuration is not available",
        {},
    ),
    ("srun: error: Unable to create step for job 21227175: Memory required by task is not available", {}),
    (
        "srun: error: Task launch for StepId=1234.0 failed on node node-3: Invalid node name specified",
        {"host": "node-3"},
    ),
    (
        "srun: error: Task launch for 1234.0 failed on node gpu07: Communication connection failure",
        {"host": "gpu07"},
    ),
    ("srun: error: Application launch failed: Invalid node name specified", {}),
    ("srun: error: Unable to allocate resources: Requested node configuration is not available", {}),
    (
        "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
        {},
    ),
]


@pytest.mark.parametrize("prefix", ["", "2024-05-01T10:00:00 ", "[1,0]<stderr>:"])
@pytest.mark.parametrize(("line", "facts"), SRUN)
def test_slurm_could_not_launch_the_step(prefix: str, line: str, facts: dict[str, str]) -> None:
    check_root(prefix + line + "\n", "RUN304", {"launcher": "srun", **facts})


@pytest.mark.parametrize("prefix", ["", "2024-05-01T10:00:00 ", "[1,0]<stderr>:"])
def test_slurm_could_not_find_the_program_is_the_environment(prefix: str) -> None:
    # the step launched, its program is not on the node (PATH, container image): RUN389, driver_env
    line = "slurmstepd: error: execve(): python: No such file or directory"
    check_root(prefix + line + "\n", "RUN389", {"executable": "python", "problem": "executable_not_found"})
    check_root(prefix + line.replace("No such file or directory", "Permission denied") + "\n", "RUN304")


def test_a_step_refused_because_the_job_was_ending_is_not_a_launch_failure() -> None:
    log = (
        "srun: Job 63094233 step creation temporarily disabled, retrying\n"
        "srun: Cancelled pending job step with signal 2\n"
        "srun: error: Unable to create step for job 63094233: Job/step already completing or completed\n"
    )
    assert not [f for f in failure_findings(log) if f.code == "RUN304"]


_BOX = "-" * 74 + "\n"
MPI = [
    _BOX + "mpirun was unable to launch the specified application as it could not access\n"
    "or execute an executable:\n\nExecutable: python3\nNode: node-2\n\nwhile attempting to start process rank 0.\n"
    + _BOX,
    _BOX + "prterun was unable to launch the specified application as it could not access\nor execute an "
    "executable:\n" + _BOX,
    _BOX
    + "mpirun was unable to start the specified application as it encountered an\nerror:\n\nError code: 1\n"
    "Error name: (null)\nNode: node-1\n" + _BOX,
    _BOX
    + "There are not enough slots available in the system to satisfy the 8\nslots that were requested by the "
    "application:\n\n  python\n\nEither request fewer slots for your application, or make more slots\navailable "
    "for use.\n" + _BOX,
    _BOX
    + "A sequential map was requested, but not enough node entries\nwere given to support the requested number "
    "of processes:\n\n  Num procs:  2\n  Num nodes:  1\n" + _BOX,
    _BOX
    + "Your job has requested more processes than the ppr for\nthis topology can support:\n\n  App: ./train\n"
    "  Number of procs:  120\n  PPR: 40:node\n" + _BOX,
    _BOX
    + "A request was made to bind to that would result in binding more\nprocesses than cpus on a resource:\n\n"
    "   Bind to:     CORE\n   Node:        node-1\n   #processes:  2\n   #cpus:       1\n" + _BOX,
]


@pytest.mark.parametrize("log", MPI)
def test_the_mpi_launcher_could_not_start_the_application(log: str) -> None:
    check_root(log, "RUN304")


def test_the_slots_are_a_fact() -> None:
    check_root(MPI[3], "RUN304", {"slots": 8})


NOT_FOUND = [
    _BOX
    + "mpirun was unable to find the specified executable file, and therefore\ndid not launch the job.  This "
    "error was first reported for process\nrank 0; it may have occurred for other processes as well.\n"
    + _BOX,
    "[proxy:0:0@node-1] HYDU_create_process (utils/launch/launch.c:74): execvp error on file python "
    "(No such file or directory)\n",
]


@pytest.mark.parametrize("log", NOT_FOUND)
def test_a_launcher_that_cannot_find_the_program_is_the_environment(log: str) -> None:
    check_root(log, "RUN389", {"problem": "executable_not_found"})


# -- horovodrun, Ray Train ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Permission denied, please try again.\nroot@hpc4: Permission denied (publickey,password).\n",
        "ssh: connect to host hpc4 port 22: Connection refused\n",
        "Host key verification failed.\n",
    ],
)
def test_horovodruns_ssh_check(said: str) -> None:
    log = (
        "Filtering local host names.\nChecking ssh on all remote hosts.\nssh not successful for host hpc4:\n"
        + said
    )
    check_root(log, "RUN303", {"host": "hpc4"})


@pytest.mark.parametrize(
    "activity",
    ["all tasks to start", "the tasks to finish registering", "all Horovod processes to register"],
)
def test_horovodruns_start_timeout(activity: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/horovodrun", line 8, in <module>\n'
        "    sys.exit(run_commandline())\n"
        f"Exception: Timed out waiting for {activity}. Please check connectivity between servers. You may need "
        "to increase the --start-timeout parameter if you have too many servers.\n"
    )
    check_root(log, "RUN221", {"launcher": "horovodrun", "activity": activity})


@pytest.mark.parametrize(
    "line",
    [
        "ray.train.v2._internal.exceptions.WorkerGroupStartupTimeoutError: The worker group startup timed out "
        "after 30.0 seconds waiting for 8 workers. Potential causes include: (1) temporary insufficient cluster "
        "resources while waiting for autoscaling",
        "WorkerGroupStartupTimeoutError: The worker group startup timed out after 30.0 seconds waiting for 8 "
        "workers. Possible causes include insufficient cluster resources and transient network issues.",
    ],
)
@pytest.mark.parametrize("prefix", ["", "(TrainController pid=2044) ", "2025-01-01 10:00:00,000\tERROR "])
def test_ray_trains_worker_group_start_up_timeout(line: str, prefix: str) -> None:
    check_root(prefix + line + "\n", "RUN221", {"workers": 8, "problem": "worker_group_start"})


# -- HCCL's root-info server (topoinfo_exchange_server.cc / _agent.cc) ----------------------------------------

_PLOG = "[ERROR] HCCL(1041081,all_reduce_test):2000-03-15-01:20:01.624.966 "
HCCL_SERVER = [
    "[topoinfo_exchange_server.cc:314] [1041362][InitGroupStage][RanktableDetect]topo exchange server get socket "
    "timeout! timeout[120 s]",
    "[topoinfo_exchange_server.cc:210] [Get][Connection]topo exchange server get socket timeout! timeout[120 s]",
    "[topoinfo_exchange_server.cc:400] [InitGroupStage][RanktableDetect] errNo[0x0000000005000009] topo exchange "
    "server get socket timeout, listenPort[60000], elapsed[121 s] > timeout[120 s], identifier[hccl_world_group]",
    "[topoinfo_exchange_server.cc:400] [InitGroupStage][RanktableDetect] errNo[0x0000000005000009] topo exchange "
    "server get socket timeout[120 s], expected[8] nodes, received[4] nodes",
]
_ROLL_CALL = (
    _PLOG
    + "[topoinfo_exchange_server.cc:501] [1041362][InitGroupStage][DisplayConnectionedRank]total connected "
    "num is [4],line num is [1]\n"
    + _PLOG
    + "[topoinfo_exchange_server.cc:503] [1041362][InitGroupStage][DisplayConnectionedRank]need connect rankNum is "
    "[8]\n"
)
_AGENT_SIDE = (
    "[ERROR] HCCL(1041085,all_reduce_test):2000-03-15-01:20:01.630.122 [topoinfo_exchange_base.cc:145] "
    '[1041085][InitGroupStage][RanktableDetect] TopoDetect ERROR occur !!! fault_type[1], fault_info["Failed to '
    'connect agent[1,3,5,7,]"]\n'
)


@pytest.mark.parametrize("server", HCCL_SERVER)
def test_hcclss_root_info_server_timed_out(server: str) -> None:
    check_root(_PLOG + server + "\n", "RUN221", {"problem": "hccl_rootinfo"})


@pytest.mark.parametrize("server", HCCL_SERVER)
def test_the_root_info_roll_call_names_the_missing_ranks(server: str) -> None:
    log = _PLOG + server + "\n" + _ROLL_CALL + _AGENT_SIDE
    check_root(log, "RUN221", {"ranks": [1, 3, 5, 7], "connected_ranks": 4, "expected_ranks": 8})


def test_the_root_info_records_glued_on_one_line() -> None:
    log = (_PLOG + HCCL_SERVER[0] + " " + _ROLL_CALL.replace("\n", " ")).strip() + "\n" + _AGENT_SIDE
    check_root(log, "RUN221", {"ranks": [1, 3, 5, 7]})


@pytest.mark.parametrize(
    "line",
    [
        "[topoinfo_exchange_agent.cc:120] [InitGroupStage][RanktableDetect]topo exchange agent get socket timeout! "
        "timeout[120 s]",
        "[topoinfo_exchange_agent.cc:300] [InitGroupStage][RanktableDetect]Wait timeout for sockets recv, "
        "timeout[120 s]",
    ],
)
def test_an_hccl_rank_that_could_not_reach_the_root_info_server(line: str) -> None:
    check_root(_PLOG + line + "\n", "RUN222", {"problem": "hccl_rootinfo_connect"})


# -- jax.distributed.initialize's settings, DeepSpeed's / ColossalAI's hostfile --------------------------------

_JAX_INIT_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/work/train.py", line 12, in <module>\n'
    "    jax.distributed.initialize()\n"
    '  File "/venv/lib/python3.11/site-packages/jax/_src/distributed.py", line 196, in initialize\n'
    "    global_state.initialize(coordinator_address, num_processes, process_id,\n"
)


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: coordinator_address should be defined.",
        "ValueError: Number of processes must be defined.",
        "ValueError: The process id of the current process must be defined.",
        "RuntimeError: Number of workers does not equal the number of processes. Auto detecting process_id is not "
        "possible.Please pass process_id manually.",
    ],
)
@pytest.mark.parametrize("frames", ["", _JAX_INIT_FRAMES])
@pytest.mark.parametrize("prefix", ["", "[rank0]: ", "(RayTrainWorker pid=2044) "])
def test_jax_distributed_settings_that_are_missing(line: str, frames: str, prefix: str) -> None:
    check_root(_prefixed(prefix, frames + line), "RUN224", {"problem": "jax_settings_missing"})


HOSTFILE = [
    (
        "[2023-06-01 10:00:00,000] [ERROR] [runner.py:212:fetch_hostfile] Hostfile is not formatted correctly, "
        "unable to proceed with training.",
        {},
    ),
    (
        "[2024-02-01 10:00:00,000] [ERROR] [runner.py:212:fetch_hostfile] Hostfile is not formatted correctly, "
        "unable to proceed with training/inference.",
        {},
    ),
    ("Hostfile contains duplicate hosts, unable to proceed with training.", {}),
    (
        "ValueError: Hostfile contains a bad entry: worker-1 slot=8, unable to proceed with launching",
        {"entry": "worker-1 slot=8"},
    ),
    (
        "ValueError: Hostfile contains multiple entries for worker-1, unable to proceed with launching",
        {"entry": "worker-1"},
    ),
    ("ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching.", {}),
    ("Error: Hostfile is not formatted correctly, expected <hostname>:<slot>, but found worker-1 8", {}),
]


@pytest.mark.parametrize(("line", "facts"), HOSTFILE)
def test_a_hostfile_the_launcher_rejected(line: str, facts: dict[str, str]) -> None:
    check_root(line + "\n", "RUN304", {"launcher": "hostfile", **facts})


def test_a_missing_hostfile_is_the_single_node_fallback_not_a_failure() -> None:
    log = (
        "[2024-01-06 11:41:34,489] [WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, will proceed "
        "with training with local resources only.\n[2024-01-06 11:41:40,021] [INFO] [comm.py:637:init_distributed] "
        "cdb=None\nepoch 0 step 100 loss 2.31\n"
    )
    assert root_finding(log) is None


# -- torch elastic's etcd rendezvous (etcd_rendezvous.py, 1.9-2.x): the log line before its raise --------------


@pytest.mark.parametrize(
    "line",
    [
        "INFO:torch.distributed.elastic.rendezvous.etcd_rendezvous:Rendezvous timeout occured in "
        "EtcdRendezvousHandler",
        "[I1203 10:00:00.000 etcd_rendezvous.py:180] Rendezvous timeout occurred in EtcdRendezvousHandler",
        "[2021-06-01 10:00:00,000] torch.distributed.elastic.rendezvous.etcd_rendezvous: [INFO] Rendezvous "
        "timeout occured in EtcdRendezvousHandler",
    ],
)
def test_the_etcd_rendezvous_timeout_line(line: str) -> None:
    check_root(line + "\n", "RUN221")
    with_raise = (
        line + "\nTraceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/etcd_rendezvous.py", '
        "line 174, in next_rendezvous\n    rdzv_version, rank, world_size = self._rdzv_impl.rendezvous_barrier()\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n"
    )
    check_root(with_raise, "RUN221")


# -- Lightning's checks of the launcher against the Trainer (lightning_fabric/plugins/environments) ------------


@pytest.mark.parametrize(
    ("line", "setting"),
    [
        (
            "RuntimeError: You set `--ntasks=8` in your SLURM bash script, but this variable is not supported. "
            "HINT: Use `--ntasks-per-node=8` instead.",
            "--ntasks=8",
        ),
        (
            "ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM "
            "`--ntasks-per-node=1` does not match. HINT: Set `devices=1`.",
            "devices=4",
        ),
        (
            "lightning_fabric.utilities.exceptions.MisconfigurationException: You set `devices=2` in Lightning, but "
            "the number of tasks per node configured in SLURM `--ntasks-per-node=1` does not match. HINT: Set "
            "`devices=1`.",
            "devices=2",
        ),
        (
            "ValueError: You set `devices=2` and `num_nodes=1` in Lightning, but the product (2 * 1) does not "
            "match the world size (4).",
            "devices=2",
        ),
    ],
)
@pytest.mark.parametrize("prefix", ["", "[rank: 0] ", "srun: error: "])
def test_lightning_and_the_launcher_disagree_on_the_world(line: str, setting: str, prefix: str) -> None:
    check_root(prefix + line + "\n", "RUN224", {"setting": setting})


# -- Horovod's Gloo rendezvous (horovod/common/gloo/http_store.cc, runner/http/http_client.py) -----------------

HVD_STORE_WAIT = [
    "terminate called after throwing an instance of 'gloo::IoException'\n"
    "  what():  [horovod/common/gloo/http_store.cc:53] [horovod/common/gloo/http_store.cc:53] Wait timeout for "
    "key(s): 0\n*** Received signal 6 ***\n",
    "terminate called after throwing an instance of 'gloo::IoException'\n"
    "  what():  [/tmp/pip-install-43a3uo3a/horovod_33a4/horovod/common/gloo/http_store.cc:57] "
    "[/tmp/pip-install-43a3uo3a/horovod_33a4/horovod/common/gloo/http_store.cc:57] Wait timeout after 30 seconds "
    "for key(s): 0. You may want to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS\n"
    "*** SIGABRT received at time=1655335369 on cpu 8 ***\n",
]


@pytest.mark.parametrize("log", HVD_STORE_WAIT)
@pytest.mark.parametrize(
    "prefix", ["", "Tue Jun  9 20:10:40 2020[1]<stderr>:", "(BaseHorovodWorker pid=77) "]
)
def test_horovods_gloo_rendezvous_wait_timeout(log: str, prefix: str) -> None:
    check_root(_prefixed(prefix, log), "RUN221", {"problem": "horovod_gloo_rendezvous", "keys": "0"})


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: ('Put data input KVStore server failed.', URLError(error(104, 'Connection reset by "
        "peer'),))",
        "RuntimeError: ('Read data from KVStore server failed.', URLError(ConnectionRefusedError(111, "
        "'Connection refused')))",
        "RuntimeError: Read data from KVStore server failed.",
    ],
)
def test_horovods_rendezvous_kv_store_unreachable(line: str) -> None:
    check_root(line + "\n", "RUN222", {"problem": "horovod_kvstore"})


def test_a_rank_that_died_first_leads_the_gloo_rendezvous_timeout() -> None:
    log = (
        "[2]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total "
        "capacity of 15.78 GiB of which 1.02 GiB is free.\n" + HVD_STORE_WAIT[1]
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN221", root
