"""Families of the ranks' meeting read at their sources (v16 dev misses of rendezvous_init), with look-alikes
that stay silent: Paddle's NCCL-id exchange ending in the launcher's teardown (platform/gen_comm_id_helper.cc
2.1+, imperative/nccl_context.cc 1.x-2.0, distributed/utils/launch_utils.py), socket.cpp's waitForInput poll
record (torch 2.4-2.13 libtorch_cpu strings: "waitForInput: poll for socket {} returned 0, likely a timeout"),
TCPStore.cpp's "{}/{} clients joined" as a title, socket.cpp's Windows "(system error: N - ...)" before the
raise, the launchers' variables read by a script (torchpack 0.3.1 distributed/context.py MASTER_HOST), torch
1.x's store socket EAGAIN under init_process_group, THD's duplicate rank (0.4 General.cpp), torch_xla 1.x's
XRT mesh service (mesh_service.cc: RUN371) and PMIx's pmix_init help text (help-pmix-runtime.txt)."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, TRACEBACK_HEAD, check_root, prefixed, root_finding

PADDLE_TEARDOWN = (
    "INFO 2021-07-21 18:25:47,709 launch_utils.py:327] terminate all the procs\n"
    "ERROR 2021-07-21 18:25:47,709 launch_utils.py:584] ABORT!!! Out of all 2 trainers, the trainer process "
    "with rank=[1] was aborted. Please check its log.\n"
    "INFO 2021-07-21 18:25:50,714 launch_utils.py:327] terminate all the procs"
)
PADDLE_RETRIES = [
    (
        "W0721 18:25:40.236928  6826 gen_comm_id_helper.cc:120] connect addr=10.0.0.2:6170 failed 1 times "
        "with reason: Connection refused retry after 0.5 seconds\n"
        "W0721 18:25:40.737262  6826 gen_comm_id_helper.cc:120] connect addr=10.0.0.2:6170 failed 2 times "
        "with reason: Connection refused retry after 1 seconds",
        "10.0.0.2:6170",
    ),
    (
        "W0516 22:13:52.367004 35724 nccl_context.cc:142] Socket connect worker 10.0.0.2:6170 failed, try "
        "again after 3 seconds.",
        "10.0.0.2:6170",
    ),
]


@pytest.mark.parametrize(("retries", "ep"), PADDLE_RETRIES)
def test_paddle_id_exchange_that_ends_in_the_launchers_teardown(retries: str, ep: str) -> None:
    check_root(retries + "\n" + PADDLE_TEARDOWN, "RUN222", {"framework": "paddle", "endpoint": ep})


@pytest.mark.parametrize(("retries", "ep"), PADDLE_RETRIES)
def test_paddle_id_exchange_that_the_run_went_past_is_silent(retries: str, ep: str) -> None:
    log = (
        retries
        + "\nI0516 22:14:10.000000 35724 nccl_context.cc:200] init nccl context nranks: 2\n"
        + ("[2021/05/16 22:15:00] root INFO: epoch: [1/100], iter: 10, lr: 0.001, loss: 1.2")
    )
    assert root_finding(log) is None


POLL = (
    "[W1106 10:00:01.024955281 socket.cpp:462] [c10d] waitForInput: poll for socket SocketImpl(fd=66, "
    "addr=[::ffff:10.0.0.78]:50434, remote=[::ffff:10.0.0.78]:29500) returned 0, likely a timeout"
)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES[:5])
@pytest.mark.parametrize("line", [POLL, POLL.split("[c10d] ")[1]])
def test_store_poll_that_gave_nothing(line: str, prefix: str) -> None:
    check_root(prefixed(prefix, line), "RUN222", {"master_addr": "10.0.0.78", "master_port": 29500})


def test_store_poll_then_the_run_going_on_is_silent() -> None:
    assert root_finding(POLL + "\n{'loss': 1.234, 'learning_rate': 2e-05, 'epoch': 0.1}") is None


@pytest.mark.parametrize(
    ("line", "joined", "expected"),
    [
        ("torch.distributed.DistStoreError: 16/32 clients joined", 16, 32),
        ('error: "torch.distributed.DistStoreError: 3/4 clients joined.', 3, 4),
        ("[Bug] service startup failed: DistStoreError: 1/2 clients joined", 1, 2),
    ],
)
def test_store_server_wait_cut_to_its_tail(line: str, joined: int, expected: int) -> None:
    check_root(line, "RUN221", {"joined": joined, "expected": expected})


def test_windows_connect_record_followed_by_its_raise() -> None:
    log = (
        "preparing accelerator\n[W socket.cpp:663] [c10d] The client socket has failed to connect to "
        "[kubernetes.docker.internal]:29500 (system error: 10049 - The requested address is not valid in its "
        "context.).\n" + TRACEBACK_HEAD + '  File "F:\\kohya_ss\\train_network.py", line 221, in train\n'
        "    accelerator = train_util.prepare_accelerator(args)"
    )
    check_root(log, "RUN222", {"master_port": 29500, "errno": 10049})


def test_windows_connect_record_then_the_runs_own_lines_is_silent() -> None:
    log = (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [DESKTOP-1]:29500 (system "
        "error: 10049 - The requested address is not valid in its context.).\n"
        "steps:   1%|  | 10/1000 loss=0.1"
    )
    assert root_finding(log) is None


@pytest.mark.parametrize(
    ("var", "launcher"),
    [("MASTER_HOST", "torchpack"), ("PADDLE_TRAINER_ID", "paddle"), ("MV2_COMM_WORLD_RANK", "MVAPICH2")],
)
def test_launcher_variable_read_by_the_script(var: str, launcher: str) -> None:
    log = (
        TRACEBACK_HEAD
        + '  File "/envs/x/lib/python3.8/os.py", line 673, in __getitem__\n'
        + "    raise KeyError(key) from None\n"
        + f"KeyError: '{var}'"
    )
    root = root_finding(log)
    code = "RUN550" if var.startswith("MV2_") else "RUN224"  # MVAPICH2's mpirun: a scheduler's variable
    assert root is not None and root.code == code and launcher in root.message, root


def test_store_socket_eagain_under_init_process_group() -> None:
    log = (
        TRACEBACK_HEAD
        + '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", '
        "line 370, in init_process_group\n    timeout=timeout)\n"
        "RuntimeError: Resource temporarily unavailable"
    )
    check_root(log, "RUN222", {"store_error": "Resource temporarily unavailable"})


def test_eagain_outside_the_store_is_not_the_store() -> None:
    log = (
        TRACEBACK_HEAD
        + '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line '
        "1011, in _try_get_data\n    data = self._data_queue.get(timeout=timeout)\n"
        "RuntimeError: Resource temporarily unavailable"
    )
    root = root_finding(log)
    assert root is None or root.code != "RUN222"


def test_thd_duplicate_rank() -> None:
    log = (
        TRACEBACK_HEAD
        + '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/__init__.py", line 94, '
        "in init_process_group\n    group_name, rank)\n"
        "RuntimeError: more than one node have assigned same rank at "
        "/opt/pytorch/pytorch/torch/lib/THD/process_group/General.cpp:17"
    )
    check_root(log, "RUN224", {"problem": "duplicate rank"})


XLA = [
    (
        "2020-07-12 03:12:53.541657: I    3489 tensorflow/compiler/xla/xla_client/mesh_service.cc:208] "
        "Waiting to connect to client mesh master (300 seconds) 10.0.0.6:8477\n"
        "2020-07-12 03:12:53.542777: E    3489 "
        "tensorflow/compiler/xla/xla_client/tf_logging.cc:11] Failed to retrieve mesh configuration: "
        "ordinal (13)",
        {"mesh_master": "10.0.0.6:8477", "error": "ordinal (13)"},
    ),
    (
        "RuntimeError: tensorflow/compiler/xla/xla_client/mesh_service.cc:316 : Check failed: "
        "impl_->channel->WaitForConnected( std::chrono::system_clock::now() + "
        "std::chrono::seconds(connect_wait_seconds)) \n*** Begin stack trace ***\n"
        "\ttensorflow::CurrentStackTrace()"
        "\n\txla::service::MeshClient::MeshClient(std::string const&)\n*** End stack trace ***\n"
        "Failed to connect to client mesh master: tpu-vm-0.internal:38973",
        {"mesh_master": "tpu-vm-0.internal:38973"},
    ),
    (
        "RuntimeError: tensorflow/compiler/xla/xla_client/mesh_service.cc:364 : Failed to meet rendezvous "
        "'torch_xla.core.xla_model.save': Socket closed (14)",
        {"rendezvous_tag": "torch_xla.core.xla_model.save", "error": "Socket closed (14)"},
    ),
]


@pytest.mark.parametrize(("log", "facts"), XLA)
@pytest.mark.parametrize("prefix", ["", "2020-07-12 03:12:53 10.0.0.3 [2] "])
def test_xla_xrt_mesh_service(log: str, facts: dict, prefix: str) -> None:
    check_root(prefixed(prefix, log), "RUN371", facts)


def test_xla_mesh_wait_on_a_healthy_start_is_silent() -> None:
    log = (
        "2020-07-12 03:12:53.541657: I    3489 tensorflow/compiler/xla/xla_client/mesh_service.cc:208] "
        "Waiting to connect to client mesh master (300 seconds) 10.0.0.6:8477\n"
        "| Training Device=xla:1/0 Step=20 Loss=2.1"
    )
    assert root_finding(log) is None


PMIX = """A requested component was not found, or was unable to be opened.  This
means that this component is either not installed or is unable to be
used on your system (e.g., sometimes this means that shared libraries
that the component requires are unable to be found/loaded).  Note that
PMIX stopped checking at the first component that it did not find.

