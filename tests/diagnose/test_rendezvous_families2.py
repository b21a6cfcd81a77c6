"""Rendezvous families read at their source, second part: socket.cpp's per-family name lookup (a step, or
the failure), TCPStore.cpp's connect loop and socket.cpp's waitForInput (torch 2.4+ / 2.6+), TCPStore's
"waiting for workers" (2.2+), elastic's RendezvousClosedError as the echo of a stop signal, the agent's JSON
error file, and stacks that end inside the ranks' meeting with no exception line (a paste cut before the
message). Each case is written from the format string that prints it, with the prefixes real logs add."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.diagnose_root import root_finding as _root

_C10D_PREFIXES = [
    "[W socket.cpp:601] [c10d] ",
    "[W1014 16:41:26.522544000 socket.cpp:755] [c10d] ",
    "[W ..\\torch\\csrc\\distributed\\c10d\\socket.cpp:601] [c10d] ",
    "(WorkerDict pid=2044) [W715 20:00:39.842901446 socket.cpp:752] [c10d] ",
]


# -- socket.cpp: "The {IPv4 |IPv6 |}network addresses of (host, port) cannot be retrieved (gai error: ...)" --


@pytest.mark.parametrize("prefix", _C10D_PREFIXES)
@pytest.mark.parametrize(
    ("host", "gai"),
    [
        ("Os-MacBook-Air.local", "8 - nodename nor servname provided, or not known"),  # macOS EAI_NONAME
        ("XX.XX.XX.XX", "-2 - Name or service not known"),  # an IPv4 literal has no IPv6 address
        ("node-3", "-5 - No address associated with hostname"),  # EAI_NODATA
        ("WIN-PC.DHCP HOST", "11001 - No such host is known. "),  # Winsock WSAHOST_NOT_FOUND
    ],
)
def test_one_ipv6_lookup_without_a_record_is_a_step_not_a_failure(prefix: str, host: str, gai: str) -> None:
    log = f"{prefix}The IPv6 network addresses of ({host}, 56412) cannot be retrieved (gai error: {gai}).\n"
    assert _root(log) is None


@pytest.mark.parametrize("prefix", _C10D_PREFIXES[:2])
@pytest.mark.parametrize(
    "record",
    [
        # the resolver itself failed (EAI_AGAIN): IPv4 fails the same way
        "The IPv6 network addresses of (IDC-COMPUTER, 39067) cannot be retrieved (gai error: -3 - Temporary "
        "failure in name resolution).",
        # a bracketed literal is URL syntax that getaddrinfo never accepts
        "The IPv6 network addresses of ([2605:340:cd51::1540], 59699) cannot be retrieved (gai error: -2 - "
        "Name "
        "or service not known).",
        # no family named: the only lookup failed
        "The network addresses of (trainer-0, 29500) cannot be retrieved (gai error: -2 - Name or service "
        "not "
        "known).",
        "The IPv4 network addresses of (trainer-0, 29500) cannot be retrieved (gai error: -2 - Name or "
        "service "
        "not known).",
    ],
)
def test_a_lookup_that_fails_for_good_is_a_store_host_that_does_not_resolve(prefix: str, record: str) -> None:
    root = _root(prefix + record + "\n")
    assert root is not None and root.code == "RUN222" and root.category == "rendezvous"


def test_the_same_ipv6_lookup_repeated_is_a_client_stuck_on_it() -> None:
    rec = (
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (i-7840df31, 37340) cannot be retrieved "
        "(gai error: -2 - Name or service not known).\n"
    )
    root = _root(rec * 4)
    assert root is not None and root.code == "RUN222"


def test_each_rank_printing_its_one_ipv6_lookup_is_not_a_loop() -> None:
    log = "".join(
        f"[rank{r}]:[W1014 16:41:26.52254{r}000 socket.cpp:755] [c10d] The IPv6 network addresses of "
        "(Os-MacBook-Air.local, 59319) cannot be retrieved (gai error: 8 - nodename nor servname provided, "
        "or not "
        "known).\n"
        for r in range(4)
    )
    assert _root(log) is None


# -- TCPStore (2.2+): "Timed out after N seconds waiting for clients|workers. J/W clients|workers joined." --


@pytest.mark.parametrize("noun", ["clients", "workers"])
@pytest.mark.parametrize(
    "exc",
    ["torch.distributed.DistStoreError: ", "DistStoreError: ", "RuntimeError: ", "[rank0]: DistStoreError: "],
)
def test_store_server_timed_out_waiting_for_the_others(noun: str, exc: str) -> None:
    root = _root(f"{exc}Timed out after 901 seconds waiting for {noun}. 1/2 {noun} joined.\n")
    assert root is not None and root.code == "RUN221"
    assert root.facts["joined"] == 1 and root.facts["expected"] == 2


def test_dynamic_rendezvous_join_timeout_message() -> None:
    log = (
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: The node 'trn-2_81_0' rendezvous "
        "has "
        "timed out after 600.12 seconds (timeout: 600s).\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN221"


# -- RendezvousClosedError: the cause when an agent failed, the echo when an agent was told to stop ----------

_CLOSED_TB = (
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.12/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", '
    "line 676, in run\n"
    "    raise RendezvousClosedError\n"
    "torch.distributed.elastic.rendezvous.api.RendezvousClosedError\n"
)


@pytest.mark.parametrize(
    "signal",
    [
        "W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received 15 death "
        "signal, "
        "shutting down workers\n",
        "WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting "
        "down "
        "workers\n",
    ],
)
@pytest.mark.parametrize("before", [True, False])
def test_closed_rendezvous_of_an_agent_told_to_stop_is_the_signals_echo(signal: str, before: bool) -> None:
    teardown = (
        signal + "W0409 07:28:49.531000 1359 torch/distributed/elastic/multiprocessing/api.py:897] Sending "
    )
    teardown += "process 1365 closing signal SIGTERM\n"
    log = teardown + _CLOSED_TB if before else _CLOSED_TB + "\n" + teardown
    root = _root(log)
    assert root is not None and root.category == "process_crash"


def test_closed_rendezvous_that_ended_its_tasks_before_the_teardown_stays_the_cause() -> None:
    log = (
        _CLOSED_TB + "srun: error: cdr2596: task 1: Exited with exit code 1\n"
        "srun: error: cdr2598: task 2: Exited with exit code 1\n"
        "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers\n"
    )
    root = _root(log)
    assert root is not None and root.category in ("rendezvous", "process_crash")
    assert any(f.code == "RUN221" for f in diagnose_sources([("job.log", log)]))


@pytest.mark.parametrize(
    "line",
    [
        '    "message": "RendezvousClosedError: ",',
        '  "message": "torch.distributed.elastic.rendezvous.api.RendezvousClosedError: ",',
        "RendezvousClosedError",
        "ERROR - torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
    ],
)
def test_closed_rendezvous_in_every_shape(line: str) -> None:
    log = (
        "ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{\n"
        '  "message": {\n' + line + "\n"
        if line.startswith(" ")
        else line + "\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN221"


# -- a stack cut inside the meeting, with no "Traceback" header and no exception line ---------------------

_SP = "/opt/conda/lib/python3.10/site-packages/torch/distributed"


@pytest.mark.parametrize(
    ("frames", "where"),
    [
        (
            f'  File "{_SP}/distributed_c10d.py", line 423, in init_process_group\n'
            "    store, rank, world_size = next(rendezvous_iterator)\n"
            f'  File "{_SP}/rendezvous.py", line 133, in _tcp_rendezvous_handler\n'
            "    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n",
            "_tcp_rendezvous_handler",
        ),
        (
            f'  File "{_SP}/rendezvous.py", line 269, in _env_rendezvous_handler\n'
            "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)\n"
            f'  File "{_SP}/rendezvous.py", line 189, in _create_c10d_store\n'
            "    return TCPStore(\n"
            "           ^^^^^^^^^\n",
            "_create_c10d_store",
        ),
        (
            f'  File "{_SP}/elastic/agent/server/api.py", line 498, in _rendezvous\n'
            "    rdzv_info = spec.rdzv_handler.next_rendezvous()\n"
            f'  File "{_SP}/elastic/rendezvous/static_tcp_rendezvous.py", line 67, in next_rendezvous\n'
            "    self._store = TCPStore(  # type: ignore[call-arg]\n",
            "next_rendezvous",
        ),
        (
            f'  File "{_SP}/elastic/rendezvous/etcd_rendezvous.py", line 152, in next_rendezvous\n'
            "    rdzv_version, rank, w\n",
            "next_rendezvous",
        ),
        (
            '  File "/work/verl/workers/fsdp_workers.py", line 151, in __init__\n'
            "    torch.distributed.init_process_group(\n"
            f'  File "{_SP}/c10d_logger.py", line 81, in wrapper\n'
            "    return func(*args, **kwargs)\n"
            f'  File "{_SP}/c10d_logger.py", line 95, in wrapper\n'
            "    func_return = func(*args, **kwargs)\n"
            f'  File "{_SP}',
            "__init__",
        ),
        (
            '  File "/home/u/fairseq/fairseq_cli/train.py", line 47, in main\n'
            "    args.distributed_rank = distributed_utils.distributed_init(args)\n",
            "main",
        ),
        (  # torchrun's agent cut where it starts its meeting
            '  File "/opt/conda/bin/torchrun", line 8, in <module>\n    sys.exit(main())\n'
            f'  File "{_SP}/elastic/agent/server/api.py", line 862, in _invoke_run\n'
            "    self._initialize_workers(self._worker_group)\n"
            f'  File "{_SP}/elastic/metrics/api.py", line 129, in wrapper\n'
            "    result = f(*args, **kwargs)\n"
            f'  File "{_SP}/elastic/agent/server/api.py", line 692, in _initialize_workers\n'
            "    self._assign_worker_ranks(worker_group)\n",
            "_initialize_workers",
        ),
        (  # indentation lost in the paste (short paths: text/normalize.py may join a long frame line and
            # a flush-left source line that starts in lower case as one hard-wrapped line)
            'File "torch/distributed/elastic/agent/server/api.py", line 683, in _initialize_workers\n'
            "self._rendezvous(worker_group)\n"
            'File "torch/distributed/elastic/metrics/api.py", line 138, in wrapper\n'
            "result = f(*args, **kwargs)\n"
            'File "torch/distributed/elastic/agent/server/api.py", line 498, in _rendezvous\n'
            "rdzv_info = spec.rdzv_handler.next_rendezvous()\n",
            "_rendezvous",
        ),
    ],
)
@pytest.mark.parametrize(
    "lead", ["", "in _invoke_run\n    self._initialize_workers(self._worker_group)\n", "```\n"]
)
def test_a_stack_cut_inside_the_meeting_is_a_rendezvous_failure(frames: str, where: str, lead: str) -> None:
    root = _root(lead + frames + ("```\n" if lead == "```\n" else ""))
    assert root is not None and root.code == "RUN221" and root.category == "rendezvous"
    assert where in root.facts["frame"]


@pytest.mark.parametrize(
    "frames",
    [
        # cut in the training step, after the group was made
        '  File "/work/train.py", line 47, in main\n    dist.init_process_group("nccl")\n'
        '  File "/work/train.py", line 60, in main\n    loss = model(batch)\n'
        '  File "/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\n",
        # cut below the meeting, in the process group's own creation: what failed there is not known
        f'  File "{_SP}/distributed_c10d.py", line 1520, in init_process_group\n'
        "    default_pg, _ = _new_process_group_helper(\n"
        f'  File "{_SP}/distributed_c10d.py", line 1741, in _new_process_group_helper\n'
        "    backend_class = ProcessGroupNCCL(\n",
        # cut deeper in an elastic backend than its entry (store_errors.py reads the backend's raise)
        f'  File "{_SP}/elastic/rendezvous/dynamic_rendezvous.py", line 1125, in next_rendezvous\n'
        "    self._op_executor.run(join_op, deadline, self._get_deadline)\n"
        f'  File "{_SP}/elastic/rendezvous/c10d_rendezvous_backend.py", line 73, in get_state\n'
        '    base64_state: bytes = self._call_store("get", self._key)\n',
        # followed by the run's own prose
        f'  File "{_SP}/rendezvous.py", line 133, in _tcp_rendezvous_handler\n'
        "    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n"
        "Can anyone help? It worked yesterday.\n",
        # the exception line is there: its own rows read it (a KeyboardInterrupt there is interrupted_waits'
        # rendezvous hang, test_u1_families)
        f'  File "{_SP}/rendezvous.py", line 133, in _tcp_rendezvous_handler\n'
        "    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n"
        "RecursionError: maximum recursion depth exceeded\n",
    ],
)
def test_a_stack_that_does_not_end_in_the_meeting_is_not_read_as_one(frames: str) -> None:
    root = _root(frames)
    assert root is None or root.category != "rendezvous"


def test_agent_traceback_cut_right_after_it_began_its_rendezvous() -> None:
    log = (
        "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:699] [default] Stopping "
        "worker group\n"
        "I0213 12:07:20.087000 870572 torch/distributed/elastic/agent/server/api.py:677] [default] "
        "Rendezvous'ing "
        "worker group\n"
        "Traceback (most recent call last):\n"
        '  File "/venv/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN221"


_WORKER_FAILED = (
    "E0213 12:07:20.086000 870572 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
    "local_rank: 0 (pid: 876053) of binary: /venv/bin/python3.11\n"
)


@pytest.mark.parametrize("restart", [True, False])
def test_agent_that_could_not_form_the_group_again_after_a_handled_worker_failure(restart: bool) -> None:
    log = (
        _WORKER_FAILED
        + (
            "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:889] [default] "
            "Worker "
            "group FAILED. 3/3 attempts left; will restart worker group\n"
            if restart
            else ""
        )
        + "I0213 12:07:20.087000 870572 torch/distributed/elastic/agent/server/api.py:677] [default] "
        "Rendezvous'ing worker group\n"
        "Traceback (most recent call last):\n"
        '  File "/venv/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
    )
    root = _root(log)
    assert root is not None
    if restart:
        assert root.code == "RUN221" and root.facts["attempts_left"] == "3/3"
    else:  # no restart: the worker's own failure came first and nothing says it was handled
        assert root.category == "process_crash"


# -- TCPStore.cpp's connect loop and socket.cpp's waitForInput (2.4+ / 2.6+) --------------------------------

_LOOP = (
    "[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host "
    "{host}:59782 - {what} (try={n}, timeout=1800000ms{delay}): Connection reset by peer\n"
)
_PING_FRAMES = (
    "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:680 (most recent call "
    "first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 52 (0x1068316cc in libc10.dylib)\n"
    "frame #3: c10d::TCPStore::ping() + 200 (0x11b4f5738 in libtorch_cpu.dylib)\n"
)


@pytest.mark.parametrize("host", ["100.64.0.1", "[fd00::1]", "trainer-0"])
@pytest.mark.parametrize("tail", ["", _PING_FRAMES])
def test_connect_loop_that_the_log_ends_in(host: str, tail: str) -> None:
    log = (
        "".join(_LOOP.format(host=host, what="retrying", n=n, delay=", delay=5241ms") for n in (5, 6)) + tail
    )
    root = _root(log)
    assert root is not None and root.code == "RUN222" and root.facts["master_port"] == 59782


def test_connect_loop_that_timed_out_fails() -> None:
    root = _root(_LOOP.format(host="10.1.1.1", what="timed out", n=41, delay=""))
    assert root is not None and root.code == "RUN222" and root.severity.value == "fail"


def test_connect_retry_the_run_went_past_is_silent() -> None:
    log = _LOOP.format(host="10.1.1.1", what="retrying", n=1, delay=", delay=312ms") + (
        "epoch 0 step 10 loss 2.31\nepoch 0 step 20 loss 2.02\n"
    )
    assert _root(log) is None


_WAIT = (
    "[W228 18:45:15.738941174 socket.cpp:462] [c10d] waitForInput: poll for socket SocketImpl(fd=11, "
    "addr=[node-2]:38674, remote=[::ffff:33.148.62.162]:23456) returned 0, likely a timeout\n"
    "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, "
    "addr=[node-2]:38674, remote=[::ffff:33.148.62.162]:23456) timed out after 900000ms\n"
)


def test_store_request_that_got_no_answer() -> None:
    root = _root(
        _WAIT + "Traceback (most recent call last):\n" + f'  File "{_SP}/run.py", line 919, in main\n'
    )
    assert root is not None and root.code == "RUN222"
    assert root.facts["master_addr"] == "33.148.62.162" and root.facts["master_port"] == 23456


def test_store_timeout_yields_to_the_death_that_caused_it() -> None:
    log = (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 79.15 GiB of which 1.02 GiB is free.\n" + _WAIT
    )
    root = _root(log)
    assert root is not None and root.category == "cuda_oom"


# -- torch 1.x: the socket's error raised straight from init_process_group -----------------------------------


@pytest.mark.parametrize("err", ["Connection reset by peer", "Broken pipe", "Connection refused"])
def test_socket_error_raised_from_init_process_group(err: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/pytorch-mnist/mnist.py", line 132, in main\n'
        "    dist.init_process_group(backend=args.backend)\n"
        '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 360, in '
        "init_process_group\n"
        "    timeout=timeout)\n"
        f"RuntimeError: {err}\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN222" and root.facts["store_op"] == "init_process_group"


def test_a_cut_stack_whose_line_breaks_were_lost_reads_the_same() -> None:
    log = (
        "| distributed init (rank 0): tcp://192.168.10.100:22015 Traceback (most recent call last): "
        '  File "/home/u/fairseq_cli/train.py", line 380, in distributed_main     main(args, '
        "init_distributed=True) "
        '  File "/home/u/fairseq_cli/train.py", line 47, in main     args.distributed_rank = '
        "distributed_utils.distributed_init(args)\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN221"
    assert _root(log.rstrip("\n") + " RuntimeError: Address already in use\n").code == "RUN223"


# -- MPI_Init's process-manager exchange (MPICH / Intel MPI / MVAPICH PMI, Open MPI's PMIx client) ----------

_MPICH_HEAD = [
    "Abort(3712399) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n",
    "Fatal error in internal_Init_thread: Other MPI error, error stack:\n"
    "internal_Init_thread(71)............: MPI_Init_thread(argc=(nil), argv=(nil), required=3, "
    "provided=0x7ffd3076b7d8) failed\n",
    "Fatal error in PMPI_Init_thread: Other MPI error, error stack:\n",
]


@pytest.mark.parametrize("head", _MPICH_HEAD)
@pytest.mark.parametrize(
    "last",
    [
        "MPIR_pmi_kvs_get(227).......: PMI_KVS_Get returned -1",
        "pmi1_barrier(120)...................: PMI_Barrier returned -1",
        "MPIR_pmi_kvs_put(301)...............: PMI_KVS_Put returned 14",
        "MPIR_pmi_init(183)..................: PMI2_Job_GetId returned 14",
    ],
)
@pytest.mark.parametrize("prefix", ["", "3: ", "[node1:12345] "])
def test_mpi_init_failed_in_the_process_managers_exchange(head: str, last: str, prefix: str) -> None:
    stack = head + "MPIR_Init_thread(159).......: \nMPID_Init(597)..............: \n" + last + "\n"
    log = "".join(prefix + ln + "\n" for ln in stack.splitlines())
    root = _root(log)
    assert root is not None and root.code == "RUN222" and root.category == "rendezvous"
    assert root.facts["pmi_call"] in last


def test_open_mpi_pmix_client_with_no_server() -> None:
    log = (
        "[cd06b9552d9d:00987] OPAL ERROR: Unreachable in file pmix3x_client.c at line 112\n"
        "*** An error occurred in MPI_Init\n*** on a NULL communicator\n"
        "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN222"


@pytest.mark.parametrize(
    "log",
    [
        # MPI_Init that failed in the fabric's provider, not the process manager
        "Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error "
        "stack:\n"
        "MPIR_Init_thread(136)........:\nMPID_Init(1138)..............:\n"
        "MPIDI_OFI_mpi_init_hook(1061): OFI addrinfo() failed (ofi_init.c:1061:MPIDI_OFI_mpi_init_hook:No "
        "data "
        "available)\nIn: PMI_Abort(1091215, Fatal error in PMPI_Init: Other MPI error, error stack:\n",
        # a PMI call of a running job, with no init in sight
        "step 1200 loss 1.92\nPMI_KVS_Get returned -1 while spawning the checkpoint helper\n",
    ],
)
def test_other_mpi_failures_are_not_the_process_managers_exchange(log: str) -> None:
    root = _root(log)
    assert root is None or root.code != "RUN222"


# -- the store's errors of every era in one table, and the other direction: a store error after a death -----

_BARRIER_FRAME = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/x/torch/distributed/distributed_c10d.py", line 4166, in _store_based_barrier\n'
    "[rank1]:     worker_count = store.add(store_key, 0)\n"
)


@pytest.mark.parametrize(
    ("log", "code"),
    [
        (
            "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:80 (errno: 13 - "
            "Permission denied).\nRuntimeError: The server socket has failed to listen on any local network "
            "address.",
            "RUN222",
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            "address. port: 80, useIpv6: 0, code: -13, name: EACCES, message: permission denied",
            "RUN222",
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            "address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
            "RUN223",
        ),
        (
            '  File "train.py", line 5, in <module>\n    dist.init_process_group("nccl", '
            'init_method="tcp://127.0.0.1:'
            '23456", rank=0, world_size=2)\nRuntimeError: Address already in use',
            "RUN223",
        ),
        (
            _BARRIER_FRAME + "[rank1]: torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. "
            "Connection "
            "was likely closed. Did the remote server shutdown or crash?",
            "RUN222",
        ),
        (_BARRIER_FRAME + "[rank1]: torch.distributed.DistNetworkError: Broken pipe", "RUN222"),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousStateError: The rendezvous state is corrupt. "
            "See "
            "inner exception for details.",
            "RUN222",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d "
            "store "
            "has failed. See inner exception for details.",
            "RUN222",
        ),
        (
            "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
            "store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
            "RUN221",
        ),
        (
            "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
            "MASTER_ADDR expected, but not set",
            "RUN224",
        ),
        (
            "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while "
            "trying to "
            "connect to (10.0.0.1, 29500).",
            "RUN222",
        ),
        ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", "RUN222"),
        (
            "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0",
            "RUN222",
        ),
    ],
)
def test_store_errors_of_every_era(log: str, code: str) -> None:
    root = _root(log + "\n")
    assert root is not None and root.code == code and root.category == "rendezvous"


@pytest.mark.parametrize(
    "death",
    [
        '[rank0]: Traceback (most recent call last):\n[rank0]:   File "train.py", line 9, in <module>\n'
        "[rank0]: ModuleNotFoundError: No module named 'apex'\n",
        "E0101 10:00:00.000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) "
        "local_rank: 0 (pid: 1) of binary: python\n",
    ],
)
@pytest.mark.parametrize(
    "echo",
    [
        "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, addr=[node-2]"
        ":38674, remote=[::ffff:10.0.0.1]:23456) timed out after 900000ms\n",
        "[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host "
        "10.0.0.1:29500 - retrying (try=6, timeout=1800000ms, delay=5241ms): Connection refused\n",
        _BARRIER_FRAME + "[rank1]: torch.distributed.DistNetworkError: Connection reset by peer\n",
    ],
)
def test_a_store_error_after_a_rank_died_is_that_deaths_echo(death: str, echo: str) -> None:
    root = _root(death + echo)
    assert root is not None and root.category in ("process_crash", "host_oom")


@pytest.mark.parametrize(
    ("line", "scheme"),
    [
        ("RuntimeError: No rendezvous handler for ://", "://"),
        ("ValueError: No rendezvous handler for env//://", "env//://"),
        ("[rank0]: RuntimeError: No rendezvous handler for nccl://", "nccl://"),
    ],
)
def test_an_init_method_with_no_known_scheme(line: str, scheme: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/x/torch/distributed/rendezvous.py", line 82, in rendezvous\n'
        '    raise RuntimeError("No rendezvous handler for {}://".format(result.scheme))\n' + line + "\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN224" and root.facts["init_method"] == scheme


_EXIT_BARRIER_TB = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/agent/server/api.py", line '
    "904, in "
    "_exit_barrier\n"
    "    barrier_timeout=self._exit_barrier_timeout,\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/utils/store.py", line 31, in '
    "get_all\n"
    '    data = store.get(f"{prefix}{idx}")\n'
)


@pytest.mark.parametrize(
    "error",
    [
        "RuntimeError: Socket Timeout",
        "torch.distributed.DistStoreError: Socket Timeout",
        "torch.distributed.DistNetworkError: Connection reset by peer",
        "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: "
        "/torchelastic/agent/terminal_state0",
    ],
)
def test_the_agents_exit_barrier_store_error_yields_to_the_failure_before_it(error: str) -> None:
    alone = _root(_EXIT_BARRIER_TB + error + "\n")
    assert alone is not None and alone.code == "RUN222" and alone.facts["exit_barrier"] is True
    nccl = (
        "ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No "
        "route "
        "to host\n"
    )
    root = _root(_EXIT_BARRIER_TB + error + "\n" + nccl)
    assert root is not None and root.category == "nccl_network"


# -- "Address already in use": the store's port, or another server's -----------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "INFO:     Application startup complete.\n"
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 7860): address already "
        "in use\n",
        "ERROR 05-01 10:00:00 api_server.py:100] [Errno 98] error while attempting to bind on address "
        "('0.0.0.0', "
        "8000): address already in use\n",
        "zmq.error.ZMQError: Address already in use (addr='tcp://*:5555')\n",
        'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    app.run(port=5000)\n'
        "OSError: [Errno 98] Address already in use\n",
    ],
)
def test_another_servers_port_clash_is_not_the_stores(log: str) -> None:
    root = _root(log)
    assert root is None or root.category != "rendezvous"


def test_python_errno_form_under_the_stores_frames_stays_the_stores() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/x/torch/distributed/elastic/rendezvous/utils.py", line 210, in _try_bind\n'
        "    sock.bind(('', 29500))\n"
        "OSError: [Errno 98] Address already in use\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN223"


@pytest.mark.parametrize(
    "prefix",
    [
        "ConnectionError: ",
        "[rank0]: ConnectionError: ",
        "E0101 10:00:00.000 12 launch.py:217] ConnectionError: ",
        "",  # quoted without its exception type
    ],
)
def test_accelerate_launch_found_its_port_taken(prefix: str) -> None:
    log = (
        prefix + "Tried to launch distributed communication on port `29501`, but another "
        "process "
        "is utilizing it. Please specify a different port (such as using the `--main_process_port` flag or "
        "specifying a different `main_process_port` in your config file) and rerun your script.\n"
    )
    root = _root(log)
    assert root is not None and root.code == "RUN223" and root.facts["port"] == 29501


def test_accelerate_single_node_fallback_warning_is_silent() -> None:
    log = (
        "UserWarning: Port `29500` is already in use. Accelerate will attempt to launch in a standalone-like "
        "mode "
        "by finding an open port automatically for this session.\n"
        "epoch 0 step 10 loss 2.31\n"
    )
    assert _root(log) is None


@pytest.mark.parametrize(
    ("var", "launcher"),
    [
        ("RANK", "torchrun"),
        ("LOCAL_RANK", "torchrun"),
        ("SLURM_PROCID", "srun"),
        ("SLURM_LOCALID", "srun"),
        ("OMPI_COMM_WORLD_RANK", "mpirun"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "mpirun"),
        ("PMI_RANK", "mpirun"),
    ],
)
@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_script_reading_its_launchers_variable_started_without_it(
    var: str, launcher: str, quote: str
) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        f"    rank = int(os.environ[{quote}{var}{quote}])\n"
        '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        f"KeyError: {quote}{var}{quote}\n"
    )
    root = _root(log)
    # a scheduler's own variable (Slurm's, an MPI launcher's) is the job environment's (RUN550, driver_env);
    # torch's own (RANK, LOCAL_RANK) the rendezvous settings (RUN224)
    code = "RUN550" if var.startswith(("SLURM_", "OMPI_", "PMI_")) else "RUN224"
    assert root is not None and root.code == code and root.facts["missing_variable"] == var
    assert launcher in root.message


@pytest.mark.parametrize(
    "log",
    [
        # an issue body wrapped at 80 columns: the exception type and the errno text on different lines
        "RuntimeError: The server socket has failed to listen on any local network\n"
        "address. The server socket has failed to bind to [::]:29600 (errno: 98 - Address\n"
        "already in use). The server socket has failed to bind to 0.0.0.0:29600 (errno:\n"
        "98 - Address already in use).\n",
        # socket.cpp's record quoted without its prefix
        "The server socket has failed to bind to [::]:29600 (errno: 98 - Address already in use).\n",
    ],
)
def test_server_socket_records_without_their_prefix(log: str) -> None:
    root = _root(log)
    assert root is not None and root.code == "RUN223" and root.facts["port"] == 29600


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "The client socket has failed to connect to [node-1]:29500 (errno: 113 - No route to host).",
            "RUN222",
        ),
        ("The client socket has failed to connect to any network address of (node-1, 29500).", "RUN222"),
        ("The server socket has failed to listen on any local network address.", "RUN222"),
    ],
)
def test_socket_records_quoted_bare(line: str, code: str) -> None:
    root = _root(line + "\n")
    assert root is not None and root.code == code
