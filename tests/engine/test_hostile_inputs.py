"""Hostile and unlucky inputs: every one is a one-line error (exit 2) within its bound, never a
traceback, a hang or an exhausted host. Commands run under an address-space cap, so a
regression fails the test instead of taking the machine down."""

from __future__ import annotations

import datetime
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.knowledge.launchenv import MAX_HOSTS, expand_hostlist
from pgdoctor.model import jsontext
from pgdoctor.probes.files import InputError, read_input

MEMORY_CAP = 3 << 30  # torch is never imported by these commands; 3 GiB is far above their need


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(
    *argv: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        preexec_fn=_capped,
        stdin=subprocess.DEVNULL,
    )


def _one_line_error(p: subprocess.CompletedProcess[str], *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


@pytest.mark.parametrize(
    "argv, word",
    [
        (["check", "--from", "/dev/zero"], "not a regular file"),
        (["check", "--level", "quick", "--config", "/dev/zero"], "not a regular file"),
        (
            ["plan", "--model", "/dev/zero", "--gpus-per-node", "8", "--gpu-memory", "80GiB"],
            "not a regular file",
        ),
        (["check", "--from", "/"], "directory"),
        # diagnose reads a pipe it is named (`<(kubectl logs ...)`), never an endless device
        (["diagnose", "/dev/zero"], "a device, not a log file"),
        (["diagnose", "/dev/urandom"], "a device, not a log file"),
    ],
)
def test_device_and_directory_inputs_are_refused_without_reading(argv: list[str], word: str) -> None:
    _one_line_error(run(*argv), word)


def test_a_looping_symbolic_link_is_named_as_one(tmp_path: Path) -> None:
    (tmp_path / "a.log").symlink_to(tmp_path / "b.log")
    (tmp_path / "b.log").symlink_to(tmp_path / "a.log")
    _one_line_error(run("diagnose", str(tmp_path / "a.log")), "a dangling or looping symbolic link")


def test_a_fifo_as_input_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for argv in (["check", "--from", str(fifo)], ["check", "--level", "quick", "--config", str(fifo)]):
        _one_line_error(run(*argv, timeout=20), "FIFO")


def test_an_input_over_its_size_bound_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * ((1 << 20) + 1))
    _one_line_error(run("check", "--level", "quick", "--config", str(big)), "limit")
    with pytest.raises(InputError, match="limit"):
        read_input(str(big), "x", max_bytes=1 << 20)
    assert read_input(str(big), "x", max_bytes=2 << 20) == big.read_bytes()


_SNAP = (
    '{"schema_version": 1, "kind": "pgdoctor.snapshot", "pgdoctor_version": "0.1", "host": "h", '
    '"time_unix": 0.0, "level": "quick", "probes": []}'
)


@pytest.mark.parametrize(
    "text, word",
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ('{"schema_version": 1, "probes": [], "time_unix": NaN}', "NaN"),
        ('{"schema_version": 1, "time_unix": Infinity}', "Infinity"),
        ('{"schema_version": 1, "host": ' + "9" * 5000 + "}", "not JSON"),
        # A host that is an object was printed as "snapshot of {'x': 1}".
        (_SNAP.replace('"h"', '{"x": 1}'), "host is dict"),
        (_SNAP.replace('"0.1"', "7"), "pgdoctor_version is int"),
        (_SNAP.replace('"quick"', "[]"), "level is list"),
    ],
    # Short ids: pytest puts the test's id in PYTEST_CURRENT_TEST, and a 200,000-character one makes
    # every child's exec fail with E2BIG (Linux caps one environment string at 128 KiB).
    ids=["deep-nesting", "nan", "infinity", "huge-number", "host", "version", "level"],
)
def test_malformed_snapshots_are_one_line_errors(tmp_path: Path, text: str, word: str) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(text)
    _one_line_error(run("check", "--from", str(snap)), word)


@pytest.mark.parametrize("level", ["bench", "ultra"])
def test_a_snapshot_of_a_level_no_probe_has_replays(tmp_path: Path, level: str) -> None:
    # bench writes level "bench"; replayed with a probe missing that a check needs, ranking that level
    # was "internal error: ValueError: tuple.index(x)" (exit 4).
    snap = tmp_path / "snap.json"
    snap.write_text(_SNAP.replace('"quick"', f'"{level}"'))
    p = run("check", "--from", str(snap))
    assert p.returncode in (0, 1, 3) and "internal error" not in p.stderr, p.stderr


