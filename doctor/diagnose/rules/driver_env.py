"""driver_env: the software stack under PyTorch does not fit (driver, CUDA libraries, device
visibility).

Formats: torch/cuda/__init__.py "The NVIDIA driver on your system is too old (found version 11040).";
CUDA runtime and driver errors by message, number or enum name (pgdoctor.knowledge.cuda_errors: 35
insufficient driver, 100 no device, 802 system not yet initialized, 803/804, ...), as "CUDA error:
<message>", "Error 802: system not yet initialized" or "cudaErrorSystemNotReady"; "Found no NVIDIA driver
on your system"; "No CUDA GPUs are available"; "Torch not compiled with CUDA enabled" (Omniverse's GPU
Foundation and the stream executor's DSO mismatch: rules/driver_stack.py). Builds made for
another CUDA or GPU are rules/build_fit.py's, the NCCL backend without a GPU and a GPU index beyond the
visible ones are rules/device_visibility.py's, the dynamic loader's words (a library or a symbol missing)
rules/loader.py's.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gated_reader, read
from pgdoctor.knowledge import nccl_version
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.cuda_errors import CUDA_ERROR_WORDS, CudaError, find_cuda_error
from pgdoctor.model import lazy_re

_TOO_OLD = lazy_re.compile(r"NVIDIA driver on your system is too old \(found version (\d+)\)")
# (ROCm builds word the first two "No HIP GPUs are available" and "no ROCm-capable device is detected")
_NO_DEVICE = lazy_re.compile(
    r"No CUDA GPUs are available|Found no NVIDIA driver on your system|"
    r"Torch not compiled with CUDA enabled|No HIP GPUs are available|no ROCm-capable device is detected|"
    # MXNet built without CUDA asked for a GPU context (src/storage/storage.cc, src/common/cuda_utils.h:
    # "MXNetError: [..] src/storage/storage.cc:78: Compile with USE_CUDA=1 to enable GPU usage")
    r"Compile with USE_CUDA=1 to enable GPU usage"
)
# The driver is absent or unreachable from this process: nvidia-smi's and NVML's words, the container
# runtime's, torch's lazy init.
_NO_DRIVER = lazy_re.compile(
    r"couldn't communicate with the NVIDIA driver|"
    r"Failed to initialize NVML: (?:Unknown Error|GPU access blocked|Insufficient Permissions)|"
    r"NVIDIA driver (?:is )?not (?:loaded|installed|found)|"
    r"libcuda\.so(?:\.1)? (?:is )?not found|"
    r"could not select device driver \S* with capabilities: \[\[gpu\]\]|"
    r"CUDA driver initialization failed, you might not have a CUDA gpu|"
    r"on a CUDA device but torch\.cuda\.is_available\(\) is False|"
    r"not supported by the NVIDIA [\d.]+ driver release|"
    # kmod's modprobe when the driver's module was not built for the running kernel (a kernel upgrade whose
    # DKMS build failed): "modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.15.0-91-..."
    r"Module nvidia(?:[_-](?:uvm|drm|modeset|peermem))? not found in directory /lib/modules/|"
    # and when Secure Boot refuses the unsigned module: "modprobe: ERROR: could not insert 'nvidia': Required
    # key not available" (Key was rejected by service, on newer kernels)
    r"could not insert 'nvidia(?:[_-](?:uvm|drm|modeset|peermem))?': (?:Required key not available|"
    r"Key was rejected by service)|"
    # numba's driver loader (numba/cuda/cudadrv/driver.py): "CudaSupportError: Error at driver init: CUDA
    # driver library cannot be found."
    r"CUDA driver library cannot be found|"
    # ROCm's equivalents: rocm-smi without the amdgpu kernel module ("ERROR:root:Driver not initialized
    # (amdgpu not found in modules)"), and rocBLAS's Tensile host finding no GPU through HIP ("rocBLAS
    # error: Could not initialize Tensile host: No devices found"; "hipGetDeviceCount" failed under it).
    r"Driver not initialized \(amdgpu not found in modules\)|"
    r"Could not initialize Tensile host: No devices found"
)
# The NVSwitch Fabric Manager's own records (nv-fabricmanager's log, systemd): without it running, and at
# the driver's version, CUDA answers 802 "system not yet initialized" on every HGX/DGX GPU.
# Its wordings across releases: "don't match" (<= 535), "doesn't match ... with the matching" (550+), a
# typographic apostrophe in pastes; systemd's "Job for nvidia-fabricmanager.service failed", "Control
# process exited"; the start script's '"/usr/bin/nv-fabricmanager -c ..." failed! Exit code: 1'; and
# NV_WARN_NOTHING_TO_DO when it finds no NVSwitch (Blackwell without NVLSM: 802 on every GPU).
_FABRIC = lazy_re.compile(
    r"fabric manager NVIDIA GPU driver interface version (\S+) do(?:n|esn)[’']t match with driver version "
    r"(\S+?)\.?(?:\s|$)|"
    r"Failed to start NVIDIA fabric manager service|nvidia-fabricmanager\.service(?::? [Ff]ailed|: Control "
    r"process exited|: Main process exited)|nv-fabricmanager[^\n]*\bfailed! Exit code|"
    r"NVSwitch driver failed with error:\s*WARNING Nothing to do \[NV_WARN_NOTHING_TO_DO\]"
)
# torch 0.x's THCGeneral init failing with cudaErrorUnknown (30 in CUDA < 10.1).
_THC_INIT = lazy_re.compile(
    r"cuda runtime error \((\d+)\) : unknown error at \S*(?:THCGeneral|CUDAContext)\.c|"
    r"THCudaCheck FAIL file=\S*THCGeneral\.c\w* line=\d+ error=(\d+) : unknown error"
)
# NVML's user-space library and the loaded kernel module differ (a driver upgrade without a reboot).
# nvidia-container-cli words it in lower case ("nvml error: driver/library version mismatch").
# The kernel's own record of it (dmesg): "NVRM: API mismatch: the client has the version 535.54.03, but
# this kernel module has the version 525.85.12."
# By name too: pynvml's NVMLError_LibRmVersionMismatch, the enum, and go-nvml's
# "ERROR_LIB_RM_VERSION_MISMATCH" (the Kubernetes device plugin, dcgm-exporter).
_NVML_MISMATCH = lazy_re.compile(
    r"[Dd]river/library version mismatch|NVRM: API mismatch|\b(?:NVML_)?ERROR_LIB_RM_VERSION_MISMATCH\b|"
    r"NVMLError_LibRmVersionMismatch"
)
# Reasons more precise than the kind for single errors of the table.
_REASON = {102: "vgpu_not_licensed", 216: "exclusive_compute_mode", 304: "os_call_failed"}
_WHY = {
    "Torch not compiled with CUDA enabled": "cpu_build_of_torch",
    "Compile with USE_CUDA=1 to enable GPU usage": "cpu_build_of_mxnet",
    "Found no NVIDIA driver on your system": "no_driver",
}


# The versions NCCL prints at init beside the failure (init.cc: "cudaDriverVersion 12020", "NCCL version
# 2.19.3+cuda12.3"): the driver's CUDA and the runtime NCCL was built for, facts of a CUDA error of the stack.
_DRIVER_VERSION = lazy_re.compile(r"\bcudaDriverVersion (\d{4,6})\b")


def _versions_near(hit: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ln in [*hit.before(40, same_rank=False), hit.line]:
        d = _DRIVER_VERSION.search(ln.text)
        if d:
            v = int(d.group(1))
            out["driver_cuda_version"] = f"{v // 1000}.{v % 1000 // 10}"
        n = nccl_version.find(ln.text)
        if n and n.cuda:  # the banner: the CUDA NCCL was built for is the fact wanted beside the driver's
            out.update(n.facts())
    return out


def cuda_error_events(hit: Hit, t: str) -> list[Event]:
    """driver_env events for a CUDA error of the environment kind in `t` (also inside NCCL's
    "Cuda failure 802 'system not yet initialized'"), else []."""
    ce = find_cuda_error(t)
    if ce is None:
        return []
    facts: dict[str, Any] = {
        "cuda_error": ce.message,
        "cuda_error_number": ce.number,
        "cuda_error_name": ce.runtime_name,
        **_versions_near(hit),
    }
    if ce.kind == "driver_too_old":
        return [
            event(
                hit,
                C.DRIVER_TOO_OLD.code,
                f"the NVIDIA driver does not fit the CUDA runtime: {ce.message} "
                f"({ce.runtime_name}, {ce.number})",
                facts,
                dedupe=(C.DRIVER_TOO_OLD.code,),
            )
        ]
    if ce.kind == "arch_unsupported":
        return [
            event(
                hit,
                C.ARCH_UNSUPPORTED.code,
                f"CUDA: {ce.message} ({ce.runtime_name}, {ce.number}): this PyTorch "
                "(or NCCL, or a compiled extension) carries no code for this GPU's compute capability",
                facts,
                dedupe=(C.ARCH_UNSUPPORTED.code,),
            )
        ]
    if ce.kind == "peer_access":
        facts["reason"] = "peer_access_unsupported"
        return [
            event(
                hit,
                C.PEER_ACCESS_UNSUPPORTED.code,
                f"CUDA: {ce.message} ({ce.runtime_name}, {ce.number}): two "
                "GPUs of this job have no peer-to-peer path (PCIe ACS or IOMMU, a VM, "
                + ("BAR1 too small for the mapping (large BAR off), " if ce.number == 205 else "")
                + ("more peers than the driver maps per GPU (8), " if ce.number == 711 else "")
                + "or the platform disables P2P); NCCL_P2P_DISABLE=1 routes around it through host memory",
                facts,
                dedupe=(C.PEER_ACCESS_UNSUPPORTED.code,),
            )
        ]
    if ce.kind == "not_ready":
        facts["reason"] = "system_not_ready"
        return [
            event(
                hit,
                C.NO_CUDA_DEVICE.code,
                f"CUDA reports '{ce.message}' ({ce.runtime_name}, {ce.number}): on "
                "NVSwitch systems the NVIDIA Fabric Manager is not running or does not match the driver",
                facts,
                dedupe=(C.NO_CUDA_DEVICE.code, "not_ready"),
            )
        ]
    if ce.kind == "jit_missing":
        facts["library"] = "libnvidia-ptxjitcompiler"
        return [
            event(
                hit,
                C.LIBRARY_MISSING.code,
                f"CUDA: {ce.message} ({ce.runtime_name}, {ce.number}): the driver's PTX JIT library is "
                "missing (a partial driver install, or a container without the driver's compute libraries)",
                facts,
                dedupe=(C.LIBRARY_MISSING.code, "ptxjit"),
            )
        ]
    facts["reason"] = _REASON.get(ce.number) or (
        "no_visible_device" if ce.kind == "no_device" else "mps" if ce.kind == "mps" else "device_init_failed"
    )
    # 46 "busy or unavailable" (and 216, exclusive-thread mode) says the device refused the context, not
    # why: exclusive compute mode or another process (the cause when nothing else shows), or a GPU the
    # driver lost or must reset (then that record, an Xid or NVRM's, is the cause).
    tier = 1 if ce.number in (46, 216) else 0
    return [
        event(
            hit,
            C.NO_CUDA_DEVICE.code,
            f"no usable CUDA device: {ce.message} ({ce.runtime_name}, {ce.number})",
            facts,
            tier=tier,
            dedupe=(C.NO_CUDA_DEVICE.code, facts["reason"]),
        )
    ]


def _too_old(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    found = int(m.group(1))
    return [
        row.event(
            hit,
            "the NVIDIA driver is older than the CUDA runtime PyTorch needs"
            f" (driver reports CUDA {found // 1000}.{found % 1000 // 10})",
            {"driver_version_found": found},
            dedupe=(row.code,),
        )
    ]


class _CudaErrors:
    """The environment-kind CUDA errors of knowledge/cuda_errors as a row's finder."""

    pattern = "CUDA runtime and driver errors by message, number or enum name (knowledge/cuda_errors.py)"

    @staticmethod
    def search(text: str) -> Optional[CudaError]:
        return find_cuda_error(text)


