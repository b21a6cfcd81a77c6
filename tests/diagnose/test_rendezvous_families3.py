"""Rendezvous families read at their source, third part: TCPStore.cpp's checks of the server's answers
("Stop_waiting response is expected" and its kin, 2.4+'s ping), Utils.hpp's send side, the 2.6+ client's
records of dropped connections, torch elastic's store helpers (elastic/utils/distributed.py, utils/store.py),
torchrun's rejected rendezvous parameters, torch 0.4's THD, and the bootstraps of other stacks (ps-lite's van,
a C++ server's bind check, PCCL, a rank's own Python server under mpirun). Each case is written from the format
string that prints it, with the prefixes real logs add; the last tables check that a store error which is the
echo of another rank's death never outranks that death."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, failure_findings, root_finding

# What real logs put before a rank's line: torchrun's --tee prefix, its local-rank prefix, mpirun's
# --tag-output (with and without --timestamp-output), a logging formatter, Ray's actor prefix.
PREFIXES = [
    "",
    "[rank1]: ",
    "[default0]:",
    "[1,0]<stderr>:",
    "Wed Oct 10 01:40:44 2018[1,31]<stderr>:",
    "2024-01-01 12:00:00,123 - ERROR - ",
    "(RayTrainWorker pid=2044) ",
]
EXC = ["RuntimeError: ", "torch.distributed.DistStoreError: ", "DistStoreError: "]


# -- TCPStore.cpp: the client's checks of the server's answers (1.x-2.x) -------------------------------------

PROTOCOL = [
    "Stop_waiting response is expected",
    "wait_canceled response is expected",
    "ready or not_ready response expected",
    "Ping failed, invalid value returned from server. Expected: 1234567, Got: 1392640",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("exc", EXC)
@pytest.mark.parametrize("answer", PROTOCOL)
def test_a_store_answer_that_breaks_the_protocol(prefix: str, exc: str, answer: str) -> None:
    check_root(prefix + exc + answer + "\n", "RUN222", {"problem": "store_protocol"})


def test_the_protocol_error_under_its_traceback_and_cpp_frames() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/'
        'static_tcp_rendezvous.py", line 55, in next_rendezvous\n'
        "    self._store = TCPStore(  # type: ignore[call-arg]\n"
        "RuntimeError: Stop_waiting response is expected\n"
        "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f in libc10.so)\n"
    )
    check_root(log, "RUN222")


def test_the_protocol_error_beside_an_empty_master_addr_says_so() -> None:
    log = (
        "RuntimeError: Stop_waiting response is expected\n"
        "Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --master_addr= --master_port= "
        "train.py --tp_size 4 on 127.0.0.1, is localhost: True, exception: Encountered a bad command exit code!\n"
    )
    check_root(log, "RUN222", {"master_addr": ""})
    root = root_finding(log)
    assert root is not None and "empty" in root.message


_ELASTIC_ERROR_FILE = '[ERROR] 2021-09-13 22:18:26,678 error_handler: {\n  "message": {\n    "message": "RuntimeError: Stop_waiting response is expected",\n    "extraInfo": {\n      "py_callstack": "Traceback (most recent call last):\\n  File \\"/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/static_tcp_rendezvous.py\\", line 55, in next_rendezvous\\n    self._store = TCPStore(\\nRuntimeError: Stop_waiting response is expected\\n",\n      "timestamp": "1631571506"\n    }\n  }\n}\n'
_CHILD_FAILED_TABLE = 'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\ntrain.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_10:00:00\n  host      : node-1\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 1234)\n  error_file: /tmp/torchelastic_x/none_y/attempt_0/1/error.json\n  traceback : Traceback (most recent call last):\n    File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper\n      return f(*args, **kwargs)\n    File "train.py", line 20, in main\n      dist.init_process_group("nccl")\n  torch.distributed.DistNetworkError: Failed to send, sent 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?\n============================================================\n'


@pytest.mark.parametrize("log", [_ELASTIC_ERROR_FILE, _CHILD_FAILED_TABLE])
def test_store_errors_inside_the_agents_error_file_and_table(log: str) -> None:
    check_root(log, "RUN222")


# -- Utils.hpp: the send side of a connection the store's host closed --------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("exc", ["torch.distributed.DistNetworkError: ", "RuntimeError: "])
def test_send_side_zero_bytes(prefix: str, exc: str) -> None:
    line = (
        "Failed to send, sent 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?"
    )
    check_root(prefix + exc + line + "\n", "RUN222")


# -- TCPStore.cpp's client records (2.6+): one dropped connection, or a client dropped again and again ---------

_IO = (
    "[W822 03:54:{s:02d}.636977195 TCPStore.cpp:125] [c10d] {op} failed on SocketImpl(fd=15, "
    "addr=[trainer-node-0-1.svc.cluster.local]:{port}, remote=[trainer-node-0-0.svc.cluster.local]:29500): {why}\n"
)


@pytest.mark.parametrize("prefix", ["", "[rank1]:", "[default0]:"])
def test_a_client_whose_store_connections_are_dropped_again_and_again(prefix: str) -> None:
    log = "".join(
        prefix + _IO.format(s=s, op=op, port=port, why=why)
        for s, op, port, why in [
            (
                10,
                "recvValue",
                60560,
                "failed to recv, got 0 bytes Exception raised from recvBytes at Utils.hpp:678",
            ),
            (11, "sendBytes", 60560, "Broken pipe"),
            (40, "recvValue", 60562, "failed to recv, got 0 bytes"),
            (59, "recvValue", 60574, "failed to recv, got 0 bytes"),
        ]
    )
    check_root(log, "RUN222", {"master_port": 29500, "connections": 3})


def test_one_dropped_store_connection_at_a_runs_end_is_silent() -> None:
    log = "Epoch 9: 100% done\n" + _IO.format(
        s=1, op="recvValue", port=50000, why="failed to recv, got 0 bytes"
    )
    root = root_finding(log)
    assert root is None or root.category != "rendezvous"


def test_one_dropped_store_connection_before_the_run_printed_anything_fails() -> None:
    log = _IO.format(
        s=1, op="recvValue", port=60560, why="failed to recv, got 0 bytes Exception raised from recvBytes"
    )
    log += "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f in libc10.so)\n"
    check_root(log, "RUN222", {"connections": 1})


@pytest.mark.parametrize(
    ("head", "tail"),
    [("```text\n", "```\n"), ("```\n", "```\n"), ("ray.exceptions.RayTaskError: RuntimeError('\n", "')\n")],
)
def test_one_dropped_connection_inside_a_fence_or_a_wrappers_repr_still_fails(head: str, tail: str) -> None:
    log = head + _IO.format(s=1, op="recvValue", port=60560, why="failed to recv, got 0 bytes") + tail
    check_root(log, "RUN222", {"connections": 1})


def test_a_dropped_connection_beside_the_process_groups_monitor_is_a_runs_end() -> None:
    log = (
        '[rank3]:[W625 23:35:35.311127584 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0(default_pg) Rank 3] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: failed to recv, got 0 bytes\n'
        "[rank2]:[W625 23:35:35.303797152 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, addr=[::ffff:127.0.0.1]:37468, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes\n"
        "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first):\n"
    )
    root = root_finding(log)
    assert root is None or root.category != "rendezvous"


# -- socket.cpp 2.1-2.3: "While waitForInput, poolFD failed with (errno: N - ...)" ---------------------------


@pytest.mark.parametrize(
    "prefix",
    ["", "(RayTrainWorker pid=3738, ip=172.17.130.64) ", "[rank1]:", "[default0]:", "[1,0]<stderr>:"],
)
@pytest.mark.parametrize(
    "src", ["[W socket.cpp:432] [c10d] ", "[W1014 16:41:26.522544000 socket.cpp:432] [c10d] "]
)
@pytest.mark.parametrize(
    ("errno", "text"), [(0, "Success"), (0, "Undefined error: 0"), (4, "Interrupted system call")]
)
def test_a_store_poll_that_gave_nothing(prefix: str, src: str, errno: int, text: str) -> None:
    log = f"{prefix}{src}While waitForInput, poolFD failed with (errno: {errno} - {text}).\n"
    check_root(log, "RUN222", {"errno": errno})


def test_the_poll_record_yields_to_the_main_process_first_barrier_it_belongs_to() -> None:
    tb = [
        "Traceback (most recent call last):",
        '  File "/home/project/sd-scripts/flux_train.py", line 193, in train',
        "    accelerator.wait_for_everyone()",
        '  File "/envs/flux/lib/python3.10/site-packages/accelerate/accelerator.py", line 2564, in wait_for_everyone',
        "    wait_for_everyone()",
        '  File "/envs/flux/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3936, in barrier',
        "    work = default_pg.barrier(opts=opts)",
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: "
        "/default_pg/0//cuda//0",
    ]
    log = " 17%|#7        | 2295/13732 [06:14<9:54:20,  3.12s/it]\n" + "".join(
        f"[rank{r}]:[W915 17:32:18.928929035 socket.cpp:428] [c10d] While waitForInput, poolFD failed with "
        "(errno: 0 - Success).\n"
        for r in (1, 4, 3)
    )
    log += "".join(f"[rank3]: {ln}\n" for ln in tb)
    check_root(log, "RUN151")


@pytest.mark.parametrize(
    "record",
    [
        "[W915 17:32:18.928929035 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).",
        "[W915 17:32:18.928929035 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, addr=[node-2]:38674, "
        "remote=[::ffff:10.0.0.1]:23456) timed out after 600000ms",
    ],
)
def test_a_store_wait_record_above_a_main_process_first_stack_cut_before_its_exception(record: str) -> None:
    log = " 17%|#7        | 2295/13732 [06:14<9:54:20,  3.12s/it]\n" + "".join(
        f"[rank{r}]:{record}\n" for r in (1, 4, 3)
    )
    log += (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "/home/project/sd-scripts_sd3/flux_train.py", line 193, in train\n'
        "[rank3]:     accelerator.wait_for_everyone()\n"
    )
    check_root(log, "RUN151", {"barrier": "wait_for_everyone"})


# -- torch elastic's store helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("host", "port"), [("localhost", 29500), ("node-1.cluster", 29400), ("10.0.0.7", 0)])
def test_the_agents_store_port_already_in_use(prefix: str, host: str, port: int) -> None:
    check_root(f"{prefix}RuntimeError: on {host}, port: {port} already in use\n", "RUN223", {"port": port})


@pytest.mark.parametrize("prefix", PREFIXES)
def test_the_agents_store_never_saw_all_members(prefix: str) -> None:
    check_root(
        prefix + "TimeoutError: timed out waiting for all 4 members to join\n", "RUN221", {"expected": 4}
    )


_BARRIER = (
    "torch.distributed.DistStoreError: Timed out waiting on barrier on rank {rank}, for key prefix: {prefix} "
    "(world_size=4, missing_ranks=[Rank 2 (host node-2), Rank 3 (host node-3)], timeout=0:30:00)\n"
)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_store_barrier_names_the_ranks_that_never_came(prefix: str) -> None:
    log = prefix + _BARRIER.format(rank=0, prefix="torch.rendezvous.init")
    check_root(log, "RUN221", {"missing_ranks": [2, 3], "missing_hosts": ["node-2", "node-3"]})


def test_the_agents_exit_barrier_yields_to_the_worker_failure_before_it() -> None:
    log = (
        "[rank2]: Traceback (most recent call last):\n"
        '[rank2]:   File "train.py", line 40, in <module>\n'
        "[rank2]: ModuleNotFoundError: No module named 'flash_attn'\n"
        "I0101 10:00:00.000 1 torch/distributed/elastic/agent/server/api.py:900] Local worker group finished "
        "(FAILED). Waiting 300 seconds for other agents to finish\n"
        + _BARRIER.format(rank=0, prefix="torchelastic/agent/terminal_state")
    )
    root = root_finding(log)
    assert root is not None and root.category != "rendezvous", root
    assert any(f.code == "RUN221" for f in failure_findings(log))


def test_the_exit_barrier_alone_is_still_reported() -> None:
    check_root(
        _BARRIER.format(rank=0, prefix="torchelastic/agent/terminal_state"), "RUN221", {"exit_barrier": True}
    )


# -- torchrun's rendezvous parameters rejected before any connection (1.9-2.x) ----------------------------------

REJECTED = [
    "ValueError: Port is absent in endpoint: node-1. Try launching with --master-port",
    "ValueError: endpoint is absent in RendezvousParametersTry add --master-port and --master-addr to the cmd request",
    "ValueError: rank is absent in RendezvousParameters.Try add --node-rank to the cmd request",
    "ValueError: The hostname of the rendezvous endpoint ':29500' must be a dot-separated list of labels, an IPv4 "
    "address, or an IPv6 address.",
    "ValueError: The port number of the rendezvous endpoint 'node-1:' must be an integer between 0 and 65536.",
    "ValueError: The rendezvous configuration option 'timeout' does not represent a valid integer value.",
    "ValueError: The rendezvous configuration option 'join_timeout' must have a value specified.",
    "ValueError: The rendezvous configuration string must be in format <key1>=<value1>,...,<keyN>=<valueN>.",
    "ValueError: The minimum number of rendezvous nodes (0) must be greater than zero.",
    "ValueError: The maximum number of rendezvous nodes (1) must be greater than or equal to the minimum number "
    "of rendezvous nodes (2).",
    "ValueError: The rendezvous backend name must be a non-empty string.",
    "ValueError: server_port must be specified when world_size > 1, got server_port=-1, world_size=2",
    "ValueError: port must have value from 0 to 65535 but was 70000.",
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("line", REJECTED)
def test_torchruns_rejected_rendezvous_parameters(prefix: str, line: str) -> None:
    check_root(prefix + line + "\n", "RUN224")


def test_the_rejected_endpoint_is_a_fact() -> None:
    check_root(
        "ValueError: Port is absent in endpoint: node-1. Try launching with --master-port\n",
        "RUN224",
        {"rdzv_endpoint": "node-1"},
    )


# -- torch 0.3-0.4's THD and 1.x's store get -----------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("RuntimeError: Connection refused at /pytorch/torch/lib/THD/base/TCPUtils.cpp:45", "RUN222"),
        ("RuntimeError: Connection timed out at /opt/conda/torch/lib/THD/base/TCPUtils.cpp:41", "RUN222"),
        (
            "RuntimeError: Address already in use at /pytorch/torch/lib/THD/process_group/General.cpp:17",
            "RUN223",
        ),
        ("RuntimeError: Timeout waiting for key: default_pg/0/0 after 1800000 ms", "RUN222"),
    ],
)
def test_store_errors_of_the_oldest_versions(prefix: str, line: str, code: str) -> None:
    check_root(prefix + line + "\n", code)


# -- torchelastic 0.1-0.2's names, the c10d backend's file store, the launcher's own etcd server -------------


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("torchelastic.rendezvous.api.RendezvousTimeoutException", "RUN221"),
        ("torchelastic.rendezvous.api.RendezvousClosedException", "RUN221"),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousError: The file creation for C10d store has failed. "
            "See inner exception for details.",
            "RUN222",
        ),
        ("RuntimeError: Timed out waiting for etcd server to be ready!", "RUN222"),
    ],
)
def test_elastic_names_of_every_era(prefix: str, line: str, code: str) -> None:
    check_root(prefix + line + "\n", code)


def test_a_thd_data_channels_reset_while_training_is_not_the_meeting() -> None:
    log = "RuntimeError: Connection reset by peer at /pytorch/torch/lib/THD/base/data_channels/DataChannelTCP.cpp:423\n"
    root = root_finding(log)
    assert root is None or root.category != "rendezvous", root


# -- a rank's own server that cannot bind, under mpirun or torchrun --------------------------------------------

_PY_BIND = [
    '  File "./http_server.py", line 41, in <module>',
    "    server = ThreadingSimpleServer(('', port), SimpleHTTPRequestHandler)",
    '  File "/usr/lib/python2.7/SocketServer.py", line 434, in server_bind',
    "    self.socket.bind(self.server_address)",
]


@pytest.mark.parametrize(
    "prefix", ["[1,31]<stderr>:", "Wed Oct 10 01:40:44 2018[1,31]<stderr>:", "[rank3]: ", "[default2]:"]
)
@pytest.mark.parametrize(
    "last", ["socket.error: [Errno 98] Address already in use", "OSError: [Errno 98] Address already in use"]
)
def test_a_ranks_own_server_port_taken(prefix: str, last: str) -> None:
    log = "".join(prefix + ln + "\n" for ln in ["Traceback (most recent call last):", *_PY_BIND, last])
    check_root(log, "RUN223", {"errno": 98})


@pytest.mark.parametrize(
    "line",
    [
        "[rank0]: ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already "
        "in use",
        "[rank0]: zmq.error.ZMQError: Address already in use (addr='tcp://*:5555')",
    ],
)
def test_a_ranks_web_server_or_queue_port_is_still_not_the_meeting(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.category != "rendezvous", root


def test_the_same_bind_failure_of_a_lone_web_app_is_not_a_rendezvous() -> None:
    log = "".join(ln + "\n" for ln in ["Traceback (most recent call last):", *_PY_BIND])
    log += "OSError: [Errno 98] Address already in use\n"
    root = root_finding(log)
    assert root is None or root.category != "rendezvous"


# -- other stacks' bootstraps --------------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES[:5])
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "mxnet.base.MXNetError: [13:30:33] src/van.cc:63: Check failed: !ip.empty() failed to get ip",
            "RUN222",
        ),
        (
            "mxnet.base.MXNetError: [09:12:01] src/van.cc:57: Check failed: !interface.empty() failed to get the "
            "interface",
            "RUN222",
        ),
        ("[09:12:01] src/van.cc:81: Check failed: (my_node_.port) != (-1) bind failed", "RUN223"),
        ("[09:12:01] src/van.cc:66: Check failed: port failed to get a port", "RUN223"),
        (
            "[09:12:01] src/./zmq_van.h:129: Check failed: (zmq_connect(sender, addr.c_str())) == (0) connect to "
            "tcp://10.0.0.1:9091 failed: Connection refused",
            "RUN222",
        ),
        ('[09:12:01] src/van.cc:41: Check notnull: Environment::Get()->find("DMLC_PS_ROOT_URI")', "RUN224"),
        (
            "F1027 16:29:05.697548  5717 LightNetwork.cpp:194] Check failed: bind(socket_, (struct sockaddr "
            "*)&serv_addr, sizeof(serv_addr)) >= 0 ERROR on binding 10.76.78.44",
            "RUN223",
        ),
        ("pcclConnect failed with error: MASTER_CONNECTION_FAILED: MASTER_CONNECTION_FAILED", "RUN222"),
        ("pccl.PCCLError: pcclConnect failed with error: RANK_CONNECTION_FAILED", "RUN222"),
    ],
)
def test_other_stacks_could_not_meet(prefix: str, line: str, code: str) -> None:
    check_root(prefix + line + "\n", code)


def test_a_pccl_peer_lost_later_is_not_the_meeting() -> None:
    root = root_finding("pcclUpdateTopology failed with error: RANK_CONNECTION_FAILED\n")
    assert root is None or root.code != "RUN222"


def test_the_ps_lite_address_fact() -> None:
    log = (
        "[09:12:01] src/./zmq_van.h:129: Check failed: (zmq_connect(sender, addr.c_str())) == (0) connect to "
        "tcp://10.0.0.1:9091 failed: Connection refused\n"
    )
    check_root(log, "RUN222", {"address": "tcp://10.0.0.1:9091", "framework": "ps-lite"})


# -- precedence: a store error that echoes another rank's death -----------------------------------------------

DEATHS = [
    '[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 9, in <module>\n'
    "[rank0]: ModuleNotFoundError: No module named 'apex'\n",
    "E0101 10:00:00.000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
    "local_rank: 0 (pid: 1) of binary: python\n",
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.06 GiB is free.\n",
]
ECHOES = [
    "[rank1]: RuntimeError: Stop_waiting response is expected\n",
    "[rank1]: torch.distributed.DistNetworkError: Failed to send, sent 0 bytes. Connection was likely closed. "
    "Did the remote server shutdown or crash?\n",
    "".join(
        "[rank1]:" + _IO.format(s=s, op="recvValue", port=port, why="failed to recv, got 0 bytes")
        for s, port in [(1, 60560), (31, 60562)]
    ),
    "[rank1]:[W socket.cpp:432] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).\n",
    "[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId "
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: Failed to recv, got 0 bytes. "
    "Connection was likely closed. Did the remote server shutdown or crash?\n",
]


@pytest.mark.parametrize("death", DEATHS)
@pytest.mark.parametrize("echo", ECHOES)
@pytest.mark.parametrize("order", ["death first", "echo first"])
def test_a_store_error_never_outranks_the_death_it_echoes(death: str, echo: str, order: str) -> None:
    log = death + echo if order == "death first" else echo + death
    root = root_finding(log)
    assert root is not None and root.category != "rendezvous", (log, root)
    assert any(f.category == "rendezvous" for f in failure_findings(log))


# -- the launcher could not start the ranks on another node (RUN303) -----------------------------------------

_DS_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/deepspeed/launcher/runner.py", line 281, in main\n'
    "    result = subprocess.check_output(hostname_cmd, shell=True)\n"
)


@pytest.mark.parametrize(
    ("log", "facts"),
    [
        (
            "RuntimeError: Using hostfile at /home/u/hostfile but host=gadi-gpu-v100-0011 was not reachable via ssh. "
            "If you are running with a single node please remove /home/u/hostfile or setup passwordless ssh.\n",
            {"host": "gadi-gpu-v100-0011", "launcher": "deepspeed"},
        ),
        (
            _DS_TB
            + "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' "
            "returned non-zero exit status 255.\n",
            {"host": "192.168.3.100", "exitcode": 255},
        ),
        (
            _DS_TB
            + "subprocess.CalledProcessError: Command '['ssh 175.24.121.148 hostname -I']' returned non-zero "
            "exit status 255.\n",
            {"host": "175.24.121.148"},
        ),
        ("pdsh@node1: node2: ssh exited with exit code 255\n", {"host": "node2", "launcher": "pdsh"}),
        (
            "localhost: ssh: connect to host localhost port 22: Connection refused\n",
            {"host": "localhost", "ssh_port": 22},
        ),
        (
            "worker-1: ssh: Could not resolve hostname worker-1: Name or service not known\n",
            {"host": "worker-1"},
        ),
        ("ssh: connect to host 175.24.121.148 port 22: No route to host\n" + _DS_TB, {"ssh_port": 22}),
        ("node-2: Host key verification failed.\npdsh@node-1: node-2: ssh exited with exit code 255\n", {}),
        ("node-2: Permission denied (publickey).\npdsh@node-1: node-2: ssh exited with exit code 255\n", {}),
        (
            "--------------------------------------------------------------------------\n"
            "ORTE was unable to reliably start one or more daemons.\n"
            "This usually is caused by:\n",
            {"launcher": "mpirun", "runtime": "ORTE"},
        ),
        (
            "PRTE was unable to reliably start one or more daemons.\n",
            {"runtime": "PRTE"},
        ),
        (
            "An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun. This\n",
            {"runtime": "ORTE"},
        ),
        (
            '[mpiexec@node1] HYDU_sock_connect (utils/sock/sock.c:145): unable to connect from "node1" to "node2" '
            "(No route to host)\n",
            {"launcher": "hydra", "host": "node2", "error": "No route to host"},
        ),
    ],
)
def test_the_launcher_could_not_start_the_ranks_on_another_node(log: str, facts: dict[str, object]) -> None:
    check_root(log, "RUN303", facts)


@pytest.mark.parametrize(
    "log",
    [
        "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n",
        "ssh: connect to host github.com port 22: Connection timed out\n"
        "fatal: Could not read from remote repository.\n",
        "ssh: Could not resolve hostname bastion: Name or service not known\n",
        "pdsh@node1: node2: ssh exited with exit code 1\n",
    ],
)
def test_ssh_words_that_are_not_a_launch(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN303", root


# -- a stack cut in the wrapper frames below the agent's call of the meeting (torchelastic 0.2, 1.9+) --------

_AGENT = "/home/u/anaconda3/lib/python3.8/site-packages/{pkg}"


@pytest.mark.parametrize("pkg", ["torchelastic", "torch/distributed/elastic"])
@pytest.mark.parametrize(
    "call",
    [
        "self._initialize_workers(worker_group)",
        "self._rendezvous(worker_group)",
        "rdzv_handler.next_rendezvous()",
    ],
)
def test_a_stack_cut_below_the_agents_call_of_the_meeting(pkg: str, call: str) -> None:
    root = _AGENT.format(pkg=pkg)
    log = (
        "Traceback (most recent call last):\n"
        f'  File "{root}/agent/server/api.py", line 831, in _invoke_run\n'
        "    self._restart_workers(self._worker_group)\n"
        f'  File "{root}/agent/server/api.py", line 674, in _restart_workers\n'
        f"    {call}\n"
        f'  File "{root}/metrics/api.py", line 126, in wrapper\n'
        "    result = f(*args, **kwargs\n"
    )
    check_root(log, "RUN221", {"cut": True})


def test_pdshs_ssh_dropped_after_the_ranks_started_yields_to_what_ended_them() -> None:
    log = (
        "worker-1: [2024-01-06 11:41:40,021] [INFO] [comm.py:637:init_distributed] cdb=None\n"
        "worker-1: epoch 0 step 100 loss 2.31\n"
        "worker-0: [rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.06 GiB is free.\n"
        "pdsh@worker-0: worker-1: ssh exited with exit code 255\n"
    )
    root = root_finding(log)
    assert root is not None and root.category == "cuda_oom", root


# -- the new rows under the wrappers real logs put around them -------------------------------------------------


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "ray.exceptions.RayTaskError(DistStoreError): ray::_RayTrainWorker__execute.get_next() (pid=2044, "
            "ip=10.0.0.2) torch.distributed.DistStoreError: Stop_waiting response is expected\n",
            "RUN222",
        ),
        (
            "ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerWrapper.execute_method() (pid=933, "
            "ip=50.147.43.24) RuntimeError: on 10.0.0.7, port: 29500 already in use\n",
            "RUN223",
        ),
        (
            "ray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error "
            "messages for a cause.\ntorch.distributed.DistNetworkError: Failed to send, sent 0 bytes. Connection was "
            "likely closed. Did the remote server shutdown or crash?\n",
            "RUN222",
        ),
        (
            "[2024-03-01 10:00:00,000] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] "
            "exits with return code = 1\nRuntimeError: Stop_waiting response is expected\n",
            "RUN222",
        ),
        (
            "E0301 10:00:00.000 1 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1100] TimeoutError: "
            "timed out waiting for all 2 members to join\n",
            "RUN221",
        ),
    ],
)
def test_new_rows_under_their_wrappers(log: str, code: str) -> None:
    check_root(log, code)


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(
    ("line", "facts"),
    [
        ("AssertionError: MPI world size 1 does not match torch world size 2", {"mpi_world_size": 1}),
        ("AssertionError: MPI rank 0 does not match torch rank 3", {"torch_rank": 3}),
    ],
)
def test_deepspeeds_mpi_discovery_disagrees_with_torch(
    prefix: str, line: str, facts: dict[str, object]
) -> None:
    check_root(prefix + line + "\n", "RUN224", facts)


@pytest.mark.parametrize("prefix", PREFIXES[:5])
@pytest.mark.parametrize(
    ("line", "facts"),
    [
        (
            "RuntimeError: failed to read the MASTER_ADDR environmental variable; maybe you forgot to set it? at "
            "/pytorch/torch/lib/THD/base/init_methods/InitMethodEnv.cpp:18",
            {"missing_variable": "MASTER_ADDR"},
        ),
        (
            "RuntimeError: rank is not set but it is required for env:// init method",
            {"missing_variable": "RANK"},
        ),
        ("RuntimeError: world_size specified both as an environmental variable and to the initializer", {}),
    ],
)
def test_thd_env_settings(prefix: str, line: str, facts: dict[str, object]) -> None:
    check_root(prefix + line + "\n", "RUN224", facts)


@pytest.mark.parametrize(
    "launch",
    [
        "pdsh@node1: node2: ssh exited with exit code 255\n",
        "ORTE was unable to reliably start one or more daemons.\n",
    ],
)
@pytest.mark.parametrize("order", ["launch first", "timeout first"])
def test_the_started_agents_rendezvous_timeout_yields_to_the_node_that_never_started(
    launch: str, order: str
) -> None:
    timeout = (
        "node1: torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: The node 'node1_17_0' rendezvous "
        "has timed out after 900.12 seconds (timeout: 900s).\n"
    )
    log = launch + timeout if order == "launch first" else timeout + launch
    check_root(log, "RUN303")


# -- Paddle's exchange of the communicator id (gen_comm_id_helper.cc) -----------------------------------------

_PD_RETRY = (
    "W0401 10:00:0{n}.000 1234 gen_comm_id_helper.cc:166] connect addr=10.0.0.1:6170 failed {n} times with reason: "
    "Connection refused retry after 0.5 seconds\n"
)


@pytest.mark.parametrize(
    ("log", "code", "facts"),
    [
        (
            "OSError: (External) Unavailable: connect addr=10.0.0.1:6170 timeout, failed reason: Connection refused "
            "[Hint: Expected *total_time < timeout, but received *total_time:900000 >= timeout:900000.] (at "
            "/paddle/paddle/fluid/platform/gen_comm_id_helper.cc:137)\n",
            "RUN222",
            {"endpoint": "10.0.0.1:6170", "framework": "paddle"},
        ),
        (
            "OSError: (External) Unavailable: bind addr=10.0.0.2:6171 timeout, failed reason: Address already in use "
            "[Hint: Expected *total_time < timeout, but received *total_time:900000 >= timeout:900000.]\n",
            "RUN223",
            {"port": 6171},  # rendezvous.py's "Address already in use" row reads it first
        ),
        (_PD_RETRY.format(n=1) + _PD_RETRY.format(n=2), "RUN222", {"endpoint": "10.0.0.1:6170"}),
        (
            "ValueError: (InvalidArgument) Fail to get host by name node-2. (at "
            "/paddle/paddle/fluid/platform/gen_comm_id_helper.cc:214)\n",
            "RUN222",
            {"host": "node-2"},
        ),
        (
            "ValueError: (InvalidArgument) The endpoint should contain host and port, but got node-2. [Hint: Expected "
            "addr.size() == 2UL, but received addr.size():1 != 2UL:2.]\n",
            "RUN224",
            {"endpoint": "node-2"},
        ),
    ],
)
def test_paddles_communicator_id_exchange(log: str, code: str, facts: dict[str, object]) -> None:
    check_root(log, code, facts)


def test_paddles_connect_retry_the_run_went_past_is_silent() -> None:
    log = _PD_RETRY.format(n=1) + "I0401 10:00:05.000 1234 trainer.py:10] epoch 0 step 10 loss 2.3\n"
    root = root_finding(log)
    assert root is None or root.category != "rendezvous"


_AF_TB = 'Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", line 95, in _tcp_rendezvous_handler\n    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\nRuntimeError: Address family not supported by protocol\n'


def test_a_store_socket_of_a_family_the_host_lacks_under_the_tcp_handler() -> None:
    check_root(_AF_TB, "RUN222", {"store_error": "Address family not supported by protocol"})


def test_the_same_errno_without_the_stores_frames_is_not_the_meeting() -> None:
    root = root_finding("RuntimeError: Address family not supported by protocol\n")
    assert root is None or root.category != "rendezvous"
