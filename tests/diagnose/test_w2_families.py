"""Families of the ranks' meeting read at their sources (w2, s22: the rendezvous misses of v20's held-out
half and v21's dev half, read as families):

- TensorFlow's master at session creation (core/distributed_runtime/master.cc, 1.0-2.x): "Master init:
  <status>" and DeviceFinder's "CreateSession failed because worker <task> returned error: <status>" with
  an Unavailable / Deadline Exceeded status (rules/peer_waits.py), silent when MonitoredSession's retry
  then starts the master session.
- gRPC Python's exception for a call that never reached its server (grpc/_channel.py 1.0-1.6x: the old
  one-line "(StatusCode.UNAVAILABLE, Connect Failed)" repr, the multi-line status / details repr of
  _Rendezvous, _InactiveRpcError and _MultiThreadedRendezvous) (rules/grpc_transport.py).
- torchrun's agent at its exit barrier (elastic/agent/server/api.py _exit_barrier, 1.9-2.x: "Error waiting
  on exit barrier. Elapsed: N seconds" under its loggers' prefixes) and a stack cut inside the agents' store
  exchange (elastic/utils/store.py get_all / synchronize / barrier) (rules/store_client.py).
- TensorRT-LLM's world-size check without its sizes (worldConfig.cpp < 0.9 "Assertion failed: mpiSize ==
  tp * pp"; the executor's leader mode "MPI worldSize is expected to be equal to tp*pp[*cp] when
  participantIds are not specified") (rules/rdzv_setup.py).
- The master-address variable of Azure's MPI jobs read by a trainer started outside one ("KeyError:
  'AZ_BATCHAI_MPI_MASTER_NODE'") (rules/rdzv_config.py).
- A stack cut where it asks the default process group its size or rank (dist.get_world_size() /
  dist.get_rank(), torch's own get_world_size / get_rank frames), and one cut inside CuPy's NCCLBackend's
  TCP-store exchange of the NCCL unique id (rules/init_stacks.py, and pyexc's headed tracebacks).

s23 (the rendezvous misses of v21's held-out half and v22's dev half; rules/meeting_inputs.py unless said):
c10d's FileStore open()/flock() errors (RUN655); Slurm's compressed per-node counts read with int() (RUN656);
PaddlePaddle's role maker without the launcher's PADDLE_* variables, OneFlow's placement beyond the launched
world and ms-swift's "DeepSpeed is not compatible with MP" (RUN224); the TPU driver's / XLA's remote connect,
Paddle's communicator-id op (gen_nccl_id, c_gen_*_id) and a gRPC server's failed bind (RUN222 / RUN223); a
port clash quoted in one line with NCCL's system error (RUN223); Horovod's HTTP store client out of retries
(rules/horovod_rendezvous.py); a waiting loop or a connect retry followed by the person's own shell or
interpreter session (rules/paste_session.py, read by peer_waits.py and peer_bootstrap.py); a stack cut at
detectron2's re-raise of init_process_group's error (rules/init_stacks.py); titles that say the meeting hangs
or name the store's "Socket Timeout" (rules/meeting_titles.py).
"""

from __future__ import annotations

from typing import Optional

import pytest

from tests.helpers.diagnose_root import LINE_PREFIXES, failure_findings
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

_GRPC = (
    "grpc._channel.{cls}: <{cls} of RPC that terminated with:\n\tstatus = StatusCode.{status}\n"
    '\tdetails = "{details}"\n\tdebug_error_string = "{{"created":"@1574320322.39","description":"{details}",'
    '"grpc_status":14}}"\n>'
)

