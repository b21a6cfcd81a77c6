"""device_comm_faults: accelerator hardware faults and communicator failures of the stacks the older rows do
not read: libtpu's and the TPU runtime's hardware records, the NVIDIA GSP firmware's timeouts, HCCL's
start-up results a torch_npu raise or a glog CHECK names, NCCL's topology XML limit, the AWS Neuron
runtime's collective-communication (ENC) refusal, Intel Gaudi's ProcessGroupHCCL error, XGBoost's check of
one GPU per rank, and PaddlePaddle's multi-GPU install check.

Formats (read at their source, or at the records real logs show of closed-source runtimes):
- TPU (libtpu / the TPU driver, TF 1.x-2.x TPUEstimator, JAX, PyTorch/XLA XRT and PJRT):
  "Error recorded from outfeed: Bad hardware status: 0x1" (infeed/outfeed; "Bad hardware status: Queue is
  closed." is the queue closed after another failure, most often a TPU OOM: not matched), synchronous_driver
  "[/dev/accel0 tpu1013:pe1:0] !!!! FATAL ERROR !!!! for [/dev/accel0 ...]", fake_program_continuator "A
  Unknown error has occurred, all pending programs will fail, and results may be corrupted", tpunetd "Detected
  failure SLICE_FAILURE_CHIP_DRIVER_ERROR in session ..." (SLICE_FAILURE_SW_INJECT_ERROR is a program's
  halt: not matched), XRT "Failed precondition: Driver must be Open to DMA map.", torch_xla xla_dist's
  "TPU node-v3-32 is not HEALTHY yet. Re-run when all TPUs are HEALTHY".
- NVIDIA open-gpu-kernel-modules kernel_gsp.c (r515-r595): "NVRM: GPU6 _kgspLogRpcTimeout: *** GSP Timeout
  ***", "NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, ...", "NVRM: GPU6
  kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected." (the driver's Xid 119/120 text;
  "Timeout after 6s of waiting for RPC response from GPU1 GSP!" is rules/gpu_hardware.py's).
- HCCL (hccl_types.h HcclResult) at communicator start-up, raised by torch_npu ("HCCL function error:
  hcclCommInitRootInfoConfig(...), error code is 1") or by a C++ engine's glog CHECK ("Check failed: status
  == HCCL_SUCCESS (1 vs. 0) HCCL get root info failed."): 1 HCCL_E_PARA, 2 HCCL_E_PTR, 5 HCCL_E_NOT_SUPPORT
  are the analogue of ncclInvalidUsage/ncclInvalidArgument; 15 HCCL_E_RUNTIME, 16 HCCL_E_DRV of a CUDA
  call failing under ncclCommInit (the platform). rules/hccl.py reads 4, 9 and 11.
- NCCL src/graph/xml.h (2.7-2.29) xmlAddNode / xmlAddTree / xmlGetNextAttrIndex: "NCCL WARN Error : too many
  XML nodes (max 256)", "Error : too many XML subnodes (max 640)" (MAX_SUBS), "Error :
  too many XML attributes (max 16)" (the topology detection's fixed limits: a host with more PCI devices,
  NICs and bridges than NCCL_TOPO_XML_MAX_NODES, or a topology file past them); all return ncclInternalError.
- AWS Neuron runtime (libnrt ENC): "ENC:enc_init_comm global comm (2) has less channels than this replica
  group (4) :likely not enough EFA devices found if running on multiple nodes or CC not permitted on this
  group [...]".
- Intel Gaudi habana_frameworks ProcessGroupHCCL (process_group_hccl_base.cpp): "what(): Collective call
  returned error" / "RuntimeError: Collective call returned error".
- XGBoost src/common/device_helpers.cu / collective (1.x-2.x): "Check failed: n_uniques == world (1 vs. 2) :
  Multiple processes within communication group running on same CUDA device is not supported".
- vLLM's worker record of a method that raised (multiproc_worker_utils.py 0.5-0.6, "Exception in worker
  VllmWorkerProcess while processing method init_device: NCCL error: internal error - please report this issue
  to the NCCL developers, Traceback (most recent call last):") where the message is pynccl_wrapper.py's
  NCCL_CHECK ("NCCL error: " + ncclGetErrorString): the traceback glued after it hides it from the rows of
  torch's "NCCL error: ..." (rules/nccl_errors.py), and the init_device record alone is tier 2.
- PaddlePaddle fluid/install_check.py (1.x) "Your Paddle has some problem with multiple GPU." and
  paddle/utils/install_check.py (2.x) "PaddlePaddle meets some problem with 2 GPUs. This may be caused by:".
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.nccl_detail import KIND
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# -- TPU hardware --------------------------------------------------------------------------------------------
_TPU_HW = lazy_re.compile(
    r"Bad hardware status: (?P<status>0x[0-9a-fA-F]+)|"
    r"!!!! FATAL ERROR !!!! for \[(?P<accel>/dev/accel\d+)(?: (?P<loc>[\w:]+))?\]|"
    r"(?P<unknown>all pending programs will fail, and results may be corrupted)|"
    r"Detected failure (?P<slice>SLICE_FAILURE_(?:CHIP|HW|HARDWARE|HBM|ICI|TPU)\w*)|"
    r"(?P<dma>Driver must be Open to DMA map)|"
    r"TPU (?P<node>\S+) is not HEALTHY yet"
)
_TPU_LOC = lazy_re.compile(r"Physical location: ([\w:]+)|chip locations are: ?([\w:]+)|(tpu\d+:pe\d+:\d+)")


def _tpu_hw(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    g = m.groupdict()
    facts: dict[str, Any] = {"accelerator": "tpu"}
    if g["status"]:
        facts.update(reason="bad_hardware_status", hardware_status=g["status"])
        what = f"the TPU reported a bad hardware status ({g['status']}) on its infeed/outfeed"
    elif g["accel"]:
        facts.update(reason="driver_fatal_error", device=g["accel"])
        what = f"the TPU driver reported a fatal error on {g['accel']}"
    elif g["unknown"]:
        facts["reason"] = "chip_unknown_error"
        what = "the TPU runtime reported an unknown chip error: all pending programs fail"
    elif g["slice"]:
        facts.update(reason="slice_failure", slice_failure=g["slice"])
        what = f"the TPU slice's health daemon detected {g['slice']}"
    elif g["dma"]:
        facts["reason"] = "driver_not_open"
        what = "the TPU driver was no longer open to map memory (Driver must be Open to DMA map)"
    else:
        facts.update(reason="node_unhealthy", tpu_node=g["node"])
        what = f"the TPU node {g['node']} is not HEALTHY"
    loc = _TPU_LOC.search(hit.text)
    if loc:
        facts["chip_location"] = next(x for x in loc.groups() if x)
    return [
        row.event(
            hit,
            f"{what}: a TPU chip, its driver or its host failed under the job (not the program)",
            facts,
            dedupe=(row.code, "tpu_hw"),
        )
    ]


# -- NVIDIA GSP firmware timeouts ----------------------------------------------------------------------------
_GSP = lazy_re.compile(
    r"NVRM: (?:GPU(?P<gpu>\d+) )?(?:\S+: )?(?:\*+ ?GSP Timeout ?\*+|"
    r"(?P<hb>_kgspIsHeartbeatTimedOut: Heartbeat timed out)|"
    r"(?P<mem>Memory Subsystem Error detected))"
)


def _gsp(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    gpu = m.group("gpu")
    facts: dict[str, Any] = {"xid": 119, "xid_meaning": "GSP RPC timeout", "xid_from": "GSP text"}
    if gpu is not None:
        facts["gpu"] = int(gpu)
    where = f"GPU {gpu}" if gpu is not None else "a GPU"
    if m.group("mem"):
        facts["reason"] = "memory_subsystem_error"
        what = f"the driver found a memory-subsystem error on {where} (its GSP firmware stopped answering)"
    elif m.group("hb"):
        facts["reason"] = "gsp_heartbeat_timeout"
        what = f"the GSP firmware of {where} stopped its heartbeat"
    else:
        facts["reason"] = "gsp_rpc_timeout"
        what = f"the GSP firmware of {where} did not answer the driver (GSP RPC timeout, Xid 119)"
    return [
        row.event(
            hit,
            f"{what}: the GPU or its firmware hung; it needs a reset",
            facts,
            dedupe=(row.code, "gsp", gpu),
        )
    ]


# -- HCCL start-up results -----------------------------------------------------------------------------------
_HCCL_INIT = lazy_re.compile(
    r"HCCL function error: (?P<fn>[Hh]cclCommInit\w*|[Hh]cclGetRootInfo\w*)\b.*?error code is (?P<num>\d+)|"
    r"Check failed: \w+ == HCCL_SUCCESS \((?P<num2>\d+) vs\. 0\)(?P<what>[^\n]*)"
)
_HCCL_USAGE = {1: "HCCL_E_PARA", 2: "HCCL_E_PTR", 5: "HCCL_E_NOT_SUPPORT"}
_HCCL_PLATFORM = {15: "HCCL_E_RUNTIME", 16: "HCCL_E_DRV"}
_RANKID = lazy_re.compile(r"RankID:(\d+)")


def _hccl_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    num = int(m.group("num") or m.group("num2"))
    if m.group("num2") is not None and not re.search(
        r"(?i)root ?info|comm ?init|communicator", m.group("what")
    ):
        return None
    fn = m.group("fn") or clip(m.group("what").strip(), 60)
    facts: dict[str, Any] = {"backend": "hccl", "hccl_error": num, "hccl_function": fn}
    r = hit.rank
    if num in _HCCL_USAGE:
        facts["hccl_result"] = _HCCL_USAGE[num]
        code = C.NCCL_INVALID_USAGE.code
        msg = (
            f"{hit.who(r)}: HCCL refused the communicator's start-up ({fn}) with {_HCCL_USAGE[num]} ({num}): "
            "its arguments (ranks, device, root info, config) do not fit this job"
        )
    elif num in _HCCL_PLATFORM:
        facts["hccl_result"] = _HCCL_PLATFORM[num]
        code = C.NCCL_INIT_CUDA_FAILURE.code
        msg = (
            f"{hit.who(r)}: a runtime or driver call failed while HCCL created its communicator ({fn}, "
            f"{_HCCL_PLATFORM[num]} {num}): the CANN stack, the NPU driver or the device ids"
        )
    else:
        return None
    return [row.event(hit, msg, facts, rank=r, code=code, dedupe=(code, "hccl_init2", r))]


# -- NCCL's topology XML limit -------------------------------------------------------------------------------
_NCCL_XML = lazy_re.compile(r"Error : too many XML (nodes|subnodes|attributes) \(max (\d+)\)")


def _nccl_xml(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what, n = m.group(1), int(m.group(2))
    return [
        row.event(
            hit,
            f"NCCL's topology detection ran past its fixed limit of {n} XML {what} (more PCI devices, NICs "
            f"and "
            "bridges than it can hold): give it a topology file (NCCL_TOPO_FILE) or a newer NCCL",
            {"problem": f"topo_xml_max_{what}", f"max_{what}": n},
            dedupe=(row.code, "nccl_xml"),
        )
    ]


# -- AWS Neuron runtime's collective set-up ------------------------------------------------------------------
_NEURON_ENC = lazy_re.compile(r"global comm \((\d+)\) has less channels than this replica group \((\d+)\)")


def _neuron_enc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    have, want = int(m.group(1)), int(m.group(2))
    return [
        row.event(
            hit,
            f"the Neuron runtime could not set up a collective group: its global communicator has {have} "
            f"channels, the replica group needs {want} (too few EFA devices across nodes, or collectives not "
            "permitted on this group)",
            {"accelerator": "neuron", "global_channels": have, "group_channels": want},
            dedupe=(row.code, "neuron_enc"),
        )
    ]


# -- Gaudi's ProcessGroupHCCL --------------------------------------------------------------------------------
_GAUDI_COLL = lazy_re.compile(r"Collective call returned error")


def _gaudi_coll(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = " ".join(ln.text for ln in [*hit.before(3, same_rank=False), *hit.after(3, same_rank=False)])
    if "hccl" not in (hit.text + near).lower() and "habana" not in (hit.text + near).lower():
        return None
    r = hit.rank
    return [
        row.event(
            hit,
            f"{hit.who(r)}: Gaudi's HCCL returned an error from a collective (ProcessGroupHCCL): see the "
            "HCCL log ($HABANA_LOGS) of the first rank that failed",
            {"backend": "hccl", "accelerator": "gaudi"},
            rank=r,
            tier=1,
            dedupe=(row.code, "gaudi_coll", r),
        )
    ]


# -- XGBoost: two ranks on one GPU ---------------------------------------------------------------------------
_XGB_DUP = lazy_re.compile(
    r"Multiple processes within communication group running on same CUDA device is not supported"
)
_XGB_COUNTS = lazy_re.compile(r"n_uniques == world \((\d+) vs\. (\d+)\)")


def _xgb_dup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "xgboost"}
    c = _XGB_COUNTS.search(hit.text)
    if c:
        facts.update(distinct_gpus=int(c.group(1)), world_size=int(c.group(2)))
    return [
        row.event(
            hit,
            "XGBoost found two or more of its workers on the same CUDA device"
            + (f" ({c.group(1)} distinct GPUs for {c.group(2)} workers)" if c else "")
            + ": one GPU per worker is required",
            facts,
            dedupe=(row.code, "xgb_dup"),
        )
    ]


# -- two ranks of one communicator on one GPU, by NCCL's own records of its communicators -----------------
# init.cc prints each communicator's identity when it comes up, is aborted or destroyed (NCCL 2.4-2.18
# "host:pid:tid [0] NCCL INFO comm 0x560c6a8aafd0 rank 0 nranks 2 cudaDev 0 busId 86000 - Abort
# COMPLETE", 2.19+ with "nvmlDev 0" and "commId 0x35877405ed0e9b4f"). Two processes of one host whose
# records name the same bus id for different ranks of a communicator of one size (and one commId where
# printed) run on one GPU: every worker selected the same device (a fixed --local_rank, a missing
# torch.cuda.set_device, CUDA_VISIBLE_DEVICES narrowed to one GPU per node), and the communicator was
# aborted. Read where a communicator was aborted only: a healthy run prints no "Abort COMPLETE".
_COMM_RECORD = lazy_re.compile(
    r"^(?:\[[\d\- :]+\] )?([\w.-]+):(\d+):\d+ \[\d+\] NCCL INFO comm 0x[0-9a-fA-F]+ rank (\d+) "
    r"nranks (\d+) cudaDev \d+(?: nvmlDev \d+)? busId ([0-9a-fA-F]+)(?: commId (0x[0-9a-fA-F]+))? - "
    r"(?:Abort|Init|Destroy) COMPLETE"
)
# The trigger: a communicator aborted (the records of one that came up or was destroyed are read around it).
_COMM_ABORTED = lazy_re.compile(r"NCCL INFO comm 0x[0-9a-fA-F]+ rank \d+ nranks \d+ .{0,80}- Abort COMPLETE")


def _one_gpu_comm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    seen: dict[tuple[str, str, str], dict[str, tuple[int, Optional[str]]]] = {}
    for ln in [*hit.before(60, same_rank=False), hit.line, *hit.after(60, same_rank=False)]:
        c = _COMM_RECORD.search(ln.text)
        if c:
            host, pid, rank, nranks, bus, comm_id = c.groups()
            seen.setdefault((host, bus.lower(), nranks), {}).setdefault(pid, (int(rank), comm_id))
    for (host, bus, nranks), by_pid in seen.items():
        ranks = {r for r, _ in by_pid.values()}
        ids = {i for _, i in by_pid.values() if i is not None}
        if len(by_pid) < 2 or len(ranks) < 2 or len(ids) > 1:
            continue
        listed = ", ".join(str(r) for r in sorted(ranks))
        return [
            row.event(
                hit,
                f"NCCL's records on {host} put ranks {listed} of one {nranks}-rank communicator on the "
                f"same GPU (busId {bus}) in different processes: every worker selected the same device (set "
                "torch.cuda.set_device(local_rank) / device_ids=[local_rank] from LOCAL_RANK), and the "
                "communicator was aborted",
                {"kind": "ranks_on_one_gpu", "host": host, "bus_id": bus, "ranks": sorted(ranks)},
                dedupe=(row.code, "one_gpu_comm", host, bus),
            )
        ]
    return None


# -- a launch command that pins every worker to one local rank ----------------------------------------------
# torchrun / python -m torch.distributed.run, and torch.distributed.launch with --use_env (1.x-2.x), pass each
# worker its local rank in the environment (LOCAL_RANK) only; launch without --use_env appends
# "--local_rank=N" after the script's own arguments (argparse keeps the last one). A command that starts more
# than one worker per node and gives the script a fixed "--local_rank 0" (a README's single-GPU line with the
# launcher put in front) makes every worker read the same rank and select the same GPU
# (torch.cuda.set_device(args.local_rank)): NCCL refuses ("Duplicate GPU detected") or the job hangs at its
# first collective. The command is read whole, its "\" continuations joined.
_LAUNCH_CMD = lazy_re.compile(
    r"(?:\btorchrun|torch\.distributed\.(?:launch|run))\b(?P<largs>.*?)\s(?P<script>\S+\.py)\b(?P<sargs>.*)"
)
_LAUNCHER = lazy_re.compile(r"(?:\btorchrun|torch\.distributed\.(?:launch|run))\b")
_NPROC = lazy_re.compile(r"--nproc[_-]per[_-]node[= ](\d+)")
_FIXED_LOCAL = lazy_re.compile(r"\s--local[_-]rank[= ](\d+)\b")


def _pinned_local_rank(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    for ln in hit.after(12, same_rank=False):
        if not text.rstrip().endswith("\\"):
            break
        text = text.rstrip()[:-1] + " " + ln.text.strip()
    m = _LAUNCH_CMD.search(text)
    n = _NPROC.search(m.group("largs")) if m else None
    fixed = _FIXED_LOCAL.search(m.group("sargs")) if m else None
    if not (m and n and fixed and int(n.group(1)) > 1):
        return None
    if "torch.distributed.launch" in text and not re.search(r"--use[_-]env\b", m.group("largs")):
        return None  # the launcher appends its own --local_rank=N after it
    return [
        row.event(
            hit,
            f"the launch command starts {n.group(1)} workers per node but passes the script a fixed "
            f"--local_rank {fixed.group(1)} (the launcher gives the local rank only in LOCAL_RANK): every "
            "worker selects the same GPU, so NCCL refuses the communicator or the job hangs in its first "
            "collective",
            {
                "kind": "pinned_local_rank",
                "nproc_per_node": int(n.group(1)),
                "local_rank": int(fixed.group(1)),
            },
            tier=1,
            dedupe=(row.code, "pinned_local_rank"),
        )
    ]


# -- PaddlePaddle's multi-GPU install check ------------------------------------------------------------------
_PADDLE_CHECK = lazy_re.compile(
    r"Your Paddle has some problem with multiple GPU|PaddlePaddle meets some problem with (\d+) GPUs"
)


def _paddle_check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "paddle", "check": "run_check"}
    if m.group(1):
        facts["world_size"] = int(m.group(1))
    return [
        row.event(
            hit,
            "PaddlePaddle's install check passed on one GPU and failed on several: NCCL could not set up "
            "across the GPUs (NCCL install, GPUs not visible or occupied, or P2P between them)",
            facts,
            tier=1,
            dedupe=(row.code, "paddle_check"),
        )
    ]


# -- vLLM's worker record with pynccl's NCCL error ---------------------------------------------------------
_VLLM_NCCL = lazy_re.compile(
    r"while processing method (?P<method>\w+): NCCL error: (?P<err>[a-z][^,(]*?)(?:\s*\(run with [^)]*\))?"
    r"(?:, Traceback|\s*$)"
)


def _vllm_nccl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    err = m.group("err").strip()
    code = next((c for k, c in KIND.items() if err.lower().startswith(k)), None)
    if code is None:
        return None
    return [
        row.event(
            hit,
            f"a vLLM worker's {m.group('method')} failed in NCCL ({err}): the NCCL call of its communicator "
            "set-up (pynccl) returned an error",
            {"nccl_error": err.lower(), "framework": "vllm", "method": m.group("method")},
            code=code.code,
            dedupe=(code.code, "vllm_pynccl"),
        )
    ]


SIGNATURES = (
    Signature(
        "tpu hardware fault",
        _TPU_HW,
        _tpu_hw,
        C.TPU_HARDWARE_FAULT.code,
        anchors=(
            b"Bad hardware status: 0x",
            b"FATAL ERROR !!!!",
            b"all pending programs will fail",
            b"Detected failure SLICE_FAILURE_",
            b"Driver must be Open to DMA map",
            b"is not HEALTHY yet",
        ),
        worth=(
            rb"Bad hardware status: 0x",
            rb"FATAL ERROR !!!! for \[/dev/accel",
            rb"all pending programs will fail",
            rb"Detected failure SLICE_FAILURE_",
            rb"Driver must be Open to DMA map",
            rb"is not HEALTHY yet",
        ),
        words=(
            "bad hardware status",
            "fatal error !!!!",
            "all pending programs will fail",
            "slice_failure_",
            "driver must be open",
            "is not healthy yet",
        ),
    ),
    Signature(
        "nvidia gsp timeout",
        _GSP,
        _gsp,
        C.GPU_XID.code,
        anchors=(b"GSP Timeout", b"Heartbeat timed out", b"Memory Subsystem Error"),
        worth=(
            rb"NVRM: .*GSP Timeout",
            rb"NVRM: .*Heartbeat timed out",
            rb"NVRM: .*Memory Subsystem Error detected",
        ),
        words=("gsp timeout", "heartbeat timed out", "memory subsystem error"),
    ),
    Signature(
        "hccl start-up result",
        _HCCL_INIT,
        _hccl_init,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"HCCL function error", b"== HCCL_SUCCESS ("),
        worth=(rb"HCCL function error: [Hh]ccl(?:CommInit|GetRootInfo)", rb"== HCCL_SUCCESS \(\d+ vs"),
        words=("hccl function error", "hccl_success"),
    ),
    Signature(
        "nccl topology xml limit",
        _NCCL_XML,
        _nccl_xml,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"too many XML ",),
        worth=(rb"Error : too many XML (?:nodes|subnodes|attributes) \(max",),
        words=("too many xml ",),
    ),
    Signature(
        "neuron collective channels",
        _NEURON_ENC,
        _neuron_enc,
        C.NCCL_INVALID_USAGE.code,
        anchors=(b"has less channels than this replica group",),
        worth=(rb"has less channels than this replica group",),
        words=("has less channels than this replica group",),
    ),
    Signature(
        "gaudi collective call error",
        _GAUDI_COLL,
        _gaudi_coll,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"Collective call returned error",),
        worth=(rb"Collective call returned error",),
        words=("collective call returned error",),
    ),
    Signature(
        "xgboost ranks on one gpu",
        _XGB_DUP,
        _xgb_dup,
        C.NCCL_DUPLICATE_GPU.code,
        anchors=(b"running on same CUDA device",),
        worth=(rb"running on same CUDA device is not supported",),
        words=("running on same cuda device",),
    ),
    Signature(
        "nccl communicator records put two ranks on one gpu",
        _COMM_ABORTED,
        _one_gpu_comm,
        C.NCCL_DUPLICATE_GPU.code,
        anchors=(b"Abort COMPLETE",),
        words=("abort complete",),
    ),
    Signature(
        "launch command pins one local rank",
        _LAUNCHER,
        _pinned_local_rank,
        C.NCCL_DUPLICATE_GPU.code,
        anchors=(b"torchrun", b"torch.distributed.launch", b"torch.distributed.run"),
        words=("torchrun", "torch.distributed.launch", "torch.distributed.run"),
    ),
    Signature(
        "vllm worker nccl error",
        _VLLM_NCCL,
        _vllm_nccl,
        C.NCCL_INTERNAL_ERROR.code,
        anchors=(b"while processing method",),
        worth=(rb"while processing method \w+: NCCL error: ",),
        words=("while processing method",),
    ),
    Signature(
        "paddle multi-gpu install check",
        _PADDLE_CHECK,
        _paddle_check,
        C.NCCL_INIT_CUDA_FAILURE.code,
        anchors=(b"has some problem with multiple GPU", b"meets some problem with"),
        worth=(
            rb"Paddle has some problem with multiple GPU",
            rb"PaddlePaddle meets some problem with \d+ GPUs",
        ),
        words=("some problem with multiple gpu", "meets some problem with"),
    ),
)
parse = gated_reader(SIGNATURES)
