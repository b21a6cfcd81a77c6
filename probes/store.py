"""The c10d TCPStore of ranks that pgdoctor starts itself, listening on the given address only.

TCPStore's own server binds the wildcard address (every interface of the host); pgdoctor's
ranks never need more than MASTER_ADDR, so rank 0 binds that address itself and hands the
listening socket to the store."""

from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any


def listen_on(addr: str, port: int, backlog: int) -> socket.socket:
    family, _, _, _, sockaddr = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def tcp_store(
    addr: str, port: int, world_size: int, server: bool, timeout_s: float, wait_for_workers: bool = False
) -> Any:
    import torch.distributed as dist

    timeout = timedelta(seconds=timeout_s)
    if not server:
        return dist.TCPStore(addr, port, world_size, False, timeout=timeout)
    try:
        sock = listen_on(addr, port, max(128, world_size))
    except OSError as exc:
        raise RuntimeError(f"rank 0 cannot listen on {addr}:{port}: {exc.strerror}") from None
    # The store's server takes the descriptor over; detach so Python never closes it under it.
    return dist.TCPStore(
        addr,
        port,
        world_size,
        True,
        timeout=timeout,
        wait_for_workers=wait_for_workers,
        master_listen_fd=sock.detach(),
    )
