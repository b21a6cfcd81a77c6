"""Facts about the rendezvous endpoint that only this host can establish: does MASTER_ADDR
resolve, is it one of this host's addresses, and is MASTER_PORT already taken here."""

from __future__ import annotations

import errno
import socket

from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.model import Measurement, Reason, Unavailable
from pgdoctor.probes.base import ProbeContext, probe


def _resolve(addr: str) -> list[str] | Unavailable:
    try:
        infos = socket.getaddrinfo(addr, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        return Unavailable(Reason.ERROR, f"getaddrinfo({addr}): {exc.strerror or exc}")
    return sorted({str(i[4][0]) for i in infos})


def _local_addresses() -> set[str]:
    """This host's addresses, found without external commands: loopback, the hostname's
    addresses, and whatever can be bound (binding proves the address is local)."""
    addrs = {"127.0.0.1", "::1"}
    for name in {socket.gethostname(), socket.getfqdn()}:
        try:
            addrs |= {str(i[4][0]) for i in socket.getaddrinfo(name, None)}
        except socket.gaierror:
            pass
    return addrs


def _is_local(addr: str) -> bool:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((addr, 0))
            return True
        except OSError:
            return False


def _port_in_use(addr: str, port: int) -> bool | Unavailable:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        # As torch's TCPStore does: a port in TIME_WAIT is free for it, only a live listener is not.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((addr, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            return Unavailable(Reason.ERROR, f"bind({addr}:{port}): {exc.strerror}")
    return False


@probe("launch", area="launch", level="quick", timeout_s=8.0)
def launch(ctx: ProbeContext) -> list[Measurement]:
    info = parse_launch(ctx.env)
    out = [Measurement("launch.launcher", info.launcher, source="environ")]
    if not info.master_addr:
        return out
    resolved = _resolve(info.master_addr)
    out.append(Measurement("launch.master_addr.addresses", resolved, source="getaddrinfo"))
    if isinstance(resolved, Unavailable):
        return out
    local = _local_addresses()
    is_master = any(a in local or _is_local(a) for a in resolved)
    out.append(Measurement("launch.master_addr.is_this_host", is_master, source="bind"))
    if is_master and info.master_port and 0 < info.master_port < 65536:
        out.append(
            Measurement(
                "launch.master_port.in_use", _port_in_use(resolved[0], info.master_port), source="bind"
            )
        )
    return out
