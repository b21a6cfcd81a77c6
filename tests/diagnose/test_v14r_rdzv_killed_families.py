"""Start-up meetings of other stacks and worker deaths, read at their sources (v14 rule work, group
rdzv_killed):

- Dask: the nanny's record of its worker's end (distributed/nanny.py _death_message): SIGKILL RUN121, a fatal
  signal RUN131, SIGTERM / a status RUN133; comm/core.py's connect timeouts and comm/tcp.py's connector error
  toward the scheduler: RUN222;
- Ray: 1.x service_based_gcs_client.cc "Couldn't reconnect to GCS server", services.py "Unable to connect to
  GCS at" and the Redis era's "Unable to connect to Redis at .. after N retries": RUN222;
- MindSpore ClusterContext (cluster_context.cc, constants.h): MS_ROLE / WORKER_NUM / MS_SCHED_* checks RUN224,
  MS_SCHED_PORT occupied RUN223, the last "Topology build timed out" retry RUN221;
- Open MPI orted / PRRTE prted help text [timedout] and mpirun's aggregation of it: RUN221;
- a raised resolver error (socket.gaierror) with no store words and no download around it: RUN222 tier 1;
- gRPC core's subchannel connect failures (TF 1.x's I-level lines): RUN222 until the job goes on;
- gloo's connect failures after ProcessGroupGloo's "Unable to resolve hostname" loopback fallback: RUN222;
- a GitHub Actions log viewer's line links inside a pasted log (text/shapes.py).
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.text.shapes import decode
from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[rank3]: ", "node7: ", "[1,0]<stderr>:", "2025-01-02 03:04:05,678 - ERROR - "]

ONE_LINE = [
    # Dask nanny (WARNING before 2021, INFO since)
    ("distributed.nanny - WARNING - Worker process 30448 was killed by signal 15", "RUN133", {"pid": 30448}),
    ("distributed.nanny - INFO - Worker process 150 was killed by signal 9", "RUN121", {"signal": "SIGKILL"}),
    (
        "distributed.nanny - INFO - Worker process 512 was killed by signal 11",
        "RUN131",
        {"signal": "SIGSEGV"},
    ),
    ("distributed.nanny - INFO - Worker process 512 was killed by unknown signal", "RUN133", {"pid": 512}),
    ("distributed.nanny - INFO - Worker process 77 exited with status 1", "RUN133", {"exitcode": 1}),
    # Dask connect
    (
        "OSError: Timed out trying to connect to 'tcp://172.17.0.4:8786' after 10 s: in "
        "<distributed.comm.tcp.TCPConnector object at 0x7f87a4569da0>: ConnectionRefusedError: [Errno 111] "
        "Connection refused",
        "RUN222",
        {"address": "tcp://172.17.0.4:8786", "framework": "dask"},
    ),
    (
        "OSError: Timed out trying to connect to tcp://10.0.0.5:8786 after 30 s",
        "RUN222",
        {"address": "tcp://10.0.0.5:8786"},
    ),
    (
        "IOError: Timed out trying to connect to 'tcp://127.0.0.1:8786' after 5 s: connect() didn't finish "
        "in time",
        "RUN222",
        {"connect_timeout_s": 5.0},
    ),
    (
        "OSError: Timed out during handshake while connecting to tls://10.1.2.3:8786 after 10 s",
        "RUN222",
        {"address": "tls://10.1.2.3:8786"},
    ),
    (
        "distributed.comm.core.CommClosedError: in <distributed.comm.tcp.TCPConnector object at 0x7f0a1>: "
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "RUN222",
        {"framework": "dask"},
    ),
    # Ray
    (
        "[2021-04-18 06:54:54,934 C 756 756] service_based_gcs_client.cc:229: Couldn't reconnect to GCS "
        "server. "
        "The last attempted GCS server address was 10.42.0.44:43507",
        "RUN222",
        {"address": "10.42.0.44:43507", "framework": "ray"},
    ),
    (
        "2023-05-22 16:41:02,771 WARNING utils.py:1416 -- Unable to connect to GCS at 172.31.207.130:6379. "
        "Check "
        "that (1) Ray GCS with matching version started successfully at the specified address, and (2) there "
        "is no firewall setting preventing access.",
        "RUN222",
        {"address": "172.31.207.130:6379"},
    ),
    (
        "ConnectionError: Unable to connect to Redis at 10.0.0.1:6379 after 12 retries. Check that "
        "10.0.0.1:6379 is reachable from this machine.",
        "RUN222",
        {"address": "10.0.0.1:6379"},
    ),
    # MindSpore
    (
        "RuntimeError: Role name '' is invalid. Maybe you are trying to call "
        "'mindspore.communication.init()' "
        "without using 'mpirun', which will make MindSpore load several environment variables and check "
        "their "
        "validation.",
        "RUN224",
        {"framework": "mindspore", "ms_role": ""},
    ),
    (
        "RuntimeError: Role name 'MS_WORKERS' is invalid. Maybe you are trying to call "
        "'mindspore.communication.init()' without using 'mpirun', which will make MindSpore load several "
        "environment variables and check their validation. Please use 'mpirun' to launch this process to fix "
        "this issue, or refer to this link if you want to run distributed training using 'msrun'",
        "RUN224",
        {"ms_role": "MS_WORKERS"},
    ),
    ("RuntimeError: Please set env 'WORKER_NUM' to a number greater than 0.", "RUN224", {}),
    ("RuntimeError: The environment variable MS_WORKER_NUM is invalid.", "RUN224", {}),
    (
        "RuntimeError: Scheduler and worker's configured MS_SCHED_HOST or MS_SCHED_PORT is not consistent "
        "with "
        "each other.",
        "RUN224",
        {},
    ),
    ("RuntimeError: Configured scheduler port MS_SCHED_PORT is occupied by other processes.", "RUN223", {}),
    (
        "[WARNING] DISTRIBUTED(1234,ffff,python):2024-01-01-00:00:00.000.000 [mindspore/ccsrc/distributed/"
        "cluster/cluster_context.cc:143] BuildCluster] Topology build timed out., retry(3600/3600).",
        "RUN221",
        {"retries": 3600},
    ),
    # Open MPI / PRRTE aggregation of the daemons' [timedout] help text
    (
        "[node1:12345] 3 more processes have sent help message help-orted.txt / timedout",
        "RUN221",
        {"launcher": "open mpi"},
    ),
    ("[mpi019:22297] 1 more process has sent help message help-prted.txt / timedout", "RUN221", {}),
    # a bare resolver error
    (
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "RUN222",
        {"error": "name resolution"},
    ),
    ("socket.gaierror: [Errno 8] nodename nor servname provided, or not known", "RUN222", {}),
    # gRPC core's subchannel, newer wording
    (
        "I0000 00:00:1700000000.123456   12345 subchannel.cc:806] subchannel 0x5631 "
        "{address=ipv4:10.0.1.4:14417, "
        "args={grpc.primary_user_agent=grpc-c++}}: connect failed (UNAVAILABLE: ipv4:10.0.1.4:14417: "
        "Failed to "
        "connect to remote host: Connection refused), backing off for 1000 ms",
        "RUN222",
        {"peer": "ipv4:10.0.1.4:14417"},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "code", "facts"), ONE_LINE)
def test_one_line_of_each_family_behind_every_prefix(prefix: str, line: str, code: str, facts: dict) -> None:
    _check(prefix + line, code, facts)


def test_dask_nanny_restarts_after_its_memory_budget_stay_host_oom() -> None:
    log = (
        "distributed.worker - WARNING - Worker is at 84% memory usage. Pausing worker.\n"
        "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting\n"
        "distributed.nanny - INFO - Worker process 79862 was killed by signal 15\n"
        "distributed.nanny - WARNING - Restarting worker\n"
    )
    _check(log, "RUN121", {"reason": "memory_budget"})


def test_dask_connect_to_another_worker_mid_run_yields_to_its_death() -> None:
    log = (
        "distributed.nanny - INFO - Worker process 88 was killed by signal 11\n"
        "distributed.worker - ERROR - Worker stream died during communication: tcp://10.0.0.9:40111\n"
        "OSError: Timed out trying to connect to tcp://10.0.0.9:40111 after 30 s\n"
    )
    _check(log, "RUN131")


def test_other_programs_connect_timeouts_are_not_dask() -> None:
    for line in (
        "Error: timed out trying to connect to 10.0.0.7",
        "RuntimeError: Timed out trying to connect to 10.1.1.1 @ 5555",
    ):
        root = _root(line)
        assert root is None or root.facts.get("framework") != "dask", (line, root)


def test_another_redis_client_is_not_ray() -> None:
    root = _root("redis.exceptions.ConnectionError: Unable to connect to Redis at localhost:6379")
    assert root is None or root.facts.get("framework") != "ray"


def test_ray_gcs_retry_that_then_connects_is_no_failure() -> None:
    log = (
        "2023-05-22 16:41:02,771 WARNING utils.py:1416 -- Unable to connect to GCS at 10.0.0.1:6379. Check "
        "that "
        "(1) Ray GCS with matching version started successfully at the specified address.\n"
        "2023-05-22 16:41:05,001 INFO worker.py:1553 -- Connected to Ray cluster.\n"
    )
    assert _root(log) is None


def test_mindspore_topology_retry_that_then_builds_is_no_failure() -> None:
    log = (
        "[WARNING] DISTRIBUTED(1,f,python):2024 [cluster_context.cc:143] BuildCluster] Topology build timed "
        "out., retry(2/3600).\n"
        "[WARNING] DISTRIBUTED(1,f,python):2024 [cluster_context.cc:150] BuildCluster] Cluster is "
        "successfully "
        "initialized.\n"
    )
    assert _root(log) is None


PRRTE = (
    "--------------------------------------------------------------------------\n"
    "A request has timed out and will therefore fail:\n"
    "\n"
    "  Operation:  {op}\n"
    "\n"
    "Your job may terminate as a result of this problem. You may want to\n"
    "adjust the MCA parameter pmix_server_max_wait and try again. If this\n"
    "occurred during a connect/accept operation, you can adjust that time\n"
    "using the pmix_base_exchange_timeout parameter.\n"
    "--------------------------------------------------------------------------\n"
)


@pytest.mark.parametrize(
    "op", ["DMDX: prted/pmix/pmix_server.c:861", "LOOKUP: orted/pmix/pmix_server_pub.c:345", "FENCE"]
)
def test_the_runtime_daemons_timed_out_request(op: str) -> None:
    _check(PRRTE.format(op=op), "RUN221", {"operation": op})


def test_other_aggregated_help_messages_are_not_a_timeout() -> None:
    root = _root(
        "[node1:12345] 1 more process has sent help message help-mpi-btl-openib.txt / no active ports found"
    )
    assert root is None or root.code != "RUN221"


def test_a_resolver_error_at_the_end_of_getaddrinfos_frames() -> None:
    log = (
        '  File "/usr/lib/python3.8/socket.py", line 918, in getaddrinfo\n'
        "    for res in _socket.getaddrinfo(host, port, family, type, proto, flags):\n"
        "socket.gaierror: [Errno -2] Name or service not known\n"
    )
    _check(log, "RUN222", {"error": "name resolution"})


@pytest.mark.parametrize(
    "log",
    [
        "urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f1>: "
        "Failed "
        "to resolve 'huggingface.co' ([Errno -2] Name or service not known)",
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/requests/adapters.py", line 519, in send\n'
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443): Max retries "
        "exceeded with url: /weights.bin\n"
        "socket.gaierror: [Errno -2] Name or service not known\n",
    ],
)
def test_a_download_that_cannot_resolve_its_host_is_not_the_jobs_meeting(log: str) -> None:
    root = _root(log)
    assert root is None or root.code != "RUN222", root


SUBCHANNEL = (
    "> I0320 05:57:29.309552659    3803 subchannel.cc:677]          Connect failed: "
    '{"created":"@1521525449.3",'
    '"description":"Failed to connect to remote host: OS '
    'Error","errno":111,"file":"external/grpc/src/core/lib/'
    'iomgr/tcp_client_posix.cc","file_line":198,"os_error":"Connection refused","syscall":"connect",'
    '"target_address":"ipv4:10.0.1.4:14417"}\n'
    "> I0320 05:57:29.309786369    3803 subchannel.cc:484]          Retry in 998 milliseconds\n"
    "> I0320 05:57:30.307312499    3796 subchannel.cc:437]          Failed to connect to channel, retrying\n"
)


def test_grpc_subchannel_connect_failures_that_never_end() -> None:
    _check(SUBCHANNEL, "RUN222", {"peer": "ipv4:10.0.1.4:14417", "error": "Connection refused"})


def test_grpc_subchannel_connect_failures_of_a_start_up_that_went_on() -> None:
    log = SUBCHANNEL.replace("> ", "") + "INFO:tensorflow:Done running local_init_op.\n"
    assert _root(log) is None


def test_gloo_loopback_fallback_after_an_unresolved_host_name_is_the_host_name() -> None:
    log = (
        "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as "
        "fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.\n"
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
        "timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:14215\n"
    )
    _check(log, "RUN222", {"likely_cause": "host_name_unresolved"})


def test_gloo_loopback_without_the_warning_stays_the_network() -> None:
    log = (
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
        "Connection refused, remote=[127.0.1.1]:17308"
    )
    _check(log, "RUN174", {"likely_cause": "host_name_resolves_to_loopback"})


def test_gloo_interface_given_ncclsyntax_wrapped() -> None:
    log = (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84]\n"
        "  ifa != nullptr. Unable to find address for: ^lo\n"
    )
    _check(log, "RUN174", {"problem": "nccl_ifname_syntax", "interface": "^lo"})


def test_actions_viewer_links_inside_a_shell_kill_record() -> None:
    log = (
        "tests/test_train.py::test_single_node PASSED [ 84%]\n"
        "/home/runner/work/_temp/e140b67d-655b-42e7-ae6b-5bfee5a0[53](https://github.com/o/r/runs/7454288162?"
        "check_suite_focus=true#step:6:54)71.sh: line 2:  23[57](https://github.com/o/r/runs/7454288162?"
        "check_suite_focus=true#step:6:58) Killed                  python -m pytest tests/ -v\n"
    )
    _check(log, "RUN121", {"pid": 2357})


def test_actions_viewer_links_are_undone_and_other_links_kept() -> None:
    linked = "line 2:  23[57](https://github.com/o/r/actions/runs/1/job/2#step:6:58) Killed  python x.py"
    assert decode(linked) == "line 2:  2357 Killed  python x.py"
    prose = "see [12](https://github.com/o/r/issues/12) and [3](https://github.com/o/r/pull/3#issuecomment-4)"
    assert decode(prose) == prose
