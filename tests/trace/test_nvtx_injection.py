"""NVTX for real: a small injection library (tests/helpers/nvtx_inject/record.c), compiled here with gcc
against the NVTX v3 headers of the nvidia-nvtx-cu12 wheel, is loaded by the NVTX runtime inside
the `nvtx` package through NVTX_INJECTION64_PATH / InitializeInjectionNvtx2 and records every
push and pop with its domain. The tests assert the exact ranges each lab strategy emits on each
rank, as Nsight Systems would receive them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pgdoctor.lab.launch import launch
from pgdoctor.lab.spec import LabSpec

SOURCE = Path(__file__).resolve().parents[1] / "helpers" / "nvtx_inject" / "record.c"


def _nvtx_include() -> Path | None:
    try:
        import nvidia.nvtx  # type: ignore[import-not-found]
    except ImportError:
        return None
    for base in nvidia.nvtx.__path__:
        inc = Path(base) / "include"
        if (inc / "nvtx3" / "nvToolsExt.h").exists():
            return inc
    return None


@pytest.fixture(scope="module")
def injection(tmp_path_factory) -> Path:
    inc = _nvtx_include()
    if inc is None:
        pytest.skip("NVTX headers not installed (pip install nvidia-nvtx-cu12)")
    if shutil.which("gcc") is None:
        pytest.skip("gcc not on PATH")
    lib = tmp_path_factory.mktemp("nvtx") / "librecord.so"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-I{inc}", "-o", str(lib), str(SOURCE)],
        check=True,
        timeout=120,
    )
    return lib


def _records(path: Path) -> dict[str, list[tuple[str, ...]]]:
    """rank -> [("push", domain, message) | ("pop", domain)] in order."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for line in path.read_text().splitlines():
        rank, _pid, _tid, kind, *rest = line.split("\t")
        out.setdefault(rank, []).append((kind, *rest))
    return out


def _tree(events: list[tuple[str, ...]]) -> list:
    """Nested [message, [children]] from push/pop; asserts every push is popped."""
    root: list = []
    stack = [root]
    for ev in events:
        if ev[0] == "push":
            node: list = [ev[2], []]
            stack[-1].append(node)
            stack.append(node[1])
        else:
            assert len(stack) > 1, "pop without push"
            stack.pop()
    assert len(stack) == 1, "ranges left open"
    return root


def test_a_range_reaches_the_tool_with_domain_and_message(injection, tmp_path) -> None:
    out = tmp_path / "rec.txt"
    code = (
        "import pgdoctor\nwith pgdoctor.step(4):\n"
        "    with pgdoctor.range('comm.all_reduce', bucket=1, bytes=64): pass\n"
    )
    env = dict(os.environ, NVTX_INJECTION64_PATH=str(injection), NVTX_RECORD_PATH=str(out), RANK="5")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert _records(out) == {
        "5": [
            ("push", "pgdoctor", "step n=4"),
            ("push", "pgdoctor", "comm.all_reduce bucket=1 bytes=64"),
            ("pop", "pgdoctor"),
            ("pop", "pgdoctor"),
        ]
    }


def _run(injection: Path, tmp_path: Path, strategy: str, nproc: int, **kw) -> tuple[dict, list[dict]]:
    out = tmp_path / "rec.txt"
    spec = LabSpec("none", strategy, nproc, str(tmp_path / "run"), steps=2, **kw)
    run = launch(
        spec, timeout_s=90, extra_env={"NVTX_INJECTION64_PATH": str(injection), "NVTX_RECORD_PATH": str(out)}
    )
    assert all(o.ok for o in run.outcomes), [o.stderr[-2000:] for o in run.outcomes]
    recs = _records(out)
    assert sorted(recs) == [str(r) for r in range(nproc)]
    assert all(ev[1] == "pgdoctor" for evs in recs.values() for ev in evs)
    return {int(r): _tree(evs) for r, evs in recs.items()}, list(run.results)


