"""r3's source sweep (2026-12-07) of the environment and platform layer: every failure message these
programs print, rendered as a log shows it, with the class an engineer reading it would name; and the
healthy lines of the same programs, which stay silent.

Sources: cudart's cudaGetErrorString table (CUDA 12.x driver_types.h, every cudaError_t a training job can
meet) as torch's c10 check prints it ("RuntimeError: CUDA error: <text>" and the CUDA_LAUNCH_BLOCKING
note), torch's C10_CUDA_DRIVER_CHECK ("CUDA driver error: <cuGetErrorString>"), torch 0.4-1.x's THC
("cuda runtime error (N) : ... at file:line", "THCudaCheck FAIL file=... error=N : ..."), torch/cuda/
__init__.py and c10/cuda/CUDAFunctions.cpp (no driver, driver too old, device discovery, arch warnings,
not compiled with CUDA/NCCL), CUDACachingAllocator.cpp's OOM texts (1.x, 2.x, the 1 EiB refusal, NVML
asserts), the math libraries' statuses (CUBLAS_STATUS_*, CUDNN_STATUS_*, cuSOLVER, cuFFT, cuRAND), NVML
(nvidia-smi, pynvml's NVMLError_*), DeepSpeed's op builder (op_builder/builder.py), runner.py and
launch.py (read at deepspeedai/DeepSpeed master), Accelerate's and Lightning's environment checks, shared
memory (DataLoader bus error, /dev/shm, NCCL's shm segments), the loader (cannot open shared object file,
undefined symbol, GLIBC/GLIBCXX), and the same CUDA errors through NCCL's CUDACHECK, Triton's launcher and
Caffe's CUDA_CHECK.

Read: 75 cudart messages + 285 others (360). Failures with a class: 56 of the cudart table and 203
others; failures whose message names no root-cause class (a program's own bug, a library status with
several causes, a package missing: the corpora's decoys) stay silent (19 + 33); benign (49). Silent
before this sweep and now read: 13 messages (cuBLAS ARCH_MISMATCH, torch 1.x's "cuDNN version mismatch",
"CUDA driver error: initialization error" and Triton's, Triton's "operation not supported", Lightning's
fork refusal, submitit's / NeMo's missing srun, an undefined symbol with its library cut off,
cpp_extension's ninja failure, multiprocessing's "received 0 items of ancdata", MapAllocator's
shared-memory assert, numba's missing driver library, modprobe's Secure Boot refusal of the nvidia
module); one false alarm silenced (DeepSpeed's "... but since the APIs are compatible, accepting this
combination").
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, prefixed, root_finding

_NOTE = (
    "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect."
)

# Every failure message of the sweep with the code and class the diagnosis gives it.
SWEEP = [
    # torch's C10_CUDA_DRIVER_CHECK ("CUDA driver error: " + cuGetErrorString)
    ("RuntimeError: CUDA driver error: out of memory", "RUN101", "cuda_oom"),
    ("RuntimeError: CUDA driver error: operation not supported", "RUN307", "driver_env"),
    ("RuntimeError: CUDA driver error: initialization error", "RUN262", "driver_env"),
    ("RuntimeError: CUDA driver error: no CUDA-capable device is detected", "RUN262", "driver_env"),
    (
        ("RuntimeError: CUDA driver error: CUDA driver version is insufficient for CUDA runtime version"),
        "RUN261",
        "driver_env",
    ),
    ("RuntimeError: CUDA driver error: unknown error", "RUN323", "gpu_hardware"),
    # torch 0.4-1.x THC: "cuda runtime error (N) : <text> at <file>:<line>" and THCudaCheck (CUDA <= 10
    # numbering)
    (
        (
            "RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:51"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA "
            "runtime version at /pytorch/aten/src/THC/THCGeneral.cpp:50"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "RuntimeError: cuda runtime error (48) : no kernel image is available for execution on "
            "the device at /pytorch/aten/src/THC/generic/THCTensorMath.cu:35"
        ),
        "RUN265",
        "driver_env",
    ),
    (
        (
            "RuntimeError: cuda runtime error (8) : invalid device function at "
            "/pytorch/aten/src/THC/THCTensorMath.cu:35"
        ),
        "RUN265",
        "driver_env",
    ),
    (
        ("RuntimeError: cuda runtime error (10) : invalid device ordinal at torch/csrc/cuda/Module.cpp:32"),
        "RUN262",
        "driver_env",
    ),
    # torch/cuda/__init__.py and c10/cuda/CUDAFunctions.cpp: no driver, driver too old, no device, no kernel
    # image
    (
        (
            "RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or "
            "unavailable at /pytorch/aten/src/THC/THCGeneral.cpp:74"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        ("RuntimeError: cuda runtime error (30) : unknown error at /pytorch/aten/src/THC/THCGeneral.cpp:87"),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "RuntimeError: cuda runtime error (2) : out of memory at "
            "/pytorch/aten/src/THC/THCCachingAllocator.cpp:510"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: cuda runtime error (3) : initialization error at "
            "/pytorch/aten/src/THC/THCGeneral.cpp:50"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=51 error=38 : no "
            "CUDA-capable device is detected"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=2 : out of memory"),
        "RUN101",
        "cuda_oom",
    ),
    (
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=74 error=30 : unknown error"),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=35 : CUDA "
            "driver version is insufficient for CUDA runtime version"
        ),
        "RUN261",
        "driver_env",
    ),
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "RUN262", "driver_env"),
    (
        (
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "AssertionError: \nFound no NVIDIA driver on your system. Please check that you\nhave "
            "an NVIDIA GPU and installed a driver from\nhttp://www.nvidia.com/Download/index.aspx"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "RuntimeError: The NVIDIA driver on your system is too old (found version 10010). "
            "Please update your GPU driver by downloading and installing a new version from the "
            "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver."
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found "
            "version 11040). Please update your GPU driver by downloading and installing a new "
            "version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver. (Triggered internally at "
            "../c10/cuda/CUDAFunctions.cpp:108.)"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
            "incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after "
            "program start. Setting the available devices to be zero. (Triggered internally at "
            "../c10/cuda/CUDAFunctions.cpp:109.)"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. "
            "Setting the available devices to be zero."
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you "
            "run some cuda functions before calling NumCudaDevices() that might have already set "
            "an error? Error 804: forward compatibility was attempted on non supported HW "
            "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? Error "
            "803: system has unsupported display driver / cuda driver combination"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check "
            "that you have an NVIDIA GPU and installed a driver from "
            "http://www.nvidia.com/Download/index.aspx (Triggered internally at "
            "../c10/cuda/CUDAFunctions.cpp:109.)"
        ),
        "RUN262",
        "driver_env",
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "RUN262", "driver_env"),
    ("RuntimeError: No CUDA GPUs are available", "RUN262", "driver_env"),
    (
        (
            "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
            "multiprocessing, you must use the 'spawn' start method"
        ),
        "RUN308",
        "driver_env",
    ),
    (
        (
            "RuntimeError: CUDA call failed lazily at initialization with error: device >= 0 && "
            "device < num_gpus INTERNAL ASSERT FAILED at "
            '"../aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.'
        ),
        "RUN264",
        "driver_env",
    ),
    (
        (
            "UserWarning: \nFound GPU0 Tesla K40c which is of cuda capability 3.5.\n    PyTorch no "
            "longer supports this GPU because it is too old.\n    The minimum cuda capability "
            "supported by this library is 3.7."
        ),
        "RUN265",
        "driver_env",
    ),
    (
        (
            "UserWarning: \nNVIDIA GeForce RTX 4090 with CUDA capability sm_89 is not compatible "
            "with the current PyTorch installation.\nThe current PyTorch install supports CUDA "
            "capabilities sm_37 sm_50 sm_60 sm_70.\nIf you want to use the NVIDIA GeForce RTX 4090 "
            "GPU with PyTorch, please check the instructions at "
            "https://pytorch.org/get-started/locally/"
        ),
        "RUN265",
        "driver_env",
    ),
    (
        (
            "UserWarning: NVIDIA H100 80GB HBM3 with CUDA capability sm_90 is not compatible with "
            "the current PyTorch installation."
        ),
        "RUN265",
        "driver_env",
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "RUN263", "driver_env"),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "RUN262", "driver_env"),
    (
        (
            "ValueError: Default process group has not been initialized, please make sure to call "
            "init_process_group."
        ),
        "RUN224",
        "rendezvous",
    ),
    # cuBLAS / cuDNN / cuSOLVER / cuFFT statuses as torch wraps them
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "RUN101",
        "cuda_oom",
    ),
    (
        ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx( "
            "handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, "
            "c, CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`"
        ),
        "RUN265",
        "driver_env",
    ),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "RUN101", "cuda_oom"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", "RUN265", "driver_env"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "RUN101", "cuda_oom"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH", "RUN296", "driver_env"),
    (
        (
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 9, 2) "
            "but found runtime version (8, 5, 0). PyTorch already comes bundled with cuDNN. One "
            "option to resolving this error is to ensure PyTorch can find the bundled cuDNN.Looks "
            "like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either "
            "remove it from the path or install cudnn (8, 9, 2)"
        ),
        "RUN296",
        "driver_env",
    ),
    (
        ("RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7005"),
        "RUN296",
        "driver_env",
    ),
    ("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution", "RUN101", "cuda_oom"),
    (
        (
            "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open "
            "shared object file: No such file or directory"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "Could not load library libcudnn_ops_train.so.8. Error: "
            "/usr/local/cuda/lib64/libcudnn_ops_train.so.8: undefined symbol: "
            "_ZN5cudnn3ops18GetInternalStreamsEP12cudnnContextiPP11CUstream_st, version "
            "libcudnn_ops_infer.so.8"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling "
            "`cusolverDnCreate(handle)`"
        ),
        "RUN101",
        "cuda_oom",
    ),
    ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", "RUN101", "cuda_oom"),
    # CUDACachingAllocator.cpp (1.x wording, 2.x wording, the 1 EiB refusal: a garbage size from a
    # collective, tier 2)
    (
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
            "15.78 GiB total capacity; 14.56 GiB already allocated; 3.44 MiB free; 14.68 GiB "
            "reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
            "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management "
            "and PYTORCH_CUDA_ALLOC_CONF"
        ),
        "RUN102",
        "cuda_oom",
    ),
    (
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 79.15 GiB of which 1.23 GiB is free. Process 12345 has 77.90 GiB "
            "memory in use. Of the allocated memory 75.00 GiB is allocated by PyTorch, and 1.50 "
            "GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
            "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
            "fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        "RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory.",
        "RUN151",
        "collective_timeout",
    ),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory.",
        "RUN151",
        "collective_timeout",
    ),
    (
        (
            "RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "
            '"../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch.'
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( "
            "pci_id, &nvml_device) INTERNAL ASSERT FAILED at "
            '"../c10/cuda/CUDACachingAllocator.cpp":1123, please report a bug to PyTorch.'
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 23.69 GiB total "
            "capacity; 0 bytes already allocated; 22.75 GiB free; 0 bytes reserved in total by "
            "PyTorch)"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not "
            "enough memory: you tried to allocate 8589934592 bytes."
        ),
        "RUN122",
        "host_oom",
    ),
    ("RuntimeError: Unrecognized CachingAllocator option: max_split_size", "RUN366", "driver_env"),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCompile with `TORCH_USE_CUDA_DSA` to enable "
            "device-side assertions."
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 3 "
            "has a total capacity of 23.65 GiB of which 9.06 MiB is free. Including non-PyTorch "
            "memory, this process has 23.63 GiB memory in use."
        ),
        "RUN101",
        "cuda_oom",
    ),
    # NVML: nvidia-smi's and pynvml's errors
    ("Failed to initialize NVML: Driver/library version mismatch", "RUN261", "driver_env"),
    (
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183",
        "RUN261",
        "driver_env",
    ),
    ("Failed to initialize NVML: Unknown Error", "RUN262", "driver_env"),
    (
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
            "sure that the latest NVIDIA driver is installed and running."
        ),
        "RUN262",
        "driver_env",
    ),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", "RUN243", "gpu_hardware"),
    (
        (
            "Unable to determine the device handle for gpu 0000:3B:00.0: GPU is lost.  Reboot the "
            "system to recover this GPU"
        ),
        "RUN243",
        "gpu_hardware",
    ),
    ("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "RUN262", "driver_env"),
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "RUN262", "driver_env"),
    (
        "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
        "RUN261",
        "driver_env",
    ),
    ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", "RUN243", "gpu_hardware"),
    ("pynvml.nvml.NVMLError_NoPermission: Insufficient Permissions", "RUN391", "driver_env"),
    ("pynvml.NVMLError_Unknown: Unknown Error", "RUN391", "driver_env"),
    # DeepSpeed's op builder and torch.utils.cpp_extension's JIT build
    ("RuntimeError: Error building extension 'fused_adam'", "RUN296", "driver_env"),
    (
        "RuntimeError: Error building extension 'cpu_adam': [1/3] c++ -MMD -MF cpu_adam.o.d",
        "RUN296",
        "driver_env",
    ),
    (
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        "RUN296",
        "driver_env",
    ),
    ("ninja: build stopped: subcommand failed.", "RUN296", "driver_env"),
    ("RuntimeError: Ninja is required to load C++ extensions", "RUN296", "driver_env"),
    (
        (
            "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: "
            "Installed CUDA version 11.8 does not match the version torch was compiled with 12.1, "
            "unable to compile cuda/cpp extensions without a matching cuda version."
        ),
        "RUN296",
        "driver_env",
    ),
    (
        (
            "Exception: >- DeepSpeed Op Builder: Installed CUDA version 11.8 does not match the "
            "version torch was compiled with 12.1, unable to compile cuda/cpp extensions without a "
            "matching cuda version."
        ),
        "RUN296",
        "driver_env",
    ),
    (
        ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."),
        "RUN296",
        "driver_env",
    ),
    (
        (
            "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, "
            "unable to compile CUDA op(s)"
        ),
        "RUN296",
        "driver_env",
    ),
    ("AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)", "RUN296", "driver_env"),
    (
        (
            "ImportError: /root/.cache/torch_extensions/py310_cu118/fused_adam/fused_adam.so: "
            "cannot open shared object file: No such file or directory"
        ),
        "RUN296",
        "driver_env",
    ),
    ("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'", "RUN296", "driver_env"),
    (
        (
            "RuntimeError: Unable to JIT load the fp_quantizer op due to it not being compatible "
            "due to hardware/software issue. FP Quantizer is using an untested triton version "
            "(2.3.1), only 2.3.0 and 2.3.1 are known to be compatible with these kernels"
        ),
        "RUN296",
        "driver_env",
    ),
    # DeepSpeed's runner and Accelerate / Lightning environment checks
    ("RuntimeError: Unable to proceed, no GPU resources available", "RUN262", "driver_env"),
    ("RuntimeError: launcher 'pdsh' not installed.", "RUN389", "driver_env"),
    ("ValueError: fp16 mixed precision requires a GPU (not 'mps').", "RUN262", "driver_env"),
    (
        ("lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!"),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested gpu: "
            "[0, 1] But your machine only has: [0]"
        ),
        "RUN264",
        "driver_env",
    ),
    (
        (
            "RuntimeError: Lightning can't create new processes if CUDA is already initialized. "
            "Did you manually call `torch.cuda.*` functions, have moved the model to the device, "
            "or allocated memory on the GPU any other way? Please remove any such calls, or change "
            "the selected strategy. You will have to restart the Python kernel."
        ),
        "RUN308",
        "driver_env",
    ),
    # shared memory: DataLoader workers (RUN131/RUN388) and NCCL's /dev/shm segments (RUN171)
    (
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by "
            "insufficient shared memory (shm)."
        ),
        "RUN131",
        "process_crash",
    ),
    (
        (
            "RuntimeError: DataLoader worker (pid 1234) is killed by signal: Bus error. It is "
            "possible that dataloader's workers are out of shared memory. Please try to raise your "
            "shared memory limit."
        ),
        "RUN131",
        "process_crash",
    ),
    (
        "RuntimeError: unable to write to file </torch_18_1234>: No space left on device (28)",
        "RUN388",
        "process_crash",
    ),
    (
        "RuntimeError: unable to write to file </torch_18_1234_2>: No space left on device (28)",
        "RUN388",
        "process_crash",
    ),
    (
        (
            "RuntimeError: unable to mmap 1048576 bytes from file </torch_1234_5678_0>: Cannot "
            "allocate memory (12)"
        ),
        "RUN388",
        "process_crash",
    ),
    (
        (
            "RuntimeError: unable to open shared memory object </torch_1234_5678> in read-write "
            "mode: Too many open files (24)"
        ),
        "RUN388",
        "process_crash",
    ),
    ("OSError: [Errno 28] No space left on device: '/dev/shm/pymp-abc'", "RUN388", "process_crash"),
    (
        (
            "node1:39:298 [0] include/shm.h:48 NCCL WARN Error: failed to extend "
            "/dev/shm/nccl-XXXX to 9637892 bytes"
        ),
        "RUN171",
        "nccl_network",
    ),
    (
        (
            "node1:39:298 [0] misc/shmutils.cc:80 NCCL WARN Error: failed to extend "
            "/dev/shm/nccl-cT3vAm to 9637892 bytes, error: No space left on device"
        ),
        "RUN171",
        "nccl_network",
    ),
    (
        (
            "node1:39:298 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
            "left on device"
        ),
        "RUN171",
        "nccl_network",
    ),
    ("RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly", "RUN133", "process_crash"),
    # the loader: CUDA/NCCL/cuDNN libraries missing, undefined symbols, GLIBC/GLIBCXX
    (
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
        "RUN263",
        "driver_env",
    ),
    (
        "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory",
        "RUN263",
        "driver_env",
    ),
    (
        (
            "ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined "
            "symbol: cudaGraphInstantiateWithFlags, version libcudart.so.11.0"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "ImportError: "
            "/usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/lib/libc"
            "usparse.so.12: "
            "undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "ImportError: /usr/local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommRegister"
        ),
        "RUN195",
        "driver_env",
    ),
    (
        (
            "OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommInitRankScalable, version libnccl.so.2"
        ),
        "RUN195",
        "driver_env",
    ),
    (
        (
            "ImportError: /lib64/libc.so.6: version `GLIBC_2.27' not found (required by "
            "/usr/local/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so)"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "OSError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found "
            "(required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        ("ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory"),
        "RUN263",
        "driver_env",
    ),
    (
        "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
        "RUN263",
        "driver_env",
    ),
    (
        "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory",
        "RUN263",
        "driver_env",
    ),
    (
        (
            "OSError: [WinError 126] The specified module could not be found. Error loading "
            '"C:\\\\Python310\\\\lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll" or one of its '
            "dependencies."
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "ImportError: "
            "/usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-lin"
            "ux-gnu.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEi"
        ),
        "RUN263",
        "driver_env",
    ),
    (
        (
            "ImportError: "
            "/opt/conda/lib/python3.10/site-packages/apex/amp_C.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: "
            "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTy"
            "peEEENS6_INS2_6LayoutEEENS6_INS2_6DeviceEEENS6_IbEE"
        ),
        "RUN263",
        "driver_env",
    ),
    # the same CUDA errors through Triton's launcher and NCCL's CUDACHECK
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "RUN261", "driver_env"),
    (
        (
            "node1:39:298 [0] init.cc:1200 NCCL WARN Cuda failure 35 'CUDA driver version is "
            "insufficient for CUDA runtime version'"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        "node1:39:298 [0] enqueue.cc:100 NCCL WARN Cuda failure 'invalid device function'",
        "RUN265",
        "driver_env",
    ),
    (
        "node1:39:298 [0] init.cc:1200 NCCL WARN Cuda failure 'no CUDA-capable device is detected'",
        "RUN262",
        "driver_env",
    ),
    (
        "node1:39:298 [0] misc/cudawrap.cc:90 NCCL WARN cuDriverGetVersion failed with 34",
        "RUN262",
        "driver_env",
    ),
    (
        "node1:39:298 [0] init.cc:1500 NCCL WARN Cuda failure 801 'operation not supported'",
        "RUN292",
        "driver_env",
    ),
    (
        (
            "node1:39:298 [0] transport/p2p.cc:200 NCCL WARN Cuda failure 'peer access is not "
            "supported between these two devices'"
        ),
        "RUN291",
        "driver_env",
    ),
    # Caffe's CUDA_CHECK (glog): the error number and cudaGetErrorString
    (
        (
            "F0204 18:10:50.435636 15168 common.cpp:152] Check failed: error == cudaSuccess (35 "
            "vs. 0)  CUDA driver version is insufficient for CUDA runtime version"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "F0204 18:10:50.435636 15168 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 "
            "vs. 0)  out of memory"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "F0204 18:10:50.435636 15168 im2col.cu:61] Check failed: error == cudaSuccess (8 vs. "
            "0)  invalid device function"
        ),
        "RUN265",
        "driver_env",
    ),
    (
        (
            "F0204 18:10:50.435636 15168 common.cpp:152] Check failed: error == cudaSuccess (38 "
            "vs. 0)  no CUDA-capable device is detected"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "F0204 18:10:50.435636 15168 parallel.cpp:100] Check failed: error == cudaSuccess (10 "
            "vs. 0)  invalid device ordinal"
        ),
        "RUN264",
        "driver_env",
    ),
    (
        (
            "node1:39:298 [0] misc/ibvwrap.cc:200 NCCL WARN Call to ibv_reg_mr_iova2 failed with "
            "error Cannot allocate memory"
        ),
        "RUN173",
        "nccl_network",
    ),
    (
        (
            "node1:39:298 [0] misc/ibvwrap.cc:200 NCCL WARN Call to ibv_reg_mr failed with error "
            "Cannot allocate memory"
        ),
        "RUN173",
        "nccl_network",
    ),
    (
        (
            "node1:39:298 [0] misc/ibvwrap.cc:200 NCCL WARN Call to ibv_reg_dmabuf_mr failed with "
            "error Bad address"
        ),
        "RUN292",
        "driver_env",
    ),
    (
        (
            "node1:39:298 [0] misc/socket.cc:452 NCCL WARN ncclSocketInit: connecting to address "
            "with family 0 is neither AF_INET(2) nor AF_INET6(10)"
        ),
        "RUN174",
        "nccl_network",
    ),
    ('RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?', "RUN389", "driver_env"),
    (
        "OSError: undefined symbol: _ZN2at6detail20computeStorageNbytesEN3c108ArrayRefIlEES3_mm",
        "RUN263",
        "driver_env",
    ),
    ("RuntimeError: Triton Error [CUDA]: initialization error", "RUN262", "driver_env"),
    ("RuntimeError: Triton Error [CUDA]: operation not supported", "RUN307", "driver_env"),
    (
        (
            "subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '8']' returned non-zero "
            "exit status 1."
        ),
        "RUN296",
        "driver_env",
    ),
    (
        ("ValueError: Hostfile contains multiple entries for worker-0, unable to proceed with launching"),
        "RUN304",
        "rendezvous",
    ),
    (
        ("ValueError: Hostfile contains a bad entry: worker-0 slot=8, unable to proceed with launching"),
        "RUN304",
        "rendezvous",
    ),
    (
        ("ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching."),
        "RUN304",
        "rendezvous",
    ),
    (
        (
            "[2024-01-01 00:00:00,000] [ERROR] [runner.py:100:_parse_hostfile] Bad hostfile text: "
            "['worker-0 slot=8\n']"
        ),
        "RUN304",
        "rendezvous",
    ),
    ("RuntimeError: MIN:MAX format is only supported in elastic training", "RUN390", "driver_env"),
    ("RuntimeError: num_nodes 1:2:3 is not in MIN:MAX format", "RUN390", "driver_env"),
    ("AssertionError: Master Addr is required when elastic training is enabled", "RUN224", "rendezvous"),
    (
        (
            "Detected VISIBLE_DEVICES=0,1 but ignoring it because one or several of "
            "--include/--exclude/--num_gpus/--num_nodes cl args were used. If you want to use "
            "CUDA_VISIBLE_DEVICES don't pass any of these arguments to deepspeed."
        ),
        "RUN530",
        "driver_env",
    ),
    ("ValueError: Cannot specify num_nodes/gpus with include/exclude", "RUN390", "driver_env"),
    ("ValueError: Num nodes is >1 but no extra nodes available via hostfile", "RUN390", "driver_env"),
    (
        (
            "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via "
            "ssh. If you are running with a single node please remove /job/hostfile or setup "
            "passwordless ssh."
        ),
        "RUN303",
        "rendezvous",
    ),
    (
        (
            "[2024-01-01 00:00:00,000] [ERROR] [runner.py:500:main] Unable to detect suitable "
            "master address via `hostname -I`, please manually specify one via --master_addr"
        ),
        "RUN224",
        "rendezvous",
    ),
    (
        (
            "RuntimeError: Unable to detect suitable master address via `hostname -I`, please "
            "manually specify one via --master_addr"
        ),
        "RUN224",
        "rendezvous",
    ),
    (
        "AssertionError: Launching training without ssh, but --node_rank is not set correctly.",
        "RUN390",
        "driver_env",
    ),
    (
        (
            "[2024-01-01 00:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', "
            "'-u', 'train.py', '--local_rank=1'] exits with return code = -9"
        ),
        "RUN121",
        "host_oom",
    ),
    (
        (
            "[2024-01-01 00:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', "
            "'-u', 'train.py', '--local_rank=1'] exits with return code = 1"
        ),
        "RUN133",
        "process_crash",
    ),
    (
        (
            "[2024-01-01 00:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', "
            "'-u', 'train.py', '--local_rank=1'] exits with return code = -7"
        ),
        "RUN131",
        "process_crash",
    ),
    (
        "[2024-01-01 00:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1234",
        "RUN133",
        "process_crash",
    ),
    (
        "RuntimeError: Unable to JIT load the fused_adam op due to ninja not being installed.",
        "RUN296",
        "driver_env",
    ),
    (
        (
            "RuntimeError: Unable to JIT load the cpu_adam op due to it not being compatible due "
            "to hardware/software issue. CPU Adam requires compute capability >= 7.0"
        ),
        "RUN296",
        "driver_env",
    ),
    # CuPy's, numba's and JAX's wrappers of the same CUDA errors
    (
        (
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NO_DEVICE: no CUDA-capable "
            "device is detected"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA "
            "driver version is insufficient for CUDA runtime version"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable "
            "device is detected"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        ("cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)"),
        "RUN265",
        "driver_env",
    ),
    (
        (
            "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit "
            "results in CUDA_ERROR_NO_DEVICE (100)"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: CUDA driver library "
            "cannot be found."
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in "
            "CUDA_ERROR_OUT_OF_MEMORY"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible "
            "GPU devices. (you may need to uninstall the failing plugin package, or set "
            "JAX_PLATFORMS=cpu to skip this backend.)"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
            "to allocate 1073741824 bytes."
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the "
            "device\nCUDA kernel errors might be asynchronously reported at some other API call, "
            "so the stacktrace below might be incorrect.\nFor debugging consider passing "
            "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
            "assertions."
        ),
        "RUN265",
        "driver_env",
    ),
    ("torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available", "RUN262", "driver_env"),
    ("RuntimeError: Found no NVIDIA driver on your system.", "RUN262", "driver_env"),
    (
        (
            "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\nCompile "
            "with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
        ),
        "RUN262",
        "driver_env",
    ),
    # the container runtime, the kernel module and NVML outside torch
    (
        (
            "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure "
            "that the NVIDIA Display Driver is properly installed and present in your system."
        ),
        "RUN262",
        "driver_env",
    ),
    (
        ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown"),
        "RUN261",
        "driver_env",
    ),
    (
        ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'),
        "RUN262",
        "driver_env",
    ),
    (
        (
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
            "update your driver to a newer version, or use an earlier cuda container: unknown"
        ),
        "RUN261",
        "driver_env",
    ),
    (
        (
            "NVRM: API mismatch: the client has the version 535.129.03, but this kernel module has "
            "the version 535.104.05.  Please make sure that this kernel module and all NVIDIA "
            "driver components have the same version."
        ),
        "RUN261",
        "driver_env",
    ),
    ("modprobe: ERROR: could not insert 'nvidia': Required key not available", "RUN262", "driver_env"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "RUN262", "driver_env"),
    ("Error: Failed to initialize NVML: GPU access blocked by the operating system", "RUN262", "driver_env"),
    (
        (
            "RuntimeError: The detected CUDA version (11.8) mismatches the version that was used "
            "to compile PyTorch (12.1). Please make sure to use the same CUDA versions."
        ),
        "RUN296",
        "driver_env",
    ),
    # DataLoader workers: signals, the open-files limit, shared memory
    ("ERROR: Unexpected segmentation fault encountered in worker.", "RUN131", "process_crash"),
    ("ERROR: Unexpected floating-point exception encountered in worker.", "RUN131", "process_crash"),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.", "RUN121", "host_oom"),
    (
        "RuntimeError: DataLoader worker (pid 12345) is killed by signal: Segmentation fault.",
        "RUN131",
        "process_crash",
    ),
    (
        (
            "RuntimeError: Too many open files. Communication with the workers is no longer "
            "possible. Please increase the limit using `ulimit -n` in the shell or change the "
            "sharing strategy by calling "
            "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your "
            "code"
        ),
        "RUN388",
        "process_crash",
    ),
    ("RuntimeError: received 0 items of ancdata", "RUN388", "process_crash"),
    (
        (
            "RuntimeError: unable to open shared memory object </torch_1234_5678_0> in read-write "
            "mode: No such file or directory (2)"
        ),
        "RUN388",
        "process_crash",
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
            "reported at some other API call"
        ),
        "RUN101",
        "cuda_oom",
    ),
    # the caching allocator's other wordings (1.x, 2.x, the memory-fraction limit, other processes named)
    (
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; "
            "79.15 GiB total capacity; 70.00 GiB already allocated; 1.00 GiB free; 76.00 GiB "
            "reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
            "max_split_size_mb to avoid fragmentation."
        ),
        "RUN102",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 10.76 GiB total "
            "capacity; 0 bytes already allocated; 3.44 MiB free; 0 bytes reserved in total by "
            "PyTorch)"
        ),
        "RUN103",
        "cuda_oom",
    ),
    (
        (
            "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
            "capacty of 23.69 GiB of which 17.06 MiB is free."
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a "
            "total capacity of 79.10 GiB of which 100.00 MiB is free. Including non-PyTorch "
            "memory, this process has 78.99 GiB memory in use. Of the allocated memory 76.50 GiB "
            "is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."
        ),
        "RUN102",
        "cuda_oom",
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory (malloc at "
            "/opt/conda/conda-bld/pytorch_1/work/c10/cuda/CUDACachingAllocator.cpp:1000)"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out "
            "of memory)\nCurrently allocated     : 20.00 GiB\nRequested               : 2.00 "
            "GiB\nDevice limit            : 22.00 GiB\nFree (according to CUDA): 1.00 GiB\nPyTorch "
            "limit (set by user-supplied memory fraction)\n                        : 21.00 GiB"
        ),
        "RUN101",
        "cuda_oom",
    ),
    # torch's C10_CUDA_DRIVER_CHECK ("CUDA driver error: " + cuGetErrorString)
    ("RuntimeError: CUDA driver error: out of memory", "RUN101", "cuda_oom"),
    (
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 79.15 GiB of which 1.23 GiB is free. Process 4321 has 20.00 GiB "
            "memory in use. Process 8765 has 57.00 GiB memory in use."
        ),
        "RUN103",
        "cuda_oom",
    ),
    ("RuntimeError: CUDA error: unspecified launch failure", "RUN244", "gpu_hardware"),
    # cuDNN's internal error: most often its handle or workspace found no GPU memory (w4, 2026-12-07: two of
    # the three released logs that hold it are out-of-memory, the third's title names its batch size)
    ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "RUN101", "cuda_oom"),
    (
        (
            "F0204 18:10:50.435636 15168 cudnn_conv_layer.cpp:52] Check failed: status == "
            "CUDNN_STATUS_SUCCESS (4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR"
        ),
        "RUN101",
        "cuda_oom",
    ),
    (
        (
            "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not "
            "have a CUDA gpu. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)"
        ),
        "RUN262",
        "driver_env",
    ),
    (
        (
            'RuntimeError: falseINTERNAL ASSERT FAILED at "../aten/src/ATen/MapAllocator.cpp":263, '
            "please report a bug to PyTorch. unable to open shared memory object "
            "</torch_3573_1497616437> in read-write mode"
        ),
        "RUN388",
        "process_crash",
    ),
    ("modprobe: ERROR: could not insert 'nvidia_uvm': Key was rejected by service", "RUN262", "driver_env"),
]

# Failures whose message names no root-cause class: a program's own bug, a library status with several
# causes (cuBLAS internal, cuDNN execution failures), a Python package missing (the corpora keep these as
# decoys), NCCL's lines without NCCL's prefix (read with it by the NCCL rows), a launcher's typo.
NO_CLASS = [
    # torch's C10_CUDA_DRIVER_CHECK ("CUDA driver error: " + cuGetErrorString): the failures of device
    # set-up
    "RuntimeError: CUDA driver error: invalid argument",
    "RuntimeError: CUDA driver error: invalid device context",
    "RuntimeError: CUDA driver error: context already in use",
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( "
        "handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( "
        "handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, "
        "c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
    ),
    "RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`",
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling "
        "`cublasGemmStridedBatchedExFix(handle, opa, opb, m, n, k, (void*)&falpha, a, "
        "CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, (void*)&fbeta, c, "
        "CUDA_R_16BF, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasLtMatmul( "
        "ltHandle, computeDesc.descriptor(), &alpha_val, mat1_ptr, Adesc.descriptor(), "
        "mat2_ptr, Bdesc.descriptor(), &beta_val, result_ptr, Cdesc.descriptor(), result_ptr, "
        "Cdesc.descriptor(), &heuristicResult.algo, workspace.data_ptr(), workspaceSize, "
        "at::cuda::getCurrentCUDAStream())`"
    ),
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    "RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM",
    (
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you "
        "passed in a non-contiguous input."
    ),
    "RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR",
    "RuntimeError: GET was unable to find an engine to execute this computation",
    "RuntimeError: FIND was unable to find an engine to execute this computation",
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`"),
    "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
    "RuntimeError: CUDA error: CURAND_STATUS_INITIALIZATION_FAILED",
    (
        "ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please "
        "run `pip install transformers[torch]` or `pip install accelerate -U`"
    ),
    ("ImportError: DeepSpeed is not installed => run `pip install deepspeed` or build it from source."),
    (
        "lightning.fabric.utilities.exceptions.MisconfigurationException: "
        "`Trainer(strategy='ddp')` is not compatible with an interactive environment. Run your "
        "code as a script, or choose one of the compatible strategies: "
        "`Fabric(strategy='dp'|'ddp_notebook')`. In case you are spawning processes yourself, "
        "make sure to include the Trainer creation inside the worker function."
    ),
    "RuntimeError: Triton Error [CUDA]: invalid device context",
    (
        "F0204 18:10:50.435636 15168 math_functions.hpp:176] Check failed: error == "
        "cudaSuccess (30 vs. 0)  unknown error"
    ),
    (
        "F0204 18:10:50.435636 15168 math_functions.cu:79] Check failed: error == cudaSuccess "
        "(77 vs. 0)  an illegal memory access was encountered"
    ),
    "ncclSocketInit: connecting to address with family 0 is neither AF_INET(2) nor AF_INET6(10)",
    (
        "what():  [enforce fail at /users/blah/gloo/gloo/benchmark/runner.cc:124] "
        "contextFactory_. No means for rendezvous"
    ),
    "ImportError: undefined symbol: PyFPE_jbuf",
    "NotImplementedError: Unknown launcher slurmx",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "OSError: [Errno 24] Too many open files",
]

# The same programs' healthy lines and warnings of a run that goes on.
BENIGN = [
    (
        "2021-05-26 11:50:43.576651: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1677] "
        "Unable to enable peer access between device ordinals 9 and 0, status: Internal: "
        "failed to enable peer access from 0x9163340 to 0x618ae70: CUDA_ERROR_TOO_MANY_PEERS: "
        "peer mapping resources exhausted"
    ),
    (
        "UserWarning: expandable_segments not supported on this platform (Triggered internally "
        "at ../c10/cuda/CUDAAllocatorConfig.h:28.)"
    ),
    "UserWarning: Can't initialize NVML",
    (
        "Installed CUDA version 12.2 does not match the version torch was compiled with 12.1 "
        "but since the APIs are compatible, accepting this combination"
    ),
    "[WARNING]  async_io requires the dev libaio .so object and headers but these were not found.",
    "[WARNING]  async_io: please install the libaio-dev package with apt",
    (
        "[WARNING]  If libaio is already installed (perhaps from source), try setting the "
        "CFLAGS and LDFLAGS environment variables to where it can be found."
    ),
    "[WARNING]  Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH",
    "[WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.1",
    "[WARNING]  using untested triton version (2.1.0), only 1.0.0 is known to be compatible",
    "async_io ............... [NO] ....... [NO]",
    "fused_adam ............. [NO] ....... [OKAY]",
    "GPU available: False, used: False",
    "GPU available: True (cuda), used: True",
    (
        "node1:39:298 [0] NCCL INFO Cuda failure 'CUDA driver version is insufficient for CUDA "
        "runtime version'"
    ),
    "node1:39:298 [0] NCCL INFO Failed to open libibverbs.so[.1]",
    (
        "node1:39:298 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared "
        "object file: No such file or directory No plugin found (libnccl-net.so), using "
        "internal implementation"
    ),
    (
        "/usr/local/lib/python3.8/dist-packages/torch/cuda/nccl.py:15: UserWarning: PyTorch is "
        "not compiled with NCCL support\n  warnings.warn('PyTorch is not compiled with NCCL "
        "support')"
    ),
    (
        " [WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the "
        "version torch was compiled with 12.1.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this "
        "combination of CUDA, but it may result in unexpected behavior."
    ),
    ("            raise RuntimeError('Could not detect \"srun\", are you indeed on a slurm cluster?')"),
    (
        "ninja: build stopped: subcommand failed.\nFusedAdam CUDA build failed (Error building "
        "extension 'fused_adam'), falling back to torch.optim.AdamW"
    ),
    "Detected VISIBLE_DEVICES=0,1: setting --include=localhost:0,1",
    (
        "[2024-01-01 00:00:00,000] [WARNING] [runner.py:202:fetch_hostfile] Unable to find "
        "hostfile, will proceed with training with local resources only."
    ),
    (
        "[2024-01-01 00:00:00,000] [INFO] [runner.py:568:main] cmd = /usr/bin/python -u -m "
        "deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMF19 "
        "--master_addr=127.0.0.1 --master_port=29500 train.py"
    ),
    "[2024-01-01 00:00:00,000] [INFO] [launch.py:145:main] WORLD INFO DICT: {'localhost': [0, 1]}",
    "[2024-01-01 00:00:00,000] [INFO] [launch.py:151:main] nnodes=1, num_local_procs=2, node_rank=0",
    "[2024-01-01 00:00:00,000] [INFO] [launch.py:163:main] dist_world_size=2",
    "[2024-01-01 00:00:00,000] [INFO] [launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=0,1",
    "[2024-01-01 00:00:00,000] [INFO] [launch.py:347:main] Process 1234 exits successfully.",
    (
        "[2024-01-01 00:00:00,000] [WARNING] [real_accelerator.py:162:get_accelerator] Setting "
        "accelerator to CPU. If you have GPU or other accelerator, we were unable to detect it."
    ),
    (
        "[2024-01-01 00:00:00,000] [INFO] [real_accelerator.py:191:get_accelerator] Setting "
        "ds_accelerator to cuda (auto detect)"
    ),
    (
        "[WARNING]  DeepSpeed Op Builder: Installed CUDA version 12.2 does not match the "
        "version torch was compiled with 12.1.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this "
        "combination of CUDA, but it may result in unexpected behavior."
    ),
    (
        "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to "
        "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
    ),
    (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
        "CUDA_ERROR_UNKNOWN: unknown error"
    ),
    (
        "2024-01-01 00:00:00.000000: E "
        "external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register "
        "cuDNN factory: Attempting to register factory for plugin cuDNN when one has already "
        "been registered"
    ),
    (
        "2024-01-01 00:00:00.000000: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] "
        "TF-TRT Warning: Could not find TensorRT"
    ),
    (
        "2024-01-01 00:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] "
        "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 78900 MB memory"
    ),
    (
        "2024-01-01 00:00:00.000000: W "
        "tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        "library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object "
        "file: No such file or directory"
    ),
    (
        "2024-01-01 00:00:00.000000: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] "
        "Ignore above cudart dlerror if you do not have a GPU set up on your machine."
    ),
    (
        "2024-01-01 00:00:00.000000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] "
        "Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned "
        "above are installed properly if you would like to use GPU. Follow the guide at "
        "https://www.tensorflow.org/install/gpu for how to download and setup the required "
        "libraries for your platform."
    ),
    ("[W CUDAGuardImpl.h:115] Warning: CUDA warning: driver shutting down (function uncheckedSetDevice)"),
    ("[W CUDAGuardImpl.h:118] Warning: CUDA warning: unspecified launch failure (function destroyEvent)"),
    (
        "[W CUDAGuardImpl.h:124] Warning: CUDA warning: an illegal memory access was "
        "encountered (function destroyEvent)"
    ),
    (
        "[W CudaIPCTypes.cpp:15] Producer process has been terminated before all shared CUDA "
        "tensors released. See Note [Sharing CUDA tensors]"
    ),
    "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
    (
        "UserWarning: Attempting to run cuBLAS, but there was no current CUDA context! "
        "Attempting to set the primary context... (Triggered internally at "
        "../aten/src/ATen/cuda/CublasHandlePool.cpp:135.)"
    ),
    ("UserWarning: torch.distributed.reduce_op is deprecated, please use torch.distributed.ReduceOp instead"),
    "UserWarning: TypedStorage is deprecated.",
    (
        "UserWarning: Plan failed with a cudnnException: "
        "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed "
        "cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at "
        "../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)"
    ),
    (
        "UserWarning: Applied workaround for CuDNN issue, install nvrtc.so (Triggered "
        "internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:80.)"
    ),
]

# cudart's cudaGetErrorString table (CUDA 12.x): number, message, and the code and class of torch's
# "RuntimeError: CUDA error: <message>" (None: a program's own mistake, silent; see the test).
CUDART = [
    (1, "invalid argument", None, None),
    (2, "out of memory", "RUN101", "cuda_oom"),
    (3, "initialization error", "RUN262", "driver_env"),
    (4, "driver shutting down", None, None),
    (5, "profiler disabled while using external profiling tool", None, None),
    (9, "invalid configuration argument", None, None),
    (12, "invalid pitch argument", None, None),
    (13, "invalid device symbol", None, None),
    (16, "invalid host pointer", None, None),
    (17, "invalid device pointer", None, None),
    (18, "invalid texture reference", None, None),
    (34, "CUDA driver is a stub library", "RUN262", "driver_env"),
    (35, "CUDA driver version is insufficient for CUDA runtime version", "RUN261", "driver_env"),
    (36, "API call is not supported in the installed CUDA driver", "RUN261", "driver_env"),
    (46, "CUDA-capable device(s) is/are busy or unavailable", "RUN262", "driver_env"),
    (52, "__global__ function call is not configured", None, None),
    (98, "invalid device function", "RUN265", "driver_env"),
    (100, "no CUDA-capable device is detected", "RUN262", "driver_env"),
    (101, "invalid device ordinal", "RUN264", "driver_env"),
    (102, "device doesn't have valid Grid license", "RUN262", "driver_env"),
    (127, "startup failure in cuda runtime", "RUN262", "driver_env"),
    (200, "device kernel image is invalid", "RUN261", "driver_env"),
    (201, "invalid device context", None, None),
    (209, "no kernel image is available for execution on the device", "RUN265", "driver_env"),
    (214, "uncorrectable ECC error encountered", "RUN242", "gpu_hardware"),
    (215, "limit is not supported on this architecture", None, None),
    (216, "exclusive-thread device already in use by a different thread", "RUN262", "driver_env"),
    (217, "peer access is not supported between these two devices", "RUN291", "driver_env"),
    (218, "a PTX JIT compilation failed", "RUN261", "driver_env"),
    (220, "uncorrectable NVLink error detected during the execution", "RUN241", "gpu_hardware"),
    (221, "PTX JIT compiler library not found", "RUN263", "driver_env"),
    (222, "the provided PTX was compiled with an unsupported toolchain.", "RUN261", "driver_env"),
    (223, "PTX JIT compilation was disabled", "RUN265", "driver_env"),
    (300, "device kernel image is invalid", "RUN261", "driver_env"),
    (301, "file not found", None, None),
    (302, "shared object symbol not found", None, None),
    (303, "shared object initialization failed", "RUN265", "driver_env"),
    (304, "OS call failed or operation not supported on this OS", "RUN262", "driver_env"),
    (400, "invalid resource handle", None, None),
    (401, "the operation cannot be performed in the present state", None, None),
    (500, "named symbol not found", "RUN265", "driver_env"),
    (600, "device not ready", None, None),
    (700, "an illegal memory access was encountered", None, None),
    (701, "too many resources requested for launch", None, None),
    (702, "the launch timed out and was terminated", "RUN342", "driver_env"),
    (704, "peer access is already enabled", None, None),
    (705, "peer access has not been enabled", None, None),
    (708, "cannot set while device is active in this process", None, None),
    (709, "context is destroyed", None, None),
    (710, "device-side assert triggered", None, None),
    (711, "peer mapping resources exhausted", "RUN291", "driver_env"),
    (714, "hardware stack error", None, None),
    (715, "an illegal instruction was encountered", None, None),
    (716, "misaligned address", None, None),
    (717, "operation not supported on global/shared address space", "RUN307", "driver_env"),
    (718, "invalid program counter", None, None),
    (719, "unspecified launch failure", "RUN244", "gpu_hardware"),
    (720, "too many blocks in cooperative launch", None, None),
    (800, "operation not permitted", None, None),
    (801, "operation not supported", "RUN307", "driver_env"),
    (802, "system not yet initialized", "RUN262", "driver_env"),
    (803, "system has unsupported display driver / cuda driver combination", "RUN261", "driver_env"),
    (804, "forward compatibility was attempted on non supported HW", "RUN261", "driver_env"),
    (805, "MPS client failed to connect to the MPS control daemon or the MPS server", "RUN262", "driver_env"),
    (
        806,
        "the remote procedural call between the MPS server and the MPS client failed",
        "RUN262",
        "driver_env",
    ),
    (807, "MPS server is not ready to accept new MPS client requests", "RUN262", "driver_env"),
    (808, "the hardware resources required to create MPS client have been exhausted", "RUN262", "driver_env"),
    (
        809,
        "the hardware resources required to support device connections have been exhausted",
        "RUN262",
        "driver_env",
    ),
    (810, "the MPS client has been terminated by the server", "RUN262", "driver_env"),
    (900, "operation not permitted when stream is capturing", None, None),
    (901, "operation failed due to a previous error during capture", None, None),
    (904, "capturing stream has unjoined work", None, None),
    (906, "operation not permitted on an event last recorded in a capturing stream", None, None),
    (909, "the operation timed out", None, None),
    (999, "unknown error", "RUN323", "gpu_hardware"),
]


@pytest.mark.parametrize(("line", "code", "category"), SWEEP)
@pytest.mark.parametrize("prefix", ["", *LAUNCHER_PREFIXES[1:3]])
def test_source_message(line: str, code: str, category: str, prefix: str) -> None:
    root = root_finding(prefixed(prefix, line) if prefix else line)
    assert root is not None and (root.code, root.category) == (code, category), (line, root)


@pytest.mark.parametrize(
    ("line", "code", "category"), [r for r in SWEEP if r[0].startswith("RuntimeError: ")][:12]
)
def test_source_message_under_traceback(line: str, code: str, category: str) -> None:
    root = root_finding(TRACEBACK_HEAD + line)
    assert root is not None and root.code == code, (line, root)


@pytest.mark.parametrize(("number", "message", "code", "category"), [r for r in CUDART if r[2]])
def test_cudart_message(number: int, message: str, code: str, category: str) -> None:
    root = root_finding(f"RuntimeError: CUDA error: {message}{_NOTE}")
    assert root is not None and (root.code, root.category) == (code, category), (number, message, root)


# cudart's messages of a program's own mistake (an argument, a pointer, a launch configuration, a kernel's
# fault in one process, stream capture) or of teardown ("driver shutting down"): no root-cause class of the
# environment; silent in a one-process paste (a kernel fault among ranks is gpu_runtime's RUN244).
@pytest.mark.parametrize(("number", "message"), [(r[0], r[1]) for r in CUDART if not r[2]])
def test_cudart_program_side_message_is_silent(number: int, message: str) -> None:
    assert root_finding(f"RuntimeError: CUDA error: {message}{_NOTE}") is None, (number, message)


@pytest.mark.parametrize("line", NO_CLASS)
def test_failure_without_a_class_stays_silent(line: str) -> None:
    assert root_finding(line) is None, line


@pytest.mark.parametrize("line", BENIGN)
def test_benign_line_stays_silent(line: str) -> None:
    assert root_finding(line) is None, line


# The near-misses of this sweep's rows: lines that share their words and say no failure.
NEAR_MISSES = [
    # build_fit's extension row: ninja's healthy ends, a build's step, the fallback DeepSpeed >= 0.17 takes
    "ninja: no work to do.",
    "[1/3] c++ -MMD -MF cpu_adam.o.d -DTORCH_EXTENSION_NAME=cpu_adam -c cpu_adam.cpp -o cpu_adam.o",
    "ninja: build stopped: subcommand failed.\n[WARNING] FusedAdam CUDA build failed, falling back to "
    "torch.optim.AdamW",
    "Emitting ninja build file /root/.cache/torch_extensions/py310_cu121/fused_adam/build.ninja...",
    # the toolkit row: DeepSpeed's accepted combination
    "Installed CUDA version 11.8 does not match the version torch was compiled with 11.7 but since the APIs "
    "are compatible, accepting this combination",
    # the arch row: cuBLAS settings and healthy statuses
    "CUBLAS_WORKSPACE_CONFIG=:4096:8 is set for deterministic cuBLAS",
    "torch.backends.cudnn.version() = 8902; cuDNN version mismatch check passed",
    # the loader row: a symbol of another program's environment, with its library cut off
    "ImportError: undefined symbol: PyFPE_jbuf",
    "OSError: undefined symbol: ffi_type_pointer, version LIBFFI_BASE_7.0",
    # launch_env's srun: the raise statement a traceback shows, submitit's healthy detection
    "    raise RuntimeError('Could not detect \"srun\", are you indeed on a slurm cluster?')",
    "submitit INFO (2024-01-01 00:00:00,000) - Detected srun at /usr/bin/srun, running on a slurm cluster",
    # the fork row: Lightning's healthy note of its start method
    "Lightning will create new processes with the 'spawn' start method because CUDA is already initialized",
    # driver_env's operation-not-supported row: a file system's refusal, not CUDA's
    "fallocate: fallocate failed: operation not supported",
    # cloud_jobs' fd-limit row: the fds a healthy pass received
    "DEBUG: received 2 items of ancdata from worker 3",
    # driver_env's no-driver row: another module refused by Secure Boot, numba finding its driver
    "modprobe: ERROR: could not insert 'nvme_tcp': Required key not available",
    "numba.cuda: CUDA driver library found at /usr/lib/x86_64-linux-gnu/libcuda.so.1",
    # cuda_errors' generic initialization error: a retry note
    "INFO: CUDA driver initialization error count is 0",
    # torch/cuda/nccl.py's warning in a run that goes on (DataParallel on a build without NCCL; the released
    # decoys v10g-other_ambiguous-005 and v16a-other_ambiguous-004 print it and finish)
    "/usr/local/lib/python3.8/dist-packages/torch/cuda/nccl.py:15: UserWarning: PyTorch is not compiled with "
    "NCCL support\n  warnings.warn('PyTorch is not compiled with NCCL support')\n"
    "INFO: running the benchmark..\nOK: finished running benchmark..",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_stays_silent(line: str) -> None:
    assert root_finding(line) is None, line


def test_extension_build_names_the_extension() -> None:
    root = root_finding("RuntimeError: Error building extension 'fused_adam'")
    assert root is not None and root.facts.get("extension") == "fused_adam"
    root = root_finding(
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1."
    )
    assert root is not None and root.facts.get("reason") == "extension_build_failed"


def test_cublas_arch_mismatch_names_cublas() -> None:
    root = root_finding(
        "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx(...)`"
    )
    assert root is not None and root.facts.get("arch") == "cublas"


def test_srun_missing_names_srun() -> None:
    root = root_finding('RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?')
    assert root is not None and root.facts.get("command") == "srun"
