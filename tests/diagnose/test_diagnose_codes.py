"""Every code of diagnose's logs and dumps (RUN1xx-RUN3xx, RUN5xx on; RUN4xx are the lab's and the
profiler's, tested with them) fires as the root cause on its bad fixture and not at all on its good one:
logs (bad.log/good.log) through diagnose_paths, flight-recorder tars (bad.tar/good.tar) through
--flight-recorder."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CODES
from pgdoctor.diagnose.api import diagnose_paths
from tests.helpers.paths import FIXTURES

load_all()
CODE_DIR = FIXTURES / "codes"
RUN_CODES = sorted(c for c in CODES if c.startswith("RUN") and not 400 <= int(c[3:]) < 500)


def _codes(kind: str, code: str, tmp_path: Path) -> list[str]:
    log = CODE_DIR / code / f"{kind}.log"
    if log.exists():
        return [f.code for f in diagnose_paths([str(log)]).findings]
    tar = CODE_DIR / code / f"{kind}.tar"
    dest = tmp_path / kind
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    return [f.code for f in diagnose_paths([], [str(dest)]).findings]


@pytest.mark.parametrize("code", RUN_CODES)
def test_bad_fixture_gives_the_code_as_root_cause(code: str, tmp_path: Path) -> None:
    found = _codes("bad", code, tmp_path)
    assert found and found[0] == code, f"{code}: bad fixture gave {found}"


@pytest.mark.parametrize("code", RUN_CODES)
def test_good_fixture_does_not_give_the_code(code: str, tmp_path: Path) -> None:
    found = _codes("good", code, tmp_path)
    assert code not in found, f"{code}: good fixture gave {found}"


def test_categories_are_the_failure_vocabulary() -> None:
    vocab = {
        "cuda_oom",
        "host_oom",
        "process_crash",
        "collective_timeout",
        "nccl_network",
        "nccl_usage",
        "collective_mismatch",
        "rendezvous",
        "gpu_hardware",
        "driver_env",
        "imbalance",
    }
    assert {CODES[c].category for c in RUN_CODES} <= vocab
