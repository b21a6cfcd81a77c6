"""NCCL on its socket transport in a job that spans several nodes is a performance finding (NET117);
on one node, or on InfiniBand, nothing is said. Real lines from public threads (URLs beside them)
and every release's shape of the lines (NVIDIA/nccl src/transport/net_socket.cc, net_ib.cc,
misc/ibvwrap.cc, init.cc, the net plugin loader)."""

from __future__ import annotations

import io

import pytest

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.render import render
from pgdoctor.model import Finding
from tests.helpers.paths import FIXTURES

CODE = "NET117"


def _findings(text: str) -> list[Finding]:
    return diagnose_sources([("job.log", text)])


def _net(text: str) -> list[Finding]:
    return [f for f in _findings(text) if f.code == CODE]


# https://github.com/NVIDIA/nccl/issues/226 ("NCCL Logs with multiple nodes", AWS instances, no EFA): many
# hosts, IB finds nothing, the socket transport is used (NCCL 2.4, before "Using network" existed).
NCCL_226 = """ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.
ip-172-31-12-210:45305:45305 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.12.210<0>
ip-172-31-5-233:45319:45319 [0] NCCL INFO NET/IB : No device found.
ip-172-31-5-237:45266:45266 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.5.237<0>
ip-172-31-8-153:45343:45343 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).
ip-172-31-1-93:45294:45294 [0] NCCL INFO NET/IB : No device found.
ip-172-31-0-110:45349:45349 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.0.110<0>
ip-172-31-1-46:45340:45340 [0] NCCL INFO NET/IB : No device found.
ip-172-31-7-53:45396:45396 [0] NCCL INFO NET/IB : No device found.
ip-172-31-4-24:45334:45334 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).
ip-172-31-1-23:45357:45357 [0] NCCL INFO NET/IB : No device found.
ip-172-31-8-135:45334:45334 [0] NCCL INFO NET/IB : No device found.
ip-172-31-14-85:45543:45543 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.14.85<0>
ip-172-31-11-39:45542:45542 [0] NCCL INFO NET/IB : No device found.
ip-172-31-5-41:45516:45516 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.5.41<0>
ip-172-31-4-37:45379:45379 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.4.37<0>
ip-172-31-6-136:45332:45332 [0] NCCL INFO NET/Socket : Using [0]ens3:172.31.6.136<0>
"""


def test_real_multi_host_log_on_sockets() -> None:
    (f,) = _net(NCCL_226)
    assert f.severity.value == "warn" and f.category == "performance"
    assert f.facts["nodes"] >= 10 and f.facts["nodes_from"] == "hosts"
    assert f.facts["interfaces"] == ["ens3"]
    assert f.facts["reasons"] == ["no_ib_device"]
    assert "NET/Socket : Using [0]ens3" in f.evidence[0].text
    assert "NET/IB : No device found" in f.evidence[1].text


# https://github.com/facebookresearch/detectron2/issues/4730 ("[Multi node Training] Training time is very
# longer than a single node", NCCL 2.10.3): the thread's excerpt shows one host only.
DETECTRON2_4730 = """cvlab189-System-Product-Name:1379562:1379562 [0] NCCL INFO Bootstrap : Using enp36s0f1:168.188.129.189<0>
cvlab189-System-Product-Name:1379562:1379562 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation

cvlab189-System-Product-Name:1379562:1379562 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
cvlab189-System-Product-Name:1379562:1379562 [0] NCCL INFO NET/Socket : Using [0]enp36s0f1:168.188.129.189<0>
cvlab189-System-Product-Name:1379562:1379562 [0] NCCL INFO Using network Socket
NCCL version 2.10.3+cuda11.3
cvlab189-System-Product-Name:1379564:1379564 [2] NCCL INFO Bootstrap : Using enp36s0f1:168.188.129.189<0>
cvlab189-System-Product-Name:1379564:1379564 [2] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation

cvlab189-System-Product-Name:1379564:1379564 [2] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
cvlab189-System-Product-Name:1379564:1379564 [2] NCCL INFO NET/Socket : Using [0]enp36s0f1:168.188.129.189<0>
cvlab189-System-Product-Name:1379564:1379564 [2] NCCL INFO Using network Socket
"""


def test_real_socket_lines_of_one_host_alone_say_nothing() -> None:
    # Nothing in these lines says the job spans nodes: one host, no node count.
    assert _findings(DETECTRON2_4730) == []


def test_real_socket_lines_with_the_launchers_node_count() -> None:
    # The same lines under the launch command that the thread describes (two machines).
    launch = (
        "torchrun --nproc_per_node=4 --nnodes=2 --node_rank=0 --master_addr=168.188.129.189 train_net.py\n"
    )
    (f,) = _net(launch + DETECTRON2_4730)
    assert f.facts["nodes"] == 2 and f.facts["nodes_from"] == "launcher"
    assert f.facts["reasons"] == ["no_libibverbs"]
    assert "libibverbs could not be opened" in f.message and "NET/Socket on enp36s0f1" in f.message


# https://github.com/NVIDIA/nccl-tests/issues/188 (NCCL_IB_DISABLE=1 set in the environment; one host shown)
NCCL_TESTS_188 = """user:852750:852802 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
user:852750:852802 [0] NCCL INFO NET/Socket : Using [0]ibs85f0:192.168.1.14<0> [1]ib0:192.168.1.15<0>
user:852750:852802 [0] NCCL INFO Using network Socket
user:852751:852807 [1] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
user:852751:852807 [1] NCCL INFO NET/Socket : Using [0]ibs85f0:192.168.1.14<0> [1]ib0:192.168.1.15<0>
user:852751:852807 [1] NCCL INFO Using network Socket
"""


