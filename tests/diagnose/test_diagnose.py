"""pgdoctor diagnose on logs: the corpus (root cause, facts, cascade), input handling (gzip,
stdin, directories, CRLF, giant lines), normalisation, ordering and the CLI contract."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths, diagnose_sources
from pgdoctor.diagnose.text.normalize import logical_lines, parse_prefixes, strip_ansi
from pgdoctor.diagnose.text.reader import stream_chunks
from pgdoctor.diagnose.text.scan import scan_chunks
from tests.helpers.paths import FIXTURES

LOGS = FIXTURES / "logs"
EXPECTED = json.loads((LOGS / "EXPECTED.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_root_cause_facts_and_cascade(name: str) -> None:
    exp = EXPECTED[name]
    findings = diagnose_paths([str(LOGS / name)]).findings
    codes = [f.code for f in findings]
    if exp["root"] is None:
        # A decoy: nothing at warn or fail (an info note about an error line is allowed).
        real = [f.code for f in findings if f.severity.value != "info"]
        assert real == [], f"{name}: expected no failure, got {codes}"
        return
    assert codes and codes[0] == exp["root"], f"{name}: root {codes}"
    root = findings[0]
    assert root.facts.get("root_cause") is True
    if "rank" in exp:
        assert root.scope.rank == exp["rank"]
    for key, value in exp.get("facts", {}).items():
        assert root.facts.get(key) == value, f"{name}: facts[{key}] = {root.facts.get(key)!r}"
    for code in exp.get("cascade", []):
        assert code in codes[1:], f"{name}: {code} not in cascade {codes}"
    for f in findings[1:]:
        assert f.facts["cascade_of"] == root.code
    assert all(e.line > 0 and e.file for e in root.evidence), "log evidence carries file and line"


def test_evidence_line_numbers_point_at_the_line(tmp_path: Path) -> None:
    text = (
        "".join(f"step {i}\n" for i in range(1, 5001)) + "RuntimeError: CUDA error: invalid device ordinal\n"
    )
    p = tmp_path / "x.log"
    p.write_text(text)
    f = diagnose_paths([str(p)]).findings[0]
    assert f.evidence[0].line == 5001 and f.evidence[0].file == str(p)


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_scan_line_numbers_do_not_depend_on_chunking(chunk: int) -> None:
    data = b"".join(
        b"line %d ok\n" % i if i % 997 else b"line %d RuntimeError: x\n" % i for i in range(1, 30001)
    )
    wins = list(scan_chunks(data[i : i + chunk] for i in range(0, len(data), chunk)))
    assert [w.hit_line for w in wins] == list(range(997, 30001, 997))
    assert all(w.lines[w.hit].startswith(b"line %d " % w.hit_line) for w in wins)


def test_giant_line_window_is_bounded() -> None:
    data = (
        b"x" * (5 << 20)
        + b" RuntimeError: CUDA error: invalid device ordinal "
        + b"y" * (5 << 20)
        + b"\nnext\n"
    )
    wins = list(scan_chunks(data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20)))
    assert len(wins) == 1 and wins[0].hit_line == 1
    assert sum(len(x) for x in wins[0].lines) < 200_000


def test_gzip_and_concatenated_gzip_and_truncated_gzip(tmp_path: Path) -> None:
    raw = (LOGS / "sigkill_rank5_no_dmesg.log").read_bytes()
    gz = tmp_path / "run.log.gz"
    gz.write_bytes(gzip.compress(raw[:4000]) + gzip.compress(raw[4000:]))
    assert next(f.code for f in diagnose_paths([str(gz)]).findings) == "RUN121"
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(raw)[:-40])  # a truncated download still yields what it has
    with open(cut, "rb") as fh:
        assert b"".join(stream_chunks(fh)).startswith(raw[:1000])


def test_directory_is_read_recursively() -> None:
    rep = diagnose_paths([str(LOGS / "per_rank_dir")])
    assert len(rep.meta["sources"]) == 3
    root = rep.findings[0]
    assert root.code == "RUN101" and root.scope.file and root.scope.file.endswith("1/stderr.log")


def test_diagnose_sources_api_matches_paths() -> None:
    name = "interleaved_exception_rank2.log"
    text = (LOGS / name).read_text()
    by_text = diagnose_sources([(name, text)])
    by_path = diagnose_paths([str(LOGS / name)]).findings
    assert [f.code for f in by_text] == [f.code for f in by_path]
    assert by_text[0].facts["exception"] == "KeyError" and by_text[0].scope.rank == 2


def test_exception_that_did_not_kill_a_rank_is_no_finding() -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 3, in f\nValueError: handled and logged\n'
        + "".join(f"step {i} loss 1.0\n" for i in range(200))
    )
    # Only an info note that quotes the error: no warn or fail finding.
    note = diagnose_sources([("a.log", text)])
    assert [(f.code, f.severity.value) for f in note] == [("RUN134", "info")]
    assert note[0].facts["exception"] == "ValueError" and "handled and logged" in note[0].message
    killed = (
        text + "E1003 10:00:00.000000 1 torch/distributed/elastic/multiprocessing/api.py:869] failed "
        "(exitcode: 1) local_rank: 0 (pid: 7) of binary: /usr/bin/python3\n"
    )
    assert [f.code for f in diagnose_sources([("a.log", killed)])] == ["RUN132"]


def test_rank_oom_is_root_and_other_ranks_timeouts_are_cascade_across_files() -> None:
    timeout = (
        "[rank0]:[E1003 10:31:07.1 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600031 milliseconds before timing out.\n"
    )
    oom = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 1 has a total "
        "capacity of 79.15 GiB of which 2.00 GiB is free. Including non-PyTorch memory, this process has "
        "77.1 GiB "
        "memory in use. Of the allocated memory 76.00 GiB is allocated by PyTorch, and 100.00 MiB is "
        "reserved by "
        "PyTorch but unallocated.\n"
    )
    findings = diagnose_sources([("rank0.log", timeout), ("rank1.log", oom)])
    assert [f.code for f in findings] == ["RUN101", "RUN151"]
    assert findings[0].scope.rank == 1 and findings[0].facts["requested_bytes"] == 8 << 30
    assert findings[1].facts["cascade_of"] == "RUN101" and findings[1].facts["seq"] == 9


def test_prefixes_and_ranks() -> None:
    cases = {
        "[rank3]: RuntimeError: x": ("RuntimeError: x", 3),
        "[1,5]<stderr>: boom": ("boom", 5),
        "12: boom": ("boom", 12),
        "node-7: [rank2]: boom": ("boom", 2),
        "2024-05-01T12:00:00.123Z [rank4]: boom": ("boom", 4),
        "   88 | [rank6]: boom": ("boom", 6),
        "(RayTrainWorker pid=1234, ip=10.0.0.1) [rank1]: boom": ("boom", 1),
    }
    for line, (text, rank) in cases.items():
        rest, info = parse_prefixes(line)
        assert (rest, info.get("rank")) == (text, rank), line
    rest, info = parse_prefixes("[default3]:boom")
    assert rest == "boom" and info["local_rank"] == 3
    rest, _ = parse_prefixes("RuntimeError: CUDA error: x")  # an exception name is not a host prefix
    assert rest == "RuntimeError: CUDA error: x"


def test_ansi_with_and_without_esc() -> None:
    assert strip_ansi("\x1b[31mERROR\x1b[0m [rank1] [0]") == "ERROR [rank1] [0]"
    assert strip_ansi("[31mERROR[0m [1;32mok[0m") == "ERROR ok"


def test_json_escaped_traceback_and_interleaved_ranks_and_wraps() -> None:
    lines = logical_lines(
        [
            b'{"log":"Traceback (most recent call last):\\n  File \\"a.py\\", line 1, in <module>\\n'
            b'ValueError: bad\\n"}'
        ],
        7,
    )
    assert [ln.text for ln in lines] == [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "ValueError: bad",
        "",
    ][: len(lines)]
    assert all(ln.no == 7 for ln in lines)
    lines = logical_lines([b"[rank0]: step 1[rank1]: Traceback (most recent call last):"], 1)
    assert [(ln.rank, ln.text) for ln in lines] == [(0, "step 1"), (1, "Traceback (most recent call last):")]
    lines = logical_lines([b"a" * 119 + b"1", b"23 MiB is free", b"next"], 1)
    assert lines[0].text == "a" * 119 + "123 MiB is free" and lines[1].text == "next"


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env=env,
    )


def test_cli_console_json_stdin_and_exit_codes() -> None:
    p = _cli(str(LOGS / "torch20_oom_rank3_then_timeouts.log"))
    out = p.stdout.decode()
    assert p.returncode == 1
    assert out.index("Root cause: RUN101") < out.index("Cascade") < out.index("RUN151")
    assert "pgdoctor explain RUN101" in out and "rank=3" in out
    p = _cli("--json", str(LOGS / "mpirun_segfault.log"))
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["command"] == "diagnose"
    root = doc["findings"][0]
    assert (
        root["code"] == "RUN131"
        and root["category"] == "process_crash"
        and root["facts"]["signal"] == "SIGSEGV"
    )
    assert all("line" in e and "file" in e for e in root["evidence"])
    p = _cli("-", stdin=(LOGS / "slurm_oom_kill.log").read_bytes())
    assert p.returncode == 1 and b"RUN121" in p.stdout
    p = _cli(str(LOGS / "decoys_clean_run.log"))
    assert p.returncode == 0 and b"no failure found" in p.stdout


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    p = _cli(str(tmp_path / "missing.log"))
    assert p.returncode == 2 and p.stderr.decode().count("\n") == 1 and b"Traceback" not in p.stderr
    p = _cli("--flight-recorder", str(tmp_path / "nope"))
    assert p.returncode == 2 and b"Traceback" not in p.stderr


def test_oom_message_split_over_lines_by_a_paste() -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 15.00 GiB.\n"
        "GPU 0 has a total capacity of 14.56 GiB of which 6.91 GiB is free.\n"
        "Including non-PyTorch memory, this process has 7.65 GiB memory in use.\n"
        "Of the allocated memory 7.23 GiB is allocated by PyTorch,\n"
        "and 301.94 MiB is reserved by PyTorch but unallocated.\n"
        "[rank0]: next record\n"
    )
    f = diagnose_sources([("paste.md", text)])[0]
    assert f.code == "RUN101" and f.facts["requested_bytes"] == 15 << 30
    assert f.facts["requested_bytes"] > f.facts["total_bytes"] > f.facts["free_bytes"]
    assert f.facts["request_exceeds_gpu"] is True and "larger than the whole GPU" in f.message
    assert [e.line for e in f.evidence] == [1, 2, 3, 4, 5]


def test_blocking_wait_timeout_formats() -> None:
    old = (
        "RuntimeError: [Rank 0] Caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=BROADCAST, "
        "Timeout(ms)=60000) ran for 60012 milliseconds before timing out.\n"
    )
    new = (
        "[rank1]:[E1003 10:00:00.1 ProcessGroupNCCL.cpp:713] [PG ID 0 PG GUID 0(default_pg) Rank 1] Work "
        "WorkNCCL(SeqNum=8, OpType=ALLGATHER, NumelIn=4, NumelOut=16, Timeout(ms)=60000) timed out in "
        "blocking "
        "wait (TORCH_NCCL_BLOCKING_WAIT=1).\n"
    )
    for text, seq, op, rank in ((old, 7, "BROADCAST", 0), (new, 8, "ALLGATHER", 1)):
        f = diagnose_sources([("b.log", text)])[0]
        assert (f.code, f.facts["seq"], f.facts["op"], f.scope.rank) == ("RUN151", seq, op, rank)
        assert f.facts["mode"] == "blocking_wait"


def test_harmless_nccl_warning_at_exit_is_not_a_failure() -> None:
    text = (
        "node-a:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 18000 - Destroy COMPLETE\n\n"
        "node-a:1:9 [0] init.cc:1990 NCCL WARN Cuda failure 'driver shutting down'\n"
        "node-a:1:9 [0] proxy.cc:1510 NCCL WARN [Service thread] Accept failed Resource temporarily "
        "unavailable\n"
    )
    assert diagnose_sources([("exit.log", text)]) == []


def test_parallel_file_scan_gives_the_sequential_windows(tmp_path: Path) -> None:
    from pgdoctor.diagnose.text.parallel import scan_file

    lines = []
    for i in range(60000):
        if i % 1009 == 0:
            lines.append(b"[rank%d]: RuntimeError: CUDA error: boom %d" % (i % 8, i))
        elif i % 3001 == 0:
            lines.append(b"")
        else:
            lines.append(b"node:1:2 [0] NCCL INFO Channel %02d/32 : 0 1 2 3" % (i % 32))
    data = b"\n".join(lines)
    p = tmp_path / "big.log"
    p.write_bytes(data)
    seq = list(scan_chunks(data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20)))
    for workers in (2, 5):
        assert list(scan_file(str(p), workers)) == seq


def test_equal_length_prefixed_lines_are_not_taken_for_wraps() -> None:
    body = [
        b"[rank0]: step %03d | loss 2.7713 | lr 3.0e-04 | tokens/s 41234 | mem 61.3" % i for i in range(5)
    ]
    body.append(b"[rank0]: ValueError: bad batch of %d samples, want more now really" % 7)
    lines = logical_lines(body, 1)
    assert [ln.text[:10] for ln in lines][-1] == "ValueError" and len(lines) == 6


def test_a_metric_named_like_an_anchor_on_every_line_does_not_hide_the_failure() -> None:
    text = "".join(
        f"[rank0]: step {i} | train_error 0.{i % 97:02d} | val_error 0.31\n" for i in range(150_000)
    )
    text += "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    src = [("metrics.log", text)]
    findings = diagnose_sources(src)
    assert [f.code for f in findings] == ["RUN244"] and findings[0].evidence[0].line == 150_001


def test_binary_files_in_a_job_directory_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "ckpt.pt").write_bytes(b"PK\x03\x04\x00\x00RuntimeError: not a log\x00" * 100)
    (tmp_path / "train.log").write_text("[rank0]: RuntimeError: CUDA error: invalid device ordinal\n")
    rep = diagnose_paths([str(tmp_path)])
    assert [f.code for f in rep.findings] == ["RUN264"]
    assert rep.meta["skipped_binary_files"] == [str(tmp_path / "ckpt.pt")]


def test_no_input_at_all_is_a_usage_error_not_a_clean_bill() -> None:
    """An empty $LOGS in a job script (`pgdoctor diagnose $LOGS`) or an empty pipe must not say
    "no failure found": exit 2 with one line naming the problem."""
    for args, stdin in (((), b"log lines on a pipe nobody asked to read"), (("-",), b"")):
        p = _cli(*args, stdin=stdin)
        err = p.stderr.decode()
        assert p.returncode == 2, (args, p.stdout, err)
        assert "no input" in err and "Traceback" not in err and err.count("\n") == 1, err
