"""Hostile and unlucky inputs, second pass (a red-team round): each test is one class of input
that misbehaved, run as a real command on real files under an address-space cap."""

from __future__ import annotations

import bz2
import json
import lzma
import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

MEMORY_CAP = 3 << 30
OOM = b"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200f", "\u061c"]


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(
    *argv: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        preexec_fn=_capped,
        stdin=subprocess.DEVNULL,
    )


def test_bidirectional_controls_in_log_text_and_file_names_never_reach_the_console(tmp_path: Path) -> None:
    # "Trojan Source": U+202E and the isolates reorder what the terminal shows of a line.
    mark = "".join(BIDI).encode()
    name = tmp_path / ("rank0" + "".join(BIDI) + ".log")
    name.write_bytes(OOM.replace(b"memory.", b"memory. " + mark))
    for argv in (
        ["diagnose", str(name)],
        ["diagnose", "--format", "junit", str(name)],
        ["diagnose", "--json", str(name)],
    ):
        p = run(*argv)
        assert p.returncode == 1, p.stderr[-2000:]
        text = (p.stdout + p.stderr).decode()
        assert not any(c in text for c in BIDI), [c for c in BIDI if c in text]
        assert "\\u202e" in text, text[-500:]


def test_a_cap_note_with_a_zero_count_is_written_not_a_crash() -> None:
    # Past the cap of hit lines read, every hit repeated a kind already read: past_cap_read is 0,
    # and the counts reach the notes with their zeros left out (a 200,000-line log exited 4).
    from pgdoctor.diagnose.analyze import cap_notes

    (note,) = cap_notes(
        [{"name": "big.log", "cap_reads": 100_000, "cap_line": 100_001, "past_cap_counted": 7}]
    )
    assert "0 line(s) of a kind not seen before were read and 7 repeating" in note


def _one_line_error(p: subprocess.CompletedProcess[bytes], *words: str) -> None:
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, p.stdout[-500:], err[-2000:])
    assert "Traceback" not in err and err.count("\n") == 1, err
    for w in words:
        assert w in err, err


