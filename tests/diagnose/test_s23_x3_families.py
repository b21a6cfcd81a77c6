"""x3 of 2026-12-07 (late, second round): collective timeouts and collective mismatches in wordings that real
threads pasted and the rules did not read yet, each read as its family (the program that prints it, across
versions and the ways a paste cuts it). The variants below are not in any thread unless a URL says so.

- Horovod's stall inspector (horovod/common/operations.cc up to 0.19, stall_inspector.cc 0.20+: "One or more
  tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for
  remainder of ranks for more than 60 seconds. ..."), pasted cut: a thread's title stops after "reduced,
  gathered", a note cuts the head to "submitted to be reduced..." over "waiting for remainder of ranks for
  more than 60 seconds.", a copy loses a space ("bysubset"): RUN201 like the whole report (rules/mismatch.py).
  The configuration of the inspector (HOROVOD_STALL_CHECK_TIME_SECONDS) and prose about tensors being reduced
  stay silent.
- NCCL 2.4-2.7's device-side check (init.cc ncclCommGetAsyncError: "Mismatched collective detected, please
  check your collective calls at and around rank %d", "Your program may be hanging, this may be caused by a
  collective mismatch around rank %d"), cut before the rank as a thread's title: RUN201
  (rules/nccl_warn_kind.py); the rank, when shown, is still the suspect.
- The watchdog's record cut before its head with the unit retyped ("WorkNCCL(OpType=ALLREDUCE, SeqNum=458)
  ran for 1800600 ms before timing out."): RUN151 like "... milliseconds" (rules/timeouts.py).
- A title that names the wrapper for its collectives ("DDP hanging and timing out on H100s", "FSDP timeout
  during backward"): RUN151 (vocabulary's title words); a DDP timeout in init_process_group stays the
  start-up's, a setting or a question stays silent.
- torch.distributed.pipelining's check of a stage's exchange against its schedule's metadata (_utils.py
  validate_tensors_metadata, 2.4+: "PipeliningShapeError: Stage 1 forward inputs: value 0 has a shape
  mismatch: expected ... actual ...", its dtype, stride and count forms): RUN513 (rules/model_mismatch.py);
  the words without the stage's record, and shape inference's verbose lines, stay silent.
- A title's progressive form of a collective timeout ("NCCL allreduce is timing out"): RUN151 like "timed
  out" (rules/vocabulary.py's title words); denied, asked or a setting's aside stays silent, and a server's
  request timing out is not a collective's.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (log, code, category)
FAILURES = [
    # Horovod's stall inspector, cut
    # https://github.com/horovod/horovod/issues/403 (its title)
    ("WARNING: One or more tensors were submitted to be reduced, gathered", "RUN201", "collective_mismatch"),
    # https://github.com/horovod/horovod/issues/100 (its title)
    (
        "subset of ranks and are waiting for remainder of ranks for more than 60 seconds, ... which will "
        "cause deadlock",
        "RUN201",
        "collective_mismatch",
    ),
    (
        "[2021-02-02 21:19:07.345988: W horovod/common/stall_inspector.cc:105] One or more tensors were "
        "submitted to be reduced...",
        "RUN201",
        "collective_mismatch",
    ),
    ("  waiting for remainder of ranks for more than 600 seconds.", "RUN201", "collective_mismatch"),
    (
        "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted bysubset of "
        "ranks and are waiting for remainder of ranks for more than 60 seconds. This mayindicate that "
        "different ranks",
        "RUN201",
        "collective_mismatch",
    ),
    ("One or more tensors were submitted to be reduced\u2026", "RUN201", "collective_mismatch"),
    # NCCL's device-side mismatch check, cut before the rank
    # https://github.com/NVIDIA/nccl/issues/296 (its title)
    ("init.cc:1247 NCCL WARN Mismatched collective detected", "RUN201", "collective_mismatch"),
    (
        "node7:4410:4470 [3] init.cc:883 NCCL WARN Mismatched collective detected",
        "RUN201",
        "collective_mismatch",
    ),
    (
        "node7:4410:4470 [3] init.cc:1016 NCCL WARN Your program may be hanging, this may be caused by a "
        "collective mismatch",
        "RUN201",
        "collective_mismatch",
    ),
    # a collective timing out, in a title
    # https://github.com/NVIDIA/nccl/issues/1193 (its title)
    ("NCCL allreduce is timing out", "RUN151", "collective_timeout"),
    ("Gloo barrier keeps timing out on 2 nodes", "RUN151", "collective_timeout"),
    ("all_gather timing out with FSDP on 16 GPUs", "RUN151", "collective_timeout"),
    ("[Bug] reduce_scatter timing out at step 1200", "RUN151", "collective_timeout"),
    # the wrapper named for its collectives, in a title
    # https://github.com/huggingface/accelerate/issues/3380 (its title)
    ("DDP hanging and timing out on H100s, not other hardware", "RUN151", "collective_timeout"),
    ("DDP timeout after 30 minutes", "RUN151", "collective_timeout"),
    ("FSDP timeout during backward", "RUN151", "collective_timeout"),
    ("FSDP2 all-gather timing out", "RUN151", "collective_timeout"),
    # the watchdog's record cut before its head, the unit retyped
    # https://github.com/InternRobotics/AnySplat/issues/61
    (
        "WorkNCCL(OpType=ALLREDUCE, SeqNum=458) ran for 1800600 ms before timing out.",
        "RUN151",
        "collective_timeout",
    ),
    (
        "WorkNCCL(SeqNum=12, OpType=BROADCAST, Timeout(ms)=600000) ran for 600042ms",
        "RUN151",
        "collective_timeout",
    ),
    (
        "WorkHCCL(SeqNum=3, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800311 ms",
        "RUN151",
        "collective_timeout",
    ),  # torch.distributed.pipelining's metadata check (torch/distributed/pipelining/_utils.py, read at its
    # source; no thread held it)
    (
        "torch.distributed.pipelining._utils.PipeliningShapeError: Stage 1 forward inputs: value 0 has a "
        "shape mismatch: expected torch.Size([2, 16, 64]) actual torch.Size([2, 15, 64])",
        "RUN513",
        "collective_mismatch",
    ),
    (
        "PipeliningShapeError: Stage 0 forward outputs: Number of values (2) does not match expected "
        "number (1)",
        "RUN513",
        "collective_mismatch",
    ),
    (
        "[rank2]: PipeliningShapeError: Stage 2 forward inputs: value 0 has a dtype mismatch: expected "
        "torch.float32 actual torch.bfloat16",
        "RUN513",
        "collective_mismatch",
    ),
]

# Lines that share the families' words and must stay silent.
SILENT = [
    # the stall inspector's settings and prose
    "HOROVOD_STALL_CHECK_TIME_SECONDS=60 HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=600",
    "Tensors submitted to be reduced are fused into 64 MB buffers",
    "waiting for remainder of the batch",
    "Horovod stall check disabled",
    # NCCL's mismatch words that are no report of one
    "node1:1234:1300 [0] NCCL INFO Mismatched collective",
    "NCCL_CHECK_POINTERS=1 enables the argument checks",
    # timing out, denied, asked, a setting or another service
    "NCCL allreduce is not timing out anymore",
    "How to stop the allreduce from timing out",
    "allreduce timing out after 30 minutes, increasing the timeout does not help",
    "[I ProcessGroupNCCL.cpp:612] NCCL_BLOCKING_WAIT is not set, the NCCL allreduce will be timing out by "
    "the watchdog",
    "Server request timing out on port 8000",
    "HTTP requests timing out behind the load balancer",
    # the wrappers' settings and questions
    "DDP timeout=1800 setting",
    "How to set DDP timeout",
    "DDP no timeout errors anymore",
    "FSDP timeout: 1800 s",
    # the pipeline check's words without its record
    "value 0 has a shape mismatch: expected 3 actual 4",
    "Stage 1 forward inputs: 2 values",
    "[rank0]:V0731 00:56:29.326000 132351 torch/distributed/pipelining/stage.py:1392] Shape inference: "
    "stage 0 inputs (tensor(..., device='meta', size=(1, 1024), dtype=torch.int64),)",
]

# Lines whose cause is another class's and must stay so with the rows above in place.
OTHERS = [
    ("DDP timeout in init_process_group", "rendezvous"),
]


@pytest.mark.parametrize(("log", "code", "category"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str, category: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == category, (log, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize(("line", "category"), OTHERS)
def test_other_classes_keep_their_lines(line: str, category: str) -> None:
    root = root_finding(line + "\n")
    assert (root.category if root else None) == category, (line, root)


_HVD_CUT = (
    "W stall_inspector.cc:138 One or more tensors were submitted to be reduced...\n"
    "  waiting for remainder of ranks for more than 60 seconds.\n"
    "  Missing ranks:\n"
    "    0: [DistributedSGD_Allreduce/HorovodAllreduce_grads_0, "
    "DistributedSGD_Allreduce/HorovodAllreduce_grads_1_0]\n"
)


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_cut_stall_report_reads_its_table(prefix: str) -> None:
    check_root(prefixed(prefix, _HVD_CUT), "RUN201", {"kind": "horovod_stall"})


def test_cut_stall_report_names_the_missing_rank() -> None:
    check_root(_HVD_CUT, "RUN201", {"kind": "horovod_stall", "missing_ranks": [0]})


def test_cut_nccl_mismatch_comes_before_the_watchdog() -> None:
    # the mismatch NCCL saw is the cause of the timeout the watchdog reports after it
    log = (
        "node1:1234:1300 [0] init.cc:1247 NCCL WARN Mismatched collective detected\n"
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
        "timing out.\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN201" and "suspect_rank" not in root.facts, root


def test_nccl_mismatch_with_its_rank_keeps_the_suspect() -> None:
    log = (
        "node1:1234:1300 [0] init.cc:1247 NCCL WARN Mismatched collective detected, please check your "
        "collective calls at and around rank 39. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to "
        "see the collective logs\n"
    )
    check_root(log, "RUN201", {"suspect_rank": 39})
