"""AWS Trainium / Inferentia (Neuron): the Neuron runtime's (libnrt) and its device driver layer's (TDRV)
records when a device could not be opened, ran out of memory, a collective execution hung, or the chip
reported a hardware error, and the status names torch-neuronx / libneuronxla / vLLM-Neuron raise.

Formats, read at their source (aws-neuron-sdk docs: neuron-runtime/api/nrt_status.rst, nrt.h's comments,
the runtime troubleshooting pages' quoted logs, 2021-2025): every record is "<date> <pid>:<tid> ERROR
<MODULE>:<function> <text>" ("2023-Jan-09 20:27:41.0593 15042:15042 ERROR  TDRV:exec_consume_..."), often
behind a Python logger's "2024-08-12 18:34:56,116::ERROR: ".

- Cores held elsewhere: "NRT:nrt_allocate_neuron_cores  NeuronCore(s) not available - Requested:nc1-nc1
  Available:0" (Neuron 1.x), "Logical Neuron Core(s) not available - Requested:lnc0-lnc0 Available:0" (2.x),
  NRT_EXEC_NC_BUSY (1005), NRT_LOAD_NOT_ENOUGH_NC (9); no device: "TDRV:tdrv_init_mla_phase1  Could not
  open the nd0", "TDRV:tdrv_get_dev_info  No neuron device available", then "NRT:nrt_init  Failed to
  initialize devices, error:1" (RUN333).
- Driver and runtime that do not match: "NRT:nrt_init  Unable to determine Neuron Driver version. Please
  check aws-neuron-dkms package is installed.", "This runtime requires Neuron Driver version 2.0 or
  greater. Please upgrade aws-neuron-dkms package.", a NEFF newer than the runtime ("TDRV:translate_one_
  pseudo_instr_v2  Unsupported hardware operator code 214 found in neff.", NRT_UNSUPPORTED_NEFF_VERSION)
  (RUN398).
- Device memory: "TDRV:log_dev_mem  Failed to allocate 4.000GB (alignment: none, usage: tensors) on ND
  0:NC 4" (with the usage table after it), "Failed to alloc DEVICE memory: 16777216", "nrt_tensor_allocate
  status=4" (NRT_RESOURCE) (RUN101).
- A hung execution, which in a job of several workers is a collective whose peer never arrived:
  "TDRV:exec_consume_infer_status_notifications (FATAL-RT-UNDEFINED-STATE) inference timeout (600000 ms)
  on Neuron Device 0 NC 0, waiting for execution completion notification", 2.x "[ND 1][NC 0] execution
  timeout (30000 ms) on model ...", "[ND 1][NC 4] execution on model ... is stuck after all collectives
  operation have completed", NRT_EXEC_HW_ERR_COLLECTIVES (1200, "Stuck in collectives op (missing
  notification(s))"), NRT_TIMEOUT (5) (RUN399). "(NON-FATAL, Ignoring)" records are kept at tier 1.
- The chip's hardware: NRT_EXEC_HW_ERR_HBM_UE (1201), NRT_EXEC_HW_ERR_NC_UE (1202, a parity error of a
  core's memory), NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE (1205): uncorrectable memory errors (RUN242);
  NRT_EXEC_HW_ERR_DMA_ABORT (1203), NRT_HW_ERROR (6) and "TDRV:tpb_eng_init_hals_v2 CRITICAL HW ERROR: One
  or more engines are running. Please restart device by reloading driver": a device to reset (RUN293).
- The EFA proxy of collectives: NRT_NETWORK_PROXY_FAILURE (1206) (RUN171).
- nccom, Neuron's fork of NCCL, prints NCCL's WARN texts as "CCOM WARN"; its bootstrap out of file
  descriptors ("bootstrap.cc:106 CCOM WARN Call to accept failed : Too many open files", "CCOM WARN Net :
  Socket creation failed : Too many open files") is the open-files limit of the workers (RUN174, as NCCL's).
A status is named as "Failure: NRT_TIMEOUT in nrt_execute()" (nrt_infodump), "NRT Error
NRT_EXEC_OOB(1006): Failed to execute model" (the Python NrtError), or by number "nrt_execute status=5".
NRT_EXEC_OOB (an embedding or gather index out of bounds: the program's) and NRT_FAILURE say too little
and are left to the lines around them.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# nrt_status.h: number -> name, for the statuses a row reads.
_STATUS_NAMES = {
    4: "NRT_RESOURCE",
    5: "NRT_TIMEOUT",
    6: "NRT_HW_ERROR",
    9: "NRT_LOAD_NOT_ENOUGH_NC",
    10: "NRT_UNSUPPORTED_NEFF_VERSION",
    1005: "NRT_EXEC_NC_BUSY",
    1200: "NRT_EXEC_HW_ERR_COLLECTIVES",
    1201: "NRT_EXEC_HW_ERR_HBM_UE",
    1202: "NRT_EXEC_HW_ERR_NC_UE",
    1203: "NRT_EXEC_HW_ERR_DMA_ABORT",
    1205: "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE",
    1206: "NRT_NETWORK_PROXY_FAILURE",
}
_NUMBER = {name: n for n, name in _STATUS_NAMES.items()}
_STATUS = lazy_re.compile(
    r"\b(?P<name>NRT_(?:RESOURCE|TIMEOUT|HW_ERROR|LOAD_NOT_ENOUGH_NC|UNSUPPORTED_NEFF_VERSION|EXEC_NC_BUSY|"
    r"EXEC_HW_ERR_(?:COLLECTIVES|HBM_UE|NC_UE|DMA_ABORT|REPAIRABLE_HBM_UE)|NETWORK_PROXY_FAILURE))\b|"
    r"\b(?P<call>nrt_\w+) status=(?P<num>\d{1,4})\b"
)
# What each status means and the code it is.
_STATUS_CODE = {
    "NRT_RESOURCE": (C.CUDA_OOM, "the runtime could not allocate device memory for the request"),
    "NRT_TIMEOUT": (C.NEURON_EXEC_TIMEOUT, "an execution (a collective's wait) timed out"),
    "NRT_HW_ERROR": (C.GPU_INIT_FAILED, "the device reported a hardware failure"),
    "NRT_LOAD_NOT_ENOUGH_NC": (
        C.ACCEL_DEVICE_UNAVAILABLE,
        "not enough free NeuronCores to load the model (others hold them)",
    ),
    "NRT_UNSUPPORTED_NEFF_VERSION": (
        C.NEURON_STACK_MISMATCH,
        "the compiled model (NEFF) is of a version this runtime does not support",
    ),
    "NRT_EXEC_NC_BUSY": (C.ACCEL_DEVICE_UNAVAILABLE, "the NeuronCore is locked by another model or process"),
    "NRT_EXEC_HW_ERR_COLLECTIVES": (
        C.NEURON_EXEC_TIMEOUT,
        "the execution is stuck in a collective (missing notifications from a peer)",
    ),
    "NRT_EXEC_HW_ERR_HBM_UE": (C.GPU_ECC, "the device's HBM had an uncorrectable error"),
    "NRT_EXEC_HW_ERR_NC_UE": (C.GPU_ECC, "a NeuronCore's on-chip memory had a parity error"),
    "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE": (
        C.GPU_ECC,
        "the device's HBM had an uncorrectable (repairable) error",
    ),
    "NRT_EXEC_HW_ERR_DMA_ABORT": (C.GPU_INIT_FAILED, "a DMA engine of the device hit an unrecoverable error"),
    "NRT_NETWORK_PROXY_FAILURE": (C.NCCL_SYSTEM_ERROR, "the EFA network proxy of the collectives failed"),
}
# An allocation call whose NRT_RESOURCE is device memory for sure (vLLM-Neuron's "nrt_tensor_allocate
# status=4"; nrt_load of a model too large for the cores).
_ALLOC_CALL = lazy_re.compile(r"nrt_tensor_allocate|nrt_load\b|[Aa]llocat")
_ND_NC = lazy_re.compile(
    r"\[ND (?P<nd>\d+)\]\[NC (?P<nc>\d+)\]|on Neuron Device (?P<nd2>\d+) NC (?P<nc2>\d+)"
)


def _where(text: str, facts: dict[str, Any]) -> None:
    g = _ND_NC.search(text)
    if g:
        facts["neuron_device"] = int(g.group("nd") or g.group("nd2"))
        facts["neuron_core"] = int(g.group("nc") or g.group("nc2"))


def _status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = m.group("name")
    if name is None:
        name = _STATUS_NAMES.get(int(m.group("num")))
        if name is None:
            return None
    code, what = _STATUS_CODE[name]
    facts: dict[str, Any] = {"runtime": "neuron", "nrt_status": name, "nrt_status_number": _NUMBER[name]}
    if m.group("call"):
        facts["nrt_call"] = m.group("call")
    _where(hit.text, facts)
    tier = None
    if name == "NRT_RESOURCE" and not _ALLOC_CALL.search(hit.text):
        tier = 1  # a resource of another kind is possible: any line that says more wins
    return [
        row.event(
            hit,
            f"the Neuron runtime returned {name} ({_NUMBER[name]}): {what}",
            facts,
            code=code.code,
            tier=tier,
            dedupe=(code.code, "nrt", name),
        )
    ]


_CORES_BUSY = lazy_re.compile(
    r"(?P<lnc>Logical )?Neuron ?Core\(s\) not available - Requested:(?P<req>\S+) Available:(?P<avail>\d+)"
)


def _cores_busy(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "runtime": "neuron",
        "reason": "cores_held",
        "requested": m.group("req"),
        "available": int(m.group("avail")),
    }
    return [
        row.event(
            hit,
            f"the Neuron runtime could not get the NeuronCores it asked for ({m.group('req')}, "
            f"{m.group('avail')} available): another process holds them, or more workers than cores were "
            "started (NEURON_RT_VISIBLE_CORES)",
            facts,
            dedupe=(row.code, "neuron", "cores"),
        )
    ]


_NO_DEVICE = lazy_re.compile(
    r"TDRV:\w+\s+(?:Could not open the nd(?P<nd>\d+)|No neuron device available)|"
    r"NRT:nrt_init\s+Failed to initialize devices, error:(?P<err>\d+)"
)


def _no_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "neuron", "reason": "no_device"}
    if m.group("nd"):
        facts["neuron_device"] = int(m.group("nd"))
    if m.group("err"):
        facts["nrt_init_error"] = int(m.group("err"))
        # the summary of the record above it (a device that could not be opened, a driver to upgrade)
        msg = f"the Neuron runtime could not initialise its devices (error {m.group('err')})"
        return [row.event(hit, msg, facts, tier=1, dedupe=(row.code, "neuron", "init"))]
    return [
        row.event(
            hit,
            "the Neuron runtime found no device it could open (/dev/neuron* absent or not passed into the "
            "container, or the aws-neuronx-dkms driver not loaded)",
            facts,
            dedupe=(row.code, "neuron", "init"),
        )
    ]


_STACK = lazy_re.compile(
    r"Unable to determine Neuron Driver version|"
    r"This runtime requires Neuron Driver version (?P<ver>[\d.]+) or greater|"
    r"Unsupported hardware operator code (?P<op>\d+) found in neff"
)


def _stack(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "neuron"}
    if m.group("op"):
        facts["reason"] = "neff_newer_than_runtime"
        facts["hw_operator_code"] = int(m.group("op"))
        msg = (
            "the compiled model (NEFF) uses an operator this Neuron runtime does not know: the compiler is "
            "newer than aws-neuronx-runtime-lib / aws-neuronx-collectives"
        )
    elif m.group("ver"):
        facts["reason"] = "driver_too_old"
        facts["required_driver"] = m.group("ver")
        msg = f"the Neuron runtime needs driver {m.group('ver')} or newer: upgrade aws-neuronx-dkms"
    else:
        facts["reason"] = "driver_missing"
        msg = (
            "the Neuron runtime could not read the driver's version: aws-neuronx-dkms is not installed "
            "or loaded"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "neuron", facts["reason"]))]


_DEV_MEM = lazy_re.compile(
    r"Failed to allocate (?P<size>[\d.]+ ?[KMGT]?B) \([^)\n]*\) on ND (?P<nd>\d+):NC (?P<nc>\d+)|"
    r"Failed to alloc DEVICE memory:? (?P<bytes>\d+)"
)


def _dev_mem(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "neuron", "format": "neuron", "reported_by": "Neuron runtime"}
    if m.group("bytes"):
        facts["requested_bytes"] = int(m.group("bytes"))
        size = f"{facts['requested_bytes']} bytes"
    else:
        size = m.group("size")
        facts["requested"] = size
        facts["neuron_device"] = int(m.group("nd"))
        facts["neuron_core"] = int(m.group("nc"))
    return [
        row.event(
            hit,
            f"the Neuron device ran out of memory: it could not allocate {size}"
            + (
                f" on ND {facts['neuron_device']}:NC {facts['neuron_core']}" if "neuron_core" in facts else ""
            ),
            facts,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


_EXEC_HUNG = lazy_re.compile(
    r"(?P<nonfatal>\(NON-FATAL, Ignoring\) )?inference timeout \((?P<ms>\d+) ms\) on Neuron Device \d+ "
    r"NC \d+|"
    r"\] execution timeout \((?P<ms2>\d+) ms\) on model|"
    r"\] execution on model \S+,? is stuck after all collectives operation"
)


def _exec_hung(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "neuron"}
    ms = m.group("ms") or m.group("ms2")
    if ms:
        facts["timeout_ms"] = int(ms)
    _where(hit.text, facts)
    where = f" on ND {facts['neuron_device']} NC {facts['neuron_core']}" if "neuron_core" in facts else ""
    if "stuck after all collectives" in m.group(0):
        what = f"an execution{where} is stuck after its collectives completed"
    else:
        what = f"an execution{where} did not complete within {ms} ms"
    return [
        row.event(
            hit,
            f"the Neuron runtime timed out a model execution: {what} (a collective whose peer never arrived, "
            "when several workers run)",
            facts,
            tier=1 if m.group("nonfatal") else None,
            dedupe=(row.code, "neuron", "exec"),
        )
    ]


_HW_CRITICAL = lazy_re.compile(r"CRITICAL HW ERROR: (?P<what>[^\n]{0,120})")


def _hw_critical(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "TDRV" not in hit.text and "Neuron" not in hit.text and "nd" not in hit.text:
        return None
    return [
        row.event(
            hit,
            "the Neuron device reported a critical hardware error and needs a reset (reload the "
            f"neuron driver): {m.group('what').strip()}",
            {"runtime": "neuron", "reason": "device_needs_reset"},
            dedupe=(row.code, "neuron", "hw"),
        )
    ]


_CCOM_FD = lazy_re.compile(r"CCOM WARN (?P<what>[^\n]*?) : Too many open files")


def _ccom_fd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"nccom (Neuron's collective library) ran out of file descriptors: {m.group('what').strip()} "
            "failed with Too many open files: raise the workers' open-files limit (ulimit -n)",
            {"runtime": "neuron", "errno": "EMFILE"},
            dedupe=(row.code, "neuron", "fd"),
        )
    ]


# The Neuron collectives' bootstrap between the workers (ENC: "ERROR   ENC:ncclBootstrapSend   failed
# neuronBootstrapSend request to NCCL", "...Recv"): the socket exchange that sets the communicator up failed;
# nccom's CCOM WARN line before it says why (tier 1: that line wins) (RUN174).
_ENC_BOOTSTRAP = lazy_re.compile(r"failed neuronBootstrap(?P<dir>Send|Recv) request to NCCL")


def _enc_bootstrap(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the Neuron collectives' bootstrap could not {m.group('dir').lower()} to a peer worker (the "
            "socket exchange that sets up the communicator failed)",
            {"runtime": "neuron", "phase": "bootstrap"},
            tier=1,
            dedupe=(row.code, "neuron", "bootstrap"),
        )
    ]


SIGNATURES = (
    Signature(
        "neuron cores not available",
        _CORES_BUSY,
        _cores_busy,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"not available - Requested:",),
        words=("not available - requested:",),
    ),
    Signature(
        "neuron no device",
        _NO_DEVICE,
        _no_device,
        C.ACCEL_DEVICE_UNAVAILABLE.code,
        anchors=(b"Could not open the nd", b"No neuron device available", b"Failed to initialize devices"),
        words=("could not open the nd", "no neuron device available", "failed to initialize devices"),
    ),
    Signature(
        "neuron driver and runtime mismatch",
        _STACK,
        _stack,
        C.NEURON_STACK_MISMATCH.code,
        anchors=(
            b"Unable to determine Neuron Driver version",
            b"This runtime requires Neuron Driver version",
            b"Unsupported hardware operator code",
        ),
        words=("neuron driver version", "unsupported hardware operator code"),
    ),
    Signature(
        "neuron device memory",
        _DEV_MEM,
        _dev_mem,
        C.CUDA_OOM.code,
        anchors=(b"Failed to allocate", b"Failed to alloc DEVICE memory"),
        worth=(rb"Failed to allocate [\d.]+ ?[KMGT]?B \(", rb"Failed to alloc DEVICE memory"),
        words=("failed to allocate", "failed to alloc device memory"),
    ),
    Signature(
        "neuron execution hung",
        _EXEC_HUNG,
        _exec_hung,
        C.NEURON_EXEC_TIMEOUT.code,
        anchors=(b"inference timeout (", b"] execution timeout (", b"is stuck after all collectives"),
        words=("inference timeout (", "execution timeout (", "is stuck after all collectives"),
    ),
    Signature(
        "neuron runtime status",
        _STATUS,
        _status,
        C.NEURON_EXEC_TIMEOUT.code,
        anchors=(b"NRT_", b" status="),
        worth=(
            rb"\bNRT_(?:RESOURCE|TIMEOUT|HW_ERROR|LOAD_NOT_ENOUGH_NC|UNSUPPORTED_NEFF_VERSION|EXEC_NC_BUSY|"
            rb"EXEC_HW_ERR_|NETWORK_PROXY_FAILURE)",
            rb"\bnrt_\w+ status=\d",
        ),
        words=("nrt_",),
    ),
    Signature(
        "neuron critical hw error",
        _HW_CRITICAL,
        _hw_critical,
        C.GPU_INIT_FAILED.code,
        anchors=(b"CRITICAL HW ERROR:",),
        words=("critical hw error:",),
    ),
    Signature(
        "neuron collectives bootstrap failed",
        _ENC_BOOTSTRAP,
        _enc_bootstrap,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"failed neuronBootstrap",),
        words=("failed neuronbootstrap",),
    ),
    Signature(
        "nccom out of file descriptors",
        _CCOM_FD,
        _ccom_fd,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"CCOM WARN",),
        worth=(rb"CCOM WARN [^\n]*Too many open files",),
        words=("ccom warn",),
    ),
)
parse = gated_reader(SIGNATURES)
