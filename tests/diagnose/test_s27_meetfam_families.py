"""meetfam of 2026-12-08 (s27): rendezvous_init / process_killed misses read as their families, at their
sources across versions. The variants below are not in the corpus unless marked (case id).

- torch.distributed before c10d (THD, torch/distributed/__init__.py 0.2-0.4, torch/distributed/deprecated/
  in 1.0): "AssertionError: collective only supported in process-group mode" (v13r-rendezvous_init-004) and
  the bare "assert torch.distributed._initialized" of get_rank / get_world_size as the raising frame's source
  line (v22D-rendezvous_init-002, 1.0's deprecated package): RUN224 (rules/rdzv_setup.py); the assert quoted
  outside a traceback stays silent.
- torch elastic's SignalException retyped ("Process 81061 got sigval:1", v22B-process_killed-006): the agent
  was told to stop, RUN133 with its signal (rules/launcher.py).
- The shell's "Killed" as a title's subject with its condition ("`Killed` if I use FSDPTrainer or
  TensorParallelTrainer", v22C-process_killed-004): RUN121 (rules/killed_titles.py); a question, a person's
  kill and a kill that names another cause stay as they were.
- SageMaker's FailureReason naming another _CalledProcessError-shaped class than ExecuteUserScriptError
  ("AlgorithmError: SMDDPError:" then "ExitCode 134", v22E-process_killed-001): the exit status read as
  the script's (rules/cloud_jobs.py).
- JAX's distributed runtime before the coordination service (xla/pjrt/distributed service.cc / client.cc,
  jaxlib 0.1.6x-0.4.x): "Timed out after 5m0s waiting for all nodes to call Connect()" / "EnumerateDevices()"
  RUN221, "Connect() timed out after 0 with 1 attempts. Most recent failure was: UNAVAILABLE: Socket closed"
  RUN222, "ABORTED: Duplicate node ID 1" and "Invalid node ID 4, must be in the range [0, 4)" RUN224
  (rules/coordination_service.py); JAX's "Unable to initialize backend 'cuda': DEADLINE_EXCEEDED:
  GetKeyValue() timed out with key: cuda:local_topology/cuda/1" is the topology exchange's rendezvous
  (RUN221), not a driver (rules/driver_env.py leaves it); its backend failures of the driver stay RUN262.
- MosaicML streaming's wait for local rank 0 (streaming/base/util.py wait_for_local_leader: "RuntimeError:
  Waiting for local rank 0, bailing out: 60.000 < 60.033 sec.", v18C-rendezvous_init-005): RUN221
  (rules/rdzv_setup.py), the rank that gave up not taken for rank 0; the helper's download waits stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

_XLA = "jaxlib.xla_extension.XlaRuntimeError: "
_BACKEND = "RuntimeError: Unable to initialize backend 'cuda': DEADLINE_EXCEEDED: "

# (log, code, facts)
FAILURES = [
    # THD: the assertion's message (https://github.com/pytorch/pytorch/issues/7092)
    ("AssertionError: collective only supported in process-group mode", "RUN224", {}),
    (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 80, in <module>\n'
        "    dist.all_reduce(t)\n"
        '  File "/usr/lib/python3.6/site-packages/torch/distributed/__init__.py", line 324, in all_reduce\n'
        "    assert torch.distributed._initialized == _INITIALIZED_PG, \\\n"
        "AssertionError: collective only supported in process-group mode",
        "RUN224",
        {"package": "torch.distributed (THD)"},
    ),
    # the bare assert as the last frame's source line, the paste cut there
    # (https://github.com/facebookresearch/maskrcnn-benchmark/issues/540)
    (
        "Traceback (most recent call last):\n"
        '  File "tools/train_net.py", line 169, in main\n'
        "    model = train(cfg, args.local_rank, args.distributed)\n"
        '  File "/home/u/maskrcnn_benchmark/data/samplers/distributed.py", line 30, in __init__\n'
        "    num_replicas = dist.get_world_size()\n"
        '  File "/home/u/envs/py36/lib/python3.6/site-packages/torch/distributed/deprecated/__init__.py", '
        "line 177, in get_world_size\n"
        "    assert torch.distributed.deprecated._initialized",
        "RUN224",
        {"problem": "default process group not initialized"},
    ),
    # 0.3/0.4's get_rank, followed by its empty AssertionError
    (
        '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/__init__.py", line 156, '
        "in get_rank\n"
        "    assert torch.distributed._initialized\n"
        "AssertionError",
        "RUN224",
        {},
    ),
    # elastic's SignalException, retyped (https://github.com/zai-org/ChatGLM2-6B/issues/262)
    (
        'raise SignalException(f"Process {os.getid()} got signal : {sigval}" ,sigval=sigval)\n'
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got sigval:1",
        "RUN133",
        {"signal": "SIGHUP"},
    ),
    (
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got signal : 15",
        "RUN133",
        {},
    ),
    (
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got signal: 1",
        "RUN133",
        {},
    ),
    # the shell's word and its condition in a title
    # (https://github.com/eric-mitchell/direct-preference-optimization/issues/11)
    ("`Killed` if I use FSDPTrainer or TensorParallelTrainer", "RUN121", {"read_as": "title"}),
    ('"Killed" with 8 GPUs and deepspeed zero3', "RUN121", {"read_as": "title"}),
    ("Killed at step 1200 of the first epoch", "RUN121", {"read_as": "title"}),
    # SageMaker (https://github.com/aws/sagemaker-training-toolkit/pull/185)
    (
        "UnexpectedStatusException: Error for Training job vit-fsdp-2023-06-14-22-27-25-988: Failed. Reason: "
        "AlgorithmError: SMDDPError:\nExitCode 134\nErrorMessage \"raise exceptions.SMDDPError('Error')",
        "RUN131",
        {"exit_code": 134, "signal": "SIGABRT"},
    ),
    (
        "UnexpectedStatusException: Error for Training job llm-2024-01-01: Failed. Reason: AlgorithmError: "
        'ExecuteUserScriptError:\nExitCode 137\nErrorMessage ""',
        "RUN121",
        {"exit_code": 137},
    ),
    # JAX's distributed runtime before the coordination service
    (
        _XLA + "DEADLINE_EXCEEDED: Timed out after 5m0s waiting for all nodes to call Connect()",
        "RUN221",
        {"call": "Connect", "timeout": "5m0s"},
    ),
    (
        "RuntimeError: DEADLINE_EXCEEDED: Timed out after 300s waiting for all nodes to call "
        "EnumerateDevices()",
        "RUN221",
        {"call": "EnumerateDevices"},
    ),
    # (https://github.com/alpa-projects/alpa/issues/826)
    (
        _XLA + "DEADLINE_EXCEEDED: Connect() timed out after 0 with 1 attempts. "
        "Most recent failure was: UNAVAILABLE: Socket closed",
        "RUN222",
        {"attempts": 1},
    ),
    (
        _XLA + "DEADLINE_EXCEEDED: Connect() timed out after 0 with 1 attempts.",
        "RUN221",
        {},
    ),
    (_XLA + "ABORTED: Duplicate node ID 1", "RUN224", {"node_id": 1}),
    (
        _XLA + "FAILED_PRECONDITION: Invalid node ID 4, must be in the range [0, 4)",
        "RUN224",
        {"node_id": 4},
    ),
    # the backend's topology exchange through the service
    (
        _BACKEND + "GetKeyValue() timed out with key: cuda:local_topology/cuda/1 and duration: 2m "
        "(you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this "
        "backend.)",
        "RUN221",
        {"key": "cuda:local_topology/cuda/1"},
    ),
    (
        _BACKEND + "Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names:\n"
        "/job:jax_worker/replica:0/task:1",
        "RUN221",
        {"ranks": [1]},
    ),
    # the backend's driver failures stay the driver's
    (
        "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.",
        "RUN262",
        {},
    ),
    # MosaicML streaming's local leader (https://github.com/mosaicml/examples/issues/292)
    (
        "RuntimeError: Waiting for local rank 0, bailing out: 60.000 < 60.033 sec.",
        "RUN221",
        {"framework": "mosaicml-streaming", "timeout_s": 60.0, "waited_for_rank": 0},
    ),
    (
        "[rank3]: RuntimeError: Waiting for local rank 0, bailing out: 60.000 < 61.2 sec.",
        "RUN221",
        {"rank": 3},
    ),
]

SILENT = [
    # the THD assert quoted as source, not under a frame
    "    assert torch.distributed._initialized",
    "def get_rank():\n    assert torch.distributed._initialized\n    return torch._C._dist_get_rank()",
    # a title that asks, a person's kill, another cause
    "Killed if I use FSDPTrainer?",
    "Killed with SIGTERM when the job hits its time limit",
    # streaming's download wait, same helper
    "RuntimeError: Index file /tmp/x/index.json took too long to download. Either increase the "
    "`download_timeout` value or check the other traceback., bailing out: 60.000 < 60.100 sec.",
    # the distributed runtime's words as a setting or a log of its success
    "Connect() timed out after 5m0s is the default; set initialization_timeout to change it?",
    "I0101 00:00:00.000000 1234 service.cc:123] Connect node 1: all nodes connected",
    # SageMaker's reason for a job that was stopped, no exit status
    "UnexpectedStatusException: Error for Training job x: Stopped. Reason: AlgorithmError: Stopped by user",
]


@pytest.mark.parametrize(("log", "code", "facts"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str, facts: dict[str, object]) -> None:
    check_root(log, code, facts)


@pytest.mark.parametrize("log", SILENT)
def test_near_misses_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None, (log, root)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_thd_assertion_behind_every_prefix(prefix: str) -> None:
    check_root(prefixed(prefix, "AssertionError: collective only supported in process-group mode"), "RUN224")


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_signal_exception_behind_every_prefix(prefix: str) -> None:
    log = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 81061 got sigval:1"
    check_root(prefixed(prefix, log), "RUN133", {"signal": "SIGHUP"})