def test_deep_toml_is_an_error_not_a_recursion_crash(tmp_path: Path) -> None:
    cfg = tmp_path / "deep.toml"
    cfg.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    p = run("check", "--level", "quick", "--config", str(cfg))
    _one_line_error(p)


def test_a_hostlist_that_would_expand_to_a_billion_hosts_is_refused_at_once() -> None:
    p = run(
        "check",
        "--level",
        "quick",
        "--only",
        "launch",
        "--exit-zero",
        env={"SLURM_JOB_NODELIST": "n[0-999999999]"},
    )
    assert p.returncode == 0 and "ENV202" in p.stdout and "Traceback" not in p.stderr
    with pytest.raises(ValueError, match="more than"):
        expand_hostlist("n[0-999]x[0-999]")
    assert len(expand_hostlist("n[000-255]x[0-3]")) == 1024


_HOSTLIST = st.text(alphabet="n0123456789[],-x", max_size=40)


@settings(max_examples=300, deadline=None)
@given(_HOSTLIST)
def test_any_hostlist_expands_within_the_cap_or_is_refused(text: str) -> None:
    try:
        hosts = expand_hostlist(text)
    except ValueError:
        return
    assert len(hosts) <= MAX_HOSTS


def _nested(depth: int) -> object:
    value: object = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=400), st.booleans())
def test_json_depth_is_bounded_and_strings_do_not_count(depth: int, in_string: bool) -> None:
    text = json.dumps(_nested(depth))
    if in_string:  # brackets inside a string are text, not nesting
        text = json.dumps({"s": "[{" * depth})
        assert jsontext.loads(text) == {"s": "[{" * depth}
        return
    if depth <= jsontext.MAX_DEPTH:
        assert jsontext.loads(text) == _nested(depth)
    else:
        with pytest.raises(jsontext.JsonInputError):
            jsontext.loads(text)


def _shared_lists(fan: int, depth: int) -> bytes:
    import pickle

    x: object = [1]
    for _ in range(depth):
        x = [x] * fan
    return pickle.dumps({"entries": x, "pg_config": {}})


def test_a_tiny_pickle_of_shared_lists_is_refused_in_linear_time(tmp_path: Path) -> None:
    """690 bytes describing 10^30 nodes (one list shared at every level) took hours to check."""
    from pgdoctor.diagnose.flight import safe_pickle

    data = _shared_lists(10, 30)
    assert len(data) < 1000
    with pytest.raises(safe_pickle.UnsafePickleError, match="expands to more than"):
        safe_pickle.loads(data)
    cyclic: list[object] = []
    cyclic.append(cyclic)
    import pickle

    with pytest.raises(safe_pickle.UnsafePickleError, match="cycle"):
        safe_pickle.loads(pickle.dumps(cyclic))
    # Sharing that stays small is still plain data.
    small = safe_pickle.loads(_shared_lists(2, 3))["entries"]
    assert small == [[[[1], [1]], [[1], [1]]], [[[1], [1]], [[1], [1]]]]
    # The same file in a job directory: diagnose reports and ends, it does not hang.
    (tmp_path / "rank0_trace.pkl").write_bytes(data)
    p = run("diagnose", "--flight-recorder", str(tmp_path), "--json", timeout=60)
    # 3: the only dump was refused, so nothing was read (named in flight_recorder.skipped)
    assert p.returncode == 3 and "Traceback" not in p.stderr, p.stderr
    assert "expands to more than" in p.stdout


