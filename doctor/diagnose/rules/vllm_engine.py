"""vllm_engine: vLLM's own words for a tensor-parallel engine whose workers stopped answering, and for a
Ray cluster whose nodes share one address (RUN540-RUN542).

Formats, read at their sources (PyPI wheels vllm 0.4.3, 0.6.6, 0.34.0):
- the executor's call into its workers that never returned (v1/executor/multiproc_executor.py 0.8-0.34,
  VLLM_RPC_TIMEOUT / VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS): "TimeoutError: RPC call to execute_model timed
  out."; the v0 engine's step (engine/async_llm_engine.py 0.4-0.6, VLLM_ENGINE_ITERATION_TIMEOUT_S):
  "asyncio.exceptions.TimeoutError" then "Engine iteration timed out. This should never happen!". A worker
  stuck in a collective (a peer gone or slower, a deadlock of the tensor-parallel group) is the usual
  reason: collective_timeout, RUN540;
- the shared-memory message queue the driver broadcasts each step on (distributed/device_communicators/
  shm_broadcast.py 0.5-0.34, logged at WARNING every VLLM_RINGBUFFER_WARNING_INTERVAL seconds while a reader
  has not taken the last block): "No available shared memory broadcast block found in 60 second." (0.5-0.6),
  "... in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming
  work (e.g. compilation, weight/kv cache quantization)." (0.7+; readers: "No available shared memory
  broadcast block found in 60 seconds" too). A long compile at start prints it in a healthy run, so it
  is a failure only when the engine never came up after it (event.UNTIL_UP, diagnose/lookahead.py reads
  vLLM's "Application startup complete" / "init engine ... took"), and weak (tier 1): RUN541;
- Ray's nodes with one IP address (executor/ray_gpu_executor.py 0.4-0.6, v1/executor/ray_executor.py
  0.7-0.34): "RuntimeError: Every node should have a unique IP address. Got 2 nodes with node ids [...] and 1
  unique IP addresses {...}. Please check your network configuration. If you set `VLLM_HOST_IP` environment
  variable, make sure it is unique for each node." (containers on a bridge network each see 172.17.0.2, or
  one VLLM_HOST_IP copied to every node): rendezvous, RUN542;
- a headless data-parallel engine that never heard from its front-end (v1/engine/core.py 0.9-0.34,
  startup_handshake): "RuntimeError: Did not receive response from front-end process within 5 minutes":
  rendezvous, RUN543;
- the start-up wrappers that point above themselves (v1/engine/utils.py "Engine core initialization failed.
  See root cause above. Failed core proc(s): {}", multiproc_executor.py "WorkerProc initialization failed due
  to an exception in a background process. See stack trace for root cause.", 0.6's MQ engine "Engine process
  failed to start. See stack trace for the root cause.", v1's "WorkerProc hit an exception." and
  EngineDeadError's "EngineCore encountered an issue. See stack trace (above) for the root cause.", v0's
  AsyncEngineDeadError "Task finished unexpectedly. This should never happen! ..." / "Background loop has
  errored already."): RUN133 at the weakest tier, for a paste that shows nothing else;
- the message queue's own /dev/shm check (shm_broadcast.py 0.2x-0.34): "RuntimeError: Insufficient space in
  /dev/shm for <allocation>: 1024 MiB required, 64 MiB free. Increase /dev/shm (e.g. --shm-size or
  --ipc=host).": /dev/shm too small, RUN360 as for NCCL's and UCX's segments.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import UNTIL_UP, Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_RPC = lazy_re.compile(
    r"RPC call to (?P<method>\w+) timed out|Engine iteration timed out\. This should never"
)
_SHM = lazy_re.compile(r"No available shared memory broadcast block found in (?P<secs>\d+) seconds?")
_HANDSHAKE = lazy_re.compile(r"Did not receive response from front-end process within (?P<mins>\d+) minutes")
_INIT_FAILED = lazy_re.compile(
    r"Engine core initialization failed\. See root cause above|"
    r"WorkerProc initialization failed due to an exception in a background process|"
    r"Engine process failed to start\. See stack trace for the root cause|"
    r"EngineCore encountered an issue\. See stack trace \(above\) for the root cause|"
    r"Task finished unexpectedly\. This should never happen! Please open an issue on Github|"
    r"Background loop has errored already|"
    r"WorkerProc hit an exception"
)
_SHM_SPACE = lazy_re.compile(
    r"Insufficient space in (?P<path>\S+) for (?P<what>[^:]{1,80}): (?P<need>\d+) MiB required, "
    r"(?P<free>\d+) MiB free"
)
_SAME_IP = lazy_re.compile(
    r"Every node should have a unique IP address\.(?: Got (?P<nodes>\d+) nodes with node ids .{0,2000}? and "
    r"(?P<ips>\d+) unique IP addresses)?"
)


def _rpc(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "vllm"}
    if m.group("method"):
        facts["method"] = m.group("method")
    return [
        row.event(
            hit,
            f"vLLM's engine waited in vain for its workers ({m.group(0)}): a worker is stuck, most "
            f"often in a "
            "collective of the tensor-parallel group whose peer died or hangs; the workers' own "
            "lines say which",
            facts,
            dedupe=(row.code, "vllm_rpc"),
        )
    ]


def _shm(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"vLLM's workers stopped taking the engine's broadcasts for {m.group('secs')} s or more and the "
            "engine never came up after it: a worker hangs (a collective, a dead peer, a deadlock)",
            {"framework": "vllm", "waited_s": int(m.group("secs")), UNTIL_UP: ""},
            dedupe=(row.code, "vllm_shm"),
        )
    ]


def _same_ip(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "vllm"}
    if m.group("nodes"):
        facts.update(nodes=int(m.group("nodes")), unique_ips=int(m.group("ips")))
    return [
        row.event(
            hit,
            "vLLM found several Ray nodes behind one IP address: containers on a bridge network (each sees "
            "172.17.0.x) or one VLLM_HOST_IP copied to every node; run with host networking or set "
            "each node's "
            "own VLLM_HOST_IP",
            facts,
            dedupe=(row.code,),
        )
    ]


def _handshake(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"a headless vLLM engine waited {m.group('mins')} minutes for the front-end's handshake: the "
            "front-end is not running, or --data-parallel-address / --data-parallel-rpc-port point elsewhere "
            "or are blocked",
            {"framework": "vllm", "waited_min": int(m.group("mins"))},
            dedupe=(row.code,),
        )
    ]


def _shm_space(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: {m.group('path')} has {m.group('free')} MiB free, vLLM's {m.group('what')} needs "
            f"{m.group('need')} MiB: enlarge it (docker --shm-size / --ipc=host, a Memory emptyDir in "
            "Kubernetes)",
            {"framework": "vllm", "shm_path": m.group("path"), "required_mib": int(m.group("need"))},
            dedupe=(row.code, "vllm_shm_space"),
        )
    ]


def _init_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "vLLM's engine (or one of its workers) failed while starting; its own error, above this line in "
            "the worker's or engine's log, is the cause",
            {"framework": "vllm", "reason": "engine_start_failed"},
            dedupe=(row.code, "vllm_init"),
        )
    ]


SIGNATURES = (
    Signature(
        "vllm worker rpc timeout",
        _RPC,
        _rpc,
        C.VLLM_RPC_TIMEOUT.code,
        anchors=(b"RPC call to", b"Engine iteration timed out"),
        worth=(rb"RPC call to \w+ timed out", rb"Engine iteration timed out"),
        examples=("TimeoutError: RPC call to execute_model timed out.",),
    ),
    Signature(
        "vllm shm broadcast stall",
        _SHM,
        _shm,
        C.VLLM_SHM_BROADCAST_STALL.code,
        tier=2,
        anchors=(b"No available shared memory broadcast block",),
    ),
    Signature(
        "vllm nodes share an ip",
        _SAME_IP,
        _same_ip,
        C.VLLM_DUPLICATE_NODE_IP.code,
        anchors=(b"Every node should have a unique IP address",),
    ),
    Signature(
        "vllm data-parallel handshake",
        _HANDSHAKE,
        _handshake,
        C.VLLM_DP_HANDSHAKE_TIMEOUT.code,
        anchors=(b"Did not receive response from front-end",),
    ),
    Signature(
        "vllm shm space",
        _SHM_SPACE,
        _shm_space,
        C.SHARED_MEMORY_TOO_SMALL.code,
        anchors=(b"Insufficient space in ",),
        worth=(rb"Insufficient space in \S+ for [^:]{1,80}: \d+ MiB required",),
    ),
    # the wrapper only: any cause the log shows (a worker's OOM, NCCL error, a signal) is a stronger tier
    Signature(
        "vllm engine start failed",
        _INIT_FAILED,
        _init_failed,
        C.RANK_EXITED.code,
        tier=3,
        anchors=(
            b"Engine core initialization failed",
            b"WorkerProc initialization failed",
            b"Engine process failed to start",
            b"EngineCore encountered an issue",
            b"Task finished unexpectedly. This should never happen",
            b"Background loop has errored already",
            b"WorkerProc hit an exception",
        ),
    ),
)

parse = gated_reader(SIGNATURES)
