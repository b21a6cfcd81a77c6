"""driver_env and rendezvous families added in session s16 (r2), read at their sources:

- torch.distributed.barrier (distributed_c10d.py 1.x): "Function argument device_ids not supported for the
  selected backend gloo" - the job fell back to gloo (native Windows, CPU) and yolov5's barrier passes
  device_ids: RUN367;
- torch/distributed/rendezvous.py on PyTorch 1.7's Windows build (file:// only): "No rendezvous handler for
  env://" / "tcp://": RUN375; an empty or unknown scheme stays RUN224;
- Slurm's step credential (src/common/slurm_errno.c "Job credential expired", "Invalid job credential",
  "Job credential replayed") after srun's "Task launch for ... failed on node ..." or "Application launch
  failed": RUN374 (driver_env); "Job credential revoked" (a cancelled job) silent; other launch errors RUN304;
- dorado's device parser ("Invalid CUDA device index ... there are N visible CUDA devices"), XLA's backend
  ("Invalid device ordinal value (1). Valid range is [0, 0]."), TensorFlow's placer ("was explicitly assigned
  to /device:GPU:1 but available devices are [...]", "Could not satisfy explicit device specification"):
  RUN264, RUN262 when no GPU is visible at all;
- torch7's cutorch / torch-ipc "cuda runtime error (38) : " wrapped before its message: RUN262;
- CPython's Windows loaders (ctypes "Could not find module '...' (or one of its dependencies)",
  dynload_win.c "DLL load failed while importing _C") under the GPU stack, and torch.ops.load_library's
  "File fbgemm_gpu_py.so not found" (fbgemm_gpu's __init__, with TorchX's "role/replica [local_rank]:"
  prefix): RUN263;
- c10d's socket.cpp on Windows "(system error: 10048 - <text in the system's language>)", Python's
  "[WinError 10048]" / localised "[Errno 98]" where the store is in sight, Ray's port plan "Ray component
  worker_ports is trying to use a port number N that is used by other components", DGL's rpc.cc "Cannot bind
  to": RUN223.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

GLOO_DEVICE_IDS = [
    ("RuntimeError: Function argument device_ids not supported for the selected backend gloo", "gloo"),
    ("RuntimeError: Function argument device_ids not supported for the selected backend mpi", "mpi"),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line,backend", GLOO_DEVICE_IDS)
def test_barrier_device_ids_on_gloo(prefix: str, line: str, backend: str) -> None:
    log = (
        '  File "E:\\\\yolov5\\\\utils\\\\torch_utils.py", line 92, in torch_distributed_zero_first\n'
        "    dist.barrier(device_ids=[local_rank])\n" + line
    )
    _check(prefixed(prefix, log), "RUN367", {"backend": backend, "argument": "device_ids"})


def test_barrier_device_ids_before_the_agent_summary() -> None:
    log = (
        "RuntimeError: Function argument device_ids not supported for the selected backend gloo\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 23812) of "
        "binary: E:\\Conda\\envs\\GoldYolo\\python.exe\n"
    )
    _check(log, "RUN367")


@pytest.mark.parametrize("scheme", ["env", "tcp"])
def test_no_rendezvous_handler_of_a_builtin_scheme_is_the_windows_build(scheme: str) -> None:
    _check(f"RuntimeError: No rendezvous handler for {scheme}://\n", "RUN375", {"reason": "windows_build"})


@pytest.mark.parametrize("scheme", ["", "localhost", "env//"])
def test_no_rendezvous_handler_of_an_unknown_scheme_stays_config(scheme: str) -> None:
    _check(f"RuntimeError: No rendezvous handler for {scheme}://\n", "RUN224")


SLURM_CREDENTIAL = [
    ("srun: error: Task launch for 36.0 failed on node cn131: Job credential expired", "cn131"),
    ("srun: error: Task launch for StepId=1234.0 failed on node gpu-01: Invalid job credential", "gpu-01"),
    ("srun: error: Task launch for StepId=7.0 failed on node n3: Job credential replayed", "n3"),
    ("srun: error: Application launch failed: Job credential expired", None),
]


@pytest.mark.parametrize("line,host", SLURM_CREDENTIAL)
def test_slurm_step_credential_refused(line: str, host: str) -> None:
    facts = {"job_credential": line.rsplit(": ", 1)[1]}
    if host:
        facts["host"] = host
    _check(line + "\n", "RUN374", facts)


def test_slurm_credential_revoked_of_a_cancelled_job_is_silent() -> None:
    assert (
        _root("srun: error: Task launch for StepId=9.0 failed on node n1: Job credential revoked\n") is None
    )


def test_slurm_other_task_launch_errors_stay_launch_failed() -> None:
    _check(
        "srun: error: Task launch for StepId=100.0 failed on node a1: Invalid node name specified\n", "RUN304"
    )


INDEX_BEYOND = [
    (
        '[error] Invalid CUDA device index "1" from device string ,1,2, there are 1 visible CUDA devices.',
        "RUN264",
        {"requested_device": 1, "visible_gpus": 1},
    ),
    (
        '[error] Invalid CUDA device index "0" from device string cuda:0, there are 0 visible CUDA devices.',
        "RUN262",
        {"requested_device": 0, "visible_gpus": 0},
    ),
    (
        "RuntimeError: Invalid device ordinal value (1). Valid range is [0, 0].",
        "RUN264",
        {"requested_device": 1, "visible_gpus": 1},
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Invalid device ordinal value (3). Valid range "
        "is [0, 1].",
        "RUN264",
        {"requested_device": 3, "visible_gpus": 2},
    ),
    (
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation "
        "MatMul: node MatMul (defined at train.py:12) was explicitly assigned to /device:GPU:1 but available "
        "devices are [ /job:localhost/replica:0/task:0/device:CPU:0, /job:localhost/replica:0/task:0/device:GPU:0 "
        "]. Make sure the device specification refers to a valid device.",
        "RUN264",
        {"requested_device": 1, "visible_gpus": 1},
    ),
    (
        "InvalidArgumentError: Cannot assign a device for operation a: node a was explicitly assigned to "
        "/device:GPU:0 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure "
        "the device specification refers to a valid device. The requested device appears to be a GPU, but CUDA "
        "is not enabled.",
        "RUN262",
        {"requested_device": 0, "visible_gpus": 0},
    ),
    (
        "InvalidArgumentError: Could not satisfy explicit device specification '/device:GPU:3' because no "
        "devices matching that specification are registered in this process; available devices: "
        "/job:localhost/replica:0/task:0/device:CPU:0, /job:localhost/replica:0/task:0/device:GPU:0",
        "RUN264",
        {"requested_device": 3, "visible_gpus": 1},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "node7: ", "(RayWorkerWrapper pid=1234) "])
@pytest.mark.parametrize("line,code,facts", INDEX_BEYOND)
def test_device_index_beyond_the_visible_ones(prefix: str, line: str, code: str, facts: dict) -> None:
    _check(prefix + line + "\n", code, facts)


@pytest.mark.parametrize("number", [38, 100])
def test_torch7_cuda_runtime_error_wrapped_before_its_message(number: int) -> None:
    log = (
        f"/home/ubuntu/torch/install/share/lua/5.1/ipc/Tree.lua:36: cuda runtime error ({number}) : \n"
        "no CUDA-capable device is detected at /home/ubuntu/torch-ipc/src/cliser.c:235\n"
    )
    _check(log, "RUN262")


WINDOWS_LOADERS = [
    (
        "FileNotFoundError: Could not find module 'C:\\Users\\me\\miniconda3\\Lib\\site-packages\\torch\\lib\\"
        "nccl.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
        "nccl.dll",
    ),
    (
        '  File "C:\\Users\\me\\anaconda3\\lib\\site-packages\\torch\\__init__.py", line 81, in <module>\n'
        "    from torch._C import *\n"
        "ImportError: DLL load failed while importing _C: The specified module could not be found.",
        "_C",
    ),
    (
        '  File "C:\\Python37\\lib\\site-packages\\torch\\__init__.py", line 79, in <module>\n'
        "    from torch._C import *\n"
        "ImportError: DLL load failed: The specified procedure could not be found.",
        "a DLL",
    ),
]


@pytest.mark.parametrize("log,lib", WINDOWS_LOADERS)
def test_windows_loader_of_the_gpu_stack(log: str, lib: str) -> None:
    _check(log + "\n", "RUN263", {"library": lib})


def test_windows_loader_outside_the_gpu_stack_is_not_the_platform() -> None:
    log = (
        '  File "C:\\Python310\\lib\\site-packages\\PIL\\Image.py", line 100, in <module>\n'
        "    from . import _imaging as core\n"
        "ImportError: DLL load failed while importing _imaging: The specified module could not be found.\n"
    )
    root = _root(log)
    assert root is None or root.code != "RUN263", root


@pytest.mark.parametrize("prefix", ["", "dlrm_main/0 [0]:", "trainer/1 [3]:"])
def test_load_library_file_not_found(prefix: str) -> None:
    _check(prefix + "File fbgemm_gpu_py.so not found\n", "RUN263", {"library": "fbgemm_gpu_py.so"})


WINDOWS_STORE_IN_USE = [
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "The server socket has failed to bind to [DESKTOP-1]:29500 (system error: 10048 - 通常每个套接字地址(协议/网络"
    "地址/端口)只允许使用一次。).",
    "[W socket.cpp:663] [c10d] The server socket has failed to bind to [AIEDX-AsusTUF]:29400 (system error: 10048 "
    "- Only one usage of each socket address (protocol/network address/port) is normally permitted.).\n"
    "RuntimeError: The server socket has failed to listen on any local network address.",
    "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
    "failed to bind to [::]:29500 (errno: 98 - Adresse bereits in Verwendung). The server socket has failed to "
    "bind to 0.0.0.0:29500 (errno: 98 - Adresse bereits in Verwendung).",
]


@pytest.mark.parametrize("log", WINDOWS_STORE_IN_USE)
def test_store_port_in_use_in_windows_and_localised_words(log: str) -> None:
    _check(log + "\n", "RUN223")


PYTHON_IN_USE = [
    "OSError: [WinError 10048] Only one usage of each socket address (protocol/network address/port) is normally "
    "permitted",
    "OSError: [WinError 10048] 通常每个套接字地址(协议/网络地址/端口)只允许使用一次。",
    "OSError: [Errno 98] Adresse déjà utilisée",
]


@pytest.mark.parametrize("line", PYTHON_IN_USE)
def test_python_port_in_use_near_the_store(line: str) -> None:
    log = (
        '  File "C:\\Python\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 176, in '
        "_create_c10d_store\n    return TCPStore(\n" + line + "\n"
    )
    _check(log, "RUN223")


@pytest.mark.parametrize("line", PYTHON_IN_USE)
def test_python_port_in_use_of_a_web_app_is_not_the_store(line: str) -> None:
    log = '  File "C:\\app\\gradio\\blocks.py", line 2100, in launch\n    server.run()\n' + line + "\n"
    root = _root(log)
    assert root is None or root.category != "rendezvous", root


def test_ray_port_plan_clash() -> None:
    log = (
        "ValueError: Ray component worker_ports is trying to use a port number 16379 that is used by other "
        "components.\nPort information: {'gcs': 16379, 'worker_ports': '10002-19999'}\n"
    )
    _check(log, "RUN223", {"port": 16379, "component": "worker_ports"})


@pytest.mark.parametrize("src", ["rpc/rpc.cc:48", "rpc/network/socket_communicator.cc:240"])
def test_dgl_cannot_bind(src: str) -> None:
    _check(
        f"dgl._ffi.base.DGLError: [09:17:54] /opt/dgl/src/{src}: Cannot bind to 127.0.0.1:30050\n", "RUN223"
    )


@pytest.mark.parametrize(
    "line",
    [
        "[rank0]: ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): adresse déjà "
        "utilisée",
        "[rank0]: zmq.error.ZMQError: [Errno 98] Die Adresse wird bereits verwendet (addr='tcp://*:5555')",
    ],
)
def test_a_ranks_web_server_or_queue_port_in_other_words_is_not_the_meeting(line: str) -> None:
    root = _root(line + "\n")
    assert root is None or root.category != "rendezvous", root


# The other accelerators' runtime and collective libraries, as the dynamic loader names them (ROCm's torch
# wheels link libamdhip64, RCCL, MIOpen, hipBLAS(Lt), roctx; torch_npu libhccl / libascendcl; Intel's Level
# Zero loader and oneCCL): RUN263 like CUDA's.
ACCEL_LIBS = [
    "libamdhip64.so.5",
    "librccl.so.1",
    "libhsa-runtime64.so.1",
    "libMIOpen.so.1",
    "libhipblaslt.so.0",
    "libroctx64.so.4",
    "libhccl.so",
    "libascendcl.so",
    "libze_loader.so.1",
    "libccl.so.1",
]


@pytest.mark.parametrize("lib", ACCEL_LIBS)
@pytest.mark.parametrize("exc", ["ImportError", "OSError"])
def test_accelerator_library_missing(lib: str, exc: str) -> None:
    _check(
        f"{exc}: {lib}: cannot open shared object file: No such file or directory\n",
        "RUN263",
        {"library": lib},
    )


def test_accelerator_library_missing_in_a_warning_is_silent() -> None:
    log = "UserWarning: Failed to load libamdhip64.so.5: cannot open shared object file: No such file or directory\n"
    assert _root(log) is None


ADDR_NOT_AVAIL = [
    # dgl-ke's dist_train probing this host's interfaces (SIOCGIFADDR on one without IPv4)
    '  File "miniconda3/envs/dgl/lib/python3.7/site-packages/dglke/dist_train.py", line 63, in local_ip4_addr_list\n'
    "    struct.pack('256s', name[:15].encode(\"UTF-8\")))[20:24])\n"
    "OSError: [Errno 99] Cannot assign requested address",
    # a store bound to a MASTER_ADDR that is not this host's
    '  File "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", line 176, in _create_c10d_store\n'
    "    return TCPStore(\n"
    "OSError: [Errno 99] Cannot assign requested address",
    "[rank1]: OSError: [Errno 99] Cannot assign requested address",
]


@pytest.mark.parametrize("log", ADDR_NOT_AVAIL)
def test_address_not_this_hosts(log: str) -> None:
    _check(log + "\n", "RUN222", {"errno": 99})


def test_address_not_available_of_a_lone_app_is_not_the_store() -> None:
    log = '  File "/app/server.py", line 3, in run\n    sock.bind((host, port))\nOSError: [Errno 99] Cannot assign requested address\n'
    root = _root(log)
    assert root is None or root.category != "rendezvous", root


# YOLOv5 < 6.0 / YOLOv3 select_device (utils/torch_utils.py): "assert torch.cuda.is_available(), f'CUDA
# unavailable, invalid device {device} requested'" - no usable GPU at all: RUN262.
@pytest.mark.parametrize("device", ["0", "0,1", "1,2,3"])
@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "node7: "])
def test_yolov5_cuda_unavailable(device: str, prefix: str) -> None:
    line = f"AssertionError: CUDA unavailable, invalid device {device} requested"
    _check(prefix + line + "\n", "RUN262", {"requested_gpus": device, "cuda_available": False})


def test_yolov5_cuda_unavailable_under_its_traceback() -> None:
    log = (
        '  File "/content/yolov5/utils/torch_utils.py", line 39, in select_device\n'
        "    assert torch.cuda.is_available(), f'CUDA unavailable, invalid device {device} requested'\n"
        "AssertionError: CUDA unavailable, invalid device 0 requested\n"
    )
    _check(log, "RUN262")


# Open MPI btl/vader (opal/mca/btl/vader/btl_vader_get.c / _put.c, 2.x-4.x): "Read %ld, expected %lu, errno =
# %d" / "Wrote %ld, expected %lu, errno = %d" when process_vm_readv / writev (CMA) moved fewer bytes: RUN368.
CMA = [
    ("[1,1]<stderr>:[edc6f559242d:00026] Read -1, expected 36864, errno = 1", 1, 36864),
    ("[edc6f559242d:00026] Wrote -1, expected 131072, errno = 1", 1, 131072),
    ("[node1:12345] Read -1, expected 4194304, errno = 14", 14, 4194304),
]


@pytest.mark.parametrize("line,errno,size", CMA)
def test_open_mpi_cma_copy_refused(line: str, errno: int, size: int) -> None:
    _check(line + "\n", "RUN368", {"errno": errno, "bytes": size})


def test_open_mpi_cma_fallback_warning_is_silent() -> None:
    log = (
        "WARNING: Linux kernel CMA support was requested via the\n"
        "btl_vader_single_copy_mechanism MCA variable, but CMA support is\n"
        "not available due to restrictive ptrace settings.\n"
    )
    assert _root(log) is None


# MindSpore's GPU collective (collective_init.cc): "Loading libgpu_collective.so failed. Many reasons could
# cause this:" (its NCCL / MPI wrapper could not be opened): RUN263.
def test_mindspore_collective_library_not_loaded() -> None:
    log = (
        "E           RuntimeError: mindspore/ccsrc/device/gpu/distribution/collective_init.cc:35 InitCollective] "
        "Loading libgpu_collective.so failed. Many reasons could cause this:\n"
        "E           1.libgpu_collective.so is not installed.\n"
        "E           2.nccl is not installed or found.\n"
    )
    _check(log, "RUN263", {"library": "libgpu_collective.so"})