def _listeners(port: int) -> set[str]:
    """Local addresses (hex, as the kernel writes them) of sockets listening on `port`."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:
                out.add(addr)
    return out


def test_the_stores_of_ranks_pgdoctor_starts_listen_on_their_address_only() -> None:
    """TCPStore's own server listens on every interface; pgdoctor's binds MASTER_ADDR. The raw
    store is measured too, so this test would see a wildcard listener if one came back."""
    import torch.distributed as dist

    from pgdoctor.probes.processes import free_port
    from pgdoctor.probes.store import tcp_store

    port = free_port()
    ours = tcp_store("127.0.0.1", port, 1, True, 10)
    assert _listeners(port) == {"0100007F"}  # 127.0.0.1
    del ours
    port = free_port()
    raw = dist.TCPStore("127.0.0.1", port, 1, True, timeout=datetime.timedelta(seconds=10))
    assert _listeners(port) & {"00000000", "00000000000000000000000000000000"}, (
        "raw TCPStore binds the wildcard"
    )
    del raw


def _parent_of_a_sleeping_child(tmp_path: Path, timeout_s: float) -> tuple[subprocess.Popen[bytes], int]:
    """A Python parent running one sleeping child through run_children, and the child's pid."""
    import time

    pidfile = tmp_path / "child.pid"
    parent_code = (
        "import sys\n"
        "from pgdoctor.probes.processes import run_children\n"
        "child = [sys.executable, '-c', 'import os, sys, time; open(sys.argv[1], "
        '"w").write(str(os.getpid())); '
        "time.sleep(120)', sys.argv[1]]\n"
        f"run_children([child], [{{}}], {timeout_s})\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code, str(pidfile)])
    for _ in range(300):
        if pidfile.exists() and pidfile.read_text():
            break
        time.sleep(0.05)
    return parent, int(pidfile.read_text())


def _ends_within(pid: int, seconds: float) -> bool:
    import time

    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        status = Path(f"/proc/{pid}/status")
        if not status.exists() or "State:\tZ" in status.read_text():
            return True
        time.sleep(0.05)
    os.kill(pid, 9)
    return False


def test_no_child_outlives_a_sigkilled_pgdoctor(tmp_path: Path) -> None:
    """SIGKILL runs no cleanup handler; the kernel ends the children (PR_SET_PDEATHSIG) instead."""
    import signal

    parent, child = _parent_of_a_sleeping_child(tmp_path, 120)
    try:
        assert Path(f"/proc/{child}").exists()
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert _ends_within(child, 5.0), "the child was still running 5 s after its parent was SIGKILLed"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_child_whose_parent_is_stuck_ends_at_its_own_deadline(tmp_path: Path) -> None:
    """The death signal needs the parent to die; a parent that is alive but stopped (SIGSTOP, a
    hung NFS read) would keep its ranks forever. Each child carries its own deadline: the
    parent's bound plus a margin, as an alarm that ends it in the kernel (status -14)."""
    import signal

    from pgdoctor.probes.processes import OWN_DEADLINE_MARGIN_S

    parent, child = _parent_of_a_sleeping_child(tmp_path, 1.0)
    try:
        parent.send_signal(signal.SIGSTOP)  # the parent can no longer kill at its deadline
        assert _ends_within(child, 1.0 + OWN_DEADLINE_MARGIN_S + 10), "the child outlived its own deadline"
    finally:
        parent.send_signal(signal.SIGCONT)
        parent.kill()
        parent.wait(timeout=10)


def test_exit_descriptions_name_the_own_deadline() -> None:
    from pgdoctor.probes.processes import describe_exit

    assert describe_exit(-14) == "status -14 (own deadline passed)"
    assert describe_exit(-9).startswith("status -9 (signal 9, SIGKILL: usually the kernel's OOM killer")
    assert describe_exit(-11) == "status -11 (signal 11, SIGSEGV)"
    assert describe_exit(3) == "status 3"
    assert describe_exit(None) == "killed at the deadline"


@pytest.mark.parametrize("level", ["quick", "standard"])
def test_a_knob_that_breaks_import_torch_distributed_is_a_finding_not_an_abort(level: str) -> None:
    """TORCH_DISTRIBUTED_DEBUG=bogus made `import torch.distributed` raise and a second import
    abort the interpreter (SIGABRT, nothing printed). Now: ENV406 at every level, the torch
    probes unavailable with the reason, and the rest of the report."""
    p = run("check", "--level", level, "--json", env={"TORCH_DISTRIBUTED_DEBUG": "bogus"}, timeout=120)
    assert p.returncode == 1, p.stderr[-2000:]
    rep = json.loads(p.stdout)
    bad = [f for f in rep["findings"] if f["code"] == "ENV406"]
    assert bad and "TORCH_DISTRIBUTED_DEBUG" in bad[0]["message"]
    assert {r["name"] for r in rep["results"] if r.get("kind") == "probe"} >= {"host", "environment"}
    if level == "standard":
        probes = {r["name"]: r for r in rep["results"] if r.get("kind") == "probe"}
        for name in ("torch_runtime", "collectives"):
            assert (
                probes[name]["status"] == "unavailable"
                and "TORCH_DISTRIBUTED_DEBUG" in probes[name]["reason"]
            )


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--level", "quick", "--timeout", "nan"],
        ["check", "--level", "quick", "--timeout", "inf"],
        ["check", "--level", "quick", "--timeout", "1e300"],
        ["plan", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--tflops", "nan"],
        ["list", "--area", "bogus"],
    ],
)
def test_nonsense_option_values_are_usage_errors(argv: list[str]) -> None:
    """NaN passed every bound (comparisons are false), inf crashed the runner's timer, an unknown
    area listed nothing with exit 0."""
    _one_line_error(run(*argv))


