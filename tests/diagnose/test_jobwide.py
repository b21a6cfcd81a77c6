"""Job-wide triage on generated per-rank log directories of 8, 64 and 1024 ranks and on one merged
log: identical failure signatures are one line with rank ranges, the ranks missing from a
signature the others share, the ranks behind, the earliest failure and a node whose ranks all fail
together are named, in the console and in --json.

The lines are written in the formats of torch 2.x ProcessGroupNCCL (watchdog timeout and its
"last completed NCCL work" line), NCCL's WARN prefix `host:pid:tid [dev]` and the CUDA caching
allocator's OOM message, as the other diagnose fixtures are."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Optional

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.jobwide import file_ranks, rank_ranges
from pgdoctor.diagnose.render import render


def _oom(r: int, prefix: bool = True) -> list[str]:
    p = f"[rank{r}]: " if prefix else ""
    return [
        f"{p}Traceback (most recent call last):",
        f'{p}  File "/workspace/train.py", line 211, in <module>',
        f"{p}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU {r % 8} has a total "
        "capacity of 79.15 GiB of which 1.21 GiB is free. Of the allocated memory 74.02 GiB is allocated by "
        "PyTorch, and 2.87 GiB is reserved by PyTorch but unallocated.",
    ]


def _cascade(
    r: int,
    seq: int = 2070,
    done: Optional[int] = None,
    ts: str = "10:41:07.104332",
    prefix: bool = True,
    peer: str = "node-0",
) -> list[str]:
    p = f"[rank{r}]:" if prefix else ""
    done = seq - 1 if done is None else done
    return [
        f"{p}[E1003 {ts} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=52428800, NumelOut=52428800, Timeout(ms)=600000) "
        f"ran "
        f"for {600000 + r} milliseconds before timing out.",
        f"{p}[E1003 {ts} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {r}] Exception (either an error "
        f"or "
        f"timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL "
        f"work: "
        f"{done}.",
        f"node-{r // 8}:{40000 + r}:{40100 + r} [{r % 8}] misc/socket.cc:49 NCCL WARN socketProgress: "
        f"Connection "
        f"closed by remote peer {peer}<41234>",
    ]


def _info(r: int) -> list[str]:
    return [
        f"node-{r // 8}:{40000 + r}:{40007 + r} [{r % 8}] NCCL INFO comm 0x55d5c0a0 rank {r} nranks 64 "
        f"cudaDev "
        f"{r % 8} busId {r % 8}8000 - Init COMPLETE",
        f"[rank{r}]: step 2069 | loss 2.4113 | lr 2.9e-04 | tokens/s 412345",
    ]


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def _console(report) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    render(report, out)
    return out.getvalue()


def test_rank_ranges_and_the_rank_in_a_file_name() -> None:
    assert rank_ranges([7, 0, 1, 2, 4, 8, 2]) == "0-2,4,7-8"
    assert rank_ranges(range(1024)) == "0-1023"
    per_rank = file_ranks([f"logs/rank_{r}.log" for r in range(4)])
    assert per_rank == {f"logs/rank_{r}.log": r for r in range(4)}
    # the job id is the same in every name, the task id (Slurm %t) differs: that is the rank
    slurm = file_ranks([f"out/job-4242-{r}.err" for r in (0, 1, 17)] + ["out/job-4242.out"])
    assert slurm == {"out/job-4242-0.err": 0, "out/job-4242-1.err": 1, "out/job-4242-17.err": 17}
    torchrun = file_ranks([f"tr/run_x1/attempt_0/{r}/stderr.log" for r in range(3)])
    assert torchrun == {f"tr/run_x1/attempt_0/{r}/stderr.log": r for r in range(3)}
    assert file_ranks(["a/slurm-4242.out"]) == {}  # one file: its number is a job id, not a rank
    # Slurm's %N: a per-node log is named after its host, whose number is not a rank
    assert file_ranks([f"out/job-4242-gpu-node-{n}.out" for n in (1, 2, 3)]) == {}


def test_a_per_node_file_whose_lines_name_other_ranks_keeps_their_ranks(tmp_path: Path) -> None:
    for node in range(2):
        _write(
            tmp_path / f"train-{node}.log", [ln for r in range(node * 4, node * 4 + 4) for ln in _cascade(r)]
        )
    rep = diagnose_paths([str(tmp_path)])
    job = rep.meta["jobwide"]
    assert job["ranks"] == 8 and job["rank_span"] == "0-7"
    groups = {g["signature"]: g["ranks"] for g in job["groups"]}
    assert groups["RUN151 watchdog timeout ALLREDUCE SeqNum=2070 after 600000 ms"] == "0-7"
    # NCCL's socket warnings carry no rank: counted as such, not given the file's number
    assert "RUN174 nccl socket error" not in groups and job["unranked_events"] == 8


def test_8_per_rank_logs_group_the_cascade_and_name_the_rank_without_it(tmp_path: Path) -> None:
    for r in range(8):
        _write(
            tmp_path / f"rank_{r}.log",
            _info(r) + (_oom(3) if r == 3 else _cascade(r, done=2068 if r == 6 else None)),
        )
    rep = diagnose_paths([str(tmp_path)])
    assert (rep.findings[0].code, rep.findings[0].scope.rank) == ("RUN101", 3)
    job = rep.meta["jobwide"]
    groups = {g["signature"]: (g["ranks"], g["count"]) for g in job["groups"]}
    assert groups["RUN151 watchdog timeout ALLREDUCE SeqNum=2070 after 600000 ms"] == ("0-2,4-7", 7)
    assert groups["RUN101 CUDA out of memory"] == ("3", 1)
    # the watchdog's "detected at work 2070" line says less than the timeout line: not a group of its own
    assert not any(s.startswith("RUN151") and "ALLREDUCE" not in s for s in groups)
    assert job["absent"][0]["ranks"] == "3" and job["absent"][0]["shared_by"] == 7
    assert job["behind"] == {
        "what": "last_completed_seq",
        "ranks": "6",
        "count": 1,
        "seq": 2068,
        "others": 2069,
    }
    text = _console(rep)
    assert "ranks 0-2,4-7 (7 ranks): RUN151 watchdog timeout ALLREDUCE SeqNum=2070 after 600000 ms" in text
    assert "behind: rank 6 last completed SeqNum=2068 (the others 2069)" in text
    json.dumps(rep.meta["jobwide"])  # plain data


def test_torchrun_log_dir_ranks_come_from_the_directory_names(tmp_path: Path) -> None:
    for r in range(8):
        lines = _oom(5, prefix=False) if r == 5 else _cascade(r, prefix=False)
        _write(tmp_path / "run_7f3a" / "attempt_0" / str(r) / "stderr.log", lines)
    rep = diagnose_paths([str(tmp_path)])
    job = rep.meta["jobwide"]
    assert job["ranks"] == 8
    assert {g["signature"]: g["ranks"] for g in job["groups"]}["RUN101 CUDA out of memory"] == "5"
    assert rep.findings[0].code == "RUN101"


def test_64_ranks_whose_one_node_fails_together_name_the_node(tmp_path: Path) -> None:
    """Slurm's `%j-%t` names; node-3 (ranks 24-31) loses its InfiniBand link, every other rank
    times out: the node, not a rank, is the suspect."""
    for r in range(64):
        if r // 8 == 3:
            lines = [
                f"node-3:{40000 + r}:{40200 + r} [{r % 8}] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
                "completion from peer 10.0.0.9<50123> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
                "localGid ::ffff:10.0.0.3 remoteGids ::ffff:10.0.0.9"
            ]
        else:
            lines = _cascade(r, prefix=False, peer="node-3", ts=f"10:41:{10 + r % 40:02d}.000000")
        _write(tmp_path / f"job-4242-{r}.err", _info(r)[:1] + lines)
    rep = diagnose_paths([str(tmp_path)])
    job = rep.meta["jobwide"]
    assert job["ranks"] == 64
    hosts = job["suspect_hosts"]
    assert [(h["host"], h["ranks"], h["count"]) for h in hosts] == [("node-3", "24-31", 8)]
    assert job["absent"][0]["ranks"] == "24-31"
    text = _console(rep)
    assert "suspect host node-3: all of its ranks 24-31 (8 ranks) share" in text


def test_1024_rank_directory_and_merged_log_print_ranges_never_a_thousand_ranks(tmp_path: Path) -> None:
    """Rank 517 runs out of memory; 1023 ranks time out at SeqNum 2070, rank 1000's watchdog
    fired earliest; rank 1023 completed one collective less."""

    def rank_lines(r: int, prefix: bool) -> list[str]:
        if r == 517:
            return _oom(r, prefix)
        ts = "10:40:59.000000" if r == 1000 else f"10:41:{r % 50 + 5:02d}.{r:06d}"
        return _cascade(r, done=2068 if r == 1023 else None, ts=ts, prefix=prefix)

    per_rank = tmp_path / "per_rank"
    for r in range(1024):
        _write(per_rank / f"train-7781-{r}.out", rank_lines(r, prefix=False))
    merged = tmp_path / "merged.log"
    _write(merged, [ln for r in range(1024) for ln in rank_lines(r, prefix=True)])
    for path in (per_rank, merged):
        rep = diagnose_paths([str(path)])
        assert (rep.findings[0].code, rep.findings[0].scope.rank) == ("RUN101", 517), path
        job = rep.meta["jobwide"]
        top = {g["signature"]: (g["ranks"], g["count"]) for g in job["groups"]}
        assert top["RUN151 watchdog timeout ALLREDUCE SeqNum=2070 after 600000 ms"] == (
            "0-516,518-1023",
            1023,
        )
        assert job["absent"][0]["ranks"] == "517"
        assert (job["behind"]["ranks"], job["behind"]["seq"], job["behind"]["others"]) == ("1023", 2068, 2069)
        assert job["earliest"]["rank"] == 1000 and job["earliest"]["time"].endswith("10:40:59.000")
        text = _console(rep)
        assert (
            "ranks 0-516,518-1023 (1023 ranks): RUN151 watchdog timeout ALLREDUCE SeqNum=2070 after 600000 ms"
            in text
        )
        assert max(len(line) for line in text.splitlines()) < 400  # ranges, not lists
        timeout = next(f for f in rep.findings if f.code == "RUN151")
        assert "(timed out on ranks 0-516, 518-1023 (1023))" in timeout.message
        assert max(len(f.message) for f in rep.findings) < 400


def test_1024_ranks_that_all_time_out_but_one_print_the_root_facts_as_ranges(tmp_path: Path) -> None:
    """No rank says why: rank 517 is silent, 1023 ranks time out, rank 9 one collective earlier.
    The root is the timeout, and its facts line (per-rank sequence numbers) stays short."""
    for r in range(1024):
        if r != 517:
            _write(tmp_path / f"rank_{r}.log", _cascade(r, seq=2069 if r == 9 else 2070))
    _write(tmp_path / "rank_517.log", _info(517))
    rep = diagnose_paths([str(tmp_path)])
    root = rep.findings[0]
    assert root.code == "RUN151" and root.facts["suspect_ranks"] == [517]
    assert "(2069 vs 2070): rank 9 is behind" in root.message
    assert "(timed out on ranks 0-516, 518-1023 (1023))" in root.message
    text = _console(rep)
    assert "seq_by_rank={2070: ranks 0-8, 10-516, 518-1023 (1022), 2069: rank 9}, lagging_ranks=[9]" in text
    assert max(len(line) for line in text.splitlines()) < 400


def test_a_single_rank_log_has_no_job_wide_section(tmp_path: Path) -> None:
    _write(tmp_path / "one.log", _oom(3))
    rep = diagnose_paths([str(tmp_path / "one.log")])
    assert "jobwide" not in rep.meta and "Job-wide" not in _console(rep)


def test_a_job_directory_shared_among_workers_tells_dumps_binaries_and_reports_from_logs(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """300 rank logs (rank 2 out of memory) beside flight-recorder dumps of ranks 0, 1 and 3 (rank
    2 left none), a checkpoint and an earlier report: the workers that read the files also say
    what each one is, and the logs keep their own numbering for the ranks of their names."""
    import tarfile

    monkeypatch.setenv("PGDOCTOR_SCAN_WORKERS", "2")
    for r in range(300):
        _write(
            tmp_path / "logs" / f"rank_{r}.log",
            _oom(r, prefix=False) if r == 2 else _cascade(r, prefix=False),
        )
    with tarfile.open(Path(__file__).resolve().parents[1] / "fixtures" / "fr" / "died.tar") as tf:
        tf.extractall(tmp_path / "fr", filter="data")
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04" + b"\x00\x17\x93" * 4000)  # a zip, as torch.save writes
    earlier = diagnose_paths([str(tmp_path / "logs" / "rank_2.log")])
    (tmp_path / "report.json").write_text(json.dumps(earlier.to_json()))
    rep = diagnose_paths([str(tmp_path)])
    assert rep.meta["skipped_binary_files"] == [str(tmp_path / "model.pt")]
    assert rep.meta["skipped_pgdoctor_reports"] == [str(tmp_path / "report.json")]
    assert sorted(d["rank"] for d in rep.meta["flight_recorder"]["dumps"]) == [0, 1, 3]
    root = rep.findings[0]
    assert (root.code, root.scope.rank, root.facts.get("fr_seq") is not None) == ("RUN101", 2, True)
    assert root.evidence[0].file == str(tmp_path / "logs" / "rank_2.log")
    assert len(rep.meta["sources"]) == 300 and rep.meta["jobwide"]["ranks"] == 300


def test_the_one_rank_whose_ib_link_failed_leads_the_ranks_whose_peer_hung_up(tmp_path: Path) -> None:
    """64 ranks raise NCCL's "unhandled system error" with Last error "Connection reset by peer"
    (rank 0's file comes first); rank 37's own NET/IB completion failed. The peers hanging up are
    the echo: rank 37 is the root cause."""
    for r in range(64):
        lines = [
            f"[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
            "version 2.19.3",
            f"[rank{r}]: Last error:",
            f"[rank{r}]: socketProgress: Connection reset by peer node-0<{40000 + r}>",
        ]
        if r == 37:
            lines.insert(
                0,
                f"node-4:{50000 + r}:{50003 + r} [5] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
                "completion from peer 10.0.0.9<43000> with error 12, opcode 0, len 0, vendor err 129 (Recv)",
            )
        _write(tmp_path / f"rank_{r}.log", lines)
    rep = diagnose_paths([str(tmp_path)])
    assert (rep.findings[0].code, rep.findings[0].scope.rank) == ("RUN173", 37)
    assert rep.findings[1].code == "RUN171" and rep.findings[1].facts["cascade_of"] == "RUN173"
