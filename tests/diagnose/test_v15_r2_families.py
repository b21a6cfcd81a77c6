"""v15 dev, rendezvous and killed-process families: Open MPI's own signal handler (opal stacktrace) and
torch elastic's ProcessFailure repr with a fatal signal (RUN131), the shell's lone "Terminated" after two
ranks' same-length warnings (a record, not a terminal's wrap), TCPStore 2.2-2.3's ping nonce assert,
torchelastic's etcd rendezvous losing a state key, torch 1.x's bare "Socket Timeout" quoted in a title, a
vLLM engine worker's ZMQ port already bound (rendezvous), and the detectron2-style launchers' dist_url=auto
refused on several machines (RUN224). Each case is written from the format string that prints it, with
the prefixes real logs add; look-alikes stay silent."""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# -- Open MPI's signal handler (opal/util/stacktrace.c) ---------------------------------------------------

_OPAL = (
    "[gn05:194925] *** Process received signal ***\n"
    "[gn05:194925] Signal: {sig}\n"
    "[gn05:194925] Signal code: Address not mapped (1)\n"
    "[gn05:194925] Failing at address: 0xb\n"
    "[gn05:194925] [ 0] /usr/lib64/libpthread.so.0(+0xf6d0)[0x2aaaab2446d0]\n"
    "[gn05:194925] [ 1] /opt/conda/lib/python3.8/site-packages/horovod/torch/mpi_lib_v2.cpython-38.so"
    "(+0x9a1b2)[0x2aaab1c9a1b2]\n"
    "[gn05:194925] *** End of error message ***\n"
)