CASES = [
    # TensorFlow's master at session creation
    ("E tensorflow/core/distributed_runtime/master.cc:269] Master init: Unavailable: OS Error", "RUN221", {}),
    (
        "2019-03-15 00:01:00.888408: E tensorflow/core/distributed_runtime/master.cc:315] CreateSession "
        "failed "
        "because worker /job:worker/replica:0/task:1 returned error: Unavailable: OS Error",
        "RUN221",
        {"waiting_for": "/job:worker/replica:0/task:1"},
    ),
    (
        "E master.cc:272] CreateSession failed because worker /job:ps/replica:0/task:0 returned error: "
        "UNAVAILABLE: failed to connect to all addresses",
        "RUN221",
        {"framework": "tensorflow"},
    ),
    (
        "E master.cc:272] CreateSession failed because worker /job:ps/replica:0/task:2 returned error: "
        "Deadline Exceeded",
        "RUN221",
        {"waiting_for": "/job:ps/replica:0/task:2"},
    ),
    # gRPC Python's client that never connected
    (
        "grpc._channel._Rendezvous: <_Rendezvous of RPC that terminated with (StatusCode.UNAVAILABLE, "
        "Connect Failed)>",
        "RUN222",
        {"grpc_error": "Connect Failed"},
    ),
    (
        _GRPC.format(cls="_Rendezvous", status="UNAVAILABLE", details="failed to connect to all addresses"),
        "RUN222",
        {"problem": "grpc_never_connected"},
    ),
    (
        _GRPC.format(
            cls="_InactiveRpcError",
            status="UNAVAILABLE",
            details="failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.1:50051: Failed to "
            "connect to remote host: Connection refused",
        ),
        "RUN222",
        {"peer": "10.0.0.1:50051"},
    ),
    (
        _GRPC.format(cls="_MultiThreadedRendezvous", status="UNAVAILABLE", details="DNS resolution failed"),
        "RUN222",
        {"grpc_error": "DNS resolution failed"},
    ),
    # torchrun's agent at its exit barrier
    (
        "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: "
        "315.7792458534241 seconds",
        "RUN221",
        {"exit_barrier": True, "elapsed_s": 315.8},
    ),
    (
        "E0319 23:40:35.118955 139795948843008 torch/distributed/elastic/agent/server/api.py:951] Error "
        "waiting on exit barrier. Elapsed: 2.10335206985474 seconds",
        "RUN221",
        {"exit_barrier": True},
    ),
    # TensorRT-LLM's world-size check without its sizes
    (
        "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp "
        "(/opt/tensorrt-llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:89)",
        "RUN224",
        {"problem": "world size mismatch"},
    ),
    (
        "[TensorRT-LLM][ERROR] Assertion failed: With communicationMode kLEADER, MPI worldSize is expected "
        "to be "
        "equal to tp*pp when participantIds are not specified",
        "RUN224",
        {"framework": "tensorrt_llm"},
    ),
    (
        "[TensorRT-LLM][ERROR] Assertion failed: With communicationMode kLEADER, MPI worldSize is expected "
        "to be "
        "equal to tp*pp*cp when participantIds are not specified (/src/executor/executorImpl.cpp:310)",
        "RUN224",
        {"framework": "tensorrt_llm"},
    ),
    # Azure's MPI jobs' master address
    ("KeyError: 'AZ_BATCHAI_MPI_MASTER_NODE'", "RUN224", {"missing_variable": "AZ_BATCHAI_MPI_MASTER_NODE"}),
    ('KeyError: "AZ_BATCH_MASTER_NODE"', "RUN224", {"missing_variable": "AZ_BATCH_MASTER_NODE"}),
]

