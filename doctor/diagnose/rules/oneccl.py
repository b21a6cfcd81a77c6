"""Intel oneCCL (torch-ccl / oneccl_bindings_for_pytorch, the `ccl` and `xccl` backends on Intel XPU and CPU,
DeepSpeed and vLLM on XPU): its transport layer (ATL over libfabric/OFI) found no fabric provider to run on
(RUN294), or it could not start its worker threads (RUN330, below).

Formats (oneCCL src/atl/ofi/atl_ofi_helper.cpp and atl_ofi.cpp, 2021.x): one `|CCL_ERROR|` record per
function behind oneCCL's own "2024:08:21-10:41:21:( 8320)" stamp: "atl_ofi_get_prov_list: fi_getinfo error:
ret -61, providers 0", "can't create providers for name shm", "atl_ofi_open_nw_provs: can not open network
providers", "init: can't find suitable provider", then "init_transport: condition transport->init(...) ==
ATL_STATUS_SUCCESS failed" / "failed to initialize ATL". libfabric returned no provider for the hints
(FI_PROVIDER names one that is not installed, FI_PROVIDER_PATH points nowhere, or the fabric's provider
library is missing): the same class as NCCL's network plugin without a provider (RUN294). A provider that was
found but whose device refused it is no missing provider: ATL_OFI_CALL's "atl_ofi_prov_init:
fi_scalable_ep(prov->domain, info, &prov->sep, nullptr)" / " fails with ret: -12, strerror: Cannot allocate
memory" (fi_domain, fi_endpoint, fi_enable, fi_cq_open, fi_av_open, fi_mr_reg ... likewise), or the provider's
verbs layer beside it ("Failed to modify UD QP to INIT on mlx5_2: Operation not permitted", other_stacks.py):
the network device under the transport failed (RUN365, nccl_network). Healthy runs print
`|CCL_WARN|` lines ("did not find MPI-launcher specific variables, switch to ATL/OFI", "could not get
local_idx/count from environment variables"), which are notes, never failures.

oneCCL's transport failing (RUN365): an ATL call's status, "atl_status: FAILURE" (ATL_CHECK_STATUS and the
CCL_THROW_IF_NOT of src/atl/, 2021.x, also in torch-ccl's RuntimeError and in titles), and the check of the
Xe Link fabric ports at set-up (src/common/topology, 2021.10+): "|CCL_WARN| host: h, rank: 0,
local_port_id: { 65559 0 1 }, port issue: { status: failed, details: training timeout }" (Level Zero's
zes_fabric_port_state_t: failed with "failed", "training timeout" or "flapping"). A failed port is a warning
at set-up (tier 1: any error after it says more); "degraded" (link errors, speed) is a slower link, and no
failure.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# (the level's opening "|" is often lost where a paste or a quote starts at it: "CCL_ERROR| atl_ofi_...")
_PROVIDER = lazy_re.compile(
    r"\bCCL_(?:ERROR|FATAL)\|.*?(?P<what>can't find suitable provider|can not open network providers|"
    r"fi_getinfo error: ret (?P<ret>-?\d+)|can't create providers for name (?P<prov>\w+))"
)
_NAMED = lazy_re.compile(r"can't create providers for name (\w+)")
# ATL_OFI_CALL's report of a libfabric call that failed on a provider already found (the call's text, then
# " fails with ret: N, strerror: S", often on the next line); fi_getinfo's own failure is the missing
# provider.
_OFI_CALL = lazy_re.compile(r"\b(?P<call>fi_(?!getinfo)\w+)\(")
_OFI_RET = lazy_re.compile(r"fails with ret: (?P<ret>-?\d+)(?:, strerror: (?P<err>.+?))?\s*$")
_DEVICE_REFUSED = lazy_re.compile(
    r"to modify (?:UD |RC |UC )?QP to|to create (?:UD |RC )?QP on|ibv_\w+ failed"
)


def _device_failure(hit: Hit) -> Optional[dict[str, Any]]:
    """What the network device refused near a provider error: a libfabric call on a found provider, or its
    verbs layer's queue pair."""
    lines = [*hit.before(6, same_rank=False), hit.line, *hit.after(12, same_rank=False)]
    for i, ln in enumerate(lines):
        r = _OFI_RET.search(ln.text)
        if r:
            call = next(
                (c.group("call") for c in map(_OFI_CALL.search, (ln.text, lines[i - 1].text)) if c), None
            )
            if call:
                f: dict[str, Any] = {"ofi_call": call, "fi_errno": int(r.group("ret"))}
                if r.group("err"):
                    f["strerror"] = r.group("err").strip()
                return f
    for ln in lines:
        if _DEVICE_REFUSED.search(ln.text):
            return {"device_error": ln.text.strip()[-160:]}
    return None


