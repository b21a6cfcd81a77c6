"""The command line as a job script uses it: real subprocesses, exit codes, stdout contents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import TESTS

BASE_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("NCCL_", "TORCH_", "RANK", "WORLD_SIZE", "MASTER_", "LOCAL_", "SLURM_", "PGDOCTOR_"))
}


def run(
    *argv: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**BASE_ENV, **(env or {})},
    )


def test_check_json_is_one_object_with_schema_findings_and_results() -> None:
    proc = run("check", "--json", "--level", "quick")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 1
    assert {"findings", "results", "measurements"} <= set(data)
    assert any(r["name"] == "host" and r["kind"] == "probe" for r in data["results"])


def test_collect_then_check_from_gives_the_same_findings(tmp_path: Path) -> None:
    env = {"NCCL_SOCKET_IFNAME": "nosuchif", "TORCH_NCCL_BLOCKING_WAIT": "1"}
    snap = tmp_path / "s.json"
    assert run("collect", "-o", str(snap), env=env).returncode == 0
    live = json.loads(run("check", "--json", env=env).stdout)
    offline = json.loads(run("check", "--from", str(snap), "--json").stdout)

    def key(d: dict) -> list:  # type: ignore[type-arg]
        return sorted((f["code"], f["message"]) for f in d["findings"])

    assert key(live) == key(offline)
    assert "ENV401" in {f["code"] for f in offline["findings"]}


def test_fail_on_and_exit_zero_decide_the_exit_code() -> None:
    env = {"NCCL_IB_DISABLE": "1", "NCCL_DEBUG": "WARN", "TORCH_FR_BUFFER_SIZE": "100"}
    assert run("check", "--only", "knobs", env=env).returncode == 0  # a warn only
    assert run("check", "--only", "knobs", "--fail-on", "warn", env=env).returncode == 1
    assert run("check", "--only", "knobs", "--fail-on", "warn", "--exit-zero", env=env).returncode == 0
    fail = run("check", "--only", "knobs", env={**env, "TORCH_NCCL_BLOCKING_WAIT": "maybe"})
    assert fail.returncode == 1 and "ENV406" in fail.stdout


def test_only_a_code_reports_only_that_code() -> None:
    env = {"NCCL_IB_DISABLE": "1"}
    data = json.loads(run("check", "--only", "ENV403", "--json", env=env).stdout)
    assert {f["code"] for f in data["findings"]} == {"ENV403"}
    data = json.loads(run("check", "--only", "nccl-transport-disabled", "--json", env=env).stdout)
    assert {f["code"] for f in data["findings"]} == {"ENV403"}


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[host\nmin_shm_bytes = 1", "not valid TOML"),
        ("[host]\nmin_shmbytes = 1\n", "host.min_shmbytes"),
        ('[host]\nmin_shm_bytes = "big"\n', "host.min_shm_bytes"),
        ("[host]\nmin_available_memory_fraction = true\n", "host.min_available_memory_fraction"),
    ],
)
def test_broken_config_exits_2_with_one_line_naming_the_problem(
    tmp_path: Path, toml: str, needle: str
) -> None:
    cfg = tmp_path / "broken.toml"
    cfg.write_text(toml)
    proc = run("check", "--config", str(cfg))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr


def test_config_thresholds_change_the_verdict(tmp_path: Path) -> None:
    cfg = tmp_path / "strict.toml"
    cfg.write_text("[host]\nmin_shm_bytes = 1099511627776000\n")
    data = json.loads(run("check", "--only", "ENV501", "--json", "--config", str(cfg)).stdout)
    assert [f["code"] for f in data["findings"]] == ["ENV501"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["check", "--only", "nonsense"], "nonsense"),
        (["check", "--from", "/nonexistent/snap.json"], "cannot read snapshot"),
        (["explain", "XYZ999"], "XYZ999"),
        (["check", "--level", "deep"], "deep"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_usage_errors_exit_2_without_traceback(argv: list[str], needle: str) -> None:
    proc = run(*argv)
    assert proc.returncode == 2
    assert needle in proc.stderr and "Traceback" not in proc.stderr


def test_check_from_rejects_non_snapshots(tmp_path: Path) -> None:
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\xff\xfe" * 100)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    for path in (binary, other):
        proc = run("check", "--from", str(path))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_faulty_probes_leave_a_bounded_incomplete_report(no_leftover_children: None) -> None:
    env = {"PGDOCTOR_PLUGINS": "faulty_probes", "PYTHONPATH": str(TESTS / "helpers" / "plugins")}
    start = time.monotonic()
    proc = run("check", "--json", "--level", "quick", "--timeout", "10", env=env)
    assert time.monotonic() - start < 10
    data = json.loads(proc.stdout)
    status = {r["name"]: (r["status"], r["reason"]) for r in data["results"]}
    assert status["test_hang"][0] == "unavailable" and status["test_hang"][1].startswith("timeout")
    assert status["test_raise"] == ("crashed", "RuntimeError: probe exploded")
    assert status["test_segv"][0] == "crashed" and "signal 11" in status["test_segv"][1]
    assert status["faulty_probes.crashing_check"][0] == "crashed"
    assert status["software"][0] == "passed"  # the others still ran
    assert proc.returncode == 3 or (proc.returncode == 1 and data["incomplete"])


def test_list_and_explain_cover_every_code() -> None:
    codes = json.loads(run("list", "--json").stdout)["codes"]
    assert {"ENV101", "ENV501"} <= {c["code"] for c in codes}
    for c in codes:
        assert set(c) == {"code", "slug", "severity", "category", "area", "title"}
    proc = run("explain", "dev-shm-too-small")
    assert proc.returncode == 0 and "## Fix" in proc.stdout


def test_help_lists_the_commands() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for cmd in ("check", "collect", "list", "explain"):
        assert cmd in proc.stdout


def _wait_for_hang(proc: subprocess.Popen[str], marks: Path) -> None:
    """Until the faulty plugin's hanging probe runs (and the probes before it and one beside it
    are done): see tests/helpers/plugins/faulty_probes.py."""
    deadline = time.monotonic() + 60
    while not (marks / "hang").exists():
        assert proc.poll() is None, "pgdoctor ended before its hanging probe started"
        assert time.monotonic() < deadline, "the hanging probe never started"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupt_prints_the_partial_report_and_leaves_nothing(
    sig: str, no_leftover_children: None, tmp_path: Path
) -> None:
    import signal

    env = {
        **BASE_ENV,
        "PGDOCTOR_PLUGINS": "faulty_probes",
        "PGDOCTOR_TEST_FAULTS": "hang",
        "PGDOCTOR_TEST_HANG_TIMEOUT": "60",
        "PYTHONPATH": str(TESTS / "helpers" / "plugins"),
        "PGDOCTOR_TEST_MARKS": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgdoctor", "check", "--json", "--level", "standard", "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        _wait_for_hang(proc, tmp_path)
    except AssertionError:
        proc.kill()
        proc.communicate()
        raise
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    data = json.loads(out)
    reasons = {r["name"]: r["reason"] for r in data["results"] if r["kind"] == "probe"}
    assert any(r.startswith("interrupted") for r in reasons.values()), reasons
    # The probes that finished in the interrupted wave (everything but the hanging one) are kept.
    statuses = {r["name"]: r["status"] for r in data["results"] if r["kind"] == "probe"}
    assert statuses["environment"] == "passed" and statuses["software"] == "passed", statuses
    assert statuses["test_quick"] == "passed", "a probe that finished in the interrupted wave is kept"
    assert data["incomplete"], "an interrupted run is incomplete"
    assert "interrupted" in err and "Traceback" not in err


def test_console_report_plots_busbw_versus_size_under_collectives() -> None:
    snap = TESTS / "fixtures" / "codes" / "COL104" / "good.json"
    proc = run("check", "--from", str(snap), "--only", "collectives")
    assert "busbw vs size: all_reduce" in proc.stdout
    plot = proc.stdout[proc.stdout.index("busbw vs size: all_reduce") :]
    assert "|#" in plot and "GB/s" in plot


@pytest.mark.parametrize(
    "argv", [["check", "--level", "quick"], ["collect", "--level", "quick"], ["diagnose", "-"]]
)
def test_an_output_path_in_a_missing_directory_fails_before_any_work(argv: list[str], tmp_path: Path) -> None:
    """`-o /no/such/dir/report.html` is a usage error found before probing, not after it."""
    target = tmp_path / "missing" / "report.out"
    p = run(*argv, "-o", str(target))
    assert p.returncode == 2, p.stderr
    assert "does not exist" in p.stderr and "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    assert "probe" not in p.stderr and not target.parent.exists()


def test_check_from_a_snapshot_says_it_is_a_replay_of_which_host_and_when(tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    assert run("collect", "--level", "quick", "-o", str(snap)).returncode == 0
    data = json.loads(snap.read_text())
    out = run("check", "--from", str(snap), "--exit-zero").stdout
    first = out.splitlines()[0]
    assert (
        first.startswith(f"replay of {snap}: snapshot of {data['host']} probed ")
        and "nothing was probed now" in first
    )
    live = run("check", "--level", "quick", "--exit-zero").stdout
    assert "replay of" not in live


def test_third_party_import_warnings_stay_out_of_the_output_and_the_torch_found_is_shown() -> None:
    """The pinned CPU wheel warns at import that NumPy is missing; a user's first check must not
    print it, and the software line says which torch (and build) the pre-flight judged."""
    import torch

    plain = subprocess.run(
        [sys.executable, "-c", "import torch"], capture_output=True, text=True, timeout=120
    )
    p = run("check", "--only", "software", "--exit-zero")
    assert "Traceback" not in p.stderr
    if "Failed to initialize NumPy" in plain.stderr:  # the warning exists in this environment
        assert "Failed to initialize NumPy" not in p.stderr + p.stdout
    line = next(ln for ln in p.stdout.splitlines() if "Software" in ln)
    assert f"torch {torch.__version__} (" in line and "build)" in line


def test_children_inherit_the_warning_filters() -> None:
    from pgdoctor.probes.processes import quiet_env

    assert quiet_env({})["PYTHONWARNINGS"] == "ignore:Failed to initialize NumPy:UserWarning"
    assert quiet_env({"PYTHONWARNINGS": "error"})["PYTHONWARNINGS"].startswith("error,ignore:")


def test_a_bug_of_pgdoctor_is_one_line_and_exit_4_never_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1 means "findings": a job script must be able to tell a crash of the tool from it."""
    from pgdoctor.cli import info, main

    def broken(code: str) -> None:
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr(info, "find", broken)
    monkeypatch.delenv("PGDOCTOR_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["explain", "ENV101"])
    assert exit_info.value.code == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (
        err.startswith("pgdoctor: internal error: RuntimeError: a bug at ")
        and "info.py" not in err.split(" at ")[0]
    )
    monkeypatch.setenv("PGDOCTOR_TRACEBACK", "1")
    with pytest.raises(SystemExit):
        main(["explain", "ENV101"])
    assert "Traceback" in capsys.readouterr().err


def test_stdout_on_a_full_disk_is_a_one_line_error() -> None:
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "pgdoctor", "list"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert p.returncode == 2 and "No space left on device" in p.stderr and "Traceback" not in p.stderr


def test_an_interrupted_collect_says_partial_and_its_replay_is_incomplete_not_interrupted(
    tmp_path: Path, no_leftover_children: None
) -> None:
    """collect used to exit 0 on SIGINT, writing a snapshot whose replay then exited 130. And a
    pgdoctor started with SIGINT ignored (nohup, `cmd &` in a script) never ended on SIGINT."""
    import signal

    marks = tmp_path / "marks"
    marks.mkdir()
    env = {
        **BASE_ENV,
        "PGDOCTOR_PLUGINS": "faulty_probes",
        "PGDOCTOR_TEST_FAULTS": "hang",
        "PGDOCTOR_TEST_HANG_TIMEOUT": "60",
        "PYTHONPATH": str(TESTS / "helpers" / "plugins"),
        "PGDOCTOR_TEST_MARKS": str(marks),
    }
    snap = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "collect",
            "--level",
            "standard",
            "--timeout",
            "60",
            "-o",
            str(snap),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        _wait_for_hang(proc, marks)
    except AssertionError:
        proc.kill()
        proc.communicate()
        raise
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted: partial" in err and "Traceback" not in err
    replay = run("check", "--from", str(snap), "--json")
    assert replay.returncode == 3, replay.stderr
    assert json.loads(replay.stdout)["incomplete"]


@pytest.mark.slow
def test_an_interrupted_collective_sweep_leaves_no_file_in_tmp(
    no_leftover_children: None, tmp_path: Path
) -> None:
    import glob
    import signal

    # A temp directory of its own: tests running beside it make progress files too.
    pattern = os.path.join(str(tmp_path), "pgdoctor-coll-*")  # the sweep's ready/progress dir
    before = set(glob.glob(pattern))
    # The whole gloo sweep takes well under a second once its ranks run, so on a loaded host the
    # test can be descheduled until pgdoctor has finished and exited 0 on its own: such a run did
    # not test the interrupt, and another is started (at most 5).
    for _ in range(5):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pgdoctor",
                "check",
                "--only",
                "collectives",
                "--nproc",
                "2",
                "--backend",
                "gloo",
                "--timeout",
                "120",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**BASE_ENV, "TMPDIR": str(tmp_path)},
        )
        try:
            for _ in range(400):
                if set(glob.glob(pattern)) - before:
                    break
                time.sleep(0.05)
            assert set(glob.glob(pattern)) - before, "the sweep never started"
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        if proc.returncode == 0 and "interrupted" not in out:
            continue  # finished before the signal came: nothing was interrupted
        break
    assert proc.returncode == 130
    assert set(glob.glob(pattern)) - before == set()