def _leaf(msg: str) -> list:
    return [msg, []]


@pytest.mark.slow
def test_ddp_ranges_on_every_rank(injection, tmp_path) -> None:
    trees, results = _run(injection, tmp_path, "ddp", 2)
    param_bytes = results[0]["setup"]["param_bytes"]
    for rank, tree in trees.items():
        assert [s[0] for s in tree] == ["step n=0", "step n=1"], rank
        for step in tree:
            names = [c[0] for c in step[1]]
            assert names == ["data", "fwd", "bwd", "optim"], (rank, names)
            assert step[1][0] == _leaf("data") and step[1][1] == _leaf("fwd") and step[1][3] == _leaf("optim")
            comm = step[1][2][1]
            assert comm and all(c[1] == [] and c[0].startswith("comm.all_reduce bucket=") for c in comm)
            fields = [dict(kv.split("=") for kv in c[0].split()[1:]) for c in comm]
            assert sorted(int(f["bucket"]) for f in fields) == list(range(len(comm)))
            assert sum(int(f["bytes"]) for f in fields) == param_bytes  # every gradient, once
        # DDP rebuilds its buckets after the first step (bucket_cap_mb 0.5): several buckets then.
        assert len(tree[1][1][2][1]) >= 2


def _pp_expected(stage: int, stages: int, ops: str) -> list:
    """ops like 'F0 F1 B0 ...' -> the expected children of one pp step."""
    children = [_leaf("data")]
    for op in ops.split():
        kind, mb = op[0], int(op[1:])
        inner = []
        if kind == "F":
            if stage > 0:
                inner.append(_leaf(f"pp.recv peer={stage - 1} mb={mb}"))
            if stage < stages - 1:
                inner.append(_leaf(f"pp.send peer={stage + 1} mb={mb}"))
            children.append([f"pp.fwd stage={stage} mb={mb}", inner])
        else:
            if stage < stages - 1:
                inner.append(_leaf(f"pp.recv peer={stage + 1} mb={mb}"))
            if stage > 0:
                inner.append(_leaf(f"pp.send peer={stage - 1} mb={mb}"))
            children.append([f"pp.bwd stage={stage} mb={mb}", inner])
    return [*children, _leaf("optim")]


@pytest.mark.slow
def test_pp_1f1b_ranges_on_three_stages(injection, tmp_path) -> None:
    trees, _ = _run(injection, tmp_path, "pp", 3, schedule="1f1b", microbatches=4)
    orders = {0: "F0 F1 F2 B0 F3 B1 B2 B3", 1: "F0 F1 B0 F2 B1 F3 B2 B3", 2: "F0 B0 F1 B1 F2 B2 F3 B3"}
    for stage, tree in trees.items():
        assert [s[0] for s in tree] == ["step n=0", "step n=1"]
        for step in tree:
            assert step[1] == _pp_expected(stage, 3, orders[stage]), stage


@pytest.mark.slow
def test_pp_gpipe_ranges_on_two_stages(injection, tmp_path) -> None:
    trees, _ = _run(injection, tmp_path, "pp", 2, schedule="gpipe", microbatches=3)
    for stage, tree in trees.items():
        for step in tree:
            assert step[1] == _pp_expected(stage, 2, "F0 F1 F2 B0 B1 B2"), stage


@pytest.mark.slow
def test_tp_ranges_on_every_shard(injection, tmp_path) -> None:
    trees, _ = _run(injection, tmp_path, "tp", 2)
    for rank, tree in trees.items():
        for n, step in enumerate(tree):
            assert step == [
                f"step n={n}",
                [
                    _leaf("data"),
                    ["fwd", [_leaf("tp.all_reduce layer=0"), _leaf("tp.all_reduce layer=1")]],
                    # The first block's input is data that needs no gradient, so only the second
                    # block's input gradient is all-reduced (Megatron's f in backward).
                    ["bwd", [_leaf("tp.all_reduce layer=1")]],
                    _leaf("optim"),
                ],
            ], rank
