"""A healthy 2-node x 8-GPU run (tests/helpers/healthy_logs.py: NCCL's own INFO records of 2.10 to 2.27,
torchrun's agent, DeepSpeed / Accelerate / Lightning banners, torch's warnings of a run that succeeds,
config dumps full of "timeout", "error" and "oom", every launcher's prefix) gives no warn/fail finding;
one failure line appended to it is still found. And the rows that wait for a communicator to come up
(NCCL's interface list naming docker bridges, its connect retries, c10d's failed connect attempt) are
judged on the whole log, not on the 48 lines of their window."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.diagnose_root import failure_findings, root_finding
from tests.helpers.healthy_logs import FRAMEWORKS, NCCL_VERSIONS, PREFIXES, healthy_log
from tests.helpers.paths import ROOT

# Every NCCL wording behind every prefix, the framework turning with them.
VARIANTS = [
    (nccl, prefix, FRAMEWORKS[(i + j) % len(FRAMEWORKS)])
    for i, nccl in enumerate(NCCL_VERSIONS)
    for j, prefix in enumerate(PREFIXES)
]
_IDS = [f"nccl{n}-{p}-{f}" for n, p, f in VARIANTS]
BRIDGES = ("eth0", "docker0", "br-05ab815fa14e")

OOM = (
    "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
    "capacity of 79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.08 "
    "GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.41 GiB is reserved "
    "by PyTorch but unallocated.\n"
)
WATCHDOG = (
    "[rank3]:[E603 10:44:07.406255799 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
    "Timeout(ms)=600000) ran for 600043 milliseconds before timing out.\n"
)


def test_the_generator_is_deterministic_and_multi_node() -> None:
    log = healthy_log()
    assert log == healthy_log()
    assert log != healthy_log(seed=1)
    lines = log.splitlines()
    assert len(lines) > 600
    assert sum("Init COMPLETE" in ln for ln in lines) == 16
    assert {ln.split(":", 1)[0] for ln in lines if " NCCL INFO " in ln} == {"gpu-node-01", "gpu-node-02"}


@pytest.mark.parametrize("nccl,prefix,framework", VARIANTS, ids=_IDS)
def test_a_healthy_multi_node_run_has_no_failure(nccl: str, prefix: str, framework: str) -> None:
    log = healthy_log(nccl, prefix, framework, seed=len(prefix))
    assert failure_findings(log) == [], [(f.code, f.message) for f in failure_findings(log)]


@pytest.mark.parametrize("nccl", NCCL_VERSIONS)
def test_one_failure_line_after_a_healthy_run_is_found(nccl: str) -> None:
    log = healthy_log(nccl, "srun")
    oom = root_finding(log + OOM)
    assert oom is not None and oom.code == "RUN101" and oom.facts.get("rank") == 5, oom
    timeout = root_finding(log + WATCHDOG)
    assert timeout is not None and timeout.code == "RUN151" and timeout.facts.get("rank") == 3, timeout


def test_pgdoctor_diagnose_on_a_healthy_log_says_no_failure(tmp_path: Path) -> None:
    path = tmp_path / "job.log"
    path.write_text(healthy_log("2.18.5", "pdsh", "deepspeed"))
    out = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    findings = json.loads(out.stdout)["findings"]
    assert [f["code"] for f in findings if f["severity"] in ("warn", "fail")] == []


# NCCL on sockets over a host with docker bridges: hundreds of channel lines between each rank's
# interface list and its "Init COMPLETE". The communicator came up: no failure (the multi-node socket
# transport is a performance note, NET117, not a failure).
@pytest.mark.parametrize("nccl", NCCL_VERSIONS)
@pytest.mark.parametrize("prefix", ["none", "srun", "timestamps"])
def test_docker_bridges_in_a_long_healthy_init_are_no_failure(nccl: str, prefix: str) -> None:
    log = healthy_log(nccl, prefix, socket_ifaces=BRIDGES)
    assert [f.code for f in failure_findings(log)] == ["NET117"]


def _cut_before_init_complete(log: str, host_pid: str) -> str:
    """The log without any up-marker of one process: its communicator never came up."""
    up = ("Init COMPLETE", "Connected all rings", "Connected all trees")
    return "".join(
        ln for ln in log.splitlines(keepends=True) if not (host_pid in ln and any(u in ln for u in up))
    )


def test_docker_bridges_when_the_log_ends_before_init_completes() -> None:
    log = healthy_log("2.18.5", socket_ifaces=BRIDGES)
    cut = log[: log.index("Connected all rings")]
    cut = cut[: cut.rindex("\n") + 1]
    root = root_finding(cut)
    assert root is not None and root.code == "RUN174", root
    assert "docker0" in root.facts["virtual_interfaces"]


def test_docker_bridges_when_one_process_never_comes_up() -> None:
    log = healthy_log("2.21.5", socket_ifaces=BRIDGES)
    first = next(ln for ln in log.splitlines() if "NET/Socket : Using" in ln)
    host_pid = ":".join(first.split(":")[:2]) + ":"
    root = root_finding(_cut_before_init_complete(log, host_pid))
    assert root is not None and root.code == "RUN174", root
    assert root.facts.get("host") == host_pid.split(":")[0]


def test_a_connect_retried_before_a_long_init_is_no_failure() -> None:
    log = healthy_log("2.21.5")
    pid_line = next(ln for ln in log.splitlines() if "NCCL INFO Bootstrap : Using" in ln)
    prefix = pid_line[: pid_line.index(" NCCL INFO ")]
    retry = (
        f"{prefix} NCCL INFO socketPollConnect: connect to 10.1.1.12<43251> returned Connection refused, "
        "retrying (3/34) after sleep for 300 msec\n"
    )
    at = log.index(pid_line) + len(pid_line) + 1
    healthy = log[:at] + retry + log[at:]
    assert failure_findings(healthy) == []
    ended = log[:at] + retry
    root = root_finding(ended)
    assert root is not None and root.category == "nccl_network", root


def test_a_store_connect_attempt_far_from_the_ranks_next_line_is_no_failure() -> None:
    # torch < 2.4 prints one c10d warning per rank while sixteen ranks start together: the rank's next
    # line is past the window, the communicators that come up later say the store answered.
    log = healthy_log("2.10.3", "srun", "torchrun")
    assert "The client socket has failed to connect" in log
    assert failure_findings(log) == []
    cut = log[: log.index("NCCL INFO")]
    cut = cut[: cut.rindex("\n") + 1]
    stuck = "".join(ln for ln in cut.splitlines(keepends=True) if "socket.cpp" in ln)
    root = root_finding(stuck)
    assert root is not None and root.code == "RUN222", root


# The rows whose trigger pattern matches a line of a healthy run at all (python -m tests.helpers.healthy_logs
# prints them), each kept silent by a check of its build, and why. A new row here is a false alarm waiting
# for its log: its build must say what makes the line a failure, and this table why that holds.
MATCH_HEALTHY_LINES = {
    # observations of the network NCCL chose, judged for the whole job (transport.py), never a failure
    "nccl socket transport": "observation",
    "nccl network chosen": "observation",
    "nccl ib none": "observation",
    "nccl no net plugin": "observation",
    "nccl no verbs": "observation",
    "nccl node count": "observation",
    "launcher node count": "observation",
    # the interface list: a failure only if this process's communicator never came up (lookahead.py)
    "nccl socket on virtual interfaces": "settled by the rest of the log",
    # any NCCL WARN: the build reads its detail ("Failed to open libibverbs.so" is no failure)
    "nccl warn": "procedural build",
    # any NCCL WARN: the build wants it inside a communicator's teardown (commReclaim, "destroying NCCL
    # communicators") and then makes it an observation, never a failure
    "nccl warn during communicator teardown": "procedural build",
    # SOCKET is any socket record; the build wants NCCL's failed-call words
    "peer connection": "procedural build",
    # words 'cuda_visible_devices': the build wants a device index past the visible ones
    "device ordinal": "procedural build",
    # pattern 'server': the build wants socket.cpp's or a Python server's bind failure
    "server socket": "procedural build",
    # one failed attempt of c10d's client: errno and later lines decide (lookahead.py)
    "client connect failed": "settled by the rest of the log",
    # a rendezvous frame: the build wants a stack cut there (no exception line after it)
    "stack cut in the rendezvous": "procedural build",
    # every rank's Lightning announcement: the build wants one rank announced twice and others missing
    "lightning processes that took the same global rank": "procedural build",
    # Lightning's announcement or torch's "Added key": the build wants the log to end there, nothing after
    "log that ends at the process group's start": "procedural build",
    # the net under the families (rules/vocabulary.py): a line must also say it failed and not be INFO
    "words: start-up": "procedural build",
    "words: collective timeout": "procedural build",
    "words: network": "procedural build",
    "words: device oom": "procedural build",
    # DeepSpeed stage3.py's cache-flush warning: the build wants it frequent (several flushes in a step, or
    # the warning again), as the warning's own words say; one flush once is a healthy run's note
    "zero3 allocator cache flushes": "procedural build",
    # a launcher's command line: the build wants more than one worker per node and a fixed --local_rank N
    # among the script's arguments (rules/device_comm_faults.py)
    "launch command pins one local rank": "procedural build",
}


def test_the_rows_that_match_healthy_lines_are_the_known_ones() -> None:
    from pgdoctor.diagnose.rules import MODULES
    from pgdoctor.diagnose.text.engine import finder
    from tests.helpers.healthy_logs import healthy_lines

    rows = [row for mod in MODULES for row in getattr(mod, "SIGNATURES", ())]
    # A row reads only the lines the scanner hands on: those holding one of the anchors (in any casing,
    # for the caseless reading too). Two thirds of the healthy lines hold none; leaving them out makes
    # this test 9 s shorter and changes no answer (every row is still tried on every line that reaches it).
    _, find = finder(tuple(dict.fromkeys(a for row in rows for a in row.anchors)), caseless=True)
    lines = [ln for ln in healthy_lines() if (b := ln.encode("utf-8", "replace")) and find(b, 0, len(b))]
    matching = {row.name for row in rows if any(row.pattern.search(ln) for ln in lines)}
    assert matching <= set(MATCH_HEALTHY_LINES), sorted(matching - set(MATCH_HEALTHY_LINES))


def test_a_healthy_log_piped_on_stdin_reads_as_the_file_does() -> None:
    # Standard input is kept as it is read, so the rows that wait for the rest of the log see it there too.
    out = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "-", "--format", "json"],
        input=healthy_log("2.18.5", "srun", socket_ifaces=BRIDGES),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    findings = json.loads(out.stdout)["findings"]
    assert [f["code"] for f in findings if f["severity"] in ("warn", "fail")] == ["NET117"], out.stderr


def test_standard_input_replays_what_it_read_up_to_its_limit() -> None:
    from pgdoctor.diagnose.text.reader import Replay

    chunks = [b"a" * 10, b"b" * 10]
    replay = Replay(lambda: iter(chunks), limit=25)
    assert list(replay()) == chunks and list(replay()) == chunks
    too_big = Replay(lambda: iter(chunks), limit=15)
    assert list(too_big()) == chunks and list(too_big()) == []
    cut = Replay(lambda: iter(chunks), limit=25)
    next(cut())  # a first reading that stopped early: nothing to replay
    assert list(cut()) == []