def _ofi_call(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    f = _device_failure(hit)
    if f is None or "ofi_call" not in f:
        return None
    return _device_event(hit, f)


def _device_event(hit: Hit, f: dict[str, Any]) -> list[Event]:
    what = f"{f['ofi_call']} failed ({f.get('strerror') or f['fi_errno']})" if "ofi_call" in f else "its QP"
    return [
        event(
            hit,
            C.ONECCL_TRANSPORT_FAILURE.code,
            f"oneCCL's libfabric provider was found but the network device refused it: {what}; the NIC, its "
            "permissions in the container, or the locked-memory limit (ulimit -l)",
            {"library": "oneCCL", "problem": "ofi_device_refused", **f},
            dedupe=(C.ONECCL_TRANSPORT_FAILURE.code, "ofi_device"),
        )
    ]


def _provider(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not m.group("prov") and not m.group("ret"):  # "can not open" / "can't find": which, the lines say
        device = _device_failure(hit)
        if device is not None:
            return _device_event(hit, device)
    facts: dict[str, Any] = {"problem": "ofi_provider_missing", "library": "oneCCL"}
    for ln in [*hit.before(4, same_rank=False), hit.line, *hit.after(6, same_rank=False)]:
        p = _NAMED.search(ln.text)
        if p:
            facts["provider"] = p.group(1)
            break
    if m.group("ret"):
        facts["fi_errno"] = int(m.group("ret"))
    named = f" ({facts['provider']})" if "provider" in facts else ""
    return [
        row.event(
            hit,
            f"oneCCL's transport found no libfabric provider{named}: FI_PROVIDER names one that is not "
            "installed, FI_PROVIDER_PATH points nowhere, or the fabric's provider library is missing",
            facts,
            dedupe=(row.code, "oneccl_provider"),
        )
    ]


# oneCCL starting its worker (progress) threads at communicator set-up (src/common/utils/base_thread.cpp and
# src/exec/exec.cpp, 2021.x): "|CCL_ERROR| base_thread.cpp:36 start: error while creating worker thread #0
# pthread_create returns 22", then "start_workers: condition workers.back()->start(cpu_affinity,
# mem_affinity) == ccl::status::success failed" and the exception torch-ccl raises, "RuntimeError: oneCCL:
# exec.cpp:134 start_workers: EXCEPTION: failed to start worker # 0" (also "listener" threads). 22 (EINVAL):
# the pinned CPU (CCL_WORKER_AFFINITY, or oneCCL's default of the last cores) is outside the process's
# cpuset; 11 (EAGAIN): a thread or pids limit.
_WORKER = lazy_re.compile(
    r"error while creating (?P<kind>\w+) thread #(?P<idx>\d+) pthread_create returns (?P<err>-?\d+)|"
    r"failed to start (?P<kind2>worker|listener) # ?(?P<idx2>\d+)"
)
_ERRNO = {22: "EINVAL", 11: "EAGAIN", 1: "EPERM", 12: "ENOMEM"}


def _worker(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "CCL" not in hit.text and "ccl" not in hit.text and "start_workers" not in hit.text:
        near = [*hit.before(6, same_rank=False), *hit.after(3, same_rank=False)]
        if not any("CCL" in ln.text for ln in near):
            return None
    facts: dict[str, Any] = {"library": "oneCCL", "thread": m.group("kind") or m.group("kind2")}
    facts["thread_index"] = int(m.group("idx") or m.group("idx2"))
    err = m.group("err") or next(
        (w.group("err") for w in (_WORKER.search(ln.text) for ln in hit.before(6, same_rank=False)) if w),
        None,
    )
    if err is not None:
        facts["pthread_errno"] = int(err)
    why = {
        22: "the CPU it pins the thread to (CCL_WORKER_AFFINITY, or the default last cores) is not in this "
        "process's cpuset",
        11: "the thread or pids limit of the process or its container is reached",
    }.get(int(err) if err is not None else -1, "its CPU affinity or a thread limit refused it")
    return [
        row.event(
            hit,
            f"oneCCL could not start its {facts['thread']} thread #{facts['thread_index']}"
            + (f" (pthread_create {_ERRNO.get(int(err), err)})" if err is not None else "")
            + f": {why}",
            facts,
            dedupe=(row.code,),
        )
    ]


_ATL = lazy_re.compile(r"\batl_status: (?P<st>FAILURE|UNSUPPORTED)\b")


def _atl(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"oneCCL's transport layer (ATL) failed (atl_status: {m.group('st')}): the libfabric/MPI "
            "transport between the ranks broke or was never usable (provider, interface, or a failed link)",
            {"library": "oneCCL", "atl_status": m.group("st")},
            dedupe=(row.code, "atl"),
        )
    ]


_PORT = lazy_re.compile(
    r"port issue: \{ ?status: (?P<status>failed|degraded|disabled)(?:, details: (?P<details>[^}]*?))? ?\}"
)
_PORT_ID = lazy_re.compile(r"local_port_id: \{ ?(?P<id>[\d ]+?) ?\}")


def _port(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("status") != "failed":
        return []  # a degraded link is slower, not broken; a disabled one is not used
    details = (m.group("details") or "").strip()
    facts: dict[str, Any] = {"library": "oneCCL", "port_status": "failed"}
    port = _PORT_ID.search(hit.text)
    if port:
        facts["port_id"] = port.group("id")
    if details:
        facts["port_details"] = details
    return [
        row.event(
            hit,
            "oneCCL reports Xe Link fabric ports failed"
            + (f" ({details})" if details else "")
            + ": the GPU-to-GPU links its collectives use are down; collectives over them fail or hang",
            facts,
            dedupe=(row.code, "ports"),
        )
    ]


# The exception oneCCL raises when its transport did not start (atl_ofi_comm.cpp / atl_mpi_comm.cpp
# init_transport, 2021.x: CCL_THROW_IF_NOT(transport->init(...) == ATL_STATUS_SUCCESS, "failed to initialize
# ATL"; torch-ccl's "RuntimeError: oneCCL: ... EXCEPTION: failed to initialize ATL"): libfabric (or MPI)
# gave it no transport on this host, whose own record above says which (tier 1: that record says more).
_ATL_INIT = lazy_re.compile(r"(?:failed to|can't|cannot|could not) initialize ATL\b")


def _atl_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "oneCCL's transport layer (ATL) did not start: libfabric offered no provider for its hints "
            "(FI_PROVIDER naming one that is not installed, FI_PROVIDER_PATH unset or wrong in a container) "
            "or the MPI transport it was told to use is not there",
            {"problem": "atl_init_failed", "library": "oneCCL"},
            dedupe=(row.code, "oneccl_provider"),
        )
    ]


# oneCCL's own key-value store (the rendezvous of torch-ccl / the `ccl` backend without an MPI launcher;
# src/atl/util/pm/pmi_resizable_rt/pmi_resizable/kvs/internal_kvs.cpp, 2021.x-2021.14): a rank that could
# not connect to the main server within CCL_KVS_CONNECTION_TIMEOUT (120 s), "|CCL_ERROR| internal_kvs.cpp:606
# kvs_init: connection time (121) >= limit (120)" (RUN222: the rank-0 address of CCL_KVS_IP_PORT /
# MASTER_ADDR is not reachable, or rank 0 never started its server); its address settings
# ("init_main_server_by_env: specify CCL_KVS_IP_PORT", "set CCL_KVS_IP_PORT in format <ip>_<port>") (RUN222);
# CCL_KVS_IFACE naming no interface of the host ("fill_local_host_ip: can't find interface eth1 to get host
# IP", as NCCL's "no socket interface found": RUN174).
_KVS = lazy_re.compile(
    r"connection time \((?P<t>\d+)\) >= limit \((?P<limit>\d+)\)|"
    r"(?:specify|set) (?P<var>CCL_KVS_IP_PORT)\b|"
    r"can't find interface (?P<iface>\S*) ?to get host IP"
)


def _kvs(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "CCL_ERROR" not in hit.text and "oneCCL" not in hit.text and "kvs" not in hit.text:
        return None
    facts: dict[str, Any] = {"library": "oneCCL", "store": "oneCCL KVS"}
    if m.group("iface") is not None:
        facts["interface"] = m.group("iface")
        return [
            row.event(
                hit,
                f"oneCCL's key-value store found no interface {m.group('iface') or '(unnamed)'} on this host "
                "to take its address from (CCL_KVS_IFACE names an interface the host does not have)",
                facts,
                code=C.NCCL_SOCKET_ERROR.code,
                dedupe=(C.NCCL_SOCKET_ERROR.code, "oneccl_kvs_iface"),
            )
        ]
    if m.group("var"):
        facts["setting"] = m.group("var")
        msg = "oneCCL's key-value store has no usable address of rank 0: set CCL_KVS_IP_PORT as <ip>_<port>"
    else:
        facts["waited_s"] = int(m.group("t"))
        facts["timeout_s"] = int(m.group("limit"))
        msg = (
            f"a rank could not connect to oneCCL's key-value store of rank 0 within {m.group('limit')} s "
            "(CCL_KVS_CONNECTION_TIMEOUT): rank 0's address or port is unreachable, or rank 0 never started"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "oneccl_kvs"))]


