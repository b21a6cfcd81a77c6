"""Inputs of the hostile-input sweep that found holes: a 12-byte pickle that made the reader allocate
16 GiB, zip members that raised an internal error or ended the archive (a password, Deflate64, a
name a file system refuses or that collides with a folder), and folders of a job directory that
could not be listed and were dropped without a word."""

from __future__ import annotations

import io
import os
import pickle
import resource
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from pgdoctor.diagnose.api import diagnose_paths
from pgdoctor.diagnose.flight import safe_pickle
from pgdoctor.diagnose.flight.dump import read_dumps

OOM = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.20 GiB is free.\n"
)


@pytest.mark.parametrize("index", [0x0800_0000, 0x3FFF_FFFF, 0xFFFF_FFFF])
def test_a_memo_slot_past_what_the_pickle_can_fill_is_refused_before_any_allocation(index: int) -> None:
    # LONG_BINPUT 0x3FFFFFFF: the C unpickler grew its memo to 2^31 slots, 16 GiB in 38 s.
    bomb = b"\x80\x04" + pickle.EMPTY_DICT + pickle.LONG_BINPUT + struct.pack("<I", index) + pickle.STOP
    t0 = time.monotonic()
    with pytest.raises(safe_pickle.UnsafePickleError, match="memo slot"):
        safe_pickle.loads(bomb)
    assert time.monotonic() - t0 < 1.0
    # Text PUT, admitted by the unpickler in any protocol, the same.
    with pytest.raises(safe_pickle.UnsafePickleError, match="memo slot"):
        safe_pickle.loads(b"\x80\x02}p4000000000\n.")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickles_with_more_memo_slots_than_the_fast_path_admits_still_read(protocol: int) -> None:
    # 1.2 M distinct strings: LONG_BINPUT indices past 2^20, each under half its own offset.
    data = {"entries": [{"frames": [{"name": f"f{i}", "filename": f"/x/{i}.py"}]} for i in range(300_000)]}
    assert safe_pickle.loads(pickle.dumps(data, protocol=protocol)) == data


def test_a_cut_or_lying_length_is_a_cut_pickle_not_an_allocation(tmp_path: Path) -> None:
    whole = pickle.dumps({"entries": [{"profiling_name": "nccl:all_reduce"}] * 50}, protocol=2)
    (tmp_path / "rank0.pkl").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "rank1.pkl").write_bytes(b"\x80\x05" + pickle.BYTEARRAY8 + struct.pack("<Q", 1 << 40) + b".")
    rep = read_dumps([str(tmp_path)])
    assert not rep.dumps and len(rep.skipped) == 2
    assert all("truncated" in s for s in rep.skipped), rep.skipped


def _patched_zip(path: Path, members: dict[str, str], method: int = 0, encrypted: str = "") -> Path:
    """A zip whose member `encrypted` (or every member, with `method`) says a password or a compression
    method zipfile lacks (9 Deflate64, 99 AES), as Explorer and 7-Zip write them."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    raw = bytearray(path.read_bytes())
    for header, flags_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = raw.find(header)
        while at >= 0:
            name_len = struct.unpack_from("<H", raw, at + (26 if header == b"PK\x03\x04" else 28))[0]
            name_at = at + (30 if header == b"PK\x03\x04" else 46)
            name = raw[name_at : name_at + name_len].decode()
            if method:
                struct.pack_into("<H", raw, at + method_at, method)
            if name == encrypted:
                raw[at + flags_at] |= 1
            at = raw.find(header, at + 4)
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("method, encrypted", [(0, "rank1.log"), (9, ""), (99, "")])
def test_a_zip_member_that_cannot_be_decoded_is_skipped_and_the_others_read(
    tmp_path: Path, method: int, encrypted: str
) -> None:
    # Each was "internal error: RuntimeError / NotImplementedError" (exit 4).
    z = _patched_zip(tmp_path / "job.zip", {"rank1.log": "step 1\n", "rank0.log": OOM}, method, encrypted)
    rep = diagnose_paths([str(z)])
    skipped = rep.meta.get("skipped_unreadable_files", [])
    if method:  # every member undecodable: each is named, none is a crash
        assert not rep.findings and len(skipped) == 2, skipped
        assert all("compression method" in s for s in skipped), skipped
    else:
        assert rep.findings[0].code == "RUN101", rep.findings
        assert skipped == [f"{z}:rank1.log: not read ({skipped[0].split('(', 1)[1]}"]
        assert "password" in skipped[0]


@pytest.mark.parametrize(
    "names",
    [
        ["a", "a/rank1.log", "rank0.log"],  # a file where the next member needs a folder
        ["a/b.log", "a", "rank0.log"],  # a member named like an earlier member's folder
        ["x" * 300 + ".log", "rank0.log"],  # a name longer than NAME_MAX
        ["d/" * 1500 + "rank1.log", "rank0.log"],  # deeper than PATH_MAX (os.makedirs recursed)
    ],
)
@pytest.mark.parametrize("fmt", ["zip", "tar"])
def test_member_names_a_file_system_refuses_lose_no_member(
    tmp_path: Path, names: list[str], fmt: str
) -> None:
    # Each ended the archive as "cut or damaged": the OOM in rank0.log was "[ok] no failure found".
    members = {n: (OOM if n == "rank0.log" else "step 1\n") for n in names}
    path = tmp_path / f"job.{fmt}"
    if fmt == "zip":
        with zipfile.ZipFile(path, "w") as zf:
            for n, text in members.items():
                zf.writestr(n, text)
    else:
        with tarfile.open(path, "w") as tf:
            for n, text in members.items():
                info = tarfile.TarInfo(n)
                info.size = len(text)
                tf.addfile(info, io.BytesIO(text.encode()))
    rep = diagnose_paths([str(path)])
    assert rep.findings and rep.findings[0].code == "RUN101", rep.meta.get("skipped_unreadable_files")
    assert not rep.meta.get("skipped_unreadable_files")
    assert len(rep.meta["sources"]) == len(names)


def _without_read_override() -> list[str]:
    """argv prefix that runs a command unable to read what it lacks permission for: root's
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped (setpriv), nothing for another user."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: a folder of mode 000 is readable")
    drop = "-dac_override,-dac_read_search"
    return [setpriv, "--bounding-set", drop, "--inh-caps", drop]


