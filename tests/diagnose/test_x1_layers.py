"""Archives inside archives and compressed streams inside compressed streams (made here with the
standard library's tarfile, zipfile, gzip and lzma): an inner zip was "a binary file" named by the
temp path it had been unpacked to, an inner tar was read as one log of NUL blocks, and a gzip of a
gzip, an xz of a gzip or a gzip of a UTF-16 log answered "[ok] no failure found"."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pgdoctor.diagnose.text import archives
from pgdoctor.diagnose.text.reader import open_sources

OOM = b"[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"


def diagnose(path: Path) -> dict:  # type: ignore[type-arg]
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", "--json", str(path)],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _codes(report: dict) -> list[str]:  # type: ignore[type-arg]
    return [f["code"] for f in report["findings"]]


@pytest.mark.parametrize(
    "outer, inner",
    [
        ("tar.gz", "zip"),
        ("tar", "tar"),
        ("zip", "tar.gz"),
    ],
)
def test_an_archive_inside_an_archive_is_read_member_by_member(
    tmp_path: Path, outer: str, inner: str
) -> None:
    inner_bytes = (
        _zip({"node1/rank1.log": OOM})
        if inner == "zip"
        else _tar({"node1/rank1.log": OOM}, "w:gz" if inner == "tar.gz" else "w")
    )
    members = {f"logs/inner.{inner}": inner_bytes, "logs/rank0.log": b"step 1 ok\n"}
    path = tmp_path / f"job.{outer}"
    path.write_bytes(_zip(members) if outer == "zip" else _tar(members, "w:gz" if outer == "tar.gz" else "w"))
    report = diagnose(path)
    assert "RUN101" in _codes(report)
    names = [s["name"] for s in report["meta"]["sources"]]
    assert f"{path}:logs/inner.{inner}:node1/rank1.log" in names
    assert "skipped_binary_files" not in report["meta"]


def test_a_binary_member_is_named_by_its_archive_not_its_temp_file(tmp_path: Path) -> None:
    job = tmp_path / "dir"
    job.mkdir()
    # a name without a dot is unpacked from a tar found in a job directory, where binaries are skipped
    (job / "job.tar").write_bytes(_tar({"rank0.log": OOM, "core": b"\x00\x01\x02\x7fELF" * 512}))
    report = diagnose(job)
    assert report["meta"]["skipped_binary_files"] == [f"{job / 'job.tar'}:core"]


def test_nesting_shares_one_budget_and_stops_at_its_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each level draws on the outermost archive's members and bytes, so a nest never multiplies
    what a bomb writes; past MAX_DEPTH an archive is a member like any other."""
    monkeypatch.setattr(archives, "MAX_MEMBERS", 3)
    inner = _tar({f"rank{i}.log": OOM for i in range(5)})
    path = tmp_path / "outer.tar"
    path.write_bytes(_tar({"a.tar": inner, "b.tar": inner}))
    unpacked: list[archives.Unpacked] = []
    sources = open_sources([str(path)], unpacked=unpacked, skipped=(skipped := []))
    try:
        assert len(sources) == 3
        assert any("were not read" in s for s in skipped)
    finally:
        for d in unpacked:
            archives.remove(d.directory)
    deep = OOM
    for _ in range(archives.MAX_DEPTH + 2):
        deep = _tar({"x.tar" if deep is not OOM else "rank1.log": deep})
    path.write_bytes(deep)
    unpacked = []
    sources = open_sources([str(path)], unpacked=unpacked)
    try:
        assert len(sources) == 1 and sources[0].name.count(":") == archives.MAX_DEPTH + 1
    finally:
        for d in unpacked:
            archives.remove(d.directory)


@pytest.mark.parametrize(
    "layers",
    [
        lambda b: gzip.compress(gzip.compress(b)),
        lambda b: lzma.compress(gzip.compress(b)),
        lambda b: gzip.compress(b.decode().encode("utf-16")),
        lambda b: gzip.compress(lzma.compress(b.decode().encode("utf-16"))),
    ],
    ids=["gz-gz", "xz-gz", "gz-utf16", "gz-xz-utf16"],
)
def test_a_stream_compressed_twice_or_holding_utf16_is_read(tmp_path: Path, layers) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rank1.log.gz"
    path.write_bytes(layers(OOM))
    assert "RUN101" in _codes(diagnose(path))


def test_layers_stop_at_their_bound_without_an_error(tmp_path: Path) -> None:
    data = OOM
    for _ in range(8):
        data = gzip.compress(data)
    path = tmp_path / "deep.gz"
    path.write_bytes(data)
    diagnose(path)  # read as far as the bound, then as bytes: no crash, exit 0 or 1


def test_a_hole_of_nuls_is_never_opened_as_a_tar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tarfile's "r:*" read a file of NULs as an LZMA-alone stream to its end before the log was
    scanned: a 400 MB hole (logrotate's copytruncate) took 100 s, a 4 GB one past any --timeout."""
    tar = tmp_path / "job.tar"
    tar.write_bytes(_tar({"rank1.log": OOM}))
    opened: list[str] = []
    real = tarfile.open
    monkeypatch.setattr(tarfile, "open", lambda *a, **k: opened.append(str(a[0])) or real(*a, **k))
    hole = tmp_path / "rank1.log"
    with open(hole, "wb") as fh:
        fh.truncate(8 << 20)
        fh.seek(8 << 20)
        fh.write(OOM)
    assert archives.kind(str(hole)) is None and opened == []
    assert archives.kind(str(tar)) == "tar" and opened == [str(tar)]
