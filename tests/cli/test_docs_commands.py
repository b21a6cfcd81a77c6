"""Docs as tests: every `pgdoctor ...` line in a fenced block of README.md and docs/*.md
(extracted and parsed by tools/doccommands.py) is parsed by the real click CLI, so a doc cannot
show an option or a value the CLI lacks. The commands a CPU-only host runs in seconds are then
run in a sandbox directory, and where the docs show the output the shown lines must appear in
the real output, in order. The others are listed below with the reason they are only parsed;
the multi-process ones that do run on a CPU are marked slow. Absolute paths of the docs
(/shared/fr/, /tmp/job) are re-rooted into the sandbox, and the files the docs name are staged
there from tests/fixtures (STAGE), so the doc lines run as written.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from tests.helpers.paths import FIXTURES
from tools.doccommands import (
    BY_LINE,
    COMMANDS,
    DOCS,
    LAUNCH_VARIABLE,
    DocCommand,
    first_missing_line,
    parse,
)

# One worker runs them all, so that a command shown on several lines runs once (DocRunner.same).
pytestmark = pytest.mark.xdist_group("docs_commands")

LOGS = FIXTURES / "logs"

# Every doc command here takes 0.2-2.5 s; a minute means it waits for something that is not there.
RUN_TIMEOUT_S = 60.0
SLOW_TIMEOUT_S = 240.0

# Commands that are only parsed, by their text (`DocCommand.text`), with the reason.
# The whole suite has 10 minutes on 2 cores: multi-process commands that another test already
# runs the same way are parsed here, not run twice.
NOT_RUN = {
    "pgdoctor hang": "examines the live jobs of this node (tests/hang/test_hang_procs.py runs it on real "
    "torchrun jobs)",
    "pgdoctor hang 4242 --json": "needs the PID of a live job (tests/hang/test_hang_procs.py: launcher PIDs, "
    "--json)",
    "pgdoctor hang 4242 --samples 10 --interval 2": "needs the PID of a live job",
    "pgdoctor hang --save /shared/hang/node0": "examines the live jobs of this node "
    "(tests/hang/test_hang_procs.py saves and merges)",
    "pgdoctor diagnose /shared/hang/node0 /shared/hang/node1": "the snapshots of two live nodes "
    "(tests/hang/test_hang_procs.py merges two "
    "torchrun nodes' snapshots)",
    "pgdoctor diagnose /shared/hang/": "the snapshots of a live Slurm job's nodes",
    "pgdoctor run --stall-after 300 --report run.json --save evidence/ -- python train.py": (
        "needs the user's train.py (tests/hang/test_run.py runs pgdoctor run on real torchrun jobs)"
    ),
    "pgdoctor bench collectives": "one rank per visible GPU: on a host without GPUs it is a usage error by "
    "design",
    "pgdoctor bench collectives --backend gloo --nproc 2 --json": "the default sweep, 26-40 s "
    "(tests/probes/test_collectives_procs.py "
    "runs bench --json with smaller sizes)",
    "pgdoctor repro oom --parallel ddp --nproc 2": "2 DDP ranks, 6-16 s (tests/lab/test_lab.py runs oom x "
    "ddp)",
    "pgdoctor verify pgdoctor.verify.examples:mlp --strategy pp --nproc 2": "5-10 s (tests/verify/test_verify"
    ".py checks pp splits, right and "
    "wrong)",
    "pgdoctor verify pgdoctor.verify.examples:mlp --strategy tp --nproc 2 --steps 2": "5-10 s (tests/verify/t"
    "est_verify.py checks "
    "tp splits, right and "
    "wrong)",
    "pgdoctor bench scaling pgdoctor.verify.examples:small_mlp --nproc 1,2 --steps 3": "8-15 s (tests/verify/"
    "test_verify.py runs "
    "bench scaling and "
    "its prediction)",
    "pgdoctor repro timeout --parallel pp --nproc 3 --json": "3 ranks until the 5 s process-group timeout: "
    "10-18 s on 2 cores (tests/lab/test_lab.py runs "
    "the lab)",
    "pgdoctor repro imbalance --parallel tp --nproc 4 --factor 3 --trace-dir /tmp/tp": "4 training ranks: "
    "6-18 s on 2 cores "
    "(tests/lab/test_lab_i"
    "mbalance.py, "
    "tests/lab/test_lab.py"
    ")",
    "pgdoctor repro imbalance --parallel pp --nproc 4 --schedule gpipe --microbatches 8": (
        "4 training ranks: 6-18 s on 2 cores (tests/lab/test_lab_imbalance.py, tests/lab/test_lab.py)"
    ),
}
LAUNCHER_REASONS = {
    "torchrun": "ranks started by torchrun's agent: the docs' lines want 8 GPUs or several nodes",
    "srun": "needs a Slurm allocation",
    "mpirun": "needs an MPI launch",
    "nsys": "needs Nsight Systems",
}
# Commands that run on a CPU host but spawn torch ranks for many seconds: a slow test runs them.
SLOW_RUN = {
    "pgdoctor verify pgdoctor.verify.examples:mlp --nproc 2": "the reference and 2 gloo ranks: 5-10 s",
    "pgdoctor verify pgdoctor.verify.examples:mlp_sum_loss --nproc 2 --json": "the reference and 2 gloo "
    "ranks: 5-10 s",
}

# What each subcommand may exit with when it runs as documented here (2, a usage error, never).
EXIT_CODES = {
    ("check",): {0, 1, 3},
    ("collect",): {0},
    ("diagnose",): {1},  # every staged input below holds a failure
    ("plan",): {0, 1},
    ("topo",): {0},
    ("repro",): {1},  # the injected fault was found: a repro's expected outcome (--nsys: 0)
    ("bench", "collectives"): {0, 1, 3},
    ("bench", "scaling"): {0},  # its findings (VER201, VER202) are warnings
    ("verify",): {0, 1},  # 1: the documented example with a sum loss is not equivalent
    ("list",): {0},
    ("explain",): {0},
    ("python -m pgdoctor.trace",): {0},
}


# --- the sandbox: doc paths re-rooted, files staged from the fixtures --------------------------


def _reroot(word: str, sandbox: Path) -> str:
    m = re.fullmatch(r"(--?[\w-]+=)?(/.*)", word)
    if not m:
        return word
    path = m.group(2)
    return (m.group(1) or "") + str(sandbox / "root" / path.lstrip("/")) + ("/" if path.endswith("/") else "")


def _place(word: str, sandbox: Path) -> Path:
    return Path(_reroot(word, sandbox)) if word.startswith("/") else sandbox / word


def _copy(*sources: Path) -> Callable[[Path], None]:
    def stage(dest: Path) -> None:
        for src in sources:
            if src.is_dir():
                shutil.copytree(src, dest, dirs_exist_ok=True)
            elif len(sources) > 1:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / src.name)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)

    return stage


def _untar(archive: Path) -> Callable[[Path], None]:
    def stage(dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                data = tf.extractfile(member)
                # the fixture archives hold the dumps side by side; anything else is not one of them
                assert data is not None and "/" not in member.name, member.name
                (dest / member.name).write_bytes(data.read())

    return stage


def _gzip_beside(src: Path) -> Callable[[Path], None]:
    """For a glob such as logs/*.log.gz: one gzipped log in the glob's directory."""

    def stage(pattern: Path) -> None:
        pattern.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(pattern.parent / f"{src.name}.gz", "wb") as fh:
            fh.write(src.read_bytes())

    return stage


_RANK_EVENTS = """
import sys, pgdoctor
for rank in (0, 1):
    pgdoctor.enable_trace(sys.argv[1], rank)
    with pgdoctor.step(0):
        with pgdoctor.range("fwd"):
            pass
"""


def _rank_event_files(dest: Path) -> None:
    """What PGDOCTOR_TRACE_DIR leaves after a 2-rank job, written by the library itself."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", _RANK_EVENTS, str(dest)],
        check=True,
        timeout=RUN_TIMEOUT_S,
        env=_hermetic_env(),
    )


# The files the docs' commands read, by the word the docs write.
STAGE: dict[str, Callable[[Path], None]] = {
    "slurm-4242.out": _copy(LOGS / "torch20_oom_rank3_then_timeouts.log"),
    "slurm-5821934.out": _copy(FIXTURES / "codes" / "RUN370" / "bad.log"),
    "slurm-5822107.out": _copy(FIXTURES / "codes" / "NET117" / "bad.log"),
    "/shared/torchrun-logs/": _copy(LOGS / "per_rank_dir"),
    "/shared/fr/": _untar(FIXTURES / "codes" / "RUN281" / "bad.tar"),
    # a job directory: torch.profiler traces of 4 gloo ranks and a log with a gloo timeout
    "/shared/job/": _copy(
        FIXTURES / "traces" / "cpu_compute_rank2_4rank", LOGS / "gloo_skip_3ranks_real.log"
    ),
    "logs/*.log.gz": _gzip_beside(LOGS / "gloo_skip_3ranks_real.log"),  # the same run as the RUN281 dumps
    "logs/": _copy(LOGS / "torchrun_real_sigkill.log", LOGS / "slurm_oom_kill.log"),
    "/tmp/job": _rank_event_files,
    "mixtral-8x7b/config.json": _copy(FIXTURES / "configs" / "mixtral-8x7b.json"),
    "t5-large/config.json": _copy(FIXTURES / "configs" / "t5-large.json"),
    "bench-scaling.json": _copy(FIXTURES / "configs" / "bench-scaling.json"),  # `bench scaling --json` output
    "job.sqlite": _copy(FIXTURES / "nsys" / "cpu_ddp_imbalance_2ranks.sqlite"),  # an Nsight Systems export
}
# What the docs pipe into a command, by the command before the pipe.
STDIN = {"kubectl logs trainer-0": LOGS / "k8s_json_escaped_oom.log"}


def _hermetic_env() -> dict[str, str]:
    """This test's own launcher (Slurm, torchrun) must not turn a doc command into a rank of it;
    nsys is hidden so that `repro --nsys` prints its command instead of profiling."""
    env = {k: v for k, v in os.environ.items() if not LAUNCH_VARIABLE.fullmatch(k)}
    dirs = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in dirs if d and not os.path.exists(os.path.join(d, "nsys")))
    env["NO_COLOR"] = "1"
    return env


def materialize(cmd: DocCommand, sandbox: Path, stage: bool) -> list[str]:
    """The command's arguments inside the sandbox; with `stage`, the files it reads are there."""
    if stage:
        for word in cmd.args:
            if word in STAGE:
                STAGE[word](_place(word, sandbox))
    args = []
    for word in cmd.args:
        new = _reroot(word, sandbox)
        if new != word:
            Path(new.split("=", 1)[-1] if word.startswith("-") else new).parent.mkdir(
                parents=True, exist_ok=True
            )
        if stage and any(ch in new for ch in "*?["):
            # bash expands a glob that matches and leaves one that does not
            matches = sorted(glob.glob(new if os.path.isabs(new) else str(sandbox / new)))
            if matches:
                args += [os.path.relpath(m, sandbox) if not os.path.isabs(new) else m for m in matches]
                continue
        args.append(new)
    return args


# --- running ------------------------------------------------------------------------------


@dataclass
class Run:
    cmd: DocCommand
    argv: list[str]
    sandbox: Path
    path: tuple[str, ...]
    params: dict[str, Any]
    rc: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return (
            f"{self.cmd.id}: {self.cmd.source}\n  ran {shlex.join(self.argv)} in {self.sandbox}\n"
            f"  exit {self.rc}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
        )


class DocRunner:
    """Runs each doc command once, in one sandbox per doc line, after the pgdoctor commands
    before it on that line (`collect -o node.json && check --from node.json`)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.runs: dict[str, Run] = {}
        # The same command on another doc line (`pgdoctor check` in four docs, one `verify ... --json`
        # twice in docs/verify.md) is the same process in the same fresh sandbox: where it first on its
        # line and reads and writes no file, its one run answers every line that shows it.
        self.same: dict[tuple[object, ...], Run] = {}

    def sandbox(self, cmd: DocCommand) -> Path:
        d = self.base / f"{cmd.file.replace('/', '_')}-{cmd.line}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def run(self, cmd: DocCommand, timeout_s: float = RUN_TIMEOUT_S) -> Run:
        if cmd.id in self.runs:
            return self.runs[cmd.id]
        if cmd.pos:
            before = self.run(BY_LINE[(cmd.file, cmd.line)][cmd.pos - 1], timeout_s)
            if cmd.op == "&&" and before.rc != 0:
                pytest.fail(
                    f"the command before it on the line failed, so the shell would stop:\n{before.explain()}"
                )
            if cmd.op == "||" and before.rc == 0:
                pytest.skip("the command before it succeeded, so the shell does not run it")
        sandbox = self.sandbox(cmd)
        key = (cmd.entry, cmd.args, cmd.env, cmd.stdin_from) if _self_contained(cmd, sandbox) else None
        if key in self.same:
            self.runs[cmd.id] = replace(self.same[key], cmd=cmd)
            return self.runs[cmd.id]
        args = materialize(cmd, sandbox, stage=True)
        path, params = parse(cmd.entry, args)
        env = _hermetic_env()
        env.update({k: _reroot(v, sandbox) for k, v in cmd.env})
        stdin = b""
        if cmd.stdin_from is not None:
            assert cmd.stdin_from in STDIN, f"{cmd.id}: give STDIN a fixture for {cmd.stdin_from!r}"
            stdin = STDIN[cmd.stdin_from].read_bytes()
        argv = [sys.executable, "-m", cmd.entry, *args]
        try:
            proc = subprocess.run(
                argv, cwd=sandbox, env=env, input=stdin, capture_output=True, timeout=timeout_s
            )
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"{cmd.id}: {cmd.text} ran past {timeout_s:.0f} s; if it needs that long, "
                "list it in NOT_RUN or SLOW_RUN with the reason"
            )
        run = Run(
            cmd,
            argv,
            sandbox,
            path,
            params,
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )
        if cmd.stdout_to:
            _place(cmd.stdout_to, sandbox).write_text(run.stdout, encoding="utf-8")
        self.runs[cmd.id] = run
        if key is not None:
            self.same[key] = run
        return run


def _self_contained(cmd: DocCommand, sandbox: Path) -> bool:
    """The first command of its line, naming no file (none staged, re-rooted or written): its run
    depends on its words, environment and input alone."""
    return (
        cmd.pos == 0
        and cmd.stdout_to is None
        and not any(
            word in STAGE
            or _reroot(word, sandbox) != word
            or word.startswith(("-o", "--o", "--trace", "--keep", "--html"))
            or any(ch in word for ch in "/*?[")
            for word in cmd.args
        )
    )


@pytest.fixture(scope="session")
def doc_runner(tmp_path_factory: pytest.TempPathFactory) -> DocRunner:
    return DocRunner(tmp_path_factory.mktemp("docs-commands"))


def not_run_reason(cmd: DocCommand) -> Optional[str]:
    if cmd.wrapper:
        launcher = cmd.wrapper[0].rsplit("/", 1)[-1]
        return LAUNCHER_REASONS.get(launcher, f"needs the launcher {launcher}")
    if {"RANK", "WORLD_SIZE"} & {k for k, _ in cmd.env}:
        return "one rank of a multi-node run (RANK/WORLD_SIZE): it waits for its peers on other nodes"
    return NOT_RUN.get(cmd.text) or SLOW_RUN.get(cmd.text)


# --- checks of what a run wrote ------------------------------------------------------------


def _report_text(run: Run) -> tuple[str, str]:
    """(format, text of the report), wherever the command wrote it."""
    params = run.params
    if run.path == ("python -m pgdoctor.trace",):
        fmt, out = "json", params["output"] or os.path.join(params["directory"], "trace.json")
    elif run.path == ("collect",):
        fmt, out = "json", params["output"]  # the snapshot
    else:
        fmt, out = ("json" if params.get("as_json") else params.get("fmt") or "console"), params.get("output")
    if out and out != "-":
        assert run.stdout == "", f"-o {out}: nothing else goes to stdout\n{run.explain()}"
        target = Path(out) if os.path.isabs(out) else run.sandbox / out
        assert target.is_file(), f"-o {out} was not written\n{run.explain()}"
        return fmt, target.read_text(encoding="utf-8")
    return fmt, run.stdout


def _check_report(run: Run) -> None:
    fmt, text = _report_text(run)
    name = " ".join(run.path)
    if fmt == "json":
        obj = json.loads(text)  # exactly one JSON object, nothing around it
        assert isinstance(obj, dict)
        if run.path == ("check",):
            assert {"schema_version", "findings", "results", "measurements"} <= set(obj), sorted(obj)
        elif run.path == ("diagnose",):
            assert obj["findings"], obj
        elif run.path == ("verify",):
            assert {"schema_version", "findings", "verify"} <= set(obj) and obj["verify"]["world_size"], obj
        elif run.path == ("python -m pgdoctor.trace",):
            assert obj["traceEvents"], obj
        elif run.path == ("bench", "collectives"):
            values = {m["key"]: m.get("value") for m in obj["measurements"]}
            assert values["collectives.problems"] == [], values["collectives.problems"]
            if run.params["backend"] != "auto":
                assert values["collectives.backend"] == run.params["backend"]
            if run.params["nproc"]:
                assert values["collectives.world_size"] == run.params["nproc"]
    elif fmt == "junit":
        root = ET.fromstring(text)
        assert root.tag == "testsuites" and root.get("name") == f"pgdoctor {name}", (root.tag, root.attrib)
    elif fmt == "prometheus":
        for severity in ("info", "warn", "fail"):
            assert re.search(rf'^pgdoctor_findings\{{[^}}]*severity="{severity}"[^}}]*\}} \d+', text, re.M), (
                text
            )
        assert re.search(r"^pgdoctor_last_run_timestamp_seconds\{", text, re.M), text
    elif fmt == "html":
        assert text.lstrip().lower().startswith("<!doctype html"), text[:200]
        assert "default-src 'none'" in text and "<script" not in text.lower()
    else:
        assert text.strip(), run.explain()


def _gpu_only_claim(run: Run) -> bool:
    """docs/gpu.md: `check --only gpu` is "GPU area only; exit 3 if it cannot be measured"."""
    unmeasured = re.search(r"^\[-\] GPU health", run.stdout, re.M) is not None
    return run.rc == 3 if unmeasured else run.rc in (0, 1)


# Commands whose input is not the kind their path's EXIT_CODES assume: a log with only a warning.
EXIT_OF_COMMAND = {"pgdoctor diagnose slurm-5822107.out": {0}}
# Claims that the docs make about one command, beyond its output.
CLAIMS: dict[str, Callable[[Run], bool]] = {"pgdoctor check --only gpu": _gpu_only_claim}


def check_run(run: Run) -> None:
    cmd = run.cmd
    assert "Traceback (most recent call last)" not in run.stderr, run.explain()
    expected = (
        {0}
        if run.params.get("eager_exit") or run.params.get("nsys")
        else EXIT_OF_COMMAND.get(cmd.source, EXIT_CODES.get(run.path))
    )
    assert expected is not None, f"{cmd.id}: add the exit codes of {run.path} to EXIT_CODES"
    assert run.rc in expected, f"exit {run.rc}, expected one of {sorted(expected)}\n{run.explain()}"
    if run.params.get("nsys"):
        assert run.stdout.startswith("nsys profile "), run.explain()
    elif not run.params.get("eager_exit"):
        _check_report(run)
    if cmd.text in CLAIMS:
        assert CLAIMS[cmd.text](run), f"{cmd.id}: the doc's claim about it does not hold\n{run.explain()}"
    if cmd.output:
        missing = first_missing_line(cmd.output, run.stdout)
        assert missing is None, (
            f"{cmd.file}:{cmd.output_line} shows a line that `{cmd.text}` does not print "
            f"(or not in that order):\n  {missing}\n{run.explain()}"
        )


# --- the tests ------------------------------------------------------------------------------


def _param(cmd: DocCommand) -> Any:
    return pytest.param(cmd, id=f"{cmd.id} {cmd.text}")


QUICK = [c for c in COMMANDS if not_run_reason(c) is None]
SLOW = [c for c in COMMANDS if c.text in SLOW_RUN and not c.wrapper]


def test_the_docs_read_cleanly() -> None:
    assert DOCS.problems == []


def test_every_table_entry_is_used() -> None:
    texts = {c.text for c in COMMANDS}
    assert set(NOT_RUN) - texts == set() and set(SLOW_RUN) - texts == set()
    words = {w for c in COMMANDS for w in c.args} | {c.stdout_to for c in COMMANDS}
    assert set(STAGE) - words == set()
    assert set(STDIN) - {c.stdin_from for c in COMMANDS} == set()


@pytest.mark.parametrize("cmd", [_param(c) for c in COMMANDS])
def test_docs_command_parses(cmd: DocCommand, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # -o checks its directory while parsing
    path, _ = parse(cmd.entry, materialize(cmd, tmp_path, stage=False))
    assert path, cmd


@pytest.mark.parametrize("cmd", [_param(c) for c in QUICK])
def test_docs_command_runs(cmd: DocCommand, doc_runner: DocRunner) -> None:
    check_run(doc_runner.run(cmd))


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [_param(c) for c in SLOW])
def test_docs_multiprocess_command_runs(cmd: DocCommand, doc_runner: DocRunner) -> None:
    check_run(doc_runner.run(cmd, SLOW_TIMEOUT_S))
