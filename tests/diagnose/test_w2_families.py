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