@pytest.mark.parametrize(
    "sig,name",
    [
        ("Segmentation fault (11)", "SIGSEGV"),
        ("Bus error (7)", "SIGBUS"),
        ("Illegal instruction (4)", "SIGILL"),
        ("Floating point exception (8)", "SIGFPE"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "[rank0]: "])
def test_open_mpi_signal_handler(prefix: str, sig: str, name: str) -> None:
    check_root(prefixed(prefix, _OPAL.format(sig=sig)), "RUN131", {"signal": name, "reporter": "open mpi"})


def test_open_mpi_signal_line_cut_from_its_header_keeps_host_and_pid() -> None:
    log = "[node-3:4242] Signal: Segmentation fault (11)\n[node-3:4242] Signal code:  (128)\n"
    check_root(log, "RUN131", {"signal": "SIGSEGV", "host": "node-3", "pid": 4242})


@pytest.mark.parametrize(
    "log",
    [
        "INFO Signal: SIGTERM handler installed (15)\n",
        "[node-3:4242] Signal: Terminated (15)\n",  # not a fatal signal of the process's own
    ],
)
def test_open_mpi_signal_look_alikes_stay_silent(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != "RUN131", root


def test_open_mpi_signal_line_alone_is_a_crash_in_words_not_open_mpis_record() -> None:
    # No header, no [host:pid]: a quote in prose, which no longer names Open MPI as the reporter; the shell's
    # words for the crash are still read as a segfault (the title row of rules/vocabulary.py).
    root = root_finding("Signal: Segmentation fault (11)\n")
    assert root is not None and root.code == "RUN131", root
    assert root.facts.get("reporter") != "open mpi" and "host" not in root.facts, root.facts


# -- torch elastic's ProcessFailure repr ----------------------------------------------------------------

_FAILURE = (
    "ProcessFailure(local_rank={lr}, pid=54, exitcode={code}, error_file='<N/A>', "
    "error_file_data={{'message': '<NONE>'}}, message='Signal {num} ({sig}) received by PID 54', "
    "timestamp=1711419181)"
)


@pytest.mark.parametrize("code,sig", [(-7, "SIGBUS"), (-11, "SIGSEGV"), (-4, "SIGILL")])
@pytest.mark.parametrize(
    "wrap",
    [
        "The worker fails with {{0: {f}}}",
        "[2024-03-26 10:13:01,552] [ERROR] [training.py:312:_report_failure] "
        "RunResult(state=WorkerState.FAILED, return_values={{}}, failures={{1: {f}}})",
    ],
)
def test_elastic_process_failure_with_a_fatal_signal(code: int, sig: str, wrap: str) -> None:
    f = _FAILURE.format(lr=1, code=code, num=-code, sig=sig)
    check_root(wrap.format(f=f) + "\n", "RUN131", {"signal": sig, "exitcode": code, "pid": 54})


@pytest.mark.parametrize("code,sig", [(-15, "SIGTERM"), (-2, "SIGINT")])
def test_elastic_process_failure_killed_from_outside_is_not_a_crash(code: int, sig: str) -> None:
    f = _FAILURE.format(lr=0, code=code, num=-code, sig=sig)
    root = root_finding("The worker fails with {0: " + f + "}\n")
    assert root is None or root.code != "RUN131", root


# -- the shell's lone "Terminated" after two ranks' same warning ---------------------------------------------

_BEST_GUESS = (
    "[W ProcessGroupNCCL.cpp:1569] Rank {r} using best-guess GPU {r} to perform barrier as devices used by "
    "this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
    "incorrect.Specify device_ids in barrier() to force use of a particular device.\n"
)


@pytest.mark.parametrize("last", ["Terminated", "Killed"])
def test_lone_shell_report_after_same_length_lines_is_its_own_record(last: str) -> None:
    log = _BEST_GUESS.format(r=0) + _BEST_GUESS.format(r=1) + last + "\n"
    root = root_finding(log)
    assert root is not None and root.category in ("process_crash", "host_oom"), root


# -- the rendezvous store: ping nonce, etcd key, bare 1.x errors in a title -------------------------------

NONCE = [
    "RuntimeError: nonce == returnedNonce INTERNAL ASSERT FAILED at "
    '"../torch/csrc/distributed/c10d/TCPStore.cpp":409, please report a bug to PyTorch. Ping failed, '
    "invalid nonce returned",
    "Sglang RuntimeError: nonce == returnedNonce INTERNAL ASSERT FAILED",
    "torch.distributed.DistStoreError: Ping failed, invalid nonce returned",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line", NONCE)
def test_store_ping_nonce_assert(prefix: str, line: str) -> None:
    check_root(prefixed(prefix, line), "RUN222", {"problem": "store_protocol"})


_ETCD_TB = (
    '  File "/usr/local/lib/python3.8/dist-packages/etcd/__init__.py", line 306, in handle\n'
    "    raise exc(msg, payload)\n"
    "etcd.EtcdKeyNotFound: Key not found : {key}\n"
    "INFO 2024-06-12 12:55:46,077 Node x08j11224 Attempting to join next rendezvous\n"
)


@pytest.mark.parametrize(
    "key",
    [
        "/torchelastic/p2p/run_c63361db-da0b-40ca-90a6-a59be99e2a0b/rdzv/next_strategy",
        "/torchelastic/p2p/run_default/rdzv/active_version",
        "/myjob/rdzv/version_counter",
    ],
)
def test_etcd_rendezvous_key_lost(key: str) -> None:
    check_root(_ETCD_TB.format(key=key), "RUN222", {"backend": "etcd", "key": key})


def test_etcd_key_of_the_application_is_not_the_rendezvous() -> None:
    root = root_finding("etcd.EtcdKeyNotFound: Key not found : /myapp/config/learning_rate\n")
    assert root is None or root.category != "rendezvous", root


@pytest.mark.parametrize(
    "title",
    [
        "PreTrain-T5-[get_samples_mapping]-[ RuntimeError: Socket Timeout ]",
        "[RuntimeError: Socket Timeout] when the dataset index is built",
        "Megatron T5 pretraining fails with RuntimeError: Socket Timeout",
        'all_reduce after building the index map ends in "RuntimeError: Socket Timeout" on rank 3',
    ],
)
def test_bare_store_errors_quoted_in_a_title(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.category == "rendezvous", root


@pytest.mark.parametrize(
    "log",
    [
        "ConnectionResetError: [Errno 104] Connection reset by peer\n",
        # an errno alone could be any socket of any program (test_torch_message_audit pins it silent)
        "[RuntimeError: Connection reset by peer] When scaling up training jobs\n",
        "RuntimeError: Connection reset by peer (this error originated at tensorpipe/transport/uv/"
        "connection_impl.cc:157)\n",
        "requests.exceptions.ConnectionError: ('Connection aborted.', RuntimeError: Socket Timeout now)\n",
    ],
)
def test_other_sockets_errors_are_not_the_store(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.category != "rendezvous", root


# -- a ZMQ port already bound by an engine's worker ----------------------------------------------------------

ZMQ = [
    "(Worker_TP11 pid=113) ERROR 08-10 23:02:36 [multiproc_executor.py:898] zmq.error.ZMQError: Address "
    "already in use (addr='tcp://10.0.0.58:40043')\n"
    "(Worker_TP9 pid=111) ERROR 08-10 23:02:36 [multiproc_executor.py:898] WorkerProc failed to start.\n",
    "(VllmWorker rank=3 pid=77) ERROR 01-02 10:00:00 [multiproc_executor.py:500] zmq.error.ZMQError: Address "
    "already in use (addr='tcp://10.1.1.2:40043')\n",
    "ERROR 01-02 10:00:00 [shm_broadcast.py:260] zmq.error.ZMQError: Address already in use "
    "(addr='tcp://*:51234')\n",
]


@pytest.mark.parametrize("log", ZMQ)
def test_engine_worker_zmq_port_in_use(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.category == "rendezvous", root


@pytest.mark.parametrize(
    "log",
    [
        "zmq.error.ZMQError: Address already in use (addr='tcp://*:5555')\n",
        "(APIServer pid=1) zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5555')\n",
    ],
)
def test_a_zmq_port_of_another_server_is_not_the_rendezvous(log: str) -> None:
    root = root_finding(log)
    assert root is None or root.category != "rendezvous", root


# -- dist_url=auto on several machines (detectron2's launch and its copies) ---------------------------------

DIST_URL_AUTO = [
    ' assert num_machines == 1, "dist_url=auto is not supported for multi-machine jobs."\n'
    "AssertionError: dist_url=auto is not supported for multi-machine jobs.\n",
    "AssertionError: dist_url=auto not supported in multi-machine jobs.\n",
    "AssertionError: dist_url=auto cannot work with distributed training.\n",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log", DIST_URL_AUTO)
def test_dist_url_auto_on_several_machines(prefix: str, log: str) -> None:
    check_root(prefixed(prefix, log.rstrip("\n")), "RUN224", {"init_method": "auto"})


@pytest.mark.parametrize(
    "log",
    [
        "Command Line Args: Namespace(dist_url='auto', num_gpus=8, num_machines=1)\n",
        "[12/01 10:00:00 d2.engine.launch]: dist_url=auto picks a free port on this machine\n",
    ],
)
def test_dist_url_auto_on_one_machine_stays_silent(log: str) -> None:
    assert root_finding(log) is None
