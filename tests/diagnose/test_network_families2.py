"""NCCL / gloo network texts that reach a log without NCCL's WARN prefix or torch's wrapper, read at
their sources across versions: NCCL's connect retries at INFO level (include/socket.h 2.4-2.11,
misc/socket.cc 2.12-2.22, the 2.23+ form with the peer and the try count), its shared memory segment
(include/shm.h, misc/shmutils.cc), WARN lines pasted without "host:pid:tid [dev]" (NCCL <= 2.3's
"include/socket.h:344 WARN ..."), socket(2) failures, the proxy's failed Connect (proxy.cc 2.12-2.18),
gloo's enforce on SO_ERROR (tcp/pair.cc), MSCCL++'s IbError and aws-ofi-nccl's standalone tests'
"WARN: Function: ... Line: ...:" records. Decoys: the same retries followed by a communicator that
came up.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import failure_findings as _findings
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "node7: ", "[1,3]<stdout>:"]


# (log, code, facts the finding must carry)
CASES = [
    # NCCL's INFO retries, 2.4-2.22, with and without NCCL's prefix, quoted in prose
    (
        "node1:16:63 [0] NCCL INFO Call to connect returned Connection refused, retrying\n" * 3,
        "RUN174",
        {"socket_error": "Connection refused"},
    ),
    (
        "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n",
        "RUN174",
        {"socket_error": "Connection timed out"},
    ),
    ('"NCCL INFO Call to connect returned Connection refused, retrying "\n', "RUN174", {}),
    # misc/socket.cc 2.23+: the function, the peer and the try count
    (
        "node1:1:2 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<43251> returned No route to host, "
        "retrying (3/34) after sleep for 300 msec\n",
        "RUN174",
        {"peer": "10.0.0.2", "socket_error": "No route to host"},
    ),
    # ... and its WARN when the retries ran out
    (
        "node1:1:2 [0] misc/socket.cc:580 NCCL WARN socketPollConnect: connect to 10.0.0.2<43251> returned "
        "Resource temporarily unavailable, exceeded error retry count after 35 attempts\n",
        "RUN174",
        {"peer": "10.0.0.2"},
    ),
    (
        "node1:1:2 [0] misc/socket.cc:620 NCCL WARN socketPollConnect to 10.0.0.2<43251> failed with error "
        "Interrupted system call\n",
        "RUN174",
        {},
    ),
    # socket(2) refused: NCCL <= 2.3 (no host prefix, as pasted), 2.4-2.11, 2.12+
    (
        "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol\n",
        "RUN174",
        {},
    ),
    (
        "e66a:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported "
        "by protocol\n",
        "RUN174",
        {},
    ),
    (
        "node1:1:2 [0] misc/socket.cc:723 NCCL WARN ncclSocketInit: Socket creation failed : Too many open "
        "files\n",
        "RUN174",
        {},
    ),
    (
        "misc/socket.cc:406 WARN Net : Socket creation failed : Address family not supported by protocol\n",
        "RUN174",
        {},
    ),
    # proxy.cc 2.12-2.18: the WARN, and torch's / vLLM's "Last error:" under ncclInternalError
    (
        "node1:6015:6224 [1] proxy.cc:884 NCCL WARN Proxy Call to rank 1 failed (Connect)\n",
        "RUN174",
        {},
    ),
    (
        "(LLMEngine pid=2347640, ip=10.58.226.15) ncclInternalError: Internal check failed.\n"
        "(LLMEngine pid=2347640, ip=10.58.226.15) Last error:\n"
        "(LLMEngine pid=2347640, ip=10.58.226.15) Proxy Call to rank 7 failed (Connect)\n",
        "RUN174",
        {},
    ),
    (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal "
        "error, NCCL version 2.14.3\nncclInternalError: Internal check failed.\nLast error:\n"
        "Proxy Call to rank 1 failed (Connect)\n",
        "RUN174",
        {"nccl_version": "2.14.3"},
    ),
    # the shared memory segment, quoted without its WARN (include/shm.h <= 2.11, misc/shmutils.cc 2.12+)
    (
        "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n",
        "RUN171",
        {"likely_cause": "shared_memory", "bytes": 7340384},
    ),
    (
        "Error while attaching to shared memory segment nccl-shm-recv-1462445a6f01cbfc-1-2-3 "
        "(size 9637888)\n",
        "RUN171",
        {"likely_cause": "shared_memory"},
    ),
    # gloo's enforce on the connect's SO_ERROR (tcp/pair.cc), under caffe2's / torch's terminate
    (
        "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
        "  what():  [enforce fail at /src/gloo/gloo/transport/tcp/pair.cc:498] optval == 0. 111 vs 0. "
        "SO_ERROR: Connection refused\n",
        "RUN174",
        {"backend": "gloo", "socket_error": "Connection refused"},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] optval == 0. "
        "113 vs 0. SO_ERROR: No route to host\n",
        "RUN174",
        {"backend": "gloo"},
    ),
    # MSCCL++ (errors.hpp): its IB transport
    (
        "terminate called after throwing an instance of 'mscclpp::IbError'\n"
        "  what():  a work item failed: status 12 (Ib failure: Cannot allocate memory)\n",
        "RUN173",
        {"library": "mscclpp"},
    ),
    # aws-ofi-nccl's standalone tests (tests/test-common.h, functional_test.cpp)
    (
        "INFO: Function: ofi_init Line: 686: NET/OFI Selected Provider is efa\n"
        "WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: "
        "Invalid argument\n",
        "RUN173",
        {"function": "create_nccl_ofi_component"},
    ),
    # libfabric's core: the provider the OFI plugin wants found no device
    (
        "ip-10-0-0-1:79:79 [0] NCCL INFO NCCL version 2.21.5+cuda12.8\n"
        "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: "
        "provider efa output empty list\n",
        "RUN173",
        {"provider": "efa"},
    ),
    # bootstrap.cc's root: ranks disagree on the communicator size (2.3-2.21, 2.22+)
    (
        "node1:1:2 [0] bootstrap.cc:205 NCCL WARN Bootstrap Root : mismatch in rank count from procs "
        "8 : 16\n",
        "RUN224",
        {"nranks": 8, "peer_nranks": 16},
    ),
    (
        "node1:1:2 [0] bootstrap.cc:327 NCCL WARN Bootstrap Root : mismatch in info from procs, "
        "nranks 8 vs 16, nroots 1 vs 1, iroot 0 vs 0\n",
        "RUN224",
        {"nranks": 8, "peer_nranks": 16},
    ),
    # a size mismatch of the socket transport wrapped before its numbers stays a mismatch
    (
        "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :\n"
        "receiving 1048576 bytes instead of 65536\n",
        "RUN201",
        {"bytes": 1048576, "expected_bytes": 65536},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_network_texts_without_wrappers(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    lines = "".join(prefix + ln + "\n" for ln in log.splitlines())
    f = _root(lines)
    assert f is not None and f.code == code, (lines, f)
    for k, v in facts.items():
        assert f.facts.get(k) == v, (k, f.facts)


DECOYS = [
    # the retries, then the communicator that came up (2.4-2.22 and 2.23+ forms)
    "node1:1:2 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
    "node1:1:2 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
    "node1:1:2 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<43251> returned Connection refused, "
    "retrying (1/34) after sleep for 100 msec\n"
    "node1:1:2 [0] NCCL INFO Connected all trees\n",
    # checks.h's EINTR retry of a system call: no connect refused
    "node1:1:2 [0] NCCL INFO Call to accept returned Resource temporarily unavailable, retrying\n",
    # libfabric found no EFA device, NCCL went on without it
    "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: "
    "provider efa output empty list\n"
    "node1:1:2 [0] NCCL INFO Using network Socket\n"
    "node1:1:2 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
    # aws-ofi-nccl's tests' INFO records
    "INFO: Function: main Line: 57: NET/OFI Server: Listening on dev 0\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_retries_that_worked_are_silent(log: str) -> None:
    assert _findings(log) == [], log


def test_the_proxy_names_its_peer_not_the_process() -> None:
    # proxy.cc 2.12-2.18: "to rank 1" is the peer the proxy could not reach; the prefix names the process
    f = _root("node1:195626:198757 [0] proxy.cc:808 NCCL WARN Proxy Call to rank 1 failed (Connect)\n")
    assert f is not None and f.code == "RUN174" and f.facts.get("rank") != 1, f
    assert f.facts.get("peer_rank") == 1, f.facts
    assert f.facts.get("host") == "node1" and f.facts.get("pid") == 195626, f.facts


@pytest.mark.parametrize(
    "retry",
    [
        "node1:1:2 [1] NCCL INFO Call to connect returned Connection refused, retrying",
        "node1:1:2 [1] NCCL INFO socketPollConnect: connect to 10.0.0.2<43251> returned Connection refused, "
        "retrying (3/34) after sleep for 300 msec",
    ],
)
def test_an_internal_error_over_refused_connects_is_the_network(retry: str) -> None:
    # torch's "internal error" with no Last error, the socket layer's retries around it (either order)
    err = (
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal "
        "error, NCCL version 2.14.3"
    )
    for log in (f"{err}\n{retry}\n{retry}\n", f"{retry}\n{retry}\n{err}\n"):
        f = _root(log)
        assert f is not None and f.category == "nccl_network", (log, f)
