"""PaddlePaddle's distributed failure messages, swept from its source (paddlepaddle 2.6.2's python/paddle/
distributed/launch/ controllers/controller.py, master.py, collective.py, job/container.py; fleet/elastic/
manager.py; utils/launch_utils.py; spawn.py; device/__init__.py; and the strings of its libpaddle.so:
phi/core/distributed/store/tcp_store.cc, tcp_utils.cc/.h, memory/allocation/system_allocator.cc,
memory/detail/buddy_allocator.cc, phi/backends/dynload/cudnn.h, platform/init.cc's signal handler), each as a
user pastes it (glog's "W0301 10:30:00.123456 12345 file.cc:146] ", the launcher's "LAUNCH INFO <date> ",
inside Paddle's "Error Message Summary:" block), with the class each must get (None: a healthy run's lines).

Classes the project decided elsewhere and this table keeps: Paddle's "NCCL error(1), unhandled cuda error"
at communicator init (collective_helper.cc) is driver_env (RUN313, as torch's at init), mid-run nccl_usage
(RUN194); "CUDA error(999), unknown error" from a device query (cuda_info.cc) is driver_env, from a kernel's
context gpu_hardware (RUN323); an illegal memory access in one process alone is no distributed failure, under
the launcher gpu_hardware (RUN244).
"""

from __future__ import annotations

from typing import Optional

import pytest

from tests.helpers.diagnose_root import root_finding

