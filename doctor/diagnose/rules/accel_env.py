"""accel_env: accelerators other than CUDA's that this process could not open, and the loader's and the
packages' version words that rules/loader.py and rules/driver_env.py do not read.

Formats, read at their sources:
- Intel Gaudi (SynapseAI, habana_frameworks.torch, hccl_demo, 1.x): the Python binding raises
  "RuntimeError: synStatus=26 [Generic failure] Device acquire failed." ("synStatus=20 [Device already
  acquired]", "synStatus=8 [Device not found]"; SynapseAI <= 1.4 only "RuntimeError: Device acquire
  failed."), C++ callers print "synDeviceAcquire(&handle, nullptr) failed with synapse error: 20"
  (hccl_demo's initDevice), "synDeviceAcquireByModuleId ... failed": another process holds the device,
  the container was started without it (HABANA_VISIBLE_DEVICES, --runtime=habana) or the driver is down
  (RUN333).
- Cloud TPU (libtpu through JAX's xla_bridge, torch_xla's PJRT and XRT): "ABORTED: The TPU is already in
  use by process with pid 2771. Not attempting to load libtpu.so in this process.", "TPU initialization
  failed: open(/dev/accel3): Operation not permitted: ...; Couldn't open device: /dev/accel3",
  XRT's "Invalid fd: -1; Couldn't open device: /dev/accel0 (Operation not permitted)", v5e/v6e's
  "/dev/vfio/0": a process still holds the chips (a previous run, a notebook kernel) (RUN333).
- Ascend (CANN runtime, npu-smi / dcmi): "rtGetDeviceCount execute failed, reason=[driver error:no valid
  device]" (the container without /dev/davinci*), npu-smi's "dcmi model initialized failed, because the
  device is used. ret is -8020", torch_npu's "NPU function error: aclrtSetDevice(device_id_), error code is
  507033" (Failed to start the device; 207004 unavailable; 107001 an invalid device id: RUN264) unless the
  device lost its heartbeat (E39009: the hardware, rules/hccl.py) (RUN333).
- macOS dyld under dlopen (Horovod's, torch's extensions): "dlopen(<path>, 6): Symbol not found:
  _ncclAllReduce", 12.x+ "dlopen(<path>, 0x0002): symbol not found in flat namespace '_ncclCommInitRank'",
  "Library not loaded: @rpath/libc10.dylib": the macOS words of Linux's "undefined symbol" and "cannot
  open shared object file" (RUN195 for an NCCL symbol, else RUN263), with loader.py's filter of the GPU
  training stack.
- the loader's symbol version of libnccl ("/usr/lib/libnccl.so.2: version `NCCL_2.12' not found (required
  by .../libtorch_cuda.so)"): an older libnccl first on the path (RUN195).
- jax/_src/lib/__init__.py check_jaxlib_version (0.2-0.4): "jaxlib version 0.4.20 is newer than and
  incompatible with jax version 0.4.13. Please update your jax and/or jaxlib packages.", "jaxlib is version
  0.1.69, but this version of jax requires version >= 0.1.74.": jax and jaxlib from different releases
  (RUN296).
- XLA's GPU client raised ("XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.", RUN262; its
  INFO record and xla_bridge's CPU-fallback warnings stay silent: healthy runs print them), jaxlib/gpu's
  "Unable to load cuSPARSE. Is it installed?" (cuSOLVER, cuBLAS, cuFFT, cuPTI, cuDNN: RUN263), MXNet's CPU
  build asked for a GPU (src/ndarray/ndarray.cc "GPU is not enabled": RUN262).
- torch/cuda/__init__.py _check_capability (1.x-2.x): when the warning's text is cut, Python's warnings
  module still prints the call's source line, "warnings.warn(incompatible_device_warn.format(device_name,
  capability, ...))": this PyTorch has no kernels for the GPU (RUN265, below a failure the log names).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.loader import _GPU_STACK_PATH, _GPU_STACK_SYMBOL
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# Gaudi's device acquire, raised by the binding or printed by a C++ caller.
_SYN_ACQUIRE = lazy_re.compile(
    r"synStatus[ =]?(?P<st>\d+) \[(?P<what>[^\]]+)\]\.? Device acquire failed|"
    r"synDeviceAcquire\w*\([^)]*\) failed with synapse error:? (?P<st2>\d+)|"
    r"(?:Error|error): Device acquire failed\b"
)
# libtpu's and XRT's refusals of the TPU chips.
_TPU_BUSY = lazy_re.compile(
    r"The TPU is already in use by (?:process with pid|a process with pid) (?P<pid>\d+)|"
    r"Couldn't open (?:TPU )?device: (?P<dev>/dev/(?:accel\d+|vfio/\d+))|"
    r"TPU initialization failed:(?: (?P<why>[^;\n]{0,160})|\s*$)"
)
_TPU_WHY_BUSY = lazy_re.compile(r"Device or resource busy|already in use")
_TPU_WHY_PERM = lazy_re.compile(r"Operation not permitted|Permission denied")
_TPU_DEV = lazy_re.compile(r"/dev/(?:accel\d+|vfio/\d+)")
# A glog INFO line (older JAX logs the backends it could not start at INFO and goes on on the CPU).
_INFO_LINE = lazy_re.compile(r"(?:^|\s)I\d{4} |(?:^|\s)I (?:tensorflow/|external/)|\bINFO[:\s]")
# The CANN runtime's and npu-smi's words for an NPU this process cannot open.
_ASCEND = lazy_re.compile(
    r"rtGetDeviceCount execute failed, reason=\[driver error:(?P<drv>[^\]]+)\]|"
    r"dcmi model initialized failed, because the device is used\.? ret is (?P<ret>-?\d+)"
)
# torch_npu's device set-up refused by the runtime (torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp
# Initialize: "NPU function error: aclrtSetDevice(device_id_), error code is 507033", 2.1+
# "c10_npu::SetDevice(device_id_)"),
# a C++ caller's "aclrtSetDevice(deviceId) failed: 507033", the runtime's plog "open device 2 failed, runtime
# result = 507033." NPUErrorCodes.h: 507033 "Failed to start the device", 207004 "The device is unavailable",
# 107001 "Invalid device ID" (a device index beyond the visible NPUs: RUN264).
_NPU_SET_DEVICE = lazy_re.compile(
    r"NPU function error: (?:aclrtSetDevice|c10_npu::SetDevice)\w*\([^)]*\), error code is (?P<num>\d+)|"
    r"aclrtSetDevice\w*\([^)]*\) failed: (?P<num2>\d+)|"
    r"open device (?P<dev>\d+) failed, runtime result = (?P<num3>\d+)|"
    r"acl set device (?P<dev2>\d+) failed, errorCode = (?P<num4>\d+)"
)
# c10's stream pools (CUDAStream.cpp and its out-of-tree copies: torch_npu NPUStream.cpp, DIPU, XPU/SYCL)
# assert "Could not compute stream ID for 0x55d0.. on device -1 (something has gone horribly wrong!)" when a
# stream is looked up for the current device and there is none: device -1 is torch_npu's (and the other
# backends') "no device selected", a process that used the accelerator without set_device (torch.npu.
# set_device(local_rank) in each rank, as for CUDA's cuda:{local_rank}). Another device number is a stream
# of one device used on another, not read here.
_STREAM_NO_DEVICE = lazy_re.compile(r"Could not compute stream ID for \S+ on device -1\b")
# The device itself lost (its heartbeat, E39009 "Failed to connect the device"): the hardware's record, read
# by rules/hccl.py, not this one.
_NPU_LOST = lazy_re.compile(r"E39009|[Hh]eartbeats? (?:are )?(?:missing|lost)|lost heartbeat")
# dyld's words under dlopen.
_DYLD = lazy_re.compile(
    r"dlopen\((?P<path>[^,()]+), (?:\d+|0x[0-9a-fA-F]+)\): (?:"
    r"Symbol not found: (?P<sym>_?[\w$.]+)|"
    r"symbol not found in flat namespace [`'‘\"](?P<sym2>_?[\w$.]+)|"
    r"Library not loaded: (?P<lib>\S+)"
    r")"
)
_NCCL_SYMBOL_VERSION = lazy_re.compile(
    # lib is the whole run of non-space characters before " version" (less a ":"): tried from the run's
    # start only, and up to its first "libnccl", the same group, found in linear time.
    r"(?:(?<!\S)(?P<lib>(?:(?!libnccl)\S)*libnccl\S*?):? )?version [`'‘](?P<ver>NCCL_[\d.]+)[’'] not found"
    r"(?: \(required by (?P<by>[^)\s]+))?"
)
_JAXLIB = lazy_re.compile(
    r"jaxlib version (?P<lib>\d[\w.]*?)\.? is newer than and incompatible with jax version "
    r"(?P<jax>\d[\w.]*\w)|"
    r"jaxlib is version (?P<lib2>\d[\w.]*\w), but this version of jax requires version >= "
    r"(?P<need>\d[\w.]*\w)"
)
# XLA raising its GPU client's failure, and jaxlib's GPU kernels that could not load a CUDA library
# (jaxlib/gpu/*: "Unable to load cuSPARSE. Is it installed?", cuSOLVER, cuBLAS, cuFFT, cuPTI, hipSPARSE, ...).
_XLA_NO_GPU = lazy_re.compile(
    r"(?:XlaRuntimeError|JaxRuntimeError): (?:INTERNAL|FAILED_PRECONDITION): No visible GPU devices\b"
)
_UNABLE_TO_LOAD = lazy_re.compile(
    r"Unable to load (?P<lib>cu[A-Za-z]+|hip[A-Za-z]+|roc[A-Za-z]+|MIOpen)\. Is it installed\?"
)
# MXNet built without CUDA asked for a GPU array (src/ndarray/ndarray.cc: LOG(FATAL) << "GPU is not enabled").
_MXNET_NO_GPU = lazy_re.compile(r"MXNetError: .*\bGPU is not enabled\b|ndarray\.cc:\d+: GPU is not enabled\b")
_INCOMPATIBLE_WARN = lazy_re.compile(r"warnings\.warn\(incompatible_device_warn\.format\(")


def _syn(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"accelerator": "gaudi", "reason": "device_acquire_failed"}
    st = m.group("st") or m.group("st2")
    if st:
        facts["syn_status"] = int(st)
    if m.group("what"):
        facts["syn_status_text"] = m.group("what")
    why = {
        20: "another process already holds it",
        8: "no Gaudi device is visible here",
        16: "fewer Gaudi devices than asked for are visible",
    }.get(
        facts.get("syn_status", -1),
        "held by another process, not passed into the container, or its driver down",
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: the Gaudi device could not be acquired ({why}): check hl-smi for processes on "
            "it, HABANA_VISIBLE_DEVICES and the container's --runtime=habana",
            facts,
            dedupe=(row.code, "gaudi"),
        )
    ]


# libtpu's multi-host bootstrap (TPU VM pods, v2-v5): "TPU initialization failed: Invalid
# --2a886c8_slice_builder_worker_addresses specified. Expected 4 worker addresses, got 1." (the flag's name
# carries a build hash): the slice's topology names N hosts and this process was given M addresses
# (TPU_WORKER_HOSTNAMES, or the VM metadata): the program was started on one host of a multi-host slice, or
# the environment that lists the workers is wrong. A rendezvous setting, not the chips.
_TPU_WORKERS = lazy_re.compile(
    r"Invalid --\w*?slice_builder_worker_addresses specified\.? Expected (?P<want>\d+) worker addresses, got "
    r"(?P<got>\d+)"
)

# libtpu's slice bootstrap between the hosts of a pod or a multislice job (the SliceBuilder service, port
# 8471): "TPU initialization failed: Failed to establish SliceBuilder grpc channel to 10.130.0.12:8471."
# (libtpu 2023-2025): this host could not reach another worker of the slice (not started, restarted, or the
# VPC firewall closes the port): the hosts' rendezvous, not this host's chips (RUN222).
_TPU_SLICE_CHANNEL = lazy_re.compile(
    r"Failed to establish SliceBuilder grpc channel to (?P<addr>[\w.:\-\[\]]+?)\.?(?:\s|$)"
)


def _tpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    ch = _TPU_SLICE_CHANNEL.search(hit.text)
    if ch:
        return [
            row.event(
                hit,
                f"{hit.who()}: libtpu could not connect to the slice's bootstrap service at "
                f"{ch.group('addr')} (SliceBuilder): another host of the TPU slice is not running the "
                "program, restarted, or the network between the workers blocks port 8471",
                {"accelerator": "tpu", "peer": ch.group("addr")},
                code=C.STORE_UNREACHABLE.code,
                dedupe=(C.STORE_UNREACHABLE.code, "tpu_slice"),
            )
        ]
    w = _TPU_WORKERS.search(hit.text)
    if w:
        want, got = int(w.group("want")), int(w.group("got"))
        return [
            row.event(
                hit,
                f"{hit.who()}: libtpu's multi-host start-up expected {want} worker addresses for the "
                f"TPU slice and got {got}: the program runs on fewer hosts of a multi-host slice than it "
                "spans (start it on every worker: gcloud compute tpus tpu-vm ssh ... --worker=all), or "
                "TPU_WORKER_HOSTNAMES / TPU_WORKER_ID do not list the slice's hosts",
                {"accelerator": "tpu", "world_size": want, "workers_given": got},
                code=C.RENDEZVOUS_CONFIG.code,
                dedupe=(C.RENDEZVOUS_CONFIG.code, "tpu_workers"),
            )
        ]
    facts: dict[str, Any] = {"accelerator": "tpu", "reason": "device_unavailable"}
    if m.group("pid"):
        facts.update(holder_pid=int(m.group("pid")), reason="device_busy")
        what = f"process {m.group('pid')} already holds the TPU"
    else:
        dev = m.group("dev") or (_TPU_DEV.search(hit.text) or [None])[0]
        if dev:
            facts["device"] = dev
        if _TPU_WHY_BUSY.search(hit.text):
            facts["reason"] = "device_busy"
            what = f"{dev or 'the TPU'} is busy (another process holds it)"
        elif _TPU_WHY_PERM.search(hit.text):
            facts["reason"] = "device_not_permitted"
            what = (
                f"{dev or 'the TPU'} could not be opened (Operation not permitted: another process still "
                "holds it, or the container lacks the device)"
            )
        else:
            what = f"libtpu could not open {dev or 'the TPU'}"
    tail = (
        "end the process that holds it (sudo lsof -w /dev/accel* /dev/vfio/*) or wait for it, then start "
        "again"
        if facts["reason"] != "device_unavailable" or m.group("dev") or m.group("pid")
        else "libtpu's own check of the chips failed: match the libtpu / jax versions to the TPU generation "
        "and the VM's runtime version, and recreate the TPU VM if it persists"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: the TPU could not be initialised: {what}; {tail}",
            facts,
            tier=1 if _INFO_LINE.search(hit.text) else None,
            dedupe=(row.code, "tpu"),
        )
    ]


def _ascend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("drv"):
        facts: dict[str, Any] = {
            "accelerator": "ascend",
            "reason": "no_valid_device",
            "driver_error": m.group("drv"),
        }
        what = (
            f"the CANN runtime found no NPU it can use (driver error: {m.group('drv')}): the driver is not "
            "loaded, or the container was started without /dev/davinci* and the driver's mounts"
        )
    else:
        facts = {"accelerator": "ascend", "reason": "device_busy", "dcmi_ret": int(m.group("ret"))}
        what = f"the NPU is used by another process (dcmi ret {m.group('ret')}): end it (npu-smi info) first"
    return [row.event(hit, f"{hit.who()}: {what}", facts, dedupe=(row.code, "ascend"))]


def _npu_set_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num") or m.group("num2") or m.group("num3") or m.group("num4"))
    facts: dict[str, Any] = {"accelerator": "ascend", "npu_error": num}
    if m.group("dev") or m.group("dev2"):
        facts["device"] = int(m.group("dev") or m.group("dev2"))
    if num == 107001:
        facts["reason"] = "invalid_device_id"
        return [
            row.event(
                hit,
                f"{hit.who()}: torch_npu asked for an NPU index that is not visible (107001 Invalid device "
                "ID: more processes per node than NPUs, or ASCEND_RT_VISIBLE_DEVICES too short)",
                facts,
                code=C.DEVICE_MISMATCH.code,
                dedupe=(C.DEVICE_MISMATCH.code, "npu"),
            )
        ]
    if num not in (507033, 207004):
        return None
    near = [*hit.before(12, same_rank=False), hit.line, *hit.after(12, same_rank=False)]
    if any(_NPU_LOST.search(ln.text) for ln in near):
        return None  # the device lost its heartbeat: the hardware's record is the cause
    facts["reason"] = "device_start_failed"
    return [
        row.event(
            hit,
            f"{hit.who()}: the NPU could not be started for this process ({num}: "
            + ("Failed to start the device" if num == 507033 else "The device is unavailable")
            + "): another process holds it, the container lacks /dev/davinci*, or the CANN packages do not "
            "match the driver and firmware (E30006 OPP); npu-smi info and the plog say which",
            facts,
            dedupe=(row.code, "ascend"),
        )
    ]


def _stream_no_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: a stream was asked for on device -1: this process used the accelerator before "
            "selecting its device (torch.npu.set_device / torch.cuda.set_device(local_rank) in every rank)",
            {"device": -1, "reason": "device_not_selected"},
            dedupe=(row.code, "stream_no_device"),
        )
    ]


def _dyld(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    path = m.group("path")
    sym = m.group("sym") or m.group("sym2")
    lib_name = path.rsplit("/", 1)[-1]
    if sym:
        bare = sym[1:] if sym.startswith("_") else sym
        if not (_GPU_STACK_PATH.search(path) or _GPU_STACK_SYMBOL.match(bare)):
            return []
        if bare.startswith("nccl"):
            return [
                row.event(
                    hit,
                    f"{lib_name} needs NCCL's {bare}, which nothing loaded provides (macOS has no NCCL: the "
                    "package was built with NCCL support, or against another libnccl)",
                    {"library": lib_name, "symbol": bare, "reason": "undefined_symbol"},
                    code=C.NCCL_VERSION.code,
                    dedupe=(C.NCCL_VERSION.code, "dyld"),
                )
            ]
        return [
            row.event(
                hit,
                f"{lib_name} was loaded but lacks the symbol {bare}: it was built against another version of "
                "the library or of PyTorch than the one installed (reinstall the matching build)",
                {"library": lib_name, "symbol": bare, "reason": "undefined_symbol"},
                dedupe=(row.code, lib_name),
            )
        ]
    lib = m.group("lib")
    if not (_GPU_STACK_PATH.search(path) or _GPU_STACK_PATH.search(lib)):
        return []
    dep = lib.rsplit("/", 1)[-1]
    return [
        row.event(
            hit,
            f"{lib_name} could not be loaded: the library it needs, {dep}, was not found (a broken or mixed "
            "install)",
            {"library": dep, "required_by": lib_name},
            dedupe=(row.code, dep),
        )
    ]


def _nccl_version(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"symbol_version": m.group("ver"), "reason": "symbol_version_not_found"}
    if m.group("by"):
        facts["required_by"] = m.group("by").rsplit("/", 1)[-1]
    return [
        row.event(
            hit,
            f"the libnccl the loader found lacks {m.group('ver')}: it is older than the NCCL this PyTorch "
            "(or extension) was built against (another libnccl earlier on LD_LIBRARY_PATH or in the image)",
            facts,
            dedupe=(row.code, "nccl_symbol_version"),
        )
    ]


def _jaxlib(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lib = m.group("lib") or m.group("lib2")
    facts: dict[str, Any] = {"reason": "package_version_mismatch", "framework": "jax", "jaxlib_version": lib}
    if m.group("jax"):
        facts["jax_version"] = m.group("jax")
    else:
        facts["jaxlib_required"] = m.group("need")
    return [
        row.event(
            hit,
            f"jax and jaxlib are from different releases (jaxlib {lib}): install them together "
            "(pip install -U 'jax[cuda12]', or pin both to one version)",
            facts,
            dedupe=(row.code, "jaxlib"),
        )
    ]


def _xla_no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "XLA found no visible GPU for this process (no driver or device nodes in the container, "
            "CUDA_VISIBLE_DEVICES empty or wrong, or a CUDA that does not fit the driver)",
            {"reason": "no_visible_device", "framework": "xla"},
            dedupe=(row.code, "xla_no_gpu"),
        )
    ]


def _unable_to_load(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    lib = m.group("lib")
    return [
        row.event(
            hit,
            f"jaxlib could not load {lib} (not installed, or not the version this jaxlib needs): install "
            "the matching nvidia-* wheels (pip install -U 'jax[cuda12]') or put the toolkit's library on "
            "the path",
            {"library": lib},
            dedupe=(row.code, lib),
        )
    ]


def _mxnet_no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "this MXNet was built without CUDA (GPU is not enabled) but the job asked for a GPU context: "
            "install the CUDA build (mxnet-cu1xx)",
            {"reason": "cpu_build_of_mxnet"},
            dedupe=(row.code, "cpu_build_of_mxnet"),
        )
    ]


def _incompatible(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "PyTorch warned that this GPU's compute capability is not in its build "
            "(incompatible_device_warn: the warning's text is cut): its kernels cannot run here; install a "
            "build for this GPU",
            {"reason": "arch_not_in_build"},
            dedupe=(row.code, "incompatible_device_warn"),
        )
    ]


SIGNATURES = (
    Signature(
        "stream of no selected device",
        _STREAM_NO_DEVICE,
        _stream_no_device,
        C.DEVICE_MISMATCH.code,
        anchors=(b"Could not compute stream ID for",),
        words=("could not compute stream id",),
    ),
    Signature(
        "gaudi device acquire failed",
        _SYN_ACQUIRE,
        _syn,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"Device acquire failed", b"synapse error"),
        worth=(rb"Device acquire failed", rb"synapse error"),
        words=("device acquire failed", "synapse error"),
    ),
    Signature(
        "tpu device unavailable",
        _TPU_BUSY,
        _tpu,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"TPU is already in use", b"Couldn't open", b"TPU initialization failed"),
        worth=(rb"TPU is already in use", rb"Couldn't open (?:TPU )?device", rb"TPU initialization failed"),
        words=("tpu is already in use", "couldn't open", "tpu initialization failed"),
    ),
    Signature(
        "ascend device unavailable",
        _ASCEND,
        _ascend,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"rtGetDeviceCount execute failed", b"dcmi model initialized failed"),
        worth=(rb"rtGetDeviceCount execute failed", rb"dcmi model initialized failed"),
        words=("rtgetdevicecount execute failed", "dcmi model initialized failed"),
    ),
    Signature(
        "ascend device set-up refused",
        _NPU_SET_DEVICE,
        _npu_set_device,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"SetDevice", b"runtime result = ", b"acl set device"),
        worth=(rb"SetDevice\w*\(", rb"open device \d+ failed", rb"acl set device \d+ failed"),
        words=("setdevice", "open device", "acl set device"),
    ),
    Signature(
        "macos dyld symbol or library",
        _DYLD,
        _dyld,
        C.LIBRARY_MISSING.code,
        anchors=(b"ymbol not found", b"Library not loaded"),
        worth=(rb"[Ss]ymbol not found", rb"Library not loaded"),
        words=("symbol not found", "library not loaded"),
    ),
    Signature(
        "libnccl symbol version",
        _NCCL_SYMBOL_VERSION,
        _nccl_version,
        C.NCCL_VERSION.code,
        anchors=(b"NCCL_",),
        worth=(rb"version [`'\xe2\x80\x98]NCCL_",),
        words=("nccl_",),
    ),
    Signature(
        "jax jaxlib version mismatch",
        _JAXLIB,
        _jaxlib,
        C.CUDA_TOOLKIT_MISMATCH.code,
        anchors=(b"jaxlib version", b"jaxlib is version"),
        worth=(rb"jaxlib version", rb"jaxlib is version"),
        words=("jaxlib version", "jaxlib is version"),
    ),
    Signature(
        "xla no visible gpu raised",
        _XLA_NO_GPU,
        _xla_no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"No visible GPU devices",),
        worth=(rb"No visible GPU devices",),
        words=("no visible gpu devices",),
    ),
    Signature(
        "jaxlib cannot load a cuda library",
        _UNABLE_TO_LOAD,
        _unable_to_load,
        C.LIBRARY_MISSING.code,
        anchors=(b"Is it installed",),
        worth=(rb"Unable to load \w+\. Is it installed",),
        words=("is it installed",),
    ),
    Signature(
        "mxnet cpu build asked for a gpu",
        _MXNET_NO_GPU,
        _mxnet_no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"GPU is not enabled",),
        worth=(rb"GPU is not enabled",),
        words=("gpu is not enabled",),
    ),
    Signature(
        "torch incompatible device warning source line",
        _INCOMPATIBLE_WARN,
        _incompatible,
        C.ARCH_UNSUPPORTED.code,
        tier=1,
        anchors=(b"incompatible_device_warn",),
        words=("incompatible_device_warn",),
    ),
)
parse = gated_reader(SIGNATURES)
