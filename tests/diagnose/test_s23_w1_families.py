"""w1 of 2026-12-07 (late; test_w1_families.py is an earlier session's w1): driver_env misses of v21's
held-out and v22's dev halves, each read as its family (the program that prints it, across versions and
wrappers). The variants below are not in the corpus unless marked (case id).

- Paddle's launcher guessing the mode on a CPU-only wheel (python/paddle/distributed/fleet/launch.py): 1.8
  "Not found distinct arguments and not compiled with cuda. Default use ps mode", 2.0-2.1 "... or xpu"
  (v21H-006), "... or xpu or npu": RUN262 like the wheel's other CPU-build texts (rules/paddle_runtime.py);
  2.2+'s "But found args.servers not empty" (a CPU job that asked for servers) and the GPU wheel's "compiled
  with cuda or xpu. Default use collective mode" stay silent.
- A launcher older than its flags ("launch.py: error: unrecognized arguments: --rdzv_endpoint=..."
  v21H-007; --standalone, --max_restarts, torchrun's --local-ranks-filter / --logs-specs): RUN650 (new,
  rules/env_versions.py); a script's own parser rejecting --local-rank and the dash spelling of an old flag
  stay silent.
- cuRAND's statuses of the environment, by number ("CuRAND error 204 at test/include/test_utilities.h:112"
  v21E-002) or by name (CuPy's CURANDError): 204 / 106 RUN265, 100 RUN296; 201 (a launch failure), "-lcurand"
  and package names stay silent.
- MXNet's launcher without its dmlc_tracker submodule ("Can't load dmlc_tracker package." v22B-002, the
  ImportError of Python 2 and 3): RUN389; the tracker's own frames stay silent.
- A launcher's "command not found" in a person's words ("torchrun command not found error when launching on
  multi-nodes" v22G-002, "Deepspeed Command Not Found", "'accelerate' command not found"): RUN389
  (rules/launch_env.py); "torchrun not found in PATH, falling back ..." and "python command not found" stay
  silent.
- A hang titled on GeForce RTX 40-series boards ("Deadlock in distribution with multiple 4090" v22G-001,
  "NCCL hangs on 2x RTX 4090", "多卡4090训练卡住"): RUN590 (rules/hang_titles.py); an OOM, a timeout, a
  start-up or a data-loader hang on them, a 3090, a port 4090 and a step 4090 are not.
- XLA's "NCCL operation ncclCommInitRank(comm.get(), nranks, id, rank) failed: unhandled cuda error"
  (v21C-001): the call's arguments hold a call of their own; read as the communicator's creation, RUN313, like
  Horovod's "ncclCommInitRank failed:" (rules/nccl_errors.py); a collective's call stays RUN194.
- A title naming a failure of NCCL or the multi-GPU job on WSL ("Unhandled NCCL error when running on WSL2
  with CUDA" v21E-003): RUN651 (new); an OOM on WSL, a question and a title without a failure are not.
- dask distributed 2023.4+'s get_worker() under a library's Client.run function (raft_dask's get_ucx
  v22H-003, cugraph's get_handle, cuml's comms): RUN652 (new); the user's own call stays unread here.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (log, code, category)
FAILURES = [
    # Paddle's launcher on a CPU-only wheel
    (
        "WARNING 2021-06-09 10:59:28,075 launch.py:352] Not found distinct arguments and not compiled with "
        "cuda "
        "or xpu. Default use ps mode",
        "RUN262",
        "driver_env",
    ),
    (
        "WARNING 2020-06-09 10:59:28,075 launch.py:252] Not found distinct arguments and not compiled with "
        "cuda. Default use ps mode",
        "RUN262",
        "driver_env",
    ),
    (
        "Not found distinct arguments and not compiled with cuda or xpu or npu. Default use ps mode",
        "RUN262",
        "driver_env",
    ),
    # launchers older than their flags
    ("launch.py: error: unrecognized arguments: --rdzv_endpoint=localhost:29400", "RUN650", "driver_env"),
    ("launch.py: error: unrecognized arguments: --standalone", "RUN650", "driver_env"),
    ("launch.py: error: unrecognized arguments: --max_restarts=3 --rdzv_id=42", "RUN650", "driver_env"),
    ("run.py: error: unrecognized arguments: --local-ranks-filter=0", "RUN650", "driver_env"),
    ("torchrun: error: unrecognized arguments: --logs-specs=my_specs", "RUN650", "driver_env"),
    # cuRAND
    (" CuRAND error 204 at test/include/test_utilities.h:112", "RUN265", "driver_env"),
    ("cupy_backends.cuda.libs.curand.CURANDError: CURAND_STATUS_ARCH_MISMATCH", "RUN265", "driver_env"),
    ("RuntimeError: CURAND_STATUS_DOUBLE_PRECISION_REQUIRED", "RUN265", "driver_env"),
    ("CURAND error: 100 at main.cu:55", "RUN296", "driver_env"),
    ("RuntimeError: HIPRAND_STATUS_ARCH_MISMATCH", "RUN265", "driver_env"),
    ("rocrand error: ROCRAND_STATUS_VERSION_MISMATCH at generator.hip:41", "RUN296", "driver_env"),
    ("CURAND failure, status 204 in generator.cu line 88", "RUN265", "driver_env"),
    # MXNet's launcher without dmlc_tracker
    (
        "Can't load dmlc_tracker package.  Perhaps you need to run\n"
        "    git submodule update --init --recursive",
        "RUN389",
        "driver_env",
    ),
    ("ModuleNotFoundError: No module named 'dmlc_tracker'", "RUN389", "driver_env"),
    ("ImportError: No module named dmlc_tracker", "RUN389", "driver_env"),
    # a launcher not found, in a person's words
    ("torchrun command not found error when launching on multi-nodes", "RUN389", "driver_env"),
    ("Torchrun Command Not Found on the worker node", "RUN389", "driver_env"),
    ("deepspeed command not found after pip install deepspeed", "RUN389", "driver_env"),
    ("'accelerate' command not found", "RUN389", "driver_env"),
    # hangs on GeForce RTX 40-series boards
    ("[BUG] Deadlock in distribution with multiple 4090", "RUN590", "driver_env"),
    ("NCCL hangs on 2x RTX 4090", "RUN590", "driver_env"),
    ("DDP training freezes with 4 RTX 4080 SUPER GPUs", "RUN590", "driver_env"),
    ("多卡4090训练卡住", "RUN590", "driver_env"),
    ("Training stuck at first all_reduce on 8x4090", "RUN590", "driver_env"),
    ("Training hangs on 4090s", "RUN590", "driver_env"),
    ("Multi-GPU training hangs with 4090 GPUs", "RUN590", "driver_env"),
    # the communicator's creation under XLA's and Horovod's wrappers
    (
        "2022-06-29 12:36:12.905032: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/"
        "pjrt_stream_executor_client.cc:2129] Execution of replica 0 failed: INTERNAL: "
        "external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nccl_utils.cc:245:\n"
        " NCCL operation ncclCommInitRank(comm.get(), nranks, id, rank) failed: unhandled cuda error",
        "RUN313",
        "driver_env",
    ),
    (
        "INTERNAL: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error",
        "RUN313",
        "driver_env",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: NCCL operation ncclCommInitRank(comm.get(), nranks, "
        "id, rank) failed: unhandled cuda error",
        "RUN313",
        "driver_env",
    ),
    # WSL titles
    ("Unhandled NCCL error when running on WSL2 with CUDA (tested w/o apex)", "RUN651", "driver_env"),
    ("NCCL error: unhandled system error on WSL 2", "RUN651", "driver_env"),
    ("DDP with NCCL backend fails under WSL2", "RUN651", "driver_env"),
    ("[Bug] multi-GPU training crashes on WSL2", "RUN651", "driver_env"),
]

_DASK_STACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/distributed/worker.py", line 3288, in run\n'
    "    result = function(*args, **kwargs)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/{lib}/{path}", line 85, in {fn}\n'
    "    state = get_state(sID, get_worker())\n"
    '  File "/opt/conda/lib/python3.10/site-packages/distributed/worker.py", line 2714, in get_worker\n'
    '    raise ValueError("No worker found") from None\n'
    "ValueError: No worker found"
)
DASK_LIBS = [
    ("raft_dask", "common/comms.py", "get_ucx"),
    ("cugraph", "dask/comms/comms.py", "get_handle"),
    ("cuml", "dask/common/comms.py", "_func_init_all"),
]

SILENT = [
    # Paddle: servers given on a CPU wheel, and the GPU wheel
    "WARNING 2022-01-01 10:00:00,000 launch.py:422] Not found distinct arguments and not compiled with cuda "
    "or xpu. But found args.servers not empty, default use ps mode",
    "WARNING 2021-06-09 10:59:28,075 launch.py:352] Not found distinct arguments and compiled with cuda or "
    "xpu. Default use collective mode",
    # a script's own parser; the dash spelling of an old flag
    "train.py: error: unrecognized arguments: --local-rank=0",
    "launch.py: error: unrecognized arguments: --local_rank=0",
    # cuRAND texts that name no environment
    " CuRAND error 201 at test/include/test_utilities.h:112",
    "[3/3] c++ cpu_adam.o -shared -lcurand -L/usr/local/cuda/lib64",
    "Requirement already satisfied: nvidia-curand-cu12==10.3.2.106 in /usr/lib/python3/dist-packages",
    "CURAND_STATUS_SUCCESS",
    "HIPRAND_STATUS_LAUNCH_FAILURE",
    # the tracker running
    'File "/home/slave/mxnet/tools/../dmlc-core/tracker/dmlc_tracker/ssh.py", line 76, in submit',
    # not a launcher missing
    "torchrun not found in PATH, falling back to python -m torch.distributed.run",
    "python command not found",
    # 40-series lines that are not a hang of the boards' P2P
    "NCCL init hangs on RTX 4090",
    "Dataloader hangs on 4090 with num_workers > 0",
    "server stuck listening on port 4090",
    "Training stuck at step 4090",
    "NCCL INFO P2P is disabled between connected GPUs 0 and 1. You can repress this message with "
    "NCCL_IGNORE_DISABLED_P2P=1.",
    # WSL without a failure of NCCL / the job
    "How to run NCCL on WSL2?",
    "NCCL works on WSL2 after the driver update",
    "NCCL error on Ubuntu 22.04",
]

# Lines whose cause is another class's and must stay so with the rows above in place.
OTHERS = [
    ("4卡4090 训练qwen2-7b-instruct时报错CUDA out of memory", "cuda_oom"),
    ("CUDA out of memory on WSL2", "cuda_oom"),
    ("NCCL timeout on 8x 4090", "collective_timeout"),
    # not a 40-series board: DDP's hang is read as its collectives' (hang_titles' DDP row), not RUN590
    ("DDP hangs with 2x RTX 3090", "collective_timeout"),
    ("torchrun: error: unrecognized arguments: --nproc-per-node=1", None),  # v21A-other_ambiguous-003
    (
        "INTERNAL: NCCL operation ncclAllReduce(send_buffer, recv_buffer, element_count, dtype, reduce_op, "
        "comm, gpu_stream) failed: unhandled cuda error",
        "nccl_usage",
    ),
]


@pytest.mark.parametrize(("log", "code", "category"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str, category: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == category, (log, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize(("line", "category"), OTHERS)
def test_other_classes_keep_their_lines(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert (root.category if root else None) == category, (line, root)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_launcher_flag_behind_every_prefix(prefix: str) -> None:
    log = (
        "usage: launch.py [-h] [--nnodes NNODES] [--node_rank NODE_RANK] [--nproc_per_node NPROC_PER_NODE]\n"
        "launch.py: error: unrecognized arguments: --rdzv_backend=c10d --rdzv_endpoint=localhost:29400"
    )
    check_root(prefixed(prefix, log), "RUN650", {"launcher": "launch.py", "flag": "--rdzv_backend"})


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_curand_behind_every_prefix(prefix: str) -> None:
    check_root(
        prefixed(prefix, " CuRAND error 204 at test/include/test_utilities.h:112"),
        "RUN265",
        {"status": "CURAND_STATUS_ARCH_MISMATCH", "status_code": 204},
    )


@pytest.mark.parametrize(("lib", "path", "fn"), DASK_LIBS)
@pytest.mark.parametrize("prefix", ["", "2023-09-20 10:11:12,345 - distributed.worker - WARNING - "])
def test_dask_get_worker_in_a_library(prefix: str, lib: str, path: str, fn: str) -> None:
    log = _DASK_STACK.format(lib=lib, path=path, fn=fn)
    check_root(prefixed(prefix, log), "RUN652", {"library": lib, "function": fn})


def test_dask_get_worker_in_the_users_code_is_not_a_version() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/jobs/score.py", line 12, in <module>\n'
        "    w = get_worker()\n"
        '  File "/opt/conda/lib/python3.10/site-packages/distributed/worker.py", line 2714, in get_worker\n'
        '    raise ValueError("No worker found") from None\n'
        "ValueError: No worker found\n"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN652", root


def test_paddle_launch_then_ps_launcher_cut() -> None:
    log = (
        "WARNING 2021-06-09 10:59:28,075 launch.py:352] Not found distinct arguments and not compiled with "
        "cuda "
        "or xpu. Default use ps mode\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.7/site-packages/paddle/distributed/fleet/launch.py", line 289, '
        "in launch_ps\n"
        "    ps_launcher = ParameterServerLauncher(args, distribute_mode)\n"
    )
    check_root(log, "RUN262", {"reason": "cpu_build_of_paddle"})
