"""Communication-stack families read at their source (doctor/diagnose/rules/comm_texts.py and the rows beside
it): /dev/shm too small for UCX (uct/sm/mm/base/mm_iface.c, mm/posix/mm_posix.c, UCX 1.x), Open MPI
(help-opal-shmem-mmap.txt, 1.6-5.x) and NCCL (a SIGBUS in misc/shmutils.cc ncclShmOpen 2.12+ / include/shm.h
shmOpen 2.4-2.11) (RUN360); the GPUDirect-TCPX plugin's control timeout (net_tcpx.cc tcpxCommProgress,
RUN361); NVSHMEM's bootstrap (src/host/init, nvshmem_api.h / nvshmemx_api.h NZ_EXIT records, 2.x-3.x,
RUN362); XLA's "Failed to get NCCL comm" (xla/service/gpu/runtime/collectives.cc, jaxlib 0.4.x, RUN363);
TensorFlow's TPU master (tensorflow/python/tpu/tpu_system_metadata.py, RUN222); client-go's reflector
(k8s.io/client-go/tools/cache/reflector.go, RUN304); gloo's own socket bind (tcp/pair.cc GLOO_ERROR_MSG,
tcp/socket.cc GLOO_ENFORCE_NE); torch's NCCL error with an elided path (ProcessGroupNCCL.cpp); TCPStore's
"waiting for clients" cut before its count (TCPStore.cpp); socket.cpp's IPv6 lookup folded by Monarch's log
aggregator ("[24 similar log lines] ", hyperactor_mesh logging.rs). Healthy lines of the same tools stay
silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

PREFIXES = ["", "[rank1]: ", "[1,0]<stderr>:", "2024-01-01 12:00:00,123 - ERROR - ", "> "]


def _prefixed(prefix: str, text: str) -> str:
    return "".join(prefix + line + "\n" for line in text.splitlines())


_UCX_HEAD = "[1733390000.123456] [allreduce-0:41:0]        mm_iface.c:815  UCX  ERROR "
SHM = [
    # UCX mm_iface.c: the receive FIFO of the mm transport (the case: a k8s Job without a /dev/shm volume)
    "mm_iface failed to allocate receive FIFO\n...\n[ucp_address_unpack] Caught signal 11 (Segmentation fault)\n",
    _UCX_HEAD + "mm_iface failed to allocate receive FIFO\n",
    # UCX mm_posix.c: the ENOSPC of its write into /dev/shm
    "[1733390000.123456] [node1:4242:0]        mm_posix.c:195  UCX  ERROR Not enough memory to write total of "
    "4292720 bytes. Please check that /dev/shm or the directory you specified has more available memory.\n"
    "Failed to create UCP worker\n",
    # Open MPI's help text, wrapped as it prints it
    "--------------------------------------------------------------------------\n"
    "It appears as if there is not enough space for /dev/shm/vader_segment.node1.0 (the shared-memory backing\n"
    "file). It is likely that your MPI job will now either abort or experience\nperformance degradation.\n\n"
    "  Local host:  node1\n  Space Requested: 4194312 B\n  Space Available: 1048576 B\n",
    # mm_iface.c's first receive descriptor after the pool's allocation failed (UCX 1.1x)
    "[1776787275.688714] [c0f19bdfa686:677454:0]           mpool.c:269  UCX  ERROR Failed to allocate memory pool "
    "(name=mm_recv_desc) chunk: Out of memory\n"
    "[1776787275.688718] [c0f19bdfa686:677454:0]        mm_iface.c:857  UCX  ERROR failed to get the first receive "
    "descriptor\n",
    # uct_mem.c's allocation through a shared-memory md, quoted alone
    "[1475682365.956684] [pod9:11912:0]        uct_mem.c:89   UCX  ERROR failed to allocate 4208440835 bytes "
    "using md posix: Out of memory\n",
    # SysV segments (mm_sysv.c through sys.c)
    "[1693920302.521306]          sys.c:915  UCX  ERROR   shmget(size=134221824 flags=0x7b0) for mm_recv_desc "
    "failed: No space left on device, please check shared memory limits by 'ipcs -l'\n",
    # NCCL's segment open under gdb (JAX-Toolbox, demangled frame without a blank before its arguments)
    'Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.\n'
    "[Switching to Thread 0x7f45d7dff640 (LWP 3925)]\n"
    "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from "
    "/usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n",
    # NCCL 2.4-2.11's shmOpen in a C frame with its arguments
    'Thread 12 "python" received signal SIGBUS, Bus error.\n'
    '0x00007fffd1a2c3b0 in shmOpen (shmname=0x7fff "/dev/shm/nccl-abc", shmsize=9637888, shmPtr=0x7f, '
    "devShmPtr=0x7f, create=1) at include/shm.h:52\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", SHM)
def test_shared_memory_that_does_not_fit_dev_shm(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN360", {"likely_cause": "shared_memory"})


def test_a_sigbus_elsewhere_in_nccl_stays_the_crash() -> None:
    log = (
        'Thread 5 "python" received signal SIGBUS, Bus error.\n'
        "0x00007fffd1a2c3b0 in ncclProxyProgress (proxyState_=0x7f) at proxy.cc:880\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN131", root


TCPX = [
    "[0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0xadca8062b70:0xadca805d0f0, nic 0, enp12s0, "
    "172.16.0.11<39187><-172.16.0.95<46723> rx rx ctrl timeout cnt 7331502, nanos 10000000585\n",
    "[ncclNet:2] tcpxResult_t tcpxCommProgress(tcpxComm*):1029 0x55d778456220:0x55d7784531a0, nic 3, eth4, "
    "10.64.51.39<54701><-10.65.112.34<42789> rx rx ctrl timeout cnt 27848, nanos 500001359\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", TCPX)
def test_gpudirect_tcpx_control_timeout(prefix: str, log: str) -> None:
    root = root_finding(_prefixed(prefix, log))
    assert root is not None and root.code == "RUN361", root
    assert root.facts["timeouts"] > 0 and root.facts["interface"] in ("enp12s0", "eth4")


NVSHMEM = [
    "/sgl-workspace/nvshmem/install/include/host/nvshmemx_api.h:63: non-zero status: 7: Connection timed out, "
    "exiting...\naborting due to error in nvshmemi_init_thread\n",
    # the FAQ's MPI bootstrap module that does not load
    "src/bootstrap/bootstrap.cpp:26: non-zero status: -1 bootstrap_loader_init returned error\n"
    "src/init/init.cpp:101: non-zero status: 7 bootstrap_init failed\n"
    "src/init/init.cpp:767: non-zero status: 7 nvshmem_bootstrap failed\n"
    "src/init/init.cpp:792: non-zero status: 7: Success, exiting... aborting due to error in nvshmemi_init_thread\n",
    "/opt/nvshmem/src/host/init/init.cu:1003: non-zero status: 7 bootstrap_init failed\n",
    "/usr/local/include/nvshmem_api.h:71: non-zero status: 111: Connection refused, exiting...\n",
    # the UID bootstrap's own records (file:function:line), NVSHMEM 3.x
    "/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:"
    "bootstrap_net_init:160: No socket interface found\n\n"
    "/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/host/bootstrap/bootstrap.cpp:135: non-zero status: 7 "
    "bootstrap_loader_preinit returned error for mode UID\n",
    "/sgl-workspace/nvshmem/src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_net_recv:99: Message truncated : "
    "received 58 bytes instead of 8\n",
    "/sgl-workspace/nvshmem/src/host/init/init.cu:nvshmemi_check_state_and_init:1080: nvshmem initialization "
    "failed, exiting\n",
    "aborting due to error in nvshmemi_init_thread\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", NVSHMEM)
def test_nvshmem_bootstrap(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN362")


XLA_COMM = [
    "NCCL version 2.13.4+cuda11.7\n"
    "2022-12-09 20:05:25.251532: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/"
    "pjrt_stream_executor_client.cc:2163] Execution of replica 0 failed: INTERNAL: Failed to execute XLA Runtime "
    "executable: run time error: custom call 'xla.gpu.all_gather' failed: Failed to get NCCL comm.\n"
    "2022-12-09 20:05:35.253700: F external/org_tensorflow/tensorflow/compiler/xla/pjrt/"
    "pjrt_stream_executor_client.cc:2308] Replicated computation launch failed, but not all replicas terminated. "
    "Aborting process to work around deadlock. Failure message (there may have been multiple failures, see the "
    "error log for all failures):\n\nFailed to execute XLA Runtime executable: run time error: custom call "
    "'xla.gpu.all_gather' failed: Failed to get NCCL comm.\n",
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: "
    "custom call 'xla.gpu.all_reduce' failed: Failed to get NCCL comm.\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", XLA_COMM)
def test_xla_that_could_not_get_its_nccl_comm(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN363", {"framework": "xla"})


_TF = (
    "Failed to connect to the Tensorflow master. The TPU worker may not be ready (still scheduling) or the "
    "Tensorflow master address is incorrect: got (grpc://10.240.1.2:8470)."
)
TF_MASTER = [
    f"WARNING:tensorflow:{_TF}\nW0108 00:47:24.462080 4582849984 tpu_system_metadata.py:97] {_TF}\n"
    "WARNING:tensorflow:Retrying (5/288).\n",
    f"ValueError: {_TF}\n",
]
# TF 1.x before 1.13: the sentence ends at "incorrect:" without the address.
_TF_OLD = (
    "WARNING:tensorflow:Failed to connect to the Tensorflow master. The TPU worker may not be ready (still "
    "scheduling) or the Tensorflow master address is incorrect:\n"
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_tensorflow_tpu_master_unreachable_without_its_address(prefix: str) -> None:
    check_root(_prefixed(prefix, _TF_OLD), "RUN222", {"problem": "tpu_master_unreachable"})


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", TF_MASTER)
def test_tensorflow_tpu_master_unreachable(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN222", {"master_addr": "grpc://10.240.1.2:8470"})


def test_a_tpu_master_that_answered_after_a_retry_is_silent() -> None:
    log = (
        f"WARNING:tensorflow:{_TF}\nWARNING:tensorflow:Retrying (1/288).\n"
        "INFO:tensorflow:Querying Tensorflow master (grpc://10.240.1.2:8470) for TPU system metadata.\n"
        "INFO:tensorflow:Found TPU system:\nINFO:tensorflow:*** Num TPU Cores: 8\n"
    )
    assert failure_findings(log) == []


K8S = [
    "Failed to list *v1.Pod: Get https://10.43.0.1:443/api/v1/namespaces/adrian/pods?limit=500&resourceVersion=0: "
    "dial tcp 10.43.0.1:443: connect: connection refused\n",
    "E0512 10:11:12.131415       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch "
    '*v1.Pod: failed to list *v1.Pod: Get "https://10.96.0.1:443/api/v1/namespaces/default/pods?limit=500": dial '
    "tcp 10.96.0.1:443: i/o timeout\n",
    "E0512 10:11:12.131415       1 reflector.go:138] pkg/mod/k8s.io/client-go/tools/cache/reflector.go:167: "
    'Failed to watch *v1.Pod: failed to list *v1.Pod: pods is forbidden: User "system:serviceaccount:default:'
    'pi-launcher" cannot list resource "pods" in API group "" in the namespace "default"\n',
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", K8S)
def test_kubernetes_client_that_cannot_list_pods(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN304", {"launcher": "kubernetes", "resource": "Pod"})


GLOO_BIND = [
    (
        "    backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, timeout=timeout)\n"
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:176] bind: Address already in use\n",
        "RUN223",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/socket.cc:110] rv != -1. -1 vs -1. "
        "bind: Address already in use\n",
        "RUN223",
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/socket.cc:110] rv != -1. -1 vs -1. "
        "bind: Cannot assign requested address\n",
        "RUN174",
    ),
    ("RuntimeError: [/opt/gloo/gloo/transport/tcp/pair.cc:185] listen: Too many open files\n", "RUN174"),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code"), GLOO_BIND)
def test_gloo_that_cannot_bind_its_own_socket(prefix: str, log: str, code: str) -> None:
    check_root(_prefixed(prefix, log), code, {"backend": "gloo"})


TORCH_ELIDED = [
    "RuntimeError: NCCL error in: ... /torch/lib/c10d/ProcessGroupNCCL.cpp:290, unhandled system error\n",
    "RuntimeError: NCCL error in: \u2026/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system "
    "error, NCCL version 2.10.3\n",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log", TORCH_ELIDED)
def test_torch_nccl_error_with_an_elided_path(prefix: str, log: str) -> None:
    check_root(_prefixed(prefix, log), "RUN171", {"nccl_error": "unhandled system error"})


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("log", "facts"),
    [
        ("Timed out after 901 seconds waiting for clients\n", {"timeout_s": 901}),
        (
            "RuntimeError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n",
            {"timeout_s": 901, "joined": 1, "expected": 2},
        ),
    ],
)
def test_tcpstore_waiting_for_clients(prefix: str, log: str, facts: dict[str, int]) -> None:
    check_root(_prefixed(prefix, log), "RUN221", facts)


_LOOKUP = (
    "[W1008 23:40:22.781961348 socket.cpp:767] [c10d] The IPv6 network addresses of "
    "(job-01k72wn5f8waqw7d81mfggagn4.internal, 50745) cannot be retrieved (gai error: -2 - Name or service not "
    "known)."
)
_CONNECT = (
    "[W1008 23:40:22.836678340 socket.cpp:767] [c10d] The client socket has failed to connect to "
    "[job-01k72wn5f8waqw7d81mfggagn4.internal]:50745 (errno: 22 - Invalid argument)."
)


@pytest.mark.parametrize("prefix", ["", "> ", "\x1b[33m"])
def test_a_lookup_folded_many_times_by_monarch_is_the_failure(prefix: str) -> None:
    log = (
        f"{prefix}[7 similar log lines]\x1b[0m {_CONNECT}\n{prefix}[24 similar log lines]\x1b[0m {_LOOKUP}\n"
    )
    check_root(log.replace("\x1b[33m\x1b", "\x1b"), "RUN222", {"master_port": 50745})


def test_one_ipv6_lookup_before_ipv4_stays_silent() -> None:
    assert failure_findings(f"[1 similar log lines] {_LOOKUP}\n") == []
    assert failure_findings(f"{_LOOKUP}\n") == []


HEALTHY = [
    "[1733390000.123456] [node1:41:0]        parser.c:1885 UCX  INFO  UCX_* env variables: UCX_TLS=rc,sm\n",
    "a3-node-0:120:377 [0] NCCL INFO NET/GPUDirectTCPX ver. 3.1.8.\n",
    "NVSHMEM configuration:\n  NVSHMEM_BOOTSTRAP            UID\n",
    "INFO:tensorflow:Querying Tensorflow master (grpc://10.240.1.2:8470) for TPU system metadata.\n"
    "INFO:tensorflow:Found TPU system:\n",
    "I0512 10:11:12.131415       1 shared_informer.go:247] Caches are synced for pods\n",
]


@pytest.mark.parametrize("log", HEALTHY)
def test_healthy_lines_of_these_tools_stay_silent(log: str) -> None:
    assert failure_findings(log) == []
