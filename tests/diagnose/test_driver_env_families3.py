"""Driver/environment families read at their sources (third set), every variant under the prefixes real
logs add. Each group names the source that prints its lines:

- torch/__init__.py's _preload_cuda_deps (pip wheels with nvidia-* packages): "ValueError: libcublas.so.*[0-9]
  not found in the system path [...]";
- torch/cuda/__init__.py's get_device_properties ("AssertionError: Invalid device id"), and a traceback cut in
  torch's CUDA set-up (_lazy_init, set_device) or vLLM's init_device before its exception line;
- c10/cuda/CUDACachingAllocator.cpp's reportProcessMemoryInfo, which runs only to word an out-of-memory
  error: "NVML_SUCCESS == r INTERNAL ASSERT FAILED" (cuda_oom, the NVML failure hides the OOM message);
- cudart's 801 (cudaErrorNotSupported) as torch, its driver-API check and CUDA libraries print it (RUN307);
  200 "device kernel image is invalid" (Triton's bundled ptxas newer than the driver, RUN261); nccl-tests'
  CUDACHECK with "initialization error";
- NCCL's CUDACHECK / CUCHECK texts decided per text (checks.h "Cuda failure '%s'", cudawrap.h "Cuda failure
  %d '%s'", also as torch's "Last error:"): the environment's texts go where they say, a bare unhandled CUDA
  error stays NCCL usage;
- the container runtime (Docker's "Unknown runtime specified nvidia", nvidia-container-cli's initialization /
  mount errors) and kubelet's device manager (nvidia.com/gpu allocation);
- XLA / TensorFlow's stream executor ("Loaded runtime CuDNN library: X but source was compiled with: Y") and
  JAX's raised backend failure ("RuntimeError: Unable to initialize backend 'cuda': ...");
- ptxas and nvcc's host-compiler check, torch.utils.cpp_extension's "Error building extension";
- framework device checks: Ultralytics' select_device, YOLOv5's, transformers' quantizers.

Decoys that healthy runs print stay silent: TensorFlow/XLA's import-time cuInit probe and factory
registration lines, dso_loader's W-level dlerror, "Can't initialize NVML", torch's deprecation warnings for
NCCL_* variables, DeepSpeed's op report, JAX's CPU fallback warnings.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, prefixed
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = LAUNCHER_PREFIXES
TB = TRACEBACK_HEAD
HEALTHY = "\nEpoch 1/3: 100%|##########| 500/500 [01:00<00:00, loss=0.412]\nEpoch 2/3: 100%|##########| 500/500 [01:00<00:00, loss=0.388]\nTraining finished."
NCCL_TAIL = "\nRuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled cuda error, NCCL version 2.14.3\nncclUnhandledCudaError: Call to CUDA function failed."
NCCL_LAST = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"


# (log, code, facts) under every prefix.
CASES: list[tuple[str, str, Optional[dict[str, Any]]]] = [
    # torch/__init__.py _preload_cuda_deps: the glob of each nvidia-* wheel's library, 1.13-2.x
    (
        TB
        + "  File \"/usr/local/lib/python3.10/dist-packages/torch/__init__.py\", line 190, in _preload_cuda_deps\n    raise ValueError(f\"{lib_name} not found in the system path {sys.path}\")\nValueError: libcublas.so.*[0-9] not found in the system path ['/workspace', '/usr/lib/python310.zip', '/usr/lib/python3.10']",
        "RUN263",
        {"library": "libcublas.so"},
    ),
    (
        TB + "ValueError: libnvrtc.so.*[0-9].* not found in the system path ['', '/usr/lib/python3.10']",
        "RUN263",
        {"library": "libnvrtc.so"},
    ),
    (
        TB
        + "ValueError: libnvJitLink.so.*[0-9] not found in the system path ['/opt/conda/lib/python311.zip']",
        "RUN263",
        {"library": "libnvJitLink.so"},
    ),
    # torch.cuda.get_device_properties: an index at or beyond device_count()
    (
        TB
        + '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 341, in get_device_properties\n    raise AssertionError("Invalid device id")\nAssertionError: Invalid device id',
        "RUN264",
        None,
    ),
    # c10 reportProcessMemoryInfo: the OOM message's NVML query failed (Jetson, MIG, containers)
    (
        TB
        + 'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1154, please report a bug to PyTorch. ',
        "RUN101",
        {"reason": "oom_report_failed"},
    ),
    # cudart 801 through torch, its driver-API check, CUDA libraries (RUN307)
    (
        TB
        + "RuntimeError: CUDA error: operation not supported\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "RUN307",
        {"cuda_error_number": 801},
    ),
    (TB + "torch.AcceleratorError: CUDA error: operation not supported", "RUN307", None),
    (TB + "RuntimeError: CUDA driver error: operation not supported", "RUN307", None),
    (
        "[TM][ERROR] CUDA runtime error: operation not supported /lmdeploy/src/turbomind/utils/allocator.h:197",
        "RUN307",
        None,
    ),
    (
        TB
        + "RuntimeError: CUDA error encountered at: /workspace/.conda-bld/work/cpp/src/bitmask/null_mask.cu:93: 801 cudaErrorNotSupported operation not supported",
        "RUN307",
        None,
    ),
    # cudart 200 (Triton's cuModuleLoadData of a ptxas image newer than the driver)
    (TB + "RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "RUN261", None),
    (TB + "RuntimeError: CUDA error: device kernel image is invalid", "RUN261", None),
    # nccl-tests' CUDACHECK with the generic init text
    (
        "# Using devices\nnode1: Test CUDA failure common.cu:892 'initialization error'\n .. node1 pid 1234: Test failure common.cu:1000",
        "RUN262",
        None,
    ),
    # cuDNN 9's loader of its own parts
    (
        "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\nInvalid handle. Cannot load symbol cudnnCreateTensorDescriptor\nAborted (core dumped)",
        "RUN263",
        None,
    ),
    (
        "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\nInvalid handle. Cannot load symbol cudnnCreateTensorDescriptor",
        "RUN263",
        None,
    ),
    # torch/cuda/__init__.py _lazy_init in a forked child (RUN308), raised and as vLLM's worker record quotes it
    (
        TB
        + "  File \"/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py\", line 293, in _lazy_init\n    raise RuntimeError(\nRuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method",
        "RUN308",
        {"reason": "cuda_in_forked_process"},
    ),
    (
        "ERROR 09-29 11:48:12 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess while processing method init_device: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method, Traceback (most recent call last):\nERROR 09-29 11:48:12 multiproc_worker_utils.py:226]   File \"/home/tiger/.local/lib/python3.9/site-packages/vllm/executor/multiproc_worker_utils.py\", line 223, in _run_worker_process",
        "RUN308",
        None,
    ),
    # ROCm: rocBLAS without Tensile kernels for this gfx target
    (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1103\n Aborted (core dumped)",
        "RUN265",
        {"arch": "rocm"},
    ),
    # kmod's modprobe: the driver's module not built for the running kernel
    ("modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.15.0-91-generic", "RUN262", None),
    (
        "modprobe: FATAL: Module nvidia_uvm not found in directory /lib/modules/6.8.0-45-generic",
        "RUN262",
        None,
    ),
    # the container runtime and the device plugin
    ("docker: Error response from daemon: Unknown runtime specified nvidia.", "RUN262", None),
    ("unknown flag: --gpus\nSee 'docker run --help'.", "RUN262", None),
    (
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: driver rpc error: timed out: unknown.",
        "RUN262",
        {"reason": "container_runtime"},
    ),
    (
        "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/1f2e/merged/usr/bin/nvidia-smi: file exists: unknown.",
        "RUN262",
        None,
    ),
    (
        "Warning  UnexpectedAdmissionError  pod/train-0  Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 8, Available: 7, which is unexpected",
        "RUN262",
        {"requested_gpus": 8, "available": 7},
    ),
    # XLA / TF cuDNN check; JAX's raised backend failure
    (
        "2024-01-01 10:00:00.123456: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version.\n"
        + TB
        + "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
        "RUN296",
        {"runtime_cudnn": "8.6.0", "built_cudnn": "8.9.4"},
    ),
    (
        TB
        + "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)",
        "RUN262",
        {"framework": "jax"},
    ),
    (
        TB
        + "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)",
        "RUN262",
        None,
    ),
    (
        "E0911 00:16:18.000000  4242 cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized\n"
        + TB
        + "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA",
        "RUN262",
        {"reason": "system_not_ready"},
    ),
    (
        "E0101 10:00:00.000000 1234 pjrt_stream_executor_client.cc:100] Failed to create stream executor for device CUDA:0: CUDA_ERROR_OUT_OF_MEMORY\n"
        + TB
        + "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA (you may need to uninstall the failing plugin package)",
        "RUN101",
        None,
    ),
    (
        TB
        + "RuntimeError: Unable to initialize backend 'cuda': Found CUDA version 12010, but JAX was built against version 12020, which is newer. The copy of CUDA that is installed must be at least as new as the version against which JAX was built.",
        "RUN296",
        None,
    ),
    (
        TB
        + "RuntimeError: Unable to initialize backend 'cuda': Backend 'cuda' is not in the list of known backends: ['cpu', 'tpu']",
        "RUN263",
        None,
    ),
    (
        TB
        + "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
        "RUN296",
        {"reason": "dnn_init_failed"},
    ),
    (
        "2024-01-01 10:00:00.123456: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n2024-01-01 10:00:00.123456: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:451] Memory usage: 4915200 bytes free, 25425608704 bytes total.\n"
        + TB
        + "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
        "RUN101",
        {"reason": "dnn_init_no_memory"},
    ),
    # flash-attn's and vLLM's GPU checks, flash-attn's nvcc check
    (
        TB + "RuntimeError: Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
        "RUN265",
        {"arch": "flash_attn"},
    ),
    (
        TB + "RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
        "RUN265",
        {"arch": "flash_attn"},
    ),
    (
        TB
        + "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by running nvcc -V.",
        "RUN296",
        None,
    ),
    # ptxas / nvcc host compiler / the extension build
    (
        TB
        + "RuntimeError: Internal Triton PTX codegen error: \nptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'",
        "RUN296",
        None,
    ),
    ("ptxas fatal   : Unsupported .version 8.4; current version is '8.2'", "RUN296", None),
    (
        "/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 11 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. Use at your own risk.\n"
        + TB
        + "RuntimeError: Error building extension 'fused_adam'",
        "RUN296",
        None,
    ),
    (
        TB
        + "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line 2100, in _run_ninja_build\n    raise RuntimeError(message) from e\nRuntimeError: Error building extension 'cpu_adam'",
        "RUN296",
        {"extension": "cpu_adam"},
    ),
    # the companions' CUDA check (torchvision's template: torchaudio, PyG's extensions)
    (
        TB
        + "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch has CUDA version 13.0 whereas TorchAudio has CUDA version 12.6. Please install the TorchAudio version that matches your PyTorch version.",
        "RUN296",
        None,
    ),
    (
        TB
        + "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different CUDA versions. PyTorch has CUDA version 11.8 and torch_scatter has CUDA version 11.7. Please reinstall the torch_scatter that matches your PyTorch install.",
        "RUN296",
        None,
    ),
    # Triton's libcuda lookup under torch.compile
    (
        TB
        + "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nAssertionError: libcuda.so cannot found!\nPossible files are located at ['/usr/lib64-nvidia/libcuda.so.1'].Please create a symlink of libcuda.so to any of the files.",
        "RUN263",
        {"library": "libcuda.so"},
    ),
    # NCCL's own version checks (init.cc 2.23+: ranks of different NCCL; dev_runtime.cc 2.28+)
    (
        "gpu1:1234:1234 [0] init.cc:775 NCCL WARN Mismatched NCCL version detected : rank 0 version 22304 rank 8 version 22105"
        + NCCL_TAIL.replace("unhandled cuda error", "invalid usage"),
        "RUN195",
        None,
    ),
    # a JIT extension whose build failed, loaded (DeepSpeed's ops)
    (
        TB
        + "ImportError: /root/.cache/torch_extensions/py310_cu124/fused_adam/fused_adam.so: cannot open shared object file: No such file or directory",
        "RUN296",
        {"extension": "fused_adam"},
    ),
    # a PyTorch without the backend or without torch.distributed (distributed_c10d, Lightning, old builds)
    (
        TB
        + "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch from source on a host that has MPI installed.",
        "RUN263",
        {"library": "MPI"},
    ),
    (
        TB + "RuntimeError: torch.distributed is not available. Cannot initialize distributed process group",
        "RUN263",
        {"library": "torch.distributed"},
    ),
    (
        TB + "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'",
        "RUN263",
        {"library": "torch.distributed"},
    ),
    # frameworks' own device checks
    (
        "    raise ValueError(\nValueError: Invalid CUDA 'device=0,1' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): False\ntorch.cuda.device_count(): 0\nos.environ['CUDA_VISIBLE_DEVICES']: None\nSee https://pytorch.org/get-started/locally/ for up-to-date torch install instructions if no CUDA devices are seen by torch.",
        "RUN262",
        {"reason": "no_visible_device"},
    ),
    (
        "ValueError: Invalid CUDA 'device=2,3' requested. Use 'device=cpu' or pass valid CUDA device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): True\ntorch.cuda.device_count(): 2\nos.environ['CUDA_VISIBLE_DEVICES']: 0,1",
        "RUN264",
        {"visible_gpus": 2},
    ),
    (
        TB
        + "AssertionError: Invalid CUDA '--device 0,1,2,3' requested, use '--device cpu' or pass valid CUDA device(s)",
        "RUN264",
        None,
    ),
    (TB + "RuntimeError: No GPU found. A GPU is needed for quantization.", "RUN262", None),
    # torchrun --nproc-per-node=gpu (distributed/run.py), DeepSpeed's launcher, transformers' bf16 check
    (
        TB
        + '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 702, in determine_local_world_size\n    raise ValueError("Cuda is not available.") from e\nValueError: Cuda is not available.',
        "RUN262",
        None,
    ),
    (TB + "RuntimeError: Unable to proceed, no GPU resources available", "RUN262", None),
    (
        TB
        + "ValueError: BF16 Mixed precision training with AMP (`--bf16`) and BF16 half precision evaluation (`--bf16_full_eval`) can only be used on CUDA or CPU/TPU/NeuronCore devices.",
        "RUN262",
        None,
    ),
    # more GPUs asked for than visible: vLLM's Ray executor, DeepSpeed's launcher
    (
        TB
        + "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group.",
        "RUN264",
        None,
    ),
    (
        TB + "ValueError: num_gpus (8) cannot be more than the number of GPUs present (4)",
        "RUN264",
        {"requested_gpus": 8, "visible_gpus": 4},
    ),
    (TB + "RuntimeError: GPU is required to run AWQ quantized model.", "RUN262", None),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_driver_env_family(prefix: str, log: str, code: str, facts: Optional[dict[str, Any]]) -> None:
    _check(prefixed(prefix, log), code, facts)


# NCCL's CUDACHECK (checks.h "Cuda failure '%s'") and CUCHECK (cudawrap.h "Cuda failure %d '%s'"), raw as a
# WARN line and again as torch's "Last error:": each text goes where it says. The bare unhandled CUDA error
# and the texts that name no driver/device problem stay NCCL usage (RUN194) by the corpora's convention.
NCCL_TEXTS = [
    ("CUDA driver version is insufficient for CUDA runtime version", 35, "RUN261"),
    ("no CUDA-capable device is detected", 100, "RUN262"),
    ("system not yet initialized", 802, "RUN262"),
    ("initialization error", 3, "RUN262"),
    ("CUDA-capable device(s) is/are busy or unavailable", 46, "RUN262"),
    ("CUDA driver is a stub library", 34, "RUN262"),
    ("forward compatibility was attempted on non supported HW", 804, "RUN261"),
    ("the provided PTX was compiled with an unsupported toolchain", 222, "RUN261"),
    ("device kernel image is invalid", 200, "RUN261"),
    ("invalid device function", 98, "RUN265"),
    ("no kernel image is available for execution on the device", 209, "RUN265"),
    ("invalid device ordinal", 101, "RUN264"),
    ("peer access is not supported between these two devices", 217, "RUN291"),
    ("operation not supported", 801, "RUN292"),
    ("out of memory", 2, "RUN101"),
    ("invalid argument", 1, "RUN194"),
    ("driver shutting down", 4, "RUN194"),
]


@pytest.mark.parametrize(("text", "number", "code"), NCCL_TEXTS)
@pytest.mark.parametrize("shape", ["rt", "drv", "last"])
def test_nccl_cuda_failure_goes_where_its_text_says(text: str, number: int, code: str, shape: str) -> None:
    if shape == "rt":
        log = f"gpu1:1234:1234 [0] init.cc:1234 NCCL WARN Cuda failure '{text}'" + NCCL_TAIL
    elif shape == "drv":
        log = f"gpu1:1234:1234 [0] misc/cudawrap.cc:90 NCCL WARN Cuda failure {number} '{text}'" + NCCL_TAIL
    else:
        log = NCCL_LAST + f"Cuda failure {number} '{text}'"
    _check(log, code)


# NCCL's multi-node NVLink check (mnnvl.cc 2.25+, init.cc 2.21-2.23), raw and as torch's "Last error:"
MNNVL = [
    "gb200-n01:2048:2110 [0] transport/../mnnvl.cc:63 NCCL WARN MNNVL (cliqueSize 4) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
    "gb200-n01:2048:2110 [0] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this system. Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
    "gb200-n01:2048:2110 [0] mnnvl.cc:69 NCCL WARN MNNVL (cliqueSize 4) is available but not supported on this system. Check the IMEX configuration.",
    "gb200-n01:2048:2110 [0] init.cc:953 NCCL WARN MNNVL is not supported on this system",
    NCCL_LAST.replace("unhandled cuda error", "unhandled system error")
    + "MNNVL (cliqueSize 4) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
]


@pytest.mark.parametrize("log", MNNVL)
def test_nccl_multi_node_nvlink_refused(log: str) -> None:
    _check(log, "RUN292", {"feature": "mnnvl"})


# A traceback cut where the process sets up its GPU (torch's lazy init and device calls, vLLM's init_device):
# the driver's or the device's answer is what was raised there. Tier 2: a failure shown elsewhere leads.
CUT = [
    TB
    + '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 298, in _lazy_init\n    torch._C._cuda_init()',
    TB
    + '  File "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py", line 399, in set_device\n    torch._C._cuda_setDevice(device)',
    "ERROR 02-10 03:17:41 [multiproc_executor.py:772] WorkerProc failed to start.\n"
    "ERROR 02-10 03:17:41 [multiproc_executor.py:772] Traceback (most recent call last):\n"
    'ERROR 02-10 03:17:41 [multiproc_executor.py:772]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 569, in __init__\n'
    "ERROR 02-10 03:17:41 [multiproc_executor.py:772]     self.worker.init_device()\n"
    'ERROR 02-10 03:17:41 [multiproc_executor.py:772]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 153, in init_device\n'
    "ERROR 02-10 03:17:41 [multiproc_executor.py:772]     current_platform.set_device(self.device)",
]


@pytest.mark.parametrize("log", CUT)
def test_traceback_cut_in_gpu_set_up(log: str) -> None:
    _check(log, "RUN262", {"cut": True})


def test_traceback_cut_in_gpu_set_up_yields_to_a_shown_cause() -> None:
    log = "Failed to initialize NVML: Driver/library version mismatch\n" + CUT[0]
    _check(log, "RUN261")


def test_vllm_worker_record_of_a_failed_device_set_up() -> None:
    """vLLM's worker record alone says the worker could not set up its GPU (tier 2); with the worker's own
    message shown, that message's row leads."""
    record = "(RayWorkerWrapper pid=3052) ERROR 05-12 10:00:00 worker_base.py:145] Error executing method init_device. This might cause deadlock in distributed execution."
    _check(record, "RUN262", {"reason": "device_init_failed"})
    _check(
        record + "\n(RayWorkerWrapper pid=3052) RuntimeError: CUDA error: invalid device ordinal",
        "RUN264",
    )


