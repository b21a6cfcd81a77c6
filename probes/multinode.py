"""The multi-node run's measurements: the rendezvous of one process per node and the bandwidth
between nodes over gloo (pgdoctor.engine.multinode runs the phases and merges the reports).

Rendezvous: rank 0 hosts a c10d TCPStore on a socket it binds to MASTER_ADDR itself (never the
wildcard address); under torchrun the agent's store on MASTER_PORT is used instead.

Bandwidth: a gloo group on the interface that routes to MASTER_ADDR; in each round every rank
sends to rank+k and receives from rank-k at the same time. The default schedule uses k = 1, 2
(each node meets 4 peers, O(n) pairs); all_pairs uses every k in 1..n-1 (all ordered pairs).
Within a round the exchange size grows x4 from 64 KiB until the slowest pair needs
RAMP_TARGET_S (or the configured size is reached), then the best of 3 exchanges counts. Every
gloo wait is bounded by the phase deadline.
"""

from __future__ import annotations

import json
import socket
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from pgdoctor.knowledge.launchenv import LaunchInfo
from pgdoctor.probes.store import listen_on


class SetupError(ValueError):
    """The launch environment names an endpoint this node cannot use (a usage error)."""


def seconds_left(until: float, floor: float = 0.5) -> float:
    return max(floor, until - time.monotonic())


def schedule(n: int, all_pairs: bool) -> list[int]:
    """Shifts k of the rounds: rank r sends to r+k and receives from r-k (mod n)."""
    if n < 2:
        return []
    if all_pairs:
        return list(range(1, n))
    return [k for k in (1, 2) if k < n]


def _resolve(addr: str) -> str:
    try:
        return str(socket.getaddrinfo(addr, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])
    except socket.gaierror as exc:
        raise SetupError(f"MASTER_ADDR {addr} does not resolve: {exc.strerror or exc}") from None


def local_address_towards(addr: str, port: int) -> str:
    """The source address the kernel uses to reach `addr` (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((addr, port))
        return str(s.getsockname()[0])


def _wait_until_listening(addr: str, port: int, timeout_s: float) -> None:
    """Return once a TCP connect to addr:port succeeds; ConnectionError after timeout_s."""
    end = time.monotonic() + timeout_s
    last = "no answer"
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise ConnectionError(
                f"{addr}:{port}: nothing accepted a connection within {timeout_s:.1f} s ({last})"
            )
        try:
            with socket.create_connection((addr, port), timeout=min(left, 2.0)):
                return
        except OSError as exc:
            last = exc.strerror or type(exc).__name__
            time.sleep(min(0.2, max(0.0, end - time.monotonic())))


class Rendezvous:
    """The c10d store all ranks share, with pgdoctor's keys under one prefix."""

    def __init__(self, info: LaunchInfo, env: Mapping[str, str], until: float):
        """`until`: the monotonic time by which the store must be reached. A deadline, not a
        duration: importing torch below takes seconds on a loaded host, and a duration taken
        before it was spent on top of the import (--timeout 10 ran 9.7 s of an 11 s bound)."""
        import datetime

        from torch.distributed import PrefixStore, TCPStore

        timeout_s = seconds_left(until)
        assert info.master_addr and info.master_port is not None and info.rank is not None and info.world_size
        self.rank, self.size = info.rank, info.world_size
        self.addr = _resolve(info.master_addr)
        self.port = info.master_port
        self._listener: Optional[socket.socket] = None
        td = datetime.timedelta(seconds=timeout_s)
        agent = env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
        prefix = (
            f"pgdoctor/{env.get('TORCHELASTIC_RUN_ID', 'run')}/{env.get('TORCHELASTIC_RESTART_COUNT', '0')}"
        )
        try:
            if self.rank == 0 and not agent:
                self._listener = self._bind()
                base = TCPStore(
                    self.addr,
                    self.port,
                    self.size,
                    True,
                    td,
                    wait_for_workers=False,
                    master_listen_fd=self._listener.fileno(),
                    use_libuv=True,
                )
            else:
                # TCPStore's client retries a failed connect once more, with the same timeout
                # (2x --timeout's share). Reach the port first within our own bound.
                _wait_until_listening(self.addr, self.port, timeout_s)
                base = TCPStore(info.master_addr, self.port, self.size, False, td)
        except (RuntimeError, ValueError) as exc:
            self.close()
            raise ConnectionError(f"{info.master_addr}:{self.port}: {str(exc).splitlines()[0]}") from None
        self.store = PrefixStore(prefix, base)
        self._base = base

    def _bind(self) -> socket.socket:
        try:
            return listen_on(self.addr, self.port, 512)
        except OSError as exc:
            raise SetupError(
                f"rank 0 cannot listen on MASTER_ADDR {self.addr}:{self.port}: {exc.strerror} "
                "(is MASTER_ADDR an address of the rank-0 host, is the port free?)"
            ) from None

    def set(self, key: str, value: Any) -> None:
        self.store.set(key, json.dumps(value))

    def get(self, key: str) -> Any:
        return json.loads(self.store.get(key).decode())

    def announce(self, key: str, rank: int) -> None:
        """Add `rank` to the list under `key` (one key however many ranks arrive). A torch whose
        store has no append leaves the list short; the reader then checks key by key."""
        try:
            self.store.append(key, f"{rank},")  # type: ignore[attr-defined]  # missing from the stubs
        except (AttributeError, RuntimeError):
            pass

    def announced(self, key: str) -> frozenset[int]:
        if not self.has(key):
            return frozenset()
        return frozenset(int(r) for r in self.store.get(key).decode().split(",") if r.strip().isdigit())

    def add(self, key: str, amount: int) -> int:
        """The store's atomic counter: add `amount` (0 reads it) and return the new value."""
        return int(self.store.add(key, amount))

    def has(self, key: str) -> bool:
        return bool(self.store.check([key]))

    def wait_for(self, key: str, until: float, poll_s: float = 0.05) -> bool:
        while time.monotonic() < until:
            if self.has(key):
                return True
            time.sleep(poll_s)
        return self.has(key)

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None


