"""The patterns rewritten to search in linear time (benchmarks/bench_pattern_scaling.py) still read
their lines as before: real corpus lines (and the comments' shapes where the corpora have none) give
the same groups; a long run of the characters a pattern starts with is no match."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from pgdoctor.diagnose.rules import (
    accel_env,
    comm_texts,
    host_oom,
    loader,
    mismatch,
    mpi_bootstrap,
    nccl_errors,
    net_texts,
    peer_waits,
    process_crash,
    store_errors,
    timeouts,
    userspace_oom,
)
from pgdoctor.diagnose.text import normalize

CASES: list[tuple[Any, str, dict[str, str]]] = [
    (
        host_oom._INVOKED,
        "[2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), order=0",
        {"comm": "python"},
    ),
    (
        userspace_oom._USERSPACE,
        "slurmstepd-n1.scope: A process of this unit has been killed by the OOM killer.",
        {"sdunit": "slurmstepd-n1.scope"},
    ),
    (
        nccl_errors._TORCH_TAIL,
        "what():  NCCL error in: /opt/conda/conda-bld/pytorch_1614378063927/work/torch/lib/c10d/../c10d/"
        "NCCLUtils.hpp:155, unhandled cuda error, NCCL version 2.7.8",
        {
            "where": "/opt/conda/conda-bld/pytorch_1614378063927/work/torch/lib/c10d/../c10d/"
            "NCCLUtils.hpp:155",
            "err": "unhandled cuda error",
            "ver": "2.7.8",
        },
    ),
    (
        comm_texts._NVSHMEM,
        "/sgl-workspace/nvshmem/src/host/init/init.cu:993: non-zero status: 7 bootstrap failed",
        {
            "file": "/sgl-workspace/nvshmem/src/host/init/init.cu",
            "line": "993",
            "st": "7",
            "msg": "bootstrap failed",
        },
    ),
    (
        loader._UNDEFINED,
        "ImportError: /root/.local/conda/envs/yolov10/lib/python3.9/site-packages/torch/lib/"
        "libtorch_cuda.so: undefined symbol: ncclCommRegister",
        {
            "1": "/root/.local/conda/envs/yolov10/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so",
            "2": "ncclCommRegister",
        },
    ),
    (  # the bare name after a character that is neither a path's nor a name's
        loader._UNDEFINED,
        "OSError: (libc10_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi)",
        {"1": "libc10_cuda.so", "2": "_ZN3c104cuda9SetDeviceEi)"},
    ),
    (
        accel_env._NCCL_SYMBOL_VERSION,
        "python: /usr/lib/x86_64-linux-gnu/libnccl.so.2: version `NCCL_2.12' not found "
        "(required by /opt/torch/lib/libtorch_cuda.so)",
        {
            "lib": "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
            "ver": "NCCL_2.12",
            "by": "/opt/torch/lib/libtorch_cuda.so",
        },
    ),
    (mismatch._HVD_TENSOR, "HorovodBroadcast_conv_layer2_Conv_biases_0 [missing ranks: 0]", {"1": "0"}),
    (
        process_crash._KERNEL_FAULT,
        "Mar 24 11:11:26 cn110 kernel: python[15677]: segfault at 1378 ip 00007fff859dbeff "
        "sp 00007fff3b60ce60 error 4 in libcuda.so.418.67[7fff858c5000+dec000]",
        {"comm": "python", "pid": "15677", "segv": "segfault", "lib": "libcuda.so.418.67"},
    ),
    (
        mpi_bootstrap._OMPI_STEP,
        "PMPI_Comm_dup(176)..................: MPI_Comm_dup(MPI_COMM_WORLD, new_comm=0x7fffd1593bd0) failed",
        {"step": "0x7fffd1593bd0)"},
    ),
    (mpi_bootstrap._OMPI_STEP, "  (: ompi_rte_init failed", {"step": "ompi_rte_init"}),
    (
        peer_waits._RESULT_MID,
        "[rank3]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting",
        {"remote": "ncclRemoteError: A call failed possibly due to a network error"},
    ),
    (
        net_texts._WRAPPED_SYS,
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:400, "
        "unhandled system error",
        {},
    ),
    (
        store_errors._STORE_WAIT,
        "terminate called after throwing an instance of 'gloo::IoException' what():  "
        "[/opt/gloo/gloo/rendezvous/file_store.cc:130] Wait timeout for key(s): [a]",
        {"src": "[/opt/gloo/gloo/rendezvous/file_store.cc:130] ", "keys": "[a]"},
    ),
    (
        timeouts._WAIT,
        "RuntimeError: [../torch/csrc/distributed/c10d/Work.cpp:84] Operation timed out!",
        {"where": "../torch/csrc/distributed/c10d/Work.cpp:84"},
    ),
]


def _groups(m: Any) -> dict[str, str]:
    named = {k: v for k, v in m.groupdict().items() if v is not None}
    return named or {str(i): g for i, g in enumerate(m.groups(), 1) if g is not None}


@pytest.mark.parametrize(("pattern", "line", "groups"), CASES, ids=[c[0].pattern[:40] for c in CASES])
def test_rewritten_pattern_reads_its_line(pattern: Any, line: str, groups: dict[str, str]) -> None:
    m = pattern.search(line)
    assert m is not None
    assert _groups(m) == groups


@pytest.mark.parametrize(("pattern", "line", "groups"), CASES, ids=[c[0].pattern[:40] for c in CASES])
def test_rewritten_pattern_reads_its_line_after_a_long_run(
    pattern: Any, line: str, groups: dict[str, str]
) -> None:
    # the line after a separator and a base64-like run glued to it: the same groups
    m = pattern.search("=" * 3000 + " " + "aB9+/:" * 500 + " " + line)
    assert m is not None
    assert _groups(m) == groups


def test_lone_prefix_reads_prefixes_and_rejects_a_colon_chain() -> None:
    assert normalize._LONE_PREFIX.match("worker-5: [rank3]:")
    assert normalize._LONE_PREFIX.match("(RayTrainWorker pid=1234, ip=10.0.0.1) [rank0]: ")
    assert normalize._LONE_PREFIX.match("(pid=7):")
    assert not normalize._LONE_PREFIX.match("[rank0]: LD_LIBRARY_PATH=/a:/b x")
    # 40 colons and no prefix at the end: the old pattern tried 2**40 cuttings of it
    assert not normalize._LONE_PREFIX.match("[rank0]: PATH=" + "/opt/x/bin:" * 40 + "/usr/bin")


# The search _bar_unglued replaced: a bar, anything, a non-blank, then the shell's word at the end. The
# reference for the rewrite, which finds the word from the end instead (one pass, not one per bar).
_OLD_BAR_THEN_WORD = re.compile(
    r"(?:\d%\||\d+/\d+ \[[=>.]*\]|\d+/\d+ \[[\d:]+<).*?\S\s*(?=(?:"
    + "|".join(normalize._SHELL_WORDS)
    + r")(?: \(core dumped\))?\s*$)"
)


def _old_bar_unglued(p: str) -> list[str]:
    if not p.rstrip().endswith(normalize._SHELL_ENDS):
        return [p]
    m = _OLD_BAR_THEN_WORD.search(p)
    return [p] if m is None else [p[: m.end()].rstrip(), p[m.end() :].strip()]


def test_a_bar_glued_to_the_shells_word_is_cut_as_the_search_cut_it() -> None:
    pieces = [
        "50%|",
        "1/2 [==>.]",
        "3/9 [0:01<",
        " ",
        "x",
        "█",
        "Killed",
        "Segmentation fault",
        " (core dumped)",
    ]
    pieces += ["(core dumped)", "Aborted", "|", "1", "\t", "loss=3.2", "Bus error", "["]
    rnd = random.Random(7)
    for _ in range(20000):
        p = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 7)))
        assert normalize._bar_unglued(p) == _old_bar_unglued(p), p
    real = "Epoch 1:  29%|█▍  | 9413/32393 [3:28:18<8:28:33,  1.33s/it, loss=3.23]Terminated"
    assert normalize._bar_unglued(real) == [real[: -len("Terminated")], "Terminated"]