# TensorFlow's GPU set-up warns and goes on without P2P ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:
# 1597] Unable to enable peer access between device ordinals 0 and 9, status: ... peer mapping resources
# exhausted"): not a failure.
_TF_PEER_WARNING = lazy_re.compile(r"Unable to enable peer access between device ordinals")
# A program that tries P2P and goes on without it says so as a warning of its own ("warning: failed to
# enable p2p on gpu #0: peer access is not supported between these two devices", kmcuda): a line whose
# own label is a warning is a healthy run's note; NCCL's "NCCL WARN" and an exception are failures.
_PEER_WARNING_LABEL = lazy_re.compile(r"^[\s\[(]*(?:[\w:.,-]+\s+){0,3}?(?:[Ww]arning|WARNING)\s*:")


# XLA's and TensorFlow's stream executor probe the driver at import and log the answer at E level ("E
# external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE:
# no CUDA-capable device is detected"; TF 1.x-2.x "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] ...",
# newer "cuInit(0) failed: ..."), then go on on the CPU: a library imported beside the job on a CPU node, not
# a failure. A framework that needed the GPU raises its own error (JAX: the backend row below, which reads
# this line for the reason).
_CUINIT_PROBE = lazy_re.compile(r"failed call to cuInit\b|\bcuInit\(0\) failed\b")