# Stacks cut before their exception line: a launcher's per-line prefix, never a logger's (logging.exception
# writes a traceback's lines bare).
STACK_PREFIXES = ["", "[rank3]: ", "node7: "]
STACK_CASES = [
    # a stack cut inside torchrun's agents' store exchange (at the exit barrier, at start-up, the
    # function cut)
    (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/agent/server/api.py", line 906, '
        "in _exit_barrier\n    store_util.barrier(\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py", line 78, in '
        "barrier\n    synchronize(store, data, rank, world_size, key_prefix, barrier_timeout)\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py", line 34, in '
        "get_all",
        "RUN221",
        {"exit_barrier": True, "cut": True},
    ),
    (
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/agent/server/api.py", line 871, '
        "in _share_and_gather\n    role_infos_bytes = store_util.synchronize(\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py", line 64, in '
        "synchronize\n    agent_data = get_all(store, rank, key_prefix, world_size)\n"
        '  File "/usr/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py", line 34, in '
        "get_all\n"
        '    data = store.get(f"{prefix}{idx}")',
        "RUN221",
        {"cut": True},
    ),
    (
        'File "/home/xx/miniconda3/envs/belle/lib/python3.8/site-packages/torch/distributed/elastic/utils/'
        'store.py", line 34, in',
        "RUN221",
        {"cut": True},
    ),
    # a torchrun agent's stack cut in its run loop (what it raises past run() is the rendezvous's error)
    (
        '  File "/venv/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 260, in '
        "launch_agent\n    result = agent.run()\n"
        '  File "/venv/lib/python3.10/site-packages/torch/distributed/elastic/metrics/api.py", line 137, in '
        "wrapper\n    result = f(*args, **kwargs)\n"
        '  File "/venv/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 711,'
        " in "
        "run\n    result = self._invoke_run(role)\n"
        '  File "/venv/lib/python3.10/site-packages/torch/dist',
        "RUN221",
        {"cut": True},
    ),
    # a stack cut where it asks the default process group
    (
        "Traceback (most recent call last):\n"
        '  File "finetune_trainer.py", line 310, in <module>\n    main()\n'
        '  File "/src/examples/seq2seq/utils.py", line 368, in __init__\n    num_replicas = '
        "dist.get_world_size()",
        "RUN224",
        {"problem": "process group not initialised"},
    ),
    (
        '  File "/src/train.py", line 88, in main\n    rank = torch.distributed.get_rank()\n'
        '  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1746, in '
        "get_rank",
        "RUN224",
        {"cut": True},
    ),
    # a stack cut inside CuPy's NCCLBackend's TCP-store exchange
    (
        "Traceback (most recent call last):\n"
        '  File "/tests/all_reduce_test.py", line 8, in main\n'
        '    comm = NCCLBackend(n_devices=world_size, rank=rank, host="127.0.0.1", port=13333)\n'
        '  File "/site-packages/cupyx/distributed/_nccl_comm.py", line 82, in __init__\n'
        "    self._init_with_tcp_store(n_devices, rank, host, port)\n"
        '  File "/site-packages/cupyx/distributed/_nccl_comm.py", line 105, in _init_with_tcp_store\n'
        "    shifted_nccl_id = bytes([b + 128 for b in nccl_id])",
        "RUN221",
        {"cut": True},
    ),
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_meeting_family(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), code, facts)


@pytest.mark.parametrize("prefix", STACK_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), STACK_CASES)
def test_cut_stack_family(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), code, facts)


# Lines that share the families' words and say no failure of the meeting (None: silent; a code: any finding
# but that one, where another family reads the line).
NEAR_MISSES: list[tuple[str, Optional[str]]] = [
    # the agent's healthy records around the exit barrier
    (
        "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0005 "
        "seconds",
        None,
    ),
    (
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting "
        "300 "
        "seconds for other agents to finish",
        None,
    ),
    # elastic/utils/store.py named by a warning, and a stack through it that goes on to its exception (the
    # exception's own row reads it)
    (
        "/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py:70: FutureWarning: "
        "This "
        "is an experimental API and will be changed in future.",
        None,
    ),
    # TensorFlow's master: a session created after the retry, a status of another kind, the healthy wait
    (
        "E master.cc:272] CreateSession failed because worker /job:worker/replica:0/task:0 returned error: "
        "Unavailable: OS Error\nI tensorflow/core/distributed_runtime/master_session.cc:1150] Start master "
        "session ea811198d338cc1d with config:",
        "RUN221",
    ),
    (
        "E master.cc:272] CreateSession failed because worker /job:ps/replica:0/task:0 returned error: "
        "Invalid "
        "argument: unknown device",
        "RUN221",
    ),
    (
        "I tensorflow/core/distributed_runtime/master_session.cc:1150] Start master session 2d0b with "
        "config:",
        None,
    ),
    # gRPC: another status with never-connected words, a connection that broke (the transport's rows)
    (_GRPC.format(cls="_InactiveRpcError", status="UNIMPLEMENTED", details="Connect Failed"), None),
    (_GRPC.format(cls="_InactiveRpcError", status="DEADLINE_EXCEEDED", details="Deadline Exceeded"), None),
    (_GRPC.format(cls="_InactiveRpcError", status="UNAVAILABLE", details="Socket closed"), "RUN222"),
    ('a note: details = "failed to connect to all addresses" is what a retry prints', None),
    # TensorRT-LLM's healthy record of its MPI world
    ("[TensorRT-LLM][INFO] MPI size: 2, rank: 0", None),
    ("[TensorRT-LLM][INFO] TP: 2, PP: 1, gpusPerNode: 8", None),
    # another variable's KeyError, an Azure variable set and printed
    ("KeyError: 'AZ_BATCHAI_JOB_NAME'", "RUN224"),
    ("AZ_BATCHAI_MPI_MASTER_NODE=10.0.0.4", None),
    # a stack that goes on to its exception, a custom dist module's call with its own exception, the call
    # in a healthy print
    (
        '  File "/src/utils.py", line 368, in __init__\n    num_replicas = dist.get_world_size()\n'
        "AssertionError: key, nr_ranks should be set at the same time",
        "RUN224",
    ),
    ("world size: dist.get_world_size() = 8", None),
    # the agent's monitor loop asleep when a signal came (SignalException): no meeting
    (
        '  File "/venv/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 711,'
        " in "
        "run\n    result = self._invoke_run(role)\n"
        '  File "/venv/lib/python3.10/site-packages/torch/distributed/elastic/agent/server/api.py", line 864,'
        " in "
        "_invoke_run\n    time.sleep(monitor_interval)",
        "RUN221",
    ),
    # CuPy's backend constructed and working
    ("cupyx.distributed: NCCLBackend(n_devices=2, rank=0) initialised", None),
]


