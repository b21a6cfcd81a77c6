"""stack_fit families (rules/stack_fit.py) and two driver_env rows of other modules, read at their sources:

- ray python/ray/util/collective/collective.py (1.x-2.x): logger.warning("NCCL seems unavailable. Please
  install Cupy following the guide at: ..."), 2.4x's HCCL group "HCCL seems unavailable. Please install
  torch_npu ...": RUN334;
- lmdeploy src/turbomind/comm/device_comm.cc (0.7+): TM_CHECK(0) << "Unknown communication backend: " <<
  backend (older FT_CHECK_WITH_INFO "Unknown communication backend: %s"): RUN334;
- torch/csrc/distributed/c10d/ProcessGroup.hpp getBackend (2.x): TORCH_CHECK(false, "No backend type
  associated with device type ", deviceType) for xpu / npu / hpu (cpu stays the caller's mistake): RUN334;
- deepspeed/comm/comm.py (0.6+): assert ... 'DeepSpeed backend not set, please initialize it using
  init_process_group()': RUN334;
- xla/python/local_client.cc / xla/pjrt: "executable is built for device %s of type \"%s\"; cannot run it on
  device %s of type \"%s\"": RUN335;
- UCX ucs/debug "Caught signal 11 (Segmentation fault: ...)" + "==== backtrace" frames, glog's "PC: @ 0x..
  MPI_Init" / "*** SIGSEGV (@0x0) received by PID N": a crash inside MPI (RUN336); every SIGFPE wording
  (UCX, torch elastic's "Signal 8 (SIGFPE) received by PID", faulthandler, bash, glog, c10's handler,
  torch.distributed.launch's "died with <Signals.SIGFPE: 8>", the kernel's "trap divide error"): RUN336;
- libtpu through jax: "TPU initialization failed:" at the end of its line (the TPU_RET_CHECK that follows on
  the next line): RUN333 (rules/accel_env.py);
- NCCL transport/p2p.cc (2.1x-2.2x p2pMap/p2pImportShareableBuffer) and transport.cc:15x: "Cuda failure
  'invalid argument'": CUDA IPC refused between the ranks' GPUs, RUN292 (rules/nccl_platform.py).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "(RayWorkerWrapper pid=1234) ", "[1,0]<stderr>:"]

CASES = [
    (
        "(TaskRunner pid=2211) NCCL seems unavailable. Please install Cupy following the guide at: "
        "https://docs.cupy.dev/en/stable/install.html.",
        "RUN334",
        {"backend": "nccl", "package": "Cupy"},
    ),
    (
        "WARNING collective.py:51 -- HCCL seems unavailable. Please install torch_npu following the guide "
        "at: https://gitcode.com/Ascend/pytorch and ensure libhccl.so is available.",
        "RUN334",
        {"backend": "hccl", "package": "torch_npu"},
    ),
    (
        "[TM][FATAL] comm\\device_comm.cc(28): Check failed: 0 Unknown communication backend: nccl",
        "RUN334",
        {"backend": "nccl"},
    ),
    (
        "[FT][ERROR] Unknown communication backend: cuda_ipc",
        "RUN334",
        {"backend": "cuda_ipc"},
    ),
    ("RuntimeError: No backend type associated with device type xpu", "RUN334", {"device_type": "xpu"}),
    ("RuntimeError: No backend type associated with device type npu", "RUN334", {"device_type": "npu"}),
    ("RuntimeError: No backend type associated with device type hpu", "RUN334", {"device_type": "hpu"}),
    (
        "AssertionError: DeepSpeed backend not set, please initialize it using init_process_group()",
        "RUN334",
        {"framework": "deepspeed"},
    ),
    (
        "E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:731] Execution of replica "
        '1 failed: Invalid argument: executable is built for device CUDA:0 of type "TITAN V"; cannot run it '
        'on device CUDA:1 of type "Quadro K2200"',
        "RUN335",
        {"device_type": "TITAN V", "other_device_type": "Quadro K2200"},
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: executable is built for device CUDA:0 of "
        'type "NVIDIA A100-SXM4-40GB"; cannot run it on device CUDA:1 of type "NVIDIA A10"',
        "RUN335",
        {"other_device": "CUDA:1"},
    ),
    ("Caught signal 8 (Floating point exception: integer divide by zero)", "RUN336", {"signal": "SIGFPE"}),
    ("  traceback : Signal 8 (SIGFPE) received by PID 52782", "RUN336", {"signal": "SIGFPE", "pid": 52782}),
    ("Fatal Python error: Floating point exception", "RUN336", {"signal": "SIGFPE"}),
    (
        "run.sh: line 7: 31337 Floating point exception (core dumped) python train.py",
        "RUN336",
        {"pid": 31337},
    ),
    (
        "*** SIGFPE (@0x7f3a1c2b) received by PID 811 (TID 0x7f3) from PID 0; stack trace: ***",
        "RUN336",
        {"pid": 811},
    ),
    (
        "subprocess.CalledProcessError: Command '['python', 'train.py']' died with <Signals.SIGFPE: 8>.",
        "RUN336",
        {"signal": "SIGFPE"},
    ),
    (
        "kernel: traps: python[4242] trap divide error ip:7f00 sp:7ffd error:0 in "
        "libcublasLt.so.12[7f00+1000]",
        "RUN336",
        {"library": "libcublasLt.so.12"},
    ),
    (
        "jax.errors.JaxRuntimeError: INTERNAL: TPU initialization failed:\nTPU_RET_CHECK failure\n"
        "(learning/45eac/tpu/runtime/hal/tpu_hal.cc:229)",
        "RUN333",
        {"accelerator": "tpu"},
    ),
    (
        "node1:30344:30344 [0] transport/p2p.cc:298 NCCL WARN Cuda failure 'invalid argument'\n"
        "node1:30344:30344 [0] NCCL INFO transport/p2p.cc:352 -> 1",
        "RUN292",
        {"feature": "p2p_ipc"},
    ),
    ("transport.cc:154 NCCL WARN Cuda failure 'invalid argument'", "RUN292", {"feature": "p2p_ipc"}),
    # paddle install_check.py 1.x / 2.x warnings after the multi-device run failed (read by
    # device_comm_faults.py as a communicator set-up failure)
    (
        "2020-09-17 15:38:44,634-WARNING: Your Paddle has some problem with multiple GPU. This may be caused "
        "by:",
        "RUN313",
        {"framework": "paddle"},
    ),
    (
        "[2025-08-06 15:19:58,671] [ WARNING] install_check.py:289 - PaddlePaddle meets some problem with 3 "
        "GPUs. This may be caused by:",
        "RUN313",
        {"framework": "paddle"},
    ),
    # PMIx 3.x src/mca/common/dstore (dstore_segment.c, dstore_base.c)
    (
        "[host:3252493] PMIX ERROR: OUT-OF-RESOURCE in file ../../../../../../src/mca/common/dstore/"
        "dstore_segment.c at line 207",
        "RUN336",
        {"library": "pmix", "file": "dstore_segment.c", "line": 207},
    ),
    # pyxis_slurmstepd.c's slurm_error lines; libnvidia-container's binary as Debian packages name it
    (
        "slurmstepd: error: pyxis: container start failed with error code: 1",
        "RUN262",
        {"reason": "container_start_failed", "exit_code": 1},
    ),
    ("slurmstepd: error: pyxis: couldn't start container", "RUN262", {"reason": "container_start_failed"}),
    (
        "stderr: nvidia-container-cli.real: initialization error: driver error: failed to process request: "
        "unknown",
        "RUN262",
        {"reason": "container_runtime"},
    ),
    # xgboost src/learner.cc (1.x) and src/context.cc (2.x)
    (
        "[18:42:50] WARNING: ../src/learner.cc:222: No visible GPU is found, setting `gpu_id` to -1",
        "RUN262",
        {"framework": "xgboost"},
    ),
    (
        "[10:01:02] WARNING: /workspace/src/context.cc:196: No visible GPU is found, setting device to CPU.",
        "RUN262",
        {"reason": "no_visible_device"},
    ),
    (
        "xgboost.core.XGBoostError: [10:01:02] ../src/gbm/gbtree.cc:620: XGBoost version not compiled with "
        "GPU support.",
        "RUN262",
        {"reason": "cpu_build_of_xgboost"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CASES)
def test_stack_fit_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    log = "\n".join(prefix + ln for ln in line.split("\n")) + "\n"
    _check(log, code, facts)


MPI_UCX = """[node1:35296:0:35296] Caught signal 11 (Segmentation fault: address not mapped to object)
==== backtrace (tid:  35296) ====
 0 0x0000000000042520 __sigaction()  ???:0
 1 0x000000000006c4e4 PMPI_Comm_rank()  /build-result/src/hpcx-v2.16/ompi/mpi/c/profile/pcomm_rank.c:41
 2 0x00000000000a1234 tensorrt_llm::mpi::MpiComm::getRank()  ???:0