def test_expecting_gpus_on_a_host_without_any_fails() -> None:
    """--expect-gpus 4 passed on a host with no GPU and no driver: NVML unavailable left the count
    check unjudged. A prolog that asks for 4 GPUs must drain such a node."""
    p = run("check", "--level", "quick", "--expect-gpus", "4", "--json")
    rep = json.loads(p.stdout)
    here = next(m["value"] for m in rep["measurements"] if m["key"] == "host.nvidia.gpu_count")
    if here < 4:  # this machine: no NVIDIA GPU at all
        assert p.returncode == 1
        gpu110 = next(f for f in rep["findings"] if f["code"] == "GPU110")
        assert gpu110["facts"] == {
            "found": here,
            "expected": 4,
            "source": "expect.gpus (config or --expect-gpus)",
        }
    # Without an expectation the same host is not a GPU failure.
    plain = json.loads(run("check", "--level", "quick", "--json", "--exit-zero").stdout)
    assert "GPU110" not in {f["code"] for f in plain["findings"]}


def test_terminal_control_sequences_and_lone_surrogates_never_reach_an_output(tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_bytes(
        b"step 1\n\x1b]0;owned\x07\x1b[2J[rank0]: torch.OutOfMemoryError: CUDA out of memory. "
        b"Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.1 GiB of which 1.0 GiB is "
        b"free.\r\xff\n"
    )
    p = run("diagnose", str(log))
    assert p.returncode == 1 and "RUN101" in p.stdout
    assert "\x1b" not in p.stdout and "\x07" not in p.stdout and "\r" not in p.stdout
    j = run("diagnose", "--json", str(log))
    json.loads(j.stdout)  # encodable: no lone surrogate
    assert "\\u001b" not in j.stdout


_ENTRY = {
    "record_id": 0,
    "pg_id": 0,
    "process_group": ["0", "default_pg"],
    "collective_seq_id": 1,
    "p2p_seq_id": 0,
    "profiling_name": "nccl:all_reduce",
    "input_sizes": [[4]],
    "input_dtypes": ["Float"],
    "output_sizes": [[4]],
    "output_dtypes": ["Float"],
    "state": "scheduled",
    "timeout_ms": 600000,
    "is_p2p": False,
    "frames": [],
}
_JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(_ENTRY)), _JUNK)
def test_a_dump_entry_field_of_any_type_is_read_or_skipped_never_a_crash(field: str, junk: object) -> None:
    """Flight-recorder JSON written by other versions, or corrupted: `frames` as an int, a size
    as a string, a state as a number. The analysis reads what it can and never raises."""
    from pgdoctor.diagnose.flight.collectives import analyze
    from pgdoctor.diagnose.flight.dump import Dump, FlightReport

    entry = {**_ENTRY, field: junk}
    dumps = [
        Dump(
            f"rank{r}.json",
            r,
            {
                "version": "2.10",
                "pg_config": {"0": {"ranks": "[0, 1]"}},
                "entries": [entry] if r == 0 else [],
            },
        )
        for r in (0, 1)
    ]
    analyze(FlightReport(dumps), "fr")


