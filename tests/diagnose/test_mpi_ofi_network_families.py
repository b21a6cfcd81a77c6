"""Network families of the MPI runtime and of NCCL's libfabric plugin, read at their sources:

- Open MPI's out-of-band TCP channel (orte/mca/oob/tcp/oob_tcp_connection.c, v2.1.6 / v3.1.6 / v4.1.8: "A
  process or daemon was unable to complete a TCP connection" / "to another process:"; PRRTE v3.0.14 / main,
  src/mca/oob/tcp and src/rml/oob: "A daemon was unable to complete a TCP connection" / "to another daemon:")
  and the errmgr's [no-connect] help (help-errmgr-base.txt, v4.1.8 and PRRTE): "ORTE is unable to establish a
  communication connection to the": RUN174 with the reporting host and the peer's;
- PRRTE's ssh launcher (src/mca/plm/ssh/plm_ssh_module.c, v3.0.14 / main): "A daemon failed to report back
  after being spawned." with "Remote host:" and "Daemon exit status:": RUN303;
- aws-ofi-nccl (src/nccl_ofi_rdma.c / .cpp, v1.7.4-aws to v1.21.1): "NET/OFI Unexpected number of remote rails
  for dev N. Expected A but got B" (and "remote control rails", v1.13+): RUN520; sendrecv's "NET/OFI
  Insufficient Libfabric devices found" (v1.11+): RUN294;
- libfabric's EFA provider (prov/efa efa_strerror.c v1.16-v1.20, efa_errno.h v1.21+) on a peer whose queue
  pair is gone ("Invalid receiver queue pair number (QPN)", "Bad queue pair (QP) number (QP does not exist or
  is in error state)", "... peer closed its memory registration or endpoint mid-transfer"): RUN133, tier 1;
- gloo's tcp pair IoException (gloo/transport/tcp/pair.cc, every message ends in the peer's address) with its
  words garbled or lower-cased: RUN174;
- NCCL's "Bootstrap : Using [0]lo:127.0.0.1<0>" in a job whose ranks all run on one host (nccl-tests' device
  table, mpirun -H localhost): silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

OOB_ORTE = """------------------------------------------------------------
A process or daemon was unable to complete a TCP connection
to another process:
  Local host:    node1
  Remote host:   node2
This is usually caused by a firewall on the remote host. Please
check that any firewall (e.g., iptables) has been disabled and
try again.
------------------------------------------------------------
"""
OOB_PRRTE = OOB_ORTE.replace("A process or daemon was", "A daemon was").replace(
    "to another process:", "to another daemon:"
)
NO_CONNECT = """--------------------------------------------------------------------------
{rt} is unable to establish a communication connection to the
specified daemon located on the indicated node:

  my node:   node1
  target node:  node2

This is usually due to a lack of common network interfaces and/or
no route found between them. Please check network connectivity (including
firewalls and network routing requirements). If these look okay,
then it could be an internal programming error that should be
reported to the developers. In the meantime, a workaround may
be to set the MCA param routed=direct on the command line or
in your environment.
--------------------------------------------------------------------------
"""
PRRTE_NO_REPORT = """------------------------------------------------------------
A daemon failed to report back after being spawned. This could
be due to several factors, including inability to find the
daemon executable, or the executable was unable to find its
required supporting libraries. In some cases, the daemon was
able to execute, but was unable to complete a TCP connection
back to prterun:

  Local host:    node1
  Remote host:   node2
  Daemon exit status: 127