"""
MPI_GLOG = """*** Aborted at 1557498358 (unix time) try "date -d @1557498358" if you are using GNU date ***
PC: @     0x7fc207023ce9 MPI_Init
*** SIGSEGV (@0x0) received by PID 24365 (TID 0x7fc258781dc0) from PID 0; stack trace: ***
    @     0x7fc206b23890 (unknown)
    @     0x7fc207023ce9 MPI_Init
    @     0x55e840a60f50 fl::distributedInit()
Segmentation fault (core dumped)
"""
NOT_MPI = """[node1:35296:0:35296] Caught signal 11 (Segmentation fault: address not mapped to object)
==== backtrace (tid:  35296) ====
 0 0x0000000000042520 __sigaction()  ???:0
 1 0x000000000006c4e4 ncclProxyProgress()  /src/proxy.cc:41
"""


def test_segfault_inside_mpi() -> None:
    _check(MPI_UCX, "RUN336", {"signal": "SIGSEGV", "frame": "PMPI_Comm_rank"})
    _check(MPI_GLOG, "RUN336", {"signal": "SIGSEGV", "frame": "MPI_Init"})


def test_segfault_elsewhere_stays_a_crash() -> None:
    root = _root(NOT_MPI)
    assert root is not None and root.code != "RUN336"


def test_dataloader_sigfpe_is_not_the_stack() -> None:
    root = _root(
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Floating point exception.\n"
    )
    assert root is not None and root.code != "RUN336"


def test_cpu_tensor_on_nccl_group_stays_usage() -> None:
    root = _root("RuntimeError: No backend type associated with device type cpu\n")
    assert root is None or root.code != "RUN334"


# UCX's handler over cuBLASLt's heuristic (the H20 / cu121 family, wzzheng/StreamVGGT#10, vllm#2798), and
# glog's over another library's frame (ArrayFire's evalNodes on bad data, flashlight/wav2letter#384).
FPE_CUBLAS = """[host:176055:0:176055] Caught signal 8 (Floating point exception: integer divide by zero)
==== backtrace (tid: 176055) ====
 0 0x0000000000042520 __sigaction()  ???:0
 1 0x0000000000ada71e cublasLt_for_cublas_ZZZ()  ???:0
 2 0x00000000007b13a4 cublasLtMatmulAlgoGetHeuristic()  ???:0
"""
FPE_OTHER = """PC: @     0x7ff4a0a1fd29 cuda::evalNodes<>()
*** SIGFPE (@0x7ff4a0a1fd29) received by PID 18764 (TID 0x7ff4e3a4fdc0) from PID 1844; stack trace: ***
    @     0x7ff4e293a390 (unknown)
    @     0x7ff4a0a1fd29 cuda::evalNodes<>()
    @     0x7ff4a0a20537 cuda::evalNodes<>()
"""


def test_sigfpe_in_cublas_is_the_stack() -> None:
    _check(FPE_CUBLAS, "RUN336", {"signal": "SIGFPE", "frame": "cublasLt_for_cublas_ZZZ"})


def test_sigfpe_in_another_frame_is_that_codes_crash() -> None:
    root = _root(FPE_OTHER)
    assert root is None or root.code != "RUN336"
