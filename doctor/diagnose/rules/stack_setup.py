"""driver_env, the set-up of the GPU stack: what a process prints before its first kernel when the libraries
or the device list under it are not the ones it should run with. Listed after driver_env.py, whose CUDA error
row reads every message of knowledge/cuda_errors first.

Formats:
- THC's device set-up (torch 0.1-1.x, Lua torch's cutorch): THCudaInit and the per-device state of
  THCGeneral.c/.cpp (device properties, peer access, streams, handles), THCStream.cpp, and torch/csrc/cuda/
  Module.cpp's set-device / device-count (Horovod's horovod/torch/cuda_util.cc likewise) check every call
  with THCudaCheck: "THCudaCheck FAIL file=/opt/conda/.../aten/src/THC/THCGeneral.cpp line=383 error=11 :
  invalid argument", raised as "RuntimeError: cuda runtime error (11) : invalid argument at
  .../THCGeneral.cpp:383". The numbers are cudart's of that era (CUDA 8-10.0: 3 initialization error,
  11 invalid argument, 17 invalid device pointer, 30 unknown, 33 invalid resource handle, 63 OS call
  failed; 10.1 renumbered them: 1 invalid argument, 400 invalid resource handle, 999 unknown): whatever
  the number, a call of the set-up failing before any kernel ran is the driver, the install or the device
  state (RUN262), not the program. Its messages of the environment kind (35 driver too old, 38 no device,
  46 busy, 48 no kernel image, 60/64 peer access) keep driver_env.py's finer findings; out of memory (2)
  is oom_layers.py's; a launch failure, an illegal address or an ECC error is the GPU's.
- NVIDIA's NVML stub (libnvidia-ml.so of the CUDA toolkit's lib64/stubs, "GDK"/"TDK" package), when a
  process loads it instead of the driver's library (stubs on LD_LIBRARY_PATH, a container built with
  them): it prints, between two rows of "!", "WARNING: You should always run with libnvidia-ml.so that is
  installed with your NVIDIA Display Driver. ... libnvidia-ml.so in GDK package is a stub library that is
  attached only for build purposes" and every NVML call fails (NCCL's topology, nvidia-smi, pynvml): RUN500.
- Kaldi's cu-device.cc SelectGpuId (5.x): "LOG (nnet3-chain-train[5.4]:SelectGpuId():cu-device.cc:159)
  num-gpus=2. Device 0: all CUDA-capable devices are busy or unavailable." then "ERROR (...) Failed to create
  CUDA context, no more unused GPUs?": every GPU is in exclusive mode and taken (RUN262, as every released
  corpus labels cudaErrorDevicesUnavailable).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.driver_env import cuda_error_events
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# The set-up files: THCGeneral.c (Lua torch, torch 0.1-0.3) / .cpp (0.4-1.x), THCStream.cpp, CUDAContext
# (ATen's set-up), torch/csrc/cuda/Module.cpp (windows paths "..\torch\csrc\cuda\Module.cpp") and Horovod's
# cuda_util.cc.
_SETUP_FILE = (
    r"\S*?(?:THCGeneral\.c\w*|THCStream\.c\w*|CUDAContext\.c\w*|csrc[/\\]cuda[/\\]Module\.cpp|cuda_util\.cc)"
)
_THC_SETUP = lazy_re.compile(
    r"THCudaCheck FAIL file=(?P<file>" + _SETUP_FILE + r") line=\s*(?P<line>\d+) error=(?P<num>\d+) : "
    r"(?P<msg>[^\n]*?)\s*$|"
    r"cuda runtime error \((?P<num2>\d+)\) : (?P<msg2>[^\n]+?) at (?P<file2>"
    + _SETUP_FILE
    + r"):(?P<line2>\d+)"
)
# What is not the environment's even at set-up: the memory (oom_layers.py), the GPU's own faults
# (gpu_hardware.py), the program's assert.
_NOT_SETUP = lazy_re.compile(
    r"out of memory|illegal memory access|illegal address|launch failure|ECC error|NVLink error|"
    r"device-side assert|misaligned address"
)
_STUB = lazy_re.compile(
    r"libnvidia-ml\.so in \w+ package is a stub library|"
    r"You should always run with libnvidia-ml\.so that is installed with your"
)
_KALDI_BUSY = lazy_re.compile(
    r"(?:all CUDA-capable devices are|CUDA-capable device\(s\) is/are) busy or unavailable|"
    r"Failed to create CUDA context, no more unused GPUs\?"
)


def _thc_setup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = (m.group("msg") or m.group("msg2") or "").strip().rstrip("`'\".")
    if not msg or _NOT_SETUP.search(msg):
        return None
    evs = cuda_error_events(hit, msg)
    if evs:
        return evs  # a message of the environment kind: driver_env's finer finding
    number = int(m.group("num") or m.group("num2"))
    path = m.group("file") or m.group("file2")
    where = re.split(r"[/\\]", path)[-1]
    return [
        row.event(
            hit,
            f"CUDA failed while the process set up its GPUs ({where}: cuda runtime error ({number}) : "
            f"{clip(msg, 80)}), before any kernel ran: the driver, the CUDA install or the device state is "
            "broken for this process (reinstall the matching PyTorch build, check nvidia-smi, reset or "
            "reboot a GPU left in a bad state)",
            {
                "reason": "device_init_failed",
                "cuda_error_number": number,
                "cuda_error": msg,
                "source_file": where,
                "source_line": int(m.group("line") or m.group("line2")),
            },
            dedupe=(row.code, "device_init_failed"),
        )
    ]


def _stub(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the process loaded the CUDA toolkit's NVML stub (libnvidia-ml.so from .../lib64/stubs, meant "
            "only for linking) instead of the driver's library: every NVML call fails (NCCL's topology, GPU "
            "queries); take the stubs directory out of LD_LIBRARY_PATH / the image's ld.so.conf",
            {"library": "libnvidia-ml.so", "reason": "nvml_stub_library"},
            dedupe=(row.code,),
        )
    ]


def _kaldi_busy(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    evs = cuda_error_events(hit, hit.text)
    if evs:
        return evs
    return [
        row.event(
            hit,
            "no GPU was free for this process (Kaldi: 'no more unused GPUs'): the GPUs are in exclusive "
            "compute mode and held by other processes; run fewer jobs than GPUs or wait for a free one "
            "(Kaldi's --use-gpu=wait)",
            {"reason": "device_busy"},
            tier=1,
            dedupe=(row.code, "device_busy"),
        )
    ]


SIGNATURES = (
    Signature(
        "THC device set-up check",
        _THC_SETUP,
        _thc_setup,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"THCudaCheck FAIL", b"cuda runtime error ("),
        worth=(rb"THCudaCheck FAIL", rb"cuda runtime error \(\d+\)"),
        words=("thcudacheck fail", "cuda runtime error ("),
    ),
    Signature(
        "NVML stub library loaded",
        _STUB,
        _stub,
        C.NVML_STUB_LIBRARY.code,
        anchors=(b"is a stub library", b"You should always run with libnvidia-ml"),
        worth=(rb"is a stub library", rb"You should always run with libnvidia-ml"),
        words=("stub library", "you should always run with libnvidia-ml"),
    ),
    Signature(
        "no free GPU in exclusive mode",
        _KALDI_BUSY,
        _kaldi_busy,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"busy or unavailable", b"no more unused GPUs"),
        worth=(rb"busy or unavailable", rb"no more unused GPUs"),
        words=("busy or unavailable", "no more unused gpus"),
    ),
)
parse = gated_reader(SIGNATURES)
