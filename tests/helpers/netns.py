"""Multi-host lab on one machine: network namespaces joined by veth pairs to a bridge.

    switch namespace <prefix>sw: bridge br0, one veth end per host (v0, v1, ...)
    host namespaces <prefix>h<i>: the other veth end named eth0, address 10.213.0.<i+1>/24

The bridge lives in its own namespace, so nothing is added to the machine's own network
namespace and all traffic stays between the namespaces made here. Each process started with
`argv_on(i, ...)` runs in host i's namespace under its own UTS namespace with its own hostname
(`unshare --uts`). `throttle(i, mbit)` rate-limits host i in both directions with tc tbf (netem
is not available on every kernel; tbf is).

Cleanup always happens: on leaving the `with` block (also on exceptions and Ctrl-C), on SIGTERM
(turned into SystemExit while the lab is open), at interpreter exit, and namespaces left behind
by a killed run of an earlier process are removed when a new lab starts (their names carry the
creating process id). Requires root; `unavailable_reason()` says why a lab cannot be made here.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any, Optional

SUBNET = "10.213.0"
NAME_RE = re.compile(r"^pgdn(\d+)x\d+(sw|h\d+)$")
_counter = 0
_lock = threading.Lock()


def _ip(*args: str, check: bool = True, timeout: float = 10.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=timeout)


def _tbf(mbit: float) -> list[str]:
    """A tbf qdisc whose bucket holds 5 ms of traffic (at least 8 KiB, above one MTU frame), as a
    real shaper's does. A fixed large bucket made a slow host look fast: at 2 Mbit a 256 KiB
    bucket is a whole second of traffic, so after an idle moment an exchange of up to 256 KiB
    went through at line rate, and the probe's best-of-N kept that value (a CI failure)."""
    burst_bytes = max(8192, int(mbit * 1e6 / 8 * 0.005))
    return ["root", "tbf", "rate", f"{mbit}mbit", "burst", str(burst_bytes), "latency", "100ms"]


def _in(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, check=check, timeout=10.0
    )


def unavailable_reason() -> Optional[str]:
    """Why namespaces cannot be used here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespace tests need root (creating namespaces, veth pairs and tc qdiscs)"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (iproute2 / util-linux)"
    name = f"pgdn{os.getpid()}x999probe"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip() or r.returncode}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Delete namespaces made by labs whose process no longer exists."""
    r = _ip("netns", "list", check=False)
    removed = []
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = NAME_RE.match(name)
        if m and not _alive(int(m.group(1))):
            _kill_ns_pids(name)
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def _kill_ns_pids(ns: str) -> None:
    r = _ip("netns", "pids", ns, check=False)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