@pytest.mark.parametrize(
    "line",
    [
        "[rank{n}]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum={n}, "
        "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: exitcode  : -{n}",
        "NVRM: Xid (PCI:0000:3b:00): {n}, pid=1234, name=python",
    ],
)
def test_numbers_longer_than_python_parses_in_log_lines_are_not_a_crash(line: str) -> None:
    """int() refuses more than 4300 digits; a log line with a 5000-digit rank, SeqNum, exit code or
    Xid used to end diagnose in a traceback."""
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", "-"],
        input=line.format(n="9" * 5000),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr[-2000:]
    json.loads(p.stdout)


OOM_LINE = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.1 GiB of which 1.0 GiB is free.\n"
)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_logs_are_read(tmp_path: Path, encoding: str) -> None:
    """PowerShell's `>` writes UTF-16: a log that gave "no failure found" (exit 0)."""
    log = tmp_path / "job.log"
    log.write_bytes(("step 1\n" + OOM_LINE).encode(encoding))
    p = run("diagnose", str(log))
    assert p.returncode == 1 and "RUN101" in p.stdout, p.stdout


def test_text_that_starts_like_gzip_and_logs_with_nul_holes_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"\x1f\x8b not gzip at all\n" + OOM_LINE.encode())
    assert "RUN101" in run("diagnose", str(tmp_path / "a.log")).stdout
    job = tmp_path / "job"
    job.mkdir()
    # logrotate's copytruncate leaves a run of NULs where the old content was
    (job / "rank0.log").write_bytes(b"\x00" * 4096 + OOM_LINE.encode())
    (job / "model.bin").write_bytes(bytes(range(256)) * 32)  # a real binary stays skipped
    p = run("diagnose", "--json", str(job))
    rep = json.loads(p.stdout)
    assert rep["findings"][0]["code"] == "RUN101"
    assert rep["meta"]["skipped_binary_files"] == [str(job / "model.bin")]


def test_a_bad_entry_of_a_job_directory_is_skipped_not_fatal(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "rank0.log").write_text(OOM_LINE)
    (job / "dangling.log").symlink_to(tmp_path / "gone")
    os.mkfifo(job / "pipe.log")
    p = run("diagnose", "--json", str(job), timeout=30)
    rep = json.loads(p.stdout)
    assert p.returncode == 1 and rep["findings"][0]["code"] == "RUN101"
    assert sorted(rep["meta"]["skipped_unreadable_files"]) == [
        f"{job / 'dangling.log'}: a dangling symbolic link",
        f"{job / 'pipe.log'}: not a regular file (a FIFO, socket or device)",
    ]
    # Named by the user, the same dangling link is an error.
    _one_line_error(run("diagnose", str(job / "dangling.log")), "a dangling or looping symbolic link")


def test_diagnose_is_bounded_by_its_timeout_even_on_a_pipe_that_never_ends(tmp_path: Path) -> None:
    import time

    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    p = run("diagnose", "--timeout", "1.5", str(fifo), timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == 3 and "did not finish within --timeout 1.5 s" in p.stderr, p.stderr
    assert took < 15, took


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "collectives", "--nproc", "2", "--backend", "gloo"],
        ["repro", "oom", "--parallel", "ddp", "--nproc", "2"],
    ],
)
def test_commands_that_import_torch_refuse_a_knob_that_breaks_the_import(argv: list[str]) -> None:
    _one_line_error(run(*argv, env={"TORCH_DISTRIBUTED_DEBUG": "bogus"}), "TORCH_DISTRIBUTED_DEBUG", "ENV406")


@pytest.mark.parametrize("fmt", ["console", "json", "junit", "prometheus", "html"])
def test_diagnose_does_not_cite_its_own_earlier_report(tmp_path: Path, fmt: str) -> None:
    """`diagnose -o job/report.json job/` then `diagnose job/`: the report quotes the logs and was
    read as a second, confirming log."""
    job = tmp_path / "job"
    job.mkdir()
    (job / "rank0.log").write_text(OOM_LINE)
    first = run("diagnose", "--format", fmt, "-o", str(job / f"report.{fmt}"), str(job / "rank0.log"))
    assert first.returncode == 1, first.stderr
    rep = json.loads(run("diagnose", "--json", str(job)).stdout)
    assert rep["meta"]["skipped_pgdoctor_reports"] == [str(job / f"report.{fmt}")]
    cited = {e.get("file") for f in rep["findings"] for e in f["evidence"]}
    assert cited == {str(job / "rank0.log")}