G = "W0301 10:30:00.123456 12345 "
L = "LAUNCH INFO 2023-03-01 10:30:00,123 "
LE = "LAUNCH ERROR 2023-03-01 10:30:00,123 "
LW = "LAUNCH WARNING 2023-03-01 10:30:00,123 "
SUMMARY = "\n----------------------\nError Message Summary:\n----------------------\n"
CPP = (
    "--------------------------------------\nC++ Traceback (most recent call last):\n"
    "--------------------------------------\n0   paddle::distributed::ProcessGroupNCCL::AllReduce(...)\n"
    "1   paddle::distributed::ProcessGroupNCCL::Collective(...)\n2   phi::enforce::En"
    "forceNotMet::EnforceNotMet(common::ErrorSummary const&, char const*, int)\n"
    "3   phi::enforce::GetCurrentTraceBackString[abi:cxx11](bool)\n"
)
TB = 'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n    dist.all_reduce(x)\n'
TBI = (
    'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n   '
    " dist.init_parallel_env()\n"
)
CASES: list[tuple[str, Optional[str], str]] = [
    # --- launcher (paddle.distributed.launch 2.3+, controllers/controller.py, job/container.py)
    (
        "launch_container_code1",
        "process_crash",
        L
        + "Pod failed\n"
        + LE
        + (
            "Container failed !!!\nContainer rank 3 status failed cmd ['/usr/bin/python', '-u"
            "', 'train.py'] code 1 log log/workerlog.3 \nenv {'PADDLE_TRAINER_ID': '3'}\n"
        )
        + L
        + "------------------------- ERROR LOG DETAIL -------------------------\n"
        + TB
        + "RuntimeError: boom\n"
        + L
        + "Exit code 1\n",
    ),
    (
        "launch_container_sig9",
        "host_oom",
        L
        + "Pod failed\n"
        + LE
        + (
            "Container failed !!!\nContainer rank 6 status failed cmd ['/usr/bin/python', '-u"
            "', 'train.py'] code -9 log log/workerlog.6 \nenv {}\n"
        )
        + L
        + "------------------------- ERROR LOG DETAIL -------------------------\nepoch 0 step 100 loss 0.3\n"
        + L
        + "Exit code -9\n",
    ),
    (
        "launch_container_sig11",
        "process_crash",
        L
        + "Pod failed\n"
        + LE
        + (
            "Container failed !!!\nContainer rank 0 status failed cmd ['/usr/bin/python', '-u"
            "', 'train.py'] code -11 log log/workerlog.0 \nenv {}\n"
        )
        + L
        + "Exit code -11\n",
    ),
    (
        "launch_abort_old",
        "process_crash",
        (
            "INFO 2021-03-01 10:30:00,123 launch_utils.py:471] Local start 4 processes. First"
            " process distributed environment info (Only For Debug): \n"
            "ERROR 2021-03-01 10:35:00,123 launch_utils.py:642] ABORT!!! Out of all 4 trainer"
            "s, the trainer process with rank=[2] was aborted. Please check its log.\n"
        ),
    ),
    (
        "launch_abort_old_nolog",
        "process_crash",
        (
            "ABORT!!! Out of all 2 trainers, the trainer process with rank=[0, 1] was aborted"
            ". Please check its log.\n"
        ),
    ),
    (
        "launch_peer_not_ready",
        "rendezvous",
        L
        + "Waiting peer ready...\n"
        + LW
        + "peer not ready Job: default, mode collective, replicas 2[2:2], elastic False\n",
    ),
    ("launch_master_not_ready", "rendezvous", L + "Waiting peer start...\n" + LW + "master not ready\n" * 6),
    (
        "launch_start_master_failed",
        "rendezvous",
        LW + "start master failed [Errno 98] Address already in use\n" + LW + "master not ready\n" * 3,
    ),
    (
        "server_not_ready",
        "rendezvous",
        "server not ready, wait 3 sec to retry...\nnot ready endpoints:['10.0.0.2:6170', '10.0.0.3:6170']\n"
        * 4,
    ),
    # --- TCPStore (phi/core/distributed/store/tcp_store.cc, tcp_utils.cc)
    (
        "tcpstore_timeout",
        "rendezvous",
        "  _timeout:900 elapsed:901 (elapsed > _timeout)=1"
        + SUMMARY
        + "FatalError: TCPStore timeouted and not all workers got ready.\n",
    ),
    (
        "tcp_retry",
        "rendezvous",
        (
            "I0301 10:30:00.123456 12345 tcp_utils.cc:107] Retry to connect to 10.0.0.1:6170 "
            "while the server is not yet listening.\n"
        )
        * 5,
    ),
    (
        "tcp_cannot_connect",
        "rendezvous",
        TB
        + (
            "RuntimeError: (PreconditionNotMet) Network 10.0.0.1:6170 cannot be connected. (a"
            "t /paddle/paddle/phi/core/distributed/store/tcp_utils.cc:126)\n"
        ),
    ),
    (
        "tcp_bind",
        "rendezvous",
        CPP
        + SUMMARY
        + (
            "PreconditionNotMetError: Bind network on 10.0.0.1:6170 failed. (at /paddle/paddl"
            "e/phi/core/distributed/store/tcp_utils.cc:92)\n"
        ),
    ),
    (
        "tcp_socket",
        "rendezvous",
        (
            "OSError: (External) Create socket to connect 10.0.0.1:6170 failed. Details: Conn"
            "ection refused.  (at /paddle/paddle/phi/core/distributed/store/tcp_utils.cc:73)\n"
        ),
    ),
    # --- comm task manager
    (
        "comm_task_timeout",
        "collective_timeout",
        G
        + (
            "comm_task_manager.cc:146] Find timeout start but not finish task:group_key:group"
            "_0,group_ranks:[0, 1, 2, 3],global_rank:2,local_rank:2,comm_count:118,op:allredu"
            "ce,started:1,completed:0,numel:4096,nranks:4\n"
        ),
    ),
    # --- NCCL through Paddle's enforce
    (
        "nccl_sys_23",
        "nccl_network",
        TB
        + (
            "OSError: (External) NCCL error(2), unhandled system error. \n  [Hint: 'ncclSyste"
            "mError'. A call to a system function failed.] (at /paddle/paddle/fluid/platform/"
            "collective_helper.cc:106)\n"
        ),
    ),
    (
        "nccl_sys_summary",
        "nccl_network",
        CPP
        + SUMMARY
        + (
            "ExternalError: NCCL error(2), unhandled system error. \n  [Hint: 'ncclSystemErro"
            "r'. A call to a system function failed.] (at /paddle/paddle/fluid/distributed/co"
            "llective/process_group_nccl.cc:1031)\n"
        ),
    ),
    (
        "nccl_sys_old",
        "nccl_network",
        SUMMARY
        + (
            "ExternalError:  Nccl error, unhandled system error  (at /paddle/paddle/fluid/pla"
            "tform/collective_helper.cc:106)\n"
        ),
    ),
    (
        "nccl_remote",
        "nccl_network",
        TB
        + (
            "OSError: (External) NCCL error(6), remote process exited or there was a network "
            "error. \n  [Hint: 'ncclRemoteError'. A call failed possibly due to a network err"
            "or or a remote process exiting prematurely.] (at /paddle/paddle/phi/core/distrib"
            "uted/nccl_comm_context.cc:102)\n"
        ),
    ),
    (
        "nccl_invalid",
        "nccl_usage",
        TB
        + (
            "OSError: (External) NCCL error(4), invalid argument. \n  [Hint: 'ncclInvalidArgu"
            "ment'. An invalid value was passed to a NCCL function.] (at /paddle/paddle/fluid"
            "/distributed/collective/process_group_nccl.cc:555)\n"
        ),
    ),
    (
        "nccl_internal",
        "nccl_usage",
        SUMMARY
        + (
            "ExternalError: NCCL error(3), internal error. \n  [Hint: 'ncclInternalError'. An"
            " internal check failed. This is either a bug in NCCL or due to memory corruption"
            ".] (at /paddle/paddle/fluid/platform/collective_helper.cc:106)\n"
        ),
    ),
    (
        "nccl_invalid_usage",
        "nccl_usage",
        SUMMARY
        + (
            "ExternalError: NCCL error(5), invalid usage. \n  [Hint: 'ncclInvalidUsage'. The "
            "call to NCCL is incorrect. This is usually reflecting a programming error.] (at "
            "/paddle/paddle/fluid/operators/collective/c_allreduce_op.h:440)\n"
        ),
    ),
    (
        "nccl_cuda_init",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: NCCL error(1), unhandled cuda error. \n  [Hint: 'ncclUnhandledCud"
            "aError'. A call to a CUDA function failed.] (at /paddle/paddle/fluid/platform/co"
            "llective_helper.cc:106)\n"
        ),
    ),
    (
        "nccl_shm",
        "nccl_network",
        (
            "OSError: (External) NCCL error(2), unhandled system error.  Detail: Resource tem"
            "porarily unavailable\nPlease try one of the following solutions:\n1. export NCCL"
            "_SHM_DISABLE=1;\n"
        ),
    ),
    # --- collective usage
    (
        "enforce_invalid",
        "nccl_usage",
        TB
        + (
            "ValueError: (InvalidArgument) The length of size_on_each_rank must be equal to w"
            "orld_size.\n  [Hint: Expected size_on_each_rank.size() == size_, but received si"
            "ze_on_each_rank.size():3 != size_:4.] (at /paddle/paddle/fluid/distributed/colle"
            "ctive/utils.h:37)\n"
        ),
    ),
    (
        "enforce_place",
        "nccl_usage",
        CPP
        + SUMMARY
        + (
            "PreconditionNotMetError: Tensor gpu_place(0) is not on the same place as the gro"
            "up's place gpu:1 (at /paddle/paddle/fluid/distributed/collective/process_group_n"
            "ccl.cc:180)\n"
        ),
    ),
    (
        "ring_id",
        "nccl_usage",
        SUMMARY
        + (
            "InvalidArgumentError: Communicator in ring id 0 has not been initialized.\n  [Hi"
            "nt: Expected Has(ring_id) == true, but received Has(ring_id):0 != true:1.] (at /"
            "paddle/paddle/fluid/platform/collective_helper.h:112)\n"
        ),
    ),
    # --- signals
    (
        "sigsegv",
        "process_crash",
        CPP
        + SUMMARY
        + (
            "FatalError: `Segmentation fault` is detected by the operating system.\n  [TimeIn"
            'fo: *** Aborted at 1677666600 (unix time) try "date -d @1677666600" if you are u'
            "sing GNU date ***]\n  [SignalInfo: *** SIGSEGV (@0x0) received by PID 12345 (TID"
            " 0x7f2b5c7fe700) from PID 0 ***]\n\nSegmentation fault (core dumped)\n"
        ),
    ),
    (
        "sigabrt",
        "process_crash",
        SUMMARY
        + (
            "FatalError: `Process abort signal` is detected by the operating system.\n  [Time"
            'Info: *** Aborted at 1677666600 (unix time) try "date -d @1677666600" if you are'
            " using GNU date ***]\n  [SignalInfo: *** SIGABRT (@0x3039) received by PID 12345"
            " (TID 0x7f2b5c7fe700) from PID 12345 ***]\n"
        ),
    ),
    (
        "sigbus",
        "process_crash",
        SUMMARY
        + (
            "FatalError: `Access to an undefined portion of a memory object` is detected by t"
            'he operating system.\n  [TimeInfo: *** Aborted at 1677666600 (unix time) try "da'
            'te -d @1677666600" if you are using GNU date ***]\n  [SignalInfo: *** SIGBUS (@0'
            "x7f2b5c7fe700) received by PID 12345 (TID 0x7f2b5c7fe700) from PID 1844674407370"
            "9551615 ***]\n"
        ),
    ),
    # --- OOM
    (
        "oom_gpu_24",
        "cuda_oom",
        TB
        + (
            "MemoryError: \n\n--------------------------------------\nC++ Traceback (most rec"
            "ent call last):\n--------------------------------------\n0   paddle::memory::all"
            "ocation::CUDAAllocator::AllocateImpl(unsigned long)\n"
        )
        + SUMMARY
        + (
            "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 1.0000"
            "00GB memory on GPU 0, 31.750000GB memory has been allocated and available memory"
            " is only 20.000000MB.\n\nPlease check whether there is any other process using G"
            "PU 0.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. If"
            " no, please decrease the batch size of your model. \n (at /paddle/paddle/fluid/m"
            "emory/allocation/cuda_allocator.cc:87)\n"
        ),
    ),
    (
        "oom_gpu_py",
        "cuda_oom",
        TB
        + (
            "MemoryError: (ResourceExhausted) Out of memory error on GPU 3. Cannot allocate 2"
            "56.000244MB memory on GPU 3, 15.567383GB memory has been allocated and available"
            " memory is only 214.437500MB.\n"
        ),
    ),
    (
        "oom_gpu_colon",
        "cuda_oom",
        (
            "ResourceExhaustedError: Out of memory error on GPU:0. Cannot allocate 512.000000"
            "MB memory on GPU:0, available memory is only 100.000000MB.\n"
        ),
    ),
    (
        "oom_gpu_old",
        "cuda_oom",
        (
            "paddle.fluid.core_avx.EnforceNotMet: \n-----------------------------------------"
            "---\nC++ Call Stacks (More useful to developers):\n-----------------------------"
            "---------------\n"
        )
        + SUMMARY
        + (
            "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 2.0000"
            "00GB memory on GPU 0, available memory is only 1.123000GB.\n"
        ),
    ),
    (
        "oom_buddy_1x",
        "cuda_oom",
        (
            "Error: Cannot allocate 2.000000GB in GPU 0, avaliable 1.234000GB, total 15.78200"
            "0GB, GpuMinChunkSize 256.000000B, GpuMaxChunkSize 14.217000GB, GPU memory used: "
            "14.548000GB\n"
        ),
    ),
    (
        "oom_host_memerr_tb",
        "host_oom",
        TB
        + "MemoryError: \n\n"
        + CPP
        + SUMMARY
        + (
            "ResourceExhaustedError: Fail to alloc memory of 4294967296 size, error code is 1"
            "2.\n  [Hint: Expected error == 0, but received error:12 != 0:0.] (at /paddle/pad"
            "dle/fluid/memory/allocation/system_allocator.cc:62)\n"
        ),
    ),
    (
        "oom_buddy_26",
        "cuda_oom",
        SUMMARY
        + (
            "ResourceExhaustedError: Cannot allocate 2.000000GB in gpu:0, avaliable 1.200000G"
            "B, total 16.000000GB, used 14.800000GB. \n"
        ),
    ),
    (
        "nccl_cuda_runtime",
        "nccl_usage",
        TB
        + (
            "OSError: (External) NCCL error(1), unhandled cuda error. \n  [Hint: 'ncclUnhandl"
            "edCudaError'. A call to a CUDA function failed.] (at /paddle/paddle/fluid/distri"
            "buted/collective/process_group_nccl.cc:1031)\n"
        ),
    ),
    (
        "cuda_999_kernel",
        "gpu_hardware",
        SUMMARY
        + (
            "ExternalError: CUDA error(999), unknown error. \n  [Hint: 'cudaErrorUnknown'. Th"
            "is indicates that an unknown internal error has occurred. ] (at /paddle/paddle/p"
            "hi/backends/gpu/gpu_context.cc:457)\n"
        ),
    ),
    (
        "cuda_illegal_launch",
        "gpu_hardware",
        L
        + "Pod failed\n"
        + LE
        + (
            "Container failed !!!\nContainer rank 1 status failed cmd ['/usr/bin/python', '-u"
            "', 'train.py'] code 1 log log/workerlog.1 \nenv {}\n"
        )
        + L
        + "------------------------- ERROR LOG DETAIL -------------------------\n"
        + SUMMARY
        + (
            "ExternalError: CUDA error(700), an illegal memory access was encountered. \n  [H"
            "int: 'cudaErrorIllegalAddress'. The device encountered a load or store instructi"
            "on on an invalid memory address.] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_"
            "info.cc:272)\n"
        )
        + L
        + "Exit code 1\n",
    ),
    (
        "cpu_build_set_device_place",
        "driver_env",
        TB + "ValueError: The device should not be gpu:0, since PaddlePaddle is not compiled with CUDA\n",
    ),
    (
        "cpu_build_cpp",
        "driver_env",
        SUMMARY
        + (
            "UnavailableError: Paddle can't use CUDA device since it's not compiled with CUDA"
            ",Please recompile or reinstall Paddle with GPU support.\n  [Hint: Expected ...] "
            "(at /paddle/paddle/fluid/platform/device_context.cc:100)\n"
        ),
    ),
    (
        "buddy_cpu",
        "host_oom",
        (
            "Error: Cannot allocate 8.000000GB in CPU, avaliable 1.000000GB, total 64.000000G"
            "B, used 63.000000GB.\n"
        ),
    ),
    (
        "healthy_master_waits_then_runs",
        None,
        L
        + "Waiting peer start...\n"
        + LW
        + "master not ready\n"
        + LW
        + "master not ready\n"
        + L
        + "Waiting peer ready...\n"
        + L
        + "Run Pod: abc, replicas 2, status ready\nepoch 0 step 1 loss 1.0\n"
        + L
        + "Pod completed\n"
        + L
        + "Exit code 0\n",
    ),
    (
        "oom_host_fail_alloc",
        "host_oom",
        SUMMARY
        + (
            "ResourceExhaustedError: Fail to alloc memory of 4294967296 size, error code is 1"
            "2.\n  [Hint: Expected error == 0, but received error:12 != 0:0.] (at /paddle/pad"
            "dle/fluid/memory/allocation/system_allocator.cc:62)\n"
        ),
    ),
    # --- CUDA / driver env
    (
        "cuda_insufficient_driver",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: CUDA error(35), CUDA driver version is insufficient for CUDA runt"
            "ime version. \n  [Hint: 'cudaErrorInsufficientDriver'. This indicates that the i"
            "nstalled NVIDIA CUDA driver is older than the CUDA runtime library. This is not "
            "a supported configuration.Users should install an updated NVIDIA display driver "
            "to allow the application to run.] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_"
            "info.cc:66)\n"
        ),
    ),
    (
        "cudnn_load",
        "driver_env",
        TB
        + (
            "RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invo"
            "ke method cudnnGetVersion.\n  [Hint: cudnn_dso_handle should not be null.] (at /"
            "paddle/paddle/phi/backends/gpu/cuda/cudnn_helper.h:60)\n"
        ),
    ),
    (
        "dso_cudnn",
        "driver_env",
        G
        + (
            "dynamic_loader.cc:307] The third-party dynamic library (libcudnn.so) that Paddle"
            " depends on is not configured correctly. (error code is libcudnn.so: cannot open"
            " shared object file: No such file or directory)\n  Suggestions:\n  1. Check if t"
            "he third-party dynamic library (e.g. CUDA, CUDNN) is installed correctly and its"
            " version is matched with paddlepaddle you installed.\n"
        )
        + SUMMARY
        + (
            "PreconditionNotMet: The third-party dynamic library (libcudnn.so) that Paddle de"
            "pends on is not configured correctly. (error code is libcudnn.so: cannot open sh"
            "ared object file: No such file or directory)\n"
        ),
    ),
    (
        "no_device",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: CUDA error(100), no CUDA-capable device is detected. \n  [Hint: '"
            "cudaErrorNoDevice'. This indicates that no CUDA-capable devices were detected by"
            " the installed CUDA driver. ] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info"
            ".cc:66)\n"
        ),
    ),
    (
        "no_kernel_image",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: CUDA error(209), no kernel image is available for execution on th"
            "e device. \n  [Hint: 'cudaErrorNoKernelImageForDevice'. This indicates that ther"
            "e is no kernel image available that is suitable for the device. This can occur w"
            "hen a user specifies code generation options for a particular CUDA source file t"
            "hat do not include the corresponding device configuration.] (at /paddle/paddle/p"
            "hi/kernels/funcs/elementwise_base.h:1025)\n"
        ),
    ),
    (
        "compiled_with_cuda_warn_then_fail",
        "driver_env",
        G + "gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.6, Drive"
        "r API Version: 11.4, Runtime API Version: 11.7\n"
        "W0301 10:30:00.123456 12345 gpu_resources.cc:149] device: 0, cuDNN Version: 8.4.\n"
        "W0301 10:30:00.123456 12345 gpu_resources.cc:164] WARNING: device: 0. The instal"
        "led Paddle is compiled with CUDA 11.7, but CUDA runtime version in your machine "
        "is 11.4, which may cause serious incompatible bug. Please recompile or reinstall"
        " Paddle with compatible CUDA version.\n"
        + SUMMARY
        + (
            "ExternalError: CUDA error(222), the provided PTX was compiled with an unsupporte"
            "d toolchain. \n  [Hint: 'cudaErrorUnsupportedPtxVersion'. This indicates that th"
            "e provided PTX was compiled with an unsupported toolchain.] (at /paddle/paddle/p"
            "hi/backends/gpu/gpu_context.cc:457)\n"
        ),
    ),
    (
        "cuda_999_devquery",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: CUDA error(999), unknown error. \n  [Hint: 'cudaErrorUnknown'. Th"
            "is indicates that an unknown internal error has occurred. ] (at /paddle/paddle/p"
            "hi/backends/gpu/cuda/cuda_info.cc:252)\n"
        ),
    ),
    (
        "cuda_illegal_one_process",
        None,
        SUMMARY
        + (
            "ExternalError: CUDA error(700), an illegal memory access was encountered. \n  [H"
            "int: 'cudaErrorIllegalAddress'. The device encountered a load or store instructi"
            "on on an invalid memory address. This leaves the process in an inconsistentstate"
            " and any further CUDA work will return the same error. To continue using CUDA, t"
            "he process must be terminated and relaunched.] (at /paddle/paddle/phi/backends/g"
            "pu/cuda/cuda_info.cc:272)\n"
        ),
    ),
    (
        "cuda_ecc",
        "gpu_hardware",
        SUMMARY
        + (
            "ExternalError: CUDA error(214), uncorrectable ECC error encountered. \n  [Hint: "
            "'cudaErrorECCUncorrectable'. This indicates that an uncorrectable ECC error was "
            "detected during execution.] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.c"
            "c:272)\n"
        ),
    ),
    (
        "cuda_busy",
        "driver_env",
        SUMMARY
        + (
            "ExternalError: CUDA error(46), all CUDA-capable devices are busy or unavailable."
            " \n  [Hint: 'cudaErrorDevicesUnavailable'. This indicates that all CUDA devices "
            "are busy or unavailable at the current time.] (at /paddle/paddle/phi/backends/gp"
            "u/cuda/cuda_info.cc:66)\n"
        ),
    ),
    (
        "paddle_not_compiled_cuda",
        "driver_env",
        TB + "ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA\n",
    ),
    (
        "elastic_abort",
        "process_crash",
        (
            "ERROR 2022-03-01 10:30:00,123 manager.py:104] ABORT!!! ABORT!!! ABORT!!!\nERROR "
            "2022-03-01 10:30:00,123 manager.py:105] ERROR rank 1 error with exit code 1, che"
            "ck log for detail.\n"
        ),
    ),
    (
        "elastic_abort_9",
        "host_oom",
        "ABORT!!! ABORT!!! ABORT!!!\nERROR rank 3 error with exit code -9, check log for detail.\n",
    ),
    (
        "spawn_exit",
        "process_crash",
        TB + "    raise Exception(\nException: Process 1 terminated with exit code 1.\n",
    ),
    (
        "spawn_signal_kill",
        "host_oom",
        TB + "    raise Exception(\nException: Process 0 terminated with signal SIGKILL.\n",
    ),
    ("spawn_signal_segv", "process_crash", TB + "Exception: Process 0 terminated with signal SIGSEGV.\n"),
    (
        "spawn_wrapped_oom",
        "cuda_oom",
        (
            "Exception: \n\n----------------------------------------------\nProcess 1 termina"
            "ted with the following error:\n----------------------------------------------\n\n"
        )
        + TB
        + (
            "MemoryError: (ResourceExhausted) Out of memory error on GPU 1. Cannot allocate 1"
            ".000000GB memory on GPU 1, 15.000000GB memory has been allocated and available m"
            "emory is only 100.000000MB.\n"
        ),
    ),
    (
        "tcp_recv_error",
        "rendezvous",
        TBI
        + (
            "OSError: (External) TCP receive error. Details: Connection reset by peer. (at /p"
            "addle/paddle/phi/core/distributed/store/tcp_utils.h:94)\n"
        ),
    ),
    (
        "tcp_send_error",
        "rendezvous",
        CPP
        + SUMMARY
        + (
            "ExternalError: TCP send error. Details: Broken pipe. (at /paddle/paddle/phi/core"
            "/distributed/store/tcp_utils.h:79)\n"
        ),
    ),
    (
        "tcp_accept",
        "rendezvous",
        SUMMARY
        + (
            "ExternalError: The server failed to accept a new connection. Details: Too many o"
            "pen files. (at /paddle/paddle/phi/core/distributed/store/tcp_utils.cc:196)\n"
        ),
    ),
    # --- healthy lines
    (
        "healthy_launch",
        None,
        L
        + "-----------  Configuration  ----------------------\n"
        + L
        + "devices: 0,1,2,3\n"
        + L
        + "Waiting peer ready...\n"
        + L
        + "Run Pod: vqhbut, replicas 4, status ready\n"
        + L
        + "Watching Pod: vqhbut, replicas 4, status running\n"
        + G
        + (
            "gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.0, Drive"
            "r API Version: 12.0, Runtime API Version: 11.7\n"
        )
        + G
        + "gpu_resources.cc:149] device: 0, cuDNN Version: 8.4.\n"
        "I0301 10:30:01.123456 12345 tcp_utils.cc:181] The server starts to listen on IP_"
        "ANY:6170\nI0301 10:30:01.123456 12345 tcp_utils.cc:130] Successfully connected t"
        "o 10.0.0.1:6170\n"
        "I0301 10:30:02.123456 12345 process_group_nccl.cc:129] ProcessGroupNCCL pg_timeout_ 1800000\n"
        "I0301 10:30:02.123456 12345 process_group_nccl.cc:130] ProcessGroupNCCL nccl_comm_init_option_ 0\n"
        "[2023-03-01 10:30:03,000] [    INFO] distributed_strategy.py:214 - distributed s"
        "trategy initialized\n"
        "epoch 0 step 10 loss 0.52\n" + L + "Pod completed\n" + L + "Exit code 0\n",
    ),
    (
        "healthy_launch_old",
        None,
        "-----------  Configuration Arguments -----------\ngpus: 0,1\nips: 127.0.0.1\n---"
        "---------------------------------------------\n"
        "INFO 2021-03-01 10:30:00,123 launch_utils.py:471] Local start 2 processes. First"
        " process distributed environment info (Only For Debug): \n"
        "+==============================================================================="
        "========+\n|                        Distributed Envs                      Value "
        "                   |\n"
        "INFO 2021-03-01 10:30:00,123 launch_utils.py:475] details about PADDLE_TRAINER_E"
        "NDPOINTS can be found in log/endpoints.log, and detail running logs maybe found "
        "in log/workerlog.0\n"
        "I0301 10:30:00.123456 12345 nccl_context.cc:74] init nccl context nranks: 2 loca"
        "l rank: 0 gpu id: 0 ring id: 0\n"
        "W0301 10:30:00.123456 12345 device_context.cc:404] Please NOTE: device: 0, GPU C"
        "ompute Capability: 7.0, Driver API Version: 11.0, Runtime API Version: 10.2\n"
        "W0301 10:30:00.123456 12345 device_context.cc:422] device: 0, cuDNN Version: 7.6.\n"
        "INFO 2021-03-01 10:40:00,123 launch.py:311] Local processes completed.\n",
    ),
    (
        "healthy_store_wait",
        None,
        (
            "I0301 10:30:00.123456 12345 tcp_utils.cc:107] Retry to connect to 10.0.0.1:6170 "
            "while the server is not yet listening.\nI0301 10:30:03.123456 12345 tcp_utils.cc"
            ":130] Successfully connected to 10.0.0.1:6170\nepoch 0 step 1 loss 1.0\n"
        ),
    ),
    ("healthy_sigterm_clean", None, L + "Terminating with signal 15\n" + L + "Exit with signal 15\n"),
]