def test_an_empty_output_name_is_a_usage_error_not_stdout(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(OOM)
    p = run("diagnose", str(log), "-o", "")
    _one_line_error(p, "empty file name")
    assert not p.stdout


def test_a_flight_recorder_device_or_fifo_is_named_as_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    log = tmp_path / "a.log"
    log.write_bytes(OOM)
    for fr in ("/dev/zero", str(tmp_path / "fifo")):
        _one_line_error(
            run("diagnose", str(log), "--flight-recorder", fr), "not a directory nor a regular file"
        )


def _noise(n: int) -> bytes:
    return b"".join(b"step %d loss 0.%d\n" % (i, i * 7919 % 10007) for i in range(n))


@pytest.mark.parametrize("kind", ["xz", "lzma", "bz2", "utf-32"])
def test_xz_bzip2_and_utf32_logs_are_read_not_taken_for_clean_logs(tmp_path: Path, kind: str) -> None:
    # They were read as bytes: "[ok] no failure found" (exit 0) on a log that holds an OOM.
    body = _noise(20_000) + OOM + _noise(200)
    data = {
        "xz": lambda: lzma.compress(_noise(50)) + lzma.compress(body),  # two streams, as `cat` makes
        "lzma": lambda: lzma.compress(body, format=lzma.FORMAT_ALONE),
        "bz2": lambda: bz2.compress(body),
        "utf-32": lambda: body.decode().encode("utf-32"),
    }[kind]()
    log = tmp_path / "job" / f"rank0.log.{kind}"
    log.parent.mkdir()
    log.write_bytes(data)
    for target in (log, log.parent):  # named, and found in a job directory (not skipped as binary)
        p = run("diagnose", str(target))
        assert p.returncode == 1, (p.stdout[-1000:], p.stderr[-1000:])
        assert b"RUN101" in p.stdout, p.stdout[-1000:]


def test_a_cut_xz_log_is_read_up_to_the_damage(tmp_path: Path) -> None:
    log = tmp_path / "cut.log.xz"
    log.write_bytes(lzma.compress(OOM + _noise(20_000))[:4000])
    p = run("diagnose", str(log))
    assert p.returncode == 1 and b"RUN101" in p.stdout, (p.stdout[-1000:], p.stderr[-1000:])


def test_a_compressed_file_or_archive_pgdoctor_cannot_decode_is_named(tmp_path: Path) -> None:
    # zstd, 7z, lz4: a named one is a usage error that says what to do; one in a job directory is
    # listed as skipped, and a directory of nothing else is incomplete (exit 3), never "no failure
    # found". A zip of logs is read member by member; a torch checkpoint (a zip) is no log: named,
    # a usage error; in a job directory, skipped with the binaries.
    job = tmp_path / "job"
    job.mkdir()
    with zipfile.ZipFile(job / "model.pt", "w", zipfile.ZIP_STORED) as z:
        z.writestr("model/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("model/data/0", os.urandom(4096))
    (job / "rank1.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + os.urandom(64))
    _one_line_error(run("diagnose", str(job / "model.pt")), "torch checkpoint", "not a log")
    _one_line_error(run("diagnose", str(job / "rank1.log.zst")), "zstd-compressed", "zstd -d")
    p = run("diagnose", "--json", str(job))
    assert p.returncode == 3, (p.stdout[-1000:], p.stderr[-1000:])
    meta = json.loads(p.stdout)["meta"]
    assert [s.split(": ")[0] for s in meta["skipped_unreadable_files"]] == [str(job / "rank1.log.zst")], meta
    assert meta["skipped_binary_files"] == [str(job / "model.pt")], meta
    with zipfile.ZipFile(job / "logs.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("rank0.log", OOM + _noise(2000))
    for target in (job / "logs.zip", job):
        p = run("diagnose", str(target))
        assert p.returncode == 1 and b"logs.zip:rank0.log" in p.stdout, (p.stdout[-1000:], p.stderr[-1000:])


@pytest.mark.slow
def test_an_xz_bomb_is_read_as_a_stream_in_flat_memory(tmp_path: Path) -> None:
    c = lzma.LZMACompressor(preset=1)
    data = b"".join(c.compress(b"\n" * (1 << 24)) for _ in range(16)) + c.compress(OOM) + c.flush()
    (tmp_path / "bomb.log.xz").write_bytes(data)  # 256 MiB of blank lines in ~40 KB
    p = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "diagnose", str(tmp_path / "bomb.log.xz")],
        capture_output=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)),
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 1 and b"RUN101" in p.stdout, p.stderr[-1000:]


def test_a_directory_of_nothing_readable_is_incomplete_not_an_all_clear(tmp_path: Path) -> None:
    # Only a checkpoint (torch.save writes a zip), or no file at all (the logs were never copied):
    # "[ok] no failure found in 0 file(s)" with exit 0 read as a clean job.
    ckpt, empty = tmp_path / "ckpt", tmp_path / "empty"
    ckpt.mkdir()
    empty.mkdir()
    with zipfile.ZipFile(ckpt / "model.pt", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", os.urandom(4096))
    for argv, word in (
        ([str(ckpt)], b"skipped 1 binary file(s): "),
        ([str(empty)], b"hold no file"),
        (["--flight-recorder", str(empty)], b"hold no file"),
    ):
        p = run("diagnose", *argv)
        assert p.returncode == 3, (argv, p.stdout[-1000:], p.stderr[-1000:])
        assert b"no input could be read" in p.stdout and word in p.stdout, p.stdout


def test_an_all_clear_names_the_dumps_it_could_not_read(tmp_path: Path) -> None:
    # "[ok] no failure found in ... 1 flight-recorder dump(s)" said nothing of the refused ones.
    fr = tmp_path / "fr"
    fr.mkdir()
    (fr / "nccl_trace_rank_0.json").write_text('{"version": "2.4", "entries": []}')
    (fr / "evil_1").write_bytes(b"\x80\x04cos\nsystem\n(S'true'\ntR.")
    (fr / "deep_2.json").write_bytes(b"{" * 100_000)
    p = run("diagnose", "--flight-recorder", str(fr))
    assert p.returncode == 0, p.stderr[-1000:]
    out = p.stdout.decode()
    assert "[ok] no failure found" in out, out
    assert f"skipped: {fr / 'evil_1'}: refused" in out and f"skipped: {fr / 'deep_2.json'}: " in out, out


def test_verify_entries_that_cannot_be_used_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    # A spec that is no file (a device) was "does not exist" after the progress line; a module
    # entry that does not exist printed importlib's own frames as "the user's traceback".
    _one_line_error(run("verify", "/dev/zero:build", "--nproc", "2"), "is not a regular file")
    _one_line_error(run("verify", str(tmp_path / "none.py") + ":build", "--nproc", "2"), "does not exist")
    p = run("verify", "no_such_pkg_pgdoctor.mod:build", "--nproc", "2", timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2 and "Traceback" not in err and "<frozen" not in err, err
    assert "no module named 'no_such_pkg_pgdoctor'" in err, err


def test_run_checks_its_report_and_evidence_paths_before_the_job_runs(tmp_path: Path) -> None:
    # `run --report` into a missing directory let the job run (hours, in real use), then lost the
    # report and its exit status to "No such file or directory"; a --save that is a device failed
    # only after the job.
    marker = tmp_path / "ran"
    for argv, word in (
        (["--report", str(tmp_path / "none" / "r.json")], "does not exist"),
        (["--report", ""], "empty file name"),
        (["--save", "/dev/null"], "not a directory"),
    ):
        _one_line_error(run("run", *argv, "--", "touch", str(marker)), word)
        assert not marker.exists(), argv


def test_run_prints_its_summary_before_a_report_the_disk_refuses() -> None:
    p = run("run", "--report", "/dev/full", "--", "true")
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert err.splitlines()[0].startswith("pgdoctor run: ok (exit 0)"), err
    assert err.splitlines()[-1] == "pgdoctor: error: cannot write /dev/full: No space left on device", err


def test_hang_save_that_cannot_hold_a_directory_is_refused_before_the_snapshot(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    for save, word in (("/dev/null", "not a directory"), (str(tmp_path / "f" / "sub"), "not a directory")):
        _one_line_error(run("hang", "--save", save, str(os.getpid())), word)


# Long runs that made a redaction pattern retry at every position of the run (quadratic; the
# flag pattern cubic): a 64 KiB CUDA_VISIBLE_DEVICES made `check --level quick` take 32 s.
_RUNS = [
    "x," + "a" * 64_000,
    "a-" * 32_000 + " ",
    "a." * 32_000 + ":",
    "token_" * 10_000,
    "-token" * 10_000,
    "x-token-" * 8_000 + ":",
    "a://" * 16_000,
    "@" + "a://a:b" * 9_000,
]


@pytest.mark.parametrize("text", _RUNS, ids=lambda t: repr(t[:8]))
def test_redaction_is_linear_on_long_runs(text: str) -> None:
    import time

    from pgdoctor.model.redact import redact_text

    t0 = time.process_time()
    redact_text(text)
    assert time.process_time() - t0 < 1.5  # quadratic took 2-30 s; linear takes milliseconds


def test_redaction_still_masks_after_the_linear_rewrite() -> None:
    from pgdoctor.model.redact import redact_text

    text = (
        "https://oauth2:" + "x" * 3000 + "@gitlab.com/a 1https://u:pw1@h redis://:pw2@h x-api-token: abc "
        "--hf_token=abc3 token_a_b: secret4 admin:pw5@node1 https://ghp_abcdefghijklmnopqrstuv@github.com"
    )
    out = redact_text(text)
    for secret in ("x" * 100, "pw1", "pw2", "abc ", "abc3", "secret4", "pw5", "ghp_abc"):
        assert secret not in out, (secret, out)


def test_check_with_a_huge_environment_value_ends_promptly() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "x," + "a" * 64_000, "NCCL_SOCKET_IFNAME": "x-token-" * 8_000}
    p = run("check", "--level", "quick", env=env, timeout=20)
    assert p.returncode in (0, 1), p.stderr[-1000:]


def test_a_console_that_is_not_utf8_gets_escapes_not_an_internal_error(tmp_path: Path) -> None:
    # LANG=C or PYTHONIOENCODING=ascii (cron, minimal images): a log line or file name outside
    # the console's encoding was a UnicodeEncodeError in the sink, exit 4.
    log = tmp_path / "caf\u00e9.log"
    log.write_bytes(OOM.replace(b"memory.", "memory \u2014 \U0001f525.".encode()))
    for enc in ("ascii", "latin-1"):
        p = run("diagnose", str(log), env={"PYTHONIOENCODING": enc})
        assert p.returncode == 1, (enc, p.stderr[-1000:])
        assert b"\\u2014" in p.stdout and b"RUN101" in p.stdout, p.stdout[-1000:]


def test_a_model_config_without_a_shape_is_named_by_its_own_file(tmp_path: Path) -> None:
    # The error said "config.json has no ..." whatever file was given.
    cfg = tmp_path / "mine.json"
    cfg.write_text('{"hidden_size": 1e308, "num_hidden_layers": "32"}')
    _one_line_error(
        run("plan", "--model", str(cfg), "--gpus-per-node", "8", "--gpu-memory", "80GiB"),
        str(cfg),
        "hidden_size",
    )


def _png() -> bytes:
    """A real 64x64 PNG (random pixels)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + os.urandom(64 * 3) for _ in range(64))
    ihdr = struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def test_a_named_binary_file_is_refused_and_a_log_with_stray_bytes_is_read(tmp_path: Path) -> None:
    # An ELF (the interpreter itself) or a PNG named was read as text: "[ok] no failure found", exit 0.
    png = tmp_path / "loss_curve.png"
    png.write_bytes(_png())
    elf = os.path.realpath(sys.executable)
    for path in (elf, str(png)):
        _one_line_error(run("diagnose", path), "a binary file", "not a text log")
    # A log with a few stray bytes (a NUL, an escape, a byte that is no UTF-8) is still a log.
    log = tmp_path / "rank0.log"
    log.write_bytes(_noise(200) + b"\x00\x00\x1b[0m\xff\xfe garbage\n" + OOM + _noise(200))
    p = run("diagnose", str(log))
    assert p.returncode == 1 and b"RUN101" in p.stdout, (p.stdout[-1000:], p.stderr[-1000:])
    # In a job directory the binaries are skipped and listed, the log read.
    (tmp_path / "python").write_bytes(Path(elf).read_bytes()[:65536])
    p = run("diagnose", "--json", str(tmp_path))
    assert p.returncode == 1, (p.stdout[-1000:], p.stderr[-1000:])
    skipped = sorted(json.loads(p.stdout)["meta"]["skipped_binary_files"])
    assert skipped == [str(png), str(tmp_path / "python")], skipped