@pytest.mark.parametrize("option", ["--layers", "--nodes", "--gpus-per-node", "--hidden", "--global-batch"])
def test_plan_counts_past_any_real_cluster_are_usage_errors_not_a_spin(option: str) -> None:
    """`plan --layers 99999999999999999999` used to spin for ever."""
    _one_line_error(
        run(
            "plan",
            "--params",
            "7B",
            "--gpus-per-node",
            "8",
            "--gpu-memory",
            "80GiB",
            option,
            "99999999999999999999",
        ),
        "range",
    )


def test_check_from_a_huge_snapshot_is_bounded_by_timeout(tmp_path: Path) -> None:
    """--timeout bounds the whole run, also when no probe runs: a snapshot too big to check in
    time is an incomplete run (exit 3) with one line, not minutes past the bound."""
    import json

    from pgdoctor.model import Snapshot

    base = Snapshot("h", 0.0, "0", "quick", ()).to_json()
    base["probes"] = [
        {
            "name": "gpu",
            "area": "gpu",
            "status": "passed",
            "reason": "",
            "duration_s": 0.1,
            "measurements": [
                {"key": f"gpu.{i}.temperature_c", "value": 40, "unit": "C", "source": "nvml"}
                for i in range(200_000)
            ],
        }
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(base))
    p = run("check", "--from", str(path), "--timeout", "0.2", timeout=60)
    assert p.returncode == 3, p.stderr[-1000:]
    assert p.stderr.strip().splitlines() == [
        f"pgdoctor: incomplete: checking {path} did not finish within --timeout 0.2 s"
    ]


def test_a_scrubbed_snapshot_is_not_redacted_twice_but_a_changed_one_is() -> None:
    import dataclasses

    from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status

    leak = ProbeResult(
        "env", "env", Status.PASSED, "", 0.0, (Measurement("env.x", "HF_TOKEN=hf_abcdefghijkl"),)
    )
    loaded = Snapshot.loads(json.dumps(Snapshot("h", 0.0, "0", "quick", (leak,)).to_json()))
    assert loaded.scrubbed and loaded.redacted() is loaded
    grown = dataclasses.replace(loaded, probes=(*loaded.probes, leak))  # a probe added after the load
    assert not grown.scrubbed
    assert "hf_abcdefghijkl" not in json.dumps(grown.redacted().to_json())
    assert all("hf_abc" not in str(m.value) for m in grown.redacted().measurements())


def test_a_sigterm_whose_exception_was_swallowed_still_ends_the_run_as_interrupted() -> None:
    """A KeyboardInterrupt raised in a __del__ (the collector runs them anywhere, often during
    `import torch`) is printed as 'Exception ignored' and lost. The handler also records the
    request: the command still exits 130, not as if it had finished."""
    code = (
        "import signal\n"
        "import pgdoctor.cli as cli\n"
        "class Collected:\n"
        "    def __del__(self):\n"
        "        cli._raise_interrupt(signal.SIGTERM, None)\n"
        "Collected()\n"
        "cli.main(['list'])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "Exception ignored" in p.stderr  # the exception really was lost
    assert p.returncode == 130 and p.stderr.rstrip().endswith("pgdoctor: interrupted"), p.stderr[-500:]


@pytest.mark.slow
def test_an_interrupted_bench_prints_what_it_measured(tmp_path: Path) -> None:
    """SIGTERM mid-sweep: the sizes finished so far are printed, the exit is 130, the progress
    file is gone."""
    import signal
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path), "OMP_NUM_THREADS": "1"}
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "bench",
            "collectives",
            "--nproc",
            "2",
            "--backend",
            "gloo",
            "--ops",
            "all_reduce",
            "--max-bytes",
            "64M",
            "--iters",
            "2",
            "--warmup",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:  # until rank 0 has finished a few sizes
            done = [f for f in tmp_path.glob("pgdoctor-coll-*/progress") if f.read_text().count("\n") >= 3]
            if done:
                break
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-1000:]
    assert "all_reduce (2 ranks)" in out and "8 B" in out
    assert "pgdoctor: interrupted after" in err and "incomplete" in out
    assert not list(tmp_path.glob("pgdoctor-coll-*"))