# Level Zero refusing the driver itself (ze_api.h ze_result_t; oneCCL's ze_call.cpp: "ze error at zeInit,
# code: ZE_RESULT_ERROR_UNINITIALIZED", torch-ccl's "RuntimeError: oneCCL: ze_call.cpp:43 do_call:
# EXCEPTION: ..."; the SYCL and IPEX wrappers print the same names): no Level Zero driver found
# (UNINITIALIZED: the compute runtime intel-level-zero-gpu absent, or /dev/dri/renderD* not reachable),
# a loader without its dependencies or of another version, no permission on the render node, a kernel
# module the driver could not build (RUN351). OUT_OF_DEVICE_MEMORY and DEVICE_LOST are other rows'.
_ZE_DRIVER = lazy_re.compile(
    r"\bZE_RESULT_ERROR_(?P<name>UNINITIALIZED|DEPENDENCY_UNAVAILABLE|UNSUPPORTED_VERSION|"
    r"INSUFFICIENT_PERMISSIONS|NOT_AVAILABLE|MODULE_BUILD_FAILURE)\b"
)
_ZE_CALL = lazy_re.compile(r"error at (\w+)")


def _ze_driver(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "level_zero", "ze_result": f"ZE_RESULT_ERROR_{m.group('name')}"}
    call = _ZE_CALL.search(hit.text)
    if call:
        facts["ze_call"] = call.group(1)
    return [
        row.event(
            hit,
            f"Level Zero refused the GPU driver (ZE_RESULT_ERROR_{m.group('name')}"
            + (f" at {facts['ze_call']}" if "ze_call" in facts else "")
            + "): the Intel GPU compute runtime (intel-level-zero-gpu), its loader or the render node's "
            "permissions are not usable here",
            facts,
            dedupe=(row.code, "ze_driver"),
        )
    ]