def _cuda_error(row: Signature, hit: Hit, ce: CudaError) -> Optional[list[Event]]:
    if _CUINIT_PROBE.search(hit.text):
        if ce.number == 100:
            return []  # no GPU in this machine or container: the probe of a CPU run
        # A GPU is there and the driver refused it (802 system not ready, 35 / 803 / 804 driver mismatch, 3
        # initialisation error, 304 OS call failed): the framework goes on on the CPU, which a GPU job never
        # meant; below any error the framework raises itself.
        return [
            dataclasses.replace(e, cause_tier=max(e.cause_tier, 1)) for e in cuda_error_events(hit, hit.text)
        ]
    if ce.kind == "peer_access" and _PEER_WARNING_LABEL.search(hit.text):
        return []
    if "peer" in hit.text or "PEER" in hit.text:
        # the warning, or its status on the next lines (its own wrap, or a terminal's at any column)
        near = [ln.text for ln in hit.before(4, False)] + [hit.text]
        if any(_TF_PEER_WARNING.search(sep.join(near)) for sep in ("", " ")):
            return []
    return cuda_error_events(hit, hit.text) or None


# A CUDA check macro that prints the source location before cudaGetErrorString's message, the message
# wrapped onto the next line by a paste or by the macro itself: nccl-tests' CUDACHECK ("Test CUDA failure
# common.cu:1007 '<message>'"), DeepEP's EPException ("Failed: CUDA error /x/csrc/deep_ep.cpp:200" then
# "'peer access is not supported between these two devices'"); torch7's cutorch / torch-ipc "cuda runtime
# error (38) : " with the message on the next line.
_TEST_FAILURE_CUT = lazy_re.compile(
    r"(?:CUDA failure|CUDA error) \S+:\d+:?\s*$|cuda runtime error \(\d+\) :\s*$"
)


