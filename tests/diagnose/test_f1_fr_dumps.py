"""Flight-recorder dumps as users hand them over: real gloo jobs of torch 2.13.0 CPU (made by
tests/helpers/f1_fr_workload.py: f1_interleave.tar, f1_hang_one_16.tar, f1_pp_size_job.tar,
f1_far_wrapped.tar, f1_tp_dp_no_dump6.tar), laid out, cut and compressed the ways dumps reach
pgdoctor: a directory per rank, a dump cut off while it was written, `gzip -r`, a restarted job's
two attempts side by side, the job's logs beside the dumps. The deadlock between two overlapping
subgroups is read from the ranks' local group ids."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import pickle
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight.dump import Dump, FlightReport, read_dumps
from pgdoctor.diagnose.flight.local_ids import members_from_local_ids
from tests.helpers.paths import FIXTURES

FR = os.path.join(FIXTURES, "fr")


def _untar(name: str, dest: Path, only: str = "") -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(os.path.join(FR, name)) as tf:
        for m in tf.getmembers():
            fh = tf.extractfile(m)
            if fh is not None and m.name.endswith(only):
                (dest / m.name).write_bytes(fh.read())
    return dest


def _root(paths: list[str], fr: list[str]) -> Any:
    return diagnose_paths(paths, fr).findings[0]


def test_overlapping_groups_deadlock_names_the_rank_that_went_the_other_way(tmp_path: Path) -> None:
    # A=[0,1,2], B=[1,2,3]: gloo's pg_config lists no subgroup ranks, so without the local ids
    # ranks 0,1 in A and 2,3 in B read as two healthy pairs ("no failure found", as torch's own
    # analyzer says too). Rank 2 calls B by id 2: it is a member of A, which it never entered.
    d = _untar("f1_interleave.tar", tmp_path / "fr")
    root = _root([], [str(d)])
    assert root.code == "RUN281", root
    assert root.facts["pg"] == "1" and root.facts["seq"] == 1 and root.facts["missing_ranks"] == [2]
    assert root.facts["present_ranks"] == [0, 1]
    last = root.facts["missing_ranks_last_collective"]["2"]
    assert last["pg"] == "2" and last["seq"] == 1 and last["op"] == "gloo:all_reduce"
    assert "rank 2's last collective is gloo:all_reduce seq 1 of process group 2" in root.message


def _dump(rank: int, groups: list[tuple[int, str]]) -> Dump:
    entries = [
        {"record_id": i, "pg_id": pid, "process_group": (name, "undefined"), "collective_seq_id": 1}
        for i, (pid, name) in enumerate(groups)
    ]
    return Dump(f"rank{rank}.pkl", rank, {"version": "2.10", "pg_config": {}, "entries": entries})


def test_local_ids_infer_only_what_the_gap_proves() -> None:
    # Rank 0 calls "3" by id 2: one group among "1", "2" (two names): not decided.
    # Rank 1 calls "2" by id 2: it is in "1" too.
    rep = FlightReport(dumps=[_dump(0, [(0, "0"), (2, "3")]), _dump(1, [(0, "0"), (2, "2")])])
    assert members_from_local_ids(rep) == {"1": {1}}
    # A hashed group name anywhere: creation order is not in the names, nothing is inferred.
    rep.dumps.append(_dump(2, [(0, "0"), (1, "a1b2c3")]))
    assert members_from_local_ids(rep) == {}
    # Ids not in the names' order: not new_group's counter.
    rep = FlightReport(dumps=[_dump(0, [(0, "0"), (1, "5"), (3, "2")])])
    assert members_from_local_ids(rep) == {}


def test_rank_directories_name_the_rank_not_the_file_order(tmp_path: Path) -> None:
    # rank_0 .. rank_15 sort as rank_0, rank_1, rank_10, ...: the 4th file is rank_11's.
    src = _untar("f1_hang_one_16.tar", tmp_path / "src")
    for r in range(16):
        (tmp_path / "fr" / f"rank_{r}").mkdir(parents=True)
        shutil.copy(src / f"rank{r}.pkl", tmp_path / "fr" / f"rank_{r}" / "fr_trace.pkl")
    root = _root([], [str(tmp_path / "fr")])
    assert root.code == "RUN281" and root.facts["missing_ranks"] == [11], root.facts
    assert len(root.facts["present_ranks"]) == 15


def test_frames_skip_decorator_wrappers(tmp_path: Path) -> None:
    # 2.13 wraps all_gather_into_tensor in typing_extensions' @deprecated: the frame users need
    # is their own call, not the wrapper's.
    d = _untar("f1_hang_one_16.tar", tmp_path / "fr")
    frames = _root([], [str(d)]).facts["frames"]
    assert frames and "typing_extensions" not in frames[0] and "sc_hang_one" in frames[0], frames


@pytest.mark.parametrize("cut", ["pkl", "json", "empty", "gz"])
def test_a_cut_dump_is_not_a_rank_that_died(tmp_path: Path, cut: str) -> None:
    d = _untar("f1_interleave.tar", tmp_path / "fr", only=".json" if cut == "json" else ".pkl")
    name = d / f"rank3.{cut if cut in ('pkl', 'json') else 'pkl'}"
    raw = name.read_bytes()
    if cut == "gz":
        name.unlink()
        name = d / "rank3.pkl.gz"
        raw = gzip.compress(raw)
    name.write_bytes(b"" if cut == "empty" else raw[: len(raw) // 2])
    rep = read_dumps([str(d)])
    assert 3 in rep.cut and [x.rank for x in rep.dumps] == [0, 1, 2]
    found = diagnose_paths([], [str(d)]).findings
    dead = [f for f in found if f.code == "RUN290"]
    assert dead and dead[0].facts["kind"] == "cut_dump" and dead[0].facts["cut_dump_ranks"] == [3]
    assert "cut off" in dead[0].message and "died" not in dead[0].message, dead[0].message


def test_a_cut_json_beside_its_readable_pickle_is_no_finding(tmp_path: Path) -> None:
    d = _untar("f1_interleave.tar", tmp_path / "fr")
    raw = (d / "rank3.json").read_bytes()
    (d / "rank3.json").write_bytes(raw[:100])
    rep = read_dumps([str(d)])
    assert rep.cut == {} and sorted(x.rank for x in rep.dumps) == [0, 1, 2, 3]


@pytest.mark.parametrize("pack", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_dumps_read_as_dumps(tmp_path: Path, pack: Any) -> None:
    d = _untar("f1_interleave.tar", tmp_path / "fr", only=".pkl")
    for f in list(d.iterdir()):
        (d / (f.name + ".z")).write_bytes(pack(f.read_bytes()))
        f.unlink()
    for fr, paths in (([str(d)], []), ([], [str(d)])):  # --flight-recorder, and among the logs
        root = _root(paths, fr)
        assert root.code == "RUN281" and root.facts["missing_ranks"] == [2], (pack, paths, root)


def test_a_restarted_jobs_attempts_keep_the_newer_dump_of_each_rank(tmp_path: Path) -> None:
    old = _untar("f1_interleave.tar", tmp_path / "fr" / "attempt_0", only=".pkl")
    new = tmp_path / "fr" / "attempt_1"
    new.mkdir()
    for f in old.iterdir():
        shutil.copy(f, new / f.name)
    rep = read_dumps([str(tmp_path / "fr")])
    assert all("attempt_0" in d.path for d in rep.dumps)  # the same trace twice: the first is kept
    for f in new.iterdir():  # the job again an hour later
        data = pickle.loads(f.read_bytes())
        for e in data["entries"]:
            e["time_created_ns"] += 3600 * 10**9
        f.write_bytes(pickle.dumps(data))
    rep = read_dumps([str(tmp_path / "fr")])
    assert all("attempt_1" in d.path for d in rep.dumps), [d.path for d in rep.dumps]
    assert sum("an older dump of rank" in s for s in rep.skipped) == 4


def test_the_dead_ranks_own_failure_leads_the_hang_it_caused(tmp_path: Path) -> None:
    # Pipeline send/recv (gloo records none): stage 2 sent 512 elements where stage 3 expected
    # 256; gloo aborted rank 3 (no dump), rank 2's send failed, ranks 0-1 wait in a barrier. The
    # dumps alone name rank 2 (it never reached the barrier); rank 3's log says why.
    d = _untar("f1_pp_size_job.tar", tmp_path / "job")
    alone = _root([], [str(d)])
    assert alone.code == "RUN281" and alone.facts["missing_ranks"] == [2]
    found = diagnose_paths([str(d)], []).findings
    root = found[0]
    assert root.code == "RUN201" and root.scope.rank == 3, root
    assert root.facts["fr_code"] == "RUN281" and root.facts["fr_seq"] == 4
    cascade = {f.code for f in found[1:]}
    assert {"RUN281", "RUN290"} <= cascade


def test_gloos_own_argument_check_is_not_called_nccl() -> None:
    from pgdoctor.diagnose.api import diagnose_sources

    line = (
        "[rank1]: RuntimeError: ProcessGroupGloo::alltoall: invalid tensor size at index 2 "
        "(expected (2), got (3))"
    )
    root = diagnose_sources([("rank1.log", line + "\n")])[0]
    assert "gloo backend rejects" in root.message and "NCCL backend" not in root.message
    assert "(expected (2), got (3))" in root.message


def test_a_rank_far_behind_is_named_where_it_stopped_not_where_the_buffers_begin(tmp_path: Path) -> None:
    # Ranks 0-2 queued 300 async all_reduces (buffers of 64 hold seq 240 on); rank 3 issued 5
    # (its last is seq 8). It never entered seq 9; the peers issued it and wait in it.
    d = _untar("f1_far_wrapped.tar", tmp_path / "fr")
    root = _root([], [str(d)])
    assert root.code == "RUN281" and root.facts["missing_ranks"] == [3]
    assert root.facts["seq"] == 9 and "op" not in root.facts, root.facts
    assert root.facts["recorded_from"] == {"seq": 240, "op": "gloo:all_reduce"}
    assert "begin at seq 240" in root.message


def test_a_tp_dp_rank_without_a_dump_is_named_where_its_peers_wait(tmp_path: Path) -> None:
    # TP pairs (size 2) and DP groups (size 4): rank 6, gone without a dump, belongs to one of each;
    # ranks 0,2,4 wait for it in their DP all_reduce (seq 3), which they entered first, and rank
    # 7 in their TP all_reduce (seq 4), not in the world group's first all_reduce long done.
    d = _untar("f1_tp_dp_no_dump6.tar", tmp_path / "fr")
    found = diagnose_paths([], [str(d)]).findings
    root = found[0]
    assert root.code == "RUN290" and root.facts["missing_ranks"] == [6], root
    assert root.facts["pg"] == "5" and root.facts["seq"] == 3 and root.facts["present_ranks"] == [0, 2, 4]
    tp = [f for f in found if f.code == "RUN290" and f.facts.get("pg") == "4"]
    assert tp and tp[0].facts["present_ranks"] == [7] and tp[0].facts["seq"] == 4
