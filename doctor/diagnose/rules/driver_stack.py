"""driver_stack: driver_env as the layers around PyTorch report it: NVML and nvidia-smi, the NVIDIA
container runtime, and torch's own device and build checks.

Formats (read at their sources):
- NVML's nvmlErrorString texts and pynvml's exception names for a driver that is absent: "Failed to
  initialize NVML: Driver Not Loaded", "pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
  "NVMLError_LibraryNotFound: NVML Shared Library Not Found", nvidia-smi's "NVIDIA-SMI couldn't find
  libnvidia-ml.so library in your system", nvidia-container-cli's "nvml error: driver not loaded"
  (RUN262). "Driver/library version mismatch" and "GPU is lost" are read by driver_env and gpu_hardware.
- nvidia-container-cli (libnvidia-container) refusing the container: "requirement error: unsatisfied
  condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container"
  (RUN261, the image's CUDA is newer than the host driver), "device error: 3: unknown device"
  (RUN264, NVIDIA_VISIBLE_DEVICES or --gpus names a GPU the host does not have).
- torch/cuda/__init__.py: "libcudart functions unavailable. It looks like you have a broken build?"
  (RUN263); _check_capability's warnings "Found GPU0 Tesla K40m which is of cuda capability 3.5.
  PyTorch no longer supports this GPU because it is too old." (1.x-2.x), "... which is of cuda
  capability 6.1. Minimum and Maximum cuda capability supported by this version of PyTorch is (7.0) -
  (12.0)" and "Found GPU0 ... which requires CUDA_VERSION >= 10000 to work properly, but your PyTorch
  was compiled with CUDA_VERSION 9000" (RUN265); torch/serialization.py "Attempting to deserialize
  object on CUDA device 3 but torch.cuda.device_count() is 1" (RUN264); c10/cuda's INTERNAL ASSERT on an
  NVML call, "NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id, &nvml_device)
  INTERNAL ASSERT FAILED" (RUN262).
- nv.c's "The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2330) installed in this system is not supported by
  the NVIDIA 550.90.07 driver release." over several NVRM lines, "No NVIDIA devices probed" (RUN262).
- nvidia-smi's "No devices were found" (tier 1: a record that says why wins) and a traceback ending in
  the job's own "assert torch.cuda.is_available()" (RUN262).
- Lightning's accelerator connector: "`CUDAAccelerator` can not run on your system since the accelerator
  is not available" (1.7-2.x; "GPUAccelerator" in 1.6, "No supported gpu backend found!" in 1.5) (RUN262).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.gpu_hardware import NV_GPU_START, nv_gpu_record
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# NVML_ERROR_DRIVER_NOT_LOADED (9) and NVML_ERROR_LIBRARY_NOT_FOUND (12) in every spelling: the
# message, pynvml's class, the enum (go-nvml, in the Kubernetes device plugin's "Failed to initialize NVML:
# ERROR_LIBRARY_NOT_FOUND", prints it without the NVML_ prefix), and the two tools that print them in their
# own words. The Go bindings of gpu-monitoring-tools (k8s-device-plugin <= 0.9, dcgm-exporter 1.x) word the
# failed dlopen of libnvidia-ml.so.1 "could not load NVML library" ("Failed to initialize NVML: could not load
# NVML library.", then the plugin's "did you set the docker default runtime to 'nvidia'?"): the same library
# missing from the container.
_NVML_NO_DRIVER = lazy_re.compile(
    r"[Dd]river Not Loaded|NVMLError_DriverNotLoaded|\b(?:NVML_)?ERROR_DRIVER_NOT_LOADED\b|"
    r"nvml error: driver not loaded|"
    r"NVML Shared Library Not Found|NVMLError_LibraryNotFound|\b(?:NVML_)?ERROR_LIBRARY_NOT_FOUND\b|"
    r"couldn't find libnvidia-ml\.so library|[Cc]ould not load NVML library"
)
# ... and nvidia-docker 1.0's own check of the image's CUDA_VERSION label against the driver (src/nvidia
# CheckCUDAVersion, 2016-2017): "nvidia-docker | 2017/12/20 13:08:46 Error: unsupported CUDA version: driver
# 8.0 < image 9.0.176".
_CONTAINER_CUDA = lazy_re.compile(
    r"unsatisfied condition: cuda\s*>=\s*([\d.]+)|"
    r"unsupported CUDA version: driver (?P<drv>[\d.]+) < image (?P<img>[\d.]+)"
)
_CONTAINER_DEVICE = lazy_re.compile(r"nvidia-container-cli: device error: ([^:]+?): unknown device")
_NO_CUDART = lazy_re.compile(r"libcudart functions unavailable")
_DESERIALIZE = lazy_re.compile(
    r"Attempting to deserialize object on CUDA device (\d+) but torch\.cuda\.device_count\(\) is (\d+)"
)
# c10/cuda/CUDACachingAllocator.cpp (expandable segments) and c10/cuda/driver_api.cpp check NVML calls with
# TORCH_INTERNAL_ASSERT: "NVML_SUCCESS == DriverAPI::get()->nvmlDeviceGetHandleByPciBusId_v2_( pci_id,
# &nvml_device) INTERNAL ASSERT FAILED at ../c10/cuda/CUDACachingAllocator.cpp:1139": NVML in this process
# cannot see the GPU CUDA uses (a container's NVML, MIG, a driver/library mismatch).
_NVML_ASSERT = lazy_re.compile(r"NVML_SUCCESS == DriverAPI::get\(\)->(nvml\w+?)_?\(")
# The same function's second check, after nvmlDeviceGetComputeRunningProcesses (torch 2.1+): "NVML_SUCCESS ==
# r INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator.cpp\":1123". reportProcessMemoryInfo runs
# only to word an out-of-memory error ("Process N has M memory in use"), so an allocation had already failed;
# NVML could not list the GPU's processes (Jetson, where NVML has no such call, MIG, a container): the cause
# is the memory (cuda_oom), the assert only hides its message.
_NVML_R_ASSERT = lazy_re.compile(r"NVML_SUCCESS == r INTERNAL ASSERT FAILED")
# The container runtime: Docker without NVIDIA's runtime registered ("docker: Error response from daemon:
# Unknown runtime specified nvidia."), Docker older than 19.03 ("unknown flag: --gpus"), and
# nvidia-container-cli's other refusals (libnvidia-container: "initialization error: driver rpc error: timed
# out", "mount error: ...", "detection error: ..."; Debian-style packages name the binary
# nvidia-container-cli.real and it prints that name); its NVML, library and requirement errors are read by the
# rows that name them.
_CONTAINER_RUNTIME = lazy_re.compile(
    r"Unknown runtime specified nvidia|unknown flag: --gpus|"
    r"nvidia-container-cli(?:\.real)?: (?:initialization|mount|detection|ldcache|container|driver) error: "
    r"(.+?)(?:: unknown\.?)?$"
)
# kubelet's device manager (Kubernetes): the pod was admitted for GPUs the NVIDIA device plugin can no longer
# give ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 8,
# Available: 7, which is unexpected"): a GPU the plugin marked unhealthy (an Xid) or a plugin restarted.
_K8S_ALLOCATE = lazy_re.compile(
    r"Allocate failed due to requested number of devices unavailable for nvidia\.com/gpu\. "
    r"Requested: (\d+), Available: (\d+)"
)
# Lightning's accelerator connector when the CUDA accelerator was asked for but torch sees no usable GPU
# (1.7-2.x: "`CUDAAccelerator` can not run on your system since the accelerator is not available. The
# following accelerator(s) is available ...: ['cpu']", 1.6 "GPUAccelerator ...", 1.5 "No supported gpu
# backend found!"). MPS/TPU accelerators are not this family.
_LIGHTNING_NO_GPU = lazy_re.compile(
    r"`?(?:CUDA|GPU)Accelerator`? can not run on your system since the accelerator is not available|"
    r"No supported gpu backend found!"
)
# nv.c: "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2330) installed in this system is not supported by
# the NVIDIA 550.90.07 driver release." (a GPU newer or older than the driver's support list; printed over
# several NVRM lines), and "NVRM: No NVIDIA devices probed." after "The NVIDIA probe routine was not called
# for 1 device(s)" (nouveau or another driver owns the GPU).
_UNSUPPORTED_BY_DRIVER = lazy_re.compile(r"not supported by the NVIDIA ([\d.]+) driver release")
_NOT_PROBED = lazy_re.compile(
    r"NVRM: No NVIDIA devices probed|NVIDIA probe routine was not called for \d+ device"
)
# nvidia-smi's whole answer when the driver is loaded but no GPU is bound or visible (a container started
# without the GPUs, a GPU gone from the bus: then its Xid is the cause, so tier 1 here).
_SMI_NO_DEVICES = lazy_re.compile(r"^\s*No devices were found\s*$")
# A traceback whose failing statement is the job's own check for a GPU: "assert torch.cuda.is_available()"
# followed by the bare AssertionError (the cause's tier, above the bare exception; torch's own words
# earlier in the log, when shown, say why and come first).
_ASSERT_AVAILABLE = lazy_re.compile(r"^\s*assert\s+(?:torch\.)?cuda\.is_available\(\)\s*(?:,.*)?$")
# TransformerEngine's userbuffers (TP comm+GEMM overlap; common/comm_gemm_overlap/userbuffers/
# userbuffers-host.cpp, TE 1.x-2.x): "CUDA device, driver and/or toolkit version does not support comm+GEMM
# overlap with CUDA Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead." (a workstation GPU, a
# driver before R530 or no Fabric Manager: no multicast objects), raised as an AssertionError/RuntimeError
# by Megatron-Core, NeMo and Megatron-Bridge.
_UB_MULTICAST = lazy_re.compile(
    r"does not support comm\+GEMM overlap with CUDA Multicast|UB_SKIPMC=1 to try CUDA IPC"
)
# accelerate/state.py (0.2x-1.x, PartialState / check_cuda_p2p_ib_support): "Using RTX 4000 series doesn't
# support faster communication broadband via P2P or IB. Please set `NCCL_P2P_DISABLE="1"` and
# `NCCL_IB_DISABLE="1" or use `accelerate launch` which will do this automatically." (consumer Ada GPUs
# have no P2P; NCCL hangs or fails without the two switches).
_ACCEL_NO_P2P = lazy_re.compile(
    r"(RTX 4000 series|RTX 5000 series|this GPU) doesn't support faster communication broadband via P2P or IB"
)
_CAPABILITY = lazy_re.compile(
    r"Found GPU(\d+) (.+?) which (?:is of (?:cuda|compute) capability(?: \(CC\))? (\d+)\.(\d+)|"
    r"requires CUDA_VERSION >= (\d+))"
)


def _ub_multicast(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: TransformerEngine's comm+GEMM overlap (userbuffers) needs CUDA Multicast, which "
            "this GPU, driver or toolkit does not support: set UB_SKIPMC=1 (CUDA IPC) "
            "or turn tp_comm_overlap off",
            {
                "feature": "cuda_multicast",
                "reason": "userbuffers_multicast_unsupported",
                "workaround": "UB_SKIPMC=1",
            },
            dedupe=(row.code, "ub_multicast"),
        )
    ]


def _accel_no_p2p(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: accelerate refused to start because {m.group(1)} GPUs have no P2P/IB path: set "
            'NCCL_P2P_DISABLE="1" and NCCL_IB_DISABLE="1" (or launch with accelerate launch)',
            {"gpu": m.group(1), "reason": "p2p_unsupported_gpu_series"},
            dedupe=(row.code, "accel_p2p"),
        )
    ]


def _nvml_no_driver(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lib = "Library" in m.group(0) or "libnvidia-ml" in m.group(0) or "NVML library" in m.group(0)
    return [
        row.event(
            hit,
            "the NVIDIA driver is not usable here: "
            + (
                "NVML's library (libnvidia-ml) is missing, so the driver's user-space part is not installed "
                "or not mounted into this container"
                if lib
                else "its kernel module is not loaded (Driver Not Loaded)"
            ),
            {"reason": "no_driver", "nvml_error": "library_not_found" if lib else "driver_not_loaded"},
            dedupe=(row.code, "no_driver"),
        )
    ]


def _container_cuda(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    need = m.group(1) or m.group("img")
    facts = {"required_cuda": need, "reason": "container_cuda_requirement"}
    if m.group("drv"):
        facts["driver_cuda"] = m.group("drv")
    tool = "nvidia-docker" if m.group("drv") else "nvidia-container-cli"
    return [
        row.event(
            hit,
            f"the container needs CUDA >= {need} but the host's NVIDIA driver is older "
            f"({tool} refused to start it): update the driver or use an image for an older CUDA",
            facts,
            dedupe=(row.code, "container"),
        )
    ]


def _container_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the container asked for GPU {m.group(1)}, which the host does not have "
            "(NVIDIA_VISIBLE_DEVICES or --gpus names an unknown device)",
            {"device": m.group(1), "reason": "container_unknown_device"},
            dedupe=(row.code, "container"),
        )
    ]


def _no_cudart(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "this PyTorch cannot reach its CUDA runtime (libcudart functions unavailable): a broken or "
            "mixed installation",
            {"library": "libcudart", "reason": "cudart_unavailable"},
            dedupe=(row.code, "libcudart"),
        )
    ]


def _deserialize(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    dev, count = int(m.group(1)), int(m.group(2))
    return [
        row.event(
            hit,
            f"{hit.who()} loads a checkpoint saved on CUDA device {dev} but sees only {count} GPU(s) "
            "(torch.load without map_location, or fewer visible GPUs than at save time)",
            {"device": dev, "device_count": count, "reason": "checkpoint_device_not_visible"},
            dedupe=(row.code, "deserialize"),
        )
    ]


def _nvml_assert(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"torch's NVML call {m.group(1)} failed (INTERNAL ASSERT in c10/cuda): NVML in this process "
            "cannot see the GPU CUDA uses (a container or MIG setup, or a driver/library mismatch)",
            {"nvml_call": m.group(1), "reason": "nvml_error"},
            dedupe=(row.code, "nvml_assert"),
        )
    ]


def _nvml_r_assert(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a CUDA allocation failed and torch's out-of-memory report then failed too (NVML_SUCCESS == r "
            "INTERNAL ASSERT in CUDACachingAllocator: NVML could not list the GPU's processes, as on Jetson, "
            "MIG "
            "or in some containers): the GPU ran out of memory",
            {"reason": "oom_report_failed", "nvml_call": "nvmlDeviceGetComputeRunningProcesses"},
            dedupe=(row.code, "nvml_r_assert"),
        )
    ]


def _container_runtime(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    detail = m.group(1) or (
        "this Docker is older than 19.03 and has no --gpus (use nvidia-docker or upgrade Docker)"
        if "--gpus" in m.group(0)
        else "Docker has no runtime named nvidia (the NVIDIA Container Toolkit is not installed or not "
        "registered with the daemon)"
    )
    return [
        row.event(
            hit,
            f"the container could not be given the GPUs: {clip(detail, 140)}",
            {"reason": "container_runtime", "detail": clip(detail, 200)},
            dedupe=(row.code, "container"),
        )
    ]


def _k8s_allocate(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"Kubernetes could not give the pod its GPUs ({m.group(1)} requested, {m.group(2)} available "
            "from the "
            "NVIDIA device plugin): a GPU marked unhealthy or the device plugin restarted",
            {
                "reason": "device_plugin_unavailable",
                "requested_gpus": int(m.group(1)),
                "available": int(m.group(2)),
            },
            dedupe=(row.code, "k8s"),
        )
    ]


def _lightning_no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "Lightning was asked for the CUDA accelerator but torch sees no usable GPU here (a CPU-only "
            "torch, no driver, or no GPU visible to this process)",
            {"reason": "no_visible_device", "framework": "lightning"},
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _nv_gpu_unsupported(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text, used = nv_gpu_record(hit)
    u = _UNSUPPORTED_BY_DRIVER.search(text)
    if not u:
        return None
    facts = {"reason": "gpu_not_supported_by_driver", "pci_bus_id": m.group(1).lower(), "pci_id": m.group(2)}
    facts["driver_version"] = u.group(1)
    return [
        row.event(
            hit,
            f"the NVIDIA {u.group(1)} driver does not support GPU {m.group(1)} (PCI ID {m.group(2)}): "
            "install a driver release that lists it",
            facts,
            used,
            dedupe=(row.code, "unsupported_by_driver"),
        )
    ]


def _not_probed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the NVIDIA driver did not take the GPU (NVIDIA probe routine not called / no devices probed): "
            "nouveau or another driver owns it",
            {"reason": "no_driver"},
            dedupe=(row.code, "no_driver"),
        )
    ]


def _smi_no_devices(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "nvidia-smi finds no GPU (No devices were found): the driver is loaded but no GPU is visible "
            "to this process or container",
            {"reason": "no_visible_device"},
            tier=1,
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _assert_available(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    nxt = [ln.text.strip() for ln in hit.after(2, same_rank=False)]
    if not any(t.startswith("AssertionError") for t in nxt):
        return None
    return [
        row.event(
            hit,
            "the job's own check for a GPU failed (assert torch.cuda.is_available()): torch sees no usable "
            "GPU in this process",
            {"reason": "no_visible_device"},
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _capability(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"gpu_index": int(m.group(1)), "gpu_name": clip(m.group(2), 60)}
    if m.group(3):
        facts["arch"] = f"sm_{m.group(3)}{m.group(4)}"
        why = f"compute capability {m.group(3)}.{m.group(4)}, which this PyTorch does not support"
    else:
        facts["required_cuda_version"] = int(m.group(5))
        why = f"a PyTorch built with CUDA >= {m.group(5)}"
    return [
        row.event(
            hit,
            f"GPU{m.group(1)} ({facts['gpu_name']}) needs {why}: install a build for this GPU",
            facts,
            dedupe=(row.code,),
        )
    ]


# Omniverse Kit's GPU Foundation (Isaac Sim, Isaac Lab, every Kit app) enumerating the GPUs for its renderer
# and its CUDA interop: "[Warning] [gpu.foundation.plugin] Skipping NVIDIA GPU due CUDA being in bad state:
# NVIDIA H100 80GB HBM3" (CUDA could not be initialised for that device: a CUDA_VISIBLE_DEVICES that hides the
# GPUs the Vulkan renderer sees, a vGPU or MIG slice, a driver too old or half installed), "[Error]
# [gpu.foundation.plugin] No device could be created. Some known system issues: ..." (no GPU usable at all),
# "[Error] [omni.kit.renderer.plugin] GPU Foundation is not initialized!" (its consequence).
_OMNI_GPU = lazy_re.compile(
    r"Skipping NVIDIA GPU due CUDA being in bad state:?\s*(?P<gpu>.*?)\s*$|"
    r"\[gpu\.foundation\.plugin\] (?P<none>No device could be)\b|"
    r"(?P<notinit>GPU Foundation is not initialized)"
)


def _omni_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("none"):
        what, tier = "Omniverse's GPU Foundation could not create any GPU device", 0
    elif m.group("notinit"):
        what, tier = "Omniverse's GPU Foundation is not initialised (no usable GPU)", 1
    else:
        what, tier = f"Omniverse skipped GPU {m.group('gpu') or '?'}: CUDA is in a bad state for it", 1
    return [
        row.event(
            hit,
            f"{what}: CUDA could not be initialised for the renderer's GPUs (CUDA_VISIBLE_DEVICES hiding "
            "the GPUs the renderer enumerates, a MIG or vGPU slice, or a driver that is too old or half "
            "installed)",
            {"reason": "omniverse_cuda_bad_state", **({"gpu": m.group("gpu")} if m.group("gpu") else {})},
            tier=tier,
            dedupe=(row.code, "omniverse"),
        )
    ]


# TensorFlow's and XLA's stream executor diagnostician (stream_executor/cuda/cuda_diagnostics.cc, TF 1.x to
# XLA today) after cuInit failed: "kernel version 535.54.3 does not match DSO version 535.104.5 -- cannot
# find working devices in this configuration": the loaded kernel module and the libcuda the process found
# are of two driver releases (a driver upgraded without a reboot, a container carrying its own libcuda).
_DSO_MISMATCH = lazy_re.compile(
    r"kernel version (\S+) does not match DSO version (\S+?)\s*-- cannot find working devices"
)


def _dso_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the NVIDIA kernel module ({m.group(1)}) and the libcuda this process loaded ({m.group(2)}) are "
            "of different driver releases: no GPU can be used (reboot after a driver upgrade, or remove a "
            "container's own libcuda)",
            {
                "reason": "driver_library_mismatch",
                "kernel_module_version": m.group(1),
                "dso_version": m.group(2),
            },
            dedupe=(row.code, "dso_mismatch"),
        )
    ]


SIGNATURES = (
    Signature(
        "transformer engine userbuffers without cuda multicast",
        _UB_MULTICAST,
        _ub_multicast,
        C.NCCL_PLATFORM_FEATURE.code,
        anchors=(b"CUDA Multicast", b"UB_SKIPMC"),
        worth=(rb"CUDA Multicast", rb"UB_SKIPMC"),
        words=("cuda multicast", "ub_skipmc"),
    ),
    Signature(
        "accelerate consumer gpu without p2p",
        _ACCEL_NO_P2P,
        _accel_no_p2p,
        C.PEER_ACCESS_UNSUPPORTED.code,
        anchors=(b"communication broadband",),
        worth=(rb"communication broadband",),
        words=("communication broadband",),
    ),
    Signature(
        "omniverse gpu foundation without cuda",
        _OMNI_GPU,
        _omni_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"CUDA being in bad state", b"No device could be", b"GPU Foundation is not"),
        worth=(rb"CUDA being in bad state", rb"No device could be", rb"GPU Foundation is not"),
        words=("cuda being in bad state", "no device could be", "gpu foundation is not initialized"),
    ),
    Signature(
        "stream executor: kernel module and libcuda differ",
        _DSO_MISMATCH,
        _dso_mismatch,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"does not match DSO version",),
        worth=(rb"does not match DSO version",),
        words=("does not match dso version",),
    ),
    Signature(
        "nvml without a driver",
        _NVML_NO_DRIVER,
        _nvml_no_driver,
        C.NO_CUDA_DEVICE.code,
        anchors=(
            b"river Not Loaded",
            b"DriverNotLoaded",
            b"DRIVER_NOT_LOADED",
            b"driver not loaded",
            b"Library Not Found",
            b"LibraryNotFound",
            b"LIBRARY_NOT_FOUND",
            b"libnvidia-ml.so library",
            b"load NVML library",
        ),
        worth=(
            rb"[Dd]river ?[Nn]ot ?[Ll]oaded|DRIVER_NOT_LOADED",
            rb"Library ?Not ?Found|LIBRARY_NOT_FOUND",
            rb"libnvidia-ml\.so library",
            rb"load NVML library",
        ),
        words=(
            "driver not loaded",
            "drivernotloaded",
            "driver_not_loaded",
            "library not found",
            "librarynotfound",
            "library_not_found",
            "libnvidia-ml.so library",
            "could not load nvml library",
        ),
    ),
    Signature(
        "container needs a newer driver",
        _CONTAINER_CUDA,
        _container_cuda,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"unsatisfied condition", b"unsupported CUDA version: driver"),
        worth=(rb"unsatisfied condition", rb"unsupported CUDA version: driver"),
        words=("unsatisfied condition", "unsupported cuda version"),
    ),
    Signature(
        "container unknown device",
        _CONTAINER_DEVICE,
        _container_device,
        C.DEVICE_MISMATCH.code,
        anchors=(b"unknown device",),
        worth=(rb"unknown device",),
        words=("unknown device",),
    ),
    Signature(
        "torch without its cuda runtime",
        _NO_CUDART,
        _no_cudart,
        C.LIBRARY_MISSING.code,
        anchors=(b"libcudart functions",),
        worth=(rb"libcudart functions",),
        words=("libcudart functions",),
    ),
    Signature(
        "checkpoint on an invisible device",
        _DESERIALIZE,
        _deserialize,
        C.DEVICE_MISMATCH.code,
        anchors=(b"device_count()",),
        words=("attempting to deserialize",),
    ),
    Signature(
        "torch's nvml assert",
        _NVML_ASSERT,
        _nvml_assert,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"NVML_SUCCESS",),
        words=("nvml_success",),
    ),
    Signature(
        "torch's oom report without nvml",
        _NVML_R_ASSERT,
        _nvml_r_assert,
        C.CUDA_OOM.code,
        anchors=(b"NVML_SUCCESS",),
        words=("nvml_success",),
    ),
    Signature(
        "container runtime refused the gpus",
        _CONTAINER_RUNTIME,
        _container_runtime,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"runtime specified nvidia", b"nvidia-container-cli", b"unknown flag: --gpus"),
        worth=(rb"runtime specified nvidia", rb"nvidia-container-cli", rb"unknown flag: --gpus"),
        words=("unknown runtime specified nvidia", "nvidia-container-cli", "unknown flag: --gpus"),
    ),
    Signature(
        "kubernetes gpu allocation",
        _K8S_ALLOCATE,
        _k8s_allocate,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"nvidia.com/gpu",),
        words=("nvidia.com/gpu",),
    ),
    Signature(
        "lightning without a gpu",
        _LIGHTNING_NO_GPU,
        _lightning_no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"Accelerator", b"gpu backend"),
        worth=(rb"Accelerator`? can not run", rb"gpu backend"),
        words=("can not run on your system", "no supported gpu backend"),
    ),
    Signature(
        "gpu not supported by this driver",
        NV_GPU_START,
        _nv_gpu_unsupported,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"PCI ID",),
        worth=(rb"PCI ID",),
        words=("pci id",),
    ),
    Signature(
        "no gpu probed",
        _NOT_PROBED,
        _not_probed,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"probed", b"probe routine"),
        worth=(rb"probed|probe routine",),
        words=("no nvidia devices probed", "probe routine was not called"),
    ),
    Signature(
        "nvidia-smi without devices",
        _SMI_NO_DEVICES,
        _smi_no_devices,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"No devices were found",),
        worth=(rb"No devices were found",),
        words=("no devices were found",),
    ),
    Signature(
        "assert cuda available",
        _ASSERT_AVAILABLE,
        _assert_available,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"is_available()",),
        words=("is_available()",),
    ),
    Signature(
        "gpu capability outside this build",
        _CAPABILITY,
        _capability,
        C.ARCH_UNSUPPORTED.code,
        anchors=(b"capability", b"CUDA_VERSION"),
        words=(
            "which is of cuda capability",
            "which is of compute capability",
            "which requires cuda_version",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