@pytest.mark.parametrize(("log", "not_code"), NEAR_MISSES)
def test_near_misses(log: str, not_code: Optional[str]) -> None:
    if not_code is None:
        assert failure_findings(log + "\n") == [], log
    else:
        assert all(f.code != not_code for f in failure_findings(log + "\n")), (log, _root(log + "\n"))


def test_exit_barrier_stays_behind_the_workers_failure() -> None:
    log = (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
        "OpType=ALLREDUCE, "
        "NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800372 milliseconds before timing out.\n"
        "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 309.72 "
        "seconds\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN221", root


def test_grpc_never_connected_stays_behind_a_death() -> None:
    log = (
        "Fatal Python error: Segmentation fault\n"
        + _GRPC.format(
            cls="_InactiveRpcError", status="UNAVAILABLE", details="failed to connect to all addresses"
        )
        + "\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN222", root


# --- s23 (w2): the rendezvous misses of v21's held-out half and v22's dev half, read as families -----------
# Each family: the released line (marked "corpus") and variants that are NOT in the corpus (other versions,
# wrappers, errnos, frameworks), then its near-misses below.
_D2_STACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap\n'
    "    fn(i, *args)\n"
    '  File "{path}", line {line}, in _distributed_worker\n'
    "    {src}"
)
_STORE_HEAD = (
    "Traceback (most recent call last):\n"
    '  File "/work/train.py", line 88, in main\n'
    '    dist.init_process_group("nccl", init_method="file:///nfs/job/store", world_size=8, rank=r)\n'
    '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 602, in '
    "init_process_group\n"
    "    default_pg = _new_process_group_helper(\n"
)
_GRPC_BIND_LINE = (
    'E0717 20:36:02.127834213    4035 server_chttp2.cc:38]        {{"created":"@1563366962.1",'
    '"description":"No address added out of total 1 resolved",'
    '"file":"src/core/ext/transport/chttp2/server/chttp2_server.cc",'
    '"referenced_errors":[{{"description":"Unable to configure socket","fd":26,"referenced_errors":[{{'
    '"description":"OS Error","errno":{no},"os_error":"{err}","syscall":"bind"}}]}}]}}'
)

S23_CASES = [
    # Horovod's Gloo HTTP store client out of retries (http_store.cc PerformHTTP, 0.20-0.28)
    (
        "Mon Jun  7 11:51:57 2021[1]<stderr>:[2021-06-07 11:51:57.963853: E /tmp/pip-install-s04/"
        "horovod/common/gloo/http_store.cc:96] HTTP GET request failed too many times, aborting. See "
        "exception message above.",
        "RUN222",
        {"framework": "horovod"},
    ),  # corpus
    (
        "[1,0]<stderr>:[2022-03-01 10:00:00.000000: E /usr/local/lib/python3.8/dist-packages/horovod/"
        "common/gloo/http_store.cc:101] HTTP GET request failed too many times, aborting. See exception "
        "message above.\n"
        "[1,0]<stderr>:terminate called after throwing an instance of 'std::runtime_error'\n"
        "[1,0]<stderr>:  what():  HTTP request failed.",
        "RUN222",
        {"problem": "horovod_http_store_unreachable"},
    ),
    (
        "(BaseHorovodWorker pid=4242) [2023-01-01 00:00:00.1: E horovod/common/gloo/http_store.cc:96] "
        "HTTP GET request failed too many times, aborting.",
        "RUN222",
        {},
    ),
    # c10d's FileStore: the file:// store's open() and flock()
    (
        "Traceback (most recent call last):\n"
        '  File "/private/home/t/pytorch/torch/nn/parallel/distributed.py", line 266, in '
        "_dist_broadcast_coalesced\n"
        "    dist._dist_broadcast_coalesced(self.process_group, tensors, buffer_size, False)\n"
        "RuntimeError: open(/private/home/t/new_store_test.txt): No such file or directory",
        "RUN655",
        {"call": "open", "error": "No such file or directory"},
    ),  # corpus
    (
        _STORE_HEAD + "RuntimeError: open(/nfs/job/store): Permission denied",
        "RUN655",
        {"path": "/nfs/job/store"},
    ),
    (_STORE_HEAD + "RuntimeError: flock: Function not implemented", "RUN655", {"call": "flock"}),
    ("RuntimeError: flock: No locks available", "RUN655", {"error": "No locks available"}),
    (
        '  File "C:\\Python310\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 103, in '
        "_file_rendezvous_handler\n    store = FileStore(path, world_size)\n"
        "RuntimeError: open(C:/tmp/ddp_store): Read-only file system",
        "RUN655",
        {"error": "Read-only file system"},
    ),
    # Slurm's compressed per-node counts read with int()
    (
        "ValueError: invalid literal for int() with base 10: '1(x2)'\n"
        "    _WorkerInfo.LOCAL_WORLD_SIZE = int(os.environ['SLURM_STEP_TASKS_PER_NODE'])",
        "RUN656",
        {"value": "1(x2)", "variable": "SLURM_STEP_TASKS_PER_NODE"},
    ),  # corpus
    (
        "    local_size = int(os.environ['SLURM_TASKS_PER_NODE'])\n"
        "ValueError: invalid literal for int() with base 10: '8(x2)'",
        "RUN656",
        {"value": "8(x2)", "variable": "SLURM_TASKS_PER_NODE"},
    ),
    ("ValueError: invalid literal for int() with base 10: '4,2(x3)'", "RUN656", {"value": "4,2(x3)"}),
    ("ValueError: invalid literal for int() with base 10: '32(x4),16'", "RUN656", {"value": "32(x4),16"}),
    # PaddlePaddle's role maker without the launcher's variables
    (
        "AssertionError: can't find PADDLE_TRAINER_ENDPOINTS",
        "RUN224",
        {"variable": "PADDLE_TRAINER_ENDPOINTS"},
    ),  # corpus
    (
        "ValueError: Can not find PADDLE_TRAINERS_NUM, please check your environment.",
        "RUN224",
        {"variable": "PADDLE_TRAINERS_NUM"},
    ),
    (
        "ValueError: Can not find TRAINING_ROLE, please check your environment.",
        "RUN224",
        {"framework": "paddle"},
    ),
    # the TPU driver's / XLA's gRPC client to a remote host
    (
        "RuntimeError: Deadline exceeded: Failed to connect to remote server at address: grpc://10.59.106.169:"
        "8470. Error from gRPC: Deadline Exceeded. Details:",
        "RUN222",
        {"address": "grpc://10.59.106.169:8470"},
    ),  # corpus
    (
        "jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Failed to connect to remote server at address: "
        "grpc://t1v-n-0:8470. Error from gRPC: Connection refused",
        "RUN222",
        {"grpc_error": "Connection refused"},
    ),
    (
        "RuntimeError: Failed to connect to remote server at address: grpc://10.0.0.2:8470",
        "RUN222",
        {"problem": "remote_connect"},
    ),
    # a gRPC server that could not bind (grpc core chttp2_server.cc)
    (_GRPC_BIND_LINE.format(no=99, err="Cannot assign requested address"), "RUN222", {"errno": 99}),
    (_GRPC_BIND_LINE.format(no=98, err="Address already in use"), "RUN223", {}),
    # PaddlePaddle's communicator-id op
    (
        "paddle.fluid.core_avx.EnforceNotMet: Invoke operator gen_nccl_id error.",
        "RUN222",
        {"op": "gen_nccl_id"},
    ),  # corpus
    ("  [operator < c_gen_nccl_id > error]", "RUN222", {"op": "c_gen_nccl_id"}),
    ("  [operator < c_gen_bkcl_id > error]", "RUN222", {"op": "c_gen_bkcl_id"}),
    # a port clash quoted with the NCCL system error it left, in one line
    (
        "What is the reason of 'RuntimeError: Address already in use', 'RuntimeError: NCCL error in: "
        "/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled system error, NCCL version 2.7.8'",
        "RUN223",
        {"error": "Address already in use"},
    ),  # corpus
    (
        "RuntimeError: Address already in use; RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3",
        "RUN223",
        {},
    ),
    # launcher sizes that do not fit the node
    ("Placement is invalid because rank must be less than world size", "RUN224", {"framework": "oneflow"}),
    (
        "RuntimeError: Placement is invalid because rank must be less than world size!",
        "RUN224",
        {"framework": "oneflow"},
    ),
    (
        "    raise ValueError('DeepSpeed is not compatible with MP. '\n"
        "ValueError: DeepSpeed is not compatible with MP. n_gpu: 8, local_world_size: 1.",
        "RUN224",
        {"n_gpu": 8, "local_world_size": 1},
    ),
    ("AssertionError: DeepSpeed is not compatible with MP.", "RUN224", {"framework": "ms-swift"}),
]

# The job's line (under each prefix; a logger's prefix on the first line alone makes the reader glue the next
# unprefixed line to it as a wrapped record), then the person's own shell or interpreter session.
S23_SESSIONS = [
    # Paddle 1.x's NCCL context quoted without its retry tail, then the person's interpreter session
    (
        "运行多卡训练时，报:  Socket connect worker 127.0.0.1:52239 failed\n"
        "Python 3.7.10 (default, Feb 26 2021, 18:47:35)\n>>> import paddle\n"
        ">>> paddle.utils.run_check()\nRunning verify PaddlePaddle program ...",
        "RUN222",
        {"endpoint": "127.0.0.1:52239"},
    ),  # corpus
    (
        "Socket connect worker 10.0.0.2:6170 failed, try again after 3 seconds.\n"
        "user@node1:~$ ping 10.0.0.2\nPING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.",
        "RUN222",
        {"endpoint": "10.0.0.2:6170"},
    ),
    # TensorFlow's master still waiting, then the person's shell
    (
        "CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\nkubectl get pods\n"
        "NAME                       READY  STATUS   RESTARTS  AGE\n"
        "ks-test-cnn-ps-0-xg755     1/1    Running  0  37m",
        "RUN221",
        {"waiting_for": "/job:ps/replica:0/task:0"},
    ),  # corpus
    (
        "I master_session.cc:1000] CreateSession still waiting for response from worker: "
        "/job:worker/replica:0/task:1\n$ docker ps\nCONTAINER ID   IMAGE   STATUS",
        "RUN221",
        {"waiting_for": "/job:worker/replica:0/task:1"},
    ),
    (
        "CreateSession still waiting for response from worker: /job:worker/replica:0/task:2\n"
        "(tf1) me@gpu3:~$ nvidia-smi\n"
        "| NVIDIA-SMI 450.80.02    Driver Version: 450.80.02    CUDA Version: 11.0 |",
        "RUN221",
        {},
    ),
]

# gRPC Python's channel state as Flower's client logs it, then the client giving up
_FLWR = "{lvl} {name} 2023-05-02 10:00:00,{ms} | connection.py:{ln} | ChannelConnectivity.{state}"
S23_CHANNEL = [
    (
        "\n".join(
            [
                _FLWR.format(lvl="DEBUG", name="flower", ms="394", ln=36, state="IDLE"),
                _FLWR.format(lvl="DEBUG", name="flower", ms="394", ln=36, state="TRANSIENT_FAILURE"),
                "INFO flower 2020-12-17 14:45:45,394 | app.py:61 | Opened (insecure) gRPC connection",
                "DEBUG flower 2020-12-17 14:45:45,597 | connection.py:68 | Insecure gRPC channel closed",
                "Traceback (most recent call last):",
            ]
        ),
        "RUN222",
    ),  # corpus shape
    (
        "\n".join(
            [
                _FLWR.format(lvl="DEBUG", name="flwr", ms="001", ln=39, state="CONNECTING"),
                _FLWR.format(lvl="DEBUG", name="flwr", ms="002", ln=39, state="TRANSIENT_FAILURE"),
                "DEBUG flwr 2023-05-02 10:00:03,000 | connection.py:113 | gRPC channel closed",
            ]
        ),
        "RUN222",
    ),
    (
        "\n".join(
            [
                _FLWR.format(lvl="DEBUG", name="flwr", ms="002", ln=42, state="TRANSIENT_FAILURE"),
                "Traceback (most recent call last):",
                '  File "client.py", line 96, in <module>',
                "    fl.client.start_numpy_client(server_address=args.server_address, client=client)",
                "grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that terminated",
            ]
        ),
        "RUN222",
    ),
]

S23_STACKS = [
    # detectron2's launcher re-raising init_process_group's error (engine/launch.py, and its copies)
    (
        _D2_STACK.format(
            path="/public/home/1/code/EVA/det/detectron2/engine/launch.py", line=108, src="raise e"
        ),
        "RUN221",
        {"cut": True},
    ),  # corpus
    (_D2_STACK.format(path="/src/detrex/detectron2/engine/launch.py", line=123, src="raise e"), "RUN221", {}),
    (_D2_STACK.format(path="/code/AdelaiDet/adet/utils/launch.py", line=90, src="raise"), "RUN221", {}),
]

S23_TITLES = [
    # a title that says the meeting hangs, or names torch 1.x's store timeout
    ("stuck in dist_util.setup_dist() when trying multiGPUs training.", "RUN221"),  # corpus
    ("hangs at dist.init_process_group with 2 nodes", "RUN221"),
    ("Training freezes in init_distributed_mode on two machines", "RUN221"),
    ("torchrun rendezvous stuck forever", "RUN221"),
    ("Multi nodes training exited with Socket Timeout", "RUN222"),  # corpus
    ("DDP 训练 15 分钟后显示 sockettimeout", "RUN222"),
]


@pytest.mark.parametrize("prefix", LINE_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), S23_CASES)
def test_s23_meeting_inputs(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), code, facts)