This may also be caused by a firewall on the remote host. Please
check that any firewall (e.g., iptables) has been disabled and
try again.
------------------------------------------------------------
"""

PREFIXES = ["", "[1,0]<stderr>:", "node1: ", "2025-01-02 03:04:05 "]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("log", "code", "facts"),
    [
        (OOB_ORTE, "RUN174", {"host": "node1", "peer_host": "node2", "reporter": "ORTE"}),
        (OOB_PRRTE, "RUN174", {"host": "node1", "peer_host": "node2", "reporter": "PRTE"}),
        (NO_CONNECT.format(rt="ORTE"), "RUN174", {"peer_host": "node2", "problem": "mpi_daemon_unreachable"}),
        (NO_CONNECT.format(rt="PRTE"), "RUN174", {"peer_host": "node2", "reporter": "PRTE"}),
        (PRRTE_NO_REPORT, "RUN303", {"host": "node2", "exitcode": 127, "problem": "daemon_no_report"}),
    ],
)
def test_open_mpi_runtime_network(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.splitlines()), code, facts)


OFI = "ip-10-1-2-3:4242:4300 [3] "
CASES = [
    (
        OFI
        + "accept_wait_for_connection:4909 NCCL WARN NET/OFI Unexpected number of remote rails for dev 3. "
        "Expected 4 but got 2",
        "RUN520",
        {"net_dev": 3, "local_rails": 4, "remote_rails": 2, "host": "ip-10-1-2-3"},
    ),
    (
        OFI + "finish_connect:2587 NCCL WARN NET/OFI Unexpected number of remote control rails for dev 0. "
        "Expected 1 but got 2",
        "RUN520",
        {"net_dev": 0, "rail_kind": "control"},
    ),
    # the C++ plugin (v1.14+) prints __PRETTY_FUNCTION__; a thread title cuts the line
    (
        "accept_wait_for_connection(nccl_net_ofi_rdma_domain_t*, nccl_net_ofi_rdma_listen_comm_t*, "
        "nccl_net_ofi_rdma_recv_comm_t**):4909 NCCL WARN NET/OFI Unexpected number of remote rails for "
        "dev 3. Expected",
        "RUN520",
        {"net_dev": 3},
    ),
    (
        OFI
        + "nccl_net_ofi_sendrecv_plugin_complete_init:2562 NCCL WARN NET/OFI Insufficient Libfabric devices "
        "found",
        "RUN294",
        {"reason": "insufficient_devices"},
    ),
    (
        OFI
        + "process_err_completion:1562 NCCL WARN NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. "
        "Error: Invalid receiver queue pair number (QPN) My EFA addr: "
        "fi_addr_efa://[fe80::30:43ff:fe60:456b]:0:657145598 My host id: i-00ee91ea93e985ee0 "
        "Peer EFA addr: fi_addr_efa://[fe80::ed:61ff:fe1d:a3b3]:0:229342137 "
        "Peer host id: i-08d8a345a75ab52a0. Completed length: 0, "
        "Request: { dev: 2, size: 0, state: CREATED, type: SEND_CTRL }",
        "RUN133",
        {"problem": "peer_process_gone", "peer_host_id": "i-08d8a345a75ab52a0"},
    ),
    (
        OFI
        + "ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 9. Error: "
        "Invalid receiver queue pair number (QPN). This error is typically caused by a crashed peer. Please "
        "verify the peer application has not terminated unexpectedly.. Completed length: 0",
        "RUN133",
        {"fabric": "efa", "plugin": "aws-ofi-nccl"},
    ),
    (
        "libfabric:2424:1718000000::efa:cq:efa_rdm_pke_handle_send_error():542<warn> Error: Bad queue "
        "pair (QP) number (QP does not exist or is in error state)",
        "RUN133",
        {"problem": "peer_process_gone"},
    ),
    (
        OFI + "process_err_completion:1620 NCCL WARN NET/OFI Request 0x7f0 completed with error. RC: 4127. "
        "Error: Operation aborted because the peer closed its memory registration or endpoint mid-transfer",
        "RUN133",
        {"problem": "peer_process_gone"},
    ),
    # gloo's pair.cc IoException with its words garbled by the paste, lower-cased
    (
        "runtimeerror: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:575] connectruntclosed by peer "
        "[172.16.173.129]:23211",
        "RUN174",
        {"peer": "172.16.173.129", "peer_port": 23211},
    ),
]


@pytest.mark.parametrize("prefix", ["", "[1,2]<stdout>:", "(RayWorkerWrapper pid=92234) "])
@pytest.mark.parametrize(("line", "code", "facts"), CASES)
def test_ofi_plugin_family(prefix: str, line: str, code: str, facts: dict[str, object]) -> None:
    if prefix and "host" in facts:
        facts = {k: v for k, v in facts.items() if k != "host"}
    _check(prefix + line + "\n", code, facts)


def test_gloo_read_timeout_stays_a_timeout() -> None:
    root = _root(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Read timeout [10.0.0.2]:5678\n"
    )
    assert root is not None and root.category == "collective_timeout", root


NCCL_TESTS_ONE_NODE = """# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor)
#
# Using devices
#   Rank  0 Pid  17754 on node-a device  0 [0x06] Tesla V100-SXM2-32GB
#   Rank  1 Pid  17755 on node-a device  1 [0x07] Tesla V100-SXM2-32GB
node-a:17754:17754 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>
node-a:17754:17754 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).
node-a:17754:17754 [0] NCCL INFO NET/IB : No device found.
node-a:17754:17754 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>
NCCL version 2.4.8+cuda10.1
"""


def test_loopback_on_one_node_is_quiet() -> None:
    assert _root(NCCL_TESTS_ONE_NODE) is None
    launched = "mpirun -x NCCL_SOCKET_IFNAME=lo -np 2 -H localhost:2 ./build/all_reduce_perf -b 8 -e 1G\n"
    tail = "".join(ln + "\n" for ln in NCCL_TESTS_ONE_NODE.splitlines()[5:])
    assert _root(launched + tail) is None


def test_loopback_across_two_nodes_still_fires() -> None:
    two = NCCL_TESTS_ONE_NODE.replace("17755 on node-a", "17755 on node-b")
    root = _root(two)
    assert root is not None and root.code == "RUN174", root


# PyTorch/XLA's XRT mesh service (third_party/xla_client/mesh_service.cc, torch_xla 1.5-1.13): xm.rendezvous's
# "Failed to meet rendezvous '<tag>': Socket closed (14)" (gRPC UNAVAILABLE) after the processes' own progress
# lines is a process of the mesh that died mid-run (RUN133, tier 1); at 'init', with nothing run, it stays the
# mesh's rendezvous (RUN371).
XLA_RDZV = (
    "2020-04-13 08:06:45.176636: E tensorflow/compiler/xla/xla_client/tf_logging.cc:11] Failed to meet "
    "rendezvous '{tag}': {why}\n"
)


@pytest.mark.parametrize("why", ["Socket closed (14)", "Connection reset by peer (14)"])
def test_xla_rendezvous_lost_after_the_job_ran(why: str) -> None:
    ran = "Epoch 3 step 1200 loss 0.412\nEnd training: xla:0\n"
    _check(ran + XLA_RDZV.format(tag="torch_xla.core.xla_model.save", why=why), "RUN133")
    root = _root(XLA_RDZV.format(tag="init", why=why))
    assert root is not None and root.code == "RUN371", root


# faulthandler.enable()'s OSError ENOMEM is sigaltstack(2) refusing the alternate stack (CPython 3.9+ raises
# it, bpo-37851; Modules/faulthandler.c): a Python exception (RUN132), never the host OOM; the errno alone
# stays RUN122.
FAULTHANDLER = """Process Process-6:
Traceback (most recent call last):
  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap
    self.run()
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1984, in run
    faulthandler.enable()
