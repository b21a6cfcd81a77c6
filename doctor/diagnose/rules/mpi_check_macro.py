"""The MPICHECK macro of programs that drive NCCL with MPI (RUN602, nccl_usage).

Format, read at the source: NCCL's MPI example in its documentation and every program that copied its macro
(TensorRT-LLM cpp/tensorrt_llm/common/mpiUtils.h TLLM_MPI_CHECK, under TllmException "[TensorRT-LLM][ERROR]
Assertion failed: Failed: MPI error .../mpiUtils.cpp:211 '6'"; vLLM's custom all-reduce test, nccl-based
benchmarks): printf("Failed: MPI error %s:%d '%d'\\n", __FILE__, __LINE__, e), then exit(EXIT_FAILURE). The
number is the MPI error class; the first six are numbered alike in MPICH and Open MPI and all say the call was
given an invalid argument: 1 MPI_ERR_BUFFER, 2 MPI_ERR_COUNT, 3 MPI_ERR_TYPE, 4 MPI_ERR_TAG, 5 MPI_ERR_COMM,
6 MPI_ERR_RANK - most often a launch with fewer ranks than the program's layout addresses. Read here: those
six. Silent: the higher classes (their numbers differ between MPICH and Open MPI: 15 is MPI_ERR_TRUNCATE in
one and MPI_ERR_OTHER in the other), and the macro's sibling lines for CUDA ("Failed: Cuda error ...") and
NCCL ("Failed, NCCL error ...", nccl_errors' row).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CLASSES = {
    1: "MPI_ERR_BUFFER",
    2: "MPI_ERR_COUNT",
    3: "MPI_ERR_TYPE",
    4: "MPI_ERR_TAG",
    5: "MPI_ERR_COMM",
    6: "MPI_ERR_RANK",
}
_MACRO = lazy_re.compile(r"Failed: MPI error (?P<where>\S+:\d+) '(?P<n>\d{1,3})'")


def _mpi_check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n"))
    if n not in _CLASSES:
        return []  # a class whose number differs between MPI libraries: said, not read
    where = m.group("where").rsplit("/", 1)[-1]
    facts = {"mpi_error_class": n, "mpi_error": _CLASSES[n], "source": where}
    if "TensorRT-LLM" in hit.text or "tensorrt_llm" in hit.text:
        facts["library"] = "tensorrt_llm"
    return [
        row.event(
            hit,
            f"{hit.who()}: an MPI call at {where} failed with {_CLASSES[n]} ({n}): it was given an invalid "
            "rank, communicator or argument - most often the job was launched with fewer MPI ranks than "
            "the program's (engine's) parallel layout needs",
            facts,
            dedupe=(row.code, where, n),
        )
    ]


SIGNATURES = (
    Signature(
        "mpicheck macro",
        _MACRO,
        _mpi_check,
        C.MPI_CALL_INVALID_ARGUMENT.code,
        anchors=(b"Failed: MPI error ",),
        words=("failed: mpi error ",),
        examples=(
            "  what():  [TensorRT-LLM][ERROR] Assertion failed: Failed: MPI error /home/jenkins/agent/"
            "workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/common/mpiUtils.cpp:211 '6' "
            "(/home/jenkins/agent/workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/common/mpiUtils.cpp:211)",
            "Failed: MPI error test_allreduce.cu:88 '5'",
        ),
    ),
)
parse = gated_reader(SIGNATURES)