@pytest.mark.parametrize("name,want,log", CASES, ids=[c[0] for c in CASES])
def test_paddle_family(name: str, want: Optional[str], log: str) -> None:
    root = root_finding(log)
    got = root.category if root else None
    assert got == want, (name, root)


_BY_NAME = {c[0]: c[2] for c in CASES}


@pytest.mark.parametrize(
    "name,code,facts",
    [
        ("launch_peer_not_ready", "RUN221", {"waiting_for": "peers", "replicas": 2, "job": "default"}),
        ("launch_master_not_ready", "RUN221", {"waiting_for": "master"}),
        ("elastic_abort", None, {"rank": 1, "exitcode": 1}),
        ("oom_buddy_1x", "RUN101", {"gpu_index": 0, "size": "2.000000GB"}),
        ("oom_host_fail_alloc", "RUN122", {"bytes": 4294967296, "errno": 12}),
        ("cudnn_load", "RUN263", {"library": "libcudnn.so", "function": "cudnnGetVersion"}),
        ("cpu_build_set_device_place", "RUN262", {"reason": "cpu_build_of_paddle"}),
        ("tcp_recv_error", "RUN222", {"store_error": "Connection reset by peer"}),
    ],
)
def test_paddle_family_facts(name: str, code: Optional[str], facts: dict[str, object]) -> None:
    root = root_finding(_BY_NAME[name])
    assert root is not None and (code is None or root.code == code), (name, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (name, k, root.facts)


# The same messages behind a Kubernetes or a node tag keep their class.
@pytest.mark.parametrize("prefix", ["node7: ", "[1,0]<stderr>:", "2023-03-01T10:30:00.123Z "])
@pytest.mark.parametrize(
    "name",
    [
        "launch_peer_not_ready",
        "elastic_abort",
        "oom_buddy_1x",
        "oom_host_fail_alloc",
        "cudnn_load",
        "cpu_build_cpp",
        "tcp_send_error",
        "oom_gpu_24",
    ],
)
def test_paddle_family_prefixed(prefix: str, name: str) -> None:
    want = next(c[1] for c in CASES if c[0] == name)
    log = "".join(prefix + ln + "\n" for ln in _BY_NAME[name].split("\n"))
    root = root_finding(log)
    assert (root.category if root else None) == want, (name, root)


# Paddle 2.0-2.3's enforce hint ("Please search for the error code(N) on website ..."), its 1.x NCCL enforce,
# the old launchers' own assertions (fleet/launch_utils.py get_gpus / get_cluster), the CUDA libraries' init
# errors (the class torch's words of the same error get: CUDNN_STATUS_NOT_INITIALIZED is cuda_oom,
# CUDNN_STATUS_INTERNAL_ERROR and CUBLAS_STATUS_NOT_INITIALIZED alone name no cause).
NH = (
    "\n  [Hint: Please search for the error code({n}) on website (https://docs.nvidia"
    ".com/deeplearning/nccl/user-guide/docs/api/types.html#ncclresult-t) to get Nvidi"
    "a's official solution and advice about NCCL Error.] (at /paddle/paddle/fluid/pla"
    "tform/collective_helper.cc:{ln})\n"
)
CH = (
    "\n  [Hint: Please search for the error code({n}) on website (https://docs.nvidia"
    ".com/cuda/cuda-runtime-api/group__CUDART__TYPES.html#group__CUDART__TYPES_1g3f51"
    "e3575c2178246db0a94a430e0038) to get Nvidia's official solution and advice about"
    " CUDA Error.] (at /paddle/paddle/fluid/platform/gpu_info.cc:{ln})\n"
)
CASES2: list[tuple[str, Optional[str], str]] = [
    (
        "nccl_hint_21_sys",
        "nccl_network",
        CPP + SUMMARY + "ExternalError: NCCL error(2), unhandled system error. " + NH.format(n=2, ln=124),
    ),
    (
        "nccl_hint_21_invalid",
        "nccl_usage",
        SUMMARY + "ExternalError: NCCL error(4), invalid argument. " + NH.format(n=4, ln=124),
    ),
    (
        "nccl_hint_21_internal",
        "nccl_usage",
        SUMMARY + "ExternalError: NCCL error(3), internal error. " + NH.format(n=3, ln=124),
    ),
    (
        "nccl_hint_21_remote_py",
        "nccl_network",
        TB
        + ("OSError: (External) NCCL error(6), remote process exited or there was a network error. ")
        + NH.format(n=6, ln=124),
    ),
    (
        "cuda_hint_21_insufficient",
        "driver_env",
        SUMMARY
        + ("ExternalError: CUDA error(35), CUDA driver version is insufficient for CUDA runtime version. ")
        + CH.format(n=35, ln=99),
    ),
    (
        "cuda_hint_21_init",
        "driver_env",
        SUMMARY + "ExternalError: CUDA error(3), initialization error. " + CH.format(n=3, ln=99),
    ),
    (
        "cuda_hint_21_nodevice",
        "driver_env",
        TB
        + "OSError: (External) CUDA error(100), no CUDA-capable device is detected. "
        + CH.format(n=100, ln=99),
    ),
    (
        "cuda_hint_21_oom",
        "cuda_oom",
        SUMMARY + "ExternalError: CUDA error(2), out of memory. " + CH.format(n=2, ln=99),
    ),
    (
        "cuda_old_check_failed",
        "cuda_oom",
        (
            "F0301 10:30:00.123456 12345 gpu_info.cc:160] Check failed: cudaSuccess == cudaSt"
            "at (0 vs. 2) Cuda Error: out of memory\n*** Check failure stack trace: ***\n"
        ),
    ),
    (
        "cudnn_internal_error",
        "cuda_oom",  # cuDNN's internal error reads as its memory first (rules/cuda_oom.py, w4 2026-12-07)
        SUMMARY
        + (
            "ExternalError: CUDNN error(4), CUDNN_STATUS_INTERNAL_ERROR. \n  [Hint: 'CUDNN_ST"
            "ATUS_INTERNAL_ERROR'.  An internal cuDNN operation failed.  ] (at /paddle/paddle"
            "/phi/kernels/gpudnn/conv_kernel.cu:123)\n"
        ),
    ),
    (
        "cudnn_not_init",
        "cuda_oom",
        SUMMARY
        + (
            "ExternalError: CUDNN error(1), CUDNN_STATUS_NOT_INITIALIZED. \n  [Hint: 'CUDNN_S"
            "TATUS_NOT_INITIALIZED'.  The cuDNN library was not initialized properly.  This e"
            "rror is usually returned when a call to cudnnCreate() fails or when cudnnCreate("
            ") has not been called prior to calling another cuDNN routine, or when the GPU ha"
            "rdware resources required by the cuDNN library are not initialized properly.  ] "
            "(at /paddle/paddle/phi/backends/gpu/gpu_resources.cc:206)\n"
        ),
    ),
    (
        # cuBLAS's handle could not be made: cublasCreate allocates its workspace on the device, and every
        # stack's NOT_INITIALIZED (TF's "failed to create cublas handle", torch's "when calling
        # cublasCreate(handle)") is that allocation failing on a full GPU (rules/memory_reports.py)
        "cublas_not_init",
        "cuda_oom",
        SUMMARY
        + (
            "ExternalError: CUBLAS error(1), CUBLAS_STATUS_NOT_INITIALIZED. \n  [Hint: 'CUBLA"
            "S_STATUS_NOT_INITIALIZED'.  The cuBLAS library was not initialized.  This is usu"
            "ally caused by the lack of a prior cublasCreate() call, an error in the CUDA Run"
            "time API called by the cuBLAS routine, or an error in the hardware setup.  ] (at"
            " /paddle/paddle/phi/backends/gpu/gpu_resources.cc:130)\n"
        ),
    ),
    (
        "gpus_not_visible",
        "driver_env",
        TB + "AssertionError: Can't find your gpus 4 in CUDA_VISIBLE_DEVICES[0,1,2,3].\n",
    ),
    (
        "gpus_not_visible_old",
        "driver_env",
        "AssertionError: Can't find your selected_gpus 2 in CUDA_VISIBLE_DEVICES[0,1].\n",
    ),
    (
        "local_ip_not_in_ips",
        "rendezvous",
        TB
        + ("AssertionError: Can't find your local ip {10.0.0.5} in node_ips: {['10.0.0.1', '10.0.0.2']}\n"),
    ),
    (
        "enforce_1x_nccl",
        "nccl_network",
        (
            "paddle.fluid.core_avx.EnforceNotMet: \n-----------------------------------------"
            "---\nC++ Call Stacks (More useful to developers):\n-----------------------------"
            "---------------\n0   std::string paddle::platform::GetTraceBackString<char const"
            "*>(char const*&&, char const*, int)\n----------------------\nError Message Summa"
            "ry:\n----------------------\nError:  Nccl error, unhandled system error  at (/pa"
            "ddle/paddle/fluid/platform/nccl_helper.h:108)\n"
        ),
    ),
    (
        "launch_1x_abort",
        "process_crash",
        (
            "2020-03-01 10:30:00,123-ERROR: ABORT!!! Out of all 8 trainers, the trainer proce"
            "ss with rank=[5] was aborted. Please check its log.\n"
        ),
    ),
    (
        "launch_container_abrt",
        "process_crash",
        L
        + "Pod failed\n"
        + LE
        + (
            "Container failed !!!\nContainer rank 2 status failed cmd ['/usr/bin/python', '-u"
            "', 'train.py'] code -6 log log/workerlog.2 \nenv {}\n"
        )
        + L
        + "Exit code -6\n",
    ),
    (
        "watcher_gpu_log_healthy",
        None,
        L
        + "Watching Pod: x, replicas 2, status running\n"
        + LW
        + "save gpu info failed\nepoch 0 step 1 loss 1.0\n"
        + L
        + "Pod completed\n",
    ),
    (
        "sigterm_banner_after_peer_oom",
        "cuda_oom",
        (
            "MemoryError: (ResourceExhausted) Out of memory error on GPU 1. Cannot allocate 1"
            ".000000GB memory on GPU 1, 15.000000GB memory has been allocated and available m"
            "emory is only 100.000000MB.\n"
        )
        + SUMMARY
        + (
            "FatalError: `Termination signal` is detected by the operating system.\n  [TimeIn"
            'fo: *** Aborted at 1677666600 (unix time) try "date -d @1677666600" if you are'
            " using GNU date ***]\n  [SignalInfo: *** SIGTERM (@0x3e8) received by PID 12346 "
            "(TID 0x7f2b5c7fe700) from PID 1000 ***]\n"
        ),
    ),
    (
        "comm_task_init_not_start",
        "collective_timeout",
        (
            "E0301 10:30:00.123456 12345 comm_task_manager.cc:146] Find timeout init but not "
            "start task:group_key:group_0,group_ranks:[0, 1],global_rank:0,local_rank:0,comm_"
            "count:5,op:broadcast,started:0,completed:0,numel:100,nranks:2\n"
        ),
    ),
]

# Paddle 3.0.0 (libphi_core.so strings): the store's new reset text and the buddy allocator's corrected
# spelling "available".
CASES2 += [
    (
        "tcp_reset_30",
        "rendezvous",
        TBI + "OSError: (External) TCP connection reset by peer. Details: Connection reset by peer. "
        "(at /paddle/paddle/phi/core/distributed/store/tcp_utils.h:94)\n",
    ),
    (
        "oom_buddy_30",
        "cuda_oom",
        SUMMARY + "ResourceExhaustedError: Cannot allocate 2.000000GB in gpu:0, available 1.200000GB, "
        "total 16.000000GB, used 14.800000GB. \n",
    ),
]

# The static graph's operator suffix ("[operator < c_allreduce_sum > error]", fluid/framework/operator.cc)
# after the summary, Python's SystemError mapping, and the store's own warning for a missing key (healthy).
CASES2 += [
    (
        "static_op_nccl",
        "nccl_network",
        CPP
        + SUMMARY
        + (
            "ExternalError: NCCL error(2), unhandled system error. \n  [Hint: 'ncclSystemErro"
            "r'. A call to a system function failed.] (at /paddle/paddle/fluid/operators/coll"
            "ective/c_allreduce_op.h:440)\n  [operator < c_allreduce_sum > error]\n"
        ),
    ),
    (
        "static_op_oom",
        "cuda_oom",
        CPP
        + SUMMARY
        + (
            "ResourceExhaustedError: \n\nOut of memory error on GPU 2. Cannot allocate 1.5000"
            "00GB memory on GPU 2, 30.000000GB memory has been allocated and available memory"
            " is only 500.000000MB.\n\nPlease check whether there is any other process using "
            "GPU 2.\n1. If yes, please stop them, or start PaddlePaddle on another GPU.\n2. I"
            "f no, please decrease the batch size of your model. \n (at /paddle/paddle/fluid/"
            "memory/allocation/cuda_allocator.cc:86)\n  [operator < matmul_v2 > error]\n"
        ),
    ),
    (
        "static_op_ring",
        "nccl_usage",
        SUMMARY
        + (
            "InvalidArgumentError: The ring_id (1) for c_allreduce_sum op must be non-negativ"
            "e and be smaller than ring number.\n  [Hint: Expected ring_id < ring_num, but re"
            "ceived ring_id:1 >= ring_num:1.] (at /paddle/paddle/fluid/operators/collective/c"
            "_allreduce_op.h:420)\n  [operator < c_allreduce_sum > error]\n"
        ),
    ),
    (
        "enforce_oserr_oom",
        "cuda_oom",
        TB
        + (
            "SystemError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate 2"
            "0.000000MB memory on GPU 0, 7.900000GB memory has been allocated and available m"
            "emory is only 10.000000MB.\n"
        ),
    ),
    (
        "store_key_missing",
        None,
        (
            "W0301 10:30:00.123456 12345 tcp_store.cc:150] Key abc not found in TCPStore.\nep"
            "och 0 step 1 loss 1.0\n"
        ),
    ),
]


@pytest.mark.parametrize("name,want,log", CASES2, ids=[c[0] for c in CASES2])
def test_paddle_family_2(name: str, want: Optional[str], log: str) -> None:
    root = root_finding(log)
    assert (root.category if root else None) == want, (name, root)