def _test_failure_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text, _used = hit.block(2)
    return cuda_error_events(hit, text) or None


def _nvml_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the NVIDIA kernel module and its user-space libraries are different "
            "versions (Driver/library version mismatch: the driver was upgraded without a reboot)",
            {"reason": "driver_library_mismatch"},
            dedupe=(row.code, "nvml"),
        )
    ]


def _no_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    why = _WHY.get(m.group(0), "no_visible_device")
    return [row.event(hit, f"no usable CUDA device: {m.group(0)}", {"reason": why}, dedupe=(row.code, why))]


def _no_driver(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the NVIDIA driver is missing or unreachable from this process ({clip(m.group(0), 100)})",
            {"reason": "no_driver"},
            dedupe=(row.code, "no_driver"),
        )
    ]


def _fabric(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "fabric_manager"}
    if m.group(1):
        facts.update(fabric_manager_version=m.group(1), driver_version=m.group(2))
        what = f"its version {m.group(1)} does not match the driver's {m.group(2)}"
    elif "NOTHING_TO_DO" in m.group(0):
        what = "it found no NVSwitch to configure (NV_WARN_NOTHING_TO_DO: no NVSwitch here, or NVLSM missing)"
        facts["fabric_manager_error"] = "NV_WARN_NOTHING_TO_DO"
    else:
        what = "its service failed to start"
    return [
        row.event(
            hit,
            f"the NVIDIA Fabric Manager is not serving the NVSwitch fabric ({what}): "
            + (
                "on NVSwitch systems (Blackwell: with NVLSM) CUDA then answers 802; where there is no "
                "NVSwitch the Fabric Manager is not needed"
                if "fabric_manager_error" in facts
                else "CUDA cannot initialise the GPUs (802 'system not yet initialized')"
            ),
            facts,
            # on a machine without NVSwitches the Fabric Manager has nothing to do and is not needed: only
            # the cause when nothing else shows
            tier=1 if "fabric_manager_error" in facts else 0,
            dedupe=(row.code, "fabric_manager"),
        )
    ]


