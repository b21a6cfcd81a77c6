"""Non-NVIDIA accelerators' runtime messages, read at their sources, under the prefixes real logs add:

- HIP (ROCm/clr hipamd/src/hip_error.cpp): hipGetErrorString's texts since ROCm 5.3 ("no ROCm-capable device
  is detected", "initialization error" as torch prints them, "HIP error: ..."), and its enum names that
  ROCm < 5.3 printed for the text ("HIP error: hipErrorContextAlreadyInUse"); RCCL's CUDACHECK quoting them.
- rocminfo / ROCr (rocminfo.cc, ROCm 4.x-6.x): /dev/kfd not openable, ROCk not loaded, the render group,
  and hsa_init's HSA_STATUS_ERROR_OUT_OF_RESOURCES after "hsa api call failure at:" (no device, not an OOM).
- RCCL's rocm_smi wrapper (ROCm/rccl src/misc/rocm_smi_wrap.cc): "ROCm SMI init failure ...".
- oneCCL (oneapi-src/oneCCL 2021.14: internal_kvs.cpp kvs_init / fill_local_host_ip, ze_call.cpp do_call's
  "ze error at <call>, code: ZE_RESULT_ERROR_..."), DPC++'s "No device of requested type available".
- AWS Neuron (aws-neuron-sdk: neuron-runtime/api/nrt_status.rst and the troubleshooting pages' quoted
  logs, 2021-2025): NRT/TDRV records, status names and numbers, nccom's "CCOM WARN".
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import check_root, prefixed, root_finding

HIP_TAIL = (
    "\nHIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\n"
    "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.\n"
)
OLD_HIP_TAIL = (
    "\nHIP kernel errors might be asynchronously reported at some other API call,so the stacktrace below "
    "might be incorrect.\nFor debugging consider passing HIP_LAUNCH_BLOCKING=1.\n"
)
TB = (
    'Traceback (most recent call last):\n  File "/workspace/train.py", line 41, in <module>\n'
    "    model.to(device)\n"
)

CASES: list[tuple[str, str, dict[str, Any]]] = [
    # --- HIP texts (ROCm 5.3+) and names (ROCm < 5.3) as torch raises them
    (TB + "RuntimeError: HIP error: initialization error" + HIP_TAIL, "RUN262", {}),
    ("[rank3]: RuntimeError: HIP error: initialization error\n", "RUN262", {}),
    (TB + "RuntimeError: HIP error: hipErrorContextAlreadyInUse" + OLD_HIP_TAIL, "RUN262", {}),
    (TB + "RuntimeError: HIP error: hipErrorInvalidImage" + OLD_HIP_TAIL, "RUN261", {}),
    (TB + "RuntimeError: HIP error: hipErrorOperatingSystem" + OLD_HIP_TAIL, "RUN262", {}),
    # RCCL's CUDACHECK with the HIP text
    (
        "node1:1234:1290 [0] init.cc:1580 NCCL WARN Cuda failure 'no ROCm-capable device is detected'\n",
        "RUN262",
        {},
    ),
    # ROCr's code object refused (hsa.h HSA_STATUS_ERROR_INVALID_ISA / INVALID_CODE_OBJECT)
    (
        ":0:rocdevice.cpp            :2614: 1234 us: [pid:1 tid:0x7f] Device::callbackQueue aborting with "
        "error : HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid. code: 0x100f\n",
        "RUN265",
        {"hsa_status": "HSA_STATUS_ERROR_INVALID_ISA"},
    ),
    (
        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  "
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.\n",
        "RUN265",
        {},
    ),
    # --- torch-xpu-ops ProcessGroupXCCL WorkXCCL::wait (src/xccl/ProcessGroupXCCL.cpp)
    (
        "[rank1]: torch.distributed.DistBackendError: Work timed out after 1800021 milliseconds.\n",
        "RUN151",
        {"elapsed_ms": 1800021},
    ),
    (
        "[rank1]:E1201 10:11:12.123000 4321 ProcessGroupXCCL.cpp:323] Work timed out after 1800021 "
        "milliseconds.\n",
        "RUN151",
        {"mode": "work_wait"},
    ),
    # --- libtpu's slice bootstrap between hosts (a rendezvous, not the chips)
    (
        "RuntimeError: TPU initialization failed: Failed to establish SliceBuilder grpc channel to "
        "10.130.0.12:8471.\n",
        "RUN222",
        {"peer": "10.130.0.12:8471"},
    ),
    # --- rocminfo / ROCr: the user cannot reach the GPUs
    (
        "ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
        "hsa api call failure at: /long_pathname_so_that_rpms_can_package_the_debug_info/src/rocminfo/"
        "rocminfo.cc:1143\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to "
        "allocate the "
        "necessary resources. This error may also occur when the core runtime library needs to spawn threads "
        "or create internal OS-specific events.\n",
        "RUN262",
        {"reason": "kfd_not_openable", "error": "Permission denied"},
    ),
    (
        "hsa api call failure at: /long_pathname_so_that_rpms_can_package_the_debug_info/src/rocminfo/"
        "rocminfo.cc:1143\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to "
        "allocate the "
        "necessary resources.\n",
        "RUN262",
        {"reason": "hsa_init"},
    ),
    ("ROCk module is NOT loaded, possibly no GPU devices\n", "RUN262", {"reason": "kfd_driver_not_loaded"}),
    (
        'mlx is not member of "render" group, the default DRM access group. Users must be a member of the '
        '"render" group or another DRM access group in order for ROCm applications to run successfully.\n',
        "RUN262",
        {"group": "render"},
    ),
    # --- RCCL's rocm_smi wrapper
    (
        "node1:1234:1290 [0] init.cc:1699 NCCL WARN ROCm SMI init failure An error occurred during "
        "initialization, during monitor discovery or when when initializing internal data structures\n",
        "RUN391",
        {"library": "rocm_smi_lib"},
    ),
    (
        "node1:1234:1290 [0] rocm_smi_wrap.cc:153 NCCL WARN rocm_smi_lib: 0000:C1:00.0 device index not "
        "found\n",
        "RUN391",
        {"pci_bus_id": "0000:c1:00.0"},
    ),
    # --- oneCCL and Level Zero
    (
        "terminate called after throwing an instance of 'ccl::v1::exception'\n  what():  oneCCL: "
        "ze_call.cpp:43 "
        "do_call: EXCEPTION: ze error at zeInit, code: ZE_RESULT_ERROR_UNINITIALIZED\n",
        "RUN351",
        {"ze_result": "ZE_RESULT_ERROR_UNINITIALIZED", "ze_call": "zeInit"},
    ),
    (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| internal_kvs.cpp:606 kvs_init: connection time (121) >= "
        "limit (120)\n",
        "RUN222",
        {"timeout_s": 120},
    ),
    (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| internal_kvs.cpp:195 init_main_server_by_env: specify "
        "CCL_KVS_IP_PORT\n",
        "RUN222",
        {"setting": "CCL_KVS_IP_PORT"},
    ),
    (
        "2024:08:21-10:41:21:( 8320) |CCL_ERROR| internal_kvs.cpp:325 fill_local_host_ip: can't find "
        "interface eth1 to get host IP\n",
        "RUN174",
        {"interface": "eth1"},
    ),
    (
        "terminate called after throwing an instance of 'sycl::_V1::runtime_error'\n  what():  No device of "
        "requested type available. Please check https://software.intel.com/content/www/us/en/develop/articles/"
        "intel-oneapi-dpcpp-system-requirements.html -1 (PI_ERROR_DEVICE_NOT_FOUND)\n",
        "RUN262",
        {"reason": "no_device"},
    ),
    # --- AWS Neuron
    (
        "2023-Jan-09 20:27:41.0593 15042:15042 ERROR   NRT:nrt_allocate_neuron_cores               "
        "NeuronCore(s) not available - Requested:nc1-nc1 Available:0\n",
        "RUN333",
        {"requested": "nc1-nc1", "available": 0},
    ),
    (
        "2024-Mar-01 10:00:00.0000 1234:1234 ERROR  NRT:nrt_allocate_neuron_cores               Logical "
        "Neuron Core(s) not available - Requested:lnc0-lnc0 Available:0 Logical Core size: 2\n",
        "RUN333",
        {"requested": "lnc0-lnc0"},
    ),
    (
        "2021-Nov-11 15:33:20.0161  7912:7912  ERROR  TDRV:tdrv_init_mla_phase1                    Could not "
        "open the nd0\n2021-Nov-11 15:33:20.0161  7912:7912  ERROR   NRT:nrt_init"
        "                                "
        "Failed to initialize devices, error:1\n",
        "RUN333",
        {"neuron_device": 0},
    ),
    (
        "2022-Sep-08 17:55:23.0768    19:19    ERROR  TDRV:tdrv_get_dev_info                       No neuron "
        "device available\n",
        "RUN333",
        {"reason": "no_device"},
    ),
    (
        "2021-Aug-11 18:38:27.0917 13713:13713 ERROR   NRT:nrt_init      Unable to determine Neuron Driver "
        "version. Please check aws-neuron-dkms package is installed.\n",
        "RUN398",
        {"reason": "driver_missing"},
    ),
    (
        "2021-Aug-11 19:18:21.0661 24616:24616 ERROR   NRT:nrt_init      This runtime requires Neuron Driver "
        "version 2.0 or greater. Please upgrade aws-neuron-dkms package.\n",
        "RUN398",
        {"required_driver": "2.0"},
    ),
    (
        "2023-Jul-28 22:23:13.0357 101413:101422 ERROR  TDRV:translate_one_pseudo_instr_v2           "
        "Unsupported hardware operator code 214 found in neff.\n",
        "RUN398",
        {"hw_operator_code": 214},
    ),
    (
        "2025-May-15 20:58:33.897479 224822:224822 ERROR  TDRV:log_dev_mem"
        "                             Failed "
        "to allocate 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4\n2025-May-15 20:58:33.899416 "
        "224822:224822 ERROR  TDRV:log_dev_mem_usage_table                 Displaying Current Memory "
        "Utilization:\n",
        "RUN101",
        {"requested": "4.000GB", "neuron_core": 4},
    ),
    (
        "ERROR 05-20 11:02:03 worker.py:88] RuntimeError: nrt_tensor_allocate status=4\n",
        "RUN101",
        {"nrt_status": "NRT_RESOURCE"},
    ),
    (
        "2025-Oct-01 23:48:34.002205 516278:516289 ERROR  TDRV:exec_consume_topsp_cc_notifications     "
        "[ND 1][NC 4] execution on model /home/ubuntu/compiled-models/model.MODULE_7c05.neff, is stuck after "
        "all collectives operation have completed\n",
        "RUN399",
        {"neuron_device": 1, "neuron_core": 4},
    ),
    (
        "2023-Jan-09 20:27:41.0593 15042:15042 ERROR  TDRV:exec_consume_infer_status_notifications "
        "(FATAL-RT-UNDEFINED-STATE) inference timeout (600000 ms) on Neuron Device 0 NC 0, waiting for "
        "execution completion notification\n",
        "RUN399",
        {"timeout_ms": 600000},
    ),
    (
        "2025-Oct-01 23:48:34.002260 516278:516285 ERROR  TDRV:exec_request_process_errors             "
        "[ND 1][NC 0] execution timeout (30000 ms) on model /home/ubuntu/m.neff, potentially caused by DGE "
        "notification\n",
        "RUN399",
        {"timeout_ms": 30000},
    ),
    (
        "2025-Oct-01 23:48:34.002207 516278:516288 ERROR   NRT:nrt_infodump                            "
        "Failure: NRT_EXEC_HW_ERR_COLLECTIVES in nrt_execute()\n",
        "RUN399",
        {"nrt_status_number": 1200},
    ),
    (
        "2025-Oct-01 23:48:34.002207 516278:516288 ERROR   NRT:nrt_infodump                            "
        "Failure: NRT_EXEC_HW_ERR_HBM_UE in nrt_execute()\n",
        "RUN242",
        {"nrt_status": "NRT_EXEC_HW_ERR_HBM_UE"},
    ),
    ("NrtError: NRT Error NRT_EXEC_HW_ERR_DMA_ABORT(1203): Failed to execute model\n", "RUN293", {}),
    (
        "2025-Oct-01 23:48:34.002207 516278:516288 ERROR   NRT:nrt_infodump                            "
        "Failure: NRT_NETWORK_PROXY_FAILURE in nrt_execute()\n",
        "RUN171",
        {},
    ),
    (
        "2021-Nov-15 20:23:27.0280 3793:3793 ERROR TDRV:tdrv_init_one_mla_phase2 nd0 nc0 HAL init failed. "
        "error:1\n2021-Nov-15 20:23:27.0280 3793:3793 ERROR TDRV:tpb_eng_init_hals_v2 CRITICAL HW ERROR: One "
        "or more engines are running. Please restart device by reloading driver:\n",
        "RUN293",
        {"reason": "device_needs_reset"},
    ),
    (
        "2023-Jun-14 19:05:29.0312 4112959:4113249 [12] bootstrap.cc:106 CCOM WARN Call to accept failed : "
        "Too many open files\n2023-Jun-14 19:05:29.0312 4112959:4113263 ERROR   ENC:ncclBootstrapSend        "
        "               failed neuronBootstrapSend request to NCCL\n",
        "RUN174",
        {"errno": "EMFILE"},
    ),
    (
        "2023-Jun-14 19:05:29.0312 4112959:4113326 ERROR   ENC:ncclBootstrapRecv"
        "                       failed neuronBootstrapRecv request to NCCL\n",
        "RUN174",
        {"phase": "bootstrap"},
    ),
]


@pytest.mark.parametrize("log,code,facts", CASES)
def test_accelerator_runtime_message(log: str, code: str, facts: dict[str, Any]) -> None:
    check_root(log, code, facts)


# A Python logger's prefix before the Neuron runtime's record (aws-neuron-sdk's quoted logs), a rank prefix
@pytest.mark.parametrize("prefix", ["2024-08-12 18:34:56,116::ERROR: ", "[rank3]: ", "(RayWorker pid=12) "])
@pytest.mark.parametrize("i", [22, 29, 32])
def test_neuron_records_behind_prefixes(prefix: str, i: int) -> None:
    log, code, _ = CASES[i]
    root = root_finding(prefixed(prefix, log.rstrip("\n")))
    assert root is not None and root.code == code, (prefix, log, root)


HEALTHY = [
    # a Work that some other library timed out, without torch.distributed around it
    "client: Work timed out after 30000 milliseconds, retrying\nstep 10 loss 2.1\n",
    # RCCL's performance warnings at init, then the communicator comes up
    "node1:1234:1234 [0] NCCL INFO RCCL version 2.18.3+hip6.0\n"
    "node1:1234:1234 [0] init.cc:142 NCCL WARN NUMA auto balancing enabled which can lead to variability in "
    'the RCCL performance! Disable by "sudo sysctl kernel.numa_balancing=0"\n'
    "node1:1234:1234 [0] NCCL INFO comm 0x5 rank 0 nranks 8 cudaDev 0 busId 3000 - Init COMPLETE\n",
    # rocminfo of a healthy host
    "ROCk module version 6.8.5 is loaded\n=====================\nHSA System Attributes\n"
    "=====================\nRuntime Version:         1.14\n",
    # Neuron runtime notes, a NON-FATAL wait the runtime ignored is kept below failures (tier 1): alone it is
    # still the finding, so only INFO lines here
    "2025-Oct-01 23:47:01.100000 516278:516278 INFO  NRT:nrt_load   Loaded model.neff\n"
    "2025-Oct-01 23:47:02.100000 516278:516278 INFO  NRT:nrt_allocate_neuron_cores  allocated nc0-nc1\n",
    # oneCCL's healthy warnings
    "2024:08:21-10:41:21:( 8320) |CCL_WARN| did not find MPI-launcher specific variables, switch to ATL/OFI, "
    "to force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi\n",
]


@pytest.mark.parametrize("log", HEALTHY)
def test_healthy_accelerator_lines_stay_silent(log: str) -> None:
    assert root_finding(log) is None, log