def _diagnose(*argv: str) -> subprocess.CompletedProcess[str]:
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [*_without_read_override(), sys.executable, "-m", "pgdoctor", "diagnose", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=capped,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def locked(tmp_path: Path):  # type: ignore[no-untyped-def]
    job = tmp_path / "job"
    (job / "node1").mkdir(parents=True)
    (job / "node1" / "rank1.log").write_text(OOM.replace("rank0", "rank1"))
    (job / "rank0.log").write_text("step 1 loss 2.0\n")
    (job / "node1").chmod(0)
    try:
        yield job
    finally:
        (job / "node1").chmod(0o700)


def test_a_folder_of_a_job_directory_that_cannot_be_listed_is_named_as_skipped(locked: Path) -> None:
    # It was dropped by os.walk without a word: "[ok] no failure found in 1 file(s)".
    p = _diagnose("--json", str(locked))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    meta = __import__("json").loads(p.stdout)["meta"]
    assert f"{locked / 'node1'}: permission denied" in meta["skipped_unreadable_files"]


@pytest.mark.parametrize("flag", [[], ["--flight-recorder"]])
def test_a_named_folder_that_cannot_be_listed_is_an_error_not_an_empty_one(
    locked: Path, flag: list[str]
) -> None:
    # It was "incomplete: the directories named hold no file" (exit 3).
    p = _diagnose(*flag, str(locked / "node1"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, (p.returncode, p.stderr)
    assert "permission denied" in p.stderr and "node1" in p.stderr


def _shard_tar(path: Path, members: list[tuple[str, bytes]]) -> None:
    """A gzipped tar of `members`, written header by header (150,000 through tarfile.addfile take a
    minute; their headers alone, a few seconds)."""
    import gzip

    with gzip.open(path, "wb", compresslevel=1) as out:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.write(info.tobuf(tarfile.GNU_FORMAT))
            out.write(data + b"\0" * (-len(data) % 512))
        out.write(b"\0" * 1024)


@pytest.mark.slow  # 150,000 members: ~10 s on one free core
def test_a_job_directory_archive_of_many_members_that_are_no_logs_is_walked_within_a_bound(
    tmp_path: Path,
) -> None:
    # A dataset shard of 300,000 members not named like logs, found in a job directory, was walked whole
    # though none is unpacked (30 s; a larger one until --timeout). The walk stops after MAX_LOOKED members
    # and says so; a log that comes after 60,000 of them (past MAX_MEMBERS) is still read.
    from pgdoctor.diagnose.text.archives import MAX_LOOKED

    job = tmp_path / "job"
    job.mkdir()
    shard = [(f"shard/{i:07d}.npy", b"") for i in range(MAX_LOOKED + 50_000)]
    shard.insert(60_000, ("logs/rank3.log", OOM.encode()))
    shard.append(("logs/rank5.log", b"[rank5]: RuntimeError: NCCL error: unhandled system error\n"))
    _shard_tar(job / "shards.tar.gz", shard)
    rep = diagnose_paths([str(job)])
    assert rep.findings and rep.findings[0].code == "RUN101", rep.findings
    read = [s["name"] for s in rep.meta["sources"]]
    assert read == [f"{job / 'shards.tar.gz'}:logs/rank3.log"], read
    skipped = rep.meta.get("skipped_unreadable_files", [])
    assert skipped == [
        f"{job / 'shards.tar.gz'}: members past the first {MAX_LOOKED} were not read (1 read, "
        f"{MAX_LOOKED - 1} (0 MiB) binary or not named like logs passed over; limits {MAX_LOOKED} members "
        "looked at, 4 GiB passed over)"
    ], skipped