@pytest.mark.parametrize("prefix", STACK_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), S23_SESSIONS)
def test_s23_wait_then_session(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + log + "\n", code, facts)


@pytest.mark.parametrize("prefix", STACK_PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), S23_STACKS)
def test_s23_cut_in_launcher(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), code, facts)


@pytest.mark.parametrize(("log", "code"), S23_CHANNEL)
def test_s23_grpc_channel_never_ready(log: str, code: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.code == code, (log, root)


@pytest.mark.parametrize(("log", "code"), S23_TITLES)
def test_s23_titles(log: str, code: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.code == code, (log, root)


S23_NEAR: list[tuple[str, Optional[str]]] = [
    # a healthy Horovod warning of the same client, a what() alone
    ("[W horovod/common/gloo/http_store.cc:80] HTTP response not OK, got 404", None),
    # another program's open(), flock named in prose
    ("RuntimeError: open(/data/images/0001.jpg): No such file or directory", "RUN655"),
    (
        '  File "/opt/conda/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 1040, in '
        "forward\n"
        "    output = self.module(*inputs[0], **kwargs[0])\n"
        "RuntimeError: open(/data/shards/train-00001.bin): No such file or directory",
        "RUN655",
    ),
    ("note: flock: No locks available is what NFS without lockd says", None),
    # other int() failures, a Slurm count printed
    ("ValueError: invalid literal for int() with base 10: '4,8'", "RUN656"),
    ("ValueError: invalid literal for int() with base 10: 'abc'", "RUN656"),
    ("SLURM_TASKS_PER_NODE=2(x4)", None),
    # Paddle's variables set and printed, a test script's own print
    ("PADDLE_TRAINER_ENDPOINTS=127.0.0.1:6170,127.0.0.1:6171", None),
    ("can't find PADDLE_LAUNCH_LOG", None),
    # a gRPC bind whose cause the paste cut off
    (
        'E0717 server_chttp2.cc:38] {"created":"@1","description":"No address added out of total 1 resolved",'
        '"file":"src/core/ext/transport/chttp2/server/chttp2_server.cc","file_line":305,"referenced_e',
        None,
    ),
    # Paddle's op logging its success, the NCCL context reaching its peer after a retry
    ("I0101 10:00:00.000 c_gen_nccl_id_op.cc:100] gen nccl id done", None),
    (
        "Socket connect worker 10.0.0.2:6170 failed, try again after 3 seconds.\n"
        "I0101 10:00:03.000 nccl_context.cc:80] init nccl context nranks: 2 local rank: 0",
        "RUN222",
    ),
    # TensorFlow's master waiting, then the session starts (the person's shell after it changes nothing)
    (
        "CreateSession still waiting for response from worker: /job:ps/replica:0/task:0\n"
        "I master_session.cc:1150] Start master session 2d0b with config:\n$ kubectl get pods",
        "RUN221",
    ),
    # the NCCL system error alone, a port clash of a web app in prose
    (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled "
        "system error, NCCL version 2.10.3",
        "RUN223",
    ),
    # detectron2's launcher calling the user's main (its error is the user's), not the re-raise
    (
        _D2_STACK.format(path="/src/detectron2/engine/launch.py", line=126, src="main_func(*args)"),
        "RUN221",
    ),
    # titles: the hang after the meeting, a setting, a question, a finished set-up, a timeout setting
    ("Training hangs after init_process_group completes", "RUN221"),
    ("init_process_group completes and then hangs", "RUN221"),
    ("How to avoid hangs in init_process_group", None),
    ("set timeout to avoid stuck init_process_group", None),
    ("setup_dist finished in 3 s", None),
    ("socket timeout set to 30 seconds", None),
    ("Socket timeout 600s", None),
    # Swift with as many processes as GPUs, DeepSpeed's own MPS note
    ("ValueError: DeepSpeed is not compatible with MP. n_gpu: 8, local_world_size: 8.", "RUN224"),
    ("DeepSpeed is not compatible with MPS, disabling it.", None),
    # Flower's client that connected after a retry, a paste that ends in the state
    (
        _FLWR.format(lvl="DEBUG", name="flwr", ms="002", ln=39, state="TRANSIENT_FAILURE")
        + "\n"
        + _FLWR.format(lvl="DEBUG", name="flwr", ms="900", ln=39, state="READY")
        + "\nDEBUG flwr 2023-05-02 10:09:00,000 | connection.py:113 | gRPC channel closed",
        None,
    ),
    (_FLWR.format(lvl="DEBUG", name="flwr", ms="002", ln=39, state="TRANSIENT_FAILURE"), None),
    # OneFlow's placement printed
    ("placement: oneflow.placement(type='cuda', ranks=[0, 1])", None),
]


@pytest.mark.parametrize(("log", "not_code"), S23_NEAR)
def test_s23_near_misses(log: str, not_code: Optional[str]) -> None:
    if not_code is None:
        assert failure_findings(log + "\n") == [], log
    else:
        assert all(f.code != not_code for f in failure_findings(log + "\n")), (log, _root(log + "\n"))


def test_s23_http_store_retries_stay_behind_a_death() -> None:
    log = (
        "[1]<stderr>:Fatal Python error: Segmentation fault\n"
        "[0]<stderr>:[2021-06-07 11:51:58.1: E horovod/common/gloo/http_store.cc:96] HTTP GET request "
        "failed too many times, aborting. See exception message above.\n"
    )
    root = _root(log)
    assert root is not None and root.code != "RUN222", root
