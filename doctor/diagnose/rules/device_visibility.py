"""device_visibility: the process asks for GPUs (or for NCCL) that it cannot have.

Formats: ProcessGroupNCCL's constructor check, the same words in every torch since 1.x, "RuntimeError:
ProcessGroupNCCL is only supported with GPUs, no GPUs found!" (TORCH_CHECK; 2.2+ raises it as
"ValueError: ..."), also cut anywhere after "ProcessGroupNCCL is" by a paste ("RuntimeError:
ProcessGroupNCCL is only supp"), and a traceback whose last frame is that constructor (`pg =
ProcessGroupNCCL(prefix_store, rank, world_size, pg_options)` of 1.x, `backend_class =
ProcessGroupNCCL(backend_prefix_store, group_rank, group_size, pg_options)` of 2.x) with its exception
line left without a message (ranks interleaved on one stream); a torch without NCCL ("Distributed package
doesn't have NCCL built in", "NCCL support is not compiled"); a GPU index beyond the visible ones:
Lightning 1.x's "You requested GPUs: [0, 1]" / "But your machine only has: [0]", cudart's "invalid device
ordinal" (cudaErrorInvalidDevice, 101) as torch's "CUDA error: ...", NCCL's "Cuda failure 101 '...'" and
nccl-tests' "Test CUDA failure common.cu:941 '...'", and torch's own "device >= 0 && device < num_gpus
INTERNAL ASSERT FAILED". Frameworks asked for a GPU they cannot see: Accelerate's "fp16 mixed precision
requires a GPU", transformers' "FP16 Mixed precision training with AMP or APEX ... can only be used on
CUDA", vLLM's "Failed to infer device type", torch.accelerator's "Cannot access accelerator device when
none is available", transformers' GPTQ "GPU is required to quantize or run quantize model", Composer's
"Precision.AMP_BF16 is not supported for CPU training" (it fell back to the CPU device).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# A PyTorch built without the backend (or without torch.distributed at all) the job asks for:
# distributed_c10d's "Distributed package doesn't have NCCL built in" / "... MPI built in. MPI is only
# included if you build PyTorch from source on a host that has MPI installed." (also Gloo, UCC), Lightning's
# "torch.distributed is not available. Cannot initialize distributed process group", and the attribute missing
# from a build without it (macOS < 1.12, Windows < 1.7): "module 'torch.distributed' has no attribute
# 'init_process_group'". The sentence is kept by its start: a title retyped or cut after the backend's name
# ("... doesn't have NCCL bulit in", "... doesn't have NCCL") says the same. torch 0.4's THD said it from
# DataChannel::newChannel: "the distributed NCCL backend is not available; try to recompile the THD package
# with CUDA and NCCL 2+ support" ("the MPI backend ...", "the Gloo backend ..." likewise); read up to
# "try to recompile", as a terminal's wrap at 80 columns often cuts the line right after it.
_C10D_CORE = (
    r"(?:init_process_group|is_initialized|barrier|ProcessGroup|ReduceOp|new_group|get_rank|get_world_size|"
    r"all_reduce|all_gather|broadcast|destroy_process_group|Backend|GroupMember|TCPStore|FileStore|Store|"
    r"PrefixStore)"
)
_NO_NCCL = lazy_re.compile(
    r"Distributed package doesn't have (NCCL|MPI|Gloo|UCC|XCCL)\b|(NCCL) support is not compiled|"
    r"the (?:distributed )?(NCCL|MPI|Gloo) backend is not available; try to recompile\b|"
    r"torch\.distributed is not available\. Cannot initialize|"
    # Names every build with torch.distributed exports (torch/distributed/__init__.py under is_available());
    # a name added in a later release (DeviceMesh, _all_gather_base) is a version skew, left to its rows.
    r"module 'torch\.distributed' has no attribute '" + _C10D_CORE + r"'|"
    r"cannot import name '" + _C10D_CORE + r"' from 'torch\.distributed'(?=[\s.(]|$)|"
    # Caffe's caffe.cpp for -gpu with several devices in a build without NCCL (also retyped: "not avilable")
    r"Multi-GPU execution not \w+ ?- ?rebuild with USE_(NCCL)\b"
)
_NO_GPU_MESSAGE = "ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
# The whole message anywhere, or a prefix of it down to "ProcessGroupNCCL is" that ends the line after
# an exception type (a paste cut there).
_NO_GPU = lazy_re.compile(
    r"ProcessGroupNCCL is only supported with GPUs, no GPUs|"
    r"(?:RuntimeError|ValueError|Error): (ProcessGroupNCCL is\b[^\n]*?)\s*$"
)
# The constructor call as the last frame of a traceback (torch 1.x and 2.x spell its arguments apart).
_CTOR_FRAME = lazy_re.compile(r"= ProcessGroupNCCL\((?:backend_)?prefix_store, ")
_EXC_LINE = lazy_re.compile(r"^\s*(?:RuntimeError|ValueError)(?P<rest>.*)$")  # no \b: glued to the next frame
# "device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" is torch's own check of the same mistake.
# torch.cuda.get_device_properties (1.x-2.x) raises "AssertionError: Invalid device id" for an index at or
# beyond device_count(): the same mistake through the properties call (DataParallel's device_ids, a rank's own
# index).
# The variable's name, not its assignment: "CUDA_VISIBLE_DEVICES=0,1 deepspeed train.py" is the writer's
# command line (glued before a launcher's "[ERROR] ... exits with return code = -9"), no error of its own.
# By enum name too (101): the driver API's CUDA_ERROR_INVALID_DEVICE, cudart's cudaErrorInvalidDevice, and
# HIP's hipErrorInvalidDevice, which ROCm before 5 printed for its message
# ("HIP error: hipErrorInvalidDevice").
_ORDINAL = lazy_re.compile(
    r"invalid device ordinal|CUDA_VISIBLE_DEVICES(?!=[\w,])|device >= 0 && device < num_gpus|"
    r"\b(?:hip|cuda)ErrorInvalidDevice\b|\bCUDA_ERROR_INVALID_DEVICE\b|"
    r"AssertionError: Invalid device id\s*$|"
    # MXNet's engine (src/engine/threaded_engine.cc, 1.x): "Check failed: exec_ctx.dev_id < device_count_ (1
    # vs. 1) : Invalid GPU Id: 1, Valid device id should be less than device_count: 1"
    r"Invalid GPU Id: \d+, Valid device id should be less than device_count: \d+"
)
# A framework that was asked for a GPU and finds none visible (or fewer than asked for): Lightning 1.x's
# "You requested GPUs: [0, 1]\n But your machine only has: []" (the list on the next line), Accelerate's
# "fp16 mixed precision requires a GPU (not 'cpu')", transformers' TrainingArguments "FP16 Mixed precision
# training with AMP or APEX (`--fp16`) ... can only be used on CUDA ... devices", vLLM's DeviceConfig "Failed
# to infer device type", torch.accelerator's "Cannot access accelerator device when none is available",
# transformers' GPTQ "GPU is required to quantize or run quantize model".
_FRAMEWORK_NO_GPU = lazy_re.compile(
    r"You requested (?:GPUs|gpus?): (\[[^\]]*\])|"
    r"fp16 mixed precision requires a GPU|"
    r"FP16 Mixed precision training with AMP or APEX \(`--fp16`\).{0,120}?can only be used on CUDA|"
    r"Failed to infer device type|"
    r"Cannot access accelerator device when none is available|"
    r"GPU is required to quantize or run quantize model|"
    # transformers' quantizers (bitsandbytes 4/8-bit, AWQ): "No GPU found. A GPU is needed for quantization.",
    # "GPU is required to run AWQ quantized model."
    r"No GPU found\. A GPU is needed for quantization|GPU is required to run AWQ quantized model|"
    # transformers' bf16 sibling of the fp16 check; DeepSpeed's launcher (launcher/runner.py) with no GPU in
    # the resource pool; torchrun's --nproc-per-node=gpu (distributed/run.py "ValueError: Cuda is not
    # available.") and the same words of trainers' own checks, raised
    r"BF16 Mixed precision training with AMP \(`--bf16`\).{0,120}?can only be used on CUDA|"
    r"Unable to proceed, no GPU resources available|"
    # Lightning 2.x (lightning/fabric/accelerators/cuda.py find_usable_cuda_devices, 2.0-2.4): "You requested
    # to find 4 devices but there are no visible CUDA devices on this machine.", and the devices that are
    # there but held ("... but only 2 are currently available. The devices [2, 3] are occupied by other
    # processes and can't be used at the moment."); Lightning's device parser (fabric/utilities/
    # device_parser.py 1.x-2.x) "MisconfigurationException: GPUs requested but none are available."
    r"You requested to find \d+ devices but there are no visible CUDA devices|"
    r"You requested to find \d+ devices but only \d+ are currently available\. The devices \[[^\]]*\] are "
    r"occupied by other processes|"
    r"GPUs requested but none are available|"
    # Composer's Trainer (trainer.py _validate_precision, 0.1x-0.3x) on the CPU device it picks when
    # torch.cuda.is_available() is False: "ValueError: Precision.AMP_BF16 is not supported for CPU training."
    r"Precision\.(?:AMP_BF16|AMP_FP16|AMP_FP8|FP16|BF16) is not supported for CPU training|"
    r"(?:ValueError|RuntimeError|AssertionError|Exception): (?:Cuda|CUDA) is not available\.?\s*$"
)
# More GPUs asked for than there are: vLLM's Ray executor ("ValueError: The number of required GPUs exceeds
# the total number of available GPUs in the placement group."), DeepSpeed's launcher ("num_gpus (8) cannot be
# more than the number of GPUs present (4)").
# vLLM's other GPU-count checks (executor/ray_utils.py, ray_gpu_executor.py 0.4-0.6, config/parallel.py
# 0.10-0.34): "ValueError: World size (8) is larger than the number of available GPUs (4) in this node.",
# "Ray does not allocate any GPUs on the driver node.", "driver node id <hex> is not included in a placement
# group ... You don't have enough GPUs available in a current node.", "Cannot provide a placement group
# requiring 8 GPUs (placement_group_specs=[...]) within 1800 seconds." (0.1x-0.34), "Cannot provide a
# placement group of placement_group_specs=[...] within 1800 seconds. See `ray status` to make sure the
# cluster has enough resources."; its data-parallel engines' (v1/engine/utils.py 0.9-0.34) "Not enough
# resources to allocate 4 DP ranks on DP master node 10.0.0.1, possible to fit 2 DP ranks." / "... allocate 8
# placement groups, only created 4 placement groups." (its INFO "Waiting for creating a placement group ..."
# is the wait, not the failure).
_TOO_MANY_ASKED = lazy_re.compile(
    r"The number of required GPUs exceeds the total number of available GPUs|"
    r"World size \((\d+)\) is larger than the number of available GPUs \((\d+)\)|"
    r"Ray does not allocate any GPUs on the driver node|"
    r"You don't have enough GPUs available in a current node|"
    r"Cannot provide a placement group (?:of .{0,2000}?|requiring (\d+) GPUs .{0,2000}?)within \d+ seconds|"
    r"Not enough resources to allocate (\d+) (?:DP ranks on DP master node \S+, possible to fit (\d+)|"
    r"placement groups, only created (\d+))|"
    r"num_gpus \((\d+)\) cannot be more than the number of GPUs present \((\d+)\)|"
    # Lightning 2.x find_usable_cuda_devices: "You requested to find 8 devices but this machine only has 4
    # GPUs."
    r"You requested to find (\d+) devices but this machine only has (\d+) GPUs|"
    # pytorch_lightning 1.x auto_select_gpus (pytorch_lightning/tuner/auto_gpu_select.py 1.3-1.9): "You
    # requested 4 GPUs but your machine only has 2 GPUs."
    r"You requested (\d+) GPUs but your machine only has (\d+) GPUs|"
    # PaddlePaddle v2's trainer (gserver/gradientmachines/MultiGradientMachine.cpp, glog F-level, 0.9-1.x):
    # "trainer_count * num_devices_in_model (2*1)=2 exceeds number of GPU devices(1)"
    r"trainer_count \* num_devices_in_model \(\d+\*\d+\)=(\d+) exceeds number of GPU devices\((\d+)\)"
)
# A device index beyond the visible ones in other runtimes' words: Oxford Nanopore dorado's device
# parser (utils/cuda_utils.cpp, 0.3-0.9: "Invalid CUDA device index \"1\" from device string ,1,2, there
# are 1 visible CUDA devices."), XLA's backend (xla/service/backend.cc, JAX and TF: "Invalid device ordinal
# value (1). Valid range is [0, 0]."), TensorFlow's placer (common_runtime/colocation_graph.cc, 1.x-2.x:
# "... was explicitly assigned to /device:GPU:1 but available devices are [ /job:localhost/replica:0/task:0/
# device:CPU:0, ... ]", and "Could not satisfy explicit device specification '/device:GPU:1' because no
# devices matching that specification are registered in this process; available devices: ...").
# None visible at all is RUN262.
_INDEX_BEYOND = lazy_re.compile(
    r"Invalid CUDA device index \\?\"(?P<idx>\d+)\\?\" from device string \S*, "
    r"there are (?P<vis>\d+) visible|"
    r"Invalid device ordinal value \((?P<idx2>\d+)\)\. Valid range is \[0, (?P<max>-?\d+)\]|"
    r"explicitly assigned to \S*?(?:GPU|gpu):(?P<idx3>\d+) but available devices are \[(?P<avail>[^\]]*)|"
    r"Could not satisfy explicit device specification '[^']*?(?:GPU|gpu):(?P<idx4>\d+)' because no "
    r"devices matching that specification are registered in this process"
    r"(?:; available devices: (?P<avail2>.*))?"
)


def _index_beyond(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    idx = next(int(g) for g in (m.group("idx"), m.group("idx2"), m.group("idx3"), m.group("idx4")) if g)
    facts: dict[str, Any] = {"requested_device": idx}
    if m.group("vis") is not None:
        facts["visible_gpus"] = int(m.group("vis"))
    elif m.group("max") is not None:
        facts["visible_gpus"] = int(m.group("max")) + 1
    avail = m.group("avail") if m.group("avail") is not None else m.group("avail2")
    if avail is not None:
        facts["visible_gpus"] = len(re.findall(r"(?:GPU|gpu):\d+", avail))
    if facts.get("visible_gpus") == 0:
        facts["reason"] = "no_visible_device"
        return [
            row.event(
                hit,
                f"{hit.who()} asked for GPU {idx} but the process sees no GPU at all (no driver or device in "
                "this container or node, CUDA_VISIBLE_DEVICES empty, or a CPU-only build)",
                facts,
                code=C.NO_CUDA_DEVICE.code,
                dedupe=(C.NO_CUDA_DEVICE.code, "no_visible_device"),
            )
        ]
    facts["reason"] = "index_beyond_visible"
    return [
        row.event(
            hit,
            f"{hit.who()} asked for GPU {idx}, beyond the {facts.get('visible_gpus', 'fewer')} visible "
            "(CUDA_VISIBLE_DEVICES, a MIG or Slurm allocation that shows fewer devices, or a device list "
            "that counts from 1)",
            facts,
            dedupe=(row.code,),
        )
    ]


# Ultralytics' select_device: "ValueError: Invalid CUDA 'device=0,1' requested. Use 'device=cpu' or pass valid
# CUDA device(s) if available, ..." followed by "torch.cuda.is_available(): False" and
# "torch.cuda.device_count(): 0" on their own lines; YOLOv5's assert "Invalid CUDA '--device 0' requested, use
# '--device cpu' or pass valid CUDA device(s)". No GPU at all (is_available False) is RUN262; GPUs there but
# fewer than asked for, RUN264.
# YOLOv5 before 6.0 and YOLOv3 (utils/torch_utils.py select_device: "assert torch.cuda.is_available(), f'CUDA
# unavailable, invalid device {device} requested'") say only that CUDA is unavailable: RUN262.
_ULTRALYTICS = lazy_re.compile(
    r"Invalid CUDA '(?:device=|--device )([^']*)' requested|"
    r"CUDA unavailable, invalid device ([^\s{}'%]+) requested(?!')"
)
_IS_AVAILABLE = lazy_re.compile(r"torch\.cuda\.is_available\(\): (True|False)")
_DEVICE_COUNT = lazy_re.compile(r"torch\.cuda\.device_count\(\): (\d+)")
_MACHINE_HAS = lazy_re.compile(r"But your machine only has: (\[[^\]]*\])")
_NO_GPU_WHY = (
    "the NCCL backend found no GPU in this process (no driver or device nodes in the container, "
    "CUDA_VISIBLE_DEVICES empty, a login node or a CPU-only PyTorch): use gloo there, or run on a GPU node"
)


def _no_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group(1) or m.group(2) or m.group(3) or m.group(4) or "torch.distributed"
    build = (
        "a CPU-only or ROCm/macOS build"
        if what == "NCCL"
        else "MPI comes only with a PyTorch built from source on a host with MPI"
        if what == "MPI"
        else "a build without it"
    )
    return [
        row.event(
            hit,
            f"this PyTorch cannot use {what}: {clip(m.group(0), 100)} ({build})",
            {"library": what},
            dedupe=(row.code, what.lower()),
        )
    ]


def _is_message_prefix(text: str) -> bool:
    """True when `text` is the no-GPU message or a cut of it at least "ProcessGroupNCCL is" long. Its end
    is free from "only supported with GPU" on: a title retypes the full stop ("no GPUs found?")."""
    t = text.strip()
    return len(t) >= len("ProcessGroupNCCL is") and (
        _NO_GPU_MESSAGE.startswith(t) or t.startswith(_NO_GPU_MESSAGE[: _NO_GPU_MESSAGE.index("GPUs,")])
    )


def _no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(1) is not None and not _is_message_prefix(m.group(1)):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: {_NO_GPU_WHY}",
            {"reason": "no_visible_device", "backend": "nccl"},
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _ctor_raised(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """The constructor frame, then its exception line with no message (or the message cut): its only
    check that raises is the GPU count."""
    for ln in hit.after(3, same_rank=False):
        if ln.text.lstrip().startswith("File "):
            return None  # a deeper frame: the constructor was not where it raised
        e = _EXC_LINE.match(ln.text)
        if e is None:
            continue
        rest = e.group("rest")
        if rest.startswith(":") and rest[1:].strip():
            # the message is there: the no-GPU row reads it (tier 0), any other is another row's
            return [] if _is_message_prefix(rest[1:]) else None
        return [
            row.event(
                hit,
                f"{hit.who()}: ProcessGroupNCCL's constructor raised with its message lost ({_NO_GPU_WHY})",
                {"reason": "no_visible_device", "backend": "nccl", "message_missing": True},
                [hit.line, ln],
                dedupe=(row.code, "no_visible_device"),
            )
        ]
    return None


def _framework_no_gpu(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "no_visible_device"}
    if m.group(1):  # Lightning 1.x: which GPUs were asked for, and (next line) which the machine has
        has = next(
            (h for h in (_MACHINE_HAS.search(ln.text) for ln in [hit.line, *hit.after(2, False)]) if h), None
        )
        facts.update(requested_gpus=m.group(1), visible_gpus=has.group(1) if has else "?")
        if has and has.group(1).strip("[] "):
            return [
                row.event(
                    hit,
                    f"{hit.who()}: Lightning was asked for GPUs {m.group(1)} but this machine has "
                    f"{has.group(1)} (more GPUs requested than visible, or a wrong CUDA_VISIBLE_DEVICES)",
                    {**facts, "reason": "fewer_visible_than_requested"},
                    code=C.DEVICE_MISMATCH.code,
                    dedupe=(C.DEVICE_MISMATCH.code,),
                )
            ]
    if "occupied by other processes" in m.group(0):
        return [
            row.event(
                hit,
                f"{hit.who()}: Lightning could not open the GPUs it was given ({m.group(0)}): another "
                "process holds them (a leftover run or another job on this node, or the GPUs in "
                "exclusive-process compute mode)",
                {"reason": "device_busy"},
                dedupe=(row.code, "device_busy"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: the framework was asked for a GPU and finds none visible ({m.group(0)}): no "
            "driver or device nodes here, CUDA_VISIBLE_DEVICES empty, or a CPU-only PyTorch",
            facts,
            dedupe=(row.code, "no_visible_device"),
        )
    ]


def _ultralytics(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    asked = m.group(1) if m.group(1) is not None else m.group(2)
    facts: dict[str, Any] = {"requested_gpus": asked}
    if m.group(2) is not None:
        facts["cuda_available"] = False
    for ln in hit.after(6, False):
        a, c = _IS_AVAILABLE.search(ln.text), _DEVICE_COUNT.search(ln.text)
        if a:
            facts["cuda_available"] = a.group(1) == "True"
        if c:
            facts["visible_gpus"] = int(c.group(1))
    if facts.get("cuda_available") is False or facts.get("visible_gpus") == 0:
        return [
            row.event(
                hit,
                f"{hit.who()}: GPU(s) {asked} were requested but torch sees no usable GPU (no driver or "
                "device nodes here, CUDA_VISIBLE_DEVICES empty, or a CPU-only PyTorch)",
                {**facts, "reason": "no_visible_device"},
                dedupe=(row.code, "no_visible_device"),
            )
        ]
    return [
        row.event(
            hit,
            f"{hit.who()}: GPU(s) {asked} were requested but are not all visible (more GPUs asked for "
            "than "
            "this machine shows, or a wrong CUDA_VISIBLE_DEVICES)",
            {**facts, "reason": "fewer_visible_than_requested"},
            code=C.DEVICE_MISMATCH.code,
            dedupe=(C.DEVICE_MISMATCH.code,),
        )
    ]


# vLLM's record of a worker whose device set-up raised (0.4-0.6 worker_base.py: "Error executing method
# init_device. This might cause deadlock in distributed execution."; the multiproc workers: "Exception in
# worker VllmWorkerProcess while processing method init_device: <message>"): init_device sets the CUDA device,
# checks its memory and joins the process group. The message, where shown, is read by its own row first;
# without it the record says the worker could not set up its GPU: tier 2, so any failure shown elsewhere
# leads.
_WORKER_INIT_DEVICE = lazy_re.compile(
    r"Error executing method init_device\b|Error executing method 'init_device'|"
    r"while processing method init_device\b"
)


def _worker_init_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a worker failed while setting up its GPU (vLLM's init_device: device selection, its "
            "memory check or the process group; its traceback says which)",
            {"reason": "device_init_failed", "framework": "vllm"},
            tier=2,
            dedupe=(row.code, "init_device"),
        )
    ]


def _too_many_asked(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"reason": "fewer_visible_than_requested"}
    nums = [g for g in m.groups() if g is not None]
    if nums:
        facts["requested_gpus"] = int(nums[0])
    if len(nums) > 1:
        facts["visible_gpus"] = int(nums[1])
    return [
        row.event(
            hit,
            f"{hit.who()}: more GPUs were asked for than this job can see ({m.group(0)})",
            facts,
            dedupe=(row.code,),
        )
    ]


def _ordinal(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    t = hit.text
    # torch's "CUDA error: ...", NCCL's "Cuda failure 101 '...'", nccl-tests' "Test CUDA failure ..."
    # (torch's own assert is read by its words: a title quotes it without the exception type)
    if not (
        "rror" in t or "ERROR" in t or "failure" in t or "Invalid GPU Id" in t or "num_gpus INTERNAL" in t
    ):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()} asked for a GPU index that is not visible "
            "(more processes per node than visible GPUs, or a wrong CUDA_VISIBLE_DEVICES)",
            {"cuda_error": m.group(0)},
            dedupe=(row.code,),
        )
    ]


_EXC = "the exception type ('RuntimeError: ', 'ValueError: ') before torch's message"
SIGNATURES = (
    Signature(
        "no nccl in torch",
        _NO_NCCL,
        _no_nccl,
        C.LIBRARY_MISSING.code,
        anchors=(
            b"NCCL built in",
            b"rror",
            b"NCCL support is not",  # (1.x's message by its own words, for a title without the type)
            b"MPI built in",
            b"Gloo built in",
            b"UCC built in",
            b"distributed is not available",
            b"distributed' has no attribute",
            b"from 'torch.distributed'",
            b"Distributed package doesn't have",
            b"available; try to recompile",
            b"rebuild with USE_NCCL",
        ),
        worth=(
            rb"NCCL built in",
            rb"not compiled",
            rb"Error\b",
            rb"doesn't have \w+ built in",
            rb"Distributed package doesn't have",
            rb"available; try to recompile",
            rb"rebuild with USE_NCCL",
            rb"distributed is not available",
            rb"distributed' has no attribute",
            rb"cannot import name '\w+' from 'torch\.distributed'",
        ),
        words=(
            "nccl built in",
            "nccl support is not compiled",
            "mpi built in",
            "gloo built in",
            "ucc built in",
            "torch.distributed is not available",
            "module 'torch.distributed' has no attribute",
            "from 'torch.distributed'",
            "distributed package doesn't have",
            "available; try to recompile",
            "rebuild with use_nccl",
        ),
        anchor_from=_EXC,
        examples=("RuntimeError: NCCL support is not compiled",),
    ),
    Signature(
        "nccl backend without a gpu",
        _NO_GPU,
        _no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"ProcessGroupNCCL is only", b"rror"),
        worth=(rb"ProcessGroupNCCL is only", rb"Error\b"),
        words=("processgroupnccl is",),
        anchor_from=_EXC,
        examples=(
            "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
            "ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
            "RuntimeError: ProcessGroupNCCL is only supp",
            "RuntimeError: ProcessGroupNCCL is",
        ),
    ),
    Signature(
        "processgroupnccl constructor raised",
        _CTOR_FRAME,
        _ctor_raised,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"= ProcessGroupNCCL(",),
        worth=(rb"= ProcessGroupNCCL\(",),
        words=("= processgroupnccl(",),
    ),
    Signature(
        "framework finds no gpu",
        _FRAMEWORK_NO_GPU,
        _framework_no_gpu,
        C.NO_CUDA_DEVICE.code,
        anchors=(
            b"You requested",
            b"requires a GPU",
            b"FP16 Mixed precision",
            b"infer device type",
            b"none is available",
            b"GPU is required",
            b"A GPU is needed",
            b"BF16 Mixed precision",
            b"no GPU resources",
            b"is not available",
            b"You requested to find",
            b"none are available",
            b"is not supported for CPU training",
        ),
        worth=(
            rb"You requested (?:GPUs|gpus?):",
            rb"requires a GPU",
            rb"FP16 Mixed precision",
            rb"infer device type",
            rb"none is available",
            rb"GPU is required",
            rb"A GPU is needed",
            rb"BF16 Mixed precision",
            rb"no GPU resources",
            rb"(?:Cuda|CUDA) is not available",
            rb"You requested to find \d+ devices but",
            rb"GPUs requested but none are available",
            rb"is not supported for CPU training",
        ),
        words=(
            "you requested gpu",
            "requires a gpu",
            "fp16 mixed precision",
            "infer device type",
            "none is available",
            "gpu is required",
            "a gpu is needed",
            "bf16 mixed precision",
            "no gpu resources",
            "cuda is not available",
            "you requested to find",
            "none are available",
            "is not supported for cpu training",
        ),
    ),
    Signature(
        "worker's device set-up failed",
        _WORKER_INIT_DEVICE,
        _worker_init_device,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"method init_device", b"method 'init_device'"),
        worth=(rb"method '?init_device",),
        words=("method init_device", "method 'init_device'"),
    ),
    Signature(
        "more gpus asked for than visible",
        _TOO_MANY_ASKED,
        _too_many_asked,
        C.DEVICE_MISMATCH.code,
        anchors=(
            b"number of required GPUs",
            b"number of GPUs present",
            b"this machine only has",
            b"GPUs but your machine only has",
            b"is larger than the number of available GPUs",
            b"does not allocate any GPUs",
            b"enough GPUs available in a current node",
            b"Cannot provide a placement group",
            b"Not enough resources to allocate",
            b"exceeds number of GPU devices",
        ),
        worth=(
            rb"number of required GPUs",
            rb"number of GPUs present",
            rb"this machine only has \d+ GPUs",
            rb"GPUs but your machine only has \d+",
            rb"is larger than the number of available GPUs",
            rb"does not allocate any GPUs",
            rb"enough GPUs available in a current node",
            rb"Cannot provide a placement group",
            rb"Not enough resources to allocate",
            rb"exceeds number of GPU devices",
        ),
        words=(
            "number of required gpus",
            "number of gpus present",
            "machine only has",
            "number of available gpus",
            "does not allocate any gpus",
            "enough gpus available",
            "cannot provide a placement group",
            "not enough resources to allocate",
            "exceeds number of gpu devices",
        ),
    ),
    Signature(
        "device index beyond the visible ones",
        _INDEX_BEYOND,
        _index_beyond,
        C.DEVICE_MISMATCH.code,
        anchors=(
            b"Invalid CUDA device index",
            b"Invalid device ordinal value",
            b"but available devices are",
            b"Could not satisfy explicit device specification",
        ),
        words=(
            "invalid cuda device index",
            "invalid device ordinal value",
            "but available devices are",
            "could not satisfy explicit device specification",
        ),
    ),
    Signature(
        "ultralytics device check",
        _ULTRALYTICS,
        _ultralytics,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"Invalid CUDA '", b"CUDA unavailable, invalid device"),
        worth=(rb"Invalid CUDA '", rb"CUDA unavailable, invalid device"),
        words=("invalid cuda '", "cuda unavailable, invalid device"),
    ),
    Signature(
        "device ordinal",
        _ORDINAL,
        _ordinal,
        C.DEVICE_MISMATCH.code,
        # rccl-tests' HIPCHECK: "Test HIP failure common.cu:1129 'hipErrorInvalidDevice'"
        anchors=(
            b"rror",
            b"ERROR",
            b"UDA failure",
            b"HIP failure",
            b"Invalid GPU Id",
            b"num_gpus INTERNAL ASSERT",
        ),
        worth=(
            rb"num_gpus INTERNAL ASSERT",
            rb"Error\b",
            rb"\berror\b",
            rb"[Cc]uda failure|CUDA failure",
            rb"HIP failure",
            rb"Invalid GPU Id",
        ),
        words=(
            "invalid device ordinal",
            "cuda_visible_devices",
            "device >= 0 && device < num_gpus",
            "invalid device id",
            "errorinvaliddevice",
            "cuda_error_invalid_device",
            "invalid gpu id",
        ),
        anchor_from="'CUDA error: ' before the runtime's message, or NCCL's and nccl-tests' 'CUDA failure' "
        "(rccl-tests' 'HIP failure'; one of them required by the row)",
        examples=(
            "RuntimeError: CUDA error: invalid device ordinal",
            "g0010: Test CUDA failure common.cu:941 'invalid device ordinal'",
            "Test HIP failure common.cu:1129 'hipErrorInvalidDevice' while running test",
        ),
    ),
)
# Every pattern of parse() needs one of its row's words in the line (lower case; checked before any of them).
parse = gated_reader(SIGNATURES, unless="NCCL INFO")
