"""Net probes on the sysfs fixture trees, and on this machine's real sysfs (no InfiniBand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgdoctor.engine.runner import Selection, collect, run_checks
from pgdoctor.model import Reason, Status
from pgdoctor.probes.base import ProbeContext, ProbeUnavailable
from pgdoctor.probes.ib import ib
from pgdoctor.probes.netifs import netifs, route_to, routes
from pgdoctor.probes.sysfs import FsReader
from pgdoctor.probes.topology import format_matrix, relation, topology
from tests.helpers.paths import FIXTURES

SYSFS = FIXTURES / "sysfs"


def ctx(tree: str, **env: str) -> ProbeContext:
    return ProbeContext(env={"MASTER_ADDR": "10.0.0.5", **env}, fs=FsReader(SYSFS / tree))


def values(ms: list) -> dict:
    return {m.key: m.value for m in ms}


def test_ib_ports_state_rate_layer_and_counters() -> None:
    ports = values(ib(ctx("two_numa_bad")))["net.ib.ports"]
    assert sorted(ports) == ["mlx5_0:1", "mlx5_1:1", "mlx5_2:1"]
    p0 = ports["mlx5_0:1"]
    assert (p0["state"], p0["state_num"], p0["phys_state"], p0["link_layer"]) == (
        "ACTIVE",
        4,
        "LinkUp",
        "InfiniBand",
    )
    assert (
        p0["rate_gbps"] == 400.0
        and p0["counters"]["symbol_error"] == 12
        and p0["counters"]["link_downed"] == 3
    )
    assert ports["mlx5_1:1"]["state"] == "DOWN" and ports["mlx5_1:1"]["phys_state"] == "Disabled"
    assert ports["mlx5_2:1"]["rate_gbps"] == 100.0


def test_ib_devices_know_pci_numa_and_netdev() -> None:
    devs = values(ib(ctx("two_numa_good")))["net.ib.devices"]
    assert devs["mlx5_0"]["pci"] == "0000:18:00.0" and devs["mlx5_0"]["numa_node"] == 0
    assert devs["mlx5_1"]["numa_node"] == 1 and devs["mlx5_1"]["netdevs"] == ["ib1"]


def test_no_infiniband_directory_is_not_present() -> None:
    with pytest.raises(ProbeUnavailable) as info:
        ib(ctx("no_ib"))
    assert info.value.reason is Reason.NOT_PRESENT and "no InfiniBand devices" in info.value.detail


def test_real_sysfs_without_infiniband_is_skipped_not_failed() -> None:
    if Path("/sys/class/infiniband").is_dir() and any(Path("/sys/class/infiniband").iterdir()):
        pytest.skip("this machine has InfiniBand devices")
    snap = collect(ProbeContext(env={}), Selection(only=("net",)), timeout_s=30)
    probe = snap.probe("ib")
    assert probe is not None and probe.status is Status.UNAVAILABLE
    assert probe.reason.startswith("not_present: no InfiniBand devices")
    from pgdoctor.checks.base import Config

    _, results = run_checks(snap, Config(), Selection(only=("net",)))
    ib_checks = [r for r in results if r.name.startswith("net_links.ib_")]
    assert ib_checks and all(r.status is Status.UNAVAILABLE for r in ib_checks)
    assert "no InfiniBand devices" in ib_checks[0].reason
    assert not [r for r in results if r.status in (Status.CRASHED, Status.FAILED)]


def test_topology_matrix_from_pci_paths_and_numa() -> None:
    v = values(topology(ctx("two_numa_good")))
    m = v["topo.matrix"]
    names = m["devices"]
    cell = {(a, b): m["cells"][i][j] for i, a in enumerate(names) for j, b in enumerate(names)}
    assert names[:2] == ["GPU0", "GPU1"]
    assert cell["GPU0", "mlx5_0"] == "PIX"  # same PCIe switch
    assert cell["GPU1", "mlx5_1"] == "PIX"
    assert cell["GPU0", "GPU1"] == "SYS"  # different NUMA nodes
    assert cell["GPU0", "eth0"] == "PHB"  # same root complex, no shared bridge
    assert [g["numa_node"] for g in v["topo.gpus"]] == [0, 1]
    assert v["topo.nvidia_driver_version"] == "550.54.15"
    assert m["cpu_affinity"][:2] == ["0-31,64-95", "32-63,96-127"]  # local_cpulist of each GPU
    text = format_matrix(m)
    assert text.splitlines()[0].split() == [*names, "CPU", "Affinity", "NUMA", "Affinity"]
    assert text.splitlines()[2].split()[-2:] == ["32-63,96-127", "1"]
    assert text.splitlines()[1].split()[:3] == ["GPU0", "X", "SYS"]


def test_relation_levels() -> None:
    def dev(chain: list[str], numa: int = 0) -> dict:
        return {"pci": chain[-1], "chain": chain, "numa_node": numa}

    a = dev(["pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"])
    b = dev(["pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0", "0000:04:00.0"])
    c = dev(["pci0000:00", "0000:00:01.0", "0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"])
    d = dev(["pci0000:40", "0000:40:01.0", "0000:41:00.0"])
    e = dev(["pci0000:80", "0000:80:01.0", "0000:81:00.0"], numa=1)
    assert relation(a, a) == "X"
    assert relation(a, b) == "PIX"
    assert relation(a, c) == "PXB"
    assert relation(a, d) == "NODE"
    assert relation(a, e) == "SYS"
    assert relation(a, dev(["pci0000:00", "0000:00:02.0", "0000:09:00.0"])) == "PHB"


def test_netifs_addresses_route_to_master_and_peermem() -> None:
    v = values(netifs(ctx("two_numa_bad")))
    assert v["net.addresses"]["eth0"] == ["10.0.3.17"] and v["net.addresses"]["ib0"] == ["192.168.3.17"]
    route = v["net.master_route"]
    assert (route["interface"], route["mtu"], route["source_address"]) == ("eth0", 1500, "10.0.3.17")
    assert v["net.nvidia_peermem"] is False
    assert values(netifs(ctx("two_numa_good")))["net.nvidia_peermem"] is True
    assert v["net.interfaces"]["ib0"]["mtu"] == 4092 and v["net.interfaces"]["ib0"]["up"] is True


def test_route_lookup_prefers_longest_prefix_and_local_interface() -> None:
    table = routes(ctx("two_numa_bad"))
    assert table is not None
    addrs = {"eth0": ["10.0.3.17"], "ib0": ["192.168.3.17"]}
    assert route_to(table, "192.168.7.9", addrs)["interface"] == "ib0"
    assert route_to(table, "8.8.8.8", addrs)["gateway"] == "10.0.0.1"
    # On the master itself: the interface holding MASTER_ADDR, not loopback.
    assert route_to(table, "192.168.3.17", addrs)["interface"] == "ib0"
    assert route_to(table, "127.0.0.1", addrs)["interface"] == "lo"


def test_master_route_mtu_without_master_addr_is_absent() -> None:
    ms = netifs(ProbeContext(env={}, fs=FsReader(SYSFS / "no_ib")))
    assert "net.master_route" not in values(ms)
    assert values(ms)["net.nvidia_peermem"] is False  # /proc/modules readable, module absent


def test_master_addr_that_does_not_resolve_is_unavailable() -> None:
    ms = netifs(ProbeContext(env={"MASTER_ADDR": "no-such-host.invalid"}, fs=FsReader(SYSFS / "no_ib")))
    route = next(m for m in ms if m.key == "net.master_route")
    assert not route.ok and route.value.reason is Reason.ERROR  # type: ignore[union-attr]


def test_topo_command_prints_matrix_from_snapshot() -> None:
    from click.testing import CliRunner

    from pgdoctor.cli import cli

    res = CliRunner().invoke(cli, ["topo", "--from", str(FIXTURES / "codes" / "NET106" / "bad.json")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].split() == [
        "GPU0",
        "GPU1",
        "mlx5_0",
        "mlx5_1",
        "mlx5_2",
        "eth0",
        "CPU",
        "Affinity",
        "NUMA",
        "Affinity",
    ]
    # A snapshot from before the CPU Affinity column says N/A there rather than guessing.
    assert lines[2].split() == ["GPU1", "SYS", "X", "SYS", "SYS", "SYS", "SYS", "N/A", "1"]
    assert "SYS = across NUMA nodes" in res.output
    bad = CliRunner().invoke(cli, ["topo", "--from", str(FIXTURES / "codes" / "NET114" / "missing.json")])
    assert bad.exit_code == 2 and "cannot read snapshot" in bad.output


def test_nvml_pairs_override_gpu_cells() -> None:
    from pgdoctor.probes.topology import with_nvml

    m = values(topology(ctx("two_numa_good")))["topo.matrix"]
    pairs = [{"a": 0, "b": 1, "ancestor": "system", "p2p_read": "ok", "p2p_nvlink": "ok"}]
    nv = with_nvml(m, pairs)
    assert nv["cells"][0][1] == nv["cells"][1][0] == "NV"
    assert m["cells"][0][1] == "SYS"  # the sysfs matrix itself is not modified
    no_link = with_nvml(
        m, [{"a": 0, "b": 1, "ancestor": "node", "p2p_read": "ok", "p2p_nvlink": "not_supported"}]
    )
    assert no_link["cells"][0][1] == "NODE"
    assert with_nvml(m, {"unavailable": "library_not_found", "detail": ""}) is m


def _topo_output(tree: str, replay: object = None, *args: str) -> str:
    import contextlib
    import io

    from pgdoctor.cli.topo import _live, show

    ctx = ProbeContext(env={}, fs=FsReader(SYSFS / tree), options={"nvml_backend": replay} if replay else {})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        show(_live(ctx), "--json" in args, "on this node")
    return out.getvalue()


def test_topo_affinity_columns_from_sysfs_without_nvml() -> None:
    from pgdoctor.probes.gpu.nvml import ReplayBackend

    text = _topo_output("two_numa_good", ReplayBackend({}, init_error="DriverNotLoaded"))
    rows = {
        line.split()[0]: line.split() for line in text.splitlines()[1:] if line.strip() and " = " not in line
    }
    assert rows["GPU0"][-2:] == ["0-31,64-95", "0"]
    assert rows["GPU1"][-2:] == ["32-63,96-127", "1"]
    assert rows["mlx5_1"][-2:] == ["32-63,96-127", "1"]  # NICs carry theirs too, for GPU-NIC pairing


def test_topo_affinity_columns_take_nvml_where_it_answers() -> None:
    import json

    from pgdoctor.probes.gpu.nvml import ReplayBackend

    calls = json.loads((FIXTURES / "nvml" / "h100_pcie_2gpu.json").read_text())["calls"]
    calls = {**calls, "nvmlDeviceGetCpuAffinity(1,16)": {"nvml_error": "NotSupported"}}
    text = _topo_output("two_numa_good", ReplayBackend(calls))
    rows = {
        line.split()[0]: line.split() for line in text.splitlines()[1:] if line.strip() and " = " not in line
    }
    assert rows["GPU0"][-2:] == ["0-31", "0"]  # NVML's mask, not the node's local_cpulist
    assert rows["GPU1"][-2:] == ["32-63,96-127", "1"]  # NVML did not answer: sysfs
    assert rows["GPU0"][2] == "NV"  # the NVLink bridge, from NVML
    js = _topo_output("two_numa_good", ReplayBackend(calls), "--json")
    matrix = json.loads(js)["matrix"]
    assert matrix["cpu_affinity"][:2] == ["0-31", "32-63,96-127"] and matrix["numa_nodes"][:2] == [0, 1]


def test_topo_without_gpus_says_so_in_one_line() -> None:
    from click.testing import CliRunner

    from pgdoctor.cli import cli
    from pgdoctor.probes.gpu.nvml import ReplayBackend

    text = _topo_output("no_ib", ReplayBackend({}, init_error="DriverNotLoaded"))
    assert text == "no NVIDIA GPU on this node; PCI NICs: eth0\n"
    res = CliRunner().invoke(cli, ["topo"])  # this machine: whatever it has, never a traceback
    assert res.exit_code == 0 and res.output.strip()