Host:      node-1
Framework: psec
Component: munge

It looks like pmix_init failed for some reason; your parallel process is
likely to abort.  There are many reasons that a parallel process can
fail during pmix_init; some of which are due to configuration or
environment problems.  This failure appears to be an internal failure;
here's some additional information (which may only be relevant to an
PMIX developer):

  pmix_psec_base_open failed
  --> Returned value -46 instead of PMIX_SUCCESS"""


def test_pmix_init_that_could_not_open_a_component() -> None:
    check_root(PMIX, "RUN304", {"framework": "psec", "component": "munge", "step": "pmix_psec_base_open"})


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "torch.distributed.DistNetworkError: The server socket has failed to bind. port: 29500, "
            "useIpv6: 0, code: -99, name: EADDRNOTAVAIL, message: cannot assign requested address",
            "RUN222",
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on provided socket. "
            "socket: 12, code: -22, name: EINVAL, message: invalid argument",
            "RUN222",
        ),
        (
            "RuntimeError: The server socket has failed to bind. port: 80, useIpv6: 0, code: -13, "
            "name: EACCES, message: permission denied",
            "RUN224",
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to bind. port: 29500, "
            "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
            "RUN223",
        ),
    ],
)
def test_libuv_store_server_that_could_not_bind(line: str, code: str) -> None:
    check_root(line, code)


# Paddle 2.4-2.6 phi/core/distributed/store/tcp_utils.cc (strings of paddlepaddle 2.6.2's libpaddle.so)
@pytest.mark.parametrize(
    ("line", "code", "ep"),
    [
        (
            "OSError: (Unavailable) Network 10.0.0.1:6170 cannot be connected. (at "
            "/paddle/paddle/phi/core/distributed/store/tcp_utils.cc:112)",
            "RUN222",
            "10.0.0.1:6170",
        ),
        (
            "RuntimeError: (PreconditionNotMet) Bind network on 10.0.0.1:6170 failed. (at "
            "/paddle/paddle/phi/core/distributed/store/tcp_utils.cc:150)",
            "RUN223",
            "10.0.0.1:6170",
        ),
        (
            "OSError: (Unavailable) Create socket to connect 10.0.0.1:6170 failed. Details: Connection "
            "refused. (at /paddle/paddle/phi/core/distributed/store/tcp_utils.cc:95)",
            "RUN222",
            "10.0.0.1:6170",
        ),
    ],
)
def test_paddle_tcpstore_sockets(line: str, code: str, ep: str) -> None:
    check_root(line, code, {"endpoint": ep})


# Paddle 2.3+ launch/controllers/controller.py: the failed container's log tail follows "ERROR LOG DETAIL"
def test_paddle_id_retries_in_the_new_launchers_error_detail() -> None:
    log = (
        "LAUNCH ERROR 2024-01-01 10:00:00,000 Container failed !!!\n"
        "Container rank 1 status failed cmd ['python', '-u', 'train.py'] code 1 log log/workerlog.1\n"
        "LAUNCH INFO 2024-01-01 10:00:00,000 -------------------- ERROR LOG DETAIL --------------------\n"
        "W0721 18:25:40.236928  6826 gen_comm_id_helper.cc:120] connect addr=10.0.0.2:6170 failed 2 times "
        "with reason: Connection refused retry after 1 seconds\n"
        "LAUNCH INFO 2024-01-01 10:00:03,000 Exit code 1"
    )
    check_root(log, "RUN222", {"endpoint": "10.0.0.2:6170"})
