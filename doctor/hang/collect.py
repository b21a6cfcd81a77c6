"""Evidence of live ranks, in tiers, within one deadline: /proc (state, wchan, CPU time, threads)
at every sample; the rank's own socket where the job opted in or runs under `pgdoctor run` (no
ptrace; also its open ranges and flight recorder); else torch's own per-rank worker server where
the job started one (no ptrace; its traceback and flight recorder); else py-spy (pystack as the
fallback). A tool that refuses is asked once:
its cause and fix go into the rank's evidence. Samples are rounds over all ranks, the tools of a
round run in parallel, and nothing here signals, stops or kills a rank."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from pgdoctor.diagnose.flight import dump
from pgdoctor.diagnose.stacks.evidence import Frame, RankEvidence, Worker, pending_group, pending_seq
from pgdoctor.probes import live, torch_server
from pgdoctor.probes.flight_pipe import request_dump
from pgdoctor.probes.gpu import rank_util
from pgdoctor.probes.gpu.nvml import LiveBackend, NvmlBackend
from pgdoctor.probes.ranks import ProcFs, Rank
from pgdoctor.probes.stacks import TOOLS, StackRead, read_stack, stop_all

# The evidence tiers beyond /proc, in the order they are tried.
TIERS = ("socket", "torch", *TOOLS, "nvml")
# One tool call never takes longer than this (a healthy py-spy dump takes 40-80 ms).
PER_CALL_S = 5.0
NO_PYTHON_FRAME = "no Python frame in the main thread (the interpreter is starting or exiting)"
NO_PYTHON_FRAME_FIX = (
    "a rank that exits after an error: its traceback is in the job's output; "
    "its native stack: py-spy dump --native --pid PID"
)


def _frames(raw: Sequence[dict[str, Any]]) -> list[Frame]:
    return [Frame.from_json(f) for f in raw]


class Collector:
    def __init__(
        self,
        ranks: Sequence[Rank],
        host: str,
        fs: Optional[ProcFs] = None,
        parallel: int = 8,
        tiers: Sequence[str] = TIERS,
        nvml: Callable[[], NvmlBackend] = LiveBackend,
    ):
        self.ranks = list(ranks)
        self.nvml = nvml if "nvml" in tiers else None
        self.tools = [t for t in tiers if t in TOOLS]
        self.fs = fs or ProcFs()
        self.pool = ThreadPoolExecutor(
            max_workers=max(1, min(parallel, len(self.ranks) or 1)), thread_name_prefix="pgdoctor-hang"
        )
        self.evidence = [
            RankEvidence(
                rank=r.rank,
                pid=r.proc.pid,
                host=host,
                job=r.job,
                world_size=r.world_size,
                local_rank=r.local_rank,
                rank_source=r.source,
                threads=r.proc.threads,
                tiers={"proc": "ok"},
            )
            for r in self.ranks
        ]
        self.flight: dict[int, Any] = {}  # rank -> flight-recorder JSON from its socket
        self._sockets = [
            live.socket_path(r.proc.pid, r.proc.uid, r.proc.environ) if "socket" in tiers else None
            for r in self.ranks
        ]
        self._torch = [
            torch_server.server_path(r.proc.pid, r.proc.environ) if "torch" in tiers else None
            for r in self.ranks
        ]
        self._done: set[int] = set()  # indexes whose stack tool refused or timed out: not asked again

    def run(self, samples: int, interval_s: float, deadline: float) -> list[RankEvidence]:
        try:
            for n in range(samples):
                start = time.monotonic()
                if start >= deadline:
                    break
                self._round(deadline)
                if n + 1 < samples:
                    time.sleep(
                        max(0.0, min(interval_s - (time.monotonic() - start), deadline - time.monotonic()))
                    )
            self._workers(deadline)
            self._nccl_pipes(deadline)
            self._gpus()
        except BaseException:
            stop_all()  # the stack tools of this round, and no new one; the ranks are never ours to kill
            raise
        finally:
            self.pool.shutdown(wait=False, cancel_futures=True)
        return self.evidence

    def _proc(self, i: int) -> None:
        ev = self.evidence[i]
        got = self.fs.read_stat(ev.pid)
        if got is None:
            ev.tiers["proc"] = "process exited"
            self._done.add(i)
            return
        cpu, ev.state, ev.wchan = got
        ev.cpu_s.append(cpu)
        ev.sample_times_s.append(time.monotonic())

    def _stack(self, i: int, deadline: float) -> None:
        ev = self.evidence[i]
        budget = min(PER_CALL_S, deadline - time.monotonic())
        if budget <= 0.05:
            return
        path = self._sockets[i]
        if path is not None:
            answer = live.ask(path, min(budget, 2.0))
            if answer is not None and isinstance(answer.get("stack"), list):
                ev.tiers["socket"] = "ok"
                ev.samples.append(_frames(answer["stack"]))
                ev.ranges = [str(r) for r in answer.get("ranges", ())]
                if answer.get("flight_recorder") is not None:
                    self.flight[ev.rank] = answer["flight_recorder"]
                    ev.seq = pending_seq(answer["flight_recorder"])
                    ev.wait_group = pending_group(answer["flight_recorder"], answer.get("groups"))
                    ev.tiers["flight_recorder"] = "ok (socket)"
                return
            ev.tiers["socket"] = "no answer (the rank holds the GIL in C code, or exited)"
        if self._torch_tier(i, budget):
            return
        if not self.tools:
            if path is None:
                ev.tiers["socket"] = (
                    "absent (the job did not opt in: pgdoctor.instrument() or pgdoctor.live())"
                )
            self._done.add(i)
            return
        got: StackRead = read_stack(ev.pid, budget, self.ranks[i].proc.uid, self.tools)
        if got.frames:
            ev.tiers[got.tool] = "ok"
            ev.samples.append(_frames(got.frames))
            return
        if got.frames is not None:
            # The tool read the process but its main thread runs no Python: the interpreter is
            # starting or finalizing (a rank that raised and is exiting, stuck in torch's static
            # destructors). That is no place in the job's code; the next round may find one.
            ev.tiers[got.tool] = NO_PYTHON_FRAME
            if not any(p["cause"] == NO_PYTHON_FRAME for p in ev.problems):
                ev.problems.append({"tier": got.tool, "cause": NO_PYTHON_FRAME, "fix": NO_PYTHON_FRAME_FIX})
            return
        tier = got.tool or "stacks"
        ev.tiers[tier] = "timed out" if got.timed_out else got.cause
        if not any(p["cause"] == got.cause for p in ev.problems):
            ev.problems.append({"tier": tier, "cause": got.cause, "fix": got.fix})
        self._done.add(i)

    def _torch_tier(self, i: int, budget: float) -> bool:
        """torch's worker server of the rank, where the job started one: its stack (and recorder)."""
        path = self._torch[i]
        if path is None:
            return False
        ev = self.evidence[i]
        stack, fr = torch_server.read(path, min(budget, 2.0))
        if stack is None:
            ev.tiers["torch"] = "no answer from torch's worker server (the rank holds the GIL, or exited)"
            return False
        ev.tiers["torch"] = "ok"
        ev.samples.append(_frames(stack))
        if fr is not None and ev.rank not in self.flight:
            self.flight[ev.rank] = fr
            ev.seq = pending_seq(fr)
            ev.tiers["flight_recorder"] = "ok (torch worker server)"
        return True

    def _round(self, deadline: float) -> None:
        live_ix = [i for i in range(len(self.ranks)) if i not in self._done]
        for i in live_ix:
            self._proc(i)
        futures = [self.pool.submit(self._stack, i, deadline) for i in live_ix if i not in self._done]
        for f in futures:
            f.result(timeout=max(0.1, deadline - time.monotonic() + PER_CALL_S))

    def _gpus(self) -> None:
        """Each rank's GPU and its SM utilisation (NVML), read once after the stacks."""
        if self.nvml is None or not self.evidence:
            return
        got, status = rank_util.read([ev.pid for ev in self.evidence], self.nvml)
        for ev in self.evidence:
            ev.gpu = got.get(ev.pid, {})
            ev.tiers["nvml"] = "ok" if ev.gpu else ("not on a GPU" if status == "ok" else status)

    def _nccl_pipes(self, deadline: float) -> None:
        """The flight recorder of NCCL ranks that opened the debug-info pipe (and gave none by socket)."""
        for i, r in enumerate(self.ranks):
            ev = self.evidence[i]
            left = min(2.0, deadline - time.monotonic())
            if ev.rank in self.flight or left <= 0.1 or r.proc.environ is None:
                continue
            path, why = request_dump(r.proc.pid, ev.rank, r.proc.environ, left)
            if not path:
                if not why.startswith("absent"):
                    ev.tiers["flight_recorder"] = f"nccl pipe: {why}"
                continue
            try:
                self.flight[ev.rank] = dump.load_dump(path)
            except (dump.DumpError, OSError, ValueError) as exc:
                ev.tiers["flight_recorder"] = f"nccl pipe: unreadable dump: {exc}"
                continue
            ev.tiers["flight_recorder"] = "ok (nccl pipe)"
            ev.seq = pending_seq(self.flight[ev.rank])

    def _workers(self, deadline: float) -> None:
        """One stack of each DataLoader worker: where a rank that waits for its data is stuck."""
        jobs = []
        for i, r in enumerate(self.ranks):
            for w in r.workers:
                left = min(PER_CALL_S, deadline - time.monotonic())
                jobs.append(
                    (
                        i,
                        w,
                        self.pool.submit(read_stack, w.pid, left, w.uid, self.tools or TOOLS)
                        if left > 0.1
                        else None,
                    )
                )
        for i, w, fut in jobs:
            frames = fut.result() if fut is not None else None
            stack = tuple(_frames(frames.frames)) if frames is not None and frames.frames else ()
            got = self.fs.read_stat(w.pid)
            self.evidence[i].workers.append(Worker(w.pid, stack, got[1] if got else ""))
