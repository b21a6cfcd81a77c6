"""Desyncs and timeouts read from the watchdog's own records, and the collective checks of other layers.
Each case is written from the text at its source (named beside it): torch/csrc/distributed/c10d/
ProcessGroupNCCL.cpp's watchdog ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=...,
OpType=..., [NumelIn=..., NumelOut=...,] Timeout(ms)=...) ran for ... milliseconds before timing out.",
1.12-2.1 without a process-group id), torch/distributed/elastic/multiprocessing/api.py ("failed (exitcode:
-9) local_rank: 1 (pid: ...) of binary: ..."), TF collective_param_resolver_local.cc,
accelerate/utils/operations.py verify_operation (both wordings of its shape check), MPICH 4.x / Intel MPI
2021+ error stacks ("Fatal error in internal_Recv: Message truncated, error stack:")."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.api import diagnose_sources
from tests.helpers.diagnose_root import root_finding


def _root(text: str) -> tuple[Optional[str], dict[str, Any]]:
    real = [f for f in diagnose_sources([("job.log", text)]) if f.severity.value != "info"]
    return (real[0].code, dict(real[0].facts)) if real else (None, {})


def _wd(rank: int, seq: int, op: str = "ALLREDUCE", numel: Optional[int] = None, prefix: bool = True) -> str:
    """One watchdog record: 2.0-2.1 wording with the [rankN]: prefix and NumelIn, 1.12-1.13 without."""
    sizes = f", NumelIn={numel}, NumelOut={numel}" if numel is not None else ""
    head = f"[rank{rank}]:[E ProcessGroupNCCL.cpp:563] " if prefix else "[E ProcessGroupNCCL.cpp:737] "
    return (
        f"{head}[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
        f"OpType={op}"
        f"{sizes}, Timeout(ms)=600000) ran for 600049 milliseconds before timing out.\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        # 2.0-2.1: rank 0 stuck four works behind ranks 1-5 (sizes differ),
        # 2U1/Qwen-VL-Series-Finetune#17's shape
        _wd(0, 959, numel=544997376) + "".join(_wd(r, 963, numel=2560) for r in (1, 5, 4, 2)),
        # 1.12-1.13: no rank prefix, no sizes; two ranks stuck behind six
        "".join(_wd(r, 100, prefix=False) for r in (3, 7))
        + "".join(_wd(r, 104, prefix=False) for r in range(6)),
        # the later ranks wait in another collective than the stuck one
        _wd(2, 40, op="BROADCAST") + "".join(_wd(r, 42, op="ALLGATHER") for r in (0, 1, 3)),
    ],
)
def test_a_rank_stuck_behind_the_others_is_a_desync(text: str) -> None:
    code, facts = _root(text)
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts["kind"] == "watchdog_stranded"
    assert facts["seq"] == min(int(s) for s in facts["seq_by_rank"].values())


@pytest.mark.parametrize(
    "text",
    [
        # one work apart: an end-of-epoch hang where one rank left the loop first, as the corpus labels it
        _wd(0, 959) + "".join(_wd(r, 960) for r in (1, 2, 3)),
        # two ranks only: no majority says which one is off
        _wd(0, 959) + _wd(1, 963),
        # every rank at one SeqNum: a plain timeout
        "".join(_wd(r, 963) for r in range(4)),
        # the stuck ranks are as many as the others
        _wd(0, 959) + _wd(1, 959) + _wd(2, 963) + _wd(3, 963),
    ],
)
def test_timeouts_that_do_not_prove_a_desync_stay_timeouts(text: str) -> None:
    code, facts = _root(text)
    assert code == C.WATCHDOG_TIMEOUT.code
    assert facts.get("kind") != "watchdog_stranded"


_SIGKILL = (
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 12076) of "
    "binary: /root/anaconda3/envs/py38/bin/python\n"
)


def test_a_sigkill_after_a_waited_out_collective_is_the_timeouts_teardown() -> None:
    # torch 1.13 wording, ColossalAI#2531's shape: rank 0's ALLGATHER waited 30 minutes, then local rank 1 -9
    text = (
        "[E ProcessGroupNCCL.cpp:737] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=3424, "
        "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1803741 milliseconds before timing out.\n"
        "[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid "
        "this "
        "inconsistency, we are taking the entire process down.\n" + _SIGKILL
    )
    code, facts = _root(text)
    assert code == C.WATCHDOG_TIMEOUT.code
    assert facts["seq"] == 3424 and facts["exitcode"] == -9


def test_a_sigkill_with_no_waited_out_collective_stays_the_kill() -> None:
    assert _root(_SIGKILL)[0] == C.HOST_OOM_KILLED.code
    # printed before the timeout: the launcher's record of another node's stream, not this rank's teardown
    late = (
        _SIGKILL + "[E ProcessGroupNCCL.cpp:737] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=3, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1803741 milliseconds before "
        "timing out.\n"
    )
    assert _root(late)[0] == C.HOST_OOM_KILLED.code


@pytest.mark.parametrize(
    "text",
    [
        # accelerate 0.21+ verify_operation
        "accelerate.utils.operations.DistributedOperationException: Cannot apply desired operation due to "
        "shape "
        "mismatches. All shapes across devices must be valid.\n\nOperation: "
        "`accelerate.utils.operations.gather`\n"
        "Input shapes:\n  - Process 0: [1, 5]\n  - Process 1: [1, 2, 5]\n  - Process 2: [1, 5]\n",
        # the older wording, as huggingface/accelerate#2643 prints it (gather_for_metrics)
        "accelerate.utils.operations.DistributedOperationException: Impossible to apply the desired "
        "operation due "
        "to inadequate shapes. All shapes on the devices must be valid.\n",
    ],
)
def test_accelerate_shape_check_is_a_mismatch(text: str) -> None:
    code, facts = _root(text)
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts["kind"] == "accelerate_shape_check"


@pytest.mark.parametrize(
    ("text", "op"),
    [
        # Intel MPI 2021 (MPICH 4 internals), openmc-dev/openmc#2649's shape
        (
            " Creating state point statepoint.10.h5...\n"
            "Abort(536998158) on node 0 (rank 0 in comm 0): Fatal error in internal_Recv: Message truncated, "
            "error stack:\ninternal_Recv(15956): MPI_Recv(buf=0x152ba202d010, count=25706, "
            "dtype=USER<struct>, 1, "
            "1, MPI_COMM_WORLD, status=0x1) failed\n(unknown)(): Message truncated\n"
            "[proxy:0:0@node1] pmi cmd from fd 6: cmd=abort exitcode=536998158\n",
            "Recv",
        ),
        # MPICH 4.1 collective entry point
        (
            "Abort(403275278) on node 3 (rank 3 in comm 0): Fatal error in internal_Allreduce: Message "
            "truncated, "
            "error stack:\ninternal_Allreduce(4224): MPI_Allreduce(sbuf=0x7ffd, rbuf=0x7ffe, count=8, "
            "MPI_INT, "
            "MPI_SUM, MPI_COMM_WORLD) failed\n",
            "Allreduce",
        ),
        # MPICH 3 / Intel MPI 2019: the PMPI_ entry point (covered before, kept beside its successor)
        (
            "Fatal error in PMPI_Bcast: Message truncated, error stack:\nPMPI_Bcast(1600)........: "
            "MPI_Bcast(buf=0x7f, count=4, MPI_INT, root=0, MPI_COMM_WORLD) failed\n",
            "Bcast",
        ),
    ],
)
def test_mpi_truncated_receive_in_every_entry_point_naming(text: str, op: str) -> None:
    code, facts = _root(text)
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts["kind"] == "mpi_truncate" and facts["op"] == op


@pytest.mark.parametrize(
    "text",
    [
        "[BUG]: At starting everything is good, but suddenly crash, not OOM, error log is : "
        "/aten/src/ATen/native/"
        "cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [545,0,0], thread: [96,0,0] Assertion `src",
        "Training crashed on GPU 3 without an OOM error: RuntimeError: an illegal value failed the device "
        "check",
        "ERROR: the job failed, no OOM on any cuda device; see the rank 2 traceback",
    ],
)
def test_a_report_that_rules_oom_out_is_not_an_oom(text: str) -> None:
    assert _root(text)[0] != C.CUDA_OOM.code


def test_an_oom_stays_an_oom() -> None:
    assert _root("RuntimeError: CUDA error: out of memory\n")[0] == C.CUDA_OOM.code
    assert _root("ERROR: training failed: GPU OOM on device 0\n")[0] == C.CUDA_OOM.code


@pytest.mark.parametrize(
    "text",
    [
        # TF 2.x collective_param_resolver_local.cc, logged by OP_REQUIRES
        # (tensorflow/tensorflow#34156's shape)
        "2019-11-11 11:45:07.182077: W tensorflow/core/framework/op_kernel.cc:1655] OP_REQUIRES failed at "
        "collective_ops.cc:253 : Invalid argument: Shape mismatch in the collective instance 106. Op at "
        "device "
        "/job:worker/replica:0/task:1/device:CPU:0 expected shape [49] but another member in the group "
        "expected "
        "shape [64]. This is likely due to different input shapes at different members of the collective "
        "op.\n",
        # raised to Python under MirroredStrategy
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Shape mismatch in the collective "
        "instance "
        "100. Op at device /job:localhost/replica:0/task:0/device:GPU:1 expected shape [416202] but another "
        "member in the group expected shape [1630346]. This is likely due to different input shapes at "
        "different "
        "members of the collective op. [Op:CollectiveReduceV2]\n",
    ],
)
def test_tensorflow_instance_shape_mismatch(text: str) -> None:
    code, facts = _root(text)
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts["kind"] == "tf_instance_shape" and facts["shape"] != facts["other_shape"]


def test_seqnums_too_far_apart_may_be_two_groups() -> None:
    # torch 1.x prints no group id: a TP group's SeqNum 5000 and a DP group's 300 are not one sequence
    code, facts = _root(_wd(0, 300) + "".join(_wd(r, 5000) for r in (1, 2, 3)))
    assert code == C.WATCHDOG_TIMEOUT.code and facts.get("kind") != "watchdog_stranded"


def _pg(rank: int, seq: int, pg: int = 0) -> str:
    """torch 2.2+ names the group: "[PG 0 Rank 1] Watchdog caught collective operation timeout: ..."."""
    return (
        f"[rank{rank}]:[E ProcessGroupNCCL.cpp:607] [PG {pg} Rank {rank}] Watchdog caught collective "
        f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=2560, NumelOut=2560, "
        "Timeout(ms)=600000) ran for 600085 milliseconds before timing out.\n"
    )


def test_a_named_group_is_read_alike() -> None:
    code, facts = _root(_pg(3, 20) + "".join(_pg(r, 25) for r in (0, 1, 2)))
    assert code == C.COLLECTIVE_MISMATCH.code
    assert facts["kind"] == "watchdog_stranded" and facts["pg_id"] == 0 and facts["suspect_ranks"] == [3]


def test_two_named_groups_are_not_compared() -> None:
    code, facts = _root(_pg(3, 20, pg=1) + "".join(_pg(r, 25, pg=0) for r in (0, 1, 2)))
    assert code == C.WATCHDOG_TIMEOUT.code and facts.get("kind") != "watchdog_stranded"


@pytest.mark.parametrize(
    "line",
    [
        "[Bug] bash scripts/finetune/finetune_hunyuan.sh operation timeout: WorkNCCL at step 4",
        "WorkNCCL timed out after 30 minutes on 16 GPUs",
        "Watchdog timeout WorkHCCL on rank 3",
    ],
)
def test_a_work_timeout_told_in_words_is_a_collective_timeout(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.code == "RUN151", (line, root)


@pytest.mark.parametrize(
    "line",
    [
        # the record's own Timeout(ms) field names no timeout that happened
        "[rank0]:[I ProcessGroupNCCL.cpp:2000] WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) done",
        "Set the WorkNCCL timeout with init_process_group(timeout=...)",
    ],
)
def test_a_work_named_beside_a_timeout_setting_is_no_failure(line: str) -> None:
    assert root_finding(line + "\n") is None, line