# SYCL's device selector finding no GPU (DPC++ sycl/source/device_selector.cpp, 2021-2025): "No device of
# requested type available. Please check https://...dpcpp-system-requirements.html -1
# (PI_ERROR_DEVICE_NOT_FOUND)" (later "No device of requested type 'info::device_type::gpu' available."):
# the process sees no Intel GPU (driver, container's /dev/dri, ONEAPI_DEVICE_SELECTOR) (RUN262).
_SYCL_NO_DEVICE = lazy_re.compile(r"No device of requested type(?: '(?P<type>[\w:]+)')? available")


def _sycl_no_device(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"runtime": "sycl", "reason": "no_device"}
    if m.group("type"):
        facts["device_type"] = m.group("type")
    return [
        row.event(
            hit,
            "SYCL found no device of the requested type: no Intel GPU is visible to this process (the GPU "
            "driver and compute runtime, the container's /dev/dri, or ONEAPI_DEVICE_SELECTOR)",
            facts,
            dedupe=(row.code, "sycl_no_device"),
        )
    ]


SIGNATURES = (
    Signature(
        "oneccl kvs connect",
        _KVS,
        _kvs,
        C.STORE_UNREACHABLE.code,
        anchors=(b"connection time (", b"CCL_KVS_IP_PORT", b"to get host IP"),
        worth=(
            rb"connection time \(\d+\) >= limit",
            rb"(?:specify|set) CCL_KVS_IP_PORT",
            rb"can't find interface \S* ?to get host IP",
        ),
        words=("connection time (", "ccl_kvs_ip_port", "to get host ip"),
    ),
    Signature(
        "level zero driver refused",
        _ZE_DRIVER,
        _ze_driver,
        C.SYCL_RUNTIME_FAILURE.code,
        anchors=(b"ZE_RESULT_ERROR_",),
        worth=(
            rb"ZE_RESULT_ERROR_(?:UNINITIALIZED|DEPENDENCY_UNAVAILABLE|UNSUPPORTED_VERSION|"
            rb"INSUFFICIENT_PERMISSIONS|NOT_AVAILABLE|MODULE_BUILD_FAILURE)",
        ),
        words=("ze_result_error_",),
    ),
    Signature(
        "sycl no device of requested type",
        _SYCL_NO_DEVICE,
        _sycl_no_device,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"No device of requested type",),
        words=("no device of requested type",),
    ),
    Signature(
        "oneccl worker thread start failed",
        _WORKER,
        _worker,
        C.ONECCL_WORKER_START_FAILED.code,
        anchors=(b"pthread_create returns", b"failed to start "),
        worth=(rb"pthread_create returns", rb"failed to start (?:worker|listener)"),
        words=("pthread_create returns", "failed to start worker", "failed to start listener"),
    ),
    Signature(
        "oneccl atl status failure",
        _ATL,
        _atl,
        C.ONECCL_TRANSPORT_FAILURE.code,
        anchors=(b"atl_status: ",),
        words=("atl_status: ",),
        examples=("RuntimeError: oneCCL: atl_ofi_comm.cpp:280 init_transport: atl_status: FAILURE",),
    ),
    Signature(
        "oneccl fabric port failed",
        _PORT,
        _port,
        C.ONECCL_TRANSPORT_FAILURE.code,
        tier=1,
        anchors=(b"port issue: ",),
        words=("port issue: ",),
        examples=(
            "|CCL_WARN| host: h, rank: 0, local_port_id: { 65559 0 1 }, port issue: { status: failed, "
            "details: training timeout }",
        ),
    ),
    Signature(
        "oneccl ofi call failed on a found provider",
        _OFI_RET,
        _ofi_call,
        C.ONECCL_TRANSPORT_FAILURE.code,
        anchors=(b"fails with ret: ",),
        words=("fails with ret: ",),
    ),
    Signature(
        "oneccl ofi provider missing",
        _PROVIDER,
        _provider,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"CCL_ERROR|", b"CCL_FATAL|"),
        worth=(rb"CCL_(?:ERROR|FATAL)\|",),
        words=("ccl_error|", "ccl_fatal|"),
    ),
    Signature(
        "oneccl atl did not start",
        _ATL_INIT,
        _atl_init,
        C.NCCL_NET_PROVIDER_MISSING.code,
        tier=1,
        anchors=(b"initialize ATL",),
        words=("initialize atl",),
        examples=(
            "RuntimeError: oneCCL: atl_ofi_comm.cpp:232 init_transport: EXCEPTION: failed to initialize ATL",
            "oneCCL: atl_mpi_comm.cpp:120 init_transport: EXCEPTION: failed to initialize ATL",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
