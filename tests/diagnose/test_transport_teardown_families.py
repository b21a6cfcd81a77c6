"""Transport families read at their sources (synthetic lines, every variant), and their decoys.

- gloo's address-family check: gloo/transport/tcp/device.cc and uv/device.cc Device::isInitiator
  GLOO_ENFORCE_EQ(ss1.ss_family, ss2.ss_family) (pytorch/gloo before #503), "Unknown address family" there,
  "Unknown ai_family" in the device's setup (tcp/device.cc); pair.cc's older "address family mismatch".
- TensorPipe's uv transport: tensorpipe/transport/uv/uv.h TP_THROW_UV_IF + common/defs.h TP_THROW ("In <fn> at
  <file>:<line> \"<cond>: <uv_strerror>\""), common/error.cc Error::what ("<what> (this error originated at
  <file>:<line>)"), uv/error.cc UVError ("ECONNREFUSED: connection refused") / NoAddrFoundError ("no address
  found"), EOFError ("eof").
- UCX's verbs completion check: uct/ib/base/ib_iface.h UCT_IB_IFACE_VERBS_COMPLETION_MSG ("send completion[0]
  with error on <dev>/<ptr>: <ibv_wc_status_str>, vendor_err ..."), rc_verbs_iface.c, ud_verbs.c; the status
  text is rdma-core's ibv_wc_status_str.
- NCCL's interface list naming the loopback interface (misc/socket.cc ncclFindInterfaces, net_socket.cc "NET/
  Socket : Using") in a log that ends before the communicator came up.
- TF 1.x gRPC statuses named by their record's description (grpc core iomgr/tcp_posix.c "EOF", "OS Error").
- torchrun's agent line cut after its exit code (elastic/multiprocessing/api.py "failed (exitcode: %s)
  local_rank: %s ..."), with the writer's words glued in any language.
- A shell command line (CUDA_VISIBLE_DEVICES=0,1 deepspeed ...) glued before DeepSpeed's exit record.
- NCCL init.cc commReclaim ("cleanup comm ... failed in destroy/abort") and ProcessGroupNCCL's "Watchdog
  joined, destroying NCCL communicators": WARN lines of a teardown are observations, not the job's failure.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.diagnose_root import failure_findings

PREFIXES = ["", "[rank1]: ", "[1,0]<stderr>:", "node7: "]

CASES = [
    # gloo: this rank IPv4, the peer IPv6, and the reverse; tcp and uv; a tracker's markdown link
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:276] "
        "ss1.ss_family == ss2.ss_family. 2 vs 10",
        "RUN174",
        {
            "problem": "address_family_mismatch",
            "local_family": "AF_INET (IPv4)",
            "gloo_source": "tcp/device.cc:276",
        },
    ),
    (
        "RuntimeError: [enforce fail at /opt/gloo/gloo/transport/uv/device.cc:261] ss1.ss_family == "
        "ss2.ss_family. 10 vs 2",
        "RUN174",
        {"local_family": "AF_INET6 (IPv6)", "peer_family": "AF_INET (IPv4)"},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/[device.cc:276]"
        "(http://device.cc:276/)] ss1.ss_family == ss2.ss_family. 2 vs 10",
        "RUN174",
        {"problem": "address_family_mismatch"},
    ),
    (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:305] false. Unknown "
        "address family: 1",
        "RUN174",
        {"problem": "unknown_address_family", "family": 1},
    ),
    (
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:210] address family mismatch",
        "RUN174",
        {"problem": "address_family_mismatch"},
    ),
    # TensorPipe uv
    (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  In initFromLoop at /pytorch/third_party/tensorpipe/tensorpipe/transport/uv/"
        'listener.cc:126 "rv < 0: invalid argument"',
        "RUN174",
        {
            "transport": "uv",
            "where": "tensorpipe/transport/uv/listener.cc:126",
            "fix_env": "TP_SOCKET_IFNAME",
        },
    ),
    (
        'RuntimeError: In bind at tensorpipe/transport/uv/uv.h:288 "rv < 0: address not available"',
        "RUN174",
        {"error": "address not available"},
    ),
    (
        "RuntimeError: In initFromLoop at tensorpipe/transport/uv/listener_impl.cc:44 "
        '"rv < 0: address already in use"',
        "RUN223",
        {"error": "address already in use"},
    ),
    (
        "RuntimeError: ECONNREFUSED: connection refused (this error originated at "
        "tensorpipe/transport/uv/connection_impl.cc:132)",
        "RUN174",
        {"error": "ECONNREFUSED: connection refused"},
    ),
    (
        "RuntimeError: eof (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)",
        "RUN174",
        {"error": "eof", "peer_may_have_died": True},
    ),
    (
        "RuntimeError: ECONNRESET: connection reset by peer (this error originated at "
        "tensorpipe/transport/uv/connection_impl.cc:132)",
        "RUN174",
        {"peer_may_have_died": True},
    ),
    # UCX verbs completions (EFA SRD, mlx5 verbs, rc_verbs, ud_verbs)
    (
        "[1784621081.896649] [pod-x:537  :1]       srd_iface.c:221  UCX  ERROR send completion[0] with "
        "error on rdmap132s0/0x55cf4425cfb0: Work Request Flushed Error, vendor_err 0x1 wr_id 0x7f8b20022480",
        "RUN173",
        {"ib_device": "rdmap132s0", "fabric": "efa", "echo": True},
    ),
    (
        "[1700000000.1] [node1:42:0] ib_iface.c:700 UCX  ERROR receive completion[0] with error on "
        "mlx5_0/0x1a2b: remote access error, vendor_err 0x88 wr_id 0x2",
        "RUN173",
        {"ib_device": "mlx5_0", "ib_error": "remote access error"},
    ),
    (
        "[1700000000.1] [node1:42:0] rc_verbs_iface.c:124 UCX  ERROR send completion with error: transport "
        "retry counter exceeded [qpn 0x1a wrid 0x2 vendor_err 0x81]",
        "RUN173",
        {"ib_error": "transport retry counter exceeded"},
    ),
    (
        "[node1:42:0:42] ud_verbs.c:392 Fatal: Send completion (wr_id=0x1 with error: local protection error",
        "RUN173",
        {"ib_error": "local protection error"},
    ),
    # NCCL on loopback, the log ending before the communicator came up
    (
        "job-master-0:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:192.168.4.230<0>",
        "RUN174",
        {"loopback_interfaces": ["lo"]},
    ),
    (
        "job-master-0:1:1 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>",
        "RUN174",
        {"loopback_interfaces": ["lo"]},
    ),
    # TF 1.x gRPC statuses by description
    (
        "INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl."
        "UnavailableError'>, OS Error",
        "RUN174",
        {"grpc_error": "OS Error"},
    ),
    (
        'W tensorflow/core/framework/op_kernel.cc:993] Unavailable: {"created":"@1487751897.191020037",'
        '"description":"EOF","file":"external/grpc/src/core/lib/iomgr/tcp_posix.c","file_line":235,'
        '"grpc_status":14}',
        "RUN174",
        {"grpc_error": "EOF"},
    ),
    (
        "tensorflow.python.framework.errors_impl.UnavailableError: OS Error",
        "RUN174",
        {"grpc_error": "OS Error"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("log", "code", "facts"), CASES)
def test_transport_families(prefix: str, log: str, code: str, facts: dict[str, Any]) -> None:
    text = "".join(prefix + ln + "\n" for ln in log.splitlines())
    found = failure_findings(text)
    assert found and found[0].code == code, (text, [(f.code, f.message) for f in found])
    for key, value in facts.items():
        assert found[0].facts.get(key) == value, (key, found[0].facts)


# torchrun's agent line: every signal's exit code, cut after the code, with words glued after it
EXITS = [
    ("failed (exitcode: -7) 这个错误是因为什么", "RUN131", "SIGBUS"),
    ("failed (exitcode: -11) 求助", "RUN131", "SIGSEGV"),
    ("failed (exitcode: -6) any idea?", "RUN131", "SIGABRT"),
    ("failed (exitcode: -9)", "RUN121", "SIGKILL"),
    ("failed (exitcode: -7) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3", "RUN131", "SIGBUS"),
]


@pytest.mark.parametrize(("tail", "code", "signal"), EXITS)
def test_elastic_exit_cut_after_its_code(tail: str, code: str, signal: str) -> None:
    log = f"ERROR:torch.distributed.elastic.multiprocessing.api:{tail}\n"
    found = failure_findings(log)
    assert found and found[0].code == code, [(f.code, f.message) for f in found]
    assert found[0].facts.get("signal") == signal, found[0].facts


def test_a_command_line_glued_before_deepspeeds_exit_record() -> None:
    log = (
        "我也是报错但是我用的两张显卡CUDA_VISIBLE_DEVICES=0,1 deepspeed finetuning_pt.py --model_dir /opt/m/ "
        "报错[2023-07-18 09:02:14,830] [ERROR] [launch.py:321:sigkill_handler] "
        "['/opt/venv/bin/python', '-u', 'finetuning_pt.py', '--local_rank=1'] exits with return code = -9\n"
    )
    found = failure_findings(log)
    assert found and found[0].code == "RUN121", [(f.code, f.message) for f in found]


TEARDOWN = (
    "[rank0]:[I617 21:49:04.240959859 ProcessGroupNCCL.cpp:1479] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
    "Watchdog joined, destroying NCCL communicators.\n"
    "\n"
    "[2025-06-17 21:49:04] devvm1:3355146:3355146 [0] transport/p2p.cc:1128 NCCL WARN Cuda failure 1 "
    "'invalid argument'\n"
    "\n"
    "[2025-06-17 21:49:04] devvm1:3355146:3355146 [0] init.cc:2143 NCCL WARN commReclaim: cleanup comm "
    "0x9801e10 rank 0 failed in destroy/abort, error 1\n"
    "[rank0]:[I617 21:49:04.735740424 ProcessGroupNCCL.cpp:1487] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
    "Destroy complete.\n"
)

DECOYS = [
    TEARDOWN,
    # the commReclaim pair without the process group's words (NCCL alone, or an excerpt)
    "h1:7:7 [0] transport/p2p.cc:1128 NCCL WARN Cuda failure 1 'invalid argument'\n"
    "h1:7:7 [0] init.cc:2143 NCCL WARN commReclaim: cleanup comm 0x1 rank 0 failed in destroy/abort, "
    "error 1\n",
    # any tool's "failed (exitcode: 1)": not torchrun's agent
    "build step failed (exitcode: 1)\n",
    # loopback listed, then the communicator came up
    "h:1:1 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
    "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
    # the variable named in prose, in a command line
    "run it as CUDA_VISIBLE_DEVICES=0,1 python train.py and report any ERROR you see\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_teardown_and_prose_are_silent(log: str) -> None:
    assert [f.code for f in failure_findings(log)] == []


def test_the_same_warn_outside_a_teardown_still_fires() -> None:
    log = (
        "h1:7:7 [0] transport/p2p.cc:1128 NCCL WARN Cuda failure 1 'invalid argument'\n"
        "h1:7:7 [0] NCCL INFO transport/p2p.cc:1131 -> 1\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error, NCCL version 2.21.5\n"
    )
    assert failure_findings(log), log


# NCCL 1.x's allocation failure (src/core.cu allocDevMem WARN, ncclGetErrorString's 'cuda malloc failed')
# and CuPy's NcclError whose error table lacks a newer NCCL's result (nccl.pyx ERROR_NAMES: KeyError: N)
OTHER_LAYERS = [
    (
        "WARN src/core.cu:225 failed to allocate 2101248 byte device buffer\n"
        "WARN src/core.cu:596 rank 12 failed to allocate device buffer\n"
        "NCCL Init failed (10) 'cuda malloc failed'\n",
        "RUN101",
        {"reported_by": "NCCL 1.x", "requested_bytes": 2101248},
    ),
    ("NCCL Init failed (10) 'cuda malloc failed'\n", "RUN101", {"reported_by": "NCCL 1.x"}),
    (
        "    comm = nccl.NcclCommunicator(comm_size, self.nccl_comm_id, comm_rank)\n"
        '  File "cupy_backends/cuda/libs/nccl.pyx", line 282, in '
        "cupy_backends.cuda.libs.nccl.NcclCommunicator.__init__\n"
        '  File "cupy_backends/cuda/libs/nccl.pyx", line 128, in '
        "cupy_backends.cuda.libs.nccl.check_status\n"
        '  File "cupy_backends/cuda/libs/nccl.pyx", line 117, in '
        "cupy_backends.cuda.libs.nccl.NcclError.__init__\n"
        "KeyError: 6\n",
        "RUN172",
        {"nccl_result": 6, "reporter": "cupy"},
    ),
    (
        '  File "cupy/cuda/nccl.pyx", line 117, in cupy.cuda.nccl.NcclError.__init__\nKeyError: 7\n',
        "RUN191",
        {"nccl_result": 7},
    ),
]


@pytest.mark.parametrize(("log", "code", "facts"), OTHER_LAYERS)
def test_other_layers_say_it(log: str, code: str, facts: dict[str, Any]) -> None:
    found = failure_findings(log)
    assert found and found[0].code == code, [(f.code, f.message) for f in found]
    for key, value in facts.items():
        assert found[0].facts.get(key) == value, (key, found[0].facts)


def test_a_plain_key_error_is_no_nccl_result() -> None:
    log = 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    d[k]\nKeyError: 6\n'
    assert [f.category for f in failure_findings(log)] == ["process_crash"]


# a signal from outside, named with its usual sender; one from inside, a fatal signal
SIGNALS = [
    (-1, "RUN133", "SIGHUP"),
    (-10, "RUN133", "SIGUSR1"),
    (-15, "RUN133", "SIGTERM"),
    (-24, "RUN133", "SIGXCPU"),
    (-5, "RUN131", "SIGTRAP"),
    (-31, "RUN131", "SIGSYS"),
]


@pytest.mark.parametrize(("code_n", "code", "signal"), SIGNALS)
def test_every_signal_is_named(code_n: int, code: str, signal: str) -> None:
    log = (
        f"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {code_n}) local_rank: 0 "
        "(pid: 12) of binary: /usr/bin/python\n"
    )
    found = failure_findings(log)
    assert found and found[0].code == code and found[0].facts.get("signal") == signal, found
    assert signal in found[0].message


# UCP's endpoint error with no user callback (ucx src/ucp/core/ucp_ep.c, "ep %p: error '%s' on %s will not be
# handled since no error callback is installed", the status from ucs/type/status.c)
UCX_EP = [
    ("Endpoint timeout", "rc_mlx5/mlx5_0:1", "RUN173"),
    ("Connection reset by remote peer", "tcp/eth0", "RUN174"),
    ("Input/output error", "dc_mlx5/mlx5_2:1", "RUN173"),
    ("Destination is unreachable", "srd/rdmap0s1", "RUN173"),
    ("Endpoint is not connected", "tcp/ens5", "RUN174"),
]


@pytest.mark.parametrize(("err", "lane", "code"), UCX_EP)
def test_ucx_endpoint_errors(err: str, lane: str, code: str) -> None:
    log = (
        f"[1700000000.123456] [node1:4242:0]        ucp_ep.c:1661 UCX  ERROR ep 0x7f3c2a: error '{err}' on "
        f"{lane} will not be handled since no error callback is installed\n"
    )
    found = failure_findings(log)
    assert found and found[0].code == code, [(f.code, f.message) for f in found]
    assert found[0].facts.get("lane") == lane and found[0].facts.get("error") == err


# device memory exhaustion in a Chinese, Japanese or Korean writer's words (a title, a translated message)
CJK_OOM = [
    "内存溢出错误：CUDA 内存不足。尝试分配 108.00 MiB 的内存。GPU 0 的总内存容量为 23.68 GiB。",
    "训练时显存不足怎么办",
    "8卡训练爆显存",
    "GPUメモリ不足でエラー",
    "GPU 메모리 부족 오류",
]


@pytest.mark.parametrize("log", CJK_OOM)
def test_device_oom_in_cjk_words(log: str) -> None:
    found = failure_findings(log + "\n")
    assert found and found[0].code == "RUN101", [(f.code, f.message) for f in found]


@pytest.mark.parametrize("log", ["内存不足\n", "系统内存不足，进程被杀\n"])
def test_memory_words_without_the_device_are_not_device_oom(log: str) -> None:
    assert "RUN101" not in [f.code for f in failure_findings(log)]


def test_sigbus_names_shared_memory() -> None:
    log = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) 这个错误是因为什么\n"
    found = failure_findings(log)
    assert found and found[0].code == "RUN131" and "/dev/shm" in found[0].message


def test_torchs_cuda_driver_oom_is_named_a_gpu() -> None:
    # c10/cuda/driver_api.h: TORCH_CHECK(false, "CUDA driver error: ", err_msg); CANN's "driver error:out of
    # memory" stays the NPU's
    found = failure_findings("RuntimeError: CUDA driver error: out of memory\n")
    assert found and found[0].code == "RUN101" and found[0].facts.get("device") == "cuda", found
    npu = failure_findings("EL0004: reason=[driver error:out of memory]\n")
    assert npu and npu[0].facts.get("device") == "npu", npu


# gloo/transport/tcp/device.cc: the interface path ("ifa != nullptr. Unable to find address for: eth0") and
# the host-name path ("rp != nullptr. Unable to find address for: node1", "Unable to find address for node1;
# bind(2) for [10.0.0.9]:0 failed with: Cannot assign requested address")
GLOO_ADDR = [
    ("ifa != nullptr. Unable to find address for: eth0", {"interface": "eth0"}),
    ("rp != nullptr. Unable to find address for: node1", {"hostname": "node1"}),
    (
        "bind_rv == 0. Unable to find address for node1; bind(2) for [10.0.0.9]:0 failed with: Cannot assign "
        "requested address",
        {"hostname": "node1", "address": "[10.0.0.9]:0", "error": "Cannot assign requested address"},
    ),
]


@pytest.mark.parametrize(("tail", "facts"), GLOO_ADDR)
def test_gloo_interface_or_host_name(tail: str, facts: dict[str, Any]) -> None:
    log = f"RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:128] {tail}\n"
    found = failure_findings(log)
    assert found and found[0].code == "RUN174", [(f.code, f.message) for f in found]
    for key, value in facts.items():
        assert found[0].facts.get(key) == value, (key, found[0].facts)


def test_the_rpc_agents_shutdown_warning_is_silent() -> None:
    # torch/csrc/distributed/rpc/tensorpipe_agent.cpp: logged when a peer closes its pipe first (every
    # rpc.shutdown), not a failure by itself
    log = (
        "[W tensorpipe_agent.cpp:726] RPC agent for worker1 encountered error when reading incoming request "
        "from worker0: eof (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)\n"
    )
    assert failure_findings(log) == []
