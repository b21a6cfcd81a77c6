"""A bare NCCL "unhandled cuda error" (ncclUnhandledCudaError, no CUDA error text of its own) raised while
the communicator was being created is the environment (RUN313, driver_env); the same wording anywhere else
stays NCCL's own CUDA failure (RUN194). The init sites, read at their sources:

- Horovod's nccl_operations.cc and TensorFlow's NcclManager print "<call> failed: <ncclGetErrorString>"
  ("ncclCommInitRank failed: unhandled cuda error");
- XLA's nccl_utils.cc / nccl_clique.cc print "NCCL operation ncclCommInitRank(&comm, nranks, id, rank)
  failed: unhandled cuda error" (2023-2024; ncclCommInitRankConfig / ncclCommInitAll in other releases);
- Paddle's platform/collective_helper.cc (NCCLCommContext::CreateComm) raises "Nccl error, unhandled cuda
  error (at .../collective_helper.cc:N)" (1.8-2.x: "NCCL error(1), unhandled cuda error.") under
  init_parallel_env / _init_parallel_ctx; fluid's ParallelExecutor builds its NCCLContextMap in its
  constructor (nccl_helper.h).
torch's ProcessGroupNCCL creates communicators lazily in the first collective and its message names no
call, so its bare wording stays RUN194.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding

INIT = [
    (
        "horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled cuda error\n",
        "ncclCommInitRank",
    ),
    (
        "UnknownError (see above for traceback): ncclCommInitRank failed: unhandled cuda error\n"
        "\t [[Node: HorovodAllreduce_gradients_0 = HorovodAllreduce[T=DT_FLOAT]()]]\n",
        "ncclCommInitRank",
    ),
    (
        "2024-03-01 10:20:11.257981: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2593] Execution "
        "of replica 3 failed: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation "
        "ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error\n",
        "ncclCommInitRank",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_clique.cc:151: "
        "NCCL operation ncclCommInitRankConfig(&comm, nranks, id, rank, &config) failed: unhandled cuda "
        "error\n",
        "ncclCommInitRankConfig",
    ),
    (
        "OSError: (External)  Nccl error, unhandled cuda error  "
        "(at /paddle/paddle/fluid/platform/collective_helper.cc:100)\n",
        "collective_helper.cc",
    ),
    (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    dist.init_parallel_env()\n"
        '  File "/usr/lib/python3.8/site-packages/paddle/distributed/parallel.py", line 315, in '
        "init_parallel_env\n"
        "    parallel_helper._init_parallel_ctx()\n"
        "OSError: (External) NCCL error(1), unhandled cuda error.\n",
        "init_parallel_env",
    ),
    (
        '  File "/usr/local/lib/python2.7/dist-packages/paddle/fluid/parallel_executor.py", line 132, in '
        "__init__\n"
        "    use_default_grad_scale)\n"
        "paddle.fluid.core.EnforceNotMet: unhandled cuda error at "
        "[/paddle/paddle/fluid/platform/nccl_helper.h:93]\n",
        "parallel_executor.py",
    ),
]


@pytest.mark.parametrize(("log", "site"), INIT)
def test_a_bare_cuda_failure_at_communicator_creation_is_the_environment(log: str, site: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN313", root
    assert root.category == "driver_env"
    assert root.facts["phase"] == "communicator_init" and root.facts["init_site"].startswith(site)


@pytest.mark.parametrize(
    "log",
    [
        # a collective of a running XLA program: its CUDA failure is NCCL's own
        "E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2432] Execution of replica 1 failed: "
        "INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call "
        "'xla.gpu.all_reduce' failed: external/xla/xla/service/gpu/nccl_all_reduce_thunk.cc:244: "
        "NCCL operation ncclGroupEnd() "
        "failed: unhandled cuda error.\n",
        "horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error\n",
        # Paddle in the middle of training (nccl_helper.h without the executor's constructor on the stack)
        "2019-07-09 18:08:16.698352, iter: 346094, lr: 0.001000, 'loss': 78.400635, time: 1.747\n"
        "terminate called after throwing an instance of 'paddle::platform::EnforceNotMet'\n"
        "  what():  unhandled cuda error at [/Paddle/paddle/fluid/platform/nccl_helper.h:70]\n",
        # torch's bare wording cannot say where the communicator was made
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:38, unhandled cuda error, "
        "NCCL version 2.7.8\n",
    ],
)
def test_the_same_failure_elsewhere_stays_nccl_s_cuda_error(log: str) -> None:
    check_root(log, "RUN194")


def test_a_named_cuda_error_at_init_keeps_its_own_code() -> None:
    # the CUDA error text decides when the log shows it (here the driver being older than the runtime)
    log = (
        "node1:2345:2345 [0] NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime "
        "version'\n"
        "horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled cuda error\n"
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN313" and root.category == "driver_env", root
