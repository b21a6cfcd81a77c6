"""netfam of 2026-12-08: network/transport families of real public threads that the rules missed, each read
at its source across versions. Variants not seen in a thread are marked "variant".

- torch RPC's TensorPipe agent (torch/csrc/distributed/rpc/tensorpipe_agent.cpp, 1.6-2.x): "RPC agent for
  <self> encountered error when <operation>: <tensorpipe Error::what()>", the error ending in "(this error
  originated at <file>:<line>)" (tensorpipe/common/error.cc). Three operations have an RPC in flight:
  "sending outgoing request #N to <peer>", "reading incoming response from <peer>" (armed only while a
  request waits for its answer) and "sending response to request #N to <peer>": the connection to that peer
  broke mid-exchange (RUN174; a peer that went away, "eof" / reset / broken pipe / closed, tier 1; on the
  ibv transport RUN173). "reading incoming request from <peer>" is every healthy rpc.shutdown's (1.8+ adds
  "(this is expected to happen during shutdown)") and "accepting incoming pipe" stay silent, whatever the
  transport. The shm transport's own raised error ("RuntimeError: eof (this error originated at
  tensorpipe/transport/shm/connection_impl.cc:259)") is read like the uv transport's (tier 1).
- Paddle 1.x's parameter-server sockets (paddle/pserver/LightNetwork.cpp SocketClient::TcpClient, glog): a
  refused connect(2) retried once a second ("connection refused by pserver, try again!", silent) and, after
  eight, "F... LightNetwork.cpp:399] connection refused by pserver, maybe pserver failed!" (RUN174, tier 1);
  any other connect error is PCHECK's "Check failed: error >= 0 ERROR connecting to <host>: <strerror>
  [<errno>]" (RUN174).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, prefixed, root_finding

_SHM = "(this error originated at tensorpipe/transport/shm/connection_impl.cc:259)"
_W = "[W tensorpipe_agent.cpp:939] RPC agent for "

# (log, code, facts)
AGENT = [
    # https://github.com/pytorch/PiPPy/issues/809 (torch 2.x, shm transport, glog prefix)
    (
        "[W tensorpipe_agent.cpp:939] RPC agent for worker2 encountered error when reading incoming response "
        f"from worker0: eof {_SHM}",
        "RUN174",
        {"worker": "worker2", "peer": "worker0", "transport": "shm", "peer_may_have_died": True},
    ),
    # https://github.com/pytorch/tensorpipe/issues/411 (no glog prefix)
    (
        "RPC agent for parameter_server encountered error when sending response to request #4 to trainer_1: "
        f"eof {_SHM}",
        "RUN174",
        {"peer": "trainer_1", "message_id": 4, "operation": "sending response to request"},
    ),
    # https://github.com/pytorch/pytorch/issues/85607 (a SystemError of the shm transport)
    (
        f"{_W}3 encountered error when sending outgoing request #0 to 0: "
        "async error on socket: Connection reset by peer (this error originated at "
        "tensorpipe/transport/shm/connection_impl.cc:187)",
        "RUN174",
        {"worker": "3", "peer": "0", "message_id": 0, "peer_may_have_died": True},
    ),
    # https://github.com/pytorch/tensorpipe/issues/201 (torch 1.6: no origin in the error)
    (
        f"{_W}Test0 encountered error when sending outgoing request #0 to "
        "Test1: ECONNREFUSED: connection refused",
        "RUN174",
        {"peer": "Test1", "fix_env": "TP_SOCKET_IFNAME"},
    ),
    # https://github.com/pytorch/pytorch/issues/104568 (the ibv transport)
    (
        "[W tensorpipe_agent.cpp:940] RPC agent for worker1 encountered error when reading incoming response "
        "from worker0: transport retry counter exceeded (this error originated at "
        "tensorpipe/transport/ibv/connection_impl.cc:478)",
        "RUN173",
        {"transport": "ibv", "peer": "worker0"},
    ),
    # variants: the uv transport's libuv errors, a closed pipe, a full source path in the origin
    (
        f"{_W}trainer3 encountered error when reading incoming response "
        "from ps0: ECONNRESET: connection reset by peer (this error originated at "
        "/pytorch/third_party/tensorpipe/tensorpipe/transport/uv/connection_impl.cc:132)",
        "RUN174",
        {"transport": "uv", "where": "tensorpipe/transport/uv/connection_impl.cc:132"},
    ),
    (
        "W0105 03:04:05.678 tensorpipe_agent.cpp:900] RPC agent for w1 encountered error when sending "
        "outgoing request #17 to w0: EPIPE: broken pipe (this error originated at "
        "tensorpipe/transport/uv/connection_impl.cc:157)",
        "RUN174",
        {"message_id": 17, "peer_may_have_died": True},
    ),
    (
        "[W tensorpipe_agent.cpp:939] RPC agent for worker1 encountered error when reading incoming response "
        "from worker0: pipe closed (this error originated at tensorpipe/core/pipe_impl.cc:356)",
        "RUN174",
        {"where": "tensorpipe/core/pipe_impl.cc:356", "peer_may_have_died": True},
    ),
    # the transport's own raised error, on the shm transport (torch-xpu-ops#1617's test failures)
    (f"RuntimeError: eof {_SHM}", "RUN174", {"transport": "shm", "peer_may_have_died": True}),
]

SILENT = [
    # a healthy rpc.shutdown whose peer closed first (pytorch/examples#894, torch 1.8+)
    "[W tensorpipe_agent.cpp:546] RPC agent for worker1 encountered error when reading incoming request from "
    "master: EOF: end of file (this is expected to happen during shutdown)",
    # the same before 1.8, on uv and shm
    f"{_W}worker_3 encountered error when reading incoming request from "
    "server_0: EOF: end of file (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)",
    f"{_W}worker3 encountered error when reading incoming request from worker1: eof {_SHM}",
    "[W tensorpipe_agent.cpp:530] RPC agent for worker0 encountered error when accepting incoming pipe: eof "
    "(this error originated at tensorpipe/transport/uv/connection_impl.cc:302)",
    # the agent's own notices and its success lines
    "[W tensorpipe_agent.cpp:700] RPC agent for worker0 won't send response to request #3 to worker1, as the "
    "agent is shutting down",
    "I0105 tensorpipe_agent.cpp:690] RPC agent for worker0 done sending response to request #3 to worker1",
    # documentation that quotes the sentence without an error
    'LOG(WARNING) << "RPC agent for " << name << " encountered error when reading incoming response from "',
]


@pytest.mark.parametrize(("log", "code", "facts"), AGENT)
def test_tensorpipe_agent_exchange_broken(log: str, code: str, facts: dict) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == "nccl_network", (log, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (log, k, root.facts)


@pytest.mark.parametrize("line", SILENT)
def test_tensorpipe_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_tensorpipe_agent_behind_every_prefix(prefix: str) -> None:
    log = (
        "[W tensorpipe_agent.cpp:939] RPC agent for worker2 encountered error when reading incoming response "
        f"from worker1: eof {_SHM}"
    )
    root = root_finding(prefixed(prefix, log))
    assert root is not None and root.code == "RUN174" and root.facts.get("peer") == "worker1", (prefix, root)


def test_peer_death_in_the_log_is_the_root() -> None:
    # the peer that went away says why in its own lines: its death outranks the broken exchange (tier 1)
    log = (
        "[W tensorpipe_agent.cpp:939] RPC agent for worker2 encountered error when reading incoming response "
        f"from worker0: eof {_SHM}\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 79.15 GiB of which 1.02 GiB is free.\n"
    )
    root = root_finding(log)
    assert root is not None and root.category == "cuda_oom", root


PSERVER = [
    # https://github.com/PaddlePaddle/Paddle/issues/13762 (mpirun's tag before glog's FATAL)
    (
        "Mon Oct  8 17:00:17 2018[1,4]<stderr>:F1008 17:00:17.361272  7286 LightNetwork.cpp:395] connection "
        "refused by pserver, maybe pserver failed!\n"
        "Mon Oct  8 17:00:17 2018[1,4]<stderr>:*** Check failure stack trace: ***\n"
        "Mon Oct  8 17:00:17 2018[1,4]<stderr>:    @     0x7f4c507793c1  paddle::SocketClient::TcpClient()",
        {"error": "Connection refused", "retries": 8},
    ),
    # the retries before it, then the fatal line (Paddle's own docs' example log, LightNetwork.cpp:397/399)
    (
        "W1222 11:32:54.648000 23753 LightNetwork.cpp:397] connection refused by pserver, try again!\n"
        * 3
        + "F1222 11:33:01.649802 23753 LightNetwork.cpp:399] connection refused by pserver, "
        "maybe pserver failed!",
        {"error": "Connection refused"},
    ),
    # variants: PCHECK's other connect errors (strerror and errno after the message)
    (
        "F1222 11:33:01.649802 23753 LightNetwork.cpp:401] Check failed: error >= 0 ERROR connecting to "
        "10.1.2.3: Connection timed out [110]",
        {"peer": "10.1.2.3", "errno": 110},
    ),
    (
        "F0101 00:00:00.000000 1 LightNetwork.cpp:401] Check failed: error >= 0 ERROR connecting to "
        "pserver-0.paddle: No route to host [113]",
        {"peer": "pserver-0.paddle", "error": "No route to host"},
    ),
]

PSERVER_SILENT = [
    # the retry while the pserver comes up
    "W1222 11:32:54.648000 23753 LightNetwork.cpp:397] connection refused by pserver, try again!",
    # other programs' words, documentation
    "ERROR connecting to database: retrying in 5 s",
    'LOG(FATAL) << "connection refused by pserver, maybe pserver failed!";',
]


@pytest.mark.parametrize(("log", "facts"), PSERVER)
def test_paddle_pserver_socket(log: str, facts: dict) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == "RUN174" and root.category == "nccl_network", (log, root)
    for k, v in facts.items():
        assert root.facts.get(k) == v, (log, k, root.facts)


@pytest.mark.parametrize("line", PSERVER_SILENT)
def test_paddle_pserver_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line