def test_real_ib_disabled_by_environment() -> None:
    assert _net(NCCL_TESTS_188) == []
    comm = "user:852750:852802 [0] NCCL INFO comm 0x5581 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
    (f,) = _net(NCCL_TESTS_188 + comm)
    assert f.facts["nodes"] == 2 and f.facts["nodes_from"] == "nccl"
    assert f.facts["reasons"] == ["env_off"]
    assert f.facts["settings"] == ["NCCL_IB_DISABLE set by environment to 1"]
    assert f.facts["interfaces"] == ["ib0", "ibs85f0"]


# Each release's shape of the lines (host prefix as NCCL's debug.cc prints it).
SHAPES = {
    "no verbs, WARN (<=2.11)": "n1:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "no verbs, INFO (2.12+)": "n1:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]",
    "no IB device": "n1:1:1 [0] NCCL INFO NET/IB : No device found.",
    "plugin 2.4": "n1:1:1 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).",
    "plugin 2.7-2.18": "n1:1:1 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "plugin 2.19": "n1:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation",
    "plugin 2.20-2.22": "n1:1:1 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
    "plugin 2.23+": "n1:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
}
SOCKET = (
    "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nn1:1:1 [0] NCCL INFO Using network Socket\n"
)
SECOND_HOST = "n2:7:7 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n"


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_release_shape_is_read(name: str) -> None:
    (f,) = _net(SHAPES[name] + "\n" + SOCKET + SECOND_HOST)
    kind = {"no verbs": "no_libibverbs", "no IB": "no_ib_device"}
    want = next((v for k, v in kind.items() if name.startswith(k)), None)
    assert f.facts["reasons"] == ([want] if want else [])
    assert f.facts["no_net_plugin"] is name.startswith("plugin")
    assert f.facts["socket_hosts"] == ["n1", "n2"]


@pytest.mark.parametrize(
    "line",
    [
        "+ srun --nodes=4 --ntasks-per-node=8 python train.py",
        "torchrun --nnodes 4 --nproc_per_node 8 train.py",
        "torchrun --nnodes=4:8 --nproc_per_node=8 train.py",
        "  min_nodes        : 4",
        "SLURM_NNODES=4",
        "SLURM_JOB_NUM_NODES=4",
        "n1:1:1 [0] NCCL INFO comm 0x5581 rank 0 nRanks 32 nNodes 4 localRanks 8 localRank 0 MNNVL 0",
    ],
)
def test_node_counts_from_launchers_and_nccl(line: str) -> None:
    (f,) = _net(line + "\n" + SOCKET)
    assert f.facts["nodes"] == 4


@pytest.mark.parametrize(
    "text",
    [
        SOCKET,  # one node: sockets carry nothing that matters
        "torchrun --nnodes=1 --nproc_per_node=8 train.py\n" + SOCKET,
        "n1:1:1 [0] NCCL INFO comm 0x5581 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n"
        + SOCKET,
        # several nodes on InfiniBand; "Bootstrap : Using eth0" is not the data transport
        "n1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
        "n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
        "n1:1:1 [0] NCCL INFO Using network IB\n"
        "n2:7:7 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.2<0>\n"
        "n2:7:7 [0] NCCL INFO comm 0x5581 rank 8 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n",
        # a plugin network (EFA) on several nodes
        "n1:1:1 [0] NCCL INFO Using network AWS Libfabric\nn2:7:7 [0] NCCL INFO Using network AWS Libfabric\n",
    ],
)
def test_silent_on_one_node_and_on_rdma(text: str) -> None:
    assert _net(text) == []


def test_fixtures_and_the_console() -> None:
    bad = diagnose_paths([str(FIXTURES / "codes" / CODE / "bad.log")])
    assert [f.code for f in bad.findings] == [CODE]
    assert bad.verdict.status == "passed" and bad.verdict.exit_code == 0  # a warning, not a failure
    out = io.StringIO()
    render(bad, out)
    text = out.getvalue()
    assert "[x] Root cause" not in text and "no failure found" in text
    assert f"[!] {CODE}" in text and f"pgdoctor explain {CODE}" in text
    good = diagnose_paths([str(FIXTURES / "codes" / CODE / "good.log")])
    assert CODE not in [f.code for f in good.findings]


def test_beside_a_failure_it_is_no_cascade() -> None:
    hung = (FIXTURES / "codes" / "RUN370" / "bad.log").read_text()
    found = _findings(hung + SOCKET + SECOND_HOST)
    assert found[0].code == "RUN370"
    net = next(f for f in found if f.code == CODE)
    assert "cascade_of" not in net.facts and "root_cause" not in net.facts


def test_using_network_decides_where_it_is_printed() -> None:
    # NCCL_NET=Socket: since 2.19 IB is initialised (and says "NET/IB : Using") before the name check
    # skips it (src/net.cc ncclNetInit), so the socket transport is chosen beside an IB line.
    forced = "".join(
        f"{h}:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket.\n"
        f"{h}:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.{i}<0>\n"
        f"{h}:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.{i}<0>\n"
        f"{h}:1:1 [0] NCCL INFO Using network Socket\n"
        for i, h in enumerate(("n1", "n2"), 1)
    )
    (f,) = _net(forced)
    assert f.facts["reasons"] == ["env_off"] and f.facts["settings"] == [
        "NCCL_NET set by environment to Socket"
    ]
    # A host that says "Using network IB" is on IB, whatever else it initialised.
    on_ib = forced.replace("Using network Socket", "Using network IB")
    assert _net(on_ib) == []


def test_nccls_own_node_count_decides() -> None:
    # two container hostnames on one machine, and NCCL says one node: nothing to say
    one = "n1:1:1 [0] NCCL INFO comm 0x5581 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
    assert _net(one + SOCKET + SECOND_HOST) == []
