"""Four hosts made of network namespaces (tests/helpers/netns.py): one rank per host, each with its own
hostname, gloo across the veth/bridge network, host 2 throttled to a tenth of the others' rate
with tc tbf, host 3 with another NCCL_ variable and another reported torch version."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.netns import NetnsLab, remove_stale, run_pgdoctor_check, unavailable_reason

REASON = unavailable_reason()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(REASON is not None, reason=f"network namespaces unavailable: {REASON}"),
    # One worker: the four-host lab of `run` (9 CPU-s) was built on every worker that ran one of its tests.
    pytest.mark.xdist_group("netns_lab"),
]
ROOT = Path(__file__).resolve().parents[2]
FAST_MBIT, SLOW_MBIT = 400, 40


@pytest.fixture(scope="module")
def run() -> Any:
    with NetnsLab(4) as lab:
        for i in range(4):
            lab.throttle(i, SLOW_MBIT if i == 2 else FAST_MBIT)
        envs = [{}, {}, {}, {"NCCL_ALGO": "Ring", "PGDOCTOR_TEST_TORCH_VERSION": "2.0.0+fake"}]
        start = time.monotonic()
        outs = run_pgdoctor_check(lab, ["--only", "net", "--json", "--timeout", "50"], 70, env_per_host=envs)
        seconds = time.monotonic() - start
        prefix = lab.prefix
    yield {"outs": outs, "seconds": seconds, "prefix": prefix, "hostnames": lab.hostnames}


def report(run: Any) -> dict[str, Any]:
    return json.loads(run["outs"][0].stdout)


def findings(run: Any, code: str) -> list[dict[str, Any]]:
    return [f for f in report(run)["findings"] if f["code"] == code]


def test_every_rank_finished_and_only_rank0_printed(run: Any) -> None:
    outs = run["outs"]
    assert not any(o.timed_out for o in outs), [o.stderr[-400:] for o in outs]
    assert outs[0].stdout.strip().startswith("{") and report(run)["schema_version"] == 1
    assert all(o.stdout == "" for o in outs[1:])
    assert (
        len({o.returncode for o in outs}) == 1 and outs[0].returncode == 1
    )  # NET115 and NET111 are failures
    assert run["seconds"] < 60


def test_slow_host_is_named(run: Any) -> None:
    slow = findings(run, "NET115")
    assert [f["scope"]["host"] for f in slow] == ["nshost2"]
    assert slow[0]["facts"]["ratio"] < 0.3
    assert not findings(run, "NET116")


def test_host_with_other_environment_is_named(run: Any) -> None:
    env = findings(run, "NET113")
    assert [f["scope"]["host"] for f in env] == ["nshost3"] and "NCCL_ALGO=Ring" in env[0]["message"]
    sw = findings(run, "NET111")
    assert [f["scope"]["host"] for f in sw] == ["nshost3"] and "2.0.0+fake" in sw[0]["message"]


def test_findings_name_hosts_and_nodes_use_namespace_addresses(run: Any) -> None:
    rep = report(run)
    assert all(f["scope"].get("host") in run["hostnames"] for f in rep["findings"])
    nodes = next(m["value"] for m in rep["measurements"] if m["key"] == "cluster.nodes")
    assert [n["host"] for n in nodes] == run["hostnames"]
    assert [n["address"] for n in nodes] == [f"10.213.0.{i + 1}" for i in range(4)]
    assert all(n["facts"]["interface"] == "eth0" and n["facts"]["mtu"] == 1500 for n in nodes)
    assert not findings(run, "NET110")
    bw = next(m["value"] for m in rep["measurements"] if m["key"] == "cluster.bandwidth")
    assert bw["schedule"] == "neighbours" and len(bw["pairs"]) == 8


def test_very_slow_host_is_named_within_the_timeout() -> None:
    """A host at 1/200 of the others: the size ramp keeps every round short, so it is measured
    and named well inside --timeout instead of stalling the rounds."""
    with NetnsLab(3) as lab:
        for i in range(3):
            lab.throttle(i, 2 if i == 1 else FAST_MBIT)
        start = time.monotonic()
        outs = run_pgdoctor_check(lab, ["--only", "net", "--json", "--timeout", "40"], 50)
        seconds = time.monotonic() - start
    assert not any(o.timed_out for o in outs) and seconds < 40
    rep = json.loads(outs[0].stdout)
    # On a failure, say what was measured: which pairs, which codes (a flake under load once).
    measured = [m["value"] for m in rep["measurements"] if m["key"] == "cluster.bandwidth"]
    seen = [(f["code"], f["message"]) for f in rep["findings"]]
    assert [f["scope"]["host"] for f in rep["findings"] if f["code"] == "NET115"] == ["nshost1"], (
        seen,
        measured,
    )


def test_slow_link_between_two_healthy_hosts_is_named_as_a_link() -> None:
    """Only nshost1 <-> nshost2 is slow (a direct throttled veth with host routes); both hosts
    are fast with everyone else. --all-pairs measures both directions: NET116 names the pair,
    NET115 names no node."""
    with NetnsLab(4) as lab:
        for i in range(4):
            lab.throttle(i, FAST_MBIT)
        lab.slow_link(1, 2, SLOW_MBIT)
        outs = run_pgdoctor_check(lab, ["--only", "net", "--json", "--all-pairs", "--timeout", "50"], 60)
    assert not any(o.timed_out for o in outs)
    rep = json.loads(outs[0].stdout)
    links = sorted(f["scope"]["link"] for f in rep["findings"] if f["code"] == "NET116")
    assert links == ["nshost1->nshost2", "nshost2->nshost1"]
    assert not [f for f in rep["findings"] if f["code"] == "NET115"]
    bw = next(m["value"] for m in rep["measurements"] if m["key"] == "cluster.bandwidth")
    assert bw["schedule"] == "all-pairs" and len(bw["pairs"]) == 12


def test_lab_left_nothing_behind(run: Any) -> None:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert run["prefix"] not in listed


def test_cleanup_after_an_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"), NetnsLab(2) as lab:
        assert len(lab.leftovers()) == 3
        raise RuntimeError("boom")
    assert lab.leftovers() == []


CHILD = """
import signal, sys, time
# A runner that started us with SIGINT ignored would turn the test into a 20 s wait and a kill.
signal.signal(signal.SIGINT, signal.default_int_handler)
from tests.helpers.netns import NetnsLab
with NetnsLab(2) as lab:
    print(lab.prefix, flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cleanup_on_interrupt_and_terminate(sig: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        prefix = proc.stdout.readline().strip()
        assert prefix.startswith("pgdn")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not [n for n in listed.split() if n.startswith(prefix)], err[-2000:]


def test_stale_namespaces_of_dead_processes_are_removed() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"pgdn{dead.pid}x1sw"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in remove_stale()
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
