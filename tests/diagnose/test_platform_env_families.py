"""driver_env families of the platform around the job, read at their sources:

- Slurm's MUNGE auth (src/plugins/auth/munge/auth_munge.c, slurm_protocol_api.c, 17.x-23.x): "Munge encode
  failed: ...", "If munged is up, restart with --num-threads=10", "auth_g_create: REQUEST_... has
  authentication error", "Munge decode failed: Invalid credential / Expired credential", "Protocol
  authentication error" (RUN374, rules/platform_env.py);
- POSIX-only pieces on native Windows (Python's availability notes; torchpack 0.3 launch/launchers/
  drunner.py os.execve('/bin/sh', ...); Lib/multiprocessing/context.py "cannot find context for 'fork'"):
  RUN375;
- NVSHMEM 2.x-3.x src/modules/transport/ibrc/ibrc.cpp nvshmemt_init: "neither nv_peer_mem, or nvidia_peermem
  detected. Skipping transport." (RUN385);
- c10d GlooDeviceFactory.cpp (torch 1.x-2.x, strings of libtorch_cpu.so 2.x): "makeDeviceForHostname():
  unsupported gloo device", "makeDeviceForInterface(): ..." (RUN334, rules/stack_fit.py);
- ChainerMN 7.8.1 communicators/non_cuda_aware_communicator.py, CuPy 13.3 cupyx/distributed/_init.py and
  cupy/cuda/__init__.py's _UnavailableModule('cupy.cuda.nccl') (RUN334);
- nvidia-docker 1.0 CheckCUDAVersion: "Error: unsupported CUDA version: driver 8.0 < image 9.0.176" (RUN261,
  rules/driver_stack.py);
- NCCL 2.1-2.3 transport/p2p.cu and 2.4+ transport/p2p.cc: "failed to open CUDA IPC handle : 30 unknown
  error" (cudaIpcOpenMemHandle answering cudaErrorUnknown; 999 since CUDA 10.1): RUN292.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank1]: ", "node7: ", "[1,0]<stderr>:", "(RayWorkerWrapper pid=1234) "]

SLURM_CASES = [
    (
        'srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or '
        "directory\nsrun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has "
        "authentication error",
        {"reason": "munged_unreachable"},
    ),
    ("srun: error: If munged is up, restart with --num-threads=10", {"scheduler": "slurm"}),
    (
        "sbatch: error: Munge encode failed: Munged communication error\nsbatch: error: Batch job submission "
        "failed: Protocol authentication error",
        {"reason": "munged_unreachable"},
    ),
    (
        "srun: error: Munge decode failed: Invalid credential\nsrun: error: Unable to allocate resources: "
        "Protocol authentication error",
        {"reason": "munge_key_mismatch"},
    ),
    ("salloc: error: Munge decode failed: Rewound credential", {"reason": "clock_skew"}),
    (
        "srun: error: slurm_receive_msg: auth_g_verify: REQUEST_JOB_STEP_CREATE has authentication error: "
        "Invalid authentication credential",
        {"rpc": "REQUEST_JOB_STEP_CREATE"},
    ),
    ("srun: error: Unable to allocate resources: Protocol authentication error", {"auth": "munge"}),
]


@pytest.mark.parametrize("prefix", ["", "node7: "])
@pytest.mark.parametrize("log,facts", SLURM_CASES)
def test_slurm_auth_family(prefix: str, log: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), "RUN374", facts)


WIN_TB = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\me\\.conda\\envs\\bev\\lib\\runpy.py", line 194, in _run_module_as_main\n'
    "    return _run_code(code, main_globals, None,\n"
    '  File "C:\\Users\\me\\.conda\\envs\\bev\\lib\\site-packages\\torchpack\\launch\\launchers\\'
    'drunner.py", line 104, in main\n'
    "    os.execve('/bin/sh', ['/bin/sh', '-c', command], environ)\n"
)

WINDOWS_CASES = [
    (WIN_TB + "FileNotFoundError: [Errno 2] No such file or directory: '/bin/sh'", {"missing": "/bin/sh"}),
    (
        WIN_TB + "FileNotFoundError: [Errno 2] No such file or directory: '/bin/bash'",
        {"missing": "/bin/bash"},
    ),
    ("ModuleNotFoundError: No module named 'fcntl'", {"missing_module": "fcntl"}),
    ("ModuleNotFoundError: No module named 'resource'", {"missing_module": "resource"}),
    ("ImportError: No module named 'pwd'", {"missing_module": "pwd"}),
    ("AttributeError: module 'signal' has no attribute 'SIGKILL'", {"missing_attribute": "signal.SIGKILL"}),
    ("AttributeError: module 'signal' has no attribute 'SIGUSR1'", {"missing_attribute": "signal.SIGUSR1"}),
    ("AttributeError: module 'os' has no attribute 'setsid'", {"missing_attribute": "os.setsid"}),
    ("AttributeError: module 'os' has no attribute 'fork'", {"missing_attribute": "os.fork"}),
    ("ValueError: cannot find context for 'fork'", {"missing_attribute": "fork"}),
    ("ValueError: cannot find context for 'forkserver'", {"missing_attribute": "forkserver"}),
    ("AttributeError: module 'socket' has no attribute 'AF_UNIX'", {"missing_attribute": "socket.AF_UNIX"}),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log,facts", WINDOWS_CASES)
def test_posix_only_on_windows_family(prefix: str, log: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.split("\n")), "RUN375", {"platform": "windows", **facts})


BACKEND_CASES = [
    ("RuntimeError: makeDeviceForHostname(): unsupported gloo device", {"backend": "gloo"}),
    ("RuntimeError: makeDeviceForInterface(): unsupported gloo device", {"backend": "gloo"}),
    (
        "UserError: User program failed with RuntimeError: NCCL is not available. Please confirm that NCCL "
        "is enabled in CuPy.",
        {"library": "cupy"},
    ),
    ("RuntimeError: NCCL is not available", {"library": "cupy"}),
    ("AttributeError: '_UnavailableModule' object has no attribute 'NcclCommunicator'", {"library": "cupy"}),
    ("AttributeError: '_UnavailableModule' object has no attribute 'get_unique_id'", {"library": "cupy"}),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,facts", BACKEND_CASES)
def test_backend_not_built_family(prefix: str, line: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", "RUN334", facts)


OTHER_CASES = [
    (
        "/home/nvshmem_src/src/modules/transport/ibrc/ibrc.cpp:nvshmemt_init:1851: neither nv_peer_mem, or "
        "nvidia_peermem detected. Skipping transport.",
        "RUN385",
        {"engine": "NVSHMEM", "transport": "ibrc"},
    ),
    (
        "nvidia-docker | 2017/12/20 13:08:46 Error: unsupported CUDA version: driver 8.0 < image 9.0.176",
        "RUN261",
        {"required_cuda": "9.0.176", "driver_cuda": "8.0"},
    ),
    (
        "node205:10645:10653 [0] transport/p2p.cu:431 WARN failed to open CUDA IPC handle : 30 unknown error",
        "RUN292",
        {"feature": "p2p_ipc"},
    ),
    (
        "host1:4167:5269 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 999 unknown "
        "error",
        "RUN292",
        {"feature": "p2p_ipc"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", OTHER_CASES)
def test_platform_other_families(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    _check(prefix + line + "\n", code, facts)


QUIET = [
    # a Linux image without a shell is not Windows: not RUN375
    "FileNotFoundError: [Errno 2] No such file or directory: '/bin/sh'",
    "srun: error: Munge authentication is configured",
    "INFO: module 'os' provides setsid on Linux",
    "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)",
    "torch.distributed.elastic.multiprocessing.redirects: [WARNING] NOTE: Redirects are currently not "
    "supported in Windows or MacOs.",
]


@pytest.mark.parametrize("line", QUIET)
def test_platform_quiet(line: str) -> None:
    root = _root(line + "\n")
    assert root is None or root.code not in ("RUN374", "RUN375", "RUN385"), root