class NetnsLab:
    """`with NetnsLab(4) as lab:` makes 4 hosts; see the module docstring."""

    def __init__(self, hosts: int, hostnames: Optional[Sequence[str]] = None):
        global _counter
        if not 1 <= hosts <= 200:
            raise ValueError("between 1 and 200 hosts")
        with _lock:
            _counter += 1
            self.prefix = f"pgdn{os.getpid()}x{_counter}"
        self.n = hosts
        self.hostnames = list(hostnames or [f"nshost{i}" for i in range(hosts)])
        self.switch = f"{self.prefix}sw"
        self.namespaces: list[str] = []
        self._old_term: Any = None
        self._closed = True

    def address(self, i: int) -> str:
        return f"{SUBNET}.{i + 1}"

    def host_ns(self, i: int) -> str:
        return f"{self.prefix}h{i}"

    def __enter__(self) -> NetnsLab:
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        remove_stale()
        self._closed = False
        atexit.register(self.close)
        if threading.current_thread() is threading.main_thread():
            self._old_term = signal.signal(signal.SIGTERM, self._on_term)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _on_term(self, signum: int, frame: Optional[FrameType]) -> None:
        raise SystemExit(128 + signum)

    def _build(self) -> None:
        _ip("netns", "add", self.switch)
        self.namespaces.append(self.switch)
        _in(self.switch, "ip", "link", "set", "lo", "up")
        _in(self.switch, "ip", "link", "add", "br0", "type", "bridge")
        _in(self.switch, "ip", "link", "set", "br0", "up")
        for i in range(self.n):
            ns = self.host_ns(i)
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            _in(
                self.switch, "ip", "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns
            )
            _in(self.switch, "ip", "link", "set", f"v{i}", "master", "br0", "up")
            _in(ns, "ip", "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
            _in(ns, "ip", "link", "set", "eth0", "up")
            _in(ns, "ip", "link", "set", "lo", "up")

    def throttle(self, i: int, mbit: float) -> None:
        """Rate-limit host i in both directions: its eth0 egress and the bridge port's egress."""
        spec = _tbf(mbit)
        _in(self.host_ns(i), "tc", "qdisc", "replace", "dev", "eth0", *spec)
        _in(self.switch, "tc", "qdisc", "replace", "dev", f"v{i}", *spec)

    def slow_link(self, i: int, j: int, mbit: float) -> None:
        """Only the traffic between hosts i and j gets slow: a direct veth pair between them,
        host routes (/32) for each other's address over it, tbf on both ends. Every other pair
        still goes over the bridge. (Per-destination classes with prio/u32 would be simpler,
        but these kernels lack those qdiscs; tbf is enough this way.)"""
        a, b = f"l{i}to{j}", f"l{j}to{i}"
        _ip(
            "link",
            "add",
            a,
            "netns",
            self.host_ns(i),
            "type",
            "veth",
            "peer",
            "name",
            b,
            "netns",
            self.host_ns(j),
        )
        spec = _tbf(mbit)
        for ns, dev, peer in ((self.host_ns(i), a, j), (self.host_ns(j), b, i)):
            _in(ns, "ip", "link", "set", dev, "up")
            _in(ns, "ip", "route", "add", f"{self.address(peer)}/32", "dev", dev)
            _in(ns, "tc", "qdisc", "replace", "dev", dev, *spec)

    def argv_on(self, i: int, argv: Sequence[str]) -> list[str]:
        """argv run in host i's namespace with hostname self.hostnames[i]."""
        return [
            "ip",
            "netns",
            "exec",
            self.host_ns(i),
            "unshare",
            "--uts",
            "sh",
            "-c",
            'hostname "$0" && exec "$@"',
            self.hostnames[i],
            *argv,
        ]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for ns in reversed(self.namespaces):
            # One namespace that resists (a slow `ip` under load) must not keep the others alive.
            try:
                _kill_ns_pids(ns)
                # Deleting a namespace destroys the veth ends and the bridge inside it.
                if _ip("netns", "del", ns, check=False).returncode != 0:
                    _ip("netns", "del", ns, check=False)
            except subprocess.TimeoutExpired:
                _ip("netns", "del", ns, check=False, timeout=30)
        self.namespaces.clear()
        if self._old_term is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._old_term)
            self._old_term = None
        atexit.unregister(self.close)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def leftovers(self) -> list[str]:
        """Namespaces of this lab that still exist (for tests of the cleanup)."""
        r = _ip("netns", "list", check=False)
        names = {line.split()[0] for line in r.stdout.splitlines() if line.split()}
        return sorted(n for n in names if n.startswith(self.prefix))


def run_pgdoctor_check(
    lab: NetnsLab,
    args: Sequence[str],
    timeout_s: float,
    port: int = 29400,
    env_per_host: Optional[Sequence[dict[str, str]]] = None,
    hosts: Optional[Sequence[int]] = None,
) -> list[Any]:
    """`pgdoctor check ARGS` once per host (rank i on host i, MASTER_ADDR = host 0), started with
    pgdoctor.probes.processes.run_children; returns its ChildOutcome list. `hosts` starts only some ranks
    (the others never arrive)."""
    import sys

    from pgdoctor.probes.processes import run_children

    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "PYTHONPATH") if k in os.environ}
    started = list(hosts) if hosts is not None else list(range(lab.n))
    argvs, envs = [], []
    for i in started:
        env = {
            **base,
            "RANK": str(i),
            "WORLD_SIZE": str(lab.n),
            "LOCAL_RANK": "0",
            "LOCAL_WORLD_SIZE": "1",
            "MASTER_ADDR": lab.address(0),
            "MASTER_PORT": str(port),
            **((env_per_host or [{}] * lab.n)[i]),
        }
        argvs.append(lab.argv_on(i, [sys.executable, "-m", "pgdoctor", "check", *args]))
        envs.append(env)
    return run_children(argvs, envs, timeout_s)