def _thc_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    number = m.group(1) or m.group(2)
    return [
        row.event(
            hit,
            f"CUDA could not be initialised (cuda runtime error ({number}): unknown error at device set-up): "
            "the driver or the device state is broken for this process",
            {"reason": "device_init_failed", "cuda_error_number": int(number)},
            dedupe=(row.code, "device_init_failed"),
        )
    ]


# cudart's 801 in the words torch and CUDA libraries print it: c10's "CUDA error: operation not supported",
# its driver-API check's "CUDA driver error: operation not supported" (expandable segments' cuMem calls),
# lmdeploy's "CUDA runtime error: operation not supported", RAPIDS' "801 cudaErrorNotSupported operation not
# supported", go/rust bindings' CUDA_ERROR_NOT_SUPPORTED; Transformer Engine's NVTE_CHECK_CUDA and
# NVTE_CHECK_CUDA_DRIVER (common/util/logging.h, cuda_driver.h) "CUDA Error: operation not supported", which
# its userbuffers (comm+GEMM overlap) raise when the driver has no CUDA multicast
# (create_communicator_grouped2).
# Only these prefixes: the bare words are in 304's message ("OS call failed or operation not supported on this
# OS") and in unrelated C libraries' errors.
_NOT_SUPPORTED = lazy_re.compile(
    # (Triton's launcher says it as "Triton Error [CUDA]: operation not supported")
    r"(?:CUDA (?:driver |runtime )?[Ee]rror|Triton Error \[CUDA\]): operation not supported(?! on this OS)|"
    r"\bcudaErrorNotSupported\b|\bCUDA_ERROR_NOT_SUPPORTED\b"
)


# A library that logs the refusal of an optional call and goes on (XLA's and TF's W-level lines, Python
# warnings, c10's "[W ...]" records): not a failure.
_WARN_LINE = lazy_re.compile(
    r"\w*Warning\b|\bWARNING\b|(?:^|\s)W\d{4} |(?:^|\s)W (?:tensorflow/|external/)|(?:^|\s)W \S+\.cc:\d+\]|"
    r"^\s*\[W "
)


