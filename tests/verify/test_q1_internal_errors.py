"""An exception raised by pgdoctor's own code while verify ran the reference or a rank was reported
as the user's entry error (exit 2). It is pgdoctor's internal error (exit 4) now; an exception of
the user's build()/data()/loss()/model stays the entry's (exit 2). Decided by the traceback's frames
(entry.raised_by_pgdoctor). The real runs break pgdoctor's code in the workers through a
sitecustomize.py on PYTHONPATH (the workers inherit the environment): verify has no test hook."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

pytest.importorskip("torch")

from pgdoctor.verify.entry import EntryError, Verdict, raised_by_pgdoctor

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "fixtures" / "codes" / "VER101" / "good.py"
TAG = f"test_q1_internal-{os.getpid()}"

# Breaks pgdoctor's own code in the worker so that it raises inside pgdoctor's frames:
# `reference`: run_reference calls sample_hash, now None (TypeError in common.py);
# `rank`: the data-parallel loop's sample_hash, the same in dataparallel.py.
SITECUSTOMIZE = """
import os
what = os.environ.get("Q1_BREAK")
if what == "reference":
    import pgdoctor.verify.common as common
    common.sample_hash = None
elif what == "rank":
    import pgdoctor.verify.dataparallel as dp
    dp.sample_hash = None
"""

USER_RAISES = """
import sys
sys.path.insert(0, {good_dir!r})
from good import build as _build


def build():
    spec = _build()
    real = spec["data"]

    def data(rank, world, step):
        if step == 1:
            raise ValueError("shard 7 is missing")
        return real(rank, world, step)

    spec["data"] = data
    return spec
"""


def _verify(tmp_path: Path, entry: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    full = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]),
        "PGDOCTOR_TEST_VERIFY_TAG": TAG,
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "pgdoctor", "verify", entry, "--nproc", "2", "--steps", "2"],
        capture_output=True,
        text=True,
        timeout=240,
        env=full,
    )


def _workers() -> list[str]:
    """Our verify workers still alive (cleaned up on every exit path)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if (
                "pgdoctor.verify.worker" in cmd
                and f"PGDOCTOR_TEST_VERIFY_TAG={TAG}".encode() in (d / "environ").read_bytes()
            ):
                found.append(f"{d.name} {cmd}")
        except OSError:
            continue
    return found


@pytest.mark.parametrize("where, who", [("reference", "the one-process reference"), ("rank", "rank")])
def test_pgdoctors_own_exception_is_an_internal_error(tmp_path: Path, where: str, who: str) -> None:
    r = _verify(tmp_path, f"{GOOD}:build", Q1_BREAK=where)
    assert r.returncode == 4, (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    assert "internal error" in r.stderr and who in r.stderr and "TypeError" in r.stderr, r.stderr[-3000:]
    assert "doctor/verify/" in r.stderr  # where pgdoctor's code raised, named
    assert not _workers()


def test_the_users_data_that_raises_stays_the_entrys_error(tmp_path: Path) -> None:
    entry = tmp_path / "user_entry.py"
    entry.write_text(USER_RAISES.format(good_dir=str(GOOD.parent)))
    r = _verify(tmp_path, f"{entry}:build")
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    assert "shard 7 is missing" in r.stderr and "user_entry.py" in r.stderr, r.stderr[-3000:]
    assert "internal error" not in r.stderr
    assert not _workers()


# --- the classification on real tracebacks ------------------------------------------------


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except BaseException as exc:
        return exc
    raise AssertionError("did not raise")


def test_classification_on_real_tracebacks(tmp_path: Path) -> None:
    import torch

    from pgdoctor.verify import common

    user = tmp_path / "user_code.py"
    user.write_text("def data(rank, world, step):\n    raise KeyError('no such shard')\n")
    ns: dict[str, object] = {}
    exec(compile(user.read_text(), str(user), "exec"), ns)
    spec = {"data": ns["data"]}
    # the user's data() called by pgdoctor's fetch: the innermost frame is the user's
    assert not raised_by_pgdoctor(_raised(lambda: common.fetch(spec, 0, 1, 0, "cpu")))
    # torch given the user's objects (a loss on mismatched shapes) from pgdoctor's code: the entry's
    loss = torch.nn.MSELoss()
    assert not raised_by_pgdoctor(_raised(lambda: common.scalar(loss(torch.ones(2, 3), torch.ones(4, 5)))))
    # torch's C++ error on the user's batches (shapes that do not concatenate), though it
    # surfaces in pgdoctor's concat frame (a C function has none): the entry's
    assert not raised_by_pgdoctor(_raised(lambda: common.concat([torch.ones(2, 3), torch.ones(2, 4)])))
    # pgdoctor's own code raising (a record of the wrong type handed to its own helper)
    assert raised_by_pgdoctor(_raised(lambda: common.grads_of(None)))
    # the standard library misused by pgdoctor's code is pgdoctor's (json.dumps of an object)
    assert raised_by_pgdoctor(_raised(lambda: common.write_json(tmp_path / "x.json", {"a": object()})))
    # raised on purpose by pgdoctor: a verdict or the entry's error, never a bug
    assert not raised_by_pgdoctor(Verdict("DDP parameters without a gradient"))
    assert not raised_by_pgdoctor(EntryError("data() returned int"))
    assert not raised_by_pgdoctor(_raised(lambda: sys.exit(3)))
    assert traceback.extract_tb(_raised(lambda: common.grads_of(None)).__traceback__)