PROBE_BYTES = 64 << 10
# An exchange this long on the slowest pair is long enough to measure it: token buckets and
# switch buffers absorb the first few hundred KiB of a burst, so tiny exchanges flatter slow links.
RAMP_TARGET_S = 0.2


class _Clock:
    """Every gloo wait of the bandwidth phase is bounded by the phase's deadline."""

    def __init__(self, deadline: float):
        self.deadline = deadline

    def wait(self, work: Any) -> None:
        import datetime

        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the bandwidth phase reached its share of --timeout")
        work.wait(datetime.timedelta(seconds=left))


def _exchange(
    pg: Any,
    clock: _Clock,
    send: Any,
    recv: Any,
    nbytes: int,
    dst: int,
    src: int,
    tag: int,
    result: dict[str, Any],
) -> float:
    """One simultaneous send to dst / receive from src; seconds until the receive completed. A
    receive cut off by the deadline still bounds the pair: less than nbytes in that time."""
    clock.wait(pg.barrier())
    t0 = time.perf_counter()
    s = pg.send([send[:nbytes]], dst, tag)
    r = pg.recv([recv[:nbytes]], src, tag)
    try:
        clock.wait(r)
    except (RuntimeError, TimeoutError):
        result["got"][src] = nbytes / (time.perf_counter() - t0) / 1e9
        result["upper_bound"].append(src)
        raise
    dt = time.perf_counter() - t0
    clock.wait(s)
    return dt


def suspects(got: Sequence[Sequence[float]], ratio: float, limit: int) -> list[tuple[int, int]]:
    """(src, dst) of measured pairs below ratio x the median, slowest first, at most `limit`.
    `got[dst][src]` is what dst received from src; NaN where nothing was measured."""
    pairs = [(v, src, dst) for dst, row in enumerate(got) for src, v in enumerate(row) if v == v]
    if len(pairs) < 3:
        return []
    med = statistics.median(v for v, _, _ in pairs)
    return [(src, dst) for v, src, dst in sorted(pairs) if v < ratio * med][:limit]