def _not_supported(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _WARN_LINE.search(hit.text):
        return []
    return [
        row.event(
            hit,
            "the driver or the platform refused a CUDA operation this job uses "
            "(operation not supported, 801): "
            "a vGPU, WSL or Jetson without it, or a driver older than the feature (large kernel parameters "
            "need R530 with CUDA 12.1+); expandable segments (PYTORCH_CUDA_ALLOC_CONF) are a frequent user",
            {"cuda_error": "operation not supported", "cuda_error_number": 801, **_versions_near(hit)},
            dedupe=(row.code,),
        )
    ]


# torch/cuda/__init__.py _lazy_init (1.x-2.x) in a process forked after its parent had initialised CUDA (the
# CUDA driver cannot be used across fork): "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To
# use CUDA with multiprocessing, you must use the 'spawn' start method". vLLM quotes it inside its own record
# ("Exception in worker VllmWorkerProcess while processing method init_device: Cannot re-initialize ...").
# Lightning's fork-based strategies (ddp_fork / ddp_notebook, lightning/fabric/strategies/launchers/
# multiprocessing.py 1.7-2.x) refuse the same state before forking: "RuntimeError: Lightning can't create new
# processes if CUDA is already initialized. Did you manually call `torch.cuda.*` functions, ...".
_FORKED = lazy_re.compile(
    r"Cannot re-initialize CUDA in forked subprocess|"
    r"Lightning can't create new processes if CUDA is already initialized"
)


def _forked(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a process forked after CUDA was initialised in its parent tried to use CUDA (a "
            "DataLoader worker or multiprocessing pool with the fork start method, vLLM workers without "
            "VLLM_WORKER_MULTIPROC_METHOD=spawn): use the spawn start method or keep CUDA out of the parent "
            "before the fork",
            {"reason": "cuda_in_forked_process"},
            dedupe=(row.code,),
        )
    ]


# JAX raising its backend's failure (jax/_src/xla_bridge.py: "RuntimeError: Unable to initialize backend
# 'cuda': FAILED_PRECONDITION: No visible GPU devices." / "INTERNAL: no supported devices found for platform
# CUDA" / "Backend 'cuda' is not in the list of known backends: ['cpu', 'tpu']" / "Found CUDA version 12010,
# but JAX was built against version 12020, which is newer"), optionally followed by "(you may need to
# uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)". Raised only: older
# JAX logs the same words at INFO level and runs on the CPU. The stream executor's line above it (cuInit's
# answer, "Failed to create stream executor for device CUDA:0: ...") says why. 0.4.31+ raises "Backend
# 'cuda' failed to initialize: Unable to use CUDA because of the following issues with CUDA components:" and a
# line per component below ("Outdated cuDNN installation found."). JAX 0.4.x's WARNING "CUDA backend failed
# to initialize: ... (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)" is not read: JAX goes on on the
# CPU, and CPU-only runs with a CUDA plugin installed print it (test_driver_env_families3's healthy lines).
_JAX_BACKEND = lazy_re.compile(
    r"(?:Error: Unable to initialize backend '(?P<p>cuda|gpu|rocm)'|Error: Backend '(?P<q>cuda|gpu|rocm)' "
    # not a topology exchange through jax.distributed's service that timed out ("DEADLINE_EXCEEDED:
    # GetKeyValue() timed out with key: cuda:local_topology/cuda/1"): the ranks did not meet, RUN221's
    r"failed to initialize)(?::\s*(?!.*(?:GetKeyValue|Barrier timed out|coordination service))(?P<i>.*)|\s*)$"
)
_JAX_BUILT_AGAINST = lazy_re.compile(
    r"Found (\w+) version (\d+), but JAX was built against version (\d+)|Outdated (\w+) installation found"
)
_JAX_WHY = lazy_re.compile(
    r"failed call to cuInit: .*|cuInit\(0\) failed: .*|Failed to create stream executor .*"
)


def _jax_backend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    inner, platform = m.group("i") or "", (m.group("p") or m.group("q")).lower()
    if "issues with CUDA components" in inner:
        inner = " ".join([inner, *(ln.text.strip() for ln in hit.after(4, False))])
    why = [w.group(0) for w in (_JAX_WHY.search(ln.text) for ln in hit.before(30, False)) if w]
    for text in (inner, *reversed(why)):
        if "OUT_OF_MEMORY" in text or "out of memory" in text:
            return None  # the device's memory is taken: cuda_oom's reading of the line above
        evs = cuda_error_events(hit, text)
        if evs:
            return evs
    built = _JAX_BUILT_AGAINST.search(inner)
    if built:
        lib, ver = built.group(1) or built.group(4), f"({built.group(2)}) " if built.group(2) else ""
        than = f"the {built.group(3)} " if built.group(3) else ""
        return [
            row.event(
                hit,
                f"JAX could not start its {platform} backend: the installed {lib} {ver}is older than {than}"
                "this jaxlib was built against",
                {"reason": "cuda_toolkit_mismatch", "library": lib},
                code=C.CUDA_TOOLKIT_MISMATCH.code,
                dedupe=(C.CUDA_TOOLKIT_MISMATCH.code, "jax"),
            )
        ]
    if "not in the list of known backends" in inner:
        return [
            row.event(
                hit,
                f"JAX has no {platform} backend installed (the jax CUDA plugin / a CUDA jaxlib is missing)",
                {"library": "jax-cuda-plugin", "reason": "backend_not_installed"},
                code=C.LIBRARY_MISSING.code,
                dedupe=(C.LIBRARY_MISSING.code, "jax"),
            )
        ]
    return [
        row.event(
            hit,
            f"JAX could not start its {platform} backend ({clip(inner, 120)}): no GPU is usable by this "
            "process (driver, device visibility or a vGPU without what XLA needs)",
            {"reason": "no_visible_device", "framework": "jax"},
            dedupe=(row.code, "jax"),
        )
    ]


_EXC = "the exception type ('RuntimeError: ', 'AssertionError: ') before torch's message"
SIGNATURES = (
    Signature(
        "driver too old",
        _TOO_OLD,
        _too_old,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"driver on your system",),
        worth=(rb"driver on your system",),
        words=("too old",),
    ),
    Signature(
        "cuda error of the environment",
        _CudaErrors(),
        _cuda_error,
        C.NO_CUDA_DEVICE.code,
        # Cray MPICH's GPU transport layer names the failed runtime call only: "GTL_DEBUG: [0]
        # cudaHostRegister: no CUDA-capable device is detected" (srun without --gpus: the rank sees no GPU)
        anchors=(b"rror", b"ERROR", b"uda failure", b"UDA failure", b"GTL_DEBUG"),
        worth=(
            rb"Error\b",
            rb"\berror\b",
            rb"\bERROR\b",
            rb"[Cc]uda failure|CUDA failure",
            rb"CUDA_ERROR_\w",
            rb"(?:cuda|hip)Error[A-Z]",
            rb"GTL_DEBUG: ",
        ),
        words=CUDA_ERROR_WORDS,
        anchor_from="'CUDA error: ', 'cudaError...' or 'CUDA_ERROR_...' around the runtime's message, NCCL's "
        "'Cuda failure N', nccl-tests' 'Test CUDA failure file:line' and Cray MPICH's 'GTL_DEBUG: [N] call:' "
        "before it",
        examples=(
            "Cuda failure 217 'peer access is not supported between these two devices'",
            "node05: Test CUDA failure common.cu:1045 'CUDA driver version is insufficient for CUDA runtime "
            "version'",
            "RuntimeError: CUDA error: no CUDA-capable device is detected",
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet initialized",
            "RuntimeError: CUDA driver error: CUDA_ERROR_SYSTEM_NOT_READY",
            "cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY",
            "GTL_DEBUG: [0] cudaHostRegister: no CUDA-capable device is detected",
        ),
    ),
    Signature(
        "cuda check at a source line, message wrapped",
        _TEST_FAILURE_CUT,
        _test_failure_cut,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"UDA failure", b"rror"),
        worth=(rb"[Cc]uda failure|CUDA failure", rb"\bCUDA error\b", rb"cuda runtime error \(\d+\) :\s*$"),
        words=("cuda failure", "cuda error", "cuda runtime error"),
    ),
    Signature(
        "nvml version mismatch",
        _NVML_MISMATCH,
        _nvml_mismatch,
        C.DRIVER_TOO_OLD.code,
        anchors=(b"version mismatch", b"API mismatch", b"VERSION_MISMATCH", b"VersionMismatch"),
        worth=(rb"version mismatch", rb"API mismatch", rb"VERSION_MISMATCH", rb"VersionMismatch"),
        words=(
            "driver/library version mismatch",
            "nvrm: api mismatch",
            "rm_version_mismatch",
            "rmversionmismatch",
        ),
    ),
    Signature(
        "no device",
        _NO_DEVICE,
        _no_device,
        C.NO_CUDA_DEVICE.code,
        # (every message by its own words: a title, or a wrapper's second line, drops the exception type)
        anchors=(
            b"GPUs are available",
            b"driver on your system",
            b"not compiled with CUDA",
            b"ROCm-capable device",
            b"USE_CUDA=1",
        ),
        worth=(
            rb"GPUs are available",
            rb"driver on your system",
            rb"not compiled with CUDA",
            rb"ROCm-capable device",
            rb"USE_CUDA=1 to enable GPU",
        ),
        words=(
            "no cuda gpus are available",
            "found no nvidia driver",
            "torch not compiled with cuda",
            "no hip gpus",
            "no rocm-capable device",
            "compile with use_cuda=1",
        ),
        examples=(
            "RuntimeError: No CUDA GPUs are available",
            "AssertionError: Torch not compiled with CUDA enabled",
        ),
    ),
    Signature(
        "no driver",
        _NO_DRIVER,
        _no_driver,
        C.NO_CUDA_DEVICE.code,
        anchors=(
            b"NVIDIA driver",
            b"NVML",
            b"libcuda",
            b"device driver",
            b"CUDA driver initialization",
            b"is_available()",
            b"driver release",
            b"Module nvidia",
            b"amdgpu not found",
            b"Tensile host",
            b"could not insert 'nvidia",
            b"CUDA driver library",
        ),
        worth=(
            rb"NVIDIA driver",
            rb"NVML",
            rb"libcuda",
            rb"device driver",
            rb"CUDA driver initialization",
            rb"is_available\(\)",
            rb"driver release",
            rb"Module nvidia",
            rb"amdgpu not found",
            rb"Tensile host",
            rb"could not insert 'nvidia",
            rb"CUDA driver library",
        ),
        words=(
            "nvidia driver",
            "nvml",
            "libcuda",
            "device driver",
            "cuda driver initialization",
            "is_available()",
            "driver release",
            "module nvidia",
            "amdgpu not found in modules",
            "tensile host: no devices",
            "could not insert 'nvidia",
            "cuda driver library cannot be found",
        ),
    ),
    Signature(
        "fabric manager down",
        _FABRIC,
        _fabric,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"fabric manager", b"fabricmanager", b"NV_WARN_NOTHING_TO_DO"),
        worth=(rb"fabric ?manager", rb"NV_WARN_NOTHING_TO_DO"),
        words=("fabric manager", "fabricmanager", "nv_warn_nothing_to_do"),
    ),
    Signature(
        "cuda operation not supported",
        _NOT_SUPPORTED,
        _not_supported,
        C.CUDA_OPERATION_NOT_SUPPORTED.code,
        anchors=(b": operation not supported", b"ErrorNotSupported", b"NOT_SUPPORTED"),
        worth=(rb": operation not supported", rb"ErrorNotSupported", rb"ERROR_NOT_SUPPORTED"),
        words=(": operation not supported", "errornotsupported", "error_not_supported"),
    ),
    Signature(
        "cuda in a forked process",
        _FORKED,
        _forked,
        C.CUDA_FORKED_CHILD.code,
        anchors=(b"forked subprocess", b"processes if CUDA is already initialized"),
        worth=(rb"forked subprocess", rb"processes if CUDA is already initialized"),
        words=("forked subprocess", "processes if cuda is already initialized"),
    ),
    Signature(
        "jax backend not initialised",
        _JAX_BACKEND,
        _jax_backend,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"initialize backend", b"' failed to initialize"),
        worth=(rb"initialize backend", rb"' failed to initialize"),
        words=("unable to initialize backend", "failed to initialize"),
    ),
    Signature(
        "torch 0.x device set-up unknown error",
        _THC_INIT,
        _thc_init,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"unknown error at", b"unknown error"),
        worth=(rb"unknown error at", rb"THCudaCheck FAIL"),
        words=("unknown error at", "thcudacheck fail"),
    ),
)
# Every pattern of parse() needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES, unless="NCCL INFO")


def nvml_mismatch_events(hit: Hit, text: str) -> list[Event]:
    """The NVML version-mismatch row read on NCCL's "Last error:" text (its nvmlwrap.cc: "nvmlInit_v2()
    failed: Driver/library version mismatch")."""
    return read(hit, _MISMATCH_ROWS, text) if text else []


_MISMATCH_ROWS = tuple(r for r in SIGNATURES if r.name == "nvml version mismatch")
