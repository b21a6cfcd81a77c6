"""A tarball of a job's output given to diagnose: each member read as its own file (rank by name,
evidence naming the member, dumps inside found), nothing written outside a temp directory that is
gone when the diagnosis ends, and hostile archives (traversal, links, bombs, cuts) bounded."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.text import archives
from tests.helpers.paths import FIXTURES

OOM = (
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
    "capacity of 79.15 GiB of which 1.20 GiB is free.\n"
)


def _tar(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _leftover_archive_dirs() -> list[str]:
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"pgdoctor-archive-{os.getpid()}-")]


@pytest.mark.parametrize(
    "mode, suffix", [("w", ".tar"), ("w:gz", ".tgz"), ("w:xz", ".tar.xz"), ("w:bz2", ".tbz")]
)
def test_each_member_is_its_own_file(tmp_path: Path, mode: str, suffix: str) -> None:
    logs = {"job/rank0.log": b"step 10 loss 1.0\n", "job/rank1.log": b"step 10 loss 1.0\n" + OOM.encode()}
    rep = diagnose_paths([str(_tar(tmp_path / f"job{suffix}", logs, mode))])
    root = rep.findings[0]
    assert root.code == "RUN101" and root.facts["rank"] == 1
    assert (
        root.evidence[0].file == f"{tmp_path / f'job{suffix}'}:job/rank1.log" and root.evidence[0].line == 2
    )
    assert [s["name"].rsplit(":", 1)[1] for s in rep.meta["sources"]] == ["job/rank0.log", "job/rank1.log"]
    assert _leftover_archive_dirs() == []


def test_the_recorders_dumps_inside_a_tarball_are_read_as_dumps(tmp_path: Path) -> None:
    # The real 4-rank gloo dumps of tests/fixtures/fr (rank 0 entered another collective).
    rep = diagnose_paths([str(FIXTURES / "fr" / "culprit_rank0.tar")])
    root = rep.findings[0]
    assert root.code == "RUN282" and root.facts["ranks"] == [0], root.message
    assert not rep.meta.get("sources"), "a dump is not scanned as a log"


def test_members_never_land_outside_the_temp_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as tf:
        for name, data in {"../../outside/a.log": OOM.encode(), "/abs/b.log": b"fine\n"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link.log")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
        fifo = tarfile.TarInfo("pipe.log")
        fifo.type = tarfile.FIFOTYPE
        tf.addfile(fifo)
    got = archives.unpack(str(path), listed=False, archive="tar")
    try:
        assert [n for n, _ in got.members] == [f"{path}:../../outside/a.log", f"{path}:/abs/b.log"]
        assert all(os.path.realpath(d).startswith(got.directory + os.sep) for _, d in got.members)
        assert not outside.exists()
        assert not any(os.path.islink(os.path.join(r, f)) for r, _, fs in os.walk(got.directory) for f in fs)
    finally:
        archives.remove(got.directory)
    assert diagnose_paths([str(path)]).findings[0].code == "RUN101"


def test_a_bomb_stops_at_the_limit_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "MAX_BYTES", 64 << 10)
    members = {f"rank{i}.log": b"x" * (30 << 10) + b"\n" for i in range(4)}
    rep = diagnose_paths([str(_tar(tmp_path / "big.tar.gz", members))])
    assert len(rep.meta["sources"]) == 2
    assert any("were not read" in s for s in rep.meta["skipped_unreadable_files"])


def test_a_cut_archive_keeps_what_came_before_the_cut(tmp_path: Path) -> None:
    whole = _tar(tmp_path / "whole.tar", {"rank1.log": OOM.encode(), "rank2.log": b"y" * 20000}, "w")
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole.read_bytes()[:3000])
    rep = diagnose_paths([str(cut)])
    assert rep.findings[0].code == "RUN101"
    assert any("cut or damaged" in s for s in rep.meta["skipped_unreadable_files"])


def test_a_tar_found_in_a_job_directory_unpacks_only_what_looks_like_logs(tmp_path: Path) -> None:
    # A webdataset shard beside the logs: its images are not unpacked, its .txt captions are text.
    (tmp_path / "train.log").write_text(OOM)
    _tar(tmp_path / "shard-000.tar", {"0001.jpg": b"\xff\xd8" + b"\x00" * 4000, "0001.cls": b"3"}, "w")
    rep = diagnose_paths([str(tmp_path)])
    assert rep.findings[0].code == "RUN101"
    assert [s["name"] for s in rep.meta["sources"]] == [str(tmp_path / "train.log")]


def test_a_gzipped_log_is_not_taken_for_an_archive(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "rank1.log.gz"
    path.write_bytes(gzip.compress(OOM.encode()))
    assert archives.kind(str(path)) is None
    assert diagnose_paths([str(path)]).findings[0].code == "RUN101"


def test_a_zip_of_logs_is_read_member_by_member(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "logs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("logs/rank0.log", "step 1\n")
        z.writestr("logs/rank1.log", OOM)
        z.writestr("../escape.log", OOM)
        link = zipfile.ZipInfo("logs/link.log")
        link.external_attr = (0o120777 << 16) | 0  # a symbolic link, as `zip -y` stores it
        z.writestr(link, "/etc/passwd")
    got = archives.unpack(str(path), listed=False, archive="zip")
    try:
        assert [n.rsplit(":", 1)[1] for n, _ in got.members] == [
            "logs/rank0.log",
            "logs/rank1.log",
            "../escape.log",
        ]
        assert all(os.path.realpath(d).startswith(got.directory + os.sep) for _, d in got.members)
    finally:
        archives.remove(got.directory)
    root = diagnose_paths([str(path)]).findings[0]
    assert root.code == "RUN101" and root.evidence[0].file.endswith("logs.zip:logs/rank1.log")


def test_a_zip_whose_member_inflates_past_the_limit_stops_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    monkeypatch.setattr(archives, "MAX_BYTES", 100 << 10)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("rank0.log", OOM + "0" * (10 << 20))  # 10 MiB of zeros deflate to ~10 KiB
    got = archives.unpack(str(path), listed=False, archive="zip")
    try:
        assert got.skipped and os.path.getsize(got.members[0][1]) <= 100 << 10 if got.members else got.skipped
    finally:
        archives.remove(got.directory)
