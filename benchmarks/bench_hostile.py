"""Hostile and unlucky inputs, each run as a user would, under an address-space cap and a wall
bound. Prints attempts, crashes (a traceback, an internal error, a signal), hangs (past the
bound), leaks (a planted secret in any output), orphans (a process of the attempt alive after
it), wrong answers (the expected code or exit status missing), and the slowest bounded case
against its bound. Every count should be 0.

    python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import pickle
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

CAP = 3 << 30
SECRET = "hf_SECRETbenchmark0123456789"
PLAIN_SECRET = "pw0SECRETbench9876543210"  # no token prefix: only the name or shape around it can mask it


@dataclass
class Case:
    name: str
    argv: list[str]
    bound_s: float = 30.0
    env: dict[str, str] = field(default_factory=dict)
    stdin: bytes = b""
    exit_codes: tuple[int, ...] = (2,)
    expect_in_output: str = ""
    reject_in_output: str = ""  # a wrong answer when it appears (the blame put on the wrong rank)
    close_stdout: bool = False  # started with fd 1 closed (`cmd >&-`)
    cap: int = CAP  # address-space limit of the attempt


def _cases(tmp: Path) -> list[Case]:
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    deep = tmp / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    nan = tmp / "nan.json"
    nan.write_text('{"schema_version": 1, "time_unix": NaN, "probes": []}')
    x: object = [1]
    for _ in range(30):
        x = [x] * 10
    fr = tmp / "fr"
    fr.mkdir()
    (fr / "rank0.pkl").write_bytes(pickle.dumps({"entries": x, "pg_config": {}}))
    toml = tmp / "deep.toml"
    toml.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    job = tmp / "job"
    job.mkdir()
    (job / "rank0.log").write_text(
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 has a total capacity of 79.1 GiB of which 1.0 GiB is free.\n"
    )
    (job / "dangling.log").symlink_to(tmp / "gone")
    os.mkfifo(job / "pipe.log")
    (job / "report.json").write_text('{\n "schema_version": 1,\n "command": "diagnose",\n "findings": []}\n')
    u16 = tmp / "ps.log"
    u16.write_bytes((job / "rank0.log").read_text().encode("utf-16"))
    secret_log = tmp / "secret.log"
    secret_log.write_text(
        f"python train.py --hf_token {SECRET}\nAuthorization: Bearer {SECRET}\n"
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
    )
    big = Path(tmp / "big.json")
    snap = {
        "schema_version": 1,
        "kind": "pgdoctor.snapshot",
        "pgdoctor_version": "0",
        "host": "h",
        "time_unix": 0.0,
        "level": "quick",
        "probes": [
            {
                "name": "gpu",
                "area": "gpu",
                "status": "passed",
                "reason": "",
                "duration_s": 0.1,
                "measurements": [
                    {"key": f"gpu.{i}.temperature_c", "value": 40, "unit": "C", "source": "nvml"}
                    for i in range(600_000)
                ],
            }
        ],
    }
    big.write_text(json.dumps(snap))
    dense = tmp / "dense.log"
    with open(dense, "w") as fh:
        for i in range(100_500):
            fh.write(
                f"host-1:{1000 + i % 7}:{2000 + i % 7} [0] NCCL WARN NET/Socket : peer 10.0.0.{i % 250} "
                "message truncated\n"
            )
        fh.write(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 79.1 GiB of which 1.0 GiB is free.\n"
        )
    # Class 1: numbers read from inputs that would drive work (a range over a timestamp's span).
    frn = tmp / "fr_named"
    frn.mkdir()
    entry = {
        "record_id": 0,
        "pg_id": 0,
        "process_group": ["0", "default_pg"],
        "collective_seq_id": 1,
        "profiling_name": "nccl:all_gather",
        "input_sizes": [[1]],
        "input_dtypes": ["Float"],
        "output_sizes": [[10**30]],
        "output_dtypes": ["Float"],
        "state": "started",
        "timeout_ms": 1000,
        "is_p2p": False,
        "frames": [],
    }
    for name, ranks in (
        ("nccl_trace_20240101123456.json", "[0, 1]"),
        ("nccl_trace_0.json", f"[0, 1, {10**30}]"),
    ):
        (frn / name).write_text(
            json.dumps({"pg_config": {"0": {"desc": "default_pg", "ranks": ranks}}, "entries": [entry]})
        )
    wd = (
        "[rank{r}]:[E ProcessGroupNCCL.cpp:563] [Rank {r}] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4013, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600009 "
        "milliseconds before timing out.\n"
    )
    far_ranks = tmp / "far_ranks.log"
    far_ranks.write_text(wd.format(r=0) + wd.format(r=10**29))
    far_pids = tmp / "far_pids.log"
    far_pids.write_text(
        "".join(
            f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {p} closing "
            "signal SIGTERM\n"
            for p in (1, 10**30)
        )
    )
    # Class 2: non-finite, huge and wrongly typed numbers, in every format.
    t308 = tmp / "t308.json"
    t308.write_text(
        json.dumps({**{k: v for k, v in snap.items() if k != "probes"}, "time_unix": 1e308, "probes": []})
    )
    nan_cfg = tmp / "nan.toml"
    nan_cfg.write_text("[traces]\nexposed_comm_pct = nan\n")
    inf_cfg = tmp / "inf.toml"
    inf_cfg.write_text("[traces]\ngpu_idle_pct = inf\n")
    sc0 = tmp / "scaling0.json"
    sc0.write_text(json.dumps({"scaling": {"rows": [{"nproc": 0, "fwd_s": 0.1, "samples": 8}]}}))
    inf_tr = tmp / "inf_traces"
    inf_tr.mkdir()
    for rank in (0, 1):
        ev = [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f"ProfilerStep#{i}",
                "ts": i * 1000,
                "dur": 900,
                "pid": rank,
                "tid": 1,
            }
            for i in range(5)
        ]
        (inf_tr / f"rank{rank}.pt.trace.json").write_text(
            json.dumps({"traceEvents": ev})
            .replace('"ts": 1000,', '"ts": 1e400,')
            .replace('"dur": 900}', '"dur": NaN}')
        )
    plan = ["plan", "--params", "7B", "--gpus-per-node", "8", "--gpu-memory"]
    # Class 4: secrets in every shape and terminal control in file names, through every output.
    secret_shapes = tmp / "shapes.log"
    secret_shapes.write_text(
        f"HF_TOKEN: {PLAIN_SECRET}\naws_secret_access_key = {PLAIN_SECRET}\n"
        f'os.environ["WANDB_API_KEY"] = "{PLAIN_SECRET}"\nredis://:{PLAIN_SECRET}@host:6379\n'
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
    )
    esc = tmp / "esc"
    esc.mkdir()
    (esc / "r\x1b]0;PWNED\x07\x1b[2J.log").write_text((job / "rank0.log").read_text())
    os.mkfifo(esc / "p\x1b[2J.log")
    # Class 5: -o through a planted link, and -o checked before a long run.
    precious = tmp / "precious.txt"
    precious.write_text("keep me")
    (tmp / "link.json").symlink_to(precious)
    # Class 7: inputs that were dropped without a word.
    bare = tmp / "bare.pt.trace.json"
    bare.write_text(
        json.dumps(
            [
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": f"ProfilerStep#{i}",
                    "ts": i * 1000,
                    "dur": 900,
                    "pid": 1,
                    "tid": 1,
                }
                for i in range(5)
            ]
        )
    )
    cut = tmp / "cut.pt.trace.json.gz"
    whole = gzip.compress(
        json.dumps(
            {"traceEvents": [{"ph": "X", "name": f"op{i}", "ts": i, "dur": 1} for i in range(5000)]}
        ).encode()
    )
    cut.write_bytes(whole[: len(whole) // 2])  # under 64 KiB
    leaky_env = {
        "TORCHELASTIC_RDZV_ENDPOINT": f"root:{PLAIN_SECRET}@10.0.0.5:2379",
        "MASTER_ADDR": f"admin:{PLAIN_SECRET}@node1",
        "NCCL_DEBUG_FILE": f"/tmp/nccl?token={PLAIN_SECRET}",
    }
    # Class 3: a deadline that an `except Exception` turned into "skipped", and a reader that
    # stepped over blanks one character at a time: 1 MB of gzip holding 1 GB of blanks.
    blanks = tmp / "blanks.pt.trace.json.gz"
    blanks.write_bytes(
        gzip.compress(b'{"traceEvents": [') + gzip.compress(b" " * (1 << 20)) * 1000 + gzip.compress(b"]}")
    )
    # Class 8 (the sweep of 2026-12-07): a pickle's memo slot, zip members a password or a method
    # lacks, member names that collide with folders, a snapshot level no probe has.
    memo = tmp / "memo"
    memo.mkdir()
    (memo / "rank0.pkl").write_bytes(b"\x80\x04}r\xff\xff\xff\x3f.")  # LONG_BINPUT 2^30-1: 16 GiB
    locked = tmp / "locked.zip"
    with zipfile.ZipFile(locked, "w") as zf:
        zf.writestr("rank1.log", "step 1\n")
        zf.writestr("rank0.log", (job / "rank0.log").read_text())
    raw = bytearray(locked.read_bytes())
    raw[6] |= 1  # rank1.log's local header and central entry say "encrypted"
    raw[raw.find(b"PK\x01\x02") + 8] |= 1
    locked.write_bytes(bytes(raw))
    clash = tmp / "clash.tar"
    with tarfile.open(clash, "w") as tf:
        for name, text in (
            ("a", "x\n"),
            ("a/rank1.log", "x\n"),
            ("rank0.log", (job / "rank0.log").read_text()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tf.addfile(info, io.BytesIO(text.encode()))
    bench_snap = tmp / "bench_level.json"
    bench_snap.write_text(
        json.dumps({**{k: v for k, v in snap.items() if k != "probes"}, "level": "bench", "probes": []})
    )
    port = str(_free_port())
    world = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
    bench = [
        "bench",
        "collectives",
        "--nproc",
        "2",
        "--backend",
        "gloo",
        "--ops",
        "all_reduce",
        "--max-bytes",
        "1K",
    ]
    quick = ["check", "--level", "quick"]
    return [
        Case(
            "WORLD_SIZE=100000, only rank 0 there",
            [*quick, "--only", "net", "--timeout", "10"],
            bound_s=12,
            env={**world, "WORLD_SIZE": "100000", "RANK": "0"},
            exit_codes=(1,),
            expect_in_output="ranks 1-99999 (99999) of 100000",
        ),
        Case(
            "multi-node rank 1 whose rank 0 never answers",
            [*quick, "--only", "net", "--timeout", "10"],
            bound_s=11,
            env={**world, "WORLD_SIZE": "2", "RANK": "1"},
            exit_codes=(3,),
        ),
        Case(
            # The parent's import (~2-4 s), the ranks' import and readiness (<= 15 s, 2-6 s under
            # load), then --timeout: about 8 s; it was 22 s while the init bound was >= 15 s.
            "bench --timeout 2, a rank never joins",
            [*bench, "--timeout", "2"],
            bound_s=25,
            env={"PGDOCTOR_COLL_FAULT": "hang:1:init"},
            exit_codes=(1,),
            expect_in_output="init within 2.0 s",
        ),
        Case(
            "bench --timeout 2, a rank never gets ready",
            [*bench, "--timeout", "2"],
            bound_s=25,
            env={"PGDOCTOR_COLL_FAULT": "hang:1:import"},
            exit_codes=(1,),
            expect_in_output="never reported ready",
        ),
        Case(
            "bench, one rank SIGKILLed",
            [*bench, "--nproc", "3"],
            bound_s=30,
            env={"PGDOCTOR_COLL_FAULT": "kill:1:all_reduce"},
            exit_codes=(1,),
            expect_in_output="SIGKILL",
            reject_in_output="COL105",
        ),
        Case(
            "bench, one rank stopped (SIGSTOP)",
            [*bench, "--timeout", "2"],
            bound_s=40,
            env={"PGDOCTOR_COLL_FAULT": "stop:0:all_reduce"},
            exit_codes=(1,),
            expect_in_output="state T",
        ),
        Case(
            "check --from a 48 MB snapshot, --timeout 1",
            ["check", "--from", str(big), "--timeout", "1"],
            bound_s=5,
            exit_codes=(3,),
        ),
        Case(
            "100,500 NCCL WARN lines, then a CUDA OOM",
            ["diagnose", str(dense)],
            bound_s=60,
            exit_codes=(1,),
            expect_in_output="RUN101",
        ),
        Case(
            "hostlist of a billion nodes",
            [*quick, "--only", "launch"],
            env={"SLURM_JOB_NODELIST": "n[0-999999999]"},
            exit_codes=(1,),
            expect_in_output="ENV202",
        ),
        Case("check --from /dev/zero", ["check", "--from", "/dev/zero"]),
        Case("check --config /dev/zero", [*quick, "--config", "/dev/zero"]),
        Case(
            "plan --model /dev/zero",
            ["plan", "--model", "/dev/zero", "--gpus-per-node", "8", "--gpu-memory", "80GiB"],
        ),
        Case("check --from a FIFO", ["check", "--from", str(fifo)]),
        Case("check --config a FIFO", [*quick, "--config", str(fifo)]),
        Case("snapshot nested 100,000 deep", ["check", "--from", str(deep)]),
        Case("snapshot with NaN", ["check", "--from", str(nan)]),
        Case("TOML nested 50,000 deep", [*quick, "--config", str(toml)]),
        Case("--timeout nan", [*quick, "--timeout", "nan"]),
        Case("--timeout inf", [*quick, "--timeout", "inf"]),
        Case("list --area bogus", ["list", "--area", "bogus"]),
        Case(
            "TORCH_DISTRIBUTED_DEBUG=bogus",
            ["check", "--json"],
            bound_s=120,
            env={"TORCH_DISTRIBUTED_DEBUG": "bogus"},
            exit_codes=(1,),
            expect_in_output="ENV406",
        ),
        Case(
            "690-byte pickle of 10^30 nodes",
            ["diagnose", "--flight-recorder", str(fr)],
            exit_codes=(3,),
            expect_in_output="skipped",
        ),
        Case(
            "diagnose of a FIFO that never ends", ["diagnose", "--timeout", "2", str(fifo)], exit_codes=(3,)
        ),
        Case("diagnose with no input", ["diagnose"], stdin=b"lines nobody asked to read"),
        Case("diagnose of an empty stdin", ["diagnose", "-"]),
        Case(
            "job dir with a dangling link and a FIFO",
            ["diagnose", str(job)],
            exit_codes=(1,),
            expect_in_output="RUN101",
        ),
        Case("UTF-16 log", ["diagnose", str(u16)], exit_codes=(1,), expect_in_output="RUN101"),
        Case(
            "5000-digit rank in a log line",
            ["diagnose", "-"],
            exit_codes=(0, 1),
            stdin=b"[rank"
            + b"7" * 5000
            + b"]: RuntimeError: CUDA error: an illegal memory access was encountered\n",
        ),
        Case("secrets in a log", ["diagnose", "--json", str(secret_log)], exit_codes=(0, 1)),
        Case(
            "--expect-gpus 4 on a host without GPUs",
            [*quick, "--expect-gpus", "4", "--only", "gpu"],
            exit_codes=(1, 3),
            expect_in_output="GPU110",
        ),
        Case(
            "plan --layers 10^20",
            [
                "plan",
                "--params",
                "7B",
                "--gpus-per-node",
                "8",
                "--gpu-memory",
                "80GiB",
                "--layers",
                "99999999999999999999",
            ],
        ),
        Case("-o into a missing directory", [*quick, "-o", str(tmp / "no" / "such" / "r.html")]),
        Case(
            "bench with TORCH_DISTRIBUTED_DEBUG=bogus",
            ["bench", "collectives", "--nproc", "2", "--backend", "gloo"],
            env={"TORCH_DISTRIBUTED_DEBUG": "bogus"},
            expect_in_output="ENV406",
        ),
        Case(
            "repro with TORCH_DISTRIBUTED_DEBUG=bogus",
            ["repro", "oom", "--parallel", "ddp", "--nproc", "2"],
            env={"TORCH_DISTRIBUTED_DEBUG": "bogus"},
            expect_in_output="ENV406",
        ),
        Case(
            "dump named by a timestamp, world of 10^30",
            ["diagnose", "--timeout", "20", "--flight-recorder", str(frn)],
            exit_codes=(1,),
            expect_in_output="not a rank",
        ),
        Case(
            "watchdog ranks 0 and 10^29",
            ["diagnose", "--timeout", "20", str(far_ranks)],
            exit_codes=(1,),
            expect_in_output="RUN151",
        ),
        Case(
            "teardown pids 1 and 10^30",
            ["diagnose", "--timeout", "20", str(far_pids)],
            exit_codes=(1,),
            expect_in_output="RUN133",
        ),
        Case(
            "snapshot time 1e308 to JUnit",
            ["check", "--from", str(t308), "--format", "junit"],
            expect_in_output="time_unix",
        ),
        Case("plan --gpu-memory 1e400", [*plan, "1e400"], expect_in_output="finite"),
        Case(
            "NaN config threshold",
            ["diagnose", "--config", str(nan_cfg), str(far_ranks)],
            expect_in_output="nan",
        ),
        Case(
            "bench result with nproc 0", [*plan, "80GiB", "--from", str(sc0)], expect_in_output="world size"
        ),
        Case(
            "traces with 1e400 and NaN times, --json",
            ["diagnose", "--json", str(inf_tr)],
            exit_codes=(0, 1),
            reject_in_output="NaN",
        ),
        Case(
            "check with stdout closed",
            [*quick, "--only", "launch"],
            close_stdout=True,
            expect_in_output="stdout is closed",
        ),
        Case(
            "1 GB of blanks in a trace, --timeout 1",
            ["diagnose", "--timeout", "1", str(blanks)],
            bound_s=5,
            exit_codes=(3,),
            reject_in_output="no failure found",
        ),
        Case(
            "1 GB of blanks in a trace, read to its end",
            ["diagnose", str(blanks)],
            bound_s=60,
            exit_codes=(3,),
            expect_in_output="skipped",
        ),
        Case(
            "secrets in four new shapes, --json",
            ["diagnose", "--json", str(secret_shapes)],
            exit_codes=(0, 1),
        ),
        Case(
            "secrets in endpoints and knobs, collect",
            ["collect", "--level", "quick", "--only", "launch,knobs", "-o", "-"],
            env=leaky_env,
            exit_codes=(0,),
        ),
        Case(
            "secrets in endpoints and knobs, check --json",
            [*quick, "--only", "launch,knobs", "--json"],
            env=leaky_env,
            exit_codes=(0, 1),
        ),
        Case(
            "file names that clear the screen",
            ["diagnose", str(esc)],
            exit_codes=(1,),
            expect_in_output="RUN101",
            reject_in_output="\x1b[2J",
        ),
        Case(
            "-o through a symbolic link",
            [*quick, "--only", "launch", "-o", str(tmp / "link.json")],
            expect_in_output="symbolic link",
        ),
        Case(
            "bench scaling -o into a missing directory",
            ["bench", "scaling", "x:y", "-o", str(tmp / "no" / "r.json")],
            bound_s=10,
            expect_in_output="does not exist",
        ),
        Case(
            "check under a 120 MiB address-space limit",
            [*quick],
            cap=120 << 20,
            exit_codes=(0, 1, 3),
            reject_in_output="internal error",
        ),
        Case(
            "check under a 200 MiB address-space limit",
            [*quick],
            cap=200 << 20,
            exit_codes=(0, 1, 3),
            reject_in_output="internal error",
        ),
        Case(
            "a bare-array trace",
            ["diagnose", str(bare)],
            exit_codes=(0,),
            expect_in_output="1 profiler trace",
        ),
        Case(
            "a .json.gz trace cut in half",
            ["diagnose", str(cut)],
            exit_codes=(3,),
            expect_in_output="skipped: ",
        ),
        Case(
            "traces.* = inf",
            ["diagnose", "--config", str(inf_cfg), str(far_ranks)],
            expect_in_output="finite",
        ),
        Case("plan --ep 4 on a dense model", [*plan, "80GiB", "--ep", "4"], expect_in_output="dense"),
        Case(
            "bench collectives --nproc 100000",
            ["bench", "collectives", "--nproc", "100000", "--backend", "gloo"],
            expect_in_output="1<=x<=256",
        ),
        Case(
            "12-byte pickle naming memo slot 2^30",
            ["diagnose", "--flight-recorder", str(memo)],
            bound_s=10,
            exit_codes=(3,),
            expect_in_output="memo slot",
        ),
        Case(
            "zip with a password-protected member",
            ["diagnose", str(locked)],
            exit_codes=(1,),
            expect_in_output="password",
        ),
        Case(
            "tar whose member names collide with folders",
            ["diagnose", str(clash)],
            exit_codes=(1,),
            expect_in_output="RUN101",
        ),
        Case(
            "check --from a snapshot of level bench",
            ["check", "--from", str(bench_snap)],
            exit_codes=(0,),
            reject_in_output="internal error",
        ),
        Case(
            "job dir holding an earlier report",
            ["diagnose", "--json", str(job)],
            exit_codes=(1,),
            expect_in_output="skipped_pgdoctor_reports",
        ),
    ]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _capped(cap: int = CAP, close_stdout: bool = False) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.setsid()  # the attempt's own process group: whatever it leaves behind is findable
    if close_stdout:
        os.close(1)


def _alive_in_group(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d.name))
    return out


def main() -> None:
    counts = {"attempts": 0, "crashes": 0, "hangs": 0, "leaks": 0, "orphans": 0, "wrong answers": 0}
    slowest = (0.0, 1.0, "")
    with tempfile.TemporaryDirectory(prefix="pgdoctor-hostile-") as d:
        for case in _cases(Path(d)):
            counts["attempts"] += 1
            t0 = time.monotonic()
            p = subprocess.Popen(
                [sys.executable, "-m", "pgdoctor", *case.argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=functools.partial(_capped, case.cap, case.close_stdout),
                env={**os.environ, **case.env},
            )
            try:
                out, err = p.communicate(case.stdin, timeout=case.bound_s)
                hung = False
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                out, err = p.communicate()
                hung = True
            took = time.monotonic() - t0
            text = out.decode(errors="replace") + err.decode(errors="replace")
            verdict = "ok"
            if hung:
                counts["hangs"] += 1
                verdict = "HANG"
            elif p.returncode < 0 or p.returncode >= 4 or "Traceback" in text:
                counts["crashes"] += 1
                verdict = f"CRASH rc={p.returncode}"
            elif (
                p.returncode not in case.exit_codes
                or (case.expect_in_output and case.expect_in_output not in text)
                or (case.reject_in_output and case.reject_in_output in text)
            ):
                counts["wrong answers"] += 1
                verdict = f"WRONG rc={p.returncode}"
            if any(x in text or x in json.dumps(text) for x in (SECRET, PLAIN_SECRET)):
                counts["leaks"] += 1
                verdict += " LEAK"
            left = _alive_in_group(p.pid)
            if left:
                counts["orphans"] += 1
                verdict += f" ORPHANS {left}"
                for pid in left:
                    os.kill(pid, 9)
            if took / case.bound_s > slowest[0] / slowest[1]:
                slowest = (took, case.bound_s, case.name)
            print(f"{case.name:<44} {took:6.2f} s (bound {case.bound_s:g} s)  {verdict}")
    print("; ".join(f"{k}: {v}" for k, v in counts.items()))
    print(f"slowest bounded case: {slowest[2]}: {slowest[0]:.2f} s of its {slowest[1]:g} s bound")


if __name__ == "__main__":
    main()
