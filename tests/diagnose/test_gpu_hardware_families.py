"""Device faults and memory exhaustion in the shapes rules/accel_faults.py reads (and the ROCR reasons and
Paddle's MemoryError that gpu_runtime.py and host_oom.py now route), each line written from the code
that prints it (cited per row), behind the prefixes real logs add."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, root_finding

# (log, code, facts the root finding must carry)
_CASES: list[tuple[str, str, dict[str, Any]]] = [
    # NVSwitch driver, open-gpu-kernel-modules src/common/nvswitch (NVSWITCH_PRINT_SXID), kernel log
    (
        "[ 1234.567] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Fatal, Link 46 egress "
        "non-posted PRIV error (First)",
        "RUN347",
        {"sxid": 12028, "nvlink": 46, "pci_bus_id": "0000:86:00.0"},
    ),
    (
        "kernel: nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 30 sourcetrack timeout error",
        "RUN347",
        {"sxid": 24007, "nvlink": 30},
    ),
    (
        "nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 11001, Fatal, ingress invalid command",
        "RUN347",
        {"sxid": 11001},
    ),
    # RM knvlink's Xid 74 body pasted without its NVRM record
    (
        "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
        "RUN241",
        {"xid": 74, "nvlink": 3},
    ),
    # ROCR runtime.cc VMFaultHandler before the agent handle was printed (ROCm 1.x-3.x)
    (
        "Memory access fault by GPU node-1 on address 0x1e4000. Reason: Page not present or supervisor "
        "privilege.",
        "RUN244",
        {"hsa_node": 1, "address": "0x1e4000"},
    ),
    (
        "Memory access fault by GPU node-4 on address 0x7f1234567000(may not be exact address). Reason: "
        "ECC failure (if supported by HW).",
        "RUN242",
        {"hsa_node": 4},
    ),
    # ROCR 5.x-6.x reasons that are the hardware, with the agent handle (gpu_runtime.py)
    (
        "Memory access fault by GPU node-2 (Agent handle: 0x5581d0a1b2c0) on address 0x7f1234567000. "
        "Reason: DRAM ECC failure.",
        "RUN242",
        {"hsa_node": 2, "reason": "DRAM ECC failure"},
    ),
    (
        "Memory access fault by GPU node-2 (Agent handle: 0x55) on address 0x7f00(may not be exact "
        "address). Reason: Generic hang recovery.",
        "RUN295",
        {"reason": "Generic hang recovery"},
    ),
    # amdgpu gmc_v9_0.c (kernel 5.x-6.x) and gmc_v8_0.c (4.x)
    (
        "amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 "
        "pasid:32769, for process python pid 12 thread python pid 12)",
        "RUN244",
        {"hub": "gfxhub0", "fault": "no-retry", "pid": 12},
    ),
    (
        "amdgpu 0000:c1:00.0: amdgpu: [mmhub0] retry page fault (src_id:0 ring:0 vmid:3 pasid:32772)",
        "RUN244",
        {"hub": "mmhub0", "fault": "retry"},
    ),
    # kernel 6.x gmc_v10/v11: no kind, the process on its own line (ROCm/legacy-rocm-build#6157)
    (
        "[Fri Apr 17 19:56:43 2026] amdgpu 0000:65:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 "
        "vmid:8 pasid:200)\n[Fri Apr 17 19:56:43 2026] amdgpu 0000:65:00.0: amdgpu:  Process "
        "VLLM::EngineCor pid 7304 thread VLLM::EngineCor pid 7304",
        "RUN244",
        {"hub": "gfxhub"},
    ),
    ("amdgpu 0000:03:00.0: GPU fault detected: 146 0x0c08ec0c", "RUN244", {"runtime": "rocm"}),
    # an Xid named with its verb by a monitoring agent or a summary
    ("node-exporter: XID 79 detected on GPU 0000:3b:00.0, draining node", "RUN243", {"xid": 79}),
    ("We got Xid 94 errors on two nodes last night", "RUN242", {"xid": 94}),
    ("gpu-operator: Xid 119 occurred on GPU-8f8e", "RUN241", {"xid": 119}),
    # ONNX Runtime bfc_arena.cc AllocateRawInternal (1.x)
    (
        "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : "
        "RUNTIME_EXCEPTION : Exception during initialization: /onnxruntime_src/onnxruntime/core/framework/"
        "bfc_arena.cc:368 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, "
        "onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for "
        "requested buffer of size 1073741824",
        "RUN101",
        {"requested_bytes": 1073741824},
    ),
    # Paddle raises ResourceExhaustedError as Python's MemoryError (paddle/fluid/pybind exception mapping)
    (
        "MemoryError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate 1.000000GB memory "
        "on GPU 0, 30.000000GB memory has been allocated and available memory is only 500.000000MB.",
        "RUN101",
        {"gpu_index": 0},
    ),
    (
        "MemoryError: ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate "
        "256.000244MB memory on GPU 0, 15.559204GB memory has been allocated and available memory is only "
        "219.750000MB.\n\nPlease check whether there is any other process using GPU 0.",
        "RUN101",
        {"format": "paddle"},
    ),
    # TensorFlow gpu_device.cc EigenGpuStreamDevice::allocate (1.x-2.x): Kyubyong/transformer#77
    (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Ran out of GPU memory when "
        "allocating 1294336000 bytes for ",
        "RUN101",
        {"requested_bytes": 1294336000},
    ),
    # NumPy _ArrayMemoryError (1.17+), as TF's op kernel wraps it (tensorflow#45238)
    (
        "2020-11-28 09:40:14.816077: W tensorflow/core/framework/op_kernel.cc:1751] Resource exhausted: "
        "MemoryError: Unable to allocate 184. MiB for an array with shape (64, 26, 26, 3, 371) and data "
        "type float32",
        "RUN122",
        {"size": "184. MiB", "dtype": "float32"},
    ),
    # DCGM diagnostics' messages (dcgmlib/dcgm_errors.h)
    ("Found 12 faulty memory elements on GPU 0", "RUN242", {"gpu": 0, "faulty_elements": 12}),
    (
        "A memory mismatch was detected on GPU 1, but no error was reported by CUDA or NVML.",
        "RUN242",
        {"gpu": 1},
    ),
    ("Detected fatal errors on NvSwitch 2 link 14", "RUN347", {"nvswitch": 2, "nvlink": 14}),
    ("GPU 4's NvLink link 6 is currently down", "RUN346", {"gpu": 4, "nvlink": 6}),
    ("NvSwitch 2 - Only 10 NvLinks are up out of the expected 18", "RUN346", {"nvlinks_up": 10}),
    ("A corrupt InfoROM has been detected in GPU 3.", "RUN348", {"gpu": 3}),
    # the cloud's record of a reclaimed VM: EC2 StateReason, Azure Scheduled Events
    ("Server.SpotInstanceTermination: Spot instance termination", "RUN133", {"reporter": "aws"}),
    ('{"EventId": "A1B2", "EventType": "Preempt", "ResourceType": "VirtualMachine"}', "RUN133", {}),
    # the fault named without the kernel's record: a title, an agent's summary, a user's line
    ("GPU has fallen off the bus.", "RUN243", {}),
    ("[Bug]: gpu fell off the bus after 3 hours of FSDP training", "RUN243", {}),
    ("GPUs keep falling off the bus on node 7", "RUN243", {}),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log,code,facts", _CASES)
def test_device_fault_and_memory_shapes(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    root = root_finding("".join(prefix + ln + "\n" for ln in log.split("\n")))
    assert root is not None and root.code == code, (log, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (log, k, root.facts)


# cgroup v2 memory.events read back by a job script: a non-zero oom_kill is the kernel's kill.
def test_cgroup_memory_events_with_oom_kills() -> None:
    log = "$ cat /sys/fs/cgroup/memory.events\nlow 0\nhigh 0\nmax 1532\noom 4\noom_kill 4\n"
    root = root_finding(log)
    assert root is not None and root.code == "RUN121" and root.facts.get("oom_kills") == 4, root


@pytest.mark.parametrize(
    "log",
    [
        # corrected by the switch
        "nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate\n",
        # a zero counter, and a counter with nothing around it that says it is a cgroup's
        "$ cat /sys/fs/cgroup/memory.events\nlow 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
        "oom_kill 3\n",
        # amdgpu faults of VMID 0 / PASID 0: the kernel's own space, logged while OpenCL jobs succeed
        "[428921.293036] amdgpu 0000:83:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:153 vmid:0 "
        "pasid:0, for process  pid 0 thread  pid 0)\n",
        # a question or code about an Xid is not a report of one
        "What does Xid 79 mean? is it detected by dcgm?\n",
        "    if xid == 79: detected = True\n",
        # an Xid of the application's own faults named in prose
        "Xid 13 detected while debugging my kernel\n",
    ],
)
def test_silent(log: str) -> None:
    assert root_finding(log) is None, log