OSError: [Errno 12] Cannot allocate memory
"""


@pytest.mark.parametrize("prefix", ["", "ragflow-server |", "[rank0]: "])
def test_faulthandler_enomem_is_not_host_oom(prefix: str) -> None:
    _check(
        "".join(prefix + ln + "\n" for ln in FAULTHANDLER.splitlines()),
        "RUN132",
        {"call": "faulthandler.enable"},
    )
    _check(prefix + "OSError: [Errno 12] Cannot allocate memory\n", "RUN122")


# XLA's wrapper (xla/service/gpu nccl_utils.cc / nccl_api.cc): the result's text with "Last NCCL
# warning(error) log entry (may be unrelated) '<WARN>'", or a paste that elides its middle words: the WARN
# decides.
@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(...) failed:\n"
            "invalid usage ... Last NCCL warning(error): 'Bootstrap : no socket interface found'\n",
            "RUN174",
        ),
        (
            "XlaRuntimeError: INTERNAL: NCCL operation ncclCommInitRankConfig(...) failed: invalid usage "
            "(run with NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) "
            "'Bootstrap : no socket interface found'.\n",
            "RUN174",
        ),
        (
            "XlaRuntimeError: INTERNAL: NCCL operation ncclGroupEnd() failed: invalid usage (run with "
            "NCCL_DEBUG=WARN for details). Last NCCL warning(error) log entry (may be unrelated) 'Invalid "
            "config blocking attribute value -2147483648'.\n",
            "RUN197",
        ),
    ],
)
def test_xla_last_nccl_warning_decides(log: str, code: str) -> None:
    _check(log, code)


# NCCL's own NET/IB transport (src/transport/net_ib.cc): 2.20+'s sanity check of the receive a peer posted,
# "NET/IB : req 0/1 tag 7 peer 10.0.0.2<43211> posted incorrect receive info: size -1 addr 0 rkeys[0]=0"
# (before 2.20 the same check printed "collective mismatch error ..." together with the size check, which
# 2.20 dropped): the control data arrived corrupted (RUN173); 2.27's "Remote IB device is incompatible with
# the local [0]mlx5_0:1/RoCE" is the job's NIC selection, as "Attempted to connect incompatible devices"
# (RUN191).
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "node1:1234:5678 [0] transport/net_ib.cc:2144 NCCL WARN NET/IB : req 0/1 tag 7 peer "
            "10.0.0.2<43211> posted incorrect receive info: size -1 addr 0 rkeys[0]=0",
            "RUN173",
        ),
        (
            "node1:1234:5678 [0] transport/net_ib.cc:1210 NCCL WARN NET/IB : Remote IB device is "
            "incompatible "
            "with the local [0]mlx5_0:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA",
            "RUN191",
        ),
    ],
)
def test_nccl_net_ib_warns(line: str, code: str) -> None:
    _check(line + "\n", code)