def test_traceback_cut_elsewhere_stays_a_note() -> None:
    log = TB + '  File "/workspace/model.py", line 12, in forward\n    x = self.proj(x)'
    assert _root(log) is None


# What healthy runs print: silent, under every prefix.
DECOYS = [
    "2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "2021-03-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "E0000 00:00:1712345678.000000   4242 cuda_driver.cc:152] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:607] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered",
    "2023-01-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n2023-01-01 10:00:00.000000: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.",
    "W0000 00:00:1700000000.000000  1234 gpu_device.cc:2344] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.",
    "I0305 14:57:34.730122 140585066018624 xla_bridge.py:353] Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.",
    "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Found cuSPARSE version 12103, but JAX was built against version 12200, which is newer. The copy of cuSPARSE that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
    "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:619: UserWarning: Can't initialize NVML\n  warnings.warn(\"Can't initialize NVML\")",
    "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
    "[rank0]:[W Utils.hpp:164] Warning: Environment variable NCCL_BLOCKING_WAIT is deprecated; use TORCH_NCCL_BLOCKING_WAIT instead (function operator())",
    "WARNING: CUDA is not available. Falling back to CPU.",
    "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
    "2024-02-01 10:00:00.000000: W external/xla/xla/stream_executor/cuda/cuda_executor.cc:1280] could not enable peer access for context: CUDA_ERROR_NOT_SUPPORTED: operation not supported",
    "/usr/lib/python3/dist-packages/torch/cuda/memory.py:330: UserWarning: expandable_segments not supported on this platform (CUDA error: operation not supported)",
    "[2026-06-16 23:42:03,073] [WARNING] [engine.py:1690:_configure_basic_optimizer] FusedAdam CUDA build failed (Error building extension 'fused_adam'), falling back to torch.optim.AdamW / torch.optim.Adam.",
    "[2026-06-16 23:42:03,073] [WARNING] [engine.py:1690:_configure_basic_optimizer] FusedAdam CUDA build failed (/home/user/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot open shared object file: No such file or directory), falling back to torch.optim.AdamW / torch.optim.Adam.",
    "2023-09-01 10:00:00.000000: I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.",
    "/usr/lib/python3/dist-packages/torch/cuda/amp/grad_scaler.py:120: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.\n  warnings.warn(",
    "[2025-01-14 15:00:27,071] [WARNING] [real_accelerator.py:181:get_accelerator] Setting accelerator to CPU. If you have GPU or other accelerator, we were unable to detect it.",
    "GPU available: False, used: False\nTPU available: False, using: 0 TPU cores",
    # Open MPI's CUDA-aware probe (help-mpi-common-cuda.txt): MPI goes on without it
    "--------------------------------------------------------------------------\nThe library attempted to open the following supporting CUDA libraries,\nbut each of them failed.  CUDA-aware support is disabled.\nlibcuda.so.1: cannot open shared object file: No such file or directory\nlibcuda.dylib: cannot open shared object file: No such file or directory\n/usr/lib64/libcuda.so.1: cannot open shared object file: No such file or directory\nIf you are not interested in CUDA-aware support, then run with\n--mca opal_warn_on_missing_libcuda 0 to suppress this message.  If you are interested\nin CUDA-aware support, then try setting LD_LIBRARY_PATH to the location\nof libcuda.so.1 to get passed this issue.\n--------------------------------------------------------------------------",
    "2024-02-01 10:00:00.000000: W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.",
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\n    Python  3.10.13 (you have 3.10.13)\n  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n  Memory-efficient attention, SwiGLU, sparse and more won't be available.",
    '/usr/local/lib/python3.10/dist-packages/bitsandbytes/cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.\n  warn("The installed version of bitsandbytes was compiled without GPU support. "',
    "[WARNING]  async_io requires the dev libaio .so object and headers but these were not found.\n[WARNING]  async_io: please install the libaio-dev package with apt\n[WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH\n[WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.1\n[WARNING]  using untested triton version (2.1.0), only 1.0.0 is known to be compatible",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", DECOYS)
def test_healthy_run_lines_stay_silent(prefix: str, log: str) -> None:
    root = _root(prefixed(prefix, log + HEALTHY))
    assert root is None, (log, root)


def test_bare_operation_not_supported_of_a_c_library_is_not_cuda_801() -> None:
    """bitsandbytes' own C error (pythonInterface.c) carries the words without CUDA's prefix; the corpora hold
    it as ambiguous (a library/environment incompatibility), not as the driver refusing a CUDA call."""
    root = _root(
        "Error operation not supported at line 351 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c"
    )
    assert root is None or root.code != "RUN307", root
