"""sglang_runtime: SGLang's own words for a tensor-parallel server whose scheduler processes failed
(RUN544 and existing codes).

Formats, read at their sources (PyPI wheels sglang 0.3.6, 0.4.3, 0.5.23; its logger writes "[2025-01-01
12:00:00 TP1] " before a tensor-parallel rank's lines):
- the memory check before the weights load (model_executor/model_runner.py 0.3-0.4, distributed/bootstrap.py
  0.5): "The memory capacity is unbalanced. Some GPUs may be occupied by other processes." (0.5 appends
  "pre_model_load_memory=12.5, local_gpu_memory=78.9, ..."): another process holds memory on one GPU, read
  as vLLM's start-up free-memory check is (cuda_oom, RUN101);
- a scheduler that ended: the watchdog of 0.5 (utils/watchdog.py) "Subprocess scheduler_1 (pid=4321) crashed
  with exit code -11. Triggering SIGQUIT for cleanup...", an exit like any launcher's (a signal's name, -9
  the OOM killer's); "Rank 0 scheduler is dead. Please check if there are relevant logs." (0.4,
  entrypoints/engine.py): RUN133;
- the start-up wrappers that point elsewhere: "Received sigquit from a child proces(s). It usually means the
  child failed." (0.4-0.5), "Initialization failed. Please see the error messages above.", "Initialization
  failed. warmup error: ..." (0.3-0.5), the record heads "Scheduler hit an exception: Traceback ...",
  "TpModelWorkerClient hit an exception: ...", "DataParallelController hit an exception: ..." (0.4-0.5) whose
  traceback a paste may have cut: RUN133 at the weakest tier, for a paste that shows nothing else;
- the scheduler's watchdog over a forward batch that never finished (managers/scheduler.py 0.4
  "Watchdog timeout (self.watchdog_timeout=300)", utils/watchdog.py 0.5 "Scheduler watchdog timeout
  (self.watchdog_timeout=300, self.soft=False)"; --watchdog-timeout): a rank hangs, most often in a
  collective: collective_timeout, RUN544.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launcher import exit_event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_UNBALANCED = lazy_re.compile(
    r"The memory capacity is unbalanced\. Some GPUs may be occupied by other processes\.?"
    r"(?: pre_model_load_memory=(?P<pre>\d+(?:\.\d+)?), local_gpu_memory=(?P<local>\d+(?:\.\d+)?))?"
)
_CRASHED = lazy_re.compile(
    r"Subprocess (?P<name>\S+) \(pid=(?P<pid>\d+)\) crashed with exit code (?P<code>-?\d+)"
)
_DEAD = lazy_re.compile(r"Rank (?P<rank>\d+) scheduler is dead\b")
_WRAPPER = lazy_re.compile(
    r"Received sigquit from a child process?\. It usually means the child failed|"
    r"Initialization failed\. (?:Please see the error messages above|warmup error)|"
    r"(?:Scheduler|TpModelWorkerClient|DataParallelController) hit an exception"
)
_WATCHDOG = lazy_re.compile(r"[Ww]atchdog timeout \(self\.watchdog_timeout=(?P<secs>\d+(?:\.\d+)?)")


def _unbalanced(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"format": "sglang_unbalanced", "likely_cause": "other_process"}
    if m.group("pre"):
        facts.update(free_gb=float(m.group("pre")), local_gb=float(m.group("local")))
    return [
        row.event(
            hit,
            "SGLang found much less free memory on this GPU than on the others before loading the weights: "
            "another process (or a leftover server) holds memory on it",
            facts,
            dedupe=(row.code, hit.rank, "cuda_error"),
        )
    ]


def _crashed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = int(m.group("code"))
    if code == 0:
        return None
    facts: dict[str, Any] = {
        "exitcode": code,
        "pid": int(m.group("pid")),
        "worker": m.group("name"),
        "reporter": "sglang",
    }
    return [exit_event(hit, facts, None)]


def _dead(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"SGLang's scheduler of rank {m.group('rank')} died; its own log (or dmesg: the OOM killer) says "
            "why",
            {"reporter": "sglang", "rank": int(m.group("rank"))},
            dedupe=(row.code, "sglang_dead"),
        )
    ]


def _wrapper(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "an SGLang server process failed while starting; the child's own error, above this line, is the "
            "cause",
            {"reporter": "sglang", "reason": "server_start_failed"},
            dedupe=(row.code, "sglang_wrapper"),
        )
    ]


def _watchdog(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    secs = float(m.group("secs"))
    return [
        row.event(
            hit,
            f"{hit.who()}: SGLang's watchdog saw no forward batch finish in {secs:g} s: a rank hangs, most "
            "often in a collective of the tensor-parallel group (a dead or stuck peer)",
            {"framework": "sglang", "timeout_s": secs},
            dedupe=(row.code, hit.rank, "sglang_watchdog"),
        )
    ]


SIGNATURES = (
    Signature(
        "sglang unbalanced memory",
        _UNBALANCED,
        _unbalanced,
        C.CUDA_OOM.code,
        anchors=(b"The memory capacity is unbalanced",),
    ),
    Signature(
        "sglang subprocess crashed",
        _CRASHED,
        _crashed,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b") crashed with exit code",),
        worth=(rb"\) crashed with exit code -?\d+",),
    ),
    Signature(
        "sglang scheduler dead",
        _DEAD,
        _dead,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(b"scheduler is dead",),
        worth=(rb"Rank \d+ scheduler is dead",),
    ),
    Signature(
        "sglang watchdog",
        _WATCHDOG,
        _watchdog,
        C.SGLANG_WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"atchdog timeout (self.watchdog_timeout=",),
    ),
    # the wrappers only: any cause the log shows is a stronger tier
    Signature(
        "sglang start failed",
        _WRAPPER,
        _wrapper,
        C.RANK_EXITED.code,
        tier=3,
        anchors=(b"Received sigquit from a child", b"Initialization failed. ", b"hit an exception"),
        worth=(
            rb"Received sigquit from a child",
            rb"Initialization failed\. (?:Please see|warmup error)",
            rb"(?:Scheduler|TpModelWorkerClient|DataParallelController) hit an exception",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
