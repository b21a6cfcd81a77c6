"""The driver/environment and GPU-hardware families read at their sources, every variant under the
prefixes real logs add. Each group names the source its lines come from:

- cudart's cudaGetErrorString table (CUDA 11-12; the runtime's and the driver's enum names, the numbers
  torch prints from cudaGetDeviceCount() in c10/cuda/CUDAFunctions.cpp as "Error 804: ...");
- torch/cuda/__init__.py (lazy init, _check_capability, its "CUDA initialization:" UserWarnings),
  torch/serialization.py, Lightning's accelerator connector;
- NCCL's misc/cudawrap.cc (loading libcuda), misc/nvmlwrap.cc (NVML), graph/paths.cc (NVLink P2P check),
  raw as "NCCL WARN" and again under torch's "NCCL error in: ... Last error:";
- NVML's nvmlErrorString texts and pynvml's exception names, nvidia-smi, nvidia-container-cli;
- glibc's dlerror under Python's ImportError (a library, a symbol or a symbol version missing), for the
  training stack only;
- the kernel's NVRM records (Xid lines of drivers 470-580, RM status lines, nv.c's bring-up failures).

Decoys with the same words (NCCL INFO lines, a debugger's peer-access note, a torchvision warning,
plain Python import errors) stay silent.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "2025-01-02 03:04:05,678 - ERROR - ", "(RayWorkerWrapper pid=1234) "]
KERNEL_PREFIXES = [
    "",
    "[ 1843.439669] ",
    "Aug 29 16:58:38 gpu-node kernel: [14282.651831] ",
    "[Fri Aug  9 13:32:56 2024] ",
]
WARN = "gpu-node-07:2814:2856 [0] NCCL WARN "
DEVICE_COUNT = "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? "


# cudart's table: the environment's errors by message, runtime name, driver name and number.
CUDART_ENV = [
    (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "RUN261",
        {"cuda_error_number": 35},
    ),
    (
        DEVICE_COUNT + "Error 804: forward compatibility was attempted on non supported HW",
        "RUN261",
        {"cuda_error_number": 804},
    ),
    (
        DEVICE_COUNT + "Error 803: system has unsupported display driver / cuda driver combination",
        "RUN261",
        {"cuda_error_number": 803},
    ),
    (DEVICE_COUNT + "Error 802: system not yet initialized", "RUN262", {"reason": "system_not_ready"}),
    (
        DEVICE_COUNT + "Error 304: OS call failed or operation not supported on this OS",
        "RUN262",
        {"reason": "os_call_failed", "cuda_error_number": 304},
    ),
    (
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
        "RUN262",
        {"cuda_error_number": 802},
    ),
    (
        "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
        "RUN262",
        {"cuda_error_number": 999},
    ),
    (
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        "RUN262",
        {"cuda_error_number": 46},
    ),
    ("torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "RUN262", {}),
    (
        "RuntimeError: CUDA error: exclusive-thread device already in use by a different thread",
        "RUN262",
        {"reason": "exclusive_compute_mode"},
    ),
    (
        "RuntimeError: CUDA error: device doesn't have valid Grid license",
        "RUN262",
        {"reason": "vgpu_not_licensed"},
    ),
    (
        "RuntimeError: CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server",
        "RUN262",
        {"reason": "mps", "cuda_error_number": 805},
    ),
    (
        "RuntimeError: CUDA error: MPS server is not ready to accept new MPS client requests",
        "RUN262",
        {"cuda_error_number": 807},
    ),
    (
        "RuntimeError: CUDA error: the MPS client has been terminated by the server",
        "RUN262",
        {"cuda_error_number": 810},
    ),
    (
        "RuntimeError: CUDA error: the hardware resources required to create MPS client have been exhausted",
        "RUN262",
        {"cuda_error_number": 808},
    ),
    (
        "RuntimeError: CUDA driver error: CUDA_ERROR_MPS_CONNECTION_FAILED",
        "RUN262",
        {"cuda_error_number": 805},
    ),
    ("RuntimeError: CUDA error: PTX JIT compiler library not found", "RUN263", {"cuda_error_number": 221}),
    (
        "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.",
        "RUN261",
        {"cuda_error_number": 222},
    ),
    ("RuntimeError: CUDA error: CUDA driver is a stub library", "RUN262", {"cuda_error_number": 34}),
    ("cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY", "RUN262", {"cuda_error_number": 802}),
    (
        "RESULT cuinit_rc=803 CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (system has unsupported display driver / cuda driver combination)",
        "RUN261",
        {},
    ),
    (
        'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"',
        "RUN262",
        {},
    ),
    (
        "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version at /pytorch/aten/src/THC/THCGeneral.cpp:74",
        "RUN261",
        {},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", CUDART_ENV)
def test_cudart_environment_errors(prefix: str, line: str, code: str, facts: dict[str, Any]) -> None:
    _check(prefix + line + "\n", code, facts)


# cudart's table: the kernel faults and the hardware's errors, by message and by either enum name.
CUDART_HW = [
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "RUN242"),
    (
        "CUDA error: uncorrectable ECC error encountered Search for `cudaErrorECCUncorrectable' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.",
        "RUN242",
    ),
    ("RuntimeError: CUDA driver error: CUDA_ERROR_ECC_UNCORRECTABLE", "RUN242"),
    ("torch.AcceleratorError: CUDA error: unspecified launch failure", "RUN244"),
    ("RuntimeError: CUDA driver error: CUDA_ERROR_LAUNCH_FAILED", "RUN244"),
    ("RuntimeError: CUDA driver error: CUDA_ERROR_ILLEGAL_ADDRESS", "RUN244"),
    ("RuntimeError: CUDA error: an illegal instruction was encountered", "RUN332"),
    ("RuntimeError: CUDA error: hardware stack error", "RUN332"),
    ("RuntimeError: CUDA error: invalid program counter", "RUN332"),
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", "RUN244"),
    ("RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution", "RUN241"),
]


# A kernel's own fault (700, 719) is the GPU's class in a distributed job; the faults only code produces
# (714 stack, 715 illegal instruction, 716 misaligned, 718 program counter) raised by the program's own call
# are its kernel's bug (RUN332) there too, not in one process with
# nothing distributed around it (tests/diagnose/test_false_alarms.py): the lines are read in a job.
_IN_A_JOB = "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8\n"


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", CUDART_HW)
def test_cudart_hardware_errors(prefix: str, line: str, code: str) -> None:
    _check(_IN_A_JOB + prefix + line + "\n", code)


# The kernel's NVRM records (drivers 470-580): Xid lines of every era, RM status and bring-up failures.
NVRM = [
    (
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        "RUN243",
        {"xid": 79},
    ),
    (
        "NVRM: Xid (PCI:0000:03:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "RUN243",
        {"xid": 79, "pci_bus_id": "0000:03:00"},
    ),
    (
        "NVRM: Xid (PCI:0000:ca:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
        "RUN242",
        {"xid": 48},
    ),
    (
        "NVRM: Xid (PCI:0000:9c:00): 94, pid=2345, name=python3, Contained: SM (0x1). RST: No, D-RST: No",
        "RUN242",
        {"xid": 94},
    ),
    (
        "NVRM: Xid (PCI:0000:9c:00): 95, pid=2345, name=python3, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No",
        "RUN242",
        {"xid": 95},
    ),
    (
        "NVRM: Xid (PCI:0000:1b:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: failed to remap a row",
        "RUN242",
        {"xid": 64},
    ),
    (
        "NVRM: Xid (PCI:0000:9c:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
        "RUN241",
        {"xid": 154},
    ),
    (
        "NVRM: Xid (PCI:0000:1b:00): 119, pid=1611, name=python, Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).",
        "RUN241",
        {"xid": 119},
    ),
    (
        "NVRM: Xid (PCI:0000:1b:00): 74, pid=1611, name=python, NVLink: fatal error detected on link 3(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)",
        "RUN241",
        {"xid": 74},
    ),
    (
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
        "RUN243",
        {"xid": 79, "pci_bus_id": "0000:3b:00"},
    ),
    ("NVRM: Xid (0000:03:00): 13, 0001 00000000 000090c0 00001b0c 00000000 00000000", "RUN241", {"xid": 13}),
    ("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", "RUN243", {"pci_bus_id": "0000:3b:00.0"}),
    (
        "NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0) installed in this system has fallen off the bus and is not responding to commands.",
        "RUN243",
        {},
    ),
    (
        "NVRM: nvCheckOkFailedNoLog: Check failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from intrServiceStall_HAL(pGpu, pIntr) @ intr.c:1249",
        "RUN243",
        {"nvrm": "NV_ERR_GPU_IS_LOST"},
    ),
    (
        "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1127)",
        "RUN293",
        {"rm_status": "0x26:0xffff:1127"},
    ),
    (
        "NVRM: GPU 0000:3b:00.0: GPU does not have the necessary power cables connected.",
        "RUN293",
        {"pci_bus_id": "0000:3b:00.0"},
    ),
    (
        "NVRM: GPU 0000:3b:00.0: Failed to copy vbios to system memory.",
        "RUN293",
        {"pci_bus_id": "0000:3b:00.0"},
    ),
]


@pytest.mark.parametrize("prefix", KERNEL_PREFIXES)
@pytest.mark.parametrize("line,code,facts", NVRM)
def test_kernel_nvrm_records(prefix: str, line: str, code: str, facts: dict[str, Any]) -> None:
    _check(prefix + line + "\n", code, facts)


# nv.c's long messages, printed over several lines that each carry the kernel's prefix again.
NV_MULTILINE = [
    (
        "NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0)\nNVRM: installed in this system has\nNVRM: fallen off the bus and is not responding to commands.",
        "RUN243",
        {"pci_bus_id": "0000:3b:00.0"},
    ),
    (
        "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2330)\nNVRM: installed in this system is not supported by the\nNVRM: NVIDIA 550.90.07 driver release.\nNVRM: Please see 'Appendix A - Supported NVIDIA GPU Products'",
        "RUN262",
        {"reason": "gpu_not_supported_by_driver", "driver_version": "550.90.07", "pci_id": "10de:2330"},
    ),
    (
        "NVRM: The NVIDIA probe routine was not called for 1 device(s).\nNVRM: This can occur when a driver such as: \nNVRM: nouveau, rivafb, nvidiafb or rivatv \nNVRM: was loaded and obtained ownership of the NVIDIA device(s).\nNVRM: No NVIDIA devices probed.",
        "RUN262",
        {"reason": "no_driver"},
    ),
]


@pytest.mark.parametrize("prefix", KERNEL_PREFIXES)
@pytest.mark.parametrize("record,code,facts", NV_MULTILINE)
def test_nv_multiline_records(prefix: str, record: str, code: str, facts: dict[str, Any]) -> None:
    _check("".join(prefix + ln + "\n" for ln in record.split("\n")), code, facts)


# NVML (nvmlErrorString, pynvml's class names), nvidia-smi, slurmstepd, nvidia-container-cli.
NVML_AND_TOOLS = [
    ("Unable to determine the device handle for GPU0000:4F:00.0: Unknown Error", "RUN243"),
    (
        "Unable to determine the device handle for gpu 0000:02:00.0: GPU is lost.  Reboot the system to recover this GPU",
        "RUN243",
    ),
    ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", "RUN243"),
    ("slurmstepd: error: NVML: Failed to get usage(15): GPU is lost", "RUN243"),
    ("pynvml.nvml.NVMLError_ResetRequired: GPU requires restart", "RUN293"),
    ("Failed to initialize NVML: Driver/library version mismatch", "RUN261"),
    ("pynvml.nvml.NVMLError_LibRmVersionMismatch: Driver/library version mismatch", "RUN261"),
    ("Failed to initialize NVML: Driver Not Loaded", "RUN262"),
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "RUN262"),
    ("pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "RUN262"),
    (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
        "RUN262",
    ),
    (
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is properly installed and present in your system.",
        "RUN262",
    ),
    ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.", "RUN262"),
    (
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        "RUN263",
    ),
    (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown.",
        "RUN261",
    ),
    ("nvidia-container-cli: device error: 3: unknown device: unknown.", "RUN264"),
    (
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
        "RUN262",
    ),  # go-nvml (NVIDIA's Kubernetes device plugin, dcgm-exporter) prints the enum without its NVML_ prefix
    ("E0101 00:00:00.000000 1 main.go:132] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.", "RUN262"),
    ("failed to initialize NVML: ERROR_DRIVER_NOT_LOADED", "RUN262"),
    ("Failed to initialize NVML: ERROR_LIB_RM_VERSION_MISMATCH", "RUN261"),
    ("error getting device handle for index 3: ERROR_GPU_IS_LOST", "RUN243"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", NVML_AND_TOOLS)
def test_nvml_and_tools(prefix: str, line: str, code: str) -> None:
    _check(prefix + line + "\n", code)


# Xids reported outside the kernel log: NVIDIA's Kubernetes device plugin (internal/rm/health.go and its
# older nvidia.go) and a person's summary of dmesg (below the log's own records: tier 1).
XID_ELSEWHERE = [
    (
        "I0304 10:00:00.000000 1 health.go:152] XidCriticalError: Xid=48 on Device=GPU-d23d91a3-1111-2222-3333-444455556666; marking device as unhealthy.",
        "RUN242",
        {"xid": 48, "gpu_uuid": "GPU-d23d91a3-1111-2222-3333-444455556666"},
    ),
    (
        "2021/01/02 03:04:05 XidCriticalError: Xid=79 on Device=GPU-8f8e0000-1111-2222-3333-444455556666, the device will go unhealthy.",
        "RUN243",
        {"xid": 79},
    ),
    ("2021/01/02 03:04:05 XidCriticalError: Xid=79, All devices will go unhealthy.", "RUN243", {"xid": 79}),
    (
        "  - `Xid 48 / 171`: uncorrectable double-bit ECC (DBE) in HBM framebuffer",
        "RUN242",
        {"xid": 48, "xids": [48, 171]},
    ),
    ("we saw Xid 79 on node 12 and the GPU had fallen off the bus", "RUN243", {"xid": 79}),
]


@pytest.mark.parametrize("line,code,facts", XID_ELSEWHERE)
def test_xids_reported_outside_the_kernel_log(line: str, code: str, facts: dict[str, Any]) -> None:
    _check(line + "\n", code, facts)


def test_an_xid_summary_does_not_outrank_the_kernel_record() -> None:
    log = (
        "we saw Xid 79 on node 12 and the GPU had fallen off the bus\n"
        "[ 1843.439669] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
    )
    _check(log, "RUN242", {"xid": 48, "pci_bus_id": "0000:3b:00"})


# The NVSwitch Fabric Manager's own records (nv-fabricmanager, its start script, systemd) across releases.
FABRIC = [
    "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 doesn't match with driver version 550.120. Please update with the matching NVIDIA driver package.",
    "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03. Please update with matching NVIDIA driver package.",
    "fabric manager NVIDIA GPU driver interface version 550.90.07 don’t match with driver version 550.107.02. Please update with matching NVIDIA driver package",
    "Job for nvidia-fabricmanager.service failed because the control process exited with error code.",
    "Nov 15 14:15:47 leon-NF5468M6 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE",
    'Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1',
    "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]",
]


@pytest.mark.parametrize("line", FABRIC)
def test_fabric_manager_records(line: str) -> None:
    _check(line + "\n", "RUN262", {"reason": "fabric_manager"})


def test_fabric_manager_versions_are_facts() -> None:
    _check(FABRIC[0] + "\n", "RUN262", {"fabric_manager_version": "550.127.05", "driver_version": "550.120"})


def test_no_gpu_in_a_tools_words_is_the_environment_but_yields_to_a_reason() -> None:
    _check("$ nvidia-smi\nNo devices were found\n", "RUN262", {"reason": "no_visible_device"})
    assert_log = (
        '  File "train.py", line 3, in <module>\n    assert torch.cuda.is_available()\nAssertionError\n'
    )
    _check(assert_log, "RUN262", {"reason": "no_visible_device"})
    # with the reason in the same log, the reason is the root cause
    _check(
        "[   38.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
        "$ nvidia-smi\nNo devices were found\n",
        "RUN243",
    )
    _check(
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error 804: forward "
        "compatibility was attempted on non supported HW\n" + assert_log,
        "RUN261",
    )


def test_a_fabric_manager_with_nothing_to_do_yields_to_the_jobs_own_error() -> None:
    # NV_WARN_NOTHING_TO_DO on a machine without NVSwitches is harmless: the job's own failure wins.
    log = FABRIC[-1] + "\n[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    _check(log, "RUN244")


def test_container_runtime_facts() -> None:
    _check(
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown.\n",
        "RUN261",
        {"required_cuda": "12.4"},
    )
    _check("nvidia-container-cli: device error: 3: unknown device: unknown.\n", "RUN264", {"device": "3"})


# torch's own texts (torch/cuda/__init__.py across 1.x-2.x, torch/serialization.py, c10d).
TORCH = [
    ("AssertionError: Torch not compiled with CUDA enabled", "RUN262", {"reason": "cpu_build_of_torch"}),
    (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "RUN262",
        {"reason": "no_driver"},
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
        "RUN261",
        {"driver_version_found": 11040},
    ),
    (
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver",
        "RUN261",
        {},
    ),
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", "RUN262", {}),
    (
        "AssertionError: libcudart functions unavailable. It looks like you have a broken build?",
        "RUN263",
        {"library": "libcudart"},
    ),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", "RUN262", {}),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "RUN263", {}),
    ("RuntimeError: No CUDA GPUs are available", "RUN262", {}),
    ("RuntimeError: CUDA error: invalid device ordinal", "RUN264", {}),
    (
        "RuntimeError: Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.",
        "RUN264",
        {"device": 3, "device_count": 1},
    ),
    (
        "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "RUN265",
        {"arch": "sm_120"},
    ),
    (
        "UserWarning: Found GPU0 Tesla K40m which is of cuda capability 3.5. PyTorch no longer supports this GPU because it is too old. The minimum cuda capability supported by this library is 3.7.",
        "RUN265",
        {"arch": "sm_35", "gpu_index": 0},
    ),
    (
        "UserWarning: Found GPU1 NVIDIA GeForce GTX 1080 which is of cuda capability 6.1. Minimum and Maximum cuda capability supported by this version of PyTorch is (7.0) - (12.0)",
        "RUN265",
        {"arch": "sm_61", "gpu_index": 1},
    ),
    (
        "UserWarning: Found GPU0 NVIDIA GeForce RTX 2080 Ti which requires CUDA_VERSION >= 10000 to work properly, but your PyTorch was compiled with CUDA_VERSION 9000.",
        "RUN265",
        {"required_cuda_version": 10000},
    ),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "RUN265", {}),
    ("RuntimeError: CUDA error: named symbol not found", "RUN265", {"cuda_error_number": 500}),
    (
        "lightning_fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your system since the accelerator is not available. The following accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu'].",
        "RUN262",
        {"framework": "lightning"},
    ),
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUAccelerator can not run on your system since the accelerator is not available. The following accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu'].",
        "RUN262",
        {},
    ),
    (
        "pytorch_lightning.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
        "RUN262",
        {},
    ),
    (
        'RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device) INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":1139, please report a bug to PyTorch. ',
        "RUN262",
        {"nvml_call": "nvmlDeviceGetHandleByPciBusId_v2"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code,facts", TORCH)
def test_torch_texts(prefix: str, line: str, code: str, facts: dict[str, Any]) -> None:
    _check(prefix + line + "\n", code, facts)


# The CUDA toolkit against this PyTorch and the GPU (torch/utils/cpp_extension.py, DeepSpeed's op builder, nvcc).
TOOLKIT = [
    "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.8). Please make sure to use the same CUDA versions.",
    "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)",
    "nvcc fatal   : Unsupported gpu architecture 'compute_90'",
    "nvcc fatal   : Value 'sm_90a' is not defined for option 'gpu-architecture'",
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("line", TOOLKIT)
def test_toolkit_against_torch_and_gpu(prefix: str, line: str) -> None:
    _check(prefix + line + "\n", "RUN296")


# The dynamic loader under torch and its extensions: a library or a symbol (version) that is missing (a
# missing nccl* symbol is the more precise RUN195: torch built against a newer NCCL than it loaded).
LOADER = [
    (
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Users\\me\\anaconda3\\envs\\t\\lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.',
        "RUN263",
    ),
    (
        'OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "C:\\Python311\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.',
        "RUN263",
    ),
    (
        "ImportError: /x/site-packages/torchvision/_C.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev",
        "RUN263",
    ),
    (
        "ImportError: /x/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at5emptyEN3c108ArrayRefIlEENS0_13TensorOptionsENS0_8optionalINS0_12MemoryFormatEEE",
        "RUN263",
    ),
    (
        "ImportError: /home/u/.local/lib/python3.10/site-packages/some_ext.so: undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE",
        "RUN263",
    ),
    (
        "ImportError: /x/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent",
        "RUN263",
    ),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", "RUN263"),
    ("OSError: libcudart.so.12: cannot open shared object file: No such file or directory", "RUN263"),
    (
        "ImportError: /usr/local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
        "RUN195",
    ),
    (
        "ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "RUN263",
    ),
    (
        "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so)",
        "RUN263",
    ),
    (
        "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by /x/site-packages/deepspeed/ops/adam/cpu_adam.so)",
        "RUN263",
    ),
    (
        "ImportError: /x/lib/python3.8/site-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.11: undefined symbol: cublasLtGetStatusString, version libcublasLt.so.11",
        "RUN263",
    ),
    (
        "OSError: /x/site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: _ZN11nvrtcHelpers4loadEb, version libcudnn_ops_infer.so.8",
        "RUN263",
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line,code", LOADER)
def test_loader_errors(prefix: str, line: str, code: str) -> None:
    _check(prefix + line + "\n", code)


# NCCL's cudawrap.cc, nvmlwrap.cc and graph/paths.cc WARNs: raw, and as torch's "Last error:" (the
# ncclSystemError line is exactly 100 columns with its trailing space: the reader joins the next line).
NCCL_PLATFORM = [
    (
        "misc/cudawrap.cc:179 NCCL WARN Failed to find CUDA library libcuda.so (NCCL_CUDA_PATH='') : libcuda.so: cannot open shared object file: No such file or directory",
        "RUN263",
        {"library": "libcuda.so"},
    ),
    ("Failed to load CUDA missing symbol cuGetProcAddress", "RUN261", {"symbol": "cuGetProcAddress"}),
    ("cuDriverGetVersion failed with 999", "RUN262", {"cuda_error_number": 999}),
    ("CUDA some PFN functions not found in the library", "RUN261", {}),
    ("Retrieve cuMemCreate failed with 500 status 1", "RUN261", {"symbol": "cuMemCreate"}),
    (
        "CUDA Driver version found is 11020. Minimum requirement is 11030",
        "RUN261",
        {"driver_version_found": 11020},
    ),
    ("Failed to open libnvidia-ml.so.1", "RUN262", {"library": "libnvidia-ml.so.1"}),
    ("nvmlInit_v2() failed: Driver Not Loaded", "RUN262", {"nvml_error": "Driver Not Loaded"}),
    (
        "nvmlDeviceGetHandleByPciBusId() failed: Not Found",
        "RUN262",
        {"nvml_call": "nvmlDeviceGetHandleByPciBusId"},
    ),
    ("nvmlInit_v2() failed: Driver/library version mismatch", "RUN261", {}),
    ("nvmlDeviceGetHandleByIndex(3) failed: GPU is lost", "RUN243", {}),
    ("enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'", "RUN265", {"cuda_error_number": 500}),
    ("init.cc:426 NCCL WARN Cuda failure 'operation not supported'", "RUN292", {"feature": "cuda_refused"}),
    (
        "transport/p2p.cc:275 NCCL WARN Cuda failure 800 'operation not permitted'",
        "RUN292",
        {"feature": "cuda_refused"},
    ),
    (
        "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.",
        "RUN310",
        {"gpus": [1, 0]},
    ),
]
SYSTEM_ERROR = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "Last error:\n"
)
CUDA_ERROR = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
)


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("text,code,facts", NCCL_PLATFORM)
def test_nccl_platform_warns(prefix: str, text: str, code: str, facts: dict[str, Any]) -> None:
    line = text if "NCCL WARN" in text else WARN + text
    _check(prefix + line + "\ngpu-node-07:2814:2856 [0] NCCL INFO init.cc:1501 -> 2\n", code, facts)


@pytest.mark.parametrize("text,code,facts", NCCL_PLATFORM)
def test_nccl_platform_under_torchs_wrapper(text: str, code: str, facts: dict[str, Any]) -> None:
    last = text.split("NCCL WARN ", 1)[-1]
    wrapper = CUDA_ERROR if code == "RUN310" else SYSTEM_ERROR
    _check(wrapper + last + "\n", code, {k: v for k, v in facts.items() if k != "gpus"})


DECOYS = [
    "node1:1234:5678 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation",
    "node1:1234:5678 [0] NCCL INFO Failed to open libibverbs.so[.1]",
    "YYY:2396:2428 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "node1:1234:5678 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v6 symbol.",
    "node1:1234:5678 [0] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
    "node1:1234:5678 [0] NCCL INFO cudaDriverVersion 12020",
    "node1:1234:5678 [0] NCCL INFO nvmlDeviceGetNvLinkState() failed: Not Supported",
    "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)",
    "RuntimeError: CUDA error: peer access is already enabled",
    "ModuleNotFoundError: No module named 'torch'",
    "ImportError: cannot import name 'LlamaTokenizer' from 'transformers' (/x/site-packages/transformers/__init__.py)",
    "/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory",
    "WARNING: infoROM is corrupted at gpu 0000:3b:00.0",
    "NVML library version: 535.183",
    "| NVIDIA-SMI 535.54.03              Driver Version: 535.54.03    CUDA Version: 12.2     |",
    "print('Xid 79 means the GPU has fallen off the bus')",
    "What does Xid 79 (GPU fallen off the bus) tell me about this node?",
    "RuntimeError: CUDA error: operation not permitted when stream is capturing",
    "HTTP/1.1 404 Not Found",
    'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\x\\site-packages\\shapely\\geos_c.dll" or one of its dependencies.',
    # NCCL's optional plugins (plugin/plugin_open.cc), also pasted without NCCL's prefix
    "TUNER/Plugin: libnccl-tuner.so: libnccl-tuner.so: cannot open shared object file: No such file or directory",
    "PROFILER/Plugin: Could not find: libnccl-profiler.so.",
    "Unable to load libnccl-net.so : libnccl-net.so: cannot open shared object file: No such file or directory",
    "libnccl-env.so: cannot open shared object file: No such file or directory",
    "/x/torch/amp/autocast_mode.py:250: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
    "    if not torch.cuda.is_available():",
    "lightning_fabric.utilities.exceptions.MisconfigurationException: `MPSAccelerator` can not run on your system since the accelerator is not available. The following accelerator(s) is available and can be passed into `accelerator` argument of `Trainer`: ['cpu', 'cuda'].",
    # the loader's words for libraries outside the training stack: a Python environment broken elsewhere
    "ImportError: /lib/x86_64-linux-gnu/libp11-kit.so.0: undefined symbol: ffi_type_pointer, version LIBFFI_BASE_7.0",
    "ImportError: /x/site-packages/numpy/core/_multiarray_umath.cpython-310-x86_64-linux-gnu.so: undefined symbol: cblas_sgemm",
    "/usr/bin/node: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by /usr/bin/node)",
    "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /x/site-packages/scipy/linalg/_matfuncs_sqrtm_triu.cpython-311-x86_64-linux-gnu.so)",
    "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
]


@pytest.mark.parametrize("prefix", PREFIXES[:3])
@pytest.mark.parametrize("line", DECOYS)
def test_decoys_with_the_same_words_stay_silent(prefix: str, line: str) -> None:
    assert _root(prefix + line + "\n") is None


def test_a_paging_file_dll_error_is_host_memory_not_a_missing_library() -> None:
    # WinError 1455 (ERROR_COMMITMENT_LIMIT) is the host's memory: the loader's row leaves it, r6's host row
    # (userspace_oom.py, RUN122) reads it; never the missing library (RUN263)
    for prefix in PREFIXES[:3]:
        f = _root(
            prefix
            + "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error "
            'loading "C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.\n'
        )
        assert f is not None and f.code == "RUN122", (prefix, f)


def test_a_cuda_graph_capture_error_inside_nccl_is_not_the_platform() -> None:
    # cudart's 900 "operation not permitted when stream is capturing" is the caller's CUDA graph: NCCL's own
    # class (RUN194), not the platform's 800 "operation not permitted".
    root = _root(WARN + "Cuda failure 'operation not permitted when stream is capturing'\n")
    assert root is not None and root.code == "RUN194", root


def test_versions_nccl_printed_at_init_are_facts_of_the_cuda_error() -> None:
    # init.cc's INFO lines above the failure: the driver's CUDA and the runtime NCCL was built for.
    log = (
        "node1:1234:1234 [0] NCCL INFO cudaDriverVersion 12020\n"
        "NCCL version 2.21.5+cuda12.4\n"
        "node1:1234:1290 [0] init.cc:1 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\n"
    )
    _check(
        log,
        "RUN261",
        {"driver_cuda_version": "12.2", "nccl_cuda_version": "12.4", "nccl_version": "2.21.5+cuda12.4"},
    )