def _confirm(
    pg: Any,
    clock: _Clock,
    torch: Any,
    send: Any,
    recv: Any,
    rank: int,
    size: int,
    shifts: Sequence[int],
    reps: int,
    ratio: float,
    result: dict[str, Any],
) -> None:
    """Measure the suspiciously slow pairs again, one pair at a time with the rest idle, and keep
    the better value: a stall from other traffic or CPU contention during a round then does not
    become a slow link or node, while a really slow path stays slow."""
    row = torch.tensor([float("nan") if v is None else v for v in result["got"]], dtype=torch.float64)
    rows = [torch.zeros(size, dtype=torch.float64) for _ in range(size)]
    clock.wait(pg.allgather([rows], [row]))
    # A margin above the reporting ratio, so that pairs near the line get their second chance too.
    todo = suspects([r.tolist() for r in rows], min(1.0, ratio * 1.5), limit=2 * size)
    sizes = dict(zip(shifts, result["round_bytes"]))
    for tag, (src, dst) in enumerate(todo, start=1000):
        n = sizes.get((dst - src) % size, PROBE_BYTES)
        for _ in range(reps):
            clock.wait(pg.barrier())
            if rank == src:
                clock.wait(pg.send([send[:n]], dst, tag))
            elif rank == dst:
                t0 = time.perf_counter()
                clock.wait(pg.recv([recv[:n]], src, tag))
                result["got"][src] = max(result["got"][src] or 0.0, n / (time.perf_counter() - t0) / 1e9)
    result["confirmed"] = [[src, dst] for src, dst in todo]


def measure(
    store: Any,
    rank: int,
    size: int,
    device_addr: str,
    nbytes: int,
    shifts: Sequence[int],
    reps: int,
    deadline: float,
    slow_ratio: float = 0.5,
) -> dict[str, Any]:
    """This rank's side of the rounds: GB/s received from each source (best of `reps` exchanges at
    the round's size, suspiciously slow pairs measured again alone), the bytes per exchange of
    each round, and what stopped it early. Never waits past `deadline`; after a timeout the group
    is unusable, so the rank stops and reports what it has (a cut-off receive as an upper bound)."""
    import datetime

    import torch
    from torch.distributed import AllreduceOptions, PrefixStore, ProcessGroupGloo, ReduceOp

    result: dict[str, Any] = {"got": [None] * size, "upper_bound": [], "round_bytes": [], "error": None}
    clock = _Clock(deadline)
    gloo: Any = ProcessGroupGloo  # the private _Options and the bound ops are missing from torch's stubs
    opts = gloo._Options()
    opts._timeout = datetime.timedelta(seconds=seconds_left(deadline))
    opts._devices = [gloo.create_device(hostname=device_addr)]
    max_op: Any = AllreduceOptions()
    max_op.reduceOp = ReduceOp.MAX
    try:
        pg: Any = gloo(PrefixStore("gloo", store), rank, size, opts)
        send = torch.ones(max(nbytes, PROBE_BYTES), dtype=torch.uint8)
        recv = torch.empty_like(send)
        for i, k in enumerate(shifts):
            dst, src = (rank + k) % size, (rank - k) % size
            _exchange(pg, clock, send, recv, PROBE_BYTES, dst, src, k, result)  # connects the pair
            # Ramp the size up (x4) until the slowest pair needs RAMP_TARGET_S, the configured size
            # is reached, or the round's share of the time would not allow another step. Every
            # rank takes the same decision from all-reduced values, so sends and receives match.
            n = PROBE_BYTES
            while True:
                dt = _exchange(pg, clock, send, recv, n, dst, src, k, result)
                best = n / dt / 1e9
                agreed = torch.tensor([dt, -(deadline - time.monotonic())], dtype=torch.float64)
                clock.wait(pg.allreduce([agreed], max_op))
                slowest, left = float(agreed[0]), -float(agreed[1])
                share = 0.8 * left / (len(shifts) - i)
                if n >= nbytes or slowest >= RAMP_TARGET_S or slowest * 4 * (reps + 1) > share:
                    break
                n = min(nbytes, n * 4)
            result["round_bytes"].append(n)
            if slowest * reps <= share:
                best = max(
                    best,
                    *(
                        n / _exchange(pg, clock, send, recv, n, dst, src, k, result) / 1e9
                        for _ in range(reps)
                    ),
                )
            result["got"][src] = best
        _confirm(pg, clock, torch, send, recv, rank, size, shifts, reps, slow_ratio, result)
    except (RuntimeError, TimeoutError) as exc:  # a peer died, or the deadline came
        result["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return result
