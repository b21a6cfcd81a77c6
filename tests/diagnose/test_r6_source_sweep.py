"""r6's source sweep (2026-12-07): memory exhaustion and kills as the layers around torch report them,
rendered as real logs show them, with the class an engineer would name (or silence for what is no failure, or
says too little alone).

Sources read (format strings at their source, across the versions where they changed): DeepSpeed (ZeRO-3's
allocations under torch's OOM, see_memory_usage, stage3's "pytorch allocator cache flushes" warning, the
launcher's sigkill_handler, cpu_adam's build and load lines); HF Trainer / Accelerate (auto_find_batch_size:
"No executable batch size found, reached zero.", the trainer's batch-size line); bitsandbytes (csrc's
CUDA_CHECK_RETURN "Error %s at line %d in file %s"); xformers / flash-attn / Triton (OutOfResources "out of
resource: shared memory", ptxas, "too many resources requested for launch": NOT an OOM, see LEFT_SILENT);
vLLM (the KV-cache sizing errors of 0.x and V1, the memory profiler's, "Available KV cache memory", "# GPU
blocks"); SGLang ("Not enough memory. Please try to increase --mem-fraction-static."); text-generation-
inference's warmup; TensorFlow (ResourceExhaustedError "OOM when allocating tensor", bfc_allocator.cc's
records, stream_executor's cuda_driver.cc / cuda_blas.cc / cuda_dnn.cc, gpu_host_allocator.h, the op_kernel
OP_REQUIRES line, the report_tensor_allocations_upon_oom hint); JAX / XLA / torch_xla (RESOURCE_EXHAUSTED in
every shape: "Out of memory while trying to allocate", "Failed to allocate request for", "Attempting to
reserve ... at the bottom of memory", the TPU compiler's hbm report); cuDNN / cuBLAS / cuSOLVER / cuFFT /
cuSPARSE *_ALLOC_FAILED; NCCL's own allocations (include/alloc.h's "Cuda failure 'out of memory'", "Failed
to CUDA calloc / host alloc", 2.3-2.27; its host "Failed to malloc" is r1's, RUN171); CuPy, Numba, PyCUDA,
Paddle, MXNet, HIP and MPS allocators; the kernel's OOM killer in every kernel's shape (2.6's "Kill process
... score ... or sacrifice child", 4.14+'s "Killed process ... total-vm", 4.19+'s "oom-kill:constraint=",
the reaper, cgroup v1's "Task in ... killed as a result of limit", the panics of mm/oom_kill.c), dmesg /
dmesg -T / journalctl prefixes; cgroup v2 memory.events; systemd-oomd (v247-v255) and systemd's unit records;
Kubernetes (Reason: OOMKilled, exit 137, the kubelet's eviction, events); Docker (exit 137, "OOMKilled":
true, the shm bus error); Slurm's oom-kill records; Python MemoryError (in a DataLoader worker, in
multiprocessing's feeder thread, NumPy's _ArrayMemoryError); torch's DataLoader ("DataLoader worker (pid N)
is killed by signal: Killed / Bus error / Segmentation fault / Aborted / Terminated", "exited unexpectedly",
the worker's own "Unexpected bus error encountered in worker", the shared-memory file errors); libstdc++'s
std::bad_alloc, glibc's TLS allocation, bash's fork; the shells' and IDEs' "Killed" / exit 137 lines.

Messages read: 255 rendered lines kept here (a few guesses at wordings the sources do not print were dropped):
220 failures (asserted to their class) and 35 silent (BENIGN: no failure; LEFT_SILENT: a failure that names
no class of ours, or says too little alone). Before this sweep 22 of the failures were silent (systemd-oomd's
kill behind a journal prefix, systemd's "systemd-oomd killed N process(es) in this unit", TGI's warmup OOM,
the kernel's panics on memory, std::bad_alloc's terminate / what() / RuntimeError forms, glibc's TLS
allocation, bash's fork ENOMEM, Windows' WinError 1455 "paging file is too small", macOS's "Killed: 9",
`docker events`' "container oom", 2.6's "Out of Memory: Kill process", the OOM killer's "OOM victim ...
is already exiting" and "oom_reaper: unable to reap", TF's rendezvous "SameWorkerRecvDone unable to allocate"
and tf.data's "Failed to allocate memory for the batch"); after: 0. One had a wrong class: TF's "OOM when
allocating tensor ... on .../device:CPU:0 by allocator cpu" read as a GPU OOM, now host memory (RUN122).
Otherwise none had a wrong class (r1's RUN171 for NCCL's host "Failed to
malloc" is theirs and left as it is).

Families added (rows in existing modules, existing codes):
- systemd-oomd's kill in every shape (userspace_oom.py, RUN121): "Killed <cgroup> due to memory pressure /
  memory used / swap used" with or without the "systemd-oomd[N]:" the journal prefix reader takes off, and
  systemd's unit record "<unit>: systemd-oomd killed N|some process(es) in this unit" (the unit name too may
  be taken off as a host prefix);
- the kernel's panics on memory (userspace_oom.py, RUN121): "Out of memory and no killable processes...",
  "System is deadlocked on memory", "Out of memory: system-wide|compulsory panic_on_oom is enabled";
- native host allocation failures (userspace_oom.py, RUN122, tier 1): libstdc++'s "terminate called after
  throwing an instance of 'std::bad_alloc'" and "what():  std::bad_alloc", torch's "RuntimeError:
  std::bad_alloc", glibc's "cannot allocate memory for thread-local data", bash's "fork: (retry: )Cannot
  allocate memory";
- Windows' commit limit (userspace_oom.py, RUN122): "[WinError 1455] The paging file is too small for this
  operation to complete" (DataLoader workers on Windows), as OSError or as a DLL load failure;
- macOS's strsignal for SIGKILL, "Killed: 9", in the shell's records (host_oom.py's shell row, RUN121);
- `docker events`' "container oom <id>" (userspace_oom.py, RUN121);
- the OOM killer's records of a victim already dying (userspace_oom.py, RUN121): "OOM victim N (x) is already
  exiting. Skip killing the task", "oom_reaper: unable to reap pid:N (x)", and 2.6's capitalised "Out of
  Memory: Kill process N (x) score S and children.";
- TensorFlow's host-memory OOMs (oom_layers.py's TF row, RUN122): "OOM when allocating tensor ... by allocator
  cpu" (mklcpu), tf.data's "Failed to allocate memory for the batch of component N", the rendezvous'
  "SameWorkerRecvDone unable to allocate output tensor" by its key's destination device (GPU: RUN101);
- text-generation-inference's warmup OOM (oom_frameworks.py, RUN101): "Not enough memory to handle N
  prefill|total tokens" (the number and "tokens" required: C libraries say "Not enough memory to handle" too).

Released misses (r6_cases.txt, 48 cases): none holds a memory or kill record these rows read. Most pastes are
cut before the error line (a traceback's frames, a DeepSpeed or LLaMA-Factory start-up, a build log), or
carry only an echo (ChildFailedError, "exit code 1", NCCL's "unhandled cuda error" without its "Last error"),
and stay silent or keep the echo's finding as the brief asks. v12m-cuda_oom-005's "Tried to allocate more than
1EB memory" under broadcast_object_list is read on purpose as a garbage size from a failed collective
(cuda_oom.py); its label is contested across corpora (v8g, v20B label it otherwise) and is left as it is.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, root_category, root_finding

GPU = "cuda_oom"
KILLED = ("host_oom", "process_crash")  # the corpus' process_killed class
# An exit record that says a process failed but not why: the generic exit (RUN133) or silence.
TOO_LITTLE = (None, "process_crash")

FAILURES: list[tuple[str, object]] = [
    (
        (
            '  File "/usr/lib/python3/dist-packages/deepspeed/runtime/zero/stage3.py", line 1200, in '
            "_create_fp16_partitions\n    "
            "self.fp16_partitioned_groups_flat.append(torch.empty(int(flat_numel), dtype=self.dtype, "
            "device=self.device))\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            "3.00 GiB"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: E "
            "external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:1203] failed to alloc "
            "8589934592 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:232] failed to "
            "create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:764] failed "
            "to allocate 2.00G (2147483648 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of "
            "memory; total memory reported: 16945512448"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed "
            "to allocate 15.75G (16914055168 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of "
            "memory"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:424] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.0KiB (rounded to 1024).  "
            "Current allocation summary follows."
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB (rounded to "
            "2147483648)requested by op MatMul"
        ),
        GPU,
    ),
    (
        (
            "2023-05-01 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES "
            "failed at conv_ops.cc:684 : RESOURCE_EXHAUSTED: OOM when allocating tensor with "
            "shape[32,64,224,224] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by "
            "allocator GPU_0_bfc"
        ),
        GPU,
    ),
    (
        (
            "2024-01-01 12:00:00.123456: W external/xla/xla/tsl/framework/bfc_allocator.cc:501] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 20.00GiB (rounded to "
            "21474836480)requested by op "
        ),
        GPU,
    ),
    (
        (
            "2024-02-01 10:00:00.000000: E external/xla/xla/pjrt/gpu/se_gpu_pjrt_client.cc:889] Failed "
            "to allocate 76.58GiB"
        ),
        GPU,
    ),
    (
        (
            "2024-02-01 10:00:00.000000: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2716] "
            "Execution of replica 0 failed: RESOURCE_EXHAUSTED: Attempting to reserve 10.50G at the "
            "bottom of memory. That was not possible. There are 8.00G free, 0B reserved, and 8.00G "
            "reservable."
        ),
        GPU,
    ),
    (
        (
            "2024-02-01 10:00:00.000000: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1015] "
            "could not allocate host memory. CUDA_ERROR_OUT_OF_MEMORY: out of memory"
        ),
        GPU,
    ),
    (
        (
            "2024-02-01 10:00:00.000000: W external/tsl/tsl/framework/bfc_allocator.cc:485] Allocator "
            "(GPU_0_bfc) ran out of memory trying to allocate 16.00GiB (rounded to "
            "17179869184)requested by op"
        ),
        GPU,
    ),
    (
        (
            "2024-02-01 10:00:00.000000: W "
            "external/xla/xla/service/gpu/gpu_conv_algorithm_picker.cc:800] Failed to determine best "
            "cudnn convolution algorithm for: RESOURCE_EXHAUSTED: Failed to allocate request for "
            "3.05GiB (3276800000B) on device ordinal 0"
        ),
        GPU,
    ),
    ("CUDA out of memory", GPU),
    ("CUDA_ERROR_OUT_OF_MEMORY", GPU),
    (
        (
            "E0101 12:00:00.123456 1234 cuda_driver.cc:1110] failed to allocate 2.00GiB (2147483648 "
            "bytes) from device: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory"
        ),
        GPU,
    ),
    (
        (
            "E0201 10:00:00.000000 12345 pjrt_stream_executor_client.cc:2826] Execution of replica 0 "
            "failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes."
        ),
        GPU,
    ),
    (
        (
            "ERROR 01-01 12:00:00 [core.py:586] EngineCore failed to start.\nERROR 01-01 12:00:00 "
            "[core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."
        ),
        GPU,
    ),
    ("ERROR: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY", GPU),
    ("Error out of memory at line 380 in file /src/csrc/pythonInterface.cpp", GPU),
    (
        (
            "Hint: If you want to see a list of allocated tensors when OOM happens, add "
            "report_tensor_allocations_upon_oom to RunOptions for current allocation info."
        ),
        GPU,
    ),
    (
        (
            "MemoryError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate "
            "256.000000MB memory on GPU 0, 23.500000GB memory has been allocated and available memory "
            "is only 10.000000MB."
        ),
        GPU,
    ),
    ("No executable batch size found, reached zero.", GPU),
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", GPU),
    (
        (
            "ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024] and type float "
            "on /job:worker/replica:0/task:1/device:GPU:0 by allocator GPU_0_bfc [Op:MatMul]"
        ),
        GPU,
    ),
    ("RuntimeError: CUDA Error: out of memory", GPU),
    ("RuntimeError: CUDA driver error: out of memory", GPU),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", GPU),
    (
        ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"),
        GPU,
    ),
    ("RuntimeError: CUDA error: CUDA driver error: out of memory", GPU),
    (
        ("RuntimeError: CUDA error: CUSPARSE_STATUS_ALLOC_FAILED when calling `cusparseCreate(handle)`"),
        GPU,
    ),
    ("RuntimeError: CUDA error: out of memory", GPU),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
            "reported at some other API call"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
            "reported at some other API call, so the stacktrace below might be incorrect."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
            "reported at some other API call,so the stacktrace below might be incorrect.\nFor "
            "debugging consider passing CUDA_LAUNCH_BLOCKING=1."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory\nCompile with `TORCH_USE_CUDA_DSA` to enable "
            "device-side assertions."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA error: out of memory (malloc at "
            "/opt/conda/conda-bld/pytorch/c10/cuda/CUDACachingAllocator.cpp:764)"
        ),
        GPU,
    ),
    ("RuntimeError: CUDA error: out of memory at /pytorch/aten/src/THC/THCGeneral.cpp:844", GPU),
    ("RuntimeError: CUDA error: out of memory when calling `cudaHostAlloc`", GPU),
    (
        (
            "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy "
            "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when "
            "initializing the engine."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 0 bytes (GPU 0; 15.78 GiB total "
            "capacity; 0 bytes already allocated; 0 bytes free; 0 bytes reserved in total by PyTorch)"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 12.00 MiB (GPU 0; 10.76 GiB total "
            "capacity; 9.61 GiB already allocated; 3.44 MiB free; 9.83 GiB reserved in total by "
            "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
            "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
            "capacity; 14.21 GiB already allocated; 3.75 MiB free; 14.39 GiB reserved in total by "
            "PyTorch)"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: Error in memory profiling. Initial free memory 10.2 GiB, current free "
            "memory 12.3 GiB. This happens when the GPU memory was not properly cleaned up before "
            "initializing the vLLM instance."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB (GPU 0; 63.98 GiB total "
            "capacity; 60.12 GiB already allocated)"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: MPS backend out of memory (MPS allocated: 17.50 GB, other allocations: 0 "
            "bytes, max allowed: 18.13 GB). Tried to allocate 1.00 GB on private pool."
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
            "unhandled cuda error, NCCL version 2.14.3\nncclUnhandledCudaError: Call to CUDA function "
            "failed.\nLast error:\nCuda failure 'out of memory'"
        ),
        GPU,
    ),
    ("RuntimeError: No executable batch size found, reached zero.", GPU),
    (
        (
            "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
            "`--max-batch-prefill-tokens`"
        ),
        GPU,
    ),
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", GPU),
    (
        (
            "RuntimeError: Resource exhausted: Attempting to reserve 4.5G at the bottom of memory. "
            "That was not possible. There are 2.1G free, 0B reserved, and 2.1G reservable."
        ),
        GPU,
    ),
    ("RuntimeError: Triton Error [CUDA]: out of memory", GPU),
    ("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution", GPU),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", GPU),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", GPU),
    ("RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", GPU),
    (
        (
            "RuntimeError: cuda runtime error (2) : out of memory at "
            "/pytorch/aten/src/THC/THCCachingAllocator.cpp:510"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: cuda runtime error (2) : out of memory at "
            "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:296"
        ),
        GPU,
    ),
    (
        (
            "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling "
            "`cusolverDnCreate(handle)`"
        ),
        GPU,
    ),
    (
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=844 error=2 : out of memory"),
        GPU,
    ),
    (
        (
            "ValueError: 4.00 GiB KV cache is needed, which is larger than the available KV cache "
            "memory (2.31 GiB). Based on the available memory, the estimated maximum model length is "
            "18000. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine."
        ),
        GPU,
    ),
    (
        (
            "ValueError: Free memory on device (30.5/79.2 GiB) on startup is less than desired GPU "
            "memory utilization (0.9, 71.3 GiB). Decrease GPU memory utilization or reduce GPU memory "
            "used by other processes."
        ),
        GPU,
    ),
    (
        (
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine."
        ),
        GPU,
    ),
    (
        (
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory.html for more details."
        ),
        GPU,
    ),
    (
        (
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens "
            "that can be stored in KV cache (18096). Try increasing `gpu_memory_utilization` or "
            "decreasing `max_model_len` when initializing the engine."
        ),
        GPU,
    ),
    (
        (
            "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 "
            "GiB KV cache is needed, which is larger than the available KV cache memory (8.52 GiB). "
            "Based on the available memory, the estimated maximum model length is 69792. Try "
            "increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
            "engine."
        ),
        GPU,
    ),
    ("Warning: 11 pytorch allocator cache flushes since last step.", GPU),
    (
        (
            "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.00GiB (2147483648B) "
            "on device ordinal 0"
        ),
        GPU,
    ),
    (
        (
            "XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory "
            "in memory space hbm. Used 17.51G of 15.48G hbm. Exceeded hbm capacity by 2.03G."
        ),
        GPU,
    ),
    (
        (
            "[2023-05-01 10:00:00,000] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache "
            "flushes since last step. this happens when there is high memory pressure and is "
            "detrimental to performance. if this is happening frequently consider adjusting settings "
            "to reduce memory consumption. If you are unable to make the cache flushes go away "
            "consider adding get_accelerator().empty_cache() calls in your training loop to ensure "
            "that all ranks flush their caches at the same time"
        ),
        GPU,
    ),
    (
        (
            "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 "
            "has a total capacity of 79.15 GiB of which 1.2 GiB is free."
        ),
        GPU,
    ),
    ("cudaErrorMemoryAllocation", GPU),
    (
        (
            "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes "
            "(allocated so far: 14,000,000,000 bytes)."
        ),
        GPU,
    ),
    (
        (
            "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
            "34359738368 bytes."
        ),
        GPU,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: "
            "Attempting to allocate 1.00G. That was not possible. There are 500.0M free.; (0x0x0_HBM0)"
        ),
        GPU,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating "
            "8589934592 bytes."
        ),
        GPU,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
            "allocate 17179869184 bytes."
        ),
        GPU,
    ),
    (
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
            "allocate 24.00GiB."
        ),
        GPU,
    ),
    (
        (
            "mxnet.base.MXNetError: [10:00:00] src/storage/./pooled_storage_manager.h:157: cudaMalloc "
            "failed: out of memory"
        ),
        GPU,
    ),
    (
        (
            "node01:1234:1240 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of "
            "memory'\nnode01:1234:1240 [0] NCCL INFO include/alloc.h:111 -> 1"
        ),
        GPU,
    ),
    ("node01:1234:1240 [0] include/alloc.h:124 NCCL WARN Failed to CUDA calloc 6291456 bytes", GPU),
    ("node01:1234:1240 [0] include/alloc.h:209 NCCL WARN Cuda failure 2 'out of memory'", GPU),
    ("node01:1234:1240 [0] include/alloc.h:29 NCCL WARN Cuda failure 'out of memory'", GPU),
    ("node01:1234:1240 [0] include/alloc.h:40 NCCL WARN Failed to CUDA host alloc 4096 bytes", GPU),
    ("node01:1234:1240 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'", GPU),
    ("node01:1234:1240 [0] misc/cudawrap.cc:188 NCCL WARN Cuda failure 2 'out of memory'", GPU),
    ("node01:1234:1240 [0] transport/p2p.cc:200 NCCL WARN Cuda failure 'out of memory'", GPU),
    (
        (
            "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in "
            "CUDA_ERROR_OUT_OF_MEMORY"
        ),
        GPU,
    ),
    (
        (
            "paddle.fluid.core_avx.EnforceNotMet: ResourceExhaustedError: Out of memory error on GPU "
            "0. Cannot allocate 1.000000GB memory on GPU 0, 15.000000GB memory has been allocated and "
            "available memory is only 100.000000MB."
        ),
        GPU,
    ),
    ("pycuda._driver.MemoryError: cuMemAlloc failed: out of memory", GPU),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
            "a.shape=(32, 784), b.shape=(784, 10), m=32, n=10, k=784"
        ),
        GPU,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
            "/job:localhost/replica:0/task:0/device:CPU:0 to "
            "/job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is "
            "not initialized."
        ),
        GPU,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError:  OOM when allocating "
            "tensor with shape[64,128,56,56] and type half on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\\t [[node "
            "model/conv2d/Conv2D (defined at train.py:10) ]]"
        ),
        GPU,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.\n  "
            "(0) Resource exhausted: OOM when allocating tensor with shape[8,1024,1024] and type float "
            "on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
        ),
        GPU,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
            "tensor with shape[32,512,28,28] and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
        ),
        GPU,
    ),
    (
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory "
            "[Op:AddV2]"
        ),
        GPU,
    ),
    (
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
            "capacity of 23.65 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this "
            "process has 23.13 GiB memory in use."
        ),
        GPU,
    ),
    (
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
            "total capacity of 79.10 GiB of which 8.88 MiB is free. Process 2345 has 79.08 GiB memory "
            "in use."
        ),
        GPU,
    ),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU", GPU),
    ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 MiB.", GPU),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory.", GPU),
    (
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
            "total capacity of 79.15 GiB of which 1.2 GiB is free."
        ),
        GPU,
    ),
    (
        (
            "torch.distributed.DistBackendError: NCCL error in: "
            "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nLast error:\nFailed to CUDA calloc "
            "async 4 bytes"
        ),
        GPU,
    ),
    (
        (
            "torch.distributed.DistBackendError: NCCL error in: "
            "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled cuda error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version 2.18.1\nncclUnhandledCudaError: Call to CUDA "
            "function failed.\nLast error:\nCuda failure 'out of memory'"
        ),
        GPU,
    ),
    ('        "OOMKilled": true,', KILLED),
    ("      reason: OOMKilled", KILLED),
    ("    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137", KILLED),
    ("    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137", KILLED),
    ("    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137", KILLED),
    (
        (
            '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 244, in _feed\n    obj = '
            "_ForkingPickler.dumps(obj)\nMemoryError"
        ),
        KILLED,
    ),
    ("  Message:          The node had condition: [MemoryPressure].", KILLED),
    ("  what():  std::bad_alloc", KILLED),
    (" Bus error (core dumped) python train.py", KILLED),
    ("-bash: fork: Cannot allocate memory", KILLED),
    ("/bin/sh: line 1: 12345 Killed                  python train.py", KILLED),
    ("/bin/sh: line 1: 12345 Killed: 9               python train.py", KILLED),
    (
        (
            "2023-05-01T10:00:00.000000000Z container oom "
            "3f2a9c1b7d4e8f60a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718 (image=pytorch:latest, "
            "name=trainer)"
        ),
        KILLED,
    ),
    ("Bus error (core dumped)", KILLED),
    (
        (
            "Dec 07 10:00:00 node01 kernel: Memory cgroup out of memory: Killed process 12345 "
            "(pt_main_thread) total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB, shmem-rss:0kB, "
            "UID:0 pgtables:200000kB oom_score_adj:0"
        ),
        KILLED,
    ),
    (
        (
            "Dec 07 10:00:00 node01 kernel: Out of memory: Killed process 12345 (python3) "
            "total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB, shmem-rss:0kB, UID:1000 "
            "pgtables:200000kB oom_score_adj:0"
        ),
        KILLED,
    ),
    (
        (
            "Dec 07 10:00:00 node01 systemd-oomd[567]: Killed "
            "/user.slice/user-1000.slice/session-1.scope due to memory pressure for "
            "/user.slice/user-1000.slice being 92.45% > 50.00% for > 20s with reclaim activity"
        ),
        KILLED,
    ),
    (
        (
            "Dec 07 10:00:00 node01 systemd-oomd[567]: Killed "
            "/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-code-1234.scope due to "
            "memory used (62.0G) / total (64.0G) and swap used (15.9G) / total (16.0G) being more than "
            "90.00%"
        ),
        KILLED,
    ),
    (
        (
            "Dec 07 10:00:00 node01 systemd[1]: session-1.scope: A process of this unit has been "
            "killed by the OOM killer."
        ),
        KILLED,
    ),
    (
        (
            "Dec 07 10:00:00 node01 systemd[1]: session-1.scope: systemd-oomd killed 1 process(es) in "
            "this unit."
        ),
        KILLED,
    ),
    ("Dec 07 10:00:00 node01 systemd[1]: train.service: Failed with result 'oom-kill'.", KILLED),
    (
        (
            "Dec 07 10:00:00 node01 systemd[1]: user@1000.service: systemd-oomd killed 12 process(es) "
            "in this unit."
        ),
        KILLED,
    ),
    ("ERROR: Job failed: exit code 137", KILLED),
    (
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
            "shared memory (shm)."
        ),
        KILLED,
    ),
    (
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
            "shared memory (shm).\n ERROR: Unexpected bus error encountered in worker. This might be "
            "caused by insufficient shared memory (shm)."
        ),
        KILLED,
    ),
    (
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
            "shared memory (shm).\n Traceback (most recent call last):\nRuntimeError: DataLoader "
            "worker (pid 12345) is killed by signal: Bus error. It is possible that dataloader's "
            "workers are out of shared memory. Please try to raise your shared memory limit."
        ),
        KILLED,
    ),
    ("ERROR: Unexpected floating-point exception encountered in worker.", KILLED),
    ("ERROR: Unexpected segmentation fault encountered in worker.", KILLED),
    (
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 "
            "(pid: 123) of binary: /opt/conda/bin/python"
        ),
        KILLED,
    ),
    ("Exception: process 0 terminated with signal SIGKILL", KILLED),
    (
        (
            "ImportError: DLL load failed while importing _C: The paging file is too small for this "
            "operation to complete."
        ),
        KILLED,
    ),
    ("Kernel panic - not syncing: Out of memory and no killable processes...", KILLED),
    ("Killed", KILLED),
    ("Killed (exit code 137)", KILLED),
    ("Killed: 9", KILLED),
    ("MemoryError", KILLED),
    ("MemoryError: Caught MemoryError in DataLoader worker process 0.", KILLED),
    (
        (
            "MemoryError: Unable to allocate 3.00 GiB for an array with shape (1000000, 800) and data "
            "type float32"
        ),
        KILLED,
    ),
    ("MemoryError: std::bad_alloc", KILLED),
    ("OSError: [Errno 12] Cannot allocate memory", KILLED),
    ("OSError: [Errno 12] Cannot allocate memory: '/usr/bin/git'", KILLED),
    ("OSError: [Errno 28] No space left on device: '/dev/shm/abc'", KILLED),
    (
        (
            "OSError: [WinError 1455] The paging file is too small for this operation to complete. "
            'Error loading "C:\\Python310\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or '
            "one of its dependencies."
        ),
        KILLED,
    ),
    ("Pod train-worker-0 failed: OOMKilled", KILLED),
    ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", KILLED),
    ("Process finished with exit code 137 (interrupted by signal 9:SIGKILL)", KILLED),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Aborted.", KILLED),
    (
        (
            "RuntimeError: DataLoader worker (pid 12345) is killed by signal: Bus error. It is "
            "possible that dataloader's workers are out of shared memory. Please try to raise your "
            "shared memory limit."
        ),
        KILLED,
    ),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.", KILLED),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed. ", KILLED),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Segmentation fault.", KILLED),
    ("RuntimeError: DataLoader worker (pid 12345) is killed by signal: Terminated.", KILLED),
    (
        (
            "RuntimeError: Too many open files. Communication with the workers is no longer possible. "
            "Please increase the limit using `ulimit -n` in the shell or change the sharing strategy "
            "by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning "
            "of your code"
        ),
        KILLED,
    ),
    (
        (
            "RuntimeError: [enforce fail at CPUAllocator.cpp:68] . DefaultCPUAllocator: can't allocate "
            "memory: you tried to allocate 4194304 bytes. Error code 12 (Cannot allocate memory)"
        ),
        KILLED,
    ),
    (
        (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough "
            "memory: you tried to allocate 2147483648 bytes."
        ),
        KILLED,
    ),
    (
        (
            "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't "
            "allocate memory: you tried to allocate 2147483648 bytes. Error code 12 (Cannot allocate "
            "memory)"
        ),
        KILLED,
    ),
    ("RuntimeError: received 0 items of ancdata", KILLED),
    ("RuntimeError: std::bad_alloc", KILLED),
    (
        (
            "RuntimeError: unable to allocate shared memory(shm) for file </torch_12345_1234567890_0>: "
            "Resource temporarily unavailable (11)"
        ),
        KILLED,
    ),
    (
        (
            "RuntimeError: unable to mmap 1048576 bytes from file </torch_12345_1234567890>: Cannot "
            "allocate memory (12)"
        ),
        KILLED,
    ),
    (
        (
            "RuntimeError: unable to open shared memory object </torch_12345_1234567890> in read-write "
            "mode: Too many open files (24)"
        ),
        KILLED,
    ),
    (
        ("RuntimeError: unable to write to file </torch_12345_1234567890_0>: No space left on device (28)"),
        KILLED,
    ),
    ("Signal 9 (SIGKILL) received by PID 12345", KILLED),
    (
        (
            'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    x = '
            "torch.zeros(10**12)\nRuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. "
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000000 bytes. "
            "Error code 12 (Cannot allocate memory)"
        ),
        KILLED,
    ),
    (
        (
            "Warning  Evicted    12s   kubelet  The node was low on resource: ephemeral-storage. "
            "Threshold quantity: 10Gi, available: 2Gi."
        ),
        KILLED,
    ),
    (
        (
            "Warning  Evicted    pod/train-0  The node was low on resource: memory. Container pytorch "
            "was using 60Gi, which exceeds its request of 32Gi."
        ),
        KILLED,
    ),
    (
        ("Warning  OOMKilling  node/node01  Memory cgroup out of memory: Killed process 12345 (python)"),
        KILLED,
    ),
    (
        (
            "[12345.678901] Killed process 12345 (python) total-vm:123456789kB, anon-rss:98765432kB, "
            "file-rss:0kB"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] Memory cgroup out of memory: Kill process 12345 (python) score 1000 or "
            "sacrifice child"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] Memory cgroup out of memory: Killed process 12345 (python) "
            "total-vm:123456789kB, anon-rss:98765432kB, file-rss:0kB, shmem-rss:0kB, UID:0 "
            "pgtables:200000kB oom_score_adj:0"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] Out of memory (oom_kill_allocating_task): Killed process 12345 (python) "
            "total-vm:1234kB, anon-rss:1234kB, file-rss:0kB, shmem-rss:0kB"
        ),
        KILLED,
    ),
    ("[12345.678901] Out of memory: Kill process 12345 (python) score 950 or sacrifice child", KILLED),
    (
        (
            "[12345.678901] Out of memory: Killed process 12345 (python) total-vm:123456789kB, "
            "anon-rss:98765432kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:200000kB "
            "oom_score_adj:0"
        ),
        KILLED,
    ),
    ("[12345.678901] Task in /docker/abc killed as a result of limit of /docker/abc", KILLED),
    (
        (
            "[12345.678901] "
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=docker-abc.scope,mems_allowed="
            "0-1,oom_memcg=/system.slice/docker-abc.scope,task_memcg=/system.slice/docker-abc.scope,tas"
            "k=python,pid=12345,uid=0"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] "
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,t"
            "ask_memcg=/user.slice,task=python3,pid=12345,uid=1000"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] oom_reaper: reaped process 12345 (python), now anon-rss:0kB, file-rss:0kB, "
            "shmem-rss:0kB"
        ),
        KILLED,
    ),
    (
        (
            "[12345.678901] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), "
            "order=0, oom_score_adj=0"
        ),
        KILLED,
    ),
    ("[1]    12345 killed     python train.py", KILLED),
    (
        (
            "[2023-05-01 10:00:00,000] [INFO] [launch.py:316:sigkill_handler] Killing subprocess "
            "12345\n[2023-05-01 10:00:00,000] [ERROR] [launch.py:322:sigkill_handler] "
            "['/usr/bin/python', '-u', 'train.py', '--local_rank=0'] exits with return code = -9"
        ),
        KILLED,
    ),
    (
        (
            "[2023-05-01 10:00:00,000] [INFO] [utils.py:785:see_memory_usage] CPU Virtual Memory:  "
            "used = 120.70 GB, percent = 97.9%"
        ),
        KILLED,
    ),
    ("bash: line 1: 12345 Bus error               (core dumped) python train.py", KILLED),
    ("cannot allocate memory for thread-local data: ABORT", KILLED),
    ("command terminated with exit code 137", KILLED),
    ("error: exit status 137", KILLED),
    ("exited with code 137", KILLED),
    ("low 0\nhigh 0\nmax 1234\noom 2\noom_kill 2", KILLED),
    (
        (
            "numpy.core._exceptions.MemoryError: Unable to allocate 1.00 GiB for an array with shape "
            "(134217728,) and data type float64"
        ),
        KILLED,
    ),
    (
        (
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.00 GiB for an array with "
            "shape (134217728,) and data type float64"
        ),
        KILLED,
    ),
    (
        (
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array with "
            "shape (1000, 1000, 1000) and data type float64"
        ),
        KILLED,
    ),
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", KILLED),
    (
        (
            "slurmstepd: error: Detected 1 oom-kill event(s) in step 12345.batch cgroup. Some of your "
            "processes may have been killed by the cgroup out-of-memory handler."
        ),
        KILLED,
    ),
    (
        (
            "slurmstepd: error: Detected 1 oom_kill event in StepId=12345.0. Some of the step tasks "
            "have been OOM Killed."
        ),
        KILLED,
    ),
    ("terminate called after throwing an instance of 'std::bad_alloc'", KILLED),
    ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", KILLED),
    ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 12345 got signal: 9", KILLED),
    (
        (
            "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: "
            "12345) of binary: /usr/bin/python"
        ),
        KILLED,
    ),
    (
        ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL"),
        KILLED,
    ),
    (
        ("torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL"),
        KILLED,
    ),
    (
        (
            "torch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 0 terminated with the "
            "following error:\nMemoryError"
        ),
        KILLED,
    ),
    ("trainer-0   0/1     OOMKilled   3 (12s ago)   5m", KILLED),
    ("zsh: killed     python train.py", KILLED),
    ("RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly", TOO_LITTLE),
    (
        (
            "RuntimeError: DataLoader worker (pid(s) 12345) exited unexpectedly with exit code 1. "
            "Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better "
            "error trace."
        ),
        TOO_LITTLE,
    ),
    ("RuntimeError: DataLoader worker (pid(s) 12345, 12346) exited unexpectedly", TOO_LITTLE),
    # r6's third batch: TF's host-memory OOMs, the rendezvous copy, older kernels' and dying victims' records
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: SameWorkerRecvDone unable to "
        "allocate output tensor. Key: /job:localhost/replica:0/task:0/device:CPU:0;0000000000000001;"
        "/job:localhost/replica:0/task:0/device:GPU:0;edge_12_IteratorGetNext;0:0",
        GPU,
    ),
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
        "shape[100000,10000] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
        "host_oom",
    ),
    (
        "ResourceExhaustedError: Failed to allocate memory for the batch of component 0 [Op:IteratorGetNext]",
        "host_oom",
    ),
    ("[  123.456789] Out of Memory: Kill process 1234 (python) score 950 and children.", KILLED),
    ("[  123.456789] Out of memory: kill process 1234 (python) score 900 or a child", KILLED),
    (
        "[  123.456789] Killed process 1234, UID 1000, (python) total-vm:12345678kB, anon-rss:1234567kB, "
        "file-rss:1234kB",
        KILLED,
    ),
    (
        "[  123.456789] Memory cgroup out of memory: OOM victim 1234 (python) is already exiting. Skip "
        "killing the task",
        KILLED,
    ),
    ("[  123.456789] oom_reaper: unable to reap pid:1234 (python)", KILLED),
    (
        "[  123.456789] python invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), nodemask=(null), "
        "order=0, oom_score_adj=0",
        KILLED,
    ),
    (
        "[  123.456789] python invoked oom-killer: gfp_mask=0x201da, order=0, oom_adj=0, oom_score_adj=0",
        KILLED,
    ),
]

# No failure: progress, sizing and memory reports of healthy runs, and messages that say the run goes on.
BENIGN: list[str] = [
    "[2024-01-01 12:00:00,000] [INFO] [utils.py:802:see_memory_usage] MA 10.2 GB         Max_MA 12.1 GB   "
    "      "
    "CA 12.3 GB         Max_CA 12 GB",
    "[2023-05-01 10:00:00,000] [INFO] [partition_parameters.py:453:__exit__] finished initializing model "
    "with "
    "6.74B parameters",
    "[2023-05-01 10:00:00,000] [WARNING] [cpu_adam.py:84:__init__] FP16 params for CPUAdam may not work "
    "on AMD CPUs",
    "[INFO|trainer.py:1700] 2023-05-01 10:00:00,000 >> Currently training with a batch size of: 8",
    "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so",
    "INFO 01-01 12:00:00 [gpu_worker.py:227] Available KV cache memory: 52.31 GiB",
    "INFO 01-01 12:00:00 worker.py:200 # GPU blocks: 7281, # CPU blocks: 2048",
    # TF's bfc_allocator says itself that this one is no failure
    "2023-05-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator "
    "(GPU_0_bfc) ran "
    "out of memory trying to allocate 2.15GiB with freed_by_count=0. The caller indicates that this is not a "
    "failure, but may mean that there could be performance gains if more memory were available.",
    "2023-05-01 10:00:00.000000: I tensorflow/core/common_runtime/bfc_allocator.cc:1033] Sum Total of in-use "
    "chunks: 14.50GiB",
    "2023-05-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:491] "
    "****************************************************************************************************",
    "2023-05-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device "
    "/job:localhost/replica:0/task:0/device:GPU:0 with 14626 MB memory:  -> device: 0",
    "node01:1234:1240 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
    # systemd-oomd's reasoning before a kill (the kill's own line follows when it acts)
    "Dec 07 10:00:00 node01 systemd-oomd[567]: Considered 3 cgroups for killing, top candidates were:",
    "Dec 07 10:00:00 node01 systemd-oomd[567]: Swap used (95.00%) / total (100.00%) is more than 90.00%",
    "WARNING: The requested image's platform (linux/amd64) does not match the detected host platform",
    "BlockingIOError: [Errno 11] Resource temporarily unavailable",
    # bash's fork over the process limit (EAGAIN), not memory
    "sh: fork: retry: Resource temporarily unavailable",
    "Some parameters are on the meta device because they were offloaded to the cpu.",
]

# Failures left silent on purpose:
LEFT_SILENT: list[str] = [
    # A kernel's launch needs more shared memory or registers than the GPU has (Triton / Inductor autotune
    # configs, xformers, ptxas): a kernel configuration or GPU-generation mismatch, not memory exhaustion; no
    # class of ours names it (cuda_oom would send the engineer to the batch size, which does not help).
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: "
    "65536. Reducing block sizes or `num_stages` may help.",
    "torch._inductor.exc.InductorError: OutOfResources: out of resource: shared memory, Required: 131072, "
    "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
    "RuntimeError: CUDA error: too many resources requested for launch",
    "ptxas error   : Entry function 'xx' uses too much shared data (0x12000 bytes, 0xc000 max)",
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
    # TF's consequence line: its cause (a cuDNN version mismatch or memory) is in the lines above it
    "UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to "
    "initialize, so "
    "try looking to see if a warning log message was printed above.",
    # TF logs it and goes on (the op falls back or fails later with its own OOM)
    "2023-05-01 10:00:00.000000: E tensorflow/core/common_runtime/gpu/gpu_host_allocator.h:38] could not "
    "allocate pinned host memory of size: 2147483648",
    # too little alone: a counter, a bare errno text, the word alone, a cgroup v1 report line, a file name
    "oom_kill 3",
    "Cannot allocate memory",
    "std::bad_alloc",
    "[12345.678901] memory: usage 16777216kB, limit 16777216kB, failcnt 12345",
    "RuntimeError: unable to write to file </torch_12345_1234567890>",
    "OOM",
    "OSError: [Errno 28] No space left on device",
    # consequences whose cause is in the lines above or in the worker's own traceback
    "RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
    "RuntimeError: Pin memory thread exited unexpectedly",
    "The kernel appears to have died. It will restart automatically.",
]


@pytest.mark.parametrize("line,want", FAILURES)
def test_sweep_failures_get_their_class(line: str, want: object) -> None:
    got = root_category(line)
    assert got in (want if isinstance(want, tuple) else (want,)), (line, got)


@pytest.mark.parametrize("line", BENIGN + LEFT_SILENT)
def test_sweep_silent_lines_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


def test_sweep_table_size() -> None:
    assert (len(FAILURES), len(BENIGN) + len(LEFT_SILENT)) == (220, 35)


_NEW = [
    (
        "Dec 07 10:00:00 node01 systemd-oomd[567]: Killed /user.slice/user-1000.slice/session-1.scope due to "
        "memory pressure for /user.slice/user-1000.slice being 92.45% > 50.00% for > 20s with reclaim "
        "activity",
        "RUN121",
    ),
    (
        "systemd-oomd[601]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/app-code.scope "
        "due "
        "to memory used (62.0G) / total (64.0G) and swap used (15.9G) / total (16.0G) being more than 90.00%",
        "RUN121",
    ),
    (
        "Dec 07 10:00:00 node01 systemd[1]: session-1.scope: systemd-oomd killed 12 process(es) in this "
        "unit.",
        "RUN121",
    ),
    ("systemd[1]: user@1000.service: systemd-oomd killed some process(es) in this unit.", "RUN121"),
    ("Kernel panic - not syncing: Out of memory and no killable processes...", "RUN121"),
    (
        "[ 1234.567890] Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled",
        "RUN121",
    ),
    ("Kernel panic - not syncing: System is deadlocked on memory", "RUN121"),
    ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", "RUN122"),
    ("RuntimeError: std::bad_alloc", "RUN122"),
    ("cannot allocate memory for thread-local data: ABORT", "RUN122"),
    ("-bash: fork: Cannot allocate memory", "RUN122"),
    (
        "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
        '"C:\\Python310\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" '
        "or one of its dependencies.",
        "RUN122",
    ),
    (
        "2023-05-01T10:00:00.000000000Z container oom "
        "3f2a9c1b7d4e8f60a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718 "
        "(image=pytorch:latest, name=trainer)",
        "RUN121",
    ),
    ("bash: fork: retry: Cannot allocate memory", "RUN122"),
    (
        "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
        "`--max-batch-prefill-tokens`",
        "RUN101",
    ),
    (
        'Error: WebServer(Warmup(Generation("Not enough memory to handle 16000 total tokens with 4096 '
        "prefill "
        'tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`")))',
        "RUN101",
    ),
]


@pytest.mark.parametrize("prefix", [*LAUNCHER_PREFIXES, "2025-01-02T03:04:05.678 "])
@pytest.mark.parametrize("line,code", _NEW)
def test_new_family_rows_behind_every_prefix(prefix: str, line: str, code: str) -> None:
    log = "\n".join(prefix + ln for ln in line.split("\n"))
    f = root_finding(log)
    assert f is not None and f.code == code, (log, f)


# Lines that share the new rows' words and are no failure (or not this one): each stays silent.
NEAR_MISSES = [
    "Killed 3 processes due to memory pressure",
    "worker 3 is already exiting",
    "OOM victim selection policy: largest rss",
    "Failed to allocate memory for the batch",
    "systemd-oomd.service: Deactivated successfully.",
    "systemd[1]: Started systemd-oomd.service - Userspace Out-Of-Memory (OOM) Killer.",
    "ManagedOOMMemoryPressure=kill is set for user@1000.service; systemd-oomd watches it",
    "vm.panic_on_oom = 0",
    "kernel.panic = 10",
    "catch (const std::bad_alloc& e) {",
    "RuntimeError: std::bad_alloc was caught and retried",
    "  - std::bad_alloc on a corrupt index is reported as MemoryError since 0.4",
    "sh: fork: retry: Resource temporarily unavailable",
    "Not enough memory to handle image header (ihdr)",
    "NFS: not enough memory to handle mount options",
    "Set the paging file size to 32 GB if training crashes",
    "the container oom score is adjusted to -500",
    "SIGNAL_TEXT = {9: 'Killed: 9'}",
    "grep -c 'Killed: 9' run.log",
    "max_batch_prefill_tokens=4096 max_batch_total_tokens=16000 (enough memory to handle 4096 prefill "
    "tokens)",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_category(line) is None, line


def test_systemd_oomd_facts() -> None:
    f = root_finding("systemd[1]: session-3.scope: systemd-oomd killed 291 process(es) in this unit.")
    assert f is not None and f.facts.get("killer") == "systemd-oomd" and f.facts.get("processes") == 291


def test_bad_alloc_yields_to_a_named_cause() -> None:
    # tier 1: a CUDA OOM in the same log is the cause, the C++ allocation failure its echo or a side effect
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of "
        "79.15 GiB of which 1.2 GiB is free.\n"
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc"
    )
    f = root_finding(log)
    assert f is not None and f.category == "cuda_oom", f
